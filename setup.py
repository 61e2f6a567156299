"""What pyproject.toml cannot express:

* the package list: every package found under ``taxi_rsp/``, plus the ``feeder/`` and
  ``listener/`` folders installed as ``taxi_rsp.feeder`` and ``taxi_rsp.listener``
  (pyproject's package-dir);
* the engine's hot modules compiled to C by Cython (``taxi_rsp/native.py`` says which
  and why), with the digest of each compiled source recorded for the stale-build check;
* the Feeder's per-line loop, ``feeder/_native.pyx`` -> ``taxi_rsp.feeder._native``
  (Cython with C types, issue 15 §4; the pure-Python ``Feeder._events`` is its reference),
  and the huge-page arena allocator, ``taxi_rsp/engine/arenas.pyx`` (see
  ``taxi_rsp/engine/hugepages.py``);
* with GCC, a profile-guided build of all of them (:class:`ProfileGuidedBuild`): compiled
  instrumented, trained on a mixed workload (``taxi_rsp/pgo.py``), compiled again with
  the recorded profile (``TAXI_RSP_PGO=0`` skips it).

Every extension is optional: a module that fails to compile, or a machine without
Cython or a C compiler, leaves the Python source in charge; ``tests/test_native.py`` and
``tests/test_feeder_native.py`` fail in such a development install.

Everything else about the distribution is in pyproject.toml.
"""

import json
import os
import runpy
import subprocess
import sys
import tempfile
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
    extensions = cythonize(
        [Extension(name, [path.as_posix()]) for name, path in sources.items()],
        nthreads=os.cpu_count() or 1,
        quiet=True,
        # The sources are plain Python and must keep Python's semantics: annotations are
        # documentation, not C types (Cython would make `float` a C double), and no
        # variable gets an inferred C type (with a C int exponent, `10 ** n` would be a
        # float); functions stay introspectable.
        compiler_directives={"language_level": 3, "annotation_typing": False, "infer_types": False,
                             "binding": True},
    )
    # The modules written for Cython (C types declared in the .pyx, their own directives in
    # their header: the Feeder's loop, the huge-page arena allocator): compiled apart from
    # the pure-Python modules above.
    extensions += cythonize([Extension(name, [path]) for name, path in NATIVE["PYX_MODULES"].items()],
                            compiler_directives={"language_level": 3}, quiet=True)
    for extension in extensions:  # cythonize drops an Extension's optional flag: set it here
        extension.optional = True  # a failed compile warns; the install goes on
    return extensions


PGO_ENV = "TAXI_RSP_PGO"
_INSTRUMENT = ["-fprofile-generate", "-fprofile-update=single"]
# -fprofile-correction: counts of a single-threaded run need none, but it keeps GCC from
# refusing a profile it finds inconsistent; a module the training did not load has none
_USE_PROFILE = ["-fprofile-use", "-fprofile-correction", "-Wno-missing-profile"]
_SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


