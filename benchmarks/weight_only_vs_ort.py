"""Weight-only quantized LLM blocks (torchao's quantize_): refrt vs onnxruntime on the same ONNX, and vs refrt
float32.

    .venv/bin/python benchmarks/weight_only_vs_ort.py [--build build] [--out out/wobench] [--threads 1,2]
                                                     [--rounds 3] [--runs 10] [--warmup 3] [--json FILE]
                                                     [--cpu-class NAME] [--openblas-core NAME]
                                                     [--schemes "int4 g32,int4 g128"] [--workloads decode,prefill]

The model is runtime_vs_ort.py's LLaMA-style decode step (4 of the zoo's blocks, dim 512, MLP 1408, KV cache
of 256) and the same blocks on a 128-token prompt chunk (prefill). Per scheme, torchao 0.18's quantize_
(int4 per group of 32 and of 128, int8 per group of 32: IntxWeightOnlyConfig) on a copy of the float model,
capture as Parity's (scenarios.subclasses unwraps the tensor subclasses), `parity export` (opset 21: INT4
initializers, DequantizeLinear(axis 0) -> MatMul). Engines, timed by runtime_vs_ort.py's rotating loop in one
process: refrt on the quantized ONNX in its exact mode (float activations, refrt's default), refrt in its
int8-activation mode (weight_only_accuracy=4, refrt/kernels/weight_only_q8.h), ORT on it at its defaults (it
fuses DequantizeLinear -> MatMul into MatMulNBits with accuracy level 4: int8 activations), ORT at accuracy
level 0 (float activations), and refrt on the float32 ONNX. The pairs to read: refrt exact / ORT level 0, refrt
int8 / ORT default, and refrt int8 (and exact) / refrt float32 for the prefill. Each engine's distance from eager
is printed beside its times.
--schemes picks some of the schemes (default: all). The file size of each ONNX is in the table. --cpu-class NAME runs
refrt, oneDNN and OpenBLAS as that CPU class (runtime_vs_ort.py, bench_env.py); every line and row names the class
and the implementations of refrt's heaviest nodes.
"""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import runtime_vs_ort as base  # noqa: E402

# isort: split
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import parity.runtime as rt  # noqa: E402
from scenarios import subclasses  # noqa: E402

SCHEMES = {  # name -> (weight dtype, group)
    "int4 g32": (torch.int4, 32),
    "int4 g128": (torch.int4, 128),
    "int8 g32": (torch.int8, 32),
}


def prefill_inputs(tokens=128, past=128, dim=512, heads=8, kv_heads=2, layers=4):
    hd = dim // heads
    pos = torch.arange(past, past + tokens, dtype=torch.float32)[:, None]
    freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.cat([pos * freq, pos * freq], dim=-1)
    cache = [torch.randn(1, kv_heads, past, hd) for _ in range(2 * layers)]
    return (torch.randn(1, tokens, dim), ang.cos(), ang.sin(), *cache)


def quantized(model, scheme):
    from torchao.quantization import IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerGroup
    dtype, group = SCHEMES[scheme]
    q = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_(q, IntxWeightOnlyConfig(weight_dtype=dtype, granularity=PerGroup(group)))
    return q


