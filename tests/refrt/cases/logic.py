"""Comparisons (Equal Less LessOrEqual Greater GreaterOrEqual), logic (And Or Xor Not) and Where, over
dtypes and broadcast shapes; NaN compares false everywhere. numpy is the oracle."""

import ml_dtypes

BF16 = ml_dtypes.bfloat16
NUMERIC = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64")


def build(api):
    np, node = api.np, api.node

    def case(name, nodes, inputs, outputs, opset=18, **kw):
        if opset == 18 and any(a.dtype == BF16 for a in inputs.values()):
            opset = 22
        api.case(name, nodes, inputs, outputs, opset=opset, **kw)

    def small(shape, name):  # few distinct values, so that ties are common
        v = api.RNG.integers(0, 4, size=shape)
        return v.astype(BF16 if name == "bfloat16" else name)

    cmp = {"Equal": np.equal, "Less": np.less, "LessOrEqual": np.less_equal, "Greater": np.greater,
           "GreaterOrEqual": np.greater_equal}
    for op, f in cmp.items():
        for name in NUMERIC:
            a, b = small((3, 1, 4), name), small((2, 4), name)
            want = f(a.astype(np.float64), b.astype(np.float64))
            case(f"{op.lower()}_{name}_broadcast", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": want})
        a = np.array([np.nan, 1.0, np.inf, -np.inf, np.nan], np.float32)
        b = np.array([np.nan, np.nan, np.inf, 0.0, 1.0], np.float32)
        case(f"{op.lower()}_nan_is_false", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": f(a, b)})
        a, b = api.rand(0, 2), api.rand(2)
        case(f"{op.lower()}_empty", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": f(a, b)})
    a, b = api.rand(3), api.rand(3)
    case("less_opset7", [node("Less", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a < b}, opset=7)
    case("greaterorequal_opset12", [node("GreaterOrEqual", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a >= b},
         opset=12)
    a, b = np.array([True, False, True]), np.array([[True], [False]])
    case("equal_bool_broadcast", [node("Equal", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a == b})

    logic = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}
    for op, f in logic.items():
        a, b = api.RNG.integers(0, 2, (2, 3, 1)).astype(bool), api.RNG.integers(0, 2, (4,)).astype(bool)
        case(f"{op.lower()}_broadcast", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": f(a, b)})
        a, b = np.array(True), np.array([True, False])
        case(f"{op.lower()}_scalar", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": f(a, b)})
        a = api.RNG.integers(0, 2, 100003).astype(bool)
        case(f"{op.lower()}_large_100k", [node(op, ["a", "b"], ["y"])], {"a": a, "b": a[::-1].copy()},
             {"y": f(a, a[::-1])}, opset=7)
    a = api.RNG.integers(0, 2, (3, 5)).astype(bool)
    case("not_bool", [node("Not", ["x"], ["y"])], {"x": a}, {"y": ~a})
    case("not_empty", [node("Not", ["x"], ["y"])], {"x": a[:0]}, {"y": ~a[:0]})
    case("not_opset7", [node("Not", ["x"], ["y"])], {"x": a}, {"y": ~a}, opset=7)

    for name in NUMERIC + ("bool",):
        c = api.RNG.integers(0, 2, (2, 1, 3)).astype(bool)
        if name == "bool":
            x, y = np.array([True, False, True]), np.array([[False], [True]])
        else:
            x, y = small((4, 3), name), small((3,), name)
        case(f"where_{name}", [node("Where", ["c", "x", "y"], ["out"])], {"c": c, "x": x, "y": y},
             {"out": np.where(c, x, y)})
    c = np.array(True)
    x, y = api.rand(0, 3), api.rand(3)
    case("where_empty", [node("Where", ["c", "x", "y"], ["out"])], {"c": c, "x": x, "y": y},
         {"out": np.where(c, x, y)})
    case("where_opset9", [node("Where", ["c", "x", "y"], ["out"])], {"c": np.array([True, False]), "x": y[:2],
                                                                       "y": y[1:]},
         {"out": np.where([True, False], y[:2], y[1:])}, opset=9)

    # Where split into output ranges over the pool, the ranges cutting runs: 34965 floats with the
    # condition and Y broadcast, and int64 values from an outer broadcast with a scalar Y.
    own = np.random.default_rng(31)
    c, x, y = own.integers(0, 2, (5, 1, 999)).astype(bool), own.uniform(-1, 1, (5, 7, 999)).astype(np.float32), \
        own.uniform(-1, 1, (7, 1)).astype(np.float32)
    case("where_f32_pool_broadcast", [node("Where", ["c", "x", "y"], ["out"])], {"c": c, "x": x, "y": y},
         {"out": np.where(c, x, y)})
    c, x, y = own.integers(0, 2, (40, 1, 30)).astype(bool), own.integers(-99, 99, (1, 50, 30)), np.array(7, np.int64)
    case("where_int64_pool_outer", [node("Where", ["c", "x", "y"], ["out"])], {"c": c, "x": x, "y": y},
         {"out": np.where(c, x, y)})
    # One operand a scalar in each run (the branch-free selects): Where(keep, scores, -inf) and Where(drop, fill,
    # scores) with a mask broadcast over heads, for every element size (1, 2, 4 and 8 bytes). Own generator.
    mine = np.random.default_rng(47)
    keep = mine.integers(0, 2, (1, 1, 9, 37)).astype(bool)
    for dt in (np.int8, np.float16, np.float32, np.float64):
        scores = mine.uniform(-9, 9, (2, 3, 9, 37)).astype(dt)
        fill = np.array(-np.inf if np.dtype(dt).kind == "f" else -128, dt)
        tag = np.dtype(dt).name
        case(f"where_mask_scalar_fill_{tag}", [node("Where", ["c", "x", "y"], ["out"])], {"c": keep, "x": scores,
                                                                                           "y": fill},
             {"out": np.where(keep, scores, fill)})
        case(f"where_scalar_fill_first_{tag}", [node("Where", ["c", "x", "y"], ["out"])], {"c": ~keep, "x": fill,
                                                                                           "y": scores},
             {"out": np.where(~keep, fill, scores)})
