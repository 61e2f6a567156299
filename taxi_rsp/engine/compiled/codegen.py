"""Generate Python source for the fused stateless steps of a window (BIND, FILTER,
projection), specialised on the dictionary type codes of the input ids.

The closures of :mod:`taxi_rsp.engine.expr` decode every id to a Python value
(``Fraction`` for decimals) and dispatch on types at each node. For the common case
the types are fixed by the data: a coordinate is always an inline decimal, a sequence
number an inline integer. :func:`compile_chunk` therefore writes one straight-line
function per chain of steps in which

* numbers are plain ``int`` s: an xsd:integer as itself, an xsd:decimal as a scaled
  integer ``A`` meaning ``A / 10**s`` with the scale ``s`` known at compile time
  (inline decimal ids carry ``s = 9``). Sums, differences, products, comparisons,
  FLOOR/CEIL of a quotient and the integer cast are exact integer operations on them;
  a quotient that is not floored becomes an exact ``Fraction``;
* every value has a static *kind* (``I`` integer, ``("D", s)`` decimal, ``S`` string,
  ``B`` boolean, ``F`` exact Fraction) that mirrors the Python type the generic
  closures would produce, so results are encoded to exactly the same ids.

It is only a fast path: the generated function checks ("guards") the type code of each
input id it decodes, and any guard miss or any exception (a division by zero, a value
out of the inline range, ...) hands the row to the generic closures, which then decide
the result, errors included. A step whose expression has no fast form
(:class:`NoFast`) makes the whole chain generic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.expr import compile_expr
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import (
    INLINE_FLAG,
    PAYLOAD_BITS,
    PAYLOAD_MAX,
    PAYLOAD_MIN,
    T_BOOLEAN,
    T_DECIMAL,
    T_INTEGER,
    TYPE_SHIFT,
    Dictionary,
    encode_fraction,
    exact_ratio,
)
from taxi_rsp.rdf.namespaces import INTEGER_TYPES, XSD
from taxi_rsp.rdf.terms import IRI, BNode, Literal, format_decimal

Kind = Any  # "I" | "S" | "B" | "F" | ("D", scale)
Step = Callable[[tuple], "tuple | None"]
_SIGN = 1 << (PAYLOAD_BITS - 1)
_HEAD = {T_INTEGER: (INLINE_FLAG >> TYPE_SHIFT) | T_INTEGER, T_DECIMAL: (INLINE_FLAG >> TYPE_SHIFT) | T_DECIMAL,
         T_BOOLEAN: (INLINE_FLAG >> TYPE_SHIFT) | T_BOOLEAN}
_INPUT_KIND = {T_INTEGER: "I", T_DECIMAL: ("D", 9), T_BOOLEAN: "B"}
_STRING_CACHE_LIMIT = 1 << 16


class NoFast(Exception):
    """The expression (or step) has no fast form; the generic closures are used."""


def _numeric(kind: Kind) -> bool:
    return kind == "I" or kind == "F" or (isinstance(kind, tuple) and kind[0] == "D")


def _scale(kind: Kind) -> int:
    return 0 if kind == "I" else kind[1]


def format_scaled(scaled: int, scale: int) -> str:
    """The lexical form of the decimal ``scaled / 10**scale``.

    >>> format_scaled(-1250, 3)
    '-1.25'
    """
    return format_decimal(Fraction(scaled, 10**scale))


def _trunc_div(value: int, divisor: int) -> int:
    """math.trunc(value / divisor) for a positive divisor."""
    return value // divisor if value >= 0 else -((-value) // divisor)


class _Writer:
    """Collects the statements and constants of one generated function."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self.lines: list[str] = []
        self.consts: dict[str, object] = {}
        self.decoded: dict[int, str] = {}  # input position -> local holding its value
        self.guards: dict[int, int] = {}  # input position -> expected id >> TYPE_SHIFT
        self._n = 0

    def local(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: object) -> str:
        name = f"K{len(self.consts)}"
        self.consts[name] = value
        return name

    def emit(self, line: str) -> None:
        self.lines.append(line)


