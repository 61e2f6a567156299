"""The DEBS 2015 ranking: rank by total time plus rank by average delay.

Only correct submissions are ranked: each gets its rank by execution time (measured
inside the VM) and its rank by average delay (the mean of every non-NULL delay it
reported, over all graded queries; correct submissions emit the same lines, so the
means are over the same outputs). The score is the sum of the two ranks, lower is
better. Ties share a rank ("1224" competition ranking). Submissions that are not
correct are listed after the ranked ones, unranked, with their verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from taxi_rsp.grading.verdict import SubmissionGrade


@dataclass(frozen=True)
class Standing:
    """One row of the leaderboard."""

    grade: SubmissionGrade
    place: int | None  # None: not ranked (not correct)
    score: int | None
    time_rank: int | None
    delay_rank: int | None
    average_delay_ms: float | None


def average_delay(grade: SubmissionGrade) -> float | None:
    """Mean of all reported non-NULL delays over the graded queries."""
    total = sum((g.delay.mean or 0.0) * g.delay.count for g in grade.grades.values())
    count = sum(g.delay.count for g in grade.grades.values())
    return total / count if count else None


def competition_ranks(values: Sequence[float]) -> list[int]:
    """1-based ranks, ascending; equal values share the better rank.

    >>> competition_ranks([3.0, 1.0, 3.0, 2.0])
    [3, 1, 3, 2]
    """
    return [1 + sum(1 for other in values if other < value) for value in values]


def leaderboard(grades: Sequence[SubmissionGrade]) -> list[Standing]:
    """Rank the correct submissions; append the others in input order."""
    ranked = [g for g in grades if g.correct]
    times = [_or_inf(g.exec_seconds) for g in ranked]
    delays = [_or_inf(average_delay(g)) for g in ranked]
    time_ranks, delay_ranks = competition_ranks(times), competition_ranks(delays)
    scores = [t + d for t, d in zip(time_ranks, delay_ranks)]
    # Equal scores: the faster one first (time is the primary DEBS criterion).
    order = sorted(range(len(ranked)), key=lambda i: (scores[i], times[i], ranked[i].name))
    places = competition_ranks([float(s) for s in scores])
    standings = [
        Standing(ranked[i], places[i], scores[i], time_ranks[i], delay_ranks[i],
                 average_delay(ranked[i]))
        for i in order
    ]
    standings += [
        Standing(g, None, None, None, None, average_delay(g)) for g in grades if not g.correct
    ]
    return standings


def _or_inf(value: float | None) -> float:
    # A correct run always has a time; a missing delay (no delay reported) ranks last.
    return math.inf if value is None else value


def markdown(standings: Sequence[Standing]) -> str:
    """The leaderboard as a Markdown table."""
    queries = sorted({q for s in standings for q in s.grade.grades})
    head = ["place", "submission", "verdict", "score", "time rank", "delay rank",
            "exec s", "avg delay ms", *[f"{q} matched" for q in queries], "note"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in standings:
        cells = [
            _fmt(s.place), s.grade.name, s.grade.verdict, _fmt(s.score), _fmt(s.time_rank),
            _fmt(s.delay_rank), _fmt(s.grade.exec_seconds, "{:.2f}"),
            _fmt(s.average_delay_ms, "{:.3f}"),
            *[_matched(s.grade, q) for q in queries],
            "" if s.grade.correct else s.grade.message,
        ]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def _matched(grade: SubmissionGrade, query: str) -> str:
    g = grade.grades.get(query)
    return "-" if g is None else f"{g.matched}/{g.expected_lines}"


def _fmt(value: float | int | None, pattern: str = "{}") -> str:
    return "-" if value is None else pattern.format(value)


def _cell(text: str) -> str:
    # A message quoting submission output must not break the table.
    return text.replace("|", "\\|").replace("\n", " ")

