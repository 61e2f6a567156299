"""The native window groups (C state) against their pure-Python twin, the oracle: the
same operations, the same answers after every one (issue 50)."""

from __future__ import annotations

import ctypes

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.native import CGroupTable, PyGroupTable, native_available, group_table_class
from taxi_rsp.engine.native.encoders import TermEncoders
from taxi_rsp.engine.native.group_table import INT64_MAX, KINDS
from taxi_rsp.rdf.dictionary import PAYLOAD_MAX, Dictionary
from tests.native_mutants import build_mutant
from tests.test_compiled_differential import EVENT, EX, JOIN_QUERIES, PREFIX, _outputs, aggregate_queries

pytestmark = pytest.mark.skipif(not native_available(), reason="the native extension is not built")

VALUES = st.one_of(st.integers(-5, 5), st.integers(-(1 << 40), 1 << 40),
                   st.sampled_from([INT64_MAX, -INT64_MAX - 1, INT64_MAX - 3, 1 << 63, PAYLOAD_MAX, PAYLOAD_MAX + 1,
                                    -PAYLOAD_MAX - 2, PAYLOAD_MAX // 10**6 + 1]))


def with_results(table, scales):
    """``table`` making ids through encoders of its own dictionary (both tables of a
    comparison encode the same values in the same order: equal ids)."""
    encoders = TermEncoders(Dictionary())
    table.set_results(scales, encoders)
    return table, encoders


@st.composite
def scripts(draw: st.DrawFn) -> tuple[int, tuple[str, ...], tuple, bool, list[tuple], int]:
    """A table's shape and a sequence of operations: for a window's table inserts (time
    non-decreasing) and expiries, for a table of deltas pushes of ±1 or ±2 rows whose
    arguments may be errors (None); changes taken and flushes for both. A window's table
    may keep the latest row per key (its last element: the latest key's width); its
    inserts then carry a latest key (rarely unbound) and a value that mostly grows."""
    key_width = draw(st.integers(0, 2))
    ordered = draw(st.booleans())
    latest = draw(st.sampled_from([0, 1, 1, 2])) if ordered else 0
    payload = draw(st.integers(0, 2)) if ordered else 0  # ids each entry keeps (records())
    latest_keys = st.tuples(*[st.one_of(st.integers(0, 3), st.integers(0, 3), st.none()) for _ in range(latest)])
    order = 0
    kinds = tuple(draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4)))
    scales = tuple(None if kind == "COUNT" else draw(st.sampled_from([None, 0, 2, 6, 9])) for kind in kinds)
    keys = st.tuples(*[st.one_of(st.none(), st.integers(0, 3), st.just(1 << 62)) for _ in range(key_width)])
    ops: list[tuple] = []
    now = 0
    for _ in range(draw(st.integers(1, 60))):
        step = draw(st.sampled_from(["add", "add", "add", "expire", "changes", "flush"]))
        if step == "add" and ordered:
            now += draw(st.integers(0, 3))
            args = tuple(draw(VALUES) for _ in kinds)
            if latest:
                order += draw(st.sampled_from([1, 1, 1, 2, 0, -1]))  # equal or smaller: a hand-over
                args += draw(latest_keys) + (order,)
            args += tuple(draw(st.one_of(st.none(), st.integers(0, 1 << 62))) for _ in range(payload))
            ops.append(("insert", now + draw(st.integers(1, 10)), draw(keys), args, draw(st.booleans())))
        elif step == "add":
            args = tuple(draw(VALUES) if kind == "COUNT" else draw(st.one_of(VALUES, VALUES, st.none()))
                         for kind in kinds)
            ops.append(("push", draw(keys), args, draw(st.sampled_from([1, 1, 1, -1, -1, 2, -2]))))
        elif step == "expire" and ordered:
            ops.append(("expire", now + draw(st.integers(-2, 8))))
        else:
            ops.append((step if step != "expire" else "changes",))
    return key_width, kinds, scales, ordered, ops, (latest, payload)


# A window table's C entry (GroupTable.c_entry), called as a native program calls it.
C_ENTRY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                            ctypes.c_ssize_t)


def insert_through_c_entry(table, expiry: int, key: tuple, args: tuple) -> bool:
    """Insert through the table's C entry, as a native program does when every part is
    bound and within int64 (else it takes ``insert``: False, nothing done)."""
    values = key + args
    if not hasattr(table, "c_entry") or any(v is None or not -(1 << 63) <= v < 1 << 63 for v in values):
        return False
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    entry = C_ENTRY(get(table.c_entry(), b"taxi_rsp.GroupTable.insert_ids"))
    entry(table, expiry, (ctypes.c_int64 * len(values))(*values), len(values))
    return True


