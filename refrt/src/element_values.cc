#include "element_values.h"

#include <cstring>

namespace parity::refrt {

void fill_elements(void* dst, int64_t count, const void* value, size_t elem_size) {
  auto* d = static_cast<unsigned char*>(dst);
  bool all_zero = true;
  for (size_t b = 0; b < elem_size; ++b) all_zero = all_zero && static_cast<const unsigned char*>(value)[b] == 0;
  if (all_zero) {
    std::memset(d, 0, static_cast<size_t>(count) * elem_size);
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(d + static_cast<size_t>(i) * elem_size, value, elem_size);
}

}  // namespace parity::refrt
