"""What a formation card of the Epic tab holds and how its edits go into the scenario data the CLI runs.

Plain Python on the scenario's TOML data (no widgets): adding a library unit to a formation
(:func:`add_group`), the profile fields a player changes (armour, CC, FF, a weapon line's count:
:func:`set_profile_value`, :func:`set_weapon_count`), and the library formations with a choice (the parts
and count choices of :mod:`..epic.library.choices`: "One Baneblade or Shadowsword", "Up to three Deathwheels",
"Any eight of the following units: ...", "one with a Chaos Lord or Sorcerer Lord character";
:func:`library_picks`) and the optional transport of a "plus transport" formation (:func:`transport_options`),
all made into a formation by :func:`formation_entry`.  Everything written here is ordinary scenario data: a
downloaded setup runs in the CLI unchanged.
"""
from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from functools import cache

from ..epic.library import PREFIX
from ..epic.library.choices import Choice, Option, Part, built_units, choice_rows, choose, points
from ..epic.library.choices import check_picks as library_check_picks
from ..intake.user_text import printable

#: Where a unit group is when the assault is fought (TP 1.12.3-1.12.5): the scenario's ``engaged`` values, in
#: the words the page shows.
ENGAGEMENTS = {"in base contact": "bc", "within 15 cm": "ff", "not in the assault": "out"}
#: The profile fields a player edits on the page (the D6 roll needed; "–": the unit has no such attack).
PROFILE_FIELDS = ("armour", "cc", "ff")
ROLLS = (2, 3, 4, 5, 6)
#: What a transport does in an assault, as the engine reads the rules (shown on the page and in docs/app.md).
TRANSPORT_NOTE = (
    "A transport in an assault: the units it carries get out to charge (or to counter-charge) and fight as units "
    "of its formation. The transport itself is one more unit of that formation: it attacks with its CC in base "
    "contact or its FF within 15 cm, can be hit and killed, counts when the units of both sides are compared "
    "for the result, and adds to the formation's break point. Place it as you would any other unit: in base "
    "contact, within 15 cm, or not in the assault (left behind).")


class EditError(ValueError):
    """An edit the data cannot take (the page shows its message)."""


# -- the unit library ------------------------------------------------------------------------------------------
@cache
def _library_units() -> dict[str, str]:
    """Label → ``netea:`` reference of every library unit the engine models that can be a group's unit (no
    character: those attach to a group)."""
    from ..epic.library.netea import convert, units

    out = {}
    for uid, unit in units().items():
        conversion = convert(uid)
        if not conversion.ok or conversion.profile is None or conversion.profile.type == "CH":
            continue
        p = conversion.profile
        stats = "/".join(f"{v}+" if v is not None else "–" for v in (p.armour, p.cc, p.ff))
        out[f"{unit['name']} · {p.type} {stats} · {PREFIX}{uid}"] = PREFIX + uid
    return out


def _army_unit_ids(army) -> set[str]:
    """The unit ids of an army list's forces (none for a formation with no ``netea:`` army list)."""
    from ..epic.library.netea import army_lists, forces

    if not isinstance(army, str) or not army.startswith(PREFIX):
        return set()
    lst = next((a for a in army_lists() if a["id"] == army[len(PREFIX):]), None)
    return {uid for fid in (lst or {}).get("forces", []) for uid in forces()[fid]["units"]}


def unit_options(data: dict, text: str, army=None) -> dict[str, str]:
    """Label → unit key of the units a formation may add: the scenario's own ``[units]`` (not characters) and
    the library units whose label holds every word of ``text`` (any case); with no text, the units of the
    formation's army list (``army = "netea:LIST"``) or, without one, every library unit."""
    words = str(text).lower().split()
    own = {f"{printable(key, keep_lines=False)} · this setup's unit": key
           for key, profile in (data.get("units") or {}).items()
           if isinstance(profile, dict) and profile.get("type") != "CH" and not key.startswith(PREFIX)}
    listed = _army_unit_ids(army) if not words else set()
    library = {label: ref for label, ref in _library_units().items()
               if not listed or ref[len(PREFIX):] in listed}
    return {label: key for label, key in {**own, **library}.items() if all(w in label.lower() for w in words)}


