"""A turn's shooting attack (rule step, docs/epic-turn.md §3; TP 1.9, 2.2, 3.2): who fires, the AP/AT choice and
the declaration at a mixed target (§3.5), to-hit rolls, allocation of direct and barrage hits, saves, blast
markers, war engines shot at (``wargame_odds.kernels.epic.damage``), a broken target's hits, the break test.  One
:func:`shoot_lanes` call makes an attack in every lane, lane by lane; a plain attack (alike lines at a target that
needs no choice) takes the lock-step path of :func:`_plain_lanes`.

Each function takes the scenario's tables ``tb`` and the block's lanes ``st`` (wargame_odds.kernels.epic.layout), the
turn's tables ``tt``, the shooting's scratch ``sc`` and the attack ``shot`` (wargame_odds.kernels.epic.turn_layout) as
it needs them.
"""
import numpy as np

from .access import _at, _max, _min, _put, kernel_function
from .breaks import _break, _fails_at_size, _fails_break_test
from .damage import _we_resolve_lane, damage_state
from .dice import _amount, _d6, _lane_die, _to_hit
from .hits import (H_DISRUPT, H_IC, H_LANCE, H_SNIPER, KIND_AP, KIND_AT, KIND_MW, KIND_TK, _save_targets,
                   _step_kinds)
from .layout import (BOOK_SHOT, E_HULL, F_COLS, F_TSKNF, LANES, NO_ROLL, U_ARMOUR, U_COLS, U_DC, U_FEARLESS, U_INV_DEG,
                     U_INV_ON, U_RA, U_SNIPE, W_FIELD, W_SHADOW, W_VOID)
from .saves import _automaton_saved, _invulnerable, _save, _saved, _shields_lane, _unsaved
from .turn_layout import (ACC_CARRY, ACC_FIRST_BOOKED, ACC_KILLS, ACC_MARKERS, ACC_PLACED, AIM_ALL, AIM_OTHERS, AIM_WE,
                          AP_AT_AP, AP_AT_AT, AV, BAR_AP, BAR_AT, BAR_EXTRA, BAR_MAX, BAR_MIN, BAR_TEMPLATES,
                          DECLARE_OTHERS, DECLARE_WE, INF, KIND_CHOOSE, LV, NONE, NO_ATTACK, PL_AFTER,
                          PL_BROKEN, PL_BUDGET, PL_CARRY, PL_FACE, PL_HITS, PL_KILLS, PL_LIVING, PL_NEED, PL_NF, PL_ON,
                          PL_SEEN, PL_SHOTS, PL_STOP, TIE, TU_COLS, TU_FIRES, TU_KILL_BM, TU_NO_DISRUPT_BM, TU_TYPE, WE,
                          WP_AP, WP_AT, WP_BARRAGE, WP_BP, WP_BP_N, WP_BP_SIDES, WP_COLS, WP_COUNT, WP_DISRUPT, WP_IC,
                          WP_LANCE, WP_MACRO, WP_MW, WP_SHOTS, WP_SHOTS_N, WP_SHOTS_SIDES, WP_SNIPER, WP_TK, WP_TK_N,
                          WP_TK_PLUS, WP_TK_SIDES, Aim)
from .units import _any_living, _cell, _living, _wat, _wound


@kernel_function
def _hit_chance(value, modifier):
    """P(one to-hit roll hits), for the AP/AT choice only (wargame_odds.analysis.epic.shooting.hit_chance)."""
    need = value - modifier
    if need >= 10:
        return 0.0
    if need <= 6:
        return (7 - max(need, 2)) / 6
    return (10 - need) / 36


@kernel_function
def _can_take(unit_type, kind):
    """AP hits on infantry and light vehicles, AT on armoured and light vehicles and war engines, MW and TK
    on any unit (TP 1.9.6, 2.1.9, 2.2.6, 3.2)."""
    if kind == KIND_AP:
        return unit_type == INF or unit_type == LV
    if kind == KIND_AT:
        return unit_type == AV or unit_type == LV or unit_type == WE
    return True


@kernel_function
def _harm(tb, st, tt, sc, aim, w, kind, value, group):
    """What weapon line ``w``'s shots of ``kind`` are expected to do to the exposed units ``sc.ex[:aim.ne]`` of
    ``group`` (AIM_WE: the war engines, their expected damage; AIM_OTHERS: the other units, their expected
    kills), the measure of the default policies (wargame_odds.analysis.epic.shooting.expected_harm, docs/epic-turn.md
    §3.5): E = mean shots × P(hit); p = the mean of :func:`_unsaved` over the units that can take ``kind``; kills min(E
    × p, their number); damage min(max(E × d − shields, 0) × p, their damage left), d the mean titan-killer damage (else
    1), shields their standing void shields and power fields and d per shadowfield."""
    L = LANES
    l = aim.l
    wpn = tt.wpn
    units = tb.units
    wst = st.wst
    n_units = units.shape[0]
    on_we = group == AIM_WE
    damage = 1.0
    if kind == KIND_TK and on_we:
        damage = wpn[w, WP_TK_N] * (wpn[w, WP_TK_SIDES] + 1) / 2 + wpn[w, WP_TK_PLUS]
    n = 0
    unsaved = 0.0
    shields = 0.0
    left = 0
    for i in range(aim.ne):
        u = sc.ex[i]
        t = _cell(tt.tu, u, TU_COLS, TU_TYPE)
        if (t == WE) != on_we or not _can_take(t, kind):
            continue
        n += 1
        unsaved += _unsaved(l, u, units, kind, np.int64(wpn[w, WP_SNIPER] * H_SNIPER + wpn[w, WP_LANCE] * H_LANCE
                                                         + wpn[w, WP_IC] * H_IC),
                            aim.cs if t == INF else NO_ROLL, aim.crossfire, wst, n_units)
        if on_we:
            if wst.size > 0:
                shields += _wat(wst, W_VOID, u, l, n_units) + _wat(wst, W_FIELD, u, l, n_units) \
                    + _wat(wst, W_SHADOW, u, l, n_units) * damage
            left += _at(st.hp, u * L + l)
    if n == 0:
        return 0.0
    unsaved /= n
    expected_hits = (wpn[w, WP_SHOTS_N] * (wpn[w, WP_SHOTS_SIDES] + 1) / 2 + wpn[w, WP_SHOTS]) \
        * _hit_chance(value, aim.mod)
    if not on_we:
        return min(expected_hits * unsaved, float(n))
    return min(max(expected_hits * damage - shields, 0.0) * unsaved, float(left))


@kernel_function
def _fixed_type(ap, at, mw, tk, ap_at):
    """A weapon line's fire type where no policy is needed (TP 1.9.5): MW or TK for an ``mw`` line, AP or AT forced
    by ``ap_at`` when the weapon has it, else the one value it has; KIND_CHOOSE when it has both and ``ap_at`` is
    "auto"; NONE when it has neither (it cannot fire at ground units)."""
    if mw != NONE:
        return KIND_TK if tk else KIND_MW
    if ap == NONE and at == NONE:
        return NONE
    if ap_at == AP_AT_AP and ap != NONE:
        return KIND_AP
    if ap_at == AP_AT_AT and at != NONE:
        return KIND_AT
    if at == NONE:
        return KIND_AP
    if ap == NONE:
        return KIND_AT
    return KIND_CHOOSE


