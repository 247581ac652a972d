// Control flow: If, Loop, Scan, SequenceMap. Each kernel plans its subgraphs once, in its constructor, and runs
// them with execute_plan; values of enclosing graphs arrive as the node's implicit inputs.
#include <cstring>

#include "../src/session_plan.h"
#include "sequence_values.h"

namespace parity::refrt {
namespace {

// Values passed into or out of a subgraph: tensors, and beside them the sequence/optional values
// (values[i] set where tensors[i] is undefined). `values` stays empty when there is none.
struct Slots {
  std::vector<Tensor> tensors;
  ValueList values;

  void push(Tensor t, std::shared_ptr<const Value> v = nullptr) {
    tensors.push_back(std::move(t));
    if (v || !values.empty()) {
      values.resize(tensors.size());
      values.back() = std::move(v);
    }
  }
  void push_input(const KernelIO& io, size_t i) {
    const Tensor* t = io.optional(i);
    push(t ? *t : Tensor(), io.value(i));
  }
  std::shared_ptr<const Value> value(size_t i) const { return i < values.size() ? values[i] : nullptr; }
  bool defined(size_t i) const { return tensors[i].defined() || value(i); }
  // Slot i as output k of the node.
  void emit(size_t i, KernelIO& io, size_t k) {
    if (auto v = value(i))
      io.set_value(k, std::move(v));
    else
      io.outputs[k] = std::move(tensors[i]);
  }
};

// A planned subgraph and, for each of its outer names, where the value sits in the node's KernelIO.
struct Body {
  std::shared_ptr<const SessionPlan> plan;
  std::vector<size_t> outer_slots;
  size_t formal_inputs = 0;

  Body(const NodeDef& node, const std::string& attr) {
    const Attribute* a = node.attr(attr, Attribute::Type::kGraph);
    if (!a || !a->g) node.fail("missing graph attribute '" + attr + "'");
    plan = build_subgraph_plan(*a->g, node.origin);
    formal_inputs = a->g->inputs.size();
    for (const auto& name : a->g->outer_names) {
      size_t k = 0;
      while (k < node.implicit_inputs.size() && node.implicit_inputs[k] != name) ++k;
      outer_slots.push_back(node.inputs.size() + k);  // parse_model put every outer name in implicit_inputs
    }
  }

  // `formal` then the outer values from `io`.
  Slots run(Slots formal, const KernelIO& io) const {
    for (size_t slot : outer_slots) formal.push_input(io, slot);
    Slots out;
    out.tensors = execute_plan(*plan, formal.tensors, RunOptions{}, nullptr, io.pool,
                               formal.values.empty() ? nullptr : &formal.values, &out.values);
    return out;
  }
};

bool truthy(const Tensor& t, const NodeDef& node, const char* what) {
  if (t.numel() != 1) node.fail(std::string(what) + " must have one element, got shape " + shape_str(t.shape()));
  if (t.dtype() != DType::kBool) node.fail(std::string(what) + " must be bool, got " + dtype_name(t.dtype()));
  return *static_cast<const uint8_t*>(t.raw()) != 0;
}

// Element bytes of one slice at `index` along `axis` (the axis removed), and the inverse: slices
// stacked along a new `axis`.
Tensor slice_along(const Tensor& x, size_t axis, int64_t index) {
  Shape shape = x.shape();
  const int64_t n = shape[axis];
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor out(x.dtype(), shape);
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(x.dtype()));
  for (size_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const auto* src = static_cast<const unsigned char*>(x.raw());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * inner, src + (o * n + index) * inner, static_cast<size_t>(inner));
  return out;
}

Tensor stack_along(const std::vector<Tensor>& slices, size_t axis, const NodeDef& node, const ValueInfo* declared) {
  if (slices.empty()) {  // zero iterations: an empty stack of the declared element type
    Shape shape{0};
    DType dtype = declared && declared->dtype != DType::kUndefined ? declared->dtype : DType::kFloat32;
    if (declared && declared->has_shape)
      for (const auto& d : declared->dims) shape.push_back(d.value >= 0 ? d.value : 0);
    return Tensor(dtype, shape);
  }
  const Tensor& first = slices[0];
  for (const auto& s : slices)
    if (s.dtype() != first.dtype() || s.shape() != first.shape())
      node.fail("scan output slices differ: " + dtype_name(first.dtype()) + shape_str(first.shape()) + " vs " +
                dtype_name(s.dtype()) + shape_str(s.shape()));
  if (axis > first.rank()) node.fail("scan output axis " + std::to_string(axis) + " is out of range");
  Shape shape = first.shape();
  const int64_t n = static_cast<int64_t>(slices.size());
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), n);
  Tensor out(first.dtype(), shape);
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(first.dtype()));
  for (size_t d = 0; d < axis; ++d) outer *= first.dim(d);
  for (size_t d = axis; d < first.rank(); ++d) inner *= first.dim(d);
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t k = 0; k < n; ++k) {
    const auto* src = static_cast<const unsigned char*>(slices[static_cast<size_t>(k)].raw());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * n + k) * inner, src + o * inner, static_cast<size_t>(inner));
  }
  return out;
}

