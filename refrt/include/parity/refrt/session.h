// refrt: the reference CPU runtime. A Session is loaded once (validated, planned, kernels created)
// and is immutable; run() uses a per-call frame. No protobuf types in this header.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parity/tensor.h"

namespace parity::refrt {

struct DimValue {
  int64_t value = -1;  // >= 0 when static
  std::string param;   // the symbolic name when dynamic ("" = unknown)
};

// The ONNX type of a graph value: a tensor, a sequence of tensors, or an optional of either.
enum class ValueKind { kTensor, kSequence, kOptionalTensor, kOptionalSequence };

struct ValueInfo {
  std::string name;
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;  // of the tensor, or of a sequence's / optional's tensors
  bool has_shape = false;
  std::vector<DimValue> dims;  // tensors only (a sequence's elements may differ in shape)
};

struct Value;  // a sequence or optional value (parity/refrt/value.h)
using ValueList = std::vector<std::shared_ptr<const Value>>;

struct SessionOptions {
  // Intra-op threads: T >= 1 gives the session a pool of T threads (the caller's included) that also
  // runs the GEMMs, and sets OpenBLAS to one thread (a process-wide setting). 0 = no pool, BLAS as configured.
  int threads = 0;
  // Nodes computing only from initializers run once at load and become initializers (not profiled).
  bool fold_constants = true;
  // Load-time graph optimisation (fusions that keep every output's value; `optimization_passes()`
  // names them): on by default; `disabled_passes` switches single passes off. A run that keeps
  // intermediates uses an unoptimised plan (built on first use), so every model value is there.
  bool optimize = true;
  std::set<std::string> disabled_passes;
  // Weight-only products (DequantizeLinear of constant 4-/8-bit weights -> MatMul, fused into WeightOnlyMatMul):
  // 0 (1, 2, 3 alike) = exact float products, 4 = int8 activations per block with integer dot products (ONNX
  // Runtime's MatMulNBits accuracy level 4, refrt/kernels/weight_only_q8.h); -1 = the environment variable
  // PARITY_REFRT_WEIGHT_ONLY_ACCURACY, else 0.
  int weight_only_accuracy = -1;
};

// The weight-only accuracy level a SessionOptions::weight_only_accuracy value means in this process (-1: the
// variable PARITY_REFRT_WEIGHT_ONLY_ACCURACY, else 0); a usage error for a value outside 0..4. Reports name it.
int weight_only_accuracy_level(int option = -1);

// The load-time passes, in the order they run.
const std::vector<std::string>& optimization_passes();

struct TypedShape {
  DType dtype = DType::kUndefined;
  Shape shape;
};

// One node's execution in a profiled run (RunOptions::profile).
struct NodeTiming {
  std::string node, op_type;
  size_t node_index = 0;  // position in execution order
  double start_ms = 0;    // from the start of run()
  double ms = 0;
  double flops = 0;  // declared by the kernel; 0 = not declared
  double bytes = 0;  // input + output bytes: the traffic a kernel must at least move
  std::vector<TypedShape> inputs, outputs;
  // What computed it: "onednn brg:avx512_core", "onednn sgemm (avx2)", "openblas sgemm (core Haswell)", or
  // "refrt" (refrt's own kernel).
  std::string impl;
};

struct RunOptions {
  bool keep_intermediates = false;  // every value, from the plan without fusions (they drop values)
  // These values only, from the plan that runs (fused or not): a name the plan does not produce is absent
  // from RunResult::intermediates.
  std::set<std::string> keep_values;
  bool profile = false;
};

struct RunResult {
  std::vector<Tensor> outputs;
  // Outputs of sequence or optional type: values[i] is set and outputs[i] undefined. Empty when the
  // model has no such output.
  ValueList values;
  std::map<std::string, Tensor> intermediates;
  std::vector<NodeTiming> timings;
  // Profiled runs: time run() spent building `timings` after the last node (the profiler's cost,
  // not the model's; `parity profile` leaves it out of each run's time).
  double profiler_ms = 0;
};

// Every failure is a parity::Error with stage "refrt" naming the file and, where known, the node
// and op; unsupported ops, dtypes and opsets carry ErrorKind::kUnsupported.
class Session {
 public:
  static std::unique_ptr<Session> load_file(const std::string& path, SessionOptions options = {});
  // `origin` names the bytes in errors; external data is resolved relative to its directory.
  static std::unique_ptr<Session> load_bytes(const std::string& bytes, const std::string& origin,
                                             SessionOptions options = {});
  static std::unique_ptr<Session> load_bytes(const void* data, size_t size, const std::string& origin,
                                             SessionOptions options = {});
  ~Session();

  const std::vector<ValueInfo>& inputs() const;  // graph inputs that are not initializers, in order
  const std::vector<ValueInfo>& outputs() const;
  // Inputs by position (as inputs()), checked for dtype, rank, static dims and consistent symbolic
  // dims. Const and thread-compatible: concurrent runs on one Session are fine. Results may share
  // read-only buffers with the session's constants (writing into them copies first).
  RunResult run(const std::vector<Tensor>& inputs, const RunOptions& options = {}) const;
  // Models with sequence or optional inputs: values[i] supplies input i where inputs() declares a
  // sequence or optional (inputs[i] is not read there and may be undefined); nullptr elsewhere.
  RunResult run_values(const std::vector<Tensor>& inputs, const ValueList& values,
                       const RunOptions& options = {}) const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct KernelInfo {
  std::string op_type, domain;
  int since_version = 0;
  std::vector<DType> dtypes;
};
// One entry per registered kernel, sorted by op type, domain, since-version (for `parity ops`).
std::vector<KernelInfo> registered_kernels();

}  // namespace parity::refrt
