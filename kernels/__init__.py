"""Numba kernels: arrays in, counts out.  No pandas, no I/O.

Importing the package changes nothing.  The program's entry points call :func:`use_one_cache_dir` before any kernel
is defined (``import wargame_odds.analysis`` does, and so every entry point: the ``wargame-odds`` command, the Python
API ``wargame_odds`` and ``analysis``, notebooks, scripts, ``make`` targets, Dask workers), so that each loads what any
other compiled: ``NUMBA_CACHE_DIR`` when the user set it, otherwise :func:`default_cache_dir`. :func:`cache_folder` says
where inside it Numba keeps a folder's functions.
"""
import os
import sys
from pathlib import Path


def default_cache_dir() -> Path:
    """``numba-cache`` inside the virtual environment Python runs from (where ``make`` installs), or,
    outside one or when that folder is not writable, a per-user ``wargame-odds/numba`` cache folder
    (``$XDG_CACHE_HOME`` or ``~/.cache``).  Numba keeps each checkout's files apart inside it."""
    if sys.prefix != sys.base_prefix:
        venv_cache = Path(sys.prefix) / "numba-cache"
        try:
            venv_cache.mkdir(exist_ok=True)
            if os.access(venv_cache, os.W_OK):
                return venv_cache
        except OSError:
            pass
    user_cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(user_cache) / "wargame-odds" / "numba"


def use_one_cache_dir() -> str:
    """Set ``NUMBA_CACHE_DIR`` to :func:`default_cache_dir` unless the user set one (also in an
    already imported Numba, which reads the variable once); returns the folder in use."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = str(default_cache_dir())
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None and not numba_config.CACHE_DIR:
        numba_config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
    return os.environ["NUMBA_CACHE_DIR"]


KERNELS = Path(__file__).resolve().parent


def cache_folder(folder: Path = KERNELS) -> Path | None:
    """Where Numba caches the functions of ``folder``'s modules (its own choice of locator), or None (also with a
    Numba whose cache locators are not where 0.68 has them)."""
    module = next(iter(sorted(folder.glob("*.py"))), None)  # Numba's folder depends only on the module's folder
    try:
        from numba.core.caching import InTreeCacheLocator, UserProvidedCacheLocator, UserWideCacheLocator
    except ImportError:
        return None
    if module is None:
        return None
    for locator in (UserProvidedCacheLocator, InTreeCacheLocator, UserWideCacheLocator):
        found = locator.from_function(cache_folder, str(module))
        if found is not None:
            return Path(found.get_cache_path())
    return None
