"""The Epic shooting attack, clause by clause (pure Python, the reference for a turn).

One function per rule step of ``docs/epic-turn.md`` §3: who fires and who is suppressed, the blast
marker for coming under fire, the AP/AT choice, to-hit rolls, barrages, allocation front to back,
saves, macro-weapon hits after the others, blast markers for kills, the break check after the whole
attack, and no-save hits on a broken target.  Clause tags: TP = NetEA Tournament Pack, TP-FAQ = its
FAQ, TP-SR = its special rules; "reading" marks a choice the Tournament Pack leaves open, as
``docs/epic-turn.md`` documents it.  Units and formations are the reference engine's per-trial state
(:mod:`wargame_odds.analysis.epic.reference`); every roll and decision goes to ``trial.say``.

War engines are shot at with the shared steps of :mod:`wargame_odds.analysis.epic.war_engines`: allocation in
blocks of starting DC, titan-killer damage rolled when allocated, shields and fields first, a BM and a
critical roll per damage point (TP 3.2; docs/epic-turn.md §3.13).  While an attack resolves, the
trial's ``damage_sink`` books war-engine damage for the attack (kills and BMs), not for an assault.
"""
from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass, field
from math import ceil
from functools import cache
from importlib.resources import files

from .compile import NO_ROLL
from .dice import Dice, parse_dice
from .reference import Formation, Trial, Unit, automaton_saves, break_formation, fails_break_test, roll_d6
from .war_engines import damage_hull, shields_stop, titan_killer_damage

AP, AT, MW, TK = "AP", "AT", "MW", "TK"
INFANTRY_TARGETS = ("INF", "LV")  # AP hits (TP 1.9.6, 2.1.9)
ARMOUR_TARGETS = ("AV", "LV", "WE")  # AT hits (TP 1.9.6, 2.1.9, 3.2)
ACTION_TO_HIT = {"advance": 0, "double": -1, "sustained_fire": 1, "marshal": -1, "hold": 0, "overwatch": 0}
JINK_SAVE = 4  # an aircraft's jink save against flak, instead of its armour (TP 4.2.3)


# -- what an activation decides (scenario inputs of the non-spatial model) -----------------------

@dataclass(frozen=True)
class FireOrders:
    """The map and the attacker's choices for one shooting attack (docs/epic-turn.md §1).

    ``in_range``: shooting units in range with a line of fire, front first (None: all);
    ``exposed``: target units any shooter can reach, front first (None: all); ``cover``: the
    target is in cover (−1 to hit; its infantry may use ``cover_save``); ``ap_at``: "auto" (the
    default policy of :func:`choose_fire_type`), "ap" or "at"; ``declare_at``: at a mixed target, the
    group every weapon is declared at, "war_engines" or "others", or "auto" (the default policy of
    :func:`choose_group`); ``templates_cover``: target units under
    each barrage template (None: the default of :func:`template_cover`); ``template_room``: the room
    of a template for that default (a 12 cm orbital template: ``ORBITAL_TEMPLATE_ROOM``);
    ``suppressible``: False for aircraft and spacecraft, never suppressed (TP 4.1.1); ``aim_war_engine``:
    a pin-point attack's hits all go to the target's living war engine of that index, front first (TP 4.3.4).
    """

    modifier: int = 0
    in_range: int | None = None
    exposed: int | None = None
    cover: bool = False
    cover_save: int | None = None
    crossfire: bool = False
    ap_at: str = "auto"
    declare_at: str = "auto"
    templates_cover: int | None = None
    template_room: float = 3.0
    suppressible: bool = True
    aim_war_engine: int | None = None


@dataclass
class AttackReport:
    """What one attack did, for the turn's results (docs/epic-turn.md §4)."""

    fired: bool = False
    hits: int = 0  # successful to-hit rolls (direct fire and barrage)
    kills: int = 0  # target units destroyed by the attack, no-save hits on a broken target included
    blast_markers_placed: int = 0  # on the target; 0 when it was broken (each became a hit)
    target_broke: bool = False


@dataclass(frozen=True)
class ShotHit:
    """One successful to-hit roll: its fire type and the abilities of the weapon that scored it."""

    kind: str  # AP, AT, MW or TK
    sniper: bool = False
    disrupt: bool = False
    lance: bool = False
    ignore_cover: bool = False
    unit: Unit | None = field(default=None, compare=False)  # a barrage hit lands on the unit rolled for
    titan_killer_damage: Dice = field(default=Dice(0, 6, 1), compare=False)  # on a war engine (TP 3.2.5)
    aimed: str | None = None  # at a mixed target: the group it was declared at, WAR_ENGINES or OTHERS (TP 3.2.1)


# -- dice: to hit and saves (TP 1.9.5, 1.9.6) -------------------------------------------------------

def roll_to_hit(rng: random.Random, value: int, modifier: int) -> tuple[bool, list[int]]:
    """One to-hit roll: D6 ≥ value − modifier; a natural 1 always misses; a 7, 8 or 9 needs a 6
    and then 4+, 5+ or 6; 10 or more cannot hit and rolls nothing (TP 1.9.5 and its box "Needing
    7+ to Hit").  Returns (hit, the dice rolled)."""
    need = value - modifier
    if need >= 10:
        return False, []
    first = roll_d6(rng)
    if first == 1:
        return False, [first]
    if need <= 6:
        return first >= need, [first]
    if first < 6:
        return False, [first]
    second = roll_d6(rng)
    return second >= need - 3, [first, second]


