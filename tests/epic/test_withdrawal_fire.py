"""Overwatch fire at a withdrawing formation (issue 29; TP 1.10, 1.13.3, 1.13.4; epic-shooting §3.10, §5 "Against a
withdrawal"; docs/epic-turn.md §2a): the ``withdrawal_fire`` key, its validation, the reference engine (exact
distributions where the attack is small, and paired runs with and without the entries on the combined cases),
the results, the text and the trace.

``CASES`` are the combined cases of issue 29 §5 as scenario texts; ``KERNEL_CASES`` adds the small cases, and the
Numba turn kernel (wargame_odds.kernels.epic.turn._withdrawal_fire) is compared with the reference engine on each of
them at 5σ (its step test: tests/epic/test_steps_*.py).
"""
from __future__ import annotations

import json
from fractions import Fraction as F
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.turn import run_turn_trial
from wargame_odds.analysis.epic.turn_result import compile_turn
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.run.runner import block_rng
from epic_helpers import compare_results

TURNS = Path(str(files("wargame_odds.analysis").joinpath("scenarios", "epic", "turns")))
SHIPPED = TURNS / "devastators_hold_overwatch_for_the_rout.toml"

UNITS = """
system = "epic"
[units.trooper]
type = "INF"
armour = 5
cc = 5
ff = 5
weapons = [{ name = "lasgun", range = 30, ap = 5 }]
[units.heavy]
type = "INF"
armour = 4
cc = 6
ff = 5
weapons = [{ name = "heavy bolter", count = 2, range = 30, ap = 4 }]
[units.lascannon]
type = "INF"
armour = 5
cc = 6
ff = 6
weapons = [{ name = "lascannon", range = 45, at = 4 }]
[units.knight]
type = "WE"
armour = 4
cc = 4
ff = 4
damage_capacity = 3
critical = "destroyed"
"""


def formation(name: str, side: str, unit: str, count: int, *, initiative: int = 1, extra: str = "",
              engaged: str = "out") -> str:
    return (f'\n[[formations]]\nname = "{name}"\nside = "{side}"\ninitiative = {initiative}\n{extra}\n'
            f'units = [{{ unit = "{unit}", count = {count}, engaged = "{engaged}" }}]\n')


def compiled(text: str):
    return compile_turn(epic.loads(text))


def fire_kills(outcome, activation: int | None, entry: int = 0) -> int:
    fires = outcome.end_phase_withdrawal_fire if activation is None else outcome.activations[activation].withdrawal_fire
    return fires[entry].attack.kills if fires[entry].fired else -1


# -- exact: the attack is small enough to enumerate every die (the `exact` fixture) -----------------------------------

#: The small cases of the exact tests below, as scenario texts.
SMALL = {
    # broken by a failed action test (TP 1.6.2, 1.13.3)
    "action_test_break": UNITS + formation("Guard", "defender", "trooper", 4, initiative=2, extra="blast_markers = 3")
    + formation("Havocs", "attacker", "heavy", 1, extra="overwatch = true")
    + '[[turn]]\nformation = "Guard"\naction = "march"\n'
      'withdrawal_fire = [{ formation = "Havocs", at = "Guard" }]\n[end_phase]\nrally = false\n',
    # a TSKNF target: 2 BMs per no-save hit (TP-SR They Shall Know No Fear)
    "tsknf_target": UNITS + formation("Marines", "defender", "trooper", 4, initiative=6,
                                      extra='blast_markers = 7\narmy_rules = ["they-shall-know-no-fear"]')
    + formation("Havocs", "attacker", "heavy", 1, extra="overwatch = true")
    + '[[turn]]\nformation = "Marines"\naction = "march"\n'
      'withdrawal_fire = [{ formation = "Havocs", at = "Marines" }]\n[end_phase]\nrally = false\n',
    # a war-engine target: a point of damage per BM, with its critical roll (TP 3.2.3, 3.2.4)
    "war_engine_target": UNITS + formation("Knight", "defender", "knight", 1, initiative=6, extra="blast_markers = 2")
    + formation("Lascannons", "attacker", "lascannon", 1, extra="overwatch = true")
    + '[[turn]]\nformation = "Knight"\naction = "march"\n'
      'withdrawal_fire = [{ formation = "Lascannons", at = "Knight" }]\n[end_phase]\nrally = false\n',
    # an end-phase withdrawal: a failed rally while broken (TP 1.14.1)
    "end_phase": UNITS + formation("Guard", "defender", "trooper", 4, initiative=2, extra="broken = true")
    + formation("Havocs", "attacker", "heavy", 1, extra="overwatch = true")
    + formation("Scouts", "attacker", "trooper", 1)
    + '[[turn]]\nformation = "Scouts"\naction = "march"\n'
      '[end_phase]\nwithdrawal_fire = [{ formation = "Havocs", at = "Guard" }]\n',
}


