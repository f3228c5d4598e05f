"""Army rules and initiative of scenario formations built from NetEA library units.

A NetEA army list draws on force sections (``forces.json``); each section prints the army rules
of its units (They Shall Know No Fear, Mob Rule), and the list gives an initiative rating with
exceptions.  :func:`resolve_army` applies them to one scenario formation (as data, before
validation):

- ``army = "netea:LIST"``: the list's army rules and initiative, unless the formation sets
  ``army_rules`` / ``initiative`` itself;
- neither ``army`` nor ``army_rules``: the army rules of the forces that list the formation's
  library units when they all agree (said in a note), otherwise an error asking for one of them.

An initiative exception applies when it names the formation's whole force section (data:
``[initiative_exception_forces]``) or, for an army-list formation, its type; the others, and rating
modifiers the engine does not already cover (``[initiative_modifiers_covered]``), become notes.
Which force rules are engine army rules is data too (``[army_rules]`` of ``netea_epic.toml``).
"""
from __future__ import annotations

import difflib
import re
from functools import cache

from . import group_refs
from .netea import PREFIX, army_lists, forces, mapping, units


@cache
def _lists() -> dict[str, dict]:
    return {lst["id"]: lst for lst in army_lists()}


def force_army_rules(force_id: str) -> tuple[str, ...]:
    """The engine army rules a force section prints (``[army_rules]`` of ``netea_epic.toml``)."""
    engine_ids = mapping()["army_rules"]
    return tuple(sorted({engine_ids[r] for r in forces()[force_id]["special_rules"] if r in engine_ids}))


def library_unit_ids(formation: dict) -> list[str]:
    """Library unit ids (without ``netea:``) of a formation's groups and characters, in order."""
    found = []
    for group in formation.get("units") or []:
        for _, ref in group_refs(group):
            if isinstance(ref, str) and ref.startswith(PREFIX) and ref[len(PREFIX):] in units():
                found.append(ref[len(PREFIX):])
    return list(dict.fromkeys(found))


def _rating(text: str) -> int:
    return int(re.match(r"(\d)", text).group(1))


def list_forces_of(list_id: str, unit_ids: list[str], where: str) -> list[str]:
    """The list's force sections that hold the formation's units (the list's own first force
    when it has no library unit); ValueError naming ``where`` for a unit the list does not hold."""
    lst = _lists()[list_id]
    if not unit_ids:
        return lst["forces"][:1]
    chosen = []
    for uid in unit_ids:
        holding = [f for f in lst["forces"] if f in units()[uid]["forces"]]
        if not holding:
            lists = [PREFIX + i for i, other in _lists().items() if set(other["forces"]) & set(units()[uid]["forces"])]
            raise ValueError(f"{where}: library unit {PREFIX}{uid} is in none of the forces of army list "
                             f"{PREFIX}{list_id} ({', '.join(lst['forces'])}); allowed: "
                             f"{', '.join(lists) or 'no army list holds it: set army_rules and initiative'}")
        chosen += holding
    return list(dict.fromkeys(chosen))


def _names_type(phrase: str, library_type: str | None) -> bool:
    """Whether an exception phrase ("Avatar, Aspect Warrior, Phantom, Revenants and Warlock
    formations") names the army-list formation type (without its "0–1" limit)."""
    if library_type is None or "except" in phrase:
        return False
    kind = re.sub(r"^\d+\s*[–-]\s*\d+\s+", "", library_type)
    kind = kind[:-1] if kind.endswith("s") else kind  # "Tzeentch Doomwings" in "Tzeentch Doomwing, ..."
    return re.search(rf"\b{re.escape(kind)}s?\b", phrase, flags=re.IGNORECASE) is not None


def list_initiative(list_id: str, sections: list[str], name: str,
                    library_type: str | None = None) -> tuple[int, list[str]]:
    """The list's initiative rating for a formation drawn from force ``sections`` (and, for an
    army-list formation, of type ``library_type``), and notes on what the data cannot decide
    (exceptions naming other formation types, rating modifiers the engine does not cover)."""
    lst = _lists()[list_id]
    exception_forces = mapping()["initiative_exception_forces"]
    rating, notes = _rating(lst["initiative"]), []
    for exception in lst["initiative_by_formations"]:
        phrase = exception["formations"]
        force = exception_forces.get(phrase)
        if force is not None:
            if set(sections) == {force}:
                rating = _rating(exception["initiative"])
        elif _names_type(phrase, library_type):
            rating = _rating(exception["initiative"])
        else:
            notes.append(f"{name}: initiative {lst['initiative']} from {PREFIX}{list_id}, whose list rates "
                         f"{phrase} {exception['initiative']}: set initiative if it is one of them")
    if lst["initiative_has_modifiers"] and list_id not in mapping()["initiative_modifiers_covered"]:
        notes.append(f"{name}: initiative from {PREFIX}{list_id}, whose rating also has modifiers or "
                     "conditions the data does not hold: check it against the army list")
    return rating, notes


def _unknown_list(ref, where: str) -> ValueError:
    ids = [PREFIX + i for i in _lists()]
    close = difflib.get_close_matches(str(ref), ids, n=3, cutoff=0.6)
    return ValueError(f"{where}.army: unknown army list {ref!r}; allowed: {', '.join(close or ids[:3] + ['...'])} "
                      "(the LIST part of: wargame-odds formations search WORD)")


def resolve_army(formation: dict, where: str) -> tuple[dict, list[str]]:
    """The formation with its army rules and initiative filled in from the library, and notes.

    ``army_rules`` and ``initiative`` the formation sets are kept; ``army_rules = []`` means none.
    """
    if not isinstance(formation, dict):
        return formation, []
    name = formation.get("name", where)
    unit_ids = library_unit_ids(formation)
    out, notes = dict(formation), []
    if formation.get("army") is not None:  # a dumped model carries army = None
        ref = formation["army"]
        if not (isinstance(ref, str) and ref.startswith(PREFIX) and ref[len(PREFIX):] in _lists()):
            raise _unknown_list(ref, where)
        list_id = ref[len(PREFIX):]
        sections = list_forces_of(list_id, unit_ids, f"{where}.army")
        if "army_rules" not in formation:
            out["army_rules"] = sorted({r for f in sections for r in force_army_rules(f)})
        if "initiative" not in formation:
            out["initiative"], notes = list_initiative(list_id, sections, name)
        return out, notes
    if "army_rules" in formation or not unit_ids:
        return out, notes
    by_force = {f: force_army_rules(f) for uid in unit_ids for f in units()[uid]["forces"]}
    if len(set(by_force.values())) > 1:
        holders = {rules: sorted(f for f in by_force if by_force[f] == rules) for rules in set(by_force.values())}
        shown = "; ".join(f"{', '.join(rules) or 'none'} in {', '.join(ids)}" for rules, ids in sorted(holders.items()))
        raise ValueError(f"{where}: formation {name!r}: the forces that list its library units have different "
                         f"army rules ({shown}); allowed: army = \"{PREFIX}<army-list>\" (the LIST part of "
                         "wargame-odds formations search WORD), or army_rules = [...] (army_rules = [] for none)")
    rules = sorted(next(iter(by_force.values()), ()))
    out["army_rules"] = rules
    if rules:
        units_text = ", ".join(PREFIX + u for u in unit_ids)
        notes.append(f"{name}: army rules {', '.join(rules)} applied: every force that lists {units_text} has "
                     "them (set army = \"netea:LIST\" or army_rules to choose)")
    return out, notes
