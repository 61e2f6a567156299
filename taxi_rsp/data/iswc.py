"""The ISWC 2011 conference workload: an RFID-like stream over a DBLP-like static graph.

CQELS ISWC 2011 §4-5 evaluates five queries over people detected by RFID readers at
a conference (Open Beacon traces) joined with a floor plan (which locations are
connected) and an SP2Bench-simulated DBLP graph (authors, papers, proceedings,
editors). Neither data set ships with the paper, so this module generates a
deterministic stand-in with the same shape:

* **floor plan** (named graph ``<http://deri.org/floorplan/>``): ``L`` locations on a
  ring with a few chords, each with ``lv:name``, ``lv:desc`` and symmetric
  ``lv:connected`` links;
* **DBLP** (default graph): people with ``foaf:name "Author i"``; papers with 1-4
  ``dc:creator`` (authors drawn with a Zipf-like skew, so low numbers are prolific),
  ``dc:title`` and ``dcterms:partOf`` a proceedings volume with 1-3 ``swrc:editor``;
  papers are added until the graph reaches the requested number of triples;
* **stream** ``<http://deri.org/streams/rfid>``: ``?person lv:detectedAt ?loc`` for the
  first ``attendees`` people, one detection every 0-2×``interval_ms`` (equal times
  happen), each person walking between connected locations.

Everything follows from ``seed``: the same arguments give byte-identical files.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from taxi_rsp.rdf.namespaces import PROV_GENERATED_AT, XSD_DATETIME
from taxi_rsp.rdf.nquads import term_nquads
from taxi_rsp.rdf.terms import IRI, DateTime, Literal, Term

LV = "http://deri.org/lv#"
FOAF = "http://xmlns.com/foaf/0.1/"
DC = "http://purl.org/dc/elements/1.1/"
DCTERMS = "http://purl.org/dc/terms/"
SWRC = "http://swrc.ontoware.org/ontology#"
FLOORPLAN = "http://deri.org/floorplan/"
STREAM_IRI = "http://deri.org/streams/rfid"
DBLP = "http://dblp.example.org/"
START = DateTime.parse("2011-10-24T09:00:00")

DETECTED_AT = IRI(LV + "detectedAt")
CONNECTED = IRI(LV + "connected")


@dataclass(frozen=True)
class IswcConfig:
    people: int = 1000
    static_triples: int = 10_000
    events: int = 10_000
    seed: int = 1
    attendees: int = 100
    locations: int = 30
    interval_ms: int = 200

    def check(self) -> None:
        if self.people < 2 or self.attendees < 2 or self.locations < 2:
            raise ValueError("people, attendees and locations must be at least 2")
        if self.attendees > self.people:
            raise ValueError("attendees cannot exceed people")
        if self.static_triples < self.people or self.events < 0 or self.interval_ms < 0:
            raise ValueError("static triples must be at least the number of people (one name each); "
                             "events and interval must not be negative")


def person(i: int) -> IRI:
    return IRI(f"{DBLP}person/{i}")


def author_name(i: int) -> str:
    return f"Author {i}"


def location(i: int) -> IRI:
    return IRI(f"{FLOORPLAN}loc/{i}")


def _line(s: Term, p: Term, o: Term, g: Term | None = None) -> str:
    graph = f" {term_nquads(g)}" if g is not None else ""
    return f"{term_nquads(s)} {term_nquads(p)} {term_nquads(o)}{graph} .\n"


def floorplan_links(config: IswcConfig) -> list[tuple[int, int]]:
    """Undirected links: a ring, plus a chord from every fifth location across the ring."""
    n = config.locations
    links = {tuple(sorted((i, i % n + 1))) for i in range(1, n + 1) if i != i % n + 1}
    for i in range(1, n + 1, 5):
        j = (i + n // 2 - 1) % n + 1
        if i != j:
            links.add(tuple(sorted((i, j))))
    return sorted(links)  # type: ignore[arg-type]


def floorplan_lines(config: IswcConfig) -> Iterator[str]:
    graph = IRI(FLOORPLAN)
    for i in range(1, config.locations + 1):
        yield _line(location(i), IRI(LV + "name"), Literal(f"Room {i}"), graph)
        yield _line(location(i), IRI(LV + "desc"), Literal(f"Room {i} on floor {1 + (i - 1) // 10}"), graph)
    for a, b in floorplan_links(config):
        yield _line(location(a), CONNECTED, location(b), graph)
        yield _line(location(b), CONNECTED, location(a), graph)


def dblp_lines(config: IswcConfig) -> Iterator[str]:
    """People, then papers (with proceedings and editors) until ``static_triples``."""
    rng = random.Random(f"dblp-{config.seed}")
    # Zipf-like author choice (weight i^-0.7): a few prolific authors, a long tail.
    cumulative = list(itertools.accumulate(i ** -0.7 for i in range(1, config.people + 1)))
    people = list(range(1, config.people + 1))
    for i in people:
        yield _line(person(i), IRI(FOAF + "name"), Literal(author_name(i)))
    written = config.people
    paper = proceedings = 0
    while written < config.static_triples:
        if paper % 50 == 0:  # a new proceedings volume every 50 papers
            proceedings += 1
            volume = IRI(f"{DBLP}proc/{proceedings}")
            lines = [_line(volume, IRI(DCTERMS + "title"), Literal(f"Proceedings {proceedings}"))]
            for editor in sorted(set(rng.choices(people, cum_weights=cumulative, k=rng.randint(1, 3)))):
                lines.append(_line(volume, IRI(SWRC + "editor"), person(editor)))
            for line in lines[: config.static_triples - written]:
                yield line
            written += len(lines)
        paper += 1
        node = IRI(f"{DBLP}paper/{paper}")
        lines = [_line(node, IRI(DC + "title"), Literal(f"Paper {paper}")),
                 _line(node, IRI(DCTERMS + "partOf"), IRI(f"{DBLP}proc/{proceedings}"))]
        for author in sorted(set(rng.choices(people, cum_weights=cumulative, k=rng.randint(1, 4)))):
            lines.append(_line(node, IRI(DC + "creator"), person(author)))
        for line in lines[: max(config.static_triples - written, 0)]:
            yield line
        written += len(lines)


def detections(config: IswcConfig) -> Iterator[tuple[int, int, int]]:
    """``(time ms, person number, location number)`` in time order."""
    rng = random.Random(f"stream-{config.seed}")
    neighbours: dict[int, list[int]] = {i: [] for i in range(1, config.locations + 1)}
    for a, b in floorplan_links(config):
        neighbours[a].append(b)
        neighbours[b].append(a)
    where = {p: rng.randint(1, config.locations) for p in range(1, config.attendees + 1)}
    time = int(START)
    for _ in range(config.events):
        time += rng.randint(0, 2 * config.interval_ms)
        who = rng.randint(1, config.attendees)
        if rng.random() < 0.3:  # walks to a connected location
            where[who] = rng.choice(neighbours[where[who]])
        yield time, who, where[who]


def write_stream(config: IswcConfig, triples_out: TextIO, nquads_out: TextIO | None = None) -> int:
    """The stream as timestamped N-Triples and, optionally, as N-Quads graph events."""
    count = 0
    for count, (time, who, loc) in enumerate(detections(config), 1):
        statement = _line(person(who), DETECTED_AT, location(loc)).rstrip("\n")
        stamp = DateTime(time).isoformat()
        triples_out.write(f"{statement}\t{stamp}\n")
        if nquads_out is not None:
            graph = IRI(f"{STREAM_IRI}/event/{count}")
            nquads_out.write(_line(person(who), DETECTED_AT, location(loc), graph))
            nquads_out.write(_line(graph, IRI(PROV_GENERATED_AT), Literal(stamp, XSD_DATETIME)))
    return count


def generate(config: IswcConfig, out: Path) -> dict:
    """Write ``stream.tnt``, ``stream.nq``, ``dblp.nt``, ``floorplan.nq`` and
    ``manifest.json`` (the configuration and counts) into ``out``."""
    config.check()
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, lines in (("dblp.nt", dblp_lines(config)), ("floorplan.nq", floorplan_lines(config))):
        with (out / name).open("w", encoding="utf-8") as handle:
            n = 0
            for n, line in enumerate(lines, 1):
                handle.write(line)
        counts[name] = n
    with (out / "stream.tnt").open("w", encoding="utf-8") as tnt, (out / "stream.nq").open("w", encoding="utf-8") as nq:
        counts["stream events"] = write_stream(config, tnt, nq)
    manifest = {"config": asdict(config), "counts": counts, "stream_iri": STREAM_IRI, "floorplan_graph": FLOORPLAN}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
