"""The matrix's capture and peers phases on Ray (`parity matrix --ray`): scenarios/capture.py and scenarios/peers.py
hand their units here instead of running them in processes of their own.

- capture unit: one case, the modes of this run, then the official exporter on its captured program
  (scenarios.capture._capture_modes), in a Ray worker. Ray keeps its workers alive between tasks, so torch, the
  exporter and the case libraries (transformers, torchao) are imported once per worker, not per case.
- peers unit: ONNX Runtime on our model and the official exporter's record (scenarios.peers.peers_of).

Each unit declares 1 CPU and memory from the model's parameter bytes (its model.pt2 from an earlier capture; a
first capture, with no archive yet, asks for the base). Case folders travel as tar archives through Ray's object
store or an fsspec URL (`--artifacts URL`), or not at all when the output folder is shared by every node. A unit
whose worker dies is submitted again up to `retries` times, then reported as lost: every unit gets one result.
The caller prints the result lines as they come (the same lines as the local run's).
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ._ray_executor import connect, fetch, lost_reason, pack, store, unpack

# A capture worker: torch, the exporter and the case libraries imported (about 1.5 GiB RSS with transformers),
# plus the weights several times: the module, the eager run's copy per input set, the float64 twin of an
# fp64-reference case, the program's constants, the archive written.
CAPTURE_BASE = 1536 << 20
CAPTURE_WEIGHT_COPIES = 6
# A peers worker: onnxruntime and numpy, the official exporter with torch when it runs here.
PEERS_BASE = 1024 << 20
PEERS_WEIGHT_COPIES = 4


def _weights(folders) -> int:
    return max((f.stat().st_size for d in folders for f in [Path(d) / "model.pt2"] if f.is_file()), default=0)


_EXTRA_LOADED = False


def capture_unit(module: str, task: tuple, case_blob, url: str | None, shared: bool) -> dict:
    """The Ray task of one capture unit: its result lines (dirs as the driver names them) and, when the worker
    wrote something new into an unshared folder, the case folders as an archive handle."""
    global _EXTRA_LOADED
    capture = importlib.import_module(module)
    if not _EXTRA_LOADED:  # a worker imports the extra scenarios once (they register themselves)
        capture.load_extra_scenarios()
        _EXTRA_LOADED = True
    name, modes, out, force, decompose_with, scenarios, builtin, official = task
    if decompose_with and not os.access(decompose_with, os.X_OK):  # this node's own parity, as for verify
        decompose_with = shutil.which("parity")
        task = (name, modes, out, force, decompose_with, scenarios, builtin, official)
    if shared:
        return {"lines": capture._capture_modes(task), "blob": None}
    tmp = Path(tempfile.mkdtemp(prefix="parity-capture-"))
    try:
        if case_blob is not None:  # the case's earlier folders: the cache works on every node
            unpack(fetch(case_blob), tmp)
        lines = capture._capture_modes((name, modes, str(tmp), force, decompose_with, scenarios, builtin, official))
        for line in lines:
            line["dir"] = str(Path(out) / name / line["mode"])
        unchanged = all(line["status"] == "cached" and str(line.get("official", "cached")).startswith("cached")
                        for line in lines)
        blob = None
        if not unchanged:
            blob = store(url, f"cases/{name}.tar", _pack_modes(tmp, name, modes))
        return {"lines": lines, "blob": blob}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _pack_modes(root: Path, name: str, modes) -> bytes:
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for mode in modes:
            if (root / name / mode).is_dir():
                tar.add(str(root / name / mode), arcname=f"{name}/{mode}")
    return buf.getvalue()


def bring_home_case(root: Path, name: str, modes, blob) -> None:
    """The capture unit's case folders replace this machine's (only the unit's modes)."""
    with tempfile.TemporaryDirectory(dir=root if root.is_dir() else None) as staging:
        unpack(fetch(blob), Path(staging))
        for mode in modes:
            new = Path(staging) / name / mode
            if new.is_dir():
                target = root / name / mode
                shutil.rmtree(target, ignore_errors=True)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(new), str(target))


def _lost_lines(task: tuple, reason: str) -> list[dict]:
    name, modes, out = task[0], task[1], task[2]
    return [{"case": name, "mode": m, "status": "capture_failed", "dir": str(Path(out) / name / m), "seconds": 0.0,
             "error": f"worker lost: {reason}"} for m in modes]


