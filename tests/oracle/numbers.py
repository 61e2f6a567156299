"""Exact xsd:decimal parsing (SPEC §1): text -> integer count of 10**-k units.

No floats and no ``decimal`` context: the digits are scaled and rounded once,
half to even, by looking at the dropped digits as text.
"""

from __future__ import annotations

import re

# Optional sign, then digits with an optional ".fraction" (possibly empty, "1."),
# or ".fraction" alone. [0-9] rather than \d: \d would accept non-ASCII digits.
_DECIMAL = re.compile(r"([+-]?)([0-9]+)(?:\.([0-9]*))?|([+-]?)\.([0-9]+)")

# Python refuses int() of strings longer than 4300 digits by default; a pathological
# field must still convert exactly, so long digit strings are folded in chunks.
_CHUNK = 1000


def _digits_to_int(digits: str) -> int:
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start:start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def parse_scaled(text: str, places: int) -> int | None:
    """Return ``text`` as an integer multiple of 10**-places, or None if not a number.

    >>> parse_scaled("-73.9565285", 6), parse_scaled("0.125", 2), parse_scaled("1e3", 2)
    (-73956528, 12, None)
    """
    match = _DECIMAL.fullmatch(text)
    if match is None:
        return None
    if match.group(2) is not None:
        sign, whole, frac = match.group(1), match.group(2), match.group(3) or ""
    else:
        sign, whole, frac = match.group(4), "0", match.group(5)
    kept, dropped = frac[:places].ljust(places, "0"), frac[places:]
    magnitude = _digits_to_int(whole + kept)
    if _rounds_up(dropped, last_kept_odd=magnitude % 2 == 1):
        magnitude += 1
    return -magnitude if sign == "-" else magnitude


def _rounds_up(dropped: str, last_kept_odd: bool) -> bool:
    """Half-to-even decision from the dropped fraction digits."""
    if not dropped or dropped[0] < "5":
        return False
    if dropped[0] > "5" or dropped[1:].strip("0"):
        return True
    return last_kept_odd  # exactly half: go to the even neighbour
