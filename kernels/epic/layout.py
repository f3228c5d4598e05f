"""The Epic kernel's layout: the columns of the tables Python builds (``analysis/epic/engine.py``) and the rows of
the per-lane state a block works in, as named constants; nothing here runs.

Clauses are cited as §n of ``docs/epic-engine.md`` (spec) and TP = NetEA Tournament Pack.
"""
from typing import NamedTuple

import numpy as np

from .hits import ASSAULT_KINDS, NO_ROLL  # noqa: F401  (every layer reads NO_ROLL here)


def _int64s(n):
    """0 .. n-1 as np.int64 values: the codes and rows that kernel functions pass to helpers (a side, a unit set, a
    war engine's state row, a booking mode, a damage or stack-frame kind).  Plain Numba types an int constant as its
    literal value and compiles the helper once per value; an np.int64 constant is typed int64, so the helper compiles
    once (docs/performance.md, "Why plain mode compiles longer")."""
    return tuple(np.int64(i) for i in range(n))


# Unit table columns (int64[N, U_COLS]); units in allocation order (CompiledEpic.units).
# U_SAVE = min(armour, cover); U_SNIPE = a sniper's target (Inspiring, Leader or Supreme Commander);
# U_LOSS_BM = its losses give a winner BMs (not Expendable, unless its whole formation is).
# U_ASSAULT: of an assault formation; U_TARGET: and directly engaged (bc / ff: hits can reach it);
# U_BCT: and bc, fighting in contact (not a firefighting Skimmer / Support Craft); U_INSPC: an Inspiring unit
# that counts for the result (§5, switch `inspiring`);
# U_SIMPLE: neither Reinforced Armour nor Invulnerable Save (an ordinary hit = one save roll);
# U_WORD, U_BIT: its bit in its side's alive masks (unit = side_base[side] + 64 * word + bit); U_WE: type WE.
# War-engine rules (read only by the lane-by-lane path of scenarios with R_WE; docs/epic-engine.md §10):
# U_VOID void shields, U_PF_FIX / U_PF_D3 / U_PF_D6 power fields (K + D3s + D6s, rolled at the start of each
# trial), U_SHADOW shadowfields, U_HOLO holofield, U_KNIGHT knight shield, U_INV_ON the invulnerable-type
# save's target (6 invulnerable, 5 deflector, 4 living metal; NO_ROLL none) and U_INV_DEG once a critical has
# taken the deflector shield away, U_CRIT its critical kind (CRIT_*), U_CRIT_DMG the points it does,
# U_CRIT_THEN a degraded unit's later kind, U_COVER its cover save, U_REGEN regeneration, U_SPLASH_ON the D6 a
# critical's splash hits on (0: none) and U_SPLASH_KIND the kind of those hits (KIND_AP, KIND_MW, KIND_TK
# (1 point) or KIND_NO_SAVE of wargame_odds.kernels.epic.hits; a self_hit critical's hits on itself too), U_HOLO_LOST
# its degrade critical takes the holofield away; U_DISRUPT_BM a disrupt hit on it gives a winner a BM (U_LOSS_BM: its
# losses do; 0 for an Automaton or Automata unit), U_AUTOMATON it may save a broken formation's no-save hit, U_NECRON it
# may return in the end phase; U_FURTHER_ON an extra_damage critical's further D6 (0: none), U_SELF_HITS / U_SELF_ON a
# self_hit critical's D6 and the roll that hits; U_CHARS its attached characters that added damage capacity (a Land
# Train's battlecars: a lose_character critical removes one at random), their DC in U_CH_DC + i and void shields in
# U_CH_VS + i (i < U_CHARS).
U_FORM, U_ENG, U_SAVE, U_ARMOUR, U_DC, U_RA, U_INV, U_FEARLESS, U_INSPIRING, U_LEADER, U_SC, U_SPEED0, \
    U_SNIPE, U_LOSS_BM, U_SIDE, U_ASSAULT, U_TARGET, U_BCT, U_INSPC, U_SIMPLE, U_WORD, U_BIT, U_WE, \
    U_VOID, U_PF_FIX, U_PF_D3, U_PF_D6, U_SHADOW, U_HOLO, U_KNIGHT, U_INV_ON, U_INV_DEG, U_CRIT, U_CRIT_DMG, \
    U_CRIT_THEN, U_COVER, U_REGEN, U_SPLASH_ON, U_SPLASH_KIND, U_HOLO_LOST, U_DISRUPT_BM, \
    U_AUTOMATON, U_NECRON, U_FURTHER_ON, U_SELF_HITS, U_SELF_ON, U_CHARS = range(47)

