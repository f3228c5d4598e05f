"""NetEA army-list upgrades, priced from the data, and the detachments they make.

Every ``Upgrade`` row of ``army_lists.json`` is either *parsed* here — the regular forms below — or
listed in ``netea_upgrades.toml`` as "not modelled: why" (a test fails on any row that is neither):

- ``Add one/a/N UNIT[s]`` (a fixed number), ``Add up to N UNITs``, ``Add a maximum of N UNITs``;
- ``Add any number of UNITs, up to the number required to transport the formation`` (unbounded: a
  search needs a cap for it);
- ``Add one CHARACTER character to any unit in the formation`` and ``Add any one of the following
  characters ...: A, B, C / 0–1 D per army`` (one character per upgrade; ``per army`` ones once per army);
- ``Replace up to N A with an equal number of B``.

Prices are exact: ``+X points each``, ``+X points`` (the whole upgrade), and ``+Y points per pair``
with the cheapest decomposition into pairs and singles.  Each upgrade is taken at most once per
detachment (the lists' upgrade tables say so) and only by formations whose row names it.  A character
joins the formation's first unit group.
"""
from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from .formations import NUMBERS, _names, _norm, count_word, expand_formation, formations, place_in_contact
from .netea import PREFIX, army_lists, convert, units

NUMBER = r"(one|an?|two|three|four|five|six|seven|eight|nine|ten|\d+)"


@dataclass(frozen=True)
class Option:
    """One way to take an upgrade: what it adds or replaces, and its price."""

    label: str  # as a player reads it: "2 Land Raiders", "Captain"
    points: int
    adds: tuple[tuple[str, int], ...] = ()  # (unit id, count)
    replaces: tuple[tuple[str, str, int], ...] = ()  # (from unit id, to unit id, count)
    character: str | None = None  # character unit id, joins the first unit group
    per_army: bool = False  # at most once per army (Supreme Commander)


@dataclass(frozen=True)
class Upgrade:
    army_list: str
    name: str  # the row's upgrade name ("Land Raiders")
    text: str
    options: tuple[Option, ...]  # every way to take it (not taking it is not an option)
    unbounded_unit: str | None = None  # "any number of": options are built up to a cap


@dataclass(frozen=True)
class NotModelled:
    army_list: str
    name: str
    why: str


def _prices(cost_text: list[str]) -> tuple[int | None, int | None, int | None]:
    """(each, pair, whole) from a row's cost cells; ValueError for any other form."""
    each = pair = whole = None
    for text in cost_text:
        text = text.strip().removesuffix(" or").strip()
        if m := re.fullmatch(r"\+(\d+) points each", text):
            each = int(m.group(1))
        elif m := re.fullmatch(r"\+(\d+) points per pair", text):
            pair = int(m.group(1))
        elif m := re.fullmatch(r"\+(\d+) points", text):
            whole = int(m.group(1))
        elif text == "Free":
            whole = 0
        else:
            raise ValueError(f"price {text!r} not parsed")
    return each, pair, whole


