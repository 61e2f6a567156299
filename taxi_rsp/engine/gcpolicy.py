"""Garbage-collector settings for a long run of the engine.

CPython's cyclic collector runs a young-generation pass every 700 net container
allocations, and the engine allocates a tuple or list per binding, group and delta:
on Q2 the collector took 6-7 % of the CPU and its full passes, which traverse every
window entry and group, stall single events for milliseconds (they show up as delay
outliers). The engine's state holds almost no reference cycles (window entries,
group states and index dicts are trees), so :func:`engine_gc` makes collections rare
instead of disabling them: young passes every 100,000 allocations, full passes rarely,
and everything allocated before the first event (modules, parsed and compiled plans)
frozen out of the collector's sight. Cyclic garbage is still reclaimed.

>>> import gc
>>> before = gc.get_threshold()
>>> with engine_gc():
...     gc.get_threshold()
(100000, 50, 1000)
>>> gc.get_threshold() == before
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (100_000, 50, 1000)


@contextmanager
def engine_gc() -> Iterator[None]:
    """Rare collections for the duration of a run; the previous settings after it."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()  # start-up objects: never traversed again by this run's collections
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
