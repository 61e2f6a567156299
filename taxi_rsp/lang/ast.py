"""The abstract syntax of CQELS-QL, produced by :mod:`taxi_rsp.lang.parser`.

Terms are :mod:`taxi_rsp.rdf.terms` objects with prefixes already expanded; variables
are :class:`Var`. The algebra translation (:mod:`taxi_rsp.algebra.translate`) turns
this tree into a logical plan following SPARQL 1.1 §18.2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from taxi_rsp.rdf.terms import Term


@dataclass(frozen=True, slots=True)
class Var:
    name: str

    def __str__(self) -> str:
        return f"?{self.name}"


Node = Term | Var


@dataclass(frozen=True, slots=True)
class Position:
    line: int
    column: int


# -- expressions --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Const:
    term: Term


@dataclass(frozen=True, slots=True)
class Call:
    """An operator or function call: ``op`` is upper-case (``"+"``, ``"&&"``,
    ``"FLOOR"``) or a full IRI for casts and extension functions."""

    op: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Aggregate:
    name: str  # COUNT, SUM, MIN, MAX, AVG, MEDIAN, SAMPLE, GROUP_CONCAT
    arg: Expr | None  # None for COUNT(*)
    distinct: bool = False
    separator: str | None = None  # GROUP_CONCAT only (None: a single space)


@dataclass(frozen=True, slots=True)
class Exists:
    pattern: GroupPattern
    negated: bool


Expr = Var | Const | Call | Aggregate | Exists


# -- property paths (SPARQL 1.1 §9) ---------------------------------------------------
@dataclass(frozen=True, slots=True)
class PathAlt:
    """``a | b | ...``"""

    alternatives: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class PathSeq:
    """``a / b / ...``"""

    steps: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class PathInv:
    """``^a``"""

    path: Path


@dataclass(frozen=True, slots=True)
class PathMod:
    """``a*``, ``a+`` or ``a?``"""

    path: Path
    mod: str


@dataclass(frozen=True, slots=True)
class PathNeg:
    """``!(a | ^b ...)``: (IRI, inverse) pairs that must not be the edge."""

    iris: tuple[tuple[Term, bool], ...]


Path = Term | PathAlt | PathSeq | PathInv | PathMod | PathNeg


def is_path(node: object) -> bool:
    """True for a property path that is not a plain IRI or variable."""
    return isinstance(node, (PathAlt, PathSeq, PathInv, PathMod, PathNeg))


# -- graph patterns -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TriplePattern:
    s: Node
    p: Node | Path  # a Path only where translate handles property paths
    o: Node


@dataclass(frozen=True, slots=True)
class BGP:
    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """``kind`` is RANGE, TRIPLES, NOW or ALL; durations are in milliseconds."""

    kind: str
    range_ms: int | None = None
    slide_ms: int | None = None
    count: int | None = None


@dataclass(frozen=True, slots=True)
class StreamPattern:
    stream: Node
    window: WindowSpec
    pattern: GroupPattern
    position: Position


@dataclass(frozen=True, slots=True)
class GraphGraphPattern:
    graph: Node
    pattern: GroupPattern
    position: Position | None = None


@dataclass(frozen=True, slots=True)
class OptionalPattern:
    pattern: GroupPattern


@dataclass(frozen=True, slots=True)
class MinusPattern:
    pattern: GroupPattern


@dataclass(frozen=True, slots=True)
class UnionPattern:
    alternatives: tuple[GroupPattern, ...]


@dataclass(frozen=True, slots=True)
class Filter:
    expr: Expr


@dataclass(frozen=True, slots=True)
class Bind:
    expr: Expr
    var: Var
    position: Position | None = None


@dataclass(frozen=True, slots=True)
class Values:
    """Inline data (``VALUES``): ``rows`` hold terms, None for UNDEF."""

    vars: tuple[Var, ...]
    rows: tuple[tuple[Term | None, ...], ...]


@dataclass(frozen=True, slots=True)
class SubSelect:
    query: Query


@dataclass(frozen=True, slots=True)
class GroupPattern:
    elements: tuple[PatternElement, ...]


PatternElement = (
    BGP | StreamPattern | GraphGraphPattern | OptionalPattern | MinusPattern | UnionPattern
    | Filter | Bind | SubSelect | GroupPattern | Values
)


# -- queries ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SelectItem:
    var: Var
    expr: Expr | None = None  # None: a plain variable


@dataclass(frozen=True, slots=True)
class OrderCondition:
    expr: Expr
    descending: bool = False


@dataclass(frozen=True, slots=True)
class GroupCondition:
    expr: Expr
    var: Var | None = None


@dataclass(frozen=True)
class Query:
    form: str  # SELECT, CONSTRUCT or ASK
    where: GroupPattern
    projection: tuple[SelectItem, ...] | None = None  # None: SELECT *
    template: tuple[TriplePattern, ...] = ()
    distinct: bool = False
    group_by: tuple[GroupCondition, ...] = ()
    having: tuple[Expr, ...] = ()
    order_by: tuple[OrderCondition, ...] = ()
    limit: int | None = None
    offset: int = 0
    datasets: tuple[tuple[str, bool], ...] = ()  # (iri, named)
    prefixes: dict[str, str] = field(default_factory=dict)
    values: Values | None = None  # a trailing VALUES clause
    # where clauses start ("form", "select", "group", "having", "order", "limit"), for
    # registration errors with line:col; ``source`` names the query text
    positions: dict[str, Position] = field(default_factory=dict)
    source: str = "<query>"
    # valid but suspicious constructs, each "source:line:col: reason" (a relative IRI
    # without BASE, a parameter placeholder inside a string): warned at registration
    warnings: tuple[str, ...] = ()


def calls(node: object, function: str) -> bool:
    """Whether a :class:`Call` of ``function`` (upper case) occurs anywhere under
    ``node`` (a query, a pattern or an expression; sub-queries and EXISTS included).

    >>> calls(Filter(Call(">", (Call("NOW", ()), Var("t")))), "NOW")
    True
    >>> calls(Bind(Call("STR", (Var("x"),)), Var("y")), "NOW")
    False
    """
    return _any_call(node, lambda call: call.op == function)


def draws(node: object) -> bool:
    """Whether a volatile call (see :func:`is_volatile`) occurs anywhere under ``node``:
    two registrations of such a query draw different values, so they share no plan.

    >>> draws(Filter(Call("<", (Call("RAND", ()), Const(0.5))))), draws(Filter(Var("x")))
    (True, False)
    """
    return _any_call(node, volatile_call)


def _any_call(node: object, test: Callable[[Call], bool]) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Call) and test(item):
            return True
        if isinstance(item, (tuple, list)):
            stack.extend(item)
        elif hasattr(item, "__dataclass_fields__") and not isinstance(item, Term):
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
    return False


# Functions with another value at every call (SPARQL 1.1 §17.4: RAND, NOW, UUID,
# STRUUID; BNODE() without an argument too, see is_volatile)
VOLATILE_FUNCTIONS = frozenset({"NOW", "RAND", "UUID", "STRUUID"})


def is_volatile(expr: object) -> bool:
    """Whether two evaluations of ``expr`` on one row may differ: such a value must be
    computed once per row and remembered, never recomputed (for a retraction, say).

    >>> is_volatile(Call("+", (Var("x"), Call("RAND", ()))))
    True
    >>> is_volatile(Call("BNODE", (Var("x"),)))
    False
    """
    if not isinstance(expr, Call):
        return False
    return volatile_call(expr) or any(is_volatile(arg) for arg in expr.args)


def volatile_call(call: Call) -> bool:
    """Whether this call itself draws a new value each time (its arguments aside)."""
    return call.op in VOLATILE_FUNCTIONS or (call.op == "BNODE" and not call.args)