def unit_name(key) -> str:
    """A unit as a player reads it: the library unit's name, or the scenario's own unit key."""
    from ..epic.library.netea import units

    if isinstance(key, str) and key.startswith(PREFIX) and key[len(PREFIX):] in units():
        return units()[key[len(PREFIX):]]["name"]
    return str(key)


def is_transport(data: dict, key) -> bool:
    """Whether the unit carries others (its profile's ``transport`` rule)."""
    return "transport" in (profile(data, key) or {}).get("special", [])


# -- groups and profiles ---------------------------------------------------------------------------------------
def _formation(data: dict, i: int) -> dict:
    formations = data.get("formations")
    if not isinstance(formations, list) or not 0 <= i < len(formations) or not isinstance(formations[i], dict):
        raise EditError(f"formations[{i}]: no such formation")
    return formations[i]


def add_group(data: dict, i: int, unit: str, count: int, engaged: str) -> None:
    """Add ``count`` units ``unit`` (a ``netea:`` reference or a key of ``[units]``) to formation ``i``,
    ``engaged`` as the scenario says it (``bc``, ``ff``, ``out``)."""
    formation = _formation(data, i)
    if not unit:
        raise EditError(f"formations[{i}]: pick a unit in the list first (type part of its name)")
    if engaged not in ENGAGEMENTS.values():
        raise EditError(f"formations[{i}]: engaged {engaged!r} is not allowed; allowed: "
                        + ", ".join(f"{v} ({k})" for k, v in ENGAGEMENTS.items()))
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100:
        raise EditError(f"formations[{i}]: {count!r} units is not allowed; allowed: a whole number from 1 to 100")
    formation.setdefault("units", []).append({"unit": unit, "count": count, "engaged": engaged})
    data.setdefault("units", {})


def profile(data: dict, key) -> dict | None:
    """The profile unit ``key`` has in this setup (scenario data): its ``[units]`` entry, or the library's."""
    own = (data.get("units") or {}).get(key)
    if isinstance(own, dict):
        return own
    if isinstance(key, str) and key.startswith(PREFIX):
        from ..epic.library.netea import convert, units

        uid = key[len(PREFIX):]
        if uid in units() and (conversion := convert(uid)).profile is not None:
            return conversion.profile.model_dump(exclude_none=True, exclude_defaults=True) | {"type": conversion.type}
    return None


def _own_key(data: dict, i: int, key: str) -> str:
    """The ``[units]`` key formation ``i``'s groups of unit ``key`` use once their profile is edited: ``key``
    itself when it is the setup's own unit; for a library unit a new key ("Tactical (edited)") holding the
    library profile, which this formation's groups of it now name (other formations keep the library's)."""
    units = data.setdefault("units", {})
    if key in units:
        return key
    base = profile(data, key)
    if base is None:
        raise EditError(f"formations[{i}]: unknown unit {key!r}")
    stem = f"{unit_name(key)} (edited)"
    new, k = stem, 2
    while new in units:
        new, k = f"{stem} {k}", k + 1
    units[new] = copy.deepcopy(base)
    for group in _formation(data, i).get("units", []):
        if isinstance(group, dict) and group.get("unit") == key:
            group["unit"] = new
    return new


def set_profile_value(data: dict, i: int, key: str, field: str, value: int | None) -> str:
    """Set ``field`` (armour, cc, ff: the D6 roll, None for none) of unit ``key`` as formation ``i`` fields it;
    returns the unit's key now (see :func:`_own_key`)."""
    if field not in PROFILE_FIELDS:
        raise EditError(f"units.{key}.{field}: not a field the page edits; allowed: {', '.join(PROFILE_FIELDS)}")
    if value is not None and value not in ROLLS:
        raise EditError(f"units.{key}.{field}: {value!r} is not allowed; allowed: 2 to 6 (the D6 roll), or none")
    if (profile(data, key) or {}).get(field) == value:
        return key
    own = _own_key(data, i, key)
    if value is None:
        data["units"][own].pop(field, None)
    else:
        data["units"][own][field] = value
    return own


