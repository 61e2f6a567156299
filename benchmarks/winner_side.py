"""The DEBS 2015 winner's C++ solution and ``taxi-rsp run`` side by side (issue 50):
CPU seconds, wall seconds, peak RSS and the delay of each output line, alternated runs.

    .venv/bin/python benchmarks/winner_side.py --winner /work/winner/debs cache/s300k.csv \\
        --rounds 2 --json /tmp/winner_side.json

The winner (``aimylos/debs-grand-challenge-2015``) is built outside this repository
(``docs/performance.md``, "Against the DEBS 2015 winner"); this script only runs the binary
it is given, as ``WINNER INPUT OUT1 OUT2``. What the script relies on, read from its sources:

* **Input.** The winner parses each line at fixed byte offsets (32-character medallion and
  hack licence, the drop-off time at byte 86, the trip time at byte 106), reads numbers by
  skipping the decimal point (coordinates must have 6 decimals, fare and tip 2), and finds a
  line's end by jumping 180 bytes and then looking for LF: a short or damaged line corrupts
  its neighbours or crashes it. So both sides read a *cleaned copy*: the lines taxi-rsp's own
  Feeder accepts (SPEC §1.1, ``taxi_rsp.feeder.Feeder``) that also have the winner's layout
  (:func:`winner_layout_ok`). Every line of the copy is accepted by both; the counts of what
  was left out are printed. (``--taxi-input original`` gives taxi-rsp the file as it is.)
* **Threads.** One process always computes both queries: a disk reader, a line splitter, a
  line parser, a Q1 thread and a Q2 thread, started in that order, with the records' ring
  buffer waiting for *both* query threads before it reuses a slot. There is no option to run
  one query alone. So the Q1 and Q2 workloads compare taxi-rsp's ``--query q1`` (``q2``)
  with the winner's whole process minus the *other* query's thread: its "share" of that
  query (input threads + that query's thread). The per-thread CPU is sampled from
  ``/proc/PID/task/TID/stat`` while it runs (a thread's figure stops when it exits, so the
  sample lags by at most ``--poll`` seconds of that thread's CPU; the process total is exact,
  from ``wait4``). The ratio against the winner's whole process is printed too.
* **Delay.** The last column of each winner output line is microseconds of wall clock
  (``CLOCK_REALTIME``) from when its line splitter started on the triggering line to the
  print; taxi-rsp's is milliseconds from the Feeder's read of the line (SPEC §5). Both are
  converted to milliseconds.

CPU seconds are user + system of the child process (``os.wait4``; interpreter start-up and
imports included on the taxi-rsp side, allocation of the winner's static tables on the
other). Peak RSS is the largest ``VmHWM`` sampled from ``/proc`` (``ru_maxrss`` is not used:
Linux carries the parent's figure over fork and exec). Each round runs, per workload, the
winner and taxi-rsp back to back, the order swapped every round; the table shows medians
over the rounds, and ratios of medians taken in this one run are the only evidence: the
host's speed swings between phases (``docs/performance.md``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from taxi_rsp.procfs import peak_rss_kib

ROOT = Path(__file__).resolve().parents[1]

# workload -> taxi-rsp queries; the winner computes both in every run
WORKLOADS: dict[str, tuple[str, ...]] = {"mixed": ("q1", "q2"), "q1": ("q1",), "q2": ("q2",)}

# The winner's LineSplitter jumps MIN_LINE_LENGTH (180) bytes before it looks for LF.
WINNER_MIN_LINE = 180

# Threads of the winner's process in creation order (main.cc, startThreads), which is
# ascending thread id order while the kernel's ids do not wrap.
WINNER_THREADS = ("main", "disk_reader", "line_splitter", "line_parser", "q1", "q2")

_HEX32 = rb"[0-9A-F]{32}"
_STAMP = rb"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}"
_COORD = rb"-?[0-9]+\.[0-9]{6}"
_MONEY = rb"-?[0-9]+\.[0-9]{2}"
_ANY = rb"[^,\n]*"
# The fields the winner reads at fixed offsets or digit by digit, with the widths it
# assumes; the fields it skips (distance, payment, surcharge, mta tax, tolls, total) may
# hold anything but a comma. 17 fields, an optional CR, then LF or the end of the data.
_WINNER_LINE = re.compile(
    rb",".join([_HEX32, _HEX32, _STAMP, _STAMP, rb"[0-9]+", _ANY, _COORD, _COORD, _COORD, _COORD,
                _ANY, _MONEY, _ANY, _ANY, _MONEY, _ANY, rb"[^,\r\n]*"]) + rb"\r?\n?\Z")


def winner_layout_ok(line: bytes) -> bool:
    """Whether the winner's parser reads ``line`` (one physical line, its LF included or
    not) as written: the fixed layout of ``_WINNER_LINE`` and at least 180 bytes before
    the line end.

    >>> good = (b"E2CC37564B4C2068163AC6A5367962B1,81DF3FD21F77CADB5116F552522181CF,2013-01-01 00:00:00,"
    ...         b"2013-01-01 00:02:00,120,0.44,-73.993180,40.719426,-73.991977,40.723797,CSH,4.00,0.50,0.50,"
    ...         b"0.00,0.00,5.00\\n")
    >>> winner_layout_ok(good), winner_layout_ok(good.replace(b"40.719426", b"40.72"))
    (True, False)
    """
    body = line.rstrip(b"\r\n")
    return len(body) >= WINNER_MIN_LINE and _WINNER_LINE.match(line) is not None


def physical_lines(path: Path) -> Iterator[bytes]:
    """The physical lines of ``path`` as SPEC §1 counts them (split after each LF; a
    last line without LF is a line), each with its line end."""
    with open(path, "rb") as handle:
        yield from handle


def feeder_rejected_lines(path: Path) -> set[int]:
    """Line numbers (1-based) that taxi-rsp's Feeder rejects in ``path`` (SPEC §1.1): it
    reads the file once, as ``taxi-rsp run`` does, and its rejects file gives the numbers."""
    from taxi_rsp.feeder import Feeder
    from taxi_rsp.rdf.dictionary import Dictionary

    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as rejects:
        feeder = Feeder(path, Dictionary(), rejects=rejects, read=())
        for _ in feeder:
            pass
        rejects.seek(0)
        rows = csv.reader(rejects)
        next(rows)  # header
        return {int(row[0]) for row in rows}


@dataclass
class CleanCounts:
    """What the cleaned copy kept of its source."""

    lines: int = 0
    rejected_by_taxi_rsp: int = 0
    off_winner_layout: int = 0
    kept: int = 0


def clean_lines(lines: Iterable[bytes], rejected: set[int], counts: CleanCounts) -> Iterator[bytes]:
    """The lines (1-based numbers) not in ``rejected`` whose layout the winner reads, each
    ending in LF (one is added to a last line without it); ``counts`` is updated."""
    for number, line in enumerate(lines, 1):
        counts.lines += 1
        if number in rejected:
            counts.rejected_by_taxi_rsp += 1
        elif not winner_layout_ok(line):
            counts.off_winner_layout += 1
        else:
            counts.kept += 1
            yield line if line.endswith(b"\n") else line + b"\n"


def write_clean_copy(source: Path, target: Path, rejected: set[int] | None = None) -> CleanCounts:
    """Write to ``target`` the lines of ``source`` both sides accept (:func:`clean_lines`),
    ``rejected`` defaulting to what taxi-rsp's Feeder rejects in ``source``."""
    if rejected is None:
        rejected = feeder_rejected_lines(source)
    counts = CleanCounts()
    with open(target, "wb") as out:
        out.writelines(clean_lines(physical_lines(source), rejected, counts))
    return counts


