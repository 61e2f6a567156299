"""The delays of one output's lines, kept for exact statistics in bounded memory.

A run keeps every line's delay for the summary's nearest-rank percentiles
(:mod:`taxi_rsp.outputs.delays`): 8 bytes per output line, the only part of a run's
memory that grew with the stream (the full synthetic year writes 4.4 million lines,
35 MB of delays; docs/scaling.md). A :class:`DelayLog` holds the newest ``block`` delays
in memory and appends older ones to a temporary file; :func:`spilled_stats` then finds the
exact mean, maximum and percentiles in a few passes over the blocks, never holding more
than one block and a histogram: the percentiles by a radix selection over the
delays' 64-bit patterns (16 bits per pass), so the answer is the very delay the sorting
rule would pick.

>>> log = DelayLog(block=4)
>>> for delay in [5.0, 1.0, float("nan"), 3.0, 2.0, 4.0, 9.5]:
...     log.append(delay)
>>> len(log), log.spilled
(7, 4)
>>> spilled_stats(log)  # count, nulls, mean, p50, p99, max
(6, 1, 4.083333333333333, 3.0, 9.5, 9.5)
>>> log.close()
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import numpy as np

BLOCK = 1 << 16  # delays held in memory (512 KiB) before a block goes to the file


class DelayLog:
    """Delays (ms, NaN for a NULL delay) in arrival order: the newest in memory, older
    blocks in an anonymous temporary file (removed when closed or collected)."""

    def __init__(self, block: int = BLOCK) -> None:
        if block < 1:
            raise ValueError("a block holds at least one delay")
        self._block = block
        self._buffer = array("d")
        self._file: BinaryIO | None = None
        self.spilled = 0  # delays in the file

    def append(self, delay: float) -> None:
        buffer = self._buffer
        buffer.append(delay)
        if len(buffer) >= self._block:
            self._spill()

    def _spill(self) -> None:
        if self._file is None:
            import tempfile  # here: most runs never spill, and start-up stays lean

            self._file = tempfile.TemporaryFile(prefix="taxi-rsp-delays-")
        self._file.seek(0, 2)
        self._buffer.tofile(self._file)
        self.spilled += len(self._buffer)
        self._buffer = array("d")

    def __len__(self) -> int:
        return self.spilled + len(self._buffer)

    def blocks(self) -> Iterator[array]:
        """The delays, oldest first, one block (at most ``block`` delays) at a time."""
        if self._file is not None:
            self._file.seek(0)
            left = self.spilled
            while left:
                block = array("d")
                block.fromfile(self._file, min(left, self._block))
                left -= len(block)
                yield block
        if self._buffer:
            yield self._buffer

    def tofile(self, handle: BinaryIO, start: int = 0) -> int:
        """Write the delays from the ``start``-th on to ``handle`` as array("d") bytes,
        a block at a time (a chunk's own delays, after its warm-up, for the driver of
        ``run --spark``); returns how many were written."""
        written = seen = 0
        for block in self.blocks():
            if seen + len(block) > start:
                part = block[max(0, start - seen):]
                part.tofile(handle)
                written += len(part)
            seen += len(block)
        return written

    def extend_from(self, handle: BinaryIO) -> None:
        """Append the delays :meth:`tofile` wrote to ``handle``, a block at a time."""
        while True:
            block = array("d")
            try:
                block.fromfile(handle, self._block)
            except EOFError:  # the last, shorter block (fromfile keeps what it read)
                pass
            self._buffer.extend(block)  # at most two blocks in memory before the spill
            if len(self._buffer) >= self._block:
                self._spill()
            if len(block) < self._block:
                return

    def buffered(self) -> array:
        """The delays in memory (all of them until the first block went to the file)."""
        return self._buffer

    def recent(self, start: int) -> array:
        """The delays from the ``start``-th on that are still in memory (the live view's
        latest lines)."""
        first = max(0, start - self.spilled)
        return self._buffer[first:]

    def close(self) -> None:
        """Remove the file (the log is empty afterwards)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self.spilled = 0
        self._buffer = array("d")


def spilled_stats(log: DelayLog) -> tuple[int, int, float | None, float | None, float | None, float | None]:
    """``(count, nulls, mean, p50, p99, max)`` of a log's delays (NULLs left out), in
    passes over its blocks: memory bounded by one block and a histogram. The numbers of
    sorting the delays (:func:`~taxi_rsp.outputs.delays.delay_stats`, which calls this
    for a log that spilled)."""
    import numpy as np  # a spilled log holds a block (65,536 delays) or more

    count = nulls = 0
    top = -math.inf
    for block in log.blocks():
        values = _values(np, block)
        count += values.size
        nulls += len(block) - values.size
        if values.size:
            top = max(top, float(values.max()))
    if count == 0:
        return 0, nulls, None, None, None, None
    # exact, one value at a time (a list of a block's floats would be freed to the allocator, not the system)
    mean = math.fsum(value for block in log.blocks() for value in _values(np, block)) / count
    p50, p99 = _ranked(np, log, [nearest_rank(50, count), nearest_rank(99, count)])
    return count, nulls, mean, p50, p99, top


def _values(np, block: array) -> np.ndarray:
    """A block's non-NULL delays."""
    values = np.frombuffer(block, dtype=np.float64)
    return values[~np.isnan(values)]


def nearest_rank(p: int, count: int) -> int:
    """The 1-based nearest rank of the p-th percentile among ``count`` values: ceil(p/100
    × count) in integers, no float rounding (the one rule of :mod:`taxi_rsp.outputs.delays`).

    >>> nearest_rank(50, 4), nearest_rank(99, 4), nearest_rank(1, 1)
    (2, 4, 1)
    """
    return max(1, -(-p * count // 100))


def _keys(np, values: np.ndarray) -> np.ndarray:
    """64-bit keys ordered like the float values (the sign bit flipped for
    non-negative values, every bit for negative ones)."""
    bits = values.view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def _ranked(np, log: DelayLog, ranks: list[int]) -> list[float]:
    """The values at the given 1-based ranks (ascending order), found 16 bits of their
    keys per pass over the log: each pass counts the keys that share the prefix found so
    far by their next 16 bits and follows the bucket holding the rank."""
    prefixes = [0] * len(ranks)
    left = list(ranks)  # the rank within the keys sharing the prefix
    for shift in (48, 32, 16, 0):
        counts = [np.zeros(1 << 16, dtype=np.int64) for _ in ranks]
        for block in log.blocks():
            keys = _keys(np, _values(np, block))
            for i, prefix in enumerate(prefixes):
                sharing = keys if shift == 48 else keys[(keys >> np.uint64(shift + 16)) == np.uint64(prefix)]
                counts[i] += np.bincount(((sharing >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.int64),
                                         minlength=1 << 16)
        for i in range(len(ranks)):
            running = np.cumsum(counts[i])
            bucket = int(np.searchsorted(running, left[i]))  # the first bucket reaching the rank
            left[i] -= int(running[bucket - 1]) if bucket else 0
            prefixes[i] = (prefixes[i] << 16) | bucket
    result = []
    for key in prefixes:
        bits = key ^ (1 << 63) if key >> 63 else ~key & ((1 << 64) - 1)
        result.append(float(np.array([bits], dtype=np.uint64).view(np.float64)[0]))
    return result
