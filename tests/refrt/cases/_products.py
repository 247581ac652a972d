"""Shared by the product tables (gemv.py, sgemm_packed.py): each table's own value generator, the float64 oracle's
cast and the tolerance of float32 sums.

Loaded by path (files starting with '_' are not case tables)."""
import numpy as np


class Products:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def rand(self, *shape):
        return self.rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    @staticmethod
    def f64(a):
        return a.astype(np.float64)

    @staticmethod
    def tol(k):  # float32 sums of k products of values in [-1, 1]
        return (1e-5, 1e-6 * max(10.0, float(k)))
