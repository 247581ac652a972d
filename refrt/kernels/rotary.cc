// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim features of each head by the
// cos/sin caches, as pairs (x[i], x[i + dim/2]) or, interleaved, (x[2i], x[2i+1]). X is 4-D
// [B, heads, S, head] or 3-D [B, S, heads * head] (num_heads given). Caches are [B, S, dim/2], or
// [max_position, dim/2] indexed by position_ids [B, S].
#include "nn_common.h"

namespace parity::refrt {
namespace {

class RotaryEmbeddingKernel : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(const NodeDef& node)
      : node_(node),
        interleaved_(node.attr_int("interleaved", 0) != 0),
        num_heads_(node.attr_int("num_heads", 0)),
        rotary_dim_(node.attr_int("rotary_embedding_dim", 0)) {}

  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor& cos = io.in(1);
    const Tensor& sin = io.in(2);
    const Tensor* pos = io.optional(3);
    if (x.rank() != 3 && x.rank() != 4) node_.fail("X must be 3-D or 4-D, got " + shape_str(x.shape()));
    if (cos.dtype() != x.dtype() || sin.dtype() != x.dtype()) node_.fail("cos/sin caches must have X's dtype");
    const bool three_d = x.rank() == 3;
    if (three_d && num_heads_ <= 0) node_.fail("3-D X needs num_heads");
    const int64_t b = x.dim(0), heads = three_d ? num_heads_ : x.dim(1), s = three_d ? x.dim(1) : x.dim(2);
    if (three_d && x.dim(2) % heads != 0) node_.fail("hidden size is not divisible by num_heads");
    const int64_t hd = three_d ? x.dim(2) / heads : x.dim(3);
    const int64_t dim = rotary_dim_ > 0 ? rotary_dim_ : hd, half = dim / 2;
    if (dim > hd || dim % 2 != 0)
      node_.fail("rotary_embedding_dim " + std::to_string(dim) + " must be even and <= head size " +
                 std::to_string(hd));
    std::vector<int64_t> positions;
    if (pos) {
      positions = int64_values(*pos, "position_ids");
      if (pos->rank() != 2 || pos->dim(0) != b || pos->dim(1) != s)
        node_.fail("position_ids must be [" + std::to_string(b) + ", " + std::to_string(s) + "], got " +
                   shape_str(pos->shape()));
      if (cos.rank() != 2 || sin.shape() != cos.shape() || cos.dim(1) != half)
        node_.fail("with position_ids the caches must be [max_position, " + std::to_string(half) + "], got " +
                   shape_str(cos.shape()));
      for (int64_t p : positions)
        if (p < 0 || p >= cos.dim(0))
          node_.fail("position id " + std::to_string(p) + " is outside the cache of " + std::to_string(cos.dim(0)));
    } else if (cos.rank() != 3 || sin.shape() != cos.shape() || cos.dim(0) != b || cos.dim(1) != s ||
               cos.dim(2) != half) {
      node_.fail("the caches must be [" + std::to_string(b) + ", " + std::to_string(s) + ", " + std::to_string(half) +
                 "], got " + shape_str(cos.shape()));
    }
    Tensor y = x.clone();
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t j = 0; j < s; ++j) {
        const int64_t row = pos ? positions[static_cast<size_t>(bi * s + j)] : bi * s + j;
        const T* c = cos.data<T>() + row * half;
        const T* sn = sin.data<T>() + row * half;
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t off = three_d ? (bi * s + j) * heads * hd + h * hd : ((bi * heads + h) * s + j) * hd;
          for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = interleaved_ ? 2 * i : i, i2 = interleaved_ ? 2 * i + 1 : i + half;
            const T x1 = px[off + i1], x2 = px[off + i2];
            py[off + i1] = c[i] * x1 - sn[i] * x2;
            py[off + i2] = sn[i] * x1 + c[i] * x2;
          }
        }
      }
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

}  // namespace

PARITY_KERNEL("RotaryEmbedding", 23, RotaryEmbeddingKernel, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});

}  // namespace parity::refrt
