"""Model benchmark: refrt vs onnxruntime vs torch eager, on the same ONNX, inputs and thread counts.

    .venv/bin/python benchmarks/models_vs_ort.py [--build build] [--out out/bench] [--threads 1,2]
                                                 [--runs 10] [--warmup 2] [--filter REGEX] [--json FILE]
                                                 [--repeat R] [--stat median|min]

Each model is built in plain torch with random weights (nothing downloaded), captured with
torch.export and `run_decompositions()` (the decomposed mode), saved as .pt2 and exported by
`parity export`. Per model and thread count T it times, median of `runs` runs after `warmup`:
  refrt  `parity profile --threads T` (each run's wall time from the trace's model_run events)
  ORT    onnxruntime CPU provider, intra_op_num_threads = T, inter_op_num_threads = 1
  eager  torch.inference_mode(), torch.set_num_threads(T)
With --repeat R the whole suite is measured in R rounds (every model and thread count per round, the
three engines in turn) and each number keeps its best round's median (--stat min: the fastest run
instead of the median, for a machine loaded by other work). It prints a table with refrt/ORT and refrt/eager, a final line
`refrt/ORT geomean X at 1 thread, Y at 2 threads`, and writes the numbers as JSON (for comparing
commits). PARITY_REFRT_OPTIONS (e.g. "--no-optimize") is appended to the `parity profile` call.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# ---- models (torchvision-style layer layout, written out here: the torchvision wheel does not load) ----

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + idt)


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _div(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    return n + d if n < 0.9 * v else n


class SqueezeExcitation(nn.Module):
    def __init__(self, c, sq):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1, self.fc2 = nn.Conv2d(c, sq, 1), nn.Conv2d(sq, c, 1)

    def forward(self, x):
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(self.avgpool(x)))))
        return x * s


def conv_bn_act(cin, cout, k, stride, groups, act):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, k, exp, cout, se, act, stride):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        layers = []
        if exp != cin:
            layers.append(conv_bn_act(cin, exp, 1, 1, 1, act))
        layers.append(conv_bn_act(exp, exp, k, stride, exp, act))
        if se:
            layers.append(SqueezeExcitation(exp, _div(exp // 4)))
        layers.append(conv_bn_act(exp, cout, 1, 1, 1, None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        y = self.block(x)
        return x + y if self.use_res else y


class MobileNetV3Small(nn.Module):
    # (in, kernel, expanded, out, SE, activation, stride): torchvision's mobilenet_v3_small table.
    CONFIG = [(16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2), (24, 3, 88, 24, False, "RE", 1),
              (24, 5, 96, 40, True, "HS", 2), (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
              (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1), (48, 5, 288, 96, True, "HS", 2),
              (96, 5, 576, 96, True, "HS", 1), (96, 5, 576, 96, True, "HS", 1)]

    def __init__(self, classes=1000):
        super().__init__()
        layers = [conv_bn_act(3, 16, 3, 2, 1, nn.Hardswish)]
        for cin, k, exp, cout, se, a, s in self.CONFIG:
            layers.append(InvertedResidual(cin, k, exp, cout, se, nn.ReLU if a == "RE" else nn.Hardswish, s))
        layers.append(conv_bn_act(96, 576, 1, 1, 1, nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(1024, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class BertLayer(nn.Module):
    def __init__(self, d=768, heads=12, ff=3072):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value, self.out = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
        self.inter, self.output = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x, mask):
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(self.query(x)), split(self.key(x)), split(self.value(x)), attn_mask=mask)
        x = self.ln1(x + self.out(a.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.output(F.gelu(self.inter(x))))


class Bert4(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer() for _ in range(4))

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return x


class LlamaDecode(nn.Module):
    """One decode step (one new token) through 4 LLaMA-style blocks of the scenario zoo, each with its
    own KV cache of `past` positions passed as inputs."""

    def __init__(self, dim=512, heads=8, kv_heads=2, hidden=1408, layers=4):
        super().__init__()
        from scenarios.cases.blocks import LlamaBlock
        self.blocks = nn.ModuleList(LlamaBlock(dim, heads, kv_heads, hidden) for _ in range(layers))

    def forward(self, x, cos, sin, *cache):
        outs = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, cos, sin, cache[2 * i], cache[2 * i + 1])
            outs += [k, v]
        return (x, *outs)


def llama_inputs(past=256, dim=512, heads=8, kv_heads=2, layers=4):
    hd = dim // heads
    pos = torch.tensor([[float(past)]])
    freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.cat([pos * freq, pos * freq], dim=-1)
    cache = [torch.randn(1, kv_heads, past, hd) for _ in range(2 * layers)]
    return (torch.randn(1, 1, dim), ang.cos(), ang.sin(), *cache)


def zoo_case(name):
    from scenarios.registry import get_case
    case = get_case(name)
    args, _ = case.examples()[0]
    return case.module(), args


def models():
    """name -> (module factory, inputs factory), built lazily (ResNet-18 alone is 45 MB of weights)."""
    def mlp():
        return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)), (torch.randn(64, 1024),)

    def bert():
        mask = torch.zeros(1, 1, 128, 128)
        mask[..., 120:] = float("-inf")  # padding of the last 8 tokens, as an additive mask
        return Bert4(), (torch.randn(1, 128, 768), mask)

    return {
        "mlp": ("MLP 1024-4096-1024, batch 64", mlp),
        "resnet18": ("ResNet-18, 1x3x224x224", lambda: (ResNet18(), (torch.randn(1, 3, 224, 224),))),
        "mobilenetv3": ("MobileNetV3-small, 1x3x224x224", lambda: (MobileNetV3Small(), (torch.randn(1, 3, 224, 224),))),
        "bert4": ("BERT-base layer x4, seq 128", bert),
        "llama_decode": ("LLaMA-style decode step, 4 layers, KV cache 256", lambda: (LlamaDecode(), llama_inputs())),
        "zoo_transformer_encoder": ("zoo: block_transformer_encoder (2x5x32)", lambda: zoo_case("block_transformer_encoder")),
    }


# ---- export and timing ----

def export(name, make, folder: Path, parity: Path):
    folder.mkdir(parents=True, exist_ok=True)
    onnx_path, inputs_dir = folder / "model.onnx", folder / "inputs"
    torch.manual_seed(0)
    module, args = make()
    module.eval()
    with torch.no_grad():  # random but non-trivial batch-norm statistics
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    if not onnx_path.exists():
        ep = torch.export.export(module, args).run_decompositions()
        torch.export.save(ep, str(folder / "model.pt2"))
        subprocess.run([str(parity), "export", str(folder / "model.pt2"), "-o", str(onnx_path)], check=True)
        inputs_dir.mkdir(exist_ok=True)
        for i, a in enumerate(args):
            (inputs_dir / f"input_{i}.pb").write_bytes(numpy_helper.from_array(a.numpy()).SerializeToString())
    return module, args, onnx_path, inputs_dir


# The statistic over the timed runs: "median" (default), or "min" (on a loaded machine the fastest run
# is the one least disturbed by other processes; applied alike to refrt, ORT and eager).
STAT = {"median": np.median, "min": np.min}
stat = np.median


def median_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return float(stat(times))


def time_refrt(parity, onnx_path, inputs_dir, threads, runs, warmup, out):
    cmd = [str(parity), "profile", str(onnx_path), "--inputs", str(inputs_dir), "--threads", str(threads),
           "--runs", str(runs), "--warmup", str(warmup), "--out", str(out)]
    cmd += shlex.split(os.environ.get("PARITY_REFRT_OPTIONS", ""))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    trace = json.loads((out / "trace.json").read_text())
    runs_us = [e["dur"] for e in trace if e.get("name") == "model_run"]
    return float(stat(runs_us)) / 1000


def time_ort(onnx_path, args, threads, runs, warmup):
    o = ort.SessionOptions()
    o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
    s = ort.InferenceSession(str(onnx_path), o, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(s.get_inputs(), args)}
    return median_ms(lambda: s.run(None, feeds), runs, warmup)


def time_eager(module, args, threads, runs, warmup):
    torch.set_num_threads(threads)
    with torch.inference_mode():
        return median_ms(lambda: module(*args), runs, warmup)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("PARITY_BUILD_DIR", "build"))
    ap.add_argument("--out", default="out/bench")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--filter", default="")
    ap.add_argument("--stat", choices=sorted(STAT), default="median",
                    help="statistic of the timed runs (min: least disturbed run, for loaded machines)")
    ap.add_argument("--json", default="")
    ap.add_argument("--fresh", action="store_true", help="re-export even when model.onnx exists")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure the whole suite this many rounds (refrt, ORT and eager in turn per row) and keep "
                         "each number's best round (a burst of load on a shared host then spoils one round, "
                         "not every measurement of one row)")
    a = ap.parse_args(argv)
    global stat
    stat = STAT[a.stat]
    parity = (ROOT / a.build / "parity") if not Path(a.build).is_absolute() else Path(a.build) / "parity"
    out = Path(a.out)
    threads = [int(t) for t in a.threads.split(",")]
    cases = []  # exported first, then measured in rounds
    for key, (title, make) in models().items():
        if a.filter and not re.search(a.filter, key):
            continue
        folder = out / key
        if a.fresh and (folder / "model.onnx").exists():
            (folder / "model.onnx").unlink()
        module, args, onnx_path, inputs_dir = export(key, make, folder, parity)
        nodes = len(onnx.load(str(onnx_path), load_external_data=False).graph.node)
        cases.append((key, title, module, args, onnx_path, inputs_dir, folder, nodes))
    rows = [(case, t, {"model": case[0], "title": case[1], "threads": t, "onnx_nodes": case[7],
                       "refrt_ms": float("inf"), "ort_ms": float("inf"), "eager_ms": float("inf")})
            for case in cases for t in threads]
    results = [r for _, _, r in rows]
    # Each round measures every model: a burst of load on the host (seconds long) then lands in one
    # round of a few rows, and each number keeps its best round, instead of hitting every repeat of
    # one row's refrt (or ORT) figure.
    rounds = max(1, a.repeat)
    for rnd in range(rounds):
        for (_, title, module, args, onnx_path, inputs_dir, folder, _), t, r in rows:
            r["refrt_ms"] = min(r["refrt_ms"], time_refrt(parity, onnx_path, inputs_dir, t, a.runs, a.warmup,
                                                          folder / f"profile_t{t}"))
            r["ort_ms"] = min(r["ort_ms"], time_ort(onnx_path, args, t, a.runs, a.warmup))
            r["eager_ms"] = min(r["eager_ms"], time_eager(module, args, t, a.runs, a.warmup))
            r["refrt_over_ort"] = r["refrt_ms"] / r["ort_ms"]
            r["refrt_over_eager"] = r["refrt_ms"] / r["eager_ms"]
            print(f"round {rnd + 1}/{rounds}  {title:50s} T={t}  refrt {r['refrt_ms']:8.2f}  ORT {r['ort_ms']:8.2f}"
                  f"  eager {r['eager_ms']:8.2f}  refrt/ORT {r['refrt_over_ort']:5.2f}"
                  f"  refrt/eager {r['refrt_over_eager']:5.2f}", flush=True)
    print()
    print("| model | T | refrt ms | ORT ms | eager ms | refrt/ORT | refrt/eager |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['title']} | {r['threads']} | {r['refrt_ms']:.2f} | {r['ort_ms']:.2f} | {r['eager_ms']:.2f} | "
              f"{r['refrt_over_ort']:.2f} | {r['refrt_over_eager']:.2f} |")
    gm = {t: geomean([r["refrt_over_ort"] for r in results if r["threads"] == t]) for t in threads}
    print(f"refrt/ORT geomean {gm.get(1, float('nan')):.2f} at 1 thread, {gm.get(2, float('nan')):.2f} at 2 threads")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor()},
           "versions": {"torch": torch.__version__, "onnxruntime": ort.__version__},
           "runs": a.runs, "warmup": a.warmup, "repeat": a.repeat, "stat": a.stat,
           "load_average": os.getloadavg(), "refrt_options": os.environ.get("PARITY_REFRT_OPTIONS", ""),
           "results": results, "geomean_refrt_over_ort": {str(t): g for t, g in gm.items()}}
    path = Path(a.json) if a.json else out / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    print(f"json: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
