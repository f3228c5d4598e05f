"""NetEA war engines, shields, fields, critical hits and weapon abilities in the library conversion
(issue 14 §3; docs/epic-engine.md §10; epic-shooting §1, §7.5, §7.6)."""
import dataclasses

import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.epic.profiles import CriticalEffect
from wargame_odds.analysis.epic.library.formations import formation_status, formations
from wargame_odds.analysis.epic.library.netea import convert, criticals, mapping, units

CRITICAL_UNITS = {uid: u["critical_hit_effect"] for uid, u in units().items() if u["critical_hit_effect"]}


def test_every_critical_text_is_classified_once_tp_3_2_3():
    """TP 3.2.3: each of the 48 datasheet texts (108 units) has one entry naming exactly its units."""
    assert len(CRITICAL_UNITS) == 108 and len(criticals()) == len(set(CRITICAL_UNITS.values())) == 48
    for text, entry in criticals().items():
        assert sorted(entry["units"]) == sorted(uid for uid, t in CRITICAL_UNITS.items() if t == text), text
        assert ("effect" in entry) != ("unsupported" in entry), text
        if "effect" in entry:
            CriticalEffect.model_validate(entry["effect"])


@pytest.mark.parametrize("unit_id", sorted(CRITICAL_UNITS))
def test_every_war_engine_with_a_critical_text_converts_it_tp_3_2_3(unit_id):
    """TP 3.2.3: a convertible WE carries its classified effect; otherwise the reason is reported."""
    conv = convert(unit_id)
    entry = criticals()[CRITICAL_UNITS[unit_id]]
    if conv.profile is None:  # an aircraft war engine that never lands
        assert [u.rule for u in conv.unsupported] == ["AC/WE"]
    elif "unsupported" in entry:
        assert ("critical-hit effect", entry["unsupported"]) in [(u.rule, u.reason) for u in conv.unsupported]
    else:
        assert conv.profile.critical == CriticalEffect.model_validate(entry["effect"])


@pytest.mark.parametrize("unit_id, kind, splash_hit_on, extra", [
    ("warlord-class-titan", "end_phase_breach", 4, {}),        # plasma reactor breach, 5 cm on 4+
    ("reaver-class-titan", "end_phase_breach", 5, {}),
    ("gargant", "end_phase_fire", None, {}),
    ("baneblade", "destroyed_plus_effect", 6, {}),
    ("deathstrike-silo", "destroyed_plus_effect", 4, {"splash_macro_weapon": True}),  # "a MW4+ hit"
    ("bloodthirster", "destroyed_plus_effect", 6, {"splash_no_save": True}),  # summoned units destroyed on 6+
    ("thunderhawk-gunship", "destroyed_with_passengers", None, {}),
    ("warhound-class-titan", "random_move", None, {"damage": 1}),
    ("bastion", "extra_damage", None, {"damage": 1}),
    ("manta", "degrade_then_escalate", None, {"loses": ["deflector-shield"], "then": "extra_damage"}),
    ("revenant-titan", "degrade_then_escalate", None, {"loses": ["holofield"], "then": "destroyed"}),
    ("leviathan", "degrade_then_escalate", 4, {"damage": 1, "then": "destroyed_plus_effect"}),
    # further D6: 6 a point, 1 a splash
    ("hierodule-bio-titan", "extra_damage", 6, {"damage": 1, "further_damage_on": 6}),
    ("land-train", "lose_character", None, {}),  # a random battlecar removed, destroyed without one
    ("abattoir", "self_hit", 4, {"self_hits": 1, "self_hit_on": 4, "splash_titan_killer": True}),
    ("aeonic-orb", "self_hit", 4, {"self_hits": 3, "self_hit_on": 5, "splash_macro_weapon": True}),  # 3 BP MW barrage
])
def test_critical_kinds_of_epic_shooting_7_6(unit_id, kind, splash_hit_on, extra):
    """epic-shooting §7.6: the texts read as the kinds and parameters of docs/epic-engine.md §10.4."""
    crit = convert(unit_id).profile.critical
    assert (crit.kind, crit.splash_hit_on) == (kind, splash_hit_on)
    for key, value in extra.items():
        assert getattr(crit, key) == value


def test_shields_and_fields_tp_sr_void_shields_power_fields_shadowfields():
    """TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology: the datasheet values."""
    assert convert("warlord-class-titan").profile.void_shields == 6
    assert convert("warhound-class-titan").profile.void_shields == 2
    assert convert("gargant").profile.power_fields == "D3+3"
    assert convert("great-gargant").profile.power_fields == "D6+6"
    assert convert("mekboy-speedsta").profile.power_fields == "D3"  # an AV with power fields
    assert convert("tormentor-titan").profile.shadowfields == 3
    car = convert("fire-shield-battlecar")  # a CH adding DC and shields to its host Land Train
    assert car.ok and (car.profile.type, car.profile.damage_capacity, car.profile.void_shields) == ("CH", 1, 3)


def test_titan_killer_dice_lance_ignore_cover_and_own_attack_abilities_tp_2_2():
    """TP 2.2.5, 2.2.6, 2.2.9, TP-SR Eldar Technology: abilities of extra-attack lines and own attacks."""
    krusha = convert("mega-gargant").profile.extra_attacks
    assert any(line.titan_killer == "D3" and line.count == "D3" for line in krusha)
    assert [line.titan_killer for line in convert("cyclops").profile.extra_attacks] == ["D6"]
    assert [line.titan_killer for line in convert("bloodthirster").profile.extra_attacks] == [True]  # TK (1)
    assert convert("fire-dragons").profile.ff_abilities.macro_weapon  # MW small arms, no extra attacks
    assert convert("shining-spears").profile.cc_abilities.lance
    assert convert("predator-incinerator").profile.ff_abilities.ignore_cover
    corruption = convert("great-unclean-one").profile.extra_attacks
    assert any(line.ignore_cover and line.range == "15cm" for line in corruption)


