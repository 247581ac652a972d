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

# --- composite ops, second batch: shapes, casts and aliases ---
case("aten::_cast_Byte.default", lambda x: aten._cast_Byte.default(x), lambda: (r(3, 4, lo=0, hi=9),))
case("aten::_cast_Char.default", lambda x: aten._cast_Char.default(x), lambda: (r(3, 4, lo=-9, hi=9),))
case("aten::_cast_Double.default", lambda x: aten._cast_Double.default(x), lambda: (r(3, 4),))
case("aten::_cast_Float.default", lambda x: aten._cast_Float.default(x), lambda: (ri(9, 3, 4),))
case("aten::_cast_Half.default", lambda x: aten._cast_Half.default(x), lambda: (r(3, 4),), tol=1e-3)
case("aten::_cast_Int.default", lambda x: aten._cast_Int.default(x), lambda: (r(3, 4) * 5,))
case("aten::_cast_Short.default", lambda x: aten._cast_Short.default(x), lambda: (r(3, 4) * 5,))
case("aten::data.default", lambda x: aten.data.default(x) * 2, lambda: (r(3, 4),))
case("aten::divide.Tensor_mode", lambda x, y: torch.divide(x, y, rounding_mode="trunc"), lambda: (r(3, 4) * 5, r(3, 4, lo=0.5, hi=2)))
case("aten::dsplit.array", lambda x: torch.dsplit(x, [1, 3]), lambda: (r(2, 3, 4),))
case("aten::hsplit.array", lambda x: torch.hsplit(x, [1]), lambda: (r(3, 4),))
case("aten::vsplit.int", lambda x: torch.vsplit(x, 2), lambda: (r(4, 3),))
case("aten::moveaxis.intlist", lambda x: torch.moveaxis(x, [0, 1], [2, 0]), lambda: (r(2, 3, 4),))
case("aten::to.other", lambda x, y: aten.to.other(x, y), lambda: (r(3, 4) * 5, ri(3, 2)))
case("aten::var_mean.default", lambda x: aten.var_mean.default(x, False), lambda: (r(3, 4),))
case("aten::special_exp2.default", lambda x: torch.special.exp2(x), lambda: (r(3, 4),))
case("aten::special_log1p.default", lambda x: torch.special.log1p(x), lambda: (r(3, 4, lo=-0.5, hi=3),))
case("aten::special_logit.default", lambda x: torch.special.logit(x, 1e-3), lambda: (r(3, 4, lo=0, hi=1),))
case("aten::special_round.default", lambda x: torch.special.round(x, decimals=1), lambda: (r(3, 4) * 5,))
case("aten::special_xlogy.other_scalar", lambda x: torch.special.xlogy(x, 3.0), lambda: (r(3, 4),))
case("aten::special_xlogy.self_scalar", lambda y: torch.special.xlogy(2.0, y), lambda: (r(3, 4, lo=0.1, hi=3),))
case("aten::adjoint.default", lambda x: x.adjoint() * 2, lambda: (r(2, 3, 4),))
case("aten::matrix_H.default", lambda x: aten.matrix_H.default(x) * 2, lambda: (r(3, 4),))
case("aten::isreal.default", lambda x: torch.isreal(x), lambda: (r(3, 4),))
case("aten::msort.default", lambda x: torch.msort(x), lambda: (r(5, 3),))
case("aten::diag.default", lambda x: torch.diag(x, 1), lambda: (r(3),))
case("aten::diag.default", lambda x: torch.diag(x, -2), lambda: (ri(9, 3),), tag="below-int")
case("aten::diag.default", lambda x: torch.diag(x, 1), lambda: (r(3, 4),), tag="2d")
case("aten::diagflat.default", lambda x: torch.diagflat(x, -1), lambda: (r(2, 2),))
case("aten::linalg_diagonal.default", lambda x: torch.linalg.diagonal(x, offset=-1, dim1=0, dim2=2), lambda: (r(4, 2, 3),))
case("aten::sum_to_size.default", lambda x: x.sum_to_size(3, 1), lambda: (r(2, 3, 4),))
case("aten::_dim_arange.default", lambda x: aten._dim_arange.default(x, 1), lambda: (r(3, 5),))
case("aten::repeat_interleave.self_Tensor", lambda x, n: torch.repeat_interleave(x, n, dim=0),
     lambda: (r(3, 2), torch.tensor([1, 0, 3])))
case("aten::repeat_interleave.self_Tensor", lambda x, n: torch.repeat_interleave(x, n), lambda: (r(2, 2), torch.tensor([2])),
     tag="flat")
case("aten::tensor_split.tensor_indices_or_sections", lambda x, i: torch.tensor_split(x, i, dim=1),
     lambda: (r(2, 7), torch.tensor([2, 5])))
case("aten::flatten_dense_tensors.default", lambda x, y: aten.flatten_dense_tensors.default([x, y]), lambda: (r(2, 3), r(4)))
case("aten::unflatten_dense_tensors.default", lambda f, x, y: aten.unflatten_dense_tensors.default(f, [x, y]),
     lambda: (r(10), r(2, 3), r(4)))
case("aten::pad_sequence.default", lambda a, b: torch.nn.utils.rnn.pad_sequence([a, b], padding_value=-1.0),
     lambda: (r(3, 2), r(5, 2)))
