#!/usr/bin/env bash
# Runs every test: the GoogleTest suites through ctest, then pytest (capture and end-to-end), then a
# brief fuzzing run.
#   scripts/test.sh          everything (README line 2 runs this)
#   scripts/test.sh --quick  the edit-compile-test loop: ctest, pytest without the slow suites (the
#                            transformers sweep, the quantized family, the model zoo's rows of the
#                            scenario matrix: a sample of the matrix instead; pip install), no fuzzing
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${PARITY_BUILD_DIR:-build}"
QUICK=0
case "${1:-}" in
  "") ;;
  --quick) QUICK=1 ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "scripts/test.sh: unknown option '$1' (use --quick, or nothing for every test)" >&2; exit 2 ;;
esac
# pytest-xdist: one worker per core (at most 4: each holds torch and a capture in memory); see
# tests/python/conftest.py for how the work is split. PARITY_TEST_WORKERS=0 runs in one process.
WORKERS="${PARITY_TEST_WORKERS:-$(nproc)}"
[ "$WORKERS" -gt 4 ] && WORKERS=4
PYTEST_ARGS=(-q tests/python)
[ "$WORKERS" -gt 1 ] && PYTEST_ARGS+=(-n "$WORKERS")
if [ "$QUICK" = 1 ]; then
  # The matrix sample: every case family but the model zoo (model_*), plus its smallest architecture.
  export PARITY_SCENARIOS="${PARITY_SCENARIOS:-^(?!model_)|^model_gpt2$}"
  PYTEST_ARGS+=(--ignore=tests/python/test_sweep_suite.py --ignore=tests/python/test_quantized.py
               --ignore=tests/python/test_pip_install.py)
fi
# Coverage-guided fuzzing, briefly (PARITY_FUZZ_SECONDS per target, default 30; 0 skips it): builds
# build-fuzz/ (clang, ASan + UBSan, no libtorch) and runs every target from its seeds. Needs clang. The
# fuzz build starts now, in the background at the lowest CPU priority: it takes only the CPU time ctest
# and pytest leave idle (their waits on subprocesses, files and each other), and is done or nearly done
# when they finish. Its output is shown after pytest.
FUZZ_SECONDS="${PARITY_FUZZ_SECONDS:-30}"
FUZZ_PREPARE=""
if [ "$QUICK" = 0 ] && [ "$FUZZ_SECONDS" != "0" ] && command -v clang++ >/dev/null 2>&1; then
  mkdir -p "$BUILD_DIR"
  FUZZ_LOG="$BUILD_DIR/fuzz-prepare.log"
  # Its own process group (job control on for this one job), so that an early exit stops all of it; the
  # same session, not setsid: with the kernel's autogroup scheduling each session shares the CPU equally
  # whatever its nice value, and the build would take half of the CPU from pytest.
  set -m
  nice -n 19 scripts/fuzz.sh --prepare >"$FUZZ_LOG" 2>&1 &
  FUZZ_PREPARE=$!
  set +m
  trap '[ -n "$FUZZ_PREPARE" ] && kill -- "-$FUZZ_PREPARE" 2>/dev/null || true' EXIT
fi
status=0
echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j 2 || status=1
echo "== pytest${PARITY_SCENARIOS:+ (scenario sample: $PARITY_SCENARIOS)}"
PARITY_BUILD_DIR="$BUILD_DIR" .venv/bin/python -m pytest "${PYTEST_ARGS[@]}" || status=1
if [ "$QUICK" = 0 ]; then
  # Every CPU class this host has (docs/cpu-classes.md), a sample: refrt's tables, the implementation selection and
  # a few quantized/half cases as on an AVX2, AVX-VNNI, AVX-512, VNNI, BF16 and AMX CPU (about 2 minutes).
  echo "== CPU classes (scripts/cpu_classes.py --quick)"
  PARITY_BUILD_DIR="$BUILD_DIR" .venv/bin/python scripts/cpu_classes.py --quick || status=1
fi
if [ -n "$FUZZ_PREPARE" ]; then
  echo "== fuzz ($FUZZ_SECONDS s per target)"
  prepared=0
  wait "$FUZZ_PREPARE" && prepared=1
  FUZZ_PREPARE=""
  cat "$FUZZ_LOG"
  if [ "$prepared" = 1 ]; then
    scripts/fuzz.sh --ci "$FUZZ_SECONDS" || status=1
  else
    echo "fuzz: the build of the fuzz targets failed (output above)" >&2
    status=1
  fi
fi
exit $status
