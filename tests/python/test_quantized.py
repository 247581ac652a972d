"""Quantization (PT2E, `quantized_decomposed` ops): the exporter's translations, the libtorch reference's
C++ twins of the ops and the quantized scenarios, against eager PyTorch.

1. One row per overload (ROWS): a tiny program, `parity export`, then onnxruntime against eager: integer
   outputs exactly, except where eager's x * (1 / scale) is a rounding tie (ONNX divides by the scale:
   there the two may round apart, by one step, and nowhere else); float outputs exactly too (dequantize
   and choose_qparams are bit-exact). Unsupported schemes (float8, per-token, group-wise) fail the export
   with an error naming op and scheme, and no custom-domain node.
2. Every quantized scenario (scenarios/cases/quantized.py, PT2E; scenarios/cases/quantized_ao.py, torchao's
   quantize_) x capture mode: onnxruntime loads and runs our ONNX (with its QDQ fusion, and without it for
   the values) and matches eager within one quantization step of the output's scale (the scale of the
   DequantizeLinear that produces it, or of the last one before it for float outputs); int8 weights stay
   int8 initializers, torchao's 4-bit weights are INT4 initializers; `parity verify` (refrt + the libtorch
   reference with C++ twins of the quantized ops) passes. A capture torch.export refuses is an expected
   failure only when scenarios/known_failures.json lists it with its reason.
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: E402,F401  (registers torch.ops.quantized_decomposed)
import torchao.quantization.quant_primitives  # noqa: F401  (a required dependency: registers torch.ops.torchao)
from conftest import MODES, ROOT, load_pb, run_capture
from torchao.quantization.quant_primitives import _get_reduction_params

PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
qd = torch.ops.quantized_decomposed


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _x(*shape, spread=3.0):
    return torch.randn(*shape) * spread


def _q(dtype, *shape):
    lo, hi = (-128, 128) if dtype == torch.int8 else (0, 256)
    return torch.randint(lo, hi, shape, dtype=torch.int32).to(dtype)


S, ZP = 0.0173, 3
# (id, fn, inputs): fn is called on the inputs inside torch.export and eagerly.
ROWS = [
    (
        "quantize_per_tensor-int8",
        lambda x: qd.quantize_per_tensor.default(x, S, ZP, -128, 127, torch.int8),
        lambda: (_x(4, 8),),
    ),
    (
        "quantize_per_tensor-uint8",
        lambda x: qd.quantize_per_tensor.default(x, S, 128, 0, 255, torch.uint8),
        lambda: (_x(4, 8),),
    ),
    (
        "quantize_per_tensor-narrow_range",
        lambda x: qd.quantize_per_tensor.default(x, 0.01, 0, -127, 100, torch.int8),
        lambda: (_x(4, 8),),
    ),
    (
        "quantize_per_tensor-float16_input",
        lambda x: qd.quantize_per_tensor.default(x, S, ZP, -128, 127, torch.int8),
        lambda: (_x(4, 8).half(),),
    ),
    (
        "quantize_per_tensor.tensor",
        lambda x, s, z: qd.quantize_per_tensor.tensor(x, s, z, 0, 255, torch.uint8),
        lambda: (_x(4, 8), torch.tensor([0.031], dtype=torch.float64), torch.tensor([100])),
    ),
    (
        "quantize_per_tensor.tensor2",
        lambda x, s, z, lo, hi: qd.quantize_per_tensor.tensor2(x, s, z, lo, hi, torch.int8),
        lambda: (
            _x(4, 8),
            torch.tensor([0.02], dtype=torch.float64),
            torch.tensor([-5]),
            torch.tensor(-100),
            torch.tensor(90),
        ),
    ),
    (
        "dequantize_per_tensor-int8",
        lambda q: qd.dequantize_per_tensor.default(q, S, ZP, -128, 127, torch.int8),
        lambda: (_q(torch.int8, 4, 8),),
    ),
    (
        "dequantize_per_tensor-uint8",
        lambda q: qd.dequantize_per_tensor.default(q, S, 128, 0, 255, torch.uint8),
        lambda: (_q(torch.uint8, 4, 8),),
    ),
    (
        "dequantize_per_tensor-float16_out",
        lambda q: qd.dequantize_per_tensor.default(q, S, ZP, -128, 127, torch.int8, out_dtype=torch.float16),
        lambda: (_q(torch.int8, 4, 8),),
    ),
    (
        "dequantize_per_tensor.tensor",
        lambda q, s, z: qd.dequantize_per_tensor.tensor(q, s, z, 0, 255, torch.uint8),
        lambda: (_q(torch.uint8, 4, 8), torch.tensor([0.031], dtype=torch.float64), torch.tensor([100])),
    ),
    (
        "dequantize_per_tensor.tensor2",
        lambda q, s, z, lo, hi: qd.dequantize_per_tensor.tensor2(q, s, z, lo, hi, torch.int8),
        lambda: (
            _q(torch.int8, 4, 8),
            torch.tensor([0.02], dtype=torch.float64),
            torch.tensor([-5]),
            torch.tensor(-128),
            torch.tensor(127),
        ),
    ),
    (
        "quantize_per_channel-axis0",
        lambda x: qd.quantize_per_channel.default(
            x, torch.tensor([0.01, 0.02, 0.05, 0.003]), torch.tensor([0, 1, -2, 5]), 0, -127, 127, torch.int8
        ),
        lambda: (_x(4, 6),),
    ),
    (
        "quantize_per_channel-axis1",
        lambda x: qd.quantize_per_channel.default(
            x, torch.tensor([0.01, 0.02, 0.05]), torch.tensor([10, 128, 200]), 1, 0, 255, torch.uint8
        ),
        lambda: (_x(2, 3, 5),),
    ),
    (
        "dequantize_per_channel-axis0",
        lambda q: qd.dequantize_per_channel.default(
            q, torch.tensor([0.01, 0.02, 0.05, 0.003]), torch.tensor([0, 1, -2, 5]), 0, -127, 127, torch.int8
        ),
        lambda: (_q(torch.int8, 4, 3, 3),),
    ),
    (
        "dequantize_per_channel-no_zero_points",
        lambda q: qd.dequantize_per_channel.default(
            q, torch.tensor([0.01, 0.02, 0.05]), None, 1, -128, 127, torch.int8
        ),
        lambda: (_q(torch.int8, 2, 3, 4),),
    ),
    (
        "choose_qparams.tensor-uint8",
        lambda x: qd.choose_qparams.tensor(x, 0, 255, 2.0**-12, torch.uint8),
        lambda: (_x(5, 7) + 1.0,),
    ),
    (
        "choose_qparams.tensor-int8",
        lambda x: qd.choose_qparams.tensor(x, -128, 127, torch.finfo(torch.float32).eps, torch.int8),
        lambda: (_x(5, 7) - 2.0,),
    ),
    (
        "choose_qparams.tensor-all_zero_eps",
        lambda x: qd.choose_qparams.tensor(x, -128, 127, 1e-5, torch.int8),
        lambda: (torch.zeros(3, 4),),
    ),
    (
        "choose_qparams_symmetric.tensor-int8",
        lambda x: qd.choose_qparams_symmetric.tensor(x, -128, 127, torch.finfo(torch.float32).eps, torch.int8),
        lambda: (_x(5, 7),),
    ),
    (
        "choose_qparams_symmetric.tensor-uint8",
        lambda x: qd.choose_qparams_symmetric.tensor(x, 0, 255, torch.finfo(torch.float32).eps, torch.uint8),
        lambda: (_x(5, 7),),
    ),
    ("dynamic_round_trip", lambda x: _dynamic_round_trip(x), lambda: (_x(6, 9),)),
    ("convert_element_type.no_fuse", lambda x: qd.convert_element_type.no_fuse(x, torch.float16), lambda: (_x(3, 4),)),
]


def _dynamic_round_trip(x):
    """What dynamic quantization emits: choose_qparams -> quantize.tensor -> dequantize.tensor."""
    s, z = qd.choose_qparams.tensor(x, 0, 255, 2.0 ** -12, torch.uint8)
    return qd.dequantize_per_tensor.tensor(qd.quantize_per_tensor.tensor(x, s, z, 0, 255, torch.uint8), s, z, 0, 255,
                                           torch.uint8)


# (id, fn, inputs, phrase of the export error): schemes ONNX QDQ cannot hold.
REFUSED = [
    (
        "float8",
        lambda x: qd.quantize_per_tensor.default(x, 0.1, 0, -448, 448, torch.float8_e4m3fn),
        lambda: (_x(4, 4),),
        "float8 quantization",
    ),
    (
        "per_token",
        lambda x: qd.quantize_per_token.default(
            x, torch.full((4, 1), 0.1), torch.zeros(4, 1, dtype=torch.int64), -128, 127, torch.int8
        ),
        lambda: (_x(4, 4),),
        "per-token",
    ),
    (
        "per_channel_group",
        lambda x: qd.dequantize_per_channel_group.default(
            x, torch.full((4, 2), 0.1), torch.zeros(4, 2, dtype=torch.int64), -8, 7, torch.int8, 4, torch.float32
        ),
        lambda: (torch.randint(-8, 8, (4, 8), dtype=torch.int8),),
        "group-wise",
    ),
]


def _export(tmp_path, fn, inputs, name="row"):
    args = inputs()
    ep = torch.export.export(_Fn(fn), args, strict=False)
    pt2, model = tmp_path / f"{name}.pt2", tmp_path / f"{name}.onnx"
    torch.export.save(ep, pt2)
    proc = subprocess.run([str(PARITY), "export", pt2, "-o", model], capture_output=True, text=True, timeout=120)
    return args, model, proc


def _flat(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _ties(x: torch.Tensor, scale) -> np.ndarray:
    """Where eager's x * (1 / scale) and x / scale may round apart: within a few ulps of a .5 tie."""
    v = (x.float().double() / torch.as_tensor(scale, dtype=torch.float64)).numpy()
    return np.abs(np.abs(v - np.floor(v)) - 0.5) < 1e-5 * np.maximum(1.0, np.abs(v))


