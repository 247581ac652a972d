"""More rows of the ATen translation table (aten_cases.CASES): the torch_lib registry coverage of issue 10.

Imported at the end of aten_cases.py. Rows whose op torch.export traces into others put the overload back
with `retarget(via, key)`, so each row tests the key itself.
"""
import math

import random_props as rp
import torch
from aten_cases import F, _batch, aten, case, r, rb, retarget, ri

# --- elementwise: activations, special functions, predicates ---
case("aten::celu.default", lambda x: aten.celu.default(x, 1.5), lambda: (r(3, 4) * 3,))
case("aten::selu.default", lambda x: aten.selu.default(x), lambda: (r(3, 4) * 3,))
case("aten::mish.default", lambda x: aten.mish.default(x), lambda: (r(3, 4) * 5,))
case("aten::log_sigmoid.default", lambda x: aten.log_sigmoid.default(x),
     lambda: (torch.cat([r(3, 4) * 5, torch.tensor([[-100.0, 100.0, 0.0, -30.0]])]),))
case("aten::logit.default", lambda x: aten.logit.default(x), lambda: (r(3, 4, lo=0.05, hi=0.95),))
case("aten::logit.default", lambda x: aten.logit.default(x, 0.1), lambda: (r(3, 4, lo=0.0, hi=1.0),), tag="eps")
_tails = lambda: (torch.cat([r(3, 4) * 2, torch.tensor([[-6.0, -3.5, 3.5, 6.0], [9.0, 0.0, -0.5, 0.5]])]),)
case("aten::erfc.default", lambda x: aten.erfc.default(x), _tails)
case("aten::special_erfc.default", lambda x: aten.special_erfc.default(x), _tails,
     edit=retarget(aten.erfc.default, "aten::special_erfc.default"))
case("aten::special_erfcx.default", lambda x: aten.special_erfcx.default(x),
     lambda: (torch.cat([r(3, 4) * 2, torch.tensor([[-3.0, 0.0, 12.0, 40.0]])]),))
case("aten::exp2.default", lambda x: aten.exp2.default(x), lambda: (r(3, 4) * 3,))
case("aten::exp2.default", lambda x: aten.exp2.default(x), lambda: (ri(6, 3, 4, lo=-3),), tag="int")
case("aten::frac.default", lambda x: aten.frac.default(x), lambda: (r(3, 4) * 5,))
case("aten::heaviside.default", lambda x, v: aten.heaviside.default(x, v),
     lambda: (torch.tensor([[-1.5, 0.0, 2.0], [0.0, 3.0, -0.1]]), r(3)))
case("aten::logaddexp.default", lambda a, b: aten.logaddexp.default(a, b),
     lambda: (torch.cat([r(3, 4) * 30, torch.tensor([[-math.inf, math.inf, 1.0, -math.inf]])]),
              torch.cat([r(3, 4) * 30, torch.tensor([[-math.inf, math.inf, 2.0, 0.0]])])))
case("aten::logaddexp2.default", lambda a, b: aten.logaddexp2.default(a, b), lambda: (r(3, 4) * 10, r(4) * 10))
_xy = lambda: (torch.tensor([[0.0, 1.5, 0.0, 2.0], [3.0, 0.0, -1.0, 0.5]]),
               torch.tensor([[0.0, 2.0, math.nan, 0.5], [1.0, 5.0, 2.0, 0.0]]))
case("aten::xlogy.Tensor", lambda a, b: aten.xlogy.Tensor(a, b), _xy)
case("aten::xlogy.Scalar_Self", lambda b: aten.xlogy.Scalar_Self(2.5, b), lambda: (r(3, 4, lo=0.1, hi=3),))
case("aten::xlogy.Scalar_Other", lambda a: aten.xlogy.Scalar_Other(a, 3.0), lambda: (r(3, 4),))
_special = lambda: (torch.tensor([1.0, math.nan, math.inf, -math.inf, -0.0, 0.0, -2.0]),)
case("aten::isfinite.default", lambda x: aten.isfinite.default(x), _special)
case("aten::isfinite.default", lambda x: aten.isfinite.default(x), lambda: (ri(5, 3),), tag="int")
case("aten::isposinf.default", lambda x: aten.isposinf.default(x), _special)
case("aten::isneginf.default", lambda x: aten.isneginf.default(x), _special)
case("aten::signbit.default", lambda x: aten.signbit.default(x), _special)
case("aten::signbit.default", lambda x: aten.signbit.default(x), lambda: (ri(5, 3, 4, lo=-5),), tag="int")
case("aten::round.decimals", lambda x: aten.round.decimals(x, decimals=2), lambda: (r(3, 4) * 10,))
case("aten::round.decimals", lambda x: aten.round.decimals(x, decimals=-1), lambda: (r(3, 4) * 100,), tag="negative")
case("aten::addcmul.default", lambda s, a, b: aten.addcmul.default(s, a, b, value=0.5), lambda: (r(3, 4), r(3, 4), r(4)))
case("aten::addcdiv.default", lambda s, a, b: aten.addcdiv.default(s, a, b, value=-2),
     lambda: (r(3, 4), r(3, 4), r(3, 4, lo=0.5, hi=2)))
