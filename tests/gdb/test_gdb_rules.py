"""Clause-level checks of the reference engine's deterministic steps and the rule switches."""
from fractions import Fraction as F

import pytest
from gdb_helpers import exact, make, slot

from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.gdb import reference as ref


def test_half_move_step_1():
    """§2.1 step 1: the charger advances half its charge move; fire is measured from there (§2.2)."""
    model = make(charger={"charge_move": 12, "distance": 10})
    assert ref.half_move(model) == (4, 6, False)


def test_half_distance_variant():
    """§2.1 step 1 wording variant: half the distance to the target (rules.half_move)."""
    model = make(charger={"charge_move": 12, "distance": 10}, rules={"half_move": "half_distance"})
    assert ref.half_move(model) == (5, 5, False)


def test_close_start_q_a3():
    """Q-A3: starting within half the charge move, stop one base depth short; fire at the shortest band."""
    model = make(charger={"charge_move": 12, "distance": 5}, target={"reaction": "fire"})
    d_half, moved, close = ref.half_move(model)
    assert (d_half, moved, close) == (1, 4, True)
    (f, band, _), = ref.firers(model, d_half, "fire", close)
    assert band.name == "short"


def test_fire_band_by_half_way_range_2_2():
    """§2.2: the band is set by the range at the half-way point; long range halves casualties."""
    model = make(charger={"charge_move": 4, "distance": 4}, target={"reaction": "fire"})
    assert ref.range_band(model, "infantry", 6).name == "short"
    assert ref.range_band(model, "infantry", 6.5).name == "long"
    assert ref.range_band(model, "infantry", 12.5) is None
    assert ref.range_band(model, "cavalry", 1) is None
    f = ref.Firer("x", "target", "infantry", "line", "line", 20, True, False, 7)
    short, long_ = ref.range_band(model, "infantry", 3), ref.range_band(model, "infantry", 7)
    assert ref.fire_casualties(model, f, short, 12) == 4       # 20 figures x 20 %
    assert ref.fire_casualties(model, f, long_, 12) == 2       # halved at long range


def test_fire_modifiers_2_2():
    """§2.2: -2 for firing last turn, -4 at skirmishers."""
    model = make(charger={"formation": "skirmish"})
    f = ref.Firer("x", "support", "infantry", "line", "line", 20, True, True, 3)
    assert dict(ref.fire_modifier(model, f)) == {"fired last turn": -2, "at skirmishers": -4}


def test_cannot_fire_loses_fire_q_a4():
    """Q-A4: a target that does not or cannot fire now has no fire against the chargers (no dice)."""
    for target, charger in (({"reaction": "stand"}, {}), ({"reaction": "fire"}, {"position": "flank"}),
                            ({"reaction": "fire", "arm": "cavalry"}, {"charge_move": 20, "distance": 20})):
        model = make(charger=charger, target=target)
        assert slot(model, exact(model), "casualties")[0] == 1


def test_form_square_time_q_a5():
    """Q-A5: a formation change is allowed only if it fits in the chargers' remaining time."""
    ok = make(charger={"arm": "cavalry", "charge_move": 18, "distance": 16}, target={"reaction": "form_square"})
    assert ref.reaction(ok, ref.half_move(ok)[0])[0] == "form_square"         # 7/18 >= 0.3
    late = make(charger={"arm": "cavalry", "charge_move": 18, "distance": 14},
                target={"reaction": "form_square", "fallback_reaction": "fire"})
    assert ref.reaction(late, ref.half_move(late)[0])[0] == "fire"            # 5/18 < 0.3
    own = make(charger={"arm": "cavalry", "charge_move": 18, "distance": 14},
               target={"reaction": "form_square", "form_square_time": 0.25})
    assert ref.reaction(own, ref.half_move(own)[0])[0] == "form_square"


def test_square_bonus_while_forming_switch():
    """Q-A5 / step 5 switch: the +2 square-against-cavalry counts while forming only if switched on."""
    args = dict(charger={"arm": "cavalry", "quality": "guard", "charge_move": 18, "distance": 16},
                target={"reaction": "form_square"}, tables={"tables.morale.quality.guard": 20})
    off, on = make(**args), make(**args, rules={"square_bonus_while_forming": True})
    assert slot(off, exact(off), "defender")[0] == F(7, 12)
    assert slot(on, exact(on), "defender")[0] == F(5, 6)


