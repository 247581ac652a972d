"""Peak resident memory of `parity export`, `parity run` and `parity verify` on a model past 2 GiB.

The model: Linear(16000 -> 20000), ReLU, Linear(20000 -> 16000), float32, random weights: W = 2.56 GB
(2.38 GiB) of weights. It is captured in a child process (`parity.capture`, the matrix's own capture, with a
dynamic batch), so Python's own peak never counts. Each parity command then runs as a child whose peak RSS
comes from wait4()'s rusage (ru_maxrss, the kernel's high-water mark of resident pages, file-backed
mapped pages included). Prints peak / W per command, and checks the exported model with onnx.checker (by
path) and onnxruntime against the eager output.

    .venv/bin/python benchmarks/memory_large_model.py [--work DIR] [--parity build/parity] [--keep]
                                                      [--cpu-class NAME] [--openblas-core NAME]

--cpu-class NAME runs the parity commands as that CPU class (bench_env.py: the class's PARITY_REFRT_ISA,
ONEDNN_MAX_CPU_ISA, OPENBLAS_CORETYPE); every line names the class.

Needs about 8 GB of free disk (archive + ONNX data) and W + 1 GB of free memory.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_env  # noqa: E402

bench_env.reexec_for_environment()  # the class's variables, for this process and the parity commands it runs

CAPTURE = r"""
import sys, torch, parity
from torch.export import Dim
torch.manual_seed(0)
class TwoLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = torch.nn.Linear(16000, 20000)   # weight 20000 x 16000
        self.fc1 = torch.nn.Linear(20000, 16000)   # weight 16000 x 20000
    def forward(self, x):
        return self.fc1(torch.relu(self.fc0(x)))
with torch.no_grad():
    model = TwoLinear().eval()
    for p in model.parameters():
        p.normal_(0.0, 0.01)
batch = Dim("batch", min=1, max=64)
cases = parity.capture(model, (torch.randn(2, 16000),), dynamic_shapes=({0: batch},),
                       input_sets=[(torch.randn(3, 16000),)], modes=("nonstrict",), out=sys.argv[1],
                       name="two_linear")
print(cases[0].dir if cases[0].status == "captured" else "FAILED " + str(cases[0].error))
"""

CHECK = r"""
import sys, numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper
model_path, case_dir = sys.argv[1], sys.argv[2]
onnx.checker.check_model(model_path)  # by path: external data is checked, the weights are not loaded
sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
x = numpy_helper.to_array(onnx.load_tensor(case_dir + "/test_data_set_0/input_0.pb"))
want = numpy_helper.to_array(onnx.load_tensor(case_dir + "/test_data_set_0/output_0.pb"))
got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
err = float(np.abs(got - want).max())
print(f"onnxruntime: max abs error vs eager {err:.3g}")
sys.exit(0 if np.allclose(got, want, rtol=1e-3, atol=1e-4) else 1)
"""


def run_measured(cmd: list[str], label: str) -> tuple[int, float, float, str]:
    """Runs cmd as a child; returns (exit code, peak RSS bytes, seconds, tail of its output)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    seconds = time.monotonic() - start
    return (
        proc.returncode,
        usage.ru_maxrss * 1024.0,
        seconds,
        text.strip().splitlines()[-1:] and text.strip().splitlines()[-1],
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=None, help="folder for the model and outputs (default: a temporary one)")
    ap.add_argument("--parity", default=str(ROOT / "build" / "parity"))
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    bench_env.add_environment_options(ap)
    args = ap.parse_args()
    cls = bench_env.class_label()
    work = Path(args.work or tempfile.mkdtemp(prefix="parity_mem_"))
    work.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    try:
        case_dir = work / "cases" / "two_linear" / "nonstrict"
        if not (case_dir / "model.pt2").exists():
            print("capturing the 2.5 GB model (child process) ...", flush=True)
            # This tree's `parity` package and scenarios, whatever the venv's editable install points at.
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT)]))
            res = subprocess.run([py, "-c", CAPTURE, str(work / "cases")], capture_output=True, text=True,
                                 env=env, cwd=ROOT)
            if res.returncode != 0 or "FAILED" in res.stdout:
                print(res.stdout, res.stderr)
                return 1
        pt2 = case_dir / "model.pt2"
        weights = 2 * 16000 * 20000 * 4 + (16000 + 20000) * 4
        print(f"W = {weights} bytes ({weights / 2**30:.2f} GiB); archive {pt2.stat().st_size} bytes")
        onnx_path = work / "out" / "model.onnx"
        onnx_path.parent.mkdir(exist_ok=True)
        rows = []
        steps = [
            ("export", [args.parity, "export", str(pt2), "-o", str(onnx_path)]),
            ("run", [args.parity, "run", str(onnx_path), "--inputs", str(case_dir / "test_data_set_0")]),
            ("verify --onnx", [args.parity, "verify", str(case_dir), "--onnx", str(onnx_path), "--out",
                               str(work / "verify_onnx"), "--quiet"]),
            ("verify", [args.parity, "verify", str(case_dir), "--out", str(work / "verify"), "--quiet"]),
        ]
        for label, cmd in steps:
            code, peak, seconds, last = run_measured(cmd, label)
            rows.append({"command": label, "cpu_class": cls, "exit": code, "peak_rss_bytes": int(peak),
                         "peak_over_w": peak / weights,
                         "seconds": round(seconds, 1), "last_line": last})
            print(f"[{cls}] {label:14s} exit {code}  peak RSS {peak / 2**30:6.2f} GiB  = {peak / weights:4.2f} W  "
                  f"{seconds:6.1f} s  | {last}", flush=True)
        res = subprocess.run([py, "-c", CHECK, str(onnx_path), str(case_dir)], capture_output=True, text=True)
        print((res.stdout + res.stderr).strip())
        ok = res.returncode == 0
        if args.json:
            Path(args.json).write_text(json.dumps({"weights_bytes": weights, "rows": rows, "onnxruntime_ok": ok},
                                                  indent=2))
        return 0 if ok and all(r["exit"] == 0 for r in rows if r["command"] != "verify") else 1
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