case("aten::deg2rad.default", lambda x: aten.deg2rad.default(x), lambda: (r(3, 4) * 180,))
case("aten::rad2deg.default", lambda x: aten.rad2deg.default(x), lambda: (r(3, 4),))
case("aten::sinc.default", lambda x: aten.sinc.default(x), lambda: (torch.cat([r(3, 4) * 3, torch.zeros(1, 4)]),))
case("aten::special_sinc.default", lambda x: aten.special_sinc.default(x), lambda: (r(3, 4) * 3,),
     edit=retarget(aten.sinc.default, "aten::special_sinc.default"))
case("aten::floor_divide.default", lambda a, b: aten.floor_divide.default(a, b),
     lambda: (r(3, 4) * 10, torch.tensor([[1.5, -2.0, 0.3, -0.7]] * 3)))
case("aten::floor_divide.default", lambda a, b: aten.floor_divide.default(a, b),
     lambda: (ri(20, 3, 4, lo=-20), ri(5, 3, 4, lo=1) * (1 - 2 * ri(2, 3, 4))), tag="int")
case("aten::floor_divide.Scalar", lambda a: aten.floor_divide.Scalar(a, 3), lambda: (ri(20, 3, 4, lo=-20),))
case("aten::angle.default", lambda x: aten.angle.default(x), lambda: (torch.tensor([1.0, -2.0, 0.0, math.nan, -0.0]),))
for _key, _op in [("aten::conj.default", aten.conj.default),
                  ("aten::resolve_conj.default", aten.resolve_conj.default),
                  ("aten::resolve_neg.default", aten.resolve_neg.default)]:
    case(_key, lambda x, op=_op: op(x) * 2, lambda: (r(3, 4),), edit=retarget(aten.alias.default, _key))

# --- bitwise: shifts and Scalar-first overloads ---
_shift_in = lambda: (ri(1000, 3, 4, lo=-1000), ri(8, 3, 4))
case("aten::bitwise_left_shift.Tensor", lambda a, b: aten.bitwise_left_shift.Tensor(a, b), _shift_in)
case("aten::bitwise_right_shift.Tensor", lambda a, b: aten.bitwise_right_shift.Tensor(a, b), _shift_in)
case("aten::bitwise_left_shift.Tensor", lambda a, b: aten.bitwise_left_shift.Tensor(a, b),
     lambda: (ri(256, 3, 4).to(torch.uint8), ri(8, 3, 4).to(torch.uint8)), tag="uint8")
case("aten::bitwise_right_shift.Tensor", lambda a, b: aten.bitwise_right_shift.Tensor(a, b),
     lambda: (ri(100, 3, 4, lo=-100).to(torch.int32), ri(5, 4).to(torch.int32)), tag="int32")
case("aten::bitwise_left_shift.Tensor_Scalar", lambda a: aten.bitwise_left_shift.Tensor_Scalar(a, 3), lambda: (ri(50, 3, 4, lo=-50),))
case("aten::bitwise_right_shift.Tensor_Scalar", lambda a: aten.bitwise_right_shift.Tensor_Scalar(a, 2), lambda: (ri(50, 3, 4, lo=-50),))
case("aten::bitwise_left_shift.Scalar_Tensor", lambda b: aten.bitwise_left_shift.Scalar_Tensor(5, b), lambda: (ri(6, 3, 4),))
case("aten::bitwise_right_shift.Scalar_Tensor", lambda b: aten.bitwise_right_shift.Scalar_Tensor(-77, b), lambda: (ri(6, 3, 4),))
case("aten::__lshift__.Scalar", lambda a: aten.__lshift__.Scalar(a, 2), lambda: (ri(50, 3, 4, lo=-50),),
     edit=retarget(aten.bitwise_left_shift.Tensor_Scalar, "aten::__lshift__.Scalar"))
case("aten::__rshift__.Scalar", lambda a: aten.__rshift__.Scalar(a, 1), lambda: (ri(50, 3, 4, lo=-50),),
     edit=retarget(aten.bitwise_right_shift.Tensor_Scalar, "aten::__rshift__.Scalar"))
for _name in ["and", "or", "xor"]:
    _op = getattr(aten, f"bitwise_{_name}").Scalar_Tensor
    case(f"aten::bitwise_{_name}.Scalar_Tensor", lambda b, op=_op: op(6, b), lambda: (ri(16, 3, 4),))
case("aten::remainder.Scalar_Tensor", lambda b: aten.remainder.Scalar_Tensor(7.5, b), lambda: (r(3, 4, lo=0.5, hi=3) * (1 - 2 * rb(3, 4)),))
case("aten::isclose.default", lambda a, b: aten.isclose.default(a, b, 1e-2, 1e-3, True),
     lambda: (torch.tensor([1.0, 2.0, math.nan, math.inf, -math.inf, 1.0]),
              torch.tensor([1.005, 2.5, math.nan, math.inf, math.inf, 1.02])))
case("aten::isclose.default", lambda a, b: aten.isclose.default(a, b), lambda: (ri(5, 3, 4), ri(5, 3, 4)), tag="int")

# --- quantisation and gradients ---
case("aten::fake_quantize_per_tensor_affine.default",
     lambda x: aten.fake_quantize_per_tensor_affine.default(x, 0.1, 3, 0, 255), lambda: (r(3, 4) * 10,))
