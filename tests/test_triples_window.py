"""``[TRIPLES n]`` holds the last n triples of the stream, as CQELS defines it (issue 51,
item 4): a graph event is held whole while all its triples are among the last n, so the
window never holds more than n triples (docs/semantics.md, "Windows")."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner import register
from tests.engine_helpers import EX, Stream, play

PREFIX = "PREFIX ex: <http://example.org/>\n"


def engine(query: str, compiled: bool = True) -> Engine:
    built = Engine(config=EngineConfig(compiled=compiled))
    register(built, PREFIX + query, "q")
    return built


def counts(size: int, events: list[int], compiled: bool = True) -> list[int]:
    """COUNT(*) of the events held by a TRIPLES ``size`` window after each event; event i
    has ``events[i]`` triples (one ex:k triple, the rest ex:pad)."""
    built = engine(f"SELECT (COUNT(*) AS ?n) WHERE {{ STREAM <{EX}stream> [TRIPLES {size}] {{ ?e ex:k ?k }} }}",
                   compiled)
    stream = Stream(built)
    seen, current = [], 0
    for i, triples in enumerate(events):
        stream.send(i, (f"ex:e{i}", "ex:k", i), *[(f"ex:e{i}", "ex:pad", j) for j in range(triples - 1)])
        for output in stream.outputs:  # Istream/Dstream of the one COUNT row (no report: no change)
            if output.values():
                current = output.values()[0][0]
        stream.outputs.clear()
        seen.append(current)
    return seen


def test_graph_events_count_their_triples() -> None:
    # 2 triples: held 2; +3: 5 > 4, the first leaves; +1: 3 + 1 = 4 fits, both stay
    assert counts(4, [2, 3, 1]) == [1, 1, 2]
    # an event of 5 triples never fits in 4: it pushes everything out and is not held
    assert counts(4, [1, 1, 5, 1]) == [1, 2, 0, 1]


def test_on_a_triple_stream_it_is_the_last_n_events() -> None:
    assert counts(3, [1] * 6) == [1, 2, 3, 3, 3, 3]


def test_the_count_includes_triples_no_pattern_matches() -> None:
    # ex:pad triples match nothing, yet they take room in the window
    assert counts(3, [3, 3]) == [1, 1]
    assert counts(6, [3, 3, 3]) == [1, 2, 2]


def brute_force(size: int, sizes: list[int]) -> list[int]:
    """Events held after each arrival: the longest suffix whose triples total <= size."""
    held = []
    for end in range(1, len(sizes) + 1):
        total, count = 0, 0
        for triples in reversed(sizes[:end]):
            if total + triples > size:
                break
            total += triples
            count += 1
        held.append(count)
    return held


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(1, 9), sizes=st.lists(st.integers(1, 5), min_size=1, max_size=14))
def test_against_a_from_scratch_window(size: int, sizes: list[int]) -> None:
    expected = brute_force(size, sizes)
    assert counts(size, sizes, compiled=True) == expected
    assert counts(size, sizes, compiled=False) == expected


EVENTS = st.lists(st.tuples(st.sampled_from([0, 0.5, 1, 2]), st.sampled_from(["a", "b", 1]),
                            st.one_of(st.none(), st.sampled_from([1, 2, 3, -4])),
                            st.one_of(st.none(), st.sampled_from([5, 6]))), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(1, 12), events=EVENTS, ordered=st.booleans())
def test_compiled_and_reference_agree_on_graph_events(size: int, events, ordered: bool) -> None:
    """Events of 2 to 4 triples (ex:k, ex:seq, ex:v?, ex:w?): the compiled operators above
    the window (group, top-k) and the reference ones report the same after every event."""
    query = (f"SELECT ?k (SUM(?v) AS ?s) (COUNT(*) AS ?n) WHERE {{ STREAM <{EX}stream> [TRIPLES {size}] "
             "{ ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k")
    if ordered:
        query += " ORDER BY DESC(?n) ASC(?k) LIMIT 2"
    assert play(engine(query, True), events) == play(engine(query, False), events)
