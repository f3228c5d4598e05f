"""Step tests of the Epic kernel (issue 27 §2): each lane primitive or rule step of ``kernels/epic`` against the same
step of the reference engine on crafted states, exact where the step is deterministic, else at 5 binomial standard
errors of an exact value with fixed seeds.  The clause each test covers is in its name and docstring.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``_start``): the scenario's tables
(``wargame_odds.kernels.epic.block.tables``) and a zeroed :class:`wargame_odds.kernels.epic.layout.Lanes`
(``block.lanes``).
"""
from __future__ import annotations

import random
from fractions import Fraction as F
from math import sqrt

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.compile import NO_ABILITIES, Abilities
from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.analysis.epic.exact_steps import d6_test, markers_after_pass, rally_modifier, result_margins
from wargame_odds.analysis.epic.reference.allocation import allocate
from wargame_odds.analysis.epic.reference.block import new_trial
from wargame_odds.analysis.epic.reference.breaks import fails_break_test, withdraw
from wargame_odds.analysis.epic.reference.saves import save_throw
from wargame_odds.analysis.epic.reference.state import CONTACT_ONLY, MACRO_WEAPON, NON_CONTACT_ONLY, ORDINARY, Hit
from epic_helpers import SIGMAS, exact_distribution
from wargame_odds.kernels.epic import block
from wargame_odds.kernels.epic.access import kernel_function
from wargame_odds.kernels.epic.allocation import _round_robin_lane
from wargame_odds.kernels.epic.assault import fight
from wargame_odds.kernels.epic.breaks import _fails_break_test, _withdraw_lane
from wargame_odds.kernels.epic.damage import damage_state
from wargame_odds.kernels.epic.dice import _seed_lanes
from wargame_odds.kernels.epic.end_phase import _rally
from wargame_odds.kernels.epic.hits import H_IC, H_LANCE, H_SNIPER, H_SUPPORT, KIND_AP, KIND_MW, NO_ROLL
from wargame_odds.kernels.epic.layout import (
    BOOK_LOSSES, DEFENDER, FR_ALIVE, LANES, LN_ENDED, LN_FIGHT, LN_LIVE, LN_MARGIN, LN_WINNER, LV_OK, LV_SCR0, WIN_ATT,
    WIN_DEF, Run)
from wargame_odds.kernels.epic.result import _result_roll
from wargame_odds.kernels.epic.saves import _unsaved_lane, _we_saved_lane
from wargame_odds.kernels.epic.shooting import _plain_attack, _shoot_lane, shoot_lanes
from wargame_odds.kernels.epic.turn import _attack, _overwatch_fire, _withdrawal_fire, scratch_size, shot_scratch
from wargame_odds.kernels.epic.turn_layout import (A_OWF0, A_OWF1, AP_AT_AUTO, DECLARE_AUTO, I_MAX_HITS, I_SPLASHES,
                                                   NO_ATTACK, NONE, WF_AT, WF_FORM)
from wargame_odds.kernels.epic.units import _clear_unit
from test_reference import formation

L = LANES
KEY0, KEY1 = np.uint64(0x1234), np.uint64(0x5678)


@njit(cache=True)
def _start(tb, st, key1):
    """Every lane begins a trial of the block (streams keyed by ``KEY0``, ``key1``): hit points, alive masks,
    formation state as _start_trials sets them."""
    _seed_lanes(st.rs, st.state, KEY0, key1, 0)
    st.per_lane[LN_LIVE, :] = 0
    block._start_trials(tb, st, Run(0, LANES, 0, KEY0, key1, False), 0)


def _state(compiled, seed: int = 0):
    arrays = KernelArrays.build(compiled)
    tb = block.tables(arrays)
    st = block.lanes(tb, 0)
    _start(tb, st, np.uint64(seed))
    return tb, st


# -- allocation: one round-robin per hit kind, war-engine blocks, restricted hits (exact) ----------------------

@kernel_function
def _round_robin_lane0(tb, st, side, n_any, n_contact, n_other):
    """_round_robin_lane in lane 0, on the assault round's view (without reference counting, as the kernel calls
    it: ``fight`` returns views of ``tb`` and ``st``)."""
    _round_robin_lane(fight(tb, st), 0, side, n_any, n_contact, n_other)


@njit(cache=True)
def _kernel_round_robin(tb, st, side, n_any, n_contact, n_other):
    _round_robin_lane0(tb, st, side, n_any, n_contact, n_other)
    return st.elig.copy()


ENGINE = {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3}
TROOPER = {"type": "INF", "armour": 5, "cc": 4, "ff": 4}
MIXED = [("titan", 1, "bc"), ("trooper", 2, "bc"), ("titan", 1, "ff"), ("trooper", 2, "ff"), ("knight", 1, "bc")]


def _mixed_target(compile_epic):
    """A defender of war engines (DC 3 and 2) and troopers, in base contact and not, in allocation order."""
    units = {"a": TROOPER, "titan": ENGINE, "knight": {**ENGINE, "damage_capacity": 2}, "trooper": TROOPER}
    return compile_epic(units, [formation("A", "attacker", [("a", 1, "bc")]),
                                formation("D", "defender", MIXED)])