case("aten::fake_quantize_per_tensor_affine.tensor_qparams",
     lambda x, s, z: aten.fake_quantize_per_tensor_affine.tensor_qparams(x, s, z, -128, 127),
     lambda: (r(3, 4) * 5, torch.tensor([0.05]), torch.tensor([2], dtype=torch.int32)))
case("aten::fake_quantize_per_channel_affine.default",
     lambda x, s, z: aten.fake_quantize_per_channel_affine.default(x, s, z, 1, 0, 255),
     lambda: (r(2, 3, 4) * 5, torch.tensor([0.05, 0.1, 0.02]), torch.tensor([10, 128, 0], dtype=torch.int32)))
case("aten::hardtanh_backward.default", lambda g, x: aten.hardtanh_backward.default(g, x, -0.5, 1.0),
     lambda: (r(3, 4), r(3, 4) * 2))
case("aten::_prelu_kernel.default", lambda x, w: aten._prelu_kernel.default(x, w), lambda: (r(2, 3, 4), r(3, 1)))

# --- shape and data movement ---
for _n in (1, 2, 3):
    _op = getattr(aten, f"atleast_{_n}d")
    for _shape in [(), (4,), (2, 3), (2, 3, 4)]:
        case(f"aten::atleast_{_n}d.default", lambda x, op=_op: op.default(x) * 2, lambda s=_shape: (torch.randn(s),),
             edit=retarget(aten.view.default, f"aten::atleast_{_n}d.default") if len(_shape) < _n else None,
             tag=f"rank{len(_shape)}")
    case(f"aten::atleast_{_n}d.Sequence", lambda a, b, c, op=_op: [t * 2 for t in op.Sequence([a, b, c])],
         lambda: (r(()), r(4), r(2, 3)), edit=retarget(aten.view.default, f"aten::atleast_{_n}d.Sequence"))
case("aten::expand_as.default", lambda a, b: aten.expand_as.default(a, b), lambda: (r(3, 1), r(2, 3, 4)),
     edit=retarget(aten.expand.default, "aten::expand_as.default"))
case("aten::expand_as.default", lambda a, b: aten.expand_as.default(b, a), lambda: (r(4, 3), r(1, 3)), dynamic=_batch,
     edit=retarget(aten.expand.default, "aten::expand_as.default"), tag="dynamic")
case("aten::view_as.default", lambda a, b: aten.view_as.default(a, b), lambda: (r(4, 3), r(2, 6)),
     edit=retarget(aten.view.default, "aten::view_as.default"))
case("aten::narrow.default", lambda a: aten.narrow.default(a, 1, 1, 2), lambda: (r(3, 5),),
     edit=retarget(aten.slice.Tensor, "aten::narrow.default"))
case("aten::narrow.default", lambda a: aten.narrow.default(a, 0, -3, 2), lambda: (r(5, 2),),
     dynamic={"x": {0: torch.export.Dim("batch", min=3, max=64)}}, edit=retarget(aten.slice.Tensor, "aten::narrow.default"),
     tag="negative_start_dynamic")
case("aten::tile.default", lambda a: aten.tile.default(a, [2]), lambda: (r(2, 3),),
     edit=retarget(aten.repeat.default, "aten::tile.default"))
case("aten::tile.default", lambda a: aten.tile.default(a, [2, 1, 3]), lambda: (r(2, 3),),
     edit=retarget(aten.repeat.default, "aten::tile.default"), tag="more_dims")
case("aten::tril.default", lambda a: aten.tril.default(a), lambda: (r(2, 4, 5),))
case("aten::tril.default", lambda a: aten.tril.default(a, -1), lambda: (ri(9, 5, 3),), tag="below")
case("aten::triu.default", lambda a: aten.triu.default(a, 2), lambda: (r(4, 6),))
case("aten::pixel_shuffle.default", lambda a: aten.pixel_shuffle.default(a, 2), lambda: (r(2, 8, 3, 4),))
case("aten::pixel_shuffle.default", lambda a: aten.pixel_shuffle.default(a, 3), lambda: (r(3, 9, 2, 2),), dynamic=_batch,
     tag="dynamic")
case("aten::pixel_shuffle.default", lambda a: aten.pixel_shuffle.default(a, 2), lambda: (r(4, 2, 3),), tag="3d")
case("aten::pixel_unshuffle.default", lambda a: aten.pixel_unshuffle.default(a, 2), lambda: (r(2, 3, 4, 6),))
case("aten::pixel_unshuffle.default", lambda a: aten.pixel_unshuffle.default(a, 3), lambda: (r(2, 1, 2, 6, 3),),
     tag="5d")
case("aten::im2col.default", lambda a: aten.im2col.default(a, [2, 3], [1, 1], [0, 0], [1, 1]), lambda: (r(2, 3, 4, 5),))
case("aten::im2col.default", lambda a: aten.im2col.default(a, [3, 2], [2, 1], [1, 2], [2, 3]), lambda: (r(2, 7, 8),),
     tag="3d_dilated_padded_strided")
