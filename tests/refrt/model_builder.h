// Test helper: builds small ONNX models in memory (one node or a chain), serialized for Session::load_bytes.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "parity/internal/onnx_tensor.h"
#include "parity/tensor.h"

namespace parity::testing {

struct ModelBuilder {
  onnx::ModelProto model;
  explicit ModelBuilder(int opset = 18) {
    model.set_ir_version(10);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model.mutable_graph()->set_name("test");
  }
  onnx::GraphProto& g() { return *model.mutable_graph(); }

  void input(const std::string& name, DType dtype, const std::vector<int64_t>& dims = {}, bool ranked = false) {
    auto* vi = g().add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(dtype));
    if (ranked || !dims.empty())
      for (int64_t d : dims)
        d < 0 ? tt->mutable_shape()->add_dim()->set_dim_param("n") : tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name) { g().add_output()->set_name(name); }
  void initializer(const std::string& name, const Tensor& t) { tensor_to_proto(t, name, g().add_initializer()); }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& name = "") {
    auto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_node" : name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  std::string bytes() const { return model.SerializeAsString(); }
};

template <typename T>
Tensor make(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, std::move(shape));
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(T));
  return t;
}

// Deterministic pseudo-random floats in [-1, 1) (a fixed LCG: no dependence on <random> versions).
inline std::vector<float> ramp(int64_t n, uint32_t seed = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

}  // namespace parity::testing
