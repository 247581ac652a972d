"""What every benchmark script shares about the machine it measures: the CPU class it runs as (--cpu-class), the
OpenBLAS core (--openblas-core), the memory bandwidth measured in the same run, and the bytes of weights a decode
step streams.

A CPU class is tests/python/cpu_classes.py's environment (refrt's PARITY_REFRT_ISA, oneDNN's ONEDNN_MAX_CPU_ISA,
OpenBLAS's OPENBLAS_CORETYPE): the host then behaves as that CPU for every library refrt calls, and for torch's
bundled oneDNN (not for its ATen kernels). ONNX Runtime reads none of these (its MLAS kernels pick from CPUID), so
ORT's figures are the host's own at every class. The libraries read the variables once, when they load, so the
script re-executes itself with them set before it imports numpy, torch, onnxruntime or refrt
(reexec_for_environment, called first by runtime_vs_ort.py, which every other benchmark imports first)."""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLASS_ENV = "PARITY_BENCH_CPU_CLASS"  # set by the re-execution: the class the run was asked for


def cpu_classes():
    """tests/python/cpu_classes.py, loaded by path (the one table of classes)."""
    spec = importlib.util.spec_from_file_location("parity_cpu_classes", ROOT / "tests" / "python" / "cpu_classes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def host_class():
    """The widest class this host has with nothing forced (the selection test's NATIVE)."""
    classes, flags = cpu_classes(), cpu_flags()
    have = [c for c in classes.CLASSES if not classes.missing(c, flags)]
    return have[-1] if have else "none"


def add_environment_options(ap: argparse.ArgumentParser):
    """--cpu-class and --openblas-core on a benchmark's parser (reexec_for_environment reads them first)."""
    names = ", ".join(cpu_classes().CLASSES)
    ap.add_argument("--cpu-class", metavar="NAME",
                    help=f"run as this CPU class ({names}; tests/python/cpu_classes.py): its PARITY_REFRT_ISA, "
                         "ONEDNN_MAX_CPU_ISA and OPENBLAS_CORETYPE, set before the libraries load (ONNX Runtime "
                         "ignores them). Default: the host as it is, named by its widest class")
    ap.add_argument("--openblas-core", metavar="NAME",
                    help="run with OPENBLAS_CORETYPE=NAME (after the class's own); default: the environment's")


def reexec_for_environment():
    """With --cpu-class NAME and/or --openblas-core NAME on the command line, re-execute the same command with the
    class's variables (the other class variables removed) and OPENBLAS_CORETYPE set, unless they already are."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--cpu-class")
    pre.add_argument("--openblas-core")
    known = pre.parse_known_args()[0]
    env = dict(os.environ)
    if known.cpu_class:
        classes = cpu_classes()
        if known.cpu_class not in classes.CLASSES:
            raise SystemExit(f"--cpu-class {known.cpu_class}: not a class (one of: {', '.join(classes.CLASSES)})")
        lacking = classes.missing(known.cpu_class, cpu_flags())
        if lacking:
            raise SystemExit(f"--cpu-class {known.cpu_class}: this host lacks {', '.join(lacking)} (/proc/cpuinfo)")
        env = {k: v for k, v in env.items() if k not in classes.CLASS_VARIABLES}
        env.update(classes.CLASSES[known.cpu_class][0])
        env[CLASS_ENV] = known.cpu_class
    if known.openblas_core:
        env["OPENBLAS_CORETYPE"] = known.openblas_core
    if env != dict(os.environ):
        os.execve(sys.executable, sys.orig_argv, env)


def class_label():
    """The class the run measures, for every printed figure: the forced one, or the host's widest '(host)'."""
    return os.environ.get(CLASS_ENV) or f"{host_class()} (host)"


# ---- memory bandwidth ----

def llc_bytes():
    """The largest cache's size (Linux sysfs; 32 MiB when it cannot be read)."""
    best = 0
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        best = max(best, int(text.rstrip("KMG")) * scale)
    return best or 32 << 20


def triad_gbps(threads: int, array_bytes: int, passes: int = 5) -> float:
    """STREAM's triad a = b + s * c on float64 arrays of array_bytes each, best of `passes`, counted as STREAM counts
    it (3 x 8 bytes per element). torch.add(b, c, alpha=s, out=a) is that loop in one compiled pass, vectorised and
    split over torch's `threads` threads (numpy would need a temporary: two passes); checked against a plain C
    OpenMP triad on the same arrays sizes (docs/performance.md)."""
    import torch

    n = array_bytes // 8
    a, b, c = (torch.full((n,), v, dtype=torch.float64) for v in (0.0, 1.0, 2.0))  # pages resident before timing
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        best = float("inf")
        for _ in range(passes):
            start = time.perf_counter()
            torch.add(b, c, alpha=3.0, out=a)
            best = min(best, time.perf_counter() - start)
    finally:
        torch.set_num_threads(before)
    if float(a[n // 2]) != 7.0:
        raise SystemExit("triad: wrong result")
    return 3 * 8 * n / best / 1e9


def memory_bandwidth(thread_counts, array_bytes=None):
    """({threads: triad GB/s}, array bytes): three arrays together 4x the largest cache (each at least 128 MiB)."""
    size = array_bytes or max(128 << 20, 4 * llc_bytes() // 3)
    return {t: triad_gbps(t, size) for t in thread_counts}, size


def weight_bytes(onnx_path) -> int:
    """Bytes of the model's initializers (inline or external): what one run streams at least once."""
    import numpy as np
    import onnx
    from onnx import helper

    model = onnx.load(str(onnx_path), load_external_data=False)
    total = 0
    packed = {onnx.TensorProto.INT4, onnx.TensorProto.UINT4}  # two per byte
    for t in model.graph.initializer:
        numel = int(np.prod(t.dims, dtype=np.int64))
        total += (numel + 1) // 2 if t.data_type in packed else \
            numel * np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    return total
