"""Army-list formations whose units text leaves a choice to the player, read into parts a player picks from.

:func:`.formations.formations` builds a formation only when its text is a fixed list of units.  Many rows
print a choice instead; :func:`choice_rows` reads them (and the fixed rows, as one-option parts) into:

- *parts*, each a list of options of which the player takes one: "One Baneblade or Shadowsword" (two options),
  "Three Bombards or Manticores" (three of one kind), "Up to three Deathwheels" / "Between four and six
  Terminators" / "Two to three Raven Fighters" / "Four or six Ravagers" (one option per count), "One Hive
  Tyrant or two Tyranid Warriors", "Eight Fire Warriors or six Fire Warriors and three Devilfish" (packages),
  "One of the following units: The Deceiver, The Nightbringer"; a fixed unit is a part with one option;
- characters: "one with a Chaos Lord or Sorcerer Lord character" (a part whose options are characters,
  joining the first group of the part before it: TP 2.1.1, a character is added to a unit), "and one Necron
  Lord character" (joining the formation's first group);
- a count choice, "any eight of the following units: ..." or "between four and eight of ...": a number of each
  allowed unit, from ``low`` to ``high`` units in all (:class:`Choice`).

A row is read only when every name resolves to a unit of the list's forces; anything else (trenches,
"Leman Russ variants", dice counts) stays unbuildable, with the reason :func:`.formations.formation_status`
gives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .armies import list_forces_of, list_initiative
from .formations import NUMBERS, _flies, _names, _norm, count_word, formation_status, formations, unbuildable
from .netea import PREFIX, army_lists, convert, units

COUNT = r"(?:an?|\d+|" + "|".join(NUMBERS) + r")"


@dataclass(frozen=True)
class Choice:
    """A count choice: from ``low`` to ``high`` units in all, of the ``allowed`` unit ids."""

    low: int
    high: int
    allowed: tuple[str, ...]


@dataclass(frozen=True)
class Option:
    """One way to fill a part: unit groups (unit id, count), or a character joining a host group."""

    label: str  # as a player reads it: "3 Manticores", "Chaos Lord", "6 Fire Warriors + 3 Devilfish"
    units: tuple[tuple[str, int], ...] = ()
    character: str | None = None
    points: int | None = None  # the formation's points with this option, where the list prices its counts


@dataclass(frozen=True)
class Part:
    """A part of a formation's units: one of its ``options``.  A character part's ``host`` is the index of the
    part whose first group it joins (None: the formation's first group)."""

    text: str  # the words of the row it reads
    options: tuple[Option, ...]
    host: int | None = None


@dataclass(frozen=True)
class ChoiceRow:
    """A library formation as parts to choose from, a count choice (or None) and whether it takes a transport."""

    ref: str
    parts: tuple[Part, ...]
    choice: Choice | None
    transport: bool
    notes: tuple[str, ...] = ()

    @property
    def chooses(self) -> bool:
        """Whether the player chooses anything: a count choice or a part with several options."""
        return self.choice is not None or any(len(p.options) > 1 for p in self.parts)


def _label(uid: str, n: int) -> str:
    """"Baneblade", "3 Manticores", "6 Boyz", "3 Devilfish": the datasheet's name, counted."""
    name = units()[uid]["name"]
    return name if n == 1 else f"{n} {name if name.endswith(('s', 'z', 'i', 'fish')) else name + 's'}"


def _resolve(names: dict[str, str], text: str) -> str:
    """The unit id a name means in the list's forces: the exact name (a plural's "s" dropped), a plural in
    "es", or the one unit whose name starts with it ("Questor" → Questor Titan); ValueError otherwise."""
    key = _norm(text.strip().replace("’", "'"))
    for candidate in (key, key[:-1] if key.endswith("e") else key):
        if candidate in names:
            return names[candidate]
    starting = {uid for name, uid in names.items() if name.startswith(key + " ")}
    if len(starting) == 1:
        return starting.pop()
    raise ValueError(f"unit name {text.strip()!r} not found in the list's forces")


FOLLOWING = re.compile(r"[,\s]*(?:\b(?:plus|and)\s+)?(?:(?P<upto>up to )?any (?P<n>\w+)|between (?P<lo>\w+) and "
                       r"(?P<hi>\w+)|(?P<one>one)) of (?:any of )?the following(?: units?)?:\s*(?P<allowed>.+)$",
                       flags=re.IGNORECASE)


def _following(text: str, names: dict[str, str]) -> tuple[str, Choice | None, list[str]]:
    """The text before an "of the following units" clause, the clause's :class:`Choice` and notes (the
    sentences after the list)."""
    m = FOLLOWING.search(text)
    if m is None:
        return text, None, []
    allowed_text, *rest = re.split(r"\.\s+", m["allowed"], maxsplit=1)
    words = [w.lower() for w in (m["n"], m["lo"], m["hi"]) if w]
    if any(w not in NUMBERS for w in words):
        raise ValueError(f"not a number of units: {m.group(0).strip()!r}")
    if m["one"]:
        low = high = 1
    elif m["lo"]:
        low, high = NUMBERS[m["lo"].lower()], NUMBERS[m["hi"].lower()]
    else:
        low = high = NUMBERS[m["n"].lower()]
    if m["upto"]:
        low = 1
    allowed = [_resolve(names, p) for p in re.split(r"\s*(?:,|/|\bor\b)\s*", allowed_text) if p.strip()]
    return text[:m.start()], Choice(low, high, tuple(dict.fromkeys(allowed))), rest


def _counts(word: str) -> list[int]:
    """"three" → [3]; a range "one–three" (from "up to three", "two to three", "between four and six") → 1, 2, 3."""
    low, _, high = word.partition("–")
    return list(range(count_word(low), count_word(high) + 1)) if high else [count_word(low)]


def _alternatives(text: str, names: dict[str, str], counts: list[int] | None = None
                  ) -> tuple[list[tuple[list[int], str]], bool]:
    """The (counts, unit id) of each alternative of a part ("three Bombards or Manticores": each inherits the
    last count, ``counts`` before the first), and whether they are characters (the part ends with "character",
    or every one is a character)."""
    is_character = bool(re.search(r"\bcharacters?$", text))
    text = re.sub(r"\s*\bcharacters?$", "", text)
    found = []
    for alt in re.split(r"\s*,\s*|\s+or\s+", text):
        m = re.fullmatch(rf"({COUNT}(?:–{COUNT})?)\s+(?:unit of\s+)?(.+)", alt, flags=re.IGNORECASE)
        if m:
            counts, alt = _counts(m.group(1)), m.group(2)
        if counts is None:
            raise ValueError(f"not a number of units: {alt!r}")
        found.append((counts, _resolve(names, alt)))
    return found, is_character or all(units()[uid]["type"] == "CH" for _, uid in found)


def _units_part(text: str, names: dict[str, str], package: list[str]) -> Part:
    """A part of units: one option per alternative and count; ``package`` holds the fixed units bound to the
    last alternative ("or six Fire Warriors and three Devilfish")."""
    alts, _ = _alternatives(text, names)
    extra = [(uid, n) for bound in package for counts, uid in _alternatives(bound, names)[0] for n in counts]
    options = []
    for k, (counts, uid) in enumerate(alts):
        for n in counts:
            groups = ((uid, n), *(extra if k == len(alts) - 1 else ()))
            options.append(Option(" + ".join(_label(u, c) for u, c in groups), groups))
    return Part(" and ".join([text, *package]).replace("–", " to "), tuple(options))  # "four to eight Raptors"


def _character_part(text: str, names: dict[str, str], host: int | None) -> Part:
    alts, _ = _alternatives(text, names, [1])
    if any(counts != [1] for counts, _ in alts):
        raise ValueError(f"more than one character: {text!r}")
    return Part(text, tuple(Option(units()[uid]["name"], character=uid) for _, uid in alts), host)


def _split(text: str) -> list[tuple[str, str]]:
    """(separator before it, piece) of a units text cut at commas and "and"s, a range made one word first."""
    text = re.sub(r"\bbetween (\w+) and (\w+)\b", r"\1–\2", text, flags=re.IGNORECASE)
    text = re.sub(rf"\b({COUNT}) to ({COUNT})\b", r"\1–\2", text, flags=re.IGNORECASE)
    text = re.sub(r"\bup to (\w+)\b", r"one–\1", text, flags=re.IGNORECASE)
    pieces = re.split(r"(,\s*(?:and\s+)?|\s+and\s+)", text)
    return [("" if k == 0 else pieces[k - 1].strip() or ",", p.strip()) for k, p in enumerate(pieces) if k % 2 == 0]


def read_row(text: str, names: dict[str, str]) -> tuple[list[Part], Choice | None, bool, list[str]]:
    """The parts, count choice, transport flag and notes of a formation's units text; ValueError saying what
    does not read."""
    aside = re.compile(r"\s+Note:(.*)$|\s*\(([^()]*)\)$")  # a note or a parenthesis after the units
    notes = [(m.group(1) or m.group(2)).strip() for m in aside.finditer(text.strip())]
    text = aside.sub("", text.strip()).rstrip(".")
    transport = bool(re.search(r"\bplus transport\b", text))
    text = re.sub(r",?\s*plus transport\b", "", text)
    text, choice, after = _following(text, names)
    notes += after
    if choice is not None and choice.high == 1:  # "one of the following units": a part of single units
        parts = [Part(text, tuple(Option(_label(uid, 1), ((uid, 1),)) for uid in choice.allowed))]
        text, choice = "", None
    else:
        parts = []
    pieces: list[list[str]] = []  # each: a part's text, then the texts bound to it
    for sep, piece in _split(text.strip(" ,")) if text.strip(" ,") else []:
        if not pieces and not re.match(rf"{COUNT}\b", piece, flags=re.IGNORECASE):
            piece = f"one {piece}"  # "Lunar Class Cruiser or Emperor Class Battleship": one of them
        piece = re.sub(r"^either\s+", "", piece, flags=re.IGNORECASE)
        starts = re.match(rf"{COUNT}\b", piece, flags=re.IGNORECASE) or piece.lower().startswith("one with ")
        if not starts and pieces:  # "Baneblade, Shadowsword or Stormsword": one part
            pieces[-1][0] += f", {piece}"
        elif sep == "and" and pieces and re.search(rf"\bor\s+{COUNT}\s", pieces[-1][0], flags=re.IGNORECASE):
            pieces[-1].append(piece)  # "or six Fire Warriors and three Devilfish": a package
        else:
            pieces.append([piece])
    unit_parts: list[int] = []
    for piece, *package in pieces:
        if m := re.fullmatch(r"one with an? (.+?)(?: character)?", piece, flags=re.IGNORECASE):
            parts.append(_character_part(m.group(1), names, unit_parts[-1] if unit_parts else None))
            continue
        if m := re.fullmatch(rf"({COUNT}) or ({COUNT}) (.+)", piece, flags=re.IGNORECASE):  # "Four or six Ravagers"
            uid = _resolve(names, m.group(3))
            parts.append(Part(piece, tuple(Option(_label(uid, n), ((uid, n),))
                                           for n in (count_word(m.group(1)), count_word(m.group(2))))))
            unit_parts.append(len(parts) - 1)
            continue
        if _alternatives(piece, names)[1]:
            parts.append(_character_part(piece, names, None))
            continue
        parts.append(_units_part(piece, names, package))
        unit_parts.append(len(parts) - 1)
    if not unit_parts and choice is None and not any(o.units for p in parts for o in p.options):
        raise ValueError("no units")
    return parts, choice, transport, notes


def _fixed(form) -> list[Part]:
    """A buildable formation's units and characters as one-option parts (a character after its host)."""
    hosts = dict(form.characters)
    parts: list[Part] = []
    for uid, n in form.units:
        parts.append(Part(_label(uid, n), (Option(_label(uid, n), ((uid, n),)),)))
        if uid in hosts:
            parts.append(Part(units()[hosts[uid]]["name"], (Option(units()[hosts[uid]]["name"],
                                                                  character=hosts[uid]),), len(parts) - 1))
    return parts


def _priced(parts: list[Part], row: dict) -> list[Part]:
    """The parts with the formation's points on each option of the first part that counts one unit kind, as the
    list prices it: "275 points each", "175 points for four +35 points per extra", "250 or 350 points" (one
    price per option)."""
    cost = " ".join(row.get("cost_text") or [])
    for k, part in enumerate(parts):
        counts = [o.units[0][1] if len(o.units) == 1 else None for o in part.options]
        if len(part.options) < 2 or None in counts or len({o.units[0][0] for o in part.options}) > 1:
            continue
        if m := re.fullmatch(r"(\d+) points each", cost):
            prices = [n * int(m.group(1)) for n in counts]
        elif m := re.fullmatch(r"(\d+) points for (\w+) \+(\d+) points per extra", cost):
            prices = [int(m.group(1)) + (n - count_word(m.group(2))) * int(m.group(3)) for n in counts]
        elif len(row.get("costs") or []) == len(counts) and " or " in cost:
            prices = list(row["costs"])
        else:
            return parts
        options = tuple(Option(o.label, o.units, o.character, p) for o, p in zip(part.options, prices))
        return [*parts[:k], Part(part.text, options, part.host), *parts[k + 1:]]
    return parts


@cache
def choice_rows() -> dict[str, ChoiceRow]:
    """Every library formation that can be built, by reference: the buildable ones (one option per part) and
    every choice row that reads, when the engine models all of its units (:func:`.netea.convert`)."""
    lists = {lst["id"]: lst for lst in army_lists()}
    out = {}
    for ref, form in formations().items():
        transport = bool(re.search(r"\bplus transport\b", form.text))
        if form.problem is None:
            if formation_status(form) == "ok":
                out[ref] = ChoiceRow(ref, tuple(_fixed(form)), None, transport)
            continue
        try:
            parts, choice, transport, notes = read_row(form.text, _names(lists[form.army_list]["forces"]))
        except ValueError:
            continue
        row = next(r for r in lists[form.army_list]["formations"]
                   if r["row_kind"] in ("Formation", "Type") and r["type"] == form.name)
        parts = _priced(parts, row)
        ids = [u for p in parts for o in p.options for u, _ in o.units] + [
            o.character for p in parts for o in p.options if o.character] + list(choice.allowed if choice else ())
        if all(convert(uid).ok for uid in ids):
            out[ref] = ChoiceRow(ref, tuple(parts), choice, transport, tuple(notes))
    return out


#: The most units a count choice takes in all (a formation has at most 100 units a group).
MAX_PICKED = 100


def choose(parts: tuple[Part, ...], chosen: list[str] | tuple[str, ...] | None) -> list[Option]:
    """The option of every part: ``chosen`` names one (its label) for each part with several options, in order;
    None takes the first of each.  ValueError for a label a part does not offer, or a wrong number of them."""
    alternatives = [p for p in parts if len(p.options) > 1]
    if chosen is None:
        chosen = [p.options[0].label for p in alternatives]
    if isinstance(chosen, str) or not isinstance(chosen, (list, tuple)) or len(chosen) != len(alternatives):
        given = (f"{len(chosen)} choice{'' if len(chosen) == 1 else 's'}" if isinstance(chosen, (list, tuple))
                 else repr(chosen))
        raise ValueError(f"{given} given; allowed: one for each of {len(alternatives)} "
                         f"({'; '.join(p.text for p in alternatives) or 'none'})")
    given = iter(chosen)
    out = []
    for part in parts:
        if len(part.options) == 1:
            out.append(part.options[0])
            continue
        label = next(given)
        option = next((o for o in part.options if o.label == label), None)
        if option is None:
            raise ValueError(f"{label!r} is not a choice of {part.text!r}; allowed: "
                             + ", ".join(o.label for o in part.options))
        out.append(option)
    return out


def check_picks(choice: Choice | None, picked: dict[str, int]) -> None:
    """ValueError unless ``picked`` (unit id → count) is what the count choice allows."""
    if choice is None:
        if any(picked.values()):
            raise ValueError("this formation has no choice of units")
        return
    names = ", ".join(units()[uid]["name"] for uid in choice.allowed)
    unknown = [uid for uid, n in picked.items() if n and uid not in choice.allowed]
    if unknown:
        shown = units()[unknown[0]]["name"] if unknown[0] in units() else repr(unknown[0])
        raise ValueError(f"{shown} is not one of its choices; allowed: {names}")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in picked.values()):
        raise ValueError("a count is not a whole number from 0 up")
    total = sum(picked.values())
    if not choice.low <= total <= min(choice.high, MAX_PICKED):
        wanted = f"{choice.low}" if choice.low == choice.high else f"{choice.low} to {choice.high}"
        raise ValueError(f"{total} units picked; allowed: {wanted} in all, of {names}")


