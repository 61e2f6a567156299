"""`taxi-rsp run`: feed a taxi CSV through the engine into the listeners.

    >>> from taxi_rsp.runner import resolve_query
    >>> resolve_query("q1").name
    'q1'
"""

from __future__ import annotations

import csv
import itertools
import os
import resource
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taxi_rsp import native
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.native import CGroupTable, group_table_class
from taxi_rsp.engine.native.program import programs_available
from taxi_rsp.errors import UserError
from taxi_rsp.feeder import Feeder, trip_stamps
from taxi_rsp.listener import DebsTopKWriter
from taxi_rsp.outputs.atomic import AtomicOutputs
from taxi_rsp.outputs.summary import data_warnings
from taxi_rsp.procfs import ReadOffset, peak_rss_kib
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import TRIPS_STREAM
from taxi_rsp.session import QuerySource, Session, SessionConfig, resolve_query
from taxi_rsp.session.driver import drive

if TYPE_CHECKING:
    from taxi_rsp.live.sink import LiveSink

__all__ = ["DEFAULT_QUERIES", "QuerySource", "RunConfig", "resolve_query", "run"]


RSS_CHECKPOINTS = (200_000, 1_000_000, 2_000_000)
DEFAULT_QUERIES = ("q1", "q2")  # the DEBS 2015 "Mixed" workload, as `taxi-rsp baseline` answers


@dataclass
class RunConfig:
    input: Path
    out: Path
    queries: list[str] = field(default_factory=lambda: list(DEFAULT_QUERIES))
    params: dict[str, dict[str, str]] = field(default_factory=dict)  # query name ("*": all) -> params
    static: list[Path] = field(default_factory=list)
    progress: bool = False
    explain: bool = False
    engine: EngineConfig = EngineConfig()  # compiled or reference operators, join routing, top-k
    rss_checkpoints: tuple[int, ...] = RSS_CHECKPOINTS  # line counts at which peak RSS is recorded
    # Called with each registration warning (cross product, unfed stream) as soon as it is
    # known, before the run starts; all warnings also go to summary.json.
    warn: Callable[[str], None] | None = None
    force: bool = False  # remove output-like files in ``out`` that this run does not write
    result_format: str = "csv"  # SELECT results of non-DEBS queries: "csv" or "json" (SPARQL JSON lines)
    live: LiveSink | None = None  # `run --live`: the map page watching the run (None: no cost at all)

    def session_config(self) -> SessionConfig:
        """The frozen session configuration of this run (queries resolved, parameters merged)."""
        return SessionConfig.resolve(self.queries, self.params, self.static, self.engine)


def run(config: RunConfig, report: Callable[[str], None] = lambda line: None) -> dict:
    """Run the queries over the input; returns the summary (also written as summary.json)."""
    before = _check_input(config.input)
    session = Session(config.session_config())
    source = TripSource(config, before)
    summary = drive(session, source, config.out, result_format=config.result_format, explain=config.explain,
                    force=config.force, protect=tuple(config.static), warn=config.warn, report=report)
    if config.live is not None:
        config.live.finish(summary)
    return summary


