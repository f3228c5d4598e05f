"""The Epic turn in the reference engine (docs/epic-turn.md §2–§4): activations, overwatch, the
assault from the turn's state, results, the kernel's refusal and the CLI."""
from __future__ import annotations

import json
import math
import random
import re
from fractions import Fraction as F
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.regroup import regroup_removed
from wargame_odds.analysis.epic.turn import Turn, action_test, run_turn_trial
from wargame_odds.analysis.epic.turn_model import Activation
from wargame_odds.analysis.epic.turn_result import compile_turn
from wargame_odds.analysis.intake.errors import UserError

from epic_helpers import ScriptedRandom

TURNS = Path(str(files("wargame_odds.analysis").joinpath("scenarios", "epic", "turns")))
EXAMPLE = TURNS / "devastators_then_assault_marines.toml"

BASE = """
system = "epic"
[units.marine]
type = "INF"
armour = 4
cc = 4
ff = 4
weapons = [{ name = "bolter", range = 30, ap = 4 }]
[units.guard]
type = "INF"
cc = 6
ff = 5
weapons = [{ name = "lasgun", range = 30, ap = 4 }]
[[formations]]
name = "Marines"
side = "attacker"
initiative = INITIATIVE
blast_markers = MARKERS
army_rules = ["they-shall-know-no-fear"]
units = [{ unit = "marine", count = 4, engaged = "bc" }]
[[formations]]
name = "Guard"
side = "defender"
initiative = 2
overwatch = OVERWATCH
units = [{ unit = "guard", count = GUARDS, engaged = "bc" }]
"""


def scenario(turn: str, initiative=1, markers=0, overwatch="false", guards=6, end_phase=True):
    text = (BASE.replace("INITIATIVE", str(initiative)).replace("MARKERS", str(markers))
            .replace("OVERWATCH", overwatch).replace("GUARDS", str(guards)) + turn)
    if not end_phase:
        text += "\n[end_phase]\nrally = false\n"
    return epic.loads(text)


def turn_state(model, dice=()):
    c = compile_turn(model)
    return Turn(c.compiled, c.weapons, ScriptedRandom(dice))


SHOOT = '[[turn]]\nformation = "Marines"\naction = "ACTION"\ntarget = "Guard"\n'


# -- the action test (TP 1.6.2, 1.6.3) ---------------------------------------------------------------

@pytest.mark.parametrize("initiative, markers, retain, passes", [(3, 0, False, F(2, 3)), (3, 1, False, F(1, 2)),
                                                                (1, 0, False, F(1)), (3, 1, True, F(1, 3))])
def test_action_test_tp_1_6_2(exact, initiative, markers, retain, passes):
    """TP 1.6.2, 1.6.3, TP-FAQ The Action Test: D6 ≥ initiative, −1 with any BM, −1 when
    retaining the initiative; a 1 is not an automatic failure (initiative 1 always passes)."""
    model = scenario(SHOOT.replace("ACTION", "advance"), initiative=initiative, markers=markers)
    act = Activation(formation="Marines", action="advance", target="Guard", retain=retain)

    def test(rng):
        state = turn_state(model)
        state.trial.rng = rng
        return action_test(state.trial, state.by_name["Marines"], act)
    assert exact(test).get(True, 0) == passes


def test_failed_test_places_a_marker_breaks_and_loses_the_action_tp_1_13_3():
    """TP 1.6.2, 1.13.3: a failed test places +1 BM; at the break point the formation breaks,
    withdraws and loses the rest of its action (no shot, no BM on the target)."""
    model = scenario(SHOOT.replace("ACTION", "sustained_fire"), initiative=2, markers=7, end_phase=False)
    c = compile_turn(model)
    lines = []
    outcome = run_turn_trial(c.compiled, c.weapons, ScriptedRandom([2]), log=lines.append)  # 2 − 1 < 2: fail
    activation = outcome.activations[0]
    assert activation.acted and not activation.test_passed and activation.attack is None
    assert outcome.assault.formations[0].broken_after_assault
    assert outcome.assault.formations[1].blast_markers_after_assault == 0
    assert any("rest of it is lost" in line for line in lines)


