#include "passes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "fold_eval.h"
#include "parity/element.h"
#include "parity/error.h"
#include "parity/internal/onnx_tensor.h"
#include "passes_internal.h"

namespace parity::exporter {
namespace pass_detail {

// ---------------------------------------------------------------------------------------------
// Graph helpers

bool default_domain(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

std::vector<const onnx::GraphProto*> subgraphs(const onnx::NodeProto& n) {
  std::vector<const onnx::GraphProto*> out;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
  return out;
}

std::vector<onnx::GraphProto*> subgraphs(onnx::NodeProto& n) {
  std::vector<onnx::GraphProto*> out;
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) out.push_back(a.mutable_g());
    for (auto& g : *a.mutable_graphs()) out.push_back(&g);
  }
  return out;
}

Names defined_names(const onnx::GraphProto& g) {
  Names defined;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty()) defined.insert(o);
  return defined;
}

Names output_names(const onnx::GraphProto& g) {
  Names out;
  for (const auto& v : g.output()) out.insert(v.name());
  return out;
}

// Values of enclosing scopes that `g`, or a graph nested in it, reads.
void collect_outer_reads(const onnx::GraphProto& g, Names& out) {
  Names reads = output_names(g);
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty()) reads.insert(in);
    for (const auto* s : subgraphs(n)) collect_outer_reads(*s, reads);
  }
  const Names defined = defined_names(g);
  for (const auto& r : reads)
    if (!defined.count(r)) out.insert(r);
}

// Every value a node reads: its explicit inputs, then the outer values its subgraphs read.
std::vector<std::string> node_reads(const onnx::NodeProto& n) {
  std::vector<std::string> reads;
  for (const auto& in : n.input())
    if (!in.empty()) reads.push_back(in);
  Names outer;
  for (const auto* s : subgraphs(n)) collect_outer_reads(*s, outer);
  reads.insert(reads.end(), outer.begin(), outer.end());
  return reads;
}

// How often each value is read in `g`; a graph output counts as a read.
std::map<std::string, int> read_counts(const onnx::GraphProto& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.node())
    for (const auto& r : node_reads(n)) ++counts[r];
  for (const auto& v : g.output()) ++counts[v.name()];
  return counts;
}

std::map<std::string, int> producers(const onnx::GraphProto& g) {
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  return producer;
}

void rename(std::string& name, const Renames& renames) {
  auto it = renames.find(name);
  if (it != renames.end()) name = it->second;
}

// Applies `renames` to every read in `g` and in its nested subgraphs (where a name the subgraph defines
// itself shadows the outer one). `g`'s own outputs are left alone unless `outputs_too`: the callers
// never rename a graph output away, but a nested graph may output an outer value directly.
void rename_reads(onnx::GraphProto& g, const Renames& renames, bool outputs_too) {
  if (renames.empty()) return;
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) rename(in, renames);
    for (auto* s : subgraphs(n)) {
      Renames inner = renames;
      for (const auto& d : defined_names(*s)) inner.erase(d);
      rename_reads(*s, inner, true);
    }
  }
  if (outputs_too)
    for (auto& v : *g.mutable_output()) rename(*v.mutable_name(), renames);
}

void collect_nested_outputs(const onnx::GraphProto& g, Names& out) {
  for (const auto& n : g.node())
    for (const auto* s : subgraphs(n)) {
      for (const auto& v : s->output()) out.insert(v.name());
      collect_nested_outputs(*s, out);
    }
}

// Names no pass may rename away or merge into another (see passes.h).
Names protected_names(const onnx::GraphProto& g, const OptimizeOptions& options) {
  Names keep = options.protected_names;
  for (const auto& v : g.input()) keep.insert(v.name());
  for (const auto& v : g.output()) keep.insert(v.name());
  for (const auto& v : g.value_info()) keep.insert(v.name());
  collect_nested_outputs(g, keep);
  return keep;
}

int erase_nodes(onnx::GraphProto& g, const std::vector<bool>& drop) {
  return erase_if(g.mutable_node(), [&](const onnx::NodeProto&, int i) { return drop[static_cast<size_t>(i)]; });
}

// Turns a single-output node into Identity(input), keeping its name, output and metadata.
void make_identity(onnx::NodeProto& n, const std::string& input) {
  n.set_op_type("Identity");
  n.clear_domain();
  n.clear_input();
  n.add_input(input);
  n.clear_attribute();
}

// Names an Identity must keep: graph inputs and outputs, nested outputs and the caller's protected names.
// A name protected only by its value_info entry (an FX intermediate) may go: an Identity's output is
// the same value as its input, so the verifier still finds that value under the input's name.
Names identity_keep(const onnx::GraphProto& g, const OptimizeOptions& options) {
  Names keep = options.protected_names;
  for (const auto& v : g.input()) keep.insert(v.name());
  for (const auto& v : g.output()) keep.insert(v.name());
  collect_nested_outputs(g, keep);
  return keep;
}

}  // namespace pass_detail

