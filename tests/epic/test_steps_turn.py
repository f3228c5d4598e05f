"""Step tests of ``kernels/epic/turn.py`` (withdrawal fire, overwatch fire) against the reference steps.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations


import numpy as np
from numba import njit

from wargame_odds.analysis.epic.engine import KernelArrays
from epic_helpers import exact_distribution
from wargame_odds.kernels.epic import block
from wargame_odds.kernels.epic.hits import NO_ROLL
from wargame_odds.kernels.epic.layout import (
    LANES)
from wargame_odds.kernels.epic.shoot_plain import _plain_attack
from wargame_odds.kernels.epic.shooting import shoot_lanes
from wargame_odds.kernels.epic.turn import _attack, _overwatch_fire, _withdrawal_fire, scratch_size, shot_scratch
from wargame_odds.kernels.epic.turn_layout import (A_OWF0, A_OWF1, AP_AT_AUTO, DECLARE_AUTO, I_MAX_HITS, I_SPLASHES,
                                                   NO_ATTACK, NONE, WF_AT, WF_FORM)
from wargame_odds.kernels.epic.units import _clear_unit

from epic_step_state import L, _close, _start


#: Crafted states, lane ``l`` taking case ``l % 7``: (Guard withdrew, Havocs on overwatch, Havocs broken, Havocs' BMs,
#: Guard has its units, Havocs has its unit).  Only the first fires: the Guard did not withdraw; Havocs not on
#: overwatch, broken, suppressed by their BM, gone; the Guard gone.
WITHDRAWAL_CASES = [(1, 1, 0, 0, 1, 1), (0, 1, 0, 0, 1, 1), (1, 0, 0, 0, 1, 1), (1, 1, 1, 0, 1, 1), (1, 1, 0, 0, 0, 1),
                    (1, 1, 0, 1, 1, 1), (1, 1, 0, 0, 1, 0)]


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
