"""One runner for every rule system: chunked, parallel, reproducible Monte Carlo.

A *job* is a compiled scenario of any rule system.  It exposes

* ``run_chunk(key0, key1, first_block, n_trials) -> int64[n_counts]``: run ``n_trials`` trials
  starting at stream block ``first_block`` and return the aggregated counts;
* ``precision_successes(counts) -> int array``: the success counts of the probabilities that
  ``precision=`` must pin down (the side-level ones).

Random streams are keyed by ``(seed, cell, block)`` where a block is ``BLOCK_TRIALS`` trials, so the
same seed gives the same counts whatever the chunk size, thread count or worker count.  Counts are
summed chunk by chunk: memory stays flat as trials grow.
"""
from __future__ import annotations

import math
import os
import random
import sys
import time
from contextvars import ContextVar
from typing import Protocol

import numba
import numpy as np

from ...kernels.jit import thread_count
from ...kernels.rng import BLOCK_TRIALS

from ..intake.run_limits import MAX_SEED, MAX_THREADS, MAX_TRIALS, SEED_RANGE
from ..intake.bounds import as_precision
from ..intake.errors import ArgumentError
from ..output.estimates import wilson_half_width
from ..output.run_info import RunInfo
from .numba_cache import compile_notice

DEFAULT_TRIALS = 1_000_000
DEFAULT_CHUNK_TRIALS = 1 << 20
DEFAULT_MAX_TRIALS = 200_000_000
PROGRESS_DELAY_S = 2.0  # on a terminal, a run still going after this long shows a progress bar
PROGRESS_STEP_S = 0.25  # while a bar may show, chunks are sized to take about this long, so that it moves
ENGINES = ("kernel", "reference")
#: Where the runs of one thread (or task) report their progress instead of a bar on stderr: a program that
#: embeds the runner (the web app, :mod:`wargame_odds.analysis.app.runs`) sets a sink whose ``bar(total, label)`` gives
#: the bar of a run asked to show one (``progress=True``); its ``update(n)`` may raise to stop the run after a chunk.
PROGRESS_SINK: ContextVar = ContextVar("progress_sink", default=None)
#: Called without arguments after each chunk of trials of every run: the ``wargame-odds`` program ends its start-up
#: pause of the garbage collector here (:func:`wargame_odds.analysis.run.gc_pause.resume_after_first_chunk`).
AFTER_CHUNK: list = []


def _whole(low: int, high: int, none_ok: bool = False, shown: str | None = None):
    def check(name, value):
        if value is None and none_ok:
            return
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
            raise ArgumentError(name, value, f"a whole number from {shown or f'{low} to {high}'}"
                                + (" or None" if none_ok else ""))
    return check