def export(module, args, folder: Path, parity: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    onnx_path = folder / "model.onnx"
    ep = torch.export.export(subclasses.unwrap(module), tuple(args), strict=False)
    torch.export.save(ep, str(folder / "model.pt2"))
    subprocess.run([str(parity), "export", str(folder / "model.pt2"), "-o", str(onnx_path)], check=True,
                   stdout=subprocess.DEVNULL)
    return onnx_path


def ort_session(path: Path, threads: int, accuracy_level=None):
    options = base.ort_options(threads)
    if accuracy_level is not None:
        options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", str(accuracy_level))
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def engines(qpath: Path, fpath: Path, args, threads: int):
    ours = rt.InferenceSession(str(qpath), threads=threads, weight_only_accuracy=0)
    ours_q8 = rt.InferenceSession(str(qpath), threads=threads, weight_only_accuracy=4)
    ours_float = rt.InferenceSession(str(fpath), threads=threads)
    ort_default, ort_exact = ort_session(qpath, threads), ort_session(qpath, threads, 0)
    feeds = {i.name: a.numpy() for i, a in zip(ours.get_inputs(), args)}
    return {"refrt": lambda: ours.run(None, feeds), "refrt_int8": lambda: ours_q8.run(None, feeds),
            "ort": lambda: ort_default.run(None, feeds), "ort_acc0": lambda: ort_exact.run(None, feeds),
            "refrt_float32": lambda: ours_float.run(None, feeds)}


def check(calls, module, args):
    """refrt's exact mode and ORT at accuracy level 0 compute what eager computes (1e-3 of the output's scale);
    the int8-activation engines are approximations: their distance from eager (relative to the output's scale) is
    returned, with the exact engines'."""
    with torch.no_grad():
        want = module(*args)[0].numpy()
    errors = {}
    for name in ("refrt", "ort_acc0", "refrt_int8", "ort"):
        got = calls[name]()[0]
        err, scale = float(np.abs(got - want).max()), max(1.0, float(np.abs(want).max()))
        errors[name] = err / scale
        if name in ("refrt", "ort_acc0") and err > 1e-3 * scale:
            raise SystemExit(f"{name} disagrees with eager: max abs error {err:.3g} (scale {scale:.3g})")
    return errors


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--out", default="out/wobench")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--json")
    p.add_argument("--schemes", default=",".join(SCHEMES), help="comma-separated, of: " + ", ".join(SCHEMES))
    p.add_argument("--workloads", default="decode,prefill", help="decode, prefill or both")
    base.bench_env.add_environment_options(p)
    a = p.parse_args(argv)
    parity = Path(a.build).resolve() / "parity"
    threads = [int(t) for t in a.threads.split(",")]
    out = Path(a.out)
    cls = base.bench_env.class_label()
    torch.manual_seed(0)
    float_model = base.LlamaDecode().eval()
    workloads = {"decode step": base.llama_decode_inputs(), "prefill 128 tokens": prefill_inputs()}
    workloads = {k: v for k, v in workloads.items() if k.split()[0] in a.workloads.split(",")}
    schemes = [x.strip() for x in a.schemes.split(",")]
    unknown = [x for x in schemes if x not in SCHEMES]
    if unknown:
        raise SystemExit(f"unknown scheme(s) {unknown}; known: {list(SCHEMES)}")
    cpu, machine = base.cpu_facts(), None
    rows = []
    for wname, args in workloads.items():
        key = wname.split()[0]
        fpath = export(float_model, args, out / key / "float32", parity)
        for scheme in schemes:
            module = quantized(float_model, scheme)
            qpath = export(module, args, out / key / scheme.replace(" ", "_"), parity)
            calls = {t: engines(qpath, fpath, args, t) for t in threads}
            errors = check(calls[threads[0]], module, args)
            medians, _ = base.rotating_rounds(calls, a.rounds, a.runs, a.warmup)
            base.write_inputs(args, qpath.parent / "inputs")
            machine, heaviest = base.heaviest_nodes(parity, qpath, qpath.parent / "inputs", max(threads))
            # The int8-activation mode's implementations: `parity profile` reads the session's level from the
            # environment.
            os.environ["PARITY_REFRT_WEIGHT_ONLY_ACCURACY"] = "4"
            try:
                _, heaviest_q8 = base.heaviest_nodes(parity, qpath, qpath.parent / "inputs", max(threads))
            finally:
                del os.environ["PARITY_REFRT_WEIGHT_ONLY_ACCURACY"]
            for t in threads:
                m = {e: medians[(t, e)] for e in calls[t]}
                rows.append(dict(workload=wname, scheme=scheme, cpu_class=cls, threads=t, ms=m,
                                 onnx_bytes=qpath.stat().st_size, float32_bytes=fpath.stat().st_size,
                                 heaviest_nodes=heaviest, heaviest_nodes_int8=heaviest_q8, error_vs_eager=errors))
                print(f"[{cls}] {wname} {scheme} T={t}: " + ", ".join(f"{e} {v:.3f} ms" for e, v in m.items())
                      + "; error vs eager (of the output's scale): "
                      + ", ".join(f"{e} {v:.2g}" for e, v in errors.items())
                      + f"  [T={max(threads)}: exact {base.nodes_text(heaviest)}; int8 {base.nodes_text(heaviest_q8)}]",
                      flush=True)
    print(f"\n{base.cpu_line(cpu, machine)}; {datetime.date.today()}\n")
    print("| workload | scheme | class | threads | refrt int8 ms | ORT ms | refrt int8/ORT | refrt exact ms | "
          "ORT acc0 ms | refrt exact/ORT acc0 | refrt float32 ms | int8/float32 | exact/float32 | "
          "error vs eager: refrt int8, ORT | ONNX size / float32 | refrt's heaviest nodes (int8 mode) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m, e = r["ms"], r["error_vs_eager"]
        print(f"| {r['workload']} | {r['scheme']} | {r['cpu_class']} | {r['threads']} | {m['refrt_int8']:.3f} | "
              f"{m['ort']:.3f} | {m['refrt_int8'] / m['ort']:.2f} | {m['refrt']:.3f} | {m['ort_acc0']:.3f} | "
              f"{m['refrt'] / m['ort_acc0']:.2f} | {m['refrt_float32']:.3f} | "
              f"{m['refrt_int8'] / m['refrt_float32']:.2f} | {m['refrt'] / m['refrt_float32']:.2f} | "
              f"{e['refrt_int8']:.2g}, {e['ort']:.2g} | "
              f"{r['onnx_bytes'] / r['float32_bytes']:.2f} | {base.nodes_text(r['heaviest_nodes_int8'])} |")
    if a.json:
        Path(a.json).write_text(json.dumps(dict(date=str(datetime.date.today()), cpu=cpu, cpu_class=cls,
                                                machine=machine, rows=rows), indent=1))


if __name__ == "__main__":
    main()
