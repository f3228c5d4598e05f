"""Numba kernel for the GdB charge sequence (docs/gdb.md §2.1): arrays in, counts out.

Everything that does not depend on the dice (half move, reaction, who may fire, modifiers) is
compiled to small lookup arrays by ``wargame_odds.analysis.gdb.compile``; the kernel rolls the fire dice, the
charger's test and (after a PASS) the defender's test, and counts what happened.  The tables come as three named
structures (:class:`Fire`, :class:`Tests`, :class:`Effects`) and the run as ``wargame_odds.kernels.rng.Run``.
"""
from typing import NamedTuple

import numpy as np

from .jit import njit
from .rng import BLOCK_TRIALS, d6_reg, seed_stream
from .threads import block_spans, run_spans

# Offsets vector layout (indices into ``offsets``).
O_CHARGER, O_DEFENDER, O_OUTCOME, O_CHARGER_END, O_DEFENDER_END, O_CAS, O_CAS_TARGET, O_FRIENDS, \
    O_C6, O_D6 = range(10)
ELIMINATED = 5
NOT_TESTED = 4


class Fire(NamedTuple):
    """Closing and supporting fire (docs/gdb.md §2.2): each firer rolls ``dice`` D6 plus its modifier ``mod``; the
    casualty percent of the total's band (``lut``, indexed from total ``lo``) times its ``num`` (strength × firing
    percent × range scale, fixed point) gives its casualties, rounded; ``is_target``: it fires at the charge's
    target."""

    dice: int
    mod: np.ndarray
    num: np.ndarray
    is_target: np.ndarray
    lut: np.ndarray
    lo: int


class Tests(NamedTuple):
    """The morale tests (docs/gdb.md §2.3): ``dice`` D6 each; the charger (``strength`` figures) with its modifier
    by casualties ``charger_mod_by_cas`` and its result band ``charger_lut`` from total ``charger_lo``; the
    defender's after a PASS with ``defender_mod``, ``defender_lut`` from ``defender_lo``."""

    strength: int
    dice: int
    charger_mod_by_cas: np.ndarray
    charger_lut: np.ndarray
    charger_lo: int
    defender_mod: int
    defender_lut: np.ndarray
    defender_lo: int


class Effects(NamedTuple):
    """What each result does (docs/gdb.md §2.4): the outcome by the charger's result (when it did not pass) and by
    the defender's, each side's end state by its result, the friends behind the charger that its retreat or rout
    passes through."""

    outcome_by_charger: np.ndarray
    outcome_by_defender: np.ndarray
    charger_end_by_result: np.ndarray
    defender_end_by_result: np.ndarray
    friends_by_result: np.ndarray


@njit(cache=True, inline="always")
def _lookup(lut, lo, total):
    """Band result of ``total``; the table spans every reachable total, ends clamp (open bands)."""
    j = total - lo
    if j < 0:
        j = 0
    elif j >= lut.size:
        j = lut.size - 1
    return lut[j]


@njit(cache=True, inline="always")
def _morale_roll(s0, s1, s2, s3, dice, modifier):
    """A morale test's total (dice + modifier), whether it rolled two or more sixes, and the new state."""
    total = modifier
    sixes = 0
    for _k in range(dice):
        r, s0, s1, s2, s3 = d6_reg(s0, s1, s2, s3)
        total += r
        sixes += r == 6
    return total, sixes >= 2, s0, s1, s2, s3


def run_chunk(run, n_counts, offsets, fire, tests, effects):
    """Run ``run`` (``wargame_odds.kernels.rng.Run``); returns the summed counts (``n_counts`` of them, at ``offsets``:
    O_*). The tables come from ``wargame_odds.analysis.gdb.compile``.

    The per-block arrays are made here, not in the jitted :func:`run_blocks`: Numba's array constructors
    would make the cached kernel import Numba's array module whenever it is loaded (a warm run's start-up)."""
    n_blocks = (run.n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, n_counts), np.int64)
    states = np.zeros((n_blocks, 4), np.uint64)
    run_spans(lambda _, b0, b1: run_blocks(run, part, states, offsets, fire, tests, effects, np.int64(b0),
                                           np.int64(b1)),
              block_spans(n_blocks))
    return part.sum(axis=0)


@njit(cache=True, from_python=True, nogil=True)
def run_blocks(run, part, states, offsets, fire, tests, effects, b0, b1):
    """Count the charges of each stream block ``b`` in ``b0..b1`` of ``run`` into ``part[b]`` (zeros), with the
    block's generator state ``states[b]``.  One call a thread (``wargame_odds.kernels.threads``)."""
    key0, key1, first_block, n_trials = run.key0, run.key1, run.first_block, run.n_trials
    fire_dice, fire_mod, fire_num, fire_is_target, fire_lut, fire_lo = fire
    strength, morale_dice, charger_mod_by_cas, charger_lut, charger_lo, defender_mod, defender_lut, defender_lo = \
        tests
    outcome_by_charger, outcome_by_defender, charger_end_by_result, defender_end_by_result, friends_by_result = \
        effects
    n_firers = fire_mod.size
    for b in range(b0, b1):
        state = states[b]
        seed_stream(state, key0, key1, first_block + b)
        s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        n = min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)
        row = part[b]
        for _ in range(n):
            # steps 2-3: closing and supporting fire (§2.2)
            cas = 0
            cas_target = 0
            for i in range(n_firers):
                total = fire_mod[i]
                for _k in range(fire_dice):
                    r, s0, s1, s2, s3 = d6_reg(s0, s1, s2, s3)
                    total += r
                hit = (fire_num[i] * _lookup(fire_lut, fire_lo, total) + 500_000) // 1_000_000
                cas += hit
                if fire_is_target[i]:
                    cas_target += hit
            if cas > strength:
                cas = strength
            if cas_target > cas:
                cas_target = cas
            row[offsets[O_CAS] + cas] += 1
            row[offsets[O_CAS_TARGET] + cas_target] += 1
            # step 4: the charger's test, always taken unless destroyed by the fire
            if cas == strength:
                cr = ELIMINATED
            else:
                total, double_six, s0, s1, s2, s3 = _morale_roll(s0, s1, s2, s3, morale_dice, charger_mod_by_cas[cas])
                row[offsets[O_C6]] += double_six
                cr = _lookup(charger_lut, charger_lo, total)
            # step 5: the defender's test, only after a PASS
            if cr == 0:
                total, double_six, s0, s1, s2, s3 = _morale_roll(s0, s1, s2, s3, morale_dice, defender_mod)
                row[offsets[O_D6]] += double_six
                dr = _lookup(defender_lut, defender_lo, total)
                outcome = outcome_by_defender[dr]
            else:
                dr = NOT_TESTED
                outcome = outcome_by_charger[cr]
            row[offsets[O_CHARGER] + cr] += 1
            row[offsets[O_DEFENDER] + dr] += 1
            row[offsets[O_OUTCOME] + outcome] += 1
            row[offsets[O_CHARGER_END] + charger_end_by_result[cr]] += 1
            row[offsets[O_DEFENDER_END] + defender_end_by_result[dr]] += 1
            row[offsets[O_FRIENDS] + friends_by_result[cr]] += 1