namespace {

using namespace pass_detail;

// ---------------------------------------------------------------------------------------------
// What is known about values at export time: declared types and small constants, per graph scope.

struct ValueType {
  DType dtype = DType::kUndefined;
  bool ranked = false;
  std::vector<int64_t> dims;        // -1 where not static
  std::vector<std::string> params;  // the dim_param of a non-static dim ("" = unknown)

  bool fully_static() const {
    return ranked && std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
  }
  // Every dim is static or named: two such types with equal dims describe equal shapes.
  bool fully_named() const {
    if (!ranked) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] < 0 && params[i].empty()) return false;
    return true;
  }
  bool operator==(const ValueType& o) const {
    return dtype == o.dtype && ranked == o.ranked && dims == o.dims && params == o.params;
  }
};

std::optional<ValueType> declared_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return std::nullopt;
  const auto& tt = type.tensor_type();
  ValueType v;
  v.dtype = static_cast<DType>(tt.elem_type());
  v.ranked = tt.has_shape();
  for (const auto& d : tt.shape().dim()) {
    const bool known = d.has_dim_value() && d.dim_value() >= 0;
    v.dims.push_back(known ? d.dim_value() : -1);
    v.params.push_back(known ? "" : d.dim_param());
  }
  return v;
}

std::optional<Tensor> constant_node_value(const onnx::NodeProto& n) {
  if (n.attribute_size() != 1) return std::nullopt;
  const auto& a = n.attribute(0);
  if (a.name() == "value") return tensor_from_proto(a.t(), "Constant '" + n.name() + "'");
  if (a.name() == "value_int") return int64_tensor({a.i()}, true);
  if (a.name() == "value_ints") return int64_tensor(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  if (a.name() == "value_float") return Tensor::scalar<float>(DType::kFloat32, a.f());
  if (a.name() == "value_floats") {
    Tensor t(DType::kFloat32, {a.floats_size()});
    std::copy(a.floats().begin(), a.floats().end(), t.data<float>());
    return t;
  }
  return std::nullopt;  // strings and sparse tensors are not folded
}

bool small_enough(const onnx::TensorProto& t, int64_t limit) {
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && numel > limit / d)) return false;
    numel *= d;
  }
  return numel <= limit;
}

class Scope {
 public:
  // Initializers named in `options.protected_names` (the module's parameters and buffers) are not
  // treated as constants: folding them would make the model's state vanish into anonymous values.
  Scope(const onnx::GraphProto& g, const Scope* parent, const OptimizeOptions& options)
      : parent_(parent), defined_(defined_names(g)) {
    const int64_t max_elements = options.max_folded_elements;
    for (const auto& v : g.input()) declare(v);
    for (const auto& v : g.output()) declare(v);
    for (const auto& v : g.value_info()) declare(v);
    Names inputs;
    for (const auto& v : g.input()) inputs.insert(v.name());
    for (const auto& t : g.initializer()) {
      if (inputs.count(t.name())) continue;  // an input may override it: not a constant
      ValueType type{static_cast<DType>(t.data_type()), true, {t.dims().begin(), t.dims().end()}, {}};
      type.params.assign(type.dims.size(), "");
      add_type(t.name(), type);
      if (t.data_location() != onnx::TensorProto::EXTERNAL && small_enough(t, max_elements) &&
          !options.protected_names.count(t.name()))
        try_add(t.name(), [&] { return std::optional<Tensor>(tensor_from_proto(t, "initializer")); });
    }
    for (const auto& n : g.node())
      if (n.op_type() == "Constant" && default_domain(n) && n.output_size() == 1)
        try_add(
            n.output(0), [&] { return constant_node_value(n); }, max_elements);
  }

  const Tensor* constant(const std::string& name) const {
    auto it = constants_.find(name);
    if (it != constants_.end()) return &it->second;
    return defined_.count(name) || !parent_ ? nullptr : parent_->constant(name);
  }
  const ValueType* type(const std::string& name) const {
    auto it = types_.find(name);
    if (it != types_.end()) return &it->second;
    return defined_.count(name) || !parent_ ? nullptr : parent_->type(name);
  }
  // The dtype of a value, from its declared type or its constant value.
  DType dtype(const std::string& name) const {
    if (const Tensor* t = constant(name)) return t->dtype();
    const ValueType* t = type(name);
    return t ? t->dtype : DType::kUndefined;
  }
  void add_constant(const std::string& name, Tensor t) { constants_[name] = std::move(t); }

