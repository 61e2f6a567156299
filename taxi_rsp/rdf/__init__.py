"""RDF terms, the dictionary that encodes them as 63-bit ids, and graph events."""

from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import IRI, BNode, Literal, Term

__all__ = ["IRI", "BNode", "Literal", "Term", "Dictionary", "GraphEvent"]
