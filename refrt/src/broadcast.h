// Internal: numpy broadcasting of N operands (binary arithmetic, comparisons, Where).
#pragma once
#include <algorithm>
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

// The output dims left after merging every dim d into d+1 where, for every operand, stride[d] ==
// stride[d+1] * out[d+1] (size-1 dims dropped), with each operand's strides; at least one dim.
template <size_t N>
struct RunDims {
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
};
template <size_t N>
RunDims<N> merge_run_dims(const BroadcastPlan<N>& plan) {
  RunDims<N> r;
  if (plan.all_same) {  // one flat run
    r.dims.push_back(plan.numel);
    for (size_t k = 0; k < N; ++k) r.strides[k].push_back(1);
    return r;
  }
  for (size_t d = 0; d < plan.out.size(); ++d) {
    if (plan.out[d] == 1) continue;  // size-1 dims move nothing
    bool merge = !r.dims.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = r.strides[k].back() == plan.strides[k][d] * plan.out[d];
    if (merge) {
      r.dims.back() *= plan.out[d];
      for (size_t k = 0; k < N; ++k) r.strides[k].back() = plan.strides[k][d];
    } else {
      r.dims.push_back(plan.out[d]);
      for (size_t k = 0; k < N; ++k) r.strides[k].push_back(plan.strides[k][d]);
    }
  }
  if (r.dims.empty()) {  // a single element (every dim of size 1)
    r.dims.push_back(1);
    for (size_t k = 0; k < N; ++k) r.strides[k].push_back(0);
  }
  return r;
}

// Calls f(out_offset, offsets, length, inner_strides) once per run of `length` output elements in
// which every operand moves by a fixed stride (0 or 1 after merging dims that are contiguous for all
// operands): the loop a kernel writes inside `f` is then a plain strided loop the compiler vectorises.
// Only the output elements [begin, end) are visited (runs cut at both ends), so that a thread pool can
// split one broadcast into ranges.
template <size_t N, typename F>
void for_each_broadcast_run(const BroadcastPlan<N>& plan, int64_t begin, int64_t end, F&& f) {
  end = std::min(end, plan.numel);
  if (begin >= end) return;
  const RunDims<N> r = merge_run_dims(plan);
  const size_t rank = r.dims.size();
  const int64_t len = r.dims[rank - 1];
  std::array<int64_t, N> offs{}, inner{}, at{};
  for (size_t k = 0; k < N; ++k) inner[k] = r.strides[k][rank - 1];
  // The outer index of the run holding `begin`, and each operand's offset at that run's start.
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t rest = begin / len, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
    const size_t u = static_cast<size_t>(d);
    index[u] = rest % r.dims[u];
    rest /= r.dims[u];
    for (size_t k = 0; k < N; ++k) offs[k] += index[u] * r.strides[k][u];
  }
  for (int64_t o = begin - begin % len, j0 = begin % len; o < end; o += len, j0 = 0) {
    for (size_t k = 0; k < N; ++k) at[k] = offs[k] + j0 * inner[k];
    f(o + j0, at, std::min(len, end - o) - j0, inner);
    for (size_t d = rank - 1; d-- > 0;) {  // odometer over the outer dims
      for (size_t k = 0; k < N; ++k) offs[k] += r.strides[k][d];
      if (++index[d] < r.dims[d]) break;
      for (size_t k = 0; k < N; ++k) offs[k] -= r.strides[k][d] * index[d];
      index[d] = 0;
    }
  }
}

// The same over every output element.
template <size_t N, typename F>
void for_each_broadcast_run(const BroadcastPlan<N>& plan, F&& f) {
  for_each_broadcast_run(plan, 0, plan.numel, f);
}

}  // namespace parity::refrt