def save_targets(unit: Unit, hit: ShotHit, cover_save: int | None, crossfire: bool, jink: bool = False) -> list[int]:
    """The save rolls a hit allows, in order (each a D6 target; a target of 7+ is no save).

    A jinking aircraft saves any flak hit on 4+ instead of its armour, with no reinforced-armour re-roll
    (TP 4.2.3; TP-FAQ Anti-Aircraft Attacks; epic-shooting §13 Q19; reading: macro-weapon flak too).

    AP/AT: the better of armour and, for infantry in cover, the cover save (not against Ignore
    Cover); Reinforced Armour re-rolls a failure on the armour value, except against Lance.
    MW: only Reinforced Armour, no re-roll.  TK: none.  Crossfire and Sniper each −1, stacking
    (TP 1.8.3, 1.9.6, 1.11, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9; TP-SR Eldar Technology; TP-FAQ
    Allocate Hits & Make Saving Throws, Reinforced Armour, Crossfire)."""
    slot = unit.slot
    if jink:
        return [JINK_SAVE]
    worse = int(crossfire) + int(hit.sniper)
    armour = min(slot.armour + worse, NO_ROLL)
    if hit.kind in (AP, AT):
        first = armour
        if cover_save is not None and not hit.ignore_cover:
            first = min(armour, min(cover_save + worse, NO_ROLL))
        targets = [first] + ([armour] if slot.reinforced_armour and not hit.lance else [])
    elif hit.kind == MW and slot.reinforced_armour:
        targets = [armour]
    else:
        targets = []
    return [t for t in targets if t < NO_ROLL]


def save_roll(trial: Trial, unit: Unit, hit: ShotHit, cover_save: int | None, crossfire: bool,
              jink: bool = False) -> bool:
    """Roll the saves of :func:`save_targets`, then an invulnerable save (unmodified 6+, never
    re-rolled; deflector shield 5+, living metal 4+, as in assaults) after a failed or disallowed one
    (TP 1.9.6, 2.1.6; TP-SR Tau, Necron Technology; TP-FAQ Invulnerable Saves).  True when saved."""
    targets = save_targets(unit, hit, cover_save, crossfire, jink)
    for attempt, target in enumerate(targets):
        roll = roll_d6(trial.rng)
        what = 're-roll (reinforced armour)' if attempt else 'jink save' if jink else 'save'
        trial.say("TP 2.1.11" if attempt else "TP 4.2.3" if jink else "TP 1.9.6",
                  f"  {unit.label}: {what} {target}+ vs {hit.kind}: "
                  f"{roll} → {'saved' if roll >= target else 'failed'}")
        if roll >= target:
            return True
    if not targets:
        trial.say("TP 1.9.6", f"  {unit.label}: no save vs this {hit.kind} hit")
    on = unit.slot.invulnerable_on
    if on < NO_ROLL:
        roll = roll_d6(trial.rng)
        trial.say("TP 2.1.6",
                  f"  {unit.label}: invulnerable save {on}+: {roll} → {'saved' if roll >= on else 'failed'}")
        return roll >= on
    return False


# -- who fires (TP 1.9.2) ---------------------------------------------------------------------------

def fires_at_ground(weapon) -> bool:
    """A weapon line with an AP, AT, MW or BP value; AA alone is only for aircraft (TP 2.2.1)."""
    return any(v is not None for v in (weapon.ap, weapon.at, weapon.mw, weapon.bp))


def candidates(shooter: Formation, weapons_of, in_range: int | None) -> list[Unit]:
    """Suppression candidates: the living units, front first, within the first ``in_range`` (the
    units in range with a line of fire), that carry a weapon able to fire at ground units
    (TP 1.9.2; TP-FAQ Who May Shoot; reading: in_range counts from the front)."""
    living = shooter.living[:in_range] if in_range is not None else shooter.living
    return [u for u in living if any(fires_at_ground(w) for w in weapons_of(u))]


def suppress(trial: Trial, shooter: Formation, cands: list[Unit]) -> list[Unit]:
    """Each BM on the shooter stops one candidate, farthest from the target first; They Shall Know
    No Fear units cost 2 BMs each, a war engine its starting DC, leftovers ignored; strict order
    (TP 1.9.2, 3.2.4; TP-SR TSKNF; reading, docs/epic-turn.md §3.2).  Returns the units that fire."""
    budget = shooter.blast_markers
    suppressed = 0
    for unit in reversed(cands):
        cost = 2 if shooter.tsknf else unit.slot.damage_capacity  # a war engine: its starting DC (TP 3.2.4)
        if budget < cost:
            break
        budget -= cost
        suppressed += 1
    firers = cands[:len(cands) - suppressed]
    trial.say("TP 1.9.2", f"{shooter.name}: {len(cands)} unit(s) in range, {shooter.blast_markers} BM(s) suppress "
                          f"{suppressed}{' (TSKNF: 2 BMs each)' if shooter.tsknf else ''} from the back: "
                          f"{len(firers)} fire")
    return firers


# -- choices before rolling (TP 1.9.5; TP-FAQ Roll To Hit) ---------------------------------------

