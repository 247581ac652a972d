// JSON readers shared by the generated schema types (build/generated/parity/exporter/pt2_schema.cc).
// Every reader throws schema::ParseError; field()/element readers prefix the path on the way out, so an
// error names where it happened: "graph_module.graph.nodes[3].inputs[0].arg: expected a string, got 7".
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/exporter/pt2_schema.h"

namespace parity::pt2::schema::detail {

using nlohmann::json;

std::string kind_of(const json& j);  // "a string", "a number", ... for messages
void expect_object(const json& j, const char* type);
int64_t read_enum(const json& j, const char* type);
// The one key and payload of a union object ({"as_tensor": {...}}).
std::pair<std::string, const json*> union_entry(const json& j, const char* type);

void read(const json& j, int64_t& out);
void read(const json& j, double& out);  // numbers and torch's "Infinity" / "-Infinity" / "NaN"
void read(const json& j, bool& out);
void read(const json& j, std::string& out);
template <class T>
void read(const json& j, T& out);  // schema types: their from_json
template <class T>
void read(const json& j, std::optional<T>& out);
template <class T>
void read(const json& j, std::vector<T>& out);
template <class T>
void read(const json& j, std::map<std::string, T>& out);

template <class T>
void read(const json& j, T& out) {
  from_json(j, out);
}

template <class T>
void read(const json& j, std::optional<T>& out) {
  if (j.is_null()) return out.reset();
  T v{};
  read(j, v);
  out = std::move(v);
}

template <class T>
void read(const json& j, std::vector<T>& out) {
  if (!j.is_array()) throw ParseError("", "expected a list, got " + kind_of(j));
  out.clear();
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    try {
      T v{};  // not emplace_back(): std::vector<bool> has no element references
      read(j[i], v);
      out.push_back(std::move(v));
    } catch (const ParseError& e) {
      throw e.within("[" + std::to_string(i) + "]");
    }
  }
}

template <class T>
void read(const json& j, std::map<std::string, T>& out) {
  if (!j.is_object()) throw ParseError("", "expected an object, got " + kind_of(j));
  out.clear();
  for (const auto& [key, value] : j.items()) {
    try {
      read(value, out[key]);
    } catch (const ParseError& e) {
      throw e.within("[\"" + key + "\"]");
    }
  }
}

// A struct field with a schema default: absent (or null) keeps the default.
template <class T>
void field(const json& j, const char* key, T& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    read(*it, out);
  } catch (const ParseError& e) {
    throw e.within(key);
  } catch (const json::exception& e) {
    throw ParseError(key, e.what());
  }
}

// A struct field the schema gives no default: it must be there.
template <class T>
void required_field(const json& j, const char* key, T& out) {
  if (!j.contains(key)) throw ParseError(key, "missing (the schema has no default for it)");
  field(j, key, out);
}

// Fills alternative I of a union's variant from its payload.
template <size_t I, class Variant>
void alternative(const std::string& key, const json& payload, Variant& v) {
  try {
    read(payload, v.template emplace<I>());
  } catch (const ParseError& e) {
    throw e.within(key);
  }
}

}  // namespace parity::pt2::schema::detail
