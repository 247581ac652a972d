// Complex values in the pair layout (a trailing dim of 2: real, imaginary): views between complex and
// real, parts, magnitude and phase, arithmetic, and the layout ops whose real translation would miss the
// pair dim.
#include "complex_pairs.h"

namespace parity::exporter {
namespace {
using namespace complex_pairs;

// view_as_real / view_as_complex: the pair layout is both tensors' ONNX form.
void same_pairs(TranslateContext& ctx) { ctx.alias_output(0, ctx.tensor("self")); }

void real_part(TranslateContext& ctx) { ctx.emit("Identity", {part(ctx, ctx.tensor("self"), 0)}, {ctx.output()}); }
void imag_part(TranslateContext& ctx) { ctx.emit("Identity", {part(ctx, ctx.tensor("self"), 1)}, {ctx.output()}); }

// |z| = sqrt(re^2 + im^2).
void complex_abs(TranslateContext& ctx) {
  emit_reduce(ctx, "ReduceL2", ctx.tensor("self"), {rank_of(ctx.input_meta("self"))}, false, ctx.output());
}

void complex_angle(TranslateContext& ctx) {
  const std::string z = ctx.tensor("self");
  emit_atan2(ctx, part(ctx, z, 1), part(ctx, z, 0), ctx.output_meta().dtype, ctx.output());
}

void conj(TranslateContext& ctx) {
  const std::string z = ctx.tensor("self");
  pair_of(ctx, part(ctx, z, 0), ctx.emit1("Neg", {part(ctx, z, 1)}), ctx.output());
}

// polar(abs, angle) = abs * (cos(angle), sin(angle)).
void polar(TranslateContext& ctx) {
  const DType t = part_dtype(ctx, ctx.output_meta());
  const std::string r = ctx.value("abs", t), theta = ctx.value("angle", t);
  pair_of(ctx, ctx.emit1("Mul", {r, ctx.emit1("Cos", {theta})}), ctx.emit1("Mul", {r, ctx.emit1("Sin", {theta})}),
          ctx.output());
}

// torch.complex(real, imag)
void complex_from_parts(TranslateContext& ctx) {
  const DType t = part_dtype(ctx, ctx.output_meta());
  const std::string re = ctx.value("real", t), im = ctx.value("imag", t);
  // Expand broadcasts both ways: each part to the shape of both.
  pair_of(ctx, ctx.emit1("Expand", {re, shape_of(ctx, im)}), ctx.emit1("Expand", {im, shape_of(ctx, re)}),
          ctx.output());
}

// add / sub (self, other, alpha): a real operand has imaginary part 0.
void add_or_sub(TranslateContext& ctx, const char* op) {
  const DType t = part_dtype(ctx, ctx.output_meta());
  std::string b = complex_operand(ctx, "other", t);
  if (const pt2::Argument* alpha = ctx.arg("alpha"); alpha && !alpha->is_none()) {
    if (alpha->is(pt2::ArgKind::as_complex)) ctx.fail("a complex alpha is not translated");
    if (alpha->as_float() != 1.0) b = ctx.emit1("Mul", {b, ctx.constant(alpha->as_float(), t)}, "alpha");
  }
  ctx.emit(op, {complex_operand(ctx, "self", t), b}, {ctx.output()});
}
void complex_add(TranslateContext& ctx) { add_or_sub(ctx, "Add"); }
void complex_sub(TranslateContext& ctx) { add_or_sub(ctx, "Sub"); }

// (a + bi)(c + di) = (ac - bd) + (ad + bc)i; a real factor scales both parts.
void complex_mul(TranslateContext& ctx) {
  const DType t = part_dtype(ctx, ctx.output_meta());
  const bool a_scalar = ctx.required("self").is(pt2::ArgKind::as_complex);
  const bool b_scalar = ctx.required("other").is(pt2::ArgKind::as_complex);
  const bool a_complex = a_scalar || is_complex_arg(ctx, "self"), b_complex = b_scalar || is_complex_arg(ctx, "other");
  if (!a_complex || !b_complex) {
    const char* real_name = a_complex ? "other" : "self";
    const pt2::Argument& r = ctx.required(real_name);
    std::string factor = ctx.value(r, t);
    if (r.is_tensor()) factor = ctx.emit1("Unsqueeze", {factor, ctx.graph.constant_i64({-1})});
    const char* complex_name = a_complex ? "self" : "other";
    if (part_dtype(ctx, ctx.input_meta(complex_name)) != t) ctx.fail("mixed complex precisions are not translated");
    ctx.emit("Mul", {ctx.tensor(complex_name), factor}, {ctx.output()});
    return;
  }
  if ((!a_scalar && part_dtype(ctx, ctx.input_meta("self")) != t) ||
      (!b_scalar && part_dtype(ctx, ctx.input_meta("other")) != t))
    ctx.fail("mixed complex precisions are not translated");
  const std::string a = complex_operand(ctx, "self", t), b = complex_operand(ctx, "other", t);
  const std::string ar = part(ctx, a, 0), ai = part(ctx, a, 1), br = part(ctx, b, 0), bi = part(ctx, b, 1);
  const std::string re = ctx.emit1("Sub", {ctx.emit1("Mul", {ar, br}), ctx.emit1("Mul", {ai, bi})});
  const std::string im = ctx.emit1("Add", {ctx.emit1("Mul", {ar, bi}), ctx.emit1("Mul", {ai, br})});
  pair_of(ctx, re, im, ctx.output());
}

// sum.dim_IntList / mean.dim over complex dims (all of them when `dim` is empty or None), never the pair dim.
void complex_reduce(TranslateContext& ctx, const char* op) {
  if (ctx.has("dtype")) ctx.fail("a dtype argument on a complex reduction is not translated");
  const int64_t rank = rank_of(ctx.input_meta("self"));
  std::vector<int64_t> axes = ctx.ints_arg("dim");
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  for (auto& d : axes) d = ctx.normalized_dim(d, rank);
  emit_reduce(ctx, op, ctx.tensor("self"), axes, ctx.bool_arg("keepdim", false), ctx.output());
}
void complex_sum(TranslateContext& ctx) { complex_reduce(ctx, "ReduceSum"); }
void complex_mean(TranslateContext& ctx) { complex_reduce(ctx, "ReduceMean"); }

// _to_copy / to.dtype into a complex dtype: a real tensor gets imaginary part 0, a complex one its parts
// cast. To a real dtype torch drops the imaginary part (with a warning): refused, `.real` says it.
void complex_to_copy(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const auto& out = ctx.output_meta();
  if (!is_complex(out)) ctx.fail("casting a complex tensor to a real dtype drops its imaginary part; take .real");
  const DType t = part_dtype(ctx, out);
  if (!is_complex(in)) {
    ctx.emit("Identity", {real_to_pair(ctx, ctx.cast_if_needed(ctx.tensor("self"), in.dtype, t), rank_of(in))},
             {ctx.output()});
    return;
  }
  const DType from = part_dtype(ctx, in);
  if (from == t) return ctx.alias_output(0, ctx.tensor("self"));
  ctx.emit("Identity", {ctx.cast_if_needed(ctx.tensor("self"), from, t)}, {ctx.output()});
}

// --- layout ops: the pair dim stays last ---

void complex_view(TranslateContext& ctx) {
  const std::string size = ctx.int_list_value(ctx.arg("size") ? "size" : "shape");
  auto* shape = ctx.emit("Concat", {size, ctx.graph.constant_i64({2})}, {ctx.temp("shape")});
  set_attr(shape, "axis", int64_t{0});
  ctx.emit("Reshape", {ctx.tensor("self"), shape->output(0)}, {ctx.output()});
}

void transpose_with_pairs(TranslateContext& ctx, std::vector<int64_t> perm) {
  perm.push_back(static_cast<int64_t>(perm.size()));
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

void complex_permute(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx.input_meta("self"));
  std::vector<int64_t> perm = ctx.ints_arg("dims");
  for (auto& d : perm) d = ctx.normalized_dim(d, rank);
  transpose_with_pairs(ctx, perm);
}

void complex_transpose(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx.input_meta("self"));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  if (rank > 0)
    std::swap(perm[static_cast<size_t>(ctx.normalized_dim(ctx.int_arg("dim0", 0), rank))],
              perm[static_cast<size_t>(ctx.normalized_dim(ctx.int_arg("dim1", 0), rank))]);
  transpose_with_pairs(ctx, perm);
}

// constant_pad_nd with value 0 (how irfft's n pads a spectrum): the pair dim is not padded. Symbolic amounts
// (a decomposed fft2 with s over a dynamic dim pads by s - size) are gathered into ONNX's order at run time.
void complex_constant_pad(TranslateContext& ctx) {
  if (ctx.has("value") && ctx.float_arg("value", 0) != 0)
    ctx.fail("padding a complex tensor with a nonzero value is not translated");
  const int64_t rank = rank_of(ctx.input_meta("self"));
  const pt2::Argument& arg = ctx.required("pad");
  bool symbolic = false;
  size_t count = 0;
  if (arg.is(pt2::ArgKind::as_sym_ints)) {
    for (const auto& v : arg.typed().as_sym_ints())
      symbolic = symbolic || v.kind() != pt2::schema::SymIntArgument::Kind::as_int;
    count = arg.typed().as_sym_ints().size();
  }
  const std::vector<int64_t> pad = symbolic ? std::vector<int64_t>{} : ctx.ints_arg("pad");
  if (!symbolic) count = pad.size();
  if (count % 2 != 0 || static_cast<int64_t>(count) > 2 * rank) ctx.fail("bad pad list");
  // ONNX pads [begin of each dim (the pair dim included), end of each dim]; torch lists the last dim first.
  std::vector<int64_t> pads(static_cast<size_t>(2 * (rank + 1)), 0), from(pads.size(), static_cast<int64_t>(count));
  for (size_t i = 0; i < count / 2; ++i) {
    const size_t dim = static_cast<size_t>(rank) - 1 - i;
    from[dim] = static_cast<int64_t>(2 * i),
    from[dim + static_cast<size_t>(rank) + 1] = static_cast<int64_t>(2 * i + 1);
    if (!symbolic) pads[dim] = pad[2 * i], pads[dim + static_cast<size_t>(rank) + 1] = pad[2 * i + 1];
  }
  std::string onnx_pads;
  if (symbolic) {  // the amounts and a 0 (index `count`), gathered into ONNX's order
    const std::string amounts = concat(ctx, {ctx.int_list_value("pad"), ctx.graph.constant_i64({0})}, 0, "amounts");
    auto* g = ctx.emit("Gather", {amounts, ctx.graph.constant_i64(from)}, {ctx.temp("pads")});
    set_attr(g, "axis", int64_t{0});
    onnx_pads = g->output(0);
  } else {
    onnx_pads = ctx.graph.constant_i64(pads);
  }
  ctx.emit("Pad", {ctx.tensor("self"), onnx_pads}, {ctx.output()});
}

}  // namespace