def can_take(unit: Unit, kind: str) -> bool:
    """AP hits only on infantry and light vehicles, AT hits only on armoured vehicles, light
    vehicles and war engines, MW and TK hits on any unit (TP 1.9.6, 2.1.9, 2.2.6, 3.2)."""
    if kind == AP:
        return unit.slot.type in INFANTRY_TARGETS
    if kind == AT:
        return unit.slot.type in ARMOUR_TARGETS
    return True


def hit_chance(value: int, modifier: int) -> float:
    """P(one to-hit roll hits), for the default policies only (the rolls themselves use dice)."""
    need = value - modifier
    if need >= 10:
        return 0.0
    if need <= 6:
        return (7 - max(need, 2)) / 6
    return (10 - need) / 36


# -- the default policies: AP or AT, and "at the war engines" or "at the others" (docs/epic-turn.md §3.5) --

WAR_ENGINES, OTHERS = "war_engines", "others"  # the two groups of a mixed target (TP 3.2.1)
TIE = 1e-9  # expectations closer than this are equal (the tie rules of docs/epic-turn.md §3.5)


def unsaved_chance(unit: Unit, hit: ShotHit, cover_save: int | None, crossfire: bool) -> float:
    """P(one hit, or one point of a war engine's damage, is not saved): every roll :func:`save_roll` would
    make fails (an infantry unit's cover save while in cover; none on other units)."""
    chance = 1.0
    for target in save_targets(unit, hit, cover_save if unit.slot.type == "INF" else None, crossfire):
        chance *= max(target - 1, 0) / 6
    if unit.slot.invulnerable_on < NO_ROLL:
        chance *= max(unit.slot.invulnerable_on - 1, 0) / 6
    return chance


def expected_harm(weapon, kind: str, value: int, modifier: int, units: list[Unit], orders: FireOrders) -> float:
    """What one weapon's shots of ``kind`` are expected to do to ``units`` (all war engines, or none), the
    measure of the default policies (reading, docs/epic-turn.md §3.5).  E = mean shots × P(hit at ``value``
    with ``modifier``); p = the mean, over the units that can take ``kind``, of :func:`unsaved_chance`.
    Other units: expected kills min(E × p, their number).  War engines: expected damage
    min(max(E × d − shields, 0) × p, their damage left), d the mean titan-killer damage (else 1), shields
    their standing void shields and power fields (a point each) and shadowfields (a hit of d points each)."""
    able = [u for u in units if can_take(u, kind)]
    if not able:
        return 0.0
    hit = ShotHit(kind, weapon.sniper, weapon.disrupt, weapon.lance, weapon.ignore_cover)
    cover_save = orders.cover_save if orders.cover else None
    expected_hits = mean_of(dice_of(weapon.shots)) * hit_chance(value, modifier)
    unsaved = 0.0
    for unit in able:
        unsaved += unsaved_chance(unit, hit, cover_save, orders.crossfire)
    unsaved /= len(able)
    if able[0].slot.type != "WE":
        return min(expected_hits * unsaved, len(able))
    damage = mean_of(titan_killer_dice(weapon)) if kind == TK else 1.0
    shields = 0.0
    left = 0
    for unit in able:
        shields += unit.void_shields + unit.power_fields + unit.shadowfields * damage
        left += unit.damage_left
    return min(max(expected_hits * damage - shields, 0.0) * unsaved, left)


@dataclass(frozen=True)
class TargetGroups:
    """The target as the default policies see it when the attack begins: the exposed living units, and for
    a mixed formation (living war engines and other units, TP 3.2.1) the exposed units of each group."""

    exposed: list[Unit]
    has_war_engine: bool
    groups: dict[str, list[Unit]] | None  # None: not mixed (or a pin-point attack), no declaration

    @classmethod
    def of(cls, formation: Formation, exposed: list[Unit], pin_point: bool = False) -> "TargetGroups":
        engines = [u.slot.type == "WE" for u in formation.living]
        mixed = any(engines) and not all(engines) and not pin_point
        groups = {WAR_ENGINES: [u for u in exposed if u.slot.type == "WE"],
                  OTHERS: [u for u in exposed if u.slot.type != "WE"]} if mixed else None
        return cls(exposed, any(engines), groups)


def choose_fire_type(weapon, target: TargetGroups, modifier: int, orders: FireOrders) -> tuple[str | None, dict]:
    """AP or AT for all of one weapon's shots (TP 1.9.5; TP-FAQ Roll To Hit).  ``orders.ap_at`` "ap" or "at"
    forces a type when the weapon has it; "auto", the default policy (reading, docs/epic-turn.md §3.5): the
    type with the larger :func:`expected_harm` at the group its hits would be declared at
    (:func:`choose_group`; the better of the two for AT under the "auto" declaration), ties to AT when the
    target formation has a war engine, else AP.  Returns (the type or None without either value, the
    expectations compared: {} when nothing was compared)."""
    options = [(kind, value) for kind, value in ((AP, weapon.ap), (AT, weapon.at)) if value is not None]
    if not options:
        return None, {}
    if orders.ap_at in ("ap", "at"):
        forced = [k for k, _ in options if k == orders.ap_at.upper()]
        if forced:
            return forced[0], {}
    if len(options) == 1:
        return options[0][0], {}
    scores = {}
    for kind, value in options:
        if target.groups is None:
            scores[kind] = expected_harm(weapon, kind, value, modifier, target.exposed, orders)
        elif orders.declare_at != "auto":
            scores[kind] = expected_harm(weapon, kind, value, modifier, target.groups[orders.declare_at], orders)
        else:
            scores[kind] = max(expected_harm(weapon, kind, value, modifier, target.groups[group], orders)
                               for group in ((OTHERS,) if kind == AP else (WAR_ENGINES, OTHERS)))
    if abs(scores[AP] - scores[AT]) <= TIE:
        return (AT if target.has_war_engine else AP), scores
    return (AT if scores[AT] > scores[AP] else AP), scores


