"""Writes refrt test cases in the ONNX backend-test layout, with numpy as the oracle.

    gen_backend_cases.py OUT_DIR

OUT_DIR/<case>/model.onnx, OUT_DIR/<case>/test_data_set_0/{input,output}_<i>.pb and, where the
default tolerance does not fit, OUT_DIR/<case>/tolerance.txt ("rtol atol"). Models are built with
onnx.helper and checked with onnx.checker; expected outputs are computed with numpy, written
independently of refrt. Every case is also run on onnxruntime when it can: a disagreement with
numpy means the oracle here is wrong, and generation fails.
"""

import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20240601)
CASES = []


def rand(*shape, dtype=np.float32, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def ints(*shape, dtype=np.int64, low=-9, high=10):
    return RNG.integers(low, high, size=shape).astype(dtype)


def case(name, nodes, inputs, outputs, opset=18, initializers=None, tol=None, external=False, ort_differs=None,
         threads=()):
    """inputs/outputs: ordered dicts name -> numpy array (outputs are the numpy oracle).
    ort_differs: why onnxruntime is known to disagree with the numpy oracle here (skips that check).
    threads: thread counts the case also runs at (threads.txt), beside serial and a 3-thread pool."""
    CASES.append(dict(name=name, nodes=nodes, inputs=inputs, outputs=outputs, opset=opset,
                      initializers=initializers or {}, tol=tol, external=external, ort_differs=ort_differs,
                      threads=tuple(threads)))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=f"{op.lower()}_{outs[0]}", **attrs)


def value_info(name, array):
    """A tensor, or for a Python list of arrays (one dtype, at least one element) a sequence."""
    if isinstance(array, list):
        elem = helper.np_dtype_to_tensor_dtype(array[0].dtype)
        return helper.make_tensor_sequence_value_info(name, elem, None)
    elem = helper.np_dtype_to_tensor_dtype(array.dtype)
    return helper.make_tensor_value_info(name, elem, list(array.shape))


def value_proto(name, array):
    """TensorProto, or SequenceProto for a list (the backend-test files of sequence inputs/outputs)."""
    if isinstance(array, list):
        return numpy_helper.from_list(array, name)
    return numpy_helper.from_array(array, name)


def write_case(out_dir, c):
    graph = helper.make_graph(
        c["nodes"], c["name"],
        [value_info(n, a) for n, a in c["inputs"].items()],
        [value_info(n, a) for n, a in c["outputs"].items()],
        # A TensorProto goes in as written (INT4 / UINT4 weights, which numpy cannot hold).
        [a if isinstance(a, onnx.TensorProto) else numpy_helper.from_array(a, n) for n, a in c["initializers"].items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c["opset"])],
                              producer_name="parity-refrt-tests")
    model.ir_version = 8 if c["opset"] <= 18 else 10
    onnx.checker.check_model(model, full_check=True)
    case_dir = os.path.join(out_dir, c["name"])
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    path = os.path.join(case_dir, "model.onnx")
    if c["external"]:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
    else:
        onnx.save_model(model, path)
    for kind, values in (("input", c["inputs"]), ("output", c["outputs"])):
        for i, (n, a) in enumerate(values.items()):
            with open(os.path.join(data_dir, f"{kind}_{i}.pb"), "wb") as f:
                f.write(value_proto(n, a).SerializeToString())
    if c["tol"]:
        with open(os.path.join(case_dir, "tolerance.txt"), "w") as f:
            f.write(f"{c['tol'][0]} {c['tol'][1]}\n")
    if c["threads"]:
        with open(os.path.join(case_dir, "threads.txt"), "w") as f:
            f.write(" ".join(str(t) for t in c["threads"]) + "\n")
    return path


def cross_check_with_ort(path, c):
    if c["ort_differs"]:
        print(f"note: {c['name']}: not cross-checked, onnxruntime differs: {c['ort_differs']}")
        return False
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, dict(c["inputs"]))
    except Exception as e:  # noqa: BLE001 - ORT is an extra check, numpy stays the oracle
        print(f"note: onnxruntime cannot run {c['name']} ({type(e).__name__}); numpy oracle only")
        return False
    rtol, atol = c["tol"] or (1e-5, 1e-6)

    def close(g, want):
        if isinstance(want, list):  # a sequence: element by element
            return isinstance(g, list) and len(g) == len(want) and all(close(x, w) for x, w in zip(g, want))
        return g.shape == want.shape and g.dtype == want.dtype and np.allclose(g, want, rtol=rtol, atol=atol,
                                                                                equal_nan=True)
    for (n, want), g in zip(c["outputs"].items(), got):
        if not close(g, want):
            raise SystemExit(f"oracle check failed: {c['name']} output {n}: numpy {want!r} vs onnxruntime {g!r}")
    return True


