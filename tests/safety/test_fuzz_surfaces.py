"""Property tests of the surfaces added since the first fuzz (issue 33 §5): turn scenarios (flak,
overwatch, aircraft, war-engine fields), decision files (compare, rank, matrix) and the command lines
of threshold and sweep, report definitions, and report folders someone else prepared.

Each example ends with exit status 0 or 2, no traceback, at most 3 lines on stderr, no raw control
or bidi character in any output, in bounded time and memory, and nothing created, changed or deleted
outside the output folder.  Fixed seeds (``derandomize``), bounded example counts, small trial counts;
run in-process through click's runner (tests/safety/safety_helpers.py: ``run_cli``)."""
import json
import math
import resource
import shutil
import time
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.reports.build import LOCK, MANIFEST
from wargame_odds.analysis.reports.definition import to_toml

from safety_helpers import SCENARIOS, toml_parent as _parent, toml_paths as _paths, tree as _tree

MAX_SECONDS = 60  # one example, on a busy machine
MAX_RSS_KIB = 4 * 1024 * 1024
#: Hostile text: escape sequences (clear screen, window title, hyperlink), a bidi override, a CSV formula,
#: broken math markup, a line break, a NUL byte, a long name, an empty one.
HOSTILE_TEXT = ["\x1b[2J", "\x1b]0;pwned\x07", "\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\", "a\u202eb",
                '=HYPERLINK("http://evil","x")', "@SUM(A1)", "-1+1", r"$\undefinedmacro{$", "two\nlines",
                "nul\x00byte", "N" * 5000, "", "../../outside", "/etc/passwd"]
EXTREMES = [0, -1, 2**31, 10**9, 1e308, -1e308, 1e-300, 2**53, math.inf, math.nan]
WRONG_TYPES = ["", "x" * 300, True, [], [1, "a"], {}, {"k": 1}, 1.5, 7, ["a", "a"]]
RAW = ("\x1b", "\x07", "\u202e", "\x00")
SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _check(args: list, detail: str = "") -> object:
    """Run ``wargame-odds ARGS`` in this process and check the promises; returns click's result."""
    start = time.monotonic()
    result = CliRunner().invoke(main, [str(a) for a in args])
    took = time.monotonic() - start
    if currently_in_test_context():
        event(f"{args[0]} exit {result.exit_code}")
    detail = f"{args[:6]}\n{detail[:2000]}\n{result.stderr[:2000]}"
    assert result.exception is None or isinstance(result.exception, SystemExit), detail
    assert result.exit_code in (0, 2), detail
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 3, detail
    for raw in RAW:
        assert raw not in result.stdout and raw not in result.stderr, (raw, detail)
    assert took < MAX_SECONDS, detail
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < MAX_RSS_KIB, detail
    return result


