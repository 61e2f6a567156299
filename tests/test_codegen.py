"""The generated fast path of fused window steps (taxi_rsp.engine.compiled.codegen) gives the same
ids as the generic expression closures, on random expressions and random rows.

Rows mix inline integers, inline decimals, booleans, strings and unbound values, and
expressions mix every operator the code generator knows (and some it does not), so the
guards, the generic fallback and the error cases are all exercised.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.compiled.codegen import compile_chunk
from taxi_rsp.engine.ops.stateless import reference_chain
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD, XSD_DECIMAL, XSD_INTEGER
from taxi_rsp.rdf.terms import Literal

SCHEMA = ("a", "b", "c", "d")
XSD_INT = XSD_INTEGER

numbers = st.one_of(
    st.integers(-10**6, 10**6),
    st.fractions(max_denominator=1000).map(lambda f: Fraction(round(f * 10**6), 10**6)),
    st.integers(-10**20, 10**20).map(lambda n: Fraction(n, 10**9)),  # beyond the inline range too
)
values = st.one_of(numbers, st.booleans(), st.sampled_from(["", "x", "1.5"]), st.none())


def constants():
    return st.one_of(
        st.integers(-50, 50).map(lambda n: ast.Const(Literal(str(n), XSD_INT))),
        st.sampled_from(["0.5", "-74.9150815", "0.002993", "0", "3.0"]).map(
            lambda t: ast.Const(Literal(t, XSD_DECIMAL))),
        st.sampled_from(["x", "."]).map(lambda t: ast.Const(Literal(t))),
    )


def expressions():
    leaves = st.one_of(st.sampled_from([ast.Var(v) for v in SCHEMA + ("zz",)]), constants())

    def extend(children):
        binary = st.tuples(st.sampled_from(["+", "-", "*", "/", "<", ">", "<=", ">=", "=", "!=", "&&", "||"]),
                           children, children).map(lambda t: ast.Call(t[0], (t[1], t[2])))
        floor_div = st.tuples(st.sampled_from(["FLOOR", "CEIL"]), children, children).map(
            lambda t: ast.Call(t[0], (ast.Call("/", (t[1], t[2])),)))
        unary = st.tuples(st.sampled_from(["FLOOR", "CEIL", "ROUND", "ABS", "NEG", "!", "STR",
                                           XSD + "integer", XSD + "decimal", "STRLEN"]), children).map(
            lambda t: ast.Call(t[0], (t[1],)))
        ternary = st.tuples(children, children, children).map(lambda t: ast.Call("IF", t))
        concat = st.lists(children, min_size=1, max_size=3).map(lambda xs: ast.Call("CONCAT", tuple(xs)))
        coalesce = st.lists(children, min_size=1, max_size=2).map(lambda xs: ast.Call("COALESCE", tuple(xs)))
        bound = st.sampled_from(SCHEMA + ("zz",)).map(lambda v: ast.Call("BOUND", (ast.Var(v),)))
        return st.one_of(binary, floor_div, unary, ternary, concat, coalesce, bound)

    return st.recursive(leaves, extend, max_leaves=6)


def _ids(d: Dictionary, row: list) -> tuple:
    return tuple(None if v is None else d.encode_value(v) for v in row)


def _generic_chain(d: Dictionary, steps: list[P.FusedStep]):
    return reference_chain(steps, SCHEMA, d)


@settings(max_examples=400, deadline=None)
@given(expressions(), expressions(), expressions(),
       st.lists(st.lists(values, min_size=4, max_size=4), min_size=1, max_size=6))
def test_fast_chunk_equals_generic(e1, e2, e3, rows) -> None:
    d = Dictionary()
    steps = [P.Extend(P.Unit(), "e", e1), P.Filter(P.Unit(), e2), P.Extend(P.Unit(), "f", e3)]
    generic = _generic_chain(d, steps)
    id_rows = [_ids(d, r) for r in rows]
    chunk = compile_chunk(d, SCHEMA, steps, generic, id_rows[0])
    for row in id_rows + id_rows:  # twice: remembered values (CONCAT) are read back
        assert chunk(row) == generic(row)


def test_concat_of_converted_numbers_is_remembered_per_input_values() -> None:
    """CONCAT(STR(?a), ".", STR(?b)) is computed once per (a, b) and read back after:
    the same ids as the generic closures, first and second time, and the memo stays
    bounded (emptied when full)."""
    from taxi_rsp.engine.compiled import codegen

    d = Dictionary()
    cell = ast.Call("CONCAT", (ast.Call("STR", (ast.Var("a"),)), ast.Const(Literal(".")),
                               ast.Call("STR", (ast.Var("b"),))))
    steps = [P.Extend(P.Unit(), "cell", cell)]
    generic = _generic_chain(d, steps)
    rows = [_ids(d, [x, y, 0, 0]) for x in range(1, 40) for y in (1, 600, -3)]
    chunk = compile_chunk(d, SCHEMA, steps, generic, rows[0])
    assert chunk is not generic and "_remember(" in chunk.source
    for row in rows + rows[::-1]:
        assert chunk(row) == generic(row)
    assert d.value(chunk(_ids(d, [12, 600, 0, 0]))[4]) == "12.600"
    memo = next(v for k, v in chunk.__globals__.items() if k.startswith("K") and isinstance(v, dict))
    assert len(memo) == len(rows)
    limit, codegen._STRING_CACHE_LIMIT = codegen._STRING_CACHE_LIMIT, 10
    try:
        for row in [_ids(d, [x, 7, 0, 0]) for x in range(100, 140)]:  # not remembered yet
            assert chunk(row) == generic(row)
        assert len(memo) <= 10
    finally:
        codegen._STRING_CACHE_LIMIT = limit


def test_a_constant_divisor_cancels_the_scale_factors() -> None:
    """FLOOR(?a / 0.002993) with ?a a 9-place decimal is A * 10^6 // (2993 * 10^9)
    in scaled integers; the common 10^6 is cancelled at compile time (A // 2993000),
    which is the same floor for every sign - including a negative divisor."""
    d = Dictionary()
    for divisor, text in (("0.002993", "// (2993000)"), ("-0.5", "// (-500000000)"), ("4", "// (4000000000)")):
        quotient = ast.Call("FLOOR", (ast.Call("/", (ast.Var("a"), ast.Const(Literal(divisor, XSD_DECIMAL)))),))
        steps = [P.Extend(P.Unit(), "q", quotient)]
        generic = _generic_chain(d, steps)
        sample = _ids(d, [Fraction(-73956528, 10**6), 1, 2, 3])
        chunk = compile_chunk(d, SCHEMA, steps, generic, sample)
        assert text in chunk.source and "(v1 * 1000000)" not in chunk.source
        for value in (Fraction(-73956528, 10**6), Fraction(2993, 10**6), Fraction(-2993, 10**6),
                      Fraction(2992999999, 10**12 // 1000), Fraction(0), Fraction(1, 10**9), Fraction(-1, 10**9)):
            row = _ids(d, [value, 1, 2, 3])
            assert chunk(row) == generic(row), (divisor, value)


def test_q1_cell_chain_is_compiled_and_exact() -> None:
    d = Dictionary()
    lon = ast.Var("a")
    cell = ast.Call("+", (ast.Call(XSD + "integer", (ast.Call("FLOOR", (ast.Call("/", (
        ast.Call("+", (lon, ast.Const(Literal("74.916578", XSD_DECIMAL)))),
        ast.Const(Literal("0.005986", XSD_DECIMAL)))),)),)), ast.Const(Literal("1", XSD_INT))))
    steps = [P.Extend(P.Unit(), "x", cell),
             P.Filter(P.Unit(), ast.Call(">=", (ast.Var("x"), ast.Const(Literal("1", XSD_INT)))))]
    generic = _generic_chain(d, steps)
    sample = _ids(d, [Fraction(-73956528, 10**6), 1, 2, 3])
    chunk = compile_chunk(d, SCHEMA, steps, generic, sample)
    assert chunk is not generic and "//" in chunk.source
    west_edge = Fraction(-74916578, 10**6)
    for lon_value in (Fraction(-73956528, 10**6), west_edge, west_edge - Fraction(1, 10**9),
                      west_edge + Fraction(5986, 10**6), Fraction(-74, 1), Fraction(0)):
        row = _ids(d, [lon_value, 1, 2, 3])
        assert chunk(row) == generic(row)
    assert d.value(chunk(sample)[4]) == 161  # SPEC §2: the first trip's Q1 pickup x


def test_generated_bgp_matcher_equals_the_interpreted_search() -> None:
    """Nested loops generated per pattern give the search's rows in the same order,
    including repeated variables, constants in every position and variable predicates."""
    import random

    from taxi_rsp.engine.compiled.match import CompiledMatcher
    from taxi_rsp.engine.view import index_triples
    from taxi_rsp.lang.ast import TriplePattern, Var
    from taxi_rsp.rdf.terms import IRI

    d = Dictionary()
    terms = [IRI(f"http://x/{n}") for n in "abcd"]
    nodes = terms[:2] + [Var(v) for v in "xyz"]
    rng = random.Random(7)
    for _ in range(300):
        patterns = tuple(TriplePattern(rng.choice(nodes), rng.choice(nodes[:3] + [Var("p")]), rng.choice(nodes))
                         for _ in range(rng.randint(0, 3)))
        graph = [tuple(d.encode(rng.choice(terms)) for _ in range(3)) for _ in range(rng.randint(0, 8))]
        matcher = CompiledMatcher(patterns, d)
        index = index_triples(graph)
        assert matcher.match(index) == matcher.search(index)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.fractions(), st.integers(-10**20, 10**20).map(lambda n: Fraction(n, 10**9)),
                 st.integers(1, 10**6).map(lambda d: Fraction(1, d))))
def test_the_generated_code_encodes_a_fraction_as_the_dictionary_does(value: Fraction) -> None:
    from taxi_rsp.engine.compiled.codegen import ChunkCompiler

    dictionary = Dictionary()
    encode_fraction = ChunkCompiler(dictionary, SCHEMA, {}).runtime()["_encode_fraction"]
    assert encode_fraction(value) == dictionary.encode_value(value)
