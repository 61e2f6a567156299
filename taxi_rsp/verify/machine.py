"""A one-line description of the machine a measurement ran on (for every figure)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def _cpu_model() -> str:
    try:
        output = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        output = ""
    for line in output.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return None


def describe_machine() -> str:
    """E.g. ``AMD EPYC 7B13, 2 cores, 23.5 GiB RAM, Linux, Python 3.11.7``."""
    ram = _ram_gib()
    parts = [_cpu_model(), f"{os.cpu_count()} cores"]
    if ram is not None:
        parts.append(f"{ram:.1f} GiB RAM")
    parts += [platform.system(), f"Python {platform.python_version()}"]
    return ", ".join(parts)
