"""The engine's hot modules compiled to C by Cython, and the way back to their source.

After the compiled query plans, a run's time is spread thinly over the operators,
the driver and the listeners: ~40 functions, none above 9 % (py-spy, issue 15). What
is left there is CPython's cost per bytecode, so the modules in :data:`NATIVE_MODULES`
are compiled by Cython in pure-Python mode at install time (``setup.py``): the same
``.py`` files, no ``.pyx`` and no C types in them, each becoming an extension module
next to its source. Python's import system prefers an extension module over a source
file of the same name, so nothing else changes. The query-specific code the planner
generates at run time (``exec``) stays interpreted.

The Python source stays the reference, and is what runs when

* ``TAXI_RSP_PURE_PYTHON=1`` is set (the tests run both ways and compare outputs), or
* a source changed since it was compiled: the build records each source's SHA-256 in
  ``_native_build.json`` next to this file, and a compiled module whose source no
  longer matches must not run its old code — the source is loaded instead, with one
  :class:`NativeBuildWarning` naming the modules and how to rebuild.

This module uses the standard library only: ``setup.py`` loads it by path, before the
package is built.

>>> "taxi_rsp.engine.query" in NATIVE_MODULES, source_file("taxi_rsp.listener.debs").as_posix()
(True, 'listener/debs.py')
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

PURE_ENV = "TAXI_RSP_PURE_PYTHON"
MANIFEST = "_native_build.json"

# The modules a run spends its time in (py-spy on Q1/Q2/Mixed, the ISWC queries over
# --stream), by package; not those that run once per query. (Cython 3.3 cannot compile
# a function defined inside a ``case`` block: tests/test_native.py checks none is.)
NATIVE_MODULES: tuple[str, ...] = (
    "taxi_rsp.engine.engine",
    "taxi_rsp.engine.expr",
    "taxi_rsp.engine.query",
    "taxi_rsp.engine.policies",
    "taxi_rsp.engine.emitters",
    "taxi_rsp.engine.report",
    "taxi_rsp.engine.pipeline",
    "taxi_rsp.engine.routing",
    "taxi_rsp.engine.rowcache",
    "taxi_rsp.engine.view",
    "taxi_rsp.engine.graphs",
    "taxi_rsp.engine.ops.base",
    "taxi_rsp.engine.ops.window",
    "taxi_rsp.engine.ops.window_kinds",
    "taxi_rsp.engine.ops.match",
    "taxi_rsp.engine.ops.stateless",
    "taxi_rsp.engine.ops.group",
    "taxi_rsp.engine.ops.aggregates",
    "taxi_rsp.engine.ops.join",
    "taxi_rsp.engine.ops.mjoin",
    "taxi_rsp.engine.ops.minus",
    "taxi_rsp.engine.ops.topk",
    "taxi_rsp.engine.ops.tma",
    "taxi_rsp.engine.index.oneway",
    "taxi_rsp.engine.index.ring",
    "taxi_rsp.engine.compiled.aggregate",
    "taxi_rsp.engine.compiled.correlated",
    "taxi_rsp.engine.compiled.group",
    "taxi_rsp.engine.compiled.join",
    "taxi_rsp.engine.compiled.latest",
    "taxi_rsp.engine.compiled.match",
    "taxi_rsp.engine.compiled.window",
    "taxi_rsp.engine.rows",
    "taxi_rsp.engine.compiled.topk",
    "taxi_rsp.rdf.dictionary",
    "taxi_rsp.rdf.events",
    "taxi_rsp.rdf.terms",
    "taxi_rsp.rdfstream.triples",
    "taxi_rsp.rdfstream.graphs",
    "taxi_rsp.rdfstream.lines",
    "taxi_rsp.session.session",
    "taxi_rsp.runner",
    "taxi_rsp.outputs.atomic",  # its write() runs once per output line
    "taxi_rsp.listener.debs",
    "taxi_rsp.listener.formats",  # a new median or ratio is formatted for most output lines
    "taxi_rsp.listener.generic",
    "taxi_rsp.listener.sparql_json",
)

# Extensions written for Cython (C types in a .pyx), with their source: the build records
# their digest too, and a stale one is not imported (its Python caller falls back).
PYX_MODULES: dict[str, str] = {
    "taxi_rsp.feeder._native": "feeder/_native.pyx",
    "taxi_rsp.engine.native._group_table": "taxi_rsp/engine/native/_group_table.pyx",
    "taxi_rsp.engine.native._program": "taxi_rsp/engine/native/_program.pyx",
    "taxi_rsp.engine.native._correlation": "taxi_rsp/engine/native/_correlation.pyx",
}

# Packages whose folder is not under taxi_rsp/ in the source tree (pyproject's package-dir).
_PACKAGE_DIRS = {"taxi_rsp.feeder": "feeder", "taxi_rsp.listener": "listener"}


class NativeBuildWarning(RuntimeWarning):
    """Compiled modules are stale or missing: the run uses their Python source."""


def source_file(module: str) -> Path:
    """The source of ``module`` relative to the project root (as laid out in git)."""
    parts = module.split(".")
    for prefix, folder in _PACKAGE_DIRS.items():
        depth = prefix.count(".") + 1
        if parts[:depth] == prefix.split("."):
            return Path(folder, *parts[depth:-1], parts[-1] + ".py")
    return Path(*parts[:-1], parts[-1] + ".py")


def digest(path: Path | str) -> str:
    """SHA-256 of a source file's bytes; for a ``.pyx``, of its bytes and those of the
    ``.pxd`` and ``.pxi`` files beside it (their code is compiled into it: editing one makes the
    module stale too)."""
    path = Path(path)
    sha = hashlib.sha256(path.read_bytes())
    if path.suffix == ".pyx":
        for declarations in sorted([*path.parent.glob("*.pxd"), *path.parent.glob("*.pxi")]):
            sha.update(declarations.read_bytes())
    return sha.hexdigest()


_pure = False  # set once by install(): every native module runs from its Python source


def pure_python_requested() -> bool:
    """True when this process runs the Python source everywhere (``TAXI_RSP_PURE_PYTHON``,
    read by :mod:`taxi_rsp.environment` and passed to :func:`install`)."""
    return _pure


class SourceFinder(importlib.abc.MetaPathFinder):
    """Loads a native module from its ``.py`` when asked to, or when the build's digest
    of that source no longer matches the file; otherwise defers to the normal finders
    (which pick the compiled module)."""

    def __init__(self, built: dict[str, str], pure: bool) -> None:
        """``built``: module -> digest of the source it was compiled from."""
        self.built = built
        self.pure = pure
        self.stale: list[str] = []
        self.uncompiled: list[str] = []  # recorded by the build, but it left no extension module

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.built or path is None:
            return None
        leaf = fullname.rpartition(".")[2]
        if fullname in PYX_MODULES:
            return self._pyx_spec(fullname, leaf, path)
        for entry in path:
            source = os.path.join(entry, leaf + ".py")
            if not os.path.isfile(source):
                continue
            if not self.pure:
                if digest(source) == self.built[fullname]:
                    if not _has_extension(entry, leaf):
                        self._note_uncompiled(fullname)
                    return None  # up to date: the extension module (or, without one, the source) as usual
                self._warn_stale(fullname)
            return importlib.util.spec_from_file_location(fullname, source)
        return None

    def _pyx_spec(self, fullname: str, leaf: str, path: Sequence[str]) -> None:
        """A .pyx module has no Python source to fall back to: when its .pyx changed since
        the build, importing it fails (ImportError), and its caller runs its pure-Python
        twin (e.g. the Feeder's ``_events``); else the usual finders load it."""
        for entry in path:
            source = os.path.join(entry, leaf + ".pyx")
            if os.path.isfile(source) and digest(source) != self.built[fullname]:
                self._warn_stale(fullname, "its caller runs its pure-Python twin")
                raise ImportError(f"{fullname} is older than {source}", name=fullname)
        return None

    def _note_uncompiled(self, module: str) -> None:
        """Once per process: the build compiled nothing here (an install without a C
        compiler), so the engine runs as Python — the same answers, slower."""
        self.uncompiled.append(module)
        if len(self.uncompiled) == 1:
            warnings.warn(
                "the engine runs as pure Python: the install compiled none of its modules (no C compiler?); "
                "the answers are the same, about 8x slower. With a C compiler, pip install -e . builds them",
                NativeBuildWarning, stacklevel=2)

    def _warn_stale(self, module: str, fallback: str = "running its Python source") -> None:
        self.stale.append(module)
        warnings.warn(
            f"{module} changed since it was compiled; {fallback} (slower). "
            "Rebuild the compiled modules with: pip install -e .  "
            f"(or set {PURE_ENV}=1 to run every module as Python)",
            NativeBuildWarning, stacklevel=2)


def _has_extension(folder: str, leaf: str) -> bool:
    """Whether ``folder`` holds a compiled extension module named ``leaf``."""
    return any(os.path.isfile(os.path.join(folder, leaf + suffix)) for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def read_manifest(folder: Path) -> dict[str, str]:
    """The build's module -> source digest record in ``folder`` (empty if none)."""
    try:
        recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in recorded.items()} if isinstance(recorded, dict) else {}


def install(pure: bool = False) -> SourceFinder | None:
    """Put a :class:`SourceFinder` first on ``sys.meta_path`` (once per process) when
    there is a native build to guard or step around; returns it. ``pure``: run every
    native module from its source (the Feeder then runs its Python loop too)."""
    global _pure
    for finder in sys.meta_path:
        if isinstance(finder, SourceFinder):
            return finder
    _pure = pure
    built = read_manifest(Path(__file__).parent)
    if pure:  # (a .pyx module's own caller decides whether to use it: see the Feeder)
        built = dict.fromkeys(NATIVE_MODULES, "") | {k: v for k, v in built.items() if k not in PYX_MODULES}
    if not built:
        return None
    finder = SourceFinder(built, pure)
    sys.meta_path.insert(0, finder)
    return finder


def compiled_modules() -> dict[str, bool]:
    """For each native module already imported: whether it runs compiled."""
    return {name: not str(getattr(sys.modules[name], "__file__", "")).endswith(".py")
            for name in NATIVE_MODULES if name in sys.modules}


def status() -> dict[str, object]:
    """How the loaded native modules run, for a run's summary.json and ``--explain``:
    how many compiled, which from their Python source, and whether that was asked for.

    >>> sorted(status())
    ['compiled', 'pure_python_requested', 'python_source']
    """
    loaded = compiled_modules()
    return {"compiled": sum(loaded.values()),
            "python_source": sorted(name for name, compiled in loaded.items() if not compiled),
            "pure_python_requested": pure_python_requested()}


def describe() -> str:
    """One line for ``--explain``: e.g. ``engine modules: 41 compiled (Cython), 0 from
    Python source``."""
    state = status()
    source = state["python_source"]
    line = f"engine modules: {state['compiled']} compiled (Cython), {len(source)} from Python source"  # type: ignore[arg-type]
    if state["pure_python_requested"]:
        line += f" ({PURE_ENV}=1)"
    elif source:
        line += ": " + ", ".join(source)  # type: ignore[arg-type]
    return line
