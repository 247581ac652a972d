#include "reference_layout.h"

#include <algorithm>
#include <numeric>
#include <regex>

namespace parity::verify {

std::optional<std::vector<int64_t>> dense_dim_order(const std::vector<int64_t>& sizes,
                                                    const std::vector<int64_t>& strides) {
  if (sizes.size() != strides.size()) return std::nullopt;
  // The dims of size > 1 by decreasing stride; size-1 dims (any stride, no effect on addresses) go last.
  std::vector<int64_t> order, ones;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] <= 0) return std::nullopt;  // an empty tensor has no layout worth restoring
    (sizes[d] == 1 ? ones : order).push_back(static_cast<int64_t>(d));
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  // Dense and non-overlapping: innermost stride 1, each next one the span of the ones inside it.
  int64_t span = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (strides[*it] != span) return std::nullopt;
    span *= sizes[*it];
  }
  order.insert(order.end(), ones.begin(), ones.end());
  return order;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t span = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = span;
    span *= std::max<int64_t>(sizes[static_cast<size_t>(*it)], 1);
  }
  return strides;
}

bool same_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& expected) {
  if (sizes.size() != strides.size() || sizes.size() != expected.size()) return false;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1 && strides[d] != expected[d]) return false;
  return true;
}

std::optional<std::string> unbacked_assertion(const std::string& message) {
  static const std::regex form("^Runtime assertion failed for expression (.+) on node '[^']*'$");
  static const std::regex unbacked("\\bu[0-9]+\\b");
  std::smatch m;
  if (!std::regex_match(message, m, form)) return std::nullopt;
  const std::string expr = m[1].str();
  if (!std::regex_search(expr, unbacked)) return std::nullopt;
  return expr;
}

}  // namespace parity::verify
