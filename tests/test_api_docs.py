"""docs/api.md is runnable: its notebook example prints exactly the output shown below
it, and its other Python blocks run."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def _run(code: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__api_doc__"})  # noqa: S102 - the doc's own code
    return printed.getvalue()


def test_the_notebook_example_prints_what_the_doc_shows() -> None:
    blocks = _blocks()
    (kind, code), (shown_kind, shown) = blocks[0], blocks[1]
    assert (kind, shown_kind) == ("python", "text")
    assert shown.count("\n") >= 12, "the doc shows the example's output"
    assert _run(code) == shown


@pytest.mark.parametrize("index", [i for i, (kind, _) in enumerate(_blocks()) if kind == "python"][1:])
def test_the_other_python_blocks_run(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the DEBS block writes ./out
    printed = _run(_blocks()[index][1])
    assert printed.strip(), "each block prints what it shows"


def test_the_readme_python_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    (code,) = [body for kind, body in BLOCK.findall(section) if kind == "python"]
    monkeypatch.chdir(tmp_path)
    printed = _run(code)
    assert "event [{'room': IRI(value='http://example.org/hall'), 'n': 1}]" in printed
    assert (tmp_path / "out-api" / "summary.json").is_file()
