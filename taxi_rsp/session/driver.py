"""One run driver: a :class:`Session` fed by a :class:`Source` into an output folder,
timed, summarised and committed. ``taxi-rsp run`` over a taxi CSV
(:class:`taxi_rsp.runner.TripSource`) and over an RDF stream file
(:class:`taxi_rsp.rdfstream.run.StreamSource`) are this driver with another source.

The driver owns what every run has: the output folder written under temporary names
(:class:`~taxi_rsp.outputs.atomic.AtomicOutputs`: a failed or interrupted run leaves no
complete-looking folder), the query sinks, ``--explain``, the registration warnings,
the timing (wall and CPU seconds of the run alone) and the summary's common part
(outputs, delays, rates, state, the engine's modules, warnings). A source owns its
input: its events, its own output files (the rejects), its counts, its checks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from taxi_rsp import native
from taxi_rsp.listener.debs import TriggerStamps
from taxi_rsp.outputs.atomic import AtomicOutputs
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.session.session import Session
from taxi_rsp.session.sinks import Sink

Each = Callable[[GraphEvent], None]


class Source(Protocol):
    """Where a run's events come from."""

    path: Path  # the input (never overwritten by an output)
    # the pickup/drop-off text of its events, which the DEBS @listener formats print
    # (None: a source without them; its runs write the generic formats)
    trigger_stamps: TriggerStamps | None

    def streams(self, session: Session) -> set[str]:
        """The stream IRIs it feeds (checked against what the queries read)."""

    def open(self, session: Session, outputs: AtomicOutputs, sinks: dict[str, Sink]) -> None:
        """Open its own outputs (after the queries' sinks) and get ready."""

    def running(self, session: Session) -> AbstractContextManager[tuple[Iterator[GraphEvent], Each | None]]:
        """Around the run: the events, and a function to call after each (None: none)."""

    def check(self, outputs: AtomicOutputs) -> None:
        """After the run: raise (having committed what explains it) if it failed."""

    def counts(self, session: Session) -> dict:
        """Its counts, first in the summary."""

    def rate(self) -> int:
        """What ``events_per_second`` counts (accepted lines, events)."""

    def details(self, session: Session) -> dict:
        """Its figures after the common ones."""

    def warnings(self, session: Session) -> list[str]:
        """Its warnings about the data (after the registration warnings)."""


def drive(session: Session, source: Source, out: Path, *, result_format: str = "csv", explain: bool = False,
          force: bool = False, protect: tuple[Path, ...] = (), warn: Callable[[str], None] | None = None,
          report: Callable[[str], None] = lambda line: None) -> dict:
    """Run ``session`` over ``source`` into ``out``; returns the summary (also written as
    ``summary.json``, last). ``warn`` gets each registration warning as soon as it is
    known; ``report`` the ``--explain`` text and notes; ``protect``: files no output may
    replace (the static data)."""
    outputs = AtomicOutputs(out)
    with outputs:
        sinks = session.attach_files(outputs.open, result_format, trigger_stamps=source.trigger_stamps)
        if explain:
            report(native.describe())
            for info in session.infos:
                report(session.explain(info.name))
        registration = session.registration_warnings(source.streams(session))
        for warning in registration:
            if warn is not None:
                warn(warning)
        source.open(session, outputs, sinks)
        outputs.claim(force, protect=[source.path, *protect])
        started, cpu_started = time.perf_counter(), time.process_time()
        with source.running(session) as (events, each):
            session.run(events, each)
        exec_seconds = time.perf_counter() - started
        # CPU seconds of the same span: on a shared machine they, unlike exec_seconds, do not stretch.
        cpu_seconds = time.process_time() - cpu_started
        source.check(outputs)
        rate = source.rate()
        summary = {
            **source.counts(session),
            **session.sink_figures(),
            "exec_seconds": round(exec_seconds, 6),
            "events_per_second": round(rate / exec_seconds, 1) if exec_seconds > 0 else None,
            "cpu_seconds": round(cpu_seconds, 3),
            "engine_state_rows": session.state_rows(),
            # how each query ran: specialised or reference operators (see --explain)
            "operators": session.operators(),
            "engine_modules": native.status(),
            **source.details(session),
            "warnings": registration + source.warnings(session),
        }
        outputs.commit_summary(summary)
        if outputs.removed:
            report(f"removed {', '.join(outputs.removed)} of an earlier run in {out}")
        return summary
