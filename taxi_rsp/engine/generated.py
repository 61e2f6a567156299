"""Defining the code the planner generates: interpreted, or compiled to C by Cython.

Every compiled operator writes Python source specialised on its query and its first
rows (BGP matchers, fused BIND/FILTER chunks, group and aggregate updates, correlation
conditions, top-k keys) and gets its functions from :func:`define`. Without more, that
source is ``exec``-ed and runs interpreted. With the *plan compiler* on (the default when
Cython and a C compiler are at hand; ``TAXI_RSP_JIT=0`` turns it off), :func:`define`
wraps the source in a factory instead ::

    def make(_ns):
        groups = _ns["groups"]          # every global the source reads, bound once
        ...
        def insert(row, expiry): ...    # the generated functions, unchanged,
        def flush(): ...                # now closures over those names
        return {"insert": insert, "flush": flush}

and compiles that module with Cython and the C compiler, once per distinct source:
the extension is cached on disk under the SHA-256 of the source (``TAXI_RSP_JIT_CACHE``,
default ``~/.cache/taxi-rsp/jit``). Each operator calls ``make`` with its own namespace,
so two operators with the same source share the extension, not their state. The
functions are the same code, hence the same results; they skip the interpreter
(docs/performance.md, "Stop 21"). Rows, keys and state stay Python objects; only the
integer arithmetic of a fast path's guarded region runs on C ``long long`` locals, where
anything that does not fit raises into the generic path (:mod:`taxi_rsp.engine.cint`,
"Stop 23").

A source not in the cache yet runs interpreted while one background thread builds it;
the engine swaps the compiled functions in between two events (:func:`install_ready`).
So the first run of a query never stalls on the compiler (no output line's delay holds a
build), and the runs after one that lasted long enough to build it (≈ 2 s per source) start
compiled; a build still running when a run ends is stopped and done again next time. Anything that prevents compiling (no Cython, no
compiler, a source this module does not recognise) leaves that code interpreted,
silently unless ``TAXI_RSP_JIT=1`` asked for the compiler explicitly.

>>> free_globals("def twice(x):\\n    return scale * x")
['scale']
>>> print(factory_source("def twice(x):\\n    return scale * x", ["scale"]))
def make(_ns):
    scale = _ns['scale']
    def twice(x):
        return scale * x
    return {'twice': twice}
"""

from __future__ import annotations

import ast
import atexit
import builtins
import hashlib
import importlib.util
import os
import queue
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from taxi_rsp.engine.cint import AS_C_DECLARATION, type_integers
from taxi_rsp.native import pure_python_requested

JIT_ENV = "TAXI_RSP_JIT"
CACHE_ENV = "TAXI_RSP_JIT_CACHE"


class PlanCompilerWarning(RuntimeWarning):
    """The plan compiler was asked for (TAXI_RSP_JIT=1) but could not build."""