# --- delays -------------------------------------------------------------------------

def delays_ms(lines: Iterable[str], unit_ms: float) -> list[float]:
    """The last comma-separated field of each output line, times ``unit_ms`` (1 for
    taxi-rsp's milliseconds, 0.001 for the winner's microseconds). A header (a last field
    that is no number), empty lines and ``NULL`` delays (taxi-rsp's lines triggered by an
    expiry, SPEC §5, which the winner folds into the next arrival's line) are skipped.

    >>> delays_ms(["a,b,0.250", "a,b,NULL", "", "x,delay"], 1.0), delays_ms(["a,b,157\\n"], 0.001)
    ([0.25], [0.157])
    """
    values: list[float] = []
    for line in lines:
        last = line.rstrip("\r\n").rpartition(",")[2].strip()
        if not last or last == "NULL":
            continue
        try:
            values.append(float(last) * unit_ms)
        except ValueError:
            continue
    return values


def delay_file_ms(path: Path, unit_ms: float) -> list[float]:
    """:func:`delays_ms` of the lines of ``path`` (empty when it does not exist)."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8", errors="replace") as handle:
        return delays_ms(handle, unit_ms)


@dataclass
class DelayStats:
    """Mean and 99th percentile (nearest rank) of a query's delays, in ms."""

    lines: int
    mean_ms: float | None
    p99_ms: float | None


