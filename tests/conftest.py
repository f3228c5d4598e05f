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


#: Tests that run for half a minute or more each (``--durations`` of ``make test``) outside the groups above, slowest
#: first: they are collected before the others, so that xdist hands them out early (a group goes first, the largest
#: groups first) and the short tests fill in around them, rather than one of them starting last while the other
#: worker has nothing left to run.
SLOW_FIRST = (
    "tests/test_check_bounds.py",
    "tests/epic/test_kernel.py::test_two_mask_words_match_reference",
    "tests/app/test_page_address.py",
    "tests/epic/test_kernel.py::test_kernel_matches_reference",
    "tests/contract/test_contract.py",
)


def _slow_rank(item) -> int:
    """The place of the first of SLOW_FIRST that starts the test's node id, or after them all."""
    return next((rank for rank, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST))


def pytest_collection_modifyitems(config, items):
    """The tests of SLOW_FIRST first (otherwise in collection order); under xdist, warn about a test that uses a
    shared slow fixture from a module not listed in SHARED_FIXTURE_MODULES."""
    items.sort(key=_slow_rank)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module not in SHARED_FIXTURE_MODULES and set(SHARED_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.warn(pytest.PytestWarning(f"{module} uses a shared slow fixture: add it to SHARED_FIXTURE_MODULES "
                                           "in tests/conftest.py so that xdist builds the fixture once"))
