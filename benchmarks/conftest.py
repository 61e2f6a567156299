"""Shared benchmark fixtures: the git-ignored cache folder for large generated inputs,
and the synthetic files generated into it once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    """``./cache`` at the repository root (git-ignored), created on first use."""
    path = ROOT / "cache"
    path.mkdir(exist_ok=True)
    return path


def cached_synthetic(cache: Path, days: int, seed: int) -> Path:
    """``cache/synth{days}_seed{seed}.csv``, generated on first use (written to a
    ``.part`` file, renamed when complete), with a sidecar JSON of what a
    SPEC-conformant Feeder must report for its damaged lines."""
    from taxi_rsp.data import SynthConfig, generate

    cache.mkdir(exist_ok=True)
    path = cache / f"synth{days}_seed{seed}.csv"
    sidecar = path.with_suffix(".json")
    if not (path.exists() and sidecar.exists()):
        part = path.with_suffix(".part")
        made = generate(SynthConfig(days=days, seed=seed), part)
        part.rename(path)
        sidecar.write_text(json.dumps({
            "lines": made.lines,
            "expected_rejects": dict(made.expected_rejects),
            "expected_profit_exclusions": made.expected_profit_exclusions,
        }, indent=2))
    return path


def synthetic_slice(cache: Path, lines: int) -> Path:
    """The first ``lines`` lines of the synthetic 20-day file (seed 0), cached beside it."""
    import itertools

    path = cache / f"synth20_seed0_first{lines}.csv"
    if not path.exists():
        source = cached_synthetic(cache, 20, 0)
        part = path.with_suffix(".part")
        with source.open("rb") as full, part.open("wb") as out:
            out.writelines(itertools.islice(full, lines))
        part.rename(path)
    return path
