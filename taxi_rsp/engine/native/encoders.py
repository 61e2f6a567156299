"""The term ids a :class:`~taxi_rsp.engine.native.GroupTable` does not make in place: the
same ids :meth:`Dictionary.encode_value` gives the reference interpreter's values.

A table's flush computes inline integer and decimal ids itself; it calls these for an
integer or decimal beyond the inline range, the mean of an even count's two middle values
when it needs a tenth decimal, and every AVG (a fraction).

>>> from taxi_rsp.rdf.dictionary import Dictionary
>>> d = Dictionary()
>>> ids = TermEncoders(d)
>>> [d.decode(i).lexical for i in (ids.int_id(7), ids.dec_id(-1250, 2), ids.mean_id(1, 2, 9), ids.avg_id(5, 2, 0))]
['7', '-12.5', '0.0000000015', '2.5']
"""

from __future__ import annotations

from fractions import Fraction

from taxi_rsp.rdf.dictionary import (INLINE_FLAG, PAYLOAD_MASK, PAYLOAD_MAX, PAYLOAD_MIN, T_DECIMAL, T_INTEGER,
                                     TYPE_SHIFT, Dictionary)

_INT_HEAD = INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)
_DEC_HEAD = INLINE_FLAG | (T_DECIMAL << TYPE_SHIFT)


class TermEncoders:
    """Term ids of aggregate results held as (scaled) integers, through ``dictionary``."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary

    def int_id(self, value: int) -> int:
        """The id of the integer ``value``."""
        if PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            return _INT_HEAD | (value & PAYLOAD_MASK)
        return self.dictionary.encode_value(value)

    def dec_id(self, scaled: int, scale: int) -> int:
        """The id of the decimal ``scaled`` / 10**``scale``."""
        value = scaled * 10 ** (9 - scale)
        if PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            return _DEC_HEAD | (value & PAYLOAD_MASK)
        return self.dictionary.encode_value(Fraction(scaled, 10**scale))

    def mean_id(self, low: int, high: int, scale: int) -> int:
        """The id of the mean of the two middle values ``low``, ``high`` (scaled by
        10**``scale``), as the reference's MEDIAN of an even count gives it: a decimal."""
        total = low + high
        doubled = total * 10 ** (9 - scale)
        if doubled % 2 == 0:
            return self.dec_id(doubled // 2, 9)
        return self.dictionary.encode_value(Fraction(total, 2 * 10**scale))

    def avg_id(self, total: int, n: int, scale: int) -> int:
        """The id of the mean of ``n`` values summing to ``total`` / 10**``scale`` (the
        reference's AVG of no values is the integer 0)."""
        if n == 0:
            return self.int_id(0)
        return self.dictionary.encode_value(Fraction(total, 10**scale * n))
