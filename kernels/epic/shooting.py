"""A turn's shooting attack (rule step, docs/epic-turn.md §3; TP 1.9, 2.2, 3.2): who fires, the AP/AT choice and
the declaration at a mixed target (§3.5), to-hit rolls, allocation of direct and barrage hits, saves, blast
markers, war engines shot at (``kernels.epic.damage``), a broken target's hits, the break test.  One
:func:`shoot_lanes` call makes an attack in every lane, lane by lane; a plain attack (alike lines at a target that
needs no choice) takes the lock-step path of :func:`_plain_lanes`.
"""
import numpy as np

from ..jit import njit
from .access import _at, _max, _min, _put
from .breaks import _break, _fails_at_size, _fails_break_test
from .damage import _we_resolve_lane
from .dice import _amount, _d6, _lane_die, _to_hit
from .layout import (BOOK_SHOT, E_HULL, F_COLS, F_TSKNF, H_DISRUPT, LANES, NO_ROLL, U_ARMOUR, U_COLS, U_DC, U_FEARLESS,
                     U_INV_DEG, U_INV_ON, U_RA, U_SNIPE, W_FIELD, W_SHADOW, W_VOID)
from .saves import _automaton_saved, _first_save, _invulnerable, _saved, _shields_lane, _unsaved
from .turn_layout import (AIM_ALL, AIM_OTHERS, AIM_WE, AP_AT_AP, AP_AT_AT, AV, BAR_AP, BAR_AT, BAR_EXTRA, BAR_MAX,
                          BAR_MIN, BAR_TEMPLATES, DECLARE_OTHERS, DECLARE_WE, HF_DISRUPT, HF_IC, HF_LANCE, HF_SNIPER,
                          INF, KIND_AP, KIND_AT, KIND_CHOOSE, KIND_MW, KIND_TK, LV, NONE, NO_ATTACK, TIE, TU_COLS,
                          TU_FIRES, TU_KILL_BM, TU_NO_DISRUPT_BM, TU_TYPE, WE, WP_AP, WP_AT, WP_BARRAGE, WP_BP, WP_BP_N,
                          WP_BP_SIDES, WP_COLS, WP_COUNT, WP_DISRUPT, WP_IC, WP_LANCE, WP_MACRO, WP_MW, WP_SHOTS,
                          WP_SHOTS_N, WP_SHOTS_SIDES, WP_SNIPER, WP_TK, WP_TK_N, WP_TK_PLUS, WP_TK_SIDES)
from .units import _any_living, _cell, _living, _wat, _wound


@njit(cache=True, _nrt=False)
def _hit_chance(value, modifier):
    """P(one to-hit roll hits), for the AP/AT choice only (analysis.epic.shooting.hit_chance)."""
    need = value - modifier
    if need >= 10:
        return 0.0
    if need <= 6:
        return (7 - max(need, 2)) / 6
    return (10 - need) / 36


@njit(cache=True, _nrt=False)
def _can_take(unit_type, kind):
    """AP hits on infantry and light vehicles, AT on armoured and light vehicles and war engines, MW and TK
    on any unit (TP 1.9.6, 2.1.9, 2.2.6, 3.2)."""
    if kind == KIND_AP:
        return unit_type == INF or unit_type == LV
    if kind == KIND_AT:
        return unit_type == AV or unit_type == LV or unit_type == WE
    return True


@njit(cache=True, _nrt=False)
def _harm(l, w, kind, value, mod, group, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst, n_units):
    """What weapon line ``w``'s shots of ``kind`` are expected to do to the exposed units ``ex[:ne]`` of
    ``group`` (AIM_WE: the war engines, their expected damage; AIM_OTHERS: the other units, their expected
    kills), the measure of the default policies (analysis.epic.shooting.expected_harm, docs/epic-turn.md §3.5):
    E = mean shots × P(hit); p = the mean of :func:`_unsaved` over the units that can take ``kind``; kills
    min(E × p, their number); damage min(max(E × d − shields, 0) × p, their damage left), d the mean
    titan-killer damage (else 1), shields their standing void shields and power fields and d per shadowfield."""
    L = LANES
    on_we = group == AIM_WE
    damage = 1.0
    if kind == KIND_TK and on_we:
        damage = wpn[w, WP_TK_N] * (wpn[w, WP_TK_SIDES] + 1) / 2 + wpn[w, WP_TK_PLUS]
    n = 0
    unsaved = 0.0
    shields = 0.0
    left = 0
    for i in range(ne):
        u = ex[i]
        t = _cell(tu, u, TU_COLS, TU_TYPE)
        if (t == WE) != on_we or not _can_take(t, kind):
            continue
        n += 1
        unsaved += _unsaved(l, u, units, kind, np.int64(wpn[w, WP_SNIPER] * HF_SNIPER + wpn[w, WP_LANCE] * HF_LANCE
                                                         + wpn[w, WP_IC] * HF_IC),
                            cover_save if t == INF else NO_ROLL, crossfire, wst, n_units)
        if on_we:
            if wst.size > 0:
                shields += _wat(wst, W_VOID, u, l, n_units) + _wat(wst, W_FIELD, u, l, n_units) \
                    + _wat(wst, W_SHADOW, u, l, n_units) * damage
            left += _at(hp, u * L + l)
    if n == 0:
        return 0.0
    unsaved /= n
    expected_hits = (wpn[w, WP_SHOTS_N] * (wpn[w, WP_SHOTS_SIDES] + 1) / 2 + wpn[w, WP_SHOTS]) * _hit_chance(value, mod)
    if not on_we:
        return min(expected_hits * unsaved, float(n))
    return min(max(expected_hits * damage - shields, 0.0) * unsaved, float(left))


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def _aim(l, w, kind, mod, declare_at, mixed, has_we, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst, n_units):
    """The default policies for weapon line ``w`` (not a barrage line) whose :func:`_fixed_type` is ``kind``, before
    any dice (TP 1.9.5, 3.2.1; analysis.epic.shooting.choose_fire_type and choose_group, docs/epic-turn.md §3.5).
    Type, for KIND_CHOOSE: the larger :func:`_harm` at the group its hits would go to (under the "auto"
    declaration AT takes the better group), ties to AT when the target formation has a war engine, else AP.
    Group: AIM_ALL unless the target is ``mixed``; forced by ``declare_at``; else AP at the others, AT / MW / TK
    at the war engines when the expected damage there is at least the expected kills on the others.  Returns
    (kind, group)."""
    ap = _cell(wpn, w, WP_COLS, WP_AP)
    at = _cell(wpn, w, WP_COLS, WP_AT)
    single = NONE  # the group everything is measured at when it is one
    if not mixed:
        single = AIM_WE if has_we else AIM_OTHERS
    elif declare_at == DECLARE_WE:
        single = AIM_WE
    elif declare_at == DECLARE_OTHERS:
        single = AIM_OTHERS
    if kind == KIND_CHOOSE:
        if single != NONE:
            s_ap = _harm(l, w, KIND_AP, ap, mod, single, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst,
                         n_units)
            s_at = _harm(l, w, KIND_AT, at, mod, single, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst,
                         n_units)
        else:
            s_ap = _harm(l, w, KIND_AP, ap, mod, AIM_OTHERS, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst,
                         n_units)
            s_at = max(_harm(l, w, KIND_AT, at, mod, AIM_WE, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst,
                             n_units),
                       _harm(l, w, KIND_AT, at, mod, AIM_OTHERS, ex, ne, wpn, tu, units, hp, cover_save, crossfire,
                             wst, n_units))
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
    value = _cell(wpn, w, WP_COLS, WP_MW) if kind == KIND_MW or kind == KIND_TK else at
    damage = _harm(l, w, kind, value, mod, AIM_WE, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst, n_units)
    kills = _harm(l, w, kind, value, mod, AIM_OTHERS, ex, ne, wpn, tu, units, hp, cover_save, crossfire, wst, n_units)
    return kind, (AIM_WE if damage >= kills - TIE else AIM_OTHERS)