@kernel_function
def _aim(tb, st, tt, sc, aim, w, kind, declare_at, mixed, has_we):
    """The default policies for weapon line ``w`` (not a barrage line) whose :func:`_fixed_type` is ``kind``, before
    any dice (TP 1.9.5, 3.2.1; wargame_odds.analysis.epic.shooting.choose_fire_type and choose_group, docs/epic-turn.md
    §3.5). Type, for KIND_CHOOSE: the larger :func:`_harm` at the group its hits would go to (under the "auto"
    declaration AT takes the better group), ties to AT when the target formation has a war engine, else AP. Group:
    AIM_ALL unless the target is ``mixed``; forced by ``declare_at``; else AP at the others, AT / MW / TK at the war
    engines when the expected damage there is at least the expected kills on the others.  Returns (kind, group)."""
    ap = _cell(tt.wpn, w, WP_COLS, WP_AP)
    at = _cell(tt.wpn, w, WP_COLS, WP_AT)
    single = NONE  # the group everything is measured at when it is one
    if not mixed:
        single = AIM_WE if has_we else AIM_OTHERS
    elif declare_at == DECLARE_WE:
        single = AIM_WE
    elif declare_at == DECLARE_OTHERS:
        single = AIM_OTHERS
    if kind == KIND_CHOOSE:
        if single != NONE:
            s_ap = _harm(tb, st, tt, sc, aim, w, KIND_AP, ap, single)
            s_at = _harm(tb, st, tt, sc, aim, w, KIND_AT, at, single)
        else:
            s_ap = _harm(tb, st, tt, sc, aim, w, KIND_AP, ap, AIM_OTHERS)
            s_at = max(_harm(tb, st, tt, sc, aim, w, KIND_AT, at, AIM_WE),
                       _harm(tb, st, tt, sc, aim, w, KIND_AT, at, AIM_OTHERS))
        if abs(s_ap - s_at) <= TIE:
            kind = KIND_AT if has_we else KIND_AP
        else:
            kind = KIND_AT if s_at > s_ap else KIND_AP
    if not mixed:
        return kind, AIM_ALL
    if single != NONE:
        return kind, single
    if kind == KIND_AP:
        return kind, AIM_OTHERS
    value = _cell(tt.wpn, w, WP_COLS, WP_MW) if kind == KIND_MW or kind == KIND_TK else at
    damage = _harm(tb, st, tt, sc, aim, w, kind, value, AIM_WE)
    kills = _harm(tb, st, tt, sc, aim, w, kind, value, AIM_OTHERS)
    return kind, (AIM_WE if damage >= kills - TIE else AIM_OTHERS)


@kernel_function
def _shot_damage(rs, l, h, sc, wpn):
    """The damage of hit ``h`` allocated to a war engine: a titan-killer hit rolls its line's dice at once and
    counts as that many hits (TP 2.2.9, 3.2.5; wargame_odds.analysis.epic.war_engines.titan_killer_damage); any other,
    1. Returns (damage, dice rolled)."""
    if sc.hkind[h] != KIND_TK:
        return 1, 0
    w = sc.hline[h]
    return _amount(rs, l, wpn[w, WP_TK_N], wpn[w, WP_TK_SIDES], wpn[w, WP_TK_PLUS])


@kernel_function
def _drain(tb, st, sc, l, target, converting, crossfire):
    """Place the BMs war-engine damage booked (BOOK_SHOT, one per point; none for a broken target's
    no-save hits): the target's wait in ``sc.acc`` for the end of the save step, the first counting 2 in a
    crossfire; another formation's (a critical's splash) go on it at once if it is unbroken with a living unit,
    and it is marked in ``sc.spl`` for a break check after the attack (TP 1.9.4, 1.11, 3.2.2, 3.2.3;
    wargame_odds.analysis.epic.shooting.AttackState.book_damage)."""
    L = LANES
    acc = sc.acc
    for g in range(tb.forms.shape[0]):
        i = g * L + l
        n = st.losses_bm[i]
        if n == 0:
            continue
        st.losses_bm[i] = 0
        if converting:
            continue
        if g == target:
            acc[ACC_MARKERS] += n + (1 if crossfire and acc[ACC_FIRST_BOOKED] == 0 else 0)
            acc[ACC_FIRST_BOOKED] = 1
        elif not _at(st.broken, i) and _any_living(st.hp, tb.fu, tb.fb, g, l):
            st.bm[i] += n
            sc.spl[g] = 1


@kernel_function
def _hull(tb, st, sc, l, u, points, how, target, converting, crossfire, splashes):
    """``points`` of damage on war engine ``u``'s hull with all that follows (a BM and a critical roll per point,
    criticals at once, splashes: wargame_odds.kernels.epic.damage._we_resolve_lane, TP 3.2.2–3.2.4), booked for the
    attack on ``target``: its units destroyed count as its kills, the BMs go through :func:`_drain`.  Returns dice."""
    before = _living(st.hp, tb.fu, tb.fb, target, l)
    nd = _we_resolve_lane(damage_state(tb, st), l, E_HULL, u, 0, how, points, BOOK_SHOT, 0, splashes)
    sc.acc[ACC_KILLS] += before - _living(st.hp, tb.fu, tb.fb, target, l)
    _drain(tb, st, sc, l, target, converting, crossfire)
    return nd


@kernel_function
def _hit_war_engine(tb, st, sc, l, h, u, damage, target, crossfire, splashes):
    """Hit ``h`` (``damage`` points for a titan killer) on living war engine ``u`` (§3.13; TP 2.2.2, 3.2.2–3.2.5;
    TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology; epic-shooting §13 Q11): void shields and
    power fields stop a point each, a shadowfield the hit, with no save and no BM
    (wargame_odds.kernels.epic.saves._shields_lane); a disrupt hit that gets through places 1 BM and its points none;
    each point left is saved on its own (:func:`_saved`, no cover); the unsaved ones go to the hull (:func:`_hull`); a
    hit on a war engine already destroyed is lost.  Returns dice."""
    units = tb.units
    wst = st.wst
    if _at(st.hp, u * LANES + l) == 0:
        return 0
    points = damage
    if wst.size > 0:
        points = _shields_lane(l, u, points, wst, units.shape[0])
    if points == 0:
        return 0
    flags = sc.hflag[h]
    disrupt = (flags & H_DISRUPT) != 0
    if disrupt:
        sc.acc[ACC_MARKERS] += 1
    nd = 0
    unsaved = 0
    for _ in range(points):
        saved, k = _saved(st.rs, l, sc.hkind[h], flags, NO_ROLL, crossfire, _cell(units, u, U_COLS, U_ARMOUR),
                          _cell(units, u, U_COLS, U_RA) != 0, _invulnerable(l, u, units, wst, units.shape[0]))
        nd += k
        unsaved += 1 - np.int64(saved)
    if unsaved > 0:
        nd += _hull(tb, st, sc, l, u, unsaved, flags & H_DISRUPT, target, False, crossfire, splashes)
    return nd


@kernel_function
def _place(l, target, n, acc, bm):
    """Place ``n`` BMs on a target that was not broken when the attack began (TP 1.9.4); ``acc[ACC_PLACED]``
    counts them.  Returns 0 (no dice: :func:`_markers`' other branch)."""
    bm[target * LANES + l] += n
    acc[ACC_PLACED] += n
    return 0


@kernel_function
def _broken_hits(tb, st, tt, sc, l, target, n, splashes):
    """The ``n`` BMs a target broken when the attack began would receive, as no-save hits (TSKNF: one per 2,
    the odd one carried in ``acc``), front to back, Fearless units immune, an Automaton saving with its own save
    (no invulnerable: TP-SR Automaton); those deaths place nothing; on a war engine such a hit is 1 damage that
    shields do not stop, with its critical roll (TP 1.13.4, 2.1.3, 3.2.4; TP-FAQ Blast Markers and Broken
    Formations, Imperial Void Shields).  ``sc.acc`` (ACC_KILLS, ACC_CARRY) is updated.  Returns the dice
    rolled."""
    if n <= 0:
        return 0
    acc = sc.acc
    units = tb.units
    if _cell(tb.forms, target, F_COLS, F_TSKNF):
        carry = acc[ACC_CARRY] + n
        n = carry // 2
        acc[ACC_CARRY] = carry - 2 * n
    nd = 0
    for _ in range(n):
        victim = NONE
        for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
            u = _at(tb.fu, k)
            if _at(st.hp, u * LANES + l) > 0 and not _cell(units, u, U_COLS, U_FEARLESS):
                victim = u
                break
        if victim == NONE:
            break
        saved, d = _automaton_saved(st.rs, l, victim, units, st.wst)
        nd += d
        if saved:
            continue
        if _cell(tt.tu, victim, TU_COLS, TU_TYPE) == WE:
            nd += _hull(tb, st, sc, l, victim, 1, 0, target, True, 0, splashes)
        elif _wound(st.hp, st.alive, units, victim, l, tb.sets.n_words):
            acc[ACC_KILLS] += 1
    return nd


