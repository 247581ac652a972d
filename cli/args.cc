#include "args.h"

#include "parity/error.h"

namespace parity::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& value_options,
           const std::set<std::string>& flag_options) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    std::string name = a, value;
    const bool has_inline = a.find('=') != std::string::npos;
    if (has_inline) {
      name = a.substr(0, a.find('='));
      value = a.substr(a.find('=') + 1);
    }
    if (value_options.count(name)) {
      if (!has_inline) {
        if (i + 1 >= argv.size()) throw Error({"cli"}, "option " + name + " needs a value", ErrorKind::kUsage);
        value = argv[++i];
      }
      values_[name] = value;
      all_values_[name].push_back(value);
    } else if (flag_options.count(name) && !has_inline) {
      values_[name] = "1";
    } else {
      throw Error({"cli"}, "unknown option " + name, ErrorKind::kUsage);
    }
  }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int Args::get_int(const std::string& name, int fallback) const {
  if (!has(name)) return fallback;
  try {
    size_t used = 0;
    const int v = std::stoi(get(name), &used);
    if (used == get(name).size()) return v;
  } catch (const std::exception&) {
  }
  throw Error({"cli"}, "option " + name + " needs an integer, got '" + get(name) + "'", ErrorKind::kUsage);
}

double Args::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  try {
    size_t used = 0;
    const double v = std::stod(get(name), &used);
    if (used == get(name).size()) return v;
  } catch (const std::exception&) {
  }
  throw Error({"cli"}, "option " + name + " needs a number, got '" + get(name) + "'", ErrorKind::kUsage);
}

std::vector<std::string> Args::get_all(const std::string& name) const {
  std::vector<std::string> out;
  auto it = all_values_.find(name);
  if (it == all_values_.end()) return out;
  for (const auto& value : it->second) {
    std::string cur;
    for (char c : value + ",") {
      if (c != ',') {
        cur += c;
      } else if (!cur.empty()) {
        out.push_back(cur);
        cur.clear();
      }
    }
  }
  return out;
}

std::vector<std::string> Args::get_list(const std::string& name) const {
  std::vector<std::string> out;
  std::string cur;
  for (char c : get(name)) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace parity::cli
