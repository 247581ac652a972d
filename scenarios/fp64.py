"""The float64 reference of a case and torch's fp64-oracle rule (torch._dynamo.utils.same), Parity's second rule.

A float32 output that fails the fixed rule (|actual - expected| <= atol + rtol * |expected|) may still pass
when eager itself is no closer to the exact answer: with `reference` the same eager module run in float64,

    ref_error = rmse(reference, eager float32),  res_error = rmse(reference, actual)
    pass when res_error <= multiplier * ref_error + atol / 10

(multiplier 2, or 3 for tensors of fewer than 1000 elements and for float16 / bfloat16; atol the dtype's in
common/tolerances.json, where torch uses tol = 1e-4). Deep random-weight nets lose 1e-5 .. 1e-4 to float32
summation order on outputs near zero, which the fixed rule cannot tell from a wrong export; this rule can.
verify/src/compare.cc applies the same rule to refrt's outputs.

Capture stores the float64 outputs in `test_data_set_<k>/fp64/output_<i>.pb` (floating outputs only; a
subfolder, so that tools counting `output_*.pb` of a set see the float32 ones alone).
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

FOLDER = "fp64"
# A float64 output is kept only when it agrees with the float32 one this closely (torch's `loose_tol` in
# same()): farther apart, the float64 run computed something else (a random draw in the forward, a
# dtype-dependent path) and would be no oracle for the float32 one.
AGREEMENT = 4e-2
# A module whose float64 copy would pass this many bytes of parameters and buffers gets no twin: the copy
# would add twice the model's float32 size to capture's memory (large models are verified in ~1x theirs).
MAX_TWIN_BYTES = 1 << 30


def reference_path(set_dir: Path, index: int) -> Path:
    return Path(set_dir) / FOLDER / f"output_{index}.pb"


def multiplier(numel: int, dtype_name: str) -> float:
    """torch's: 2, or 3 where noise dominates (small tensors) or the dtype is a half one."""
    return 3.0 if numel < 1000 or dtype_name in ("float16", "bfloat16") else 2.0


