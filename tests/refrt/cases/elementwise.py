"""Elementwise math: binary arithmetic (Add Sub Mul Div Mod Pow), bitwise ops, unary math, variadic
Min/Max/Sum/Mean and Clip, over dtypes and shapes (empty, scalar, broadcast, odd, ~100k elements).
numpy is the oracle; float16/bfloat16 rows are computed in float32 and rounded, as ONNX specifies."""

import math

import ml_dtypes

BF16 = ml_dtypes.bfloat16
INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_TYPES = ("float32", "float64", "float16", "bfloat16")


def dtype_of(np, name):
    return BF16 if name == "bfloat16" else np.dtype(name).type


def tol_for(name):
    """Rounding of the 16-bit floats: half an ulp either way is 1 ulp apart at most."""
    return {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}.get(name)


def values(api, shape, name, low=-4.0, high=4.0):
    np = api.np
    dt = dtype_of(np, name)
    if name in FLOAT_TYPES:
        return api.rand(*shape, dtype=np.float32, low=low, high=high).astype(dt)
    info = np.iinfo(np.dtype(name))
    lo, hi = max(int(low) * 3, info.min), min(int(high) * 3, info.max)
    return api.RNG.integers(lo, hi + 1, size=shape).astype(dt)


def f32(np, x):
    """16-bit floats are computed in float32 (the ONNX rule); other dtypes as they are."""
    return x.astype(np.float32) if x.dtype in (np.float16, BF16) else x


def bf16_aware(api):
    """api.case, with rows that involve bfloat16 moved to opset 22 (where most ops list it)."""
    def case(name, nodes, inputs, outputs, opset=18, **kw):
        if opset == 18 and any(a.dtype == BF16 for a in list(inputs.values()) + list(outputs.values())):
            opset = 22
        api.case(name, nodes, inputs, outputs, opset=opset, **kw)
    return case


def erf_rows(api):
    """float32 Erf (vectorised in refrt) within 2 ulp, relative: rtol 2.4e-7 is 2 to 4 ulp, atol 0.
    The oracle is math.erf in double, rounded once to float32."""
    np, node = api.np, api.node
    erf = np.vectorize(math.erf, otypes=[np.float64])

    def row(name, x, tol=(2.4e-7, 0.0)):
        x = np.asarray(x, np.float32)
        api.case(f"erf_f32_{name}", [node("Erf", ["x"], ["y"])], {"x": x}, {"y": erf(x).astype(np.float32)}, tol=tol)

    tiny = np.geomspace(1e-8, 1e-3, 41)
    row("tiny", np.concatenate([tiny, -tiny, [1e-30, -1e-37]]))
    row("subnormal", [1e-45, -3e-45, 1e-40, -2e-39, 1.1e-38], tol=(0.0, 3e-45))  # ulp 1.4e-45 here
    one = np.float32(1.0)
    steps = [np.nextafter(one, np.float32(0)), one, np.nextafter(one, np.float32(2))]
    row("region_switch", np.concatenate([np.linspace(0.9, 1.1, 41), steps, -np.array(steps)]))
    tail = np.concatenate([np.linspace(3, 6, 61), [3.9192055, 3.9192057, 3.919206, 3.95, 4.0]])
    row("tail_3_to_6", np.concatenate([tail, -tail]))
    # NaN, +-inf, +-0 and huge values; y2 = 1 / erf(x) tells -0 from +0 (-inf, inf).
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -3.4e38, 0.5, -2.0], np.float32)
    y = erf(x).astype(np.float32)
    with np.errstate(divide="ignore"):
        y2 = np.reciprocal(y)
    api.case("erf_f32_specials", [node("Erf", ["x"], ["y"]), node("Reciprocal", ["y"], ["y2"])], {"x": x},
             {"y": y, "y2": y2}, tol=(2.4e-7, 0.0))
    # Above the pool's 16384-element grain: split into ranges on the thread-pool run.
    own = np.random.default_rng(41)
    row("pool_200003", own.uniform(-5, 5, 200003))


