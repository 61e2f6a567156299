"""Every docstring example in the package runs (``>>>`` lines are documentation that
cannot drift): each module of ``taxi_rsp`` (``taxi_rsp.feeder`` and ``taxi_rsp.listener``
included) whose source holds an example is imported and its examples are run."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# optional extras or a display the example needs: their own tests run them
NEEDS_EXTRA = {"taxi_rsp.baseline", "taxi_rsp.verify.plots", "taxi_rsp.viz", "taxi_rsp.data.profile_polars",
               "taxi_rsp.session.frames"}


def _modules() -> list[str]:
    folders = {"taxi_rsp": ROOT / "taxi_rsp", "taxi_rsp.feeder": ROOT / "feeder", "taxi_rsp.listener": ROOT / "listener"}
    names = []
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            if ">>>" not in path.read_text(encoding="utf-8"):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            if not name.startswith(tuple(NEEDS_EXTRA)):
                names.append(name)
    return names


MODULES = _modules()


def test_the_examples_are_found() -> None:
    assert len(MODULES) > 40  # not a silently empty parametrisation


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
