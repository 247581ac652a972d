"""The Ray executor of `parity matrix --ray [ADDRESS]` (verify/src/executor_ray.cc starts this module).

The matrix hands its (case, mode) units here, in a JSON file. Each unit is the same `parity verify CASE_DIR --out
DIR` child the local executor runs; here it runs as a Ray task, wherever the cluster has the CPUs and memory the
unit declares. This process writes one JSON line per event on stdout, which the matrix reads as they come:

    {"event": "cluster", "nodes": 2, "cpus": 4.0, "memory": ...}         once, after connecting
    {"event": "retry", "index": i, "attempt": k, "reason": "..."}       a unit's worker or node died
    {"event": "done", "index": i, "exit_code": ..., "signal": ..., "timed_out": ..., "stderr_tail": ...,
     "wall_seconds": ..., "node": "...", "attempts": k}                  its child finished (any verdict)
    {"event": "done", "index": i, "lost": "..."}                         no worker kept it alive, retries spent

Every unit gets exactly one "done" line: a unit is submitted again only after Ray said its last attempt is gone
(the attempt's result is never read after that), and the matrix ignores a second line for an index.

Case folders reach the workers either through a folder every node sees at the same path (`--artifacts DIR`: the
units' paths are used as they are) or through Ray's object store: the driver puts each case folder as a tar
archive, the task unpacks it into a temporary folder, verifies there and returns its result folder as a tar
archive, which the driver unpacks at the unit's local result path (paths inside report.json rewritten to it).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tarfile
import time
from pathlib import Path

# A `parity verify` child on a small model: libtorch, refrt and the case in memory (measured RSS of a tiny case
# about 0.5 GiB on this project's build); weights are held about three times (the PT2 archive mapped, libtorch's
# tensors, refrt's prepacked copy), and activations, with every intermediate kept by the reference, several
# times the largest input set on disk.
MEMORY_BASE = 768 << 20
WEIGHT_COPIES = 3
ACTIVATION_FACTOR = 16


def emit(**event) -> None:
    print(json.dumps(event), flush=True)


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def memory_estimate(case_dir: Path) -> int:
    """Bytes a unit asks Ray for: a fixed base, the weights (model.pt2) a few times, the largest input set's
    files (inputs and eager outputs) many times."""
    pt2 = case_dir / "model.pt2"
    weights = pt2.stat().st_size if pt2.is_file() else 0
    sets = [folder_bytes(d) for d in case_dir.glob("test_data_set_*") if d.is_dir()]
    return MEMORY_BASE + WEIGHT_COPIES * weights + ACTIVATION_FACTOR * max(sets, default=0)


def pack(folder: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname=arcname)
    return buf.getvalue()


def unpack(blob: bytes, into: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r") as tar:
        tar.extractall(str(into), filter="data")  # "data": no absolute paths, links out or devices


def store(url: str | None, key: str, data: bytes, driver: bool = False):
    """An archive on its way between the driver and a task: through Ray's object store (url None: the bytes as
    they are, or an object ref put by the driver), else written under an fsspec URL (s3://bucket/run, gs://...,
    memory:// in a test), its handle the URL of the file."""
    if not url:
        if driver:
            import ray
            return ray.put(data)
        return data
    target = f"{url.rstrip('/')}/{key}"
    fs, path = _fsspec().core.url_to_fs(target)
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    fs.pipe_file(path, data)
    return target


def fetch(handle) -> bytes:
    """The archive behind a store() handle (Ray resolves object refs passed to a task before it runs)."""
    if isinstance(handle, (bytes, bytearray)):
        return bytes(handle)
    if isinstance(handle, str):
        fs, path = _fsspec().core.url_to_fs(handle)
        return fs.cat_file(path)
    import ray
    return ray.get(handle)


def _fsspec():
    try:
        import fsspec
    except ImportError as e:  # an --artifacts URL without fsspec: said before any work (check_store)
        raise RuntimeError(f"--artifacts URL needs fsspec (pip install 'parity[ray]'): {e}") from e
    return fsspec


def is_url(text: str | None) -> bool:
    """An fsspec URL (s3://, gs://, memory://, ...) rather than a folder; file:// URLs name a folder."""
    return bool(text) and "://" in text and not text.startswith("file://")


def _die_with_parent() -> None:
    # The verify child ends when the Ray worker running it does (a node lost, a worker killed): it must not
    # go on and write into a result folder that the unit's retry on another node is writing too.
    import ctypes
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _end_with_the_matrix() -> None:
    # The matrix runs this driver in a process group of its own: if the matrix is killed, the driver must end
    # too, through SystemExit, so that atexit's ray.shutdown() stops a Ray instance it started.
    import ctypes
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        sys.exit(143)


def run_unit(unit: dict, parity: str, verify_args: list, timeout: float, case_blob) -> dict:
    """The Ray task: one `parity verify` child. A crash, a timeout or a non-zero exit is this task's normal
    result (the matrix reads it as the local executor would); only a lost worker makes Ray raise."""
    import shutil
    import subprocess
    import tempfile

    import ray

    if os.environ.get("PARITY_TEST_LOSE_WORKER") == f"{unit['case']}/{unit['mode']}":
        # Test hook (tests/python/test_ray_cluster.py): this worker dies as an out-of-memory kill would take it.
        import signal
        os.kill(os.getpid(), signal.SIGKILL)
    tmp = None
    case_dir, out = Path(unit["case_dir"]), Path(unit["out"])
    if case_blob is not None:
        tmp = Path(tempfile.mkdtemp(prefix="parity-unit-"))
        unpack(fetch(case_blob), tmp / "cases")
        case_dir, out = tmp / "cases" / unit["case"] / unit["mode"], tmp / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").unlink(missing_ok=True)
    # The driver's binary when this node has it at the same path (one machine, a shared install), else the
    # `parity` this node's environment provides (pip install parity[ray] on every node).
    exe = parity if os.access(parity, os.X_OK) else (shutil.which("parity") or parity)
    result = {"exit_code": -1, "signal": 0, "timed_out": False, "stderr_tail": "",
              "node": ray.get_runtime_context().get_node_id()[:12]}
    start = time.monotonic()
    try:
        proc = subprocess.run([exe, "verify", str(case_dir), "--out", str(out), "--quiet", "--no-html", *verify_args],
                              capture_output=True, timeout=timeout, preexec_fn=_die_with_parent)
        result["stderr_tail"] = proc.stderr.decode(errors="replace")[-2000:]
        if proc.returncode < 0:
            result["signal"] = -proc.returncode
        else:
            result["exit_code"] = proc.returncode
    except subprocess.TimeoutExpired:
        result["timed_out"] = True
    except OSError as e:  # the binary cannot start on this node: an exec failure, as the local runner says it
        result["exit_code"], result["stderr_tail"] = 127, f"{exe}: {e}"
    result["wall_seconds"] = time.monotonic() - start
    if tmp is not None:
        result["out_blob"] = store(unit.get("store"), f"results/{unit['case']}/{unit['mode']}.tar", pack(out, "out"))
        result["tmp_case"], result["tmp_out"] = str(case_dir), str(out)
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def bring_home(unit: dict, result: dict) -> None:
    """Object-store mode: the unit's result folder unpacked at its local path, paths in report.json made local."""
    blob = result.pop("out_blob", None)
    if blob is None:
        return
    import shutil
    import tempfile
    out = Path(unit["out"])
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.is_dir() else None) as staging:
        unpack(fetch(blob), Path(staging))
        shutil.rmtree(out, ignore_errors=True)
        shutil.move(str(Path(staging) / "out"), str(out))
    report = out / "report.json"
    if report.is_file():
        text = report.read_text()
        for theirs, ours in ((result.pop("tmp_out"), str(out)), (result.pop("tmp_case"), unit["case_dir"])):
            text = text.replace(json.dumps(theirs)[1:-1], json.dumps(ours)[1:-1])
        report.write_text(text)


