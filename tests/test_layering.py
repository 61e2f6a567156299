"""The layering the architecture promises, checked on what Python actually loads: the
Spark baseline and `verify` load no part of the engine, the Feeder or the listeners,
and the distribution claims the import name ``taxi_rsp`` only."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE_SIDE = ("taxi_rsp.engine", "taxi_rsp.feeder", "taxi_rsp.listener", "taxi_rsp.runner", "taxi_rsp.session",
               "taxi_rsp.lang", "taxi_rsp.algebra", "taxi_rsp.rdfstream", "taxi_rsp.scaleout", "feeder", "listener")


def _loaded_after(code: str) -> list[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(result.stdout.splitlines()[-1])


def _engine_side(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in ENGINE_SIDE)]


@pytest.mark.parametrize("module", [
    "taxi_rsp.baseline",
    "taxi_rsp.baseline.run",
    "taxi_rsp.baseline.session",
    "taxi_rsp.commands.baseline",
    "taxi_rsp.verify.compare",
    "taxi_rsp.grading.compare",
    "taxi_rsp.verify.workloads",
])
def test_the_baseline_and_the_checkers_load_nothing_of_the_engine(module: str) -> None:
    loaded = _loaded_after(f"import {module}")
    assert module in loaded
    assert _engine_side(loaded) == []


def test_the_whole_baseline_package_loads_nothing_of_the_engine() -> None:
    code = ("import pkgutil, importlib, taxi_rsp.baseline as b\n"
            "for info in pkgutil.iter_modules(b.__path__): importlib.import_module('taxi_rsp.baseline.' + info.name)")
    loaded = _loaded_after(code)
    assert "taxi_rsp.baseline.evaluate" in loaded and "taxi_rsp.baseline.run" in loaded
    assert _engine_side(loaded) == []


def test_the_engine_does_not_reach_up_into_its_callers() -> None:
    loaded = _loaded_after("import taxi_rsp.engine.engine, taxi_rsp.engine.static")
    assert not [m for m in loaded if m.startswith(("taxi_rsp.rdfstream", "taxi_rsp.runner", "taxi_rsp.commands",
                                                   "taxi_rsp.session", "taxi_rsp.listener", "taxi_rsp.feeder",
                                                   "taxi_rsp.planner"))]


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports anywhere in its code (TYPE_CHECKING blocks included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_engine_module_imports_the_planner() -> None:
    """The planner builds on the engine (it makes the plans the engine runs), never the
    other way round: Engine.register takes a built QueryPlan."""
    offenders = {str(path.relative_to(ROOT)): sorted(n for n in _imports(path) if n.startswith("taxi_rsp.planner"))
                 for path in (ROOT / "taxi_rsp" / "engine").rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_reference_operators_load_nothing_of_the_specialised_tier() -> None:
    """engine/ops/ is the reference interpreter every faster operator is tested against:
    it generates no code and imports nothing of taxi_rsp.engine.compiled."""
    modules = sorted(f"taxi_rsp.engine.ops.{p.stem}" for p in (ROOT / "taxi_rsp" / "engine" / "ops").glob("*.py")
                     if p.stem != "__init__")
    loaded = _loaded_after("\n".join(f"import {m}" for m in modules))
    assert set(modules) <= set(loaded)
    assert [m for m in loaded if m.startswith("taxi_rsp.engine.compiled")] == []


def test_no_module_imports_another_modules_private_names() -> None:
    """What a module shares, it names publicly (a hand-over goes through methods such as
    GroupOp.group / expect_flush, not through another class's fields)."""
    product = [*(ROOT / "taxi_rsp").rglob("*.py"), *(ROOT / "feeder").rglob("*.py"), *(ROOT / "listener").rglob("*.py")]
    private = sorted(f"{p.relative_to(ROOT)}: {node.module}.{alias.name}" for p in product
                     for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                     if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("taxi_rsp")
                     for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__"))
    assert private == []


def test_argparse_lives_in_the_command_line_only() -> None:
    """Library modules take typed configurations; the command line turns arguments into them."""
    product = [*(ROOT / "taxi_rsp").rglob("*.py"), *(ROOT / "feeder").rglob("*.py"), *(ROOT / "listener").rglob("*.py")]
    users = {str(p.relative_to(ROOT)) for p in product if "argparse" in _imports(p)}
    assert {u for u in users if not u.startswith("taxi_rsp/commands/") and u != "taxi_rsp/cli.py"} == set()


def test_the_reference_operators_are_plain_python() -> None:
    """No Cython declarations in engine/ops/: what is typed for speed is the specialised
    tier's (engine/compiled/), so the reference reads as the semantics it is."""
    typed = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "taxi_rsp" / "engine" / "ops").glob("*.py")
                   if "cython" in _imports(p))
    assert typed == []


def test_a_query_output_does_not_carry_its_query() -> None:
    """Listeners get the query's name and a decoder, not the registered query."""
    assert not any(n.startswith("taxi_rsp.engine.query") for n in _imports(ROOT / "taxi_rsp" / "engine" / "report.py"))



def test_only_an_events_producer_reads_its_payload() -> None:
    """An event's ``meta`` is its producer's (the Feeder's trigger timestamps): listeners
    get what they need from the run's source (``trigger_stamps``), never through events."""
    product = [*(ROOT / "taxi_rsp").rglob("*.py"), *(ROOT / "feeder").rglob("*.py"), *(ROOT / "listener").rglob("*.py")]
    readers = {str(p.relative_to(ROOT)) for p in product
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and node.attr == "meta" and isinstance(node.ctx, ast.Load)}
    assert readers - {"taxi_rsp/rdf/events.py"} == {"feeder/records.py"}

# Modules that hand the environment to other programs (not taxi-rsp switches): the JVM
# Spark starts (JAVA_HOME, PYSPARK_PYTHON...), a reproducible image build
# (SOURCE_DATE_EPOCH), and the CLI's own thread setting for OpenBLAS.
_ENVIRONMENT_OF_OTHER_PROGRAMS = {"taxi_rsp/baseline/session.py", "taxi_rsp/grading/image.py", "taxi_rsp/cli.py"}
# The edge: the one module that reads taxi-rsp's own variables.
_EDGE = {"taxi_rsp/environment.py"}


def _reads_environment(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb") \
                and isinstance(node.value, ast.Name) and node.value.id == "os":
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "os" \
                and any(a.name in ("environ", "getenv") for a in node.names):
            return True
    return False


def test_only_the_edge_reads_environment_variables() -> None:
    """Switches are read once, at the CLI/API edge (taxi_rsp.environment), and passed on
    as arguments; no library module consults the environment on its own."""
    product = [*(ROOT / "taxi_rsp").rglob("*.py"), *(ROOT / "feeder").rglob("*.py"), *(ROOT / "listener").rglob("*.py")]
    readers = {str(p.relative_to(ROOT)) for p in product if _reads_environment(p)}
    assert readers - _ENVIRONMENT_OF_OTHER_PROGRAMS - _EDGE == set()
    assert _EDGE <= readers  # the check sees the edge's own reads (it is not blind)


def test_the_feeder_and_listeners_are_installed_under_taxi_rsp_only() -> None:
    loaded = _loaded_after("import taxi_rsp.feeder, taxi_rsp.listener, taxi_rsp.runner")
    assert "taxi_rsp.feeder.reader" in loaded and "taxi_rsp.listener.debs" in loaded
    assert "feeder" not in loaded and "listener" not in loaded
    top_level = (ROOT / "taxi_rsp.egg-info" / "top_level.txt")
    if top_level.is_file():  # written by the editable install
        assert top_level.read_text().split() == ["taxi_rsp"]
