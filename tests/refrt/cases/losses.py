"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Oracle: the loss definitions in numpy float64
(loss = -input[target] * weight[target]; ignore_index positions count 0 with weight 0; mean divides by
the summed weights)."""
import numpy as np

RNG = np.random.default_rng(1224)  # own stream: the shared one feeds the other tables


def nll(logp, target, weight=None, reduction="mean", ignore_index=None):
    n, c = logp.shape[:2]
    lp = logp.reshape(n, c, -1).astype(np.float64)
    t = target.reshape(n, -1)
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    loss = np.zeros(t.shape)
    wsum = 0.0
    for i in range(n):
        for d in range(t.shape[1]):
            if ignore_index is not None and t[i, d] == ignore_index:
                continue
            loss[i, d] = -lp[i, t[i, d], d] * w[t[i, d]]
            wsum += w[t[i, d]]
    if reduction == "none":
        return loss.reshape(target.shape)
    return np.array(loss.sum() if reduction == "sum" else loss.sum() / wsum)


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def build(api):
    case, node = api.case, api.node
    tol = (1e-5, 1e-6)
    x = RNG.uniform(-3, 0, (4, 5, 3)).astype(np.float32)
    t = RNG.integers(0, 5, (4, 3)).astype(np.int64)
    w = RNG.uniform(0.2, 2, 5).astype(np.float32)
    for red in ("none", "sum", "mean"):
        case(f"nll_loss_NCd_weight_{red}", [node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], reduction=red)],
             {"x": x, "t": t, "w": w}, {"y": nll(x, t, w, red).astype(np.float32)}, opset=13, tol=tol)
    t_ii = t.copy()
    t_ii[0, 1] = t_ii[2, 2] = -100
    case("nll_loss_ignore_index_mean_int32_target", [node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], ignore_index=-100)],
         {"x": x, "t": t_ii.astype(np.int32)}, {"y": nll(x, t_ii, None, "mean", -100).astype(np.float32)}, opset=13, tol=tol)
    x2 = RNG.uniform(-3, 0, (6, 4)).astype(np.float64)
    t2 = RNG.integers(0, 4, (6,)).astype(np.int64)
    case("nll_loss_NC_f64_opset12", [node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])], {"x": x2, "t": t2},
         {"y": nll(x2, t2)}, opset=12, tol=(1e-12, 1e-12))

    s = RNG.uniform(-4, 4, (3, 5, 2, 2)).astype(np.float32)
    lbl = RNG.integers(0, 5, (3, 2, 2)).astype(np.int64)
    for red in ("none", "sum", "mean"):
        case(f"sce_loss_NCd1d2_{red}_with_log_prob", [node("SoftmaxCrossEntropyLoss", ["s", "l"], ["y", "lp"], reduction=red)],
             {"s": s, "l": lbl}, {"y": nll(log_softmax(s), lbl, None, red).astype(np.float32),
                                  "lp": log_softmax(s).astype(np.float32)}, opset=13, tol=tol)
    lbl_ii = lbl.copy()
    lbl_ii[1, 0, 1] = 3
    w5 = RNG.uniform(0.2, 2, 5).astype(np.float32)
    case("sce_loss_weight_ignore_index_mean", [node("SoftmaxCrossEntropyLoss", ["s", "l", "w"], ["y"], ignore_index=3)],
         {"s": s, "l": lbl_ii, "w": w5}, {"y": nll(log_softmax(s), lbl_ii, w5, "mean", 3).astype(np.float32)},
         opset=13, tol=tol)
    s16 = RNG.uniform(-2, 2, (4, 3)).astype(np.float16)
    l16 = RNG.integers(0, 3, (4,)).astype(np.int64)
    case("sce_loss_float16_sum", [node("SoftmaxCrossEntropyLoss", ["s", "l"], ["y"], reduction="sum")],
         {"s": s16, "l": l16}, {"y": nll(log_softmax(s16.astype(np.float64)), l16, None, "sum").astype(np.float16)},
         opset=13, tol=(1e-3, 1e-3))
