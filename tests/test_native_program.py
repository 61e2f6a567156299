"""Typed programs interpreted in C (taxi_rsp.engine.native.program and _program) give the
same rows as the reference step closures: on random expressions over random typed rows
(with now and then a value of another type, an unbound one, or one beyond int64), on
the DEBS cell chains, and through the engine's window aggregates. A miss (a value the
program cannot type) goes to the reference, which decides the row.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.compiled.codegen import NoFast
from taxi_rsp.engine.native import program as programs
from taxi_rsp.engine.native.program import ProgramCompiler, compile_program
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import PAYLOAD_MAX, Dictionary, T_DECIMAL, T_INTEGER
from taxi_rsp.rdf.namespaces import XSD, XSD_DECIMAL, XSD_INTEGER
from taxi_rsp.rdf.terms import Literal
from tests.native_mutants import build_mutant
from tests.test_codegen import SCHEMA, _generic_chain, _ids

pytestmark = pytest.mark.skipif(not programs.programs_available(), reason="the native interpreter is not built")


def _int(n: int) -> ast.Const:
    return ast.Const(Literal(str(n), XSD_INTEGER))


def _dec(text: str) -> ast.Const:
    return ast.Const(Literal(text, XSD_DECIMAL))


# The columns' usual types (a: integer, b: decimal, c: boolean, d: decimal), and now and
# then another: every row of a test is compared, the typed ones run in C.
usual = [st.integers(-10**6, 10**6), st.integers(-10**9, 10**9).map(lambda n: Fraction(n, 10**6)),
         st.booleans(), st.integers(-10**5, 10**5).map(lambda n: Fraction(n, 10**3))]
odd = st.one_of(st.none(), st.sampled_from(["x", ""]), st.integers(-10**20, 10**20),
                st.integers(-10**25, 10**25).map(lambda n: Fraction(n, 10**9)))
rows = st.tuples(*[st.one_of(*[column] * 25, odd) for column in usual])


def typed_expressions():
    """Expressions of the typed subset over the four columns — numbers, tests of them,
    strings made of them — and a few the compiler refuses (STRLEN, an exact quotient,
    a comparison of a number with a boolean), which leave the chain to generated Python."""
    leaves = st.one_of(st.sampled_from([ast.Var(v) for v in ("a", "b", "d")]),  # c is the boolean
                       st.integers(-50, 50).map(_int),
                       st.sampled_from(["0.5", "-74.9150815", "0.002993", "3.0", "1000000000000"]).map(_dec))

    def numeric(children):
        binary = st.tuples(st.sampled_from(["+", "-", "*"]), children, children).map(
            lambda t: ast.Call(t[0], (t[1], t[2])))
        quotient = st.tuples(st.sampled_from(["FLOOR", "CEIL"]), children, children).map(
            lambda t: ast.Call(t[0], (ast.Call("/", (t[1], t[2])),)))
        unary = st.tuples(st.sampled_from(["FLOOR", "CEIL", "ROUND", "ABS", "NEG", XSD + "integer",
                                           XSD + "decimal"]), children).map(lambda t: ast.Call(t[0], (t[1],)))
        return st.one_of(binary, quotient, unary)

    numbers = st.recursive(leaves, numeric, max_leaves=5)
    tests = st.recursive(
        st.one_of(st.tuples(st.sampled_from(["<", ">", "<=", ">=", "=", "!="]), numbers, numbers).map(
            lambda t: ast.Call(t[0], (t[1], t[2]))),
            st.sampled_from(SCHEMA + ("zz",)).map(lambda v: ast.Call("BOUND", (ast.Var(v),))),
            st.sampled_from(["=", "<"]).map(lambda op: ast.Call(op, (ast.Var("c"), ast.Call("BOUND", (ast.Var("a"),)))))),
        lambda children: st.one_of(
            st.tuples(st.sampled_from(["&&", "||"]), children, children).map(lambda t: ast.Call(t[0], t[1:])),
            children.map(lambda e: ast.Call("!", (e,)))),
        max_leaves=3)
    strings = st.lists(st.one_of(numbers.map(lambda e: ast.Call("STR", (e,))), tests.map(lambda e: ast.Call("STR", (e,))),
                                 st.just(ast.Const(Literal(".")))), min_size=1, max_size=3).map(
        lambda xs: ast.Call("CONCAT", tuple(xs)))
    integers = numbers.map(lambda e: ast.Call(XSD + "integer", (e,)))  # IF's branches have one kind
    chosen = st.tuples(tests, integers, integers).map(lambda t: ast.Call("IF", t))
    refused = st.one_of(numbers.map(lambda e: ast.Call("STRLEN", (ast.Call("STR", (e,)),))),
                        st.tuples(numbers, numbers).map(lambda t: ast.Call("/", t)),
                        st.tuples(numbers, tests).map(lambda t: ast.Call("=", t)))
    return st.one_of(*[numbers, tests, strings, chosen] * 3, refused)


def _sample(d: Dictionary) -> tuple:
    return _ids(d, [7, Fraction(-73956528, 10**6), True, Fraction(12, 10)])


@settings(max_examples=1000, deadline=None)
@given(typed_expressions(), typed_expressions(), typed_expressions(), st.lists(rows, min_size=1, max_size=8))
def test_a_program_gives_the_reference_rows(e1, e2, e3, data) -> None:
    d = Dictionary()
    steps = [P.Extend(P.Unit(), "e", e1), P.Filter(P.Unit(), e2), P.Extend(P.Unit(), "f", e3),
             P.Project(P.Unit(), ("f", "a", "zz", "e"))]
    generic = _generic_chain(d, steps[:3])

    def reference(row):
        out = generic(row)
        return None if out is None else (out[5], out[0], None, out[4])

    run = compile_program(d, SCHEMA, steps, reference, _sample(d))
    if run is None:
        return  # some step has no typed form (the generated Python takes the chain)
    for row in [_ids(d, list(r)) for r in data] * 2:  # twice: the memo's strings are read back
        assert run(row) == reference(row), row


def _cell_chain(lon: str, lat: str, name: str) -> list[P.FusedStep]:
    """Q1's cell of (lon, lat): two BINDs, a FILTER on the grid and the CONCAT."""
    x = ast.Call("+", (ast.Call(XSD + "integer", (ast.Call("FLOOR", (ast.Call("/", (
        ast.Call("+", (ast.Var(lon), _dec("74.916578"))), _dec("0.005986"))),)),)), _int(1)))
    y = ast.Call("+", (ast.Call(XSD + "integer", (ast.Call("FLOOR", (ast.Call("/", (
        ast.Call("-", (_dec("41.477182778"), ast.Var(lat))), _dec("0.004491556"))),)),)), _int(1)))
    inside = ast.Call("&&", tuple(ast.Call(op, (ast.Var(v), _int(n))) for v in (name + "x", name + "y")
                                  for op, n in ((">=", 1), ("<=", 300))))
    cell = ast.Call("CONCAT", (ast.Call("STR", (ast.Var(name + "x"),)), ast.Const(Literal(".")),
                               ast.Call("STR", (ast.Var(name + "y"),))))
    return [P.Extend(P.Unit(), name + "x", x), P.Extend(P.Unit(), name + "y", y),
            P.Filter(P.Unit(), inside), P.Extend(P.Unit(), name, cell)]


