"""Where cells run: in this process or on a Dask cluster.

An executor maps a picklable module-level function over cell specs and yields
``(index, result)`` pairs as cells finish (in any order).  Numbers never depend on the
executor: every cell carries its own seed and cell key, so its random streams are the same
wherever it runs.  Reports, sweeps and matrices take an ``executor=`` argument of this shape.

On Dask a cell whose worker dies is simply recomputed on another worker: the scheduler
reschedules the tasks a lost worker held (up to ``distributed.scheduler.allowed-failures``
times), and a cell's result depends only on its spec.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from ..intake.errors import UserError

#: How long ``--scheduler ADDRESS`` waits for a scheduler to answer (Dask's own default is 30 s).
CONNECT_TIMEOUT_S = 5


class Executor(Protocol):
    def map(self, fn: Callable[[Any], Any], specs: Iterable[Any]) -> Iterator[tuple[int, Any]]: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Runs cells one after the other in this process."""

    def map(self, fn, specs):
        for i, spec in enumerate(specs):
            yield i, fn(spec)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "LocalExecutor()"


class DaskExecutor:
    """Runs cells as tasks on a Dask cluster: an existing one (``scheduler="tcp://HOST:8786"``),
    a local one with ``workers`` processes, or an existing ``client``."""

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *, client=None):
        from ..intake.extras import require

        require("dask", "--scheduler" if scheduler is not None else "--workers")
        from dask.distributed import Client, LocalCluster

        self._cluster = None
        self._own_client = client is None
        if client is not None:
            self.client = client
        elif scheduler is not None:
            try:
                self.client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                raise UserError("--scheduler", None, f"cannot connect to {scheduler} ({exc.__class__.__name__})",
                                "the address of a running dask scheduler, e.g. tcp://HOST:8786") from None
        else:
            self._cluster = LocalCluster(n_workers=workers or 1, threads_per_worker=1, processes=True,
                                         dashboard_address=None)
            self.client = Client(self._cluster)

    def map(self, fn, specs):
        from dask.distributed import as_completed

        futures = [self.client.submit(fn, spec, pure=False) for spec in specs]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for future in as_completed(futures):
                yield index[future.key], future.result()
        finally:
            for future in futures:
                future.release()

    def close(self):
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"DaskExecutor({self.client.scheduler.address})"


def executor_options(fn):
    """``--scheduler`` / ``--workers`` click options: where cells run (numbers never depend on it)."""
    import click

    fn = click.option("--workers", type=click.IntRange(min=1), default=None,
                      help="Run cells on a local Dask cluster with N worker processes.")(fn)
    fn = click.option("--scheduler", metavar="tcp://HOST:8786", default=None,
                      help="Run cells on an existing Dask cluster.")(fn)
    return fn


def make_executor(scheduler: str | None = None, workers: int | None = None) -> LocalExecutor | DaskExecutor:
    """The executor the ``--scheduler`` / ``--workers`` options ask for."""
    from ..intake.arguments import check_instance, check_whole

    check_instance("scheduler", scheduler, (str, type(None)), "a Dask scheduler address (text) or None")
    check_whole("workers", workers, 1, 1024, none_ok=True)
    if scheduler is not None and workers is not None:
        raise UserError("command line", "--workers", "cannot be combined with --scheduler",
                        "either --scheduler tcp://HOST:8786 or --workers N")
    if scheduler is None and workers is None:
        return LocalExecutor()
    return DaskExecutor(scheduler=scheduler, workers=workers)
