"""The window kinds of CQELS-QL as classes (RSP4J/YASPER's window operators): each
decides when an arriving event's mappings enter a :class:`~taxi_rsp.engine.ops.window.WindowScan`,
when they leave, and the next instant at which the content changes. The planner picks
one per ``STREAM … [window]`` (:func:`window_kind`); ``--explain`` names it.

The buffer itself (entries, waiting events, the derived rows per output) stays in the
scan, which these strategies drive; their semantics are in the module text of
:mod:`taxi_rsp.engine.ops.window` and SPEC §3.

>>> from taxi_rsp.lang.ast import WindowSpec
>>> [window_kind(WindowSpec(kind=k, range_ms=r, slide_ms=s, count=c)).name
...  for k, r, s, c in [("RANGE", 60000, None, None), ("RANGE", 60000, 10000, None),
...                     ("NOW", None, None, None), ("TRIPLES", None, None, 5), ("ALL", None, None, None)]]
['RANGE', 'RANGE SLIDE', 'NOW', 'TRIPLES', 'ALL']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from taxi_rsp.engine.ops.base import Row
from taxi_rsp.engine.reclaim import retired
from taxi_rsp.lang.ast import WindowSpec


if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Sequence

    from taxi_rsp.engine.view import EventView

Rows = tuple[list[Row], ...]  # an event's derived rows, one list per output of the scan


class WindowBuffer(Protocol):
    """What a kind's rules work on: the buffer of a
    :class:`~taxi_rsp.engine.ops.window.WindowScan` (the scan implements it; the kinds
    know only this, so the two modules do not import each other)."""

    _entries: deque[tuple]  # (expiry or arrival number, each output's held rows), in arrival order
    _pending: deque[tuple[int, int, tuple[list[Row], ...]]]  # SLIDE: events waiting for their boundary
    _arrivals: int  # TRIPLES: the triples the entries hold

    def _emit_all(self, batches: list[Sequence[list[Row] | Row]], mult: int, start: int = 0) -> None:
        """Emit ``mult`` for the rows of ``batches`` to each output's consumers."""


class WindowKind:
    """How a window's content changes with time (the base: nothing ever leaves)."""

    name = "ALL"
    range_ms: int | None = None  # a time-based window's length
    slide_ms: int | None = None  # a hopping window's hop

    def insert(self, scan: WindowBuffer, time: int, rows: Rows, view: EventView | None = None) -> None:
        """An event at ``time`` whose derived rows are ``rows`` arrives (``view``: the
        event itself, for a kind that counts its triples)."""
        scan._emit_all([rows], 1)

    def expire(self, scan: WindowBuffer, until: int) -> None:
        """Retract what leaves at or before ``until`` (and let in what enters)."""

    def next_expiry(self, scan: WindowBuffer) -> int | None:
        """The next instant at which the content changes (None: never)."""
        return None



def held_rows(rows: list) -> object:
    """What a window entry keeps of one output's rows of an event: the row itself when
    there is one (most events bind one row: no list to allocate, hold and free for the
    whole window), else the list.

    >>> held_rows([("a",)]), held_rows([("a",), ("b",)]), held_rows([])
    (('a',), [('a',), ('b',)], [])
    """
    return rows[0] if len(rows) == 1 else rows


def held_count(held: list[Row] | Row) -> int:
    """How many rows :func:`held_rows` kept (a row is never a list)."""
    return len(held) if type(held) is list else 1


class RangeWindow(WindowKind):
    """``RANGE d``: an event at t is in the window at τ iff τ − d < t ≤ τ; ``NOW`` is
    ``RANGE 1ms`` on millisecond timestamps."""

    def __init__(self, range_ms: int, name: str = "RANGE") -> None:
        self.range_ms = range_ms
        self.name = name

    def expire(self, scan: WindowBuffer, until: int) -> None:
        entries = scan._entries
        if not entries or entries[0][0] > until:
            return
        gone = []
        while entries and entries[0][0] <= until:
            gone.append(entries.popleft())
        scan._emit_all(gone, -1, 1)
        retired.append(gone)  # freed after the event's outputs (see reclaim)

    def next_expiry(self, scan: WindowBuffer) -> int | None:
        return scan._entries[0][0] if scan._entries else None

    def insert(self, scan: WindowBuffer, time: int, rows: Rows, view: EventView | None = None) -> None:
        """An arrival: one entry (expiring at ``time`` + the range) holding each output's
        rows, when any output has rows, and each output's rows emitted."""
        if not any(rows):
            return
        scan._entries.append((time + self.range_ms, *[held_rows(r) for r in rows]))
        scan._emit_all([rows], 1)


