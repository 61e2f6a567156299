"""ORDER BY with LIMIT/OFFSET edge values: every top-k operator (the compiled one, the
reference sorted list, TMA) reports what the reference does after every event, and a
from-scratch sort of the window agrees; ``LIMIT 0`` reports no rows (issue 51, item 5:
it raised IndexError in the compiled top-k)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner import register
from tests.engine_helpers import EX, play

PREFIX = "PREFIX ex: <http://example.org/>\n"
CONFIGS = {"compiled": EngineConfig(compiled=True), "reference": EngineConfig(compiled=False),
           "tma": EngineConfig(compiled=False, top_k="tma")}


def query(limit: int | None, offset: int, window: str = "RANGE 2m") -> str:
    text = (f"SELECT ?e ?v ?seq WHERE {{ STREAM <{EX}stream> [{window}] {{ ?e ex:seq ?seq ; ex:v ?v }} }} "
            "ORDER BY DESC(?v) DESC(?seq)")
    if limit is not None:
        text += f" LIMIT {limit}"
    return PREFIX + text + (f" OFFSET {offset}" if offset else "")


def outputs(config: str, text: str, events) -> list[tuple]:
    engine = Engine(config=CONFIGS[config])
    register(engine, text, "q")
    return play(engine, events)


EVENTS = st.lists(st.tuples(st.sampled_from([0, 0.5, 1, 3]), st.just("a"),
                            st.one_of(st.none(), st.integers(-3, 3)), st.none()), min_size=1, max_size=15)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=EVENTS, limit=st.sampled_from([0, 1, 2, 3, 100, None]), offset=st.sampled_from([0, 1, 2, 50]))
def test_every_top_k_reports_what_the_reference_does(events, limit, offset) -> None:
    text = query(limit, offset)
    expected = outputs("reference", text, events)
    assert outputs("compiled", text, events) == expected
    if limit is not None:  # TMA needs a LIMIT
        assert outputs("tma", text, events) == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=EVENTS, limit=st.sampled_from([0, 1, 2, None]), offset=st.sampled_from([0, 1, 3]))
def test_the_last_report_is_the_slice_of_the_sorted_stream(events, limit, offset) -> None:
    """ALL window: a report is made whenever the ordered result changes, so the last one
    is the final result: the sorted slice of every event (none: the slice is empty)."""
    arrived = sorted(((v, n) for n, (_, _, v, _) in enumerate(events, 1) if v is not None), reverse=True)
    want = arrived[offset:None if limit is None else offset + limit]
    for config in CONFIGS if limit is not None else ("compiled", "reference"):
        reports = outputs(config, query(limit, offset, "ALL"), events)
        final = [(int(r[1].lexical), int(r[2].lexical)) for r in reports[-1][2]] if reports else []
        assert final == want, config


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("offset", [0, 2])
def test_limit_0_reports_no_rows(config: str, offset: int) -> None:
    events = [(0, "a", 3, None), (0.5, "a", 1, None), (1, "a", 2, None), (3, "a", 5, None)]
    reports = outputs(config, query(0, offset), events)
    assert all(rows == [] for _, _, rows, _ in reports)
