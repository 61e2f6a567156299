"""Option mistakes are two lines (issue 52): the command's own ``error`` line, with a
"did you mean" when a known option, value or command is close, and that command's
one-line usage — never the top level's usage for a sub-command's option, never the
dozen lines of argparse's full usage."""

from __future__ import annotations

import subprocess
import sys

import pytest

from taxi_rsp.cli import main
from taxi_rsp.commands.parsing import did_you_mean, unknown_arguments_message

CLI = [sys.executable, "-m", "taxi_rsp"]


def error_lines(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


@pytest.mark.parametrize(("argv", "first", "usage"), [
    (["run", "trips.csv", "--out", "o", "--qeury", "q1"],
     "taxi-rsp run: error: unknown option --qeury; did you mean --query?", "usage: taxi-rsp run [INPUT] --out OUT"),
    (["run", "trips.csv", "--out", "o", "--q1-windw=60"],
     "taxi-rsp run: error: unknown option --q1-windw; did you mean --q1-window?", "usage: taxi-rsp run "),
    (["report", "trips.csv", "--out", "r", "--sweeep", "30"],
     "taxi-rsp report: error: unknown option --sweeep; did you mean --sweep?", "usage: taxi-rsp report INPUT --out OUT"),
    (["rnu", "trips.csv"], "taxi-rsp: error: unknown command 'rnu'; did you mean run?", "usage: taxi-rsp COMMAND"),
    (["--debgu", "run", "trips.csv", "--out", "o"], "taxi-rsp: error: unknown option --debgu; did you mean --debug?",
     "usage: taxi-rsp COMMAND"),
    (["run", "trips.csv", "--out", "o", "--format", "jsn"],
     "taxi-rsp run: error: argument --format: invalid choice 'jsn'; did you mean json?", "usage: taxi-rsp run "),
    (["vm", "bild"], "taxi-rsp vm: error: unknown command 'bild'; did you mean build?", "usage: taxi-rsp vm ACTION"),
    (["vm", "build", "--outt", "x"], "taxi-rsp vm build: error: unknown option --outt; did you mean --out?",
     "usage: taxi-rsp vm build [options]"),
])
def test_a_mistake_is_two_lines_of_the_command_it_was_made_in(argv, first, usage, capsys) -> None:
    lines = error_lines(argv, capsys)
    assert len(lines) == 2, lines
    assert lines[0] == first
    assert lines[1].startswith(usage) and lines[1].endswith("--help)"), lines[1]


def test_a_missing_required_option_names_it_with_the_command_usage(capsys) -> None:
    assert error_lines(["run", "trips.csv"], capsys) == [
        "taxi-rsp run: error: the following arguments are required: --out",
        "usage: taxi-rsp run [INPUT] --out OUT [options]  (more: taxi-rsp run --help)"]


def test_nothing_close_gets_no_guess_but_the_list_of_commands(capsys) -> None:
    lines = error_lines(["xyzzy"], capsys)
    assert lines[0].startswith("taxi-rsp: error: unknown command 'xyzzy' (commands: baseline, ")
    assert "did you mean" not in lines[0] and " run," in lines[0]
    assert error_lines(["run", "t.csv", "--out", "o", "--frobnicate"], capsys)[0] == \
        "taxi-rsp run: error: unknown option --frobnicate"


def test_a_stray_word_is_named(capsys) -> None:
    lines = error_lines(["verify", "a", "b", "c"], capsys)
    assert lines[0] == "taxi-rsp verify: error: unexpected argument c"


def test_the_real_command_prints_the_same_two_lines() -> None:
    result = subprocess.run([*CLI, "run", "trips.csv", "--out", "o", "--qeury", "q1"], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "taxi-rsp run: error: unknown option --qeury; did you mean --query?",
        "usage: taxi-rsp run [INPUT] --out OUT [options]  (more: taxi-rsp run --help)"]


def test_suggestions_only_when_close() -> None:
    assert did_you_mean("--partitons", ["--partitions", "--port"]) == "--partitions"
    assert did_you_mean("--zzz", ["--partitions", "--port"]) is None
    assert unknown_arguments_message(["x", "--prot=8"], ["--port"]) == "unknown option --prot; did you mean --port?"
    assert unknown_arguments_message(["x", "y"], ["--port"]) == "unexpected arguments x y"
