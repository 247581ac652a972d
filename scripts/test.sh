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
exit $status
