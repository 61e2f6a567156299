"""C integers for the generated functions the plan compiler builds.

Generated code decodes dictionary ids into Python ints and computes on them (cells,
scaled decimals, sequence numbers). An id is a 63-bit int, so every ``>>``, ``-`` and
comparison on it is CPython's multi-digit arithmetic with a new object per result —
a third of what a generated chunk costs. Compiled by Cython, the same function can keep
those values in C ``long long`` variables; :func:`type_integers` rewrites a function's
source so that it does, where that cannot change what it computes:

* only inside a *guarded region*: the body of a ``try`` whose handler catches
  ``Exception`` and hands the row to the generic path (every generated fast path has
  that shape). Whatever does not fit a C integer fails there — a value that is not an
  int, or out of range (``OverflowError`` on conversion), an operation that would
  overflow (``cython.overflowcheck``) — and the generic path computes the answer, as it
  already does for any guard miss;
* only for integer expressions: int literals, ``+ - * // % & | ^``, ``>>`` by a small
  constant, unary minus (written ``0 - x`` so it is overflow-checked too), conditional
  expressions, and names that hold such values. Cython keeps Python's semantics for
  ``//``, ``%`` and ``>>`` on C integers (floor, not truncation);
* only where the value provably fits 64 bits: every expression gets the range of its
  values (an id is in [0, 2**63), narrowed by the type guard the generated code puts first
  and by the tests of conditional expressions, then interval arithmetic); an operation
  that may not fit — a decimal scaled up for an exact division, say — stays Python
  arithmetic on boxed operands (``cython.cast(object, v)``), exact at any size, instead
  of overflowing into the generic path on every row. The overflow check stays as the net
  under these ranges;
* a local becomes a C variable when every assignment to it is such an expression inside
  a guarded region and it is read there only; a name bound from a row (tuple unpacking,
  subscript) keeps its object and gets a C *shadow* (``x2_c = _taxi_as_c(x2)``, see
  ``AS_C``) read by the integer
  expressions, so rows and keys still carry the original objects;
* literals outside the ``int`` range become typed locals (Cython would otherwise make
  them Python objects and box the whole expression).

The interpreted path never sees this: it is the reference the compiled code is tested
against (``tests/test_generated.py``, ``tests/test_cint.py``).

>>> src = '''
... def f(row):
...     try:
...         x0, x1 = row
...         v = x1 - 5188146770730811392
...         return (x0, v // 10)
...     except Exception:
...         return None
... '''
>>> print(type_integers(src))  # doctest: +NORMALIZE_WHITESPACE
@cython.overflowcheck(True)
@cython.locals(v=cython.longlong, x1_c=cython.longlong, _c0=cython.longlong)
def f(row):
    _c0 = 5188146770730811392
    try:
        x0, x1 = row
        x1_c = _taxi_as_c(x1)
        v = x1_c - _c0
        return (x0, v // 10)
    except Exception:
        return None
"""

from __future__ import annotations

import ast

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# The conversion of a shadowed source to its C integer: Cython's own conversion calls
# PyLong_AsLongLong for any int of three 30-bit digits, which every id is (a tenth of a
# compiled chunk's cost); this one reads up to three digits inline and hands anything
# else to PyLong_AsLongLong (the same results and errors: TypeError, OverflowError)
AS_C = "_taxi_as_c"
AS_C_DECLARATION = '''cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030C0000 && !defined(PYPY_VERSION)
    #include "cpython/longintrepr.h"
    static CYTHON_INLINE PY_LONG_LONG taxi_rsp_as_c(PyObject *o) {
        if (PyLong_CheckExact(o)) {
            const digit *d = ((PyLongObject *)o)->ob_digit;
            switch (Py_SIZE(o)) {
                case 0: return 0;
                case 1: return (PY_LONG_LONG)d[0];
                case -1: return -(PY_LONG_LONG)d[0];
                case 2: return ((PY_LONG_LONG)d[1] << PyLong_SHIFT) | (PY_LONG_LONG)d[0];
                case 3:
                    if (d[2] < ((digit)1 << (63 - 2 * PyLong_SHIFT)))
                        return ((((PY_LONG_LONG)d[2] << PyLong_SHIFT) | (PY_LONG_LONG)d[1]) << PyLong_SHIFT)
                               | (PY_LONG_LONG)d[0];
                    break;
            }
        }
        return PyLong_AsLongLong(o);
    }
    #else
    static CYTHON_INLINE PY_LONG_LONG taxi_rsp_as_c(PyObject *o) { return PyLong_AsLongLong(o); }
    #endif
    """
    long long _taxi_as_c "taxi_rsp_as_c" (object) except? -1
'''
_C_LITERAL = 1 << 31  # Cython types a literal outside +-2**31 as a Python object
_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.BitAnd, ast.BitOr, ast.BitXor)
_C_TYPE = "cython.longlong"


