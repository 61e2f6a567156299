"""The W3C SPARQL 1.1 query test suite against the engine (one-shot evaluation over
static data; harness in tests/w3c_harness.py, suite and licence in tests/data/w3c-sparql11).

Every test must pass except those in KNOWN, each with the reason (docs/cqels-ql.md has
the table); a KNOWN test that starts passing fails here too, so the list stays honest.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from w3c_harness import load_cases, run_case, table

KNOWN: dict[str, str] = {}  # test id -> why it does not pass (none at present)

CASES = load_cases()


def test_every_directory_is_loaded() -> None:
    directories = {case.directory for case in CASES}
    assert len(directories) == 13 and len(CASES) > 300


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_w3c_case(case) -> None:
    outcome = run_case(case)
    if case.id in KNOWN:
        assert outcome.status != "pass", f"{case.id} passes now: remove it from KNOWN"
    else:
        assert outcome.status == "pass", f"{outcome.status}: {outcome.detail}"


def test_docs_table_is_the_harness_table() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "cqels-ql.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- w3c-table: begin -->\n(.*?)\n<!-- w3c-table: end -->", docs, re.S)
    assert block is not None and block.group(1) == table([run_case(case) for case in CASES]), \
        "regenerate the table in docs/cqels-ql.md with: python tests/w3c_harness.py"
    for test in KNOWN:
        assert f"`{test}`" in docs, f"docs/cqels-ql.md does not explain {test}"
