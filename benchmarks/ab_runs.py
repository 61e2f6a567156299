"""Alternated A/B runs of ``taxi-rsp run`` between checkouts: CPU seconds, peak RSS, and
whether the outputs are identical (delay column aside).

    .venv/bin/python benchmarks/ab_runs.py cache/s300k.csv --rounds 2 --args "--query q2" \\
        before=/work/wt_before after=.
    .venv/bin/python benchmarks/ab_runs.py cache/s300k.csv --args "--query q2" \\
        --env python:TAXI_RSP_PURE_PYTHON=1 python=. compiled=.

Each checkout runs from its own sources (``PYTHONPATH``) with this interpreter, from a
scratch folder so the current directory's package cannot shadow it; build each checkout's
extensions first (``python setup.py build_ext --inplace``). Rounds alternate the checkouts
(A B A B …) so drift in the machine's load falls on both. The last round's outputs of every
checkout are compared with the first checkout's: CSV lines with the last column (the delay)
cut, ``rejects.csv`` byte for byte. ``docs/performance.md`` records its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path


def run_once(checkout: Path, data: Path, args: list[str], out: Path, extra_env: dict[str, str] | None = None
             ) -> dict:
    """One ``taxi-rsp run`` of ``checkout`` into ``out`` (``extra_env`` set); its summary.json."""
    env = dict(os.environ, PYTHONPATH=str(checkout), **(extra_env or {}))
    command = [sys.executable, "-m", "taxi_rsp", "run", str(data), *args, "--out", str(out), "--force",
               "--no-progress"]
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(command, cwd=scratch, env=env, check=True, capture_output=True, text=True)
    return json.loads((out / "summary.json").read_text())


def comparable(path: Path) -> list[str]:
    """An output file's lines as compared: CSV lines without their last field (the delay)."""
    lines = path.read_text().splitlines()
    return lines if path.name == "rejects.csv" else [line.rsplit(",", 1)[0] for line in lines]


def differing(first: Path, other: Path) -> list[str]:
    """Names of the output CSVs of ``first`` that ``other`` lacks or holds differently."""
    return [p.name for p in sorted(first.glob("*.csv"))
            if not (other / p.name).exists() or comparable(p) != comparable(other / p.name)]


def stale_modules(summary: dict) -> list[str]:
    """The engine modules a run loaded from Python source while others ran compiled: edited
    since the checkout was built, so its figures would be of another engine (stop 24 first
    measured a `before` checkout whose join ran as Python). A pure-Python install, or one
    asked for with TAXI_RSP_PURE_PYTHON=1, is consistent and not flagged.

    >>> stale_modules({"engine_modules": {"compiled": 34, "python_source": ["j"], "pure_python_requested": False}})
    ['j']
    >>> stale_modules({"engine_modules": {"compiled": 0, "python_source": ["j"], "pure_python_requested": False}})
    []
    """
    modules = summary.get("engine_modules", {})
    if not modules.get("compiled") or modules.get("pure_python_requested"):
        return []
    return list(modules.get("python_source") or [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("checkouts", nargs="+", metavar="NAME=CHECKOUT")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--args", default="", help='run arguments, e.g. "--query q2"')
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "ab_runs")
    parser.add_argument("--env", action="append", default=[], metavar="NAME:VAR=VALUE",
                        help="an environment variable for one side's runs (repeatable)")
    parser.add_argument("--allow-python-source", action="store_true",
                        help="measure a checkout whose compiled modules are stale (they run as Python)")
    options = parser.parse_args(argv)
    extra: dict[str, dict[str, str]] = {}
    for item in options.env:
        name, _, assignment = item.partition(":")
        variable, equals, value = assignment.partition("=")
        if not (name and variable and equals):
            parser.error("--env is NAME:VAR=VALUE")
        extra.setdefault(name, {})[variable] = value
    pairs = [item.split("=", 1) for item in options.checkouts]
    if any(len(pair) != 2 for pair in pairs):
        parser.error("checkouts are NAME=CHECKOUT")
    args = shlex.split(options.args)
    for round_number in range(1, options.rounds + 1):
        for name, checkout in pairs:
            summary = run_once(Path(checkout).resolve(), options.data.resolve(), args, options.out / name,
                               extra.get(name))
            stale = stale_modules(summary)
            if stale and not options.allow_python_source:
                print(f"{name} ({checkout}) ran {', '.join(stale)} as Python source; rebuild it "
                      "(python setup.py build_ext --inplace) or pass --allow-python-source", file=sys.stderr)
                return 2
            delays = {q: d["mean"] for q, d in summary.get("delay_ms", {}).items()}
            print(f"{options.args or '(default queries)'} | {name} round={round_number} "
                  f"cpu={summary['cpu_seconds']} peak_rss_mib={summary.get('peak_rss_mib')} "
                  f"delay_mean_ms={delays}", flush=True)
    first = options.out / pairs[0][0]
    failed = False
    for name, _ in pairs[1:]:
        changed = differing(first, options.out / name)
        failed |= bool(changed)
        print(f"outputs {pairs[0][0]} vs {name}: " + ("identical" if not changed else f"DIFFER: {changed}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
