"""Unique, Compress, ReverseSequence and Det. Oracles: numpy.unique / numpy.compress / slicing loops /
numpy.linalg.det (float64)."""
import importlib.util
import os

import numpy as np

_spec = importlib.util.spec_from_file_location("refrt_cases_dtypes", os.path.join(os.path.dirname(__file__), "_dtypes.py"))
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)

RNG = np.random.default_rng(1124)  # own stream: the shared one feeds the other tables


def unique_first_occurrence(x, axis=None):
    """np.unique's outputs reordered by first occurrence (Unique with sorted=0)."""
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    order = np.argsort(idx)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    y = np.take(x, idx[order], axis=0 if axis is None else axis) if axis is not None else x.reshape(-1)[idx[order]]
    return y, idx[order], rank[inv.reshape(-1)], cnt[order]


def reverse_sequence(x, lens, batch_axis):
    y = x.copy()
    for b, n in enumerate(lens):
        if batch_axis == 0:
            y[b, :n] = x[b, :n][::-1]
        else:
            y[:n, b] = x[:n, b][::-1]
    return y


def build(api):
    case, node = api.case, api.node
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    outs = ["y", "idx", "inv", "cnt"]

    x = np.array([2, 1, 1, 3, 4, 3, -1, 2], np.int64)
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    case("unique_sorted_int64", [node("Unique", ["x"], outs)], {"x": x},
         {"y": y, "idx": idx.astype(np.int64), "inv": inv.astype(np.int64), "cnt": cnt.astype(np.int64)})
    y, idx, inv, cnt = unique_first_occurrence(x)
    case("unique_unsorted_int64", [node("Unique", ["x"], outs, sorted=0)], {"x": x},
         {"y": y, "idx": idx.astype(np.int64), "inv": inv.astype(np.int64), "cnt": cnt.astype(np.int64)})
    xf = np.array([[1.5, 0.0, -2.0], [0.5, 1.5, -0.0], [0.0, 0.5, 3.0]], np.float32)
    y, idx, inv, cnt = np.unique(xf, return_index=True, return_inverse=True, return_counts=True)
    case("unique_sorted_float32_flattens_and_merges_signed_zero", [node("Unique", ["x"], outs)], {"x": xf},
         {"y": y, "idx": idx.astype(np.int64), "inv": inv.reshape(-1).astype(np.int64), "cnt": cnt.astype(np.int64)})
    xa = np.array([[1, 0, 1], [2, 3, 2], [1, 0, 1], [0, 9, 0]], np.int32)
    for axis in (0, 1, -1):
        y, idx, inv, cnt = np.unique(xa, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        case(f"unique_sorted_axis{axis}_int32".replace("-", "neg"), [node("Unique", ["x"], outs, axis=axis)], {"x": xa},
             {"y": y, "idx": idx.astype(np.int64), "inv": inv.reshape(-1).astype(np.int64), "cnt": cnt.astype(np.int64)})
    y, idx, inv, cnt = unique_first_occurrence(xa, axis=1)
    case("unique_unsorted_axis1_int32", [node("Unique", ["x"], outs, axis=1, sorted=0)], {"x": xa},
         {"y": y, "idx": idx.astype(np.int64), "inv": inv.astype(np.int64), "cnt": cnt.astype(np.int64)})
    case("unique_only_y_empty_input", [node("Unique", ["x"], ["y"])], {"x": np.zeros((0,), np.float32)},
         {"y": np.zeros((0,), np.float32)})

    for dt in [d for d in D.ALL_DTYPES if d != D.BF16]:  # bfloat16 joined both ops after opset 23
        n = D.dtype_name(dt)
        x = D.sample(RNG, dt, 3, 5)
        cond = np.array([True, False, True, True], bool)
        case(f"compress_axis1_short_condition_{n}", [node("Compress", ["x", "c"], ["y"], axis=1)], {"x": x, "c": cond},
             {"y": np.compress(cond, x, axis=1)})
        x = D.sample(RNG, dt, 4, 3, 2)
        lens = i64([4, 0, 2])
        case(f"reverse_sequence_time_major_{n}", [node("ReverseSequence", ["x", "l"], ["y"])], {"x": x, "l": lens},
             {"y": reverse_sequence(x, lens, 1)})
    x = RNG.uniform(-1, 1, (2, 3, 2)).astype(np.float32)
    cond = np.array([False, True, False, True, True, False, True], bool)
    case("compress_no_axis_flattens", [node("Compress", ["x", "c"], ["y"])], {"x": x, "c": cond},
         {"y": np.compress(cond, x)})
    case("compress_negative_axis_all_false", [node("Compress", ["x", "c"], ["y"], axis=-1)],
         {"x": x, "c": np.array([False, False])}, {"y": np.compress([False, False], x, axis=-1)})
    x = RNG.integers(0, 100, (3, 5, 2)).astype(np.int64)
    lens = i64([5, 1, 3])
    case("reverse_sequence_batch_major", [node("ReverseSequence", ["x", "l"], ["y"], batch_axis=0, time_axis=1)],
         {"x": x, "l": lens}, {"y": reverse_sequence(x, lens, 0)})

    for shape in ((3, 3), (2, 4, 4), (1, 1), (2, 0, 0)):
        x = RNG.uniform(-2, 2, shape)
        for dt, tol in ((np.float32, (1e-5, 1e-5)), (np.float64, (1e-12, 1e-12))):
            xd = x.astype(dt)
            want = np.linalg.det(xd.astype(np.float64)).astype(dt) if x.size else np.ones(shape[:-2], dt)
            case(f"det_{'x'.join(map(str, shape))}_{np.dtype(dt).name}", [node("Det", ["x"], ["y"])],
                 {"x": xd}, {"y": np.asarray(want, dt)}, tol=tol)
    singular = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float64)
    case("det_singular_is_zero", [node("Det", ["x"], ["y"])], {"x": singular}, {"y": np.array(0.0)}, tol=(1e-12, 1e-12))