 private:
  void declare(const onnx::ValueInfoProto& v) {
    if (auto t = declared_type(v.type())) add_type(v.name(), *t);
  }
  // Two different declarations of one name make it unknown rather than trusted.
  void add_type(const std::string& name, const ValueType& t) {
    if (conflicting_.count(name)) return;
    auto [it, inserted] = types_.emplace(name, t);
    if (!inserted && !(it->second == t)) {
      types_.erase(it);
      conflicting_.insert(name);
    }
  }
  template <typename Make>
  void try_add(const std::string& name, Make make, int64_t max_elements = -1) {
    try {
      std::optional<Tensor> t = make();
      if (t && (max_elements < 0 || t->numel() <= max_elements)) constants_[name] = std::move(*t);
    } catch (const Error&) {
      // malformed data: not a constant the exporter relies on; the runtime reports it
    }
  }

  const Scope* parent_;
  Names defined_;
  std::map<std::string, Tensor> constants_;
  std::map<std::string, ValueType> types_;
  Names conflicting_;
};

// ---------------------------------------------------------------------------------------------
// Dead code

int remove_dead_in(onnx::GraphProto& g) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += remove_dead_in(*s);  // first: their outer reads may shrink

  const auto producer = producers(g);
  std::vector<bool> live(static_cast<size_t>(g.node_size()), false);
  Names reached;
  std::vector<std::string> work;
  for (const auto& v : g.output()) work.push_back(v.name());
  while (!work.empty()) {
    const std::string name = std::move(work.back());
    work.pop_back();
    if (!reached.insert(name).second) continue;
    auto p = producer.find(name);
    if (p == producer.end() || live[static_cast<size_t>(p->second)]) continue;
    live[static_cast<size_t>(p->second)] = true;
    for (auto& r : node_reads(g.node(p->second))) work.push_back(std::move(r));
  }

  Names removed, inputs;
  for (const auto& v : g.input()) inputs.insert(v.name());
  for (int i = 0; i < g.node_size(); ++i)
    if (!live[static_cast<size_t>(i)])
      for (const auto& o : g.node(i).output()) removed.insert(o);
  changes += erase_if(g.mutable_node(), [&](const onnx::NodeProto&, int i) { return !live[static_cast<size_t>(i)]; });
  changes += erase_if(g.mutable_initializer(), [&](const onnx::TensorProto& t, int) {
    if (reached.count(t.name()) || inputs.count(t.name())) return false;
    removed.insert(t.name());
    return true;
  });
  erase_if(g.mutable_value_info(), [&](const onnx::ValueInfoProto& v, int) { return removed.count(v.name()) != 0; });
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Constant folding

std::optional<Tensor> fold_node(const onnx::NodeProto& n, const Scope& scope, int64_t limit) {
  const bool shape_query = n.op_type() == "Shape" || n.op_type() == "Size";
  if (shape_query && n.input_size() == 1 && !scope.constant(n.input(0))) {
    const ValueType* t = scope.type(n.input(0));
    if (!t || !t->fully_static()) return std::nullopt;
    if (n.op_type() == "Size") {
      try {
        return int64_tensor({checked_numel(t->dims)}, true);
      } catch (const Error&) {
        return std::nullopt;
      }
    }
    const auto [begin, end] = shape_op_range(n, static_cast<int64_t>(t->dims.size()));
    return int64_tensor(std::vector<int64_t>(t->dims.begin() + begin, t->dims.begin() + end));
  }
  std::vector<const Tensor*> inputs;
  for (const auto& name : n.input()) {
    const Tensor* t = name.empty() ? nullptr : scope.constant(name);
    if (!name.empty() && !t) return std::nullopt;
    inputs.push_back(t);
  }
  return evaluate_constant(n, inputs, limit);
}

int fold_in(onnx::GraphProto& g, const Scope* parent, const OptimizeOptions& options) {
  Scope scope(g, parent, options);
  const Names outputs = output_names(g);
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  int changes = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    for (auto* s : subgraphs(n)) changes += fold_in(*s, &scope, options);
    // A graph output keeps a producing node: ONNX wants outputs distinct from initializers.
    if (!default_domain(n) || !is_foldable_op(n.op_type()) || n.output_size() != 1 || n.output(0).empty() ||
        outputs.count(n.output(0)))
      continue;
    std::optional<Tensor> value = fold_node(n, scope, options.max_folded_elements);
    if (!value) continue;
    tensor_to_proto(*value, n.output(0), g.add_initializer());
    scope.add_constant(n.output(0), std::move(*value));
    drop[static_cast<size_t>(i)] = true;
    ++changes;
  }
  erase_nodes(g, drop);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Common subexpressions

