"""The BGP matcher as generated code: the reference's backtracking search unrolled into
nested loops, one per pattern, and for a star graph (one subject, an object per
predicate) a reader of the objects by position. Same rows, same order
(``tests/test_codegen.py``).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

import cython

from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.view import EventView
from taxi_rsp.lang.ast import TriplePattern, Var  # noqa: F401 - Var: the doctest
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import StarLayout

_UNSET = object()


class StarPlan(namedtuple("StarPlan", "subject reads never")):
    """A star matcher's row read from a star graph: ``subject`` is (a variable?, its row
    position or the constant id); each read is (object position, action, slot) with
    action ``bind`` (the object is row position ``slot``), ``same`` (it equals row
    position ``slot``, bound before) or ``const`` (it equals the id ``slot``); an absent
    object (None) matches nothing; ``never``: a predicate no such graph has."""

    __slots__ = ()


class CompiledMatcher(BGPMatcher):
    """:class:`BGPMatcher` with generated ``match`` and ``match_view``."""

    def __init__(self, triples: tuple[TriplePattern, ...], dictionary: Dictionary) -> None:
        super().__init__(triples, dictionary)
        self.match = self._compile()  # type: ignore[method-assign]
        self._star: dict[StarLayout, object] = {}  # layout -> compiled star matcher or None
        self.match_view = self._view_matcher()  # type: ignore[method-assign]

    def _view_matcher(self) -> Callable[[EventView], list[tuple]]:
        """``match_view(view)``: the rows of the event of ``view`` (the same rows, in the
        same order, as ``match``); a star graph goes to the star matcher compiled for its
        layout. A closure over the star matchers: each window calls it for every event."""
        stars = cython.declare(dict, self._star)  # layout -> compiled star matcher or None

        def match_view(view: EventView) -> list[tuple]:
            layout = view.layout
            if layout is not None:
                star = stars.get(layout, _UNSET)
                if star is _UNSET:
                    star = stars[layout] = self._compile_star(layout)
                if star is not None:
                    return star(view.objects, view.subject)  # type: ignore[operator]
            return self.match(view.index)

        return match_view

    def star_plan(self, layout: StarLayout) -> StarPlan | None:
        """How a star graph of ``layout`` gives this matcher's row, read by position
        (None when the patterns are not one subject with constant predicates): what
        both the generated star matcher and a native program's star read follow.

        >>> from taxi_rsp.rdf.terms import IRI
        >>> d = Dictionary()
        >>> p, q = (IRI(f"http://x/{n}") for n in "pq")
        >>> m = CompiledMatcher((TriplePattern(Var("s"), p, Var("o")), TriplePattern(Var("s"), q, Var("o"))), d)
        >>> m.star_plan(StarLayout((d.encode(q), d.encode(p))))
        StarPlan(subject=(True, 0), reads=((1, 'bind', 1), (0, 'same', 1)), never=False)
        """
        subjects = {step[0] for step in self._steps}
        if len(subjects) != 1 or any(step[1][0] for step in self._steps):
            return None
        ((s_var, s),) = subjects
        bound = {s} if s_var else set()
        reads = []
        for _, (_, p), (o_var, o) in self._steps:
            position = layout.position.get(p)
            if position is None:  # no triple with this predicate in any such graph
                return StarPlan((bool(s_var), s), (), True)
            if not o_var:
                reads.append((position, "const", o))
            elif o in bound:
                reads.append((position, "same", o))
            else:
                reads.append((position, "bind", o))
                bound.add(o)
        return StarPlan((bool(s_var), s), tuple(reads), False)

    def _compile_star(self, layout: StarLayout):
        """A matcher reading a star graph's objects by position, following
        :meth:`star_plan` (None when the patterns are not a star)."""
        plan = self.star_plan(layout)
        if plan is None:
            return None
        lines = ["def star(o, subject):"]  # the graph's objects (a tuple) and subject
        if plan.never:
            return define("def star(o, subject):\n    return []", "<taxi_rsp star bgp>", {})["star"]
        consts: dict[str, int] = {}
        s_var, s = plan.subject
        if s_var:
            lines.append(f"    b{s} = subject")
        else:
            consts["S"] = s
            lines.append("    if subject != S: return []")
        for k, (position, action, slot) in enumerate(plan.reads):
            lines += [f"    v = o[{position}]", "    if v is None: return []"]
            if action == "const":
                consts[f"C{k}"] = slot
                lines.append(f"    if v != C{k}: return []")
            elif action == "same":
                lines.append(f"    if v != b{slot}: return []")
            else:
                lines.append(f"    b{slot} = v")
        row = ", ".join(f"b{i}" for i in range(len(self.schema)))
        lines.append(f"    return [({row}{',' if len(self.schema) == 1 else ''})]")
        return define("\n".join(lines), "<taxi_rsp star bgp>", dict(consts))["star"]

    def _compile(self):
        """The search below unrolled into nested loops, one per pattern (same order,
        same rows in the same order), as generated Python source."""
        lines = ["def match(index):", "    out = []", "    get = index.get"]
        bound: set[int] = set()
        consts: dict[str, int] = {}
        depth = 1
        for k, ((s_var, s), (p_var, p), (o_var, o)) in enumerate(self._steps):
            pad = "    " * depth
            parts = [(s_var, s, f"s{k}"), (o_var, o, f"o{k}")]
            if p_var:
                lines.append(f"{pad}for s{k}, p{k}, o{k} in index[None]:")
                parts.insert(1, (p_var, p, f"p{k}"))
            else:
                consts[f"P{k}"] = p
                lines.append(f"{pad}for s{k}, o{k} in get(P{k}, ()):")
            pad += "    "
            for is_var, slot, local in parts:
                if not is_var:
                    consts[f"C{k}{local}"] = slot
                    lines.append(f"{pad}if {local} != C{k}{local}: continue")
                elif slot in bound:
                    lines.append(f"{pad}if {local} != b{slot}: continue")
                else:
                    lines.append(f"{pad}b{slot} = {local}")
                    bound.add(slot)
            depth += 1
        row = ", ".join(f"b{i}" for i in range(len(self.schema)))
        lines.append("    " * depth + f"out.append(({row}{',' if len(self.schema) == 1 else ''}))")
        lines.append("    return out")
        return define("\n".join(lines), "<taxi_rsp bgp>", dict(consts))["match"]
