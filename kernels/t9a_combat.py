"""T9A close-combat kernel (docs/t9a.md, "Close combat"): the charge of ``wargame_odds.kernels.t9a`` and, where the
charger arrives, the fight, one trial per loop pass, counts aggregated per RNG block.

Arrays in, counts out.  Each rule step is one jitted function (tested against the same step of
``analysis/t9a/combat/reference.py``).  A part's unsaved wounds at one Initiative Step are drawn with one
uniform from a table built once per scenario (``analysis/t9a/combat/layout.py``): each attack is an
independent trial with the exact probability P(hit)·P(wound)·P(armour fails)·P(special save fails) (§C9), so
the unsaved wounds of ``n`` attacks are Binomial(n, p); rows ``0..nmax`` of a group's table hold Binomial(n, p)
as Walker–Vose alias tables (one uniform, no search), and more than ``nmax`` attacks are drawn as several rows
(a sum of binomials with one p is binomial).  The column and slot constants below are the contract with the layout
module, which builds the scenario's :class:`Combat`.
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from . import jit
from .rng import BLOCK_TRIALS, d6, seed_stream, uniform
from .t9a import _trial
from .threads import block_spans, run_spans

# unit columns (int64 matrix, row 0 the charger, row 1 the target); U_DISCIPLINE is the better of the unit's
# and its General's (Commanding Presence, §C7.5, also on Rally Tests, Q-C16)
U_START_HP, U_HP, U_WIDTH, U_CONTACT, U_FULL_RANK, U_RANKED, U_STATIC_SCORE, U_DISCIPLINE, U_REROLL, \
    U_STUBBORN, U_UNBREAKABLE, U_SWIFT = range(12)
N_UCOLS = 12
# combat rules (int64 vector)
R_ROUNDS, R_PURSUE, R_DOUBLE_ONE, R_DECIMATED_RALLY, R_DECIMATED_REMOVED, R_RANK_CAP, R_RANK_STATIC = range(7)
N_RCOLS = 7
RALLY_HALVE, RALLY_NONE, RALLY_DOUBLE_ONE = 0, 1, 2
# attack events (int64 array [round kind, event, column]; kind 0 = round 1, 1 = later rounds), by step 10 → 0
E_STEP, E_SIDE, E_SPECIAL, E_FRONT, E_SUPPORT, E_SUPPORT_RANKS, E_GROUP, E_MW_DICE, E_MW_SIDES, E_MW_ADD, \
    E_X_DICE, E_X_SIDES, E_X_ADD = range(13)
N_ECOLS = 13
#: count slots, in the order of the offset vector
MELEE_SLOTS = ("contact", "r1_a_wins", "r1_b_wins", "r1_draw", "r1_a_breaks", "r1_b_breaks", "r1_a_caught",
               "r1_b_caught", "r1_a_wiped", "r1_b_wiped", "continues_to_round_2", "a_wins", "b_wins", "unresolved",
               "a_breaks", "b_breaks", "a_caught", "b_caught", "a_destroyed", "b_destroyed", "a_fled_rallied",
               "b_fled_rallied", "a_fled_not_rallied", "b_fled_not_rallied", "hp_lost_a_r1", "hp_lost_b_r1",
               "hp_lost_a", "hp_lost_b", "r1_margin", "ends_in_round")
(M_CONTACT, M_R1_A_WINS, M_R1_B_WINS, M_R1_DRAW, M_R1_A_BREAKS, M_R1_B_BREAKS, M_R1_A_CAUGHT, M_R1_B_CAUGHT,
 M_R1_A_WIPED, M_R1_B_WIPED, M_CONTINUES, M_A_WINS, M_B_WINS, M_UNRESOLVED, M_A_BREAKS, M_B_BREAKS, M_A_CAUGHT,
 M_B_CAUGHT, M_A_DESTROYED, M_B_DESTROYED, M_A_RALLIED, M_B_RALLIED, M_A_NOT_RALLIED, M_B_NOT_RALLIED,
 M_HP_A_R1, M_HP_B_R1, M_HP_A, M_HP_B, M_R1_MARGIN, M_ENDS) = range(30)
#: fates of a broken unit (``_flee``)
FLED_RALLIED, FLED_NOT_RALLIED, CAUGHT, REMOVED = range(4)
#: xor'ed into key1 for one stream per trial (``trial_streams``): never a block stream of the same key
TRIAL_STREAM_KEY = np.uint64(0x7439A3C0B1E5D2F7)


class Combat(NamedTuple):
    """A close combat's arrays (``wargame_odds.analysis.t9a.combat.layout.combat_arrays``)."""

    cu: np.ndarray  # int64 [2, N_UCOLS]: the two units (U_* columns), row 0 the charger
    cr: np.ndarray  # int64 [N_RCOLS]: the combat rules (R_* entries)
    ev: np.ndarray  # int64 [2, events, N_ECOLS]: the attack events of round 1 and of later rounds (E_* columns)
    n_ev: np.ndarray  # the events of each
    g_off: np.ndarray  # each attack group's first row of the alias tables
    g_nmax: np.ndarray  # its most attacks in one row
    prob: np.ndarray  # float64: the alias tables' probabilities (Binomial(n, p) rows, fill_alias)
    alias: np.ndarray  # int64: and their aliases
    moff: np.ndarray  # count offsets (MELEE_SLOTS)
    margin_offset: int  # added to a round-1 margin for its histogram slot


