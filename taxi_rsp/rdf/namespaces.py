"""Namespace IRIs used by the project."""

from __future__ import annotations

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
PROV = "http://www.w3.org/ns/prov#"
TAXI = "http://debs2015.org/taxi#"
STREAMS = "http://debs2015.org/streams/"
# The taxi Feeder's stream: one event per trip, a star on the trip's own IRI, so no two
# events share a subject (what lets a STREAM block over it be matched inside each event).
TRIPS_STREAM = STREAMS + "trips"

XSD_STRING = XSD + "string"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_BOOLEAN = XSD + "boolean"
XSD_DATETIME = XSD + "dateTime"
RDF_TYPE = RDF + "type"
PROV_GENERATED_AT = PROV + "generatedAtTime"

# Datatypes whose lexical forms denote integers (SPARQL 1.1 §17.1 derived types).
INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt",
        "unsignedShort", "unsignedByte",
    )
)
