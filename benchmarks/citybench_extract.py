"""Build ``tests/data/citybench/`` from a checkout or bare mirror of CityBench (issue 51).

Source: the ``CityBench/Benchmark`` GitHub repository (Ali, Gao, Mileo: "CityBench: A
Configurable Benchmark to Evaluate RSP Engines using Smart City Datasets", ISWC 2015),
licensed GPL-3.0 (its ``LICENSE`` file). Everything is read with ``git show
<commit>:<path>``, so a bare mirror is enough::

    python benchmarks/citybench_extract.py /path/to/CityBench+Benchmark/repo [--out DIR]

(``--out`` defaults to ``tests/data/citybench`` next to this script's repository.)

What is kept:

* **the 18 CQELS queries** of ``cqels_query/`` (Q1-Q12, Q1_win_1, Q10_5, Q10_8,
  location_parking_1, pollution_weather_1, traffic_parking_1) as ``queries/<name>.cqels``,
  verbatim except for the adaptations listed in ``manifest.json`` (only the relative
  named-graph IRIs ``<culturalevents>`` / ``<libraryevents>``, which CQELS's
  ``context.loadDataset("culturalevents", …)`` creates and RDF data cannot hold: a
  ``BASE`` line is added so they resolve to absolute IRIs);
* **the streams the queries read**, each a taxi-rsp graph-event stream
  (``streams/<name>.nq``: one named graph per CSV row of ``streams/<name>.stream``, its
  time a default-graph ``prov:generatedAtTime`` quad). The RDF of a row is what
  CityBench's ``CQELSAarhus*Stream.getStatements`` produces: per payload property of the
  sensor (``ssn:observes`` in the sensor repository) one observation ``a
  ssn:Observation`` with ``ssn:observedBy`` the service, ``ssn:observedProperty`` the
  property and ``sao:hasValue`` the value (traffic: AvgSpeed, VehicleCount, MeasuredTime,
  EstimatedTime = distance / avgSpeed, CongestionLevel = vehicleCount / distance, the
  distance from ``dataset/MetaData/trafficMetaData.csv``; pollution: the API, the
  largest of the five pollutants; weather: temperature, humidity, wind speed; parking:
  vacancies = totalspaces - vehiclecount; user location: a blank node with latitude and
  longitude). The observation IRIs' random UUID suffix is replaced by a deterministic
  ``-<row>-<k>``. Datatypes follow Jena's ``addLiteral``: Java ``double`` ->
  ``xsd:double``, ``int`` -> ``xsd:int``;
* **time**: the rows of 2014-08-01 08:00:00 to 09:35:00 (``START``/``END``), replayed
  with CityBench's acceleration ``rate`` = 300 (``DataWrapper.waitForInterval``: the
  wait between rows is their time difference / rate), so five minutes of sensor time are
  one second of stream time: event time = START + (row time - START) / 300, to the
  millisecond (rounded down). The user location stream has no timestamps (CityBench
  sends a line per ``sleep`` = 1 s): its first 20 lines at START + 0 s, 1 s, …, 19 s;
* **static data**: ``static/sensors.nt``, the part of ``dataset/SensorRepository.n3``
  about the streamed sensors (the services' types and ``ssn:observes``, their
  properties and features of interest with coordinates) plus a few sensors that are not
  streamed (their properties and features only), so the static patterns match more than
  the streams join with; ``static/events.nq``, a few cultural events
  (``dataset/AarhusCulturalEvents.n3``) in the named graph ``<BASE>culturalevents`` and
  a few library events (``dataset/AarhusLibraryEvents.n3``) in ``<BASE>libraryevents``.

``README.md`` in the output folder records the commit, the licence and the sizes.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pyoxigraph as ox

REPO = "CityBench/Benchmark"
SES = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_RESOURCE = "http://www.w3.org/2000/01/rdf-schema#Resource"
XSD = "http://www.w3.org/2001/XMLSchema#"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"
BASE = "http://www.insight-centre.org/dataset/"
START = datetime(2014, 8, 1, 8, 0, 0)
END = datetime(2014, 8, 1, 9, 35, 0)
RATE = 300
LOCATIONS = 20
CULTURAL_EVENTS = 6
LIBRARY_EVENTS = 3

TRAFFIC = ["182955", "158505", "186979"]
POLLUTION = ["201399", "197626", "182955", "158505", "206502", "179093", "195843", "206237", "195204", "204300"]
PARKING = ["KALKVAERKSVEJ", "SKOLEBAKKEN"]
EXTRA_SENSORS = ["AarhusTrafficData158324", "AarhusTrafficData158355", "AarhusPollutionData158324",
                 "AarhusPollutionData158355"]

QUERIES = ["Q1", "Q1_win_1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8", "Q9", "Q10", "Q10_5", "Q10_8", "Q11",
           "Q12", "location_parking_1", "pollution_weather_1", "traffic_parking_1"]
NAMED_GRAPH_QUERIES = {"Q4", "Q5", "Q8", "Q9"}
ADAPTATION = (f"added 'BASE <{BASE}>' as the first line: the query names the graph <culturalevents> or "
              "<libraryevents>, a relative IRI (CQELS's context.loadDataset(\"culturalevents\", ...) names "
              "the graph with that bare string); RDF data holds absolute IRIs only, so without a base the "
              f"GRAPH pattern can never match (taxi-rsp warns). With the BASE it is <{BASE}culturalevents>, "
              "the graph static/events.nq loads the events into.")


def git_show(mirror: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror), "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def literal(value: float | int, kind: str) -> ox.Literal:
    if kind == "int":
        return ox.Literal(str(int(value)), datatype=ox.NamedNode(XSD + "int"))
    return ox.Literal(repr(float(value)), datatype=ox.NamedNode(XSD + "double"))


def replay_time(at: datetime) -> datetime:
    offset_ms = int((at - START) / timedelta(milliseconds=1)) // RATE
    return START + timedelta(milliseconds=offset_ms)


def stamp(at: datetime) -> str:
    text = at.strftime("%Y-%m-%dT%H:%M:%S")
    if at.microsecond:
        text += f".{at.microsecond // 1000:03d}"
    return text


class Repository:
    """The sensor repository (``dataset/SensorRepository.n3``) and its payloads."""

    def __init__(self, data: bytes) -> None:
        self.store = ox.Store()
        self.store.load(data, format=ox.RdfFormat.TURTLE)

    def payloads(self, service: str) -> list[tuple[str, str, str]]:
        """(property type, feature of interest, property) per property the service
        observes, as ``RDFFileManager`` lists them (rdfs:Resource types left out),
        sorted by property IRI."""
        found = self.store.query(
            f"SELECT ?x ?y ?z WHERE {{ <{SES}{service}> <{SSN}observes> ?x . ?x a ?y . "
            f"?x <{SSN}isPropertyOf> ?z }}")
        rows = [(s["y"].value, s["z"].value, s["x"].value) for s in found if s["y"].value != RDFS_RESOURCE]
        return sorted(rows, key=lambda row: (row[2], row[0]))

    def describe(self, service: str, with_service: bool) -> list[ox.Triple]:
        """The service's type and ssn:observes triples, and every triple about its
        properties and their features of interest (blank-node objects left out)."""
        node = ox.NamedNode(SES + service)
        triples: list[ox.Triple] = []
        if with_service:
            for predicate in (RDF_TYPE, SSN + "observes"):
                triples += [q.triple for q in self.store.quads_for_pattern(node, ox.NamedNode(predicate), None)]
        for _, foi, prop in self.payloads(service):
            for subject in (prop, foi):
                triples += [q.triple for q in self.store.quads_for_pattern(ox.NamedNode(subject), None, None)
                            if not isinstance(q.object, ox.BlankNode)]
        return triples


def observation(graph: list[ox.Quad], name: ox.NamedNode, subject: str, service: str, prop: str,
                value: ox.Term | None) -> None:
    """An observation as CityBench's streams annotate it; no sao:hasValue when its
    property type matches none of the stream's value branches."""
    s = ox.NamedNode(subject)
    for p, o in ((RDF_TYPE, ox.NamedNode(SSN + "Observation")), (SSN + "observedBy", ox.NamedNode(SES + service)),
                 (SSN + "observedProperty", ox.NamedNode(prop)), (SAO + "hasValue", value)):
        if o is not None:
            graph.append(ox.Quad(s, ox.NamedNode(p), o, name))


