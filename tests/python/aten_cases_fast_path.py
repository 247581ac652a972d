"""Rows of the ATen translation table (aten_cases.CASES) for fast-path ops torch.export keeps when a program
calls them: _native_multi_head_attention (nn.MultiheadAttention's inference kernel), with and without masks
of each mask_type, need_weights both ways, heads averaged or not.

Imported at the end of aten_cases.py (after every other table: rows are seeded by their index).
"""
import torch
from aten_cases import _batch, aten, case, r, rb

_D, _H = 8, 2


def _mha(need_weights=False, average=True, mask_type=None):
    """query, key, value, the packed q/k/v projection and the output projection as inputs; mask last."""
    def fn(q, k, v, w, b, pw, pb, mask=None):
        out = aten._native_multi_head_attention.default(q, k, v, _D, _H, w, b, pw, pb, mask, need_weights, average,
                                                        mask_type)
        return out if need_weights else out[0]
    return fn


def _weights():
    return r(3 * _D, _D) * 0.3, r(3 * _D), r(_D, _D) * 0.3, r(_D)


def _qkv(batch=2, seq=5):
    return r(batch, seq, _D), r(batch, seq, _D), r(batch, seq, _D)


def _no_full_rows(mask):
    """A bool mask that hides no row entirely (torch's kernel gives NaN there)."""
    mask[..., 0] = False
    return mask


case("aten::_native_multi_head_attention.default", _mha(), lambda: (*_qkv(), *_weights()))
case("aten::_native_multi_head_attention.default", _mha(need_weights=True), lambda: (*_qkv(), *_weights()),
     tag="weights-averaged")
case("aten::_native_multi_head_attention.default", _mha(need_weights=True, average=False),
     lambda: (*_qkv(), *_weights()), tag="weights-per-head")
case("aten::_native_multi_head_attention.default",
     lambda x, w, b, pw, pb: _mha()(x, x, x, w, b, pw, pb), lambda: (r(2, 5, _D), *_weights()), tag="self-attention")
case("aten::_native_multi_head_attention.default", _mha(need_weights=True, mask_type=0),
     lambda: (*_qkv(), *_weights(), _no_full_rows(rb(5, 5))), tag="attn-mask")
case("aten::_native_multi_head_attention.default", _mha(mask_type=0),
     lambda: (*_qkv(), *_weights(), torch.zeros(5, 5).masked_fill(_no_full_rows(rb(5, 5)), float("-inf"))),
     tag="attn-mask-float")
case("aten::_native_multi_head_attention.default", _mha(need_weights=True, mask_type=1),
     lambda: (*_qkv(), *_weights(), _no_full_rows(rb(2, 5))), tag="key-padding")
case("aten::_native_multi_head_attention.default", _mha(need_weights=True, average=False, mask_type=2),
     lambda: (*_qkv(), *_weights(), _no_full_rows(rb(2, _H, 5, 5))), tag="merged-mask")
# dynamic rows vary their first argument only: self-attention, query = key = value
case("aten::_native_multi_head_attention.default", lambda x, w, b, pw, pb: _mha(need_weights=True)(x, x, x, w, b, pw, pb),
     lambda: (r(3, 4, _D), *_weights()), dynamic=_batch, tag="dynamic")
