"""A run's stream blocks on Python threads, for the kernels' GIL-free block functions (``nogil=True``).

Every kernel counts a run in stream blocks of ``rng.BLOCK_TRIALS`` trials, each block from its own stream keyed by
its index, so the counts do not depend on which thread runs a block.  The blocks are split into one contiguous span
per thread (``jit.thread_count()``: Numba's thread count, ``--threads``), and each thread makes one call of the
block function over its span, so that Python unboxes the tables once a thread, not once a block.

Python threads rather than a ``prange`` driver (``parallel=True``): Numba's parallel passes (parfor fusion,
inlining the loop body into a generated function, its lowering) were most of a cold compile of the T9A kernels,
and a ``prange`` driver of the Epic block function had LLVM optimise and generate all of its code a second time.
"""
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .jit import thread_count


def block_spans(n_blocks: int) -> list[tuple[int, int]]:
    """The ``(first, end)`` block ranges, one a thread (as many threads as blocks at most; none without blocks)."""
    threads = min(thread_count(), n_blocks)
    edges = [n_blocks * t // threads for t in range(threads + 1)] if threads else []
    return list(zip(edges[:-1], edges[1:]))


def run_spans(work: Callable[[int, int, int], None], spans: list[tuple[int, int]]) -> None:
    """Call ``work(i, first, end)`` for each span ``i`` of ``spans``, each on a thread of its own where there are
    several (``work`` calls a GIL-free block function); re-raises a thread's error."""
    if len(spans) <= 1:
        for i, span in enumerate(spans):
            work(i, *span)
        return
    with ThreadPoolExecutor(len(spans)) as pool:
        for _ in pool.map(lambda i: work(i, *spans[i]), range(len(spans))):
            pass
