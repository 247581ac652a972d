// A small command-line parser: positional arguments plus --flag / --key value / --key=value options.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

namespace parity::cli {

class Args {
 public:
  // `value_options` take a value ("--out DIR"); `flag_options` do not. Anything else is a usage error.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& value_options,
       const std::set<std::string>& flag_options);
  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  int get_int(const std::string& name, int fallback) const;
  double get_double(const std::string& name, double fallback) const;
  std::vector<std::string> get_list(const std::string& name) const;  // comma-separated
  // Every value of a repeatable option (`--plugin a.so --plugin b,c.so`), comma lists split, in order.
  std::vector<std::string> get_all(const std::string& name) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;                   // the last value of each option
  std::map<std::string, std::vector<std::string>> all_values_;  // every value, for get_all
};

}  // namespace parity::cli
