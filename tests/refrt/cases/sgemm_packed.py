"""Products with constant float32 weights and several rows, which refrt runs on its packed AVX2 GEMM at the AVX2
level (refrt/src/sgemm_packed.h: B in 16-column panels, 6-row tiles, K in blocks of 512, A in blocks of 198 rows)
and on oneDNN's matmul at the AVX-512 levels (the per-cap ctest entries run both on one host). Shapes cover every
row-tile remainder (1-5 rows), a last panel of 1-15 columns, one panel exactly, K over one, two and three blocks (a
second block of one step), more than one block of rows, A of rank 3, B transposed (Gemm transB) with a bias of
[N] and [1, N], the activations after it (Relu, Gelu: fused at load) and float16 C (each block rounded once while in
cache, and kept widened for a second product). Each row also runs at 1 and 2 threads (columns or rows split over threads).
The oracle is numpy in float64; float16 rows round the float64 product once."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_products",
                                               os.path.join(os.path.dirname(__file__), "_products.py"))
_products = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_products)


def build(api):
    np, node, case = api.np, api.node, api.case
    values = _products.Products(4646)
    rng, rand, f64, tol = values.rng, values.rand, values.f64, values.tol
    threads = (1, 2)

    # MatMul A [M, K] x W [K, N]; every size is past refrt's tiny-product loops (M * N * K > 32768).
    for m, k, n in [(2, 300, 70), (5, 129, 100), (6, 513, 33), (7, 64, 256), (13, 1100, 40), (64, 256, 512),
                    (205, 96, 48), (37, 200, 16), (4, 1025, 31)]:
        x, w = rand(m, k), rand(k, n)
        case(f"sgemm_matmul_m{m}_k{k}_n{n}", [node("MatMul", ["x", "w"], ["y"])], {"x": x},
             {"y": (f64(x) @ f64(w)).astype(np.float32)}, initializers={"w": w}, tol=tol(k), threads=threads)
    x, w = rand(3, 7, 96), rand(96, 80)
    case("sgemm_matmul_rank3_a", [node("MatMul", ["x", "w"], ["y"])], {"x": x},
         {"y": (f64(x) @ f64(w)).astype(np.float32)}, initializers={"w": w}, tol=tol(96), threads=threads)

    # Gemm as the exporters write Linear: B transposed, a bias row.
    for m, k, n, bias_shape in [(9, 77, 45, "n"), (20, 160, 65, "1n"), (1, 4096, 24, "n")]:
        x, w = rand(m, k), rand(n, k)
        c = rand(n) if bias_shape == "n" else rand(1, n)
        case(f"sgemm_gemm_transb_bias{bias_shape}_m{m}_k{k}_n{n}", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)],
             {"x": x}, {"y": (f64(x) @ f64(w).T + f64(c)).astype(np.float32)}, initializers={"w": w, "c": c},
             tol=tol(k), threads=threads)

    # The activations after the bias (MatMul + Add + Relu / Gelu, fused into the product at load).
    x, w, b = rand(11, 90, ), rand(90, 99), rand(99)
    case("sgemm_matmul_add_relu", [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["a"]),
                                   node("Relu", ["a"], ["y"])], {"x": x},
         {"y": np.maximum(f64(x) @ f64(w) + f64(b), 0).astype(np.float32)}, initializers={"w": w, "b": b},
         tol=tol(90), threads=threads)
    x, w, b = rand(24, 64), rand(64, 200), rand(200)
    h = f64(x) @ f64(w) + f64(b)
    erf = np.vectorize(__import__("math").erf)
    case("sgemm_matmul_add_gelu", [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["a"]),
                                   node("Gelu", ["a"], ["y"])], {"x": x},
         {"y": (0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))).astype(np.float32)}, initializers={"w": w, "b": b},
         opset=20, tol=tol(64), threads=threads)

    # float16: the product in float32 on the weights widened once, C rounded once (tolerance: 1 ulp); in the chain
    # the first product's C is kept widened for the second (optimize/keep_widened.cc), rounded the same.
    x, w, c = rand(12, 200).astype(np.float16), rand(96, 200).astype(np.float16), rand(96).astype(np.float16)
    case("sgemm_gemm_transb_bias_f16", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)], {"x": x},
         {"y": (f64(x) @ f64(w).T + f64(c)).astype(np.float16)}, initializers={"w": w, "c": c},
         tol=(2.0 ** -10, 2.0 ** -24), threads=threads)
    # Past one block of C finished in cache (198 rows x 256 columns): two row blocks, two K blocks (only the last
    # one's sums are final), a column group of 16 panels and a short one ending in a 12-column tail. Positive values:
    # float32's sums of 600 terms stay well within the 1 ulp of float16 (no cancellation to a tiny result).
    x, w, c = (rng.uniform(0.0, 1.0, size=shape).astype(np.float16) for shape in [(205, 600), (300, 600), (300,)])
    case("sgemm_gemm_transb_bias_f16_blocks", [node("Gemm", ["x", "w", "c"], ["y"], transB=1)], {"x": x},
         {"y": (f64(x) @ f64(w).T + f64(c)).astype(np.float16)}, initializers={"w": w, "c": c},
         tol=(2.0 ** -10, 2.0 ** -24), threads=threads,
         ort_differs="onnxruntime's float16 Gemm is 1 ulp from the once-rounded product on some of these values")
    x, w, b = rand(205, 600), rand(600, 300), rand(300)
    h = f64(x) @ f64(w) + f64(b)
    case("sgemm_matmul_add_gelu_blocks", [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["a"]),
                                          node("Gelu", ["a"], ["y"])], {"x": x},
         {"y": (0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))).astype(np.float32)}, initializers={"w": w, "b": b},
         opset=20, tol=tol(600), threads=threads)
    x = rng.uniform(0.0, 1.0, size=(10, 64)).astype(np.float16)
    w1 = rng.uniform(0.0, 1.0, size=(64, 128)).astype(np.float16)
    w2 = rng.uniform(0.0, 1.0, size=(128, 70)).astype(np.float16)
    h = (f64(x) @ f64(w1)).astype(np.float16)
    case("sgemm_matmul_chain_widened_f16", [node("MatMul", ["x", "w1"], ["h"]), node("MatMul", ["h", "w2"], ["y"])],
         {"x": x}, {"y": (f64(h) @ f64(w2)).astype(np.float16)}, initializers={"w1": w1, "w2": w2},
         tol=(2.0 ** -10, 2.0 ** -24), threads=threads)