def as_c(value: object) -> int:
    """What ``AS_C`` computes, in Python (to run a rewritten source interpreted): the
    int itself in the 64-bit range, else the error the C conversion raises.

    >>> as_c(5188146770730811392), as_c(True)
    (5188146770730811392, 1)
    """
    if not isinstance(value, int):
        raise TypeError(f"an integer is required, not {type(value).__name__}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError("Python int too large to convert to C long long")
    return int(value)


def type_integers(source: str) -> str:
    """``source`` (generated functions only) with C integer locals where they are safe;
    functions with none are returned unchanged. The result needs ``import cython``."""
    tree = ast.parse(source)
    changed = [isinstance(fn, ast.FunctionDef) and _typed(fn) for fn in tree.body]
    return ast.unparse(tree) if any(changed) else source


def _typed(fn: ast.FunctionDef) -> bool:
    """Give the function (in place: the tree is type_integers' own) C integer locals;
    False (and ``fn`` untouched) when none is safe."""
    facts = _Facts(fn)
    taken = {n.id for n in facts.nodes if isinstance(n, ast.Name)} | {n.arg for n in facts.nodes if isinstance(n, ast.arg)}
    rewriter = _Rewriter(facts, facts.typed_names(), taken)
    rewriter.rewrite(fn)  # changes nothing unless it finds an integer expression
    if not rewriter.changed:
        return False
    declared = [*sorted(rewriter.typed), *(rewriter.shadow[s] for s in sorted(rewriter.shadowed)),
                *rewriter.constants.values()]
    fn.body[:0] = [ast.Assign([ast.Name(name, ast.Store())], ast.Constant(value))
                   for value, name in rewriter.constants.items()]
    _insert_shadows(fn, rewriter)
    fn.decorator_list = [
        _attribute_call("overflowcheck", [ast.Constant(True)], []),
        _attribute_call("locals", [], [ast.keyword(name, _cython_attribute("longlong")) for name in declared]),
        *fn.decorator_list,
    ]
    ast.fix_missing_locations(fn)
    return True


class _Facts:
    """What one function binds and reads, and where (inside a guarded region or not)."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.nodes = nodes = list(ast.walk(fn))  # walked once, read several times
        self.guarded: set[int] = set()  # ids of the nodes inside guarded regions
        for node in nodes:
            if isinstance(node, ast.Try) and any(_catches_exception(h) for h in node.handlers):
                for statement in node.body:
                    self.guarded |= {id(n) for n in ast.walk(statement)}
        self.values: dict[str, list[ast.expr]] = {}  # name -> values of its simple assignments
        self.unsafe: set[str] = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        self.sources: set[str] = set()  # names bound once from a row, in a guarded region
        bindings: dict[str, int] = {}
        simple_targets = {id(e) for node in nodes if isinstance(node, ast.Assign) and len(node.targets) == 1
                          for e in [node.targets[0], *getattr(node.targets[0], "elts", ())]}
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                guarded = id(node) in self.guarded
                if isinstance(target, ast.Name):
                    bindings[target.id] = bindings.get(target.id, 0) + 1
                    self.values.setdefault(target.id, []).append(node.value)
                    if not guarded:
                        self.unsafe.add(target.id)
                    elif isinstance(node.value, ast.Subscript):
                        self.sources.add(target.id)
                    continue
                if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                    for element in target.elts:
                        bindings[element.id] = bindings.get(element.id, 0) + 1
                        (self.sources if guarded else self.unsafe).add(element.id)
                    continue
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                if id(node) not in simple_targets:  # bound by for, with, :=, +=, ...
                    self.unsafe.add(node.id)
            elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                self.unsafe |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.unsafe.add(node.name)
        self.sources = {s for s in self.sources - self.unsafe if bindings[s] == 1}
        self.source_spans = _guard_spans(nodes, self.sources)
        self.loaded_outside = {n.id for n in nodes if isinstance(n, ast.Name)
                               and isinstance(n.ctx, ast.Load) and id(n) not in self.guarded}

    def typed_names(self) -> dict[str, Span]:
        """Locals that can be C variables, with the range of their values: assigned
        integer expressions only, all in guarded regions, read nowhere else, and every
        value provably inside 64 bits for ids in range (straight-line code: a name is
        resolved once the names its values read are)."""
        candidates = {name for name in self.values
                      if name not in self.unsafe and name not in self.sources and name not in self.loaded_outside}
        env: dict[str, Span] = dict(self.source_spans)
        progress = True
        while progress:
            progress = False
            for name in sorted(candidates - env.keys()):
                spans = [self.span(value, env) for value in self.values[name]]
                if all(spans):
                    env[name] = (min(lo for lo, _ in spans), max(hi for _, hi in spans))  # type: ignore[misc]
                    progress = True
        return {name: span for name, span in env.items() if name in candidates}

    def is_int(self, node: ast.expr, typed: dict[str, Span]) -> bool:
        """Whether ``node`` is an integer expression over C-typable names whose every
        part stays inside 64 bits."""
        return self.span(node, {**self.source_spans, **typed}) is not None

    def span(self, node: ast.expr, env: dict[str, Span]) -> Span | None:
        """The range of an integer expression's value (None: not an integer expression,
        or a part of it may leave 64 bits, e.g. a decimal scaled for a division: such a
        part stays Python arithmetic, exact at any size)."""
        value = _folded(node)
        if value is not None:
            return _within((value, value))
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.BinOp):
            left = self.span(node.left, env)
            if left is None:
                return None
            if isinstance(node.op, ast.RShift):
                k = _folded(node.right)
                return (left[0] >> k, left[1] >> k) if k is not None and 0 <= k < 63 else None
            right = self.span(node.right, env)
            return None if right is None else _within(_binary(node.op, left, right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.span(node.operand, env)
            if operand is None or isinstance(node.op, ast.UAdd):
                return operand
            return _within((-operand[1], -operand[0]))
        if isinstance(node, ast.IfExp):
            when_true, when_false = _narrowed(node.test, env)
            body, orelse = self.span(node.body, when_true), self.span(node.orelse, when_false)
            return None if body is None or orelse is None else (min(body[0], orelse[0]), max(body[1], orelse[1]))
        return None


Span = tuple[int, int]
_ID_SPAN: Span = (0, INT64_MAX)  # every dictionary id


def _within(span: Span | None) -> Span | None:
    return span if span is not None and INT64_MIN <= span[0] and span[1] <= INT64_MAX else None


def _binary(op: ast.operator, a: Span, b: Span) -> Span | None:
    """The range of ``a op b`` for value ranges a and b (None: not an integer operation)."""
    if isinstance(op, ast.Add):
        return a[0] + b[0], a[1] + b[1]
    if isinstance(op, ast.Sub):
        return a[0] - b[1], a[1] - b[0]
    if isinstance(op, ast.Mult):
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if isinstance(op, ast.FloorDiv):
        if b[0] > 0 or b[1] < 0:  # floor division is monotone in each operand then
            corners = [x // y for x in a for y in b]
            return min(corners), max(corners)
        bound = max(abs(a[0]), abs(a[1]))  # a zero divisor raises (the generic path answers)
        return -bound, bound
    if isinstance(op, ast.Mod):
        bound = max(abs(b[0]), abs(b[1]))
        return -bound, bound
    if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        if a[0] >= 0 and b[0] >= 0:
            top = min(a[1], b[1]) if isinstance(op, ast.BitAnd) else (1 << max(a[1], b[1]).bit_length()) - 1
            return 0, top
        return INT64_MIN, INT64_MAX  # of two 64-bit values: 64 bits
    return None


def _narrowed(test: ast.expr, env: dict[str, Span]) -> tuple[dict[str, Span], dict[str, Span]]:
    """The ranges where ``test`` holds and where it does not, for ``name <op> constant``
    (how decoding picks a number's sign: ``x - HEAD if x < HALF else x - HEAD2``)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
            and test.left.id in env):
        return env, env
    bound = _folded(test.comparators[0])
    if bound is None:
        return env, env
    name, op, (lo, hi) = test.left.id, test.ops[0], env[test.left.id]
    below, above = (min(hi, bound - 1), max(lo, bound))  # x < bound / x >= bound
    if isinstance(op, ast.Lt):
        true, false = (lo, below), (above, hi)
    elif isinstance(op, ast.GtE):
        true, false = (above, hi), (lo, below)
    elif isinstance(op, ast.LtE):
        true, false = (lo, min(hi, bound)), (max(lo, bound + 1), hi)
    elif isinstance(op, ast.Gt):
        true, false = (max(lo, bound + 1), hi), (lo, min(hi, bound))
    else:
        return env, env
    # an empty side is a branch never taken: any range will do (the overflow check stays)
    return ({**env, name: true if true[0] <= true[1] else (lo, hi)},
            {**env, name: false if false[0] <= false[1] else (lo, hi)})


