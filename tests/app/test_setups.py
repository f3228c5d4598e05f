"""Issue 30 §2 load and save, §3 bad input: a setup goes to TOML that the CLI runs unchanged and comes back
equal, for every system; uploads, examples and page addresses get the CLI's checks and caps."""
import copy
import string

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("panel")  # the [app] extra; the test extra installs it

from wargame_odds.analysis.app.examples import example_names, relative_example  # noqa: E402
from wargame_odds.analysis.app.setups import (
    MAX_URL_CHARS, CompareSetup, Setup, check, decode_setup, encode_setup, example_setup, parse_setup, to_toml)
from wargame_odds.analysis.cli import main  # noqa: E402
from wargame_odds.analysis.intake.errors import UserError  # noqa: E402
from wargame_odds.analysis.intake.scenario import MAX_FILE_BYTES  # noqa: E402

SCENARIOS = [name for name in example_names() if "/decisions/" not in name]
#: Names a player might type, hostile ones included: markup, math, control characters, quotes, unicode.
NAMES = st.text(alphabet=st.sampled_from(list(string.ascii_letters + " <>&$\\\"'[]=.#\x07\x1b\t\u00e9\u2603")),
                min_size=1, max_size=30)


def _round_trip(setup: Setup) -> Setup:
    return parse_setup(to_toml(setup.data), "round trip")


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_shipped_scenario_round_trips_through_toml(name):
    setup = example_setup(name)
    again = _round_trip(setup)
    assert again == setup and again.data == setup.data
    if setup.system == "epic":
        assert again.model().model_dump() == setup.model().model_dump()


def _epic_variant(data: dict, names: list[str], markers: list[int], broken: list[bool], engaged: list[str]) -> dict:
    data = copy.deepcopy(data)
    for f, name, bm, br in zip(data["formations"], names, markers, broken):
        f.update(name=name, blast_markers=bm, broken=br)
    for f, where in zip(data["formations"], engaged):
        f["units"][0]["engaged"] = where
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(NAMES, min_size=3, max_size=3, unique=True),
       markers=st.lists(st.integers(0, 100), min_size=3, max_size=3),
       broken=st.lists(st.booleans(), min_size=3, max_size=3),
       engaged=st.lists(st.sampled_from(["bc", "ff"]), min_size=3, max_size=3),
       result_dice=st.sampled_from(["highest", "sum"]), leaders=st.booleans())
def test_epic_setups_round_trip_and_the_cli_reads_the_same_scenario(tmp_path_factory, names, markers, broken, engaged,
                                                                   result_dice, leaders):
    """Hostile names, every blast-marker count and switch: TOML and back gives the same data, and the file the
    app saves loads in the CLI's loader as the same scenario."""
    from wargame_odds.analysis import epic

    data = _epic_variant(example_setup("epic/assault_marines_vs_warband").data, names, markers, broken, engaged)
    data["rules"] = dict(data.get("rules", {}), result_dice=result_dice, leaders=leaders)
    setup = Setup("epic", data)
    assert _round_trip(setup).data == data
    path = tmp_path_factory.mktemp("saved") / "setup.toml"
    path.write_text(setup.toml(), encoding="utf-8")
    assert epic.load(path).model_dump() == setup.model().model_dump()


@settings(max_examples=25, deadline=None)
@given(name=NAMES, strength=st.integers(1, 500), distance=st.floats(0.5, 12, allow_nan=False),
       reaction=st.sampled_from(["fire", "stand", "turn_to_face", "form_square"]), general=st.booleans())
def test_gdb_setups_round_trip(name, strength, distance, reaction, general):
    data = copy.deepcopy(example_setup("gdb/column_vs_line").data)
    data["charger"].update(name=name, strength=strength, distance=distance, general_attached=general)
    data["target"]["reaction"] = reaction
    setup = Setup("gdb", data)
    assert _round_trip(setup).data == data


@settings(max_examples=25, deadline=None)
@given(names=st.lists(NAMES, min_size=2, max_size=2, unique=True), distance=st.floats(0, 100, allow_nan=False),
       advance=st.floats(0, 30, allow_nan=False), version=st.sampled_from(["2.0", "2022", "beta"]))