def choose_group(weapon, kind: str, value: int, target: TargetGroups, modifier: int, orders: FireOrders
                 ) -> tuple[str | None, tuple[float, float] | None]:
    """The declaration of one weapon at a mixed target, before any dice: "at the war engines" or "at the
    others" (TP 3.2.1; epic-turn.md §3.5, reading: per weapon).  ``orders.declare_at`` forces it; "auto",
    the default policy: AP weapons at the others; AT, MW and TK weapons at the war engines when their
    expected damage there is at least their expected kills on the others (:func:`expected_harm`).
    Returns (the group, None when the target is not mixed; the two expectations when compared)."""
    if target.groups is None:
        return None, None
    if orders.declare_at != "auto":
        return orders.declare_at, None
    if kind == AP:
        return OTHERS, None
    damage = expected_harm(weapon, kind, value, modifier, target.groups[WAR_ENGINES], orders)
    kills = expected_harm(weapon, kind, value, modifier, target.groups[OTHERS], orders)
    return (WAR_ENGINES if damage >= kills - TIE else OTHERS), (damage, kills)


# -- shots and barrage points that are dice ------------------------------------------------------

def roll_amount(trial: Trial, value: int | str, what: str) -> int:
    """A weapon's shots or barrage points: a number, or dice rolled each time the weapon fires
    (TP 1.9.8: "roll dice BP per weapon"; DATA shots such as ``D3×``)."""
    if isinstance(value, int):
        return value
    amount = dice_of(value).roll(trial.rng)
    trial.say("TP 1.9.5", f"{what} {value} → {amount}")
    return amount


@cache
def dice_of(value: int | str) -> Dice:
    return parse_dice(value)


def mean_of(dice: Dice) -> float:
    """The mean of a weapon's dice value (shots, titan-killer damage), for the default policies."""
    return dice.count * (dice.sides + 1) / 2 + dice.plus


def titan_killer_dice(weapon) -> Dice:
    """The damage of the line's titan-killer hits on a war engine: ``true`` is 1 (TP 2.2.9, 3.2.5)."""
    return dice_of(1 if weapon.titan_killer in (True, False) else weapon.titan_killer)


# -- to-hit rolls ---------------------------------------------------------------------------------

def direct_fire(trial: Trial, firers: list[Unit], weapons_of, target: TargetGroups, orders: FireOrders
                ) -> list[ShotHit]:
    """Every direct-fire shot of the firing units: per weapon, before any dice, its fire type and, at a mixed
    target, the group it is declared at (:func:`choose_fire_type`, :func:`choose_group`), then one roll per
    shot at value − (action modifier − 1 for cover unless Ignore Cover) (TP 1.9.5, 2.2.5, 2.2.6, 3.2.1)."""
    hits = []
    for unit in firers:
        for weapon in weapons_of(unit):
            if weapon.bp is not None:
                continue  # barrage weapons fire in the barrage
            modifier = orders.modifier - (1 if orders.cover and not weapon.ignore_cover else 0)
            if weapon.mw is not None:
                kind, value = (TK if weapon.titan_killer else MW), weapon.mw
            else:
                kind, scores = choose_fire_type(weapon, target, modifier, orders)
                if kind is None:
                    continue
                value = weapon.ap if kind == AP else weapon.at
                if scores:
                    tie = abs(scores[AP] - scores[AT]) <= TIE
                    rule = ("; a tie: AT, the target has a war engine" if kind == AT else "; a tie: AP") if tie else ""
                    trial.say("TP 1.9.5", f"{unit.label} {weapon.name}: {kind} (default policy: expected kills AP "
                                          f"{scores[AP]:.3f}, AT {scores[AT]:.3f}{rule})")
            group, compared = choose_group(weapon, kind, value, target, modifier, orders)
            if group is not None:
                why = ("forced by declare_at" if compared is None and orders.declare_at != "auto" else
                       "default policy: AP weapons at the others" if compared is None else
                       f"default policy: expected damage {compared[0]:.3f} "
                       f"{'≥' if group == WAR_ENGINES else '<'} expected kills {compared[1]:.3f} on the others")
                trial.say("TP 3.2.1", f"{unit.label} {weapon.name} ({kind}) declared at the "
                                      f"{group.replace('_', ' ')} ({why})")
            for _ in range(weapon.count):
                hits += weapon_hits(trial, unit, weapon, kind, value, modifier, "TP 1.9.5", kind, aimed=group)
    return hits


