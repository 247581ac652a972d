// Tensor factories -> ONNX: full/zeros/ones/empty (+ _like, new_*), arange, scalar_tensor, random tensors.
// Values are Expand-ed scalars, so symbolic sizes work; empty* is zero-filled (any value is valid).
#include "../src/translate.h"
#include "parity/exporter/export.h"

namespace parity::exporter {
namespace {

void fill_shape(TranslateContext& ctx, double v, const std::string& shape) {
  ctx.emit("Expand", {ctx.constant(v, ctx.output_meta().dtype), shape}, {ctx.output()});
}

// full(size, fill_value) / new_full(self, size, fill_value)
void full(TranslateContext& ctx) {
  ctx.emit("Expand", {ctx.value("fill_value", ctx.output_meta().dtype), ctx.int_list_value("size")}, {ctx.output()});
}
void zeros(TranslateContext& ctx) { fill_shape(ctx, 0, ctx.int_list_value("size")); }
void ones(TranslateContext& ctx) { fill_shape(ctx, 1, ctx.int_list_value("size")); }

void full_like(TranslateContext& ctx) {
  ctx.emit("Expand", {ctx.value("fill_value", ctx.output_meta().dtype), shape_of(ctx, ctx.tensor("self"))},
           {ctx.output()});
}
void zeros_like(TranslateContext& ctx) { fill_shape(ctx, 0, shape_of(ctx, ctx.tensor("self"))); }
void ones_like(TranslateContext& ctx) { fill_shape(ctx, 1, shape_of(ctx, ctx.tensor("self"))); }

// scalar_tensor(s, dtype)
void scalar_tensor(TranslateContext& ctx) {
  ctx.emit("Identity", {ctx.value("s", ctx.output_meta().dtype)}, {ctx.output()});
}

// arange(start?, end, step?): Range on rank-0 values of the output dtype.
void arange(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string start = ctx.has("start") ? ctx.value("start", out) : ctx.constant(0, out);
  const std::string step = ctx.has("step") ? ctx.value("step", out) : ctx.constant(1, out);
  ctx.emit("Range", {start, ctx.value("end", out), step}, {ctx.output()});
}

// Random tensors: the *Like ops take their shape from a zero tensor of the requested size.
void random(TranslateContext& ctx, const std::string& op, const std::string& shape) {
  const DType out = ctx.output_meta().dtype;
  const std::string zeros = ctx.emit1("Expand", {ctx.constant(0, out), shape}, "zeros");
  set_attr(ctx.emit(op, {zeros}, {ctx.output()}), "dtype", static_cast<int64_t>(out));
}
void rand(TranslateContext& ctx) { random(ctx, "RandomUniformLike", ctx.int_list_value("size")); }
void randn(TranslateContext& ctx) { random(ctx, "RandomNormalLike", ctx.int_list_value("size")); }
void rand_like(TranslateContext& ctx) { random(ctx, "RandomUniformLike", shape_of(ctx, ctx.tensor("self"))); }
void randn_like(TranslateContext& ctx) { random(ctx, "RandomNormalLike", shape_of(ctx, ctx.tensor("self"))); }

// randperm(n): the order that sorts n uniform samples is a uniform random permutation.
void randperm(TranslateContext& ctx) {
  const std::string n = unsqueeze0(ctx, ctx.int_value("n"));
  const std::string zeros = ctx.emit1("Expand", {ctx.constant(0, DType::kFloat32), n}, "zeros");
  const std::string u = ctx.emit1("RandomUniformLike", {zeros}, "samples");
  auto* topk = ctx.emit("TopK", {u, n}, {ctx.temp("values"), ctx.temp("order")});
  set_attr(topk, "axis", int64_t{0});
  ctx.alias_output(0, ctx.cast_if_needed(topk->output(1), DType::kInt64, ctx.output_meta().dtype));
}

// native_dropout(input, p, train) -> (output, mask). Inference (or p=0) is the identity with an all-true mask.
void native_dropout(TranslateContext& ctx) {
  const std::string x = ctx.tensor("input");
  const double p = ctx.float_arg("p", 0.5);
  const bool train = ctx.bool_arg("train", true);
  if (!train || p == 0.0) {
    ctx.alias_output(0, x);
    if (ctx.output_count() > 1) ctx.emit("Expand", {ctx.constant(1, DType::kBool), shape_of(ctx, x)}, {ctx.output(1)});
    return;
  }
  const DType t = ctx.input_meta("input").dtype;
  ctx.emit("Dropout", {x, ctx.constant(p, t), ctx.constant(1, DType::kBool)}, {ctx.output(0), ctx.output(1)});
}

// dropout(input, p, train) -> output; also feature_dropout and the alpha variants in eval, and the in-place
// forms (dropout_ names its tensor `self`).
void dropout(TranslateContext& ctx) {
  const std::string arg = ctx.has("input") ? "input" : "self";
  const std::string x = ctx.tensor(arg);
  const double p = ctx.float_arg("p", 0.5);
  if (!ctx.bool_arg("train", true) || p == 0.0) return ctx.alias_output(0, x);
  const std::string key = registry_key(ctx.node.target);
  if (key != "aten::dropout.default" && key != "aten::dropout_.default")
    ctx.fail("training-mode " + ctx.node.target +
             " has no ONNX equivalent (it drops whole channels or keeps "
             "self-normalising statistics); export the module in eval() mode");
  const DType t = ctx.input_meta(arg).dtype;
  ctx.emit("Dropout", {x, ctx.constant(p, t), ctx.constant(1, DType::kBool)}, {ctx.output(0)});
}

}  // namespace

PARITY_TRANSLATION("aten::full.default", full, 18);
PARITY_TRANSLATION("aten::new_full.default", full, 18);
PARITY_TRANSLATION("aten::zeros.default", zeros, 18);
PARITY_TRANSLATION("aten::new_zeros.default", zeros, 18);
PARITY_TRANSLATION("aten::ones.default", ones, 18);
PARITY_TRANSLATION("aten::new_ones.default", ones, 18);
PARITY_TRANSLATION("aten::empty.memory_format", zeros, 18);
PARITY_TRANSLATION("aten::new_empty.default", zeros, 18);
PARITY_TRANSLATION("aten::empty_strided.default", zeros, 18);
PARITY_TRANSLATION("aten::full_like.default", full_like, 18);
PARITY_TRANSLATION("aten::zeros_like.default", zeros_like, 18);
PARITY_TRANSLATION("aten::ones_like.default", ones_like, 18);
PARITY_TRANSLATION("aten::empty_like.default", zeros_like, 18);
PARITY_TRANSLATION("aten::scalar_tensor.default", scalar_tensor, 18);
PARITY_TRANSLATION("aten::arange.start_step", arange, 18);
PARITY_TRANSLATION("aten::arange.start", arange, 18);
PARITY_TRANSLATION("aten::arange.default", arange, 18);
PARITY_TRANSLATION("aten::rand.default", rand, 18);
PARITY_TRANSLATION("aten::randn.default", randn, 18);
PARITY_TRANSLATION("aten::rand_like.default", rand_like, 18);
PARITY_TRANSLATION("aten::randn_like.default", randn_like, 18);
PARITY_TRANSLATION("aten::randperm.default", randperm, 18);
PARITY_TRANSLATION("aten::native_dropout.default", native_dropout, 18);
PARITY_TRANSLATION("aten::dropout.default", dropout, 18);
PARITY_TRANSLATION("aten::feature_dropout.default", dropout, 18);
PARITY_TRANSLATION("aten::alpha_dropout.default", dropout, 18);
PARITY_TRANSLATION("aten::feature_alpha_dropout.default", dropout, 18);

}  // namespace parity::exporter
