"""What the app edits, saves and runs: a *setup* is a scenario's data as its TOML file holds it.

A setup goes to TOML (:func:`to_toml`, the text a player downloads and the CLI runs unchanged) and comes back
from TOML (:func:`parse_setup`: an upload, a shipped example or the page address), and is checked by the
rule system's own ``loads``, the CLI's path, so the app has no validation of its own.
"""
from __future__ import annotations

import base64
import binascii
import importlib
import zlib
from dataclasses import dataclass, field

import tomli_w

from ..intake.errors import UserError
from ..intake.scenario import MAX_FILE_BYTES, parse_toml
from .examples import example_text, relative_example

SYSTEMS = ("epic", "gdb", "t9a")
#: The longest ``setup`` the page address may carry (characters of its URL-safe text).
MAX_URL_CHARS = 64 * 1024
#: Top-level keys of Epic decision definitions and force files, which no scenario has.
DEFINITION_KEYS = frozenset({"option_a", "attackers", "options", "name"})


@dataclass(frozen=True)
class Setup:
    """One scenario of ``system`` as TOML data (``title``, ``formations``, ``charger``, ...)."""

    system: str
    data: dict = field(hash=False)
    #: A General de Brigade setup's own rule tables (the file its ``tables`` names, loaded on the GdB tab).
    tables: object = field(default=None, hash=False, compare=False)

    def toml(self) -> str:
        return to_toml(self.data)

    def model(self, source: str = "setup"):
        """The validated scenario the engines run (:func:`check`)."""
        return check(self.system, self.data, source, self.tables)


@dataclass(frozen=True)
class CompareSetup:
    """Two Epic setups compared side by side (``compare`` without opponents), as the given ``side``."""

    option_a: Setup
    option_b: Setup
    labels: tuple[str, str] = ("option A", "option B")
    side: str = "attacker"


def to_toml(data: dict) -> str:
    """TOML text of setup data (tomli-w: strings escaped, every value as parsed)."""
    return tomli_w.dumps(data)


def check(system: str, data: dict, source: str = "setup", tables=None):
    """The model ``analysis.<system>.loads`` makes of the setup's TOML text: the CLI's validation, every
    bound of the scenario files; one :class:`UserError` naming ``source`` and the field otherwise.  A General
    de Brigade setup whose ``tables`` names a file runs on ``tables``, that file as the GdB tab loaded it
    (:func:`load_gdb_tables`); the app reads no file of a setup's own."""
    if system not in SYSTEMS:
        raise UserError(source, "system", f"unknown system {system!r}", ", ".join(SYSTEMS))
    if system == "gdb" and data.get("tables", "default") != "default":
        if tables is None:
            raise UserError(source, "tables", f"this setup runs on the rule tables {data['tables']!r}, which are not "
                            "loaded", "load that file with 'Your rule tables (TOML)' on the GdB tab first, or "
                            'tables = "default"')
        from ..gdb.model import Model, check as check_gdb

        gdb = importlib.import_module("wargame_odds.analysis.gdb")
        model = gdb.loads(to_toml({**data, "tables": "default"}), source)
        check_gdb(model.scenario, tables, source)
        return Model(model.scenario, tables, source)
    return importlib.import_module(f"wargame_odds.analysis.{system}").loads(to_toml(data), source)


def uploaded_text(data: bytes | None, name: str, expected: str) -> str:
    """An upload's text: one :class:`UserError` naming the file when it is empty (``expected`` says what belongs
    there), over the size cap, or not UTF-8."""
    if not data or not data.strip():
        raise UserError(name, None, "the file is empty", expected)
    if len(data) > MAX_FILE_BYTES:
        raise UserError(name, None, f"file is {len(data)} bytes", f"at most {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(name, None, f"not UTF-8 text (byte {exc.start})") from None


def load_gdb_tables(data: bytes | None, name: str):
    """A player's General de Brigade rule tables from an upload, checked as the CLI's ``load_tables`` checks a
    table file (the size cap, TOML, every field and band; ``wargame-odds gdb-tables check``)."""
    from ..gdb.tables import Tables, check_tables
    from ..intake.scenario import validate

    text = uploaded_text(data, name,
                         "rule tables (wargame-odds gdb-tables template > my_tables.toml writes one to fill in)")
    return check_tables(validate(Tables, parse_toml(text, name), name), name)


def parse_setup(text: str, source: str, gdb_tables: dict | None = None) -> Setup:
    """A setup from TOML text (an upload, a shipped example, the page address): the CLI's size caps and
    checks, then its ``system``'s (a GdB setup naming a table file: on the tables of that name in
    ``gdb_tables``, those the GdB tab loaded)."""
    data = parse_toml(text, source)
    system = data.get("system")
    if system not in SYSTEMS:
        raise UserError(source, "system", f"got {system!r}", ", ".join(SYSTEMS))
    if system == "epic" and DEFINITION_KEYS & set(data):
        raise UserError(source, None, "a decision definition or a force file, not a scenario",
                        "a scenario file (the Compare tab opens the comparison examples)")
    tables = (gdb_tables or {}).get(data.get("tables")) if system == "gdb" else None
    check(system, data, source, tables)
    return Setup(system, data, tables)


def example_setup(name: str) -> Setup | CompareSetup:
    """A shipped example by name: a scenario, or a comparison of two shipped scenarios (a ``compare``
    definition without opponents)."""
    source = f"example {name}"
    text = example_text(name, "example")
    data = parse_toml(text, source)
    if "option_a" in data:
        return compare_example(name, data, source)
    return parse_setup(text, source)


def compare_example(name: str, data: dict, source: str) -> CompareSetup:
    """The two shipped scenarios of a ``compare`` definition ``name`` without opponents."""
    if "opponents" in data:
        raise UserError(source, "opponents", "the app compares two whole scenarios",
                        "a definition with option_a and option_b scenario files")
    options = [example_setup(relative_example(name, data.get(key), f"{source}: {key}"))
               for key in ("option_a", "option_b")]
    labels = data.get("labels") or [option.data.get("title", key) for option, key in zip(options, "AB")]
    side = data.get("side", "attacker")
    return CompareSetup(options[0], options[1], tuple(str(x) for x in labels[:2]), side)


def encode_setup(setup: Setup) -> str:
    """The setup as URL-safe text for the page address (deflated TOML in base64)."""
    return base64.urlsafe_b64encode(zlib.compress(setup.toml().encode("utf-8"), 9)).decode("ascii").rstrip("=")


def decode_setup(text: str, source: str = "the page address", gdb_tables: dict | None = None) -> Setup:
    """The setup :func:`encode_setup` wrote; anything else is one :class:`UserError` (bounded: the address
    holds at most :data:`MAX_URL_CHARS` characters and inflates to at most the CLI's file size cap)."""
    if not isinstance(text, str) or len(text) > MAX_URL_CHARS:
        raise UserError(source, "setup", "too long", f"at most {MAX_URL_CHARS} characters")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflate = zlib.decompressobj()
        raw = inflate.decompress(packed, MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES or inflate.unconsumed_tail:
            raise UserError(source, "setup", "inflates to more than the file size cap",
                            f"at most {MAX_FILE_BYTES} bytes")
        if not inflate.eof:
            raise ValueError("truncated")
        return parse_setup(raw.decode("utf-8"), source, gdb_tables)
    except (binascii.Error, zlib.error, ValueError, UnicodeDecodeError):  # a UserError passes through
        raise UserError(source, "setup", "not a setup this app wrote", "a link the app made") from None
