"""Shared per-event pipelines: the BGP match and the fused stateless steps of windows,
computed once per graph event for every window (of any query) that needs them.

A window's per-event work is a chain: match its triple patterns in the event, then
apply its fused FILTER / BIND / projection steps. Chains are compared *up to variable
names* (variables become schema positions, see :func:`signature`), and kept in a trie
shared by the whole engine: windows whose chains coincide share one node, and a chain
that extends another one continues from that node. Each node remembers its rows for
the current event, so two STREAM blocks with the same pattern (Q2's empty-taxi block
and its NOT EXISTS block; the same query registered twice) match and compute once.

Given a step compiler (the specialised tier's), a node's steps become one compiled
function on first use — a native program, else generated Python — specialised on the
type codes of the first row it sees; without one they run as the generic steps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import cython

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.ops.stateless import Step, StepCompiler
from taxi_rsp.engine.reclaim import retired as _retired_list
from taxi_rsp.lang import ast
from taxi_rsp.lang.ast import Var
from taxi_rsp.rdf.dictionary import Dictionary

retired = cython.declare(list, _retired_list)  # typed: appends are C calls (see reclaim)


@dataclass(frozen=True)
class StepSpec:
    """One fused step: the plan node it implements (Filter, Extend or Project: what the
    code generator compiles), its generic closure, and the schema of its input rows."""

    description: P.FusedStep
    closure: Step
    schema_in: tuple[str, ...]

    @property
    def signature(self) -> tuple:
        """What makes two steps the same computation (variable names do not matter). A
        volatile step (RAND()...) is like no other: each draws its own values."""
        step = self.description
        if P.volatile_step(step):
            return ("volatile", id(self))
        if isinstance(step, P.Filter):
            return ("filter", canonical(step.expr, self.schema_in))
        if isinstance(step, P.Extend):
            return ("extend", canonical(step.expr, self.schema_in))
        return ("project", tuple(self.schema_in.index(v) if v in self.schema_in else None for v in step.vars))


def canonical(expr: Any, schema: tuple[str, ...]) -> Any:
    """``expr`` with each variable replaced by its schema position (names do not matter)."""
    if isinstance(expr, Var):
        return Var(f"#{schema.index(expr.name)}" if expr.name in schema else "#unbound")
    if isinstance(expr, ast.Call):
        return replace(expr, args=tuple(canonical(a, schema) for a in expr.args))
    return expr


def bgp_signature(matcher: BGPMatcher) -> tuple:
    """The matcher's compiled patterns (variables are already schema positions)."""
    return matcher.signature


