// Clip: y = min(max(x, lo), hi). Opset 6: lo/hi are float attributes (default -/+ float max);
// opset 11: optional scalar inputs of x's type (absent = no bound). When lo > hi every value
// becomes hi (the ONNX spec's rule, and what min(max(x, lo), hi) gives). NaN stays NaN.
#include <limits>

#include "elementwise.h"

namespace parity::refrt {
namespace {

class ClipKernel : public Kernel {
 public:
  explicit ClipKernel(const NodeDef& node)
      : node_(node),
        bounds_are_inputs_(node.opset >= 11),
        attr_min_(node.attr_float("min", std::numeric_limits<float>::lowest())),
        attr_max_(node.attr_float("max", std::numeric_limits<float>::max())) {}

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    bool done = false;
    dispatch_numeric(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (!bounds_are_inputs_ && !is_float_v<T>) return;  // opset 6 is float-only
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (bounds_are_inputs_) {
        if (const Tensor* t = io.optional(1)) lo = bound<T>(*t, x.dtype(), "min");
        if (const Tensor* t = io.optional(2)) hi = bound<T>(*t, x.dtype(), "max");
      } else {
        lo = static_cast<T>(attr_min_);
        hi = static_cast<T>(attr_max_);
      }
      Tensor out(x.dtype(), x.shape());
      const T* px = x.data<T>();
      T* po = out.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const T v = px[i];
        po[i] = v < lo ? lo : v;  // NaN fails both tests and passes through
        po[i] = hi < po[i] ? hi : po[i];
      }
      io.outputs[0] = std::move(out);
      done = true;
    });
    if (!done) fail_dtype(node_, x.dtype());
  }

 private:
  template <typename T>
  T bound(const Tensor& t, DType want, const char* what) const {
    if (t.dtype() != want)
      node_.fail(std::string("'") + what + "' is " + dtype_name(t.dtype()) + ", input is " + dtype_name(want));
    if (t.numel() != 1) node_.fail(std::string("'") + what + "' must be a scalar, got shape " + shape_str(t.shape()));
    return *t.data<T>();
  }
  NodeDef node_;
  bool bounds_are_inputs_;
  float attr_min_, attr_max_;
};

}  // namespace

// 6: bounds as attributes; 11: bounds as inputs; 12 and 13 widened types.
PARITY_KERNEL("Clip", 6, ClipKernel, kFloatTypes16);
PARITY_KERNEL("Clip", 11, ClipKernel, kAllNumericTypes);

}  // namespace parity::refrt
