"""MaxPool / AveragePool / LpPool and the global pools: numpy oracles as explicit loops over output
positions and window taps (padding taps skipped; count_include_pad counts taps in the padded input)."""
import itertools


def pool_ref(np, x, kind, k, strides=None, dil=None, pads=None, auto_pad="NOTSET", ceil_mode=0,
             count_include_pad=0, p=2, storage_order=0):
    n, c = x.shape[:2]
    in_sp = x.shape[2:]
    r = len(in_sp)
    strides = strides or [1] * r
    dil = dil or [1] * r
    pb, pe = (list(pads[:r]), list(pads[r:])) if pads else ([0] * r, [0] * r)
    out_sp = []
    for d in range(r):
        eff = (k[d] - 1) * dil[d] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-in_sp[d] // strides[d])
            total = max(0, (o - 1) * strides[d] + eff - in_sp[d])
            pb[d] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pe[d] = total - pb[d]
        elif auto_pad == "VALID":
            pb[d] = pe[d] = 0
        span = in_sp[d] + pb[d] + pe[d] - eff
        o = (-(-span // strides[d]) if ceil_mode else span // strides[d]) + 1
        if ceil_mode and (o - 1) * strides[d] >= in_sp[d] + pb[d]:
            o -= 1
        out_sp.append(o)
    xd = x.astype(np.float64)
    y = np.zeros((n, c, *out_sp))
    idx = np.zeros((n, c, *out_sp), np.int64)
    plane = int(np.prod(in_sp))
    for o in itertools.product(*[range(s) for s in out_sp]):
        vals, offs, padded = [], [], 0
        for kk in itertools.product(*[range(s) for s in k]):
            i = [o[d] * strides[d] - pb[d] + kk[d] * dil[d] for d in range(r)]
            if all(-pb[d] <= i[d] < in_sp[d] + pe[d] for d in range(r)):
                padded += 1
            if all(0 <= i[d] < in_sp[d] for d in range(r)):
                vals.append(xd[(slice(None), slice(None)) + tuple(i)])
                order = reversed(range(r)) if storage_order else range(r)
                off, scale = 0, 1
                for d in reversed(list(order)):
                    off += i[d] * scale
                    scale *= in_sp[d]
                offs.append(off)
        v = np.stack(vals, axis=-1)  # [n, c, taps]
        at = (slice(None), slice(None)) + o
        if kind == "max":
            y[at] = v.max(-1)
            idx[at] = np.array(offs)[v.argmax(-1)] + (np.arange(n * c) * plane).reshape(n, c)
        elif kind == "avg":
            y[at] = v.sum(-1) / (padded if count_include_pad else len(vals))
        else:
            y[at] = (np.abs(v) ** p).sum(-1) ** (1.0 / p)
    return y.astype(x.dtype), idx


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-5, 1e-6)
    # name: x shape, kernel, attrs
    sweeps = {
        "2d_basic": ((1, 2, 6, 7), [2, 2], dict(strides=[2, 2])),
        "2d_pads_strides": ((2, 3, 7, 8), [3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1])),
        "2d_asym_pads": ((1, 2, 5, 6), [3, 2], dict(pads=[0, 1, 2, 0])),
        "2d_ceil_mode": ((1, 2, 7, 8), [3, 3], dict(strides=[2, 3], ceil_mode=1)),
        "2d_ceil_mode_pads": ((2, 1, 6, 6), [3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
        # One window larger than the input (torch's AvgPool2d(kernel > size, ceil_mode=True)).
        "2d_ceil_mode_window_past_input": ((1, 2, 3, 2), [4, 4], dict(strides=[4, 4], ceil_mode=1)),
        "2d_dilations": ((1, 2, 9, 8), [2, 3], dict(dilations=[2, 2], strides=[1, 2])),
        "2d_same_upper": ((1, 2, 7, 5), [3, 2], dict(auto_pad="SAME_UPPER", strides=[2, 2])),
        "2d_same_lower": ((1, 2, 7, 5), [3, 2], dict(auto_pad="SAME_LOWER", strides=[2, 1])),
        "2d_valid": ((1, 2, 7, 5), [3, 2], dict(auto_pad="VALID", strides=[2, 1])),
        "1d": ((2, 3, 11), [3], dict(strides=[2], pads=[1, 1])),
        "3d": ((1, 2, 5, 4, 6), [2, 3, 2], dict(strides=[2, 1, 2], pads=[0, 1, 1, 1, 0, 0])),
    }
    for name, (xs, k, attrs) in sweeps.items():
        x = rand(*xs, low=-3, high=3)
        args = dict(strides=attrs.get("strides"), dil=attrs.get("dilations"), pads=attrs.get("pads"),
                    auto_pad=attrs.get("auto_pad", "NOTSET"), ceil_mode=attrs.get("ceil_mode", 0))
        y, idx = pool_ref(np, x, "max", k, **args)
        case(f"maxpool_{name}", [node("MaxPool", ["x"], ["y", "i"], kernel_shape=k, **attrs)], {"x": x},
             {"y": y, "i": idx})
        # Without the Indices output (refrt's 2-D path that needs no window table)
        case(f"maxpool_{name}_values_only", [node("MaxPool", ["x"], ["y"], kernel_shape=k, **attrs)], {"x": x}, {"y": y})
        avg_opset = 19 if "dilations" in attrs else 18
        for cip in (0, 1):
            if cip and attrs.get("auto_pad", "NOTSET") != "NOTSET":
                continue  # ORT counts SAME auto pads differently from the spec's explicit pads
            y, _ = pool_ref(np, x, "avg", k, count_include_pad=cip, **args)
            case(f"averagepool_{name}_cip{cip}",
                 [node("AveragePool", ["x"], ["y"], kernel_shape=k, count_include_pad=cip, **attrs)], {"x": x},
                 {"y": y}, opset=avg_opset, tol=tol)
        y, _ = pool_ref(np, x, "lp", k, p=3, **args)
        case(f"lppool_{name}_p3", [node("LpPool", ["x"], ["y"], kernel_shape=k, p=3, **attrs)], {"x": x}, {"y": y},
             tol=(1e-5, 1e-5))
    x = rand(2, 3, 4, 5, low=-3, high=3)
    y, idx = pool_ref(np, x, "max", [2, 3], strides=[1, 2], storage_order=1)
    case("maxpool_storage_order_column_major", [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3],
                                                     strides=[1, 2], storage_order=1)], {"x": x}, {"y": y, "i": idx})
    y, _ = pool_ref(np, x, "max", [3, 3], pads=[1, 1, 1, 1])
    case("maxpool_opset7_no_indices", [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
         {"x": x}, {"y": y}, opset=7)
    y, _ = pool_ref(np, x, "avg", [2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    case("averagepool_opset7_count_include_pad", [node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                                                       pads=[1, 1, 1, 1], count_include_pad=1)],
         {"x": x}, {"y": y}, opset=7, tol=tol)
    xi = api.ints(1, 2, 5, 5, dtype=np.int8, low=-100, high=100)
    y, _ = pool_ref(np, xi, "max", [2, 2], strides=[2, 2], ceil_mode=1)
    case("maxpool_int8_ceil", [node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
         {"x": xi}, {"y": y})
    xu = api.ints(1, 1, 4, 6, dtype=np.uint8, low=0, high=255)
    y, _ = pool_ref(np, xu, "max", [3, 3], pads=[1, 1, 1, 1])
    case("maxpool_uint8_pads", [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
         {"x": xu}, {"y": y})
    xd = rand(2, 2, 5, 4, dtype=np.float64)
    y, _ = pool_ref(np, xd, "avg", [3, 2], strides=[2, 1])
    case("averagepool_f64", [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 1])], {"x": xd},
         {"y": y}, tol=(1e-12, 1e-12))
    xh = rand(1, 2, 6, 6).astype(np.float16)
    y, _ = pool_ref(np, xh.astype(np.float32), "avg", [2, 2], strides=[2, 2])
    case("averagepool_f16", [node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], {"x": xh},
         {"y": y.astype(np.float16)}, tol=(1e-3, 1e-3))
    y, _ = pool_ref(np, x, "lp", [2, 2], p=2)
    case("lppool_opset11_default_p2", [node("LpPool", ["x"], ["y"], kernel_shape=[2, 2])], {"x": x}, {"y": y},
         opset=11, tol=(1e-5, 1e-5))
    for dt in (np.float32, np.float64):
        for shape in ((2, 3, 5, 4), (1, 2, 7), (1, 2, 3, 2, 4)):
            x = rand(*shape, dtype=dt)
            axes = tuple(range(2, len(shape)))
            name = f"{np.dtype(dt).name}_rank{len(shape)}"
            case(f"globalaveragepool_{name}", [node("GlobalAveragePool", ["x"], ["y"])], {"x": x},
                 {"y": x.mean(axis=axes, keepdims=True)}, tol=(1e-5, 1e-6))
            case(f"globalmaxpool_{name}", [node("GlobalMaxPool", ["x"], ["y"])], {"x": x},
                 {"y": x.max(axis=axes, keepdims=True)})
            case(f"globallppool_{name}", [node("GlobalLpPool", ["x"], ["y"], p=3)], {"x": x},
                 {"y": ((np.abs(x.astype(np.float64)) ** 3).sum(axis=axes, keepdims=True) ** (1 / 3)).astype(dt)},
                 tol=(1e-5, 1e-6))
    # NaN propagates through max pooling (numpy's max/argmax: the first NaN), with and without Indices:
    # the two are separate code paths in refrt (branch-free without Indices).
    xn = rand(1, 2, 5, 6, low=-3, high=3)
    xn[0, 0, 1, 2] = np.nan
    xn[0, 1, 4, 5] = np.nan
    y, idx = pool_ref(np, xn, "max", [2, 2], strides=[1, 2])
    ort_nan = "onnxruntime's MaxPool does not propagate NaN; refrt follows torch.max_pool2d, which does"
    case("maxpool_nan_propagates", [node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[1, 2])], {"x": xn},
         {"y": y}, ort_differs=ort_nan)
    case("maxpool_nan_propagates_indices", [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[1, 2])],
         {"x": xn}, {"y": y, "i": idx}, ort_differs=ort_nan)
    # 2-D MaxPool without Indices on planes without NaN: refrt's separable path (kernels/max_pool_rows.h). ResNet's
    # 3x3 stride-2 stem pool, stride 1, dilation with asymmetric pads and strides, odd sizes; and a window whose
    # values are all -inf (it gives -inf: only a window entirely in the padding gives the lowest float). Their own
    # generator, so that the rows above keep their values.
    own = np.random.default_rng(461)
    separable = {"stem_3x3_s2": ((2, 3, 17, 16), [3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1])),
                 "3x3_s1": ((1, 4, 9, 33), [3, 3], dict(pads=[1, 1, 1, 1])),
                 "dilated_asymmetric": ((1, 2, 13, 14), [2, 3], dict(dilations=[2, 2], strides=[3, 2],
                                                                      pads=[1, 2, 0, 1]))}
    for name, (shape, k, attrs) in separable.items():
        x = own.standard_normal(shape).astype(np.float32)
        y, _ = pool_ref(np, x, "max", k, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"))
        case(f"maxpool_separable_{name}", [node("MaxPool", ["x"], ["y"], kernel_shape=k, **attrs)], {"x": x}, {"y": y})
    x = own.standard_normal((1, 1, 6, 6)).astype(np.float32)
    x[0, 0, 0:3, 0:3] = -np.inf
    y, _ = pool_ref(np, x, "max", [2, 2], [2, 2])
    case("maxpool_separable_minus_inf_window", [node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
         {"x": x}, {"y": y})
    # float16 / bfloat16 2-D MaxPool without Indices: each plane widened into scratch, pooled as float32 and narrowed
    # (pool.cc's half_max_pool): ResNet's stem geometry over several planes per thread, dilation with asymmetric
    # pads, a plane holding a NaN (the exact per-window path on the widened plane) next to one without, and a -inf
    # window. The max of half values is one of them, so the oracle is exact in any dtype.
    import ml_dtypes
    own = np.random.default_rng(462)
    for dt, dname in ((np.float16, "float16"), (ml_dtypes.bfloat16, "bfloat16")):
        for name, (shape, k, attrs) in {"stem_3x3_s2": ((2, 5, 17, 16), [3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1])),
                                        "dilated_asymmetric": separable["dilated_asymmetric"]}.items():
            x = own.standard_normal(shape).astype(np.float32).astype(dt)
            y, _ = pool_ref(np, x, "max", k, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"))
            case(f"maxpool_{dname}_{name}", [node("MaxPool", ["x"], ["y"], kernel_shape=k, **attrs)], {"x": x},
                 {"y": y}, opset=22)
        x = own.standard_normal((1, 3, 6, 7)).astype(np.float32).astype(dt)
        x[0, 1, 2, 3] = np.nan
        x[0, 2, 0:2, 0:2] = -np.inf
        y, _ = pool_ref(np, x, "max", [2, 2], [2, 2])
        case(f"maxpool_{dname}_nan_plane_and_minus_inf_window",
             [node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], {"x": x}, {"y": y}, opset=22,
             ort_differs=ort_nan)
