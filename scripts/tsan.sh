#!/usr/bin/env bash
# Builds the refrt and exporter tests with ThreadSanitizer in their own build dir (build-tsan: no libtorch,
# no benchmarks; common/, exporter/ and refrt/ instrumented) and runs the concurrent-run and thread-pool
# tests of refrt, then the exporter's threads tests (four threads exporting while one loads a plugin).
# Extra arguments go to the refrt test binary (e.g. --gtest_filter=...).
#   scripts/tsan.sh                       # refrt Concurrency.* and ThreadPool.*, exporter ExportThreads.*
#   PARITY_TSAN_FILTER='*' scripts/tsan.sh  # every refrt test (slow: ~10x)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${PARITY_TSAN_BUILD_DIR:-build-tsan}"
JOBS="${PARITY_JOBS:-2}"
[ "$JOBS" -gt 2 ] && JOBS=2
FLAGS="-fsanitize=thread -fno-omit-frame-pointer -g -O1"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARITY_WITH_TORCH=OFF \
    -DPARITY_WITH_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS="$FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
fi
cmake --build "$BUILD_DIR" -j "$JOBS" --target refrt_tests exporter_tests
# halt_on_error: the first race fails the run; second_deadlock_stack: both stacks of a lock-order report.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# OpenBLAS's own threads are not instrumented; one BLAS thread keeps them out of the picture for the
# sessions without a pool (those with a pool set BLAS to one thread themselves).
export OPENBLAS_NUM_THREADS=1
"$BUILD_DIR/tests/refrt/refrt_tests" --gtest_filter="${PARITY_TSAN_FILTER:-Concurrency.*:ThreadPool.*}" "$@"
exec "$BUILD_DIR/tests/exporter/exporter_tests" --gtest_filter='ExportThreads.*'
