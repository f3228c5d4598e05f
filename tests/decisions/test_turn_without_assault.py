"""A turn without an assault (issue 41 §1): ``compare`` weighs what both options have (the enemy broken or
destroyed, casualties, blast markers) instead of an internal KeyError, and its result lists no outcome "after
the assault" (docs/decisions.md; docs/epic-turn.md §4)."""
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.decisions import compare
from wargame_odds.analysis.epic.turn_result import ASSAULT_KEYS
from wargame_odds.analysis.intake.errors import ArgumentError, UserError
from wargame_odds.analysis.reports.definition import to_toml

TURNS = Path(str(files("wargame_odds.analysis").joinpath("scenarios"))) / "epic" / "turns"
SHOOT_FIRST = TURNS / "devastators_then_assault_marines.toml"
THREE_ACTIVATIONS = TURNS / "devastators_shoot_first.toml"  # Devastators and Tacticals shoot, Assault engages


def _shooting_turn(tmp_path: Path, name: str, shooters: tuple[str, ...]) -> Path:
    """The shipped turn with only the shooting activations of ``shooters`` left (no engage)."""
    data = tomllib.loads(THREE_ACTIVATIONS.read_text())
    data["turn"] = [a for a in data["turn"] if a["formation"] in shooters]
    assert data["turn"] and all(a["action"] != "engage" for a in data["turn"])
    path = tmp_path / f"{name}.toml"
    path.write_text(to_toml(data))
    return path


@pytest.mark.parametrize("other", ["shooting", "assault"])
def test_compare_weighs_what_both_turns_have_when_one_has_no_assault(tmp_path, other):
    """Option A a shooting-only turn, option B another shooting turn (or a turn with an assault): there is no
    assault to win (once a KeyError 'sides' from inside, then a refusal); both have the enemy broken or destroyed
    after the end phase, casualties and blast markers, and that is what they are compared on."""
    a = _shooting_turn(tmp_path, "devastators", ("Devastators",))
    b = _shooting_turn(tmp_path, "tacticals", ("Tactical Detachment",)) if other == "shooting" else SHOOT_FIRST
    result = compare(a, b, trials=400, method="exact-pairs", engine="reference")
    row = result.frame.iloc[0]
    for option, column in ((result.meta["option_a"], "p_a"), (result.meta["option_b"], "p_b")):
        warband = result.option_results[(option, 0)]["formations", "Warband"]
        k = warband["destroyed"].k + warband["broken_after_end_phase"].k  # disjoint: destroyed is never broken
        assert row[column] == k / 400
    assert row.difference == pytest.approx(row.p_a - row.p_b, abs=1e-12)  # exact pairs: the same 400 trials
    assert row.ci95_lo <= row.difference <= row.ci95_hi
    assert result.meta["quantity"] == "formations/Warband/destroyed + formations/Warband/broken_after_end_phase"
    sentence = result.headline()[0]
    assert sentence.startswith("Against Warband: devastators breaks or destroys Warband ")
    without = "'devastators' and 'tacticals' are turns" if other == "shooting" else "'devastators' is a turn"
    assert any(note.startswith(f"{without} without an assault") for note in result.notes), result.notes
    assert "enemy blast markers" in str(result) and "enemy units killed" in str(result)
    titles = [ax.get_title().replace("\n", " ") for ax in result.plot().axes[2:]]  # "at least N" of what both have
    assert titles == ['"At least N": Warband units killed',
                      '"At least N": blast markers on Warband after the end phase']


def test_two_turns_without_a_shared_enemy_are_refused_in_one_sentence(tmp_path):
    a = _shooting_turn(tmp_path, "devastators", ("Devastators",))
    data = tomllib.loads(a.read_text())
    data["formations"][-1]["name"] = "Other Warband"
    data["turn"][0]["target"] = "Other Warband"
    b = tmp_path / "other.toml"
    b.write_text(to_toml(data))
    with pytest.raises(UserError) as refused:
        compare(a, b, trials=400, method="exact-pairs", engine="reference")
    message = str(refused.value)
    assert len(message.splitlines()) == 1
    assert "option_b" in message and "share no formation of the other side" in message


def test_the_compare_command_compares_turns_without_an_assault(tmp_path):
    """``wargame-odds compare`` on such a definition: exit 0, the sentence on what both have (was an internal
    KeyError, then a refusal)."""
    a = _shooting_turn(tmp_path, "devastators", ("Devastators",))
    definition = tmp_path / "compare.toml"
    definition.write_text(f'system = "epic"\ntitle = "shoot or shoot"\noption_a = "{a.name}"\n'
                          f'option_b = "{SHOOT_FIRST}"\n')
    result = CliRunner().invoke(main, ["compare", str(definition), "--trials", "400", "--engine", "reference",
                                       "--method", "exact-pairs"])
    assert result.exit_code == 0, result.output
    assert "Against Warband: devastators breaks or destroys Warband" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_turn_without_an_assault_lists_no_outcome_after_the_assault(tmp_path):
    """The result of a shooting-only turn said "destroyed after the assault 0.00 %" for formations that never
    assaulted; now it lists what the turn has (destroyed, broken after the end phase, casualties, blast markers)."""
    result = epic.simulate(_shooting_turn(tmp_path, "devastators", ("Devastators",)), trials=400, seed=1,
                           engine="reference")
    assert "sides" not in result.tree
    for name, formation in result.tree["formations"].items():
        assert not set(ASSAULT_KEYS) & set(formation), name
        assert {"destroyed", "broken_after_end_phase", "casualties", "blast_markers_after_end_phase"} <= set(formation)
    text = result.text(distributions=True, at_least=True)
    assert "after the assault" not in text
    assert "broken after the end phase" in text


def test_a_turn_with_an_assault_keeps_its_assault_outcomes():
    result = epic.simulate(SHOOT_FIRST, trials=400, seed=1, engine="reference")
    assert set(ASSAULT_KEYS[:6]) <= set(result.tree["formations"]["Warband"])
    assert "destroyed after the assault" in result.text()


@pytest.mark.parametrize("labels, why", [
    (("x" * 1_000_000, "b"), "1 MB"), (("two\nlines", "b"), "a line break"), (("x" * 81, "b"), "81 characters"),
    (("", "b"), "empty"), (("a",), "one label"), ("ab", "a text"), ((1, 2), "numbers")])
def test_option_labels_are_names_as_on_the_command_line(labels, why):
    """``labels=`` took any text (1 MB, line breaks, 81 characters) where a definition file caps names at 80
    characters on one line; refused before anything runs, in one line."""
    with pytest.raises(UserError) as refused:
        compare(SHOOT_FIRST, SHOOT_FIRST, trials=400, labels=labels)
    message = str(refused.value)
    assert len(message.splitlines()) == 1 and len(message) <= 2000, why
    assert "field 'labels'" in message and "1 to 80 characters on one line" in message, why


@pytest.mark.parametrize("name, value", [("trials", 2000.5), ("trials", True), ("seed", 1.5), ("paired", "no"),
                                         ("method", "fast"), ("threads", 0), ("cell", ("a",))])
def test_compare_checks_its_run_arguments_as_simulate_does(name, value):
    """``trials=2000.5`` was taken and silently raised to whole batches; every run argument is checked first."""
    with pytest.raises(ArgumentError, match=f"^{name} must be"):
        compare(SHOOT_FIRST, SHOOT_FIRST, **{name: value})
