"""The fidelity table and the `taxi-rsp synth` command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.data import SynthConfig, generate
from taxi_rsp.data.calibration import load_templates
from taxi_rsp.data.fidelity import WINDOW_ROWS, compare, format_table


@pytest.fixture(scope="module")
def templates():
    return load_templates()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_first_hour_matches_the_real_sample_within_tolerance(tmp_path: Path, templates, seed: int) -> None:
    path = tmp_path / "hour.csv"
    generate(SynthConfig(days=1, minutes=70, seed=seed), path, templates)
    rows = compare(path)
    assert len([r for r in rows if r.ok is not None]) >= len(WINDOW_ROWS)
    failed = [(r.label, r.real, r.synthetic, r.tolerance) for r in rows if r.ok is False]
    assert not failed, format_table(rows)


def test_a_file_that_is_not_like_the_sample_fails(tmp_path: Path, templates) -> None:
    # A fifth of the rate: the rate-driven rows must notice.
    path = tmp_path / "thin.csv"
    generate(SynthConfig(days=1, minutes=70, trips=3_000), path, templates)
    failed = {r.label for r in compare(path) if r.ok is False}
    assert "drop-offs per minute, last 30 min" in failed
    assert "distinct Q1 routes, last 30 min" in failed


def test_the_real_sample_matches_itself(sample_20d: Path) -> None:
    rows = compare(sample_20d)
    window = rows[: len(WINDOW_ROWS)]
    assert all(r.real == r.synthetic and r.ok for r in window)


def test_cli_writes_then_checks(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli.csv"
    assert main(["synth", "--days", "1", "--minutes", "70", "--seed", "4", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "wrote" in said and out.is_file()
    assert f"{sum(1 for _ in out.open()):,} lines" in said
    assert main(["synth", "--check", str(out)]) == 0
    table = capsys.readouterr().out
    assert "real sample" in table and "distinct Q1 routes" in table


def test_cli_trips_and_dirty_options(tmp_path: Path, capsys) -> None:
    out = tmp_path / "small.csv"
    assert main(["synth", "--days", "1", "--trips", "5000", "--dirty", "0", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert 4_500 < len(lines) < 5_500
    assert all(len(line.split(",")) == 17 for line in lines)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["synth", "--days", "1"], "--out"),
        (["synth", "--days", "0", "--out", "x.csv"], "--days"),
        (["synth", "--dirty", "2", "--out", "x.csv"], "--dirty"),
        # A missing folder is created (issue 18); a file where the folder should be is an error.
        (["synth", "--out", "/dev/null/x.csv"], "cannot create folder /dev/null"),
        (["synth", "--check", "/nonexistent-file.csv"], "no such file"),
    ],
)
def test_cli_user_errors(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.slow
def test_full_twenty_days_pass_the_check(tmp_path: Path) -> None:
    out = tmp_path / "synth20.csv"
    assert main(["synth", "--days", "20", "--out", str(out)]) == 0
    assert main(["synth", "--check", str(out)]) == 0


# --- The columnar (polars) pass of the profile equals the Python pass ----------------------

polars = pytest.importorskip("polars")  # noqa: E402  (the [polars] extra; the core has none)

from taxi_rsp.data.file_profile import profile_file, sample_window_end  # noqa: E402
from taxi_rsp.data.profile import profile_python  # noqa: E402
from taxi_rsp.data.profile_polars import profile_polars  # noqa: E402

GOOD = "M1,H1,2013-01-01 00:00:00,2013-01-01 00:05:00,300,1.0,-73.99,40.72,-73.98,40.73,CRD,5.00,0.50,0.50,1.00,0.00,7.00"


def _line(**changes: str) -> str:
    fields = GOOD.split(",")
    for index, value in changes.items():
        fields[int(index[1:])] = value
    return ",".join(fields)


# Lines on which a columnar check could differ from Python's (each alone is plain input).
EDGE_LINES = [
    GOOD,
    "",  # empty line
    "   ",  # whitespace only
    GOOD + ",0.00",  # 18 fields
    ",".join(GOOD.split(",")[:9]),  # truncated
    _line(f0="  "),  # blank medallion
    _line(f0=" M2 "),  # padded medallion: kept raw as a taxi id
    _line(f3=" 2013-01-01 00:06:00 "),  # padded timestamp: stripped
    _line(f3="2013-01-01 24:00:00"),
    _line(f3="2013-02-30 10:00:00"),
    _line(f2="0000-01-01 00:00:00", f3="0000-01-01 00:07:00"),  # year 0: not a Python date
    _line(f3="2013-01-01T00:05:00"),
    _line(f2="2013-01-01 00:09:00", f3="2013-01-01 00:08:00"),  # pickup after drop-off
    _line(f3="2013-01-01 00:04:00"),  # out of order
    _line(f3="2013-01-02 00:04:30"),  # the next day, not whole-minute
    _line(f3="2013-01-01 23:59:59"),  # out of order again
    _line(f6="nan", f14="N/A"),  # bad coordinate and tip: counted, not in the window trips
    _line(f2="2013-01-02 00:01:00", f3="2013-01-02 00:10:00", f10="CSH"),
]


def _both(path: Path, window_end: int = 10**9):
    return profile_python(path, window_end), profile_polars(path, window_end)


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_polars_profile_equals_python_on_edge_lines(tmp_path: Path, ending: str) -> None:
    path = tmp_path / "edges.csv"
    path.write_bytes((ending.join(EDGE_LINES) + ending).encode() + b"M9,H9,2013-01-02 00:11:00,2013-01-02 00:12:00,1,1,\xff\xfe,40.7,-73.9,40.7,CRD,1,0,0,0,0,1")
    python, columnar = _both(path)
    assert columnar is not None
    assert python == columnar
    assert (python.lines, python.malformed, python.out_of_order) == (len(EDGE_LINES) + 1, 10, 3)
    for window_end in (0, 4, 5, 1440 + 4):
        assert _both(path, window_end)[0] == _both(path, window_end)[1]


@pytest.mark.parametrize("bad", [b"\xff\xfe", b"\xe2\x82", b"\xe2\x82\xac\x80", b"\xf0\x9f\x98", b"\xed\xa0\x80",
                                 b"\xc0\xaf", b"\xf4\x90\x80\x80"])
def test_polars_profile_decodes_bad_utf8_like_python(tmp_path: Path, bad: bytes) -> None:
    """Invalid UTF-8 in a medallion (a taxi id of the profile): both passes replace it
    with the same U+FFFD characters."""
    path = tmp_path / "bytes.csv"
    path.write_bytes(GOOD.encode() + b"\n" + b"M" + bad + GOOD.encode()[2:] + b"\n")
    python, columnar = _both(path)
    assert columnar == python and len(python.medallions) == 2


@pytest.mark.parametrize(("line", "left_to_python"), [
    (_line(f3="2013-01-01 00:0\u0664:00"), True),  # an Arabic-Indic digit: Python's \d accepts it
    (GOOD + "\r" + GOOD, True),  # a lone CR: Python's reader starts a new line there
    (GOOD + "\x1f", True),  # the unit separator polars reads lines with
    (_line(f0="M1\u00a0"), False),  # a no-break space: stripped by both (Python's whitespace set)
    (_line(f0="\t"), False),  # a tab medallion is blank for both
])
def test_polars_profile_leaves_unusual_files_to_python(tmp_path: Path, line: str, left_to_python: bool) -> None:
    path = tmp_path / "odd.csv"
    path.write_text(GOOD + "\n" + line + "\n", encoding="utf-8", newline="")
    python, columnar = _both(path)
    assert (columnar is None) == left_to_python
    assert columnar is None or columnar == python
    assert profile_file(path, 10**9) == python


def test_polars_profile_equals_python_on_a_dirty_synthetic_file(tmp_path: Path, templates) -> None:
    path = tmp_path / "dirty.csv"
    generate(SynthConfig(days=2, trips=40_000, dirty=0.05, seed=3), path, templates)
    end = sample_window_end(path)
    python, columnar = _both(path, end)
    assert python.malformed > 500 and python.out_of_order > 50
    assert columnar == python
    assert compare(path) == compare(path)  # deterministic


def test_profile_without_polars_uses_the_python_pass(tmp_path: Path, monkeypatch, sample_20d: Path) -> None:
    """The core install has no polars: the fidelity check runs the Python pass."""
    expected = profile_python(sample_20d, 40)
    monkeypatch.setitem(sys.modules, "polars", None)  # `import polars` now raises ImportError
    assert profile_polars(sample_20d, 40) is None
    assert profile_file(sample_20d, 40) == expected


def test_synth_check_prints_the_same_table_with_and_without_polars(tmp_path: Path, templates) -> None:
    """End to end: `taxi-rsp synth --check` in a process where polars cannot be imported
    (as in the core install) prints the same table as with polars."""
    import os
    import subprocess

    path = tmp_path / "dirty.csv"
    generate(SynthConfig(days=1, minutes=90, dirty=0.05, seed=5), path, templates)
    blocker = tmp_path / "block" / "polars"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('polars blocked for this test')\n")

    def check(extra_path: str | None) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        if extra_path:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [extra_path, env.get("PYTHONPATH")]))
        return subprocess.run([sys.executable, "-m", "taxi_rsp", "synth", "--check", str(path)],
                              capture_output=True, text=True, env=env, timeout=300)

    with_polars, without = check(None), check(str(blocker.parent))
    probe = subprocess.run([sys.executable, "-c", "import polars"], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(blocker.parent)})
    assert probe.returncode != 0 and "blocked" in probe.stderr  # the second run really had no polars
    assert with_polars.stdout and "malformed lines" in with_polars.stdout
    assert (with_polars.returncode, with_polars.stdout) == (without.returncode, without.stdout)
