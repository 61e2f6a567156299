"""The Table-1 report (CQELS DEBS 2015 shape): tables, figures, report.md and report.html.

Table 1 of the paper gives, per workload (Q1, Q2, Mixed), the average delay of the
engine and of a recompute baseline, the execution time and the speed-up. Here every
workload runs ``repeat`` times on each side; the table gives medians and the min–max
range of the runs. The two delays are *not* the same quantity, so they sit in separately
named columns: the engine's is end to end (SPEC §5: from reading the line to writing its
output line), the baseline's is the Spark recompute time of the instant that produced
the output line (reading, scheduling and writing excluded). Execution time, throughput
(input lines per second of execution time) and peak RSS are measured the same way on
both sides and compare like for like. The HTML page embeds every figure as a base64
PNG, so it is a single self-contained file (its run-folder links are relative).
"""

from __future__ import annotations

import base64
import html
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

from taxi_rsp.verify import plots
from taxi_rsp.verify.workloads import Pair, RunResult

MISSING = "—"
STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.4}"
         "table{border-collapse:collapse;font-size:0.8em}"
         "td,th{border:1px solid #bbb;padding:0.3em 0.5em;text-align:right}th{background:#eee}"
         "td:first-child{text-align:left}img{max-width:100%}"
         ".note{background:#fff3cd;padding:0.5em 1em;border-left:4px solid #d39e00}"
         "figcaption{font-size:0.85em;color:#444}code{background:#f4f4f4;padding:0 0.2em}")


@dataclass(frozen=True)
class Context:
    """What every figure and table must state."""

    data_file: Path
    lines: int
    machine: str
    command: str
    repeat: int = 1
    map_at: str | None = None  # the maps' instant, YYYY-MM-DD HH:MM:SS (None: the busiest minute)

    @property
    def footer(self) -> str:
        return f"data: {self.data_file.name} ({self.lines:,} lines) · machine: {self.machine}"


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    caption: str
    png: bytes


def _fmt(value: float | None, digits: int = 3) -> str:
    return MISSING if value is None else f"{value:,.{digits}f}"