def requested(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool | None:
    """``TAXI_RSP_JIT``: True (``1``: on, warn if it cannot build), False (``0``: off),
    None (unset: on when it can build, silently interpreted otherwise)."""
    value = environ.get(JIT_ENV, "").strip().lower()
    if value in ("", "auto"):
        return None
    return value not in ("0", "false", "no", "off")


def cache_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where compiled plans are kept: one folder per Python and Cython version."""
    root = environ.get(CACHE_ENV) or os.path.join(
        environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "taxi-rsp", "jit")
    try:
        import Cython
        flavour = f"cython{Cython.__version__}"
    except ImportError:
        flavour = "nocython"
    return Path(root) / f"{sys.implementation.cache_tag}-{flavour}-{sysconfig.get_platform()}"


def free_globals(source: str) -> list[str]:
    """The global names the functions of ``source`` read (sorted), other than the
    functions it defines itself. Raises ValueError unless the module body is function
    definitions only (what the planner generates)."""
    tree = ast.parse(source)
    defined = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            raise ValueError(f"not a generated function: line {node.lineno}")
        defined.add(node.name)
    read: set[str] = set()
    for node in tree.body:
        read |= _globals_of(node)
    return sorted(read - defined)


def _globals_of(function: ast.FunctionDef) -> set[str]:
    """Names a function reads that no statement in it binds (its globals; nested scopes
    are not generated, so one level is enough)."""
    bound = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    for extra in (function.args.vararg, function.args.kwarg):
        if extra is not None:
            bound.add(extra.arg)
    loads: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Lambda, ast.ClassDef)) or (
                isinstance(node, ast.FunctionDef) and node is not function):
            raise ValueError("nested scopes or global statements are not generated code")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loads - bound


def factory_source(source: str, names: Iterable[str], types: dict[str, str] | None = None,
                   local_types: dict[str, str] | None = None) -> str:
    """``source``'s functions as closures of ``make(_ns)`` over ``names`` (see above);
    ``types`` declares some of them as a builtin container type for the C compiler (a
    ``dict`` method is then called directly instead of looked up per call), and
    ``local_types`` some locals and arguments (see :func:`declare_locals`); integer
    arithmetic on ids runs on C integers where :mod:`taxi_rsp.engine.cint` finds it safe."""
    functions = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    types = types or {}
    typed = type_integers(source)  # C integer locals where they cannot change a result
    if local_types:
        typed = declare_locals(typed, local_types)
    lines = ["import cython", "", "def make(_ns):"] if types or typed != source else ["def make(_ns):"]
    if typed != source:  # C integer locals: their conversion (a .pyx declaration)
        lines[1:1] = ["", AS_C_DECLARATION]
    source = typed
    lines += [f"    {name} = cython.declare({types[name]}, _ns[{name!r}])" if name in types
              else f"    {name} = _ns[{name!r}]" for name in names]
    lines += [f"    {line}" if line.strip() else "" for line in source.splitlines()]
    lines.append("    return {" + ", ".join(f"{f!r}: {f}" for f in functions) + "}")
    return "\n".join(lines)


def declare_locals(source: str, local_types: dict[str, str]) -> str:
    """``source`` with ``@cython.locals(name=type)`` on each function binding one of
    ``local_types``' names (a builtin type: ``o[5]`` on a ``tuple`` is then read in C);
    the generator vouches that the name only ever holds that type or None (a wrong one
    raises TypeError in compiled code). Interpreted code never sees the declaration.

    >>> print(declare_locals("def f(o):\\n    return o[1]", {"o": "tuple", "st": "list"}))
    @cython.locals(o=tuple)
    def f(o):
        return o[1]
    """
    tree = ast.parse(source)
    changed = False
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        bound = {a.arg for a in fn.args.args} | {n.id for n in ast.walk(fn)
                                                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        keywords = [ast.keyword(name, ast.Name(local_types[name], ast.Load())) for name in sorted(bound & local_types.keys())]
        if not keywords:
            continue
        for decorator in fn.decorator_list:  # type_integers' C integer locals, if any
            if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                    and decorator.func.attr == "locals"):
                decorator.keywords += keywords
                break
        else:
            fn.decorator_list.insert(0, ast.Call(ast.Attribute(ast.Name("cython", ast.Load()), "locals", ast.Load()),
                                                 [], keywords))
        changed = True
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else source


class PlanCompiler:
    """Builds, caches and loads the C extensions of generated sources (one per process).

    A source whose extension is cached (in this process or on disk) is compiled at once;
    any other is built by one background thread (the C compiler and Cython run as
    subprocesses, so the engine keeps the interpreter meanwhile) and *installed* by the
    engine's thread between two events (:func:`install_ready`), so a first run never
    waits for the compiler: its generated code runs interpreted until its extension is
    ready (the delay of no output line contains a build)."""

    def __init__(self, cache: Path, explicit: bool) -> None:
        self.cache = cache
        self.explicit = explicit
        self.broken: str | None = None  # why compiling is off for the rest of this process
        self.defined = 0  # generated sources seen while on
        self.built = 0  # extensions this process built (the others came from the cache)
        self.loaded = 0  # sources running compiled
        self._child: subprocess.Popen | None = None  # the build step running now
        self._modules: dict[str, ModuleType] = {}
        self._queue: queue.Queue[tuple[str, str, Callable[[ModuleType], None]]] = queue.Queue()
        self._worker: threading.Thread | None = None

    def prepare(self, source: str, namespace: dict[str, Any],
                local_types: dict[str, str] | None = None) -> tuple[str, str] | None:
        """The module name and factory source of ``source``, or None when it is not
        compilable here (then it is simply interpreted); ``local_types``: see
        :func:`declare_locals`."""
        if self.broken is not None:
            return None
        try:
            names = free_globals(source)
        except (SyntaxError, ValueError):
            return None
        if any(n not in namespace and not hasattr(builtins, n) for n in names):
            return None  # would fail when read, interpreted or not: let exec report it
        bound = [n for n in names if n in namespace]  # the rest are builtins
        types = {n: _CONTAINERS[type(namespace[n])] for n in bound if type(namespace[n]) in _CONTAINERS}
        factory = factory_source(source, bound, types, local_types)
        return "tr_" + hashlib.sha256(factory.encode()).hexdigest()[:32], factory

    def cached(self, name: str) -> ModuleType | None:
        """The extension ``name`` if this process loaded it or the disk cache has it."""
        module = self._modules.get(name)
        if module is None and self._target(name).exists():
            try:
                module = self._import(name)
            except Exception:  # noqa: BLE001 - unreadable (a torn copy?): removed, built again
                self._target(name).unlink(missing_ok=True)
                return None
        return module

    def build_later(self, name: str, factory: str, then: Callable[[ModuleType], None]) -> None:
        """Build ``factory`` in the background; ``then(module)`` runs in the engine's
        thread once it is ready (see :func:`install_ready`)."""
        if self._worker is None:
            self._sweep()
            self._worker = threading.Thread(target=self._work, name="taxi-rsp plan compiler", daemon=True)
            self._worker.start()
        self._queue.put((name, factory, then))

    def wait(self, timeout: float | None = None) -> None:
        """Block until every queued build is done (tests, benchmarks), then install them."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._queue.unfinished_tasks and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.05)
        install_ready()

    def _work(self) -> None:
        while True:
            name, factory, then = self._queue.get()
            try:
                if self.broken is None:
                    if not self._target(name).exists():
                        self._build(name, factory)
                        self.built += 1
                    READY.append((self, name, then))
            except Exception as error:  # noqa: BLE001 - any build failure: stay interpreted
                self.broken = f"{type(error).__name__}: {error}"
                if self.explicit:
                    warnings.warn(f"{JIT_ENV}=1 but generated code cannot be compiled to C "
                                  f"({self.broken}); it runs interpreted", PlanCompilerWarning, stacklevel=1)
            finally:
                self._queue.task_done()

    def _target(self, name: str) -> Path:
        return self.cache / (name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))

    def _import(self, name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, self._target(name))
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {self._target(name)}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self._modules[name] = module
        return module

    def _build(self, name: str, factory: str) -> None:
        """Cython, then the C compiler, in a private folder; the extension is moved into
        the cache in one rename (concurrent runs may build the same one: last wins)."""
        self.cache.mkdir(parents=True, exist_ok=True)
        target = self._target(name)
        with tempfile.TemporaryDirectory(dir=self.cache, prefix=_BUILD_PREFIX) as work:
            source, c_file, built = (Path(work) / (name + ext) for ext in (".pyx", ".c", ".so"))
            source.write_text(factory, encoding="utf-8")
            self._run([sys.executable, "-m", "cython", "-3", "--fast-fail", "-o", str(c_file), str(source)])
            compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
            include = sysconfig.get_paths()["include"]
            self._run([*compiler, "-shared", "-fPIC", "-O2", "-DNDEBUG", "-fno-strict-aliasing", "-I", include,
                       str(c_file), "-o", str(built)])
            os.replace(built, target)

    def _run(self, argv: list[str]) -> None:
        self._child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output, _ = self._child.communicate()
        code, self._child = self._child.returncode, None
        if code != 0:
            raise RuntimeError(f"{Path(argv[0]).name} failed: {output.strip()[-500:]}")

    def stop(self) -> None:
        """At exit: stop a build still running (its source stays interpreted; the next
        run builds it again)."""
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()

    def _sweep(self) -> None:
        """Remove build folders an interrupted run left behind (older than an hour)."""
        for stale in self.cache.glob(_BUILD_PREFIX + "*") if self.cache.is_dir() else ():
            try:
                if time.time() - stale.stat().st_mtime > 3600:
                    shutil.rmtree(stale, ignore_errors=True)
            except OSError:
                pass