def test_round_robin_matches_the_reference_allocation_epic_shooting_3_7(compile_epic):
    """epic-shooting §3.7, epic-armageddon §2.3, §2.10 (TP 1.9.6, 3.1.2, 3.2.1): the kernel's round-robin
    (_round_robin_lane) gives each unit the hits the reference engine's ``allocate`` gives it, for every mix of 0
    to 7 hits any unit may take, hits only units in base contact may take and hits only the others may take, over
    a target of war engines (blocks of DC 3 and 2) and troopers in contact and not (exact, 512 allocations)."""
    compiled = _mixed_target(compile_epic)
    tb, st = _state(compiled)
    trial = new_trial(compiled, None)
    eligible = trial.directly_engaged(DEFENDER)
    first = int(tb.tgb[DEFENDER])
    for n_any in range(8):
        for n_contact in range(8):
            for n_other in range(8):
                taken = _kernel_round_robin(tb, st, DEFENDER, n_any, n_contact, n_other)
                hits = ([Hit(ORDINARY, False)] * n_any + [Hit(ORDINARY, False, CONTACT_ONLY)]
                        * n_contact + [Hit(ORDINARY, False, NON_CONTACT_ONLY)] * n_other)
                counts = {id(u): 0 for u in eligible}
                for _, unit, _ in allocate(hits, eligible):
                    counts[id(unit)] += 1
                kernel = [int(taken[k - first]) for k in range(first, int(tb.tgb[DEFENDER + 1]))]
                assert kernel == [counts[id(u)] for u in eligible], (n_any, n_contact, n_other)


# -- saves (5 sigma against the reference's exact distribution) -----------------------------------------------

@njit(cache=True)
def _kernel_unsaved(rs, units, cls, u, reps):
    failed = 0
    for _ in range(reps):
        for l in range(LANES):
            f, _ = _unsaved_lane(rs, l, cls, u, units)
            failed += f
    return failed


@njit(cache=True)
def _kernel_we_saved(rs, units, wst, u, kind, how, reps):
    saved = 0
    for _ in range(reps):
        for l in range(LANES):
            s, _ = _we_saved_lane(rs, l, u, units, wst, kind, how, True, True)
            saved += s
    return saved


def _close(count: int, n: int, p: F) -> bool:
    if p in (0, 1):
        return count == p * n
    return abs(count / n - float(p)) <= SIGMAS * sqrt(float(p * (1 - p)) / n)


SAVE_CASES = {  # case: (defender profile, its fields, hit kind, sniper)
    "armour 4+": ({"type": "INF", "armour": 4, "cc": 4}, {}, ORDINARY, False),
    "cover 3+ on armour 5+": ({"type": "INF", "armour": 5, "cc": 4}, {"cover": 3}, ORDINARY, False),
    "reinforced armour re-rolls on armour": ({"type": "AV", "armour": 4, "cc": 4, "special": ["reinforced-armour"]},
                                             {}, ORDINARY, False),
    "RA re-roll of a failed cover save, sniper": ({"type": "INF", "armour": 5, "cc": 4,
                                                   "special": ["reinforced-armour"]}, {"cover": 3}, ORDINARY,
                                                  True),
    "invulnerable after a failed save": ({"type": "INF", "armour": 4, "cc": 4, "special": ["invulnerable-save"]},
                                         {}, ORDINARY, False),
    "macro-weapon: RA only": ({"type": "AV", "armour": 4, "cc": 4, "special": ["reinforced-armour"]}, {},
                              MACRO_WEAPON, False),
    "macro-weapon: no save": ({"type": "INF", "armour": 3, "cc": 4}, {"cover": 4}, MACRO_WEAPON, False),
    "macro-weapon sniper, RA and invulnerable": ({"type": "AV", "armour": 4, "cc": 4,
                                                  "special": ["reinforced-armour", "invulnerable-save"]}, {},
                                                 MACRO_WEAPON, True),
}


@pytest.mark.parametrize("case", sorted(SAVE_CASES))
def test_assault_save_matches_the_reference_tp_1_9_6_2_1_6_2_1_11(compile_epic, case):
    """TP 1.9.6, 2.1.6, 2.1.11, 2.1.14, 2.2.6 (spec §2): the kernel's save of one hit (_unsaved_lane) fails as often as
    the reference engine's ``save_throw`` (exact over its dice), at 5σ over 128 × 2,000 hits, seed fixed."""
    profile, fields, kind, sniper = SAVE_CASES[case]
    compiled = compile_epic({"a": TROOPER, "d": profile}, [formation("A", "attacker", [("a", 1, "bc")]),
                                                         formation("D", "defender", [("d", 1, "bc")], **fields)])
    slot = compiled.units[1]
    p_saved = exact_distribution(lambda rng: save_throw(rng, slot, Hit(kind, sniper))).get(True, F(0))
    tb, st = _state(compiled, seed=3)
    cls = {ORDINARY: 0, MACRO_WEAPON: 1}[kind] + 3 * sniper
    reps = 2000
    failed = _kernel_unsaved(st.rs, tb.units, cls, slot.index, reps)
    assert _close(failed, reps * L, 1 - p_saved), (case, failed / (reps * L), float(1 - p_saved))


