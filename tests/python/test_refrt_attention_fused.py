"""refrt's fused attention (refrt/kernels/attention_fused*.cc, refrt/src/optimize/fuse_attention.cc) against
eager torch.nn.functional.scaled_dot_product_attention, the independent oracle: Attention (23) models and the
MatMul / Softmax chains, random shapes, masks (none, causal, additive, boolean, padding with fully masked rows:
eager returns zeros there, as the Attention op's errata says), GQA, one-row decode, keys past one block.
Then the pass on real exports: a BERT-like block exported by Parity and by torch.onnx.export(dynamo=True) runs
on the fused kernel (the profile names it), and a chain whose probabilities are also read elsewhere does not.
Tolerance 1e-5 / 1e-5 as the Attention rows of tests/refrt/cases/attention.py: float32 sums of up to ~1100
products of magnitude <= 1 against eager's float32, each within a few ulp of the exact value."""
import json

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from conftest import parity
from onnx import TensorProto, helper

from parity.runtime import InferenceSession

TOL = dict(rtol=1e-5, atol=1e-5)
FUSED = "refrt fused attention"


def _model(nodes, inputs, outputs, opset, inits=()):
    vi = [helper.make_tensor_value_info(n, TensorProto.BOOL if a.dtype == bool else TensorProto.FLOAT, a.shape)
          for n, a in inputs.items()]
    out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
    graph = helper.make_graph(nodes, "attention", vi, out, [onnx.numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m.SerializeToString()


def _run(model, feeds, threads=1):
    return InferenceSession(model, threads=threads).run(None, feeds)[0]


def _sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    t = [torch.from_numpy(x) for x in (q, k, v)]
    m = None if mask is None else torch.from_numpy(mask)
    with torch.inference_mode():
        return F.scaled_dot_product_attention(*t, attn_mask=m, is_causal=causal, scale=scale, enable_gqa=gqa).numpy()


RNG = np.random.default_rng(46)


def _rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


# (name, B, q heads, kv heads, S, T, d, mask kind, causal)
CASES = [
    ("plain", 2, 4, 4, 17, 17, 32, None, False),
    ("causal_prefill_s520", 1, 2, 2, 520, 520, 64, None, True),
    ("additive_mask", 2, 3, 3, 9, 40, 16, "float", False),
    ("bool_mask", 2, 3, 3, 9, 40, 16, "bool", False),
    ("padding_fully_masked_rows", 2, 2, 2, 12, 12, 8, "padding", False),
    ("gqa", 1, 8, 2, 33, 33, 16, None, True),
    ("decode_one_row", 2, 4, 4, 1, 1030, 64, None, False),
    ("long_keys", 1, 2, 2, 70, 1300, 32, "float", False),
]


def _mask(kind, b, s, t):
    if kind == "float":
        return _rand(b, 1, s, t) * 3
    if kind == "bool":
        m = RNG.integers(0, 2, (b, 1, s, t)).astype(bool)
        m[..., 0] = True
        return m
    if kind == "padding":  # batch 1: its last 5 keys padded, and query rows 3..5 see no key at all
        m = np.ones((b, 1, s, t), bool)
        m[1, ..., t - 5:] = False
        m[1, :, 3:6, :] = False
        return m
    return None


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_attention_op_matches_eager_sdpa(case, threads):
    _, b, qh, kvh, s, t, d, kind, causal = case
    q, k, v = _rand(b, qh, s, d), _rand(b, kvh, t, d), _rand(b, kvh, t, d)
    mask = _mask(kind, b, s, t)
    feeds = {"q": q, "k": k, "v": v} | ({"mask": mask} if mask is not None else {})
    node = helper.make_node("Attention", list(feeds), ["y"], is_causal=int(causal))
    got = _run(_model([node], feeds, ["y"], 23), feeds, threads)
    want = _sdpa(q, k, v, mask, causal, gqa=qh != kvh)
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("case", [c for c in CASES if c[2] == c[3]], ids=[c[0] for c in CASES if c[2] == c[3]])
def test_matmul_softmax_chain_matches_eager_sdpa(case):
    """softmax(Q K^T * scale + mask) V as exporters below opset 23 write it; a boolean mask as Where(m, s, -inf)."""
    _, b, h, _, s, t, d, kind, causal = case
    q, k, v = _rand(b, h, s, d), _rand(b, h, t, d), _rand(b, h, t, d)
    mask = _mask(kind, b, s, t)
    if causal:
        mask = np.tril(np.ones((s, t), bool))
    scale = 1 / np.sqrt(d)
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]), helper.make_node("Mul", ["s0", "scale"], ["s1"])]
    feeds = {"q": q, "k": k, "v": v}
    last = "s1"
    if mask is not None:
        feeds["mask"] = mask
        nodes.append(helper.make_node("Where", ["mask", "s1", "neg_inf"], ["s2"]) if mask.dtype == bool
                     else helper.make_node("Add", ["s1", "mask"], ["s2"]))
        last = "s2"
    nodes += [helper.make_node("Softmax", [last], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [("scale", np.array(scale, np.float32)), ("neg_inf", np.array(-np.inf, np.float32))]
    got = _run(_model(nodes, feeds, ["y"], 18, inits), feeds)
    want = _sdpa(q, k, v, mask, False, scale)
    if kind == "padding":  # plain Softmax (not _safe_softmax) of a row of -inf is NaN in ONNX, zeros in eager
        rows = ~mask.any(axis=-1)
        assert np.isnan(got[np.broadcast_to(rows[..., None], got.shape)]).all()
        got, want = np.where(np.isnan(got), 0, got), np.where(rows[..., None], 0, want)
    np.testing.assert_allclose(got, want, **TOL)


class Block(torch.nn.Module):
    """A BERT-like self-attention block with a padding mask: projections, SDPA, output projection."""

    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

    def forward(self, x, keep):
        b, s, dim = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])
        return self.out(y.transpose(1, 2).reshape(b, s, dim))


