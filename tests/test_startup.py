"""What `taxi-rsp run` does before its first input line (issue 50: the engine is compared
with the DEBS 2015 winner in CPU seconds): the query parser's tables come from the user's
cache, a run loads neither numpy nor the other commands' modules, and none of that
changes an answer."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from taxi_rsp import cli
from taxi_rsp.environment import cache_dir
from taxi_rsp.lang import parser as query_parser
from taxi_rsp.outputs import delays

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "full2013_first100.csv"
QUERY = "SELECT ?s WHERE { STREAM <http://s> [RANGE 30m] { ?s ?p ?o } FILTER(?o > 3) }"


def _fresh_parser(monkeypatch: pytest.MonkeyPatch, directory: Path | None):
    """The parser built or loaded as a new process would, with its cache in ``directory``."""
    monkeypatch.setattr(query_parser, "cache_dir", lambda: directory)
    return query_parser._parser.__wrapped__()


def test_the_parser_tables_are_cached_and_the_cached_parser_parses_alike(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    built = _fresh_parser(monkeypatch, tmp_path)
    [cached_file] = tmp_path.glob("cqels-lalr-*.pickle")
    loaded = _fresh_parser(monkeypatch, tmp_path)
    assert loaded is not built and loaded.parse(QUERY, start="start") == built.parse(QUERY, start="start")
    assert loaded.options.propagate_positions and list(tmp_path.iterdir()) == [cached_file]  # no temporary left


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_parser(monkeypatch, tmp_path)
    [cached_file] = tmp_path.glob("cqels-lalr-*.pickle")
    good = cached_file.read_bytes()
    cached_file.write_bytes(good[: len(good) // 2])
    assert _fresh_parser(monkeypatch, tmp_path).parse(QUERY, start="start") is not None
    assert query_parser._load_cached(cached_file) is not None  # written anew, whole


@pytest.mark.parametrize("where", ["a-file", "none"])
def test_no_place_for_the_cache_only_means_building_the_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                where: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    directory = blocker / "taxi-rsp" if where == "a-file" else None
    assert _fresh_parser(monkeypatch, directory).parse(QUERY, start="start") is not None
    assert list(tmp_path.iterdir()) == [blocker]


def test_the_cache_folder_follows_xdg_and_home() -> None:
    assert cache_dir({"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/me"}) == Path("/x/cache/taxi-rsp")
    assert cache_dir({"XDG_CACHE_HOME": "relative", "HOME": "/home/me"}) == Path("/home/me/.cache/taxi-rsp")
    assert cache_dir({"HOME": "/home/me"}) == Path("/home/me/.cache/taxi-rsp")


def test_delay_statistics_are_the_same_with_and_without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(50)
    samples = [array("d", (rng.expovariate(20) for _ in range(1001))),
               [None, 3.0, math.nan, 1.0, 2.0, 2.0, 10.0, None],
               [], [None], [0.5]]
    for values in samples:
        by_python = delays.delay_stats(values)
        monkeypatch.setattr(delays, "NUMPY_FROM", 0)
        by_numpy = delays.delay_stats(values)
        monkeypatch.undo()
        assert by_python == by_numpy


def test_a_named_command_is_parsed_by_its_own_parser_alone() -> None:
    assert cli._command_names(cli._parser_for(["run", "in.csv", "--out", "o"])) == ["run"]
    assert cli._command_names(cli._parser_for(["--debug", "synth-iswc", "--help"])) == ["synth-iswc"]
    everything = cli._command_names(cli.build_parser())
    assert "grade" in everything and "vm" in everything
    for argv in (["--help"], [], ["rnu"], ["parsing"], ["--bogus", "run"], ["synth_iswc"]):
        assert cli._command_names(cli._parser_for(argv)) == everything, argv


def test_a_run_loads_neither_numpy_nor_the_other_commands(tmp_path: Path) -> None:
    code = ("import sys, json\nfrom taxi_rsp.cli import main\n"
            f"code = main(['run', {str(SAMPLE)!r}, '--out', {str(tmp_path)!r}, '--no-progress'])\n"
            "print(json.dumps([code, sorted(sys.modules)]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    code, loaded = json.loads(result.stdout.splitlines()[-1])
    assert code == 0
    assert [m for m in loaded if m == "numpy" or m.startswith(("taxi_rsp.grading", "taxi_rsp.verify",
                                                               "taxi_rsp.commands.grade"))] == []
