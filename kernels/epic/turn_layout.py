"""The layout of a turn scenario's tables (``analysis/epic/engine.py::turn_tables``), read by the turn's steps
(:mod:`wargame_odds.kernels.epic.turn`, :mod:`wargame_odds.kernels.epic.shooting`): :class:`TurnTables`, int64 2-D
arrays, and the per-attack records of a shooting attack (:class:`Shot`, :class:`ShotScratch`, :class:`Aim`).
"""
from typing import NamedTuple

import numpy as np

from .layout import _int64s

# NONE: a missing value (to-hit value, target, count) in the turn tables.  The codes here that kernel functions pass to
# helpers are np.int64 values (wargame_odds.kernels.epic.access.INT0 says why).
NONE = np.int64(-1)

NO_ATTACK = -99  # a lane's to-hit modifier (shoot_lanes) when it makes no attack


# Activation columns.  A_IN_RANGE / A_EXPOSED / A_TEMPLATES: NONE for "all" / the default coverage;
# A_COVER_SAVE: NO_ROLL when none; A_OW_COVER: the target is all infantry (on overwatch it counts as in
# cover, TP 1.8.4); A_O_*: count offsets (A_N_*: slots of a histogram; -1 when the activation cannot shoot);
# A_DECLARE the declaration at a mixed target (DECLARE_*); A_WF0..A_WF1 its withdrawal-fire entries (rows of
# TurnTables.wf).
A_FORM, A_ACTION, A_TARGET, A_RETAIN, A_HOLD, A_CROSSFIRE, A_IN_RANGE, A_EXPOSED, A_COVER, A_COVER_SAVE, \
    A_OW_COVER, A_AP_AT, A_TEMPLATES, A_MAY_SHOOT, A_OWF0, A_OWF1, A_O_ACTED, A_O_PASSED, A_O_BROKEN, A_O_HITS, \
    A_N_HITS, A_O_KILLS, A_N_KILLS, A_O_BMP, A_N_BMP, A_O_BMA, A_N_BMA, A_DECLARE, A_WF0, A_WF1 = range(30)

A_COLS = 30

# Withdrawal-fire entries (docs/epic-turn.md §2a), one row each: the formation on overwatch, the formation it fires
# at when that one withdraws, the map inputs of its attack as on an activation (A_* columns of the same names), the
# count offsets of ``fired`` and of its hits' and kills' histograms (WF_N_*: their slots).
WF_FORM, WF_AT, WF_IN_RANGE, WF_EXPOSED, WF_COVER, WF_COVER_SAVE, WF_AP_AT, WF_DECLARE, WF_TEMPLATES, WF_O_FIRED, \
    WF_O_HITS, WF_N_HITS, WF_O_KILLS, WF_N_KILLS = range(14)

WF_COLS = 14

ADVANCE, DOUBLE, SUSTAINED_FIRE, MARSHAL, HOLD, OVERWATCH, MARCH, ENGAGE = range(8)  # actions

HOLD_SHOOT, HOLD_MOVE, HOLD_REGROUP = range(3)  # the Hold after a failed action test

AP_AT_AUTO, AP_AT_AP, AP_AT_AT = _int64s(3)

DECLARE_AUTO, DECLARE_WE, DECLARE_OTHERS = _int64s(3)  # "at the war engines" / "at the others" (TP 3.2.1)

# A pooled direct hit's ``hunit`` (a barrage hit's is its unit): AIM_ALL into the one allocation, or the group
# of a mixed target it was declared at (TP 3.2.1).
AIM_ALL, AIM_WE, AIM_OTHERS = np.int64(-1), np.int64(-2), np.int64(-3)

KIND_CHOOSE = 5  # a weapon line whose AP/AT type the default policy chooses (_fixed_type); not a KIND_* value

TIE = 1e-9  # expectations closer than this are equal (wargame_odds.analysis.epic.shooting.TIE)

TO_HIT_MODIFIER = (0, -1, 1, -1, 0, 0, 0, 0)  # by action (TP 1.9.5); a Hold and overwatch fire shoot at 0

# Weapon-line columns: to-hit values NONE when absent; WP_BARRAGE a barrage line; its shots and barrage points
# are WP_SHOTS_N / WP_BP_N dice of WP_SHOTS_SIDES / WP_BP_SIDES plus WP_SHOTS / WP_BP, rolled each time the
# weapon fires (TP 1.9.5, 1.9.8); WP_MACRO its hits are macro-weapon hits (``mw``, ``macro_weapon`` or titan
# killer: what a barrage needs); a titan-killer hit's damage on a war engine is WP_TK_N dice of WP_TK_SIDES plus
# WP_TK_PLUS (TP 2.2.9, 3.2.5).
WP_COUNT, WP_SHOTS, WP_AP, WP_AT, WP_MW, WP_BP, WP_TK, WP_DISRUPT, WP_LANCE, WP_IC, WP_SNIPER, WP_MACRO, WP_TK_N, \
    WP_TK_SIDES, WP_TK_PLUS, WP_BARRAGE, WP_SHOTS_N, WP_SHOTS_SIDES, WP_BP_N, WP_BP_SIDES = range(20)

WP_COLS = 20

# Per unit: type code, a disrupt hit on it places no BM (Expendable or Automata: TP-FAQ Disrupt, TP-SR Automata),
# carries a weapon that can fire at ground units (§3.1), its death places a BM (not Expendable, or its whole
# formation is: TP 2.1.22; not an Automaton or Automata unit: TP-SR; §3.10).
TU_TYPE, TU_NO_DISRUPT_BM, TU_FIRES, TU_KILL_BM = range(4)

