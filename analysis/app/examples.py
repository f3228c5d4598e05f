"""The shipped examples the app opens, by name (``epic/assault_marines_vs_warband``): the files of
:mod:`wargame_odds.analysis.intake.examples`, the only files besides uploads that the app reads."""
from __future__ import annotations

from pathlib import Path

from ..intake.errors import UserError
from ..intake.examples import examples, shipped_path
from ..intake.scenario import read_file

#: Kinds of shipped files the app opens: scenarios, and comparisons of two shipped scenarios.
OPENED = ("epic", "turn", "gdb", "t9a", "compare")


def example_names() -> list[str]:
    """The names of the shipped files of the kinds the app opens."""
    return [e.name for e in examples() if e.kind in OPENED]


def example_text(name: str, source: str = "example") -> str:
    """The TOML text of shipped example ``name`` (read with the CLI's size cap); one :class:`UserError` naming
    it when there is none."""
    path = shipped_path(name) if isinstance(name, str) and not name.endswith(".toml") else None
    if path is None:
        shown = repr(name if len(str(name)) <= 80 else f"{str(name)[:77]}...")
        raise UserError(source, None, f"no shipped example {shown}",
                        "a name such as epic/assault_marines_vs_warband (the app lists them)")
    return read_file(path)


def relative_example(name: str, ref: str, source: str) -> str:
    """The name of the shipped file ``ref`` (a path relative to example ``name``, as a definition names a
    scenario: ``../turns/x.toml``); a path that leaves the shipped folder, or names no shipped file, is refused."""
    parts: list[str] = []
    for part in (Path(name).parent / ref).as_posix().split("/") if isinstance(ref, str) else ["<none>"]:
        if part == "..":
            if not parts:
                parts = ["<outside>"]
                break
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    resolved = "/".join(parts).removesuffix(".toml")
    if not ref or not str(ref).endswith(".toml") or shipped_path(resolved) is None:
        raise UserError(source, None, f"{ref!r} is not a shipped scenario", "files under the shipped examples folder")
    return resolved
