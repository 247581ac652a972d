"""float16 / bfloat16 products and the nodes around them, as torch computes them on a CPU: float32 products
and sums (bias included), rounded to the half dtype once per op. The oracle is numpy in float64 on the
half-precision values, rounded once (ml_dtypes for bfloat16). The sizes put every product above refrt's
small-GEMM cut, so that on a CPU with AVX-512 BF16 or AMX the bfloat16 rows run on oneDNN's native
bfloat16 kernels, and below that level (the refrt_cases_isa_* runs) on the float32 path with widened
weights: both must give these values. Tolerance: one unit in the last place of the dtype (2^-7 relative for
bfloat16, 2^-10 for float16), since the sum order of a blocked GEMM may move a value across a rounding
boundary."""
import ml_dtypes

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

