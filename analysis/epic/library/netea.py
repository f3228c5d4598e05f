"""NetEA Tournament Pack units as Epic engine profiles.

:func:`convert` turns a datasheet (stats, special rules and the assault lines of its weapons) into
an :class:`wargame_odds.analysis.epic.profiles.UnitProfile` and reports, rule by rule, what the engine cannot
model (:class:`UnsupportedRule`) and what it drops because it has no assault effect.  Nothing is
dropped silently.  Mapping choices that are data (unsupported types, landed aircraft, rules that are
profile fields, extra ignored rules, reasons) live in ``netea_epic.toml``; the critical-hit texts,
classified into the engine's kinds, in ``netea_criticals.toml``.
"""
from __future__ import annotations

import html
import json
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from . import PREFIX


@cache
def _data(name: str):
    return json.loads(files(__package__).joinpath("netea", name).read_text("utf-8"))


@cache
def mapping() -> dict:
    """The NetEA → engine mapping choices of ``netea_epic.toml``."""
    return tomllib.loads(files(__package__).joinpath("netea_epic.toml").read_text("utf-8"))


@cache
def criticals() -> dict[str, dict]:
    """The classified critical-hit effects of ``netea_criticals.toml``, by datasheet text."""
    entries = tomllib.loads(files(__package__).joinpath("netea_criticals.toml").read_text("utf-8"))["critical"]
    return {e["text"]: e for e in entries}


@cache
def units() -> dict[str, dict]:
    """Every NetEA datasheet by id (559 units)."""
    return {u["id"]: u for u in _data("units.json")}


@cache
def weapons() -> dict[str, dict]:
    """Every NetEA weapon by id."""
    return {w["id"]: w for w in _data("weapons.json")}


@cache
def army_lists() -> list[dict]:
    return _data("army_lists.json")


def army_name(army_list: dict) -> str:
    """An army list's name as a player reads it: the data's HTML markup taken out ("13<sup>th</sup> Black Crusade"
    reads "13th Black Crusade"), its id where it has no name."""
    return html.unescape(re.sub(r"<[^>]*>", "", str(army_list.get("name") or ""))).strip() or army_list["id"]


@cache
def forces() -> dict[str, dict]:
    """Every force section (its units and the special rules it prints) by id."""
    return {f["id"]: f for f in _data("forces.json")}


@dataclass(frozen=True)
class UnsupportedRule:
    """A rule (or weapon property) of a library unit that the engine cannot model."""

    rule: str
    where: str  # "unit", "type" or "weapon <id>"
    reason: str

    def __str__(self):
        return f"{self.rule} ({self.where}: {self.reason})"


@dataclass(frozen=True)
class Conversion:
    """A library unit converted to an engine profile, with everything the conversion could not keep.

    ``profile`` is None only when the unit's type cannot assault at all; otherwise it holds every
    part that could be modelled.  ``ok`` is true when nothing is unsupported.
    """

    id: str
    name: str
    type: str
    profile: object | None  # wargame_odds.analysis.epic.profiles.UnitProfile
    unsupported: tuple[UnsupportedRule, ...]
    ignored: tuple[tuple[str, str], ...]  # (rule, why it has no assault effect)
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.unsupported

    def protection(self) -> list[str]:
        """Damage capacity, shields, fields and critical-hit effect, one line each (war engines and
        shielded units only; ``units show`` prints them)."""
        p = self.profile
        if p is None or (p.type != "WE" and not (p.damage_capacity or p.void_shields or p.power_fields
                                                  or p.shadowfields)):
            return []
        lines = [f"{label}: {value}" for label, value in (
            ("damage capacity", p.damage_capacity), ("void shields", p.void_shields),
            ("power fields", p.power_fields), ("shadowfields", p.shadowfields)) if value]
        if p.type == "WE":
            crit = p.critical
            shown = "none" if crit is None else crit.kind + "".join(
                f", {k} = {v}" for k, v in crit.model_dump(exclude_defaults=True).items() if k != "kind")
            lines.append(f"critical hit: {shown}")
        return lines

    def summary(self) -> str:
        if self.ok:
            return "ok"
        return "cannot model: " + "; ".join(str(u) for u in self.unsupported)