class TripSource:
    """The taxi CSV as a run's source (:class:`~taxi_rsp.session.driver.Source`): the
    Feeder's events, its rejects file, its counts; the peak RSS as the line count
    crosses each checkpoint; a progress line and the live map when asked for."""

    trigger_stamps = staticmethod(trip_stamps)

    def __init__(self, config: RunConfig, before: os.stat_result | None) -> None:
        self.config = config
        self.path = config.input
        self._before = before
        self.feeder: Feeder | None = None
        self.watch: _InputWatch | None = None
        self._rejects: Path = config.out / "rejects.csv"

    def streams(self, session: Session) -> set[str]:
        return {TRIPS_STREAM}

    def open(self, session: Session, outputs: AtomicOutputs, sinks: dict) -> None:
        live = self.config.live
        if live is not None:
            for info in session.infos:
                live.attach(info, sinks[info.name], session.listen)
        rejects = outputs.open("rejects.csv")
        # the queries are all registered: the Feeder skips the terms none of them reads
        self.feeder = Feeder(self.path, session.dictionary, rejects, read=session.predicates_read(TRIPS_STREAM))
        self.watch = _InputWatch(self.feeder, self.path, self.config.rss_checkpoints)

    @contextmanager
    def running(self, session: Session) -> Iterator[tuple[Iterator[GraphEvent], Callable | None]]:
        feeder, watch = self.feeder, self.watch
        assert feeder is not None and watch is not None
        with _progress(self.config.progress, self.path) as tick:
            events = watch.events()
            if self.config.live is not None:
                events = self.config.live.observe(events, feeder.stats)
            # without a progress line nothing runs per event here (a call per line adds up)
            yield events, (None if tick is None else lambda event: tick(feeder.stats.lines_read))

    def check(self, outputs: AtomicOutputs) -> None:
        _check_unchanged(self.path, self._before)
        stats = self.feeder.stats  # type: ignore[union-attr]
        if stats.lines_read and not stats.accepted:
            # nothing reached the queries: keep the reasons, write nothing that looks like a result
            outputs.commit_only(["rejects.csv"])
            raise UserError(f"no line of {self.path} was accepted: {first_rejects(self._rejects)}; "
                            f"see {self._rejects} (no result or summary was written)")

    def counts(self, session: Session) -> dict:
        stats = self.feeder.stats  # type: ignore[union-attr]
        counts = {"lines_read": stats.lines_read, "accepted": stats.accepted, "rejected": dict(stats.rejected),
                  "outliers": dict(stats.outliers), "profit_excluded": stats.profit_excluded}
        # The DEBS counters (SPEC §1 grid outliers, profit exclusions) mean something only
        # next to a DEBS query; other queries report how many instants they answered.
        if not any(isinstance(sink, DebsTopKWriter) for sink in session.sinks.values()):
            del counts["outliers"], counts["profit_excluded"]
        return counts

    def rate(self) -> int:
        return self.feeder.stats.accepted  # type: ignore[union-attr]

    def details(self, session: Session) -> dict:
        feeder, watch = self.feeder, self.watch
        assert feeder is not None and watch is not None
        return {"engine_modules": {**native.status(), "feeder_native_loop": feeder.native,
                                   "native_group_table": group_table_class() is CGroupTable,
                                   "native_programs": programs_available()},
                "rss_mib_at_lines": watch.rss_at_lines, "peak_rss_mib": _peak_rss_mib(),
                "feeder_left_out": list(feeder.left_out)}

    def warnings(self, session: Session) -> list[str]:
        return _warnings(session, self.watch)  # type: ignore[arg-type]


