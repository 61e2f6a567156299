"""Outputs of an earlier run that a new run into the same folder would not rewrite.

A folder that keeps a ``q2.csv`` from an earlier run after a Q1-only run looks like one
complete result, and ``taxi-rsp verify`` would compare the stale file. So a run finds,
before it starts, every file in its folder that looks like an output (``*.csv``,
``*.nq``, ``*.jsonl``, ``summary.json``, ``throughput.json``) and that it will not write:

* files the earlier run's ``summary.json`` names (its queries' outputs, ``rejects.csv``)
  are that run's: they are removed when the new run commits;
* any other such file may be the user's: the run refuses to start unless ``--force``
  (then they are removed too). The run's input file is never touched.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from taxi_rsp.errors import UserError

OUTPUT_SUFFIXES = (".csv", ".nq", ".jsonl")
COMPANIONS = ("summary.json", "throughput.json")


def earlier_run(directory: Path) -> set[str]:
    """The files the complete run recorded by ``directory/summary.json`` wrote (empty if none)."""
    try:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    names = {*COMPANIONS, "rejects.csv"}
    emitted = summary.get("emitted") if isinstance(summary, dict) else None
    for query in emitted if isinstance(emitted, dict) else ():
        names.update(f"{query}{suffix}" for suffix in OUTPUT_SUFFIXES)
    return names


def output_like(directory: Path) -> set[str]:
    """Names of the regular, visible files in ``directory`` that look like run outputs."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return set()
    return {p.name for p in entries if not p.name.startswith(".") and p.is_file()
            and (p.suffix in OUTPUT_SUFFIXES or p.name in COMPANIONS)}


def stale_outputs(directory: Path, writing: Iterable[str], earlier: set[str], force: bool,
                  protect: Iterable[Path] = ()) -> list[Path]:
    """The files to remove when the run commits; raises :class:`UserError` (before any
    work) for files not known to be an earlier run's unless ``force``."""
    keep = set(writing) | {"summary.json"}
    protected = {p.resolve() for p in protect}
    stale = sorted(name for name in output_like(directory) - keep
                   if (directory / name).resolve() not in protected)
    unknown = [name for name in stale if name not in earlier]
    if unknown and not force:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise UserError(f"output folder {directory} holds {shown}, which this run would not rewrite "
                        "(from another run?); add --force to remove them, or choose another --out")
    return [directory / name for name in stale]
