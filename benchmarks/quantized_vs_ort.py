"""Int8 benchmark: refrt vs onnxruntime on the same QDQ ONNX, and refrt int8 vs refrt float32.

    .venv/bin/python benchmarks/quantized_vs_ort.py [--build build] [--out out/qbench] [--threads 1,2]
                                                    [--runs 10] [--warmup 2] [--repeat R] [--filter REGEX]

The float models are benchmarks/runtime_vs_ort.py's (MLP 1024-4096-1024 batch 64, ResNet-18 1x3x224x224)
plus a small conv net defined here, exported by `parity export` as there. The QDQ models are made
independently of Parity by onnxruntime.quantization.quantize_static: QDQ format, uint8 activations,
int8 weights per channel, calibrated (MinMax) on 8 batches of random normal inputs. Per model and
thread count T: refrt `parity profile --threads T` on the QDQ model and on the float model, ORT
(intra_op_num_threads T) on the QDQ model; each number is the median of `runs` runs (best round of
`repeat`). Prints a markdown table and the refrt/ORT int8 geomean per thread count.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from torch import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import runtime_vs_ort as base  # noqa: E402  (model definitions and the export step)
from onnx import numpy_helper  # noqa: E402


def export(make, folder: Path, parity: Path):
    """The float ONNX (runtime_vs_ort's export) and its inputs as .pb files for `parity profile --inputs`."""
    module, args, onnx_path = base.export(make, folder, parity, fresh=False)
    inputs_dir = folder / "inputs"
    inputs_dir.mkdir(exist_ok=True)
    for i, a in enumerate(args):
        (inputs_dir / f"input_{i}.pb").write_bytes(numpy_helper.from_array(a.numpy()).SerializeToString())
    return module, args, onnx_path, inputs_dir


def small_convnet():
    """Four 3x3 conv + ReLU layers (two strided), global pooling and a linear head, 1x3x96x96."""
    net = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )
    return net, (torch.randn(1, 3, 96, 96),)


def model_list():
    zoo = base.models()
    return {
        "mlp": zoo["mlp"],
        "convnet": ("small conv net 4x conv3x3, 1x3x96x96", small_convnet),
        "resnet18": zoo["resnet18"],
    }


class RandomReader:
    """quantize_static's calibration data: 8 batches of random normal inputs of the model's shapes."""
    def __init__(self, onnx_path, args):
        s = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        names = [i.name for i in s.get_inputs()]
        rng = np.random.default_rng(0)
        self.batches = iter([{n: rng.standard_normal(a.shape).astype(np.float32) for n, a in zip(names, args)}
                             for _ in range(8)])

    def get_next(self):
        return next(self.batches, None)


def quantize(float_path: Path, args, out: Path):
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    if not out.exists():
        quantize_static(str(float_path), str(out), RandomReader(float_path, args), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return out


def time_refrt(parity, onnx_path, inputs_dir, threads, runs, warmup, out):
    import json
    cmd = [str(parity), "profile", str(onnx_path), "--inputs", str(inputs_dir), "--threads", str(threads),
           "--runs", str(runs), "--warmup", str(warmup), "--out", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    trace = json.loads((out / "trace.json").read_text())
    return float(np.median([e["dur"] for e in trace if e.get("name") == "model_run"])) / 1000


def time_ort(onnx_path, args, threads, runs, warmup):
    import time
    s = ort.InferenceSession(str(onnx_path), base.ort_options(threads), providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(s.get_inputs(), args)}
    for _ in range(warmup):
        s.run(None, feeds)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, feeds)
        times.append((time.perf_counter() - t) * 1000)
    return float(np.median(times))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("PARITY_BUILD_DIR", "build"))
    ap.add_argument("--out", default="out/qbench")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--filter", default="")
    a = ap.parse_args(argv)
    parity = Path(a.build) / "parity" if Path(a.build).is_absolute() else base.ROOT / a.build / "parity"
    threads = [int(t) for t in a.threads.split(",")]
    rows = []
    for key, (title, make) in model_list().items():
        if a.filter and not re.search(a.filter, key):
            continue
        folder = Path(a.out) / key
        _, args, float_path, inputs_dir = export(make, folder, parity)
        qdq = quantize(float_path, args, folder / "model.qdq.onnx")
        for t in threads:
            r = {"title": title, "threads": t, "int8": math.inf, "ort_int8": math.inf, "float": math.inf}
            for _ in range(max(1, a.repeat)):  # interleaved: refrt int8, ORT int8, refrt float32
                r["int8"] = min(r["int8"], time_refrt(parity, qdq, inputs_dir, t, a.runs, a.warmup, folder / f"q_t{t}"))
                r["ort_int8"] = min(r["ort_int8"], time_ort(qdq, args, t, a.runs, a.warmup))
                r["float"] = min(
                    r["float"], time_refrt(parity, float_path, inputs_dir, t, a.runs, a.warmup, folder / f"f_t{t}")
                )
            print(
                f"{title:45s} T={t} refrt int8 {r['int8']:8.2f}  ORT int8 {r['ort_int8']:8.2f}  "
                f"refrt f32 {r['float']:8.2f}",
                flush=True,
            )
            rows.append(r)
    print("\n| model | T | refrt int8 ms | ORT int8 ms | refrt float32 ms | refrt int8 / ORT int8 "
          "| refrt int8 / float32 |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['title']} | {r['threads']} | {r['int8']:.2f} | {r['ort_int8']:.2f} | {r['float']:.2f} | "
              f"{r['int8'] / r['ort_int8']:.2f} | {r['int8'] / r['float']:.2f} |")
    for t in threads:
        ratio = geomean([r["int8"] / r["ort_int8"] for r in rows if r["threads"] == t])
        print(f"refrt int8 / ORT int8 geomean at {t} thread(s): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
