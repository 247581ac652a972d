// The single-step recurrent cells nn.LSTMCell / GRUCell / RNNCell call (aten::lstm_cell, gru_cell,
// rnn_tanh_cell, rnn_relu_cell: CompositeImplicitAutograd, kept in a non-strict program), written as
// torch's composites compute them: two linear maps, the gate blocks split in torch's order.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

// v @ w^T (+ b): the linear map of one side of a cell.
std::string linear(TranslateContext& ctx, const std::string& v, const char* w, const char* b) {
  const std::string wt = transpose_last_two(ctx, ctx.tensor(w), 2, "weight_t");
  const std::string y = ctx.emit1("MatMul", {v, wt});
  return ctx.has(b) ? ctx.emit1("Add", {y, ctx.tensor(b)}) : y;
}

// The hidden size, from w_hh [gates * H, H].
int64_t hidden_size(TranslateContext& ctx) {
  const auto& sizes = ctx.input_meta("w_hh").sizes;
  if (sizes.size() != 2 || !sizes[1].value) ctx.fail("w_hh needs a static 2-D shape");
  return *sizes[1].value;
}

// `n` equal blocks of the last dim.
std::vector<std::string> gate_blocks(TranslateContext& ctx, const std::string& v, int64_t n, int64_t hidden) {
  std::vector<std::string> outs;
  for (int64_t i = 0; i < n; ++i) outs.push_back(ctx.temp("gate"));
  auto* split =
      ctx.emit("Split", {v, ctx.graph.constant_i64(std::vector<int64_t>(static_cast<size_t>(n), hidden))}, outs);
  set_attr(split, "axis", int64_t{-1});
  return outs;
}

// lstm_cell(input, hx = [h, c], w_ih, w_hh, b_ih?, b_hh?) -> (h', c'): gates i, f, g, o;
// c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c').
void lstm_cell(TranslateContext& ctx) {
  const auto hx = ctx.tensors("hx");
  if (hx.size() != 2) ctx.fail("lstm_cell needs hx = [h, c]");
  const std::string gates =
      ctx.emit1("Add", {linear(ctx, ctx.tensor("input"), "w_ih", "b_ih"), linear(ctx, hx[0], "w_hh", "b_hh")});
  const auto g = gate_blocks(ctx, gates, 4, hidden_size(ctx));
  const std::string i = ctx.emit1("Sigmoid", {g[0]}), f = ctx.emit1("Sigmoid", {g[1]});
  const std::string c = ctx.emit1("Tanh", {g[2]}), o = ctx.emit1("Sigmoid", {g[3]});
  const std::string cy = ctx.emit1("Add", {ctx.emit1("Mul", {f, hx[1]}), ctx.emit1("Mul", {i, c})});
  ctx.emit("Mul", {o, ctx.emit1("Tanh", {cy})}, {ctx.output(0)});
  ctx.alias_output(1, cy);
}

// gru_cell(input, hx, w_ih, w_hh, b_ih?, b_hh?): r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z),
// n = tanh(x_n + r h_n), h' = (h - n) z + n.
void gru_cell(TranslateContext& ctx) {
  const std::string h = ctx.tensor("hx");
  const int64_t hidden = hidden_size(ctx);
  const auto gi = gate_blocks(ctx, linear(ctx, ctx.tensor("input"), "w_ih", "b_ih"), 3, hidden);
  const auto gh = gate_blocks(ctx, linear(ctx, h, "w_hh", "b_hh"), 3, hidden);
  const std::string r = ctx.emit1("Sigmoid", {ctx.emit1("Add", {gh[0], gi[0]})});
  const std::string z = ctx.emit1("Sigmoid", {ctx.emit1("Add", {gh[1], gi[1]})});
  const std::string n = ctx.emit1("Tanh", {ctx.emit1("Add", {gi[2], ctx.emit1("Mul", {gh[2], r})})});
  ctx.emit("Add", {ctx.emit1("Mul", {ctx.emit1("Sub", {h, n}), z}), n}, {ctx.output()});
}

// rnn_tanh_cell / rnn_relu_cell: act(x w_ih^T + b_ih + h w_hh^T + b_hh).
void rnn_cell(TranslateContext& ctx, const char* act) {
  const std::string pre = ctx.emit1(
      "Add", {linear(ctx, ctx.tensor("input"), "w_ih", "b_ih"), linear(ctx, ctx.tensor("hx"), "w_hh", "b_hh")});
  ctx.emit(act, {pre}, {ctx.output()});
}
void rnn_tanh_cell(TranslateContext& ctx) { rnn_cell(ctx, "Tanh"); }
void rnn_relu_cell(TranslateContext& ctx) { rnn_cell(ctx, "Relu"); }

}  // namespace

PARITY_TRANSLATION("aten::lstm_cell.default", lstm_cell, 18);
PARITY_TRANSLATION("aten::gru_cell.default", gru_cell, 18);
PARITY_TRANSLATION("aten::rnn_tanh_cell.default", rnn_tanh_cell, 18);
PARITY_TRANSLATION("aten::rnn_relu_cell.default", rnn_relu_cell, 18);

}  // namespace parity::exporter