def test_supporting_fire_eligibility_q_a6():
    """Q-A6: supporters fire only at their priority target and never when countercharging."""
    sup = {"arm": "infantry", "quality": "line", "formation": "line", "strength": 20, "range": 4}
    model = make(supports=[sup, {**sup, "priority_target": False}, {**sup, "countercharge": True}])
    fire = [band is not None for _, band, _ in ref.firers(model, 4, "stand")]
    assert fire == [False, True, False, False]


@pytest.mark.parametrize("reaction,timing,expected", [
    ("stand", "after_reaction", "flank"), ("turn_to_face", "after_reaction", "front"),
    ("turn_to_face", "at_declaration", "flank")])
def test_flank_bonus_timing_q_a7(reaction, timing, expected):
    """Q-A7: the flank bonus counts only if the charger is still in the flank zone at the test."""
    model = make(charger={"position": "flank"}, target={"reaction": reaction},
                 rules={"flank_bonus_timing": timing})
    assert ref.position_at_test(model, reaction) == expected
    got = slot(model, exact(model), "charger")[0]
    assert got == (F(13, 18) if expected == "flank" else F(7, 12))           # §5.3 +1 vs 0


@pytest.mark.parametrize("rule,distance,caught,escaped", [
    ("if_reached", 9, "1/4", "1/6"), ("if_reached", 10, "0", "5/12"), ("always", 10, "5/12", "0"),
    ("never", 9, "0", "5/12")])
def test_retreating_defender_caught_q_a8(rule, distance, caught, escaped):
    """Q-A8: the charger finishes its move and contacts a retreating defender it can reach."""
    # move 12: half move 6 leaves distance - 6 and 6 of move; the defender goes 3 (retreat) or 4.5
    # (rout) now; defender at -2 (§5.3): RETREAT 1/4, ROUT 1/6
    model = make(charger={"quality": "guard", "distance": distance}, target={"quality": "militia"},
                 rules={"catch_retreating": rule}, tables={"tables.morale.quality.guard": 20})
    out = dict(zip(ref.OUTCOMES, slot(model, exact(model), "outcome")))
    assert (out["gives_way_caught"], out["gives_way_escaped"]) == (F(caught), F(escaped))


def test_countercharge_arms_2_6():
    """§2.6: only cavalry countercharges by default; rules.countercharge_arms widens it."""
    with pytest.raises(UserError, match="target.reaction"):
        make(target={"reaction": "countercharge"})
    model = make(target={"reaction": "countercharge"}, rules={"countercharge_arms": ["cavalry", "infantry"]})
    out = dict(zip(ref.OUTCOMES, slot(model, exact(model), "outcome")))
    assert out["countercharge_meets_charge"] == F(7, 12) * F(7, 12)
    assert out["contact_steady"] == 0


def test_retreat_passes_through_friends_2_4():
    """§2.4: a retreating/routing charger moves half its move now; friends it passes become disordered."""
    model = make(charger={"quality": "militia", "friends_behind": [2.0, 4.0]})   # retreat 3 now, rout 4.5
    probs = exact(model)
    ch = dict(zip(ref.CHARGER_KEYS, slot(model, probs, "charger")))
    fr = slot(model, probs, "friends_disordered")
    assert (fr[1], fr[2]) == (ch["RETREAT"], ch["ROUT"])
    end = dict(zip(ref.END_STATES, slot(model, probs, "charger_end")))
    assert (end["retreating"], end["routing"], end["disordered"]) == (ch["RETREAT"], ch["ROUT"], ch["WAVER"])


def test_casualty_modifier_units_q_a10():
    """Q-A10: loss modifier per figure (default) or per step of percent of strength."""
    model = make(charger={"strength": 20})
    assert dict(ref.charger_modifiers(model, 3, "front"))["3 casualties this phase"] == -3
    pct = make(charger={"strength": 20}, tables={"tables.morale.casualties.unit": "percent",
                                                 "tables.morale.casualties.step": 10})
    assert dict(ref.charger_modifiers(pct, 3, "front"))["3 casualties this phase"] == -1      # 15 % -> 1 step


def test_defender_modifiers_2_3():
    """§2.3 defender_mods: cover, general, support, disorder, prior losses, flank, square v cavalry."""
    model = make(charger={"arm": "cavalry", "charge_move": 18},
                 target={"formation": "square", "in_cover": True, "general_attached": True, "formed": False,
                         "formed_support_behind": True, "casualties_this_phase": 2})
    assert sum(v for _, v in ref.defender_modifiers(model, "front", "stand")) == 1 + 1 + 1 - 1 - 2 + 2
