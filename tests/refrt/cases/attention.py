"""Attention (23) and RotaryEmbedding (23): numpy oracles from the spec's formulas, in float64."""


def attention_ref(np, q, k, v, mask=None, past_k=None, past_v=None, q_heads=None, kv_heads=None, scale=None,
                  causal=False, softcap=0.0, mode=None):
    three_d = q.ndim == 3

    def split(t, h):  # [B, S, h*d] -> [B, h, S, d]
        return t.reshape(t.shape[0], t.shape[1], h, -1).transpose(0, 2, 1, 3) if three_d else t

    Q, K, V = split(q, q_heads).astype(np.float64), split(k, kv_heads).astype(np.float64), \
        split(v, kv_heads).astype(np.float64)
    if past_k is not None:
        K = np.concatenate([past_k.astype(np.float64), K], axis=2)
        V = np.concatenate([past_v.astype(np.float64), V], axis=2)
    present_k, present_v = K.astype(q.dtype), V.astype(q.dtype)
    b, qh, sq, hd = Q.shape
    total = K.shape[2]
    rep = qh // K.shape[1]
    Kr, Vr = np.repeat(K, rep, axis=1), np.repeat(V, rep, axis=1)
    s = (scale if scale is not None else 1 / np.sqrt(hd)) * (Q @ Kr.transpose(0, 1, 3, 2))
    raw = s.copy()
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    capped = s.copy()
    bias = np.zeros((b, qh, sq, total))
    if causal:
        past = 0 if past_k is None else past_k.shape[2]
        allowed = np.arange(total)[None, :] <= np.arange(sq)[:, None] + past
        bias = bias + np.where(allowed, 0.0, -np.inf)
    if mask is not None:
        m = mask
        if m.shape[-1] < total:  # a shorter last dim is padded as masked
            pad = [(0, 0)] * (m.ndim - 1) + [(0, total - m.shape[-1])]
            m = np.pad(m, pad, constant_values=False if m.dtype == bool else -np.inf)
        bias = bias + (np.where(m, 0.0, -np.inf) if m.dtype == bool else m.astype(np.float64))
    s = s + bias
    masked_rows = np.isneginf(bias.max(-1, keepdims=True))
    e = np.exp(s - np.where(masked_rows, 0, s.max(-1, keepdims=True)))
    p = np.where(masked_rows, 0.0, e / np.where(masked_rows, 1, e.sum(-1, keepdims=True)))
    y = p @ Vr
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    qk = {0: raw, 1: capped, 2: s, 3: p}.get(mode)
    return y.astype(q.dtype), present_k, present_v, (None if qk is None else qk.astype(q.dtype))


