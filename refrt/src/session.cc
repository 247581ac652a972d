// Session: load (parse, plan) once; run with a per-call frame of values indexed by integer id.
#include "parity/refrt/session.h"

#include <chrono>
#include <functional>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "../kernels/channel_blocks.h"
#include "dispatch.h"
#include "parity/fs.h"
#include "parity/refrt/cpu_isa.h"
#include "optimize/optimizer.h"
#include "session_plan.h"
#include "thread_pool.h"

namespace parity::refrt {

struct Session::Impl {
  SessionPlan plan;
  SessionOptions options;
  std::unique_ptr<ThreadPool> pool;
  // With optimisation on: the parsed model, planned without the passes on the first run that keeps
  // intermediates (fused nodes do not produce the values they fused away).
  std::optional<ModelDef> model;
  mutable std::once_flag full_once;
  mutable std::unique_ptr<SessionPlan> full_plan;
  const SessionPlan& plan_for(const RunOptions& run) const {
    if (!run.keep_intermediates || !model) return plan;
    std::call_once(full_once,
                   [&] { full_plan = std::make_unique<SessionPlan>(build_plan(*model, options.fold_constants)); });
    return *full_plan;
  }
};

namespace {

std::string declared_shape(const ValueInfo& info) {
  std::string s = "[";
  for (size_t i = 0; i < info.dims.size(); ++i) {
    const DimValue& d = info.dims[i];
    s += (i ? ", " : "") + (d.value >= 0 ? std::to_string(d.value) : d.param.empty() ? "?" : d.param);
  }
  return s + "]";
}

// Checks the caller's tensors against the declared inputs: count, dtype, rank, static dims, and
// that a symbolic dim has one value across all inputs.
// A sequence or optional input against its declaration: kind, and the dtype of every element.
void check_value_input(const ValueInfo& info, const Value* v, const std::string& what,
                       const std::function<void(const std::string&)>& fail) {
  if (!v) fail(what + " is a " + std::string(value_kind_name(info.kind)) + ": pass it in the run's values");
  if (v->kind != info.kind) fail(what + " is declared a " + value_kind_name(info.kind) + ", got " + v->describe());
  if (v->is_optional() && !v->has_element) return;
  for (size_t k = 0; k < v->tensors.size(); ++k) {
    const Tensor& t = v->tensors[k];
    const DType want = info.dtype != DType::kUndefined ? info.dtype : v->elem_type;
    if (!t.defined() || (want != DType::kUndefined && t.dtype() != want))
      fail(what + " element #" + std::to_string(k) + " is " + (t.defined() ? dtype_name(t.dtype()) : "undefined") +
           ", the " + value_kind_name(info.kind) + " holds " + dtype_name(want));
  }
}

void check_inputs(const SessionPlan& plan, const std::vector<Tensor>& inputs, const ValueList& values) {
  const std::function<void(const std::string&)> fail = [&](const std::string& what) {
    throw Error(ErrorContext{"refrt", plan.origin}, what);
  };
  if (inputs.size() != plan.inputs.size())
    fail("the model takes " + std::to_string(plan.inputs.size()) + " inputs, " + std::to_string(inputs.size()) +
         " were given");
  std::map<std::string, std::pair<int64_t, size_t>> symbols;  // param -> (value, the input it was first seen in)
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& info = plan.inputs[i];
    const Tensor& t = inputs[i];
    // Named only when needed: strings built for every input of every run cost a small model's time.
    const auto what = [&](size_t k) { return "input '" + plan.inputs[k].name + "' (#" + std::to_string(k) + ")"; };
    const Value* value = i < values.size() ? values[i].get() : nullptr;
    if (info.kind != ValueKind::kTensor) {
      check_value_input(info, value, what(i), fail);
      continue;
    }
    if (value) fail(what(i) + " is a tensor, got " + value->describe());
    if (!t.defined()) fail(what(i) + " is an undefined tensor");
    if (info.dtype != DType::kUndefined && t.dtype() != info.dtype)
      fail(what(i) + " must be " + dtype_name(info.dtype) + ", got " + dtype_name(t.dtype()));
    if (!info.has_shape) continue;
    if (info.dims.size() != t.rank())
      fail(what(i) + " has shape " + shape_str(t.shape()) + " (rank " + std::to_string(t.rank()) +
           ") but the model declares " + declared_shape(info) + " (rank " + std::to_string(info.dims.size()) + ")");
    for (size_t d = 0; d < info.dims.size(); ++d) {
      const DimValue& dim = info.dims[d];
      if (dim.value >= 0 && dim.value != t.dim(d))
        fail(what(i) + " has shape " + shape_str(t.shape()) + " but the model declares " + declared_shape(info) +
             " (dim " + std::to_string(d) + " differs)");
      if (dim.value < 0 && !dim.param.empty()) {
        auto [it, fresh] = symbols.emplace(dim.param, std::make_pair(t.dim(d), i));
        if (!fresh && it->second.first != t.dim(d))
          fail("dim '" + dim.param + "' is " + std::to_string(it->second.first) + " in " + what(it->second.second) +
               " but " + std::to_string(t.dim(d)) + " in " + what(i));
      }
    }
  }
}

using Clock = std::chrono::steady_clock;

// A profiled run notes, per node, only its clock readings, declared flops and bytes, and its
// tensors' dtypes and dims in flat buffers. The NodeTiming records (names, shape vectors: several
// allocations per node) are built after the last node and their cost is reported apart, in
// RunResult::profiler_ms: built inline they were 40 % of a 30 us transformer block's run.
struct RunRecorder {
  struct Node {
    const PlannedNode* node;
    Clock::time_point start, end;
    double flops = 0, bytes = 0;
    std::string_view impl;
    size_t first_shape = 0, inputs = 0, outputs = 0;  // shapes[first_shape ...]: inputs, then outputs
  };
  struct ShapeRef {
    DType dtype;
    size_t first_dim, rank;
  };
  std::vector<Node> nodes;
  std::vector<ShapeRef> shapes;
  std::vector<int64_t> dims;

