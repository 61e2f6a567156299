"""Crash-safe output files (taxi_rsp.outputs.atomic): an interrupt at any moment of a run
leaves no file that looks complete, and no partial file either."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.outputs import atomic
from taxi_rsp.outputs.atomic import AtomicOutputs


def interrupt_after_creating(name: str, monkeypatch) -> None:
    """Ctrl-C right after the partial file of output ``name`` is created, before the
    outputs hold its handle."""
    created = atomic._OutputFile.__init__

    def interrupted(self, path: Path, final: Path) -> None:
        created(self, path, final)
        if final.name == name:
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic._OutputFile, "__init__", interrupted)


def test_an_interrupt_while_a_partial_file_is_being_created_still_removes_it(tmp_path: Path, monkeypatch) -> None:
    """The file exists before the outputs hold its handle: Ctrl-C in between (a CLI test
    caught it under load) must not leave ``.q2.csv.partial`` behind."""
    interrupt_after_creating("q2.csv", monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        with AtomicOutputs(tmp_path) as outputs:
            outputs.open("q1.csv").write("a line\n")
            outputs.open("q2.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_interrupt_while_the_summary_is_being_created_removes_everything(tmp_path: Path, monkeypatch) -> None:
    interrupt_after_creating("summary.json", monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        with AtomicOutputs(tmp_path) as outputs:
            outputs.open("q1.csv").write("a line\n")
            outputs.commit_summary({"lines_read": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_committed_run_keeps_its_outputs_and_no_partial_file(tmp_path: Path) -> None:
    with AtomicOutputs(tmp_path) as outputs:
        outputs.open("q1.csv").write("a line\n")
        outputs.commit_summary({"lines_read": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q1.csv", "summary.json"]
    assert (tmp_path / "q1.csv").read_text() == "a line\n"


def test_an_interrupted_run_removes_the_folder_it_made(tmp_path: Path) -> None:
    """Ctrl-C before anything was committed: a folder the run created goes too (one that
    was there before stays)."""
    made, there = tmp_path / "new" / "out", tmp_path / "there"
    there.mkdir()
    for folder in (made, there):
        with pytest.raises(KeyboardInterrupt):
            with AtomicOutputs(folder) as outputs:
                outputs.open("q1.csv").write("a line\n")
                raise KeyboardInterrupt
    assert not made.exists() and there.is_dir() and list(there.iterdir()) == []


def test_commit_only_keeps_the_named_files_and_no_summary(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with AtomicOutputs(tmp_path / "out") as outputs:
            outputs.open("q1.csv").write("a line\n")
            outputs.open("rejects.csv").write("line,reason\n")
            outputs.commit_only(["rejects.csv"])
            raise RuntimeError("the run failed")  # what the runner raises next
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["rejects.csv"]
    assert (tmp_path / "out" / "rejects.csv").read_text() == "line,reason\n"
