"""Shared benchmark fixtures: the git-ignored cache folder for large generated inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    """``./cache`` at the repository root (git-ignored), created on first use."""
    path = ROOT / "cache"
    path.mkdir(exist_ok=True)
    return path
