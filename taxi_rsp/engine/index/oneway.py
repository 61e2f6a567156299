"""One-way index: left rows by key, each with its multiplicity and a match counter.

Used by MINUS / NOT EXISTS / EXISTS / OPTIONAL: the counter records how many right
mappings currently match a left row, so a right-side insert or retraction decides in
O(1) per affected left row whether the row's visibility flips (ERRATA S2-10: the
counters are what the printed equations are missing).
"""

from __future__ import annotations

from collections.abc import Iterator


class Entry:
    __slots__ = ("matches", "mult")

    def __init__(self, mult: int, matches: int) -> None:
        self.mult = mult
        self.matches = matches


class OneWayIndex:
    __slots__ = ("_keys", "_size", "_wild")

    def __init__(self) -> None:
        self._keys: dict[tuple, dict[tuple, Entry]] = {}
        self._wild: set[tuple] = set()  # stored keys with unbound parts
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def get(self, key: tuple, row: tuple) -> Entry | None:
        rows = self._keys.get(key)
        return rows.get(row) if rows is not None else None

    def put(self, key: tuple, row: tuple, entry: Entry) -> None:
        self._keys.setdefault(key, {})[row] = entry
        self._size += 1
        if None in key:
            self._wild.add(key)

    def remove(self, key: tuple, row: tuple) -> None:
        rows = self._keys[key]
        del rows[row]
        self._size -= 1
        if not rows:
            del self._keys[key]
            self._wild.discard(key)

    def rows(self, key: tuple) -> Iterator[tuple[tuple, Entry]]:
        rows = self._keys.get(key)
        if rows:
            yield from list(rows.items())

    def rows_matching(self, key: tuple) -> Iterator[tuple[tuple, Entry]]:
        """Rows under ``key``; a key with unbound parts, or stored keys with unbound
        parts, need a scan (the caller re-checks compatibility)."""
        if None in key:
            yield from self.all_rows()
            return
        yield from self.rows(key)
        for stored in list(self._wild):
            yield from self.rows(stored)

    def all_rows(self) -> Iterator[tuple[tuple, Entry]]:
        for rows in list(self._keys.values()):
            yield from list(rows.items())