bool is_random(const onnx::NodeProto& n) {
  static const Names random = {"RandomNormal",      "RandomNormalLike", "RandomUniform",
                               "RandomUniformLike", "Multinomial",      "Bernoulli"};
  if (random.count(n.op_type())) return true;
  // Dropout is deterministic only when no training_mode input can switch it on.
  return n.op_type() == "Dropout" && n.input_size() > 2 && !n.input(2).empty();
}

bool cse_candidate(const onnx::NodeProto& n) {
  // Identity is remove_identities' job; custom domains may hide side effects or randomness.
  return default_domain(n) && n.op_type() != "Identity" && n.output_size() > 0 && !is_random(n) && subgraphs(n).empty();
}

void append_field(std::string& key, const std::string& field) { key += std::to_string(field.size()) + ":" + field; }

// Everything that decides a node's results: op, inputs, attributes (in name order), output arity.
std::string node_key(const onnx::NodeProto& n) {
  std::string key;
  append_field(key, n.op_type());
  for (const auto& in : n.input()) append_field(key, in);
  std::vector<std::pair<std::string, std::string>> attrs;
  for (const auto& a : n.attribute()) attrs.emplace_back(a.name(), a.SerializeAsString());
  std::sort(attrs.begin(), attrs.end());
  key += "|";
  for (const auto& [name, bytes] : attrs) append_field(key, bytes);
  key += "|";
  for (const auto& o : n.output()) key += o.empty() ? '0' : '1';
  return key;
}

std::optional<std::string> initializer_key(const onnx::TensorProto& t, int64_t limit) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL || !small_enough(t, limit)) return std::nullopt;
  try {
    const Tensor v = tensor_from_proto(t, "initializer");
    // The proto's data type, not the tensor's: an INT4 initializer reads back as int8 values.
    std::string key = std::to_string(t.data_type()) + shape_str(v.shape());
    key.append(static_cast<const char*>(v.raw()), v.nbytes());
    return key;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Later copies of a small initializer read the first one. A protected initializer is never dropped,
// but may be the one the others merge into; one a graph input can override takes no part.
int merge_initializers(onnx::GraphProto& g, const Names& keep, int64_t limit, Renames& renames) {
  Names inputs;
  for (const auto& v : g.input()) inputs.insert(v.name());
  std::map<std::string, std::string> first;
  return erase_if(g.mutable_initializer(), [&](const onnx::TensorProto& t, int) {
    if (inputs.count(t.name())) return false;
    const auto key = initializer_key(t, limit);
    if (!key) return false;
    auto [it, inserted] = first.emplace(*key, t.name());
    if (inserted || keep.count(t.name())) return false;
    renames[t.name()] = it->second;
    return true;
  });
}

// Follows renames to their end (a -> b -> c reads c); the passes never create a cycle.
void resolve_chains(Renames& renames) {
  for (auto& [from, to] : renames)
    for (size_t hops = 0; hops < renames.size(); ++hops) {
      auto it = renames.find(to);
      if (it == renames.end() || it->second == from) break;
      to = it->second;
    }
}

// Adds `renames` (removed name -> the name its value lives on as) to options.aliases, chains resolved.
void record_aliases(const Renames& renames, const OptimizeOptions& options) {
  if (!options.aliases) return;
  for (const auto& [from, to] : renames) (*options.aliases)[from] = to;
  resolve_chains(*options.aliases);
}

int cse_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += cse_in(*s, options);
  const Names keep = protected_names(g, options);
  Renames renames;
  changes += merge_initializers(g, keep, options.max_folded_elements, renames);

  std::map<std::string, int> first;
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    for (auto& in : *n.mutable_input()) rename(in, renames);  // earlier merges make later nodes equal
    if (!cse_candidate(n)) continue;
    auto [it, inserted] = first.emplace(node_key(n), i);
    if (inserted) continue;
    const onnx::NodeProto& original = g.node(it->second);
    const bool named = std::any_of(n.output().begin(), n.output().end(), [&](const auto& o) { return keep.count(o); });
    if (named) {  // its name must stay: a cheap copy of the first result instead
      if (n.output_size() != 1) continue;
      make_identity(n, original.output(0));
    } else {
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty()) renames[n.output(k)] = original.output(k);
      drop[static_cast<size_t>(i)] = true;
    }
    ++changes;
  }
  rename_reads(g, renames, false);  // explicit inputs are done; this reaches subgraph reads
  erase_nodes(g, drop);
  record_aliases(renames, options);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Identities

