"""The Numba kernel runs Epic turns (kernels/epic/turn.py) with the reference engine's results.

Each scenario below exercises clauses of docs/epic-turn.md (TP = NetEA Tournament Pack); the kernel
(20,000 trials) and the reference engine (3,000 trials) are compared on every reported quantity, the
``turn`` section and ``sides.no_assault`` included, at 5 standard errors (``epic_helpers.compare_results``),
with fixed seeds.  The shipped turn scenarios are compared the same way.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis import epic
from analysis.cli import main
from epic_helpers import compare_results

KERNEL_TRIALS = 20_000
REFERENCE_TRIALS = 3_000
TURNS = Path(__file__).resolve().parents[2] / "analysis" / "scenarios" / "epic" / "turns"

UNITS = """
[units.marine]
type = "INF"
armour = 4
cc = 4
ff = 4
weapons = [{ name = "bolters", range = 15, ap = 5 }]

[units.devastator]
type = "INF"
armour = 4
cc = 5
ff = 3
weapons = [{ name = "missile launcher", count = 2, range = 45, ap = 5, at = 6 }]

[units.sergeant]
type = "INF"
armour = 4
cc = 3
ff = 4
special = ["leader"]
weapons = [{ name = "plasma", range = 15, ap = 4, sniper = true }]

