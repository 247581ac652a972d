"""parity profile: the trace is a valid Chrome trace in ONNX Runtime's profiler schema, the summary adds
up, and --compare-ort reads onnxruntime's own profile of the same model and inputs."""
import json
import os
import subprocess
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"


def small_cnn(path):
    """Conv -> Relu -> MaxPool -> Gemm with a symbolic batch: enough op types for a profile."""
    import numpy as np
    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], rng.standard_normal(108).astype(np.float32))
    fc = helper.make_tensor("fc", TensorProto.FLOAT, [4 * 4 * 4, 5], rng.standard_normal(320).astype(np.float32))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])], [w, fc])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))


def test_trace_and_summary(tmp_path):
    model = tmp_path / "cnn.onnx"
    small_cnn(model)
    out = tmp_path / "prof"
    proc = subprocess.run(
        [
            str(PARITY),
            "profile",
            model,
            "--random",
            "--dim",
            "batch=3",
            "--runs",
            "4",
            "--warmup",
            "1",
            "--out",
            out,
            "--compare-ort",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    events = json.loads((out / "trace.json").read_text())
    assert isinstance(events, list) and events
    for e in events:  # complete events ("X") with every field Perfetto's JSON importer needs
        assert e["ph"] == "X" and isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0
        assert {"pid", "tid", "name", "cat", "args"} <= set(e)
    runs = [e for e in events if e["cat"] == "Session" and e["name"] == "model_run"]
    nodes = [e for e in events if e["cat"] == "Node"]
    assert len(runs) == 4 and len(nodes) == 4 * 5
    assert {e["args"]["op_name"] for e in nodes} == {"Conv", "Relu", "MaxPool", "Flatten", "MatMul"}
    conv = next(e for e in nodes if e["args"]["op_name"] == "Conv")
    assert conv["name"] == "conv_kernel_time"
    assert conv["args"]["input_type_shape"][0] == {"float": [3, 3, 8, 8]}
    assert conv["args"]["output_type_shape"] == [{"float": [3, 4, 8, 8]}]
    # Conv FLOPs: 2 * outputs * (C_in * kh * kw)
    assert conv["args"]["flops"] == 2 * 3 * 4 * 8 * 8 * 27
    starts = sorted(r["ts"] for r in runs)  # every run holds its five node events, in order
    per_run = [sum(1 for e in nodes if lo <= e["ts"] < hi) for lo, hi in zip(starts, starts[1:] + [float("inf")])]
    assert per_run == [5, 5, 5, 5]
    assert all(e["ts"] >= starts[0] for e in nodes)

    summary = json.loads((out / "summary.json").read_text())
    by_op = {row["op_type"]: row for row in summary["by_op_type"]}
    assert set(by_op) == {"Conv", "Relu", "MaxPool", "Flatten", "MatMul"}
    assert all(row["calls"] == 4 for row in by_op.values())
    assert abs(sum(row["share"] for row in by_op.values()) - 100.0) < 1e-6
    assert by_op["Conv"]["gflops_per_s"] is not None and by_op["Relu"]["gflops_per_s"] is None
    assert summary["ort_mean_run_ms"] > 0 and by_op["Conv"]["ort_ms_per_run"] is not None
    assert (out / "summary.md").read_text().startswith("# refrt profile")


def test_random_inputs_evaluate_derived_dims(tmp_path):
    """Inputs whose dims are expressions of other inputs' dims ("2*batch", "past + seq", as the exporter
    writes them) get consistent sizes; --dim sets the symbols. Oracle: the sizes the expressions give by hand."""
    from conftest import load_pb
    nodes = [helper.make_node("Concat", ["x", "x"], ["xx"], axis=0),
             helper.make_node("Add", ["xx", "y"], ["s"]),
             helper.make_node("Concat", ["past", "new"], ["kv"], axis=1),
             helper.make_node("Mul", ["kv", "kv2"], ["p"])]
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f, ["batch", 3]),
              helper.make_tensor_value_info("y", f, ["2*batch", 3]),
              helper.make_tensor_value_info("past", f, [2, "past"]),
              helper.make_tensor_value_info("new", f, [2, "seq"]),
              helper.make_tensor_value_info("kv2", f, [2, "past + seq"])]
    outputs = [helper.make_tensor_value_info("s", f, ["2*batch", 3]),
               helper.make_tensor_value_info("p", f, [2, "past + seq"])]
    model = helper.make_model(helper.make_graph(nodes, "derived", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = tmp_path / "derived.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "out"
    proc = subprocess.run([str(PARITY), "run", path, "--random", "--dim", "batch=3,past=4", "--outputs", out],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    s, p = load_pb(out / "output_0.pb"), load_pb(out / "output_1.pb")
    assert s.shape == (6, 3) and p.shape == (2, 4 + 2)  # seq takes the default size 2
    proc = subprocess.run([str(PARITY), "profile", path, "--random", "--runs", "1", "--warmup", "0",
                           "--out", tmp_path / "prof"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    bad = subprocess.run([str(PARITY), "run", path, "--random", "--dim", "width=3"], capture_output=True, text=True)
    assert bad.returncode != 0 and "width" in bad.stderr


def check_trace(trace_path, model_path, runs):
    """The trace is valid JSON of complete events, one model_run per run and one event per executed node
    per run (nodes folded away at load excluded), each named after an ONNX node of the model."""
    events = json.loads(Path(trace_path).read_text())
    assert isinstance(events, list) and events
    for e in events:
        assert e["ph"] == "X" and isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0
        assert {"pid", "tid", "name", "cat", "args"} <= set(e)
    assert sum(e["cat"] == "Session" and e["name"] == "model_run" for e in events) == runs
    node_names = {n.name for n in onnx.load(str(model_path)).graph.node}
    nodes = [e for e in events if e["cat"] == "Node"]
    assert nodes and len(nodes) % runs == 0
    assert {e["name"][: -len("_kernel_time")] for e in nodes} <= node_names
    return nodes


def test_profile_a_light_model_zoo_cnn(tmp_path):
    """squeezenet from onnx's own `light` model set (shipped in the wheel), random inputs, two threads."""
    model = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_squeezenet.onnx"
    out = tmp_path / "prof"
    proc = subprocess.run([str(PARITY), "profile", model, "--random", "--runs", "2", "--warmup", "1", "--threads", "2",
                           "--out", out], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    nodes = check_trace(out / "trace.json", model, 2)
    assert {"Conv", "Relu", "MaxPool", "Concat"} <= {e["args"]["op_name"] for e in nodes}
    summary = json.loads((out / "summary.json").read_text())
    conv = next(r for r in summary["by_op_type"] if r["op_type"] == "Conv")
    assert conv["calls"] == 2 * sum(n.op_type == "Conv" for n in onnx.load(str(model)).graph.node)
    assert conv["gflops_per_s"] > 0