def set_weapon_count(data: dict, i: int, key: str, line: int, count: int) -> str:
    """Set how many weapons of ranged line ``line`` unit ``key`` carries (1 to 20), as formation ``i`` fields
    it; returns the unit's key now."""
    weapons = (profile(data, key) or {}).get("weapons", [])
    if not 0 <= line < len(weapons):
        raise EditError(f"units.{key}.weapons[{line}]: no such weapon line")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 20:
        raise EditError(f"units.{key}.weapons[{line}].count: {count!r} is not allowed; allowed: 1 to 20")
    if weapons[line].get("count", 1) == count:
        return key
    own = _own_key(data, i, key)
    data["units"][own]["weapons"][line]["count"] = count
    return own


@cache
def special_rules() -> dict[str, str]:
    """Player words → id of every special rule the engine models (``[modelled]`` of ``special_rules.toml``):
    "Reinforced Armour" → ``reinforced-armour``; each is a toggle on a unit's profile."""
    from ..epic.profiles import special_rule_catalogue

    return {rule.replace("-", " ").title(): rule for rule in sorted(special_rule_catalogue()["modelled"])}


def set_special_rule(data: dict, i: int, key: str, rule: str, on: bool) -> str:
    """Give unit ``key`` special rule ``rule`` (an id of :func:`special_rules`) or take it away, as formation
    ``i`` fields it; returns the unit's key now (see :func:`_own_key`)."""
    if rule not in special_rules().values():
        raise EditError(f"units.{key}.special: {rule!r} is not a rule the page sets; allowed: "
                        + ", ".join(special_rules()))
    special = (profile(data, key) or {}).get("special", [])
    if (rule in special) == bool(on):
        return key
    own = _own_key(data, i, key)
    rules = [r for r in data["units"][own].get("special", []) if r != rule]
    data["units"][own]["special"] = sorted(rules + [rule]) if on else rules
    return own


#: The war-engine fields a player edits, with their bounds (those of the scenario model's profile).
WAR_ENGINE_FIELDS = {"damage_capacity": (1, 20), "void_shields": (0, 12)}


def set_war_engine_value(data: dict, i: int, key: str, field: str, value: int) -> str:
    """Set a war engine's ``damage_capacity`` (1 to 20) or ``void_shields`` (0 to 12) as formation ``i`` fields
    it (TP 3.1, TP-SR Imperial Void Shields); returns the unit's key now."""
    if field not in WAR_ENGINE_FIELDS:
        raise EditError(f"units.{key}.{field}: not a field the page edits; allowed: {', '.join(WAR_ENGINE_FIELDS)}")
    low, high = WAR_ENGINE_FIELDS[field]
    current = profile(data, key) or {}
    if current.get("type") != "WE":
        raise EditError(f"units.{key}.{field}: only a war engine has {field.replace('_', ' ')}; "
                        f"{unit_name(key)} is {current.get('type', 'not a unit of this setup')}")
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EditError(f"units.{key}.{field}: {value!r} is not allowed; allowed: a whole number from {low} to {high}")
    if current.get(field, 0) == value:
        return key
    own = _own_key(data, i, key)
    data["units"][own][field] = value
    return own


# -- characters ------------------------------------------------------------------------------------------------
#: The most characters a group takes (the scenario model's bound).
MAX_CHARACTERS = 4


@cache
def _library_characters() -> dict[str, str]:
    """Label → ``netea:`` reference of every library character the engine models."""
    from ..epic.library.netea import convert, units

    return {f"{unit['name']} · {PREFIX}{uid}": PREFIX + uid for uid, unit in units().items()
            if (conversion := convert(uid)).ok and conversion.profile is not None and conversion.profile.type == "CH"}


def character_options(data: dict, army=None) -> dict[str, str]:
    """Label → key of the characters a group may take: the setup's own characters and the library's, those of the
    formation's army list (``army = "netea:LIST"``) when it has one."""
    own = {f"{printable(key, keep_lines=False)} · this setup's character": key
           for key, unit in (data.get("units") or {}).items()
           if isinstance(unit, dict) and unit.get("type") == "CH" and not key.startswith(PREFIX)}
    listed = _army_unit_ids(army)
    return {**own, **{label: ref for label, ref in _library_characters().items()
                      if not listed or ref[len(PREFIX):] in listed}}


