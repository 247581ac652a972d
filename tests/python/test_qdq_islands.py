"""Float islands between quantized nodes (refrt/src/optimize/fuse_qdq_activation.h): DequantizeLinear -> Gelu / SiLU /
Sigmoid / ... -> QuantizeLinear becomes a 256-entry table, folded into the int8 MatMul / Conv before it (profile
label "<its implementation> + lookup(<ops>)") or run alone as a QLookup node.

Oracle: numpy, independent of refrt. The QDQ steps as the ONNX spec writes them (DequantizeLinear in float32,
QuantizeLinear's quotient in float32 rounded half to even, saturated), the integer product exact in int64 and the
activations in float64 (math.erf, math.tanh, math.exp), rounded to float32 as the ONNX nodes' float32 outputs are.
Exact, except where the oracle's value lies next to a rounding tie: the fused product requantizes the exact sum in
float32 (qdq_fused.cc), so an element whose product lands within 1e-3 of a step's half may move by one step there,
and the activation after it with it; those elements are counted, allowed to differ, and must be rare (< 1 %).
Each model runs under every CPU class the host has (tests/python/cpu_classes.py), so refrt's own int16 GEMM, the
oneDNN VNNI and AMX paths and the scalar loop all carry the table; the label names the path and the table."""
import json
import math
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from conftest import PARITY
from cpu_classes import CLASS_VARIABLES, CLASSES, expected, host_flags, missing
from onnx import TensorProto, helper, numpy_helper

FLAGS = host_flags()
HOST_CLASSES = [c for c in CLASSES if not missing(c, FLAGS)]
F32 = np.float32

# Activation -> (ONNX nodes from "h" to "a", the numpy oracle on float32 values, the table's ops in the label).
_ERF = np.vectorize(math.erf)
_TANH = np.vectorize(math.tanh)


def _gelu(v):
    x = v.astype(np.float64)
    return (0.5 * x * (1.0 + _ERF(x / math.sqrt(2.0)))).astype(F32)


def _gelu_tanh(v):
    x = v.astype(np.float64)
    return (0.5 * x * (1.0 + _TANH(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))).astype(F32)


def _sigmoid(v):
    return (1.0 / (1.0 + np.exp(-v.astype(np.float64)))).astype(F32)


def _silu(v):
    return (v * _sigmoid(v)).astype(F32)  # Mul of two float32 values: one float32 rounding


ACTS = {
    "gelu": ([helper.make_node("Gelu", ["h"], ["a"], name="act")], _gelu, "Gelu"),
    "gelu_tanh": ([helper.make_node("Gelu", ["h"], ["a"], name="act", approximate="tanh")], _gelu_tanh, "Gelu"),
    "silu": ([helper.make_node("Sigmoid", ["h"], ["sg"], name="act"), helper.make_node("Mul", ["h", "sg"], ["a"],
                                                                                      name="act_mul")],
             _silu, "Sigmoid*Mul"),
    "sigmoid": ([helper.make_node("Sigmoid", ["h"], ["a"], name="act")], _sigmoid, "Sigmoid"),
}


def _quantize(v, scale, zp, dtype=np.uint8):
    """QuantizeLinear: float32 quotient, halves to even, saturated. Also the unrounded quotient (float64)."""
    q = (v.astype(F32) / F32(scale)).astype(F32)
    info = np.iinfo(dtype)
    return np.clip(np.rint(q) + zp, info.min, info.max).astype(dtype), q.astype(np.float64)


def _dequantize(q, scale, zp):
    return (q.astype(np.int32) - zp).astype(F32) * F32(scale)


def _near_tie(unrounded, width):
    frac = np.abs(unrounded - np.floor(unrounded) - 0.5)
    return frac < width


P = {"xs": 0.02, "xz": 128, "hs": 0.06, "hz": 120, "ys": 0.02, "yz": 30}