_BUILD_PREFIX = ".build-"
# Exact container types of namespace values the factory declares (a subclass is not declared)
_CONTAINERS = {dict: "dict", list: "list", set: "set", tuple: "tuple"}
# Built extensions waiting for the engine's thread: (compiler, module name, install)
READY: list[tuple[PlanCompiler, str, Callable[[ModuleType], None]]] = []


def install_ready() -> int:
    """Install the extensions built since the last call (the engine calls this between
    events when :data:`READY` is not empty); returns how many."""
    done = 0
    while READY:
        compiler, name, then = READY.pop(0)
        try:
            module = compiler._modules.get(name) or compiler._import(name)
        except Exception as error:  # noqa: BLE001 - a broken extension: stay interpreted
            compiler.broken = f"{type(error).__name__}: {error}"
            continue
        then(module)
        compiler.loaded += 1
        done += 1
    return done


_compiler: PlanCompiler | None = None
_compiler_lock = threading.Lock()


def plan_compiler() -> PlanCompiler | None:
    """The process's plan compiler, or None when it is off (``TAXI_RSP_JIT=0``, pure
    Python mode, or no Cython)."""
    global _compiler
    wanted = requested()
    if wanted is False or pure_python_requested():
        return None
    with _compiler_lock:
        if _compiler is None or _compiler.cache != cache_dir():
            _compiler = PlanCompiler(cache_dir(), explicit=bool(wanted))
            atexit.register(_compiler.stop)
            if importlib.util.find_spec("Cython") is None:
                _compiler.broken = "Cython is not installed"
                if wanted:
                    warnings.warn(f"{JIT_ENV}=1 but Cython is not installed; generated code runs interpreted",
                                  PlanCompilerWarning, stacklevel=3)
        return _compiler


