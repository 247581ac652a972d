"""Recurrent layers (LSTM): a numpy oracle written from the ONNX operator equations, in float64.

Each batch entry is run on its own, over its own valid steps (sequence_lens), so the oracle shares no
structure with refrt's batched GEMM formulation.
"""


def _sigmoid(np, x):
    return 1 / (1 + np.exp(-x))


def lstm_reference(np, x, w, r, b=None, lens=None, h0=None, c0=None, p=None, direction="forward", layout=0,
                   clip=None, input_forget=False):
    """x [S,B,I] (layout 0) or [B,S,I]; returns Y, Y_h, Y_c in the same layout."""
    x, w, r = (a.astype(np.float64) for a in (x, w, r))
    if layout == 1:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    dirs, hidden = r.shape[0], r.shape[2]
    lens = np.full(batch, seq) if lens is None else lens
    y = np.zeros((seq, dirs, batch, hidden))
    y_h = np.zeros((dirs, batch, hidden))
    y_c = np.zeros((dirs, batch, hidden))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(dirs):
        wi, wo, wf, wc = np.split(w[d], 4)
        ri, ro, rf, rc = np.split(r[d], 4)
        bias = np.zeros(8 * hidden) if b is None else b[d].astype(np.float64)
        wbi, wbo, wbf, wbc, rbi, rbo, rbf, rbc = np.split(bias, 8)
        pi, po, pf = np.split(np.zeros(3 * hidden) if p is None else p[d].astype(np.float64), 3)
        backward = direction == "reverse" or d == 1
        for n in range(batch):
            h = np.zeros(hidden) if h0 is None else h0[d, n].astype(np.float64)
            c = np.zeros(hidden) if c0 is None else c0[d, n].astype(np.float64)
            steps = range(lens[n] - 1, -1, -1) if backward else range(lens[n])
            for t in steps:
                xt = x[t, n]
                i = _sigmoid(np, cl(xt @ wi.T + h @ ri.T + pi * c + wbi + rbi))
                f = 1 - i if input_forget else _sigmoid(np, cl(xt @ wf.T + h @ rf.T + pf * c + wbf + rbf))
                g = np.tanh(cl(xt @ wc.T + h @ rc.T + wbc + rbc))
                c = f * c + i * g
                o = _sigmoid(np, cl(xt @ wo.T + h @ ro.T + po * c + wbo + rbo))
                h = o * np.tanh(c)
                y[t, d, n] = h
            y_h[d, n], y_c[d, n] = h, c
    if layout == 1:
        return y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    return y, y_h, y_c


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-5, 1e-5)

    # name, seq, batch, input, hidden, direction, layout, with B, with initial h/c, with P, opset, extra attrs
    rows = (
        ("forward_defaults", 3, 2, 4, 5, "forward", 0, False, False, False, 7, {}),
        ("forward_bias_states", 4, 3, 3, 2, "forward", 0, True, True, False, 14, {}),
        ("reverse_bias", 5, 1, 2, 3, "reverse", 0, True, False, False, 14, {}),
        ("bidirectional_all", 3, 3, 5, 4, "bidirectional", 0, True, True, True, 14, {}),
        ("layout1_forward", 4, 2, 3, 3, "forward", 1, True, True, False, 14, {}),
        ("layout1_bidirectional", 2, 5, 3, 2, "bidirectional", 1, True, True, False, 14, {}),
        ("batch1_odd", 7, 1, 1, 7, "forward", 0, True, False, False, 14, {}),
        ("peepholes_reverse", 3, 2, 3, 3, "reverse", 0, True, True, True, 14, {}),
        ("clip", 3, 2, 3, 4, "forward", 0, True, False, False, 14, {"clip": 0.5}),
        ("input_forget", 3, 2, 3, 4, "bidirectional", 0, True, True, False, 14, {"input_forget": 1}),
    )
    for name, s, bsz, i, h, direction, layout, with_b, with_state, with_p, opset, extra in rows:
        dirs = 2 if direction == "bidirectional" else 1
        x = rand(*((s, bsz, i) if layout == 0 else (bsz, s, i)), low=-2, high=2)
        w, r = rand(dirs, 4 * h, i), rand(dirs, 4 * h, h)
        b = rand(dirs, 8 * h) if with_b else None
        state = (dirs, bsz, h) if layout == 0 else (bsz, dirs, h)
        h0, c0 = (rand(*state), rand(*state)) if with_state else (None, None)
        p = rand(dirs, 3 * h) if with_p else None
        y, y_h, y_c = lstm_reference(np, x, w, r, b, None, h0, c0, p, direction, layout, extra.get("clip"),
                                     bool(extra.get("input_forget")))
        inputs = {"x": x, "w": w, "r": r}
        names = ["x", "w", "r", "b" if with_b else "", "", "h0" if with_state else "", "c0" if with_state else "",
                 "p" if with_p else ""]
        for k, v in (("b", b), ("h0", h0), ("c0", c0), ("p", p)):
            if v is not None:
                inputs[k] = v
        while names[-1] == "":
            names.pop()
        attrs = dict(hidden_size=h, direction=direction, **extra)
        if layout:
            attrs["layout"] = 1
        ort_differs = None
        case(f"lstm_{name}", [node("LSTM", names, ["y", "y_h", "y_c"], **attrs)], inputs,
             {"y": y.astype(np.float32), "y_h": y_h.astype(np.float32), "y_c": y_c.astype(np.float32)},
             opset=opset, tol=tol, ort_differs=ort_differs)

    # sequence_lens per batch entry (forward and reverse both start from each entry's own ends)
    for direction in ("forward", "bidirectional"):
        dirs = 2 if direction == "bidirectional" else 1
        x, w, r, b = rand(5, 3, 2), rand(dirs, 12, 2), rand(dirs, 12, 3), rand(dirs, 24)
        lens = np.array([5, 2, 3], np.int32)
        y, y_h, y_c = lstm_reference(np, x, w, r, b, lens, direction=direction)
        case(f"lstm_sequence_lens_{direction}", [node("LSTM", ["x", "w", "r", "b", "lens"], ["y", "y_h", "y_c"],
                                                      hidden_size=3, direction=direction)],
             {"x": x, "w": w, "r": r, "b": b, "lens": lens},
             {"y": y.astype(np.float32), "y_h": y_h.astype(np.float32), "y_c": y_c.astype(np.float32)}, tol=tol)

    # float64, only Y_h requested
    x, w, r = rand(3, 2, 3, dtype=np.float64), rand(1, 8, 3, dtype=np.float64), rand(1, 8, 2, dtype=np.float64)
    _, y_h, _ = lstm_reference(np, x, w, r)
    case("lstm_f64_only_y_h", [node("LSTM", ["x", "w", "r"], ["", "y_h"], hidden_size=2)], {"x": x, "w": w, "r": r},
         {"y_h": y_h}, tol=(1e-12, 1e-12))

    # float16 is computed in float32 and rounded once
    x, w, r, b = (rand(*s).astype(np.float16) for s in ((4, 2, 3), (1, 12, 3), (1, 12, 3), (1, 24)))
    y, y_h, y_c = lstm_reference(np, x, w, r, b)
    case("lstm_f16", [node("LSTM", ["x", "w", "r", "b"], ["y", "y_h", "y_c"], hidden_size=3)],
         {"x": x, "w": w, "r": r, "b": b},
         {"y": y.astype(np.float16), "y_h": y_h.astype(np.float16), "y_c": y_c.astype(np.float16)}, tol=(2e-3, 2e-3))

    _gru_rows(api)
    _rnn_rows(api)