case("aten::pad_sequence.default", lambda a, b: torch.nn.utils.rnn.pad_sequence([a, b], batch_first=True, padding_side="left"),
     lambda: (r(4), r(2)), tag="left")
case("aten::_autocast_to_full_precision.default", lambda x: aten._autocast_to_full_precision.default(x, False, True) * 2,
     lambda: (r(3, 4, dtype=torch.float16),))
case("aten::_autocast_to_reduced_precision.default",
     lambda x: aten._autocast_to_reduced_precision.default(x, False, True, torch.half, torch.bfloat16).float(),
     lambda: (r(3, 4),), tol=1e-2)

# --- composite linear algebra ---
case("aten::kron.default", lambda x, y: torch.kron(x, y), lambda: (r(2, 3), r(3, 2, 2)))
case("aten::tensordot.default", lambda x, y: torch.tensordot(x, y, dims=([1, 0], [0, 2])), lambda: (r(3, 4, 2), r(4, 5, 3)))
case("aten::chain_matmul.default", lambda a, b, c: torch.chain_matmul(a, b, c), lambda: (r(2, 3), r(3, 4), r(4, 2)))
case("aten::linalg_multi_dot.default", lambda a, b, c: torch.linalg.multi_dot([a, b, c]), lambda: (r(3), r(3, 4), r(4)))
case("aten::matrix_power.default", lambda x: torch.matrix_power(x, 5), lambda: (r(2, 3, 3) * 0.5,))
case("aten::matrix_power.default", lambda x: torch.matrix_power(x, 0), lambda: (r(3, 3),), tag="zero")
case("aten::linalg_matrix_power.default", lambda x: torch.linalg.matrix_power(x, 2), lambda: (ri(5, 3, 3),),
     refrt_lacks="MatMul of int64")
_well_conditioned = lambda *b: r(*b, 3, 3) + 3 * torch.eye(3)
case("aten::matrix_power.default", lambda x: torch.matrix_power(x, -3), lambda: (_well_conditioned(2),), tag="negative")
case("aten::inverse.default", lambda x: torch.inverse(x), lambda: (_well_conditioned(2),))
case("aten::linalg_inv.default", lambda x: torch.linalg.inv(x), lambda: (r(4, 4),))
case("aten::linalg_solve.default", lambda a, b: torch.linalg.solve(a, b), lambda: (_well_conditioned(2), r(2, 3)))
case("aten::linalg_solve.default", lambda a, b: torch.linalg.solve(a, b, left=False), lambda: (_well_conditioned(2), r(4, 3)),
     tag="right")
case("aten::linalg_solve_ex.default", lambda a, b: tuple(torch.linalg.solve_ex(a, b)), lambda: (_well_conditioned(), r(3, 2)))
case("aten::linalg_tensorinv.default", lambda x: torch.linalg.tensorinv(x, ind=1), lambda: (r(6, 2, 3) + 0.5 * torch.eye(6).reshape(6, 2, 3),))
case("aten::linalg_tensorsolve.default", lambda a, b: torch.linalg.tensorsolve(a, b, dims=(0,)),
     lambda: (r(6, 2, 3) + 3 * torch.eye(6).reshape(6, 2, 3), r(2, 3)))
case("aten::linalg_cond.default", lambda x: torch.linalg.cond(x, 1), lambda: (_well_conditioned(2),))
case("aten::linalg_cond.p_str", lambda x: torch.linalg.cond(x, "fro"), lambda: (_well_conditioned(),))
case("aten::slogdet.default", lambda x: tuple(torch.slogdet(x)), lambda: (r(2, 3, 3),))
case("aten::linalg_slogdet.default", lambda x: tuple(torch.linalg.slogdet(x)), lambda: (r(4, 4),))
case("aten::linalg_matrix_norm.default", lambda x: torch.linalg.matrix_norm(x, 1), lambda: (r(2, 3, 4),))
case("aten::linalg_matrix_norm.default", lambda x: torch.linalg.matrix_norm(x, -float("inf"), dim=(0, 2), keepdim=True),
     lambda: (r(2, 3, 4),), tag="neg-inf-keepdim")
case("aten::linalg_matrix_norm.str_ord", lambda x: torch.linalg.matrix_norm(x), lambda: (r(2, 3, 4),))
case("aten::linalg_norm.default", lambda x: torch.linalg.norm(x), lambda: (r(2, 3, 4),))
case("aten::linalg_norm.default", lambda x: torch.linalg.norm(x, 3, dim=1), lambda: (r(2, 3, 4),), tag="p3-dim")
case("aten::linalg_norm.default", lambda x: torch.linalg.norm(x, float("inf")), lambda: (r(3, 4),), tag="matrix-inf")
case("aten::linalg_norm.ord_str", lambda x: torch.linalg.norm(x, "fro", dim=(1, 2)), lambda: (r(2, 3, 4),))
case("aten::vander.default", lambda x: torch.vander(x, 4), lambda: (r(3),))
case("aten::vander.default", lambda x: torch.vander(x, increasing=True), lambda: (ri(5, 4, lo=-4),), tag="int")
case("aten::linalg_vander.default", lambda x: torch.linalg.vander(x, N=3), lambda: (r(2, 4),))
case("aten::cartesian_prod.default", lambda x, y, z: torch.cartesian_prod(x, y, z), lambda: (r(2), r(3), r(2)))