TU_COLS = 4

INF, LV, AV, WE, CH = range(5)  # unit type codes

BAR_MIN, BAR_MAX, BAR_TEMPLATES, BAR_EXTRA, BAR_AP, BAR_AT = range(6)

TF_OVERWATCH = 0  # per formation: on overwatch when the turn begins

TF_COLS = 1

# Row 0 of T[T_INFO]: the most to-hit successes one attack can score (scratch size); has a unit a critical whose
# splash reaches a unit (wargame_odds.kernels.epic.damage._we_resolve_lane's ``splashes``); the withdrawal-fire entries
# of ``[end_phase]`` (rows I_END_WF0..I_END_WF1 of TurnTables.wf).
I_MAX_HITS, I_SPLASHES, I_END_WF0, I_END_WF1 = range(4)

I_COLS = 4

# Rows of the plain attack's per-lane state ``ShotScratch.rows`` (each ``[row * LANES + lane]``): the lane makes a
# plain attack; its shooter's living units, those counted from the back so far, suppression's BMs left and whether
# it stopped; the units that fire and their shots; the to-hit roll's need; the target's living units; hits; a die
# rolled; the target was broken when the attack began, the kills and the TSKNF carry of its BM's no-save hit (§3.3).
PL_ON, PL_SEEN, PL_AFTER, PL_BUDGET, PL_STOP, PL_NF, PL_SHOTS, PL_NEED, PL_LIVING, PL_HITS, PL_FACE, PL_BROKEN, \
    PL_KILLS, PL_CARRY = range(14)
PL_ROWS = 14
# Slots of ShotScratch.acc, an attack's totals in the lane it resolves: the BMs placed on the target, its units
# killed, the They Shall Know No Fear carry of a broken target's no-save hits (§3.3), the BMs its hits booked for the
# end of the save step (kills, disrupt hits, war engines' damage), 1 once the first of those is booked (it counts 2
# in a crossfire: TP 1.11).
ACC_PLACED, ACC_KILLS, ACC_CARRY, ACC_MARKERS, ACC_FIRST_BOOKED = range(5)


class TurnTables(NamedTuple):
    """A turn scenario's tables."""

    acts: np.ndarray  # one row per activation (A_* columns, with the count offsets of its results)
    owf: np.ndarray  # the formations each engage draws overwatch fire from (column 0, rows A_OWF0..A_OWF1)
    wpn: np.ndarray  # weapon lines (WP_* columns)
    wb: np.ndarray  # each unit's lines: wb[u, 0]..wb[u + 1, 0]
    tu: np.ndarray  # per unit (TU_* columns)
    bar: np.ndarray  # the barrage table (BAR_* columns)
    forms: np.ndarray  # per formation (TF_* columns)
    info: np.ndarray  # row 0: I_* values
    wf: np.ndarray  # withdrawal-fire entries (WF_* columns): the activations', then ``[end_phase]``'s


class Shot(NamedTuple):
    """One activation's attack (wargame_odds.kernels.epic.shooting.shoot_lanes): formation ``shooter`` at ``target`` in
    the lanes ``l0..l1`` (those whose ShotScratch.lane_mod is not NO_ATTACK), its units in range and exposed units
    (NONE: all), crossfire, the policies of docs/epic-turn.md §3.5 (AP_AT_*, DECLARE_*), units per barrage template
    (NONE: by their size), and whether a critical's splash reaches a unit."""

    l0: int
    l1: int
    shooter: int
    target: int
    in_range: int
    n_exposed: int
    crossfire: int
    ap_at: int
    declare_at: int
    per_template: int
    splashes: bool


class ShotScratch(NamedTuple):
    """The per-block scratch of the turn's shooting (views of Lanes.tscr,
    wargame_odds.kernels.epic.turn.shot_scratch)."""

    lane_mod: np.ndarray  # each lane's attack: its to-hit modifier, NO_ATTACK none
    lane_cover: np.ndarray  # its target in cover
    lane_cs: np.ndarray  # and its cover save
    res: np.ndarray  # [r * LANES + lane]: its hits, kills, BMs placed
    cand: np.ndarray  # [N]: the units that can fire; later a declared group's living exposed units
    ex: np.ndarray  # [N]: the target's exposed units
    live: np.ndarray  # [N]: the living exposed units of an allocation step
    cnt: np.ndarray  # [N]: their hits so far
    hkind: np.ndarray  # [max hits]: each hit's kind (KIND_*, wargame_odds.kernels.epic.hits)
    hflag: np.ndarray  # its flags (H_*)
    hunit: np.ndarray  # a barrage hit's unit, else the group a direct hit was declared at (AIM_*)
    hline: np.ndarray  # the weapon line that scored it
    acc: np.ndarray  # [8]: an attack's totals (ACC_* slots)
    spl: np.ndarray  # [F]: formations a critical's splash put BMs on
    ushots: np.ndarray  # [N]: each shooter unit's shots (a plain attack)
    rows: np.ndarray  # [PL_ROWS * LANES]: a plain attack's per-lane state (wargame_odds.kernels.epic.shoot_plain, PL_*)


class Aim(NamedTuple):
    """What the default policies weigh for a weapon line in lane ``l`` (wargame_odds.kernels.epic.shoot_policy._aim):
    its to-hit modifier ``mod``, the ``ne`` exposed units (ShotScratch.ex), the infantry cover save ``cs`` and
    crossfire."""

    l: int
    mod: int
    ne: int
    cs: int
    crossfire: int