MAX_CHARACTERS = 4  # per unit (analysis/epic/model.py: at most 4 characters per group)

U_CH_DC = 47

U_CH_VS = U_CH_DC + MAX_CHARACTERS

U_COLS = U_CH_VS + MAX_CHARACTERS

# Attack-source table columns (int64[S, S_COLS]): a unit's main dice or one extra-attack line.
# S_BC: the unit is engaged bc (uses S_VC while in contact).  S_REACH: where the row's hits may land while
# the unit is in contact: REACH_ANY (every directly engaged enemy unit), or for a war engine's rows (TP 3.1.2)
# REACH_CONTACT (its CC dice: only enemy units fighting in base contact, U_BCT) or REACH_NON_CONTACT (its FF
# dice: only the others); out of contact every row reaches any unit.
# War-engine rules (R_WE; docs/epic-engine.md §10): S_FF_VC its hits at S_VC are firefight hits too (those at
# S_VN always are: void shields, power fields and shadowfields stop them), S_LANCE, S_IC ignore cover,
# S_DISRUPT, S_TK_N / S_TK_SIDES / S_TK_PLUS a titan killer's damage against a war engine (N dice + K),
# S_SUPPORT supporting fire, S_DVC / S_DVN its to-hit values once a critical has degraded its unit; S_SPARE -1
# for an extra-attack line, else (main dice of a war engine, whose count is its starting DC) how many points of
# starting DC its unit may lose with its characters before this row rolls fewer dice (the FF rest of the dice
# goes first: TP 3.1.2; spec §10.4 lose_character).
S_UNIT, S_N, S_D3, S_VC, S_VN, S_CLASS, S_BC, S_REACH, S_FF_VC, S_LANCE, S_IC, S_DISRUPT, S_TK_N, S_TK_SIDES, \
    S_TK_PLUS, S_SUPPORT, S_DVC, S_DVN, S_SPARE = range(19)

S_COLS = 19

# Critical kinds (docs/epic-engine.md §10.4), U_CRIT.
CRIT_NONE, CRIT_DESTROYED, CRIT_EXTRA_DAMAGE, CRIT_BREACH, CRIT_FIRE, CRIT_DEGRADE, CRIT_SELF_HIT, \
    CRIT_LOSE_CHARACTER = range(8)

REACH_ANY, REACH_CONTACT, REACH_NON_CONTACT = _int64s(3)

# Source groups (rows of the source table are sorted by group): side * 3 + step.
# Dice pools: the sources that roll one D6 (no D3) are pooled per group by (to-hit in contact, to-hit not
# in contact, hit class) as a unit mask (``pmask`` uint64[P, W], bounds ``pb`` by group, ``pinfo`` int64[P,
# P_COLS]); a pool rolls one D6 per living unit of its mask.  Other sources stay rows of ``src``.
P_VC, P_VN, P_CLASS = range(3)

P_COLS = 3

G_FIRST, G_NORMAL, G_SUPPORT = 0, 1, 2

#: an assault's hit classes: its kinds, without and with sniper (wargame_odds.kernels.epic.hits)
N_CLASSES = 2 * ASSAULT_KINDS

# Formation table columns (int64[F, F_COLS]).
# F_ANY_SC / F_ANY_LEADER: the formation has a Supreme Commander / a Leader (skips counting them).
# F_N: its units; F_SIZE0: its starting size (WE = starting DC); F_SPEED0: it has a non-Fearless speed-0
# bc / ff unit (withdrawal kills it); F_ANY_WE: it has a war engine; F_WE_WD: damage each of its
# non-Fearless war engines takes when it withdraws (enemy units within 15 cm, TP 3.2.4), 0 if it has none.
# F_OUTSIDE: a turn scenario's formation that takes no part in the assault (docs/epic-turn.md §2).
F_SIDE, F_ASSAULT, F_INIT, F_BM0, F_BROKEN0, F_TSKNF, F_MOB, F_ENEMY30, F_CAP, F_ANY_SC, F_ANY_LEADER, \
    F_N, F_SIZE0, F_SPEED0, F_ANY_WE, F_WE_WD, F_OUTSIDE = range(17)

