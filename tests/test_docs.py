"""Issue 28 §1: the README and docs/ stand on their own and never contradict the code.

Every `wargame-odds` command line in a code block of README.md or docs/*.md names a command that exists and only
options that command has (read from click's command tree), and a shipped example it names exists; every key of a
TOML example is a key of one of the program's input models (read from the pydantic models).  The README stays
short, and every page says first what it is for."""
from __future__ import annotations

import re
import shlex
import tomllib
import types
import typing
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.examples import shipped_path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "kernels" / "README.md"]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHELL_STOP = {">", ">>", "|", "&&", ";", "<", "2>"}
NAME = re.compile(r"[a-z0-9]+(/[A-Za-z0-9_-]+)+")


def _blocks(page: Path, languages) -> list[str]:
    return [body for lang, body in BLOCK.findall(page.read_text(encoding="utf-8")) if lang in languages]


def _command_lines(body: str) -> list[list[str]]:
    """Each `wargame-odds ...` line of a shell block (continuations joined, prompts and paths stripped), split."""
    out = []
    for line in body.replace("\\\n", " ").splitlines():
        line = re.sub(r"^\s*(\$\s*)?(\S*/)?(?=wargame-odds\b)", "", line)
        if not line.startswith("wargame-odds "):
            continue
        words = shlex.split(line, comments=True)[1:]
        cut = next((i for i, w in enumerate(words) if w in SHELL_STOP), len(words))
        out.append([w.strip("[]") for w in words[:cut]])
    return out


def _commands() -> list[tuple[str, list[str]]]:
    return [(page.name, words) for page in PAGES for body in _blocks(page, ("", "bash", "sh", "console", "shell"))
            for words in _command_lines(body)]


def _option_names(command: click.Command) -> dict[str, bool]:
    """{option: takes a value} of a command, --help included."""
    names = {"--help": False, "-h": False}
    for param in command.params:
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                names[name] = not param.is_flag and not param.count
    return names


def _check_command(words: list[str]) -> list[str]:
    """The problems of one command line (empty when every command, option and shipped name exists)."""
    context = click.Context(main)
    command, problems = main, []
    while isinstance(command, click.Group):
        if not words:
            return problems
        name, words = words[0], words[1:]
        found = command.get_command(context, name)
        if found is None:
            return [f"no command {name!r}"]
        command = found
    options, skip = _option_names(command), False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-") and not re.fullmatch(r"-?\d[\d.:]*", word):
            name = word.split("=")[0]
            if name not in options:
                problems.append(f"{command.name} has no option {name}")
            skip = options.get(name, False) and "=" not in word
        elif NAME.fullmatch(word) and not word.startswith(("netea:", "tcp:")) and word.count("/") <= 3 \
                and "[" not in word and shipped_path(word) is None and not (ROOT / word).exists():
            problems.append(f"{command.name}: no shipped example or file {word!r}")
        elif word.endswith(".toml") and "/" in word and word[:1].islower() and not (ROOT / word).exists() \
                and shipped_path(word) is None:
            problems.append(f"{command.name}: no file {word!r} in the checkout")
    return problems