def test_the_q1_cell_chain_runs_in_c_without_a_miss() -> None:
    """The DEBS cell arithmetic and its CONCAT key: the same ids as the reference for
    points inside, on the edges of and outside the grid, no row missed, and each cell's
    string made once (then remembered)."""
    d = Dictionary()
    steps = _cell_chain("b", "d", "cell")
    generic = _generic_chain(d, steps)
    run = compile_program(d, SCHEMA, steps, generic, _sample(d))
    assert run is not None
    program = run.__self__
    west, north = Fraction(-74916578, 10**6), Fraction(41477182778, 10**9)
    lons = [west, west - Fraction(1, 10**9), west + Fraction(5986, 10**6), Fraction(-73956528, 10**6), Fraction(-74)]
    lats = [north, north - Fraction(1, 10**9), north - Fraction(4491556, 10**9), Fraction(40751266, 10**6)]
    data = [_ids(d, [1, lon, True, lat]) for lon in lons for lat in lats]
    for row in data + data:
        out = run(row)
        assert out == generic(row)
    assert program.misses == 0 and program.runs == 2 * len(data)
    assert d.value(run(_ids(d, [1, Fraction(-73956528, 10**6), True, Fraction(40751266, 10**6)]))[-1]) == "161.162"


def test_every_comparison_below_at_and_above_its_bound() -> None:
    d = Dictionary()
    for op in ("<", "<=", ">", ">=", "=", "!="):
        steps = [P.Filter(P.Unit(), ast.Call(op, (ast.Var("a"), _int(7)))),
                 P.Filter(P.Unit(), ast.Call(op, (_dec("1.5"), ast.Var("b"))))]
        generic = _generic_chain(d, steps)
        run = compile_program(d, SCHEMA, steps, generic, _sample(d))
        for a in (6, 7, 8):
            for b in (Fraction(149, 100), Fraction(3, 2), Fraction(151, 100)):
                row = _ids(d, [a, b, True, Fraction(1)])
                assert run(row) == generic(row), (op, a, b)
        assert run.__self__.misses == 0


