"""The session every entry point builds: a frozen configuration, a source, sinks."""

from taxi_rsp.session.config import QUERIES_DIR, QuerySource, SessionConfig, resolve_query
from taxi_rsp.session.session import Session
from taxi_rsp.session.sinks import ReportingSink, Sink, file_sink

__all__ = ["QUERIES_DIR", "QuerySource", "ReportingSink", "Session", "SessionConfig", "Sink", "file_sink",
           "resolve_query"]
