"""Model benchmark: refrt, ONNX Runtime and torch eager, all timed the same way, in one Python process.

    .venv/bin/python benchmarks/runtime_vs_ort.py [--threads 1,2] [--rounds 5] [--runs 10] [--warmup 3]
                                                  [--filter REGEX] [--out out/bench] [--json FILE] [--lock FILE]
                                                  [--cpu-class NAME] [--openblas-core NAME] [--export-only]

Each model comes from the scenario library (scenarios/cases: the zoo's classes at real sizes), random
weights, captured with torch.export + run_decompositions() and exported by `parity export`. Per model and
thread count T, three callables on the same numpy/torch inputs:
  refrt  parity.runtime.InferenceSession(model, threads=T).run(None, feeds)      (in-process binding)
  ORT    onnxruntime.InferenceSession(model, intra_op_num_threads=T, inter_op_num_threads=1).run(None, feeds)
  eager  torch.inference_mode(), torch.set_num_threads(T), module(*args)
are timed by one loop (time.perf_counter around each call, `warmup` untimed calls first). A model is
measured in `rounds` rounds; each round times every (T, engine) pair, the engine order rotating per round,
so a burst of load from elsewhere lands on all engines alike. Each figure is the median over all timed
calls of all rounds. After the timing, `parity profile MODEL --inputs DIR --threads T --runs 3 --warmup 1`
(T the largest thread count, same environment) tells which implementation ran the model's 3 heaviest
nodes (e.g. "onednn brg:avx512_core", "refrt"): the JSON's "heaviest_nodes" on the model's row at T and
the table's last column. The JSON and the table record the CPU (model, family/model), the ISA level
refrt's kernels used, oneDNN's ISA and OpenBLAS's core (profile's "machine" facts), the JSON also the CPU's
flags. With --lock FILE each model's export, measurement and profile hold an flock on FILE.
Leave OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset for the command: a user's machine does not set them.
--cpu-class NAME (avx2, avx2_vnni, avx512_core, avx512_core_vnni, avx512_core_bf16, amx: tests/python/cpu_classes.py)
runs refrt, oneDNN and OpenBLAS as that CPU (bench_env.py; ONNX Runtime ignores the caps); every printed figure
names the class ("amx (host)" with nothing forced). --openblas-core NAME (e.g. Prescott) runs with
OPENBLAS_CORETYPE=NAME. The libraries read these once, when they load, so the script re-executes itself with the
variables set before it imports numpy, torch, onnxruntime or refrt. The JSON's "openblas_coretype" is the value the
run had (null: unset), "cpu_class" the class.
Memory bandwidth is measured in the same run, before the models (bench_env.memory_bandwidth: STREAM's triad on
three float64 arrays together 4x the largest cache, at each thread count), and each decode step's row gets its
achieved bandwidth: the model's weight bytes (its initializers, each read once per step) / the step's median time,
and that as a fraction of the triad's at the same thread count.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_env  # noqa: E402

# With --cpu-class / --openblas-core: re-executes this command with their variables set, before the imports below
# load OpenBLAS, oneDNN or refrt (the other benchmarks import this module before anything else for it).
bench_env.reexec_for_environment()

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "python"))

import parity.runtime as rt  # noqa: E402
from scenarios.cases import _zoo, blocks, models_vision  # noqa: E402
from scenarios.ort_profile import options as ort_options  # noqa: E402
from scenarios.registry import get_case  # noqa: E402

# ---- models: the scenario library's classes at the sizes people run ----

class LlamaDecode(nn.Module):
    """One decode step (one new token) through 4 of the zoo's LLaMA-style blocks, each with its own KV
    cache of `past` positions passed as inputs."""

    def __init__(self, dim=512, heads=8, kv_heads=2, hidden=1408, layers=4):
        super().__init__()
        self.blocks = nn.ModuleList(blocks.LlamaBlock(dim, heads, kv_heads, hidden) for _ in range(layers))

    def forward(self, x, cos, sin, *cache):
        outs = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, cos, sin, cache[2 * i], cache[2 * i + 1])
            outs += [k, v]
        return (x, *outs)


def llama_decode_inputs(past=256, dim=512, heads=8, kv_heads=2, layers=4):
    hd = dim // heads
    pos = torch.tensor([[float(past)]])
    freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.cat([pos * freq, pos * freq], dim=-1)
    cache = [torch.randn(1, kv_heads, past, hd) for _ in range(2 * layers)]
    return (torch.randn(1, 1, dim), ang.cos(), ang.sin(), *cache)


def zoo_case(name):
    case = get_case(name)
    args, _ = case.examples()[0]
    return case.module(), args


def _bert4():
    import transformers as tf
    model = _zoo.Encoder(tf.BertModel(tf.BertConfig(num_hidden_layers=4), add_pooling_layer=False))
    mask = torch.ones(1, 128, dtype=torch.int64)
    mask[:, 120:] = 0  # the last 8 tokens are padding
    return model, (torch.randint(0, 30000, (1, 128)), mask)


def _vit_b16():
    import transformers as tf  # ViTConfig's defaults are ViT-B/16 at 224: 12 layers, 768 wide, 12 heads
    return models_vision.Vision(tf.ViTModel(tf.ViTConfig(), add_pooling_layer=False)), (torch.randn(1, 3, 224, 224),)


def _whisper_encoder():
    # Whisper-tiny's encoder sizes over 10 s of audio (80 mel bins x 1000 frames -> 500 positions).
    sizes = dict(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536, num_mel_bins=80,
                 max_source_positions=500)
    return models_vision.WhisperEncoder(**sizes), (torch.randn(1, 80, 1000),)


def _llm_prefill():
    import transformers as tf
    config = tf.LlamaConfig(vocab_size=8192, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                            num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=1024)
    ids = torch.randint(3, 8192, (1, 512))
    return _zoo.CausalLM(tf.LlamaForCausalLM(config)), (ids, torch.ones(1, 512, dtype=torch.int64))


def models():
    """key -> (title, factory returning (module, args)); built lazily (ViT-B alone is 340 MB of weights)."""
    def mlp():
        return nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)), (torch.randn(64, 1024),)

    return {
        "mlp": ("MLP 1024-4096-1024 (GELU), batch 64", mlp),
        "resnet18": ("ResNet-18, 224", lambda: (models_vision.ResNet18(width=64, classes=1000),
                                                 (torch.randn(1, 3, 224, 224),))),
        "mobilenetv3": ("MobileNetV3-small, 224", lambda: (models_vision.MobileNetV3Small(classes=1000, full=True),
                                                           (torch.randn(1, 3, 224, 224),))),
        "bert4": ("BERT-base x4, seq 128", _bert4),
        "llama_decode": ("LLaMA-style decode step (4 layers, KV 256)", lambda: (LlamaDecode(), llama_decode_inputs())),
        # TinyLlama-1.1B's layer sizes: 706 MB of weights, past a server's last-level cache (300 MiB on the AMX Xeon
        # these figures come from), so the step streams its weights from memory, not from L3.
        "llama_decode_wide": ("LLaMA-style decode step, 2048 wide (4 layers, KV 256)",
                              lambda: (LlamaDecode(dim=2048, heads=32, kv_heads=4, hidden=5632),
                                       llama_decode_inputs(dim=2048, heads=32, kv_heads=4))),
        "zoo_transformer_block": ("zoo block_transformer_encoder (2x5x32)",
                                  lambda: zoo_case("block_transformer_encoder")),
        "vit_b16": ("ViT-B/16 encoder, 224", _vit_b16),
        "whisper_encoder": ("Whisper-tiny-style encoder, 10 s audio", _whisper_encoder),
        "llm_prefill": ("LLaMA-style LM prefill, 512 tokens", _llm_prefill),
    }


# ---- export ----

def export(make, folder: Path, parity_bin: Path, fresh: bool):
    folder.mkdir(parents=True, exist_ok=True)
    onnx_path = folder / "model.onnx"
    torch.manual_seed(0)
    module, args = make()
    module.eval()
    with torch.no_grad():  # random but non-trivial batch-norm statistics
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    if fresh or not onnx_path.exists():
        ep = torch.export.export(module, tuple(args)).run_decompositions()
        torch.export.save(ep, str(folder / "model.pt2"))
        subprocess.run([str(parity_bin), "export", str(folder / "model.pt2"), "-o", str(onnx_path)], check=True,
                       stdout=subprocess.DEVNULL)
    return module, args, onnx_path


def write_inputs(args, folder: Path):
    """The benchmark's inputs as input_<i>.pb, for `parity profile MODEL.onnx --inputs FOLDER`."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(args):
        (folder / f"input_{i}.pb").write_bytes(onnx.numpy_helper.from_array(t.numpy()).SerializeToString())