# --- composite losses ---
_pm1 = lambda *s: ri(2, *s) * 2 - 1
case("aten::margin_ranking_loss.default", lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.3),
     lambda: (r(6), r(6), _pm1(6)))
case("aten::hinge_embedding_loss.default", lambda x, y: F.hinge_embedding_loss(x, y, reduction="sum"),
     lambda: (r(3, 4), _pm1(3, 4)))
case("aten::kl_div.default", lambda x, y: F.kl_div(x, y, reduction="batchmean"),
     lambda: (torch.log_softmax(r(3, 4), 1), torch.softmax(r(3, 4), 1) * (r(3, 4) > 0)))
case("aten::kl_div.default", lambda x, y: F.kl_div(x, y, reduction="none", log_target=True),
     lambda: (torch.log_softmax(r(3, 4), 1), torch.log_softmax(r(3, 4), 1)), tag="log-target")
case("aten::poisson_nll_loss.default", lambda x, y: F.poisson_nll_loss(x, y), lambda: (r(3, 4), r(3, 4, lo=0, hi=3)))
case("aten::poisson_nll_loss.default", lambda x, y: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction="none"),
     lambda: (r(3, 4, lo=0.1, hi=3), r(3, 4, lo=0, hi=3)), tag="full")
case("aten::cosine_embedding_loss.default", lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.2),
     lambda: (r(4, 5), r(4, 5), _pm1(4)))
case("aten::multilabel_margin_loss.default", lambda x, y: F.multilabel_margin_loss(x, y),
     lambda: (r(3, 5), torch.tensor([[3, 0, -1, 1, 1], [1, 2, 4, 0, 3], [-1, 2, 0, 0, 0]])))
# 1-D input with reduction="none": torch's meta function says [1], eager returns [] (so the row sums).
case("aten::multilabel_margin_loss.default", lambda x, y: F.multilabel_margin_loss(x, y, reduction="sum"),
     lambda: (r(4), torch.tensor([2, 1, -1, 0])), tag="1d-sum")
case("aten::multilabel_margin_loss.default", lambda x, y: F.multilabel_margin_loss(x, y, reduction="none"),
     lambda: (r(2, 4), torch.tensor([[2, 1, -1, 0], [3, 3, 0, -1]])), tag="none")
case("aten::triplet_margin_loss.default", lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
     lambda: (r(4, 5), r(4, 5), r(4, 5)))
case("aten::triplet_margin_loss.default", lambda a, p, n: F.triplet_margin_loss(a, p, n, p=1.0, reduction="none"),
     lambda: (r(4, 5), r(4, 5), r(4, 5)), tag="p1-none")
case("aten::nll_loss_nd.default", lambda x, t: F.nll_loss(x, t), lambda: (torch.log_softmax(r(2, 3, 4, 4), 1), ri(3, 2, 4, 4)))
case("aten::nll_loss2d.default", lambda x, t: aten.nll_loss2d.default(x, t, None, 2, 1),
     lambda: (torch.log_softmax(r(2, 3, 4, 4), 1), ri(3, 2, 4, 4)))

# --- composite numerics ---
case("aten::trapezoid.dx", lambda y: torch.trapezoid(y, dx=0.5), lambda: (r(3, 5),))
case("aten::trapezoid.x", lambda y, x: torch.trapezoid(y, x, dim=0), lambda: (r(5, 3), torch.cumsum(r(5, lo=0.1, hi=1), 0)))
case("aten::trapz.dx", lambda y: torch.trapz(y, dx=2.0), lambda: (ri(9, 3, 5),))
case("aten::trapz.x", lambda y, x: torch.trapz(y, x), lambda: (r(3, 5), r(3, 5)))
case("aten::cumulative_trapezoid.dx", lambda y: torch.cumulative_trapezoid(y, dx=0.5, dim=0), lambda: (r(5, 3),))
case("aten::cumulative_trapezoid.x", lambda y, x: torch.cumulative_trapezoid(y, x), lambda: (r(3, 5), r(5)))
case("aten::gradient.scalarint", lambda x: torch.gradient(x), lambda: (r(4, 5),))
case("aten::gradient.scalarint", lambda x: torch.gradient(x, spacing=0.5, dim=1, edge_order=2), lambda: (r(4, 5),),
     tag="edge2")
case("aten::gradient.array", lambda x: torch.gradient(x, dim=[0]), lambda: (ri(9, 4, 5),))
case("aten::gradient.scalararray", lambda x: aten.gradient.scalararray(x, spacing=2.0, dim=[0, 1]), lambda: (r(4, 5),))
case("aten::gradient.scalarrayint", lambda x: aten.gradient.scalarrayint(x, spacing=[0.5], dim=1), lambda: (r(4, 5),))
case("aten::gradient.scalarrayarray", lambda x: torch.gradient(x, spacing=[0.5, 2.0], dim=[1, 0]), lambda: (r(4, 5),))
case("aten::gradient.tensorarray", lambda x, c: torch.gradient(x, spacing=[c], dim=[1]),
     lambda: (r(4, 5), torch.cumsum(r(5, lo=0.2, hi=1), 0)))
case("aten::gradient.tensorarrayint", lambda x, c: aten.gradient.tensorarrayint(x, spacing=[c], dim=0),
     lambda: (r(4, 5), torch.cumsum(r(4, lo=0.2, hi=1), 0)))
