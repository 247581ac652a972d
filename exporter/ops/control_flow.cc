// Higher-order ops: torch.cond -> If, while_loop -> Loop, scan and map -> Scan. Each subgraph of the PT2 is
// translated with the same registry into an ONNX subgraph; its inputs are bound to outer values (If,
// and the additional inputs of Loop/Scan) or to the body's formal inputs. Names stay unique across
// scopes (the builders share one name table), FX names are kept where free.
#include "../src/builder.h"
#include "../src/driver.h"
#include "../src/translate.h"
#include "parity/exporter/export.h"

namespace parity::exporter {
namespace {

using Values = std::map<std::string, std::string>;

const pt2::Graph& subgraph_of(TranslateContext& ctx, size_t i, pt2::Graph& storage) {
  const pt2::Argument& a = ctx.positional(i);
  if (!a.is(pt2::ArgKind::as_graph)) ctx.fail("argument #" + std::to_string(i) + " is not a subgraph");
  storage = a.subgraph();
  return storage;
}

// One item of a higher-order op's operand list as an ONNX value: a tensor, or a number (a 0-d tensor).
struct Operand {
  std::string value;
  DType dtype;
};

// The items of a higher-order op's operand list (argument #i). Besides tensors, while_loop carries numbers:
// constants (as_ints), symbols (as_sym_ints), and the symbol of an `.item()` which the serializer lists
// among the tensors by name.
std::vector<Operand> outer_operands(TranslateContext& ctx, size_t i) {
  const pt2::Argument& a = ctx.positional(i);
  const std::string where = "argument #" + std::to_string(i);
  auto symbol = [&](const std::string& name, DType dtype) {
    auto it = ctx.values().find(name);
    if (it == ctx.values().end()) ctx.fail(where + ": symbol '" + name + "' is not defined before use");
    return Operand{it->second, dtype};
  };
  std::vector<Operand> out;
  using SymInt = pt2::schema::SymIntArgument::Kind;
  using SymBool = pt2::schema::SymBoolArgument::Kind;
  switch (a.kind()) {
    case pt2::ArgKind::as_tensors:
      for (const auto& fx : a.tensor_names()) {
        if (ctx.fx_graph.tensor_values.count(fx)) {
          const pt2::Argument t = pt2::Argument::tensor(fx);
          out.push_back({ctx.value(t, ctx.dtype_of(t)), ctx.dtype_of(t)});
        } else if (ctx.fx_graph.sym_int_values.count(fx)) {
          out.push_back(symbol(fx, DType::kInt64));
        } else {
          ctx.fail(where + ": '" + fx + "' is neither a tensor nor a SymInt of the graph");
        }
      }
      break;
    case pt2::ArgKind::as_ints:
      for (int64_t v : a.as_ints()) out.push_back({ctx.graph.constant_i64({v}, true), DType::kInt64});
      break;
    case pt2::ArgKind::as_sym_ints:
      for (const auto& s : a.typed().as_sym_ints())
        out.push_back(s.kind() == SymInt::as_int ? Operand{ctx.graph.constant_i64({s.as_int()}, true), DType::kInt64}
                                                 : symbol(s.as_name(), DType::kInt64));
      break;
    case pt2::ArgKind::as_floats:
      for (double v : a.as_floats()) out.push_back({ctx.graph.constant_scalar(v, DType::kFloat64), DType::kFloat64});
      break;
    case pt2::ArgKind::as_bools:
      for (bool v : a.typed().as_bools()) out.push_back({ctx.graph.constant_scalar(v, DType::kBool), DType::kBool});
      break;
    case pt2::ArgKind::as_sym_bools:
      for (const auto& s : a.typed().as_sym_bools())
        out.push_back(s.kind() == SymBool::as_bool
                          ? Operand{ctx.graph.constant_scalar(s.as_bool(), DType::kBool), DType::kBool}
                          : symbol(s.as_name(), DType::kBool));
      break;
    default:
      ctx.fail(where + " is not a list of tensors or numbers: " + a.describe());
  }
  return out;
}

std::vector<std::string> values_of(const std::vector<Operand>& operands) {
  std::vector<std::string> out;
  for (const auto& o : operands) out.push_back(o.value);
  return out;
}

std::vector<std::string> outer_tensors(TranslateContext& ctx, size_t i) { return values_of(outer_operands(ctx, i)); }

// The dtype a subgraph output has in ONNX: its tensor's, or int64 / float64 / bool for a number.
DType subgraph_output_dtype(TranslateContext& ctx, const pt2::Graph& graph, const pt2::Argument& o) {
  if (o.is_tensor()) return graph.meta(o.tensor_name(), ctx.node.name).dtype;
  return ctx.dtype_of(o);
}

// Translates `graph`'s nodes into `builder` with `values` binding its inputs (the same driver as the root
// graph); returns the ONNX names of its outputs. A number output (a branch's `return 3`, a loop's `i + 1`)
// is a 0-d tensor: its symbol's value, or a constant made in the subgraph.
std::vector<std::string> translate_graph(TranslateContext& outer, const pt2::Graph& graph, GraphBuilder& builder,
                                         Values& values) {
  translate_nodes(outer.program, graph, builder, outer.opset, values);
  std::vector<std::string> outs;
  for (const auto& o : graph.outputs) {
    if (o.is_tensor() || o.is_symbolic_scalar()) {
      const std::string fx = o.is_tensor() ? o.tensor_name() : o.symbol();
      auto found = values.find(fx);
      if (found == values.end()) outer.fail("subgraph output '" + fx + "' is never produced");
      outs.push_back(found->second);
    } else if (o.is(pt2::ArgKind::as_int) || o.is(pt2::ArgKind::as_sym_int)) {
      outs.push_back(builder.constant_i64({o.as_int()}, true));
    } else if (o.is(pt2::ArgKind::as_float) || o.is(pt2::ArgKind::as_sym_float)) {
      outs.push_back(builder.constant_scalar(o.as_float(), DType::kFloat64));
    } else if (o.is(pt2::ArgKind::as_bool) || o.is(pt2::ArgKind::as_sym_bool)) {
      outs.push_back(builder.constant_scalar(o.as_bool() ? 1.0 : 0.0, DType::kBool));
    } else {
      outer.fail("a subgraph output of kind " + std::string(o.kind_name()) + " is not supported");
    }
  }
  return outs;
}

// Binds a subgraph's formal inputs (tensors, or the symbols of numbers) to ONNX values.
void bind_inputs(TranslateContext& ctx, const pt2::Graph& graph, const std::vector<std::string>& onnx_names,
                 Values& values) {
  if (graph.inputs.size() != onnx_names.size())
    ctx.fail("a subgraph takes " + std::to_string(graph.inputs.size()) + " inputs, " +
             std::to_string(onnx_names.size()) + " were given");
  for (size_t i = 0; i < onnx_names.size(); ++i) {
    const pt2::Argument& formal = graph.inputs[i];
    if (formal.is_tensor())
      values[formal.tensor_name()] = onnx_names[i];
    else if (formal.is_symbolic_scalar())
      values[formal.symbol()] = onnx_names[i];
    else
      ctx.fail("subgraph input #" + std::to_string(i) + " is " + formal.describe() + ", not a tensor or a symbol");
  }
}

// Subgraph outputs get their own names (an Identity each): an output may otherwise be an outer value.
void declare_outputs(GraphBuilder& builder, onnx::GraphProto* g, const std::vector<std::string>& values,
                     const std::vector<DType>& dtypes, const std::string& hint) {
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string name = builder.unique_name(hint + "_out" + std::to_string(i));
    builder.add_node("Identity", {values[i]}, {name});
    auto* vi = g->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(dtypes[i]));
  }
}

