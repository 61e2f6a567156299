"""The whole-file pass of :func:`taxi_rsp.data.file_profile.profile_file`, columnar, with polars.

Optional: polars is not in the core install (``pip install 'taxi-rsp[polars]'``).
:func:`profile_polars` returns the same :class:`Profile` as the streaming Python pass,
field for field (``tests/test_synth_fidelity.py`` compares them on generated, dirty and
hand-made files), in about half the time on a 2 M-line file (docs/performance.md,
"polars at run time").

Only the per-line checks over the whole file (field count, medallion, timestamps,
drop-off order) and the whole-file counters are columnar; the few thousand trips of the
fidelity window go through the Python code of :mod:`.profile`, so both passes share it.

The two passes agree by construction only on plain input, so a file outside it makes
:func:`profile_polars` return None and the caller use the Python pass: a
timestamp that the ASCII pattern refuses but that holds a character outside printable
ASCII (Python's ``\\d`` accepts other scripts' digits), a carriage return inside a line
(Python's reader splits lines there), a U+001F (the separator polars reads lines with).
Fields are stripped of exactly the characters Python's ``str.strip`` removes.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

from taxi_rsp.data.profile import Profile, window_trip
from taxi_rsp.spec import FIELD_COUNT

_TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-2][0-9]:[0-5][0-9]:[0-5][0-9]$"
_NOT_PLAIN = r"[^\x20-\x7e]"  # tab, control characters and anything non-ASCII
_UNIT_SEPARATOR = "\x1f"
# What Python's str.strip() removes (str.isspace(); none lies above U+3000).
_PY_WHITESPACE = "".join(chr(code) for code in range(0x3001) if chr(code).isspace())


def _read_lines(path: Path):  # -> pl.DataFrame | None
    import polars as pl

    try:
        return pl.read_csv(path, has_header=False, separator=_UNIT_SEPARATOR, quote_char=None,
                           schema={"line": pl.String}, encoding="utf8-lossy", empty_string_is_null=False,
                           raise_if_empty=False)
    except pl.exceptions.ComputeError:  # a line holding the separator: more than one field
        return None


def profile_polars(path: Path, window_end: int) -> Profile | None:
    """The :class:`Profile` of ``path``; None when polars is missing or the file is not
    plain (see the module doc), in which case the Python pass gives the answer."""
    try:
        import polars as pl
    except ImportError:
        return None
    frame = _read_lines(path)
    if frame is None or frame.select(pl.col("line").str.contains("\r", literal=True).any()).item():
        return None
    line = pl.col("line")  # polars drops the CR of a CRLF; any other CR was refused above
    parts = line.str.splitn(",", 5)  # medallion, licence, pickup, drop-off, the rest
    pickup, dropoff = pl.col("pickup"), pl.col("dropoff")

    def number(text: pl.Expr, start: int, length: int) -> pl.Expr:
        return text.str.slice(start, length).cast(pl.Int64, strict=False)

    frame = frame.lazy().with_columns(
        (line.str.count_matches(",", literal=True) == FIELD_COUNT - 1).alias("n17"),
        parts.struct.field("field_0").alias("medallion"),
        parts.struct.field("field_2").str.strip_chars(_PY_WHITESPACE).alias("pickup"),
        parts.struct.field("field_3").str.strip_chars(_PY_WHITESPACE).alias("dropoff"),
    ).with_columns(
        (pickup.str.contains(_TIMESTAMP) & dropoff.str.contains(_TIMESTAMP)).fill_null(False).alias("stamps"),
        dropoff.str.slice(0, 10).str.to_date("%Y-%m-%d", strict=False).alias("date"),
        number(dropoff, 11, 2).alias("hour"),
    ).with_columns(
        (pl.col("n17") & pl.col("stamps") & (pl.col("medallion").str.strip_chars(_PY_WHITESPACE) != "")
         & (pickup <= dropoff)
         & pl.col("date").is_not_null() & ~dropoff.str.starts_with("0000")  # no year 0 in Python
         & (pl.col("hour") <= 23) & (number(pickup, 11, 2) <= 23)).fill_null(False).alias("formed"),
        # a timestamp the ASCII pattern refused that Python's Unicode \d might accept
        (pl.col("n17") & ~pl.col("stamps")
         & (pickup.str.contains(_NOT_PLAIN) | dropoff.str.contains(_NOT_PLAIN))).fill_null(False).alias("odd"),
    ).with_columns(
        # a well-formed drop-off as the number YYYYMMDDhhmmss orders like its text
        pl.when("formed").then(number(dropoff, 0, 4) * 10**10 + number(dropoff, 5, 2) * 10**8
                               + number(dropoff, 8, 2) * 10**6 + pl.col("hour") * 10**4
                               + number(dropoff, 14, 2) * 100 + number(dropoff, 17, 2)).alias("key"),
    ).with_columns(
        # out of order: earlier than the latest well-formed drop-off before it (the
        # skipped lines are earlier than that one, so they never raise the maximum)
        (pl.col("formed") & (pl.col("key") < pl.col("key").cum_max().forward_fill().shift(1)).fill_null(False))
        .alias("late"),
    ).select("line", "formed", "odd", "late", "medallion", "pickup", "dropoff", "date", "hour").collect()
    if frame["odd"].any():
        return None

    p = Profile(window_end=window_end, lines=frame.height)
    formed = frame.filter("formed")
    p.malformed = frame.height - formed.height
    p.out_of_order = int(formed["late"].sum())
    if formed.height == 0:
        return p
    first_day: date = formed["date"][0]
    valid = formed.lazy().filter(~pl.col("late")).with_columns(
        (pl.col("date") - pl.lit(first_day)).dt.total_days().alias("day"),
    ).with_columns(
        (pl.col("day") * 1440 + pl.col("hour") * 60 + number(dropoff, 14, 2)).alias("minute"),
    ).collect()
    per_day = valid.group_by("day").len()
    p.per_day = Counter(dict(zip(per_day["day"].to_list(), per_day["len"].to_list())))
    p.days = set(p.per_day)
    per_hour = valid.group_by("hour").len()
    p.per_hour = Counter(dict(zip(per_hour["hour"].to_list(), per_hour["len"].to_list())))
    p.pickup_dates = set(valid["pickup"].str.slice(0, 10).unique().to_list())
    p.medallions = set(valid["medallion"].unique().to_list())
    p.whole_minute = valid.select((pickup.str.ends_with(":00") & dropoff.str.ends_with(":00")).sum()).item()
    window = valid.filter(pl.col("minute") <= window_end).select("line", "pickup", "dropoff", "minute")
    for raw, pick, drop, minute in window.iter_rows():
        window_trip(p, raw.split(","), pick, drop, minute)
    return p
