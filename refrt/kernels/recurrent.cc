// Recurrent layers: LSTM, GRU and RNN (7, and 14 which added `layout`).
//
// Per direction, the input projection X·W^T of every time step is one GEMM; each step then adds
// H_{t-1}·R^T (one GEMM over the batch) and applies the gate equations. Work is time-major inside;
// layout=1 inputs are transposed in and outputs written batch-major. sequence_lens is honoured per
// batch entry: steps past an entry's length leave its state unchanged and its Y rows zero, and the
// reverse direction starts at the entry's last valid step.
// float16/bfloat16 are computed in float32 (nn::run_float).
#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>

#include "nn_common.h"

namespace parity::refrt {
namespace {

enum class Activation { kSigmoid, kTanh, kRelu, kSoftsign, kSoftplus };

template <typename T>
T activate(Activation a, T x) {
  switch (a) {
    case Activation::kSigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kRelu:
      return x > T(0) ? x : T(0);
    case Activation::kSoftsign:
      return x / (T(1) + std::abs(x));
    case Activation::kSoftplus:
      return std::log1p(std::exp(x));
  }
  return x;
}

Activation parse_activation(const NodeDef& node, const std::string& name) {
  if (name == "Sigmoid") return Activation::kSigmoid;
  if (name == "Tanh") return Activation::kTanh;
  if (name == "Relu") return Activation::kRelu;
  if (name == "Softsign") return Activation::kSoftsign;
  if (name == "Softplus") return Activation::kSoftplus;
  node.fail("activation '" + name + "' is not implemented (supported: Sigmoid, Tanh, Relu, Softsign, Softplus)",
            ErrorKind::kUnsupported);
}

// Sizes of one call, validated against W, R, B, sequence_lens and initial_h.
struct RecurrentDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
};

// Attributes and input checks shared by the recurrent ops; `gates` = 4 (LSTM), 3 (GRU) or 1 (RNN),
// `functions` = activations per direction.
class RecurrentBase : public Kernel {
 protected:
  RecurrentBase(const NodeDef& node, int64_t gates, const std::vector<std::string>& default_activations)
      : node_(node), gates_(gates), layout_(node.opset >= 14 ? node.attr_int("layout", 0) : 0) {
    const Attribute* dir = node.attr("direction", Attribute::Type::kString);
    const std::string direction = dir ? dir->s : "forward";
    if (direction == "forward") {
      dirs_ = 1;
    } else if (direction == "reverse") {
      dirs_ = 1;
      reverse_only_ = true;
    } else if (direction == "bidirectional") {
      dirs_ = 2;
    } else {
      node.fail("direction must be forward, reverse or bidirectional, got '" + direction + "'");
    }
    if (layout_ != 0 && layout_ != 1) node.fail("layout must be 0 or 1, got " + std::to_string(layout_));
    hidden_size_ = node.attr_int("hidden_size", -1);
    if (node.attr("hidden_size") && hidden_size_ <= 0) node.fail("hidden_size must be positive");
    if (const Attribute* c = node.attr("clip", Attribute::Type::kFloat)) {
      if (!(c->f > 0)) node.fail("clip must be positive, got " + std::to_string(c->f));
      clip_ = c->f;
    }
    // `activations` lists the functions of the forward direction, then of the reverse one.
    const size_t per_dir = default_activations.size();
    std::vector<std::string> names;
    if (const Attribute* a = node.attr("activations", Attribute::Type::kStrings)) names = a->strings;
    if (names.empty())
      for (int64_t d = 0; d < dirs_; ++d)
        names.insert(names.end(), default_activations.begin(), default_activations.end());
    if (names.size() != per_dir * static_cast<size_t>(dirs_))
      node.fail("activations must list " + std::to_string(per_dir * static_cast<size_t>(dirs_)) + " functions, got " +
                std::to_string(names.size()));
    for (const auto& n : names) activations_.push_back(parse_activation(node, n));
  }

