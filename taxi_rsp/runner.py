"""`taxi-rsp run`: feed a taxi CSV through the engine into the listeners.

    >>> from taxi_rsp.runner import resolve_query
    >>> resolve_query("q1").name
    'q1'
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from feeder import Feeder
from listener import (
    PROFILES,
    AtomicOutputs,
    CsvResultWriter,
    DebsTopKWriter,
    NQuadsResultWriter,
    delay_stats,
)
from taxi_rsp.engine.engine import Engine
from taxi_rsp.errors import UserError

def _queries_dir() -> Path:
    """``queries/`` of the source tree (editable install), else the installed copy."""
    source = Path(__file__).resolve().parents[1] / "queries"
    if source.is_dir():
        return source
    return Path(sys.prefix) / "share" / "taxi-rsp" / "queries"


QUERIES_DIR = _queries_dir()
_LISTENER_PRAGMA = re.compile(r"^#\s*@listener\s+(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class QuerySource:
    name: str
    text: str
    path: Path

    @property
    def listener(self) -> str | None:
        match = _LISTENER_PRAGMA.search(self.text)
        return match.group(1) if match else None


def resolve_query(name_or_path: str) -> QuerySource:
    """A query by name (``q1`` -> queries/q1.cqels) or by path to a .cqels file."""
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
    return QuerySource(path.stem, text, path)


@dataclass
class RunConfig:
    input: Path
    out: Path
    queries: list[str] = field(default_factory=lambda: ["q1"])
    params: dict[str, dict[str, str]] = field(default_factory=dict)  # query name ("*": all) -> params
    static: list[Path] = field(default_factory=list)
    progress: bool = False
    explain: bool = False


def run(config: RunConfig, report: Callable[[str], None] = lambda line: None) -> dict:
    """Run the queries over the input; returns the summary (also written as summary.json)."""
    if not config.input.is_file():
        raise UserError(f"input file {config.input} does not exist or is not a file")
    try:
        config.input.open("rb").close()
    except OSError as exc:
        raise UserError(f"cannot read input {config.input}: {exc.strerror}") from None
    sources = [resolve_query(q) for q in config.queries]
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise UserError(f"a query was given twice: {', '.join(names)}")

    engine = Engine()
    for path in config.static:
        engine.load_static(path)
    outputs = AtomicOutputs(config.out)
    writers = {}
    try:
        for source in sources:
            params = {**config.params.get("*", {}), **config.params.get(source.name, {})}
            query = engine.register(source.text, source.name, params, source=str(source.path))
            writers[source.name] = _writer_for(source, query, outputs)
            query.listeners.append(writers[source.name])
            if config.explain:
                report(query.explain())
        rejects = outputs.open("rejects.csv")
        feeder = Feeder(config.input, engine.dictionary, rejects)
        started = time.perf_counter()
        with _progress(config.progress) as tick:
            for event in feeder:
                engine.process(event)
                tick(feeder.stats.lines_read)
        outputs.commit()
        exec_seconds = time.perf_counter() - started
        summary = _summary(feeder.stats, writers, exec_seconds, engine)
        outputs.commit("summary.json", json.dumps(summary, indent=2) + "\n")
        return summary
    except BaseException:
        outputs.abort()
        raise


def _writer_for(source: QuerySource, query, outputs: AtomicOutputs):
    listener = source.listener
    if listener is not None:
        profile = PROFILES.get(listener)
        if profile is None:
            raise UserError(f"{source.path}: unknown @listener {listener!r} (known: {', '.join(PROFILES)})")
        try:
            return DebsTopKWriter(profile, outputs.open(f"{source.name}.csv"), query.columns)
        except ValueError as exc:
            raise UserError(f"{source.path}: {exc}") from None
    if query.logical.form == "CONSTRUCT":
        return NQuadsResultWriter(outputs.open(f"{source.name}.nq"))
    return CsvResultWriter(outputs.open(f"{source.name}.csv"), query.columns, query.logical.ordered)


def _summary(stats, writers: dict, exec_seconds: float, engine: Engine) -> dict:
    return {
        "lines_read": stats.lines_read,
        "accepted": stats.accepted,
        "rejected": dict(stats.rejected),
        "outliers": dict(stats.outliers),
        "profit_excluded": stats.profit_excluded,
        "emitted": {name: w.emitted for name, w in writers.items()},
        "exec_seconds": round(exec_seconds, 6),
        "events_per_second": round(stats.accepted / exec_seconds, 1) if exec_seconds > 0 else None,
        "delay_ms": {name: delay_stats(getattr(w, "delays_ms", [])) for name, w in writers.items()},
        "engine_state_rows": {q.name: q.state_size() for q in engine.queries},
    }


class _progress:
    """A rich progress line on a terminal (updated every 10,000 lines), else nothing."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._bar = None

    def __enter__(self) -> Callable[[int], None]:
        if not self.enabled:
            return lambda lines: None
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._bar = Progress(SpinnerColumn(), TextColumn("{task.completed:,} lines"), TimeElapsedColumn(),
                             transient=True)
        self._bar.__enter__()
        task = self._bar.add_task("feeding", total=None)

        def tick(lines: int) -> None:
            if lines % 10_000 == 0:
                self._bar.update(task, completed=lines)

        return tick

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
