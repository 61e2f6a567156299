"""Build ``tests/data/csrbench/``: a small real extract of CSRBench's sensor stream as
taxi-rsp stream files, and CSRBench's seven CQELS queries as ``.cqels`` files.

CSRBench (Dell'Aglio, Calbimonte, Balduini, Corcho, Della Valle: "On Correctness in RDF
Stream Processor Benchmarking", ISWC 2013) runs SRBench queries on RDF stream
processors and checks their answers with an oracle. Its public repositories:

* ``dellaglio/csrbench-oracle`` (Apache License 2.0): the stream, ``data/data_XX.ttl``,
  one Turtle file per application second XX (the oracle's ``SRBenchImporter`` stamps
  file XX with ``XX * 1000`` ms), the oracle and its configuration
  (``src/main/resources/*.properties``), and the answers the engines gave
  (``src/main/resources/answers/cqels-answer-N.json``);
* ``dellaglio/csrbench-oracle-engines``: the harness that ran CQELS on that stream
  (``cqels_Evaluation/src/…/CqelsTestClass.java``: the seven query texts;
  ``OracleTestGenerator.java``: one triple per ``stream()`` call, one file per second).

The extract keeps the **whole timeline** (seconds 0 to 33, so every window boundary of
the oracle is there) but only the observations of ten weather stations
(:data:`SYSTEMS`): every triple of such an observation, of its measurement
(``om-owl:result``) and of its sampling instant. Every query joins observations of one
station with each other, or with station ``System_C1190``, and the only stations over
80 °F are kept, so each query's answer restricted to these stations is the same over
the extract as over the full stream.

Written (all under ``--out``, by default ``tests/data/csrbench``):

* ``stream.tnt`` - one triple per line and event (how CQELS was fed), stamped
  ``1970-01-01T00:00:XX`` (XX * 1000 ms since the epoch: the oracle's timeline);
* ``stream.nq`` - the same triples, one named graph per second (the oracle's model:
  graph ``…benchmark#timestampedGraph<ms>`` per file);
* ``q1.cqels`` … ``q7.cqels`` - the queries CQELS ran (see :data:`QUERIES` for the one
  adaptation, whitespace);
* ``manifest.json`` - per query: the CQELS window, the oracle's boolean (plain SPARQL)
  query, its R2S operator and report policy, and the oracle's own window parameters;
* ``cqels-recorded.json`` - the rows CQELS recorded (its answer files), restricted to the
  extract's stations, for comparison.

Run from the repository root::

    python benchmarks/csrbench_extract.py /work/.mirror/dellaglio+csrbench-oracle/repo

The source may be a git repository (read at ``HEAD`` with ``git show``, as the local
mirrors are) or a checked-out working tree.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "data" / "csrbench"

STREAM_IRI = "http://ex.org/streams/test"  # the stream IRI of CqelsTestClass
GRAPH_BASE = "http://www.streamreasoning.org/schema/benchmark#timestampedGraph"  # BenchmarkVocab
PROV_GENERATED_AT = "http://www.w3.org/ns/prov#generatedAtTime"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
SSW = "http://knoesis.wright.edu/ssw/"
OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
SECONDS = range(0, 34)  # data_00 … data_33 (setup.properties: importer.data.maxtime = 33)
INTERVAL_MS = 1000  # importer.data.interval

# The stations kept, and why (values over the whole stream).
SYSTEMS: dict[str, str] = {
    "System_C0837": "air temperature 97 (> 80: q1, q2, q4, q5); humidity 50",
    "System_C1192": "air temperature 83 (> 80)",
    "System_C1122": "air temperature 78-80 (80 is not > 80); humidity 28-31 (q3)",
    "System_C0958": "air temperature 80 (the edge of FILTER(?value > 80))",
    "System_C1190": "the fixed station of q7; air temperature 77-80 (q6); humidity 24-29 (24: q3's open bound)",
    "System_C0694": "air temperature 78-79 in twelve seconds (q6 pairs, q7)",
    "System_C1231": "humidity 43-58 (q3 in and out); air temperature 77-78",
    "System_C0810": "humidity 47 (q3)",
    "System_C0790": "every value 0 (never matches)",
    "System_C0666": "air temperature 33-34 (never over q7's reference)",
}

_PREFIXES = ("PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>\n"
             "PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>\n")
_OBSERVATION = ("    ?obs om-owl:observedProperty weather:{prop} ;\n"
                "         om-owl:procedure ?sensor ;\n"
                "         om-owl:result ?res .\n"
                "    ?res om-owl:floatValue ?value .\n")


@dataclass(frozen=True)
class CsrQuery:
    """One CSRBench query: the CQELS text CqelsTestClass registered, its window, and the
    oracle's boolean query (srbench-queries.properties) with the oracle's own window."""

    name: str
    cqels: str
    range_ms: int
    slide_ms: int
    oracle_sparql: str
    oracle_range_ms: int
    oracle_slide_ms: int
    note: str


def _stream_query(select: str, window: str, body: str, filters: str, extra_prefix: str = "") -> str:
    return (f"{_PREFIXES}{extra_prefix}{select}\nWHERE {{\n  STREAM <{STREAM_IRI}> [{window}] {{\n{body}  }}\n"
            f"  {filters}\n}}\n")


def _oracle_query(select: str, body: str, filters: str, extra_prefix: str = "") -> str:
    return f"{_PREFIXES}{extra_prefix}{select} WHERE {{\n{body}  {filters}\n}}\n"


_Q6_BODY = ("    ?ob1 om-owl:procedure ?sensor ;\n"
            "         om-owl:observedProperty weather:_AirTemperature ;\n"
            "         om-owl:result [om-owl:floatValue ?value1] .\n"
            "    ?obs om-owl:procedure ?sensor ;\n"
            "         om-owl:observedProperty weather:_AirTemperature ;\n"
            "         om-owl:result [om-owl:floatValue ?value] .\n")
_Q7_BODY = ("    ?ob  om-owl:procedure sens-obs:System_C1190 ;\n"
            "         om-owl:observedProperty weather:_AirTemperature ;\n"
            "         om-owl:result [om-owl:floatValue ?value] .\n"
            "    ?ob1 om-owl:procedure ?sensor ;\n"
            "         om-owl:observedProperty weather:_AirTemperature ;\n"
            "         om-owl:result [om-owl:floatValue ?value1] .\n")
_SENS_OBS = "PREFIX sens-obs: <http://knoesis.wright.edu/ssw/>\n"
_AIR = _OBSERVATION.format(prop="_AirTemperature")
_HUMIDITY = _OBSERVATION.format(prop="_RelativeHumidity")

def _query(name: str, select: str, range_s: int, slide_s: int, body: str, filters: str, note: str,
           extra_prefix: str = "", oracle_window_s: tuple[int, int] | None = None) -> CsrQuery:
    """Both texts of one query from its parts; the oracle's window is CQELS's unless given."""
    oracle_range_s, oracle_slide_s = oracle_window_s or (range_s, slide_s)
    return CsrQuery(name, _stream_query(select, f"RANGE {range_s}s SLIDE {slide_s}s", body, filters, extra_prefix),
                    range_s * 1000, slide_s * 1000, _oracle_query(select, body, filters, extra_prefix),
                    oracle_range_s * 1000, oracle_slide_s * 1000, note)


# Transcribed from CqelsTestClass.java (TEST_QUERY_1 … 7) and srbench-queries.properties.
# The only adaptation: line breaks and indentation (the Java source concatenates one line;
# q1's unused `PREFIX xsd:` is dropped). Every token is CQELS's.
QUERIES: tuple[CsrQuery, ...] = (
    _query("q1", "SELECT ?sensor ?obs", 10, 10, _AIR, "FILTER(?value > 80)", "tumbling 10 s"),
    _query("q2", "SELECT ?sensor ?obs", 1, 1, _AIR, "FILTER(?value > 80)", "tumbling 1 s"),
    _query("q3", "SELECT ?sensor ?obs ?value", 4, 4, _HUMIDITY, "FILTER(?value < 49)\n  FILTER(?value > 24)",
           "tumbling 4 s, two filters"),
    _query("q4", "SELECT (AVG(?value) AS ?avg)", 4, 4, _AIR, "FILTER(?value > 80)", "tumbling 4 s, an aggregate"),
    _query("q5", "SELECT ?sensor ?obs", 5, 1, _AIR, "FILTER(?value > 80)", "sliding 5 s every 1 s"),
    _query("q6", "SELECT ?sensor ?ob1 ?value1 ?obs", 5, 5, _Q6_BODY, "FILTER(?value1 > ?value)\n  FILTER(?value > 75)",
           "tumbling 5 s, a join across observations; the oracle's configuration says 50 s, CQELS ran 5 s",
           oracle_window_s=(50, 50)),
    _query("q7", "SELECT ?sensor ?ob1", 5, 5, _Q7_BODY, "FILTER(?value1 > ?value)",
           "tumbling 5 s, a join with station C1190, two unprojected variables", extra_prefix=_SENS_OBS),
)

# cqels.properties: CQELS is checked with window close off, content change on,
# non-empty content on, no empty relations, and the Istream operator for every query.
CQELS_POLICY = {"windowclose": False, "contentchange": True, "nonemptycontent": True, "emptyrelation": False,
                "r2s": "istream", "timeunit_ms": 1000, "firstt0_ms": 0}


def read_source(source: Path, path: str) -> bytes:
    """A file of the csrbench-oracle repository: from ``HEAD`` of a git directory (a
    bare mirror), or from a working tree."""
    if (source / path).is_file():
        return (source / path).read_bytes()
    done = subprocess.run(["git", "-C", str(source), "show", f"HEAD:{path}"], capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"cannot read {path} from {source}: {done.stderr.decode().strip()}")
    return done.stdout


def kept_triples(data: bytes) -> list[ox.Triple]:
    """The triples of one second's file that belong to the observations of
    :data:`SYSTEMS`: the observation's own triples, its result's and its instant's."""
    triples = list(ox.parse(data, format=ox.RdfFormat.TURTLE))
    procedure, result, sampling = (ox.NamedNode(OM + name) for name in ("procedure", "result", "samplingTime"))
    kept_systems = {ox.NamedNode(SSW + system) for system in SYSTEMS}
    observations = {t.subject for t in triples if t.predicate == procedure and t.object in kept_systems}
    attached = {t.object for t in triples if t.subject in observations and t.predicate in (result, sampling)}
    subjects = observations | attached
    return [t for t in triples if t.subject in subjects]


