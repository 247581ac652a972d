#include "kernel.h"

#include "parity/refrt/session.h"

#include <algorithm>

namespace parity::refrt {

std::vector<KernelRegistration>& kernel_registry() {
  static std::vector<KernelRegistration> registry;
  return registry;
}

KernelRegistrar::KernelRegistrar(const char* op, int since, std::vector<DType> dtypes, KernelFactory factory) {
  kernel_registry().push_back({op, "", since, std::move(dtypes), std::move(factory)});
}

const KernelRegistration* find_kernel(const std::string& op_type, const std::string& domain, int opset) {
  const KernelRegistration* best = nullptr;
  for (const auto& r : kernel_registry())
    if (r.op_type == op_type && r.domain == domain && r.since_version <= opset &&
        (!best || r.since_version > best->since_version))
      best = &r;
  return best;
}

std::vector<KernelInfo> registered_kernels() {
  std::vector<KernelInfo> out;
  for (const auto& r : kernel_registry()) out.push_back({r.op_type, r.domain, r.since_version, r.dtypes});
  std::sort(out.begin(), out.end(), [](const KernelInfo& a, const KernelInfo& b) {
    return std::tie(a.op_type, a.since_version) < std::tie(b.op_type, b.since_version);
  });
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const NodeDef* node) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      const std::string msg = "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast";
      if (node) node->fail(msg);
      throw Error({"refrt"}, msg);
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    throw Error({"refrt"}, what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> int64_values(const Tensor& t, const std::string& what) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) std::copy(t.data<int64_t>(), t.data<int64_t>() + t.numel(), v.begin());
  else if (t.dtype() == DType::kInt32) std::copy(t.data<int32_t>(), t.data<int32_t>() + t.numel(), v.begin());
  else throw Error({"refrt"}, what + " must be int32 or int64, got " + dtype_name(t.dtype()));
  return v;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

bool next_index(std::vector<int64_t>& index, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

}  // namespace parity::refrt
