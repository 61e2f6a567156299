"""Field text -> dictionary id (and the value the Feeder needs), memoised per text.

The same field texts come back over and over in a taxi file (a few thousand fares,
drop-off minutes, medallions; popular coordinates), so each codec keeps a bounded
``dict`` from the stripped field text to its result and only parses on a miss. A
cache that reaches its bound is emptied and refilled: memory stays bounded on any
input, and the hot texts of the current stretch of the file are back after a few
lines. Results are never falsy, so hot loops write ``cache.get(text) or
miss(text)`` (no Python call on a hit); an invalid text gives ``None`` and is parsed
again each time it comes back, which is rare by nature.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from taxi_rsp.feeder.validate import format_scaled, timestamp_millis, to_scaled
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD_DECIMAL, XSD_INTEGER, XSD_STRING
from taxi_rsp.rdf.terms import DECIMAL_RE, INTEGER_RE, Literal
from taxi_rsp.spec import Grid

CACHE_LIMIT = 1 << 17


class _Codec(ABC):
    """A bounded memo of ``text -> result``; subclasses define :meth:`compute`."""

    __slots__ = ("cache", "dictionary", "limit")

    def __init__(self, dictionary: Dictionary, limit: int | None = None) -> None:
        self.dictionary = dictionary
        self.cache: dict[str, object] = {}
        self.limit = CACHE_LIMIT if limit is None else limit

    def miss(self, raw: str):
        """Compute the result of the field text ``raw`` (stripped first) and remember it
        under ``raw`` if it is valid."""
        result = self.compute(raw.strip())
        if result is None:
            return None
        if len(self.cache) >= self.limit:
            self.cache.clear()
        self.cache[raw] = result
        return result

    @abstractmethod
    def compute(self, text: str):
        """The result for the stripped ``text``, or None when it is not valid."""


def decimal_id(dictionary: Dictionary, scaled: int, places: int) -> int:
    """The id of ``scaled / 10**places``: inline when it fits, else a table term."""
    try:
        return dictionary.decimal_id(scaled, places)
    except OverflowError:  # absurd magnitudes stay exact in the term table
        return dictionary.encode(Literal(format_scaled(scaled, places), XSD_DECIMAL))


class StringCodec(_Codec):
    """Text -> id of the xsd:string literal."""

    __slots__ = ()

    def compute(self, text: str) -> int:
        return self.dictionary.encode(Literal(text, XSD_STRING))


class TimestampCodec(_Codec):
    """``YYYY-MM-DD HH:MM:SS`` -> (milliseconds, xsd:dateTime id, the stripped text), or
    None if invalid."""

    __slots__ = ()

    def compute(self, text: str) -> tuple[int, int, str] | None:
        millis = timestamp_millis(text)
        if millis is None:
            return None
        return millis, self.dictionary.datetime_id(millis), text


class AxisCodec(_Codec):
    """A longitude or latitude -> (xsd:decimal id, grid mask), or None if not a number.

    The coordinate is rounded half to even to nano-degrees. Bit ``i`` of the mask is
    set when the value lies inside grid ``i`` along this axis; a grid's x depends on
    the longitude only and y on the latitude only, so a point is inside a grid iff
    both of its axes are (SPEC §2).
    """

    __slots__ = ("bounds",)

    def __init__(self, dictionary: Dictionary, grids: tuple[Grid, ...], is_longitude: bool,
                 limit: int | None = None) -> None:
        super().__init__(dictionary, limit)
        # Inside along this axis <=> lo <= nano < hi (x = floor((lon - west) / step) + 1
        # in 1..cells, y = floor((north - lat) / step) + 1 in 1..cells, solved for nano).
        if is_longitude:
            self.bounds = tuple((g.west, g.west + g.cells * g.lon_step) for g in grids)
        else:
            self.bounds = tuple((g.north - g.cells * g.lat_step + 1, g.north + 1) for g in grids)

    def compute(self, text: str) -> tuple[int, int] | None:
        nano = to_scaled(text, 9)
        if nano is None:
            return None
        mask = 0
        for bit, (low, high) in enumerate(self.bounds):
            if low <= nano < high:
                mask |= 1 << bit
        return decimal_id(self.dictionary, nano, 9), mask


class MoneyCodec(_Codec):
    """A dollar amount -> (cents, xsd:decimal id of the rounded amount), or None."""

    __slots__ = ()

    def compute(self, text: str) -> tuple[int, int] | None:
        cents = to_scaled(text, 2)
        if cents is None:
            return None
        return cents, decimal_id(self.dictionary, cents, 2)


class ExactCodec(_Codec):
    """An xsd:integer or xsd:decimal kept exactly as written -> id, or None."""

    __slots__ = ("datatype", "pattern")

    def __init__(self, dictionary: Dictionary, datatype: str, limit: int | None = None) -> None:
        super().__init__(dictionary, limit)
        self.datatype = datatype
        self.pattern = {XSD_INTEGER: INTEGER_RE, XSD_DECIMAL: DECIMAL_RE}[datatype]

    def compute(self, text: str) -> int | None:
        if self.pattern.match(text) is None:  # [0-9] is ASCII-only
            return None
        return self.dictionary.encode(Literal(text, self.datatype))