F_COLS = 17

# Rule switches (int64[R_COLS]).
# R_WE: the scenario uses war-engine rules (shields, fields, criticals, titan-killer dice, special saves,
# lance, ignore cover, disrupt): its hits are resolved lane by lane (_we_allocations).
# R_TURN: a turn scenario: each trial's activations run first (kernels/epic/turn.py), then its assault if any.
R_SUM, R_NAT1, R_MAX_ROUNDS, R_SF_KILLS, R_INSP_ENGAGED, R_LEADERS, R_SC_REROLL, R_RALLY, R_WE, R_TURN = range(10)

R_COLS = 10

# Side-level count offsets (int64[O_COLS]); O_NO_ASSAULT: a turn's trials without an assault.
O_ATT, O_DEF, O_NONE, O_UNRES, O_NOROLL, O_ROUNDS, O_MARGIN, O_MAX_MARGIN, O_NO_ASSAULT = range(9)

O_COLS = 9

# Per-formation count offsets (int64[F, FO_COLS]).
# FO_CRIT .. FO_SH_E: the war-engine results of a formation with war engines or shielded units (spec §10.9).
FO_DESTROYED, FO_BROKEN_A, FO_BROKEN_E, FO_TESTED, FO_PASSED, FO_CAS, FO_CAS_A, FO_BM_A, FO_BM_E, FO_CRIT, \
    FO_DMG_A, FO_DMG_E, FO_SH_A, FO_SH_E = range(14)

FO_COLS = 14

# Unit sets as bit masks (uint64[2, M_COLS, W] per side, W words of 64 units; a formation's uint64[F, W]):
# every unit of the side (M_ALL), of its assault formations (M_ASSAULT), directly engaged ones (M_TARGET,
# in allocation order), bc ones that fight in contact (M_BC: their enemy is in contact), Inspiring ones that
# count for the result (M_INSP), war engines (M_WE), Leaders (M_LEADER), Supreme Commanders (M_SC),
# non-Fearless units of its assault formations (M_XHIT, those extra hits reach).  The living units are
# ``alive[w, side]``: counts are popcounts (a WE counting its starting DC).
M_ALL, M_ASSAULT, M_TARGET, M_BC, M_INSP, M_WE, M_LEADER, M_SC, M_XHIT = _int64s(9)

M_COLS = 9

BC, OUT = 0, 2

ATTACKER, DEFENDER = _int64s(2)

WIN_ATT, WIN_DEF, WIN_NONE, WIN_UNRESOLVED = O_ATT, O_DEF, O_NONE, O_UNRES  # winner code = its count slot

WIN_NO_ASSAULT = O_NO_ASSAULT

#: Trial streams: trial ``t`` draws from the stream ``(key0, key1 ^ TRIAL_STREAM_KEY, t)``.
TRIAL_STREAM_KEY = np.uint64(0x5452494C5354524D)

LANES = 128

LANES64 = np.int64(LANES)  # as a helper's argument (np.int64: wargame_odds.kernels.epic.access.INT0 says why)

LANE_INT = np.int32  # the integer rows of _run_block (see the module docstring)

# Rows of the per-lane scratch array ``lv`` (one array with constant row offsets, so that LLVM can
# vectorise the lane loops without runtime alias checks between them).
# LV_SIZE: a formation's size (WE = starting DC); LV_SCR0 / LV_SCR1: each side's Supreme Commander re-rolls left.
LV_A, LV_HH, LV_NN, LV_UN, LV_DEAD, LV_EX, LV_HIT, LV_CNT, LV_BMA, LV_BMD, LV_RAWA, LV_RAWD, \
    LV_NATT, LV_NDEF, LV_INSA, LV_INSD, LV_LEAD, LV_MOD, LV_OK, LV_TEST, LV_KILLS, LV_DFD, LV_ATT, LV_ATTT, \
    LV_SLOT0, LV_SLOT1, LV_SLOT2, LV_SIZE, LV_SCR0, LV_SCR1 = range(30)

LV_ROWS = 30

