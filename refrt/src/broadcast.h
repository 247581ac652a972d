// Internal: numpy broadcasting of N operands (binary arithmetic, comparisons, Where).
#pragma once
#include <array>

#include "kernel.h"

namespace parity::refrt {

template <size_t N>
struct BroadcastPlan {
  Shape out;
  int64_t numel = 0;
  bool all_same = true;  // every operand already has the output shape: one flat loop
  // Per operand, its element stride along each output dim (0 where the operand is broadcast).
  std::array<std::vector<int64_t>, N> strides;
};

template <size_t N>
BroadcastPlan<N> plan_broadcast(const std::array<const Shape*, N>& shapes, const NodeDef& node) {
  BroadcastPlan<N> plan;
  plan.out = *shapes[0];
  for (size_t k = 1; k < N; ++k) plan.out = broadcast_shapes(plan.out, *shapes[k], &node);
  plan.numel = checked_numel(plan.out);
  const size_t rank = plan.out.size();
  for (size_t k = 0; k < N; ++k) {
    const Shape& s = *shapes[k];
    plan.all_same = plan.all_same && s == plan.out;
    plan.strides[k].assign(rank, 0);
    int64_t stride = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t d = s.size() - 1 - i;  // operand dim, aligned right with output dim rank-1-i
      if (s[d] != 1) plan.strides[k][rank - 1 - i] = stride;
      stride *= s[d];
    }
  }
  return plan;
}

// Calls f(out_offset, offsets) for every output element, offsets[k] indexing operand k.
template <size_t N, typename F>
void for_each_broadcast(const BroadcastPlan<N>& plan, F&& f) {
  std::array<int64_t, N> offs{};
  if (plan.numel == 0) return;
  if (plan.all_same) {
    for (int64_t i = 0; i < plan.numel; ++i) {
      offs.fill(i);
      f(i, offs);
    }
    return;
  }
  const size_t rank = plan.out.size();
  if (rank == 0) {  // unreachable (scalars are "all same"), but keeps index(rank - 1) safe
    f(0, offs);
    return;
  }
  const int64_t inner = plan.out[rank - 1];
  std::array<int64_t, N> inner_stride{}, base{};
  for (size_t k = 0; k < N; ++k) inner_stride[k] = plan.strides[k][rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t o = 0; o < plan.numel; o += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      for (size_t k = 0; k < N; ++k) offs[k] = base[k] + j * inner_stride[k];
      f(o + j, offs);
    }
    // Odometer over the outer dims, moving each operand's base offset along.
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) base[k] += plan.strides[k][d];
      if (++index[d] < plan.out[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= plan.strides[k][d] * index[d];
      index[d] = 0;
    }
  }
}

// Calls f(out_offset, offsets, length, inner_strides) once per run of `length` output elements in
// which every operand moves by a fixed stride (0 or 1 after merging dims that are contiguous for all
// operands): the loop a kernel writes inside `f` is then a plain strided loop the compiler vectorises.
template <size_t N, typename F>
void for_each_broadcast_run(const BroadcastPlan<N>& plan, F&& f) {
  if (plan.numel == 0) return;
  std::array<int64_t, N> offs{}, inner{};
  if (plan.all_same || plan.out.empty()) {
    inner.fill(plan.all_same ? 1 : 0);
    return f(int64_t{0}, offs, plan.numel, inner);
  }
  // Merge dim d into d+1 when, for every operand, stride[d] == stride[d+1] * out[d+1].
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t d = 0; d < plan.out.size(); ++d) {
    if (plan.out[d] == 1) continue;  // size-1 dims move nothing
    bool merge = !dims.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = strides[k].back() == plan.strides[k][d] * plan.out[d];
    if (merge) {
      dims.back() *= plan.out[d];
      for (size_t k = 0; k < N; ++k) strides[k].back() = plan.strides[k][d];
    } else {
      dims.push_back(plan.out[d]);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(plan.strides[k][d]);
    }
  }
  if (dims.empty()) {
    inner.fill(0);
    return f(int64_t{0}, offs, int64_t{1}, inner);
  }
  const size_t rank = dims.size();
  const int64_t len = dims[rank - 1];
  for (size_t k = 0; k < N; ++k) inner[k] = strides[k][rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t o = 0; o < plan.numel; o += len) {
    f(o, offs, len, inner);
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) offs[k] += strides[k][d];
      if (++index[d] < dims[d]) break;
      for (size_t k = 0; k < N; ++k) offs[k] -= strides[k][d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace parity::refrt
