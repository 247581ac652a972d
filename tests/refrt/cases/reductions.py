"""Reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare) with axes as attribute
(before opset 18; ReduceSum 13) or input, keepdims, noop_with_empty_axes and empty-set identities;
ArgMax/ArgMin with ties and select_last_index; CumSum (exclusive, reverse); TopK (ties: lower index
first). numpy is the oracle (float64 accumulation for float inputs)."""

import ml_dtypes

BF16 = ml_dtypes.bfloat16
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12), "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}


def build(api):
    np, node = api.np, api.node

    def case(name, nodes, inputs, outputs, opset=18, **kw):
        if opset < 22 and any(a.dtype == BF16 for a in inputs.values()):
            opset = 22
        api.case(name, nodes, inputs, outputs, opset=opset, **kw)

    def logsumexp(x, axis, keepdims):
        m = np.max(x, axis=axis, keepdims=True) if x.size else np.float64(-np.inf)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):
            r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
        return r if keepdims else np.squeeze(r, axis=axis if axis is not None else tuple(range(x.ndim)))

    with_empty = {"initial": None}
    reducers = {
        "ReduceSum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
        "ReduceMean": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
        "ReduceMax": lambda x, a, k: np.max(x, axis=a, keepdims=k, initial=-np.inf),
        "ReduceMin": lambda x, a, k: np.min(x, axis=a, keepdims=k, initial=np.inf),
        "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
        "ReduceL1": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
        "ReduceL2": lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
        "ReduceLogSum": lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)),
        "ReduceLogSumExp": logsumexp,
        "ReduceSumSquare": lambda x, a, k: np.sum(x * x, axis=a, keepdims=k),
    }
    del with_empty

    def reduce_case(name, op, x, axes, keepdims, opset, want, noop=None, tol=None):
        attrs = {} if keepdims is None else {"keepdims": keepdims}
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
        axes_as_input = opset >= (13 if op == "ReduceSum" else 18)
        inputs, ins = {"x": x}, ["x"]
        if axes is not None and axes_as_input:
            inputs["axes"] = np.array(axes, np.int64)
            ins.append("axes")
        elif axes is not None:
            attrs["axes"] = list(axes)
        case(name, [node(op, ins, ["y"], **attrs)], inputs, {"y": want}, opset=opset, tol=tol)

    x = api.rand(3, 4, 5, low=0.1, high=2.0, dtype=np.float64)
    for op, f in reducers.items():
        lo = op.lower()
        for opset in (11, 13, 18):
            for axes, keep in (((1,), 1), ((0, 2), 0), ((-1,), 1), (None, 0)):
                want = f(x, None if axes is None else tuple(axes), bool(keep)).astype(np.float32)
                tag = "all" if axes is None else "_".join(str(a).replace("-", "m") for a in axes)
                reduce_case(f"{lo}_axes{tag}_keep{keep}_opset{opset}", op, x.astype(np.float32), axes, keep, opset,
                            want, tol=TOL["float32"])
        reduce_case(f"{lo}_default_keepdims_opset7", op, x.astype(np.float32), (2,), None, 7,
                    f(x, (2,), True).astype(np.float32), tol=TOL["float32"])
        reduce_case(f"{lo}_f64", op, x, (1,), 0, 18, f(x, (1,), False), tol=TOL["float64"])
        for name in ("float16", "bfloat16"):
            xs = x.astype(np.float32).astype(BF16 if name == "bfloat16" else name)
            reduce_case(f"{lo}_{name}", op, xs, (0,), 1, 18, f(xs.astype(np.float32), (0,), True).astype(xs.dtype),
                        tol=TOL[name])
        # noop_with_empty_axes (axes-input versions): empty axes return the input, else reduce all
        # (no axis reduced: each element is a one-element set, so ReduceL1 gives |x|, ReduceLogSum log(x))
        reduce_case(f"{lo}_empty_axes_noop", op, x.astype(np.float32), [], 1, 18, f(x, (), True).astype(np.float32),
                    noop=1, tol=TOL["float32"])
        reduce_case(f"{lo}_empty_axes_reduces_all", op, x.astype(np.float32), [], 0, 18,
                    f(x, None, False).astype(np.float32), noop=0, tol=TOL["float32"])
        # reducing an empty set gives the identity
        e = np.zeros((2, 0, 3), np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            want = f(e.astype(np.float64), (1,), True).astype(np.float32)
        if op != "ReduceMean":
            reduce_case(f"{lo}_empty_set_identity", op, e, (1,), 1, 18, want)
        reduce_case(f"{lo}_empty_input_keeps_empty", op, e, (2,), 0, 18, np.zeros((2, 0), np.float32))
        # one large (~100k) reduction
        big = api.rand(257, 401, low=0.5, high=1.0, dtype=np.float64)
        want = f(big if op != "ReduceProd" else big[:, :20], (1,), False)
        reduce_case(f"{lo}_large_100k", op, (big if op != "ReduceProd" else big[:, :20]).astype(np.float32), (1,), 0,
                    18, want.astype(np.float32), tol=(1e-4, 1e-5))
    # integer reductions (exact; Sum/Prod wrap in the input type)
    for name in ("int32", "int64", "uint32", "uint64", "int8", "uint8"):
        xi = api.RNG.integers(0, 5, (3, 4)).astype(name)
        ops = {"ReduceSum": np.sum, "ReduceProd": np.prod, "ReduceMax": np.max, "ReduceMin": np.min,
               "ReduceSumSquare": lambda v, axis, keepdims: np.sum(v * v, axis=axis, keepdims=keepdims),
               "ReduceL1": lambda v, axis, keepdims: np.sum(np.abs(v), axis=axis, keepdims=keepdims)}
        if name in ("int8", "uint8"):  # int8/uint8 are in the spec for Max/Min only
            ops = {k: ops[k] for k in ("ReduceMax", "ReduceMin")}
        for op, f in ops.items():
            want = f(xi, axis=1, keepdims=True).astype(name)
            reduce_case(f"{op.lower()}_{name}", op, xi, (1,), 1, 20, want)
    xi = np.array([[7, -3, 5], [-8, 2, 1]], np.int64)
    reduce_case("reducemean_int64_truncates", "ReduceMean", xi, (1,), 0, 18,
                np.trunc(xi.sum(axis=1) / 3).astype(np.int64))
    xi = np.array([[200, 100], [3, 4]], np.uint8)
    reduce_case("reducemax_uint8_high_values", "ReduceMax", xi, (0,), 0, 20, xi.max(axis=0))
    e = np.zeros((0, 3), np.int32)
    reduce_case("reducemax_int32_empty_set_is_lowest", "ReduceMax", e, (0,), 0, 18,
                np.full(3, np.iinfo(np.int32).min, np.int32))
    reduce_case("reducemin_int32_empty_set_is_highest", "ReduceMin", e, (0,), 0, 18,
                np.full(3, np.iinfo(np.int32).max, np.int32))
    b = np.array([[True, False], [True, True]])
    reduce_case("reducemax_bool", "ReduceMax", b, (1,), 0, 20, b.any(axis=1))
    reduce_case("reducemin_bool", "ReduceMin", b, (1,), 0, 20, b.all(axis=1))
    xn = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], np.float32)
    case("reducemax_propagates_nan", [node("ReduceMax", ["x", "axes"], ["y"], keepdims=0)],
         {"x": xn, "axes": np.array([1], np.int64)}, {"y": np.max(xn, axis=1)},
         ort_differs="its ReduceMax skips NaN; numpy and the ONNX reference propagate it")
    xs = np.array(2.5, np.float32)
    reduce_case("reducesum_scalar_all", "ReduceSum", xs, None, 1, 13, xs.copy())
    xl = np.array([[-np.inf, -np.inf], [1e30, 1e30], [np.inf, 0.0]], np.float64)
    reduce_case("reducelogsumexp_extremes", "ReduceLogSumExp", xl, (1,), 0, 18,
                np.array([-np.inf, 1e30 + np.log(2.0), np.inf]))

    # ---- ArgMax / ArgMin: first index of ties, last with select_last_index
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 2], [0, 0, 0, 0]], np.float32)
    for op, f in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        lo = op.lower()
        for axis in (0, 1, -1):
            case(f"{lo}_ties_axis{str(axis).replace('-', 'm')}", [node(op, ["x"], ["y"], axis=axis)], {"x": x},
                 {"y": np.expand_dims(f(x, axis=axis), axis)})
            last = x.shape[axis] - 1 - f(np.flip(x, axis=axis), axis=axis)
            case(f"{lo}_select_last_axis{str(axis).replace('-', 'm')}", [node(op, ["x"], ["y"], axis=axis, select_last_index=1)], {"x": x},
                 {"y": np.expand_dims(last, axis)})
        case(f"{lo}_no_keepdims", [node(op, ["x"], ["y"], axis=1, keepdims=0)], {"x": x}, {"y": f(x, axis=1)})
        case(f"{lo}_opset7_default_axis0", [node(op, ["x"], ["y"])], {"x": x},
             {"y": np.expand_dims(f(x, axis=0), 0)}, opset=7)
        for name in ("float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "uint64"):
            xs = api.RNG.integers(0, 6, (3, 5, 2)).astype(BF16 if name == "bfloat16" else name)
            case(f"{lo}_{name}", [node(op, ["x"], ["y"], axis=1)], {"x": xs},
                 {"y": np.expand_dims(f(xs.astype(np.float64), axis=1), 1)})
        xb = api.rand(101, 1000)
        case(f"{lo}_large_100k", [node(op, ["x"], ["y"], axis=-1, keepdims=0)], {"x": xb}, {"y": f(xb, axis=-1)})

    # ---- CumSum
    x = api.rand(3, 4, low=-2, high=2)
    for exclusive in (0, 1):
        for reverse in (0, 1):
            for axis in (0, 1, -1):
                v = np.flip(x, axis) if reverse else x
                c = np.cumsum(v.astype(np.float64), axis=axis)
                if exclusive:
                    c = c - v
                want = (np.flip(c, axis) if reverse else c).astype(np.float32)
                case(f"cumsum_axis{str(axis).replace('-', 'm')}_exclusive{exclusive}_reverse{reverse}",
                     [node("CumSum", ["x", "a"], ["y"], exclusive=exclusive, reverse=reverse)],
                     {"x": x, "a": np.array(axis, np.int32 if axis == 1 else np.int64)}, {"y": want})
    for name in ("int32", "int64", "uint32", "uint64", "float64"):
        xs = api.RNG.integers(0, 9, (2, 5)).astype(name)
        case(f"cumsum_{name}", [node("CumSum", ["x", "a"], ["y"])], {"x": xs, "a": np.array(1, np.int64)},
             {"y": np.cumsum(xs, axis=1).astype(name)})
    for name in ("float16", "bfloat16"):
        xs = api.rand(2, 6, low=-2, high=2).astype(BF16 if name == "bfloat16" else name)
        want = np.cumsum(xs.astype(np.float32), axis=1).astype(xs.dtype)
        case(f"cumsum_{name}", [node("CumSum", ["x", "a"], ["y"])], {"x": xs, "a": np.array(1, np.int64)},
             {"y": want}, tol=TOL[name])
    xe = api.rand(0, 3)
    case("cumsum_empty", [node("CumSum", ["x", "a"], ["y"])], {"x": xe, "a": np.array(0, np.int64)}, {"y": xe.copy()},
         opset=11)
    xb = api.rand(100003, low=-1, high=1, dtype=np.float64)
    case("cumsum_f64_large_100k", [node("CumSum", ["x", "a"], ["y"])], {"x": xb, "a": np.array(0, np.int64)},
         {"y": np.cumsum(xb)}, tol=(1e-9, 1e-9))

    # ---- TopK (ties: lower index first)
    def topk(x, k, axis, largest):
        key = -x if largest else x
        idx = np.argsort(key, axis=axis, kind="stable")
        idx = np.take(idx, np.arange(k), axis=axis)
        return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)

    x = np.array([[3, 1, 3, 2, 1, 3], [0, 5, 5, 4, 0, 5]], np.float32)
    for largest in (1, 0):
        for k in (0, 1, 3, 6):
            v, i = topk(x, k, 1, largest)
            case(f"topk_k{k}_largest{largest}_ties", [node("TopK", ["x", "k"], ["v", "i"], largest=largest)],
                 {"x": x, "k": np.array([k], np.int64)}, {"v": v, "i": i})
    v, i = topk(x, 1, 0, 1)
    case("topk_axis0", [node("TopK", ["x", "k"], ["v", "i"], axis=0)], {"x": x, "k": np.array([1], np.int64)},
         {"v": v, "i": i})
    v, i = topk(x, 2, 1, 1)
    case("topk_opset7_k_attribute", [node("TopK", ["x"], ["v", "i"], k=2)], {"x": x}, {"v": v, "i": i}, opset=7)
    case("topk_opset10_k_input", [node("TopK", ["x", "k"], ["v", "i"])], {"x": x, "k": np.array([2], np.int64)},
         {"v": v, "i": i}, opset=10)
    for name in ("float64", "float16", "int32", "int64", "uint8", "int8"):
        xs = api.RNG.integers(0, 7, (2, 3, 8)).astype(name)
        v, i = topk(xs.astype(np.float64), 4, -1, 1)
        case(f"topk_{name}", [node("TopK", ["x", "k"], ["v", "i"])], {"x": xs, "k": np.array([4], np.int64)},
             {"v": v.astype(name), "i": i})
    xn = np.array([[1.0, np.nan, 3.0, np.nan, 0.5], [2.0, 5.0, 5.0, 1.0, np.nan]], np.float32)
    for largest in (1, 0):  # NaN is the greatest value (numpy sort order)
        nan = np.isnan(xn)  # (no infinities in xn, so +-inf can stand for NaN in the sort key)
        key = np.where(nan, -np.inf, -xn) if largest else np.where(nan, np.inf, xn)
        idx = np.argsort(key, axis=1, kind="stable")[:, :3]
        case(f"topk_nan_largest{largest}", [node("TopK", ["x", "k"], ["v", "i"], largest=largest)],
             {"x": xn, "k": np.array([3], np.int64)},
             {"v": np.take_along_axis(xn, idx, 1), "i": idx.astype(np.int64)})
    for op, f in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        case(f"{op.lower()}_nan_wins", [node(op, ["x"], ["y"], axis=1, keepdims=0)], {"x": xn}, {"y": f(xn, axis=1)},
             ort_differs="its ArgMax/ArgMin skip NaN; numpy and torch return the first NaN")
    xb = api.rand(100, 1001)
    v, i = topk(xb, 10, 1, 1)
    case("topk_large_100k", [node("TopK", ["x", "k"], ["v", "i"])], {"x": xb, "k": np.array([10], np.int64)},
         {"v": v, "i": i})
