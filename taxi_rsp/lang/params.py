"""Query parameters ``${name}`` / ``${name=default}``: what a placeholder is bound to.

A parameter may stand where a term may (an IRI, a literal, a number: in a triple
pattern, an expression such as a FILTER, a VALUES row), where an IRI may (a STREAM or
GRAPH name, a predicate), for a window's duration, a ``TRIPLES`` count and a ``LIMIT``
or ``OFFSET`` (docs/cqels-ql.md). Its value comes from the bindings given at
registration (``taxi-rsp run --param name=VALUE``), else from its default; the parser
reads the value as the position needs (a term as written in a query, a duration, an
integer).

>>> parameter("${window=30m}", {}), parameter("${window=30m}", {"window": "1h"})
(('window', '30m'), ('window', '1h'))
>>> parameter("${limit}", {"limit": "5"})
('limit', '5')
>>> parameter("${t}", {})
Traceback (most recent call last):
...
ValueError: query parameter 't' has no value and no default: bind it (e.g. taxi-rsp run --param t=VALUE) or give one as ${t=VALUE}
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:=([^}\s]*))?\}")


def parameter(token: str, bindings: Mapping[str, str]) -> tuple[str, str]:
    """``(name, value)`` of a ``${name}`` / ``${name=default}`` placeholder: its binding,
    else its default; ValueError when it has neither."""
    match = _PARAM.fullmatch(token)
    if match is None:
        raise ValueError(f"not a query parameter: {token!r} (write ${{name}} or ${{name=default}})")
    name, default = match.group(1), match.group(2)
    value = bindings.get(name, default)
    if value is None:
        raise ValueError(f"query parameter {name!r} has no value and no default: bind it (e.g. taxi-rsp run "
                         f"--param {name}=VALUE) or give one as ${{{name}=VALUE}}")
    return name, value


def count_value(name: str, value: str, what: str) -> int:
    """A parameter's value where a non-negative integer stands (``what``: the clause).

    >>> count_value("n", "10", "LIMIT")
    10
    >>> count_value("n", "ten", "LIMIT")
    Traceback (most recent call last):
    ...
    ValueError: query parameter 'n' = 'ten': LIMIT needs a whole number such as 10
    """
    if not re.fullmatch(r"[0-9]+", value.strip()):
        raise ValueError(f"query parameter {name!r} = {value!r}: {what} needs a whole number such as 10")
    return int(value)
