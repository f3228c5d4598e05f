"""The end phase (rule step, spec §7, §10.7; TP 1.14.1, 2.1.15, TP-SR): war engines' fires, reactor breaches,
regeneration and void shields, returning Necron units, then the rally with Supreme Commander re-rolls, the
withdrawal of a broken formation that fails it, shadowfields back.
"""
import numpy as np

from ..rng import _FOUR, _ONE, _SIX
from .access import ANY, FALSE, INT0, INT1, TRUE, _at, _max, _min, _put, kernel_function
from .breaks import _fails_break, _withdraw_lane, _withdrawal_can_cost
from .damage import _hull_points, _we_resolve_lane, damage_state
from .dice import _d6, _die, _roll
from .layout import (BOOK_END_PHASE, E_HULL, E_SPLASH, FR_ALIVE, FR_BM, FR_BROKEN, FR_PASSED, FR_TESTED, F_ANY_LEADER,
                     F_ANY_WE, F_COLS, F_ENEMY30, F_INIT, F_MOB, F_SIDE, F_TSKNF, LANES, LN_D, LN_ENDED,
                     LN_WITHDREW, LV_LEAD, LV_MOD, LV_OK, LV_SCR0, LV_SIZE, LV_TEST, M_LEADER, M_SC, R_LEADERS, R_NAT1,
                     R_RALLY, R_SC_REROLL, U_BIT, U_COLS, U_NECRON, U_REGEN, U_SHADOW, U_SIDE, U_SPLASH_ON, U_VOID,
                     U_WORD, W_BREACH, W_FIRE, W_LOST_VOID, W_SHADOW, W_VOID)
from .units import _less_lost_capacity, _rows_count, _rows_fcount, _starting_dc, _wat, _wput


@kernel_function
def _any_necron(units, fu, fb, f):
    """Has formation ``f`` a unit with TP-SR Necron Technology?"""
    for kk in range(_at(fb, f), _at(fb, f + 1)):
        if _at(units, _at(fu, kk) * U_COLS + U_NECRON):
            return True
    return False


@kernel_function
def _fires_and_breaches(dm, l, u, splashes):
    """War engine ``u``'s fires and reactor breaches in lane ``l``'s end phase (spec §10.7): each fire rolls a D6 (1:
    a point of damage and a new fire, which first rolls in the next end phase; 2–4: a point; 5–6: put out), then
    each breach while it lives (1: destroyed, its DC left counting as damage, with its splash; 2–3: a point; 4–6:
    repaired).  Returns the dice rolled."""
    units = dm.units
    wst = dm.wst
    n_units = units.shape[0]
    fires = _wat(wst, W_FIRE, u, l, n_units)
    breaches = _wat(wst, W_BREACH, u, l, n_units)
    nd = 0
    new_fires = 0
    for _ in range(fires):
        r = _d6(dm.rs, l)
        nd += 1
        if r >= 5:
            fires -= 1
            continue
        new_fires += np.int64(r == 1)
        nd += _we_resolve_lane(dm, l, E_HULL, u, INT0, INT0, INT1, BOOK_END_PHASE, INT0, splashes)
    _wput(wst, W_FIRE, u, l, n_units, fires + new_fires)
    for _ in range(breaches):
        left = _at(dm.hp, u * LANES + l)
        if left == 0:
            break
        r = _d6(dm.rs, l)
        nd += 1
        if r >= 4:
            breaches -= 1
        elif r >= 2:
            nd += _we_resolve_lane(dm, l, E_HULL, u, INT0, INT0, INT1, BOOK_END_PHASE, INT0, splashes)
        else:  # the reactor explodes: destroyed, its DC left count as damage (spec §10.4), its splash
            _hull_points(dm, u, l, left, INT1, BOOK_END_PHASE, INT0)
            if splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0:
                nd += _we_resolve_lane(dm, l, E_SPLASH, u, INT0, INT0, INT0, BOOK_END_PHASE, INT0, splashes)
    _wput(wst, W_BREACH, u, l, n_units, breaches)
    return nd


