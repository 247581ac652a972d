"""Rows of the ATen translation table (aten_cases.CASES) for the long tail: attention rows whose every key
is masked (torch gives 0, a plain Softmax NaN), cumprod, composite (CompositeImplicitAutograd) ops that
torch.export leaves in a program, MoE routing and grouped matmuls.

Imported at the end of aten_cases.py.
"""
import torch
from aten_cases import F, _batch, aten, case, r, rb, ri


def _left_padded_causal(batch, q, k, pad):
    """[batch, 1, q, k] bool: causal, with the first pad[b] keys of row b hidden (left padding), so the
    first pad[b] query rows of b see no key at all."""
    causal = torch.ones(q, k, dtype=torch.bool).tril(k - q)
    keys = torch.arange(k)[None, :] >= torch.tensor(pad)[:, None]
    return (causal[None] & keys[:, None, :])[:, None]


def _float_mask(mask):
    return torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))


# --- attention with fully masked query rows (left padding under a causal mask) ---
_sdpa_mask = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)
_padded = lambda: (r(2, 2, 4, 8), r(2, 2, 4, 8), r(2, 2, 4, 8), _left_padded_causal(2, 4, 4, [2, 0]))
_padded_float = lambda: (r(2, 2, 4, 8), r(2, 2, 4, 8), r(2, 2, 4, 8), _float_mask(_left_padded_causal(2, 4, 4, [3, 1])))
case("aten::scaled_dot_product_attention.default", _sdpa_mask, _padded, tag="fully-masked-rows")
case("aten::scaled_dot_product_attention.default", _sdpa_mask, _padded_float, tag="fully-masked-rows-float")
case("aten::scaled_dot_product_attention.default", _sdpa_mask, _padded, opset=23, onnx_ops=("Attention",),
     tag="opset23-fully-masked-rows")
case("aten::scaled_dot_product_attention.default", _sdpa_mask, _padded_float, opset=23, onnx_ops=("Attention",),
     tag="opset23-fully-masked-rows-float")
case("aten::_scaled_dot_product_flash_attention_for_cpu.default",
     lambda q, k, v, m: aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, attn_mask=m),
     _padded_float, tag="fully-masked-rows")

# --- cumulative products: zeros and negative values keep torch's exact signs ---
_signed_with_zeros = lambda: (torch.tensor([[1.5, -2.0, 0.0, 3.0, -1.0], [-0.5, -0.5, 2.0, -0.0, 4.0],
                                            [2.0, 0.5, -3.0, 0.25, -2.0]]),)
case("aten::cumprod.default", lambda x: aten.cumprod.default(x, 1), _signed_with_zeros)
case("aten::cumprod.default", lambda x: aten.cumprod.default(x, 0), lambda: (r(4, 3, 2),), tag="dim0")
case("aten::cumprod.default", lambda x: aten.cumprod.default(x, -2), lambda: (ri(5, 2, 6, 3, lo=-4),), tag="int64")
case("aten::cumprod.default", lambda x: aten.cumprod.default(x, 1, dtype=torch.float64), _signed_with_zeros,
     tag="dtype")
case("aten::cumprod.default", lambda x: aten.cumprod.default(x, 0), lambda: (r(5, 3),), dynamic=_batch, tag="dynamic")

# --- composite (CompositeImplicitAutograd) ops torch.export keeps in a program ---
case("aten::reshape_as.default", lambda x, y: x.reshape_as(y), lambda: (r(2, 6), r(3, 4)))
case("aten::meshgrid.indexing", lambda x, y, z: torch.meshgrid(x, y, z, indexing="ij"), lambda: (r(3), r(4), r(2)))
case("aten::meshgrid.indexing", lambda x, y, z: torch.meshgrid(x, y, z, indexing="xy"), lambda: (r(3), r(4), r(2)),
     tag="xy")
case("aten::meshgrid.default", lambda x, y: aten.meshgrid.default([x, y]), lambda: (r(3), r(4)))
case("aten::nonzero_numpy.default", lambda x: torch.nonzero(x > 0, as_tuple=True), lambda: (r(3, 4),))
case("aten::where.default", lambda x: torch.where(x > 0), lambda: (r(2, 3, 4),))
case("aten::empty_permuted.default", lambda x: aten.empty_permuted.default([2, 3, 4], [2, 0, 1]) + x.sum() * 0,
     lambda: (r(2),), check="shape")
case("aten::diff.default", lambda x: torch.diff(x), lambda: (r(3, 5),))
case("aten::diff.default", lambda x, p, a: torch.diff(x, n=2, dim=0, prepend=p, append=a),
     lambda: (r(4, 3), r(1, 3), r(2, 3)), tag="n2-prepend-append")
