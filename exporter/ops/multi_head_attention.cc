// nn.MultiheadAttention's fast-path op, which torch.export keeps when a program calls it directly:
// _native_multi_head_attention -> projections, scaled scores, Softmax and the output projection.
#include <cmath>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

// Rows [i * d, (i + 1) * d) of a packed [3d, ...] q/k/v weight or bias.
std::string third(TranslateContext& ctx, const std::string& packed, int64_t i, int64_t d, const std::string& hint) {
  return ctx.emit1(
      "Slice",
      {packed, ctx.graph.constant_i64({i * d}), ctx.graph.constant_i64({(i + 1) * d}), ctx.graph.constant_i64({0})},
      hint);
}

// x [B, T, d] @ W_i^T + b_i, split into heads: [B, heads, T, d / heads].
std::string project_heads(TranslateContext& ctx, const std::string& x, int64_t i, int64_t d, int64_t heads) {
  static const char* names[] = {"q", "k", "v"};
  const std::string w = third(ctx, ctx.tensor("qkv_weight"), i, d, std::string(names[i]) + "_weight");
  const std::string b = third(ctx, ctx.tensor("qkv_bias"), i, d, std::string(names[i]) + "_bias");
  const std::string y = ctx.emit1("Add", {ctx.emit1("MatMul", {x, ctx.emit1("Transpose", {w})}), b}, names[i]);
  const std::string split = ctx.emit1("Reshape", {y, ctx.graph.constant_i64({0, 0, heads, d / heads})});
  auto* tr = ctx.emit("Transpose", {split}, {ctx.temp(std::string(names[i]) + "_heads")});
  set_attr(tr, "perm", std::vector<int64_t>{0, 2, 1, 3});
  return tr->output(0);
}

// _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
// proj_bias, mask?, need_weights, average_attn_weights, mask_type?) -> (out [B, T, d], weights). The mask
// (True = hidden, or additive when floating) is [T, S] for mask_type 0, a key padding [B, S] for 1 and
// [B, heads, T, S] for 2. A row with every key hidden gives NaN, as torch's kernel does (plain Softmax).
// need_weights: the Softmax weights, averaged over the heads when average_attn_weights; else torch returns
// no tensor (an empty one here, never read).
void native_multi_head_attention(TranslateContext& ctx) {
  const DType t = ctx.output_meta(0).dtype;
  const int64_t d = ctx.int_arg("embed_dim", 0), heads = ctx.int_arg("num_head", 0);
  if (heads <= 0 || d <= 0 || d % heads != 0)
    ctx.fail("embed_dim " + std::to_string(d) + " is not a positive multiple of num_head " + std::to_string(heads));
  const std::string q = project_heads(ctx, ctx.tensor("query"), 0, d, heads);
  const std::string k = project_heads(ctx, ctx.tensor("key"), 1, d, heads);
  const std::string v = project_heads(ctx, ctx.tensor("value"), 2, d, heads);
  auto* kt = ctx.emit("Transpose", {k}, {ctx.temp("k_t")});
  set_attr(kt, "perm", std::vector<int64_t>{0, 1, 3, 2});
  std::string scores = ctx.emit1(
      "Mul", {ctx.emit1("MatMul", {q, kt->output(0)}), ctx.constant(1.0 / std::sqrt(double(d / heads)), t)}, "scores");
  if (ctx.has("mask")) {
    if (!ctx.has("mask_type")) ctx.fail("a mask without mask_type (torch refuses it too)");
    const int64_t type = ctx.int_arg("mask_type", 0);
    if (type < 0 || type > 2) ctx.fail("mask_type " + std::to_string(type) + " is not 0, 1 or 2");
    std::string mask = ctx.tensor("mask");
    if (type == 1) mask = ctx.emit1("Unsqueeze", {mask, ctx.graph.constant_i64({1, 2})}, "key_padding");
    if (ctx.input_meta("mask").dtype == DType::kBool)
      scores = ctx.emit1("Where", {mask, ctx.constant(-std::numeric_limits<double>::infinity(), t), scores},
                         "masked_scores");
    else
      scores = ctx.emit1("Add", {scores, ctx.cast_if_needed(mask, ctx.input_meta("mask").dtype, t)}, "masked_scores");
  }
  auto* softmax = ctx.emit("Softmax", {scores}, {ctx.temp("weights")});
  set_attr(softmax, "axis", int64_t{-1});
  const std::string weights = softmax->output(0);
  auto* merged = ctx.emit("Transpose", {ctx.emit1("MatMul", {weights, v})}, {ctx.temp("heads_merged")});
  set_attr(merged, "perm", std::vector<int64_t>{0, 2, 1, 3});
  const std::string context = ctx.emit1("Reshape", {merged->output(0), ctx.graph.constant_i64({0, 0, d})});
  ctx.emit(
      "Add",
      {ctx.emit1("MatMul", {context, ctx.emit1("Transpose", {ctx.tensor("proj_weight")})}), ctx.tensor("proj_bias")},
      {ctx.output(0)});
  if (ctx.output_count() < 2) return;
  if (!ctx.bool_arg("need_weights", true)) {
    ctx.alias_output(1, ctx.emit1("Expand", {ctx.constant(0, t), ctx.graph.constant_i64({0})}, "no_weights"));
    return;
  }
  if (ctx.bool_arg("average_attn_weights", true))
    emit_reduce(ctx, "ReduceMean", weights, {1}, false, ctx.output(1));
  else
    ctx.alias_output(1, weights);
}

}  // namespace

PARITY_TRANSLATION("aten::_native_multi_head_attention.default", native_multi_head_attention, 18);

}  // namespace parity::exporter