WE_SAVE_CASES = {  # case: (profile, its fields, hit kind, abilities, sniper, supporting fire)
    "holofield 3+ (sniper 4+)": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3,
                                  "special": ["holofield"]}, {}, ORDINARY, NO_ABILITIES, True, False),
    "knight shield 4+, not against supporting fire": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3,
                                                       "special": ["knight-shield"]}, {}, ORDINARY,
                                                      NO_ABILITIES, False, True),
    "lance: no RA re-roll": ({"type": "WE", "armour": 4, "cc": 4, "damage_capacity": 3,
                              "special": ["reinforced-armour"]}, {}, ORDINARY, Abilities(lance=True), False,
                             False),
    "ignore cover": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3}, {"cover": 3}, ORDINARY,
                     Abilities(ignore_cover=True), False, False),
    "living metal 4+ after a macro-weapon hit": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3,
                                                  "special": ["living-metal"]}, {}, MACRO_WEAPON,
                                                 Abilities(macro_weapon=True), False, False),
}


@pytest.mark.parametrize("case", sorted(WE_SAVE_CASES))
def test_war_engine_rules_save_matches_the_reference_spec_10_3(compile_epic, case):
    """Spec §10.3 (TP 2.1.6, 2.1.11, 2.2.5; TP-SR Eldar, Knight, Necron Technology): the war-engine rules' save of
    one hit (_we_saved_lane) saves as often as the reference's ``save_throw`` (exact), at 5σ, seed fixed."""
    profile, fields, kind, abilities, sniper, support = WE_SAVE_CASES[case]
    compiled = compile_epic({"a": TROOPER, "d": profile}, [formation("A", "attacker", [("a", 1, "bc")]),
                                                         formation("D", "defender", [("d", 1, "bc")], **fields)])
    slot = compiled.units[1]
    hit = Hit(kind, sniper, supporting=support, abilities=abilities)
    p_saved = exact_distribution(lambda rng: save_throw(rng, slot, hit)).get(True, F(0))
    tb, st = _state(compiled, seed=4)
    how = (H_SNIPER * sniper + H_LANCE * abilities.lance + H_IC * abilities.ignore_cover + H_SUPPORT * support)
    wst = np.zeros(16 * tb.units.shape[0] * L, np.int32)  # war-engine state: not degraded
    reps = 2000
    saved = _kernel_we_saved(st.rs, tb.units, wst, slot.index, {ORDINARY: KIND_AP, MACRO_WEAPON: KIND_MW}[kind],
                             how, reps)
    assert _close(saved, reps * L, p_saved), (case, saved / (reps * L), float(p_saved))


# -- break test (exact) ----------------------------------------------------------------------------------------

@njit(cache=True)
def _kernel_fails(tb, st, f):
    return _fails_break_test(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, f, 0)


@pytest.mark.parametrize("tsknf", [False, True])
def test_break_test_counts_starting_dc_and_tsknf_tp_1_13_2_3_0(compile_epic, tsknf):
    """TP 1.13.2, 3.0, TP-SR TSKNF: a formation breaks when its BMs reach its size, a war engine counting its starting
    DC (here 2 troopers and a DC-3 engine: 5), twice that with They Shall Know No Fear; as the reference's break test
    (wargame_odds.analysis.epic.reference.breaks.fails_break_test)."""
    rules = ["they-shall-know-no-fear"] if tsknf else []
    compiled = compile_epic({"a": TROOPER, "titan": ENGINE, "trooper": TROOPER},
                            [formation("A", "attacker", [("a", 1, "bc")]),
                             formation("D", "defender", [("titan", 1, "bc"), ("trooper", 2, "bc")],
                                       army_rules=rules)])
    tb, st = _state(compiled)
    defender = new_trial(compiled, None).formations[1]
    limit = defender.size * (2 if tsknf else 1)
    for bm in range(limit + 2):
        st.bm[L:2 * L] = defender.blast_markers = bm
        assert _kernel_fails(tb, st, 1) == fails_break_test(defender) == (bm >= limit), bm


# -- withdrawal (exact for war engines, 5 sigma for trapped units) ---------------------------------------------

@kernel_function
def _withdraw_lanes(tb, st, f):
    """Formation ``f`` withdraws in every lane (without reference counting, as the kernel calls
    _withdraw_lane: ``damage_state`` returns views of ``tb`` and ``st``)."""
    dm = damage_state(tb, st)
    for l in range(LANES):
        _withdraw_lane(dm, tb.trapped, tb.forms, l, f, True, BOOK_LOSSES, False)


@njit(cache=True)
def _kernel_withdraw(tb, st, f, key1):
    lost = np.zeros(tb.units.shape[0], np.int64)
    for rep in range(200):
        _start(tb, st, key1 + np.uint64(rep))
        _withdraw_lanes(tb, st, f)
        for u in range(tb.units.shape[0]):
            for l in range(LANES):
                lost[u] += tb.dc0[u] - st.hp[u * LANES + l]
    return lost


