"""Fused attention (refrt/src/optimize/fuse_attention.cc, refrt/kernels/attention_fused*.cc): the chains the
exporters write for scaled_dot_product_attention (MatMul with the key transposed, scale, additive or Where
mask, Softmax or torch's _safe_softmax decomposed, MatMul with V; rows fusion_attention_*, which
graph_optimize_test.cc also checks are fused, and fusion_keep_attention_* where an intermediate has another
reader, which must stay unfused), and Attention (23) nodes the fused kernel takes (rows attention_fused_*:
long key ranges past one 512-key block, so that the online softmax rescales, causal prefill, decode, masks
with fully masked rows, GQA). Oracles: numpy in float64 on the unfused formulas, and attention.py's
attention_ref for the Attention op. Data from an own generator, so the shared one (and every later table's
data) is unchanged."""
import importlib.util
import math
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_attention_oracle", os.path.join(os.path.dirname(__file__),
                                                                                          "attention.py"))
_attention = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_attention)
attention_ref = _attention.attention_ref


def build(api):
    np, node, case = api.np, api.node, api.case
    f32 = np.float32
    own = np.random.default_rng(4602)
    tol = (1e-5, 1e-5)  # as attention.py's rows: float32 against float64, sums of up to ~1100 products

    def rand(*shape, scale=1.0):
        return (own.uniform(-1, 1, shape) * scale).astype(f32)

    def softmax(z, safe):
        z = z.astype(np.float64)
        dead = np.isneginf(z).all(axis=-1, keepdims=True)
        m = np.where(dead, 0, z.max(axis=-1, keepdims=True))
        e = np.exp(z - m)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = e / e.sum(axis=-1, keepdims=True)
        return np.where(dead, 0.0 if safe else np.nan, p)

    def safe_softmax_nodes(x, out, tag):
        """torch's _safe_softmax as torch.export decomposes it (fuse_safe_softmax makes one node of it)."""
        return [node("Softmax", [x], [f"{tag}_sm"], axis=3), node("Equal", [x, "neg_inf"], [f"{tag}_eq"]),
                node("Not", [f"{tag}_eq"], [f"{tag}_ne"]),
                node("Cast", [f"{tag}_ne"], [f"{tag}_ci"], to=api.TensorProto.INT32),
                node("ReduceMax", [f"{tag}_ci", "axes_last"], [f"{tag}_rm"], keepdims=1),
                node("Cast", [f"{tag}_rm"], [f"{tag}_any"], to=api.TensorProto.BOOL),
                node("Not", [f"{tag}_any"], [f"{tag}_none"]), node("Where", [f"{tag}_none", "zero", f"{tag}_sm"], [out])]

    # ---- BERT-style: K transposed by a Transpose, Div by sqrt(d), additive padding mask [B, 1, 1, T].
    B, H, S, D = 2, 3, 37, 16
    q, k, v = rand(B, H, S, D), rand(B, H, S, D), rand(B, H, S, D)
    pad = np.zeros((B, 1, 1, S), f32)
    pad[1, ..., 30:] = -1e4
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["s"]),
             node("Div", ["s", "root_d"], ["sd"]), node("Add", ["sd", "pad"], ["sm_in"]),
             node("Softmax", ["sm_in"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]
    sc = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / math.sqrt(D) + pad
    case("fusion_attention_bert_padding_mask", nodes, {"q": q, "k": k, "v": v, "pad": pad},
         {"y": (softmax(sc, False) @ v).astype(f32)}, initializers={"root_d": np.array(math.sqrt(D), f32)}, tol=tol,
         threads=(2,))

    # ---- as torch.export + parity export write F.scaled_dot_product_attention: Q and K^T each scaled by
    # sqrt(scale) through 3-D Reshapes, K^T from [B, T, H, d] by perm [0, 2, 3, 1], scores back to 4-D, an
    # additive causal + padding mask with -inf (fully masked rows), _safe_softmax, probabilities to 3-D.
    B, H, S, D = 2, 2, 45, 8
    qh, kr, v = rand(B, H, S, D), rand(B, S, H, D), rand(B, H, S, D)
    allowed = np.tril(np.ones((S, S), bool))[None, None] & np.ones((B, 1, 1, 1), bool)
    allowed[1, :, 5:9, :] = False  # rows with every key masked: _safe_softmax gives zeros
    mask = np.where(allowed, 0.0, -np.inf).astype(f32)
    r = np.array(D ** -0.25, f32)
    nodes = [node("Mul", ["q", "r"], ["qs"]), node("Reshape", ["qs", "shape_q3"], ["q3"]),
             node("Transpose", ["kr"], ["kt4"], perm=[0, 2, 3, 1]), node("Mul", ["kt4", "r"], ["kts"]),
             node("Reshape", ["kts", "shape_k3"], ["kt3"]), node("MatMul", ["q3", "kt3"], ["s3"]),
             node("Reshape", ["s3", "shape_s4"], ["s4"]), node("Add", ["s4", "mask"], ["sm_in"])]
    nodes += safe_softmax_nodes("sm_in", "p4", "ss")
    nodes += [node("Reshape", ["p4", "shape_p3"], ["p3"]), node("Reshape", ["v", "shape_v3"], ["v3"]),
              node("MatMul", ["p3", "v3"], ["y3"]), node("Reshape", ["y3", "shape_y4"], ["y"])]
    qs, ks = qh * r, kr.transpose(0, 2, 3, 1) * r
    sc = qs.astype(np.float64) @ ks.astype(np.float64) + mask
    want = softmax(sc, True) @ v
    inits = {"r": r, "shape_q3": np.array([B * H, S, D], np.int64), "shape_k3": np.array([B * H, D, S], np.int64),
             "shape_s4": np.array([B, H, S, S], np.int64), "shape_p3": np.array([-1, S, S], np.int64),
             "shape_v3": np.array([B * H, S, D], np.int64), "shape_y4": np.array([B, H, S, D], np.int64),
             "neg_inf": np.array(-np.inf, f32), "axes_last": np.array([3], np.int64),
             "zero": np.zeros((B, H, S, S), f32)}  # the exporter's Expand, folded
    case("fusion_attention_torch_export_safe_softmax", nodes, {"q": qh, "kr": kr, "v": v, "mask": mask},
         {"y": want.astype(f32)}, initializers=inits, tol=tol, threads=(2,))

    # ---- Where masks: Where(keep, s, -inf) with a boolean [S, T] mask, and Where(drop, -1e9, s) whose
    # fully dropped rows become uniform (the fill is a score like any other).
    B, H, S, T, D = 1, 4, 20, 29, 8
    q, k, v = rand(B, H, S, D), rand(B, H, T, D), rand(B, H, T, 12)
    keep = own.integers(0, 2, (S, T)).astype(bool)
    keep[:, 0] = True
    for tag, cond, where_in, fill in (("keep", keep, ["cond", "s", "fill"], -np.inf),
                                      ("drop_finite_fill", ~keep, ["cond", "fill", "s"], -1e9)):
        if tag != "keep":
            cond = cond.copy()
            cond[3] = True
        nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["s0"]),
                 node("Mul", ["s0", "sc"], ["s"]), node("Where", where_in, ["w"]),
                 node("Softmax", ["w"], ["p"], axis=3), node("MatMul", ["p", "v"], ["y"])]
        sc = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) * f32(0.3)
        sc = np.where(cond, sc, fill) if tag == "keep" else np.where(cond, fill, sc)
        case(f"fusion_attention_where_{tag}", nodes, {"q": q, "k": k, "v": v, "cond": cond},
             {"y": (softmax(sc, False) @ v).astype(f32)},
             initializers={"sc": np.array(0.3, f32), "fill": np.array(fill, f32)}, tol=tol)

    # ---- decode: one query row against 700 keys (two key blocks), the key heads broadcast over the query
    # heads by MatMul (multi-query), no scale, K given already transposed [B, 1, d, T].
    B, H, T, D = 2, 4, 700, 32
    q, kt, v = rand(B, H, 1, D), rand(B, 1, D, T), rand(B, 1, T, D)
    nodes = [node("MatMul", ["q", "kt"], ["s"]), node("Softmax", ["s"], ["p"], axis=-1),
             node("MatMul", ["p", "v"], ["y"])]
    case("fusion_attention_decode_mqa_long", nodes, {"q": q, "kt": kt, "v": v},
         {"y": (softmax(q.astype(np.float64) @ kt, False) @ v).astype(f32)}, tol=tol, threads=(2,))

    # ---- long prefill: 600 query rows (10 blocks) x 1100 keys (3 blocks), additive causal mask [S, T]
    # offset by 500 past keys, scores large enough that later blocks raise the running max.
    B, H, S, T, D = 1, 2, 600, 1100, 16
    q, k, v = rand(B, H, S, D, scale=3), rand(B, H, T, D, scale=3), rand(B, H, T, D)
    causal = np.where(np.arange(T)[None, :] <= np.arange(S)[:, None] + (T - S), 0.0, -np.inf).astype(f32)
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["s0"]),
             node("Mul", ["s0", "sc"], ["s"]), node("Add", ["causal", "s"], ["a"]),
             node("Softmax", ["a"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]
    sc = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) * f32(0.25) + causal
    case("fusion_attention_long_causal_prefill", nodes, {"q": q, "k": k, "v": v, "causal": causal},
         {"y": (softmax(sc, False) @ v).astype(f32)}, initializers={"sc": np.array(0.25, f32)}, tol=tol,
         threads=(2,))

    # ---- LLaMA-style: K^T by a Transpose of the last two axes, scaled, then a Reshape to 3-D before the
    # MatMul (read as K through the Reshape's shape); and a Reshape that regroups K^T's last two dims
    # (K^T materialised, as the graph does).
    B, H, S, T, D = 1, 4, 33, 33, 16
    q, k, v = rand(B * H, S, D), rand(B, H, T, D), rand(B * H, T, D)
    nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("Mul", ["kt", "r"], ["kts"]),
             node("Reshape", ["kts", "shape_k3"], ["kt3"]), node("MatMul", ["q", "kt3"], ["s"]),
             node("Softmax", ["s"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]
    kt = k.transpose(0, 1, 3, 2).reshape(B * H, D, T).astype(np.float64) * f32(0.25)
    case("fusion_attention_key_transpose_behind_reshape", nodes, {"q": q, "k": k, "v": v},
         {"y": (softmax(q.astype(np.float64) @ kt, False) @ v).astype(f32)},
         initializers={"r": np.array(0.25, f32), "shape_k3": np.array([-1, D, T], np.int64)}, tol=tol)
    q2 = rand(B * H, S, 2 * D)
    shape = np.array([B * H, 2 * D, -1], np.int64)  # K^T [1, 4, 16, 32] -> [4, 32, 16]
    k2 = rand(B, H, 32, D)
    kt2 = k2.transpose(0, 1, 3, 2).reshape(B * H, 2 * D, 16).astype(np.float64) * f32(0.25)
    v2 = rand(B * H, 16, D)
    case("fusion_attention_key_reshape_regroups", nodes, {"q": q2, "k": k2, "v": v2},
         {"y": (softmax(q2.astype(np.float64) @ kt2, False) @ v2).astype(f32)},
         initializers={"r": np.array(0.25, f32), "shape_k3": shape}, tol=tol)

    # ---- not fused: the probabilities are a graph output too; the scores are read by a second node.
    B, H, S, D = 1, 2, 6, 4
    q, k, v = rand(B, H, S, D), rand(B, H, S, D), rand(B, H, S, D)
    kt = np.ascontiguousarray(k.transpose(0, 1, 3, 2))  # no Transpose: fold_transpose_matmul must not fire either
    base = [node("MatMul", ["q", "kt"], ["s0"]),
            node("Mul", ["s0", "sc"], ["s"]), node("Softmax", ["s"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]
    sc = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) * f32(0.5)
    p = softmax(sc, False)
    case("fusion_keep_attention_probs_are_output", base, {"q": q, "kt": kt, "v": v},
         {"y": (p @ v).astype(f32), "p": p.astype(f32)}, initializers={"sc": np.array(0.5, f32)}, tol=tol)
    case("fusion_keep_attention_scores_read_twice", base + [node("Neg", ["s"], ["z"])], {"q": q, "kt": kt, "v": v},
         {"y": (p @ v).astype(f32), "z": (-sc).astype(f32)}, initializers={"sc": np.array(0.5, f32)}, tol=tol)

    # ---- Attention (23) on the fused kernel.
    def att(name, q, k, v, mask=None, t=tol, **attrs):
        names = ["q", "k", "v"] + (["mask"] if mask is not None else [])
        inputs = {"q": q, "k": k, "v": v}
        if mask is not None:
            inputs["mask"] = mask
        y = attention_ref(np, q, k, v, mask, q_heads=attrs.get("q_num_heads"), kv_heads=attrs.get("kv_num_heads"),
                          scale=attrs.get("scale"), causal=bool(attrs.get("is_causal", 0)))[0]
        case(f"attention_fused_{name}", [node("Attention", names, ["y"], **attrs)], inputs, {"y": y}, opset=23, tol=t,
             threads=(2,))

    att("long_keys", rand(1, 2, 70, 32), rand(1, 2, 1100, 32, scale=3), rand(1, 2, 1100, 32))
    att("causal_prefill_s600", rand(1, 2, 600, 16), rand(1, 2, 600, 16), rand(1, 2, 600, 16), is_causal=1)
    att("decode_one_row", rand(2, 4, 1, 64), rand(2, 4, 900, 64), rand(2, 4, 900, 64), scale=0.2)
    bool_mask = own.integers(0, 2, (2, 1, 9, 13)).astype(bool)
    bool_mask[0, 0, 4] = False  # every key masked: the Attention op's rows of zeros
    att("bool_mask_fully_masked_rows", rand(2, 3, 9, 8), rand(2, 3, 13, 8), rand(2, 3, 13, 8), mask=bool_mask)
    att("additive_mask", rand(2, 3, 9, 8), rand(2, 3, 13, 8), rand(2, 3, 13, 8), mask=rand(2, 3, 9, 13, scale=2))
    att("short_padding_mask", rand(2, 2, 5, 8), rand(2, 2, 11, 8), rand(2, 2, 11, 8),
        mask=np.ones((2, 1, 5, 7), bool))  # keys 7.. are masked (a shorter last dim)
    att("gqa_3d_causal", rand(2, 40, 6 * 16), rand(2, 40, 2 * 16), rand(2, 40, 2 * 24), q_num_heads=6,
        kv_num_heads=2, is_causal=1)

    # float16 / bfloat16: Q (and an additive mask) widened, K and V read in their dtype and widened one block of
    # keys at a time inside the core (a decode step's KV cache is not copied into float32 first), the output
    # rounded once. A decode step over a cache longer than one key block (the MatMul chain with K^T stored, an
    # additive mask), and the Attention op with GQA over 600 keys. Oracle: float64 on the half values, rounded
    # once; tolerance one unit in the last place, plus float32 sums of up to 900 products (1e-5) near zero. (Not
    # fusion_ rows: graph_optimize_test holds the unfused plan to the same tolerance, and unfused half nodes round
    # the scores and probabilities each; tests/python/test_refrt_attention_fused.py checks the chain fuses.)
    import ml_dtypes
    for dt, tag, ulp in ((ml_dtypes.bfloat16, "bf16", 2.0 ** -7), (np.float16, "f16", 2.0 ** -10)):
        q, kt, v = rand(2, 4, 1, 64).astype(dt), rand(2, 4, 64, 900).astype(dt), rand(2, 4, 900, 64).astype(dt)
        mask = np.where(own.uniform(size=(2, 1, 1, 900)) < 0.1, -np.inf, 0).astype(dt)
        nodes = [node("MatMul", ["q", "kt"], ["s"]), node("Mul", ["s", "scale"], ["ss"]),
                 node("Add", ["ss", "mask"], ["sm_in"]), node("Softmax", ["sm_in"], ["p"], axis=-1),
                 node("MatMul", ["p", "v"], ["y"])]
        scale = np.array(0.125, dt)
        sc = q.astype(np.float64) @ kt.astype(np.float64) * 0.125 + mask.astype(np.float64)
        case(f"attention_fused_half_decode_{tag}", nodes, {"q": q, "kt": kt, "v": v, "mask": mask},
             {"y": (softmax(sc, False) @ v.astype(np.float64)).astype(dt)}, initializers={"scale": scale},
             tol=(ulp, 1e-5), threads=(2,))
        qa, ka, va = rand(1, 4, 7, 32).astype(dt), rand(1, 2, 600, 32).astype(dt), rand(1, 2, 600, 32).astype(dt)
        y = attention_ref(np, qa.astype(np.float64), ka.astype(np.float64), va.astype(np.float64), None)[0]
        case(f"attention_fused_half_gqa_{tag}", [node("Attention", ["q", "k", "v"], ["y"])],
             {"q": qa, "k": ka, "v": va}, {"y": y.astype(dt)}, opset=23, tol=(ulp, 1e-5), threads=(2,),
             ort_differs=None if tag == "bf16" else "onnxruntime's float16 Attention is up to 56 float16 ulps (6e-5) "
             "from the float64 answer rounded once (measured); eager's CPU SDPA sums in float32 as refrt does")

    # ---- grouped-query attention as torch exports repeat_interleave(kv, g, dim=1): K and V [B, kvH, T, c] through
    # Unsqueeze(2) -> Expand([B, kvH, g, T, c]) -> Reshape([B, kvH * g, T, c]); the fused node reads K and V as they
    # are (query head h reads kv head h / g: fold_kv_expand). Then a kv batch of 1 expanded to 2 (the kernel
    # expands it itself: not exactly [B, kvH, T, c]), and an expanded V that is also a graph output (not folded).
    def gqa_nodes():
        out = []
        for x in ("k", "v"):
            out += [node("Unsqueeze", [x, "axis2"], [f"{x}u"]), node("Expand", [f"{x}u", f"{x}_shape5"], [f"{x}e"]),
                    node("Reshape", [f"{x}e", f"{x}_shape4"], [f"{x}x"])]
        return out + [node("Transpose", ["kx"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["s0"]),
                      node("Mul", ["s0", "sc"], ["s"]), node("Add", ["s", "mask"], ["a"]),
                      node("Softmax", ["a"], ["p"], axis=-1), node("MatMul", ["p", "vx"], ["y"])]

    def gqa_case(name, B, kvh, g, S, T, D, DV, kv_batch=None, dt=f32, t=tol):
        kb = kv_batch or B
        q, k, v = rand(B, kvh * g, S, D).astype(dt), rand(kb, kvh, T, D).astype(dt), rand(kb, kvh, T, DV).astype(dt)
        mask = np.where(np.arange(T)[None, :] <= np.arange(S)[:, None] + (T - S), 0.0, -np.inf).astype(dt)
        ke = np.broadcast_to(k[:, :, None], (B, kvh, g, T, D)).reshape(B, kvh * g, T, D).astype(np.float64)
        ve = np.broadcast_to(v[:, :, None], (B, kvh, g, T, DV)).reshape(B, kvh * g, T, DV).astype(np.float64)
        sc = q.astype(np.float64) @ ke.transpose(0, 1, 3, 2) * 0.25 + mask.astype(np.float64)
        outputs = {"y": (softmax(sc, False) @ ve).astype(dt)}
        if name.endswith("also_output"):
            outputs["vx"] = ve.astype(dt)
        prefix = "fusion_attention_gqa_" if dt is f32 else "attention_fused_half_gqa_fold_"
        inits = {"axis2": np.array([2], np.int64), "sc": np.array(0.25, dt),
                 "k_shape5": np.array([B, kvh, g, T, D], np.int64), "k_shape4": np.array([B, kvh * g, T, D], np.int64),
                 "v_shape5": np.array([B, kvh, g, T, DV], np.int64),
                 "v_shape4": np.array([B, kvh * g, T, DV], np.int64)}
        case(prefix + name, gqa_nodes(), {"q": q, "k": k, "v": v, "mask": mask}, outputs, initializers=inits, tol=t,
             threads=(2,))

    gqa_case("repeat_interleave", 2, 2, 3, 5, 40, 16, 12)
    gqa_case("decode_kv_batch_broadcast", 2, 2, 4, 1, 300, 32, 32, kv_batch=1)
    gqa_case("expanded_v_also_output", 1, 2, 2, 3, 20, 8, 8)
    # ---- the same expansion in torch's bmm form of attention (its decomposition of SDPA with enable_gqa, as the
    # LLaMA decode step exports): Q, K^T and V reshaped to [B * H, ., .], each side scaled by sqrt(scale), the scores
    # reshaped to [B, H, S, T] for the mask and back for the second bmm (kv_flat). With B = 2 the merged index
    # b * H + h must still read kv head b * kvH + h / g; a kv batch of 1 is expanded by the kernel itself.
    def gqa_flat_case(name, B, kvh, g, S, T, D, DV, kv_batch=None):
        kb, H = kv_batch or B, kvh * g
        q, k, v = rand(B, H, S, D), rand(kb, kvh, T, D), rand(kb, kvh, T, DV)
        mask = np.where(np.arange(T)[None, :] <= np.arange(S)[:, None] + (T - S), 0.0, -np.inf).astype(f32)
        ke = np.broadcast_to(k[:, :, None], (B, kvh, g, T, D)).reshape(B, H, T, D).astype(np.float64)
        ve = np.broadcast_to(v[:, :, None], (B, kvh, g, T, DV)).reshape(B, H, T, DV).astype(np.float64)
        sc = q.astype(np.float64) @ ke.transpose(0, 1, 3, 2) * 0.25 + mask
        y = (softmax(sc, False) @ ve).reshape(B * H, S, DV).astype(f32)
        nodes = []
        for x in ("k", "v"):
            nodes += [node("Unsqueeze", [x, "axis2"], [f"{x}u"]), node("Expand", [f"{x}u", f"{x}_shape5"], [f"{x}e"]),
                      node("Reshape", [f"{x}e", f"{x}_shape4"], [f"{x}x"])]
        nodes += [node("Mul", ["q", "half"], ["qs"]), node("Reshape", ["qs", "q_flat"], ["qf"]),
                  node("Transpose", ["kx"], ["kt"], perm=[0, 1, 3, 2]), node("Mul", ["kt", "half"], ["kts"]),
                  node("Reshape", ["kts", "kt_flat"], ["ktf"]), node("Reshape", ["vx", "v_flat"], ["vf"]),
                  node("MatMul", ["qf", "ktf"], ["s0"]), node("Reshape", ["s0", "s_4d"], ["s4"]),
                  node("Add", ["s4", "mask"], ["a"]), node("Softmax", ["a"], ["p"], axis=-1),
                  node("Reshape", ["p", "p_flat"], ["pf"]), node("MatMul", ["pf", "vf"], ["y"])]
        i64 = lambda *d: np.array(d, np.int64)  # noqa: E731
        inits = {"axis2": i64(2), "half": np.array(0.5, f32), "k_shape5": i64(B, kvh, g, T, D),
                 "k_shape4": i64(B, H, T, D), "v_shape5": i64(B, kvh, g, T, DV), "v_shape4": i64(B, H, T, DV),
                 "q_flat": i64(B * H, S, D), "kt_flat": i64(B * H, D, T), "v_flat": i64(-1, T, DV),
                 "s_4d": i64(B, H, S, T), "p_flat": i64(B * H, S, T)}
        case("fusion_attention_gqa_flat_" + name, nodes, {"q": q, "k": k, "v": v, "mask": mask}, {"y": y},
             initializers=inits, tol=tol, threads=(2,))

    gqa_flat_case("decode", 1, 2, 4, 1, 257, 64, 64)
    gqa_flat_case("batch2_prefill", 2, 2, 3, 5, 40, 16, 12)
    gqa_flat_case("kv_batch_broadcast", 2, 2, 2, 1, 30, 8, 8, kv_batch=1)
    # the same fold on a half KV cache (widened block by block), a decode step past one key block (as above)
    for dt, tag, ulp in ((ml_dtypes.bfloat16, "bf16", 2.0 ** -7), (np.float16, "f16", 2.0 ** -10)):
        gqa_case(f"decode_{tag}", 1, 2, 4, 1, 700, 64, 64, dt=dt, t=(ulp, 1e-5))