def gru_reference(np, x, w, r, b=None, lens=None, h0=None, direction="forward", layout=0, clip=None,
                  linear_before_reset=False):
    """ONNX GRU (gates z, r, h); returns Y, Y_h in the layout of x."""
    x, w, r = (a.astype(np.float64) for a in (x, w, r))
    if layout == 1:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    dirs, hidden = r.shape[0], r.shape[2]
    lens = np.full(batch, seq) if lens is None else lens
    y, y_h = np.zeros((seq, dirs, batch, hidden)), np.zeros((dirs, batch, hidden))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(dirs):
        wz, wr, wh = np.split(w[d], 3)
        rz, rr, rh = np.split(r[d], 3)
        wbz, wbr, wbh, rbz, rbr, rbh = np.split(np.zeros(6 * hidden) if b is None else b[d].astype(np.float64), 6)
        backward = direction == "reverse" or d == 1
        for n in range(batch):
            h = np.zeros(hidden) if h0 is None else h0[d, n].astype(np.float64)
            for t in (range(lens[n] - 1, -1, -1) if backward else range(lens[n])):
                xt = x[t, n]
                z = _sigmoid(np, cl(xt @ wz.T + h @ rz.T + wbz + rbz))
                rt = _sigmoid(np, cl(xt @ wr.T + h @ rr.T + wbr + rbr))
                if linear_before_reset:
                    cand = np.tanh(cl(xt @ wh.T + rt * (h @ rh.T + rbh) + wbh))
                else:
                    cand = np.tanh(cl(xt @ wh.T + (rt * h) @ rh.T + rbh + wbh))
                h = (1 - z) * cand + z * h
                y[t, d, n] = h
            y_h[d, n] = h
    if layout == 1:
        return y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    return y, y_h