class SlidingWindow(RangeWindow):
    """``RANGE d SLIDE s`` (hopping): the content changes only at boundaries k·s; an
    event waits for the next boundary to enter and leaves at the first boundary ≥ t + d."""

    name = "RANGE SLIDE"

    def __init__(self, range_ms: int, slide_ms: int) -> None:
        super().__init__(range_ms, self.name)
        self.slide_ms = slide_ms

    def _boundary_after(self, time: int) -> int:
        """The first slide boundary >= ``time``."""
        return -((-time) // self.slide_ms) * self.slide_ms

    def insert(self, scan: WindowBuffer, time: int, rows: Rows, view: EventView | None = None) -> None:
        if not any(rows):
            return
        enter = self._boundary_after(time)
        expiry = self._boundary_after(time + self.range_ms)
        if enter == time:
            scan._entries.append((expiry, *rows))
            scan._emit_all([rows], 1)
        elif enter < expiry:  # else (SLIDE > RANGE) it falls between two windows
            scan._pending.append((enter, expiry, rows))

    def expire(self, scan: WindowBuffer, until: int) -> None:
        pending = scan._pending
        if pending and pending[0][0] <= until:
            entered = []
            while pending and pending[0][0] <= until:
                _, expiry, rows = pending.popleft()
                scan._entries.append((expiry, *rows))
                entered.append(rows)
            # expiry boundaries of entered events are >= those already in the buffer
            # (both grow with arrival time), so it stays sorted
            scan._emit_all(entered, 1)
        super().expire(scan, until)

    def next_expiry(self, scan: WindowBuffer) -> int | None:
        times = [q[0][0] for q in (scan._entries, scan._pending) if q]
        return min(times) if times else None

class OpenWindow(SlidingWindow):
    """``RANGE d SLIDE s`` reported on content change (``EngineConfig.slide_report``):
    CQELS's hopping window as the CSRBench oracle models it. Each arrival is an instant
    at which the window holds the events so far of the oldest window (b − d, b] still
    open, the one of the first boundary b ≥ τ: the events with b − d < t ≤ τ. An event
    enters as it arrives and leaves at the first arrival whose oldest open window no
    longer holds it (b ≥ t + d). Content changes only with arrivals, so this kind asks
    for no instants of its own: what leaves is folded into the arrival's report.

    >>> kind = OpenWindow(10_000, 10_000)
    >>> [kind._boundary_after(t) for t in (0, 1, 10_000, 10_001)]
    [0, 10000, 10000, 20000]
    """

    name = "RANGE SLIDE, open window"

    def insert(self, scan: WindowBuffer, time: int, rows: Rows, view: EventView | None = None) -> None:
        """An arrival enters at once; its entry is keyed by t + d (it leaves once the
        first boundary at or after the instant reaches it). With s > d the windows do
        not cover the stream: an event in no window is dropped."""
        if self._boundary_after(time) < time + self.range_ms:
            RangeWindow.insert(self, scan, time, rows, view)

    def expire(self, scan: WindowBuffer, until: int) -> None:
        RangeWindow.expire(self, scan, self._boundary_after(until))

    def next_expiry(self, scan: WindowBuffer) -> int | None:
        return None


class TriplesWindow(WindowKind):
    """``TRIPLES n``: the last n triples of the stream (matching or not), CQELS's
    triple-based window. A graph event is held whole: it is in the window while all of
    its triples are among the last n of the stream, so the window never holds more than
    n triples; an event of more than n triples never enters (docs/semantics.md). On a
    triple stream (one triple per event) this is exactly the last n triples.

    Each entry is (the event's triple count, then each output's rows); ``scan._arrivals``
    counts the triples held.
    """

    name = "TRIPLES"

    def __init__(self, count: int) -> None:
        self.count = count

    def insert(self, scan: WindowBuffer, time: int, rows: Rows, view: EventView | None = None) -> None:
        size = len(view.triples) if view is not None else 1
        entries = scan._entries
        held = scan._arrivals + size
        gone = []
        while entries and held > self.count:
            entry = entries.popleft()
            held -= entry[0]
            gone.append(entry)
        if gone:
            scan._emit_all(gone, -1, 1)
            retired.append(gone)  # freed after the event's outputs (see reclaim)
        if size > self.count:  # its graph never fits: it leaves as it arrives (held is 0 here)
            scan._arrivals = 0
            return
        scan._arrivals = held
        entries.append((size, *rows))
        scan._emit_all([rows], 1)


def window_kind(spec: WindowSpec, slide_report: str = "window close") -> WindowKind:
    """The window class of a ``STREAM … [spec]`` pattern (the planner's choice);
    ``slide_report``: a hopping window's (:class:`~taxi_rsp.engine.config.EngineConfig`)."""
    if spec.kind == "RANGE":
        if spec.slide_ms is not None:
            opened = OpenWindow if slide_report == "content change" else SlidingWindow
            return opened(spec.range_ms, spec.slide_ms)  # type: ignore[arg-type]
        return RangeWindow(spec.range_ms)  # type: ignore[arg-type]
    if spec.kind == "NOW":
        return RangeWindow(1, "NOW")
    if spec.kind == "TRIPLES":
        return TriplesWindow(spec.count)  # type: ignore[arg-type]
    if spec.kind == "ALL":
        return WindowKind()
    raise ValueError(f"unknown window kind {spec.kind!r}")
