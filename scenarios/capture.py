"""Capture scenarios with torch.export into case folders (the ONNX backend-test layout).

    python -m scenarios.capture --out DIR [--filter REGEX] [--modes strict,nonstrict] [--force] [--jobs N]
                                [--keep-unsupported] [--parity BUILD/parity]
                                [--scenarios FILE_OR_DIR[:NAME]]... [--with-builtin] [--shard K/N]

Per case and mode, DIR/<case>/<mode>/ receives model.pt2 (torch.export.save, with the user's Dim names
in extra/parity_dims.json), test_data_set_<k>/input_<i>.pb and output_<i>.pb (eager outputs, bare
TensorProto), for a case with `fp64_reference` test_data_set_<k>/fp64/output_<i>.pb (the same eager run in
float64, scenarios/fp64.py), and case.json, written last. One JSON line per (case, mode) goes to stdout; everything else
goes to stderr. Exit 0 even when a capture fails (that is a result); 2 for usage errors.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import multiprocessing
import os
import re
import shutil
import sys
import time
import traceback
from pathlib import Path

import onnx.numpy_helper
import torch
import torch.utils._pytree as pytree

from . import cpu_branches, fp64, state, subclasses, suite
from .registry import Case

MODES = ("strict", "nonstrict", "decomposed")
# The project's matrix checks all three modes (commit "Matrix and capture default to strict, non-strict
# and decomposed"); `parity matrix` passes --modes explicitly anyway.
DEFAULT_MODES = MODES
SCHEMA_VERSION = 1


def export(case: Case, mode: str, args: tuple, kwargs: dict, nonstrict=None) -> torch.export.ExportedProgram:
    """The program of one mode; `nonstrict`, the same case's non-strict program when already exported, is
    what the decomposed mode decomposes (the same program either way, one export less)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    if mode == "decomposed" and nonstrict is not None:
        return nonstrict.run_decompositions()
    ep = torch.export.export(subclasses.unwrap(case.module()), args, kwargs=kwargs, dynamic_shapes=case.shapes(),
                             strict=(mode == "strict"))
    return ep.run_decompositions() if mode == "decomposed" else ep


def _spec_tree(module, args: tuple, kwargs: dict, dynamic_shapes):
    """dynamic_shapes rearranged as (args_specs, kwargs_specs), the structure of (args, kwargs).

    torch.export pairs a tuple/list spec with the *signature-ordered* bound arguments and a dict spec with
    parameter names, while the program's inputs follow (args, kwargs) flattening order."""
    if dynamic_shapes is None:
        return None
    if isinstance(dynamic_shapes, (tuple, list)) and not kwargs:
        return tuple(dynamic_shapes), {}
    names = list(inspect.signature(module.forward).bind(*args, **kwargs).arguments)
    if isinstance(dynamic_shapes, dict):
        by_name = dict(dynamic_shapes)
    else:
        by_name = dict(zip(names, dynamic_shapes))
    return tuple(by_name.get(n) for n in names[:len(args)]), {k: by_name.get(k) for k in kwargs}


def _spec_at(spec, path):
    """Follows a pytree key path through the spec tree; None once the spec stops (a static input)."""
    for key in path:
        if spec is None:
            return None
        if hasattr(key, "idx"):
            spec = spec[key.idx] if key.idx < len(spec) else None
        elif hasattr(key, "key"):
            spec = spec.get(key.key)
        else:
            spec = getattr(spec, key.name, None)
    return spec


def dim_names(ep: torch.export.ExportedProgram, module, args: tuple, kwargs: dict, dynamic_shapes):
    """Maps each symbol of the user inputs' sizes ("s27") to the user's Dim name ("batch").

    The .pt2 keeps only symbols: the Dim names live nowhere in the ExportedProgram, so they are recovered
    by walking the flattened inputs next to the flattened spec (user_inputs follow the same order)."""
    leaves = pytree.tree_flatten_with_path((args, kwargs))[0]
    user_inputs = list(ep.graph_signature.user_inputs)
    if len(leaves) != len(user_inputs):
        raise ValueError(f"{len(leaves)} flattened inputs but {len(user_inputs)} user inputs in the program")
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    specs = _spec_tree(module, args, kwargs, dynamic_shapes)
    mapping, dims = {}, []
    for index, ((path, _), name) in enumerate(zip(leaves, user_inputs)):
        if name not in placeholders:  # a constant (int, float, bool, None) specialised into the program
            continue
        spec = _spec_at(specs, path)
        val = placeholders[name].meta.get("val")
        if spec is None or not isinstance(val, torch.Tensor):
            continue
        for axis, dim in (spec.items() if isinstance(spec, dict) else enumerate(spec)):
            dim_name = getattr(dim, "__name__", None)  # Dim has one; Dim.AUTO/STATIC hints do not
            if not dim_name or not isinstance(axis, int) or not 0 <= axis < val.dim():
                continue  # a hint, or a spec shaped otherwise than this tensor (e.g. forward(*tensors))
            size = val.shape[axis]
            if not isinstance(size, torch.SymInt) or not size.node.expr.is_Symbol:
                continue  # static, hinted or derived (e.g. 2*batch): the symbol keeps its own name
            symbol = str(size.node.expr)
            mapping[symbol] = dim_name
            dims.append({"input": index, "input_name": name, "axis": axis, "name": dim_name, "symbol": symbol})
    return mapping, dims