def rnn_reference(np, x, w, r, b=None, h0=None, direction="forward", activation=None):
    activation = np.tanh if activation is None else activation
    x, w, r = (a.astype(np.float64) for a in (x, w, r))
    seq, batch, _ = x.shape
    dirs, hidden = r.shape[0], r.shape[2]
    y, y_h = np.zeros((seq, dirs, batch, hidden)), np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        wb, rb = np.split(np.zeros(2 * hidden) if b is None else b[d].astype(np.float64), 2)
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        for t in (range(seq - 1, -1, -1) if direction == "reverse" or d == 1 else range(seq)):
            h = activation(x[t] @ w[d].T + h @ r[d].T + wb + rb)
            y[t, d] = h
        y_h[d] = h
    return y, y_h


def _gru_rows(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-5, 1e-5)
    # name, seq, batch, input, hidden, direction, layout, B, initial_h, linear_before_reset, opset, attrs
    rows = (
        ("forward_defaults", 3, 2, 4, 5, "forward", 0, False, False, 0, 7, {}),
        ("forward_bias_state", 4, 3, 3, 2, "forward", 0, True, True, 0, 14, {}),
        ("linear_before_reset", 4, 3, 3, 4, "forward", 0, True, True, 1, 14, {}),
        ("reverse", 5, 1, 2, 3, "reverse", 0, True, False, 1, 14, {}),
        ("bidirectional", 3, 3, 5, 4, "bidirectional", 0, True, True, 0, 14, {}),
        ("bidirectional_lbr", 3, 2, 2, 3, "bidirectional", 0, True, True, 1, 14, {}),
        ("layout1", 4, 2, 3, 3, "bidirectional", 1, True, True, 1, 14, {}),
        ("clip", 3, 2, 3, 4, "forward", 0, True, False, 0, 14, {"clip": 0.4}),
    )
    for name, s, bsz, i, h, direction, layout, with_b, with_state, lbr, opset, extra in rows:
        dirs = 2 if direction == "bidirectional" else 1
        x = rand(*((s, bsz, i) if layout == 0 else (bsz, s, i)), low=-2, high=2)
        w, r = rand(dirs, 3 * h, i), rand(dirs, 3 * h, h)
        b = rand(dirs, 6 * h) if with_b else None
        h0 = rand(*((dirs, bsz, h) if layout == 0 else (bsz, dirs, h))) if with_state else None
        y, y_h = gru_reference(np, x, w, r, b, None, h0, direction, layout, extra.get("clip"), bool(lbr))
        inputs = {"x": x, "w": w, "r": r}
        names = ["x", "w", "r", "b" if with_b else "", "", "h0" if with_state else ""]
        for k, v in (("b", b), ("h0", h0)):
            if v is not None:
                inputs[k] = v
        while names[-1] == "":
            names.pop()
        attrs = dict(hidden_size=h, direction=direction, linear_before_reset=lbr, **extra)
        if layout:
            attrs["layout"] = 1
        case(f"gru_{name}", [node("GRU", names, ["y", "y_h"], **attrs)], inputs,
             {"y": y.astype(np.float32), "y_h": y_h.astype(np.float32)}, opset=opset, tol=tol)
    x, w, r, b = rand(5, 3, 2), rand(2, 9, 2), rand(2, 9, 3), rand(2, 18)
    lens = np.array([1, 5, 3], np.int32)
    y, y_h = gru_reference(np, x, w, r, b, lens, direction="bidirectional")
    case("gru_sequence_lens_bidirectional", [node("GRU", ["x", "w", "r", "b", "lens"], ["y", "y_h"], hidden_size=3,
                                                   direction="bidirectional")],
         {"x": x, "w": w, "r": r, "b": b, "lens": lens}, {"y": y.astype(np.float32), "y_h": y_h.astype(np.float32)},
         tol=tol)


def _rnn_rows(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    for name, direction, act in (("forward_tanh", "forward", "Tanh"), ("bidirectional_relu", "bidirectional", "Relu"),
                                 ("reverse", "reverse", "Tanh")):
        dirs = 2 if direction == "bidirectional" else 1
        x, w, r, b, h0 = rand(4, 3, 2), rand(dirs, 5, 2), rand(dirs, 5, 5), rand(dirs, 10), rand(dirs, 3, 5)
        fn = np.tanh if act == "Tanh" else (lambda v: np.maximum(v, 0))
        y, y_h = rnn_reference(np, x, w, r, b, h0, direction, fn)
        case(f"rnn_{name}", [node("RNN", ["x", "w", "r", "b", "", "h0"], ["y", "y_h"], hidden_size=5,
                                  direction=direction, activations=[act] * dirs)],
             {"x": x, "w": w, "r": r, "b": b, "h0": h0}, {"y": y.astype(np.float32), "y_h": y_h.astype(np.float32)},
             tol=(1e-5, 1e-5))