case("aten::quantile.scalar", lambda x: torch.quantile(x, 0.3, dim=1, keepdim=True), lambda: (r(3, 5),))
case("aten::quantile.default", lambda x, q: torch.quantile(x, q), lambda: (r(3, 5), torch.tensor([0.1, 0.5, 1.0])))
case("aten::quantile.default", lambda x, q: torch.quantile(x, q, dim=0, interpolation="midpoint"),
     lambda: (torch.where(r(4, 3) > 1, float("nan"), r(4, 3)), torch.tensor([0.25, 0.8])), tag="nan-midpoint")
case("aten::nanquantile.scalar", lambda x: torch.nanquantile(x, 0.6, dim=0, interpolation="nearest"),
     lambda: (torch.tensor([[1.0, float("nan"), float("nan")], [3.0, 2.0, float("nan")], [0.5, 4.0, float("nan")]]),))
case("aten::nanquantile.default", lambda x, q: torch.nanquantile(x, q, dim=1, keepdim=True),
     lambda: (torch.where(r(3, 6) > 0.5, float("nan"), r(3, 6)), torch.tensor([0.2, 0.7])))
case("aten::fft_fftshift.default", lambda x: torch.fft.fftshift(x), lambda: (r(3, 4),))
case("aten::fft_ifftshift.default", lambda x: torch.fft.ifftshift(x, dim=(0,)), lambda: (r(5, 2),))
case("aten::special_ndtr.default", lambda x: torch.special.ndtr(x), lambda: (r(3, 4) * 3,))

# --- composite nn ---
case("aten::_pad_circular.default", lambda x: aten._pad_circular.default(x, [1, 2, 2, 0]), lambda: (r(1, 2, 3, 4),))
case("aten::_pad_enum.default", lambda x: aten._pad_enum.default(x, [1, 2], 3, 1.5), lambda: (r(1, 2, 4),))
case("aten::_pad_enum.default", lambda x: aten._pad_enum.default(x, [1, 2], 0), lambda: (r(1, 2, 4),), tag="reflect")
case("aten::_pad_enum.default", lambda x: aten._pad_enum.default(x, [2, 1, 1, 1], 1), lambda: (r(1, 2, 3, 4),), tag="replicate")
case("aten::_pad_enum.default", lambda x: aten._pad_enum.default(x, [1, 2], 2), lambda: (r(1, 2, 4),), tag="circular")
case("aten::_convolution.deprecated",
     lambda x, w, b: aten._convolution.deprecated(x, w, b, [1, 1], [1, 0], [1, 1], False, [0, 0], 1, False, False, True),
     lambda: (r(1, 2, 5, 5), r(3, 2, 3, 3), r(3)))
case("aten::_convolution_mode.default", lambda x, w: aten._convolution_mode.default(x, w, None, [1], "same", [2], 1),
     lambda: (r(1, 2, 7), r(3, 2, 3)))
case("aten::thnn_conv2d.default", lambda x, w, b: aten.thnn_conv2d.default(x, w, [3, 3], b, [2, 1], [1, 1]),
     lambda: (r(1, 2, 6, 5), r(3, 2, 3, 3), r(3)))
case("aten::slow_conv3d.default", lambda x, w: aten.slow_conv3d.default(x, w, [2, 2, 2]), lambda: (r(1, 2, 3, 4, 3), r(2, 2, 2, 2, 2)))
case("aten::_batch_norm_impl_index.default",
     lambda x, w, b, m, v: aten._batch_norm_impl_index.default(x, w, b, m, v, False, 0.1, 1e-5, False)[0],
     lambda: (r(2, 3, 4), r(3), r(3), r(3), r(3, lo=0.5, hi=2)))
case("aten::_batch_norm_impl_index.default",
     lambda x: aten._batch_norm_impl_index.default(x, None, None, None, None, True, 0.1, 1e-5, False)[:3],
     lambda: (r(2, 3, 4, 2),), tag="batch-stats")
case("aten::_fused_rms_norm.default", lambda x, w: aten._fused_rms_norm.default(x, [4], w, None), lambda: (r(2, 3, 4), r(4)))
case("aten::_scaled_dot_product_attention_math.default",
     lambda q, k, v: aten._scaled_dot_product_attention_math.default(q, k, v, is_causal=True),
     lambda: (r(1, 2, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4)))
case("aten::_scaled_dot_product_attention_math.default",
     lambda q, k, v, m: aten._scaled_dot_product_attention_math.default(q, k, v, m, scale=0.3),
     lambda: (r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4), r(3, 5)), tag="float-mask")
case("aten::_upsample_nearest_exact1d.vec", lambda x: F.interpolate(x, size=7, mode="nearest-exact"), lambda: (r(1, 2, 3),))
case("aten::_upsample_nearest_exact2d.vec", lambda x: F.interpolate(x, scale_factor=2, mode="nearest-exact"),
     lambda: (r(1, 2, 3, 4),))
case("aten::_upsample_nearest_exact3d.vec", lambda x: F.interpolate(x, size=(3, 2, 5), mode="nearest-exact"),
     lambda: (r(1, 1, 2, 4, 3),))
