"""Run the W3C SPARQL 1.1 query test suite (tests/data/w3c-sparql11) against the engine.

Each mf:QueryEvaluationTest loads its qt:data into the default graph and each
qt:graphData into a named graph (named by the file's IRI), evaluates the query once
over that static data (:func:`taxi_rsp.planner.oneshot.evaluate_once`) and compares the
result with mf:result:

* SELECT results (.srx/.srj) as multisets of solutions, blank nodes up to a
  consistent renaming (ORDER BY is not checked: the suite's own rule for results
  without ``ordered="true"`` and what most implementations' harnesses do);
* ASK results as booleans; CONSTRUCT results (.ttl) as graphs up to blank-node
  renaming;
* literals after the engine's documented value equality of inlined literals
  (``"01"^^xsd:integer`` is ``"1"^^xsd:integer``, docs/semantics.md): both sides
  pass through one dictionary, which gives each value its canonical form.

Syntax tests: a positive test must parse, a negative one must be refused by the
parser or at registration (translation), where this engine checks scoping rules.

Run ``python tests/w3c_harness.py`` for the per-directory table of docs/cqels-ql.md.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner.oneshot import evaluate_once
from taxi_rsp.errors import UserError
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD, XSD_STRING
from taxi_rsp.rdf.terms import IRI, BNode, Literal

SUITE = Path(__file__).resolve().parent / "data" / "w3c-sparql11"
DIRECTORIES = ("aggregates", "bind", "bindings", "cast", "construct", "exists", "functions", "grouping",
               "negation", "project-expression", "property-path", "subquery", "syntax-query")
MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
QT = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
DAWGT = "http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#"
SRX = "{http://www.w3.org/2005/sparql-results#}"

_MANIFEST_QUERY = f"""
PREFIX mf: <{MF}> PREFIX qt: <{QT}> PREFIX dawgt: <{DAWGT}>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?test ?type ?name ?action ?query ?result ?approval WHERE {{
  ?test rdf:type ?type ; mf:name ?name ; mf:action ?action .
  OPTIONAL {{ ?action qt:query ?query }}
  OPTIONAL {{ ?test mf:result ?result }}
  OPTIONAL {{ ?test dawgt:approval ?approval }}
}}"""


@dataclass
class Case:
    directory: str
    name: str  # the test IRI's local name, e.g. agg01
    kind: str  # QueryEvaluationTest, PositiveSyntaxTest11, NegativeSyntaxTest11
    query: Path
    data: list[Path]
    graph_data: list[Path]
    result: Path | None
    approval: str

    @property
    def id(self) -> str:
        return f"{self.directory}/{self.name}"


@dataclass
class Outcome:
    case: Case
    status: str  # pass, fail, refused, n/a
    detail: str = ""


def _path(term: object) -> Path:
    return Path(ox.NamedNode(str(term.value)).value.removeprefix("file://"))  # type: ignore[attr-defined]


def load_cases(directories: tuple[str, ...] = DIRECTORIES) -> list[Case]:
    cases = []
    for directory in directories:
        manifest = SUITE / directory / "manifest.ttl"
        store = ox.Store()
        store.load(path=manifest, format=ox.RdfFormat.TURTLE, base_iri=manifest.resolve().as_uri())
        seen = set()
        for row in store.query(_MANIFEST_QUERY):
            test = row["test"].value
            if test in seen:
                continue
            seen.add(test)
            kind = row["type"].value.removeprefix(MF)
            action = row["action"]
            query = _path(row["query"]) if row["query"] is not None else _path(action)
            data = [_path(q.object) for q in store.quads_for_pattern(action, ox.NamedNode(QT + "data"), None)]
            graphs = [_path(q.object) for q in store.quads_for_pattern(action, ox.NamedNode(QT + "graphData"), None)]
            result = _path(row["result"]) if row["result"] is not None else None
            approval = row["approval"].value.removeprefix(DAWGT) if row["approval"] is not None else ""
            cases.append(Case(directory, test.rsplit("#", 1)[-1], kind, query, sorted(data), sorted(graphs),
                              result, approval))
    return sorted(cases, key=lambda c: (c.directory, c.name))


# -- expected results -----------------------------------------------------------------------
def _srx_term(node: ET.Element) -> object:
    child = node[0]
    tag = child.tag.removeprefix(SRX)
    if tag == "uri":
        return IRI(child.text or "")
    if tag == "bnode":
        return BNode(child.text or "")
    lang = child.get("{http://www.w3.org/XML/1998/namespace}lang")
    if lang:
        return Literal(child.text or "", XSD_STRING, lang.lower())
    return Literal(child.text or "", child.get("datatype") or XSD_STRING)


def _srj_term(node: dict) -> object:
    if node["type"] == "uri":
        return IRI(node["value"])
    if node["type"] == "bnode":
        return BNode(node["value"])
    if "xml:lang" in node:
        return Literal(node["value"], XSD_STRING, node["xml:lang"].lower())
    return Literal(node["value"], node.get("datatype", XSD_STRING))


def expected_result(path: Path) -> tuple[str, object]:
    """("boolean", bool), ("solutions", [row dicts]) or ("graph", [triples])."""
    if path.suffix == ".srx":
        root = ET.parse(path).getroot()
        boolean = root.find(f"{SRX}boolean")
        if boolean is not None:
            return "boolean", boolean.text.strip() == "true"
        rows = [{b.get("name"): _srx_term(b) for b in result.findall(f"{SRX}binding")}
                for result in root.iter(f"{SRX}result")]
        return "solutions", rows
    if path.suffix == ".srj":
        doc = json.loads(path.read_text(encoding="utf-8"))
        if "boolean" in doc:
            return "boolean", doc["boolean"]
        return "solutions", [{k: _srj_term(v) for k, v in b.items()} for b in doc["results"]["bindings"]]
    if path.suffix == ".ttl":
        triples = []
        for quad in ox.parse(path=path, format=ox.RdfFormat.TURTLE, base_iri=path.resolve().as_uri()):
            triples.append(tuple(_ox_term(t) for t in (quad.subject, quad.predicate, quad.object)))
        if (_RDF_TYPE, IRI(RS + "ResultSet")) in {(p, o) for _, p, o in triples}:
            return _result_set(triples)
        return "graph", triples
    raise ValueError(f"unknown result format {path}")


RS = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#"
_RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def _result_set(triples: list[tuple]) -> tuple[str, object]:
    """A result set written in the DAWG rs: vocabulary (a SELECT or ASK result in .ttl)."""
    def objects(subject: object, predicate: str) -> list:
        return [o for s, p, o in triples if s == subject and p == IRI(RS + predicate)]

    result = next(s for s, p, o in triples if p == _RDF_TYPE and o == IRI(RS + "ResultSet"))
    boolean = objects(result, "boolean")
    if boolean:
        return "boolean", boolean[0].lexical == "true"
    rows = []
    for solution in objects(result, "solution"):
        row = {}
        for binding in objects(solution, "binding"):
            row[objects(binding, "variable")[0].lexical] = objects(binding, "value")[0]
        rows.append(row)
    return "solutions", rows


def _ox_term(term: object) -> object:
    if isinstance(term, ox.NamedNode):
        return IRI(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    lang = term.language  # type: ignore[attr-defined]
    if lang:
        return Literal(term.value, XSD_STRING, lang.lower())  # type: ignore[attr-defined]
    return Literal(term.value, term.datatype.value)  # type: ignore[attr-defined]


# -- comparison -------------------------------------------------------------------------------
_DOUBLES = (XSD + "double", XSD + "float")


def _canonical(dictionary: Dictionary, term: object) -> object:
    if isinstance(term, BNode):
        return term
    if isinstance(term, Literal) and term.datatype in _DOUBLES and not term.lang:
        value = term.value()
        if isinstance(value, float):  # doubles are compared by value too ("1050" = "1050.0")
            return Literal(repr(value), term.datatype)
    return dictionary.decode(dictionary.encode(term))  # type: ignore[arg-type]


def isomorphic(left: list[tuple], right: list[tuple]) -> bool:
    """Equal multisets of tuples of terms, blank nodes up to one consistent bijection."""
    if len(left) != len(right):
        return False

    def has_bnode(item: tuple) -> bool:
        return any(isinstance(t, BNode) for part in item for t in (part if isinstance(part, tuple) else (part,)))

    ground_l = Counter(x for x in left if not has_bnode(x))
    ground_r = Counter(x for x in right if not has_bnode(x))
    if ground_l != ground_r:
        return False
    rest_l = [x for x in left if has_bnode(x)]
    rest_r = [x for x in right if has_bnode(x)]

    def unify(a: object, b: object, mapping: dict, back: dict) -> bool:
        if isinstance(a, tuple) and isinstance(b, tuple):
            return len(a) == len(b) and all(unify(x, y, mapping, back) for x, y in zip(a, b))
        if isinstance(a, BNode) and isinstance(b, BNode):
            if mapping.get(a, b) != b or back.get(b, a) != a:
                return False
            mapping[a], back[b] = b, a
            return True
        return a == b

    def search(i: int, mapping: dict, back: dict, used: set) -> bool:
        if i == len(rest_l):
            return True
        for j, candidate in enumerate(rest_r):
            if j in used:
                continue
            m, bk = dict(mapping), dict(back)
            if unify(rest_l[i], candidate, m, bk) and search(i + 1, m, bk, used | {j}):
                return True
        return False

    return search(0, {}, {}, set())


# -- running ------------------------------------------------------------------------------------
def run_case(case: Case) -> Outcome:
    text = case.query.read_text(encoding="utf-8")
    source = str(case.query.relative_to(SUITE))
    if case.kind in ("PositiveSyntaxTest11", "NegativeSyntaxTest11"):
        return _syntax(case, text, source)
    if case.kind != "QueryEvaluationTest":
        return Outcome(case, "n/a", f"test type {case.kind}")
    if case.result is None or case.result.suffix not in (".srx", ".srj", ".ttl"):
        return Outcome(case, "n/a", "result format is not .srx/.srj/.ttl")
    engine = Engine()
    try:
        for path in case.data:
            engine.load_static(path)
        for path in case.graph_data:
            engine.static.load(path, IRI(path.resolve().as_uri()))
    except UserError as exc:
        return Outcome(case, "n/a", f"test data not loadable: {exc}")
    base = f"BASE <{case.query.resolve().as_uri()}>\n"
    try:  # FROM / FROM NAMED name files next to the query: the dataset is loaded from them
        for iri, named in parse_query(base + text, source=source).datasets:
            path = Path(iri.removeprefix("file://"))
            if path.is_file():
                engine.static.load(path, IRI(iri) if named else None)
    except UserError:
        pass  # the evaluation below reports the error
    try:
        result = evaluate_once(engine, base + text, source=source)
    except UserError as exc:
        return Outcome(case, "refused", str(exc).replace(source + ":", "", 1).strip())
    except RecursionError:
        return Outcome(case, "fail", "RecursionError")
    kind, expected = expected_result(case.result)
    dictionary = Dictionary()
    if kind == "boolean":
        if result.form != "ASK":
            return Outcome(case, "fail", f"expected a boolean, got a {result.form} result")
        return _verdict(case, result.boolean == expected, f"ASK gave {result.boolean}, expected {expected}")
    if kind == "graph":
        got = [tuple(_canonical(dictionary, t) for t in triple) for triple in result.triples]
        want = [tuple(_canonical(dictionary, t) for t in triple) for triple in expected]  # type: ignore[union-attr]
        return _verdict(case, isomorphic(got, want), f"graph of {len(got)} triples, expected {len(want)}")
    got_rows = [tuple(sorted((c, _canonical(dictionary, v)) for c, v in zip(result.columns, row) if v is not None))
                for row in result.rows]
    want_rows = [tuple(sorted((c, _canonical(dictionary, v)) for c, v in row.items()))
                 for row in expected]  # type: ignore[union-attr]
    detail = ""
    if not isomorphic(got_rows, want_rows):
        extra = Counter(got_rows) - Counter(want_rows)
        missing = Counter(want_rows) - Counter(got_rows)
        detail = (f"{len(got_rows)} rows, expected {len(want_rows)}; unexpected {_show(extra)}; "
                  f"missing {_show(missing)}")
    return _verdict(case, not detail, detail)


def _show(rows: Counter) -> str:
    items = list(rows)[:2]
    text = "; ".join(" ".join(f"?{c}={_term(v)}" for c, v in row) for row in items)
    return (text or "-") + (" ..." if len(rows) > 2 else "")


def _term(term: object) -> str:
    return term.n3() if hasattr(term, "n3") else repr(term)


def _verdict(case: Case, ok: bool, detail: str) -> Outcome:
    return Outcome(case, "pass", "") if ok else Outcome(case, "fail", detail)


def _syntax(case: Case, text: str, source: str) -> Outcome:
    try:
        translate_query(parse_query(text, source=source))
        accepted, error = True, ""
    except UserError as exc:
        accepted, error = False, str(exc)
    except RecursionError:
        accepted, error = False, "RecursionError"
    if case.kind == "PositiveSyntaxTest11":
        if accepted:
            return Outcome(case, "pass")
        try:
            parse_query(text, source=source)
        except UserError:
            return Outcome(case, "fail", f"not parsed: {error}")
        return Outcome(case, "refused", f"parsed, refused at registration: {error}")
    return Outcome(case, "pass") if not accepted else Outcome(case, "fail", "accepted")


def run_all() -> list[Outcome]:
    return [run_case(case) for case in load_cases()]


def table(outcomes: list[Outcome]) -> str:
    """The markdown table of docs/cqels-ql.md."""
    lines = ["| directory | tests | pass | fail | refused | n/a |", "|---|---:|---:|---:|---:|---:|"]
    totals = Counter()
    for directory in DIRECTORIES:
        counts = Counter(o.status for o in outcomes if o.case.directory == directory)
        total = sum(counts.values())
        totals.update(counts)
        lines.append(f"| {directory} | {total} | {counts['pass']} | {counts['fail']} | {counts['refused']} "
                     f"| {counts['n/a']} |")
    lines.append(f"| **all** | {sum(totals.values())} | {totals['pass']} | {totals['fail']} | "
                 f"{totals['refused']} | {totals['n/a']} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a report tool
    results = run_all()
    print(table(results))
    print()
    for outcome in results:
        if outcome.status != "pass":
            print(f"{outcome.case.id}\t{outcome.status}\t{outcome.detail}")
    sys.exit(0)
