"""The native tier (issue 50): operator state in C memory, compiled ahead of time by the
install, each structure with a pure-Python twin that is its oracle and its fallback.

* :class:`WindowGroups` — a window's entries and the groups they count (ring buffer,
  open-addressing group table, COUNT/SUM/AVG/MIN/MAX/MEDIAN), the state of
  :class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate`.

:func:`window_groups_class` gives the C class when the install built it (and the run does
not ask for pure Python), else the twin: the answers are the same, the twin is slower.

>>> window_groups_class(native=False).__module__
'taxi_rsp.engine.native.window_groups'
"""

from __future__ import annotations

from taxi_rsp.engine.native.window_groups import WindowGroups as PyWindowGroups
from taxi_rsp.native import pure_python_requested

try:  # built by the install when it has a C compiler
    from taxi_rsp.engine.native._window_groups import WindowGroups as CWindowGroups
except ImportError as exc:
    CWindowGroups = None
    NATIVE_ERROR: str | None = str(exc)
else:
    NATIVE_ERROR = None

__all__ = ["CWindowGroups", "PyWindowGroups", "native_available", "window_groups_class"]


def native_available() -> bool:
    """Whether the C structures are built and import."""
    return CWindowGroups is not None


def window_groups_class(native: bool | None = None) -> type:
    """The :class:`WindowGroups` to use: ``native`` as asked (True without a build raises
    RuntimeError), None: the C one when built, unless this process runs pure Python."""
    if native is None:
        native = CWindowGroups is not None and not pure_python_requested()
    if not native:
        return PyWindowGroups
    if CWindowGroups is None:
        raise RuntimeError(f"the native window groups are not built ({NATIVE_ERROR}); "
                           "reinstall with a C compiler: pip install -e .")
    return CWindowGroups