  // Validates X, W, R, B (index 3), sequence_lens (4) and initial_h (5) and returns the sizes.
  RecurrentDims check(const KernelIO& io) const {
    const Tensor &x = io.in(0), &w = io.in(1), &r = io.in(2);
    if (x.rank() != 3) node_.fail("X must have rank 3, got " + shape_str(x.shape()));
    RecurrentDims d;
    d.dirs = dirs_;
    d.seq = x.dim(layout_ == 0 ? 0 : 1);
    d.batch = x.dim(layout_ == 0 ? 1 : 0);
    d.input = x.dim(2);
    if (r.rank() != 3)
      node_.fail("R must be [num_directions, " + std::to_string(gates_) + "*hidden_size, hidden_size], got " +
                 shape_str(r.shape()));
    d.hidden = r.dim(2);
    if (hidden_size_ > 0 && hidden_size_ != d.hidden)
      node_.fail("hidden_size is " + std::to_string(hidden_size_) + " but R is " + shape_str(r.shape()));
    const int64_t gh = gates_ * d.hidden;
    expect(w, {dirs_, gh, d.input}, "W");
    expect(r, {dirs_, gh, d.hidden}, "R");
    for (const Tensor* t : {&w, &r})
      if (t->dtype() != x.dtype()) node_.fail("X, W and R must have the same dtype");
    if (const Tensor* b = io.optional(3)) expect(*b, {dirs_, 2 * gh}, "B");
    if (const Tensor* lens = io.optional(4)) expect(*lens, {d.batch}, "sequence_lens");
    if (const Tensor* h = io.optional(5)) expect(*h, state_shape(d), "initial_h");
    if (d.seq * d.batch > INT_MAX || gh > INT_MAX || d.input > INT_MAX)
      node_.fail("sizes exceed the BLAS int range", ErrorKind::kUnsupported);
    return d;
  }

  void expect(const Tensor& t, const Shape& shape, const char* what) const {
    if (t.shape() != shape)
      node_.fail(std::string(what) + " must be " + shape_str(shape) + ", got " + shape_str(t.shape()));
  }

  // [num_directions, batch, hidden] (layout 0) or [batch, num_directions, hidden] (layout 1).
  Shape state_shape(const RecurrentDims& d) const {
    return layout_ == 0 ? Shape{d.dirs, d.batch, d.hidden} : Shape{d.batch, d.dirs, d.hidden};
  }
  Shape y_shape(const RecurrentDims& d) const {
    return layout_ == 0 ? Shape{d.seq, d.dirs, d.batch, d.hidden} : Shape{d.batch, d.seq, d.dirs, d.hidden};
  }
  // Element offsets of row (t, dir, b) of Y and of row (dir, b) of a state tensor.
  int64_t y_row(const RecurrentDims& d, int64_t t, int64_t dir, int64_t b) const {
    return (layout_ == 0 ? ((t * d.dirs + dir) * d.batch + b) : ((b * d.seq + t) * d.dirs + dir)) * d.hidden;
  }
  int64_t state_row(const RecurrentDims& d, int64_t dir, int64_t b) const {
    return (layout_ == 0 ? (dir * d.batch + b) : (b * d.dirs + dir)) * d.hidden;
  }

  // X as a time-major [seq * batch, input] buffer.
  template <typename T>
  std::vector<T> time_major(const Tensor& x, const RecurrentDims& d) const {
    const T* px = x.data<T>();
    if (layout_ == 0) return std::vector<T>(px, px + x.numel());
    std::vector<T> out(static_cast<size_t>(x.numel()));
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t t = 0; t < d.seq; ++t)
        std::copy_n(px + (b * d.seq + t) * d.input, d.input, out.begin() + (t * d.batch + b) * d.input);
    return out;
  }

  // Valid steps per batch entry (all seq_length without sequence_lens).
  std::vector<int64_t> lengths(const KernelIO& io, const RecurrentDims& d) const {
    const Tensor* lens = io.optional(4);
    if (!lens) return std::vector<int64_t>(static_cast<size_t>(d.batch), d.seq);
    std::vector<int64_t> v = int64_values(*lens, "sequence_lens");
    for (int64_t l : v)
      if (l < 0 || l > d.seq)
        node_.fail("sequence_lens value " + std::to_string(l) + " is outside [0, " + std::to_string(d.seq) + "]");
    return v;
  }

