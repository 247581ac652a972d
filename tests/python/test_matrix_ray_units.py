"""The matrix's capture and peers units on Ray (python/parity/_ray_units.py) and the Python API parity.matrix.

- The units' code through an fsspec URL (memory://): a capture unit writes its case folders through the URL and
  the driver's side unpacks the same folders a local capture writes; a peers unit's line and official model come
  back the same way. Called in this process (memory:// is one process's file system); the Ray scheduling around
  them is test_ray_cluster.py's.
- parity.matrix on the local executor and on Ray (a Ray started on this machine), peers included: the same
  verdicts, peer columns and all, for every (case, mode); the capture ran on Ray (its line says so).
"""
import json
import os
from pathlib import Path

import pytest

import parity
from scenarios import capture, peers

pytest.importorskip("ray", reason="the Ray extra (requirements.txt installs it)")
fsspec = pytest.importorskip("fsspec", reason="the Ray extra (requirements.txt installs it)")

CASES = ["op_gather", "op_topk"]
MODES = ("strict", "nonstrict")


def files(root: Path) -> dict:
    """Relative path -> bytes of the files a case folder holds, but the timing in case.json and the archive's
    bytes (two captures in one process name some symbols differently): model.pt2 is there, its official export
    gives the same record."""
    out = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        data = f.read_bytes()
        if f.name in ("model.pt2", "official.onnx"):
            data = b"present"
        if f.name == "case.json":
            info = json.loads(data)
            info.pop("capture_seconds")
            data = json.dumps(info, sort_keys=True).encode()
        if f.name == "official.json":  # the official record: its verdicts, not the path it was written at
            saved = json.loads(data)
            saved["record"].pop("onnx", None)
            data = json.dumps(saved, sort_keys=True).encode()
        out[str(f.relative_to(root))] = data
    return out


def test_capture_and_peers_units_through_a_memory_url(tmp_path):
    from parity import _ray_units

    url = "memory://parity-test-run"
    task = ("op_topk", list(MODES), str(tmp_path / "ray_cases"), False, None, [], True, "one")
    result = _ray_units.capture_unit("scenarios.capture", task, None, url, shared=False)
    assert isinstance(result["blob"], str) and result["blob"].startswith(url + "/cases/"), result["blob"]
    fs, path = fsspec.core.url_to_fs(result["blob"])
    assert fs.exists(path)
    assert [(line["mode"], line["status"]) for line in result["lines"]] == [(m, "captured") for m in MODES]
    assert [line["dir"] for line in result["lines"]] == [str(tmp_path / "ray_cases" / "op_topk" / m) for m in MODES]
    _ray_units.bring_home_case(tmp_path / "ray_cases", "op_topk", MODES, result["blob"])

    # The same folders as a local capture's, byte for byte (the official record beside the non-strict one).
    local = capture._capture_modes(("op_topk", list(MODES), str(tmp_path / "local_cases"), False, None, [], True,
                                    "one"))
    assert [line.get("official") for line in local] == [None, "ran, export ok"]
    for mode in MODES:
        assert files(tmp_path / "ray_cases" / "op_topk" / mode) == files(tmp_path / "local_cases" / "op_topk" / mode)

    # Again with the folders it has: everything cached, nothing sent back.
    blob = fsspec.open(result["blob"], "rb").open().read()
    again = _ray_units.capture_unit("scenarios.capture", task, blob, url, shared=False)
    assert again["blob"] is None
    assert {line["status"] for line in again["lines"]} == {"cached"}
    assert again["lines"][1]["official"].startswith("cached")

    # A peers unit: the case folder and our ONNX through the URL, its line with this machine's paths.
    case_dir = tmp_path / "ray_cases" / "op_topk" / "nonstrict"
    job = {"case_dir": str(case_dir), "ours": "", "out": str(tmp_path / "peers"), "official": True}
    case_blob = _ray_units.store(url, "peers/0/case.tar", _ray_units.pack(case_dir, "c"))
    line = _ray_units.peers_unit("scenarios.peers", job, case_blob, None, url)
    assert line["line"]["case_dir"] == str(case_dir)
    assert line["line"]["official"]["onnx"] == str(case_dir / "official" / "official.onnx")
    expected = peers.peers_of(case_dir, Path(""), tmp_path / "peers_local", True)
    assert line["line"]["official"] == expected["official"]
    assert line["line"]["ours"]["ort"]["status"] == expected["ours"]["ort"]["status"] == "error"  # no ONNX of ours


def test_python_api_matrix_local_and_ray_give_the_same_report(tmp_path):
    local = parity.matrix(cases=CASES, modes=MODES, executor="local", out=tmp_path / "local", jobs=2)
    assert local.passed and len(local.cases) == len(CASES) * len(MODES), local.output
    assert [p.split()[1] for p in local.phases] == ["capture", "verify", "peers", "report"], local.output
    env_ray = parity.matrix(cases=CASES, modes=MODES, executor="ray", out=tmp_path / "ray")
    assert "on Ray" in env_ray.output and "ray: " in env_ray.output, env_ray.output
    assert env_ray.verdicts() == local.verdicts()

    def columns(report):
        return {(c["case"], c["mode"]): (c["peers"]["ours"], {k: v for k, v in c["peers"]["official"].items()
                                                             if k not in ("onnx",)}) for c in report.cases}
    got, expected = columns(env_ray), columns(local)
    for key in expected:  # the same verdicts and numbers; the official model's path is each run's own
        assert json.dumps(got[key], sort_keys=True) == json.dumps(expected[key], sort_keys=True), key
    assert str(local).startswith(f"{len(CASES) * len(MODES)}/{len(CASES) * len(MODES)} passed")


def test_python_api_matrix_arguments():
    with pytest.raises(ValueError, match="executor"):
        parity.matrix(executor="slurm")
    with pytest.raises(ValueError, match="mode"):
        parity.matrix(modes=("eager",))
    with pytest.raises(ValueError, match="case names"):
        parity.matrix(cases=[])
    with pytest.raises(parity.ParityError, match="no scenario matches"):
        parity.matrix(cases=["no_such_case_at_all"], out=Path(os.environ.get("TMPDIR", "/tmp")) / "parity-none")
