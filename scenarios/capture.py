"""Capture scenarios with torch.export into case folders (the ONNX backend-test layout).

    python -m scenarios.capture --out DIR [--filter REGEX] [--modes strict,nonstrict] [--force]

Per case and mode, DIR/<case>/<mode>/ receives model.pt2 (torch.export.save, with the user's Dim names
in extra/parity_dims.json), test_data_set_<k>/input_<i>.pb and output_<i>.pb (eager outputs, bare
TensorProto) and case.json, written last. One JSON line per (case, mode) goes to stdout.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

import onnx.numpy_helper
import torch
import torch.utils._pytree as pytree

from .registry import Case, all_cases

MODES = ("strict", "nonstrict", "decomposed")
DEFAULT_MODES = MODES


def export(case: Case, mode: str) -> torch.export.ExportedProgram:
    args = case.inputs()[0]
    ep = torch.export.export(case.module(), args, dynamic_shapes=case.dynamic_shapes(), strict=(mode == "strict"))
    return ep.run_decompositions() if mode == "decomposed" else ep


def _per_tensor_specs(arg, spec, out: list):
    """Walks args and dynamic_shapes together; appends each leaf's own spec in pytree order."""
    if isinstance(arg, (list, tuple)):
        for i, a in enumerate(arg):
            _per_tensor_specs(a, None if spec is None else spec[i], out)
    elif isinstance(arg, dict):
        for k, a in arg.items():
            _per_tensor_specs(a, None if spec is None else spec.get(k), out)
    else:
        out.append(spec)


def dim_names(ep: torch.export.ExportedProgram, args: tuple, dynamic_shapes) -> tuple[dict, list]:
    """Maps each symbol of the user inputs' sizes ("s77") to the user's Dim name ("batch")."""
    specs: list = []
    _per_tensor_specs(args, dynamic_shapes, specs)
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    mapping, dims = {}, []
    for index, (name, spec) in enumerate(zip(ep.graph_signature.user_inputs, specs)):
        val = placeholders[name].meta.get("val")
        if not isinstance(val, torch.Tensor) or spec is None:
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for axis, dim in items:
            if dim is None:
                continue
            size = val.shape[axis]
            if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                symbol = str(size.node.expr)
                dim_name = getattr(dim, "__name__", str(dim))
                mapping[symbol] = dim_name
                dims.append({"input": index, "input_name": name, "axis": axis, "name": dim_name, "symbol": symbol})
    return mapping, dims


def _save_tensor(path: Path, tensor: torch.Tensor, name: str):
    proto = onnx.numpy_helper.from_array(tensor.detach().contiguous().numpy(), name)
    path.write_bytes(proto.SerializeToString())


def source_hash(case: Case) -> str:
    text = Path(case.source_file()).read_text() if case.source_file() else case.name
    return hashlib.sha256((text + torch.__version__).encode()).hexdigest()


def _write_json_atomic(path: Path, data: dict):
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def capture_case(case: Case, mode: str, out_dir: Path, force: bool = False) -> dict:
    start = time.perf_counter()
    case_dir = out_dir / case.name / mode
    case_json = case_dir / "case.json"
    digest = source_hash(case)
    if not force and case_json.exists() and (case_dir / "model.pt2").exists():
        try:
            old = json.loads(case_json.read_text())
            if old.get("source_hash") == digest and old.get("status") == "captured":
                return {"case": case.name, "mode": mode, "status": "cached", "dir": str(case_dir),
                        "seconds": time.perf_counter() - start, "error": None}
        except ValueError:
            pass
    case_dir.mkdir(parents=True, exist_ok=True)
    case_json.unlink(missing_ok=True)
    info = {"schema_version": 1, "name": case.name, "mode": mode, "status": "captured", "error": None,
            "torch_version": torch.__version__, "description": case.description, "source_hash": digest}
    try:
        ep = export(case, mode)
        input_sets = case.inputs()
        mapping, dims = dim_names(ep, input_sets[0], case.dynamic_shapes())
        torch.export.save(ep, str(case_dir / "model.pt2"), extra_files={"parity_dims.json": json.dumps(mapping)})
        module = case.module()
        input_names = list(ep.graph_signature.user_inputs)
        output_names = [str(o) for o in ep.graph_signature.user_outputs]
        for k, args in enumerate(input_sets):
            set_dir = case_dir / f"test_data_set_{k}"
            set_dir.mkdir(exist_ok=True)
            leaves = pytree.tree_leaves(args)
            for i, (leaf, name) in enumerate(zip(leaves, input_names)):
                _save_tensor(set_dir / f"input_{i}.pb", leaf, name)
            with torch.no_grad():
                outputs = pytree.tree_leaves(module(*args))
            for i, out in enumerate(outputs):
                _save_tensor(set_dir / f"output_{i}.pb", out, output_names[i] if i < len(output_names) else str(i))
        info.update(input_names=input_names, output_names=output_names, input_sets=len(input_sets),
                    dynamic_dims=dims)
    except Exception as e:  # a case torch.export cannot capture is a result, not the end of the run
        info.update(status="capture_failed", error=f"{type(e).__name__}: {str(e).strip()[:2000]}")
        traceback.print_exc(file=sys.stderr)
    info["capture_seconds"] = time.perf_counter() - start
    _write_json_atomic(case_json, info)
    return {"case": case.name, "mode": mode, "status": info["status"], "dir": str(case_dir),
            "seconds": info["capture_seconds"], "error": info["error"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.capture", description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--filter", default="", help="regular expression on case names")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES))
    parser.add_argument("--force", action="store_true", help="capture again even when cached")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            parser.error(f"unknown mode {m!r} (known: {', '.join(MODES)})")
    cases = [c for c in all_cases() if re.search(args.filter, c.name)]
    if not cases:
        print(f"error: no scenario matches --filter {args.filter!r}", file=sys.stderr)
        return 2
    for case in cases:
        for mode in modes:
            print(json.dumps(capture_case(case, mode, args.out, args.force)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
