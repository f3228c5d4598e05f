"""Numba's on-disk cache of the ``kernels`` package: kept honest, and announced when it is cold.

Where the cache lives is fixed by :func:`wargame_odds.kernels.use_one_cache_dir`, which ``import wargame_odds.analysis``
calls (one folder for every entry point).

Numba stamps each cached function with the hash of its *own* source file only, so a change to a
jitted helper in another module (say ``kernels/rng.py``, inlined into every kernel) would leave the
callers' cached machine code in use: stale numbers with no error.  :func:`drop_stale_kernel_caches`
keeps a digest of all ``kernels/*.py`` next to the cache files and removes the cached functions of
``kernels/`` (and, in a source checkout, of the jitted test and benchmark helpers built on ``wargame_odds.kernels.rng``)
when it changes.  It runs once a process, when a kernel is about to run (:func:`prepare_kernels`, which
:func:`compile_notice` calls), never when a module is merely imported.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import sys
import threading
from pathlib import Path

from numba.core import event, types

from ...kernels import KERNELS, cache_folder

from ..output.atomic_file import write_atomic

CHECKOUT = KERNELS.parent if (KERNELS.parent / "pyproject.toml").is_file() else None
#: Folders whose cached functions inline code from ``kernels/`` (the Epic kernel's package included; in a checkout the
#: jitted helpers of the tests, the step tests' folders too, and of the benchmarks).
DEPENDENT = (KERNELS, KERNELS / "epic") + ((CHECKOUT / "tests", CHECKOUT / "tests" / "epic", CHECKOUT / "tests" / "t9a",
                                           CHECKOUT / "benchmarks") if CHECKOUT else ())
STAMP = "kernels-sources.sha256"


def sources_digest(folder: Path = KERNELS) -> str:
    """SHA-256 over the names and contents of the package's ``*.py`` files, its subpackages' included."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


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
    with contextlib.suppress(OSError):  # a cache folder that cannot be written is left alone
        write_atomic(stamp, digest.encode())
    return removed


_prepared = False
_prepare_lock = threading.Lock()


def fallback_note(reason: str) -> str:
    """The one line that says the extended mode fell back to plain Numba by itself, and why."""
    import numba

    from ...kernels.jit import PLAIN_SWITCH

    missing = reason.split("; ")
    shown = ", ".join(missing[:2]) + (f" and {len(missing) - 2} more" if len(missing) > 2 else "")
    return (f"note: Numba {numba.__version__} lacks internals that this program's faster compile mode uses ({shown}); "
            f"running with plain numba.njit as {PLAIN_SWITCH}=1 does (same results, slower first compile)")


def prepare_kernels(stream=None) -> None:
    """Once a process, before its first kernel call: :func:`drop_stale_kernel_caches`; where the extended mode
    (:mod:`wargame_odds.kernels.jit`) fell back to plain Numba by itself, :func:`fallback_note` on ``stream``
    (stderr)."""
    global _prepared
    with _prepare_lock:
        if _prepared:
            return
        from ...kernels import jit

        drop_stale_kernel_caches()
        if jit.FALLBACK_REASON:
            print(fallback_note(jit.FALLBACK_REASON), file=stream if stream is not None else sys.stderr, flush=True)
        _prepared = True


#: What a cold compile of each kernel module costs on a 2-core machine (``make bench`` measures Epic's; the others
#: measured alone into an empty cache, 2026-12-07: GdB 2 s, T9A charge 3 s, T9A close combat 15 s of CPU; a busy
#: machine takes longer).
KERNEL_COMPILES = {
    "wargame_odds.kernels.epic": ("the Epic Armageddon kernel", "about a minute"),
    "wargame_odds.kernels.gdb": ("the General de Brigade kernel", "a few seconds"),
    "wargame_odds.kernels.t9a": ("The 9th Age kernel", "a few seconds"),
    "wargame_odds.kernels.t9a_combat": ("The 9th Age close-combat kernel", "about 20 s"),
}
#: The Epic block function's turn variant (``wargame_odds.kernels.epic.block._run_block`` given turn tables), which a
#: turn scenario compiles on its first run even when the assault variant is in the cache.
EPIC_TURN_COMPILE = ("the Epic Armageddon kernel for turns", "about a minute and a half")


def announced_compile(dispatcher, args=()) -> tuple[str, str] | None:
    """(what, how long) of a compile of ``dispatcher`` for the argument types ``args``, for the notice, or
    None for a function outside the kernels."""
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", "")
    if module in ("wargame_odds.kernels.epic.turn", "wargame_odds.kernels.epic.shooting") \
            or module.startswith("wargame_odds.kernels.epic.shoot_"):
        return EPIC_TURN_COMPILE
    if module == "wargame_odds.kernels.epic.block" and func.__name__ == "_run_block" and args:
        turn = list(inspect.signature(func).parameters).index("turn")
        if not isinstance(args[turn], types.NoneType):
            return EPIC_TURN_COMPILE
    epic = "wargame_odds.kernels.epic"
    return KERNEL_COMPILES.get(epic if module.startswith(epic + ".") else module)


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
    """A block that runs kernels: entering it calls :func:`prepare_kernels`; within it, the first cold compile
    of a kernel is announced by :class:`CompileNotice`.  A block inside another (each run of a threshold search
    or a sweep) uses the outer block's notice, so one compile is announced once."""
    prepare_kernels(stream)
    if _ACTIVE_NOTICES:
        yield _ACTIVE_NOTICES[-1]
        return
    with event.install_listener("numba:compile", CompileNotice(stream)) as listener:
        _ACTIVE_NOTICES.append(listener)
        try:
            yield listener
        finally:
            _ACTIVE_NOTICES.pop()