case("aten::adaptive_max_pool1d.default", lambda x: F.adaptive_max_pool1d(x, 3, return_indices=True), lambda: (r(2, 3, 7),))
case("aten::native_channel_shuffle.default", lambda x: aten.native_channel_shuffle.default(x, 2), lambda: (r(1, 6, 2, 2),))
case("aten::channel_shuffle.default", lambda x: F.channel_shuffle(x, 3), lambda: (r(2, 6, 3),))
case("aten::norm_except_dim.default", lambda v: aten.norm_except_dim.default(v, 2, 1), lambda: (r(3, 4, 2),))
case("aten::norm_except_dim.default", lambda v: aten.norm_except_dim.default(v, 3, -1), lambda: (r(3, 4),), tag="p3-all")
case("aten::lstm_cell.default", lambda x, h, c, a, b, p, q: aten.lstm_cell.default(x, [h, c], a, b, p, q),
     lambda: (r(2, 3), r(2, 4), r(2, 4), r(16, 3), r(16, 4), r(16), r(16)))
case("aten::gru_cell.default", lambda x, h, a, b, p, q: aten.gru_cell.default(x, h, a, b, p, q),
     lambda: (r(2, 3), r(2, 4), r(12, 3), r(12, 4), r(12), r(12)))
case("aten::rnn_tanh_cell.default", lambda x, h, a, b: aten.rnn_tanh_cell.default(x, h, a, b),
     lambda: (r(2, 3), r(2, 4), r(4, 3), r(4, 4)))
case("aten::rnn_relu_cell.default", lambda x, h, a, b, p, q: aten.rnn_relu_cell.default(x, h, a, b, p, q),
     lambda: (r(2, 3), r(2, 4), r(4, 3), r(4, 4), r(4), r(4)))

# --- special functions ONNX has no operator for (series / Newton's method against libm) ---
_i0_points = lambda: (torch.tensor([0.0, -0.5, 1.0, 3.0, -7.5, 12.0, 14.9, 15.5, 20.0, -40.0, 80.0]),)
case("aten::special_i0.default", lambda x: torch.special.i0(x), _i0_points)
case("aten::i0.default", lambda x: torch.i0(x), lambda: (r(3, 4) * 4,))
_erfinv_points = lambda: (torch.tensor([-1.0, -0.999, -0.9, -0.3, 0.0, 1e-4, 0.5, 0.95, 0.9999, 1.0, 1.5]),)
case("aten::special_erfinv.default", lambda x: torch.special.erfinv(x), _erfinv_points)
case("aten::erfinv.default", lambda x: torch.erfinv(x), lambda: (r(3, 4, lo=-0.99, hi=0.99),))
_gamma_points = lambda: (torch.tensor([0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 7.3, 30.0, 1e4, 0.0, -1.0, -0.5, -2.7, -7.2]),)
case("aten::special_gammaln.default", lambda x: torch.special.gammaln(x), _gamma_points)
case("aten::lgamma.default", lambda x: torch.lgamma(x), lambda: (r(3, 4, lo=-5, hi=10),))
case("aten::special_digamma.default", lambda x: torch.special.digamma(x), _gamma_points)
case("aten::special_psi.default", lambda x: torch.special.psi(x), lambda: (r(3, 4, lo=0.1, hi=10),))
case("aten::digamma.default", lambda x: torch.digamma(x), lambda: (r(3, 4, lo=-5, hi=10),))
case("aten::special_multigammaln.default", lambda x: torch.special.multigammaln(x, 3), lambda: (r(3, 4, lo=1.1, hi=6),))


# --- composite ops torch.export cannot trace (their meta functions read data: cov's weight checks,
# combinations' mask, _reshape_from_tensor's shape values): the row exports a stand-in op with the same
# output metadata, and the edit puts the real op in its place, so the .pt2 holds what a program with the
# op would hold. Eager runs the real op (the oracle).
def _swap_in(stand_in, op, make_args):
    def edit(ep):
        graph = ep.graph_module.graph
        node = next(n for n in graph.nodes if n.op == "call_function" and n.target == stand_in)
        inputs = [n for n in graph.nodes if n.op == "placeholder"]
        args = make_args(*inputs)
        args, kwargs = args if len(args) == 2 and isinstance(args[1], dict) else (args, {})
        with graph.inserting_before(node):
            new = graph.call_function(op, args, kwargs)
        new.meta.update(node.meta)
        node.replace_all_uses_with(new)
        for spec in ep.graph_signature.output_specs:  # a user output named after the stand-in
            if getattr(spec.arg, "name", None) == node.name:
                spec.arg = type(spec.arg)(name=new.name)
        graph.erase_node(node)
        graph.eliminate_dead_code()
        ep.graph_module.recompile()
    return edit


def _exported_as(stand_in, real):
    return lambda *a: stand_in(*a) if torch.compiler.is_exporting() else real(*a)


case("aten::cov.default", _exported_as(lambda x: x @ x.t(), torch.cov), lambda: (r(3, 5),),
     edit=_swap_in(aten.matmul.default, aten.cov.default, lambda x: (x,)))
case("aten::cov.default", _exported_as(lambda x, f, a: x @ x.t(), lambda x, f, a: torch.cov(x, correction=0, fweights=f, aweights=a)),
     lambda: (r(2, 4), torch.tensor([1, 2, 1, 3]), r(4, lo=0.5, hi=2)), tag="weights",
     edit=_swap_in(aten.matmul.default, aten.cov.default, lambda x, f, a: ((x,), {"correction": 0, "fweights": f, "aweights": a})))