def test_knight_lances_only_when_the_knights_engage_tp_sr_knight_technology():
    """TP-SR Knight Technology: Power and Shock Lances are used only after an engage action."""
    lines = convert("knight-paladin").profile.extra_attacks
    assert [line.engage_only for line in lines if line.range == "15cm"] == [True]  # Shock Lance
    assert [line.engage_only for line in lines if line.range == "bc"] == [False]  # chainsword


def test_necron_automaton_automata_are_kept_tp_sr():
    """TP-SR Necron Technology, Automaton, Automata: modelled rules, kept on the profile."""
    for unit_id, rule in [("necron-warriors", "necron"), ("crusader-robot", "automaton"),
                          ("tarantula-platform", "automata")]:
        conv = convert(unit_id)
        assert conv.ok and rule in conv.profile.special


def test_landed_aircraft_fight_as_war_engines_tp_4_1_1():
    """TP 4.1.1, 4.2.5: a transport aircraft with CC/FF values is assaulted only once landed."""
    landed = convert("thunderhawk-gunship")
    assert landed.ok and (landed.profile.type, landed.profile.speed, landed.profile.damage_capacity) == ("WE", 0, 2)
    flying = convert("marauder-heavy-bomber")  # no CC or FF: an aircraft war engine in flight (docs/epic-turn.md §9)
    assert flying.ok and (flying.profile.type, flying.profile.aircraft, flying.profile.damage_capacity) == (
        "WE", "bomber", 2)


def test_rules_without_an_assault_effect_are_ignored_with_their_reason():
    """TP-SR Xeno-Sociology, Daemonic Focus, Augmented Summoning: no step of the assault or rally."""
    for unit_id, rule in [("hive-tyrant", "synapse-2"), ("termagants", "brood-1"),
                          ("bloodthirster", "daemonic-focus"), ("demagogue", "augmented-summoning-2d3")]:
        conv = convert(unit_id)
        assert conv.ok and (rule, mapping()["ignored_rules"][rule]) in conv.ignored


def test_library_coverage_issue_14():
    """Issue 14 §3: every unit converts (at least 545 of 559) except the 6 drop pods and drills
    (docs/library.md); aircraft and spacecraft convert as fliers (docs/epic-turn.md §9)."""
    status = {uid: convert(uid) for uid in units()}
    refused = {uid for uid, c in status.items() if c.profile is None}
    assert {units()[uid]["type"] for uid in refused} == set(mapping()["unsupported_types"]) == {"Special"}
    assert len(refused) == 6
    missing = {uid: sorted({u.rule for u in c.unsupported}) for uid, c in status.items()
               if not c.ok and c.profile is not None}
    assert missing == {}
    assert sum(c.ok for c in status.values()) == 559 - 6 == 553 >= 545


def _formations_with_war_engines():
    # aircraft in flight never assault: tests/epic/test_aircraft_turn.py
    return sorted(ref for ref, f in formations().items()
                  if formation_status(f) == "ok" and any(units()[u]["type"] in ("WE", "AC/WE") for u, _ in f.units)
                  and not any(convert(u).profile.aircraft for u, _ in f.units))


ATTACKER = """
system = "epic"
[units.boy]
type = "INF"
armour = 6
cc = 4
ff = 6
[[formations]]
name = "Boyz"
side = "attacker"
initiative = 3
army_rules = []
units = [{ unit = "boy", count = 8, engaged = "bc" }, { unit = "boy", count = 4, engaged = "ff" }]
[[formations]]
library = "REF"
side = "defender"
"""


def test_war_engine_formations_load_and_run_issue_14():
    """Issue 14 §3: every buildable library formation with a war engine (titans included) loads and
    runs (reference engine); its war-engine results are reported with their intervals (§10.9)."""
    refs = _formations_with_war_engines()
    assert len(refs) >= 100 and any("titan" in formations()[r].text.lower() for r in refs)
    for ref in refs:
        result = epic.simulate(epic.loads(ATTACKER.replace("REF", ref)), trials=30, seed=1, engine="reference")
        form = formations()[ref]
        capacity = sum(n * (units()[u]["damage_capacity"] or 0) for u, n in form.units)
        states = [result["formations", form.name, key].k for key in ("destroyed", "broken_after_end_phase",
                                                                      "unbroken_after_end_phase")]
        assert sum(states) == result.trials, ref
        if "damage_taken_mean" in result["formations", form.name]:  # a WE with a §10 key
            damage = result["formations", form.name, "damage_taken_mean"]
            assert 0 <= damage.ci95[0] <= damage.value <= damage.ci95[1] and damage.value <= capacity, ref


def test_formation_search_names_units_it_cannot_model():
    """A formation with a unit the engine cannot convert (here a drop pod added to a buildable one)
    says which unit and why; a formation of aircraft war engines is ok (docs/epic-turn.md §9)."""
    harbingers = formations()["netea:chaos-space-marine-black-legion/harbinger"]
    assert formation_status(harbingers) == "ok"
    with_pod = dataclasses.replace(harbingers, units=harbingers.units + (("chaos-drop-pod", 1),))
    assert formation_status(with_pod).startswith("cannot model: netea:chaos-drop-pod (Special")