def _assert_row(row_id, args, got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.numpy() if isinstance(w, torch.Tensor) else np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (row_id, i, g.shape, w.shape, g.dtype, w.dtype)
        if row_id.startswith("quantize"):
            scale = args[1] if row_id.startswith("quantize_per_tensor.") else (
                S if "per_tensor" in row_id and "narrow" not in row_id else None)
            diff = np.abs(g.astype(np.int64) - w.astype(np.int64))
            if scale is not None:
                allowed = _ties(args[0], scale)
                assert diff.max() <= 1 and not (diff[~allowed] != 0).any(), f"{row_id}: differs off a tie"
                continue
            assert diff.max() <= 1, f"{row_id}: more than one step"
            continue
        np.testing.assert_array_equal(g, w, err_msg=f"{row_id} output {i}")


@pytest.mark.parametrize("row_id,fn,inputs", ROWS, ids=[r[0] for r in ROWS])
def test_overload_onnxruntime_matches_eager(tmp_path, row_id, fn, inputs):
    torch.manual_seed(len(row_id))
    args, model, proc = _export(tmp_path, fn, inputs)
    assert proc.returncode == 0, proc.stderr
    proto = onnx.load(str(model))
    onnx.checker.check_model(proto, full_check=True)
    assert not [n for n in proto.graph.node if n.domain not in ("", "ai.onnx")], "custom-domain node in the export"
    want = _flat(fn(*args))
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}
    _assert_row(row_id, args, session.run(None, feeds), want)


