"""Freeing expired state after an event's outputs are written, not before.

An event that moves a window drops the rows that leave it, and freeing them (the rows,
the window's entries, the operators' records of them) is a fifth of such an event's
work on Q2. None of it decides the event's outputs. Operators hand what they drop to
:data:`retired`; the engine empties it once every query has evaluated the event
(``Engine.process``), so the cost still counts in the run's CPU time but in no output
line's delay (which ends when the line is formatted, SPEC §5). The same holds for what
an event's evaluation merely passes on: the delta lists operators hand to their
consumers (a group's retracted row, a join's retracted merged row often dies with
them), the rows a pipeline computed for the previous event, and that event's view and
graph, which the engine keeps until the next event's outputs are written.

>>> from taxi_rsp.engine.engine import Engine
>>> from taxi_rsp.rdf.events import GraphEvent
>>> retired.append([("a row",)])
>>> Engine().process(GraphEvent(1, 0, (), 0))
>>> retired
[]
"""

from __future__ import annotations

retired: list = []  # dropped by operators during the current event (never read)
