"""Normalizations and Dropout: numpy oracles from the formulas, in float64."""


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-5, 1e-5)

    # BatchNormalization (inference): y = (x - mean) / sqrt(var + eps) * scale + B
    for name, shape, opset in (("2d", (2, 3, 4, 5), 15), ("1d_rank3", (3, 4, 7), 14), ("rank2", (5, 6), 9),
                               ("opset7", (1, 2, 3, 3), 7), ("3d", (2, 2, 3, 2, 4), 15)):
        c = shape[1]
        x, s, b, m = rand(*shape), rand(c), rand(c), rand(c)
        v = rand(c, low=0.1, high=2)
        bshape = (1, c) + (1,) * (len(shape) - 2)
        y = (x - m.reshape(bshape)) / np.sqrt(v.reshape(bshape) + 1e-3) * s.reshape(bshape) + b.reshape(bshape)
        case(f"batchnorm_{name}", [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
             {"x": x, "s": s, "b": b, "m": m, "v": v}, {"y": y.astype(np.float32)}, opset=opset, tol=tol)
    x = rand(2, 3, 4, dtype=np.float64)
    s, b, m, v = (rand(3, dtype=np.float64) for _ in range(4))
    v = np.abs(v) + 0.5
    y = (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5) * s[:, None] + b[:, None]
    case("batchnorm_f64", [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
         {"x": x, "s": s, "b": b, "m": m, "v": v}, {"y": y}, tol=(1e-12, 1e-12))
    # training_mode: batch statistics normalize; running stats blend with momentum (population variance)
    x, s, b, m = rand(3, 2, 4), rand(2), rand(2), rand(2)
    v = rand(2, low=0.5, high=1.5)
    bm, bv = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    y = (x - bm[:, None]) / np.sqrt(bv[:, None] + 1e-5) * s[:, None] + b[:, None]
    case("batchnorm_training_mode", [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                                          training_mode=1, momentum=0.8)],
         {"x": x, "s": s, "b": b, "m": m, "v": v},
         {"y": y.astype(np.float32), "rm": (m * 0.8 + bm * 0.2).astype(np.float32),
          "rv": (v * 0.8 + bv * 0.2).astype(np.float32)}, tol=tol)

    # LayerNormalization with Mean / InvStdDev outputs
    for name, shape, axis in (("last_axis", (3, 4, 8), -1), ("axis1", (2, 3, 5), 1), ("axis0", (4, 3), 0),
                              ("rank4_axis2", (2, 3, 4, 5), 2)):
        x = rand(*shape, low=-3, high=3)
        a = axis % len(shape)
        red = tuple(range(a, len(shape)))
        s, b = rand(*shape[a:]), rand(*shape[a:])
        mean = x.astype(np.float64).mean(axis=red, keepdims=True)
        inv = 1 / np.sqrt(x.astype(np.float64).var(axis=red, keepdims=True) + 1e-5)
        y = (x - mean) * inv * s + b
        case(f"layernorm_{name}", [node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=axis)],
             {"x": x, "s": s, "b": b},
             {"y": y.astype(np.float32), "mean": mean.astype(np.float32), "inv": inv.astype(np.float32)},
             opset=17, tol=tol)
    x, s = rand(2, 5, 6), rand(6)
    xd = x.astype(np.float64)
    y = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-2) * s
    case("layernorm_no_bias_epsilon", [node("LayerNormalization", ["x", "s"], ["y"], epsilon=1e-2)], {"x": x, "s": s},
         {"y": y.astype(np.float32)}, opset=17, tol=tol)
    x, s, b = rand(3, 7, dtype=np.float64), rand(7, dtype=np.float64), rand(1, dtype=np.float64)
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * s + b
    case("layernorm_f64_broadcast_bias", [node("LayerNormalization", ["x", "s", "b"], ["y"])], {"x": x, "s": s, "b": b},
         {"y": y}, opset=17, tol=(1e-12, 1e-12))
    x, s, b = rand(4, 16).astype(np.float16), rand(16).astype(np.float16), rand(16).astype(np.float16)
    xd = x.astype(np.float64)
    y = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5) * s + b
    case("layernorm_f16", [node("LayerNormalization", ["x", "s", "b"], ["y"])], {"x": x, "s": s, "b": b},
         {"y": y.astype(np.float16)}, opset=17, tol=(4e-3, 4e-3))

    # float32 rows normalised in float on AVX2 (vectors of 16 / 8 and their tails), rows far from 0 (the
    # mean kept as two floats), norm over two dims, more rows than one thread's share. Own generator:
    # the shared one would shift every later row's data.
    own = np.random.default_rng(17)
    for name, shape, axis, offset in (("wide_rows_offset", (20, 771), -1, 1000.0), ("bert_rows", (40, 768), -1, 0.0),
                                      ("two_dims", (2, 10, 48), 1, -30.0)):
        x = (own.uniform(-1, 1, size=shape) + offset).astype(np.float32)
        a = axis % len(shape)
        s, b = (own.uniform(-1, 1, size=shape[a:]).astype(np.float32) for _ in range(2))
        xd, red = x.astype(np.float64), tuple(range(a, len(shape)))
        mean, var = xd.mean(axis=red, keepdims=True), xd.var(axis=red, keepdims=True)
        y = (xd - mean) / np.sqrt(var + 1e-5) * s + b
        case(f"layernorm_f32_{name}", [node("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis)],
             {"x": x, "s": s, "b": b}, {"y": y.astype(np.float32)}, opset=17, tol=tol,
             ort_differs="its float32 mean of rows near 1000 is off by up to half an ulp (3e-5): y off by 2e-5"
             if offset >= 1000 else None)

    # GroupNormalization-21 (per-channel scale/bias). onnx.checker rejects GroupNormalization-18 models
    # (deprecated), so its per-group form has no row here.
    for name, shape, groups in (("2d", (2, 6, 3, 4), 3), ("rank3", (3, 4, 5), 2), ("one_group", (1, 4, 2, 2), 1),
                                ("groups_eq_channels", (2, 4, 3), 4)):
        x = rand(*shape, low=-2, high=2)
        n, c = shape[:2]
        xg = x.astype(np.float64).reshape(n, groups, -1)
        norm = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)).reshape(shape)
        bshape = (1, c) + (1,) * (len(shape) - 2)
        s21, b21 = rand(c), rand(c)
        case(f"groupnorm21_{name}", [node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups)],
             {"x": x, "s": s21, "b": b21}, {"y": (norm * s21.reshape(bshape) + b21.reshape(bshape)).astype(np.float32)},
             opset=21, tol=tol)

    # InstanceNormalization
    for name, shape in (("2d", (2, 3, 4, 5)), ("1d", (3, 2, 7)), ("3d", (1, 2, 3, 2, 4))):
        x = rand(*shape, low=-2, high=2)
        c = shape[1]
        axes = tuple(range(2, len(shape)))
        xd = x.astype(np.float64)
        s, b = rand(c), rand(c)
        bshape = (1, c) + (1,) * (len(shape) - 2)
        y = (xd - xd.mean(axes, keepdims=True)) / np.sqrt(xd.var(axes, keepdims=True) + 1e-5) * s.reshape(bshape) \
            + b.reshape(bshape)
        case(f"instancenorm_{name}", [node("InstanceNormalization", ["x", "s", "b"], ["y"])], {"x": x, "s": s, "b": b},
             {"y": y.astype(np.float32)}, tol=tol)

    # LpNormalization
    for p in (1, 2):
        for axis in (-1, 0, 1):
            x = rand(3, 4, 5)
            xd = x.astype(np.float64)
            norm = np.abs(xd).sum(axis, keepdims=True) if p == 1 else np.sqrt((xd * xd).sum(axis, keepdims=True))
            case(f"lpnorm_p{p}_axis{axis}".replace("-", "neg"), [node("LpNormalization", ["x"], ["y"], p=p, axis=axis)],
                 {"x": x}, {"y": (xd / norm).astype(np.float32)}, tol=tol)

    # RMSNormalization (23): y = x / sqrt(mean(x^2) + eps) * scale
    for name, shape, axis in (("last_axis", (2, 3, 8), -1), ("axis1", (2, 3, 4), 1)):
        x = rand(*shape, low=-3, high=3)
        a = axis % len(shape)
        red = tuple(range(a, len(shape)))
        s = rand(*shape[a:])
        xd = x.astype(np.float64)
        y = xd / np.sqrt((xd * xd).mean(axis=red, keepdims=True) + 1e-5) * s
        case(f"rmsnorm_{name}", [node("RMSNormalization", ["x", "s"], ["y"], axis=axis)], {"x": x, "s": s},
             {"y": y.astype(np.float32)}, opset=23, tol=tol)
    x, s = rand(3, 16).astype(np.float16), rand(16).astype(np.float16)
    xd = x.astype(np.float64)
    y = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + 1e-5) * s
    case("rmsnorm_f16", [node("RMSNormalization", ["x", "s"], ["y"])], {"x": x, "s": s}, {"y": y.astype(np.float16)},
         opset=23, tol=(4e-3, 4e-3))
    # rows long enough for the vectorised sum of squares (16 at a time, then a tail), one over two axes
    rng = np.random.default_rng(29)  # its own generator: the rows after these keep their values
    for name, shape, axis in (("long_rows", (3, 4, 517), -1), ("two_axes", (2, 16, 40), 1)):
        x = rng.uniform(-3, 3, shape).astype(np.float32)
        a = axis % len(shape)
        red = tuple(range(a, len(shape)))
        s = rng.uniform(-1, 1, shape[a:]).astype(np.float32)
        xd = x.astype(np.float64)
        y = xd / np.sqrt((xd * xd).mean(axis=red, keepdims=True) + 1e-5) * s
        case(f"rmsnorm_{name}", [node("RMSNormalization", ["x", "s"], ["y"], axis=axis)], {"x": x, "s": s},
             {"y": y.astype(np.float32)}, opset=23, tol=tol)

    # MeanVarianceNormalization: no row, onnx.checker (full_check) fails on its function body's Constant.

    # Dropout at inference: identity, mask all true
    x = rand(3, 4)
    case("dropout_opset13_mask", [node("Dropout", ["x"], ["y", "mask"])], {"x": x},
         {"y": x, "mask": np.ones(x.shape, bool)}, opset=13)
    case("dropout_opset12_training_false",
         [node("Dropout", ["x", "r", "t"], ["y", "mask"])], {"x": x, "r": np.array(0.3, np.float32),
                                                            "t": np.array(False)},
         {"y": x, "mask": np.ones(x.shape, bool)}, opset=12)
    case("dropout_training_ratio0_is_identity", [node("Dropout", ["x", "r", "t"], ["y"])],
         {"x": x, "r": np.array(0.0, np.float32), "t": np.array(True)}, {"y": x}, opset=13)
    case("dropout_opset7_ratio_attr", [node("Dropout", ["x"], ["y"], ratio=0.2)], {"x": x}, {"y": x}, opset=7)
    xd = rand(2, 5, dtype=np.float64)
    # No mask row at opset 10: onnxruntime's Dropout-10 returns an all-false mask, ONNX's reference all true.
    case("dropout_opset10_f64", [node("Dropout", ["x"], ["y"])], {"x": xd}, {"y": xd}, opset=10)
    # float16 / bfloat16 rows normalised one at a time (each widened into scratch, normalised as float32 rows are,
    # rounded once): rows of 517 (vectors and a tail) over two threads, LayerNormalization with a bias, RMS
    # normalisation; within one unit in the last place of the half type of numpy's float64 answer.
    import ml_dtypes
    own = np.random.default_rng(4613)
    for dt, dname, ulp in ((np.float16, "f16", 2.0 ** -10), (ml_dtypes.bfloat16, "bf16", 2.0 ** -7)):
        x = (own.standard_normal((2, 37, 517)) * 3 + 1).astype(np.float32).astype(dt)
        s, b = own.uniform(0.5, 2, 517).astype(np.float32).astype(dt), own.uniform(-1, 1, 517).astype(np.float32).astype(dt)
        xd, sd, bd = x.astype(np.float64), s.astype(np.float64), b.astype(np.float64)
        y = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5) * sd + bd
        case(f"layernorm_{dname}_rows_517", [node("LayerNormalization", ["x", "s", "b"], ["y"])], {"x": x, "s": s, "b": b},
             {"y": y.astype(dt)}, opset=17, tol=(ulp, ulp * 2.0 ** -14), threads=(2,))
        y = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + 1e-5) * sd
        case(f"rmsnorm_{dname}_rows_517", [node("RMSNormalization", ["x", "s"], ["y"])], {"x": x, "s": s},
             {"y": y.astype(dt)}, opset=23, tol=(ulp, ulp * 2.0 ** -14), threads=(2,))
