"""`taxi-rsp view`: a finished run's answers, indexed so any instant is one seek away.

Each challenge file (q1.csv: 23 fields, q2.csv: 43) is scanned once for the byte offset
and trigger time of every line. The slider's instants are the distinct trigger times
of all files, in order; at instant T each query shows its last line written at or
before T, exactly the line a reader of the file at that moment would see last.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from taxi_rsp.errors import UserError
from taxi_rsp.viz.answers import PARSERS

FIELD_COUNTS = {23: "q1", 43: "q2"}  # SPEC §5 line shapes -> how to read them
STAMP = 19  # len("YYYY-MM-DD HH:MM:SS")


class AnswerFile:
    """One challenge output file: line offsets and trigger times (``S19`` bytes, which
    sort as the times do)."""

    def __init__(self, path: Path, shape: str) -> None:
        self.path = path
        self.name = path.stem
        self.parse = PARSERS[shape]
        self.kind = "routes" if shape == "q1" else "cells"
        offsets, times = [], []
        position = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                fields = raw.split(b",", 2)
                if len(fields) < 3 or len(fields[1]) != STAMP:
                    raise UserError(f"{path}, line {number}, column 1: not a SPEC §5 output line")
                offsets.append(position)
                times.append(fields[1])
                position += len(raw)
        self.offsets = np.array(offsets, dtype=np.int64)
        self.times = np.array(times, dtype=f"S{STAMP}")

    def line_at(self, time: bytes) -> int | None:
        """0-based index of the last line with trigger time <= ``time`` (None: none yet)."""
        index = int(np.searchsorted(self.times, np.array(time, dtype=f"S{STAMP}"), side="right")) - 1
        return index if index >= 0 else None

    def state(self, time: bytes) -> dict:
        index = self.line_at(time)
        if index is None:
            return {"kind": self.kind, "line": 0, "trigger": None, "rows": []}
        with self.path.open("rb") as handle:
            handle.seek(int(self.offsets[index]))
            answer = self.parse(handle.readline().decode("utf-8"), index + 1)
        rows = [entry.as_dict() for entry in answer.entries]
        for row in rows:
            row.setdefault("count", None)  # q1.csv does not give the counts
        return {"kind": self.kind, "line": index + 1, "trigger": answer.time, "rows": rows}


def _shape(path: Path) -> str | None:
    with path.open("rb") as handle:
        first = handle.readline()
    return FIELD_COUNTS.get(first.count(b",") + 1) if first else None


class RunHistory:
    """The challenge files of a run folder and the instants of the slider."""

    def __init__(self, folder: Path) -> None:
        if not (folder / "summary.json").is_file():
            raise UserError(f"{folder} holds no summary.json: not the folder of a complete `taxi-rsp run`")
        self.folder = folder
        self.files: list[AnswerFile] = []
        self.skipped: list[str] = []
        for path in sorted(folder.glob("*.csv")):
            if path.name == "rejects.csv":
                continue
            if path.stat().st_size == 0:
                continue  # a query that wrote no line: nothing to show, nothing wrong
            shape = _shape(path)
            if shape is None:
                self.skipped.append(path.name)
            else:
                self.files.append(AnswerFile(path, shape))
        if not any(len(f.times) for f in self.files):
            raise UserError(f"{folder} has no Q1 or Q2 output lines to show (q1.csv, q2.csv)")
        self.instants = np.unique(np.concatenate([f.times for f in self.files]))

    def steps(self) -> dict:
        return {"count": len(self.instants), "times": [t.decode("ascii") for t in self.instants],
                "files": [f.path.name for f in self.files], "skipped": self.skipped}

    def at(self, step: int) -> dict | None:
        if not 0 <= step < len(self.instants):
            return None
        time = bytes(self.instants[step])
        return {"mode": "view", "done": True, "time": time.decode("ascii"), "step": step,
                "queries": {f.name: f.state(time) for f in self.files}}
