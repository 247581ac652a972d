#!/usr/bin/env bash
# Runs every test: the GoogleTest suites through ctest, then pytest (capture and end-to-end).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${PARITY_BUILD_DIR:-build}"
status=0
echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j 2 || status=1
echo "== pytest"
PARITY_BUILD_DIR="$BUILD_DIR" .venv/bin/python -m pytest -q tests/python || status=1
# Coverage-guided fuzzing, briefly (PARITY_FUZZ_SECONDS per target, default 30; 0 skips it): builds
# build-fuzz/ (clang, ASan + UBSan, no libtorch) and runs every target from its seeds. Needs clang.
FUZZ_SECONDS="${PARITY_FUZZ_SECONDS:-30}"
if [ "$FUZZ_SECONDS" != "0" ] && command -v clang++ >/dev/null 2>&1; then
  echo "== fuzz ($FUZZ_SECONDS s per target)"
  scripts/fuzz.sh --ci "$FUZZ_SECONDS" || status=1
fi
exit $status