class ChunkCompiler:
    """Compiles a chain of step descriptions for rows of ``schema`` whose input ids have
    the type codes ``codes`` (position -> code, from a sample row)."""

    def __init__(self, dictionary: Dictionary, schema: tuple[str, ...], codes: dict[int, int]) -> None:
        self.dictionary = dictionary
        self.schema = schema
        self.codes = codes
        self.w = _Writer(dictionary)
        # Per current schema position: (id expression or None, value expression, kind)
        self.slots: list[tuple[str | None, str | None, Kind | None]] = [
            (f"x{i}", None, None) for i in range(len(schema))
        ]
        self.names = list(schema)

    # -- values of variables --------------------------------------------------------
    def _var(self, name: str) -> tuple[str, Kind]:
        if name not in self.names:
            raise NoFast(name)  # never bound here: the generic path raises the error
        pos = self.names.index(name)
        ident, value, kind = self.slots[pos]
        if value is not None:
            return value, kind
        if ident is None or not ident.startswith("x"):
            raise NoFast(name)
        index = int(ident[1:])
        code = self.codes.get(index)
        if code not in _INPUT_KIND:
            raise NoFast(name)
        local = self.w.local("v")
        self.w.guards[index] = _HEAD[code]
        if code == T_BOOLEAN:
            self.w.emit(f"{local} = ({ident} & 1) == 1")
        else:
            self.w.emit(f"{local} = {inline_value_source(code, ident)}")
        kind = _INPUT_KIND[code]
        self.slots[pos] = (ident, local, kind)
        return local, kind

    # -- expressions ----------------------------------------------------------------
    def expr(self, node: Any) -> tuple[str, Kind]:
        """Python source of ``node``'s value and its kind (raises NoFast)."""
        if isinstance(node, ast.Var):
            return self._var(node.name)
        value = constant_value(node, self.dictionary)
        return self._call(node) if value is NOT_CONSTANT else self._constant(value)

    def _constant(self, value: object) -> tuple[str, Kind]:
        if isinstance(value, bool):
            return repr(value), "B"
        if type(value) is int:
            return repr(value), "I"
        if type(value) is Fraction:
            for scale in range(19):
                scaled = value * 10**scale
                if scaled.denominator == 1:
                    return repr(scaled.numerator), ("D", scale)
            return self.w.const(value), "F"
        if type(value) is str:
            return repr(value), "S"
        raise NoFast(value)

    def _fraction(self, code: str, kind: Kind) -> str:
        if kind == "F":
            return code
        return f"_F({code}, {10 ** _scale(kind)})"

    def _rescale(self, code: str, kind: Kind, scale: int) -> str:
        shift = scale - _scale(kind)
        return code if shift == 0 else f"({code} * {10 ** shift})"

    def _quotient_terms(self, a: str, ka: Kind, b: str, kb: Kind) -> tuple[str, str]:
        """Numerator and divisor (integer sources) of a / b, scales cancelled: A/10^sa
        divided by B/10^sb is (A*10^sb) / (B*10^sa). With a constant divisor the common
        factor of 10^sb and B*10^sa is cancelled at compile time (same quotient, smaller
        integers: FLOOR((?lon + 74.9150815) / 0.002993) needs no multiplication)."""
        up, down = 10 ** _scale(kb), 10 ** _scale(ka)
        if _is_int_literal(b) and int(b) != 0:  # a zero divisor keeps raising at run time
            divisor = int(b) * down
            common = math.gcd(up, divisor)
            up, divisor = up // common, divisor // common
            return (a if up == 1 else f"({a} * {up})"), str(divisor)
        return (a if up == 1 else f"({a} * {up})"), (b if down == 1 else f"({b} * {down})")

    def _call(self, node: ast.Call) -> tuple[str, Kind]:
        op, args = node.op, node.args
        if op in ("FLOOR", "CEIL") and len(args) == 1 and isinstance(args[0], ast.Call) \
                and args[0].op == "/" and len(args[0].args) == 2:
            (a, ka), (b, kb) = (self.expr(x) for x in args[0].args)
            if not (_numeric(ka) and _numeric(kb)) or "F" in (ka, kb):
                raise NoFast(node)
            num, den = self._quotient_terms(a, ka, b, kb)
            # a/b = (A*10^sb) / (B*10^sa); Python's // is the exact floor for any signs
            if op == "FLOOR":
                return f"(({num}) // ({den}))", ("D", 0)
            return f"(-((-({num})) // ({den})))", ("D", 0)
        if op == "BOUND":
            return self._bound(args[0].name), "B"
        if op == "CONCAT":
            return self._concat(node), "S"
        vals = [self.expr(a) for a in args]
        if op in ("+", "-", "*"):
            (a, ka), (b, kb) = vals
            if not (_numeric(ka) and _numeric(kb)):
                raise NoFast(node)
            if "F" in (ka, kb):
                return f"({self._fraction(a, ka)} {op} {self._fraction(b, kb)})", "F"
            if ka == "I" and kb == "I":
                return f"({a} {op} {b})", "I"
            if op == "*":
                return f"({a} * {b})", ("D", _scale(ka) + _scale(kb))
            scale = max(_scale(ka), _scale(kb))
            return f"({self._rescale(a, ka, scale)} {op} {self._rescale(b, kb, scale)})", ("D", scale)
        if op == "/":
            (a, ka), (b, kb) = vals
            if not (_numeric(ka) and _numeric(kb)):
                raise NoFast(node)
            if "F" in (ka, kb):
                return f"({self._fraction(a, ka)} / {self._fraction(b, kb)})", "F"
            # Fraction(A/10^sa) / (B/10^sb) = (A*10^sb) / (B*10^sa); B = 0 raises
            return f"_F({a} * {10 ** _scale(kb)}, {b} * {10 ** _scale(ka)})", "F"
        if op == "NEG":
            ((a, ka),) = vals
            if not _numeric(ka):
                raise NoFast(node)
            return f"(-{a})", ka
        if op in ("<", ">", "<=", ">=", "=", "!="):
            (a, ka), (b, kb) = vals
            py = {"=": "=="}.get(op, op)
            if _numeric(ka) and _numeric(kb):
                if "F" in (ka, kb):
                    return f"({self._fraction(a, ka)} {py} {self._fraction(b, kb)})", "B"
                scale = max(_scale(ka), _scale(kb))
                return f"({self._rescale(a, ka, scale)} {py} {self._rescale(b, kb, scale)})", "B"
            if ka == kb and ka in ("S", "B"):
                return f"({a} {py} {b})", "B"
            raise NoFast(node)
        if op in ("&&", "||"):
            joiner = " and " if op == "&&" else " or "
            return "(" + joiner.join(self._ebv(a, k) for a, k in vals) + ")", "B"
        if op == "!":
            ((a, ka),) = vals
            return f"(not {self._ebv(a, ka)})", "B"
        if op == "IF":
            (c, kc), (a, ka), (b, kb) = vals
            if ka != kb:
                raise NoFast(node)
            return f"({a} if {self._ebv(c, kc)} else {b})", ka
        if op == "COALESCE":
            return vals[0]  # every fast value is bound; an error goes generic
        if op in ("FLOOR", "CEIL", "ROUND", "ABS") and len(vals) == 1:
            return self._unary(op, *vals[0], node)
        if op in INTEGER_TYPES and len(vals) == 1:
            a, ka = vals[0]
            if ka == "I":
                return a, "I"
            if ka == "B":
                return f"int({a})", "I"
            if isinstance(ka, tuple):
                return (a, "I") if ka[1] == 0 else (f"_trunc({a}, {10 ** ka[1]})", "I")
            raise NoFast(node)
        if op == XSD + "decimal" and len(vals) == 1:
            a, ka = vals[0]
            if ka == "I":
                return a, ("D", 0)
            if isinstance(ka, tuple):
                return a, ka
            raise NoFast(node)
        if op == "STR" and len(vals) == 1:  # xsd:string casts go generic (XPath rules)
            return self._str(*vals[0], node), "S"
        raise NoFast(node)

    def _concat(self, node: ast.Call) -> str:
        """CONCAT of strings, STR(…) of numbers and booleans among them."""
        parts, inputs = [], []
        for arg in node.args:
            if isinstance(arg, ast.Call) and arg.op == "STR" and len(arg.args) == 1:
                value, kind = self.expr(arg.args[0])
                parts.append(self._str(value, kind, arg))
                if kind != "S" and not _is_literal(value):
                    inputs.append(value)  # a conversion: worth remembering
                continue
            value, kind = self.expr(arg)
            if kind != "S":
                raise NoFast(node)  # CONCAT of a non-string is an error: the generic path says so
            parts.append(value)
        text = ("(" + " + ".join(parts) + ")") if parts else "''"
        return self._remembered(text, inputs)

    def _remembered(self, text: str, inputs: list[str]) -> str:
        """``text`` (a string built from ``inputs`` by conversions such as STR of an
        integer) looked up in a bounded memo keyed by those inputs: the same cell
        numbers recur constantly, and the remembered string also keeps its hash for
        the string-id cache. Without conversions the concatenation itself is cheaper."""
        if not inputs:
            return text
        memo, key, local = self.w.const({}), self.w.local("k"), self.w.local("c")
        self.w.emit(f"{key} = ({', '.join(inputs)},)")
        self.w.emit(f"{local} = {memo}.get({key})")
        self.w.emit(f"if {local} is None: {local} = _remember({memo}, {key}, {text})")
        return local

    def _bound(self, name: str) -> str:
        if name not in self.names:
            return "False"
        ident, value, _ = self.slots[self.names.index(name)]
        if value is not None and ident is None:
            return "True"  # computed on the fast path: bound (an error goes generic)
        return f"({ident} is not None)"

    def _unary(self, op: str, a: str, kind: Kind, node: Any) -> tuple[str, Kind]:
        if kind == "I":
            return (f"abs({a})" if op == "ABS" else a), "I"
        if not isinstance(kind, tuple):
            raise NoFast(node)
        scale = kind[1]
        if op == "ABS":
            return f"abs({a})", kind
        if scale == 0:
            return a, kind
        unit = 10**scale
        if op == "FLOOR":
            return f"({a} // {unit})", ("D", 0)
        if op == "CEIL":
            return f"(-((-{a}) // {unit}))", ("D", 0)
        return f"(({a} + {unit // 2}) // {unit})", ("D", 0)  # ROUND: floor(x + 1/2)

    def _str(self, code: str, kind: Kind, node: Any) -> str:
        if kind == "S":
            return code
        if kind == "I":
            return f"str({code})"
        if kind == "B":
            return f"('true' if {code} else 'false')"
        if isinstance(kind, tuple):
            return f"_fmt({code}, {kind[1]})"
        if kind == "F":
            return f"_format_decimal({code})"
        raise NoFast(node)

    @staticmethod
    def _ebv(code: str, kind: Kind) -> str:
        if kind == "B":
            return code
        if kind == "S":
            return f"({code} != '')"
        if _numeric(kind):
            return f"({code} != 0)"
        raise NoFast(kind)

    # -- ids of results -------------------------------------------------------------
    def _encode(self, value: str, kind: Kind) -> str:
        """Source of the id of a fast value (same id as ``Dictionary.encode_value``)."""
        ident = self.w.local("i")
        if kind == "I":
            self.w.emit(f"if not {PAYLOAD_MIN} <= {value} <= {PAYLOAD_MAX}: raise Miss")
            self.w.emit(f"{ident} = _small_int_ids[{value}] if 0 <= {value} < {SMALL_INTS} else "
                        f"{inline_id_source(T_INTEGER, value)}")
        elif isinstance(kind, tuple):
            scale = kind[1]
            if scale > 9:
                raise NoFast(kind)
            scaled = value if scale == 9 else f"({value} * {10 ** (9 - scale)})"
            self.w.emit(f"{ident} = {scaled}")
            self.w.emit(f"if not {PAYLOAD_MIN} <= {ident} <= {PAYLOAD_MAX}: raise Miss")
            self.w.emit(f"{ident} = {inline_id_source(T_DECIMAL, ident)}")
        elif kind == "B":
            self.w.emit(f"{ident} = {INLINE_FLAG | (T_BOOLEAN << TYPE_SHIFT)} | int({value})")
        elif kind == "S":
            self.w.emit(f"{ident} = _strings.get({value})")
            self.w.emit(f"if {ident} is None: {ident} = _string_id({value})")
        else:
            self.w.emit(f"{ident} = _encode_fraction({value})")
        return ident

    # -- steps ----------------------------------------------------------------------
    def add_filter(self, expr: Any) -> None:
        code, kind = self.expr(expr)
        self.w.emit(f"if not {self._ebv(code, kind)}: return None")

    def add_extend(self, var: str, expr: Any) -> None:
        code, kind = self.expr(expr)
        local = self.w.local("e")
        self.w.emit(f"{local} = {code}")
        self.slots.append((None, local, kind))
        self.names.append(var)

    def add_project(self, variables: tuple[str, ...]) -> None:
        """Keep ``variables`` in that order (unbound where the rows have no such column)."""
        positions = [self.names.index(v) if v in self.names else None for v in variables]
        self.slots = [self.slots[i] if i is not None else ("None", None, None) for i in positions]
        self.names = list(variables)

    def add_step(self, step: P.FusedStep) -> None:
        """Emit one fused step, described by the plan node it implements."""
        if isinstance(step, P.Filter):
            self.add_filter(step.expr)
        elif isinstance(step, P.Extend):
            self.add_extend(step.var, step.expr)
        else:
            self.add_project(step.vars)

    def guard_test(self) -> str:
        """Source of the test that some decoded input id has another type code than
        the sample's ('' when nothing was decoded)."""
        return " or ".join(f"(x{i} >> {TYPE_SHIFT}) != {head}" for i, head in sorted(self.w.guards.items()))

    def encode(self, value: str, kind: Kind) -> str:
        """Emit the id computation of a fast value; returns the local holding the id."""
        return self._encode(value, kind)

    def runtime(self) -> dict[str, object]:
        """The helpers generated code refers to (string-id cache, exact conversions)."""
        dictionary = self.dictionary
        strings: dict[str, int] = {}
        encode_value = dictionary.encode_value

        def string_id(text: str) -> int:
            if len(strings) >= _STRING_CACHE_LIMIT:
                strings.clear()
            found = strings[text] = encode_value(text)
            return found

        return dict(_F=exact_ratio, Miss=Miss, _strings=strings, _string_id=string_id, _remember=_remember,
                    _small_int_ids=SMALL_INT_IDS,
                    _encode_fraction=encode_fraction, _fmt=format_scaled, _format_decimal=format_decimal,
                    _trunc=_trunc_div, math=math)

    def finish(self, generic: Callable[[tuple], tuple | None]) -> Callable[[tuple], tuple | None]:
        """The compiled chain: row -> derived row, or None when a FILTER drops it."""
        w = self.w
        outputs = []
        for ident, value, kind in self.slots:
            outputs.append(ident if ident is not None else self._encode(value, kind))
        body = w.lines
        guard = self.guard_test()
        unpack = ", ".join(f"x{i}" for i in range(len(self.schema)))
        src = ["def chunk(row):", "    try:"]
        if self.schema:
            src.append(f"        {unpack}, = row")
        if guard:
            src.append(f"        if {guard}: raise Miss")
        src += [f"        {line}" for line in body]
        result = "(" + ", ".join(outputs) + ("," if len(outputs) == 1 else "") + ")"
        src.append(f"        return {result}")
        src += ["    except Exception:", "        return _generic(row)"]
        namespace = dict(w.consts, _generic=generic, **self.runtime())
        source = "\n".join(src)
        chunk = define(source, "<taxi_rsp pipeline>", namespace)["chunk"]
        chunk.source = source  # type: ignore[attr-defined]
        chunk.form = "generated Python"  # type: ignore[attr-defined]
        return chunk