case("aten::unfold.default", lambda a: aten.unfold.default(a, 1, 3, 2), lambda: (r(2, 8, 3),))
case("aten::unfold.default", lambda a: aten.unfold.default(a, -1, 2, 1), lambda: (r(5,),), tag="1d")
case("aten::repeat_interleave.Tensor", lambda rep: aten.repeat_interleave.Tensor(rep), lambda: (torch.tensor([2, 0, 3, 1]),))
case("aten::repeat_interleave.Tensor", lambda rep: aten.repeat_interleave.Tensor(rep, output_size=5),
     lambda: (torch.tensor([1, 3, 1]),), tag="output_size")
case("aten::new_empty_strided.default", lambda a: aten.new_empty_strided.default(a, [2, 3], [3, 1]), lambda: (r(4),),
     check="shape")

# --- nn: norms, upsampling, pooling, attention, losses ---
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x), lambda: (r(3, 4),))
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x, 1, [1], True), lambda: (r(3, 4),), tag="l1")
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x, math.inf, [0]), lambda: (r(3, 4),), tag="inf")
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x, -math.inf, [-1]), lambda: (r(3, 4),),
     tag="neg_inf")
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x, 0, [1]),
     lambda: (r(3, 4) * rb(3, 4),), tag="l0")
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x, 3.5, [0, 2], dtype=torch.float64),
     lambda: (r(2, 3, 4),), tag="p_dtype")
case("aten::linalg_vector_norm.default", lambda x: aten.linalg_vector_norm.default(x, 2, [1]), lambda: (r(4, 3),),
     dynamic=_batch, tag="dynamic")
case("aten::instance_norm.default", lambda x, w, b: aten.instance_norm.default(x, w, b, None, None, True, 0.1, 1e-5, False),
     lambda: (r(2, 3, 4, 5), r(3), r(3)))
case("aten::instance_norm.default", lambda x, m, v: aten.instance_norm.default(x, None, None, m, v, False, 0.1, 1e-3, False),
     lambda: (r(2, 3, 6), r(3), r(3, lo=0.5, hi=2)), tag="running_stats")
case("aten::instance_norm.default", lambda x: aten.instance_norm.default(x, None, None, None, None, True, 0.1, 1e-5, False),
     lambda: (r(3, 2, 5),), dynamic=_batch, tag="dynamic")
case("aten::native_batch_norm.default", lambda x, w, b: aten.native_batch_norm.default(x, w, b, None, None, True, 0.1, 1e-5),
     lambda: (r(4, 3, 5), r(3), r(3)), edit=retarget(aten._native_batch_norm_legit.no_stats, "aten::native_batch_norm.default"))
case("aten::native_batch_norm.default", lambda x, m, v: aten.native_batch_norm.default(x, None, None, m, v, False, 0.1, 1e-3),
     lambda: (r(2, 3, 4, 4), r(3), r(3, lo=0.5, hi=2)), tag="eval",
     edit=retarget(aten._native_batch_norm_legit_no_training.default, "aten::native_batch_norm.default"))
for _key, _fn, _inputs in [
        ("aten::upsample_nearest1d.vec", lambda x: F.interpolate(x, scale_factor=2.0, mode="nearest"), lambda: (r(1, 2, 5),)),
        ("aten::upsample_nearest1d.default", lambda x: aten.upsample_nearest1d.default(x, [7]), lambda: (r(2, 3, 5),)),
        ("aten::upsample_nearest3d.vec", lambda x: F.interpolate(x, size=(4, 6, 3), mode="nearest"), lambda: (r(1, 2, 2, 3, 3),)),
        ("aten::upsample_nearest3d.default", lambda x: aten.upsample_nearest3d.default(x, [4, 4, 6]), lambda: (r(1, 2, 2, 3, 3),)),
        ("aten::upsample_linear1d.vec", lambda x: F.interpolate(x, size=9, mode="linear"), lambda: (r(2, 3, 4),)),
        ("aten::upsample_linear1d.default", lambda x: aten.upsample_linear1d.default(x, [3], True), lambda: (r(2, 3, 7),)),
        ("aten::upsample_trilinear3d.vec", lambda x: F.interpolate(x, scale_factor=2.0, mode="trilinear"),
         lambda: (r(1, 2, 2, 3, 3),)),
        ("aten::upsample_trilinear3d.default", lambda x: aten.upsample_trilinear3d.default(x, [3, 5, 2], True),
         lambda: (r(1, 2, 2, 3, 4),)),
        ("aten::upsample_bicubic2d.vec", lambda x: F.interpolate(x, size=(7, 5), mode="bicubic"), lambda: (r(1, 2, 4, 3),)),
        ("aten::upsample_bicubic2d.default", lambda x: aten.upsample_bicubic2d.default(x, [8, 6], True), lambda: (r(1, 2, 4, 3),)),
]:
    case(_key, _fn, _inputs)
case("aten::upsample_nearest1d.vec", lambda x: F.interpolate(x, scale_factor=3.0, mode="nearest"), lambda: (r(3, 2, 4),),
     dynamic=_batch, tag="dynamic")
case("aten::glu.default", lambda x: aten.glu.default(x, 1), lambda: (r(3, 4, 2),))
case("aten::glu.default", lambda x: aten.glu.default(x, 0), lambda: (r(6, 3),), dynamic={"x": {0: torch.export.Dim("b2", min=1, max=32) * 2}},
     tag="dynamic")
