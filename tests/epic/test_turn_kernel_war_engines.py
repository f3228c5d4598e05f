"""War engines in a turn on the Numba kernel (kernels/epic/shooting.py) against the reference engine.

docs/epic-turn.md §3.13 (TP 3.2, TP-SR Imperial Void Shields, Power Fields): each scenario below is run on
the kernel (8,000 trials) and the reference engine (1,500 trials) and every reported quantity is compared at
5 standard errors (``epic_helpers.compare_results``), the ``turn`` section, ``sides.no_assault`` and the
war-engine results of docs/epic-engine.md §10.9 included, with fixed seeds.  The clauses each scenario
covers are noted with it.
"""
from __future__ import annotations

import pytest

from analysis import epic
from epic_helpers import compare_results

KERNEL_TRIALS = 8_000
REFERENCE_TRIALS = 1_500

SCENARIOS = {
    # shooting a void-shielded titan (§3.13): void shields stop a point each, then the hits are saved per point
    # (reinforced armour, macro-weapon: RA only, titan killer: invulnerable only); titan-killer "D6+1" and D3
    # damage rolled at allocation, counting as that many hits in the block of starting DC (TP 3.2.1, 3.2.5);
    # macro-weapon hits after the normal ones (TP 2.2.6); a macro_weapon barrage on the titan under a template's
    # centre, ⌈DC/2⌉ attacks (TP 3.2.1, TP 1.9.8); a BM and a critical roll per damage point, extra_damage
    # criticals (TP 3.2.2, 3.2.3); the titan shoots back on Marshal (a war engine as a shooter, suppression
    # at its DC per BM group) and regroups, repairing void shields with the points the BMs leave (TP-SR
    # Imperial Void Shields); its state carries into the assault of the third activation and the end phase
    "void_shielded_titan": """
system = "epic"
title = "Titan killers and macro weapons at a void-shielded Reaver, which marshals, then an assault"
[units.battery]
type = "AV"
armour = 4
cc = 6
ff = 5
weapons = [{ name = "quake cannon", range = 90, bp = 3, macro_weapon = true },
           { name = "volcano cannon", range = 90, mw = 2, titan_killer = "D6+1" },
           { name = "lascannon", count = 2, range = 45, at = 5 }]
[units.shadowsword]
type = "AV"
armour = 4
cc = 6
ff = 5
weapons = [{ name = "destroyer", range = 90, mw = 3, titan_killer = "D3" }]
[units.reaver]
type = "WE"
armour = 4
cc = 3
ff = 3
damage_capacity = 6
void_shields = 4
special = ["reinforced-armour"]
critical = "extra_damage"
weapons = [{ name = "turbo laser", count = 2, shots = 2, range = 60, ap = 5, at = 3 },
           { name = "melta", range = 30, mw = 4 }]
[units.marine]
type = "INF"
armour = 4
cc = 4
ff = 4
[[formations]]
name = "Battery"
side = "attacker"
initiative = 1
units = [{ unit = "battery", count = 1 }, { unit = "shadowsword", count = 1 }]
[[formations]]
name = "Assault"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 6, engaged = "bc" }]
[[formations]]
name = "Reaver"
side = "defender"
initiative = 1
units = [{ unit = "reaver", count = 1, engaged = "bc" }]
[[turn]]
formation = "Battery"
action = "sustained_fire"
target = "Reaver"
[[turn]]
formation = "Reaver"
action = "marshal"
target = "Battery"
[[turn]]
formation = "Assault"
action = "engage"
target = "Reaver"
[end_phase]
enemy_within_30cm = true
""",
    # a mixed target (§3.7, §3.13): a war engine takes AT, MW and TK hits in a block of its starting DC when
    # its turn comes in the round-robin, the infantry AP hits; power fields (D3, rolled once per trial) stop a
    # point each and never come back (TP-SR Power Fields); dice shots and dice barrage points rolled each time
    # a weapon fires (TP 1.9.5, 1.9.8); crossfire −1 to saves and the first damage point
    # placing 2 BMs (TP 1.11); sniper and disrupt hits (a disrupt hit past the fields places 1 BM, its damage
    # none, epic-shooting §13 Q11); a second attack on a target the first may have broken: each BM a no-save
    # hit, 1 damage on the war engine with its critical roll (TP 1.13.4; TP-FAQ Imperial Void Shields); a
    # destroyed critical whose splash reaches the infantry and the Vindicators (within_splash_of, TP 3.2.3,
    # 3.2.4: BMs on the Vindicators at once, and their break check after the attack); the break point
    # counting the war engine's DC (TP 3.2.4)
    "mixed_war_engine_and_infantry": """
system = "epic"
title = "Tanks and snipers at a gargant mob with boyz, in crossfire, then again"
[units.predator]
type = "AV"
armour = 4
cc = 6
ff = 4
weapons = [{ name = "lascannon", count = 2, range = 45, at = 5 },
           { name = "hailfire", shots = "D3", range = 45, ap = 5, at = 6 }]
[units.sniper]
type = "INF"
armour = 5
cc = 5
ff = 4
weapons = [{ name = "sniper rifle", range = 30, ap = 4, sniper = true },
           { name = "haywire", range = 30, at = 5, disrupt = true }]
[units.vindicator]
type = "AV"
armour = 4
cc = 6
ff = 4
weapons = [{ name = "demolisher", range = 30, mw = 4 }, { name = "whirlwind", range = 45, bp = "D3+1" }]
[units.gargant]
type = "WE"
armour = 4
cc = 3
ff = 4
damage_capacity = 4
power_fields = "D3"
critical = { kind = "destroyed_plus_effect", splash_hit_on = 4 }
weapons = [{ name = "gaze", range = 30, mw = 3 }]
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
special = ["leader"]
weapons = [{ name = "shoota", range = 30, ap = 6 }]
[[formations]]
name = "Tanks"
side = "attacker"
initiative = 1
units = [{ unit = "predator", count = 4 }, { unit = "sniper", count = 2 }]
[[formations]]
name = "Vindicators"
side = "attacker"
initiative = 1
within_splash_of = { "Mob" = 3 }
units = [{ unit = "vindicator", count = 3 }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
blast_markers = 2
within_splash_of = { "Mob" = 2 }
units = [{ unit = "boyz", count = 2 }, { unit = "gargant", count = 1 }, { unit = "boyz", count = 3 }]
[[turn]]
formation = "Tanks"
action = "sustained_fire"
target = "Mob"
crossfire = true
[[turn]]
formation = "Vindicators"
action = "advance"
target = "Mob"
""",
    # overwatch fire at a war-engine charger (TP 1.10; §3.13): shields, saves and criticals as in any attack,
    # the BMs on the charger, its break point at its DC (TP 3.2.4), no assault when it breaks or dies; then the
    # assault from the damage and shields the overwatch left (docs/epic-engine.md §10), and the end phase (a
    # void shield back, TP-SR Imperial Void Shields)
    "overwatch_at_a_war_engine_charger": """
system = "epic"
title = "A Warhound pack charges through the overwatch of a Devastator detachment"
[units.warhound]
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
void_shields = 2
special = ["reinforced-armour"]
critical = "extra_damage"
weapons = [{ name = "plasma blastgun", range = 45, mw = 3 }]
[units.devastator]
type = "INF"
armour = 4
cc = 5
ff = 3
weapons = [{ name = "lascannon", count = 2, range = 45, at = 5 }]
[units.krak]
type = "INF"
armour = 4
cc = 4
ff = 4
weapons = [{ name = "melta bombs", range = 15, mw = 5, titan_killer = true }]
[[formations]]
name = "Warhounds"
side = "attacker"
initiative = 1
units = [{ unit = "warhound", count = 2, engaged = "bc" }]
[[formations]]
name = "Devastators"
side = "defender"
initiative = 1
overwatch = true
units = [{ unit = "devastator", count = 4, engaged = "bc" }, { unit = "krak", count = 2, engaged = "ff" }]
[[turn]]
formation = "Warhounds"
action = "engage"
target = "Devastators"
overwatch_fire = ["Devastators"]
[end_phase]
enemy_within_30cm = true
""",
}

