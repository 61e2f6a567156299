"""The Table-1 report (CQELS DEBS 2015 shape): tables, figures, report.md and report.html.

Table 1 of the paper gives, per workload (Q1, Q2, Mixed), the average delay of the
engine and of a recompute baseline, the execution time and the speed-up. Here the
baseline is the Spark recompute of :mod:`taxi_rsp.baseline`; its delay is each
emitted instant's recompute time. The HTML page embeds every figure as a base64 PNG,
so it is a single self-contained file.
"""

from __future__ import annotations

import base64
import html
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from taxi_rsp.verify import plots
from taxi_rsp.verify.workloads import Pair

MISSING = "—"
STYLE = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
         "table{border-collapse:collapse;font-size:0.85em}"
         "td,th{border:1px solid #bbb;padding:0.3em 0.5em;text-align:right}th{background:#eee}"
         "td:first-child{text-align:left}img{max-width:100%}"
         ".note{background:#fff3cd;padding:0.5em 1em;border-left:4px solid #d39e00}"
         "figcaption{font-size:0.85em;color:#444}")


@dataclass(frozen=True)
class Context:
    """What every figure and table must state."""

    data_file: Path
    lines: int
    machine: str
    command: str

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


def _ratio(numerator: float | None, denominator: float | None) -> str:
    if not numerator or not denominator:
        return MISSING
    return f"{numerator / denominator:,.1f}×"


def table1_rows(pairs: Sequence[Pair]) -> list[list[str]]:
    """One row per query per workload: delays, run times, speed-ups, verify verdict."""
    rows = []
    for pair in pairs:
        b = pair.baseline.summary
        e = pair.engine.summary if pair.engine else None
        for query in pair.workload.queries:
            e_delay = e["delay_ms"][query]["mean"] if e else None
            b_delay = b["delay_ms"][query]["mean"]
            rows.append([
                f"{pair.workload.name}: {query}",
                _fmt(e_delay), _fmt(b_delay), _fmt(b["recompute_ms"][query]["mean"]),
                _fmt(e["exec_seconds"] if e else None, 2), _fmt(b["exec_seconds"], 2),
                _ratio(b["exec_seconds"], e["exec_seconds"] if e else None),
                _ratio(b_delay, e_delay),
                {True: "identical", False: "DIFFERENT", None: "engine missing"}[pair.identical],
            ])
    return rows


TABLE1_HEADER = ["workload: query", "engine mean delay (ms)", "baseline mean delay (ms)",
                 "baseline recompute per instant (ms)", "engine exec (s)", "baseline exec (s)",
                 "speed-up (exec)", "speed-up (delay)", "verify"]


def sweep_rows(pairs: Sequence[Pair]) -> list[list[str]]:
    rows = []
    for pair in pairs:
        b, e = pair.baseline.summary, pair.engine.summary if pair.engine else None
        w = pair.workload
        rows.append([f"{w.q1_window} / {w.q2_windows[0]}–{w.q2_windows[1]}",
                     *(_fmt(e["delay_ms"][q]["mean"] if e else None) for q in ("q1", "q2")),
                     *(_fmt(b["delay_ms"][q]["mean"]) for q in ("q1", "q2")),
                     _fmt(e["exec_seconds"] if e else None, 2), _fmt(b["exec_seconds"], 2),
                     _ratio(b["exec_seconds"], e["exec_seconds"] if e else None),
                     {True: "identical", False: "DIFFERENT", None: "engine missing"}[pair.identical]])
    return rows


SWEEP_HEADER = ["Q1 / Q2 windows (min)", "engine Q1 delay (ms)", "engine Q2 delay (ms)",
                "baseline Q1 delay (ms)", "baseline Q2 delay (ms)", "engine exec (s)",
                "baseline exec (s)", "speed-up", "verify"]