def test_a_formation_broken_by_its_action_test_draws_the_overwatch_fire_exactly(exact):
    """Issue 29 §5's small case (TP 1.6.2, 1.13.3, 1.13.4): a formation of 4 with 3 BMs fails its action test (D6 − 1
    < 2: 1/3), breaks and withdraws; a formation on overwatch with 2 AP4+ shots fires at it.  The BM for coming under
    fire is a no-save hit (1 loss); each shot kills with 1/2 × 2/3 (5+ armour); each kill's BM is one more no-save
    hit.  Losses: 0 with 2/3 (the test passes: no withdrawal, no fire), 1 with 1/3 × 4/9, 3 with 1/3 × 4/9 (a kill
    and its hit), 4 with 1/3 × 1/9 (two kills, two hits for the one unit left)."""
    c = compiled(SMALL["action_test_break"])
    losses = exact(lambda rng: run_turn_trial(c.compiled, c.weapons, rng).assault.formations[0].casualties)
    assert losses == {0: F(2, 3), 1: F(1, 3) * F(4, 9), 3: F(1, 3) * F(4, 9), 4: F(1, 3) * F(1, 9)}


def test_a_tsknf_target_needs_two_blast_markers_per_hit_exactly(exact):
    """TP-SR They Shall Know No Fear, TP 1.13.4: a broken TSKNF formation takes one no-save hit per 2 BMs, the odd
    one carried over within the attack.  4 Marines (5+) with 7 BMs always fail their test (initiative 6), break at
    8 and withdraw; 2 AP4+ shots kill k ~ Bin(2, 1/3); the BMs (1 under fire + k) give (1 + k) // 2 hits: losses
    0, 2, 3 with 4/9, 4/9, 1/9."""
    c = compiled(SMALL["tsknf_target"])
    losses = exact(lambda rng: run_turn_trial(c.compiled, c.weapons, rng).assault.formations[0].casualties)
    assert losses == {0: F(4, 9), 2: F(4, 9), 3: F(1, 9)}


def test_a_withdrawing_war_engine_takes_damage_for_each_blast_marker_exactly(exact):
    """TP 1.13.4, 3.2.3, 3.2.4; TP-FAQ Imperial Void Shields: a broken war engine takes 1 damage per BM it would
    receive, no save, with a critical roll.  A Knight (DC 3, 4+, critical: destroyed) with 2 BMs fails its test,
    breaks at 3 and withdraws; one AT4+ shot fires at it: the under-fire point (a 6 on its critical roll destroys
    it: 1/6), then a hit (1/2) not saved (1/2) is a point and a BM, the BM a third point: destroyed with
    1/6 + 5/6 × 1/4 = 3/8."""
    c = compiled(SMALL["war_engine_target"])
    destroyed = exact(lambda rng: run_turn_trial(c.compiled, c.weapons, rng).assault.formations[0].destroyed)
    assert destroyed == {True: F(3, 8), False: F(5, 8)}