def delay_stats(values: Sequence[float]) -> DelayStats:
    """Mean and nearest-rank p99 of ``values``.

    >>> delay_stats([1.0] * 99 + [100.0])
    DelayStats(lines=100, mean_ms=1.99, p99_ms=1.0)
    >>> delay_stats([])
    DelayStats(lines=0, mean_ms=None, p99_ms=None)
    """
    if not values:
        return DelayStats(0, None, None)
    ordered = sorted(values)
    rank = math.ceil(0.99 * len(ordered))
    return DelayStats(len(ordered), sum(ordered) / len(ordered), ordered[rank - 1])


# --- process measurement ----------------------------------------------------------------

@dataclass
class ProcessRun:
    """One measured child process."""

    argv: list[str]
    pid: int
    returncode: int
    cpu_s: float
    user_s: float
    system_s: float
    wall_s: float
    peak_rss_mib: float | None
    # thread id -> its last sampled user + system CPU seconds
    thread_cpu_s: dict[int, float] = field(default_factory=dict)


def _thread_cpu_ticks(stat_text: str) -> int:
    """utime + stime (fields 14 and 15) of a ``/proc/.../stat`` line, in clock ticks; the
    command name in parentheses may hold spaces, so fields are counted after its ')'."""
    rest = stat_text.rpartition(")")[2].split()
    return int(rest[11]) + int(rest[12])


def _cmdline(pid: int | str) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _sample(pid: int, ticks: dict[int, int]) -> int | None:
    """Update ``ticks`` with each thread's CPU ticks of process ``pid``; its VmHWM in KiB,
    or None while it has not yet exec'd (a child between fork and exec shows this
    process's memory) or when /proc cannot tell."""
    if _cmdline(pid) in (None, _cmdline("self")):
        return None
    task = f"/proc/{pid}/task"
    try:
        tids = os.listdir(task)
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"{task}/{tid}/stat", encoding="ascii", errors="replace") as handle:
                value = _thread_cpu_ticks(handle.read())
        except (OSError, IndexError, ValueError):
            continue
        ticks[int(tid)] = max(value, ticks.get(int(tid), 0))
    return peak_rss_kib(pid)


