// Activation ATen ops -> ONNX (fused ONNX ops where opset 18 has them, formulas otherwise).
#include <cmath>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

const char* input_name(TranslateContext& ctx) { return ctx.arg("self") ? "self" : "input"; }

// gelu(self, approximate) from opset 20: ONNX's Gelu.
void gelu_op(TranslateContext& ctx) {
  set_attr(ctx.emit("Gelu", {ctx.tensor("self")}, {ctx.output()}), "approximate",
           ctx.string_arg("approximate", "none"));
}

// gelu below opset 20: 0.5 x (1 + erf(x / sqrt 2)), or the tanh form.
void gelu_formula(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.tensor("self");
  const std::string approximate = ctx.string_arg("approximate", "none");
  std::string inner;
  if (approximate == "tanh") {
    const std::string x3 = ctx.emit1("Mul", {x, ctx.emit1("Mul", {x, x})});
    const std::string poly = ctx.emit1("Add", {x, ctx.emit1("Mul", {x3, ctx.constant(0.044715, t)})});
    inner = ctx.emit1("Tanh", {ctx.emit1("Mul", {poly, ctx.constant(std::sqrt(2.0 / M_PI), t)})});
  } else {
    inner = ctx.emit1("Erf", {ctx.emit1("Mul", {x, ctx.constant(M_SQRT1_2, t)})});
  }
  const std::string half_x = ctx.emit1("Mul", {x, ctx.constant(0.5, t)});
  ctx.emit("Mul", {half_x, ctx.emit1("Add", {inner, ctx.constant(1, t)})}, {ctx.output()});
}

// elu(self, alpha, scale, input_scale) = scale * (x > 0 ? x : alpha * (exp(input_scale * x) - 1))
void elu(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.tensor("self");
  const double alpha = ctx.float_arg("alpha", 1.0), scale = ctx.float_arg("scale", 1.0),
               input_scale = ctx.float_arg("input_scale", 1.0);
  if (scale == 1.0 && input_scale == 1.0) {
    set_attr(ctx.emit("Elu", {x}, {ctx.output()}), "alpha", static_cast<float>(alpha));
    return;
  }
  const std::string e =
      ctx.emit1("Sub", {ctx.emit1("Exp", {ctx.emit1("Mul", {x, ctx.constant(input_scale, t)})}), ctx.constant(1, t)});
  const std::string neg = ctx.emit1("Mul", {e, ctx.constant(alpha, t)});
  const std::string r = ctx.emit1("Where", {ctx.emit1("Greater", {x, ctx.constant(0, t)}), x, neg});
  ctx.emit("Mul", {r, ctx.constant(scale, t)}, {ctx.output()});
}

void leaky_relu(TranslateContext& ctx) {
  set_attr(ctx.emit("LeakyRelu", {ctx.tensor("self")}, {ctx.output()}), "alpha",
           static_cast<float>(ctx.float_arg("negative_slope", 0.01)));
}

void hardtanh(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  ctx.emit("Clip",
           {ctx.tensor("self"), ctx.constant(ctx.float_arg("min_val", -1.0), t),
            ctx.constant(ctx.float_arg("max_val", 1.0), t)},
           {ctx.output()});
}

void relu6(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  ctx.emit("Clip", {ctx.tensor("self"), ctx.constant(0.0, t), ctx.constant(6.0, t)}, {ctx.output()});
}

void silu(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  ctx.emit("Mul", {x, ctx.emit1("Sigmoid", {x})}, {ctx.output()});
}

void hardswish(TranslateContext& ctx) { ctx.emit("HardSwish", {ctx.tensor("self")}, {ctx.output()}); }

void hardsigmoid(TranslateContext& ctx) {
  auto* n = ctx.emit("HardSigmoid", {ctx.tensor("self")}, {ctx.output()});
  set_attr(n, "alpha", 1.0f / 6.0f);
  set_attr(n, "beta", 0.5f);
}

// softplus(self, beta, threshold) = x * beta > threshold ? x : log(1 + exp(beta x)) / beta
void softplus(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.tensor("self");
  const double beta = ctx.float_arg("beta", 1.0), threshold = ctx.float_arg("threshold", 20.0);
  const std::string bx = ctx.emit1("Mul", {x, ctx.constant(beta, t)});
  const std::string soft = ctx.emit1("Div", {ctx.emit1("Softplus", {bx}), ctx.constant(beta, t)});
  ctx.emit("Where", {ctx.emit1("Greater", {bx, ctx.constant(threshold, t)}), x, soft}, {ctx.output()});
}

void prelu(TranslateContext& ctx) {
  // weight has C entries for dim 1; reshape to [C, 1, ...] so it broadcasts like torch.
  const int64_t rank = ctx.rank(input_name(ctx));
  std::string w = ctx.tensor("weight");
  if (rank >= 2) {
    std::vector<int64_t> shape = {-1};
    for (int64_t i = 2; i < rank; ++i) shape.push_back(1);
    w = ctx.emit1("Reshape", {w, ctx.graph.constant_i64(shape)});
  }
  ctx.emit("PRelu", {ctx.tensor(input_name(ctx)), w}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::gelu.default", gelu_formula, 18);
PARITY_TRANSLATION("aten::gelu.default", gelu_op, 20);
PARITY_TRANSLATION("aten::elu.default", elu, 18);
PARITY_TRANSLATION("aten::leaky_relu.default", leaky_relu, 18);
PARITY_TRANSLATION("aten::hardtanh.default", hardtanh, 18);
PARITY_TRANSLATION("aten::relu6.default", relu6, 18);
PARITY_TRANSLATION("aten::silu.default", silu, 18);
PARITY_TRANSLATION("aten::hardswish.default", hardswish, 18);
PARITY_TRANSLATION("aten::hardsigmoid.default", hardsigmoid, 18);
PARITY_TRANSLATION("aten::softplus.default", softplus, 18);
PARITY_TRANSLATION("aten::prelu.default", prelu, 18);

}  // namespace parity::exporter