def _group(data: dict, i: int, j: int) -> dict:
    groups = _formation(data, i).get("units")
    if not isinstance(groups, list) or not 0 <= j < len(groups) or not isinstance(groups[j], dict):
        raise EditError(f"formations[{i}].units[{j}]: no such group")
    return groups[j]


def add_character(data: dict, i: int, j: int, character: str) -> None:
    """Attach ``character`` (a ``netea:`` reference or a key of ``[units]``) to group ``j`` of formation ``i``: it
    adds its weapons and abilities to the group's first unit (TP 2.1.1)."""
    group = _group(data, i, j)
    if not character:
        raise EditError(f"formations[{i}].units[{j}]: pick a character in the list first")
    found = profile(data, character)
    if found is None or found.get("type") != "CH":
        raise EditError(f"formations[{i}].units[{j}].characters: {unit_name(character)!r} is not a character; "
                        "allowed: the characters in the list")
    host = profile(data, group.get("unit")) or {}
    if found.get("damage_capacity") is not None and host.get("type") != "WE":
        raise EditError(f"formations[{i}].units[{j}].characters: {unit_name(character)} adds damage capacity and "
                        f"shields, so its host must be a war engine; {unit_name(group.get('unit'))} is "
                        f"{host.get('type', 'not a war engine')}")
    characters = group.setdefault("characters", [])
    if len(characters) >= MAX_CHARACTERS:
        raise EditError(f"formations[{i}].units[{j}].characters: {len(characters)} characters already; allowed: at "
                        f"most {MAX_CHARACTERS} on a group")
    characters.append(character)
    data.setdefault("units", {})


def remove_character(data: dict, i: int, j: int, k: int) -> None:
    """Take character ``k`` off group ``j`` of formation ``i``."""
    characters = _group(data, i, j).get("characters") or []
    if not 0 <= k < len(characters):
        raise EditError(f"formations[{i}].units[{j}].characters[{k}]: no such character")
    del characters[k]
    if not characters:
        _group(data, i, j).pop("characters")


def formation_units(formation: dict) -> list[str]:
    """The distinct unit keys of a formation's groups, in order."""
    return list(dict.fromkeys(g.get("unit") for g in formation.get("units", [])
                              if isinstance(g, dict) and isinstance(g.get("unit"), str)))


# -- library formations with a choice or a transport -----------------------------------------------------------
@dataclass(frozen=True)
class LibraryPick:
    """A library formation the page builds: its parts (each one option the player takes: a fixed unit, "One
    Baneblade or Shadowsword", "Up to three Deathwheels", a character), its count choice ("any eight of the
    following units", None: none) and whether it takes a transport ("plus transport")."""

    ref: str
    name: str
    army_list: str
    points: int | None
    parts: tuple[Part, ...]
    choice: Choice | None
    transport: bool
    notes: tuple[str, ...] = ()  # what the list says beside the units ("Note: ..."), shown under the picks

    @property
    def fixed(self) -> tuple[tuple[str, int], ...]:
        """The units of the parts with one option."""
        return tuple(g for p in self.parts if len(p.options) == 1 for g in p.options[0].units)

    @property
    def alternatives(self) -> tuple[Part, ...]:
        """The parts with several options, in order: one drop-down each on the page."""
        return tuple(p for p in self.parts if len(p.options) > 1)


@cache
def library_picks() -> dict[str, LibraryPick]:
    """The library formations the page builds, by reference (:func:`..epic.library.choices.choice_rows`)."""
    from ..epic.library.formations import formations

    return {ref: LibraryPick(ref, formations()[ref].name, formations()[ref].army_list, formations()[ref].points,
                             row.parts, row.choice, row.transport, row.notes)
            for ref, row in choice_rows().items()}


def chosen_options(pick: LibraryPick, chosen: list[str] | tuple[str, ...] | None) -> list[Option]:
    """The option of every part (:func:`..epic.library.choices.choose`); EditError for a choice it refuses."""
    try:
        return choose(pick.parts, chosen)
    except ValueError as exc:
        raise EditError(f"{pick.name}: {exc}") from None


