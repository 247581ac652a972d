// The tables of 8-bit elementwise islands (qlookup.h) and the QLookup node (private domain): y = table[x],
// one byte for one byte, over the session's pool.
#include "qlookup.h"

#include <cstring>

namespace parity::refrt::qlookup {

Table parse(const NodeDef& node) {
  Table t;
  const Attribute* a = node.attr("lut", Attribute::Type::kTensor);
  if (!a) return t;
  if (a->t.numel() != 256 || (a->t.dtype() != DType::kUInt8 && a->t.dtype() != DType::kInt8))
    node.fail("attribute 'lut' must hold 256 int8 / uint8 values, got " + dtype_name(a->t.dtype()) + " " +
              shape_str(a->t.shape()));
  std::memcpy(t.bytes.data(), a->t.raw(), 256);
  t.out = a->t.dtype();
  if (const Attribute* o = node.attr("lut_ops", Attribute::Type::kString)) t.ops = o->s;
  t.defined = true;
  return t;
}

void apply(const Table& t, const uint8_t* x, uint8_t* y, int64_t n) {
  const uint8_t* b = t.bytes.data();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {  // independent loads: four lookups in flight
    const uint8_t a0 = b[x[i]], a1 = b[x[i + 1]], a2 = b[x[i + 2]], a3 = b[x[i + 3]];
    y[i] = a0;
    y[i + 1] = a1;
    y[i + 2] = a2;
    y[i + 3] = a3;
  }
  for (; i < n; ++i) y[i] = b[x[i]];
}

void apply(const Table& t, uint8_t* p, int64_t n) { apply(t, p, p, n); }

std::string_view label(const Table& t, std::string_view base) {
  return intern_impl(std::string(base.empty() ? "refrt" : base) + " + lookup(" + t.ops + ")");
}

namespace {

class QLookupKernel : public Kernel {
 public:
  explicit QLookupKernel(const NodeDef& node)
      : node_(node), table_(parse(node)), x_type_(static_cast<DType>(node.attr_int("x_dtype", 2))) {
    if (!table_.defined) node.fail("QLookup lacks its 'lut' attribute");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.dtype() != x_type_)
      node_.fail("input dtype " + dtype_name(x.dtype()) + " differs from the fused DequantizeLinear's " +
                 dtype_name(x_type_));
    Tensor y(table_.out, x.shape());
    const auto* px = static_cast<const uint8_t*>(x.raw());
    auto* py = static_cast<uint8_t*>(y.mutable_raw());
    parallel_for(io, x.numel(), 1 << 16, [&](int64_t i0, int64_t i1) { apply(table_, px + i0, py + i0, i1 - i0); });
    io.impl = label(table_, "refrt");
    io.outputs[0] = std::move(y);
  }

 private:
  NodeDef node_;
  Table table_;
  DType x_type_;
};

}  // namespace

PARITY_FUSED_KERNEL("QLookup", QLookupKernel, {DType::kUInt8, DType::kInt8});

}  // namespace parity::refrt::qlookup
