"""The reference output a submission is graded against.

Either a directory given by the user (``q1.csv``/``q2.csv``), or produced on the host
by our engine (``taxi-rsp run``) and cross-checked with the Spark baseline
(``taxi-rsp baseline``) when that command exists. A disagreement between the two is
recorded in the results: the grades are then only as good as the engine.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp.errors import UserError
from taxi_rsp.grading.compare import compare_query
from taxi_rsp.grading.manifest import QUERIES
from taxi_rsp.grading.outputs import OutputLine, read_output


@dataclass
class Reference:
    """Reference lines per query and where they came from."""

    directory: Path
    lines: dict[str, list[OutputLine]]
    source: str  # "given", "engine"
    cross_check: dict[str, object] = field(default_factory=dict)

    def describe(self) -> dict[str, object]:
        return {"directory": str(self.directory), "source": self.source,
                "lines": {q: len(v) for q, v in self.lines.items()},
                "cross_check": self.cross_check}


def load_reference(directory: Path, source: str = "given") -> Reference:
    """Read q1.csv/q2.csv from a directory; at least one must exist."""
    lines = {}
    for query in QUERIES:
        found = read_output(directory / f"{query}.csv")
        if found is not None:
            lines[query] = found
    if not lines:
        raise UserError(f"reference {directory}: no q1.csv or q2.csv")
    return Reference(directory, lines, source)


def command_available(name: str) -> bool:
    """True when `taxi-rsp NAME` exists (its command module is installed)."""
    return importlib.util.find_spec(f"taxi_rsp.commands.{name}") is not None


def produce_reference(data: Path, out: Path, cross_check: bool = True) -> Reference:
    """Run our engine on ``data`` into ``out``/engine, cross-check with the baseline."""
    if not command_available("run"):
        raise UserError("no reference: `taxi-rsp run` is not available; pass --reference DIR")
    engine_dir = out / "engine"
    _run_cli("run", data, engine_dir)
    reference = load_reference(engine_dir, "engine")
    if cross_check and command_available("baseline"):
        baseline_dir = out / "baseline"
        _run_cli("baseline", data, baseline_dir)
        baseline = load_reference(baseline_dir, "baseline")
        reference.cross_check = {"with": "baseline", **{
            q: _agreement(q, reference.lines[q], baseline.lines.get(q)) for q in reference.lines
        }}
    else:
        reference.cross_check = {"with": None, "note": "taxi-rsp baseline not available"}
    return reference


def _agreement(query: str, engine: list[OutputLine], baseline: list[OutputLine] | None) -> dict:
    grade = compare_query(query, engine, baseline)
    mismatch = grade.first_mismatch
    return {"agree": grade.correct, "engine_lines": len(engine), "baseline_lines": grade.got_lines,
            "first_mismatch_line": mismatch.line if mismatch else None}


def _run_cli(command: str, data: Path, out: Path) -> None:
    argv = [sys.executable, "-m", "taxi_rsp.cli", command, str(data), "--out", str(out),
            "--query", "q1", "--query", "q2"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise UserError(f"reference: `taxi-rsp {command}` failed ({done.returncode}): {last}")