def price(n: int, each: int | None, pair: int | None, whole: int | None) -> int:
    """Price of ``n`` units: ``whole`` for the whole upgrade, else the cheapest pairs-and-singles sum."""
    if whole is not None and each is None:
        return whole
    if pair is not None and pair < 2 * each:
        return (n // 2) * pair + (n % 2) * each
    return n * each


def _plural(name: str, n: int) -> str:
    return name if n == 1 or name.endswith("s") else name + "s"


def _unit(names: dict[str, str], text: str) -> str:
    uid = names.get(_norm(text))
    if uid is None:
        raise ValueError(f"unit name {text!r} not found in the list's forces")
    if not convert(uid).ok:
        raise ValueError(f"unit {PREFIX}{uid} cannot be modelled")
    return uid


def _label(uid: str, n: int) -> str:
    """"Hunter", "3 Land Raiders": the datasheet's name, counted."""
    name = units()[uid]["name"]
    return name if n == 1 else f"{n} {_plural(name, n)}"


def _adds(uid: str, counts, prices) -> tuple[Option, ...]:
    return tuple(Option(_label(uid, n), price(n, *prices), adds=((uid, n),)) for n in counts)


def _characters(names, text: str, cost: int, per_army: bool) -> list[Option]:
    parts = [p.strip() for p in re.split(r",\s*|\s+or\s+", text) if p.strip()]
    return [Option(p, cost, character=_unit(names, p), per_army=per_army) for p in parts]


def _parse(row: dict, names: dict[str, str]) -> Upgrade:
    """The upgrade of one row; ValueError saying why it is not a regular form."""
    text = (row.get("core_units_text") or "").strip()
    prices = _prices(row.get("cost_text") or [])
    up = dict(army_list="", name=row["type"], text=text)
    if row.get("options"):
        lead = row.get("options_lead") or ""
        if not lead.startswith("Add any one of the following characters to any unit in the formation"):
            raise ValueError("a choice between options")
        opts = []
        for o in row["options"]:
            t = o["units_text"].strip()
            per_army = bool(m := re.fullmatch(r"0\s*[–-]\s*1\s+(.+?)\s+per army", t))
            each, pair, whole = _prices([o["cost_text"]])
            opts += _characters(names, m.group(1) if per_army else t, whole, per_army)
        return Upgrade(**up, options=tuple(opts))
    each, pair, whole = prices
    character = r"Add (?:one|a maximum of one) (.+?) character(?: per army)?(?: to any unit in the formation)?"
    if m := re.fullmatch(character, text):
        return Upgrade(**up, options=tuple(_characters(names, m.group(1), whole if whole is not None else each,
                                                       "per army" in text)))
    if m := re.fullmatch(rf"Add (?:up to|a maximum of) {NUMBER} (.+?)", text, flags=re.IGNORECASE):
        n, name = count_word(m.group(1)), m.group(2)
        if " of " in name or " or " in name or "," in name:
            raise ValueError("a choice between units")
        if each is None:
            raise ValueError("a range without a price per unit")
        return Upgrade(**up, options=_adds(_unit(names, name), range(1, n + 1), prices))
    if m := re.fullmatch(r"Add any number of (.+?), up to the number required to transport the formation", text):
        if each is None:
            raise ValueError("no price per unit")
        return Upgrade(**up, options=(), unbounded_unit=_unit(names, m.group(1)))
    if m := re.fullmatch(rf"Add {NUMBER} (?:unit of )?(.+?)", text, flags=re.IGNORECASE):
        n, name = count_word(m.group(1)), m.group(2)
        if re.search(r",| or | and |plus transport|\bper\b|\bfor every\b|\bto\b|\.", name):
            raise ValueError("more than one unit, a condition or a transport")
        return Upgrade(**up, options=_adds(_unit(names, name), [n], prices))
    if m := re.fullmatch(rf"Replace up to {NUMBER} (.+?) with an equal number of (.+?)", text):
        n, old, new = count_word(m.group(1)), m.group(2), m.group(3)
        if " or " in new or "," in new:
            raise ValueError("a choice between replacements")
        a, b = _unit(names, old), _unit(names, new)
        return Upgrade(**up, options=tuple(Option(_label(b, k), price(k, *prices), replaces=((a, b, k),))
                                           for k in range(1, n + 1)))
    raise ValueError("not a regular form")


@cache
def not_modelled() -> dict[tuple[str, str], NotModelled]:
    """The curated rows of ``netea_upgrades.toml``, by (army list, upgrade name)."""
    data = tomllib.loads(files(__package__).joinpath("netea_upgrades.toml").read_text("utf-8"))
    return {(e["list"], e["upgrade"]): NotModelled(e["list"], e["upgrade"], e["why"]) for e in data["not_modelled"]}


@cache
def upgrade_rows() -> dict[tuple[str, str], Upgrade | str]:
    """Every Upgrade row by (army list, name): its :class:`Upgrade`, or why the parser refused it."""
    out: dict[tuple[str, str], Upgrade | str] = {}
    for lst in army_lists():
        names = _names(lst["forces"])
        for row in lst["formations"]:
            if row["row_kind"] != "Upgrade":
                continue
            try:
                up = _parse(row, names)
                out[(lst["id"], row["type"])] = Upgrade(**{**up.__dict__, "army_list": lst["id"]})
            except ValueError as exc:
                out[(lst["id"], row["type"])] = str(exc)
    return out


def upgrades(army_list: str) -> dict[str, Upgrade]:
    """The parsed upgrades of one army list, by name."""
    return {name: up for (lst, name), up in upgrade_rows().items() if lst == army_list and isinstance(up, Upgrade)}


def options_of(up: Upgrade, caps: dict[str, int]) -> tuple[Option, ...]:
    """The options of an upgrade; an unbounded one up to ``caps[name]`` (ValueError without a cap)."""
    if up.unbounded_unit is None:
        return up.options
    if up.name not in caps:
        raise ValueError(f"upgrade {up.name!r} of {PREFIX}{up.army_list} is 'any number of': give it a cap "
                         f"(caps = {{\"{up.name}\" = N}})")
    _, rows = _row(up.army_list, up.name)
    prices = _prices(rows["cost_text"])
    return _adds(up.unbounded_unit, range(1, caps[up.name] + 1), prices)


def _row(army_list: str, name: str):
    lst = next(lst for lst in army_lists() if lst["id"] == army_list)
    return lst, next(r for r in lst["formations"] if r["row_kind"] == "Upgrade" and r["type"] == name)


def formation_extras(ref: str) -> list[str]:
    """The upgrade names a library formation's row allows."""
    return list(_formation_row(ref)[1].get("extras_text") or [])


def _short(name: str, limit: int = 80) -> str:
    """A name that fits a scenario's names (at most 80 characters)."""
    return name if len(name) <= limit else name[:limit - 1] + "…"


@dataclass(frozen=True)
class Detachment:
    """A library formation with chosen upgrade options."""

    formation: str  # "netea:LIST/FORMATION"
    choices: tuple[tuple[str, Option], ...]  # (upgrade name, option), in the formation row's order
    composition: tuple[tuple[str, int], ...] = ()  # a choice row's core units ("Any four of ..."), else ()

    @property
    def points(self) -> int:
        return formations()[self.formation].points + sum(o.points for _, o in self.choices)

    @property
    def upgrades_label(self) -> str:
        return " + ".join(o.label for _, o in self.choices)

    @property
    def name(self) -> str:
        base = formations()[self.formation].name
        if self.composition:
            base += " [" + ", ".join(_label(u, n) for u, n in self.composition) + "]"
        return f"{base}{' + ' + self.upgrades_label if self.choices else ''} ({self.points} pts)"

    def _core(self) -> dict:
        if not self.composition:
            return expand_formation({"library": self.formation}, self.formation)
        form = formations()[self.formation]
        data = {"name": form.name, "army": PREFIX + form.army_list, "points": form.points,
                "units": [{"unit": PREFIX + u, "count": n, "engaged": "bc"} for u, n in self.composition]}
        if not form.initiative_notes and form.initiative is not None:
            data["initiative"] = form.initiative
        return data

    def fits(self) -> bool:
        """Whether every replacement finds the units it replaces."""
        have: dict[str, int] = {}
        for g in self._core()["units"]:
            have[g["unit"]] = have.get(g["unit"], 0) + g["count"]
        return all(have.get(PREFIX + old, 0) >= n for _, o in self.choices for old, _, n in o.replaces)

    def formation_data(self) -> dict:
        """Scenario formation data: the library formation plus the upgrades, priced from the data."""
        data = self._core()
        groups = [dict(g) for g in data["units"]]
        for _, o in self.choices:
            for uid, n in o.adds:
                groups.append({"unit": PREFIX + uid, "count": n, "engaged": "bc"})
            for old, new, n in o.replaces:
                host = next((g for g in groups if g["unit"] == PREFIX + old), {"count": 0})
                if host["count"] < n:
                    raise ValueError(f"{self.name}: cannot replace {n} of {host['count']} {old}")
                host["count"] -= n
                groups.append({"unit": PREFIX + new, "count": n, "engaged": "bc"})
            if o.character:
                groups[0]["characters"] = [*groups[0].get("characters", []), PREFIX + o.character]
        data["units"] = [g for g in groups if g["count"] > 0]
        data["points"] = self.points
        data["name"] = _short(self.name)
        return data

    def force(self) -> dict:
        """A force (``{"name", "formations"}``) the decision commands accept."""
        return {"name": _short(self.name), "formations": [self.formation_data()]}


def expand_with_upgrades(entry: dict, where: str) -> dict:
    """:func:`.formations.expand_formation`, and with ``upgrades = {"Land Raiders" = 3, Commander = "Captain"}``
    the army list's upgrades added and priced from the data; with ``choose`` or ``picks`` a formation with a
    choice (:func:`.choices.expand_choice`); ValueError naming ``where`` for a wrong one."""
    from .choices import expand_choice, refuse_unchosen

    if "choose" in entry or "picks" in entry:
        return expand_choice(entry, where)
    refuse_unchosen(entry.get("library"), where)  # a choice row named without its choice: which choices it offers
    if "upgrades" not in entry:
        return expand_formation(entry, where)
    entry = dict(entry)
    chosen, ref = entry.pop("upgrades"), entry.pop("library")
    given, base_contact = entry.pop("engaged", None), entry.pop("base_contact", None)
    expand_formation({"library": ref}, where)  # an unknown or unbuildable formation: its own message
    if not isinstance(chosen, dict):
        raise ValueError(f"{where}.upgrades: {chosen!r}; allowed: a table of upgrade name = count or character")
    try:
        data = detachment(ref, chosen).formation_data()
    except ValueError as exc:
        raise ValueError(f"{where}.upgrades: {exc}") from None
    if given is not None:
        data["units"] = [{**g, "engaged": g["engaged"] if g["engaged"] == "out" else given} for g in data["units"]]
    if base_contact is not None:
        data["units"] = place_in_contact(data["units"], base_contact, given, where)
    return data | entry


def detachment(formation: str, choices: dict[str, str | int] | None = None, caps: dict[str, int] | None = None
               ) -> Detachment:
    """A library formation with upgrades named by the player: ``{"Land Raiders": 3, "Commander": "Captain"}``
    (a count for unit upgrades, a character name for character upgrades); ValueError naming what is wrong."""
    if formation not in formations():
        raise ValueError(f"unknown library formation {formation!r}")
    ups, allowed = upgrades(formations()[formation].army_list), formation_extras(formation)
    picked = []
    for name, want in (choices or {}).items():
        if name not in allowed or name not in ups:
            raise ValueError(f"{formation}: upgrade {name!r} is not allowed or not modelled; allowed: "
                             f"{', '.join(a for a in allowed if a in ups) or 'none'}")
        opts = options_of(ups[name], caps or {})
        match = [o for o in opts if o.label == want or (o.character and o.label.lower() == str(want).lower())
                 or (isinstance(want, int) and sum(n for _, n in o.adds) + sum(n for *_, n in o.replaces) == want)]
        if not match:
            raise ValueError(f"{formation}: upgrade {name!r} has no option {want!r}; allowed: "
                             f"{', '.join(o.label for o in opts)}")
        picked.append((name, match[0]))
    order = {n: i for i, n in enumerate(allowed)}
    return Detachment(formation, tuple(sorted(picked, key=lambda c: order[c[0]])))


def _formation_row(ref: str) -> tuple[dict, dict]:
    form = formations()[ref]
    lst = next(lst for lst in army_lists() if lst["id"] == form.army_list)
    return lst, next(r for r in lst["formations"] if r["row_kind"] in ("Formation", "Type") and r["type"] == form.name)


def check_army(detachments: list[Detachment], points: int) -> None:
    """The list's limits on an army of ``points``: 0–1 formations and once-per-army characters at most once,
    and "up to a third of the points" tables at most ``points / 3``; ValueError naming the limit broken."""
    seen: dict[str, int] = {}
    third: dict[str, int] = {}
    for d in detachments:
        lst, row = _formation_row(d.formation)
        if row.get("limit"):
            seen[f"formation {row['type']!r} ({row['limit']})"] = seen.get(f"formation {row['type']!r} "
                                                                           f"({row['limit']})", 0) + 1
        for _, o in d.choices:
            if o.per_army:
                seen[f"{o.label} (once per army)"] = seen.get(f"{o.label} (once per army)", 0) + 1
        for t in lst["tables"]:
            if t["caption"] in (row.get("section"), row.get("table")) and any("third" in n for n in t["notes"]):
                third[t["caption"]] = third.get(t["caption"], 0) + d.points
    for what, n in seen.items():
        if n > 1:
            raise ValueError(f"{what} taken {n} times; allowed: once")
    for caption, spent in third.items():
        if 3 * spent > points:
            raise ValueError(f"{spent} points of {caption!r} in a {points}-point army; allowed: up to a third "
                             f"({points // 3} points)")


def parse_detachment(army: str, text: str) -> Detachment:
    """The detachment a player names as the candidates are named: "Tactical + Captain + 2 Land Raiders" (a
    trailing "(N pts)" is ignored); ValueError naming what does not match."""
    army = army.removeprefix(PREFIX)
    name, *labels = [p.strip() for p in re.sub(r"\s*\(\d+ pts\)\s*$", "", text).split(" + ")]
    refs = {formations()[r].name.lower(): r for r in formations() if formations()[r].army_list == army}
    if name.lower() not in refs:
        raise ValueError(f"{text!r}: no formation {name!r} in {PREFIX}{army}; allowed: "
                         f"{', '.join(formations()[r].name for r in refs.values())}")
    ref = refs[name.lower()]
    ups = upgrades(army)
    picked = []
    for label in labels:
        found = [(n, o) for n in formation_extras(ref) if n in ups for o in ups[n].options if o.label == label]
        if not found:
            raise ValueError(f"{text!r}: {label!r} is no upgrade option of {name}")
        picked.append(found[0])
    order = {n: i for i, n in enumerate(formation_extras(ref))}
    return Detachment(ref, tuple(sorted(picked, key=lambda c: order[c[0]])))


def compositions(ref: str) -> list[tuple[tuple[str, int], ...]]:
    """A choice row's core units ("Any four of the following units: A, B") as every multiset of that size, the
    units in the row's order; [] for a formation that is not such a row or names a unit the engine lacks."""
    form = formations()[ref]
    m = re.fullmatch(r"Any (\w+) of the following units: (.+)", form.text)
    if not m or m.group(1).lower() not in NUMBERS:
        return []
    lst = next(lst for lst in army_lists() if lst["id"] == form.army_list)
    names = _names(lst["forces"])
    try:
        ids = [_unit(names, p.strip()) for p in re.split(r",\s*|\s*/\s*|\s+or\s+", m.group(2)) if p.strip()]
    except ValueError:
        return []
    ids = list(dict.fromkeys(ids))
    out = []
    for combo in itertools.combinations_with_replacement(range(len(ids)), NUMBERS[m.group(1).lower()]):
        out.append(tuple((ids[i], combo.count(i)) for i in range(len(ids)) if combo.count(i)))
    return out


def enumerate_detachments(army: str, *, max_points: int | None = None, points: int | None = None,
                          formations_filter=None,
                          upgrades_filter=None, caps: dict[str, int] | None = None, owned: dict[str, int] | None = None,
                          notes: list[str] | None = None) -> list[Detachment]:
    """Every buildable formation of ``army`` (``netea:LIST`` or LIST) × every combination of its allowed,
    modelled upgrades (each none or one option), filtered by points, formations, upgrades and models owned.

    Aircraft and spacecraft formations never assault (TP 4.1.1) and are left out with a note; so are
    formations the engine cannot build, and unbounded upgrades without a cap.
    """
    from .formations import formation_status

    army = army.removeprefix(PREFIX)
    if army not in {lst["id"] for lst in army_lists()}:
        raise ValueError(f"unknown army list {PREFIX}{army}")
    notes = notes if notes is not None else []
    ups = upgrades(army)
    out: list[Detachment] = []
    refs = [r for r, f in formations().items() if f.army_list == army]
    if formations_filter:
        by_name = {formations()[r].name.lower(): r for r in refs}
        unknown = [f for f in formations_filter if f.lower() not in by_name and f not in refs]
        if unknown:
            raise ValueError(f"formations: unknown {', '.join(map(repr, unknown))} in {PREFIX}{army}; allowed: "
                             f"{', '.join(formations()[r].name for r in refs)}")
        refs = [r for r in refs if r in formations_filter or formations()[r].name.lower()
                in {f.lower() for f in formations_filter}]
    if upgrades_filter is not None:
        unknown = [u for u in upgrades_filter if u not in ups]
        if unknown:
            raise ValueError(f"upgrades: unknown or not modelled {', '.join(map(repr, unknown))} in {PREFIX}{army}; "
                             f"allowed: {', '.join(ups)}")
    for ref in refs:
        form = formations()[ref]
        status = formation_status(form)
        cores = compositions(ref) if form.problem else [()]
        if status != "ok" and not cores:
            notes.append(f"{form.name}: left out ({status})")
            continue
        core_units = {u for core in cores for u, _ in core} | {u for u, _ in form.units}
        if any(convert(u).profile.aircraft is not None or convert(u).profile.spacecraft for u in core_units):
            notes.append(f"{form.name}: left out (aircraft and spacecraft never assault, TP 4.1.1)")
            continue
        names = [n for n in formation_extras(ref) if n in ups and (upgrades_filter is None or n in upgrades_filter)]
        per_upgrade = []
        for n in names:
            try:
                per_upgrade.append([None, *options_of(ups[n], caps or {})])
            except ValueError as exc:
                if upgrades_filter is not None:
                    raise
                notes.append(f"{form.name}: upgrade {n!r} left out ({exc})")
                per_upgrade.append([None])
        for core, combo in itertools.product(cores, itertools.product(*per_upgrade)):
            d = Detachment(ref, tuple((n, o) for n, o in zip(names, combo) if o is not None), core)
            if max_points is not None and d.points > max_points:
                continue
            if not d.fits():
                continue
            if points is not None:
                try:
                    check_army([d], points)
                except ValueError:
                    continue
            if owned and not _owned(d, owned):
                continue
            out.append(d)
    return out


def models(d: Detachment) -> dict[str, int]:
    """Library unit id → models the detachment fields (characters count 1)."""
    data = d.formation_data()
    need: dict[str, int] = {}
    for g in data["units"]:
        uid = g["unit"].removeprefix(PREFIX)
        need[uid] = need.get(uid, 0) + g["count"]
        for c in g.get("characters", []):
            need[c.removeprefix(PREFIX)] = need.get(c.removeprefix(PREFIX), 0) + 1
    return need


def _owned(d: Detachment, owned: dict[str, int]) -> bool:
    return all(owned.get(u, owned.get(PREFIX + u, n)) >= n for u, n in models(d).items())
