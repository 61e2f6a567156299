"""Defining the code the planner generates for a query.

The specialised operators (:mod:`taxi_rsp.engine.compiled`, the BGP matchers, the fused
BIND/FILTER chunks) write Python source for their query and its first rows and get their
functions from :func:`define`, which runs that source once, in a namespace of its own.
Nothing is compiled while a query runs: a query's first run is as fast as any later one.

>>> functions = define("def twice(x):\\n    return scale * x", "<doc>", {"scale": 2})
>>> functions["twice"](21)
42
"""

from __future__ import annotations

from typing import Any


def define(source: str, filename: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """The functions of generated ``source`` (name -> function), reading their globals
    from ``namespace`` (which is returned, with them added)."""
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own source
    return namespace
