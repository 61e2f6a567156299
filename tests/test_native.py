"""The compiled (Cython) engine modules and their Python source give the same outputs.

``taxi_rsp/native.py`` lists the modules ``setup.py`` compiles. These tests check that
the development install really built them (a broken build would otherwise pass every
other test on the slower source), that ``TAXI_RSP_PURE_PYTHON=1`` runs the source, that
both give identical output files on the real sample for the DEBS queries and for
queries of other shapes (OPTIONAL, MINUS, FILTER NOT EXISTS, every aggregate, ORDER BY …
LIMIT), and that a source edited after the build is run instead of its stale compiled
module.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from taxi_rsp import native
from taxi_rsp.environment import ExecutionConfig
from taxi_rsp.outputs.lines import split_delay

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"

# Two non-DEBS shapes over the taxi stream (taxi:… as the Feeder writes it).
OTHER_QUERIES = {
    "busy_taxis.cqels": """
        PREFIX taxi: <http://debs2015.org/taxi#>
        SELECT ?taxi (COUNT(?trip) AS ?n) (SUM(?fare) AS ?total) (AVG(?fare) AS ?mean)
               (MIN(?fare) AS ?lo) (MAX(?fare) AS ?hi) (MEDIAN(?tip) AS ?midTip)
        WHERE {
          STREAM <http://debs2015.org/streams/trips> [RANGE 20m] {
            ?trip taxi:medallion ?taxi ; taxi:fareAmount ?fare .
          }
          OPTIONAL { STREAM <http://debs2015.org/streams/trips> [RANGE 20m] { ?trip taxi:tipAmount ?tip } }
          FILTER(?fare > 5)
        }
        GROUP BY ?taxi
        ORDER BY DESC(?n) DESC(?total) ?taxi
        LIMIT 5
    """,
    "unpaid_cash.cqels": """
        PREFIX taxi: <http://debs2015.org/taxi#>
        SELECT ?trip ?taxi ?fare
        WHERE {
          STREAM <http://debs2015.org/streams/trips> [RANGE 5m] {
            ?trip taxi:medallion ?taxi ; taxi:fareAmount ?fare ; taxi:seq ?seq .
          }
          MINUS { STREAM <http://debs2015.org/streams/trips> [RANGE 5m] { ?trip taxi:tipAmount 0.00 } }
          FILTER NOT EXISTS {
            STREAM <http://debs2015.org/streams/trips> [RANGE 5m] {
              ?later taxi:medallion ?taxi ; taxi:seq ?seq2 .
            }
            FILTER(?seq2 > ?seq)
          }
        }
        ORDER BY DESC(?fare) ?trip
        LIMIT 3
    """,
}


def _run(out: Path, queries: list[str], pure: bool) -> dict[str, list[tuple[str, bool]]]:
    """``taxi-rsp run`` on the sample in a fresh process; every output file's lines
    without the delay value."""
    env = dict(os.environ, **{native.PURE_ENV: "1" if pure else "0"})
    command = [sys.executable, "-m", "taxi_rsp", "run", str(SAMPLE), "--out", str(out), "--no-progress"]
    for query in queries:
        command += ["--query", query]
    subprocess.run(command, check=True, env=env, capture_output=True, text=True)
    outputs = {}
    for path in sorted(out.iterdir()):
        if path.name == "summary.json":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        outputs[path.name] = [split_delay(line) for line in lines] if path.name.startswith("q") else [
            (line, False) for line in lines]
    return outputs


def _loaded_from(pure: bool) -> dict[str, str]:
    """Module -> file suffix of every native module, imported in a fresh process."""
    code = ("import importlib, json, taxi_rsp.native as n\n"
            "print(json.dumps({m: importlib.import_module(m).__file__.rpartition('.')[2] "
            "for m in n.NATIVE_MODULES}))")
    env = dict(os.environ, **{native.PURE_ENV: "1" if pure else "0"})
    done = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True)
    return json.loads(done.stdout)


def test_the_install_compiled_every_native_module() -> None:
    # A development install (README: pip install -e '.[test]') builds them; if this
    # fails, the build is broken (Cython missing, a compile error) and every run is slow.
    loaded = _loaded_from(pure=False)
    missing = sorted(m for m, suffix in loaded.items() if suffix != "so")
    assert not missing, f"not compiled (re-run pip install -e . and read its output): {missing}"


def test_pure_python_switch_loads_every_source() -> None:
    assert set(_loaded_from(pure=True).values()) == {"py"}


def test_compiled_and_source_modules_give_identical_outputs(tmp_path: Path) -> None:
    queries = ["q1", "q2"]
    for name, text in OTHER_QUERIES.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
        queries.append(str(tmp_path / name))
    compiled = _run(tmp_path / "compiled", queries, pure=False)
    source = _run(tmp_path / "source", queries, pure=True)
    assert sorted(compiled) == ["busy_taxis.csv", "q1.csv", "q2.csv", "rejects.csv", "unpaid_cash.csv"]
    assert all(len(lines) > 10 for lines in compiled.values() if lines is not compiled["rejects.csv"])
    assert compiled == source


def _package(tmp_path: Path, body: str, compiled: bool = True) -> tuple[Path, str]:
    """A package with one native module ``mod`` (``compiled``: and its extension file,
    as a build leaves it; its content is never loaded here)."""
    folder = tmp_path / "nativepkg"
    folder.mkdir(exist_ok=True)
    (folder / "__init__.py").write_text("")
    (folder / "mod.py").write_text(body)
    if compiled:
        (folder / ("mod" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"")
    return folder, "nativepkg.mod"


def test_an_install_that_compiled_nothing_says_so_once(tmp_path: Path) -> None:
    """No C compiler at install: the build recorded the sources but left no extension
    module; the engine runs them as Python, and one warning says so."""
    folder, name = _package(tmp_path, "VALUE = 1\n", compiled=False)
    (folder / "other.py").write_text("VALUE = 2\n")
    built = {name: native.digest(folder / "mod.py"), "nativepkg.other": native.digest(folder / "other.py")}
    finder = native.SourceFinder(built, pure=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert finder.find_spec(name, [str(folder)]) is None  # the usual finders load the .py
        assert finder.find_spec("nativepkg.other", [str(folder)]) is None
    assert [str(w.message).split(":")[0] for w in caught] == ["the engine runs as pure Python"]
    assert finder.uncompiled == [name, "nativepkg.other"] and finder.stale == []


def test_a_source_changed_since_the_build_runs_instead_of_its_compiled_module(tmp_path: Path) -> None:
    folder, name = _package(tmp_path, "VALUE = 2\n")
    built_from = native.digest(folder / "mod.py")
    current = native.SourceFinder({name: built_from}, pure=False)
    assert current.find_spec(name, [str(folder)]) is None  # up to date: the usual finders decide
    (folder / "mod.py").write_text("VALUE = 3\n")  # edited after the build
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = current.find_spec(name, [str(folder)])
    assert spec is not None and spec.origin == str(folder / "mod.py")
    assert [w.category for w in caught] == [native.NativeBuildWarning]
    assert "pip install -e ." in str(caught[0].message) and current.stale == [name]


def test_the_pure_switch_takes_sources_without_reading_digests(tmp_path: Path) -> None:
    folder, name = _package(tmp_path, "VALUE = 1\n")
    finder = native.SourceFinder({name: ""}, pure=True)
    spec = finder.find_spec(name, [str(folder)])
    assert spec is not None and spec.origin == str(folder / "mod.py") and finder.stale == []
    assert finder.find_spec("nativepkg.other", [str(folder)]) is None  # not a native module


@pytest.mark.parametrize(("value", "pure"), [("1", True), ("yes", True), ("0", False), ("", False), ("no", False)])
def test_the_edge_reads_the_pure_python_switch(value: str, pure: bool) -> None:
    assert ExecutionConfig.from_environment({native.PURE_ENV: value}).pure_python is pure


def test_every_native_module_has_a_source_and_a_build_record() -> None:
    recorded = native.read_manifest(ROOT / "taxi_rsp")
    for module in native.NATIVE_MODULES:
        assert (ROOT / native.source_file(module)).is_file(), module
    assert set(recorded) == {*native.NATIVE_MODULES, *native.PYX_MODULES}, \
        "re-run pip install -e . after changing NATIVE_MODULES"


def _native_trees() -> list[tuple[str, ast.Module]]:
    return [(m, ast.parse((ROOT / native.source_file(m)).read_text(encoding="utf-8")))
            for m in native.NATIVE_MODULES]


def test_no_native_module_defines_a_function_inside_a_case_block() -> None:
    # Cython 3.3 emits C that does not compile for a def inside `case` (the module would
    # silently stay Python: setup.py builds the extensions as optional).
    found = []
    for module, tree in _native_trees():
        for case in (n for n in ast.walk(tree) if isinstance(n, ast.match_case)):
            found += [f"{module}:{f.lineno} {f.name}" for f in ast.walk(case)
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert not found


def test_no_native_module_raises_to_a_power_computed_by_a_call() -> None:
    # Cython gives len() and other builtins C integer results, and `10 ** <C int>` is a C
    # double there (Fraction(1, 10 ** len("5")) raised TypeError once compiled): bind
    # such an exponent to a variable first (no C type is inferred for variables).
    found = [f"{module}:{node.lineno} {ast.unparse(node)}" for module, tree in _native_trees()
             for node in ast.walk(tree)
             if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
             and any(isinstance(n, ast.Call) for n in ast.walk(node))]
    assert not found


def test_a_pyx_module_changed_since_the_build_is_not_imported(tmp_path: Path) -> None:
    # The Feeder imports taxi_rsp.feeder._native inside try/except ImportError and runs its
    # pure-Python loop when the import fails: a stale .so must not run instead.
    folder = tmp_path / "feeder"
    folder.mkdir()
    (folder / "_native.pyx").write_text("# built from this\n")
    name = "taxi_rsp.feeder._native"
    finder = native.SourceFinder({name: native.digest(folder / "_native.pyx")}, pure=False)
    assert finder.find_spec(name, [str(folder)]) is None  # up to date: the .so loads as usual
    (folder / "_native.pyx").write_text("# edited\n")
    with warnings.catch_warnings(record=True) as caught, pytest.raises(ImportError):
        warnings.simplefilter("always")
        finder.find_spec(name, [str(folder)])
    assert [w.category for w in caught] == [native.NativeBuildWarning]


def test_a_run_records_which_modules_and_feeder_loop_ran(tmp_path: Path) -> None:
    for pure in (False, True):
        out = tmp_path / f"pure{pure}"
        env = dict(os.environ, **{native.PURE_ENV: "1" if pure else "0"})
        subprocess.run([sys.executable, "-m", "taxi_rsp", "run", str(SAMPLE), "--out", str(out), "--query", "q1",
                        "--no-progress"], check=True, env=env, capture_output=True)
        modules = json.loads((out / "summary.json").read_text())["engine_modules"]
        assert modules["pure_python_requested"] is pure and modules["feeder_native_loop"] is (not pure)
        assert modules["native_group_table"] is (not pure)  # the group operators' state in C memory, or its twin
        assert modules["native_programs"] is (not pure)  # fused steps interpreted in C, or generated Python
        assert (modules["compiled"] == 0) if pure else (modules["compiled"] > 20 and modules["python_source"] == [])


def test_the_command_line_prints_a_warning_as_one_line() -> None:
    import io

    from taxi_rsp import cli

    printed = io.StringIO()
    cli._show_warning(native.NativeBuildWarning("the engine runs as pure Python: …"), native.NativeBuildWarning,
                      "native.py", 1, printed)
    assert printed.getvalue() == "taxi-rsp: warning: the engine runs as pure Python: …\n"
