"""The physical rule *latest per key*: a FILTER NOT EXISTS that asks, inside the window it
filters, for a later row of the same key.

Q2's empty taxis and any "current state of each entity" query have this shape::

    STREAM <s> [RANGE 30m] { ?trip :taxi ?taxi ; :seq ?seq ; ... }   FILTER(...)
    FILTER NOT EXISTS {
      STREAM <s> [RANGE 30m] { ?later :taxi ?taxi ; :seq ?seq2 ; ... }   FILTER(...)
      FILTER(?seq2 > ?seq)
    }

When the inner block is the outer one again — the same stream and RANGE, the same
patterns (a star's in any order) and the same filters and binds before the last filter,
up to variable names —
and the shared variables and the compared ones (``?seq2``, ``?seq``) are the same columns
of it, both windows hold the same events, so a row survives exactly when no row of its
key arrived after it with a greater value. While every key's values grow with arrival
(checked on each row at run time), that is the key's newest row, and one operator keeping
each key's rows in arrival order answers with no inner window and no match counting
(:mod:`taxi_rsp.engine.compiled.latest`); a value that does not grow hands its rows to the
anti-join this rule replaces.

What does not qualify keeps the anti-join: MINUS (its shared-variable rule differs), other
comparisons (``>=`` matches the row itself; ``<`` asks for an earlier row), windows that
differ in anything but variable names, a FILTER after a BIND in the outer block's last
steps (it would drop rows the inner block keeps), an inner block that adds a BIND of its
own, or an inner row that is not a projection of the outer row.

>>> from dataclasses import replace
>>> from taxi_rsp.lang.ast import TriplePattern, Var, WindowSpec
>>> from taxi_rsp.rdf.terms import IRI
>>> def window(s, k, v):
...     triples = (TriplePattern(Var(s), IRI("urn:key"), Var(k)), TriplePattern(Var(s), IRI("urn:seq"), Var(v)))
...     return X.Window((s, k, v), "urn:s", WindowSpec("RANGE", range_ms=60000), triples, (s, k, v), (), True)
>>> later = Call(">", (Var("v2"), Var("v")))
>>> node = X.Correlated(("t", "k", "v"), "AntiJoin", window("t", "k", "v"), window("u", "k", "v2"), later, False, True)
>>> latest = latest_per_key(node)
>>> latest.keys, latest.value, latest.right_from_left
(('k',), 'v', (0, 1, 2))
>>> latest_per_key(replace(node, condition=Call(">=", (Var("v2"), Var("v"))))) is None
True
"""

from __future__ import annotations

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.ops.match import variable_positions
from taxi_rsp.engine.pipeline import canonical
from taxi_rsp.lang.ast import Call, TriplePattern, Var
from taxi_rsp.planner import physical as X

_MIRRORED = {">": ">", "<": ">"}  # ?later > ?v, or ?v < ?later: the later row's value is greater


def latest_per_key(node: X.Correlated) -> X.LatestPerKey | None:
    """``node`` as :class:`~taxi_rsp.planner.physical.LatestPerKey` when its shape
    qualifies (module docstring), else None."""
    if node.kind != "AntiJoin" or node.minus or not node.specialised or node.condition is None:
        return None
    left, right = node.left, node.right
    if not (isinstance(left, X.Window) and isinstance(right, X.Window)):
        return None
    if left.stream != right.stream or left.spec != right.spec or left.graph is not None or right.graph is not None:
        return None
    if left.spec.kind != "RANGE" or left.spec.slide_ms is not None:
        return None  # a RANGE window lets rows go in arrival order: each key's oldest first
    outer, inner = _split(left), _split(right)
    if outer is None or inner is None:
        return None
    (outer_core, outer_schema), (inner_core, inner_schema) = outer, inner
    if outer_core != inner_core or len(outer_schema) != len(inner_schema):
        return None  # not the same block up to variable names
    if any(isinstance(step, P.Extend) for step in right.steps[_core_length(right):]):
        return None  # an inner BIND of its own: its rows are not the outer rows'
    column = {name: i for i, name in enumerate(outer_schema)}  # outer variable -> core column
    inner_column = {name: i for i, name in enumerate(inner_schema)}
    keys = tuple(v for v in left.schema if v in right.schema)
    if not keys or any(column.get(v) is None or column[v] != inner_column.get(v) for v in keys):
        return None  # a shared variable bound in other columns, or by a BIND after the filters
    compared = _compared(node.condition, right.schema, left.schema)
    if compared is None:
        return None
    later, value = compared
    if column.get(value) is None or column[value] != inner_column.get(later):
        return None  # not one column of both blocks
    by_column = {column[v]: i for i, v in enumerate(left.schema) if column.get(v) is not None}
    if any(inner_column.get(v) not in by_column for v in right.schema):
        return None  # an inner column the outer rows do not carry
    right_from_left = tuple(by_column[inner_column[v]] for v in right.schema)
    return X.LatestPerKey(node.schema, node, keys, value, right_from_left)


