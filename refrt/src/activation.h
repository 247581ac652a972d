// Internal: the elementwise epilogue of fused nodes (Conv / Gemm / MatMul + bias + activation, and
// standalone activation chains recognised at load). A chain is a list of steps applied in order to
// a block of outputs while it is still in cache. Each step computes what the ONNX nodes it replaces
// compute, in the same operation order (the same bits), except float32 sigmoid, SiLU and GELU, which
// use vmath.h's vectorised exp/erf (within 2 ulp / 2e-7 absolute).
#pragma once
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel.h"
#include "vmath.h"

namespace parity::refrt {

// The private domain of the nodes the load-time passes create (never in a model file).
inline constexpr const char* kFusedDomain = "com.parity.refrt";

enum class ActKind {
  kRelu,            // x < 0 ? 0 : x
  kClip,            // min(max(x, p0), p1), NaN passes through (as Clip)
  kHardSigmoid,     // clip(x * p0 + p1, 0, 1)           (ONNX HardSigmoid)
  kHardSwish,       // x * clip(x / 6 + 0.5, 0, 1)        (ONNX HardSwish)
  kAddClipDiv,      // clip(x + p0, p1, p2) / p3          (decomposed hardsigmoid)
  kMulAddClipDiv,   // (x * clip(x + p0, p1, p2)) / p3    (decomposed hardswish, torch's order)
  kMulAddClipDiv2,  // x * (clip(x + p0, p1, p2) / p3)   (decomposed hardswish, divide first)
  kSigmoid,         // 1 / (1 + e^-x), split by sign
  kSilu,            // x * sigmoid(x)
  kGeluErf,         // (x * p1) * (erf(x * p0) + p2)     (decomposed exact GELU)
};

struct ActStep {
  ActKind kind;
  float p[4] = {0, 0, 0, 0};
};

// Steps are stored on the fused node as attributes "activations" (strings) and
// "activation_params" (4 floats per step).
const char* act_kind_name(ActKind kind);
std::vector<ActStep> parse_activations(const NodeDef& node);
void store_activations(NodeDef& node, const std::vector<ActStep>& steps);

template <typename T>
inline T sigmoid_of(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

template <typename T>
inline T clip_of(T v, T lo, T hi) {
  v = v < lo ? lo : v;
  return hi < v ? hi : v;
}

// Applies `steps` to p[0..n).
template <typename T>
void apply_activations(const std::vector<ActStep>& steps, T* p, int64_t n) {
  for (const ActStep& s : steps) {
    const T a = static_cast<T>(s.p[0]), b = static_cast<T>(s.p[1]), c = static_cast<T>(s.p[2]),
            d = static_cast<T>(s.p[3]);
    switch (s.kind) {
      case ActKind::kRelu:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] < T(0) ? T(0) : p[i];
        break;
      case ActKind::kClip:
        for (int64_t i = 0; i < n; ++i) p[i] = clip_of(p[i], a, b);
        break;
      case ActKind::kHardSigmoid:
        for (int64_t i = 0; i < n; ++i) {
          const T v = a * p[i] + b;
          p[i] = v > T(1) ? T(1) : (v < T(0) ? T(0) : v);
        }
        break;
      case ActKind::kHardSwish:
        for (int64_t i = 0; i < n; ++i) {
          const T v = static_cast<T>(1.0f / 6.0f) * p[i] + T(0.5);
          p[i] = p[i] * (v > T(1) ? T(1) : (v < T(0) ? T(0) : v));
        }
        break;
      case ActKind::kAddClipDiv:
        for (int64_t i = 0; i < n; ++i) p[i] = clip_of(p[i] + a, b, c) / d;
        break;
      case ActKind::kMulAddClipDiv:
        for (int64_t i = 0; i < n; ++i) p[i] = (p[i] * clip_of(p[i] + a, b, c)) / d;
        break;
      case ActKind::kMulAddClipDiv2:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] * (clip_of(p[i] + a, b, c) / d);
        break;
      case ActKind::kSigmoid:
        if constexpr (std::is_same_v<T, float>) {
          vmath::sigmoid(p, n);
          break;
        }
        for (int64_t i = 0; i < n; ++i) p[i] = sigmoid_of(p[i]);
        break;
      case ActKind::kSilu:
        if constexpr (std::is_same_v<T, float>) {
          vmath::silu(p, n);
          break;
        }
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] * sigmoid_of(p[i]);
        break;
      case ActKind::kGeluErf:
        if constexpr (std::is_same_v<T, float>) {
          vmath::gelu_erf(p, n, s.p[0], s.p[1], s.p[2]);
          break;
        }
        for (int64_t i = 0; i < n; ++i) p[i] = (p[i] * b) * (std::erf(p[i] * a) + c);
        break;
    }
  }
}

}  // namespace parity::refrt
