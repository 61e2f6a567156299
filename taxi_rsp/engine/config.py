"""The engine's options, frozen: one value that a run, a Spark task or a notebook
passes to :class:`~taxi_rsp.engine.engine.Engine` (no environment variables)."""

from __future__ import annotations

from dataclasses import dataclass

from taxi_rsp.errors import UserError
from taxi_rsp.rdf.namespaces import TRIPS_STREAM

TOP_K = ("auto", "sorted", "tma")
JOIN_ROUTING = ("adaptive", "fixed", "binary")
SLIDE_REPORTS = ("window close", "content change")


@dataclass(frozen=True)
class EngineConfig:
    """How the engine plans and runs queries. Every choice but ``slide_report`` gives the
    same results; ``slide_report`` chooses between two documented semantics.

    * ``top_k``: the ORDER BY ... LIMIT operator: ``auto`` (with the specialised operators
      a GROUP BY's groups ranked in their table when the ORDER BY reads only their COUNT,
      SUM, MIN or MAX, else a sorted relation; TMA's grid top-k for a monotone score
      with the reference operators), ``sorted`` (a top-k over a sorted relation) or ``tma``;
    * ``join_routing``: joins of three or more inputs with a stream: ``adaptive`` (one
      multi-way join whose probe order follows the data), ``fixed`` (the plan's order)
      or ``binary`` (left-deep binary joins in text order), docs/cqels-ql.md;
    * ``share_pipelines``: queries share matches and fused steps of the same windows;
    * ``compiled``: generated code where a sub-plan allows it, else the reference
      operators only;
    * ``prune_columns``: windows keep only the variables read above them
      (:mod:`taxi_rsp.algebra.prune`);
    * ``latest_per_key``: with the specialised operators, a FILTER NOT EXISTS of a later
      row of the same key in the same window keeps each key's newest row instead of
      counting matches between two windows (:mod:`taxi_rsp.planner.latest`);
    * ``subject_disjoint_streams``: the streams whose events never share a subject (by
      default the taxi Feeder's): a STREAM block over one is matched per event for each
      star of its patterns, others are joined across the window's events
      (:mod:`taxi_rsp.algebra.window_graph`); declaring a stream that is not disjoint
      loses the matches across its events;
    * ``slide_report``: when a hopping window (``RANGE d SLIDE s``) reports: ``window
      close`` (default: its content changes at slide boundaries) or ``content change``
      (CQELS's behaviour as the CSRBench oracle models it: every arrival enters at once
      and the oldest open window's content so far is evaluated; docs/semantics.md).

    >>> EngineConfig(join_routing="binary").compiled
    True
    >>> EngineConfig(join_routing="clever")
    Traceback (most recent call last):
    ...
    taxi_rsp.errors.UserError: join routing must be one of adaptive, fixed, binary (not 'clever')
    """

    top_k: str = "auto"
    join_routing: str = "adaptive"
    share_pipelines: bool = True
    compiled: bool = True
    prune_columns: bool = True
    latest_per_key: bool = True
    subject_disjoint_streams: frozenset[str] = frozenset({TRIPS_STREAM})
    slide_report: str = "window close"

    def __post_init__(self) -> None:
        if self.top_k not in TOP_K:
            raise UserError(f"top-k must be one of {', '.join(TOP_K)} (not {self.top_k!r})")
        if self.join_routing not in JOIN_ROUTING:
            raise UserError(f"join routing must be one of {', '.join(JOIN_ROUTING)} (not {self.join_routing!r})")
        if self.slide_report not in SLIDE_REPORTS:
            raise UserError(f"slide report must be one of {', '.join(SLIDE_REPORTS)} (not {self.slide_report!r})")
