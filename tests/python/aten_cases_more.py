"""More rows of the ATen translation table (aten_cases.CASES): the torch_lib registry coverage of issue 10.

Imported at the end of aten_cases.py. Rows whose op torch.export traces into others put the overload back
with `retarget(via, key)`, so each row tests the key itself.
"""
import math

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