def _floating(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype.name == "bfloat16"  # ml_dtypes' bfloat16 is not kind "f"


def check(expected: np.ndarray, actual: np.ndarray, reference, atol: float):
    """The rule's verdict as {"passed", "res_error", "ref_error", "multiplier", "additive"[, "problem"]}, or
    None when it does not apply: no reference, an output that is not floating, or shapes / dtypes that differ
    (those fail, whatever the rule says)."""
    if reference is None or not _floating(expected) or expected.shape != actual.shape or \
            expected.dtype != actual.dtype or reference.shape != expected.shape:
        return None
    e, a, f = (np.asarray(x, dtype=np.float64) for x in (expected, actual, reference))
    verdict = {"passed": False, "res_error": None, "ref_error": None,  # None, not inf: the verdict goes to JSON
               "multiplier": multiplier(e.size, expected.dtype.name), "additive": atol / 10}
    # NaN and infinities must sit where eager has them: the rmse of finite values cannot judge those.
    if not np.array_equal(np.isnan(e), np.isnan(a)) or not np.array_equal(e[np.isinf(e)], a[np.isinf(e)]) or \
            np.isinf(a[~np.isinf(e)]).any():
        return {**verdict, "problem": "NaN or infinity placement differs from eager"}
    finite = np.isfinite(e)
    if not np.isfinite(f[finite]).all():
        return {**verdict, "problem": "the float64 run is not finite where eager is"}
    # As at capture: a float64 output farther from eager than AGREEMENT is no run of the same computation
    # (a stale or hand-edited file); far from eager, it would excuse any error.
    if (np.abs(f[finite] - e[finite]) > AGREEMENT * (1 + np.abs(e[finite]))).any():
        return {**verdict, "problem": f"the float64 run differs from eager by more than {AGREEMENT:g}"}
    if finite.any():
        verdict["ref_error"] = float(np.sqrt(np.mean((f[finite] - e[finite]) ** 2)))
        verdict["res_error"] = float(np.sqrt(np.mean((f[finite] - a[finite]) ** 2)))
    else:
        verdict["ref_error"] = verdict["res_error"] = 0.0
    verdict["passed"] = verdict["res_error"] <= verdict["multiplier"] * verdict["ref_error"] + verdict["additive"]
    return verdict


def text(verdict: dict) -> str:
    """"fp64 rule: rmse vs float64 3.10e-06 <= 2 x eager's 2.40e-06 + 1.00e-06" (">" when it fails), the
    words of verify's fp64_rule_text."""
    if verdict.get("problem"):
        return f"fp64 rule: {verdict['problem']}"
    return (f"fp64 rule: rmse vs float64 {verdict['res_error']:.2e} {'<=' if verdict['passed'] else '>'} "
            f"{verdict['multiplier']:g} x eager's {verdict['ref_error']:.2e} + {verdict['additive']:.2e}")


def prepare(module, args: tuple, kwargs: dict):
    """A float64 twin of one eager run: a deep copy of the module in float64 and the inputs with floating
    tensors cast to float64 (others cloned), taken before the float32 run can mutate either. A string (the
    reason) when there is none: a module too large or one that cannot be copied."""
    import torch
    import torch.utils._pytree as pytree

    def cast(x):
        if not isinstance(x, torch.Tensor):
            return x
        x = x.detach().clone()
        return x.double() if x.is_floating_point() else x

    try:
        tensors = [*module.parameters(), *module.buffers()]
        if sum(t.numel() * 8 for t in tensors if t.is_floating_point()) > MAX_TWIN_BYTES:
            return f"no float64 twin: its weights would pass {MAX_TWIN_BYTES >> 20} MiB"
        return copy.deepcopy(module).double(), pytree.tree_map(cast, (args, kwargs)), torch.get_rng_state()
    except Exception as e:
        return f"no float64 twin: {type(e).__name__}: {str(e)[:200]}"


def _usable(f32, f64) -> str:
    """Why the float64 output `f64` cannot be the oracle of the float32 one ("" when it can)."""
    import torch

    if not (isinstance(f32, torch.Tensor) and f32.is_floating_point()):
        return "not a floating output"
    if not (isinstance(f64, torch.Tensor) and f64.dtype == torch.float64 and f64.shape == f32.shape):
        return "the float64 run gave another dtype or shape"
    if not torch.allclose(f64.float(), f32.float(), rtol=AGREEMENT, atol=AGREEMENT, equal_nan=True):
        return f"the float64 run differs from float32 by more than {AGREEMENT:g}"
    return ""


def run_and_save(twin, set_dir: Path, outputs: list, names: list[str], save) -> tuple[int, str]:
    """Runs the twin (with the float32 run's RNG state) and saves each float64 output that agrees with its
    float32 one, through `save(path, tensor, name)`. Returns (outputs saved, why the first floating output
    was not); a twin that fails (an op without a float64 kernel, a dtype clash inside the model) saves
    nothing: the rule is then unavailable for that set."""
    import torch
    import torch.utils._pytree as pytree

    if isinstance(twin, str):
        return 0, twin
    try:
        module, (args, kwargs), rng = twin
        with torch.no_grad(), torch.random.fork_rng():
            torch.set_rng_state(rng)
            got = pytree.tree_leaves(module(*args, **kwargs))
    except Exception as e:
        return 0, f"the float64 run failed: {type(e).__name__}: {str(e)[:200]}"
    if len(got) != len(outputs):
        return 0, f"the float64 run gave {len(got)} outputs, float32 {len(outputs)}"
    saved, why = 0, ""
    for i, (f32, f64) in enumerate(zip(outputs, got)):
        problem = _usable(f32, f64)
        if problem:
            why = why or ("" if problem == "not a floating output" else f"output {i}: {problem}")
            continue
        reference_path(set_dir, i).parent.mkdir(exist_ok=True)
        save(reference_path(set_dir, i), f64, names[i])
        saved += 1
    return saved, why
