"""parity.runtime.InferenceSession: refrt in-process with ONNX Runtime's interface.

Oracles: the refrt case tables (tests/refrt/cases, numpy expectations written by gen_backend_cases.py into
the build tree), each case run through the binding with the C++ table's tolerance rule; onnxruntime's own
answers for get_inputs()/get_outputs() on the same model; the ISA level `parity ops` reports.
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import PARITY, ROOT, files, load_pb
from onnx import TensorProto, helper

import parity
import parity.runtime as rt

CASES_DIR = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "tests" / "refrt" / "backend_cases"


def _case_names():
    return sorted(p.name for p in CASES_DIR.iterdir() if (p / "model.onnx").is_file()) if CASES_DIR.is_dir() else []


def _close(got, want, rtol, atol):
    """tests/refrt/tensor_expect.h's rule: floats within atol + rtol * |want| (NaN == NaN), bools as truth
    values, everything else exact; dtype and shape must match."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f" or want.dtype.name == "bfloat16":
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
        assert ok.all(), f"{(~ok).sum()} elements differ, first at {np.argwhere(~ok)[0]}: {g[~ok][0]} vs {w[~ok][0]}"
    elif want.dtype == np.bool_:
        np.testing.assert_array_equal(got != 0, want != 0)
    else:
        np.testing.assert_array_equal(got, want)


def test_case_tables_were_generated():
    assert len(_case_names()) > 500, f"no refrt case tables in {CASES_DIR}: build the refrt_backend_cases target"


@pytest.mark.parametrize("name", _case_names())
def test_case_table_through_inference_session(name):
    folder = CASES_DIR / name
    rtol, atol = 1e-5, 1e-6
    if (folder / "tolerance.txt").is_file():
        rtol, atol = map(float, (folder / "tolerance.txt").read_text().split())
    session = rt.InferenceSession(str(folder / "model.onnx"), threads=1)
    names = [i.name for i in session.get_inputs()]
    graph = onnx.load(str(folder / "model.onnx")).graph
    for data in sorted(folder.glob("test_data_set_*")):
        inputs = [_load_value(p, v.type) for p, v in zip(files(data, "input"), graph.input)]
        expected = [_load_value(p, v.type) for p, v in zip(files(data, "output"), graph.output)]
        got = session.run(None, dict(zip(names, inputs)))
        assert len(got) == len(expected)
        for k, (g, w) in enumerate(zip(got, expected)):
            try:
                if isinstance(w, list):  # a sequence: a list of arrays, element by element
                    assert isinstance(g, list) and len(g) == len(w), (type(g), len(w))
                    for gi, wi in zip(g, w):
                        _close(gi, wi, rtol, atol)
                else:
                    _close(g, w, rtol, atol)
            except AssertionError as e:
                raise AssertionError(f"output {k} of {data}: {e}") from None


def _load_value(path, value_type):
    """A backend-test file: a TensorProto, or where the model declares a sequence a SequenceProto (a list)."""
    if value_type.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(Path(path).read_bytes())
        return onnx.numpy_helper.to_list(seq)
    return load_pb(path)


def _dynamic_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    w = helper.make_tensor_value_info("idx", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Gather", ["x", "idx"], ["z"], axis=1)]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x, w], [y, z]), opset_imports=[helper.make_opsetid("", 18)]
    )
    onnx.save(model, str(path))
    return model


def test_sequence_and_optional_types_as_onnxruntime_describes_them():
    path = CASES_DIR / "sequence_insert_at_front" / "model.onnx"
    if not path.is_file():
        pytest.skip("the refrt case tables are not built")
    ours, theirs = rt.InferenceSession(str(path)), ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.type for i in ours.get_inputs()] == [i.type for i in theirs.get_inputs()] == ["seq(tensor(float))",
                                                                                               "tensor(float)"]
    assert ours.get_outputs()[0].type == theirs.get_outputs()[0].type == "seq(tensor(float))"


