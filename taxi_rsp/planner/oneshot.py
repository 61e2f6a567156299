"""One-shot evaluation: a query without STREAM patterns over the static dataset.

Such a query has no evaluation instants of its own: its whole result is the state at
registration, which a continuous run folds into its first report. ``evaluate_once``
returns that state directly, as an ordinary SPARQL engine would (``taxi-rsp query``,
and the W3C SPARQL 1.1 test harness in ``tests/w3c``). NOW() is the wall clock here
(there is no event time).

>>> from taxi_rsp.rdf.terms import IRI
>>> engine = Engine()
>>> engine.static.add(IRI("http://x/a"), IRI("http://x/p"), IRI("http://x/b"))
>>> result = evaluate_once(engine, "SELECT ?o WHERE { <http://x/a> <http://x/p> ?o }")
>>> result.columns, result.rows
(('o',), [(IRI(value='http://x/b'),)])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.expr import set_event_time
from taxi_rsp.engine.query import Trigger
from taxi_rsp.errors import UserError
from taxi_rsp.planner.compile import register
from taxi_rsp.rdf.terms import Term


@dataclass
class OneShotResult:
    form: str  # SELECT, ASK or CONSTRUCT
    columns: tuple[str, ...]
    rows: list[tuple[Term | None, ...]] = field(default_factory=list)  # in ORDER BY order if any
    triples: list[tuple[Term, Term, Term]] = field(default_factory=list)  # CONSTRUCT
    ordered: bool = False
    warnings: tuple[str, ...] = ()  # the parser's (e.g. a relative IRI without BASE), "source:line:col: reason"

    @property
    def boolean(self) -> bool:
        """The answer of an ASK query."""
        value = self.rows[0][0] if self.rows else None
        return value is not None and getattr(value, "lexical", "") == "true"


def evaluate_once(engine: Engine, text: str, name: str = "query", params: dict[str, str] | None = None,
                  source: str = "<query>") -> OneShotResult:
    """Register ``text`` on ``engine`` (before any event) and return its result over the
    static data loaded so far; a query that reads a stream is refused."""
    query = register(engine, text, name, params, source=source)
    if query.streams:
        raise UserError(f"{source}: the query reads a STREAM; one-shot evaluation is for queries over "
                        "static data only (use taxi-rsp run)")
    set_event_time(None)
    output = query.evaluate(Trigger(0))
    result = OneShotResult(query.logical.form, query.columns, ordered=query.logical.ordered,
                           warnings=query.ast.warnings)
    if output is not None:
        result.rows = output.terms()
        result.triples = list(output.triples)
    return result