case("aten::diff.default", lambda x: torch.diff(x, dim=0), lambda: (rb(5, 2),), tag="bool")
case("aten::diff.default", lambda x: torch.diff(x), lambda: (ri(9, 2, 6),), tag="int64")
case("aten::broadcast_tensors.default", lambda x, y, z: torch.broadcast_tensors(x, y, z), lambda: (r(3, 1), r(4), r(2, 1, 1)))
case("aten::outer.default", lambda x, y: torch.outer(x, y), lambda: (r(3), r(4)))
case("aten::ger.default", lambda x, y: aten.ger.default(x, y), lambda: (r(3), ri(5, 4)))
case("aten::square.default", lambda x: torch.square(x), lambda: (r(3, 4),))
case("aten::square.default", lambda x: torch.square(x), lambda: (ri(9, 3, 4, lo=-9),), tag="int64")
case("aten::fliplr.default", lambda x: torch.fliplr(x), lambda: (r(3, 4, 2),))
case("aten::flipud.default", lambda x: torch.flipud(x), lambda: (r(3, 4),))
case("aten::hstack.default", lambda x, y: torch.hstack([x, y]), lambda: (r(3), r(2)))
case("aten::hstack.default", lambda x, y: torch.hstack([x, y]), lambda: (r(3, 1), r(3, 2)), tag="2d")
case("aten::vstack.default", lambda x, y: torch.vstack([x, y]), lambda: (r(3), r(2, 3)))
case("aten::row_stack.default", lambda x, y: aten.row_stack.default([x, y]), lambda: (r(3), r(3)))
case("aten::dstack.default", lambda x, y: torch.dstack([x, y]), lambda: (r(2, 3), r(2, 3, 2)))
case("aten::column_stack.default", lambda x, y: torch.column_stack([x, y]), lambda: (r(3), r(3, 2)))
case("aten::float_power.Tensor_Scalar", lambda x: torch.float_power(x, 2), lambda: (r(3, 4),))
case("aten::float_power.Tensor_Tensor", lambda x, y: torch.float_power(x, y), lambda: (r(3, 4, lo=0.5, hi=2), r(4)))
case("aten::float_power.Scalar", lambda y: torch.float_power(2, y), lambda: (ri(5, 3, 4),))
case("aten::take_along_dim.default", lambda x, i: torch.take_along_dim(x, i, dim=1), lambda: (r(3, 5), ri(5, 3, 2)))
case("aten::take_along_dim.default", lambda x, i: torch.take_along_dim(x, i, dim=1), lambda: (r(3, 5), ri(5, 1, 2)),
     tag="broadcast")
case("aten::take_along_dim.default", lambda x, i: torch.take_along_dim(x, i), lambda: (r(3, 5), ri(15, 4)), tag="flat")
case("aten::special_expit.default", lambda x: aten.special_expit.default(x), lambda: (r(3, 4),))
case("aten::special_logsumexp.default", lambda x: aten.special_logsumexp.default(x, [1]), lambda: (r(3, 4),))
case("aten::special_xlogy.default", lambda x, y: aten.special_xlogy.default(x, y), lambda: (r(3, 4, lo=0, hi=2), r(3, 4, lo=0.1, hi=2)))
case("aten::conv_transpose2d.input", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
     lambda: (r(1, 2, 5, 5), r(2, 3, 3, 3), r(3)))
case("aten::conv_transpose1d.default", lambda x, w: F.conv_transpose1d(x, w, stride=2, groups=2), lambda: (r(1, 4, 6), r(4, 1, 3)))
case("aten::conv_transpose3d.input", lambda x, w: F.conv_transpose3d(x, w, dilation=2), lambda: (r(1, 2, 3, 4, 3), r(2, 2, 2, 2, 2)))
case("aten::var.default", lambda x: aten.var.default(x), lambda: (r(3, 4),))
case("aten::std.default", lambda x: aten.std.default(x, False), lambda: (r(3, 4),))
case("aten::var_mean.dim", lambda x: torch.var_mean(x, 1), lambda: (r(3, 4),))
case("aten::var_mean.correction", lambda x: aten.var_mean.correction(x, [0, 2], correction=0, keepdim=True), lambda: (r(3, 4, 2),))
case("aten::std_mean.dim", lambda x: torch.std_mean(x, [0], keepdim=True), lambda: (r(3, 4),))
case("aten::std_mean.default", lambda x: aten.std_mean.default(x), lambda: (r(3, 4),))
case("aten::cosine_similarity.default", lambda x, y: F.cosine_similarity(x, y), lambda: (r(3, 4, 2), r(3, 4, 2)))
case("aten::cosine_similarity.default", lambda x, y: F.cosine_similarity(x, y, dim=-1), lambda: (r(3, 1, 4), r(5, 4)),
     tag="broadcast")