def write_events(path: Path, service: str, events: list[tuple[datetime, list[ox.Quad]]]) -> dict:
    """One named graph per event, its stamp after its quads; returns the counts."""
    lines: list[str] = []
    for at, quads in events:
        lines += [f"{q} .\n" for q in quads]
        lines.append(f'<{quads[0].graph_name.value}> <{PROV}> "{stamp(at)}"^^<{XSD}dateTime> .\n')
    path.write_text("".join(lines), encoding="utf-8")
    times = [at for at, _ in events]
    return {"iri": SES + service, "file": f"streams/{path.name}", "events": len(events),
            "triples": sum(len(q) for _, q in events), "first": stamp(min(times)), "last": stamp(max(times))}


def rows_between(text: str, time_column: str, parse) -> list[tuple[datetime, dict]]:
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        at = parse(row[time_column])
        if START <= at <= END:
            rows.append((at, row))
    return rows


def sensor_stream(mirror: Path, commit: str, repo: Repository, out: Path, service: str, kind: str,
                  distances: dict[str, float]) -> dict:
    text = git_show(mirror, commit, f"streams/{service}.stream").decode("utf-8")
    payloads = repo.payloads(service)
    events = []
    if kind == "traffic":
        rows = rows_between(text, "TIMESTAMP", lambda t: datetime.strptime(t, "%Y-%m-%dT%H:%M:%S"))
    elif kind == "pollution":
        rows = rows_between(text, "timestamp", lambda t: datetime.strptime(t, "%Y-%m-%d %H:%M:%S"))
    elif kind == "weather":
        rows = rows_between(text, "TIMESTAMP", lambda t: datetime.strptime(t, "%Y-%m-%dT%H:%M:%S"))
    else:
        rows = rows_between(text, "updatetime", datetime.fromisoformat)
    for n, (at, row) in enumerate(rows, 1):
        name = ox.NamedNode(f"{SES}{service}-event-{n}")
        quads: list[ox.Quad] = []
        if kind == "traffic":
            distance = distances[row["REPORT_ID"]]
            speed, count = float(row["avgSpeed"]), float(row["vehicleCount"])
            values = {"AvgSpeed": speed, "VehicleCount": count, "MeasuredTime": float(row["avgMeasuredTime"]),
                      "EstimatedTime": distance / speed if speed != 0 else -1.0,
                      "CongestionLevel": count / distance if distance != 0 else -1.0}
            ob_id = f"AarhusTrafficObservation-{row['_id']}"
        elif kind == "pollution":
            api = max(int(row[k]) for k in ("ozone", "particullate_matter", "carbon_monoxide", "sulfure_dioxide",
                                             "nitrogen_dioxide"))
            ob_id = "AarhusPollutionObservation-0"  # (int) Math.random() * 10000 is 0 in CityBench
        elif kind == "weather":
            ob_id = "AarhusWeatherObservation-0"
        else:
            ob_id = f"AarhusParkingObservation-{row['_id']}"
        for k, (ptype, _, prop) in enumerate(payloads):
            if kind == "traffic":
                # first match, as the Java if-chain; the repository's "MeasureTime" matches
                # no branch ("MeasuredTime"), so that observation has no sao:hasValue
                key = next((key for key in values if key in ptype), None)
                value = None if key is None else literal(values[key], "double")
            elif kind == "pollution":
                value = literal(api, "int")
            elif kind == "weather":
                if "Temperature" in ptype:
                    value = literal(float(row["tempm"]), "double")
                elif "Humidity" in ptype:
                    value = literal(int(row["hum"]), "int")
                elif "WindSpeed" in ptype:
                    value = literal(float(row["wspdm"]), "double")
                else:
                    value = None
            else:
                if k > 0:  # CQELSAarhusParkingStream annotates the first payload only
                    break
                value = literal(int(row["totalspaces"]) - int(row["vehiclecount"]), "int")
            observation(quads, name, f"{SES}{ob_id}-{service}-{n}-{k}", service, prop, value)
        events.append((replay_time(at), quads))
    return write_events(out / "streams" / f"{service}.nq", service, events)