def test_inputs_and_outputs_as_onnxruntime_describes_them(tmp_path):
    path = tmp_path / "m.onnx"
    _dynamic_model(path)
    ours, theirs = rt.InferenceSession(str(path)), ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for a, b in ((ours.get_inputs(), theirs.get_inputs()), (ours.get_outputs()[:1], theirs.get_outputs()[:1])):
        assert [(i.name, i.shape, i.type) for i in a] == [(i.name, i.shape, i.type) for i in b]
    assert ours.get_inputs()[0].type == "tensor(float)" and ours.get_inputs()[1].type == "tensor(int64)"


def test_run_feeds_by_name_and_selects_outputs(tmp_path):
    path = tmp_path / "m.onnx"
    _dynamic_model(path)
    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], dtype=np.float32)
    idx = np.array([2, 0])
    sess = rt.InferenceSession(path, threads=2)
    y, z = sess.run(None, {"idx": idx, "x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_array_equal(z, x[:, idx])
    [z_only] = sess.run(["z"], {"x": x, "idx": idx})
    np.testing.assert_array_equal(z_only, x[:, idx])
    y[0, 0] = 42.0  # outputs are the caller's: writable, not aliasing the input
    assert x[0, 0] == -1.0
    # A transposed (non-contiguous) feed works too.
    [y_t] = sess.run(["y"], {"x": np.ascontiguousarray(x.T).T, "idx": idx})
    np.testing.assert_array_equal(y_t, np.maximum(x, 0))
    # From bytes, as onnxruntime takes them.
    [y_b] = rt.InferenceSession(path.read_bytes()).run(["y"], {"x": x, "idx": idx})
    np.testing.assert_array_equal(y_b, np.maximum(x, 0))


def test_errors_are_parity_errors_with_parity_messages(tmp_path):
    path = tmp_path / "m.onnx"
    _dynamic_model(path)
    sess = rt.InferenceSession(path)
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(parity.ParityError, match="missing input 'idx'"):
        sess.run(None, {"x": x})
    with pytest.raises(parity.ParityError, match="unknown input name"):
        sess.run(None, {"x": x, "idx": np.zeros(2, np.int64), "w": x})
    with pytest.raises(parity.ParityError, match="unknown output name 'q'"):
        sess.run(["q"], {"x": x, "idx": np.zeros(2, np.int64)})
    with pytest.raises(
        rt.RefrtError, match="must be float32, got float64"
    ):  # refrt's own check, raised through the binding
        sess.run(None, {"x": x.astype(np.float64), "idx": np.zeros(2, np.int64)})
    with pytest.raises(rt.RefrtError, match="index"):
        sess.run(None, {"x": x, "idx": np.array([7, 0])})
    with pytest.raises(parity.ParityError, match="nothing.onnx"):
        rt.InferenceSession(tmp_path / "nothing.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage")
    with pytest.raises(parity.ParityError):
        rt.InferenceSession(tmp_path / "bad.onnx")


def test_isa_level_is_the_one_parity_ops_reports():
    out = subprocess.run([str(PARITY), "ops"], capture_output=True, text=True, check=True).stdout
    assert f"ISA level: {rt.isa_level()} (CPU: {rt.cpu_isa_level()})" in out


def test_disabled_passes_turn_single_passes_off():
    """A conv chain (the fusion_conv_blocks_resnet_stage row, numpy's expectation) gives the same answer with every
    pass on, with keep_conv_blocks off and with the residual fusion off; the names come from optimization_passes(),
    and an unknown name is a ParityError that names it."""
    name = "fusion_conv_blocks_resnet_stage"
    case = CASES_DIR / name
    if not case.is_dir():
        pytest.fail(f"{case} was not generated (build the refrt_tests target)")
    feeds = {"x": load_pb(next((case / "test_data_set_0").glob("input_*.pb")))}
    want = load_pb(next((case / "test_data_set_0").glob("output_*.pb")))
    passes = rt.optimization_passes()
    assert "keep_conv_blocks" in passes and "fuse_conv_add" in passes
    for disabled in ([], ["keep_conv_blocks"], ["keep_conv_blocks", "fuse_conv_add"]):
        sess = rt.InferenceSession(str(case / "model.onnx"), threads=2, disabled_passes=disabled)
        _close(sess.run(None, feeds)[0], want, 1e-4, 1e-5)
    with pytest.raises(parity.ParityError, match="no_such_pass"):
        rt.InferenceSession(str(case / "model.onnx"), disabled_passes=["no_such_pass"])
