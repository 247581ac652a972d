"""Small whole blocks, as the exporter writes them, for tests that run models end to end (concurrent
runs in tests/refrt/concurrency_test.cc, the attention fusion in graph_optimize_test.cc): a conv net
(Conv + BatchNorm + Relu, depthwise + HardSwish, pointwise + residual, global pool, Gemm), a
transformer encoder block (LayerNorm, attention written as MatMul / Mul / Add / Softmax / MatMul with
the key transposed, MLP) and a decode step attending over a KV cache (Concat of past and new keys and
values). The oracle is numpy in float64 on the unfused formulas."""
import importlib.util
import math
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_conv_oracle_blocks", os.path.join(os.path.dirname(__file__), "conv.py"))
_conv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conv)
conv_ref = _conv.conv_ref


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    f32 = np.float32
    tol = (1e-4, 1e-5)

    def bn_ref(y, s, b, m, v, eps=1e-5):
        sh = (1, -1, 1, 1)
        return (y - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * s.reshape(sh) + b.reshape(sh)

    # ---- conv net
    x = rand(2, 3, 16, 16)
    w1, w2, w3 = rand(8, 3, 3, 3), rand(8, 1, 3, 3), rand(8, 8, 1, 1)
    s1, b1, m1, v1 = rand(8), rand(8), rand(8), rand(8, low=0.5, high=1.5)
    wf, bf = rand(5, 8), rand(5)
    nodes = [node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             node("BatchNormalization", ["c1", "s1", "b1", "m1", "v1"], ["n1"]), node("Relu", ["n1"], ["r1"]),
             node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=8), node("HardSwish", ["c2"], ["h2"]),
             node("Conv", ["h2", "w3"], ["c3"]), node("Add", ["c3", "r1"], ["a3"]),
             node("GlobalAveragePool", ["a3"], ["p"]), node("Flatten", ["p"], ["f"]),
             node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    r1 = np.maximum(bn_ref(conv_ref(np, x, w1, pads=[1, 1, 1, 1], strides=[2, 2]), s1, b1, m1, v1), 0)
    c2 = conv_ref(np, r1, w2, pads=[1, 1, 1, 1], group=8)
    h2 = c2 * np.clip(c2 + 3, 0, 6) / 6
    a3 = conv_ref(np, h2, w3) + r1
    y = a3.mean(axis=(2, 3)) @ wf.T.astype(np.float64) + bf
    case("block_conv_net", nodes, {"x": x}, {"y": y.astype(f32)},
         initializers={"w1": w1, "s1": s1, "b1": b1, "m1": m1, "v1": v1, "w2": w2, "w3": w3, "wf": wf, "bf": bf}, tol=tol)

    # ---- attention, as the exporter writes scaled_dot_product_attention below opset 23
    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def layer_norm(z, g, b, eps=1e-5):
        mu = z.mean(-1, keepdims=True)
        return (z - mu) / np.sqrt(((z - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b

    def attention_nodes(tag, q, k, v, out, mask=None):
        """q, k, v: [B, H, S, dh] values; writes out = softmax(q k^T * scale [+ mask]) v."""
        ns = [node("Transpose", [k], [f"{tag}_kt"], perm=[0, 1, 3, 2]),
              node("MatMul", [q, f"{tag}_kt"], [f"{tag}_qk"]), node("Mul", [f"{tag}_qk", "scale"], [f"{tag}_s"])]
        s = f"{tag}_s"
        if mask:
            ns.append(node("Add", [s, mask], [f"{tag}_sm"]))
            s = f"{tag}_sm"
        return ns + [node("Softmax", [s], [f"{tag}_p"], axis=-1), node("MatMul", [f"{tag}_p", v], [out])]

    B, S, D, H = 2, 8, 32, 4
    dh = D // H
    x = rand(B, S, D)
    mask = np.where(np.tril(np.ones((S, S))) > 0, 0, -1e9).astype(f32).reshape(1, 1, S, S)
    wq, wk, wv, wo = (rand(D, D, low=-0.3, high=0.3) for _ in range(4))
    w_up, w_down, b_up = rand(D, 2 * D, low=-0.3, high=0.3), rand(2 * D, D, low=-0.3, high=0.3), rand(2 * D)
    g1, be1 = rand(D, low=0.5, high=1.5), rand(D)
    heads = np.array([B, S, H, dh], np.int64)
    flat = np.array([B, S, D], np.int64)
    nodes = [node("LayerNormalization", ["x", "g1", "be1"], ["ln"], axis=-1)]
    for name, w in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        nodes += [node("MatMul", ["ln", w], [f"{name}_p"]), node("Reshape", [f"{name}_p", "heads"], [f"{name}_r"]),
                  node("Transpose", [f"{name}_r"], [f"{name}_h"], perm=[0, 2, 1, 3])]
    nodes += attention_nodes("att", "q_h", "k_h", "v_h", "ctx", mask="mask")
    nodes += [node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]), node("Reshape", ["ctx_t", "flat"], ["ctx_f"]),
              node("MatMul", ["ctx_f", "wo"], ["o"]), node("Add", ["o", "x"], ["res1"]),
              node("MatMul", ["res1", "w_up"], ["up"]), node("Add", ["up", "b_up"], ["up_b"]), node("Relu", ["up_b"], ["act"]),
              node("MatMul", ["act", "w_down"], ["down"]), node("Add", ["down", "res1"], ["y"])]
    xd = x.astype(np.float64)
    ln = layer_norm(xd, g1, be1)
    split = lambda z: z.reshape(B, S, H, dh).transpose(0, 2, 1, 3)
    q, k, v = split(ln @ wq), split(ln @ wk), split(ln @ wv)
    ctx = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh) + mask) @ v
    res1 = ctx.transpose(0, 2, 1, 3).reshape(B, S, D) @ wo + xd
    y = np.maximum(res1 @ w_up + b_up, 0) @ w_down + res1
    case("block_transformer", nodes, {"x": x}, {"y": y.astype(f32)},
         initializers={"g1": g1, "be1": be1, "wq": wq, "wk": wk, "wv": wv, "wo": wo, "w_up": w_up, "w_down": w_down,
                       "b_up": b_up, "heads": heads, "flat": flat, "mask": mask, "scale": np.array(1 / math.sqrt(dh), f32)},
         tol=tol)

    # ---- one decode step over a KV cache: the new key / value appended to the past ones (Concat on
    # the sequence axis), one query row attending to all of them, grouped-query heads expanded first.
    B, H, P, dh = 1, 4, 12, 16
    q, kn, vn = rand(B, H, 1, dh), rand(B, H, 1, dh), rand(B, H, 1, dh)
    pk, pv = rand(B, H, P, dh), rand(B, H, P, dh)
    nodes = [node("Concat", ["past_k", "k_new"], ["k_all"], axis=2), node("Concat", ["past_v", "v_new"], ["v_all"], axis=2)]
    nodes += attention_nodes("dec", "q", "k_all", "v_all", "y")
    ka, va = np.concatenate([pk, kn], 2).astype(np.float64), np.concatenate([pv, vn], 2).astype(np.float64)
    y = softmax(q.astype(np.float64) @ ka.transpose(0, 1, 3, 2) / math.sqrt(dh)) @ va
    case("block_decode_kv_cache", nodes, {"q": q, "k_new": kn, "v_new": vn, "past_k": pk, "past_v": pv},
         {"y": y.astype(f32), "k_all": ka.astype(f32), "v_all": va.astype(f32)},
         initializers={"scale": np.array(1 / math.sqrt(dh), f32)}, tol=tol)
