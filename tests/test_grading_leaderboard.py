"""Verdicts, the DEBS ranking (time rank + delay rank) and the Markdown/JSON reports."""

from __future__ import annotations

import json

import pytest

from taxi_rsp.grading.compare import compare_query
from taxi_rsp.grading.leaderboard import average_delay, competition_ranks, leaderboard, markdown
from taxi_rsp.grading.outputs import parse_lines
from taxi_rsp.grading.report import details_markdown, results_json
from taxi_rsp.grading.verdict import RunRecord, SubmissionGrade, decide

NULLS = ",".join(["NULL"] * 18)
REF_TEXT = [f"2013-01-01 00:0{i}:00,2013-01-01 00:0{i + 1}:00,1.{i},2.{i},{NULLS},1.000" for i in range(3)]
REF = parse_lines("".join(line + "\n" for line in REF_TEXT).encode())


def with_delay(delay: str) -> list:
    text = "".join(line.rsplit(",", 1)[0] + f",{delay}\n" for line in REF_TEXT)
    return parse_lines(text.encode())


def graded(name: str, seconds: float, delay: str, ok: RunRecord | None = None) -> SubmissionGrade:
    run = ok or RunRecord(exit_code=0, exec_seconds=seconds)
    grades = {"q1": compare_query("q1", REF, with_delay(delay))}
    verdict, message = decide(run, grades)
    return SubmissionGrade(name, name, verdict, message, ("q1",), run, grades)


def test_decide_each_failure_kind() -> None:
    good = {"q1": compare_query("q1", REF, REF)}
    assert decide(None, good)[0] == "vm_error"
    assert decide(RunRecord(timed_out=True, exit_code=-9), good)[0] == "timeout"
    assert decide(RunRecord(vm_killed=True), {})[0] == "timeout"
    assert decide(RunRecord(exit_code=None, error="No such file"), good) == (
        "crashed", "could not run: No such file")
    assert decide(RunRecord(exit_code=-11, signal="SIGSEGV"), good) == (
        "crashed", "exited with signal SIGSEGV")
    nothing = {"q1": compare_query("q1", REF, None)}
    assert decide(RunRecord(exit_code=0), nothing) == ("no_output", "wrote nothing (no q1.csv)")
    bad = {"q1": compare_query("q1", REF, parse_lines(b"oops\n"))}
    assert decide(RunRecord(exit_code=0), bad)[0] == "malformed"
    wrong = {"q1": compare_query("q1", REF, REF[:2])}
    assert decide(RunRecord(exit_code=0), wrong) == (
        "incorrect", "q1: first mismatch at line 3 (missing lines)")
    assert decide(RunRecord(exit_code=0), good)[0] == "correct"


def test_competition_ranks_share_ties() -> None:
    assert competition_ranks([2.0, 1.0, 2.0, 5.0]) == [2, 1, 2, 4]


def test_score_is_time_rank_plus_delay_rank() -> None:
    fast = graded("fast", 1.0, "9.000")  # time rank 1, delay rank 3
    steady = graded("steady", 2.0, "1.000")  # time rank 2, delay rank 1
    slow = graded("slow", 3.0, "2.000")  # time rank 3, delay rank 2
    table = leaderboard([slow, fast, steady])
    assert [(s.grade.name, s.time_rank, s.delay_rank, s.score) for s in table] == [
        ("steady", 2, 1, 3), ("fast", 1, 3, 4), ("slow", 3, 2, 5)]
    assert [s.place for s in table] == [1, 2, 3]
    assert average_delay(steady) == pytest.approx(1.0)


def test_equal_scores_share_the_place_and_the_faster_is_listed_first() -> None:
    a = graded("a", 2.0, "1.000")  # ranks 2 + 1
    b = graded("b", 1.0, "2.000")  # ranks 1 + 2
    table = leaderboard([a, b])
    assert [(s.grade.name, s.place, s.score) for s in table] == [("b", 1, 3), ("a", 1, 3)]


def test_only_correct_submissions_are_ranked() -> None:
    broken = SubmissionGrade("broken", "b", "crashed", "exited with exit code 1 | see log",
                             ("q1",), RunRecord(exit_code=1, exec_seconds=0.1),
                             {"q1": compare_query("q1", REF, None)})
    good = graded("good", 5.0, "1.000")
    table = leaderboard([broken, good])
    assert [(s.grade.name, s.place) for s in table] == [("good", 1), ("broken", None)]
    text = markdown(table)
    assert "| 1 | good | correct | 2 | 1 | 1 | 5.00 | 1.000 | 3/3 |" in text
    assert "exited with exit code 1 \\| see log" in text  # a pipe cannot break the table


def test_reports_carry_the_first_mismatch() -> None:
    wrong = SubmissionGrade("w", "w", *decide(RunRecord(exit_code=0, exec_seconds=1.0),
                                              {"q1": compare_query("q1", REF, REF[1:])}),
                            ("q1",), RunRecord(exit_code=0, exec_seconds=1.0),
                            {"q1": compare_query("q1", REF, REF[1:])})
    assert wrong.verdict == "incorrect"
    details = details_markdown(wrong)
    assert "first mismatch at line 1" in details and REF_TEXT[0] in details
    data = json.loads(results_json(leaderboard([wrong]), {"data": "x.csv"}))
    entry = data["submissions"][0]
    assert entry["verdict"] == "incorrect" and entry["place"] is None
    assert entry["grades"]["q1"]["first_mismatch"]["line"] == 1
    assert entry["grades"]["q1"]["recall"] == pytest.approx(2 / 3)
