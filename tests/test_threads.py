"""kernels/threads.py: a run's stream blocks split into one span a thread, each span one call on a thread of its own
(the Epic, GdB and T9A kernels run their GIL-free block functions this way)."""
import threading

import numba
import pytest

from wargame_odds.kernels.threads import block_spans, run_spans


@pytest.fixture
def threads():
    """Set Numba's thread count (what ``--threads`` sets) for one test."""
    before = numba.get_num_threads()
    yield numba.set_num_threads
    numba.set_num_threads(before)


@pytest.mark.parametrize("n_blocks", [0, 1, 2, 3, 7, 100])
def test_spans_cover_every_block_once_in_order_one_a_thread(n_blocks, threads):
    threads(min(2, numba.config.NUMBA_NUM_THREADS))
    spans = block_spans(n_blocks)
    assert len(spans) == min(numba.get_num_threads(), n_blocks)
    covered = [b for first, end in spans for b in range(first, end)]
    assert covered == list(range(n_blocks))
    sizes = [end - first for first, end in spans]
    assert all(size >= 1 for size in sizes) and (not sizes or max(sizes) - min(sizes) <= 1)


def test_one_thread_one_span(threads):
    threads(1)
    assert block_spans(5) == [(0, 5)]


def test_each_span_is_one_call_and_the_spans_run_at_once():
    """Two spans wait for each other (a barrier): they can only both pass when they run on two threads together."""
    meet = threading.Barrier(2, timeout=60)
    calls = []

    def work(i, first, end):
        meet.wait()
        calls.append((i, first, end))

    run_spans(work, [(0, 3), (3, 5)])
    assert sorted(calls) == [(0, 0, 3), (1, 3, 5)]


def test_a_single_span_runs_here_and_none_runs_nothing():
    calls = []
    run_spans(lambda i, first, end: calls.append((threading.current_thread(), i, first, end)), [(0, 4)])
    assert calls == [(threading.current_thread(), 0, 0, 4)]
    run_spans(lambda *span: calls.append(span), [])
    assert len(calls) == 1


def test_a_threads_error_is_raised_here():
    def work(i, first, end):
        if i == 1:
            raise ValueError("block failed")

    with pytest.raises(ValueError, match="block failed"):
        run_spans(work, [(0, 1), (1, 2)])