void declare_input(onnx::GraphProto* g, const std::string& name, DType dtype, bool scalar) {
  auto* vi = g->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (scalar) tt->mutable_shape();
}

std::vector<DType> output_dtypes(TranslateContext& ctx, size_t count) {
  std::vector<DType> out;
  for (size_t i = 0; i < count; ++i) out.push_back(ctx.output_dtype(i));
  return out;
}

// cond(pred, true_graph, false_graph, operands) -> If(pred) with both branches reading the operands.
void translate_cond(TranslateContext& ctx) {
  pt2::Graph then_storage, else_storage;
  const pt2::Graph& then_graph = subgraph_of(ctx, 1, then_storage);
  const pt2::Graph& else_graph = subgraph_of(ctx, 2, else_storage);
  const std::vector<std::string> operands = outer_tensors(ctx, 3);
  const std::string pred = ctx.value(ctx.positional(0), DType::kBool);
  const std::vector<DType> dtypes = output_dtypes(ctx, ctx.output_count());
  onnx::GraphProto then_proto, else_proto;
  for (auto [graph, proto, label] :
       {std::tuple{&then_graph, &then_proto, "then"}, std::tuple{&else_graph, &else_proto, "else"}}) {
    proto->set_name(ctx.node.name + "_" + label);
    GraphBuilder builder(proto, ctx.graph);
    Values values;
    bind_inputs(ctx, *graph, operands, values);
    const auto outs = translate_graph(ctx, *graph, builder, values);
    if (outs.size() != dtypes.size())
      ctx.fail(std::string(label) + " branch returns " + std::to_string(outs.size()) + " values");
    builder.set_current_node(ctx.node.name, {});
    declare_outputs(builder, proto, outs, dtypes, ctx.node.name + "_" + label);
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < dtypes.size(); ++i) outs.push_back(ctx.output(i));
  auto* node = ctx.emit("If", {pred}, outs);
  auto* t = node->add_attribute();
  t->set_name("then_branch");
  t->set_type(onnx::AttributeProto::GRAPH);
  *t->mutable_g() = then_proto;
  auto* e = node->add_attribute();
  e->set_name("else_branch");
  e->set_type(onnx::AttributeProto::GRAPH);
  *e->mutable_g() = else_proto;
}