def refuse_unchosen(ref, where: str) -> None:
    """A choice row named without its choice (no ``choose`` or ``picks``): ValueError saying which choices the row
    offers; nothing for any other reference."""
    form = formations().get(ref) if isinstance(ref, str) else None
    row = choice_rows().get(ref) if form is not None and form.problem is not None else None
    if row is None:
        return
    parts = "; ".join(f"{p.text}: {', '.join(o.label for o in p.options)}" for p in row.parts if len(p.options) > 1)
    allowed = ("choose = [one option of each part] (" + parts + ")" if parts else "") + \
        (" and " if parts and row.choice else "") + \
        ("picks = {unit = count, ...} of " + ", ".join(row.choice.allowed) if row.choice else "")
    raise unbuildable(ref, where, allowed)


def expand_choice(entry: dict, where: str) -> dict:
    """Scenario formation data for ``{library = REF, choose = ["Shadowsword"], picks = {dark-reapers = 4}}``: the
    row's parts with the ``choose`` options (labels, one per part with several, in order) and its count choice
    with the ``picks``; ``engaged`` for every ground unit (default ``"bc"``, aircraft and spacecraft ``"out"``).
    Points follow a counted option; army list and initiative are the formation's.  ValueError naming ``where``."""
    entry = dict(entry)
    ref, chosen, picked = entry.pop("library"), entry.pop("choose", None), entry.pop("picks", {})
    if "upgrades" in entry or "base_contact" in entry:
        raise ValueError(f"{where}: a formation with choose or picks takes no upgrades or base_contact; allowed: "
                         "engaged, or the units listed yourself")
    engaged = entry.pop("engaged", "bc")
    row = choice_rows().get(ref) if isinstance(ref, str) else None
    if row is None:
        raise ValueError(f"{where}.library: {ref!r} is not a library formation with a choice that can be built; "
                         "allowed: the formations of wargame-odds formations search WORD, with status ok or a choice")
    if not isinstance(picked, dict):
        raise ValueError(f"{where}.picks: {picked!r}; allowed: a table of unit id = count")
    picked = {str(k).removeprefix(PREFIX): n for k, n in picked.items() if n}
    try:
        options = choose(row.parts, chosen)
    except ValueError as exc:
        raise ValueError(f"{where}.choose: {exc}") from None
    try:
        check_picks(row.choice, picked)
    except ValueError as exc:
        raise ValueError(f"{where}.picks: {exc}") from None
    form = formations()[ref]
    groups = built_units(row, options, picked)
    data = {"name": form.name, "army": PREFIX + form.army_list, "points": points(form.points, options),
            "units": [{"unit": PREFIX + uid, "count": n, "engaged": "out" if _flies(uid) else engaged,
                       **({"characters": [PREFIX + c for c in chars]} if chars else {})}
                      for uid, n, chars in groups]}
    ids = list(dict.fromkeys(u for uid, _, chars in groups for u in (uid, *chars)))
    initiative, notes = list_initiative(form.army_list, list_forces_of(form.army_list, ids, where), form.name,
                                        form.name)
    if not notes:  # decided by the formation's type; otherwise the army list's rating applies, with its notes
        data["initiative"] = initiative
    return {k: v for k, v in data.items() if v is not None} | entry


