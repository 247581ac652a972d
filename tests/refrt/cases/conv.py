"""Conv and ConvTranspose: numpy oracles written as explicit loops over output (conv) or input
(transpose) positions, in float64; sweeps over rank 1-3, groups, depthwise, strides, dilations,
pads and auto_pad."""
import itertools


def _pads(np, in_sp, k, strides, dil, pads, auto_pad):
    r = len(in_sp)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = [-(-in_sp[d] // strides[d]) for d in range(r)]
        begin, end = [], []
        for d in range(r):
            total = max(0, (out[d] - 1) * strides[d] + (k[d] - 1) * dil[d] + 1 - in_sp[d])
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            begin.append(b)
            end.append(total - b)
        return begin, end
    if auto_pad == "VALID" or pads is None:
        return [0] * r, [0] * r
    return list(pads[:r]), list(pads[r:])


def conv_ref(np, x, w, b=None, strides=None, dil=None, pads=None, group=1, auto_pad="NOTSET"):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    in_sp, k = x.shape[2:], w.shape[2:]
    r = len(in_sp)
    strides = strides or [1] * r
    dil = dil or [1] * r
    pb, pe = _pads(np, in_sp, k, strides, dil, pads, auto_pad)
    out_sp = [(in_sp[d] + pb[d] + pe[d] - (k[d] - 1) * dil[d] - 1) // strides[d] + 1 for d in range(r)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pb[d], pe[d]) for d in range(r)])
    y = np.zeros((n, m, *out_sp))
    mg = m // group
    for o in itertools.product(*[range(s) for s in out_sp]):
        for kk in itertools.product(*[range(s) for s in k]):
            idx = tuple(o[d] * strides[d] + kk[d] * dil[d] for d in range(r))
            for g in range(group):
                xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]  # [n, cg]
                ws = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kk]  # [mg, cg]
                y[(slice(None), slice(g * mg, (g + 1) * mg)) + o] += xs @ ws.T
    if b is not None:
        y += b.astype(np.float64).reshape((1, m) + (1,) * r)
    return y


def conv_transpose_ref(np, x, w, b=None, strides=None, dil=None, pads=None, group=1, output_padding=None,
                       output_shape=None, auto_pad="NOTSET"):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    mg = w.shape[1]
    m = mg * group
    cg = c // group
    in_sp, k = x.shape[2:], w.shape[2:]
    r = len(in_sp)
    strides = strides or [1] * r
    dil = dil or [1] * r
    op = output_padding or [0] * r
    full = [strides[d] * (in_sp[d] - 1) + op[d] + (k[d] - 1) * dil[d] + 1 for d in range(r)]
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [in_sp[d] * strides[d] for d in range(r)]
    if output_shape is not None:
        total = [full[d] - output_shape[d] for d in range(r)]
        pb = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
    else:
        pb = list(pads[:r]) if pads else [0] * r
        output_shape = [full[d] - pb[d] - (pads[d + r] if pads else 0) for d in range(r)]
    y = np.zeros((n, m, *full))  # unpadded canvas, cropped at the end
    for i in itertools.product(*[range(s) for s in in_sp]):
        for kk in itertools.product(*[range(s) for s in k]):
            o = tuple(i[d] * strides[d] + kk[d] * dil[d] for d in range(r))
            for g in range(group):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + i]  # [n, cg]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]  # [cg, mg]
                y[(slice(None), slice(g * mg, (g + 1) * mg)) + o] += xs @ ws
    y = y[(slice(None), slice(None)) + tuple(slice(pb[d], pb[d] + output_shape[d]) for d in range(r))]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, m) + (1,) * r)
    return y


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-4, 1e-5)
    # name: x shape, w shape, attrs
    convs = {
        "2d_basic": ((1, 3, 7, 7), (4, 3, 3, 3), {}),
        "2d_batch_pads_strides": ((2, 3, 9, 8), (5, 3, 3, 2), dict(pads=[1, 0, 2, 1], strides=[2, 3])),
        "2d_dilations": ((1, 2, 10, 9), (3, 2, 3, 3), dict(dilations=[2, 3], pads=[1, 1, 1, 1])),
        "2d_groups": ((2, 6, 6, 5), (4, 3, 3, 3), dict(group=2, pads=[1, 1, 1, 1])),
        "2d_depthwise": ((2, 4, 7, 6), (4, 1, 3, 3), dict(group=4, pads=[1, 1, 1, 1], strides=[2, 1])),
        "2d_depthwise_multiplier": ((1, 3, 5, 5), (6, 1, 3, 3), dict(group=3)),
        "2d_pointwise": ((2, 8, 5, 3), (6, 8, 1, 1), {}),
        "2d_pointwise_strided": ((1, 4, 6, 7), (3, 4, 1, 1), dict(strides=[2, 2])),
        "2d_same_upper": ((1, 2, 7, 6), (3, 2, 4, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
        "2d_same_lower": ((1, 2, 7, 6), (3, 2, 4, 3), dict(auto_pad="SAME_LOWER", strides=[2, 1])),
        "2d_valid": ((1, 2, 7, 6), (3, 2, 3, 2), dict(auto_pad="VALID", strides=[2, 2])),
        "2d_kernel_shape_attr": ((1, 1, 5, 5), (1, 1, 3, 3), dict(kernel_shape=[3, 3])),
        # Shapes of the AVX2 GEMM path (refrt/kernels/conv_gemm.h): "same" stride-1 convs packed straight
        # from the input (several row chunks, dilated, asymmetric pads, wide kernels, groups), row counts
        # not a multiple of 6, more than 120 rows and K > 256 (the blocked loops), 1-column tails (7x7
        # planes), strided convs through the row-by-row im2col.
        "2d_same_multi_chunk": ((1, 20, 34, 33), (13, 20, 3, 3), dict(pads=[1, 1, 1, 1])),
        "2d_same_dilated": ((1, 5, 19, 21), (7, 5, 3, 3), dict(pads=[2, 2, 2, 2], dilations=[2, 2])),
        "2d_same_asymmetric_pads": ((1, 4, 11, 16), (5, 4, 3, 3), dict(pads=[0, 2, 2, 0])),
        "2d_same_1x7": ((1, 3, 6, 10), (4, 3, 1, 7), dict(pads=[0, 3, 0, 3])),
        "2d_same_5x5_groups": ((1, 8, 12, 11), (10, 4, 5, 5), dict(group=2, pads=[2, 2, 2, 2])),
        "2d_big_m_k": ((1, 32, 20, 20), (125, 32, 3, 3), dict(pads=[1, 1, 1, 1])),
        "2d_deep_k_7x7": ((2, 40, 7, 7), (130, 40, 3, 3), dict(pads=[1, 1, 1, 1])),
        "2d_pointwise_7x7_deep": ((1, 300, 7, 7), (20, 300, 1, 1), {}),
        "2d_stride2_generic": ((1, 6, 15, 16), (9, 6, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
        "2d_stride2_wide_7x7": ((1, 3, 40, 41), (5, 3, 7, 7), dict(pads=[3, 3, 3, 3], strides=[2, 2])),
        # a strided conv on a small plane with many channels: on a pool, the threads share its one column
        # chunk (each im2col's a range of input channels) and then split its output channels
        "2d_stride2_small_plane_many_channels": ((1, 64, 13, 13), (50, 64, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
        # stride-1 convs >= 56 wide read a padded input in place (conv.cc's direct_2d): several row
        # chunks, groups, dilation with asymmetric pads, a 1x5 kernel
        "2d_direct_wide_chunks": ((1, 4, 20, 64), (5, 4, 3, 3), dict(pads=[1, 1, 1, 1])),
        "2d_direct_wide_dilated_groups": ((2, 6, 9, 58), (8, 3, 3, 3), dict(group=2, dilations=[2, 2], pads=[2, 1, 1, 3])),
        "2d_direct_wide_1x5": ((1, 3, 5, 60), (7, 3, 1, 5), dict(pads=[0, 2, 0, 2])),
        "2d_stem_3x3_s2": ((1, 3, 34, 35), (16, 3, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
        # Depthwise on small planes, 8 channels per vector (refrt/kernels/conv_depthwise.h): a partial
        # block of channels, strides, dilations, asymmetric pads, rows not a multiple of 4 columns.
        "2d_depthwise_5x5_s2_partial_block": ((1, 12, 13, 14), (12, 1, 5, 5), dict(group=12, pads=[2, 2, 2, 2], strides=[2, 2])),
        "2d_depthwise_dilated_asymmetric": ((2, 16, 9, 10), (16, 1, 3, 3), dict(group=16, pads=[1, 2, 0, 1], dilations=[2, 1])),
        "2d_depthwise_odd_plane": ((1, 9, 7, 7), (9, 1, 3, 3), dict(group=9, pads=[1, 1, 1, 1])),
        "2d_depthwise_s2_unpadded": ((1, 8, 11, 9), (8, 1, 3, 2), dict(group=8, strides=[2, 3])),
        # The AVX-512 path (one channel at a time, column phases per stride, up to 8 vectors of 16 outputs a row):
        # rows wider than 8 vectors (a second pass), odd pads with stride 2 (the vector de-interleave from an odd
        # column), stride 3, a 7x7 kernel, dilation with stride, inputs wider than 32 columns with a scalar tail.
        "2d_depthwise_wide_rows": ((1, 3, 5, 140), (3, 1, 3, 3), dict(group=3, pads=[1, 1, 1, 1])),
        "2d_depthwise_s2_odd_pad": ((2, 5, 17, 75), (5, 1, 3, 3), dict(group=5, pads=[1, 1, 0, 2], strides=[2, 2])),
        "2d_depthwise_s3_7x7": ((1, 4, 23, 41), (4, 1, 7, 7), dict(group=4, pads=[3, 3, 3, 3], strides=[3, 3])),
        "2d_depthwise_dilated_s2": ((1, 6, 20, 37), (6, 1, 3, 3), dict(group=6, pads=[2, 2, 2, 2], dilations=[2, 2],
                                                                        strides=[1, 2])),
        # The AVX2 form of those phases (8 outputs a vector) takes output planes over 16 x 16 at the avx2 level: a
        # stride-2 split from an even pad, 16 columns a step (MobileNetV3's 3x3 stride 2 on 56 x 56), and rows whose
        # last vector is partial (28 = 3 x 8 + 4).
        "2d_depthwise_s2_even_pad_56": ((1, 3, 40, 56), (3, 1, 3, 3), dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2])),
        "1d": ((2, 3, 11), (4, 3, 3), dict(pads=[1, 2], strides=[2])),
        "1d_dilated_groups": ((1, 4, 13), (6, 2, 3), dict(dilations=[3], group=2)),
        # an audio stem's two convs (Whisper: k=3, then k=3 stride 2), 17 output channels (a partial block)
        "1d_stem_k3": ((2, 20, 50), (17, 20, 3), dict(pads=[1, 1])),
        "1d_stem_k3_s2_dilated": ((1, 17, 49), (24, 17, 3), dict(pads=[1, 1], strides=[2], dilations=[2])),
        "3d": ((1, 2, 5, 6, 4), (3, 2, 3, 2, 3), dict(pads=[1, 0, 1, 1, 1, 0], strides=[1, 2, 1])),
        "3d_same_upper": ((2, 2, 4, 5, 3), (2, 1, 2, 3, 2), dict(auto_pad="SAME_UPPER", group=2)),
    }
    for name, (xs, ws, attrs) in convs.items():
        x, w, b = rand(*xs), rand(*ws), rand(ws[0])
        want = conv_ref(np, x, w, b, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                        attrs.get("group", 1), attrs.get("auto_pad", "NOTSET")).astype(np.float32)
        case(f"conv_{name}", [node("Conv", ["x", "w", "b"], ["y"], **attrs)], {"x": x, "w": w, "b": b},
             {"y": want}, tol=tol)
    # The same dense 1-D and 2-D convs with W and B constants of the model: these run through oneDNN
    # (refrt/kernels/conv_dnnl.h) where the ISA level allows avx2, the rows above through refrt's own kernels.
    for name, (xs, ws, attrs) in convs.items():
        if len(xs) not in (3, 4) or attrs.get("group", 1) != 1 or int(np.prod(ws[2:])) == 1:
            continue
        x, w, b = rand(*xs), rand(*ws), rand(ws[0])
        want = conv_ref(np, x, w, b, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                        1, attrs.get("auto_pad", "NOTSET")).astype(np.float32)
        case(f"conv_const_w_{name}", [node("Conv", ["x", "w", "b"], ["y"], **attrs)], {"x": x},
             {"y": want}, initializers={"w": w, "b": b}, tol=tol)
    x, w = rand(1, 2, 6, 5, dtype=np.float64), rand(3, 2, 3, 3, dtype=np.float64)
    case("conv_f64_no_bias", [node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], {"x": x, "w": w},
         {"y": conv_ref(np, x, w, pads=[1, 1, 1, 1])}, tol=(1e-12, 1e-12))
    x, w = rand(1, 2, 5, 5), rand(2, 2, 3, 3)
    case("conv_opset7", [node("Conv", ["x", "w"], ["y"])], {"x": x, "w": w},
         {"y": conv_ref(np, x, w).astype(np.float32)}, opset=7, tol=tol)
    for dt in (np.float16,):
        x, w = rand(1, 3, 6, 6).astype(dt), rand(4, 3, 3, 3).astype(dt)
        want = conv_ref(np, x, w, pads=[1, 1, 1, 1]).astype(dt)
        case("conv_f16_computed_in_f32", [node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], {"x": x, "w": w},
             {"y": want}, tol=(2e-3, 2e-3))

    transposes = {
        "2d_basic": ((1, 3, 4, 4), (3, 2, 3, 3), {}),
        "2d_strides_pads": ((2, 2, 3, 4), (2, 3, 3, 2), dict(strides=[2, 3], pads=[1, 0, 0, 1])),
        "2d_output_padding": ((1, 2, 3, 3), (2, 2, 3, 3), dict(strides=[2, 2], output_padding=[1, 1])),
        "2d_dilations_groups": ((1, 4, 3, 4), (4, 2, 2, 3), dict(dilations=[2, 2], group=2)),
        "2d_output_shape": ((1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[3, 2], output_shape=[8, 6])),
        "2d_same_upper": ((1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
        "2d_same_lower": ((1, 1, 3, 4), (1, 2, 3, 3), dict(strides=[2, 2], auto_pad="SAME_LOWER")),
        "1d": ((2, 3, 5), (3, 2, 3), dict(strides=[2], pads=[1, 1])),
        "3d": ((1, 2, 3, 2, 3), (2, 2, 2, 3, 2), dict(strides=[2, 1, 2])),
    }
    for name, (xs, ws, attrs) in transposes.items():
        x, w, b = rand(*xs), rand(*ws), rand(ws[1] * attrs.get("group", 1))
        want = conv_transpose_ref(np, x, w, b, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                                  attrs.get("group", 1), attrs.get("output_padding"), attrs.get("output_shape"),
                                  attrs.get("auto_pad", "NOTSET")).astype(np.float32)
        case(f"convtranspose_{name}", [node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)],
             {"x": x, "w": w, "b": b}, {"y": want}, tol=tol)
    x, w = rand(1, 2, 3, 3, dtype=np.float64), rand(2, 3, 2, 2, dtype=np.float64)
    case("convtranspose_f64_no_bias", [node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])], {"x": x, "w": w},
         {"y": conv_transpose_ref(np, x, w, strides=[2, 2])}, tol=(1e-12, 1e-12))
    # 256+ input channels with constant weights: on AVX-512, oneDNN's channels-last brgconv (conv_dnnl.cc,
    # kChannelsLast), X moved channels-last in pixel runs over the pool, Y back into NCHW rows: a 3x3 with a bias
    # and an odd plane, and Conv + residual Add + Relu (one fused node), float32 and float16 (float32 products on the
    # widened weights, rounded once). Multiples of 1/8 up to 1/2, so that float32 sums of 2304 products are exact in
    # any order (random values leave cancelling sums 1e-5 from float64, past the tolerance, and the paths' sums
    # differ). Their own generator: the shared one would shift every later table's values.
    own = np.random.default_rng(4610)
    for dt, t in ((np.float32, tol), (np.float16, (2.0 ** -10, 2.0 ** -24))):
        tag = "f32" if dt is np.float32 else "f16"
        x, w, b = ((own.integers(-4, 5, s) / 8).astype(dt) for s in ((2, 256, 9, 7), (40, 256, 3, 3), (40,)))
        z = (own.integers(-4, 5, (2, 40, 9, 7)) / 8).astype(dt)
        conv = conv_ref(np, x, w, b, pads=[1, 1, 1, 1])
        case(f"conv_channels_last_256_{tag}", [node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], {"x": x},
             {"y": conv.astype(dt)}, initializers={"w": w, "b": b}, tol=t, threads=(2,))
        case(f"conv_channels_last_residual_relu_{tag}",
             [node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), node("Add", ["c", "z"], ["a"]),
              node("Relu", ["a"], ["y"])], {"x": x, "z": z}, {"y": np.maximum(conv + z, 0).astype(dt)},
             initializers={"w": w, "b": b}, tol=t, threads=(2,),
             ort_differs=None if dt is np.float32 else "onnxruntime rounds the conv, the Add and the Relu each")
    # Strided 1x1 convs (ResNet's downsampling shortcuts; on AVX-512 with oneDNN's sgemm, conv.cc samples X's pixels
    # and runs the pointwise product): two images, an odd plane (15 x 15 -> 8 x 8), unequal strides (2, 1) and (3, 2),
    # with a constant and a computed W, and the shortcut with the block's residual Add and Relu fused into it.
    own = np.random.default_rng(4611)
    strided = {"s2_batch_odd": ((2, 24, 15, 15), (40, 24, 1, 1), [2, 2]),
               "s2x1": ((1, 16, 10, 9), (20, 16, 1, 1), [2, 1]),
               "s3x2": ((1, 32, 13, 14), (17, 32, 1, 1), [3, 2])}
    for name, (xs, ws, strides) in strided.items():
        x, w, b = (own.standard_normal(s).astype(np.float32) for s in (xs, ws, ws[:1]))
        want = conv_ref(np, x, w, b, strides=strides).astype(np.float32)
        conv = [node("Conv", ["x", "w", "b"], ["y"], strides=strides)]
        case(f"conv_pointwise_strided_{name}", conv, {"x": x, "w": w, "b": b}, {"y": want}, tol=tol, threads=(2,))
        case(f"conv_pointwise_strided_const_w_{name}", conv, {"x": x}, {"y": want}, initializers={"w": w, "b": b},
             tol=tol)
    x, w, b = (own.standard_normal(s).astype(np.float32) for s in ((1, 64, 16, 16), (128, 64, 1, 1), (128,)))
    z = own.standard_normal((1, 128, 8, 8)).astype(np.float32)
    want = np.maximum(conv_ref(np, x, w, b, strides=[2, 2]) + z, 0).astype(np.float32)
    case("conv_pointwise_strided_residual_relu",
         [node("Conv", ["x", "w", "b"], ["c"], strides=[2, 2]), node("Add", ["c", "z"], ["a"]), node("Relu", ["a"], ["y"])],
         {"x": x, "z": z}, {"y": want}, initializers={"w": w, "b": b}, tol=tol, threads=(2,))
