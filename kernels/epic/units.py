"""Unit sets and counts (lane primitives): the alive bit masks (a side's living units, popcounts per lane), the
per-unit war-engine state ``wst`` (``_wat`` / ``_wput``), a unit's starting DC, a formation's living units and
size (a war engine counting its starting DC: TP 3.0).
"""
import numpy as np

from ..rng import _ONE
from .access import ANY, FALSE, INT1, _ZERO, _at, _cell, _popcount, _put, kernel_function
from .layout import (ATTACKER, DEFENDER, F_COLS, F_SIDE, LANES, LV_ATT, LV_DFD, M_ASSAULT, M_COLS, U_BIT, U_CHARS,
                     U_COLS, U_DC, U_FORM, U_SIDE, U_WORD, W_FIELD, W_LOST_DC, W_SHADOW, W_VOID)


@kernel_function
def _abit(alive, side, w, l, n_words):
    return _at(alive, (side * n_words + w) * LANES + l)


@kernel_function
def _clear_unit(alive, units, u, l, n_words, dead):
    """Clear unit ``u``'s alive bit in lane ``l`` if ``dead`` (0 / 1)."""
    side = _at(units, u * U_COLS + U_SIDE)
    i = (side * n_words + _at(units, u * U_COLS + U_WORD)) * LANES + l
    bit = np.uint64(dead) << np.uint64(_at(units, u * U_COLS + U_BIT))
    _put(alive, i, _at(alive, i) & ~bit)


@kernel_function
def _rows_living(sets, alive, side, kind, f, out, off, weighted):
    """:func:`_count_living` with its integer arguments as int64 values: compiled once in plain Numba whatever
    constants its callers pass (wargame_odds.kernels.epic.damage._we_resolve_lane says why)."""
    _count_living(sets, alive, np.int64(side), np.int64(kind), np.int64(f), out, np.int64(off), weighted != 0)


@kernel_function
def _count_living(sets, alive, side, kind, f, out, off, weighted):
    """``out[off + l]`` = living units of ``side`` in each lane, only those of set ``kind`` if ``kind`` >= 0
    and of formation ``f`` if ``f`` >= 0 (a WE counting its starting DC if ``weighted``); lane loops
    without calls, so LLVM vectorises them.  ``sets``: the scenario's UnitSets."""
    n_words = sets.n_words
    masks = sets.masks
    units = sets.units
    for l in range(LANES):
        _put(out, off + l, 0)
    for w in range(n_words):
        m = ~_ZERO
        if kind >= 0:
            m &= _at(masks, (2 * w + side) * M_COLS + kind)
        if f >= 0:
            m &= _at(sets.fmasks, f * n_words + w)
        row = (side * n_words + w) * LANES
        for l in range(LANES):
            _put(out, off + l, _at(out, off + l) + _popcount(_at(alive, row + l) & m))
    if weighted:
        for k in range(_at(sets.web, side), _at(sets.web, side + 1)):
            u = _at(sets.wes, k)
            w = _at(units, u * U_COLS + U_WORD)
            sh = np.uint64(_at(units, u * U_COLS + U_BIT))
            if f >= 0 and _at(units, u * U_COLS + U_FORM) != f:
                continue
            if kind >= 0 and (_at(masks, (2 * w + side) * M_COLS + kind) >> sh) & _ONE == _ZERO:
                continue
            extra = _at(units, u * U_COLS + U_DC) - 1
            row = (side * n_words + w) * LANES
            for l in range(LANES):
                _put(out, off + l, _at(out, off + l) + extra * np.int64((_at(alive, row + l) >> sh) & _ONE))


@kernel_function
def _rows_count(sets, alive, side, kind, out, off, weighted):
    """``_rows_living`` over all of ``side``'s formations."""
    _rows_living(sets, alive, side, kind, ANY, out, off, weighted)


@kernel_function
def _rows_any(sets, alive, side, kind, out, off):
    """``out[off + l]`` = 1 if ``side`` has a living unit in set ``kind`` in lane ``l``, else 0."""
    _rows_living(sets, alive, side, kind, ANY, out, off, FALSE)
    for l in range(LANES):
        _put(out, off + l, np.int64(_at(out, off + l) > 0))


@kernel_function
def _rows_fcount(sets, forms, alive, f, kind, out, off, weighted):
    """``_rows_living`` of formation ``f`` (in set ``kind`` unless ``kind`` < 0)."""
    _rows_living(sets, alive, _at(forms, f * F_COLS + F_SIDE), kind, f, out, off, weighted)


@kernel_function
def _assault_sides_living(sets, alive, lv):
    """``lv`` rows LV_DFD / LV_ATT: 1 in each lane where the defenders / attackers have a living unit in
    an assault formation (the §3 and §4 early ends)."""
    _rows_any(sets, alive, DEFENDER, M_ASSAULT, lv, LV_DFD * LANES)
    _rows_any(sets, alive, ATTACKER, M_ASSAULT, lv, LV_ATT * LANES)


@kernel_function
def _wat(wst, row, u, l, n_units):
    return _at(wst, (row * n_units + u) * LANES + l)


@kernel_function
def _wput(wst, row, u, l, n_units, v):
    _put(wst, (row * n_units + u) * LANES + l, v)