def location_stream(mirror: Path, commit: str, repo: Repository, out: Path) -> dict:
    service = "UserLocationService"
    lines = git_show(mirror, commit, f"streams/{service}.stream").decode("utf-8").splitlines()[:LOCATIONS]
    (_, _, prop), = repo.payloads(service)
    events = []
    for n, line in enumerate(lines, 1):
        user, coordinates = line.split("|")
        lat, lon = (float(x) for x in coordinates.split(","))
        name = ox.NamedNode(f"{SES}{service}-event-{n}")
        coords = ox.BlankNode(f"location{n}")
        quads: list[ox.Quad] = []
        observation(quads, name, f"{SES}UserLocationObservation-{n}", service, prop, coords)
        s = ox.NamedNode(f"{SES}UserLocationObservation-{n}")
        quads.append(ox.Quad(s, ox.NamedNode(SSN + "featureOfInterest"), ox.NamedNode(
            "http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
            "culturalEvents_aarhus#context_do63jk2t8c3bjkfb119ojgkhs7"), name))
        quads.append(ox.Quad(coords, ox.NamedNode(CT + "hasLatitude"), literal(lat, "double"), name))
        quads.append(ox.Quad(coords, ox.NamedNode(CT + "hasLongitude"), literal(lon, "double"), name))
        events.append((START + timedelta(seconds=n - 1), quads))
    return write_events(out / "streams" / f"{service}.nq", service, events)