# -- ranks and attackers (§C3.2, §C4) ---------------------------------------------------------------
@njit(cache=True, inline="always", _nrt=False)
def _models(hp_left, hp):
    """§C9: models standing = ⌈HP left / HP⌉."""
    return (hp_left + hp - 1) // hp


@njit(cache=True, _nrt=False)
def _full_ranks(models, width, full_rank, ranked):
    """§C3.2: ⌊models / width⌋ plus the rear rank when it has ``full_rank`` models; 0 unless ``ranked``
    (wide enough, not Light Troops)."""
    if not ranked:
        return 0
    return models // width + (1 if models % width >= full_rank else 0)


@njit(cache=True, inline="always", _nrt=False)
def _rank_bonus(full_ranks, cap):
    """§C6.1: +1 per Full Rank after the first, at most ``cap``."""
    return min(cap, max(0, full_ranks - 1))


@njit(cache=True, _nrt=False)
def _fill_rank_table(cu, by_hp):
    """``by_hp[side, h]`` = (models, Full Ranks) of a unit with ``h`` HP left, for every h up to its
    starting HP: the fight reads them instead of dividing in every step."""
    for side in range(2):
        for h in range(cu[side, U_START_HP] + 1):
            m = _models(h, cu[side, U_HP])
            by_hp[side, h, 0] = m
            by_hp[side, h, 1] = _full_ranks(m, cu[side, U_WIDTH], cu[side, U_FULL_RANK], cu[side, U_RANKED])


@njit(cache=True, inline="always", _nrt=False)
def _attacks(models, width, contact_cap, front, support, support_ranks):
    """§C4.1–§C4.2, Q-C2, Q-C4: attacks of one part: ``front`` per model in contact, ``support`` per model of
    each of the ``support_ranks`` ranks behind, at most as many per rank as are in contact."""
    contact = min(contact_cap, models)
    n = contact * front
    for rank in range(2, 2 + support_ranks):
        n += min(min(width, max(0, models - (rank - 1) * width)), contact) * support
    return n


# -- attacks (§C5) --------------------------------------------------------------------------------------
@njit(cache=True, inline="always", _nrt=False)
def _alias_draw(u, base, m, prob, alias):
    """One draw from row ``base`` (values 0..m) of the alias tables, with one uniform ``u``: column
    j = ⌊u (m + 1)⌋, kept when the rest of u (m + 1) is below ``prob[base + j]``, else its alias."""
    x = u * (m + 1)
    j = min(np.int64(x), m)
    return j if x - j < prob[base + j] else alias[base + j]


