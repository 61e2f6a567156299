"""S2R: window operators over a stream of graph events.

A window matches its triple patterns inside each arriving graph event, runs the
mappings through the stateless operators fused above it (filter, extend, project),
and keeps, per event, the derived mappings it emitted: the window entry *points to*
its derived mappings (the tree-based mappings of CQELS DEBS 2015 §3.1), so expiry
emits their negative tuples without re-evaluating any expression.

Kinds (CQELS-QL ``[...]``):

* ``RANGE d``: an event with time t is in the window at instant τ iff τ − d < t ≤ τ;
  it leaves at exactly t + d (SPEC §3).
* ``NOW``: ``RANGE 1ms`` on millisecond timestamps - only events of the current instant.
* ``TRIPLES n``: the last n events of the stream (matching or not); the oldest leaves
  when the (n+1)-th arrives.
* ``ALL``: nothing ever leaves.
"""

from __future__ import annotations

from collections import deque

from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.match import BGPMatcher, TripleIndex
from taxi_rsp.engine.ops.stateless import Step
from taxi_rsp.lang.ast import WindowSpec


class WindowScan(Operator):
    def __init__(self, stream: int, spec: WindowSpec, matcher: BGPMatcher) -> None:
        super().__init__(matcher.schema)
        self.stream = stream
        self.spec = spec
        self.matcher = matcher
        self.range_ms = {"RANGE": spec.range_ms, "NOW": 1}.get(spec.kind)
        self._steps: list[Step] = []
        # (expiry time or arrival number, derived rows) in arrival order
        self._entries: deque[tuple[int, list[Row]]] = deque()
        self._arrivals = 0
        self.held = 0

    # -- fusion of stateless operators (done by the plan builder) -------------------
    def fuse(self, step: Step, schema: tuple[str, ...]) -> None:
        """Append a stateless row transformation (None drops the row)."""
        self._steps.append(step)
        self.schema = schema
        self.position = {name: i for i, name in enumerate(schema)}

    def describe(self) -> str:
        return f"WindowScan[{self.spec.kind}] +{len(self._steps)} fused"

    def _derive(self, rows: list[Row]) -> list[Row]:
        for step in self._steps:
            derived = []
            for row in rows:
                out = step(row)
                if out is not None:
                    derived.append(out)
            rows = derived
            if not rows:
                break
        return rows

    # -- time ------------------------------------------------------------------------
    def next_expiry(self) -> int | None:
        if self.range_ms is not None and self._entries:
            return self._entries[0][0]
        return None

    def expire(self, until: int) -> None:
        """Retract every entry whose expiry time is <= ``until``."""
        if self.range_ms is None:
            return
        entries = self._entries
        out: list[Delta] = []
        while entries and entries[0][0] <= until:
            _, rows = entries.popleft()
            self.held -= len(rows)
            out.extend((row, -1) for row in rows)
        self.emit(out)

    def insert(self, time: int, index: TripleIndex) -> None:
        """A new event of this window's stream arrives (after expiry up to ``time``)."""
        rows = self._derive(self.matcher.match(index))
        out: list[Delta] = []
        kind = self.spec.kind
        if kind == "TRIPLES":
            self._arrivals += 1
            self._entries.append((self._arrivals, rows))
            if len(self._entries) > self.spec.count:  # type: ignore[operator]
                _, old = self._entries.popleft()
                self.held -= len(old)
                out.extend((row, -1) for row in old)
        elif kind != "ALL" and rows:
            self._entries.append((time + self.range_ms, rows))  # type: ignore[operator]
        self.held += len(rows) if kind != "ALL" else 0
        out.extend((row, 1) for row in rows)
        self.emit(out)

    def state_size(self) -> int:
        return self.held