def _guard_spans(nodes: list[ast.AST], sources: set[str]) -> dict[str, Span]:
    """The range of each source: an id, narrowed by the type guard generated code puts
    first (``if (x >> 58) != CODE or ...: raise _Miss``: past it, x is an id of that code)."""
    spans = dict.fromkeys(sources, _ID_SPAN)
    for node in nodes:
        if not (isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], ast.Raise)):
            continue
        parts = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or) else [node.test]
        for part in parts:
            if (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.NotEq)
                    and isinstance(part.left, ast.BinOp) and isinstance(part.left.op, ast.RShift)
                    and isinstance(part.left.left, ast.Name) and part.left.left.id in spans):
                shift, code = _folded(part.left.right), _folded(part.comparators[0])
                if shift is not None and code is not None and 0 <= shift < 63 and code >= 0:
                    spans[part.left.left.id] = (code << shift, ((code + 1) << shift) - 1)
    return spans


class _Rewriter:
    """Rewrites the integer expressions of a guarded region for C variables."""

    def __init__(self, facts: _Facts, typed: dict[str, Span], taken: set[str]) -> None:
        self.facts, self.typed, self.taken = facts, typed, taken
        self.constants: dict[int, str] = {}  # literal -> its typed local
        self.shadow: dict[str, str] = {}  # source name -> its C shadow's name
        self.shadowed: set[str] = set()  # the sources an integer expression reads
        self.done: set[int] = set()  # ids of the nodes of rewritten (proven) expressions
        self.changed = False

    def _name(self, wanted: str) -> str:
        name, n = wanted, 0
        while name in self.taken:
            n += 1
            name = f"{wanted}{n}"
        self.taken.add(name)
        return name

    def rewrite(self, fn: ast.FunctionDef) -> None:
        """Rewrite, in the guarded regions: the integer values assigned to names, the
        comparisons of integers, and negations (anywhere: ``-x`` in a tuple is C too)."""
        facts, rewriter = self.facts, self

        class Visitor(ast.NodeTransformer):
            def visit_Assign(self, node: ast.Assign) -> ast.AST:
                if (id(node) in facts.guarded and isinstance(node.targets[0], ast.Name)
                        and facts.is_int(node.value, rewriter.typed) and rewriter._worth_it(node.value)):
                    node.value = rewriter.integer(node.value)
                    rewriter.changed = True
                return self.generic_visit(node)  # the tests of conditional expressions

            def visit_Compare(self, node: ast.Compare) -> ast.AST:
                operands = (node.left, *node.comparators)
                if (id(node) in facts.guarded and all(facts.is_int(e, rewriter.typed) for e in operands)
                        and rewriter._worth_it(node)):
                    node.left = rewriter.integer(node.left)
                    node.comparators = [rewriter.integer(e) for e in node.comparators]
                    rewriter.changed = True
                return self.generic_visit(node)

            def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
                if id(node) in facts.guarded and isinstance(node.op, ast.USub):
                    if facts.is_int(node, rewriter.typed) and rewriter._worth_it(node):
                        rewriter.changed = True
                        return self.generic_visit(rewriter.integer(node))
                    if rewriter.c_valued(node.operand):  # -x of a 64-bit x may not fit
                        node.operand = _boxed(self.visit(node.operand))
                        return node
                return self.generic_visit(node)

            def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
                # not provably inside 64 bits: Python arithmetic, exact at any size (Cython
                # would compute an operation of two C values in C, overflow and all)
                boxed = (id(node) in facts.guarded and id(node) not in rewriter.done
                         and not facts.is_int(node, rewriter.typed))
                left = boxed and rewriter.c_valued(node.left)
                right = boxed and rewriter.c_valued(node.right)
                node = self.generic_visit(node)
                if left:
                    node.left = _boxed(node.left)
                if right:
                    node.right = _boxed(node.right)
                return node

        Visitor().visit(fn)

    def c_valued(self, node: ast.expr) -> bool:
        """Whether Cython computes ``node`` as a C integer: it reads a C local."""
        return self.facts.is_int(node, self.typed) and any(
            isinstance(n, ast.Name) and n.id in self.typed for n in ast.walk(node))

    def _worth_it(self, node: ast.AST) -> bool:
        """An expression that reads a C variable or a shadowable source (a constant
        expression is left to Python's constant folding)."""
        return any(isinstance(n, ast.Name) and (n.id in self.typed or n.id in self.facts.sources)
                   for n in ast.walk(node))

    def integer(self, node: ast.expr) -> ast.expr:
        """``node`` (an integer expression) with sources read through their shadows,
        large literals through typed locals, ``-x`` as ``0 - x``; constant parts are
        folded here, exactly (C would compute ``749150815 * 100`` in 32 bits)."""
        result = self._integer(node)
        self.done.add(id(result))
        return result

    def _integer(self, node: ast.expr) -> ast.expr:
        value = _folded(node)
        if value is not None:
            if -_C_LITERAL <= value < _C_LITERAL:
                return ast.Constant(value)
            if value not in self.constants:
                self.constants[value] = self._name(f"_c{len(self.constants)}")
            return ast.Name(self.constants[value], ast.Load())
        if isinstance(node, ast.Name):
            if node.id in self.facts.sources:
                if node.id not in self.shadow:
                    self.shadow[node.id] = self._name(f"{node.id}_c")
                self.shadowed.add(node.id)
                return ast.Name(self.shadow[node.id], ast.Load())
            return node
        if isinstance(node, ast.BinOp):
            node.left = self.integer(node.left)
            if not isinstance(node.op, ast.RShift):
                node.right = self.integer(node.right)
            return node
        if isinstance(node, ast.UnaryOp):
            operand = self.integer(node.operand)
            return operand if isinstance(node.op, ast.UAdd) else ast.BinOp(ast.Constant(0), ast.Sub(), operand)
        if isinstance(node, ast.IfExp):
            node.body, node.orelse = self.integer(node.body), self.integer(node.orelse)
            return node  # its test is a Compare: rewritten on its own when it is an integer one
        raise AssertionError(f"not an integer expression: {ast.dump(node)}")


