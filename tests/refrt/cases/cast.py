"""Cast and CastLike between every pair of float32/64, float16, bfloat16, int8/16/32/64,
uint8/16/32/64 and bool, with values in range of the target (out-of-range float -> int is
implementation-defined in numpy and ONNX Runtime). numpy (+ ml_dtypes for bfloat16) is the oracle."""

import math

import ml_dtypes

BF16 = ml_dtypes.bfloat16
TYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
         "uint8", "uint16", "uint32", "uint64", "bool")


def build(api):
    np, node, TP = api.np, api.node, api.TensorProto

    def dt(name):
        return BF16 if name == "bfloat16" else np.dtype(name).type

    def source(name):
        """Values every target can hold (incl. fractions and negatives where the source has them)."""
        if name == "bool":
            return np.array([True, False, True, True, False, False])
        if name in ("float32", "float64", "float16", "bfloat16"):
            return np.array([0.0, 1.5, 2.75, 7.0, 100.25, -0.0], np.float32).astype(dt(name))
        return np.array([0, 1, 2, 7, 100, 127], name)

    for src in TYPES:
        x = source(src)
        for dst in TYPES:
            if src == dst:
                continue
            to = api.helper.np_dtype_to_tensor_dtype(np.dtype(dt(dst)))
            # numpy float->int truncates toward zero, as ONNX; float16/bfloat16 round to nearest even
            want = x.astype(np.float32).astype(dt(dst)) if src == "bfloat16" else x.astype(dt(dst))
            opset = 22 if "bfloat16" in (src, dst) else 18
            api.case(f"cast_{src}_to_{dst}", [node("Cast", ["x"], ["y"], to=to)], {"x": x}, {"y": want}, opset=opset)
    # signs, truncation toward zero and narrowing
    f = np.array([-2.75, -1.5, -0.5, 0.5, 1.99, -100.9, 127.9], np.float32)
    for dst in ("int8", "int16", "int32", "int64"):
        api.case(f"cast_negative_float32_to_{dst}_truncates", [node("Cast", ["x"], ["y"], to=api.helper
                 .np_dtype_to_tensor_dtype(np.dtype(dst)))], {"x": f}, {"y": f.astype(dst)})
    i = np.array([-129, 128, 255, 256, -1, 70000, -(2**40)], np.int64)
    for dst in ("int8", "uint8", "int16", "uint16", "uint32"):
        api.case(f"cast_int64_to_{dst}_wraps", [node("Cast", ["x"], ["y"], to=api.helper
                 .np_dtype_to_tensor_dtype(np.dtype(dst)))], {"x": i}, {"y": i.astype(dst)})
    # rounding to the 16-bit floats: nearest even, overflow to inf, NaN kept
    d = np.array([1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65519.0, 65520.0, 1e-8, np.nan, -np.inf, 3.0e38], np.float32)
    with np.errstate(over="ignore"):
        api.case("cast_float32_to_float16_rounding", [node("Cast", ["x"], ["y"], to=TP.FLOAT16)], {"x": d},
                 {"y": d.astype(np.float16)})
        api.case("cast_float32_to_bfloat16_rounding", [node("Cast", ["x"], ["y"], to=TP.BFLOAT16)], {"x": d},
                 {"y": d.astype(BF16)}, opset=22)
    # float64 -> 16-bit floats rounds once (numpy): via float32 would round twice and land on the even side
    d = np.array([1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11 - 2.0**-40, 1 + 2.0**-8 + 2.0**-45, -(1 + 2.0**-8 + 2.0**-45),
                  1e-300, 65519.99], np.float64)
    api.case("cast_float64_to_float16_rounds_once", [node("Cast", ["x"], ["y"], to=TP.FLOAT16)], {"x": d},
             {"y": d.astype(np.float16)}, ort_differs="it rounds float64 -> float32 -> float16 (twice)")
    def bf16_round_once(v):  # ml_dtypes itself goes through float32, so round the 8-bit significand here
        m, e = math.frexp(v)
        return math.ldexp(round(m * 256), e - 8)  # round(): ties to even; m * 256 is exact

    want = np.array([bf16_round_once(v) for v in d]).astype(BF16)
    api.case("cast_float64_to_bfloat16_rounds_once", [node("Cast", ["x"], ["y"], to=TP.BFLOAT16)], {"x": d},
             {"y": want}, opset=22)
    x = api.rand(0, 4)
    api.case("cast_empty", [node("Cast", ["x"], ["y"], to=TP.INT32)], {"x": x}, {"y": x.astype(np.int32)})
    x = np.array(3.7, np.float64)
    api.case("cast_scalar_f64_to_int64", [node("Cast", ["x"], ["y"], to=TP.INT64)], {"x": x}, {"y": x.astype(np.int64)})
    x = api.rand(100003, low=-100, high=100)
    api.case("cast_large_100k_f32_to_f16", [node("Cast", ["x"], ["y"], to=TP.FLOAT16)], {"x": x},
             {"y": x.astype(np.float16)})
    # the vectorised half <-> float32 path (8 lanes at a time, then a tail): the rounding row's specials (ties, overflow,
    # underflow, NaN, -inf) in every lane position, and large tensors split over the pool, both ways
    rng = np.random.default_rng(47)  # its own generator: the rows above keep their values
    d = np.array([1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65519.0, 65520.0, 1e-8, np.nan, -np.inf, 3.0e38, -2.0**-24,
                  1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8], np.float32)
    d = np.concatenate([np.roll(d, k) for k in range(8)])
    with np.errstate(over="ignore"):
        for name, proto, target in (("float16", TP.FLOAT16, np.float16), ("bfloat16", TP.BFLOAT16, BF16)):
            api.case(f"cast_float32_to_{name}_rounding_every_lane", [node("Cast", ["x"], ["y"], to=proto)], {"x": d},
                     {"y": d.astype(target)}, opset=22)
            x = (rng.standard_normal((3, 100003)) * 300).astype(np.float32)
            api.case(f"cast_large_float32_to_{name}", [node("Cast", ["x"], ["y"], to=proto)], {"x": x},
                     {"y": x.astype(target)}, opset=22)
            h = x.astype(target)
            api.case(f"cast_large_{name}_to_float32", [node("Cast", ["x"], ["y"], to=TP.FLOAT)], {"x": h},
                     {"y": h.astype(np.float32)}, opset=22)
    x = np.array([1.5, -2.0], np.float32)
    api.case("cast_opset7", [node("Cast", ["x"], ["y"], to=TP.INT32)], {"x": x}, {"y": x.astype(np.int32)}, opset=7)
    # CastLike: the target type is input 1's dtype
    for src, dst in (("float32", "int64"), ("int32", "float16"), ("float64", "bool"), ("uint8", "float32"),
                     ("float16", "float64"), ("bool", "int8"), ("float32", "bfloat16")):
        x = source(src)
        like = np.zeros((1,), dt(dst))
        want = x.astype(dt(dst))
        api.case(f"castlike_{src}_to_{dst}", [node("CastLike", ["x", "like"], ["y"])], {"x": x, "like": like},
                 {"y": want}, opset=22 if "bfloat16" in (src, dst) else 15)