def _save_tensor(path: Path, value, name: str):
    if isinstance(value, (bool, int, float)):  # a symbolic scalar input: a 0-d tensor in the case folder
        value = torch.tensor(value, dtype=torch.bool if isinstance(value, bool) else
                             torch.int64 if isinstance(value, int) else torch.float64)
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{path.name}: {type(value).__name__} is not a tensor; case folders hold tensors only")
    path.write_bytes(tensor_proto(value, name).SerializeToString())


def tensor_proto(value: torch.Tensor, name: str) -> onnx.TensorProto:
    """The tensor as a TensorProto, bit for bit (numpy has no bfloat16: its bits go in as raw data). A complex
    tensor is saved as the exporter's graphs carry it (docs/complex.md): float32 / float64 (real, imaginary)
    pairs in a trailing dim of 2, its doc_string naming the complex dtype; case.json lists the complex inputs
    and outputs."""
    value = value.detach().cpu().resolve_conj().resolve_neg().contiguous()  # the values, not a lazy conj bit
    if value.is_complex():
        dtype = str(value.dtype).removeprefix("torch.")
        proto = tensor_proto(torch.view_as_real(value.to(torch.complex64) if dtype == "complex32" else value), name)
        proto.doc_string = f"{dtype} as (real, imaginary) pairs in the last dim"
        return proto
    if value.dtype == torch.bfloat16:
        return onnx.helper.make_tensor(name, onnx.TensorProto.BFLOAT16, list(value.shape),
                                       value.view(torch.int16).numpy().tobytes(), raw=True)
    return onnx.numpy_helper.from_array(value.numpy(), name)