def observe(table, op: tuple) -> object:
    """Run one operation; what it returned, emitted or raised, handles left out. An
    insert marked so goes through the native table's C entry (the pure twin has none)."""
    try:
        if op[0] == "insert":
            if not (len(op) > 4 and op[4] and insert_through_c_entry(table, *op[1:4])):
                table.insert(*op[1:4])
        elif op[0] == "push":
            table.push(*op[1:])
        elif op[0] == "expire":
            table.expire(op[1])
        elif op[0] == "flush":
            emitted: list = []
            retired: list = []
            table.flush([emitted.append], retired.append)
            assert retired == emitted[:1]  # one list, to every sink, then retired
            return emitted
        else:
            changes = table.take_changes()
            for change in changes:
                table.set_output(change[0], ("row", change[1:]))  # an output the flush would emit
            return [change[1:] for change in changes]
    except OverflowError:
        return "overflow"
    return None


def state(table) -> tuple:
    return (len(table), table.next_expiry(), table.entries(), table.records(), table.outputs(), table.pending(),
            table.group_count(), table.has_changes(), table.ever, table.held_values(),
            {s[0]: s[1:] for s in table.states()})


@settings(max_examples=300, deadline=None)
@given(scripts())
@example((1, ("MEDIAN", "MAX"), (2, None), True, [  # an even count's two middle values, as changes and as ids
    ("insert", 5, (1,), (3, 3)), ("insert", 6, (1,), (7, 7)), ("changes",),
    ("insert", 7, (1,), (9, 9)), ("insert", 7, (1,), (1, 1)), ("flush",), ("expire", 6), ("flush",)], (0, 0)))
@example((1, ("MIN", "SUM", "MEDIAN"), (None, 2, None), False, [  # errors, retractions of any value
    ("push", (1,), (5, 5, 5), 1), ("push", (1,), (2, None, 2), 1), ("push", (1,), (8, 8, 8), 2), ("flush",),
    ("push", (1,), (2, None, 2), -1), ("push", (1,), (5, 5, 5), -1), ("flush",), ("push", (1,), (8, 8, 8), -2),
    ("flush",)], (0, 0)))
@example((0, ("SUM",), (2,), True, [  # the one group emptied after decimals: its SUM is a decimal 0
    ("insert", 5, (), (150,)), ("flush",), ("expire", 5), ("flush",)], (0, 0)))
@example((0, ("COUNT", "MIN"), (None, None), True,  # a queue's dead prefix of exactly 17: cut on both sides alike
          [("insert", 1, (), (0, 0))] * 21 + [("insert", 2, (), (0, 0)), ("expire", 1)], (0, 0)))
@example((0, ("MAX",), (None,), True, [  # a queue's newer value one above its last: it pops it
    ("insert", 5, (), (5,)), ("insert", 6, (), (6,)), ("changes",)], (0, 0)))
@example((1, ("COUNT", "MAX"), (None, None), True, [  # the latest row per key: superseded, then expired
    ("insert", 5, (1,), (1, 10, 7, 1)), ("insert", 6, (2,), (1, 20, 7, 2)), ("insert", 6, (1,), (1, 30, 8, 3)),
    ("flush",), ("expire", 5), ("flush",), ("insert", 7, (1,), (1, 40, 7, 3)), ("flush",), ("expire", 6),
    ("flush",)], (1, 0)))
@example((2, ("COUNT", "SUM"), (None, 2), True, [  # through the C entry: latest key, value and payload
    ("insert", 5, (1, 2), (1, 10, 7, 1, 9, 4), True), ("insert", 6, (2, 2), (1, 20, 7, 2, 8, 3), True),
    ("flush",), ("insert", 6, (1, 2), (1, 30, 7, 3, 6, 2), True), ("insert", 7, (1, 2), (1, 40, 7, 3, 5, 1), True),
    ("flush",), ("expire", 6), ("flush",)], (1, 2)))
def test_the_native_table_answers_as_its_pure_twin_after_every_operation(script) -> None:
    key_width, kinds, scales, ordered, ops, (latest, payload) = script
    implicit = key_width == 0
    native, native_ids = with_results(CGroupTable(key_width, kinds, implicit, ordered, latest, payload), scales)
    pure, pure_ids = with_results(PyGroupTable(key_width, kinds, implicit, ordered, latest, payload), scales)
    for op in ops:
        assert observe(native, op) == observe(pure, op), op
        assert state(native) == state(pure), op
        assert len(native_ids.dictionary) == len(pure_ids.dictionary)


def test_an_overflowing_sum_changes_nothing() -> None:
    for cls in (CGroupTable, PyGroupTable):
        table = cls(1, ("SUM", "MEDIAN"))
        table.insert(5, (1,), (INT64_MAX - 1, 3))
        before = (table.entries(), len(table))
        with pytest.raises(OverflowError):
            table.insert(6, (1,), (2, 4))
        with pytest.raises(OverflowError):
            table.insert(6, (2,), (1 << 63, 4))
        assert (table.entries(), len(table)) == before


def test_a_table_grows_past_its_first_capacities_and_reuses_emptied_groups() -> None:
    native, pure = CGroupTable(2, ("COUNT", "MIN", "MEDIAN")), PyGroupTable(2, ("COUNT", "MIN", "MEDIAN"))
    for table in (native, pure):
        for i in range(5000):
            table.insert(i, (i % 701, i % 3), (1, -i, i % 17))
            if i % 50 == 0:
                table.expire(i - 900)
                table.take_changes()
    assert state(native) == state(pure)
    assert observe(native, ("changes",)) == observe(pure, ("changes",))