@kernel_function
def _resolve(tb, st, tt, sc, l, h, u, cs, crossfire):
    """Hit ``h`` of the attack's list allocated to unit ``u`` (not a war engine): :func:`_resolve_hit`."""
    return _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u, _at(sc.hkind, h),
                        _at(sc.hflag, h), cs, crossfire, sc.acc)


@kernel_function
def _resolve_hit(rs, hp, alive, wst, units, tu, n_words, l, u, kind, flags, cs, crossfire, acc):
    """One hit of fire type ``kind`` and hit flags ``flags`` allocated to a unit that is not a war engine (§3.7,
    §3.8, §3.10; war engines: :func:`_hit_war_engine`): a disrupt hit's BM (none on an Expendable or Automata
    unit), the save (the infantry cover save ``cs``), the kill and its BMs (1; 0 for an Expendable unit unless its
    whole formation is, for an Automaton or Automata unit, or after a disrupt hit's; the attack's first kill that
    places BMs counts 2 in a crossfire).  ``acc`` (ACC_MARKERS, ACC_FIRST_BOOKED, ACC_KILLS) is updated.  It is called
    for every hit: it takes the few arrays it reads (a record is passed field by field).  Returns dice."""
    disrupt = (flags & H_DISRUPT) != 0
    if disrupt and not _cell(tu, u, TU_COLS, TU_NO_DISRUPT_BM):
        acc[ACC_MARKERS] += 1
    if _at(hp, u * LANES + l) == 0:
        return 0  # already destroyed: the hit is lost
    saved, nd = _saved(rs, l, kind, flags, cs if _cell(tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL, crossfire,
                       _cell(units, u, U_COLS, U_ARMOUR), _cell(units, u, U_COLS, U_RA) != 0,
                       _invulnerable(l, u, units, wst, units.shape[0]))
    if not saved:
        _unsaved_hit(hp, alive, units, tu, n_words, l, u, disrupt, crossfire, acc)
    return nd


@kernel_function
def _unsaved_hit(hp, alive, units, tu, n_words, l, u, disrupt, crossfire, acc):
    """An unsaved hit on unit ``u`` (not a war engine): its point of damage, and if that kills it, the kill and its BMs
    (:func:`_resolve_hit`).  ``acc`` is updated."""
    if not _wound(hp, alive, units, u, l, n_words):
        return
    acc[ACC_KILLS] += 1
    if disrupt or not _cell(tu, u, TU_COLS, TU_KILL_BM):
        return
    acc[ACC_MARKERS] += 2 if crossfire and acc[ACC_FIRST_BOOKED] == 0 else 1
    acc[ACC_FIRST_BOOKED] = 1


@kernel_function
def _plain_attack(tb, tt, shooter, target, ap_at, ushots):
    """Is every attack of ``shooter`` at ``target`` plain, so that :func:`shoot_lanes` can count its hits instead
    of listing them?  Plain: the target has no war engine and every unit of it has a damage capacity of 1; the
    shooter's weapon lines that can fire at ground units (no barrage line, no dice shots, no sniper) all shoot
    alike at it: the same fire type, settled before any dice without a policy (§3.5: a line with AP and AT is AP
    when no unit of the target can take AT hits), which every unit of the target can take, the same to-hit value
    and the same hit flags (they may differ in their other columns: a Predator's AP5+/AT6+ autocannon and AP5+
    heavy bolters at infantry are both AP5+ shots).  Then the to-hit rolls are the same for every shot (one die
    each, in any order), and the hits go round-robin to the exposed units front to back, the j-th to the j-th unit
    modulo their number, each resolved in turn (§3.7; TP 1.9.6), exactly as the full allocation does it.
    Returns (plain, fire type, hit flags, to-hit value, simple): ``simple`` the hits are not disrupt hits and no unit
    of the target has Reinforced Armour or an invulnerable-type save (a hit's saves are then its first save roll
    at most); ``ushots[u]``: each shooter unit's shots."""
    wpn, wb, tu, units = tt.wpn, tt.wb, tt.tu, tb.units
    at_able = False
    simple = True
    for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
        u = _at(tb.fu, k)
        t = tu[u, TU_TYPE]
        if t == WE or units[u, U_DC] != 1:
            return False, NONE, 0, NONE, False
        at_able |= _can_take(t, KIND_AT)
        simple &= units[u, U_RA] == 0 and units[u, U_INV_ON] == NO_ROLL and units[u, U_INV_DEG] == NO_ROLL
    kind = NONE
    flags = 0
    value = NONE
    for k in range(_at(tb.fb, shooter), _at(tb.fb, shooter + 1)):
        u = _at(tb.fu, k)
        ushots[u] = 0
        for w in range(wb[u, 0], wb[u + 1, 0]):
            if wpn[w, WP_BARRAGE] or wpn[w, WP_SHOTS_N] or wpn[w, WP_SNIPER]:
                return False, NONE, 0, NONE, False
            ap, at, mw = wpn[w, WP_AP], wpn[w, WP_AT], wpn[w, WP_MW]
            line_kind = _fixed_type(ap, at, mw, wpn[w, WP_TK], ap_at)
            if line_kind == NONE:
                continue  # cannot fire at ground units: no dice
            if line_kind == KIND_CHOOSE:
                if at_able:
                    return False, NONE, 0, NONE, False  # the policy weighs AP and AT
                line_kind = KIND_AP
            line_flags = H_IC * wpn[w, WP_IC] + H_DISRUPT * wpn[w, WP_DISRUPT] + H_LANCE * wpn[w, WP_LANCE]
            line_value = mw if line_kind == KIND_MW or line_kind == KIND_TK else \
                (ap if line_kind == KIND_AP else at)
            if kind == NONE:
                kind, flags, value = line_kind, line_flags, line_value
            elif line_kind != kind or line_flags != flags or line_value != value:
                return False, NONE, 0, NONE, False
            ushots[u] += wpn[w, WP_COUNT] * wpn[w, WP_SHOTS]
    if kind == NONE:
        return False, NONE, 0, NONE, False
    for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
        if not _can_take(tu[_at(tb.fu, k), TU_TYPE], kind):
            return False, NONE, 0, NONE, False
    return True, kind, flags, value, simple and (flags & H_DISRUPT) == 0


@kernel_function
def _plain_who_fires(tb, st, tt, sc, shot):
    """A plain attack's lanes of ``shot.l0..l1`` (PL_* rows of ``sc.rows``, lock-step, branch-free): which attack
    (not broken), the target broken at the start, who can fire (§3.1: living units among the first ``in_range``,
    with a ground weapon) and suppression (§3.2: from the back in strict order while the BMs last, TSKNF units
    costing 2 BMs, a war engine its starting DC; the first one they cannot pay for and every one in front of it
    fire), their shots, the target's living units."""
    L = LANES
    rows = sc.rows
    on, seen, after, budget, stop = (rows[PL_ON * L:], rows[PL_SEEN * L:], rows[PL_AFTER * L:],
                                     rows[PL_BUDGET * L:], rows[PL_STOP * L:])
    nf, shots, living, hits = rows[PL_NF * L:], rows[PL_SHOTS * L:], rows[PL_LIVING * L:], rows[PL_HITS * L:]
    was_broken, killed, carry = rows[PL_BROKEN * L:], rows[PL_KILLS * L:], rows[PL_CARRY * L:]
    l0, l1, shooter, target = shot.l0, shot.l1, shot.shooter, shot.target
    for l in range(l0, l1):
        attacks = _at(sc.lane_mod, l) != NO_ATTACK
        for r in range(3):  # a lane that attacks starts from no hits, kills, BMs placed
            _put(sc.res, r * L + l, 0 if attacks else _at(sc.res, r * L + l))
        _put(on, l, np.int64(attacks) & np.int64(_at(st.broken, shooter * L + l) == 0))
        _put(was_broken, l, np.int64(_at(st.broken, target * L + l) != 0))
        _put(seen, l, 0)
        _put(after, l, 0)
        _put(budget, l, _at(st.bm, shooter * L + l))
        for row in (stop, nf, shots, living, hits, killed, carry):
            _put(row, l, 0)
    s0, s1 = _at(tb.fb, shooter), _at(tb.fb, shooter + 1)
    for k in range(s0, s1):
        row = _at(tb.fu, k) * L
        for l in range(l0, l1):
            _put(seen, l, _at(seen, l) + np.int64(_at(st.hp, row + l) > 0))
    tsknf = _cell(tb.forms, shooter, F_COLS, F_TSKNF) != 0
    for k in range(s1 - 1, s0 - 1, -1):
        u = _at(tb.fu, k)
        row = u * L
        cost = 2 if tsknf else _cell(tb.units, u, U_COLS, U_DC)
        fires = np.int64(_cell(tt.tu, u, TU_COLS, TU_FIRES) != 0)
        per_unit = _at(sc.ushots, u)
        for l in range(l0, l1):
            alive_here = np.int64(_at(st.hp, row + l) > 0)
            behind = _at(after, l) + alive_here
            _put(after, l, behind)
            able = alive_here & fires & np.int64((shot.in_range == NONE) | (_at(seen, l) - behind < shot.in_range))
            held = _at(budget, l)
            suppressed = able & np.int64(_at(stop, l) == 0) & np.int64(held >= cost)
            _put(budget, l, held - cost * suppressed)
            firing = able - suppressed
            _put(stop, l, _at(stop, l) | firing)
            _put(nf, l, _at(nf, l) + firing)
            _put(shots, l, _at(shots, l) + per_unit * firing)
    for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
        row = _at(tb.fu, k) * L
        for l in range(l0, l1):
            _put(living, l, _at(living, l) + np.int64(_at(st.hp, row + l) > 0))


@kernel_function
def _plain_to_hit(tb, st, tt, sc, shot, p_value, p_flags):
    """A plain attack's BM for coming under fire (§3.3, TP 1.9.4: an attack needs someone firing and a living unit
    of the target, else no attack and no BM, TP-FAQ Place Blast Marker; at a broken target a no-save hit, lane by
    lane: _broken_hits) and its to-hit rolls (§3.5): a need of 7+ lane by lane (_to_hit), the others in lock-step,
    one masked loop per die (as wargame_odds.kernels.epic.dice._roll).  Returns (dice rolled, the lanes that attack lie
    in lo..hi)."""
    L = LANES
    rows = sc.rows
    on, nf, shots, need, living = (rows[PL_ON * L:], rows[PL_NF * L:], rows[PL_SHOTS * L:], rows[PL_NEED * L:],
                                   rows[PL_LIVING * L:])
    hits, face, was_broken, killed, carry = (rows[PL_HITS * L:], rows[PL_FACE * L:], rows[PL_BROKEN * L:],
                                             rows[PL_KILLS * L:], rows[PL_CARRY * L:])
    l0, l1, target = shot.l0, shot.l1, shot.target
    not_ic = np.int64((p_flags & H_IC) == 0)
    nd = 0
    most = 0
    lo = l1
    hi = l0
    for l in range(l0, l1):
        attack = _at(on, l) & np.int64(_at(nf, l) > 0) & np.int64(_at(living, l) > 0)
        _put(on, l, attack)
        lo = _min(lo, l if attack else l1)
        hi = _max(hi, l + 1 if attack else l0)
        _put(st.bm, target * L + l, _at(st.bm, target * L + l) + attack * (1 - _at(was_broken, l)))
        if attack and _at(was_broken, l):
            for i in range(8):
                sc.acc[i] = 0
            nd += _broken_hits(tb, st, tt, sc, l, target, 1, shot.splashes)
            _put(killed, l, sc.acc[ACC_KILLS])
            _put(carry, l, sc.acc[ACC_CARRY])
        mod = _at(sc.lane_mod, l) - np.int64(_at(sc.lane_cover, l) != 0) * not_ic
        _put(need, l, p_value - mod)
        n = _at(shots, l) * attack
        if attack and p_value - mod > 6:
            for _ in range(n):
                h, k2 = _to_hit(st.rs, l, p_value, mod)
                nd += k2
                _put(hits, l, _at(hits, l) + h)
            n = 0
        nd += n
        _put(shots, l, n)
        most = _max(most, n)
    for j in range(most):
        rejected = 0
        for l in range(lo, hi):
            f = _lane_die(st.rs, l, np.int64(j < _at(shots, l)))
            _put(face, l, f)
            _put(hits, l, _at(hits, l) + np.int64((f > 1) & (f >= _at(need, l))))  # f 0: no die, or redrawn
            rejected |= np.int64(j < _at(shots, l)) & np.int64(f == 0)
        if rejected:
            for l in range(lo, hi):
                if j < _at(shots, l) and _at(face, l) == 0:
                    f = _d6(st.rs, l)
                    _put(hits, l, _at(hits, l) + np.int64((f != 1) & (f >= _at(need, l))))
    return nd, lo, hi


@kernel_function
def _plain_lanes(tb, st, tt, sc, shot, plain):
    """:func:`shoot_lanes`' plain attacks (``plain``: :func:`_plain_attack`'s answer) in the lanes of ``l0..l1`` that
    attack: the steps of §3 up to the to-hit rolls in lock-step across the lanes, each a loop over the lanes
    without branches (units outer, lanes inner: a unit's row of ``hp`` is contiguous; :func:`_plain_who_fires`,
    :func:`_plain_to_hit`).  Then lane by lane (§3.7–§3.11): hit j on the j-th exposed unit from the front,
    round-robin (what the allocation does when every unit can take every hit and holds one), each resolved in turn
    (where they are no more than the exposed units, a walk over the first living units, one hit each); the kills'
    BMs (at a broken target no-save hits), and the break test of a target that was not broken.  A lane's generator
    moves only for its own dice, so each lane's dice are its stream's in the order of its trial.  Returns the dice
    rolled."""
    L = LANES
    rows = sc.rows
    acc = sc.acc
    _, p_kind, p_flags, p_value, simple = plain
    target, n_exposed, crossfire = shot.target, shot.n_exposed, shot.crossfire
    worse = np.int64(crossfire) + np.int64((p_flags & H_SNIPER) != 0)  # Crossfire, Sniper (TP 1.11, 2.1.14)
    t0, t1 = _at(tb.fb, target), _at(tb.fb, target + 1)
    _plain_who_fires(tb, st, tt, sc, shot)
    nd, lo, hi = _plain_to_hit(tb, st, tt, sc, shot, p_value, p_flags)
    for l in range(lo, hi):
        if not _at(rows, PL_ON * L + l):
            continue
        nh = _at(rows, PL_HITS * L + l)
        living = _at(rows, PL_LIVING * L + l)
        broken_before = _at(rows, PL_BROKEN * L + l) != 0
        for i in range(8):
            acc[i] = 0
        acc[ACC_PLACED] = 1 - np.int64(broken_before)  # the BM for coming under fire
        acc[ACC_KILLS] = _at(rows, PL_KILLS * L + l)
        acc[ACC_CARRY] = _at(rows, PL_CARRY * L + l)
        n_living = living - acc[ACC_KILLS]
        cs = _at(sc.lane_cs, l) if _at(sc.lane_cover, l) else NO_ROLL
        walk = nh <= (n_living if n_exposed == NONE else _min(n_living, n_exposed))
        ne = 0
        if not walk:  # §3.4 the exposed units, branch-free; the hits go round them
            for k in range(t0, t1):
                u = _at(tb.fu, k)
                sc.ex[ne] = u
                ne += (_at(st.hp, u * L + l) > 0) & ((n_exposed == NONE) | (ne < n_exposed))
        k = t0
        i = 0
        for _ in range(nh if walk or ne > 0 else 0):
            if walk:  # one hit each for the first nh living units
                while k < t1 and _at(st.hp, _at(tb.fu, k) * L + l) == 0:
                    k += 1
                u = _at(tb.fu, k)
                k += 1
            else:
                u = _at(sc.ex, i)
                i = i + 1 if i + 1 < ne else 0
            if not simple:
                nd += _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u, p_kind,
                                   p_flags, cs, crossfire, acc)
            elif _at(st.hp, u * L + l) > 0:  # _resolve_hit inline, its save the first roll at most
                first, _ = _save_targets(p_kind, p_flags, _cell(tb.units, u, U_COLS, U_ARMOUR),
                                         cs if _cell(tt.tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL, False, worse)
                saved, k2 = _save(st.rs, l, first, NO_ROLL, NO_ROLL)
                nd += k2
                if not saved:
                    _unsaved_hit(st.hp, st.alive, tb.units, tt.tu, tb.sets.n_words, l, u, False, crossfire, acc)
        if broken_before:
            if acc[ACC_MARKERS] > 0:  # (a call passes every array of its arguments: none for nothing)
                nd += _broken_hits(tb, st, tt, sc, l, target, acc[ACC_MARKERS], shot.splashes)
        else:
            _place(l, target, acc[ACC_MARKERS], acc, st.bm)
            size = living - acc[ACC_KILLS]  # (every unit of the target has a damage capacity of 1)
            if size > 0 and _fails_at_size(tb.forms, st.bm, target, l, size):
                nd += _break(tb, st, l, target)
        sc.res[l] = nh
        sc.res[L + l] = acc[ACC_KILLS]
        sc.res[2 * L + l] = acc[ACC_PLACED]
    return nd


@kernel_function
def _fire_team(fb, fu, hp, bm, tu, forms, units, cand, shooter, in_range, l):
    """§3.1 who can fire in lane ``l`` (living units among the first ``in_range``, with a ground weapon: ``cand``)
    and §3.2 suppression from the back, strict order (TSKNF units cost 2 BMs, a war engine its starting DC).
    Returns the units that fire (the first of ``cand``)."""
    L = LANES
    nc = 0
    seen = 0
    for k in range(_at(fb, shooter), _at(fb, shooter + 1)):  # branch-free but for the range
        if in_range != NONE and seen >= in_range:
            break  # the units after are dead or out of range
        u = _at(fu, k)
        living = _at(hp, u * L + l) > 0
        seen += living
        cand[nc] = u  # kept only if it fires (nc <= the units seen so far < n_units)
        nc += living & (_cell(tu, u, TU_COLS, TU_FIRES) != 0)
    budget = _at(bm, shooter * L + l)
    tsknf = _cell(forms, shooter, F_COLS, F_TSKNF) != 0
    suppressed = 0
    for i in range(nc - 1, -1, -1):
        cost = 2 if tsknf else _at(units, cand[i] * U_COLS + U_DC)
        if budget < cost:
            break
        budget -= cost
        suppressed += 1
    return nc - suppressed


@kernel_function
def _exposed_units(fb, fu, hp, tu, ex, target, n_exposed, l):
    """§3.4 the target's exposed units in lane ``l``: the first ``n_exposed`` living ones (``ex``).  Returns (how
    many, whether a living war engine and another living unit make the target mixed, whether it has a living war
    engine, the fire type the unit types settle when it is not mixed: AT at war engines only, AP where no exposed
    unit can take AT hits, else NONE: wargame_odds.analysis.epic.shooting.choose_fire_type)."""
    ne = 0
    has_we = False
    has_other = False
    at_able = False
    for k in range(_at(fb, target), _at(fb, target + 1)):  # branch-free: the units' states are random
        u = _at(fu, k)
        living = _at(hp, u * LANES + l) > 0
        t = _cell(tu, u, TU_COLS, TU_TYPE)
        has_we |= living & (t == WE)
        has_other |= living & (t != WE)
        exposed = living & ((n_exposed == NONE) | (ne < n_exposed))
        ex[ne] = u  # kept only if exposed (ne <= the units seen so far < n_units)
        ne += exposed
        at_able |= exposed & _can_take(t, KIND_AT)
    mixed = has_we and has_other
    settled = NONE
    if not mixed:
        if has_we:
            settled = KIND_AT
        elif not at_able:
            settled = KIND_AP
    return ne, mixed, has_we, settled


@kernel_function
def _fire_line(rs, wpn, hkind, hflag, hunit, hline, l, w, kind, flags, group, mod, nh):
    """Weapon line ``w``'s shots in lane ``l`` (§3.5; TP 1.9.5): each of its weapons' shots (dice shots rolled each
    time it fires), a to-hit roll each at modifier ``mod``; each hit is listed (``sc.hkind``, ``hflag``, ``hunit``:
    the group it was declared at, ``hline``) after the ``nh`` so far.  Returns (hits listed, dice rolled)."""
    ap = _cell(wpn, w, WP_COLS, WP_AP)
    at = _cell(wpn, w, WP_COLS, WP_AT)
    value = _cell(wpn, w, WP_COLS, WP_MW) if kind == KIND_MW or kind == KIND_TK else (ap if kind == KIND_AP else at)
    need = value - mod
    nd = 0
    for _ in range(_cell(wpn, w, WP_COLS, WP_COUNT)):
        shots = _cell(wpn, w, WP_COLS, WP_SHOTS)
        if _cell(wpn, w, WP_COLS, WP_SHOTS_N):  # dice shots, rolled each time the weapon fires
            shots, k2 = _amount(rs, l, _cell(wpn, w, WP_COLS, WP_SHOTS_N), _cell(wpn, w, WP_COLS, WP_SHOTS_SIDES),
                                shots)
            nd += k2
        for _ in range(shots):
            if need <= 6:  # _to_hit's one roll, inline
                first = _d6(rs, l)
                nd += 1
                hit = (first != 1) & (first >= need)
            else:
                hit, k2 = _to_hit(rs, l, value, mod)
                nd += k2
            _put(hkind, nh, kind)  # kept only if it hit (branch-free; nh <= the shots so far < max hits)
            _put(hflag, nh, flags)
            _put(hunit, nh, group)
            _put(hline, nh, w)
            nh += hit
    return nh, nd


@kernel_function
def _direct_fire(tb, st, tt, sc, shot, lane):
    """§3.5 direct fire in one lane (``lane``: (l, modifier, cover, cover save, exposed units, units that fire,
    mixed, has a war engine, settled type)): per weapon line of the units that fire, before any dice, its type and
    the group it is declared at (:func:`_aim`), the policies only where they decide something, and once for a run
    of equal lines (the target does not change while the shots are rolled, and units of one profile carry equal
    lines); then its shots (:func:`_fire_line`).  Returns (hits listed, dice rolled)."""
    l, modifier, cover, cs, ne, nf, mixed, has_we, settled = lane
    wpn = tt.wpn
    nh = 0
    nd = 0
    last = NONE
    last_kind = NONE
    last_group = AIM_ALL
    for i in range(nf):
        u = sc.cand[i]
        for w in range(_at(tt.wb, u), _at(tt.wb, u + 1)):
            if _cell(wpn, w, WP_COLS, WP_BARRAGE):
                continue  # fires in the barrage
            ic = _cell(wpn, w, WP_COLS, WP_IC)
            kind = _fixed_type(_cell(wpn, w, WP_COLS, WP_AP), _cell(wpn, w, WP_COLS, WP_AT),
                               _cell(wpn, w, WP_COLS, WP_MW), _cell(wpn, w, WP_COLS, WP_TK), shot.ap_at)
            if kind == NONE:
                continue
            flags = H_SNIPER * _cell(wpn, w, WP_COLS, WP_SNIPER) + H_IC * ic \
                + H_DISRUPT * _cell(wpn, w, WP_COLS, WP_DISRUPT) + H_LANCE * _cell(wpn, w, WP_COLS, WP_LANCE)
            mod = modifier - (1 if cover and not ic else 0)
            group = AIM_ALL
            if kind == KIND_CHOOSE and settled != NONE:
                kind = settled
            elif kind == KIND_CHOOSE or mixed:
                same = last != NONE
                c = 0
                while same and c < WP_COLS:
                    same = _cell(wpn, w, WP_COLS, c) == _cell(wpn, last, WP_COLS, c)
                    c += 1
                if not same:
                    last_kind, last_group = _aim(tb, st, tt, sc, Aim(l, mod, ne, cs, shot.crossfire), w, kind,
                                                 shot.declare_at, mixed, has_we)
                    last = w
                kind = last_kind
                group = last_group
            nh, k2 = _fire_line(st.rs, wpn, sc.hkind, sc.hflag, sc.hunit, sc.hline, l, w, kind, flags, group, mod, nh)
            nd += k2
    return nh, nd


@kernel_function
def _barrage_points(st, tt, sc, l, nf):
    """§3.6 the barrage's points in lane ``l``: every barrage line of the units that fire adds its BP, rolled per
    weapon and shot (TP 1.9.8); its hits have the flags all its lines share, are macro-weapon / titan-killer hits
    when all its lines are, and do its first line's titan-killer damage.  Returns (BP, flags, macro, titan, first
    line, dice rolled)."""
    wpn = tt.wpn
    bp = 0
    nd = 0
    every = H_SNIPER + H_DISRUPT + H_LANCE + H_IC
    macro = True
    titan = True
    first_line = NONE
    for i in range(nf):
        u = sc.cand[i]
        for w in range(tt.wb[u, 0], tt.wb[u + 1, 0]):
            if not _cell(wpn, w, WP_COLS, WP_BARRAGE):
                continue
            if first_line == NONE:
                first_line = w
            for _ in range(_cell(wpn, w, WP_COLS, WP_COUNT)):
                shots, k2 = _amount(st.rs, l, wpn[w, WP_SHOTS_N], wpn[w, WP_SHOTS_SIDES], wpn[w, WP_SHOTS])
                nd += k2
                for _ in range(shots):
                    points, k2 = _amount(st.rs, l, wpn[w, WP_BP_N], wpn[w, WP_BP_SIDES], wpn[w, WP_BP])
                    nd += k2
                    bp += points
            every &= H_SNIPER * wpn[w, WP_SNIPER] + H_DISRUPT * wpn[w, WP_DISRUPT] + H_LANCE * wpn[w, WP_LANCE] \
                + H_IC * wpn[w, WP_IC]
            macro &= wpn[w, WP_MACRO] != 0
            titan &= wpn[w, WP_TK] != 0
    return bp, every, macro, titan, first_line, nd


@kernel_function
def _barrage(tb, st, tt, sc, shot, lane, nh):
    """§3.6 the barrage in one lane (``lane`` as :func:`_direct_fire`'s): its points (:func:`_barrage_points`) pick
    the barrage table's row (above the table: its last row, a reading); its templates cover the exposed units front
    to back (a template holds 3 infantry or light vehicles, 2 armoured vehicles, 1 war engine, or ``per_template``
    units), one to-hit roll per unit under a template, ⌈starting DC / 2⌉ for a war engine under its centre (TP
    3.2.1); each hit listed for its unit.  Returns (hits listed, the row's extra BMs, dice rolled)."""
    l, modifier, cover, _, ne, nf, _, _, _ = lane
    bar = tt.bar
    bp, every, macro, titan, first_line, nd = _barrage_points(st, tt, sc, l, nf)
    if bp == 0:
        return nh, 0, nd
    row = bar.shape[0] - 1
    for r in range(bar.shape[0]):
        if bar[r, BAR_MIN] <= bp <= bar[r, BAR_MAX]:
            row = r
            break
    mod = modifier - (1 if cover and (every & H_IC) == 0 else 0)
    i = 0
    for _ in range(bar[row, BAR_TEMPLATES]):
        room = 6  # halves: a template holds 3 infantry / light vehicles, 2 armoured vehicles, 1 war engine
        taken = 0
        while i < ne:
            u = sc.ex[i]
            t = _cell(tt.tu, u, TU_COLS, TU_TYPE)
            if shot.per_template != NONE:
                if taken >= shot.per_template:
                    break
            else:
                size = 6 if t == WE else (3 if t == AV else 2)
                if size > room:
                    break
                room -= size
            attacks = (tb.units[u, U_DC] + 1) // 2 if t == WE and taken == 0 else 1  # under the centre
            taken += 1
            i += 1
            infantry = t == INF or t == LV
            for _ in range(attacks):
                hit, k2 = _to_hit(st.rs, l, bar[row, BAR_AP] if infantry else bar[row, BAR_AT], mod)
                nd += k2
                if hit:
                    sc.hkind[nh] = KIND_TK if titan else (KIND_MW if macro else (KIND_AP if infantry else KIND_AT))
                    sc.hflag[nh] = every
                    sc.hunit[nh] = u
                    sc.hline[nh] = first_line
                    nh += 1
    return nh, bar[row, BAR_EXTRA], nd


@kernel_function
def _hit_unit(tb, st, tt, sc, shot, l, h, u, cs):
    """Hit ``h`` on unit ``u`` in lane ``l``: a war engine's damage rolled now (TP 3.2.5) and :func:`_hit_war_engine`,
    any other :func:`_resolve`.  Returns (the hit's damage for a war engine's block, dice rolled)."""
    if _cell(tt.tu, u, TU_COLS, TU_TYPE) == WE:
        damage, k2 = _shot_damage(st.rs, l, h, sc, tt.wpn)
        return damage, k2 + _hit_war_engine(tb, st, sc, l, h, u, damage, shot.target, shot.crossfire, shot.splashes)
    return 1, _resolve(tb, st, tt, sc, l, h, u, cs, shot.crossfire)


@kernel_function
def _sniper_pick(tu, units, gl, nl, kind):
    """The unit a sniper's hit of ``kind`` goes to (TP 2.1.14; TP-FAQ Sniper): the first Inspiring, Leader or Supreme
    Commander unit of ``gl[:nl]`` that can take it, else the first that can; NONE if none can."""
    pick = NONE
    for i in range(nl):
        u = gl[i]
        if _can_take(_cell(tu, u, TU_COLS, TU_TYPE), kind):
            if pick == NONE:
                pick = u
            if _cell(units, u, U_COLS, U_SNIPE):
                pick = u
                break
    return pick


@kernel_function
def _pooled_kind(tu, cnt, gl, nl, pick, least, pools, phase):
    """The kind unit ``gl[pick]`` takes when it can take both of a step's kinds (TP-FAQ Allocate Hits & Make Saving
    Throws; reading, docs/epic-turn.md §3.7): the one with the larger surplus over the units at the same count
    that can take only it, then the one fewer units can take, then AT in the normal step, then the kind of the
    first pooled hit.  ``pools``: (k0, k1, hits left of each, the first pooled hit's kind)."""
    k0, k1, rem0, rem1, first = pools
    s0 = rem0
    s1 = rem1
    a0 = 0
    a1 = 0
    for i in range(nl):
        ti = _cell(tu, gl[i], TU_COLS, TU_TYPE)
        c0 = _can_take(ti, k0)
        c1 = _can_take(ti, k1)
        a0 += c0
        a1 += c1
        if i != pick and cnt[i] == least:
            s0 -= c0 and not (rem1 > 0 and c1)
            s1 -= c1 and not (rem0 > 0 and c0)
    key0 = s0 * 4096 - a0 * 2  # (surplus, −able, kind is AT) compared in that order
    key1 = s1 * 4096 - a1 * 2
    if phase == 0:
        key1 += 1
    return k1 if key1 > key0 or (key1 == key0 and first == k1) else k0


@kernel_function
def _next_taker(tu, cnt, gl, nl, pools, nxt, one_kind):
    """The next unit of ``gl[:nl]`` in the round-robin that can take a hit left (TP 1.9.6; TP-FAQ Allocate Hits): the
    one with the fewest hits nearest the front; when the step's pooled hits were of ``one_kind`` (the units able to
    take them are the same throughout) that is the next able one after the last pick (``nxt``), wrapping round.
    Returns (its index or NONE, its count)."""
    k0, k1, rem0, rem1, _ = pools
    least = -1
    pick = NONE
    if one_kind:
        for step in range(nl):
            i = nxt + step - (nl if nxt + step >= nl else 0)
            t = _cell(tu, gl[i], TU_COLS, TU_TYPE)
            if (rem0 > 0 and _can_take(t, k0)) or (rem1 > 0 and _can_take(t, k1)):
                return i, least
        return pick, least
    for i in range(nl):
        t = _cell(tu, gl[i], TU_COLS, TU_TYPE)
        if (rem0 > 0 and _can_take(t, k0)) or (rem1 > 0 and _can_take(t, k1)):
            if least < 0 or cnt[i] < least:
                least = cnt[i]
                pick = i
    return pick, least


@kernel_function
def _group_round_robin(tb, st, tt, sc, shot, lane, gl, nl, group, nh, phase):
    """The pooled hits of one step (``phase`` 0: AP and AT, 1: MW and TK) declared at ``group`` in one lane, over its
    living exposed units ``gl[:nl]`` front to back (TP 1.9.6; TP-FAQ Allocate Hits): sniper hits to their pick
    first as they come; then pass after pass the next taker (:func:`_next_taker`) takes one hit, a war engine a
    block of its starting DC (a titan-killer hit counting its damage, rolled when allocated: TP 3.2.1, 3.2.5), of
    the kind it takes (:func:`_pooled_kind` when it can take both); hits no unit can take are lost.  Returns the
    dice rolled."""
    l, cs = lane[0], lane[3]
    k0, k1 = _step_kinds(phase)
    nd = 0
    rem0 = 0
    rem1 = 0
    first = NONE  # the kind of the first pooled hit: its pool comes first on a full tie
    for h in range(nh):
        if sc.hunit[h] != group or (sc.hkind[h] != k0 and sc.hkind[h] != k1):
            continue
        if sc.hflag[h] & H_SNIPER:
            pick = _sniper_pick(tt.tu, tb.units, gl, nl, sc.hkind[h])
            if pick != NONE:
                nd += _hit_unit(tb, st, tt, sc, shot, l, h, pick, cs)[1] if tt.tu[pick, TU_TYPE] == WE else \
                    _resolve(tb, st, tt, sc, l, h, pick, cs, shot.crossfire)
            continue
        if first == NONE:
            first = sc.hkind[h]
        rem0 += sc.hkind[h] == k0
        rem1 += sc.hkind[h] == k1
    p0 = 0  # next pooled hit of each kind
    p1 = 0
    nxt = 0
    one_kind = rem0 == 0 or rem1 == 0
    while rem0 + rem1 > 0:
        pools = (k0, k1, rem0, rem1, first)
        pick, least = _next_taker(tt.tu, sc.cnt, gl, nl, pools, nxt, one_kind)
        if pick == NONE:
            break  # no unit can take what is left: lost
        nxt = pick + 1 if pick + 1 < nl else 0
        t = _cell(tt.tu, gl[pick], TU_COLS, TU_TYPE)
        take0 = rem0 > 0 and _can_take(t, k0)
        take1 = rem1 > 0 and _can_take(t, k1)
        kind = k0 if take0 else k1
        if take0 and take1:
            kind = _pooled_kind(tt.tu, sc.cnt, gl, nl, pick, least, pools, phase)
        u = gl[pick]
        block = tb.units[u, U_DC] if t == WE else 1  # a war engine: a block of its starting DC (TP 3.2.1)
        taken = 0
        while taken < block and (rem0 if kind == k0 else rem1) > 0:
            if kind == k0:
                while sc.hunit[p0] != group or sc.hkind[p0] != k0 or (sc.hflag[p0] & H_SNIPER):
                    p0 += 1
                h = p0
                p0 += 1
                rem0 -= 1
            else:
                while sc.hunit[p1] != group or sc.hkind[p1] != k1 or (sc.hflag[p1] & H_SNIPER):
                    p1 += 1
                h = p1
                p1 += 1
                rem1 -= 1
            if t == WE:
                damage, k2 = _hit_unit(tb, st, tt, sc, shot, l, h, u, cs)
                taken += damage if sc.hkind[h] == KIND_TK else 1
            else:  # _hit_unit's other path, its arrays passed one by one (a call per hit)
                k2 = _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u, sc.hkind[h],
                                  sc.hflag[h], cs, shot.crossfire, sc.acc)
                taken += 1
            nd += k2
        sc.cnt[pick] += 1
    return nd


