#include "kernel.h"

#include "thread_pool.h"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <unordered_set>

#include "parity/refrt/session.h"

namespace parity::refrt {

const char* attribute_type_name(Attribute::Type type) {
  switch (type) {
    case Attribute::Type::kFloat:
      return "float";
    case Attribute::Type::kInt:
      return "int";
    case Attribute::Type::kString:
      return "string";
    case Attribute::Type::kTensor:
      return "tensor";
    case Attribute::Type::kFloats:
      return "floats";
    case Attribute::Type::kInts:
      return "ints";
    case Attribute::Type::kStrings:
      return "strings";
    case Attribute::Type::kGraph:
      return "graph";
    case Attribute::Type::kTypeProto:
      return "type_proto";
    case Attribute::Type::kOther:
      break;
  }
  return "unsupported";
}

const Attribute* NodeDef::attr(const std::string& n) const {
  auto it = attributes.find(n);
  return it == attributes.end() ? nullptr : &it->second;
}

const Attribute* NodeDef::attr(const std::string& n, Attribute::Type type) const {
  const Attribute* a = attr(n);
  if (a && a->type != type)
    fail(std::string("attribute '") + n + "' must be of type " + attribute_type_name(type) + ", got " +
         attribute_type_name(a->type));
  return a;
}

int64_t NodeDef::attr_int(const std::string& n, int64_t fallback) const {
  const Attribute* a = attr(n, Attribute::Type::kInt);
  return a ? a->i : fallback;
}

float NodeDef::attr_float(const std::string& n, float fallback) const {
  const Attribute* a = attr(n, Attribute::Type::kFloat);
  return a ? a->f : fallback;
}

std::vector<int64_t> NodeDef::attr_ints(const std::string& n, std::vector<int64_t> fallback) const {
  const Attribute* a = attr(n, Attribute::Type::kInts);
  return a ? a->ints : fallback;
}

void NodeDef::fail(const std::string& message, ErrorKind kind) const {
  throw Error({"refrt", "", name, op_type}, message, kind);
}

std::string_view intern_impl(const std::string& name) {
  static std::mutex mutex;
  static std::unordered_set<std::string> names;  // node-based: element addresses never move
  std::lock_guard<std::mutex> lock(mutex);
  return *names.insert(name).first;
}

const Tensor& KernelIO::in(size_t i) const {
  if (i >= inputs.size() || !inputs[i]) throw Error({"refrt"}, "missing required input #" + std::to_string(i));
  return *inputs[i];
}

const std::shared_ptr<const Value>& KernelIO::value(size_t i) const {
  static const std::shared_ptr<const Value> none;
  return i < values.size() ? values[i] : none;
}

void KernelIO::set_value(size_t k, std::shared_ptr<const Value> v) {
  if (value_outputs.size() < outputs.size()) value_outputs.resize(outputs.size());
  if (k >= value_outputs.size()) throw Error({"refrt"}, "output #" + std::to_string(k) + " does not exist");
  value_outputs[k] = std::move(v);
}

std::vector<KernelRegistration>& kernel_registry() {
  static std::vector<KernelRegistration> registry;
  return registry;
}

KernelRegistrar::KernelRegistrar(const char* op, const char* domain, int since, std::vector<DType> dtypes,
                                 KernelFactory factory) {
  kernel_registry().push_back({op, domain, since, std::move(dtypes), std::move(factory)});
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
  for (const auto& r : kernel_registry())
    if (r.domain != "com.parity.refrt")  // fused nodes of the load-time passes are no ONNX operators
      out.push_back({r.op_type, r.domain, r.since_version, r.dtypes});
  std::sort(out.begin(), out.end(), [](const KernelInfo& a, const KernelInfo& b) {
    return std::tie(a.op_type, a.domain, a.since_version) < std::tie(b.op_type, b.domain, b.since_version);
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
  if (t.dtype() == DType::kInt64)
    std::copy(t.data<int64_t>(), t.data<int64_t>() + t.numel(), v.begin());
  else if (t.dtype() == DType::kInt32)
    std::copy(t.data<int32_t>(), t.data<int32_t>() + t.numel(), v.begin());
  else
    throw Error({"refrt"}, what + " must be int32 or int64, got " + dtype_name(t.dtype()));
  return v;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Error as_refrt_error(const Error& e, const ErrorContext& ctx) {
  const ErrorContext& in = e.context();
  return Error({"refrt", in.file.empty() ? ctx.file : in.file, in.node.empty() ? ctx.node : in.node,
                in.op.empty() ? ctx.op : in.op},
               e.message(), e.kind());
}

Tensor frozen(const Tensor& t) {
  if (!t.defined()) return t;
  auto owner = std::make_shared<const Tensor>(t);
  const void* data = owner->raw();
  return Tensor::view(t.dtype(), t.shape(), std::move(owner), data);
}

void parallel_for(const KernelIO& io, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (io.pool)
    io.pool->parallel_for(n, grain, fn);
  else if (n > 0)
    fn(0, n);
}

void parallel_each(const KernelIO& io, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (io.pool)
    io.pool->parallel_for(n, 1, n, fn);
  else if (n > 0)
    fn(0, n);
}

}  // namespace parity::refrt
