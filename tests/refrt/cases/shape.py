"""Shape ops: Reshape, Squeeze, Unsqueeze, Flatten, Shape, Size, Identity, ConstantOfShape, Range, EyeLike,
Constant. numpy is the oracle; every op sweeps all raw dtypes on one shape, plus shape edge cases."""
import importlib.util
import os

from onnx import numpy_helper

_spec = importlib.util.spec_from_file_location("refrt_cases_dtypes", os.path.join(os.path.dirname(__file__), "_dtypes.py"))
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)


def build(api):
    np, case, node, rng = api.np, api.case, api.node, api.RNG
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731

    for dt in D.ALL_DTYPES:
        n = D.dtype_name(dt)
        x = D.sample(rng, dt, 2, 3, 4)
        case(f"reshape_{n}", [node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(4, 6)},
             initializers={"s": i64([4, -1])})
        case(f"squeeze_{n}", [node("Squeeze", ["x", "a"], ["y"])], {"x": x[:1]}, {"y": x[0]},
             initializers={"a": i64([0])})
        case(f"unsqueeze_{n}", [node("Unsqueeze", ["x", "a"], ["y"])], {"x": x}, {"y": x[:, None, :, :, None]},
             initializers={"a": i64([1, 4])})
        case(f"flatten_{n}", [node("Flatten", ["x"], ["y"], axis=2)], {"x": x}, {"y": x.reshape(6, 4)})
        case(f"shape_{n}", [node("Shape", ["x"], ["y"])], {"x": x}, {"y": i64(x.shape)})
        case(f"size_{n}", [node("Size", ["x"], ["y"])], {"x": x}, {"y": np.array(x.size, np.int64)})
        case(f"identity_{n}", [node("Identity", ["x"], ["y"])], {"x": x}, {"y": x.copy()})
        v = D.sample(rng, dt, 1)
        case(f"constant_of_shape_{n}",
             [node("ConstantOfShape", ["s"], ["y"], value=api.helper.make_tensor("v", api.helper.np_dtype_to_tensor_dtype(dt), [1], v.tobytes(), raw=True))],
             {"s": i64([3, 2])}, {"y": np.full((3, 2), v[0], dtype=dt)}, opset=21)
        c = D.sample(rng, dt, 2, 3)
        case(f"constant_value_{n}", [node("Constant", [], ["c"], value=numpy_helper.from_array(c)),
                                     node("Identity", ["c"], ["y"])], {}, {"y": c})
        sq = D.sample(rng, dt, 3, 5)
        for k in (0, 1, -2):
            case(f"eyelike_{n}_k{k}".replace("-", "m"), [node("EyeLike", ["x"], ["y"], k=k)], {"x": sq},
                 {"y": np.eye(3, 5, k, dtype=np.float32).astype(dt)}, opset=22)
    for dt in (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64)):  # Range's type list
        n = D.dtype_name(dt)
        lo, hi, step = (3, 40, 4) if dt.kind == "u" else (-7, 20, 3)
        start, limit, delta = (np.array(v, dt) for v in (lo, hi, step))
        case(f"range_{n}", [node("Range", ["s", "l", "d"], ["y"])], {"s": start, "l": limit, "d": delta},
             {"y": np.arange(lo, hi, step).astype(dt)})
    for dt in (np.float32, np.float64):
        n = D.dtype_name(np.dtype(dt))
        start, limit, delta = (np.array(v, np.float32).astype(dt) for v in (-2.5, 4.0, 0.75))
        case(f"range_{n}", [node("Range", ["s", "l", "d"], ["y"])], {"s": start, "l": limit, "d": delta},
             {"y": (np.float32(-2.5) + np.arange(9, dtype=np.float32) * np.float32(0.75)).astype(dt)})

    # Range: negative delta, empty, one element.
    for name, (lo, hi, st) in {"negative_delta": (10, -3, -4), "empty": (5, 5, 1), "empty_wrong_sign": (0, 10, -1),
                               "one_element": (3, 4, 100)}.items():
        a = [np.array(v, np.int64) for v in (lo, hi, st)]
        case(f"range_i64_{name}", [node("Range", ["s", "l", "d"], ["y"])], dict(zip("sld", a)),
             {"y": np.arange(lo, hi, st, dtype=np.int64)})
    # Reshape / Squeeze / Unsqueeze / Flatten edge shapes.
    x = api.rand()
    case("reshape_scalar_to_1x1", [node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(1, 1)},
         initializers={"s": i64([1, 1])})
    x = api.rand(1, 1)
    case("reshape_to_scalar", [node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(())},
         initializers={"s": np.zeros(0, np.int64)})
    x = api.rand(0, 5)
    case("reshape_empty_zero_copies_dim", [node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(0, 5)},
         initializers={"s": i64([0, 5])}, opset=13)
    x = api.rand(3, 1, 5, 1)
    s = api.rand()
    case("unsqueeze_scalar_twice", [node("Unsqueeze", ["x", "a"], ["y"])], {"x": s}, {"y": s.reshape(1, 1)},
         initializers={"a": i64([0, -1])})
    case("squeeze_negative_axes", [node("Squeeze", ["x", "a"], ["y"])], {"x": x}, {"y": x.reshape(3, 5)},
         initializers={"a": i64([-1, 1])})
    x = api.rand(0, 2, 3)
    case("flatten_empty", [node("Flatten", ["x"], ["y"])], {"x": x}, {"y": x.reshape(0, 6)})
    case("shape_of_empty", [node("Shape", ["x"], ["y"])], {"x": x}, {"y": i64([0, 2, 3])})
    case("size_of_empty", [node("Size", ["x"], ["y"])], {"x": x}, {"y": np.array(0, np.int64)})
    case("size_of_scalar", [node("Size", ["x"], ["y"])], {"x": api.rand()}, {"y": np.array(1, np.int64)})
    case("shape_of_scalar", [node("Shape", ["x"], ["y"])], {"x": api.rand()}, {"y": np.zeros(0, np.int64)})
    x = api.rand(2, 3, 4, 5)
    for st, en in ((-3, None), (0, 100), (-100, 2), (3, 1)):
        kw = {"start": st} if en is None else {"start": st, "end": en}
        want = i64(list(x.shape)[slice(st, en)])
        case(f"shape_start{st}_end{en}".replace("-", "m"), [node("Shape", ["x"], ["y"], **kw)], {"x": x}, {"y": want})
    case("flatten_opset9", [node("Flatten", ["x"], ["y"], axis=3)], {"x": x}, {"y": x.reshape(24, 5)}, opset=9)
    case("squeeze_opset7", [node("Squeeze", ["x"], ["y"], axes=[0])], {"x": x[:1]}, {"y": x[0]}, opset=7)
    case("unsqueeze_opset7", [node("Unsqueeze", ["x"], ["y"], axes=[0, 3])], {"x": x[0, 0]},
         {"y": x[0, 0].reshape(1, 4, 5, 1)}, opset=7)
    big = api.rand(64, 128, 33)
    case("reshape_large", [node("Reshape", ["x", "s"], ["y"])], {"x": big}, {"y": big.reshape(-1, 64)},
         initializers={"s": i64([-1, 64])})
    # ConstantOfShape: default value, scalar output, empty output.
    case("constant_of_shape_default_f32", [node("ConstantOfShape", ["s"], ["y"])], {"s": i64([2, 3])},
         {"y": np.zeros((2, 3), np.float32)})
    val = api.helper.make_tensor("v", api.TensorProto.INT64, [1], [7])
    case("constant_of_shape_scalar_output", [node("ConstantOfShape", ["s"], ["y"], value=val)],
         {"s": np.zeros(0, np.int64)}, {"y": np.array(7, np.int64)})
    case("constant_of_shape_empty_output", [node("ConstantOfShape", ["s"], ["y"], value=val)],
         {"s": i64([3, 0])}, {"y": np.zeros((3, 0), np.int64)})
    # EyeLike: dtype attribute, non-square both ways, k beyond the matrix.
    x = api.rand(4, 2)
    case("eyelike_dtype_attr_i32", [node("EyeLike", ["x"], ["y"], dtype=api.TensorProto.INT32, k=-1)], {"x": x},
         {"y": np.eye(4, 2, -1, dtype=np.int32)})
    case("eyelike_k_beyond", [node("EyeLike", ["x"], ["y"], k=5)], {"x": x}, {"y": np.zeros((4, 2), np.float32)})
    # Constant: the value_* attributes, at opset 12+ and opset 7 (value only).
    case("constant_value_int_scalar", [node("Constant", [], ["y"], value_int=-3)], {}, {"y": np.array(-3, np.int64)})
    case("constant_value_ints_vec", [node("Constant", [], ["y"], value_ints=[1, 2, 3])], {}, {"y": i64([1, 2, 3])})
    case("constant_value_float_scalar", [node("Constant", [], ["y"], value_float=0.25)], {},
         {"y": np.array(0.25, np.float32)})
    t = api.rand(3)
    case("constant_opset7", [node("Constant", [], ["y"], value=numpy_helper.from_array(t))], {}, {"y": t}, opset=7)