def _remember(memo: dict, key: tuple, value: str) -> str:
    """Store ``value`` under ``key`` in a generated memo (emptied when full)."""
    if len(memo) >= _STRING_CACHE_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def _is_int_literal(code: str) -> bool:
    """Whether generated source ``code`` is an integer literal such as ``2993``."""
    return code.lstrip("-").isdigit()


def _is_literal(code: str) -> bool:
    """Whether generated source ``code`` is a constant (an integer or string literal)."""
    return _is_int_literal(code) or code[:1] in ("'", '"')


# The ids of the integers 0 .. SMALL_INTS - 1, made once: generated code takes a small
# integer's id from here (grid cells, counts), so equal ids are the same object across
# rows and operators: no int made per row, and a key or row comparison (dict look-ups,
# joins) finds such parts equal by identity without comparing their digits.
SMALL_INTS = 1024
SMALL_INT_IDS = tuple(INLINE_FLAG | (T_INTEGER << TYPE_SHIFT) | v for v in range(SMALL_INTS))


def inline_id_source(type_code: int, value: str) -> str:
    """Source of the inline id of ``value``, a local already checked to be in the payload
    range: the head plus the value, or plus its two's complement when negative - one
    addition on a multi-digit int instead of a mask and an OR.

    >>> inline_id_source(T_INTEGER, "v") == (
    ...     f"({INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)} + v if v >= 0 else "
    ...     f"{(INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)) + (1 << PAYLOAD_BITS)} + v)")
    True
    """
    head = INLINE_FLAG | (type_code << TYPE_SHIFT)
    return f"({head} + {value} if {value} >= 0 else {head + (1 << PAYLOAD_BITS)} + {value})"


