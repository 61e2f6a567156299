"""What every task needs to build the same engine as `taxi-rsp run`, and the longest
window of the registered queries (the warm-up length)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from taxi_rsp.engine.engine import Engine
from taxi_rsp.errors import UserError
from taxi_rsp.runner import QuerySource, RunConfig, _writer_for, require_stream, resolve_query

# Window kinds whose contents are fixed by event time alone; TRIPLES n (the last n
# events) and ALL (everything since the start) cannot be rebuilt from a time slice.
_TIME_WINDOWS = ("RANGE", "NOW")


@dataclass(frozen=True)
class Job:
    """A run's queries and settings, resolved once by the driver and shipped to tasks
    (query texts travel with it, so executors need not see the queries folder)."""

    input: str
    sources: tuple[QuerySource, ...]
    params: dict[str, dict[str, str]]
    static: tuple[str, ...]

    @classmethod
    def from_config(cls, config: RunConfig) -> Job:
        sources = tuple(resolve_query(q) for q in config.queries)
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise UserError(f"a query was given twice: {', '.join(names)}")
        return cls(str(config.input), sources, config.params, tuple(str(p) for p in config.static))


class _Files:
    """The ``outputs.open`` that runner's listener factory expects, over any opener."""

    def __init__(self, open_file: Callable[[str], TextIO]) -> None:
        self.open = open_file


def build_engine(job: Job, open_file: Callable[[str], TextIO]) -> tuple[Engine, dict]:
    """The engine of `taxi-rsp run` with its listeners writing to ``open_file(name)``;
    returns it and the listeners by query name."""
    engine = Engine()
    for path in job.static:
        engine.load_static(Path(path))
    files = _Files(open_file)
    writers = {}
    for source in job.sources:
        params = {**job.params.get("*", {}), **job.params.get(source.name, {})}
        query = engine.register(source.text, source.name, params, source=str(source.path))
        require_stream(source, query)
        if query.logical.form == "CONSTRUCT":
            # Blank-node labels and result-graph numbers count from the run's start.
            raise UserError(f"{source.name}: CONSTRUCT queries cannot run time-partitioned (--spark)")
        writers[source.name] = _writer_for(source, query, files)
        query.listeners.append(writers[source.name])
    return engine, writers


def longest_window_ms(engine: Engine) -> int:
    """The longest time window over all registered queries (UserError if a window is
    not time-based, since a time slice cannot rebuild it)."""
    longest = 0
    for query in engine.queries:
        for window in query.physical.windows:
            if window.spec.kind not in _TIME_WINDOWS:
                raise UserError(f"{query.name}: a {window.spec.kind} window cannot run time-partitioned (--spark); "
                                "only RANGE and NOW windows can")
            if window.spec.slide_ms is not None:
                raise UserError(f"{query.name}: a RANGE ... SLIDE window cannot run time-partitioned (--spark)")
            longest = max(longest, window.range_ms)
    return longest
