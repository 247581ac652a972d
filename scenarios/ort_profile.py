"""Peer: profiles a model in onnxruntime for `parity profile --compare-ort`.

    python -m scenarios.ort_profile MODEL.onnx --inputs DIR --runs N --warmup N --threads T --out SUMMARY.json

Runs `warmup` unprofiled runs in one session, then `runs` runs in a second, profiling session (so
warm-up never enters the profile), and writes {"version", "mean_run_ms", "op_type_ms_per_run",
"trace"}: per-op-type kernel time summed from ORT's own "<node>_kernel_time" events, divided by the
number of runs. The raw ORT trace stays at "trace" for a node-by-node join with refrt's.
"""

import argparse
import glob
import json
import os
import time

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def read_inputs(folder, session):
    files = sorted(glob.glob(os.path.join(folder, "input_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    feeds = {}
    for meta, path in zip(session.get_inputs(), files):
        proto = onnx.TensorProto()
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
        feeds[meta.name] = numpy_helper.to_array(proto)
    return feeds


def options(threads, profile_prefix=None):
    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    o.inter_op_num_threads = 1
    if profile_prefix:
        o.enable_profiling = True
        o.profile_file_prefix = profile_prefix
    return o


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    providers = ["CPUExecutionProvider"]
    warm = ort.InferenceSession(args.model, options(args.threads), providers=providers)
    feeds = read_inputs(args.inputs, warm)
    for _ in range(args.warmup):
        warm.run(None, feeds)
    prefix = os.path.join(os.path.dirname(os.path.abspath(args.out)), "ort_profile")
    session = ort.InferenceSession(args.model, options(args.threads, prefix), providers=providers)
    for _ in range(args.warmup):  # the new session warms its own caches; these runs are dropped below
        session.run(None, feeds)
    run_ms = []
    for _ in range(args.runs):
        start = time.perf_counter()
        session.run(None, feeds)
        run_ms.append((time.perf_counter() - start) * 1000)
    trace = session.end_profiling()
    with open(trace) as f:
        events = json.load(f)
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    measured = runs[-args.runs:] if args.runs else []
    windows = [(e["ts"], e["ts"] + e["dur"]) for e in measured]
    per_op = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        if not any(lo <= e["ts"] <= hi for lo, hi in windows):
            continue
        op = e.get("args", {}).get("op_name", "?")
        per_op[op] = per_op.get(op, 0.0) + e["dur"] / 1000.0
    n = max(len(measured), 1)
    summary = {"version": ort.__version__, "mean_run_ms": sum(run_ms) / max(len(run_ms), 1),
               "op_type_ms_per_run": {op: ms / n for op, ms in per_op.items()}, "trace": trace}
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
