"""The counts of a lane's finished trial (driver: analysis/epic/outcome.py::record): the block's count row and
each formation's joint histograms, folded into the count row at the end of the block.
"""
import numpy as np

from .access import INT1, _at, _bump, _min, _put, kernel_function
from .layout import (FO_BM_A, FO_BM_E, FO_BROKEN_A, FO_BROKEN_E, FO_CAS, FO_CAS_A, FO_CRIT, FO_DESTROYED, FO_DMG_A,
                     FO_DMG_E, FO_PASSED, FO_SH_A, FO_SH_E, FO_TESTED, FR_ALIVE, FR_BM_A, FR_BROKEN_A, FR_CAS_A,
                     FR_DMG_A, FR_PASSED, FR_SH_A, FR_TESTED, F_CAP, F_N, LANES, LN_BY_ROLL, LN_ENDED, LN_MARGIN,
                     LN_ROUND, LN_WINNER, LV_SLOT0, LV_SLOT1, LV_SLOT2, O_MARGIN, O_MAX_MARGIN, O_NOROLL, O_ROUNDS,
                     WIN_ATT, WIN_DEF, WIN_NO_ASSAULT, W_CRIT)
from .units import _we_totals


@kernel_function
def _record_sides(tb, st, pflat, prow):
    """The side-level counts of the lanes whose trial ended (analysis/epic/outcome.py::record): the winner, won
    without a roll, the rounds, the margin of a roll."""
    per_lane = st.per_lane
    side_off = tb.side_off
    winner, margin, by_roll, rnd, ended = per_lane[LN_WINNER], per_lane[LN_MARGIN], per_lane[LN_BY_ROLL], \
        per_lane[LN_ROUND], per_lane[LN_ENDED]
    for l in range(LANES):
        if not ended[l]:
            continue
        wn = winner[l]
        _bump(pflat, prow + _at(side_off, wn), INT1)
        won = np.int64((wn == WIN_ATT) | (wn == WIN_DEF))  # a side won without a roll (not "no winner")
        _bump(pflat, prow + _at(side_off, O_NOROLL), won & (1 - _at(by_roll, l)))
        _bump(pflat, prow + _at(side_off, O_ROUNDS) + _at(rnd, l) - 1, np.int64(wn != WIN_NO_ASSAULT))
        if by_roll[l]:
            _bump(pflat, prow + _at(side_off, O_MARGIN) + _at(margin, l) + _at(side_off, O_MAX_MARGIN), INT1)


@kernel_function
def _record_histograms(tb, st, f):
    """Formation ``f``'s three joint histograms (slots in lanes, then counted, for the lanes whose trial ended):
    casualties after the assault and at the end; broken and BMs after the assault; broken, rallied and BMs at the
    end (broken and BMs only while it lives)."""
    L = LANES
    lv = st.lv
    per_form = st.per_form
    tested, passed, bm_a = per_form[FR_TESTED], per_form[FR_PASSED], per_form[FR_BM_A]
    broken_a, fa, cas_a = per_form[FR_BROKEN_A], per_form[FR_ALIVE], per_form[FR_CAS_A]
    ended = st.per_lane[LN_ENDED]
    n1 = tb.forms[f, F_N] + 1
    c1 = tb.forms[f, F_CAP] + 1
    h0 = tb.ho[f, 0] + n1 - 1
    h1 = tb.ho[f, 1]
    h2 = tb.ho[f, 2]
    for l in range(L):
        i = f * L + l
        al = np.int64(_at(fa, i) > 0)  # after the end phase too: broken and BMs only while alive
        _put(lv, LV_SLOT0 * L + l, h0 + _at(cas_a, i) * n1 - _at(fa, i))
        _put(lv, LV_SLOT1 * L + l, h1 + _at(broken_a, i) * c1 + _min(_at(bm_a, i), c1 - 1))
        _put(lv, LV_SLOT2 * L + l, h2 + (4 * (_at(st.broken, i) & al) + 2 * _at(tested, i) + _at(passed, i)) * c1
             + _min(_at(st.bm, i) * al, c1 - 1))
    for l in range(L):
        if _at(ended, l):
            _bump(st.hist, _at(lv, LV_SLOT0 * L + l), INT1)
            _bump(st.hist, _at(lv, LV_SLOT1 * L + l), INT1)
            _bump(st.hist, _at(lv, LV_SLOT2 * L + l), INT1)


@kernel_function
def _record_war_engines(tb, st, f, pflat, prow):
    """Formation ``f``'s war-engine results (spec §10.9) for the lanes whose trial ended: a critical, damage and
    shields up after the assault and at the end."""
    L = LANES
    lv = st.lv
    n_units = tb.units.shape[0]
    form_off = tb.form_off
    dmg_a, sh_a = st.per_form[FR_DMG_A], st.per_form[FR_SH_A]
    ended = st.per_lane[LN_ENDED]
    _we_totals(tb, st, f, lv, LV_SLOT0 * L, lv, LV_SLOT1 * L)
    for l in range(L):
        if not ended[l]:
            continue
        crit = 0
        if tb.we:
            for kk in range(tb.fweb[f], tb.fweb[f + 1]):
                crit |= st.wst[(W_CRIT * n_units + tb.fwe[kk]) * L + l]
        pflat[prow + form_off[f, FO_CRIT]] += crit
        pflat[prow + form_off[f, FO_DMG_A] + dmg_a[f * L + l]] += 1
        pflat[prow + form_off[f, FO_DMG_E] + lv[LV_SLOT0 * L + l]] += 1
        pflat[prow + form_off[f, FO_SH_A] + sh_a[f * L + l]] += 1
        pflat[prow + form_off[f, FO_SH_E] + lv[LV_SLOT1 * L + l]] += 1


@kernel_function
def _record(tb, st, pflat, prow):
    """The counts of the lanes whose trial ended (analysis/epic/outcome.py::record): the block's count row
    ``pflat[prow:]`` and the formations' joint histograms."""
    _record_sides(tb, st, pflat, prow)
    for f in range(tb.forms.shape[0]):
        _record_histograms(tb, st, f)
    for f in range(tb.forms.shape[0]):
        if tb.fweb[f + 1] > tb.fweb[f]:
            _record_war_engines(tb, st, f, pflat, prow)


@kernel_function
def _fold_histograms(part, b, hist, ho, forms, form_off):
    """Add block ``b``'s joint histograms of each formation (``hist`` at the offsets ``ho``) to its count row."""
    for f in range(forms.shape[0]):
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        for ca in range(n1):
            for dead in range(n1):
                c = hist[ho[f, 0] + ca * n1 + dead]
                part[b, form_off[f, FO_CAS_A] + ca] += c
                part[b, form_off[f, FO_CAS] + dead] += c
                part[b, form_off[f, FO_DESTROYED]] += c * (dead == n1 - 1)
        for ba in range(2):
            for v in range(c1):
                c = hist[ho[f, 1] + ba * c1 + v]
                part[b, form_off[f, FO_BROKEN_A]] += c * ba
                part[b, form_off[f, FO_BM_A] + v] += c
        for code in range(8):
            for v in range(c1):
                c = hist[ho[f, 2] + code * c1 + v]
                part[b, form_off[f, FO_BROKEN_E]] += c * (code >> 2)
                part[b, form_off[f, FO_TESTED]] += c * ((code >> 1) & 1)
                part[b, form_off[f, FO_PASSED]] += c * (code & 1)
                part[b, form_off[f, FO_BM_E] + v] += c