// while_loop(cond_graph, body_graph, carried, additional) -> Loop("", cond(carried0), carried...),
// whose body runs body_graph then cond_graph on the new values.
void translate_while_loop(TranslateContext& ctx) {
  pt2::Graph cond_storage, body_storage;
  const pt2::Graph& cond_graph = subgraph_of(ctx, 0, cond_storage);
  const pt2::Graph& body_graph = subgraph_of(ctx, 1, body_storage);
  const std::vector<Operand> carried_operands = outer_operands(ctx, 2);
  const std::vector<std::string> carried = values_of(carried_operands);
  const std::vector<std::string> additional = outer_tensors(ctx, 3);
  const std::vector<DType> dtypes = output_dtypes(ctx, carried.size());

  auto with_additional = [&](std::vector<std::string> v) {
    v.insert(v.end(), additional.begin(), additional.end());
    return v;
  };
  // The first condition, evaluated before the loop in the enclosing graph.
  Values first;
  bind_inputs(ctx, cond_graph, with_additional(carried), first);
  const std::string cond0 =
      ctx.cast_if_needed(translate_graph(ctx, cond_graph, ctx.graph, first).at(0),
                         subgraph_output_dtype(ctx, cond_graph, cond_graph.outputs.at(0)), DType::kBool);
  ctx.graph.set_current_node(ctx.node.name, {});

  onnx::GraphProto body;
  body.set_name(ctx.node.name + "_body");
  GraphBuilder builder(&body, ctx.graph);
  const std::string iter = builder.unique_name(ctx.node.name + "_iter"),
                    cond_in = builder.unique_name(ctx.node.name + "_cond_in");
  declare_input(&body, iter, DType::kInt64, true);
  declare_input(&body, cond_in, DType::kBool, true);
  std::vector<std::string> formal;
  for (size_t i = 0; i < carried.size(); ++i) {
    formal.push_back(builder.unique_name(ctx.node.name + "_carried" + std::to_string(i)));
    declare_input(&body, formal.back(), dtypes[i], false);
  }
  Values body_values;
  bind_inputs(ctx, body_graph, with_additional(formal), body_values);
  const auto next = translate_graph(ctx, body_graph, builder, body_values);
  if (next.size() != carried.size()) ctx.fail("the body returns " + std::to_string(next.size()) + " values");
  Values cond_values;
  bind_inputs(ctx, cond_graph, with_additional(next), cond_values);
  const std::string cond_raw = translate_graph(ctx, cond_graph, builder, cond_values).at(0);
  builder.set_current_node(ctx.node.name, {});
  std::vector<std::string> body_outs{cond_raw};
  body_outs.insert(body_outs.end(), next.begin(), next.end());
  std::vector<DType> body_dtypes{DType::kBool};
  body_dtypes.insert(body_dtypes.end(), dtypes.begin(), dtypes.end());
  declare_outputs(builder, &body, body_outs, body_dtypes, ctx.node.name + "_body");

  std::vector<std::string> inputs{"", cond0};
  inputs.insert(inputs.end(), carried.begin(), carried.end());
  std::vector<std::string> outs;
  for (size_t i = 0; i < carried.size(); ++i) outs.push_back(ctx.output(i));
  auto* node = ctx.emit("Loop", inputs, outs);
  auto* b = node->add_attribute();
  b->set_name("body");
  b->set_type(onnx::AttributeProto::GRAPH);
  *b->mutable_g() = body;
}

