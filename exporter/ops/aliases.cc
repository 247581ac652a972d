// ATen overloads that are other overloads under another name: the same computation and the same argument
// names (checked against torch's schemas), so one alias line each. Python operators (`a & b` records
// __and__), NumPy-style names (divide, greater), `*_copy` variants of views, and the `to` overloads.
#include "../src/translate.h"

namespace parity::exporter {

PARITY_ALIAS("aten::__and__.Tensor", "aten::bitwise_and.Tensor");
PARITY_ALIAS("aten::__and__.Scalar", "aten::bitwise_and.Scalar");
PARITY_ALIAS("aten::__or__.Tensor", "aten::bitwise_or.Tensor");
PARITY_ALIAS("aten::__or__.Scalar", "aten::bitwise_or.Scalar");
PARITY_ALIAS("aten::__xor__.Tensor", "aten::bitwise_xor.Tensor");
PARITY_ALIAS("aten::__xor__.Scalar", "aten::bitwise_xor.Scalar");
// to.device(self, device, dtype, ...): the translation casts to the output's dtype; the device is CPU.
PARITY_ALIAS("aten::to.device", "aten::to.dtype");
PARITY_ALIAS("aten::min.other", "aten::minimum.default");
PARITY_ALIAS("aten::max.other", "aten::maximum.default");
PARITY_ALIAS("aten::where.ScalarOther", "aten::where.self");
PARITY_ALIAS("aten::where.ScalarSelf", "aten::where.self");
PARITY_ALIAS("aten::where.Scalar", "aten::where.self");
PARITY_ALIAS("aten::broadcast_to.default", "aten::expand.default");
PARITY_ALIAS("aten::divide.Tensor", "aten::div.Tensor");
PARITY_ALIAS("aten::divide.Scalar", "aten::div.Scalar");
PARITY_ALIAS("aten::divide.Tensor_mode", "aten::div.Tensor_mode");
PARITY_ALIAS("aten::true_divide.Tensor", "aten::div.Tensor");
PARITY_ALIAS("aten::true_divide.Scalar", "aten::div.Scalar");
PARITY_ALIAS("aten::multiply.Tensor", "aten::mul.Tensor");
PARITY_ALIAS("aten::multiply.Scalar", "aten::mul.Scalar");
PARITY_ALIAS("aten::subtract.Tensor", "aten::sub.Tensor");
PARITY_ALIAS("aten::subtract.Scalar", "aten::sub.Scalar");
PARITY_ALIAS("aten::greater.Tensor", "aten::gt.Tensor");
PARITY_ALIAS("aten::greater.Scalar", "aten::gt.Scalar");
PARITY_ALIAS("aten::greater_equal.Tensor", "aten::ge.Tensor");
PARITY_ALIAS("aten::greater_equal.Scalar", "aten::ge.Scalar");
PARITY_ALIAS("aten::less.Tensor", "aten::lt.Tensor");
PARITY_ALIAS("aten::less.Scalar", "aten::lt.Scalar");
PARITY_ALIAS("aten::less_equal.Tensor", "aten::le.Tensor");
PARITY_ALIAS("aten::less_equal.Scalar", "aten::le.Scalar");
PARITY_ALIAS("aten::not_equal.Tensor", "aten::ne.Tensor");
PARITY_ALIAS("aten::not_equal.Scalar", "aten::ne.Scalar");
PARITY_ALIAS("aten::concat.default", "aten::cat.default");
PARITY_ALIAS("aten::concatenate.default", "aten::cat.default");
PARITY_ALIAS("aten::special_erf.default", "aten::erf.default");
PARITY_ALIAS("aten::special_expm1.default", "aten::expm1.default");
PARITY_ALIAS("aten::special_log_softmax.default", "aten::log_softmax.int");
PARITY_ALIAS("aten::special_softmax.default", "aten::softmax.int");
PARITY_ALIAS("aten::clamp_max.Tensor", "aten::clamp_max.default");
PARITY_ALIAS("aten::clamp_min.Tensor", "aten::clamp_min.default");
PARITY_ALIAS("aten::clip.default", "aten::clamp.default");
PARITY_ALIAS("aten::clip.Tensor", "aten::clamp.Tensor");
PARITY_ALIAS("aten::fix.default", "aten::trunc.default");
PARITY_ALIAS("aten::negative.default", "aten::neg.default");
PARITY_ALIAS("aten::absolute.default", "aten::abs.default");
PARITY_ALIAS("aten::arccos.default", "aten::acos.default");
PARITY_ALIAS("aten::arcsin.default", "aten::asin.default");
PARITY_ALIAS("aten::arctan.default", "aten::atan.default");
PARITY_ALIAS("aten::arccosh.default", "aten::acosh.default");
PARITY_ALIAS("aten::arcsinh.default", "aten::asinh.default");
PARITY_ALIAS("aten::arctanh.default", "aten::atanh.default");
PARITY_ALIAS("aten::arctan2.default", "aten::atan2.default");
PARITY_ALIAS("aten::swapdims.default", "aten::transpose.int");
PARITY_ALIAS("aten::unsafe_split.Tensor", "aten::split.Tensor");
PARITY_ALIAS("aten::unsafe_chunk.default", "aten::chunk.default");
PARITY_ALIAS("aten::view_copy.default", "aten::view.default");
PARITY_ALIAS("aten::diagonal_copy.default", "aten::diagonal.default");
PARITY_ALIAS("aten::expand_copy.default", "aten::expand.default");
PARITY_ALIAS("aten::permute_copy.default", "aten::permute.default");
PARITY_ALIAS("aten::transpose_copy.int", "aten::transpose.int");
PARITY_ALIAS("aten::unsqueeze_copy.default", "aten::unsqueeze.default");
PARITY_ALIAS("aten::squeeze_copy.dim", "aten::squeeze.dim");
PARITY_ALIAS("aten::slice_copy.Tensor", "aten::slice.Tensor");
PARITY_ALIAS("aten::select_copy.int", "aten::select.int");
PARITY_ALIAS("aten::t_copy.default", "aten::t.default");
PARITY_ALIAS("aten::alias_copy.default", "aten::alias.default");
PARITY_ALIAS("aten::_reshape_alias.default", "aten::view.default");
PARITY_ALIAS("aten::_unsafe_index.Tensor", "aten::index.Tensor");
PARITY_ALIAS("aten::_unsafe_index_put.default", "aten::index_put.default");

}  // namespace parity::exporter