def stamp(second: int) -> str:
    """The xsd:dateTime of second ``second`` of the oracle's timeline (ms since the epoch)."""
    ms = second * INTERVAL_MS
    return f"1970-01-01T00:{ms // 60_000:02d}:{ms // 1000 % 60:02d}"


def write_streams(source: Path, out: Path) -> dict[str, int]:
    """Write ``stream.tnt`` and ``stream.nq``; returns counts."""
    tnt_lines: list[str] = []
    nq_lines: list[str] = []
    counts = {"seconds": 0, "triples": 0}
    for second in SECONDS:
        triples = kept_triples(read_source(source, f"data/data_{second:02d}.ttl"))
        if not triples:
            continue
        counts["seconds"] += 1
        counts["triples"] += len(triples)
        graph = ox.NamedNode(f"{GRAPH_BASE}{second * INTERVAL_MS}")
        nq_lines.append(f'{graph} <{PROV_GENERATED_AT}> "{stamp(second)}"^^<{XSD_DATETIME}> .\n')
        for t in triples:
            tnt_lines.append(f"{t} .\t{stamp(second)}\n")
            nq_lines.append(f"{ox.Quad(t.subject, t.predicate, t.object, graph)} .\n")
    (out / "stream.tnt").write_text("".join(tnt_lines), encoding="utf-8")
    (out / "stream.nq").write_text("".join(nq_lines), encoding="utf-8")
    return counts


