"""Errors a person can act on (issue 8 §5), provoked for real on subprocesses of the CLI:
a full file system, a file size limit, /dev/full, unreadable and changing inputs, a real
EIO at the start and in the middle of a run. Each gives one line on stderr and exit code
2 (``--debug`` adds the traceback) and leaves nothing that looks like a complete result.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pty
import resource
import shutil
import signal
import subprocess
import sys
import termios
import time
import tty
from collections.abc import Iterator
from pathlib import Path

import pytest

GOOD = ("07290D3599E7A0D62097A346EFCC1FB5,E7750A37CAB07D0DFF0AF7E3573AC141,2013-01-01 00:00:00,"
        "2013-01-01 00:02:00,120,0.44,-73.956528,40.716976,-73.962440,40.715008,CSH,3.50,0.50,0.50,0.00,0.00,4.50")
# A rejected line costs little to process but is copied into rejects.csv: the cheap way
# to write many bytes.
BAD = "x" * 120
CLI = [sys.executable, "-m", "taxi_rsp.cli"]


def good_lines(minutes: int) -> list[str]:
    """One valid trip per minute from 2013-01-01 00:00, in time order."""
    lines = []
    for minute in range(minutes):
        day, rest = divmod(minute, 1440)
        stamp = f"2013-01-{1 + day:02d} {rest // 60:02d}:{rest % 60:02d}:00"
        lines.append(GOOD.replace("2013-01-01 00:00:00", stamp).replace("2013-01-01 00:02:00", stamp))
    return lines


def cli(*args: str, prefix: tuple[str, ...] = (), **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, *CLI, *args], capture_output=True, text=True, timeout=300, check=False,
                          **kwargs)


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    err = result.stderr.strip()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("taxi-rsp ") and ": error: " in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def assert_nothing_complete(out: Path, *names: str) -> None:
    """No summary, no result under its final name, no partial file left behind."""
    if not out.exists():
        return
    left = sorted(p.name for p in out.iterdir())
    assert "summary.json" not in left and not [n for n in left if n.endswith(".partial")], left
    assert not set(names) & set(left), left


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (needs root and permission to mount)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                              capture_output=True, text=True, check=False)
    except FileNotFoundError:
        pytest.skip("no mount command")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


# --- Output ----------------------------------------------------------------------------------

def test_full_file_system(tmp_path: Path, tiny_fs: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(5) + [BAD] * 2000) + "\n")  # ~240 KB of rejects
    out = tiny_fs / "out"
    result = cli("run", str(data), "--out", str(out), "--query", "q1", "--query", "q2")
    assert_one_line_error(result, f"cannot write {out / 'rejects.csv'}: No space left on device")
    assert_nothing_complete(out, "q1.csv", "q2.csv", "rejects.csv")
    # The space is given back: the same folder takes a small run afterwards.
    data.write_text("\n".join(good_lines(5)) + "\n")
    assert cli("run", str(data), "--out", str(out)).returncode == 0
    assert json.loads((out / "summary.json").read_text())["accepted"] == 5


def test_file_size_limit(tmp_path: Path) -> None:
    """RLIMIT_FSIZE (ulimit -f): EFBIG instead of a SIGXFSZ death with partial files."""
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(5) + [BAD] * 2000) + "\n")
    out = tmp_path / "out"
    limit = 64 * 1024

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = cli("run", str(data), "--out", str(out), preexec_fn=limit_file_size)
    assert_one_line_error(result, "rejects.csv: File too large")
    assert_nothing_complete(out, "q1.csv", "rejects.csv")


def test_dev_full(tmp_path: Path) -> None:
    """The partial file is a link to /dev/full: every write fails with ENOSPC."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(600)) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".q1.csv.partial").symlink_to("/dev/full")
    result = cli("run", str(data), "--out", str(out))
    assert_one_line_error(result, f"cannot write {out / 'q1.csv'}: No space left on device")
    assert_nothing_complete(out, "q1.csv", "rejects.csv")


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(600)) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".q1.csv.partial").symlink_to("/dev/full")
    result = cli("--debug", "run", str(data), "--out", str(out))
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "OSError: [Errno 28]" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("taxi-rsp run: error: cannot write")


# --- Input ------------------------------------------------------------------------------------

def test_directory_as_input(tmp_path: Path) -> None:
    result = cli("run", str(tmp_path), "--out", str(tmp_path / "out"))
    assert_one_line_error(result, "is a directory")
    assert not (tmp_path / "out").exists()