case("aten::corrcoef.default", _exported_as(lambda x: x @ x.t(), torch.corrcoef), lambda: (r(3, 6),),
     edit=_swap_in(aten.matmul.default, aten.corrcoef.default, lambda x: (x,)))
case("aten::combinations.default", _exported_as(lambda x: x.new_zeros(10, 3), lambda x: torch.combinations(x, 3)),
     lambda: (r(5),), edit=_swap_in(aten.new_zeros.default, aten.combinations.default, lambda x: (x, 3)))
case("aten::combinations.default",
     _exported_as(lambda x: x.new_zeros(6, 2), lambda x: torch.combinations(x, with_replacement=True)),
     lambda: (ri(9, 3),), tag="replacement",
     edit=_swap_in(aten.new_zeros.default, aten.combinations.default, lambda x: ((x,), {"with_replacement": True})))
case("aten::_reshape_from_tensor.default", _exported_as(lambda x, s: x.reshape(2, 6), aten._reshape_from_tensor.default),
     lambda: (r(3, 4), torch.tensor([2, 6])),
     edit=_swap_in(aten.reshape.default, aten._reshape_from_tensor.default, lambda x, s: (x, s)))
case("aten::narrow.Tensor", _exported_as(lambda x, s: x[:, 2:4], lambda x, s: torch.narrow(x, 1, s, 2)),
     lambda: (r(3, 5), torch.tensor(-3)), edit=_swap_in(aten.slice.Tensor, aten.narrow.Tensor, lambda x, s: (x, 1, s, 2)))
case("aten::_shape_as_tensor.default", _exported_as(lambda x: x.new_zeros(3, dtype=torch.int64), aten._shape_as_tensor.default),
     lambda: (r(3, 4, 2),), edit=_swap_in(aten.new_zeros.default, aten._shape_as_tensor.default, lambda x: (x,)))
# pin_memory needs an accelerator in eager and in torch.export; on a CPU it is the identity (a copy).
case("aten::pin_memory.default", lambda x: x.clone() * 2, lambda: (r(3, 4),),
     edit=_swap_in(aten.clone.default, aten.pin_memory.default, lambda x: (x,)))
_flat_hist = lambda h: (h[0], *h[1])  # torch.return_types.histogramdd has no pytree serialization
case("aten::histogramdd.default", lambda x: _flat_hist(torch.histogramdd(x, [3, 2])), lambda: (r(10, 2),))
case("aten::histogramdd.default", lambda x, w: _flat_hist(torch.histogramdd(x, [2, 3, 2], range=[-1.0, 1.0, 0.0, 2.0, -2.0, 0.5],
                                                                              weight=w, density=True)),
     lambda: (r(4, 6, 3), r(4, 6, lo=0.5, hi=1)), tag="range-weight-density")
case("aten::histogramdd.int_bins", lambda x: _flat_hist(torch.histogramdd(x, 4)), lambda: (torch.tensor([[0.0], [1.0], [0.5], [1.0], [0.25]]),))
case("aten::histogramdd.TensorList_bins", lambda x, a, b: _flat_hist(torch.histogramdd(x, [a, b])),
     lambda: (r(12, 2), torch.tensor([-1.0, 0.0, 0.5, 2.0]), torch.tensor([-2.0, 0.0, 2.0])))

# --- singular values (a Jacobi SVD; LAPACK's gesdd in torch) ---
_rank2 = lambda: (r(4, 2) @ r(2, 3),)  # a 4 x 3 matrix of rank 2
case("aten::linalg_svdvals.default", lambda x: torch.linalg.svdvals(x), lambda: (r(2, 3, 5),))
case("aten::linalg_svdvals.default", lambda x: torch.linalg.svdvals(x), lambda: (r(4, 3),), tag="tall")
case("aten::nuclear_norm.default", lambda x: torch.nuclear_norm(x, keepdim=True), lambda: (r(3, 4),))
case("aten::nuclear_norm.dim", lambda x: torch.nuclear_norm(x, dim=(0, 2)), lambda: (r(3, 2, 4),))
case("aten::linalg_matrix_rank.atol_rtol_float", lambda x: aten.linalg_matrix_rank.atol_rtol_float(x), _rank2)
case("aten::linalg_matrix_rank.atol_rtol_float", lambda x: aten.linalg_matrix_rank.atol_rtol_float(x, atol=0.5, hermitian=True),
     lambda: (r(2, 3, 3),), tag="hermitian-atol")
case("aten::linalg_matrix_rank.atol_rtol_tensor", lambda x, a: aten.linalg_matrix_rank.atol_rtol_tensor(x, atol=a),
     lambda: (r(2, 3, 4), torch.tensor([0.5, 2.0])))