def test_a_memo_of_keys_alike_in_all_but_their_last_part() -> None:
    """Thousands of cells sharing their first part: each string is found by all of its
    parts (the memo grows and rehashes on the way), the first time and the second."""
    d = Dictionary()
    cell = ast.Call("CONCAT", (ast.Call("STR", (ast.Var("a"),)), ast.Const(Literal(".")),
                               ast.Call("STR", (ast.Var("d"),))))
    steps = [P.Extend(P.Unit(), "cell", cell)]
    generic = _generic_chain(d, steps)
    run = compile_program(d, SCHEMA, steps, generic, _sample(d))
    data = [_ids(d, [a, Fraction(1), True, Fraction(y, 1000)]) for a in range(1, 4) for y in range(1500)]
    for row in data + data[::-1]:
        assert run(row) == generic(row)
    assert run.__self__.misses == 0


@pytest.mark.parametrize("value, why", [
    ("x", "a string where the sample had a decimal"),
    (None, "an unbound value"),
    (Fraction(10**17, 10**9) * 10**3, "a value beyond the inline range (not an inline id)"),
])
def test_a_miss_goes_to_the_reference(value, why) -> None:
    d = Dictionary()
    steps = _cell_chain("b", "d", "cell")
    generic = _generic_chain(d, steps)
    run = compile_program(d, SCHEMA, steps, generic, _sample(d))
    row = _ids(d, [1, value, True, Fraction(40751266, 10**6)])
    assert run(row) == generic(row), why
    assert run.__self__.misses == 1


def test_arithmetic_beyond_int64_misses_and_the_reference_is_exact() -> None:
    """?a * 10^12 * 10^12 leaves int64 for most ?a: a miss, and the reference's answer
    (an exact big integer, whose id is not inline) comes back."""
    d = Dictionary()
    big = _int(10**12)
    steps = [P.Extend(P.Unit(), "e", ast.Call("*", (ast.Call("*", (ast.Var("a"), big)), big)))]
    generic = _generic_chain(d, steps)
    run = compile_program(d, SCHEMA, steps, generic, _sample(d))
    for a in (0, 5, -5, 10**6):
        row = _ids(d, [a, Fraction(1), True, Fraction(1)])
        assert run(row) == generic(row)
    assert run.__self__.misses == 3  # every a but 0


def test_what_has_no_typed_form_is_left_to_the_generated_python() -> None:
    d = Dictionary()
    for expr in (ast.Call("/", (ast.Var("a"), _int(3))),  # an exact quotient (a Fraction)
                 ast.Call("STRLEN", (ast.Call("STR", (ast.Var("a"),)),)),
                 ast.Const(Literal("a string"))):
        with pytest.raises(NoFast):
            ProgramCompiler(d, SCHEMA, {0: T_INTEGER, 1: T_DECIMAL}).expr(expr)
        assert compile_program(d, SCHEMA, [P.Extend(P.Unit(), "e", expr)], lambda row: row, _sample(d)) is None


