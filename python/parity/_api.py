"""parity.capture / parity.verify / parity.profile: a user's model through the same capture as the matrix,
then through the `parity` binary. Argument names follow torch.export.export and torch.onnx.export."""
from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Optional, Sequence

import torch

from ._paths import ParityError, binary_env, parity_bin, scenarios_module
from ._results import CapturedCase, ProfileResult, VerifyResult

MODES = ("strict", "nonstrict", "decomposed")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def _check_args(model, args, kwargs, input_sets) -> list[tuple[tuple, dict]]:
    """(args, kwargs) of every input set, set 0 first; TypeError/ValueError naming the bad argument."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(args, tuple):
        hint = " (write (x,) for one tensor)" if isinstance(args, torch.Tensor) else ""
        raise TypeError(f"args must be a tuple of positional arguments, got {type(args).__name__}{hint}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs must be a dict or None, got {type(kwargs).__name__}")
    sets = [(args, dict(kwargs or {}))]
    for i, item in enumerate(input_sets or ()):
        if kwargs is not None:  # with kwargs, each further set is an (args, kwargs) pair
            if not (
                isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], tuple) and isinstance(item[1], dict)
            ):
                raise TypeError(f"input_sets[{i}] must be an (args, kwargs) pair, like (args, kwargs) of the call")
            sets.append((item[0], dict(item[1])))
        elif isinstance(item, tuple):
            sets.append((item, {}))
        else:
            raise TypeError(f"input_sets[{i}] must be a tuple of positional arguments like args, "
                            f"got {type(item).__name__}")
    return sets


def _check_modes(modes) -> tuple[str, ...]:
    if isinstance(modes, str):
        modes = (modes,)
    modes = tuple(modes)
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise ValueError(f"mode(s) {bad or '(none)'} not known: use {', '.join(MODES)}")
    return modes


def _case_name(model, name: Optional[str]) -> str:
    name = name or type(model).__name__
    if not _NAME.match(name):
        raise ValueError(f"name {name!r} must be letters, digits, '_', '.' or '-' (it names a folder)")
    return name


def _fresh_copy(model):
    """Each capture step gets its own module (export, then one eager run per input set), as scenario
    factories give: a model that mutates a buffer must not carry state from one set to the next."""
    try:
        return copy.deepcopy(model)
    except Exception:  # a module that cannot be copied is used as it is
        return model


def _make_case(model, sets, dynamic_shapes, name):
    registry = scenarios_module("registry")
    return registry.Case(
        name=name,
        make_module=lambda: _fresh_copy(model),
        input_sets=lambda: [a for a, _ in sets],
        kwargs_sets=lambda: [k for _, k in sets],
        dynamic_shapes=dynamic_shapes,
        description=f"{type(model).__module__}.{type(model).__qualname__}",
    )


def capture(model, args, kwargs=None, dynamic_shapes=None, *, input_sets=None, modes=("strict",), out,
            name: Optional[str] = None, decompose_unsupported: bool = True) -> list[CapturedCase]:
    """Writes one case folder per mode, out/<name>/<mode>/, exactly as `parity matrix` captures.

    `args`, `kwargs` and `dynamic_shapes` are torch.export.export's; `input_sets` lists further inputs
    (tuples like `args`, or `(args, kwargs)` pairs when kwargs is given) whose dynamic dims should differ
    from the first set's. A capture torch.export refuses is a result (status "capture_failed"), not an
    exception; bad arguments raise TypeError or ValueError. With `decompose_unsupported` (the default),
    the ATen ops the exporter cannot translate yet are re-decomposed with torch's own decompositions
    (listed in `decomposed_ops` and in case.json)."""
    sets = _check_args(model, args, kwargs, input_sets)
    modes = _check_modes(modes)
    if out is None:
        raise TypeError("out must name a folder")
    case = _make_case(model, sets, dynamic_shapes, _case_name(model, name))
    capture_module = scenarios_module("capture")
    decompose_with = str(parity_bin()) if decompose_unsupported else None
    results = []
    with torch.random.fork_rng():  # Case seeds the global RNG; the caller's stream stays as it was
        for mode in modes:
            line = capture_module.capture_case(case, mode, Path(out), force=True, decompose_with=decompose_with)
            info_path = Path(line["dir"]) / "case.json"
            decomposed = json.loads(info_path.read_text()).get("decomposed_ops", []) if info_path.is_file() else []
            results.append(CapturedCase(case=line["case"], mode=mode, status=line["status"],
                                        dir=Path(line["dir"]), error=line["error"], decomposed_ops=decomposed))
    return results


def _run_parity(argv: Sequence[str], ok=(0,)) -> subprocess.CompletedProcess:
    cmd = [str(parity_bin()), *map(str, argv)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=binary_env())
    if proc.returncode not in ok:
        raise ParityError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def _check_opset(opset):
    if opset is None:  # the exporter's choice: 18, 20 when the program calls gelu, 21 for torchao-quantized ones
        return
    if not isinstance(opset, int) or isinstance(opset, bool) or not 18 <= opset <= 23:
        raise ValueError(f"opset must be None or an int between 18 and 23, got {opset!r}")


def _opset_argv(opset) -> list:
    return [] if opset is None else ["--opset", opset]


def verify(model, args, kwargs=None, dynamic_shapes=None, *, input_sets=None, mode="nonstrict", opset=None,
           intermediates=False, out=None, name: Optional[str] = None, fresh: int = 0) -> VerifyResult:
    """Captures the model, runs `parity verify` (our ONNX on refrt and the libtorch reference, both
    against eager PyTorch) and returns the verdict. Nothing is raised for a model that fails: the result
    says so, and when outputs differ the first failing input set is run again with every intermediate compared, so that
    `first_divergence` names the FX node and source line where refrt and libtorch part. Reports go to
    `out` (default ./parity_out/<name>): report.json, report.md, report.html. `fresh=K` adds K input sets
    with new sizes for the dynamic dims (refrt against libtorch, `parity verify --fresh`)."""
    _check_args(model, args, kwargs, input_sets)
    (mode,) = _check_modes(mode)
    _check_opset(opset)
    if not isinstance(fresh, int) or isinstance(fresh, bool) or not 0 <= fresh <= 1000:
        raise ValueError(f"fresh must be an int between 0 and 1000, got {fresh!r}")
    name = _case_name(model, name)
    out = Path(out) if out is not None else Path("parity_out") / name
    (captured,) = capture(model, args, kwargs, dynamic_shapes, input_sets=input_sets, modes=(mode,),
                          out=out / "cases", name=name)
    report_dir = out / "verify"
    argv = ["verify", captured.dir, "--out", report_dir, *_opset_argv(opset), "--quiet", "--fresh", fresh]
    # A failing case is localised by `parity verify` itself (its first failing set re-run with intermediates).
    entry = _verify_entry([*argv, *(["--intermediates"] if intermediates else [])], report_dir, captured)
    result = VerifyResult.from_entry(entry, report_dir, captured.dir)
    result.decomposed_ops = list(captured.decomposed_ops)
    if captured.decomposed_ops and result.report_md.is_file():  # the report says what torch decomposed
        note = ("> Re-decomposed with torch's own decompositions before export (Parity has no translation yet): "
                + ", ".join(f"`{k}`" for k in captured.decomposed_ops) + "\n\n")
        result.report_md.write_text(note + result.report_md.read_text())
    return result


def _verify_entry(argv, report_dir: Path, captured: CapturedCase) -> dict:
    """The report entry of one `parity verify` run; a crash of the binary on this model is a result too."""
    (report_dir / "report.json").unlink(missing_ok=True)
    proc = _run_parity(argv, ok=(0, 1, *range(-64, 0)))
    if proc.returncode < 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        return {"case": captured.case, "mode": captured.mode, "status": "crashed", "stage": "verify",
                "error": f"parity verify was killed by signal {-proc.returncode} (no report written): {tail}"}
    return json.loads((report_dir / "report.json").read_text())["cases"][0]


def profile(model, args, kwargs=None, dynamic_shapes=None, *, mode="nonstrict", opset=None, runs=10, warmup=2,
            threads=1, out=None, name: Optional[str] = None) -> ProfileResult:
    """Captures the model, exports it with `parity export` and profiles refrt on the example inputs
    (`parity profile`): per-op-type and per-node times, and a Chrome trace. Raises ParityError when the
    model cannot be captured or exported (there is nothing to profile)."""
    _check_args(model, args, kwargs, None)
    (mode,) = _check_modes(mode)
    _check_opset(opset)
    for label, value, low in (("runs", runs, 1), ("warmup", warmup, 0), ("threads", threads, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{label} must be an int >= {low}, got {value!r}")
    name = _case_name(model, name)
    out = Path(out) if out is not None else Path("parity_out") / name
    (captured,) = capture(model, args, kwargs, dynamic_shapes, modes=(mode,), out=out / "cases", name=name)
    if captured.status != "captured":
        raise ParityError(f"torch.export could not capture {name} ({mode}): {captured.error}")
    onnx_path = out / "model.onnx"
    _run_parity(["export", captured.dir / "model.pt2", "-o", onnx_path, *_opset_argv(opset)])
    profile_dir = out / "profile"
    _run_parity(["profile", onnx_path, "--inputs", captured.dir / "test_data_set_0", "--runs", runs,
                 "--warmup", warmup, "--threads", threads, "--out", profile_dir])
    return ProfileResult.from_dir(profile_dir, onnx_path)


__all__ = ["capture", "verify", "profile", "MODES", "ParityError"]
