// Tensors made from a few scalars or a shape: Range, EyeLike, and Trilu (a mask of its input); ConstantOfShape
// is in generators.cc. Sizes come from data, so each is checked (sign, overflow, allocation limit) first.
#include <cmath>
#include <cstring>

#include "../src/dispatch.h"
#include "../src/element_values.h"
#include "../src/kernel.h"

namespace parity::refrt {
namespace {

// Range: max(ceil((limit - start) / delta), 0) elements start + i * delta, in the inputs' dtype.
class RangeKernel : public Kernel {
 public:
  explicit RangeKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor &start = io.in(0), &limit = io.in(1), &delta = io.in(2);
    const DType t = start.dtype();
    if (limit.dtype() != t || delta.dtype() != t) node_.fail("start, limit and delta differ in dtype");
    if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1)
      node_.fail("start, limit and delta must be scalars");
    if (t == DType::kBool) node_.fail("dtype bool has no range", ErrorKind::kUnsupported);
    const bool integral = !dtype_is_floating(t);
    int64_t count = 0;
    if (integral) {  // exact, in 128 bits: limit - start cannot overflow
      const __int128 s = element_as_int64(start, 0, "start"), l = element_as_int64(limit, 0, "limit"),
                     d = element_as_int64(delta, 0, "delta");
      if (d == 0) node_.fail("delta is 0");
      const __int128 span = l - s;
      const __int128 n = span / d + ((span % d != 0) && ((span > 0) == (d > 0)) ? 1 : 0);
      if (n > INT64_MAX) node_.fail("range of " + std::to_string(static_cast<double>(n)) + " elements is too large");
      count = n > 0 ? static_cast<int64_t>(n) : 0;
    } else {
      const double s = element_as_double(start, 0), l = element_as_double(limit, 0), d = element_as_double(delta, 0);
      if (d == 0 || std::isnan(d) || std::isnan(s) || std::isnan(l)) node_.fail("delta is 0 or a bound is NaN");
      const double n = std::ceil((l - s) / d);
      if (!(n < 9.2e18)) node_.fail("range of " + std::to_string(n) + " elements is too large");
      count = n > 0 ? static_cast<int64_t>(n) : 0;
    }
    Tensor out(t, {count});  // an absurd count fails here, on the allocation limit
    if (count > 0) fill(out, start, delta, integral);
    io.outputs[0] = std::move(out);
  }

 private:
  static void fill(Tensor& out, const Tensor& start, const Tensor& delta, bool integral) {
    const int64_t n = out.numel();
    if (is_float16_like(out.dtype())) {  // computed in float32, rounded once
      const float s = static_cast<float>(element_as_double(start, 0)),
                  d = static_cast<float>(element_as_double(delta, 0));
      auto* p = out.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) {
        const float v = s + static_cast<float>(i) * d;
        p[i] = out.dtype() == DType::kFloat16 ? float_to_half(v) : float_to_bf16(v);
      }
      return;
    }
    dispatch_numeric(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* p = out.data<T>();
      const T s = *start.data<T>(), d = *delta.data<T>();
      if (integral) {  // in uint64, wrapping is defined; the count keeps values within [start, limit)
        for (int64_t i = 0; i < n; ++i)
          p[i] = static_cast<T>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d));
      } else {
        for (int64_t i = 0; i < n; ++i) p[i] = s + static_cast<T>(i) * d;
      }
    });
  }
  NodeDef node_;
};

// EyeLike: zeros of the input's 2-D shape with ones on diagonal k, in `dtype` (default: the input's).
class EyeLikeKernel : public Kernel {
 public:
  explicit EyeLikeKernel(const NodeDef& node) : node_(node), k_(node.attr_int("k", 0)) {
    if (node.attr("dtype")) {
      const int64_t d = node.attr_int("dtype", 0);
      if (d > INT32_MAX || d < 0 || !dtype_is_supported(static_cast<int32_t>(d)) ||
          d == static_cast<int64_t>(DType::kString))
        node.fail("dtype " + std::to_string(d) + " is not supported", ErrorKind::kUnsupported);
      dtype_ = static_cast<DType>(d);
    }
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() != 2) node_.fail("input must be 2-D, got " + shape_str(x.shape()));
    const DType t = dtype_ == DType::kUndefined ? x.dtype() : dtype_;
    Tensor out(t, x.shape(), true);
    const int64_t rows = x.dim(0), cols = x.dim(1);
    const std::vector<unsigned char> one = element_bytes(t, 1.0);
    char* dst = out.numel() ? static_cast<char*>(out.mutable_raw()) : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r + k_;
      if (c >= 0 && c < cols) std::memcpy(dst + static_cast<size_t>(r * cols + c) * one.size(), one.data(), one.size());
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t k_;
  DType dtype_ = DType::kUndefined;
};

// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims, zeroes the rest.
class TriluKernel : public Kernel {
 public:
  explicit TriluKernel(const NodeDef& node) : node_(node), upper_(node.attr_int("upper", 1) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() < 2) node_.fail("input must have rank >= 2, got " + shape_str(x.shape()));
    const Tensor* k_tensor = io.optional(1);
    if (k_tensor && k_tensor->numel() != 1) node_.fail("k must be a scalar");
    const int64_t k = k_tensor ? int64_values(*k_tensor, "k")[0] : 0;
    Tensor out = x.clone();
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    const size_t es = dtype_size(x.dtype());
    if (out.numel() == 0) {
      io.outputs[0] = std::move(out);
      return;
    }
    char* p = static_cast<char*>(out.mutable_raw());
    const int64_t mats = out.numel() / (rows * cols);
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          // j - i compared with k without overflow: k is any int64.
          const __int128 diff = static_cast<__int128>(j) - i;
          const bool keep = upper_ ? diff >= k : diff <= k;
          if (!keep) std::memset(p + static_cast<size_t>((m * rows + i) * cols + j) * es, 0, es);
        }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  bool upper_;
};

}  // namespace

// Range 11.
PARITY_KERNEL("Range", 11, RangeKernel, kAllNumericTypes);
// EyeLike 9 (since 9; 22 widened types).
PARITY_KERNEL("EyeLike", 9, EyeLikeKernel, kAllTypes);
// Trilu 14.
PARITY_KERNEL("Trilu", 14, TriluKernel, kAllTypes);

}  // namespace parity::refrt