def _carries(uid: str) -> int:
    """How many infantry units transport ``uid`` carries, as its datasheet notes say ("May transport two
    infantry units"); 1 when they do not say."""
    from ..epic.library.formations import NUMBERS
    from ..epic.library.netea import units

    m = re.search(r"(\w+) infantry units?", units()[uid].get("notes") or "", flags=re.IGNORECASE)
    return NUMBERS.get(m.group(1).lower(), 1) if m else 1


def transport_options(pick: LibraryPick) -> dict[str, str]:
    """Label → unit id of the ground transports of the formation's army list the engine models (none for a
    formation without "plus transport"); transport aircraft (Thunderhawks, landing craft) are formations of
    their own."""
    from ..epic.library.formations import _flies
    from ..epic.library.netea import army_lists, convert, forces, units

    if not pick.transport:
        return {}
    lst = next(a for a in army_lists() if a["id"] == pick.army_list)
    ids = dict.fromkeys(uid for fid in lst["forces"] for uid in forces()[fid]["units"])
    return {f"{units()[uid]['name']} (carries {_carries(uid)})": uid for uid in ids
            if "transport" in units()[uid]["special_rules"] and "AC" not in units()[uid]["type"].split("/")
            and convert(uid).ok and not _flies(uid)}


def transports_needed(pick: LibraryPick, transport: str, picked: dict[str, int] | None = None,
                      chosen: list[str] | None = None) -> int:
    """How many of ``transport`` carry the formation's infantry (its datasheet's capacity; at least 1)."""
    from ..epic.library.netea import convert

    units = [g for o in chosen_options(pick, chosen) for g in o.units] + list((picked or {}).items())
    infantry = sum(n for uid, n in units if convert(uid).type == "INF")
    return max(1, math.ceil(infantry / _carries(transport)))


def check_picks(pick: LibraryPick, picked: dict[str, int]) -> None:
    """EditError unless ``picked`` (unit id → count) is what the choice row allows
    (:func:`..epic.library.choices.check_picks`)."""
    try:
        library_check_picks(pick.choice, picked)
    except ValueError as exc:
        raise EditError(f"{pick.name}: {exc}") from None


def formation_entry(ref: str, side: str, picked: dict[str, int] | None = None,
                    transport: tuple[str, int] | None = None, engaged: str = "bc",
                    chosen: list[str] | None = None) -> dict:
    """Scenario data of library formation ``ref`` with the player's ``chosen`` option of each part with several
    (:func:`chosen_options`), ``picked`` units of its count choice and ``transport`` (unit id, count) for a
    "plus transport" formation; its ground units ``engaged`` as given (aircraft and spacecraft out of the
    assault, TP 4.1.1).  EditError for choices the row does not allow."""
    from ..epic.library.armies import list_forces_of, list_initiative
    from ..epic.library.formations import _flies

    pick = library_picks().get(ref)
    if pick is None:
        raise EditError(f"{ref}: not a library formation the page builds")
    picked = {uid: n for uid, n in (picked or {}).items() if n}
    check_picks(pick, picked)
    options = chosen_options(pick, chosen)
    units = [(uid, n, characters) for uid, n, characters in built_units(pick, options, picked)]
    if transport is not None:
        uid, n = transport
        if uid not in transport_options(pick).values():
            raise EditError(f"{pick.name}: {unit_name(PREFIX + uid)} is not one of its transports; allowed: "
                            + (", ".join(transport_options(pick)) or "none"))
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100:
            raise EditError(f"{pick.name}: {n!r} transports is not allowed; allowed: 1 to 100")
        units.append((uid, n, ()))
    groups = [{"unit": PREFIX + uid, "count": n, "engaged": "out" if _flies(uid) else engaged,
               **({"characters": [PREFIX + c for c in characters]} if characters else {})}
              for uid, n, characters in units]
    entry = {"name": pick.name, "side": side, "army": PREFIX + pick.army_list}
    ids = [uid for uid, _, characters in units for uid in (uid, *characters)]
    sections = list_forces_of(pick.army_list, list(dict.fromkeys(ids)), ref)
    initiative, notes = list_initiative(pick.army_list, sections, pick.name, pick.name)
    if not notes:
        entry["initiative"] = initiative
    if (price := points(pick.points, options)) is not None:
        entry["points"] = price
    entry["units"] = groups
    return entry