case("aten::linalg_matrix_rank.default", lambda x: aten.linalg_matrix_rank.default(x, 1e-3), _rank2)
case("aten::linalg_matrix_rank.tol_tensor", lambda x, t: aten.linalg_matrix_rank.tol_tensor(x, t), lambda: (r(3, 3), torch.tensor(0.7)))
case("aten::linalg_pinv.atol_rtol_float", lambda x: aten.linalg_pinv.atol_rtol_float(x), lambda: (r(2, 4, 3),))
case("aten::linalg_pinv.atol_rtol_tensor", lambda x: torch.linalg.pinv(x), lambda: (r(3, 5),))
case("aten::linalg_pinv.atol_rtol_float", lambda x: aten.linalg_pinv.atol_rtol_float(x, rtol=1e-4), _rank2, tag="rank-deficient")
case("aten::linalg_pinv.atol_rtol_float", lambda x: aten.linalg_pinv.atol_rtol_float(x, hermitian=True), lambda: (_well_conditioned(),),
     tag="hermitian")
case("aten::linalg_pinv.default", lambda x: aten.linalg_pinv.default(x, 1e-5), lambda: (r(3, 5),))
case("aten::linalg_pinv.rcond_tensor", lambda x, c: aten.linalg_pinv.rcond_tensor(x, c), lambda: (r(4, 3), torch.tensor(1e-5)))
case("aten::pinverse.default", lambda x: torch.pinverse(x), lambda: (r(3, 4),))
case("aten::linalg_matrix_norm.default", lambda x: torch.linalg.matrix_norm(x, -2), lambda: (r(2, 3, 4),), tag="ord-minus2")
case("aten::linalg_matrix_norm.str_ord", lambda x: torch.linalg.matrix_norm(x, "nuc", keepdim=True), lambda: (r(2, 4, 3),),
     tag="nuc")
case("aten::linalg_norm.default", lambda x: torch.linalg.norm(x, 2), lambda: (r(3, 4),), tag="matrix-2")
case("aten::linalg_cond.default", lambda x: torch.linalg.cond(x), lambda: (_well_conditioned(2),), tag="2-norm")
case("aten::linalg_cond.p_str", lambda x: torch.linalg.cond(x, "nuc"), lambda: (_well_conditioned(),), tag="nuc")
case("aten::linalg_eigvalsh.default", lambda x: torch.linalg.eigvalsh(x), lambda: (r(2, 4, 4),))
case("aten::linalg_eigvalsh.default", lambda x: torch.linalg.eigvalsh(x, UPLO="U"), lambda: (r(3, 3),), tag="upper")
case("aten::matrix_exp.default", lambda x: torch.matrix_exp(x), lambda: (r(2, 3, 3) * torch.tensor([[[0.1]], [[3.0]]]),))
case("aten::qr.default", lambda x: tuple(torch.qr(x)), lambda: (r(2, 4, 3),))
case("aten::qr.default", lambda x: tuple(torch.qr(x, some=False)), lambda: (r(3, 5),), tag="complete-wide")
case("aten::orgqr.default", lambda a, tau: torch.orgqr(a, tau), lambda: torch.geqrf(r(5, 3)))

# --- Hermitian FFTs (complex results leave through view_as_real; torch's ihfft returns a conjugate view) ---
_vr, _vc = torch.view_as_real, torch.view_as_complex
case("aten::fft_ihfft.default", lambda x: _vr(torch.fft.ihfft(x).resolve_conj()), lambda: (r(3, 8),))
case("aten::fft_ihfft.default", lambda x: _vr(torch.fft.ihfft(x, n=7, dim=0, norm="ortho").resolve_conj()),
     lambda: (r(5, 3),), tag="n-ortho")
case("aten::fft_ihfft2.default", lambda x: _vr(torch.fft.ihfft2(x).resolve_conj()), lambda: (r(2, 4, 6),))
case("aten::fft_ihfftn.default", lambda x: _vr(torch.fft.ihfftn(x, s=[3, 5], norm="forward").resolve_conj()),
     lambda: (r(2, 4, 6),))
case("aten::fft_hfft.default", lambda x: torch.fft.hfft(_vc(x)), lambda: (r(3, 5, 2),))
case("aten::fft_hfft.default", lambda x: torch.fft.hfft(_vc(x), n=7, dim=0), lambda: (r(5, 3, 2),), tag="n-dim0")
case("aten::fft_hfft2.default", lambda x: torch.fft.hfft2(_vc(x)), lambda: (r(3, 4, 5, 2),))
case("aten::fft_hfftn.default", lambda x: torch.fft.hfftn(_vc(x), s=[4, 6], norm="ortho"), lambda: (r(3, 4, 2),))
case("aten::special_gammainc.default", lambda a, x: torch.special.gammainc(a, x), lambda: (r(4, 5, lo=0.05, hi=20), r(4, 5, lo=0, hi=30)))
case("aten::special_gammaincc.default", lambda a, x: torch.special.gammaincc(a, x),
     lambda: (r(4, 5, lo=0.05, hi=20), r(4, 5, lo=0, hi=30)))
case("aten::igamma.default", lambda a, x: torch.igamma(a, x), lambda: (torch.tensor([0.5, 1.0, 3.0, 10.0]), r(3, 4, lo=0, hi=12)))
case("aten::igammac.default", lambda a, x: torch.igammac(a, x), lambda: (torch.tensor([0.5, 1.0, 3.0, 10.0]), r(3, 4, lo=0, hi=12)))
case("aten::istft.default", lambda x, w: torch.istft(_vc(x), 8, hop_length=2, window=w), lambda: (r(5, 9, 2), torch.hann_window(8)))
case("aten::istft.default", lambda x: torch.istft(_vc(x), 8, win_length=6, normalized=True, length=14),
     lambda: (r(2, 5, 7, 2),), tag="batch-win-length")
