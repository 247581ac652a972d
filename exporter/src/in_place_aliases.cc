// Training-IR programs (strict and non-strict captures) are not functional: `add_ = aten.add_(buf, 1)` makes
// `add_` the same tensor as `buf`, later ops read and write either name, and a view taken before a write
// sees the write. Translation is value-based (each FX name is bound to one ONNX value), so this pass
// rewrites the graph into a form where names are values, as run_decompositions()'s functionalisation
// would:
//   - the result of an in-place op is renamed to the tensor it wrote into (its `self`), everywhere after it
//     (node inputs, graph outputs, output specs): every read of either name then sees the newest write;
//   - a view read after its base (or a sibling view) was written is taken again from the base's newest
//     value (a copy of the view node under a new name), so it sees the write too.
// The translator then keeps each name bound to its newest value (rebind_in_place_result, write_back_to_base)
// and a mutation output is simply the placeholder's value after the graph.
#include <functional>
#include <map>
#include <set>

#include "in_place_aliases.h"

namespace parity::pt2 {
namespace {

using Rename = std::function<std::string(const std::string&)>;

// `a` with every tensor name passed through `rename` (lists, optional lists and nested forms included).
schema::Argument renamed(const schema::Argument& a, const Rename& rename) {
  using K = ArgKind;
  schema::Argument out = a;
  switch (a.kind()) {
    case K::as_tensor:
      out.set_as_tensor({rename(a.as_tensor().name)});
      break;
    case K::as_tensors: {
      std::vector<schema::TensorArgument> v;
      for (const auto& t : a.as_tensors()) v.push_back({rename(t.name)});
      out.set_as_tensors(std::move(v));
      break;
    }
    case K::as_optional_tensors: {
      std::vector<schema::OptionalTensorArgument> v = a.as_optional_tensors();
      for (auto& t : v)
        if (t.is(schema::OptionalTensorArgument::Kind::as_tensor)) t.set_as_tensor({rename(t.as_tensor().name)});
      out.set_as_optional_tensors(std::move(v));
      break;
    }
    case K::as_optional_tensor: {
      schema::OptionalTensorArgument t = a.as_optional_tensor();
      if (t.is(schema::OptionalTensorArgument::Kind::as_tensor)) t.set_as_tensor({rename(t.as_tensor().name)});
      out.set_as_optional_tensor(std::move(t));
      break;
    }
    case K::as_nested_tensors: {
      auto v = a.as_nested_tensors();
      for (auto& list : v)
        for (auto& t : list) t.name = rename(t.name);
      out.set_as_nested_tensors(std::move(v));
      break;
    }
    case K::as_string_to_argument: {
      std::map<std::string, schema::Argument> m;
      for (const auto& [k, v] : a.as_string_to_argument()) m[k] = renamed(v, rename);
      out.set_as_string_to_argument(std::move(m));
      break;
    }
    default:
      break;
  }
  return out;
}

class AliasResolver {
 public:
  explicit AliasResolver(Graph& g) : g_(g) {}

  void run(std::vector<OutputSpec>& output_specs) {
    for (const auto& in : g_.inputs)
      if (in.is_tensor()) taken_.insert(in.tensor_name());
    for (const auto& n : g_.nodes) {
      taken_.insert(n.name);
      for (const auto& o : output_tensor_names(n)) taken_.insert(o);
    }
    for (const auto& [name, meta] : g_.tensor_values) taken_.insert(name);
    std::vector<Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    for (Node& n : nodes) visit(std::move(n));
    const Rename current = [this](const std::string& name) { return fresh(resolve(name)); };
    for (auto& o : g_.outputs) o = Argument(renamed(o.typed(), current));
    for (auto& s : output_specs) s.arg = Argument(renamed(s.arg.typed(), current));
  }

 private:
  struct View {
    size_t node = 0;       // the node (in g_.nodes) that made it
    std::string base;      // the tensor it views, by its name when the node ran
    std::string original;  // the view's name in the captured graph
    int version = 0;       // the base family's version it reflects
  };

  // The name an FX value is read under now: in-place results are their target, views their newest copy.
  std::string resolve(const std::string& name) const {
    std::string n = name;
    if (auto a = alias_.find(n); a != alias_.end()) n = a->second;
    if (auto l = latest_.find(n); l != latest_.end()) n = l->second;
    return n;
  }

  std::string root(std::string name) const {
    for (auto v = views_.find(name); v != views_.end(); v = views_.find(name)) name = v->second.base;
    return name;
  }

