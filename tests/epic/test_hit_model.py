"""The Epic kernel's hit model (kernels/epic/hits.py, issue 39 §3): the save rule every save site calls and the break
test every step takes, each against the reference engine's rule for every value it can take (exact)."""
import itertools
from types import SimpleNamespace

import numpy as np
from numba import njit

from wargame_odds.analysis.epic.reference.breaks import fails_break_test
from wargame_odds.analysis.epic.shooting import AP, AT, MW, TK, save_targets
from wargame_odds.kernels.epic.breaks import _fails_break
from wargame_odds.kernels.epic.hits import (
    H_IC, H_LANCE, H_SNIPER, KIND_AP, KIND_AT, KIND_MW, KIND_NO_SAVE, KIND_TK, NO_ROLL, _save_targets)

KINDS = {AP: KIND_AP, AT: KIND_AT, MW: KIND_MW, TK: KIND_TK}


@njit(cache=True)
def _targets(cases, out):
    for i in range(cases.shape[0]):
        kind, flags, armour, cover, ra, worse = cases[i]
        out[i, 0], out[i, 1] = _save_targets(kind, flags, armour, cover, ra != 0, worse)


@njit(cache=True)
def _breaks(cases, out):
    for i in range(cases.shape[0]):
        out[i] = _fails_break(cases[i, 0], cases[i, 1], cases[i, 2] != 0)


def test_kind_codes_and_flags_are_distinct():
    """One kind code and one flag set: no two kinds share a value, each flag is its own bit."""
    from wargame_odds.kernels.epic import hits

    kinds = [v for k, v in vars(hits).items() if k.startswith("KIND_")]
    flags = [int(v) for k, v in vars(hits).items() if k.startswith("H_")]
    assert len(set(map(int, kinds))) == len(kinds) == 5
    assert all(f & (f - 1) == 0 for f in flags) and sum(flags) == sum(set(flags)) and len(flags) == 6


def test_save_rule_is_the_reference_rule():
    """TP 1.8.3, 1.9.6, 1.11, 2.1.11, 2.1.14, 2.2.4, 2.2.5, 2.2.6, 2.2.9 (turn §3.8): the first save and Reinforced
    Armour's re-roll of every kind of hit, with and without Sniper, Lance and Ignore Cover, on every armour save,
    cover save and Crossfire, are the reference engine's save rolls
    (``wargame_odds.analysis.epic.shooting.save_targets``)."""
    rows, expected = [], []
    for kind, sniper, lance, ic, armour, cover, ra, crossfire in itertools.product(
            KINDS, (False, True), (False, True), (False, True), range(2, NO_ROLL + 1), (None, 3, 4, 5, 6),
            (False, True), (False, True)):
        unit = SimpleNamespace(slot=SimpleNamespace(armour=armour, reinforced_armour=ra))
        hit = SimpleNamespace(kind=kind, sniper=sniper, lance=lance, ignore_cover=ic)
        expected.append(save_targets(unit, hit, cover, crossfire))
        flags = H_SNIPER * sniper + H_LANCE * lance + H_IC * ic
        rows.append((KINDS[kind], flags, armour, NO_ROLL if cover is None else cover, ra, int(crossfire) + sniper))
    cases = np.array(rows, np.int64)
    out = np.zeros((len(rows), 2), np.int64)
    _targets(cases, out)
    got = [[t for t in pair if t < NO_ROLL] for pair in out.tolist()]
    assert got == expected


def test_a_no_save_hit_has_no_save():
    """TP 1.13.4; spec §10.6 (a critical's "no save" splash): none, whatever the unit."""
    cases = np.array([(KIND_NO_SAVE, 0, armour, 3, ra, 0) for armour in range(2, 7) for ra in (0, 1)], np.int64)
    out = np.zeros((len(cases), 2), np.int64)
    _targets(cases, out)
    assert (out == NO_ROLL).all()


def test_break_test_is_the_reference_test():
    """TP 1.9.7, 1.12.8, 1.13.2, TP-SR They Shall Know No Fear: every BM count, size and TSKNF as the reference
    engine's ``fails_break_test``."""
    rows = list(itertools.product(range(0, 25), range(0, 12), (0, 1)))
    expected = [fails_break_test(SimpleNamespace(blast_markers=bm, size=size, tsknf=bool(t))) for bm, size, t in rows]
    out = np.zeros(len(rows), np.bool_)
    _breaks(np.array(rows, np.int64), out)
    assert out.tolist() == expected
