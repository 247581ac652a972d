// Internal: int-list arguments that may hold SymInts (sizes from the input shapes, or unbacked ones from
// `.item()` and data-dependent ops). Translations use a runtime shape tensor where the ONNX op takes one
// (TranslateContext::int_list_value); these helpers serve the ones that need the list statically.
#pragma once
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter {

// The symbols of an int-list argument's symbolic elements ("u0", "s1"), in order; empty when all are static.
inline std::vector<std::string> list_symbols(const pt2::Argument& a) {
  std::vector<std::string> out;
  if (!a.is(pt2::ArgKind::as_sym_ints)) return out;
  for (const auto& s : a.typed().as_sym_ints())
    if (s.kind() == pt2::schema::SymIntArgument::Kind::as_name) out.push_back(s.as_name());
  return out;
}

// The static values of int-list argument `name`; where some element is symbolic, an error naming the op (the
// context's node), the argument, its symbols and `why` the translation needs the values statically.
inline std::vector<int64_t> static_int_list(const TranslateContext& ctx, const std::string& name,
                                            const std::string& why) {
  const pt2::Argument& a = ctx.required(name);
  const auto symbols = list_symbols(a);
  if (symbols.empty()) return ctx.ints_arg(name);
  std::string listed;
  for (const auto& s : symbols) listed += (listed.empty() ? "" : ", ") + s;
  ctx.fail("argument '" + name + "' holds the symbolic size" + (symbols.size() > 1 ? "s " : " ") + listed + " (" +
           a.describe() + "): " + why);
}

}  // namespace parity::exporter