def inline_value_source(type_code: int, ident: str) -> str:
    """Source of the payload of ``ident``, an inline id whose head the guard (run first)
    checked: one comparison and one subtraction on a multi-digit int (a comparison makes
    no object; an XOR and a subtraction, or a mask, would make one each). The inverse of
    :func:`inline_id_source`.

    >>> head = INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)
    >>> decode = eval(f"lambda x: {inline_value_source(T_INTEGER, 'x')}")
    >>> [decode(eval(inline_id_source(T_INTEGER, str(v)))) for v in (0, 7, -7, PAYLOAD_MAX, PAYLOAD_MIN)] == [
    ...     0, 7, -7, PAYLOAD_MAX, PAYLOAD_MIN]
    True
    """
    head = INLINE_FLAG | (type_code << TYPE_SHIFT)
    return f"({ident} - {head} if {ident} < {head + _SIGN} else {ident} - {head + (1 << PAYLOAD_BITS)})"


def type_codes(sample: tuple) -> dict[int, int]:
    """Position -> type code of the inline ids of ``sample`` (what generated code is
    specialised on)."""
    return {i: (v >> TYPE_SHIFT) & 0xF for i, v in enumerate(sample) if type(v) is int and v & INLINE_FLAG}


class Miss(Exception):
    """A guard failed or a value left the inline range: take the generic path."""


