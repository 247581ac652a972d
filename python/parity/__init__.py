"""Parity from Python: verify your own PyTorch model's ONNX export against eager PyTorch.

    import parity
    result = parity.verify(MyModel(), (x,), dynamic_shapes=({0: torch.export.Dim("batch")},))
    print(result)            # a short table; result.status, result.first_divergence, result.report_md
    report = parity.matrix(cases=["op_topk"], executor="local")   # the scenario matrix; executor="ray" too

The capture is the scenario matrix's own (scenarios/capture.py); export, refrt, the libtorch reference and
the reports are the `parity` binary's (PARITY_BIN, or build/parity of this repository).
"""
from ._paths import ParityError, parity_bin
from ._results import CapturedCase, OutputCheck, ProfileResult, VerifyResult


def __getattr__(name):
    # The API imports torch (seconds): loaded on first use, so that the `parity` command starts at once.
    if name in ("MODES", "capture", "profile", "verify"):
        from . import _api
        return getattr(_api, name)
    # Case and register (the scenario registry) for user suites: `from parity import Case, register`.
    if name in ("matrix", "MatrixReport"):  # the scenario matrix through the binary (no torch import here)
        from . import _matrix
        return getattr(_matrix, name)
    if name in ("Case", "register"):
        from ._paths import scenarios_module
        return getattr(scenarios_module("registry"), name)
    raise AttributeError(f"module 'parity' has no attribute {name!r}")


__all__ = ["capture", "verify", "profile", "matrix", "MatrixReport", "MODES", "ParityError", "parity_bin",
           "CapturedCase", "OutputCheck",
           "ProfileResult", "VerifyResult", "Case", "register"]