case("aten::pairwise_distance.default", lambda x, y: F.pairwise_distance(x, y), lambda: (r(3, 4), r(3, 4)))
case("aten::pairwise_distance.default", lambda x, y: F.pairwise_distance(x, y, p=1.5, keepdim=True), lambda: (r(3, 4), r(4)),
     tag="p1.5")
case("aten::one_hot.default", lambda x: F.one_hot(x, 6), lambda: (ri(6, 2, 3),))
case("aten::l1_loss.default", lambda x, y: F.l1_loss(x, y), lambda: (r(3, 4), r(3, 4)))
case("aten::l1_loss.default", lambda x, y: F.l1_loss(x, y, reduction="none"), lambda: (r(3, 4), r(3, 4)), tag="none")
case("aten::nanmean.default", lambda x: torch.nanmean(torch.where(x > 1, float("nan"), x), 1), lambda: (r(3, 6),))
case("aten::upsample_nearest2d.default", lambda x: aten.upsample_nearest2d.default(x, [6, 9]), lambda: (r(1, 2, 3, 4),))
case("aten::movedim.intlist", lambda x: torch.movedim(x, [0, 2], [3, 0]), lambda: (r(2, 3, 4, 5),))
case("aten::movedim.int", lambda x: torch.movedim(x, -1, 0), lambda: (r(2, 3, 4),))
case("aten::moveaxis.int", lambda x: torch.moveaxis(x, 0, 1), lambda: (r(2, 3, 4),))
case("aten::swapaxes.default", lambda x: x.swapaxes(0, -1), lambda: (r(2, 3, 4),))
case("aten::ravel.default", lambda x: torch.ravel(x.transpose(0, 1)), lambda: (r(2, 3),))
case("aten::argwhere.default", lambda x: torch.argwhere(x > 0), lambda: (r(3, 4),))
case("aten::rrelu.default", lambda x: F.rrelu(x, 0.1, 0.3), lambda: (r(3, 4),))
case("aten::_cast_Long.default", lambda x: aten._cast_Long.default(x), lambda: (r(3, 4) * 5,))
case("aten::frobenius_norm.dim", lambda x: aten.frobenius_norm.dim(x, [0, 2]), lambda: (r(3, 4, 2),))
case("aten::split.sizes", lambda x: aten.split.sizes(x, [1, 3], 1), lambda: (r(2, 4),))
case("aten::tensor_split.sections", lambda x: torch.tensor_split(x, 3, dim=1), lambda: (r(2, 7),))
case("aten::tensor_split.indices", lambda x: torch.tensor_split(x, [1, 4]), lambda: (r(6, 2),))
case("aten::hsplit.int", lambda x: torch.hsplit(x, 2), lambda: (r(3, 4),))
case("aten::vsplit.array", lambda x: torch.vsplit(x, [1, 2]), lambda: (r(4, 3),))
case("aten::dsplit.int", lambda x: torch.dsplit(x, 2), lambda: (r(2, 3, 4),))
case("aten::linalg_vecdot.default", lambda x, y: torch.linalg.vecdot(x, y), lambda: (r(3, 4), r(4)))
case("aten::inner.default", lambda x, y: torch.inner(x, y), lambda: (r(2, 3, 4), r(5, 4)))
case("aten::cdist.default", lambda x, y: torch.cdist(x, y), lambda: (r(3, 4), r(5, 4)))
case("aten::pdist.default", lambda x: F.pdist(x), lambda: (r(4, 3),))
case("aten::adaptive_avg_pool3d.default", lambda x: F.adaptive_avg_pool3d(x, 2), lambda: (r(1, 2, 4, 4, 4),))
case("aten::divide.Scalar_mode", lambda x: aten.divide.Scalar_mode(x, 3, rounding_mode="floor"), lambda: (r(3, 4) * 9,))
case("aten::linalg_matmul.default", lambda x, y: torch.linalg.matmul(x, y), lambda: (r(2, 3, 4), r(4, 5)))
case("aten::positive.default", lambda x: torch.positive(x) * 2, lambda: (r(3, 4),))

# --- mixture of experts: index_add (torch._grouped_mm has its rows in aten_cases_more.py) ---
case("aten::index_add.default", lambda x, i, s: x.index_add(0, i, s), lambda: (r(5, 3), torch.tensor([0, 2, 0, 4]), r(4, 3)))
case("aten::index_add.default", lambda x, i, s: x.index_add(1, i, s, alpha=2), lambda: (r(2, 5, 3), torch.tensor([4, 4, 1]), r(2, 3, 3)),
     tag="dim1-alpha")
