"""benchmarks/ab_runs.py, the A/B tool docs/performance.md's before/after tables come from:
it runs each checkout, reports CPU seconds, and tells identical outputs (delay aside) from
different ones."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("ab_runs", ROOT / "benchmarks" / "ab_runs.py")
assert spec is not None and spec.loader is not None
ab_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ab_runs)


def test_two_runs_of_one_checkout_are_identical_and_timed(sample_20d: Path, tmp_path: Path, capsys) -> None:
    code = ab_runs.main([str(sample_20d), f"a={ROOT}", f"b={ROOT}", "--rounds", "1", "--args", "--query q1",
                         "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert code == 0 and "outputs a vs b: identical" in printed
    assert printed.count("cpu=") == 2 and "round=1" in printed


def test_a_changed_output_line_is_reported(sample_20d: Path, tmp_path: Path) -> None:
    ab_runs.main([str(sample_20d), f"a={ROOT}", "--rounds", "1", "--args", "--query q1", "--out", str(tmp_path)])
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert ab_runs.differing(tmp_path / "a", tmp_path / "b") == []
    q1 = tmp_path / "b" / "q1.csv"
    lines = q1.read_text().splitlines()
    lines[0] = lines[0].rsplit(",", 1)[0] + ",999.0"  # a different delay alone is no difference
    q1.write_text("\n".join(lines) + "\n")
    assert ab_runs.differing(tmp_path / "a", tmp_path / "b") == []
    lines[1] = "x" + lines[1]
    q1.write_text("\n".join(lines) + "\n")
    assert ab_runs.differing(tmp_path / "a", tmp_path / "b") == ["q1.csv"]


def test_a_checkout_running_stale_modules_as_python_is_refused() -> None:
    summary = {"engine_modules": {"compiled": 34, "python_source": ["taxi_rsp.engine.compiled.join"],
                                  "pure_python_requested": False}}
    assert ab_runs.stale_modules(summary) == ["taxi_rsp.engine.compiled.join"]
    pure = {"engine_modules": {"compiled": 0, "python_source": ["a", "b"], "pure_python_requested": True}}
    assert ab_runs.stale_modules(pure) == [] and ab_runs.stale_modules({}) == []
