// Recurrent ATen ops -> ONNX: aten::lstm.input / gru.input / rnn_tanh.input / rnn_relu.input become
// one ONNX LSTM / GRU / RNN per layer.
//
// torch stores the gates of w_ih / w_hh / b_* as row blocks (LSTM i, f, g, o; GRU r, z, n); ONNX wants
// LSTM i, o, f, c and GRU z, r, h, so each weight is reordered with a Gather of its rows. torch's GRU
// applies the reset gate after the hidden projection: ONNX linear_before_reset=1. Both directions of a bidirectional
// layer are stacked into one node (direction="bidirectional"). The ONNX Y [seq, dirs, batch, H] becomes torch's [seq,
// batch, dirs*H] (Transpose + Reshape), which is also the next layer's input. batch_first is a Transpose in and out
// (onnxruntime's LSTM does not implement layout=1).
#include "../src/translate.h"

namespace parity::exporter {
namespace {

// A static size of a parameter tensor (weights are never symbolic).
int64_t static_dim(TranslateContext& ctx, const std::string& tensor, size_t d) {
  const auto& sizes = ctx.fx_graph.meta(tensor, ctx.node.name).sizes;
  if (d >= sizes.size() || !sizes[d].value) ctx.fail("parameter '" + tensor + "' needs a static shape");
  return *sizes[d].value;
}

// Row indices taking torch's gate blocks (in `torch_order` of `gates` blocks of `hidden` rows) to ONNX order.
std::vector<int64_t> gate_rows(const std::vector<int64_t>& torch_blocks, int64_t hidden) {
  std::vector<int64_t> rows;
  for (int64_t block : torch_blocks)
    for (int64_t j = 0; j < hidden; ++j) rows.push_back(block * hidden + j);
  return rows;
}

struct RecurrentArgs {
  std::string kind;  // "LSTM" / "GRU"
  int64_t gates = 4, hidden = 0, layers = 1, dirs = 1;
  bool has_biases = true, batch_first = false;
  std::vector<std::string> params;       // ONNX values
  std::vector<std::string> param_fx;     // FX names (for shapes)
  std::vector<int64_t> onnx_gate_order;  // torch block index for each ONNX gate
};

RecurrentArgs parse_recurrent(TranslateContext& ctx, const char* kind, int64_t gates, std::vector<int64_t> order) {
  RecurrentArgs a;
  a.kind = kind;
  a.gates = gates;
  a.onnx_gate_order = std::move(order);
  a.has_biases = ctx.bool_arg("has_biases", true);
  a.layers = ctx.int_arg("num_layers", 1);
  a.dirs = ctx.bool_arg("bidirectional", false) ? 2 : 1;
  a.batch_first = ctx.bool_arg("batch_first", false);
  if (ctx.bool_arg("train", false) && ctx.float_arg("dropout", 0) > 0 && a.layers > 1)
    ctx.fail("dropout between layers in training mode is not exportable (inference only): call model.eval()");
  if (a.layers < 1) ctx.fail("num_layers must be >= 1");
  if (ctx.rank("input") != 3) ctx.fail("input must have rank 3 (torch unsqueezes unbatched inputs before the op)");
  a.params = ctx.tensors("params");
  a.param_fx = ctx.required("params").tensor_names();
  const size_t per_dir = a.has_biases ? 4 : 2;
  if (a.params.size() != per_dir * static_cast<size_t>(a.layers * a.dirs))
    ctx.fail("expected " + std::to_string(per_dir * static_cast<size_t>(a.layers * a.dirs)) + " parameters for " +
             std::to_string(a.layers) + " layer(s) x " + std::to_string(a.dirs) + " direction(s), got " +
             std::to_string(a.params.size()) + " (proj_size is not supported)");
  a.hidden = static_dim(ctx, a.param_fx[1], 1);  // w_hh: [gates*H, H]
  if (static_dim(ctx, a.param_fx[1], 0) != gates * a.hidden)
    ctx.fail("w_hh must be [" + std::to_string(gates) + "*H, H]");
  return a;
}

// One layer's parameter (`which`: 0 w_ih, 1 w_hh, 2 b_ih, 3 b_hh) of every direction, rows in ONNX gate
// order, stacked into [dirs, rows, cols] (`cols` = 0 for a bias: [dirs, rows]).
std::string stacked(TranslateContext& ctx, const RecurrentArgs& a, int64_t layer, size_t which, int64_t cols) {
  const size_t per_dir = a.has_biases ? 4 : 2;
  const std::string rows = ctx.graph.constant_i64(gate_rows(a.onnx_gate_order, a.hidden));
  std::vector<std::string> parts;
  for (int64_t d = 0; d < a.dirs; ++d) {
    const size_t index = static_cast<size_t>(layer * a.dirs + d) * per_dir + which;
    auto* gather = ctx.emit("Gather", {a.params[index], rows}, {ctx.temp("gates")});
    set_attr(gather, "axis", int64_t{0});
    parts.push_back(gather->output(0));
  }
  std::string joined = parts[0];
  if (parts.size() > 1) {
    joined = ctx.temp("stacked");
    set_attr(ctx.emit("Concat", parts, {joined}), "axis", int64_t{0});
  }
  std::vector<int64_t> shape = {a.dirs, a.gates * a.hidden};
  if (cols > 0) shape.push_back(cols);
  return ctx.emit1("Reshape", {joined, ctx.graph.constant_i64(shape)}, "per_direction");
}

// ONNX B = [Wb, Rb] per direction: [dirs, 2*gates*H].
std::string stacked_bias(TranslateContext& ctx, const RecurrentArgs& a, int64_t layer) {
  const std::string b_ih = stacked(ctx, a, layer, 2, 0), b_hh = stacked(ctx, a, layer, 3, 0);
  const std::string b = ctx.temp("bias");
  set_attr(ctx.emit("Concat", {b_ih, b_hh}, {b}), "axis", int64_t{1});
  return b;
}

// Rows [layer*dirs, (layer+1)*dirs) of a [layers*dirs, batch, H] state.
std::string layer_state(TranslateContext& ctx, const std::string& state, const RecurrentArgs& a, int64_t layer) {
  if (a.layers == 1) return state;
  return ctx.emit1("Slice",
                   {state, ctx.graph.constant_i64({layer * a.dirs}), ctx.graph.constant_i64({(layer + 1) * a.dirs}),
                    ctx.graph.constant_i64({0})},
                   "layer_state");
}

std::string transposed(TranslateContext& ctx, const std::string& v, const std::vector<int64_t>& perm,
                       const std::string& out = "") {
  const std::string name = out.empty() ? ctx.temp("transposed") : out;
  set_attr(ctx.emit("Transpose", {v}, {name}), "perm", perm);
  return name;
}

// Emits the per-layer ONNX nodes; `states` are the initial states (h0 [, c0]) [layers*dirs, batch, H],
// `extra` sets op-specific attributes on each node. Binds output 0 (sequence) and outputs 1.. (final states).
template <typename Extra>
void emit_layers(TranslateContext& ctx, const RecurrentArgs& a, const std::vector<std::string>& states, Extra&& extra) {
  std::string x = ctx.tensor("input");
  if (a.batch_first) x = transposed(ctx, x, {1, 0, 2});
  std::vector<std::vector<std::string>> finals(states.size());
  for (int64_t layer = 0; layer < a.layers; ++layer) {
    const int64_t input_size =
        static_dim(ctx, a.param_fx[static_cast<size_t>(layer * a.dirs) * (a.has_biases ? 4 : 2)], 1);
    std::vector<std::string> inputs = {x, stacked(ctx, a, layer, 0, input_size), stacked(ctx, a, layer, 1, a.hidden),
                                       a.has_biases ? stacked_bias(ctx, a, layer) : "", ""};
    for (const auto& s : states) inputs.push_back(layer_state(ctx, s, a, layer));
    std::vector<std::string> outputs = {ctx.temp("y")};
    for (size_t k = 0; k < states.size(); ++k) {
      outputs.push_back(a.layers == 1 ? ctx.output(k + 1) : ctx.temp("final_state"));
      finals[k].push_back(outputs.back());
    }
    auto* node = ctx.emit(a.kind, inputs, outputs);
    set_attr(node, "hidden_size", a.hidden);
    set_attr(node, "direction", std::string(a.dirs == 2 ? "bidirectional" : "forward"));
    extra(node);
    // [seq, dirs, batch, H] -> [seq, batch, dirs*H]
    const std::string y = transposed(ctx, outputs[0], {0, 2, 1, 3});
    const bool last = layer + 1 == a.layers;
    const std::string seq_out = last && !a.batch_first ? ctx.output(0) : ctx.temp("layer_output");
    ctx.emit("Reshape", {y, ctx.graph.constant_i64({0, 0, -1})}, {seq_out});
    x = seq_out;
  }
  if (a.batch_first) transposed(ctx, x, {1, 0, 2}, ctx.output(0));
  for (size_t k = 0; a.layers > 1 && k < finals.size(); ++k)
    set_attr(ctx.emit("Concat", finals[k], {ctx.output(k + 1)}), "axis", int64_t{0});
}

// lstm.input(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
//   -> (output, h_n, c_n)
void lstm(TranslateContext& ctx) {
  const RecurrentArgs a = parse_recurrent(ctx, "LSTM", 4, {0, 3, 1, 2});  // ONNX i, o, f, c <- torch i, f, g, o
  const std::vector<std::string> hx = ctx.tensors("hx");
  if (hx.size() != 2) ctx.fail("hx must be (h0, c0), got " + std::to_string(hx.size()) + " tensors");
  emit_layers(ctx, a, hx, [](onnx::NodeProto*) {});
}

// gru.input(input, hx, params[], has_biases, num_layers, dropout, train, bidirectional, batch_first) -> (output, h_n)
void gru(TranslateContext& ctx) {
  const RecurrentArgs a = parse_recurrent(ctx, "GRU", 3, {1, 0, 2});  // ONNX z, r, h <- torch r, z, n
  emit_layers(ctx, a, {ctx.tensor("hx")},
              [](onnx::NodeProto* node) { set_attr(node, "linear_before_reset", int64_t{1}); });
}

// rnn_tanh.input / rnn_relu.input (same arguments as gru.input) -> (output, h_n)
template <bool kRelu>
void rnn(TranslateContext& ctx) {
  const RecurrentArgs a = parse_recurrent(ctx, "RNN", 1, {0});
  emit_layers(ctx, a, {ctx.tensor("hx")}, [&](onnx::NodeProto* node) {
    auto* activations = node->add_attribute();
    activations->set_name("activations");
    activations->set_type(onnx::AttributeProto::STRINGS);
    for (int64_t d = 0; d < a.dirs; ++d) activations->add_strings(kRelu ? "Relu" : "Tanh");
  });
}

}  // namespace

PARITY_TRANSLATION("aten::lstm.input", lstm, 14);
PARITY_TRANSLATION("aten::gru.input", gru, 14);
PARITY_TRANSLATION("aten::rnn_tanh.input", rnn<false>, 14);
PARITY_TRANSLATION("aten::rnn_relu.input", rnn<true>, 14);

}  // namespace parity::exporter
