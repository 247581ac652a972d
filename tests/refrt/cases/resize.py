"""Resize / Upsample and GridSample: a numpy oracle written from the spec's coordinate formulas, evaluated per output
point as the tensor product of per-axis taps (not separable passes, unlike the kernel)."""
import itertools
import math


def _coord(mode, j, in_len, out_len, scale, r0, r1):
    out_w = scale * in_len
    if mode == "half_pixel":
        return (j + 0.5) / scale - 0.5, False
    if mode == "half_pixel_symmetric":
        adj = out_len / out_w
        return in_len / 2 * (1 - adj) + (j + 0.5) / scale - 0.5, False
    if mode == "pytorch_half_pixel":
        return ((j + 0.5) / scale - 0.5 if out_w > 1 else -0.5), False
    if mode == "align_corners":
        return (0.0 if out_w == 1 else j * (in_len - 1) / (out_w - 1)), False
    if mode == "asymmetric":
        return j / scale, False
    if mode == "tf_half_pixel_for_nn":
        return (j + 0.5) / scale, False
    if mode == "tf_crop_and_resize":
        x = (r1 - r0) * (in_len - 1) / 2 + r0 * (in_len - 1) if out_w == 1 else \
            j * (r1 - r0) * (in_len - 1) / (out_w - 1) + r0 * (in_len - 1)
        return x, (x < 0 or x > in_len - 1)
    raise ValueError(mode)


def _cubic(a, x):
    x = abs(x)
    if x <= 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    if x < 2:
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
    return 0.0


def _taps(x, in_len, scale, mode, nearest_mode, a, exclude_outside, antialias):
    """[(index, weight)] for one axis at source coordinate x."""
    if mode == "nearest":
        f = math.floor(x)
        frac = x - f
        if frac == 0:
            i = f
        elif nearest_mode == "round_prefer_floor":
            i = f + 1 if frac > 0.5 else f
        elif nearest_mode == "round_prefer_ceil":
            i = f + 1 if frac >= 0.5 else f
        elif nearest_mode == "floor":
            i = f
        else:
            i = f + 1
        return [(min(max(i, 0), in_len - 1), 1.0)]
    s = min(scale, 1.0) if antialias else 1.0
    support = 1.0 if mode == "linear" else 2.0
    reach = support / s  # taps within |x - i| * s < support
    lo, hi = math.floor(x - reach), math.ceil(x + reach)
    taps = []
    for i in range(lo, hi + 1):
        d = (i - x) * s
        w = max(0.0, 1 - abs(d)) if mode == "linear" else _cubic(a, d)
        if abs(d) >= support or w == 0:
            continue
        if exclude_outside and not 0 <= i < in_len:
            continue
        taps.append((i, w))
    total = sum(w for _, w in taps)
    if antialias or exclude_outside:
        taps = [(i, w / total) for i, w in taps]
    return [(min(max(i, 0), in_len - 1), w) for i, w in taps]


def resize_ref(np, x, out_shape, scales, coord="half_pixel", mode="nearest", nearest_mode="round_prefer_floor",
               a=-0.75, exclude_outside=0, extrapolation=0.0, roi=None, antialias=0):
    r = x.ndim
    roi = roi or ([0.0] * r + [1.0] * r)
    per_axis = []
    for d in range(r):
        axis = []
        for j in range(out_shape[d]):
            if out_shape[d] == x.shape[d] and scales[d] == 1 and coord != "tf_crop_and_resize":
                axis.append(([(j, 1.0)], False))
                continue
            c, outside = _coord(coord, j, x.shape[d], out_shape[d], scales[d], roi[d], roi[d + r])
            axis.append((_taps(c, x.shape[d], scales[d], mode, nearest_mode, a, exclude_outside, antialias), outside))
        per_axis.append(axis)
    y = np.zeros(out_shape)
    xd = x.astype(np.float64)
    for o in itertools.product(*[range(s) for s in out_shape]):
        if any(per_axis[d][o[d]][1] for d in range(r)):
            y[o] = extrapolation
            continue
        total = 0.0
        for combo in itertools.product(*[per_axis[d][o[d]][0] for d in range(r)]):
            w = 1.0
            for _, wd in combo:
                w *= wd
            total += w * xd[tuple(i for i, _ in combo)]
        y[o] = total
    return y.astype(x.dtype)


