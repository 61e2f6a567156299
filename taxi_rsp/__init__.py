"""taxi-rsp: a CQELS-style RDF stream processing engine for the DEBS 2015 taxi challenge.

The Python API (docs/api.md) is importable from here:

>>> import taxi_rsp
>>> session = taxi_rsp.Session()
>>> handle = session.register(
...     "SELECT ?x WHERE { STREAM <http://ex/s> [RANGE 1m] { ?x <http://ex/p> ?y } }", "demo")
>>> handle.info.columns
('x',)

Its names load on first use, so ``import taxi_rsp.baseline`` (or any other part) does
not load the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from taxi_rsp import native as _native
from taxi_rsp.environment import ExecutionConfig as _ExecutionConfig

__version__ = "0.1.0"

# Before any engine module loads: compiled modules whose source changed since the
# build, or all of them under TAXI_RSP_PURE_PYTHON=1, load from their .py (native.py).
_native.install(pure=_ExecutionConfig.from_environment().pure_python)

_API = ("SAMPLE_CSV", "BNode", "DateTime", "EngineConfig", "IRI", "Literal", "QueryHandle", "QueryInfo",
        "QuerySource", "Result", "Session", "SessionConfig", "Sink", "UserError", "WindowInfo", "run_debs")
__all__ = ["__version__", *_API]

if TYPE_CHECKING:
    from taxi_rsp.api import (  # noqa: F401
        SAMPLE_CSV,
        BNode,
        DateTime,
        EngineConfig,
        IRI,
        Literal,
        QueryHandle,
        QueryInfo,
        QuerySource,
        Result,
        Session,
        SessionConfig,
        Sink,
        UserError,
        WindowInfo,
        run_debs,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("taxi_rsp.api"), name)
    raise AttributeError(f"module 'taxi_rsp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
