"""Issue 28 §3: a key that changes nothing gets a note (once), no note is printed twice, and a titan fight's headline
speaks in damage points and void shields."""
import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.decisions.api import cell_notes

WARBAND = open("analysis/scenarios/epic/assault_marines_vs_warband.toml", encoding="utf-8").read()


def _with(after: str, key: str) -> epic.EpicScenario:
    return epic.loads(WARBAND.replace(after, f"{after}\n{key}", 1))


def test_cover_no_better_than_the_armour_gets_a_note():
    """TP 1.12.5 / docs/epic-engine.md §2: a save is rolled on the better of armour and cover, so cover 4 on the 4+
    Nobz and 6+ Boyz of the Warband helps the Boyz (no note), while cover 4 on 4+ infantry only would change nothing."""
    assert not any("cover" in n for n in _with('name = "Warband"', "cover = 4").notes)
    boyz_4_up = WARBAND.replace('[units.boyz]\ntype = "INF"\narmour = 6', '[units.boyz]\ntype = "INF"\narmour = 4')
    defended = epic.loads(boyz_4_up.replace('name = "Warband"', 'name = "Warband"\ncover = 5', 1))
    notes = [n for n in defended.notes if "cover" in n]
    assert notes == ["formations[2] (Warband): cover = 5 changes nothing: its infantry's armour save (4+) is already "
                     "as good, and a unit saves on the better of the two"]
    attacker = _with('name = "Assault Detachment"', "cover = 4")
    assert any("only a defender's infantry takes cover saves" in n for n in attacker.notes)


def test_blast_markers_on_a_broken_formation_and_withdrawal_enemies_without_war_engines_get_notes():
    scenario = _with('name = "Warband"', "broken = true\nwithdrawal_enemies_within_15cm = 2")
    notes = scenario.notes
    assert any("blast_markers = 2 changes nothing: a broken formation holds no blast markers" in n for n in notes)
    assert any("withdrawal_enemies_within_15cm = 2 changes nothing" in n for n in notes)
    assert len(notes) == len(set(notes))


def test_a_note_shared_by_cells_is_given_once_with_the_cells_that_carry_it():
    notes = cell_notes([(f"option {i} vs Orks", ["both sides were wiped out in some trials"]) for i in range(7)]
                       + [("option 7 vs Orks", [])])
    assert notes == ["both sides were wiped out in some trials (" + ", ".join(f"option {i} vs Orks" for i in range(7))
                     + ")"]
    assert cell_notes([("a", ["x", "x"]), ("b", ["x"])]) == ["x"]


def test_a_titan_fight_speaks_in_damage_points():
    """The Warlord Titan (8 damage capacity, no void shields up, a reactor-breach critical): its headline gives the
    damage points it takes out of 8 and its chance of a critical hit, not "0.00 units"."""
    result = epic.simulate(epic.load("epic/warband_vs_warlord_titan"), trials=20_000, seed=4)
    lines = [line for line in result.headline() if line.startswith("Warlord Titan (defender)")]
    damage = next(line for line in lines if "damage points" in line)
    assert f"takes {result['formations', 'Warlord Titan', 'damage_taken_mean'].value:.2f} damage points of 8" in damage
    assert "critical hit" in damage and not any("units on average" in line for line in lines)
    assert result.to_dict()["war_engines"]["Warlord Titan"] == {"damage_capacity": 8, "shields": 0,
                                                                "every_unit": True}
