"""C integer locals in compiled generated code (taxi_rsp.engine.cint): which locals the
rewrite types, that the rewritten source means what the original means (run as Python),
and that compiled with Cython it gives the interpreted answers on any input — values
beyond 64 bits, negative floor divisions and shifts, None — because what may not fit 64
bits stays Python arithmetic, and whatever does not fit after all raises inside the guarded
region and takes the generic path; and that the ranges behind that choice hold."""

from __future__ import annotations

import ast
import operator
import random
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.engine import generated
from taxi_rsp.engine.cint import AS_C, as_c, type_integers

# The shape of every generated fast path: unpack ids, guard their type codes, compute
# on ints, fall back on the generic path for anything else.
SOURCE = textwrap.dedent("""
    def decode(row):
        try:
            x0, x1, x2 = row
            if (x1 >> 58) != 18: raise _Miss
            v1 = (x1 - 5188146770730811392 if x1 < 5332261958806667264 else x1 - 5476377146882523136)
            e2 = ((v1 + (749150815 * 100)) // 2993000) + 1
            m3 = v1 % -7
            p4 = v1 * x2
            n5 = -(v1)
            s6 = x2 >> 3
            b7 = (x2 & 255) | 4096
            kept = v1 + 1
            return (x0, e2, m3, p4, n5, s6, b7, v1 > x2, -9223372036854775807 - 1 <= p4)
        except Exception:
            return _slow(row)

    def after(row):
        try:
            x0, x1 = row
            a0 = x1 - 4899916394579099648
            big = x1 * 100000000000000000000
        except Exception:
            return _slow(row)
        return (a0, big, x0 is None)
""")


def _typed_locals(source: str) -> dict[str, set[str]]:
    """function name -> the names its ``@cython.locals`` declares."""
    declared = {}
    for fn in ast.parse(source).body:
        assert isinstance(fn, ast.FunctionDef)
        names = set()
        for decorator in fn.decorator_list:
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "cython.locals":
                names = {k.arg for k in decorator.keywords}
        declared[fn.name] = names
    return declared


def test_locals_computed_from_ids_in_the_guarded_region_become_c_integers() -> None:
    typed = type_integers(SOURCE)
    declared = _typed_locals(typed)
    assert {"v1", "e2", "m3", "n5", "s6", "b7", "kept", "x1_c", "x2_c"} <= declared["decode"]
    assert not {"x0", "x1", "x2", "row"} & declared["decode"]  # the row's objects stay objects
    # v1 * x2 may need more than 64 bits (an id times a decoded value): Python arithmetic
    assert "p4" not in declared["decode"] and "p4 = cython.cast(object, v1) * x2" in typed
    # a0 is read after the try (it would be boxed twice): computed in C, kept an object;
    # big's literal exceeds 64 bits: a Python expression; x0 is tested with `is`
    assert "a0" not in declared["after"] and "big" not in declared["after"]
    assert declared["after"] == {"x1_c", "_c0"}


def test_functions_without_a_guarded_region_are_left_alone() -> None:
    source = "def flush():\n    total = 0\n    for v in values:\n        total = total + v * 5000000000\n    return total\n"
    assert type_integers(source) == source
    unguarded = "def f(row):\n    x0, x1 = row\n    return x1 - 5188146770730811392\n"
    assert type_integers(unguarded) == unguarded


def _functions(source: str, namespace: dict) -> dict:
    import cython  # pure Python, its decorators do nothing (Cython's shadow module)

    # pure Python leaves a C shadow the value itself (as Cython's shadow module does for a
    # typed local), so the conversion reads as the identity here; what it does compiled,
    # errors included, is tested against as_c below
    scope = {"cython": cython, AS_C: lambda value: value, **namespace}
    exec(compile(source, "<test>", "exec"), scope)  # noqa: S102 - test source
    return scope


class _Miss(Exception):
    pass


def _reference():
    """The original source, interpreted; its fallback marks the rows it did not take."""
    return _functions(SOURCE, {"_Miss": _Miss, "_slow": lambda row: ("generic", row)})


IDS = st.one_of(st.integers(0, (1 << 63) - 1), st.integers(18 << 58, (19 << 58) - 1),
                st.integers(-(1 << 70), 1 << 70), st.none())


@settings(max_examples=300, deadline=None)
@given(x0=IDS, x1=IDS, x2=IDS)
def test_the_rewritten_source_means_the_same_as_python(x0, x1, x2) -> None:
    reference = _reference()
    rewritten = _functions(type_integers(SOURCE), {"_Miss": _Miss, "_slow": lambda row: ("generic", row)})
    for name, row in (("decode", (x0, x1, x2)), ("after", (x0, x1))):
        assert rewritten[name](row) == reference[name](row)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """SOURCE compiled by the plan compiler (C integer locals and all), with the
    interpreted original as its generic path, as the engine's operators have."""
    reference = _reference()
    calls: list[tuple] = []

    def slow(row: tuple) -> object:
        calls.append(row)
        return reference["decode" if len(row) == 3 else "after"](row)

    installed = _compile(SOURCE, {"_Miss": _Miss, "_slow": slow}, tmp_path_factory)
    assert type(installed["decode"]).__name__ == "cython_function_or_method"
    return {**installed, "calls": calls, "reference": reference}


@settings(max_examples=500, deadline=None)
@given(x0=IDS, x1=IDS, x2=IDS)
def test_compiled_with_c_integers_it_gives_the_interpreted_answers(compiled: dict, x0, x1, x2) -> None:
    reference = compiled["reference"]
    assert compiled["decode"]((x0, x1, x2)) == reference["decode"]((x0, x1, x2))
    assert compiled["after"]((x0, x1)) == reference["after"]((x0, x1))


