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
* ``TRIPLES n``: the last n triples of the stream (matching or not), a graph event held
  whole while all its triples are among them; the oldest events leave when a new one's
  triples push them out (see :class:`~taxi_rsp.engine.ops.window_kinds.TriplesWindow`).
* ``ALL``: nothing ever leaves.
* ``RANGE d SLIDE s`` (hopping): the content changes only at slide boundaries
  b = k·s (multiples of s since the epoch); at any instant τ it is what ``RANGE d`` held
  at the last boundary b ≤ τ, i.e. the events with b − d < t ≤ b. An event arriving
  between boundaries waits (``_pending``) and enters at the next boundary; an event
  leaves at the first boundary ≥ t + d. Boundaries are evaluation instants of the
  query (via :meth:`WindowScan.next_expiry`), so nothing changes, and nothing is
  reported, at an arrival between them (docs/semantics.md).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from taxi_rsp.algebra.plan import FusedStep
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.ops.stateless import Step, StepCompiler
from taxi_rsp.engine.ops.window_kinds import WindowKind, held_count, window_kind
from taxi_rsp.engine.pipeline import PipelineNode, PipelineRegistry, StepSpec
from taxi_rsp.engine.reclaim import retired
from taxi_rsp.lang.ast import WindowSpec


class NamedGraph:
    """``GRAPH g { … }`` inside a STREAM block: a window's matches count only in events
    whose named graph is g (``graph_id``), or, for a variable, in any event with a named
    graph, which the variable binds (appended after the match's columns, or compared with
    the match's own column where the patterns use it too). An event in the default graph
    (id 0) holds no named graph.

    >>> NamedGraph(None, "g", ("s",)).place([(1,), (2,)], 9), NamedGraph(9).place([(1,)], 8)
    ([(1, 9), (2, 9)], [])
    """

    def __init__(self, graph_id: int | None, var: str | None = None, match_schema: tuple[str, ...] = ()) -> None:
        self.graph_id = graph_id
        self.var = var
        self.position = match_schema.index(var) if var in match_schema else None
        self.schema = match_schema + ((var,) if var is not None and self.position is None else ())

    def place(self, rows: list[Row], graph: int) -> list[Row]:
        """The rows of a match in an event of named graph ``graph``."""
        if not graph or (self.graph_id is not None and graph != self.graph_id):
            return []
        if self.var is None:
            return rows
        if self.position is not None:
            position = self.position
            return [row for row in rows if row[position] == graph]
        return [row + (graph,) for row in rows]


class WindowScan(Operator):
    def __init__(self, stream: int, spec: WindowSpec, matcher: BGPMatcher, kind: WindowKind | None = None,
                 graph: NamedGraph | None = None) -> None:
        """``kind``: the window class the planner chose for ``spec`` (by default
        :func:`~taxi_rsp.engine.ops.window_kinds.window_kind`); ``graph``: the named
        graph its matches must be in (GRAPH inside the STREAM block)."""
        super().__init__(graph.schema if graph is not None else matcher.schema)
        self.graph = graph
        self.stream = stream
        self.spec = spec
        self.matcher = matcher
        self.kind = kind if kind is not None else window_kind(spec)
        self.range_ms = self.kind.range_ms
        self._steps: list[Step] = []
        self._specs: list[StepSpec] | None = [] if graph is None else None  # (shared pipelines know no graph)
        self._leaf: PipelineNode | None = None  # set by share(): the shared per-event rows
        # Operators fed from this buffer: this window and the twins it absorbed.
        self._outputs: list[WindowScan] = [self]
        # (expiry time or arrival number, then each output's derived rows) in arrival
        # order, one flat tuple per event; an output's rows are a list, or the row itself
        # when there is one (see window_kinds.held_rows)
        self._entries: deque[tuple] = deque()
        # SLIDE: (entry boundary, expiry boundary, derived rows) of events waiting for
        # their boundary, in arrival order (so entry boundaries are non-decreasing)
        self.slide_ms = self.kind.slide_ms
        self._pending: deque[tuple[int, int, tuple[list[Row], ...]]] = deque()
        self._arrivals = 0  # TRIPLES: the triples its entries hold

    # -- fusion of stateless operators (done by the plan builder) -------------------
    def fuse(self, step: Step, schema: tuple[str, ...], description: FusedStep | None = None) -> None:
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

    def share(self, registry: PipelineRegistry, compile_steps: StepCompiler | None = None) -> PipelineNode | None:
        """Compute matches and fused steps in ``registry``'s shared trie from now on
        (``compile_steps``: see :meth:`PipelineRegistry.leaf`)."""
        if self._specs is not None:
            self._leaf = registry.leaf(self.matcher, self._specs, compile_steps)
        return self._leaf

    @property
    def fused_steps(self) -> list[StepSpec] | None:
        """The fused steps with their plan nodes (None: some step has none)."""
        return self._specs

    @property
    def feeds_one(self) -> bool:
        """Whether this window's buffer feeds only itself (no absorbed twin)."""
        return len(self._outputs) == 1

    def derive(self, rows: list[Row]) -> list[Row]:
        """``rows`` through the fused steps (rows a FILTER drops vanish)."""
        return self._derive(rows)

    def absorb(self, twin: WindowScan) -> None:
        """Take over ``twin`` (same stream and window, same triple patterns): this
        window's buffer and expiry serve both; ``twin`` stays the operator its
        consumers are connected to, fed from here with its own derived rows."""
        self._outputs.append(twin)

    def _rows(self, view: EventView) -> list[Row]:
        leaf = self._leaf
        if leaf is not None:
            return leaf.run(view)
        rows = self.matcher.match_view(view)
        if self.graph is not None:
            rows = self.graph.place(rows, view.event.graph)
        return self._derive(rows)

    def describe(self) -> str:
        shared = f", pipeline {self._leaf.describe()}" if self._leaf is not None else ""
        return f"WindowScan[{self.kind.name}] +{len(self._steps)} fused{shared}"

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

    # -- time (decided by the window's kind) --------------------------------------------
    def next_expiry(self) -> int | None:
        """The next instant at which this window's content changes (None: never)."""
        return self.kind.next_expiry(self)

    def expire(self, until: int) -> None:
        """Retract every entry whose expiry time is <= ``until`` (and, with SLIDE, let in
        the waiting events whose boundary is <= ``until``)."""
        self.kind.expire(self, until)

    def insert(self, time: int, view: EventView) -> None:
        """A new event of this window's stream arrives (after expiry up to ``time``)."""
        self.kind.insert(self, time, tuple([output._rows(view) for output in self._outputs]), view)

    def _emit_all(self, batches: list[Sequence[list[Row] | Row]], mult: int, start: int = 0) -> None:
        """Emit ``mult`` for the rows of ``batches`` to each output's consumers; an
        output's rows are at ``start`` + its position in each batch (1 for entries)."""
        for position, output in enumerate(self._outputs):
            deltas: list[Delta] = []
            for rows in batches:
                held = rows[start + position]
                if type(held) is list:
                    deltas += [(row, mult) for row in held]
                else:  # a lone row (see window_kinds.held_rows)
                    deltas.append((held, mult))
            output.emit(deltas)
            retired.append(deltas)  # its pairs: freed after the event's outputs (see reclaim)

    def state_size(self) -> int:
        """The derived rows this buffer holds for its outputs (events waiting for a SLIDE
        boundary included), counted when asked: an arrival only appends its entry."""
        held = sum(held_count(rows) for entry in self._entries for rows in entry[1:])
        return held + sum(held_count(rows) for entry in self._pending for rows in entry[2])
