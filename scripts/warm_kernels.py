"""Compile (or load from the cache) every kernel the README's commands use, so that none of them compiles on first
use: `make demo` runs this before the demo report, `make test` before the suite.

Five kernels, each compiled by running a shipped scenario for a few trials (:data:`GROUPS`): the Epic block
function's assault variant (without the turn code) and its turn variant (each serves every scenario of its kind: the
units a side are a runtime value), the GdB kernel and the T9A kernels (the charge and its close combat).  They are
the only kernels the demo report runs.  A cold compile is single-threaded and takes tens of seconds, so the two
groups run on two processes where two cores are usable: the Epic variants in one (the turn variant reuses the
helpers the assault variant compiled in the same process; compiled in two processes, each would compile them all),
the GdB and T9A kernels in the other.  Each cold compile prints its one-line notice; a warm cache makes this take a
few seconds.

Numba's on-disk cache is not safe for two processes writing one function's entries at once (numba/numba#4807): a
write reads the function's index, adds the entry, numbering its data file from what it read, and writes the index
back, so two writers can give two signatures the same data file.  The groups share functions (every kernel calls
``kernels/rng.py``'s ``seed_stream``, the Epic kernel with an int64 block number, the T9A kernels with a uint64 one),
so the worker processes hold a lock on a file in the cache folder around each read and each write of an index and
its data (:func:`lock_cache_files`).  Where that cannot be done (no ``fcntl``, or a Numba without those methods) the
groups run one after the other in this process, as they do when the cache is known to hold them all (a stamp this
script writes after compiling them, :func:`stamp_text`): loading them takes a few seconds, and starting the worker
processes would double that.
"""
import os
from concurrent.futures import ProcessPoolExecutor
from importlib import resources
from multiprocessing import get_context
from pathlib import Path

import numba

from wargame_odds import analysis
from wargame_odds.analysis.run.numba_cache import prepare_kernels, sources_digest
from wargame_odds.kernels import KERNELS

try:
    import fcntl
except ImportError:  # Windows: one process
    fcntl = None

SHIPPED = resources.files("wargame_odds.analysis") / "scenarios"
#: Groups of (system, shipped scenario) whose run compiles a kernel, each group run in order in one process, the
#: longest first (CPU seconds of each cold compile on a quiet 2-core Xeon, 2026-12-07: Epic assault 20-31 then turn
#: 21-26; T9A close combat 15, charge 0.4 after it, GdB 1-2: docs/performance.md).
GROUPS = (
    (("epic", "epic/assault_marines_vs_warband.toml"), ("epic", "epic/turns/devastators_then_assault_marines.toml")),
    (("t9a", "t9a/knights_charge_spear_block.toml"), ("t9a", "t9a/single_charge_9in.toml"),
     ("gdb", "gdb/column_vs_line.toml")),
)
#: The lock file the workers share, and the stamp of a finished compile, in the cache folder.
LOCK_NAME = ".warm-kernels.lock"
STAMP_NAME = ".warm-kernels.done"
#: Set to 1 to compile in this process only, one kernel after another: the plain path, without the lock that
#: wraps Numba's (internal) cache-file methods.
ONE_PROCESS = "WARGAME_ODDS_WARM_ONE_PROCESS"


def stamp_text() -> str:
    """What the stamp holds: the kernels' folder, their sources' digest and Numba's version (any change: a compile)."""
    return f"{KERNELS}\n{sources_digest()}\nnumba {numba.__version__}\n"


def lock_cache_files(lock_path: str) -> None:
    """Make this process hold ``lock_path`` (exclusively to write, shared to read) around every read and write of a
    Numba cache index and its data file (``numba.core.caching.IndexDataCacheFile.save`` and ``load``)."""
    from numba.core.caching import IndexDataCacheFile

    def locked(method, operation):
        def under_lock(self, *args, **kwargs):
            with open(lock_path, "a") as lock:  # closing it releases the lock
                fcntl.flock(lock, operation)
                return method(self, *args, **kwargs)
        return under_lock

    IndexDataCacheFile.save = locked(IndexDataCacheFile.save, fcntl.LOCK_EX)
    IndexDataCacheFile.load = locked(IndexDataCacheFile.load, fcntl.LOCK_SH)


def can_lock_cache_files() -> bool:
    from numba.core import caching

    cache_file = getattr(caching, "IndexDataCacheFile", None)
    return fcntl is not None and all(callable(getattr(cache_file, name, None)) for name in ("save", "load"))


def compile_kernels(group: tuple[tuple[str, str], ...]) -> None:
    """Run each scenario of ``group`` for 1000 trials (compiling its kernel, or loading it from the cache)."""
    for system, scenario in group:
        module = getattr(analysis, system)
        module.simulate(module.load(str(SHIPPED / scenario)), trials=1000, progress=False)


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def main() -> int:
    prepare_kernels()  # stale cache files go before any worker reads the cache
    cache = Path(os.environ["NUMBA_CACHE_DIR"])  # set by `import wargame_odds.analysis`
    stamp = cache / STAMP_NAME
    compiled = stamp.is_file() and stamp.read_text() == stamp_text()
    workers = min(usable_cores(), len(GROUPS))
    if workers > 1 and not compiled and os.environ.get(ONE_PROCESS) != "1" and can_lock_cache_files():
        cache.mkdir(parents=True, exist_ok=True)
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=lock_cache_files,
                                 initargs=(str(cache / LOCK_NAME),)) as pool:
            for _ in pool.map(compile_kernels, GROUPS):  # re-raises a worker's error
                pass
        stamp.write_text(stamp_text())
    else:
        for group in GROUPS:
            compile_kernels(group)
    print("kernels ready: Epic (assaults and turns), General de Brigade, The 9th Age (charges and close combat)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
