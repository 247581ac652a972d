#include "fold_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#include "parity/error.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::exporter {
namespace {

using Result = std::optional<Tensor>;

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : fallback;
}

// Element count of `shape` when no dim is negative and it stays within `limit`.
std::optional<int64_t> bounded_numel(const Shape& shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) return 0;
  }
  for (int64_t d : shape) {
    if (n > limit / d) return std::nullopt;
    n *= d;
  }
  return n;
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

// `axis` in [-rank, rank) made non-negative; nullopt when out of range.
std::optional<int64_t> normalized_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// Calls f(T{}) with the C++ storage type of `t` (bool is stored as uint8 0/1); false when unsupported.
template <typename F>
bool dispatch_number(DType t, F&& f) {
  switch (t) {
    case DType::kBool:
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kUInt16:
      return f(uint16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kUInt32:
      return f(uint32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    default:
      return false;
  }
}

// ---- Cast ----

struct Number {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
};

template <typename T>
bool read_numbers(const Tensor& t, std::vector<Number>& out) {
  const T* p = t.data<T>();
  out.resize(static_cast<size_t>(t.numel()));
  for (size_t k = 0; k < out.size(); ++k) {
    if constexpr (std::is_floating_point_v<T>)
      out[k] = {true, 0, static_cast<double>(p[k])};
    else
      out[k] = {false, static_cast<int64_t>(p[k]), 0};
  }
  return true;
}

// Float -> integer casts out of range (or NaN) are undefined in ONNX: such nodes are not folded.
template <typename T>
bool write_numbers(const std::vector<Number>& in, Tensor& t, bool as_bool) {
  T* p = t.data<T>();
  for (size_t k = 0; k < in.size(); ++k) {
    const Number& v = in[k];
    if (as_bool) {
      p[k] = static_cast<T>(v.is_float ? v.f != 0 : v.i != 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      p[k] = v.is_float ? static_cast<T>(v.f) : static_cast<T>(v.i);
    } else if (!v.is_float) {
      p[k] = static_cast<T>(v.i);  // two's complement wrap, as C++20 defines and runtimes do
    } else {
      if (!std::isfinite(v.f)) return false;
      const double truncated = std::trunc(v.f);
      const double bound = std::ldexp(1.0, std::numeric_limits<T>::digits);
      const double low = std::is_signed_v<T> ? -bound : 0.0;
      if (truncated < low || truncated >= bound) return false;
      p[k] = static_cast<T>(truncated);
    }
  }
  return true;
}

Result eval_cast(const onnx::NodeProto& n, const Tensor& x) {
  const auto to = static_cast<DType>(int_attr(n, "to", 0));
  if (!dispatch_number(to, [](auto) { return true; })) return std::nullopt;
  std::vector<Number> values;
  if (!dispatch_number(x.dtype(), [&](auto tag) { return read_numbers<decltype(tag)>(x, values); }))
    return std::nullopt;
  Tensor out(to, x.shape());
  const bool as_bool = to == DType::kBool;
  if (!dispatch_number(to, [&](auto tag) { return write_numbers<decltype(tag)>(values, out, as_bool); }))
    return std::nullopt;
  return out;
}

// ---- Arithmetic (int32/int64 wrap like the runtimes; floats are single IEEE operations) ----

template <typename T>
bool arith(const std::string& op, T a, T b, T& out) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == "Add")
      out = a + b;
    else if (op == "Sub")
      out = a - b;
    else if (op == "Mul")
      out = a * b;
    else if (op == "Pow")  // as refrt's Pow: std::pow in double, rounded once
      out = static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    else
      out = a / b;
  } else {
    using U = std::make_unsigned_t<T>;
    if (op == "Add")
      out = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    else if (op == "Sub")
      out = static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    else if (op == "Mul")
      out = static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    else if (b == 0)
      return false;  // the runtime reports it
    else if (b == -1)
      out = static_cast<T>(U{0} - static_cast<U>(a));  // MIN / -1 wraps
    else
      out = static_cast<T>(a / b);  // truncation toward zero, as ONNX specifies
  }
  return true;
}