// A Scan over axis 0 of the tensors at argument `xs_at`, carrying those at `init_at` (none when negative);
// the combine graph (argument 0) takes (carry..., x_t..., additional...) and returns (next_carry..., y_t...).
void emit_scan(TranslateContext& ctx, int init_at, size_t xs_at, size_t additional_at) {
  pt2::Graph storage;
  const pt2::Graph& combine = subgraph_of(ctx, 0, storage);
  const std::vector<std::string> init = init_at < 0 ? std::vector<std::string>{} : outer_tensors(ctx, init_at);
  const std::vector<std::string> xs = outer_tensors(ctx, xs_at);
  const std::vector<std::string> additional = outer_tensors(ctx, additional_at);
  if (xs.empty()) ctx.fail("a scan without scanned inputs is not supported");
  const size_t outputs = ctx.output_count();
  if (outputs < init.size()) ctx.fail("scan returns fewer values than it carries");
  const std::vector<DType> dtypes = output_dtypes(ctx, outputs);

  onnx::GraphProto body;
  body.set_name(ctx.node.name + "_body");
  GraphBuilder builder(&body, ctx.graph);
  std::vector<std::string> formal;
  const auto& xs_arg = ctx.positional(xs_at).tensor_names();
  for (size_t i = 0; i < init.size() + xs.size(); ++i) {
    formal.push_back(builder.unique_name(ctx.node.name + (i < init.size() ? "_carry" : "_x") + std::to_string(i)));
    const DType dt = i < init.size() ? dtypes[i] : ctx.fx_graph.meta(xs_arg[i - init.size()], ctx.node.name).dtype;
    declare_input(&body, formal.back(), dt, false);
  }
  std::vector<std::string> bound = formal;
  bound.insert(bound.end(), additional.begin(), additional.end());
  Values values;
  bind_inputs(ctx, combine, bound, values);
  const auto outs = translate_graph(ctx, combine, builder, values);
  if (outs.size() != outputs)
    ctx.fail("the combine graph returns " + std::to_string(outs.size()) + " values, the node " +
             std::to_string(outputs));
  builder.set_current_node(ctx.node.name, {});
  declare_outputs(builder, &body, outs, dtypes, ctx.node.name + "_body");

  std::vector<std::string> inputs = init;
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  std::vector<std::string> node_outs;
  for (size_t i = 0; i < outputs; ++i) node_outs.push_back(ctx.output(i));
  auto* node = ctx.emit("Scan", inputs, node_outs);
  set_attr(node, "num_scan_inputs", static_cast<int64_t>(xs.size()));
  auto* b = node->add_attribute();
  b->set_name("body");
  b->set_type(onnx::AttributeProto::GRAPH);
  *b->mutable_g() = body;
}

