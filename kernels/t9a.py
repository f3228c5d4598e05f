"""T9A charge kernel (docs/t9a.md §3): one trial per loop pass, counts aggregated per RNG block.

Arrays in, counts out.  Every distance is an integer number of milli-inches (1/1000").  The
column and slot constants below are the contract with ``analysis/t9a/charge/layout.py``, which builds the
scenario's :class:`Charge`.
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from . import jit
from .rng import BLOCK_TRIALS, d6, seed_stream
from .threads import block_spans, run_spans

# charger parameter columns (int64 matrix, one row per charger, in declaration order)
C_DIST, C_ADV, C_FREE, C_ROOM, C_NDICE, C_KEEP, C_FLOOR, C_ADD, C_FIXED, C_REDIRECT, \
    C_MODELS, C_WPM, C_SAVE = range(13)
N_CCOLS = 13
# target parameter entries (int64 vector)
T_REACTION, T_SHOOT_AT, T_SHOTS, T_HIT_NEED, T_WOUND, T_FLEE_N, T_FLEE_KEEP, T_SPACING, \
    T_HIT_MODE = range(9)
N_TCOLS = 9
REACTION_HOLD, REACTION_SAS, REACTION_FLEE = 0, 1, 2
HIT_SIX_THEN, HIT_IMPOSSIBLE = 0, 1

#: per-charger count slots, in the order of the offset matrix columns
CHARGER_SLOTS = ("arrives", "reaches", "failed", "failed_room", "target_gone", "catches",
                 "shot_down", "redirected", "redirect_arrives", "fm_sum", "fm_sumsq", "gap_sum",
                 "gap_sumsq", "roll", "fm_hist", "gap_hist", "unsaved")
(S_ARRIVES, S_REACHES, S_FAILED, S_FAILED_ROOM, S_TARGET_GONE, S_CATCHES, S_SHOT_DOWN,
 S_REDIRECTED, S_REDIRECT_ARRIVES, S_FM_SUM, S_FM_SUMSQ, S_GAP_SUM, S_GAP_SUMSQ, S_ROLL,
 S_FM_HIST, S_GAP_HIST, S_UNSAVED) = range(17)
#: global count slots, in the order of the global offset vector
GLOBAL_SLOTS = ("units", "models", "rotated", "no_placement", "placement", "target_destroyed",
                "flee_total")
G_UNITS, G_MODELS, G_ROTATED, G_NO_PLACEMENT, G_PLACEMENT, G_TARGET_DESTROYED, G_FLEE_TOTAL = range(7)

MILLI = 1000        # distances are integer milli-inches
BIN_MILLI = 500     # histogram bin of failed moves and gaps: 0.5"


class Charge(NamedTuple):
    """A charge scenario's arrays (``wargame_odds.analysis.t9a.charge.layout.kernel_arrays``)."""

    ch: np.ndarray  # int64 [chargers, N_CCOLS]: each charger's parameters (C_* columns)
    ff: np.ndarray  # float64 [chargers]: its flee factor
    tg: np.ndarray  # int64 [N_TCOLS]: the target's parameters (T_* entries)
    plc_order: np.ndarray  # the placements (§3.7) in the order they are tried
    plc_mask: np.ndarray  # each placement's chargers in contact (bit i: charger i)
    plc_models: np.ndarray  # its models in contact
    plc_rot: np.ndarray  # it rotates the target
    coff: np.ndarray  # int64 [chargers, CHARGER_SLOTS]: count offsets
    goff: np.ndarray  # int64 [GLOBAL_SLOTS]: count offsets


@njit(cache=True, inline="always")
def _roll(state, n, keep):
    """Roll n D6; return (sum of the best ``keep`` (1 or 2), highest die)."""
    a = 0
    b = 0
    for _ in range(n):
        x = d6(state)
        if x > a:
            b = a
            a = x
        elif x > b:
            b = x
    kept = a if keep == 1 else a + b
    return kept, a