def _model(path, kind, act, *, extra_reader=False, opset=20):
    """x (float) -> Q -> DQ -> MatMul / Conv with int8 weights (per channel) and int32 bias -> Q (hs, hz) -> DQ ->
    act -> Q (ys, yz) = y (uint8). extra_reader: the activation's output is also a graph output."""
    rng = np.random.default_rng(1)
    act_nodes, _, _ = ACTS[act]
    if kind == "matmul":
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 256])
        w = rng.integers(-127, 128, (256, 512)).astype(np.int8)
        ws = rng.uniform(0.0005, 0.0015, 512).astype(F32)
        anchor = [helper.make_node("DequantizeLinear", ["w", "ws"], ["wf"], name="dqw", axis=1),
                  helper.make_node("MatMul", ["xf", "wf"], ["mm"], name="qmatmul"),
                  helper.make_node("DequantizeLinear", ["b", "bs"], ["bf"], name="dqb"),
                  helper.make_node("Add", ["mm", "bf"], ["acc"], name="bias")]
        channels = 512
    else:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 28, 28])
        w = rng.integers(-127, 128, (64, 32, 3, 3)).astype(np.int8)
        ws = rng.uniform(0.0005, 0.0015, 64).astype(F32)
        anchor = [helper.make_node("DequantizeLinear", ["w", "ws"], ["wf"], name="dqw", axis=0),
                  helper.make_node("DequantizeLinear", ["b", "bs"], ["bf"], name="dqb"),
                  helper.make_node("Conv", ["xf", "wf", "bf"], ["acc"], name="qconv", pads=[1, 1, 1, 1])]
        channels = 64
    bs = (F32(P["xs"]) * ws).astype(F32)
    b = rng.integers(-2000, 2000, channels).astype(np.int32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="qx"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dqx"), *anchor,
             helper.make_node("QuantizeLinear", ["acc", "hs", "hz"], ["hq"], name="qh"),
             helper.make_node("DequantizeLinear", ["hq", "hs", "hz"], ["h"], name="dqh"), *act_nodes,
             helper.make_node("QuantizeLinear", ["a", "ys", "yz"], ["y"], name="qy")]
    if kind == "matmul":  # the MatMul + Add pair: fuse_qdq takes Gemm / MatMul without Add, so write a Gemm
        nodes = [n for n in nodes if n.name not in ("qmatmul", "bias")]
        nodes.insert(4, helper.make_node("Gemm", ["xf", "wf", "bf"], ["acc"], name="qmatmul"))
    outputs = [helper.make_tensor_value_info("y", TensorProto.UINT8, [])]
    if extra_reader:
        outputs.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, []))
    inits = {"xs": np.array(P["xs"], F32), "xz": np.array(P["xz"], np.uint8), "w": w, "ws": ws, "b": b, "bs": bs,
             "hs": np.array(P["hs"], F32), "hz": np.array(P["hz"], np.uint8), "ys": np.array(P["ys"], F32),
             "yz": np.array(P["yz"], np.uint8)}
    graph = helper.make_graph(nodes, "g", [x], outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return inits


def _oracle(kind, act, inits, x):
    """y and a mask of the elements next to a tie (see the module's docstring)."""
    xq, _ = _quantize(x, P["xs"], P["xz"])
    xi = xq.astype(np.int64) - P["xz"]
    w = inits["w"].astype(np.int64)
    if kind == "matmul":
        acc = xi @ w
        real = acc * (np.float64(P["xs"]) * inits["ws"].astype(np.float64)) + inits["b"] * inits["bs"].astype(
            np.float64)
    else:
        pad = np.pad(xi[0], ((0, 0), (1, 1), (1, 1)))
        acc = np.zeros((64, 28, 28), np.int64)
        for i in range(3):
            for j in range(3):
                acc += np.einsum("chw,oc->ohw", pad[:, i:i + 28, j:j + 28], w[:, :, i, j])
        scale = (np.float64(P["xs"]) * inits["ws"].astype(np.float64))[:, None, None]
        real = (acc * scale + (inits["b"] * inits["bs"].astype(np.float64))[:, None, None])[None]
    unrounded = real / P["hs"]
    hq = np.clip(np.rint(unrounded) + P["hz"], 0, 255).astype(np.uint8)
    a = ACTS[act][1](_dequantize(hq, P["hs"], P["hz"]))
    y, yq = _quantize(a, P["ys"], P["yz"])
    return y, _near_tie(unrounded, 1e-3) | _near_tie(yq, 1e-4), a


def _class_env(cls):
    env = {k: v for k, v in os.environ.items() if k not in CLASS_VARIABLES}
    if cls:
        env.update(CLASSES[cls][0])
    return env


def _run(tmp_path, model, x, env, threads=2, optimize=True):
    """refrt's outputs (parity run) and its profile's nodes (parity profile) on input x."""
    inputs = tmp_path / "inputs"
    inputs.mkdir(exist_ok=True)
    (inputs / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    out, prof = tmp_path / "out", tmp_path / "prof"
    flag = [] if optimize else ["--no-optimize"]
    for cmd in (["run", str(model), "--inputs", str(inputs), "--outputs", str(out), "--threads", str(threads)],
                ["profile", str(model), "--inputs", str(inputs), "--out", str(prof), "--threads", str(threads),
                 "--runs", "1", "--warmup", "0"]):
        proc = subprocess.run([str(PARITY), *cmd, *flag], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
    outs = [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(out.glob("output_*.pb"))]
    # The nodes that ran: a node folded into another is listed with no time and no implementation.
    nodes = {r["node"]: r for r in json.loads((prof / "summary.json").read_text())["by_node"] if r["impl"]}
    return outs, nodes


def _input(kind):
    rng = np.random.default_rng(2)
    return rng.standard_normal((16, 256) if kind == "matmul" else (1, 32, 28, 28)).astype(F32) * 1.5


def _check_values(y, want, near):
    assert y.dtype == np.uint8 and y.shape == want.shape
    differ = y != want
    bad = differ & ~near
    assert not bad.any(), f"{int(bad.sum())} elements differ away from a tie, e.g. {y[bad][:5]} vs {want[bad][:5]}"
    assert np.abs(y.astype(int) - want.astype(int)).max(initial=0) <= 3
    assert differ.mean() < 0.01, f"{differ.mean():.2%} of the elements moved at a tie"


@pytest.mark.parametrize("cls", HOST_CLASSES + ["scalar"])
@pytest.mark.parametrize("kind", ["matmul", "conv"])
def test_island_folds_into_the_int8_product(tmp_path, kind, cls):
    """Gelu between two quantizations: no float node runs, the product's label names the table, values as numpy's."""
    model = tmp_path / "m.onnx"
    inits = _model(model, kind, "gelu")
    x = _input(kind)
    env = _class_env(None if cls == "scalar" else cls)
    if cls == "scalar":
        env["PARITY_REFRT_ISA"] = "scalar"
    (y,), nodes = _run(tmp_path, model, x, env)
    want, near, _ = _oracle(kind, "gelu", inits, x)
    _check_values(y, want, near)
    anchor = "qmatmul" if kind == "matmul" else "qconv"
    assert set(nodes) == {"qx", anchor}, f"nodes that ran: {sorted(nodes)}"
    base = r"refrt qgemm \(portable\)" if cls == "scalar" else expected(cls, "qdq_" + kind, "")
    assert re.fullmatch(base + r" \+ lookup\(Gelu\)", nodes[anchor]["impl"]), nodes[anchor]["impl"]


@pytest.mark.parametrize("act", list(ACTS))
def test_each_activation_matches_numpy(tmp_path, act):
    model = tmp_path / "m.onnx"
    inits = _model(model, "matmul", act)
    x = _input("matmul")
    (y,), nodes = _run(tmp_path, model, x, _class_env(None))
    want, near, _ = _oracle("matmul", act, inits, x)
    _check_values(y, want, near)
    assert nodes["qmatmul"]["impl"].endswith(f" + lookup({ACTS[act][2]})"), nodes["qmatmul"]["impl"]


def test_island_with_another_reader_stays_float(tmp_path):
    """The activation's float output is also a graph output: it must exist, so nothing is folded, and both
    outputs are still right."""
    model = tmp_path / "m.onnx"
    inits = _model(model, "matmul", "gelu", extra_reader=True)
    x = _input("matmul")
    (y, a), nodes = _run(tmp_path, model, x, _class_env(None))
    assert "act" in nodes and nodes["act"]["op_type"] == "Gelu", sorted(nodes)
    assert "lookup" not in nodes["qmatmul"]["impl"]
    want, near, want_a = _oracle("matmul", "gelu", inits, x)
    _check_values(y, want, near)
    assert a.dtype == np.float32 and a.shape == y.shape
    np.testing.assert_array_equal(a[~near], want_a[~near])


def test_standalone_island_is_a_lookup_of_every_byte(tmp_path):
    """uint8 input -> DequantizeLinear -> Gelu -> QuantizeLinear with no product before it: a QLookup node, equal to
    the unfused plan on all 256 values and to numpy away from ties."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "hs", "hz"], ["h"], name="dqh"), *ACTS["gelu"][0],
             helper.make_node("QuantizeLinear", ["a", "ys", "yz"], ["y"], name="qy")]
    inits = {"hs": np.array(P["hs"], F32), "hz": np.array(P["hz"], np.uint8), "ys": np.array(P["ys"], F32),
             "yz": np.array(P["yz"], np.uint8)}
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [4, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model_proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model_proto.ir_version = 9
    model = tmp_path / "m.onnx"
    onnx.save(model_proto, str(model))
    x = np.arange(256, dtype=np.uint8).reshape(4, 64)
    (y,), prof = _run(tmp_path, model, x, _class_env(None))
    assert list(prof) == ["act"] and prof["act"]["impl"] == "refrt + lookup(Gelu)", prof
    (unfused,), _ = _run(tmp_path, model, x, _class_env(None), optimize=False)
    np.testing.assert_array_equal(y, unfused)
    want, yq = _quantize(_gelu(_dequantize(x, P["hs"], P["hz"])), P["ys"], P["yz"])
    _check_values(y, want, _near_tie(yq, 1e-4))


def _save(path, nodes, inputs, outputs, inits, opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _run_inputs(tmp_path, model, feeds, env, optimize=True):
    """As _run, with several named inputs."""
    inputs = tmp_path / ("inputs" if optimize else "inputs_unfused")
    inputs.mkdir(exist_ok=True)
    for i, (name, v) in enumerate(feeds.items()):
        (inputs / f"input_{i}.pb").write_bytes(numpy_helper.from_array(v, name).SerializeToString())
    out, prof = tmp_path / ("out" if optimize else "out_unfused"), tmp_path / "prof"
    flag = [] if optimize else ["--no-optimize"]
    cmds = [["run", str(model), "--inputs", str(inputs), "--outputs", str(out), "--threads", "2"]]
    if optimize:
        cmds.append(["profile", str(model), "--inputs", str(inputs), "--out", str(prof), "--threads", "2", "--runs",
                     "1", "--warmup", "0"])
    for cmd in cmds:
        proc = subprocess.run([str(PARITY), *cmd, *flag], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
    outs = [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(out.glob("output_*.pb"))]
    if not optimize:
        return outs, {}
    nodes = {r["node"]: r for r in json.loads((prof / "summary.json").read_text())["by_node"] if r["impl"]}
    return outs, nodes


_ADD_CASES = {  # name -> (a dtype, b dtype, y dtype, a shape, b shape, relu)
    "uint8_same_shape": (np.uint8, np.uint8, np.uint8, (1, 64, 14, 14), (1, 64, 14, 14), False),
    "uint8_relu": (np.uint8, np.uint8, np.uint8, (2, 16, 9, 7), (2, 16, 9, 7), True),
    "int8_mixed": (np.int8, np.uint8, np.int8, (3, 37), (3, 37), True),
    "broadcast": (np.uint8, np.int8, np.uint8, (2, 8, 5), (8, 1), False),
}


@pytest.mark.parametrize("case", list(_ADD_CASES))
@pytest.mark.parametrize("cls", ["native", "avx2"])
def test_residual_add_on_bytes(tmp_path, case, cls):
    """DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] -> QuantizeLinear: one QAdd node, equal to numpy's float32
    steps exactly (every step is one IEEE float32 operation, as the unfused nodes do it) and to the unfused plan."""
    at, bt, yt, ash, bsh, relu = _ADD_CASES[case]
    rng = np.random.default_rng(3)
    qa = (0.031, 7 if at == np.uint8 else -3)
    qb = (0.047, 200 if bt == np.uint8 else 5)
    qy = (0.053, 90 if yt == np.uint8 else -10)
    inits = {"as": np.array(qa[0], F32), "az": np.array(qa[1], at), "bs": np.array(qb[0], F32),
             "bz": np.array(qb[1], bt), "ys": np.array(qy[0], F32), "yz": np.array(qy[1], yt)}
    nodes = [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["af"], name="dqa"),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], name="dqb"),
             helper.make_node("Add", ["af", "bf"], ["s"], name="add")]
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["r"], name="relu"))
    nodes.append(helper.make_node("QuantizeLinear", ["r" if relu else "s", "ys", "yz"], ["y"], name="qy"))
    tp = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    model = tmp_path / "add.onnx"
    info = helper.make_tensor_value_info
    _save(model, nodes, [info("a", tp[at], ash), info("b", tp[bt], bsh)], [info("y", tp[yt], [])], inits)
    a = rng.integers(np.iinfo(at).min, np.iinfo(at).max + 1, ash).astype(at)
    b = rng.integers(np.iinfo(bt).min, np.iinfo(bt).max + 1, bsh).astype(bt)
    env = _class_env(None if cls == "native" else cls)
    (y,), nodes_run = _run_inputs(tmp_path, model, {"a": a, "b": b}, env)
    assert list(nodes_run) == ["add"], nodes_run
    # refrt's AVX-512 kernel where the class (native: this host) has AVX-512, its AVX2 one below
    native_avx512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= host_flags()
    want_label = "refrt qadd (avx512)" if cls == "native" and native_avx512 else "refrt qadd"
    assert nodes_run["add"]["impl"] == want_label
    s = _dequantize(a, *qa) + _dequantize(b, *qb)
    if relu:
        s = np.where(s < 0, F32(0), s)
    want, _ = _quantize(s, qy[0], qy[1], yt)
    np.testing.assert_array_equal(y, want)
    (unfused,), _ = _run_inputs(tmp_path, model, {"a": a, "b": b}, env, optimize=False)
    np.testing.assert_array_equal(y, unfused)


def test_add_with_another_reader_stays_float(tmp_path):
    """The float sum is also a graph output: no QAdd."""
    inits = {"s1": np.array(0.03, F32), "z": np.array(7, np.uint8), "ys": np.array(0.05, F32)}
    nodes = [helper.make_node("DequantizeLinear", ["a", "s1", "z"], ["af"], name="dqa"),
             helper.make_node("DequantizeLinear", ["b", "s1", "z"], ["bf"], name="dqb"),
             helper.make_node("Add", ["af", "bf"], ["s"], name="add"),
             helper.make_node("QuantizeLinear", ["s", "ys", "z"], ["y"], name="qy")]
    model = tmp_path / "add.onnx"
    x = helper.make_tensor_value_info
    _save(model, nodes, [x("a", TensorProto.UINT8, [4, 8]), x("b", TensorProto.UINT8, [4, 8])],
          [x("y", TensorProto.UINT8, []), x("s", TensorProto.FLOAT, [])], inits)
    a = np.arange(32, dtype=np.uint8).reshape(4, 8)
    (y, s), nodes_run = _run_inputs(tmp_path, model, {"a": a, "b": a[::-1].copy()}, _class_env(None))
    assert {"add", "qy"} <= set(nodes_run) and nodes_run["add"]["impl"] == "refrt", nodes_run
    np.testing.assert_array_equal(s, _dequantize(a, 0.03, 7) + _dequantize(a[::-1], 0.03, 7))


def _max_pool_numpy(x, k, s, pads, ceil):
    """MaxPool over 8-bit x [N, C, H, W] by definition: each window's maximum over its elements inside the input."""
    n, c, h, w = x.shape
    out = []
    for d, size in enumerate((h, w)):
        span = size + pads[d] + pads[d + 2] - k[d]
        out.append((-(-span // s[d]) if ceil else span // s[d]) + 1)
        if ceil and (out[d] - 1) * s[d] >= size + pads[d]:
            out[d] -= 1
    y = np.empty((n, c, out[0], out[1]), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            r0, c0 = i * s[0] - pads[0], j * s[1] - pads[1]
            win = x[:, :, max(r0, 0):min(r0 + k[0], h), max(c0, 0):min(c0 + k[1], w)]
            y[:, :, i, j] = win.max(axis=(2, 3))
    return y


_POOL_CASES = {  # name -> (dtype, shape, kernel, strides, pads, ceil_mode)
    "resnet_stem": (np.uint8, (1, 8, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1), 0),
    "int8_2x2": (np.int8, (2, 3, 9, 11), (2, 2), (2, 2), (0, 0, 0, 0), 0),
    "ceil_asym": (np.uint8, (1, 5, 10, 13), (3, 2), (2, 3), (0, 1, 1, 0), 1),
}


@pytest.mark.parametrize("case", list(_POOL_CASES))
@pytest.mark.parametrize("cls", ["native", "scalar"])
def test_max_pool_on_bytes(tmp_path, case, cls):
    """DequantizeLinear -> MaxPool (Indices unread) -> QuantizeLinear, one scale and zero point: QMaxPool on the bytes,
    equal to numpy's windowed maximum, to the unfused plan, with the Indices output left unread."""
    dt, shape, k, s, pads, ceil = _POOL_CASES[case]
    tp = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
    inits = {"sc": np.array(0.05, F32), "z": np.array(3 if dt == np.uint8 else -4, dt)}
    nodes = [helper.make_node("DequantizeLinear", ["x", "sc", "z"], ["xf"], name="dq"),
             helper.make_node("MaxPool", ["xf"], ["p", "idx"], name="pool", kernel_shape=list(k), strides=list(s),
                              pads=list(pads), ceil_mode=ceil),
             helper.make_node("QuantizeLinear", ["p", "sc", "z"], ["y"], name="q")]
    model = tmp_path / "pool.onnx"
    _save(model, nodes, [helper.make_tensor_value_info("x", tp, list(shape))],
          [helper.make_tensor_value_info("y", tp, [])], inits)
    x = np.random.default_rng(4).integers(np.iinfo(dt).min, np.iinfo(dt).max + 1, shape).astype(dt)
    env = _class_env(None)
    if cls == "scalar":
        env["PARITY_REFRT_ISA"] = "scalar"
    (y,), nodes_run = _run_inputs(tmp_path, model, {"x": x}, env)
    assert list(nodes_run) == ["pool"] and nodes_run["pool"]["impl"] == "refrt qmaxpool", nodes_run
    np.testing.assert_array_equal(y, _max_pool_numpy(x, k, s, pads, ceil))
    (unfused,), _ = _run_inputs(tmp_path, model, {"x": x}, env, optimize=False)
    np.testing.assert_array_equal(y, unfused)