def test_ids_take_the_c_path_and_big_products_stay_exact(compiled: dict) -> None:
    calls, reference = compiled["calls"], compiled["reference"]
    lon = (19 << 58) - 73_981_234_000  # an inline decimal id, -73.981234
    calls.clear()
    for row in ((7, lon, 40_751), (7, lon, 1 << 62)):  # v1 * x2 needs 98 bits in the second
        assert compiled["decode"](row) == reference["decode"](row)
    assert calls == []  # no fallback: the C part fits, the product is Python arithmetic
    # an unbound value: the conversion fails, the generic path answers
    assert compiled["decode"]((7, None, 1)) == reference["decode"]((7, None, 1))
    assert calls == [(7, None, 1)]


# The ranges are a heuristic (a type guard narrows its id wherever it stands); the
# overflow check is the net under it. Here the guard comes after a use it narrows.
MISLED = textwrap.dedent("""
    def misled(row):
        try:
            x0, x1 = row
            v = x1 * 3
            if x0 == 1: return v
            if (x1 >> 58) != 0: raise _Miss
            return 0
        except Exception:
            return _slow(row)
""")


def test_where_the_ranges_are_wrong_the_overflow_check_sends_the_row_to_the_generic_path(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    assert "v=cython.longlong" in type_integers(MISLED)  # typed on the guard's range
    reference = _functions(MISLED, {"_Miss": _Miss, "_slow": lambda row: ("generic", row)})["misled"]
    calls: list[tuple] = []

    def slow(row: tuple) -> object:
        calls.append(row)
        return reference(row)

    misled = _compile(MISLED, {"_Miss": _Miss, "_slow": slow}, tmp_path_factory)["misled"]
    row = (1, 1 << 62)  # 3 << 62 wraps in 64 bits; unchecked, C would return a negative
    assert misled(row) == reference(row) == 3 << 62
    assert calls == [row]
    assert misled((1, 5)) == 15 and calls == [row]


def _compile(source: str, namespace: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``source``'s functions built by the plan compiler (a fresh cache)."""
    patch = pytest.MonkeyPatch()
    patch.setenv(generated.JIT_ENV, "1")
    patch.setenv(generated.CACHE_ENV, str(tmp_path_factory.mktemp("jit")))
    try:
        compiler = generated.plan_compiler()
        assert compiler is not None, "the plan compiler is needed (Cython and a C compiler)"
        installed: dict = {}
        generated.define(source, "<test cint>", dict(namespace), install=installed.update)
        compiler.wait(600)
        assert installed, compiler.broken
        return installed
    finally:
        patch.undo()


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}


@settings(max_examples=400, deadline=None)
@given(data=st.data(), op=st.sampled_from([ast.Add(), ast.Sub(), ast.Mult(), ast.FloorDiv(), ast.Mod(),
                                           ast.BitAnd(), ast.BitOr(), ast.BitXor()]))
def test_the_range_of_an_operation_holds_every_result(data, op) -> None:
    from taxi_rsp.engine.cint import _binary

    def span() -> tuple[int, int]:
        lo = data.draw(st.integers(-(1 << 62), 1 << 62))
        return lo, data.draw(st.integers(lo, 1 << 62))

    a, b = span(), span()
    x, y = data.draw(st.integers(*a)), data.draw(st.integers(*b))
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and y == 0:
        return
    lo, hi = _binary(op, a, b)
    assert lo <= _OPERATORS[type(op)](x, y) <= hi


def test_the_factory_the_plan_compiler_builds_declares_them() -> None:
    lon_chunk = textwrap.dedent("""
        def chunk(row):
            try:
                x0, x1, = row
                if (x1 >> 58) != 18: raise _Miss
                v1 = (x1 - 5188146770730811392 if x1 < 5332261958806667264 else x1 - 5476377146882523136)
                e2 = ((((v1 + (749150815 * 100))) // (2993000)) + 1)
                if not ((e2 >= 1) and (e2 <= 600)): return None
                return (x0, x1, e2)
            except Exception:
                return _generic(row)
    """)
    factory = generated.factory_source(lon_chunk, ["_Miss", "_generic"])
    assert factory.startswith("import cython")
    assert "@cython.overflowcheck(True)" in factory and "@cython.locals(" in factory
    assert "x1_c = _taxi_as_c(x1)" in factory and " = 74915081500\n" in factory  # 749150815 * 100, folded


CONVERT = textwrap.dedent("""
    def convert(row):
        try:
            x0, = row
            v = x0 | 0
            return v
        except Exception as error:
            return type(error).__name__
""")


def test_the_inline_conversion_to_c_gives_python_s_values_and_errors(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The C shadow of a row's value (``AS_C``: up to three digits read inline) holds
    exactly the int, and raises what the conversion must for anything else."""
    assert f"x0_c = {AS_C}(x0)" in type_integers(CONVERT)
    convert = _compile(CONVERT, {}, tmp_path_factory)["convert"]
    edges = [0, 1, -1, 2**30 - 1, 2**30, -(2**30), 2**60 - 1, 2**60, 7 << 60, 8 << 60, 2**63 - 1, 2**63,
             -(2**63), -(2**63) - 1, -(2**40), 2**90, 5188146770730811392, None, True, False, 1.5, "7"]
    chooser = random.Random(5)
    values = edges + [chooser.randrange(-(2**64), 2**64) >> chooser.randrange(64) for _ in range(20000)]
    for value in values:
        try:
            expected: object = as_c(value)
        except (TypeError, OverflowError) as error:
            expected = type(error).__name__
        assert convert((value,)) == expected, value
