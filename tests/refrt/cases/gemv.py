"""One-row products with constant weights: the decode step's MatMul / Gemm (M == 1), which refrt runs on its
packed AVX-512 GEMV where the ISA level has AVX-512 (refrt/src/gemv_packed.h) and on its AVX2 GEMV / BLAS
below (the per-cap ctest entries run every path). Shapes cover full 64-column panels, a last panel of 1-63
columns (odd N), odd and tiny K, N == 1, A of rank 1 and 3, B transposed (Gemm transB, and a Transpose folded
into the MatMul at load), a bias (Gemm's C as [N] and [1, N], MatMul + Add fused at load) and an activation
after it, float16 weights (widened once); controls that must not take the packed path (alpha != 1, beta != 1, C a full matrix, B a graph
input) check the fallbacks. Each row also runs at 1 and 2 threads (the path splits columns over threads).
The oracle is numpy in float64. Values come from this table's own generator, so that the tables after it keep
their values."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_products",
                                               os.path.join(os.path.dirname(__file__), "_products.py"))
_products = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_products)


def build(api):
    np, node, case = api.np, api.node, api.case
    values = _products.Products(46)
    rand, f64, tol = values.rand, values.f64, values.tol
    threads = (1, 2)

    # MatMul [1, K] x W [K, N]: full panels, a partial last panel, tiny and odd sizes, N == 1.
    for k, n in [(256, 512), (67, 131), (1, 17), (300, 1), (1000, 70), (33, 200), (5, 64), (129, 1030), (2048, 48)]:
        x, w = rand(1, k), rand(k, n)
        case(f"gemv_matmul_k{k}_n{n}", [node("MatMul", ["x", "w"], ["y"])], {"x": x},
             {"y": (f64(x) @ f64(w)).astype(np.float32)}, initializers={"w": w}, tol=tol(k), threads=threads)
    # A of rank 3 (the decode step's [1, 1, K]) and of rank 1.
    x, w = rand(1, 1, 96), rand(96, 80)
    case("gemv_matmul_rank3_a", [node("MatMul", ["x", "w"], ["y"])], {"x": x},
         {"y": (f64(x) @ f64(w)).astype(np.float32)}, initializers={"w": w}, tol=tol(96), threads=threads)
    x, w = rand(40), rand(40, 24)
    case("gemv_matmul_rank1_a", [node("MatMul", ["x", "w"], ["y"])], {"x": x},
         {"y": (f64(x) @ f64(w)).astype(np.float32)}, initializers={"w": w}, tol=tol(40), threads=threads)

    # Gemm with B transposed (a Linear's weight [N, K]) and a bias row, as the exporters write Linear.
    for k, n, bias_shape in [(93, 45, "n"), (512, 136, "n"), (1, 3, "n"), (257, 65, "1n"), (64, 1, "n")]:
        x, w = rand(1, k), rand(n, k)
        c = rand(n) if bias_shape == "n" else rand(1, n)
        case(f"gemv_gemm_transb_bias{bias_shape}_k{k}_n{n}", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)],
             {"x": x}, {"y": (f64(x) @ f64(w).T + f64(c)).astype(np.float32)}, initializers={"w": w, "c": c},
             tol=tol(k), threads=threads)
    x, w = rand(1, 150), rand(150, 77)
    case("gemv_gemm_no_trans_no_bias", [node("Gemm", ["x", "w"], ["y"])], {"x": x},
         {"y": (f64(x) @ f64(w)).astype(np.float32)}, initializers={"w": w}, tol=tol(150), threads=threads)
    x, w, c = rand(1, 150), rand(150, 77), rand(77)
    case("gemv_gemm_no_trans_bias_relu", [node("Gemm", ["x", "w", "c"], ["h"]), node("Relu", ["h"], ["y"])], {"x": x},
         {"y": np.maximum(f64(x) @ f64(w) + f64(c), 0).astype(np.float32)}, initializers={"w": w, "c": c},
         tol=tol(150), threads=threads)

    # MatMul + Add (bias) + Relu, fused at load; MatMul with a Transpose of its weight, folded at load (transB).
    x, w, b = rand(1, 70), rand(70, 99), rand(99)
    case("gemv_matmul_add_relu", [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["a"]),
                                  node("Relu", ["a"], ["y"])], {"x": x},
         {"y": np.maximum(f64(x) @ f64(w) + f64(b), 0).astype(np.float32)}, initializers={"w": w, "b": b},
         tol=tol(70), threads=threads)
    x, w = rand(1, 1, 77), rand(150, 77)
    case("gemv_matmul_transposed_weight", [node("Transpose", ["w"], ["wt"], perm=[1, 0]),
                                           node("MatMul", ["x", "wt"], ["y"])], {"x": x},
         {"y": (f64(x) @ f64(w).T).astype(np.float32)}, initializers={"w": w}, tol=tol(77), threads=threads)

    # float16 weights: the node computes in float32 on the weights widened once, which the packed path streams (the
    # half table's one-row MatMul rows cover bfloat16); one rounding to float16 at the end (tolerance: 1 ulp).
    x, w, c = rand(1, 200).astype(np.float16), rand(96, 200).astype(np.float16), rand(96).astype(np.float16)
    case("gemv_gemm_transb_bias_f16", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)], {"x": x},
         {"y": (f64(x) @ f64(w).T + f64(c)).astype(np.float16)}, initializers={"w": w, "c": c},
         tol=(2.0 ** -10, 2.0 ** -24), threads=threads)

    # Controls: not the packed path (alpha, beta, a full C, B a graph input); the fallbacks must stay right.
    x, w, c = rand(1, 90), rand(70, 90), rand(70)
    case("gemv_gemm_alpha_half", [node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5)], {"x": x},
         {"y": (0.5 * (f64(x) @ f64(w).T) + f64(c)).astype(np.float32)}, initializers={"w": w, "c": c},
         tol=tol(90), threads=threads)
    case("gemv_gemm_beta_two", [node("Gemm", ["x", "w", "c"], ["y"], transB=1, beta=2.0)], {"x": x},
         {"y": (f64(x) @ f64(w).T + 2.0 * f64(c)).astype(np.float32)}, initializers={"w": w, "c": c},
         tol=tol(90), threads=threads)
    c2 = rand(1, 1)
    case("gemv_gemm_scalar_c", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)], {"x": x},
         {"y": (f64(x) @ f64(w).T + f64(c2)).astype(np.float32)}, initializers={"w": w, "c": c2},
         tol=tol(90), threads=threads)
    x, w = rand(1, 300), rand(300, 130)
    case("gemv_matmul_weights_as_input", [node("MatMul", ["x", "w"], ["y"])], {"x": x, "w": w},
         {"y": (f64(x) @ f64(w)).astype(np.float32)}, tol=tol(300), threads=threads)