class PipelineNode:
    """Rows for the current event after ``steps`` (from the parent's rows, or from the
    BGP match at a root)."""

    # run, _chunk: the node's current closure (see _bind) and its compiled steps, kept in
    # ``_cells`` so that a child or a window calls them by index (see InCell)
    _chunk = InCell(1)

    def __init__(self, dictionary: Dictionary, parent: PipelineNode | None, steps: list[StepSpec],
                 matcher: BGPMatcher | None = None, compile_steps: StepCompiler | None = None) -> None:
        self._cells: list[Any] = [None, None]
        self.dictionary = dictionary
        self.compile_steps = compile_steps
        self.parent = parent
        self.matcher = matcher
        self.steps = steps
        self.children: list[PipelineNode] = []
        self.users = 0  # the windows whose chains end here
        self._bind()

    @property
    def signatures(self) -> tuple:
        return tuple(s.signature for s in self.steps)

    def _generic(self, row: tuple) -> tuple | None:
        for step in self.steps:
            row = step.closure(row)
            if row is None:
                return None
        return row

    def _compile(self, sample: tuple) -> Step:
        if self.compile_steps is None:
            return self._generic
        descriptions = [s.description for s in self.steps]
        return self.compile_steps(self.steps[0].schema_in, descriptions, self._generic, sample)

    def _bind(self) -> None:
        """``run(view)``: this node's rows for the event of ``view``, computed once per
        event (a closure: the parent, matcher and steps are fixed until the trie is split,
        which binds it again; the last event's rows are its own state, not attributes).
        It is also ``_cells[0]``, which children and windows call: a list they hold, so a
        split's new closure reaches them."""
        matcher, parent, steps = self.matcher, self.parent, self.steps
        match = matcher.match_view if matcher is not None else None
        cells = cython.declare(list, self._cells)
        parent_cells = cython.declare(list, parent._cells if parent is not None else None)
        last_view: EventView | None = None
        last_rows: list[tuple] = []

        def run(view: EventView) -> list[tuple]:
            nonlocal last_view, last_rows
            if view is last_view:
                return last_rows
            rows = match(view) if parent_cells is None else parent_cells[0](view)  # type: ignore[misc]
            if steps and rows:
                chunk = cells[1]
                if chunk is None:
                    chunk = self._chunk = self._compile(rows[0])
                if len(rows) == 1:  # a star graph matched once: the usual event
                    out = chunk(rows[0])
                    rows = [] if out is None else [out]
                else:
                    rows = [out for out in map(chunk, rows) if out is not None]
            if last_rows:  # the last event's rows, some held by no window: freed after this event's outputs
                retired.append(last_rows)
            last_view, last_rows = view, rows
            return rows

        self.run = cells[0] = run

    def describe(self) -> str:
        """The chain from the match to this node, each part with the number of windows
        it feeds, e.g. ``5 steps (native program), shared by 2 > 2 steps, shared by 1``
        (how the steps run is known once the first row has compiled them)."""
        path, node = [], self
        while node is not None:
            if node.steps or node is self:
                form = chain_form(node._chunk) if node.steps and node._chunk is not None else ""
                path.append(f"{len(node.steps)} steps{f' ({form})' if form else ''}, shared by {node._windows()}")
            node = node.parent
        return " > ".join(reversed(path))

    def _windows(self) -> int:
        """The windows whose chains pass through this node."""
        return self.users + sum(child._windows() for child in self.children)


def chain_form(chain: Step) -> str:
    """How a compiled chain of steps runs, as the tier that made it names it (its
    ``form``, or its object's: "native program", "generated Python"), else "reference
    steps".

    >>> chain_form(lambda row: row)
    'reference steps'
    """
    return getattr(getattr(chain, "__self__", None), "form", None) or getattr(chain, "form", "reference steps")


class PipelineRegistry:
    """The trie of pipeline nodes of one engine."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self._roots: dict[tuple, PipelineNode] = {}

    def leaf(self, matcher: BGPMatcher, steps: list[StepSpec], compile_steps: StepCompiler | None = None
             ) -> PipelineNode:
        """The node computing ``steps`` after ``matcher``, sharing every common prefix;
        ``compile_steps``: how new nodes compile their steps (None: generic steps)."""
        key = bgp_signature(matcher)
        node = self._roots.get(key)
        if node is None:
            node = self._roots[key] = PipelineNode(self.dictionary, None, [], matcher, compile_steps)
        sigs = [s.signature for s in steps]
        i = 0
        while i < len(steps):
            for child in node.children:
                common = _common_prefix(child.signatures, sigs[i:])
                if common == 0:
                    continue
                if common < len(child.steps):
                    child = self._split(child, common)
                node, i = child, i + common
                break
            else:
                fresh = PipelineNode(self.dictionary, node, steps[i:], compile_steps=compile_steps)
                node.children.append(fresh)
                node, i = fresh, len(steps)
        node.users += 1
        return node

    def _split(self, node: PipelineNode, at: int) -> PipelineNode:
        """Cut ``node`` after ``at`` steps; returns the new upper part."""
        parent = node.parent
        assert parent is not None
        upper = PipelineNode(self.dictionary, parent, node.steps[:at],  # no window ends there yet
                             compile_steps=node.compile_steps)
        parent.children[parent.children.index(node)] = upper
        node.parent, node.steps = upper, node.steps[at:]
        node._chunk = None
        node._bind()  # its new parent and steps (and no rows remembered)
        upper.children.append(node)
        return upper


def _common_prefix(a: tuple, b: list) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
