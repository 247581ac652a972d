"""`parity matrix --ray ADDRESS` on a real two-node Ray cluster: a head and a second node started here as separate
processes (`ray start --head`, `ray start --address`), one CPU each. The second node is killed (its whole process
group: raylet, object store, workers and the verify child a worker runs) while the matrix runs on it. Every
(case, mode) must still be reported exactly once, with the verdict the local executor gives; the Ray run captures
every case again, in Ray capture units (python/parity/_ray_units.py), before its verify units.

The suite: the built-in op_* cases (27) and suite_failing.py's case (a fail), one pair made to crash through the
verify child's test hook, so that the verdicts compared are not all passes. One more pair loses its Ray worker on
every attempt: it must end as `error (worker lost: ...)` after the retries, the only verdict that differs."""
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from test_end_to_end import PARITY

RAY = Path(sys.executable).with_name("ray")
SUITE = ["--scenarios", Path(__file__).with_name("suite_failing.py"), "--with-builtin", "--filter", "^(op_|slot_)",
         "--modes", "nonstrict", "--no-peers"]
CRASH = "op_roll/nonstrict"
# On Ray, the worker that takes this unit kills itself at once (the driver's test hook, as an out-of-memory kill
# would): every attempt is lost, and the unit is reported as an error after the last retry. The local executor
# does not know the hook and verifies it.
LOSE = "op_sort/nonstrict"
# The crash hook reaches every verify child: the local run's and, through the environment `ray start` passes to
# its workers, the cluster's. The health check settings let the head declare a killed node dead within seconds
# (its default waits tens of seconds).
# Ray's token authentication with a token of this test's own (the GCS listens on every interface), given to the
# nodes, the driver and the probes alike; no ~/.ray/auth_token is read or written.
ENV = {"PARITY_TEST_ABORT": CRASH, "PARITY_TEST_LOSE_WORKER": LOSE,
       "RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "4",
       "RAY_health_check_initial_delay_ms": "1000", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
       "RAY_AUTH_TOKEN": secrets.token_hex(32)}
KILL_AFTER = 4  # results in before the second node is killed (as soon as it runs a unit)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(args, log: Path) -> subprocess.Popen:
    # Its own session: the node's processes can be killed as one group, as a lost machine would vanish.
    # A small object store: case folders and results of tiny cases (CI machines may have a small /dev/shm).
    node = subprocess.Popen([str(RAY), "start", "--block", "--num-cpus", "1", "--node-ip-address", "127.0.0.1",
                             "--object-store-memory", str(256 << 20), *args], stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **ENV})
    node.log = log
    return node


def stop(node: subprocess.Popen, sig=signal.SIGTERM, wait=30) -> None:
    if node.poll() is None:
        try:
            os.killpg(node.pid, sig)
            node.wait(timeout=wait)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(node.pid, signal.SIGKILL)
            node.wait(timeout=wait)


def descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def kill_while_verifying(node: subprocess.Popen, start: threading.Event, killed: list) -> None:
    """Once `start` is set, waits until a `parity verify` child runs under `node` (its raylet's worker's child)
    and kills the node's process group: the loss then certainly takes a running unit with it."""
    start.wait()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and node.poll() is None:
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if len(argv) > 1 and argv[0] == str(PARITY).encode() and argv[1] == b"verify" and descends_from(
                    int(proc.name), node.pid):
                killed.append(argv[2].decode())
                stop(node, signal.SIGKILL)
                return
        time.sleep(0.02)


def wait_for_nodes(address: str, count: int, nodes, timeout=120) -> None:
    code = ("import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
            "print(sum(n['Alive'] for n in ray.nodes()))")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for node in nodes:
            assert node.poll() is None, f"`ray start` exited: {node.log.read_text()[-3000:]}"
        proc = subprocess.run([sys.executable, "-c", code, address], capture_output=True, text=True, timeout=120,
                              env={**os.environ, **ENV})
        if proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == str(count):
            return
        time.sleep(1)
    raise AssertionError(f"the Ray cluster at {address} did not reach {count} nodes")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ray_matrix")
    proc = subprocess.run([str(PARITY), "matrix", "--out", str(out), "-j", "2", *map(str, SUITE)], capture_output=True,
                          text=True, timeout=900, env={**os.environ, **ENV})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # slot_ids_from_ties fails, op_roll crashes
    return out, json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def cluster():
    # A short temp dir: Ray's Unix socket paths must stay under 108 bytes.
    temp = Path(tempfile.mkdtemp(prefix="pray", dir="/tmp"))
    port = free_port()
    head = start_node(["--head", "--port", str(port), "--include-dashboard=false", "--temp-dir", str(temp)],
                      temp.with_suffix(".head.log"))
    nodes = [head]
    try:
        address = f"127.0.0.1:{port}"
        wait_for_nodes(address, 1, nodes)
        nodes.append(start_node(["--address", address], temp.with_suffix(".node.log")))
        wait_for_nodes(address, 2, nodes)
        yield address, nodes[1]
    finally:
        for node in reversed(nodes):
            stop(node)
        shutil.rmtree(temp, ignore_errors=True)