def build(api):
    build_resize(api)
    build_grid_sample(api)


def build_resize(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-5, 1e-5)
    empty = np.array([], np.float32)

    def add(name, x, attrs, scales=None, sizes=None, roi=None, opset=19, axes=None, t=tol):
        r = x.ndim
        ax = axes if axes is not None else list(range(r))
        full_scales, out_shape = [1.0] * r, list(x.shape)
        if scales is not None:
            for i, d in enumerate(ax):
                full_scales[d] = float(np.float32(scales[i]))
                out_shape[d] = int(math.floor(x.shape[d] * full_scales[d]))
        else:
            policy = attrs.get("keep_aspect_ratio_policy", "stretch")
            ratios = [sizes[i] / x.shape[d] for i, d in enumerate(ax)]
            common = min(ratios) if policy == "not_larger" else max(ratios)
            for i, d in enumerate(ax):
                if policy == "stretch":
                    full_scales[d], out_shape[d] = ratios[i], sizes[i]
                else:
                    full_scales[d], out_shape[d] = common, int(math.floor(common * x.shape[d] + 0.5))
        full_roi = None
        if roi is not None:
            full_roi = [0.0] * r + [1.0] * r
            for i, d in enumerate(ax):
                full_roi[d], full_roi[d + r] = roi[i], roi[i + len(ax)]
        want = resize_ref(np, x, out_shape, full_scales, attrs.get("coordinate_transformation_mode", "half_pixel"),
                          attrs.get("mode", "nearest"), attrs.get("nearest_mode", "round_prefer_floor"),
                          attrs.get("cubic_coeff_a", -0.75), attrs.get("exclude_outside", 0),
                          attrs.get("extrapolation_value", 0.0), full_roi, attrs.get("antialias", 0))
        inputs = {"x": x}
        names = ["x", "", "", ""]
        if roi is not None:
            inputs["roi"] = np.array(roi, np.float32)
            names[1] = "roi"
        if scales is not None:
            inputs["scales"] = np.array(scales, np.float32)
            names[2] = "scales"
        else:
            inputs["sizes"] = np.array(sizes, np.int64)
            names[3] = "sizes"
        if opset == 11:  # roi and scales are required inputs at 11
            if roi is None:
                inputs["roi"], names[1] = empty, "roi"
            if scales is None:
                inputs["scales"], names[2] = empty, "scales"
        while names[-1] == "":
            names.pop()
        attrs = dict(attrs, axes=axes) if axes is not None else attrs
        case(f"resize_{name}", [node("Resize", names, ["y"], **attrs)], dict(sorted(inputs.items(), key=lambda kv: names.index(kv[0]))),
             {"y": want}, opset=opset, tol=t)

    x = rand(2, 3, 4, 5)
    coords = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]
    for mode in ("nearest", "linear", "cubic"):
        for coord in coords:
            for tag, sc in (("up", [1, 1, 1.5, 2.2]), ("down", [1, 1, 0.5, 0.8])):
                add(f"{mode}_{coord}_{tag}_scales", x, dict(mode=mode, coordinate_transformation_mode=coord), scales=sc)
        add(f"{mode}_sizes_odd", x, dict(mode=mode), sizes=[2, 3, 7, 3])
    for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        add(f"nearest_mode_{nm}", x, dict(mode="nearest", nearest_mode=nm, coordinate_transformation_mode="asymmetric"),
            scales=[1, 1, 2.5, 1.7])
    add("nearest_tf_half_pixel_for_nn", x, dict(mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn"),
        scales=[1, 1, 1.5, 0.6])
    add("cubic_exclude_outside_a05", x, dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1),
        scales=[1, 1, 1.8, 0.7])
    for mode in ("nearest", "linear", "cubic"):
        add(f"{mode}_tf_crop_and_resize", x, dict(mode=mode, coordinate_transformation_mode="tf_crop_and_resize",
                                                  extrapolation_value=-7.0),
            sizes=[2, 3, 5, 6], roi=[0, 0, -0.2, 0.3, 1, 1, 0.8, 1.4])
    add("linear_axes_2_3", x, dict(mode="linear"), scales=[0.7, 1.6], axes=[2, 3], opset=18)
    add("linear_negative_axes_sizes", x, dict(mode="linear"), sizes=[6], axes=[-1], opset=18)
    add("nearest_not_larger", x, dict(mode="nearest", keep_aspect_ratio_policy="not_larger"), sizes=[7, 8],
        axes=[2, 3], opset=18)
    add("linear_not_smaller", x, dict(mode="linear", keep_aspect_ratio_policy="not_smaller"), sizes=[7, 8],
        axes=[2, 3], opset=18)
    for mode in ("linear", "cubic"):
        add(f"{mode}_antialias_down", rand(1, 2, 9, 11), dict(mode=mode, antialias=1), scales=[1, 1, 0.45, 0.6],
            opset=18)
        add(f"{mode}_antialias_up_is_plain", x, dict(mode=mode, antialias=1), scales=[1, 1, 1.5, 2], opset=18)
    add("linear_opset11_sizes", x, dict(mode="linear"), sizes=[2, 3, 6, 9], opset=11)
    add("cubic_opset13_align_corners", x, dict(mode="cubic", coordinate_transformation_mode="align_corners"),
        scales=[1, 1, 2, 0.4], opset=13)
    add("linear_3d_rank5", rand(1, 2, 3, 4, 3), dict(mode="linear"), scales=[1, 1, 1.5, 0.5, 2])
    add("nearest_rank1", rand(7), dict(mode="nearest"), scales=[1.6])
    xd = rand(1, 1, 3, 4, dtype=np.float64)
    add("cubic_f64", xd, dict(mode="cubic"), scales=[1, 1, 2, 1.5], t=(1e-12, 1e-12))
    xh = rand(1, 2, 4, 4).astype(np.float16)
    want = resize_ref(np, xh.astype(np.float32), [1, 2, 8, 6], [1, 1, 2, 1.5], mode="linear")
    case("resize_linear_f16", [node("Resize", ["x", "", "s"], ["y"], mode="linear")],
         {"x": xh, "s": np.array([1, 1, 2, 1.5], np.float32)}, {"y": want.astype(np.float16)}, opset=19,
         tol=(2e-3, 2e-3))
    xu = api.ints(1, 1, 3, 4, dtype=np.uint8, low=0, high=255)
    want = resize_ref(np, xu, [1, 1, 6, 8], [1, 1, 2, 2], mode="nearest")
    case("resize_nearest_uint8", [node("Resize", ["x", "", "s"], ["y"])],
         {"x": xu, "s": np.array([1, 1, 2, 2], np.float32)}, {"y": want}, opset=19)
    # Resize-10 and Upsample: asymmetric coordinates, nearest rounds down
    want = resize_ref(np, x, [2, 3, 8, 15], [1, 1, 2, 3], coord="asymmetric", mode="nearest", nearest_mode="floor")
    case("resize_opset10_nearest_up", [node("Resize", ["x", "s"], ["y"])],
         {"x": x, "s": np.array([1, 1, 2, 3], np.float32)}, {"y": want}, opset=10)
    want = resize_ref(np, x, [2, 3, 8, 12], [1, 1, 2, 2.5], coord="asymmetric", mode="linear")
    case("resize_opset10_linear", [node("Resize", ["x", "s"], ["y"], mode="linear")],
         {"x": x, "s": np.array([1, 1, 2, 2.5], np.float32)}, {"y": want}, opset=10, tol=tol)
    want = resize_ref(np, x, [2, 3, 12, 10], [1, 1, 3, 2], coord="asymmetric", mode="nearest", nearest_mode="floor")
    case("upsample_opset9_nearest", [node("Upsample", ["x", "s"], ["y"])],
         {"x": x, "s": np.array([1, 1, 3, 2], np.float32)}, {"y": want}, opset=9)
    want = resize_ref(np, x, [2, 3, 8, 10], [1, 1, 2, 2], coord="asymmetric", mode="linear")
    case("upsample_opset7_linear_attr", [node("Upsample", ["x"], ["y"], mode="linear", scales=[1.0, 1.0, 2.0, 2.0])],
         {"x": x}, {"y": want}, opset=7, tol=tol)