def measure_process(argv: Sequence[str], *, cwd: Path, log: Path, poll_s: float = 0.02,
                    env: dict[str, str] | None = None) -> ProcessRun:
    """Run ``argv`` in ``cwd`` (stdout and stderr into ``log``) and measure it: CPU from
    ``os.wait4``'s rusage of exactly this child, wall time around it, and per-thread CPU
    and peak RSS sampled from /proc every ``poll_s`` seconds while it runs."""
    ticks: dict[int, int] = {}
    peak_kib = 0
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        hwm = _sample(proc.pid, ticks)
        if hwm is not None:
            peak_kib = max(peak_kib, hwm)
        time.sleep(poll_s)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    hertz = os.sysconf("SC_CLK_TCK")
    return ProcessRun(
        argv=list(argv), pid=proc.pid, returncode=proc.returncode, cpu_s=usage.ru_utime + usage.ru_stime,
        user_s=usage.ru_utime, system_s=usage.ru_stime, wall_s=wall,
        peak_rss_mib=peak_kib / 1024 if peak_kib else None,
        thread_cpu_s={tid: count / hertz for tid, count in sorted(ticks.items())})


def winner_thread_roles(pid_main: int, thread_cpu_s: dict[int, float]) -> dict[str, float] | None:
    """The winner's thread CPU by role (``WINNER_THREADS``), or None when the threads seen
    are not the six expected in ascending id order after the main thread's (a wrap of the
    kernel's ids, a thread too short-lived to sample, or another build of the winner).

    >>> winner_thread_roles(10, {10: 0.1, 11: 1.0, 12: 0.5, 13: 0.7, 14: 2.0, 15: 3.0})["q2"]
    3.0
    >>> winner_thread_roles(10, {10: 0.1, 11: 1.0, 4: 0.5, 13: 0.7, 14: 2.0, 15: 3.0}) is None
    True
    """
    others = sorted(tid for tid in thread_cpu_s if tid != pid_main)
    if pid_main not in thread_cpu_s or len(others) != len(WINNER_THREADS) - 1 or others[0] < pid_main:
        return None
    return dict(zip(WINNER_THREADS, (thread_cpu_s[t] for t in [pid_main, *others]), strict=True))


# --- the two sides ----------------------------------------------------------------------

@dataclass
class SideRun:
    """One run of one side on one workload, with what the table needs."""

    side: str  # "winner" or "taxi-rsp"
    workload: str
    round: int
    process: ProcessRun
    cpu_s: float  # the CPU compared: the whole process, or the winner's share of one query
    delays: dict[str, DelayStats]
    output_lines: dict[str, int]
    threads: dict[str, float] | None = None
    compared: str = "whole process"  # what ``cpu_s`` is
    summary_cpu_s: float | None = None  # taxi-rsp's own summary.json cpu_seconds
    summary_rejected: int | None = None


def winner_share(workload: str, total_cpu_s: float, threads: dict[str, float] | None) -> float | None:
    """The winner CPU compared with taxi-rsp's on ``workload``: the whole process for
    Mixed; for one query the process minus the other query's thread (None when the
    threads could not be told apart).

    >>> winner_share("q1", 8.0, {"q1": 2.5, "q2": 2.6}), winner_share("mixed", 8.0, None)
    (5.4, 8.0)
    """
    if workload == "mixed":
        return total_cpu_s
    if threads is None:
        return None
    other = "q2" if workload == "q1" else "q1"
    return round(total_cpu_s - threads[other], 6)


def share_label(workload: str) -> str:
    """What the winner's CPU compared on a one-query workload is."""
    return f"process − {'Q2' if workload == 'q1' else 'Q1'} thread"


def run_winner(binary: Path, data: Path, workload: str, round_number: int, scratch: Path,
               poll_s: float) -> SideRun:
    """The winner on ``data`` (both queries, always), measured."""
    out = scratch / f"winner_{workload}_{round_number}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    process = measure_process([str(binary), str(data), str(out / "q1.out"), str(out / "q2.out")],
                              cwd=out, log=out / "log.txt", poll_s=poll_s)
    if process.returncode != 0:
        raise RuntimeError(f"the winner exited with {process.returncode}: see {out / 'log.txt'}")
    threads = winner_thread_roles(process.pid, process.thread_cpu_s)
    if threads is not None:
        threads["input"] = round(process.cpu_s - threads["q1"] - threads["q2"], 6)
    share = winner_share(workload, process.cpu_s, threads)
    compared = "whole process" if workload == "mixed" or share is None else share_label(workload)
    delays, counts = {}, {}
    for query in ("q1", "q2"):
        values = delay_file_ms(out / f"{query}.out", 0.001)
        delays[query], counts[query] = delay_stats(values), len(values)
    return SideRun("winner", workload, round_number, process, share if share is not None else process.cpu_s,
                   delays, counts, threads, compared)