@kernel_function
def _necron_returns(dm, l, f):
    """If formation ``f`` has a living unit in lane ``l``, its last destroyed Necron unit (the farthest from the
    enemy, spec §10.8.7) returns with its full DC (TP-SR Necron Technology)."""
    units = dm.units
    living = False
    back = ANY
    for kk in range(_at(dm.fb, f), _at(dm.fb, f + 1)):
        u = _at(dm.fu, kk)
        if _at(dm.hp, u * LANES + l) > 0:
            living = True
        elif _at(units, u * U_COLS + U_NECRON):
            back = u
    if living and back >= 0:
        _put(dm.hp, back * LANES + l, _starting_dc(units, dm.wst, back, l, units.shape[0]))
        a = (_at(units, back * U_COLS + U_SIDE) * dm.n_words + _at(units, back * U_COLS + U_WORD)) * LANES + l
        _put(dm.alive, a, _at(dm.alive, a) | (_ONE << np.uint64(_at(units, back * U_COLS + U_BIT))))


@kernel_function
def _end_phase_step2_lane(dm, fwe, fweb, forms, trapped, l, f, splashes):
    """End-phase step 2 for formation ``f`` in lane ``l``, before the rally (spec §10.7), unit by unit: fires and
    reactor breaches (_fires_and_breaches); a war engine with regeneration regains 1 DC, a unit with void shields
    one shield; then its last destroyed Necron unit may return (_necron_returns).  Damage done here adds BMs to
    its unbroken formation; if ``f``'s BMs grew, its break test follows (broken: BMs removed, it withdraws as
    after a failed rally).  ``fwe`` / ``fweb``: each formation's war engines (Tables).  Returns the dice rolled."""
    units = dm.units
    wst = dm.wst
    n_units = units.shape[0]
    nd = 0
    i = f * LANES + l
    before = _at(dm.bm, i)
    for kk in range(_at(fweb, f), _at(fweb, f + 1)):
        u = _at(fwe, kk)
        if _at(dm.hp, u * LANES + l) == 0:
            continue
        if _wat(wst, W_FIRE, u, l, n_units) + _wat(wst, W_BREACH, u, l, n_units) > 0:
            nd += _fires_and_breaches(dm, l, u, splashes)
        left = _at(dm.hp, u * LANES + l)
        if left > 0:
            if _at(units, u * U_COLS + U_REGEN):
                _put(dm.hp, u * LANES + l, _min(left + 1, _starting_dc(units, wst, u, l, n_units)))
            _wput(wst, W_VOID, u, l, n_units, _min(_wat(wst, W_VOID, u, l, n_units) + 1,
                                                   _at(units, u * U_COLS + U_VOID)
                                                   - _wat(wst, W_LOST_VOID, u, l, n_units)))
    _necron_returns(dm, l, f)
    if _at(dm.bm, i) > before:
        size = INT0
        for kk in range(_at(dm.fb, f), _at(dm.fb, f + 1)):
            u = _at(dm.fu, kk)
            size += _starting_dc(units, wst, u, l, n_units) * np.int64(_at(dm.hp, u * LANES + l) > 0)
        if size > 0 and _fails_break(_at(dm.bm, i), size, _at(forms, f * F_COLS + F_TSKNF) != 0):
            _put(dm.bm, i, 0)
            _put(dm.broken, i, 1)
            nd += _withdraw_lane(dm, trapped, forms, l, f, FALSE, BOOK_END_PHASE, splashes)
    return nd


