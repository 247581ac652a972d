// Cleanup rewrites that merge a node into its neighbour or into a weight (passes.h): transposed weights,
// Pad and BatchNormalization into Conv, Transpose pairs, Unsqueeze pairs, slices of a Shape. Each is exact or, for
// BatchNormalization, the same arithmetic refrt applies at load.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "fold_eval.h"
#include "model_writer.h"
#include "parity/error.h"
#include "parity/internal/onnx_tensor.h"
#include "passes.h"
#include "passes_internal.h"

namespace parity::exporter {
namespace {

using namespace pass_detail;

bool is_op(const onnx::NodeProto& n, const char* op) { return n.op_type() == op && default_domain(n); }

// Reads and writes initializers, pending ones (views of the .pt2) included, within a byte budget.
class Weights {
 public:
  Weights(onnx::GraphProto& g, const OptimizeOptions& options) : g_(g), options_(options) {
    Names inputs;
    for (const auto& v : g.input()) inputs.insert(v.name());
    for (int i = 0; i < g.initializer_size(); ++i)
      if (!inputs.count(g.initializer(i).name())) index_[g.initializer(i).name()] = i;  // an input may override
  }

  const onnx::TensorProto* proto(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &g_.initializer(it->second);
  }

  std::optional<Tensor> value(const std::string& name) const {
    const onnx::TensorProto* t = proto(name);
    if (!t || t->data_type() == onnx::TensorProto::INT4 || t->data_type() == onnx::TensorProto::UINT4 ||
        t->data_type() == onnx::TensorProto::STRING)
      return std::nullopt;
    if (const auto index = pending_payload(*t)) {
      if (!options_.payloads || *index >= options_.payloads->size()) return std::nullopt;
      const Tensor& p = (*options_.payloads)[*index];
      if (static_cast<int>(p.dtype()) != t->data_type() ||
          !std::equal(p.shape().begin(), p.shape().end(), t->dims().begin(), t->dims().end()))
        return std::nullopt;
      return p;
    }
    if (t->data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    try {
      return tensor_from_proto(*t, "initializer '" + name + "'");
    } catch (const Error&) {
      return std::nullopt;  // malformed: left for the runtime to report
    }
  }

  // Whether `bytes` more may be materialised; counts them when so.
  bool reserve(int64_t bytes) {
    if (bytes > options_.max_materialized_bytes - options_.materialized_bytes) return false;
    options_.materialized_bytes += bytes;
    return true;
  }

  // Appended after the caller's loop over initializers (adding here may move the protos `proto` gave).
  void add(const std::string& name, Tensor t) { added_.emplace_back(name, std::move(t)); }

  void commit() {
    for (auto& [name, t] : added_) {
      auto* proto = g_.add_initializer();
      if (options_.payloads && t.nbytes() >= kDeferredPayloadBytes) {
        proto->set_name(name);
        proto->set_data_type(static_cast<int>(t.dtype()));
        for (int64_t d : t.shape()) proto->add_dims(d);
        options_.payloads->push_back(std::move(t));
        set_pending_payload(proto, options_.payloads->size() - 1);
      } else {
        tensor_to_proto(t, name, proto);
      }
    }
    added_.clear();
  }

 private:
  onnx::GraphProto& g_;
  const OptimizeOptions& options_;
  std::map<std::string, int> index_;
  std::vector<std::pair<std::string, Tensor>> added_;
};

std::vector<int64_t> perm_of(const onnx::NodeProto& n, size_t rank) {
  for (const auto& a : n.attribute())
    if (a.name() == "perm") return {a.ints().begin(), a.ints().end()};
  std::vector<int64_t> reversed;
  for (size_t i = rank; i-- > 0;) reversed.push_back(static_cast<int64_t>(i));
  return reversed;
}

bool valid_perm(const std::vector<int64_t>& perm, size_t rank) {
  if (perm.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

// out[i_0, ..., i_r-1] = in[..., i_k at position perm[k], ...]: elements copied byte-wise.
Tensor transposed(const Tensor& in, const std::vector<int64_t>& perm) {
  const size_t rank = in.rank(), elem = dtype_size(in.dtype());
  Shape out_shape(rank);
  std::vector<int64_t> in_strides(rank, 1), out_index(rank, 0);
  for (size_t k = rank; k-- > 1;) in_strides[k - 1] = in_strides[k] * in.dim(k);
  for (size_t k = 0; k < rank; ++k) out_shape[k] = in.dim(static_cast<size_t>(perm[k]));
  Tensor out(in.dtype(), out_shape);
  const char* src = static_cast<const char*>(in.raw());
  char* dst = static_cast<char*>(out.mutable_raw());
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset += out_index[k] * in_strides[static_cast<size_t>(perm[k])];
    std::memcpy(dst + static_cast<size_t>(o) * elem, src + static_cast<size_t>(offset) * elem, elem);
    for (size_t k = rank; k-- > 0;) {  // next output index, last dim fastest
      if (++out_index[k] < out_shape[k]) break;
      out_index[k] = 0;
    }
  }
  return out;
}

int weight_transposes_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += weight_transposes_in(*s, options);
  const Names keep = identity_keep(g, options);
  const auto counts = read_counts(g);
  Weights weights(g, options);
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (!is_op(n, "Transpose") || n.input_size() != 1 || n.output_size() != 1 || keep.count(n.output(0))) continue;
    const std::string& w = n.input(0);
    // Another reader would need the original too: the file would hold the weight twice.
    if (counts.count(w) == 0 || counts.at(w) != 1 || !weights.proto(w)) continue;
    const auto value = weights.value(w);
    if (!value) continue;
    const auto perm = perm_of(n, value->rank());
    if (!valid_perm(perm, value->rank()) || !weights.reserve(static_cast<int64_t>(value->nbytes()))) continue;
    weights.add(n.output(0), transposed(*value, perm));
    drop[static_cast<size_t>(i)] = true;
    ++changes;
  }
  weights.commit();
  erase_nodes(g, drop);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Into Conv

std::vector<int64_t> ints_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* attr = nullptr;
  for (auto& a : *n.mutable_attribute())
    if (a.name() == name) attr = &a;
  if (!attr) {
    attr = n.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
  }
  attr->clear_ints();
  for (int64_t x : v) attr->add_ints(x);
}

void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* attr = n.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(v);
}

bool auto_pad_notset(const onnx::NodeProto& conv) {
  for (const auto& a : conv.attribute())
    if (a.name() == "auto_pad") return a.s().empty() || a.s() == "NOTSET";
  return true;
}

// The spatial pads (ONNX Conv layout: begins, then ends) a zero constant Pad adds, if it is one.
std::optional<std::vector<int64_t>> zero_pad_spatial(const onnx::NodeProto& pad, const Weights& weights) {
  for (const auto& a : pad.attribute())
    if (a.name() == "mode" && a.s() != "constant") return std::nullopt;
  if (pad.input_size() < 2 || pad.input_size() > 3) return std::nullopt;  // an axes input: not handled
  const auto pads_value = weights.value(pad.input(1));
  if (!pads_value) return std::nullopt;
  const auto pads = int_values(*pads_value);
  if (!pads || pads->size() % 2 != 0 || pads->size() < 6) return std::nullopt;
  if (pad.input_size() == 3 && !pad.input(2).empty()) {
    const auto v = weights.value(pad.input(2));
    if (!v || v->numel() != 1 || v->dtype() != DType::kFloat32 || v->data<float>()[0] != 0.0f ||
        std::signbit(v->data<float>()[0]))
      return std::nullopt;
  }
  const size_t rank = pads->size() / 2;
  if ((*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 || (*pads)[rank + 1] != 0) return std::nullopt;
  std::vector<int64_t> spatial;
  for (size_t half : {size_t{0}, rank})
    for (size_t k = 2; k < rank; ++k) {
      if ((*pads)[half + k] < 0) return std::nullopt;  // a crop is not a padding
      spatial.push_back((*pads)[half + k]);
    }
  return spatial;
}

bool fold_pad(onnx::NodeProto& conv, const onnx::NodeProto& pad, const Weights& weights) {
  if (!auto_pad_notset(conv)) return false;
  const auto added = zero_pad_spatial(pad, weights);
  if (!added) return false;
  std::vector<int64_t> pads = ints_attribute(conv, "pads");
  if (pads.empty()) pads.assign(added->size(), 0);
  if (pads.size() != added->size()) return false;
  for (size_t k = 0; k < pads.size(); ++k) pads[k] += (*added)[k];
  set_ints(conv, "pads", pads);
  conv.set_input(0, pad.input(0));
  return true;
}

float float_attribute(const onnx::NodeProto& n, const std::string& name, float fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

// The same formula as refrt's load-time fold (refrt/src/optimize/fold_batch_norm.cc): per output channel
// s = scale / sqrt(var + eps) in double, W' = W * s, b' = (b - mean) * s + shift, rounded to float once.
bool fold_batch_norm(onnx::NodeProto& conv, const onnx::NodeProto& bn, Weights& weights) {
  if (int_attribute(bn, "training_mode", 0) != 0 || bn.input_size() != 5 || conv.input_size() < 2) return false;
  for (int k = 1; k < bn.output_size(); ++k)
    if (!bn.output(k).empty()) return false;
  const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
  const auto w = weights.value(conv.input(1));
  const auto b = has_bias ? weights.value(conv.input(2)) : std::nullopt;
  if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || (has_bias && !b)) return false;
  const int64_t m = w->dim(0);
  if (b && (b->dtype() != DType::kFloat32 || b->numel() != m)) return false;
  std::optional<Tensor> p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = weights.value(bn.input(k + 1));
    if (!p[k] || p[k]->dtype() != DType::kFloat32 || p[k]->rank() != 1 || p[k]->numel() != m) return false;
  }
  if (!weights.reserve(static_cast<int64_t>(w->nbytes()) + m * 4)) return false;
  const double eps = float_attribute(bn, "epsilon", 1e-5f);
  const float *scale = p[0]->data<float>(), *shift = p[1]->data<float>(), *mean = p[2]->data<float>(),
              *var = p[3]->data<float>();
  Tensor nw(DType::kFloat32, w->shape()), nb(DType::kFloat32, {m});
  const int64_t per = w->numel() / std::max<int64_t>(m, 1);
  for (int64_t o = 0; o < m; ++o) {
    const double s = static_cast<double>(scale[o]) / std::sqrt(static_cast<double>(var[o]) + eps);
    for (int64_t j = 0; j < per; ++j)
      nw.data<float>()[o * per + j] = static_cast<float>(w->data<float>()[o * per + j] * s);
    const double bias = b ? static_cast<double>(b->data<float>()[o]) : 0.0;
    nb.data<float>()[o] = static_cast<float>((bias - static_cast<double>(mean[o])) * s + static_cast<double>(shift[o]));
  }
  // Named after the merged node's output, as folded constants are: unique, and says where it belongs.
  const std::string out = bn.output(0);
  weights.add(out + "_weight", std::move(nw));
  weights.add(out + "_bias", std::move(nb));
  while (conv.input_size() < 3) conv.add_input("");
  conv.set_input(1, out + "_weight");
  conv.set_input(2, out + "_bias");
  return true;
}

int into_conv_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += into_conv_in(*s, options);
  const Names keep = identity_keep(g, options);
  const auto counts = read_counts(g);
  const auto producer = producers(g);
  Weights weights(g, options);
  Names gone;
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  // The producer of `value` when this node alone reads it and its name may vanish.
  auto sole_producer = [&](const std::string& value) -> onnx::NodeProto* {
    auto p = producer.find(value);
    if (p == producer.end() || drop[static_cast<size_t>(p->second)] || keep.count(value) || counts.at(value) != 1)
      return nullptr;
    onnx::NodeProto* n = g.mutable_node(p->second);
    return n->output_size() == 1 ? n : nullptr;
  };
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    if (is_op(n, "Conv") && n.input_size() >= 2 && !n.input(0).empty()) {
      onnx::NodeProto* pad = sole_producer(n.input(0));
      if (pad && is_op(*pad, "Pad") && !pad->input(0).empty() && fold_pad(n, *pad, weights)) {
        drop[static_cast<size_t>(producer.at(pad->output(0)))] = true;
        gone.insert(pad->output(0));
        ++changes;
      }
    } else if (is_op(n, "BatchNormalization") && n.input_size() == 5 && !n.output(0).empty()) {
      onnx::NodeProto* conv = sole_producer(n.input(0));
      if (!conv || !is_op(*conv, "Conv") || !fold_batch_norm(*conv, n, weights)) continue;
      // The Conv stays where it is (its new weights are initializers) and produces the normalised value.
      gone.insert(conv->output(0));
      conv->set_output(0, n.output(0));
      drop[static_cast<size_t>(i)] = true;
      ++changes;
    }
  }
  weights.commit();
  erase_nodes(g, drop);
  erase_if(g.mutable_value_info(), [&](const onnx::ValueInfoProto& v, int) { return gone.count(v.name()) != 0; });
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Transpose pairs