@kernel_function
def _step_has_hits(hkind, nh, phase):
    """Has allocation step ``phase`` (0: AP and AT, 1: MW and TK) a hit among the ``nh`` listed?"""
    k0, k1 = _step_kinds(phase)
    any_hit = False
    for h in range(nh):
        any_hit |= hkind[h] == k0 or hkind[h] == k1
    return any_hit


@kernel_function
def _allocation_step(tb, st, tt, sc, shot, lane, nh, phase):
    """One allocation step with hits (:func:`_step_has_hits`) in one lane (§3.7–§3.10: ``phase`` 0 the normal hits,
    1 the macro-weapon hits on the survivors): barrage hits on the unit rolled for, then the pooled hits of each
    group (at a mixed target every direct hit is declared, at another none: TP 3.2.1) round-robin over its living
    exposed units (:func:`_group_round_robin`).  Returns the dice rolled."""
    l, cs, ne, mixed = lane[0], lane[3], lane[4], lane[6]
    L = LANES
    k0, k1 = _step_kinds(phase)
    nd = 0
    nl = 0
    for i in range(ne):  # branch-free, as the exposed units
        sc.live[nl] = sc.ex[i]
        sc.cnt[nl] = 0
        nl += _at(st.hp, sc.ex[i] * L + l) > 0
    for h in range(nh):  # barrage hits land on the unit rolled for
        u = sc.hunit[h]
        if u >= 0 and (sc.hkind[h] == k0 or sc.hkind[h] == k1):
            if _cell(tt.tu, u, TU_COLS, TU_TYPE) == WE:
                nd += _hit_unit(tb, st, tt, sc, shot, l, h, u, cs)[1]
            else:  # _hit_unit's other path, its arrays passed one by one (a call per hit)
                nd += _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u,
                                   sc.hkind[h], sc.hflag[h], cs, shot.crossfire, sc.acc)
    n_live = nl
    for g in range(3):  # AIM_ALL, AIM_WE, AIM_OTHERS: a declared weapon's hits go only to its group (TP 3.2.1)
        group = AIM_ALL - g
        if (group != AIM_ALL) != mixed:
            continue
        gl = sc.live
        if group != AIM_ALL:
            gl = sc.cand  # the group's living exposed units (who fires is no longer needed)
            nl = 0
            for i in range(n_live):
                if (_cell(tt.tu, sc.live[i], TU_COLS, TU_TYPE) == WE) == (group == AIM_WE):
                    gl[nl] = sc.live[i]
                    sc.cnt[nl] = 0
                    nl += 1
        nd += _group_round_robin(tb, st, tt, sc, shot, lane, gl, nl, group, nh, phase)
    return nd


