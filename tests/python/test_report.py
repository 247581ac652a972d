"""report.html in headless Chromium: the page opens on its summary (family x mode counts, failures
first, a filter box), a case's section is drawn when opened (outputs, the error histogram and the
divergence path as inline SVG) and no JavaScript error is logged; the page stays under 1 MB for a
matrix-sized report. Also: `parity report` renders from report.json alone, and the peers columns."""
import json
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest
from test_end_to_end import parity

ROOT = Path(__file__).resolve().parents[2]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it)")


def browse(page: Path, fragment: str = ""):
    """(DOM after scripts ran, console lines Chromium logged)."""
    proc = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=10000", "--dump-dom", page.as_uri() + fragment],
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
def test_report_html_opens_on_the_summary_and_draws_a_case_when_opened(divergent_report, tmp_path):
    proc = parity("report", divergent_report, "--out", tmp_path)
    assert "report.html" in proc.stdout
    html = (tmp_path / "report.html").read_text()
    body = html.split("<body>")[1]
    assert "src=" not in body and "<link" not in html  # nothing fetched: one self-contained page
    dom, console = browse(tmp_path / "report.html")
    assert console == [], console
    assert '<table id="families">' in dom and "<td>mlp</td>" in dom  # the family x mode summary
    assert '<input id="filter"' in dom and "<h2>Failures (1)</h2>" in dom
    assert '<td><a href="#case-mlp_docs-strict">mlp_docs</a></td>' in dom
    assert "<svg" not in dom.split('<div id="details">')[1].split("<script")[0]  # drawn only when opened
    # Opened through the URL's fragment, the case's section draws its tables and charts.
    dom, console = browse(tmp_path / "report.html", "#case-mlp_docs-strict")
    assert console == [], console
    section = dom.split('id="case-mlp_docs-strict"')[1].split("<script")[0]
    assert (
        section.count('<svg class="chart"') >= 3 and "<rect" in section and "<polyline" in section
    )  # histogram, path, profile
    assert "First divergence" in section and "node_sigmoid_1" in section
    md = (tmp_path / "report.md").read_text()
    assert "FX node `sigmoid_1`" in md


@needs_chromium
def test_the_filter_box_hides_other_cases(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps(matrix_sized_report(3)))
    parity("report", report, "--out", tmp_path)
    page = tmp_path / "report.html"
    # The filter is typed by a tiny script appended to a copy of the page (Chromium has no typing flag).
    typed = tmp_path / "typed.html"
    typed.write_text(
        page.read_text().replace(
            "</body>",
            "<script>var b = document.getElementById('filter'); "
            "b.value = 'wav2vec2_1'; b.dispatchEvent(new Event('input'));</script></body>",
        )
    )
    dom, console = browse(typed)
    assert console == [], console
    rows = dom.split('<table id="summary"')[1].split("</table>")[0].split("<tr class=\"row")[1:]
    visible = [r for r in rows if not r.startswith(" hidden")]
    assert len(rows) == 15 and len(visible) == 1 and "model_wav2vec2_1" in visible[0], visible
    assert "1 of 15 cases" in dom


def matrix_sized_report(copies):
    """The real cases of tests/verify/data/report_schema2.json (a matrix run with peers: a pass, a refused
    capture, mutated buffers, an error, an official export failure), `copies` times under new names."""
    fixture = json.loads((ROOT / "tests" / "verify" / "data" / "report_schema2.json").read_text())
    cases = [dict(c, case=f"{c['case']}_{k}") for k in range(copies) for c in fixture["cases"]]
    return dict(fixture, cases=cases, summary=dict(fixture["summary"], total=len(cases)))


def test_the_page_of_a_matrix_sized_report_is_under_1_mb(tmp_path):
    report = tmp_path / "r.json"
    rep = matrix_sized_report(62)
    assert len(rep["cases"]) == 310
    report.write_text(json.dumps(rep))
    parity("report", report, "--out", tmp_path)
    size = (tmp_path / "report.html").stat().st_size
    assert size < 1_000_000, size
    # The page holds what it shows in its own compact form, not report.json: none of the report's
    # per-output comparison objects is embedded.
    html = (tmp_path / "report.html").read_text()
    assert '"refrt_vs_libtorch"' not in html and '"max_rel_error"' not in html


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
    md = (out / "report.md").read_text()
    assert "| ours/refrt | ours/ORT | official/refrt | official/ORT | ours nodes | official nodes |" in md
    # The node-count columns: each side's ONNX file, counted here by onnx itself.
    ours_nodes, official_nodes = len(onnx.load(alone).graph.node), len(official.graph.node)
    assert (peers["ours"]["nodes"], peers["official"]["nodes"]) == (ours_nodes, official_nodes), peers
    assert f"| pass | pass | pass | pass | {ours_nodes} | {official_nodes} |" in md, md