def test_failed_test_holds_and_shoots_without_modifier_tp_1_6_1():
    """TP 1.6.1, reading (docs/epic-turn.md §2): after a failed Sustained Fire test the Hold shoots at modifier 0."""
    model = scenario(SHOOT.replace("ACTION", "sustained_fire"), initiative=2, markers=1, end_phase=False)
    c = compile_turn(model)
    lines = []
    dice = [2] + [1] * 3  # fail the test (2 − 1 < 2): 2 BMs suppress one Marine (TSKNF), 3 shots miss
    outcome = run_turn_trial(c.compiled, c.weapons, ScriptedRandom(dice), log=lines.append)
    assert outcome.activations[0].attack.fired
    assert sum("modifier +0" in line for line in lines) == 3 and not any("modifier +1" in line for line in lines)


def test_marshal_without_target_regroups_tp_1_13_1(exact):
    """TP 1.6.1, 1.13.1: Marshal without a target moves and regroups: BMs − highest of 2D6; a
    failed test (1 with a BM vs 1+: a 1 − 1 fails) adds a BM and regroups in the Hold."""
    model = scenario('[[turn]]\nformation = "Marines"\naction = "marshal"\n', initiative=1, markers=3,
                     end_phase=False)
    c = compile_turn(model)
    got = exact(lambda rng: run_turn_trial(c.compiled, c.weapons, rng)
                .assault.formations[0].blast_markers_after_assault)
    expected: dict = {}
    for test_passes, start, p in ((True, 3, F(5, 6)), (False, 4, F(1, 6))):
        for removed, q in regroup_removed(start).items():
            expected[start - removed] = expected.get(start - removed, 0) + p * q
    assert got == expected


# -- overwatch and the assault (TP 1.10, 1.12; TP-FAQ Overwatch, Work Out Result) ---------------------------

ENGAGE = '[[turn]]\nformation = "Marines"\naction = "engage"\ntarget = "Guard"\n'


def test_overwatch_fire_breaks_the_charger_no_assault_tp_1_10():
    """TP 1.10, 1.13.3: overwatch fire at the charger after its move; broken, it does not assault.
    Marines with 7 BMs (break at 8) charging take the under-fire BM: always broken, so every trial
    is ``no_assault`` and the side outcomes still add up to 1."""
    model = scenario(ENGAGE + 'overwatch_fire = ["Guard"]\n', markers=7, overwatch="true")
    result = epic.simulate(model, trials=300, seed=2, engine="reference")
    sides = result["sides"]
    assert sides["no_assault"].k == 300
    assert sum(sides[k].k for k in ("attacker_wins", "defender_wins", "no_winner", "unresolved", "no_assault")) == 300


def test_overwatch_kills_do_not_count_in_the_assault_result():
    """TP-FAQ Work Out Result: overwatch kills place BMs but are not counted in the assault result:
    in one-round assaults after an overwatch kill, the defender's result counts exactly the Marines
    destroyed in the assault itself (TP 1.12.7)."""
    model = scenario(ENGAGE + 'overwatch_fire = ["Guard"]\n', markers=0, overwatch="true")
    c = compile_turn(model)
    checked = 0
    for seed in range(400):
        lines = []
        outcome = run_turn_trial(c.compiled, c.weapons, random.Random(seed), log=lines.append)
        start = next((i for i, line in enumerate(lines) if "--- assault" in line), None)
        overwatch_kills = sum("Marines: marine" in line and line.endswith("destroyed") for line in lines[:start or 0])
        if start is None or outcome.assault.rounds != 1 or overwatch_kills == 0 or outcome.assault.margin is None:
            continue
        result = next(i for i, line in enumerate(lines) if "defender result" in line)
        assault_kills = sum("[TP 3.3.3]" in line and "Marines: marine" in line and line.endswith("destroyed")
                            for line in lines[start:result])
        shown = re.search(r"(\d+) kills", lines[result])
        assert (int(shown.group(1)) if shown else 0) == assault_kills
        checked += 1
    assert checked >= 5


