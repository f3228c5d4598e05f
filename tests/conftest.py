"""Fixtures shared across test folders."""
import os

# The reproducibility tests compare 1 and 2 Numba threads; on a 1-core machine Numba would start with
# one thread only (set before anything imports numba; more threads than cores is allowed).
os.environ.setdefault("NUMBA_NUM_THREADS", str(max(2, os.cpu_count() or 1)))

import pytest  # noqa: E402

from wargame_odds.analysis.run.numba_cache import prepare_kernels  # noqa: E402
from wargame_odds.analysis.reports import DaskExecutor


def pytest_configure(config):
    """Before any test calls a kernel directly (not through a run, which prepares them itself): stale cached
    kernels removed (wargame_odds.analysis.run.numba_cache.prepare_kernels)."""
    prepare_kernels()


@pytest.fixture(scope="session")
def cluster():
    """A dask.distributed LocalCluster with 2 worker processes, as ``--workers 2`` makes it (started
    once per session: its start-up is slow)."""
    with DaskExecutor(workers=2) as executor:
        executor.client.wait_for_workers(2, timeout=60)
        yield executor


#: Modules whose tests share a fixture too slow to build twice (a session or module fixture is built once
#: per xdist worker), and the group each belongs to: under ``pytest -n N`` (``make test``) the tests of a
#: group run on one worker, so the small report (``local_build``, tests/reports/conftest.py) and the Dask
#: ``cluster`` above are built once, and the turn report of test_report_turn.py too.  A module using one
#: of SHARED_FIXTURES that is missing here still passes; it only builds the fixture again.
SHARED_FIXTURE_MODULES = {
    "tests/reports/test_report_build.py": "small-report",
    "tests/reports/test_report_page.py": "small-report",
    "tests/reports/test_report_browser.py": "small-report",
    "tests/reports/test_report_dask.py": "small-report",
    "tests/decisions/test_decisions_dask.py": "small-report",
    "tests/decisions/test_list_search_dask.py": "small-report",
    "tests/reports/test_report_turn.py": "turn-report",
    "tests/app/test_app_browser.py": "app-browser",  # one app server and one Chromium (tests/app/conftest.py)
    "tests/app/test_app_safety_browser.py": "app-browser",
    "tests/app/test_list_tab_browser.py": "app-browser",
    "tests/app/test_plans_and_examples_browser.py": "app-browser",
    "tests/app/test_sharing_browser.py": "app-browser",
    "tests/app/test_unit_editor_browser.py": "app-browser",
}
SHARED_FIXTURES = ("local_build", "cluster", "turn_build", "app_url", "browser")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's ``load`` scheduling (each test to the next free worker), except that the tests of a module of
    SHARED_FIXTURE_MODULES go to one worker with the rest of their group.  (xdist's own ``loadgroup`` reads
    ``xdist_group`` marks through a node id rename that pytest 9 no longer honours.)"""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return SHARED_FIXTURE_MODULES.get(nodeid.split("::", 1)[0], nodeid)

    return SharedFixtureScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """Under xdist, warn about a test that uses a shared slow fixture from a module not listed above."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module not in SHARED_FIXTURE_MODULES and set(SHARED_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.warn(pytest.PytestWarning(f"{module} uses a shared slow fixture: add it to SHARED_FIXTURE_MODULES "
                                           "in tests/conftest.py so that xdist builds the fixture once"))