def _version(distribution: str) -> str:
    """An installed distribution's version without importing it (torchao's import is slow), "" when absent."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def cache_key(case: Case) -> dict:
    """What a capture depends on besides this project's capture code: the case's source (its file, the forced
    CPU predicates), torch's version and torchao's (its quantize_ and PT2E paths write the quantized programs).
    A change in any of them captures the case again."""
    path = case.source_file()
    text = Path(path).read_text() if path and Path(path).is_file() else case.name
    if case.cpu_branch:  # what the forced predicates are is part of what the program is
        text += case.cpu_branch + Path(cpu_branches.__file__).read_text()
    return {"source": hashlib.sha256(text.encode()).hexdigest(), "torch": torch.__version__,
            "torchao": _version("torchao")}


def source_hash(case: Case) -> str:
    """The capture cache's key (case.json source_hash): cache_key's parts in one digest."""
    return hashlib.sha256(json.dumps(cache_key(case), sort_keys=True).encode()).hexdigest()


def _write_json_atomic(path: Path, data: dict):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def _first_lines(e: BaseException, count: int = 3, limit: int = 1000) -> str:
    lines = [line.rstrip() for line in str(e).splitlines() if line.strip()][:count]
    return f"{type(e).__name__}: {chr(10).join(lines)}"[:limit]


def _is_cached(case_dir: Path, digest: str, fp64_reference: bool = False) -> bool:
    try:
        old = json.loads((case_dir / "case.json").read_text())
    except (OSError, ValueError):
        return False
    # A case that now asks for float64 references is captured again to get them (and the other way round).
    # Folders captured before eager's final state was recorded (eager_state) are captured again.
    return old.get("source_hash") == digest and old.get("status") == "captured" and \
        (case_dir / "model.pt2").is_file() and ("fp64_outputs" in old) == fp64_reference and \
        old.get("eager_state") is True


def _clear(case_dir: Path):
    """Removes what an earlier capture wrote (not e.g. a verify/ folder), so no stale set survives."""
    for p in [case_dir / "case.json", case_dir / "model.pt2", case_dir / "official", *case_dir.glob("test_data_set_*")]:
        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


def python_op_modules(ep) -> list[str]:
    """The Python modules that define the program's custom ops with torch.library.custom_op (transformers'
    grouped_mm_fallback: transformers.integrations.moe): another process must import them before
    torch.export.load can resolve those ops (scenarios.peers does)."""
    from torch._library.custom_ops import OPDEFS
    modules = set()
    for module in ep.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else []:
            target = node.target
            if isinstance(target, torch._ops.OpOverload):
                opdef = OPDEFS.get(f"{target.namespace}::{target._opname}")
                init = getattr(opdef, "_init_fn", None)
                if init is not None and getattr(init, "__module__", None):
                    modules.add(init.__module__)
    return sorted(modules)


def capture_case(case: Case, mode: str, out_dir, force: bool = False, programs: dict | None = None,
                 decompose_with: str | None = None) -> dict:
    """Captures one (case, mode); returns the stdout line's dict. Never raises for a failed export.
    `programs` (mode -> ExportedProgram) carries the non-strict program over to the decomposed mode.
    `decompose_with` (a parity binary): the ops it cannot translate are re-decomposed with torch's own
    decompositions before the archive is final (case.json lists them as `decomposed_ops`)."""
    start = time.perf_counter()
    case_dir = Path(out_dir) / case.name / mode
    digest = source_hash(case)

    def line(status, error=None):
        return {"case": case.name, "mode": mode, "status": status, "dir": str(case_dir),
                "seconds": round(time.perf_counter() - start, 3), "error": error}

    if not force and _is_cached(case_dir, digest, case.fp64_reference):
        return line("cached")
    case_dir.mkdir(parents=True, exist_ok=True)
    _clear(case_dir)
    info = {"schema_version": SCHEMA_VERSION, "name": case.name, "mode": mode, "status": "captured",
            "error": None, "torch_version": torch.__version__, "description": case.description,
            "input_names": [], "output_names": [], "input_sets": 0, "dynamic_dims": [], "source_hash": digest}
    if case.cpu_branch:
        info["cpu_branch"] = case.cpu_branch
    # The export and the eager reference both run under the case's forced CPU predicates (cpu_branches.py).
    try:
        with cpu_branches.forced(case.cpu_branch):
            _capture_into(case, mode, case_dir, info, programs, decompose_with)
    except Exception as e:  # a case torch.export cannot capture is a result, not the end of the run
        traceback.print_exc(file=sys.stderr)
        _clear(case_dir)
        info.update(status="capture_failed", error=_first_lines(e))
    info["capture_seconds"] = round(time.perf_counter() - start, 3)
    _write_json_atomic(case_dir / "case.json", info)
    return line(info["status"], info["error"])


def _capture_into(case: Case, mode: str, case_dir: Path, info: dict, programs: dict | None,
                  decompose_with: str | None):
    """capture_case's work: the program, its archive and the eager input/output sets, into `info`."""
    info["torch_libraries"] = case.torch_libraries() if case.torch_libraries else []
    info["export_plugins"] = case.export_plugins() if case.export_plugins else []
    examples = case.examples()
    info["input_sets"] = len(examples)
    args0, kwargs0 = examples[0]
    ep = export(case, mode, args0, kwargs0, (programs or {}).get("nonstrict"))
    if programs is not None:
        programs[mode] = ep
    mapping, info["dynamic_dims"] = dim_names(ep, case.module(), args0, kwargs0, case.shapes())
    torch.export.save(ep, str(case_dir / "model.pt2"), extra_files={"parity_dims.json": json.dumps(mapping)})
    info["python_op_modules"] = python_op_modules(ep)
    if decompose_with:
        _decompose_unsupported(case_dir / "model.pt2", decompose_with, info)
    # Constant user inputs (Python scalars and None specialised at capture) are not program inputs.
    user_inputs = list(ep.graph_signature.user_inputs)
    info["input_names"] = [n for n in user_inputs if isinstance(n, str)]
    info["output_names"] = output_names = [str(o) for o in ep.graph_signature.user_outputs]
    scales = output_quant_scales(ep)
    if any(scales):
        info["output_quant_scales"] = scales
    fp64_outputs: list[int] = []  # per set, the float64 outputs saved (scenarios/fp64.py)
    for k, (args, kwargs) in enumerate(examples):
        # A fresh module per set: the oracle is eager PyTorch from the state the program was exported
        # in (a module that mutates a buffer would otherwise carry state from one set to the next).
        eager = case.module()
        set_dir = case_dir / f"test_data_set_{k}"
        set_dir.mkdir()
        leaves = pytree.tree_leaves((args, kwargs))
        program_inputs = [(leaf, name) for leaf, name in zip(leaves, user_inputs) if isinstance(name, str)]
        for i, (leaf, name) in enumerate(program_inputs):
            _save_tensor(set_dir / f"input_{i}.pb", leaf, name)
        complex_inputs = [i for i, (leaf, _) in enumerate(program_inputs) if _is_complex(leaf)]
        # The float64 twin is copied before the float32 run, which may mutate the module or its inputs.
        twin = fp64.prepare(eager, args, kwargs) if case.fp64_reference else None
        before = state.before_call(eager, program_inputs)
        with torch.no_grad():
            outputs = pytree.tree_leaves(eager(*args, **kwargs))
        names = output_names if len(output_names) == len(outputs) else [str(i) for i in range(len(outputs))]
        for i, (out, name) in enumerate(zip(outputs, names)):
            _save_tensor(set_dir / f"output_{i}.pb", out, name)
        # The complex inputs and outputs (saved as pairs), by index: what a reader turns back into complex.
        if complex_inputs or any(_is_complex(o) for o in outputs):
            info["complex_inputs"] = {str(i): _complex_name(program_inputs[i][0]) for i in complex_inputs}
            info["complex_outputs"] = {str(i): _complex_name(o) for i, o in enumerate(outputs) if _is_complex(o)}
        # The state eager left behind, the oracle of the mutation outputs (scenarios/state.py).
        for j, (name, value) in enumerate(state.written(before, eager, program_inputs).items()):
            _save_tensor(set_dir / f"state_{j}.pb", value, name)
        info["eager_state"] = True
        if case.fp64_reference:
            saved, why = fp64.run_and_save(twin, set_dir, outputs, names, _save_tensor)
            fp64_outputs.append(saved)
            info["fp64_note"] = info.get("fp64_note") or why or None
    if case.fp64_reference:
        info["fp64_outputs"] = fp64_outputs