# The rows of a block's ``per_form`` table (each ``[formation * LANES + lane]``): its BMs, broken flag, the BMs
# its losses give it if it wins, rallied (tested, passed), after the assault (BMs, broken, living units,
# casualties, war-engine damage and shields up), broken when the assault began.
FR_BM, FR_BROKEN, FR_LOSSES_BM, FR_TESTED, FR_PASSED, FR_BM_A, FR_BROKEN_A, FR_ALIVE, FR_CAS_A, FR_DMG_A, FR_SH_A, \
    FR_BROKEN0 = range(12)
FORM_ROWS = 12
# The rows of its ``per_lane`` table (each ``[lane]``): the trial's winner code, margin, decided by a roll, round,
# a trial under way, fighting (and at the round's start), ended this round; the assault step's scratch (enemy in
# contact, to-hit values, dice, hits, dice rolled, MW / TK hits, capacity, round-robin passes and rest, its
# prefix, sniper target and its unsaved hits); the loser and whether consequences apply, a rally's withdrawal,
# a trial started this round, a turn's action-test dice and needs (wargame_odds.kernels.epic.turn.turn_lanes).
LN_WINNER, LN_MARGIN, LN_BY_ROLL, LN_ROUND, LN_LIVE, LN_FIGHT, LN_FIGHT0, LN_ENDED, LN_CONTACT, LN_VAL, LN_NN, \
    LN_H, LN_D, LN_D2, LN_D3, LN_D4, LN_NMW, LN_NTK, LN_CAP, LN_QQ, LN_RR, LN_PREFIX, LN_SNIPE, LN_SNIPE_UN, \
    LN_LOSER, LN_CONS, LN_WITHDREW, LN_START, LN_TEST_DIE, LN_TEST_NEED = range(30)
LANE_ROWS = 30

# -- war-engine rules, lane by lane (scenarios with R_WE; docs/epic-engine.md §10, cited as spec §10.n; the
# reference engine's steps are analysis/epic/war_engines.py).  Per-unit state rows of ``wst``:
# [(row * n_units + u) * LANES + lane].  W_DIED: when it was destroyed (a number that grows with each death in
# the block; splash victims are the units living when a splash reaches their formation).  W_LOST_DC /
# W_LOST_VOID: the starting DC and void shields it lost with its characters (lose_character), W_LOST_CHARS
# which of them (bit i: its character i, units column U_CH_DC + i); W_BLOCK its block in the allocation under
# way (its starting DC when the allocation began: the hits are allocated before any is resolved).
W_VOID, W_FIELD, W_SHADOW, W_CRIT, W_BREACH, W_FIRE, W_DEGRADED, W_DIED, W_LOST_DC, W_LOST_VOID, \
    W_LOST_CHARS, W_BLOCK = _int64s(12)

W_ROWS = 12

# Where damage is booked (_book_lane): during the fight (kills and the losses a winner takes as BMs), after
# it (losses only: a splash from a war engine destroyed by extra hits may reach the winner), in the end phase
# (BMs on the unit's unbroken formation; critical effects wait for the next end phase), or in a turn's shooting
# attack (every point's BM held in ``losses_bm`` for the turn's shooting, wargame_odds.kernels.epic.shooting, to place:
# docs/epic-turn.md §3.13).
BOOK_FIGHT, BOOK_LOSSES, BOOK_END_PHASE, BOOK_SHOT = _int64s(4)

# Damage with its consequences (_we_resolve_lane) starts from a hit (shields and saves first), from points on
# the hull, or from a critical's splash.  It runs the reference engine's nested steps (a critical's effect at
# once, before the next point: TP 3.2.3) on an explicit stack ``stk``: stk[0] the death counter, then frames of
# FRAME ints (kind, unit, a, b, c, d): T_HULL (a points left, b 1 if they place BMs), T_FURTHER (an extra_damage
# critical's further D6), T_SELF (a self-hit D6 left), T_SPLASH (a formation, b its next unit, c victims left
# there, d the death counter when its victims were chosen), T_LOSE (a lose_character critical's random
# character).  A run holds at most 1 + 2 × the damage capacity of all units frames (each frame past the first
# comes from a critical, at most two of them live at once, and each critical from a point of damage): the stack
# is sized so (_stack_frames).
E_HIT, E_HULL, E_SPLASH = _int64s(3)