int identities_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += identities_in(*s, options);
  const Names keep = identity_keep(g, options);
  const Names outputs = output_names(g);
  const auto producer = producers(g);
  Names gone;  // names no value carries any more: their value_info entries go too
  Renames renames;
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    for (auto& in : *n.mutable_input())
      for (size_t hops = 0; hops <= renames.size() && renames.count(in); ++hops) rename(in, renames);
    if (n.op_type() != "Identity" || !default_domain(n) || n.input_size() != 1 || n.output_size() != 1) continue;
    const std::string x = n.input(0), y = n.output(0);
    if (x.empty() || y.empty()) continue;
    if (!keep.count(y)) {  // readers of y read x instead
      renames[y] = x;
      gone.insert(y);
    } else {
      // y's name must stay (a graph output): x's producer makes y itself and x's readers read y. When x
      // is an input, an initializer or another output, ONNX needs this Identity as the alias.
      auto p = producer.find(x);
      if (p == producer.end() || keep.count(x) || outputs.count(x) || drop[static_cast<size_t>(p->second)]) continue;
      for (auto& o : *g.mutable_node(p->second)->mutable_output())
        if (o == x) o = y;
      renames[x] = y;
      gone.insert(x);
    }
    drop[static_cast<size_t>(i)] = true;
    ++changes;
  }
  resolve_chains(renames);
  for (auto& n : *g.mutable_node())
    for (auto& in : *n.mutable_input()) rename(in, renames);
  rename_reads(g, renames, false);
  erase_nodes(g, drop);
  erase_if(g.mutable_value_info(), [&](const onnx::ValueInfoProto& v, int) { return gone.count(v.name()) != 0; });
  record_aliases(renames, options);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Shape chains

// Gather(Shape(x), constant indices) where every gathered dim of x is static: the dims themselves.
std::optional<Tensor> static_dims_gathered(const onnx::GraphProto& g, const onnx::NodeProto& gather,
                                           const std::map<std::string, int>& producer, const Scope& scope,
                                           int64_t limit) {
  if (gather.input_size() != 2) return std::nullopt;
  auto p = producer.find(gather.input(0));
  if (p == producer.end()) return std::nullopt;
  const onnx::NodeProto& shape = g.node(p->second);
  const int64_t axis = int_attribute(gather, "axis", 0);
  if (shape.op_type() != "Shape" || !default_domain(shape) || shape.input_size() != 1 || (axis != 0 && axis != -1))
    return std::nullopt;
  const ValueType* type = scope.type(shape.input(0));
  const Tensor* indices = scope.constant(gather.input(1));
  if (!type || !type->ranked || !indices || indices->numel() > limit) return std::nullopt;
  const auto picked = int_values(*indices);
  if (!picked) return std::nullopt;
  const auto [begin, end] = shape_op_range(shape, static_cast<int64_t>(type->dims.size()));
  const int64_t count = end - begin;
  std::vector<int64_t> dims;
  for (int64_t k : *picked) {
    if (k < -count || k >= count) return std::nullopt;
    const int64_t d = type->dims[static_cast<size_t>(begin + (k < 0 ? k + count : k))];
    if (d < 0) return std::nullopt;
    dims.push_back(d);
  }
  return int64_tensor(dims).reshaped(indices->shape());
}

// The declared types of a node's first input and its output agree, dim for dim (static or named).
bool same_declared_shape(const onnx::NodeProto& n, const Scope& scope) {
  const ValueType* in = scope.type(n.input(0));
  const ValueType* out = scope.type(n.output(0));
  return in && out && in->fully_named() && *in == *out;
}

bool reshape_is_noop(const onnx::NodeProto& n, const Scope& scope) {
  if (n.input_size() != 2) return false;
  if (same_declared_shape(n, scope)) return true;
  const ValueType* in = scope.type(n.input(0));
  const Tensor* target = scope.constant(n.input(1));
  if (!in || !in->fully_static() || !target || target->rank() != 1) return false;
  const auto values = int_values(*target);
  if (!values) return false;
  const auto shape = reshape_target(in->dims, *values, int_attribute(n, "allowzero", 0) != 0);
  return shape && *shape == in->dims;
}