case("aten::max_pool1d_with_indices.default", lambda x: aten.max_pool1d_with_indices.default(x, [3], [2], [1]),
     lambda: (r(2, 3, 9),))
case("aten::max_pool1d_with_indices.default", lambda x: aten.max_pool1d_with_indices.default(x, [2], [], [0], [2], True),
     lambda: (r(3, 8),), tag="unbatched_dilated_ceil")
case("aten::_scaled_dot_product_flash_attention_for_cpu.default",
     lambda q, k, v: aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v), lambda: (r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4)))
case("aten::_scaled_dot_product_flash_attention_for_cpu.default",
     lambda q, k, v: aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, is_causal=True, scale=0.3),
     lambda: (r(2, 2, 4, 8), r(2, 2, 4, 8), r(2, 2, 4, 8)), tag="causal_scale")
case("aten::_scaled_dot_product_flash_attention_for_cpu.default",
     lambda q, k, v, m: aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, attn_mask=m),
     lambda: (r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4), r(1, 1, 3, 5)), tag="float_mask")
case("aten::bilinear.default", lambda a, b, w, bias: aten.bilinear.default(a, b, w, bias),
     lambda: (r(2, 3, 4), r(2, 3, 5), r(6, 4, 5), r(6)))
case("aten::embedding_renorm.default", lambda w, i: aten.embedding_renorm.default(w, i, 1.0, 2.0),
     lambda: (r(6, 4), torch.tensor([[0, 2], [2, 5]])))
case("aten::embedding_renorm.default", lambda w, i: aten.embedding_renorm.default(w, i, 1.5, 1.0),
     lambda: (r(5, 3), torch.tensor([1, 3, 4])), tag="l1")
case("aten::mse_loss.default", lambda a, b: aten.mse_loss.default(a, b), lambda: (r(3, 4), r(3, 4)))
case("aten::mse_loss.default", lambda a, b: aten.mse_loss.default(a, b, 0), lambda: (r(3, 4), r(3, 4)), tag="none")
case("aten::mse_loss.default", lambda a, b: aten.mse_loss.default(a, b, 2), lambda: (r(3, 4), r(3, 4)), tag="sum")
_nll_in = lambda: (torch.log_softmax(r(5, 4), 1), torch.tensor([0, 3, -100, 1, 3]), r(4, lo=0.5, hi=2))
case("aten::nll_loss_forward.default", lambda x, t, w: aten.nll_loss_forward.default(x, t, w, 1, -100), _nll_in)
case("aten::nll_loss_forward.default", lambda x, t, w: aten.nll_loss_forward.default(x, t, w, 2, 3),
     lambda: (torch.log_softmax(r(5, 4), 1), torch.tensor([0, 3, 2, 1, 3]), r(4, lo=0.5, hi=2)), tag="sum_ignore3")
case("aten::nll_loss_forward.default", lambda x, t, w: aten.nll_loss_forward.default(x, t, None, 0, -100)[0], _nll_in, tag="none")
case("aten::nll_loss.default", lambda x, t: aten.nll_loss.default(x, t), lambda: (torch.log_softmax(r(4, 3), 1), ri(3, 4)))
case("aten::nll_loss.default", lambda x, t: aten.nll_loss.default(x, t, reduction=2), lambda: (torch.log_softmax(r(3), 0), torch.tensor(2)),
     tag="unbatched")
case("aten::cross_entropy_loss.default", lambda x, t: aten.cross_entropy_loss.default(x, t), lambda: (r(5, 4), ri(4, 5)))
case("aten::cross_entropy_loss.default", lambda x, t, w: aten.cross_entropy_loss.default(x, t, w, 1, 2, 0.1),
     lambda: (r(6, 4), torch.tensor([0, 2, 3, 1, 2, 0]), r(4, lo=0.5, hi=2)), tag="weight_ignore_smoothing")
case("aten::cross_entropy_loss.default", lambda x, t: aten.cross_entropy_loss.default(x, t, None, 0, -100, 0.2),
     lambda: (r(2, 3, 4), ri(3, 2, 4)), tag="none_smoothing_spatial")
case("aten::cross_entropy_loss.default", lambda x, t: aten.cross_entropy_loss.default(x, t, None, 1, -100, 0.1),
     lambda: (r(4, 5), torch.softmax(r(4, 5), 1)), tag="probabilities")
case("aten::embedding_bag.default", lambda w, i, o: aten.embedding_bag.default(w, i, o, False, 1)[0],
     lambda: (r(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])),
     edit=retarget(aten._embedding_bag.default, "aten::embedding_bag.default"))
case("aten::embedding_bag.padding_idx", lambda w, i, o: aten.embedding_bag.padding_idx(w, i, o, False, 0, False, None, False, 2),
     lambda: (r(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 3, 6])),
     edit=retarget(aten._embedding_bag.default, "aten::embedding_bag.padding_idx"))
case("aten::_embedding_bag_forward_only.default",
     lambda w, i, o: aten._embedding_bag_forward_only.default(w, i, o, False, 0),
     lambda: (r(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])))
case("aten::grid_sampler.default", lambda x, g: aten.grid_sampler.default(x, g, 0, 0, False),
     lambda: (r(1, 2, 4, 5), r(1, 3, 2, 2, lo=-1.1, hi=1.1)),
     edit=retarget(aten.grid_sampler_2d.default, "aten::grid_sampler.default"))

