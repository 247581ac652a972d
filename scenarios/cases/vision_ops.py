"""Vision blocks built on the ONNX geometry operators: a spatial transformer (affine_grid + grid_sample), a
fold/unfold patch mixer (im2col + Col2Im) and a detection head whose non-maximum suppression is written in
torch ops (pairwise IoU, a greedy pass over the top-k boxes as masks, no data-dependent shapes)."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from ..registry import Case, register

BATCH = Dim("batch", min=1, max=16)


class SpatialTransformer(nn.Module):
    """A localisation net predicts an affine transform per image; the image is resampled through it."""

    def __init__(self, channels=3, size=16):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(channels, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
                                 nn.Flatten(), nn.Linear(8 * 16, 6))
        with torch.no_grad():  # near the identity, so the sampled grid stays mostly inside the image
            self.loc[-1].weight.mul_(0.1)
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.head = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return self.head(F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False))


register(Case(name="vision_spatial_transformer", make_module=SpatialTransformer,
              input_sets=lambda: [(torch.randn(2, 3, 16, 16),), (torch.randn(3, 3, 16, 16),)],
              dynamic_shapes=({0: BATCH},),
              description="spatial transformer: predicted affine_grid, bilinear grid_sample, conv"))


class FoldMixer(nn.Module):
    """Unfold 3x3 patches, mix each patch's values with a linear map, fold them back (overlaps summed) and
    divide by how many patches cover each pixel."""

    def __init__(self, channels=4, kernel=3):
        super().__init__()
        self.kernel = kernel
        self.mix = nn.Linear(channels * kernel * kernel, channels * kernel * kernel)

    def forward(self, x):
        size = (x.shape[-2], x.shape[-1])
        cols = F.unfold(x, self.kernel, padding=1, stride=1)  # [N, C*k*k, L]
        cols = self.mix(cols.transpose(1, 2)).transpose(1, 2)
        out = F.fold(cols, size, self.kernel, padding=1, stride=1)
        count = F.fold(torch.ones_like(cols), size, self.kernel, padding=1, stride=1)
        return out / count


register(Case(name="vision_fold_unfold", make_module=FoldMixer,
              input_sets=lambda: [(torch.randn(2, 4, 6, 7),), (torch.randn(3, 4, 6, 7),)],
              dynamic_shapes=({0: BATCH},),
              description="unfold -> per-patch linear -> fold, normalised by the fold of ones (im2col, Col2Im)"))


def box_iou(a, b):
    """IoU of every pair of boxes (x1, y1, x2, y2): [..., K, 4] x [..., K, 4] -> [..., K, K]."""
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    lt = torch.maximum(a[..., :, None, :2], b[..., None, :, :2])
    rb = torch.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[..., :, None] + area_b[..., None, :] - inter)


class DetectionHeadNMS(nn.Module):
    """A conv head scores an anchor per cell and regresses its box; the top-k boxes by score go through a
    greedy NMS: box i survives if no higher-scoring surviving box overlaps it above the threshold. The loop
    over k is unrolled and carried as a keep mask, so the output has a static shape [N, k, 5] (box, score
    times keep)."""

    def __init__(self, channels=8, top_k=8, iou_threshold=0.5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.ReLU())
        self.score = nn.Conv2d(channels, 1, 1)
        self.box = nn.Conv2d(channels, 4, 1)
        self.top_k, self.iou_threshold = top_k, iou_threshold

    def forward(self, x):
        f = self.backbone(x)
        n, _, h, w = f.shape
        scores = torch.sigmoid(self.score(f)).flatten(1)  # [N, H*W]
        ys = torch.arange(h, dtype=torch.float32)[:, None].expand(h, w).reshape(-1)
        xs = torch.arange(w, dtype=torch.float32)[None, :].expand(h, w).reshape(-1)
        d = self.box(f).flatten(2).transpose(1, 2)  # [N, H*W, 4]: centre offsets and log sizes
        cx, cy = xs + torch.tanh(d[..., 0]), ys + torch.tanh(d[..., 1])
        bw, bh = torch.exp(d[..., 2].clamp(max=2)) * 2, torch.exp(d[..., 3].clamp(max=2)) * 2
        boxes = torch.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], dim=-1)
        top, idx = scores.topk(self.top_k, dim=1)  # sorted, highest first
        top_boxes = torch.gather(boxes, 1, idx[..., None].expand(n, self.top_k, 4))
        overlap = box_iou(top_boxes, top_boxes) > self.iou_threshold  # [N, k, k]
        keep = torch.ones_like(top)
        for i in range(1, self.top_k):
            earlier = overlap[:, i, :i].to(top.dtype) * keep[:, :i]  # surviving higher-scoring boxes over i
            keep = torch.cat([keep[:, :i], (earlier.sum(1, keepdim=True) == 0).to(top.dtype), keep[:, i + 1:]], 1)
        return torch.cat([top_boxes, (top * keep)[..., None]], dim=-1)


register(Case(name="vision_detection_nms", make_module=DetectionHeadNMS,
              input_sets=lambda: [(torch.randn(2, 3, 12, 12),), (torch.randn(3, 3, 12, 12),)],
              dynamic_shapes=({0: BATCH},),
              description="detection head: anchor scores and boxes, top-k, greedy NMS as IoU masks in torch ops"))
