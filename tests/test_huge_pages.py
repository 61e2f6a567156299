"""The huge-page arena allocator (taxi_rsp/engine/arenas.pyx, hugepages.py): when it turns
itself off, that pymalloc keeps working on top of it (arenas cut, freed, reused; other
sizes passed through), and that a run gives the same output with it on and off.

The allocator is process-wide and cannot be uninstalled, so everything that installs it
runs in a subprocess of its own.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from taxi_rsp.engine import hugepages

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def _applies() -> str | None:
    """Why the allocator cannot be installed on this machine, or None."""
    reason = hugepages._reason_off({})
    if reason is not None:
        return reason
    try:
        importlib.import_module("taxi_rsp.engine.arenas")
    except ImportError as error:
        return f"not built: {error}"
    return None


needs_allocator = pytest.mark.skipif(_applies() is not None, reason=f"huge-page arenas unavailable: {_applies()}")


def test_thp_mode_reads_the_selected_word() -> None:
    assert hugepages.thp_mode("always [madvise] never\n") == "madvise"
    assert hugepages.thp_mode("[always] madvise never") == "always"
    assert hugepages.thp_mode("never") == "never"


def test_it_turns_itself_off_with_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert hugepages._reason_off({hugepages.ENV: "0"}) == f"off ({hugepages.ENV}=0)"
    assert "PURE_PYTHON" in (hugepages._reason_off({"TAXI_RSP_PURE_PYTHON": "1"}) or "")
    setting = tmp_path / "enabled"
    setting.write_text("always madvise [never]\n")
    monkeypatch.setattr(hugepages, "THP_SETTING", setting)
    assert "disabled" in (hugepages._reason_off({}) or "")
    monkeypatch.setattr(hugepages, "THP_SETTING", tmp_path / "missing")
    assert (hugepages._reason_off({}) or "").startswith("off (no ")


def _python(script: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=ROOT, timeout=300, check=False)


@needs_allocator
def test_pymalloc_works_on_top_of_it() -> None:
    """Arenas are cut from the region, freed to its free list and handed out again, while
    the objects in them keep their values; requests of other sizes (the frames' data-stack
    chunks of a deep recursion) go to the previous allocator. A mix-up of sizes between
    the two (an early draft served a 16 KiB stack chunk from the arena free list) crashes
    the interpreter within this test."""
    proc = _python("""
        import json, sys
        from taxi_rsp.engine import hugepages, arenas
        assert hugepages.enable() == "on", hugepages.enable()
        def deep(n):
            return 0 if n == 0 else 1 + deep(n - 1)
        sys.setrecursionlimit(100000)
        total = 0
        for round in range(6):
            held = [(i, str(i), [i]) for i in range(300_000)]  # ~60 MiB of small objects
            assert deep(20000) == 20000  # data-stack chunks: not arena-sized
            total += sum(row[0] + len(row[1]) + row[2][0] for row in held[::997])
            del held  # whole arenas free up: they go to the free list
        print(json.dumps({"total": total, **arenas.stats()}))
    """)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    expected = 6 * sum(i + len(str(i)) + i for i in range(0, 300_000, 997))
    assert stats["total"] == expected
    assert stats["installed"] and stats["carved_mib"] >= 30
    assert stats["reused"] > 0, "freed arenas were never handed out again"
    assert stats["passed_through"] > 0, "no request of another size reached the previous allocator"
    assert stats["carved_mib"] < 6 * 60, "the region grew with every round instead of reusing arenas"


@needs_allocator
def test_a_run_gives_the_same_output_with_huge_pages_on_and_off(tmp_path: Path) -> None:
    outputs = {}
    for setting in ("1", "0"):
        out = tmp_path / f"huge{setting}"
        proc = subprocess.run([sys.executable, "-m", "taxi_rsp", "run", str(SAMPLE), "--out", str(out), "--no-progress"],
                              capture_output=True, text=True, env={**os.environ, hugepages.ENV: setting},
                              cwd=ROOT, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr
        heap = json.loads((out / "summary.json").read_text())["heap"]
        outputs[setting] = {q: [line.rsplit(",", 1)[0] for line in (out / f"{q}.csv").read_text().splitlines()]
                            for q in ("q1", "q2")}
        if setting == "1":
            assert heap["huge_pages"] == "on" and heap["carved_mib"] > 0, heap
        else:
            assert heap == {"huge_pages": f"off ({hugepages.ENV}=0)"}
    assert outputs["1"]["q1"] and outputs["1"]["q2"]
    assert outputs["1"] == outputs["0"]