def test_an_id_at_the_inline_edge_encodes_and_one_past_it_misses() -> None:
    d = Dictionary()
    steps = [P.Extend(P.Unit(), "e", ast.Call("+", (ast.Var("a"), _int(1))))]
    generic = _generic_chain(d, steps)
    run = compile_program(d, SCHEMA, steps, generic, _sample(d))
    for a in (PAYLOAD_MAX - 1, PAYLOAD_MAX):
        row = _ids(d, [a, Fraction(1), True, Fraction(1)])
        assert run(row) == generic(row)
    assert run.__self__.misses == 1


def test_a_row_shorter_than_the_schema_misses_instead_of_being_read_past_its_end() -> None:
    d = Dictionary()
    run = compile_program(d, SCHEMA, _cell_chain("b", "d", "cell"), lambda row: "fallback", _sample(d))
    assert run(_ids(d, [1, Fraction(-74), True])) == "fallback"
    assert run.__self__.misses == 1


def test_a_program_checks_its_instructions() -> None:
    with pytest.raises(ValueError, match="reads no register"):
        programs.Program([programs.OPCODES["ADD"], 0, 0, 5, 0], 2, [], [], [], (), None)
    with pytest.raises(ValueError, match="unknown opcode"):
        programs.Program([999, 0, 0, 0, 0], 1, [], [], [], (), None)


# Deliberate mistakes in the interpreter, each of which the differential test above must
# catch: (original, mutant) pairs of one line of _program.pyx.
MUTATIONS = [
    ("q -= 1", "q -= 0"),
    ("value = -floor_div(-a, b)", "value = floor_div(a, b)"),
    ("return raw - SIGN_SPAN if raw & SIGN_BIT else raw", "return raw"),
    ("value = a <= b", "value = a < b"),
    ("value = b if a != 0 else r[code[at + 4]]", "value = b"),
    ("if __builtin_mul_overflow(a, b, &value):", "if __builtin_add_overflow(a, b, &value):"),
    ("for i in range(width):\n                    if m.keys[at * width + i] != inputs[i]:",
     "for i in range(width - 1):\n                    if m.keys[at * width + i] != inputs[i]:"),
]


@pytest.mark.slow
@pytest.mark.parametrize("original, mutant", MUTATIONS)
def test_a_mutation_of_the_interpreter_fails_the_differential_test(tmp_path, original: str, mutant: str) -> None:
    """The differential tests are not vacuous: each mutant disagrees with the reference
    in at least one of them (about 20 s each: a C compile)."""
    module = build_mutant(tmp_path, "_program", original, mutant)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(programs, "Program", module.Program)
        patch.setattr(programs, "OPCODES", module.OPCODES)
        failed = []
        for check in (test_a_program_gives_the_reference_rows, test_every_comparison_below_at_and_above_its_bound,
                      test_a_memo_of_keys_alike_in_all_but_their_last_part, test_the_q1_cell_chain_runs_in_c_without_a_miss):
            try:
                check()
            except AssertionError:
                failed.append(check.__name__)
        assert failed, "no differential test noticed the mutant"


# Deliberate mistakes in the star read (Program.feed_star), each of which the
# differential test of aggregates over star graphs must catch.
STAR_MUTATIONS = [
    ("if <object> item is None:\n                return", "if False:\n                return"),
    ("if not (item == other or <object> item == <object> other):\n                return",
     "if False:\n                return"),
    ("elif not (subject is self._star_subject or subject == self._star_subject):", "elif False:"),
]


@pytest.mark.slow
@pytest.mark.parametrize("original, mutant", STAR_MUTATIONS)
def test_a_mutation_of_the_star_read_fails_the_differential_test(tmp_path, original: str, mutant: str) -> None:
    """The star graphs' differential test is not vacuous: each mutant of the star read
    disagrees with the reference on some generated stream and query."""
    from tests.test_compiled_differential import test_compiled_aggregates_reading_star_graphs_equal_the_reference

    module = build_mutant(tmp_path, "_program", original, mutant)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(programs, "Program", module.Program)
        patch.setattr(programs, "OPCODES", module.OPCODES)
        with pytest.raises(AssertionError):
            test_compiled_aggregates_reading_star_graphs_equal_the_reference()