@kernel_function
def _markers(tb, st, tt, sc, shot, l, n):
    """A step's ``n`` BMs on a target broken when the attack began, as no-save hits (TP 1.9.4; :func:`_broken_hits`);
    on another target they are placed (:func:`_place`, called directly: this call passes the records).  Returns
    the dice rolled."""
    return _broken_hits(tb, st, tt, sc, l, shot.target, n, shot.splashes) if n > 0 else 0


@kernel_function
def _break_checks(tb, st, sc, shot, l, was_broken):
    """§3.11 the break check of a target that was not broken, once the whole attack is over; then of the formations
    a splash put BMs on (TP 1.9.7, 1.13.2).  Returns the dice rolled."""
    L = LANES
    target = shot.target
    nd = 0
    if not was_broken and _any_living(st.hp, tb.fu, tb.fb, target, l) \
            and _fails_break_test(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, target, l):
        nd += _break(tb, st, l, target)
    for g in range(tb.forms.shape[0]):
        if sc.spl[g] and not _at(st.broken, g * L + l) and _any_living(st.hp, tb.fu, tb.fb, g, l) \
                and _fails_break_test(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, g, l):
            nd += _break(tb, st, l, g)
    return nd


@kernel_function
def _line_kinds(wb, wpn, cand, nf):
    """The weapon lines of the ``nf`` units that fire (``cand``): (a direct-fire line among them, a barrage line
    among them) (§3.5, §3.6)."""
    direct = False
    barrage = False
    for i in range(nf):
        u = cand[i]
        for w in range(_at(wb, u), _at(wb, u + 1)):
            is_barrage = _cell(wpn, w, WP_COLS, WP_BARRAGE) != 0
            barrage |= is_barrage
            direct |= not is_barrage
    return direct, barrage


