"""The counts of a lane's finished trial (driver: analysis/epic/outcome.py::record): the block's count row and
each formation's joint histograms, folded into the count row at the end of the block.
"""
import numpy as np

from ..jit import njit
from .access import _at, _bump, _min, _put
from .end_phase import _we_totals
from .layout import (FO_BM_A, FO_BM_E, FO_BROKEN_A, FO_BROKEN_E, FO_CAS, FO_CAS_A, FO_CRIT, FO_DESTROYED, FO_DMG_A,
                     FO_DMG_E, FO_PASSED, FO_SH_A, FO_SH_E, FO_TESTED, F_CAP, F_N, LANES, LV_SLOT0, LV_SLOT1, LV_SLOT2,
                     O_MARGIN, O_MAX_MARGIN, O_NOROLL, O_ROUNDS, WIN_ATT, WIN_DEF, WIN_NO_ASSAULT, W_CRIT)


@njit(cache=True, _nrt=False)
def _record(pflat, prow, side_off, form_off, forms, hist, ho, units, fwe, fweb, hp, wst, we, lv, per_form, per_lane):
    """The counts of the lanes whose trial ended (analysis/epic/outcome.py::record): the block's count row and the
    formations' joint histograms."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    bm, broken, tested, passed, bm_a = per_form[0], per_form[1], per_form[3], per_form[4], per_form[5]
    broken_a, fa, cas_a, dmg_a, sh_a = per_form[6], per_form[7], per_form[8], per_form[9], per_form[10]
    winner, margin, by_roll, rnd, ended = per_lane[0], per_lane[1], per_lane[2], per_lane[3], per_lane[7]
    for l in range(L):  # the counts (analysis/epic/outcome.py::record) through per-block histograms
        if not ended[l]:
            continue
        wn = winner[l]
        _bump(pflat, prow + _at(side_off, wn), 1)
        won = np.int64((wn == WIN_ATT) | (wn == WIN_DEF))  # a side won without a roll (not "no winner")
        _bump(pflat, prow + _at(side_off, O_NOROLL), won & (1 - _at(by_roll, l)))
        _bump(pflat, prow + _at(side_off, O_ROUNDS) + _at(rnd, l) - 1, np.int64(wn != WIN_NO_ASSAULT))
        if by_roll[l]:
            _bump(pflat, prow + _at(side_off, O_MARGIN) + _at(margin, l) + _at(side_off, O_MAX_MARGIN), 1)
    for f in range(n_forms):  # each formation's three joint histograms (slots in lanes, then counted)
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        h0 = ho[f, 0] + n1 - 1
        h1 = ho[f, 1]
        h2 = ho[f, 2]
        for l in range(L):
            i = f * L + l
            al = np.int64(_at(fa, i) > 0)  # after the end phase too: broken and BMs only while alive
            _put(lv, LV_SLOT0 * L + l, h0 + _at(cas_a, i) * n1 - _at(fa, i))
            _put(lv, LV_SLOT1 * L + l, h1 + _at(broken_a, i) * c1 + _min(_at(bm_a, i), c1 - 1))
            _put(lv, LV_SLOT2 * L + l, h2 + (4 * (_at(broken, i) & al) + 2 * _at(tested, i) + _at(passed, i)) * c1
                 + _min(_at(bm, i) * al, c1 - 1))
        for l in range(L):
            if _at(ended, l):
                _bump(hist, _at(lv, LV_SLOT0 * L + l), 1)
                _bump(hist, _at(lv, LV_SLOT1 * L + l), 1)
                _bump(hist, _at(lv, LV_SLOT2 * L + l), 1)
    for f in range(n_forms):  # the war-engine results (spec §10.9)
        if fweb[f + 1] == fweb[f]:
            continue
        _we_totals(fwe, fweb, f, units, hp, wst, n_units, we, lv, LV_SLOT0 * L, lv, LV_SLOT1 * L)
        for l in range(L):
            if not ended[l]:
                continue
            crit = 0
            if we:
                for kk in range(fweb[f], fweb[f + 1]):
                    crit |= wst[(W_CRIT * n_units + fwe[kk]) * L + l]
            pflat[prow + form_off[f, FO_CRIT]] += crit
            pflat[prow + form_off[f, FO_DMG_A] + dmg_a[f * L + l]] += 1
            pflat[prow + form_off[f, FO_DMG_E] + lv[LV_SLOT0 * L + l]] += 1
            pflat[prow + form_off[f, FO_SH_A] + sh_a[f * L + l]] += 1
            pflat[prow + form_off[f, FO_SH_E] + lv[LV_SLOT1 * L + l]] += 1


@njit(cache=True)
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