def lost_reason(error: BaseException) -> str:
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first}"[:400]


def _stdout_for_results_only() -> None:
    """This process's result lines keep the stdout pipe the matrix reads; everything else written to file
    descriptor 1 from now on (Ray's own threads and the processes ray.init starts inherit it) goes to stderr, so
    that no other writer's bytes run into a result line: a unit whose line the matrix cannot parse would count as
    never finished."""
    if getattr(_stdout_for_results_only, "done", False):
        return
    sys.stdout.flush()
    results = os.dup(1)
    os.set_inheritable(results, False)
    os.dup2(2, 1)
    sys.stdout = open(results, "w", buffering=1, encoding="utf-8", closefd=True)
    _stdout_for_results_only.done = True


def connect(address: str | None) -> dict:
    """ray.init, and the cluster's size ({"nodes", "cpus", "memory", "largest_memory"}). The workers import this
    package and the scenario library from the driver's PYTHONPATH (a checkout; an installed parity has both)."""
    import ray

    _stdout_for_results_only()

    env_vars = {k: os.environ[k] for k in ("PYTHONPATH", "PARITY_EXTRA_SCENARIOS") if os.environ.get(k)}
    # "local": always a new Ray instance on this machine. address=None would join the cluster named in
    # /tmp/ray/ray_current_cluster instead, which may be one `ray start` left behind or one already gone.
    ray.init(address=address or "local", log_to_driver=False, logging_level="WARNING",
             runtime_env={"env_vars": env_vars} if env_vars else None,
             **({} if address else {"include_dashboard": False}))
    alive = [n for n in ray.nodes() if n.get("Alive")]
    total = ray.cluster_resources()
    return {"nodes": len(alive), "cpus": total.get("CPU", 0), "memory": total.get("memory", 0),
            "largest_memory": max((n.get("Resources", {}).get("memory", 0) for n in alive), default=0)}


