"""Indexing: Gather, GatherElements, GatherND, ScatterND, ScatterElements (with reductions), NonZero, OneHot.
The oracles are plain numpy loops written from the ONNX spec text; every op sweeps all raw dtypes."""
import importlib.util
import itertools
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_dtypes", os.path.join(os.path.dirname(__file__), "_dtypes.py"))
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)

REDUCE = {
    "add": lambda a, b: np_or(a, b) if a.dtype == bool else a + b,
    "mul": lambda a, b: (a & b) if a.dtype == bool else a * b,
    "max": lambda a, b: np_or(a, b) if a.dtype == bool else max_(a, b),
    "min": lambda a, b: (a & b) if a.dtype == bool else min_(a, b),
    "none": lambda a, b: b,
}


def np_or(a, b):
    return a | b


def max_(a, b):
    import numpy as np
    return np.maximum(a, b)


def min_(a, b):
    import numpy as np
    return np.minimum(a, b)


def gather_elements(np, x, idx, axis):
    out = np.empty(idx.shape, x.dtype)
    for at in itertools.product(*map(range, idx.shape)):
        src = list(at)
        src[axis] = idx[at] % x.shape[axis]
        out[at] = x[tuple(src)]
    return out


def gather_nd(np, x, idx, b=0):
    m = idx.shape[-1]
    out = np.empty(idx.shape[:-1] + x.shape[b + m:], x.dtype)
    for at in itertools.product(*map(range, idx.shape[:-1])):
        key = tuple(at[:b]) + tuple(int(v) % x.shape[b + k] for k, v in enumerate(idx[at]))
        out[at] = x[key]
    return out


def scatter_nd(np, x, idx, upd, reduction="none"):
    out = x.copy()
    with np.errstate(over="ignore"):
        for at in itertools.product(*map(range, idx.shape[:-1])):
            key = tuple(int(v) % x.shape[k] for k, v in enumerate(idx[at]))
            out[key] = REDUCE[reduction](out[key], upd[at])
    return out


def scatter_elements(np, x, idx, upd, axis, reduction="none"):
    out = x.copy()
    with np.errstate(over="ignore"):
        for at in itertools.product(*map(range, idx.shape)):
            dst = list(at)
            dst[axis] = idx[at] % x.shape[axis]
            out[tuple(dst)] = REDUCE[reduction](out[tuple(dst)], upd[at])
    return out


def one_hot(np, idx, depth, values, axis):
    out = np.empty(idx.shape + (depth,), values.dtype)
    out[...] = values[0]
    for at in itertools.product(*map(range, idx.shape)):
        v = int(idx[at])
        if -depth <= v < depth:
            out[at + (v % depth,)] = values[1]
    return np.moveaxis(out, -1, axis if axis >= 0 else idx.ndim + 1 + axis)