@pytest.mark.parametrize("values", [range(300), range(300, 0, -1), [i // 25 for i in range(300)]])
def test_a_monotonic_queue_s_dead_prefix_is_cut(values) -> None:
    """The pure twin's MIN/MAX queues ``[head, values…]`` (the C ones are not visible):
    retractions advance the head, and a dead prefix longer than 16 and than the live
    part is cut."""
    table = PyGroupTable(1, ("MIN", "MAX"))
    for i, v in enumerate(values):
        table.insert(i + 60, (0,), (v, v))
        table.expire(i)
        for group in table._groups.values():
            for queue in group.values:
                assert queue[0] - 1 <= max(16, len(queue) - queue[0])


def _outputs_on(table_class, query: str, events) -> list:
    """The specialised tier's outputs with both group operators on ``table_class``."""
    import taxi_rsp.engine.compiled.aggregate as aggregate
    import taxi_rsp.engine.compiled.group as group

    with pytest.MonkeyPatch.context() as patch:
        for module in (aggregate, group):
            patch.setattr(module, "group_table_class", lambda: table_class)
        return _outputs(query, events, compiled=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aggregate_queries(), st.lists(EVENT, min_size=1, max_size=30))
def test_window_aggregates_on_either_state_answer_as_the_reference(query: str, events) -> None:
    """The engine's window aggregates with the C table and with its pure twin (an install
    without a C compiler) both equal the reference interpreter, output for output."""
    reference = _outputs(query, events, compiled=False)
    for table_class in (CGroupTable, PyGroupTable):
        assert _outputs_on(table_class, query, events) == reference, table_class


@pytest.mark.parametrize("template", [t for t in JOIN_QUERIES if "GROUP BY" in t])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=30))
def test_groups_over_deltas_on_either_state_answer_as_the_reference(template: str, events) -> None:
    """Groups above joins, NOT EXISTS, projections with multiplicities and OPTIONAL (unbound
    arguments counted as errors): on either table, the reference interpreter's outputs."""
    query = PREFIX + template.replace("%s", EX)
    reference = _outputs(query, events, compiled=False)
    for table_class in (CGroupTable, PyGroupTable):
        assert _outputs_on(table_class, query, events) == reference, table_class


def test_the_class_is_chosen_once_and_pure_python_is_asked_for_explicitly() -> None:
    assert group_table_class() is CGroupTable
    assert group_table_class(native=False) is PyGroupTable


# Deliberate mistakes in the C source, each of which the differential test above must
# catch: (original, mutant) pairs of one line of _group_table.pyx.
MUTATIONS = [
    ("item += [v.data[n // 2 - 1], v.data[n // 2]]", "item += [v.data[n // 2 - 1], v.data[n // 2 - 1]]"),
    ("row.append(self._mean_term(v.data[n // 2 - 1], v.data[n // 2], scale))",
     "row.append(self._mean_term(v.data[n // 2], v.data[n // 2], scale))"),
    ("while v.size > v.head and v.data[v.size - 1] < value:", "while v.size > v.head and v.data[v.size - 1] <= value - 2:"),
    ("if record[0] > until:", "if record[0] >= until:"),
    ("if latest_slot >= 0 and order <= self._latest_value[latest_slot]:",
     "if latest_slot >= 0 and order < self._latest_value[latest_slot]:"),
    ("if self._latest_count[latest_slot] == 0:", "if self._latest_count[latest_slot] <= 1:"),
    ("if a is not b and a != b:", "if a is not b and a != b and j > width:"),
    ("row.append(self._term(v.data[0] if kind == K_MIN else v.data[n - 1], scale))",
     "row.append(self._term(v.data[0] if kind == K_MIN else v.data[0], scale))"),
    ("self._errors[slot * self.n_args + j] += mult", "self._errors[slot * self.n_args + j] += 1"),
    ("elif kind == K_SUM and not self._held[slot * self.n_args + j]:", "elif kind == K_SUM and rows == 0:"),
    ("self._arg_buf[j] = values[at + j]", "self._arg_buf[j] = values[at]"),  # the C entry
    ("self._latest_buf[j] = values[at + j]", "self._latest_buf[j] = values[at + j - 1]"),
    ("self._payload_buf[j] = values[at + j]", "self._payload_buf[j] = values[at]"),
]


@pytest.mark.slow
@pytest.mark.parametrize("original, mutant", MUTATIONS)
def test_a_mutation_of_the_c_table_fails_the_differential_test(tmp_path, original: str, mutant: str) -> None:
    """The differential test is not vacuous: each mutant of the C source disagrees with
    the pure twin on some generated script (about 20 s each: a C compile)."""
    module = build_mutant(tmp_path, "_group_table", original, mutant)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(globals(), "CGroupTable", module.GroupTable)
        with pytest.raises(AssertionError):
            test_the_native_table_answers_as_its_pure_twin_after_every_operation()