def _is_complex(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_complex()


def _complex_name(value: torch.Tensor) -> str:
    return str(value.dtype).removeprefix("torch.")


def output_quant_scales(ep) -> list:
    """Per user output, the constant scale of the dequantize_per_tensor that produces it, else None: the peers
    judge such an output in steps of that scale, as Parity's verify does (verify/src/compare.cc)."""
    producers = {n.name: n for n in ep.graph.nodes if n.op == "call_function"}
    scales = []
    for name in ep.graph_signature.user_outputs:
        node = producers.get(name) if isinstance(name, str) else None
        scale = None
        if node is not None and str(node.target) == "quantized_decomposed.dequantize_per_tensor.default":
            arg = node.kwargs.get("scale", node.args[1] if len(node.args) > 1 else None)
            scale = float(arg) if isinstance(arg, float) else None
        scales.append(scale)
    return scales


def _decompose_unsupported(pt2: Path, parity: str, info: dict):
    """Re-decomposes the ops `parity` cannot translate (case.json: decomposed_ops, and the ops torch has no
    decomposition for: undecomposable_ops). A failure here keeps the program as captured (decompose_error):
    the export then names the op it lacks."""
    from .decompose import decompose, missing_ops
    try:
        keys = missing_ops(pt2, parity)
        if keys:
            lacking = decompose(pt2, pt2, keys)
            info["decomposed_ops"] = [k for k in keys if k not in lacking]
            if lacking:
                info["undecomposable_ops"] = lacking
    except (Exception, SystemExit) as e:  # missing_ops exits when the binary cannot read the program
        info["decompose_error"] = _first_lines(e) if isinstance(e, Exception) else str(e)


def load_extra_scenarios():
    """Imports the file named by PARITY_EXTRA_SCENARIOS, whose cases register themselves: tests add cases
    this way (one torch.export refuses, say) that the normal matrix must not contain."""
    path = os.environ.get("PARITY_EXTRA_SCENARIOS")
    if path:
        spec = importlib.util.spec_from_file_location("parity_extra_scenarios", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.capture", description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--filter", default="", help="regular expression searched in case names")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES), help=f"comma-separated: {', '.join(MODES)}")
    parser.add_argument("--force", action="store_true", help="capture again even when cached")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="cases captured in parallel processes")
    parser.add_argument("--decompose-unsupported", action="store_true",
                        help="(the default) re-decompose the ops `parity` cannot translate with torch's decompositions")
    parser.add_argument("--keep-unsupported", action="store_true",
                        help="keep the ops `parity` cannot translate (its export then names them)")
    default_bin = Path(__file__).resolve().parent.parent / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
    parser.add_argument("--parity", default=os.environ.get("PARITY_BIN", str(default_bin)),
                        help="the parity binary asked which ops it translates (default: $PARITY_BUILD_DIR/parity)")
    # A user's own suites (scenarios/suite.py): instead of the built-in cases, or next to them.
    parser.add_argument("--scenarios", action="append", default=[], metavar="FILE_OR_DIR[:NAME]")
    parser.add_argument("--with-builtin", action="store_true", help="with --scenarios: the built-in cases too")
    parser.add_argument("--shard", default="", metavar="K/N", help="only the K-th of N round-robin (case, mode) shares")
    parser.add_argument("--official", choices=OFFICIAL_CHOICES, default="none",
                        help="also run the official exporter (and ONNX Runtime on its model) on the captured program "
                        "of one mode per case (non-strict, else strict, else decomposed) or of every mode, in the "
                        "same process, and keep its record in the case folder (scenarios/peers.py)")
    # `parity matrix --ray`: the (case) units as Ray tasks (python/parity/_ray_units.py), this process the driver.
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="capture on Ray: the cluster at ADDRESS, else a Ray started here")
    parser.add_argument("--ray-shared", action="store_true", help="with --ray: every node sees --out at its path")
    parser.add_argument("--ray-store", default=None, metavar="URL",
                        help="with --ray: case folders travel through this fsspec URL, not Ray's object store")
    parser.add_argument("--ray-retries", type=int, default=2, metavar="N")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        parser.error(f"unknown mode(s) {', '.join(bad) or '(none given)'} (known: {', '.join(MODES)})")
    try:
        pattern = re.compile(args.filter)
    except re.error as e:
        parser.error(f"--filter {args.filter!r} is not a regular expression: {e}")
    load_extra_scenarios()
    try:
        shard = suite.parse_shard(args.shard)
        with contextlib.redirect_stdout(sys.stderr):
            chosen = suite.select_cases(args.scenarios, args.with_builtin or not args.scenarios)
    except suite.SuiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    cases = [c for c in chosen if pattern.search(c.name)]
    if not cases:
        print(f"error: no scenario matches --filter {args.filter!r}", file=sys.stderr)
        return 2
    # Non-strict before decomposed, so the decomposed mode reuses its program.
    modes.sort(key=lambda m: 1 if m == "decomposed" else 0)
    # Ops Parity cannot translate yet are re-decomposed by torch unless --keep-unsupported (without the
    # binary there is no one to ask: the program stays as captured).
    decompose_with = None if args.keep_unsupported or not Path(args.parity).is_file() else args.parity
    # A shard keeps its share of the (case, mode) pairs in run order; a case's modes stay one task.
    share = suite.pairs(cases, modes, shard)
    builtin = args.with_builtin or not args.scenarios
    tasks = [(c.name, [m for owner, m in share if owner is c], str(args.out), args.force, decompose_with,
              args.scenarios, builtin, args.official) for c in cases]
    tasks = [t for t in tasks if t[1]]
    # Lines come as cases finish (the longest first, below); "order" is the pair's place in the run, which the
    # matrix restores for its report.
    pairs_in_order = [(t[0], m) for t in tasks for m in t[1]]
    print_lines = functools.partial(_print_lines, order={pair: k for k, pair in enumerate(pairs_in_order)})
    if args.ray is not None:
        # Paths a worker in another folder (or on another node) can follow.
        tasks = [(t[0], t[1], str(Path(t[2]).absolute()), t[3], t[4],
                  [str(Path(s).absolute()) if Path(suite.split_pick(s)[0]).exists() else s for s in t[5]], t[6], t[7])
                 for t in tasks]
        from parity._ray_units import capture_on_ray
        capture_on_ray(f"{__package__}.capture", _longest_first(tasks, cases), args.ray, args.ray_shared,
                       args.ray_store, args.ray_retries, print_lines)
    elif args.jobs > 1 and len(tasks) > 1:
        # Spawned workers (torch does not fork safely); each re-imports the cases, extra scenarios included.
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(min(args.jobs, len(tasks)), initializer=load_extra_scenarios) as pool:
            for results in pool.imap_unordered(_capture_modes, _longest_first(tasks, cases)):
                print_lines(results)
    else:
        for task in tasks:
            print_lines(_capture_modes(task))
    return 0