  // A state input (initial_h / initial_c) of direction `dir` as a [batch, hidden] buffer (zeros if absent).
  template <typename T>
  std::vector<T> initial_state(const Tensor* t, const RecurrentDims& d, int64_t dir) const {
    std::vector<T> out(static_cast<size_t>(d.batch * d.hidden), T(0));
    if (!t) return out;
    for (int64_t b = 0; b < d.batch; ++b)
      std::copy_n(t->data<T>() + state_row(d, dir, b), d.hidden, out.begin() + b * d.hidden);
    return out;
  }

  // Wb + Rb of direction `dir` ([gates * hidden]; zeros without B).
  template <typename T>
  std::vector<T> summed_bias(const Tensor* b, const RecurrentDims& d, int64_t dir) const {
    const int64_t gh = gates_ * d.hidden;
    std::vector<T> out(static_cast<size_t>(gh), T(0));
    if (!b) return out;
    const T* pb = b->data<T>() + dir * 2 * gh;
    for (int64_t j = 0; j < gh; ++j) out[static_cast<size_t>(j)] = pb[j] + pb[gh + j];
    return out;
  }

  template <typename T>
  T clipped(T x) const {
    return clip_ ? std::clamp(x, static_cast<T>(-*clip_), static_cast<T>(*clip_)) : x;
  }
  Activation act(int64_t dir, int64_t k) const {
    return activations_[static_cast<size_t>(dir) * activations_.size() / static_cast<size_t>(dirs_) +
                        static_cast<size_t>(k)];
  }
  bool reversed(int64_t dir) const { return reverse_only_ || dir == 1; }

  NodeDef node_;
  int64_t gates_, layout_, dirs_ = 1, hidden_size_ = -1;
  bool reverse_only_ = false;
  std::optional<float> clip_;
  std::vector<Activation> activations_;
};