  explicit RunRecorder(size_t node_count) {
    nodes.reserve(node_count);
    shapes.reserve(node_count * 4);
    dims.reserve(node_count * 16);
  }
  void shape(const Tensor& t) {
    shapes.push_back({t.dtype(), dims.size(), t.shape().size()});
    dims.insert(dims.end(), t.shape().begin(), t.shape().end());
  }
  void record(const PlannedNode& node, const KernelIO& io, Clock::time_point start, Clock::time_point end) {
    Node n{&node, start, end};
    n.flops = node.kernel->flops(io);
    n.impl = io.impl;
    n.first_shape = shapes.size();
    for (const Tensor* in : io.inputs) {
      if (!in) continue;
      shape(*in);
      n.bytes += static_cast<double>(in->nbytes());
      ++n.inputs;
    }
    for (const Tensor& out : io.outputs) {
      if (!out.defined()) continue;
      shape(out);
      n.bytes += static_cast<double>(out.nbytes());
      ++n.outputs;
    }
    nodes.push_back(n);
  }
  TypedShape typed_shape(size_t i) const {
    const ShapeRef& r = shapes[i];
    const auto first = dims.begin() + static_cast<std::ptrdiff_t>(r.first_dim);
    return {r.dtype, Shape(first, first + static_cast<std::ptrdiff_t>(r.rank))};
  }
  // A fused node reports under the model node it was built on; the others it replaced follow with
  // zero time, so a profile still names every node of the model.
  std::vector<NodeTiming> timings(Clock::time_point run_start) const {
    using ms = std::chrono::duration<double, std::milli>;
    std::vector<NodeTiming> out;
    for (const Node& n : nodes) {
      const auto& fused = n.node->def.fused_from;
      NodeTiming t;
      t.node = fused.empty() ? n.node->def.name : fused[0].first;
      t.op_type = fused.empty() ? n.node->def.op_type : fused[0].second;
      t.node_index = out.size();
      t.start_ms = ms(n.start - run_start).count();
      t.ms = ms(n.end - n.start).count();
      t.flops = n.flops;
      t.bytes = n.bytes;
      t.impl = n.impl.empty() ? "refrt" : std::string(n.impl);
      for (size_t k = 0; k < n.inputs; ++k) t.inputs.push_back(typed_shape(n.first_shape + k));
      for (size_t k = 0; k < n.outputs; ++k) t.outputs.push_back(typed_shape(n.first_shape + n.inputs + k));
      const double end_ms = t.start_ms + t.ms;
      out.push_back(std::move(t));
      for (size_t k = 1; k < fused.size(); ++k) {
        NodeTiming part;
        part.node = fused[k].first;
        part.op_type = fused[k].second;
        part.node_index = out.size();
        part.start_ms = end_ms;
        out.push_back(std::move(part));
      }
    }
    return out;
  }
};

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::load_bytes(const std::string& bytes, const std::string& origin,
                                             SessionOptions options) {
  return load_bytes(bytes.data(), bytes.size(), origin, options);
}

std::unique_ptr<Session> Session::load_bytes(const void* data, size_t size, const std::string& origin,
                                             SessionOptions options) {
  const std::string base_dir = std::filesystem::path(origin).parent_path().string();
  isa_level();  // a misspelt PARITY_REFRT_ISA fails here, before any kernel picks its path
  auto impl = std::make_unique<Impl>();
  ModelDef model = parse_model(data, size, origin, base_dir);
  if (options.optimize) {
    impl->model = model;  // shares the initializers' buffers
    impl->plan = build_optimized_plan(std::move(model), options.fold_constants, options.disabled_passes,
                                      resolve_weight_only_accuracy(options.weight_only_accuracy, origin));
  } else {
    impl->plan = build_plan(std::move(model), options.fold_constants);
  }
  impl->options = options;
  if (options.threads < 0 || options.threads > 1024)
    throw Error({"refrt", origin}, "threads must be between 0 and 1024, got " + std::to_string(options.threads),
                ErrorKind::kUsage);
  if (options.threads > 0) {
    impl->pool = std::make_unique<ThreadPool>(options.threads);
    set_blas_threads(1);  // the pool runs the parallel work, GEMMs included (pool_gemm, chunked conv)
  }
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

int weight_only_accuracy_level(int option) { return resolve_weight_only_accuracy(option, "refrt"); }

std::unique_ptr<Session> Session::load_file(const std::string& path, SessionOptions options) {
  // Mapped, not read into a string: parse_model gives the pages back as it passes them, so an inline
  // model's weights are resident once (as tensors), not twice. The mapping ends with this call.
  const auto file = MappedFile::open(path, "refrt");
  return load_bytes(file->data(), file->size(), path, options);
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->plan.inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->plan.outputs; }

namespace {

// A value a run keeps, in the form the model declares: a conv's Y in channel blocks moved back to NCHW
// (keep_conv_blocks), a float16 value its producer wrote widened rounded back (keep_widened, keep_conv_blocks; exact).
Tensor as_declared(const NodeDef& def, const Tensor& slot) {
  Tensor t = slot.rank() == 5 && def.attr_int("blocked_output", 0) ? conv_dnnl::from_blocks(slot) : slot;
  return t.dtype() == DType::kFloat32 && def.attr_int("widened_output", 0) ? narrow_from_float32(t, DType::kFloat16)
                                                                           : t;
}

// Input k of `node` by name (its explicit inputs, then the outer values its subgraphs read).
const std::string& input_name(const PlannedNode& node, size_t k) {
  return k < node.def.inputs.size() ? node.def.inputs[k] : node.def.implicit_inputs[k - node.def.inputs.size()];
}

// io.values of `node` from the side frame; a kernel that reads tensors only is refused such a value.
void gather_values(const PlannedNode& node, const ValueList& side, KernelIO& io, const ErrorContext& where) {
  io.values.assign(node.inputs.size(), nullptr);
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const int v = node.inputs[k];
    if (v < 0 || !side[static_cast<size_t>(v)]) continue;
    if (!node.kernel->takes_values())
      throw Error(where, "input #" + std::to_string(k) + " '" + input_name(node, k) + "' is " +
                             side[static_cast<size_t>(v)]->describe() + "; " + node.def.op_type +
                             " takes tensors only");
    io.values[k] = side[static_cast<size_t>(v)];
  }
}

// The graph outputs of a finished run: its tensors, and into `value_outputs` (when given) the
// sequence and optional outputs, by output position.
std::vector<Tensor> collect_outputs(const SessionPlan& plan, const std::vector<Tensor>& frame, const ValueList& side,
                                    ValueList* value_outputs) {
  std::vector<Tensor> outputs;
  for (int id : plan.output_ids) outputs.push_back(frame[static_cast<size_t>(id)]);
  if (value_outputs) {
    value_outputs->clear();
    for (size_t i = 0; !side.empty() && i < plan.output_ids.size(); ++i)
      if (const auto& v = side[static_cast<size_t>(plan.output_ids[i])]) {
        value_outputs->resize(plan.output_ids.size());
        (*value_outputs)[i] = v;
      }
  }
  return outputs;
}

}  // namespace

std::vector<Tensor> execute_plan(const SessionPlan& plan, const std::vector<Tensor>& inputs, const RunOptions& options,
                                 RunResult* result, const ThreadPool* pool, const ValueList* values,
                                 ValueList* value_outputs) {
  std::vector<Tensor> frame(plan.value_names.size());
  // Sequence and optional values by value id: sized at the first such value of the run, else empty.
  ValueList side;
  const auto put_value = [&](int id, std::shared_ptr<const Value> v) {
    if (side.empty()) side.resize(frame.size());
    side[static_cast<size_t>(id)] = std::move(v);
  };
  for (const auto& [id, t] : plan.initializers) frame[static_cast<size_t>(id)] = t;
  for (size_t i = 0; i < inputs.size() && i < plan.input_ids.size(); ++i)
    frame[static_cast<size_t>(plan.input_ids[i])] = inputs[i];
  for (size_t i = 0; values && i < values->size() && i < plan.input_ids.size(); ++i)
    if ((*values)[i]) put_value(plan.input_ids[i], (*values)[i]);
  if (options.keep_intermediates && result)
    for (int id : plan.folded_values)
      result->intermediates[plan.value_names[static_cast<size_t>(id)]] = frame[static_cast<size_t>(id)];

  KernelIO io;
  io.pool = pool;
  const bool profile = options.profile && result;
  std::optional<RunRecorder> recorder;
  if (profile) recorder.emplace(plan.nodes.size());
  const Clock::time_point run_start = Clock::now();
  for (const PlannedNode& node : plan.nodes) {
    io.inputs.clear();
    for (int v : node.inputs) {
      const Tensor* t = v < 0 ? nullptr : &frame[static_cast<size_t>(v)];
      io.inputs.push_back(t && t->defined() ? t : nullptr);
    }
    io.outputs.assign(node.outputs.size(), Tensor());
    io.value_outputs.clear();
    // Built only on failure: four strings per node per run are measurable on small models.
    auto where = [&] { return ErrorContext{"refrt", plan.origin, node.def.name, node.def.op_type}; };
    if (!side.empty())
      gather_values(node, side, io, where());
    else if (!io.values.empty())
      io.values.clear();
    const Clock::time_point start = profile ? Clock::now() : Clock::time_point();
    io.impl = {};
    try {
      node.kernel->compute(io);
    } catch (const Error& e) {
      throw as_refrt_error(e, where());
    } catch (const std::exception& e) {  // bad_alloc and the like: still an error, never an abort
      throw Error(where(), e.what());
    }
    if (profile) recorder->record(node, io, start, Clock::now());
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k] < 0) continue;
      if (!io.outputs[k].defined()) {
        if (k >= io.value_outputs.size() || !io.value_outputs[k])
          throw Error(where(), "output #" + std::to_string(k) + " was not produced");
        put_value(node.outputs[k], std::move(io.value_outputs[k]));
        continue;
      }
      Tensor& slot = frame[static_cast<size_t>(node.outputs[k])];
      slot = std::move(io.outputs[k]);
      if (result && (options.keep_intermediates ||
                     (!options.keep_values.empty() && options.keep_values.count(node.def.outputs[k]))))
        result->intermediates[node.def.outputs[k]] = as_declared(node.def, slot);
    }
    for (int v : node.release) frame[static_cast<size_t>(v)] = Tensor();
    if (!side.empty())
      for (int v : node.release) side[static_cast<size_t>(v)].reset();
  }
  std::vector<Tensor> outputs = collect_outputs(plan, frame, side, value_outputs);
  if (profile) {
    const Clock::time_point built = Clock::now();
    result->timings = recorder->timings(run_start);
    result->profiler_ms += std::chrono::duration<double, std::milli>(Clock::now() - built).count();
  }
  return outputs;
}

RunResult Session::run(const std::vector<Tensor>& inputs, const RunOptions& options) const {
  return run_values(inputs, ValueList{}, options);
}

RunResult Session::run_values(const std::vector<Tensor>& inputs, const ValueList& values,
                              const RunOptions& options) const {
  const SessionPlan& plan = impl_->plan_for(options);
  check_inputs(plan, inputs, values);
  RunResult result;
  result.outputs = execute_plan(plan, inputs, options, &result, impl_->pool.get(), &values, &result.values);
  return result;
}

}  // namespace parity::refrt