# ---------------------------------------------------------------- GridSample
def _reflect(x, lo, hi):
    rng = hi - lo
    if x < lo:
        n, r = divmod(lo - x, rng)
        return lo + r if int(n) % 2 == 0 else hi - r
    if x > hi:
        n, r = divmod(x - hi, rng)
        return hi - r if int(n) % 2 == 0 else lo + r
    return x


def grid_sample_ref(np, x, grid, mode, padding, align_corners):
    """Per output point: unnormalize, round (nearest), clamp/reflect the coordinate, then read taps
    whose out-of-range indices are zero / clamped / reflected."""
    n, c = x.shape[:2]
    dims = x.shape[2:]
    r = len(dims)
    out_sp = grid.shape[1:-1]
    y = np.zeros((n, c, *out_sp))
    xd = x.astype(np.float64)

    def taps(g, size):
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        v = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
        if mode == "nearest":
            v = float(np.rint(v))
        if v < lo or v > hi:
            v = min(max(v, 0.0), size - 1.0) if padding == "border" else _reflect(v, lo, hi) if padding == "reflection" else v

        def at(i):
            if padding == "zeros":
                return i if 0 <= i < size else None
            if padding == "border":
                return min(max(i, 0), size - 1)
            return min(max(int(_reflect(float(i), lo, hi)), 0), size - 1)
        if mode == "nearest":
            return [(at(int(v)), 1.0)]
        f = math.floor(v)
        t = v - f
        if mode == "linear":
            return [(at(f), 1 - t), (at(f + 1), t)]
        a = -0.75
        w = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
             ((a + 2) * (1 - t) - (a + 3)) * (1 - t) ** 2 + 1, ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]
        return [(at(f - 1 + k), w[k]) for k in range(4)]

    for b in range(n):
        for o in itertools.product(*[range(s) for s in out_sp]):
            g = grid[(b,) + o].astype(np.float64)[::-1]  # grid lists x (innermost dim) first
            per = [taps(g[d], dims[d]) for d in range(r)]
            for combo in itertools.product(*per):
                if any(i is None for i, _ in combo):
                    continue
                w = np.prod([wd for _, wd in combo])
                y[(b, slice(None)) + o] += w * xd[(b, slice(None)) + tuple(i for i, _ in combo)]
    return y.astype(x.dtype)