def city_events(data: bytes, graph: str, count: int) -> list[ox.Quad]:
    """The first ``count`` events (by IRI) that have a title and a located feature of
    interest, with their feature and its first node, in the named graph ``graph``."""
    store = ox.Store()
    store.load(data, format=ox.RdfFormat.TURTLE)
    found = store.query(
        f"SELECT DISTINCT ?e ?foi WHERE {{ ?e a <{SSN}Observation> ; <{SAO}value> ?t ; <{SSN}featureOfInterest> ?foi . "
        f"?foi <{CT}hasFirstNode> ?n . ?n <{CT}hasLatitude> ?lat ; <{CT}hasLongitude> ?lon }} ORDER BY ?e")
    chosen = [(s["e"], s["foi"]) for s in found][:count]
    name = ox.NamedNode(graph)
    quads: list[ox.Quad] = []
    for event, foi in chosen:
        for q in store.quads_for_pattern(event, None, None):
            if not isinstance(q.object, ox.BlankNode):  # sao:time's tl:Instant is left out
                quads.append(ox.Quad(q.subject, q.predicate, q.object, name))
        for q in store.quads_for_pattern(foi, None, None):
            quads.append(ox.Quad(q.subject, q.predicate, q.object, name))
            if isinstance(q.object, ox.BlankNode):
                quads += [ox.Quad(n.subject, n.predicate, n.object, name)
                          for n in store.quads_for_pattern(q.object, None, None)]
    # the parser's blank node labels are random: number them, so the file is reproducible
    labels: dict[ox.BlankNode, ox.BlankNode] = {}

    def label(term):
        if isinstance(term, ox.BlankNode):
            return labels.setdefault(term, ox.BlankNode(f"{graph.rsplit('/', 1)[1]}{len(labels) + 1}"))
        return term
    return [ox.Quad(label(q.subject), q.predicate, label(q.object), q.graph_name) for q in quads]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path, help="a clone or bare mirror of github.com/CityBench/Benchmark")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "data" / "citybench")
    args = parser.parse_args()
    mirror, out = args.mirror, args.out
    commit = subprocess.run(["git", "-C", str(mirror), "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    for sub in ("queries", "streams", "static"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for old in (out / sub).iterdir():
            old.unlink()

    repo = Repository(git_show(mirror, commit, "dataset/SensorRepository.n3"))
    meta = csv.DictReader(io.StringIO(git_show(mirror, commit, "dataset/MetaData/trafficMetaData.csv").decode("utf-8")))
    distances = {row["REPORT_ID"]: float(row["DISTANCE_IN_METERS"]) for row in meta}

    streams = []
    for sensor in TRAFFIC:
        streams.append(sensor_stream(mirror, commit, repo, out, f"AarhusTrafficData{sensor}", "traffic", distances))
    for sensor in POLLUTION:
        streams.append(sensor_stream(mirror, commit, repo, out, f"AarhusPollutionData{sensor}", "pollution", distances))
    streams.append(sensor_stream(mirror, commit, repo, out, "AarhusWeatherData0", "weather", distances))
    for garage in PARKING:
        streams.append(sensor_stream(mirror, commit, repo, out, f"AarhusParkingData{garage}", "parking", distances))
    streams.append(location_stream(mirror, commit, repo, out))

    static: list[ox.Triple] = []
    for entry in streams:
        static += repo.describe(entry["iri"][len(SES):], with_service=True)
    for service in EXTRA_SENSORS:
        static += repo.describe(service, with_service=False)
    unique = sorted(set(static), key=str)
    (out / "static" / "sensors.nt").write_text("".join(f"{t} .\n" for t in unique), encoding="utf-8")
    events = city_events(git_show(mirror, commit, "dataset/AarhusCulturalEvents.n3"), BASE + "culturalevents",
                         CULTURAL_EVENTS)
    events += city_events(git_show(mirror, commit, "dataset/AarhusLibraryEvents.n3"), BASE + "libraryevents",
                          LIBRARY_EVENTS)
    (out / "static" / "events.nq").write_text("".join(f"{q} .\n" for q in events), encoding="utf-8")

    queries = []
    for name in QUERIES:
        text = git_show(mirror, commit, f"cqels_query/{name}.txt").decode("utf-8")
        adaptations = []
        if name in NAMED_GRAPH_QUERIES:
            text = f"BASE <{BASE}>\n" + text
            adaptations.append(ADAPTATION)
        (out / "queries" / f"{name}.cqels").write_text(text, encoding="utf-8")
        queries.append({"name": name, "file": f"queries/{name}.cqels", "source": f"cqels_query/{name}.txt",
                        "adaptations": adaptations})

    manifest = {
        "source": {"repository": f"https://github.com/{REPO}", "commit": commit, "licence": "GPL-3.0 (LICENSE)"},
        "replay": {"start": stamp(START), "end": stamp(END), "rate": RATE,
                   "location_interval_ms": 1000, "locations": LOCATIONS},
        "base": BASE,
        "static": ["static/sensors.nt", "static/events.nq"],
        "static_triples": {"sensors.nt": len(unique), "events.nq": len(events)},
        "streams": streams,
        "queries": queries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    (out / "LICENSE").write_bytes(git_show(mirror, commit, "LICENSE"))
    print(f"wrote {out}: {len(streams)} streams, {sum(s['triples'] for s in streams)} stream triples, "
          f"{len(unique)} + {len(events)} static triples, {len(queries)} queries")


if __name__ == "__main__":
    main()
