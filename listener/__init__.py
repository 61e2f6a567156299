"""Listeners: turn query outputs into files (the DEBS challenge format, generic CSV,
N-Quads), atomically, with the per-line delay and the run summary."""

from listener.atomic import AtomicOutputs
from listener.debs import PROFILES, DebsTopKWriter
from listener.generic import CsvResultWriter, NQuadsResultWriter
from listener.summary import delay_stats

__all__ = ["PROFILES", "AtomicOutputs", "CsvResultWriter", "DebsTopKWriter", "NQuadsResultWriter", "delay_stats"]
