"""Which pass profiles a trip file: the columnar one with polars, else the Python one.

:mod:`.profile` holds the statistics and the streaming Python pass, :mod:`.profile_polars`
the columnar pass over the same :class:`~taxi_rsp.data.profile.Profile`; this module only
chooses between them, so neither pass imports the other.
"""

from __future__ import annotations

from pathlib import Path

from taxi_rsp.data.profile import Profile, profile_python
from taxi_rsp.data.profile_polars import profile_polars  # imports polars only when it runs


def sample_window_end(path: Path) -> int:
    """The last drop-off minute after the first midnight of a (small) file."""
    profile = profile_file(path, window_end=10**9)
    return max(profile.per_minute) if profile.per_minute else 0


def profile_file(path: Path, window_end: int, columnar: bool = True) -> Profile:
    """The statistics of ``path``: with polars installed (and ``columnar``) by the
    columnar pass of :mod:`.profile_polars`, else (or for a file that pass leaves to
    Python) by :func:`profile_python`. Both give the same :class:`Profile`."""
    if columnar:
        found = profile_polars(path, window_end)
        if found is not None:
            return found
    return profile_python(path, window_end)