def build_grid_sample(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    x = rand(2, 3, 4, 5)
    grid = rand(2, 3, 6, 2, low=-1.3, high=1.3)  # some points outside [-1, 1]
    names16 = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}
    for mode in ("nearest", "linear", "cubic"):
        for padding in ("zeros", "border", "reflection"):
            for ac in (0, 1):
                if mode == "cubic" and padding != "zeros":
                    # ONNX's reference clamps/reflects the cubic source coordinate first; onnxruntime
                    # (like PyTorch) only the taps. refrt follows ONNX; no onnxruntime-checkable row.
                    continue
                want = grid_sample_ref(np, x, grid, mode, padding, ac)
                case(f"gridsample_{mode}_{padding}_ac{ac}",
                     [node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding, align_corners=ac)],
                     {"x": x, "g": grid}, {"y": want}, opset=20, tol=(1e-5, 1e-5))
        want = grid_sample_ref(np, x, grid, mode, "zeros", 0)
        case(f"gridsample_opset16_{names16[mode]}", [node("GridSample", ["x", "g"], ["y"], mode=names16[mode])],
             {"x": x, "g": grid}, {"y": want}, opset=16, tol=(1e-5, 1e-5))
    x3, g3 = rand(1, 2, 3, 4, 5), rand(1, 2, 3, 2, 3, low=-1.2, high=1.2)
    for mode in ("nearest", "linear"):
        case(f"gridsample_3d_{mode}_border", [node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode="border")],
             {"x": x3, "g": g3}, {"y": grid_sample_ref(np, x3, g3, mode, "border", 0)}, opset=20, tol=(1e-5, 1e-5))
    xd, gd = rand(1, 2, 3, 3, dtype=np.float64), rand(1, 4, 4, 2, dtype=np.float64)
    case("gridsample_f64_linear", [node("GridSample", ["x", "g"], ["y"])], {"x": xd, "g": gd},
         {"y": grid_sample_ref(np, xd, gd, "linear", "zeros", 0)}, opset=20, tol=(1e-12, 1e-12))
