"""Fixtures shared across test folders."""
import pytest

from analysis.reports import DaskExecutor


@pytest.fixture(scope="session")
def cluster():
    """A dask.distributed LocalCluster with 2 worker processes, as ``--workers 2`` makes it (started
    once per session: its start-up is slow)."""
    with DaskExecutor(workers=2) as executor:
        executor.client.wait_for_workers(2, timeout=60)
        yield executor