def test_matrix_on_two_ray_nodes_survives_losing_one(local_run, cluster):
    out, local = local_run
    address, second = cluster
    start = time.monotonic()
    # The same output folder, captured again (--force-capture): the capture units run on Ray too, then the verify
    # units; the verdicts must be the local run's.
    proc = subprocess.Popen([str(PARITY), "matrix", "--out", str(out), *map(str, SUITE), "--ray", address,
                             "--force-capture"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ENV})
    watchdog = threading.Timer(600, proc.kill)  # a hang fails the test instead of stopping the suite
    watchdog.start()
    go, killed = threading.Event(), []
    killer = threading.Thread(target=kill_while_verifying, args=(second, go, killed))
    killer.start()
    lines, results = [], 0
    for line in proc.stdout:
        lines.append(line)
        if re.match(r"\[\d+/\d+\] ", line):
            results += 1
            if results == KILL_AFTER:
                go.set()
    go.set()
    killer.join()
    for path in killed:  # the lost attempt's temporary folder (its node is gone, nobody else removes it)
        if Path(path).parents[2].name.startswith("parity-unit-"):
            shutil.rmtree(Path(path).parents[2], ignore_errors=True)
    stderr = proc.stderr.read()
    proc.wait(timeout=600)
    watchdog.cancel()
    text = "".join(lines)
    seconds = time.monotonic() - start
    assert proc.returncode == 1, text + stderr
    assert "ray: 2 nodes" in text, text
    # Every case captured afresh, by the Ray capture units.
    assert re.search(r"^capturing scenarios .* on Ray \.\.\.$", text, re.M), text
    captured = re.findall(r"^  capture (\S+)/(\S+): (\S+) ", text, re.M)
    assert len(captured) == len(local["cases"]) and {s for _, _, s in captured} == {"captured"}, text
    assert killed, "the second node ran no unit after the first results: nothing was lost"
    # The kill hit work on the second node: that unit was run again elsewhere, once, and passed there.
    lost_case = Path(killed[0]).parent.name
    assert re.search(rf"^  retry {lost_case}/nonstrict \(attempt 2\): NodeDiedError", text, re.M), text
    # The unit whose worker always dies: run 3 times (--ray-retries 2), then an error naming the loss.
    assert len(re.findall(rf"^  retry {LOSE} \(attempt [23]\): ", text, re.M)) == 2, text

    ray_report = json.loads((out / "report.json").read_text())
    pairs = [(c["case"], c["mode"]) for c in ray_report["cases"]]
    assert len(pairs) == len(set(pairs)) == len(local["cases"]) >= 20
    # Exactly one progress line per pair.
    finished = re.findall(r"^\[\d+/(\d+)\] (\S+)/(\S+?)\s", text, re.M)
    assert sorted((c, m) for _, c, m in finished) == sorted(pairs) and {n for n, _, _ in finished} == {str(len(pairs))}
    verdict = lambda rep: {(c["case"], c["mode"]): (c["status"], c["max_abs_error"]) for c in rep["cases"]}
    lost = verdict(ray_report).pop(tuple(LOSE.split("/")))
    entry = next(c for c in ray_report["cases"] if f"{c['case']}/{c['mode']}" == LOSE)
    assert lost == ("error", None) and entry["error"].startswith("worker lost: WorkerCrashedError"), entry
    assert entry["error"].endswith("(after 3 attempts)") and entry["stage"] == "verify", entry
    expected = verdict(local)
    assert expected.pop(tuple(LOSE.split("/")))[0] == "pass"
    got = verdict(ray_report)
    got.pop(tuple(LOSE.split("/")))
    assert got == expected
    statuses = {c["status"] for c in local["cases"]}
    assert {"pass", "fail", "crashed"} <= statuses, statuses
    print(f"ray run: {len(pairs)} pairs in {seconds:.0f} s, second node killed after {KILL_AFTER} results while it "
          f"verified {killed[0]}")
    print("".join(line for line in lines if line.startswith("  retry") or "(attempt" in line))


def test_cluster_docs_manifests_parse_and_use_declared_options():
    """docs/cluster/: the KubeRay manifest and the GitHub Actions workflow are valid YAML of the right shape, and
    every `parity` command in them and in docs/cluster.md uses only options the binary declares."""
    import yaml
    from test_cli_help import declared_options

    docs = Path(__file__).resolve().parents[2] / "docs"
    kinds = {d["kind"]: d for d in yaml.safe_load_all((docs / "cluster" / "raycluster.yaml").read_text())}
    cluster = kinds["RayCluster"]
    assert cluster["apiVersion"] == "ray.io/v1" and cluster["spec"]["workerGroupSpecs"]
    assert kinds["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]
    workflow = (docs / "cluster" / "github-actions.yml").read_text()
    steps = [s for job in yaml.safe_load(workflow)["jobs"].values() for s in job["steps"]]
    assert any("junit" in str(s.get("with", {})) for s in steps)
    # The workflow's run scripts as YAML reads them (folded lines joined), then the page's lines.
    text = "\n".join(s["run"] for s in steps if "run" in s) + "\n" + (docs / "cluster.md").read_text()
    commands = re.findall(r"parity (matrix|report|verify)([^\n\"]*)", re.sub(r"\\\n\s*", " ", text))
    assert len(commands) >= 6, commands
    for command, rest in commands:
        declared = set().union(*declared_options(command))
        used = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest.split(";")[0]))
        assert used <= declared, (command, rest, used - declared)
