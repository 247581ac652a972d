"""Activations (Relu LeakyRelu PRelu Elu Selu Celu Gelu Sigmoid HardSigmoid HardSwish Softplus Softsign
Mish ThresholdedRelu) and Softmax/LogSoftmax/Hardmax incl. the opset<13 coerced-2-D rule.
numpy (float64) is the oracle; float16/bfloat16 rows are computed from the float32 values."""

import math

import ml_dtypes

BF16 = ml_dtypes.bfloat16
FLOAT_TYPES = ("float32", "float64", "float16", "bfloat16")
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12), "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}


def build(api):
    np, node = api.np, api.node
    erf = np.vectorize(math.erf, otypes=[np.float64])

    def case(name, nodes, inputs, outputs, opset=18, **kw):
        if opset < 22 and any(a.dtype == BF16 for a in inputs.values()):
            opset = 22
        api.case(name, nodes, inputs, outputs, opset=opset, **kw)

    def softplus(x):
        return np.logaddexp(0, x)

    selu_a, selu_g = 1.67326319217681884765625, 1.05070102214813232421875
    acts = {
        "Relu": ({}, lambda x: np.maximum(x, 0)),
        "LeakyRelu": ({}, lambda x: np.where(x < 0, np.float32(0.01) * x, x)),  # attributes are float32
        "LeakyRelu_alpha": ({"alpha": 0.3}, lambda x: np.where(x < 0, np.float32(0.3) * x, x)),
        "Elu": ({}, lambda x: np.where(x < 0, np.expm1(x), x)),
        "Elu_alpha": ({"alpha": 0.5}, lambda x: np.where(x < 0, 0.5 * np.expm1(x), x)),
        "Selu": ({}, lambda x: selu_g * np.where(x > 0, x, selu_a * np.expm1(x))),
        "Selu_attrs": ({"alpha": 2.0, "gamma": 0.5}, lambda x: 0.5 * np.where(x > 0, x, 2.0 * np.expm1(x))),
        "Celu": ({"alpha": 2.0}, lambda x: np.maximum(0, x) + np.minimum(0, 2.0 * np.expm1(x / 2.0))),
        "Sigmoid": ({}, lambda x: 1 / (1 + np.exp(-x))),
        "HardSigmoid": ({}, lambda x: np.clip(np.float32(0.2) * x + 0.5, 0, 1)),
        "HardSigmoid_attrs": ({"alpha": 0.5, "beta": 0.25},
                              lambda x: np.clip(np.float32(0.5) * x + np.float32(0.25), 0, 1)),
        "HardSwish": ({}, lambda x: x * np.clip(np.float32(1 / 6) * x + 0.5, 0, 1)),  # alpha: float attribute
        "Softplus": ({}, softplus),
        "Softsign": ({}, lambda x: x / (1 + np.abs(x))),
        "Mish": ({}, lambda x: x * np.tanh(softplus(x))),
        "ThresholdedRelu": ({}, lambda x: np.where(x > 1.0, x, 0)),
        "ThresholdedRelu_alpha": ({"alpha": 0.5}, lambda x: np.where(x > 0.5, x, 0)),
        "Gelu": ({}, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
        "Gelu_tanh": ({"approximate": "tanh"},
                      lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    }
    opsets = {"Gelu": 20, "Mish": 18, "Celu": 12, "HardSwish": 14}
    for key, (attrs, f) in acts.items():
        op = key.split("_")[0]
        for name in FLOAT_TYPES if op != "Celu" else ("float32",):  # Celu's spec lists float32 only
            x32 = api.rand(3, 7, low=-5, high=5)
            x = x32.astype(BF16 if name == "bfloat16" else name)
            want = f(x.astype(np.float64)).astype(x.dtype)
            tol = TOL[name]
            if key == "Gelu_tanh" and name == "float64":
                tol = (1e-7, 1e-9)  # ONNX Runtime's float64 tanh-Gelu is ~5e-9 off the formula (cross-check)
            case(f"{key.lower()}_{name}_3x7", [node(op, ["x"], ["y"], **attrs)], {"x": x}, {"y": want},
                 tol=tol, opset=max(18, opsets.get(op, 0)))
        x = api.rand(0, 3)
        case(f"{key.lower()}_empty", [node(op, ["x"], ["y"], **attrs)], {"x": x}, {"y": f(x).astype(np.float32)},
             opset=max(18, opsets.get(op, 0)))
    for op in ("Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "Softplus", "Softsign"):
        x = api.rand(2, 3, low=-3, high=3)
        attrs, f = acts[op]
        case(f"{op.lower()}_opset7", [node(op, ["x"], ["y"])], {"x": x},
             {"y": f(x.astype(np.float64)).astype(np.float32)}, opset=7)
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], np.float32)
    case("sigmoid_saturates", [node("Sigmoid", ["x"], ["y"])], {"x": x},
         {"y": (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)})
    case("softplus_large_inputs", [node("Softplus", ["x"], ["y"])], {"x": x}, {"y": softplus(x.astype(np.float64))
                                                                           .astype(np.float32)})
    case("mish_large_inputs", [node("Mish", ["x"], ["y"])], {"x": x},
         {"y": (x * np.tanh(softplus(x.astype(np.float64)))).astype(np.float32)})
    for name in ("int8", "int32", "int64"):
        x = api.RNG.integers(-9, 10, (3, 4)).astype(name)
        case(f"relu_{name}", [node("Relu", ["x"], ["y"])], {"x": x}, {"y": np.maximum(x, 0).astype(name)}, opset=14)
    x = api.rand(317, 331, low=-3, high=3)
    case("relu_f32_large_100k", [node("Relu", ["x"], ["y"])], {"x": x}, {"y": np.maximum(x, 0)})
    # float32 Sigmoid on the vectorised path in ranges over the pool, saturated and special values
    # included (a local generator, so the rows after this keep their values)
    x = np.random.default_rng(24).uniform(-30, 30, (5, 10007)).astype(np.float32)
    x[0, :7] = [-np.inf, np.inf, np.nan, -1000.0, 1000.0, -0.0, 88.5]
    with np.errstate(over="ignore"):
        want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    case("sigmoid_f32_large_50k", [node("Sigmoid", ["x"], ["y"])], {"x": x}, {"y": want})
    x = np.array([np.nan, -1.0, 2.0], np.float32)
    case("relu_keeps_nan", [node("Relu", ["x"], ["y"])], {"x": x}, {"y": np.array([np.nan, 0, 2], np.float32)})

    # Shrink (opset 9): x + bias below -lambd, x - bias above lambd, else 0
    def shrink(x, bias=0.0, lambd=0.5):
        return np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0)).astype(x.dtype)

    x = api.rand(4, 5, low=-2, high=2)
    case("shrink_default", [node("Shrink", ["x"], ["y"])], {"x": x}, {"y": shrink(x)})
    case("shrink_bias_lambd", [node("Shrink", ["x"], ["y"], bias=0.25, lambd=1.5)], {"x": x},
         {"y": shrink(x, 0.25, 1.5)})
    xi = np.arange(-5, 6, dtype=np.int32)
    case("shrink_int32", [node("Shrink", ["x"], ["y"], bias=1.0, lambd=2.0)], {"x": xi}, {"y": shrink(xi, 1, 2)})
    xh = x.astype(np.float16)
    case("shrink_float16", [node("Shrink", ["x"], ["y"], lambd=1.0)], {"x": xh},
         {"y": shrink(xh.astype(np.float32), 0.0, 1.0).astype(np.float16)}, tol=TOL["float16"])

    # PRelu: slope broadcast to x
    for name, slope_shape in (("float32", (3, 1)), ("float64", (4,)), ("float16", ()), ("bfloat16", (1, 4))):
        x = api.rand(2, 3, 4, low=-3, high=3).astype(BF16 if name == "bfloat16" else name)
        s = api.rand(*slope_shape, low=0, high=1).astype(x.dtype)
        wide = np.float64 if name == "float64" else np.float32
        xf, sf = x.astype(wide), s.astype(wide)
        case(f"prelu_{name}", [node("PRelu", ["x", "s"], ["y"])], {"x": x, "s": s},
             {"y": np.where(xf < 0, sf * xf, xf).astype(x.dtype)}, tol=TOL[name])
    x, s = api.RNG.integers(-9, 10, (2, 5)).astype(np.int32), np.array([2], np.int32)
    case("prelu_int32", [node("PRelu", ["x", "s"], ["y"])], {"x": x, "s": s}, {"y": np.where(x < 0, 2 * x, x)})
    x, s = api.rand(2, 5, low=-3, high=3), api.rand(5)
    case("prelu_opset7", [node("PRelu", ["x", "s"], ["y"])], {"x": x, "s": s}, {"y": np.where(x < 0, s * x, x)},
         opset=7)

    # Softmax family: single axis from opset 13, coerced 2-D [prod(:axis), prod(axis:)] before
    def softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def log_softmax(x, axis):
        m = x.max(axis=axis, keepdims=True)
        return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))

    def hardmax(x, axis):
        idx = np.expand_dims(np.argmax(x, axis=axis), axis)
        out = np.zeros_like(x)
        np.put_along_axis(out, idx, 1, axis=axis)
        return out

    def coerced(f, x, axis):
        axis = axis % x.ndim if axis < 0 else axis
        rows = int(np.prod(x.shape[:axis]))
        return f(x.reshape(rows, -1), 1).reshape(x.shape)

    fams = {"Softmax": softmax, "LogSoftmax": log_softmax, "Hardmax": hardmax}
    for op, f in fams.items():
        x = api.rand(2, 3, 4, low=-5, high=5, dtype=np.float64)
        x[0, 1, :] = 2.5  # a tie: Hardmax takes the first maximum
        for axis in (0, 1, -1):
            case(f"{op.lower()}_ax{str(axis).replace('-', 'm')}_opset13", [node(op, ["x"], ["y"], axis=axis)], {"x": x.astype(np.float32)},
                 {"y": f(x, axis).astype(np.float32)}, opset=13)
            case(f"{op.lower()}_ax{str(axis).replace('-', 'm')}_opset11_coerced", [node(op, ["x"], ["y"], axis=axis)],
                 {"x": x.astype(np.float32)}, {"y": coerced(f, x, axis).astype(np.float32)}, opset=11)
        case(f"{op.lower()}_default_axis_opset13", [node(op, ["x"], ["y"])], {"x": x}, {"y": f(x, -1)},
             tol=(1e-12, 1e-12))
        case(f"{op.lower()}_default_axis_opset7_coerced", [node(op, ["x"], ["y"])], {"x": x},
             {"y": coerced(f, x, 1)}, opset=7, tol=(1e-12, 1e-12))
        for name in ("float16", "bfloat16"):
            xs = x.astype(np.float32).astype(BF16 if name == "bfloat16" else name)
            case(f"{op.lower()}_{name}", [node(op, ["x"], ["y"], axis=1)], {"x": xs},
                 {"y": f(xs.astype(np.float32), 1).astype(xs.dtype)}, tol=TOL[name])
        x = api.rand(0, 5)
        case(f"{op.lower()}_empty", [node(op, ["x"], ["y"])], {"x": x}, {"y": x.copy()})
        x = api.rand(1000, 101, low=-5, high=5)
        case(f"{op.lower()}_large_100k", [node(op, ["x"], ["y"])], {"x": x},
             {"y": f(x.astype(np.float64), -1).astype(np.float32)})

    # float32 rows through the vectorised softmax row (refrt/src/vmath.h): lengths with and without a
    # tail after the 8-wide loop, -inf (masked) entries, and spreads past exp's float range (x - max
    # below -87: 0 or subnormal in numpy, far below the output's resolution). Enough rows for the pool.
    own = np.random.default_rng(29)
    for n in (37, 64, 203):
        x = own.uniform(-4, 4, (3, 40, n))
        x[1] *= 30
        x[2] = np.where(np.arange(n) > np.arange(40)[:, None] * n // 40, -np.inf, x[2])  # causal-style mask
        case(f"softmax_f32_masked_wide_n{n}", [node("Softmax", ["x"], ["y"], axis=-1)], {"x": x.astype(np.float32)},
             {"y": softmax(x.astype(np.float32).astype(np.float64), -1).astype(np.float32)}, opset=13)
