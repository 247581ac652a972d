// Det (11; 22 widened the types): the determinant of each [M, M] matrix of a [..., M, M] input, by
// LU decomposition with partial pivoting in double, rounded once to the input's float dtype.
// An empty matrix (M = 0) has determinant 1.
#include <cmath>
#include <utility>

#include "double_io.h"

namespace parity::refrt {
namespace {

double determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  for (int64_t col = 0; col < m; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < m; ++r)
      if (std::fabs(a[r * m + col]) > std::fabs(a[pivot * m + col])) pivot = r;
    if (a[pivot * m + col] == 0) return 0.0;
    if (pivot != col) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[col * m + k], a[pivot * m + k]);
      det = -det;
    }
    const double p = a[col * m + col];
    det *= p;
    for (int64_t r = col + 1; r < m; ++r) {
      const double f = a[r * m + col] / p;
      for (int64_t k = col; k < m; ++k) a[r * m + k] -= f * a[col * m + k];
    }
  }
  return det;
}

class DetKernel : public Kernel {
 public:
  explicit DetKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (!is_float_dtype(x.dtype()))
      node_.fail("input must be a float tensor, got " + dtype_name(x.dtype()), ErrorKind::kUnsupported);
    const size_t r = x.rank();
    if (r < 2 || x.dim(r - 1) != x.dim(r - 2))
      node_.fail("input must be [..., M, M], got shape " + shape_str(x.shape()));
    const int64_t m = x.dim(r - 1);
    const Shape shape(x.shape().begin(), x.shape().end() - 2);
    const int64_t count = checked_numel(shape);
    const std::vector<double> v = float_values(x);
    std::vector<double> out(static_cast<size_t>(count));
    for (int64_t b = 0; b < count; ++b)
      out[b] = determinant(std::vector<double>(v.begin() + b * m * m, v.begin() + (b + 1) * m * m), m);
    io.outputs[0] = float_tensor(x.dtype(), shape, out);
  }

 private:
  NodeDef node_;
};

}  // namespace

PARITY_KERNEL("Det", 11, DetKernel, kFloatTypes16);

}  // namespace parity::refrt
