"""Compile a copy of one of the native tier's Cython modules with one line changed: the
mutation tests show that a differential test catches such a mistake."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

NATIVE = Path(__file__).resolve().parents[1] / "taxi_rsp" / "engine" / "native"


def build_mutant(folder: Path, name: str, original: str, mutant: str) -> ModuleType:
    """``taxi_rsp/engine/native/<name>.pyx`` with ``original`` (found exactly once)
    replaced by ``mutant``, compiled in ``folder``; the loaded module."""
    text = (NATIVE / f"{name}.pyx").read_text()
    assert text.count(original) == 1, original
    (folder / f"{name}.pyx").write_text(text.replace(original, mutant))
    # the project root on the include path: the module's cimports (taxi_rsp.engine.native._key_index)
    subprocess.run([sys.executable, "-c", "from setuptools import setup; from Cython.Build import cythonize; "
                    f"setup(ext_modules=cythonize(['{name}.pyx'], quiet=True, include_path=['{NATIVE.parents[2]}']), "
                    "script_args=['build_ext', '--inplace', '-q'])"], cwd=folder, check=True, capture_output=True)
    (built,) = folder.glob(f"{name}*.so")
    spec = importlib.util.spec_from_file_location(name, built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