def test_an_end_phase_withdrawal_draws_the_end_phase_entries_exactly(exact):
    """TP 1.14.1, 1.13.3: a formation broken at the start fails its rally (D6 − 2 broken − 1 enemy within 30 cm < 2:
    2/3) and withdraws again; the ``[end_phase]`` entry then fires as in the small case above: losses 0 with 1/3,
    1, 3, 4 with 2/3 × (4/9, 4/9, 1/9)."""
    c = compiled(SMALL["end_phase"])
    losses = exact(lambda rng: run_turn_trial(c.compiled, c.weapons, rng).assault.formations[0].casualties)
    assert losses == {0: F(1, 3), 1: F(2, 3) * F(4, 9), 3: F(2, 3) * F(4, 9), 4: F(2, 3) * F(1, 9)}


# -- the combined cases of issue 29 §5, each run with and without its withdrawal_fire entries ------------------------

#: Scenario texts, each with its entries; ``paired_runs`` removes them for the run without.
CASES = {
    # a shooting break (TP 1.9.7): the Guard may break under the Havocs' fire; the Lascannons fire as they run
    "shooting_break": UNITS + formation("Guard", "defender", "trooper", 6, initiative=2, extra="blast_markers = 1")
    + formation("Havocs", "attacker", "heavy", 2) + formation("Lascannons", "attacker", "heavy", 2,
                                                             extra="overwatch = true")
    + '[[turn]]\nformation = "Havocs"\naction = "advance"\ntarget = "Guard"\n'
      'withdrawal_fire = [{ formation = "Lascannons", at = "Guard", exposed = 3 }]\n[end_phase]\nrally = false\n',
    # an assault loser (TP 1.12.8): the Guard lose the assault more often than not and withdraw
    "assault_loser": UNITS + formation("Guard", "defender", "trooper", 4, initiative=2, engaged="bc")
    + formation("Marines", "attacker", "heavy", 4, engaged="bc") + formation("Havocs", "attacker", "heavy", 2,
                                                                             extra="overwatch = true")
    + '[[turn]]\nformation = "Marines"\naction = "engage"\ntarget = "Guard"\n'
      'withdrawal_fire = [{ formation = "Havocs", at = "Guard" }]\n[end_phase]\nrally = false\n',
    # a charger broken by overwatch fire (TP 1.10): Sentries fire at its charge and may break it; they have fired,
    # so only the second formation listed, Havocs, fires at the withdrawal
    "charger_broken_by_overwatch": UNITS + formation("Marines", "attacker", "trooper", 3, extra="blast_markers = 1",
                                                     engaged="bc")
    + formation("Guard", "defender", "trooper", 4, engaged="bc")
    + formation("Sentries", "defender", "heavy", 3, extra="overwatch = true")
    + formation("Havocs", "defender", "heavy", 2, extra="overwatch = true")
    + '[[turn]]\nformation = "Marines"\naction = "engage"\ntarget = "Guard"\noverwatch_fire = ["Sentries"]\n'
      'withdrawal_fire = [{ formation = "Sentries", at = "Marines" }, { formation = "Havocs", at = "Marines" }]\n'
      '[end_phase]\nrally = false\n',
    # end-phase withdrawals of a war engine (TP 1.14.1, 3.2.4; docs/epic-engine.md §10.7): broken by the Lascannons,
    # it may fail its rally and withdraw again; unbroken with a fire burning, the fire's damage and BM may break it
    # before the rally (about 1 trial in 18): both draw the Havocs' fire after the rally step
    "end_phase_war_engine": UNITS.replace("[units.knight]", '[units.gargant]\ntype = "WE"\narmour = 5\ncc = 3\nff = 5\n'
                                          'damage_capacity = 4\ncritical = { kind = "end_phase_fire" }\n'
                                          '[units.knight]')
    + formation("Gargant", "defender", "gargant", 1, initiative=3) + formation("Lascannons", "attacker", "lascannon", 6)
    + formation("Havocs", "attacker", "heavy", 2, extra="overwatch = true")
    + '[[turn]]\nformation = "Lascannons"\naction = "sustained_fire"\ntarget = "Gargant"\n'
      '[end_phase]\nwithdrawal_fire = [{ formation = "Havocs", at = "Gargant" }]\n',
}


#: Every case the kernel is compared with the reference engine on.
KERNEL_CASES = CASES | SMALL