  // `name` if it reflects every write to its base so far, else a new copy of its view node taken from the
  // base's newest value (the base first made current itself).
  std::string fresh(const std::string& name) {
    auto v = views_.find(name);
    if (v == views_.end()) return name;
    const View view = v->second;
    const std::string base = fresh(view.base);
    if (base == view.base && view.version == version_[root(name)]) return name;
    Node copy = g_.nodes[view.node];
    for (auto& in : copy.inputs)
      if (in.name == "self") in.arg = Argument::tensor(base);
    const size_t index = g_.nodes.size();
    std::string result;
    for (auto& o : copy.outputs) {
      const Rename regenerate = [&](const std::string& old) {
        const std::string original = views_.count(old) ? views_.at(old).original : old;
        const std::string made = unique(original + "_after_write");
        if (auto meta = g_.tensor_values.find(old); meta != g_.tensor_values.end())
          g_.tensor_values[made] = meta->second;
        views_[made] = {index, base, original, version_[root(base)]};
        latest_[original] = made;
        if (old == name) result = made;
        return made;
      };
      o = Argument(renamed(o.typed(), regenerate));
    }
    copy.name = unique(copy.name + "_after_write");
    g_.nodes.push_back(std::move(copy));
    return result;
  }

  std::string unique(const std::string& stem) {
    std::string name = stem;
    for (int i = 1; taken_.count(name); ++i) name = stem + "_" + std::to_string(i);
    taken_.insert(name);
    return name;
  }

  void written(const std::string& name) {
    const int v = ++version_[root(name)];
    // The translator writes the new value back through the chain of views to the base: all current.
    for (auto it = views_.find(name); it != views_.end(); it = views_.find(it->second.base)) it->second.version = v;
  }

  void visit(Node n) {
    const Rename current = [this](const std::string& name) { return fresh(resolve(name)); };
    for (auto& in : n.inputs) in.arg = Argument(renamed(in.arg.typed(), current));
    const OpTarget t = OpTarget::parse(n.target);
    const size_t index = g_.nodes.size();
    if (is_view_target(n.target) && !t.is_in_place()) {
      const Argument* self = n.input("self");
      if (self && self->is_tensor())
        for (const auto& o : output_tensor_names(n))
          views_[o] = {index, self->tensor_name(), o, version_[root(self->tensor_name())]};
    }
    const std::vector<std::string> writes = tensors_written_by(n);
    if (t.is_in_place() && !writes.empty() && !n.outputs.empty() && n.outputs[0].is_tensor())
      alias_[n.outputs[0].tensor_name()] = writes[0];
    g_.nodes.push_back(std::move(n));
    for (const auto& w : writes) written(w);
  }

  Graph& g_;
  std::map<std::string, std::string> alias_;   // in-place result -> the tensor it is
  std::map<std::string, std::string> latest_;  // captured view name -> its newest copy
  std::map<std::string, View> views_;          // every view value (captured or copied)
  std::map<std::string, int> version_;         // per base tensor: how many writes it has seen
  std::set<std::string> taken_;                // names in use (for the copies' names)
};

}  // namespace

// The tensors a node writes: `self` of an in-place aten op, the running statistics of batch norm in
// training mode (mutable arguments that are not `self`).
std::vector<std::string> tensors_written_by(const Node& n) {
  std::vector<std::string> out;
  const OpTarget t = OpTarget::parse(n.target);
  if (t.is_in_place() && !n.inputs.empty() && n.inputs[0].arg.is_tensor()) out.push_back(n.inputs[0].arg.tensor_name());
  const Argument* training = n.input("training");
  if ((t.op == "batch_norm" || t.op == "_native_batch_norm_legit" || t.op == "native_batch_norm") && training &&
      training->is(ArgKind::as_bool) && training->as_bool())
    for (const char* arg : {"running_mean", "running_var"})
      if (const Argument* a = n.input(arg); a && a->is_tensor()) out.push_back(a->tensor_name());
  return out;
}

std::vector<std::string> output_tensor_names(const Node& n) {
  std::vector<std::string> out;
  for (const auto& o : n.outputs) {
    if (o.is(ArgKind::as_tensor)) out.push_back(o.tensor_name());
    if (o.is(ArgKind::as_tensors))
      for (const auto& t : o.tensor_names()) out.push_back(t);
  }
  return out;
}

void resolve_in_place_aliases(Graph& graph, std::vector<OutputSpec>& output_specs) {
  bool any_write = false;
  for (const auto& n : graph.nodes) any_write = any_write || !tensors_written_by(n).empty();
  if (!any_write) return;  // functional programs (decomposed captures) are left exactly as captured
  AliasResolver(graph).run(output_specs);
}

}  // namespace parity::pt2