def test_t9a_setups_round_trip(names, distance, advance, version):
    data = copy.deepcopy(example_setup("t9a/single_charge_9in").data)
    data["chargers"] = [dict(data["chargers"][0], name=n, distance=distance, advance_rate=advance) for n in names]
    data["rules"] = dict(data.get("rules", {}), version=version)
    setup = Setup("t9a", data)
    assert _round_trip(setup).data == data


def test_a_saved_setup_runs_unchanged_in_the_cli(tmp_path):
    """§2: the TOML the page downloads is a scenario file: the CLI runs it and gives the numbers of the file the
    setup came from."""
    setup = example_setup("epic/assault_marines_vs_warband")
    saved = tmp_path / "saved.toml"
    saved.write_text(setup.toml(), encoding="utf-8")
    runs = [CliRunner().invoke(main, ["epic", str(path), "-n", "2000", "--json"])
            for path in (saved, "epic/assault_marines_vs_warband")]
    assert [r.exit_code for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


def test_a_comparison_example_opens_both_shipped_scenarios():
    setup = example_setup("epic/decisions/shoot_first_or_engage_now")
    assert isinstance(setup, CompareSetup)
    assert setup.labels == ("shoot first", "engage now") and setup.side == "attacker"
    assert setup.option_a == example_setup("epic/turns/devastators_then_assault_marines")


@pytest.mark.parametrize("name, words", [
    ("epic/no_such_fight", ["no shipped example", "epic/no_such_fight"]),
    ("epic/../../../etc/passwd", ["no shipped example"]),
    ("/etc/passwd", ["no shipped example"]),
    ("epic/decisions/marines_vs_orks_matrix", ["decision definition"]),
])
def test_an_example_that_does_not_open_is_one_message_naming_it(name, words):
    with pytest.raises(UserError) as caught:
        example_setup(name)
    for word in words:
        assert word in str(caught.value)


def test_a_definition_cannot_reach_outside_the_shipped_folder():
    with pytest.raises(UserError, match="not a shipped scenario"):
        relative_example("epic/decisions/x", "../../../../../etc/passwd", "test")
    assert relative_example("epic/decisions/x", "../turns/assault_marines_engage_now.toml", "t") == \
        "epic/turns/assault_marines_engage_now"


@pytest.mark.parametrize("text, field", [
    ('system = "epic"\ntitle = "x"\nunits = {}\nformations = []', "formations"),
    ('system = "chess"', "system"),
    ('system = "gdb"\ntables = "/etc/passwd"', "tables"),
    ('system = "t9a"\n[target]\nname = "x"', "chargers"),
    ("not toml at all [", None),
])
def test_a_bad_upload_is_one_message_naming_the_file_and_field(text, field):
    with pytest.raises(UserError) as caught:
        parse_setup(text, "upload.toml")
    message = str(caught.value)
    assert message.startswith("upload.toml") and "\n" not in message
    if field:
        assert field in message


def test_an_upload_over_the_size_cap_is_refused_before_parsing():
    with pytest.raises(UserError, match="at most"):
        parse_setup("#" * (MAX_FILE_BYTES + 1), "big.toml")


def test_the_page_address_round_trips_a_setup_and_refuses_anything_else():
    setup = example_setup("t9a/three_chargers")
    assert decode_setup(encode_setup(setup)) == setup
    for bad in ("", "abc", "%%%", "A" * (MAX_URL_CHARS + 1)):
        with pytest.raises(UserError, match="the page address"):
            decode_setup(bad)
    import base64
    import zlib

    bomb = base64.urlsafe_b64encode(zlib.compress(b"#" * (MAX_FILE_BYTES + 10), 9)).decode()
    assert len(bomb) < MAX_URL_CHARS
    with pytest.raises(UserError, match="inflates"):
        decode_setup(bomb)


def test_gdb_uses_only_the_shipped_tables():
    data = dict(example_setup("gdb/column_vs_line").data, tables="my_tables.toml")
    with pytest.raises(UserError, match="shipped rule tables"):
        check("gdb", data)
