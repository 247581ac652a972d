#include "fresh_inputs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <set>

#include "parity/error.h"
#include "parity/sym_expr.h"
#include "parity/verify/compare.h"

namespace parity::verify {

namespace {

struct ValueRange {
  double mean = 0, stddev = 1, lo = 0, hi = 1;
  bool seen = false;
};

}  // namespace

int64_t evaluate_sym_expr(const std::string& expr, const std::map<std::string, int64_t>& symbols) {
  return evaluate_int_expr(pt2::simplify_sym_expr(expr), symbols, "verify");
}

namespace {

// The program's user inputs in order: tensors (fresh shapes and data) and symbolic scalars (kept as
// captured, they arrive as 0-d tensors; their meta is null).
struct ProgramInputs {
  std::vector<std::string> names;
  std::vector<const pt2::TensorMeta*> metas;
};

ProgramInputs program_inputs(const pt2::Program& program) {
  ProgramInputs in;
  for (const auto& spec : program.input_specs) {
    if (spec.kind != pt2::InputSpec::Kind::kUserInput) continue;
    if (spec.arg.is(pt2::ArgKind::as_tensor)) {
      in.names.push_back(spec.arg.tensor_name());
      in.metas.push_back(&program.graph.meta(in.names.back(), "fresh inputs"));
    } else if (spec.arg.is_symbolic_scalar()) {
      in.names.push_back(spec.arg.symbol());
      in.metas.push_back(nullptr);
    }
  }
  return in;
}

// A dynamic axis named by a plain symbol ("s0", not "s0 + 1"), or "".
std::string plain_symbol(const pt2::SymDim& d) {
  if (d.value) return "";
  const std::string sym = pt2::simplify_sym_expr(d.expr);
  return is_plain_symbol(sym) ? sym : "";
}

void widen(ValueRange& r, const Tensor& t) {
  if (t.numel() == 0) return;
  double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t k = 0; k < t.numel(); ++k) {
    const double v = element_as_double(t, k);
    sum += v, sq += v * v, lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const double n = static_cast<double>(t.numel());
  r.mean = sum / n;
  r.stddev = std::sqrt(std::max(0.0, sq / n - r.mean * r.mean));
  r.lo = r.seen ? std::min(r.lo, lo) : lo;
  r.hi = r.seen ? std::max(r.hi, hi) : hi;
  r.seen = true;
}

// Every symbol with the values its axes had at capture, and each input's data range.
void observe(const pt2::Program& program, const ProgramInputs& in, const std::vector<std::vector<Tensor>>& captured,
             std::map<std::string, std::set<int64_t>>& seen, std::vector<ValueRange>& ranges) {
  for (const auto& [sym, range] : program.range_constraints) seen[pt2::simplify_sym_expr(sym)];
  for (const auto* meta : in.metas)
    for (const auto& d : meta ? meta->sizes : std::vector<pt2::SymDim>{})
      if (const std::string sym = plain_symbol(d); !sym.empty()) seen[sym];
  for (const auto& set : captured)
    for (size_t i = 0; i < in.names.size() && i < set.size(); ++i) {
      if (!in.metas[i]) continue;
      const auto& sizes = in.metas[i]->sizes;
      for (size_t a = 0; a < sizes.size() && a < set[i].shape().size(); ++a)
        if (const std::string sym = plain_symbol(sizes[a]); !sym.empty()) seen[sym].insert(set[i].shape()[a]);
      widen(ranges[i], set[i]);
    }
}

// A value for `sym` inside its range constraint that differs from every captured one.
int64_t pick_dim(const pt2::Program& program, const std::string& sym, const std::set<int64_t>& values,
                 std::mt19937_64& rng) {
  const auto rc = program.range_constraints.find(sym);
  int64_t lo = 2;  // 0 and 1 are specialised by torch.export; never pick them
  int64_t hi = std::max<int64_t>(lo + 16, 2 * (values.empty() ? 8 : *values.rbegin()));
  if (rc != program.range_constraints.end()) {
    if (rc->second.min) lo = std::max(lo, *rc->second.min);
    if (rc->second.max) hi = std::min(hi, *rc->second.max);
  }
  std::vector<int64_t> candidates;
  for (int64_t v = lo; v <= hi; ++v)
    if (!values.count(v)) candidates.push_back(v);
  if (candidates.empty())
    throw Error({"verify", program.archive_path}, "no value of dynamic dim " + sym + " in [" + std::to_string(lo) +
                                                      ", " + std::to_string(hi) + "] differs from the captured ones");
  return candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)];
}