# --- factories, random sampling (shape and dtype checks), scans and counting ---
for _name in ["hann", "hamming", "blackman"]:
    _w = getattr(aten, f"{_name}_window")
    case(f"aten::{_name}_window.default", lambda a, w=_w: w.default(8) + a, lambda: (r(8),))
    case(f"aten::{_name}_window.periodic", lambda a, w=_w: w.periodic(7, False, dtype=torch.float64) + a,
         lambda: (r(7, dtype=torch.float64),))
case("aten::hamming_window.periodic_alpha_beta", lambda a: aten.hamming_window.periodic_alpha_beta(6, True, 0.6, 0.3) + a,
     lambda: (r(6),))
case("aten::hann_window.default", lambda a: aten.hann_window.default(1) + a, lambda: (r(1),), tag="length1")
case("aten::linspace.default", lambda a: aten.linspace.default(-1.5, 2.0, 7) + a, lambda: (r(7),))
case("aten::linspace.default", lambda a: aten.linspace.default(0, 10, 4, dtype=torch.int64) + a, lambda: (ri(5, 4),), tag="int")
case("aten::linspace.Tensor_Tensor", lambda s, e: aten.linspace.Tensor_Tensor(s, e, 5), lambda: (r(()), r(()) + 3))
case("aten::linspace.default", lambda a: aten.linspace.default(2.0, 3.0, 1) + a, lambda: (r(1),), tag="one_step")
# Random outputs: >= 4096 samples each, checked for support and moments (random_props; eager's sample too).
_P = "props"
case("aten::bernoulli.default", lambda p: aten.bernoulli.default(p), lambda: (r(64, 64, lo=0, hi=1),), check=_P,
     props=lambda o, i: rp.zeros_and_ones(o[0], i[0]))
case("aten::bernoulli.p", lambda x: aten.bernoulli.p(x, 0.3), lambda: (r(64, 64),), check=_P,
     props=lambda o, i: rp.zeros_and_ones(o[0], 0.3))
case("aten::normal.Tensor_Tensor", lambda m, s: aten.normal.Tensor_Tensor(m, s), lambda: (r(64, 64), r(64, lo=0.5, hi=1)),
     check=_P, props=lambda o, i: rp.standard_normal((o[0] - i[0]) / i[1]))
case("aten::normal.Tensor_float", lambda m: aten.normal.Tensor_float(m, 2.0), lambda: (r(64, 64),), check=_P,
     props=lambda o, i: rp.standard_normal((o[0] - i[0]) / 2.0))
case("aten::normal.float_Tensor", lambda s: aten.normal.float_Tensor(1.0, s), lambda: (r(64, 64, lo=0.5, hi=1),), check=_P,
     props=lambda o, i: rp.standard_normal((o[0] - 1.0) / i[0]))
case("aten::normal.float_float", lambda a: aten.normal.float_float(1.0, 2.0, [64, 64]) + a, lambda: (r(64),), check=_P,
     props=lambda o, i: rp.standard_normal((o[0] - i[0] - 1.0) / 2.0))
case("aten::normal_functional.default", lambda a: aten.normal_functional.default(a, 1.0, 0.5), lambda: (r(64, 64),), check=_P,
     props=lambda o, i: rp.standard_normal((o[0] - 1.0) / 0.5))
case("aten::randint.default", lambda a: aten.randint.default(10, [64, 64]) + a, lambda: (ri(5, 64),), check=_P,
     props=lambda o, i: rp.integers(o[0] - i[0], 0, 10))
case("aten::randint.low", lambda a: aten.randint.low(-3, 10, [64, 64]) + a, lambda: (ri(5, 64),), check=_P,
     props=lambda o, i: rp.integers(o[0] - i[0], -3, 10))
case("aten::randint_like.default", lambda a: aten.randint_like.default(a, 7), lambda: (r(64, 64),), check=_P,
     props=lambda o, i: rp.integers(o[0], 0, 7))
case("aten::randint_like.low_dtype", lambda a: aten.randint_like.low_dtype(a, 2, 9), lambda: (ri(5, 64, 64),), check=_P,
     props=lambda o, i: rp.integers(o[0], 2, 9))
case("aten::multinomial.default", lambda p: aten.multinomial.default(p, 3), lambda: (r(4096, 5, lo=0.1, hi=1),), check=_P,
     props=lambda o, i: rp.without_replacement(o[0], i[0]))
case("aten::multinomial.default", lambda p: aten.multinomial.default(p, 4096, True), lambda: (r(4, lo=0.1, hi=1),), check=_P,
     props=lambda o, i: rp.categorical(o[0], i[0]), tag="replacement")
case("aten::cross.default", lambda a, b: aten.cross.default(a, b), lambda: (r(3, 4), r(3, 4)))
case("aten::linalg_cross.default", lambda a, b: aten.linalg_cross.default(a, b), lambda: (r(2, 5, 3), r(1, 5, 3)))
case("aten::linalg_cross.default", lambda a, b: aten.linalg_cross.default(a, b, dim=1), lambda: (r(4, 3, 2), r(1, 3, 2)),
     dynamic=_batch, tag="dim1_dynamic")