# the same with Automata boyz (TP-SR Automata; epic-shooting §3.9): their deaths and the disrupt hits on them place
# no BMs (analysis.epic.shooting.kill_blast_markers, no_disrupt_marker), and with Automaton boyz (TP-SR
# Automaton): no BMs for their deaths, a BM for each disrupt hit, and a save against the broken mob's no-save hits
# (analysis.epic.reference.automaton_saves)
SCENARIOS["automata_mixed_target"] = SCENARIOS["mixed_war_engine_and_infantry"].replace(
    'special = ["leader"]', 'special = ["leader", "automata"]')
SCENARIOS["automaton_mixed_target"] = SCENARIOS["mixed_war_engine_and_infantry"].replace(
    'special = ["leader"]', 'special = ["leader", "automaton"]')

# the charge of Warhounds without void shields or critical hits: no war-engine rules in the scenario, so the
# kernel runs it without its per-unit war-engine state (docs/epic-engine.md §10), blocks of DC and saves per
# point all the same (TP 3.2.1, 3.2.2)
SCENARIOS["plain_war_engine_charger"] = SCENARIOS["overwatch_at_a_war_engine_charger"].replace(
    "void_shields = 2\n", "").replace('critical = "extra_damage"\n', "")

# the same charge with shadowfields instead of void shields (a shadowfield absorbs a whole hit that gets past
# the other shields, TP-SR Dark Eldar Technology) and a deflector shield (an unmodified 5+ after a failed or
# disallowed save, also against titan killers, TP-FAQ Invulnerable Saves)
SCENARIOS["overwatch_at_shadowfields_and_deflectors"] = SCENARIOS["overwatch_at_a_war_engine_charger"].replace(
    "void_shields = 2", "shadowfields = 2").replace('special = ["reinforced-armour"]',
                                                    'special = ["reinforced-armour", "deflector-shield"]')