T_HULL, T_FURTHER, T_SELF, T_SPLASH, T_LOSE = _int64s(5)

FRAME = 6

class UnitSets(NamedTuple):
    """The unit sets a count of living units reads (wargame_odds.kernels.epic.units._rows_living): small, so that the
    many calls that count pass little."""

    units: np.ndarray  # int64[N, U_COLS]
    masks: np.ndarray  # uint64[W * 2 * M_COLS]: unit sets, [(2 * w + side) * M_COLS + set]
    fmasks: np.ndarray  # uint64[F * W]: each formation's units
    wes: np.ndarray  # each side's units of DC > 1, bounds ``web``
    web: np.ndarray
    n_words: int  # words of 64 units per side in the alive masks


class Tables(NamedTuple):
    """A scenario's tables, read only (``analysis/epic/engine.py`` builds them;
    :func:`wargame_odds.kernels.epic.block.tables` adds what it derives): every rule step takes them as one argument."""

    units: np.ndarray  # int64[N, U_COLS], units in allocation order
    src: np.ndarray  # int64[S, S_COLS]: attack sources, sorted by group (side * 3 + step), bounds ``gb``
    gb: np.ndarray
    pmask: np.ndarray  # uint64[P, W]: dice pools, bounds ``pb`` by group, ``pinfo`` int64[P, P_COLS]
    pinfo: np.ndarray
    pb: np.ndarray
    dc0: np.ndarray  # int64[N]: starting damage capacity
    forms: np.ndarray  # int64[F, F_COLS]
    fu: np.ndarray  # each formation's units, bounds ``fb``
    fb: np.ndarray
    fwe: np.ndarray  # each formation's war engines and shielded units, bounds ``fweb``
    fweb: np.ndarray
    splash: np.ndarray  # int64[F, F]: [g, s] units of formation g within the critical splash of formation s's
    trapped: np.ndarray  # float64[F]: P(a unit is lost when the formation withdraws)
    rules: np.ndarray  # int64[R_COLS]
    side_off: np.ndarray  # int64[O_COLS]: side-level count offsets
    form_off: np.ndarray  # int64[F, FO_COLS]: per-formation count offsets
    sets: UnitSets  # the unit sets (alive-mask counts)
    base: np.ndarray  # int64[2]: each side's first unit
    ho: np.ndarray  # int64[F, 3]: each formation's joint histograms in the block's ``hist``
    tgt: np.ndarray  # each side's directly engaged units in allocation order, bounds ``tgb``
    tgb: np.ndarray
    xh: np.ndarray  # each side's units a lost assault's extra hits reach, bounds ``xhb``
    xhb: np.ndarray
    all_tsknf: np.ndarray  # int64[2]: every assault formation of the side has They Shall Know No Fear
    any_sc: np.ndarray  # int64[2]: the side's army has a Supreme Commander
    splashes: bool  # has a unit a critical whose splash reaches a unit (spec §10.6)
    we: bool  # war-engine rules (rules[R_WE]): hits resolved lane by lane, per-unit state in ``Lanes.wst``


class Lanes(NamedTuple):
    """A block's per-lane state, views of its work buffers (``[row * LANES + lane]``, see the module's rows), made
    by :func:`wargame_odds.kernels.epic.block.lanes`; zeroed when the block begins."""

    rs: np.ndarray  # uint64[4 * LANES]: each lane's generator state (wargame_odds.kernels.epic.dice)
    alive: np.ndarray  # uint64[2 * W * LANES]: each side's living units, [(side * W + w) * LANES + lane]
    state: np.ndarray  # uint64[4]: scratch for seeding a stream
    hp: np.ndarray  # [N * LANES]: damage capacity left
    kills: np.ndarray  # [2 * LANES]: each side's kills for the result roll
    hits: np.ndarray  # [2 * N_CLASSES * LANES]: a step's hits of each side by class
    reach_hits: np.ndarray  # [12 * LANES]: a war engine's hits in contact, [((side * 2 + reach - 1) * 3 + kind)]
    lv: np.ndarray  # [LV_ROWS * LANES]: the steps' scratch rows
    per_form: np.ndarray  # [FORM_ROWS, F * LANES]
    per_lane: np.ndarray  # [LANE_ROWS, LANES]
    bm: np.ndarray  # per_form[FR_BM]
    broken: np.ndarray  # per_form[FR_BROKEN]
    losses_bm: np.ndarray  # per_form[FR_LOSSES_BM]
    elig: np.ndarray  # [N]: an allocation's scratch (a unit list, or the hits each unit takes)
    wst: np.ndarray  # war-engine rules only: [W_ROWS * N * LANES] per-unit state (W_* rows)
    shits: np.ndarray  # war-engine rules only: [S * LANES] a step's hits of each source row
    sff: np.ndarray  # war-engine rules only: [S * LANES] their firefight and contact bits
    stk: np.ndarray  # war-engine rules only: the stack of wargame_odds.kernels.epic.damage._we_resolve_lane
    hist: np.ndarray  # int64: the formations' joint histograms (Tables.ho)
    tscr: np.ndarray  # int64: a turn's scratch (wargame_odds.kernels.epic.turn.scratch_size), empty for an assault


