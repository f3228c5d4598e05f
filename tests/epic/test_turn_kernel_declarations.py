"""The default shooting policies at mixed targets on the Numba kernel (kernels/epic/shooting.py) against the reference.

docs/epic-turn.md §3.5 (TP 1.9.5, 3.2.1): at a formation of war engines and other units every weapon is declared,
before any dice, "at the war engines" or "at the others" (``declare_at``: "auto", the default policy, or forced),
its hits going only to that group and lost when none of the group can take them; the AP/AT choice takes the type
with the larger expected kills (damage on war engines), ties to AT against a formation with a war engine.  Each
scenario runs on the kernel (8,000 trials) and the reference engine (1,500 trials) under both policy values, and
every reported quantity is compared at 5 standard errors (``epic_helpers.compare_results``), with fixed seeds.
"""
from __future__ import annotations

from fractions import Fraction as F
from math import sqrt

import pytest

from analysis import epic
from analysis.epic.model import EpicScenario
from epic_helpers import SIGMAS, compare_results

KERNEL_TRIALS = 8_000
REFERENCE_TRIALS = 1_500

SCENARIOS = {
    # Devastators (AP5+/AT6+ missile launchers: the AP/AT choice per weapon) on Sustained Fire, then tanks in
    # crossfire (lascannons AT5+, a heavy bolter AP5+, a demolisher MW4+) at a Battlefortress (DC 3, no save
    # against the demolisher) with ten 6+ Boyz; forced: the Devastators at the war engine (their AP hits lost),
    # the tanks at the Boyz (their AT hits lost, the demolisher kills Boyz); the BM for coming under fire always
    "battlefortress_and_boyz": """
system = "epic"
title = "Devastators and tanks at a Battlefortress with its Boyz"
[units.devastator]
type = "INF"
armour = 4
cc = 5
ff = 3
weapons = [{ name = "missile launcher", count = 2, range = 45, ap = 5, at = 6 }]
[units.predator]
type = "AV"
armour = 4
cc = 6
ff = 4
weapons = [{ name = "lascannon", count = 2, range = 45, at = 5 }, { name = "heavy bolter", range = 30, ap = 5 }]
[units.vindicator]
type = "AV"
armour = 4
cc = 6
ff = 4
weapons = [{ name = "demolisher", range = 30, mw = 4 }]
[units.battlefortress]
type = "WE"
armour = 4
cc = 4
ff = 5
damage_capacity = 3
critical = "extra_damage"
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[[formations]]
name = "Devastators"
side = "attacker"
initiative = 1
units = [{ unit = "devastator", count = 4 }]
[[formations]]
name = "Tanks"
side = "attacker"
initiative = 1
units = [{ unit = "predator", count = 2 }, { unit = "vindicator", count = 1 }]
[[formations]]
name = "Warband"
side = "defender"
initiative = 2
units = [{ unit = "battlefortress", count = 1 }, { unit = "boyz", count = 10 }]
[[turn]]
formation = "Devastators"
action = "sustained_fire"
target = "Warband"
[[turn]]
formation = "Tanks"
action = "advance"
target = "Warband"
crossfire = true
""",
    # Shadowswords (titan killer D3, MW3+; a heavy bolter AP5+) at a Guard company with a Knight (DC 3, a void
    # shield, reinforced armour) in cover (4+ cover save for the Guard): by default the titan killers go at the
    # Guard (5/6 expected kills > (5/6 × 2 − 1) expected damage); forced at the war engines they go at the
    # Knight, its shield first, and the heavy bolters' hits are lost; then the company charges Tacticals on
    # overwatch, whose fire at the mixed charger (the default policies: missile launchers AP5+/AT6+) comes
    # before the assault
    "overwatch_at_a_mixed_charger": """
system = "epic"
title = "A Shadowsword at a Knight and its Guard, who charge through Tactical overwatch"
[units.shadowsword]
type = "AV"
armour = 4
cc = 6
ff = 5
weapons = [{ name = "volcano cannon", range = 90, mw = 3, titan_killer = "D3" },
           { name = "heavy bolter", range = 30, ap = 5 }]
[units.knight]
type = "WE"
armour = 4
cc = 3
ff = 4
damage_capacity = 3
void_shields = 1
special = ["reinforced-armour"]
critical = "extra_damage"
[units.guard]
type = "INF"
armour = 5
cc = 5
ff = 5
[units.tactical]
type = "INF"
armour = 4
cc = 4
ff = 4
weapons = [{ name = "missile launcher", range = 45, ap = 5, at = 6 }]
[[formations]]
name = "Battery"
side = "attacker"
initiative = 1
units = [{ unit = "shadowsword", count = 2 }]
[[formations]]
name = "Tacticals"
side = "attacker"
initiative = 1
overwatch = true
units = [{ unit = "tactical", count = 5, engaged = "bc" }]
[[formations]]
name = "Company"
side = "defender"
initiative = 1
units = [{ unit = "knight", count = 1, engaged = "bc" }, { unit = "guard", count = 4, engaged = "bc" }]
[[turn]]
formation = "Battery"
action = "sustained_fire"
target = "Company"
cover = true
cover_save = 4
[[turn]]
formation = "Company"
action = "engage"
target = "Tacticals"
overwatch_fire = ["Tacticals"]
""",
}