int transposes_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += transposes_in(*s, options);
  const Names keep = identity_keep(g, options);
  const auto counts = read_counts(g);
  const auto producer = producers(g);
  Names gone;
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& outer = *g.mutable_node(i);
    if (!is_op(outer, "Transpose") || outer.input_size() != 1 || outer.output_size() != 1) continue;
    const std::string mid = outer.input(0);
    auto p = producer.find(mid);
    if (p == producer.end() || drop[static_cast<size_t>(p->second)] || keep.count(mid) || counts.at(mid) != 1) continue;
    const onnx::NodeProto& inner = g.node(p->second);
    if (!is_op(inner, "Transpose") || inner.input_size() != 1 || inner.output_size() != 1) continue;
    // Without a perm attribute a Transpose reverses the dims, which needs the rank: both must name it.
    const auto p1 = ints_attribute(inner, "perm"), p2 = ints_attribute(outer, "perm");
    if (p1.empty() || !valid_perm(p1, p1.size()) || !valid_perm(p2, p1.size())) continue;
    std::vector<int64_t> composed(p1.size());  // out dim k = mid dim p2[k] = input dim p1[p2[k]]
    bool identity = true;
    for (size_t k = 0; k < composed.size(); ++k) {
      composed[k] = p1[static_cast<size_t>(p2[k])];
      identity = identity && composed[k] == static_cast<int64_t>(k);
    }
    const std::string x = inner.input(0);
    if (identity) {
      make_identity(outer, x);  // remove_identities takes it from here
    } else {
      set_ints(outer, "perm", composed);
      outer.set_input(0, x);
    }
    drop[static_cast<size_t>(p->second)] = true;
    gone.insert(mid);
    ++changes;
  }
  erase_nodes(g, drop);
  erase_if(g.mutable_value_info(), [&](const onnx::ValueInfoProto& v, int) { return gone.count(v.name()) != 0; });
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Unsqueeze pairs

