"""docs/examples/quickstart.ipynb runs end to end (issue 52): every code cell, in order,
in one namespace, as a kernel would run them; any exception fails the test.

Why not nbclient and ipykernel: they would add a dozen packages to ``[test]`` (pyzmq,
tornado, IPython, debugpy, jupyter_client, nbformat…) and a kernel start to CI, to run
code that uses nothing of IPython. The notebook is kept free of what only a kernel
understands (``%`` magics, ``!`` shell lines, ``display``) — checked here — so running
its cells with ``exec`` runs the same code. Its stored outputs are kept empty, so the
file in the repository is the code alone and cannot show stale results.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import polars as pl
import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "examples" / "quickstart.ipynb"


def _cells() -> list[dict]:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    return notebook["cells"]


def test_the_notebook_is_code_a_plain_interpreter_runs_and_holds_no_outputs() -> None:
    code = [cell for cell in _cells() if cell["cell_type"] == "code"]
    assert len(code) >= 6
    for cell in code:
        assert cell["outputs"] == [] and cell["execution_count"] is None
        for line in "".join(cell["source"]).splitlines():
            assert not line.lstrip().startswith(("%", "!")), line
        assert "display(" not in "".join(cell["source"])


def test_every_code_cell_runs_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the DEBS cell writes its folder here
    namespace: dict[str, object] = {"__name__": "__main__"}
    printed = io.StringIO()
    for index, cell in enumerate(_cells()):
        if cell["cell_type"] != "code":
            continue
        with contextlib.redirect_stdout(printed):
            exec(compile("".join(cell["source"]), f"{NOTEBOOK.name} cell {index}", "exec"), namespace)  # noqa: S102
    # What the cells computed is what the markdown says they show.
    rankings = namespace["rankings"]
    assert isinstance(rankings, pl.DataFrame)
    assert rankings.columns == ["at", "trigger", "seq", "deleted", "room", "people", "mean_age"]
    assert rankings.schema["room"] == pl.String and isinstance(rankings.schema["mean_age"], pl.Decimal)
    assert rankings["room"].str.starts_with("http://example.org/").all()
    left = namespace["left"]
    assert isinstance(left, pl.DataFrame) and left["person"].to_list()[0] == "http://example.org/ann"
    q1 = namespace["q1"]
    assert isinstance(q1, pl.DataFrame) and q1.width == 23 and q1.height > 100
    assert (tmp_path / "quickstart-debs" / "summary.json").is_file()
    assert "'room': 'http://example.org/kitchen'" in printed.getvalue()
