"""A GROUP BY ranked in its table: the ordered root of ``SELECT … GROUP BY … ORDER BY
<aggregates> LIMIT k`` (issue 50), over a window or over any operator's deltas.

Planned as a :class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate` whose groups
feed a top-k, the query pays for every group change twice over: the table builds the
group's new row and emits a retraction/insertion pair, and the top-k keys, places and
frees them — though most changes (Q1: 19 of 20) are far below the reported rows. Here
the table keeps the ranking itself (:meth:`GroupTable.rank_by`: the best groups in
order, int64 comparisons of the aggregates' values and the key ids, the others
unordered behind a bound), so a change far from the top costs one comparison and no
Python object, and rows are built only for the reported groups.

The order is the reference top-k's: the ORDER BY values (each a COUNT, SUM, MIN or MAX,
held as integers or decimals scaled alike, so their int64 order is the values' order; an
unbound one — an error, or MIN/MAX of no value, over deltas — before every number), then
the row's ids, whose first differing part between two groups is in their keys.
When the table hands over to the reference (a value it cannot hold, see
:class:`CompiledAggregate`), the reference :class:`~taxi_rsp.engine.ops.group.GroupOp`
reports every group once to a reference :class:`~taxi_rsp.engine.ops.topk.TopKOp`,
which answers from then on.

>>> from taxi_rsp.engine.engine import Engine
>>> from taxi_rsp.planner import register
>>> q = register(Engine(), 'SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <http://s> [RANGE 1m] '
...     '{ ?x <http://p> ?k } } GROUP BY ?k ORDER BY DESC(?n) LIMIT 3', "demo")
>>> type(q.physical.ordered_root).__name__
'RankedAggregate'
"""

from __future__ import annotations

from typing import Any

from taxi_rsp.engine.compiled.aggregate import CompiledAggregate
from taxi_rsp.engine.compiled.latest import LatestStage
from taxi_rsp.engine.compiled.group import CompiledGroup
from taxi_rsp.engine.ops.base import Row
from taxi_rsp.engine.ops.group import GroupOp
from taxi_rsp.engine.ops.topk import TopKOp
from taxi_rsp.engine.ops.window import WindowScan
from taxi_rsp.rdf.dictionary import Dictionary


class _RankedRoot:
    """What a group operator ranked in its table adds: it is its query's ordered root
    (``changed``, :meth:`snapshot`) instead of emitting its groups' changes. ``changed``
    is a plain attribute (the report reads it every instant), kept equal to the reference
    top-k's after a hand-over. (Mixed into
    :class:`CompiledAggregate` and :class:`CompiledGroup`, whose ``_table``, ``mode``,
    ``_keys`` and hooks it uses.)"""

    _table: Any
    mode: str
    schema: tuple[str, ...]
    _keys: tuple[str, ...]

    def _rank(self, variables: list[str], order: list[tuple[str, bool]], limit: int, offset: int,
              reference_topk: TopKOp) -> None:
        """Rank the table by ``order`` ((aggregate variable, descending) pairs);
        ``reference_topk``, over this operator's rows, answers after a hand-over."""
        self._order = [(variables.index(var), descending) for var, descending in order]
        self.limit, self.offset = limit, offset
        self._table.rank_by(self._order, offset, limit)
        self._topk = reference_topk
        self.connect(self._to_reference_topk)  # type: ignore[attr-defined] # only the reference group emits, after a hand-over
        self._rows: list[Row] = []
        self.changed = True  # whether the reported rows may differ from the last snapshot

    def _to_reference_topk(self, deltas: list) -> None:
        self._topk.push(deltas)
        self.changed = self._topk.changed

    def snapshot(self) -> list[Row]:
        """The reported rows (OFFSET/LIMIT applied), as the reference top-k orders them."""
        self.changed = False
        if self.mode == "reference":
            return self._topk.snapshot()
        return self._rows

    def describe(self) -> str:
        order = ", ".join(f"{'DESC' if desc else 'ASC'} ?{self.schema[len(self._keys) + j]}"
                          for j, desc in self._order)
        ranking = "" if self.mode == "reference" else f", ranked by {order or 'key'} in the table"
        return f"{super().describe()}{ranking}, offset {self.offset} limit {self.limit}"  # type: ignore[misc]

    def _table_flush(self) -> Any:
        table = self._table

        def flush() -> None:
            rows = table.ranked_flush()
            if rows is not None:
                self._rows = rows
                self.changed = True

        return flush

    def _carry_outputs(self, reference: GroupOp, table: Any) -> None:
        """The consumers hold no group's row (the top-k starts empty): the reference
        reports every group at its next flush, and the top-k starts from the last
        reported rows."""
        pending: dict[tuple, Row | None] = {}
        for key, state in reference.groups().items():
            state.output = None
            pending[key] = None
        reference.expect_flush(pending)
        self._topk.last_snapshot = self._rows
        self._topk.changed = True


class RankedAggregate(_RankedRoot, CompiledAggregate):
    """A window's GROUP BY (:class:`CompiledAggregate`) ranked in its table."""

    def __init__(self, window: WindowScan, keys: tuple[str, ...], aggregates: list, dictionary: Dictionary,
                 order: list[tuple[str, bool]], limit: int, offset: int, reference_topk: TopKOp,
                 latest: LatestStage | None = None) -> None:
        """``order``: (aggregate variable, descending) pairs; ``reference_topk``: the
        top-k over this operator's rows that answers after a hand-over; ``latest``: see
        :class:`CompiledAggregate`."""
        CompiledAggregate.__init__(self, window, keys, aggregates, dictionary, latest)
        self._rank([spec[0] for spec in aggregates], order, limit, offset, reference_topk)


class RankedGroup(_RankedRoot, CompiledGroup):
    """A GROUP BY over any operator's deltas (:class:`CompiledGroup`: above a join, a
    NOT EXISTS, an OPTIONAL …) ranked in its table."""

    def __init__(self, input_schema: tuple[str, ...], keys: tuple[str, ...], aggregates: list,
                 reference: GroupOp, dictionary: Dictionary, order: list[tuple[str, bool]], limit: int,
                 offset: int, reference_topk: TopKOp) -> None:
        CompiledGroup.__init__(self, input_schema, keys, aggregates, reference, dictionary)
        self._rank([spec[0] for spec in aggregates], order, limit, offset, reference_topk)
