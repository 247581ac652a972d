// Internal: the kernel interface and registry. A kernel parses its attributes once, in its
// constructor, and computes outputs from inputs; one registration line per (op, domain, since).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parity/error.h"
#include "parity/tensor.h"

namespace parity::refrt {

struct Attribute {
  enum class Type { kFloat, kInt, kString, kTensor, kFloats, kInts, kStrings, kGraph, kOther };
  Type type = Type::kOther;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// What a kernel's constructor sees of its node.
struct NodeDef {
  std::string name, op_type, domain;
  int opset = 0;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, Attribute> attributes;

  const Attribute* attr(const std::string& n) const {
    auto it = attributes.find(n);
    return it == attributes.end() ? nullptr : &it->second;
  }
  int64_t attr_int(const std::string& n, int64_t fallback) const {
    const Attribute* a = attr(n);
    return a ? a->i : fallback;
  }
  float attr_float(const std::string& n, float fallback) const {
    const Attribute* a = attr(n);
    return a ? a->f : fallback;
  }
  std::vector<int64_t> attr_ints(const std::string& n, std::vector<int64_t> fallback = {}) const {
    const Attribute* a = attr(n);
    return a ? a->ints : fallback;
  }
  [[noreturn]] void fail(const std::string& message) const { throw Error({"refrt", "", name, op_type}, message); }
};

// Inputs of one call: absent optional inputs are nullptr.
struct KernelIO {
  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;  // sized to the node's output count; kernels fill them

  const Tensor& in(size_t i) const {
    if (i >= inputs.size() || !inputs[i]) throw Error({"refrt"}, "missing required input #" + std::to_string(i));
    return *inputs[i];
  }
  const Tensor* optional(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void compute(KernelIO& io) const = 0;
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
  KernelRegistrar(const char* op, int since, std::vector<DType> dtypes, KernelFactory factory);
};

template <typename K>
KernelFactory make_factory() {
  return [](const NodeDef& n) { return std::make_unique<K>(n); };
}

#define PARITY_KERNEL_CONCAT_INNER(a, b) a##b
#define PARITY_KERNEL_CONCAT(a, b) PARITY_KERNEL_CONCAT_INNER(a, b)
// PARITY_KERNEL("Add", 14, AddKernel, {DType::kFloat32, ...});
#define PARITY_KERNEL(op, since, cls, ...)                                                   \
  static const ::parity::refrt::KernelRegistrar PARITY_KERNEL_CONCAT(parity_kernel_, __LINE__)( \
      op, since, __VA_ARGS__, ::parity::refrt::make_factory<cls>())

// Shared helpers for kernels.
Shape broadcast_shapes(const Shape& a, const Shape& b, const NodeDef* node = nullptr);
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
std::vector<int64_t> int64_values(const Tensor& t, const std::string& what);  // int32/int64 tensor -> values
// Element strides of a contiguous row-major tensor of `shape`.
std::vector<int64_t> row_major_strides(const Shape& shape);
// Advances a multi-index over `shape` in row-major order (an odometer); false after the last one.
bool next_index(std::vector<int64_t>& index, const Shape& shape);

}  // namespace parity::refrt