# the forced declarations of each scenario (the default, "auto", is the scenario as written)
FORCED = {
    "battlefortress_and_boyz": [('target = "Warband"\n[[turn]]',
                                 'target = "Warband"\ndeclare_at = "war_engines"\n[[turn]]'),
                                ("crossfire = true\n", 'crossfire = true\ndeclare_at = "others"\n')],
    "overwatch_at_a_mixed_charger": [("cover_save = 4\n", 'cover_save = 4\ndeclare_at = "war_engines"\n')],
}


def _text(name: str, declaration: str) -> str:
    text = SCENARIOS[name]
    if declaration == "forced":
        for old, new in FORCED[name]:
            assert text.count(old) == 1
            text = text.replace(old, new)
    return text


@pytest.mark.parametrize("declaration", ["auto", "forced"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_we_declaration_tp_3_2_1_and_10_3_kernel_matches_reference(name, declaration):
    """Kernel v reference at 5σ on every quantity, the ``turn`` section included, under the default policies
    and forced declarations (TP 1.9.5, 3.2.1; docs/epic-turn.md §3.5), once the kernel's results show the
    attacks doing something."""
    scenario = epic.loads(_text(name, declaration), name)
    seed = 47_000 + 2 * sorted(SCENARIOS).index(name) + (declaration == "forced")
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    assert kernel.to_dict()["turn"]["1"]["kills_mean"] > 0.2, "the first attack hardly kills"
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


# -- the kernel against exact values: one shot at a small target (the cases of test_shooting_exact) ------------

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


def _close(measured: float, p: F, trials: int) -> bool:
    """A Bernoulli mean within 5 binomial standard errors of ``p`` (exactly ``p`` when it is 0 or 1)."""
    if p in (0, 1):
        return measured == p
    return abs(measured - float(p)) <= SIGMAS * sqrt(float(p * (1 - p)) / trials)


def _one_shot(weapon: dict, target: list[tuple[dict, int]], keys: dict) -> EpicScenario:
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


@pytest.mark.parametrize("case", sorted(EXACT_CASES))
def test_we_declaration_tp_3_2_1_and_10_3_kernel_matches_exact_values(case):
    """The kernel's policies on one shot (TP 1.9.5, 3.2.1; docs/epic-turn.md §3.5) against the exact values of
    tests/epic/test_shooting_exact.py: P(a target unit is destroyed), and the BMs placed, 1 for coming under
    fire (also when the hits are lost, TP-FAQ Place Blast Marker) plus 1 for a kill or a damage point (TP 1.9.4,
    3.2.2), each within 5 binomial standard errors (exact where the value is 0)."""
    weapon, target, keys, p_kill, p_harm = EXACT_CASES[case]
    trials = 20_000
    turn = epic.simulate(_one_shot(weapon, target, keys), trials=trials, seed=5).to_dict()["turn"]["1"]
    assert _close(turn["kills_mean"], p_kill, trials), (case, turn["kills_mean"])
    assert _close(turn["blast_markers_placed_mean"] - 1, p_harm, trials), (case, turn["blast_markers_placed_mean"])


def test_we_declaration_tp_3_2_1_and_10_3_trace_names_each_choice():
    """--trace (reference engine) prints each weapon's AP/AT choice and declaration with the expectations compared,
    and the hits a forced declaration loses (TP 1.9.5, 3.2.1; docs/epic-turn.md §3.5)."""
    text = epic.trace(_one_shot({"ap": 4, "at": 4}, [(INFANTRY_4, 2), (VEHICLE_6, 1)], {}), seed=0)
    assert "[TP 1.9.5] Shooter: gun 1 gun: AT (default policy: expected kills AP 0.250, AT 0.417)" in text
    text = epic.trace(_one_shot({"at": 4}, [(FORTRESS, 1), (VEHICLE_6, 1)], {}), seed=0)
    assert ("[TP 3.2.1] Shooter: gun 1 gun (AT) declared at the others (default policy: expected damage 0.250 < "
            "expected kills 0.417 on the others)") in text
    lost = _one_shot({"ap": 2}, [(FORTRESS, 1), (BOYZ, 2)], {"declare_at": "war_engines"})
    traces = "\n".join(epic.trace(lost, seed=s) for s in range(4))
    assert "declared at the war engines (forced by declare_at)" in traces
    assert "[TP 3.2.1] 1 hit(s) declared at the war engines lost: no unit of that group can take them" in traces