// LSTM, gates in ONNX order i, o, f, c; peepholes P = [Pi, Po, Pf].
class LstmKernel : public RecurrentBase {
 public:
  explicit LstmKernel(const NodeDef& node)
      : RecurrentBase(node, 4, {"Sigmoid", "Tanh", "Tanh"}), input_forget_(node.attr_int("input_forget", 0) != 0) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }
  double flops(const KernelIO& io) const override {  // the two GEMMs; the gate arithmetic is O(1/H) of it
    const Tensor &x = io.in(0), &r = io.in(2);
    if (x.rank() != 3 || r.rank() != 3) return 0;
    return 2.0 * static_cast<double>(dirs_) * static_cast<double>(x.dim(0) * x.dim(1)) * static_cast<double>(r.dim(1)) *
           static_cast<double>(x.dim(2) + r.dim(2));
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const RecurrentDims d = check(io);
    BackendSet ran = 0;  // what ran the products, for the profile
    const int64_t H = d.hidden, G = 4 * H;
    const Tensor* initial_c = io.optional(6);
    const Tensor* peepholes = io.optional(7);
    if (initial_c) expect(*initial_c, state_shape(d), "initial_c");
    if (peepholes) expect(*peepholes, {d.dirs, 3 * H}, "P");
    for (const Tensor* t : {io.optional(3), io.optional(5), initial_c, peepholes})
      if (t && t->dtype() != io.in(0).dtype()) node_.fail("B, initial_h, initial_c and P must have the dtype of X");
    const std::vector<T> x = time_major<T>(io.in(0), d);
    const std::vector<int64_t> lens = lengths(io, d);
    Tensor y(io.in(0).dtype(), y_shape(d), /*zero=*/true), y_h(io.in(0).dtype(), state_shape(d)),
        y_c(io.in(0).dtype(), state_shape(d));
    std::vector<T> gx(static_cast<size_t>(d.seq * d.batch * G)), rec(static_cast<size_t>(d.batch * G));
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const Activation f = act(dir, 0), g = act(dir, 1), h_act = act(dir, 2);
      const std::vector<T> bias = summed_bias<T>(io.optional(3), d, dir);
      const T* w = io.in(1).data<T>() + dir * G * d.input;
      const T* r = io.in(2).data<T>() + dir * G * H;
      const T* p = peepholes ? peepholes->data<T>() + dir * 3 * H : nullptr;
      std::vector<T> h = initial_state<T>(io.optional(5), d, dir), c = initial_state<T>(initial_c, d, dir);
      ran |= backend_bit(gemm<T>(node_, false, true, d.seq * d.batch, G, d.input, T(1), x.data(), d.input, w, d.input,
                                 T(0), gx.data(), G));
      for (int64_t s = 0; s < d.seq; ++s) {
        ran |= backend_bit(gemm<T>(node_, false, true, d.batch, G, H, T(1), h.data(), H, r, H, T(0), rec.data(), G));
        for (int64_t b = 0; b < d.batch; ++b) {
          const int64_t len = lens[static_cast<size_t>(b)];
          if (s >= len) continue;
          const int64_t t = reversed(dir) ? len - 1 - s : s;
          const T* gxr = gx.data() + (t * d.batch + b) * G;
          const T* rr = rec.data() + b * G;
          T* hb = h.data() + b * H;
          T* cb = c.data() + b * H;
          T* yr = y.data<T>() + y_row(d, t, dir, b);
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t gate) {
              return gxr[gate * H + j] + rr[gate * H + j] + bias[static_cast<size_t>(gate * H + j)];
            };
            const T c_prev = cb[j];
            const T i = activate(f, clipped(pre(0) + (p ? p[j] * c_prev : T(0))));
            const T fg = input_forget_ ? T(1) - i : activate(f, clipped(pre(2) + (p ? p[2 * H + j] * c_prev : T(0))));
            const T cand = activate(g, clipped(pre(3)));
            const T c_new = fg * c_prev + i * cand;
            const T o = activate(f, clipped(pre(1) + (p ? p[H + j] * c_new : T(0))));
            cb[j] = c_new;
            hb[j] = o * activate(h_act, c_new);
            yr[j] = hb[j];
          }
        }
      }
      for (int64_t b = 0; b < d.batch; ++b) {
        std::copy_n(h.data() + b * H, H, y_h.data<T>() + state_row(d, dir, b));
        std::copy_n(c.data() + b * H, H, y_c.data<T>() + state_row(d, dir, b));
      }
    }
    note_backends(io, ran);
    if (io.outputs.size() > 0) io.outputs[0] = std::move(y);
    if (io.outputs.size() > 1) io.outputs[1] = std::move(y_h);
    if (io.outputs.size() > 2) io.outputs[2] = std::move(y_c);
  }

  bool input_forget_;
};

