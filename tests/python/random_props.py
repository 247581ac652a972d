"""Property checks for the random ATen rows of aten_cases.py: the values differ from eager's on every
runtime, so each row states what any correct sample must satisfy instead (support, exact algebraic form,
and moments within a bound derived from the sample size).

Each check is `prop(outs, ins)`: the flattened outputs and the inputs, numpy arrays. The same check runs on
eager's own sample (so the property is proven true of torch first) and on onnxruntime's and refrt's.

Moment bounds are SIGMAS standard errors wide, the standard error computed from the sample size and the
distribution's own moments: a correct sampler fails one with probability about 2e-9, a sampler with the
wrong mean, scale or support fails it for certain at the sizes used (>= 4096 samples).
"""
import math

import numpy as np

SIGMAS = 6.0
MIN_SAMPLES = 4096


def _real(a):
    return np.asarray(a, dtype=np.float64).ravel()


def _enough(v):
    assert v.size >= MIN_SAMPLES, f"{v.size} samples: too few for a moment check"
    assert np.all(np.isfinite(v)), "non-finite sample"


def _mean_within(v, mean, var, what):
    """Sample mean of n draws from a distribution with this mean and variance."""
    bound = SIGMAS * math.sqrt(var / v.size)
    got = v.mean()
    assert abs(got - mean) <= bound, f"{what}: sample mean {got:.6g}, expected {mean:.6g} +- {bound:.3g} (n={v.size})"


def _var_within(v, var, mu4, what):
    """Sample variance of n draws; its standard error is sqrt((mu4 - var^2) / n), mu4 the 4th central moment."""
    bound = SIGMAS * math.sqrt((mu4 - var * var) / v.size)
    got = v.var()
    assert abs(got - var) <= bound, f"{what}: sample variance {got:.6g}, expected {var:.6g} +- {bound:.3g} (n={v.size})"


def standard_normal(z, what="N(0, 1)"):
    z = _real(z)
    _enough(z)
    _mean_within(z, 0.0, 1.0, what)
    _var_within(z, 1.0, 3.0, what)


def uniform(v, lo, hi, what="U[lo, hi)"):
    v = _real(v)
    _enough(v)
    assert v.min() >= lo and v.max() < hi, f"{what}: sample range [{v.min()}, {v.max()}] outside [{lo}, {hi})"
    w = hi - lo
    _mean_within(v, (lo + hi) / 2, w * w / 12, what)
    _var_within(v, w * w / 12, w ** 4 / 80, what)


def integers(v, lo, hi, what="integers in [lo, hi)"):
    """Discrete uniform: integral values in [lo, hi), every value seen, mean and variance right."""
    v = _real(v)
    _enough(v)
    assert np.all(v == np.round(v)), f"{what}: non-integral values {v[v != np.round(v)][:5]}"
    assert set(np.unique(v)) == set(range(lo, hi)), f"{what}: values {sorted(set(np.unique(v)))}"
    k = hi - lo
    var = (k * k - 1) / 12
    mu4 = (k * k - 1) * (3 * k * k - 7) / 240
    _mean_within(v, (lo + hi - 1) / 2, var, what)
    _var_within(v, var, mu4, what)


def zeros_and_ones(v, p, what="Bernoulli(p)"):
    """Each value 0 or 1; the number of ones is a sum of independent Bernoulli(p_i)."""
    v, p = _real(v), np.broadcast_to(_real(p), _real(v).shape)
    _enough(v)
    assert set(np.unique(v)) <= {0.0, 1.0}, f"{what}: values {np.unique(v)[:8]}"
    bound = SIGMAS * math.sqrt(float(np.sum(p * (1 - p))))
    assert abs(v.sum() - p.sum()) <= bound, f"{what}: {v.sum():.0f} ones, expected {p.sum():.1f} +- {bound:.1f}"


def permutation(v, n, what="randperm"):
    v = np.asarray(v)
    assert v.dtype == np.int64, f"{what}: dtype {v.dtype}"
    assert np.array_equal(np.sort(v), np.arange(n)), f"{what}: not a permutation of 0..{n - 1}"
    assert not np.array_equal(v, np.arange(n)), f"{what}: the identity (probability 1/{n}!)"


def dropout(out, x, p, mask=None, what="dropout"):
    """Each element is 0 or x / (1 - p); the kept ones are Bernoulli(1 - p); a mask output says which."""
    out, x = np.asarray(out), np.asarray(x)
    assert out.shape == x.shape and out.dtype == x.dtype, what
    assert np.all(x != 0), "the oracle needs non-zero inputs to tell dropped from kept"
    kept = out != 0
    scaled = x / np.asarray(1 - p, dtype=x.dtype)
    np.testing.assert_allclose(out[kept], scaled[kept], rtol=1e-6, atol=0, err_msg=f"{what}: kept values")
    zeros_and_ones(kept, 1 - p, f"{what}: kept fraction")
    if mask is not None:
        mask = np.asarray(mask)
        assert mask.dtype == np.bool_, f"{what}: mask dtype {mask.dtype}"
        np.testing.assert_array_equal(mask, kept, err_msg=f"{what}: mask vs the zeros of the output")


def _counts_within(draws, p, what):
    """draws[i] is category k with probability p[i, k], independently: per category the count is a sum of
    independent Bernoulli variables."""
    assert draws.size >= MIN_SAMPLES, f"{draws.size} samples: too few for a moment check"
    for k in range(p.shape[1]):
        expected = p[:, k].sum()
        bound = SIGMAS * math.sqrt(float(np.sum(p[:, k] * (1 - p[:, k]))))
        got = int((draws == k).sum())
        assert abs(got - expected) <= bound, (
            f"{what}: category {k} drawn {got} times, expected {expected:.1f} +- {bound:.1f}"
        )


def categorical(samples, weights, what="multinomial with replacement"):
    """samples: 1-D draws with replacement from the categories of the 1-D weights."""
    samples, p = np.asarray(samples), _real(weights)
    assert samples.dtype == np.int64, f"{what}: dtype {samples.dtype}"
    assert samples.min() >= 0 and samples.max() < p.size, f"{what}: index out of range"
    _counts_within(samples.ravel(), np.broadcast_to(p / p.sum(), (samples.size, p.size)), what)


def without_replacement(samples, weights, what="multinomial without replacement"):
    """samples[r]: distinct categories of row r of the 2-D weights; the first draw follows the weights."""
    samples, w = np.asarray(samples), np.asarray(weights, dtype=np.float64)
    assert samples.dtype == np.int64, f"{what}: dtype {samples.dtype}"
    assert samples.min() >= 0 and samples.max() < w.shape[1], f"{what}: index out of range"
    for row in samples:
        assert len(set(row.tolist())) == row.size, f"{what}: repeated category in a row {row}"
    _counts_within(samples[:, 0], w / w.sum(axis=1, keepdims=True), f"{what}, first draw")