case("aten::istft.default", lambda x: torch.istft(_vc(x), 8, hop_length=3, center=False, length=30), lambda: (r(5, 7, 2),),
     tag="longer-length")

# --- factorisations (LAPACK's unblocked algorithms, unrolled) ---
_spd = lambda *b: (lambda a: a @ a.transpose(-1, -2) + 0.5 * torch.eye(a.shape[-1]))(r(*b, 4, 4))
case("aten::linalg_cholesky.default", lambda x: torch.linalg.cholesky(x), lambda: (_spd(2),))
case("aten::linalg_cholesky.default", lambda x: torch.linalg.cholesky(x, upper=True), lambda: (_spd(),), tag="upper")
case("aten::linalg_lu_factor.default", lambda x: tuple(torch.linalg.lu_factor(x)), lambda: (r(2, 4, 4),))
case("aten::_lu_with_info.default", lambda x: aten._lu_with_info.default(x), lambda: (r(3, 3),))
case("aten::lu_solve.default", lambda b, lu, piv: torch.lu_solve(b, lu, piv),
     lambda: (r(2, 4, 2), *torch.linalg.lu_factor(r(2, 4, 4) + 4 * torch.eye(4))))

# --- signal helpers ---
def _swap_in_sobol(ep):
    """_sobol_engine_draw's fake kernel reads data: a stand-in of its first output's shape is replaced by
    getitem(_sobol_engine_draw(...), 0), whose second output has the metadata of the quasi input."""
    import operator
    graph = ep.graph_module.graph
    node = next(n for n in graph.nodes if n.op == "call_function" and n.target == aten.new_zeros.default)
    quasi, state = [n for n in graph.nodes if n.op == "placeholder"]
    with graph.inserting_before(node):
        draw = graph.call_function(aten._sobol_engine_draw.default, (quasi, 5, state, 3, 6, torch.float32))
        first = graph.call_function(operator.getitem, (draw, 0))
    draw.meta["val"] = (node.meta["val"], quasi.meta["val"])
    first.meta.update(node.meta)
    node.replace_all_uses_with(first)
    graph.erase_node(node)
    ep.graph_module.recompile()


_sobol = torch.quasirandom.SobolEngine(3)
case("aten::_sobol_engine_draw.default",
     _exported_as(lambda q, s: q.new_zeros(5, 3, dtype=torch.float32) * 2,
                  lambda q, s: aten._sobol_engine_draw.default(q, 5, s, 3, 6, torch.float32)[0] * 2),
     lambda: (_sobol.quasi.clone() + torch.tensor([5, 9, 12]) * 2**20, _sobol.sobolstate.clone()), edit=_swap_in_sobol)
case("aten::stft.center", lambda x, w: torch.view_as_real(aten.stft.center(x, 8, 2, window=w, center=True, pad_mode="reflect",
                                                                         return_complex=True)),
     lambda: (r(20), torch.hann_window(8)))
case("aten::stft.center", lambda x: aten.stft.center(x, 8, 3, center=True, pad_mode="constant", normalized=True,
                                                     return_complex=False), lambda: (r(2, 17),), tag="constant-real")


def _swap_in_tuple(stand_ins, op, make_args, vals=None):
    """Like _swap_in for an op of several outputs: the stand-in nodes (of `stand_ins` targets, in graph
    order) become getitem(op(...), i); `vals` gives the op's meta["val"] from theirs (default: theirs)."""
    def edit(ep):
        import operator
        graph = ep.graph_module.graph
        nodes = [n for n in graph.nodes if n.op == "call_function" and n.target in stand_ins]
        inputs = [n for n in graph.nodes if n.op == "placeholder"]
        with graph.inserting_before(nodes[0]):
            new = graph.call_function(op, make_args(*inputs))
        new.meta["val"] = vals(nodes, inputs) if vals else tuple(n.meta["val"] for n in nodes)
        for i, node in enumerate(nodes):
            with graph.inserting_before(node):
                item = graph.call_function(operator.getitem, (new, i))
            item.meta.update(node.meta)
            node.replace_all_uses_with(item)
            graph.erase_node(node)
        graph.eliminate_dead_code()
        ep.graph_module.recompile()
    return edit


_prune_mask = torch.tensor([True, False, True, True, False])
case("aten::_rowwise_prune.default",
     _exported_as(lambda w, m: (w.new_zeros(3, 2) * 2, m.new_zeros(5, dtype=torch.int32) + 1),
                  lambda w, m: (lambda p: (p[0] * 2, p[1] + 1))(aten._rowwise_prune.default(w, m, torch.int32))),
     lambda: (r(5, 2), _prune_mask.clone()),
     edit=_swap_in_tuple({aten.new_zeros.default}, aten._rowwise_prune.default, lambda w, m: (w, m, torch.int32)))
case("aten::_unpack_dual.default",
     _exported_as(lambda x: x.new_zeros(3) * 2, lambda x: aten._unpack_dual.default(x, 0)[0] * 2), lambda: (r(3),),
     edit=_swap_in_tuple({aten.new_zeros.default}, aten._unpack_dual.default, lambda x: (x, 0),
                         vals=lambda nodes, inputs: (inputs[0].meta["val"], None)))
