"""`run --live` and `view` in headless Chromium (Debian's ``chromium``, driven by
Playwright): the page shows the routes of the last q1.csv line written at that moment,
its event time advances during the run, and the view's slider steps through the lines.

Needs ``chromium`` on PATH (``apt-get install -y chromium``) and Playwright's Python
package (in the ``[test]`` extra); without them the tests are skipped, saying why.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from taxi_rsp.cli import main as cli_main
from taxi_rsp.viz.answers import read_answers

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
URL = re.compile(r"(http://127\.0\.0\.1:\d+/)")

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def browser() -> Iterator:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (as root: apt-get update && apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is in the [test] extra")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


class Served:
    """A `taxi-rsp` command serving a page: its URL (read from its output) and its lines."""

    def __init__(self, args: list[str]) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "taxi_rsp", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: list[str] = []
        self.url_known = threading.Event()
        self.url = ""
        threading.Thread(target=self._read, daemon=True).start()
        if not self.url_known.wait(120):
            self.stop()
            pytest.fail("no URL printed: " + "".join(self.lines))

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.lines.append(line)
            match = URL.search(line)
            if match and not self.url:
                self.url = match.group(1)
                self.url_known.set()

    def stop(self) -> int:
        """Ends the command as Ctrl-C or a service manager would (SIGTERM); its exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


def _routes(answer) -> str:
    return " ".join(f"{r.start}>{r.end}" for r in answer.entries)


def test_live_page_follows_the_run(browser, tmp_path: Path) -> None:
    out = tmp_path / "live"
    served = Served(["run", str(SAMPLE), "--out", str(out), "--live", "--port", "0", "--live-wait"])
    try:
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(served.url)
        # Ten routes on the map, then the run's end.
        page.wait_for_function("(document.body.dataset.routes || '').split(' ').length === 10", timeout=120_000)
        page.wait_for_function("window.taxiState && window.taxiState.done", timeout=120_000)
        states = page.evaluate("window.taxiStates")
        assert page.is_hidden("#player")  # the slider is the view's
        page.click("#fit")  # zoom to the answers: the map redraws without an error
        if os.environ.get("TAXI_RSP_SCREENSHOTS"):
            page.screenshot(path=str(Path(os.environ["TAXI_RSP_SCREENSHOTS"]) / "live.png"))
        page.mouse.move(400, 400)
        page.mouse.wheel(0, -300)  # and with the wheel
        page.mouse.down()
        page.mouse.move(300, 350)  # and dragged
        page.mouse.up()
        assert not errors, errors
        assert served.stop() == 0, "".join(served.lines)
    finally:
        if served.process.poll() is None:
            served.process.kill()
    q1 = read_answers(out / "q1.csv", "q1")
    q2 = read_answers(out / "q2.csv", "q2")
    times = [s["time"] for s in states if s["time"]]
    assert len(set(times)) >= 2, times  # the event time advanced while the page watched
    assert times == sorted(times)
    assert states[-1]["done"] and states[-1]["time"] == q1[-1].time == "2013-01-01 00:56:00"
    checked = 0
    for state in states:
        shown = state["queries"].get("q1")  # the first state, before the queries are registered, has none
        if shown and shown["line"]:
            # The routes on the page are those of the last q1.csv line written at that moment.
            written = q1[shown["line"] - 1]
            assert [f"{r['start']}>{r['end']}" for r in shown["rows"]] == _routes(written).split(), state["time"]
            cells = state["queries"]["q2"]
            if cells["line"]:
                assert [c["cell"] for c in cells["rows"]] == [a.cell for a in q2[cells["line"] - 1].entries]
            checked += 1
    assert checked >= 2
    assert states[-1]["queries"]["q1"]["line"] == len(q1)
    assert all(r["count"] >= 1 for r in states[-1]["queries"]["q1"]["rows"])


def test_view_slider_steps_through_the_answers(browser, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli_main(["run", str(SAMPLE), "--out", str(out), "--no-progress"]) == 0
    q1 = read_answers(out / "q1.csv", "q1")
    served = Served(["view", str(out), "--input", str(SAMPLE), "--port", "0"])
    try:
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(served.url)
        page.wait_for_function("document.body.dataset.step !== undefined", timeout=60_000)
        count = int(page.get_attribute("#slider", "max")) + 1
        instants = sorted({a.time for a in q1} | {a.time for a in read_answers(out / "q2.csv", "q2")})
        assert count == len(instants)
        assert page.get_attribute("body", "data-step") == str(count - 1)  # opens at the end of the run
        for step in (0, 5, count // 2, count - 2):
            page.locator("#slider").fill(str(step))
            page.wait_for_function(f"document.body.dataset.step === '{step}'")
            time = page.get_attribute("body", "data-time")
            assert time == instants[step]
            last = [a for a in q1 if a.time <= time]
            assert page.get_attribute("body", "data-routes") == (_routes(last[-1]) if last else "")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.body.dataset.step === '{count - 1}'")
        assert page.get_attribute("body", "data-routes") == _routes(q1[-1])
        if os.environ.get("TAXI_RSP_SCREENSHOTS"):
            page.locator("#slider").fill(str(count * 3 // 4))
            page.wait_for_function(f"document.body.dataset.step === '{count * 3 // 4}'")
            page.click("#fit")
            page.screenshot(path=str(Path(os.environ["TAXI_RSP_SCREENSHOTS"]) / "view.png"))
        assert not errors, errors
        assert served.stop() == 0, "".join(served.lines)
    finally:
        if served.process.poll() is None:
            served.process.kill()
