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

std::vector<FreshSet> make_fresh_sets(const pt2::Program& program, const std::vector<std::vector<Tensor>>& captured,
                                      int count, uint64_t seed) {
  // Program inputs in order: tensors (fresh shapes and data) and symbolic scalars (kept as captured,
  // they arrive as 0-d tensors).
  std::vector<std::string> names;
  std::vector<const pt2::TensorMeta*> metas;
  for (const auto& spec : program.input_specs) {
    if (spec.kind != pt2::InputSpec::Kind::kUserInput) continue;
    if (spec.arg.is(pt2::ArgKind::as_tensor)) {
      names.push_back(spec.arg.tensor_name());
      metas.push_back(&program.graph.meta(names.back(), "fresh inputs"));
    } else if (spec.arg.is_symbolic_scalar()) {
      names.push_back(spec.arg.symbol());
      metas.push_back(nullptr);
    }
  }

  // Symbols, the values seen at capture (plain-symbol axes), and each input's data range.
  std::map<std::string, std::set<int64_t>> seen;
  std::vector<ValueRange> ranges(names.size());
  for (const auto& [sym, range] : program.range_constraints) seen[pt2::simplify_sym_expr(sym)];
  for (size_t i = 0; i < names.size(); ++i)
    for (const auto& d : metas[i] ? metas[i]->sizes : std::vector<pt2::SymDim>{})
      if (!d.value && is_plain_symbol(pt2::simplify_sym_expr(d.expr))) seen[pt2::simplify_sym_expr(d.expr)];
  for (const auto& set : captured)
    for (size_t i = 0; i < names.size() && i < set.size(); ++i) {
      if (!metas[i]) continue;
      const auto& sizes = metas[i]->sizes;
      for (size_t a = 0; a < sizes.size() && a < set[i].shape().size(); ++a)
        if (!sizes[a].value && is_plain_symbol(pt2::simplify_sym_expr(sizes[a].expr)))
          seen[pt2::simplify_sym_expr(sizes[a].expr)].insert(set[i].shape()[a]);
      const Tensor& t = set[i];
      if (t.numel() == 0) continue;
      double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
      for (int64_t k = 0; k < t.numel(); ++k) {
        const double v = element_as_double(t, k);
        sum += v, sq += v * v, lo = std::min(lo, v), hi = std::max(hi, v);
      }
      auto& r = ranges[i];
      const double n = static_cast<double>(t.numel());
      r.mean = sum / n;
      r.stddev = std::sqrt(std::max(0.0, sq / n - r.mean * r.mean));
      r.lo = r.seen ? std::min(r.lo, lo) : lo;
      r.hi = r.seen ? std::max(r.hi, hi) : hi;
      r.seen = true;
    }

  std::mt19937_64 rng(seed);
  std::vector<FreshSet> out;
  for (int k = 0; k < count; ++k) {
    FreshSet fs;
    fs.name = "fresh_" + std::to_string(k);
    for (const auto& [sym, values] : seen) {
      const auto rc = program.range_constraints.find(sym);
      int64_t lo = 2, hi = 0;  // 0 and 1 are specialised by torch.export; never pick them
      const int64_t largest = values.empty() ? 8 : *values.rbegin();
      hi = std::max<int64_t>(lo + 16, 2 * largest);
      if (rc != program.range_constraints.end()) {
        if (rc->second.min) lo = std::max(lo, *rc->second.min);
        if (rc->second.max) hi = std::min(hi, *rc->second.max);
      }
      std::vector<int64_t> candidates;
      for (int64_t v = lo; v <= hi; ++v)
        if (!values.count(v)) candidates.push_back(v);
      if (candidates.empty())
        throw Error({"verify", program.archive_path}, "no value of dynamic dim " + sym + " in [" + std::to_string(lo) + ", " +
                                                          std::to_string(hi) + "] differs from the captured ones");
      fs.dims[sym] = candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)];
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (!metas[i]) {
        if (captured.empty() || captured[0].size() <= i)
          throw Error({"verify", program.archive_path}, "no captured value for symbolic input '" + names[i] + "'");
        fs.inputs.push_back(captured[0][i]);
        continue;
      }
      Shape shape;
      for (const auto& d : metas[i]->sizes) shape.push_back(d.value ? *d.value : evaluate_sym_expr(d.expr, fs.dims));
      Tensor t(metas[i]->dtype, shape);
      const ValueRange& r = ranges[i];
      std::normal_distribution<double> normal(r.mean, r.stddev > 0 ? r.stddev : 1.0);
      for (int64_t e = 0; e < t.numel(); ++e) {
        switch (t.dtype()) {
          case DType::kFloat32: t.data<float>()[e] = static_cast<float>(normal(rng)); break;
          case DType::kFloat64: t.data<double>()[e] = normal(rng); break;
          case DType::kInt64: case DType::kInt32: {
            // Integers often index something: stay within the captured range.
            const auto lo_i = static_cast<int64_t>(r.seen ? r.lo : 0), hi_i = static_cast<int64_t>(r.seen ? r.hi : 1);
            const int64_t v = std::uniform_int_distribution<int64_t>(lo_i, hi_i)(rng);
            if (t.dtype() == DType::kInt64) t.data<int64_t>()[e] = v;
            else t.data<int32_t>()[e] = static_cast<int32_t>(v);
            break;
          }
          case DType::kBool: t.data<uint8_t>()[e] = static_cast<uint8_t>(rng() & 1); break;
          default:
            throw Error({"verify", program.archive_path}, "fresh inputs of dtype " + dtype_name(t.dtype()) +
                                                              " (input '" + names[i] + "') are not supported yet",
                        ErrorKind::kUnsupported);
        }
      }
      fs.inputs.push_back(std::move(t));
    }
    out.push_back(std::move(fs));
  }
  return out;
}

}  // namespace parity::verify
