"""The shipped examples by name (``epic/assault_marines_vs_warband``, ``epic/turns/...``): the scenario files
under ``analysis/scenarios/``, the only files besides uploads that the app reads."""
from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path

from ..errors import UserError
from ..scenario import read_file

#: An example's name: the system's folder, sub-folders, the file name without ``.toml``; nothing else.
NAME = re.compile(r"[a-z0-9]+(?:/[A-Za-z0-9_-]+)+")


def _root() -> Path:
    return Path(str(resources.files("analysis") / "scenarios"))


@cache
def examples() -> tuple[str, ...]:
    """Every shipped TOML file by name, sorted."""
    root = _root()
    return tuple(sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.toml")))


def example_path(name: str, source: str = "example") -> Path:
    """The file of shipped example ``name``; one :class:`UserError` naming it when there is none."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or name not in examples():
        shown = repr(name if len(str(name)) <= 80 else f"{str(name)[:77]}...")
        raise UserError(source, None, f"no shipped example {shown}",
                        "a name such as epic/assault_marines_vs_warband (the app lists them)")
    return _root() / f"{name}.toml"


def example_text(name: str, source: str = "example") -> str:
    """The TOML text of shipped example ``name`` (read with the CLI's size cap)."""
    return read_file(example_path(name, source))


def relative_example(name: str, ref: str, source: str) -> str:
    """The name of the shipped file ``ref`` (a path relative to example ``name``, as a definition names a
    scenario: ``../turns/x.toml``); a path that leaves the shipped folder, or names no shipped file, is refused."""
    folder = Path(name).parent
    target = (folder / ref).as_posix() if isinstance(ref, str) else ""
    parts: list[str] = []
    for part in target.split("/"):
        if part == "..":
            if not parts:
                parts = ["<outside>"]
                break
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    resolved = "/".join(parts)
    resolved = resolved[:-5] if resolved.endswith(".toml") else resolved + "<no .toml>"
    if resolved not in examples():
        raise UserError(source, None, f"{ref!r} is not a shipped scenario",
                        "files under the shipped examples folder")
    return resolved
