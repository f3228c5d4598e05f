"""A shooting attack's choices before any dice (rule step, docs/epic-turn.md §3.5; TP 1.9.5, 3.2.1): which hits a
unit can take, a weapon line's fire type where no policy is needed (:func:`_fixed_type`), and the default policies'
AP/AT choice and declaration at a mixed target (:func:`_aim`), measured by the expected harm (:func:`_harm`).

The functions take the records as wargame_odds.kernels.epic.shooting says.
"""
import numpy as np

from .access import _at, _cell, kernel_function
from .hits import H_IC, H_LANCE, H_SNIPER, KIND_AP, KIND_AT, KIND_MW, KIND_TK
from .layout import LANES, NO_ROLL, W_FIELD, W_SHADOW, W_VOID
from .saves import _unsaved
from .turn_layout import (AIM_ALL, AIM_OTHERS, AIM_WE, AP_AT_AP, AP_AT_AT, AV, DECLARE_OTHERS, DECLARE_WE, INF,
                          KIND_CHOOSE, LV, NONE, TIE, TU_COLS, TU_TYPE, WE, WP_AP, WP_AT, WP_COLS, WP_IC, WP_LANCE,
                          WP_MW, WP_SHOTS, WP_SHOTS_N, WP_SHOTS_SIDES, WP_SNIPER, WP_TK_N, WP_TK_PLUS, WP_TK_SIDES)
from .units import _wat


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
