"""NonMaxSuppression, RoiAlign and MaxRoiPool. Oracles: numpy loops written from the ONNX operator text
(greedy NMS by descending score, IoU > threshold suppresses; RoiAlign's bilinear sample grid; Caffe-style
ROI max pooling with rounded region corners)."""
import math

import numpy as np

RNG = np.random.default_rng(1024)  # own stream: the shared one feeds the other tables


def iou(a, b):
    ay0, ax0, ay1, ax1 = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    by0, bx0, by1, bx1 = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    iw, ih = min(ax1, bx1) - max(ax0, bx0), min(ay1, by1) - max(ay0, by0)
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / ((ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter)


def nms(boxes, scores, max_out, iou_t, score_t):
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            cand = [i for i in range(boxes.shape[1]) if scores[b, c, i] > score_t]
            cand.sort(key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in cand:
                if len(kept) >= max_out:
                    break
                if all(iou(boxes[b, i], boxes[b, k]) <= iou_t for k in kept):
                    kept.append(i)
                    rows.append([b, c, i])
    return np.array(rows, np.int64).reshape(-1, 3)


def bilinear(img, y, x):
    h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return np.zeros(4), [0, 0, 0, 0]
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    y1, x1 = (y0 + 1, x0 + 1)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    ly, lx = y - y0, x - x0
    return np.array([(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx]), [img[y0, x0], img[y0, x1], img[y1, x0], img[y1, x1]]


def roi_align(x, rois, bidx, oh, ow, ratio, scale, mode, half_pixel):
    out = np.zeros((len(rois), x.shape[1], oh, ow))
    off = 0.5 if half_pixel else 0.0
    for r, (roi, b) in enumerate(zip(rois.astype(np.float64), bidx)):
        x0, y0, x1, y1 = roi * scale - off
        rw, rh = x1 - x0, y1 - y0
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = ratio or math.ceil(rh / oh)
        gw = ratio or math.ceil(rw / ow)
        for c in range(x.shape[1]):
            img = x[b, c].astype(np.float64)
            for i in range(oh):
                for j in range(ow):
                    vals = []
                    for iy in range(gh):
                        for ix in range(gw):
                            wts, v = bilinear(img, y0 + i * rh / oh + (iy + 0.5) * rh / oh / gh,
                                              x0 + j * rw / ow + (ix + 0.5) * rw / ow / gw)
                            vals.append(max(wts * v) if mode == "max" else float(np.dot(wts, v)))
                    out[r, c, i, j] = max(vals) if mode == "max" else sum(vals) / max(gh * gw, 1)
    return out


def max_roi_pool(x, rois, ph, pw, scale):
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    h, w = x.shape[2:]
    for r, roi in enumerate(rois.astype(np.float64)):
        b = int(roi[0])
        xs, ys, xe, ye = (int(np.floor(v * scale + 0.5)) for v in roi[1:])
        bh, bw = max(ye - ys + 1, 1) / ph, max(xe - xs + 1, 1) / pw
        for i in range(ph):
            for j in range(pw):
                h0, h1 = min(max(math.floor(i * bh) + ys, 0), h), min(max(math.ceil((i + 1) * bh) + ys, 0), h)
                w0, w1 = min(max(math.floor(j * bw) + xs, 0), w), min(max(math.ceil((j + 1) * bw) + xs, 0), w)
                if h1 > h0 and w1 > w0:
                    out[r, :, i, j] = x[b, :, h0:h1, w0:w1].reshape(x.shape[1], -1).max(axis=1)
    return out


def build(api):
    case, node = api.case, api.node
    f32 = lambda v: np.array(v, np.float32)  # noqa: E731
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731

    corners = RNG.uniform(0, 10, (2, 12, 2, 2)).astype(np.float32)
    boxes = np.concatenate([corners[:, :, 0], corners[:, :, 0] + RNG.uniform(1, 4, (2, 12, 2)).astype(np.float32)], axis=-1)
    boxes[0, 3] = boxes[0, 3][[2, 3, 0, 1]]  # flipped corners are the same box
    scores = RNG.uniform(0, 1, (2, 3, 12)).astype(np.float32)
    scores[1, 2, 5] = scores[1, 2, 7]  # a tie: the lower index goes first
    for max_out, iou_t, score_t in ((3, 0.3, 0.2), (100, 0.0, 0.5), (5, 0.7, -1.0)):
        case(f"nms_max{max_out}_iou{iou_t}_score{score_t}".replace(".", "p").replace("-", "neg"),
             [node("NonMaxSuppression", ["b", "s", "m", "i", "t"], ["y"])], {"b": boxes, "s": scores},
             {"y": nms(boxes, scores, max_out, iou_t, score_t)},
             initializers={"m": i64([max_out]), "i": f32([iou_t]), "t": f32([score_t])}, opset=11)
    case("nms_no_max_output_selects_nothing", [node("NonMaxSuppression", ["b", "s"], ["y"])], {"b": boxes, "s": scores},
         {"y": np.zeros((0, 3), np.int64)}, opset=11)
    cbox = np.concatenate([(boxes[..., :2] + boxes[..., 2:])[..., ::-1] / 2, (boxes[..., 2:] - boxes[..., :2])[..., ::-1]],
                          axis=-1).astype(np.float32)  # [x_center, y_center, w, h] of the same boxes
    cbox[0, 3] = cbox[0, 2]
    ref = boxes.copy()
    ref[0, 3] = ref[0, 2]
    case("nms_center_point_box", [node("NonMaxSuppression", ["b", "s", "m", "i"], ["y"], center_point_box=1)],
         {"b": cbox, "s": scores}, {"y": nms(ref, scores, 4, 0.25, -np.inf)},
         initializers={"m": i64([4]), "i": f32([0.25])}, opset=11)

    x = RNG.uniform(-1, 1, (2, 3, 9, 11)).astype(np.float32)
    rois = f32([[0.5, 1.0, 7.5, 6.0], [2.0, 2.0, 9.0, 9.0], [-1.0, 0.0, 3.0, 12.0], [4.0, 4.0, 4.5, 4.2]])
    bidx = i64([0, 1, 1, 0])
    for mode, ctm, ratio, scale in (("avg", "half_pixel", 2, 1.0), ("avg", "output_half_pixel", 0, 0.8),
                                    ("max", "half_pixel", 0, 1.0), ("max", "output_half_pixel", 3, 1.0)):
        case(f"roi_align_{mode}_{ctm}_ratio{ratio}", [node("RoiAlign", ["x", "r", "b"], ["y"], mode=mode, output_height=3,
                                                          output_width=4, sampling_ratio=ratio, spatial_scale=scale,
                                                          coordinate_transformation_mode=ctm)],
             {"x": x, "r": rois, "b": bidx},
             {"y": roi_align(x, rois, bidx, 3, 4, ratio, scale, mode, ctm == "half_pixel").astype(np.float32)},
             opset=16, tol=(1e-5, 1e-6))
    case("roi_align_opset10_output_half_pixel", [node("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=2)],
         {"x": x, "r": rois, "b": bidx}, {"y": roi_align(x, rois, bidx, 2, 2, 0, 1.0, "avg", False).astype(np.float32)},
         opset=10, tol=(1e-5, 1e-6))

    rois5 = f32([[0, 1.2, 0.4, 6.6, 5.5], [1, 0, 0, 10, 8], [1, 8.0, 7.0, 20.0, 20.0], [0, 3, 3, 3, 3]])
    case("max_roi_pool_2x3", [node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 3])], {"x": x, "r": rois5},
         {"y": max_roi_pool(x, rois5, 2, 3, 1.0).astype(np.float32)})
    case("max_roi_pool_scaled", [node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[3, 3], spatial_scale=0.5)],
         {"x": x, "r": rois5}, {"y": max_roi_pool(x, rois5, 3, 3, 0.5).astype(np.float32)})
