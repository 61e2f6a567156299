"""Listeners: turn query outputs into files (the DEBS challenge format, generic CSV,
SPARQL JSON lines, N-Quads) with the per-line delay. Installed as ``taxi_rsp.listener``."""

from taxi_rsp.listener.debs import PROFILES, DebsTopKWriter
from taxi_rsp.listener.generic import CsvResultWriter, NQuadsResultWriter
from taxi_rsp.listener.sparql_json import SparqlJsonResultWriter

__all__ = ["PROFILES", "CsvResultWriter", "DebsTopKWriter", "NQuadsResultWriter", "SparqlJsonResultWriter"]