@njit(cache=True, _nrt=False)
def _shot_damage(rs, l, h, hkind, hline, wpn):
    """The damage of hit ``h`` allocated to a war engine: a titan-killer hit rolls its line's dice at once and
    counts as that many hits (TP 2.2.9, 3.2.5; analysis.epic.war_engines.titan_killer_damage); any other, 1.
    Returns (damage, dice rolled)."""
    if hkind[h] != KIND_TK:
        return 1, 0
    w = hline[h]
    return _amount(rs, l, wpn[w, WP_TK_N], wpn[w, WP_TK_SIDES], wpn[w, WP_TK_PLUS])


@njit(cache=True, _nrt=False)
def _drain(l, target, converting, crossfire, acc, spl, hp, fu, fb, n_forms, losses_bm, bm, broken):
    """Place the BMs war-engine damage booked (BOOK_SHOT, one per point; none for a broken target's
    no-save hits): the target's wait in ``acc`` for the end of the save step, the first counting 2 in a
    crossfire; another formation's (a critical's splash) go on it at once if it is unbroken with a living unit,
    and it is marked in ``spl`` for a break check after the attack (TP 1.9.4, 1.11, 3.2.2, 3.2.3;
    analysis.epic.shooting.AttackState.book_damage)."""
    L = LANES
    for g in range(n_forms):
        i = g * L + l
        n = losses_bm[i]
        if n == 0:
            continue
        losses_bm[i] = 0
        if converting:
            continue
        if g == target:
            acc[3] += n + (1 if crossfire and acc[4] == 0 else 0)
            acc[4] = 1
        elif not _at(broken, i) and _any_living(hp, fu, fb, g, l):
            bm[i] += n
            spl[g] = 1


