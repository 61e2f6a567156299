"""A Feeder told which predicates its consumers match leaves out the terms none reads
(issue 15 §2: no RDF term is made where nothing needs it), and a run tells it exactly
the predicates its queries can match — never fewer.

The medallion, hack licence, payment type, trip time and distance are only terms (no
check reads their value; the medallion is checked for being there, and still is): left
out, their triples are absent, as for an amount that does not parse.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from taxi_lines import line

from taxi_rsp.algebra.analysis import stream_predicates
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.cli import main
from taxi_rsp.feeder import Feeder
from taxi_rsp.feeder import vocabulary as V
from taxi_rsp.feeder.reader import OPTIONAL_TERMS
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import STREAMS
from taxi_rsp.rdf.terms import IRI

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
TRIPS = STREAMS + "trips"
PREFIX = "PREFIX taxi: <http://debs2015.org/taxi#>\n"


def predicates(*queries: str) -> frozenset[str] | None:
    return stream_predicates([translate_query(parse_query(PREFIX + q)).root for q in queries], TRIPS)


def events(native: bool, read: frozenset[str] | None, data: bytes, dictionary: Dictionary | None = None) -> list[tuple]:
    feeder = Feeder(Path("lines.csv"), Dictionary() if dictionary is None else dictionary, io.StringIO(), lines=io.BytesIO(data),
                    native=native, read=read)
    return [(e.seq, e.time, e.triples.objects, tuple(e.triples)) for e in feeder]


# -- which predicates a plan can match -----------------------------------------------------------

def test_the_predicates_of_every_pattern_over_the_stream() -> None:
    q = (f"SELECT ?t WHERE {{ STREAM <{TRIPS}> [RANGE 30m] {{ ?t taxi:medallion ?m ; taxi:seq ?s }} "
         f"FILTER NOT EXISTS {{ STREAM <{TRIPS}> [RANGE 30m] {{ ?u taxi:tripDistance ?d }} }} }}")
    assert predicates(q) == {V.PREDICATES["medallion"], V.PREDICATES["seq"], V.PREDICATES["tripDistance"]}


def test_patterns_inside_expressions_and_sub_selects_count() -> None:
    exists = (f"SELECT ?t WHERE {{ STREAM <{TRIPS}> [RANGE 1m] {{ ?t taxi:seq ?s }} "
              f"BIND(EXISTS {{ STREAM <{TRIPS}> [RANGE 1m] {{ ?t taxi:paymentType ?p }} }} AS ?cash) }}")
    assert V.PREDICATES["paymentType"] in predicates(exists)
    sub = (f"SELECT ?n WHERE {{ {{ SELECT (COUNT(?h) AS ?n) WHERE {{ STREAM <{TRIPS}> [RANGE 1m] "
           f"{{ ?t taxi:hackLicense ?h }} }} }} }}")
    assert predicates(sub) == {V.PREDICATES["hackLicense"]}


def test_a_variable_predicate_reads_everything() -> None:
    assert predicates(f"SELECT * WHERE {{ STREAM <{TRIPS}> [RANGE 1m] {{ ?t ?p ?o }} }}") is None


@pytest.mark.parametrize("path", ["taxi:medallion|taxi:hackLicense", "taxi:medallion/taxi:hackLicense",
                                  "^taxi:medallion/taxi:hackLicense"])
def test_the_paths_a_stream_allows_read_their_predicates(path: str) -> None:
    q = f"SELECT * WHERE {{ STREAM <{TRIPS}> [RANGE 1m] {{ ?t {path} ?o }} }}"
    assert predicates(q) == {V.PREDICATES["medallion"], V.PREDICATES["hackLicense"]}


def test_other_streams_and_static_data_read_nothing_of_this_stream() -> None:
    q = ("SELECT * WHERE { STREAM <http://example.org/other> [RANGE 1m] { ?a ?p ?b } "
         "?a taxi:hackLicense ?h }")
    assert predicates(q) == frozenset()


def test_the_debs_queries() -> None:
    def query(name: str) -> str:
        return (ROOT / "queries" / f"{name}.cqels").read_text().replace("${profit_window=15m}", "15m") \
            .replace("${empty_window=30m}", "30m")
    q1 = {p for n, p in V.PREDICATES.items() if p in predicates(query("q1"))}
    q2 = predicates(query("q2"))
    assert not q1 & {V.PREDICATES[n] for n in OPTIONAL_TERMS}  # Q1 reads no medallion
    assert V.PREDICATES["medallion"] in q2 and V.PREDICATES["hackLicense"] not in q2


# -- the Feeder ----------------------------------------------------------------------------------

@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_left_out_terms_are_absent_and_everything_else_is_the_same(native: bool) -> None:
    data = SAMPLE.read_bytes()[:400_000]
    left_out = {V.PREDICATES["hackLicense"], V.PREDICATES["tripDistance"]}
    read = frozenset(V.PREDICATES.values()) - left_out
    full_terms, part_terms = Dictionary(), Dictionary()
    full = events(native, None, data, full_terms)
    part = events(native, read, data, part_terms)
    assert len(full) == len(part) > 1000

    def terms(triples: tuple, dictionary: Dictionary) -> list[tuple]:
        return [tuple(dictionary.decode(x) for x in t) for t in triples]

    for (seq, time, _, triples), (seq2, time2, _, triples2) in zip(full, part):
        assert (seq, time) == (seq2, time2)
        kept = [t for t in terms(triples, full_terms) if t[1] not in {IRI(p) for p in left_out}]
        assert kept == terms(triples2, part_terms) and len(kept) == len(triples) - 2
    assert events(True, read, data) == events(False, read, data)  # both loops leave out the same


def test_the_feeder_names_what_it_leaves_out() -> None:
    read = {V.PREDICATES["medallion"], V.PREDICATES["seq"]}
    feeder = Feeder(Path("x.csv"), Dictionary(), read=read)
    assert feeder.left_out == ("hackLicense", "paymentType", "tripTimeSecs", "tripDistance")
    assert Feeder(Path("x.csv"), Dictionary()).left_out == ()


def test_a_missing_medallion_is_still_rejected_when_the_medallion_is_left_out() -> None:
    data = (line() + "\n" + line(medallion=" ") + "\n").encode()
    for native in (True, False):
        feeder = Feeder(Path("x.csv"), Dictionary(), io.StringIO(), lines=io.BytesIO(data), native=native, read=set())
        assert len(list(feeder)) == 1 and feeder.stats.rejected["bad_medallion"] == 1


# -- a run ---------------------------------------------------------------------------------------

def test_a_run_reads_what_its_queries_match(tmp_path: Path) -> None:
    hacks = tmp_path / "hacks.cqels"
    hacks.write_text(PREFIX + f"SELECT (COUNT(DISTINCT ?h) AS ?n) WHERE {{ STREAM <{TRIPS}> [RANGE 30m] "
                     "{ ?t taxi:hackLicense ?h } }")
    out = tmp_path / "out"
    assert main(["run", str(SAMPLE), "--out", str(out), "--query", "q1", "--query", str(hacks)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["feeder_left_out"] == ["medallion", "paymentType", "tripTimeSecs", "tripDistance"]
    counts = [int(r.split(",")[-1]) for r in (out / "hacks.csv").read_text().splitlines()[1:]]
    assert counts and max(counts) > 100  # the licences were there to count
