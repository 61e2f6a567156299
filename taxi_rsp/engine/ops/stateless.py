"""Stateless operators: filter, extend (BIND), project, union, and the row steps that
the plan builder fuses into windows.

Stateless operators need no memory for retractions: the same input row always gives
the same output row, so a negative tuple is transformed exactly like its positive one.
The exception is a volatile expression (RAND(), NOW(), UUID()...: another value at every
evaluation): a :class:`MapOp` with one remembers what each held row became, and a
retraction takes back exactly that.
"""

from __future__ import annotations

from collections.abc import Callable

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.plan import FusedStep, volatile_step
from taxi_rsp.engine.expr import Compiled, ExprError, compile_expr, ebv
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.rows import tuple_getter
from taxi_rsp.rdf.dictionary import Dictionary

Step = Callable[[Row], Row | None]
# (input schema, the plan nodes of a chain of steps, the chain as generic steps, a sample
# row) -> one function for the chain, or the generic chain itself: how a faster tier
# compiles fused steps (the specialised tier: taxi_rsp.engine.compiled.codegen); None
# keeps the generic steps
StepCompiler = Callable[[tuple[str, ...], list[FusedStep], Step, Row], Step]


def filter_step(predicate: Compiled) -> Step:
    def step(row: Row) -> Row | None:
        try:
            return row if ebv(predicate(row)) else None
        except ExprError:
            return None

    return step


def extend_step(expr: Compiled, dictionary: Dictionary) -> Step:
    encode = dictionary.encode_value

    def step(row: Row) -> Row:
        try:
            return row + (encode(expr(row)),)
        except ExprError:
            return row + (None,)

    return step


def reference_step(step: FusedStep, schema: tuple[str, ...], dictionary: Dictionary) -> tuple[Step, tuple[str, ...]]:
    """The reference function of a fused step (the plan node it implements) over rows of
    ``schema``, and its output schema."""
    if isinstance(step, (P.Filter, P.Extend)):
        expr = compile_expr(step.expr, {v: i for i, v in enumerate(schema)}, dictionary)
        if isinstance(step, P.Filter):
            return filter_step(expr), schema
        return extend_step(expr, dictionary), schema + (step.var,)
    positions = tuple(schema.index(v) if v in schema else None for v in step.vars)
    return project_step(positions), step.vars


def reference_chain(steps: list[FusedStep], schema: tuple[str, ...], dictionary: Dictionary) -> Step:
    """``steps`` over rows of ``schema`` as one reference function (row -> row, or None
    when a FILTER drops it): what faster tiers of fused steps are compared with.

    >>> from taxi_rsp.lang import ast
    >>> chain = reference_chain([P.Filter(P.Unit(), ast.Call("BOUND", (ast.Var("a"),)))], ("a",), Dictionary())
    >>> chain((7,)), chain((None,))
    ((7,), None)
    """
    functions = []
    for step in steps:
        function, schema = reference_step(step, schema, dictionary)
        functions.append(function)

    def chain(row: Row) -> Row | None:
        for function in functions:
            row = function(row)  # type: ignore[assignment]
            if row is None:
                return None
        return row

    return chain


def project_step(positions: tuple[int | None, ...]) -> Callable[[Row], Row]:
    """``row -> the values at positions`` (None: an unbound column), in C when every
    column is bound (a report projects each of its rows with it too).

    >>> project_step((2, 0))((5, 6, 7)), project_step((1, None))((5, 6))
    ((7, 5), (6, None))
    """
    if None not in positions:
        return tuple_getter(positions)  # type: ignore[arg-type]

    def step(row: Row) -> Row:
        return tuple(row[i] if i is not None else None for i in positions)

    return step