def weapon_hits(trial: Trial, unit: Unit, weapon, kind: str, value: int, modifier: int, clause: str,
                label: str, what: str = "", aimed: str | None = None) -> list[ShotHit]:
    """One weapon's shots (its dice rolled first when it has them) at ``value``+ with ``modifier``, a
    natural 1 missing: a hit of type ``kind`` with the weapon's abilities per success (TP 1.9.5), declared at
    the group ``aimed`` of a mixed target (TP 3.2.1).  ``label`` and ``what`` name the roll in the trace
    ("AP" / "AA", "flak ")."""
    shots = roll_amount(trial, weapon.shots, f"{unit.label} {weapon.name}: shots")
    rolls = [roll_to_hit(trial.rng, value, modifier) for _ in range(shots)]
    scored = sum(h for h, _ in rolls)
    trial.say(clause, f"{unit.label} {weapon.name} {what}({label}{value}+, modifier {modifier:+d}): "
                      f"{' '.join('/'.join(map(str, d)) or '-' for _, d in rolls)} → {scored} hit(s)")
    return [ShotHit(kind, weapon.sniper, weapon.disrupt, weapon.lance, weapon.ignore_cover,
                    titan_killer_damage=titan_killer_dice(weapon), aimed=aimed)] * scored


# -- barrages (TP 1.9.8) ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BarrageRow:
    bp_min: int
    bp_max: int
    templates: int
    extra_blast_markers: int
    ap: int
    at: int


@cache
def barrage_table() -> tuple[BarrageRow, ...]:
    """The barrage table (TP 1.9.8), from ``barrage_table.toml``."""
    rows = tomllib.loads(files(__package__).joinpath("barrage_table.toml").read_text("utf-8"))["row"]
    return tuple(BarrageRow(**row) for row in rows)


def barrage_row(bp: int) -> BarrageRow:
    """The row for ``bp`` barrage points; above the table, its last row (reading, docs/epic-turn.md §3.6)."""
    for row in barrage_table():
        if row.bp_min <= bp <= row.bp_max:
            return row
    return barrage_table()[-1]


def template_capacity(unit: Unit) -> float:
    """Room a unit takes under a template for the default coverage: a template holds 3 infantry or
    light vehicles or 2 armoured vehicles, or one war engine under its centre (reading,
    docs/epic-turn.md §3.6; epic-shooting §10.3)."""
    return {"AV": 1.5, "WE": 3.0}.get(unit.slot.type, 1.0)


def template_cover(exposed: list[Unit], templates: int, per_template: int | None, room_per_template: float = 3.0
                   ) -> list[tuple[Unit, bool]]:
    """Target units under the templates, front first, each with whether it lies under a template's
    centre (the first unit a template covers, reading): ``per_template`` units each if given, else as
    many as fit by :func:`template_capacity` (TP 1.9.8 placement; reading, docs/epic-turn.md §3.6)."""
    under, i = [], 0
    for _ in range(templates):
        room = room_per_template
        taken = 0
        while i < len(exposed):
            size = 1.0 if per_template is not None else template_capacity(exposed[i])
            if (per_template is not None and taken >= per_template) or (per_template is None and size > room):
                break
            under.append((exposed[i], taken == 0))
            room -= size
            taken += 1
            i += 1
    return under


def barrage_attacks(unit: Unit, centred: bool) -> int:
    """Attacks a unit under the barrage takes: 1; a war engine under a template's centre ⌈starting DC / 2⌉,
    never more however many templates cover it (TP 3.2.1; TP-FAQ Allocating Hits To War Engines)."""
    return ceil(unit.slot.damage_capacity / 2) if unit.slot.type == "WE" and centred else 1


def barrage(trial: Trial, firers: list[Unit], weapons_of, exposed: list[Unit], orders: FireOrders
            ) -> tuple[list[ShotHit], int]:
    """The formation's one barrage: BP of every barrage weapon added, the table row, one to-hit roll
    per unit under a template on the AP value (infantry and light vehicles, reading, docs/epic-turn.md §3.6) or the
    AT value; an ability counts only when every weapon has it (TP 1.9.8, 2.0; TP-FAQ Barrages).
    Returns the hits (each on its unit) and the extra BMs for the formation attacked."""
    lines = [w for u in firers for w in weapons_of(u) if w.bp is not None]
    if not lines:
        return [], 0
    bp = sum(roll_amount(trial, w.bp, f"{w.name}: barrage points")
             for w in lines for _ in range(w.count) for _ in range(roll_amount(trial, w.shots, f"{w.name}: shots")))
    row = barrage_row(bp)
    every = {name: all(getattr(w, name) for w in lines) for name in ("disrupt", "ignore_cover", "sniper", "lance")}
    macro = all(w.macro for w in lines)
    titan = all(w.titan_killer for w in lines)
    trial.say("TP 1.9.8", f"barrage of {bp} BP"
                          f"{' (above the table: its last row, reading)' if bp > row.bp_max else ''}: "
                          f"{row.templates} template(s), +{row.extra_blast_markers} BM, AP{row.ap}+/AT{row.at}+"
                          f"{', macro-weapon' if macro else ''}")
    under = template_cover(exposed, row.templates, orders.templates_cover, orders.template_room)
    modifier = orders.modifier - (1 if orders.cover and not every["ignore_cover"] else 0)
    tk_damage = titan_killer_dice(lines[0])  # reading: a titan-killer barrage does its first line's damage
    hits = []
    for unit, centred in under:
        value = row.ap if unit.slot.type in INFANTRY_TARGETS else row.at
        attacks = barrage_attacks(unit, centred)
        if attacks > 1:
            trial.say("TP 3.2.1", f"  {unit.label} is under a template's centre: {attacks} attacks (⌈DC/2⌉)")
        for _ in range(attacks):
            hit, dice = roll_to_hit(trial.rng, value, modifier)
            trial.say("TP 1.9.8", f"  {unit.label} under a template: {value}+ modifier {modifier:+d}: {dice} → "
                                  f"{'hit' if hit else 'miss'}")
            if hit:
                kind = TK if titan else MW if macro else (AP if unit.slot.type in INFANTRY_TARGETS else AT)
                hits.append(ShotHit(kind, every["sniper"], every["disrupt"], every["lance"], every["ignore_cover"],
                                    unit, tk_damage))
    return hits, row.extra_blast_markers