def without_read_override() -> tuple[str, ...]:
    """A command prefix under which a mode-000 file is unreadable, even for root."""
    if os.geteuid() != 0:
        return ()
    capsh = shutil.which("capsh")
    if capsh is None:
        pytest.skip("running as root without capsh: cannot make a file unreadable")
    # Root reads anything: drop the capabilities that allow it for the child.
    return (capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$@"', "-")


@pytest.mark.parametrize("command", ["run", "baseline"])
def test_unreadable_input(tmp_path: Path, command: str) -> None:
    data = tmp_path / "in.csv"
    data.write_text(GOOD + "\n")
    data.chmod(0)
    result = cli(command, str(data), "--out", str(tmp_path / "out"), prefix=without_read_override())
    assert_one_line_error(result, f"cannot read input {data}: Permission denied")
    assert not (tmp_path / "out").exists()


def test_eio_at_the_first_read(tmp_path: Path) -> None:
    """/proc/self/mem opens fine and fails with a real EIO on read (address 0 is unmapped)."""
    out = tmp_path / "out"
    result = cli("run", "/proc/self/mem", "--out", str(out))
    assert_one_line_error(result, "reading /proc/self/mem failed after line 0: Input/output error")
    assert_nothing_complete(out, "q1.csv", "rejects.csv")


@contextlib.contextmanager
def raw_pty() -> Iterator[tuple[int, str]]:
    """A pseudo-terminal in raw mode (bytes pass unchanged, no echo): (master fd, slave path)."""
    master, slave = pty.openpty()
    try:
        tty.setraw(slave, termios.TCSANOW)
        yield master, os.ttyname(slave)
    finally:
        os.close(slave)
        with contextlib.suppress(OSError):
            os.close(master)


def test_eio_in_the_middle_of_a_run(tmp_path: Path) -> None:
    """Reading a terminal whose other side has gone fails with a real EIO: the run has
    already written results, which must go."""
    out = tmp_path / "out"
    with raw_pty() as (master, slave_path):
        process = subprocess.Popen([*CLI, "run", slave_path, "--out", str(out)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in good_lines(200):
            os.write(master, (line + "\n").encode())
        deadline = time.time() + 120
        while not (out / ".q1.csv.partial").exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1)  # let it read what was written: the error comes after real lines
        os.close(master)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"reading {slave_path} failed after line " in err and "Input/output error" in err, err
    assert int(err.split("after line ")[1].split(":")[0].replace(",", "")) > 0
    assert_nothing_complete(out, "q1.csv", "rejects.csv")


def test_input_truncated_while_read(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(3000) * 4) + "\n")
    out = tmp_path / "out"
    process = subprocess.Popen([*CLI, "run", str(data), "--out", str(out), "--query", "q2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out / ".q2.csv.partial").exists() and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    size = data.stat().st_size
    os.truncate(data, size // 20)  # most likely behind the reader already: it stops at once
    _, err = process.communicate(timeout=300)
    assert process.returncode == 2, err
    assert "changed while it was read" in err and f"{size:,} -> {size // 20:,} bytes" in err, err
    assert len(err.strip().splitlines()) == 1
    assert_nothing_complete(out, "q2.csv", "rejects.csv")


def test_fifo_whose_writer_dies_mid_line(tmp_path: Path) -> None:
    """A pipe is a stream, not an error: the cut line is the last line (SPEC §1.1, no
    final newline) and is rejected; the run completes and accounts for every line."""
    fifo = tmp_path / "trips.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    process = subprocess.Popen([*CLI, "run", str(fifo), "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    payload = "\n".join(good_lines(3)) + "\n" + GOOD[:70]
    script = f"import sys, time\nsys.stdout.write({payload!r}); sys.stdout.flush(); time.sleep(600)"
    with fifo.open("w") as pipe:  # blocks until the run opens the FIFO; closed here, so the writer
        writer = subprocess.Popen([sys.executable, "-c", script], stdout=pipe)  # holds the only end
    time.sleep(1)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines_read"] == 4 and summary["accepted"] == 3
    assert summary["rejected"]["field_count"] == 1
    with (out / "rejects.csv").open(newline="") as handle:
        assert list(csv.reader(handle))[1] == ["4", "field_count", GOOD[:70]]


# --- Queries and windows --------------------------------------------------------------------

def test_unsupported_query_feature(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text(GOOD + "\n")
    query = tmp_path / "path.cqels"
    query.write_text("SELECT ?t WHERE { STREAM <http://debs2015.org/streams/trips> [RANGE 30m] "
                     "{ ?t a+ ?c } }\n")
    result = cli("run", str(data), "--out", str(tmp_path / "out"), "--query", str(query))
    assert_one_line_error(result, "path.cqels:1:19", "static data only")
    assert not (tmp_path / "out" / "summary.json").exists()


def test_window_longer_than_the_data_warns(tmp_path: Path) -> None:
    """A correct result per SPEC, so exit 0, but one warning line (docs/semantics.md)."""
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(20)) + "\n")
    out = tmp_path / "out"
    result = cli("run", str(data), "--out", str(out), "--query", "q1", "--query", "q2", "--q2-windows", "15,30")
    assert result.returncode == 0, result.stderr
    warnings = result.stderr.strip().splitlines()
    message = "window 30 min is longer than the data (19 min of drop-offs): no trip ever left it"
    assert warnings == [f"taxi-rsp run: warning: {name}: {message}" for name in ("q1", "q2")], warnings
    assert len(json.loads((out / "summary.json").read_text())["warnings"]) == 2


def test_only_bad_lines_is_an_error_naming_the_reasons(tmp_path: Path) -> None:
    """A run in which every line was rejected exits non-zero and leaves nothing that looks
    like a result (issue 52): the rejects with their reasons, no outputs, no summary."""
    data = tmp_path / "in.csv"
    data.write_text(BAD + "\n")
    out = tmp_path / "out"
    result = cli("run", str(data), "--out", str(out))
    assert_one_line_error(result, f"no line of {data} was accepted: line 1: field_count; see {out / 'rejects.csv'} "
                                  "(no result or summary was written)")
    assert sorted(p.name for p in out.iterdir()) == ["rejects.csv"]
    assert "field_count" in (out / "rejects.csv").read_text()


# --- The Spark baseline -----------------------------------------------------------------------

def test_baseline_without_java(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text(GOOD + "\n")
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java on it
    result = cli("baseline", str(data), "--out", str(tmp_path / "out"), env=env)
    assert_one_line_error(result, "Spark needs Java", "apt-get install")
    assert not (tmp_path / "out").exists()


def test_baseline_directory_as_input(tmp_path: Path) -> None:
    result = cli("baseline", str(tmp_path), "--out", str(tmp_path / "out"))
    assert_one_line_error(result, "is not a file")