def paired_runs(text: str, trials: int = 400):
    """Per trial, the outcome with the entries and without them, on the same dice (the entries come after
    everything else the activation does, so the dice before them are the same)."""
    without = "\n".join(line for line in text.splitlines() if not line.startswith("withdrawal_fire"))
    ca, cb = compile_turn(epic.loads(text)), compile_turn(epic.loads(without))
    return [(run_turn_trial(ca.compiled, ca.weapons, block_rng(1, 2, t)),
             run_turn_trial(cb.compiled, cb.weapons, block_rng(1, 2, t))) for t in range(trials)]


def test_shooting_break_fires_exactly_when_the_target_broke_with_units_left():
    """TP 1.9.7, 1.13.3: the entry fires in a trial if and only if the attack broke its target and left it a
    unit; the fire's kills are the target's extra casualties, trial by trial."""
    pairs = paired_runs(CASES["shooting_break"])
    fired = 0
    for with_fire, without in pairs:
        broke = without.activations[0].target_broken  # broken with a living unit after the attack
        kills = fire_kills(with_fire, 0)
        assert (kills >= 0) == broke
        guard_with, guard_without = with_fire.assault.formations[0], without.assault.formations[0]
        assert guard_with.casualties - guard_without.casualties == max(kills, 0)
        fired += broke
    assert 0.1 * len(pairs) < fired < 0.9 * len(pairs)  # the case reaches the rule


def test_an_assault_loser_draws_the_fire_after_the_consequences():
    """TP 1.12.8, 1.13.3: the entry of the engage fires after the assault's consequences, if and only if the
    Guard lost, withdrew and kept a unit; its kills never change the assault's result (the same winner and
    margin as without the entry), and they are the Guard's extra casualties."""
    pairs = paired_runs(CASES["assault_loser"])
    fired = 0
    for with_fire, without in pairs:
        a, b = with_fire.assault, without.assault
        assert (a.winner, a.margin, a.rounds) == (b.winner, b.margin, b.rounds)
        lost = b.winner == "attacker" and not b.formations[0].destroyed
        kills = fire_kills(with_fire, 0)
        assert (kills >= 0) == lost
        assert a.formations[0].casualties - b.formations[0].casualties == max(kills, 0)
        fired += lost
    assert 0.1 * len(pairs) < fired < 0.9 * len(pairs)


def test_a_charger_broken_by_overwatch_draws_only_the_formation_that_has_not_fired():
    """TP 1.10, 1.12.8, 1.13.3: Sentries fire at the charge (overwatch_fire) and leave overwatch, so their entry
    never fires; Havocs, the second entry, fire if and only if the charger withdrew with a unit left: broken by the
    overwatch fire (no assault), or the loser of its assault (a winner that breaks does not withdraw)."""
    pairs = paired_runs(CASES["charger_broken_by_overwatch"])
    by_overwatch = fired = 0
    for with_fire, without in pairs:
        broken = without.assault.formations[0].broken_after_assault  # broken, with a living unit
        withdrew = broken and not (without.engaged and without.assault.winner == "attacker")
        assert fire_kills(with_fire, 0, entry=0) == -1
        assert (fire_kills(with_fire, 0, entry=1) >= 0) == withdrew
        fired += withdrew
        by_overwatch += broken and not without.engaged
    assert 0.05 * len(pairs) < by_overwatch < fired < 0.95 * len(pairs)


