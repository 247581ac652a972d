"""refrt, Parity's CPU runtime, in-process with ONNX Runtime's Python interface.

    import parity.runtime as rt
    sess = rt.InferenceSession("model.onnx", threads=2)
    [y] = sess.run(None, {"x": x})                  # numpy arrays in, numpy arrays out
    sess.get_inputs()[0].name, .shape, .type        # 'x', ['batch', 3, 224, 224], 'tensor(float)'

Complex inputs and outputs of a model Parity exported (carried as (real, imaginary) pairs in a trailing dim of
2, listed in the model's metadata; docs/complex.md) take and return complex numpy arrays; complex_pairs=True
keeps the pairs (as ONNX Runtime sees them).

Written so that a test written for `onnxruntime.InferenceSession` runs on refrt by changing that one name:
`sess_options` (its intra_op_num_threads), `providers` and `provider_options` are accepted; the model may be
a path or its bytes. Errors are `parity.ParityError` (a RuntimeError) with Parity's message. The
instruction set the kernels use is `isa_level()` (PARITY_REFRT_ISA caps it, read once at import).
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from . import _complex
from ._paths import SOURCE_DIR, ParityError


def _load_extension():
    """parity._refrt: inside the package when installed as a wheel, else next to the binary of the build."""
    try:
        return importlib.import_module("parity._refrt")
    except ImportError:
        pass
    explicit = os.environ.get("PARITY_BIN")
    build = Path(explicit).parent if explicit else SOURCE_DIR / os.environ.get("PARITY_BUILD_DIR", "build")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = build / f"_refrt{suffix}"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("parity._refrt", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules["parity._refrt"] = module
            return module
    raise ImportError(f"refrt's Python module (_refrt{importlib.machinery.EXTENSION_SUFFIXES[0]}) is not in {build}: "
                      "build it with scripts/setup.sh (target parity_refrt_python)")


_refrt = _load_extension()
RefrtError = _refrt.RefrtError  # what refrt raises: a ParityError with refrt's message
if _refrt.isa_note():
    warnings.warn(_refrt.isa_note(), RuntimeWarning, stacklevel=2)

# ONNX TensorProto element types -> ONNX Runtime's type strings.
_TYPE_NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
               9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 16: "bfloat16"}


def optimization_passes() -> list[str]:
    """refrt's load-time graph passes, in the order they run (names InferenceSession's disabled_passes takes)."""
    return list(_refrt.optimization_passes())


def isa_level() -> str:
    """The ISA level refrt's hand-written kernels use ("scalar", "avx2", "avx512", ...)."""
    return _refrt.isa_level()


def cpu_isa_level() -> str:
    """The highest ISA level this CPU can execute."""
    return _refrt.cpu_isa_level()


class NodeArg:
    """An input or output as ORT describes it: name, shape (ints, dim_param strings, None), type string."""

    __slots__ = ("name", "shape", "type")

    def __init__(self, name: str, elem_type: int, dims, kind: str = "tensor"):
        self.name = name
        self.shape = list(dims) if dims is not None else None
        tensor = f"tensor({_TYPE_NAMES.get(elem_type, str(elem_type))})"
        self.type = {"sequence": f"seq({tensor})", "optional tensor": f"optional({tensor})",
                     "optional sequence": f"optional(seq({tensor}))"}.get(kind, tensor)

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


def _feed(value, type_name: str):
    """A C-ordered array (0-d stays 0-d); a sequence input: a list of them; an optional: None or its element."""
    if type_name.startswith("optional(") and value is None:
        return None
    if type_name.startswith(("seq(", "optional(seq(")):
        return [np.asarray(v, order="C") for v in value]
    return np.asarray(value, order="C")


def _default_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _weight_only_accuracy(value, sess_options) -> int:
    """The session's weight-only accuracy level; -1 lets refrt read PARITY_REFRT_WEIGHT_ONLY_ACCURACY."""
    if value is None and sess_options is not None and hasattr(sess_options, "get_session_config_entry"):
        try:
            value = sess_options.get_session_config_entry("session.qdq_matmulnbits_accuracy_level") or None
        except Exception:  # ORT raises when the entry is absent
            value = None
    if value is None:
        return -1
    level = int(value)
    if not 0 <= level <= 4:
        raise ValueError(f"weight_only_accuracy must be 0 (exact) to 4 (int8 activations), got {value!r}")
    return level


