"""`pip install <checkout>` into a fresh venv, then the installed `parity` command and `import parity` from an
empty directory, with nothing of the checkout on the path or in the environment.

The venv borrows the project venv's packages (torch, onnx, onnxruntime, scikit-build-core) through a .pth,
as a user's venv has them installed; the wheel's C++ build (build-wheel/ in the checkout) is incremental
after the first, and its first reuses the developer build's objects through ccache."""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The checkout must not leak in through the environment: the installed package has to find everything itself.
CHECKOUT_VARS = ("PYTHONPATH", "PARITY_SOURCE_DIR", "PARITY_BUILD_DIR", "PARITY_BIN", "PARITY_PYTHON", "VIRTUAL_ENV")


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in CHECKOUT_VARS}
    env.update(extra)
    return env


def _ccache_env() -> dict:
    """scripts/setup.sh's ccache keys (paths relative to the checkout), so that the first wheel build reuses
    the developer build's objects instead of compiling everything again."""
    def config(key):
        proc = subprocess.run(["ccache", "-k", key], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""
    try:
        base, hash_dir = config("base_dir"), config("hash_dir")
    except FileNotFoundError:
        return {}
    env = {} if base and f"{ROOT}/".startswith(base.rstrip("/") + "/") else {"CCACHE_BASEDIR": str(ROOT)}
    return {**env, **({"CCACHE_NOHASHDIR": "1"} if hash_dir == "true" else {})}


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    venv = tmp_path_factory.mktemp("pip") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True, env=_clean_env()).stdout.strip()
    # Appended after the venv's own site-packages; the project venv's .pth files (its install of parity) are
    # not read from there, so `parity` and `scenarios` can only come from the install below.
    (Path(site) / "project_venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = _clean_env(CMAKE_BUILD_PARALLEL_LEVEL="2", **_ccache_env())
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-build-isolation", str(ROOT)], capture_output=True, text=True, env=env, timeout=3000)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return venv


def _run(args, cwd, timeout=600):
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=_clean_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_the_package_is_the_installed_one(venv, tmp_path):
    code = ("import parity, parity._paths as p, scenarios; "
            "print(p.INSTALLED, parity.__file__, scenarios.__file__, parity.parity_bin(), sep='\\n')")
    installed, *paths = _run([venv / "bin" / "python", "-c", code], tmp_path).stdout.split()
    assert installed == "True"
    for path in paths:
        assert Path(path).resolve().is_relative_to(venv.resolve()), path
    # The binary links libtorch but does not carry it: the venv's torch provides it.
    native = venv.glob("lib/python*/site-packages/parity/_native")
    assert not list(next(native).rglob("libtorch*"))


def test_parity_matrix_from_an_empty_directory(venv, tmp_path):
    _run([venv / "bin" / "parity", "matrix", "--filter", "sig_", "--out", "out", "--no-peers", "-j", "2"], tmp_path)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    statuses = {(c["case"], c["mode"]): c["status"] for c in report["cases"]}
    assert len(statuses) == 27, statuses  # the nine sig_ cases in the three modes
    known = {(k["case"], k["mode"]) for k in json.loads((ROOT / "scenarios" / "known_failures.json").read_text())
             if k["side"] == "capture"}
    assert {key: s for key, s in statuses.items() if s != "pass" and key not in known} == {}
    assert list(statuses.values()).count("pass") >= 26


def test_parity_verify_from_python_in_an_empty_directory(venv, tmp_path):
    code = """
import torch, parity
class Scale(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0 + 1.0
result = parity.verify(Scale(), (torch.randn(2, 5),), out="out")
print(result.status)
"""
    assert _run([venv / "bin" / "python", "-c", code], tmp_path).stdout.split()[-1] == "pass"
    assert (tmp_path / "out" / "verify" / "report.json").is_file()
