"""Line-by-line comparison of a submission's query output with the reference.

``matched`` counts positions where both files hold the same line (delay ignored);
precision and recall treat the files as multisets of lines, so one missing line early
on costs every later position but only one line of recall. A query is correct when
the two sequences are identical and no line is malformed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from taxi_rsp.outputs.delays import DelayStats, delay_stats
from taxi_rsp.grading.outputs import OutputLine, field_names, problem


@dataclass(frozen=True)
class Mismatch:
    """The first line where the submission differs from the reference."""

    line: int  # 1-based
    expected: str | None  # None: the submission has more lines than the reference
    got: str | None  # None: the submission stopped early
    fields: tuple[str, ...] = ()  # names of the fields that differ (delay NULL-ness too)


@dataclass(frozen=True)
class Malformed:
    """The first line whose shape is wrong, and why."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class QueryGrade:
    """The grade of one query's output."""

    query: str
    present: bool  # the output file exists
    expected_lines: int
    got_lines: int
    matched: int
    precision: float
    recall: float
    malformed: int
    first_malformed: Malformed | None
    first_mismatch: Mismatch | None
    delay: DelayStats

    @property
    def correct(self) -> bool:
        return self.present and self.first_mismatch is None and self.malformed == 0


def compare_query(
    query: str, expected: Sequence[OutputLine], got: Sequence[OutputLine] | None
) -> QueryGrade:
    """Grade one query: ``got`` is None when the submission wrote no file for it."""
    present = got is not None
    got = list(got or [])
    bad = [(line, reason) for line in got if (reason := problem(line, query)) is not None]
    first_malformed = Malformed(bad[0][0].number, bad[0][0].text, bad[0][1]) if bad else None
    matched = sum(1 for e, g in zip(expected, got) if e.key == g.key)
    common = sum((Counter(e.key for e in expected) & Counter(g.key for g in got)).values())
    malformed_numbers = {line.number for line, _ in bad}
    delays = [g.delay_ms for g in got if g.number not in malformed_numbers]
    return QueryGrade(
        query=query,
        present=present,
        expected_lines=len(expected),
        got_lines=len(got),
        matched=matched,
        precision=_ratio(common, len(got), len(expected)),
        recall=_ratio(common, len(expected), len(got)),
        malformed=len(bad),
        first_malformed=first_malformed,
        first_mismatch=first_mismatch(query, expected, got),
        delay=delay_stats(delays),
    )


def first_mismatch(
    query: str, expected: Sequence[OutputLine], got: Sequence[OutputLine]
) -> Mismatch | None:
    """The first position where the files differ (delay values ignored), if any."""
    for index in range(max(len(expected), len(got))):
        e = expected[index] if index < len(expected) else None
        g = got[index] if index < len(got) else None
        if e is not None and g is not None and e.key == g.key:
            continue
        fields = _differing_fields(query, e, g) if e is not None and g is not None else ()
        return Mismatch(
            index + 1, e.text if e is not None else None, g.text if g is not None else None, fields
        )
    return None


def _differing_fields(query: str, e: OutputLine, g: OutputLine) -> tuple[str, ...]:
    names = field_names(query)
    if len(e.fields) != len(g.fields):
        return ("field_count",)
    diff = [
        names[i] if i < len(names) else f"field_{i + 1}"
        for i, (a, b) in enumerate(zip(e.fields[:-1], g.fields[:-1]))
        if a != b
    ]
    if (e.fields[-1] == "NULL") != (g.fields[-1] == "NULL"):
        diff.append("delay (NULL vs value)")
    return tuple(diff)


def _ratio(common: int, denominator: int, other: int) -> float:
    """common/denominator; with nothing on either side the answer is perfect (1.0)."""
    if denominator == 0:
        return 1.0 if other == 0 else 0.0
    return common / denominator
