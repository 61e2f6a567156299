"""The frozen configuration of a :class:`~taxi_rsp.session.Session`: the queries (text,
name and parameters), the static data and the engine options. Every entry point builds
one (`taxi-rsp run`, `run --stream`, a `run --spark` task, the Python API); it pickles,
so a Spark task receives the same value the driver resolved.

>>> config = SessionConfig.resolve(["q1"], params={"q1": {"window": "60m"}})
>>> config.queries[0].name, config.queries[0].params["window"], config.engine.join_routing
('q1', '60m', 'adaptive')
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.errors import UserError


def _queries_dir() -> Path:
    """``queries/`` of the source tree (editable install), else the installed copy."""
    source = Path(__file__).resolve().parents[2] / "queries"
    if source.is_dir():
        return source
    return Path(sys.prefix) / "share" / "taxi-rsp" / "queries"


QUERIES_DIR = _queries_dir()
_LISTENER_PRAGMA = re.compile(r"^#\s*@listener\s+(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class QuerySource:
    """A query's text, its name (the output file's stem), where it came from, and the
    values of its ``$parameters`` (docs/cqels-ql.md)."""

    name: str
    text: str
    path: Path | None = None  # None: given as text (the Python API)
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        """Where the text came from, for messages: the file, else the query's name."""
        return str(self.path) if self.path is not None else f"<query {self.name}>"

    @property
    def listener(self) -> str | None:
        """The ``# @listener NAME`` pragma: the challenge output profile to write."""
        match = _LISTENER_PRAGMA.search(self.text)
        return match.group(1) if match else None


def resolve_query(name_or_path: str, params: Mapping[str, str] | None = None) -> QuerySource:
    """A query by name (``q1`` -> queries/q1.cqels) or by path to a .cqels file.

    >>> resolve_query("q1").name
    'q1'
    """
    candidate = Path(name_or_path)
    if candidate.suffix == ".cqels" or candidate.exists():
        path = candidate
    else:
        path = QUERIES_DIR / f"{name_or_path}.cqels"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in QUERIES_DIR.glob("*.cqels")))
        raise UserError(f"unknown query {name_or_path!r} (known: {known}; or give a path to a .cqels file)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read query {path}: {exc}") from None
    return QuerySource(path.stem, text, path, dict(params or {}))


@dataclass(frozen=True)
class SessionConfig:
    """Queries, static data and engine options of one session."""

    queries: tuple[QuerySource, ...] = ()
    static: tuple[Path, ...] = ()
    engine: EngineConfig = EngineConfig()

    def __post_init__(self) -> None:
        names = [q.name for q in self.queries]
        if len(set(names)) != len(names):
            raise UserError(f"a query was given twice: {', '.join(names)}")

    @classmethod
    def resolve(cls, queries: Sequence[str], params: Mapping[str, Mapping[str, str]] | None = None,
                static: Sequence[Path] = (), engine: EngineConfig = EngineConfig()) -> SessionConfig:
        """Queries by name or path; ``params`` maps a query name (or ``"*"``, every query)
        to parameter values, a query's own winning over ``"*"``."""
        params = params or {}
        sources = []
        for name in queries:
            source = resolve_query(name)
            merged = {**params.get("*", {}), **params.get(source.name, {})}
            sources.append(QuerySource(source.name, source.text, source.path, merged))
        return cls(tuple(sources), tuple(Path(p) for p in static), engine)