@kernel_function
def _barrage_only_step(hkind, hunit, tu, nh, phase):
    """Are the hits of allocation step ``phase`` (0: AP and AT, 1: MW and TK) among the ``nh`` listed all barrage hits
    on units that are not war engines?  Then :func:`_barrage_step` resolves them."""
    k0, k1 = _step_kinds(phase)
    only = True
    for h in range(nh):
        u = hunit[h]
        in_step = hkind[h] == k0 or hkind[h] == k1
        only &= not in_step or (u >= 0 and _cell(tu, u, TU_COLS, TU_TYPE) != WE)
    return only


@kernel_function
def _barrage_step(rs, hp, alive, wst, units, tu, n_words, hkind, hflag, hunit, nh, phase, l, cs, crossfire, acc):
    """An allocation step whose hits are all barrage hits on units that are not war engines
    (:func:`_barrage_only_step`) in lane ``l``: each on the unit rolled for, resolved in turn (:func:`_resolve_hit`),
    as :func:`_allocation_step` does it, without its records (a call passes every array of them: this one is made in
    every lane of a barrage; ``acc`` is ShotScratch.acc).  Returns the dice rolled."""
    k0, k1 = _step_kinds(phase)
    nd = 0
    for h in range(nh):
        if hkind[h] == k0 or hkind[h] == k1:
            nd += _resolve_hit(rs, hp, alive, wst, units, tu, n_words, l, hunit[h], hkind[h], hflag[h], cs, crossfire,
                               acc)
    return nd


