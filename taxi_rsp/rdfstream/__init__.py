"""RDF streams in: N-Quads graph-event streams, timestamped triple streams, and the
``taxi-rsp run --stream`` driver that feeds them through the engine.

Two input forms (docs/semantics.md, "RDF stream input"):

* **graph events** (``.nq``): one named graph per event, its time given by the
  default-graph quad ``<g> prov:generatedAtTime "…"^^xsd:dateTime`` - the form
  ``taxi-rsp feed --nquads`` writes;
* **triple stream** (``.tnt``, timestamped N-Triples): one N-Triples statement per
  line, a TAB, and an xsd:dateTime - the triple-based model of CQELS ISWC 2011.
"""

from taxi_rsp.rdfstream.errors import StreamInputError
from taxi_rsp.rdfstream.graphs import read_graph_events
from taxi_rsp.rdfstream.triples import read_triple_stream

__all__ = ["StreamInputError", "read_graph_events", "read_triple_stream"]