def build(api):
    np, case, node = api.np, bf16_aware(api), api.node

    # ---- binary arithmetic over every numeric dtype, broadcasting
    ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
    for op, f in ops.items():
        for name in FLOAT_TYPES + INT_TYPES:
            a, b = values(api, (3, 1, 5), name), values(api, (4, 1), name)
            with np.errstate(over="ignore"):
                want = f(f32(np, a), f32(np, b)).astype(a.dtype)
            case(f"{op.lower()}_{name}_broadcast", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": want},
                 tol=tol_for(name))
    for name in FLOAT_TYPES:
        a, b = values(api, (2, 7), name), values(api, (7,), name, low=0.5, high=3)
        case(f"div_{name}_row", [node("Div", ["a", "b"], ["y"])], {"a": a, "b": b},
             {"y": (f32(np, a) / f32(np, b)).astype(a.dtype)}, tol=tol_for(name))
    for name in INT_TYPES:  # integer Div truncates toward zero (numpy // floors: not the oracle)
        a = values(api, (11,), name, low=-9, high=9)
        b = values(api, (11,), name, low=1, high=3)
        if np.dtype(name).kind == "i":
            b = (b * np.where(np.arange(11) % 2 == 0, 1, -1)).astype(b.dtype)
        want = (np.trunc(a.astype(np.float64) / b.astype(np.float64))).astype(a.dtype)
        case(f"div_{name}_trunc_toward_zero", [node("Div", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": want})
    a = np.array([-128, -128, 127, -7], np.int8)
    b = np.array([-1, 1, -1, 2], np.int8)
    case("div_int8_min_by_minus_one_wraps", [node("Div", ["a", "b"], ["y"])], {"a": a, "b": b},
         {"y": np.array([-128, -128, -127, -3], np.int8)})
    a = np.array([200, 100, 255], np.uint8)
    case("add_uint8_wraps", [node("Add", ["a", "b"], ["y"])], {"a": a, "b": a}, {"y": (a + a).astype(np.uint8)})
    a = np.array([65535, 300, 2], np.uint16)
    case("mul_uint16_wraps", [node("Mul", ["a", "b"], ["y"])], {"a": a, "b": a}, {"y": (a * a).astype(np.uint16)})
    a = np.array([2**62, -(2**62)], np.int64)
    case("mul_int64_wraps", [node("Mul", ["a", "b"], ["y"])], {"a": a, "b": np.array([4, 4], np.int64)},
         {"y": np.array([0, 0], np.int64)})
    # shapes: empty, scalar, rank-0 both, odd, one large (~100k)
    a, b = api.rand(0, 3), api.rand(3)
    case("mul_f32_empty_by_row", [node("Mul", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a * b})
    a, b = api.rand(), api.rand()
    case("sub_f32_two_scalars", [node("Sub", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.array(a - b, np.float32)})
    a, b = api.rand(2, 1, 3, 1, 5), api.rand(4, 1, 1, 1)
    case("div_f32_rank5_broadcast", [node("Div", ["a", "b"], ["y"])], {"a": a, "b": b + 2}, {"y": a / (b + 2)})
    a, b = api.rand(317, 331), api.rand(331)
    case("add_f32_large_100k", [node("Add", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a + b})
    a, b = values(api, (97, 1031), "int32"), values(api, (97, 1), "int32")
    case("sub_int32_large_100k", [node("Sub", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a - b})

    # ---- Mod: fmod=0 takes the divisor's sign (Python %), fmod=1 the dividend's (C fmod)
    for name in INT_TYPES:
        signed = np.dtype(name).kind == "i"
        a = np.array([-7, 7, -7, 7, 0, 5, 9, -9, 6] if signed else [7, 8, 0, 5, 9, 200, 6, 1, 3]).astype(name)
        b = np.array([3, -3, -3, 3, 4, 5, -4, 4, 7] if signed else [3, 3, 4, 5, 4, 7, 7, 9, 2]).astype(name)
        case(f"mod_{name}_python_sign", [node("Mod", ["a", "b"], ["y"])], {"a": a, "b": b},
             {"y": np.mod(a, b).astype(name)})
        case(f"mod_{name}_fmod", [node("Mod", ["a", "b"], ["y"], fmod=1)], {"a": a, "b": b},
             {"y": np.fmod(a, b).astype(name)})
    for name in FLOAT_TYPES:
        a, b = values(api, (3, 4), name, low=-9, high=9), values(api, (4,), name, low=1, high=3)
        b = (f32(np, b) * np.array([1, -1, 1, -1], np.float32)).astype(b.dtype)
        case(f"mod_{name}_fmod", [node("Mod", ["a", "b"], ["y"], fmod=1)], {"a": a, "b": b},
             {"y": np.fmod(f32(np, a), f32(np, b)).astype(a.dtype)}, tol=tol_for(name))
    a, b = np.array([-2**31, 5], np.int32), np.array([-1, -1], np.int32)
    case("mod_int32_min_by_minus_one", [node("Mod", ["a", "b"], ["y"])], {"a": a, "b": b},
         {"y": np.array([0, 0], np.int32)})

    # ---- Pow, incl. mixed base/exponent types (opset 12+) and integer bases
    a, b = api.rand(2, 5, low=0.1, high=3), api.rand(5, low=-2, high=2)
    case("pow_f32", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.power(a, b)})
    a, b = api.rand(6, low=-3, high=3, dtype=np.float64), np.array([0, 1, 2, 3, -1, -2], np.int64)
    case("pow_f64_base_int64_exponent", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.power(a, b)})
    a, b = api.rand(6, low=-3, high=3), np.array([0, 1, 2, 3, 5, 2], np.int32)
    case("pow_f32_base_int32_exponent", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": b},
         {"y": np.power(a.astype(np.float64), b).astype(np.float32)})
    a, b = np.array([2, -3, 5, 7, 0, -1], np.int64), np.array([10, 3, 0, 2, 4, 7], np.int64)
    case("pow_int64", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.power(a, b)})
    a, b = np.array([2, -3, 4, 9], np.int32), np.array([0.5, 2.0, 0.5, 1.5], np.float32)
    case("pow_int32_base_float_exponent", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": b},
         {"y": np.trunc(np.power(a.astype(np.float64), b.astype(np.float64))).astype(np.int32)})
    a, b = values(api, (4, 3), "float16", low=0.5, high=2), values(api, (3,), "float16", low=-2, high=2)
    case("pow_float16", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": b},
         {"y": np.power(f32(np, a), f32(np, b)).astype(np.float16)}, tol=tol_for("float16"))
    a, b = api.rand(3, low=0.5, high=2), np.array(2, np.int64)
    case("pow_opset7_f32", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": np.array(2.0, np.float32)},
         {"y": a * a}, opset=7)

    # one scalar exponent: a single pass split over the pool (x ** 2 as x * x for float32); a local
    # generator, so the rows after these keep their values
    rng = np.random.default_rng(22)
    a = rng.uniform(-3, 3, (3, 20000)).astype(np.float32)
    case("pow_f32_scalar_square", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": np.array(2.0, np.float32)},
         {"y": np.power(a.astype(np.float64), 2.0).astype(np.float32)})
    a = rng.uniform(0.1, 3, (3, 20000)).astype(np.float32)
    case("pow_f32_scalar_exponent", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": np.array([1.5], np.float64)},
         {"y": np.power(a.astype(np.float64), 1.5).astype(np.float32)})
    a = rng.uniform(-3, 3, (2, 9000))
    case("pow_f64_scalar_square", [node("Pow", ["a", "b"], ["y"])], {"a": a, "b": np.array(2.0, np.float32)},
         {"y": np.power(a, 2.0)})

    # ---- bitwise ops and BitShift
    for name in INT_TYPES:
        info = np.iinfo(np.dtype(name))
        a = api.RNG.integers(info.min, info.max, size=(3, 4), dtype=np.dtype(name), endpoint=True)
        b = api.RNG.integers(info.min, info.max, size=(4,), dtype=np.dtype(name), endpoint=True)
        for op, f in {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}.items():
            case(f"{op.lower()}_{name}", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": f(a, b)})
        case(f"bitwisenot_{name}", [node("BitwiseNot", ["x"], ["y"])], {"x": a}, {"y": np.invert(a)})
    for name in ("uint8", "uint16", "uint32", "uint64"):
        bits = np.dtype(name).itemsize * 8
        a = np.array([1, 3, 255, 7, 128, 1], name)
        s = np.array([0, 1, 2, bits - 1, 3, bits - 2], name)
        case(f"bitshift_left_{name}", [node("BitShift", ["a", "s"], ["y"], direction="LEFT")], {"a": a, "s": s},
             {"y": np.left_shift(a, s)})
        case(f"bitshift_right_{name}", [node("BitShift", ["a", "s"], ["y"], direction="RIGHT")], {"a": a, "s": s},
             {"y": np.right_shift(a, s)})

    # ---- unary math over the float types
    erf = np.vectorize(math.erf)
    unary = {"Neg": (np.negative, -4, 4), "Abs": (np.abs, -4, 4), "Sqrt": (np.sqrt, 0.01, 9),
             "Reciprocal": (np.reciprocal, 0.5, 4), "Exp": (np.exp, -4, 4), "Log": (np.log, 0.01, 9),
             "Sin": (np.sin, -4, 4), "Cos": (np.cos, -4, 4), "Tan": (np.tan, -1.2, 1.2),
             "Asin": (np.arcsin, -0.99, 0.99), "Acos": (np.arccos, -0.99, 0.99), "Atan": (np.arctan, -4, 4),
             "Sinh": (np.sinh, -3, 3), "Cosh": (np.cosh, -3, 3), "Asinh": (np.arcsinh, -4, 4),
             "Acosh": (np.arccosh, 1.01, 5), "Atanh": (np.arctanh, -0.99, 0.99), "Tanh": (np.tanh, -4, 4),
             "Erf": (lambda x: erf(x).astype(x.dtype), -3, 3), "Floor": (np.floor, -4, 4),
             "Ceil": (np.ceil, -4, 4), "Sign": (np.sign, -4, 4)}
    for op, (f, lo, hi) in unary.items():
        for name in FLOAT_TYPES:
            x = values(api, (3, 7), name, low=lo, high=hi)
            want = f(f32(np, x)).astype(x.dtype)
            tol = tol_for(name) or ((1e-5, 1e-6) if name == "float32" else (1e-12, 1e-12))
            case(f"{op.lower()}_{name}_3x7", [node(op, ["x"], ["y"])], {"x": x}, {"y": want}, tol=tol)
    for name in ("int8", "int16", "int32", "int64"):
        x = np.array([-5, 0, 3, np.iinfo(name).min, np.iinfo(name).max], name)
        case(f"neg_{name}_min_wraps", [node("Neg", ["x"], ["y"])], {"x": x}, {"y": np.negative(x)})
        case(f"abs_{name}_extremes", [node("Abs", ["x"], ["y"])], {"x": x}, {"y": np.abs(x)})
        case(f"sign_{name}", [node("Sign", ["x"], ["y"])], {"x": x}, {"y": np.sign(x)})
    for name in ("uint8", "uint64"):
        x = np.array([0, 3, np.iinfo(name).max], name)
        case(f"abs_{name}_extremes", [node("Abs", ["x"], ["y"])], {"x": x}, {"y": x.copy()})
        case(f"sign_{name}", [node("Sign", ["x"], ["y"])], {"x": x}, {"y": np.sign(x)})
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 2.4, -2.6, 0.0, np.inf, -np.inf, np.nan], np.float32)
    for name in FLOAT_TYPES:
        xs = x.astype(dtype_of(np, name))
        case(f"round_{name}_half_to_even", [node("Round", ["x"], ["y"])], {"x": xs}, {"y": np.round(f32(np, xs)).astype(xs.dtype)})
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 3e38], np.float32)
    for name in FLOAT_TYPES:
        with np.errstate(over="ignore"):
            xs = x.astype(dtype_of(np, name))
        case(f"isnan_{name}", [node("IsNaN", ["x"], ["y"])], {"x": xs}, {"y": np.isnan(f32(np, xs))}, opset=20)
        case(f"isinf_{name}", [node("IsInf", ["x"], ["y"])], {"x": xs}, {"y": np.isinf(f32(np, xs))}, opset=20)
    case("isinf_negative_only", [node("IsInf", ["x"], ["y"], detect_positive=0)], {"x": x}, {"y": np.isneginf(x)})
    case("isinf_positive_only", [node("IsInf", ["x"], ["y"], detect_negative=0)], {"x": x}, {"y": np.isposinf(x)})
    x = api.rand(0, 5)
    case("sqrt_f32_empty", [node("Sqrt", ["x"], ["y"])], {"x": x}, {"y": np.sqrt(x)})
    x = np.array(0.3, np.float64)
    case("cos_f64_scalar", [node("Cos", ["x"], ["y"])], {"x": x}, {"y": np.cos(x)}, tol=(1e-12, 1e-12))
    x = api.rand(100003, low=-4, high=4)
    case("exp_f32_large_100k", [node("Exp", ["x"], ["y"])], {"x": x}, {"y": np.exp(x)})
    erf_rows(api)
    x = api.rand(5, low=-4, high=4)
    case("sin_opset7", [node("Sin", ["x"], ["y"])], {"x": x}, {"y": np.sin(x)}, opset=7)

    # ---- variadic Min Max Sum Mean (broadcasting, NaN propagates through Min/Max)
    variadic = {"Min": np.minimum, "Max": np.maximum, "Sum": np.add}
    for op, f in variadic.items():
        for name in FLOAT_TYPES + (INT_TYPES if op != "Sum" else ()):
            a, b, c = values(api, (3, 1), name), values(api, (4,), name), values(api, (1, 4), name)
            want = f(f(f32(np, a), f32(np, b)), f32(np, c)).astype(a.dtype)
            case(f"{op.lower()}_{name}_three_inputs", [node(op, ["a", "b", "c"], ["y"])], {"a": a, "b": b, "c": c},
                 {"y": want}, tol=tol_for(name))
        x = values(api, (2, 3), "float32")
        case(f"{op.lower()}_single_input", [node(op, ["x"], ["y"])], {"x": x}, {"y": x.copy()})
    for name in FLOAT_TYPES:
        a, b = values(api, (2, 3), name), values(api, (3,), name)
        case(f"mean_{name}_two_inputs", [node("Mean", ["a", "b"], ["y"])], {"a": a, "b": b},
             {"y": ((f32(np, a) + f32(np, b)) / 2).astype(a.dtype)}, tol=tol_for(name))
    a = np.array([1.0, np.nan, 3.0, -np.inf], np.float32)
    b = np.array([np.nan, 2.0, 1.0, 0.0], np.float32)
    case("min_propagates_nan", [node("Min", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.minimum(a, b)})
    case("max_propagates_nan", [node("Max", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.maximum(a, b)})
    a, b = api.rand(0, 3), api.rand(1, 3)
    case("max_empty_broadcast", [node("Max", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.maximum(a, b)})
    a, b = api.rand(2, 3), api.rand(2, 3)
    case("max_opset7", [node("Max", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.maximum(a, b)}, opset=7)

    # ---- Clip: attributes before opset 11, optional inputs from 11
    x = api.rand(3, 5, low=-3, high=3)
    x[0, 0] = np.nan
    case("clip_opset6_attributes", [node("Clip", ["x"], ["y"], min=-1.0, max=0.5)], {"x": x},
         {"y": np.clip(x, -1.0, 0.5)}, opset=7)
    case("clip_opset6_default_bounds", [node("Clip", ["x"], ["y"])], {"x": x}, {"y": x.copy()}, opset=7)
    lo, hi = np.array(-0.5, np.float32), np.array(1.5, np.float32)
    case("clip_inputs_min_max", [node("Clip", ["x", "lo", "hi"], ["y"])], {"x": x, "lo": lo, "hi": hi},
         {"y": np.clip(x, lo, hi)})
    case("clip_only_max", [node("Clip", ["x", "", "hi"], ["y"])], {"x": x, "hi": hi}, {"y": np.minimum(x, hi)})
    case("clip_only_min_opset11", [node("Clip", ["x", "lo"], ["y"])], {"x": x, "lo": lo}, {"y": np.maximum(x, lo)},
         opset=11)
    case("clip_no_bounds", [node("Clip", ["x"], ["y"])], {"x": x}, {"y": x.copy()})
    lo2, hi2 = np.array(1.0, np.float32), np.array(-1.0, np.float32)
    case("clip_min_above_max_gives_max", [node("Clip", ["x", "lo", "hi"], ["y"])],
         {"x": x[1:], "lo": lo2, "hi": hi2}, {"y": np.full_like(x[1:], -1.0)})
    for name in ("int8", "int32", "int64", "uint8", "uint64", "float64", "float16", "bfloat16"):
        xs = values(api, (4, 3), name, low=0 if name.startswith("u") else -9, high=9)
        lo = np.array(2 if name.startswith("u") else -2, dtype_of(np, name))
        hi = np.array(5, dtype_of(np, name))
        case(f"clip_{name}", [node("Clip", ["x", "lo", "hi"], ["y"])], {"x": xs, "lo": lo, "hi": hi},
             {"y": np.clip(f32(np, xs), f32(np, lo), f32(np, hi)).astype(xs.dtype)})

    # float binary ops split into output ranges over the pool, the ranges cutting runs (34965 and 60000
    # elements): a row broadcast, an outer broadcast of both operands, float64.
    own = np.random.default_rng(37)
    a, b = own.uniform(-1, 1, (5, 7, 999)).astype(np.float32), own.uniform(-1, 1, (7, 1)).astype(np.float32)
    case("add_f32_pool_broadcast", [node("Add", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a + b})
    a, b = own.uniform(-1, 1, (40, 1, 30)).astype(np.float32), own.uniform(-1, 1, (1, 50, 30)).astype(np.float32)
    case("mul_f32_pool_outer", [node("Mul", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a * b})
    a, b = own.uniform(-1, 1, (5, 7, 999)), own.uniform(1, 2, (999,))
    case("div_f64_pool_broadcast", [node("Div", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a / b})