def make_figures(pairs: Sequence[Pair], sweep: Sequence[Pair], context: Context) -> list[Figure]:
    footer = context.footer
    figures = [
        Figure("delay_cdf", "Delay distribution", "Cumulative distribution of the per-line delay "
               "(engine: end-to-end per SPEC §5; baseline: recompute time of the instant).",
               plots.delay_cdf(pairs, footer)),
        Figure("delay_over_stream", "Delay over the stream", "Delay of every arrival-triggered output "
               "line in output order.", plots.delay_over_stream(pairs, footer)),
        Figure("throughput", "Throughput", "Left: input lines per second read by the engine process "
               "(bytes read, sampled from /proc every 0.5 s; the first samples include loading Python modules). Right: evaluation instants the baseline recomputes per "
               "second of recompute time.", plots.throughput(pairs, footer)),
    ]
    if sweep:
        figures.append(Figure("window_sweep", "Window sweep", "Mixed workload with Q1 window W and Q2 "
                              "windows W/2 (profit) and W (empty taxis).", plots.window_sweep(sweep, footer)))
    return figures


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False,
                             timeout=10, cwd=Path(__file__).parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _notes(pairs: Sequence[Pair]) -> list[str]:
    notes = []
    if pairs and all(p.engine is None for p in pairs):
        notes.append("The engine side is missing: this installation has no `taxi-rsp run`; only the "
                     "baseline was run and no speed-up can be given.")
    if any(p.identical is False for p in pairs):
        notes.append("Engine and baseline outputs DIFFER for at least one workload: run `taxi-rsp verify` "
                     "on the run folders listed below to see where.")
    return notes


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_report(out: Path, pairs: Sequence[Pair], sweep: Sequence[Pair], context: Context) -> list[Path]:
    """Write report.md (figures as PNG files next to it) and a self-contained report.html."""
    figures = make_figures(pairs, sweep, context)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    facts = [f"Data: `{context.data_file}` ({context.lines:,} lines)", f"Machine: {context.machine}",
             f"Commit: {_git_commit()}, generated {stamp}", f"Command: `{context.command}`"]
    t1 = table1_rows(pairs)
    sw = sweep_rows(sweep)
    notes = _notes([*pairs, *sweep])
    runs = sorted({str(p.baseline.folder) for p in [*pairs, *sweep]}
                  | {str(p.engine.folder) for p in [*pairs, *sweep] if p.engine})

    md = ["# taxi-rsp: engine vs Spark recompute baseline (Table 1)", "", *[f"* {f}" for f in facts], ""]
    md += [f"> **Note.** {n}" for n in notes] + ([""] if notes else [])
    md += ["## Table 1", "", _md_table(TABLE1_HEADER, t1), "",
           ("Speed-up = baseline / engine. The baseline recomputes every evaluation instant from the raw "
            "window contents on Spark; its exec time includes Spark's job overheads."), ""]
    if sw:
        md += ["## Window sweep", "", _md_table(SWEEP_HEADER, sw), ""]
    md += ["## Figures", ""]
    for figure in figures:
        (out / f"{figure.name}.png").write_bytes(figure.png)
        md += [f"### {figure.title}", "", f"![{figure.title}]({figure.name}.png)", "",
               f"{figure.caption} {context.footer}.", ""]
    md += ["## Run folders", "", *[f"* `{r}`" for r in runs], ""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")

    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>taxi-rsp report</title><style>{STYLE}</style></head><body>",
             "<h1>taxi-rsp: engine vs Spark recompute baseline (Table 1)</h1><ul>",
             *[f"<li>{html.escape(f)}</li>" for f in facts], "</ul>",
             *[f"<p class='note'><b>Note.</b> {html.escape(n)}</p>" for n in notes],
             "<h2>Table 1</h2>", _html_table(TABLE1_HEADER, t1),
             "<p>Speed-up = baseline / engine.</p>"]
    if sw:
        parts += ["<h2>Window sweep</h2>", _html_table(SWEEP_HEADER, sw)]
    parts.append("<h2>Figures</h2>")
    for figure in figures:
        data = base64.b64encode(figure.png).decode("ascii")
        parts.append(f"<figure id='{figure.name}'><h3>{html.escape(figure.title)}</h3>"
                     f"<img class='plot' alt='{html.escape(figure.title)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{html.escape(figure.caption)} {html.escape(context.footer)}.</figcaption></figure>")
    parts += ["<h2>Run folders</h2><ul>", *[f"<li><code>{html.escape(r)}</code></li>" for r in runs],
              "</ul></body></html>"]
    (out / "report.html").write_text("\n".join(parts), encoding="utf-8")
    return [out / "report.md", out / "report.html"]