// Random data shaped like the captured input: normal with its mean and spread; integers (which often
// index something) within the captured range.
Tensor random_like(const pt2::Program& program, const std::string& name, DType dtype, const Shape& shape,
                   const ValueRange& r, std::mt19937_64& rng) {
  Tensor t(dtype, shape);
  std::normal_distribution<double> normal(r.mean, r.stddev > 0 ? r.stddev : 1.0);
  const auto lo_i = static_cast<int64_t>(r.seen ? r.lo : 0), hi_i = static_cast<int64_t>(r.seen ? r.hi : 1);
  std::uniform_int_distribution<int64_t> integer(lo_i, hi_i);
  for (int64_t e = 0; e < t.numel(); ++e) {
    switch (dtype) {
      case DType::kFloat32:
        t.data<float>()[e] = static_cast<float>(normal(rng));
        break;
      case DType::kFloat64:
        t.data<double>()[e] = normal(rng);
        break;
      case DType::kInt64:
        t.data<int64_t>()[e] = integer(rng);
        break;
      case DType::kInt32:
        t.data<int32_t>()[e] = static_cast<int32_t>(integer(rng));
        break;
      case DType::kBool:
        t.data<uint8_t>()[e] = static_cast<uint8_t>(rng() & 1);
        break;
      default:
        throw Error({"verify", program.archive_path},
                    "fresh inputs of dtype " + dtype_name(dtype) + " (input '" + name + "') are not supported yet",
                    ErrorKind::kUnsupported);
    }
  }
  return t;
}

}  // namespace

std::vector<FreshSet> make_fresh_sets(const pt2::Program& program, const std::vector<std::vector<Tensor>>& captured,
                                      int count, uint64_t seed) {
  const ProgramInputs in = program_inputs(program);
  std::map<std::string, std::set<int64_t>> seen;
  std::vector<ValueRange> ranges(in.names.size());
  observe(program, in, captured, seen, ranges);

  std::mt19937_64 rng(seed);
  std::vector<FreshSet> out;
  for (int k = 0; k < count; ++k) {
    FreshSet fs;
    fs.name = "fresh_" + std::to_string(k);
    for (const auto& [sym, values] : seen) fs.dims[sym] = pick_dim(program, sym, values, rng);
    for (size_t i = 0; i < in.names.size(); ++i) {
      if (!in.metas[i]) {
        if (captured.empty() || captured[0].size() <= i)
          throw Error({"verify", program.archive_path}, "no captured value for symbolic input '" + in.names[i] + "'");
        fs.inputs.push_back(captured[0][i]);
        continue;
      }
      Shape shape;
      for (const auto& d : in.metas[i]->sizes) shape.push_back(d.value ? *d.value : evaluate_sym_expr(d.expr, fs.dims));
      // A complex input is fed as (real, imaginary) pairs of its part dtype (docs/complex.md).
      const int32_t torch_dtype = in.metas[i]->torch_dtype;
      const DType part = torch_dtype == 10 ? DType::kFloat32 : torch_dtype == 11 ? DType::kFloat64 : DType::kUndefined;
      if (part != DType::kUndefined) shape.push_back(2);
      fs.inputs.push_back(random_like(program, in.names[i], part != DType::kUndefined ? part : in.metas[i]->dtype,
                                      shape, ranges[i], rng));
    }
    out.push_back(std::move(fs));
  }
  return out;
}

}  // namespace parity::verify
