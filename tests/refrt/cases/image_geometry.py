"""Col2Im, AffineGrid, MaxUnpool and CenterCropPad. Oracles: numpy loops written from the ONNX operator
text (Col2Im sums each block back where torch's unfold took it; AffineGrid applies theta to the normalised
pixel centres; MaxUnpool scatters to MaxPool's flat indices; CenterCropPad crops/pads around the centre)."""
import itertools

import numpy as np

RNG = np.random.default_rng(1824)  # own stream: the shared one feeds the other tables


def col2im(cols, image, block, dil, pads, strides):
    r = len(image)
    n, cb, _ = cols.shape
    c = cb // int(np.prod(block))
    out = np.zeros((n, c, *image), np.float64)
    npos = [(image[d] + pads[d] + pads[d + r] - dil[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(r)]
    cols = cols.reshape(n, c, int(np.prod(block)), -1).astype(np.float64)
    for ki, k in enumerate(itertools.product(*map(range, block))):
        for pi, p in enumerate(itertools.product(*map(range, npos))):
            at = [p[d] * strides[d] - pads[d] + k[d] * dil[d] for d in range(r)]
            if all(0 <= at[d] < image[d] for d in range(r)):
                out[(slice(None), slice(None), *at)] += cols[:, :, ki, pi]
    return out


def affine_grid(theta, size, align):
    spatial = size[2:]
    def axis(s):
        return np.linspace(-1, 1, s) if align else (np.arange(s) * 2 + 1) / s - 1
    coords = np.meshgrid(*[axis(s) for s in spatial], indexing="ij")  # (z,) y, x
    base = np.stack([*coords[::-1], np.ones(spatial)], axis=-1)  # x, y(, z), 1
    return np.einsum("...k,nrk->n...r", base, theta.astype(np.float64))


def build(api):
    case, node = api.case, api.node
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    tol = (1e-5, 1e-6)

    x = RNG.uniform(-1, 1, (2, 3 * 4, 12)).astype(np.float32)  # 2x2 blocks, 3 channels, 3x4 positions
    case("col2im_2d_stride1", [node("Col2Im", ["x", "img", "blk"], ["y"])], {"x": x},
         {"y": col2im(x, [4, 5], [2, 2], [1, 1], [0, 0, 0, 0], [1, 1]).astype(np.float32)},
         initializers={"img": i64([4, 5]), "blk": i64([2, 2])}, tol=tol)
    x = RNG.uniform(-1, 1, (1, 2 * 6, 8)).astype(np.float64)  # 4 x 2 block positions
    case("col2im_2d_pads_strides_dilations", [node("Col2Im", ["x", "img", "blk"], ["y"], dilations=[2, 1], pads=[1, 0, 2, 1],
                                                   strides=[2, 2])], {"x": x},
         {"y": col2im(x, [6, 5], [2, 3], [2, 1], [1, 0, 2, 1], [2, 2])},
         initializers={"img": i64([6, 5]), "blk": i64([2, 3])}, tol=(1e-12, 1e-12))

    theta2 = RNG.uniform(-1, 1, (2, 2, 3)).astype(np.float32)
    for align in (0, 1):
        case(f"affine_grid_2d_align{align}", [node("AffineGrid", ["t", "s"], ["y"], align_corners=align)], {"t": theta2},
             {"y": affine_grid(theta2, [2, 3, 4, 5], align).astype(np.float32)}, initializers={"s": i64([2, 3, 4, 5])},
             opset=20, tol=tol)
    theta3 = RNG.uniform(-1, 1, (1, 3, 4)).astype(np.float64)
    case("affine_grid_3d_f64", [node("AffineGrid", ["t", "s"], ["y"])], {"t": theta3},
         {"y": affine_grid(theta3, [1, 1, 2, 3, 4], 0)}, initializers={"s": i64([1, 1, 2, 3, 4])}, opset=20,
         tol=(1e-12, 1e-12))

    # MaxUnpool of a 2x2/stride-2 max pool of a [1, 2, 4, 6] input: the flat indices into the whole tensor.
    src = RNG.permutation(48).astype(np.float32).reshape(1, 2, 4, 6)
    win = src.reshape(1, 2, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 3, 4)
    arg = win.argmax(-1)
    ii, jj = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    rows, cols = ii * 2 + arg // 2, jj * 2 + arg % 2
    flat = (np.arange(2)[None, :, None, None] * 24 + rows * 6 + cols).astype(np.int64)
    pooled = win.max(-1)
    want = np.zeros(48, np.float32)
    want[flat.reshape(-1)] = pooled.reshape(-1)
    case("maxunpool_2d_inferred_shape", [node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
         {"x": pooled, "i": flat}, {"y": want.reshape(1, 2, 4, 6)})
    bigger = np.zeros((1, 2, 5, 7), np.float32)
    bigger[:, :, :4, :6] = want.reshape(1, 2, 4, 6)
    case("maxunpool_2d_output_shape_pads_end", [node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
         {"x": pooled, "i": flat}, {"y": bigger}, initializers={"s": i64([1, 2, 5, 7])},
         ort_differs="onnxruntime reads the indices in output_shape's layout; ONNX's reference (and refrt) in the inferred one")

    x = RNG.integers(0, 100, (3, 7, 4)).astype(np.int32)
    want = np.zeros((3, 4, 6), np.int32)
    want[:, :, 1:5] = x[:, 1:5, :]  # dim 1 cropped 7 -> 4 from 1; dim 2 padded 4 -> 6 from 1
    case("center_crop_pad_crop_and_pad_int32", [node("CenterCropPad", ["x", "s"], ["y"], axes=[1, -1])], {"x": x},
         {"y": want}, initializers={"s": i64([4, 6])})
    x = RNG.uniform(-1, 1, (5, 2)).astype(np.float32)
    want = np.zeros((2, 5), np.float32)
    want[:, 1:3] = x[1:3, :]
    case("center_crop_pad_all_axes_odd_difference", [node("CenterCropPad", ["x", "s"], ["y"])], {"x": x},
         {"y": want}, initializers={"s": i64([2, 5])})
