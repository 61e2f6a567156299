"""Fuzzing (hypothesis): hostile bytes into the Feeder and token soups into the parser.

Only documented errors may escape: the Feeder never raises on input, the parser only
raises QuerySyntaxError (with line:col) or, at translation, UnsupportedQueryError.
Longer runs: `pytest tests/test_fuzz.py -m slow` (see docs/reliability.md).
"""

from __future__ import annotations

import io
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeder import Feeder
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.errors import QuerySyntaxError, UnsupportedQueryError
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.rdf.dictionary import Dictionary

REAL = (Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015"
        / "sample20d_first10004.csv").read_bytes().splitlines()[:200]
QUERIES = [p.read_text() for p in (Path(__file__).resolve().parents[1] / "queries").glob("*.cqels")]
TOKENS = ["SELECT", "WHERE", "{", "}", "(", ")", "?x", "?y", "STREAM", "<http://s>", "[", "]", "RANGE",
          "30m", "FILTER", "BIND", "AS", ".", ";", ",", "COUNT", "MEDIAN", "GROUP", "BY", "ORDER", "DESC",
          "LIMIT", "10", "1.5", '"s"', "ex:p", "PREFIX", "ex:", "NOT", "EXISTS", "OPTIONAL", "MINUS", "UNION",
          "+", "-", "*", "/", "&&", "||", "<", ">=", "=", "!", "a", "${w}", "TRIPLES", "NOW", "ALL", "#c\n"]


def mutate_line(line: bytes, data) -> bytes:
    action = data.draw(st.sampled_from(["flip", "cut", "insert", "dup_field", "drop_field"]))
    if not line:
        return line
    i = data.draw(st.integers(0, len(line) - 1))
    if action == "flip":
        return line[:i] + bytes([data.draw(st.integers(0, 255))]) + line[i + 1:]
    if action == "cut":
        return line[:i]
    if action == "insert":
        return line[:i] + data.draw(st.binary(max_size=8)) + line[i:]
    fields = line.split(b",")
    j = data.draw(st.integers(0, len(fields) - 1))
    if action == "dup_field":
        return b",".join(fields[:j] + [fields[j]] + fields[j:])
    return b",".join(fields[:j] + fields[j + 1:])


def feed_bytes(payload: bytes) -> Feeder:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.csv"
        path.write_bytes(payload)
        feeder = Feeder(path, Dictionary(), io.StringIO())
        times = [event.time for event in feeder]
    assert times == sorted(times)
    stats = feeder.stats
    assert stats.lines_read == stats.accepted + sum(stats.rejected.values())
    expected_lines = payload.count(b"\n") + (0 if payload.endswith(b"\n") or not payload else 1)
    assert stats.lines_read == expected_lines
    return feeder


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_feeder_survives_mutated_real_lines(data) -> None:
    lines = data.draw(st.lists(st.sampled_from(REAL), min_size=1, max_size=20))
    mutated = [mutate_line(line, data) if data.draw(st.booleans()) else line for line in lines]
    feed_bytes(b"\n".join(mutated) + data.draw(st.sampled_from([b"", b"\n", b"\r\n"])))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=10))
def test_feeder_survives_random_bytes(lines) -> None:
    feed_bytes(b"\n".join(lines))


def check_query(text: str) -> None:
    try:
        translate_query(parse_query(text))
    except QuerySyntaxError as exc:
        assert re.match(r"<query>:\d+:\d+: ", str(exc)), str(exc)
        assert exc.line >= 1 and exc.column >= 1
    except UnsupportedQueryError as exc:
        assert str(exc)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_parser_token_soup(tokens) -> None:
    check_query(" ".join(tokens))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(QUERIES), st.data())
def test_parser_mutated_queries(query, data) -> None:
    i = data.draw(st.integers(0, len(query)))
    j = data.draw(st.integers(i, min(len(query), i + 20)))
    check_query(query[:i] + data.draw(st.sampled_from(TOKENS + ["", "}", "{{"])) + query[j:])


@pytest.mark.slow
@settings(max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_long_feeder_fuzz(data) -> None:
    lines = data.draw(st.lists(st.sampled_from(REAL), min_size=1, max_size=50))
    feed_bytes(b"\n".join(mutate_line(line, data) for line in lines))


@pytest.mark.slow
@settings(max_examples=100_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_long_parser_fuzz(tokens) -> None:
    check_query(" ".join(tokens))