// GRU, gates in ONNX order z, r, h. linear_before_reset=0 applies r to H_{t-1} before the R_h
// product (a second per-step GEMM on r*H); =1 (torch's form) applies it to H_{t-1}·R_h^T + Rb_h.
class GruKernel : public RecurrentBase {
 public:
  explicit GruKernel(const NodeDef& node)
      : RecurrentBase(node, 3, {"Sigmoid", "Tanh"}),
        linear_before_reset_(node.attr_int("linear_before_reset", 0) != 0) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }
  double flops(const KernelIO& io) const override {
    const Tensor &x = io.in(0), &r = io.in(2);
    if (x.rank() != 3 || r.rank() != 3) return 0;
    return 2.0 * static_cast<double>(dirs_) * static_cast<double>(x.dim(0) * x.dim(1)) * static_cast<double>(r.dim(1)) *
           static_cast<double>(x.dim(2) + r.dim(2));
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const RecurrentDims d = check(io);
    BackendSet ran = 0;  // what ran the products, for the profile
    const int64_t H = d.hidden, G = 3 * H;
    for (const Tensor* t : {io.optional(3), io.optional(5)})
      if (t && t->dtype() != io.in(0).dtype()) node_.fail("B and initial_h must have the dtype of X");
    const std::vector<T> x = time_major<T>(io.in(0), d);
    const std::vector<int64_t> lens = lengths(io, d);
    Tensor y(io.in(0).dtype(), y_shape(d), /*zero=*/true), y_h(io.in(0).dtype(), state_shape(d));
    std::vector<T> gx(static_cast<size_t>(d.seq * d.batch * G)), rec(static_cast<size_t>(d.batch * G)),
        reset_h(static_cast<size_t>(d.batch * H)), rec_h(static_cast<size_t>(d.batch * H)),
        zs(static_cast<size_t>(d.batch * H)), rs(static_cast<size_t>(d.batch * H));
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const Activation f = act(dir, 0), g = act(dir, 1);
      std::vector<T> wb(static_cast<size_t>(G), T(0)), rb(static_cast<size_t>(G), T(0));
      if (const Tensor* b = io.optional(3)) {
        std::copy_n(b->data<T>() + dir * 2 * G, G, wb.begin());
        std::copy_n(b->data<T>() + dir * 2 * G + G, G, rb.begin());
      }
      const T* w = io.in(1).data<T>() + dir * G * d.input;
      const T* r = io.in(2).data<T>() + dir * G * H;
      std::vector<T> h = initial_state<T>(io.optional(5), d, dir);
      ran |= backend_bit(gemm<T>(node_, false, true, d.seq * d.batch, G, d.input, T(1), x.data(), d.input, w, d.input,
                                 T(0), gx.data(), G));
      for (int64_t s = 0; s < d.seq; ++s) {
        // z and r (and, before reset, the h part) of H_{t-1}·R^T
        ran |= backend_bit(gemm<T>(node_, false, true, d.batch, linear_before_reset_ ? G : 2 * H, H, T(1), h.data(), H,
                                   r, H, T(0), rec.data(), G));
        auto step = [&](int64_t b) -> int64_t {  // the time index of entry b at step s, or -1 when done
          const int64_t len = lens[static_cast<size_t>(b)];
          return s >= len ? -1 : (reversed(dir) ? len - 1 - s : s);
        };
        for (int64_t b = 0; b < d.batch; ++b) {
          const int64_t t = step(b);
          if (t < 0) continue;
          const T* gxr = gx.data() + (t * d.batch + b) * G;
          const T* rr = rec.data() + b * G;
          for (int64_t j = 0; j < H; ++j) {
            const size_t u = static_cast<size_t>(b * H + j);
            zs[u] = activate(f, clipped(gxr[j] + rr[j] + wb[static_cast<size_t>(j)] + rb[static_cast<size_t>(j)]));
            rs[u] = activate(
                f, clipped(gxr[H + j] + rr[H + j] + wb[static_cast<size_t>(H + j)] + rb[static_cast<size_t>(H + j)]));
            reset_h[u] = rs[u] * h[u];
          }
        }
        if (!linear_before_reset_)
          ran |= backend_bit(gemm<T>(node_, false, true, d.batch, H, H, T(1), reset_h.data(), H, r + 2 * H * H, H, T(0),
                                     rec_h.data(), H));
        for (int64_t b = 0; b < d.batch; ++b) {
          const int64_t t = step(b);
          if (t < 0) continue;
          const T* gxr = gx.data() + (t * d.batch + b) * G;
          T* yr = y.data<T>() + y_row(d, t, dir, b);
          for (int64_t j = 0; j < H; ++j) {
            const size_t u = static_cast<size_t>(b * H + j), k = static_cast<size_t>(2 * H + j);
            const T recurrent =
                linear_before_reset_ ? rs[u] * (rec[static_cast<size_t>(b * G) + k] + rb[k]) : rec_h[u] + rb[k];
            const T cand = activate(g, clipped(gxr[2 * H + j] + wb[k] + recurrent));
            h[u] = (T(1) - zs[u]) * cand + zs[u] * h[u];
            yr[j] = h[u];
          }
        }
      }
      for (int64_t b = 0; b < d.batch; ++b) std::copy_n(h.data() + b * H, H, y_h.data<T>() + state_row(d, dir, b));
    }
    note_backends(io, ran);
    if (io.outputs.size() > 0) io.outputs[0] = std::move(y);
    if (io.outputs.size() > 1) io.outputs[1] = std::move(y_h);
  }

  bool linear_before_reset_;
};

