// Internal: the kernel interface and registry. A kernel parses its attributes once, in its
// constructor, and computes outputs from inputs; one registration line per (op, domain, since).
//
// Version rule (as ONNX): a model at opset N gets the newest registration whose since-version <= N.
// A kernel is registered at every ONNX version that changed the semantics it implements; a later
// version that only widened the type list needs no line (the dtype check at run names what is missing).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include <utility>

#include "parity/error.h"
#include "parity/dtype_lists.h"
#include "parity/refrt/value.h"
#include "parity/tensor.h"

namespace parity::refrt {

struct GraphDef;  // a subgraph (If/Loop/Scan body), see model_def.h

struct Attribute {
  enum class Type { kFloat, kInt, kString, kTensor, kFloats, kInts, kStrings, kGraph, kTypeProto, kOther };
  Type type = Type::kOther;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<const GraphDef> g;  // kGraph
  ValueInfo tp;                       // kTypeProto: kind and dtype (Optional's `type`)
};
const char* attribute_type_name(Attribute::Type type);

// What a kernel's constructor sees of its node. Typed accessors fail when the attribute exists
// with another type (a hostile model must not be read as 0).
struct NodeDef {
  std::string name, op_type, domain;         // domain "" = ai.onnx
  int opset = 0;                             // the model's opset for this node's domain
  std::vector<std::string> inputs, outputs;  // "" = absent optional
  // Values of enclosing graphs that this node's subgraphs read (their free names, sorted). The
  // executor passes them after the explicit inputs: KernelIO::inputs[inputs.size() + k].
  std::vector<std::string> implicit_inputs;
  std::string origin;  // the model file, for errors raised while planning subgraphs
  std::map<std::string, Attribute> attributes;
  // Nodes made by the load-time passes (refrt/src/optimize/): the (name, op_type) of every model node
  // this one replaces, the anchor first (the profiler reports the time under the anchor's name).
  std::vector<std::pair<std::string, std::string>> fused_from;

  const Attribute* attr(const std::string& n) const;
  const Attribute* attr(const std::string& n, Attribute::Type type) const;  // nullptr if absent
  int64_t attr_int(const std::string& n, int64_t fallback) const;
  float attr_float(const std::string& n, float fallback) const;
  std::vector<int64_t> attr_ints(const std::string& n, std::vector<int64_t> fallback = {}) const;
  [[noreturn]] void fail(const std::string& message, ErrorKind kind = ErrorKind::kInput) const;
};

class ThreadPool;

// Inputs of one call: absent optional inputs are nullptr.
struct KernelIO {
  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;       // sized to the node's output count; kernels fill them
  const ThreadPool* pool = nullptr;  // the session's intra-op pool (nullptr: run serially)
  // What ran this call, for the profile: set by kernels that choose between implementations ("onednn
  // brg:avx512_core", "openblas sgemm (core Haswell)") to a string from intern_impl; empty: refrt's own
  // kernel. Mutable: the GEMM helpers that take a const KernelIO& note their choice too.
  mutable std::string_view impl;

  // Sequence and optional values (value.h) beside the tensors: values[i] is input i when it is one
  // (inputs[i] is then nullptr), and a kernel sets value_outputs[k] (set_value) for such an output.
  // Both stay empty in runs without such values: the tensor path never touches them.
  ValueList values;
  ValueList value_outputs;

