"""R2S emitters, after RSP4J: *what* a query reports at an instant. Each gives the
instant's ``content`` (None: nothing changed since it last looked), which the query's
reporting strategy (:mod:`taxi_rsp.engine.policies`) judges, and makes the
:class:`~taxi_rsp.engine.report.QueryOutput` of a content that is reported.

* :class:`Rstream` - the whole ordered result (a snapshot of the top-k, projected);
* :class:`IstreamDstream` - the net rows inserted and deleted during the instant;
* :class:`ConstructStream` - the triples the CONSTRUCT template makes of the inserted rows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

import cython

from taxi_rsp.engine.ops.stateless import project_step
from taxi_rsp.engine.report import QueryOutput, Trigger
from taxi_rsp.engine.rowcache import ByIdentity


class Emitter(Protocol):
    name: str

    def attach(self, root: Any) -> None:
        """Start receiving the deltas of the plan's ``root`` (if the emitter needs them)."""

    def content(self, query: Any) -> Any | None:
        """What the instant holds to report, or None when nothing changed."""

    def output(self, query: Any, trigger: Trigger, content: Any) -> QueryOutput | None:
        """The output reporting ``content``, or None when it makes none."""


@cython.cclass
class Rstream:
    """The whole ordered result. (Compiled, an extension type: it runs every instant,
    and for a reported one its work counts in the output line's delay.)"""

    name = "Rstream (the ordered result)"
    _root = cython.declare(object)
    _projected = cython.declare(object)  # ByIdentity | None

    def __init__(self) -> None:
        # the plan's ordered root and projection, looked up once (an emitter serves one query)
        self._root = None
        # projections of the last snapshot's rows: a row the root reports again (as the
        # same object) keeps its projection, so comparing with the last result finds the
        # rows identical without comparing their values
        self._projected = None

    def attach(self, root: Any) -> None:
        """Nothing to collect: the content is read from the ordered root."""

    def content(self, query: Any) -> list | None:
        root = self._root
        if root is None:
            root = self._root = query.physical.ordered_root
        if not root.changed:
            return None
        projected = self._projected
        if projected is None:
            projected = self._projected = ByIdentity(project_step(query.physical.projection))
        return projected.map(root.snapshot())

    def output(self, query: Any, trigger: Trigger, content: Any) -> QueryOutput | None:
        return QueryOutput(query.name, query.dictionary, trigger, query.columns, rows=content)


class IstreamDstream:
    """The net rows inserted and deleted during the instant (collected from the plan's
    root as deltas)."""

    name = "Istream/Dstream (the rows inserted and deleted during the instant)"

    def __init__(self) -> None:
        self.pending: Counter = Counter()

    def attach(self, root: Any) -> None:
        root.connect(self.collect)

    def collect(self, deltas: list) -> None:
        pending = self.pending
        for row, mult in deltas:
            pending[row] += mult

    def content(self, query: Any) -> tuple[list[tuple], list[tuple]] | None:
        if not self.pending:
            return None
        project = project_step(query.physical.projection)
        inserted: list[tuple] = []
        deleted: list[tuple] = []
        for row, mult in self.pending.items():
            projected = project(row)
            if mult > 0:
                inserted.extend([projected] * mult)
            elif mult < 0:
                deleted.extend([projected] * -mult)
        self.pending.clear()
        return (inserted, deleted) if inserted or deleted else None

    def output(self, query: Any, trigger: Trigger, content: Any) -> QueryOutput | None:
        inserted, deleted = content
        return QueryOutput(query.name, query.dictionary, trigger, query.columns, rows=inserted, deleted=deleted)


class ConstructStream(IstreamDstream):
    """The triples the template makes of the rows inserted during the instant (one
    result graph per instant), when there are any."""

    name = "CONSTRUCT stream (the triples of the rows inserted during the instant)"

    def output(self, query: Any, trigger: Trigger, content: Any) -> QueryOutput | None:
        output = super().output(query, trigger, content)
        output.triples = query.construct(output.rows)  # type: ignore[union-attr]
        return output if output.triples else None  # type: ignore[union-attr]