class IfKernel : public Kernel {
 public:
  explicit IfKernel(const NodeDef& node) : node_(node), then_(node, "then_branch"), else_(node, "else_branch") {}
  void compute(KernelIO& io) const override {
    const Body& branch = truthy(io.in(0), node_, "cond") ? then_ : else_;
    Slots out = branch.run({}, io);
    if (out.tensors.size() != io.outputs.size())
      node_.fail("the branch has " + std::to_string(out.tensors.size()) + " outputs, the node " +
                 std::to_string(io.outputs.size()));
    for (size_t i = 0; i < out.tensors.size(); ++i) out.emit(i, io, i);
  }
  bool takes_values() const override { return true; }

 private:
  NodeDef node_;
  Body then_, else_;
};

// Loop(M?, cond?, v_initial...) -> (v_final..., scan_outputs...); body(i, cond, v...) -> (cond, v..., scan...).
// Loop-carried values may be sequences or optionals; scan outputs are tensors.
class LoopKernel : public Kernel {
 public:
  explicit LoopKernel(const NodeDef& node) : node_(node), body_(node, "body") {
    if (node.inputs.size() < 2) node.fail("Loop needs at least the M and cond inputs (either may be empty)");
    carried_ = node.inputs.size() - 2;
    const auto& outs = body_.plan->outputs;
    if (body_.formal_inputs != carried_ + 2)
      node.fail("the body must take 2 + " + std::to_string(carried_) + " inputs");
    if (outs.size() < carried_ + 1)
      node.fail("the body must return cond and the " + std::to_string(carried_) + " loop-carried values");
    scans_ = outs.size() - 1 - carried_;
    if (node.outputs.size() != carried_ + scans_)
      node.fail("the node has " + std::to_string(node.outputs.size()) + " outputs, the body yields " +
                std::to_string(carried_ + scans_));
  }
  void compute(KernelIO& io) const override {
    const Tensor* trip = io.optional(0);
    const Tensor* cond_in = io.optional(1);
    if (!trip && !cond_in) node_.fail("Loop has neither a trip count M nor a condition: it would never end");
    int64_t max_trips = -1;
    if (trip) {
      const auto v = int64_values(*trip, "M");
      if (v.size() != 1) node_.fail("M must have one element");
      max_trips = v[0];
    }
    bool cond = cond_in ? truthy(*cond_in, node_, "cond") : true;
    Slots carried;
    for (size_t i = 0; i < carried_; ++i) {
      carried.push_input(io, 2 + i);
      if (!carried.defined(i)) node_.fail("loop-carried input #" + std::to_string(i) + " is missing");
    }
    std::vector<std::vector<Tensor>> scans(scans_);
    for (int64_t i = 0; (max_trips < 0 || i < max_trips) && cond; ++i) {
      Slots formal;
      formal.push(Tensor::scalar<int64_t>(DType::kInt64, i));
      formal.push(Tensor::scalar<uint8_t>(DType::kBool, cond));
      for (size_t k = 0; k < carried_; ++k) formal.push(carried.tensors[k], carried.value(k));
      Slots out = body_.run(std::move(formal), io);
      cond = truthy(out.tensors[0], node_, "the body's cond output");
      Slots next;
      for (size_t k = 0; k < carried_; ++k) next.push(std::move(out.tensors[1 + k]), out.value(1 + k));
      carried = std::move(next);
      for (size_t k = 0; k < scans_; ++k) {
        if (out.value(1 + carried_ + k)) node_.fail("scan output #" + std::to_string(k) + " is not a tensor");
        scans[k].push_back(std::move(out.tensors[1 + carried_ + k]));
      }
    }
    for (size_t k = 0; k < carried_; ++k) carried.emit(k, io, k);
    for (size_t k = 0; k < scans_; ++k)
      io.outputs[carried_ + k] = stack_along(scans[k], 0, node_, &body_.plan->outputs[1 + carried_ + k]);
  }
  bool takes_values() const override { return true; }