@njit(cache=True, _nrt=False)
def _hull(rs, l, u, points, how, target, converting, crossfire, acc, spl, splashes, units, hp, alive, n_words, wst,
          n_units, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk):
    """``points`` of damage on war engine ``u``'s hull with all that follows (a BM and a critical roll per point,
    criticals at once, splashes: kernels.epic.damage._we_resolve_lane, TP 3.2.2–3.2.4), booked for the attack on
    ``target``: its units destroyed count as its kills, the BMs go through :func:`_drain`.  Returns dice."""
    before = _living(hp, fu, fb, target, l)
    nd = _we_resolve_lane(rs, l, E_HULL, u, 0, how, points, BOOK_SHOT, 0, units, hp, wst, n_units, alive,
                            n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
    acc[1] += before - _living(hp, fu, fb, target, l)
    _drain(l, target, converting, crossfire, acc, spl, hp, fu, fb, n_forms, losses_bm, bm, broken)
    return nd


@njit(cache=True, _nrt=False)
def _hit_war_engine(rs, l, h, u, damage, hkind, hflag, target, crossfire, acc, spl, splashes, units, hp, alive,
                    n_words, wst, n_units, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk):
    """One hit (``damage`` points for a titan killer) on living war engine ``u`` (§3.13; TP 2.2.2, 3.2.2–3.2.5;
    TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology; epic-shooting §13 Q11): void shields and
    power fields stop a point each, a shadowfield the hit, with no save and no BM (kernels.epic.saves._shields_lane);
    a disrupt hit that gets through places 1 BM and its points none; each point left is saved on its own
    (:func:`_saved`, no cover); the unsaved ones go to the hull (:func:`_hull`); a hit on a war engine already
    destroyed is lost.  Returns dice."""
    if _at(hp, u * LANES + l) == 0:
        return 0
    points = damage
    if wst.size > 0:
        points = _shields_lane(l, u, points, wst, n_units)
    if points == 0:
        return 0
    flags = hflag[h]
    disrupt = (flags & HF_DISRUPT) != 0
    if disrupt:
        acc[3] += 1
    nd = 0
    unsaved = 0
    for _ in range(points):
        saved, k = _saved(rs, l, hkind[h], flags, NO_ROLL, crossfire, _cell(units, u, U_COLS, U_ARMOUR),
                          _cell(units, u, U_COLS, U_RA) != 0, _invulnerable(l, u, units, wst, n_units))
        nd += k
        unsaved += 1 - np.int64(saved)
    if unsaved > 0:
        nd += _hull(rs, l, u, unsaved, H_DISRUPT if disrupt else 0, target, False, crossfire, acc, spl, splashes,
                    units, hp, alive, n_words, wst, n_units, splash, fu, fb, n_forms, losses_bm, kills, bm, broken,
                    stk)
    return nd


@njit(cache=True, _nrt=False)
def _place(l, target, n, acc, bm):
    """Place ``n`` BMs on a target that was not broken when the attack began (TP 1.9.4); ``acc[0]`` counts
    them."""
    bm[target * LANES + l] += n
    acc[0] += n


@njit(cache=True, _nrt=False)
def _broken_hits(rs, l, target, n, acc, spl, splashes, tu, fu, fb, units, forms, hp, alive, n_words, wst, n_units,
                 splash, n_forms, losses_bm, kills, bm, broken, stk):
    """The ``n`` BMs a target broken when the attack began would receive, as no-save hits (TSKNF: one per 2,
    the odd one carried in ``acc``), front to back, Fearless units immune, an Automaton saving with its own save
    (no invulnerable: TP-SR Automaton); those deaths place nothing; on a
    war engine such a hit is 1 damage that shields do not stop, with its critical roll (TP 1.13.4, 2.1.3,
    3.2.4; TP-FAQ Blast Markers and Broken Formations, Imperial Void Shields).  ``acc`` [.., kills, TSKNF
    carry] is updated.  Returns the dice rolled."""
    if n <= 0:
        return 0
    if _cell(forms, target, F_COLS, F_TSKNF):
        carry = acc[2] + n
        n = carry // 2
        acc[2] = carry - 2 * n
    nd = 0
    for _ in range(n):
        victim = NONE
        for k in range(_at(fb, target), _at(fb, target + 1)):
            u = _at(fu, k)
            if _at(hp, u * LANES + l) > 0 and not _cell(units, u, U_COLS, U_FEARLESS):
                victim = u
                break
        if victim == NONE:
            break
        saved, d = _automaton_saved(rs, l, victim, units, wst, n_units)
        nd += d
        if saved:
            continue
        if _cell(tu, victim, TU_COLS, TU_TYPE) == WE:
            nd += _hull(rs, l, victim, 1, 0, target, True, 0, acc, spl, splashes, units, hp, alive, n_words,
                        wst, n_units, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
        elif _wound(hp, alive, units, victim, l, n_words):
            acc[1] += 1
    return nd


@njit(cache=True, _nrt=False)
def _resolve(rs, l, h, u, hkind, hflag, tu, units, hp, alive, n_words, cover_save, crossfire, acc, wst, n_units):
    """Hit ``h`` of the attack's list allocated to unit ``u``: :func:`_resolve_hit`."""
    return _resolve_hit(rs, l, u, _at(hkind, h), _at(hflag, h), tu, units, hp, alive, n_words, cover_save,
                        crossfire, acc, wst, n_units)


@njit(cache=True, _nrt=False)
def _resolve_hit(rs, l, u, kind, flags, tu, units, hp, alive, n_words, cover_save, crossfire, acc, wst, n_units):
    """One hit of fire type ``kind`` and hit flags ``flags`` allocated to a unit that is not a war engine (§3.7,
    §3.8, §3.10; war engines: :func:`_hit_war_engine`): a disrupt hit's BM (none on an Expendable or Automata
    unit), the save, the kill and its BMs (1; 0 for an Expendable unit unless its whole formation is, for an
    Automaton or Automata unit, or after a disrupt hit's; the attack's first kill that places BMs counts 2 in a
    crossfire).  ``acc`` [.., .., .., markers, first kill done] is updated.  Returns dice."""
    disrupt = (flags & HF_DISRUPT) != 0
    if disrupt and not _cell(tu, u, TU_COLS, TU_NO_DISRUPT_BM):
        acc[3] += 1
    if _at(hp, u * LANES + l) == 0:
        return 0  # already destroyed: the hit is lost
    cs = cover_save if _cell(tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL
    saved, nd = _saved(rs, l, kind, flags, cs, crossfire, _cell(units, u, U_COLS, U_ARMOUR),
                       _cell(units, u, U_COLS, U_RA) != 0, _invulnerable(l, u, units, wst, n_units))
    if not saved:
        _unsaved_hit(l, u, disrupt, tu, units, hp, alive, n_words, crossfire, acc)
    return nd


@njit(cache=True, _nrt=False)
def _unsaved_hit(l, u, disrupt, tu, units, hp, alive, n_words, crossfire, acc):
    """An unsaved hit on unit ``u`` (not a war engine): its point of damage, and if that kills it, the kill and its BMs
    (:func:`_resolve_hit`).  ``acc`` is updated."""
    if not _wound(hp, alive, units, u, l, n_words):
        return
    acc[1] += 1
    if disrupt or not _cell(tu, u, TU_COLS, TU_KILL_BM):
        return
    acc[3] += 2 if crossfire and acc[4] == 0 else 1
    acc[4] = 1


@njit(cache=True, _nrt=False)
def _plain_attack(shooter, target, ap_at, wpn, wb, tu, units, fu, fb, ushots):
    """Is every attack of ``shooter`` at ``target`` plain, so that :func:`shoot_lanes` can count its hits instead
    of listing them?  Plain: the shooter's weapon lines that can fire at ground units are equal but for their
    count (no barrage line, no dice shots, no sniper), the target has no war engine and every unit of it has a
    damage capacity of 1 and can take the lines' fire type, settled before any dice without a policy (§3.5: a
    line with AP and AT is AP when no unit of the target can take AT hits).  Then the to-hit rolls are the same
    for every shot, and the hits go round-robin to the exposed units front to back, the j-th to the j-th unit
    modulo their number, each resolved in turn (§3.7; TP 1.9.6), exactly as the full allocation does it.
    Returns (plain, fire type, hit flags, to-hit value, simple): ``simple`` the hits are not disrupt hits and no unit
    of the target has Reinforced Armour or an invulnerable-type save (a hit's saves are then its first save roll
    at most); ``ushots[u]``: each shooter unit's shots."""
    w0 = NONE
    for k in range(_at(fb, shooter), _at(fb, shooter + 1)):
        u = _at(fu, k)
        ushots[u] = 0
        for w in range(wb[u, 0], wb[u + 1, 0]):
            if wpn[w, WP_BARRAGE] or wpn[w, WP_SHOTS_N] or wpn[w, WP_SNIPER]:
                return False, NONE, 0, NONE, False
            if _fixed_type(wpn[w, WP_AP], wpn[w, WP_AT], wpn[w, WP_MW], wpn[w, WP_TK], ap_at) == NONE:
                continue  # cannot fire at ground units: no dice
            if w0 == NONE:
                w0 = w
            for c in range(WP_COLS):
                if c != WP_COUNT and wpn[w, c] != wpn[w0, c]:
                    return False, NONE, 0, NONE, False
            ushots[u] += wpn[w, WP_COUNT] * wpn[w, WP_SHOTS]
    if w0 == NONE:
        return False, NONE, 0, NONE, False
    at_able = False
    simple = wpn[w0, WP_DISRUPT] == 0
    for k in range(_at(fb, target), _at(fb, target + 1)):
        u = _at(fu, k)
        t = tu[u, TU_TYPE]
        if t == WE or units[u, U_DC] != 1:
            return False, NONE, 0, NONE, False
        at_able |= _can_take(t, KIND_AT)
        simple &= units[u, U_RA] == 0 and units[u, U_INV_ON] == NO_ROLL and units[u, U_INV_DEG] == NO_ROLL
    ap, at, mw = wpn[w0, WP_AP], wpn[w0, WP_AT], wpn[w0, WP_MW]
    kind = _fixed_type(ap, at, mw, wpn[w0, WP_TK], ap_at)
    if kind == KIND_CHOOSE:
        if at_able:
            return False, NONE, 0, NONE, False  # the policy weighs AP and AT
        kind = KIND_AP
    for k in range(_at(fb, target), _at(fb, target + 1)):
        if not _can_take(tu[_at(fu, k), TU_TYPE], kind):
            return False, NONE, 0, NONE, False
    flags = HF_IC * wpn[w0, WP_IC] + HF_DISRUPT * wpn[w0, WP_DISRUPT] + HF_LANCE * wpn[w0, WP_LANCE]
    value = mw if kind == KIND_MW or kind == KIND_TK else (ap if kind == KIND_AP else at)
    return True, kind, flags, value, simple


# Rows of :func:`_plain_lanes`' per-lane state ``rows`` (each ``[row * LANES + lane]``, the last part of the turn's
# scratch array, :func:`scratch_size`): the lane makes a plain attack; its shooter's living units, those counted
# from the back so far, suppression's BMs left and whether it stopped; the units that fire and their shots; the
# to-hit roll's need; the target's living units; hits; a die rolled; the target was broken when the attack began,
# the kills and the TSKNF carry of its BM's no-save hit (§3.3).
PL_ON, PL_SEEN, PL_AFTER, PL_BUDGET, PL_STOP, PL_NF, PL_SHOTS, PL_NEED, PL_LIVING, PL_HITS, PL_FACE, PL_BROKEN, \
    PL_KILLS, PL_CARRY = range(14)


PL_ROWS = 14


@njit(cache=True, _nrt=False)
def _plain_lanes(rs, l0, l1, lane_mod, lane_cover, lane_cs, res, shooter, target, in_range, n_exposed, crossfire,
                 p_kind, p_flags, p_value, simple, ushots, acc, ex, spl, splashes, tu, units, forms, fu, fb, hp, alive,
                 n_words, bm, broken, trapped, wst, n_units, splash, n_forms, losses_bm, kills, stk, rows):
    """:func:`shoot_lanes`' plain attacks (:func:`_plain_attack`) in the lanes of ``l0..l1`` that attack, the steps of
    §3 up to the to-hit rolls in lock-step across the lanes, each a loop over the lanes without branches (units outer,
    lanes inner: a unit's row of ``hp`` is contiguous): who fires and suppression (§3.1, §3.2: the suppressed units
    counted from the back), the target's living units, the BM for coming under fire (§3.3; at a broken target its
    no-save hit, lane by lane), the to-hit rolls (§3.5: one masked loop per die, as ``kernels.epic.dice._roll``).  Then
    lane by lane: the hits round-robin from the front (§3.7–§3.10; where they are no more than the exposed units and
    each save is one roll at most, a walk over the first living units, one hit each), the kills' BMs and the break test
    (§3.11).  A lane's generator moves only for its own dice, so each lane's dice are its stream's in the order of its
    trial.  Returns the dice rolled."""
    L = LANES
    on, seen, after, budget, stop = (rows[PL_ON * L:], rows[PL_SEEN * L:], rows[PL_AFTER * L:],
                                     rows[PL_BUDGET * L:], rows[PL_STOP * L:])
    nf, shots, need, living, hits = (rows[PL_NF * L:], rows[PL_SHOTS * L:], rows[PL_NEED * L:],
                                     rows[PL_LIVING * L:], rows[PL_HITS * L:])
    face, was_broken, killed, carry = rows[PL_FACE * L:], rows[PL_BROKEN * L:], rows[PL_KILLS * L:], rows[PL_CARRY * L:]
    for l in range(l0, l1):
        attacks = _at(lane_mod, l) != NO_ATTACK
        for r in range(3):  # a lane that attacks starts from no hits, kills, BMs placed
            _put(res, r * L + l, 0 if attacks else _at(res, r * L + l))
        _put(on, l, np.int64(attacks) & np.int64(_at(broken, shooter * L + l) == 0))
        _put(was_broken, l, np.int64(_at(broken, target * L + l) != 0))
        _put(seen, l, 0)
        _put(after, l, 0)
        _put(budget, l, _at(bm, shooter * L + l))
        _put(stop, l, 0)
        _put(nf, l, 0)
        _put(shots, l, 0)
        _put(living, l, 0)
        _put(hits, l, 0)
        _put(killed, l, 0)
        _put(carry, l, 0)
    s0, s1 = _at(fb, shooter), _at(fb, shooter + 1)
    for k in range(s0, s1):
        row = _at(fu, k) * L
        for l in range(l0, l1):
            _put(seen, l, _at(seen, l) + np.int64(_at(hp, row + l) > 0))
    # §3.1 who can fire (living units among the first in_range, with a ground weapon), §3.2 suppression from the
    # back in strict order (TSKNF units cost 2 BMs, a war engine its starting DC): from the back, a unit able to fire
    # is suppressed while the BMs last; the first one they cannot pay for and every one in front of it fire
    tsknf = _cell(forms, shooter, F_COLS, F_TSKNF) != 0
    for k in range(s1 - 1, s0 - 1, -1):
        u = _at(fu, k)
        row = u * L
        cost = 2 if tsknf else _cell(units, u, U_COLS, U_DC)
        fires = np.int64(_cell(tu, u, TU_COLS, TU_FIRES) != 0)
        per_unit = _at(ushots, u)
        for l in range(l0, l1):
            alive_here = np.int64(_at(hp, row + l) > 0)
            behind = _at(after, l) + alive_here
            _put(after, l, behind)
            able = alive_here & fires & np.int64((in_range == NONE) | (_at(seen, l) - behind < in_range))
            held = _at(budget, l)
            suppressed = able & np.int64(_at(stop, l) == 0) & np.int64(held >= cost)
            _put(budget, l, held - cost * suppressed)
            firing = able - suppressed
            _put(stop, l, _at(stop, l) | firing)
            _put(nf, l, _at(nf, l) + firing)
            _put(shots, l, _at(shots, l) + per_unit * firing)
    t0, t1 = _at(fb, target), _at(fb, target + 1)
    for k in range(t0, t1):
        row = _at(fu, k) * L
        for l in range(l0, l1):
            _put(living, l, _at(living, l) + np.int64(_at(hp, row + l) > 0))
    # an attack (someone fires, the target has a living unit: else no attack, no BM, TP-FAQ Place Blast Marker) places
    # its BM (§3.3, TP 1.9.4; at a broken target a no-save hit, lane by lane: _broken_hits); its to-hit rolls: a need
    # of 7+ lane by lane (_to_hit), others in lock-step below
    not_ic = np.int64((p_flags & HF_IC) == 0)
    nd = 0
    most = 0
    lo = l1  # the lanes that attack lie in lo..hi
    hi = l0
    for l in range(l0, l1):
        attack = _at(on, l) & np.int64(_at(nf, l) > 0) & np.int64(_at(living, l) > 0)
        _put(on, l, attack)
        lo = _min(lo, l if attack else l1)
        hi = _max(hi, l + 1 if attack else l0)
        _put(bm, target * L + l, _at(bm, target * L + l) + attack * (1 - _at(was_broken, l)))
        if attack and _at(was_broken, l):
            for i in range(8):
                acc[i] = 0
            nd += _broken_hits(rs, l, target, 1, acc, spl, splashes, tu, fu, fb, units, forms, hp, alive, n_words, wst,
                               n_units, splash, n_forms, losses_bm, kills, bm, broken, stk)
            _put(killed, l, acc[1])
            _put(carry, l, acc[2])
        mod = _at(lane_mod, l) - np.int64(_at(lane_cover, l) != 0) * not_ic
        _put(need, l, p_value - mod)
        n = _at(shots, l) * attack
        if attack and p_value - mod > 6:
            for _ in range(n):
                h, k2 = _to_hit(rs, l, p_value, mod)
                nd += k2
                _put(hits, l, _at(hits, l) + h)
            n = 0
        nd += n
        _put(shots, l, n)
        most = _max(most, n)
    for j in range(most):
        rejected = 0
        for l in range(lo, hi):
            f = _lane_die(rs, l, np.int64(j < _at(shots, l)))
            _put(face, l, f)
            _put(hits, l, _at(hits, l) + np.int64((f > 1) & (f >= _at(need, l))))  # f 0: no die, or redrawn
            rejected |= np.int64(j < _at(shots, l)) & np.int64(f == 0)
        if rejected:
            for l in range(lo, hi):
                if j < _at(shots, l) and _at(face, l) == 0:
                    f = _d6(rs, l)
                    _put(hits, l, _at(hits, l) + np.int64((f != 1) & (f >= _at(need, l))))
    # §3.7–§3.10 lane by lane: hit j on the j-th exposed unit from the front, round-robin (what the allocation does
    # when every unit can take every hit and holds one), each resolved in turn; then the kills' BMs (at a broken target
    # no-save hits), and §3.11 the break test of a target that was not broken
    for l in range(lo, hi):
        if not _at(on, l):
            continue
        nh = _at(hits, l)
        broken_before = _at(was_broken, l) != 0
        for i in range(8):
            acc[i] = 0
        acc[0] = 1 - np.int64(broken_before)  # the BM for coming under fire
        acc[1] = _at(killed, l)
        acc[2] = _at(carry, l)
        n_living = _at(living, l) - acc[1]
        cs = _at(lane_cs, l) if _at(lane_cover, l) else NO_ROLL
        if nh <= (n_living if n_exposed == NONE else _min(n_living, n_exposed)):
            j = 0  # one hit each for the first nh living units: a walk that stops at the last
            for k in range(t0, t1):
                if j == nh:
                    break
                u = _at(fu, k)
                if _at(hp, u * L + l) > 0:
                    j += 1
                    if not simple:
                        nd += _resolve_hit(rs, l, u, p_kind, p_flags, tu, units, hp, alive, n_words, cs, crossfire,
                                           acc, wst, n_units)
                        continue
                    need_save = _first_save(p_kind, p_flags, cs if _cell(tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL,
                                            crossfire, _cell(units, u, U_COLS, U_ARMOUR))[1]
                    rolled = need_save < NO_ROLL
                    nd += rolled
                    if not (rolled and _d6(rs, l) >= need_save):
                        _unsaved_hit(l, u, False, tu, units, hp, alive, n_words, crossfire, acc)
        else:  # §3.4 the exposed units, branch-free; the hits go round them
            ne = 0
            for k in range(t0, t1):
                u = _at(fu, k)
                ex[ne] = u
                ne += (_at(hp, u * L + l) > 0) & ((n_exposed == NONE) | (ne < n_exposed))
            i = 0
            for _ in range(nh if ne > 0 else 0):
                u = _at(ex, i)
                if not simple:
                    nd += _resolve_hit(rs, l, u, p_kind, p_flags, tu, units, hp, alive, n_words, cs, crossfire, acc,
                                       wst, n_units)
                elif _at(hp, u * L + l) > 0:  # _resolve_hit inline, its save the first roll at most
                    need_save = _first_save(p_kind, p_flags, cs if _cell(tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL,
                                            crossfire, _cell(units, u, U_COLS, U_ARMOUR))[1]
                    rolled = need_save < NO_ROLL
                    nd += rolled
                    if not (rolled and _d6(rs, l) >= need_save):
                        _unsaved_hit(l, u, False, tu, units, hp, alive, n_words, crossfire, acc)
                i = i + 1 if i + 1 < ne else 0
        if broken_before:
            nd += _broken_hits(rs, l, target, acc[3], acc, spl, splashes, tu, fu, fb, units, forms, hp, alive, n_words,
                               wst, n_units, splash, n_forms, losses_bm, kills, bm, broken, stk)
        else:
            _place(l, target, acc[3], acc, bm)
            size = _at(living, l) - acc[1]  # (every unit of the target has a damage capacity of 1)
            if size > 0 and _fails_at_size(forms, bm, target, l, size):
                nd += _break(rs, l, target, fu, fb, units, hp, trapped, forms, alive, n_words, wst, n_units, splash,
                             n_forms, losses_bm, kills, bm, broken, stk)
        res[l] = nh
        res[L + l] = acc[1]
        res[2 * L + l] = acc[0]
    return nd


@njit(cache=True, _nrt=False)
def shoot_lanes(rs, l0, l1, lane_mod, lane_cover, lane_cs, res, shooter, target, in_range, n_exposed, crossfire, ap_at,
                declare_at, per_template, wpn, wb, tu, bar, mh, splashes, scr, units, forms, fu, fb, hp, alive,
                n_words, bm, broken, trapped, wst, n_units, splash, n_forms, losses_bm, kills, stk):
    """One shooting attack of formation ``shooter`` at ``target`` in each lane ``l`` of ``l0..l1`` whose
    ``lane_mod[l]`` (its to-hit modifier) is not NO_ATTACK, with its cover ``lane_cover[l]`` and cover save
    ``lane_cs[l]``, in the TP 1.9.3 order (analysis.epic.shooting.shoot); ``ap_at`` and ``declare_at`` the policies
    of §3.5 (AP_AT_*, DECLARE_*).  Lane by lane, each from its own stream: one call serves every lane of an
    activation (a call pushes every argument word).  The lane's hits, kills and BMs placed go to ``res[l]``,
    ``res[L + l]``, ``res[2L + l]``.  Returns the dice rolled."""
    L = LANES
    cand = scr[0:n_units]
    ex = scr[n_units:2 * n_units]
    live = scr[2 * n_units:3 * n_units]
    cnt = scr[3 * n_units:4 * n_units]
    grp = cand  # the living exposed units of a declared group (§3.7; who fires is no longer needed then)
    o = 4 * n_units
    hkind = scr[o:o + mh]
    hflag = scr[o + mh:o + 2 * mh]
    hunit = scr[o + 2 * mh:o + 3 * mh]
    hline = scr[o + 3 * mh:o + 4 * mh]  # the weapon line that scored it (its titan-killer damage)
    o += 4 * mh
    acc = scr[o:o + 8]  # placed, kills, TSKNF carry, markers, first kill
    spl = scr[o + 8:o + 8 + n_forms]  # formations a critical's splash put BMs on
    ushots = scr[o + 8 + n_forms:o + 8 + n_forms + n_units]
    rows = scr[o + 8 + n_forms + n_units:o + 8 + n_forms + n_units + PL_ROWS * L]  # _plain_lanes' per-lane state
    plain, p_kind, p_flags, p_value, simple = _plain_attack(shooter, target, ap_at, wpn, wb, tu, units, fu, fb, ushots)
    if plain:
        return _plain_lanes(rs, l0, l1, lane_mod, lane_cover, lane_cs, res, shooter, target, in_range, n_exposed,
                            crossfire, p_kind, p_flags, p_value, simple, ushots, acc, ex, spl, splashes, tu, units,
                            forms, fu, fb, hp, alive, n_words, bm, broken, trapped, wst, n_units, splash, n_forms,
                            losses_bm, kills, stk, rows)
    nd = 0
    for l in range(l0, l1):
        modifier = _at(lane_mod, l)
        if modifier == NO_ATTACK:
            continue
        cover = _at(lane_cover, l)
        cover_save = _at(lane_cs, l)
        res[l] = 0
        res[L + l] = 0
        res[2 * L + l] = 0
        for i in range(8):
            acc[i] = 0
        for g in range(n_forms):
            spl[g] = 0
        if _at(broken, shooter * L + l) or not _any_living(hp, fu, fb, shooter, l):
            continue
        # §3.1 who can fire: living units among the first in_range, with a ground weapon
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
        # §3.2 suppression from the back, strict order; TSKNF units cost 2 BMs, a war engine its starting DC
        budget = _at(bm, shooter * L + l)
        tsknf = _cell(forms, shooter, F_COLS, F_TSKNF) != 0
        suppressed = 0
        for i in range(nc - 1, -1, -1):
            cost = 2 if tsknf else _at(units, cand[i] * U_COLS + U_DC)
            if budget < cost:
                break
            budget -= cost
            suppressed += 1
        nf = nc - suppressed
        if nf == 0 or not _any_living(hp, fu, fb, target, l):
            continue  # no attack, no BM (TP-FAQ Place Blast Marker)
        was_broken = _at(broken, target * L + l) != 0
        if was_broken:  # §3.3
            nd += _broken_hits(rs, l, target, 1, acc, spl, splashes, tu, fu, fb, units, forms, hp, alive, n_words, wst,
                               n_units, splash, n_forms, losses_bm, kills, bm, broken, stk)
        else:
            _place(l, target, 1, acc, bm)
        # §3.4 exposed units: the first n_exposed living ones; a mixed target has living war engines and others; which
        # of the exposed units can take AT hits (the AP/AT choice below)
        ne = 0
        has_we = False
        has_other = False
        at_able = False
        for k in range(_at(fb, target), _at(fb, target + 1)):  # branch-free: the units' states are random
            u = _at(fu, k)
            living = _at(hp, u * L + l) > 0
            t = _cell(tu, u, TU_COLS, TU_TYPE)
            has_we |= living & (t == WE)
            has_other |= living & (t != WE)
            exposed = living & ((n_exposed == NONE) | (ne < n_exposed))
            ex[ne] = u  # kept only if exposed (ne <= the units seen so far < n_units)
            ne += exposed
            at_able |= exposed & _can_take(t, KIND_AT)
        mixed = has_we and has_other
        # the AP/AT choice at a target that is not mixed, where the unit types decide it (analysis.epic.shooting.
        # choose_fire_type): at war engines only, AP can do nothing and ties go to AT; at other units none of which
        # can take AT hits, AT can do nothing and ties go to AP; elsewhere :func:`_aim` weighs them
        settled = NONE
        if not mixed:
            if has_we:
                settled = KIND_AT
            elif not at_able:
                settled = KIND_AP
        cs = cover_save if cover else NO_ROLL
        # §3.5 direct fire: per weapon line, before any dice, its type and the group it is declared at; the policies
        # only where they decide something, and once for a run of equal lines (the target does not change while the
        # shots are rolled, and units of one profile carry equal lines)
        nh = 0
        last = NONE
        last_kind = NONE
        last_group = AIM_ALL
        any_barrage = False
        for i in range(nf):
            u = cand[i]
            for w in range(_at(wb, u), _at(wb, u + 1)):
                if _cell(wpn, w, WP_COLS, WP_BARRAGE):
                    any_barrage = True
                    continue  # fires in the barrage
                ic = _cell(wpn, w, WP_COLS, WP_IC)
                ap = _cell(wpn, w, WP_COLS, WP_AP)
                at = _cell(wpn, w, WP_COLS, WP_AT)
                mw = _cell(wpn, w, WP_COLS, WP_MW)
                kind = _fixed_type(ap, at, mw, _cell(wpn, w, WP_COLS, WP_TK), ap_at)
                if kind == NONE:
                    continue
                flags = HF_SNIPER * _cell(wpn, w, WP_COLS, WP_SNIPER) + HF_IC * ic \
                    + HF_DISRUPT * _cell(wpn, w, WP_COLS, WP_DISRUPT) + HF_LANCE * _cell(wpn, w, WP_COLS, WP_LANCE)
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
                        last_kind, last_group = _aim(l, w, kind, mod, declare_at, mixed, has_we, ex, ne, wpn, tu, units,
                                                     hp, cs, crossfire, wst, n_units)
                        last = w
                    kind = last_kind
                    group = last_group
                value = mw if kind == KIND_MW or kind == KIND_TK else (ap if kind == KIND_AP else at)
                need = value - mod
                for _ in range(_cell(wpn, w, WP_COLS, WP_COUNT)):
                    shots = _cell(wpn, w, WP_COLS, WP_SHOTS)
                    if _cell(wpn, w, WP_COLS, WP_SHOTS_N):  # dice shots, rolled each time the weapon fires
                        shots, k2 = _amount(rs, l, _cell(wpn, w, WP_COLS, WP_SHOTS_N),
                                            _cell(wpn, w, WP_COLS, WP_SHOTS_SIDES), shots)
                        nd += k2
                    for _ in range(shots):
                        if need <= 6:  # _to_hit's one roll, inline
                            first = _d6(rs, l)
                            nd += 1
                            hit = (first != 1) & (first >= need)
                        else:
                            hit, k2 = _to_hit(rs, l, value, mod)
                            nd += k2
                        _put(hkind, nh, kind)  # kept only if it hit (branch-free; nh <= the shots so far < mh)
                        _put(hflag, nh, flags)
                        _put(hunit, nh, group)
                        _put(hline, nh, w)
                        nh += hit
        # §3.6 the barrage: every barrage line's BP added, one roll per unit under a template (a war engine under a
        # template's centre: ⌈starting DC / 2⌉, TP 3.2.1); a titan-killer barrage does its first line's damage
        bp = 0
        every = HF_SNIPER + HF_DISRUPT + HF_LANCE + HF_IC
        macro = True
        titan = True
        first_line = NONE
        for i in range(nf if any_barrage else 0):
            u = cand[i]
            for w in range(wb[u, 0], wb[u + 1, 0]):
                if not _cell(wpn, w, WP_COLS, WP_BARRAGE):
                    continue
                if first_line == NONE:
                    first_line = w
                for _ in range(_cell(wpn, w, WP_COLS, WP_COUNT)):  # BP rolled per weapon and shot (TP 1.9.8)
                    shots, k2 = _amount(rs, l, wpn[w, WP_SHOTS_N], wpn[w, WP_SHOTS_SIDES], wpn[w, WP_SHOTS])
                    nd += k2
                    for _ in range(shots):
                        points, k2 = _amount(rs, l, wpn[w, WP_BP_N], wpn[w, WP_BP_SIDES], wpn[w, WP_BP])
                        nd += k2
                        bp += points
                every &= HF_SNIPER * wpn[w, WP_SNIPER] + HF_DISRUPT * wpn[w, WP_DISRUPT] + HF_LANCE * wpn[w, WP_LANCE] \
                    + HF_IC * wpn[w, WP_IC]
                macro &= wpn[w, WP_MACRO] != 0
                titan &= wpn[w, WP_TK] != 0
        extra = 0
        if bp > 0:
            row = bar.shape[0] - 1  # above the table: its last row (reading)
            for r in range(bar.shape[0]):
                if bar[r, BAR_MIN] <= bp <= bar[r, BAR_MAX]:
                    row = r
                    break
            extra = bar[row, BAR_EXTRA]
            mod = modifier - (1 if cover and (every & HF_IC) == 0 else 0)
            i = 0
            for _ in range(bar[row, BAR_TEMPLATES]):
                room = 6  # a template holds 3 infantry / light vehicles, 2 armoured vehicles, 1 war engine (halves)
                taken = 0
                while i < ne:
                    u = ex[i]
                    t = _cell(tu, u, TU_COLS, TU_TYPE)
                    if per_template != NONE:
                        if taken >= per_template:
                            break
                    else:
                        size = 6 if t == WE else (3 if t == AV else 2)
                        if size > room:
                            break
                        room -= size
                    attacks = (units[u, U_DC] + 1) // 2 if t == WE and taken == 0 else 1  # under the centre
                    taken += 1
                    i += 1
                    infantry = t == INF or t == LV
                    for _ in range(attacks):
                        hit, k2 = _to_hit(rs, l, bar[row, BAR_AP] if infantry else bar[row, BAR_AT], mod)
                        nd += k2
                        if hit:
                            hkind[nh] = KIND_TK if titan else (KIND_MW if macro else (KIND_AP if infantry else KIND_AT))
                            hflag[nh] = every
                            hunit[nh] = u
                            hline[nh] = first_line
                            nh += 1
        # §3.7–§3.10 normal hits, then macro-weapon hits on the survivors, each step's kills placing BMs
        for phase in range(2):
            k0 = KIND_AP if phase == 0 else KIND_MW
            k1 = k0 + 1
            acc[3] = 0
            any_hit = False
            for h in range(nh):
                any_hit |= hkind[h] == k0 or hkind[h] == k1
            if not any_hit:
                continue  # a step without hits places nothing
            nl = 0
            for i in range(ne):  # branch-free, as the exposed units above
                live[nl] = ex[i]
                cnt[nl] = 0
                nl += _at(hp, ex[i] * L + l) > 0
            for h in range(nh):  # barrage hits land on the unit rolled for
                u = hunit[h]
                if u < 0 or (hkind[h] != k0 and hkind[h] != k1):
                    continue
                if _cell(tu, u, TU_COLS, TU_TYPE) == WE:
                    damage, k2 = _shot_damage(rs, l, h, hkind, hline, wpn)
                    nd += k2 + _hit_war_engine(rs, l, h, u, damage, hkind, hflag, target, crossfire, acc, spl, splashes,
                                               units, hp, alive, n_words, wst, n_units, splash, fu, fb, n_forms,
                                               losses_bm, kills, bm, broken, stk)
                else:
                    nd += _resolve(rs, l, h, u, hkind, hflag, tu, units, hp, alive, n_words, cs, crossfire, acc, wst,
                                   n_units)
            n_live = nl
            for g in range(3):  # AIM_ALL, AIM_WE, AIM_OTHERS: a declared weapon's hits go only to its group (TP 3.2.1)
                group = AIM_ALL - g
                if (group != AIM_ALL) != mixed:
                    continue  # at a mixed target every direct hit is declared, at another none
                gl = live
                if group != AIM_ALL:
                    gl = grp
                    nl = 0
                    for i in range(n_live):
                        if (_cell(tu, live[i], TU_COLS, TU_TYPE) == WE) == (group == AIM_WE):
                            gl[nl] = live[i]
                            cnt[nl] = 0
                            nl += 1
                rem0 = 0
                rem1 = 0
                first = NONE  # the kind of the first pooled hit: its pool comes first on a full tie
                for h in range(nh):
                    if hunit[h] != group or (hkind[h] != k0 and hkind[h] != k1):
                        continue
                    if hflag[h] & HF_SNIPER:  # to the first Inspiring / Leader / Supreme Commander able, else the first
                        pick = NONE
                        for i in range(nl):
                            u = gl[i]
                            if _can_take(_cell(tu, u, TU_COLS, TU_TYPE), hkind[h]):
                                if pick == NONE:
                                    pick = u
                                if _cell(units, u, U_COLS, U_SNIPE):
                                    pick = u
                                    break
                        if pick != NONE and _cell(tu, pick, TU_COLS, TU_TYPE) == WE:
                            damage, k2 = _shot_damage(rs, l, h, hkind, hline, wpn)
                            nd += k2 + _hit_war_engine(rs, l, h, pick, damage, hkind, hflag, target, crossfire, acc,
                                                       spl, splashes, units, hp, alive, n_words, wst, n_units, splash,
                                                       fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
                        elif pick != NONE:
                            nd += _resolve(rs, l, h, pick, hkind, hflag, tu, units, hp, alive, n_words, cs, crossfire,
                                           acc, wst, n_units)
                        continue
                    if first == NONE:
                        first = hkind[h]
                    if hkind[h] == k0:
                        rem0 += 1
                    else:
                        rem1 += 1
                p0 = 0  # next pooled hit of each kind
                p1 = 0
                # one kind of hit: the units able to take it are the same throughout, and the unit with the fewest
                # hits nearest the front is the next able one after the last pick, wrapping round (nxt)
                one_kind = rem0 == 0 or rem1 == 0
                nxt = 0
                while rem0 + rem1 > 0:  # round-robin front to back (TP 1.9.6; TP-FAQ Allocate Hits)
                    least = -1
                    pick = NONE
                    if one_kind:
                        for step in range(nl):
                            i = nxt + step - (nl if nxt + step >= nl else 0)
                            t = _cell(tu, gl[i], TU_COLS, TU_TYPE)
                            if (rem0 > 0 and _can_take(t, k0)) or (rem1 > 0 and _can_take(t, k1)):
                                pick = i
                                break
                    else:
                        for i in range(nl):
                            t = _cell(tu, gl[i], TU_COLS, TU_TYPE)
                            if (rem0 > 0 and _can_take(t, k0)) or (rem1 > 0 and _can_take(t, k1)):
                                if least < 0 or cnt[i] < least:
                                    least = cnt[i]
                                    pick = i
                    if pick == NONE:
                        break  # no unit can take what is left: lost
                    nxt = pick + 1 if pick + 1 < nl else 0
                    t = _cell(tu, gl[pick], TU_COLS, TU_TYPE)
                    take0 = rem0 > 0 and _can_take(t, k0)
                    take1 = rem1 > 0 and _can_take(t, k1)
                    kind = k0 if take0 else k1
                    if take0 and take1:  # the kind with the larger surplus over the units that take only it
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
                                only0 = c0 and not (rem1 > 0 and c1)
                                only1 = c1 and not (rem0 > 0 and c0)
                                s0 -= only0
                                s1 -= only1
                        key0 = s0 * 4096 - a0 * 2  # (surplus, −able, kind is AT) compared in that order
                        key1 = s1 * 4096 - a1 * 2
                        if phase == 0:
                            key1 += 1
                        if key1 > key0 or (key1 == key0 and first == k1):
                            kind = k1
                    u = gl[pick]
                    block = units[u, U_DC] if t == WE else 1  # a war engine: a block of its starting DC (TP 3.2.1)
                    taken = 0
                    while taken < block and (rem0 if kind == k0 else rem1) > 0:
                        if kind == k0:
                            while hunit[p0] != group or hkind[p0] != k0 or (hflag[p0] & HF_SNIPER):
                                p0 += 1
                            h = p0
                            p0 += 1
                            rem0 -= 1
                        else:
                            while hunit[p1] != group or hkind[p1] != k1 or (hflag[p1] & HF_SNIPER):
                                p1 += 1
                            h = p1
                            p1 += 1
                            rem1 -= 1
                        if t == WE:
                            damage, k2 = _shot_damage(rs, l, h, hkind, hline, wpn)  # rolled when allocated (TP 3.2.5)
                            taken += damage if hkind[h] == KIND_TK else 1
                            nd += k2 + _hit_war_engine(rs, l, h, u, damage, hkind, hflag, target, crossfire, acc,
                                                       spl, splashes, units, hp, alive, n_words, wst, n_units, splash,
                                                       fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
                        else:
                            taken += 1
                            nd += _resolve(rs, l, h, u, hkind, hflag, tu, units, hp, alive, n_words, cs, crossfire,
                                           acc, wst, n_units)
                    cnt[pick] += 1
            if was_broken:
                nd += _broken_hits(rs, l, target, acc[3], acc, spl, splashes, tu, fu, fb, units, forms, hp, alive,
                                   n_words, wst, n_units, splash, n_forms, losses_bm, kills, bm, broken, stk)
            else:
                _place(l, target, acc[3], acc, bm)
        if was_broken:  # the barrage's extra BMs last (reading)
            nd += _broken_hits(rs, l, target, extra, acc, spl, splashes, tu, fu, fb, units, forms, hp, alive, n_words,
                               wst, n_units, splash, n_forms, losses_bm, kills, bm, broken, stk)
        else:
            _place(l, target, extra, acc, bm)
        # §3.11 the break check, once the whole attack is over; then of the formations a splash put BMs on
        if not was_broken and _any_living(hp, fu, fb, target, l) and _fails_break_test(hp, fu, fb, units, forms, bm,
                                                                                        target, l):
            nd += _break(rs, l, target, fu, fb, units, hp, trapped, forms, alive, n_words, wst, n_units, splash,
                         n_forms, losses_bm, kills, bm, broken, stk)
        for g in range(n_forms):
            if spl[g] and not _at(broken, g * L + l) and _any_living(hp, fu, fb, g, l) \
                    and _fails_break_test(hp, fu, fb, units, forms, bm, g, l):
                nd += _break(rs, l, g, fu, fb, units, hp, trapped, forms, alive, n_words, wst, n_units, splash, n_forms,
                             losses_bm, kills, bm, broken, stk)
        res[l] = nh
        res[L + l] = acc[1]
        res[2 * L + l] = acc[0]
    return nd
