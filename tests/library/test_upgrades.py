"""NetEA upgrades: every row parsed or listed as not modelled, exact prices, the list's limits, enumeration."""
import json
from importlib.resources import files

import pytest

from wargame_odds.analysis.epic.library.upgrades import (
    Detachment, check_army, detachment, enumerate_detachments, not_modelled, price, upgrade_rows, upgrades)

CODEX = "netea:space-marine-codex-astartes"


def test_every_upgrade_row_is_parsed_or_listed_as_not_modelled():
    lists = json.loads(files("wargame_odds.analysis.epic.library").joinpath("netea", "army_lists.json")
                       .read_text("utf-8"))
    rows = [(lst["id"], r["type"]) for lst in lists for r in lst["formations"] if r["row_kind"] == "Upgrade"]
    assert len(rows) == 280 and len(set(rows)) == 280
    parsed = {k for k, v in upgrade_rows().items() if not isinstance(v, str)}
    curated = set(not_modelled())
    neither = [r for r in rows if r not in parsed and r not in curated]
    assert not neither, neither
    assert not parsed & curated, "a row both parsed and listed as not modelled"
    assert not curated - set(rows), "a curated row that no list has"
    assert all(e.why.strip() for e in not_modelled().values())


def test_per_pair_prices_use_the_cheapest_decomposition():
    assert [price(n, 75, 125, None) for n in range(1, 5)] == [75, 125, 200, 250]
    assert price(3, 50, None, None) == 150
    assert price(4, None, None, 75) == 75


def test_tactical_with_three_land_raiders_is_275_plus_125_plus_75():
    d = detachment(f"{CODEX}/tactical", {"Land Raiders": 3})
    assert d.points == 275 + 125 + 75
    assert d.name == "Tactical + 3 Land Raiders (475 pts)"


def test_tactical_captain_two_dreadnoughts_hunter_is_500():
    d = detachment(f"{CODEX}/tactical", {"Hunter": 1, "Commander": "Captain", "Dreadnoughts": 2})
    assert d.points == 275 + 50 + 100 + 75
    assert d.name == "Tactical + Captain + 2 Dreadnoughts + Hunter (500 pts)"
    data = d.formation_data()
    assert data["points"] == 500
    counts = {g["unit"]: g["count"] for g in data["units"]}
    assert counts == {"netea:tactical": 6, "netea:dreadnought": 2, "netea:hunter": 1}
    assert data["units"][0]["characters"] == ["netea:captain"]


def test_unknown_or_disallowed_upgrade_is_named():
    with pytest.raises(ValueError, match="not allowed or not modelled; allowed: Commander, Vindicators"):
        detachment(f"{CODEX}/assault", {"Land Raiders": 1})
    with pytest.raises(ValueError, match="no option 7"):
        detachment(f"{CODEX}/tactical", {"Land Raiders": 7})


def test_supreme_commander_is_once_per_army():
    opts = {o.label: o for o in upgrades("space-marine-codex-astartes")["Commander"].options}
    assert opts["Supreme Commander"].per_army and opts["Supreme Commander"].points == 100
    assert not opts["Captain"].per_army
    a = detachment(f"{CODEX}/tactical", {"Commander": "Supreme Commander"})
    b = detachment(f"{CODEX}/assault", {"Commander": "Supreme Commander"})
    check_army([a], 3000)
    with pytest.raises(ValueError, match="Supreme Commander \\(once per army\\) taken 2 times"):
        check_army([a, b], 3000)


def test_the_third_rule_refuses_a_warlord_at_2000_points():
    warlord = Detachment(f"{CODEX}/warlord", ())
    assert warlord.points == 825
    with pytest.raises(ValueError, match="up to a third \\(666 points\\)"):
        check_army([warlord], 2000)
    check_army([warlord], 3000)