# -- allocation (TP 1.9.6; docs/epic-turn.md §3) ---------------------------------------------------

def allocate(hits: list[ShotHit], units: list[Unit]) -> list[tuple[ShotHit, Unit]]:
    """:func:`allocate_damage` with every hit doing 1 damage: (hit, unit) pairs."""
    return [(hit, unit) for hit, unit, _ in allocate_damage(hits, units, lambda hit, unit: 1)]


def allocate_damage(hits: list[ShotHit], units: list[Unit], damage_of) -> list[tuple[ShotHit, Unit, int]]:
    """Hits to units front to back, no unit a second hit before every eligible unit has one (TP
    1.9.6); AP and AT pools together, a light vehicle taking the type with the larger surplus over
    the units that can take only that type (TP-FAQ Allocate Hits & Make Saving Throws; reading,
    docs/epic-turn.md §3.7).  A war engine takes a block of hits equal to its starting DC when its
    turn comes; a titan-killer hit on it counts as the damage ``damage_of(hit, unit)`` rolls at
    allocation, and the block ends once that reaches its DC, with no spill-over (TP 3.2.1, 3.2.5;
    epic-shooting §10.4).  Sniper hits go to a unit the attacker picks: the first Inspiring, Leader
    or Supreme Commander unit that can take them, else the first (TP 2.1.14; TP-FAQ Sniper).  Hits no
    unit can take are lost.  Returns (hit, unit, damage) triples."""
    triples = []
    for hit in [h for h in hits if h.sniper]:
        able = [u for u in units if can_take(u, hit.kind)]
        if able:
            unit = next((u for u in able if u.slot.inspiring or u.slot.leader), able[0])
            triples.append((hit, unit, damage_of(hit, unit)))
    pools: dict[str, list[ShotHit]] = {}
    for hit in hits:
        if not hit.sniper:
            pools.setdefault(hit.kind, []).append(hit)
    count = {id(u): 0 for u in units}
    while True:
        left = [k for k, pool in pools.items() if pool]
        takers = [u for u in units if any(can_take(u, k) for k in left)]
        if not takers:
            return triples
        least = min(count[id(u)] for u in takers)
        unit = next(u for u in takers if count[id(u)] == least)
        kinds = [k for k in left if can_take(unit, k)]
        if len(kinds) > 1:
            def surplus(kind):
                only = sum(1 for w in takers if w is not unit and count[id(w)] == least
                           and [k for k in left if can_take(w, k)] == [kind])
                able = sum(can_take(w, kind) for w in units)
                return len(pools[kind]) - only, -able, kind == AT
            kinds = [max(kinds, key=surplus)]
        pool = pools[kinds[0]]
        block = unit.slot.damage_capacity if unit.slot.type == "WE" else 1
        taken = 0
        while pool and taken < block:
            hit = pool.pop(0)
            damage = damage_of(hit, unit)
            triples.append((hit, unit, damage))
            taken += damage if hit.kind == TK else 1
        count[id(unit)] += 1


# -- blast markers, broken targets and casualties (TP 1.9.4, 1.11, 1.13.4, 2.1.22, 2.2.2, 3.2.2) -----

@dataclass
class AttackState:
    """Running totals of one attack on one target."""

    target: Formation
    broken: bool  # the target was broken when the attack began: its BMs become hits (TP 1.13.4)
    crossfire: bool
    report: AttackReport
    by_side: int = 0  # the shooter's side (kills it scores)
    first_kill_done: bool = False
    tsknf_leftover: int = 0  # a broken TSKNF target needs 2 would-be BMs per hit (TP-SR TSKNF)
    damage_markers: int = 0  # BMs from war-engine damage points not yet placed (TP 3.2.2)
    converting: bool = False  # resolving a broken target's no-save hits: their damage places nothing
    dead: set = field(default_factory=set)  # ids of units whose death was counted
    splashed: list = field(default_factory=list)  # other formations that took BMs from a critical's splash
    jink: bool = False  # flak at jinking aircraft: 4+ saves instead of armour (TP 4.2.3)

    def first_casualty_markers(self) -> int:
        """The BMs of a casualty: 1, and 2 for the attack's first in a crossfire (TP 1.11)."""
        first = self.crossfire and not self.first_kill_done
        self.first_kill_done = True
        return 2 if first else 1

    def book_damage(self, trial: Trial, unit: Unit, points: int, marker: bool) -> None:
        """The trial's ``damage_sink`` during the attack: war-engine damage points (and units a critical's
        splash destroys) count as kills of the target when a unit dies, and as BMs, one per point: on the
        target after the save step, at once on another formation (TP 1.9.4, 3.2.2, 3.2.4; TP-FAQ Critical
        Hits, Blast Markers; reading: a crossfire's extra BM goes with the first point)."""
        formation = trial.formation_of(unit)
        if not unit.alive and id(unit) not in self.dead:
            self.dead.add(id(unit))
            if formation is self.target:
                self.report.kills += 1
        if not marker or self.converting:
            return
        if formation is not self.target:
            if not formation.broken and formation.living:
                formation.blast_markers += points
                self.splashed.append(formation)
                trial.say("TP 3.2.3",
                          f"{formation.name}: +{points} BM (critical-hit splash) → {formation.blast_markers}")
            return
        self.damage_markers += points - 1 + self.first_casualty_markers()

    def take_damage_markers(self) -> int:
        markers, self.damage_markers = self.damage_markers, 0
        return markers


