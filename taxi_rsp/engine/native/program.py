"""Fused steps compiled into a typed program for the C interpreter (issue 50, native tier).

:class:`ProgramCompiler` reads the same step descriptions (Extend, Filter, Project plan
nodes) as :class:`~taxi_rsp.engine.compiled.codegen.ChunkCompiler` and gives each
value the same static *kind* (``I`` integer, ``("D", s)`` a decimal scaled by ``10**s``,
``B`` boolean, ``S`` a string, held as its term id), but instead of Python source it
writes instructions for :class:`taxi_rsp.engine.native._program.Program`, which runs
them over int64 registers without a Python object per value. What it cannot type (an
exact ``Fraction`` quotient, string functions of strings, a constant string as a value)
raises :class:`~taxi_rsp.engine.compiled.codegen.NoFast`, and the step chain keeps its
generated Python; at run time a value outside int64 or of another type than the sample
row's is a *miss*, and the reference steps decide that row.

>>> from taxi_rsp.rdf.namespaces import XSD
>>> def dec(text): return ast.Const(Literal(text, XSD + "decimal"))
>>> c = ProgramCompiler(Dictionary(), ("lon",), {0: T_DECIMAL})
>>> lon = ast.Call("+", (ast.Var("lon"), dec("74.9")))  # FLOOR((?lon + 74.9) / 0.005)
>>> operand = c.expr(ast.Call("FLOOR", (ast.Call("/", (lon, dec("0.005"))),)))
>>> operand.kind, [name for name, *_ in c.listing()]  # the scales cancelled while compiling
(('D', 0), ['LOAD_DEC', 'ADD', 'FLOORDIV'])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, NamedTuple

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.compiled.codegen import (
    NOT_CONSTANT,
    SMALL_INT_IDS,
    NoFast,
    compile_chunk,
    constant_value,
    format_scaled,
    type_codes,
)
from taxi_rsp.lang import ast
from taxi_rsp.native import pure_python_requested
from taxi_rsp.rdf.dictionary import T_BOOLEAN, T_DECIMAL, T_INTEGER, Dictionary
from taxi_rsp.rdf.namespaces import INTEGER_TYPES, XSD
from taxi_rsp.rdf.terms import Literal

try:  # built by the install when it has a C compiler
    from taxi_rsp.engine.native._program import OPCODES, Program
except ImportError:
    OPCODES, Program = {}, None

Kind = Any  # "I" | "B" | "S" | ("D", scale)
Step = Callable[[tuple], "tuple | None"]
_LOADS = {T_INTEGER: ("LOAD_INT", "I"), T_DECIMAL: ("LOAD_DEC", ("D", 9)), T_BOOLEAN: ("LOAD_BOOL", "B")}
_COMPARE = {"<": "LT", "<=": "LE", ">": "GT", ">=": "GE", "=": "EQ", "!=": "NE"}
_MAX_SCALE = 18  # 10**18 still fits int64


class Operand(NamedTuple):
    """A value in register ``reg`` of kind ``kind``; ``const`` its value when known
    while compiling (constants live in registers filled once)."""

    reg: int
    kind: Kind
    const: int | None = None


def _numeric(kind: Kind) -> bool:
    return kind == "I" or (isinstance(kind, tuple) and kind[0] == "D")


def _scale(kind: Kind) -> int:
    return 0 if kind == "I" else kind[1]


def programs_available() -> bool:
    """Whether the C interpreter is built, imports, and the run does not ask for pure Python."""
    return Program is not None and not pure_python_requested()


class ProgramCompiler:
    """Compiles steps over rows of ``schema`` whose input ids have the type codes
    ``codes`` (position -> code, from a sample row) into one program."""

    def __init__(self, dictionary: Dictionary, schema: tuple[str, ...], codes: dict[int, int]) -> None:
        self.dictionary = dictionary
        self.codes = codes
        self.code: list[int] = []
        self.registers = 0
        self.constants: dict[int, Operand] = {}  # value -> its register
        self.memos: list[tuple[int, Callable[..., int]]] = []
        # per current schema position: (input position or None, its value once computed)
        self.slots: list[tuple[int | None, Operand | None]] = [(i, None) for i in range(len(schema))]
        self.names = list(schema)
        self.none = -1  # the slot of a projected variable the rows do not have

    # -- registers and instructions ---------------------------------------------------
    def _register(self) -> int:
        self.registers += 1
        return self.registers - 1

    def _emit(self, op: str, d: int = 0, a: int = 0, b: int = 0, c: int = 0) -> int:
        self.code += [OPCODES[op] if OPCODES else op, d, a, b, c]  # type: ignore[list-item]
        return d

    def _op(self, op: str, kind: Kind, *sources: int) -> Operand:
        return Operand(self._emit(op, self._register(), *sources), kind)

    def const(self, value: int, kind: Kind) -> Operand:
        """A register holding ``value`` (one per distinct value)."""
        if value not in self.constants:
            if not -(1 << 63) <= value < (1 << 63):
                raise NoFast(value)
            self.constants[value] = Operand(self._register(), "I", value)
        return self.constants[value]._replace(kind=kind)

    def listing(self) -> list[tuple[Any, ...]]:
        """The instructions as (name, d, a, b, c), for reading and tests."""
        names = {code: name for name, code in OPCODES.items()}
        return [(names.get(self.code[i], self.code[i]), *self.code[i + 1:i + 5]) for i in range(0, len(self.code), 5)]

    # -- values of variables --------------------------------------------------------
    def _var(self, name: str) -> Operand:
        if name not in self.names:
            raise NoFast(name)  # never bound here: the reference raises the error
        at = self.names.index(name)
        position, value = self.slots[at]
        if value is not None:
            return value
        if position is None or position == self.none or self.codes.get(position) not in _LOADS:
            raise NoFast(name)
        op, kind = _LOADS[self.codes[position]]
        value = Operand(self._emit(op, self._register(), position), kind)
        self.slots[at] = (position, value)
        return value

    # -- expressions ----------------------------------------------------------------
    def expr(self, node: Any) -> Operand:
        """The operand holding ``node``'s value (raises NoFast)."""
        if isinstance(node, ast.Var):
            return self._var(node.name)
        value = constant_value(node, self.dictionary)
        return self._call(node) if value is NOT_CONSTANT else self._constant(value)

    def _constant(self, value: object) -> Operand:
        if isinstance(value, bool):
            return self.const(int(value), "B")
        if type(value) is int:
            return self.const(value, "I")
        if type(value) is Fraction:
            for scale in range(_MAX_SCALE + 1):
                scaled = value * 10**scale
                if scaled.denominator == 1:
                    return self.const(scaled.numerator, ("D", scale))
        raise NoFast(value)  # an exact quotient or a string as a value: generated Python

    def _rescale(self, a: Operand, scale: int) -> Operand:
        shift = scale - _scale(a.kind)
        if shift == 0:
            return a
        if a.const is not None:
            return self.const(a.const * 10**shift, ("D", scale))
        return self._op("MUL", ("D", scale), a.reg, self.const(10**shift, "I").reg)

    def _quotient(self, op: str, node: ast.Call) -> Operand:
        """FLOOR/CEIL of a quotient: A/10^sa divided by B/10^sb is (A*10^sb) / (B*10^sa),
        exactly; with a constant divisor their common factor is cancelled here."""
        a, b = (self.expr(x) for x in node.args[0].args)  # type: ignore[attr-defined]
        if not (_numeric(a.kind) and _numeric(b.kind)):
            raise NoFast(node)
        up, down = 10 ** _scale(b.kind), 10 ** _scale(a.kind)
        if b.const is not None and b.const != 0:  # a zero divisor misses at run time
            divisor = b.const * down
            common = math.gcd(up, divisor)
            up, divisor = up // common, divisor // common
            num = a if up == 1 else self._op("MUL", "I", a.reg, self.const(up, "I").reg)
            den = self.const(divisor, "I")
        else:
            num = a if up == 1 else self._op("MUL", "I", a.reg, self.const(up, "I").reg)
            den = b if down == 1 else self._op("MUL", "I", b.reg, self.const(down, "I").reg)
        return self._op("FLOORDIV" if op == "FLOOR" else "CEILDIV", ("D", 0), num.reg, den.reg)

    def _call(self, node: ast.Call) -> Operand:
        op, args = node.op, node.args
        if op in ("FLOOR", "CEIL") and len(args) == 1 and isinstance(args[0], ast.Call) \
                and args[0].op == "/" and len(args[0].args) == 2:
            return self._quotient(op, node)
        if op == "BOUND":
            return self._bound(args[0].name)
        if op == "CONCAT":
            return self._concat(node.args)
        values = [self.expr(a) for a in args]
        if op in ("+", "-", "*"):
            a, b = values
            if not (_numeric(a.kind) and _numeric(b.kind)):
                raise NoFast(node)
            name = {"+": "ADD", "-": "SUB", "*": "MUL"}[op]
            if a.kind == "I" and b.kind == "I":
                return self._op(name, "I", a.reg, b.reg)
            if op == "*":
                return self._op(name, ("D", _scale(a.kind) + _scale(b.kind)), a.reg, b.reg)
            scale = max(_scale(a.kind), _scale(b.kind))
            return self._op(name, ("D", scale), self._rescale(a, scale).reg, self._rescale(b, scale).reg)
        if op == "NEG" and _numeric(values[0].kind):
            return self._op("NEG", values[0].kind, values[0].reg)
        if op in _COMPARE:
            a, b = values
            if _numeric(a.kind) and _numeric(b.kind):
                scale = max(_scale(a.kind), _scale(b.kind))
                a, b = self._rescale(a, scale), self._rescale(b, scale)
            elif not (a.kind == b.kind == "B"):
                raise NoFast(node)  # strings compare by their text: generated Python
            return self._op(_COMPARE[op], "B", a.reg, b.reg)
        if op in ("&&", "||"):
            result = self._ebv(values[0])
            for value in values[1:]:
                result = self._op("AND" if op == "&&" else "OR", "B", result.reg, self._ebv(value).reg)
            return result
        if op == "!":
            return self._op("NOT", "B", self._ebv(values[0]).reg)
        if op == "IF":
            test, a, b = values
            if a.kind != b.kind:
                raise NoFast(node)
            return self._op("IF", a.kind, self._ebv(test).reg, a.reg, b.reg)
        if op == "COALESCE":
            return values[0]  # every typed value is bound; an error is a miss
        if op in ("FLOOR", "CEIL", "ROUND", "ABS") and len(values) == 1:
            return self._unary(op, values[0], node)
        if op in INTEGER_TYPES and len(values) == 1:
            (a,) = values
            if a.kind in ("I", "B"):
                return a._replace(kind="I")
            if isinstance(a.kind, tuple):
                if a.kind[1] == 0:
                    return a._replace(kind="I")
                return self._op("TRUNCDIV", "I", a.reg, self.const(10 ** a.kind[1], "I").reg)
        if op == XSD + "decimal" and len(values) == 1 and _numeric(values[0].kind):
            (a,) = values
            return a._replace(kind=("D", _scale(a.kind)))
        if op == "STR" and len(values) == 1:
            return self._remember([values[0]], [None])
        raise NoFast(node)

    def _unary(self, op: str, a: Operand, node: Any) -> Operand:
        if not _numeric(a.kind):
            raise NoFast(node)
        if op == "ABS":
            return self._op("ABS", a.kind, a.reg)
        if a.kind == "I":
            return a
        scale = a.kind[1]
        if scale == 0:
            return a
        unit = self.const(10**scale, "I")
        if op == "FLOOR":
            return self._op("FLOORDIV", ("D", 0), a.reg, unit.reg)
        if op == "CEIL":
            return self._op("CEILDIV", ("D", 0), a.reg, unit.reg)
        half = self._op("ADD", a.kind, a.reg, self.const(10**scale // 2, "I").reg)  # ROUND: floor(x + 1/2)
        return self._op("FLOORDIV", ("D", 0), half.reg, unit.reg)

    def _bound(self, name: str) -> Operand:
        if name not in self.names:
            return self.const(0, "B")
        position, value = self.slots[self.names.index(name)]
        if position is None:
            return self.const(1, "B")  # computed here: bound (an error is a miss)
        if position == self.none:
            return self.const(0, "B")
        return self._op("BOUND", "B", position)

    def _concat(self, args: list[Any]) -> Operand:
        """CONCAT of constant strings and STR(…) of typed values: one MEMO."""
        inputs: list[Operand] = []
        parts: list[str | None] = []  # None: the next input's lexical form
        for arg in args:
            if isinstance(arg, ast.Call) and arg.op == "STR" and len(arg.args) == 1:
                inputs.append(self.expr(arg.args[0]))
                parts.append(None)
            elif isinstance(arg, ast.Const) and isinstance(arg.term, Literal) and type(arg.term.value()) is str:
                parts.append(arg.term.value())  # type: ignore[arg-type]
            else:
                raise NoFast(arg)  # a string input's text: generated Python
        return self._remember(inputs, parts)

    def _remember(self, inputs: list[Operand], parts: list[str | None]) -> Operand:
        """A MEMO of the string made of ``parts`` (each None the next input's lexical
        form) over ``inputs``, copied into consecutive registers."""
        texts = []
        for value in inputs:
            if value.kind == "S" or not (_numeric(value.kind) or value.kind == "B"):
                raise NoFast(value)
            texts.append(_lexical(value.kind))
        first = self.registers
        for value in inputs:
            self._emit("MOV", self._register(), value.reg)
        encode = self.dictionary.encode_value

        def make(*values: int) -> int:
            pieces = iter(text(v) for text, v in zip(texts, values))
            return encode("".join(next(pieces) if part is None else part for part in parts))

        self.memos.append((len(inputs), make))
        return Operand(self._emit("MEMO", self._register(), first, len(self.memos) - 1, len(inputs)), "S")

    def _ebv(self, a: Operand) -> Operand:
        if a.kind == "B":
            return a
        if _numeric(a.kind):
            return self._op("TRUTH", "B", a.reg)
        raise NoFast(a.kind)

    # -- ids of results ---------------------------------------------------------------
    def encode(self, a: Operand) -> int:
        """The register of the term id of ``a`` (the same id as ``Dictionary.encode_value``)."""
        if a.kind == "S":
            return a.reg
        if a.kind == "I":
            return self._emit("ENC_INT", self._register(), a.reg)
        if a.kind == "B":
            return self._emit("ENC_BOOL", self._register(), a.reg)
        if _scale(a.kind) > 9:
            raise NoFast(a.kind)
        return self._emit("ENC_DEC", self._register(), self._rescale(a, 9).reg)

    # -- steps ----------------------------------------------------------------------
    def add_step(self, step: P.FusedStep) -> None:
        """One fused step, described by the plan node it implements."""
        if isinstance(step, P.Filter):
            self._emit("FILTER", 0, self._ebv(self.expr(step.expr)).reg)
        elif isinstance(step, P.Extend):
            self.slots.append((None, self.expr(step.expr)))
            self.names.append(step.var)
        else:
            positions = [self.names.index(v) if v in self.names else None for v in step.vars]
            self.slots = [self.slots[i] if i is not None else (self.none, None) for i in positions]
            self.names = list(step.vars)

    def table_value(self, arg: Any) -> Operand:
        """An aggregate's argument as a group table holds it: an integer, or a decimal of
        at most nine places (NoFast otherwise)."""
        operand = self.expr(arg)
        if operand.kind == "I" or (isinstance(operand.kind, tuple) and operand.kind[1] <= 9):
            return operand
        raise NoFast(arg)

    def binds(self, name: str) -> bool:
        """Whether every row the program passes binds ``name`` (an input column or a
        value computed here: an error is a miss)."""
        return name in self.names and self.slots[self.names.index(name)][0] != self.none

    def output(self, name: str) -> tuple[str, int]:
        """What the program outputs for variable ``name``: ("input", position),
        ("id", register) or ("none", 0)."""
        if name not in self.names:
            return ("none", 0)
        position, value = self.slots[self.names.index(name)]
        if position == self.none:
            return ("none", 0)
        if position is not None:
            return ("input", position)
        return ("id", self.encode(value))  # type: ignore[arg-type]

    def program(self, outputs: list[tuple[str, int]], fallback: Step) -> Any:
        """The :class:`~taxi_rsp.engine.native._program.Program` of what was compiled."""
        if Program is None:
            raise NoFast("the native interpreter is not built")
        constants = [(operand.reg, value) for value, operand in self.constants.items()]
        return Program(self.code, max(self.registers, 1), constants, outputs, self.memos, SMALL_INT_IDS, fallback)


def _lexical(kind: Kind) -> Callable[[int], str]:
    """The lexical form of a typed value (STR of it), as the reference writes it."""
    if kind == "I":
        return str
    if kind == "B":
        return lambda v: "true" if v else "false"
    scale = kind[1]
    return lambda v: format_scaled(v, scale)


def compile_steps(dictionary: Dictionary, schema: tuple[str, ...], steps: list[P.FusedStep],
                  generic: Step, sample: tuple) -> Step:
    """The specialised tier's step compiler: a native program when the interpreter is
    built and every step has a typed form, else generated Python
    (:func:`~taxi_rsp.engine.compiled.codegen.compile_chunk`, which returns ``generic``
    itself when it cannot compile them either)."""
    program = compile_program(dictionary, schema, steps, generic, sample)
    return program if program is not None else compile_chunk(dictionary, schema, steps, generic, sample)


def compile_program(dictionary: Dictionary, schema: tuple[str, ...], steps: list[P.FusedStep],
                    generic: Step, sample: tuple) -> Step | None:
    """``steps`` over rows of ``schema`` as a native program's ``run`` (row -> row or
    None; a miss goes to ``generic``, the reference chain), specialised on the type
    codes of ``sample``; None when the interpreter is not built or a step has no typed
    form."""
    if not programs_available():
        return None
    compiler = ProgramCompiler(dictionary, schema, type_codes(sample))
    try:
        for step in steps:
            compiler.add_step(step)
        outputs = [compiler.output(name) for name in compiler.names]
        return compiler.program(outputs, generic).run
    except NoFast:
        return None
