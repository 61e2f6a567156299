"""Whether, and why not, this process keeps its small objects in transparent huge pages.

The engine's state is millions of small Python objects spread over pymalloc's 1 MiB
arenas; on a virtual machine the page walks of their TLB misses cost it 5–14 % of a
run's CPU time (docs/performance.md, "Stop 35").
:func:`enable` moves the arenas made from then on into a region the kernel backs with
2 MiB pages (:mod:`taxi_rsp.engine.arenas`, compiled by the install). ``taxi-rsp run``
calls it before it builds anything, and its summary records the outcome under ``heap``.
Nothing else changes: the same objects, the same allocator above the arenas, the same
results (tests/test_huge_pages.py compares outputs with it on and off).

``TAXI_RSP_HUGE_PAGES=0`` turns it off. It is off by itself where it cannot apply: not
Linux, transparent huge pages set to ``never``, or the compiled module not built (an
install without a C compiler, or ``TAXI_RSP_PURE_PYTHON=1``).

>>> thp_mode("always [madvise] never\\n"), thp_mode("[never] madvise always")
('madvise', 'never')
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from taxi_rsp.native import pure_python_requested

ENV = "TAXI_RSP_HUGE_PAGES"
THP_SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")
RESERVE_MIB = 4096  # address space only (MAP_NORESERVE); arenas beyond it get small pages

_status: str | None = None  # the outcome of the first enable() in this process


def thp_mode(setting: str) -> str:
    """The selected mode in the kernel's ``transparent_hugepage/enabled`` text."""
    for word in setting.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return setting.strip()


def _reason_off(environ: dict[str, str] | os._Environ[str]) -> str | None:
    """Why huge pages do not apply here, or None when they do."""
    if environ.get(ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return f"off ({ENV}={environ[ENV]})"
    if not sys.platform.startswith("linux"):
        return f"off (transparent huge pages are Linux's; this is {sys.platform})"
    try:
        mode = thp_mode(THP_SETTING.read_text(encoding="ascii"))
    except OSError:
        return f"off (no {THP_SETTING})"
    if mode == "never":
        return f"off (transparent huge pages are disabled: {THP_SETTING} is 'never')"
    if pure_python_requested(environ):
        return "off (TAXI_RSP_PURE_PYTHON: the compiled arena allocator is not loaded)"
    return None


def enable(environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """Serve pymalloc's arenas from huge pages from now on, once per process; returns
    what happened: ``"on"`` or ``"off (reason)"`` (the same text on later calls)."""
    global _status
    if _status is None:
        _status = _reason_off(environ) or _install()
    return _status


def _install() -> str:
    try:
        from taxi_rsp.engine import arenas
    except ImportError as error:
        return f"off (the compiled module taxi_rsp.engine.arenas is not available: {error})"
    if not arenas.install(RESERVE_MIB):
        return f"off (could not reserve {RESERVE_MIB} MiB of address space)"
    return "on"


def stats() -> dict[str, object]:
    """The arena allocator's counts (see :func:`taxi_rsp.engine.arenas.stats`), or just
    the status when it is not installed."""
    status = _status or "not requested"
    if status != "on":
        return {"huge_pages": status}
    from taxi_rsp.engine import arenas

    return {"huge_pages": status, **arenas.stats()}
