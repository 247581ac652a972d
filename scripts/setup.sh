#!/usr/bin/env bash
# Sets Parity up from nothing, idempotently: Debian packages, the project venv, configure and build.
# A second run only checks and rebuilds what changed (seconds).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${PARITY_BUILD_DIR:-build}"
JOBS="${PARITY_JOBS:-$(nproc)}"
[ "$JOBS" -gt 2 ] && JOBS=2  # libtorch-heavy units need ~2 GB each; never more jobs than cores here

step() { printf '\n== %s\n' "$*"; }

# 1. Debian packages (skipped when all are installed).
APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config protobuf-compiler libprotobuf-dev
  libeigen3-dev libopenblas-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev python3-venv
  libcli11-dev chromium clang libclang-rt-14-dev clang-format
  pybind11-dev libdnnl-dev ocl-icd-opencl-dev)
  # libdnnl-dev: oneDNN, refrt's float32 convs (refrt/kernels/conv_dnnl.h); its CMake config looks for OpenCL's
  # headers and loader (ocl-icd-opencl-dev, only a recommendation of libdnnl-dev, so not pulled in here);
  # chromium: headless check of report.html in tests/python/test_report.py;
  # clang + its libFuzzer/sanitizer runtimes: the brief fuzz step of scripts/test.sh (scripts/fuzz.sh --ci);
  # clang-format: the C++ layout check of tests/python/test_code_style.py
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. The project venv with pinned packages (reinstalled only when requirements.txt changes).
PY="${PARITY_BASE_PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  step "creating .venv"
  "$PY" -m venv .venv
fi
# requirements-nodeps.txt: packages installed without their dependencies (torchao's would pull a CUDA stack).
if ! cat requirements.txt requirements-nodeps.txt | cmp -s - .venv/.parity-requirements 2>/dev/null; then
  step "installing Python packages (requirements.txt, requirements-nodeps.txt)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  .venv/bin/python -m pip install -q --no-deps -r requirements-nodeps.txt
  cat requirements.txt requirements-nodeps.txt > .venv/.parity-requirements
fi

# 2b. The Python package `parity`, through pyproject.toml like `pip install <checkout>`, in its develop
# flavour (PARITY_PIP_DEVELOP=1): no second C++ build, but a .pth to this tree's python/, so that
# `import parity` in the venv is this tree's, edits included, and uses build/parity (re-installed when
# the venv's copy points at another checkout). The build backend, scikit-build-core, is in requirements.txt.
PARITY_PKG="$(.venv/bin/python -c 'import importlib.util as u; s = u.find_spec("parity"); print(s.origin if s else "")' 2>/dev/null || true)"
if [ "$PARITY_PKG" != "$ROOT/python/parity/__init__.py" ]; then
  step "installing the parity Python package (pyproject.toml, develop: python/ of this tree)"
  PARITY_PIP_DEVELOP=1 .venv/bin/python -m pip install -q --no-deps --no-build-isolation "$ROOT"
fi

# 3. Configure (once) and build. ccache keys on paths relative to the checkout, whatever the build
# directory, so that the wheel's build (`pip install .`, build-wheel/) reuses this build's objects
# (tests/python/test_pip_install.py does the same).
if command -v ccache >/dev/null; then
  CCACHE_BASE="$(ccache -k base_dir 2>/dev/null || true)"
  case "$ROOT/" in "${CCACHE_BASE:-/nowhere}"/*) ;; *) export CCACHE_BASEDIR="$ROOT" ;; esac
  [ "$(ccache -k hash_dir 2>/dev/null || true)" = "true" ] && export CCACHE_NOHASHDIR=1
fi
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  step "configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
step "building ($JOBS jobs)"
cmake --build "$BUILD_DIR" -j "$JOBS"