// RNN: H_t = f(X_t·W^T + H_{t-1}·R^T + Wb + Rb).
class RnnKernel : public RecurrentBase {
 public:
  explicit RnnKernel(const NodeDef& node) : RecurrentBase(node, 1, {"Tanh"}) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }
  double flops(const KernelIO& io) const override {
    const Tensor &x = io.in(0), &r = io.in(2);
    if (x.rank() != 3 || r.rank() != 3) return 0;
    return 2.0 * static_cast<double>(dirs_) * static_cast<double>(x.dim(0) * x.dim(1)) * static_cast<double>(r.dim(1)) *
           static_cast<double>(x.dim(2) + r.dim(2));
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const RecurrentDims d = check(io);
    BackendSet ran = 0;  // what ran the products, for the profile
    const int64_t H = d.hidden;
    for (const Tensor* t : {io.optional(3), io.optional(5)})
      if (t && t->dtype() != io.in(0).dtype()) node_.fail("B and initial_h must have the dtype of X");
    const std::vector<T> x = time_major<T>(io.in(0), d);
    const std::vector<int64_t> lens = lengths(io, d);
    Tensor y(io.in(0).dtype(), y_shape(d), /*zero=*/true), y_h(io.in(0).dtype(), state_shape(d));
    std::vector<T> gx(static_cast<size_t>(d.seq * d.batch * H)), rec(static_cast<size_t>(d.batch * H));
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const Activation f = act(dir, 0);
      const std::vector<T> bias = summed_bias<T>(io.optional(3), d, dir);
      const T* w = io.in(1).data<T>() + dir * H * d.input;
      const T* r = io.in(2).data<T>() + dir * H * H;
      std::vector<T> h = initial_state<T>(io.optional(5), d, dir);
      ran |= backend_bit(gemm<T>(node_, false, true, d.seq * d.batch, H, d.input, T(1), x.data(), d.input, w, d.input,
                                 T(0), gx.data(), H));
      for (int64_t s = 0; s < d.seq; ++s) {
        ran |= backend_bit(gemm<T>(node_, false, true, d.batch, H, H, T(1), h.data(), H, r, H, T(0), rec.data(), H));
        for (int64_t b = 0; b < d.batch; ++b) {
          const int64_t len = lens[static_cast<size_t>(b)];
          if (s >= len) continue;
          const int64_t t = reversed(dir) ? len - 1 - s : s;
          const T* gxr = gx.data() + (t * d.batch + b) * H;
          T* yr = y.data<T>() + y_row(d, t, dir, b);
          for (int64_t j = 0; j < H; ++j) {
            const size_t u = static_cast<size_t>(b * H + j);
            h[u] = activate(f, clipped(gxr[j] + rec[u] + bias[static_cast<size_t>(j)]));
            yr[j] = h[u];
          }
        }
      }
      for (int64_t b = 0; b < d.batch; ++b) std::copy_n(h.data() + b * H, H, y_h.data<T>() + state_row(d, dir, b));
    }
    note_backends(io, ran);
    if (io.outputs.size() > 0) io.outputs[0] = std::move(y);
    if (io.outputs.size() > 1) io.outputs[1] = std::move(y_h);
  }
};

}  // namespace

PARITY_KERNEL("LSTM", 7, LstmKernel, kFloatTypes16);
PARITY_KERNEL("LSTM", 14, LstmKernel, kFloatTypes16);
PARITY_KERNEL("GRU", 7, GruKernel, kFloatTypes16);
PARITY_KERNEL("GRU", 14, GruKernel, kFloatTypes16);
PARITY_KERNEL("RNN", 7, RnnKernel, kFloatTypes16);
PARITY_KERNEL("RNN", 14, RnnKernel, kFloatTypes16);

}  // namespace parity::refrt
