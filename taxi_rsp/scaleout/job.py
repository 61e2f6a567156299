"""What every task needs to build the same session as `taxi-rsp run`, and the longest
window of the registered queries (the warm-up length)."""

from __future__ import annotations

from dataclasses import dataclass

from taxi_rsp.engine.info import QueryInfo
from taxi_rsp.errors import UserError
from taxi_rsp.feeder import trip_stamps
from taxi_rsp.runner import RunConfig
from taxi_rsp.session import QuerySource, Session, SessionConfig
from taxi_rsp.session.sinks import OpenFile


@dataclass(frozen=True)
class Job:
    """A run's input and session configuration, resolved once by the driver and shipped
    to tasks (query texts travel with it, so executors need not see the queries folder)."""

    input: str
    session: SessionConfig

    @classmethod
    def from_config(cls, config: RunConfig) -> Job:
        return cls(str(config.input), config.session_config())


def _time_partitionable(source: QuerySource, info: QueryInfo) -> None:
    if info.form == "CONSTRUCT":
        # Blank-node labels and result-graph numbers count from the run's start.
        raise UserError(f"{source.name}: CONSTRUCT queries cannot run time-partitioned (--spark)")


def build_session(job: Job, open_file: OpenFile) -> Session:
    """The session of `taxi-rsp run` with its file sinks writing to ``open_file(name)``."""
    session = Session(job.session)
    session.attach_files(open_file, trigger_stamps=trip_stamps, check=_time_partitionable)
    return session


def longest_window_ms(session: Session) -> int:
    """The longest time window over all registered queries (UserError if a window is
    not time-based, since a time slice cannot rebuild it)."""
    longest = 0
    for info in session.infos:
        for window in info.windows:
            if not window.time_based:
                raise UserError(f"{info.name}: a {window.kind} window cannot run time-partitioned (--spark); "
                                "only RANGE and NOW windows can")
            if window.slide_ms is not None:
                raise UserError(f"{info.name}: a RANGE ... SLIDE window cannot run time-partitioned (--spark)")
            longest = max(longest, window.range_ms)
    return longest