def test_withdrawal_tp_1_13_3_3_2_4(compile_epic):
    """TP 1.13.3, 2.1.3, 3.2.4 (spec §6.2, §9.5): a withdrawal loses each non-Fearless trapped unit with the
    formation's ``trapped`` chance (5σ over 25,600 withdrawals, seed fixed), kills its speed-0 units outright, and
    gives each non-Fearless war engine a point of damage per enemy unit within 15 cm, no save (exact); the
    reference's ``withdraw`` on the same formation agrees on the war engine's damage, the speed-0 loss and the
    Fearless unit kept."""
    units = {"a": TROOPER, "titan": ENGINE, "trooper": TROOPER,
             "gun": {**TROOPER, "speed": 0}, "ogryn": {**TROOPER, "special": ["fearless"]}}
    compiled = compile_epic(units, [formation("A", "attacker", [("a", 1, "bc")]),
                                    formation("D", "defender", [("titan", 1, "bc"), ("trooper", 2, "bc"),
                                                                ("gun", 1, "bc"), ("ogryn", 1, "bc")],
                                              trapped=0.25, withdrawal_enemies_within_15cm=2)])
    tb, st = _state(compiled)
    lost = _kernel_withdraw(tb, st, 1, np.uint64(9))
    n = 200 * L
    titan, trooper1, trooper2, gun, ogryn = (u.index for u in compiled.units[1:])
    trial = new_trial(compiled, random.Random(0))
    withdraw(trial, trial.formations[1], True)
    titan_ref, *_, gun_ref, ogryn_ref = trial.formations[1].units
    assert lost[titan] == n * (ENGINE["damage_capacity"] - titan_ref.damage_left) == 2 * n
    assert lost[gun] == n * (not gun_ref.alive) == n and lost[ogryn] == 0 == (not ogryn_ref.alive)
    for u in (trooper1, trooper2):
        assert _close(int(lost[u]), n, F(1, 4)), lost[u] / n


# -- rally (5 sigma against the exact rally, exact BMs after a pass) -------------------------------------------

@njit(cache=True)
def _kernel_rally(tb, st, f, bm, broken, key1, reps):
    passes = 0
    for rep in range(reps):
        _start(tb, st, key1 + np.uint64(rep))
        for l in range(LANES):
            st.per_lane[LN_ENDED, l] = 1
            st.bm[f * LANES + l] = bm
            st.broken[f * LANES + l] = broken
            st.per_form[FR_ALIVE, f * LANES + l] = (tb.fb[f + 1] - tb.fb[f])
            st.lv[LV_SCR0 * LANES + l] = 0
            st.lv[(LV_SCR0 + 1) * LANES + l] = 0
        _rally(tb, st, f)
        for l in range(LANES):
            passes += st.lv[LV_OK * LANES + l]
    return passes, st.bm[f * LANES:(f + 1) * LANES].copy(), st.lv[LV_OK * LANES:(LV_OK + 1) * LANES].copy()


RALLY_CASES = {  # case: (initiative, BMs, broken, units, army rules, leaders)
    "unbroken with BMs, initiative 2": (2, 3, False, 4, [], 0),
    "broken, -2": (2, 0, True, 4, [], 0),
    "broken TSKNF keeps its units as BMs": (1, 0, True, 4, ["they-shall-know-no-fear"], 0),
    "Mob Rule +1 with 6 units": (3, 2, False, 6, ["mob-rule"], 0),
    "a Leader removes one more BM": (2, 4, False, 3, [], 1),
}


@pytest.mark.parametrize("case", sorted(RALLY_CASES))
def test_rally_matches_the_exact_rally_tp_1_14_1_2_1_8(compile_epic, case):
    """TP 1.14.1, 2.1.8, 2.1.10, TP-SR TSKNF and Mob Rule (spec §7): the kernel's rally (_rally) passes as often as
    the exact rally (wargame_odds.analysis.epic.exact_steps, as ``epic.rally``), at 5σ over 128 × 300 tests, seed
    fixed; a lane that passed holds exactly the BMs the rules leave (``markers_after_pass``), one that failed its
    BMs (a broken formation stays broken)."""
    initiative, bm, broken, n_units, rules, leaders = RALLY_CASES[case]
    groups = [("trooper", n_units - leaders, "bc")] + ([("leader", leaders, "bc")] if leaders else [])
    units = {"a": TROOPER, "trooper": TROOPER, "leader": {**TROOPER, "special": ["leader"]}}
    compiled = compile_epic(units, [formation("A", "attacker", [("a", 1, "bc")]),
                                    formation("D", "defender", groups, initiative=initiative, army_rules=rules)])
    tb, st = _state(compiled)
    reps = 300
    passes, bm_after, ok = _kernel_rally(tb, st, 1, bm, int(broken), np.uint64(21), reps)
    enemy_near = compiled.formations[1].enemy_within_30cm
    p_pass = d6_test(initiative, rally_modifier(broken, enemy_near, "mob-rule" in rules, n_units))
    assert _close(int(passes), reps * L, p_pass), (case, passes / (reps * L), float(p_pass))
    tsknf = "they-shall-know-no-fear" in rules
    after_pass = markers_after_pass(bm, broken, n_units, leaders, tsknf)
    for l in range(L):
        assert bm_after[l] == (after_pass if ok[l] else bm), (l, ok[l], bm_after[l])


# -- the result roll (5 sigma against the exact margins) -------------------------------------------------------

@njit(cache=True)
def _kernel_result(tb, st, kills_att, kills_def, key1, reps, margins):
    for rep in range(reps):
        _start(tb, st, key1 + np.uint64(rep))
        for l in range(LANES):
            st.kills[l] = kills_att
            st.kills[LANES + l] = kills_def
        _result_roll(tb, st)
        for l in range(LANES):
            won = st.per_lane[LN_WINNER, l] == WIN_ATT or st.per_lane[LN_WINNER, l] == WIN_DEF
            margins[st.per_lane[LN_MARGIN, l] + 20] += 1 if won else 0
            margins[20] += 0 if won or st.per_lane[LN_FIGHT, l] == 0 else 1


