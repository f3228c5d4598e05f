"""The examples shipped inside the package, by name: scenarios, decision definitions, report definitions.

Every file under ``analysis/scenarios/`` is named by its path there without ``.toml``
(``epic/assault_marines_vs_warband``, ``epic/decisions/assault_or_tactical``), a report definition in the
top-level ``reports/`` by ``reports/`` and its file name (``reports/demo``).  Wherever
the program reads a scenario or definition file (:func:`wargame_odds.analysis.intake.scenario.read_toml`), such a name
stands for the shipped file when no file of that name exists, so ``wargame-odds epic epic/assault_marines_vs_warband``
and ``wargame_odds.epic.load("epic/assault_marines_vs_warband")`` work from any folder, a pip install included.
``wargame-odds examples`` lists them (:func:`examples`).
"""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

#: A shipped name: lower-case top folder, then folders and a file name (no suffix, no dots).
_NAME = re.compile(r"[a-z0-9]+(/[A-Za-z0-9_-]+)+")
#: The longest shipped name looked up (the shipped names are far shorter; a longer one is no shipped example,
#: never a path handed to the file system).
MAX_NAME_CHARS = 200


def _roots() -> tuple[tuple[str, Path], ...]:
    """The folders shipped names are read from, each with the start of the names it serves: the report
    definitions (``reports/...``: the repository's top-level ``reports/``, which an install holds as
    ``scenarios/reports``, pyproject.toml's package-dir) and the package's ``scenarios/`` (every other name)."""
    package = Path(str(resources.files("wargame_odds.analysis")))
    scenarios = package / "scenarios"
    reports = scenarios / "reports"
    if not reports.is_dir():  # a checkout: the top-level folder beside analysis/
        reports = package.parent / "reports"
    return (("reports/", reports), ("", scenarios))


def shipped_path(name: str) -> Path | None:
    """The shipped file a name stands for (``epic/assault_marines_vs_warband`` or with ``.toml``), or None."""
    name = str(name)
    if len(name) > MAX_NAME_CHARS:
        return None
    name = name.removesuffix(".toml")
    if not _NAME.fullmatch(name):
        return None
    prefix, root = next((prefix, root) for prefix, root in _roots() if name.startswith(prefix))
    path = root / f"{name.removeprefix(prefix)}.toml"
    try:
        return Path(str(path)) if path.is_file() else None
    except OSError:  # a name the file system refuses (a part too long): no shipped example
        return None


def locate(path: str | Path) -> str | Path:
    """``path`` itself when it is a file (or names nothing shipped, or is no path at all: read_file refuses it),
    else the shipped file it names."""
    # isfile is False for a folder, a path too long or one with a NUL byte: read_file reports them
    if not isinstance(path, (str, os.PathLike)) or os.path.isfile(path):  # isfile never raises an OSError
        return path
    return shipped_path(str(path)) or path


def is_shipped(path: str | Path) -> bool:
    """Whether ``path`` is one of the shipped files (never a place to write next to)."""
    return any(Path(path).resolve().is_relative_to(root.resolve()) for _, root in _roots())


@dataclass(frozen=True)
class Example:
    """One shipped file: its name, what it is, its title and the command that runs it."""

    name: str
    kind: str  # epic, gdb, t9a (scenarios), turn, matrix, compare, rank, list-search, force, report
    title: str
    command: str


#: What the command line does with each kind (``{name}`` is the example's name).
_COMMANDS = {"epic": "wargame-odds epic {name}", "gdb": "wargame-odds gdb {name}", "t9a": "wargame-odds t9a {name}",
             "turn": "wargame-odds epic {name}",
             "matrix": "wargame-odds matrix {name}", "compare": "wargame-odds compare {name}",
             "rank": "wargame-odds rank {name}", "report": "wargame-odds report {name}",
             "list-search": "wargame-odds list-search {name}",
             "force": ""}


def _kind(data: dict) -> str:
    for key, kind in (("cells", "report"), ("attackers", "matrix"), ("option_a", "compare"), ("options", "rank"),
                      ("army", "list-search"), ("candidates", "list-search")):
        if key in data:
            return kind
    if "title" not in data and "name" in data:
        return "force"
    return "turn" if "turn" in data else str(data.get("system"))


def _title(data: dict) -> str:
    """The file's ``title`` (a force's ``name``)."""
    return str(data.get("title", data.get("name", "")))


@lru_cache(maxsize=None)
def examples() -> tuple[Example, ...]:
    """Every shipped example, sorted by name."""
    found = {}
    for prefix, root in _roots():
        for path in root.rglob("*.toml"):
            if "out" not in path.relative_to(root).parts:  # reports/out/: generated, not shipped
                found.setdefault(prefix + path.relative_to(root).with_suffix("").as_posix(), path)
    out = []
    for name, path in sorted(found.items()):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        kind = _kind(data)
        command = _COMMANDS[kind].format(name=name)
        out.append(Example(name, kind, _title(data), command))
    return tuple(out)


def scenario_names() -> list[str]:
    """The names of the shipped scenarios (assaults, turns, charges), for messages and report cells."""
    return [e.name for e in examples() if e.kind in ("epic", "gdb", "t9a", "turn")]
