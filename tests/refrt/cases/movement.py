"""Data movement: Transpose, Concat, Split, Slice, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Trilu.
numpy is the oracle; every op sweeps all raw dtypes on one shape, plus shape edge cases and older opsets."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_dtypes", os.path.join(os.path.dirname(__file__), "_dtypes.py"))
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)


def depth_to_space(np, x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        return x.reshape(n, b, b, c // b**2, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // b**2, h * b, w * b)
    return x.reshape(n, c // b**2, b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // b**2, h * b, w * b)


def space_to_depth(np, x, b):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)


def build(api):
    np, case, node, rng = api.np, api.case, api.node, api.RNG
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731

    for dt in D.ALL_DTYPES:
        n = D.dtype_name(dt)
        x = D.sample(rng, dt, 2, 3, 4)
        case(f"transpose_{n}", [node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], {"x": x}, {"y": x.transpose(2, 0, 1)})
        y = D.sample(rng, dt, 2, 1, 4)
        case(f"concat_{n}", [node("Concat", ["x", "y"], ["z"], axis=1)], {"x": x, "y": y},
             {"z": np.concatenate([x, y], axis=1)})
        a, b = np.split(x, [1], axis=2)[0], np.split(x, [1], axis=2)[1]
        case(f"split_{n}", [node("Split", ["x", "s"], ["a", "b"], axis=2)], {"x": x}, {"a": a, "b": b},
             initializers={"s": i64([1, 3])})
        case(f"slice_{n}", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], {"x": x}, {"y": x[:, ::-2, 1:]},
             initializers={"st": i64([-1, 1]), "en": i64([-100, 100]), "ax": i64([1, 2]), "sp": i64([-2, 1])})
        e = D.sample(rng, dt, 3, 1)
        case(f"expand_{n}", [node("Expand", ["x", "s"], ["y"])], {"x": e}, {"y": np.broadcast_to(e, (2, 3, 4)).copy()},
             initializers={"s": i64([2, 1, 4])})
        case(f"tile_{n}", [node("Tile", ["x", "r"], ["y"])], {"x": x}, {"y": np.tile(x, (1, 2, 3))},
             initializers={"r": i64([1, 2, 3])})
        for mode in ("constant", "reflect", "edge", "wrap"):
            pads = [1, 0, 2, 0, 2, 1]  # begins then ends, per axis
            np_pads = [(1, 0), (0, 2), (2, 1)]
            cv = D.sample(rng, dt, 1)[0] if mode == "constant" else None
            ins = ["x", "p", "c"] if mode == "constant" else ["x", "p"]
            inits = {"p": i64(pads)}
            if mode == "constant":
                inits["c"] = np.array(cv, dtype=dt)
                want = np.pad(x, np_pads, mode="constant", constant_values=cv)
            else:
                want = np.pad(x, np_pads, mode="reflect" if mode == "reflect" else mode)
            case(f"pad_{mode}_{n}", [node("Pad", ins, ["y"], mode=mode)], {"x": x}, {"y": want}, initializers=inits,
                 opset=19 if mode == "wrap" else 18)
        s = D.sample(rng, dt, 1, 8, 2, 3)
        for mode in ("DCR", "CRD"):
            case(f"depth_to_space_{mode.lower()}_{n}", [node("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode)],
                 {"x": s}, {"y": depth_to_space(np, s, 2, mode)})
        s = D.sample(rng, dt, 2, 2, 4, 6)
        case(f"space_to_depth_{n}", [node("SpaceToDepth", ["x"], ["y"], blocksize=2)], {"x": s},
             {"y": space_to_depth(np, s, 2)})
        t = D.sample(rng, dt, 2, 4, 5)
        case(f"trilu_upper_{n}", [node("Trilu", ["x"], ["y"])], {"x": t}, {"y": np.triu(t)})
        case(f"trilu_lower_k_{n}", [node("Trilu", ["x", "k"], ["y"], upper=0)], {"x": t}, {"y": np.tril(t, -1)},
             initializers={"k": np.array(-1, np.int64)})

    # Transpose: scalar-free edge shapes, a large one, opset 7.
    x = api.rand(0, 3, 2)
    case("transpose_empty", [node("Transpose", ["x"], ["y"], perm=[1, 2, 0])], {"x": x}, {"y": x.transpose(1, 2, 0)})
    x = api.rand(7)
    case("transpose_1d", [node("Transpose", ["x"], ["y"])], {"x": x}, {"y": x})
    x = api.rand(33, 65, 17)
    case("transpose_large_odd", [node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], {"x": x}, {"y": x.transpose(2, 0, 1)})
    # Past the 12 dims strided copies keep on the stack: 13 dims of 2 (none merge), the default perm (reversed).
    x = np.random.default_rng(4748).standard_normal((2,) * 13).astype(np.float32)
    case("transpose_rank13_reversed", [node("Transpose", ["x"], ["y"])], {"x": x}, {"y": x.transpose()})
    # Copies of 256 KiB and more split over the pool along the output's first dim of extent > 1: a transformer's head
    # transpose (leading dim 1, then 12 heads), an odd split (3 chunks of 7 over 2 threads), a 16-bit one, and an Expand
    rng = np.random.default_rng(53)  # its own generator: the rows after these keep their values
    x = rng.standard_normal((1, 128, 12, 64)).astype(np.float32)
    case("transpose_large_heads", [node("Transpose", ["x"], ["y"], perm=[0, 2, 1, 3])], {"x": x},
         {"y": x.transpose(0, 2, 1, 3)})
    x = rng.standard_normal((7, 3, 4099)).astype(np.float32)
    case("transpose_large_split_odd", [node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], {"x": x},
         {"y": x.transpose(2, 0, 1)})
    x = rng.standard_normal((2, 197, 12, 64)).astype(np.float16)
    case("transpose_large_float16", [node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], {"x": x},
         {"y": x.transpose(0, 2, 3, 1)})
    x = rng.standard_normal((1, 4, 1, 300, 64)).astype(np.float32)
    case("expand_large_heads", [node("Expand", ["x", "s"], ["y"])], {"x": x},
         {"y": np.broadcast_to(x, (1, 4, 3, 300, 64)).copy()}, initializers={"s": np.array([1, 4, 3, 300, 64], np.int64)})
    x = rng.standard_normal((1, 8, 512, 64)).astype(np.float32)
    bounds = {"st": np.array([32], np.int64), "en": np.array([64], np.int64), "ax": np.array([3], np.int64)}
    case("slice_large_rope_half", [node("Slice", ["x", "st", "en", "ax"], ["y"])], {"x": x}, {"y": x[..., 32:]},
         initializers=bounds)
    bounds = {"st": np.array([-1, 500], np.int64), "en": np.array([-9, 2], np.int64), "ax": np.array([1, 2], np.int64),
              "sp": np.array([-1, -3], np.int64)}
    case("slice_large_negative_steps", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], {"x": x},
         {"y": x[:, -1:-9:-1, 500:2:-3]}, initializers=bounds)
    # 64 Ki elements split too, under 256 KiB: float16 BERT's head transpose (192 KiB).
    x = np.random.default_rng(4647).standard_normal((1, 128, 12, 64)).astype(np.float16)
    case("transpose_heads_float16_192k", [node("Transpose", ["x"], ["y"], perm=[0, 2, 1, 3])], {"x": x},
         {"y": x.transpose(0, 2, 1, 3)}, threads=(2,))
    x = api.rand(2, 3, 1, 5)
    case("transpose_opset7", [node("Transpose", ["x"], ["y"], perm=[3, 1, 0, 2])], {"x": x},
         {"y": x.transpose(3, 1, 0, 2)}, opset=7)
    # Concat: one input, all empty, opset 7.
    x = api.rand(2, 3)
    case("concat_single_input", [node("Concat", ["x"], ["y"], axis=0)], {"x": x}, {"y": x})
    a, b = api.rand(0, 3), api.rand(0, 3)
    case("concat_all_empty", [node("Concat", ["a", "b"], ["y"], axis=0)], {"a": a, "b": b}, {"y": np.zeros((0, 3), np.float32)})
    a, b = api.rand(2, 2), api.rand(2, 5)
    case("concat_opset7", [node("Concat", ["a", "b"], ["y"], axis=1)], {"a": a, "b": b},
         {"y": np.concatenate([a, b], 1)}, opset=7)
    # Split: equal parts, attribute (opset 11), num_outputs with a smaller last piece (18), zero-size piece.
    x = api.rand(6, 4)
    p = np.split(x, 3, axis=0)
    case("split_equal_opset13", [node("Split", ["x"], ["a", "b", "c"])], {"x": x}, dict(zip("abc", p)), opset=13)
    p = np.split(x, [1], axis=-1)
    case("split_attr_opset11", [node("Split", ["x"], ["a", "b"], axis=-1, split=[1, 3])], {"x": x}, dict(zip("ab", p)),
         opset=11)
    case("split_equal_opset7", [node("Split", ["x"], ["a", "b"], axis=1)], {"x": x}, dict(zip("ab", np.split(x, 2, 1))),
         opset=7)
    x = api.rand(7, 2)
    p = np.split(x, [3, 6], axis=0)
    case("split_num_outputs_uneven", [node("Split", ["x"], ["a", "b", "c"], num_outputs=3)], {"x": x}, dict(zip("abc", p)))
    p = np.split(x, [0, 7], axis=0)
    case("split_zero_size_piece", [node("Split", ["x", "s"], ["a", "b", "c"])], {"x": x}, dict(zip("abc", p)),
         initializers={"s": i64([0, 7, 0])})
    # Slice: scalar-like 1-D, empty input, large.
    x = api.rand(0, 4)
    case("slice_empty_input", [node("Slice", ["x", "st", "en"], ["y"])], {"x": x}, {"y": x[:, 1:3]},
         initializers={"st": i64([0, 1]), "en": i64([5, 3])})
    x = api.rand(200, 300)
    case("slice_large_strided", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], {"x": x}, {"y": x[3:190:7, ::-5]},
         initializers={"st": i64([3, -1]), "en": i64([190, -1000]), "ax": i64([0, 1]), "sp": i64([7, -5])})
    # Expand: scalar, to a smaller shape (bidirectional), empty, higher rank, opset 8.
    s = api.rand()
    case("expand_scalar", [node("Expand", ["x", "s"], ["y"])], {"x": s}, {"y": np.full((2, 3), s, np.float32)},
         initializers={"s": i64([2, 3])})
    x = api.rand(3, 4)
    case("expand_bidirectional", [node("Expand", ["x", "s"], ["y"])], {"x": x}, {"y": x.copy()},
         initializers={"s": i64([1, 1])})
    case("expand_higher_rank", [node("Expand", ["x", "s"], ["y"])], {"x": x[:1]}, {"y": np.broadcast_to(x[:1], (2, 5, 4)).copy()},
         initializers={"s": i64([2, 5, 1])})
    case("expand_to_empty", [node("Expand", ["x", "s"], ["y"])], {"x": x[:1]}, {"y": np.zeros((0, 4), np.float32)},
         initializers={"s": i64([0, 4])})
    case("expand_opset8", [node("Expand", ["x", "s"], ["y"])], {"x": x[:, :1]}, {"y": np.broadcast_to(x[:, :1], (3, 6)).copy()},
         initializers={"s": i64([3, 6])}, opset=8)
    # Tile: zero repeats, 1-D, large, opset 7.
    x = api.rand(2, 3)
    case("tile_zero_repeat", [node("Tile", ["x", "r"], ["y"])], {"x": x}, {"y": np.tile(x, (0, 2))},
         initializers={"r": i64([0, 2])})
    x = api.rand(5)
    case("tile_1d", [node("Tile", ["x", "r"], ["y"])], {"x": x}, {"y": np.tile(x, 4)}, initializers={"r": i64([4])})
    x = api.rand(31, 17)
    case("tile_large", [node("Tile", ["x", "r"], ["y"])], {"x": x}, {"y": np.tile(x, (9, 13))},
         initializers={"r": i64([9, 13])})
    x = api.rand(2, 3)
    case("tile_opset7", [node("Tile", ["x", "r"], ["y"])], {"x": x}, {"y": np.tile(x, (2, 1))},
         initializers={"r": i64([2, 1])}, opset=7)
    # Pad: negative pads crop, axes input (18), opset 2 attributes (opset 7 model), opset 11 inputs, defaults.
    x = api.rand(4, 5)
    case("pad_negative_crops", [node("Pad", ["x", "p"], ["y"])], {"x": x},
         {"y": np.pad(x[1:, :], [(0, 2), (3, 0)])}, initializers={"p": i64([-1, 3, 2, 0])})
    case("pad_axes_input", [node("Pad", ["x", "p", "", "a"], ["y"], mode="edge")], {"x": x},
         {"y": np.pad(x, [(0, 0), (2, 1)], mode="edge")}, initializers={"p": i64([2, 1]), "a": i64([-1])})
    case("pad_reflect_full_width", [node("Pad", ["x", "p"], ["y"], mode="reflect")], {"x": x},
         {"y": np.pad(x, [(3, 3), (4, 4)], mode="reflect")}, initializers={"p": i64([3, 4, 3, 4])})
    case("pad_attrs_opset7", [node("Pad", ["x"], ["y"], pads=[1, 2, 0, 1], value=1.5)], {"x": x},
         {"y": np.pad(x, [(1, 0), (2, 1)], constant_values=1.5)}, opset=7)
    case("pad_attrs_reflect_opset7", [node("Pad", ["x"], ["y"], pads=[0, 2, 0, 2], mode="reflect")], {"x": x},
         {"y": np.pad(x, [(0, 0), (2, 2)], mode="reflect")}, opset=7)
    xi = api.ints(3, 4)
    case("pad_inputs_opset11_i64", [node("Pad", ["x", "p", "c"], ["y"])], {"x": xi},
         {"y": np.pad(xi, [(1, 1), (0, 2)], constant_values=-9)}, initializers={"p": i64([1, 0, 1, 2]), "c": np.array(-9, np.int64)},
         opset=11)
    x = api.rand(0, 3)
    case("pad_empty_constant", [node("Pad", ["x", "p"], ["y"])], {"x": x}, {"y": np.pad(x, [(1, 1), (0, 0)])},
         initializers={"p": i64([1, 0, 1, 0])})
    x = api.rand(2, 3, 5)
    case("pad_wrap_3d", [node("Pad", ["x", "p"], ["y"], mode="wrap")], {"x": x},
         {"y": np.pad(x, [(1, 1), (2, 0), (0, 4)], mode="wrap")}, initializers={"p": i64([1, 2, 0, 1, 0, 4])}, opset=19)
    x = api.rand(1, 3, 64, 64)
    case("pad_large_reflect", [node("Pad", ["x", "p"], ["y"], mode="reflect")], {"x": x},
         {"y": np.pad(x, [(0, 0), (0, 0), (3, 3), (3, 3)], mode="reflect")}, initializers={"p": i64([0, 0, 3, 3, 0, 0, 3, 3])})
    # DepthToSpace / SpaceToDepth: blocksize 3, opset 7 (DCR only), empty batch.
    x = api.rand(2, 18, 3, 2)
    case("depth_to_space_b3_crd", [node("DepthToSpace", ["x"], ["y"], blocksize=3, mode="CRD")], {"x": x},
         {"y": depth_to_space(np, x, 3, "CRD")})
    case("depth_to_space_opset7", [node("DepthToSpace", ["x"], ["y"], blocksize=3)], {"x": x},
         {"y": depth_to_space(np, x, 3, "DCR")}, opset=7)
    x = api.rand(0, 4, 2, 2)
    case("depth_to_space_empty_batch", [node("DepthToSpace", ["x"], ["y"], blocksize=2)], {"x": x},
         {"y": np.zeros((0, 1, 4, 4), np.float32)})
    x = api.rand(1, 2, 9, 6)
    case("space_to_depth_b3_opset7", [node("SpaceToDepth", ["x"], ["y"], blocksize=3)], {"x": x},
         {"y": space_to_depth(np, x, 3)}, opset=7)
    # Trilu: k beyond the matrix both ways, square, empty, 2-D, large.
    x = api.rand(5, 5)
    for k in (-7, -2, 0, 3, 9):
        case(f"trilu_upper_k{k}".replace("-", "m"), [node("Trilu", ["x", "k"], ["y"])], {"x": x}, {"y": np.triu(x, k)},
             initializers={"k": np.array(k, np.int64)})
        case(f"trilu_lower_k{k}".replace("-", "m"), [node("Trilu", ["x", "k"], ["y"], upper=0)], {"x": x},
             {"y": np.tril(x, k)}, initializers={"k": np.array(k, np.int64)})
    x = api.rand(3, 0, 4)
    case("trilu_empty", [node("Trilu", ["x"], ["y"])], {"x": x}, {"y": x})
    x = api.rand(2, 100, 70)
    case("trilu_large_lower", [node("Trilu", ["x"], ["y"], upper=0)], {"x": x}, {"y": np.tril(x)})