@pytest.mark.parametrize("kills", [(0, 0), (2, 0), (1, 3)])
def test_result_roll_matches_the_exact_margins_tp_1_12_7(compile_epic, kills):
    """TP 1.12.7 (spec §5): each side's highest of 2D6 plus its modifiers (here only kills: equal sizes, no BMs on
    either side), the attacker's margin; a tie is another round.  The kernel's margins (_result_roll) at 5σ of
    the exact distribution (wargame_odds.analysis.epic.exact_steps.result_margins), 128 × 300 rolls, seed fixed."""
    compiled = compile_epic({"a": TROOPER, "d": TROOPER}, [formation("A", "attacker", [("a", 2, "bc")]),
                                                           formation("D", "defender", [("d", 2, "bc")])])
    tb, st = _state(compiled)
    reps = 300
    margins = np.zeros(41, np.int64)
    _kernel_result(tb, st, kills[0], kills[1], np.uint64(33), reps, margins)
    exact = result_margins(kills[0], kills[1])
    n = reps * L
    for margin in range(-20, 21):
        assert _close(int(margins[margin + 20]), n, F(exact.get(margin, 0))), (margin, margins[margin + 20] / n)


# -- withdrawal fire: the shooting step's trigger (exact who fires, 5 sigma against the exact attack) ----------------

#: Crafted states, lane ``l`` taking case ``l % 7``: (Guard withdrew, Havocs on overwatch, Havocs broken, Havocs' BMs,
#: Guard has its units, Havocs has its unit).  Only the first fires: the Guard did not withdraw; Havocs not on
#: overwatch, broken, suppressed by their BM, gone; the Guard gone.
WITHDRAWAL_CASES = [(1, 1, 0, 0, 1, 1), (0, 1, 0, 0, 1, 1), (1, 0, 0, 0, 1, 1), (1, 1, 1, 0, 1, 1), (1, 1, 0, 0, 0, 1),
                    (1, 1, 0, 1, 1, 1), (1, 1, 0, 0, 1, 0)]


@njit(cache=True, _nrt=False)
def _kernel_withdrawal_fire(tb, st, tt, cases, withdrew, pflat, overwatch, losses):
    """The crafted state of each lane (Guard broken; the views of shot_scratch need a caller without reference
    counting), then the turn's first withdrawal-fire entry (Havocs at the Guard) in every lane; each lane's Havocs
    overwatch flag and Guard losses after."""
    g, at = tt.wf[0, WF_FORM], tt.wf[0, WF_AT]
    for l in range(LANES):
        c = l % cases.shape[0]
        withdrew[at * LANES + l] = cases[c, 0]
        st.tscr[g * LANES + l] = cases[c, 1]
        st.broken[g * LANES + l] = cases[c, 2]
        st.bm[g * LANES + l] = cases[c, 3]
        st.broken[at * LANES + l] = 1
        st.bm[at * LANES + l] = 0
        for f, keep in ((at, cases[c, 4]), (g, cases[c, 5])):
            for k in range(tb.fb[f], tb.fb[f + 1]):
                if not keep:
                    st.hp[tb.fu[k] * LANES + l] = 0
                    _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
    _withdrawal_fire(tb, st, tt, shot_scratch(tb, tt, st.tscr), 0, 1, withdrew, pflat, 0)
    for l in range(LANES):
        overwatch[l] = st.tscr[g * LANES + l]
        losses[l] = 0
        for k in range(tb.fb[at], tb.fb[at + 1]):
            losses[l] += st.hp[tb.fu[k] * LANES + l] == 0


def _reference_withdrawal_fire(c, case, rng):
    """The reference engine's step (wargame_odds.analysis.epic.turn.Turn.withdrawal_fire) on the crafted state ``case``:
    (fired, Havocs still on overwatch, Guard losses, the attack's hits, its kills)."""
    from wargame_odds.analysis.epic.turn import Turn

    withdrew, on_overwatch, broken, markers, guard_alive, havocs_alive = case
    turn = Turn(c.compiled, c.weapons, rng)
    guard, havocs = turn.by_name["Guard"], turn.by_name["Havocs"]
    guard.broken, guard.blast_markers = True, 0
    havocs.broken, havocs.blast_markers = bool(broken), markers
    if not on_overwatch:
        turn.overwatch.discard("Havocs")
    for side_formation, keep in ((guard, guard_alive), (havocs, havocs_alive)):
        for unit in side_formation.units:
            unit.alive = bool(keep)
    fire, = turn.withdrawal_fire(c.scenario.end_phase.withdrawal_fire, {"Guard"} if withdrew else set())
    hits, kills = (fire.attack.hits, fire.attack.kills) if fire.fired else (0, 0)
    return fire.fired, "Havocs" in turn.overwatch, len(guard.units) - len(guard.living), hits, kills


def _marginal(distribution, i):
    out = {}
    for key, p in distribution.items():
        out[key[i]] = out.get(key[i], 0) + p
    return out


