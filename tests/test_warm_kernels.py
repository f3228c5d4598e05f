"""scripts/warm_kernels.py (run by `make demo` and `make test`): it compiles exactly the kernel variants the demo
report runs, and its worker processes write Numba's cache only under its lock (two processes writing one function's
cache index at once can give two signatures one data file, numba/numba#4807)."""
import fcntl
import importlib.util
from pathlib import Path

import pytest
from numba.core import caching

from wargame_odds import analysis
from wargame_odds.analysis.reports import load_report

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("warm_kernels", ROOT / "scripts" / "warm_kernels.py")
warm_kernels = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(warm_kernels)


def _variant(system: str, scenario) -> tuple[str, str]:
    """The kernel (and variant) a scenario's run compiles."""
    if system == "epic":
        return system, "turn" if scenario.turn else "assault"
    if system == "t9a":
        return system, "charge and close combat" if scenario.combat is not None else "charge"
    return system, "kernel"


def test_it_compiles_the_variants_the_demo_report_runs_and_no_other():
    report = load_report(ROOT / "reports" / "demo.toml")
    used = set()
    for spec in report.all_points():
        if "scenario_text" in spec:
            used.add(_variant(spec["system"], getattr(analysis, spec["system"]).loads(spec["scenario_text"])))
        else:  # a matrix's matchups and a comparison's: Epic assaults
            assert spec["system"] == "epic"
            used.add(("epic", "assault"))
    warmed = [_variant(system, getattr(analysis, system).load(str(warm_kernels.SHIPPED / name)))
              for group in warm_kernels.GROUPS for system, name in group]
    assert len(warmed) == len(set(warmed)) and set(warmed) == used
    epic_groups = [group for group in warm_kernels.GROUPS if any(system == "epic" for system, _ in group)]
    assert len(epic_groups) == 1  # both Epic variants in one process, which compiles their shared helpers once


@pytest.mark.parametrize("method", ["save", "load"])
def test_a_worker_holds_the_lock_while_it_reads_or_writes_a_cache_index(tmp_path, monkeypatch, method):
    lock = tmp_path / warm_kernels.LOCK_NAME
    seen = []

    def probe(self, *args):
        with open(lock, "a") as other:  # another open file: its exclusive lock must wait for the worker's
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append("free")
            except BlockingIOError:
                seen.append("held")

    for name in ("save", "load"):  # both restored after the test, lock and all
        monkeypatch.setattr(caching.IndexDataCacheFile, name,
                            probe if name == method else getattr(caching.IndexDataCacheFile, name))
    warm_kernels.lock_cache_files(str(lock))
    cache_file = caching.IndexDataCacheFile(str(tmp_path), "function", "stamp")
    getattr(cache_file, method)(*(("key", b"data") if method == "save" else ("key",)))
    assert seen == ["held"]
    with open(lock, "a") as after:  # and lets it go
        fcntl.flock(after, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_workers_compile_a_cold_cache_and_a_stamped_one_loads_in_this_process(tmp_path, monkeypatch):
    """The first run starts the worker processes and stamps the cache; a run that finds the stamp loads the kernels in
    its own process (starting workers would take longer than the load)."""
    pools, ran = [], []

    class RecordingPool:
        def __init__(self, workers, **_):
            pools.append(workers)

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

        def map(self, fn, groups):
            return [fn(group) for group in groups]

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(warm_kernels, "prepare_kernels", lambda: None)
    monkeypatch.setattr(warm_kernels, "compile_kernels", ran.append)
    monkeypatch.setattr(warm_kernels, "ProcessPoolExecutor", RecordingPool)
    monkeypatch.setattr(warm_kernels, "usable_cores", lambda: 2)
    assert warm_kernels.main() == 0 and pools == [2] and ran == list(warm_kernels.GROUPS)
    assert (tmp_path / warm_kernels.STAMP_NAME).read_text() == warm_kernels.stamp_text()
    assert warm_kernels.main() == 0 and pools == [2] and ran == 2 * list(warm_kernels.GROUPS)


def test_the_one_process_switch_compiles_without_workers_or_the_lock(tmp_path, monkeypatch):
    """WARGAME_ODDS_WARM_ONE_PROCESS=1: the plain path (no worker process, Numba's cache-file methods untouched)."""
    ran = []

    def no_pool(*_, **__):
        raise AssertionError("a worker pool was started")

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(warm_kernels.ONE_PROCESS, "1")
    monkeypatch.setattr(warm_kernels, "prepare_kernels", lambda: None)
    monkeypatch.setattr(warm_kernels, "compile_kernels", ran.append)
    monkeypatch.setattr(warm_kernels, "ProcessPoolExecutor", no_pool)
    monkeypatch.setattr(warm_kernels, "usable_cores", lambda: 2)
    save, load = caching.IndexDataCacheFile.save, caching.IndexDataCacheFile.load
    assert warm_kernels.main() == 0 and ran == list(warm_kernels.GROUPS)
    assert (caching.IndexDataCacheFile.save, caching.IndexDataCacheFile.load) == (save, load)
