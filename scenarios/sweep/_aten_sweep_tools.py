"""The ATen schema sweep's two commands (aten_schema_sweep.py runs them with itself as `sweep`):

- map: which OpInfo samples reach which selected overloads, written to aten_schema_sweep.json;
- summary REPORT.json [--md]: per overload, what the matrix found in each mode, Parity beside the official
  exporter: pass, pass with torch's decomposition of an op Parity lacks (named), unsupported (the op
  named), fail (values), error, capture_failed.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import logging
import re
import sys
import time
import warnings
from pathlib import Path

import torch

MODES = ("strict", "nonstrict", "decomposed")


# ---- map ------------------------------------------------------------------------------------------------

def _graph_ops(ep) -> set[str]:
    ops = set()
    for module in ep.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else []:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
                ops.add(str(node.target))
    return ops


def _export(sweep, module, tensors, dynamic: bool):
    # forward(tensors): one argument, the tuple of tensors.
    shapes = (tuple({d: torch.export.Dim.AUTO for d in range(t.dim())} for t in tensors),) if dynamic else None
    return torch.export.export(module, (tuple(tensors),), dynamic_shapes=shapes, strict=False)


def _is_random(module, tensors) -> bool:
    """The OpInfo draws from the RNG (bernoulli, dropout, ...): eager cannot be the oracle of a second run."""
    outs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        with torch.no_grad():
            leaves = torch.utils._pytree.tree_leaves(module(tuple(tensors)))
            outs.append([x for x in leaves if isinstance(x, torch.Tensor)])
    return any(not torch.equal(a, b) for a, b in zip(*outs) if a.shape == b.shape and not a.is_complex()) or \
        any(a.shape != b.shape for a, b in zip(*outs))


def _overload(name: str):
    """'aten.view.default' -> torch.ops.aten.view.default."""
    _, packet, overload = name.split(".")
    return getattr(getattr(torch.ops.aten, packet), overload)


def _why_not(op) -> str:
    """Why no OpInfo sample's program holds the selected overload `op` (docs/aten-sweep.md counts these)."""
    schema = op._schema
    if schema.is_mutable:
        return "mutates an argument (in-place or out=): torch.export functionalises it away"
    if torch.Tag.nondeterministic_seeded in op.tags:
        return "random: its program draws from the RNG, and eager is no oracle of that"
    if not any("Tensor" in str(x.type) for x in list(schema.arguments) + list(schema.returns)):
        return "takes and returns no tensor (a TorchScript scalar or list op): no exported program holds it"
    return "no OpInfo sample's program holds it"


def _score(overload: str, info, in_nonstrict: bool, ops: set[str]):
    """Lower is better: reached before decomposition, an OpInfo named like the op, a program of few ops."""
    opname = overload.split(".")[1]
    named = opname in (info.name, getattr(info, "aten_name", None), info.name.split(".")[-1])
    return (0 if in_nonstrict else 1, 0 if named else 1, len(ops), info.name, info.variant_test_name)