def taxi_rsp_command() -> list[str]:
    """The installed ``taxi-rsp`` next to this interpreter, else ``python -m taxi_rsp``."""
    script = Path(sys.executable).with_name("taxi-rsp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "taxi_rsp"]


def run_taxi_rsp(command: Sequence[str], data: Path, workload: str, round_number: int, scratch: Path,
                 poll_s: float) -> SideRun:
    """``taxi-rsp run`` of the workload's queries on ``data``, measured."""
    out = scratch / f"taxi_rsp_{workload}_{round_number}"
    argv = [*command, "run", str(data), "--out", str(out), "--force", "--no-progress"]
    for query in WORKLOADS[workload]:
        argv += ["--query", query]
    scratch.mkdir(parents=True, exist_ok=True)
    log = scratch / f"taxi_rsp_{workload}_{round_number}.log"
    process = measure_process(argv, cwd=scratch, log=log, poll_s=poll_s)
    if process.returncode != 0:
        raise RuntimeError(f"taxi-rsp exited with {process.returncode}: see {log}")
    summary = json.loads((out / "summary.json").read_text())
    delays, counts = {}, {}
    for query in WORKLOADS[workload]:
        values = delay_file_ms(out / f"{query}.csv", 1.0)
        delays[query], counts[query] = delay_stats(values), len(values)
    rejected = summary.get("rejected")
    return SideRun("taxi-rsp", workload, round_number, process, process.cpu_s, delays, counts,
                   summary_cpu_s=summary.get("cpu_seconds"),
                   summary_rejected=sum(rejected.values()) if isinstance(rejected, dict) else rejected)


# --- the table --------------------------------------------------------------------------

@dataclass
class Row:
    """One workload's medians over the rounds."""

    workload: str
    winner_cpu_s: float  # compared: whole process (Mixed) or the query's share (``winner_compared``)
    winner_compared: str
    winner_process_cpu_s: float
    taxi_rsp_cpu_s: float
    ratio: float  # taxi-rsp ÷ winner (compared)
    ratio_whole: float  # taxi-rsp ÷ the winner's whole process
    winner_wall_s: float
    taxi_rsp_wall_s: float
    winner_rss_mib: float | None
    taxi_rsp_rss_mib: float | None
    winner_threads: dict[str, float] | None
    delays: dict[str, dict[str, DelayStats]]  # query -> side -> medians of mean and p99


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _median_delays(runs: Sequence[SideRun], query: str) -> DelayStats:
    stats = [run.delays[query] for run in runs if query in run.delays]
    return DelayStats(int(_median(s.lines for s in stats) or 0), _median(s.mean_ms for s in stats),
                      _median(s.p99_ms for s in stats))


def summarise(runs: Sequence[SideRun]) -> list[Row]:
    """One row per workload (in ``WORKLOADS`` order): medians over its rounds of each side."""
    rows = []
    for workload in WORKLOADS:
        winner = [r for r in runs if r.workload == workload and r.side == "winner"]
        taxi = [r for r in runs if r.workload == workload and r.side == "taxi-rsp"]
        if not winner or not taxi:
            continue
        winner_whole = statistics.median(r.process.cpu_s for r in winner)
        kinds = {r.compared for r in winner}
        if len(kinds) == 1:
            compared, winner_cpu = kinds.pop(), statistics.median(r.cpu_s for r in winner)
        else:  # some rounds' threads could not be told apart: compare whole processes
            compared, winner_cpu = "whole process; threads not told apart in every round", winner_whole
        taxi_cpu = statistics.median(r.cpu_s for r in taxi)
        threads = None
        if all(r.threads is not None for r in winner):
            threads = {name: statistics.median(r.threads[name] for r in winner)  # type: ignore[index]
                       for name in (*WINNER_THREADS, "input")}
        rows.append(Row(
            workload=workload, winner_cpu_s=winner_cpu, winner_compared=compared,
            winner_process_cpu_s=winner_whole,
            taxi_rsp_cpu_s=taxi_cpu, ratio=taxi_cpu / winner_cpu, ratio_whole=taxi_cpu / winner_whole,
            winner_wall_s=statistics.median(r.process.wall_s for r in winner),
            taxi_rsp_wall_s=statistics.median(r.process.wall_s for r in taxi),
            winner_rss_mib=_median(r.process.peak_rss_mib for r in winner),
            taxi_rsp_rss_mib=_median(r.process.peak_rss_mib for r in taxi),
            winner_threads=threads,
            delays={q: {"winner": _median_delays(winner, q), "taxi-rsp": _median_delays(taxi, q)}
                    for q in WORKLOADS[workload]}))
    return rows


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _delay_cell(stats: dict[str, DelayStats], side: str) -> str:
    return " ; ".join(f"{q}: {_num(s[side].mean_ms, 3)} / {_num(s[side].p99_ms, 3)}" for q, s in stats.items())


LABELS = {"mixed": "Mixed (Q1 + Q2)", "q1": "Q1", "q2": "Q2"}


def format_table(rows: Sequence[Row]) -> str:
    """The Markdown table of ``rows``: per workload the median CPU of each side and the
    ratio taxi-rsp ÷ winner, then wall time, peak RSS and delays."""
    lines = [
        "| workload | winner CPU s | taxi-rsp CPU s | taxi-rsp ÷ winner | ÷ winner's whole process "
        "| wall s winner / taxi-rsp | peak RSS MiB winner / taxi-rsp "
        "| delay mean / p99 ms, winner | delay mean / p99 ms, taxi-rsp |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {LABELS[row.workload]} | {_num(row.winner_cpu_s)} ({row.winner_compared}) | {_num(row.taxi_rsp_cpu_s)} "
            f"| **{row.ratio:.1f}×** | {row.ratio_whole:.1f}× "
            f"| {_num(row.winner_wall_s)} / {_num(row.taxi_rsp_wall_s)} "
            f"| {_num(row.winner_rss_mib, 0)} / {_num(row.taxi_rsp_rss_mib, 0)} "
            f"| {_delay_cell(row.delays, 'winner')} | {_delay_cell(row.delays, 'taxi-rsp')} |")
    threads = [r for r in rows if r.winner_threads]
    if threads:
        lines.append("")
        lines.append("Winner thread CPU s (medians; input = process − Q1 − Q2 threads): " + "; ".join(
            f"{LABELS[r.workload]} run: " + ", ".join(
                f"{name} {r.winner_threads[name]:.2f}"  # type: ignore[index]
                for name in ("input", "disk_reader", "line_splitter", "line_parser", "q1", "q2"))
            for r in threads))
    return "\n".join(lines)


def git_commit() -> str:
    """``git rev-parse --short HEAD`` of this checkout, ``+dirty`` when it has changes."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=False).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, check=False).stdout.strip()
    return head + ("+dirty" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path, help="taxi trip CSV")
    parser.add_argument("--winner", type=Path, required=True, help="the winner's built binary")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workloads", default="mixed,q1,q2", help="comma-separated, of mixed, q1, q2")
    parser.add_argument("--taxi-input", choices=("cleaned", "original"), default="cleaned",
                        help="what taxi-rsp reads: the winner's cleaned copy (default) or the input as it is")
    parser.add_argument("--scratch", type=Path, help="folder for the cleaned copy and outputs (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--poll", type=float, default=0.02, help="seconds between /proc samples")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every run and the table as JSON")
    options = parser.parse_args(argv)
    workloads = [w.strip() for w in options.workloads.split(",") if w.strip()]
    if unknown := [w for w in workloads if w not in WORKLOADS]:
        parser.error(f"unknown workloads {unknown}; known: {', '.join(WORKLOADS)}")
    winner = options.winner.resolve()
    if not os.access(winner, os.X_OK):
        parser.error(f"{winner} is not an executable")
    command_line = " ".join([Path(sys.executable).name, *sys.argv]) if argv is None else " ".join(argv)
    load_start = os.getloadavg()
    commit = git_commit()
    scratch = options.scratch or Path(tempfile.mkdtemp(prefix="winner_side_"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        cleaned = scratch / "cleaned.csv"
        started = time.perf_counter()
        counts = write_clean_copy(options.input.resolve(), cleaned)
        print(f"cleaned copy: {counts.kept:,} of {counts.lines:,} lines kept ({counts.rejected_by_taxi_rsp:,} "
              f"rejected by taxi-rsp's Feeder, {counts.off_winner_layout:,} accepted but off the winner's layout) "
              f"in {time.perf_counter() - started:.1f} s", flush=True)
        taxi_input = cleaned if options.taxi_input == "cleaned" else options.input.resolve()
        taxi = taxi_rsp_command()
        runs: list[SideRun] = []
        for round_number in range(1, options.rounds + 1):
            for workload in workloads:
                order = ("winner", "taxi-rsp") if round_number % 2 else ("taxi-rsp", "winner")
                for side in order:
                    if side == "winner":
                        run = run_winner(winner, cleaned, workload, round_number, scratch, options.poll)
                    else:
                        run = run_taxi_rsp(taxi, taxi_input, workload, round_number, scratch, options.poll)
                    runs.append(run)
                    print(f"round {round_number} {workload:5} {side:8} cpu={run.process.cpu_s:.2f}s "
                          f"compared={run.cpu_s:.2f}s wall={run.process.wall_s:.2f}s "
                          f"rss={_num(run.process.peak_rss_mib, 0)}MiB "
                          + " ".join(f"{q}:mean={_num(d.mean_ms, 3)}ms,p99={_num(d.p99_ms, 3)}ms,lines={d.lines}"
                                     for q, d in run.delays.items())
                          + (f" threads={ {k: round(v, 2) for k, v in run.threads.items()} }" if run.threads else "")
                          + (f" summary_cpu={run.summary_cpu_s}s rejected={run.summary_rejected}"
                             if run.side == "taxi-rsp" else ""), flush=True)
        load_end = os.getloadavg()
        rows = summarise(runs)
        print()
        print(f"command: {command_line}")
        print(f"taxi-rsp commit: {commit}; winner: {winner}; taxi-rsp: {' '.join(taxi)}")
        print(f"input: {options.input} ({counts.lines:,} lines); both sides read "
              f"{'the cleaned copy' if options.taxi_input == 'cleaned' else 'the winner: the cleaned copy; taxi-rsp: the input'}"
              f" ({counts.kept:,} lines)")
        print("load average (1/5/15 min) at start: " + " ".join(f"{x:.2f}" for x in load_start)
              + "; at end: " + " ".join(f"{x:.2f}" for x in load_end))
        print(f"rounds: {options.rounds}, alternated; medians\n")
        print(format_table(rows))
        if options.json:
            options.json.write_text(json.dumps({
                "command": command_line, "commit": commit, "winner": str(winner), "input": str(options.input),
                "clean": asdict(counts), "taxi_input": options.taxi_input,
                "load_start": load_start, "load_end": load_end, "rounds": options.rounds,
                "runs": [asdict(r) for r in runs], "rows": [asdict(r) for r in rows],
            }, indent=1, default=str))
    finally:
        if not options.keep and options.scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