def _block_inputs():
    torch.manual_seed(0)
    keep = torch.ones(2, 24, dtype=torch.bool)
    keep[1, 20:] = False
    return Block().eval(), (torch.randn(2, 24, 64), keep)


def _profile(model_path, tmp_path, feeds):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for i, a in enumerate(feeds):
        (inputs / f"input_{i}.pb").write_bytes(onnx.numpy_helper.from_array(a).SerializeToString())
    parity("profile", model_path, "--inputs", inputs, "--runs", "1", "--warmup", "0", "--out", tmp_path / "prof")
    return json.loads((tmp_path / "prof" / "summary.json").read_text())["by_node"]


def _check_fused_and_eager(model_path, tmp_path, module, args):
    feeds = [a.numpy() for a in args]
    impls = [n["impl"] for n in _profile(model_path, tmp_path, feeds)]
    assert sum(i.startswith(FUSED) for i in impls) == 1, impls
    sess = InferenceSession(str(model_path), threads=1)
    got = sess.run(None, dict(zip([i.name for i in sess.get_inputs()], feeds)))[0]
    with torch.inference_mode():
        np.testing.assert_allclose(got, module(*args).numpy(), rtol=1e-4, atol=1e-5)


def test_parity_export_of_a_bert_block_runs_fused(tmp_path):
    module, args = _block_inputs()
    ep = torch.export.export(module, args).run_decompositions()
    torch.export.save(ep, str(tmp_path / "m.pt2"))
    parity("export", tmp_path / "m.pt2", "-o", tmp_path / "m.onnx")
    _check_fused_and_eager(tmp_path / "m.onnx", tmp_path, module, args)