def recorded_rows(source: Path, query: CsrQuery) -> dict:
    """The rows CQELS recorded for ``query`` (cqels-answer-N.json), restricted to the
    extract's stations: every row whose IRIs all name a kept station or one of its
    observations (rows of an aggregate have no IRI and are all kept)."""
    answer = json.loads(read_source(source, f"src/main/resources/answers/cqels-answer-{query.name[1:]}.json"))
    relations = answer["relations"]
    kept: list[dict[str, str]] = []
    total = 0
    for relation in relations:
        for element in relation["results"]["bindings"]:
            total += 1
            row = {var: value["value"] for var, value in element["binding"].items()}
            iris = [v["value"] for v in element["binding"].values() if v["type"] == "uri"]
            if all(any(iri.endswith(system) or f"_{system[len('System_'):]}_" in iri for system in SYSTEMS)
                   for iri in iris):
                kept.append(row)
    return {"relations": len(relations), "rows": total, "rows_of_kept_stations": kept}


def build(source: Path, out: Path) -> dict:
    """Write every file of the extract into ``out``; returns what was written."""
    out.mkdir(parents=True, exist_ok=True)
    counts = write_streams(source, out)
    manifest = {"stream_iri": STREAM_IRI, "graph_base": GRAPH_BASE, "interval_ms": INTERVAL_MS,
                "systems": SYSTEMS, "cqels_policy": CQELS_POLICY, "queries": []}
    recorded = {}
    for query in QUERIES:
        (out / f"{query.name}.cqels").write_text(query.cqels, encoding="utf-8")
        manifest["queries"].append({
            "name": query.name, "file": f"{query.name}.cqels", "range_ms": query.range_ms,
            "slide_ms": query.slide_ms, "oracle_sparql": query.oracle_sparql,
            "oracle_range_ms": query.oracle_range_ms, "oracle_slide_ms": query.oracle_slide_ms, "note": query.note})
        recorded[query.name] = recorded_rows(source, query)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    (out / "cqels-recorded.json").write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the csrbench-oracle repository (git directory or working tree)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    counts = build(args.source, args.out)
    print(f"wrote {args.out}: {counts['triples']} triples in {counts['seconds']} seconds, "
          f"{len(QUERIES)} queries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
