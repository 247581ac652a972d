"""Per-node gap between refrt and ONNX Runtime from one `parity profile --compare-ort --out DIR` run:
each node's best (minimum) time over the runs on both sides, so that a loaded machine's preemptions
drop out, sorted by refrt - ORT. Usage: node_gap.py DIR [--top N]"""
import argparse
import glob
import json
import os
from collections import defaultdict


def best_times(events, provider_filter=None):
    times = defaultdict(list)
    ops = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        name = e["name"][: -len("_kernel_time")]
        times[name].append(e["dur"])
        ops[name] = e.get("args", {}).get("op_name", "?")
    return {n: min(v) / 1000 for n, v in times.items()}, ops


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    refrt, ops = best_times(json.load(open(os.path.join(a.dir, "trace.json"))))
    ort_file = sorted(glob.glob(os.path.join(a.dir, "ort_profile_*.json")))[-1]
    ort, _ = best_times(json.load(open(ort_file)))
    rows = [(n, ops[n], refrt[n], ort.get(n, 0.0)) for n in refrt]
    print(f"sum of best node times: refrt {sum(r[2] for r in rows):.3f} ms, ORT {sum(ort.values()):.3f} ms")
    by_op = defaultdict(lambda: [0.0, 0.0])
    for _name, op, r, o in rows:
        by_op[op][0] += r
        by_op[op][1] += o
    for op, (r, o) in sorted(by_op.items(), key=lambda kv: -(kv[1][0] - kv[1][1])):
        print(f"  {op:20s} refrt {r:8.3f}  ORT {o:8.3f}  gap {r - o:+8.3f}")
    print("nodes by gap:")
    for n, op, r, o in sorted(rows, key=lambda r: -(r[2] - r[3]))[: a.top]:
        print(f"  {n:40s} {op:14s} refrt {r:7.3f}  ORT {o:7.3f}  gap {r - o:+7.3f}")


if __name__ == "__main__":
    main()