def test_formations_without_a_role_stay_out_of_the_assault():
    """Issue 15 §1: only the charger, its target and formations with an explicit role fight; the
    Devastators of the issue's example lose nothing and gain no BM from the assault (TP 1.12.8
    gives BMs only to the loser's support and nearby formations)."""
    result = epic.simulate(epic.load(EXAMPLE), trials=1500, seed=5, engine="reference")
    devastators = result["formations", "Devastators"]
    assert devastators["casualties_mean"].value == 0
    assert devastators["blast_markers_after_assault_mean"].value == 0
    assert result["sides", "defender_wins"].k > 0  # the attacker does lose sometimes: the check has teeth


def test_assault_starts_from_the_blast_markers_the_shooting_placed():
    """Issue 15 §2: the assault uses the BMs the turn produced (TP 1.12.7 compares BMs held)."""
    text = epic.trace(epic.load(EXAMPLE), seed=0)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "--- assault" in line)
    held = int([line for line in lines[:start] if line.startswith("[TP 1.9.4] Warband")][-1].rsplit("→ ", 1)[1])
    assert held >= 2 and f"({held} v 0)" in next(line for line in lines if "attacker result" in line)


def test_example_shooting_means_tp_1_9():
    """TP 1.9.5, 1.9.6: the example's 8 AP5+ missile shots on Sustained Fire (hit 4+) at 6+ Boyz:
    E[hits] = 4 and E[kills] = 8 × 1/2 × 5/6 = 10/3, BMs placed = 1 + kills (5σ tolerance)."""
    n = 3000
    result = epic.simulate(epic.load(EXAMPLE), trials=n, seed=7, engine="reference")
    entry = result["turn", "1"]
    for estimate, exact_value, variance in ((entry["hits_mean"], 4, 8 * 0.25),
                                            (entry["kills_mean"], 10 / 3, 8 * (5 / 12) * (7 / 12))):
        assert abs(estimate.value - exact_value) < 5 * math.sqrt(variance / n)
    assert abs(entry["blast_markers_placed_mean"].value - 1 - entry["kills_mean"].value) < 1e-12


# -- engines, reproducibility, CLI ---------------------------------------------------------------------------

def test_same_seed_same_numbers_whatever_the_chunk_size():
    model = epic.load(EXAMPLE)
    a = epic.simulate(model, trials=700, seed=11, engine="reference")
    b = epic.simulate(model, trials=700, seed=11, engine="reference", chunk_trials=256)
    assert a.to_json() == b.to_json()