// scan(combine_graph, init, xs, additional) -> Scan(init..., xs...).
void translate_scan(TranslateContext& ctx) { emit_scan(ctx, 1, 2, 3); }

// map_impl(body, xs, args) -> a Scan without carries: body(x_t..., args...) stacked along axis 0.
void translate_map(TranslateContext& ctx) { emit_scan(ctx, -1, 1, 2); }

// Binds a grad-mode region's formal inputs to the node's arguments #2...: tensors and symbolic scalars (a
// sequence length the region builds a position table from) by value; a constant argument is baked into
// the region's own nodes already, so its formal input needs no binding.
void bind_region_arguments(TranslateContext& ctx, const pt2::Graph& body, Values& values) {
  const size_t first = 2, count = ctx.node.inputs.size() > first ? ctx.node.inputs.size() - first : 0;
  if (body.inputs.size() != count)
    ctx.fail("the region takes " + std::to_string(body.inputs.size()) + " inputs, the node passes " +
             std::to_string(count));
  for (size_t i = 0; i < count; ++i) {
    const pt2::Argument& a = ctx.positional(first + i);
    const pt2::Argument& formal = body.inputs[i];
    const bool by_value = a.is_tensor() || a.is_symbolic_scalar();
    if (!by_value && (formal.is_tensor() || formal.is_symbolic_scalar()))
      ctx.fail("region argument #" + std::to_string(first + i) + " (" + a.describe() + ") feeds the region's input " +
               formal.describe());
    if (!by_value) continue;
    const std::string name = formal.is_tensor()            ? formal.tensor_name()
                             : formal.is_symbolic_scalar() ? formal.symbol()
                                                           : "";
    if (name.empty())
      ctx.fail("region argument #" + std::to_string(first + i) + " (" + a.describe() + ") feeds a constant input");
    values[name] = ctx.value(a, ctx.dtype_of(a));
  }
}

// wrap_with_set_grad_enabled(enabled, subgraph, args...): a torch.no_grad() / enable_grad() region kept by
// the training IR (rotary embeddings compute under no_grad). ONNX has no gradients: the region is inlined.
void translate_grad_mode_region(TranslateContext& ctx) {
  pt2::Graph storage;
  const pt2::Graph& body = subgraph_of(ctx, 1, storage);
  Values values;
  bind_region_arguments(ctx, body, values);
  const auto outs = translate_graph(ctx, body, ctx.graph, values);
  if (outs.size() != ctx.output_count())
    ctx.fail("the region returns " + std::to_string(outs.size()) + " values, the node has " +
             std::to_string(ctx.output_count()) + " outputs");
  ctx.graph.set_current_node(ctx.node.name, {});
  for (size_t i = 0; i < outs.size(); ++i) ctx.alias_output(i, outs[i]);
}

}  // namespace

PARITY_TRANSLATION("higher_order::wrap_with_set_grad_enabled", translate_grad_mode_region, 18);
// The region is inlined and each of its nodes meets the complex rules itself (LLaMA-4's rotary table).
PARITY_COMPLEX_TRANSPARENT("higher_order::wrap_with_set_grad_enabled");
PARITY_TRANSLATION("higher_order::cond", translate_cond, 18);
PARITY_TRANSLATION("higher_order::while_loop", translate_while_loop, 18);
PARITY_TRANSLATION("higher_order::scan", translate_scan, 18);
PARITY_TRANSLATION("higher_order::map_impl", translate_map, 18);

}  // namespace parity::exporter