def _schedule(fn, units: list, options: list, on_result, on_lost, retries: int) -> None:
    """Submits every unit (fn(*args)), hands each result on as it arrives, runs a unit again when its worker dies
    (up to `retries` times) and reports it lost after that: one call of on_result or on_lost per unit."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    task = ray.remote(fn)
    attempts = [1] * len(units)
    pending = {task.options(**options[i]).remote(*units[i]): i for i in range(len(units))}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=5.0)
        for ref in ready:
            i = pending.pop(ref)
            try:
                result = ray.get(ref)
            except RayTaskError as e:  # the unit's code raised: not a lost worker, not retried
                on_lost(i, f"the Ray task failed: {lost_reason(e.cause or e)}")
                continue
            except RayError as e:  # the worker or its node died
                if attempts[i] <= retries:
                    attempts[i] += 1
                    print(f"ray: unit {i} again (attempt {attempts[i]}): {lost_reason(e)}", file=sys.stderr)
                    pending[task.options(**options[i]).remote(*units[i])] = i
                else:
                    on_lost(i, f"{lost_reason(e)} (after {attempts[i]} attempts)")
                continue
            on_result(i, result)


def _options(memory: int, largest: float) -> dict:
    # A unit larger than every node asks for the largest node's memory (else it would wait for ever).
    return {"num_cpus": 1, "memory": int(min(memory, largest) if largest else memory), "max_retries": 0}


def capture_on_ray(module: str, tasks: list, address: str, shared: bool, url: str | None, retries: int,
                   print_lines) -> None:
    """scenarios.capture's tasks as Ray tasks; each result's lines printed as it arrives."""
    cluster = connect(address or None)
    print(f"ray: capture on {cluster['nodes']} nodes, {cluster['cpus']} CPUs", file=sys.stderr)
    units, options = [], []
    for task in tasks:
        name, modes, out = task[0], task[1], task[2]
        folders = [Path(out) / name / m for m in modes]
        blob = None
        if not shared and any(f.is_dir() for f in folders):
            blob = store(url, f"cases/{name}.in.tar", _pack_modes(Path(out), name, modes), driver=True)
        units.append((module, task, blob, url, shared))
        options.append(_options(CAPTURE_BASE + CAPTURE_WEIGHT_COPIES * _weights(folders), cluster["largest_memory"]))

    def done(i, result):
        name, modes, out = tasks[i][0], tasks[i][1], tasks[i][2]
        if result["blob"] is not None:
            bring_home_case(Path(out), name, modes, result["blob"])
        print_lines(result["lines"])

    _schedule(capture_unit, units, options, done, lambda i, why: print_lines(_lost_lines(tasks[i], why)), retries)


def peers_unit(module: str, job: dict, case_blob, ours_blob, url: str | None) -> dict:
    """The Ray task of one peers unit: the peers line (paths as the driver names them) and the archive of its out
    folder (the official exporter's model when it ran here) unless the folders are shared."""
    peers = importlib.import_module(module)
    case_dir, ours, out = Path(job["case_dir"]), Path(job["ours"]), Path(job["out"])
    if case_blob is None:  # a shared folder
        return {"line": peers.peers_of(case_dir, ours, out, job["official"]), "blob": None}
    tmp = Path(tempfile.mkdtemp(prefix="parity-peers-"))
    try:
        unpack(fetch(case_blob), tmp / "case")
        if ours_blob is not None:
            unpack(fetch(ours_blob), tmp / "ours")
        mine = tmp / "ours" / "o" / ours.name if job["ours"] else Path("")  # no ONNX of ours: ORT's error as locally
        line = peers.peers_of(tmp / "case" / "c", mine, tmp / "out", job["official"])
        text = json.dumps(line)
        for theirs, local in ((tmp / "case" / "c", case_dir), (tmp / "ours" / "o", ours.parent), (tmp / "out", out)):
            text = text.replace(json.dumps(str(theirs))[1:-1], json.dumps(str(local))[1:-1])
        key = f"results/{case_dir.parent.name}/{case_dir.name}/peers.tar"
        return {"line": json.loads(text), "blob": store(url, key, pack(tmp / "out", "out"))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def peers_on_ray(module: str, jobs: list[dict], address: str, shared: bool, url: str | None, retries: int,
                 print_line) -> None:
    """scenarios.peers's jobs as Ray tasks; each line printed as it arrives."""
    cluster = connect(address or None)
    print(f"ray: peers on {cluster['nodes']} nodes, {cluster['cpus']} CPUs", file=sys.stderr)
    units, options = [], []
    for k, job in enumerate(jobs):
        case_dir, ours = Path(job["case_dir"]), Path(job["ours"])
        case_blob = ours_blob = None
        if not shared:
            case_blob = store(url, f"peers/{k}/case.tar", pack(case_dir, "c"), driver=True)
            if job["ours"] and ours.is_file():  # its folder: external data files beside the model travel with it
                ours_blob = store(url, f"peers/{k}/ours.tar", _pack_model(ours), driver=True)
        units.append((module, job, case_blob, ours_blob, url))
        options.append(_options(PEERS_BASE + PEERS_WEIGHT_COPIES * _weights([case_dir]), cluster["largest_memory"]))

    def done(i, result):
        if result["blob"] is not None:
            out = Path(jobs[i]["out"])
            with tempfile.TemporaryDirectory() as staging:
                unpack(fetch(result["blob"]), Path(staging))
                shutil.rmtree(out, ignore_errors=True)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(Path(staging) / "out"), str(out))
        print_line(result["line"])

    def lost(i, why):  # the matrix reads a line without "official"/"ours" as this case's peers error
        print_line({"case_dir": jobs[i]["case_dir"], "error": f"worker lost: {why}"})

    _schedule(peers_unit, units, options, done, lost, retries)


def _pack_model(model: Path) -> bytes:
    """Our ONNX and the files beside it (external data), not the folder's other results."""
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for f in model.parent.iterdir():
            if f.is_file() and (f == model or f.suffix in (".data", ".bin") or f.name.startswith(model.stem + ".")):
                tar.add(str(f), arcname=f"o/{f.name}")
    return buf.getvalue()