class InferenceSession:
    """A refrt session on an ONNX model (path or bytes), run with numpy arrays.

    threads: intra-op threads (default: ORT's sess_options.intra_op_num_threads when given and > 0, else
    every core this process may use). optimize=False skips refrt's load-time fusions; disabled_passes turns off
    the named ones only (optimization_passes() lists them; an unknown name raises ParityError).
    weight_only_accuracy: weight-only (int4 / int8 weights) products: 0 exact float (refrt's default), 4 int8
    activations per block (ONNX Runtime's default, its MatMulNBits accuracy level 4); default: ORT's
    sess_options entry session.qdq_matmulnbits_accuracy_level when set, else PARITY_REFRT_WEIGHT_ONLY_ACCURACY,
    else 0. complex_pairs=True: the model's complex inputs and outputs stay (real, imaginary) pairs, as in the
    ONNX (default: complex arrays in and out)."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *,
                 threads: int | None = None, optimize: bool = True, weight_only_accuracy: int | None = None,
                 complex_pairs: bool = False, disabled_passes=(), **kwargs):
        if threads is None:
            threads = getattr(sess_options, "intra_op_num_threads", 0) or _default_threads()
        level = _weight_only_accuracy(weight_only_accuracy, sess_options)
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._session = _refrt.Session.load_bytes(bytes(path_or_bytes), int(threads), optimize, level,
                                                      list(disabled_passes))
            self._model_path = None
        else:
            self._model_path = os.fspath(path_or_bytes)
            self._session = _refrt.Session.load_file(self._model_path, int(threads), optimize, level,
                                                     list(disabled_passes))
        self._inputs = [NodeArg(*v) for v in self._session.inputs()]
        self._outputs = [NodeArg(*v) for v in self._session.outputs()]
        try:
            complex_in, complex_out = ({}, {}) if complex_pairs else _complex.complex_io(path_or_bytes)
        except (OSError, ValueError) as e:
            raise ParityError(f"[python] cannot read the model's metadata: {e}") from None
        self._complex_inputs, self._complex_outputs = complex_in, complex_out
        for args, listed in ((self._inputs, complex_in), (self._outputs, complex_out)):
            for arg in args:  # described as the complex tensors they stand for, without the pair dim
                if arg.name in listed:
                    arg.type = f"tensor({listed[arg.name]})"
                    arg.shape = arg.shape[:-1] if arg.shape else arg.shape
        self._input_names = [i.name for i in self._inputs]
        self._input_set = set(self._input_names)
        self._output_index = {o.name: k for k, o in enumerate(self._outputs)}
        self.threads = int(threads)

    def _complex_feed(self, name: str, value):
        dtype = self._complex_inputs.get(name)
        if not dtype:
            return value
        try:
            return _complex.to_pairs(value, dtype, name)
        except ValueError as e:
            raise ParityError(f"[python] {e}") from None

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_overridable_initializers(self) -> list[NodeArg]:
        return []

    def get_providers(self) -> list[str]:
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed: dict, run_options=None) -> list[np.ndarray]:
        """The outputs named by output_names (None or []: all, in graph order) for the feeds {name: array}.
        A sequence input takes a list of arrays and a sequence output is one; an optional is None or its element."""
        unknown = [name for name in input_feed if name not in self._input_set]
        if unknown:
            raise ParityError(f"[python] unknown input name(s) {unknown}; the model's inputs are {self._input_names}")
        try:
            arrays = [_feed(self._complex_feed(name, input_feed[name]), arg.type)
                      for name, arg in zip(self._input_names, self._inputs)]
        except KeyError as e:
            raise ParityError(
                f"[python] missing input {e.args[0]!r}; the model's inputs are {self._input_names}"
            ) from None
        outputs = self._session.run(arrays)
        for k, arg in enumerate(self._outputs):
            if arg.name in self._complex_outputs:
                outputs[k] = _complex.from_pairs(outputs[k], self._complex_outputs[arg.name])
        if not output_names:
            return outputs
        try:
            return [outputs[self._output_index[name]] for name in output_names]
        except KeyError as e:
            raise ParityError(f"[python] unknown output name {e.args[0]!r}; the model's outputs are "
                              f"{list(self._output_index)}") from None
