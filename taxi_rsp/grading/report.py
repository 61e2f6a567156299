"""Grading results as JSON and as Markdown (leaderboard table plus per-query details)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from taxi_rsp.grading.leaderboard import Standing, markdown
from taxi_rsp.grading.verdict import SubmissionGrade


def results_json(standings: Sequence[Standing], context: dict[str, object]) -> str:
    """All results: the context (data, reference, VM shape) and one entry per submission."""
    entries = []
    for s in standings:
        entry = s.grade.to_dict()
        entry.update(place=s.place, score=s.score, time_rank=s.time_rank,
                     delay_rank=s.delay_rank, average_delay_ms=s.average_delay_ms)
        entries.append(entry)
    return json.dumps({**context, "submissions": entries}, indent=2, default=_plain) + "\n"


def details_markdown(grade: SubmissionGrade) -> str:
    """Per-query lines for one submission: matches, precision/recall, delays, first mismatch."""
    out = [f"### {grade.name} — {grade.verdict}", "", grade.message, ""]
    if grade.run is not None:
        r = grade.run
        out += [f"exec {_num(r.exec_seconds, '{:.2f}')} s in the VM (exit {r.exit_code}), "
                f"boot {_num(r.boot_seconds)} s, VM wall {_num(r.vm_wall_seconds)} s, "
                f"accel {r.accel}" + (f", guest CPU {r.guest_cpu}" if r.guest_cpu else ""), ""]
    for query, g in grade.grades.items():
        d = g.delay
        out.append(
            f"* **{query}**: {g.matched}/{g.expected_lines} lines matched in place, "
            f"{g.got_lines} written, precision {g.precision:.4f}, recall {g.recall:.4f}, "
            f"malformed {g.malformed}; delay ms mean {_num(d.mean, '{:.3f}')} "
            f"p50 {_num(d.p50, '{:.3f}')} p99 {_num(d.p99, '{:.3f}')} ({d.nulls} NULL)"
        )
        if g.first_mismatch is not None:
            m = g.first_mismatch
            fields = f" — fields: {', '.join(m.fields)}" if m.fields else ""
            out += [f"  * first mismatch at line {m.line}{fields}",
                    f"    * expected: `{m.expected if m.expected is not None else '<end of file>'}`",
                    f"    * got: `{m.got if m.got is not None else '<end of file>'}`"]
        if g.first_malformed is not None:
            b = g.first_malformed
            out.append(f"  * first malformed line {b.line}: {b.reason}: `{b.text[:200]}`")
    return "\n".join(out) + "\n"


def leaderboard_markdown(standings: Sequence[Standing]) -> str:
    body = [markdown(standings), "## Details", ""]
    body += [details_markdown(s.grade) for s in standings]
    return "# Grading results\n\n" + "\n".join(body)


def write_reports(out: Path, standings: Sequence[Standing], context: dict[str, object]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(results_json(standings, context))
    (out / "leaderboard.md").write_text(leaderboard_markdown(standings))


def _num(value: float | None, pattern: str = "{}") -> str:
    return "-" if value is None else pattern.format(value)


def _plain(value: object) -> object:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)  # type: ignore[arg-type]
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