class ProfileGuidedBuild(build_ext):
    """``build_ext`` twice around a training run (GCC's profile-guided optimisation): the
    modules are compiled instrumented, ``python -m taxi_rsp.pgo`` runs a mixed workload
    through them (every branch and call counted), and they are compiled again with those
    counts, which lets GCC lay the hot paths out together and the cold ones apart (Mixed
    3-6 % less CPU, Q2 1-6 %, the ISWC queries 3-10 %, docs/performance.md "Stop 40").
    Any failure on the way leaves a plain build, with a message saying why: the profile
    changes speed, never results."""

    def finalize_options(self) -> None:
        super().finalize_options()
        # one compiler per core: pip's editable build does not pass setup()'s options on
        # to this command (it compiled one module at a time)
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        reason = self._pgo_unavailable()
        if reason:
            print(f"taxi-rsp: plain build of the compiled modules ({reason})")
            super().run()
            self._record(reason)
            return
        base = {id(ext): (list(ext.extra_compile_args), list(ext.extra_link_args)) for ext in self.extensions}
        try:
            self._build_with(base, _INSTRUMENT, _INSTRUMENT)
            self._train()
            flags, reason = _USE_PROFILE, ""
        except Exception as exc:  # a plain build instead (the profile only changes speed)
            reason = f"profile-guided build abandoned: {exc}"
            print(f"taxi-rsp: {reason}; building plainly")
            flags = []
        self.force = True  # the same objects, now compiled with the profile (or without flags)
        self._build_with(base, flags, [])
        self._record(reason)

    def _record(self, reason: str) -> None:
        """Write whether the modules were built with a profile, and if not why, next to
        the digest record (``taxi_rsp.native.build_profile``, summary.json, a test)."""
        record = json.dumps({"profile_guided": not reason, "why_not": reason}, indent=1) + "\n"
        # in the tree this build installs from: the source tree only for an in-place
        # (editable) build, so another install from the same sources cannot overwrite it
        folder = ROOT / "taxi_rsp" if self.inplace else Path(self.build_lib, "taxi_rsp")
        if folder.is_dir():
            (folder / NATIVE["PROFILE_RECORD"]).write_text(record)

    def _pgo_unavailable(self) -> str:
        """Why there is no profile-guided build here ("" when there is one)."""
        if os.environ.get(PGO_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
            return f"{PGO_ENV}=0 asked for it"
        if not self.extensions:
            return "nothing to compile"
        compiler, gcc = NATIVE["c_compiler"]()
        return "" if gcc else f"the C compiler {compiler or '?'} is not GCC"

    def _build_with(self, base: dict, compile_flags: list[str], link_flags: list[str]) -> None:
        for ext in self.extensions:
            compile_args, link_args = base[id(ext)]
            ext.extra_compile_args = compile_args + compile_flags
            ext.extra_link_args = link_args + link_flags
        requested = self.compiler  # a run replaces the compiler's name with the compiler itself
        try:
            super().run()
        finally:
            self.compiler = requested

    def _train(self) -> None:
        """Run the training workload on the instrumented modules (imported from the
        source tree when built in place, else from the build folder)."""
        with tempfile.TemporaryDirectory(prefix="taxi-rsp-pgo-") as scratch:
            tree = Path(scratch, "tree")
            if self.inplace:
                _link_source_tree(tree)
            else:
                tree = Path(self.build_lib).resolve()  # relative to this process's folder, not the run's
            env = dict(os.environ, TAXI_RSP_JIT="0")  # no generated-code builds into the user's cache
            env.pop("TAXI_RSP_PURE_PYTHON", None)
            # the build's own PYTHONPATH stays after the tree: in pip's isolated build it is
            # the hook that adds the build environment (lark, numpy... see pyproject.toml)
            env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
            command = [sys.executable, "-m", "taxi_rsp.pgo", str(ROOT / "queries"), str(_SAMPLE), str(Path(scratch, "out"))]
            done = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                raise RuntimeError("training run failed: " + " / ".join(tail))
            print("taxi-rsp: trained the instrumented modules (python -m taxi_rsp.pgo)")


def _link_source_tree(tree: Path) -> None:
    """``tree/taxi_rsp`` as the installed package looks: the source tree's package, with
    ``feeder/`` and ``listener/`` linked in as its subpackages (pyproject's package-dir)."""
    package = tree / "taxi_rsp"
    package.mkdir(parents=True)
    for entry in (ROOT / "taxi_rsp").iterdir():
        (package / entry.name).symlink_to(entry)
    for name, folder in NATIVE["_PACKAGE_DIRS"].items():
        (package / name.rpartition(".")[2]).symlink_to(ROOT / folder)


setup(
    packages=[*find_packages(include=["taxi_rsp", "taxi_rsp.*"]), "taxi_rsp.feeder", "taxi_rsp.listener"],
    ext_modules=native_extensions(),
    cmdclass={"build_ext": ProfileGuidedBuild},
)
