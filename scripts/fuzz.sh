#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer, clang).
#
#   scripts/fuzz.sh --list                 the target names, one a line
#   scripts/fuzz.sh TARGET SECONDS [ARGS]  fuzz one target for SECONDS (extra ARGS go to libFuzzer)
#   scripts/fuzz.sh --ci [SECONDS]         every target for SECONDS (default 30): the CI step
#   scripts/fuzz.sh --prepare              only build the targets and make the seeds (scripts/test.sh runs
#                                          this in the background while the other tests run)
#
# Builds the targets into build-fuzz/ (clang, ASan + UBSan + coverage, no libtorch; ccache shared), seeds
# them with generated corpora (tests/fuzz/make_seeds.py: the scenario cases and tiny modules, exported)
# plus the committed seeds and regression inputs, and keeps the growing corpus in build-fuzz/corpus/TARGET.
# A crash is written to build-fuzz/artifacts/TARGET/ and the script exits 1: fix it, then add the input to
# tests/fuzz/regressions/TARGET/ (ctest replays those on every build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGETS=(zip pt2 program_json tensor_proto onnx_session external_data)
FUZZ_DIR="${PARITY_FUZZ_BUILD_DIR:-build-fuzz}"
JOBS="${PARITY_JOBS:-2}"
[ "$JOBS" -gt 2 ] && JOBS=2

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${TARGETS[@]}"
  exit 0
fi
[ $# -ge 1 ] || usage

# clang with the libFuzzer runtime (Debian: clang + libclang-rt-14-dev; scripts/setup.sh installs both).
CLANG="${PARITY_CLANG:-$(command -v clang++ || true)}"
if [ -z "$CLANG" ] || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long){return 0;}' |
     "$CLANG" -x c++ -fsanitize=fuzzer,address -o /dev/null - 2>/dev/null; then
  echo "fuzz: clang++ with the libFuzzer runtime is needed (apt-get install clang libclang-rt-14-dev)" >&2
  exit 3
fi

build() {
  if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
    cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CLANG" \
      -DPARITY_WITH_TORCH=OFF -DPARITY_WITH_BENCHMARKS=OFF -DPARITY_SANITIZE=ON -DPARITY_FUZZ=ON \
      -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link -fno-omit-frame-pointer" >/dev/null
  fi
  cmake --build "$FUZZ_DIR" -j "$JOBS" --target "$@" | grep -v '^\[' || true
  for t in "$@"; do [ -x "$FUZZ_DIR/tests/fuzz/$t" ] || { echo "fuzz: build of $t failed" >&2; exit 1; }; done
}

seeds() {
  # Generated once per build dir (torch + the scenario cases; about a minute).
  if [ ! -f "$FUZZ_DIR/seeds/.done" ]; then
    mkdir -p "$FUZZ_DIR/seeds"
    local parity_bin="${PARITY_BIN:-$ROOT/build/parity}"
    PYTHONPATH="$ROOT/python:$ROOT" .venv/bin/python tests/fuzz/make_seeds.py "$FUZZ_DIR/seeds" \
      --parity "$parity_bin" >/dev/null 2>&1 || echo "fuzz: seed generation failed; using the committed seeds only" >&2
    touch "$FUZZ_DIR/seeds/.done"
  fi
}

# run TARGET SECONDS [libFuzzer args]: prints "TARGET: N executions in S s (limit SECONDS s), corpus M inputs, crashes: K".
run() {
  local t="$1" seconds="$2"
  shift 2
  local corpus="$FUZZ_DIR/corpus/$t" artifacts="$FUZZ_DIR/artifacts/$t" log="$FUZZ_DIR/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")" "$FUZZ_DIR/seeds/$t"
  local status=0 max_len=() inputs=("$corpus" "$FUZZ_DIR/seeds/$t")
  for d in "tests/fuzz/seeds/$t" "tests/fuzz/regressions/$t"; do [ -d "$d" ] && inputs+=("$d"); done
  case "$t" in  # shorter inputs where longer ones add nothing but time
    zip) max_len=(-max_len=16384) ;;
    tensor_proto) max_len=(-max_len=4096) ;;
    external_data) max_len=(-max_len=512) ;;
  esac
  # No buffer pool (it would hide a use-after-free from ASan) and a small tensor cap (a hostile size is
  # an error, not an out-of-memory report).
  local started=$SECONDS
  PARITY_BUFFER_CACHE_BYTES=0 PARITY_MAX_TENSOR_BYTES=268435456 \
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$FUZZ_DIR/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "${max_len[@]}" "$@" \
      "${inputs[@]}" >"$log" 2>&1 || status=$?
  local execs crashes
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  crashes="$(find "$artifacts" -type f | wc -l)"
  echo "$t: ${execs:-?} executions in $((SECONDS - started)) s (limit ${seconds} s), corpus $(find "$corpus" -type f | wc -l) inputs, crashes: $crashes" \
       "(log $log)"
  if [ "$status" -ne 0 ]; then
    grep -m 5 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    return 1
  fi
}

if [ "$1" = "--prepare" ]; then
  build "${TARGETS[@]/#/fuzz_}"
  seeds
  exit 0
fi

if [ "$1" = "--ci" ]; then
  seconds="${2:-30}"
  build "${TARGETS[@]/#/fuzz_}"
  seeds
  # JOBS targets at a time (one per core), each for the full SECONDS; summaries in the usual order.
  status=0 running=()
  mkdir -p "$FUZZ_DIR/logs"
  for t in "${TARGETS[@]}"; do
    run "$t" "$seconds" >"$FUZZ_DIR/logs/$t.summary" 2>&1 &
    running+=($!)
    if [ ${#running[@]} -ge "$JOBS" ]; then
      wait "${running[0]}" || status=1
      running=("${running[@]:1}")
    fi
  done
  for pid in "${running[@]}"; do wait "$pid" || status=1; done
  for t in "${TARGETS[@]}"; do cat "$FUZZ_DIR/logs/$t.summary"; done
  exit $status
fi

target="$1"
seconds="${2:-60}"
shift $(( $# >= 2 ? 2 : 1 ))
printf '%s\n' "${TARGETS[@]}" | grep -qx "$target" || { echo "fuzz: unknown target '$target' (see --list)" >&2; exit 2; }
build "fuzz_$target"
seeds
run "$target" "$seconds" "$@"
