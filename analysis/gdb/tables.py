"""GdB rule tables as data (docs/gdb.md §2.2, §2.3): TOML in, a validated :class:`Tables` out.

The shipped ``tables_default.toml`` holds the PLACEHOLDER values of §2.3.  A table file is
rejected with one clear line when its bands leave a total uncovered, overlap, or name an unknown
result.
"""
from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import Field

from .bounds import Distance, Modifier, Move, Percent, RangeScale, TableTotal, Turns
from ..intake.errors import UserError
from ..intake.scenario import StrictModel, parse_toml, read_toml, validate

CHARGER_RESULTS = ("PASS", "HALT", "WAVER", "RETREAT", "ROUT")
DEFENDER_RESULTS = ("PASS", "WAVER", "RETREAT", "ROUT")
QUALITIES = ("guard", "elite", "veteran", "line", "second_line", "militia")
FORMATIONS = ("line", "column", "square", "skirmish", "limbered")
ARMS = ("infantry", "cavalry", "artillery")
DEFAULT_TABLES = "tables_default.toml"


class Band(StrictModel):
    min: TableTotal | None = None
    max: TableTotal | None = None
    result: str


class FireBand(StrictModel):
    min: TableTotal | None = None
    max: TableTotal | None = None
    casualty_percent: Percent


class Qualities(StrictModel):
    guard: Modifier
    elite: Modifier
    veteran: Modifier
    line: Modifier
    second_line: Modifier
    militia: Modifier


class CasualtyRule(StrictModel):
    unit: Literal["figures", "percent"]
    step: int = Field(ge=1, le=100)


class ChargerMods(StrictModel):
    flank_position: Modifier
    rear_position: Modifier
    per_casualty_this_phase: Modifier
    disordered: Modifier
    general_attached: Modifier
    formed_support_behind: Modifier
    target_in_cover: Modifier


class DefenderMods(StrictModel):
    charged_in_flank: Modifier
    charged_in_rear: Modifier
    per_casualty_this_phase: Modifier
    disordered: Modifier
    general_attached: Modifier
    formed_support_behind: Modifier
    in_cover: Modifier
    square_vs_cavalry: Modifier


class Morale(StrictModel):
    dice: int = Field(ge=1, le=6)
    charger_bands: list[Band] = Field(min_length=1, max_length=64)
    defender_bands: list[Band] = Field(min_length=1, max_length=64)
    quality: Qualities
    casualties: CasualtyRule
    charger_mods: ChargerMods
    defender_mods: DefenderMods


class FireMods(StrictModel):
    fired_last_turn: Modifier
    at_skirmishers: Modifier
    firer_disordered: Modifier
    at_column: Modifier


class FiringPercent(StrictModel):
    line: Percent
    column: Percent
    square: Percent
    skirmish: Percent
    limbered: Percent


class Fire(StrictModel):
    dice: int = Field(ge=1, le=6)
    bands: list[FireBand] = Field(min_length=1, max_length=64)
    quality: Qualities
    mods: FireMods
    firing_percent: FiringPercent


class RangeBand(StrictModel):
    name: str
    max: Distance
    scale: RangeScale


class ArmBands(StrictModel):
    infantry: list[RangeBand]
    cavalry: list[RangeBand]
    artillery: list[RangeBand]


class Moves(StrictModel):
    retreat: Move
    rout: Move


class ArmMoves(StrictModel):
    infantry: Moves
    cavalry: Moves
    artillery: Moves


class ChangeTime(StrictModel):
    square: dict[Literal["line", "column", "skirmish"], Turns]


class Geometry(StrictModel):
    base_depth: Distance


class Tables(StrictModel):
    """Every number of the charge sequence that the rulebook fixes (§2.3 keys)."""

    placeholder: bool
    name: str = ""
    default_scale: str
    morale: Morale
    fire: Fire
    range_bands: dict[str, ArmBands] = Field(min_length=1, max_length=16)
    moves: ArmMoves
    formation_change_time: ChangeTime
    geometry: Geometry
    source: str = ""


