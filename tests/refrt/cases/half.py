"""float16 / bfloat16 products and the nodes around them, as torch computes them on a CPU: float32 products
and sums (bias included), rounded to the half dtype once per op. The oracle is numpy in float64 on the
half-precision values, rounded once (ml_dtypes for bfloat16). The sizes put every product above refrt's
small-GEMM cut, so that on a CPU with AVX-512 BF16 or AMX the bfloat16 rows run on oneDNN's native
bfloat16 kernels, and below that level (the refrt_cases_isa_* runs) on the float32 path with widened
weights: both must give these values. Tolerance: one unit in the last place of the dtype (2^-7 relative for
bfloat16, 2^-10 for float16), since the sum order of a blocked GEMM may move a value across a rounding
boundary."""
import importlib.util
import os

import ml_dtypes

_spec = importlib.util.spec_from_file_location("refrt_cases_conv_oracle_half", os.path.join(os.path.dirname(__file__), "conv.py"))
_conv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conv)
conv_ref = _conv.conv_ref

BF16 = ml_dtypes.bfloat16


def build(api):
    np, node, rand, case = api.np, api.node, api.rand, api.case
    f64 = np.float64
    ulp = {BF16: (2.0 ** -7, 1e-30), np.float16: (2.0 ** -10, 2.0 ** -24)}

    def half(dt, *shape):
        return rand(*shape).astype(dt)

    def dot(a, b):
        return a.astype(f64) @ b.astype(f64)

    for dt, tag in ((BF16, "bf16"), (np.float16, "f16")):
        tol = ulp[dt]
        x, w = half(dt, 64, 128), half(dt, 128, 96)
        case(f"half_matmul_weights_{tag}", [node("MatMul", ["x", "w"], ["y"])], {"x": x}, {"y": dot(x, w).astype(dt)},
             initializers={"w": w}, tol=tol)
        # The decode step of an LLM: one row.
        x1, w1 = half(dt, 1, 256), half(dt, 256, 512)
        case(f"half_matmul_one_row_{tag}", [node("MatMul", ["x", "w"], ["y"])], {"x": x1},
             {"y": dot(x1, w1).astype(dt)}, initializers={"w": w1}, tol=tol)
        # A Linear: Gemm with transB and a bias row, then Relu (fused into the GEMM at load).
        wt, b = half(dt, 96, 128), half(dt, 96)
        want = np.maximum(dot(x, wt.T) + b.astype(f64), 0)
        case(f"half_gemm_linear_relu_{tag}",
             [node("Gemm", ["x", "w", "b"], ["g"], transB=1), node("Relu", ["g"], ["y"])], {"x": x},
             {"y": want.astype(dt)}, initializers={"w": wt, "b": b}, tol=tol)
        # MatMul + Add of a bias over a batch of sequences (a Linear on [B, S, K]): torch's addmm rounds once,
        # after the bias, and so does refrt's fused node. The two ONNX nodes unfused round the product first:
        # where the bias cancels most of it, that is several ulps of the result (5 measured), so this row
        # fails unless refrt fuses them.
        x3 = half(dt, 2, 40, 128)
        case(f"half_matmul_add_{tag}", [node("MatMul", ["x", "w"], ["m"]), node("Add", ["m", "b"], ["y"])],
             {"x": x3}, {"y": (dot(x3, w) + b.astype(f64)).astype(dt)}, initializers={"w": w, "b": b}, tol=tol)
        # Both operands computed (attention scores): no constant to pack, the float32 path.
        q, k = half(dt, 4, 32, 64), half(dt, 4, 64, 32)
        case(f"half_matmul_batched_{tag}", [node("MatMul", ["q", "k"], ["y"])], {"q": q, "k": k},
             {"y": np.matmul(q.astype(f64), k.astype(f64)).astype(dt)}, tol=tol)

    own_rng = np.random.default_rng(46)

    def own(dt, *shape):
        return own_rng.uniform(-1.0, 1.0, size=shape).astype(dt)

    def dyadic(dt, *shape):  # k / 8, |k| <= 4: every product and partial sum is exact in float32
        return (api.RNG.integers(-4, 5, size=shape) / 8).astype(dt)

    for dt, tag in ((BF16, "bf16"), (np.float16, "f16")):
        tol = ulp[dt]
        # Convolutions with constant weights: on a CPU with BF16, bfloat16 ones run on oneDNN's bfloat16 kernels
        # (conv_dnnl.h; X and Y converted per block, not as whole tensors), the rest widened to float32. A 3x3
        # with a bias, a 3-channel stride-2 stem, a 1x1, a 1-D conv, and Conv + residual Add + Relu (one node
        # after fusion: rounded once, after the added input and the activation). Opset 22: bfloat16 Conv. The
        # values are multiples of 1/8 so that a float32 sum in any order is exact: random normal values left
        # near-zero outputs whose float32 sums (eager's too) differ from float64 by 4 float16 ulps.
        # onnxruntime agrees on these (float16 Conv; none of its bfloat16 kernels exist).
        convs = {"3x3_bias": ((1, 32, 14, 14), (48, 32, 3, 3), dict(pads=[1, 1, 1, 1])),
                 "stem_stride2": ((1, 3, 32, 32), (16, 3, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
                 "1x1_batch2": ((2, 64, 7, 7), (40, 64, 1, 1), {}),
                 "1d": ((2, 24, 30), (32, 24, 5), dict(pads=[2, 2]))}
        for name, (xs, ws, attrs) in convs.items():
            xc, wc, bc = dyadic(dt, *xs), dyadic(dt, *ws), dyadic(dt, ws[0])
            want = conv_ref(np, xc, wc, bc, attrs.get("strides"), pads=attrs.get("pads"))
            case(f"half_conv_{name}_{tag}", [node("Conv", ["x", "w", "b"], ["y"], **attrs)], {"x": xc},
                 {"y": want.astype(dt)}, initializers={"w": wc, "b": bc}, tol=tol, opset=22)
        xc, wc, bc, zc = dyadic(dt, 1, 16, 10, 10), dyadic(dt, 16, 16, 3, 3), dyadic(dt, 16), half(dt, 1, 16, 10, 10)
        want = np.maximum(conv_ref(np, xc, wc, bc, pads=[1, 1, 1, 1]) + zc.astype(f64), 0)
        case(f"half_conv_residual_relu_{tag}",
             [node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), node("Add", ["c", "z"], ["a"]),
              node("Relu", ["a"], ["y"])], {"x": xc, "z": zc}, {"y": want.astype(dt)},
             initializers={"w": wc, "b": bc}, tol=tol, opset=22,
             ort_differs="onnxruntime rounds the conv, the Add and the Relu each (eager's fused kernel rounds once)")
        # One row against constant weights (the decode step) on AVX-512: the packed GEMV streams the half weights
        # as they are and widens them in registers. A Linear (Gemm, transB, bias, Relu fused) and a MatMul + Add
        # on a [1, 1, K] row with N not a multiple of 64 (a partial last panel).
        # (Their own generator: drawing from the shared one would change every later file's values.)
        x1, wt1, b1 = own(dt, 1, 192), own(dt, 200, 192), own(dt, 200)
        case(f"half_gemv_linear_relu_{tag}",
             [node("Gemm", ["x", "w", "b"], ["g"], transB=1), node("Relu", ["g"], ["y"])], {"x": x1},
             {"y": np.maximum(dot(x1, wt1.T) + b1.astype(f64), 0).astype(dt)}, initializers={"w": wt1, "b": b1},
             tol=tol)
        x13, w13 = own(dt, 1, 1, 192), own(dt, 192, 200)
        case(f"half_gemv_matmul_add_{tag}", [node("MatMul", ["x", "w"], ["m"]), node("Add", ["m", "b"], ["y"])],
             {"x": x13}, {"y": (dot(x13, w13) + b1.astype(f64)).astype(dt)}, initializers={"w": w13, "b": b1},
             tol=tol)

    # BatchNormalization (inference) + Relu, fused into one node at load (FusedBatchNormalization; a fusion_ row:
    # graph_optimize_test checks that it fuses): y = x * a + b per
    # channel in float32, the Relu, one rounding (Relu commutes with rounding, so eager's two roundings agree).
    # Planes of 600 values (more than one 512-value conversion block) over a batch of 2; float32 and float64 too.
    for dt, tag in ((BF16, "bf16"), (np.float16, "f16"), (np.float32, "f32"), (np.float64, "f64")):
        tol = ulp.get(dt, (1e-5, 1e-6) if dt is np.float32 else (1e-12, 1e-12))
        xb = own(dt, 2, 5, 20, 30)
        sc, sh, mu, va = own(dt, 5), own(dt, 5), own(dt, 5), (own_rng.uniform(0.5, 1.5, 5)).astype(dt)
        a = sc.astype(f64) / np.sqrt(va.astype(f64) + 1e-5)
        want = xb.astype(f64) * a.reshape(1, -1, 1, 1) + (sh.astype(f64) - mu.astype(f64) * a).reshape(1, -1, 1, 1)
        case(f"fusion_batchnorm_relu_{tag}",
             [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"]), node("Relu", ["n"], ["y"])], {"x": xb},
             {"y": np.maximum(want, 0).astype(dt)}, initializers={"s": sc, "b": sh, "m": mu, "v": va}, tol=tol,
             opset=15)

    # float16 Conv -> BatchNormalization -> Add -> Relu: the normalisation folded into float32 weights and bias
    # (fold_batch_norm; a float16 conv computes in float32 on widened weights anyway), then the Add and the Relu
    # fused into the conv: one node, rounded once. Dyadic values, and variances whose square roots are powers of two
    # (epsilon 0), so that the folded weights and every float32 sum are exact. graph_optimize_test checks the fold.
    # (bfloat16 convs keep their bfloat16 weights for oneDNN's native kernels: not folded.)
    # (This file's own generator: drawing from the shared one would change every later file's values.)
    dt = np.float16

    def eighths(*shape):
        return (own_rng.integers(-4, 5, size=shape) / 8).astype(dt)

    xc, wc, bc, zc = eighths(1, 16, 10, 10), eighths(16, 16, 3, 3), eighths(16), eighths(1, 16, 10, 10)
    sc, sh, mu = eighths(16), eighths(16), eighths(16)
    va = own_rng.choice([0.0625, 0.25, 1.0, 4.0], 16).astype(dt)
    a = sc.astype(f64) / np.sqrt(va.astype(f64))
    conv = conv_ref(np, xc, wc, bc, pads=[1, 1, 1, 1])
    bn = (conv - mu.astype(f64).reshape(1, -1, 1, 1)) * a.reshape(1, -1, 1, 1) + sh.astype(f64).reshape(1, -1, 1, 1)
    case("half_conv_batchnorm_add_relu_f16",
         [node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
          node("BatchNormalization", ["c", "s", "sh", "m", "v"], ["n"], epsilon=0.0), node("Add", ["n", "z"], ["a"]),
          node("Relu", ["a"], ["y"])], {"x": xc, "z": zc}, {"y": np.maximum(bn + zc.astype(f64), 0).astype(dt)},
         initializers={"w": wc, "b": bc, "s": sc, "sh": sh, "m": mu, "v": va}, tol=ulp[dt], opset=22,
         ort_differs="onnxruntime rounds the conv, the normalisation, the Add and the Relu each")

    # One bfloat16 row x constant weights with an odd K and a partial last panel: at the levels with AVX-512 BF16 the
    # packed GEMV takes k in pairs (vdpbf16ps) and pads the last pair with a zero row; a Linear's [N, K] weight too.
    xo, wo, wto = own(BF16, 1, 129), own(BF16, 129, 72), own(BF16, 72, 129)
    case("half_matmul_one_row_odd_k_bf16", [node("MatMul", ["x", "w"], ["y"])], {"x": xo},
         {"y": dot(xo, wo).astype(BF16)}, initializers={"w": wo}, tol=ulp[BF16])
    case("half_gemm_one_row_odd_k_trans_bf16", [node("Gemm", ["x", "w"], ["y"], transB=1)], {"x": xo},
         {"y": dot(xo, wto.T).astype(BF16)}, initializers={"w": wto}, tol=ulp[BF16])

    # A float16 conv chain (keep_conv_blocks) after BatchNormalization folding: float32 weights, float16 values handed
    # from conv to conv in the chain's layout (channels last at AVX-512, nChw8c at AVX2), each widened as it is read and
    # rounded once where it is written, as in NCHW. Two images, a residual read both as X and as the added input, 32
    # channels split over two threads, a 1x1 conv to the graph output. Dyadic values (exact float32 sums; the oracle
    # rounds each conv's output to float16 as refrt does).
    def folded_bn(m):
        return eighths(m), eighths(m), own_rng.choice([0.0625, 0.25, 1.0, 4.0], m).astype(dt)

    def conv_bn(xv, w, b, bn, pads=None):
        sc_, mu_, va_ = bn
        a_ = sc_.astype(f64) / np.sqrt(va_.astype(f64))
        y_ = conv_ref(np, xv, w, b, pads=pads)
        return (y_ - mu_.astype(f64).reshape(1, -1, 1, 1)) * a_.reshape(1, -1, 1, 1)

    xk = eighths(2, 16, 8, 8)
    w1, w2, w3 = eighths(32, 16, 3, 3), eighths(32, 32, 3, 3), eighths(16, 32, 1, 1)
    b1, b2, b3 = eighths(32), eighths(32), eighths(16)
    bn1, bn2, bn3 = folded_bn(32), folded_bn(32), folded_bn(16)
    hk = np.maximum(conv_bn(xk, w1, b1, bn1, [1, 1, 1, 1]), 0).astype(dt)
    rk = np.maximum(conv_bn(hk, w2, b2, bn2, [1, 1, 1, 1]) + hk.astype(f64), 0).astype(dt)
    yk = conv_bn(rk, w3, b3, bn3).astype(dt)
    inits = {"w1": w1, "w2": w2, "w3": w3, "b1": b1, "b2": b2, "b3": b3, "zero32": np.zeros(32, dt),
             "zero16": np.zeros(16, dt)}
    for k, (sc_, mu_, va_) in (("1", bn1), ("2", bn2), ("3", bn3)):
        inits.update({f"s{k}": sc_, f"m{k}": mu_, f"v{k}": va_})

    def bn_node(k, src, out):
        return node("BatchNormalization", [src, f"s{k}", "zero16" if k == "3" else "zero32", f"m{k}", f"v{k}"], [out],
                    epsilon=0.0)

    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), bn_node("1", "c1", "n1"),
             node("Relu", ["n1"], ["h"]),
             node("Conv", ["h", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), bn_node("2", "c2", "n2"),
             node("Add", ["n2", "h"], ["a2"]), node("Relu", ["a2"], ["r"]),
             node("Conv", ["r", "w3", "b3"], ["c3"]), bn_node("3", "c3", "y")]
    case("half_conv_blocks_f16_chain", nodes, {"x": xk}, {"y": yk}, initializers=inits, tol=ulp[dt], opset=22,
         threads=(2,), ort_differs="onnxruntime rounds the conv, the normalisation, the Add and the Relu each")
    # The same chain on values that float16 cannot hold exactly (the folded weights are inexact too): each conv's
    # output is rounded to float16 where it is written, also when it goes on widened (graph_optimize_test compares
    # with the NCHW plan bit for bit). Positive inputs, weights and shifts, so that no result is a cancellation and
    # a float32 sum rounded the other way than float64's moves the output by less than one unit in the last place.
    crng = np.random.default_rng(4648)

    def pos(lo, hi, *shape):
        return crng.uniform(lo, hi, size=shape).astype(dt)

    xr = pos(0, 1, 2, 16, 8, 8)
    wr1, wr2, wr3 = pos(0, 0.1, 32, 16, 3, 3), pos(0, 0.05, 32, 32, 3, 3), pos(0, 0.1, 16, 32, 1, 1)
    bnr = {k: (pos(0.5, 1, m), np.zeros(m, dt), pos(0.5, 2, m), pos(0, 0.5, m)) for k, m in (("1", 32), ("2", 32),
                                                                                         ("3", 16))}

    def conv_bn_shift(xv, w, k, pads=None):
        sc_, mu_, va_, sh_ = bnr[k]
        a_ = sc_.astype(f64) / np.sqrt(va_.astype(f64) + 1e-5)
        y_ = conv_ref(np, xv, w, None, pads=pads)
        return (y_ - mu_.astype(f64).reshape(1, -1, 1, 1)) * a_.reshape(1, -1, 1, 1) + sh_.astype(f64).reshape(1, -1, 1, 1)

    hr = np.maximum(conv_bn_shift(xr, wr1, "1", [1, 1, 1, 1]), 0).astype(dt)
    rr = np.maximum(conv_bn_shift(hr, wr2, "2", [1, 1, 1, 1]) + hr.astype(f64), 0).astype(dt)
    yr = conv_bn_shift(rr, wr3, "3").astype(dt)
    rinits = {"w1": wr1, "w2": wr2, "w3": wr3}
    for k, (sc_, mu_, va_, sh_) in bnr.items():
        rinits.update({f"s{k}": sc_, f"m{k}": mu_, f"v{k}": va_, f"sh{k}": sh_})

    def bn_shift(k, src, out):
        return node("BatchNormalization", [src, f"s{k}", f"sh{k}", f"m{k}", f"v{k}"], [out])

    rnodes = [node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), bn_shift("1", "c1", "n1"), node("Relu", ["n1"], ["h"]),
              node("Conv", ["h", "w2"], ["c2"], pads=[1, 1, 1, 1]), bn_shift("2", "c2", "n2"),
              node("Add", ["n2", "h"], ["a2"]), node("Relu", ["a2"], ["r"]),
              node("Conv", ["r", "w3"], ["c3"]), bn_shift("3", "c3", "y")]
    case("half_conv_blocks_f16_chain_rounded", rnodes, {"x": xr}, {"y": yr}, initializers=rinits, tol=ulp[dt],
         opset=22, threads=(2,), ort_differs="onnxruntime rounds the conv, the normalisation, the Add and the Relu each")

    # float16 values widened once for the products that read them (keep_widened): a LayerNormalization read only by
    # products writes float32 holding its float16 values, and so does a product read only by a product (with its bias
    # and Relu); a value with other readers is widened by one Cast for all its products. The values are the same bits
    # as without the pass (graph_optimize_test); here against numpy: the normalisation in float64 rounded to float16,
    # each product in float64 on those values plus its bias, rounded once. Inputs, normalised values (shifted by the
    # LayerNormalization's bias of 3 to 5) and weights are positive, so that no result is a cancellation: a
    # normalised value that float32 rounds the other way (a few in 10^4) then moves a result by far less than one
    # unit in its last place. The fusion_keep_ row has no bias or activation, so that the unfused plan (rounding
    # every node) gives the same values too.
    wrng = np.random.default_rng(4646)

    def wide(lo, hi, *shape):
        return wrng.uniform(lo, hi, size=shape).astype(dt)

    def layer_norm(v, s_, b_):
        vd = v.astype(f64)
        return ((vd - vd.mean(-1, keepdims=True)) / np.sqrt(vd.var(-1, keepdims=True) + 1e-5) * s_.astype(f64) +
                b_.astype(f64)).astype(dt)

    xw, sw, bw = wide(0, 3, 2, 24, 64), wide(0.5, 1, 64), wide(3, 5, 64)
    w1, w2, w3 = wide(0, 0.5, 64, 96), wide(0, 0.125, 96, 64), wide(0, 0.5, 64, 48)
    b1, b2 = wide(3.5, 4.5, 96), wide(3.5, 4.5, 64)
    nw = layer_norm(xw, sw, bw)
    hw = dot(nw, w1).astype(dt)
    case("fusion_keep_widened_layernorm_products_f16",
         [node("LayerNormalization", ["x", "s", "b"], ["n"]), node("MatMul", ["n", "w1"], ["h"]),
          node("MatMul", ["h", "w2"], ["y1"]), node("MatMul", ["n", "w3"], ["y2"])], {"x": xw},
         {"y1": dot(hw, w2).astype(dt), "y2": dot(nw, w3).astype(dt)},
         initializers={"s": sw, "b": bw, "w1": w1, "w2": w2, "w3": w3}, tol=ulp[dt], opset=17, threads=(2,))
    # A Linear + Relu feeding the next Linear: the first writes its rounded values widened, after bias and Relu.
    xl = wide(0, 1, 2, 24, 64)
    hl = np.maximum(dot(xl, w1) + b1.astype(f64), 0).astype(dt)
    case("half_widened_linear_relu_chain_f16",
         [node("MatMul", ["x", "w1"], ["m1"]), node("Add", ["m1", "b1"], ["a1"]), node("Relu", ["a1"], ["h"]),
          node("MatMul", ["h", "w2"], ["m2"]), node("Add", ["m2", "b2"], ["y"])], {"x": xl},
         {"y": (dot(hl, w2) + b2.astype(f64)).astype(dt)}, initializers={"w1": w1, "b1": b1, "w2": w2, "b2": b2},
         tol=ulp[dt], opset=17, threads=(2,))
    # A wide half product (an LM head's shape, smaller): C is computed in column blocks whose float32 rows (512 of
    # them) fit in 1 MiB, several per thread, the last block narrower than the others.
    xh, wh = wide(0, 1, 1, 512, 64), wide(0, 0.5, 64, 1100)
    case("half_matmul_wide_column_blocks_f16", [node("MatMul", ["x", "w"], ["y"])], {"x": xh},
         {"y": dot(xh, wh).astype(dt)}, initializers={"w": wh}, tol=ulp[dt], threads=(2,))
    # The same as torch exports an MLP: Gemm (transB, bias) + Relu feeding the next Gemm.
    case("half_widened_gemm_relu_chain_f16",
         [node("Gemm", ["x", "w1t", "b1"], ["g1"], transB=1), node("Relu", ["g1"], ["h"]),
          node("Gemm", ["h", "w2t", "b2"], ["y"], transB=1)], {"x": xl[0]},
         {"y": (dot(hl[0], w2) + b2.astype(f64)).astype(dt)},
         initializers={"w1t": np.ascontiguousarray(w1.T), "b1": b1, "w2t": np.ascontiguousarray(w2.T), "b2": b2},
         tol=ulp[dt], opset=17, threads=(2,))
    # The normalised rows also feed a residual Add (BERT's post-norm layers): one Cast widens them for the three
    # projections. And one row (a decode step): the product a widened A comes to rounds it back for the packed GEMV.
    proj = [node("LayerNormalization", ["x", "s", "b"], ["n"])]
    projected, inits = {}, {"s": sw, "b": bw, "b1": b1[:64]}
    for name in ("q", "k", "v"):
        wp = wide(0, 0.5, 64, 64)
        proj += [node("MatMul", ["n", f"w{name}"], [f"m{name}"]), node("Add", [f"m{name}", "b1"], [name])]
        projected[name] = (dot(nw, wp) + b1[:64].astype(f64)).astype(dt)
        inits[f"w{name}"] = wp
    proj.append(node("Add", ["n", "x"], ["r"]))
    projected["r"] = (nw.astype(f64) + xw.astype(f64)).astype(dt)
    case("half_widened_shared_cast_f16", proj, {"x": xw}, projected, initializers=inits, tol=ulp[dt], opset=17,
         threads=(2,))
    # A graph input already named as the shared copy would be ("n_widened"): the copy takes another name.
    r0 = (nw.astype(f64) + xw.astype(f64)).astype(dt)
    named = dict(projected, r=(r0.astype(f64) + xw.astype(f64)).astype(dt))
    case("half_widened_copy_name_taken_f16",
         proj[:-1] + [node("Add", ["n", "n_widened"], ["r0"]), node("Add", ["r0", "x"], ["r"])],
         {"x": xw, "n_widened": xw}, named, initializers=inits, tol=ulp[dt], opset=17)
    x1w = xw[:1, :1]
    n1w = layer_norm(x1w, sw, bw)
    case("half_widened_one_row_f16",
         [node("LayerNormalization", ["x", "s", "b"], ["n"]), node("MatMul", ["n", "w1"], ["m1"]),
          node("Add", ["m1", "b1"], ["a1"]), node("Relu", ["a1"], ["h"])], {"x": x1w},
         {"h": np.maximum(dot(n1w, w1) + b1.astype(f64), 0).astype(dt)},
         initializers={"s": sw, "b": bw, "w1": w1, "b1": b1}, tol=ulp[dt], opset=17)
