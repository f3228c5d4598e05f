"""A turn without an assault (issue 41 §1): ``compare`` refuses it with a sentence instead of an internal
KeyError, and its result lists no outcome "after the assault" (docs/decisions.md; docs/epic-turn.md §4)."""
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
def test_compare_refuses_a_turn_without_an_assault_in_one_sentence(tmp_path, other):
    """Option A a shooting-only turn, option B another shooting turn (or a turn with an assault): there is no
    assault to win, so no win chance to compare; once a KeyError 'sides' from inside, now one UserError naming the
    option, what it lacks and what to do instead."""
    a = _shooting_turn(tmp_path, "devastators", ("Devastators",))
    b = _shooting_turn(tmp_path, "tacticals", ("Tactical Detachment",)) if other == "shooting" else SHOOT_FIRST
    with pytest.raises(UserError) as refused:
        compare(a, b, trials=400, method="exact-pairs")
    message = str(refused.value)
    assert len(message.splitlines()) == 1
    assert "option_a" in message and "'devastators' is a turn without an assault" in message
    assert "casualties, blast markers and broken or destroyed" in message
    with pytest.raises(UserError, match="option_b.*'devastators' is a turn without an assault"):
        compare(SHOOT_FIRST, a, trials=400, method="exact-pairs")


def test_the_compare_command_refuses_it_in_one_line_exit_2(tmp_path):
    """``wargame-odds compare`` on such a definition: exit 2, one line, no traceback (was an internal KeyError)."""
    a = _shooting_turn(tmp_path, "devastators", ("Devastators",))
    definition = tmp_path / "compare.toml"
    definition.write_text(f'system = "epic"\ntitle = "shoot or shoot"\noption_a = "{a.name}"\n'
                          f'option_b = "{SHOOT_FIRST}"\n')
    result = CliRunner().invoke(main, ["compare", str(definition), "--trials", "400"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "is a turn without an assault" in lines[0] and "Traceback" not in result.stderr


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