// Squeeze(Unsqueeze(x, axes), axes) is x: the squeezed dims are the inserted ones.
bool undoes_unsqueeze(const onnx::GraphProto& g, const onnx::NodeProto& squeeze,
                      const std::map<std::string, int>& producer, const Scope& scope) {
  if (squeeze.input_size() != 2) return false;
  auto p = producer.find(squeeze.input(0));
  if (p == producer.end()) return false;
  const onnx::NodeProto& unsqueeze = g.node(p->second);
  if (unsqueeze.op_type() != "Unsqueeze" || !default_domain(unsqueeze) || unsqueeze.input_size() != 2) return false;
  const Tensor* ua = scope.constant(unsqueeze.input(1));
  const Tensor* sa = scope.constant(squeeze.input(1));
  if (!ua || !sa) return false;
  auto inserted = int_values(*ua), removed = int_values(*sa);
  if (!inserted || !removed || inserted->size() != removed->size()) return false;
  auto negative = [](const std::vector<int64_t>& v) {
    return std::any_of(v.begin(), v.end(), [](int64_t a) { return a < 0; });
  };
  if (negative(*inserted) || negative(*removed)) {  // normalising needs the rank of x
    const ValueType* t = scope.type(unsqueeze.input(0));
    const Tensor* c = scope.constant(unsqueeze.input(0));
    if (!c && (!t || !t->ranked)) return false;
    const auto rank = static_cast<int64_t>((c ? c->rank() : t->dims.size()) + inserted->size());
    for (auto* v : {&*inserted, &*removed})
      for (auto& a : *v) {
        if (a < -rank || a >= rank) return false;
        if (a < 0) a += rank;
      }
  }
  const std::set<int64_t> axes(inserted->begin(), inserted->end());
  return axes.size() == inserted->size() && axes == std::set<int64_t>(removed->begin(), removed->end());
}

// How many elements a non-constant piece of a Reshape target holds: an Unsqueeze (a sym size made 1-D) one;
// a Gather from a shape one per index; a range of Shape(x), as Shape's start/end or as Slice(Shape(x), [s], [e]) with
// step 1, the dims it picks where x's rank is known; anything else is unknown (nullopt).
std::optional<int64_t> piece_elements(const onnx::GraphProto& g, const std::string& piece,
                                      const std::map<std::string, int>& producer, const Scope& scope) {
  auto p = producer.find(piece);
  if (p == producer.end()) return std::nullopt;
  const onnx::NodeProto* n = &g.node(p->second);
  if (!default_domain(*n)) return std::nullopt;
  if (n->op_type() == "Unsqueeze") return 1;
  if (n->op_type() == "Gather" && n->input_size() == 2) {  // of a shape vector: one element per index
    const Tensor* index = scope.constant(n->input(1));
    auto q = producer.find(n->input(0));
    if (!index || q == producer.end() || g.node(q->second).op_type() != "Shape") return std::nullopt;
    return index->numel();
  }
  std::optional<std::pair<int64_t, int64_t>> sliced;  // Slice's [start, end) of the shape vector
  if (n->op_type() == "Slice" && n->input_size() >= 3 && n->input_size() <= 4) {
    const Tensor* a = scope.constant(n->input(1));
    const Tensor* b = scope.constant(n->input(2));
    const auto starts = a ? int_values(*a) : std::nullopt, ends = b ? int_values(*b) : std::nullopt;
    auto q = producer.find(n->input(0));
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || q == producer.end()) return std::nullopt;
    sliced = std::make_pair(starts->front(), ends->front());
    n = &g.node(q->second);
    if (n->attribute_size() != 0) return std::nullopt;
  }
  if (n->op_type() != "Shape" || !default_domain(*n) || n->input_size() != 1) return std::nullopt;
  const ValueType* t = scope.type(n->input(0));
  if (!t || !t->ranked) return std::nullopt;
  const auto rank = static_cast<int64_t>(t->dims.size());
  auto [begin, end] = shape_op_range(*n, rank);
  if (sliced) {
    const auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    begin = clamp(sliced->first), end = clamp(sliced->second);
  }
  return std::max<int64_t>(end - begin, 0);
}

// Reshape(x, Concat(pieces)) whose target, once the declared output type fills in what it knows
// statically, has at most one unknown dim: that target as a constant (-1 for the unknown one, which
// Reshape infers from x's size). Pieces are constants or scalar-sized values; the declared rank of the
// output says how many elements the non-constant pieces hold together.
std::optional<Tensor> inferable_reshape_target(const onnx::GraphProto& g, const onnx::NodeProto& reshape,
                                               const std::map<std::string, int>& producer, const Scope& scope) {
  if (reshape.input_size() != 2 || scope.constant(reshape.input(1))) return std::nullopt;
  const ValueType* out = scope.type(reshape.output(0));
  auto p = producer.find(reshape.input(1));
  if (!out || !out->ranked || p == producer.end()) return std::nullopt;
  const onnx::NodeProto& concat = g.node(p->second);
  if (concat.op_type() != "Concat" || !default_domain(concat) || int_attribute(concat, "axis", 0) != 0)
    return std::nullopt;
  const bool allow_zero = int_attribute(reshape, "allowzero", 0) != 0;
  std::vector<int64_t> target;  // -2 where the piece is not a constant
  for (const auto& piece : concat.input()) {
    const Tensor* c = piece.empty() ? nullptr : scope.constant(piece);
    if (!c) {
      const auto count = piece_elements(g, piece, producer, scope);
      if (!count) return std::nullopt;
      target.insert(target.end(), static_cast<size_t>(*count), -2);
      continue;
    }
    const auto values = int_values(*c);
    if (!values || c->rank() != 1) return std::nullopt;
    for (int64_t v : *values)
      if (v < -1 || (v == 0 && allow_zero)) return std::nullopt;  // invalid, or a literal empty dim
    target.insert(target.end(), values->begin(), values->end());
  }
  if (target.size() != out->dims.size()) return std::nullopt;  // a dynamic piece of several elements
  int unknown = 0;
  for (size_t k = 0; k < target.size(); ++k) {
    if (target[k] > 0) continue;
    // 0 copies x's dim and -1 infers one; the declared output dim, when static, is the value they take.
    if (out->dims[k] > 0) {
      target[k] = out->dims[k];
    } else {
      target[k] = -1;
      ++unknown;
    }
  }
  if (unknown > 1 || std::count(target.begin(), target.end(), -1) > 1) return std::nullopt;
  return int64_tensor(target);
}