def _core_length(window: X.Window) -> int:
    """How many of the window's steps come up to and with its last FILTER."""
    filters = [i for i, step in enumerate(window.steps) if isinstance(step, P.Filter)]
    return filters[-1] + 1 if filters else 0


def _split(window: X.Window) -> tuple[tuple, tuple[str, ...]] | None:
    """The window's core (patterns and the steps up to its last FILTER) with variables as
    column numbers, and the core's schema; None when a step draws (a volatile BIND) or a
    projection sits inside the core."""
    if any(P.volatile_step(step) for step in window.steps):
        return None  # RAND(): each block draws its own values
    core = _core_length(window)
    patterns = _in_predicate_order(window.triples)
    schema = list(variable_positions(patterns))  # columns numbered in that order
    column = {name: i for i, name in enumerate(schema)}
    triples = tuple(tuple(("var", column[n.name]) if isinstance(n, Var) else ("term", n) for n in (t.s, t.p, t.o))
                    for t in patterns)
    steps: list[tuple] = []
    for step in window.steps[:core]:
        if isinstance(step, P.Project):
            return None  # a projection inside the core renumbers the columns: not compared
        # the pipelines' own "same computation up to variable names" (engine/pipeline.py)
        steps.append((type(step).__name__, canonical(step.expr, tuple(schema))))
        if isinstance(step, P.Extend):
            schema.append(step.var)
    return (triples, tuple(steps)), tuple(schema)


def _in_predicate_order(triples: tuple[TriplePattern, ...]) -> tuple[TriplePattern, ...]:
    """A star's patterns (one subject variable, each predicate a constant, once) ordered
    by predicate, so that two stars written in another order compare equal; other
    patterns as written.

    >>> from taxi_rsp.rdf.terms import IRI
    >>> star = (TriplePattern(Var("t"), IRI("urn:b"), Var("x")), TriplePattern(Var("t"), IRI("urn:a"), Var("y")))
    >>> [t.o.name for t in _in_predicate_order(star)]
    ['y', 'x']
    """
    subjects = {t.s for t in triples}
    predicates = [t.p for t in triples]
    if len(subjects) != 1 or not isinstance(triples[0].s, Var) or any(isinstance(p, Var) for p in predicates) \
            or len(set(predicates)) != len(predicates):
        return triples
    return tuple(sorted(triples, key=lambda t: repr(t.p)))


def _compared(condition: object, inner: tuple[str, ...], outer: tuple[str, ...]) -> tuple[str, str] | None:
    """``(later, value)`` when the condition is ``?later > ?value`` (or ``?value <
    ?later``) with ``?later`` an inner-only variable and ``?value`` an outer one."""
    if not (isinstance(condition, Call) and condition.op in _MIRRORED and len(condition.args) == 2):
        return None
    a, b = condition.args
    if not (isinstance(a, Var) and isinstance(b, Var)):
        return None
    later, value = (a.name, b.name) if condition.op == ">" else (b.name, a.name)
    if later in outer or later not in inner or value not in outer:
        return None
    return later, value

