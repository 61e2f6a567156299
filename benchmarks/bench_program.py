"""A native program against the generated Python it replaces (issue 50): Q2's pickup-cell
chain — two BINDs of FLOOR((lon + a) / b) + 1, a FILTER on the grid and the CONCAT of
the cell's name — over 20,000 trips' coordinates, without the engine around it. Both
sides give the same rows (checked), and the reference closures (the oracle) a third time.

    .venv/bin/python -m pytest benchmarks/bench_program.py --benchmark-columns=mean,min,rounds
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.compiled.codegen import compile_chunk
from taxi_rsp.engine.native.program import compile_program, programs_available
from taxi_rsp.engine.ops.stateless import reference_chain
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD, XSD_DECIMAL, XSD_INTEGER
from taxi_rsp.rdf.terms import Literal

N = 20_000
SCHEMA = ("plon", "plat", "seq")


def _dec(text: str) -> ast.Const:
    return ast.Const(Literal(text, XSD_DECIMAL))


def _cell(coordinate: str, offset: str, step: str, flip: bool) -> ast.Call:
    inner = ast.Call("-", (_dec(offset), ast.Var(coordinate))) if flip else ast.Call("+", (ast.Var(coordinate), _dec(offset)))
    floor = ast.Call("FLOOR", (ast.Call("/", (inner, _dec(step))),))
    return ast.Call("+", (ast.Call(XSD + "integer", (floor,)), ast.Const(Literal("1", XSD_INTEGER))))


STEPS: list[P.FusedStep] = [
    P.Extend(P.Unit(), "cx", _cell("plon", "74.9150815", "0.002993", False)),
    P.Extend(P.Unit(), "cy", _cell("plat", "41.476059889", "0.002245778", True)),
    P.Filter(P.Unit(), ast.Call("&&", (ast.Call(">=", (ast.Var("cx"), ast.Const(Literal("1", XSD_INTEGER)))),
                                       ast.Call("<=", (ast.Var("cy"), ast.Const(Literal("600", XSD_INTEGER))))))),
    P.Extend(P.Unit(), "cell", ast.Call("CONCAT", (ast.Call("STR", (ast.Var("cx"),)), ast.Const(Literal(".")),
                                                   ast.Call("STR", (ast.Var("cy"),))))),
]


def _rows(d: Dictionary) -> list[tuple]:
    """Manhattan-like coordinates with six decimals, as the Feeder reads them."""
    rng = random.Random(5)
    return [tuple(d.encode_value(v) for v in (Fraction(rng.randint(-74020000, -73930000), 10**6),
                                              Fraction(rng.randint(40700000, 40800000), 10**6), seq))
            for seq in range(N)]


def _sides() -> dict:
    d = Dictionary()
    rows = _rows(d)
    reference = reference_chain(STEPS, SCHEMA, d)
    sides = {"generated Python": compile_chunk(d, SCHEMA, STEPS, reference, rows[0])}
    if programs_available():
        sides["native program"] = compile_program(d, SCHEMA, STEPS, reference, rows[0])
    return {"rows": rows, "reference": reference, **sides}


SIDES = _sides()
NAMES = [name for name in SIDES if name not in ("rows", "reference")]


def _run(chain) -> list:
    return [chain(row) for row in SIDES["rows"]]


def test_every_side_gives_the_reference_rows() -> None:
    expected = _run(SIDES["reference"])
    for name in NAMES:
        assert _run(SIDES[name]) == expected, name


@pytest.mark.parametrize("name", NAMES)
def test_cell_chain(benchmark, name: str) -> None:
    benchmark(_run, SIDES[name])
