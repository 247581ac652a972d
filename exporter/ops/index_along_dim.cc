// Writes along one dimension at listed positions: index_add, index_copy, index_fill. Each is a ScatterND on
// `dim` moved to the front: the index list becomes ScatterND's [n, 1] indices and the source's slices
// along `dim` its updates.
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

struct DimFirst {
  int64_t dim = 0;
  std::vector<int64_t> perm;  // `dim` first, the others in order

  std::string to_front(TranslateContext& ctx, const std::string& v) const { return permuted(ctx, v, perm); }
  std::string back(TranslateContext& ctx, const std::string& v) const {
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return permuted(ctx, v, inverse);
  }

 private:
  std::string permuted(TranslateContext& ctx, const std::string& v, const std::vector<int64_t>& p) const {
    if (dim == 0) return v;
    auto* tr = ctx.emit("Transpose", {v}, {ctx.temp("transposed")});
    set_attr(tr, "perm", p);
    return tr->output(0);
  }
};

DimFirst dim_first(TranslateContext& ctx, int64_t rank) {
  DimFirst d;
  d.dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  d.perm.push_back(d.dim);
  for (int64_t i = 0; i < rank; ++i)
    if (i != d.dim) d.perm.push_back(i);
  return d;
}

// self with self[..., index[i], ...] (along `dim`) replaced (reduction "none") or increased ("add") by
// updates[..., i, ...]; a 0-d self is handled as [1].
void scatter_along_dim(TranslateContext& ctx, std::string updates, const char* reduction) {
  const bool scalar = ctx.rank("self") == 0;
  const int64_t rank = std::max<int64_t>(ctx.rank("self"), 1);
  const DimFirst d = dim_first(ctx, rank);
  std::string self = ctx.tensor("self");
  if (scalar) {
    self = ctx.emit1("Reshape", {self, i64s(ctx, {1})});
    updates = ctx.emit1("Reshape", {updates, i64s(ctx, {-1})});
  }
  const std::string idx = ctx.emit1("Reshape", {ctx.value("index", DType::kInt64), i64s(ctx, {-1, 1})});
  auto* sc = ctx.emit("ScatterND", {d.to_front(ctx, self), idx, d.to_front(ctx, updates)}, {ctx.temp("scattered")});
  if (std::string(reduction) != "none") set_attr(sc, "reduction", std::string(reduction));
  std::string y = d.back(ctx, sc->output(0));
  if (scalar) y = ctx.emit1("Reshape", {y, i64s(ctx, {})});
  ctx.alias_output(0, y);
}

// index_add(self, dim, index, source, alpha=1): self[..., index[i], ...] += alpha * source[..., i, ...]
// (updates apply in index order, as torch's CPU loop adds them).
void index_add(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  std::string source = ctx.value("source", t);
  if (ctx.has("alpha") && ctx.float_arg("alpha", 1.0) != 1.0)
    source = ctx.emit1("Mul", {source, ctx.value("alpha", t)});
  scatter_along_dim(ctx, source, "add");
}

// index_copy(self, dim, index, source): self[..., index[i], ...] = source[..., i, ...].
void index_copy(TranslateContext& ctx) { scatter_along_dim(ctx, ctx.value("source", ctx.output_meta().dtype), "none"); }

// index_fill(self, dim, index, value): self[..., index[i], ...] = value, the value broadcast to the shape
// of the selected slices (self's shape with `dim` of length len(index)).
void index_fill(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = std::max<int64_t>(ctx.rank("self"), 1);
  const DimFirst d = dim_first(ctx, rank);
  std::string self = ctx.tensor("self");
  if (ctx.rank("self") == 0) self = ctx.emit1("Reshape", {self, i64s(ctx, {1})});
  const std::string count = shape_of(ctx, ctx.emit1("Reshape", {ctx.tensor("index"), i64s(ctx, {-1})}));
  std::string shape = shape_of(ctx, self);
  shape = ctx.emit1("ScatterElements", {shape, i64s(ctx, {d.dim}), count}, "fill_shape");
  std::string fill = ctx.emit1("Expand", {ctx.value("value", t), shape}, "fill");
  if (ctx.rank("self") == 0) fill = ctx.emit1("Reshape", {fill, i64s(ctx, {})});
  scatter_along_dim(ctx, fill, "none");
}

}  // namespace

PARITY_TRANSLATION("aten::index_add.default", index_add, 18);
PARITY_TRANSLATION("aten::index_copy.default", index_copy, 18);
PARITY_TRANSLATION("aten::index_fill.int_Scalar", index_fill, 18);
PARITY_TRANSLATION("aten::index_fill.int_Tensor", index_fill, 18);

}  // namespace parity::exporter
