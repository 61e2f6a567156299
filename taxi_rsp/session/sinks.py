"""Where a session's results go: the declared sink protocol, and the file sinks the
runs write (the DEBS challenge CSV, generic CSV, SPARQL JSON lines, N-Quads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TextIO, runtime_checkable

from taxi_rsp.engine.info import QueryInfo
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.errors import UserError
from taxi_rsp.outputs.delay_log import DelayLog
from taxi_rsp.listener import PROFILES, CsvResultWriter, DebsTopKWriter, NQuadsResultWriter, SparqlJsonResultWriter
from taxi_rsp.listener.debs import TriggerStamps
from taxi_rsp.session.config import QuerySource

OpenFile = Callable[[str], TextIO]  # a file name -> a text file to write (AtomicOutputs.open, ...)


@runtime_checkable
class Sink(Protocol):
    """A listener the run summary can count: output lines written and the SPEC §5
    delays (ms) of the lines an arriving event triggered."""

    emitted: int
    delays_ms: DelayLog  # bounded memory: older delays in a file

    def __call__(self, output: QueryOutput) -> None: ...


@runtime_checkable
class ReportingSink(Sink, Protocol):
    """A sink that also counts reports (instants the query answered); the generic
    writers are, the challenge writer (one line per report) is not."""

    reports: int


def file_sink(source: QuerySource, info: QueryInfo, open_file: OpenFile, result_format: str = "csv",
              trigger_stamps: TriggerStamps | None = None) -> Sink:
    """The file writer of one query: the DEBS challenge CSV when the query has a
    ``# @listener`` pragma and the run's source gives ``trigger_stamps`` (the format
    prints the taxi CSV's trigger fields), N-Quads for CONSTRUCT, else CSV or SPARQL
    JSON lines."""
    listener = source.listener if trigger_stamps is not None else None
    if listener is not None:
        profile = PROFILES.get(listener)
        if profile is None:
            raise UserError(f"{source.origin}: unknown @listener {listener!r} (known: {', '.join(PROFILES)})")
        try:
            return DebsTopKWriter(profile, open_file(f"{source.name}.csv"), info.columns, trigger_stamps)
        except ValueError as exc:
            raise UserError(f"{source.origin}: {exc}") from None
    if info.form == "CONSTRUCT":
        return NQuadsResultWriter(open_file(f"{source.name}.nq"))
    if result_format == "json":
        return SparqlJsonResultWriter(open_file(f"{source.name}.jsonl"), info.columns, info.ordered)
    if result_format != "csv":
        raise UserError(f"unknown result format {result_format!r} (use csv or json)")
    return CsvResultWriter(open_file(f"{source.name}.csv"), info.columns, info.ordered)
