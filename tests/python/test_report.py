"""report.html in headless Chromium: the summary table and a plotly figure are rendered and no
JavaScript error is logged. Also: `parity report` renders from report.json alone, and the peers columns."""
import json
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest

from test_end_to_end import parity

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it)")


def browse(page: Path):
    """(DOM after scripts ran, console lines Chromium logged)."""
    proc = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


@pytest.fixture(scope="module")
def divergent_report(captured, tmp_path_factory):
    """A report with outputs, a first divergence (a planted Sigmoid -> Relu) and a profile."""
    tmp = tmp_path_factory.mktemp("report")
    model = tmp / "ours.onnx"
    parity("export", captured / "mlp_docs" / "strict" / "model.pt2", "-o", model)
    proto = onnx.load(str(model))
    next(n for n in proto.graph.node if n.name == "node_sigmoid_1").op_type = "Relu"
    onnx.save(proto, str(tmp / "altered.onnx"))
    out = tmp / "verify"
    parity("verify", captured / "mlp_docs" / "strict", "--onnx", tmp / "altered.onnx", "--out", out,
           "--intermediates", "--no-html", check=False)
    assert not (out / "report.html").exists()
    return out / "report.json"


@needs_chromium
def test_browser_check_catches_a_script_error(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, console = browse(page)
    assert any("undefinedFunction" in line for line in console), console


@needs_chromium
def test_report_html_renders_table_and_plots_without_errors(divergent_report, tmp_path):
    proc = parity("report", divergent_report, "--out", tmp_path)
    assert "report.html" in proc.stdout
    html = (tmp_path / "report.html").read_text()
    assert "http://" not in html.split("<body>")[1].split("<script>")[0]  # nothing fetched: plotly is inline
    dom, console = browse(tmp_path / "report.html")
    assert console == [], console
    assert '<table id="summary" class="sortable">' in dom
    assert '<td><a href="#case-mlp_docs-strict">mlp_docs</a></td>' in dom
    assert 'id="fig-0"' in dom and "plot-container" in dom and "main-svg" in dom  # plotly drew into the divs
    assert dom.count('class="plot ') + dom.count('class="plot"') >= 3  # histogram, divergence path, profile
    assert "First divergence" in dom and "node_sigmoid_1" in dom
    md = (tmp_path / "report.md").read_text()
    assert "FX node `sigmoid_1`" in md


def test_report_rejects_what_is_not_a_report(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text('{"hello": 1}')
    proc = parity("report", bad, check=False)
    assert proc.returncode == 3 and "not a Parity report" in proc.stderr
    bad.write_text(json.dumps({"schema_version": 99, "summary": {}, "cases": []}))
    proc = parity("report", bad, check=False)
    assert proc.returncode == 4 and "schema_version 99" in proc.stderr


def test_peers_columns(captured, tmp_path):
    case_dir = captured / "linear_regression" / "strict"
    out = tmp_path / "v"
    parity("verify", case_dir, "--out", out, "--peers", "--no-html")
    rep = json.loads((out / "report.json").read_text())
    peers = rep["cases"][0]["peers"]
    assert peers["ours"] == {**peers["ours"], "refrt": "pass", "ort": "pass"}
    assert peers["official"]["export"] == "ok"
    assert (peers["official"]["refrt"], peers["official"]["ort"]) == ("pass", "pass"), peers
    official = onnx.load(peers["official"]["onnx"])
    onnx.checker.check_model(official)
    assert rep["summary"]["peers"]["official_ort"]["pass"] == 1
    # Peers only judge: our model is the one `parity export` writes on its own.
    alone = tmp_path / "alone.onnx"
    parity("export", case_dir / "model.pt2", "-o", alone)
    assert alone.read_bytes() == (out / "model.onnx").read_bytes()
    assert "| ours/refrt | ours/ORT | official/refrt | official/ORT |" in (out / "report.md").read_text()
