#include "ties.h"

#include <cmath>
#include <vector>

#include "parity/exporter/export.h"

namespace parity::verify {

namespace {

struct IndexOp {
  const char* key;
  size_t indices_slot;   // which output holds the indices
  bool dim_may_be_none;  // argmax/argmin: no dim means the flattened input
};

const IndexOp* index_op(const std::string& key) {
  static const IndexOp ops[] = {{"aten::argmax.default", 0, true}, {"aten::argmin.default", 0, true},
                                {"aten::topk.default", 1, false},  {"aten::sort.default", 1, false},
                                {"aten::sort.stable", 1, false},   {"aten::max.dim", 1, false},
                                {"aten::min.dim", 1, false}};
  for (const auto& op : ops)
    if (key == op.key) return &op;
  return nullptr;
}

std::vector<std::string> output_values(const pt2::Node& node) {
  std::vector<std::string> names;
  for (const auto& out : node.outputs) {
    if (out.is(pt2::ArgKind::as_tensor))
      names.push_back(out.tensor_name());
    else if (out.is(pt2::ArgKind::as_tensors))
      for (const auto& n : out.tensor_names()) names.push_back(n);
    else
      names.push_back("");  // keeps slots aligned
  }
  return names;
}

bool same_value(const Tensor& input, int64_t a, int64_t b, const Tolerance& tol) {
  const double x = element_as_double(input, a), y = element_as_double(input, b);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return x == y || std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(x);
}

}  // namespace

std::optional<IndexSource> index_source(const pt2::Program& program, const std::string& value) {
  for (const auto& node : program.graph.nodes) {
    const auto outputs = output_values(node);
    const std::string key = exporter::registry_key(node.target);
    const IndexOp* op = index_op(key);
    if (!op || outputs.size() <= op->indices_slot || outputs[op->indices_slot] != value) continue;
    const pt2::Argument* self = node.input("self");
    if (!self || !self->is_tensor()) return std::nullopt;
    IndexSource s{node.name, key, self->tensor_name()};
    const pt2::Argument* dim = node.input("dim");
    s.flat = op->dim_may_be_none && (!dim || dim->is_none());
    if (!s.flat) {
      const int64_t rank = static_cast<int64_t>(program.graph.meta(s.input_value, node.name).sizes.size());
      s.dim = dim && !dim->is_none() ? dim->as_int() : -1;  // topk and sort default to the last dim
      if (s.dim < 0) s.dim += rank;
      if (s.dim < 0 || (rank > 0 && s.dim >= rank)) return std::nullopt;
    }
    return s;
  }
  return std::nullopt;
}

void settle_ties(Comparison& cmp, const IndexSource& source, const Tensor& input, const Tensor& expected,
                 const Tensor& actual) {
  if (cmp.passed || !cmp.problem.empty() || expected.dtype() != DType::kInt64 || actual.dtype() != DType::kInt64 ||
      expected.shape() != actual.shape())
    return;
  // The input as [outer, n, inner] and the indices as [outer, m, inner] (m = 1 for a reduced dim).
  int64_t outer = 1, n = input.numel(), inner = 1;
  if (!source.flat && input.rank() > 0) {
    n = input.dim(static_cast<size_t>(source.dim));
    for (size_t d = 0; d < input.rank(); ++d)
      if (static_cast<int64_t>(d) < source.dim)
        outer *= input.dim(d);
      else if (static_cast<int64_t>(d) > source.dim)
        inner *= input.dim(d);
  }
  const int64_t count = expected.numel();
  if (outer * inner == 0 || count % (outer * inner) != 0) return;
  const int64_t m = count / (outer * inner);
  const Tolerance tol = default_tolerance(input.dtype());
  const int64_t* e = expected.data<int64_t>();
  const int64_t* a = actual.data<int64_t>();
  std::vector<int64_t> histogram(histogram_edges().size() + 1, 0);
  int64_t ties = 0;
  double max_abs = 0, max_rel = 0;
  for (int64_t p = 0; p < count; ++p) {
    if (e[p] == a[p]) {
      ++histogram[0];
      continue;
    }
    if (e[p] < 0 || e[p] >= n || a[p] < 0 || a[p] >= n) return;
    const int64_t base = (p / (m * inner)) * n * inner + p % inner;
    const int64_t pe = source.flat ? e[p] : base + e[p] * inner, pa = source.flat ? a[p] : base + a[p] * inner;
    if (!same_value(input, pe, pa, tol)) return;  // a real difference: the comparison stays failed
    ++ties;
    const double x = element_as_double(input, pe), y = element_as_double(input, pa);
    const double err = std::isnan(x) ? 0 : std::fabs(x - y);
    ++histogram[histogram_bin(err)];
    max_abs = std::max(max_abs, err);
    if (std::fabs(x) > tol.atol) max_rel = std::max(max_rel, err / std::fabs(x));
  }
  cmp.passed = true;
  cmp.mismatches = 0;
  cmp.ties = ties;
  cmp.max_abs_error = max_abs;
  cmp.max_rel_error = max_rel;
  cmp.histogram = histogram;
}

}  // namespace parity::verify
