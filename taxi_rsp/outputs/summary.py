"""What every ``summary.json`` says about the data itself, whichever side wrote it (the
engine's `taxi-rsp run`, `run --spark`, or the Spark baseline): the same warnings for
the same input (docs/semantics.md)."""

from __future__ import annotations


def data_warnings(lines_read: int, span_ms: int | None, windows_ms: dict[str, list[int]]) -> list[str]:
    """Runs that are complete and correct per SPEC but rarely what was meant: no trip
    accepted (``span_ms`` None), or a time window longer than the data, which never
    drops a trip (its result is a running total).

    >>> data_warnings(20, 19 * 60_000, {"q1": [30 * 60_000], "q2": [15 * 60_000]})
    ['q1: window 30 min is longer than the data (19 min of drop-offs): no trip ever left it']
    """
    if span_ms is None:
        what = "the input is empty" if lines_read == 0 else "no line was accepted (see rejects.csv)"
        return [f"{what}: no trip reached the queries"]
    warnings = []
    for name, windows in windows_ms.items():
        longer = sorted({w for w in windows if w > span_ms})
        if longer:
            warnings.append(f"{name}: window {', '.join(_minutes(w) for w in longer)} is longer than the "
                            f"data ({_minutes(span_ms)} of drop-offs): no trip ever left it")
    return warnings


def _minutes(ms: int) -> str:
    return f"{ms / 60_000:g} min"