std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Flat index into an input of shape `in` (broadcast to `out`) of each flat output index.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out, int64_t count) {
  std::vector<int64_t> index(static_cast<size_t>(count));
  const size_t lead = out.size() - in.size();
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, source = 0, stride = 1;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t coord = rest % out[d];
      rest /= out[d];
      if (d >= lead) {
        const int64_t dim = in[d - lead];
        source += (dim == 1 ? 0 : coord) * stride;
        stride *= dim;
      }
    }
    index[static_cast<size_t>(flat)] = source;
  }
  return index;
}

template <typename T>
Result binary_typed(const std::string& op, const Tensor& a, const Tensor& b, const Shape& shape, int64_t count) {
  Tensor out(a.dtype(), shape);
  const auto ia = broadcast_index(a.shape(), shape, count), ib = broadcast_index(b.shape(), shape, count);
  T* o = out.data<T>();
  for (int64_t k = 0; k < count; ++k)
    if (!arith<T>(op, a.data<T>()[ia[k]], b.data<T>()[ib[k]], o[k])) return std::nullopt;
  return out;
}

Result eval_binary(const std::string& op, const Tensor& a, const Tensor& b, int64_t limit) {
  if (a.dtype() != b.dtype()) return std::nullopt;
  const auto shape = broadcast_shape(a.shape(), b.shape());
  if (!shape) return std::nullopt;
  const auto count = bounded_numel(*shape, limit);
  if (!count) return std::nullopt;
  switch (a.dtype()) {
    case DType::kInt64:
      return binary_typed<int64_t>(op, a, b, *shape, *count);
    case DType::kInt32:
      return binary_typed<int32_t>(op, a, b, *shape, *count);
    case DType::kFloat32:
      return binary_typed<float>(op, a, b, *shape, *count);
    case DType::kFloat64:
      return binary_typed<double>(op, a, b, *shape, *count);
    default:
      return std::nullopt;
  }
}

template <typename T>
Tensor negate(const Tensor& x) {
  Tensor out(x.dtype(), x.shape());
  for (int64_t k = 0; k < x.numel(); ++k) {
    if constexpr (std::is_floating_point_v<T>)
      out.data<T>()[k] = -x.data<T>()[k];
    else
      out.data<T>()[k] =
          static_cast<T>(std::make_unsigned_t<T>{0} - static_cast<std::make_unsigned_t<T>>(x.data<T>()[k]));
  }
  return out;
}

// Sqrt is correctly rounded in IEEE arithmetic: the folded value is the one any runtime computes.
template <typename T>
Tensor square_root(const Tensor& x) {
  Tensor out(x.dtype(), x.shape());
  for (int64_t k = 0; k < x.numel(); ++k) out.data<T>()[k] = std::sqrt(x.data<T>()[k]);
  return out;
}

Result eval_sqrt(const Tensor& x) {
  if (x.dtype() == DType::kFloat32) return square_root<float>(x);
  if (x.dtype() == DType::kFloat64) return square_root<double>(x);
  return std::nullopt;
}

Result eval_neg(const Tensor& x) {
  switch (x.dtype()) {
    case DType::kInt64:
      return negate<int64_t>(x);
    case DType::kInt32:
      return negate<int32_t>(x);
    case DType::kFloat32:
      return negate<float>(x);
    case DType::kFloat64:
      return negate<double>(x);
    default:
      return std::nullopt;
  }
}

// ---- Data movement (any fixed-size dtype: bytes are copied, never converted) ----

bool movable(const Tensor& t) { return dtype_size(t.dtype()) > 0; }

Result eval_reshape(const onnx::NodeProto& n, const Tensor& x, const Tensor& shape_t) {
  const auto target = int_values(shape_t);
  if (!target || shape_t.rank() != 1) return std::nullopt;
  const auto shape = reshape_target(x.shape(), *target, int_attr(n, "allowzero", 0) != 0);
  if (!shape) return std::nullopt;
  return x.clone().reshaped(*shape);
}

std::optional<std::vector<int64_t>> axes_of(const Tensor* t) {
  if (!t) return std::nullopt;
  return int_values(*t);
}

