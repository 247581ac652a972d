#include "parity/refrt/random_inputs.h"

#include <random>
#include <set>

#include "dispatch.h"
#include "parity/error.h"
#include "parity/sym_expr.h"

namespace parity::refrt {

std::map<std::string, int64_t> parse_dim_overrides(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> dims;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    int64_t value = -1;
    size_t used = 0;
    if (eq != std::string::npos && eq > 0) {
      try {
        value = std::stoll(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || used != item.size() - eq - 1 || value < 0)
      throw Error({"cli"}, "--dim expects name=value with value >= 0, got '" + item + "'", ErrorKind::kUsage);
    dims[item.substr(0, eq)] = value;
  }
  return dims;
}

std::vector<Tensor> random_inputs(const std::vector<ValueInfo>& inputs, const std::map<std::string, int64_t>& dims,
                                  uint64_t seed, int64_t default_dim) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  std::set<std::string> used;
  // Every symbol takes its --dim value or the default; a derived dim ("2*batch", "past + seq") is
  // evaluated from them, so inputs sharing symbols stay consistent.
  std::map<std::string, int64_t> symbols;
  for (const auto& info : inputs)
    for (const auto& d : info.dims)
      if (d.value < 0 && !d.param.empty())
        for (const auto& name : expr_symbols(d.param)) {
          auto it = dims.find(name);
          symbols.emplace(name, it == dims.end() ? default_dim : it->second);
          if (it != dims.end()) used.insert(name);
        }
  std::vector<Tensor> out;
  for (const auto& info : inputs) {
    if (info.dtype == DType::kUndefined || dtype_size(info.dtype) == 0)
      throw Error({"refrt"}, "input '" + info.name + "' has no numeric tensor type to generate values for");
    Shape shape;
    for (const auto& d : info.dims) {
      if (d.value >= 0) {
        shape.push_back(d.value);
      } else if (auto it = dims.find(d.param); !d.param.empty() && it != dims.end()) {
        shape.push_back(it->second);
        used.insert(d.param);
      } else if (!d.param.empty() && !is_plain_symbol(d.param)) {
        const int64_t v = evaluate_int_expr(d.param, symbols, "refrt");
        if (v < 0)
          throw Error({"refrt"}, "input '" + info.name + "': dim '" + d.param + "' evaluates to " + std::to_string(v),
                      ErrorKind::kUsage);
        shape.push_back(v);
      } else {
        shape.push_back(default_dim);
      }
    }
    Tensor t(info.dtype, shape);
    void* raw = t.mutable_raw();
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (info.dtype) {
        case DType::kFloat16:
          static_cast<uint16_t*>(raw)[i] = float_to_half(real(rng));
          break;
        case DType::kBFloat16:
          static_cast<uint16_t*>(raw)[i] = float_to_bf16(real(rng));
          break;
        case DType::kBool:
          static_cast<uint8_t*>(raw)[i] = static_cast<uint8_t>(small(rng) & 1);
          break;
        default:
          dispatch_numeric(info.dtype, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_floating_point_v<T>)
              static_cast<T*>(raw)[i] = static_cast<T>(real(rng));
            else
              static_cast<T*>(raw)[i] = static_cast<T>(small(rng));
          });
      }
    }
    out.push_back(std::move(t));
  }
  for (const auto& [name, value] : dims)
    if (!used.count(name))
      throw Error({"cli"}, "--dim " + name + ": the model has no input dim named '" + name + "'", ErrorKind::kUsage);
  return out;
}

}  // namespace parity::refrt