case("aten::logcumsumexp.default", lambda a: aten.logcumsumexp.default(a, 1),
     lambda: (torch.cat([r(2, 5) * 3, torch.tensor([[-300.0, 0.0, -1e4, 50.0, -math.inf]])]),))
case("aten::logcumsumexp.default", lambda a: aten.logcumsumexp.default(a, 0), lambda: (r(5, 3, 2),), dynamic=_batch, tag="dynamic")
case("aten::histc.default", lambda a: aten.histc.default(a, 7), lambda: (r(50),))
case("aten::histc.default", lambda a: aten.histc.default(a, 5, -1.0, 1.0), lambda: (torch.cat([r(3, 10), torch.tensor([[-1.0, 1.0, 2.0, -3.0, 0.0] * 2])]),),
     tag="range")
case("aten::bincount.default", lambda a: aten.bincount.default(a), lambda: (ri(6, 20),))
case("aten::bincount.default", lambda a, w: aten.bincount.default(a, w, 9), lambda: (ri(6, 20), r(20)), tag="weights_minlength")

# --- unique (shapes are data-dependent: the graphs carry unbacked sizes) ---
_dups = lambda: (torch.tensor([[3, 1, 2, 3], [1, 5, 0, 5], [2, 2, 7, -1]]),)
case("aten::_unique2.default", lambda a: aten._unique2.default(a, True, True, True), _dups)
case("aten::_unique2.default", lambda a: aten._unique2.default(a, False, False, False)[0], lambda: (r(3, 4).round(),), tag="float_values_only")
case("aten::_unique.default", lambda a: aten._unique.default(a, True, True), _dups)
case("aten::unique_dim.default", lambda a: aten.unique_dim.default(a, 0, True, True, True),
     lambda: (torch.tensor([[1, 2, 0], [0, 5, 1], [1, 2, 0], [0, 5, 0], [1, 1, 9]]),))
case("aten::unique_dim.default", lambda a: aten.unique_dim.default(a, 1),
     lambda: (torch.tensor([[[1, 2], [1, 2], [0, 1]], [[3, 0], [3, 0], [3, 0]]]).float(),), tag="dim1")
case("aten::unique_consecutive.default", lambda a: aten.unique_consecutive.default(a, True, True),
     lambda: (torch.tensor([[1, 1, 2, 2], [2, 3, 3, 1]]),))
case("aten::unique_consecutive.default", lambda a: aten.unique_consecutive.default(a)[0], lambda: (ri(3, 12).float(),),
     tag="values_only")

# --- determinants (LU with partial pivoting) ---
_mats = lambda: (r(2, 4, 4),)
case("aten::linalg_det.default", lambda a: aten.linalg_det.default(a), _mats)
case("aten::linalg_det.default", lambda a: aten.linalg_det.default(a),
     lambda: (torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [2.0, 2.0, 0.0]]),), tag="singular_needs_pivot")
case("aten::det.default", lambda a: aten.det.default(a), lambda: (r(3, 3),), edit=retarget(aten.linalg_det.default, "aten::det.default"))
case("aten::_linalg_det.default", lambda a: aten._linalg_det.default(a), lambda: (r(3, 5, 5),))
case("aten::logdet.default", lambda a: aten.logdet.default(a), lambda: (torch.stack([r(3, 3) + 3 * torch.eye(3), r(3, 3)]),))
case("aten::linalg_det.default", lambda a: aten.linalg_det.default(a), lambda: (r(3, 2, 2),), dynamic=_batch, tag="dynamic")

# --- antialiased resizing (torchvision's Resize(antialias=True)) ---
for _key, _fn, _inputs in [
        ("aten::_upsample_bilinear2d_aa.vec", lambda x: F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True),
         lambda: (r(1, 2, 9, 10),)),
        ("aten::_upsample_bilinear2d_aa.default", lambda x: aten._upsample_bilinear2d_aa.default(x, [8, 6], False),
         lambda: (r(1, 2, 4, 3),)),
        ("aten::_upsample_bicubic2d_aa.vec", lambda x: F.interpolate(x, size=(4, 3), mode="bicubic", antialias=True),
         lambda: (r(1, 2, 9, 7),)),
        ("aten::_upsample_bicubic2d_aa.default", lambda x: aten._upsample_bicubic2d_aa.default(x, [5, 5], False),
         lambda: (r(2, 3, 10, 8),)),
]:
    case(_key, _fn, _inputs)
case("aten::_upsample_bilinear2d_aa.vec", lambda x: F.interpolate(x, scale_factor=0.3, mode="bilinear", antialias=True),
     lambda: (r(1, 1, 13, 11),), tag="scale_factor")



# --- aten::tensor.<type>(t): export lifts a constant torch.tensor(scalar) out of the graph. While exporting, the
# rows call scalar_tensor(s) and the edit puts tensor.<type>(t) in its place (same positional value, scalar_tensor's
# kwargs dropped); eager runs tensor.<type> itself.
def _as_tensor_overload(overload):
    op = getattr(aten.tensor, overload)

    def edit(ep):
        nodes = [n for n in ep.graph.nodes if n.op == "call_function" and n.target == aten.scalar_tensor.default]
        assert nodes, "no scalar_tensor in the captured graph"
        for n in nodes:
            n.target, n.kwargs = op, {}
        ep.graph_module.recompile()
    return edit


