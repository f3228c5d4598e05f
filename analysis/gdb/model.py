"""GdB charge scenarios: the validated TOML model (issue 3 §1) and its rule switches (§2.6, Q-A*)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from ..intake.bounds import Casualties, Distance, Name, Strength, Title, Turns
from ..intake.errors import ArgumentError, UserError
from ..intake.scenario import StrictModel, parse_toml, read_toml, validate

from .tables import Tables, load_tables

Arm = Literal["infantry", "cavalry", "artillery"]
Quality = Literal["guard", "elite", "veteran", "line", "second_line", "militia"]
Formation = Literal["line", "column", "square", "skirmish", "limbered"]
Reaction = Literal["fire", "countercharge", "stand", "turn_to_face", "form_square"]


class Charger(StrictModel):
    name: Name = "charger"
    arm: Arm
    quality: Quality
    formation: Formation
    strength: Strength
    formed: bool = True
    general_attached: bool = False
    formed_support_behind: bool = False
    charge_move: Distance
    distance: Distance
    position: Literal["front", "flank", "rear"] = "front"
    # distances of friends in the retreat path
    friends_behind: list[Distance] = Field(default_factory=list, max_length=16)


class Target(StrictModel):
    name: Name = "target"
    arm: Arm
    quality: Quality
    formation: Formation
    strength: Strength
    formed: bool = True
    in_cover: bool = False
    general_attached: bool = False
    formed_support_behind: bool = False
    fired_last_turn: bool = False
    casualties_this_phase: Casualties = 0
    reaction: Reaction = "stand"
    fallback_reaction: Literal["fire", "stand", "turn_to_face"] = "stand"
    turn_clears_position: bool = True                  # turning to face removes the flank/rear zone (Q-A7)
    form_square_time: Turns | None = None   # overrides the table's time cost (Q-A5)


class Support(StrictModel):
    name: Name = "support"
    arm: Arm
    quality: Quality
    formation: Formation
    strength: Strength
    formed: bool = True
    range: Distance                          # to the charger's half-way point (§2.2)
    priority_target: bool = True                        # Q-A6
    countercharge: bool = False                         # declared a countercharge: never fires (Q-A6)
    fired_last_turn: bool = False


class Rules(StrictModel):
    """Documented variants (docs/gdb.md §2.6 and the Q-A readings); defaults are the recommended ones."""

    countercharge_arms: list[Arm] = Field(default_factory=lambda: ["cavalry"], max_length=3)       # §2.6
    half_move: Literal["half_charge_move", "half_distance"] = "half_charge_move"     # step 1 wording
    retreat_now_fraction: float = Field(default=0.5, gt=0, le=1)                      # §2.6
    flank_bonus_timing: Literal["after_reaction", "at_declaration"] = "after_reaction"  # Q-A7
    catch_retreating: Literal["if_reached", "always", "never"] = "if_reached"          # Q-A8
    square_bonus_while_forming: bool = False                                          # Q-A5 / step 5


class Scenario(StrictModel):
    system: Literal["gdb"]
    title: Title = "GdB charge"
    tables: str = "default"
    scale: str | None = None
    charger: Charger
    target: Target
    supports: list[Support] = Field(default_factory=list, max_length=16)
    rules: Rules = Rules()


@dataclass(frozen=True)
class Model:
    """A scenario with its tables, ready to simulate."""

    scenario: Scenario
    tables: Tables
    source: str = "<string>"

    @property
    def scale(self) -> str:
        return self.scenario.scale or self.tables.default_scale

    def replace(self, path: str | None = None, value=None, /, **update) -> "Model":
        """A copy with one field set by its path (``replace("charger.distance", 6)``, also
        ``tables.…``; paths: wargame_odds.analysis.intake.fieldpath) or scenario fields replaced
        (``replace(charger=...)``), validated and checked again."""
        if path is not None or value is not None:
            return _with_field(self, path, value)
        scenario = self.scenario.model_copy(update=update)
        check(scenario, self.tables, self.source)
        return Model(scenario, self.tables, self.source)


def _with_field(model: Model, field: str, value) -> Model:
    """A copy of ``model`` with ``field`` (``charger.distance``, ``supports[0].range``, ``rules.x``,
    ``tables.morale.charger_mods.general_attached``) set to ``value``, re-validated."""
    from ..intake.fieldpath import EXAMPLES, with_value
    from .tables import check_tables

    if not isinstance(field, str):
        raise ArgumentError("path", field, f"a field path (text), e.g. {EXAMPLES}")
    root = "tables" if field.split(".", 1)[0] == "tables" else "scenario"
    data = with_value({"tables": model.tables.model_dump()} if root == "tables" else model.scenario.model_dump(),
                      field, value, model.source)
    data = data["tables"] if root == "tables" else data
    if root == "tables":
        tables = check_tables(validate(Tables, data, model.tables.source), model.tables.source)
        check(model.scenario, tables, model.source)
        return Model(model.scenario, tables, model.source)
    scenario = validate(Scenario, data, model.source)
    check(scenario, model.tables, model.source)
    return Model(scenario, model.tables, model.source)


def check(s: Scenario, tables: Tables, source: str) -> None:
    """Checks across fields that the field types alone cannot express."""
    c, t = s.charger, s.target
    if c.arm == "artillery":
        raise UserError(source, "charger.arm", "artillery cannot charge", "infantry, cavalry")
    if c.formation in ("square", "limbered"):
        raise UserError(source, "charger.formation", f"a unit in {c.formation} cannot charge",
                        "line, column, skirmish")
    if c.distance > c.charge_move:
        raise UserError(source, "charger.distance", f"{c.distance} is beyond the charge move {c.charge_move}",
                        f"0 < distance <= charger.charge_move ({c.charge_move})")
    if any(d <= 0 for d in c.friends_behind):
        raise UserError(source, "charger.friends_behind", "distances must be positive", "> 0")
    if t.reaction == "countercharge" and t.arm not in s.rules.countercharge_arms:
        raise UserError(source, "target.reaction", f"a {t.arm} target cannot countercharge",
                        "fire, stand, turn_to_face, form_square; countercharge only for "
                        + ", ".join(s.rules.countercharge_arms))
    if t.reaction == "form_square":
        if t.arm != "infantry" or t.formation in ("square", "limbered"):
            raise UserError(source, "target.reaction",
                            f"a {t.arm} target in {t.formation} cannot form square",
                            "form_square only for infantry in line, column or skirmish order")
        if t.form_square_time is None and t.formation not in tables.formation_change_time.square:
            raise UserError(tables.source, "formation_change_time.square",
                            f"no time cost for forming square from {t.formation}",
                            "a time in turns per formation, or target.form_square_time")
    scale = s.scale or tables.default_scale
    if scale not in tables.range_bands:
        raise UserError(source, "scale", f"no range bands for scale {scale!r}", ", ".join(tables.range_bands))


def load(path: str | Path) -> Model:
    """Read a scenario file (a string is always a path), validate it and load its tables (resolved
    beside it)."""
    from ..intake.examples import locate

    data, source = read_toml(path)
    return _model(data, source, Path(locate(path)).parent)


def loads(text: str, source: str = "<string>", base: Path | None = None) -> Model:
    """A scenario given as TOML text; a tables file it names is resolved in ``base`` (default: the
    current folder)."""
    from ..intake.arguments import check_path

    check_path("base", base, none_ok=True)
    return _model(parse_toml(text, source), source, base if base is not None else Path.cwd())


def _model(data: dict, source: str, base: Path) -> Model:
    scenario = validate(Scenario, data, source)
    tables = load_tables(scenario.tables, base, source)
    check(scenario, tables, source)
    return Model(scenario, tables, source)