  const Tensor& in(size_t i) const;
  const Tensor* optional(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  const std::shared_ptr<const Value>& value(size_t i) const;  // nullptr where input i is no such value
  void set_value(size_t k, std::shared_ptr<const Value> v);
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Must not modify inputs; outputs are fresh tensors or shared read-only views of inputs.
  virtual void compute(KernelIO& io) const = 0;
  // Floating-point operations of the call that just ran on `io` (for the profiler's GFLOP/s);
  // 0 = not declared. Memory traffic (input + output bytes) is measured by the executor.
  virtual double flops(const KernelIO& io) const { return 0; }
  // Called once when the session is planned: constants[i] is input i's value when it is a constant of
  // the session (an initializer no graph input can override), else nullptr. A kernel may keep the
  // tensor (a shared buffer, alive as long as it holds it) and precompute from it (packed weights).
  virtual void prepare(const std::vector<const Tensor*>& constants) {}
  // True for kernels that read KernelIO::values (sequence/optional operators, Identity, control flow);
  // the executor refuses to hand a sequence or optional to any other kernel.
  virtual bool takes_values() const { return false; }
};

using KernelFactory = std::function<std::unique_ptr<Kernel>(const NodeDef&)>;

struct KernelRegistration {
  std::string op_type, domain;
  int since_version;
  std::vector<DType> dtypes;
  KernelFactory factory;
};

std::vector<KernelRegistration>& kernel_registry();
// The newest registration for op_type/domain whose since-version <= opset, or nullptr.
const KernelRegistration* find_kernel(const std::string& op_type, const std::string& domain, int opset);

struct KernelRegistrar {
  KernelRegistrar(const char* op, const char* domain, int since, std::vector<DType> dtypes, KernelFactory factory);
};

template <typename K>
KernelFactory make_factory() {
  return [](const NodeDef& n) { return std::make_unique<K>(n); };
}

#define PARITY_KERNEL_CONCAT_INNER(a, b) a##b
#define PARITY_KERNEL_CONCAT(a, b) PARITY_KERNEL_CONCAT_INNER(a, b)
// PARITY_KERNEL("Add", 14, AddKernel, {DType::kFloat32, ...});  (default domain ai.onnx)
#define PARITY_KERNEL(op, since, cls, ...)                                                      \
  static const ::parity::refrt::KernelRegistrar PARITY_KERNEL_CONCAT(parity_kernel_, __LINE__)( \
      op, "", since, __VA_ARGS__, ::parity::refrt::make_factory<cls>())

// A kernel of the private domain of fused nodes (activation.h's kFusedDomain), version 1.
#define PARITY_FUSED_KERNEL(op, cls, ...)                                                       \
  static const ::parity::refrt::KernelRegistrar PARITY_KERNEL_CONCAT(parity_kernel_, __LINE__)( \
      op, "com.parity.refrt", 1, __VA_ARGS__, ::parity::refrt::make_factory<cls>())

// Dtype lists shared by registrations: refrt's narrower float/numeric sets, and every storable dtype
// from common's one list. Inline (or bound to common's inline list), so that they are initialised before the
// registrars that follow this header in every kernel file (no static-initialisation-order trap).
inline const std::vector<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64};
inline const std::vector<DType> kNumericTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
inline const std::vector<DType>& kAllTypes = kStorableDTypes;  // every dtype stored as raw bytes

// fn(begin, end) over [0, n) on io's pool (chunks of >= grain items), or serially without one.
void parallel_for(const KernelIO& io, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
// fn(i, i + 1) for every i in [0, n), each item taken by whichever pool thread is free next: for a few
// large independent items, so that a thread running late (a busy host) takes fewer. Without a pool,
// fn(0, n).
void parallel_each(const KernelIO& io, int64_t n, const std::function<void(int64_t, int64_t)>& fn);

// `name` kept for the life of the process (implementation names are few; KernelIO::impl points here).
std::string_view intern_impl(const std::string& name);

// Shared helpers for kernels (errors are refrt errors; the executor adds node, op and file).
Shape broadcast_shapes(const Shape& a, const Shape& b, const NodeDef* node = nullptr);
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// The values of an int32/int64 tensor (any rank), widened to int64.
std::vector<int64_t> int64_values(const Tensor& t, const std::string& what);
// Element strides of a contiguous row-major tensor of `shape`.
std::vector<int64_t> row_major_strides(const Shape& shape);
// `e` as a refrt error: same message and kind; e's context fields where set, else `ctx`'s
// (errors from common/ carry stage "tensor" or none).
Error as_refrt_error(const Error& e, const ErrorContext& ctx);
// A read-only view of `t` (copy on write): a session's constants can be handed out without risk
// that a caller writing into a result changes the next run.
Tensor frozen(const Tensor& t);

}  // namespace parity::refrt