def test_quantize_rows_are_mostly_exact(tmp_path):
    """The tie allowance is narrow: on 4096 random values ORT's QuantizeLinear equals eager on all but ties."""
    torch.manual_seed(0)
    fn = lambda x: qd.quantize_per_tensor.default(x, S, ZP, -128, 127, torch.int8)  # noqa: E731
    args, model, proc = _export(tmp_path, fn, lambda: (_x(64, 64, spread=1.0),))
    assert proc.returncode == 0, proc.stderr
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: args[0].numpy()})[0]
    differs = got.astype(np.int64) != fn(*args).numpy().astype(np.int64)
    assert differs.sum() <= _ties(args[0], S).sum()


@pytest.mark.parametrize("row_id,fn,inputs,phrase", REFUSED, ids=[r[0] for r in REFUSED])
def test_unsupported_scheme_is_a_clear_export_error(tmp_path, row_id, fn, inputs, phrase):
    torch.manual_seed(0)
    _, model, proc = _export(tmp_path, fn, inputs)
    assert proc.returncode != 0 and not model.exists(), "an unsupported scheme must not export"
    assert phrase in proc.stderr and "quantized_decomposed" in proc.stderr, proc.stderr


def test_int8_weights_stay_int8(quantized_cases):
    """A static per-channel model: the weights are int8 initializers feeding DequantizeLinear, no float copy."""
    case_dir = quantized_cases / "quant_convnet_xnnpack_static" / "nonstrict"
    model = _our_onnx(case_dir)
    proto = onnx.load(str(model))
    inits = {i.name: i for i in proto.graph.initializer}
    weights = [inits[n.input[0]] for n in proto.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits]
    assert len(weights) == 3 and all(w.data_type == onnx.TensorProto.INT8 for w in weights)
    shapes = {tuple(w.dims) for w in weights}
    floats = [
        i.name for i in proto.graph.initializer if i.data_type == onnx.TensorProto.FLOAT and tuple(i.dims) in shapes
    ]
    assert not floats, f"float initializers shaped like the int8 weights: {floats}"
    consumers = {n.input[0]: n.op_type for n in proto.graph.node if n.op_type in ("Conv", "Gemm", "MatMul")}
    dq_outputs = {n.output[0] for n in proto.graph.node if n.op_type == "DequantizeLinear"}
    assert any(v in dq_outputs for v in consumers), "no DequantizeLinear feeds Conv/Gemm/MatMul directly"


# --- the quantized scenarios ---

def _quantized_names():
    sys.path.insert(0, str(ROOT))
    from scenarios.registry import all_cases
    return [c.name for c in all_cases() if c.name.startswith("quant_")]


@pytest.fixture(scope="module")
def quantized_cases(tmp_path_factory):
    reuse = os.environ.get("PARITY_QUANTIZED_CASES")
    root = __import__("pathlib").Path(reuse) if reuse else tmp_path_factory.mktemp("quantized")
    proc = run_capture("--out", root, "--modes", ",".join(MODES), "--filter", "^quant_", "--jobs", "2", timeout=900)
    assert proc.returncode == 0, proc.stderr
    return root


