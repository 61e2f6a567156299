"""The DEBS 2015 challenge output: one line per change of the ordered top-10 ids.

A profile names the query's result variables to print (with their formats) and the
variables that identify an entry: a line is written iff the ordered list of those ids
differs from the last line written (SPEC §5), whatever the other values do. The
triggering trip's pickup and drop-off text come from the run's source (a
:data:`TriggerStamps`), not from the event: only a taxi CSV has them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import cython

from taxi_rsp.listener.formats import FORMATTERS, timestamp
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.engine.rowcache import ByIdentity
from taxi_rsp.outputs.delay_log import DelayLog
from taxi_rsp.rdf.events import GraphEvent

TriggerStamps = Callable[[GraphEvent], tuple[str, str]]
"""The pickup and drop-off text of a triggering event, from the source that made it
(:func:`taxi_rsp.feeder.trip_stamps` for the taxi CSV)."""


@dataclass(frozen=True)
class DebsProfile:
    name: str
    columns: tuple[tuple[str, str], ...]  # (result variable, formatter name)
    key: tuple[str, ...]
    entries: int = 10

    @property
    def field_count(self) -> int:
        return 2 + self.entries * len(self.columns) + 1


PROFILES: dict[str, DebsProfile] = {
    "debs-q1": DebsProfile("q1", (("startCell", "text"), ("endCell", "text")), ("startCell", "endCell")),
    "debs-q2": DebsProfile(
        "q2",
        (("cell", "text"), ("emptyTaxis", "integer"), ("medianProfit", "money"), ("profitability", "fixed4")),
        ("cell",),
    ),
}


_TEXTS_LIMIT = 1 << 16  # per column; emptied when exceeded (memory stays bounded)
_perf_counter_ns = time.perf_counter_ns  # the end of each written line's delay (SPEC §5)


@cython.cclass
class DebsTopKWriter:
    """Listener writing SPEC §5 lines to ``out``; keeps the delays for the summary.

    Compiled, an extension type: it runs once per reported instant, and every written
    line's delay runs until it has formatted the line, so its attribute reads are C
    struct fields and a call is the type's call slot (a Python class's ``__call__``
    goes through a method look-up and an instance ``__dict__`` per attribute)."""

    profile = cython.declare(object, visibility="readonly")  # DebsProfile
    out = cython.declare(object, visibility="readonly")  # TextIO
    delays_ms = cython.declare(object, visibility="readonly")  # DelayLog
    emitted = cython.declare(cython.Py_ssize_t, visibility="readonly")
    _entries_shown = cython.declare(cython.Py_ssize_t)
    _value_pos = cython.declare(list)
    _texts = cython.declare(list)
    _key_pos = cython.declare(list)
    _records = cython.declare(object)  # ByIdentity
    _dictionary = cython.declare(object)
    _last_key = cython.declare(list)
    _null_entry = cython.declare(str)
    _stamps = cython.declare(object)  # TriggerStamps

    def __init__(self, profile: DebsProfile, out: TextIO, columns: tuple[str, ...], stamps: TriggerStamps) -> None:
        missing = [var for var, _ in profile.columns if var not in columns]
        if missing:
            raise ValueError(
                f"listener {profile.name}: the query does not select {', '.join('?' + m for m in missing)}"
            )
        self.profile = profile
        self.out = out
        self._stamps = stamps
        self._entries_shown = profile.entries
        self._value_pos = [(columns.index(var), FORMATTERS[fmt]) for var, fmt in profile.columns]
        # Term ids never change meaning, and the same few thousand cells, counts and
        # amounts fill every line: each column keeps the text of each id it formatted.
        self._texts = [{} for _ in profile.columns]
        self._key_pos = [columns.index(var) for var in profile.key]
        # per row object, [its entry's ids, its entry's text (None until a line shows it)]:
        # most rows of an output are those of the last one, the very objects the query
        # reports again, so one look-up by identity finds both
        self._records = ByIdentity(self._record_of)
        self._dictionary = None  # the query's Dictionary (known from its first output)
        self._last_key = []
        self._null_entry = ",".join(["NULL"] * len(profile.columns))
        self.delays_ms = DelayLog()
        self.emitted = 0

    def __call__(self, output: QueryOutput) -> None:
        if self._dictionary is None:
            self._dictionary = output.dictionary
        rows = output.rows
        if len(rows) > self._entries_shown:
            rows = rows[: self._entries_shown]
        records = cython.declare(list, self._records.map(rows))
        key = [record[0] for record in records]
        if key == self._last_key:
            return
        self._last_key = key
        parts = []
        trigger = output.trigger
        if trigger.event is None:
            stamp = timestamp(trigger.time)
            parts += [stamp, stamp]
        else:
            parts += self._stamps(trigger.event)
        for record in records:
            text = record[1]
            if text is None:
                text = record[1] = self._entry(record[2])
            parts.append(text)
        if len(records) < self._entries_shown:
            parts += [self._null_entry] * (self._entries_shown - len(records))
        body = ",".join(parts)
        if trigger.event is None:
            delay = "NULL"
        else:
            delay_ms = (_perf_counter_ns() - trigger.event.read_ns) / 1e6
            self.delays_ms.append(delay_ms)
            delay = f"{delay_ms:.3f}"
        self.out.write(f"{body},{delay}\n")
        self.emitted += 1

    def _record_of(self, row: tuple) -> list:
        """``[ids, None, row]``: the ids identifying ``row``'s entry (what decides whether a
        line is written), the slot of its text, and the row to format it from."""
        return [tuple([row[i] for i in self._key_pos]), None, row]

    def _entry(self, row: tuple) -> str:
        """The text of ``row``'s entry."""
        fields = []
        for (i, fmt), texts in zip(self._value_pos, self._texts):
            term_id = row[i]
            if term_id is not None and type(term_id) is not int:
                # a computed value (an exact ratio, say) is a new object per row: keyed by
                # value it would hash its Fraction (Python code) to find nothing
                fields.append(fmt(term_id.value))
                continue
            text = texts.get(term_id)
            if text is None:
                text = texts[term_id] = fmt(None if term_id is None else self._dictionary.value(term_id))  # type: ignore[union-attr]
                if len(texts) > _TEXTS_LIMIT:
                    texts.clear()
            fields.append(text)
        return ",".join(fields)
