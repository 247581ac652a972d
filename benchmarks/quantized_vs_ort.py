"""Int8 benchmark: refrt vs onnxruntime on the same QDQ ONNX, and refrt int8 vs refrt float32.

    .venv/bin/python benchmarks/quantized_vs_ort.py [--build build] [--out out/qbench] [--threads 1,2]
                                                    [--rounds 5] [--runs 10] [--warmup 3] [--filter REGEX]
                                                    [--json FILE] [--cpu-class NAME] [--openblas-core NAME]

The float models are benchmarks/runtime_vs_ort.py's (MLP 1024-4096-1024 batch 64, ResNet-18 1x3x224x224)
plus a small conv net defined here, exported by `parity export` as there. The QDQ models are made
independently of Parity by onnxruntime.quantization.quantize_static: QDQ format, uint8 activations,
int8 weights per channel, calibrated (MinMax) on 8 batches of random normal inputs. Per model and
thread count T, three callables timed by runtime_vs_ort.py's loop, in one process: refrt
(parity.runtime.InferenceSession, threads=T) on the QDQ model and on the float model, ORT
(intra_op_num_threads=T) on the QDQ model; rounds with the engine order rotating, each figure the median
of all timed calls. After the timing, `parity profile` of the QDQ model at the largest thread count
(runtime_vs_ort.heaviest_nodes: 3 runs after 1 warm-up, same environment) tells which implementation ran
its 3 heaviest nodes (e.g. "onednn brg:avx512_core", "refrt"): the JSON's "heaviest_nodes" on that row,
the table's last column. Prints a markdown table whose first line names the CPU (model, family/model),
refrt's ISA, oneDNN's ISA and OpenBLAS's core, and the refrt/ORT int8 geomean per thread count.
--openblas-core NAME (e.g. Prescott) runs with OPENBLAS_CORETYPE=NAME, as in runtime_vs_ort.py (the
script re-executes itself with it set before numpy, torch, onnxruntime or refrt load OpenBLAS);
without it the environment's value (README: leave it unset). The JSON records it ("openblas_coretype",
null: unset) and the profile's "machine" facts. --cpu-class NAME runs refrt, oneDNN and OpenBLAS as that CPU class
(runtime_vs_ort.py, bench_env.py); every line and row names the class.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# First: with --cpu-class / --openblas-core it re-executes this command before OpenBLAS loads. Then models, export,
# the timing loop, machine facts, heaviest_nodes.
import runtime_vs_ort as base  # noqa: E402

# isort: split
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402


def export(make, folder: Path, parity: Path):
    """The float ONNX (runtime_vs_ort's export) and its inputs as .pb files for `parity profile --inputs`."""
    module, args, onnx_path = base.export(make, folder, parity, fresh=False)
    base.write_inputs(args, folder / "inputs")
    return module, args, onnx_path, folder / "inputs"


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


def model_feeds(qdq: Path, args) -> dict:
    """The inputs by name, as the QDQ model (and the float one, same names) takes them."""
    return {i.name: a.numpy() for i, a in zip(ort.InferenceSession(str(qdq)).get_inputs(), args)}


def engines(qdq: Path, float_path: Path, feeds: dict, threads: int):
    """engine -> a no-argument callable: refrt on the QDQ model, ORT on the QDQ model, refrt on the float model."""
    q = base.rt.InferenceSession(str(qdq), threads=threads)
    f = base.rt.InferenceSession(str(float_path), threads=threads)
    o = ort.InferenceSession(str(qdq), base.ort_options(threads), providers=["CPUExecutionProvider"])
    return {"int8": lambda: q.run(None, feeds), "ort_int8": lambda: o.run(None, feeds),
            "float": lambda: f.run(None, feeds)}


def exact_reference(qdq: Path, feeds: dict):
    """The QDQ model's own value: ORT with every graph optimization off runs each DequantizeLinear, float operator and
    QuantizeLinear as written (no fused int8 kernels), the semantics both engines should compute."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(qdq), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def check_agreement(calls, qdq: Path, feeds: dict):
    """Both engines against the QDQ model's exact value (exact_reference), as a fraction of the output's range. refrt
    must be within 5 % (its integer products are exact: it differs by a requantization step or two); ORT's deviation
    is reported, not fatal: without VNNI its u8 x s8 kernels add pairs of products in a saturating int16 (vpmaddubsw),
    which moved the MLP's outputs by 9 % of their range on an AMD EPYC Zen 2 (AVX2). Returns ORT's deviation."""
    exact = exact_reference(qdq, feeds)
    ort_error = 0.0
    for x, y, e in zip(calls["int8"](), calls["ort_int8"](), exact):
        scale = max(1e-6, float(np.abs(e).max()))
        err = float(np.abs(x.astype(np.float64) - e).max())
        if err > 0.05 * scale:
            raise SystemExit(f"{qdq}: refrt differs from the QDQ model's exact value (max abs error {err:.3g}, output "
                             f"scale {scale:.3g})")
        ort_error = max(ort_error, float(np.abs(y.astype(np.float64) - e).max()) / scale)
    if ort_error > 0.05:
        print(f"note: {qdq}: ORT's int8 kernels are {100 * ort_error:.1f} % of the output's range from the QDQ model's "
              "exact value (saturating u8 x s8 pairs without VNNI); timed as they are", flush=True)
    return ort_error


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("PARITY_BUILD_DIR", "build"))
    ap.add_argument("--out", default="out/qbench")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10, help="timed calls per engine per round")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls before each engine's timed calls")
    ap.add_argument("--filter", default="", help="regular expression on the model keys")
    ap.add_argument("--json", default="")
    base.bench_env.add_environment_options(ap)
    a = ap.parse_args(argv)
    parity = Path(a.build) / "parity" if Path(a.build).is_absolute() else base.ROOT / a.build / "parity"
    threads = [int(t) for t in a.threads.split(",")]
    cpu, isa, cls = base.cpu_facts(), base.rt.isa_level(), base.bench_env.class_label()
    rows, machine = [], None
    for key, (title, make) in model_list().items():
        if a.filter and not re.search(a.filter, key):
            continue
        folder = Path(a.out) / key
        _, args, float_path, inputs_dir = export(make, folder, parity)
        qdq = quantize(float_path, args, folder / "model.qdq.onnx")
        feeds = model_feeds(qdq, args)
        calls = {t: engines(qdq, float_path, feeds, t) for t in threads}
        ort_error = check_agreement(calls[threads[0]], qdq, feeds)
        medians, _ = base.rotating_rounds(calls, a.rounds, a.runs, a.warmup)
        machine, heaviest = base.heaviest_nodes(parity, qdq, inputs_dir, max(threads))
        for t in threads:
            r = {"model": key, "title": title, "cpu_class": cls, "threads": t, **{e: medians[(t, e)] for e in calls[t]},
                 "ort_int8_error": ort_error}
            if t == max(threads):
                r["heaviest_nodes"] = heaviest
            print(f"[{cls}] {title:45s} T={t} refrt int8 {r['int8']:8.2f}  ORT int8 {r['ort_int8']:8.2f}  "
                  f"refrt f32 {r['float']:8.2f}  [T={max(threads)}: {base.nodes_text(heaviest)}]", flush=True)
            rows.append(r)
        del calls
    print("\n" + base.cpu_line(cpu, machine))
    print("\n| model | class | T | refrt int8 ms | ORT int8 ms | refrt float32 ms | refrt int8 / ORT int8 "
          "| refrt int8 / float32 | ORT's distance from the exact QDQ value | heaviest int8 nodes ran on |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['title']} | {r['cpu_class']} | {r['threads']} | {r['int8']:.2f} | {r['ort_int8']:.2f} | "
              f"{r['float']:.2f} | "
              f"{r['int8'] / r['ort_int8']:.2f} | {r['int8'] / r['float']:.2f} | {100 * r['ort_int8_error']:.1f} % | "
              f"{base.nodes_text(r.get('heaviest_nodes'))} |")
    gm = {t: geomean([r["int8"] / r["ort_int8"] for r in rows if r["threads"] == t]) for t in threads}
    for t, g in gm.items():
        print(f"[{cls}] refrt int8 / ORT int8 geomean at {t} thread(s): {g:.2f}")
    if a.json:
        doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "cpu": cpu,
               "cpu_class": cls,
               "refrt_isa_level": isa, "machine": machine, "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
               "rows": rows, "geomean_int8_over_ort": {str(t): g for t, g in gm.items()},
               "method": {"rounds": a.rounds, "runs": a.runs, "warmup": a.warmup,
                          "statistic": "median of all timed calls, engine order rotating per round",
                          "heaviest_nodes": f"parity profile of the QDQ model --runs 3 --warmup 1 --threads "
                                            f"{max(threads)}, top 3 by_node"}}
        Path(a.json).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
