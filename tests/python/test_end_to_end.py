"""End to end through the parity binary: capture -> export -> onnx.checker -> onnxruntime / refrt vs eager.

The oracles are independent of Parity: eager PyTorch outputs stored at capture time, onnx's checker
and ONNX Runtime.
"""
import json
import os
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
from conftest import CASES, MODES, load_pb  # `captured` (every case x mode, captured once) is there too

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"


def parity(*args, check=True):
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"parity {' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def data_sets(case_dir):
    return sorted(p for p in Path(case_dir).iterdir() if p.name.startswith("test_data_set_"))


def case_dirs(root):
    """The shared cases' folders (other tests may capture more cases into the same root)."""
    return sorted(d.parent for d in Path(root).glob("*/*/case.json") if d.parent.parent.name in CASES)


def test_export_passes_checker_and_matches_eager_in_onnxruntime(captured, tmp_path):
    dirs = case_dirs(captured)
    assert len(dirs) >= 6
    for case_dir in dirs:
        model = tmp_path / f"{case_dir.parent.name}_{case_dir.name}.onnx"
        parity("export", case_dir / "model.pt2", "-o", model)
        proto = onnx.load(str(model))
        onnx.checker.check_model(proto, full_check=True)
        # The dynamic batch is a dim_param named after the user's Dim.
        assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch", case_dir
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        sets = data_sets(case_dir)
        assert len(sets) >= 2
        for s in sets:
            feeds = {name: load_pb(s / f"input_{i}.pb") for i, name in enumerate(names)}
            got = session.run(None, feeds)
            for i, value in enumerate(got):
                np.testing.assert_allclose(value, load_pb(s / f"output_{i}.pb"), rtol=1e-4, atol=1e-5,
                                           err_msg=f"{case_dir} {s.name} output {i}")


def test_refrt_run_matches_eager(captured, tmp_path):
    case_dir = captured / "mlp_docs" / "strict"
    model = tmp_path / "mlp.onnx"
    parity("export", case_dir / "model.pt2", "-o", model)
    for s in data_sets(case_dir):
        out = tmp_path / s.name
        parity("run", model, "--inputs", s, "--outputs", out)
        np.testing.assert_allclose(load_pb(out / "output_0.pb"), load_pb(s / "output_0.pb"), rtol=1e-4, atol=1e-5)


def test_verify_writes_report_for_every_mode(captured, tmp_path):
    out = tmp_path / "verify"
    parity("verify", captured / "mlp_batch", "--out", out)
    report = json.loads((out / "report.json").read_text())
    assert report["schema_version"] == 2
    assert sorted(c["mode"] for c in report["cases"]) == sorted(MODES)
    for c in report["cases"]:
        assert c["status"] == "pass", c
        assert c["max_abs_error"] < 1e-4
        assert len(c["input_sets"]) >= 2
    assert (out / "report.md").read_text().startswith("# Parity report")


def test_matrix_reports_every_case_and_mode(tmp_path):
    out = tmp_path / "matrix"
    proc = parity("matrix", "--out", out, "--filter", "linear_regression")
    assert "[3/3]" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert [(c["case"], c["mode"], c["status"]) for c in report["cases"]] == [
        ("linear_regression", m, "pass") for m in MODES]
    assert report["summary"]["pass"] == 3


# ---- bad input: one clear line, non-zero exit, nothing left behind ----

