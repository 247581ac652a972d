"""Graphs shaped like the patterns refrt's load-time passes fuse (refrt/src/optimize/optimizer.h): Conv +
BatchNormalization, Conv / Gemm / MatMul + bias + activation (ONNX ops and the decomposed forms
torch.export writes: hardswish, hardsigmoid, GELU, SiLU), MatMul + Add, RMS normalisation, and the
kernels the fused models lean on (direct depthwise conv, trailing-axis ReduceMean, broadcast Mul).
Weights are initializers so that the passes can fire; the oracle is numpy on the unfused formulas,
in float64. Rows named fusion_* must be fused by refrt, fusion_keep_* must not (a value that is a
graph output or read twice stays), fusion_siblings_* keep their outputs (one node writes them all);
tests/refrt/graph_optimize_test.cc checks these with the profile."""
import importlib.util
import os

# The conv oracle of the Conv table (loaded by path: the tables are loaded as single files).
_spec = importlib.util.spec_from_file_location("refrt_cases_conv_oracle", os.path.join(os.path.dirname(__file__), "conv.py"))
_conv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conv)
conv_ref = _conv.conv_ref


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-4, 1e-5)
    f32 = np.float32

    def scalar(v):
        return np.array(v, dtype=f32)

    def bn_params(c):
        return rand(c), rand(c), rand(c), rand(c, low=0.5, high=1.5)

    def bn_ref(y, s, b, m, v, eps=1e-5):
        sh = (1, -1) + (1,) * (y.ndim - 2)
        return (y - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * s.reshape(sh) + b.reshape(sh)

    relu = lambda y: np.maximum(y, 0)
    hsig = lambda y: np.clip(y + 3, 0, 6) / 6
    hswish = lambda y: y * np.clip(y + 3, 0, 6) / 6
    gelu = lambda y: 0.5 * y * (1 + np.vectorize(__import__("math").erf)(y / np.sqrt(2)))
    silu = lambda y: y / (1 + np.exp(-y))

    def hswish_nodes(x, out, tag, div_first=False):
        a, c1, c2, m = f"{tag}_a", f"{tag}_c1", f"{tag}_c2", f"{tag}_m"
        nodes = [node("Add", [x, "three"], [a]), node("Clip", [a, "zero"], [c1]), node("Clip", [c1, "", "six"], [c2])]
        if div_first:
            return nodes + [node("Div", [c2, "six"], [m]), node("Mul", [x, m], [out])]
        return nodes + [node("Mul", [x, c2], [m]), node("Div", [m, "six"], [out])]

    consts = {"three": scalar(3), "zero": scalar(0), "six": scalar(6)}

    # Conv + BatchNormalization (+ Relu / Clip / hardswish / hardsigmoid), regular and depthwise convs
    for name, xs, ws, group, kw, act in (
            ("conv_bn", (1, 3, 9, 9), (4, 3, 3, 3), 1, dict(pads=[1, 1, 1, 1]), None),
            ("conv_bn_relu", (2, 3, 8, 8), (5, 3, 3, 3), 1, dict(strides=[2, 2]), "relu"),
            ("conv_bias_bn_relu6", (1, 4, 7, 7), (6, 4, 1, 1), 1, {}, "clip"),
            # the AVX2 GEMM's epilogue (refrt/kernels/conv_gemm.h): Relu in registers, 14 rows, a 5-column
            # masked tail; hardswish after a GEMM of two k blocks with a 1-column dot-product tail
            ("conv_bn_relu_wide", (1, 8, 9, 13), (14, 8, 3, 3), 1, dict(pads=[1, 1, 1, 1]), "relu"),
            ("conv_bn_hswish_deep", (1, 32, 7, 7), (10, 32, 3, 3), 1, dict(pads=[1, 1, 1, 1]), "hswish"),
            ("dw_bn_hswish", (1, 6, 11, 11), (6, 1, 5, 5), 6, dict(pads=[2, 2, 2, 2]), "hswish"),
            ("dw_s2_bn_hswish_divfirst", (2, 4, 10, 9), (4, 1, 3, 3), 4, dict(pads=[1, 1, 1, 1], strides=[2, 2]),
             "hswish2"),
            ("dw_dil_bn_hsig", (1, 3, 12, 12), (6, 1, 3, 3), 3, dict(pads=[2, 1, 2, 1], dilations=[2, 2]), "hsig"),
    ):
        x, w = rand(*xs), rand(*ws)
        s, b, m, v = bn_params(ws[0])
        inits = {"w": w, "s": s, "b": b, "m": m, "v": v, **consts}
        conv_in = ["x", "w"]
        bias = None
        if "bias" in name:
            bias = rand(ws[0])
            inits["cb"] = bias
            conv_in.append("cb")
        nodes = [node("Conv", conv_in, ["c"], group=group, **kw), node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"])]
        y = bn_ref(conv_ref(np, x, w, bias, strides=kw.get("strides"), dil=kw.get("dilations"), pads=kw.get("pads"),
                            group=group), s, b, m, v)
        if act is None:
            nodes[-1].output[0] = "y"
        elif act == "relu":
            nodes.append(node("Relu", ["n"], ["y"]))
            y = relu(y)
        elif act == "clip":
            nodes.append(node("Clip", ["n", "zero", "six"], ["y"]))
            y = np.clip(y, 0, 6)
        elif act in ("hswish", "hswish2"):
            nodes += hswish_nodes("n", "y", "hs", div_first=act == "hswish2")
            y = hswish(y)
        else:
            nodes += [node("Add", ["n", "three"], ["a"]), node("Clip", ["a", "zero"], ["c1"]),
                      node("Clip", ["c1", "", "six"], ["c2"]), node("Div", ["c2", "six"], ["y"])]
            y = hsig(y)
        case(f"fusion_{name}", nodes, {"x": x}, {"y": y.astype(f32)}, initializers=inits, tol=tol)

    # Gemm / MatMul (+ bias) + activation; ONNX activation ops too
    x, w, bias = rand(5, 8), rand(8, 6), rand(6)
    for act, nodes_after, ref in (
            ("relu", [node("Relu", ["g"], ["y"])], relu),
            ("hardswish_op", [node("HardSwish", ["g"], ["y"])], lambda y: y * np.clip(y / 6 + 0.5, 0, 1)),
            ("hardsigmoid_op", [node("HardSigmoid", ["g"], ["y"], alpha=0.3, beta=0.4)],
             lambda y: np.clip(0.3 * y + 0.4, 0, 1)),
            ("sigmoid", [node("Sigmoid", ["g"], ["y"])], lambda y: 1 / (1 + np.exp(-y))),
            ("silu", [node("Sigmoid", ["g"], ["sg"]), node("Mul", ["g", "sg"], ["y"])], silu),
            ("clip_twice", [node("Clip", ["g", "lo"], ["k"]), node("Clip", ["k", "", "hi"], ["y"])],
             lambda y: np.clip(y, -0.5, 0.7)),
    ):
        inits = {"w": w, "bias": bias, "lo": scalar(-0.5), "hi": scalar(0.7)}
        y = ref(x.astype(np.float64) @ w + bias)
        case(f"fusion_gemm_{act}", [node("Gemm", ["x", "w", "bias"], ["g"])] + nodes_after, {"x": x},
             {"y": y.astype(f32)}, initializers=inits, tol=tol)

    # MatMul (batched A, constant B) + Add(bias) + decomposed exact GELU (torch.export's graph)
    xa, wb, bb = rand(2, 3, 8, low=-3, high=3), rand(8, 16), rand(16)
    gelu_nodes = [node("Mul", ["h", "inv_sqrt2"], ["gm"]), node("Erf", ["gm"], ["ge"]),
                  node("Mul", ["h", "half"], ["gh"]), node("Add", ["ge", "one"], ["ga"]), node("Mul", ["gh", "ga"], ["y"])]
    g_inits = {"inv_sqrt2": scalar(0.7071067811865476), "half": scalar(0.5), "one": scalar(1.0)}
    ref = gelu(xa.astype(np.float64) @ wb + bb)
    case("fusion_matmul_add_gelu", [node("MatMul", ["x", "w"], ["mm"]), node("Add", ["mm", "b"], ["h"])] + gelu_nodes,
         {"x": xa}, {"y": ref.astype(f32)}, initializers={"w": wb, "b": bb, **g_inits}, tol=tol)
    case("fusion_matmul_bias_first_add", [node("MatMul", ["x", "w"], ["mm"]), node("Add", ["b", "mm"], ["y"])],
         {"x": xa}, {"y": (xa.astype(np.float64) @ wb + bb).astype(f32)}, initializers={"w": wb, "b": bb}, tol=tol)
    # GELU after a Reshape (no anchor): one FusedActivation node
    xr = rand(4, 6, low=-4, high=4)
    case("fusion_standalone_gelu", [node("Reshape", ["x", "shape"], ["h"])] + gelu_nodes, {"x": xr},
         {"y": gelu(xr.astype(np.float64)).reshape(2, 12).astype(f32)},
         initializers={"shape": np.array([2, 12], np.int64), **g_inits}, tol=tol)
    xh = rand(2, 5, 3, 3, low=-5, high=5)
    case("fusion_standalone_hardswish", [node("Relu", ["x"], ["r"]), node("Neg", ["r"], ["n"])] + hswish_nodes("n", "y", "hs"),
         {"x": xh}, {"y": hswish(-np.maximum(xh.astype(np.float64), 0)).astype(f32)}, initializers=consts, tol=tol)

    # RMS normalisation as torch writes it: x * 1/sqrt(mean(x^2) + eps) * w
    for name, shape, with_w, ax in (("rms_norm", (2, 3, 16), True, -1), ("rms_norm_no_weight", (5, 8), False, -1),
                                    ("rms_norm_positive_axis", (1, 2, 12), True, 2),
                                    ("rms_norm_middle_axis", (2, 5, 3), True, 1)):
        x = rand(*shape, low=-2, high=2)
        w = rand(shape[-1])
        nodes = [node("Pow", ["x", "two"], ["p"]), node("ReduceMean", ["p", "axes"], ["rm"], keepdims=1),
                 node("Add", ["rm", "eps"], ["ad"]), node("Sqrt", ["ad"], ["sq"]), node("Reciprocal", ["sq"], ["rc"]),
                 node("Mul", ["x", "rc"], ["nm" if with_w else "y"])]
        x64 = x.astype(np.float64)
        y = x64 / np.sqrt((x64 ** 2).mean(ax, keepdims=True) + 1e-6)
        if with_w:
            nodes.append(node("Mul", ["nm", "w"], ["y"]))
            y = y * w
        case(f"fusion_{name}", nodes, {"x": x}, {"y": y.astype(f32)},
             initializers={"two": scalar(2), "axes": np.array([ax], np.int64), "eps": scalar(1e-6), "w": w}, tol=tol)

    # Rows along the last axis of a length that is not a multiple of 8, enough of them to split over the
    # pool (a local generator, so the rows after these keep their values)
    rng = np.random.default_rng(23)
    for name, with_w in (("rms_norm_long_rows", True), ("rms_norm_long_rows_no_weight", False)):
        x, w = rng.uniform(-2, 2, (3, 16, 517)).astype(f32), rng.uniform(-1, 1, 517).astype(f32)
        nodes = [node("Pow", ["x", "two"], ["p"]), node("ReduceMean", ["p", "axes"], ["rm"], keepdims=1),
                 node("Add", ["rm", "eps"], ["ad"]), node("Sqrt", ["ad"], ["sq"]), node("Reciprocal", ["sq"], ["rc"]),
                 node("Mul", ["x", "rc"], ["nm" if with_w else "y"])] + ([node("Mul", ["nm", "w"], ["y"])] if with_w else [])
        x64 = x.astype(np.float64)
        y = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * (w if with_w else 1)
        case(f"fusion_{name}", nodes, {"x": x}, {"y": y.astype(f32)},
             initializers={"two": scalar(2), "axes": np.array([-1], np.int64), "eps": scalar(1e-6), "w": w}, tol=tol)

    # Not fused: the Conv output is also a graph output / the Gemm output has a second reader
    x, w = rand(1, 2, 5, 5), rand(3, 2, 3, 3)
    s, b, m, v = bn_params(3)
    c = conv_ref(np, x, w)
    case("fusion_keep_conv_output_is_graph_output",
         [node("Conv", ["x", "w"], ["c"]), node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"])],
         {"x": x}, {"c": c.astype(f32), "y": bn_ref(c, s, b, m, v).astype(f32)},
         initializers={"w": w, "s": s, "b": b, "m": m, "v": v}, tol=tol)
    x, w = rand(3, 4), rand(4, 5)
    g = x.astype(np.float64) @ w
    case("fusion_keep_second_reader", [node("Gemm", ["x", "w"], ["g"]), node("Relu", ["g"], ["r"]), node("Add", ["g", "r"], ["y"])],
         {"x": x}, {"y": (g + relu(g)).astype(f32)}, initializers={"w": w}, tol=tol)
    # Weights as graph inputs (not constants): BatchNormalization stays
    x, w = rand(1, 2, 5, 5), rand(3, 2, 1, 1)
    s, b, m, v = bn_params(3)
    case("fusion_keep_bn_params_are_inputs",
         [node("Conv", ["x", "w"], ["c"]), node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"])],
         {"x": x, "w": w, "s": s, "b": b, "m": m, "v": v}, {"y": bn_ref(conv_ref(np, x, w), s, b, m, v).astype(f32)}, tol=tol)

    # Kernels the fused models use: trailing-axis ReduceMean (global pooling), per-channel broadcast Mul
    x = rand(2, 7, 5, 5)
    case("reduce_mean_trailing_axes_pool", [node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)], {"x": x},
         {"y": x.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(f32)},
         initializers={"axes": np.array([2, 3], np.int64)}, tol=(1e-6, 1e-6))
    x, sc = rand(2, 6, 4, 3), rand(2, 6, 1, 1)
    case("mul_broadcast_per_channel", [node("Mul", ["x", "s"], ["y"])], {"x": x, "s": sc}, {"y": x * sc})
    x, r = rand(3, 1, 4), rand(5, 1)
    case("sub_broadcast_both_sides", [node("Sub", ["x", "r"], ["y"])], {"x": x, "r": r}, {"y": x - r})

    # torch's _safe_softmax as its decomposition writes it: fully masked rows give 0, not NaN
    x = rand(2, 3, 5, low=-3, high=3)
    x[0, 1, :] = -np.inf
    x[1, 2, 1:3] = -np.inf
    e = np.exp(x.astype(np.float64) - x.max(axis=2, keepdims=True))
    with np.errstate(invalid="ignore"):
        sm = e / e.sum(axis=2, keepdims=True)
    sm[np.isinf(x).all(axis=2)] = 0
    nodes = [node("Softmax", ["x"], ["s"], axis=2), node("Equal", ["x", "neg_inf"], ["eq"]), node("Not", ["eq"], ["ne"]),
             node("Cast", ["ne"], ["ci"], to=api.TensorProto.INT32),
             node("ReduceMax", ["ci", "axes"], ["rm"], keepdims=1), node("Cast", ["rm"], ["any"], to=api.TensorProto.BOOL),
             node("Not", ["any"], ["none"]), node("Where", ["none", "zeros", "s"], ["y"])]
    case("fusion_safe_softmax", nodes, {"x": x}, {"y": sm.astype(f32)},
         initializers={"neg_inf": scalar(-np.inf), "axes": np.array([2], np.int64), "zeros": np.zeros((2, 3, 5), f32)},
         tol=(1e-5, 1e-6))

    # Residual: Conv + BN + Add(another computed tensor) + Relu (ResNet's block end), same shape and broadcast
    x, w = rand(1, 4, 6, 6), rand(4, 4, 3, 3)
    s, b, m, v = bn_params(4)
    nodes = [node("Relu", ["x"], ["idt"]), node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]), node("Add", ["n", "idt"], ["a"]),
             node("Relu", ["a"], ["y"])]
    y = relu(bn_ref(conv_ref(np, x, w, pads=[1, 1, 1, 1]), s, b, m, v) + relu(x))
    case("fusion_conv_bn_add_relu", nodes, {"x": x}, {"y": y.astype(f32)},
         initializers={"w": w, "s": s, "b": b, "m": m, "v": v}, tol=tol)
    # the same on a 7x7 plane (the residual added in the AVX2 GEMM's registers, a dot-product tail)
    x, w = rand(1, 16, 7, 7), rand(16, 16, 3, 3)
    s, b, m, v = bn_params(16)
    y = relu(bn_ref(conv_ref(np, x, w, pads=[1, 1, 1, 1]), s, b, m, v) + relu(x))
    case("fusion_conv_bn_add_relu_7x7", nodes, {"x": x}, {"y": y.astype(f32)},
         initializers={"w": w, "s": s, "b": b, "m": m, "v": v}, tol=tol)
    # 58 and 60 wide (conv.cc's direct_2d reads a padded input in place; the residual, Relu and hardswish
    # are applied as the output is copied out of its grid). Their own generator: the rows after keep their data.
    own = np.random.default_rng(12)
    u = lambda *shape, lo=-1.0, hi=1.0: own.uniform(lo, hi, shape).astype(f32)
    x, w, s, b, m, v = u(1, 6, 5, 58), u(6, 6, 3, 3), u(6), u(6), u(6), u(6, lo=0.5, hi=1.5)
    y = relu(bn_ref(conv_ref(np, x, w, pads=[1, 1, 1, 1]), s, b, m, v) + relu(x))
    case("fusion_conv_bn_add_relu_wide", nodes, {"x": x}, {"y": y.astype(f32)},
         initializers={"w": w, "s": s, "b": b, "m": m, "v": v}, tol=tol)
    x, w, s, b, m, v = u(1, 5, 4, 60), u(9, 5, 3, 3), u(9), u(9), u(9), u(9, lo=0.5, hi=1.5)
    y = hswish(bn_ref(conv_ref(np, x, w, pads=[1, 1, 1, 1]), s, b, m, v))
    case("fusion_conv_bn_hswish_wide", [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                        node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"])]
         + hswish_nodes("n", "y", "hs"), {"x": x}, {"y": y.astype(f32)},
         initializers={"w": w, "s": s, "b": b, "m": m, "v": v, **consts}, tol=tol)
    x, w, zc = rand(2, 3, 5, 5), rand(4, 3, 1, 1), rand(1, 4, 1, 1)
    case("fusion_conv_add_broadcast_input", [node("Conv", ["x", "w"], ["c"]), node("Add", ["z", "c"], ["a"]),
                                             node("Relu", ["a"], ["y"])],
         {"x": x, "z": zc}, {"y": relu(conv_ref(np, x, w) + zc).astype(f32)}, initializers={"w": w}, tol=tol)

    # Unused optional outputs (as torch.export's graphs have them): MaxPool indices, LayerNorm statistics
    x = rand(1, 2, 7, 7)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
    mp = np.stack([np.stack([xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3)) for j in range(4)], -1)
                   for i in range(4)], -2)
    case("fusion_unused_maxpool_indices", [node("MaxPool", ["x"], ["p", "unused_i"], kernel_shape=[3, 3], strides=[2, 2],
                                                pads=[1, 1, 1, 1]), node("Relu", ["p"], ["y"])],
         {"x": x}, {"y": relu(mp).astype(f32)}, tol=tol)
    x, sc, bi = rand(3, 8), rand(8), rand(8)
    x64 = x.astype(np.float64)
    ln = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5) * sc + bi
    case("fusion_unused_layer_norm_stats", [node("LayerNormalization", ["x", "sc", "bi"], ["y", "mean_unused", "inv_unused"])],
         {"x": x}, {"y": ln.astype(f32)}, initializers={"sc": sc, "bi": bi}, tol=tol)

    # Depthwise with stride 2 (refrt splits the padded plane into column phases) and dilation 2
    for name, xs, k, kw in (("s2_k5", (1, 3, 13, 12), 5, dict(strides=[2, 2], pads=[2, 2, 2, 2])),
                            ("s2_k3_asym", (2, 2, 9, 10), 3, dict(strides=[2, 2], pads=[1, 0, 0, 1])),
                            ("s3_dil2", (1, 2, 14, 15), 3, dict(strides=[3, 3], dilations=[2, 2], pads=[1, 2, 2, 1]))):
        x, w, bb = rand(*xs), rand(xs[1], 1, k, k), rand(xs[1])
        y = conv_ref(np, x, w, bb, strides=kw.get("strides"), dil=kw.get("dilations"), pads=kw.get("pads"), group=xs[1])
        case(f"depthwise_{name}_relu", [node("Conv", ["x", "w", "b"], ["c"], group=xs[1], **kw), node("Relu", ["c"], ["y"])],
             {"x": x}, {"y": relu(y).astype(f32)}, initializers={"w": w, "b": bb}, tol=tol)
    # im2col with stride 2 and padding (the first conv of MobileNet / ResNet)
    x, w = rand(1, 3, 11, 10), rand(4, 3, 3, 3)
    case("conv_s2_pad_im2col", [node("Conv", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])], {"x": x},
         {"y": conv_ref(np, x, w, strides=[2, 2], pads=[1, 1, 1, 1]).astype(f32)}, initializers={"w": w}, tol=tol)

    # Products large enough to be split by columns over the thread pool (backend_cases_test also
    # runs every row on a 3-thread pool): MatMul, Gemm with transposed B and a bias, batched MatMul
    a, bm = rand(64, 96), rand(96, 80)
    case("pool_gemm_matmul", [node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": bm},
         {"y": (a.astype(np.float64) @ bm).astype(f32)}, tol=tol)
    bt, cb = rand(80, 96), rand(80)
    case("pool_gemm_gemm_transb_bias", [node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
         {"a": a, "b": bt, "c": cb}, {"y": (0.5 * (a.astype(np.float64) @ bt.T) + 2.0 * cb).astype(f32)}, tol=tol)
    a1 = rand(1, 96)
    case("pool_gemm_gemv_row", [node("MatMul", ["a", "b"], ["y"])], {"a": a1, "b": bm},
         {"y": (a1.astype(np.float64) @ bm).astype(f32)}, tol=tol)
    ab, bb3 = rand(2, 40, 48), rand(2, 48, 70)
    case("pool_gemm_batched", [node("MatMul", ["a", "b"], ["y"])], {"a": ab, "b": bb3},
         {"y": (ab.astype(np.float64) @ bb3).astype(f32)}, tol=tol)
    # Products of at least 2^20 multiply-adds and 16 rows (one call on OpenBLAS's threads with
    # PARITY_REFRT_BLAS_THREADS=1, gemm.h). A local generator, so the rows after these keep their values.
    rng = np.random.default_rng(22)
    a, bm = (rng.uniform(-1, 1, s).astype(f32) for s in ((64, 128), (128, 160)))
    case("pool_gemm_blas_threads_matmul", [node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": bm},
         {"y": (a.astype(np.float64) @ bm).astype(f32)}, tol=tol)
    a, bt, cb = (rng.uniform(-1, 1, s).astype(f32) for s in ((48, 160), (192, 160), (192,)))
    case("pool_gemm_blas_threads_gemm_transb_bias", [node("Gemm", ["a", "b", "c"], ["y"], transB=1, beta=0.5)],
         {"a": a, "b": bt, "c": cb}, {"y": (a.astype(np.float64) @ bt.T + 0.5 * cb).astype(f32)}, tol=tol)
    # Gemm's C broadcast into Y by row blocks over the pool: a column, a full matrix, a scalar
    a, bm = (rng.uniform(-1, 1, s).astype(f32) for s in ((300, 8), (8, 40)))
    for cname, cc in (("column", (300, 1)), ("matrix", (300, 40)), ("scalar", ())):
        cv = rng.uniform(-1, 1, cc).astype(f32)
        case(f"pool_gemm_c_{cname}", [node("Gemm", ["a", "b", "c"], ["y"], beta=1.5)], {"a": a, "b": bm, "c": cv},
             {"y": (a.astype(np.float64) @ bm + 1.5 * cv).astype(f32)}, tol=tol)
    # Decode-sized GEMV split over the pool by bands of B's rows (k >= 64 per thread)
    a1, bk = rand(1, 1, 320), rand(320, 48)
    case("pool_gemm_gemv_k_split", [node("MatMul", ["a", "b"], ["y"])], {"a": a1}, {"y": (a1.astype(np.float64) @ bk).astype(f32)},
         initializers={"b": bk}, tol=tol)
    # (that one is below pool_gemm's size threshold, k * n >= 65536: refrt/src/gemm.h) ... and one past it:
    # on the 3-thread pool 400 rows in 3 bands of 133-134, added in band order. Drawn from a generator of
    # its own, so that the rows after it keep their data (the rows share one seeded stream).
    own = np.random.default_rng(11)
    a2, bk2 = own.uniform(-1, 1, (1, 1, 400)).astype(f32), own.uniform(-1, 1, (400, 170)).astype(f32)
    case("pool_gemm_gemv_k_bands", [node("MatMul", ["a", "b"], ["y"])], {"a": a2},
         {"y": (a2.astype(np.float64) @ bk2).astype(f32)}, initializers={"b": bk2}, tol=tol)

    # Transpose of the last two axes folded into the MatMul (attention's q @ k^T as torch decomposes
    # it: k^T scaled, batch dims merged by a Reshape), scalar first or second, Div, a Reshape that
    # regroups the last dims (the kernel then materialises the transpose), and k^T read twice (kept).
    q, k = rand(2, 3, 4, 8), rand(2, 3, 5, 8)
    kt = k.astype(np.float64).transpose(0, 1, 3, 2)
    sc = {"s": scalar(0.5), "shape3": np.array([6, 8, 5], np.int64), "q3": np.array([6, 4, 8], np.int64)}
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("Mul", ["kt", "s"], ["kts"]),
             node("Identity", ["kts"], ["kti"]), node("Reshape", ["kti", "shape3"], ["kt3"]),
             node("Reshape", ["q", "q3"], ["qr"]), node("MatMul", ["qr", "kt3"], ["y"])]
    want = (q.astype(np.float64).reshape(6, 4, 8) @ (kt * 0.5).reshape(6, 8, 5)).astype(f32)
    case("fusion_transpose_matmul_scaled_reshape", nodes, {"q": q, "k": k}, {"y": want}, initializers=sc, tol=tol)
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("Mul", ["s", "kt"], ["kts"]),
             node("Div", ["kts", "s"], ["ktd"]), node("MatMul", ["q", "ktd"], ["y"])]
    case("fusion_transpose_matmul_scalar_first_div", nodes, {"q": q, "k": k}, {"y": (q @ kt).astype(f32)},
         initializers={"s": scalar(0.25)}, tol=tol)
    x2 = rand(2, 6, 4)  # Transpose -> [2, 4, 6] -> Reshape [2, 8, 3]: the last dims change
    a2 = rand(2, 5, 8)
    nodes = [node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]), node("Reshape", ["xt", "shape"], ["xr"]),
             node("MatMul", ["a", "xr"], ["y"])]
    want = (a2.astype(np.float64) @ x2.transpose(0, 2, 1).reshape(2, 8, 3)).astype(f32)
    case("fusion_transpose_matmul_reshape_regroups", nodes, {"a": a2, "x": x2}, {"y": want},
         initializers={"shape": np.array([2, 8, -1], np.int64)}, tol=tol)
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["y"]),
             node("Neg", ["kt"], ["z"])]
    case("fusion_keep_transpose_read_twice", nodes, {"q": q, "k": k}, {"y": (q @ kt).astype(f32), "z": (-kt).astype(f32)},
         tol=tol)

    # Batched products spread over the pool as whole products, cut into column blocks when the count
    # does not divide by the threads (backend_cases_test's 3-thread pool: 5 products of 72 columns in
    # 3 blocks, 7 with B transposed and folded (attention's q k^T) in 3 blocks of 16 columns; a batch of
    # 12 broadcast from [3, 1] x [1, 4] whole). A generator of their own: the rows above keep their data.
    own = np.random.default_rng(23)
    ab, bb5 = own.uniform(-1, 1, (5, 24, 32)).astype(f32), own.uniform(-1, 1, (5, 32, 72)).astype(f32)
    case("pool_batched_matmul_count5", [node("MatMul", ["a", "b"], ["y"])], {"a": ab, "b": bb5},
         {"y": (ab.astype(np.float64) @ bb5).astype(f32)}, tol=tol)
    q, k = own.uniform(-1, 1, (1, 7, 24, 16)).astype(f32), own.uniform(-1, 1, (1, 7, 48, 16)).astype(f32)
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["y"])]
    case("pool_batched_matmul_transb_count7", nodes, {"q": q, "k": k},
         {"y": (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2)).astype(f32)}, tol=tol)
    ab, bb = own.uniform(-1, 1, (3, 1, 20, 24)).astype(f32), own.uniform(-1, 1, (1, 4, 24, 50)).astype(f32)
    case("pool_batched_matmul_broadcast12", [node("MatMul", ["a", "b"], ["y"])], {"a": ab, "b": bb},
         {"y": (ab.astype(np.float64) @ bb).astype(f32)}, tol=tol)

    # Constant B through oneDNN's matmul (refrt/kernels/matmul_dnnl.h): B packed once, in column blocks of
    # >= 64 per thread (200 columns: 3 blocks on the 3-thread pool, 64 + 64 + 72) or whole with A's rows
    # split (40 columns), bias and GELU after each block; Gemm's transB and a [1, N] C as the bias row;
    # alpha / a full C keep refrt's own GEMM (pool_gemm_* above).
    xw, w200, b200 = own.uniform(-1, 1, (2, 5, 48)).astype(f32), own.uniform(-1, 1, (48, 200)).astype(f32), \
        own.uniform(-1, 1, 200).astype(f32)
    gelu_nodes = [node("Div", ["h", "sqrt2"], ["d"]), node("Erf", ["d"], ["e"]), node("Add", ["e", "one"], ["e1"]),
                  node("Mul", ["h", "e1"], ["m"]), node("Mul", ["m", "half"], ["y"])]
    h = xw.astype(np.float64) @ w200 + b200
    case("onednn_matmul_add_gelu_column_blocks", [node("MatMul", ["x", "w"], ["mm"]), node("Add", ["mm", "b"], ["h"])] +
         gelu_nodes, {"x": xw}, {"y": gelu(h).astype(f32)},
         initializers={"w": w200, "b": b200, "sqrt2": scalar(np.sqrt(2)), "one": scalar(1), "half": scalar(0.5)}, tol=tol)
    xr, w40 = own.uniform(-1, 1, (37, 64)).astype(f32), own.uniform(-1, 1, (64, 40)).astype(f32)
    case("onednn_matmul_split_rows", [node("MatMul", ["x", "w"], ["y"])], {"x": xr},
         {"y": (xr.astype(np.float64) @ w40).astype(f32)}, initializers={"w": w40}, tol=tol)
    xg, wt, c1 = own.uniform(-1, 1, (7, 80)).astype(f32), own.uniform(-1, 1, (200, 80)).astype(f32), \
        own.uniform(-1, 1, (1, 200)).astype(f32)
    case("onednn_gemm_transb_bias_row", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)], {"x": xg},
         {"y": (xg.astype(np.float64) @ wt.T.astype(np.float64) + c1).astype(f32)},
         initializers={"w": wt, "c": c1}, tol=tol)
    # A small product (refrt's GEMV rows, gemm.h) whose C is a bias near 1 and whose 128 products are small:
    # the sum must start from zero and meet the bias once (summed into the bias, each product is rounded at
    # the bias's magnitude: ~1e-6 off, as a spatial transformer's theta was); a tight tolerance tells.
    xs, ws, bs = own.uniform(0, 1, (3, 128)).astype(f32), own.uniform(-0.01, 0.01, (128, 6)).astype(f32), \
        (1 + own.uniform(-0.1, 0.1, 6)).astype(f32)
    case("gemm_small_bias_meets_the_sum_once", [node("Gemm", ["x", "w", "b"], ["y"])], {"x": xs},
         {"y": (xs.astype(np.float64) @ ws.astype(np.float64) + bs).astype(f32)},
         initializers={"w": ws, "b": bs}, tol=(3e-7, 1e-7))
    case("onednn_gemm_decode_row_relu", [node("Gemm", ["x", "w", "c"], ["g"], transB=1), node("Relu", ["g"], ["y"])],
         {"x": xg[:1]}, {"y": np.maximum(xg[:1].astype(np.float64) @ wt.T.astype(np.float64) + c1, 0).astype(f32)},
         initializers={"w": wt, "c": c1}, tol=tol)

    # Safe softmax over rows long enough for the vector loop (37: four vectors and a tail of 5): fully
    # masked rows (0), causally masked rows (-inf after the diagonal), and spreads past exp's float range
    # (x - max < -87: exp is then 0 or subnormal, far below the output's resolution).
    x = own.uniform(-3, 3, (2, 3, 6, 37)).astype(f32)
    x[..., 1, :] *= 40
    x[0, 1, 2, :] = -np.inf
    x[1, :, 3:, :] = np.where(np.arange(37) > np.arange(3, 6)[:, None] * 6, -np.inf, x[1, :, 3:, :])
    e = np.exp(x.astype(np.float64) - x.max(axis=3, keepdims=True))
    with np.errstate(invalid="ignore"):
        sm = e / e.sum(axis=3, keepdims=True)
    sm[np.isinf(x).all(axis=3)] = 0
    nodes = [node("Softmax", ["x"], ["s"], axis=3), node("Equal", ["x", "neg_inf"], ["eq"]), node("Not", ["eq"], ["ne"]),
             node("Cast", ["ne"], ["ci"], to=api.TensorProto.INT32),
             node("ReduceMax", ["ci", "axes"], ["rm"], keepdims=1), node("Cast", ["rm"], ["any"], to=api.TensorProto.BOOL),
             node("Not", ["any"], ["none"]), node("Where", ["none", "zeros", "s"], ["y"])]
    case("fusion_safe_softmax_masked_rows", nodes, {"x": x}, {"y": sm.astype(f32)},
         initializers={"neg_inf": scalar(-np.inf), "axes": np.array([3], np.int64), "zeros": np.zeros(x.shape, f32)},
         tol=(1e-5, 1e-6))
    # the same rows as Parity's exporter writes the safe softmax (scaled_dot_product_attention with a mask):
    # Where(Equal(ReduceMax(x), -inf), 0, Softmax(x)) with a scalar zero
    nodes = [node("Softmax", ["x"], ["s"], axis=3), node("ReduceMax", ["x", "axes"], ["rm"], keepdims=1),
             node("Equal", ["rm", "neg_inf"], ["dead"]), node("Where", ["dead", "zero", "s"], ["y"])]
    case("fusion_safe_softmax_parity_spelling", nodes, {"x": x}, {"y": sm.astype(f32)},
         initializers={"neg_inf": scalar(-np.inf), "axes": np.array([3], np.int64), "zero": scalar(0.0)},
         tol=(1e-5, 1e-6))

    # ONNX's own Gelu node (opset 20, exact form) after a product: an epilogue of the product (oneDNN's
    # gelu_erf post-op on the 200-column constant B, refrt's vmath GELU after its own GEMM), as the decomposed
    # form above; the tanh form is not an epilogue and stays a node.
    own = np.random.default_rng(20)
    xq, wq, bq = own.uniform(-2, 2, (6, 48)).astype(f32), own.uniform(-1, 1, (200, 48)).astype(f32), \
        own.uniform(-1, 1, 200).astype(f32)
    hq = xq.astype(np.float64) @ wq.T.astype(np.float64) + bq
    case("fusion_gemm_gelu_node", [node("Gemm", ["x", "w", "b"], ["g"], transB=1), node("Gelu", ["g"], ["y"])],
         {"x": xq}, {"y": gelu(hq).astype(f32)}, initializers={"w": wq, "b": bq}, tol=tol, opset=20)
    xm, wm = own.uniform(-3, 3, (2, 3, 8)).astype(f32), own.uniform(-1, 1, (8, 5)).astype(f32)
    case("fusion_matmul_gelu_node", [node("MatMul", ["x", "w"], ["h"]), node("Gelu", ["h"], ["y"], approximate="none")],
         {"x": xm}, {"y": gelu(xm.astype(np.float64) @ wm).astype(f32)}, initializers={"w": wm}, tol=tol, opset=20)
    ht = xm.astype(np.float64) @ wm
    case("gemm_then_gelu_tanh_node", [node("MatMul", ["x", "w"], ["h"]), node("Gelu", ["h"], ["y"], approximate="tanh")],
         {"x": xm}, {"y": (0.5 * ht * (1 + np.tanh(np.sqrt(2 / np.pi) * (ht + 0.044715 * ht ** 3)))).astype(f32)},
         initializers={"w": wm}, tol=tol, opset=20)

    # Conv chains hand each other oneDNN's channel blocks (optimize/keep_conv_blocks.cc) where every reader of a
    # conv's Y is a conv: a ResNet stage of two images (a residual from a graph input in NCHW, a stride-2 3x3 and a
    # 1x1 shortcut, whose Y is read as the last conv's added input); one image with a value that is also a graph
    # output (it stays NCHW) and a chain ending in a MaxPool; 256 channels (two threads each write half of every
    # pixel's channels) with a residual 1x1 conv. Weights scaled by 1 / sqrt(fan-in) keep every layer's values near 1.
    own = np.random.default_rng(4612)

    def conv_w(m, c, k):
        return (own.standard_normal((m, c, k, k)) / np.sqrt(c * k * k)).astype(f32)

    def conv_b(m):
        return own.uniform(-0.5, 0.5, m).astype(f32)

    x = own.standard_normal((2, 16, 12, 12)).astype(f32)
    ws = {"w1": conv_w(16, 16, 3), "w2": conv_w(16, 16, 3), "w3": conv_w(32, 16, 3), "wd": conv_w(32, 16, 1),
          "w4": conv_w(32, 32, 3)}
    bs = {f"b{k}": conv_b(ws[f"w{k}"].shape[0]) for k in ("1", "2", "3", "d", "4")}
    p1 = [1, 1, 1, 1]
    a = relu(conv_ref(np, x, ws["w1"], bs["b1"], pads=p1))
    b = relu(conv_ref(np, a, ws["w2"], bs["b2"], pads=p1) + x)
    c = relu(conv_ref(np, b, ws["w3"], bs["b3"], strides=[2, 2], pads=p1))
    d = conv_ref(np, b, ws["wd"], bs["bd"], strides=[2, 2])
    e = relu(conv_ref(np, c, ws["w4"], bs["b4"], pads=p1) + d)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], pads=p1), node("Relu", ["c1"], ["a"]),
             node("Conv", ["a", "w2", "b2"], ["c2"], pads=p1), node("Add", ["c2", "x"], ["s2"]),
             node("Relu", ["s2"], ["b"]),
             node("Conv", ["b", "w3", "b3"], ["c3"], pads=p1, strides=[2, 2]), node("Relu", ["c3"], ["c"]),
             node("Conv", ["b", "wd", "bd"], ["d"], strides=[2, 2]),
             node("Conv", ["c", "w4", "b4"], ["c4"], pads=p1), node("Add", ["c4", "d"], ["s4"]),
             node("Relu", ["s4"], ["e"])]
    case("fusion_conv_blocks_resnet_stage", nodes, {"x": x}, {"e": e.astype(f32)}, initializers={**ws, **bs},
         tol=tol, threads=(2,))

    x = own.standard_normal((1, 32, 9, 9)).astype(f32)
    ws = {"w1": conv_w(32, 32, 3), "w2": conv_w(48, 32, 3), "w3": conv_w(48, 48, 3)}
    bs = {"b1": conv_b(32), "b2": conv_b(48), "b3": conv_b(48)}
    c1 = relu(conv_ref(np, x, ws["w1"], bs["b1"], pads=p1))
    c2 = relu(conv_ref(np, c1, ws["w2"], bs["b2"], pads=p1))
    c3 = conv_ref(np, c2, ws["w3"], bs["b3"], pads=p1)
    y = np.stack([[c3[0, ch, i:i + 2, j:j + 2].max() for i in range(0, 8, 2) for j in range(0, 8, 2)]
                  for ch in range(48)]).reshape(1, 48, 4, 4)
    nodes = [node("Conv", ["x", "w1", "b1"], ["k1"], pads=p1), node("Relu", ["k1"], ["c1"]),
             node("Conv", ["c1", "w2", "b2"], ["k2"], pads=p1), node("Relu", ["k2"], ["c2"]),
             node("Conv", ["c2", "w3", "b3"], ["c3"], pads=p1),
             node("MaxPool", ["c3"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    case("fusion_conv_blocks_output_and_pool", nodes, {"x": x}, {"c1": c1.astype(f32), "y": y.astype(f32)},
         initializers={**ws, **bs}, tol=tol)

    x = own.standard_normal((1, 32, 6, 6)).astype(f32)
    ws = {"w1": conv_w(256, 32, 3), "wr": conv_w(256, 256, 1), "w2": conv_w(32, 256, 3)}
    bs = {"b1": conv_b(256), "br": conv_b(256), "b2": conv_b(32)}
    h = relu(conv_ref(np, x, ws["w1"], bs["b1"], pads=p1))
    r = relu(conv_ref(np, h, ws["wr"], bs["br"]) + h)
    y = relu(conv_ref(np, r, ws["w2"], bs["b2"], pads=p1))
    nodes = [node("Conv", ["x", "w1", "b1"], ["k1"], pads=p1), node("Relu", ["k1"], ["h"]),
             node("Conv", ["h", "wr", "br"], ["kr"]), node("Add", ["kr", "h"], ["sr"]), node("Relu", ["sr"], ["r"]),
             node("Conv", ["r", "w2", "b2"], ["k2"], pads=p1), node("Relu", ["k2"], ["y"])]
    case("fusion_conv_blocks_256_channels", nodes, {"x": x}, {"y": y.astype(f32)}, initializers={**ws, **bs},
         tol=tol, threads=(2,))

    # MatMuls of one A with constant weights (q / k / v, gate / up): one FusedSiblingMatMul (group_sibling_matmuls).
    # One row streams the weights side by side (at two threads in K bands, which the 160-column products alone are
    # too small for); several rows run each product on its own. A generator of their own: rows added here leave the
    # shared one's values for the tables after this one as they were.
    own = np.random.default_rng(4747)

    def rand(*shape):
        return own.uniform(-1.0, 1.0, size=shape).astype(f32)

    wq, wk, wv = rand(64, 64), rand(64, 16), rand(64, 16)
    mm3 = [node("MatMul", ["x", "wq"], ["q"]), node("MatMul", ["x", "wk"], ["k"]), node("MatMul", ["x", "wv"], ["v"])]
    for name, shape in [("fusion_siblings_decode_qkv", (1, 1, 64)), ("fusion_siblings_rows_qkv", (3, 5, 64))]:
        x = rand(*shape)
        case(name, mm3, {"x": x}, {o: (x.astype(np.float64) @ w).astype(f32) for o, w in [("q", wq), ("k", wk), ("v", wv)]},
             initializers={"wq": wq, "wk": wk, "wv": wv}, tol=tol, threads=(1, 2))
    x, wg, wu = rand(1, 256), rand(256, 160), rand(256, 160)
    case("fusion_siblings_decode_gate_up", [node("MatMul", ["x", "wg"], ["g"]), node("MatMul", ["x", "wu"], ["u"]),
                                            node("Mul", ["g", "u"], ["y"])], {"x": x},
         {"y": ((x.astype(np.float64) @ wg) * (x.astype(np.float64) @ wu)).astype(f32)},
         initializers={"wg": wg, "wu": wu}, tol=tol, threads=(1, 2))