def _check_input(path: Path) -> os.stat_result | None:
    """Refuse an input that cannot be read; the stat of a regular file, to notice later
    whether it changed while it was read. FIFOs and devices (a pipe, /dev/stdin) are
    streams: they are not opened here, which would consume or block them."""
    try:
        info = path.stat()
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise UserError(f"input file {path} does not exist") from None
        raise UserError(f"cannot read input {path}: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"input {path} is a directory; give a taxi CSV file")
    if not stat.S_ISREG(info.st_mode):
        if not os.access(path, os.R_OK):
            raise UserError(f"cannot read input {path}: permission denied")
        return None
    try:
        path.open("rb").close()
    except OSError as exc:
        raise UserError(f"cannot read input {path}: {exc.strerror}") from None
    return info


def first_rejects(path: Path, count: int = 3) -> str:
    """The first rejected lines as ``line N: reason``, for a one-line message."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(itertools.islice(csv.reader(handle), 1, count + 1))
    except OSError:
        return "see rejects.csv"
    return ", ".join(f"line {row[0]}: {row[1]}" for row in rows if len(row) >= 2) or "see rejects.csv"


def _check_unchanged(path: Path, before: os.stat_result | None) -> None:
    """A file truncated, replaced or appended to during the run gives a result of no
    well-defined input: refuse it rather than commit it."""
    if before is None:
        return
    try:
        after = path.stat()
    except OSError as exc:
        raise UserError(f"input {path} disappeared while it was read: {exc.strerror}") from None
    if (after.st_ino, after.st_size, after.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
        raise UserError(f"input {path} changed while it was read ({before.st_size:,} -> {after.st_size:,} "
                        "bytes); run on a copy that nothing writes to")


class _InputWatch:
    """The Feeder's events, with read errors turned into one-line errors, the peak RSS
    recorded as the line count crosses each checkpoint, and the first/last event time."""

    def __init__(self, feeder: Feeder, path: Path, checkpoints: tuple[int, ...]) -> None:
        self.feeder = feeder
        self.path = path
        self.checkpoints = sorted(set(checkpoints))
        self.rss_at_lines: dict[str, float] = {}
        self.first_time: int | None = None
        self.last_time: int | None = None

    def events(self) -> Iterator[GraphEvent]:
        stats = self.feeder.stats
        pending = list(self.checkpoints)
        next_at = pending.pop(0) if pending else None
        last = None
        try:
            for event in self.feeder:
                if next_at is not None and stats.lines_read >= next_at:
                    next_at = self._record(stats.lines_read, next_at, pending)
                if last is None:
                    self.first_time = event.time
                last = event
                yield event
        except OSError as exc:
            raise UserError(f"reading {self.path} failed after line {stats.lines_read:,}: "
                            f"{exc.strerror or exc}; no result was written") from exc
        finally:
            self.last_time = last.time if last is not None else None
        if next_at is not None and stats.lines_read >= next_at:  # crossed by rejected lines at the end
            self._record(stats.lines_read, next_at, pending)

    def _record(self, lines: int, next_at: int, pending: list[int]) -> int | None:
        """Record every checkpoint up to ``lines``; the next one still ahead."""
        rss = _peak_rss_mib()
        while next_at is not None and lines >= next_at:
            self.rss_at_lines[str(next_at)] = rss
            next_at = pending.pop(0) if pending else None
        return next_at


_seen_peak_kib = [0]  # the largest peak read so far in this process


def _peak_rss_mib() -> float:
    """Peak resident set size of this process so far: VmHWM (see
    :func:`~taxi_rsp.procfs.peak_rss_kib`), ru_maxrss where /proc has none. Never less
    than an earlier reading: Linux folds the current RSS into its stored high-water mark
    only at some events (an munmap, exit), and reports the larger of the two, so a peak
    read at one line can be missing from a later ``VmHWM`` once memory was returned."""
    kib = peak_rss_kib()
    if kib is None:
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    _seen_peak_kib[0] = max(_seen_peak_kib[0], kib)
    return round(_seen_peak_kib[0] / 1024, 1)


def _warnings(session: Session, watch: _InputWatch) -> list[str]:
    span_ms = None if watch.first_time is None else watch.last_time - watch.first_time
    windows = {info.name: info.range_windows_ms() for info in session.infos}
    return data_warnings(watch.feeder.stats.lines_read, span_ms, windows)


class _progress:
    """A progress line on a terminal, redrawn every 0.5 s: lines read, the share of the
    input file read so far (its read offset, from /proc/self/fdinfo) and an ETA; for a
    pipe, whose size is unknown, lines and elapsed time only."""

    EVERY = 16  # events between two looks at the clock: cheap next to 16 events, and often enough
    SECONDS = 0.5

    def __init__(self, enabled: bool, path: Path | None = None) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.path = path
        self._bar = None

    def __enter__(self) -> Callable[[int], None] | None:
        """The per-event ``tick(lines read)``, or None when no progress line is shown."""
        if not self.enabled:
            return None
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        size = _regular_size(self.path)
        columns = [TextColumn("{task.fields[lines]:,} lines"), TimeElapsedColumn()]
        if size:
            columns[1:1] = [BarColumn(), TaskProgressColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        self._bar = Progress(*columns, transient=True, refresh_per_second=4)
        self._bar.__enter__()
        task = self._bar.add_task("feeding", total=size or None, lines=0)
        offset = ReadOffset(self.path) if size else None
        state = {"events": 0, "next": 0.0}

        def tick(lines: int) -> None:
            state["events"] += 1
            if state["events"] % self.EVERY:
                return
            now = time.monotonic()
            if now < state["next"]:
                return
            state["next"] = now + self.SECONDS
            position = offset.position() if offset is not None else None
            if position is None:
                self._bar.update(task, lines=lines)
            else:
                self._bar.update(task, lines=lines, completed=min(position, size))

        return tick

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _regular_size(path: Path | None) -> int | None:
    try:
        info = path.stat() if path is not None else None
    except OSError:
        return None
    return info.st_size if info is not None and stat.S_ISREG(info.st_mode) else None
