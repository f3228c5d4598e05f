"""The Epic scenarios of the kernel's tests, as data: read by the tests and by ``benchmarks/fingerprint.py``.

``tests/epic/scenarios/<group>/<name>.toml`` is scenario ``name`` of ``tests/epic/test_<group>.py`` (its
``SCENARIOS``); ``<group>/other/<name>.toml`` a scenario that module runs outside that table (a forced
declaration, the scenario of a test of its own).  The scenarios two modules build from parameters (one shot at a
small target, a plain attack) are built here, with their cases.  This module imports nothing from pytest or from
a test module, so the fingerprint runs with the base install.
"""
from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

from wargame_odds.analysis.epic.model import EpicScenario

DATA = Path(__file__).resolve().parent / "scenarios"


def scenarios(group: str) -> dict[str, str]:
    """name -> TOML text of every scenario of ``tests/epic/test_<group>.py``'s ``SCENARIOS``."""
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted((DATA / group).glob("*.toml"))}


def other(group: str, name: str) -> str:
    """The TOML text of scenario ``name`` that ``tests/epic/test_<group>.py`` runs outside its ``SCENARIOS``."""
    return (DATA / group / "other" / f"{name}.toml").read_text(encoding="utf-8")


# -- one shot at a small target (tests/epic/test_turn_kernel_declarations.py; the cases of test_shooting_exact) ----

FORTRESS = {"type": "WE", "armour": 4, "cc": 4, "ff": 4, "damage_capacity": 3}
INFANTRY_4 = {"type": "INF", "armour": 4, "cc": 4, "ff": 4}
BOYZ = {"type": "INF", "armour": 6, "cc": 4, "ff": 6}
VEHICLE_6 = {"type": "AV", "armour": 6, "cc": 6, "ff": 5}
EXACT_CASES = {  # case: (the shooter's weapon line, the target's units front first, activation keys,
    #                 P(a target unit is destroyed), P(a unit destroyed or a war engine damaged: one more BM))
    "AP/AT by expected kills, not P(hit) x units": ({"ap": 4, "at": 4}, [(INFANTRY_4, 2), (VEHICLE_6, 1)], {},
                                                     F(5, 12), F(5, 12)),
    "AP/AT tie against a war engine goes to AT, at the war engine": (
        {"ap": 4, "at": 4}, [(INFANTRY_4, 1), (FORTRESS, 1)], {}, F(0), F(1, 4)),
    "AT declared at the others when they die more": ({"at": 4}, [(FORTRESS, 1), (VEHICLE_6, 1)], {}, F(5, 12),
                                                     F(5, 12)),
    "MW tie at the war engine": ({"mw": 2}, [(FORTRESS, 1), (BOYZ, 2)], {}, F(0), F(5, 6)),
    "MW at the others past reinforced armour": (
        {"mw": 2}, [({**FORTRESS, "special": ["reinforced-armour"]}, 1), (BOYZ, 2)], {}, F(5, 6), F(5, 6)),
    "MW at the others past standing void shields": (
        {"mw": 2}, [({**FORTRESS, "void_shields": 2}, 1), (BOYZ, 2)], {}, F(5, 6), F(5, 6)),
    "AP forced at the war engines: hits lost": ({"ap": 2}, [(FORTRESS, 1), (BOYZ, 2)],
                                                {"declare_at": "war_engines"}, F(0), F(0)),
    "AT forced at the war engines though the others die more": (
        {"at": 4}, [(FORTRESS, 1), (VEHICLE_6, 1)], {"declare_at": "war_engines"}, F(0), F(1, 4)),
}


def one_shot(weapon: dict, target: list[tuple[dict, int]], keys: dict) -> EpicScenario:
    """One INF gun with the weapon line ``weapon`` advancing and firing at ``target`` (profile, count), front
    first, with the activation's extra ``keys``."""
    units = {"gun": {**INFANTRY_4, "weapons": [{"name": "gun", "range": 45, **weapon}]}}
    groups = []
    for i, (profile, count) in enumerate(target):
        units[f"t{i}"] = profile
        groups.append({"unit": f"t{i}", "count": count})
    return EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1, "units": [{"unit": "gun", "count": 1}]},
                       {"name": "Target", "side": "defender", "initiative": 1, "units": groups}],
        "turn": [{"formation": "Shooter", "action": "advance", "target": "Target", **keys}]})


# -- a plain attack (tests/epic/test_turn_kernel_plain.py) ----------------------------------------------------------

PLAIN_TARGET_BOYZ = 6  # the Boyz (6+ save) a plain attack fires at
PLAIN_CASES = {  # case: (weapon line, action, activation keys, P(hit), exposed units)
    # 4+ at Advance (no modifier): up to 6 hits alternate between the 2 exposed Boyz, so hits wrap round onto a
    # unit already destroyed and are lost
    "round-robin over 2 exposed units, hits on the dead lost": ({"ap": 4}, "advance", {"exposed": 2}, F(1, 2), 2),
    # 6+ on a Double (−1): a 7+ roll, a 6 then 4+ (TP 1.9.5); every Boy exposed, each hit on its own unit
    "a 7+ to-hit roll: a 6, then 4+": ({"ap": 6}, "double", {}, F(1, 6) * F(1, 2), PLAIN_TARGET_BOYZ),
    # AP6+/AT6+ at infantry only: AP without a policy (§3.5), 5+ on Sustained Fire (+1)
    "AP and AT at infantry: AP, on Sustained Fire": ({"ap": 6, "at": 6}, "sustained_fire", {}, F(1, 3),
                                                     PLAIN_TARGET_BOYZ),
}


def plain_attack(weapon: dict, action: str, keys: dict) -> EpicScenario:
    """3 shooters with two shots each of the weapon line ``weapon``, taking ``action`` at 6 Boyz."""
    units = {"gun": {"type": "INF", "armour": 4, "cc": 4, "ff": 4,
                     "weapons": [{"name": "gun", "range": 45, "count": 2, **weapon}]},
             "boyz": {"type": "INF", "armour": 6, "cc": 4, "ff": 6}}
    return EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1,
                        "units": [{"unit": "gun", "count": 3}]},
                       {"name": "Target", "side": "defender", "initiative": 1,
                        "units": [{"unit": "boyz", "count": PLAIN_TARGET_BOYZ}]}],
        "turn": [{"formation": "Shooter", "action": action, "target": "Target", **keys}]})


def fingerprint_cases() -> dict[str, str | EpicScenario]:
    """Every scenario above, named as the fingerprint names it: ``tests/epic/test_<group>.py::<name>`` (the names
    from when the scenarios were written in the test modules), the built ones ``…::exact[<case>]``."""
    cases: dict[str, str | EpicScenario] = {}
    for folder in sorted(path for path in DATA.iterdir() if path.is_dir()):
        module = f"tests/epic/test_{folder.name}.py"
        for path in sorted([*folder.glob("*.toml"), *(folder / "other").glob("*.toml")]):
            cases[f"{module}::{path.stem}"] = path.read_text(encoding="utf-8")
    for case, (weapon, target, keys, *_) in EXACT_CASES.items():
        cases[f"tests/epic/test_turn_kernel_declarations.py::exact[{case}]"] = one_shot(weapon, target, keys)
    for case, (weapon, action, keys, *_) in PLAIN_CASES.items():
        cases[f"tests/epic/test_turn_kernel_plain.py::exact[{case}]"] = plain_attack(weapon, action, keys)
    return cases