def test_enumeration_filters_and_names():
    notes = []
    found = enumerate_detachments(CODEX, max_points=600, points=2000, caps={"Razorbacks": 3}, notes=notes)
    names = [d.name for d in found]
    assert len(names) == len(set(names))
    assert all(d.points <= 600 for d in found)
    assert "Tactical + Captain + 2 Dreadnoughts + Hunter (500 pts)" in names
    assert not any(n.startswith(("Thunderbolt", "Marauder", "0–1 Strike")) for n in names)
    assert any("never assault" in n for n in notes)
    tactical = [d for d in found if d.formation.endswith("/tactical")]
    # Commander 5 × Dreadnoughts 3 × Hunter 2 × Land Raiders 5 × Razorbacks 4 × Vindicators 3, within 600 points
    assert len(tactical) == sum(1 for d in tactical if d.points <= 600) > 100


def test_unbounded_upgrade_needs_a_cap():
    notes = []
    enumerate_detachments(CODEX, max_points=400, formations_filter=["Tactical"], notes=notes)
    assert any("'Razorbacks' left out" in n and "cap" in n for n in notes)
    with pytest.raises(ValueError, match="give it a cap"):
        enumerate_detachments(CODEX, formations_filter=["Tactical"], upgrades_filter=["Razorbacks"])


def test_owned_models_and_unknown_names():
    found = enumerate_detachments(CODEX, formations_filter=["Tactical"], upgrades_filter=["Land Raiders"],
                                  owned={"land-raider": 2})
    assert [d.points for d in found] == [275, 350, 400]
    with pytest.raises(ValueError, match="unknown army list"):
        enumerate_detachments("netea:nope")
    with pytest.raises(ValueError, match="formations: unknown 'Nope'"):
        enumerate_detachments(CODEX, formations_filter=["Nope"])
    with pytest.raises(ValueError, match="upgrades: unknown or not modelled 'Nope'"):
        enumerate_detachments(CODEX, upgrades_filter=["Nope"])


def test_a_library_formation_with_upgrades_is_a_force_the_other_commands_accept():
    from wargame_odds.analysis.decisions import api
    from wargame_odds.analysis.intake.errors import UserError

    force = {"name": "Tactical + 3 Land Raiders", "formations": [
        {"library": f"{CODEX}/tactical", "upgrades": {"Land Raiders": 3, "Commander": "Captain"}}]}
    model = api.matchup(force, "netea:ork-war-horde/warband")
    mine = [f for f in model.formations if f.side == "attacker"]
    assert [f.points for f in mine] == [275 + 200 + 50]
    with pytest.raises(UserError, match="formations\\[0\\].upgrades.*no option 9"):
        api.matchup({"formations": [{"library": f"{CODEX}/tactical", "upgrades": {"Land Raiders": 9}}]},
                    "netea:ork-war-horde/warband")


def test_a_choice_row_becomes_its_combinations():
    from wargame_odds.analysis.epic.library.upgrades import compositions

    predator = compositions(f"{CODEX}/predator")
    assert predator == [(("predator-annihilator", 4),), (("predator-annihilator", 3), ("predator-destructor", 1)),
                        (("predator-annihilator", 2), ("predator-destructor", 2)),
                        (("predator-annihilator", 1), ("predator-destructor", 3)), (("predator-destructor", 4),)]
    found = enumerate_detachments(CODEX, formations_filter=["Land Speeder"], upgrades_filter=["Typhoons"])
    # 6 compositions of Land Speeders and Tornados; Typhoons replace up to five Land Speeders (not Tornados)
    assert len(found) == sum(1 + speeders for speeders in range(6))
    d = next(d for d in found if d.name.startswith("Land Speeder [3 Land Speeders, 2 Land Speeder Tornados] + 2"))
    counts = {g["unit"]: g["count"] for g in d.formation_data()["units"]}
    assert counts == {"netea:land-speeder": 1, "netea:land-speeder-tornado": 2, "netea:land-speeder-typhoon": 2}
    assert d.points == 200 + 20
