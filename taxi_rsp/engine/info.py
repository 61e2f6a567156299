"""What a registered query looks like from outside the engine: its form, whether its
result is ordered, its windows and result columns. Run code, listeners and the Python
API read this, never the logical or physical plan.

>>> from taxi_rsp.engine.engine import Engine
>>> from taxi_rsp.planner import register
>>> q = register(Engine(), 'SELECT ?o WHERE { STREAM <http://s> [RANGE 1m] { ?x <http://p> ?o } }', "demo")
>>> info = q.info
>>> info.form, info.ordered, info.columns, info.windows[0].kind, info.windows[0].range_ms
('SELECT', False, ('o',), 'RANGE', 60000)
>>> info.streams, info.time_based
(('http://s',), True)
"""

from __future__ import annotations

from dataclasses import dataclass

# Window kinds whose contents are fixed by event time alone; TRIPLES n (the last n
# triples) and ALL (everything since the start) depend on the whole history.
TIME_WINDOW_KINDS = ("RANGE", "NOW")


@dataclass(frozen=True, slots=True)
class WindowInfo:
    """One STREAM window of a query: ``kind`` is RANGE, NOW, TRIPLES or ALL."""

    stream: str  # the stream IRI
    kind: str
    range_ms: int | None = None  # RANGE: the window length; NOW: 1 (the instant itself)
    slide_ms: int | None = None  # RANGE ... SLIDE: the hop
    count: int | None = None  # TRIPLES n

    @property
    def time_based(self) -> bool:
        """Whether the window's contents follow from event time alone."""
        return self.kind in TIME_WINDOW_KINDS


@dataclass(frozen=True, slots=True)
class QueryInfo:
    """The public description of a registered query."""

    name: str
    form: str  # SELECT, CONSTRUCT, ASK or DESCRIBE
    ordered: bool  # ORDER BY: each report is the whole ordered result (else Istream/Dstream rows)
    columns: tuple[str, ...]  # result variables, in order
    windows: tuple[WindowInfo, ...]
    report_policy: str  # the R2S policy's name (taxi_rsp.engine.policies)
    source: str = "<query>"  # where the text came from (a path, for messages)

    @property
    def streams(self) -> tuple[str, ...]:
        """The stream IRIs the query reads, sorted."""
        return tuple(sorted({w.stream for w in self.windows}))

    @property
    def time_based(self) -> bool:
        """Whether every window follows from event time alone (a time slice can rebuild it)."""
        return all(w.time_based for w in self.windows)

    def range_windows_ms(self) -> list[int]:
        """The lengths of the RANGE windows (the ones a span of data can be shorter than)."""
        return [w.range_ms for w in self.windows if w.kind == "RANGE" and w.range_ms is not None]