NOT_CONSTANT = object()  # what constant_value returns for an expression that reads a variable


def constant_value(node: Any, dictionary: Dictionary) -> object:
    """The value of ``node`` when it reads no variable: a literal's, or a call of
    constants folded exactly as the reference compiler does; :data:`NOT_CONSTANT` for a
    variable or a call reading one. NoFast for a term that is no literal (an IRI, a blank
    node) or a constant that raises (the reference decides those).

    >>> d = Dictionary()
    >>> constant_value(ast.Call("+", (ast.Const(Literal("1", XSD + "integer")),) * 2), d)
    2
    >>> constant_value(ast.Var("x"), d) is NOT_CONSTANT
    True
    """
    if isinstance(node, ast.Var):
        return NOT_CONSTANT
    if isinstance(node, ast.Const):
        if not isinstance(node.term, Literal):
            raise NoFast(node)
        return node.term.value()
    if isinstance(node, (IRI, BNode)) or not isinstance(node, ast.Call):
        raise NoFast(node)
    if node.op == "BOUND" or not is_constant(node):
        return NOT_CONSTANT
    try:
        return compile_expr(node, {}, dictionary)(())
    except Exception:  # noqa: BLE001 - a constant that errors stays with the reference
        raise NoFast(node) from None


def is_constant(expr: Any) -> bool:
    """Whether ``expr`` reads no variable (and no BOUND): its value is known when compiling."""
    if isinstance(expr, (ast.Const, IRI, BNode)):
        return True
    return isinstance(expr, ast.Call) and expr.op != "BOUND" and all(is_constant(a) for a in expr.args)


def compile_chunk(
    dictionary: Dictionary,
    schema: tuple[str, ...],
    steps: list[P.FusedStep],
    generic: Step,
    sample: tuple,
) -> Step:
    """One function for ``steps`` (the Filter, Extend and Project plan nodes they
    implement) over rows of ``schema``, specialised on the type codes of ``sample``;
    ``generic`` is the reference chain (row -> row/None). Returns ``generic`` itself
    when some step has no fast form."""
    codes = type_codes(sample)
    compiler = ChunkCompiler(dictionary, schema, codes)
    try:
        for step in steps:
            compiler.add_step(step)
        return compiler.finish(generic)
    except NoFast:
        return generic