@kernel_function
def _shoot_lane(tb, st, tt, sc, shot, l):
    """The attack in lane ``l``, in the TP 1.9.3 order (wargame_odds.analysis.epic.shooting.shoot): who fires
    (:func:`_fire_team`), the BM for coming under fire (§3.3), the exposed units, direct fire and the barrage, the
    normal then the macro-weapon hits with each step's BMs, the barrage's extra BMs last (reading), the break
    checks.  Returns the dice rolled."""
    L = LANES
    acc = sc.acc
    for i in range(8):
        acc[i] = 0
    for g in range(tb.forms.shape[0]):
        sc.spl[g] = 0
    if _at(st.broken, shot.shooter * L + l) or not _any_living(st.hp, tb.fu, tb.fb, shot.shooter, l):
        return 0
    target = shot.target
    nf = _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, shot.shooter, shot.in_range, l)
    if nf == 0 or not _any_living(st.hp, tb.fu, tb.fb, target, l):
        return 0  # no attack, no BM (TP-FAQ Place Blast Marker)
    was_broken = _at(st.broken, target * L + l) != 0
    nd = _markers(tb, st, tt, sc, shot, l, 1) if was_broken else _place(l, target, 1, acc, st.bm)  # §3.3
    ne, mixed, has_we, settled = _exposed_units(tb.fb, tb.fu, st.hp, tt.tu, sc.ex, target, shot.n_exposed, l)
    cover = _at(sc.lane_cover, l)
    lane = (l, _at(sc.lane_mod, l), cover, _at(sc.lane_cs, l) if cover else NO_ROLL, ne, nf, mixed, has_we, settled)
    any_direct, any_barrage = _line_kinds(tt.wb, tt.wpn, sc.cand, nf)
    nh = 0
    if any_direct:  # (a call passes every array of the records: none for a barrage alone)
        nh, k = _direct_fire(tb, st, tt, sc, shot, lane)
        nd += k
    extra = 0
    if any_barrage:
        nh, extra, k = _barrage(tb, st, tt, sc, shot, lane, nh)
        nd += k
    for phase in range(2):
        acc[ACC_MARKERS] = 0
        if _step_has_hits(sc.hkind, nh, phase):  # a step without hits places nothing
            if _barrage_only_step(sc.hkind, sc.hunit, tt.tu, nh, phase):
                nd += _barrage_step(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, sc.hkind,
                                    sc.hflag, sc.hunit, nh, phase, l, lane[3], shot.crossfire, acc)
            else:
                nd += _allocation_step(tb, st, tt, sc, shot, lane, nh, phase)
            nd += _markers(tb, st, tt, sc, shot, l, acc[ACC_MARKERS]) if was_broken else \
                _place(l, target, acc[ACC_MARKERS], acc, st.bm)
    nd += _markers(tb, st, tt, sc, shot, l, extra) if was_broken else _place(l, target, extra, acc, st.bm)
    nd += _break_checks(tb, st, sc, shot, l, was_broken)
    sc.res[l] = nh
    sc.res[L + l] = acc[ACC_KILLS]
    sc.res[2 * L + l] = acc[ACC_PLACED]
    return nd


