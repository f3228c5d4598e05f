"""The layout of a turn scenario's tables (``analysis/epic/engine.py::turn_tables``), read by the turn's steps
(:mod:`kernels.epic.turn`, :mod:`kernels.epic.shooting`): a tuple of int64 2-D arrays ``T``.

``T[T_ACTS]`` one row per activation (A_* columns, with the count offsets of its results),
``T[T_OWF]`` the formations each ``engage`` draws overwatch fire from (column 0, rows A_OWF0..A_OWF1),
``T[T_WPN]`` weapon lines (WP_* columns), ``T[T_WB]`` each unit's lines ``T[T_WB][u, 0]..T[T_WB][u + 1, 0]``,
``T[T_TU]`` per unit (TU_* columns), ``T[T_BAR]`` the barrage table (BAR_* columns),
``T[T_FORMS]`` per formation (TF_* columns), ``T[T_INFO]`` row 0: I_* values.
"""


NONE = -1  # a missing value (to-hit value, target, count) in the turn tables


NO_ATTACK = -99  # a lane's to-hit modifier (shoot_lanes) when it makes no attack


T_ACTS, T_OWF, T_WPN, T_WB, T_TU, T_BAR, T_FORMS, T_INFO = range(8)


# Activation columns.  A_IN_RANGE / A_EXPOSED / A_TEMPLATES: NONE for "all" / the default coverage;
# A_COVER_SAVE: NO_ROLL when none; A_OW_COVER: the target is all infantry (on overwatch it counts as in
# cover, TP 1.8.4); A_O_*: count offsets (A_N_*: slots of a histogram; -1 when the activation cannot shoot);
# A_DECLARE the declaration at a mixed target (DECLARE_*).
A_FORM, A_ACTION, A_TARGET, A_RETAIN, A_HOLD, A_CROSSFIRE, A_IN_RANGE, A_EXPOSED, A_COVER, A_COVER_SAVE, \
    A_OW_COVER, A_AP_AT, A_TEMPLATES, A_MAY_SHOOT, A_OWF0, A_OWF1, A_O_ACTED, A_O_PASSED, A_O_BROKEN, A_O_HITS, \
    A_N_HITS, A_O_KILLS, A_N_KILLS, A_O_BMP, A_N_BMP, A_O_BMA, A_N_BMA, A_DECLARE = range(28)


A_COLS = 28


ADVANCE, DOUBLE, SUSTAINED_FIRE, MARSHAL, HOLD, OVERWATCH, MARCH, ENGAGE = range(8)  # actions


HOLD_SHOOT, HOLD_MOVE, HOLD_REGROUP = range(3)  # the Hold after a failed action test


AP_AT_AUTO, AP_AT_AP, AP_AT_AT = range(3)


DECLARE_AUTO, DECLARE_WE, DECLARE_OTHERS = range(3)  # "at the war engines" / "at the others" (TP 3.2.1)


# A pooled direct hit's ``hunit`` (a barrage hit's is its unit): AIM_ALL into the one allocation, or the group
# of a mixed target it was declared at (TP 3.2.1).
AIM_ALL, AIM_WE, AIM_OTHERS = -1, -2, -3


KIND_CHOOSE = 4  # a weapon line whose AP/AT type the default policy chooses (_fixed_type)


TIE = 1e-9  # expectations closer than this are equal (analysis.epic.shooting.TIE)


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
# splash reaches a unit (kernels.epic.damage._we_resolve_lane's ``splashes``).
I_MAX_HITS, I_SPLASHES = range(2)


I_COLS = 2


# Fire types and hit flags.
KIND_AP, KIND_AT, KIND_MW, KIND_TK = range(4)


HF_SNIPER, HF_DISRUPT, HF_LANCE, HF_IC = 1, 2, 4, 8
