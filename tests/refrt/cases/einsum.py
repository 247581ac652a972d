"""Einsum: explicit and implicit outputs, repeated labels (diagonals, traces), ellipsis broadcasting,
several operands, every numeric dtype. Oracle: np.einsum in float64 (integers in int64), cast back."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location("refrt_cases_dtypes", os.path.join(os.path.dirname(__file__), "_dtypes.py"))
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)


def oracle(np, eq, *xs):
    dt = xs[0].dtype
    wide = np.int64 if dt.kind in "iu" else np.float64
    with np.errstate(over="ignore"):
        return np.asarray(np.einsum(eq, *[x.astype(wide) for x in xs])).astype(dt)


def build(api):
    np, case, node, rng = api.np, api.case, api.node, api.RNG
    tol = (1e-5, 1e-5)

    # Every numeric dtype: a batched matmul with small integers (exact in every float type too).
    for dt in D.NUMERIC_DTYPES:
        if dt == D.BF16:  # not in Einsum's type list (opset 12..23); the kernel accepts it regardless
            continue
        n = D.dtype_name(dt)
        a, b = D.sample(rng, dt, 2, 3, 4, low=-4, high=5), D.sample(rng, dt, 2, 4, 5, low=-4, high=5)
        case(f"einsum_batch_matmul_{n}", [node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
             {"a": a, "b": b}, {"y": oracle(np, "bij,bjk->bik", a, b)})
        x = D.sample(rng, dt, 4, 4, low=-4, high=5)
        case(f"einsum_trace_{n}", [node("Einsum", ["x"], ["y"], equation="ii")], {"x": x}, {"y": oracle(np, "ii", x)})

    f32 = {
        "matmul_implicit": ("ij,jk", [(3, 4), (4, 5)]),
        "transpose_explicit": ("ij->ji", [(3, 4)]),
        "sum_all": ("ijk->", [(2, 3, 4)]),
        "sum_axis": ("ijk->ik", [(2, 3, 4)]),
        "diagonal": ("ii->i", [(5, 5)]),
        "diag_3d": ("iji->ij", [(3, 2, 3)]),
        "outer": ("i,j->ij", [(3,), (4,)]),
        "dot": ("i,i", [(7,), (7,)]),
        "hadamard": ("ij,ij->ij", [(3, 4), (3, 4)]),
        "bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        "ellipsis_batch_matmul": ("...ij,...jk->...ik", [(2, 3, 4, 5), (1, 3, 5, 6)]),
        "ellipsis_broadcast_1": ("...ij,...jk", [(2, 1, 3, 4), (1, 5, 4, 2)]),
        "ellipsis_middle": ("i...j->j...i", [(2, 3, 4, 5)]),
        "ellipsis_implicit_sum": ("...i,...i", [(3, 4), (1, 4)]),
        "implicit_uppercase_order": ("Ba,aC", [(2, 3), (3, 4)]),
        "repeated_in_two_operands": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        "scalar_operand": (",ij->ij", [(), (2, 3)]),
        "empty_contraction": ("ij,jk->ik", [(2, 0), (0, 3)]),
        "empty_output": ("ij,jk->ik", [(0, 4), (4, 3)]),
        "spaces": (" ij , jk -> ik ", [(2, 3), (3, 2)]),
        "large_matmul": ("ij,jk->ik", [(48, 64), (64, 40)]),
        "attention_like": ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 7, 8)]),
    }
    for name, (eq, shapes) in f32.items():
        xs = [api.rand(*s) for s in shapes]
        case(f"einsum_{name}", [node("Einsum", [f"x{i}" for i in range(len(xs))], ["y"], equation=eq)],
             {f"x{i}": x for i, x in enumerate(xs)}, {"y": oracle(np, eq, *xs)}, tol=tol)
    a, b = api.rand(3, 4, dtype=np.float64), api.rand(4, 2, dtype=np.float64)
    case("einsum_f64_opset12", [node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")], {"a": a, "b": b},
         {"y": np.einsum("ij,jk->ik", a, b)}, opset=12, tol=(1e-12, 1e-12))