def test_the_debs_queries_group_operators_run_programs() -> None:
    """On the sample, Q1's and Q2's window aggregates (Q2's empty side over each taxi's
    latest trip) take every row through a native program (no miss: the data is typed as
    the first row) that reads the trips' star graphs itself, and no window is left
    outside a group operator."""
    from pathlib import Path

    from taxi_rsp.engine.compiled.aggregate import CompiledAggregate
    from taxi_rsp.engine.compiled.group import CompiledGroup
    from taxi_rsp.engine.engine import Engine
    from taxi_rsp.feeder import Feeder
    from taxi_rsp.planner import register
    from taxi_rsp.runner import resolve_query

    sample = Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
    engine = Engine()
    queries = [register(engine, resolve_query(name).text, name) for name in ("q1", "q2")]
    for event in Feeder(sample, engine.dictionary):
        engine.process(event)
    groups = [op for query in queries for op in query.physical.operators if isinstance(op, (CompiledAggregate, CompiledGroup))]
    assert len(groups) == 3
    for op in groups:
        assert op.mode == "compiled" and op.program is not None, op.describe()
        assert op.program.runs > 1000 and op.program.misses == 0, op.describe()
        assert "native program that reads star graphs" in op.describe()  # the Feeder's trips are stars
    windows = [op.describe() for query in queries for op in query.physical.operators if "pipeline" in op.describe()]
    # (Q2's NOT EXISTS is its outer window's latest row per key, fused with the GROUP BY)
    assert windows == [], windows


def test_a_group_program_gives_way_to_the_generated_branches_for_unbound_arguments() -> None:
    """A group over an OPTIONAL: rows whose aggregated variable is unbound miss (their
    errors counted by the slow path); the first such row makes the operator compile
    the generated Python with its branches for them. Either way the reference's rows."""
    from taxi_rsp.engine.compiled.group import CompiledGroup
    from taxi_rsp.planner import register
    from tests.engine_helpers import EX, play
    from tests.test_compiled_differential import PREFIX, _engine, _outputs

    query = PREFIX + f"""SELECT ?k (COUNT(?w) AS ?n) (MAX(?w) AS ?top) (SUM(?v) AS ?s) WHERE {{
        STREAM <{EX}stream> [RANGE 5m] {{ ?e ex:k ?k ; ex:v ?v }}
        OPTIONAL {{ STREAM <{EX}stream> [RANGE 5m] {{ ?e ex:w ?w }} }} }} GROUP BY ?k"""
    events = [(0, "a", 1, 5), (1, "a", 2, 3), (0, "b", 3, 7), (2, "a", 4, None), (6, "b", 5, None), (1, "a", 6, 2)]
    engine = _engine(True)
    registered = register(engine, query, "q")
    compiled = play(engine, events)
    assert compiled == _outputs(query, events, compiled=False)
    (group,) = [op for op in registered.physical.operators if isinstance(op, CompiledGroup)]
    assert group.mode == "compiled" and group.program is None and "unbound = True" in group.source


@pytest.mark.parametrize("block", [
    "STREAM <{ex}stream> [RANGE 1h] {{ ?e ex:k ?k ; ex:v ?v }}",  # a window aggregate (Program.feed)
    "STREAM <{ex}stream> [RANGE 1h] {{ ?e ex:k ?k ; ex:v ?v }} "
    "OPTIONAL {{ STREAM <{ex}stream> [RANGE 1h] {{ ?e ex:w ?w }} }}",  # a group of deltas (push_deltas)
])
def test_a_total_beyond_int64_hands_a_program_fed_table_over_to_the_reference(block: str) -> None:
    """Sums of the largest inline integers leave int64 after 64 rows: the table raises
    before changing anything, the operator hands its state to the reference, and the
    outputs stay the reference's from the first row to the last."""
    from taxi_rsp.planner import register
    from tests.engine_helpers import EX, play
    from tests.test_compiled_differential import PREFIX, _engine, _outputs

    query = PREFIX + f"SELECT ?k (SUM(?v) AS ?s) (COUNT(*) AS ?n) WHERE {{ {block.format(ex=EX)} }} GROUP BY ?k"
    events = [(0.1, "a", PAYLOAD_MAX, 1) for _ in range(70)]
    engine = _engine(True)
    registered = register(engine, query, "q")
    assert play(engine, events) == _outputs(query, events, compiled=False)
    (group,) = [op for op in registered.physical.operators if hasattr(op, "program")]
    assert group.mode == "reference"