_FOLD = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.BitAnd: int.__and__,
         ast.BitOr: int.__or__, ast.BitXor: int.__xor__}


def _folded(node: ast.expr) -> int | None:
    """The value of an integer expression of literals only (no division: a zero divisor
    must raise where the generated code runs), else None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _folded(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
        left, right = _folded(node.left), _folded(node.right)
        if left is not None and right is not None:
            return _FOLD[type(node.op)](left, right)
    return None


def _insert_shadows(fn: ast.FunctionDef, rewriter: _Rewriter) -> None:
    """``s_c = AS_C(s)`` right after the statement that binds each shadowed source."""
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            out: list[ast.stmt] = []
            for statement in statements:
                out.append(statement)
                for name in sorted(_bound_sources(statement, rewriter.shadowed)):
                    out.append(ast.Assign([ast.Name(rewriter.shadow[name], ast.Store())],
                                          ast.Call(ast.Name(AS_C, ast.Load()), [ast.Name(name, ast.Load())], [])))
            setattr(node, field, out)


def _bound_sources(statement: ast.stmt, sources: set[str]) -> set[str]:
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return set()
    target = statement.targets[0]
    names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
    return {n.id for n in names if isinstance(n, ast.Name) and n.id in sources}


def _catches_exception(handler: ast.ExceptHandler) -> bool:
    return handler.type is None or (isinstance(handler.type, ast.Name) and handler.type.id == "Exception")


def _boxed(node: ast.expr) -> ast.expr:
    """``cython.cast(object, node)``: the C value as a Python int."""
    return ast.Call(_cython_attribute("cast"), [ast.Name("object", ast.Load()), node], [])


def _cython_attribute(name: str) -> ast.Attribute:
    return ast.Attribute(ast.Name("cython", ast.Load()), name, ast.Load())


def _attribute_call(name: str, args: list[ast.expr], keywords: list[ast.keyword]) -> ast.Call:
    return ast.Call(_cython_attribute(name), args, keywords)