def test_withdrawal_fire_matches_the_reference_step_tp_1_10_1_13_3_1_13_4():
    """TP 1.10, 1.13.3, 1.13.4; epic-shooting §3.10, §5 "Against a withdrawal"; epic-armageddon §2.7: the kernel's
    withdrawal-fire trigger (wargame_odds.kernels.epic.turn._withdrawal_fire, one shoot_lanes call for the lanes that
    fire) against the reference engine's (Turn.withdrawal_fire) on crafted states.  Who fires and who stays on overwatch
    is exact in every lane (no fire unless the target withdrew and has a unit and the firer is on overwatch, unbroken,
    alive and not wholly suppressed; a firer that fires leaves overwatch); where it fires (2 AP4+ shots at 4 broken 5+
    troopers: every BM a no-save hit) the Guard's losses and the attack's counted hits and kills match the reference's
    exact distributions at 5σ over 200 blocks of 128 lanes, seeds fixed, and ``fired`` counts every lane that fired."""
    from wargame_odds.analysis import epic
    from wargame_odds.analysis.epic.turn_result import compile_turn
    from test_withdrawal_fire import SMALL

    c = compile_turn(epic.loads(SMALL["end_phase"]))
    arrays = KernelArrays.build_turn(c)
    tb, tt = arrays.tables(), arrays.turn
    st = block.lanes(tb, scratch_size(tb.units.shape[0], tb.forms.shape[0], tt.info[0, I_MAX_HITS]))
    exact = {case: exact_distribution(lambda rng, case=case: _reference_withdrawal_fire(c, case, rng))
             for case in WITHDRAWAL_CASES}
    decided = {}  # who fires and who stays on overwatch: no die decides them
    for case, distribution in exact.items():
        (decided[case],) = {key[:2] for key in distribution}
    assert [fired for fired, _ in decided.values()] == [True] + [False] * (len(WITHDRAWAL_CASES) - 1)
    cases = np.array(WITHDRAWAL_CASES, np.int64)
    pflat = np.zeros(arrays.n_counts, np.int64)
    losses_seen: dict[int, int] = {}
    for rep in range(200):
        _start(tb, st, np.uint64(300 + rep))
        overwatch, losses = np.zeros(L, np.int64), np.zeros(L, np.int64)
        _kernel_withdrawal_fire(tb, st, tt, cases, np.zeros(tb.forms.shape[0] * L, np.int64), pflat, overwatch,
                                losses)
        for l in range(L):
            case = WITHDRAWAL_CASES[l % len(WITHDRAWAL_CASES)]
            fired, stays = decided[case]
            assert bool(overwatch[l]) == stays, (case, l)
            if fired:
                losses_seen[int(losses[l])] = losses_seen.get(int(losses[l]), 0) + 1
            else:
                assert {key[2] for key in exact[case]} == {losses[l]}, (case, l)
    n_fired = sum(losses_seen.values())
    lay = c.compiled.layout
    assert pflat[lay.offset("end.wf0.fired")] == n_fired > 0
    fires = exact[WITHDRAWAL_CASES[0]]
    for i, seen in ((2, losses_seen),
                    (3, {v: int(pflat[lay.offset("end.wf0.hits") + v]) for v in range(lay.length("end.wf0.hits"))}),
                    (4, {v: int(pflat[lay.offset("end.wf0.kills") + v]) for v in range(lay.length("end.wf0.kills"))})):
        expected = _marginal(fires, i)
        assert {v for v, n in seen.items() if n} <= set(expected), (i, seen, expected)
        for value, p in expected.items():
            assert _close(seen.get(value, 0), n_fired, p), (i, value, seen.get(value, 0) / n_fired, float(p))


# -- shooting: an attack whose weapon lines differ but shoot alike takes the lock-step path, same dice (exact) --

#: Predator Destructors (an AP5+/AT6+ autocannon, two AP5+ heavy bolters) and the lines of a plain attack they are
#: not: a line whose to-hit value, fire type or hit flags differ (TP 1.9.5) makes the attack lane by lane.
ALIKE_SHOOTER = [{"name": "autocannon", "range": 45, "ap": 5, "at": 6},
                 {"name": "heavy bolter", "range": 30, "ap": 5, "count": 2}]
NOT_ALIKE = {"another to-hit value": {"ap": 4}, "another fire type": {"ap": None, "mw": 5},
             "another hit flag": {"ignore_cover": True}}


def _alike_state(weapons: list[dict]):
    """Three shooters with ``weapons`` at twelve Guardians (5+ save, infantry): the turn's tables and lanes."""
    from wargame_odds.analysis.epic.model import EpicScenario
    from wargame_odds.analysis.epic.turn_result import compile_turn

    units = {"gun": {"type": "AV", "armour": 4, "cc": 6, "ff": 5, "weapons": weapons},
             "guardians": {"type": "INF", "armour": 5, "cc": 5, "ff": 5}}
    scenario = EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1, "units": [{"unit": "gun", "count": 3}]},
                       {"name": "Target", "side": "defender", "initiative": 1,
                        "units": [{"unit": "guardians", "count": 12}]}],
        "turn": [{"formation": "Shooter", "action": "double", "target": "Target"}]})
    arrays = KernelArrays.build_turn(compile_turn(scenario))
    tb, tt = arrays.tables(), arrays.turn
    return tb, tt, block.lanes(tb, scratch_size(tb.units.shape[0], tb.forms.shape[0], tt.info[0, I_MAX_HITS]))