 private:
  NodeDef node_;
  Body body_;
  size_t carried_ = 0, scans_ = 0;
};

// Scan (opset 9+): (state..., scan_input...) -> (final_state..., scan_output...).
class ScanKernel : public Kernel {
 public:
  explicit ScanKernel(const NodeDef& node) : node_(node), body_(node, "body") {
    const int64_t m = node.attr_int("num_scan_inputs", -1);
    if (m < 1 || static_cast<size_t>(m) > node.inputs.size())
      node.fail("num_scan_inputs must be in 1.." + std::to_string(node.inputs.size()));
    scan_inputs_ = static_cast<size_t>(m);
    states_ = node.inputs.size() - scan_inputs_;
    if (body_.formal_inputs != node.inputs.size())
      node.fail("the body must take " + std::to_string(node.inputs.size()) + " inputs");
    if (body_.plan->outputs.size() < states_) node.fail("the body returns fewer values than there are states");
    scan_outputs_ = body_.plan->outputs.size() - states_;
    if (node.outputs.size() != states_ + scan_outputs_) node.fail("the node's output count does not match the body's");
    in_axes_ = node.attr_ints("scan_input_axes", std::vector<int64_t>(scan_inputs_, 0));
    in_dirs_ = node.attr_ints("scan_input_directions", std::vector<int64_t>(scan_inputs_, 0));
    out_axes_ = node.attr_ints("scan_output_axes", std::vector<int64_t>(scan_outputs_, 0));
    out_dirs_ = node.attr_ints("scan_output_directions", std::vector<int64_t>(scan_outputs_, 0));
    if (in_axes_.size() != scan_inputs_ || in_dirs_.size() != scan_inputs_ || out_axes_.size() != scan_outputs_ ||
        out_dirs_.size() != scan_outputs_)
      node.fail("scan axis/direction attributes must have one entry per scan input/output");
  }
  void compute(KernelIO& io) const override {
    std::vector<Tensor> states;
    for (size_t i = 0; i < states_; ++i) states.push_back(io.in(i));
    int64_t length = -1;
    std::vector<size_t> axes;
    for (size_t j = 0; j < scan_inputs_; ++j) {
      const Tensor& x = io.in(states_ + j);
      const size_t axis =
          static_cast<size_t>(normalize_axis(in_axes_[j], static_cast<int64_t>(x.rank()), "scan_input_axes"));
      if (length >= 0 && x.dim(axis) != length) node_.fail("scan inputs have different sequence lengths");
      length = x.dim(axis);
      axes.push_back(axis);
    }
    std::vector<std::vector<Tensor>> outs(scan_outputs_, std::vector<Tensor>(static_cast<size_t>(length)));
    for (int64_t t = 0; t < length; ++t) {
      Slots formal;
      formal.tensors = states;
      for (size_t j = 0; j < scan_inputs_; ++j)
        formal.push(slice_along(io.in(states_ + j), axes[j], in_dirs_[j] ? length - 1 - t : t));
      Slots out = body_.run(std::move(formal), io);
      if (!out.values.empty()) node_.fail("the body yields a sequence or optional; Scan carries tensors only");
      for (size_t i = 0; i < states_; ++i) states[i] = std::move(out.tensors[i]);
      for (size_t k = 0; k < scan_outputs_; ++k)
        outs[k][static_cast<size_t>(out_dirs_[k] ? length - 1 - t : t)] = std::move(out.tensors[states_ + k]);
    }
    for (size_t i = 0; i < states_; ++i) io.outputs[i] = std::move(states[i]);
    for (size_t k = 0; k < scan_outputs_; ++k) {
      const int64_t rank = outs[k].empty() ? 1 : static_cast<int64_t>(outs[k][0].rank()) + 1;
      const size_t axis = static_cast<size_t>(normalize_axis(out_axes_[k], rank, "scan_output_axes"));
      io.outputs[states_ + k] = stack_along(outs[k], axis, node_, &body_.plan->outputs[states_ + k]);
    }
  }