[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
weapons = [{ name = "big shoota", range = 30, ap = 6, at = 6 }]

[units.nob]
type = "INF"
armour = 4
cc = 3
ff = 5
special = ["leader", "invulnerable-save"]
weapons = [{ name = "kustom blasta", range = 30, ap = 4, at = 5, disrupt = true }]

[units.grot]
type = "INF"
cc = 6
ff = 6
special = ["expendable"]

[units.rhino]
type = "LV"
armour = 5
cc = 6
ff = 5
weapons = [{ name = "storm bolter", range = 15, ap = 5 }]

[units.predator]
type = "AV"
armour = 4
cc = 6
ff = 4
special = ["reinforced-armour"]
weapons = [{ name = "lascannon", range = 45, at = 5, lance = true },
           { name = "heavy bolter", count = 2, range = 30, ap = 5, ignore_cover = true }]

[units.whirlwind]
type = "AV"
armour = 5
cc = 6
ff = 5
weapons = [{ name = "vengeance launcher", count = 2, range = 45, bp = 2, indirect = true }]

[units.deathstrike]
type = "AV"
armour = 5
cc = 6
ff = 6
weapons = [{ name = "plasma barrage", range = 60, bp = 3, mw = 5 },
           { name = "hellstrike", range = 60, mw = 4, titan_killer = "D3" }]

[units.terminator]
type = "INF"
armour = 4
cc = 3
ff = 3
special = ["reinforced-armour", "fearless"]
weapons = [{ name = "storm bolters", range = 15, ap = 4 }]
"""

def _scenario(title: str, body: str) -> str:
    """A scenario's TOML: its title, the unit profiles above, its formations and turn."""
    return f'system = "epic"\ntitle = "{title}"\n' + UNITS + body


SCENARIOS = {
    # TP 1.9.2 suppression (TSKNF 2 BMs a unit, strict order from the back), in_range / exposed (§3.1, §3.4),
    # several attacks on one target, the break check after the whole attack (TP 1.9.7); no engage: sides null
    "suppression": _scenario("Suppressed Devastators and Boyz trade fire", """
[[formations]]
name = "Devastators"
side = "attacker"
initiative = 1
blast_markers = 3
army_rules = ["they-shall-know-no-fear"]
units = [{ unit = "devastator", count = 5 }]
[[formations]]
name = "Shooty Boyz"
side = "defender"
initiative = 2
blast_markers = 2
units = [{ unit = "boyz", count = 6 }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
blast_markers = 1
units = [{ unit = "boyz", count = 7 }]
[[turn]]
formation = "Devastators"
action = "sustained_fire"
target = "Mob"
in_range = 4
exposed = 5
[[turn]]
formation = "Shooty Boyz"
action = "advance"
target = "Devastators"
"""),
    # TP 1.8.3 cover (−1 to hit, the infantry cover save, not for vehicles), TP 2.2.5 Ignore Cover, the AP/AT
    # choice (§3.5), TP 1.8.4 infantry on overwatch count as in cover (5+)
    "cover": _scenario("Predators fire at Boyz and Grots in ruins with Rhinos", """
[[formations]]
name = "Armour"
side = "attacker"
initiative = 1
units = [{ unit = "predator", count = 3 }, { unit = "rhino", count = 2 }]
[[formations]]
name = "Tactical"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 6 }]
[[formations]]
name = "Mixed Mob"
side = "defender"
initiative = 2
cover = 4
units = [{ unit = "boyz", count = 4 }, { unit = "rhino", count = 2 }, { unit = "grot", count = 2 }]
[[formations]]
name = "Watchers"
side = "defender"
initiative = 2
overwatch = true
units = [{ unit = "boyz", count = 5 }]
[[turn]]
formation = "Armour"
action = "advance"
target = "Mixed Mob"
cover = true
[[turn]]
formation = "Tactical"
action = "sustained_fire"
target = "Watchers"
"""),
    # TP 1.11 crossfire (−1 save, the first kill 2 BMs), TP 2.1.14 sniper (the Leader first), TP 2.2.2 disrupt,
    # TP 2.2.5 lance against Reinforced Armour (TP 2.1.11), TP 2.1.6 invulnerable saves, TP 2.1.22 Expendable
    "crossfire": _scenario("A crossfire with snipers, disrupt and lances", """
[[formations]]
name = "Command"
side = "attacker"
initiative = 1
units = [{ unit = "sergeant", count = 3 }, { unit = "predator", count = 2 }]
[[formations]]
name = "Nobz"
side = "defender"
initiative = 2
units = [{ unit = "nob", count = 3 }, { unit = "boyz", count = 3 }, { unit = "grot", count = 3 }]
[[formations]]
name = "Terminators"
side = "attacker"
initiative = 1
units = [{ unit = "terminator", count = 4 }]
[[turn]]
formation = "Command"
action = "sustained_fire"
target = "Nobz"
crossfire = true
[[turn]]
formation = "Nobz"
action = "advance"
target = "Terminators"
"""),
    # TP 1.13.4 a broken target: each would-be BM is a no-save hit, front to back, Fearless immune; TSKNF one
    # per 2 BMs; target_broken, BMs placed 0
    "broken_target": _scenario("Shooting broken formations", """
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
units = [{ unit = "boyz", count = 6 }, { unit = "nob", count = 1 }]
[[formations]]
name = "Broken Terminators"
side = "attacker"
initiative = 1
broken = true
army_rules = ["they-shall-know-no-fear"]
units = [{ unit = "marine", count = 3 }, { unit = "terminator", count = 2 }]
[[formations]]
name = "Broken Grots"
side = "attacker"
initiative = 1
broken = true
units = [{ unit = "grot", count = 4 }, { unit = "marine", count = 2 }]
[[formations]]
name = "Boyz"
side = "defender"
initiative = 2
units = [{ unit = "boyz", count = 8 }]
[[turn]]
formation = "Mob"
action = "sustained_fire"
target = "Broken Terminators"
[[turn]]
formation = "Boyz"
action = "advance"
target = "Broken Grots"
"""),
    # TP 1.10 overwatch fire at the charger after its move (kills place BMs, not counted in the result); a
    # charger broken before contact: no assault (sides.no_assault); an overwatch action earlier in the turn
    "overwatch": _scenario("Overwatch breaks a charging mob", """
[[formations]]
name = "Devastators"
side = "attacker"
initiative = 1
overwatch = true
units = [{ unit = "devastator", count = 4 }]
[[formations]]
name = "Tactical"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 4, engaged = "bc" }, { unit = "marine", count = 2, engaged = "ff" }]
[[formations]]
name = "Havocs"
side = "attacker"
initiative = 2
units = [{ unit = "devastator", count = 3 }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
blast_markers = 1
units = [{ unit = "boyz", count = 8, engaged = "bc" }, { unit = "boyz", count = 4, engaged = "ff" }]
[[turn]]
formation = "Havocs"
action = "overwatch"
[[turn]]
formation = "Mob"
action = "engage"
target = "Tactical"
overwatch_fire = ["Devastators", "Havocs"]
"""),
    # TP 1.6.2 / 1.6.3 action tests: −1 with BMs, −1 retaining; a failure places a BM, checks the break
    # (TP 1.13.3) and leaves the Hold of on_fail (shoot at 0, regroup); an engage that fails: no assault
    "failed_test": _scenario("Hard action tests", """
[[formations]]
name = "Boyz"
side = "defender"
initiative = 4
blast_markers = 2
units = [{ unit = "boyz", count = 4 }]
[[formations]]
name = "More Boyz"
side = "defender"
initiative = 4
blast_markers = 3
units = [{ unit = "boyz", count = 5 }]
[[formations]]
name = "Assault Boyz"
side = "defender"
initiative = 5
blast_markers = 1
units = [{ unit = "boyz", count = 5, engaged = "bc" }, { unit = "nob", count = 1, engaged = "bc" }]
[[formations]]
name = "Tactical"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 5, engaged = "bc" }, { unit = "devastator", count = 1, engaged = "ff" }]
[[turn]]
formation = "Boyz"
action = "double"
target = "Tactical"
[[turn]]
formation = "More Boyz"
action = "advance"
target = "Tactical"
retain = true
on_fail = "regroup"
[[turn]]
formation = "Assault Boyz"
action = "engage"
target = "Tactical"
on_fail = "shoot"
"""),
    # TP 1.13.1 / 2.1.8 regroup: Marshal shoots at −1 then regroups, without a target it only regroups;
    # Leaders (TSKNF: 2 each); a declared Hold with on_fail = "regroup"
    "marshal": _scenario("Marshalling", """
[[formations]]
name = "Command"
side = "attacker"
initiative = 1
blast_markers = 5
army_rules = ["they-shall-know-no-fear"]
units = [{ unit = "sergeant", count = 1 }, { unit = "marine", count = 4 }]
[[formations]]
name = "Tactical"
side = "attacker"
initiative = 2
blast_markers = 4
units = [{ unit = "marine", count = 6 }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
blast_markers = 4
units = [{ unit = "nob", count = 1 }, { unit = "boyz", count = 8 }]
[[formations]]
name = "Target"
side = "defender"
initiative = 2
units = [{ unit = "boyz", count = 6 }]
[[turn]]
formation = "Command"
action = "marshal"
target = "Target"
[[turn]]
formation = "Tactical"
action = "marshal"
[[turn]]
formation = "Mob"
action = "hold"
on_fail = "regroup"
"""),
    # TP 1.9.8 barrages: BP added, the table row, templates (default coverage 3 infantry / 2 armoured
    # vehicles, or templates_cover), one roll per unit under, extra BMs; macro-weapon barrages and
    # macro-weapon / titan-killer direct hits after the others (TP 2.2.6, 2.2.9); AT and AP pools with light
    # vehicles (TP-FAQ Allocate Hits)
    "barrage": _scenario("Artillery on a mixed column", """
[[formations]]
name = "Whirlwinds"
side = "attacker"
initiative = 1
units = [{ unit = "whirlwind", count = 3 }]
[[formations]]
name = "Deathstrikes"
side = "attacker"
initiative = 1
units = [{ unit = "deathstrike", count = 2 }]
[[formations]]
name = "Column"
side = "defender"
initiative = 2
units = [{ unit = "predator", count = 2 }, { unit = "boyz", count = 3 }, { unit = "rhino", count = 2 },
         { unit = "boyz", count = 3 }]
[[formations]]
name = "Infantry"
side = "defender"
initiative = 2
units = [{ unit = "boyz", count = 8 }]
[[turn]]
formation = "Whirlwinds"
action = "sustained_fire"
target = "Column"
[[turn]]
formation = "Deathstrikes"
action = "advance"
target = "Infantry"
templates_cover = 2
"""),
    # a shoot-then-assault turn with support and nearby formations and a formation outside the assault
    # (docs/epic-turn.md §2), trapped withdrawals, the end phase
    "shoot_then_assault": _scenario("Shoot, then assault with support", """
[[formations]]
name = "Devastators"
side = "attacker"
initiative = 1
units = [{ unit = "devastator", count = 4 }]
[[formations]]
name = "Tactical"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 4, engaged = "bc" }, { unit = "marine", count = 2, engaged = "ff" }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
blast_markers = 1
trapped = 0.3
units = [{ unit = "boyz", count = 6, engaged = "bc" }, { unit = "nob", count = 1, engaged = "ff" }]
[[formations]]
name = "Support Boyz"
side = "defender"
initiative = 2
role = "support"
units = [{ unit = "boyz", count = 4, engaged = "ff" }]
[[formations]]
name = "Nearby Grots"
side = "defender"
initiative = 2
role = "nearby"
units = [{ unit = "grot", count = 4 }]
[[formations]]
name = "Far Boyz"
side = "defender"
initiative = 2
blast_markers = 1
units = [{ unit = "boyz", count = 4 }]
[[turn]]
formation = "Devastators"
action = "sustained_fire"
target = "Mob"
[[turn]]
formation = "Far Boyz"
action = "advance"
target = "Devastators"
[[turn]]
formation = "Tactical"
action = "engage"
target = "Mob"
[end_phase]
enemy_within_30cm = true
"""),
}


def _compare(scenario, seed):
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    return kernel, reference, compare_results(kernel, reference)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_turn_kernel_matches_reference(name):
    """Kernel v reference at 5σ on every quantity (the clauses each scenario covers are noted above)."""
    kernel, reference, failures = _compare(epic.loads(SCENARIOS[name], name), 40_000 + sorted(SCENARIOS).index(name))
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


#: The shipped turn scenarios the kernel simulates (all of them; one it did not would run on the reference engine:
#: analysis.epic.engine.turn_kernel_unsupported, docs/epic-turn.md §7).
KERNEL_TURNS = [path for path in sorted(TURNS.glob("*.toml")) if epic.engine_for(str(path))[0] == "kernel"]


@pytest.mark.parametrize("path", KERNEL_TURNS, ids=lambda p: p.stem)
def test_shipped_turn_scenarios_match_on_the_kernel(path):
    kernel, reference, failures = _compare(epic.load(path), 41_000)
    assert not failures, f"{path.name}: kernel v reference:\n" + "\n".join(failures)


def test_scenarios_reach_the_rules_they_are_for():
    """The comparisons above would be empty if the rules never fired: check each scenario's key event."""
    def run(name):
        return epic.simulate(epic.loads(SCENARIOS[name], name), trials=4096, seed=7).to_dict()

    overwatch = run("overwatch")
    assert 0.02 < overwatch["sides"]["no_assault"]["p"] < 0.98  # TP 1.10: overwatch breaks the charger
    failed = run("failed_test")
    assert 0.1 < failed["turn"]["1"]["action_test_passed"]["p"] < 0.9  # TP 1.6.2
    assert failed["sides"]["no_assault"]["p"] > 0.1
    broken = run("broken_target")
    assert broken["turn"]["1"]["blast_markers_placed_mean"] == 0 and broken["turn"]["1"]["kills_mean"] > 0
    assert run("barrage")["turn"]["1"]["hits_mean"] > 0  # TP 1.9.8
    assert run("suppression")["sides"] is None


def test_block_function_has_an_assault_and_a_turn_variant_only():
    """Issue 12 §1 'no kernel compiled twice for one signature': an assault and a turn run the block function
    compiled for two deliberate variants (kernels/epic/block.py, ``assault_kernel``), which differ only in the turn
    tables argument: None for an assault (the turn code is pruned from that variant), the tables for a turn."""
    import inspect

    from numba.core import types

    from kernels.epic import block as K

    epic.simulate(epic.loads(SCENARIOS["shoot_then_assault"]), trials=256, seed=1)
    epic.simulate(epic.load(TURNS.parent / "assault_marines_vs_warband.toml"), trials=256, seed=1)
    signatures = K._run_block.signatures
    turn = list(inspect.signature(K._run_block.py_func).parameters).index("turn")
    assert len(signatures) == 2, signatures
    assault, turns = sorted(signatures, key=lambda sig: not isinstance(sig[turn], types.NoneType))
    assert isinstance(assault[turn], types.NoneType) and isinstance(turns[turn], types.BaseTuple)
    assert assault[:turn] + assault[turn + 1:] == turns[:turn] + turns[turn + 1:]


def test_same_numbers_whatever_the_chunk_size():
    """Reproducible: the same seed gives the same counts for any chunk size and thread count."""
    model = epic.loads(SCENARIOS["shoot_then_assault"])
    a = epic.simulate(model, trials=3 * 4096 + 5, seed=3)
    b = epic.simulate(model, trials=3 * 4096 + 5, seed=3, chunk_trials=4096, threads=1)
    assert a.to_json() == b.to_json()


# the turn's shooting takes a war engine's starting DC as fixed: a Land Train whose critical removes a battlecar
# (docs/epic-engine.md §10.4) runs on the reference engine in a turn
WITH_LAND_TRAIN = SCENARIOS["shoot_then_assault"] + """
[units.train]
type = "WE"
armour = 4
cc = 5
ff = 4
damage_capacity = 3
critical = "lose_character"
[units.battlecar]
type = "CH"
damage_capacity = 1
[[formations]]
name = "Land Train"
side = "defender"
initiative = 2
units = [{ unit = "train", count = 1, characters = ["battlecar"] }]
"""


def test_a_turn_the_kernel_does_not_simulate_runs_on_the_reference_engine(tmp_path):
    """A Land Train with a battlecar in a turn runs on the reference engine only
    (analysis.epic.engine.turn_kernel_unsupported): with the default engine too, with a note naming the field
    in the result and one line on stderr on the command line."""
    model = epic.loads(WITH_LAND_TRAIN)
    assert epic.engine_for(model) == ("reference", "the Numba kernel does not simulate lose_character on a war "
                                      "engine with a battlecar attached, in a turn yet (units.train.critical)")
    result = epic.simulate(model, trials=10)
    assert result.meta["engine"] == "reference" and any("units.train.critical" in note for note in result.notes)
    assert epic.simulate(model, trials=10, engine="reference").meta["engine"] == "reference"
    path = tmp_path / "train.toml"
    path.write_text(WITH_LAND_TRAIN)
    result = CliRunner().invoke(main, ["epic", str(path), "-n", "100"])
    assert result.exit_code == 0 and "trials=100" in result.stdout
    assert result.stderr.count("\n") == 1 and "units.train.critical" in result.stderr


def test_cli_runs_a_turn_on_the_kernel_by_default():
    result = CliRunner().invoke(main, ["epic", str(TURNS / "devastators_then_assault_marines.toml"), "-n", "5000",
                                       "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "no_assault" in data["sides"] and set(data["turn"]) == {"1", "2"}
    assert not any("reference engine" in note for note in data["notes"])


def test_compare_falls_back_to_the_reference_engine_with_a_note():
    """compare on turn scenarios uses the kernel; one it cannot run goes to the reference engine, and
    a note names the missing feature (exact pairs either way)."""
    from analysis.decisions import compare

    model = epic.loads(WITH_LAND_TRAIN)
    result = compare(model, model, trials=40, seed=1)
    assert result.meta["engine"] == "reference" and result.meta["method"] == "exact-pairs"
    assert any("lose_character on a war engine with a battlecar attached, in a turn" in note for note in result.notes)
