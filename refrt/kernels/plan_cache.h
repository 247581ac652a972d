// Internal: the oneDNN convolution paths' plans (primitives and their reordered weights) by input-shape key.
// Declared here without oneDNN's headers (conv.cc and the fused QDQ kernels hold one); `get` is defined in
// dnnl_common.h, which the .cc files that call it include.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace parity::refrt::dnnl_common {

template <typename Plan>
class PlanCache {
 public:
  // The plan for `key`, made by make() on first use under the lock (with one OpenMP thread); nullptr when
  // make() returned it or oneDNN refused the geometry (the caller then runs refrt's own kernel).
  template <typename Make>
  std::shared_ptr<const Plan> get(const std::vector<int64_t>& key, const Make& make) const;

 private:
  // Many input shapes would keep as many copies of the reordered weights: the cache starts over past this.
  static constexpr size_t kMaxPlans = 8;
  mutable std::mutex mutex_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans_;
};

}  // namespace parity::refrt::dnnl_common
