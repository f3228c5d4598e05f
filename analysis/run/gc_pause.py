"""The ``wargame-odds`` program's start-up without Python's cyclic garbage collector.

Importing Numba and pydantic and loading the cached kernels builds some 70,000 long-lived objects and
almost no garbage (about a thousand objects in cycles); the collector walks them again and again while
they are built, about 0.08 s of CPU in a warm 1,000-trial run.  This is the command line's business only
(:mod:`wargame_odds.analysis.cli`): it pauses the collector at its start (:func:`pause`) and, for a command that runs
trials, has it resumed once the runner's first chunk of trials has run (:func:`resume_after_first_chunk`, a
hook of :data:`wargame_odds.analysis.run.runner.AFTER_CHUNK`), so that long runs, reports and plots collect as usual; a
report resumes it as it starts writing its output (all of its points may be stored already), and a command that runs no
trials as it starts (``wargame_odds.analysis.cli.NO_TRIALS``).  Resuming freezes what start-up built (``gc.freeze``):
the collector never walks it again.  Library use (notebooks, tests) never pauses, and then :func:`resume` does nothing.
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


def resume_after_first_chunk() -> None:
    """While paused, have the runner :func:`resume` after its next chunk of trials (once: a resumed collector stays
    on); nothing if not paused."""
    if _paused:
        from .runner import AFTER_CHUNK

        if resume not in AFTER_CHUNK:
            AFTER_CHUNK.append(resume)