// Slice(x, starts, ends[, axes, steps]) that keeps every element: starts 0, steps 1, ends at INT64_MAX
// (torch's "to the end"). Axes do not matter then.
bool slice_is_full(const onnx::NodeProto& n, const Scope& scope) {
  if (n.input_size() < 3) return false;
  const auto values = [&](int k) -> std::optional<std::vector<int64_t>> {
    const Tensor* c = n.input_size() > k && !n.input(k).empty() ? scope.constant(n.input(k)) : nullptr;
    return c ? int_values(*c) : std::nullopt;
  };
  const auto starts = values(1), ends = values(2);
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::vector<int64_t> steps(starts->size(), 1);  // when absent
  if (n.input_size() > 4 && !n.input(4).empty()) {
    const auto given = values(4);
    if (!given) return false;
    steps = *given;
  }
  if (steps.size() != starts->size()) return false;
  for (size_t k = 0; k < starts->size(); ++k)
    if ((*starts)[k] != 0 || (*ends)[k] != std::numeric_limits<int64_t>::max() || steps[k] != 1) return false;
  return true;
}

// Mul or Div by one, Sub of zero, Add of zero to an integer, And with true, Or with false: the other
// operand itself, when the constant is one element of its dtype and of no higher rank (nothing
// broadcasts). Exact in IEEE arithmetic (x * 1, x / 1 and x - (+0) are x, -0 and NaN included);
// x + 0 turns -0 into +0: integers only.
std::optional<std::string> neutral_operand(const onnx::NodeProto& n, const Scope& scope) {
  const std::string& op = n.op_type();
  if (n.input_size() != 2) return std::nullopt;
  for (int c : {1, 0}) {  // the constant's position; first only where the op commutes
    if (c == 0 && op != "Mul" && op != "Add" && op != "And" && op != "Or") continue;
    const Tensor* k = scope.constant(n.input(c));
    const std::string& x = n.input(1 - c);
    const ValueType* type = scope.type(x);
    const Tensor* value = scope.constant(x);
    if (!k || k->numel() != 1 || k->dtype() != scope.dtype(x) || (!value && (!type || !type->ranked))) continue;
    if (k->rank() > (value ? value->rank() : type->dims.size())) continue;
    const double v = element_as_double(*k, 0);
    const bool floating = dtype_is_floating(k->dtype());
    if (((op == "Mul" || op == "Div") && v == 1) || (op == "Sub" && v == 0 && !std::signbit(v)) ||
        (op == "Add" && v == 0 && !floating) || (op == "And" && v == 1) || (op == "Or" && v == 0))
      return x;
  }
  return std::nullopt;
}

// Concat of one input with others that are empty along the axis (a cache that starts empty) is that one.
std::optional<std::string> concat_survivor(const onnx::NodeProto& n, const Scope& scope) {
  const int64_t axis = int_attribute(n, "axis", 0);
  std::optional<std::string> survivor;
  for (const auto& in : n.input()) {
    if (in.empty()) return std::nullopt;
    std::optional<int64_t> size;  // the static size along the axis
    const Tensor* c = scope.constant(in);
    const ValueType* t = scope.type(in);
    if (c || (t && t->ranked)) {
      const Shape dims = c ? c->shape() : Shape(t->dims.begin(), t->dims.end());
      const auto rank = static_cast<int64_t>(dims.size());
      const int64_t a = axis < 0 ? axis + rank : axis;
      if (a >= 0 && a < rank && dims[static_cast<size_t>(a)] >= 0) size = dims[static_cast<size_t>(a)];
    }
    if (size == 0) continue;
    if (survivor) return std::nullopt;
    survivor = in;
  }
  return survivor;
}

