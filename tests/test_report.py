"""`taxi-rsp report` end to end on a small real slice: tables, figures, and the page
rendering in headless Chromium (the plots must decode to real images)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from taxi_rsp.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
FIGURES = ("delay_cdf", "delay_over_stream", "throughput", "window_sweep", "map_q1", "map_q2", "map_strip")

pytestmark = [pytest.mark.spark, pytest.mark.timeout(2400)]  # a hang guard: the shared Spark batch needs minutes idle, far more under load


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("report")
    data = work / "slice.csv"
    with SAMPLE.open("rb") as source:  # 400 real lines: about 25 minutes of stream
        data.write_bytes(b"".join(source.readline() for _ in range(400)))
    assert cli_main(["report", str(data), "--out", str(work / "out"), "--sweep", "30", "--repeat", "2"]) == 0
    return work / "out"


def test_table1_and_sweep(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "slice.csv` (400 lines)" in text and "Machine:" in text and "Repetitions: 2 run(s)" in text
    header = next(l for l in text.splitlines() if l.startswith("| workload: query |"))
    for column in ("engine delay, end to end: mean (ms)", "engine delay p99 (ms)",
                   "baseline compute per output line: mean (ms)", "engine lines/s", "baseline peak RSS (MiB)"):
        assert f"| {column} |" in header
    number = r"[0-9,.]+"
    for row in ("| q1: q1 |", "| q2: q2 |", "| mixed: q1 |", "| mixed: q2 |"):
        line = next(l for l in text.splitlines() if l.startswith(row))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[-1] == "identical"
        # A median, and for a measured mean or time its range over the two runs.
        assert all(re.fullmatch(rf"{number}( \({number}–{number}\))?×?", c) for c in cells[1:-1]), line
        assert re.fullmatch(rf"{number} \({number}–{number}\)", cells[5]), line  # engine exec: median (min–max)
    assert re.search(r"\* mixed: the (engine|baseline) won, [0-9,.]+× less execution time", text)
    # 400 lines are 12 minutes of data: the 30-minute sweep point is flagged, not shown as meaningful.
    sweep = next(l for l in text.splitlines() if l.startswith("| 30 / 15–30 |"))
    assert sweep.endswith("| window longer than the data |")
    assert "Data warning: q1: window 30 min is longer than the data" in text
    for name in FIGURES:
        assert (report / f"{name}.png").read_bytes().startswith(b"\x89PNG")


def test_html_is_self_contained(report: Path) -> None:
    page = (report / "report.html").read_text(encoding="utf-8")
    assert page.count("src='data:image/png;base64,") == len(FIGURES)
    assert not re.search(r"src=['\"](?!data:)", page)
    links = re.findall(r"href=['\"]([^'\"]*)", page)
    assert links and all(link.startswith("runs/") for link in links)  # relative: the folder can move
    assert "`" not in page  # Markdown code spans became <code>
    assert page.count("slice.csv (400 lines)") >= len(FIGURES)  # every figure names data and machine


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.browser
def test_plots_render_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    # A copy of the page with a probe that records each plot's decoded pixel size.
    probe = ("<script>window.addEventListener('load',()=>{document.body.setAttribute('data-plots',"
             "[...document.querySelectorAll('img.plot')].map(i=>i.complete?i.naturalWidth+'x'+i.naturalHeight:'0x0')"
             ".join(' '));document.body.setAttribute('data-tables',[...document.querySelectorAll('table')]"
             ".map(t=>t.querySelectorAll('tbody tr').length).join(' '));});</script>")
    page = tmp_path / "probe.html"
    page.write_text((report / "report.html").read_text(encoding="utf-8").replace("</body>", probe + "</body>"),
                    encoding="utf-8")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
               "--virtual-time-budget=5000", "--dump-dom", page.as_uri()]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False).stdout
    match = re.search(r'data-plots="([^"]*)"', dom)
    assert match, dom[:500]
    sizes = [tuple(int(v) for v in s.split("x")) for s in match.group(1).split()]
    assert len(sizes) == len(FIGURES)
    assert all(w >= 400 and h >= 200 for w, h in sizes), sizes
    tables = re.search(r'data-tables="([^"]*)"', dom)
    assert tables and [int(n) for n in tables.group(1).split()] == [4, 1]  # Table 1: 4 rows; the sweep: 1


def test_a_report_from_reused_run_folders_says_so(report: Path) -> None:
    """`--reuse` reads the run folders an earlier command left (their commit and machine
    may differ from the report's): the header names them and the command keeps the flag.
    Runs last in this module: it rewrites the shared report."""
    assert cli_main(["report", str(report.parent / "slice.csv"), "--out", str(report), "--sweep", "30",
                     "--repeat", "2", "--reuse"]) == 0
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "--repeat 2 --reuse`" in text
    assert "* Reused (`--reuse`: read from the run folders of an earlier command, not run again): " \
           "baseline q1, q2, mixed; engine q1, q2, mixed" in text