 private:
  NodeDef node_;
  Body body_;
  size_t scan_inputs_ = 0, states_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

// Scan-8: (sequence_lens?, state..., scan_input...) with a batch axis 0 on every state and scan input
// and the sequence axis 1. Each batch element is scanned as Scan-9 scans its inputs, over its own
// length (sequence_lens, else the whole axis); scan outputs of shorter sequences are padded with zeros.
class Scan8Kernel : public Kernel {
 public:
  explicit Scan8Kernel(const NodeDef& node) : node_(node), body_(node, "body") {
    const size_t operands = node.inputs.empty() ? 0 : node.inputs.size() - 1;
    const int64_t m = node.attr_int("num_scan_inputs", -1);
    if (m < 1 || static_cast<size_t>(m) > operands)
      node.fail("num_scan_inputs must be in 1.." + std::to_string(operands));
    scan_inputs_ = static_cast<size_t>(m);
    states_ = operands - scan_inputs_;
    if (body_.formal_inputs != operands) node.fail("the body must take " + std::to_string(operands) + " inputs");
    if (body_.plan->outputs.size() < states_) node.fail("the body returns fewer values than there are states");
    scan_outputs_ = body_.plan->outputs.size() - states_;
    if (node.outputs.size() != states_ + scan_outputs_) node.fail("the node's output count does not match the body's");
    dirs_ = node.attr_ints("directions", std::vector<int64_t>(scan_inputs_, 0));
    if (dirs_.size() != scan_inputs_) node.fail("directions must have one entry per scan input");
  }
  void compute(KernelIO& io) const override {
    const std::vector<int64_t> lengths = sequence_lengths(io);
    std::vector<std::vector<Tensor>> finals(states_), scans(scan_outputs_);
    for (size_t b = 0; b < lengths.size(); ++b) {
      std::vector<Tensor> states, xs;
      for (size_t i = 0; i < states_; ++i) states.push_back(slice_along(io.in(1 + i), 0, static_cast<int64_t>(b)));
      for (size_t j = 0; j < scan_inputs_; ++j)
        xs.push_back(slice_along(io.in(1 + states_ + j), 0, static_cast<int64_t>(b)));
      const int64_t len = lengths[b];
      std::vector<std::vector<Tensor>> outs(scan_outputs_);
      for (int64_t t = 0; t < len; ++t) {
        Slots formal;
        formal.tensors = states;
        for (size_t j = 0; j < scan_inputs_; ++j) formal.push(slice_along(xs[j], 0, dirs_[j] ? len - 1 - t : t));
        Slots out = body_.run(std::move(formal), io);
        if (!out.values.empty()) node_.fail("the body yields a sequence or optional; Scan carries tensors only");
        for (size_t i = 0; i < states_; ++i) states[i] = std::move(out.tensors[i]);
        for (size_t k = 0; k < scan_outputs_; ++k) outs[k].push_back(std::move(out.tensors[states_ + k]));
      }
      for (size_t i = 0; i < states_; ++i) finals[i].push_back(std::move(states[i]));
      for (size_t k = 0; k < scan_outputs_; ++k) scans[k].push_back(padded(outs[k], xs.at(0).dim(0)));
    }
    for (size_t i = 0; i < states_; ++i) io.outputs[i] = stack_along(finals[i], 0, node_, nullptr);
    for (size_t k = 0; k < scan_outputs_; ++k) io.outputs[states_ + k] = stack_along(scans[k], 0, node_, nullptr);
  }