// The axes of one Unsqueeze doing what Unsqueeze(Unsqueeze(x, inner), outer) does. `outer` are positions
// in the final shape; `inner` are positions among the dims `outer` did not insert. Both non-negative and
// free of repeats (the rank of x is not needed then), else nullopt.
std::optional<std::vector<int64_t>> merged_unsqueeze_axes(const std::vector<int64_t>& inner,
                                                          const std::vector<int64_t>& outer) {
  const std::set<int64_t> in(inner.begin(), inner.end()), out(outer.begin(), outer.end());
  if (in.size() != inner.size() || out.size() != outer.size() || in.empty() || out.empty() || *in.begin() < 0 ||
      *out.begin() < 0)
    return std::nullopt;
  std::vector<int64_t> axes(outer.begin(), outer.end());
  int64_t mid = 0;  // the position of final dim k in the intermediate shape, when outer did not insert k
  for (int64_t k = 0; mid <= *in.rbegin(); ++k) {
    if (out.count(k)) continue;
    if (in.count(mid++)) axes.push_back(k);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

int unsqueezes_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += unsqueezes_in(*s, options);
  const Names keep = identity_keep(g, options);
  Names defined = defined_names(g);
  const auto counts = read_counts(g);
  const auto producer = producers(g);
  Weights weights(g, options);
  Names gone;
  std::vector<bool> drop(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& outer = *g.mutable_node(i);
    if (!is_op(outer, "Unsqueeze") || outer.input_size() != 2 || outer.output_size() != 1) continue;
    const std::string mid = outer.input(0);
    auto p = producer.find(mid);
    if (p == producer.end() || drop[static_cast<size_t>(p->second)] || keep.count(mid) || counts.at(mid) != 1) continue;
    const onnx::NodeProto& inner = g.node(p->second);
    if (!is_op(inner, "Unsqueeze") || inner.input_size() != 2 || inner.output_size() != 1) continue;
    const auto a1 = weights.value(inner.input(1)), a2 = weights.value(outer.input(1));
    const auto v1 = a1 ? int_values(*a1) : std::nullopt, v2 = a2 ? int_values(*a2) : std::nullopt;
    const auto axes = v1 && v2 ? merged_unsqueeze_axes(*v1, *v2) : std::nullopt;
    if (!axes) continue;
    std::string name = outer.output(0) + "_axes";
    for (int k = 1; defined.count(name); ++k) name = outer.output(0) + "_axes_" + std::to_string(k);
    defined.insert(name);
    weights.add(name, int64_tensor(*axes));
    outer.set_input(0, inner.input(0));
    outer.set_input(1, name);
    drop[static_cast<size_t>(p->second)] = true;
    gone.insert(mid);
    ++changes;
  }
  weights.commit();
  erase_nodes(g, drop);
  erase_if(g.mutable_value_info(), [&](const onnx::ValueInfoProto& v, int) { return gone.count(v.name()) != 0; });
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Slices of a shape

// The [start, end) of Shape(x) that `n` reads: Slice(Shape(x), [s], [e][, [0][, [1]]]) or
// Unsqueeze(Gather(Shape(x), k), [0]) with a scalar k. nullopt for anything else. An end of nullopt
// means "to the last dim" (INT64_MAX, or k = -1).
struct ShapeRange {
  std::string x;
  int64_t start;
  std::optional<int64_t> end;
};

std::optional<ShapeRange> shape_range(const onnx::GraphProto& g, const onnx::NodeProto& n,
                                      const std::map<std::string, int>& producer, const Weights& weights) {
  const auto ints = [&](const std::string& name) -> std::optional<std::vector<int64_t>> {
    const auto t = weights.value(name);
    return t ? int_values(*t) : std::nullopt;
  };
  const auto from = [&](const std::string& v) -> const onnx::NodeProto* {
    auto p = producer.find(v);
    return p == producer.end() ? nullptr : &g.node(p->second);
  };
  const auto plain_shape = [](const onnx::NodeProto* s) {
    return s && is_op(*s, "Shape") && s->input_size() == 1 && s->attribute_size() == 0;
  };
  if (is_op(n, "Slice") && n.input_size() >= 3 && plain_shape(from(n.input(0)))) {
    const auto starts = ints(n.input(1)), ends = ints(n.input(2));
    const auto axes = n.input_size() > 3 && !n.input(3).empty() ? ints(n.input(3)) : std::vector<int64_t>{0};
    const auto steps = n.input_size() > 4 && !n.input(4).empty() ? ints(n.input(4)) : std::vector<int64_t>{1};
    if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 ||
        (*axes != std::vector<int64_t>{0} && *axes != std::vector<int64_t>{-1}) || *steps != std::vector<int64_t>{1})
      return std::nullopt;
    const int64_t end = ends->front();
    return ShapeRange{from(n.input(0))->input(0), starts->front(),
                      end == std::numeric_limits<int64_t>::max() ? std::nullopt : std::optional<int64_t>(end)};
  }
  if (!is_op(n, "Unsqueeze") || n.input_size() != 2) return std::nullopt;
  const auto axes = ints(n.input(1));
  const onnx::NodeProto* gather = from(n.input(0));
  if (!axes || (*axes != std::vector<int64_t>{0} && *axes != std::vector<int64_t>{-1}) || !gather ||
      !is_op(*gather, "Gather") || gather->input_size() != 2 || int_attribute(*gather, "axis", 0) != 0 ||
      !plain_shape(from(gather->input(0))))
    return std::nullopt;
  const auto index = weights.value(gather->input(1));
  const auto k = index && index->rank() == 0 ? int_values(*index) : std::nullopt;
  if (!k) return std::nullopt;
  const int64_t start = k->front();
  return ShapeRange{from(gather->input(0))->input(0), start,
                    start == -1 ? std::nullopt : std::optional<int64_t>(start + 1)};
}

int shape_slices_in(onnx::GraphProto& g, const OptimizeOptions& options) {
  int changes = 0;
  for (auto& n : *g.mutable_node())
    for (auto* s : subgraphs(n)) changes += shape_slices_in(*s, options);
  const auto producer = producers(g);
  Weights weights(g, options);
  for (auto& n : *g.mutable_node()) {
    const auto range = shape_range(g, n, producer, weights);
    if (!range) continue;
    // Shape's start/end (opset 15) count and clamp as Slice does on the shape vector.
    n.set_op_type("Shape");
    n.clear_input();
    n.add_input(range->x);
    n.clear_attribute();
    set_int(n, "start", range->start);
    if (range->end) set_int(n, "end", *range->end);
    ++changes;
  }
  return changes;
}

}  // namespace

int merge_transposes(onnx::GraphProto& graph, const OptimizeOptions& options) { return transposes_in(graph, options); }

int merge_unsqueezes(onnx::GraphProto& graph, const OptimizeOptions& options) { return unsqueezes_in(graph, options); }

int slice_shapes(onnx::GraphProto& graph, const OptimizeOptions& options) { return shape_slices_in(graph, options); }

int fold_weight_transposes(onnx::GraphProto& graph, const OptimizeOptions& options) {
  return weight_transposes_in(graph, options);
}

int fuse_into_conv(onnx::GraphProto& graph, const OptimizeOptions& options) { return into_conv_in(graph, options); }

}  // namespace parity::exporter
