"""The plan compiler (taxi_rsp.engine.generated): generated code compiled to C by Cython
gives the same answers as the same code interpreted — on the bundled sample, for the
DEBS queries and two others (NOT EXISTS/MINUS, OPTIONAL/every aggregate), whether it is
swapped in mid-run after a background build or loaded from the cache at once — and a
machine that cannot build keeps interpreting with the same answers.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from taxi_rsp.engine import generated
from taxi_rsp.engine.engine import Engine
from taxi_rsp.feeder import Feeder
from tests.conftest import QUERIES_DIR, SAMPLE_20D
from tests.test_native import OTHER_QUERIES

QUERIES = {"q1": (QUERIES_DIR / "q1.cqels").read_text(encoding="utf-8"),
           "q2": (QUERIES_DIR / "q2.cqels").read_text(encoding="utf-8"),
           **{name: textwrap.dedent(text) for name, text in OTHER_QUERIES.items()}}
FIRST_PART = 3000  # events before the background builds are awaited and swapped in


def test_free_globals_are_the_names_read_but_never_bound() -> None:
    source = textwrap.dedent("""
        def f(row, n=1):
            a, b = row
            try:
                total = a + b + k
            except Exception as error:
                return handle(error)
            return [x * n for x in (total, g(total))]

        def g(v):
            return v + f((v, v)) + width
    """)
    # f and g are its own; builtins are globals too (the factory binds those the namespace has)
    assert generated.free_globals(source) == ["Exception", "handle", "k", "width"]


def test_only_function_definitions_are_taken() -> None:
    with pytest.raises(ValueError):
        generated.free_globals("X = 1\ndef f():\n    return X\n")
    with pytest.raises(ValueError):
        generated.free_globals("def f():\n    global X\n    X = 1\n")


def test_the_factory_binds_the_namespace_once_per_call() -> None:
    source = "def bump(key):\n    counts[key] = counts.get(key, 0) + step\n    return counts[key]\n"
    factory = generated.factory_source(source, generated.free_globals(source))
    scope: dict = {}
    exec(factory, scope)  # noqa: S102 - the factory is plain Python too
    one, two = {"counts": {}, "step": 1}, {"counts": {}, "step": 10}
    bump_one, bump_two = scope["make"](one)["bump"], scope["make"](two)["bump"]
    assert (bump_one("a"), bump_one("a"), bump_two("a")) == (1, 2, 10)
    assert one["counts"] == {"a": 2} and two["counts"] == {"a": 10}  # separate state


def test_off_means_interpreted_in_the_given_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(generated.JIT_ENV, "0")
    namespace = {"k": 2}
    functions = generated.define("def f(x):\n    return x * k\n", "<t>", namespace)
    assert functions is namespace and functions["f"](21) == 42
    assert generated.status() == {"mode": "off (TAXI_RSP_JIT=0)"}


def _answers(split: bool) -> tuple[dict[str, list], Engine]:
    """Every output of every query on the sample, as RDF values; with ``split``, the
    background builds are awaited (and swapped in) after the first events."""
    engine = Engine()
    outputs: dict[str, list] = {name: [] for name in QUERIES}
    for name, text in QUERIES.items():
        query = engine.register(text, name)
        query.listeners.append(lambda out, sink=outputs[name]: sink.append((out.trigger.time, out.values())))
    events = iter(Feeder(SAMPLE_20D, engine.dictionary))
    for event in itertools.islice(events, FIRST_PART if split else None):
        engine.process(event)
    compiler = generated.plan_compiler()
    if split and compiler is not None:
        compiler.wait(600)
    for event in events:
        engine.process(event)
    if compiler is not None:
        compiler.wait(600)  # builds queued late (a top-k's first row) must not outlive the test
    return outputs, engine


def _jit(monkeypatch: pytest.MonkeyPatch, cache: Path, mode: str = "1") -> None:
    monkeypatch.setenv(generated.JIT_ENV, mode)
    monkeypatch.setenv(generated.CACHE_ENV, str(cache))


def test_compiled_generated_code_gives_the_interpreted_answers(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.setenv(generated.JIT_ENV, "0")
    interpreted, _ = _answers(split=False)
    assert all(len(lines) > 5 for lines in interpreted.values())

    _jit(monkeypatch, tmp_path / "cache")
    swapped, _ = _answers(split=True)  # built in the background, swapped in after 3000 events
    first = generated.status()
    assert first["mode"] == "on" and first["built"] > 10 and first["compiled"] > 10, first
    assert swapped == interpreted

    from_cache, engine = _answers(split=False)  # every source compiled at once
    second = generated.status()
    assert second["built"] == first["built"]  # nothing new to build
    assert second["compiled"] - first["compiled"] > 10
    assert from_cache == interpreted
    # the operators really run C functions now (a cyfunction is no Python function)
    windows = engine.queries[0].physical.windows
    assert type(windows[0]._insert).__name__ == "cython_function_or_method"


def test_a_machine_that_cannot_build_keeps_interpreting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(generated.JIT_ENV, "0")
    interpreted, _ = _answers(split=False)
    _jit(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answers, _ = _answers(split=True)
    assert answers == interpreted
    state = generated.status()
    assert state["mode"].startswith("unavailable (RuntimeError: no-such-compiler failed") or \
        state["mode"].startswith("unavailable (FileNotFoundError"), state
    assert state["compiled"] == 0 and state["built"] == 0
    assert any(issubclass(w.category, generated.PlanCompilerWarning) for w in caught)  # asked for: told


def test_a_run_summary_says_how_generated_code_ran(tmp_path: Path) -> None:
    env = dict(os.environ, TAXI_RSP_JIT="0")
    subprocess.run([sys.executable, "-m", "taxi_rsp", "run", str(SAMPLE_20D), "--query", "q1",
                    "--out", str(tmp_path / "out"), "--no-progress"], check=True, env=env, capture_output=True)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["generated_code"] == {"mode": "off (TAXI_RSP_JIT=0)"}


def test_an_unreadable_cached_extension_is_built_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _jit(monkeypatch, tmp_path / "cache")
    compiler = generated.plan_compiler()
    source, namespace = "def scaled(x):\n    return x * factor\n", {"factor": 3}
    name, _ = compiler.prepare(source, namespace)
    torn = compiler._target(name)
    torn.parent.mkdir(parents=True)
    torn.write_bytes(b"not an extension module")  # e.g. a copy cut short
    installed: list = []
    functions = generated.define(source, "<t>", namespace, install=installed.append)
    assert functions["scaled"](2) == 6 and not torn.exists()  # interpreted now, the file dropped
    compiler.wait(300)
    assert torn.exists() and installed and installed[0]["scaled"](2) == 6
    assert type(installed[0]["scaled"]).__name__ == "cython_function_or_method"