PARITY_COMPLEX_TRANSLATION("aten::view_as_real.default", same_pairs, 17);
PARITY_COMPLEX_TRANSLATION("aten::view_as_complex.default", same_pairs, 17);
PARITY_COMPLEX_TRANSLATION("aten::real.default", real_part, 17);
PARITY_COMPLEX_TRANSLATION("aten::imag.default", imag_part, 17);
PARITY_COMPLEX_TRANSLATION("aten::abs.default", complex_abs, 18);
PARITY_COMPLEX_TRANSLATION("aten::angle.default", complex_angle, 17);
PARITY_COMPLEX_TRANSLATION("aten::conj_physical.default", conj, 17);
PARITY_COMPLEX_TRANSLATION("aten::_conj.default", conj, 17);
PARITY_COMPLEX_TRANSLATION("aten::_conj_physical.default", conj, 17);
PARITY_COMPLEX_TRANSLATION("aten::conj.default", conj, 17);
PARITY_COMPLEX_TRANSLATION("aten::polar.default", polar, 17);
PARITY_COMPLEX_TRANSLATION("aten::complex.default", complex_from_parts, 17);
PARITY_COMPLEX_TRANSLATION("aten::add.Tensor", complex_add, 17);
PARITY_COMPLEX_TRANSLATION("aten::sub.Tensor", complex_sub, 17);
PARITY_COMPLEX_TRANSLATION("aten::mul.Tensor", complex_mul, 17);
PARITY_COMPLEX_TRANSLATION("aten::mul.Scalar", complex_mul, 17);
PARITY_COMPLEX_TRANSLATION("aten::sum.dim_IntList", complex_sum, 18);
PARITY_COMPLEX_TRANSLATION("aten::mean.dim", complex_mean, 18);
PARITY_COMPLEX_TRANSLATION("aten::_to_copy.default", complex_to_copy, 17);
PARITY_COMPLEX_TRANSLATION("aten::to.dtype", complex_to_copy, 17);
PARITY_COMPLEX_TRANSLATION("aten::to.dtype_layout", complex_to_copy, 17);
PARITY_COMPLEX_TRANSLATION("aten::view.default", complex_view, 17);
PARITY_COMPLEX_TRANSLATION("aten::reshape.default", complex_view, 17);
PARITY_COMPLEX_TRANSLATION("aten::_unsafe_view.default", complex_view, 17);
PARITY_COMPLEX_TRANSLATION("aten::permute.default", complex_permute, 17);
PARITY_COMPLEX_TRANSLATION("aten::transpose.int", complex_transpose, 17);
PARITY_COMPLEX_TRANSLATION("aten::constant_pad_nd.default", complex_constant_pad, 17);
// Real translations that index dims through the tensor meta and move whole elements: right on pairs too.
PARITY_COMPLEX_TRANSPARENT("aten::slice.Tensor");
PARITY_COMPLEX_TRANSPARENT("aten::select.int");
PARITY_COMPLEX_TRANSPARENT("aten::unsqueeze.default");
PARITY_COMPLEX_TRANSPARENT("aten::squeeze.dim");
PARITY_COMPLEX_TRANSPARENT("aten::squeeze.dims");
PARITY_COMPLEX_TRANSPARENT("aten::cat.default");
PARITY_COMPLEX_TRANSPARENT("aten::clone.default");
PARITY_COMPLEX_TRANSPARENT("aten::contiguous.default");
PARITY_COMPLEX_TRANSPARENT("aten::alias.default");
PARITY_COMPLEX_TRANSPARENT("aten::detach.default");
PARITY_COMPLEX_TRANSPARENT("aten::resolve_conj.default");
PARITY_COMPLEX_TRANSPARENT("aten::resolve_neg.default");
PARITY_COMPLEX_TRANSPARENT("aten::_assert_tensor_metadata.default");  // checked by torch at capture, emits nothing

}  // namespace parity::exporter
