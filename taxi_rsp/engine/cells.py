"""Operator attributes read by index: the per-event closures of an operator call the
functions it may replace later (a specialised operator handing over to its reference,
a pipeline node compiling its steps on the first row) through a list, an index in C
rather than an attribute look-up per call.
"""

from __future__ import annotations

from typing import Any


class InCell:
    """An operator attribute kept in one slot of the instance's ``_cells`` list.

    The code that replaces a function assigns the attribute as usual.

    >>> class Op:
    ...     run = InCell(0)
    ...     def __init__(self): self._cells = [None]
    >>> op = Op(); op.run = len
    >>> op._cells[0] is len, op.run is len
    (True, True)
    """

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, holder: Any, owner: type | None = None) -> Any:
        return self if holder is None else holder._cells[self.index]

    def __set__(self, holder: Any, value: Any) -> None:
        holder._cells[self.index] = value
