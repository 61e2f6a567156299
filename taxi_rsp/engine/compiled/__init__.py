"""The specialised tier: every acceleration of the engine's operators, in one package.

The operators of :mod:`taxi_rsp.engine.ops` are the reference interpreter (plain
Python, no generated code). The planner marks a node of the physical plan
*specialised* where this package covers it (:mod:`taxi_rsp.planner.builder`), and the
instantiation builds the operator from here: generated BGP matchers (:mod:`.match`),
fused steps compiled into one function (:mod:`.codegen`), a RANGE window's per-event
closures (:mod:`.window`), window aggregates and groups (:mod:`.aggregate`,
:mod:`.group`), joins (:mod:`.join`), OPTIONAL / MINUS / EXISTS (:mod:`.correlated`) and
top-k (:mod:`.topk`). Each specialised operator holds its reference twin and hands its
state over through the twin's public methods when a row leaves its fast form;
``--explain`` shows which tier runs each node.
"""
