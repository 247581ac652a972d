"""DeformConv (2-D). Oracle: a numpy loop of torchvision's deform_conv2d definition: each kernel tap
is moved by its (dy, dx) offset, bilinearly sampled with zeros outside the image, scaled by the mask."""
import numpy as np

RNG = np.random.default_rng(1924)  # own stream: the shared one feeds the other tables


def sample(img, y, x):
    h, w = img.shape
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    v = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                v += wy * wx * img[yy, xx]
    return v


def deform_conv(x, w, off, b=None, mask=None, stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1), group=1, og=1):
    n, ic, h, wd = x.shape
    oc, icg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    off = off.reshape(n, og, kh, kw, 2, oh, ow)
    mask = np.ones((n, og, kh, kw, oh, ow)) if mask is None else mask.reshape(n, og, kh, kw, oh, ow)
    y = np.zeros((n, oc, oh, ow))
    for bi in range(n):
        for o in range(oc):
            g = o // (oc // group)
            for c in range(icg):
                ch = g * icg + c
                k = ch // (ic // og)
                for i in range(oh):
                    for j in range(ow):
                        for a in range(kh):
                            for e in range(kw):
                                py = i * stride[0] - pad[0] + a * dil[0] + off[bi, k, a, e, 0, i, j]
                                px = j * stride[1] - pad[1] + e * dil[1] + off[bi, k, a, e, 1, i, j]
                                y[bi, o, i, j] += w[o, c, a, e] * mask[bi, k, a, e, i, j] * sample(x[bi, ch], py, px)
            if b is not None:
                y[bi, o] += b[o]
    return y


def build(api):
    case, node = api.case, api.node
    x = RNG.uniform(-1, 1, (1, 4, 5, 6)).astype(np.float32)
    w = RNG.uniform(-1, 1, (4, 2, 2, 3)).astype(np.float32)
    off = RNG.uniform(-1.5, 1.5, (1, 2 * 2 * 3 * 2, 5, 6)).astype(np.float32)
    mask = RNG.uniform(0, 1, (1, 2 * 2 * 3, 5, 6)).astype(np.float32)
    b = RNG.uniform(-1, 1, (4,)).astype(np.float32)
    want = deform_conv(x.astype(np.float64), w, off, b, mask, pad=(1, 1, 1, 1), dil=(2, 1), group=2, og=2)
    case("deform_conv_groups_offset_groups_mask_bias",
         [node("DeformConv", ["x", "w", "o", "b", "m"], ["y"], pads=[1, 1, 1, 1], dilations=[2, 1], group=2, offset_group=2)],
         {"x": x, "w": w, "o": off, "b": b, "m": mask}, {"y": want.astype(np.float32)}, opset=19, tol=(1e-5, 1e-5))
    x = RNG.uniform(-1, 1, (2, 1, 4, 4)).astype(np.float64)
    w = RNG.uniform(-1, 1, (3, 1, 2, 2)).astype(np.float64)
    off = RNG.uniform(-3, 3, (2, 8, 2, 2)).astype(np.float64)  # taps far outside the image sample zeros
    case("deform_conv_stride2_f64_no_mask", [node("DeformConv", ["x", "w", "o"], ["y"], strides=[2, 2])],
         {"x": x, "w": w, "o": off}, {"y": deform_conv(x, w, off, stride=(2, 2))}, opset=19, tol=(1e-12, 1e-12))
