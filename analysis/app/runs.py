"""Runs off the server's event loop: each in a worker thread, reporting its progress and stopping when
cancelled (through the runner's :data:`analysis.runner.PROGRESS_SINK`), with the numbers of the CLI."""
from __future__ import annotations

import importlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from ..runner import PROGRESS_SINK

#: Runs at once (every open page shares them; more wait their turn).
WORKERS = 4
_POOL = ThreadPoolExecutor(WORKERS, thread_name_prefix="wargame-odds-run")
#: The GdB and T9A kernels run on Numba's threading layer, whose "workqueue" layer may not be entered by two
#: threads at once; the Epic kernel runs its own Python threads and needs no lock.
_NUMBA_PARALLEL = threading.Lock()


class Cancelled(Exception):
    """The player pressed Cancel."""


class Progress:
    """What a run in a worker thread tells the page: trials done of the total, and whether to stop.  It is the
    runner's bar (``bar``, ``update``) for the runs of its thread."""

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


def submit(work, progress: Progress) -> Future:
    """Run ``work()`` in a worker thread with ``progress`` as the bar of its runs."""

    def run():
        if progress.cancelled:
            raise Cancelled()
        token = PROGRESS_SINK.set(progress)
        try:
            return work()
        finally:
            PROGRESS_SINK.reset(token)

    return _POOL.submit(run)


def simulate(system: str, model, *, trials: int, seed: int, precision: float | None):
    """``analysis.<system>.simulate`` as the CLI runs it (a bar asked for: chunks paced to report progress;
    the numbers do not depend on chunks)."""
    module = importlib.import_module(f"analysis.{system}")
    kwargs = {"trials": trials, "seed": seed, "precision": precision, "progress": True}
    if system == "epic":
        return module.simulate(model, **kwargs)
    with _NUMBA_PARALLEL:
        return module.simulate(model, **kwargs)


def compare(setup, *, trials: int, seed: int):
    """``analysis.decisions.compare`` of two whole Epic scenarios (a :class:`~.setups.CompareSetup`)."""
    from ..decisions import compare as compare_options

    return compare_options(setup.option_a.model("option A"), setup.option_b.model("option B"), side=setup.side,
                           labels=setup.labels, trials=trials, seed=seed, progress=True)