def _tensor_of(overload, value, dtype):
    op = getattr(aten.tensor, overload)
    if torch.compiler.is_exporting():
        return aten.scalar_tensor.default(value, dtype=dtype)
    return op(value)


case("aten::tensor.float", lambda x: x * _tensor_of("float", 2.5, torch.float32), lambda: (r(3, 4),),
     edit=_as_tensor_overload("float"))
case("aten::tensor.int", lambda x: x + _tensor_of("int", 7, torch.int64), lambda: (ri(5, 3, 4),), edit=_as_tensor_overload("int"))
case("aten::tensor.bool", lambda x: x & _tensor_of("bool", True, torch.bool), lambda: (rb(3, 4),), edit=_as_tensor_overload("bool"))
case("aten::tensor.float", lambda x: _tensor_of("float", x.shape[0] / 2, torch.float32) * x, lambda: (r(4, 3),),
     dynamic=_batch, edit=_as_tensor_overload("float"), tag="symbolic")

# --- _grouped_mm (bfloat16 on CPU: the rows cast float32 inputs; small integers keep every sum exact) ---
_bf = lambda *shape: ri(4, *shape, lo=-3).float()
_gmm = lambda a, b, *o: aten._grouped_mm.default(a.bfloat16(), b.bfloat16(), *o).float()
case("aten::_grouped_mm.default", _gmm, lambda: (_bf(2, 5, 8), _bf(2, 8, 8)))
case("aten::_grouped_mm.default", _gmm, lambda: (_bf(6, 8), _bf(3, 8, 8), torch.tensor([2, 2, 6], dtype=torch.int32)),
     tag="2d_3d")
case("aten::_grouped_mm.default", _gmm, lambda: (_bf(2, 5, 8), _bf(16, 8).t(), torch.tensor([3, 16], dtype=torch.int32)),
     tag="3d_2d")
case("aten::_grouped_mm.default", _gmm, lambda: (_bf(16, 8).t(), _bf(16, 8), torch.tensor([4, 16], dtype=torch.int32)),
     tag="2d_2d")

# --- dynamic batch for translations that compute shapes ---
case("aten::tile.default", lambda a: aten.tile.default(a, [2]), lambda: (r(3, 2),), dynamic=_batch,
     edit=retarget(aten.repeat.default, "aten::tile.default"), tag="dynamic")
case("aten::triu.default", lambda a: aten.triu.default(a, -1), lambda: (r(5, 4),), dynamic=_batch, tag="dynamic")
case("aten::unfold.default", lambda a: aten.unfold.default(a, 1, 2, 2), lambda: (r(3, 6),), dynamic=_batch, tag="dynamic")
case("aten::erfc.default", lambda x: aten.erfc.default(x), lambda: (r(4, 3) * 3,), dynamic=_batch, tag="dynamic")
# AffineGrid is an opset-20 op: the rows export at opset 20 and must contain it.
case("aten::affine_grid_generator.default", lambda t: aten.affine_grid_generator.default(t, [2, 3, 4, 5], False),
     lambda: (r(2, 2, 3),), opset=20, onnx_ops=("AffineGrid",))
case("aten::affine_grid_generator.default", lambda t: aten.affine_grid_generator.default(t, [1, 2, 3, 4, 5], True),
     lambda: (r(1, 3, 4),), opset=20, onnx_ops=("AffineGrid",), tag="3d_align_corners")
# max_unpool: indices per (N, C) plane of output_size, from the pool that made them (ScatterElements).
case("aten::max_unpool2d.default",
     lambda a: aten.max_unpool2d.default(*aten.max_pool2d_with_indices.default(a, [2, 2], [2, 2]), [a.shape[2], 6]),
     lambda: (r(2, 3, 4, 6),), dynamic=_batch, onnx_ops=("ScatterElements",), tag="dynamic")
case("aten::max_unpool2d.default",
     lambda a: aten.max_unpool2d.default(*aten.max_pool2d_with_indices.default(a, [2, 2], [2, 2]), [5, 7]),
     lambda: (r(1, 3, 4, 6),), tag="bigger_output")
case("aten::max_unpool3d.default",
     lambda a: aten.max_unpool3d.default(*aten.max_pool3d_with_indices.default(a, [2, 2, 2], [2, 2, 2]), [4, 4, 6],
                                         [2, 2, 2], [0, 0, 0]),
     lambda: (r(1, 2, 4, 4, 6),), onnx_ops=("ScatterElements",))
# Before opset 20 the grid is built from Range, Expand, Concat and a MatMul by theta^T.
case("aten::affine_grid_generator.default", lambda t: aten.affine_grid_generator.default(t, [t.shape[0], 3, 4, 5], False),
     lambda: (r(2, 2, 3),), dynamic=_batch, onnx_ops=("MatMul",), tag="opset18-dynamic")
case("aten::affine_grid_generator.default", lambda t: aten.affine_grid_generator.default(t, [1, 2, 3, 4, 5], True),
     lambda: (r(1, 3, 4),), onnx_ops=("MatMul",), tag="opset18-3d_align_corners")