@kernel_function
def shoot_lanes(tb, st, tt, sc, shot):
    """One shooting attack of formation ``shot.shooter`` at ``shot.target`` in each lane ``l`` of ``shot.l0..l1``
    whose ``sc.lane_mod[l]`` (its to-hit modifier) is not NO_ATTACK, with its cover ``sc.lane_cover[l]`` and cover
    save ``sc.lane_cs[l]`` (§3; wargame_odds.analysis.epic.shooting.shoot): a plain attack (:func:`_plain_attack`) in
    lock-step (:func:`_plain_lanes`), any other lane by lane (:func:`_shoot_lane`), each lane from its own stream.  The
    lane's hits, kills and BMs placed go to ``sc.res[l]``, ``res[L + l]``, ``res[2L + l]``.  Returns the dice rolled."""
    L = LANES
    plain = _plain_attack(tb, tt, shot.shooter, shot.target, shot.ap_at, sc.ushots)
    if plain[0]:
        return _plain_lanes(tb, st, tt, sc, shot, plain)
    nd = 0
    for l in range(shot.l0, shot.l1):
        if _at(sc.lane_mod, l) == NO_ATTACK:
            continue
        sc.res[l] = 0
        sc.res[L + l] = 0
        sc.res[2 * L + l] = 0
        nd += _shoot_lane(tb, st, tt, sc, shot, l)
    return nd