Result eval_unsqueeze(const Tensor& x, const Tensor* axes_t) {
  const auto axes = axes_of(axes_t);
  if (!axes || axes->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x.rank() + axes->size());
  std::set<int64_t> inserted;
  for (int64_t a : *axes) {
    const auto axis = normalized_axis(a, rank);
    if (!axis || !inserted.insert(*axis).second) return std::nullopt;
  }
  Shape shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(inserted.count(d) ? 1 : x.dim(next++));
  return x.clone().reshaped(shape);
}

Result eval_squeeze(const Tensor& x, const Tensor* axes_t) {
  std::set<int64_t> removed;
  if (axes_t) {
    const auto axes = int_values(*axes_t);
    if (!axes) return std::nullopt;
    for (int64_t a : *axes) {
      const auto axis = normalized_axis(a, static_cast<int64_t>(x.rank()));
      if (!axis || x.dim(static_cast<size_t>(*axis)) != 1) return std::nullopt;
      removed.insert(*axis);
    }
  } else {
    for (size_t d = 0; d < x.rank(); ++d)
      if (x.dim(d) == 1) removed.insert(static_cast<int64_t>(d));
  }
  Shape shape;
  for (size_t d = 0; d < x.rank(); ++d)
    if (!removed.count(static_cast<int64_t>(d))) shape.push_back(x.dim(d));
  return x.clone().reshaped(shape);
}

Result eval_concat(const onnx::NodeProto& n, const std::vector<const Tensor*>& in, int64_t limit) {
  if (in.empty() || !in[0]) return std::nullopt;
  const Tensor& first = *in[0];
  const auto axis = normalized_axis(int_attr(n, "axis", 0), static_cast<int64_t>(first.rank()));
  if (!axis) return std::nullopt;
  const auto ax = static_cast<size_t>(*axis);
  Shape shape = first.shape();
  shape[ax] = 0;
  for (const Tensor* t : in) {
    if (!t || t->dtype() != first.dtype() || t->rank() != first.rank()) return std::nullopt;
    for (size_t d = 0; d < first.rank(); ++d)
      if (d != ax && t->dim(d) != first.dim(d)) return std::nullopt;
    shape[ax] += t->dim(ax);
  }
  if (!bounded_numel(shape, limit)) return std::nullopt;
  Tensor out(first.dtype(), shape);
  const int64_t outer = product(shape, 0, ax);
  const size_t elem = dtype_size(first.dtype());
  auto* dst = static_cast<char*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : in) {
      const size_t chunk = static_cast<size_t>(product(t->shape(), ax, t->rank())) * elem;
      if (chunk) std::memcpy(dst, static_cast<const char*>(t->raw()) + static_cast<size_t>(o) * chunk, chunk);
      dst += chunk;
    }
  return out;
}

Result eval_gather(const onnx::NodeProto& n, const Tensor& data, const Tensor& indices_t, int64_t limit) {
  const auto indices = int_values(indices_t);
  if (!indices || data.rank() == 0) return std::nullopt;
  const auto axis = normalized_axis(int_attr(n, "axis", 0), static_cast<int64_t>(data.rank()));
  if (!axis) return std::nullopt;
  const auto ax = static_cast<size_t>(*axis);
  Shape shape(data.shape().begin(), data.shape().begin() + static_cast<std::ptrdiff_t>(ax));
  shape.insert(shape.end(), indices_t.shape().begin(), indices_t.shape().end());
  shape.insert(shape.end(), data.shape().begin() + static_cast<std::ptrdiff_t>(ax) + 1, data.shape().end());
  if (!bounded_numel(shape, limit)) return std::nullopt;
  const int64_t extent = data.dim(ax), outer = product(data.shape(), 0, ax);
  const size_t inner = static_cast<size_t>(product(data.shape(), ax + 1, data.rank())) * dtype_size(data.dtype());
  Tensor out(data.dtype(), shape);
  auto* dst = static_cast<char*>(out.mutable_raw());
  const auto* src = static_cast<const char*>(data.raw());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : *indices) {
      if (index < -extent || index >= extent) return std::nullopt;  // the runtime reports it
      if (index < 0) index += extent;
      if (inner) std::memcpy(dst, src + static_cast<size_t>(o * extent + index) * inner, inner);
      dst += inner;
    }
  return out;
}

