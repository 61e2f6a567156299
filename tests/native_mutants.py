"""Compile a copy of one of the native tier's Cython modules with one line changed: the
mutation tests show that a differential test catches such a mistake (:func:`failures`
says which of its cases did)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

NATIVE = Path(__file__).resolve().parents[1] / "taxi_rsp" / "engine" / "native"


def build_mutant(folder: Path, name: str, original: str, mutant: str, source: str | None = None) -> ModuleType:
    """``taxi_rsp/engine/native/<name>.pyx`` with ``original`` (found exactly once in it,
    or in the file it includes named ``source``, e.g. ``_ranked_pairs.pxi``) replaced by
    ``mutant``, compiled in ``folder``; the loaded module."""
    mutated = source or f"{name}.pyx"
    text = (NATIVE / mutated).read_text()
    assert text.count(original) == 1, original
    (folder / mutated).write_text(text.replace(original, mutant))
    if mutated != f"{name}.pyx":  # the module itself unchanged: it includes the mutant beside it
        (folder / f"{name}.pyx").write_text((NATIVE / f"{name}.pyx").read_text())
    # the project root on the include path for the module's cimports
    # (taxi_rsp.engine.native._key_index), the native folder for the files it includes
    subprocess.run([sys.executable, "-c", "from setuptools import setup; from Cython.Build import cythonize; "
                    f"setup(ext_modules=cythonize(['{name}.pyx'], quiet=True, "
                    f"include_path=['{NATIVE.parents[2]}', '{NATIVE}']), "
                    "script_args=['build_ext', '--inplace', '-q'])"], cwd=folder, check=True, capture_output=True)
    (built,) = folder.glob(f"{name}*.so")
    spec = importlib.util.spec_from_file_location(name, built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def failures(test: Callable[[str], object], templates: Iterable[str]) -> list[str]:
    """The templates on which ``test`` fails: a wrong answer or a raised error, caught
    either way (a mutant may make the engine raise instead of answering wrong)."""
    failed = []
    for template in templates:
        try:
            test(template)
        except Exception:  # noqa: BLE001 - see above
            failed.append(template)
    return failed