# ---------------------------------------------------------------- elementwise arithmetic
def binary_cases():
    ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
    for op, f in ops.items():
        a, b = rand(2, 1, 5), rand(4, 1)
        case(
            f"{op.lower()}_f32_broadcast_2x1x5_by_4x1", [node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": f(a, b)}
        )
    a, b = rand(3, 7, dtype=np.float64), rand(7, dtype=np.float64, low=0.5, high=2)
    case("div_f64_row_broadcast", [node("Div", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a / b})
    a, b = ints(5, 3, dtype=np.int32), ints(1, dtype=np.int32)
    case("mul_i32_by_one_element", [node("Mul", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a * b})
    a, b = ints(4, 1, dtype=np.int64), ints(3, dtype=np.int64)
    case("sub_i64_outer", [node("Sub", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a - b})
    for dt in (np.int32, np.int64):
        a = np.array([-7, 7, -7, 7, 0, -1, 9, -9], dtype=dt)
        b = np.array([2, -2, -2, 2, 3, 4, -4, 4], dtype=dt)
        want = (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(dt)  # truncation toward zero
        case(f"div_{np.dtype(dt).name}_truncates_toward_zero", [node("Div", ["a", "b"], ["y"])],
             {"a": a, "b": b}, {"y": want})
    a, b = rand(0, 3), rand(3)
    case("add_f32_empty_by_row", [node("Add", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a + b})
    a, b = rand(), rand(2, 3)
    case("add_f32_scalar_by_matrix", [node("Add", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a + b})
    a, b = rand(3, 1, 5), rand(1, 4, 1)
    case("add_f32_opset7", [node("Add", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a + b}, opset=7)


def unary_cases():
    fs = {"Neg": np.negative, "Abs": np.abs, "Exp": np.exp, "Relu": lambda x: np.maximum(x, 0),
          "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Tanh": np.tanh}
    for op, f in fs.items():
        for dt in (np.float32, np.float64):
            x = rand(3, 5, dtype=dt, low=-4, high=4)
            case(f"{op.lower()}_{np.dtype(dt).name}", [node(op, ["x"], ["y"])], {"x": x}, {"y": f(x).astype(dt)})
    for op, f in {"Sqrt": np.sqrt, "Log": np.log}.items():
        for dt in (np.float32, np.float64):
            x = rand(7, dtype=dt, low=0.01, high=10)
            case(f"{op.lower()}_{np.dtype(dt).name}", [node(op, ["x"], ["y"])], {"x": x}, {"y": f(x).astype(dt)})
    x = ints(6)
    case("neg_int64", [node("Neg", ["x"], ["y"])], {"x": x}, {"y": -x})
    x = ints(6, dtype=np.int32)
    case("abs_int32", [node("Abs", ["x"], ["y"])], {"x": x}, {"y": np.abs(x)})
    x = rand(0, 4)
    case("exp_f32_empty", [node("Exp", ["x"], ["y"])], {"x": x}, {"y": np.exp(x)})


# ---------------------------------------------------------------- matmul / gemm
def matmul_cases():
    shapes = {"2d_odd": ((17, 33), (33, 9)), "batch_broadcast": ((2, 1, 3, 4), (5, 4, 2)),
              "vector_by_matrix": ((3,), (3, 4)), "matrix_by_vector": ((2, 3), (3,)),
              "vector_by_vector": ((6,), (6,)), "batched_by_vector": ((2, 3, 4), (4,)),
              "empty_k": ((2, 0), (0, 3)), "empty_m": ((0, 4), (4, 3))}
    for name, (sa, sb) in shapes.items():
        a, b = rand(*sa), rand(*sb)
        want = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        case(f"matmul_f32_{name}", [node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": want}, tol=(1e-5, 1e-5))
    a, b = rand(3, 5, 6, dtype=np.float64), rand(6, 2, dtype=np.float64)
    case("matmul_f64_batched", [node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a @ b}, tol=(1e-12, 1e-12))


def gemm_cases():
    a, w, c = rand(5, 7), rand(3, 7), rand(3)
    want = (0.5 * (a.astype(np.float64) @ w.T.astype(np.float64)) + 2.0 * c).astype(np.float32)
    case("gemm_transB_alpha_beta_row_bias", [node("Gemm", ["a", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
         {"a": a, "w": w, "c": c}, {"y": want}, tol=(1e-5, 1e-5))
    a, b, c = rand(4, 6), rand(4, 3), rand(6, 1)
    want = (a.T.astype(np.float64) @ b + c).astype(np.float32)
    case("gemm_transA_column_bias", [node("Gemm", ["a", "b", "c"], ["y"], transA=1)],
         {"a": a, "b": b, "c": c}, {"y": want}, tol=(1e-5, 1e-5))
    a, b = rand(2, 3, dtype=np.float64), rand(4, 2, dtype=np.float64)
    case("gemm_f64_transA_transB_no_bias", [node("Gemm", ["a", "b"], ["y"], transA=1, transB=1)],
         {"a": a, "b": b}, {"y": a.T @ b.T}, tol=(1e-12, 1e-12))
    a, b, c = rand(3, 4), rand(4, 2), rand()
    case("gemm_scalar_bias_opset9", [node("Gemm", ["a", "b", "c"], ["y"])], {"a": a, "b": b, "c": c},
         {"y": (a.astype(np.float64) @ b + c).astype(np.float32)}, opset=9, tol=(1e-5, 1e-5))


# ---------------------------------------------------------------- shape and data movement
def shape_cases():
    a, b, c = rand(2, 3), rand(2, 0), rand(2, 4)
    case("concat_axis_neg1_with_empty", [node("Concat", ["a", "b", "c"], ["y"], axis=-1)],
         {"a": a, "b": b, "c": c}, {"y": np.concatenate([a, b, c], axis=-1)})
    a, b = ints(1, 3, 2), ints(4, 3, 2)
    case(
        "concat_i64_axis0", [node("Concat", ["a", "b"], ["y"], axis=0)], {"a": a, "b": b}, {"y": np.concatenate([a, b])}
    )
    x = rand(2, 3, 4)
    case("transpose_default_reverses", [node("Transpose", ["x"], ["y"])], {"x": x}, {"y": x.T})
    case("transpose_perm_1_2_0", [node("Transpose", ["x"], ["y"], perm=[1, 2, 0])], {"x": x},
         {"y": np.transpose(x, (1, 2, 0))})
    x = rand(2, 3, 4)
    case("reshape_zero_copies_and_minus1", [node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(2, 12)},
         initializers={"s": np.array([0, -1], dtype=np.int64)})
    x = rand(0, 3)
    case("reshape_allowzero_keeps_zero", [node("Reshape", ["x", "s"], ["y"], allowzero=1)], {"x": x},
         {"y": x.reshape(3, 0)}, initializers={"s": np.array([3, 0], dtype=np.int64)})
    x = rand(4, 6)
    case("reshape_opset13", [node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(4, 2, 3)},
         opset=13, initializers={"s": np.array([0, 2, -1], dtype=np.int64)})
    x = rand(6, 7, 5)
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    slices = {
        "negative_steps": ([-1, -2], [small, 0], [0, 2], [-2, -3], x[::-2, :, 3:0:-3]),
        "clamped_bounds": ([-100, 2], [100, big], [1, 0], [1, 1], x[2:, -100:100]),
        "empty_when_start_after_end": ([4], [2], [0], [1], x[4:2]),
        "neg_axis_step3": ([1], [big], [-1], [3], x[:, :, 1::3]),
    }
    for name, (st, en, ax, sp, want) in slices.items():
        inits = {"st": np.array(st, np.int64), "en": np.array(en, np.int64), "ax": np.array(ax, np.int64),
                 "sp": np.array(sp, np.int64)}
        case(f"slice_{name}", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], {"x": x}, {"y": want},
             initializers=inits)
    case("slice_opset9_attributes", [node("Slice", ["x"], ["y"], starts=[1, -3], ends=[1000, -1], axes=[0, 2])],
         {"x": x}, {"y": x[1:, :, -3:-1]}, opset=9)
    x = rand(1, 3, 1, 2)
    case("squeeze_axes_input", [node("Squeeze", ["x", "ax"], ["y"])], {"x": x}, {"y": x.reshape(3, 1, 2)},
         initializers={"ax": np.array([0], np.int64)})
    case("squeeze_all_ones", [node("Squeeze", ["x"], ["y"])], {"x": x}, {"y": x.reshape(3, 2)})
    case("squeeze_opset11_attribute", [node("Squeeze", ["x"], ["y"], axes=[-2])], {"x": x},
         {"y": x.reshape(1, 3, 2)}, opset=11)
    x = rand(3, 2)
    case("unsqueeze_negative_axes", [node("Unsqueeze", ["x", "ax"], ["y"])], {"x": x}, {"y": x.reshape(3, 1, 2, 1)},
         initializers={"ax": np.array([-1, 1], np.int64)})
    case("unsqueeze_opset11_attribute", [node("Unsqueeze", ["x"], ["y"], axes=[0])], {"x": x},
         {"y": x.reshape(1, 3, 2)}, opset=11)
    x = rand(2, 3, 4, 5)
    case("shape_start_end", [node("Shape", ["x"], ["y"], start=1, end=-1)], {"x": x}, {"y": np.array([3, 4], np.int64)})
    case("shape_opset13", [node("Shape", ["x"], ["y"])], {"x": x}, {"y": np.array(x.shape, np.int64)}, opset=13)
    case("flatten_axis0", [node("Flatten", ["x"], ["y"], axis=0)], {"x": x}, {"y": x.reshape(1, -1)})
    case("flatten_axis_neg1", [node("Flatten", ["x"], ["y"], axis=-1)], {"x": x}, {"y": x.reshape(24, 5)})
    case("flatten_axis_rank", [node("Flatten", ["x"], ["y"], axis=4)], {"x": x}, {"y": x.reshape(120, 1)})
    x = rand(4, 5, 3)
    idx = np.array([[-1, 0], [2, -5]], np.int64)
    case("gather_axis1_negative_2d_indices", [node("Gather", ["x", "i"], ["y"], axis=1)], {"x": x, "i": idx},
         {"y": np.take(x, idx, axis=1)})
    idx = np.array(2, np.int32)
    case("gather_scalar_int32_index", [node("Gather", ["x", "i"], ["y"])], {"x": x, "i": idx}, {"y": x[2]})
    x = ints(3, 4)
    case("identity_i64", [node("Identity", ["x"], ["y"])], {"x": x}, {"y": x})


def constant_cases():
    t = rand(2, 3)
    x = rand(2, 3)
    case("constant_value_tensor", [node("Constant", [], ["c"], value=numpy_helper.from_array(t)),
                                   node("Add", ["x", "c"], ["y"])], {"x": x}, {"y": x + t})
    case("constant_value_float", [node("Constant", [], ["c"], value_float=2.5), node("Mul", ["x", "c"], ["y"])],
         {"x": x}, {"y": x * np.float32(2.5)})
    case("constant_value_floats", [node("Constant", [], ["c"], value_floats=[1.0, -2.0, 3.0]),
                                   node("Sub", ["x", "c"], ["y"])], {"x": x},
         {"y": x - np.array([1, -2, 3], np.float32)})
    xi = ints(2, 3)
    case("constant_value_int", [node("Constant", [], ["c"], value_int=-4), node("Add", ["x", "c"], ["y"])],
         {"x": xi}, {"y": xi - 4})
    case("constant_value_ints", [node("Constant", [], ["c"], value_ints=[3, 2]), node("Reshape", ["x", "c"], ["y"])],
         {"x": xi}, {"y": xi.reshape(3, 2)})


def cast_cases():
    f = np.array([-2.75, -1.5, -0.5, 0.0, 0.5, 1.99, 3.0, 1e6], np.float32)
    d = np.array([1e-40, -3.5, 2.0**40, 1e300, -1e300, 0.1], np.float64)
    i = np.array([-(2**40), -3, 0, 7, 2**40], np.int64)
    b = np.array([True, False, True])
    with np.errstate(over="ignore"):
        d32 = d.astype(np.float32)
    pairs = [("f32_to_i32", f, TensorProto.INT32, f.astype(np.int32)),
             ("f32_to_i64", f, TensorProto.INT64, f.astype(np.int64)),
             ("f32_to_f64", f, TensorProto.DOUBLE, f.astype(np.float64)),
             ("f32_to_bool", f, TensorProto.BOOL, f.astype(bool)),
             ("f64_to_f32_overflow_to_inf", d, TensorProto.FLOAT, d32),
             ("i64_to_f32", i, TensorProto.FLOAT, i.astype(np.float32)),
             ("i64_to_i32_wraps", i, TensorProto.INT32, i.astype(np.int32)),
             ("i64_to_bool", i, TensorProto.BOOL, i.astype(bool)),
             ("bool_to_f32", b, TensorProto.FLOAT, b.astype(np.float32)),
             ("bool_to_i64", b, TensorProto.INT64, b.astype(np.int64))]
    for name, x, to, want in pairs:
        case(f"cast_{name}", [node("Cast", ["x"], ["y"], to=to)], {"x": x}, {"y": want})


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_where_compare_cases():
    x = rand(2, 3, 4, low=-5, high=5)
    case("softmax_axis1_opset13", [node("Softmax", ["x"], ["y"], axis=1)], {"x": x}, {"y": softmax_ref(x, 1)})
    case("softmax_default_last_axis", [node("Softmax", ["x"], ["y"])], {"x": x}, {"y": softmax_ref(x, -1)})
    coerced = softmax_ref(x.reshape(2, 12), 1).reshape(2, 3, 4)
    case("softmax_opset11_coerces_to_2d", [node("Softmax", ["x"], ["y"])], {"x": x}, {"y": coerced}, opset=11)
    x = np.array([[1000.0, 999.0, -1000.0], [-1e30, 0.0, 1e30]], np.float64)
    case("softmax_f64_large_values_stable", [node("Softmax", ["x"], ["y"])], {"x": x}, {"y": softmax_ref(x, -1)})
    cond = RNG.integers(0, 2, size=(3, 1)).astype(bool)
    a, b = rand(1, 4), rand()
    case("where_broadcast_three_ways", [node("Where", ["c", "a", "b"], ["y"])], {"c": cond, "a": a, "b": b},
         {"y": np.where(cond, a, b)})
    ai, bi = ints(5, low=0, high=3), ints(2, 1, low=0, high=3)
    case("where_i64", [node("Where", ["c", "a", "b"], ["y"])], {"c": ai > 0, "a": ai, "b": bi},
         {"y": np.where(ai > 0, ai, bi)})
    case("equal_i64_broadcast", [node("Equal", ["a", "b"], ["y"])], {"a": ai, "b": bi}, {"y": np.equal(ai, bi)})
    a, b = rand(3, 4), rand(4)
    b[1] = a[0, 1]
    case("less_f32_broadcast", [node("Less", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a < b})
    case("greater_f32_broadcast", [node("Greater", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": a > b})
    pa, pb = RNG.integers(0, 2, 6).astype(bool), RNG.integers(0, 2, 6).astype(bool)
    case("equal_bool", [node("Equal", ["a", "b"], ["y"])], {"a": pa, "b": pb}, {"y": pa == pb})


# ---------------------------------------------------------------- a small model
def mlp_cases():
    """2-layer MLP: MatMul + Add + Sigmoid, then Gemm(transB), then Concat of both layers."""
    x = rand(5, 8)
    w1, b1 = rand(8, 16), rand(16)
    w2, b2 = rand(4, 16), rand(4)
    nodes = [node("MatMul", ["x", "w1"], ["h0"]), node("Add", ["h0", "b1"], ["h1"]), node("Sigmoid", ["h1"], ["h"]),
             node("Gemm", ["h", "w2", "b2"], ["o"], transB=1), node("Concat", ["h", "o"], ["y"], axis=1)]
    h = 1 / (1 + np.exp(-(x.astype(np.float64) @ w1 + b1)))
    o = h @ w2.T.astype(np.float64) + b2
    want = np.concatenate([h, o], axis=1).astype(np.float32)
    inits = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
    case("mlp_two_layer", nodes, {"x": x}, {"y": want}, initializers=inits, tol=(1e-5, 1e-5))
    case("mlp_two_layer_external_data", nodes, {"x": x}, {"y": want}, initializers=inits, tol=(1e-5, 1e-5),
         external=True)


def family_modules():
    """The case tables of tests/refrt/cases/<family>.py, each with build(api); one file per op family."""
    import importlib.util
    import types
    api = types.SimpleNamespace(case=case, node=node, rand=rand, ints=ints, RNG=RNG, np=np, helper=helper,
                                TensorProto=TensorProto)
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    for file in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if file.endswith(".py") and not file.startswith("_"):
            spec = importlib.util.spec_from_file_location(f"refrt_cases_{file[:-3]}", os.path.join(folder, file))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            yield lambda m=module: m.build(api)


def main():
    out_dir = sys.argv[1]
    for build in (binary_cases, unary_cases, matmul_cases, gemm_cases, shape_cases, constant_cases, cast_cases,
                  softmax_where_compare_cases, mlp_cases, *family_modules()):
        build()
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    names, ort_checked = set(), 0
    for c in CASES:
        assert c["name"] not in names, f"duplicate case {c['name']}"
        names.add(c["name"])
        ort_checked += cross_check_with_ort(write_case(out_dir, c), c)
    with open(os.path.join(out_dir, "stamp"), "w") as f:
        f.write(f"{len(CASES)} cases\n")
    print(f"wrote {len(CASES)} refrt backend cases to {out_dir} ({ort_checked} also agree with onnxruntime)")


if __name__ == "__main__":
    main()