def heaviest_nodes(parity_bin: Path, onnx_path: Path, inputs_dir: Path, threads: int, top=3):
    """`parity profile` of the model on the inputs in inputs_dir at `threads` threads, in this process's environment
    (so the same OPENBLAS_CORETYPE): its machine facts and its `top` nodes by total time, each with the
    implementation that ran it. Writes trace.json and summary.{json,md} to <model folder>/profile."""
    out = onnx_path.parent / "profile"
    cmd = [str(parity_bin), "profile", str(onnx_path), "--inputs", str(inputs_dir), "--threads", str(threads),
           "--runs", "3", "--warmup", "1", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    summary = json.loads((out / "summary.json").read_text())
    nodes = [{k: n[k] for k in ("node", "op_type", "share", "impl")} for n in summary["by_node"][:top]]
    return summary["machine"], nodes


def nodes_text(nodes):
    """heaviest_nodes' rows for a table cell, "Gemm 52% onednn brg:avx512_core; ...", without nodes that took no time
    (fused into another)."""
    return "; ".join(f"{n['op_type']} {n['share']:.0f}% {n['impl']}" for n in nodes or [] if n["share"] > 0)


# ---- timing: one loop for every engine ----

# Warm-up lasts at least this long: after the pause before each engine (rotating_rounds) the CPU comes back from idle
# slowly, and a tiny model's few warm-up calls did not cover it (the zoo block, 0.04 ms a call: refrt's median over
# 0.1 s pauses + 3 + 10 calls moved between 0.040 and 0.074 ms from run to run, its first call after each pause 0.08;
# AMD EPYC Zen 2, 2 vCPUs). 50 ms is 0.4 % of a round for the largest models.
MIN_WARMUP_SECONDS = 0.05


def timed_calls(fn, runs, warmup):
    start, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - start < MIN_WARMUP_SECONDS:
        fn()
        done += 1
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return times


def engines(module, args, onnx_path, threads):
    """engine name -> a no-argument callable running the model once with `threads` threads."""
    ours = rt.InferenceSession(str(onnx_path), threads=threads)
    theirs = ort.InferenceSession(str(onnx_path), ort_options(threads), providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(ours.get_inputs(), args)}

    def eager():
        torch.set_num_threads(threads)
        with torch.inference_mode():
            module(*args)

    return {"refrt": lambda: ours.run(None, feeds), "ort": lambda: theirs.run(None, feeds), "eager": eager}


def check_agreement(calls, onnx_path):
    """refrt and ORT must compute the same model: their outputs agree to 1e-3 relative to the output's scale."""
    a, b = calls["refrt"](), calls["ort"]()
    for x, y in zip(a, b):
        if x.dtype.kind == "f":
            scale = max(1.0, float(np.abs(y).max()))
            err = float(np.abs(x.astype(np.float64) - y).max())
            if err > 1e-3 * scale:
                raise SystemExit(f"{onnx_path}: refrt and ORT disagree (max abs error {err:.3g}, scale {scale:.3g})")


def rotating_rounds(calls, rounds, runs, warmup):
    """calls: threads -> engine -> callable. Each round times every (threads, engine) pair with `runs` calls,
    the engine order rotating per round; returns the medians over all rounds and each round's median."""
    order = list(next(iter(calls.values())))
    times = {(t, e): [] for t in calls for e in order}
    per_round = {(t, e): [] for t in calls for e in order}
    for r in range(rounds):
        for t in calls:
            for e in order[r % len(order):] + order[:r % len(order)]:
                # The previous engine's threads must be parked first: ONNX Runtime's intra-op workers spin for
                # 10-50 ms after a run (measured: a refrt ResNet-18 call right after an ORT call took 52 ms
                # instead of 35 at 2 threads, with a 50 ms pause between them 35), which took a core from
                # whichever engine came next, for all of a small model's calls.
                time.sleep(0.1)
                ts = timed_calls(calls[t][e], runs, warmup)
                times[(t, e)] += ts
                per_round[(t, e)].append(float(np.median(ts)))
    return {k: float(np.median(v)) for k, v in times.items()}, per_round


def measure(module, args, onnx_path, threads, rounds, runs, warmup):
    calls = {t: engines(module, args, onnx_path, t) for t in threads}
    check_agreement(calls[threads[0]], onnx_path)
    medians, per_round = rotating_rounds(calls, rounds, runs, warmup)
    torch.set_num_threads(max(threads))
    return medians, per_round


# ---- machine facts ----

def cpu_facts():
    model, flags = platform.processor(), set()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model in ("", platform.machine()):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    avx512 = sorted(f for f in flags if f.startswith("avx512"))
    return {"model": model, "logical_cpus": os.cpu_count(), "avx2": "avx2" in flags, "fma": "fma" in flags,
            "avx512": avx512, "amx": sorted(f for f in flags if f.startswith("amx"))}


def cpu_line(cpu, machine):
    """The table's first line: the CPU, refrt's and oneDNN's ISA and OpenBLAS's core (heaviest_nodes' machine facts)
    and OPENBLAS_CORETYPE."""
    m = machine or {}
    generic = " (generic SSE3 fallback)" if m.get("openblas_generic") else ""
    return (f"CPU: {m.get('cpu', cpu['model'])} (family {m.get('family')} model {m.get('model')}, "
            f"{cpu['logical_cpus']} logical CPUs); refrt ISA {m.get('refrt_isa')}; oneDNN ISA {m.get('onednn_isa')}; "
            f"OpenBLAS core {m.get('openblas_core')}{generic}; "
            f"OPENBLAS_CORETYPE {os.environ.get('OPENBLAS_CORETYPE', 'unset')}")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


@contextlib.contextmanager
def cpu_lock(path):
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def table(results, cpu, machine):
    lines = [cpu_line(cpu, machine), "",
             "| model | class | threads | refrt ms | ORT ms | eager ms | refrt/ORT | refrt/eager "
             "| heaviest nodes ran on |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['title']} | {r['cpu_class']} | {r['threads']} | {r['refrt_ms']:.3f} | {r['ort_ms']:.3f} "
                     f"| {r['eager_ms']:.3f} | {r['refrt_over_ort']:.2f} | {r['refrt_over_eager']:.2f} "
                     f"| {nodes_text(r.get('heaviest_nodes'))} |")
    return "\n".join(lines)


def decode_bandwidth(r, weights, triad):
    """A decode row's achieved bandwidth: weight bytes / median time, per engine, and its fraction of the triad's."""
    r["weight_bytes"] = weights
    for e in ("refrt", "ort", "eager"):
        gbps = weights / (r[f"{e}_ms"] * 1e-3) / 1e9
        r[f"{e}_gbps"], r[f"{e}_of_triad"] = gbps, gbps / triad[r["threads"]]


def bandwidth_table(results, triad, array_bytes):
    lines = [f"Memory bandwidth, same run: STREAM triad (float64, 3 arrays of {array_bytes >> 20} MiB, best of 5): "
             + ", ".join(f"{g:.1f} GB/s at {t} thread{'s' if t > 1 else ''}" for t, g in triad.items()), "",
             "| decode step | class | threads | weights MB | refrt GB/s | of triad | ORT GB/s | of triad |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "weight_bytes" in r:
            lines.append(f"| {r['title']} | {r['cpu_class']} | {r['threads']} | {r['weight_bytes'] / 1e6:.1f} "
                         f"| {r['refrt_gbps']:.1f} | {r['refrt_of_triad']:.0%} | {r['ort_gbps']:.1f} "
                         f"| {r['ort_of_triad']:.0%} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("PARITY_BUILD_DIR", "build"))
    ap.add_argument("--out", default="out/bench")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10, help="timed calls per engine per round")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls before each engine's timed calls")
    ap.add_argument("--filter", default="", help="regular expression on the model keys")
    ap.add_argument("--json", default="")
    ap.add_argument("--fresh", action="store_true", help="re-export even when model.onnx exists")
    ap.add_argument("--lock", default="", help="flock this file around each model's export, measurement and profile")
    bench_env.add_environment_options(ap)
    ap.add_argument("--export-only", action="store_true",
                    help="only write OUT/<model>/model.onnx and its inputs (OUT/<model>/inputs/input_<i>.pb, for "
                         "`parity profile MODEL.onnx --inputs DIR`), no timing")
    a = ap.parse_args(argv)
    build = Path(a.build) if Path(a.build).is_absolute() else ROOT / a.build
    threads = [int(t) for t in a.threads.split(",")]
    cpu, isa, cls = cpu_facts(), rt.isa_level(), bench_env.class_label()
    results, machine = [], None
    triad, array_bytes = ({}, 0) if a.export_only else bench_env.memory_bandwidth(threads)
    for t, g in triad.items():
        print(f"[{cls}] memory bandwidth (STREAM triad, {array_bytes >> 20} MiB arrays) T={t}: {g:.1f} GB/s",
              flush=True)
    for key, (title, make) in models().items():
        if a.filter and not re.search(a.filter, key):
            continue
        with cpu_lock(a.lock):
            module, args, onnx_path = export(make, Path(a.out) / key, build / "parity", a.fresh)
            write_inputs(args, onnx_path.parent / "inputs")
            if a.export_only:
                print(f"{onnx_path} (inputs: {onnx_path.parent / 'inputs'})", flush=True)
                continue
            medians, per_round = measure(module, args, onnx_path, threads, a.rounds, a.runs, a.warmup)
            machine, heaviest = heaviest_nodes(build / "parity", onnx_path, onnx_path.parent / "inputs", max(threads))
        nodes = len(onnx.load(str(onnx_path), load_external_data=False).graph.node)
        for t in threads:
            r = {"model": key, "title": title, "cpu_class": cls, "threads": t, "onnx_nodes": nodes,
                 "refrt_ms": medians[(t, "refrt")], "ort_ms": medians[(t, "ort")], "eager_ms": medians[(t, "eager")],
                 "round_medians_ms": {e: per_round[(t, e)] for e in ("refrt", "ort", "eager")}}
            r["refrt_over_ort"], r["refrt_over_eager"] = r["refrt_ms"] / r["ort_ms"], r["refrt_ms"] / r["eager_ms"]
            if t == max(threads):
                r["heaviest_nodes"] = heaviest
            bandwidth = ""
            if "decode" in key:
                decode_bandwidth(r, bench_env.weight_bytes(onnx_path), triad)
                bandwidth = (f"  refrt {r['refrt_gbps']:.1f} GB/s = {r['refrt_of_triad']:.0%} of triad, ORT "
                             f"{r['ort_gbps']:.1f} GB/s = {r['ort_of_triad']:.0%}")
            results.append(r)
            print(f"[{cls}] {title:45s} T={t}  refrt {r['refrt_ms']:9.3f}  ORT {r['ort_ms']:9.3f}  eager "
                  f"{r['eager_ms']:9.3f}  refrt/ORT {r['refrt_over_ort']:5.2f}  refrt/eager "
                  f"{r['refrt_over_eager']:5.2f}{bandwidth}  [T={max(threads)}: {nodes_text(heaviest)}]", flush=True)
        del module, args
    if a.export_only:
        return 0
    gm = {t: geomean([r["refrt_over_ort"] for r in results if r["threads"] == t]) for t in threads}
    gm_eager = {t: geomean([r["refrt_over_eager"] for r in results if r["threads"] == t]) for t in threads}
    print()
    print(table(results, cpu, machine))
    print(f"[{cls}] refrt/ORT geomean " + ", ".join(f"{g:.2f} at {t} thread{'s' if t > 1 else ''}"
                                                    for t, g in gm.items()))
    print()
    print(bandwidth_table(results, triad, array_bytes))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "cpu": cpu, "cpu_class": cls, "refrt_isa_level": isa,
           "memory_bandwidth": {"triad_gbps": {str(t): g for t, g in triad.items()}, "array_bytes": array_bytes,
                                "method": "STREAM triad a = b + 3 c, float64, torch.add(out=), best of 5"},
           "refrt_cpu_isa_level": rt.cpu_isa_level(),
           "platform": platform.platform(), "machine": machine,
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
           "openblas_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ},
           "versions": {"torch": torch.__version__, "onnxruntime": ort.__version__, "numpy": np.__version__},
           "method": {"rounds": a.rounds, "runs": a.runs, "warmup": a.warmup, "statistic": "median of all timed calls",
                      "loop": "time.perf_counter around run()/forward, same Python loop for every engine",
                      "heaviest_nodes": f"parity profile --runs 3 --warmup 1 --threads {max(threads)}, top 3 by_node"},
           "load_average": os.getloadavg(), "results": results,
           "geomean_refrt_over_ort": {str(t): g for t, g in gm.items()},
           "geomean_refrt_over_eager": {str(t): g for t, g in gm_eager.items()}}
    path = Path(a.json) if a.json else Path(a.out) / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    print(f"json: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