@kernel_function
def _rally_takers(sets, forms, leaders, alive, hp, wst, per_form, lv, ended, f):
    """Formation ``f``'s rally in each lane whose trial ended (``ended``; TP 1.14.1, 2.1.8, 2.1.10): who tests
    (LV_TEST: a living unit and BMs, or broken), the modifier (LV_MOD: −1 enemy within 30 cm, −2 broken, Mob Rule
    +1 / +2 with more than 5 / 10 units), its Leaders (LV_LEAD; none without the switch ``leaders``) and size
    (LV_SIZE: a war engine counting its starting DC).  The few arrays it reads, not ``tb`` and ``st``: it is called
    once per formation."""
    L = LANES
    fa, bm, broken = per_form[FR_ALIVE], per_form[FR_BM], per_form[FR_BROKEN]
    e30 = forms[f, F_ENEMY30]
    mob = forms[f, F_MOB]
    if leaders and forms[f, F_ANY_LEADER]:
        _rows_fcount(sets, forms, alive, f, M_LEADER, lv, LV_LEAD * L, FALSE)
    else:
        for l in range(L):
            lv[LV_LEAD * L + l] = 0
    if forms[f, F_ANY_WE]:  # its size: a war engine counts its starting DC (TP 3.0)
        _rows_fcount(sets, forms, alive, f, ANY, lv, LV_SIZE * L, TRUE)
        _less_lost_capacity(sets, hp, wst, forms[f, F_SIDE], ANY, f, lv, LV_SIZE * L)
    else:
        for l in range(L):
            _put(lv, LV_SIZE * L + l, _at(fa, f * L + l))
    for l in range(L):  # who tests (a formation with a living unit and BMs or broken)
        living = _at(fa, f * L + l)
        brk = _at(broken, f * L + l)
        bmf = _at(bm, f * L + l)
        _put(lv, LV_TEST * L + l, _at(ended, l) & np.int64(living > 0) & (np.int64(bmf > 0) | brk))
        mob_mod = (2 if living > 10 else (1 if living > 5 else 0)) if mob else 0
        _put(lv, LV_MOD * L + l, -e30 - 2 * brk + mob_mod)


@kernel_function
def _rally_rolls(tb, st, f):
    """Formation ``f``'s rally test where LV_TEST: D6 + LV_MOD ≥ its initiative (a natural 1 fails with the switch),
    a failed test re-rolled once with one of the army's Supreme Commander re-rolls left (TP 2.1.15): LV_OK.
    Returns the dice rolled."""
    L = LANES
    lv = st.lv
    init = tb.forms[f, F_INIT]
    nat1_ok = np.int64(tb.rules[R_NAT1] == 0)
    d = st.per_lane[LN_D]
    nd = _roll(st.rs, d, _SIX, _FOUR, lv, LV_TEST * L, INT0)
    for l in range(L):
        roll = _at(d, l)
        mod = _at(lv, LV_MOD * L + l)
        _put(lv, LV_OK * L + l, np.int64(roll + mod >= init) & (np.int64(roll != 1) | nat1_ok))
    fs = tb.forms[f, F_SIDE]
    if tb.rules[R_SC_REROLL] != 0 and tb.any_sc[fs]:  # a failed test spends one of the army's re-rolls, once
        pool = (LV_SCR0 + fs) * L
        for l in range(L):
            if lv[LV_TEST * L + l] and not lv[LV_OK * L + l] and lv[pool + l] > 0:
                lv[pool + l] -= 1
                roll = _die(st.rs, l, _SIX, _FOUR)
                nd += 1
                lv[LV_OK * L + l] = np.int64(roll + lv[LV_MOD * L + l] >= init and (roll != 1 or nat1_ok))
    return nd


@kernel_function
def _rally(tb, st, f):
    """§7 formation ``f``'s rally in the lanes whose trial ended (TP 1.14.1, 2.1.8; spec §7): a pass removes half
    its BMs rounded down (broken: it keeps half its units, TSKNF all of them, as BMs), less one per Leader (TSKNF:
    two); a broken one that fails and can lose units in a withdrawal withdraws again.  Returns (dice rolled, any
    withdrawal)."""
    L = LANES
    lv = st.lv
    per_form = st.per_form
    tested, passed = per_form[FR_TESTED], per_form[FR_PASSED]
    withdrew = st.per_lane[LN_WITHDREW]
    tsk = tb.forms[f, F_TSKNF]
    _rally_takers(tb.sets, tb.forms, tb.rules[R_LEADERS] != 0, st.alive, st.hp, st.wst, st.per_form, lv,
                  st.per_lane[LN_ENDED], f)
    nd = _rally_rolls(tb, st, f)
    wd_any = 0
    trap = np.int64(_withdrawal_can_cost(tb.trapped, tb.forms, f, FALSE))
    for l in range(L):
        brk = _at(st.broken, f * L + l)
        bmf = _at(st.bm, f * L + l)
        test = _at(lv, LV_TEST * L + l)
        ok = _at(lv, LV_OK * L + l)
        cut = (1 + tsk) * _at(lv, LV_LEAD * L + l)
        size = _at(lv, LV_SIZE * L + l)
        pass_broken = _max((size if tsk else size >> 1) - cut, 0)
        pass_unbroken = _max((bmf >> 1) - cut, 0)
        passes = test & ok
        _put(tested, f * L + l, test)
        _put(passed, f * L + l, passes)
        _put(st.bm, f * L + l, (pass_broken if brk else pass_unbroken) if passes else bmf)
        _put(st.broken, f * L + l, brk & (1 - passes))
        wd = trap & test & brk & (1 - ok)
        _put(withdrew, l, wd)
        wd_any |= wd
    if wd_any:
        dm = damage_state(tb, st)
        for l in range(L):
            if withdrew[l]:
                nd += _withdraw_lane(dm, tb.trapped, tb.forms, l, f, FALSE, BOOK_END_PHASE, tb.splashes)
    return nd, wd_any