# Case files whose models take seconds to capture (transformers models, torchao LLMs), not a fraction of one.
_HEAVY_SOURCES = {"models_text.py", "models_vision.py", "quantized.py", "quantized_ao.py", "half.py"}


def _expected_seconds(task, case: Case | None) -> float:
    """A task's capture time as its last capture measured it (case.json), else 10 s per mode for a model from a
    heavy case file and 1 s per mode for the rest."""
    name, modes, out = task[0], task[1], task[2]
    measured = 0.0
    for mode in modes:
        try:
            measured += float(json.loads((Path(out) / name / mode / "case.json").read_text())["capture_seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    if measured:
        return measured
    heavy = case is not None and Path(case.source_file()).name in _HEAVY_SOURCES
    return (10.0 if heavy else 1.0) * len(modes)


def _longest_first(tasks: list, cases: list) -> list:
    """The tasks, longest expected first: a long case started last would leave the other workers idle at the end."""
    by_name = {c.name: c for c in cases}
    return sorted(tasks, key=lambda t: -_expected_seconds(t, by_name.get(t[0])))


def _capture_modes(task) -> list[dict]:
    """Every requested mode of one case, in one process (a worker's unit of work)."""
    name, modes, out, force, decompose_with, scenarios, builtin, official = task
    case = next(c for c in suite.select_cases(scenarios, builtin) if c.name == name)  # suite files load once
    programs: dict = {}
    results = []
    with contextlib.redirect_stdout(sys.stderr):  # stray prints must not break the JSON lines
        for mode in modes:
            results.append(capture_case(case, mode, out, force, programs, decompose_with))
        for result in official_modes(results, official):
            add_official(result, programs.get(result["mode"]))
        programs.clear()
    return results


OFFICIAL_CHOICES = ("none", "one", "all")
# The mode whose capture the official exporter gets when it runs on one mode per case: the one
# torch.onnx.export(model, dynamo=True) would capture itself (non-strict, else strict), else any captured. The same
# rule as the matrix's (verify/src/matrix.cc official_modes), over the same pairs: a case's pairs of this run.
_OFFICIAL_RANK = {"nonstrict": 0, "strict": 1, "decomposed": 2}


def official_modes(results: list[dict], official: str) -> list[dict]:
    """The capture lines (of one case) whose program the official exporter runs on."""
    captured = [r for r in results if r["status"] != "capture_failed"]
    if official == "all" or not captured:
        return captured if official == "all" else []
    if official == "one":
        return [min(captured, key=lambda r: _OFFICIAL_RANK.get(r["mode"], 3))]
    return []


def add_official(result: dict, program=None):
    """The official exporter on the program just captured (or cached), in this process: torch, the case's
    libraries and the exporter are imported already. Its record goes into the case folder (peers.py reads it
    there in the matrix's peers phase); the capture line says how long it took and whether it was cached.
    `program`: the mode's ExportedProgram in memory, given to the exporter unless the archive on disk differs
    from it (ops re-decomposed for `parity`); else the exporter gets the archive, loaded."""
    from . import peers
    start = time.perf_counter()
    try:
        if program is not None and _archive_rewritten(Path(result["dir"])):
            program = None
        how, record = peers.official_into_case(Path(result["dir"]), program)
        result["official"] = f"{how}, export {record.get('export')}"
    except Exception as e:  # the peers phase runs it again and reports the error in its column
        traceback.print_exc(file=sys.stderr)
        result["official"] = f"error: {_first_lines(e, 1, 300)}"
    result["official_seconds"] = round(time.perf_counter() - start, 3)


def _archive_rewritten(case_dir: Path) -> bool:
    """Whether model.pt2 is no longer the program export() returned (_decompose_unsupported rewrote it)."""
    try:
        return bool(json.loads((case_dir / "case.json").read_text()).get("decomposed_ops"))
    except (OSError, ValueError):
        return True


def _print_lines(results: list[dict], order: dict | None = None):
    for result in results:
        if order is not None and (result.get("case"), result.get("mode")) in order:
            result["order"] = order[(result["case"], result["mode"])]
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