def add_blast_markers(trial: Trial, state: AttackState, n: int, why: str) -> None:
    """Place ``n`` BMs on the target; a broken target takes a no-save hit for each instead (TSKNF:
    one per 2), front to back, Fearless units immune, and those deaths place nothing; on a war engine
    such a hit is 1 damage that shields do not stop, and it rolls for a critical (TP 1.9.4, 1.13.4,
    2.1.3, 3.2.4; TP-SR TSKNF; TP-FAQ Blast Markers and Broken Formations, Imperial Void Shields;
    reading, docs/epic-turn.md §3.12)."""
    if n <= 0:
        return
    target = state.target
    if not state.broken:
        target.blast_markers += n
        state.report.blast_markers_placed += n
        trial.say("TP 1.9.4", f"{target.name}: +{n} BM ({why}) → {target.blast_markers}")
        return
    if target.tsknf:
        state.tsknf_leftover += n
        n, state.tsknf_leftover = divmod(state.tsknf_leftover, 2)
    trial.say("TP 1.13.4", f"{target.name} is broken: {why} gives {n} no-save hit(s) instead of BMs"
                           f"{' (TSKNF: 2 per hit)' if target.tsknf else ''}")
    state.converting = True
    for _ in range(n):
        victim = next((u for u in target.living if not u.slot.fearless), None)
        if victim is None:
            trial.say("TP 1.13.4", "  no unit can take it")
            break
        if automaton_saves(trial, victim):
            continue
        if victim.slot.type == "WE":
            damage_hull(trial, victim, 1, "TP 3.2.4", state.by_side)
            continue
        wound(victim)
        state.report.kills += 1
        trial.say("TP 1.13.4", f"  {victim.label} → destroyed")
    state.converting = False


def wound(unit: Unit) -> None:
    """A unit that is not a war engine loses its one point of damage capacity: it dies."""
    unit.damage_left = 0
    unit.alive = False


def kill_blast_markers(trial: Trial, state: AttackState, unit: Unit, hit: ShotHit) -> int:
    """BMs a death places: 1, or 0 for an Expendable unit unless its whole formation is Expendable,
    0 for an Automaton or Automata unit, or 0 when a disrupt hit already placed its BM; the attack's first
    such death counts 2 in a crossfire (TP 1.9.4, 1.11, 2.1.22, 2.2.2; TP-SR Automaton, Automata)."""
    if hit.disrupt or unit.slot.automaton or unit.slot.automata:
        return 0
    if unit.slot.expendable and not all(u.slot.expendable for u in state.target.units):
        return 0
    return state.first_casualty_markers()


def no_disrupt_marker(unit: Unit) -> bool:
    """A disrupt hit on an Expendable or Automata unit places no BM (TP-FAQ Disrupt; TP-SR Automata; an
    Automaton's does: TP-SR Automaton)."""
    return unit.slot.expendable or unit.slot.automata


def hit_war_engine(trial: Trial, state: AttackState, hit: ShotHit, unit: Unit, damage: int) -> int:
    """One hit (``damage`` points for a titan killer) on a war engine: void shields and power fields stop
    a point each, a shadowfield the hit, with no save and no BM; a disrupt hit that gets through places
    1 BM and its damage none; each point left is saved on its own (a titan killer: only an invulnerable
    save, per point); unsaved points go to the hull, each −1 DC, +1 BM and a critical roll (TP 2.2.2,
    3.2.2–3.2.5; TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology; TP-FAQ Disrupt,
    Invulnerable Saves; epic-shooting §13 Q11).  Returns the BMs of the disrupt hit."""
    points = shields_stop(trial, unit, damage, close_combat=False)
    if not points:
        return 0
    unsaved = sum(not save_roll(trial, unit, hit, None, state.crossfire, state.jink) for _ in range(points))
    if unsaved:
        damage_hull(trial, unit, unsaved, "TP 3.2.2", state.by_side, books=not hit.disrupt)
    return int(hit.disrupt)


def resolve(trial: Trial, state: AttackState, triples: list[tuple[ShotHit, Unit, int]], cover_save: int | None,
            name: str) -> None:
    """Saves for one allocation, casualties removed, then the BMs for its kills, war-engine damage and
    disrupt hits (TP 1.9.4, 1.9.6, 2.2.2, 3.2.2).  Hits on a unit already destroyed are lost."""
    markers = 0
    for hit, unit, damage in triples:
        if not unit.alive:
            trial.say("TP 1.9.6", f"  {unit.label}: already destroyed, {hit.kind} hit lost")
            markers += hit.disrupt and unit.slot.type != "WE" and not no_disrupt_marker(unit)
            continue
        if unit.slot.type == "WE":
            markers += hit_war_engine(trial, state, hit, unit, damage)
            continue
        if hit.disrupt and not no_disrupt_marker(unit):
            markers += 1
        saves = cover_save if unit.slot.type == "INF" else None
        if save_roll(trial, unit, hit, saves, state.crossfire, state.jink):
            continue
        wound(unit)
        state.dead.add(id(unit))
        state.report.kills += 1
        markers += kill_blast_markers(trial, state, unit, hit)
        trial.say("TP 1.9.6", f"  {unit.label} destroyed")
    markers += state.take_damage_markers()
    if triples:
        add_blast_markers(trial, state, markers, f"{name}: kills, war-engine damage and disrupt hits")


