"""Runs off the server's event loop: each in a thread of its own, reporting its progress and stopping when
cancelled (through the runner's :data:`wargame_odds.analysis.run.runner.PROGRESS_SINK`), with the numbers of the CLI.

Every page runs one thing at a time, and the server at most :data:`MAX_RUNS` (every page together): a run
asked for beyond that is refused at once with one message, never queued behind runs that may take hours.
A page whose session ends (its tab closed) cancels its run (:meth:`Progress.cancel`)."""
from __future__ import annotations

import collections
import importlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from ..intake.errors import UserError
from ..run.runner import PROGRESS_SINK

#: Runs at once on the server, every open page together (each page runs one at a time).
MAX_RUNS = 8
_RUNS = ThreadPoolExecutor(MAX_RUNS, thread_name_prefix="wargame-odds-run")
_SLOTS = threading.BoundedSemaphore(MAX_RUNS)  # taken before a run is handed to the pool, which then never queues
#: Figures are drawn one at a time anyway (pyplot's lock, :mod:`.render`).
_FIGURES = ThreadPoolExecutor(2, thread_name_prefix="wargame-odds-figure")


class Cancelled(Exception):
    """The player pressed Cancel, or closed the page."""


class Busy(UserError):
    """The server runs :data:`MAX_RUNS` already."""

    def __init__(self):
        super().__init__("the server", None, f"{MAX_RUNS} runs are going on already (every open page together)",
                         "press Run again once one has finished, or cancel one")


class FairLock:
    """A lock handed over in the order the threads asked for it; a waiting run whose progress is cancelled stops
    waiting (:class:`Cancelled`)."""

    def __init__(self):
        self._changed = threading.Condition()
        self._queue: collections.deque = collections.deque()
        self._owner: int | None = None

    def acquire(self, progress: "Progress") -> None:
        me = threading.get_ident()
        with self._changed:
            self._queue.append(me)
            try:
                while self._owner is not None or self._queue[0] != me:
                    if progress.cancelled:
                        raise Cancelled()
                    self._changed.wait(0.2)
            finally:
                self._queue.remove(me)
            self._owner = me

    def release(self) -> None:
        """Release the lock if this thread holds it."""
        with self._changed:
            if self._owner == threading.get_ident():
                self._owner = None
                self._changed.notify_all()

    def held(self) -> bool:
        return self._owner == threading.get_ident()


#: The GdB and T9A kernels run on Numba's threading layer, whose "workqueue" layer may not be entered by two
#: threads at once: their runs take turns chunk by chunk (:meth:`Progress.update`), so a long run does not hold
#: back another page's short one.  The Epic kernel runs its own Python threads and needs no lock.
NUMBA_PARALLEL = FairLock()


class Progress:
    """What a run in a worker thread tells the page: trials done of the total, and whether to stop.  It is the
    runner's bar (``bar``, ``update``) for the runs of its thread; between two chunks it hands the Numba lock
    to a run waiting for it, if any."""

    def __init__(self):
        self.done = 0
        self.total = 0
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    def bar(self, total: int, label: str | None = None) -> "Progress":
        self.total, self.done = int(total), 0
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        if self._cancel.is_set():
            raise Cancelled()
        self.done += int(n)
        if NUMBA_PARALLEL.held():  # between two chunks: let a waiting run have its turn
            NUMBA_PARALLEL.release()
            NUMBA_PARALLEL.acquire(self)


def submit(work, progress: Progress) -> Future:
    """Run ``work()`` in a thread of its own with ``progress`` as the bar of its runs; :class:`Busy` at once when
    :data:`MAX_RUNS` runs are going on."""
    if not _SLOTS.acquire(blocking=False):
        raise Busy()

    def run():
        try:
            if progress.cancelled:
                raise Cancelled()
            token = PROGRESS_SINK.set(progress)
            try:
                return work()
            finally:
                PROGRESS_SINK.reset(token)
        finally:
            _SLOTS.release()

    try:
        return _RUNS.submit(run)
    except BaseException:
        _SLOTS.release()
        raise


def draw(work) -> Future:
    """Draw a figure (``work()``) off the event loop."""
    return _FIGURES.submit(work)


def simulate(system: str, model, *, trials: int, seed: int, precision: float | None):
    """``analysis.<system>.simulate`` as the CLI runs it (a bar asked for: chunks paced to report progress;
    the numbers do not depend on chunks)."""
    module = importlib.import_module(f"wargame_odds.analysis.{system}")
    kwargs = {"trials": trials, "seed": seed, "precision": precision, "progress": True}
    if system == "epic":
        return module.simulate(model, **kwargs)
    progress = PROGRESS_SINK.get() or Progress()
    NUMBA_PARALLEL.acquire(progress)
    try:
        return module.simulate(model, **kwargs)
    finally:
        NUMBA_PARALLEL.release()


def compare(setup, *, trials: int, seed: int):
    """``wargame_odds.analysis.decisions.compare`` of two whole Epic scenarios (a :class:`~.setups.CompareSetup`)."""
    from ..decisions import compare as compare_options

    return compare_options(setup.option_a.model("option A"), setup.option_b.model("option B"), side=setup.side,
                           labels=setup.labels, trials=trials, seed=seed, progress=True)