def define(source: str, filename: str, namespace: dict[str, Any],
           install: Callable[[dict[str, Any]], None] | None = None,
           local_types: dict[str, str] | None = None) -> dict[str, Any]:
    """The functions of generated ``source`` (name -> function), reading their globals
    from ``namespace``. Compiled to C at once when the plan compiler is on and has the
    extension; else ``exec``-ed into ``namespace`` (which is returned), and, given an
    ``install`` callback, the extension is built in the background and ``install`` gets
    the compiled functions (same names) in the engine's thread once it is ready: the
    caller puts them where it keeps the interpreted ones (if those are still in use).
    ``local_types``: C types of some locals when compiled (see :func:`declare_locals`)."""
    compiler = plan_compiler()
    prepared = None
    if compiler is not None:
        compiler.defined += 1
        prepared = compiler.prepare(source, namespace, local_types)
    if prepared is not None:
        name, factory = prepared
        module = compiler.cached(name)  # type: ignore[union-attr]
        if module is not None:
            compiler.loaded += 1  # type: ignore[union-attr]
            return module.make(namespace)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own source
    if prepared is not None and install is not None:
        compiler.build_later(*prepared, lambda module: install(module.make(namespace)))  # type: ignore[union-attr]
    return namespace


class InCell:
    """An operator attribute kept in one slot of the instance's ``_cells`` list.

    An operator's per-event closures call the generated functions it swaps (compiled
    code installed later, a hand-over to its reference) through that list: an index in C,
    not an attribute look-up per call. The code that swaps them assigns the attribute
    as before (:func:`swap`, ``setattr``).

    >>> class Op:
    ...     run = InCell(0)
    ...     def __init__(self): self._cells = [None]
    >>> op = Op(); op.run = len
    >>> op._cells[0] is len, op.run is len
    (True, True)
    """

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, holder: Any, owner: type | None = None) -> Any:
        return self if holder is None else holder._cells[self.index]

    def __set__(self, holder: Any, value: Any) -> None:
        holder._cells[self.index] = value


def swap(holder: Any, attribute: str, old: Any, new: Any) -> None:
    """``holder.attribute = new`` if it still is ``old`` (an operator that handed over
    to its reference meanwhile keeps what it uses now)."""
    if getattr(holder, attribute, None) is old:
        setattr(holder, attribute, new)


def swap_all(holder: Any, attributes: dict[str, str], old: dict[str, Any], new: dict[str, Any]) -> None:
    """:func:`swap` for several generated functions (``attributes``: attribute -> function
    name); with no ``old`` functions (the first definition) every attribute is set."""
    for attribute, name in attributes.items():
        if not old or getattr(holder, attribute, None) is old[name]:
            setattr(holder, attribute, new[name])


def status() -> dict[str, object]:
    """How this process ran its generated code, for summary.json: ``mode`` (``on``,
    ``off`` and why, or ``unavailable`` and why), how many generated sources ran
    ``compiled`` to C and how many stayed ``interpreted``, how many extensions were
    ``built`` (the others came from the ``cache``)."""
    wanted = requested()
    if wanted is False or pure_python_requested():
        reason = f"{JIT_ENV}=0" if wanted is False else "pure Python mode"
        return {"mode": f"off ({reason})"}
    compiler = _compiler
    if compiler is None:
        return {"mode": "on", "compiled": 0, "interpreted": 0, "built": 0}
    mode = "on" if compiler.broken is None else f"unavailable ({compiler.broken})"
    return {"mode": mode, "compiled": compiler.loaded, "interpreted": compiler.defined - compiler.loaded,
            "built": compiler.built, "cache": str(compiler.cache)}


def describe() -> str:
    """One line for ``--explain``: how the generated code will run."""
    state = status()
    if state["mode"] != "on":
        return f"generated code: interpreted, plan compiler {state['mode']}"
    return (f"generated code: compiled to C by Cython (a new query's first run builds it in the "
            f"background; cache {cache_dir()})")