def test_each_formation_fires_once_and_a_destroyed_target_draws_no_fire(exact):
    """Issue 29 §2 readings: a formation that has fired does not fire again (two entries of one firer: the second
    stays silent), and a withdrawing formation with no unit left draws no attack (its withdrawal killed it:
    ``trapped`` 1)."""
    text = (UNITS + formation("Guard", "defender", "trooper", 4, initiative=6, extra="blast_markers = 3")
            + formation("Havocs", "attacker", "heavy", 1, extra="overwatch = true")
            + '[[turn]]\nformation = "Guard"\naction = "march"\n'
              'withdrawal_fire = [{ formation = "Havocs", at = "Guard" }, { formation = "Havocs", at = "Guard" }]\n'
              '[end_phase]\nrally = false\n')
    c = compiled(text)
    fired = exact(lambda rng: tuple(f.fired for f in run_turn_trial(c.compiled, c.weapons, rng)
                                    .activations[0].withdrawal_fire))
    assert fired == {(True, False): 1}
    trapped = compiled(text.replace("blast_markers = 3", "blast_markers = 3\ntrapped = 1.0"))
    outcome = run_turn_trial(trapped.compiled, trapped.weapons, block_rng(0, 0, 0))
    assert [f.fired for f in outcome.activations[0].withdrawal_fire] == [False, False]


def _fired_counts(result) -> list[int]:
    data = json.loads(result.to_json())
    entries = [e for a in data["turn"].values() for e in a.get("withdrawal_fire", {}).values()]
    entries += list(data.get("end_phase", {}).get("withdrawal_fire", {}).values())
    return [e["fired"]["count"] for e in entries]


@pytest.mark.parametrize("name", sorted(KERNEL_CASES))
def test_the_kernel_matches_the_reference_engine(name):
    """TP 1.10, 1.13.3, 1.13.4; epic-shooting §3.10, §5 "Against a withdrawal"; epic-armageddon §2.7: the Numba turn
    kernel (20,000 trials) against the reference engine (3,000 trials) on every reported quantity, each entry's
    ``fired``, hits and kills included, at 5σ (``epic_helpers.compare_results``), seeds fixed: a shooting break, an
    assault loser, a charger broken by overwatch with a second formation listed, an action-test break, a TSKNF
    target, a war-engine target, an end-phase withdrawal, a war engine's end-phase withdrawals (a failed rally, and
    a break from end-phase damage).  An entry fires in the kernel's trials exactly when it
    does in the reference's (Sentries never: they fired at the charge)."""
    model = epic.loads(KERNEL_CASES[name], name)
    seed = 29_000 + sorted(KERNEL_CASES).index(name)
    kernel = epic.simulate(model, trials=20_000, seed=seed)
    reference = epic.simulate(model, trials=3_000, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)
    fired_k, fired_r = _fired_counts(kernel), _fired_counts(reference)
    assert [n > 0 for n in fired_k] == [n > 0 for n in fired_r] and any(fired_k), (fired_k, fired_r)


# -- validation (exit status 2, one line naming the file and the field) ------------------------------------------------

BASE = (UNITS + formation("Guard", "defender", "trooper", 4, initiative=2)
        + formation("Havocs", "attacker", "heavy", 2, extra="overwatch = true")
        + formation("Marines", "attacker", "heavy", 2)
        + formation("Sentries", "defender", "heavy", 2))
SHOOT = '[[turn]]\nformation = "Marines"\naction = "advance"\ntarget = "Guard"\nwithdrawal_fire = [ENTRY]\n'


@pytest.mark.parametrize("entry, field, said", [
    ('{ formation = "Nobody", at = "Guard" }', "turn[0].withdrawal_fire[0].formation", "unknown formation 'Nobody'"),
    ('{ formation = "Havocs", at = "Nobody" }', "turn[0].withdrawal_fire[0].at", "unknown formation 'Nobody'"),
    ('{ formation = "Havocs", at = "Marines" }', "turn[0].withdrawal_fire[0].formation", "is on the attacker side"),
    ('{ formation = "Sentries", at = "Marines" }', "turn[0].withdrawal_fire[0].formation", "is not on overwatch"),
    ('{ formation = "Havocs", at = "Guard", exposed = 0 }', "turn[0].withdrawal_fire[0].exposed", "greater than"),
    ('{ formation = "Havocs", at = "Guard", cover_save = 7 }', "turn[0].withdrawal_fire[0].cover_save", "less than"),
    ('{ formation = "Havocs", at = "Guard", declare_at = "others" }', "turn[0].withdrawal_fire[0].declare_at",
     "has no war engines"),
    ('{ formation = "Havocs" }', "turn[0].withdrawal_fire[0].at", "required key is missing"),
])
def test_bad_entries_are_one_line_errors(entry, field, said):
    """Issue 29 §3: unknown formations, a firer of the same side or not on overwatch at that point, a value out of
    its bounds, a forced declaration at a target without war engines, a missing key."""
    with pytest.raises(UserError) as error:
        epic.loads(BASE + SHOOT.replace("ENTRY", entry), "bad.toml")
    assert error.value.field == field and said in str(error.value), str(error.value)
    assert "\n" not in str(error.value) and "bad.toml" in str(error.value)


