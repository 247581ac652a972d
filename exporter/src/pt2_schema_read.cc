// Readers behind the generated schema types (see pt2_schema_read.h).
#include "pt2_schema_read.h"

#include <cmath>
#include <limits>

namespace parity::pt2::schema {

ParseError::ParseError(std::string path, std::string what)
    : std::runtime_error(path.empty() ? what : path + ": " + what), path_(std::move(path)), detail_(std::move(what)) {}

ParseError ParseError::within(const std::string& outer) const {
  // "[3]" and "[\"key\"]" attach without a dot; field names are joined with one.
  const bool index = !path_.empty() && path_[0] == '[';
  return ParseError(path_.empty() ? outer : outer + (index ? "" : ".") + path_, detail_);
}

namespace detail {

std::string kind_of(const json& j) {
  if (j.is_string()) return "the string \"" + j.get<std::string>().substr(0, 40) + "\"";
  if (j.is_number()) return "the number " + j.dump();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_null()) return "null";
  return j.is_array() ? "a list" : "an object";
}

void expect_object(const json& j, const char* type) {
  if (!j.is_object()) throw ParseError("", std::string("expected a ") + type + " object, got " + kind_of(j));
}

int64_t read_enum(const json& j, const char* type) {
  if (!j.is_number_integer()) throw ParseError("", std::string("expected a ") + type + " number, got " + kind_of(j));
  return j.get<int64_t>();
}

std::pair<std::string, const json*> union_entry(const json& j, const char* type) {
  expect_object(j, type);
  if (j.size() != 1)
    throw ParseError(
        "", std::string("a ") + type + " holds exactly one alternative, got " + std::to_string(j.size()) + " keys");
  return {j.begin().key(), &j.begin().value()};
}

void read(const json& j, int64_t& out) {
  if (!j.is_number_integer()) throw ParseError("", "expected an integer, got " + kind_of(j));
  out = j.get<int64_t>();
}

void read(const json& j, double& out) {
  if (j.is_number()) {
    out = j.get<double>();
    return;
  }
  const std::string s = j.is_string() ? j.get<std::string>() : "";
  if (s == "Infinity")
    out = std::numeric_limits<double>::infinity();
  else if (s == "-Infinity")
    out = -std::numeric_limits<double>::infinity();
  else if (s == "NaN")
    out = std::nan("");
  else
    throw ParseError("", "expected a float, got " + kind_of(j));
}

void read(const json& j, bool& out) {
  if (!j.is_boolean()) throw ParseError("", "expected true or false, got " + kind_of(j));
  out = j.get<bool>();
}

void read(const json& j, std::string& out) {
  if (!j.is_string()) throw ParseError("", "expected a string, got " + kind_of(j));
  out = j.get<std::string>();
}

}  // namespace detail
}  // namespace parity::pt2::schema