def rotary_ref(np, x, cos, sin, pos=None, interleaved=0, num_heads=None, dim=None):
    three_d = x.ndim == 3
    X = x.reshape(x.shape[0], x.shape[1], num_heads, -1) if three_d else x.transpose(0, 2, 1, 3)  # [B, S, H, D]
    X = X.astype(np.float64)
    d = dim or X.shape[-1]
    c, s = (cos[pos], sin[pos]) if pos is not None else (cos, sin)  # [B, S, d/2]
    c, s = c[:, :, None, :].astype(np.float64), s[:, :, None, :].astype(np.float64)
    rot = X[..., :d]
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else (rot[..., : d // 2], rot[..., d // 2:])
    r1, r2 = c * x1 - s * x2, s * x1 + c * x2
    out = X.copy()
    if interleaved:
        out[..., 0:d:2], out[..., 1:d:2] = r1, r2
    else:
        out[..., : d // 2], out[..., d // 2: d] = r1, r2
    out = out.reshape(x.shape) if three_d else out.transpose(0, 2, 1, 3)
    return out.astype(x.dtype)


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    tol = (1e-5, 1e-5)

    def add(name, q, k, v, mask=None, past=None, outs=("y",), t=tol, **attrs):
        names = ["q", "k", "v", "mask" if mask is not None else "", "pk" if past else "", "pv" if past else ""]
        while names[-1] == "":
            names.pop()
        inputs = {"q": q, "k": k, "v": v}
        if mask is not None:
            inputs["mask"] = mask
        if past:
            inputs["pk"], inputs["pv"] = past
        y, pk, pv, qk = attention_ref(np, q, k, v, mask, *(past or (None, None)), q_heads=attrs.get("q_num_heads"),
                                      kv_heads=attrs.get("kv_num_heads"), scale=attrs.get("scale"),
                                      causal=bool(attrs.get("is_causal", 0)), softcap=attrs.get("softcap", 0.0),
                                      mode=attrs.get("qk_matmul_output_mode", 0 if "qk" in outs else None))
        values = {"y": y, "present_k": pk, "present_v": pv, "qk": qk}
        out_names = list(outs)
        case(f"attention_{name}", [node("Attention", names, out_names, **attrs)], inputs,
             {n: values[n] for n in out_names}, opset=23, tol=t)

    B, S, D = 2, 5, 8
    q, k, v = rand(B, 4, S, D), rand(B, 4, S, D), rand(B, 4, S, D)
    add("4d_basic", q, k, v)
    add("4d_causal", q, k, v, is_causal=1)
    add("4d_scale", q, k, v, scale=0.3)
    add("4d_softcap", q, k, v, softcap=2.0, scale=1.5)
    add("4d_bool_mask", q, k, v, mask=api.RNG.integers(0, 2, (S, S)).astype(bool) | np.eye(S, dtype=bool))
    add("4d_float_mask_broadcast_heads", q, k, v, mask=rand(B, 1, S, S))
    add("4d_mask_and_causal", q, k, v, mask=rand(S, S), is_causal=1)
    kc, vc = rand(B, 4, 7, D), rand(B, 4, 7, 6)
    add("4d_cross_different_v_head", q, kc, vc)
    add("4d_gqa", rand(B, 6, S, D), rand(B, 2, S, D), rand(B, 2, S, D), is_causal=1)
    add("4d_mqa", rand(1, 4, 3, D), rand(1, 1, 6, D), rand(1, 1, 6, D))
    past = (rand(B, 2, 3, D), rand(B, 2, 3, D))
    add("4d_past_causal_present", rand(B, 4, 2, D), rand(B, 2, 2, D), rand(B, 2, 2, D), past=past, is_causal=1,
        outs=("y", "present_k", "present_v"))
    add("3d_heads", rand(B, S, 4 * D), rand(B, 7, 2 * D), rand(B, 7, 2 * 6), q_num_heads=4, kv_num_heads=2)
    add("3d_causal_mask", rand(1, S, 2 * D), rand(1, S, 2 * D), rand(1, S, 2 * D), q_num_heads=2, kv_num_heads=2,
        is_causal=1, mask=rand(1, 2, S, S))
    for mode in (0, 1, 2, 3):
        add(f"qk_output_mode{mode}", q, k, v, mask=rand(S, S), softcap=(3.0 if mode else 0.0), qk_matmul_output_mode=mode,
            outs=("y", "present_k", "present_v", "qk"))
    add("f64", rand(1, 2, 3, 4, dtype=np.float64), rand(1, 2, 5, 4, dtype=np.float64),
        rand(1, 2, 5, 4, dtype=np.float64), t=(1e-8, 1e-8))  # onnxruntime's f64 Attention is off by ~7e-9
    q16, k16, v16 = (rand(1, 2, 4, 8).astype(np.float16) for _ in range(3))
    add("f16", q16, k16, v16, is_causal=1, t=(3e-3, 3e-3))

    # RotaryEmbedding
    for inter in (0, 1):
        x = rand(2, 3, 5, 8)  # [B, H, S, D]
        cos, sin = rand(2, 5, 4), rand(2, 5, 4)
        case(f"rotary_4d_interleaved{inter}", [node("RotaryEmbedding", ["x", "c", "s"], ["y"], interleaved=inter)],
             {"x": x, "c": cos, "s": sin}, {"y": rotary_ref(np, x, cos, sin, interleaved=inter)}, opset=23, tol=tol)
        x = rand(2, 5, 3 * 8)
        cache_c, cache_s = rand(10, 2), rand(10, 2)
        pos = api.RNG.integers(0, 10, (2, 5)).astype(np.int64)
        case(f"rotary_3d_position_ids_partial_dim_interleaved{inter}",
             [node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"], interleaved=inter, num_heads=3,
                   rotary_embedding_dim=4)],
             {"x": x, "c": cache_c, "s": cache_s, "p": pos},
             {"y": rotary_ref(np, x, cache_c, cache_s, pos, inter, num_heads=3, dim=4)}, opset=23, tol=tol)
    x = rand(1, 2, 3, 6).astype(np.float16)
    cos, sin = rand(1, 3, 3).astype(np.float16), rand(1, 3, 3).astype(np.float16)
    want = rotary_ref(np, x.astype(np.float32), cos.astype(np.float32), sin.astype(np.float32)).astype(np.float16)
    case("rotary_f16", [node("RotaryEmbedding", ["x", "c", "s"], ["y"])], {"x": x, "c": cos, "s": sin},
         {"y": want}, opset=23, tol=(2e-3, 2e-3))