// The input a node passes through unchanged, if it is one of the recognised no-ops.
std::optional<std::string> passthrough_input(const onnx::GraphProto& g, const onnx::NodeProto& n,
                                             const std::map<std::string, int>& producer, const Scope& scope) {
  const std::string& op = n.op_type();
  if (n.input_size() == 0 || n.input(0).empty()) return std::nullopt;
  if (op == "Mul" || op == "Div" || op == "Add" || op == "Sub" || op == "And" || op == "Or")
    return neutral_operand(n, scope);
  const bool noop = op == "Concat" ||
                    (op == "Cast" && scope.dtype(n.input(0)) != DType::kUndefined &&
                     static_cast<int64_t>(scope.dtype(n.input(0))) == int_attribute(n, "to", -1)) ||
                    (op == "Reshape" && reshape_is_noop(n, scope)) ||
                    (op == "Expand" && n.input_size() == 2 && same_declared_shape(n, scope)) ||
                    (op == "Squeeze" && undoes_unsqueeze(g, n, producer, scope)) ||
                    (op == "Slice" && slice_is_full(n, scope));
  if (!noop) return std::nullopt;
  if (op == "Squeeze") return g.node(producer.at(n.input(0))).input(0);
  if (op == "Concat" && n.input_size() > 1) return concat_survivor(n, scope);
  return n.input(0);
}

int shape_chains_in(onnx::GraphProto& g, const Scope* parent, const OptimizeOptions& options) {
  Scope scope(g, parent, options);
  Names defined = defined_names(g);
  const Names outputs = output_names(g);
  const auto producer = producers(g);
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  int changes = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    for (auto* s : subgraphs(n)) changes += shape_chains_in(*s, &scope, options);
    if (!default_domain(n) || n.output_size() != 1 || n.output(0).empty() || n.op_type() == "Identity") continue;
    if (n.op_type() == "Gather") {
      if (outputs.count(n.output(0))) continue;
      auto dims = static_dims_gathered(g, n, producer, scope, options.max_folded_elements);
      if (!dims) continue;
      tensor_to_proto(*dims, n.output(0), g.add_initializer());
      scope.add_constant(n.output(0), std::move(*dims));
      drop[static_cast<size_t>(i)] = true;
      ++changes;
    } else if (auto target =
                   n.op_type() == "Reshape" ? inferable_reshape_target(g, n, producer, scope) : std::nullopt) {
      std::string name = n.input(1) + "_inferred";
      for (int k = 1; defined.count(name); ++k) name = n.input(1) + "_inferred_" + std::to_string(k);
      defined.insert(name);
      tensor_to_proto(*target, name, g.add_initializer());
      scope.add_constant(name, std::move(*target));
      n.set_input(1, name);
      ++changes;
    } else if (auto input = passthrough_input(g, n, producer, scope)) {
      make_identity(n, *input);
      ++changes;
    }
  }
  erase_nodes(g, drop);
  return changes;
}

}  // namespace

int remove_dead_nodes(onnx::GraphProto& graph, const OptimizeOptions&) { return remove_dead_in(graph); }

int fold_constants(onnx::GraphProto& graph, const OptimizeOptions& options) { return fold_in(graph, nullptr, options); }

int eliminate_common_subexpressions(onnx::GraphProto& graph, const OptimizeOptions& options) {
  return cse_in(graph, options);
}

int remove_identities(onnx::GraphProto& graph, const OptimizeOptions& options) { return identities_in(graph, options); }

int simplify_shape_chains(onnx::GraphProto& graph, const OptimizeOptions& options) {
  return shape_chains_in(graph, nullptr, options);
}

OptimizeStats optimize(onnx::ModelProto& model, const OptimizeOptions& options) {
  int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  const bool axes_as_inputs = opset >= 13;  // what fold_eval and the shape rewrites assume
  onnx::GraphProto& g = *model.mutable_graph();
  OptimizeStats stats;
  while (stats.rounds < options.max_rounds) {
    const int before = stats.total();
    if (options.fold && axes_as_inputs) stats.folded += fold_constants(g, options);
    if (options.shape_chains && axes_as_inputs) stats.shape_chains += simplify_shape_chains(g, options);
    if (options.cse) stats.cse += eliminate_common_subexpressions(g, options);
    if (options.fuse) {
      stats.fused += fold_weight_transposes(g, options);
      stats.fused += fuse_into_conv(g, options);
      stats.fused += merge_transposes(g, options);
      stats.fused += merge_unsqueezes(g, options);
      if (opset >= 15) stats.fused += slice_shapes(g, options);
    }
    if (options.identities) stats.identities += remove_identities(g, options);
    if (options.dead_code) stats.dead_code += remove_dead_nodes(g, options);
    ++stats.rounds;
    if (stats.total() == before) break;
  }
  return stats;
}

}  // namespace parity::exporter
