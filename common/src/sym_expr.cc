#include "parity/sym_expr.h"

#include <algorithm>
#include <cctype>

#include "parity/error.h"

namespace parity {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// ---- srepr -> infix ----

struct Term {
  std::string head;  // function name, or the atom's text when args is empty and !call
  std::vector<Term> args;
  bool call = false;
};

class SreprParser {
 public:
  explicit SreprParser(const std::string& s) : s_(s) {}
  bool parse(Term& out) {
    if (!term(out)) return false;
    skip();
    return pos_ == s_.size();
  }

 private:
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool term(Term& t) {
    skip();
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    if (pos_ == start) return false;
    t.head = s_.substr(start, pos_ - start);
    skip();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      t.call = true;
      ++pos_;
      for (;;) {
        Term a;
        if (!term(a)) return false;
        t.args.push_back(std::move(a));
        skip();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == ')') {
          ++pos_;
          return true;
        }
        return false;
      }
    }
    return true;
  }
  const std::string& s_;
  size_t pos_ = 0;
};

// Precedence: 1 sum, 2 product, 3 atom.
std::string infix(const Term& t, int& prec) {
  auto sub = [](const Term& a, int need) {
    int p = 3;
    std::string s = infix(a, p);
    return p < need ? "(" + s + ")" : s;
  };
  if (!t.call) {
    prec = t.head.size() > 1 && t.head[0] == '-' ? 2 : 3;
    return t.head;
  }
  if (t.head == "Add" && !t.args.empty()) {
    std::string out = sub(t.args[0], 1);
    for (size_t i = 1; i < t.args.size(); ++i) {
      std::string a = sub(t.args[i], 2);
      if (!a.empty() && a[0] == '-')
        out += " - " + a.substr(1);
      else
        out += " + " + a;
    }
    prec = 1;
    return out;
  }
  if (t.head == "Mul" && !t.args.empty()) {
    std::string out;
    size_t first = 0;
    if (!t.args[0].call && t.args[0].head == "-1" && t.args.size() > 1) {
      out = "-";
      first = 1;
    }
    for (size_t i = first; i < t.args.size(); ++i) out += (i > first ? "*" : "") + sub(t.args[i], 3);
    prec = 2;
    return out;
  }
  if ((t.head == "FloorDiv" || t.head == "Mod" || t.head == "PythonMod") && t.args.size() == 2) {
    prec = 2;
    return sub(t.args[0], 3) + (t.head == "FloorDiv" ? "//" : " % ") + sub(t.args[1], 3);
  }
  // Unknown function: keep the call form, with its arguments converted.
  std::string out = t.head + "(";
  for (size_t i = 0; i < t.args.size(); ++i) {
    int p = 3;
    out += (i ? ", " : "") + infix(t.args[i], p);
  }
  prec = 3;
  return out + ")";
}

// ---- evaluation ----

class Evaluator {
 public:
  Evaluator(const std::string& text, const std::map<std::string, int64_t>& symbols, const std::string& stage)
      : s_(text), symbols_(symbols), stage_(stage) {}
  int64_t parse() {
    const int64_t v = sum();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + s_.substr(pos_) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error({stage_}, "size expression '" + s_ + "': " + why);
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(const std::string& tok) {
    skip();
    if (s_.compare(pos_, tok.size(), tok) != 0) return false;
    pos_ += tok.size();
    return true;
  }
  int64_t sum() {
    int64_t v = product();
    for (;;) {
      if (eat("+"))
        v += product();
      else if (eat("-"))
        v -= product();
      else
        return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    for (;;) {
      if (eat("//")) {
        const int64_t d = unary();
        if (d == 0) fail("division by zero");
        const int64_t q = v / d;
        v = (q * d != v && ((v < 0) != (d < 0))) ? q - 1 : q;  // floor, as Python's //
      } else if (eat("*")) {
        v *= unary();
      } else if (eat("%")) {
        const int64_t d = unary();
        if (d == 0) fail("modulo by zero");
        v = ((v % d) + d) % d;
      } else {
        return v;
      }
    }
  }
  int64_t unary() {
    if (eat("-")) return -unary();
    if (eat("(")) {
      const int64_t v = sum();
      if (!eat(")")) fail("missing ')'");
      return v;
    }
    skip();
    const size_t start = pos_;
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ - start > 18) fail("number too large");
      return std::stoll(s_.substr(start, pos_ - start));
    }
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    if (start == pos_) fail("expected a number or a symbol at offset " + std::to_string(pos_));
    const std::string name = s_.substr(start, pos_ - start);
    auto it = symbols_.find(name);
    if (it == symbols_.end()) fail("unknown symbol '" + name + "'");
    return it->second;
  }

  const std::string& s_;
  const std::map<std::string, int64_t>& symbols_;
  const std::string& stage_;
  size_t pos_ = 0;
};

}  // namespace

std::string srepr_to_infix(const std::string& expr) {
  if (expr.find('(') == std::string::npos) return expr;
  Term t;
  if (!SreprParser(expr).parse(t)) return expr;  // already infix (or something else): leave it
  int prec = 3;
  return infix(t, prec);
}

int64_t evaluate_int_expr(const std::string& expr, const std::map<std::string, int64_t>& symbols,
                          const std::string& stage) {
  return Evaluator(expr, symbols, stage).parse();
}

std::vector<std::string> expr_symbols(const std::string& expr) {
  std::vector<std::string> out;
  for (size_t i = 0; i < expr.size();) {
    if (ident_char(expr[i]) && !std::isdigit(static_cast<unsigned char>(expr[i]))) {
      size_t j = i;
      while (j < expr.size() && ident_char(expr[j])) ++j;
      std::string name = expr.substr(i, j - i);
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(expr[i]))) {
      while (i < expr.size() && ident_char(expr[i])) ++i;  // a number (or 2e3-like token): not a symbol
    } else {
      ++i;
    }
  }
  return out;
}

bool is_plain_symbol(const std::string& expr) {
  return !expr.empty() && !std::isdigit(static_cast<unsigned char>(expr[0])) &&
         std::all_of(expr.begin(), expr.end(), ident_char);
}

}  // namespace parity