def test_a_firer_that_acted_since_its_overwatch_is_refused_and_the_cli_exits_2(tmp_path):
    """Issue 29 §3 "on overwatch at that point of the script": Havocs' own activation before the entry ends their
    overwatch (TP 1.10); the command line says so in one line, exit status 2."""
    text = (BASE + '[[turn]]\nformation = "Havocs"\naction = "advance"\ntarget = "Sentries"\n'
            + SHOOT.replace("ENTRY", '{ formation = "Havocs", at = "Guard" }'))
    path = tmp_path / "acted.toml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["epic", str(path), "--trials", "10"])
    assert result.exit_code == 2
    assert "turn[1].withdrawal_fire[0].formation" in result.output and "is not on overwatch" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_flying_formations_are_refused():
    """Issue 29 §3: a flying formation on either side (aircraft never go on overwatch, never withdraw: TP 4.1.1)."""
    flier = ('[units.thunderbolt]\ntype = "AV"\narmour = 6\naircraft = "fighter-bomber"\n'
             'weapons = [{ name = "multilaser", range = 30, ap = 5, at = 6 }]\n')
    text = (BASE.replace("[units.trooper]", flier + "[units.trooper]")
            + formation("Thunderbolts", "attacker", "thunderbolt", 1)
            + SHOOT.replace("ENTRY", '{ formation = "Thunderbolts", at = "Guard" }'))
    with pytest.raises(UserError) as error:
        epic.loads(text)
    assert error.value.field == "turn[0].withdrawal_fire[0].formation" and "aircraft formation" in str(error.value)


def test_an_entry_that_can_never_fire_gets_a_note_and_end_phase_entries_need_a_turn():
    """Issue 29 §3: an ``at`` that cannot withdraw as a result of its activation (neither the acting formation,
    its target, in its assault nor within a splash of theirs) is a note, not an error; ``[end_phase]`` entries
    in an assault scenario are an error; with the rally off, they are a note."""
    march = ('[[turn]]\nformation = "Sentries"\naction = "march"\n'
             'withdrawal_fire = [{ formation = "Havocs", at = "Guard" }]\n')
    model = epic.loads(BASE + march)
    assert any(note.startswith("turn[0].withdrawal_fire[0]: 'Guard' cannot withdraw") for note in model.notes)
    assert epic.loads(BASE + SHOOT.replace("ENTRY", '{ formation = "Havocs", at = "Guard" }')).notes == []
    end = '[end_phase]\nrally = false\nwithdrawal_fire = [{ formation = "Havocs", at = "Guard" }]\n'
    assert any("rally = false" in note for note in epic.loads(BASE + march.split("withdrawal_fire")[0] + end).notes)
    assault = UNITS + formation("Guard", "defender", "trooper", 4, engaged="bc") + formation(
        "Marines", "attacker", "heavy", 2, engaged="bc") + end
    with pytest.raises(UserError) as error:
        epic.loads(assault)
    assert error.value.field == "end_phase.withdrawal_fire"


# -- results, text, trace, engine --------------------------------------------------------------------------------------