def _med(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return median(present) if present else None


def _spread(values: Sequence[float | None], digits: int) -> str:
    """``median (min–max)`` of the runs; the median alone for one run."""
    present = [v for v in values if v is not None]
    if not present:
        return MISSING
    if len(present) == 1:
        return _fmt(present[0], digits)
    return f"{_fmt(median(present), digits)} ({_fmt(min(present), digits)}–{_fmt(max(present), digits)})"


def _ratio(numerator: float | None, denominator: float | None) -> str:
    if not numerator or not denominator:
        return MISSING
    return f"{numerator / denominator:,.1f}×"


def _delay(runs: Sequence[RunResult], query: str, stat: str) -> list[float | None]:
    return [r.summary["delay_ms"][query][stat] for r in runs]


def _exec(runs: Sequence[RunResult]) -> list[float]:
    return [r.summary["exec_seconds"] for r in runs]


VERDICT = {True: "identical", False: "DIFFERENT", None: "engine missing"}


def table1_rows(pairs: Sequence[Pair]) -> list[list[str]]:
    """One row per query per workload; medians over the runs, ranges min–max."""
    rows = []
    for pair in pairs:
        e, b = pair.engines, pair.baselines
        for query in pair.workload.queries:
            rows.append([
                f"{pair.workload.name}: {query}",
                _spread(_delay(e, query, "mean"), 3), _fmt(_med(_delay(e, query, "p99"))),
                _spread(_delay(b, query, "mean"), 3), _fmt(_med(_delay(b, query, "p99"))),
                _spread(_exec(e), 2), _spread(_exec(b), 2),
                _ratio(_med(_exec(b)), _med(_exec(e))),
                _fmt(_med([r.lines_per_second for r in e]), 0), _fmt(_med([r.lines_per_second for r in b]), 0),
                _fmt(_med([r.peak_rss_mib for r in e]), 0), _fmt(_med([r.peak_rss_mib for r in b]), 0),
                VERDICT[pair.identical],
            ])
    return rows


TABLE1_HEADER = ["workload: query", "engine delay, end to end: mean (ms)", "engine delay p99 (ms)",
                 "baseline compute per output line: mean (ms)", "baseline compute p99 (ms)",
                 "engine exec (s)", "baseline exec (s)", "speed-up (exec)", "engine lines/s",
                 "baseline lines/s", "engine peak RSS (MiB)", "baseline peak RSS (MiB)", "verify"]


def sweep_rows(pairs: Sequence[Pair], flagged: set[str]) -> list[list[str]]:
    rows = []
    for pair in pairs:
        e, b, w = pair.engines, pair.baselines, pair.workload
        rows.append([f"{w.q1_window} / {w.q2_windows[0]}–{w.q2_windows[1]}",
                     *(_fmt(_med(_delay(e, q, "mean"))) for q in ("q1", "q2")),
                     *(_fmt(_med(_delay(b, q, "mean"))) for q in ("q1", "q2")),
                     _spread(_exec(e), 2), _spread(_exec(b), 2), _ratio(_med(_exec(b)), _med(_exec(e))),
                     VERDICT[pair.identical],
                     "window longer than the data" if w.name in flagged else "ok"])
    return rows


SWEEP_HEADER = ["Q1 / Q2 windows (min)", "engine Q1 delay (ms)", "engine Q2 delay (ms)",
                "baseline Q1 compute (ms)", "baseline Q2 compute (ms)", "engine exec (s)",
                "baseline exec (s)", "speed-up", "verify", "data"]

_LONGER = re.compile(r"window .* is longer than the data")


def flagged_windows(pairs: Sequence[Pair]) -> set[str]:
    """Workloads with a window longer than the data (their results are running totals)."""
    return {p.workload.name for p in pairs if any(_LONGER.search(w) for w in p.warnings())}


def interpretation(pairs: Sequence[Pair], repeat: int) -> list[str]:
    """Sentences that read the numbers: who won each workload, by how much, how sure."""
    out = []
    for pair in pairs:
        e, b = _med(_exec(pair.engines)), _med(_exec(pair.baselines))
        if e is None or not b:
            continue
        faster, factor = ("engine", b / e) if e < b else ("baseline", e / b)
        text = (f"{pair.workload.name}: the {faster} won, {factor:,.1f}× less execution time "
                f"(engine {e:,.2f} s, baseline {b:,.2f} s, medians of {repeat} run{'s' if repeat > 1 else ''})")
        overlap = (repeat > 1 and min(_exec(pair.engines)) <= max(_exec(pair.baselines))
                   and min(_exec(pair.baselines)) <= max(_exec(pair.engines)))
        if overlap:
            text += "; the two ranges overlap, so the difference is within run-to-run spread"
        delays = [(q, _med(_delay(pair.engines, q, "mean")), _med(_delay(pair.baselines, q, "mean")))
                  for q in pair.workload.queries]
        parts = [f"{q} {d_e:,.3f} ms end to end against {d_b:,.3f} ms of recompute per line"
                 for q, d_e, d_b in delays if d_e is not None and d_b is not None]
        if parts:
            text += "; mean delay " + ", ".join(parts)
        out.append(text + ".")
    if out:
        out.append("The baseline's delay column counts only the recompute of an instant on a warm Spark "
                   "session, not reading the line or writing the output, so it understates its end-to-end "
                   "delay; execution time, throughput and peak RSS are measured alike on both sides.")
    return out


def make_figures(pairs: Sequence[Pair], sweep: Sequence[Pair], context: Context) -> list[Figure]:
    footer = context.footer
    figures = [
        Figure("delay_cdf", "Delay distribution", "Cumulative distribution of the per-line delay, one panel per "
               "workload (engine: end to end per SPEC §5; baseline: recompute time of the instant), first run.",
               plots.delay_cdf(pairs, footer)),
        Figure("delay_over_stream", "Delay over the stream", "Delay of every output line in output order, one "
               "panel per workload, first run.", plots.delay_over_stream(pairs, footer)),
        Figure("throughput", "Throughput", "Input lines per second of execution time (bars: median of the "
               "runs, whiskers: min–max); when a run was long enough, the engine's read rate over wall time "
               "(bytes read per /proc/PID/io every 0.5 s; the first samples include loading Python modules).", plots.throughput(pairs, footer)),
    ]
    if sweep:
        flagged = flagged_windows(sweep)
        note = " Shaded: window longer than the data (a running total, not a window effect)." if flagged else ""
        figures.append(Figure("window_sweep", "Window sweep", "Mixed workload with Q1 window W and Q2 windows "
                              f"W/2 (profit) and W (empty taxis).{note}", plots.window_sweep(sweep, footer, flagged)))
    from taxi_rsp.viz.figures import map_figures  # the maps of the answers (issue 19)

    figures += [Figure(m.name, m.title, m.caption, m.png) for m in map_figures(pairs, context.data_file, footer,
                                                                               context.map_at)]
    return figures


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False,
                             timeout=10, cwd=Path(__file__).parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _notes(pairs: Sequence[Pair], sweep: Sequence[Pair]) -> list[str]:
    notes = []
    everything = [*pairs, *sweep]
    if everything and all(p.engine is None for p in everything):
        notes.append("The engine side is missing: this installation has no `taxi-rsp run`; only the "
                     "baseline was run and no speed-up can be given.")
    if any(p.identical is False for p in everything):
        notes.append("Engine and baseline outputs DIFFER for at least one workload: run `taxi-rsp verify` "
                     "on the run folders listed below to see where.")
    warnings = list(dict.fromkeys(w for p in everything for w in p.warnings()))
    for warning in warnings:
        notes.append(f"Data warning: {warning}.")
    if flagged_windows(sweep):
        notes.append("Sweep points whose window is longer than the data never drop a trip: they measure a "
                     "running total, not the effect of the window; use a longer input to compare windows.")
    return notes


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _html_text(text: str) -> str:
    """Escaped text with Markdown's `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


TABLE1_RUNS = {True: "One run of each side (`--repeat 3` gives medians and min–max ranges). ",
               False: "Medians over {repeat} runs of each side, ranges min–max in brackets. "}
TABLE1_NOTE = ("{runs}Speed-up = baseline exec / "
               "engine exec. Exec time excludes starting Python or Spark; lines/s = input lines / exec time; "
               "peak RSS: the engine process (its VmHWM), the baseline's driver + JVM + Python workers (sampled "
               "every 0.25 s). The two delay columns measure different things (see the module text): the engine's "
               "is end to end, the baseline's is compute only.")


def reused_runs(pairs: Sequence[Pair]) -> str:
    """Which sides of which workloads were read from earlier run folders (empty: none),
    e.g. ``baseline q1, q2; engine none``: their commit and machine may differ."""
    sides = []
    for side in ("baseline", "engine"):
        names = list(dict.fromkeys(p.workload.name for p in pairs if any(r.reused for r in getattr(p, side + "s"))))
        if names:
            sides.append(f"{side} {', '.join(names)}")
    return "; ".join(sides)


def write_report(out: Path, pairs: Sequence[Pair], sweep: Sequence[Pair], context: Context) -> list[Path]:
    """Write report.md (figures as PNG files next to it) and a self-contained report.html."""
    figures = make_figures(pairs, sweep, context)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    facts = [f"Data: `{context.data_file}` ({context.lines:,} lines)", f"Machine: {context.machine}",
             f"Commit: {_git_commit()}, generated {stamp}", f"Command: `{context.command}`",
             f"Repetitions: {context.repeat} run(s) of each workload on each side"]
    reused = reused_runs([*pairs, *sweep])
    if reused:
        facts.append(f"Reused (`--reuse`: read from the run folders of an earlier command, not run again): {reused}")
    t1 = table1_rows(pairs)
    flagged = flagged_windows(sweep)
    sw = sweep_rows(sweep, flagged)
    notes = _notes(pairs, sweep)
    reading = interpretation(pairs, context.repeat)
    folders = sorted({r.folder for p in [*pairs, *sweep] for r in [*p.baselines, *p.engines]})
    links = [os.path.relpath(f, out) for f in folders]
    table_note = TABLE1_NOTE.format(runs=TABLE1_RUNS[context.repeat == 1].format(repeat=context.repeat))

    md = ["# taxi-rsp: engine vs Spark recompute baseline (Table 1)", "", *[f"* {f}" for f in facts], ""]
    md += [f"> **Note.** {n}\n" for n in notes]
    md += ["## Table 1", "", _md_table(TABLE1_HEADER, t1), "", table_note, ""]
    if reading:
        md += ["## What the numbers say", "", *[f"* {r}" for r in reading], ""]
    if sw:
        md += ["## Window sweep", "", _md_table(SWEEP_HEADER, sw), ""]
    md += ["## Figures", ""]
    for figure in figures:
        (out / f"{figure.name}.png").write_bytes(figure.png)
        md += [f"### {figure.title}", "", f"![{figure.title}]({figure.name}.png)", "",
               f"{figure.caption} {context.footer}.", ""]
    md += ["## Run folders", "", *[f"* [{link}]({link}/)" for link in links], ""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")

    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>taxi-rsp report</title><style>{STYLE}</style></head><body>",
             "<h1>taxi-rsp: engine vs Spark recompute baseline (Table 1)</h1><ul>",
             *[f"<li>{_html_text(f)}</li>" for f in facts], "</ul>",
             *[f"<p class='note'><b>Note.</b> {_html_text(n)}</p>" for n in notes],
             "<h2 id='table1'>Table 1</h2>", _html_table(TABLE1_HEADER, t1), f"<p>{_html_text(table_note)}</p>"]
    if reading:
        parts += ["<h2>What the numbers say</h2><ul>", *[f"<li>{_html_text(r)}</li>" for r in reading], "</ul>"]
    if sw:
        parts += ["<h2 id='sweep'>Window sweep</h2>", _html_table(SWEEP_HEADER, sw)]
    parts.append("<h2>Figures</h2>")
    for figure in figures:
        data = base64.b64encode(figure.png).decode("ascii")
        parts.append(f"<figure id='{figure.name}'>"
                     f"<img class='plot' alt='{html.escape(figure.title)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption><b>{html.escape(figure.title)}.</b> {html.escape(figure.caption)} "
                     f"{html.escape(context.footer)}.</figcaption></figure>")
    parts += ["<h2>Run folders</h2><ul>",
              *[f"<li><a href='{html.escape(link)}/'>{html.escape(link)}</a></li>" for link in links],
              "</ul></body></html>"]
    (out / "report.html").write_text("\n".join(parts), encoding="utf-8")
    return [out / "report.md", out / "report.html"]
