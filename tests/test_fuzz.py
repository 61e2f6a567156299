"""Fuzzing (hypothesis): hostile bytes into the Feeder and token soups into the parser.

Only documented errors may escape: the Feeder never raises on input, the parser only
raises QuerySyntaxError (with line:col) or, at translation, UnsupportedQueryError.
Longer runs: `pytest tests/test_fuzz.py -m slow` (see docs/reliability.md).
"""

from __future__ import annotations

import csv
import io
import os
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.feeder import Feeder
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


# --- A seeded mutation loop, checked line by line against the test oracle ----------------
# Hypothesis draws short lists (a handful of lines per example), so a million fuzzed lines
# would take hours through it; this loop mutates whole files of real lines instead and
# compares every verdict (accepted seq or reject reason) with tests/oracle/records.py.

ALL_REAL = (Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015"
                           / "sample20d_first10004.csv").read_bytes().splitlines()
HOSTILE_FIELDS = [b"", b" ", b"NaN", b"inf", b"-INF", b"1e3", b"4.07e1", b"\xd9\xa4\xd9\xa0.7", b"+-1",
                  b"2013-02-30 00:00:00", b"2013-01-01 25:00:00", b"2013-1-1 0:0:0", b"\x00", b"\xff\xfe",
                  b"-", b".", b"0x10", b"  -73.98 ", b"2013-01-01T00:00:00", b"\r", b'"a,b"']


def random_mutation(line: bytes, rng: random.Random) -> bytes:
    """One hostile edit of a real line (a byte-level or a field-level change)."""
    action = rng.randrange(9)  # 7 is a digit change; in a drop-off year it rejects the rest
    i = rng.randrange(len(line) + 1)
    if action == 0:
        return line[:i] + bytes([rng.randrange(256)]) + line[i + 1:]
    if action == 1:
        return line[:i]
    if action == 2:
        return line[:i] + rng.randbytes(rng.randint(1, 8)) + line[i:]
    fields = line.split(b",")
    j, k = rng.randrange(len(fields)), rng.randrange(len(fields))
    if action == 3:
        fields.insert(j, fields[j])
    elif action == 4:
        del fields[j]
    elif action == 5:
        fields[j], fields[k] = fields[k], fields[j]
    elif action == 6:
        fields[j] = rng.choice(HOSTILE_FIELDS)
    elif action == 7 and len(fields[j]) > 1:  # a digit changed: moves times back, coordinates away
        digits = [n for n, b in enumerate(fields[j]) if 48 <= b <= 57]
        if digits:
            n = rng.choice(digits)
            fields[j] = fields[j][:n] + bytes([48 + rng.randrange(10)]) + fields[j][n + 1:]
    else:
        fields[j] = fields[j] + b"0" * rng.randint(1, 12)  # long, still valid decimals
    return b",".join(fields)


def mutated_file(rng: random.Random, lines: int, rate: float) -> bytes:
    """``lines`` contiguous real lines (mostly in time order), a share ``rate`` mutated,
    some swapped with a neighbour (out of order); now and then a huge field or a missing final newline."""
    start = rng.randrange(len(ALL_REAL) - lines) if lines < len(ALL_REAL) else 0
    chosen = [ALL_REAL[(start + n) % len(ALL_REAL)] for n in range(lines)]
    out = [random_mutation(line, rng) if rng.random() < rate else line for line in chosen]
    for _ in range(lines // 200):  # neighbours swapped: a far jump would reject the rest
        a = rng.randrange(lines)
        b = min(lines - 1, a + rng.randint(1, 5))
        out[a], out[b] = out[b], out[a]
    if rng.random() < 0.01:
        out[rng.randrange(lines)] += b"9" * rng.randint(1 << 16, 1 << 20)
    return b"\n".join(out) + (b"\n" if rng.random() < 0.9 else b"")


# A rejected line is copied whole into rejects.csv, and the mutated files carry fields of
# up to 1 MiB: Python's csv reader refuses fields over 128 KiB unless told otherwise.
csv.field_size_limit(1 << 30)


def check_against_oracle(payload: bytes, directory: Path) -> int:
    """Feed ``payload`` and compare every line's verdict with the oracle; lines read."""
    from tests.oracle.records import read_file

    path = directory / "mutated.csv"
    path.write_bytes(payload)
    rejects = io.StringIO()
    feeder = Feeder(path, Dictionary(), rejects)
    seqs = [event.seq for event in feeder]
    trips, oracle_rejects, lines = read_file(path)
    assert feeder.stats.lines_read == lines == feeder.stats.accepted + sum(feeder.stats.rejected.values())
    assert seqs == [t.seq for t in trips]
    rows = list(csv.reader(io.StringIO(rejects.getvalue())))[1:]  # needs the raised field limit below
    assert [(int(r[0]), r[1]) for r in rows] == [(r.line_no, r.reason) for r in oracle_rejects]
    assert feeder.stats.outliers["q1"] == sum(t.q1_route is None for t in trips)
    assert feeder.stats.profit_excluded == sum(t.profit_cents is None for t in trips)
    return lines


def mutation_loop(total_lines: int, seed: int, directory: Path) -> dict:
    """Fuzz until ``total_lines`` lines were fed; failures are collected, not raised, so
    a long run reports every kind of failure it met."""
    rng = random.Random(seed)
    fed = files = 0
    failures: Counter[str] = Counter()
    started, cpu = time.perf_counter(), time.process_time()
    while fed < total_lines:
        payload = mutated_file(rng, rng.randint(1, 5000), rng.choice([0.01, 0.05, 0.3, 1.0]))
        files += 1
        try:
            fed += check_against_oracle(payload, directory)
        except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
            failures[f"{type(exc).__name__}: {str(exc)[:200]}"] += 1
            (directory / f"failure{files}.csv").write_bytes(payload)
            fed += payload.count(b"\n") + 1
    return {"lines": fed, "files": files, "failures": dict(failures),
            "wall_s": round(time.perf_counter() - started, 1), "cpu_s": round(time.process_time() - cpu, 1)}


def test_mutation_loop_agrees_with_oracle(tmp_path: Path) -> None:
    result = mutation_loop(20_000, seed=1, directory=tmp_path)
    assert not result["failures"], result


@pytest.mark.slow
def test_long_mutation_loop(tmp_path: Path) -> None:
    """≥ 10⁶ fuzzed lines; prints the figures recorded in docs/reliability.md."""
    result = mutation_loop(int(os.environ.get("FUZZ_LINES", "1200000")), seed=2015, directory=tmp_path)
    print(result)
    assert not result["failures"], result