def built_units(row: ChoiceRow, chosen: list[Option], picked: dict[str, int]
                ) -> list[tuple[str, int, tuple[str, ...]]]:
    """(unit id, count, characters) of each group of a row with ``chosen`` (an option of each part) and the
    ``picked`` counts of its count choice (checked by the caller); a character joins its host part's first
    group, or the formation's first group."""
    groups: list[list] = []
    first: dict[int, int] = {}
    for k, (part, option) in enumerate(zip(row.parts, chosen)):
        if option.units:
            first[k] = len(groups)
            groups += [[uid, n, []] for uid, n in option.units]
    groups += [[uid, n, []] for uid, n in picked.items() if n]
    for part, option in zip(row.parts, chosen):
        if option.character is not None and groups:
            groups[first.get(part.host, 0)][2].append(option.character)
    return [(uid, n, tuple(chars)) for uid, n, chars in groups]


def points(default: int | None, chosen: list[Option]) -> int | None:
    """The formation's points with the ``chosen`` options: the price of a counted option, else ``default``."""
    return next((o.points for o in chosen if o.points is not None), default)


def buildable_count() -> tuple[int, int]:
    """(formations that can be built, of which those that need the player's choice)."""
    rows = choice_rows()
    return len(rows), sum(r.chooses for r in rows.values())
