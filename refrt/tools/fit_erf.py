"""Fits the float32 erf coefficients of refrt/src/vmath_impl.inc (erf_one) and prints them.

    .venv/bin/python refrt/tools/fit_erf.py

|x| < S:  erf(x) = x + x * Q(x^2)             Q minimax in the relative error of erf
|x| >= S: erf(x) = 1 - exp(-x^2) * R(|x| - M)  R ~ erfc(x) exp(x^2), minimax in the absolute error
Weighted minimax by Lawson's iteration on dense grids, mpmath (40 digits) as the target. The
coefficients are rounded to float32 one at a time, the higher ones refitted after each rounding, so
that the rounding costs little. The float32 code was checked on every float against double erf
(max errors in vmath_impl.inc).
"""

import mpmath
import numpy as np

mpmath.mp.dps = 40
S, TOP = 1.0, 4.0  # region switch; above TOP erfc < 1.6e-8 and the result rounds to 1
M = (S + TOP) / 2  # R's argument is centred for a well-conditioned Horner evaluation
DEG_Q, DEG_R = 6, 9


def minimax(vander, f, w, fixed, iters=80):
    """Coefficients c[len(fixed):] minimising max |w (vander @ c - f)| with c[:len(fixed)] = fixed."""
    k = len(fixed)
    rest = f - vander[:, :k] @ np.array(fixed, dtype=np.float64)
    lw = np.full(len(f), 1.0 / len(f))
    for _ in range(iters):
        s = np.sqrt(lw) * w
        c, *_ = np.linalg.lstsq(vander[:, k:] * s[:, None], rest * s, rcond=None)
        e = np.abs((vander[:, k:] @ c - rest) * w)
        lw = lw * e / np.sum(lw * e)
    return list(fixed) + list(c), float(np.max(e))


def fit_rounded(vander, f, w):
    coef = []
    for i in range(vander.shape[1]):
        c, err = minimax(vander, f, w, coef)
        coef.append(float(np.float32(c[i])))
    return coef, float(np.max(np.abs((vander @ np.array(coef) - f) * w)))


def main():
    x = np.unique(np.concatenate([S * np.sin(np.linspace(1e-4, np.pi / 2, 3000)), np.linspace(1e-4, S, 3000)]))
    erf = np.array([float(mpmath.erf(v)) for v in x])
    q, q_err = fit_rounded(np.vander(x * x, DEG_Q + 1, increasing=True), erf / x - 1, x / erf)
    x = np.linspace(S, TOP, 6000)
    erfcx = np.array([float(mpmath.erfc(v) * mpmath.exp(v * v)) for v in x])
    r, r_err = fit_rounded(np.vander(x - M, DEG_R + 1, increasing=True), erfcx, np.exp(-x * x))
    print(f"// Q: max relative error of erf {q_err:.2e}; R: max absolute error of erf {r_err:.2e}")
    for name, var, c in (("q", "t", q), ("r", "u", r)):
        lit = [np.format_float_scientific(np.float32(v), unique=True) + "f" for v in c]
        print(f"float {name} = {lit[-1]};")
        for v in reversed(lit[:-1]):
            print(f"{name} = {name} * {var} {'-' if v[0] == '-' else '+'} {v.lstrip('-')};")


if __name__ == "__main__":
    main()
