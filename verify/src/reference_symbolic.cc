// torch's symbolic-scalar helpers on concrete values (see reference_symbolic.h), with Python's rules:
// sym_max/sym_min keep ints when both are ints, sym_int truncates toward zero, math.ceil/floor give ints.
#include "reference_symbolic.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "parity/error.h"

namespace parity::verify {
namespace {

const char* const kHelpers[] = {"torch.sym_max", "torch.sym_min", "torch.sym_float", "torch.sym_int",
                                "torch.sym_ite", "torch.sym_not", "torch._sym_sqrt", "torch.sym_sqrt",
                                "math.ceil",     "math.floor",    "math.trunc",      "math.sqrt"};

void need(const std::string& target, const std::vector<SymScalar>& args, size_t n) {
  if (args.size() != n)
    throw Error({"verify", target},
                target + " takes " + std::to_string(n) + " arguments, the node passes " + std::to_string(args.size()));
}

// Python's int() of a float: toward zero; NaN and infinities have no integer (torch raises as Python does).
int64_t to_int(const std::string& target, double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
    throw Error({"verify", target}, target + ": cannot convert " + std::to_string(v) + " to an integer");
  return static_cast<int64_t>(std::trunc(v));
}

SymScalar extreme(const std::vector<SymScalar>& a, bool max) {
  const bool ints = a[0].kind != SymScalar::Kind::kFloat && a[1].kind != SymScalar::Kind::kFloat;
  if (ints) {
    const int64_t x = a[0].kind == SymScalar::Kind::kBool ? a[0].b : a[0].i,
                  y = a[1].kind == SymScalar::Kind::kBool ? a[1].b : a[1].i;
    return SymScalar::of_int(max ? std::max(x, y) : std::min(x, y));
  }
  const double x = a[0].as_double(), y = a[1].as_double();
  return SymScalar::of_float(max ? std::max(x, y) : std::min(x, y));
}

}  // namespace

bool is_symbolic_helper(const std::string& target) {
  return std::any_of(std::begin(kHelpers), std::end(kHelpers), [&](const char* h) { return target == h; });
}

SymScalar eval_symbolic_helper(const std::string& target, const std::vector<SymScalar>& a) {
  if (target == "torch.sym_max" || target == "torch.sym_min")
    return need(target, a, 2), extreme(a, target == "torch.sym_max");
  if (target == "torch.sym_float") return need(target, a, 1), SymScalar::of_float(a[0].as_double());
  if (target == "torch.sym_int") {
    need(target, a, 1);
    return a[0].kind == SymScalar::Kind::kFloat
               ? SymScalar::of_int(to_int(target, a[0].d))
               : SymScalar::of_int(a[0].kind == SymScalar::Kind::kBool ? a[0].b : a[0].i);
  }
  if (target == "torch.sym_ite") return need(target, a, 3), a[0].truthy() ? a[1] : a[2];
  if (target == "torch.sym_not") return need(target, a, 1), SymScalar::of_bool(!a[0].truthy());
  if (target == "torch._sym_sqrt" || target == "torch.sym_sqrt" || target == "math.sqrt")
    return need(target, a, 1), SymScalar::of_float(std::sqrt(a[0].as_double()));
  if (target == "math.ceil" || target == "math.floor" || target == "math.trunc") {
    need(target, a, 1);
    if (a[0].kind != SymScalar::Kind::kFloat)
      return SymScalar::of_int(a[0].kind == SymScalar::Kind::kBool ? a[0].b : a[0].i);
    const double v = target == "math.ceil"    ? std::ceil(a[0].d)
                     : target == "math.floor" ? std::floor(a[0].d)
                                              : std::trunc(a[0].d);
    return SymScalar::of_int(to_int(target, v));
  }
  throw Error({"verify", target}, target + " is not supported by the reference executor yet", ErrorKind::kUnsupported);
}

}  // namespace parity::verify
