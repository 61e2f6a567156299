"""Ring index: rows grouped by a join key, probed newest first (CQELS DEBS 2015 §3.2).

Each key owns a ring: an append-only list of ``[row, multiplicity]`` cells in arrival
order, a map from row to its cell, and a counter of live cells. A probe walks the ring
from the newest cell and stops as soon as it has seen ``live`` live cells, so the dead
cells that window expiry leaves at the old end are never visited. Deletion is lazy:
a cell whose multiplicity drops to 0 is only marked dead; the ring is compacted when
dead cells outnumber live ones, which keeps every operation amortised O(1) and memory
proportional to the live rows.

>>> index = RingIndex()
>>> index.add(("k",), ("a",), 1); index.add(("k",), ("b",), 1); index.add(("k",), ("a",), -1)
>>> list(index.probe(("k",)))
[(('b',), 1)]
"""

from __future__ import annotations

from collections.abc import Iterator


class _Ring:
    __slots__ = ("cells", "live", "where")

    def __init__(self) -> None:
        self.cells: list[list] = []
        self.where: dict[tuple, list] = {}
        self.live = 0

    def add(self, row: tuple, mult: int) -> None:
        cell = self.where.get(row)
        if cell is None:
            if mult < 0:
                raise ValueError(f"retraction of a row that is not held: {row!r}")
            cell = [row, mult]
            self.cells.append(cell)
            self.where[row] = cell
            self.live += 1
            return
        cell[1] += mult
        if cell[1] < 0:
            raise ValueError(f"retraction below zero for row {row!r}")
        if cell[1] == 0:
            del self.where[row]
            self.live -= 1
            if len(self.cells) > 2 * self.live + 8:
                self.cells = [c for c in self.cells if c[1] > 0]

    def newest_first(self) -> Iterator[tuple[tuple, int]]:
        remaining = self.live
        cells = self.cells
        i = len(cells) - 1
        while remaining and i >= 0:
            row, mult = cells[i]
            if mult > 0:
                remaining -= 1
                yield row, mult
            i -= 1


class RingIndex:
    """Rows by key; keys that contain ``None`` (unbound) are kept apart as wildcards."""

    __slots__ = ("_rings", "_size", "_wild")

    def __init__(self) -> None:
        self._rings: dict[tuple, _Ring] = {}
        self._wild: dict[tuple, _Ring] = {}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, key: tuple, row: tuple, mult: int) -> None:
        table = self._wild if None in key else self._rings
        ring = table.get(key)
        if ring is None:
            ring = table[key] = _Ring()
        before = ring.live
        ring.add(row, mult)
        self._size += ring.live - before
        if ring.live == 0:
            del table[key]

    def probe(self, key: tuple) -> Iterator[tuple[tuple, int]]:
        ring = self._rings.get(key)
        if ring is not None:
            yield from ring.newest_first()

    def probe_with_wildcards(self, key: tuple) -> Iterator[tuple[tuple, int]]:
        """Rows under ``key`` plus rows whose key has unbound parts (caller re-checks)."""
        yield from self.probe(key)
        for ring in self._wild.values():
            yield from ring.newest_first()

    def all_rows(self) -> Iterator[tuple[tuple, int]]:
        for table in (self._rings, self._wild):
            for ring in table.values():
                yield from ring.newest_first()

    def key_count(self) -> int:
        return len(self._rings) + len(self._wild)

    def cell_count(self) -> int:
        """Cells held including lazily deleted ones (for leak checks)."""
        return sum(len(r.cells) for t in (self._rings, self._wild) for r in t.values())
