"""Step tests of ``kernels/epic/saves.py`` against ``analysis/epic/reference/saves.py``.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.compile import NO_ABILITIES, Abilities
from wargame_odds.analysis.epic.reference.saves import save_throw
from wargame_odds.analysis.epic.reference.state import MACRO_WEAPON, ORDINARY, Hit
from epic_helpers import exact_distribution
from wargame_odds.kernels.epic.hits import H_IC, H_LANCE, H_SNIPER, H_SUPPORT, KIND_AP, KIND_MW
from wargame_odds.kernels.epic.layout import (
    LANES)
from wargame_odds.kernels.epic.saves import _unsaved_lane, _we_saved_lane
from test_reference import formation

from epic_step_state import L, TROOPER, _close, _state


@njit(cache=True)
def _kernel_unsaved(rs, units, cls, u, reps):
    failed = 0
    for _ in range(reps):
        for l in range(LANES):
            f, _ = _unsaved_lane(rs, l, cls, u, units)
            failed += f
    return failed


@njit(cache=True)
def _kernel_we_saved(rs, units, wst, u, kind, how, reps):
    saved = 0
    for _ in range(reps):
        for l in range(LANES):
            s, _ = _we_saved_lane(rs, l, u, units, wst, kind, how, True, True)
            saved += s
    return saved



SAVE_CASES = {  # case: (defender profile, its fields, hit kind, sniper)
    "armour 4+": ({"type": "INF", "armour": 4, "cc": 4}, {}, ORDINARY, False),
    "cover 3+ on armour 5+": ({"type": "INF", "armour": 5, "cc": 4}, {"cover": 3}, ORDINARY, False),
    "reinforced armour re-rolls on armour": ({"type": "AV", "armour": 4, "cc": 4, "special": ["reinforced-armour"]},
                                             {}, ORDINARY, False),
    "RA re-roll of a failed cover save, sniper": ({"type": "INF", "armour": 5, "cc": 4,
                                                   "special": ["reinforced-armour"]}, {"cover": 3}, ORDINARY,
                                                  True),
    "invulnerable after a failed save": ({"type": "INF", "armour": 4, "cc": 4, "special": ["invulnerable-save"]},
                                         {}, ORDINARY, False),
    "macro-weapon: RA only": ({"type": "AV", "armour": 4, "cc": 4, "special": ["reinforced-armour"]}, {},
                              MACRO_WEAPON, False),
    "macro-weapon: no save": ({"type": "INF", "armour": 3, "cc": 4}, {"cover": 4}, MACRO_WEAPON, False),
    "macro-weapon sniper, RA and invulnerable": ({"type": "AV", "armour": 4, "cc": 4,
                                                  "special": ["reinforced-armour", "invulnerable-save"]}, {},
                                                 MACRO_WEAPON, True),
}


@pytest.mark.parametrize("case", sorted(SAVE_CASES))
def test_assault_save_matches_the_reference_tp_1_9_6_2_1_6_2_1_11(compile_epic, case):
    """TP 1.9.6, 2.1.6, 2.1.11, 2.1.14, 2.2.6 (spec §2): the kernel's save of one hit (_unsaved_lane) fails as often as
    the reference engine's ``save_throw`` (exact over its dice), at 5σ over 128 × 2,000 hits, seed fixed."""
    profile, fields, kind, sniper = SAVE_CASES[case]
    compiled = compile_epic({"a": TROOPER, "d": profile}, [formation("A", "attacker", [("a", 1, "bc")]),
                                                         formation("D", "defender", [("d", 1, "bc")], **fields)])
    slot = compiled.units[1]
    p_saved = exact_distribution(lambda rng: save_throw(rng, slot, Hit(kind, sniper))).get(True, F(0))
    tb, st = _state(compiled, seed=3)
    cls = {ORDINARY: 0, MACRO_WEAPON: 1}[kind] + 3 * sniper
    reps = 2000
    failed = _kernel_unsaved(st.rs, tb.units, cls, slot.index, reps)
    assert _close(failed, reps * L, 1 - p_saved), (case, failed / (reps * L), float(1 - p_saved))


WE_SAVE_CASES = {  # case: (profile, its fields, hit kind, abilities, sniper, supporting fire)
    "holofield 3+ (sniper 4+)": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3,
                                  "special": ["holofield"]}, {}, ORDINARY, NO_ABILITIES, True, False),
    "knight shield 4+, not against supporting fire": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3,
                                                       "special": ["knight-shield"]}, {}, ORDINARY,
                                                      NO_ABILITIES, False, True),
    "lance: no RA re-roll": ({"type": "WE", "armour": 4, "cc": 4, "damage_capacity": 3,
                              "special": ["reinforced-armour"]}, {}, ORDINARY, Abilities(lance=True), False,
                             False),
    "ignore cover": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3}, {"cover": 3}, ORDINARY,
                     Abilities(ignore_cover=True), False, False),
    "living metal 4+ after a macro-weapon hit": ({"type": "WE", "armour": 5, "cc": 4, "damage_capacity": 3,
                                                  "special": ["living-metal"]}, {}, MACRO_WEAPON,
                                                 Abilities(macro_weapon=True), False, False),
}


@pytest.mark.parametrize("case", sorted(WE_SAVE_CASES))
def test_war_engine_rules_save_matches_the_reference_spec_10_3(compile_epic, case):
    """Spec §10.3 (TP 2.1.6, 2.1.11, 2.2.5; TP-SR Eldar, Knight, Necron Technology): the war-engine rules' save of
    one hit (_we_saved_lane) saves as often as the reference's ``save_throw`` (exact), at 5σ, seed fixed."""
    profile, fields, kind, abilities, sniper, support = WE_SAVE_CASES[case]
    compiled = compile_epic({"a": TROOPER, "d": profile}, [formation("A", "attacker", [("a", 1, "bc")]),
                                                         formation("D", "defender", [("d", 1, "bc")], **fields)])
    slot = compiled.units[1]
    hit = Hit(kind, sniper, supporting=support, abilities=abilities)
    p_saved = exact_distribution(lambda rng: save_throw(rng, slot, hit)).get(True, F(0))
    tb, st = _state(compiled, seed=4)
    how = (H_SNIPER * sniper + H_LANCE * abilities.lance + H_IC * abilities.ignore_cover + H_SUPPORT * support)
    wst = np.zeros(16 * tb.units.shape[0] * L, np.int32)  # war-engine state: not degraded
    reps = 2000
    saved = _kernel_we_saved(st.rs, tb.units, wst, slot.index, {ORDINARY: KIND_AP, MACRO_WEAPON: KIND_MW}[kind],
                             how, reps)
    assert _close(saved, reps * L, p_saved), (case, saved / (reps * L), float(p_saved))


# -- break test (exact) ----------------------------------------------------------------------------------------