def run(spec: dict, address: str | None) -> int:
    import ray
    from ray.exceptions import RayError, RayTaskError

    cluster = connect(address)
    largest_memory = cluster.pop("largest_memory")
    emit(event="cluster", **cluster)

    task = ray.remote(run_unit)
    units, shared = spec["units"], bool(spec.get("artifacts"))
    url = spec.get("store") or None  # an fsspec URL the archives travel through instead of the object store
    for u in units:
        u["store"] = url
    retries, timeout = int(spec.get("retries", 2)), float(spec["timeout"])
    blobs, options = {}, {}
    for u in units:
        case_dir = Path(u["case_dir"])
        # A unit larger than every node asks for the largest node's memory: otherwise Ray would keep it
        # pending for ever; the child still runs and an out-of-memory kill is reported like any lost worker.
        memory = memory_estimate(case_dir)
        if largest_memory:
            memory = min(memory, int(largest_memory))
        # max_retries=0: Ray does not re-run a task by itself; this loop does, so that each attempt is counted
        # and a unit is reported once.
        options[u["index"]] = {"num_cpus": 1, "memory": memory, "max_retries": 0}
        if not shared:
            blobs[u["index"]] = store(url, f"cases/{u['case']}/{u['mode']}.tar",
                                      pack(case_dir, f"{u['case']}/{u['mode']}"), driver=True)

    def submit(u: dict):
        return task.options(**options[u["index"]]).remote(u, spec["parity"], spec.get("verify_args", []),
                                                          timeout, blobs.get(u["index"]))

    by_index = {u["index"]: u for u in units}
    attempts = {u["index"]: 1 for u in units}
    pending = {submit(u): u["index"] for u in units}
    done = set()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=5.0)
        for ref in ready:
            index = pending.pop(ref)
            unit = by_index[index]
            try:
                result = ray.get(ref)
            except RayTaskError as e:  # this module's task itself raised: a bug or a full disk, not a lost worker
                done.add(index)
                emit(event="done", index=index, exit_code=-1, signal=0, timed_out=False,
                     stderr_tail=f"the Ray task failed: {lost_reason(e.cause or e)}", attempts=attempts[index])
                continue
            except RayError as e:  # the worker or its node died (killed, out of memory, node lost)
                if attempts[index] <= retries:
                    attempts[index] += 1
                    emit(event="retry", index=index, attempt=attempts[index], reason=lost_reason(e))
                    pending[submit(unit)] = index
                else:
                    done.add(index)
                    emit(event="done", index=index, attempts=attempts[index],
                         lost=f"{lost_reason(e)} (after {attempts[index]} attempts)")
                continue
            bring_home(unit, result)
            done.add(index)
            emit(event="done", index=index, attempts=attempts[index], **result)
    assert done == set(by_index), "every unit reported once"
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parity._ray_executor", description=__doc__.splitlines()[0])
    parser.add_argument("--units", help="the matrix's units file (JSON)")
    parser.add_argument("--address", default="", help="a Ray cluster (ray://host:10001, host:6379, auto); "
                        "none: a Ray instance on this machine (ray.init())")
    parser.add_argument("--check", action="store_true", help="only check that Ray can be imported")
    parser.add_argument("--store", default=None, metavar="URL", help="with --check: an fsspec URL to reach")
    args = parser.parse_args(argv)
    try:
        import ray  # noqa: F401
    except ImportError as e:
        print(f"error: `parity matrix --ray` needs Ray in {sys.executable}'s environment "
              f"(pip install 'parity[ray]'): {e}", file=sys.stderr)
        return 2
    if args.check:
        if args.store:
            try:
                fs, path = _fsspec().core.url_to_fs(args.store)
                fs.makedirs(path, exist_ok=True)
            except Exception as e:  # no fsspec, an unknown protocol, no credentials: said before any work
                print(f"error: --artifacts {args.store}: {type(e).__name__}: {e}", file=sys.stderr)
                return 2
        return 0
    _end_with_the_matrix()
    return run(json.loads(Path(args.units).read_text()), args.address)


if __name__ == "__main__":
    sys.exit(main())
