"""What pyproject.toml cannot express:

* the package list: every package found under ``taxi_rsp/``, plus the ``feeder/`` and
  ``listener/`` folders installed as ``taxi_rsp.feeder`` and ``taxi_rsp.listener``
  (pyproject's package-dir);
* the engine's hot modules compiled to C by Cython (``taxi_rsp/native.py`` says which
  and why), with the digest of each compiled source recorded for the stale-build check;
* the Feeder's per-line loop, ``feeder/_native.pyx`` -> ``taxi_rsp.feeder._native``
  (Cython with C types; the pure-Python ``Feeder._events`` is its reference);
* one compiler per core (:class:`ParallelBuild`).

Every extension is optional: a module that fails to compile, or a machine without
Cython or a C compiler, leaves the Python source in charge; ``tests/test_native.py`` and
``tests/test_feeder_native.py`` fail in such a development install.

Everything else about the distribution is in pyproject.toml.
"""

import json
import os
import runpy
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
NATIVE = runpy.run_path(str(ROOT / "taxi_rsp" / "native.py"))


def native_extensions() -> list[Extension]:
    """The Cython extensions of NATIVE_MODULES (writes the digest manifest) and the
    Feeder's native loop."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("taxi-rsp: Cython is not installed; the engine and the Feeder run as pure Python")
        return []
    sources = {name: NATIVE["source_file"](name) for name in NATIVE["NATIVE_MODULES"]}
    manifest = {name: NATIVE["digest"](ROOT / path) for name, path in sources.items()}
    manifest |= {name: NATIVE["digest"](ROOT / path) for name, path in NATIVE["PYX_MODULES"].items()}
    (ROOT / "taxi_rsp" / NATIVE["MANIFEST"]).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    # The sources are plain Python and must keep Python's semantics: annotations are
    # documentation, not C types (Cython would make `float` a C double), and no variable
    # gets an inferred C type (with a C int exponent, `10 ** n` would be a float);
    # functions stay introspectable.
    directives = {"language_level": 3, "annotation_typing": False, "infer_types": False, "binding": True}
    modules = [Extension(name, [path.as_posix()]) for name, path in sources.items()]
    try:
        extensions = cythonize(modules, nthreads=os.cpu_count() or 1, quiet=True, compiler_directives=directives)
    except Exception:  # noqa: BLE001 - one module Cython refuses must not cost the others their build
        extensions = []
        for module in modules:
            try:
                extensions += cythonize([module], quiet=True, compiler_directives=directives)
            except Exception as error:  # noqa: BLE001
                print(f"taxi-rsp: {module.name} stays Python: Cython cannot compile it ({error})")
    # The Feeder's loop, written for Cython (C types declared in the .pyx, its own
    # directives in its header): compiled apart from the pure-Python modules above.
    extensions += cythonize([Extension(name, [path]) for name, path in NATIVE["PYX_MODULES"].items()],
                            compiler_directives={"language_level": 3}, quiet=True)
    for extension in extensions:  # cythonize drops an Extension's optional flag: set it here
        extension.optional = True  # a failed compile warns; the install goes on
    return extensions


class ParallelBuild(build_ext):
    """``build_ext`` with one compiler per core (pip's editable build does not pass
    setup()'s options on to this command, and compiled the modules one at a time), and
    a progress line on the terminal: pip hides a build's output (``-q``, or without
    ``-v``), and a silent two-minute compile looks like a hang."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        self._done = 0
        self._terminal = _open_terminal()
        self._say(f"compiling {len(self.extensions)} modules with Cython and the C compiler, "
                  f"{self.parallel} at a time")
        try:
            super().run()
        finally:
            self._say(f"compiled {self._done} of {len(self.extensions)} modules", end="\n")
            if self._terminal is not None:
                self._terminal.close()

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)
        self._done += 1  # (the parallel build calls this from its threads: a count, not an order)
        self._say(f"compiled {self._done}/{len(self.extensions)}: {ext.name}")

    def _say(self, text: str, end: str = "") -> None:
        print(f"taxi-rsp: {text}", flush=True)  # pip -v shows it
        if self._terminal is not None:
            self._terminal.write(f"\r\033[Ktaxi-rsp install: {text}{end}")
            self._terminal.flush()


def _open_terminal():
    """The user's terminal, which pip does not capture (None without one: CI, a pipe)."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - closed by the build
    except OSError:
        return None


setup(
    packages=[*find_packages(include=["taxi_rsp", "taxi_rsp.*"]), "taxi_rsp.feeder", "taxi_rsp.listener"],
    ext_modules=native_extensions(),
    cmdclass={"build_ext": ParallelBuild},
)
