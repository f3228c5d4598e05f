"""Fixtures shared across test folders."""
import os

# The reproducibility tests compare 1 and 2 Numba threads; on a 1-core machine Numba would start with
# one thread only (set before anything imports numba; more threads than cores is allowed).
os.environ.setdefault("NUMBA_NUM_THREADS", str(max(2, os.cpu_count() or 1)))

import pytest  # noqa: E402

from analysis.reports import DaskExecutor


@pytest.fixture(scope="session")
def cluster():
    """A dask.distributed LocalCluster with 2 worker processes, as ``--workers 2`` makes it (started
    once per session: its start-up is slow)."""
    with DaskExecutor(workers=2) as executor:
        executor.client.wait_for_workers(2, timeout=60)
        yield executor