def _reason(rule: str) -> str:
    for prefix, reason in mapping()["unsupported_reasons"].items():
        if rule.startswith(prefix):
            return reason
    return "no assault model for this rule in the engine"


def _mount_count(mount: dict, notes: list[str], weapon_name: str) -> int:
    count = int(mount["multiplier"])
    if mount["multiplier_raw"] is not None:
        count = int(mount["multiplier_min"])
        notes.append(f"{weapon_name} is carried {mount['multiplier_raw']} times: counted {count} "
                     "(give the unit's stats yourself to count another choice)")
    return count


def _assault_modes(weapon: dict, is_we: bool, notes: list[str]) -> list[dict]:
    """The weapon's (bc) and (15cm) modes that apply in an assault, one per 'or' alternative group."""
    chosen = []
    for group in _mode_groups(weapon):
        modes = [m for m in group if m["range_kind"] in ("base_contact", "firefight")]
        ranges = {m["range_kind"] for m in modes}
        # A bc and a (15cm) alternative never apply together to a unit that is not a war engine.
        if len(modes) > 1 and not (len(ranges) == len(modes) and not is_we):
            notes.append(f"{weapon['name']}: alternative assault profiles, the first ({modes[0]['range']} "
                         f"{modes[0]['firepower']}) is used")
            modes = modes[:1]
        chosen += modes
    return chosen


ABILITIES = ("macro_weapon", "titan_killer", "lance", "ignore_cover", "disrupt")
RANGED_KINDS = ("ranged", "unlimited")  # modes that shoot in a turn; "none": weapon mounts, spacecraft attacks
FIRE_VALUES = ("ap", "at", "aa", "mw", "bp")
LINE_FLAGS = {"disrupt": "disrupt", "lance": "lance", "ignore_cover": "ignore_cover", "indirect_fire": "indirect",
              "single_shot": "single_shot", "slow_firing": "slow_firing", "sniper": "sniper"}
NOT_TURN_KEYS = {"guided_missile": "guided missile (fires only at a formation marked by markerlights, TP-SR Tau "
                                   "Technology): not modelled, the line fires like any other",
                 "directed": "directed (fires through a spotter's line of fire, TP-SR Directed): not modelled, "
                             "reach is a scenario input"}


def _mode_groups(weapon: dict) -> list[list[dict]]:
    """The weapon's modes grouped by their 'or' links: one group per mode that fires on its own
    (TP-FAQ Unit Datasheets: "or" modes are alternatives, "and" modes all fire)."""
    groups: list[list[dict]] = []
    for mode in weapon["modes"]:
        if mode["boolean"] == "or" and groups:
            groups[-1].append(mode)
        else:
            groups.append([mode])
    return groups


def _ranged_line(weapon: dict, mode: dict, count: int, notes: list[str]) -> dict:
    """One ``weapons`` line of the turn format from a ranged NetEA mode (epic-shooting §1.1 mapping):
    to-hit values, shots, barrage points, and the abilities; titan killer ``1`` is ``true``."""
    parsed = mode["parsed"]
    line = {"name": weapon["name"], "count": count, "shots": parsed.get("shots", 1),
            "range": mode["range_cm"] if mode["range_kind"] == "ranged" else "unlimited",
            **{k: parsed[k] for k in FIRE_VALUES if k in parsed},
            **{key: True for flag, key in LINE_FLAGS.items() if parsed.get(flag)}}
    tk = parsed.get("titan_killer")
    if tk is not None:
        line["titan_killer"] = True if tk == 1 else tk
    if parsed.get("macro_weapon") and "mw" not in parsed and tk is None:
        if "bp" in parsed or "aa" in parsed:
            line["macro_weapon"] = True
        else:
            notes.append(f"{weapon['name']}: the macro-weapon rule of its {mode['firepower']} line is not modelled "
                         "(its hits are ordinary hits)")
    for flag, why in NOT_TURN_KEYS.items():
        if parsed.get(flag):
            notes.append(f"{weapon['name']}: {why}")
    return line


