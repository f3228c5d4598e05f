"""The two shipped scenarios with library war engines (issue 14 §5): a Warhound pack assaulting an
Ork warband, Space Marines assaulting a Gargant.  They load from the NetEA library with their
shields, fields, criticals and titan-killer weapon, and the war-engine rules show in their results."""
from pathlib import Path

import wargame_odds.analysis.epic as epic

SCENARIOS = Path(__file__).resolve().parents[2] / "analysis" / "scenarios" / "epic"
WARHOUNDS = SCENARIOS / "warhound_pack_vs_ork_mob.toml"
GARGANT = SCENARIOS / "space_marines_vs_gargant.toml"


def test_warhound_pack_scenario_uses_the_library_titans():
    scenario = epic.load(WARHOUNDS)
    pack, warband = scenario.formations
    assert (pack.name, pack.points, warband.name, warband.points) == ("Warhound Pack", 500, "Warband", 200)
    warhound = scenario.units["netea:warhound-class-titan"]
    assert (warhound.damage_capacity, warhound.void_shields, warhound.critical.kind) == (3, 2, "random_move")


def test_gargant_scenario_uses_the_library_gargant_and_its_mega_choppa():
    scenario = epic.load(GARGANT)
    gargant = scenario.units["netea:gargant-ogbm"]
    assert (gargant.damage_capacity, gargant.power_fields, gargant.critical.kind) == (8, "D3+3", "end_phase_fire")
    assert [line.titan_killer for line in scenario.units["netea:mega-choppa"].extra_attacks] == ["D3"]


def test_void_shields_fall_in_the_assault_and_one_returns_in_the_end_phase_tp_sr_void_shields():
    """TP-SR Imperial Void Shields: the Orks' firefight hits knock shields down; each Warhound
    regains one in the end phase (4 shields at the start)."""
    pack = epic.simulate(epic.load(WARHOUNDS), trials=4000, seed=3, engine="reference")["formations", "Warhound Pack"]
    after_assault, after_end = pack["shields_after_assault_mean"], pack["shields_after_end_phase_mean"]
    assert after_assault.ci95[1] < 4 and after_end.value > after_assault.value
    assert pack["critical"].k > 0  # TP 3.2.3: a D6 per point of damage, critical on a 6


def test_power_fields_never_come_back_tp_sr_power_fields():
    """TP-SR Power Fields: knocked-down fields stay down, so the end phase leaves no more fields
    than the assault did; the Gargant's fires burn there (TP 3.2.3, its critical effect)."""
    gargant = epic.simulate(epic.load(GARGANT), trials=4000, seed=3, engine="reference")["formations", "Gargant"]
    assert gargant["shields_after_end_phase_mean"].value <= gargant["shields_after_assault_mean"].value
    assert gargant["damage_taken_mean"].value > gargant["damage_taken_assault_mean"].value  # fires in the end phase
