"""Which optional extra of the package provides a module (see pyproject.toml).

The core install (``pip install taxi-rsp``) runs the engine, the Feeder, the listeners,
``verify`` and ``synth``; the Spark baseline, the report, DataFrames of results and the
tests need extras. A
command that reaches a missing module says which extra to install, in one line.

    >>> missing_extra_hint("pyspark")
    "needs pyspark, which the core install leaves out: pip install 'taxi-rsp[spark]' (in a clone: pip install -e '.[spark]')"
    >>> missing_extra_hint("no_such_module") is None
    True
"""

from __future__ import annotations

EXTRA_OF = {
    "pyspark": "spark",
    "pandas": "spark",
    "pyarrow": "spark",
    "py4j": "spark",
    "matplotlib": "report",
    "polars": "polars",
    "rdflib": "test",
    "pytest": "test",
    "hypothesis": "test",
}


def missing_extra_hint(module: str | None) -> str | None:
    """The one-line hint for a missing ``module`` of an extra; None for any other module."""
    top = (module or "").partition(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return (f"needs {top}, which the core install leaves out: pip install 'taxi-rsp[{extra}]' "
            f"(in a clone: pip install -e '.[{extra}]')")