class MapOp(Operator):
    """Applies a chain of stateless steps to every delta (rows a step drops vanish).

    Consecutive stateless operators are fused into one MapOp; given ``compile_steps``
    and descriptions for all its steps, the chain is compiled into one function on the
    first row."""

    def __init__(self, schema: tuple[str, ...], step: Step, label: str,
                 description: FusedStep | None = None, input_schema: tuple[str, ...] = (),
                 compile_steps: StepCompiler | None = None) -> None:
        super().__init__(schema)
        self._steps = [step]
        self._compile_steps = compile_steps
        self._descriptions: list[FusedStep] | None = [description] if description is not None else None
        self._input_schema = input_schema
        self._labels = [label]
        self._chain: Step | None = None
        # with a volatile step: input row -> [its output (None: dropped), times held]
        self._remembered: dict[Row, list] | None = {} if volatile_step(description) else None

    @property
    def input_schema(self) -> tuple[str, ...]:
        return self._input_schema

    @property
    def descriptions(self) -> list[FusedStep] | None:
        """The plan nodes of the fused steps (None: some step has none)."""
        return self._descriptions

    @property
    def label(self) -> str:
        return " + ".join(self._labels)

    def fuse(self, step: Step, schema: tuple[str, ...], label: str, description: FusedStep | None = None) -> None:
        """Append a step (only before the first row)."""
        self._steps.append(step)
        self._labels.append(label)
        if self._remembered is None and volatile_step(description):
            self._remembered = {}
        if self._descriptions is not None:
            if description is None:
                self._descriptions = None
            else:
                self._descriptions.append(description)
        self.schema = schema
        self.position = {name: i for i, name in enumerate(schema)}

    def _generic(self, row: Row) -> Row | None:
        for step in self._steps:
            row = step(row)
            if row is None:
                return None
        return row

    def apply(self, row: Row) -> Row | None:
        """The chain on one row (compiled on the first row it sees)."""
        chain = self._chain
        if chain is None:
            chain = self._compile_chain(row)
        return chain(row)

    def _compile_chain(self, sample: Row) -> Step:
        chain = self._chain = self._generic
        if self._descriptions is not None and self._compile_steps is not None:
            chain = self._chain = self._compile_steps(self._input_schema, self._descriptions, self._generic, sample)
        return chain

    def push(self, deltas: list[Delta]) -> None:
        chain = self._chain
        if chain is None:
            chain = self._compile_chain(deltas[0][0])
        if self._remembered is not None:
            self._push_remembering(deltas, chain)
            return
        out = []
        for row, mult in deltas:
            result = chain(row)
            if result is not None:
                out.append((result, mult))
        self.emit(out)

    def _push_remembering(self, deltas: list[Delta], chain: Step) -> None:
        """A volatile chain runs once per held row; its retraction repeats that output."""
        remembered = self._remembered
        assert remembered is not None
        out = []
        for row, mult in deltas:
            held = remembered.get(row)
            if held is None:
                if mult < 0:
                    raise ValueError(f"retraction of a row that is not held: {row!r}")
                held = remembered[row] = [chain(row), 0]
            held[1] += mult
            if held[1] <= 0:
                if held[1] < 0:
                    raise ValueError(f"retraction below zero for row {row!r}")
                del remembered[row]
            if held[0] is not None:
                out.append((held[0], mult))
        self.emit(out)

    def state_size(self) -> int:
        return 0 if self._remembered is None else len(self._remembered)

    def describe(self) -> str:
        return self.label + (" (remembers its volatile values)" if self._remembered is not None else "")


class UnionOp(Operator):
    """Bag union; each input is re-laid out to the union schema."""

    def __init__(self, schema: tuple[str, ...], input_schemas: list[tuple[str, ...]]) -> None:
        super().__init__(schema)
        self._layouts = [
            tuple(s.index(v) if v in s else None for v in schema) for s in input_schemas
        ]

    def input(self, port: int) -> Callable[[list[Delta]], None]:
        layout = self._layouts[port]

        def push(deltas: list[Delta]) -> None:
            self.emit([(tuple(row[i] if i is not None else None for i in layout), m) for row, m in deltas])

        return push
