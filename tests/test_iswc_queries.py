"""The five ISWC 2011 queries: the engine against a brute-force recompute.

The oracle shares nothing with the engine: at every evaluation instant it rebuilds
each STREAM block's window contents from the raw element list, loads them with the
static data into an rdflib Dataset (one named graph per stream element, so bag
semantics and per-window membership survive), and runs the query text - each
``STREAM <s> [w] { P }`` rewritten to ``GRAPH ?g { P }`` restricted to that window's
graphs - with rdflib's SPARQL engine. The reports are then the multiset differences
between consecutive instants (the engine's Istream/Dstream R2S policy); CONSTRUCT
reports the template instantiated for the inserted rows.

Instants: every arrival, and every expiry instant ``t + range`` strictly between two
arrivals (docs/semantics.md: expiries at an arrival's time are merged into it; no
evaluation after the last element).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib.plugins.sparql import prepareQuery

from taxi_rsp.data.iswc import (
    CONNECTED,
    DC,
    DCTERMS,
    DETECTED_AT,
    FLOORPLAN,
    FOAF,
    LV,
    START,
    STREAM_IRI,
    SWRC,
    IswcConfig,
    author_name,
    generate,
    location,
    person,
)
from taxi_rsp.engine.engine import Engine
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import XSD_STRING
from taxi_rsp.rdf.terms import IRI, BNode, DateTime, Literal
from taxi_rsp.planner import register

ROOT = Path(__file__).resolve().parents[1]
QUERIES = {n: (ROOT / "queries" / "iswc2011" / f"q{n}.cqels").read_text() for n in range(1, 6)}
_STREAM_BLOCK = re.compile(r"STREAM\s*<([^>]+)>\s*\[([^\]]+)\]\s*\{([^}]*)\}")
_WINDOW_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}

Element = tuple[int, IRI, IRI, IRI]  # (time ms, subject, predicate, object)
Static = tuple[list[tuple], list[tuple]]  # (default-graph triples, floor-plan triples) as our terms


# -- the oracle ---------------------------------------------------------------------------
def _window(spec: str) -> tuple[str, int]:
    spec = spec.strip()
    if spec.upper() == "NOW":
        return "RANGE", 1
    kind, amount = spec.split(None, 1)
    if kind.upper() == "TRIPLES":
        return "TRIPLES", int(amount)
    number, unit = re.fullmatch(r"(\d+)\s*(ms|s|m|h)", amount.strip()).groups()
    return "RANGE", int(number) * _WINDOW_UNITS[unit]


def _rdflib(term):
    if isinstance(term, IRI):
        return rdflib.URIRef(term.value)
    if isinstance(term, BNode):
        return rdflib.BNode(term.label)
    if term.lang:
        return rdflib.Literal(term.lexical, lang=term.lang)
    return rdflib.Literal(term.lexical, datatype=None if term.datatype == XSD_STRING else term.datatype)


def _key(term) -> tuple:
    """A comparable form of an rdflib term or one of ours."""
    if term is None:
        return ("unbound",)
    if isinstance(term, (IRI, rdflib.URIRef)):
        return ("iri", str(term.value if isinstance(term, IRI) else term))
    if isinstance(term, Literal):
        return ("literal", term.lexical, term.datatype, term.lang)
    return ("literal", str(term), str(term.datatype) if term.datatype else XSD_STRING, term.language)


class Oracle:
    def __init__(self, text: str, static: Static) -> None:
        self.windows = []
        blocks = _STREAM_BLOCK.findall(text)
        assert blocks, "an ISWC query reads the stream"
        rewritten = text
        for k, (_, spec, body) in enumerate(blocks):
            self.windows.append(_window(spec))
            rewritten = _STREAM_BLOCK.sub(
                f'{{ GRAPH ?__w{k} {{{body}}} FILTER(STRSTARTS(STR(?__w{k}), "urn:w{k}:")) }}', rewritten, count=1)
        rewritten = re.sub(r"FROM NAMED <[^>]*>", "", rewritten)  # rdflib would fetch it
        self.construct = None
        match = re.search(r"CONSTRUCT\s*\{([^}]*)\}", rewritten)
        if match:  # evaluate CONSTRUCT as SELECT of all its variables; instantiate below
            self.construct = re.findall(r"(\?\w+)\s+(\S+)\s+(\?\w+)", match.group(1))
            where = rewritten[match.end():]
            variables = sorted({v for v in re.findall(r"\?\w+", where) if not v.startswith("?__")})
            self.columns = [v[1:] for v in variables]
            rewritten = rewritten[: match.start()] + f"SELECT {' '.join(variables)}" + where
        self.query = prepareQuery(rewritten)
        self.prefixes = dict(re.findall(r"PREFIX\s+(\w*):\s*<([^>]*)>", text))
        self.static = static

    def result(self, elements: list[Element], arrived: int, instant: int) -> Counter:
        dataset = rdflib.Dataset()
        default, floorplan = self.static
        for s, p, o in default:
            dataset.add((_rdflib(s), _rdflib(p), _rdflib(o)))
        plan = dataset.graph(rdflib.URIRef(FLOORPLAN))
        for s, p, o in floorplan:
            plan.add((_rdflib(s), _rdflib(p), _rdflib(o)))
        for k, (kind, size) in enumerate(self.windows):
            seqs = range(arrived)
            if kind == "TRIPLES":
                members = seqs[max(0, arrived - size):]
            else:
                members = [j for j in seqs if instant - size < elements[j][0] <= instant]
            for j in members:
                _, s, p, o = elements[j]
                dataset.graph(rdflib.URIRef(f"urn:w{k}:{j}")).add((_rdflib(s), _rdflib(p), _rdflib(o)))
        rows = dataset.query(self.query)
        return Counter(tuple(_key(row[v]) for v in rows.vars) for row in rows)

    def reports(self, elements: list[Element]) -> list[tuple]:
        ranges = [size for kind, size in self.windows if kind == "RANGE"]
        reports = []
        previous: Counter = Counter()
        for i, (time, *_) in enumerate(elements):
            before = elements[i - 1][0] if i else None
            expiries = sorted({elements[j][0] + r for j in range(i) for r in ranges})
            instants = [(t, None, i) for t in expiries if before is not None and before < t < time]
            for instant, seq, arrived in [*instants, (time, i + 1, i + 1)]:
                current = self.result(elements, arrived, instant)
                inserted, deleted = current - previous, previous - current
                previous = current
                if self.construct is not None:
                    inserted = self._instantiate(inserted)
                    deleted = Counter()
                if inserted or deleted:
                    reports.append((instant, seq, inserted, deleted))
        return reports

    def _instantiate(self, rows: Counter) -> Counter:
        triples: Counter = Counter()
        position = {v: i for i, v in enumerate(self.columns)}
        for row in rows:
            for s, p, o in self.construct:
                prefix, _, local = p.partition(":")
                predicate = ("iri", self.prefixes[prefix] + local)
                triples[(row[position[s[1:]]], predicate, row[position[o[1:]]])] = 1  # a graph is a set
        return triples


# -- the engine -----------------------------------------------------------------------------
def engine_reports(text: str, static: Static, elements: list[Element]) -> list[tuple]:
    engine = Engine()
    default, floorplan = static
    for s, p, o in default:
        engine.static.add(s, p, o)
    for s, p, o in floorplan:
        engine.static.add(s, p, o, IRI(FLOORPLAN))
    query = register(engine, text, "q")
    outputs = []
    query.listeners.append(outputs.append)
    encode = engine.dictionary.encode
    stream = encode(IRI(STREAM_IRI))
    for seq, (time, s, p, o) in enumerate(elements, 1):
        engine.process(GraphEvent(seq, time, ((encode(s), encode(p), encode(o)),), stream))
    reports = []
    for output in outputs:
        seq = None if output.trigger.is_expiry else output.trigger.event.seq
        if query.logical.form == "CONSTRUCT":
            inserted = Counter(tuple(_key(t) for t in triple) for triple in output.triples)
            deleted: Counter = Counter()
        else:
            inserted = Counter(tuple(_key(t) for t in row) for row in output.terms())
            deleted = Counter(tuple(_key(t) for t in row) for row in output.terms(output.deleted))
        reports.append((output.trigger.time, seq, inserted, deleted))
    return reports


# -- workloads ------------------------------------------------------------------------------
# Gaps hit every window edge: 1 ms (NOW), 3 s, 5 s, 15 s, 30 s exactly and just around them.
GAPS = (0, 0, 1, 400, 2999, 3000, 3001, 5000, 14_999, 15_000, 30_000, 30_001)


@st.composite
def workloads(draw) -> tuple[Static, list[Element]]:
    people = draw(st.integers(2, 4))
    places = draw(st.integers(2, 4))
    pairs = st.tuples(st.integers(1, places), st.integers(1, places)).filter(lambda t: t[0] != t[1])
    links = draw(st.sets(pairs, max_size=5))
    papers = draw(st.lists(st.sets(st.integers(1, people), min_size=1, max_size=3), max_size=4))
    volumes = draw(st.lists(st.sets(st.integers(1, people), min_size=1, max_size=2), min_size=1, max_size=2))
    default = [(person(i), IRI(FOAF + "name"), Literal(author_name(i))) for i in range(1, people + 1)]
    for n, authors in enumerate(papers, 1):
        paper = IRI(f"http://dblp.example.org/paper/{n}")
        default += [(paper, IRI(DC + "creator"), person(a)) for a in sorted(authors)]
        default.append((paper, IRI(DCTERMS + "partOf"), IRI(f"http://dblp.example.org/proc/{n % len(volumes) + 1}")))
    for n, editors in enumerate(volumes, 1):
        default += [(IRI(f"http://dblp.example.org/proc/{n}"), IRI(SWRC + "editor"), person(e)) for e in sorted(editors)]
    floorplan = []
    for i in range(1, places + 1):
        floorplan += [(location(i), IRI(LV + "name"), Literal(f"Room {i}")),
                      (location(i), IRI(LV + "desc"), Literal(f"Room {i} desc"))]
    for a, b in sorted(links):  # links as drawn: the floor plan need not be symmetric here
        floorplan.append((location(a), CONNECTED, location(b)))
    steps = draw(st.lists(st.tuples(st.sampled_from(GAPS), st.integers(1, people), st.integers(1, places)),
                          min_size=1, max_size=12))
    time = int(START)
    elements = []
    for gap, who, where in steps:
        time += gap
        elements.append((time, person(who), DETECTED_AT, location(where)))
    return (default, floorplan), elements


def _check(number: int, workload) -> None:
    static, elements = workload
    text = QUERIES[number]
    assert engine_reports(text, static, elements) == Oracle(text, static).reports(elements)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads())
def test_query_matches_brute_force_recompute(number: int, workload) -> None:
    _check(number, workload)


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads())
def test_query_matches_brute_force_recompute_long(number: int, workload) -> None:
    _check(number, workload)


def _generated(out: Path, events: int) -> tuple[Static, list[Element]]:
    """A slice of the generated workload, read back from its files with rdflib."""
    generate(IswcConfig(people=12, static_triples=120, events=events, attendees=8, locations=4,
                        interval_ms=1500, seed=3), out)
    ours = {rdflib.URIRef: lambda t: IRI(str(t)),
            rdflib.Literal: lambda t: Literal(str(t), str(t.datatype) if t.datatype else XSD_STRING, t.language)}
    convert = lambda node: ours[type(node)](node)
    default = [tuple(map(convert, t)) for t in rdflib.Graph().parse(out / "dblp.nt", format="nt")]
    dataset = rdflib.Dataset()
    dataset.parse(out / "floorplan.nq", format="nquads")
    floorplan = [tuple(map(convert, t)) for t in dataset.graph(rdflib.URIRef(FLOORPLAN))]
    elements = []
    for line in (out / "stream.tnt").read_text().splitlines():
        statement, _, stamp = line.rpartition("\t")
        (s, p, o), = rdflib.Graph().parse(data=statement, format="nt")
        elements.append((int(DateTime.parse(stamp)), convert(s), convert(p), convert(o)))
    return (sorted(default, key=repr), sorted(floorplan, key=repr)), elements


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[Static, list[Element]]:
    return _generated(tmp_path_factory.mktemp("iswc"), events=40)


@pytest.fixture(scope="module")
def generated_long(tmp_path_factory) -> tuple[Static, list[Element]]:
    return _generated(tmp_path_factory.mktemp("iswc"), events=200)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_generated_workload_matches_and_is_not_trivial(number: int, generated) -> None:
    static, elements = generated
    text = QUERIES[number]
    reports = engine_reports(text, static, elements)
    assert reports == Oracle(text, static).reports(elements)
    assert reports, f"Q{number} reports nothing on the generated slice: the comparison would prove little"


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_generated_workload_long(number: int, generated_long) -> None:
    static, elements = generated_long
    text = QUERIES[number]
    assert engine_reports(text, static, elements) == Oracle(text, static).reports(elements)