def _our_onnx(case_dir):
    model = case_dir / "parity.onnx"
    if not model.exists():
        proc = subprocess.run([str(PARITY), "export", case_dir / "model.pt2", "-o", model], capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    return model


def step_scales(proto):
    """Per graph output, the scale whose steps bound its error: the scale of the DequantizeLinear producing it,
    else of the last DequantizeLinear of an activation before it (None when there is none)."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    producers = {o: n for n in proto.graph.node for o in n.output}
    scales = {}
    for out in proto.graph.output:
        seen, stack, found = set(), [out.name], None
        while stack and found is None:
            v = stack.pop()
            n = producers.get(v)
            if n is None or v in seen:
                continue
            seen.add(v)
            if n.op_type == "DequantizeLinear" and n.input[0] not in inits:
                s = inits.get(n.input[1])
                found = float(s) if s is not None and s.size == 1 else None
                break
            stack.extend(n.input)
        scales[out.name] = found
    return scales


def _known_capture_failure(name, mode):
    entries = json.loads((ROOT / "scenarios" / "known_failures.json").read_text())
    return next((e["reason"] for e in entries if e["case"] == name and e["mode"] == mode and e["side"] == "capture"),
                None)


def _captured(case_dir, name, mode):
    """case.json of a captured case; a listed capture failure is an expected failure (xfail), an unlisted one
    or a listed one that now captures fails."""
    info = json.loads((case_dir / "case.json").read_text())
    known = _known_capture_failure(name, mode)
    if known and info["status"] != "captured":
        pytest.xfail(f"capture fails (scenarios/known_failures.json): {known}")
    assert not known, f"{name}/{mode} captures now: remove its known_failures.json entry"
    assert info["status"] == "captured", info["error"]
    return info


# ONNX ops a torchao case's export must contain, by config (the PT2E cases: QuantizeLinear + DequantizeLinear).
# Int8WeightOnlyConfig calls plain aten (the int8 weight, a Cast, the matmul and the scale), and decomposed
# programs have torchao's ops spelled out in aten by run_decompositions, so neither has a fixed op.
AO_OPS = {"w8": set(), "w4g32": {"DequantizeLinear"}, "w4g128": {"DequantizeLinear"}, "da8w8": {"MatMulInteger"},
          "da8w8_u8s8": {"MatMulInteger"},
          "da8w4": {"DequantizeLinear"}}


def _expected_ops(name, mode):
    if "_ao_" not in name:
        return {"QuantizeLinear", "DequantizeLinear"}
    return set() if mode == "decomposed" else AO_OPS[name.rsplit("_ao_", 1)[1]]


def _sets(case_dir):
    return sorted(p for p in case_dir.iterdir() if p.name.startswith("test_data_set_"))


def _cpu_has_vnni() -> bool:
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "").split()
    return "avx512_vnni" in flags or "avx_vnni" in flags


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", _quantized_names())
def test_scenario_onnxruntime_within_one_step(quantized_cases, name, mode, request):
    if name.endswith("_u8s8") and not _cpu_has_vnni():
        # ORT's own CPU kernel, not our ONNX: without VNNI its uint8 x int8 MatMulInteger adds byte products in
        # pairs in a saturating int16, and these cases' data overflows it in 0.1-3 % of the pairs (refrt, exact,
        # is judged by the verify tests; the u8s8 program is what torchao captures on VNNI CPUs only).
        request.applymarker(pytest.mark.xfail(strict=False, reason="onnxruntime's AVX2 u8s8 kernel saturates "
                                              "int16 pair sums on a CPU without VNNI"))
    case_dir = quantized_cases / name / mode
    _captured(case_dir, name, mode)
    model = _our_onnx(case_dir)
    proto = onnx.load(str(model))
    onnx.checker.check_model(proto, full_check=True)
    assert {n.op_type for n in proto.graph.node} >= _expected_ops(name, mode)
    assert not [n.op_type for n in proto.graph.node if n.domain not in ("", "ai.onnx")], "custom-domain node"
    if "_ao_w4" in name and mode != "decomposed":  # 4-bit weights stay 4-bit in the file
        inits = {i.name: i for i in proto.graph.initializer}
        weights = [inits[n.input[0]] for n in proto.graph.node
                   if n.op_type == "DequantizeLinear" and n.input[0] in inits]
        assert weights and all(w.data_type == onnx.TensorProto.INT4 for w in weights), \
            [(w.name, w.data_type) for w in weights]
    scales = step_scales(proto)
    # Default level: ORT fuses the QDQ patterns into its int8 kernels; it must load and run them.
    fused = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    # Values: fusion off (ORT's fused AVX2 int8 kernels deviate from eager by several steps, on the official
    # exporter's models too: docs/quantization.md), so the comparison judges our ONNX, not those kernels.
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for s in _sets(case_dir):
        feeds = {n: load_pb(s / f"input_{i}.pb") for i, n in enumerate(names)}
        got = session.run(None, feeds)
        assert len(fused.run(None, feeds)) == len(got)
        for i, out in enumerate(proto.graph.output[:len(list(s.glob("output_*.pb")))]):
            want = load_pb(s / f"output_{i}.pb")
            scale = scales[out.name]
            if scale is None:  # dynamic quantization: no constant scale
                if not np.allclose(got[i], want, rtol=1e-4, atol=1e-5):
                    _ort_requantized(model, proto, case_dir, s)
                continue
            steps = np.abs(got[i].astype(np.float64) - want) / scale
            assert steps.max() <= 1.001, f"{name}/{mode} {s.name} output {i}: {steps.max():.2f} steps of {scale}"


def _is_quantize(node) -> bool:
    """A quantize in a captured program: the PT2E / torchao ops, or (decomposed) an 8-bit cast of a clamp."""
    name = str(node.target)
    if "quantize_per_" in name and "dequantize" not in name or "torchao.quantize_affine" in name:
        return True
    if node.target not in (torch.ops.aten._to_copy.default, torch.ops.aten.to.dtype):
        return False
    if node.meta.get("val") is None or node.meta["val"].dtype not in (torch.int8, torch.uint8):
        return False
    src = node.args[0]
    while src.target in (torch.ops.aten.view.default, torch.ops.aten.reshape.default):
        src = src.args[0]
    return "clamp" in str(src.target)


# How far from the tie between two integers torch's unrounded value may lie where ORT rounded it the other way
# (in quantization steps): the bound of the verifier's requantized rule (docs/quantization.md, "Flips must be
# near-ties"; measured 1e-5 at most there). Float rounding upstream moves only near-ties; an off-by-one in a
# translation puts a differing element anywhere (0.5 on average).
TIE_STEPS = 1e-3
_VIEWS = (torch.ops.aten.view.default, torch.ops.aten.reshape.default, torch.ops.aten._unsafe_view.default)
_ZERO_POINT_SHIFTS = (torch.ops.aten.add.Tensor, torch.ops.aten.add.Scalar, torch.ops.aten.sub.Tensor,
                      torch.ops.aten.sub.Scalar)


def _unrounded(interp, node, shape) -> torch.Tensor:
    """torch's value before rounding (x * (1 / scale), zero point not added) of the quantize `node`, shaped
    like its output, computed as the op computes it (float32) from the inputs the interpreter gave it."""
    args, kwargs = interp.fetch_args_kwargs_from_env(node)
    name = str(node.target)
    if "torchao.quantize_affine" in name:  # torchao's _quantize_affine_no_dtype_cast
        x, block_size, scale = args[0], args[1], args[2]
        shape, reduced = _get_reduction_params(block_size, x.size())
        after = [1 if i in reduced else n for i, n in enumerate(shape)]
        return (x.view(shape) * (1.0 / scale.view(after))).view(x.shape)
    if "quantize_per_tensor" in name:  # .default takes a float scale, .tensor / .tensor2 call it with .item()
        scale = args[1].item() if isinstance(args[1], torch.Tensor) else args[1]
        return args[0] * (1.0 / scale)
    if "quantize_per_channel" in name:
        x, scales, axis = args[0], args[1], args[3]
        shape = [1] * x.dim()
        shape[axis] = scales.numel()
        return x * (1.0 / scales.view(shape))
    # A decomposed program's quantize (_is_quantize): cast <- views <- clamp <- zero point shifts <- round.
    src = node.args[0]
    while src.target in _VIEWS:
        src = src.args[0]
    src = src.args[0]  # through the clamp
    while src.target in _ZERO_POINT_SHIFTS:
        src = src.args[0]
    assert src.target == torch.ops.aten.round.default, f"{node.name}: no round before the clamp ({src.target})"
    return interp.env[src.args[0]].reshape(shape)


def _tie_distance(unrounded: torch.Tensor, ours: torch.Tensor, theirs: torch.Tensor) -> torch.Tensor:
    """Per element where `theirs` is one step from `ours` (torch's requantization): how far the unrounded value
    lies from the tie between the two integers (round(v) and the neighbour theirs is on); 0 where they agree.
    Zero points cancel: ours - round(v) is the zero point, so the tie is round(v) + (theirs - ours) / 2."""
    v = unrounded.double()
    step = theirs.to(torch.float64) - ours.to(torch.float64)
    return torch.where(step != 0, (v - (torch.round(v) + step / 2)).abs(), torch.zeros_like(v))


def _merged_into(graph) -> dict:
    """FX name -> the name of the first node computing the same value (same op on the same inputs, recursively):
    the exporter's CSE keeps one of such duplicates (the q/k/v projections' dynamic quantizations of their
    shared input become one), so the others have no ONNX value of their own."""
    ids, first, merged = {}, {}, {}
    for n in graph.nodes:
        if n.op != "call_function":
            ids[n] = ("leaf", n.name)
            continue
        signature = repr((str(n.target), torch.fx.node.map_arg((n.args, n.kwargs), lambda a: ids[a])))
        ids[n] = ("value", first.setdefault(signature, n.name))
        if first[signature] != n.name:
            merged[n.name] = first[signature]
    return merged


def _ort_requantized(model, proto, case_dir, set_dir):
    """The requantized rule with onnxruntime, as `parity verify` applies it to refrt (docs/quantization.md):
    a float difference of 1e-7 upstream of a dynamic (per-token) quantize moves a rounding tie by one step,
    and the step then propagates. ORT keeps its quantized activations; torch runs the captured program
    (torch.fx over torch.export.load(...).module(), bit-identical to eager) with ORT's activations in place
    of its own (a quantize the exporter merged into an identical one takes that one's). Each must be within
    one step of torch's requantization of the same input, every element a step off must be at a rounding tie
    (torch's unrounded value within TIE_STEPS of the tie between the two integers), and ORT's outputs must
    match that run within the fixed tolerance."""
    ep = torch.export.load(str(case_dir / "model.pt2"))
    gm = ep.module()
    produced = {o for n in proto.graph.node for o in n.output}
    merged = _merged_into(gm.graph)
    onnx_name = {n.name: n.name if n.name in produced else merged.get(n.name) for n in gm.graph.nodes
                 if n.op == "call_function" and _is_quantize(n)}
    onnx_name = {k: v for k, v in onnx_name.items() if v in produced}
    assert onnx_name, "outputs differ from eager and the program has no quantized activation to explain it"
    kept = onnx.ModelProto()
    kept.CopyFrom(proto)
    user_outputs = len(kept.graph.output)
    for name in sorted(set(onnx_name.values())):
        value = onnx.ValueInfoProto()  # type and shape left to ORT
        value.name = name
        kept.graph.output.append(value)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(kept.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    inputs = [load_pb(set_dir / f"input_{i}.pb") for i in range(len(names))]
    got = session.run(None, dict(zip(names, inputs)))
    ours = dict(zip([o.name for o in kept.graph.output][user_outputs:], got[user_outputs:]))
    flipped, distances = {}, []

    class Substituted(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            if node.name not in onnx_name:
                return value
            theirs = torch.from_numpy(np.ascontiguousarray(ours[onnx_name[node.name]]))
            steps = (value.to(torch.int32) - theirs.to(torch.int32)).abs()
            assert steps.max() <= 1, f"{node.name}: ORT's activation is {steps.max()} steps from torch's"
            flipped[node.name] = int(steps.sum())
            if flipped[node.name]:
                far = _tie_distance(_unrounded(self, node, value.shape), value, theirs)
                distances.append(float(far.max()))
                off = int((far > TIE_STEPS).sum())
                assert not off, (f"{node.name}: {off} of {flipped[node.name]} elements ORT rounded the other way are "
                                 f"not at a rounding tie (up to {far.max():.3g} step from it; float rounding moves "
                                 f"only values within {TIE_STEPS} of a tie)")
            return theirs

    with torch.no_grad():
        # Values kept: the tie check reads a decomposed quantize's round input after its last use.
        reference = Substituted(gm, garbage_collect_values=False).run(
            *[torch.from_numpy(np.ascontiguousarray(x)) for x in inputs])
    reference = [r for r in (reference if isinstance(reference, (list, tuple)) else [reference])]
    for i in range(len(list(set_dir.glob("output_*.pb")))):
        np.testing.assert_allclose(got[i], reference[i].numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"{set_dir} output {i} against torch on ORT's activations {flipped} "
                                           f"(flips at most {max(distances, default=0):.2g} step from a tie)")


# Cases (<name>/<mode>) whose `parity verify` fails only because libtorch (the reference, running torch's
# program) disagrees with eager, with the reason. Only that disagreement is expected: every refrt comparison
# (refrt vs eager, refrt vs libtorch) must still pass. Whether libtorch disagrees depends on the CPU (the test says
# where); where it agrees, the case must pass outright.
_DECOMPOSED_FLIP = (
    "decomposed: torch's run_decompositions program itself differs from eager (ep.module() on input set 1 is "
    "3.7e-3 from eager's output on the LLaMA block: its float ops round differently upstream of a dynamic "
    "per-token quantize, and one activation moves a step). refrt passes by the requantized rule against that "
    "program; libtorch vs eager fails, and without eager's own activations the verifier cannot tell the flip "
    "from a bug (the exact reference of issue 37 is not built yet)")
VERIFY_KNOWN: dict[str, str] = {
    f"{model}_ao_{config}/decomposed": _DECOMPOSED_FLIP
    for model in ("quant_llama_decoder", "quant_llama_lm", "quant_qwen2_lm") for config in ("da8w8", "da8w8_u8s8")
}


def _comparisons(entry):
    """(set, output index, kind, comparison) for every comparison of a verify report's case entry."""
    return [(s["name"], o["index"], kind, o[kind]) for s in entry["input_sets"] for o in s["outputs"]
            for kind in ("refrt_vs_eager", "refrt_vs_libtorch", "libtorch_vs_eager") if kind in o]


def _only_libtorch_disagrees(entry, where):
    """The known failure and nothing else: refrt passes every comparison, libtorch vs eager fails somewhere."""
    comparisons = _comparisons(entry)
    refrt_failed = [c[:3] for c in comparisons if c[2] != "libtorch_vs_eager" and not c[3]["passed"]]
    assert not refrt_failed, f"{where}: refrt fails, beyond the known libtorch/eager disagreement: {refrt_failed}"
    assert entry["status"] == "fail" and entry["stage"] == "verify", (entry["status"], entry["stage"], entry["error"])
    reference_failed = [c[:3] for c in comparisons if c[2] == "libtorch_vs_eager" and not c[3]["passed"]]
    assert reference_failed, f"{where}: the case fails, yet no comparison does: {entry['error']}"


def _refrt_has_qdq():
    proc = subprocess.run([str(PARITY), "ops"], capture_output=True, text=True, timeout=60)
    ops = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    return {"QuantizeLinear", "DequantizeLinear"} <= ops


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", _quantized_names())
def test_scenario_parity_verify_passes(quantized_cases, name, mode, tmp_path, request):
    """`parity verify`: refrt and the libtorch reference against eager (dequantized outputs in steps)."""
    if not _refrt_has_qdq():
        request.applymarker(
            pytest.mark.xfail(strict=True, reason="refrt has no QuantizeLinear/DequantizeLinear kernel yet")
        )
    case_dir = quantized_cases / name / mode
    _captured(case_dir, name, mode)
    proc = subprocess.run([str(PARITY), "verify", case_dir, "--out", tmp_path, "--quiet", "--no-html"],
                          capture_output=True, text=True, timeout=600)
    report = json.loads((tmp_path / "report.json").read_text())
    entry = report["cases"][0]
    known = VERIFY_KNOWN.get(f"{name}/{mode}")
    # The flip depends on how this CPU's float kernels round upstream of the quantize: quant_llama_decoder_ao_da8w8
    # flips on the AVX-512 Xeons, not on an AVX2 AMD EPYC (Zen 2), where every comparison passes. Where nothing
    # flips, the case is held to a plain pass below.
    if known and entry["status"] != "pass":
        _only_libtorch_disagrees(entry, f"{name}/{mode}")
        pytest.xfail(known)
    assert entry["status"] == "pass", f"{entry['status']} at {entry['stage']}: {entry['error']}"
    assert proc.returncode == 0, proc.stderr


def _requant_rules(report):
    return [o["refrt_vs_eager"]["requant_rule"] for s in report["cases"][0]["input_sets"] for o in s["outputs"]
            if "requant_rule" in o.get("refrt_vs_eager", {})]


def _verify(case_dir, out, *extra):
    proc = subprocess.run([str(PARITY), "verify", case_dir, "--out", out, "--quiet", "--no-html", *extra],
                          capture_output=True, text=True, timeout=600)
    return proc, json.loads((out / "report.json").read_text())


def test_requantized_rule_passes_the_mobilenet_head(quantized_cases, tmp_path):
    """MobileNet (x86 quantizer) ends in a float head after its last quantized layer; refrt's activations
    land one step from torch's in a few places and the head moves by 7e-5. The requantized rule passes it
    because every substituted activation is within one step and the head then matches libtorch."""
    proc, report = _verify(quantized_cases / "quant_mobilenet_x86_static" / "strict", tmp_path)
    assert report["cases"][0]["status"] == "pass", proc.stdout + proc.stderr
    rules = _requant_rules(report)
    assert rules, "the head passed without the requantized rule: the case no longer exercises it"
    for rule in rules:
        assert rule["passed"] and rule["activations"] > 0 and rule["max_steps"] <= 1, rule


def test_requantized_rule_fails_a_wrong_head(quantized_cases, tmp_path):
    """The rule is no blanket pass: with the float head's bias moved by 1e-3 in the ONNX, refrt's output is
    off against libtorch on refrt's own activations too, and the case fails."""
    case_dir = quantized_cases / "quant_mobilenet_x86_static" / "strict"
    proto = onnx.load(str(_our_onnx(case_dir)))
    producers = {o: n for n in proto.graph.node for o in n.output}
    head = producers[proto.graph.output[0].name]
    inits = {i.name: i for i in proto.graph.initializer}
    bias = next(inits[name] for name in head.input if name in inits and inits[name].data_type == onnx.TensorProto.FLOAT)
    moved = onnx.numpy_helper.to_array(bias) + np.float32(1e-3)
    bias.CopyFrom(onnx.numpy_helper.from_array(moved, bias.name))
    wrong = tmp_path / "wrong_head.onnx"
    onnx.save(proto, str(wrong))
    proc, report = _verify(case_dir, tmp_path / "out", "--onnx", wrong)
    assert report["cases"][0]["status"] == "fail", proc.stdout
    rules = _requant_rules(report)
    assert rules and not any(r["passed"] for r in rules), rules
    assert proc.returncode != 0


def test_deep_nets_flip_only_near_ties(quantized_cases, tmp_path):
    """The ResNet-18 layout, 17 quantized convs deep: where refrt rounds an activation the other way, libtorch's
    own unrounded value lay within 1e-3 of a step from the tie (float rounding, not a kernel error), and each
    flipped node is named in report.json. Each case must hold such flips (measured on this AMX Xeon, at the
    native, avx2 and scalar refrt caps alike: 2 elements on one output, 1.2e-5 / 2.2e-6 step from the tie):
    without them the test would check nothing."""
    for name in ("quant_resnet18_x86_static", "quant_resnet18_xnnpack_tensor_static"):
        proc, report = _verify(quantized_cases / name / "nonstrict", tmp_path / name)
        assert report["cases"][0]["status"] == "pass", proc.stdout + proc.stderr
        rules = _requant_rules(report)
        assert rules, f"{name}: no output needed the requantized rule: the case no longer exercises flips"
        assert sum(rule["one_step"] for rule in rules) > 0, f"{name}: no activation flipped: {rules}"
        for rule in rules:
            assert rule["passed"] and rule["activations"] > 0, rule
            assert sum(rule["flipped"].values()) == rule["one_step"], rule
            assert rule["one_step"] == 0 or rule["max_tie_distance"] <= 1e-3, rule


def test_requantized_rule_fails_a_planted_off_by_one(quantized_cases, tmp_path):
    """A planted off-by-one in an int8 layer: one QuantizeLinear's zero point moved by 1 in the ONNX (what a
    requantization bug in an integer kernel does: every element of that activation one step off). Each
    element is then within one step of libtorch's requantization, so only the near-tie condition can catch it,
    and it must: the case fails, naming that activation."""
    case_dir = quantized_cases / "quant_resnet18_xnnpack_tensor_static" / "nonstrict"
    proto = onnx.load(str(_our_onnx(case_dir)))
    inits = {i.name: i for i in proto.graph.initializer}
    q = [n for n in proto.graph.node if n.op_type == "QuantizeLinear" and len(n.input) > 2 and n.input[2] in inits]
    node = q[len(q) // 2]  # a layer in the middle of the net
    zp = onnx.numpy_helper.to_array(inits[node.input[2]])
    planted = onnx.numpy_helper.from_array((zp.astype(np.int32) + 1).astype(zp.dtype), node.input[2] + "_planted")
    proto.graph.initializer.append(planted)
    node.input[2] = planted.name  # this QuantizeLinear only: its DequantizeLinear keeps the true zero point
    wrong = tmp_path / "planted.onnx"
    onnx.save(proto, str(wrong))
    proc, report = _verify(case_dir, tmp_path / "out", "--onnx", wrong)
    assert report["cases"][0]["status"] == "fail", proc.stdout
    problems = [r.get("problem", "") for r in _requant_rules(report)]
    assert any("rounding tie" in p or "steps from libtorch" in p for p in problems), problems
    assert proc.returncode != 0


def test_peers_judge_dequantized_outputs_in_steps():
    """ORT in the matrix's peers columns gets Parity's quantized rule: one step passes, two fail."""
    sys.path.insert(0, str(ROOT))
    from scenarios import peers
    scale = 0.05
    eager = (np.arange(-8, 8, dtype=np.float32) * scale).astype(np.float32)
    one = (eager + np.float32(scale) * (np.arange(16) % 2)).astype(np.float32)
    two = eager.copy()
    two[3] += np.float32(2 * scale)
    assert peers.judge(eager, one, None)[0] > 0  # the fixed rule alone fails a one-step difference
    assert peers.judge(eager, one, None, scale)[0] == 0
    assert peers.judge(eager, two, None, scale)[0] == 1


def test_capture_records_dequantized_output_scales(quantized_cases):
    """case.json's output_quant_scales: the scale of the dequantize that produces each output, as the program
    has it (the peers judge those outputs in steps)."""
    for name in ("quant_mlp_xnnpack_static", "quant_mlp_x86_static"):  # a dequantized output; a float one
        case_dir = quantized_cases / name / "nonstrict"
        ep = torch.export.load(str(case_dir / "model.pt2"))
        producers = {n.name: n for n in ep.graph.nodes}
        want = []
        for out in ep.graph_signature.user_outputs:
            node = producers[out]
            static = str(node.target) == "quantized_decomposed.dequantize_per_tensor.default"
            want.append(float(node.args[1]) if static else None)
        info = json.loads((case_dir / "case.json").read_text())
        assert info.get("output_quant_scales", [None] * len(want)) == want
