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
from taxi_rsp.engine.ops.match import BGPMatcher, EventView
from taxi_rsp.engine.ops.stateless import Step
from taxi_rsp.engine.pipeline import PipelineNode, PipelineRegistry, StepSpec
from taxi_rsp.lang.ast import WindowSpec


class WindowScan(Operator):
    def __init__(self, stream: int, spec: WindowSpec, matcher: BGPMatcher) -> None:
        super().__init__(matcher.schema)
        self.stream = stream
        self.spec = spec
        self.matcher = matcher
        self.range_ms = {"RANGE": spec.range_ms, "NOW": 1}.get(spec.kind)
        self._steps: list[Step] = []
        self._specs: list[StepSpec] | None = []
        self._leaf: PipelineNode | None = None  # set by share(): the shared per-event rows
        # Operators fed from this buffer: this window and the twins it absorbed.
        self._outputs: list[WindowScan] = [self]
        # (expiry time or arrival number, derived rows per output) in arrival order
        self._entries: deque[tuple[int, tuple[list[Row], ...]]] = deque()
        self._arrivals = 0
        self.held = 0

    # -- fusion of stateless operators (done by the plan builder) -------------------
    def fuse(self, step: Step, schema: tuple[str, ...], description: tuple | None = None) -> None:
        """Append a stateless row transformation (None drops the row); ``description``
        (see :class:`~taxi_rsp.engine.pipeline.StepSpec`) lets it be compiled and shared."""
        self._steps.append(step)
        if self._specs is not None:
            if description is None:
                self._specs = None  # an opaque step: this window keeps its own chain
            else:
                self._specs.append(StepSpec(description, step, self.schema))
        self.schema = schema
        self.position = {name: i for i, name in enumerate(schema)}

    def share(self, registry: PipelineRegistry) -> PipelineNode | None:
        """Compute matches and fused steps in ``registry``'s shared trie from now on."""
        if self._specs is not None:
            self._leaf = registry.leaf(self.matcher, self._specs)
        return self._leaf

    def absorb(self, twin: WindowScan) -> None:
        """Take over ``twin`` (same stream and window, same triple patterns): this
        window's buffer and expiry serve both; ``twin`` stays the operator its
        consumers are connected to, fed from here with its own derived rows."""
        self._outputs.append(twin)

    def _rows(self, view: EventView) -> list[Row]:
        leaf = self._leaf
        return leaf.run(view) if leaf is not None else self._derive(self.matcher.match_view(view))

    def describe(self) -> str:
        shared = f", pipeline {self._leaf.describe()}" if self._leaf is not None else ""
        return f"WindowScan[{self.spec.kind}] +{len(self._steps)} fused{shared}"

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
        if not entries or entries[0][0] > until:
            return
        gone = []
        while entries and entries[0][0] <= until:
            gone.append(entries.popleft()[1])
        self._emit_all(gone, -1)

    def insert(self, time: int, view: EventView) -> None:
        """A new event of this window's stream arrives (after expiry up to ``time``)."""
        rows = tuple(output._rows(view) for output in self._outputs)
        kind = self.spec.kind
        if kind == "TRIPLES":
            self._arrivals += 1
            self._entries.append((self._arrivals, rows))
            if len(self._entries) > self.spec.count:  # type: ignore[operator]
                self._emit_all([self._entries.popleft()[1]], -1)
        elif kind != "ALL" and any(rows):
            self._entries.append((time + self.range_ms, rows))  # type: ignore[operator]
        self._emit_all([rows], 1, counted=kind != "ALL")

    def _emit_all(self, batches: list[tuple[list[Row], ...]], mult: int, counted: bool = True) -> None:
        """Emit ``mult`` for the rows of ``batches`` to each output's consumers."""
        for position, output in enumerate(self._outputs):
            out: list[Delta] = [(row, mult) for rows in batches for row in rows[position]]
            if counted:
                self.held += mult * len(out)
            output.emit(out)

    def state_size(self) -> int:
        return self.held
