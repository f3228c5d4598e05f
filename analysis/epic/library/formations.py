"""NetEA army-list formations with their points, as Epic scenario formations.

The army lists name a formation's core units in plain English ("Two Nobz, six Boyz and two
Grotz").  :func:`formations` resolves those names to unit ids of the list's forces; a formation is
*buildable* when every part resolves to a fixed number of units.  Choices ("Any four of the
following units: ..."), ranges and transports are left to the user and reported, never guessed.
Points are the core formation's price (the smallest size where the list has several).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from .armies import force_army_rules, list_forces_of, list_initiative
from .netea import PREFIX, army_lists, convert, forces, units

if TYPE_CHECKING:
    import pandas as pd

NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}


def count_word(word: str) -> int:
    """The number an army list writes as ``word``: "a" / "an" (1), digits, or one of :data:`NUMBERS`."""
    word = word.lower()
    return 1 if word in ("a", "an") else int(word) if word.isdigit() else NUMBERS[word]


@dataclass(frozen=True)
class LibraryFormation:
    ref: str  # "netea:LIST/FORMATION"
    army_list: str
    name: str
    text: str  # the list's core-units cell, as written
    points: int | None
    initiative: int | None
    initiative_notes: tuple[str, ...]  # what the data cannot decide about the initiative
    army_rules: tuple[str, ...]
    units: tuple[tuple[str, int], ...]  # (unit id, count); empty when not buildable
    characters: tuple[tuple[str, str], ...]  # (host unit id, character id)
    problem: str | None  # why it is not buildable, None when it is
    notes: tuple[str, ...]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("’", "")).strip("-")


def _norm(name: str) -> str:
    name = re.sub(r"\b(units?|unit)\b", "", name.lower()).strip()
    return name[:-1] if name.endswith("s") else name


def _names(force_ids) -> dict[str, str]:
    """Normalised unit name → unit id over the given forces (first force wins)."""
    out: dict[str, str] = {}
    for fid in force_ids:
        for uid in forces()[fid]["units"]:
            out.setdefault(_norm(units()[uid]["name"]), uid)
    return out


def _parse(text: str, names: dict[str, str]):
    """[(unit id, count)], [(host id, character id)], notes; ValueError saying what does not resolve."""
    notes = []
    if re.search(r"\bplus transport\b", text):
        notes.append("transport not included (add the transport units yourself)")
        text = re.sub(r"\s*plus transport\b", "", text)
    parts = [p.strip() for p in re.split(r",\s*|\s+and\s+", text) if p.strip()]
    found, chars = [], []
    for part in parts:
        m = re.fullmatch(r"(\w+)\s+(.+?)(?:\s+with an? (.+?) character)?", part, flags=re.IGNORECASE)
        if not m or m.group(1).lower() not in NUMBERS:
            raise ValueError(f"not a fixed list of units: {part!r}")
        uid = names.get(_norm(m.group(2)))
        if uid is None:
            raise ValueError(f"unit name {m.group(2)!r} not found in the list's forces")
        found.append((uid, NUMBERS[m.group(1).lower()]))
        if m.group(3):
            cid = names.get(_norm(m.group(3)))
            if cid is None:
                raise ValueError(f"character name {m.group(3)!r} not found in the list's forces")
            chars.append((uid, cid))
    return found, chars, notes


@cache
def formations() -> dict[str, LibraryFormation]:
    """Every army-list formation row, buildable or not, by reference."""
    out: dict[str, LibraryFormation] = {}
    for lst in army_lists():
        names = _names(lst["forces"])
        for row in lst["formations"]:
            if row["row_kind"] not in ("Formation", "Type") or not row["core_units_text"] or row["cost_is_increment"]:
                continue
            ref = f"{PREFIX}{lst['id']}/{_slug(row['type'])}"
            if ref in out:
                continue
            notes = []
            try:
                found, chars, notes = _parse(row["core_units_text"], names)
                problem = None
            except ValueError as exc:
                found, chars, problem = [], [], str(exc)
            if row.get("costs_by_label"):
                notes.append(f"points of the {row['cost_labels'][0]} size")
            sections = list_forces_of(lst["id"], [u for u, _ in found] + [c for _, c in chars], ref)
            initiative, initiative_notes = list_initiative(lst["id"], sections, row["type"], row["type"])
            out[ref] = LibraryFormation(
                ref=ref, army_list=lst["id"], name=row["type"], text=row["core_units_text"],
                points=row["costs"][0] if row["costs"] else None, initiative=initiative,
                initiative_notes=tuple(initiative_notes),
                army_rules=tuple(sorted({r for f in sections for r in force_army_rules(f)})), units=tuple(found),
                characters=tuple(chars), problem=problem, notes=tuple(notes))
    return out


def formation_status(form: LibraryFormation) -> str:
    """"ok", "not buildable: WHY" (the units text), or "cannot model: UNIT (RULES)" for units the
    engine cannot convert (:func:`.netea.convert`)."""
    if form.problem is not None:
        return f"not buildable: {form.problem}"
    ids = dict.fromkeys([uid for uid, _ in form.units] + [cid for _, cid in form.characters])
    lacking = [(uid, conv) for uid in ids if not (conv := convert(uid)).ok]
    if lacking:
        return "cannot model: " + "; ".join(f"{PREFIX}{uid} ({', '.join(u.rule for u in conv.unsupported)})"
                                            for uid, conv in lacking)
    return "ok"


def search_formations(word: str = "") -> pd.DataFrame:
    """Library formations whose reference, name or units text contains ``word`` (case-insensitive)."""
    import pandas as pd  # only the search tables need it: loading a scenario does not

    word = word.lower()
    rows = [{"formation": f.ref, "name": f.name, "points": f.points, "initiative": f.initiative,
             "army_rules": ", ".join(f.army_rules), "units": f.text,
             "status": formation_status(f)}
            for f in formations().values()
            if not word or word in f.ref or word in f.name.lower() or word in f.text.lower()]
    return pd.DataFrame(rows, columns=["formation", "name", "points", "initiative", "army_rules", "units", "status"])


def _flies(unit_id: str) -> bool:
    """An aircraft in flight or a spacecraft: never in an assault (TP 4.1.1), so ``engaged = "out"``."""
    profile = convert(unit_id).profile
    return profile is not None and (profile.aircraft is not None or profile.spacecraft)


def expand_formation(entry: dict, where: str) -> dict:
    """Scenario formation data for ``{library = "netea:LIST/FORMATION", ...}``.

    The library gives name, army list (hence army rules and, unless the data cannot decide it,
    initiative: see :mod:`.armies`), points and unit groups (every unit ``engaged`` as the entry's
    ``engaged`` key says, default ``"bc"``, ``"out"`` for aircraft and spacecraft; or, with ``base_contact = N``,
    the first N ground units in base contact and the rest within 15 cm, TP 1.12.3-1.12.5); any other key of the
    entry overrides.
    """
    entry = dict(entry)
    ref = entry.pop("library")
    given = entry.pop("engaged", None)
    base_contact = entry.pop("base_contact", None)
    form = formations().get(ref) if isinstance(ref, str) else None
    if form is None:
        import difflib

        close = difflib.get_close_matches(str(ref), list(formations()), n=3, cutoff=0.6)
        raise ValueError(f"{where}.library: unknown library formation {ref!r}; allowed: "
                         f"{', '.join(close) or PREFIX + 'LIST/FORMATION'} (list them with: "
                         "wargame-odds formations search WORD)")
    if form.problem is not None:
        raise unbuildable(ref, where, "buildable formations, or its units listed yourself")
    hosts = dict(form.characters)
    groups = [{"unit": PREFIX + uid, "count": n, "engaged": given or ("out" if _flies(uid) else "bc"),
               **({"characters": [PREFIX + hosts[uid]]} if uid in hosts else {})} for uid, n in form.units]
    if base_contact is not None:
        groups = place_in_contact(groups, base_contact, given, where)
    data = {"name": form.name, "army": PREFIX + form.army_list, "points": form.points, "units": groups}
    if not form.initiative_notes:  # decided here, by the formation's type; otherwise notes say why not
        data["initiative"] = form.initiative
    data = {k: v for k, v in data.items() if v is not None}
    data.update(entry)
    return data


def unbuildable(ref: str, where: str, allowed: str) -> ValueError:
    """The error for library formation ``ref``, which cannot be built as the data lists it, saying what is allowed."""
    form = formations()[ref]
    return ValueError(f"{where}.library: library formation {ref!r} ({form.text!r}) cannot be built as it is: "
                      f"{form.problem}; allowed: {allowed}")


def place_in_contact(groups: list[dict], base_contact, given, where: str) -> list[dict]:
    """``base_contact = N``: the first N ground units of ``groups`` (in their order) in base contact, the others
    within 15 cm (TP 1.12.3-1.12.5); a group is split where N falls, its characters going with its first part;
    fliers stay out of the assault.  ValueError naming ``where`` for a wrong N, or with ``engaged`` as well."""
    ground = sum(g["count"] for g in groups if g["engaged"] != "out")
    if given is not None:
        raise ValueError(f"{where}: give engaged or base_contact, not both (base_contact = N puts N units in base "
                         "contact and the rest within 15 cm)")
    if isinstance(base_contact, bool) or not isinstance(base_contact, int) or not 0 <= base_contact <= ground:
        raise ValueError(f"{where}.base_contact: {base_contact!r} is not allowed; allowed: a whole number from 0 to "
                         f"{ground} (the formation's ground units)")
    placed, left = [], base_contact
    for group in groups:
        if group["engaged"] == "out":
            placed.append(group)
            continue
        here = min(group["count"], left)
        left -= here
        parts = [part for part in ({**group, "count": here, "engaged": "bc"},
                                   {**group, "count": group["count"] - here, "engaged": "ff"}) if part["count"]]
        for later in parts[1:]:
            later.pop("characters", None)
        placed += parts
    return placed
