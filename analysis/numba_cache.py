"""Numba's on-disk cache of the ``kernels`` package: kept honest, and announced when it is cold.

Where the cache lives is fixed by ``kernels/__init__.py`` (one folder for every entry point).

Numba stamps each cached function with the hash of its *own* source file only, so a change to a
jitted helper in another module (say ``kernels/rng.py``, inlined into every kernel) would leave the
callers' cached machine code in use: stale numbers with no error.  :func:`drop_stale_kernel_caches`
(run when :mod:`analysis.runner` is imported, before any kernel is called) keeps a digest of all
``kernels/*.py`` next to the cache files and removes the cached functions of ``kernels/`` (and, in a
source checkout, of the jitted test and benchmark helpers built on ``kernels.rng``) when it changes.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import sys
import tempfile
from pathlib import Path

from numba.core import event, types
from numba.core.caching import Cache, InTreeCacheLocator, UserProvidedCacheLocator, UserWideCacheLocator
from numba.core.runtime import rtsys

import kernels

KERNELS = Path(kernels.__file__).resolve().parent
CHECKOUT = KERNELS.parent if (KERNELS.parent / "pyproject.toml").is_file() else None
#: Folders whose cached functions inline code from ``kernels/``.
DEPENDENT = (KERNELS,) + ((CHECKOUT / "tests", CHECKOUT / "benchmarks") if CHECKOUT else ())
STAMP = "kernels-sources.sha256"


def sources_digest(folder: Path = KERNELS) -> str:
    """SHA-256 over the names and contents of the package's ``*.py`` files."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_folder(folder: Path = KERNELS) -> Path | None:
    """Where Numba caches the functions of ``folder``'s modules (its own choice of locator), or None."""
    module = next(iter(sorted(folder.glob("*.py"))), None)  # Numba's folder depends only on the module's folder
    if module is None:
        return None
    for locator in (UserProvidedCacheLocator, InTreeCacheLocator, UserWideCacheLocator):
        found = locator.from_function(cache_folder, str(module))
        if found is not None:
            return Path(found.get_cache_path())
    return None


def drop_stale_kernel_caches() -> int:
    """:func:`drop_stale_cache` for every folder of :data:`DEPENDENT`; returns how many files went."""
    digest = sources_digest()
    return sum(drop_stale_cache(folder, digest) for folder in DEPENDENT if folder.is_dir())


def drop_stale_cache(folder: Path, digest: str, cache: Path | None = None) -> int:
    """Remove the cached functions of ``folder``'s modules unless ``cache`` holds ``digest`` (the kernels'
    sources they were built from); returns how many files went.  A missing or unwritable cache is left
    alone."""
    cache = cache if cache is not None else cache_folder(folder)
    if cache is None or not cache.is_dir():
        return 0
    stamp = cache / STAMP
    try:
        if stamp.read_text() == digest:
            return 0
    except OSError:
        pass
    modules = {path.stem for path in folder.glob("*.py")}
    removed = 0
    for path in cache.iterdir():
        if path.suffix in (".nbi", ".nbc") and path.name.split(".", 1)[0] in modules:
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:  # another process got there first
                pass
    try:
        with tempfile.NamedTemporaryFile("w", dir=cache, delete=False, suffix=".tmp") as out:
            out.write(digest)
        os.replace(out.name, stamp)
    except OSError:
        pass
    return removed


def _load_kernel_overload(self, sig, target_context, _numba_load=Cache.load_overload):
    """``Cache.load_overload`` for the functions of ``kernels``: only the runtime is initialised before the
    machine code is read back (see :func:`load_kernels_without_refresh`); other functions load as Numba
    does it."""
    if not getattr(self._py_func, "__module__", "").startswith("kernels."):
        return _numba_load(self, sig, target_context)
    rtsys.initialize(target_context)
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def load_kernels_without_refresh() -> bool:
    """Load the cached kernels of ``kernels`` without Numba's refresh of its whole CPU target.

    Before it loads a cached function, Numba imports and installs every implementation registry it has
    (arrays, linear algebra, which imports ``scipy.linalg``, random numbers, typed containers …): about
    0.7 s of CPU, most of a warm run, though reading machine code back needs only the runtime (NRT)
    initialised.  The kernels' cached functions load after ``rtsys.initialize`` alone; a cache miss
    still compiles through Numba's pipeline, which refreshes first, and any other function (a user's
    own, in the same notebook) loads exactly as Numba does it.  Returns whether the shortcut is in use
    (not with a Numba whose cache lacks the methods it relies on)."""
    if not all(hasattr(Cache, name) for name in ("load_overload", "_load_overload",
                                                 "_guard_against_spurious_io_errors")):
        return False
    Cache.load_overload = _load_kernel_overload
    return True


#: What a cold compile of each kernel module costs on a 2-core machine (``make bench`` measures Epic's).
KERNEL_COMPILES = {
    "kernels.epic": ("the Epic Armageddon kernel", "about a minute"),
    "kernels.gdb": ("the General de Brigade kernel", "about 15 s"),
    "kernels.t9a": ("The 9th Age kernel", "about 15 s"),
}
#: The Epic block function's turn variant (``kernels.epic._run_block`` given turn tables), which a turn
#: scenario compiles on its first run even when the assault variant is in the cache.
EPIC_TURN_COMPILE = ("the Epic Armageddon kernel for turns", "about a minute and a half")


def announced_compile(dispatcher, args=()) -> tuple[str, str] | None:
    """(what, how long) of a compile of ``dispatcher`` for the argument types ``args``, for the notice, or
    None for a function outside the kernels."""
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", "")
    if module == "kernels.epic_turn":
        return EPIC_TURN_COMPILE
    if module == "kernels.epic" and func.__name__ == "_run_block" and args:
        turn = list(inspect.signature(func).parameters).index("turn")
        if not isinstance(args[turn], types.NoneType):
            return EPIC_TURN_COMPILE
    return KERNEL_COMPILES.get(module)


class CompileNotice(event.Listener):
    """Prints one line on stderr when a kernel of :data:`KERNEL_COMPILES`, or the Epic kernel's turn variant,
    starts compiling (:func:`announced_compile`; Numba fires ``numba:compile`` only on a cache miss), then
    stays silent."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.printed = False

    def on_start(self, ev):
        announced = None if self.printed else announced_compile(ev.data.get("dispatcher"), ev.data.get("args", ()))
        if announced is None:
            return
        what, duration = announced
        print(f"compiling {what}, once ({duration}; later runs load it from the "
              f"cache in {os.environ.get('NUMBA_CACHE_DIR', 'the Numba cache')})…", file=self.stream, flush=True)
        self.printed = True

    def on_end(self, ev):
        pass


_ACTIVE_NOTICES: list[CompileNotice] = []  # the notice of the outermost compile_notice block, if any


@contextlib.contextmanager
def compile_notice(stream=None):
    """Within the block, the first cold compile of a kernel is announced by :class:`CompileNotice`.
    A block inside another (each run of a threshold search or a sweep) uses the outer block's notice,
    so one compile is announced once."""
    if _ACTIVE_NOTICES:
        yield _ACTIVE_NOTICES[-1]
        return
    with event.install_listener("numba:compile", CompileNotice(stream)) as listener:
        _ACTIVE_NOTICES.append(listener)
        try:
            yield listener
        finally:
            _ACTIVE_NOTICES.pop()
