// refrt: the reference CPU runtime. A Session is loaded once (validated, planned, kernels created)
// and is immutable; run() uses a per-call frame. No protobuf types in this header.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "parity/tensor.h"

namespace parity::refrt {

struct DimValue {
  int64_t value = -1;  // >= 0 when static
  std::string param;   // the symbolic name when dynamic ("" = unknown)
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<DimValue> dims;
};

struct SessionOptions {
  int threads = 1;
};

struct NodeTiming {
  std::string node, op_type;
  double ms = 0;
};

struct RunOptions {
  bool keep_intermediates = false;
  bool profile = false;
};

struct RunResult {
  std::vector<Tensor> outputs;
  std::map<std::string, Tensor> intermediates;
  std::vector<NodeTiming> timings;
};

class Session {
 public:
  static std::unique_ptr<Session> load_file(const std::string& path, SessionOptions options = {});
  static std::unique_ptr<Session> load_bytes(const std::string& bytes, const std::string& origin,
                                             SessionOptions options = {});
  ~Session();

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // Inputs by position (as inputs()). Throws parity::Error naming the node and op that failed.
  RunResult run(const std::vector<Tensor>& inputs, const RunOptions& options = {}) const;

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
// One entry per registered kernel, sorted by op type then since-version (for `parity ops`).
std::vector<KernelInfo> registered_kernels();

}  // namespace parity::refrt
