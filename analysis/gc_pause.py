"""The program's start-up without Python's cyclic garbage collector.

Importing Numba and pydantic and loading the cached kernels builds some 70,000 long-lived objects and
almost no garbage (about a thousand objects in cycles); the collector walks them again and again while
they are built, about 0.08 s of CPU in a warm 1,000-trial run.  Run as the ``wargame-odds`` program,
the command line pauses the collector at its start (:func:`pause`) and the runner resumes it once the
first chunk of trials has run (:func:`resume`), so that long runs, reports and plots collect as usual; a
report resumes it as it starts writing its output (all of its points may be stored already), and a command
that runs no trials as it starts (``analysis.cli.NO_TRIALS``).
Resuming freezes what start-up built (``gc.freeze``): the collector never walks it again.  Library use
(notebooks, tests) never pauses, and then :func:`resume` does nothing.
"""
from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Turn the collector off until :func:`resume` (if it is on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what was built while paused and turn the collector back on; nothing if not paused."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
