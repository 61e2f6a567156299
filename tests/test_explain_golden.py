"""Golden ``--explain`` output of the shipped queries (Q1, Q2 and the ISWC 2011 five):
the logical plan, the physical operators (compiled or reference) and the RSP policies,
each query planned alone, with compiled plans and with the reference operators only.

A change of plan shape shows up here as a diff to review. When it is intended (a new
optimizer rule, a new compiled operator), rewrite the fixtures and commit them with the
change:

    .venv/bin/python -m pytest tests/test_explain_golden.py --update-golden
"""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.native import CGroupTable, group_table_class
from taxi_rsp.session import Session, SessionConfig

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden" / "explain"
QUERIES = {"q1": "q1", "q2": "q2",
           **{f"iswc-q{n}": str(ROOT / "queries" / "iswc2011" / f"q{n}.cqels") for n in range(1, 6)}}
MODES = {"compiled": EngineConfig(), "reference": EngineConfig(compiled=False)}


def explain(query: str, engine: EngineConfig) -> str:
    session = Session(SessionConfig.resolve([query], engine=engine))
    (info,) = session.infos
    return session.explain(info.name) + "\n"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("label", QUERIES)
def test_explain_matches_the_golden_file(label: str, mode: str, request: pytest.FixtureRequest) -> None:
    path = GOLDEN / f"{label}.{mode}.txt"
    text = explain(QUERIES[label], MODES[mode])
    if mode == "compiled" and group_table_class() is not CGroupTable:
        pytest.skip("the golden plans name the native state; this process runs its pure-Python twin")
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden file {path.name}: run this test with --update-golden"
    assert text == path.read_text(encoding="utf-8"), (
        f"--explain of {label} ({mode}) changed; if intended: pytest {Path(__file__).name} --update-golden")


def test_every_shipped_query_has_a_golden_file() -> None:
    shipped = {p.stem for p in (ROOT / "queries").glob("*.cqels")} | \
              {f"iswc-{p.stem}" for p in (ROOT / "queries" / "iswc2011").glob("*.cqels")}
    assert shipped == set(QUERIES)
    assert {p.name for p in GOLDEN.glob("*.txt")} == {f"{q}.{m}.txt" for q in QUERIES for m in MODES}
