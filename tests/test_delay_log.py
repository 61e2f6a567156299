"""The delay log (``outputs/delay_log.py``): a run's delays in bounded memory, summarised
to exactly the numbers of the in-memory sort (``outputs/delays.py``), whatever the block
size, with NULL delays, ties, negative values and blocks that split anywhere."""

from __future__ import annotations

import io
import math
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.listener import DebsTopKWriter
from taxi_rsp.outputs.delay_log import DelayLog
from taxi_rsp.outputs.delays import delay_stats

DELAY = st.one_of(
    st.floats(min_value=0.0, max_value=1e4, allow_nan=False),
    st.sampled_from([0.0, 0.02, 0.02, 0.125, 3.0, 150.0, math.nan]),  # ties and NULLs
    st.floats(min_value=-5.0, max_value=-1e-9),  # (no delay is negative; the rule still orders them)
)


@settings(max_examples=200, deadline=None)
@given(delays=st.lists(DELAY, max_size=300), block=st.integers(min_value=1, max_value=40))
def test_a_spilled_log_summarises_like_the_sort(delays: list[float], block: int) -> None:
    log = DelayLog(block=block)
    for delay in delays:
        log.append(delay)
    assert len(log) == len(delays)
    assert log.spilled == len(delays) - len(delays) % block
    assert delay_stats(log) == delay_stats(array("d", delays))
    handle = io.BytesIO()
    assert log.tofile(handle, len(delays) // 3) == len(delays) - len(delays) // 3
    assert handle.getvalue() == array("d", delays[len(delays) // 3:]).tobytes()
    log.close()
    assert len(log) == 0
    handle.seek(0)
    again = DelayLog(block=block)  # a chunk's file read back by the driver of run --spark
    again.extend_from(handle)
    assert len(again.buffered()) < block and len(again) == len(delays) - len(delays) // 3
    assert delay_stats(again) == delay_stats(array("d", delays[len(delays) // 3:]))
    again.close()


def test_a_long_run_keeps_one_block_in_memory() -> None:
    """A million delays: the buffer never holds more than a block, the rest is in the
    file, and the summary still equals the sort's."""
    log = DelayLog(block=4096)
    values = [((n * 7919) % 10007) / 1000 for n in range(1_000_000)]
    for value in values:
        log.append(value)
        assert len(log.buffered()) < 4096
    assert log.spilled == 1_000_000 - 1_000_000 % 4096
    assert delay_stats(log) == delay_stats(values)
    assert log.recent(len(log) - 3).tolist() == values[-3:]
    log.close()


def test_the_writers_keep_their_delays_in_a_log() -> None:
    from taxi_rsp.listener import PROFILES
    from taxi_rsp.session.sinks import Sink

    writer = DebsTopKWriter(PROFILES["debs-q1"], io.StringIO(), tuple(v for v, _ in PROFILES["debs-q1"].columns),
                            lambda event: ["", ""])
    assert isinstance(writer.delays_ms, DelayLog) and isinstance(writer, Sink)
