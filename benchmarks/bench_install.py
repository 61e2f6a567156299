"""The README's first command's install from a fresh clone, measured: wall time, CPU
seconds and the venv's size, beside the figures the README states (issue 52: ≤ 4 minutes
on this project's 2-core machine at low load).

    .venv/bin/python benchmarks/bench_install.py            # clone HEAD into a scratch folder
    .venv/bin/python benchmarks/bench_install.py --keep DIR # and keep the clone there

An install's time is the machine's load as much as the code's, so this is a benchmark,
not a test: it prints the load next to the figures. ``tests/test_readme.py`` checks the
stated size against a real install (the slow fresh-clone test) and that the figures name
their date.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def stated_figures(readme: str) -> dict[str, float]:
    """The core install's figures the README states: wall seconds, CPU seconds, MB.

    >>> stated_figures("the first command's core install took 1 min 45 s (191 CPU s, …) and leaves a 150 MB venv")
    {'wall_s': 105.0, 'cpu_s': 191.0, 'venv_mb': 150.0}
    """
    found = re.search(r"core install took (\d+) min (\d+) s \((\d+) CPU s.*?leaves a (\d+) MB venv", readme, re.S)
    if found is None:
        raise SystemExit("the README states no core install figures (\"core install took M min S s (N CPU s\")")
    minutes, seconds, cpu, size = map(int, found.groups())
    return {"wall_s": float(minutes * 60 + seconds), "cpu_s": float(cpu), "venv_mb": float(size)}


def install_command(readme: str) -> str:
    """The install part of the README's first command (before the run)."""
    block = re.search(r"## First commands.*?```sh\n(.*?)\n```", readme, re.S)
    if block is None:
        raise SystemExit("no first command in the README")
    return block.group(1).split(" && .venv/bin/taxi-rsp ")[0]


def venv_mb(path: Path) -> float:
    """The venv's size on disk in MB (``du -sm``)."""
    return float(subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


def measure(clone: Path, command: str) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=clone, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "venv_mb": venv_mb(clone / ".venv")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="clone into this (new) folder and keep it")
    args = parser.parse_args(argv)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command, stated = install_command(readme), stated_figures(readme)
    with tempfile.TemporaryDirectory() as scratch:
        clone = args.keep or Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        load = os.getloadavg()[0]
        measured = measure(clone, command)
        print(f"{command}\n  load {load:.2f} -> {os.getloadavg()[0]:.2f} (1-minute average, before and after)")
        for key, value in measured.items():
            print(f"  {key:8} measured {value:8.1f}   README {stated[key]:8.1f}")
        print("  within the 4-minute promise" if measured["wall_s"] <= 240 else "  OVER the 4-minute promise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