def _ranged_lines(weapon: dict, count: int, notes: list[str]) -> list[dict]:
    """The ``weapons`` lines of one weapon mount: every ranged mode that fires ("and" modes each a
    line).  Alternatives ("or") that differ only in AP / AT / AA values become one line with a choice
    per weapon (TP 1.9.5); other alternatives keep the first, with a note."""
    lines = []
    for group in _mode_groups(weapon):
        modes = [m for m in group if m["range_kind"] in RANGED_KINDS]
        if not modes:
            continue
        mode = modes[0]
        if len(modes) > 1:
            values = [{k: v for k, v in m["parsed"].items() if k in ("ap", "at", "aa")} for m in modes]
            rest = [{k: v for k, v in m["parsed"].items() if k not in ("ap", "at", "aa")} for m in modes]
            keys = [k for v in values for k in v]
            if all(r == rest[0] for r in rest) and all(values) and len(keys) == len(set(keys)):
                mode = dict(mode, parsed=rest[0] | {k: v for v in values for k, v in v.items()},
                            range_cm=max(m["range_cm"] or 0 for m in modes))
                notes.append(f"{weapon['name']}: its alternative modes "
                             f"{' or '.join(m['firepower'] for m in modes)} are one line, AP/AT/AA chosen per weapon")
            else:
                notes.append(f"{weapon['name']}: alternative ranged modes, the first ({mode['range']} "
                             f"{mode['firepower']}) is used")
        lines.append(_ranged_line(weapon, mode, count, notes))
    return lines


def _spacecraft_lines(weapon: dict, mount: dict, notes: list[str]) -> list[dict]:
    """A spacecraft's attacks as ``weapons`` lines: an orbital bombardment is a barrage line (``bp``,
    macro-weapon), a pin-point attack a direct ``mw`` line with titan killer D3 (TP 4.3.3, 4.3.4).  A mount
    carried ``0–1`` times counts 1: the datasheets print it for a ship armed with either attack, and an
    activation uses one kind only.  Other attacks (the Gravitic Tracer Salvo, a guided missile at a
    marked formation) are left out with a note."""
    lines = []
    for mode in weapon["modes"]:
        parsed = mode["parsed"]
        if parsed.get("guided_missile") or not ("bp" in parsed or "mw" in parsed):
            notes.append(f"{weapon['name']} ({mode['firepower']}) is not an orbital bombardment or a pin-point "
                         "attack: not modelled, left out")
            continue
        count = int(mount["multiplier"])
        if mount["multiplier_raw"] is not None:
            count = int(mount["multiplier_raw"].replace("-", "–").split("–")[-1])
            notes.append(f"{weapon['name']} is carried {mount['multiplier_raw']} times (the ship carries this attack "
                         f"or another): counted {count}; an activation fires one kind of attack")
        lines.append(_ranged_line(weapon, mode, count, notes))
    return lines


def _abilities(parsed: dict) -> dict:
    """The weapon abilities of a parsed NetEA mode as engine keys (TP 2.2.2-2.2.9).

    Titan killer: ``1`` is ``true`` (1 damage per hit), dice stay as written ("D3", "D6", "D6+1").
    """
    found = {name: bool(parsed.get(name)) for name in ABILITIES if name != "titan_killer"}
    tk = parsed.get("titan_killer")
    found["titan_killer"] = False if tk is None else True if tk == 1 else tk
    return found


def field_value(unit: dict, field: str):
    """A datasheet value that becomes a profile field: the unit's own field or its ``rule_values`` entry."""
    return unit[field] if field in unit else unit["rule_values"].get(field)


