"""Graph-local BGP matching: find all mappings of a set of triple patterns inside one
small graph (a graph event, or a static graph), with constants dictionary-encoded.

>>> from taxi_rsp.rdf.dictionary import Dictionary
>>> from taxi_rsp.lang.ast import TriplePattern, Var
>>> from taxi_rsp.rdf.terms import IRI
>>> d = Dictionary()
>>> p = IRI("http://x/p")
>>> matcher = BGPMatcher((TriplePattern(Var("s"), p, Var("o")),), d)
>>> s, o = d.encode(IRI("http://x/a")), d.encode(IRI("http://x/b"))
>>> matcher.schema, matcher.match(index_triples([(s, d.encode(p), o)])) == [(s, o)]
(('s', 'o'), True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import cython

from taxi_rsp.engine.generated import define
from taxi_rsp.lang.ast import TriplePattern, Var
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent, StarGraph, StarLayout

TripleIndex = dict  # predicate id -> list of (subject id, object id); key None -> all triples
_UNSET = object()


@cython.cclass
class EventView:
    """One graph event as the windows see it: its triple index is built on first use,
    once for all windows; a :class:`StarGraph` event is matched without one. One is made
    per event: compiled, an extension type (cheaper to build, see
    :class:`~taxi_rsp.engine.report.Trigger`)."""

    event = cython.declare(object, visibility="readonly")
    # the event's graph, and its star layout (None: not a star graph), read from the event
    # once here rather than by each window's matcher (compiled, these are struct fields:
    # a matcher typed with EventView reads them without an attribute look-up)
    triples = cython.declare(object, visibility="readonly")
    layout = cython.declare(object, visibility="readonly")
    # a star graph's objects and subject, read once here for every star matcher
    objects = cython.declare(tuple, visibility="readonly")
    subject = cython.declare(object, visibility="readonly")
    _index = cython.declare(object)  # TripleIndex | None

    def __init__(self, event: GraphEvent) -> None:
        self.event = event
        triples = event.triples
        self.triples = triples
        if type(triples) is StarGraph:
            self.layout, self.objects, self.subject = triples.layout, triples.objects, triples.subject
        else:
            self.layout = self.objects = self.subject = None
        self._index = None

    @property
    def index(self) -> TripleIndex:
        index = self._index
        if index is None:
            index = self._index = index_triples(self.triples)
        return index


def index_triples(triples: Iterable[tuple[int, int, int]]) -> TripleIndex:
    """Index a small graph by predicate; ``index[None]`` lists every triple."""
    index: TripleIndex = {None: []}
    everything = index[None]
    for s, p, o in triples:
        everything.append((s, p, o))
        bucket = index.get(p)
        if bucket is None:
            index[p] = [(s, o)]
        else:
            bucket.append((s, o))
    return index


def variable_positions(triples: Iterable[TriplePattern]) -> dict[str, int]:
    """Each variable's column in the rows a BGP produces, in order of first appearance.

    >>> from taxi_rsp.rdf.terms import IRI
    >>> variable_positions([TriplePattern(Var("t"), IRI("urn:p"), Var("x"))])
    {'t': 0, 'x': 1}
    """
    names: dict[str, int] = {}
    for triple in triples:
        for node in (triple.s, triple.p, triple.o):
            if isinstance(node, Var) and node.name not in names:
                names[node.name] = len(names)
    return names


class BGPMatcher:
    """Compiled triple patterns; ``match(index)`` returns rows laid out by ``schema``."""

    def __init__(self, triples: tuple[TriplePattern, ...], dictionary: Dictionary) -> None:
        names = variable_positions(triples)
        self.schema = tuple(names)
        # Most selective first: constant predicates, then constant subjects/objects.
        ordered = sorted(
            triples,
            key=lambda t: (isinstance(t.p, Var), isinstance(t.s, Var) + isinstance(t.o, Var)),
        )
        self._steps = [
            tuple(self._slot(node, names, dictionary) for node in (t.s, t.p, t.o)) for t in ordered
        ]
        self.match = self._compile()
        self._star: dict[StarLayout, object] = {}  # layout -> compiled star matcher or None
        self.match_view = self._view_matcher()

    def _view_matcher(self) -> Callable[[EventView], list[tuple]]:
        """``match_view(view)``: the rows of the event of ``view`` (the same rows, in the
        same order, as ``match``); a star graph goes to the star matcher compiled for its
        layout. A closure over the star matchers: each window calls it for every event."""
        stars = cython.declare(dict, self._star)  # layout -> compiled star matcher or None

        @cython.locals(view=EventView)
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

    def _compile_star(self, layout: StarLayout):
        """A matcher reading a star graph's objects by position (None when the
        patterns are not one subject with constant predicates)."""
        subjects = {step[0] for step in self._steps}
        if len(subjects) != 1 or any(step[1][0] for step in self._steps):
            return None
        ((s_var, s),) = subjects
        lines = ["def star(o, subject):"]  # the graph's objects (a tuple) and subject
        consts: dict[str, int] = {}
        bound: set[int] = set()
        if s_var:
            lines.append(f"    b{s} = subject")
            bound.add(s)
        else:
            consts["S"] = s
            lines.append("    if subject != S: return []")
        for k, (_, (_, p), (o_var, o)) in enumerate(self._steps):
            position = layout.position.get(p)
            if position is None:  # no triple with this predicate in any such graph
                lines = ["def star(o, subject):", "    return []"]
                break
            lines += [f"    v = o[{position}]", "    if v is None: return []"]
            if not o_var:
                consts[f"C{k}"] = o
                lines.append(f"    if v != C{k}: return []")
            elif o in bound:
                lines.append(f"    if v != b{o}: return []")
            else:
                lines.append(f"    b{o} = v")
                bound.add(o)
        else:
            row = ", ".join(f"b{i}" for i in range(len(self.schema)))
            lines.append(f"    return [({row}{',' if len(self.schema) == 1 else ''})]")
        return define("\n".join(lines), "<taxi_rsp star bgp>", dict(consts))["star"]

    @staticmethod
    def _slot(node: object, names: dict[str, int], dictionary: Dictionary) -> tuple[bool, int]:
        if isinstance(node, Var):
            return True, names[node.name]
        return False, dictionary.encode(node)  # type: ignore[arg-type]

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

    def search(self, index: TripleIndex) -> list[tuple]:
        """The interpreted matcher (reference for the generated one)."""
        results: list[tuple] = []
        binding: list = [None] * len(self.schema)
        steps = self._steps
        last = len(steps)

        def bind(is_var: bool, slot: int, value: int, undo: list[int]) -> bool:
            if not is_var:
                return slot == value
            current = binding[slot]
            if current is None:
                binding[slot] = value
                undo.append(slot)
                return True
            return current == value

        def search(k: int) -> None:
            if k == last:
                results.append(tuple(binding))
                return
            (s_var, s), (p_var, p), (o_var, o) = steps[k]
            if not p_var:
                for subject, obj in index.get(p, ()):
                    undo: list[int] = []
                    if bind(s_var, s, subject, undo) and bind(o_var, o, obj, undo):
                        search(k + 1)
                    for slot in undo:
                        binding[slot] = None
            else:
                for subject, predicate, obj in index[None]:
                    undo = []
                    if (
                        bind(s_var, s, subject, undo)
                        and bind(p_var, p, predicate, undo)
                        and bind(o_var, o, obj, undo)
                    ):
                        search(k + 1)
                    for slot in undo:
                        binding[slot] = None

        search(0)
        return results
