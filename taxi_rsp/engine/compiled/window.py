"""The RANGE window's per-event calls, specialised: closures over the window's buffer
that replace its ``insert`` / ``expire`` / ``next_expiry`` (no dispatch through the
window's kind per event, C-typed locals, one expiry object shared by the events of one
instant). Same entries, same deltas, same order as the reference rules of
:class:`~taxi_rsp.engine.ops.window_kinds.RangeWindow`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cython

from taxi_rsp.engine.ops.window_kinds import RangeWindow
from taxi_rsp.engine.reclaim import retired as _retired_list

if TYPE_CHECKING:
    from taxi_rsp.engine.ops.window import WindowScan
    from taxi_rsp.engine.view import EventView

retired = cython.declare(list, _retired_list)  # typed: appends are C calls (see reclaim)


@cython.ccall  # compiled: a C call from the arrival closure below
def _held(rows: list) -> object:
    """:func:`~taxi_rsp.engine.ops.window_kinds.held_rows`, as a C function."""
    return rows[0] if len(rows) == 1 else rows


def specialise_window(scan: WindowScan) -> None:
    """Give a RANGE (or NOW) window its specialised per-event calls; other kinds keep
    their rules (a SLIDE window's events wait for boundaries)."""
    if type(scan.kind) is not RangeWindow:
        return
    _bind_range(scan)


def _bind_range(scan: WindowScan) -> None:
    """An arrival adds one entry when any output has rows (twins share this buffer: the
    entry holds each one's rows) and emits each output's rows in turn; a scan with one
    output (the common case) does so without a tuple of per-output lists. An expiry goes
    to the kind's rule."""
    kind = scan.kind
    entries, outputs, range_ms = scan._entries, scan._outputs, kind.range_ms
    expire_entries, add_entry = kind.expire, entries.append
    # per output: a list whose first item computes its rows of an event (the cells of
    # its node of the shared pipeline, see PipelineNode._bind, or its own chain) and
    # its consumers (a list extended, never replaced). Taken at the first arrival: the
    # plan is complete by then, while this binding comes before WindowScan.share()
    # and absorb()
    feeds = cython.declare(list, [])
    consumers = cython.declare(list, [])
    # the last arrival's time and expiry: the events of one second share one expiry
    # object, held by each of their entries for the whole window
    last = cython.declare(list, [None, None])

    def insert(time: int, view: EventView) -> None:
        if time != last[0]:
            last[0], last[1] = time, time + range_ms
        if not consumers:
            for output in outputs:
                feeds.append(output._leaf._cells if output._leaf is not None else [output._rows])
                consumers.append(output._sinks)
        if len(consumers) == 1:
            rows = cython.cast(list, feeds[0])[0](view)
            if rows:
                add_entry((last[1], _held(rows)))
                deltas = [(row, 1) for row in rows]
                for sink in consumers[0]:  # Operator.emit, without its call and look-ups
                    sink(deltas)
                retired.append(deltas)  # freed after the event's outputs (see reclaim)
            return
        # twins share this buffer: one flat entry holds what held_rows keeps of each
        # one's rows (no list or tuple of them per event)
        batch = cython.declare(list, [cython.cast(list, feed)[0](view) for feed in feeds])
        if any(batch):
            if len(batch) == 2:  # a block and its NOT EXISTS / OPTIONAL twin
                add_entry((last[1], _held(batch[0]), _held(batch[1])))
            else:
                add_entry(tuple([last[1]] + [_held(rows) for rows in batch]))
        n = cython.declare(cython.Py_ssize_t)
        for n in range(len(batch)):
            rows = batch[n]
            if rows:
                deltas = [(row, 1) for row in rows]
                for sink in consumers[n]:
                    sink(deltas)
                retired.append(deltas)

    def expire(until: int) -> None:
        if entries and entries[0][0] <= until:
            expire_entries(scan, until)

    def next_expiry() -> int | None:
        return entries[0][0] if entries else None

    scan.insert = insert  # type: ignore[method-assign]
    scan.expire = expire  # type: ignore[method-assign]
    scan.next_expiry = next_expiry  # type: ignore[method-assign]


