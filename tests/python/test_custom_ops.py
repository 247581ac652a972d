"""Custom ops end to end: the TORCH_LIBRARY op parity_demo::scaled_tanh (scenarios/custom_ops/) captured
in every mode, exported with the demo translation plugin (plain ONNX, checked by onnx.checker and run in
onnxruntime and on refrt against eager) and without it (a node of the op's own domain and a warning),
verified against libtorch (which loads the library named in case.json), and through `parity matrix`."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest
from conftest import assert_runtimes_match_eager, data_sets, run_capture

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / os.environ.get("PARITY_BUILD_DIR", "build")
PARITY = BUILD / "parity"
OPS_LIBRARY = BUILD / "custom_ops" / "libparity_demo_ops.so"
PLUGIN = BUILD / "custom_ops" / "libparity_demo_translations.so"
CASE = "custom_op_scaled_tanh"
MODES = ("strict", "nonstrict", "decomposed")

pytestmark = pytest.mark.skipif(not (OPS_LIBRARY.is_file() and PLUGIN.is_file()),
                                reason="build the targets parity_demo_ops and parity_demo_translations first")


@pytest.fixture(scope="module")
def case_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("custom_ops")
    proc = run_capture("--out", root, "--modes", ",".join(MODES), "--filter", f"^{CASE}$")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["status"] for line in lines] == ["captured"] * len(MODES), lines
    return root / CASE


def parity(*args, expect=0):
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == expect, f"parity {' '.join(map(str, args))}: {proc.stdout}\n{proc.stderr}"
    return proc


def test_case_json_names_the_libraries(case_root):
    info = json.loads((case_root / "strict" / "case.json").read_text())
    assert info["torch_libraries"] == [str(OPS_LIBRARY.resolve())]
    assert info["export_plugins"] == [str(PLUGIN.resolve())]


@pytest.mark.parametrize("mode", MODES)
def test_plugin_translation_matches_eager(case_root, tmp_path, mode):
    case_dir = case_root / mode
    model = tmp_path / "model.onnx"
    proc = parity("export", case_dir / "model.pt2", "-o", model, "--plugin", PLUGIN)
    assert "warning" not in proc.stderr
    proto = onnx.load(str(model))
    onnx.checker.check_model(proto, full_check=True)
    assert {o.domain for o in proto.opset_import} == {""}
    assert all(n.domain == "" for n in proto.graph.node)
    assert "Tanh" in {n.op_type for n in proto.graph.node}
    assert_runtimes_match_eager(model, case_dir, tmp_path)


def test_plugin_option_takes_a_comma_list_and_repeats(case_root, tmp_path):
    model = tmp_path / "model.onnx"
    parity("export", case_root / "strict" / "model.pt2", "-o", model, f"--plugin={PLUGIN},{PLUGIN}", "--plugin", PLUGIN)
    assert all(n.domain == "" for n in onnx.load(str(model)).graph.node)


@pytest.mark.parametrize("mode", MODES)
def test_without_translation_the_op_becomes_a_custom_domain_node(case_root, tmp_path, mode):
    model = tmp_path / "model.onnx"
    proc = parity("export", case_root / mode / "model.pt2", "-o", model)
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("parity: warning:")]
    assert warnings == ["parity: warning: export: node 'scaled_tanh' (torch.ops.parity_demo.scaled_tanh.default): "
                        "no translation, emitted as custom-domain node parity_demo::scaled_tanh; refrt and "
                        "onnxruntime cannot run it without a kernel"], proc.stderr
    proto = onnx.load(str(model))
    onnx.checker.check_model(proto, full_check=True)  # a custom domain has no schema to check against
    assert {(o.domain, o.version) for o in proto.opset_import} == {("", 18), ("parity_demo", 1)}
    custom = [n for n in proto.graph.node if n.domain == "parity_demo"]
    assert len(custom) == 1 and custom[0].op_type == "scaled_tanh"
    node = custom[0]
    assert list(node.output) == ["scaled_tanh"] and len(node.input) == 1  # the FX names: x is the Mul's output
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == {"alpha": 2.0}
    producers = {o: n for n in proto.graph.node for o in n.output}
    assert producers[node.input[0]].op_type == "Mul"
    # refrt has no kernel for it: a clear "unsupported" (exit 4), not a crash.
    data = data_sets(case_root / mode)[0]
    proc = parity("run", model, "--inputs", data, expect=4)
    assert "scaled_tanh" in proc.stderr and "parity_demo" in proc.stderr


def test_missing_plugin_is_an_input_error_naming_it(case_root, tmp_path):
    missing = tmp_path / "libnot_there.so"
    model = tmp_path / "model.onnx"
    proc = parity("export", case_root / "strict" / "model.pt2", "-o", model, "--plugin", missing, expect=3)
    assert str(missing) in proc.stderr and "plugin" in proc.stderr
    assert not model.exists()
    not_a_library = tmp_path / "libbroken.so"
    not_a_library.write_text("not an ELF file")
    proc = parity("export", case_root / "strict" / "model.pt2", "-o", model, "--plugin", not_a_library, expect=3)
    assert str(not_a_library) in proc.stderr and "cannot load export plugin" in proc.stderr


def test_verify_loads_the_torch_library_and_the_plugin(case_root, tmp_path):
    out = tmp_path / "verify"
    parity("verify", case_root, "--out", out, "--quiet")
    report = json.loads((out / "report.json").read_text())
    assert {(c["mode"], c["status"], c["export"], c["verify"]) for c in report["cases"]} == \
        {(m, "pass", "ok", "pass") for m in MODES}
    for c in report["cases"]:
        for s in c["input_sets"]:
            for o in s["outputs"]:
                assert o["libtorch_vs_eager"]["passed"] and o["refrt_vs_eager"]["passed"]


def test_verify_names_a_missing_torch_library(case_root, tmp_path):
    case_dir = tmp_path / "case" / "strict"
    shutil.copytree(case_root / "strict", case_dir, ignore=shutil.ignore_patterns("verify"))
    info = json.loads((case_dir / "case.json").read_text())
    missing = str(tmp_path / "libgone_ops.so")
    info["torch_libraries"] = [missing]
    (case_dir / "case.json").write_text(json.dumps(info))
    out = tmp_path / "verify"
    parity("verify", case_dir, "--out", out, "--quiet", expect=1)
    (entry,) = json.loads((out / "report.json").read_text())["cases"]
    assert entry["status"] == "error" and entry["stage"] == "reference"
    assert missing in entry["error"]


def test_matrix_runs_the_custom_op_case_in_every_mode(tmp_path):
    out = tmp_path / "matrix"
    proc = subprocess.run([str(PARITY), "matrix", "--filter", f"^{CASE}$", "--out", out,
                           "--modes", ",".join(MODES)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert {(c["mode"], c["status"]) for c in report["cases"]} == {(m, "pass") for m in MODES}
    for c in report["cases"]:  # the peers process loaded the library too: ours passes in ORT
        assert c["peers"]["ours"]["ort"] == "pass", c["peers"]
