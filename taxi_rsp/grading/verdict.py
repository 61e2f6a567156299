"""The graded result of one submission and the rule that names its verdict.

Verdicts, first that applies: ``invalid`` (unusable manifest), ``vm_error`` (the VM
left no run record), ``timeout``, ``crashed`` (could not start, or non-zero exit),
``no_output`` (no line in any file it claims although the reference has lines),
``malformed`` (a line of the wrong shape), ``incorrect``, ``correct``. Output that
exists is graded whatever the verdict, so a crash after half the work shows how far
the submission got.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from taxi_rsp.grading.compare import QueryGrade

VERDICTS = ("correct", "incorrect", "malformed", "no_output", "crashed", "timeout",
            "vm_error", "invalid")


@dataclass(frozen=True)
class RunRecord:
    """What the in-VM runner reported (``run.json``) plus the host's VM timings."""

    exit_code: int | None = None
    timed_out: bool = False
    exec_seconds: float | None = None
    error: str | None = None
    signal: str | None = None
    vm_wall_seconds: float | None = None
    boot_seconds: float | None = None
    vm_killed: bool = False
    accel: str | None = None
    guest_cpu: str | None = None  # the CPU model the guest saw and its SIMD extensions
    stderr_tail: str = ""

    @classmethod
    def from_guest(cls, data: Mapping[str, object], **host: object) -> RunRecord:
        exit_code = data.get("exit_code")
        seconds = data.get("exec_seconds")
        return cls(
            exit_code=exit_code if isinstance(exit_code, int) else None,
            timed_out=bool(data.get("timed_out", False)),
            exec_seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
            error=str(data["error"]) if data.get("error") else None,
            signal=str(data["signal"]) if data.get("signal") else None,
            guest_cpu=_guest_cpu(data.get("guest")),
            **host,  # type: ignore[arg-type]
        )


def _guest_cpu(guest: object) -> str | None:
    """``"<model> (sse4_2, ...)"`` from the runner's guest facts, when it recorded them."""
    if not isinstance(guest, Mapping) or not guest.get("cpu_model"):
        return None
    simd = guest.get("simd")
    extensions = ", ".join(map(str, simd)) if isinstance(simd, list) and simd else "no SSE4.2/AVX"
    return f"{guest['cpu_model']} ({extensions})"


@dataclass(frozen=True)
class SubmissionGrade:
    """Everything the grader knows about one submission."""

    name: str
    source: str
    verdict: str
    message: str
    queries: tuple[str, ...] = ()
    run: RunRecord | None = None
    grades: dict[str, QueryGrade] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        return self.verdict == "correct"

    @property
    def exec_seconds(self) -> float | None:
        return self.run.exec_seconds if self.run else None

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["queries"] = list(self.queries)
        return data


def decide(run: RunRecord | None, grades: Mapping[str, QueryGrade]) -> tuple[str, str]:
    """The verdict and a one-line explanation for a submission that was run."""
    if run is None:
        return "vm_error", "the VM produced no run record (did it boot? see console.log)"
    if run.timed_out or run.vm_killed:
        where = "inside the VM" if run.timed_out else "by the host (VM hard limit)"
        return "timeout", f"killed at its time limit {where}"
    if run.error:
        return "crashed", f"could not run: {run.error}"
    if run.exit_code != 0:
        how = f"signal {run.signal}" if run.signal else f"exit code {run.exit_code}"
        return "crashed", f"exited with {how}"
    if grades and all(g.got_lines == 0 for g in grades.values()) and any(
        g.expected_lines for g in grades.values()
    ):
        missing = [q for q, g in grades.items() if not g.present]
        detail = f"no {', '.join(q + '.csv' for q in missing)}" if missing else "only empty files"
        return "no_output", f"wrote nothing ({detail})"
    for query, grade in grades.items():
        if grade.malformed:
            bad = grade.first_malformed
            assert bad is not None
            return "malformed", f"{query}: {grade.malformed} malformed line(s), first line {bad.line}: {bad.reason}"
    wrong = [q for q, g in grades.items() if not g.correct]
    if wrong:
        grade = grades[wrong[0]]
        if not grade.present:
            return "incorrect", f"{wrong[0]}: no {wrong[0]}.csv"
        mismatch = grade.first_mismatch
        assert mismatch is not None
        return "incorrect", f"{wrong[0]}: first mismatch at line {mismatch.line}" + (
            f" ({', '.join(mismatch.fields)})" if mismatch.fields else
            " (missing lines)" if mismatch.got is None else " (extra lines)"
        )
    return "correct", "all lines match the reference"