def test_json_text_and_engine_of_the_shipped_scenario():
    """Issue 29 §4: ``turn[i].withdrawal_fire[j]`` with formation, at, fired (p, 95 % interval), mean hits and kills
    over all trials and when it fires (with intervals); one sentence per entry; the run takes the Numba kernel; same
    seed, same numbers whatever the chunk size."""
    assert epic.engine_for(str(SHIPPED)) == ("kernel", None)
    result = epic.simulate(epic.load(SHIPPED), trials=600, seed=3)
    data = json.loads(result.to_json())
    entry = data["turn"]["1"]["withdrawal_fire"]["1"]
    assert entry["formation"] == "Devastators" and entry["at"] == "Warband"
    assert set(entry["fired"]) == {"p", "ci95", "count"} and 0 < entry["fired"]["p"] < 1
    for name in ("hits_mean", "kills_mean", "hits_mean_when_fired", "kills_mean_when_fired"):
        low, high = entry[f"{name}_ci95"]
        assert low <= entry[name] <= high
    assert abs(entry["kills_mean"] - entry["kills_mean_when_fired"] * entry["fired"]["p"]) < 1e-9
    # the Devastators fire at most once: after the Tacticals' attack, or after the assault
    second = data["turn"]["2"]["withdrawal_fire"]["1"]
    assert entry["fired"]["count"] + second["fired"]["count"] <= 600
    assert result.meta["engine"] == "kernel"
    assert not any("reference engine" in note for note in data["notes"])
    sentences = [s for s in result.headline() if s.startswith("Devastators fire at the withdrawing Warband: ")]
    assert len(sentences) == 2 and sentences[0].endswith("kills when they fire")
    chunked = epic.simulate(epic.load(SHIPPED), trials=600, seed=3, chunk_trials=128)
    assert chunked.to_json() == result.to_json()


def test_end_phase_entries_are_in_the_json_and_the_text():
    """Issue 29 §4: ``end_phase.withdrawal_fire[j]`` and its sentence, "End phase: …"."""
    result = epic.simulate(epic.loads(SMALL["end_phase"]), trials=900, seed=5)
    entry = json.loads(result.to_json())["end_phase"]["withdrawal_fire"]["1"]
    p = F(2, 3)  # the rally fails (D6 − 3 < 2)
    assert abs(entry["fired"]["p"] - p) < 5 * (p * (1 - p) / 900) ** 0.5
    assert any(s.startswith("End phase: Havocs fire at the withdrawing Guard: ") for s in result.headline())
    assert "End phase: withdrawal fire · 1" in result.text()


def test_trace_shows_the_withdrawal_the_trigger_and_every_die_with_its_clause():
    """Issue 29 §4 --trace: the withdrawal (TP 1.13.3), the trigger and the firer leaving overwatch (TP 1.10), and
    the attack's dice, each line with its clause."""
    text = (UNITS + formation("Guard", "defender", "trooper", 4, initiative=6, extra="blast_markers = 3")
            + formation("Havocs", "attacker", "heavy", 1, extra="overwatch = true")
            + '[[turn]]\nformation = "Guard"\naction = "march"\n'
              'withdrawal_fire = [{ formation = "Havocs", at = "Guard" }]\n[end_phase]\nrally = false\n')
    lines = epic.trace(epic.loads(text), seed=1).splitlines()
    said = "\n".join(lines)
    for clause, words in (("TP 1.13.3", "Guard breaks"), ("TP 1.13.3", "Guard withdraws: Havocs fires on overwatch"),
                          ("TP 1.13.4", "coming under fire gives 1 no-save hit"), ("TP 1.9.5", "heavy bolter (AP4+"),
                          ("TP 1.10", "Havocs has fired: it leaves overwatch")):
        assert any(line.startswith(f"[{clause}]") and words in line for line in lines), (clause, words, said)


def test_the_shipped_decision_compares_holding_overwatch_with_shooting_first():
    """Issue 29 §4: the shipped decision (holding the Devastators on overwatch for the rout, or letting them shoot
    first) runs, paired, on the Numba kernel (batch means, its default there)."""
    decision = TURNS.parent / "decisions" / "devastators_overwatch_or_shoot_first.toml"
    out = CliRunner().invoke(main, ["compare", str(decision), "-n", "200", "--json"])
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and data["engine"] == "kernel" and data["method"] == "batch-means"
    assert [r["opponent"] for r in data["rows"]] == ["Warband"]
    assert not any("reference engine" in note for note in data["notes"])