@kernel_function
def _end_phase_effects(tb, st):
    """End-phase step 2 of war engines and Necrons in the lanes whose trial ended (spec §10.7,
    :func:`_end_phase_step2_lane`), with the rally on; returns the dice rolled."""
    L = LANES
    n_forms = tb.forms.shape[0]
    fa = st.per_form[FR_ALIVE]
    ended = st.per_lane[LN_ENDED]
    nd = 0
    if tb.rules[R_RALLY] and tb.we:  # spec §10.7: end-phase step 2, before the rally
        dm = damage_state(tb, st)
        for f in range(n_forms):
            if tb.fweb[f + 1] == tb.fweb[f] and not _any_necron(tb.units, tb.fu, tb.fb, f):
                continue
            for l in range(L):
                if ended[l]:
                    nd += _end_phase_step2_lane(dm, tb.fwe, tb.fweb, tb.forms, tb.trapped, l, f, tb.splashes)
        for f in range(n_forms):
            _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, fa, f * L, FALSE)
    return nd


@kernel_function
def _rally_step(tb, st):
    """§7 the rally of every formation in the lanes whose trial ended, with the rally on (with Supreme Commander
    re-rolls: one per living Supreme Commander of the side); returns the dice rolled."""
    L = LANES
    n_forms = tb.forms.shape[0]
    fa = st.per_form[FR_ALIVE]
    nd = 0
    any_withdrew = 0
    if not tb.rules[R_RALLY]:
        return nd
    for side in range(2):  # each side's Supreme Commander re-rolls this turn: one per living SC
        if tb.rules[R_SC_REROLL] != 0 and tb.any_sc[side]:
            _rows_count(tb.sets, st.alive, side, M_SC, st.lv, (LV_SCR0 + side) * L, FALSE)
        else:
            for l in range(L):
                st.lv[(LV_SCR0 + side) * L + l] = 0
    for f in range(n_forms):
        f_nd, wd = _rally(tb, st, f)
        nd += f_nd
        any_withdrew |= wd
    if any_withdrew:
        for f in range(n_forms):
            _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, fa, f * L, FALSE)
    return nd


@kernel_function
def _shadowfields_back(tb, st):
    """Shadowfields come back after the rally step in the lanes whose trial ended, with the rally on (spec
    §10.2)."""
    L = LANES
    n_units = tb.units.shape[0]
    ended = st.per_lane[LN_ENDED]
    if tb.rules[R_RALLY] and tb.we:
        for u in range(n_units):
            top = tb.units[u, U_SHADOW]
            if top == 0:
                continue
            for l in range(L):
                i = (W_SHADOW * n_units + u) * L + l
                up = st.wst[i]
                st.wst[i] = up + np.int64(ended[l] and st.hp[u * L + l] > 0 and 0 < up < top)


@kernel_function
def _end_phase(tb, st):
    """The end phase of the lanes whose trial ended: war engines' step 2 (spec §10.7), the rally (§7), shadowfields
    back; returns the dice rolled.  (A turn fires its end-phase withdrawal fire after the rally:
    wargame_odds.kernels.epic.turn.turn_end_phase.)"""
    nd = _end_phase_effects(tb, st)
    nd += _rally_step(tb, st)
    _shadowfields_back(tb, st)
    return nd