def expect_error(args, needles, code):
    proc = parity(*args, check=False)
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines and lines[0].startswith("parity: error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "terminate called" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)


def test_truncated_pt2(captured, tmp_path):
    data = (captured / "mlp_docs" / "strict" / "model.pt2").read_bytes()
    bad = tmp_path / "truncated.pt2"
    bad.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out.onnx"
    expect_error(["export", bad, "-o", out], [str(bad)], 3)
    assert not out.exists() and not list(tmp_path.glob("out.onnx*"))


def test_non_zip_pt2(tmp_path):
    bad = tmp_path / "text.pt2"
    bad.write_text("hello")
    expect_error(["export", bad, "-o", tmp_path / "o.onnx"], [str(bad), "not a PT2 archive"], 3)


def rewrite_pt2(src, dst, replace):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            for suffix, new in replace.items():
                if item.filename.endswith(suffix):
                    data = new(data)
            zout.writestr(item, data)


def test_broken_json(captured, tmp_path):
    bad = tmp_path / "broken.pt2"
    rewrite_pt2(captured / "mlp_docs" / "strict" / "model.pt2", bad, {"models/model.json": lambda d: d[:100]})
    expect_error(["export", bad, "-o", tmp_path / "o.onnx"], ["models/model.json", "broken JSON"], 3)


def test_unknown_op(captured, tmp_path):
    bad = tmp_path / "unknown.pt2"
    rewrite_pt2(captured / "mlp_docs" / "strict" / "model.pt2", bad,
                {"models/model.json": lambda d: d.replace(b"aten.sigmoid.default", b"aten.frobnicate.default")})
    expect_error(["export", bad, "-o", tmp_path / "o.onnx"], ["aten::frobnicate.default", "sigmoid"], 4)


def test_missing_input_dir_and_file(captured, tmp_path):
    model = tmp_path / "m.onnx"
    parity("export", captured / "mlp_docs" / "strict" / "model.pt2", "-o", model)
    expect_error(["run", model, "--inputs", tmp_path / "nope"], ["nope"], 3)
    empty = tmp_path / "empty"
    empty.mkdir()
    expect_error(["run", model, "--inputs", empty], ["input"], 3)
    expect_error(["export", tmp_path / "missing.pt2", "-o", tmp_path / "o.onnx"], ["missing.pt2"], 3)


def test_model_that_is_not_onnx(tmp_path):
    bad = tmp_path / "garbage.onnx"
    bad.write_bytes(b"\x08\x07\x12garbage that is not a model proto \xff\xff")
    inputs = tmp_path / "in"
    inputs.mkdir()
    expect_error(["run", bad, "--inputs", inputs], [str(bad)], 3)


def test_usage_errors():
    expect_error(["export"], ["expected one MODEL.pt2"], 2)
    expect_error(["frobnicate"], ["unknown command"], 2)


def test_verify_reports_a_mismatch_and_exits_1(captured, tmp_path):
    # Corrupt one stored eager output: refrt and libtorch both disagree with it, so the case fails.
    import shutil
    case_dir = tmp_path / "case"
    shutil.copytree(captured / "linear_regression" / "strict", case_dir)
    pb = case_dir / "test_data_set_1" / "output_0.pb"
    wrong = load_pb(pb).copy()
    wrong.flat[0] += 1.0
    pb.write_bytes(onnx.numpy_helper.from_array(wrong, "linear").SerializeToString())
    out = tmp_path / "verify"
    proc = parity("verify", case_dir, "--out", out, check=False)
    assert proc.returncode == 1, proc.stderr
    entry = json.loads((out / "report.json").read_text())["cases"][0]
    assert entry["status"] == "fail" and entry["verify"] == "fail"
    assert abs(entry["max_abs_error"] - 1.0) < 1e-4
    bad_set = entry["input_sets"][1]["outputs"][0]
    assert not bad_set["refrt_vs_eager"]["passed"] and bad_set["refrt_vs_eager"]["mismatches"] == 1
    assert bad_set["refrt_vs_libtorch"]["passed"]  # refrt and libtorch still agree with each other
    assert "| linear_regression | strict | fail |" in (out / "report.md").read_text()


def test_verify_records_a_malformed_test_tensor_as_error(captured, tmp_path):
    import shutil
    case_dir = tmp_path / "case"
    shutil.copytree(captured / "linear_regression" / "nonstrict", case_dir)
    (case_dir / "test_data_set_0" / "input_0.pb").write_bytes(b"\x08\x01\x12\xff")
    out = tmp_path / "verify"
    proc = parity("verify", case_dir, "--out", out, check=False)
    assert proc.returncode == 1, proc.stderr
    entry = json.loads((out / "report.json").read_text())["cases"][0]
    assert entry["status"] == "error" and entry["stage"] == "inputs"
    assert "input_0.pb" in entry["error"]