// Slice of a 1-D tensor (shape arithmetic); other ranks are left to the runtime.
Result eval_slice(const Tensor& data, const std::vector<const Tensor*>& in) {
  if (data.rank() != 1 || in.size() < 3 || !in[1] || !in[2]) return std::nullopt;
  const auto starts = int_values(*in[1]), ends = int_values(*in[2]);
  const auto axes = in.size() > 3 && in[3] ? int_values(*in[3]) : std::vector<int64_t>{0};
  const auto steps = in.size() > 4 && in[4] ? int_values(*in[4]) : std::vector<int64_t>{1};
  if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || !normalized_axis((*axes)[0], 1) || (*steps)[0] == 0)
    return std::nullopt;
  const int64_t n = data.dim(0), step = (*steps)[0];
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < -n ? lo : v + n;  // avoids overflow for INT64_MIN
    return std::clamp(v, lo, hi);
  };
  // ONNX: positive steps clamp to [0, n], negative ones to [-1, n - 1] (ends) and [0, n - 1] (starts).
  const int64_t start = step > 0 ? clamp((*starts)[0], 0, n) : clamp((*starts)[0], 0, n - 1);
  const int64_t end = step > 0 ? clamp((*ends)[0], 0, n) : clamp((*ends)[0], -1, n - 1);
  std::vector<int64_t> picked;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) picked.push_back(i);
  const size_t elem = dtype_size(data.dtype());
  Tensor out(data.dtype(), {static_cast<int64_t>(picked.size())});
  for (size_t k = 0; k < picked.size(); ++k)
    std::memcpy(static_cast<char*>(out.mutable_raw()) + k * elem,
                static_cast<const char*>(data.raw()) + static_cast<size_t>(picked[k]) * elem, elem);
  return out;
}

// ---- Creation ----

Result eval_range(const Tensor& start_t, const Tensor& limit_t, const Tensor& delta_t, int64_t max_elements) {
  const auto s = int_values(start_t), l = int_values(limit_t), d = int_values(delta_t);
  if (!s || !l || !d || s->size() != 1 || l->size() != 1 || d->size() != 1 || (*d)[0] == 0) return std::nullopt;
  if (start_t.dtype() != limit_t.dtype() || start_t.dtype() != delta_t.dtype()) return std::nullopt;
  const __int128 span = static_cast<__int128>((*l)[0]) - (*s)[0], delta = (*d)[0];
  __int128 count = span / delta + ((span % delta != 0 && ((span > 0) == (delta > 0))) ? 1 : 0);  // ceil
  if (count < 0) count = 0;
  if (count > max_elements) return std::nullopt;
  std::vector<int64_t> values;
  for (__int128 k = 0; k < count; ++k) values.push_back(static_cast<int64_t>((*s)[0] + k * delta));
  Tensor out = int64_tensor(values);
  if (start_t.dtype() == DType::kInt32) {
    Tensor narrow(DType::kInt32, out.shape());
    for (size_t k = 0; k < values.size(); ++k) narrow.data<int32_t>()[k] = static_cast<int32_t>(values[k]);
    return narrow;
  }
  return out;
}

Result eval_constant_of_shape(const onnx::NodeProto& n, const Tensor& shape_t, int64_t limit) {
  const auto dims = int_values(shape_t);
  if (!dims || shape_t.rank() != 1) return std::nullopt;
  const Shape shape(dims->begin(), dims->end());
  const auto count = bounded_numel(shape, limit);
  if (!count) return std::nullopt;
  Tensor fill = Tensor::scalar<float>(DType::kFloat32, 0.0f);
  if (const auto* value = find_attr(n, "value")) {
    try {
      fill = tensor_from_proto(value->t(), "ConstantOfShape value");
    } catch (const Error&) {
      return std::nullopt;
    }
    if (fill.numel() != 1 || !movable(fill)) return std::nullopt;
  }
  Tensor out(fill.dtype(), shape);
  const size_t elem = dtype_size(fill.dtype());
  for (int64_t k = 0; k < *count; ++k)
    std::memcpy(static_cast<char*>(out.mutable_raw()) + static_cast<size_t>(k) * elem, fill.raw(), elem);
  return out;
}

