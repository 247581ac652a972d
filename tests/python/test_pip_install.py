"""The self-contained wheel (scripts/build_wheel.py: pip wheel + auditwheel repair) installed into a fresh venv
that has only torch, then the installed `parity` command, parity.verify and parity.runtime from a folder that
holds a `scenarios/` package of its own, with nothing of the checkout on the path or in the environment.

The fresh venv gets torch (with torch's own requirements) as links into the project venv, placed in its
site-packages as pip would install them: no onnx, no numpy, nothing else. pip installs the wheel with the
dependencies it declares (onnx, numpy) from the index. `ldd` must find every native dependency inside the
wheel, torch or the C/C++ runtime, and one run goes with the system's copies of the vendored libraries
hidden (a mount namespace), where the sandbox allows one. The wheel's C++ build (build-wheel/ in the
checkout) is incremental after the first, and its first reuses the developer build's objects through ccache."""
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The checkout must not leak in through the environment: the installed package has to find everything itself.
CHECKOUT_VARS = ("PYTHONPATH", "PARITY_SOURCE_DIR", "PARITY_BUILD_DIR", "PARITY_BIN", "PARITY_PYTHON", "VIRTUAL_ENV",
                 "LD_LIBRARY_PATH")
# What a wheel may take from the system: the C and C++ runtime (the manylinux rule).
C_RUNTIME = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2",
             "libpthread.so.0", "libdl.so.2", "librt.so.1"}


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


def _requirement_closure(name: str) -> list[importlib.metadata.Distribution]:
    """The distribution and everything it requires (no extras), as installed in the project venv."""
    seen, order, todo = set(), [], [name]
    while todo:
        dist = importlib.metadata.distribution(todo.pop())
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        order.append(dist)
        todo += [re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in dist.requires or [] if "extra ==" not in r]
    return order


def _link_torch_into(site: Path):
    """torch and its requirements, linked into `site` entry by entry (packages, modules, dist-info)."""
    project_site = Path(sysconfig.get_path("purelib"))
    for dist in _requirement_closure("torch"):
        for top in {Path(str(f)).parts[0] for f in dist.files}:
            source = project_site / top
            if top not in ("..", "__pycache__") and not top.endswith(".pth") and source.exists():
                (site / top).symlink_to(source)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    env = _clean_env(CMAKE_BUILD_PARALLEL_LEVEL="2", **_ccache_env())
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_wheel.py"), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=3000)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return Path(proc.stdout.split()[-1])


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    venv = tmp_path_factory.mktemp("pip") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True, env=_clean_env()).stdout.strip())
    _link_torch_into(site)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", str(wheel)],
                          capture_output=True, text=True, env=_clean_env(), timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return venv


