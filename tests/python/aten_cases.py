"""The ATen translation test table: one tiny program per ATen overload, compared with eager PyTorch.

    python tests/python/aten_cases.py --list     # JSON {"torch", "core": [...], "tested": [...]} for `parity coverage`

Each row names the overload it tests; the test asserts that the captured graph really holds it. Inputs are
built lazily (seeded) so that listing the table is cheap.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Callable

import random_props as rp
import torch

aten = torch.ops.aten
F = torch.nn.functional


@dataclass
class OpCase:
    key: str                 # "aten::add.Tensor"
    fn: Callable             # called on the inputs, inside torch.export
    inputs: Callable         # () -> tuple of tensors
    check: str = "close"     # "close": values (integers and booleans exactly); "shape": shape and dtype only
                             # (uninitialised outputs); "props": random outputs, shape, dtype and `props`
    props: Callable | None = None  # (outs, ins) -> None, asserts what any correct sample satisfies (random_props)
    decompose: bool = False  # run_decompositions() first (for ops only the decomposed IR holds)
    dynamic: dict | None = None  # dynamic_shapes for torch.export
    tag: str = ""            # distinguishes several rows of one overload
    tol: float = 1e-4
    refrt_lacks: str = ""    # a refrt gap beyond missing op types (an attribute value, a mode)
    edit: Callable | None = None  # rewrites the exported graph (ops torch.export never emits by itself)
    opset: int = 18          # `parity export --opset`
    onnx_ops: tuple = ()     # ONNX op types the export must contain (a fused op at a newer opset)

    @property
    def id(self) -> str:
        return self.key.replace("aten::", "") + (f"-{self.tag}" if self.tag else "")


def r(*shape, lo=None, hi=None, dtype=torch.float32):
    """Seeded-by-caller random tensor: normal, or uniform in [lo, hi)."""
    if lo is not None:
        return (torch.rand(*shape) * (hi - lo) + lo).to(dtype)
    return torch.randn(*shape).to(dtype)


def ri(hi, *shape, lo=0):
    return torch.randint(lo, hi, shape)


def rb(*shape):
    return torch.rand(*shape) > 0.5


CASES: list[OpCase] = []


def case(key, fn, inputs, **kw):
    CASES.append(OpCase(key, fn, inputs, **kw))


def unary(name, lo=None, hi=None, **kw):
    op = getattr(aten, name).default
    case(f"aten::{name}.default", lambda x: op(x), lambda: (r(3, 4, lo=lo, hi=hi),), **kw)


# --- elementwise arithmetic ---
case("aten::add.Tensor", lambda a, b: aten.add.Tensor(a, b, alpha=2), lambda: (r(3, 4), r(4)))
case("aten::add.Scalar", lambda a: aten.add.Scalar(a, 1.5), lambda: (r(3, 4),))
# int64 beyond 2^53: exact only if no step goes through double (integer outputs are compared exactly).
case("aten::add.Tensor", lambda a, b: aten.add.Tensor(a, b), lambda: (ri(2 ** 40, 3, 4) + 2 ** 60, ri(9, 3, 4, lo=1)),
     tag="int64_beyond_2_53")
case("aten::sub.Tensor", lambda a, b: aten.sub.Tensor(a, b), lambda: (r(3, 4), r(3, 1)))
case("aten::sub.Scalar", lambda a: aten.sub.Scalar(a, 2), lambda: (ri(9, 3, 4),))
case("aten::mul.Tensor", lambda a, b: aten.mul.Tensor(a, b), lambda: (r(3, 4), ri(5, 3, 4)))
case("aten::mul.Scalar", lambda a: aten.mul.Scalar(a, 0.5), lambda: (r(3, 4),))
case("aten::div.Tensor", lambda a, b: aten.div.Tensor(a, b), lambda: (r(3, 4), r(3, 4, lo=0.5, hi=2)))
case("aten::div.Scalar", lambda a: aten.div.Scalar(a, 4), lambda: (ri(9, 3, 4),))
case("aten::div.Tensor_mode", lambda a, b: aten.div.Tensor_mode(a, b, rounding_mode="floor"),
     lambda: (ri(20, 3, 4, lo=-20), ri(5, 3, 4, lo=1) * (1 - 2 * ri(2, 3, 4))))
case("aten::div.Tensor_mode", lambda a, b: aten.div.Tensor_mode(a, b, rounding_mode="trunc"),
     lambda: (r(3, 4) * 5, r(3, 4, lo=0.5, hi=2)), tag="trunc")
case("aten::div.Scalar_mode", lambda a: aten.div.Scalar_mode(a, 3, rounding_mode="floor"), lambda: (r(3, 4) * 5,))
case("aten::fmod.Tensor", lambda a, b: aten.fmod.Tensor(a, b), lambda: (r(3, 4) * 5, r(3, 4, lo=0.5, hi=2)))
case("aten::fmod.Scalar", lambda a: aten.fmod.Scalar(a, 3), lambda: (ri(20, 3, 4, lo=-20),))
case("aten::remainder.Tensor", lambda a, b: aten.remainder.Tensor(a, b), lambda: (r(3, 4) * 5, r(3, 4, lo=0.5, hi=2)))
case("aten::remainder.Scalar", lambda a: aten.remainder.Scalar(a, 3), lambda: (ri(20, 3, 4, lo=-20),))
case("aten::pow.Tensor_Tensor", lambda a, b: aten.pow.Tensor_Tensor(a, b), lambda: (r(3, 4, lo=0.5, hi=2), r(3, 4)))
case("aten::pow.Tensor_Scalar", lambda a: aten.pow.Tensor_Scalar(a, 3), lambda: (r(3, 4),))
case("aten::pow.Scalar", lambda a: aten.pow.Scalar(2.0, a), lambda: (r(3, 4),))
case("aten::maximum.default", lambda a, b: aten.maximum.default(a, b), lambda: (r(3, 4), r(4)))
case("aten::minimum.default", lambda a, b: aten.minimum.default(a, b), lambda: (r(3, 4), r(4)))
case("aten::atan2.default", lambda a, b: aten.atan2.default(a, b), lambda: (r(3, 4), r(3, 4)))
case("aten::atan2.out", lambda a, b: aten.atan2.out(a, b, out=torch.empty(3, 4)), lambda: (r(3, 4), r(3, 4)))
case("aten::rsub.Scalar", lambda a: aten.rsub.Scalar(a, 1.0), lambda: (r(3, 4),))
for name in ["relu", "sigmoid", "tanh", "exp", "neg", "abs", "asinh", "atan", "ceil", "floor", "cos", "cosh", "sin",
             "sinh", "tan", "erf", "round", "sign", "trunc", "expm1"]:
    unary(name)
for name in ["log", "sqrt", "rsqrt", "log2", "log10", "reciprocal"]:
    unary(name, lo=0.1, hi=4)
for name in ["acos", "asin", "atanh"]:
    unary(name, lo=-0.9, hi=0.9)
unary("acosh", lo=1.1, hi=4)
unary("log1p", lo=-0.5, hi=4)
case("aten::clamp.default", lambda a: aten.clamp.default(a, -0.5, 0.5), lambda: (r(3, 4),))
case("aten::clamp.Tensor", lambda a, lo, hi: aten.clamp.Tensor(a, lo, hi), lambda: (r(3, 4), r(4) - 1, r(4) + 1))
case("aten::where.self", lambda c, a, b: aten.where.self(c, a, b), lambda: (rb(3, 4), r(3, 4), r(1, 4)))
case("aten::_to_copy.default", lambda a: aten._to_copy.default(a, dtype=torch.int32), lambda: (r(3, 4) * 5,))
case("aten::copy.default", lambda a, b: aten.copy.default(a, b), lambda: (r(3, 4), ri(5, 4)))
case("aten::fill.Scalar", lambda a: aten.fill.Scalar(a, 2.5), lambda: (r(3, 4),))
case("aten::clone.default", lambda a: aten.clone.default(a), lambda: (r(3, 4),))
case("aten::alias.default", lambda a: aten.alias.default(a) + 0, lambda: (r(3, 4),))

# --- comparison, logic, bitwise ---
for name, op in [("eq", aten.eq), ("ne", aten.ne), ("lt", aten.lt), ("le", aten.le), ("gt", aten.gt), ("ge", aten.ge)]:
    case(f"aten::{name}.Tensor", lambda a, b, op=op: op.Tensor(a, b), lambda: (ri(3, 3, 4), ri(3, 4)))
    case(f"aten::{name}.Scalar", lambda a, op=op: op.Scalar(a, 0.5), lambda: (r(3, 4),))
for name in ["and", "or", "xor"]:
    op = getattr(aten, f"logical_{name}").default
    case(f"aten::logical_{name}.default", lambda a, b, op=op: op(a, b), lambda: (rb(3, 4), r(3, 4)))
    op = getattr(aten, f"bitwise_{name}")
    case(f"aten::bitwise_{name}.Tensor", lambda a, b, op=op: op.Tensor(a, b), lambda: (ri(16, 3, 4), ri(16, 3, 4)))
    case(f"aten::bitwise_{name}.Scalar", lambda a, op=op: op.Scalar(a, 6), lambda: (ri(16, 3, 4),))
case("aten::logical_not.default", lambda a: aten.logical_not.default(a), lambda: (ri(2, 3, 4),))
case("aten::bitwise_not.default", lambda a: aten.bitwise_not.default(a), lambda: (ri(16, 3, 4),))
case("aten::bitwise_not.default", lambda a: aten.bitwise_not.default(a), lambda: (rb(3, 4),), tag="bool")
case("aten::isnan.default", lambda a: aten.isnan.default(a), lambda: (torch.tensor([1.0, math.nan, math.inf, -2.0]),))
case("aten::isinf.default", lambda a: aten.isinf.default(a), lambda: (torch.tensor([1.0, math.nan, math.inf, -math.inf]),))

# --- reductions, scans, sorting, softmax ---
case("aten::sum.dim_IntList", lambda a: aten.sum.dim_IntList(a, [0, 2], True), lambda: (r(2, 3, 4),))
case("aten::sum.dim_IntList", lambda a: aten.sum.dim_IntList(a, [1]), lambda: (rb(2, 3),), tag="bool")
case("aten::mean.default", lambda a: aten.mean.default(a), lambda: (r(2, 3, 4),))
case("aten::mean.dim", lambda a: aten.mean.dim(a, [-1]), lambda: (r(2, 3, 4),))
case("aten::prod.default", lambda a: aten.prod.default(a), lambda: (r(2, 3, lo=0.5, hi=1.5),))
case("aten::prod.dim_int", lambda a: aten.prod.dim_int(a, 1, True), lambda: (r(2, 3, lo=0.5, hi=1.5),))
case("aten::amax.default", lambda a: aten.amax.default(a, [1]), lambda: (r(2, 3, 4),))
case("aten::amin.default", lambda a: aten.amin.default(a, [0, 1], True), lambda: (r(2, 3, 4),))
case("aten::any.default", lambda a: aten.any.default(a), lambda: (ri(2, 2, 3),))
case("aten::any.dim", lambda a: aten.any.dim(a, 1), lambda: (rb(2, 3),))
case("aten::any.dims", lambda a: aten.any.dims(a, [0, 1], True), lambda: (rb(2, 3, 2),))
case("aten::argmax.default", lambda a: aten.argmax.default(a, 1), lambda: (r(3, 5),))
case("aten::argmin.default", lambda a: aten.argmin.default(a), lambda: (r(3, 5),))
case("aten::max.dim", lambda a: aten.max.dim(a, 1), lambda: (r(3, 5),))
case("aten::min.dim", lambda a: aten.min.dim(a, 0, True), lambda: (r(3, 5),))
case("aten::var.correction", lambda a: aten.var.correction(a, [1], correction=1), lambda: (r(3, 5),))
case("aten::var.dim", lambda a: aten.var.dim(a, [0, 1], False, True), lambda: (r(3, 5),))
case("aten::cumsum.default", lambda a: aten.cumsum.default(a, 1), lambda: (r(3, 5),))
case("aten::cumsum.default", lambda a: aten.cumsum.default(a, 1), lambda: (ri(2 ** 40, 3, 5) + 2 ** 58,),
     tag="int64_beyond_2_53")
case("aten::topk.default", lambda a: aten.topk.default(a, 2, 1), lambda: (r(3, 5),))
case("aten::sort.default", lambda a: aten.sort.default(a, 0, True), lambda: (r(4, 3),))
case("aten::_softmax.default", lambda a: aten._softmax.default(a, 1, False), lambda: (r(3, 5),))
case("aten::_log_softmax.default", lambda a: aten._log_softmax.default(a, -1, False), lambda: (r(3, 5),))

# --- shape and data movement ---
case("aten::view.default", lambda a: aten.view.default(a, [4, 3]), lambda: (r(3, 4),))
case("aten::permute.default", lambda a: aten.permute.default(a, [2, 0, 1]), lambda: (r(2, 3, 4),))
case("aten::unsqueeze.default", lambda a: aten.unsqueeze.default(a, -1), lambda: (r(2, 3),))
case("aten::squeeze.dim", lambda a: aten.squeeze.dim(a, 1), lambda: (r(2, 1, 3),))
case("aten::squeeze.dims", lambda a: aten.squeeze.dims(a, [0, 2]), lambda: (r(1, 3, 1),))
case("aten::expand.default", lambda a: aten.expand.default(a, [2, -1, 4]), lambda: (r(3, 1),))
case("aten::repeat.default", lambda a: aten.repeat.default(a, [2, 1, 3]), lambda: (r(2, 3),))
case("aten::cat.default", lambda a, b: aten.cat.default([a, b], 1), lambda: (r(2, 3), r(2, 2)))
case("aten::split_with_sizes.default", lambda a: aten.split_with_sizes.default(a, [1, 3], 1), lambda: (r(2, 4),))
case("aten::slice.Tensor", lambda a: aten.slice.Tensor(a, 1, 1, -1, 2), lambda: (r(2, 7),))
case("aten::select.int", lambda a: aten.select.int(a, 1, -1), lambda: (r(2, 3, 4),))
case("aten::flip.default", lambda a: aten.flip.default(a, [0, 2]), lambda: (r(2, 3, 4),))
case("aten::diagonal.default", lambda a: aten.diagonal.default(a, 1, 1, 2), lambda: (r(2, 3, 4),))
case("aten::as_strided.default", lambda a: aten.as_strided.default(a, [3, 2], [1, 3], 1), lambda: (r(3, 4),))
case("aten::roll.default", lambda a: aten.roll.default(a, [1, -2], [0, 1]), lambda: (r(3, 4),))
case("aten::stack.default", lambda a, b: aten.stack.default([a, b], 1), lambda: (r(2, 3), r(2, 3)))
case("aten::constant_pad_nd.default", lambda a: aten.constant_pad_nd.default(a, [1, 2, 0, 1], 0.5), lambda: (r(2, 3, 4),))
case("aten::reflection_pad1d.default", lambda a: aten.reflection_pad1d.default(a, [2, 1]), lambda: (r(1, 2, 5),))
case("aten::reflection_pad2d.default", lambda a: aten.reflection_pad2d.default(a, [1, 1, 2, 0]), lambda: (r(1, 2, 4, 5),))
case("aten::reflection_pad3d.default", lambda a: aten.reflection_pad3d.default(a, [1, 1, 1, 0, 0, 1]), lambda: (r(1, 1, 3, 4, 5),))
case("aten::replication_pad2d.default", lambda a: aten.replication_pad2d.default(a, [1, 2, 0, 1]), lambda: (r(1, 2, 3, 4),))
case("aten::replication_pad3d.default", lambda a: aten.replication_pad3d.default(a, [1, 0, 0, 1, 2, 1]), lambda: (r(1, 1, 3, 4, 2),))

# --- gather / scatter / indexing ---
case("aten::index_select.default", lambda a, i: aten.index_select.default(a, 1, i), lambda: (r(3, 5), ri(5, 4)))
case("aten::gather.default", lambda a, i: aten.gather.default(a, 1, i), lambda: (r(3, 5), ri(5, 3, 2)))
case("aten::scatter.src", lambda a, i, s: aten.scatter.src(a, 1, i, s),
     lambda: (r(3, 5), torch.stack([torch.randperm(5)[:2] for _ in range(3)]), r(3, 4)))
case("aten::scatter.value", lambda a, i: aten.scatter.value(a, 0, i, 7.0),
     lambda: (r(4, 3), torch.stack([torch.randperm(4)[:2] for _ in range(3)], 1)))
case("aten::scatter_add.default", lambda a, i, s: aten.scatter_add.default(a, 1, i, s), lambda: (r(3, 5), ri(5, 3, 4), r(3, 4)))
case("aten::scatter_reduce.two", lambda a, i, s: aten.scatter_reduce.two(a, 1, i, s, "amax", include_self=False),
     lambda: (r(3, 5), ri(5, 3, 4), r(3, 4)))
case("aten::scatter_reduce.two", lambda a, i, s: aten.scatter_reduce.two(a, 0, i, s, "sum"),
     lambda: (r(3, 5), ri(3, 2, 5), r(2, 5)), tag="sum")
case("aten::index.Tensor", lambda a, i, j: aten.index.Tensor(a, [None, i, j]), lambda: (r(2, 4, 5, 3), ri(4, 2, 1), ri(5, 3)))
case("aten::index.Tensor", lambda a, i: aten.index.Tensor(a, [i]), lambda: (r(4, 3), ri(4, 5, lo=-4)), tag="rows")
case("aten::index.Tensor", lambda a, m: aten.index.Tensor(a, [m]), lambda: (r(4, 3), torch.tensor([True, False, True, True])),
     tag="mask")
case("aten::index.Tensor", lambda a, i, j: aten.index.Tensor(a, [i, None, j]), lambda: (r(4, 2, 5), ri(4, 3), ri(5, 3)),
     tag="split")
case("aten::index_put.default", lambda a, i, v: aten.index_put.default(a, [i], v), lambda: (r(5, 3), torch.randperm(5)[:2], r(3)))
case("aten::index_put.default", lambda a, i, j, v: aten.index_put.default(a, [None, i, j], v, True),
     lambda: (r(2, 4, 5), ri(4, 6), ri(5, 6), r(2, 6)), tag="accumulate")
case("aten::slice_scatter.default", lambda a, s: aten.slice_scatter.default(a, s, 1, 1, 5, 2), lambda: (r(3, 6), r(3, 2)))
case("aten::select_scatter.default", lambda a, s: aten.select_scatter.default(a, s, 0, -1), lambda: (r(3, 4), r(4)))
case("aten::masked_scatter.default", lambda a, m, s: aten.masked_scatter.default(a, m, s), lambda: (r(3, 4), rb(3, 4), r(12)))
case("aten::nonzero.default", lambda a: aten.nonzero.default(a), lambda: (ri(2, 3, 4),))
for mode in (0, 1, 2):
    case("aten::_embedding_bag.default", lambda w, i, o, mode=mode: aten._embedding_bag.default(w, i, o, False, mode),
         lambda: (r(6, 3), torch.tensor([0, 2, 1, 5, 3]), torch.tensor([0, 2, 2])), tag=["sum", "mean", "max"][mode])
case("aten::_embedding_bag.default",
     lambda w, i, o, p: aten._embedding_bag.default(w, i, o, False, 0, False, p, True, 1)[0],
     lambda: (r(6, 3), torch.tensor([0, 2, 1, 5, 3]), torch.tensor([0, 3, 5]), r(5)), tag="weights")
case("aten::embedding.default", lambda w, i: aten.embedding.default(w, i), lambda: (r(10, 3), ri(10, 2, 4)))

# --- factories ---
case("aten::full.default", lambda a: aten.full.default([2, 3], 1.5) + a, lambda: (r(2, 3),))
case("aten::full_like.default", lambda a: aten.full_like.default(a, 7), lambda: (ri(5, 2, 3),))
case("aten::empty.memory_format", lambda a: aten.empty.memory_format([2, 3]), lambda: (r(2, 3),), check="shape")
case("aten::empty_strided.default", lambda a: aten.empty_strided.default([2, 3], [3, 1]), lambda: (r(2, 3),), check="shape")
case("aten::scalar_tensor.default", lambda a: aten.scalar_tensor.default(2.5) * a, lambda: (r(2, 3),))
case("aten::arange.start_step", lambda a: aten.arange.start_step(1, 10, 3) + a, lambda: (ri(5, 3),))
case("aten::arange.start_step", lambda a: aten.arange.start_step(0.5, 2.0, 0.25, dtype=torch.float32) * a, lambda: (r(6),),
     tag="float")
# Random outputs: 4096 samples each, checked for support and moments (random_props; eager's sample too).
case("aten::rand.default", lambda a: aten.rand.default([64, 64]), lambda: (r(2, 3),), check="props",
     props=lambda o, i: rp.uniform(o[0], 0, 1))
case("aten::randn.default", lambda a: aten.randn.default([64, 64]), lambda: (r(2, 3),), check="props",
     props=lambda o, i: rp.standard_normal(o[0]))
case("aten::randperm.default", lambda a: aten.randperm.default(1000), lambda: (r(2, 3),), check="props",
     props=lambda o, i: rp.permutation(o[0], 1000))
case("aten::native_dropout.default", lambda a: aten.native_dropout.default(a, 0.5, False), lambda: (r(2, 3),))
case("aten::native_dropout.default", lambda a: aten.native_dropout.default(a, 0.3, True), lambda: (r(64, 64),), check="props",
     props=lambda o, i: rp.dropout(o[0], i[0], 0.3, mask=o[1]), tag="train")

# --- matrix products ---
case("aten::mm.default", lambda a, b: aten.mm.default(a, b), lambda: (r(3, 4), r(4, 2)))
case("aten::bmm.default", lambda a, b: aten.bmm.default(a, b), lambda: (r(2, 3, 4), r(2, 4, 2)))
case("aten::addmm.default", lambda c, a, b: aten.addmm.default(c, a, b, beta=0.5, alpha=2), lambda: (r(2), r(3, 4), r(4, 2)))
case("aten::permute.default", lambda a: aten.permute.default(a, [1, 0]), lambda: (r(2, 3),), tag="2d")

# --- nn ---
case("aten::convolution.default", lambda x, w, b: aten.convolution.default(x, w, b, [2, 1], [1, 0], [1, 1], False, [0, 0], 1),
     lambda: (r(1, 4, 6, 5), r(6, 4, 3, 3), r(6)))
case("aten::convolution.default", lambda x, w: aten.convolution.default(x, w, None, [2], [1], [1], True, [1], 2),
     lambda: (r(1, 4, 5), r(4, 3, 3)), tag="transposed")
case("aten::avg_pool2d.default", lambda x: aten.avg_pool2d.default(x, [2, 2], [2, 1], [1, 0], False, False), lambda: (r(1, 2, 5, 6),))
case("aten::avg_pool3d.default", lambda x: aten.avg_pool3d.default(x, [2, 2, 2]), lambda: (r(1, 2, 4, 4, 4),))
case("aten::max_pool2d_with_indices.default", lambda x: aten.max_pool2d_with_indices.default(x, [3, 3], [2, 2], [1, 1]),
     lambda: (r(2, 3, 7, 6),))
case("aten::max_pool3d_with_indices.default", lambda x: aten.max_pool3d_with_indices.default(x, [2, 2, 2], [2, 2, 2]),
     lambda: (r(1, 2, 4, 4, 4),))
case("aten::_adaptive_avg_pool2d.default", lambda x: aten._adaptive_avg_pool2d.default(x, [2, 3]), lambda: (r(1, 2, 4, 6),))
case("aten::_adaptive_avg_pool2d.default", lambda x: aten._adaptive_avg_pool2d.default(x, [3, 2]), lambda: (r(1, 2, 5, 7),),
     tag="uneven")
case("aten::_adaptive_avg_pool3d.default", lambda x: aten._adaptive_avg_pool3d.default(x, [1, 1, 1]), lambda: (r(1, 2, 3, 4, 5),))
case("aten::_native_batch_norm_legit_no_training.default",
     lambda x, w, b, m, v: aten._native_batch_norm_legit_no_training.default(x, w, b, m, v, 0.1, 1e-5)[0],
     lambda: (r(2, 3, 4), r(3), r(3), r(3), r(3, lo=0.5, hi=2)))
case("aten::_native_batch_norm_legit.default",
     lambda x, w, b, m, v: aten._native_batch_norm_legit.default(x, w, b, m.clone(), v.clone(), True, 0.1, 1e-5),
     lambda: (r(2, 3, 4), r(3), r(3), r(3), r(3, lo=0.5, hi=2)))
case("aten::_native_batch_norm_legit.no_stats",
     lambda x: aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5), lambda: (r(2, 3, 4, 2),))
case("aten::native_layer_norm.default", lambda x, w, b: aten.native_layer_norm.default(x, [4], w, b, 1e-5),
     lambda: (r(2, 3, 4), r(4), r(4)))
case("aten::native_group_norm.default", lambda x, w, b: aten.native_group_norm.default(x, w, b, 2, 6, 4, 3, 1e-5),
     lambda: (r(2, 6, 2, 2), r(6), r(6)))
case("aten::upsample_nearest2d.vec", lambda x: aten.upsample_nearest2d.vec(x, [5, 6], None), lambda: (r(1, 2, 3, 4),))
case("aten::upsample_bilinear2d.vec", lambda x: aten.upsample_bilinear2d.vec(x, [5, 6], False, None), lambda: (r(1, 2, 3, 4),))
case("aten::upsample_bilinear2d.vec", lambda x: aten.upsample_bilinear2d.vec(x, None, True, [2.0, 1.5]),
     lambda: (r(1, 2, 3, 4),), tag="align_corners")
case("aten::grid_sampler_2d.default", lambda x, g: aten.grid_sampler_2d.default(x, g, 0, 0, False),
     lambda: (r(1, 2, 4, 5), r(1, 3, 3, 2, lo=-1, hi=1)))
case("aten::col2im.default", lambda x: aten.col2im.default(x, [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]), lambda: (r(1, 8, 12),))
case("aten::_cdist_forward.default", lambda a, b: aten._cdist_forward.default(a, b, 2.0, None), lambda: (r(2, 3, 4), r(2, 5, 4)))
case("aten::_pdist_forward.default", lambda a: aten._pdist_forward.default(a, 2.0), lambda: (r(4, 3),))
case("aten::gelu.default", lambda x: aten.gelu.default(x), lambda: (r(3, 4),))
case("aten::gelu.default", lambda x: aten.gelu.default(x, approximate="tanh"), lambda: (r(3, 4),), tag="tanh")
case("aten::elu.default", lambda x: aten.elu.default(x, 0.5), lambda: (r(3, 4),))
case("aten::leaky_relu.default", lambda x: aten.leaky_relu.default(x, 0.2), lambda: (r(3, 4),))
case("aten::hardtanh.default", lambda x: aten.hardtanh.default(x, -0.5, 1.0), lambda: (r(3, 4),))

# --- symbolic scalars and guards (dynamic shapes) ---
_batch = {"x": {0: torch.export.Dim("batch", min=2, max=64)}}
case("aten::sym_size.int", lambda x: x.new_zeros(x.shape[0] * 2 + 1), lambda: (r(4, 3),), dynamic=_batch)


def replace_sym_node(match, new_op, new_args):
    """torch.export folds sym_numel/sym_stride into sym_size arithmetic: put the op back in place of the
    node computing the same symbolic value (its meta["val"] stays, so the program stays valid)."""
    def edit(ep):
        graph = ep.graph_module.graph
        node = next(n for n in graph.nodes if n.op == "call_function" and match(n))
        x = next(n for n in graph.nodes if n.op == "placeholder")
        with graph.inserting_before(node):
            new = graph.call_function(new_op, new_args(x))
        new.meta.update(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        graph.eliminate_dead_code()
        ep.graph_module.recompile()
    return edit


case("aten::sym_numel.default", lambda x: x.new_ones(x.shape[0] * 3), lambda: (r(4, 3),), dynamic=_batch,
     edit=replace_sym_node(lambda n: "mul" in str(n.target), aten.sym_numel.default, lambda x: (x,)))


def add_storage_offset(ep):
    """sym_size + sym_storage_offset (always 0 for an input) in place of the sym_size feeding new_ones."""
    import operator
    graph = ep.graph_module.graph
    size = next(n for n in graph.nodes if "sym_size" in str(n.target))
    x = next(n for n in graph.nodes if n.op == "placeholder")
    users = list(size.users)
    with graph.inserting_after(size):
        offset = graph.call_function(aten.sym_storage_offset.default, (x,))
    offset.meta["val"] = 0
    with graph.inserting_after(offset):
        total = graph.call_function(operator.add, (size, offset))
    total.meta.update(size.meta)
    for u in users:
        u.replace_input_with(size, total)
    ep.graph_module.recompile()


case("aten::sym_storage_offset.default", lambda x: x.new_ones(x.shape[0]), lambda: (r(4, 3),), dynamic=_batch,
     edit=add_storage_offset)
_cols = {"x": {1: torch.export.Dim("cols", min=2, max=64)}}
case("aten::sym_stride.int", lambda x: x.new_ones(x.shape[1]), lambda: (r(4, 3),), dynamic=_cols,
     edit=replace_sym_node(lambda n: "sym_size" in str(n.target), aten.sym_stride.int, lambda x: (x, 0)))
case("_operator::floordiv", lambda x: x.new_ones(x.shape[0] // 2 + 2), lambda: (r(7, 3),), dynamic=_batch)
case("_operator::mod", lambda x: x.new_ones(x.shape[0] % 3 + 2), lambda: (r(7, 3),), dynamic=_batch)
case("aten::_local_scalar_dense.default", lambda x: aten.full.default([2], x.sum().item()), lambda: (r(2, 3),), decompose=True)


# --- backward ops (training graphs); the saved statistics come from the forward op ---
def _ln_inputs():
    x, w, b = r(2, 3, 4), r(4), r(4)
    _, mean, rstd = aten.native_layer_norm.default(x, [4], w, b, 1e-5)
    return r(2, 3, 4), x, mean, rstd, w, b


def _gn_inputs():
    x, w, b = r(2, 6, 2, 2), r(6), r(6)
    _, mean, rstd = aten.native_group_norm.default(x, w, b, 2, 6, 4, 3, 1e-5)
    return r(2, 6, 2, 2), x, mean, rstd, w


def _max_pool_inputs():
    x = r(2, 3, 6, 5)
    _, idx = aten.max_pool2d_with_indices.default(x, [3, 3], [2, 2], [1, 1])
    return r(2, 3, 3, 3), x, idx


case("aten::native_layer_norm_backward.default",
     lambda g, x, m, s, w, b: aten.native_layer_norm_backward.default(g, x, [4], m, s, w, b, [True, True, True]), _ln_inputs)
case("aten::native_group_norm_backward.default",
     lambda g, x, m, s, w: aten.native_group_norm_backward.default(g, x, m, s, w, 2, 6, 4, 3, [True, True, True]), _gn_inputs)
case("aten::max_pool2d_with_indices_backward.default",
     lambda g, x, i: aten.max_pool2d_with_indices_backward.default(g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, i),
     _max_pool_inputs)
case("aten::avg_pool2d_backward.default",
     lambda g, x: aten.avg_pool2d_backward.default(g, x, [3, 2], [2, 2], [1, 0], False, True, None),
     lambda: (r(1, 2, 3, 3), r(1, 2, 6, 6)))
case("aten::_adaptive_avg_pool2d_backward.default", lambda g, x: aten._adaptive_avg_pool2d_backward.default(g, x),
     lambda: (r(1, 2, 2, 3), r(1, 2, 4, 6)))
case("aten::embedding_dense_backward.default",
     lambda g, i: aten.embedding_dense_backward.default(g, i, 6, 2, False), lambda: (r(2, 4, 3), ri(6, 2, 4)))
case("aten::convolution_backward.default",
     lambda g, x, w: aten.convolution_backward.default(g, x, w, [3], [2, 1], [1, 0], [1, 2], False, [0, 0], 1,
                                                       [True, True, True]),
     lambda: (r(1, 3, 3, 3), r(1, 2, 6, 7), r(3, 2, 3, 3)))

# --- non-core overloads that non-decomposed programs hold ---
case("aten::linear.default", lambda x, w, b: F.linear(x, w, b), lambda: (r(2, 3, 4), r(5, 4), r(5)))
case("aten::linear.default", lambda x, w: F.linear(x, w), lambda: (r(3, 4), r(5, 4)), tag="2d")
case("aten::matmul.default", lambda a, b: torch.matmul(a, b), lambda: (r(2, 3, 4), r(4, 5)))
case("aten::t.default", lambda a: aten.t.default(a), lambda: (r(3, 4),))
case("aten::transpose.int", lambda a: aten.transpose.int(a, 0, 2), lambda: (r(2, 3, 4),))
case("aten::reshape.default", lambda a: aten.reshape.default(a, [-1, 2]), lambda: (r(3, 4),))
case("aten::_unsafe_view.default", lambda a: aten._unsafe_view.default(a, [2, 6]), lambda: (r(3, 4),))
case("aten::contiguous.default", lambda a: aten.contiguous.default(a) + 1, lambda: (r(3, 4),))
case("aten::detach.default", lambda a: aten.detach.default(a) + 1, lambda: (r(3, 4),))
case("aten::lift_fresh_copy.default", lambda a: a + torch.tensor([1.0, 2.0, 3.0]), lambda: (r(2, 3),))
case("aten::flatten.using_ints", lambda a: a.flatten(1), lambda: (r(2, 3, 4),))
case("aten::squeeze.default", lambda a: aten.squeeze.default(a), lambda: (r(1, 3, 1, 2),))
case("aten::split.Tensor", lambda a: aten.split.Tensor(a, 2, 1), lambda: (r(2, 5),))
case("aten::unbind.int", lambda a: aten.unbind.int(a, 1), lambda: (r(2, 3),))
case("aten::conv1d.default", lambda x, w, b: F.conv1d(x, w, b, padding=1), lambda: (r(1, 2, 6), r(3, 2, 3), r(3)))
case("aten::conv2d.default", lambda x, w: F.conv2d(x, w, stride=2, groups=2), lambda: (r(1, 4, 6, 6), r(4, 2, 3, 3)))
case("aten::conv3d.default", lambda x, w: F.conv3d(x, w), lambda: (r(1, 2, 4, 4, 4), r(3, 2, 2, 2, 2)))
case("aten::conv1d.padding", lambda x, w: F.conv1d(x, w, padding="same"), lambda: (r(1, 2, 6), r(3, 2, 4)))
case("aten::conv2d.padding", lambda x, w: F.conv2d(x, w, padding="same", dilation=2), lambda: (r(1, 2, 6, 5), r(3, 2, 3, 2)))
case("aten::conv3d.padding", lambda x, w: F.conv3d(x, w, padding="valid"), lambda: (r(1, 2, 4, 4, 4), r(3, 2, 2, 2, 2)))
case("aten::max_pool1d.default", lambda x: F.max_pool1d(x, 2), lambda: (r(1, 2, 7),))
case("aten::max_pool2d.default", lambda x: F.max_pool2d(x, 3, 2, 1), lambda: (r(1, 2, 7, 6),))
case("aten::max_pool3d.default", lambda x: F.max_pool3d(x, 2), lambda: (r(1, 2, 4, 4, 4),))
case("aten::avg_pool1d.default", lambda x: F.avg_pool1d(x, 3, 2), lambda: (r(1, 2, 7),))
case("aten::adaptive_avg_pool1d.default", lambda x: F.adaptive_avg_pool1d(x, 3), lambda: (r(1, 2, 6),))
case("aten::adaptive_avg_pool2d.default", lambda x: F.adaptive_avg_pool2d(x, 1), lambda: (r(1, 2, 5, 3),))
case("aten::batch_norm.default", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, eps=1e-3),
     lambda: (r(2, 3, 4), r(3), r(3, lo=0.5, hi=2), r(3), r(3)))
case("aten::batch_norm.default", lambda x: F.batch_norm(x, None, None, training=True), lambda: (r(4, 3, 2),), tag="train")
case("aten::_native_batch_norm_legit_functional.default", lambda x, m, v: F.batch_norm(x, m, v, training=True),
     lambda: (r(4, 3, 2), r(3), r(3, lo=0.5, hi=2)), decompose=True)
case("aten::layer_norm.default", lambda x, w: F.layer_norm(x, [3, 4], w), lambda: (r(2, 3, 4), r(3, 4)))
case("aten::group_norm.default", lambda x, w, b: F.group_norm(x, 2, w, b), lambda: (r(2, 4, 3), r(4), r(4)))
case("aten::scaled_dot_product_attention.default", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     lambda: (r(1, 2, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4)))
case("aten::scaled_dot_product_attention.default", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, scale=0.3),
     lambda: (r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4), rb(3, 5) | torch.eye(3, 5, dtype=torch.bool)), tag="mask")
# Opset 23: SDPA -> Attention (causal, boolean and additive masks, grouped-query heads), rms_norm ->
# RMSNormalization; at 18 both are decomposed.
case("aten::scaled_dot_product_attention.default", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     lambda: (r(1, 2, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4)), opset=23, onnx_ops=("Attention",), tag="opset23-causal")
case("aten::scaled_dot_product_attention.default", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, scale=0.3),
     lambda: (r(2, 2, 3, 4), r(2, 2, 5, 4), r(2, 2, 5, 4), rb(3, 5) | torch.eye(3, 5, dtype=torch.bool)), opset=23,
     onnx_ops=("Attention",), tag="opset23-bool-mask")
case("aten::scaled_dot_product_attention.default", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
     lambda: (r(1, 2, 3, 4), r(1, 2, 6, 4), r(1, 2, 6, 4), r(1, 1, 3, 6)), opset=23, onnx_ops=("Attention",),
     tag="opset23-float-mask")
case("aten::scaled_dot_product_attention.default",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
     lambda: (r(1, 4, 5, 8), r(1, 2, 5, 8), r(1, 2, 5, 8)), opset=23, onnx_ops=("Attention",), tag="opset23-gqa")
case("aten::rms_norm.default", lambda x, w: F.rms_norm(x, [4], w, 1e-5), lambda: (r(2, 3, 4), r(4)))
case("aten::rms_norm.default", lambda x: F.rms_norm(x, [3, 4]), lambda: (r(2, 3, 4),), tag="no-weight-default-eps")
case("aten::rms_norm.default", lambda x, w: F.rms_norm(x, [4], w, 1e-5), lambda: (r(2, 3, 4), r(4)), opset=23,
     onnx_ops=("RMSNormalization",), tag="opset23")
case("aten::rms_norm.default", lambda x: F.rms_norm(x, [3, 4]), lambda: (r(2, 3, 4),), opset=23,
     onnx_ops=("RMSNormalization",), tag="opset23-no-weight")
case("aten::softmax.int", lambda x: F.softmax(x, 0), lambda: (r(3, 4),))
case("aten::log_softmax.int", lambda x: F.log_softmax(x, 1), lambda: (r(3, 4),))
case("aten::dropout.default", lambda x: F.dropout(x, 0.3, False), lambda: (r(3, 4),))
case("aten::silu.default", lambda x: F.silu(x), lambda: (r(3, 4),))
case("aten::hardswish.default", lambda x: F.hardswish(x), lambda: (r(3, 4) * 4,))
case("aten::hardsigmoid.default", lambda x: F.hardsigmoid(x), lambda: (r(3, 4) * 4,))
case("aten::softplus.default", lambda x: F.softplus(x, 2.0, 5.0), lambda: (r(3, 4) * 4,))
case("aten::prelu.default", lambda x, w: F.prelu(x, w), lambda: (r(2, 3, 4), r(3)))
case("aten::all.default", lambda a: aten.all.default(a), lambda: (rb(2, 3),))
case("aten::all.dim", lambda a: aten.all.dim(a, 1), lambda: (r(2, 3),))
case("aten::all.dims", lambda a: aten.all.dims(a, [0], True), lambda: (rb(2, 3),))
case("aten::arange.default", lambda a: aten.arange.default(5) * a, lambda: (ri(3, 5),))
case("aten::arange.start", lambda a: aten.arange.start(2, 7) + a, lambda: (ri(3, 5),))
case("aten::argsort.default", lambda a: torch.argsort(a, 1), lambda: (r(3, 5),))
case("aten::argsort.stable", lambda a: torch.argsort(a, dim=0, stable=True), lambda: (r(3, 5),))
case("aten::sort.stable", lambda a: aten.sort.stable(a, stable=True, dim=1), lambda: (r(3, 5),))
case("aten::clamp_min.default", lambda a: aten.clamp_min.default(a, 0.2), lambda: (r(3, 4),))
case("aten::clamp_max.default", lambda a: aten.clamp_max.default(a, 0.2), lambda: (r(3, 4),))
case("aten::empty_like.default", lambda a: aten.empty_like.default(a), lambda: (r(3, 4),), check="shape")
case("aten::new_empty.default", lambda a: aten.new_empty.default(a, [2, 5]), lambda: (r(3, 4),), check="shape")
case("aten::fill.Tensor", lambda a, v: aten.fill.Tensor(a, v), lambda: (r(3, 4), r(())))
case("aten::lerp.Scalar", lambda a, b: aten.lerp.Scalar(a, b, 0.3), lambda: (r(3, 4), r(3, 4)))
case("aten::lerp.Tensor", lambda a, b, w: aten.lerp.Tensor(a, b, w), lambda: (r(3, 4), r(3, 4), r(4)))
case("aten::logsumexp.default", lambda a: aten.logsumexp.default(a, [1]), lambda: (r(3, 4),))
case("aten::masked_fill.Scalar", lambda a, m: aten.masked_fill.Scalar(a, m, -1.5), lambda: (r(3, 4), rb(3, 4)))
case("aten::masked_fill.Tensor", lambda a, m, v: aten.masked_fill.Tensor(a, m, v), lambda: (r(3, 4), rb(4), r(())))
case("aten::max.default", lambda a: aten.max.default(a), lambda: (r(3, 4),))
case("aten::min.default", lambda a: aten.min.default(a), lambda: (ri(9, 3, 4),))
case("aten::new_full.default", lambda a: aten.new_full.default(a, [2, 3], 4), lambda: (ri(9, 3),))
case("aten::new_ones.default", lambda a: aten.new_ones.default(a, [2, 3]), lambda: (r(3),))
case("aten::new_zeros.default", lambda a: aten.new_zeros.default(a, [2, 3]), lambda: (r(3),))
case("aten::ones.default", lambda a: aten.ones.default([2, 3]) + a, lambda: (r(3),))
case("aten::zeros.default", lambda a: aten.zeros.default([2, 3], dtype=torch.int64) + a, lambda: (ri(5, 3),))
case("aten::ones_like.default", lambda a: aten.ones_like.default(a), lambda: (ri(5, 3),))
case("aten::zeros_like.default", lambda a: aten.zeros_like.default(a), lambda: (r(2, 3),))
case("aten::rand_like.default", lambda a: aten.rand_like.default(a), lambda: (r(64, 64),), check="props",
     props=lambda o, i: rp.uniform(o[0], 0, 1))
case("aten::randn_like.default", lambda a: aten.randn_like.default(a), lambda: (r(64, 64),), check="props",
     props=lambda o, i: rp.standard_normal(o[0]))
case("aten::replication_pad1d.default", lambda a: aten.replication_pad1d.default(a, [2, 1]), lambda: (r(1, 2, 4),))
case("aten::rsub.Tensor", lambda a, b: aten.rsub.Tensor(a, b, alpha=2), lambda: (r(3, 4), r(4)))
case("aten::std.correction", lambda a: aten.std.correction(a, [1], correction=0, keepdim=True), lambda: (r(3, 5),))
case("aten::std.dim", lambda a: aten.std.dim(a, [0]), lambda: (r(3, 5),))
case("aten::sum.default", lambda a: aten.sum.default(a), lambda: (ri(5, 3, 4),))
case("aten::to.dtype", lambda a: aten.to.dtype(a, torch.float16), lambda: (r(3, 4),), tol=1e-3)
case("aten::to.dtype_layout", lambda a: aten.to.dtype_layout(a, dtype=torch.int64), lambda: (r(3, 4) * 4,))
case("aten::type_as.default", lambda a, b: aten.type_as.default(a, b), lambda: (r(3, 4) * 4, ri(3, 2)))
case("aten::pad.default", lambda a: F.pad(a, [1, 2, 0, 1], value=0.5), lambda: (r(2, 3, 4),))
case("aten::pad.default", lambda a: F.pad(a, [2, 1], mode="reflect"), lambda: (r(1, 2, 5),), tag="reflect")
case("aten::pad.default", lambda a: F.pad(a, [1, 0, 2, 1], mode="replicate"), lambda: (r(1, 2, 3, 4),), tag="replicate")
case("aten::chunk.default", lambda a: torch.chunk(a, 3, 1), lambda: (r(2, 7),))
case("aten::unflatten.int", lambda a: a.unflatten(1, (2, -1)), lambda: (r(3, 8, 2),))


def _in_place(op):
    """x.op_(...) on a clone, then both the returned value and the clone read afterwards."""
    def fn(a, *rest):
        y = a.clone()
        op(y, *rest)
        return y * 2, a
    return fn


case("aten::add_.Tensor", _in_place(lambda y, b: y.add_(b)), lambda: (r(3, 4), r(4)))
case("aten::sub_.Tensor", _in_place(lambda y, b: y.sub_(b)), lambda: (r(3, 4), r(4)))
case("aten::mul_.Tensor", _in_place(lambda y, b: y.mul_(b)), lambda: (r(3, 4), r(4)))
case("aten::div_.Tensor", _in_place(lambda y, b: y.div_(b)), lambda: (r(3, 4), r(4, lo=0.5, hi=2)))
case("aten::fill_.Scalar", _in_place(lambda y: y.fill_(3.0)), lambda: (r(3, 4),))
case("aten::fill_.Tensor", _in_place(lambda y, v: y.fill_(v)), lambda: (r(3, 4), r(())))
case("aten::copy_.default", _in_place(lambda y, b: y.copy_(b)), lambda: (r(3, 4), r(4)))
case("aten::masked_fill_.Scalar", _in_place(lambda y, m: y.masked_fill_(m, -1.0)), lambda: (r(3, 4), rb(3, 4)))
case("aten::index_put_.default", _in_place(lambda y, i, v: y.index_put_((i,), v)), lambda: (r(5, 3), torch.randperm(5)[:2], r(3)))


def _assign_through_view(a, b):
    """Writes through views of a clone: fill_ on slice(slice(.)), copy_ on select(.), add_ on view(.)."""
    y = a.clone()
    y[1:3, :2] = 1.0
    y[0].copy_(b)
    y.view(-1)[:4].add_(10.0)
    return y


case("aten::fill_.Tensor", _assign_through_view, lambda: (r(4, 3), r(3)), tag="through_views")
case("aten::einsum.default", lambda a, b: torch.einsum("bij,bjk->bik", a, b), lambda: (r(2, 3, 4), r(2, 4, 5)))
case("aten::einsum.default", lambda a, b: torch.einsum("i, j -> ij", a, b), lambda: (r(3), r(4)), tag="outer")
case("aten::repeat_interleave.self_int", lambda a: a.repeat_interleave(3, dim=1), lambda: (r(2, 3, 4),))
case("aten::repeat_interleave.self_int", lambda a: a.repeat_interleave(2), lambda: (r(2, 3),), tag="flat")
case("aten::repeat_interleave.self_int", lambda x: x.repeat_interleave(2, dim=0), lambda: (r(4, 3),),
     dynamic=_batch, tag="dynamic")

# --- ops of real models before decomposition (transformers, torchvision-style networks) ---
def retarget(via, key):
    """torch.export traces some overloads into another (CompositeImplicit aliases such as divide -> div):
    the graph gets `key` put back in place of `via`, same arguments, so the row tests `key` itself."""
    ns, rest = key.split("::")
    name, _, overload = rest.partition(".")
    op = getattr(getattr(getattr(torch.ops, ns), name), overload or "default")

    def edit(ep):
        graph = ep.graph_module.graph
        nodes = [n for n in graph.nodes if n.op == "call_function" and n.target == via]
        for n in nodes:
            n.target = op
        if not nodes and not any(n.target == op for n in graph.nodes):
            raise AssertionError(f"neither {via} nor {key} in the captured graph")
        ep.graph_module.recompile()
    return edit


def alias_row(key, via, inputs, args=(), **kw):
    """One row for an alias overload: eager runs `key` itself, the graph holds `key` (retargeted from `via`)."""
    ns, rest = key.split("::")
    name, _, overload = rest.partition(".")
    op = getattr(getattr(aten, name), overload)
    case(key, lambda *t, op=op: op(*t, *args), inputs, edit=retarget(via, key), **kw)


for _key, _via, _inputs, _args in [
        ("aten::__and__.Tensor", aten.bitwise_and.Tensor, lambda: (ri(16, 3, 4), ri(16, 4)), ()),
        ("aten::__and__.Scalar", aten.bitwise_and.Scalar, lambda: (ri(16, 3, 4),), (6,)),
        ("aten::__or__.Tensor", aten.bitwise_or.Tensor, lambda: (rb(3, 4), rb(3, 4)), ()),
        ("aten::__or__.Scalar", aten.bitwise_or.Scalar, lambda: (ri(16, 3, 4),), (5,)),
        ("aten::__xor__.Tensor", aten.bitwise_xor.Tensor, lambda: (ri(16, 3, 4), ri(16, 3, 4)), ()),
        ("aten::__xor__.Scalar", aten.bitwise_xor.Scalar, lambda: (ri(16, 3, 4),), (3,)),
        ("aten::min.other", aten.minimum.default, lambda: (r(3, 4), r(4)), ()),
        ("aten::max.other", aten.maximum.default, lambda: (r(3, 4), r(4)), ()),
        ("aten::divide.Tensor", aten.div.Tensor, lambda: (r(3, 4), r(3, 4, lo=0.5, hi=2)), ()),
        ("aten::divide.Scalar", aten.div.Scalar, lambda: (r(3, 4),), (4.0,)),
        ("aten::true_divide.Tensor", aten.div.Tensor, lambda: (ri(9, 3, 4), ri(5, 3, 4, lo=1)), ()),
        ("aten::true_divide.Scalar", aten.div.Scalar, lambda: (r(3, 4),), (3.0,)),
        ("aten::multiply.Tensor", aten.mul.Tensor, lambda: (r(3, 4), r(4)), ()),
        ("aten::multiply.Scalar", aten.mul.Scalar, lambda: (r(3, 4),), (0.25,)),
        ("aten::subtract.Tensor", aten.sub.Tensor, lambda: (r(3, 4), r(4)), ()),
        ("aten::subtract.Scalar", aten.sub.Scalar, lambda: (ri(9, 3, 4),), (2,)),
        ("aten::greater.Tensor", aten.gt.Tensor, lambda: (ri(3, 3, 4), ri(3, 4)), ()),
        ("aten::greater.Scalar", aten.gt.Scalar, lambda: (r(3, 4),), (0.5,)),
        ("aten::greater_equal.Tensor", aten.ge.Tensor, lambda: (ri(3, 3, 4), ri(3, 4)), ()),
        ("aten::greater_equal.Scalar", aten.ge.Scalar, lambda: (r(3, 4),), (0.5,)),
        ("aten::less.Tensor", aten.lt.Tensor, lambda: (ri(3, 3, 4), ri(3, 4)), ()),
        ("aten::less.Scalar", aten.lt.Scalar, lambda: (r(3, 4),), (0.5,)),
        ("aten::less_equal.Tensor", aten.le.Tensor, lambda: (ri(3, 3, 4), ri(3, 4)), ()),
        ("aten::less_equal.Scalar", aten.le.Scalar, lambda: (r(3, 4),), (0.5,)),
        ("aten::not_equal.Tensor", aten.ne.Tensor, lambda: (ri(3, 3, 4), ri(3, 4)), ()),
        ("aten::not_equal.Scalar", aten.ne.Scalar, lambda: (ri(3, 3, 4),), (1,)),
        ("aten::special_erf.default", aten.erf.default, lambda: (r(3, 4),), ()),
        ("aten::special_expm1.default", aten.expm1.default, lambda: (r(3, 4),), ()),
        ("aten::clamp_max.Tensor", aten.clamp_max.default, lambda: (r(3, 4), r(4)), ()),
        ("aten::clamp_min.Tensor", aten.clamp_min.default, lambda: (r(3, 4), r(4)), ()),
        ("aten::clip.default", aten.clamp.default, lambda: (r(3, 4),), (-0.5, 0.5)),
        ("aten::clip.Tensor", aten.clamp.Tensor, lambda: (r(3, 4), r(4) - 1, r(4) + 1), ()),
        ("aten::fix.default", aten.trunc.default, lambda: (r(3, 4) * 3,), ()),
        ("aten::negative.default", aten.neg.default, lambda: (r(3, 4),), ()),
        ("aten::absolute.default", aten.abs.default, lambda: (r(3, 4),), ()),
        ("aten::arccos.default", aten.acos.default, lambda: (r(3, 4, lo=-0.9, hi=0.9),), ()),
        ("aten::arcsin.default", aten.asin.default, lambda: (r(3, 4, lo=-0.9, hi=0.9),), ()),
        ("aten::arctan.default", aten.atan.default, lambda: (r(3, 4),), ()),
        ("aten::arccosh.default", aten.acosh.default, lambda: (r(3, 4, lo=1.1, hi=4),), ()),
        ("aten::arcsinh.default", aten.asinh.default, lambda: (r(3, 4),), ()),
        ("aten::arctanh.default", aten.atanh.default, lambda: (r(3, 4, lo=-0.9, hi=0.9),), ()),
        ("aten::arctan2.default", aten.atan2.default, lambda: (r(3, 4), r(3, 4)), ()),
        ("aten::broadcast_to.default", aten.expand.default, lambda: (r(3, 1),), ([2, 3, 4],)),
        ("aten::swapdims.default", aten.transpose.int, lambda: (r(2, 3, 4),), (0, 2)),
        ("aten::view_copy.default", aten.view.default, lambda: (r(3, 4),), ([2, 6],)),
        ("aten::expand_copy.default", aten.expand.default, lambda: (r(3, 1),), ([3, 5],)),
        ("aten::permute_copy.default", aten.permute.default, lambda: (r(2, 3, 4),), ([1, 2, 0],)),
        ("aten::transpose_copy.int", aten.transpose.int, lambda: (r(2, 3, 4),), (1, 2)),
        ("aten::unsqueeze_copy.default", aten.unsqueeze.default, lambda: (r(2, 3),), (1,)),
        ("aten::squeeze_copy.dim", aten.squeeze.dim, lambda: (r(2, 1, 3),), (1,)),
        ("aten::slice_copy.Tensor", aten.slice.Tensor, lambda: (r(2, 7),), (1, 1, 5)),
        ("aten::select_copy.int", aten.select.int, lambda: (r(2, 3, 4),), (1, 2)),
        ("aten::t_copy.default", aten.t.default, lambda: (r(3, 4),), ()),
        ("aten::diagonal_copy.default", aten.diagonal.default, lambda: (r(3, 4),), ()),
        ("aten::_reshape_alias.default", aten.view.default, lambda: (r(3, 4),), ([4, 3], [3, 1])),
        ("aten::unsafe_split.Tensor", aten.split.Tensor, lambda: (r(2, 5),), (2, 1)),
        ("aten::unsafe_chunk.default", aten.chunk.default, lambda: (r(2, 7),), (3, 1)),
        ("aten::numpy_T.default", aten.permute.default, lambda: (r(2, 3, 4),), ()),
        ("aten::mT.default", aten.transpose.int, lambda: (r(2, 3, 4),), ()),
        ("aten::mH.default", aten.transpose.int, lambda: (r(2, 3, 4),), ()),
        ("aten::relu6.default", aten.hardtanh.default, lambda: (r(3, 4) * 8,), ()),
]:
    alias_row(_key, _via, _inputs, _args)

for _key, _via, _fn, _inputs in [
        ("aten::where.ScalarOther", aten.where.self, lambda c, a: aten.where.ScalarOther(c, a, -1.5), lambda: (rb(3, 4), r(3, 4))),
        ("aten::where.ScalarSelf", aten.where.self, lambda c, b: aten.where.ScalarSelf(c, 2.0, b), lambda: (rb(3, 4), r(3, 4))),
        ("aten::where.Scalar", aten.where.self, lambda c: aten.where.Scalar(c, 1.0, 0.0), lambda: (rb(3, 4),)),
        ("aten::concat.default", aten.cat.default, lambda a, b: aten.concat.default([a, b], 1), lambda: (r(2, 3), r(2, 2))),
        ("aten::concatenate.default", aten.cat.default, lambda a, b: aten.concatenate.default([a, b], 0),
         lambda: (r(2, 3), r(1, 3))),
        ("aten::special_softmax.default", aten._softmax.default, lambda a: aten.special_softmax.default(a, 1),
         lambda: (r(3, 5),)),
        ("aten::special_log_softmax.default", aten._log_softmax.default, lambda a: aten.special_log_softmax.default(a, 1),
         lambda: (r(3, 5),)),
        ("aten::to.device", aten._to_copy.default, lambda a: aten.to.device(a, torch.device("cpu"), torch.float64),
         lambda: (r(3, 4),)),
        ("aten::_unsafe_index.Tensor", aten.index.Tensor, lambda a, i: aten._unsafe_index.Tensor(a, [i]),
         lambda: (r(4, 3), ri(4, 5))),
        ("aten::_unsafe_index_put.default", aten.index_put.default,
         lambda a, i, v: aten._unsafe_index_put.default(a, [i], v), lambda: (r(5, 3), torch.randperm(5)[:2], r(3))),
        ("aten::alias_copy.default", aten.alias.default, lambda a: aten.alias_copy.default(a) + 0, lambda: (r(3, 4),)),
]:
    case(_key, _fn, _inputs, edit=retarget(_via, _key))

case("aten::relu_.default", _in_place(lambda y: y.relu_()), lambda: (r(3, 4),))
case("aten::hardswish_.default", _in_place(lambda y: F.hardswish(y, inplace=True)), lambda: (r(3, 4) * 4,))
case("aten::silu_.default", _in_place(lambda y: F.silu(y, inplace=True)), lambda: (r(3, 4),))
case("aten::hardtanh_.default", _in_place(lambda y: F.hardtanh(y, inplace=True)), lambda: (r(3, 4) * 2,))
case("aten::sigmoid_.default", _in_place(lambda y: y.sigmoid_()), lambda: (r(3, 4),))
case("aten::clamp_.default", _in_place(lambda y: y.clamp_(-0.5, 0.5)), lambda: (r(3, 4),))
case("aten::dropout_.default", _in_place(lambda y: F.dropout(y, 0.3, training=False, inplace=True)), lambda: (r(3, 4),))
case("aten::feature_dropout.default", lambda a: torch.feature_dropout(a, 0.3, False), lambda: (r(2, 3, 4),))
case("aten::alpha_dropout.default", lambda a: torch.alpha_dropout(a, 0.3, False), lambda: (r(2, 3, 4),))
case("aten::feature_alpha_dropout.default", lambda a: torch.feature_alpha_dropout(a, 0.3, False), lambda: (r(2, 3, 4),))
case("aten::baddbmm.default", lambda s, a, b: aten.baddbmm.default(s, a, b, beta=0.5, alpha=2.0),
     lambda: (r(2, 3, 5), r(2, 3, 4), r(2, 4, 5)))
case("aten::baddbmm.default", lambda s, a, b: aten.baddbmm.default(s, a, b, beta=0.0),
     lambda: (torch.full((1, 3, 5), math.nan), r(2, 3, 4), r(2, 4, 5)), tag="beta0")
case("aten::addbmm.default", lambda s, a, b: aten.addbmm.default(s, a, b, alpha=0.5), lambda: (r(3, 5), r(2, 3, 4), r(2, 4, 5)))
case("aten::addmv.default", lambda s, m, v: aten.addmv.default(s, m, v, beta=2.0), lambda: (r(3), r(3, 4), r(4)))
case("aten::addr.default", lambda s, a, b: aten.addr.default(s, a, b), lambda: (r(3, 4), r(3), r(4)))
case("aten::dot.default", lambda a, b: aten.dot.default(a, b), lambda: (r(5), r(5)))
case("aten::vdot.default", lambda a, b: aten.vdot.default(a, b), lambda: (r(5), r(5)))
case("aten::mv.default", lambda m, v: aten.mv.default(m, v), lambda: (r(3, 4), r(4)))
case("aten::_weight_norm.default", lambda v, g: aten._weight_norm.default(v, g, 0), lambda: (r(4, 3, 2), r(4, 1, 1)))
case("aten::_weight_norm.default", lambda v, g: aten._weight_norm.default(v, g, 2), lambda: (r(4, 3, 2), r(1, 1, 2)),
     tag="last")
case("aten::flatten.using_ints", lambda a: a.flatten(1, 2), lambda: (r(2, 3, 4, 5),), tag="middle")
case("aten::flatten.using_ints", lambda x: x.flatten(0, 1), lambda: (r(4, 3, 5),), dynamic=_batch, tag="dynamic_middle")


def _grad_region(x, w):
    with torch.no_grad():
        y = torch.sin(x) * 2
    return torch.matmul(y, w)


case("higher_order::wrap_with_set_grad_enabled", _grad_region, lambda: (r(3, 4), r(4, 2)))

# --- recurrent layers (weights are inputs, so the rows test the overload on its own) ---
def _rnn_params(layers, dirs, input_size, hidden, gates, biases=True):
    params = []
    for layer in range(layers):
        for _ in range(dirs):
            width = input_size if layer == 0 else hidden * dirs
            params += [r(gates * hidden, width) * 0.5, r(gates * hidden, hidden) * 0.5]
            params += [r(gates * hidden) * 0.5, r(gates * hidden) * 0.5] if biases else []
    return params


def _lstm_case(tag, layers=1, bidirectional=False, batch_first=False, biases=True, zero_state=False, dynamic=None):
    seq, batch, input_size, hidden = 5, 3, 4, 3
    dirs = 2 if bidirectional else 1

    def inputs():
        x = r(batch, seq, input_size) if batch_first else r(seq, batch, input_size)
        states = () if zero_state else (r(layers * dirs, batch, hidden), r(layers * dirs, batch, hidden))
        return (x, *states, *_rnn_params(layers, dirs, input_size, hidden, 4, biases))

    def fn(x, *rest):
        if zero_state:  # what nn.LSTM does without hx: the batch size comes from x (dynamic)
            h0 = x.new_zeros(layers * dirs, x.shape[0 if batch_first else 1], hidden)
            hx, params = [h0, h0.clone()], list(rest)
        else:
            hx, params = list(rest[:2]), list(rest[2:])
        return aten.lstm.input(x, hx, params, biases, layers, 0.0, False, bidirectional, batch_first)
    case("aten::lstm.input", fn, inputs, tag=tag, dynamic=dynamic)


_lstm_case("1layer")
_lstm_case("2layers", layers=2)
_lstm_case("bidirectional", bidirectional=True)
_lstm_case("2layers_bidirectional_no_bias", layers=2, bidirectional=True, biases=False)
_lstm_case("batch_first", batch_first=True)
_lstm_case("dynamic_batch", zero_state=True, dynamic={"x": {1: torch.export.Dim("batch", min=2, max=64)}})
_lstm_case("dynamic_batch_first_2layers", layers=2, batch_first=True, zero_state=True,
           dynamic={"x": {0: torch.export.Dim("batch", min=2, max=64)}})


def _gru_rnn_case(key, op, tag, layers=1, bidirectional=False, batch_first=False, biases=True, zero_state=False,
                  dynamic=None):
    seq, batch, input_size, hidden = 4, 3, 5, 4
    dirs = 2 if bidirectional else 1
    gates = 3 if "gru" in key else 1

    def inputs():
        x = r(batch, seq, input_size) if batch_first else r(seq, batch, input_size)
        state = () if zero_state else (r(layers * dirs, batch, hidden),)
        return (x, *state, *_rnn_params(layers, dirs, input_size, hidden, gates, biases))

    def fn(x, *rest):
        if zero_state:
            hx, params = x.new_zeros(layers * dirs, x.shape[0 if batch_first else 1], hidden), list(rest)
        else:
            hx, params = rest[0], list(rest[1:])
        return op(x, hx, params, biases, layers, 0.0, False, bidirectional, batch_first)
    case(key, fn, inputs, tag=tag, dynamic=dynamic)


_gru_rnn_case("aten::gru.input", aten.gru.input, "1layer")
_gru_rnn_case("aten::gru.input", aten.gru.input, "2layers_bidirectional", layers=2, bidirectional=True)
_gru_rnn_case("aten::gru.input", aten.gru.input, "batch_first_no_bias", batch_first=True, biases=False)
_gru_rnn_case("aten::gru.input", aten.gru.input, "dynamic_batch", zero_state=True,
              dynamic={"x": {1: torch.export.Dim("batch", min=2, max=64)}})
_gru_rnn_case("aten::rnn_tanh.input", aten.rnn_tanh.input, "2layers", layers=2)
_gru_rnn_case("aten::rnn_tanh.input", aten.rnn_tanh.input, "bidirectional_batch_first", bidirectional=True,
              batch_first=True)
_gru_rnn_case("aten::rnn_relu.input", aten.rnn_relu.input, "bidirectional", bidirectional=True)

# --- symbolic scalar arithmetic and guards ---
case("_operator::add", lambda x: x.new_ones(-x.shape[0] + 2 * x.shape[0] + 1), lambda: (r(4, 3),), dynamic=_batch)
case("_operator::sub", lambda x: x.new_ones(x.shape[0] - 1), lambda: (r(4, 3),),
     dynamic={"x": {0: torch.export.Dim("batch", min=3, max=64)}})
case("_operator::mul", lambda x: x.new_ones(2 * x.shape[0]), lambda: (r(4, 3),), dynamic=_batch)
case("_operator::neg", lambda x: x.new_ones(-x.shape[0] + 2 * x.shape[0] + 1), lambda: (r(4, 3),), dynamic=_batch)
case("_operator::pow", lambda x: x.new_ones(x.shape[0] ** 2), lambda: (r(4, 3),), dynamic=_batch)
case("_operator::truediv", lambda x: x * (x.shape[0] / 2), lambda: (r(5, 3),), dynamic=_batch)
case("torch::sym_max", lambda x: x.new_ones(torch.sym_max(x.shape[0], 5)), lambda: (r(4, 3),), dynamic=_batch)
case("torch::sym_min", lambda x: x.new_ones(torch.sym_min(x.shape[0], 3)), lambda: (r(4, 3),), dynamic=_batch)
case("torch::sym_float", lambda x: x * torch.sym_float(x.shape[0]), lambda: (r(4, 3),), dynamic=_batch)
case("math::trunc", lambda x: x.new_ones(torch.sym_int(x.shape[0] / 2) + 1), lambda: (r(5, 3),), dynamic=_batch)
case("torch::sym_ite", lambda x: x * torch.sym_ite(x.shape[0] > 3, 2, 1), lambda: (r(5, 3),), dynamic=_batch)
case("_operator::gt", lambda x: x * torch.sym_ite(x.shape[0] > 3, 2, 1), lambda: (r(5, 3),), dynamic=_batch)


def _item_with_checks(x):
    n = x.sum().long().item()
    torch._check_is_size(n)
    torch._check(n < 30)
    return x.new_ones(n)


for key in ["aten::item.default", "aten::_assert_scalar.default", "aten::_assert_tensor_metadata.default",
            "_operator::ge", "_operator::le", "_operator::lt"]:
    case(key, _item_with_checks, lambda: (torch.ones(2, 3),))


# More rows (torch_lib registry coverage); as __main__ this module must be the one they append to.
sys.modules.setdefault("aten_cases", sys.modules[__name__])
# In this order (rows are numbered as they are appended), not sorted.
import aten_cases_more  # noqa: E402,F401,I001
import aten_cases_longtail  # noqa: E402,F401
import aten_cases_complex  # noqa: E402,F401

# New rows go after every table above: each row's inputs are seeded by its index, so a row inserted earlier
# would change the inputs of all the rows after it.
# a view over a dynamic batch (FocalNet's decomposed program): the indices are computed in the graph
case("aten::as_strided.default", lambda x: aten.as_strided.default(x, [x.shape[0], 2, 3], [12, 1, 4], 1),
     lambda: (r(4, 12),), dynamic=_batch, tag="dynamic_batch")
# no true position and an empty source (HiggsAudio-v2's audio features when a batch has no audio tokens)
case("aten::masked_scatter.default", lambda a, m, s: aten.masked_scatter.default(a, m, s),
     lambda: (r(3, 4), torch.zeros(3, 4, dtype=torch.bool), r(0)), tag="empty_source")
# grouped-query heads below opset 23 (GLM-ASR's encoder): key / value heads repeated in the graph
case("aten::scaled_dot_product_attention.default",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
     lambda: (r(1, 4, 5, 8), r(1, 2, 5, 8), r(1, 2, 5, 8)), tag="gqa")
case("aten::scaled_dot_product_attention.default",
     lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, enable_gqa=True),
     lambda: (r(6, 3, 4), r(2, 5, 4), r(2, 5, 4), r(3, 5)), tag="gqa-3d-float-mask")
# torch's helpers of tensor truth checks, left in Gemma-3n's non-strict program
case("aten::_is_all_true.default", lambda m: aten._is_all_true.default(m), lambda: (rb(3, 4),))
case("aten::_is_all_true.default", lambda m: aten._is_all_true.default(m), lambda: (torch.ones(2, 3, dtype=torch.bool),),
     tag="all-true")
case("aten::_is_any_true.default", lambda m: aten._is_any_true.default(m), lambda: (rb(3, 4),))


def _grad_region_complex(x, t):
    with torch.no_grad():  # a complex table under no_grad, as LLaMA-4's rotary embedding computes it
        f = torch.polar(torch.ones_like(t), t)
    return torch.view_as_real(torch.view_as_complex(x) * f)


case("higher_order::wrap_with_set_grad_enabled", _grad_region_complex, lambda: (r(3, 4, 2), r(3, 4)), tag="complex")
# A number as self (vmap's batching rule for `x + 1` leaves `_to_copy(1, dtype=float32)`): a 0-d tensor.
case("aten::_to_copy.default", lambda a: a * 2 + aten._to_copy.default(3, dtype=torch.float32)
     + aten._to_copy.default(2.75, dtype=torch.int64), lambda: (r(3, 4),), tag="number")
# Data-dependent output sizes (masked_select, nonzero_static, unique_consecutive along a dim): their own table.
import aten_cases_data_dependent  # noqa: E402,F401,I001
# Fast-path ops a program may call directly (_native_multi_head_attention): their own table.
import aten_cases_fast_path  # noqa: E402,F401,I001
# aten::_int_mm, both dtype pairs and torchao's u8s8 pattern: their own table.
import aten_cases_int_mm  # noqa: E402,F401,I001
# Convolutions of an unbatched input: their own table.
import aten_cases_unbatched_conv  # noqa: E402,F401,I001
# What the ATen sweep found: symbolic split pieces, adaptive pooling, aa upsampling, circular pad, ...
import aten_cases_symbolic_sizes  # noqa: E402,F401,I001
# torch.fft over symbolic sizes, real half spectra, complex scalars: their own table.
import aten_cases_complex_symbolic  # noqa: E402,F401,I001


def core_overloads() -> list[str]:
    """Every aten overload tagged core in the installed torch."""
    out = set()
    for name in dir(aten):
        packet = getattr(aten, name, None)
        if not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            if torch.Tag.core in getattr(packet, overload).tags:
                out.add(f"aten::{name}.{overload}")
    return sorted(out)


def main(argv):
    if argv[1:] == ["--list"]:
        print(json.dumps({"torch": torch.__version__, "core": core_overloads(),
                          "tested": sorted({c.key for c in CASES})}))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