def test_the_docs_show_commands_to_check():
    commands = _commands()
    assert len(commands) > 40 and {page for page, _ in commands} >= {"README.md", "decisions.md", "reports.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_and_option_the_docs_show_exists(page):
    problems = [(words, p) for name, words in _commands() if name == page.name for p in _check_command(words)]
    assert problems == []


def test_the_checker_catches_what_does_not_exist():
    assert _check_command(["epic", "epic/assault_marines_vs_warband", "--plot", "x.png", "-n", "5"]) == []
    assert _check_command(["epic", "x.toml", "--largest"]) == ["epic has no option --largest"]
    assert _check_command(["nonsense"]) == ["no command 'nonsense'"]
    assert _check_command(["rank", "epic/decisions/no_such_meta"]) == [
        "rank: no shipped example or file 'epic/decisions/no_such_meta'"]
    assert _check_command(["epic", "analysis/scenarios/epic/nope.toml"]) == [
        "epic: no file 'analysis/scenarios/epic/nope.toml' in the checkout"]


# -- TOML examples against the input models -------------------------------------------------------------------------
def _models() -> dict[str, type[BaseModel]]:
    from wargame_odds.analysis.decisions.cli import (
        CompareDefinition, MatrixDefinition, RankDefinition, ScenarioCompareDefinition)
    from wargame_odds.analysis.decisions.list_search_core import ListSearchDefinition
    from wargame_odds.analysis.epic.model import EpicScenario
    from wargame_odds.analysis.gdb.model import Scenario as GdbScenario
    from wargame_odds.analysis.gdb.tables import Tables
    from wargame_odds.analysis.reports.definition import ReportModel
    from wargame_odds.analysis.t9a.charge.model import Scenario as T9aScenario

    return {"epic": EpicScenario, "gdb": GdbScenario, "gdb tables": Tables, "t9a": T9aScenario, "report": ReportModel,
            "matrix": MatrixDefinition, "compare": CompareDefinition, "compare scenarios": ScenarioCompareDefinition,
            "rank": RankDefinition, "list-search": ListSearchDefinition}


def _members(annotation) -> list:
    """The types an annotation allows (unions, Optional and Annotated unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _unknown_keys(model: type[BaseModel], data: dict, where: str = "") -> list[str]:
    """Keys of ``data`` that ``model`` (and the models nested in it) does not have."""
    unknown = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            if not (model.__name__ == "Formation" and key in ("library", "base_contact", "upgrades")):  # on load
                unknown.append(f"{where}{key}")
            continue
        for member in _members(field.annotation):
            origin, args = typing.get_origin(member), typing.get_args(member)
            inner = args[-1] if origin in (dict, list) and args else member
            models = [m for m in _members(inner) if isinstance(m, type) and issubclass(m, BaseModel)]
            if not models:
                continue
            items = list(value.values()) if origin is dict and isinstance(value, dict) else \
                value if isinstance(value, list) else [value]
            for item in (i for i in items if isinstance(i, dict)):
                best = min((_unknown_keys(m, item, f"{where}{key}.") for m in models), key=len)
                unknown += best
            break
    return unknown


def _tomls() -> list[tuple[str, int, dict]]:
    out = []
    for page in PAGES:
        for n, body in enumerate(_blocks(page, ("toml",))):
            out.append((page.name, n, tomllib.loads(body)))
    return out


@pytest.mark.parametrize("page, n, data", _tomls(), ids=lambda v: v if isinstance(v, (str, int)) else "")
def test_every_key_of_a_toml_example_is_a_key_of_the_program(page, n, data):
    """A TOML example of the docs fits one of the input models (keys only: examples may leave values out)."""
    tried = {name: _unknown_keys(model, data) for name, model in _models().items()}
    force = dict(data)
    force.pop("name", None)  # a force file: a scenario's units and formations, with a name
    tried["force"] = _unknown_keys(_models()["epic"], force) if "formations" in data else ["not a force"]
    assert min(tried.values(), key=len) == [], tried


def test_the_key_check_catches_a_key_that_does_not_exist():
    epic = _models()["epic"]
    assert _unknown_keys(epic, {"units": {"x": {"armour": 4, "armor": 4}}}) == ["units.armor"]
    assert _unknown_keys(epic, {"formations": [{"name": "a", "covers": 4}]}) == ["formations.covers"]
    assert _unknown_keys(epic, {"turn": [{"formation": "a", "action": "advance", "range_band": 1}]}) == \
        ["turn.range_band"]


# -- the pages themselves -------------------------------------------------------------------------------------------
def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda p: p.name)
def test_every_page_says_first_what_it_is_for(page):
    """A title, then a paragraph saying what the page is for (not a table, a list or code)."""
    title, blank, first, *_ = page.read_text(encoding="utf-8").splitlines()
    assert title.startswith("#") and blank == "" and re.match(r"This page is for \w", first), first


def _outside_code(text: str) -> str:
    """Markdown text without its fenced blocks and inline code spans (``Literal[int](6)`` there is no link)."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(page):
    text = _outside_code(page.read_text(encoding="utf-8"))
    for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
        assert (page.parent / target).resolve().exists(), f"{page.name}: {target}"


def test_a_link_inside_code_is_not_a_link():
    assert re.findall(r"\]\(([^)]+)\)", _outside_code("a `Literal[int](6)` and [this](here.md)\n```\n[x](y)\n```\n")) \
        == ["here.md"]


def test_the_docs_use_the_public_import():
    """Issue 28 §2: the docs import `wargame_odds`, never `analysis` (a user's own folder could shadow it)."""
    for page in PAGES:
        for body in _blocks(page, ("python",)):
            assert not re.search(r"^\s*(import analysis|from wargame_odds.analysis)", body, re.MULTILINE), page.name


# -- numbers the docs quote from the code ---------------------------------------------------------------------------
LIBRARY_COUNTS = [
    (re.compile(r"(\d+) of (\d+) units convert"), "converted"),
    (re.compile(r"Of the (\d+) units, (\d+) convert completely"), "units, converted"),
    (re.compile(r"(?:turns|spacecraft)[^:]*: (\d+) of (\d+)\)"), "converted"),
    (re.compile(r"Of the (\d+) army-list formation rows, (\d+) resolve"), "rows, resolved"),
]


def _library_counts() -> dict[str, int]:
    from wargame_odds.analysis.epic.library.formations import formation_status, formations
    from wargame_odds.analysis.epic.library.netea import convert, units

    rows = formations().values()
    return {"units": len(units()), "converted": sum(convert(uid).ok for uid in units()),
            "rows": len(rows), "resolved": sum(formation_status(row) == "ok" for row in rows)}


def test_the_library_counts_the_docs_quote_are_the_codes():
    """Issue 41 §4: every page quoting how much of the NetEA library converts gives the number the code gives
    (docs/decisions.md said 381 of 559 units where docs/library.md said 553)."""
    counts, quoted = _library_counts(), 0
    for page in PAGES:
        text = " ".join(page.read_text(encoding="utf-8").split())
        for pattern, names in LIBRARY_COUNTS:
            for match in pattern.finditer(text):
                numbers = [int(n) for n in match.groups()]
                if names == "converted":  # "N of TOTAL": the converted count of all the units
                    expected = [counts["converted"], counts["units"]]
                else:
                    expected = [counts[name.strip()] for name in names.split(",")]
                assert numbers == expected, f"{page.name}: {match.group(0)!r}; the code counts {expected}"
                quoted += 1
    assert quoted >= 4