def test_cli_reference_engine_json_has_the_turn_and_no_assault():
    result = CliRunner().invoke(main, ["epic", str(EXAMPLE), "--engine", "reference", "-n", "300", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "no_assault" in data["sides"] and set(data["turn"]) == {"1", "2"}
    first = data["turn"]["1"]
    assert {"formation", "action", "action_test_passed", "hits_mean", "kills_mean", "blast_markers_placed_mean",
            "target_broken", "target_blast_markers_after_mean", "target_blast_markers_after"} <= set(first)


def test_turn_without_engage_has_null_sides(tmp_path):
    path = tmp_path / "shoot.toml"
    path.write_text(EXAMPLE.read_text().split('[[turn]]\nformation = "Assault Detachment"')[0])
    result = CliRunner().invoke(main, ["epic", str(path), "--engine", "reference", "-n", "200", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["sides"] is None and set(data["turn"]) == {"1"}
    text = CliRunner().invoke(main, ["epic", str(path), "--engine", "reference", "-n", "200"])
    assert text.exit_code == 0, text.output


def test_trace_shows_every_step_with_its_clause():
    lines = epic.trace(epic.load(EXAMPLE), seed=1).splitlines()
    assert all(line.startswith("[") for line in lines[1:-1])
    for clause in ("[TP 1.6.2]", "[TP 1.9.2]", "[TP 1.9.4]", "[TP 1.9.5]", "[TP 1.9.6]", "[TP 1.9.7]", "[TP 1.12.5]",
                   "[TP 1.14.1]"):
        assert any(line.startswith(clause) for line in lines), clause


@pytest.mark.parametrize("path", sorted(TURNS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_turn_scenario_runs_on_the_reference_engine(path):
    """Issue 15 §4: the shipped turn scenarios load and run; side outcomes and formation states add up."""
    result = epic.simulate(epic.load(path), trials=300, seed=1, engine="reference")
    sides = result["sides"]
    assert sum(sides[k].k for k in ("attacker_wins", "defender_wins", "no_winner", "unresolved", "no_assault")) == 300
    for name in result["formations"]:
        states = [result["formations", name, k].k for k in ("destroyed", "broken_after_end_phase",
                                                              "unbroken_after_end_phase")]
        assert sum(states) == 300


def test_ork_scenario_overwatch_fires_at_the_charger_tp_1_10():
    """TP 1.10: in the shipped Ork scenario the Heavy Weapons fire on overwatch whenever the warband
    passes its engage test, and never otherwise."""
    model = epic.load(TURNS / "ork_warband_shoots_then_assaults_guard.toml")
    for seed in range(12):
        text = epic.trace(model, seed=seed)
        charged = "Warband charges Guard Company" in text
        assert ("Heavy Weapons fires on overwatch at Warband" in text) == charged


def test_assault_jobs_refuse_a_turn_scenario():
    """The assault-only runner jobs (used by sweeps, thresholds and comparisons) would ignore the
    turn: they refuse a turn scenario with one clear error instead of returning wrong numbers."""
    from wargame_odds.analysis.epic import ReferenceJob
    from wargame_odds.analysis.epic.compile import compile_scenario
    from wargame_odds.analysis.epic.engine import KernelJob

    compiled = compile_scenario(epic.load(EXAMPLE))
    for job in (ReferenceJob, KernelJob):
        with pytest.raises(UserError, match="turn scenario"):
            job(compiled)


def test_activation_cover_uses_the_target_formations_cover_save_tp_1_8_3():
    """TP 1.8.3, 1.9.5: ``cover = true`` gives −1 to hit and, without ``cover_save``, the target
    formation's ``cover`` value as its infantry's cover save (the Guard have no armour: 4+ from ruins)."""
    model = scenario(SHOOT.replace("ACTION", "advance") + "cover = true\n", end_phase=False)
    model = model.replace("formations[Guard].cover", 4)
    c = compile_turn(model)
    lines = []
    run_turn_trial(c.compiled, c.weapons, ScriptedRandom([1] + [5] * 4 + [3] * 4), log=lines.append)
    assert sum("modifier -1" in line for line in lines) == 4
    assert sum("save 4+ vs AP" in line for line in lines) == 4


def test_who_fights_survives_a_field_replacement():
    """Issue 15 §1 after ``replace`` (as sweeps do, through a full dump): a formation without a
    role still stays out of the assault; one given a role joins it."""
    model = epic.load(EXAMPLE).replace("formations[Warband].blast_markers", 2)
    assert model.formations[0].role is None
    result = epic.simulate(model, trials=400, seed=5, engine="reference")
    assert result["formations", "Devastators", "blast_markers_after_assault_mean"].value == 0
    nearby = model.replace("formations[Devastators].role", "nearby")
    lines = epic.trace(nearby, seed=0).splitlines()
    assert any("--- assault: Devastators, Assault Detachment, Warband ---" in line for line in lines)


def test_infantry_on_overwatch_count_as_in_cover_tp_1_8_4():
    """TP 1.8.4: infantry on overwatch in the open are −1 to hit with a 5+ cover save until they
    fire: 4 AP4+ shots at the Guard on overwatch need 5+, and the no-armour Guard save on 5+."""
    model = scenario(SHOOT.replace("ACTION", "advance"), overwatch="true", end_phase=False)
    c = compile_turn(model)
    lines = []
    run_turn_trial(c.compiled, c.weapons, ScriptedRandom([1] + [5] * 4 + [4] * 4), log=lines.append)
    assert sum("modifier -1" in line for line in lines) == 4
    assert sum("save 5+ vs AP: 4 → failed" in line for line in lines) == 4