def _check_bands(bands, field: str, source: str, results=None):
    """Bands must cover every integer total exactly once (open lowest/highest ends)."""
    for i, b in enumerate(bands):
        if results is not None and b.result not in results:
            raise UserError(source, f"{field}[{i}].result", f"unknown result {b.result!r}", ", ".join(results))
        if b.min is not None and b.max is not None and b.min > b.max:
            raise UserError(source, f"{field}[{i}]", f"min {b.min} is above max {b.max}", "min <= max")
    order = sorted(range(len(bands)), key=lambda i: -10**9 if bands[i].min is None else bands[i].min)
    first = bands[order[0]]
    if first.min is not None:
        raise UserError(source, field, f"totals below {first.min} are not covered",
                        "the lowest band must omit 'min'")
    for a, b in zip(order, order[1:]):
        lo, hi = bands[a], bands[b]
        if lo.max is None or hi.min is None or hi.min <= lo.max:
            at = hi.min if hi.min is not None else (lo.max if lo.max is not None else lo.min)
            raise UserError(source, field, f"bands {a} and {b} overlap at total {at}",
                            "each total in exactly one band")
        if hi.min > lo.max + 1:
            raise UserError(source, field, f"totals {lo.max + 1}..{hi.min - 1} are not covered",
                            "contiguous bands")
    last = bands[order[-1]]
    if last.max is not None:
        raise UserError(source, field, f"totals above {last.max} are not covered",
                        "the highest band must omit 'max'")


def band_lookup(bands, total: int):
    """The band holding ``total`` (bands already validated)."""
    for b in bands:
        if (b.min is None or total >= b.min) and (b.max is None or total <= b.max):
            return b
    raise AssertionError("validated bands cover every total")


TEMPLATE_HEADER = """\
# General de Brigade rule tables: a template to fill in from your rulebook.
#
# Written by `wargame-odds gdb-tables template` from the tables the program ships, so it holds
# every table and number the charge sequence reads, each with a comment saying where it is used.
# The numbers below are PLACEHOLDERS, NOT General de Brigade's.  docs/gdb.md ("Filling in the rule
# tables") says which rulebook table each section comes from.  Replace the numbers, set
# `placeholder = false`, check the file with `wargame-odds gdb-tables check FILE`, and point a
# scenario at it with `tables = "FILE"` (a path relative to the scenario file).
"""


def template_text() -> str:
    """The shipped tables file with its header replaced by filling-in instructions (issue 12 §6):
    generated, so it never drifts from the tables the engines read."""
    text = files("wargame_odds.analysis.gdb").joinpath(DEFAULT_TABLES).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    first_value = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return TEMPLATE_HEADER + "".join(lines[first_value:])


def load_tables(spec: str = "default", base: Path | None = None, source: str = "<scenario>") -> Tables:
    """Load the shipped tables (``"default"``) or a user's file (relative to ``base``)."""
    if spec == "default":
        path = files("wargame_odds.analysis.gdb").joinpath(DEFAULT_TABLES)
        src = f"analysis/gdb/{DEFAULT_TABLES}"
        data = parse_toml(path.read_text(encoding="utf-8"), src)
    else:
        path = Path(spec)
        if not path.is_absolute() and base is not None:
            path = base / path
        if not os.path.exists(path):  # other problems (a folder, a FIFO, too large): read_toml's line
            raise UserError(source, "tables", f"table file {str(path)!r} not found",
                            "\"default\" or a path to a TOML table file, relative to the scenario file")
        data, src = read_toml(path)
    return check_tables(validate(Tables, data, src), src)


def check_tables(tables: Tables, src: str) -> Tables:
    """Checks the field types cannot express: band coverage, known results and scales (§2.3)."""
    _check_bands(tables.morale.charger_bands, "morale.charger_bands", src, CHARGER_RESULTS)
    _check_bands(tables.morale.defender_bands, "morale.defender_bands", src, DEFENDER_RESULTS)
    _check_bands(tables.fire.bands, "fire.bands", src)
    if tables.default_scale not in tables.range_bands:
        raise UserError(src, "default_scale", f"scale {tables.default_scale!r} has no range bands",
                        ", ".join(tables.range_bands))
    for scale, arms in tables.range_bands.items():
        for arm in ARMS:
            bands = getattr(arms, arm)
            for i, (a, b) in enumerate(zip(bands, bands[1:])):
                if b.max <= a.max:
                    raise UserError(src, f"range_bands.{scale}.{arm}[{i + 1}].max",
                                    f"{b.max} is not beyond the previous band's {a.max}",
                                    "bands nearest first, max strictly increasing")
    return tables.model_copy(update={"source": src})
