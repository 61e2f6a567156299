"""Line-aligned byte ranges of a file and a reader that knows where it is.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "f.csv"
>>> _ = path.write_bytes(b"aa\\nbbbb\\ncc")
>>> split_ranges(path, 3)
[(0, 3), (3, 8), (8, 10)]
>>> reader = LineReader(path, 3, 10)
>>> list(reader), reader.position
([b'bbbb\\n', b'cc'], 10)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path


def line_start_at_or_after(handle, offset: int) -> int:
    """The first line start at byte ``offset`` or later (the file size if none)."""
    if offset <= 0:
        return 0
    handle.seek(offset - 1)
    handle.readline()  # ends right after the next b"\n" at or after offset - 1
    return handle.tell()


def split_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """At most ``parts`` non-empty ``(start, end)`` byte ranges covering ``path``, each
    starting at a line start; an empty file gives one empty range."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        cuts = sorted({line_start_at_or_after(handle, size * k // parts) for k in range(1, parts)})
    bounds = [0, *(c for c in cuts if 0 < c < size), size]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a] or [(0, size)]


class LineReader:
    """The raw lines (with their b"\\n") of bytes ``[start, end)`` of ``path``, where
    ``start`` and ``end`` are line starts; ``position`` is the byte offset after the
    line handed out last, so a consumer can note where a given line ends."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self.path = path
        self.start = start
        self.end = end
        self.position = start

    def __iter__(self) -> Iterator[bytes]:
        with self.path.open("rb") as handle:
            handle.seek(self.start)
            remaining = self.end - self.start
            if remaining <= 0:
                return
            for raw in handle:
                # Updated before the line is handed out: while the consumer holds line
                # n, position is the offset right after it.
                self.position += len(raw)
                yield raw
                remaining -= len(raw)
                if remaining <= 0:
                    return


def ranges_at_lines(path: Path, first_lines: list[int]) -> list[tuple[int, int]]:
    """Byte ranges starting at the given 1-based line numbers (and at line 1), for
    chunk boundaries chosen by line rather than by size; lines past the end are ignored.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "f.csv"
    >>> _ = path.write_bytes(b"aa\\nbbbb\\ncc")
    >>> ranges_at_lines(path, [3, 2, 9])
    [(0, 3), (3, 8), (8, 10)]
    """
    wanted = sorted({n for n in first_lines if n > 1})
    size = path.stat().st_size
    starts = [0]
    with path.open("rb") as handle:
        line_no, offset = 1, 0
        for raw in handle:
            line_no += 1
            offset += len(raw)
            if offset >= size:
                break
            if wanted and line_no == wanted[0]:
                starts.append(offset)
                wanted.pop(0)
                if not wanted:
                    break
    bounds = [*starts, size]
    return [(a, b) for a, b in itertools.pairwise(bounds)]
