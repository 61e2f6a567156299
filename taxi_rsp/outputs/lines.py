"""Comparing output lines (SPEC §5) on every field but the measured delay.

A delay never repeats, so two runs agree on a line when all fields before the delay
are equal and both delays are ``NULL`` (an expiry trigger) or both are measured. This
is the one definition `taxi-rsp verify`, the grader and the tests use.

>>> comparison_key("a,b,12.345") == comparison_key("a,b,0.001")
True
>>> comparison_key("a,b,NULL") == comparison_key("a,b,0.001")
False
"""

from __future__ import annotations

from collections.abc import Sequence

NULL = "NULL"
DELAY_NULL = "delay=NULL"
DELAY_MEASURED = "delay=ms"


def split_delay(line: str) -> tuple[str, bool]:
    """(all fields but the delay as text, whether the delay is NULL)."""
    body, _, delay = line.rpartition(",")
    return body, delay == NULL


def fields_key(fields: Sequence[str]) -> tuple[str, ...]:
    """The comparison key of a line already split into fields."""
    return (*fields[:-1], DELAY_NULL if fields[-1] == NULL else DELAY_MEASURED)


def comparison_key(line: str) -> tuple[str, ...]:
    """The comparison key of a line of text (fields split on every comma)."""
    return fields_key(line.split(","))
