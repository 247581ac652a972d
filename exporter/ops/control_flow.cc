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

std::vector<std::string> outer_tensors(TranslateContext& ctx, size_t i) {
  const pt2::Argument& a = ctx.positional(i);
  std::vector<std::string> out;
  if (!a.is(pt2::ArgKind::as_tensors))
    ctx.fail("argument #" + std::to_string(i) + " is not a tensor list: " + a.describe());
  for (const auto& fx : a.tensor_names()) {
    const pt2::Argument t = pt2::Argument::tensor(fx);
    out.push_back(ctx.value(t, ctx.dtype_of(t)));
  }
  return out;
}

// Translates `graph`'s nodes into `builder` with `values` binding its inputs (the same driver as the root
// graph); returns the ONNX names of its outputs.
std::vector<std::string> translate_graph(TranslateContext& outer, const pt2::Graph& graph, GraphBuilder& builder,
                                         Values& values) {
  translate_nodes(outer.program, graph, builder, outer.opset, values);
  std::vector<std::string> outs;
  for (const auto& o : graph.outputs) {
    if (!o.is_tensor()) outer.fail("a subgraph output of kind " + std::string(o.kind_name()) + " is not supported");
    auto found = values.find(o.tensor_name());
    if (found == values.end()) outer.fail("subgraph output '" + o.tensor_name() + "' is never produced");
    outs.push_back(found->second);
  }
  return outs;
}

void bind_inputs(TranslateContext& ctx, const pt2::Graph& graph, const std::vector<std::string>& onnx_names,
                 Values& values) {
  if (graph.inputs.size() != onnx_names.size())
    ctx.fail("a subgraph takes " + std::to_string(graph.inputs.size()) + " inputs, " +
             std::to_string(onnx_names.size()) + " were given");
  for (size_t i = 0; i < onnx_names.size(); ++i) values[graph.inputs[i].tensor_name()] = onnx_names[i];
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
  const std::vector<std::string> carried = outer_tensors(ctx, 2);
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
                         cond_graph.meta(cond_graph.outputs.at(0).tensor_name(), ctx.node.name).dtype, DType::kBool);
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
