"""Peers of one case: the official exporter and ONNX Runtime, as independent judges (never Parity's path).

    python -m scenarios.peers --case-dir CASE/MODE --ours OURS.onnx --out DIR
    python -m scenarios.peers --jobs JOBS.json    # [{"case_dir", "ours", "out"[, "official"]}, ...]

- official: torch.onnx.export(ep, dynamo=True) on the ExportedProgram loaded from CASE/MODE/model.pt2,
  saved as DIR/official.onnx; then ONNX Runtime runs it on every test_data_set and compares with the
  stored eager outputs.
- ours: ONNX Runtime runs OURS.onnx on every set against the eager outputs.
Prints one JSON line per case (the batch form saves torch's start-up per case):
{"case_dir", "official": {"export": "ok"|"error"|"not_run", "onnx", "error", "ort": {...}, "nodes"},
 "ours": {"ort": {...}, "nodes"}}  ("nodes": the model's node count, subgraph bodies included, or null)
("not_run": a job with "official": false, ONNX Runtime on our model only);
each "ort" is {"status": "pass"|"fail"|"error", "max_abs_error", "mismatches", "error"[, "fp64_rule",
"fp64_outputs"]}. Tolerances are the README's (an element fails when |actual - expected| > atol + rtol *
|expected|); a floating output that fails them passes by the fp64 rule of scenarios/fp64.py when the case
has its float64 reference, as in Parity's own comparison (both sides judged alike).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import re
import sys
import traceback
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper

from . import fp64

# The one tolerance table (common/tolerances.json, built into the C++ comparison too), by dtype name
# ("bfloat16" is ml_dtypes' name, which onnx.numpy_helper returns); unlisted dtypes compare exactly.
# An installed package (pip install) carries its copy beside this file.
_TOLERANCES_PLACES = (Path(__file__).resolve().parents[1] / "common" / "tolerances.json",
                      Path(__file__).resolve().parent / "tolerances.json")
_TOLERANCES_JSON = next((p for p in _TOLERANCES_PLACES if p.is_file()), _TOLERANCES_PLACES[0])
TOLERANCES = {name: (row["atol"], row["rtol"])
              for name, row in json.loads(_TOLERANCES_JSON.read_text()).items() if isinstance(row, dict)}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _message(e: BaseException, limit: int = 600) -> str:
    """The exception's first lines, then its innermost cause's (the official exporter wraps the reason, e.g.
    "No ONNX function found for ...", in a generic ConversionError); terminal colours removed."""
    def first(x: BaseException) -> str:
        lines = [line for line in _ANSI.sub("", str(x)).splitlines() if line.strip()][:3]
        return f"{type(x).__name__}: {' '.join(lines)}"

    root = e
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    text = first(e) if root is e else f"{first(root)[:limit // 2]} (in {first(e)})"
    return text[:limit]


def load_pb(path: Path) -> np.ndarray:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return onnx.numpy_helper.to_array(t)


def quant_scales(case_dir: Path) -> list:
    """Per output, the scale of the dequantize that produces it, or None (case.json's output_quant_scales;
    none in a case folder captured before it was recorded)."""
    try:
        return json.loads((case_dir / "case.json").read_text()).get("output_quant_scales") or []
    except (OSError, ValueError):
        return []


def load_sets(case_dir: Path):
    """(name, inputs, eager outputs, float64 outputs or None each) per test_data_set, in order."""
    sets = []
    for d in sorted(case_dir.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        def count(prefix, d=d):
            return len(list(d.glob(f"{prefix}_*.pb")))

        outputs = [load_pb(d / f"output_{i}.pb") for i in range(count("output"))]
        references = [load_pb(fp64.reference_path(d, i)) if fp64.reference_path(d, i).is_file() else None
                      for i in range(len(outputs))]
        sets.append((d.name, [load_pb(d / f"input_{i}.pb") for i in range(count("input"))], outputs, references))
    return sets


def compare(expected: np.ndarray, actual: np.ndarray):
    """(mismatches, max_abs_error); a shape or dtype difference counts every element."""
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return max(expected.size, 1), float("inf")
    atol, rtol = TOLERANCES.get(expected.dtype.name, (0.0, 0.0))
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    nan_differs = np.isnan(e) != np.isnan(a)
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)
    err = np.where(np.isnan(e) & np.isnan(a), 0.0, err)
    err = np.where(nan_differs, np.inf, err)
    err = np.where(np.isinf(e) & (e == a), 0.0, err)
    bad = (err > atol + rtol * np.abs(np.nan_to_num(e))) | nan_differs
    return int(bad.sum()), float(err.max()) if err.size else 0.0


# Two dequantized values k steps apart differ by k * scale up to float rounding of each: 1e-3 of a step
# keeps exactly-one-step differences in and two-step ones out (verify/src/compare.cc, the same rule).
ONE_STEP = 1.001


def compare_steps(expected: np.ndarray, actual: np.ndarray, scale: float):
    """(mismatches, max_abs_error) of an output a dequantize of `scale` produced: an element passes when it
    is at most one quantization step from eager (a rounding tie resolved the other way), as in Parity's own
    quantized rule."""
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return max(expected.size, 1), float("inf")
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    both_nan = np.isnan(e) & np.isnan(a)
    with np.errstate(invalid="ignore"):
        err = np.where(both_nan, 0.0, np.abs(a - e))
    bad = ~(err / scale <= ONE_STEP)
    return int(bad.sum()), float(np.nan_to_num(err, nan=np.inf).max()) if err.size else 0.0


def judge(expected: np.ndarray, actual: np.ndarray, reference, scale=None):
    """(mismatches, max_abs_error, fp64 verdict or None) of one output: for a dequantized output (`scale`, from
    case.json's output_quant_scales) the one-step rule; else the fixed rule, then, when it fails, the fp64
    rule (scenarios/fp64.py) if the case has this output's float64 reference."""
    if scale:
        m, e = compare_steps(expected, actual, scale)
        return m, e, None
    m, e = compare(expected, actual)
    if m == 0:
        return m, e, None
    return m, e, fp64.check(expected, actual, reference, TOLERANCES.get(expected.dtype.name, (0.0, 0.0))[0])


def _closest(verdicts: list[dict]):
    """The verdict nearest to failing (res_error over its bound), the one worth showing."""
    def ratio(v):
        bound = v["multiplier"] * v["ref_error"] + v["additive"]
        return math.inf if v.get("problem") else v["res_error"] / bound if bound > 0 else math.inf
    return max(verdicts, key=ratio) if verdicts else None


def run_ort(model: Path, sets, scales=()) -> dict:
    """ONNX Runtime on every set against eager. "mismatches" counts the fixed rule's; an output that fails
    it passes when the fp64 rule passes ("fp64_rule": the verdict closest to its bound, with its set and
    output; "fp64_outputs": how many outputs passed that way)."""
    try:
        import onnxruntime as ort
        options = ort.SessionOptions()
        # ORT fuses a blocked DequantizeLinear -> MatMul (int4 / int8 weight-only) into MatMulNBits and by
        # default computes it with int8 activations (accuracy level 4, 1e-2 off on a 64-wide row): level 0
        # keeps float activations, so this column judges the ONNX's numbers, not that approximation.
        options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        mismatches, max_abs, failed, verdicts = 0, 0.0, 0, []
        for set_name, inputs, outputs, references in sets:
            if len(names) != len(inputs):
                raise ValueError(f"the model takes {len(names)} inputs, the case has {len(inputs)}")
            got = session.run(None, dict(zip(names, inputs)))
            # Outputs beyond the user's are mutated state (buffers, inputs), which eager does not record.
            if len(got) < len(outputs):
                raise ValueError(f"the model returns {len(got)} outputs, eager {len(outputs)}")
            for i, (expected, actual, reference) in enumerate(zip(outputs, got, references)):
                scale = scales[i] if i < len(scales) else None
                m, e, verdict = judge(expected, np.asarray(actual), reference, scale)
                mismatches, max_abs = mismatches + m, max(max_abs, e)
                if m > 0 and not (verdict and verdict["passed"]):
                    failed += 1
                if verdict:
                    verdicts.append({**verdict, "input_set": set_name, "output": i})
        result = {"status": "pass" if failed == 0 else "fail", "max_abs_error": max_abs if np.isfinite(max_abs)
                  else "Infinity", "mismatches": mismatches, "error": None}
        if verdicts:
            result["fp64_rule"] = _closest(verdicts)
            result["fp64_outputs"] = sum(v["passed"] for v in verdicts)
        return result
    except Exception as e:  # a peer failing is a result
        return {"status": "error", "max_abs_error": None, "mismatches": None, "error": _message(e)}


def load_case_libraries(case_dir: Path):
    """Imports the modules that define the program's Python custom ops ("python_op_modules" in case.json).
    A case with C++ custom ops lists its TORCH_LIBRARY libraries in case.json ("torch_libraries"):
    torch.export.load needs them loaded and the ops' fake kernels registered. The case's module
    constructor registers those (as at capture), so the case's module is built once after loading."""
    try:
        info = json.loads((case_dir / "case.json").read_text())
    except (OSError, ValueError):
        return
    for name in info.get("python_op_modules") or []:  # custom ops defined in Python (torch.library.custom_op)
        importlib.import_module(name)
    libraries = info.get("torch_libraries") or []
    if not libraries:
        return
    import torch
    for library in libraries:
        torch.ops.load_library(library)
    from .registry import get_case
    try:
        case = get_case(info.get("name", ""))
    except KeyError:  # a case from outside the registry: the libraries alone will have to do
        return
    case.module()


def export_official(pt2: Path, out: Path, program=None) -> dict:
    """The official exporter on `program` (the ExportedProgram the capture worker holds: the one saved as `pt2`),
    else on the program loaded from `pt2`."""
    try:
        import torch
        import torch.ao.quantization.fx._decomposed  # noqa: F401  registers quantized_decomposed (PT2E programs)
        with contextlib.suppress(ImportError):  # torchao.quantize_affine & co. (quantize_ programs)
            import torchao.quantization.quant_primitives  # noqa: F401
        if program is None:
            load_case_libraries(pt2.parent)
        ep = program if program is not None else torch.export.load(str(pt2))
        with contextlib.redirect_stdout(sys.stderr):  # the exporter prints progress; stdout is ours
            program = torch.onnx.export(ep, dynamo=True)
            program.save(str(out))
        return {"export": "ok", "onnx": str(out), "error": None}
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        return {"export": "error", "onnx": None, "error": _message(e)}


def node_count(path) -> int | None:
    """Nodes of an ONNX model, those of If/Loop/Scan bodies included (None when it cannot be read)."""
    def count(graph) -> int:
        return sum(1 + sum(count(a.g) for a in n.attribute if a.HasField("g")) +
                   sum(count(g) for a in n.attribute for g in a.graphs) for n in graph.node)
    try:
        return count(onnx.load(str(path), load_external_data=False).graph)
    except Exception:  # a model ONNX cannot parse has no count; its run reports the error
        return None


def _no_run(status: str) -> dict:
    """The "ort" record of a model ONNX Runtime did not run: "skipped" (no official model) or "not_run"."""
    return {"status": status, "max_abs_error": None, "mismatches": None, "error": None}


def run_official(case_dir: Path, onnx_path: Path, sets=None, scales=None, program=None) -> dict:
    """The official exporter on the case's model.pt2 (or `program`, the same program in memory; saved as
    `onnx_path`), its model on ONNX Runtime against the stored eager outputs: the "official" record of the peers
    line."""
    sets = load_sets(case_dir) if sets is None else sets
    scales = quant_scales(case_dir) if scales is None else scales
    official = export_official(case_dir / "model.pt2", onnx_path, program)
    official["ort"] = run_ort(Path(official["onnx"]), sets, scales) if official["export"] == "ok" else \
        _no_run("skipped")
    official["nodes"] = node_count(official["onnx"]) if official["export"] == "ok" else None
    return official


# The official exporter's record kept in the case folder (written by the capture worker, which has torch and the
# case's libraries loaded already; scenarios/capture.py --official): CASE/MODE/official/official.json and .onnx.
# Its verdict depends on the captured program (case.json's source_hash), the official exporter's packages and
# this judge's code and tolerances; Parity's own code is not part of it, so a second run reuses it.
OFFICIAL_DIR = "official"
_JUDGE_FILES = (Path(__file__), Path(fp64.__file__), _TOLERANCES_JSON)


def official_key(case_dir: Path) -> dict:
    """What the cached official record depends on."""
    import hashlib
    from importlib import metadata

    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return ""
    try:
        source_hash = json.loads((case_dir / "case.json").read_text()).get("source_hash")
    except (OSError, ValueError):
        source_hash = None
    judge = hashlib.sha256(b"".join(p.read_bytes() for p in _JUDGE_FILES if p.is_file())).hexdigest()
    return {"source_hash": source_hash, "judge": judge,
            **{name: version(name) for name in ("torch", "onnx", "onnxscript", "onnxruntime")}}


def cached_official(case_dir: Path) -> dict | None:
    """The official record the capture left in the case folder, when it is still valid for this program and
    these packages; else None."""
    try:
        saved = json.loads((case_dir / OFFICIAL_DIR / "official.json").read_text())
    except (OSError, ValueError):
        return None
    if saved.get("key") != official_key(case_dir) or saved.get("key", {}).get("source_hash") is None:
        return None
    record = saved.get("record") or {}
    if record.get("export") == "ok":  # the model beside this file, wherever the case folder is now
        onnx_path = case_dir / OFFICIAL_DIR / "official.onnx"
        if not onnx_path.is_file():
            return None
        record["onnx"] = str(onnx_path)
    return record


def official_into_case(case_dir: Path, program=None) -> tuple[str, dict]:
    """The capture worker's part of the peers: the official record into CASE/MODE/official/, or the one already
    there when still valid. Returns ("cached" | "ran", record). `program`: the ExportedProgram just saved as the
    case's model.pt2, still in memory (loading the archive again costs as much as saving it)."""
    record = cached_official(case_dir)
    if record is not None:
        return "cached", record
    folder = case_dir / OFFICIAL_DIR
    folder.mkdir(exist_ok=True)
    key = official_key(case_dir)
    record = run_official(case_dir, folder / "official.onnx", program=program)
    tmp = folder / ".official.json.tmp"
    tmp.write_text(json.dumps({"key": key, "record": record}, indent=1) + "\n")
    tmp.replace(folder / "official.json")
    return "ran", record


def peers_of(case_dir: Path, ours: Path, out: Path, official: bool = True) -> dict:
    """ONNX Runtime on our model, and (unless `official` is false) the official exporter on the case's
    program, its model on ONNX Runtime: the record the capture left in the case folder, else run here."""
    out.mkdir(parents=True, exist_ok=True)
    sets = load_sets(case_dir)
    scales = quant_scales(case_dir)
    ours_record = {"ort": run_ort(ours, sets, scales), "nodes": node_count(ours)}
    if not official:  # the matrix runs the official exporter on one capture per case unless told otherwise
        return {"case_dir": str(case_dir),
                "official": {"export": "not_run", "onnx": None, "error": None, "ort": _no_run("not_run"),
                             "nodes": None},
                "ours": ours_record}
    record = cached_official(case_dir)
    if record is None:
        record = run_official(case_dir, out / "official.onnx", sets, scales)
    return {"case_dir": str(case_dir), "official": record, "ours": ours_record}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.peers", description=__doc__.split("\n")[0])
    parser.add_argument("--case-dir", type=Path)
    parser.add_argument("--ours", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--jobs", type=Path, help="a JSON list of {case_dir, ours, out[, official]}")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="the jobs as Ray tasks (python/parity/_ray_units.py): on the cluster at ADDRESS, else "
                        "on a Ray started here")
    parser.add_argument("--ray-shared", action="store_true", help="with --ray: every node sees the paths as they are")
    parser.add_argument("--ray-store", default=None, metavar="URL", help="with --ray: archives through this fsspec URL")
    parser.add_argument("--ray-retries", type=int, default=2, metavar="N")
    args = parser.parse_args(argv)
    if args.ray is not None and args.jobs:
        from parity._ray_units import peers_on_ray
        jobs = [{"case_dir": str(Path(j["case_dir"]).absolute()), "ours": str(Path(j["ours"]).absolute()) if j["ours"]
                 else "",
                 "out": str(Path(j["out"]).absolute()), "official": j.get("official", True), "given": j["case_dir"]}
                for j in json.loads(args.jobs.read_text())]

        def print_line(line):  # the case_dir as the caller wrote it: the matrix matches lines by it
            given = next((j["given"] for j in jobs if j["case_dir"] == line.get("case_dir")), None)
            print(json.dumps({**line, "case_dir": given or line.get("case_dir")}), flush=True)

        peers_on_ray(f"{__package__}.peers", jobs, args.ray, args.ray_shared, args.ray_store, args.ray_retries,
                     print_line)
        return 0
    if args.jobs:
        jobs = [(Path(j["case_dir"]), Path(j["ours"]), Path(j["out"]), j.get("official", True))
                for j in json.loads(args.jobs.read_text())]
    elif args.case_dir and args.ours and args.out:
        jobs = [(args.case_dir, args.ours, args.out, True)]
    else:
        parser.error("give --jobs FILE, or --case-dir, --ours and --out")
    for case_dir, ours, out, official in jobs:
        print(json.dumps(peers_of(case_dir, ours, out, official)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
