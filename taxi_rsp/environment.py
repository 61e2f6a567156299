"""The edge where taxi-rsp reads its own environment variables: the command line and
the package's import (the Python API) turn them into one frozen :class:`ExecutionConfig`
here, and pass its values on as arguments. No other module reads a ``TAXI_RSP_``
variable (``tests/test_layering.py`` checks it).

None of them changes an answer; they choose how the work is done.

>>> ExecutionConfig.from_environment({"TAXI_RSP_PURE_PYTHON": "yes", "TAXI_RSP_VM_ACCEL": "kvm"})
ExecutionConfig(pure_python=True, spark_memory='2g', vm_accel='kvm')
>>> ExecutionConfig.from_environment({}).pure_python
False
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PURE_PYTHON = "TAXI_RSP_PURE_PYTHON"
SPARK_MEMORY = "TAXI_RSP_SPARK_MEMORY"
VM_ACCEL = "TAXI_RSP_VM_ACCEL"

HELP = f"""environment variables:
  JAVA_HOME              Java 17 for Spark (default: the `java` on PATH)
  {SPARK_MEMORY}  Spark driver memory of local runs (default 2g)
  {VM_ACCEL}      `auto` VM accelerator: tcg (default) or kvm
  SOURCE_DATE_EPOCH      timestamp of a reproducible `vm build`
  {PURE_PYTHON}   1: run the engine's modules and the Feeder's loop as Python,
                         not their compiled forms (same outputs; for comparisons)"""


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where taxi-rsp keeps files it can rebuild at any time (the query parser's tables,
    :mod:`taxi_rsp.lang.parser`): ``$XDG_CACHE_HOME/taxi-rsp``, else ``~/.cache/taxi-rsp``;
    None when there is no home directory to put it in. Nothing there changes an answer.

    >>> cache_dir({"XDG_CACHE_HOME": "/var/cache/me"}).as_posix()
    '/var/cache/me/taxi-rsp'
    """
    base = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative: the XDG spec says to ignore it
        home = environ.get("HOME") or os.path.expanduser("~")
        if not os.path.isabs(home):  # no HOME and no password entry ("~" stays "~")
            return None
        base = os.path.join(home, ".cache")
    return Path(base, "taxi-rsp")


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class ExecutionConfig:
    """How this process does its work, from the environment:

    * ``pure_python``: the engine's compiled modules and the Feeder's native loop run
      from their Python source (``taxi_rsp.native``);
    * ``spark_memory``: the driver memory of a local Spark (baseline, report, ``run --spark``);
    * ``vm_accel``: what the grader's ``--accel auto`` means (``tcg`` or ``kvm``)."""

    pure_python: bool = False
    spark_memory: str = "2g"
    vm_accel: str = "tcg"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> ExecutionConfig:
        return cls(pure_python=_flag(environ.get(PURE_PYTHON)),
                   spark_memory=environ.get(SPARK_MEMORY) or "2g",
                   vm_accel="kvm" if environ.get(VM_ACCEL, "").strip().lower() == "kvm" else "tcg")