def break_check(trial: Trial, target: Formation, was_broken: bool) -> bool:
    """After the whole attack: broken when BMs ≥ units, a war engine counting its starting DC (TSKNF:
    2 per unit); its BMs are removed and it withdraws (TP 1.9.7, 1.13.2, 1.13.3, 3.2.4).  True when it
    broke now."""
    if was_broken or not target.living:
        return False
    if not fails_break_test(target):
        trial.say("TP 1.9.7", f"{target.name}: {target.blast_markers} BM(s), break point {target.size}: holds")
        return False
    break_formation(trial, target, "TP 1.9.7", withdraws=True)
    return True


# -- the whole attack (TP 1.9.3) ----------------------------------------------------------------------

def shoot(trial: Trial, shooter: Formation, target: Formation, weapons_of, orders: FireOrders) -> AttackReport:
    """One shooting attack (TP 1.9.3 order): suppression, +1 BM for coming under fire, to-hit
    rolls and the barrage, non-MW hits allocated and saved, then MW/TK hits on the survivors, BMs
    for kills and war-engine damage, the barrage's extra BMs, and the break check once the attack is
    over (TP 1.9.2–1.9.8, 2.2.6, 3.2; readings of docs/epic-turn.md §3).  ``weapons_of(unit)`` gives a
    unit's weapon lines."""
    report = AttackReport()
    if shooter.broken or not shooter.living:
        trial.say("TP 1.13", f"{shooter.name} is broken or destroyed: no shooting")
        return report
    trial.say("TP 1.9.1", f"{shooter.name} shoots at {target.name}")
    cands = candidates(shooter, weapons_of, orders.in_range)
    if orders.suppressible:
        firers = suppress(trial, shooter, cands)
    else:
        firers = cands
        trial.say("TP 4.1.1", f"{shooter.name}: aircraft and spacecraft are never suppressed: {len(firers)} fire")
    if not firers or not target.living:
        trial.say("TP-FAQ Place Blast Marker", "no unit can fire: no attack, no blast marker")
        return report
    report.fired = True
    state = AttackState(target, target.broken, orders.crossfire, report, by_side=shooter.side)
    trial.damage_sink = lambda unit, points, marker: state.book_damage(trial, unit, points, marker)
    try:
        add_blast_markers(trial, state, 1, "coming under fire")
        exposed = target.living[:orders.exposed] if orders.exposed is not None else target.living
        if orders.aim_war_engine is not None:
            engines = [u for u in target.living if u.slot.type == "WE"]
            exposed = engines[orders.aim_war_engine:orders.aim_war_engine + 1] or engines[:1]
            trial.say("TP 4.3.4", f"pin-point attack at {exposed[0].label}" if exposed else "no war engine left")
        direct = direct_fire(trial, firers, weapons_of,
                             TargetGroups.of(target, exposed, pin_point=orders.aim_war_engine is not None), orders)
        templates, extra = barrage(trial, firers, weapons_of, exposed, orders)
        report.hits = len(direct) + len(templates)
        if orders.crossfire:
            trial.say("TP 1.11", "crossfire: −1 to every save, the first kill places 2 BMs")

        def damage_of(hit, unit):
            return titan_killer_damage(trial, hit, unit) if hit.kind == TK else 1

        for name, kinds in (("normal hits", (AP, AT)), ("macro-weapon hits", (MW, TK))):
            living = [u for u in exposed if u.alive]
            triples = [(h, h.unit, damage_of(h, h.unit)) for h in templates if h.kind in kinds]
            for group in (None, WAR_ENGINES, OTHERS):  # a declared weapon's hits go only to its group (TP 3.2.1)
                aimed = [h for h in direct if h.kind in kinds and h.aimed == group]
                units = [u for u in living if group is None or (u.slot.type == "WE") == (group == WAR_ENGINES)]
                given = allocate_damage(aimed, units, damage_of)
                if group is not None and len(given) < len(aimed):
                    trial.say("TP 3.2.1", f"{len(aimed) - len(given)} hit(s) declared at the "
                                          f"{group.replace('_', ' ')} lost: no unit of that group can take them")
                triples += given
            if triples:
                trial.say("TP 2.2.6" if kinds == (MW, TK) else "TP 1.9.6",
                          f"{name}: " + ", ".join(f"{h.kind}{f'({d})' if d > 1 else ''}→{u.label}"
                                                  for h, u, d in triples))
            resolve(trial, state, triples, orders.cover_save if orders.cover else None, name)
        add_blast_markers(trial, state, extra, "barrage extra BMs")
    finally:
        trial.damage_sink = None
    report.target_broke = break_check(trial, target, state.broken)
    for formation in dict.fromkeys(state.splashed):
        break_check(trial, formation, False)
    return report