def _key_events(name: str, r: dict) -> dict[str, bool]:
    """The events each scenario is for, which must happen often enough for the comparison to test them."""
    turn = r["turn"]
    if name == "void_shielded_titan":
        return {"the titan destroyed by the shooting": 0.05 < turn["1"]["kills_mean"] < 0.95,
                "critical hits on it": r["formations"]["Reaver"]["critical"]["p"] > 0.05,
                "it shoots back": turn["2"]["hits_mean"] > 0.1,
                "an assault or none": 0.05 < r["sides"]["no_assault"]["p"] < 0.95}
    if name in ("mixed_war_engine_and_infantry", "automata_mixed_target", "automaton_mixed_target"):
        return {"the mob broken by the first attack": 0.1 < turn["1"]["target_broken"]["p"] < 0.95,
                "no-save hits on the broken mob": turn["2"]["kills_mean"] > 0.1,
                "critical hits on the gargant": r["formations"]["Mob"]["critical"]["p"] > 0.05,
                "its splash on the Vindicators": r["formations"]["Vindicators"]["casualties_mean"] > 0.05}
    warhounds = r["formations"]["Warhounds"]
    return {"the charger stopped by overwatch, or not": 0.02 < r["sides"]["no_assault"]["p"] < 0.98,
            "damage on the Warhounds": warhounds["damage_taken_assault_mean"] > 0.1 if name.startswith("overwatch")
            else warhounds["casualties_mean"] > 0.1}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_turn_kernel_with_war_engines_matches_reference(name):
    """Kernel v reference at 5σ on every quantity (docs/epic-turn.md §3.13; the clauses each scenario covers
    are noted above), once the kernel's results show the scenario's key events."""
    scenario = epic.loads(SCENARIOS[name], name)
    seed = 43_000 + sorted(SCENARIOS).index(name)
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    missing = [event for event, seen in _key_events(name, kernel.to_dict()).items() if not seen]
    assert not missing, f"{name}: too rare on the kernel: {missing}"
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


def test_war_engine_turn_same_numbers_whatever_the_chunk_size():
    """Reproducible (the war-engine state, power-field dice and titan-killer damage are the lane's own dice):
    the same seed gives the same counts for any chunk size and thread count."""
    model = epic.loads(SCENARIOS["mixed_war_engine_and_infantry"])
    a = epic.simulate(model, trials=3 * 4096 + 5, seed=3)
    b = epic.simulate(model, trials=3 * 4096 + 5, seed=3, chunk_trials=4096, threads=1)
    assert a.to_json() == b.to_json()
