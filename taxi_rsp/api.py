"""The public Python API of taxi-rsp (also importable from ``taxi_rsp`` itself).

Register CQELS-QL queries, push timestamped RDF graphs, read decoded results:

>>> import taxi_rsp
>>> session = taxi_rsp.Session()
>>> seen = session.register(
...     "SELECT ?who WHERE { STREAM <http://ex/door> [RANGE 1m] { ?who <http://ex/entered> ?door } }", "seen")
>>> session.push('<http://ex/ann> <http://ex/entered> <http://ex/front> .', "2015-01-01T09:00:00")
>>> [(r.trigger, r.rows) for r in seen.results()]
[('event', [(IRI(value='http://ex/ann'),)])]

The DEBS 2015 challenge run of `taxi-rsp run`, from Python: :func:`run_debs`. The
reference is docs/api.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.info import QueryInfo, WindowInfo
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.terms import IRI, BNode, DateTime, Literal
from taxi_rsp.session import QuerySource, Session, SessionConfig, Sink
from taxi_rsp.session.results import QueryHandle, Result

# The bundled first 10,004 lines of the official 20-day file (PROVENANCE.md next to it).
SAMPLE_CSV = Path(__file__).resolve().parent / "samples" / "debs2015" / "sample20d_first10004.csv"

__all__ = [
    "SAMPLE_CSV",
    "BNode",
    "DateTime",
    "EngineConfig",
    "IRI",
    "Literal",
    "QueryHandle",
    "QueryInfo",
    "QuerySource",
    "Result",
    "Session",
    "SessionConfig",
    "Sink",
    "UserError",
    "WindowInfo",
    "run_debs",
]


def run_debs(csv_path: str | Path, out: str | Path, *, queries: Sequence[str] = ("q1", "q2"),
             q1_window_min: int | None = None, q2_windows_min: tuple[int, int] | None = None,
             params: Mapping[str, Mapping[str, str]] | None = None, static: Sequence[str | Path] = (),
             engine: EngineConfig = EngineConfig(), force: bool = False) -> dict:
    """`taxi-rsp run CSV --out OUT`: the DEBS 2015 queries (or others, by name or path)
    over a taxi CSV; writes ``OUT/q1.csv``, ``q2.csv``, ``rejects.csv`` and
    ``summary.json`` and returns the summary. Windows in minutes override the queries'
    defaults (Q1 30, Q2 15 and 30); ``params`` binds other query parameters
    (``{"q1": {"window": "60m"}}``, ``"*"`` for every query).

    A folder that holds a complete run (its ``summary.json``) is not replaced unless
    ``force=True`` — a program or a notebook cell run twice, or pointed at the folder of
    a `taxi-rsp run`, does not silently overwrite results. (``force`` also removes other
    output-like files the run would not rewrite, as ``--force`` does.)

    >>> import tempfile, taxi_rsp
    >>> out = tempfile.mkdtemp()
    >>> summary = taxi_rsp.run_debs(taxi_rsp.SAMPLE_CSV, out, queries=["q1"])
    >>> summary["accepted"], summary["emitted"]["q1"] > 0
    (10004, True)
    >>> taxi_rsp.run_debs(taxi_rsp.SAMPLE_CSV, out, queries=["q1"])
    Traceback (most recent call last):
    ...
    taxi_rsp.errors.UserError: .../summary.json: the folder holds a complete run; run_debs(..., force=True) replaces it, or give another folder
    """
    from taxi_rsp.runner import RunConfig, run

    complete = Path(out) / "summary.json"
    if complete.is_file() and not force:
        raise UserError(f"{complete}: the folder holds a complete run; run_debs(..., force=True) replaces it, "
                        "or give another folder")

    merged: dict[str, dict[str, str]] = {name: dict(values) for name, values in (params or {}).items()}
    if q1_window_min is not None:
        merged.setdefault("q1", {})["window"] = f"{q1_window_min}m"
    if q2_windows_min is not None:
        profit, empty = q2_windows_min
        merged.setdefault("q2", {}).update(profit_window=f"{profit}m", empty_window=f"{empty}m")
    config = RunConfig(input=Path(csv_path), out=Path(out), queries=list(queries), params=merged,
                       static=[Path(p) for p in static], engine=engine, force=force)
    return run(config)