def _precision(name, value):
    if value is None:
        return
    shown, value = value, as_precision(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not math.isfinite(value) \
            or not 0 < value <= 0.5:
        raise ArgumentError(name, shown, "a fraction above 0 up to 0.5, a number of percentage points from 1 to 50, "
                                         "or None")


def _cell(name, value):
    """A stream's cell: a tuple (or list) of whole numbers from 0 to 2**64 - 1 (report cells use 63-bit keys)."""
    if not isinstance(value, (tuple, list)) or not all(
            not isinstance(c, bool) and isinstance(c, (int, np.integer)) and 0 <= c < 2**64 for c in value):
        raise ArgumentError(name, value, "a tuple of whole numbers from 0 to 2**64 - 1")


def _choice(*allowed):
    def check(name, value):
        if not isinstance(value, str) or value not in allowed:
            raise ArgumentError(name, value, "one of " + ", ".join(allowed))
    return check


def _flag(none_ok: bool = False):
    def check(name, value):
        if not (isinstance(value, bool) or (none_ok and value is None)):
            raise ArgumentError(name, value, "true or false" + (" or None" if none_ok else ""))
    return check


#: What the run arguments shared by every ``simulate`` and decision function accept; one place,
#: used by :func:`run` and by report definitions (cell options are checked before anything runs).
ARGUMENT_CHECKS = {
    "trials": _whole(1, MAX_TRIALS),
    "seed": _whole(0, MAX_SEED, shown=SEED_RANGE),
    "max_trials": _whole(1, MAX_TRIALS),
    "chunk_trials": _whole(1, MAX_TRIALS, none_ok=True),
    "threads": _whole(1, MAX_THREADS, none_ok=True),
    "precision": _precision,
    "engine": _choice(*ENGINES),
    "progress": _flag(none_ok=True),
    "paired": _flag(),
    "method": _choice("batch-means", "exact-pairs"),
    "cell": _cell,
}


def check_argument(name: str, value) -> None:
    """Raise :class:`ArgumentError` if ``value`` is not allowed for run argument ``name``."""
    if name in ARGUMENT_CHECKS:
        ARGUMENT_CHECKS[name](name, value)


class Job(Protocol):
    def run_chunk(self, key0: int, key1: int, first_block: int, n_trials: int) -> np.ndarray: ...

    def precision_successes(self, counts: np.ndarray) -> np.ndarray: ...


def stream_key(seed: int, cell: tuple = ()) -> tuple[int, int]:
    """Two 64-bit words keying every stream of (seed, cell); blocks are mixed in by the kernel.  Every
    run and every trace gets its streams here, so ``seed`` and ``cell`` are checked here."""
    check_argument("seed", seed)
    check_argument("cell", cell)
    words = np.random.SeedSequence([int(seed), *[int(c) for c in cell]]).generate_state(2, np.uint64)
    return int(words[0]), int(words[1])


def block_rng(key0: int, key1: int, block: int) -> random.Random:
    """A reference engine's Python generator for one stream block (independent of the kernels')."""
    return random.Random((int(key0) << 128) | (int(key1) << 64) | int(block))


class SilentBar:
    """The progress bar of a run that shows none (``progress`` false: stderr is not a terminal)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


def progress_bar(total: int, progress: bool, label: str | None = None):
    """A trial counter on stderr that appears only once a run has taken :data:`PROGRESS_DELAY_S`
    (tqdm is imported only when a bar may show), or the bar of :data:`PROGRESS_SINK` when one is set."""
    if not progress:
        return SilentBar()
    sink = PROGRESS_SINK.get()
    if sink is not None:
        return sink.bar(total, label)
    from tqdm import tqdm

    return tqdm(total=total, unit="trial", unit_scale=True, file=sys.stderr, leave=False, desc=label,
                delay=PROGRESS_DELAY_S, **_unsized_terminal())


def _unsized_terminal() -> dict:
    """An 80 × 24 screen where stderr is a terminal that reports no size (a pseudo-terminal whose size nobody set,
    as some CI runners and editors open: tqdm would draw its bar 0 columns wide on row 0 of 0, that is nothing),
    else nothing (tqdm measures the terminal itself)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return {}
    return {"ncols": 80, "nrows": 24} if size.columns <= 0 or size.lines <= 0 else {}


def _chunk_size(chunk_trials: int | None) -> int:
    size = DEFAULT_CHUNK_TRIALS if chunk_trials is None else int(chunk_trials)
    return -(-size // BLOCK_TRIALS) * BLOCK_TRIALS


def _next_check(done: int, chunk_trials: int | None) -> int:
    """The trial count at which a ``precision`` run next checks its half-width: after every chunk of a given
    ``chunk_trials``; else after 1, 2, 4 … blocks up to :data:`DEFAULT_CHUNK_TRIALS`, then every
    :data:`DEFAULT_CHUNK_TRIALS`, so a target that needs a few hundred trials stops after one block and a run
    never takes more than about twice the trials its target needs.  The points depend on the arguments only
    (never on the engine's speed), so the numbers do not either."""
    if chunk_trials is not None:
        return done + _chunk_size(chunk_trials)
    if done < DEFAULT_CHUNK_TRIALS:
        return max(BLOCK_TRIALS, 2 * done)
    return done + DEFAULT_CHUNK_TRIALS


def run(
    job: Job,
    *,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    precision: float | None = None,
    max_trials: int = DEFAULT_MAX_TRIALS,
    chunk_trials: int | None = None,
    threads: int | None = None,
    progress: bool | None = None,
    cell: tuple = (),
) -> tuple[np.ndarray, RunInfo]:
    """Run ``job`` and return its summed counts with a :class:`RunInfo`.

    Without ``precision`` exactly ``trials`` trials run.  With ``precision=eps`` chunks run until
    every monitored probability's 95 % Wilson half-width is at most ``eps`` or ``max_trials`` is
    reached (``trials`` is then ignored).  ``progress`` (default: stderr is a terminal) shows a bar
    once the run has taken :data:`PROGRESS_DELAY_S`; the kernels are prepared before the first chunk and a cold
    compile is announced on stderr (:func:`wargame_odds.analysis.run.numba_cache.compile_notice`).
    """
    arguments = {"seed": seed, "precision": precision, "max_trials": max_trials, "chunk_trials": chunk_trials,
                 "threads": threads, "progress": progress}
    if precision is None:
        arguments["trials"] = trials  # ignored with precision
    for name, value in arguments.items():
        check_argument(name, value)
    precision = as_precision(precision)  # 1 = ±1 percentage point
    if progress is None:
        progress = sys.stderr.isatty()
    # a bar that may show gets chunks of about PROGRESS_STEP_S each, measured on the engine as it runs (the counts
    # do not depend on chunks, and a precision run checks its half-width at points set by _next_check only)
    paced = chunk_trials is None and progress
    chunk = _chunk_size(BLOCK_TRIALS * thread_count() if paced else chunk_trials)
    key0, key1 = stream_key(seed, cell)
    target = max_trials if precision is not None else int(trials)
    check_at = _next_check(0, chunk_trials) if precision is not None else target
    old_threads = thread_count()
    if threads is not None:  # (starts Numba's thread pool; without --threads a run that needs none does not)
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    counts = None
    done = 0
    chunks = 0
    half_width = None
    try:
        with progress_bar(target, progress) as bar, compile_notice():
            while done < target:
                n = min(chunk, target - done, check_at - done)
                started = time.perf_counter()
                part = job.run_chunk(key0, key1, done // BLOCK_TRIALS, n)
                if paced:
                    rate = n / max(time.perf_counter() - started, 1e-6)
                    chunk = _chunk_size(min(DEFAULT_CHUNK_TRIALS, max(BLOCK_TRIALS, int(rate * PROGRESS_STEP_S))))
                counts = part if counts is None else counts + part
                done += n
                chunks += 1
                for hook in AFTER_CHUNK:
                    hook()
                bar.update(n)
                if precision is not None and done in (check_at, target):
                    half_width = wilson_half_width(job.precision_successes(counts), done)
                    if half_width <= precision:
                        break
                    check_at = _next_check(done, chunk_trials)
    finally:
        if threads is not None:
            numba.set_num_threads(old_threads)
    info = RunInfo(trials=done, seed=int(seed), cell=tuple(cell), precision=precision, chunks=chunks)
    if precision is not None:
        info.achieved_half_width = half_width
        info.precision_reached = half_width is not None and half_width <= precision
    return counts, info