def _mutate(draw, data: dict, focus=lambda path: True) -> dict:
    """One mutation of parsed TOML ``data``, preferring paths where ``focus(path)``: a key deleted, a wrong
    type, an extreme number, hostile text in place of a text, a list entry repeated, an unknown key."""
    paths = list(_paths(data))
    focused = [(p, v) for p, v in paths if focus(p)] or paths
    kind = draw(st.sampled_from(["delete", "wrong_type", "extreme", "hostile_text", "repeat", "unknown_key"]))
    if kind == "hostile_text":
        texts = [(p, v) for p, v in focused if isinstance(v, str)] or [(p, v) for p, v in paths if isinstance(v, str)]
        path, _ = draw(st.sampled_from(texts))
        _parent(data, path)[path[-1]] = draw(st.sampled_from(HOSTILE_TEXT))
        return data
    if kind == "repeat":
        lists = [(p, v) for p, v in focused if isinstance(v, list) and v] or [(p, v) for p, v in paths
                                                                             if isinstance(v, list) and v]
        if lists:
            _, values = draw(st.sampled_from(lists))
            values.append(values[0])
            return data
    if kind == "extreme":
        numbers = [(p, v) for p, v in focused if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers:
            path, _ = draw(st.sampled_from(numbers))
            _parent(data, path)[path[-1]] = draw(st.sampled_from(EXTREMES))
            return data
    if kind == "unknown_key":
        tables = [(p, v) for p, v in focused if isinstance(v, dict)] or [((), data)]
        _, table = draw(st.sampled_from(tables))
        table[draw(st.sampled_from(["zz_unknown", "name", "flak", "x" * 250]))] = draw(
            st.sampled_from(EXTREMES + WRONG_TYPES + HOSTILE_TEXT))
        return data
    path, _ = draw(st.sampled_from(focused))
    if kind == "delete":
        del _parent(data, path)[path[-1]]
    else:
        _parent(data, path)[path[-1]] = draw(st.sampled_from(WRONG_TYPES + HOSTILE_TEXT))
    return data


def _toml(data: dict) -> str:
    try:
        return to_toml(data)
    except TypeError:  # a value TOML cannot hold (never drawn today): keep the example valid TOML
        return to_toml({})


# -- turn scenarios ------------------------------------------------------------------------------
TURN_EXAMPLES = sorted([*(SCENARIOS / "epic" / "turns").glob("*.toml"),
                        *(SCENARIOS / "epic" / "aircraft").glob("*.toml"),
                        *(SCENARIOS / "epic").glob("*titan*.toml"), *(SCENARIOS / "epic").glob("*gargant*.toml"),
                        *(SCENARIOS / "epic").glob("warhound*.toml")])
TURN_FIELDS = {"turn", "flak", "disengagement_flak", "overwatch_fire", "overwatch", "target", "formation", "war_engine",
               "damage_capacity", "critical", "void_shields", "within_splash_of", "cc_dice", "jink", "name"}


@st.composite
def turn_case(draw):
    source = draw(st.sampled_from(TURN_EXAMPLES))
    data = _mutate(draw, tomllib.loads(source.read_text()), lambda path: any(str(k) in TURN_FIELDS for k in path))
    mode = draw(st.sampled_from([["--json"], [], ["--csv"], ["--trace"], ["--distributions"]]))
    return source.name, _toml(data), mode


@settings(max_examples=40, **SETTINGS)
@given(case=turn_case())
def test_mutated_turn_and_war_engine_scenarios(tmp_path_factory, case):
    name, text, mode = case
    path = tmp_path_factory.mktemp("turn") / name
    path.write_text(text, encoding="utf-8")
    trials = [] if mode == ["--trace"] else ["--trials", "256"]
    _check(["epic", path, "--seed", "1", *trials, *mode], text)


# -- decision files and decision command lines ---------------------------------------------------
DECISIONS = SCENARIOS / "epic" / "decisions"
DECISION_FILES = {"compare": ["assault_or_tactical.toml", "shoot_first_or_engage_now.toml"],
                  "rank": ["marine_assault_meta.toml"], "matrix": ["marines_vs_orks_matrix.toml"]}


@pytest.fixture(scope="module")
def epic_copy(tmp_path_factory) -> Path:
    """The shipped Epic scenarios, copied (decision files name their neighbours by relative paths)."""
    root = tmp_path_factory.mktemp("scenarios") / "epic"
    shutil.copytree(SCENARIOS / "epic", root)
    return root


@st.composite
def decision_case(draw):
    command = draw(st.sampled_from(sorted(DECISION_FILES)))
    name = draw(st.sampled_from(DECISION_FILES[command]))
    data = tomllib.loads((DECISIONS / name).read_text())
    if command == "matrix":  # a smaller grid keeps the example short
        data["attackers"], data["defenders"] = data["attackers"][:2], data["defenders"][:1]
    if command == "rank":
        data["options"] = data["options"][:2]
    return command, _toml(_mutate(draw, data)), draw(st.booleans())


@settings(max_examples=25, **SETTINGS)
@given(case=decision_case())
def test_mutated_decision_files(epic_copy, case):
    command, text, as_csv = case
    path = epic_copy / "decisions" / "mutated.toml"
    path.write_text(text, encoding="utf-8")
    extra = ["--independent"] if command == "compare" else []  # independent runs: the fewest trials
    _check([command, path, "--trials", "256", "--seed", "2", *extra, *(["--csv"] if as_csv else [])], text)


T9A = SCENARIOS / "t9a" / "single_charge_9in.toml"
FIELDS = ["chargers[0].distance", "chargers[Swordsmen].advance_rate", "target.reaction", "rules.version",
          "chargers[9].distance", "chargers[\x1b[2J].distance", "chargers[", "title", "x" * 2000]
VALUE_TEXT = st.one_of(st.sampled_from(["7,9", "7:9", "7:9:0.5", "nan:1", "1:inf", "1,,3", "0:1e308", "9:7", "1:2:0",
                                         ",", "x", '"\x1b[2J"']),
                       st.text(alphabet="0123456789.:,-naif\x1b ", max_size=12))
QUANTITIES = ["chargers[Swordsmen].arrives", "chargers[Swordsmen].failed_move", "sides.attacker_wins", "nonsense[",
              "chargers[\u202e].arrives"]


@st.composite
def decision_line(draw):
    field = draw(st.sampled_from(FIELDS))
    if draw(st.booleans()):
        return ["threshold", T9A, field, "--values", draw(VALUE_TEXT), "--quantity", draw(st.sampled_from(QUANTITIES)),
                "--at-least", "0.5"]
    values = draw(st.lists(st.sampled_from(["7", "9.5", "0", "-1", "1e308", "nan", '"hold"', "true", "[1]",
                                            '"\x1b[2J"', '"=1+1"']), min_size=1, max_size=4))
    return ["sweep", T9A, field, *values]


@settings(max_examples=30, **SETTINGS)
@given(args=decision_line())
def test_threshold_and_sweep_command_lines(args):
    _check([*args, "--trials", "512"])


# -- report definitions and report folders -------------------------------------------------------
SMALL_REPORT = """
title = "fuzz"
seed = 5
trials = 512

[[cells]]
kind = "scenario"
name = "charge"
scenario = "t9a/single_charge_9in"

[[cells]]
kind = "sweep"
name = "distances"
scenario = "t9a/single_charge_9in"
grid = { "chargers[Swordsmen].distance" = [7.0, 9.0] }

[[cells]]
kind = "scenario"
name = "square"
scenario = "gdb/cavalry_vs_square"
"""


def _report_run(root: Path, definition_text: str, out: Path, detail: str = ""):
    """Run a report of ``definition_text`` into ``out``; nothing outside ``out`` may change."""
    definition = root / "definition" / "fuzz.toml"
    definition.parent.mkdir(exist_ok=True)
    definition.write_text(definition_text, encoding="utf-8")
    before = _tree(root, out)
    result = _check(["report", definition, "--out", out], detail or definition_text)
    assert _tree(root, out) == before, detail or definition_text
    return result


@st.composite
def report_definition(draw):
    data = tomllib.loads(SMALL_REPORT)
    return _toml(_mutate(draw, data))


@settings(max_examples=20, **SETTINGS)
@given(text=report_definition())
def test_mutated_report_definitions(tmp_path_factory, text):
    root = tmp_path_factory.mktemp("report")
    (root / "victim.txt").write_text("keep me")
    _report_run(root, text, root / "out")


@pytest.fixture(scope="module")
def built_report(tmp_path_factory) -> Path:
    """A finished report folder of SMALL_REPORT (copied for every example)."""
    root = tmp_path_factory.mktemp("built")
    result = _report_run(root, SMALL_REPORT, root / "out")
    assert result.exit_code == 0
    return root / "out"


ENTRIES = ["report.json", "index.html", LOCK, "tables/charge.csv", "plots/gone.png", "tables/../../victim.txt",
           "../victim.txt", "VICTIM", "notes.txt", "cells", "tables", ".", "", "plots/../../../victim.txt",
           "tables/x\x00.csv", "tables/\x1b[2J.csv"]
FOLDER_CHANGES = ["manifest_entries", "manifest_garbage", "link_folder", "link_file", "link_lock", "user_file",
                  "folder_for_file", "point_garbage", "remove"]


@st.composite
def folder_change(draw):
    change = draw(st.sampled_from(FOLDER_CHANGES))
    if change == "manifest_entries":
        return change, draw(st.lists(st.sampled_from(ENTRIES), min_size=1, max_size=4))
    if change == "manifest_garbage":
        return change, draw(st.sampled_from(['{"files": "x"}', "[]", "null", '{"files": [1]}', "{", "\x00"]))
    if change in ("link_folder", "folder_for_file", "remove"):
        return change, draw(st.sampled_from(["cells", "tables", "plots", "tables/charge.csv", "plots/charge.png",
                                             "index.html", MANIFEST, ".wargame-odds-staging"]))
    if change == "link_file":
        return change, draw(st.sampled_from(["tables/charge.csv", "plots/charge.png", "index.html", "report.json"]))
    return change, draw(st.sampled_from(["notes.txt", "tables/mine.csv", "plots/mine.png", "cells/x/y.json"]))


def _remove(target: Path) -> Path:
    """Remove whatever is at ``target`` (a folder, a file or a link); returns ``target``."""
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    return target


def _apply(change, argument, out: Path, outside: Path) -> None:
    """Change the copied report folder ``out`` as someone preparing it might; ``outside`` is a folder of
    files that must survive."""
    victim = outside / "victim.txt"
    if change == "manifest_entries":
        entries = [str(victim) if e == "VICTIM" else e for e in argument]
        (out / MANIFEST).write_text(json.dumps({"files": entries}))
    elif change == "manifest_garbage":
        (out / MANIFEST).write_text(argument)
    elif change == "link_folder":
        _remove(out / argument).symlink_to(outside, target_is_directory=True)
    elif change in ("link_file", "link_lock"):
        _remove(out / (LOCK if change == "link_lock" else argument)).symlink_to(
            outside / ("planted" if change == "link_lock" else "victim.txt"))
    elif change == "folder_for_file":
        _remove(out / argument).mkdir(parents=True)
    elif change == "remove":
        _remove(out / argument)
    else:  # a file of the user's (or a damaged stored point) inside the folder
        (out / argument).parent.mkdir(parents=True, exist_ok=True)
        (out / argument).write_text("users' text")


@settings(max_examples=30, **SETTINGS)
@given(changes=st.lists(folder_change(), min_size=1, max_size=2))
def test_report_folders_prepared_by_someone_else(built_report, tmp_path_factory, changes):
    root = tmp_path_factory.mktemp("folder")
    outside = root / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me")
    out = root / "out"
    shutil.copytree(built_report, out, symlinks=True)
    for change, argument in changes:
        _apply(change, argument, out, outside)
    result = _report_run(root, SMALL_REPORT, out, repr(changes))
    if result.exit_code == 0:  # a run that went ahead rebuilt the whole report inside the folder
        assert (out / "index.html").is_file() and not (out / "index.html").is_symlink()
