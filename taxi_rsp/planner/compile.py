"""The compile step: CQELS-QL text -> a :class:`~taxi_rsp.engine.physical.QueryPlan`
the engine can run.

parse (:mod:`taxi_rsp.lang`) -> logical plan, rewritten and pruned
(:mod:`taxi_rsp.algebra`) -> physical operators (:class:`~taxi_rsp.planner.builder.PlanBuilder`),
built for one engine: its dictionary, static data, shared pipelines and configuration.

>>> from taxi_rsp.engine.engine import Engine
>>> engine = Engine()
>>> query = register(engine, "SELECT ?o WHERE { STREAM <http://s> [RANGE 1m] { ?x <http://p> ?o } }", "demo")
>>> query.name, query.columns
('demo', ('o',))
"""

from __future__ import annotations

from taxi_rsp.algebra.join_order import order_joins
from taxi_rsp.algebra.optimize import optimize
from taxi_rsp.algebra.prune import prune
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.algebra.window_graph import split_blocks
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.physical import QueryPlan
from taxi_rsp.engine.query import Listener, RegisteredQuery
from taxi_rsp.lang.ast import draws
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.planner.builder import PlanBuilder
from taxi_rsp.planner.instantiate import instantiate


def compile_query(engine: Engine, text: str, name: str, params: dict[str, str] | None = None,
                  source: str = "<query>") -> QueryPlan:
    """Parse, translate, optimise and build ``text`` for ``engine``; raises
    QuerySyntaxError / UnsupportedQueryError (both UserError) on bad queries. A query
    whose plan equals one the engine already runs gets that query's physical plan."""
    ast = parse_query(text, params, source)
    logical = translate_query(ast)
    config = engine.config
    # a STREAM block matches over its window's content, across events (RSP-QL); joins
    # in an order without avoidable cross products
    logical.root = optimize(order_joins(split_blocks(logical.root, config.subject_disjoint_streams)))
    if config.prune_columns:
        logical.root = prune(logical.root)
    shareable = config.share_pipelines and not draws(ast)  # RAND(): each query its own draws
    key = (repr(logical.root), logical.form, logical.projection, repr(ast.template)) if shareable else None
    physical = engine.shared_plan(key)
    if physical is None:
        builder = PlanBuilder(engine.dictionary, engine.static, config)
        physical = instantiate(builder.plan_query(logical), engine.dictionary, engine.static,
                               engine.pipelines if config.share_pipelines else None, builder.build)
    return QueryPlan(name, ast, logical, physical, key, source)


def register(engine: Engine, text: str, name: str, params: dict[str, str] | None = None,
             listener: Listener | None = None, source: str = "<query>") -> RegisteredQuery:
    """:func:`compile_query`, then :meth:`Engine.register <taxi_rsp.engine.engine.Engine.register>`."""
    return engine.register(compile_query(engine, text, name, params, source), listener)
