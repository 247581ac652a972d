"""Half precision in refrt: the same models in float32, bfloat16 and float16, refrt vs onnxruntime.

    .venv/bin/python benchmarks/half_vs_float.py [--build build] [--out out/halfbench] [--models mlp,bert4,...]
                                                 [--threads 1,2] [--rounds 3] [--runs 10] [--warmup 3] [--json F]
                                                 [--cpu-class NAME] [--openblas-core NAME]

Each model (runtime_vs_ort.py's definitions) is cast with `.to(dtype)`, captured with torch.export
(non-strict) and exported by `parity export`; refrt and ORT run the ONNX of each dtype, timed by
runtime_vs_ort.py's rotating loop in one process. ORT has no bfloat16 kernels for most ops on CPU: its cell
says so. Run it once as it is and once with --cpu-class avx512_core (or avx2) to see refrt's float32 path for half
precision, what a CPU without AVX-512 BF16 runs; the first line names the level, every line and row the CPU class
(runtime_vs_ort.py, bench_env.py) and the implementations of refrt's heaviest nodes in that dtype (`parity profile`).
"""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import runtime_vs_ort as base  # noqa: E402

# isort: split
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import parity.runtime as rt  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DEFAULT_MODELS = "mlp,bert4,llm_prefill,llama_decode,resnet18"


def cast(t, dtype):
    return t.to(dtype) if t.is_floating_point() else t


def as_numpy(t: torch.Tensor):
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: the same bits as ml_dtypes'
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def write_inputs(args, folder: Path):
    """The inputs as input_<i>.pb for `parity profile --inputs` (bfloat16 through ml_dtypes, which onnx reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(args):
        (folder / f"input_{i}.pb").write_bytes(onnx.numpy_helper.from_array(as_numpy(t)).SerializeToString())


def export(module, args, folder: Path, parity: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    onnx_path = folder / "model.onnx"
    if not onnx_path.exists():
        ep = torch.export.export(module, tuple(args), strict=False)
        torch.export.save(ep, str(folder / "model.pt2"))
        subprocess.run([str(parity), "export", str(folder / "model.pt2"), "-o", str(onnx_path)], check=True,
                       stdout=subprocess.DEVNULL)
    return onnx_path


def engines(path: Path, args, threads: int):
    """engine -> callable, and why ORT could not run it (or None)."""
    ours = rt.InferenceSession(str(path), threads=threads)
    feeds = {i.name: as_numpy(a) for i, a in zip(ours.get_inputs(), args)}
    calls = {"refrt": lambda: ours.run(None, feeds)}
    try:
        session = ort.InferenceSession(str(path), base.ort_options(threads), providers=["CPUExecutionProvider"])
        session.run(None, feeds)
        calls["ort"] = lambda: session.run(None, feeds)
        return calls, None
    except Exception as e:  # noqa: BLE001 - ORT's own gap, reported in the table
        why = str(e).splitlines()[0].split("NOT_IMPLEMENTED : ")[-1]
        return calls, f"{type(e).__name__}: {why[:90]}"


# The verify rule's rtol per dtype (common/tolerances.json), here relative to the output's scale.
RTOL = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 1e-2}


def check(call, module, args, dtype):
    """refrt computes what eager computes in that dtype, within the verify rule's rtol of the output's scale."""
    with torch.no_grad():
        out = module(*args)
    want = (out[0] if isinstance(out, (tuple, list)) else getattr(out, "logits", out)).float().numpy()
    got = np.asarray(call()[0]).astype(np.float32)
    err, scale = float(np.abs(got - want).max()), max(1.0, float(np.abs(want).max()))
    if err > RTOL[dtype] * scale:
        raise SystemExit(f"refrt disagrees with eager in {dtype}: max abs error {err:.3g} (scale {scale:.3g})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--out", default="out/halfbench")
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--json")
    base.bench_env.add_environment_options(p)
    a = p.parse_args(argv)
    parity = Path(a.build).resolve() / "parity"
    threads = [int(t) for t in a.threads.split(",")]
    known = base.models()
    cls = base.bench_env.class_label()
    cpu, machine, rows = base.cpu_facts(), None, []
    for key in a.models.split(","):
        title, make = known[key]
        torch.manual_seed(0)
        float_module, float_args = make()
        for dname, dtype in DTYPES.items():
            module = copy.deepcopy(float_module).to(dtype).eval()
            args = tuple(cast(t, dtype) for t in float_args)
            path = export(module, args, Path(a.out) / key / dname, parity)
            built = {t: engines(path, args, t) for t in threads}
            calls = {t: c for t, (c, _) in built.items()}
            check(calls[threads[0]]["refrt"], module, args, dtype)
            medians, _ = base.rotating_rounds(calls, a.rounds, a.runs, a.warmup)
            write_inputs(args, path.parent / "in")
            machine, heaviest = base.heaviest_nodes(parity, path, path.parent / "in", max(threads))
            for t in threads:
                rows.append(dict(model=title, dtype=dname, cpu_class=cls, threads=t,
                                 ms={e: medians[(t, e)] for e in calls[t]}, ort_problem=built[t][1],
                                 heaviest_nodes=heaviest))
                print(f"[{cls}] {title} {dname} T={t}: " + ", ".join(f"{e} {medians[(t, e)]:.3f} ms" for e in calls[t])
                      + f"  [T={max(threads)}: {base.nodes_text(heaviest)}]", flush=True)
    print(f"\n{base.cpu_line(cpu, machine)}; {datetime.date.today()}\n")
    print("| model | class | threads | dtype | refrt ms | refrt / float32 | ORT ms | refrt / ORT "
          "| refrt's heaviest nodes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f32 = next(x for x in rows if x["model"] == r["model"] and x["threads"] == r["threads"]
                   and x["dtype"] == "float32")["ms"]["refrt"]
        m = r["ms"]
        ort_cells = (f"{m['ort']:.3f} | {m['refrt'] / m['ort']:.2f}" if "ort" in m else
                     f"cannot run ({r['ort_problem']}) | -")
        print(f"| {r['model']} | {r['cpu_class']} | {r['threads']} | {r['dtype']} | {m['refrt']:.3f} | "
              f"{m['refrt'] / f32:.2f} | {ort_cells} | {base.nodes_text(r['heaviest_nodes'])} |")
    if a.json:
        Path(a.json).write_text(json.dumps(dict(date=str(datetime.date.today()), cpu=cpu, cpu_class=cls,
                                                machine=machine, rows=rows), indent=1))


if __name__ == "__main__":
    main()