@njit(cache=True, inline="always")
def _hits(state, need, mode):
    """One to-hit roll against a modified need (Q-B7): a natural 1 misses; 7+ needs a 6 then
    (need - 3)+ unless the switch makes it impossible; 10+ never hits."""
    x = d6(state)
    if x == 1:
        return False
    if need <= 6:
        return x >= need
    if mode == HIT_IMPOSSIBLE or need >= 10 or x != 6:
        return False
    return d6(state) >= need - 3


@njit(cache=True, _nrt=False)
def _trial(state, ch, ff, tg, plc_order, plc_mask, plc_models, plc_rot, coff, goff, acc,
           reach, high, eff, gone):
    """One charge: reactions (§3.3), rolls (§3.2), placement (§3.7), failed moves (§3.4).  Returns the
    chargers that arrive (bit i: charger i) and the unsaved wounds Stand and Shoot caused."""
    n = ch.shape[0]
    reaction = tg[T_REACTION]
    shot_down = -1
    unsaved = 0
    # §3.3 Stand and Shoot at the declared charger, casualties removed before contact
    if reaction == REACTION_SAS:
        s = tg[T_SHOOT_AT]
        for _ in range(tg[T_SHOTS]):
            if _hits(state, tg[T_HIT_NEED], tg[T_HIT_MODE]) and d6(state) >= tg[T_WOUND]:
                save = ch[s, C_SAVE]
                if save >= 7 or d6(state) < save:
                    unsaved += 1
        acc[coff[s, S_UNSAVED] + unsaved] += 1
        if ch[s, C_MODELS] > 0 and unsaved >= ch[s, C_MODELS] * ch[s, C_WPM]:
            shot_down = s
            acc[coff[s, S_SHOT_DOWN]] += 1
    # §3.3 Flee: one flee move per charge declared against the (already) fleeing target
    flee_total = 0
    if reaction == REACTION_FLEE:
        for _ in range(n):
            k, h = _roll(state, tg[T_FLEE_N], tg[T_FLEE_KEEP])
            flee_total += k
        acc[goff[G_FLEE_TOTAL] + flee_total] += 1
    # §3.2 every charger rolls its Charge Range against the distance it must cover
    for i in range(n):
        reach[i] = False
        gone[i] = False
        if i == shot_down:
            continue
        k, h = _roll(state, ch[i, C_NDICE], ch[i, C_KEEP])
        t = max(k, ch[i, C_FLOOR]) + ch[i, C_ADD]
        high[i] = h
        acc[coff[i, S_ROLL] + t] += 1
        if reaction == REACTION_FLEE and ch[i, C_REDIRECT] >= 0:
            eff[i] = ch[i, C_REDIRECT]                      # Q-B8 redirect switch
            acc[coff[i, S_REDIRECTED]] += 1
        elif reaction == REACTION_FLEE:
            eff[i] = ch[i, C_DIST] + np.int64(np.floor(ff[i] * flee_total * MILLI + 0.5))
        else:
            eff[i] = ch[i, C_DIST]
        if t * MILLI + ch[i, C_ADV] >= eff[i]:
            reach[i] = True
            acc[coff[i, S_REACHES]] += 1
    destroyed = False
    made = 0
    if reaction == REACTION_FLEE:
        # Q-B8: the first charger (move order = declaration order) reaching the fled unit
        # destroys it; later ones find their target gone; redirected ones charge their new target
        for i in range(n):
            if not reach[i]:
                continue
            if ch[i, C_REDIRECT] >= 0:
                acc[coff[i, S_REDIRECT_ARRIVES]] += 1
            elif not destroyed:
                destroyed = True
                acc[coff[i, S_CATCHES]] += 1
                acc[goff[G_TARGET_DESTROYED]] += 1
            else:
                gone[i] = True
                acc[coff[i, S_TARGET_GONE]] += 1
    else:
        for i in range(n):
            if reach[i] and ch[i, C_ROOM] == 1:
                made |= 1 << i
    arrived = 0
    if plc_mask.shape[0] == 0:
        arrived = made
    else:
        chosen = -1
        for j in range(plc_order.shape[0]):            # §3.7: best legal placement first
            p = plc_order[j]
            if (plc_mask[p] & made) == plc_mask[p]:
                chosen = p
                break
        if chosen < 0:
            acc[goff[G_NO_PLACEMENT]] += 1
            acc[goff[G_MODELS]] += 1
        else:
            arrived = plc_mask[chosen]
            acc[goff[G_PLACEMENT] + chosen] += 1
            acc[goff[G_MODELS] + plc_models[chosen]] += 1
            if plc_rot[chosen] == 1:
                acc[goff[G_ROTATED]] += 1
    units = 0
    for i in range(n):
        if (arrived >> i) & 1:
            units += 1
            acc[coff[i, S_ARRIVES]] += 1
        elif reach[i] and reaction != REACTION_FLEE:
            acc[coff[i, S_FAILED_ROOM]] += 1                # rolled enough, no room (§3.2, §3.7)
    acc[goff[G_UNITS] + units] += 1
    # §3.4 Failed Charge Move: highest die (or fixed), straight at the (marked) centre
    for i in range(n):
        if i == shot_down or (arrived >> i) & 1:
            continue
        if reaction == REACTION_FLEE and reach[i] and not gone[i]:
            continue                                         # caught the fleeing unit / redirected
        acc[coff[i, S_FAILED]] += 1
        mv = ch[i, C_FIXED] * MILLI if ch[i, C_FIXED] >= 0 else high[i] * MILLI
        if ch[i, C_FREE] >= 0 and ch[i, C_FREE] < mv:
            mv = ch[i, C_FREE]                               # §3.5 unit spacing stops it
        redirected = reaction == REACTION_FLEE and ch[i, C_REDIRECT] >= 0
        if destroyed and not redirected:
            room = eff[i]                                    # towards the marked centre
        else:
            room = max(eff[i] - tg[T_SPACING], 0)            # spacing from the target itself
        if room < mv:
            mv = room
        gap = eff[i] - mv
        acc[coff[i, S_FM_SUM]] += mv
        acc[coff[i, S_FM_SUMSQ]] += mv * mv
        acc[coff[i, S_GAP_SUM]] += gap
        acc[coff[i, S_GAP_SUMSQ]] += gap * gap
        acc[coff[i, S_FM_HIST] + mv // BIN_MILLI] += 1
        acc[coff[i, S_GAP_HIST] + gap // BIN_MILLI] += 1
    return arrived, unsaved


def run_chunk(run, charge, n_counts):
    """Run ``run`` (``wargame_odds.kernels.rng.Run``) on the scenario ``charge`` (:class:`Charge`); return the summed
    int64 counts (``n_counts`` of them).  The blocks run on Python threads (``wargame_odds.kernels.threads``).

    The per-block arrays are made here, not in the jitted :func:`run_blocks`: Numba's array constructors
    would make the cached kernel import Numba's array module whenever it is loaded (a warm run's start-up)."""
    n_blocks = (run.n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    n = charge.ch.shape[0]
    part = np.zeros((n_blocks, n_counts), np.int64)
    states, flags, values = (np.zeros((n_blocks, 4), np.uint64), np.zeros((n_blocks, 2, n), np.bool_),
                             np.zeros((n_blocks, 2, n), np.int64))
    run_spans(lambda _, b0, b1: run_blocks(run, charge, part, states, flags, values, np.int64(b0), np.int64(b1)),
              block_spans(n_blocks))
    return part.sum(axis=0)


@jit.njit(cache=True, from_python=True, nogil=True)
def run_blocks(run, charge, part, states, flags, values, b0, b1):
    """Count the trials of each stream block ``b`` in ``b0..b1`` of ``run`` into ``part[b]`` (zeros), with the
    block's generator state ``states[b]`` and zeroed scratch rows ``flags[b]`` (reached, gone) and ``values[b]``
    (high, effective)."""
    key0, key1, first_block, n_trials = run
    ch, ff, tg, plc_order, plc_mask, plc_models, plc_rot, coff, goff = charge
    for b in range(b0, b1):
        state = states[b]
        seed_stream(state, key0, key1, np.uint64(first_block + b))
        acc = part[b]
        reach, gone = flags[b, 0], flags[b, 1]
        high, eff = values[b, 0], values[b, 1]
        for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            _trial(state, ch, ff, tg, plc_order, plc_mask, plc_models, plc_rot, coff, goff, acc,
                   reach, high, eff, gone)