@njit(cache=True, inline="always", _nrt=False)
def _unsaved(state, group, n, g_off, g_nmax, prob, alias):
    """§C9: unsaved wounds of ``n`` attacks of ``group``: Binomial(n, p), one uniform per table row."""
    k = 0
    while n > 0:
        m = min(n, g_nmax[group])
        k += _alias_draw(uniform(state), g_off[group] + m * (m + 1) // 2, m, prob, alias)
        n -= m
    return k


@njit(cache=True, _nrt=False)
def fill_alias(pmf, prob, alias, small, large):
    """Vose's alias tables of every row of ``pmf`` (row n: n + 1 values from n(n+1)/2 on, as many rows as
    fit): ``prob`` (in: nothing, out: the column's own share) and ``alias``; ``small``/``large`` are scratch
    of one row's length."""
    n = 0
    while (n + 1) * (n + 2) // 2 <= pmf.shape[0]:
        base = n * (n + 1) // 2
        size = n + 1
        ns = 0
        nl = 0
        for j in range(size):
            prob[base + j] = pmf[base + j] * size
            alias[base + j] = j
            if prob[base + j] < 1.0:
                small[ns] = j
                ns += 1
            else:
                large[nl] = j
                nl += 1
        while ns > 0 and nl > 0:
            ns -= 1
            lo = small[ns]
            g = large[nl - 1]
            alias[base + lo] = g
            prob[base + g] = prob[base + g] + prob[base + lo] - 1.0
            if prob[base + g] < 1.0:
                nl -= 1
                small[ns] = g
                ns += 1
        for i in range(nl):
            prob[base + large[i]] = 1.0
        for i in range(ns):
            prob[base + small[i]] = 1.0
        n += 1


@njit(cache=True, inline="always", _nrt=False)
def _roll_expr(state, dice, sides, add):
    """A number of the profile: ``add`` plus ``dice`` D6 (or D3: a D6 halved, rounding up)."""
    total = add
    for _ in range(dice):
        x = d6(state)
        total += x if sides == 6 else (x + 1) // 2
    return total


@njit(cache=True, inline="always", _nrt=False)
def _health_points(state, unsaved, dice, sides, add, target_hp):
    """§C5.5: HP lost to ``unsaved`` wounds with Multiple Wounds (X), each at most the target's HP."""
    if dice == 0:
        return unsaved * min(add, target_hp)
    lost = 0
    for _ in range(unsaved):
        lost += min(_roll_expr(state, dice, sides, add), target_hp)
    return lost


@njit(cache=True, inline="always", _nrt=False)
def _event_damage(state, ev, kind, i, models, cu, g_off, g_nmax, prob, alias):
    """HP attack event ``ev[kind, i]`` (a part's attacks, or its Impact Hits / Stomp Attacks, §C5.6) costs the
    enemy, its side having ``models`` models."""
    side = ev[kind, i, E_SIDE]
    if ev[kind, i, E_SPECIAL]:
        hits = 0
        for _ in range(min(cu[side, U_CONTACT], models)):
            hits += _roll_expr(state, ev[kind, i, E_X_DICE], ev[kind, i, E_X_SIDES], ev[kind, i, E_X_ADD])
        return _unsaved(state, ev[kind, i, E_GROUP], hits, g_off, g_nmax, prob, alias)
    n = _attacks(models, cu[side, U_WIDTH], cu[side, U_CONTACT], ev[kind, i, E_FRONT], ev[kind, i, E_SUPPORT],
                 ev[kind, i, E_SUPPORT_RANKS])
    k = _unsaved(state, ev[kind, i, E_GROUP], n, g_off, g_nmax, prob, alias)
    return _health_points(state, k, ev[kind, i, E_MW_DICE], ev[kind, i, E_MW_SIDES], ev[kind, i, E_MW_ADD],
                          cu[1 - side, U_HP])


@njit(cache=True, inline="always", _nrt=False)
def _round_steps(state, kind, hp_a, hp_b, cu, by_hp, ev, n_ev, g_off, g_nmax, prob, alias):
    """§C4.4: one round's Initiative Steps 10 → 0 (the events, by step); the attacks of a step strike from
    the state at its start, casualties come off at its end; stops once a unit has no models (§C6.4).
    Returns the HP left of both units."""
    i = 0
    n = n_ev[kind]
    while i < n:
        step = ev[kind, i, E_STEP]
        m_a = by_hp[0, hp_a, 0]
        m_b = by_hp[1, hp_b, 0]
        to_a = 0
        to_b = 0
        while i < n and ev[kind, i, E_STEP] == step:
            if ev[kind, i, E_SIDE] == 0:
                to_b += _event_damage(state, ev, kind, i, m_a, cu, g_off, g_nmax, prob, alias)
            else:
                to_a += _event_damage(state, ev, kind, i, m_b, cu, g_off, g_nmax, prob, alias)
            i += 1
        hp_a = max(0, hp_a - to_a)
        hp_b = max(0, hp_b - to_b)
        if hp_a == 0 or hp_b == 0:
            break
    return hp_a, hp_b


# -- Combat Score, Break Test, flee and rally (§C6–§C8) ------------------------------------------------
@njit(cache=True, _nrt=False)
def _score(enemy_lost, charging, rank_bonus, static_score):
    """§C6.1: HP caused + 1 Charging + Rank Bonus + Standard and Battle Standard."""
    return enemy_lost + charging + rank_bonus + static_score


@njit(cache=True, _nrt=False)
def _break_discipline(cu, loser, loser_ranks, winner_ranks, margin):
    """§C7.2–§C7.4, Q-C10: the Discipline of the loser's Break Test (General's if better): the margin is
    ignored when Stubborn or Steadfast (more Full Ranks than the winner); never below 0."""
    dis = cu[loser, U_DISCIPLINE]
    if cu[loser, U_STUBBORN] or loser_ranks > winner_ranks:
        return dis
    return max(0, dis - margin)


@njit(cache=True, _nrt=False)
def _passes(total, discipline, double_one_passes, only_double_one):
    """§C7.1, Q-C9: a Discipline Test's 2D6 ``total`` passes when ≤ Discipline (or, by switch, a double 1);
    ``only_double_one``: the test passes on a double 1 alone (Q-C11 switch)."""
    if only_double_one:
        return total == 2
    return total <= discipline or (double_one_passes and total == 2)


@njit(cache=True, _nrt=False)
def _best_two(a, b, c):
    """§C8.2: the two highest of three dice (a Maximised 2D6)."""
    return a + b + c - min(a, min(b, c))


@njit(cache=True, _nrt=False)
def _roll2(state, maximised):
    """2D6, or Maximised (Swiftstride): 3D6, the lowest dropped."""
    a = d6(state)
    b = d6(state)
    if maximised:
        return _best_two(a, b, d6(state))
    return a + b


@njit(cache=True, inline="always", _nrt=False)
def _discipline_test(state, discipline, reroll, double_one_passes, only_double_one):
    """§C7.1, §C7.5: roll 2D6; a failed test is re-rolled once with Rally Around the Flag."""
    if _passes(_roll2(state, False), discipline, double_one_passes, only_double_one):
        return True
    return reroll == 1 and _passes(_roll2(state, False), discipline, double_one_passes, only_double_one)


@njit(cache=True, _nrt=False)
def _rally_discipline(cu, cr, side, hp_left):
    """§C8.4, Q-C11: (Discipline of the Rally Test, passes only on a double 1): a Decimated unit (≤ 25 %
    of its starting HP) halves it, rounding up, or needs a double 1, by switch."""
    dis = cu[side, U_DISCIPLINE]
    if 4 * hp_left > cu[side, U_START_HP] or cr[R_DECIMATED_RALLY] == RALLY_NONE:
        return dis, False
    if cr[R_DECIMATED_RALLY] == RALLY_DOUBLE_ONE:
        return dis, True
    return (dis + 1) // 2, False


@njit(cache=True, inline="always", _nrt=False)
def _flee(state, cu, cr, loser, hp_left):
    """§C8: the fate of a unit that broke: removed (beta switch, Decimated), caught (pursuit ≥ flee), or
    fled and then rallied or not (§C8.4)."""
    if cr[R_DECIMATED_REMOVED] and 4 * hp_left <= cu[loser, U_START_HP]:
        return REMOVED
    flee = _roll2(state, cu[loser, U_SWIFT] == 1)
    if cr[R_PURSUE] and _roll2(state, cu[1 - loser, U_SWIFT] == 1) >= flee:
        return CAUGHT
    dis, only_double_one = _rally_discipline(cu, cr, loser, hp_left)
    if _discipline_test(state, dis, cu[loser, U_REROLL], cr[R_DOUBLE_ONE] == 1, only_double_one):
        return FLED_RALLIED
    return FLED_NOT_RALLIED


@njit(cache=True, inline="always", _nrt=False)
def _record(acc, moff, r1_result, ended_r1, winner, broke, fate, wiped, ends, lost_a, lost_b, r1_lost_a,
            r1_lost_b, r1_margin, scored_r1, rounds):
    """Add one fight to the counts.  ``r1_result``: 0 a wins round 1, 1 b wins, 2 draw, 3 both wiped;
    ``winner``/``broke``: side or -1; ``wiped``: bit 0 a, bit 1 b; ``ends``: round, 0 = unresolved."""
    acc[moff[M_CONTACT]] += 1
    if r1_result < 3:
        acc[moff[M_R1_A_WINS + r1_result]] += 1
    if ended_r1:
        if broke >= 0:
            acc[moff[M_R1_A_BREAKS + broke]] += 1
            if fate == CAUGHT:
                acc[moff[M_R1_A_CAUGHT + broke]] += 1
        for side in range(2):
            if (wiped >> side) & 1:
                acc[moff[M_R1_A_WIPED + side]] += 1
    else:
        acc[moff[M_CONTINUES]] += 1
    if winner >= 0:
        acc[moff[M_A_WINS + winner]] += 1
    if ends == 0:
        acc[moff[M_UNRESOLVED]] += 1
    if broke >= 0:
        acc[moff[M_A_BREAKS + broke]] += 1
        if fate == CAUGHT:
            acc[moff[M_A_CAUGHT + broke]] += 1
        if fate == CAUGHT or fate == REMOVED:
            acc[moff[M_A_DESTROYED + broke]] += 1
        elif fate == FLED_RALLIED:
            acc[moff[M_A_RALLIED + broke]] += 1
        else:
            acc[moff[M_A_NOT_RALLIED + broke]] += 1
    for side in range(2):
        if (wiped >> side) & 1:
            acc[moff[M_A_DESTROYED + side]] += 1
    acc[moff[M_HP_A_R1] + r1_lost_a] += 1
    acc[moff[M_HP_B_R1] + r1_lost_b] += 1
    acc[moff[M_HP_A] + lost_a] += 1
    acc[moff[M_HP_B] + lost_b] += 1
    if scored_r1:
        acc[moff[M_R1_MARGIN] + r1_margin] += 1        # the layout's offset makes it non-negative
    acc[moff[M_ENDS] + (ends - 1 if ends else rounds)] += 1


@njit(cache=True, inline="always", _nrt=False)
def _fight(state, shot_hp, cu, by_hp, cr, ev, n_ev, g_off, g_nmax, prob, alias, moff, margin_offset, acc):
    """§C9: rounds until a unit breaks or is destroyed, or ``R_ROUNDS`` are fought; the charger (side 0)
    lost ``shot_hp`` HP to Stand and Shoot before contact."""
    start_a = cu[0, U_START_HP] - shot_hp
    start_b = cu[1, U_START_HP]
    hp_a = start_a
    hp_b = start_b
    rounds = cr[R_ROUNDS]
    r1_result, r1_lost_a, r1_lost_b, r1_margin, scored_r1 = 3, 0, 0, 0, False
    winner, broke, fate, wiped, ends = -1, -1, -1, 0, 0
    for r in range(1, rounds + 1):
        kind = 0 if r == 1 else 1
        rb_a = _rank_bonus(by_hp[0, hp_a, 1], cr[R_RANK_CAP])
        rb_b = _rank_bonus(by_hp[1, hp_b, 1], cr[R_RANK_CAP])
        was_a = hp_a
        was_b = hp_b
        hp_a, hp_b = _round_steps(state, kind, hp_a, hp_b, cu, by_hp, ev, n_ev, g_off, g_nmax, prob, alias)
        if r == 1:
            r1_lost_a = was_a - hp_a
            r1_lost_b = was_b - hp_b
        if hp_a == 0 or hp_b == 0:                      # §C6.4, Q-C17: no models left
            wiped = (1 if hp_a == 0 else 0) | (2 if hp_b == 0 else 0)
            winner = -1 if wiped == 3 else (0 if hp_b == 0 else 1)
            if r == 1:
                r1_result = 3 if wiped == 3 else winner
            ends = r
            break
        if not cr[R_RANK_STATIC]:                       # Q-C7: ranks after the round's casualties
            rb_a = _rank_bonus(by_hp[0, hp_a, 1], cr[R_RANK_CAP])
            rb_b = _rank_bonus(by_hp[1, hp_b, 1], cr[R_RANK_CAP])
        score_a = _score(was_b - hp_b, 1 if r == 1 else 0, rb_a, cu[0, U_STATIC_SCORE])
        score_b = _score(was_a - hp_a, 0, rb_b, cu[1, U_STATIC_SCORE])
        if r == 1:
            r1_margin = score_a - score_b + margin_offset
            scored_r1 = True
        if score_a == score_b:                          # §C6.3: both winners, fight on
            if r == 1:
                r1_result = 2
            continue
        w = 0 if score_a > score_b else 1
        if r == 1:
            r1_result = w
        loser = 1 - w
        if cu[loser, U_UNBREAKABLE]:
            continue
        dis = _break_discipline(cu, loser, by_hp[1, hp_b, 1] if loser else by_hp[0, hp_a, 1],
                                by_hp[0, hp_a, 1] if loser else by_hp[1, hp_b, 1], abs(score_a - score_b))
        if _discipline_test(state, dis, cu[loser, U_REROLL], cr[R_DOUBLE_ONE] == 1, False):
            continue
        winner, broke, ends = w, loser, r
        fate = _flee(state, cu, cr, loser, hp_b if loser else hp_a)
        break
    _record(acc, moff, r1_result, ends == 1, winner, broke, fate, wiped, ends, start_a - hp_a, start_b - hp_b,
            r1_lost_a, r1_lost_b, r1_margin, scored_r1, rounds)


def run_chunk(run, trial_streams, charge, combat, n_counts):
    """Run ``run`` (``wargame_odds.kernels.rng.Run``: the charge, then the fight where the charger arrives) on the
    scenario's ``charge`` (``wargame_odds.kernels.t9a.Charge``) and ``combat`` (:class:`Combat`); return the summed
    int64 counts (``n_counts`` of them).  The blocks run on Python threads (``wargame_odds.kernels.threads``), after
    the rank table they share is filled (:func:`_fill_rank_table`).  The per-block arrays are made here, not in the
    jitted :func:`run_blocks` (see ``wargame_odds.kernels.t9a.run_chunk``)."""
    n_blocks = (run.n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    n = charge.ch.shape[0]
    part = np.zeros((n_blocks, n_counts), np.int64)
    by_hp = np.zeros((2, int(combat.cu[:, U_START_HP].max()) + 1, 2), np.int64)
    _fill_rank_table(combat.cu, by_hp)
    states, flags, values = (np.zeros((n_blocks, 4), np.uint64), np.zeros((n_blocks, 2, n), np.bool_),
                             np.zeros((n_blocks, 2, n), np.int64))
    run_spans(lambda _, b0, b1: run_blocks(run, trial_streams, charge, combat, by_hp, part, states, flags, values,
                                           np.int64(b0), np.int64(b1)),
              block_spans(n_blocks))
    return part.sum(axis=0)


@jit.njit(cache=True, from_python=True, nogil=True, _nrt=False)
def run_blocks(run, trial_streams, charge, combat, by_hp, part, states, flags, values, b0, b1):
    """Count the trials of each stream block ``b`` in ``b0..b1`` of ``run`` into ``part[b]``: the charge
    (``wargame_odds.kernels.t9a._trial``), then the fight when the charger arrives, HP it lost to Stand and Shoot taken
    off first.  ``trial_streams``: trial ``t`` (global index) draws from a stream of its own, keyed ``(key0, key1 ^
    TRIAL_STREAM_KEY, t)``. ``by_hp``: the rank table (:func:`_fill_rank_table`)."""
    key0, key1, first_block, n_trials = run
    ch, ff, tg, plc_order, plc_mask, plc_models, plc_rot, coff, goff = charge
    cu, cr, ev, n_ev, g_off, g_nmax, prob, alias, moff, margin_offset = combat
    for b in range(b0, b1):
        state = states[b]
        seed_stream(state, key0, key1, np.uint64(first_block + b))
        acc = part[b]
        reach, gone = flags[b, 0], flags[b, 1]
        high, eff = values[b, 0], values[b, 1]
        first = (first_block + b) * BLOCK_TRIALS
        for t in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            if trial_streams:
                seed_stream(state, key0, key1 ^ TRIAL_STREAM_KEY, np.uint64(first + t))
            arrived, shot = _trial(state, ch, ff, tg, plc_order, plc_mask, plc_models, plc_rot, coff, goff, acc,
                                   reach, high, eff, gone)
            if arrived & 1:
                _fight(state, min(shot, cu[0, U_START_HP]), cu, by_hp, cr, ev, n_ev, g_off, g_nmax, prob, alias, moff,
                       margin_offset, acc)
