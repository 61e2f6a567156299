"""Query results as plain Python values and as polars DataFrames (the notebook view).

:func:`plain` turns one result value into what a DataFrame or a JSON document holds:
an IRI becomes its text, a blank node ``_:label``, an xsd:decimal (a ``Fraction`` in the
engine) a ``Decimal`` with the digits the CSV output prints, a dateTime a ``datetime``,
a language-tagged string its text, a literal of an unknown datatype its lexical form;
``int``, ``float``, ``bool``, ``str`` and None stay as they are.

>>> from fractions import Fraction
>>> from taxi_rsp.rdf.terms import IRI, DateTime
>>> [plain(v) for v in (IRI("http://ex/ann"), Fraction(19, 4), DateTime.parse("2013-01-01 00:02:00"), 7, None)]
['http://ex/ann', Decimal('4.75'), datetime.datetime(2013, 1, 1, 0, 2), 7, None]

:func:`frame` builds a polars DataFrame from rows of such values, one typed column per
result column (polars is the ``[polars]`` extra: ``pip install 'taxi-rsp[polars]'``):

>>> table = frame(("who", "n", "share"), [(IRI("http://ex/ann"), 2, Fraction(1, 4)), (IRI("http://ex/bob"), None, 1)])
>>> table.rows()
[('http://ex/ann', 2, Decimal('0.25')), ('http://ex/bob', None, Decimal('1.00'))]
>>> [str(dtype) for dtype in table.dtypes]
['String', 'Int64', 'Decimal(precision=38, scale=2)']
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from taxi_rsp.extras import missing_extra_hint
from taxi_rsp.rdf.terms import IRI, BNode, DateTime, Literal, format_decimal

if TYPE_CHECKING:  # polars is an optional extra, imported when a frame is built
    import polars as pl


def plain(value: object) -> object:
    """A result value as a plain Python value (see the module text)."""
    if value is None or type(value) in (int, float, bool, str):
        return value
    if isinstance(value, IRI):
        return value.value
    if isinstance(value, BNode):
        return value.n3()
    if isinstance(value, DateTime):
        moment = value.to_datetime()
        if value.offset is not None:  # a zoned value: its wall-clock time in its zone
            moment = moment.replace(tzinfo=dt.timezone(dt.timedelta(minutes=value.offset)))
        return moment
    if isinstance(value, Fraction):
        return Decimal(format_decimal(value))
    if isinstance(value, Literal):
        return value.lexical
    if isinstance(value, bool):
        return bool(value)
    for kind in (int, float, str):  # subclasses: xsd:float's Float, LangString
        if isinstance(value, kind):
            return kind(value)
    return value


def _polars() -> Any:
    try:
        import polars
    except ModuleNotFoundError as exc:
        if exc.name != "polars":
            raise
        raise ModuleNotFoundError(missing_extra_hint("polars"), name="polars") from None
    return polars


DECIMAL_DIGITS = 38  # polars' Decimal precision


def _column(pl: Any, name: str, values: list[object]) -> pl.Series:
    """One typed column: numbers stay numbers (integers with decimals become decimals,
    with floats floats), times stay times; a column mixing kinds (an IRI here, a number
    there), or decimals wider than polars' 38 digits, is text."""
    present = [v for v in values if v is not None]
    kinds = {type(v) for v in present}
    if kinds <= {int, Decimal} and Decimal in kinds:
        decimals = [Decimal(v) for v in present]
        scale = max(-min(int(d.as_tuple().exponent), 0) for d in decimals)
        whole = max(max(len(d.as_tuple().digits) + int(d.as_tuple().exponent), 1) for d in decimals)
        if whole + scale <= DECIMAL_DIGITS:
            return pl.Series(name, [None if v is None else Decimal(v) for v in values],
                             dtype=pl.Decimal(DECIMAL_DIGITS, scale))
        kinds = {str, Decimal}
    elif kinds <= {int, float, Decimal} and float in kinds:
        return pl.Series(name, [None if v is None else float(v) for v in values], dtype=pl.Float64)
    elif kinds == {dt.datetime}:
        zones = {v.tzinfo is None for v in present}  # type: ignore[union-attr]
        if zones == {True}:
            return pl.Series(name, values, dtype=pl.Datetime("ms"))
        if zones == {False}:
            return pl.Series(name, values, dtype=pl.Datetime("ms", "UTC"))
        kinds = {str, dt.datetime}
    if len(kinds) > 1 and not kinds <= {int, bool}:
        return pl.Series(name, [None if v is None else _text(v) for v in values], dtype=pl.String)
    return pl.Series(name, values)


def _text(value: object) -> str:
    return value.isoformat() if isinstance(value, dt.datetime) else str(value)


def frame(columns: Sequence[str], rows: Sequence[Sequence[object]], extra: dict[str, list[object]] | None = None
          ) -> pl.DataFrame:
    """A polars DataFrame of ``rows`` (engine values or terms) with plain values.
    ``extra`` columns (already plain, one value per row) come first; one whose name a
    result column has takes a leading ``_`` (``_at`` beside a query's ``?at``).

    >>> frame(["at"], [(1,)], {"at": ["then"]}).columns
    ['_at', 'at']
    """
    pl = _polars()
    converted = [[plain(v) for v in row] for row in rows]
    taken = set(columns)
    series = []
    for name, values in (extra or {}).items():
        while name in taken:  # a query column of the same name keeps it: ?at and _at
            name = "_" + name
        taken.add(name)
        series.append(_column(pl, name, values))
    series += [_column(pl, name, [row[i] for row in converted]) for i, name in enumerate(columns)]
    return pl.DataFrame(series)
