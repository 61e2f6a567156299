"""`taxi-rsp verify`: folder comparison rules and exit codes (no Spark needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


from taxi_rsp.cli import main as cli_main
from taxi_rsp.verify.compare import compare_folders
from taxi_rsp.outputs.delays import delay_stats, read_delays

NULLS = ",".join(["NULL"] * 18)
Q1 = [f"2013-01-01 00:00:00,2013-01-01 00:02:00,161.170,160.170,{NULLS},0.120",
      f"2013-01-01 00:32:00,2013-01-01 00:32:00,NULL,NULL,{NULLS},NULL"]
REJECTS = ['line_no,reason,raw_line', '3,field_count,"a,b"']
SUMMARY = {"lines_read": 3, "accepted": 2, "rejected": {"field_count": 1}, "outliers": {"q1": 0},
           "profit_excluded": 0, "exec_seconds": 1.0}


def _folder(root: Path, name: str, q1: list[str] = Q1, rejects: list[str] = REJECTS,
            summary: dict = SUMMARY) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "q1.csv").write_text("".join(line + "\n" for line in q1), encoding="utf-8")
    (folder / "rejects.csv").write_text("".join(line + "\n" for line in rejects), encoding="utf-8")
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder


def test_identical_except_measured_delays(tmp_path: Path) -> None:
    a = _folder(tmp_path, "a")
    b = _folder(tmp_path, "b", q1=[Q1[0].replace("0.120", "57.004"), Q1[1]],
                summary={**SUMMARY, "exec_seconds": 99.0})
    result = compare_folders(a, b)
    assert result.identical and result.compared == ["q1.csv", "rejects.csv", "summary.json"]
    assert cli_main(["verify", str(a), str(b)]) == 0


def test_a_different_field_is_reported_with_its_line(tmp_path: Path, capsys) -> None:
    a = _folder(tmp_path, "a")
    b = _folder(tmp_path, "b", q1=[Q1[0].replace("160.170", "160.171"), Q1[1]])
    result = compare_folders(a, b)
    assert [(d.file, d.line_no) for d in result.differences] == [("q1.csv", 1)]
    assert cli_main(["verify", str(a), str(b)]) == 1
    assert "q1.csv:1" in capsys.readouterr().out


def test_null_delay_must_agree(tmp_path: Path) -> None:
    a = _folder(tmp_path, "a")
    b = _folder(tmp_path, "b", q1=[Q1[0], Q1[1].rpartition(",")[0] + ",0.500"])
    result = compare_folders(a, b)
    assert [(d.file, d.line_no) for d in result.differences] == [("q1.csv", 2)]
    assert "NULL in A only" in result.differences[0].message


def test_missing_and_extra_lines_rejects_and_counts(tmp_path: Path) -> None:
    a = _folder(tmp_path, "a")
    b = _folder(tmp_path, "b", q1=Q1[:1], rejects=REJECTS + ['5,out_of_order,"x"'],
                summary={**SUMMARY, "accepted": 1})
    result = compare_folders(a, b)
    found = {(d.file, d.line_no) for d in result.differences}
    assert found == {("q1.csv", 2), ("rejects.csv", 3), ("summary.json", 0)}


def test_a_missing_file_is_a_difference(tmp_path: Path) -> None:
    a = _folder(tmp_path, "a")
    b = _folder(tmp_path, "b")
    shutil.copy(a / "q1.csv", a / "q2.csv")
    result = compare_folders(a, b)
    assert [(d.file, d.message) for d in result.differences] == [("q2.csv", "missing in B")]
    assert compare_folders(a, b, queries=["q1"]).identical


def test_the_difference_limit_counts_everything(tmp_path: Path) -> None:
    a = _folder(tmp_path, "a", q1=[Q1[0]] * 20)
    b = _folder(tmp_path, "b", q1=[Q1[0].replace("161.170", "1.1")] * 20)
    result = compare_folders(a, b, limit=3)
    assert len(result.differences) == 3 and result.counted == {"q1.csv": 20}


def test_long_files_are_compared_to_the_end(tmp_path: Path) -> None:
    """verify streams both files side by side: a difference on the last shared line and a
    line only in B, after 50,000 equal ones, are both found with their line numbers."""
    same = [Q1[0]] * 50_000
    a = _folder(tmp_path, "a", q1=[*same, Q1[1]])
    b = _folder(tmp_path, "b", q1=[*same, Q1[1].replace("00:32:00,NULL", "00:32:00,1.1", 1), Q1[0]])
    result = compare_folders(a, b)
    assert [(d.file, d.line_no) for d in result.differences] == [("q1.csv", 50_001), ("q1.csv", 50_002)]
    assert result.differences[1].message.startswith("only in B")


def test_user_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert cli_main(["verify", str(tmp_path / "nope"), str(tmp_path)]) == 2
    (tmp_path / "empty1").mkdir()
    (tmp_path / "empty2").mkdir()
    assert cli_main(["verify", str(tmp_path / "empty1"), str(tmp_path / "empty2")]) == 2
    assert "error" in capsys.readouterr().err


def test_delay_statistics(tmp_path: Path) -> None:
    path = tmp_path / "q1.csv"
    path.write_text("".join(line + "\n" for line in Q1))
    assert read_delays(path).tolist() == [0.12]
    # the one percentile rule of every summary and the grader: nearest rank, a measured value
    stats = delay_stats([1.0, 2.0, 3.0, 4.0]).summary()
    assert stats == {"mean": 2.5, "p50": 2.0, "p99": 4.0, "max": 4.0}
    assert delay_stats([]).summary() == {"mean": None, "p50": None, "p99": None, "max": None}


BUSY = ["time,trigger,change,rank,taxi,n", "2013-01-01 00:01:00,event:3,=,1,10CBD696,1",
        "2013-01-01 00:02:00,event:5,=,1,B599B0E2,2"]


def _with_result_file(folder: Path, name: str, lines: list[str]) -> Path:
    """Add another query's result file, named in summary.json as the engine names it."""
    (folder / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary["emitted"] = {**summary.get("emitted", {}), name.rsplit(".", 1)[0]: len(lines)}
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder


def test_another_querys_result_file_is_compared_line_for_line(tmp_path: Path, capsys) -> None:
    """A query of the user's (``busy_taxis.csv``: time,trigger,change,rank,…, no delay)
    is compared too - it used to be skipped, so two different answers were 'identical'."""
    a = _with_result_file(_folder(tmp_path, "a"), "busy_taxis.csv", BUSY)
    b = _with_result_file(_folder(tmp_path, "b"), "busy_taxis.csv", BUSY)
    result = compare_folders(a, b)
    assert result.identical and "busy_taxis.csv" in result.compared
    _with_result_file(b, "busy_taxis.csv", [*BUSY[:2], BUSY[2].replace(",2", ",3")])
    result = compare_folders(a, b)
    assert [(d.file, d.line_no) for d in result.differences] == [("busy_taxis.csv", 3)]
    assert cli_main(["verify", str(a), str(b)]) == 1
    assert "busy_taxis.csv:3" in capsys.readouterr().out
    assert cli_main(["verify", str(a), str(b), "--query", "q1"]) == 0  # only what was asked


def test_a_result_file_in_the_challenge_format_ignores_its_delays(tmp_path: Path) -> None:
    """A user's query written with a DEBS listener has a delay last on each line."""
    a = _with_result_file(_folder(tmp_path, "a"), "routes.csv", Q1)
    b = _with_result_file(_folder(tmp_path, "b"), "routes.csv", [Q1[0].replace("0.120", "9.9"), Q1[1]])
    assert compare_folders(a, b).identical