@kernel_function
def _starting_dc(units, wst, u, l, n_units):
    """Unit ``u``'s starting DC in lane ``l``: its scenario value less what it lost with its characters (spec
    §10.4 lose_character); what a war engine rolls, takes per allocation pass and counts for its formation."""
    dc = _at(units, u * U_COLS + U_DC)
    if wst.size == 0:
        return dc
    return dc - _wat(wst, W_LOST_DC, u, l, n_units)


@kernel_function
def _less_lost_capacity(sets, hp, wst, side, kind, f, out, off):
    """``out[off + l]`` (living units of ``side``, a war engine counting its starting DC; only those of set
    ``kind`` if ``kind`` >= 0 and of formation ``f`` if ``f`` >= 0: _rows_living) less the starting DC their
    living war engines lost with their characters in lane ``l`` (spec §0, §10.4 lose_character)."""
    if wst.size == 0:
        return
    units = sets.units
    n_units = units.shape[0]
    for u in range(n_units):
        if _at(units, u * U_COLS + U_CHARS) == 0 or _at(units, u * U_COLS + U_SIDE) != side \
                or (f >= 0 and _at(units, u * U_COLS + U_FORM) != f):
            continue
        w = _at(units, u * U_COLS + U_WORD)
        if kind >= 0 and (_at(sets.masks, (2 * w + side) * M_COLS + kind)
                          >> np.uint64(_at(units, u * U_COLS + U_BIT))) & _ONE == _ZERO:
            continue
        for l in range(LANES):
            if _at(hp, u * LANES + l) > 0:
                _put(out, off + l, _at(out, off + l) - _wat(wst, W_LOST_DC, u, l, n_units))


@kernel_function
def _we_totals(tb, st, f, dmg, dmg_off, sh, sh_off):
    """``dmg[dmg_off + l]``: DC lost by formation ``f``'s war engines and shielded units in each lane (a
    destroyed one its starting DC); ``sh[sh_off + l]``: their void shields, power fields and shadowfields up
    (0 without war-engine rules) (spec §10.9)."""
    units = tb.units
    n_units = units.shape[0]
    wst = st.wst
    for l in range(LANES):
        _put(dmg, dmg_off + l, 0)
        _put(sh, sh_off + l, 0)
    for kk in range(_at(tb.fweb, f), _at(tb.fweb, f + 1)):
        u = _at(tb.fwe, kk)
        dc = _at(units, u * U_COLS + U_DC)
        for l in range(LANES):
            _put(dmg, dmg_off + l, _at(dmg, dmg_off + l) + dc - _at(st.hp, u * LANES + l))
        if tb.we:
            for l in range(LANES):
                up = (_wat(wst, W_VOID, u, l, n_units) + _wat(wst, W_FIELD, u, l, n_units)
                      + _wat(wst, W_SHADOW, u, l, n_units)) * np.int64(_at(st.hp, u * LANES + l) > 0)
                _put(sh, sh_off + l, _at(sh, sh_off + l) + up)


@kernel_function
def _living(hp, fu, fb, f, l):
    """Living units of formation ``f`` in lane ``l``."""
    n = 0
    for k in range(_at(fb, f), _at(fb, f + 1)):
        n += _at(hp, _at(fu, k) * LANES + l) > 0
    return n


@kernel_function
def _any_living(hp, fu, fb, f, l):
    """Has formation ``f`` a living unit in lane ``l``?  (:func:`_living` > 0, stopping at the first: the front
    units are usually alive.)"""
    for k in range(_at(fb, f), _at(fb, f + 1)):
        if _at(hp, _at(fu, k) * LANES + l) > 0:
            return True
    return False


@kernel_function
def _any_alive(alive, fmasks, side, f, l, n_words):
    """:func:`_any_living` from the alive bit masks: any of formation ``f``'s bits (``fmasks[f * n_words + w]``,
    ``_rows_living``) set in its ``side``'s words of lane ``l``; no branch on the units."""
    found = _ZERO
    for w in range(n_words):
        found |= _abit(alive, side, w, l, n_words) & _at(fmasks, f * n_words + w)
    return found != _ZERO


@kernel_function
def _lanes_any_alive(alive, fmasks, side, f, n_words, out):
    """``out[l]`` = :func:`_any_alive` in every lane: word by word, lane loops without branches."""
    for l in range(LANES):
        out[l] = 0
    for w in range(n_words):
        m = _at(fmasks, f * n_words + w)
        row = (side * n_words + w) * LANES
        for l in range(LANES):
            _put(out, l, _at(out, l) | np.int64(_at(alive, row + l) & m != _ZERO))


@kernel_function
def _size(hp, fu, fb, units, f, l):
    """Units alive, a war engine counting its starting DC (TP 3.3.3)."""
    size = 0
    for k in range(_at(fb, f), _at(fb, f + 1)):
        u = _at(fu, k)
        if _at(hp, u * LANES + l) > 0:
            size += _cell(units, u, U_COLS, U_DC)
    return size


@kernel_function
def _wound(hp, alive, units, u, l, n_words):
    """One point of damage to unit ``u``; True if it died."""
    i = u * LANES + l
    left = _at(hp, i) - 1
    hp[i] = left
    if left == 0:
        _clear_unit(alive, units, u, l, n_words, INT1)
        return True
    return False