@njit(cache=True, _nrt=False)
def _kernel_attack(tb, st, tt, lane_by_lane, hp, bm, broken, res, rs):
    """Crafted states (lane ``l``: no attack when ``l % 9 == 8``; the target in cover with a 4+ cover save when
    ``l % 3 == 0``, broken when ``l % 7 == 0``; its first ``l % 13`` units destroyed; the shooters' BMs ``l % 4``),
    then one attack of formation 0 at formation 1 in every lane: ``shoot_lanes`` (the lock-step path where the attack
    is plain), or ``lane_by_lane`` the lane-by-lane path for every lane.  Returns (plain, dice rolled); the lanes'
    hit points, BMs, broken flags, counted results and generator states after in the other arguments."""
    sc = shot_scratch(tb, tt, st.tscr)
    t0, t1 = tb.fb[1], tb.fb[2]
    for l in range(LANES):
        sc.lane_mod[l] = NO_ATTACK if l % 9 == 8 else -1  # a Double: -1 to hit (TP 1.9.5)
        sc.lane_cover[l] = l % 3 == 0
        sc.lane_cs[l] = 4
        st.bm[l] = l % 4
        st.broken[LANES + l] = l % 7 == 0
        for k in range(t0, t0 + min(l % 13, t1 - t0)):
            st.hp[tb.fu[k] * LANES + l] = 0
            _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    plain = _plain_attack(tb, tt, 0, 1, AP_AT_AUTO, sc.ushots)[0]
    nd = 0
    if lane_by_lane:
        for l in range(LANES):
            if sc.lane_mod[l] != NO_ATTACK:
                for r in range(3):
                    sc.res[r * LANES + l] = 0
                nd += _shoot_lane(tb, st, tt, sc, shot, l)
    else:
        nd = shoot_lanes(tb, st, tt, sc, shot)
    for i in range(st.hp.size):
        hp[i] = st.hp[i]
    for i in range(st.bm.size):
        bm[i] = st.bm[i]
        broken[i] = st.broken[i]
    for i in range(3 * LANES):
        res[i] = sc.res[i]
    for i in range(st.rs.size):
        rs[i] = st.rs[i]
    return plain, nd


def _attack_outcome(tb, tt, st, lane_by_lane: bool, seed: int):
    _start(tb, st, np.uint64(seed))
    st.tscr[:] = 0
    out = tuple(np.zeros(a.size, a.dtype) for a in (st.hp, st.bm, st.broken, np.zeros(3 * L, np.int64), st.rs))
    plain, nd = _kernel_attack(tb, st, tt, lane_by_lane, *out)
    return plain, nd, out


@pytest.mark.parametrize("other", [None, *sorted(NOT_ALIKE)])
def test_weapon_lines_shooting_alike_are_one_plain_attack_tp_1_9_5_1_9_6(other):
    """TP 1.9.5 (a to-hit roll per shot, its need the line's value for the fire type less the modifiers), TP 1.9.6
    (hits allocated round-robin from the front), TP 1.9.4 (BMs), TP 1.13.4 (a broken target's BMs as no-save hits);
    epic-shooting §3.5–§3.11: Predator Destructors' autocannon (AP5+/AT6+, AP at infantry without a policy) and heavy
    bolters (AP5+) shoot alike at Guardians, so their attack is plain (wargame_odds.kernels.epic.shooting._plain_attack)
    and its lock-step path gives exactly the lane-by-lane path's numbers, lane by lane and die by die (hit points, BMs,
    broken flags, hits / kills / BMs placed, generator states, dice rolled) on crafted states; a line that shoots
    otherwise (another to-hit value, fire type or hit flag) makes the attack lane by lane."""
    weapons = [dict(line) for line in ALIKE_SHOOTER]
    if other is not None:
        weapons[1].update(NOT_ALIKE[other])
        weapons[1] = {key: value for key, value in weapons[1].items() if value is not None}
    tb, tt, st = _alike_state(weapons)
    for seed in range(3):
        plain, nd, lock_step = _attack_outcome(tb, tt, st, False, seed)
        assert plain == (other is None)
        _, nd_lanes, lanes = _attack_outcome(tb, tt, st, True, seed)
        assert nd == nd_lanes > 0
        for got, expected in zip(lock_step, lanes):
            np.testing.assert_array_equal(got, expected)
        assert lock_step[3][L:2 * L].sum() > 0  # some kills


# -- overwatch fire at a charger: one shoot_lanes call per formation for all the lanes, same dice (exact) --------

#: Two formations on overwatch at a charging warband: autocannons whose attack is plain (lock-step), and heavy
#: weapons of two to-hit values whose attack goes lane by lane; listed in that order (TP 1.10).
OVERWATCH_FIRE = """
system = "epic"
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[units.autocannon]
type = "INF"
cc = 6
ff = 5
weapons = [{ name = "autocannon", range = 45, ap = 5, at = 6 }]
[units.heavy]
type = "INF"
cc = 6
ff = 5
weapons = [{ name = "autocannon", range = 45, ap = 5, at = 6 }, { name = "heavy bolter", range = 30, ap = 4 }]
[[formations]]
name = "Warband"
side = "attacker"
initiative = 3
units = [{ unit = "boyz", count = 8, engaged = "bc" }]
[[formations]]
name = "Guard"
side = "defender"
initiative = 2
units = [{ unit = "autocannon", count = 4, engaged = "bc" }]
[[formations]]
name = "Autocannons"
side = "defender"
initiative = 2
overwatch = true
units = [{ unit = "autocannon", count = 3 }]
[[formations]]
name = "Heavies"
side = "defender"
initiative = 2
overwatch = true
units = [{ unit = "heavy", count = 2 }]
[[turn]]
formation = "Warband"
action = "engage"
target = "Guard"
overwatch_fire = ["Autocannons", "Heavies"]
"""