def build(api):
    np, case, node, rng = api.np, api.case, api.node, api.RNG
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731

    for dt in D.ALL_DTYPES:
        n = D.dtype_name(dt)
        x = D.sample(rng, dt, 3, 4, 5)
        idx = i64([[2, -1], [0, 1]])
        case(f"gather_{n}", [node("Gather", ["x", "i"], ["y"], axis=1)], {"x": x, "i": idx}, {"y": np.take(x, idx, axis=1)})
        ie = rng.integers(-5, 5, size=(3, 2, 5)).astype(np.int64)
        case(f"gather_elements_{n}", [node("GatherElements", ["x", "i"], ["y"], axis=2)], {"x": x, "i": ie},
             {"y": gather_elements(np, x, ie, 2)})
        ind = i64([[[1, -1]], [[0, 2]]])
        case(f"gather_nd_{n}", [node("GatherND", ["x", "i"], ["y"])], {"x": x, "i": ind}, {"y": gather_nd(np, x, ind)})
        ind = i64([[2, 0], [-3, 3], [1, 1]])
        upd = D.sample(rng, dt, 3, 5)
        reductions = ["none", "add", "mul", "max", "min"]
        for r in reductions:
            d = D.sample(rng, dt, 3, 4, 5, low=-3, high=4) if r == "mul" else x
            u = D.sample(rng, dt, 3, 5, low=-3, high=4) if r == "mul" else upd
            dup = ind if r == "none" else i64([[2, 0], [-1, 0], [1, 1]])  # duplicates only with a reduction
            kw = {} if r == "none" else {"reduction": r}
            case(f"scatter_nd_{r}_{n}", [node("ScatterND", ["x", "i", "u"], ["y"], **kw)], {"x": d, "i": dup, "u": u},
                 {"y": scatter_nd(np, d, dup, u, r)})
            ie = rng.integers(-4, 4, size=(2, 3, 5)).astype(np.int64)
            if r == "none":  # distinct targets along the axis per position
                ie = np.stack([rng.permutation(4)[:3] for _ in range(10)]).reshape(2, 5, 3).transpose(0, 2, 1).astype(np.int64)
            ue = D.sample(rng, dt, 2, 3, 5, low=-3, high=4)
            case(f"scatter_elements_{r}_{n}", [node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, **kw)],
                 {"x": d, "i": ie, "u": ue}, {"y": scatter_elements(np, d, ie, ue, 1, r)})
        z = D.sample(rng, dt, 3, 4, low=-1, high=2)
        case(f"nonzero_{n}", [node("NonZero", ["x"], ["y"])], {"x": z}, {"y": np.array(np.nonzero(z), np.int64)})
        vals = D.sample(rng, dt, 2)
        oi = i64([[0, 3, -1], [5, -5, 2]])
        if dt != D.BF16:  # OneHot's value types (opset 11..23) leave out bfloat16
            case(f"one_hot_values_{n}", [node("OneHot", ["i", "d", "v"], ["y"], axis=1)],
                 {"i": oi, "d": np.array(4, np.int64), "v": vals}, {"y": one_hot(np, oi, 4, vals, 1)})
        if dt != np.bool_ and dt != D.BF16 and dt != np.float16:
            ii = np.array([[0, 3, 1], [2, 1, 4]], dt)
            case(f"one_hot_indices_{n}", [node("OneHot", ["i", "d", "v"], ["y"])],
                 {"i": ii, "d": np.array(5, dt), "v": np.array([0.0, 1.0], np.float32)},
                 {"y": one_hot(np, ii, 5, np.array([0, 1], np.float32), -1)})

    # Gather: empty indices, empty data, scalar index, large, opset 7 and 11 (negative indices).
    x = api.rand(4, 6)
    case("gather_empty_indices", [node("Gather", ["x", "i"], ["y"])], {"x": x, "i": np.zeros((0, 2), np.int64)},
         {"y": np.zeros((0, 2, 6), np.float32)})
    e = api.rand(0, 6)
    case("gather_empty_data_axis1", [node("Gather", ["x", "i"], ["y"], axis=1)], {"x": e, "i": i64([5, 0])},
         {"y": e[:, [5, 0]]})
    case("gather_opset7", [node("Gather", ["x", "i"], ["y"], axis=1)], {"x": x, "i": i64([[1, 5]])},
         {"y": np.take(x, [[1, 5]], axis=1)}, opset=7)
    big = api.rand(1000, 64)
    bi = rng.integers(-1000, 1000, size=(300,)).astype(np.int64)
    case("gather_large", [node("Gather", ["x", "i"], ["y"])], {"x": big, "i": bi}, {"y": np.take(big, bi, axis=0)})
    # GatherElements: axis 0, negative axis, smaller-than-data indices, opset 11.
    x = api.rand(4, 3)
    ie = i64([[3, 0, -1], [1, 2, 0]])
    case("gather_elements_axis0", [node("GatherElements", ["x", "i"], ["y"])], {"x": x, "i": ie},
         {"y": gather_elements(np, x, ie, 0)}, opset=11)
    ie = i64([[2, 0], [1, 1]])
    case("gather_elements_neg_axis_smaller", [node("GatherElements", ["x", "i"], ["y"], axis=-1)], {"x": x, "i": ie},
         {"y": gather_elements(np, x, ie, 1)})
    case("gather_elements_empty", [node("GatherElements", ["x", "i"], ["y"])], {"x": x, "i": np.zeros((0, 3), np.int64)},
         {"y": np.zeros((0, 3), np.float32)})
    # GatherND: full index (scalars out), batch_dims 1 and 2, opset 11/12, int32 indices.
    x = api.rand(2, 3, 4)
    ind = i64([[0, 2, 3], [1, -1, 0]])
    case("gather_nd_full_index", [node("GatherND", ["x", "i"], ["y"])], {"x": x, "i": ind}, {"y": gather_nd(np, x, ind)},
         opset=11)
    ind = i64([[[2], [0]], [[1], [1]]])
    case("gather_nd_batch1", [node("GatherND", ["x", "i"], ["y"], batch_dims=1)], {"x": x, "i": ind},
         {"y": gather_nd(np, x, ind, 1)}, opset=12)
    ind = i64([[[3], [0], [1]], [[2], [2], [-1]]])
    case("gather_nd_batch2", [node("GatherND", ["x", "i"], ["y"], batch_dims=2)], {"x": x, "i": ind},
         {"y": gather_nd(np, x, ind, 2)})
    x = api.rand(5, 40, 30)
    ind = np.stack([rng.integers(0, 5, 200), rng.integers(-40, 40, 200)], axis=1).astype(np.int64)
    case("gather_nd_large", [node("GatherND", ["x", "i"], ["y"])], {"x": x, "i": ind}, {"y": gather_nd(np, x, ind)})
    # ScatterND: whole-slice updates, scalar updates into 1-D, opset 11 and 16.
    x = api.rand(4, 3)
    ind, u = i64([[3], [0]]), api.rand(2, 3)
    case("scatter_nd_rows_opset11", [node("ScatterND", ["x", "i", "u"], ["y"])], {"x": x, "i": ind, "u": u},
         {"y": scatter_nd(np, x, ind, u)}, opset=11)
    x = api.rand(8)
    ind, u = i64([[4], [3], [1], [7]]), api.rand(4)
    case("scatter_nd_1d", [node("ScatterND", ["x", "i", "u"], ["y"])], {"x": x, "i": ind, "u": u},
         {"y": scatter_nd(np, x, ind, u)})
    ind2 = i64([[4], [4], [1], [4]])
    case("scatter_nd_add_duplicates_opset16", [node("ScatterND", ["x", "i", "u"], ["y"], reduction="add")],
         {"x": x, "i": ind2, "u": u}, {"y": scatter_nd(np, x, ind2, u, "add")}, opset=16)
    case("scatter_nd_empty_updates", [node("ScatterND", ["x", "i", "u"], ["y"])],
         {"x": x, "i": np.zeros((0, 1), np.int64), "u": np.zeros((0,), np.float32)}, {"y": x})
    # ScatterElements: opset 11, Scatter 9 (its old name), negative axis, max with duplicates.
    x = api.rand(3, 5)
    ie, ue = i64([[1, 0, 2], [0, 2, 1]]), api.rand(2, 3)
    case("scatter_elements_opset11", [node("ScatterElements", ["x", "i", "u"], ["y"])], {"x": x, "i": ie, "u": ue},
         {"y": scatter_elements(np, x, ie, ue, 0)}, opset=11)
    case("scatter_opset9", [node("Scatter", ["x", "i", "u"], ["y"])], {"x": x, "i": ie, "u": ue},
         {"y": scatter_elements(np, x, ie, ue, 0)}, opset=9)
    ie = i64([[4, 4, -1], [0, 0, 0]])
    case("scatter_elements_max_dupes_neg_axis", [node("ScatterElements", ["x", "i", "u"], ["y"], axis=-1, reduction="max")],
         {"x": x, "i": ie, "u": ue}, {"y": scatter_elements(np, x, ie, ue, 1, "max")})
    # NonZero: all zero, empty, 1-D, large, -0.0 counts as zero.
    z = np.zeros((3, 2), np.float32)
    case("nonzero_all_zero", [node("NonZero", ["x"], ["y"])], {"x": z}, {"y": np.zeros((2, 0), np.int64)})
    case("nonzero_empty", [node("NonZero", ["x"], ["y"])], {"x": np.zeros((0, 4), np.float32)}, {"y": np.zeros((2, 0), np.int64)})
    v = np.array([0.0, -0.0, 1.5, np.nan, -2.0], np.float32)
    case("nonzero_negative_zero_and_nan", [node("NonZero", ["x"], ["y"])], {"x": v}, {"y": np.array(np.nonzero(v), np.int64)})
    v16 = v.astype(np.float16)
    case("nonzero_f16_negative_zero", [node("NonZero", ["x"], ["y"])], {"x": v16}, {"y": np.array(np.nonzero(v16), np.int64)})
    big = (api.rand(40, 50, 30) > 0.3)
    case("nonzero_large_bool", [node("NonZero", ["x"], ["y"])], {"x": big}, {"y": np.array(np.nonzero(big), np.int64)})
    case("nonzero_opset9", [node("NonZero", ["x"], ["y"])], {"x": big[0]}, {"y": np.array(np.nonzero(big[0]), np.int64)},
         opset=9)
    # OneHot: axis 0, scalar indices, float depth (truncated), out-of-range indices, opset 9.
    oi = i64([1, -2, 7, 0])
    vals = np.array([-1, 3], np.int32)
    case("one_hot_axis0", [node("OneHot", ["i", "d", "v"], ["y"], axis=0)], {"i": oi, "d": i64([3]), "v": vals},
         {"y": one_hot(np, oi, 3, vals, 0)})
    case("one_hot_single_index", [node("OneHot", ["i", "d", "v"], ["y"])],
         {"i": i64([2]), "d": np.array(3, np.int64), "v": vals}, {"y": one_hot(np, i64([2]), 3, vals, -1)})
    fi = np.array([[0.0, 2.7], [-1.2, 1.9]], np.float32)
    case("one_hot_float_depth_and_indices", [node("OneHot", ["i", "d", "v"], ["y"])],
         {"i": fi, "d": np.array(3.9, np.float32), "v": np.array([0, 1], np.int64)},
         {"y": one_hot(np, np.trunc(fi).astype(np.int64), 3, np.array([0, 1], np.int64), -1)})
    case("one_hot_opset9", [node("OneHot", ["i", "d", "v"], ["y"], axis=-2)],
         {"i": i64([[0, 2], [1, 1]]), "d": np.array(3, np.int64), "v": np.array([0.5, 2.0], np.float32)},
         {"y": one_hot(np, i64([[0, 2], [1, 1]]), 3, np.array([0.5, 2.0], np.float32), 1)}, opset=9)
