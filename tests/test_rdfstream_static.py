"""The static store: loading with pyoxigraph, and indexed BGP evaluation checked
against rdflib's SPARQL engine on random graphs and patterns."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.static import StaticStore
from taxi_rsp.errors import UserError
from taxi_rsp.lang.ast import TriplePattern, Var
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI, Literal

EX = "http://x/"
NODES = [IRI(f"{EX}n{i}") for i in range(4)] + [Literal("v"), Literal("2", "http://www.w3.org/2001/XMLSchema#integer")]
PREDICATES = [IRI(f"{EX}p{i}") for i in range(3)]
VARS = [Var(v) for v in "abcd"]


def _rdf(term):
    if isinstance(term, IRI):
        return rdflib.URIRef(term.value)
    if isinstance(term, Var):
        return rdflib.Variable(term.name)
    return rdflib.Literal(term.lexical, datatype=None if term.datatype.endswith("#string") else term.datatype)


def _sparql(term) -> str:
    return _rdf(term).n3()


triples = st.tuples(st.sampled_from(NODES[:4]), st.sampled_from(PREDICATES), st.sampled_from(NODES))
patterns = st.tuples(st.sampled_from(VARS + NODES[:2]), st.sampled_from(VARS[:2] + PREDICATES),
                     st.sampled_from(VARS + NODES[:2] + NODES[4:]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.lists(triples, max_size=25), bgp=st.lists(patterns, min_size=1, max_size=3))
def test_bgp_evaluation_matches_rdflib(data, bgp) -> None:
    store = StaticStore(Dictionary())
    graph = rdflib.Graph()
    for s, p, o in data:
        store.add(s, p, o)
        graph.add((_rdf(s), _rdf(p), _rdf(o)))
    schema, rows = store.evaluate(tuple(TriplePattern(*t) for t in bgp), None)
    decode = store.dictionary.decode
    ours = Counter(tuple(_sparql(decode(v)) for v in row) for row in rows)
    where = " ".join(f"{_sparql(s)} {_sparql(p)} {_sparql(o)} ." for s, p, o in bgp)
    if not schema:  # no variables: one empty solution if every triple is there
        theirs = Counter([()] if graph.query(f"ASK {{ {where} }}").askAnswer else [])
    else:
        result = graph.query(f"SELECT {' '.join('?' + v for v in schema)} WHERE {{ {where} }}")
        theirs = Counter(tuple(row[v].n3() for v in schema) for row in result)
    assert ours == theirs


def test_files_load_into_default_and_named_graphs(tmp_path: Path) -> None:
    (tmp_path / "a.ttl").write_text("@prefix x: <http://x/> .\nx:a x:p x:b , _:n .\n_:n x:p x:a .\n<rel> x:p x:a .\n")
    (tmp_path / "b.nt").write_text("_:n <http://x/p> <http://x/c> .\n<http://x/a> <http://x/p> <http://x/b> .\n")
    (tmp_path / "c.nq").write_text("<http://x/a> <http://x/q> \"1\" <http://x/g> .\n")
    store = StaticStore(Dictionary())
    assert [store.load(tmp_path / f) for f in ("a.ttl", "b.nt", "c.nq")] == [4, 2, 1]
    assert len(store) == 6  # the repeated triple counts once; _:n of a.ttl is not _:n of b.nt
    _schema, rows = store.evaluate((TriplePattern(Var("s"), IRI(EX + "p"), IRI(EX + "c")),), None)
    assert len(rows) == 1
    relative = store.dictionary.decode(store.evaluate(
        (TriplePattern(Var("s"), IRI(EX + "p"), IRI(EX + "a")),), None)[1][0][0])
    assert {type(relative).__name__} <= {"IRI", "BNode"}
    _, named = store.evaluate((TriplePattern(Var("s"), IRI(EX + "q"), Var("o")),), Var("g"))
    assert [store.dictionary.decode(row[2]) for row in named] == [IRI(EX + "g")]
    _, nothing = store.evaluate((TriplePattern(Var("s"), IRI(EX + "q"), Var("o")),), IRI(EX + "unknown"))
    assert nothing == []


@pytest.mark.parametrize("name, text, message", [
    ("bad.nt", "<http://x/a> <http://x/p> .\n", "bad.nt:1:"),
    ("bad.ttl", "@prefix x: <http://x/> .\n\nx:a x:p \"open .\n", "bad.ttl:3:"),
    ("data.csv", "a,b\n", "unknown RDF format"),
])
def test_load_errors_name_the_file(tmp_path: Path, name, text, message) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(UserError, match=message.replace(".", r"\.")):
        StaticStore(Dictionary()).load(tmp_path / name)
