"""Keep Numba's on-disk cache of the ``kernels`` package honest.

Numba stamps each cached function with the hash of its *own* source file only, so a change to a
jitted helper in another module (say ``kernels/rng.py``, inlined into every kernel) would leave the
callers' cached machine code in use: stale numbers with no error.  :func:`drop_stale_kernel_caches`
(run when :mod:`analysis.runner` is imported, before any kernel is called) keeps a digest of all
``kernels/*.py`` next to the cache files and removes the cached functions of ``kernels/`` (and, in a
source checkout, of the jitted test and benchmark helpers built on ``kernels.rng``) when it changes.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from numba.core.caching import InTreeCacheLocator, UserProvidedCacheLocator, UserWideCacheLocator

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