@pytest.fixture
def user_dir(tmp_path):
    """A user's project folder: a `scenarios` package of its own (which must never be imported by parity) and
    a suite file."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "__init__.py").write_text("raise ImportError('the user\\'s own scenarios package')\n")
    (tmp_path / "scenarios" / "registry.py").write_text("")
    shutil.copy(ROOT / "examples" / "suite" / "gated_mlp.py", tmp_path / "my_suite.py")
    return tmp_path


def _run(args, cwd, timeout=600, check=True):
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=_clean_env())
    assert proc.returncode == 0 or not check, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _site(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


def test_the_package_is_the_installed_one(venv, wheel, tmp_path):
    code = ("import importlib.util as u, parity, parity._paths as p, parity.scenarios.registry as r; "
            "print(p.INSTALLED, u.find_spec('scenarios') is None, parity.__file__, r.__file__, parity.parity_bin(), "
            "sep='\\n')")
    installed, no_top_level_scenarios, *paths = _run([venv / "bin" / "python", "-c", code], tmp_path).stdout.split()
    assert (installed, no_top_level_scenarios) == ("True", "True")
    for path in paths:
        assert Path(path).resolve().is_relative_to(_site(venv).resolve()), path
    # Everything under parity/ (and the command); libtorch is not carried: the venv's torch provides it.
    record = next(_site(venv).glob("parity-*.dist-info")) / "RECORD"
    tops = {line.split(",")[0].split("/")[0] for line in record.read_text().splitlines()}
    assert tops == {"parity", record.parent.name, ".."}, tops
    assert not list((_site(venv) / "parity").rglob("libtorch*"))
    # The dependencies are declared: pip brought onnx and numpy into the venv itself.
    requires = importlib.metadata.Distribution.at(record.parent).requires
    assert {"torch==2.13.*", "onnx>=1.23", "numpy>=1.26"} <= set(requires), requires
    for name in ("onnx", "numpy"):
        assert not (_site(venv) / name).is_symlink() and (_site(venv) / name / "__init__.py").is_file(), name


def _ldd(path: Path) -> dict[str, str]:
    """soname -> where the loader finds it ("not found" included), for `path` and everything it loads."""
    proc = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=_clean_env())
    assert proc.returncode == 0, proc.stderr
    found = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s*(\S+)(?: => (.+?))?(?: \(0x[0-9a-f]+\))?$", line)
        if m:
            found[m.group(1)] = m.group(2) or m.group(1)
    return found


def test_native_dependencies_resolve_inside_the_wheel_torch_or_the_c_runtime(venv):
    site = _site(venv)
    elves = [p for p in (site / "parity").rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert any(p.name == "parity" for p in elves) and any(p.name.startswith("_refrt") for p in elves)
    outside = {}
    for elf in elves:
        for soname, where in _ldd(elf).items():
            inside = where.startswith(str(site / "parity") + "/") or where.startswith(str(site / "torch") + "/")
            if not inside and Path(soname).name not in C_RUNTIME:
                outside.setdefault(soname, (where, elf.relative_to(site)))
    assert outside == {}, outside


def test_parity_matrix_from_a_folder_with_its_own_scenarios(venv, user_dir):
    parity = venv / "bin" / "parity"
    _run([parity, "matrix", "--scenarios", "my_suite.py", "--out", "out", "--no-peers", "-j", "2"], user_dir)
    report = json.loads((user_dir / "out" / "report.json").read_text())
    assert {(c["case"], c["mode"], c["status"]) for c in report["cases"]} == {
        ("example_gated_mlp", mode, "pass") for mode in ("strict", "nonstrict", "decomposed")}
    # The built-in matrix needs the `matrix` extra (transformers): the error says so.
    proc = _run([parity, "matrix", "--filter", "sig_kwargs", "--out", "out2", "--no-peers"], user_dir, check=False)
    assert proc.returncode != 0 and "parity[matrix]" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


VERIFY_AND_RUN = """
import numpy as np, torch, parity, parity.runtime as rt
class Scale(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0 + 1.0
result = parity.verify(Scale(), (torch.randn(2, 5),), out="out")
assert result.status == "pass", result
x = np.random.default_rng(0).standard_normal((2, 5), dtype=np.float32)
session = rt.InferenceSession(str(result.onnx))
(y,) = session.run(None, {session.get_inputs()[0].name: x})
np.testing.assert_allclose(y, Scale()(torch.from_numpy(x)).numpy(), rtol=1e-6, atol=1e-6)
print("ok", rt.isa_level())
"""


def test_parity_verify_and_runtime_from_a_folder_with_its_own_scenarios(venv, user_dir):
    assert _run([venv / "bin" / "python", "-c", VERIFY_AND_RUN], user_dir).stdout.split()[0] == "ok"
    assert (user_dir / "out" / "verify" / "report.json").is_file()


def _system_copies(venv) -> list[str]:
    """The system's files of the libraries the wheel carries copies of (libdnnl-<hash>.so.2.6 -> every file
    of ldconfig's cache named libdnnl.*), so that a run that loads one of them fails."""
    stems = {p.name.split("-")[0].split(".")[0] for p in (_site(venv) / "parity" / "_native" / "libs").iterdir()}
    assert {"libdnnl", "libprotobuf", "libgomp"} <= stems, stems
    cache = subprocess.run([shutil.which("ldconfig") or "/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    files = {os.path.realpath(line.split(" => ")[1]) for line in cache.splitlines() if " => " in line}
    return sorted(f for f in files if re.split(r"[-.]", Path(f).name)[0] in stems)


def test_with_the_system_copies_hidden(venv, user_dir):
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user and mount namespaces in this sandbox (unshare -rm): the ldd test stands alone")
    hidden = _system_copies(venv)
    assert hidden, "no system copy to hide: nothing would prove the wheel's copies are the ones used"
    # /dev/null bound over each file: loading it fails ("file too short"), proved on the first one.
    script = ('for f in "$@"; do mount --bind /dev/null "$f" || exit 97; done; '
              'python -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$1" 2>/dev/null && exit 98; '
              'exec python -c "$VERIFY_AND_RUN"')
    env = _clean_env(PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VERIFY_AND_RUN=VERIFY_AND_RUN)
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", *hidden], cwd=user_dir, capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode == 97:
        pytest.skip(f"mount --bind refused inside the namespace ({proc.stderr.strip()}): the ldd test stands alone")
    assert proc.returncode == 0, f"exit {proc.returncode} hiding {hidden}: " + proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.split()[0] == "ok"
