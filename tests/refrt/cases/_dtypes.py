"""Shared by the shape/movement/indexing/einsum tables: every raw dtype refrt stores, and a sampler.

Loaded by path (files starting with '_' are not case tables)."""
import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL_DTYPES = [np.dtype(d) for d in (np.float32, np.float64, np.float16, BF16, np.int8, np.int16, np.int32, np.int64,
                                    np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)]
NUMERIC_DTYPES = [d for d in ALL_DTYPES if d != np.bool_]


def dtype_name(dt):
    return "bfloat16" if dt == BF16 else np.dtype(dt).name


def sample(rng, dt, *shape, low=-50, high=50):
    """Values of dtype dt: small integers where the dtype is integral (unsigned: from 0), halves elsewhere."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "u":
        return rng.integers(0, high, size=shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(low, high, size=shape).astype(dt)
    return (rng.integers(2 * low, 2 * high, size=shape) / 2).astype(np.float32).astype(dt)
