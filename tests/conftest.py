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


#: Fixtures too slow to build twice, and the xdist group of every test that uses one: under
#: ``pytest -n N --dist loadgroup`` (what ``make test`` runs) a session or module fixture is built once
#: per worker, so each group runs on one worker and builds its fixtures once.
SHARED_FIXTURE_GROUPS = {
    "local_build": "small-report",  # tests/reports/conftest.py: the small report, built once
    "cluster": "small-report",  # the Dask cluster; test_report_dask.py uses it with local_build
    "turn_build": "turn-report",  # tests/reports/test_report_turn.py (module scope)
    "direct": "turn-report",
}


def pytest_collection_modifyitems(items):
    for item in items:
        groups = {SHARED_FIXTURE_GROUPS[name] for name in item.fixturenames if name in SHARED_FIXTURE_GROUPS}
        if groups:
            item.add_marker(pytest.mark.xdist_group(" + ".join(sorted(groups))))