class Fight(NamedTuple):
    """The assault round's view of a block's :class:`Tables` and :class:`Lanes` (wargame_odds.kernels.epic.assault: the
    to-hit rolls, the allocation, saves and damage without war-engine rules; made by ``assault.fight``): only the arrays
    its steps read and write, about half the words of ``Tables`` and ``Lanes``, which every call of a step passes by
    value."""

    units: np.ndarray  # Tables: the units, attack sources, their group bounds, dice pools and bounds, targets
    src: np.ndarray
    gb: np.ndarray
    pmask: np.ndarray
    pinfo: np.ndarray
    pb: np.ndarray
    tgt: np.ndarray
    tgb: np.ndarray
    base: np.ndarray
    sets: UnitSets
    turn: bool  # a turn scenario (rules[R_TURN])
    we: bool  # war-engine rules (rules[R_WE])
    rs: np.ndarray  # Lanes: generators, alive masks, hit points, hits, scratch rows, counts
    alive: np.ndarray
    hp: np.ndarray
    hits: np.ndarray
    reach_hits: np.ndarray
    lv: np.ndarray
    per_lane: np.ndarray
    broken0: np.ndarray  # per_form[FR_BROKEN0]: each formation broken when the assault began
    kills: np.ndarray
    losses_bm: np.ndarray
    elig: np.ndarray
    wst: np.ndarray
    shits: np.ndarray
    sff: np.ndarray


class Run(NamedTuple):
    """What a block runs: its index ``b`` (its row of the counts), ``n_trials`` trials from global trial
    ``first_trial``, on the streams of ``(key0, key1)``: one per lane of the block, or one per trial."""

    b: int
    n_trials: int
    first_trial: int
    key0: np.uint64
    key1: np.uint64
    trial_streams: bool


class Blocks(NamedTuple):
    """The blocks ``b0..b1`` of a run of ``n_trials`` trials from global block ``first_block`` (the run's block
    ``b`` is global block ``first_block + b``), on the streams of ``(key0, key1)``: one call of the block function."""

    b0: int
    b1: int
    n_trials: int
    first_block: int
    key0: np.uint64
    key1: np.uint64
    trial_streams: bool


class Damage(NamedTuple):
    """What war-engine damage reads and writes (wargame_odds.kernels.epic.damage, made by its ``damage_state``): the few
    arrays a hit, a point on the hull or a critical's splash needs, so that a call for each hit passes little."""

    units: np.ndarray
    fu: np.ndarray
    fb: np.ndarray
    splash: np.ndarray
    rs: np.ndarray
    hp: np.ndarray
    alive: np.ndarray
    wst: np.ndarray
    stk: np.ndarray
    losses_bm: np.ndarray
    kills: np.ndarray
    bm: np.ndarray
    broken: np.ndarray
    n_words: int


class WeHits(NamedTuple):
    """A step's hits under the war-engine rules (wargame_odds.kernels.epic.allocation._we_allocations): the source rows
    and their hits and firefight / contact bits in each lane, the targets, a scratch list, whether a critical's
    splash reaches a unit."""

    src: np.ndarray
    shits: np.ndarray
    sff: np.ndarray
    tgt: np.ndarray
    tgb: np.ndarray
    elig: np.ndarray
    splashes: bool