def _critical(unit: dict, data: dict, unsupported: list, notes: list[str]) -> None:
    """The unit's critical-hit effect from ``netea_criticals.toml`` into ``data["critical"]`` (TP 3.2.3)."""
    text = unit["critical_hit_effect"]
    if not text:
        return
    entry = criticals().get(text)
    if entry is None:
        unsupported.append(UnsupportedRule("critical-hit effect", "unit", "its text is not classified in "
                                           "netea_criticals.toml"))
        return
    if "unsupported" in entry:
        unsupported.append(UnsupportedRule("critical-hit effect", "unit", entry["unsupported"]))
        return
    data["critical"] = entry["effect"]
    if "splash_reach" in entry:
        notes.append(f"critical hit: its splash reaches {entry['splash_reach']}; say how many units that is "
                     "with the formation key within_splash_of (default: nobody)")
    if "reading" in entry:
        notes.append(f"critical hit, reading: {entry['reading']}")
    if "not_modelled" in entry:
        notes.append(f"critical hit, not modelled: {entry['not_modelled']}")


def convert(unit_id: str):
    """Convert the NetEA unit ``unit_id`` (without the ``netea:`` prefix) to a :class:`Conversion`."""
    from ..profiles import UnitProfile, special_rule_catalogue

    try:
        unit = units()[unit_id]
    except KeyError:
        raise KeyError(unit_id) from None
    maps = mapping()
    catalogue = special_rule_catalogue()
    known = set(catalogue["modelled"]) | set(catalogue["no_assault_effect"])
    unsupported: list[UnsupportedRule] = []
    ignored: list[tuple[str, str]] = []
    notes: list[str] = []
    utype = unit["type"]
    landed = utype in maps["landed_aircraft"] and (unit["cc"] is not None or unit["ff"] is not None)
    flying: dict = {}
    if utype in maps["flying_types"] and not landed:
        flying = {"spacecraft": True} if utype == "SC" else {"aircraft": unit["move_class"].lower()}
        notes.append(f"{'a spacecraft' if utype == 'SC' else 'an aircraft in flight'} ({utype}, engine type "
                     f"{maps['flying_types'][utype]}): it acts only in a turn scenario, by "
                     f"{'orbital_bombardment or pin_point' if utype == 'SC' else 'ground_attack'}, and never "
                     "fights an assault (docs/epic-turn.md §9)")
        utype = maps["flying_types"][utype]
    elif landed:
        notes.append(f"an aircraft converted as a landed {maps['landed_aircraft'][utype]} with speed 0: only a "
                     "landed aircraft can be assaulted (TP 4.1.1, 4.2.5)")
        utype = maps["landed_aircraft"][utype]
    elif utype in maps["unsupported_types"]:
        unsupported.append(UnsupportedRule(utype, "type", maps["unsupported_types"][utype]))
        return Conversion(unit_id, unit["name"], utype, None, tuple(unsupported), (), ())

    special: list[str] = []
    fields: dict = {}
    for rule in unit["special_rules"]:
        field = next((f for prefix, f in maps["field_rules"].items() if rule.startswith(prefix)), None)
        if rule in known:
            special.append(rule)
        elif field is not None:
            fields[field] = field_value(unit, field)
        elif rule in maps["ignored_rules"]:
            ignored.append((rule, maps["ignored_rules"][rule]))
        else:
            unsupported.append(UnsupportedRule(rule, "unit", _reason(rule)))

    extra: list[dict] = []
    ranged: list[dict] = []
    own: dict[str, dict] = {}  # abilities of the unit's own CC / FF attack, by profile key
    for mount in unit["weapons"]:
        weapon = weapons()[mount["weapon_id"]]
        if flying.get("spacecraft"):
            ranged += _spacecraft_lines(weapon, mount, notes)
            continue
        modes = _assault_modes(weapon, utype == "WE", notes)
        fires = any(m["range_kind"] in RANGED_KINDS for m in weapon["modes"])
        if not modes and not fires:
            continue
        count = _mount_count(mount, notes, weapon["name"])
        if count == 0:
            continue
        ranged += _ranged_lines(weapon, count, notes)
        for mode in modes:
            parsed = mode["parsed"]
            abilities = _abilities(parsed)
            if "extra_attacks" not in parsed:
                # Properties of the unit's own CC / FF attack (its main dice).
                key = "cc_abilities" if mode["range_kind"] == "base_contact" else "ff_abilities"
                if any(abilities.values()):
                    merged = own.setdefault(key, dict.fromkeys(ABILITIES, False))
                    for name, value in abilities.items():
                        merged[name] = merged[name] or value
                    shown = ", ".join(n.replace("_", " ") + ("" if v is True else f" ({v})")
                                      for n, v in abilities.items() if v)
                    notes.append(f"{weapon['name']}: {shown} on the unit's own "
                                 f"{'close-combat' if key == 'cc_abilities' else 'firefight'} attack")
                for rule in ("first_strike", "sniper"):
                    if parsed.get(rule):
                        special.append(rule.replace("_", "-"))
                        notes.append(f"{weapon['name']}: {rule.replace('_', ' ')} on the unit's own attack; "
                                     "the engine applies it to all of the unit's dice")
                continue
            line = {"range": "bc" if mode["range_kind"] == "base_contact" else "15cm",
                    "first_strike": bool(parsed.get("first_strike")), "sniper": bool(parsed.get("sniper")),
                    "engage_only": weapon["id"] in maps["engage_only_weapons"], **abilities}
            attacks = parsed["extra_attacks"]
            if attacks == "D3":
                extra += [dict(line, count="D3") for _ in range(count)]
            else:
                extra.append(dict(line, count=int(attacks) * count))

    stats = {k: unit[k] for k in ("armour", "cc", "ff")}
    if unit["alt_stats"]:
        if unit_id in maps["assault_alt_stats"]:
            stats.update({k: v for k, v in unit["alt_stats"].items() if k in stats})
            notes.append(f"assault stats used: {maps['assault_alt_stats'][unit_id]}")
        else:
            notes.append(f"alternative stats {unit['alt_stats']} not used (see the datasheet notes)")
    if unit_id in maps["notes_not_modelled"]:
        notes.append(maps["notes_not_modelled"][unit_id])
    speed = 0 if landed or unit["move_class"] == "Immobile" else unit["speed_cm"]
    if unit["notes"] and unit["notes"].startswith("One unit in every two"):
        notes.append(f"{unit['notes']} The weapon line is on every unit: the engine cannot share one weapon "
                     "between two units (TP-FAQ Imperial Guard Forces); give half as many in a scenario profile")
    data = dict(type=utype, **stats, speed=speed, special=sorted(set(special)), extra_attacks=extra,
                weapons=ranged, **own, **flying)
    data.update({k: v for k, v in fields.items() if v is not None})
    if utype == "WE":
        data["damage_capacity"] = unit["damage_capacity"]
        _critical(unit, data, unsupported, notes)
    profile = UnitProfile.model_validate(data)
    return Conversion(unit_id, unit["name"], utype, profile, tuple(unsupported), tuple(ignored), tuple(notes))


def search_units(word: str = "") -> pd.DataFrame:
    """Library units whose id, name or force contains ``word`` (case-insensitive), with their status."""
    import pandas as pd  # only the search tables need it: loading a scenario does not

    word = word.lower()
    rows = []
    for uid, u in units().items():
        if word and word not in uid and word not in u["name"].lower() and not any(word in f for f in u["forces"]):
            continue
        conv = convert(uid)
        rows.append({"unit": PREFIX + uid, "name": u["name"], "type": u["type"], "armour": u["armour"],
                     "cc": u["cc"], "ff": u["ff"], "forces": ", ".join(u["forces"]), "status": conv.summary()})
    return pd.DataFrame(rows, columns=["unit", "name", "type", "armour", "cc", "ff", "forces", "status"])