Result eval_shape(const onnx::NodeProto& n, const Tensor& x) {
  const auto [begin, end] = shape_op_range(n, static_cast<int64_t>(x.rank()));
  return int64_tensor(std::vector<int64_t>(x.shape().begin() + begin, x.shape().begin() + end));
}

const Tensor* at(const std::vector<const Tensor*>& in, size_t i) { return i < in.size() ? in[i] : nullptr; }

Result dispatch_op(const onnx::NodeProto& n, const std::vector<const Tensor*>& in, int64_t limit) {
  const std::string& op = n.op_type();
  const Tensor* x = at(in, 0);
  if (!x || !movable(*x)) return std::nullopt;
  if (op == "Identity") return *x;
  if (op == "Shape") return eval_shape(n, *x);
  if (op == "Size") return int64_tensor({x->numel()}, true);
  if (op == "Cast") return eval_cast(n, *x);
  if (op == "Neg") return eval_neg(*x);
  if (op == "Sqrt") return eval_sqrt(*x);
  if (op == "Unsqueeze") return eval_unsqueeze(*x, at(in, 1));
  if (op == "Squeeze") return eval_squeeze(*x, at(in, 1));
  if (op == "Concat") return eval_concat(n, in, limit);
  if (op == "Slice") return eval_slice(*x, in);
  if (op == "ConstantOfShape") return eval_constant_of_shape(n, *x, limit);
  const Tensor* y = at(in, 1);
  if (!y) return std::nullopt;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return eval_binary(op, *x, *y, limit);
  if (op == "Pow" && (x->dtype() == DType::kFloat32 || x->dtype() == DType::kFloat64))
    return eval_binary(op, *x, *y, limit);  // integer powers are left to the runtime
  if (op == "Reshape") return eval_reshape(n, *x, *y);
  if (op == "Gather") return eval_gather(n, *x, *y, limit);
  if (op == "Range" && at(in, 2)) return eval_range(*x, *y, *in[2], limit);
  return std::nullopt;
}

}  // namespace

bool is_foldable_op(const std::string& op_type) {
  static const std::set<std::string> ops = {
      "Identity", "Shape", "Size", "Cast", "Neg", "Sqrt",    "Unsqueeze", "Squeeze", "Concat",         "Slice",
      "Add",      "Sub",   "Mul",  "Div",  "Pow", "Reshape", "Gather",    "Range",   "ConstantOfShape"};
  return ops.count(op_type) != 0;
}

std::optional<Tensor> evaluate_constant(const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs,
                                        int64_t max_elements) {
  if (!is_foldable_op(node.op_type())) return std::nullopt;
  Result out = dispatch_op(node, inputs, max_elements);
  if (out && out->numel() > max_elements) return std::nullopt;
  return out;
}

std::pair<int64_t, int64_t> shape_op_range(const onnx::NodeProto& shape_node, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t begin = clamp(int_attr(shape_node, "start", 0));
  const int64_t end = clamp(int_attr(shape_node, "end", rank));
  return {begin, std::max(begin, end)};
}

std::optional<Shape> reshape_target(const Shape& input, const std::vector<int64_t>& target, bool allow_zero) {
  const auto input_numel = bounded_numel(input, std::numeric_limits<int64_t>::max());
  if (!input_numel) return std::nullopt;
  Shape shape;
  int infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allow_zero) {
      if (i >= input.size()) return std::nullopt;
      d = input[i];
    } else if (d == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
      d = 1;
    } else if (d < 0) {
      return std::nullopt;
    }
    shape.push_back(d);
  }
  const auto known = bounded_numel(shape, std::numeric_limits<int64_t>::max());
  if (!known) return std::nullopt;
  if (infer >= 0) {
    if (*known == 0 || *input_numel % *known != 0) return std::nullopt;
    shape[static_cast<size_t>(infer)] = *input_numel / *known;
  } else if (*known != *input_numel) {
    return std::nullopt;
  }
  return shape;
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  return int_attr(node, name, fallback);
}

Tensor int64_tensor(const std::vector<int64_t>& values, bool scalar) {
  Tensor t(DType::kInt64, scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())});
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

std::optional<std::vector<int64_t>> int_values(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = t.data<int64_t>()[k];
  } else if (t.dtype() == DType::kInt32) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = t.data<int32_t>()[k];
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace parity::exporter