class _Recorder(torch.utils._python_dispatch.TorchDispatchMode):
    """The ATen overloads an eager call dispatches (composite ops arrive decomposed: name matching adds them)."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(str(func))
        return func(*args, **(kwargs or {}))


def _scan(sweep, op_db, pattern, selected, skipped):
    """Per OpInfo sample that eager runs, deterministically: (info, dtype, index, sample, dispatched ops)."""
    out = []
    for info in op_db:
        if not pattern.search(info.name):
            continue
        dtype = sweep._dtype(info)
        if dtype is None:
            skipped[info.name] = "no float32, int64 or bool CPU kernel"
            continue
        try:
            samples = list(enumerate(sweep._samples(info, dtype, 4 * sweep.SCAN)))
        except Exception as e:  # noqa: BLE001
            skipped[info.name] = f"its samples cannot be made: {type(e).__name__}"
            continue
        # SCAN of the first 4 x SCAN samples, those with a tensor of two or more elements first (nonzero's
        # first four samples are 0-d: their values cannot move a size).
        samples.sort(key=lambda s: (all(t.numel() < 2 for t in sweep._tensors([s[1]])), s[0]))
        for index, sample in sorted(samples[:sweep.SCAN], key=lambda s: s[0]):
            module, tensors = sweep.OpProgram(info.op, [sample]), sweep._tensors([sample])
            recorder = _Recorder()
            try:
                if _is_random(module, tensors):
                    # Its earlier samples too (empty, new_empty, empty_strided: uninitialised memory that
                    # happened to repeat once): eager is no oracle of any of them.
                    skipped[info.name] = "random: its output depends on the RNG"
                    out[:] = [o for o in out if o[0] is not info]
                    break
                with recorder, torch.no_grad():
                    module(tuple(tensors))
            except Exception:  # noqa: BLE001 - eager refuses the sample: not a program
                continue
            out.append((info, dtype, index, sample, recorder.ops))
    return out


def build_map(sweep, limit: str = "") -> dict:
    """Eager dispatch traces pick the samples worth exporting: those of an OpInfo named like a selected op,
    and, per selected overload dispatched, the samples of the two OpInfos that dispatch the fewest ops. Each
    is exported (non-strict, Dim.AUTO; static when that fails) and decomposed; the graphs decide."""
    from torch.testing._internal.common_methods_invocations import op_db

    selected = sweep.selected_overloads()
    packets = {ov.split(".")[1] for ov in selected}
    rows = {ov: {"reasons": why} for ov, why in selected.items()}
    skipped = {}
    start = time.perf_counter()
    scanned = _scan(sweep, op_db, re.compile(limit), selected, skipped)
    print(f"  {len(scanned)} samples run in eager, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    fewest = collections.defaultdict(dict)  # overload -> OpInfo key -> fewest dispatched ops
    for info, _, _, _, ops in scanned:
        key = (info.name, info.variant_test_name)
        for ov in ops & selected.keys():
            fewest[ov][key] = min(fewest[ov].get(key, 10**6), len(ops))
    chosen = {k for by in fewest.values() for k in sorted(by, key=by.get)[:2]}
    found = collections.defaultdict(list)  # overload -> [(score, name, variant, dtype, index, dynamic)]
    exported = 0
    for info, dtype, index, sample, _ in scanned:
        named = {info.name.split(".")[-1], getattr(info, "aten_name", None)} & packets
        if not named and (info.name, info.variant_test_name) not in chosen:
            continue
        module, tensors = sweep.OpProgram(info.op, [sample]), sweep._tensors([sample])
        # Samples of scalars and empty tensors only are taken last: their values cannot move a size.
        small = all(t.numel() < 2 for t in tensors)
        ep, dynamic = None, True
        for dynamic in (True, False):
            try:
                ep = _export(sweep, module, tensors, dynamic)
                break
            except Exception:  # noqa: BLE001 - torch.export refuses: try static, then give up
                ep = None
        exported += 1
        if ep is None:
            continue
        nonstrict = _graph_ops(ep)
        try:
            decomposed = _graph_ops(ep.run_decompositions())
        except Exception:  # noqa: BLE001
            decomposed = set()
        # OpInfo seeds its random factories (wrapper_set_seed), so eager repeats itself; the program's draw
        # is still the RNG's, which no ONNX runtime reproduces: eager is no oracle of such a program.
        if any(torch.Tag.nondeterministic_seeded in _overload(op).tags for op in nonstrict | decomposed):
            skipped.setdefault(info.name, "random: its program draws from the RNG")
            continue
        for ov in (nonstrict | decomposed) & selected.keys():
            found[ov].append((_score(ov, info, ov in nonstrict, nonstrict), info.name, info.variant_test_name,
                              str(dtype).split(".")[-1], index, dynamic, small))
        if exported % 50 == 0:
            print(f"  {exported} samples exported, {len(found)} overloads reached, "
                  f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    for ov, row in rows.items():
        hits = sorted(found.get(ov, []))
        if not hits:
            row["opinfo"] = None
            row["why_not"] = _why_not(_overload(ov))
            continue
        _, name, variant, dtype = hits[0][:4]
        mine = sorted((h for h in hits if (h[1], h[2]) == (name, variant)), key=lambda h: (h[6], h[4]))
        mine = sorted(mine[:sweep.SAMPLES], key=lambda h: h[4])
        row.update(opinfo=name, variant=variant, dtype=dtype, samples=[h[4] for h in mine],
                   dynamic=all(h[5] for h in mine))
    print(f"  {exported} samples exported in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return {"torch_version": torch.__version__, "samples_per_opinfo": sweep.SCAN,
            "skipped_opinfos": dict(sorted(skipped.items())), "overloads": dict(sorted(rows.items()))}


# ---- summary --------------------------------------------------------------------------------------------

_UNSUPPORTED_OP = re.compile(r"^\s*([\w:.]+) x\d+", re.M)  # the exporter's list of ops it lacks


def _verdict(entry: dict, decomposed: list[str]) -> tuple[str, str]:
    """(class, detail) of Parity's result for one (case, mode): pass, pass_decomposed (torch re-decomposed an
    op Parity lacks), unsupported (the ops named), export_error (the exporter refused: its message),
    capture_failed (torch.export's message), else the matrix's status (fail, error, crashed, timeout)."""
    status, error = entry.get("status"), entry.get("error") or ""
    # Without the stage's file path (a run's own folder), so that equal causes read alike.
    first = error.strip().splitlines()[0] if error.strip() else ""
    first = re.sub(r"^(export|refrt): \S+\.(pt2|onnx): ", "", first)[:240]
    if status in ("pass", "xpass"):
        return ("pass_decomposed", "torch decomposed " + ", ".join(decomposed)) if decomposed else ("pass", "")
    if status == "capture_failed":
        return "capture_failed", first
    if "unsupported ATen operator" in error:
        return "unsupported", ", ".join(_UNSUPPORTED_OP.findall(error)) or first
    if entry.get("stage") == "export" or entry.get("export") == "error":
        return "export_error", first
    return status or "?", first


def _official(entry: dict) -> str:
    official = (entry.get("peers") or {}).get("official") or {}
    if official.get("export") == "error":
        return "export_failed"
    if official.get("export") in (None, "not_run"):
        return "not_run"
    return (official.get("ort") or {}).get("status", "?") if isinstance(official.get("ort"), dict) \
        else str(official.get("ort", "?"))


def _decomposed_ops(report: Path, entry: dict) -> list[str]:
    """The ops capture re-decomposed for this (case, mode) (case.json beside the report's cases/)."""
    case_json = report.parent / "cases" / entry["case"] / entry["mode"] / "case.json"
    try:
        return json.loads(case_json.read_text()).get("decomposed_ops") or []
    except (OSError, ValueError):
        return []


def summarize(report_paths: list[Path], table: dict) -> dict:
    """One summary over the reports of a run's shards (each beside its cases/ folder)."""
    by_case = {}
    names = {ov.replace(".", "_"): ov for ov in table["overloads"]}
    entries = [(p, e) for p in report_paths for e in json.loads(p.read_text()).get("cases", [])]
    for report_path, entry in entries:
        ov = names.get(entry["case"], entry["case"])
        cls, detail = _verdict(entry, _decomposed_ops(report_path, entry))
        by_case.setdefault(ov, {})[entry["mode"]] = {"parity": cls, "detail": detail, "official": _official(entry)}
    captured = [(ov, m, r) for ov, modes in by_case.items() for m, r in modes.items()
                if r["parity"] != "capture_failed"]
    ours = sum(r["parity"] in ("pass", "pass_decomposed") for _, _, r in captured)
    theirs_run = [r for _, _, r in captured if r["official"] != "not_run"]
    theirs = sum(r["official"] == "pass" for r in theirs_run)
    return {"overloads": by_case, "pairs": sum(len(m) for m in by_case.values()), "captured": len(captured),
            "parity_pass": ours, "parity_native": sum(r["parity"] == "pass" for _, _, r in captured),
            "official_run": len(theirs_run), "official_pass": theirs,
            "overloads_captured": len({ov for ov, _, _ in captured})}


def print_summary(s: dict, md: bool, out=sys.stdout):
    pct = lambda a, b: f"{100.0 * a / b:.1f} %" if b else "-"
    print(f"(overload, mode) pairs {s['pairs']}, captured {s['captured']} in {s['overloads_captured']} overloads; "
          f"Parity passes {s['parity_pass']} ({pct(s['parity_pass'], s['captured'])}; without torch's "
          f"re-decomposition {s['parity_native']}), the official exporter {s['official_pass']} of "
          f"{s['official_run']} it ran ({pct(s['official_pass'], s['official_run'])})", file=out)
    if md:
        print("\n| overload | mode | Parity | detail | official |\n|---|---|---|---|---|", file=out)
    for ov in sorted(s["overloads"]):
        for mode in MODES:
            r = s["overloads"][ov].get(mode)
            if r is None:
                continue
            detail = r["detail"].replace("|", "\\|")
            if md:
                print(f"| `{ov}` | {mode} | {r['parity']} | {detail} | {r['official']} |", file=out)
            else:
                print(f"{ov:45s} {mode:10s} {r['parity']:15s} official={r['official']:13s} {detail}", file=out)
    print("\nParity's failures by class:", file=out)
    groups = collections.defaultdict(list)
    for ov, modes in s["overloads"].items():
        for mode, r in modes.items():
            if r["parity"] not in ("pass", "pass_decomposed"):
                groups[(r["parity"], r["detail"][:120])].append(f"{ov}/{mode}")
    for (cls, detail), pairs in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        print(f"- {cls} ({len(pairs)}): {detail}: {', '.join(sorted(pairs))}", file=out)


def main(sweep, argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python scenarios/sweep/aten_schema_sweep.py")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("map", help=f"rebuild {sweep.TABLE.name} from the installed torch's OpInfos")
    m.add_argument("--opinfo", default="", help="only OpInfos whose name matches this regex (a trial; not written)")
    s = sub.add_parser("summary", help="per overload and mode: Parity's class beside the official exporter")
    s.add_argument("reports", type=Path, nargs="+", help="report.json of a run, or of each of its shards")
    s.add_argument("--md", action="store_true", help="a markdown table")
    s.add_argument("--json", action="store_true", help="the summary as JSON")
    args = parser.parse_args(argv)
    if args.command == "map":
        warnings.filterwarnings("ignore")
        logging.getLogger("torch").setLevel(logging.ERROR)  # Dim.AUTO's 0/1 specialisation notes, per sample
        with contextlib.redirect_stdout(io.StringIO()):
            table = build_map(sweep, args.opinfo)
        reached = {k: v for k, v in table["overloads"].items() if v.get("opinfo")}
        print(f"{len(table['overloads'])} overloads selected, {len(reached)} reached by OpInfo samples")
        if args.opinfo:
            print(json.dumps(reached, indent=1))
        else:
            text = json.dumps(table, indent=1) + "\n"
            sweep.TABLE.write_text(text)
            source = Path(sweep.__file__)
            source.write_text(re.sub(r'^TABLE_DIGEST = ".*"$', f'TABLE_DIGEST = "{sweep.table_digest(text)}"',
                                     source.read_text(), count=1, flags=re.M))
            print(f"wrote {sweep.TABLE}")
        return 0
    summary = summarize(args.reports, sweep.load_table())
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print_summary(summary, args.md)
    return 0
