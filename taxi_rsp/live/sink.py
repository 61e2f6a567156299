"""`run --live`: watch a run and publish its state to the map page a few times a second.

The runner hands the sink each registered query with its writer (``attach``) and lets
it wrap the event iterator (``observe``). Per event the wrapper only counts; every 64
events it looks at the clock, and at most ``rate`` times a second it builds the state
(the latest output of each query, decoded, the event time, lines/s, recent delays) and
publishes it. Nothing of this exists in a run without ``--live``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from taxi_rsp.listener import DebsTopKWriter
from taxi_rsp.listener.formats import FORMATTERS, timestamp
from taxi_rsp.engine.info import QueryInfo
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.live.background import background
from taxi_rsp.live.server import MapServer
from taxi_rsp.rdf.terms import IRI, Literal
from taxi_rsp.viz.grid import Q1, Q2, parse_cell

CHECK_EVERY = 64  # events between two looks at the clock
TABLE_ROWS = 50  # rows of a custom query's result shown on the page


class _Watched:
    """One query: its writer (for the line count and delays) and its latest output."""

    def __init__(self, info: QueryInfo, writer) -> None:
        self.info = info
        self.writer = writer
        self.output: QueryOutput | None = None
        self.current: Counter | None = None if info.ordered else Counter()  # unordered: the live bag
        self.delays_seen = 0

    def __call__(self, output: QueryOutput) -> None:
        self.output = output
        if self.current is not None:  # a stream of inserted / deleted rows: keep the current result
            self.current.update(output.rows)
            self.current.subtract(output.deleted)
            self.current += Counter()  # drop rows whose count fell to zero

    def recent_delays(self) -> dict[str, float] | None:
        delays = getattr(self.writer, "delays_ms", None)
        if delays is None or len(delays) <= self.delays_seen:
            return None
        recent = np.frombuffer(delays.recent(self.delays_seen), dtype=np.float64)
        self.delays_seen = len(delays)
        if recent.size == 0:  # (all in the log's file already)
            return None
        p50, p99 = np.percentile(recent, [50, 99])
        return {"p50": round(float(p50), 3), "p99": round(float(p99), 3), "n": int(recent.size)}

    def state(self) -> dict:
        writer, output = self.writer, self.output
        doc: dict = {"line": writer.emitted, "trigger": None}
        if output is not None:
            doc["trigger"] = timestamp(output.trigger.time)
        if isinstance(writer, DebsTopKWriter):
            return {**doc, **_debs_rows(writer, output)}
        columns = list(self.info.columns)
        if output is None:
            rows: list = []
        elif self.current is None:
            rows = output.terms(output.rows[:TABLE_ROWS])
        else:
            rows = output.terms(list(self.current.elements())[:TABLE_ROWS])
        return {**doc, "kind": "table", "columns": columns,
                "rows": [[None if t is None else _lexical(t) for t in row] for row in rows]}


def _lexical(term) -> str:
    """A term as the generic CSV writer prints it: an IRI's text, a literal's lexical form."""
    if isinstance(term, IRI):
        return term.value
    if isinstance(term, Literal):
        return term.lexical
    return str(term)


def _debs_rows(writer: DebsTopKWriter, output: QueryOutput | None) -> dict:
    """Q1-like profiles (start/end cell) as routes, Q2-like (cell) as areas, formatted as
    the challenge file writes them; the top ``entries`` rows, as in the file."""
    profile = writer.profile
    columns = output.columns if output is not None else ()
    values = output.values(output.rows[: profile.entries]) if output is not None else []
    formatted = [{var: FORMATTERS[fmt](row[columns.index(var)]) for var, fmt in profile.columns} for row in values]
    if profile.key == ("startCell", "endCell"):
        count = columns.index("count") if "count" in columns else None
        rows = []
        for rank, (entry, row) in enumerate(zip(formatted, values), 1):
            start, end = parse_cell(entry["startCell"]), parse_cell(entry["endCell"])
            rows.append({"rank": rank, "start": entry["startCell"], "end": entry["endCell"],
                         "from": Q1.centre(*start), "to": Q1.centre(*end),
                         "count": int(row[count]) if count is not None else None})
        return {"kind": "routes", "rows": rows}
    rows = []
    for rank, entry in enumerate(formatted, 1):
        cell = parse_cell(entry["cell"])
        rows.append({"rank": rank, "cell": entry["cell"], "empty": entry["emptyTaxis"],
                     "profit": entry["medianProfit"], "profitability": entry["profitability"],
                     "bounds": Q2.bounds(*cell)})
    return {"kind": "cells", "rows": rows}


class LiveSink:
    """Publishes a run's state to a :class:`MapServer` at most ``rate`` times a second."""

    def __init__(self, data: Path, port: int = 8765, rate: float = 4.0, wait: bool = False,
                 say=print) -> None:
        self.say = say
        self.wait = wait
        self.interval = 1.0 / rate
        self.watched: dict[str, _Watched] = {}
        self.background = background(data)
        self.server = MapServer(port, {"background.json": lambda query: {**self.background, "mode": "live"}})
        self.stats = None
        self._events = 0
        self._time: int | None = None
        self._last = (time.monotonic(), 0)  # when and at which line count the last state was built
        self._delays: dict[str, dict] = {}

    def start(self) -> LiveSink:
        self.server.start()
        self.say(f"live: the map is at {self.server.url}")
        self.publish(done=False)
        return self

    def attach(self, info: QueryInfo, writer, listen: Callable[[str, Callable], None]) -> None:
        """Watch the query of ``info``: its outputs reach the sink as they reach
        ``writer``; ``listen(name, listener)`` subscribes (``Session.listen``)."""
        watched = _Watched(info, writer)
        self.watched[info.name] = watched
        listen(info.name, watched)

    def observe(self, events: Iterator, stats) -> Iterator:
        """``events``, publishing the state between two of them when it is time."""
        self.stats = stats
        if self.wait:
            self.say("live: waiting for the page to be opened before reading the input")
            self.server.connected.wait()
        next_at = time.monotonic() + self.interval
        count = 0
        event = None
        for event in events:
            yield event  # the engine processes it before the loop comes back here
            count += 1
            if count % CHECK_EVERY == 0:
                now = time.monotonic()
                if now >= next_at:
                    self._time = event.time
                    self.publish(done=False)
                    next_at = now + self.interval
        if event is not None:
            self._time = event.time

    def publish(self, done: bool, summary: dict | None = None) -> None:
        now = time.monotonic()
        lines = self.stats.lines_read if self.stats is not None else 0
        before, lines_before = self._last
        rate = (lines - lines_before) / (now - before) if now > before else 0.0
        self._last = (now, lines)
        for name, watched in self.watched.items():
            recent = watched.recent_delays()
            if recent is not None:
                self._delays[name] = recent
        state = {
            "mode": "live", "done": done, "lines": lines, "lines_per_s": round(rate, 1),
            "time": timestamp(self._time) if self._time is not None else None,
            "delay_ms": self._delays,
            "queries": {name: watched.state() for name, watched in self.watched.items()},
        }
        if summary is not None:  # the end: the run's own rate rather than the last fraction of a second's
            if summary.get("exec_seconds"):
                state["lines_per_s"] = round(summary["lines_read"] / summary["exec_seconds"], 1)
            state["summary"] = {key: summary.get(key) for key in ("lines_read", "accepted", "emitted",
                                                                  "exec_seconds", "delay_ms")}
        self.server.publish(state)

    def finish(self, summary: dict) -> None:
        self.publish(done=True, summary=summary)

    def linger(self) -> None:
        """Keep the final state on the page until Ctrl-C (the run is complete already)."""
        self.say(f"live: the run is complete; the map stays at {self.server.url} until Ctrl-C")
        self.server.serve_until_interrupted()

    def close(self) -> None:
        self.server.close()