@njit(cache=True, _nrt=False)
def _kernel_overwatch_fire(tb, st, tt, lane_by_lane, hp, bm, broken, flags, rs):
    """Crafted states (lane ``l``: the engage acted when ``l % 5 != 4`` and passed its test when ``l % 3 != 2``; each
    overwatch formation ``g`` (2, 3) on overwatch unless ``l % (g + 4) == 0``, broken when ``l % (g + 5) == 1``, its
    units destroyed when ``l % 11 == g``, its BMs ``l % 3``; the charger's first ``l % 9`` units destroyed), then the
    engage's overwatch fire: one :func:`_overwatch_fire` call, or ``lane_by_lane`` an attack per lane and formation
    that fires, in list order (as the turn made it before).  Returns (the dice rolled, whether each formation's attack
    is plain); the lanes' hit points, BMs, broken and overwatch flags and generator states after in the other
    arguments."""
    sc = shot_scratch(tb, tt, st.tscr)
    plain = (_plain_attack(tb, tt, 2, 0, AP_AT_AUTO, sc.ushots)[0],
             _plain_attack(tb, tt, 3, 0, AP_AT_AUTO, sc.ushots)[0])
    o = tb.forms.shape[0] * LANES
    acted, passed = st.tscr[o + 3 * LANES:o + 4 * LANES], st.tscr[o + 4 * LANES:o + 5 * LANES]
    for l in range(LANES):
        acted[l] = l % 5 != 4
        passed[l] = acted[l] and l % 3 != 2
        sc.lane_mod[l] = NO_ATTACK
        for k in range(tb.fb[0], tb.fb[0] + l % 9):
            st.hp[tb.fu[k] * LANES + l] = 0
            _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
        for g in (2, 3):
            st.tscr[g * LANES + l] = l % (g + 4) != 0
            st.broken[g * LANES + l] = l % (g + 5) == 1
            st.bm[g * LANES + l] = l % 3
            if l % 11 == g:
                for k in range(tb.fb[g], tb.fb[g + 1]):
                    st.hp[tb.fu[k] * LANES + l] = 0
                    _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
    nd = 0
    if lane_by_lane:
        for l in range(LANES):
            if not passed[l]:
                continue
            for i in range(tt.acts[0, A_OWF0], tt.acts[0, A_OWF1]):
                g = tt.owf[i, 0]
                living = False
                for k in range(tb.fb[g], tb.fb[g + 1]):
                    living |= st.hp[tb.fu[k] * LANES + l] > 0
                if not st.tscr[g * LANES + l] or st.broken[g * LANES + l] or not living:
                    continue
                st.tscr[g * LANES + l] = 0
                sc.lane_mod[l] = 0
                sc.lane_cover[l] = 0
                sc.lane_cs[l] = NO_ROLL
                nd += shoot_lanes(tb, st, tt, sc, _attack(l, l + 1, g, 0, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO,
                                                          NONE, tt.info[0, I_SPLASHES] != 0))
                sc.lane_mod[l] = NO_ATTACK
    else:
        nd = _overwatch_fire(tb, st, tt, sc, 0, acted, passed)
    for i in range(st.hp.size):
        hp[i] = st.hp[i]
    for i in range(st.bm.size):
        bm[i] = st.bm[i]
        broken[i] = st.broken[i]
        flags[i] = st.tscr[i]
    for i in range(st.rs.size):
        rs[i] = st.rs[i]
    return nd, plain


def test_overwatch_fire_of_all_lanes_in_one_call_keeps_each_lanes_dice_tp_1_10():
    """TP 1.10 (a formation on overwatch, unbroken and with a living unit, shoots at the charger, then leaves
    overwatch), TP 1.9.3–1.9.7 (the attack): wargame_odds.kernels.epic.turn._overwatch_fire makes one shoot_lanes call
    per formation listed for every lane whose engage passed its test, and gives exactly the numbers of an attack per
    lane and formation in list order (hit points, BMs, broken and overwatch flags, generator states, dice rolled) on
    crafted states, with a plain (lock-step) attack and a lane-by-lane one."""
    from wargame_odds.analysis import epic
    from wargame_odds.analysis.epic.turn_result import compile_turn

    c = compile_turn(epic.loads(OVERWATCH_FIRE))
    arrays = KernelArrays.build_turn(c)
    tb, tt = arrays.tables(), arrays.turn
    st = block.lanes(tb, scratch_size(tb.units.shape[0], tb.forms.shape[0], tt.info[0, I_MAX_HITS]))
    assert [tt.owf[i, 0] for i in range(tt.acts[0, A_OWF0], tt.acts[0, A_OWF1])] == [2, 3]
    for seed in range(3):
        outcomes = []
        for lane_by_lane in (False, True):
            _start(tb, st, np.uint64(seed))
            st.tscr[:] = 0
            out = tuple(np.zeros(a.size, a.dtype) for a in (st.hp, st.bm, st.broken, st.tscr, st.rs))
            outcomes.append((_kernel_overwatch_fire(tb, st, tt, lane_by_lane, *out), out))
        ((nd, plain), one_call), ((nd_lanes, _), lanes) = outcomes
        assert plain == (True, False)  # the autocannons in lock-step, the heavies lane by lane
        assert nd == nd_lanes > 0
        for got, expected in zip(one_call, lanes):
            np.testing.assert_array_equal(got, expected)
        hp = one_call[0].reshape(-1, L)
        assert (hp[tb.fu[tb.fb[0]:tb.fb[1]]] == 0).sum() > (np.arange(L) % 9).sum()  # the fire killed some boyz