 private:
  // Per batch element: sequence_lens, or the sequence axis of the scan inputs (which must agree).
  std::vector<int64_t> sequence_lengths(const KernelIO& io) const {
    const Tensor& first = io.in(1 + states_);
    if (first.rank() < 2)
      node_.fail("scan inputs need a batch axis and a sequence axis, got " + shape_str(first.shape()));
    const int64_t batch = first.dim(0), steps = first.dim(1);
    for (size_t i = 1; i < io.inputs.size() && i < 1 + states_ + scan_inputs_; ++i) {
      const Tensor& x = io.in(i);
      const bool scan = i > states_;
      if (x.rank() < (scan ? 2u : 1u) || x.dim(0) != batch || (scan && x.dim(1) != steps))
        node_.fail("input #" + std::to_string(i) + " has shape " + shape_str(x.shape()) + "; the batch is " +
                   std::to_string(batch) + (scan ? " and the sequence axis " + std::to_string(steps) : std::string()));
    }
    if (!io.optional(0)) return std::vector<int64_t>(static_cast<size_t>(batch), steps);
    std::vector<int64_t> lengths = int64_values(*io.optional(0), "sequence_lens");
    if (static_cast<int64_t>(lengths.size()) != batch)
      node_.fail("sequence_lens has " + std::to_string(lengths.size()) + " entries for a batch of " +
                 std::to_string(batch));
    for (int64_t l : lengths)
      if (l < 1 || l > steps)
        node_.fail("sequence length " + std::to_string(l) + " is outside [1, " + std::to_string(steps) + "]");
    return lengths;
  }
  // The slices stacked, then zeros up to `steps` rows.
  Tensor padded(const std::vector<Tensor>& slices, int64_t steps) const {
    const Tensor stacked = stack_along(slices, 0, node_, nullptr);
    if (stacked.dim(0) == steps) return stacked;
    Shape shape = stacked.shape();
    shape[0] = steps;
    Tensor out(stacked.dtype(), shape, /*zero=*/true);
    if (stacked.nbytes()) std::memcpy(out.mutable_raw(), stacked.raw(), stacked.nbytes());
    return out;
  }

  NodeDef node_;
  Body body_;
  size_t scan_inputs_ = 0, states_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> dirs_;
};

// SequenceMap(input_sequence, additional...) -> (out_sequence...): the body runs once per element of
// input_sequence; a sequence input gives the body its element at that position (all sequences must
// be as long), a tensor input is given whole every time. Output k is the sequence of the body's k-th outputs.
class SequenceMapKernel : public Kernel {
 public:
  explicit SequenceMapKernel(const NodeDef& node) : node_(node), body_(node, "body") {
    if (node.inputs.empty() || node.inputs[0].empty()) node.fail("SequenceMap needs its input_sequence");
    if (body_.formal_inputs != node.inputs.size())
      node.fail("the body takes " + std::to_string(body_.formal_inputs) + " inputs, the node gives " +
                std::to_string(node.inputs.size()));
    if (body_.plan->outputs.size() != node.outputs.size())
      node.fail("the body yields " + std::to_string(body_.plan->outputs.size()) + " outputs, the node has " +
                std::to_string(node.outputs.size()));
  }
  void compute(KernelIO& io) const override {
    const size_t n = sequence_input(io, 0, node_).tensors.size();
    const size_t arity = node_.inputs.size();
    for (size_t j = 1; j < arity; ++j) {
      if (io.value(j) && sequence_input(io, j, node_).tensors.size() != n)
        node_.fail("input #" + std::to_string(j) + " is a sequence of " + std::to_string(io.value(j)->tensors.size()) +
                   " tensors, input_sequence has " + std::to_string(n));
      if (!io.value(j) && !io.optional(j)) node_.fail("input #" + std::to_string(j) + " is missing");
    }
    std::vector<std::vector<Tensor>> outs(io.outputs.size());
    for (size_t i = 0; i < n; ++i) {
      Slots formal;
      for (size_t j = 0; j < arity; ++j) formal.push(io.value(j) ? io.value(j)->tensors[i] : *io.optional(j));
      Slots out = body_.run(std::move(formal), io);
      for (size_t k = 0; k < outs.size(); ++k) {
        if (out.value(k)) node_.fail("the body's output #" + std::to_string(k) + " is not a tensor");
        outs[k].push_back(std::move(out.tensors[k]));
      }
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      const DType declared = outs[k].empty() ? body_.plan->outputs[k].dtype : DType::kUndefined;  // n == 0
      io.set_value(k, make_sequence(std::move(outs[k]), declared, node_));
    }
  }
  bool takes_values() const override { return true; }

 private:
  NodeDef node_;
  Body body_;
};

}  // namespace

// If 1; 11: branches may produce different shapes; 13/16/19/21/23 widened types (sequences, optionals).
PARITY_KERNEL("If", 1, IfKernel, kAllTypes);
// Loop 1; 11: cond optional-input semantics clarified; 13+ widened types.
PARITY_KERNEL("Loop", 1, LoopKernel, kAllTypes);
// Scan 8: batch axis and sequence_lens; 9: no batch axis, axes/directions attributes.
PARITY_KERNEL("Scan", 8, Scan8Kernel, kAllTypes);
PARITY_KERNEL("Scan", 9, ScanKernel, kAllTypes);
PARITY_KERNEL("SequenceMap", 17, SequenceMapKernel, kAllTypes);

}  // namespace parity::refrt