def test_parity_export_of_sdpa_with_a_boolean_mask_runs_fused(tmp_path):
    """Without run_decompositions the program keeps scaled_dot_product_attention; Parity writes its safe softmax as
    Where(Equal(ReduceMax(x), -inf), 0, Softmax(x)), which fuse_safe_softmax takes, and then the whole chain fuses
    (it ran unfused: a ReduceMax and two Wheres over every score)."""
    module, args = _block_inputs()
    ep = torch.export.export(module, args)
    torch.export.save(ep, str(tmp_path / "m.pt2"))
    parity("export", tmp_path / "m.pt2", "-o", tmp_path / "m.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert "ReduceMax" in ops and "Softmax" in ops, ops  # the spelling this test is about
    _check_fused_and_eager(tmp_path / "m.onnx", tmp_path, module, args)


def test_official_exporter_block_runs_fused(tmp_path):
    module, args = _block_inputs()
    torch.onnx.export(module, args, str(tmp_path / "m.onnx"), dynamo=True, opset_version=18)
    _check_fused_and_eager(tmp_path / "m.onnx", tmp_path, module, args)


def test_chain_with_probabilities_read_elsewhere_stays_unfused(tmp_path):
    q, k, v = _rand(1, 2, 8, 16), _rand(1, 2, 8, 16), _rand(1, 2, 8, 16)
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"]),
             helper.make_node("ReduceMax", ["p"], ["pm"], keepdims=0)]
    feeds = {"q": q, "k": k, "v": v}
    (tmp_path / "m.onnx").write_bytes(_model(nodes, feeds, ["y", "pm"], 18))
    impls = [n["impl"] for n in _profile(tmp_path / "m.onnx", tmp_path, list(feeds.values()))]
    assert not any(i.startswith(FUSED) for i in impls), impls
    # the same chain without the second reader fuses (the test above can fail)
    (tmp_path / "f.onnx").write_bytes(_model(nodes[:4], feeds, ["y"], 18))
    (tmp_path / "p2").mkdir()
    impls = [n["impl"] for n in _profile(tmp_path / "f.onnx", tmp_path / "p2", list(feeds.values()))]
    assert any(i.startswith(FUSED) for i in impls), impls


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("layout,rows", [("kt", 1), ("k", 1), ("kt", 3)])
def test_half_decode_chain_runs_fused_with_its_cache_in_half(tmp_path, dtype, layout, rows):
    """A bfloat16 / float16 decode step over a 700-key cache (K^T stored, or K stored and transposed by the graph;
    additive mask): fused, K and V read in their dtype (the profile says float32 refrt fused attention: Q widened),
    one query row reading the cache in place through refrt's half GEMV at refrt's AVX2 level and up (`refrt half
    gemv (avx2)`), several rows widening it block by block; and the float64 answer on the half values rounded once,
    to one unit in the last place (plus float32 sums, 1e-5)."""
    import ml_dtypes
    dt, proto = (ml_dtypes.bfloat16, TensorProto.BFLOAT16) if dtype == "bfloat16" else (np.float16, TensorProto.FLOAT16)
    ulp = 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10
    q, kt, v = _rand(1, 4, rows, 32).astype(dt), _rand(1, 4, 32, 700).astype(dt), _rand(1, 4, 700, 32).astype(dt)
    mask = np.where(RNG.uniform(size=(1, 1, 1, 700)) < 0.2, -np.inf, 0).astype(dt)
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s0"]), helper.make_node("Mul", ["s0", "scale"], ["s1"]),
             helper.make_node("Add", ["s1", "mask"], ["s2"]), helper.make_node("Softmax", ["s2"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    feeds = {"q": q, "kt": kt, "v": v, "mask": mask}
    if layout == "k":
        nodes.insert(0, helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]))
        feeds = {"q": q, "k": np.ascontiguousarray(kt.transpose(0, 1, 3, 2)), "v": v, "mask": mask}
    values = [helper.make_tensor_value_info(n, proto, a.shape) for n, a in feeds.items()]
    graph = helper.make_graph(nodes, "decode", values, [helper.make_tensor_value_info("y", proto, None)],
                              [onnx.numpy_helper.from_array(np.array(0.25, dt), "scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    onnx.save(model, tmp_path / "m.onnx")
    impls = [n["impl"] for n in _profile(tmp_path / "m.onnx", tmp_path, list(feeds.values()))]
    fused = [i for i in impls if i.startswith("float32 " + FUSED)]
    assert len(fused) == 1, impls
    level = json.loads((tmp_path / "prof" / "summary.json").read_text())["isa_level"]
    in_place = rows == 1 and level != "scalar"
    assert ("refrt half gemv (avx2)" in fused[0]) == in_place, (level, fused)
    s = q.astype(np.float64) @ kt.astype(np.float64) * 0.25 + mask.astype(np.float64)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    want = ((e / e.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)).astype(dt).astype(np.float64)
    got = np.asarray(InferenceSession(model.SerializeToString()).run(None, feeds)[0]).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=ulp, atol=1e-5)
