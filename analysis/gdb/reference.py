"""Reference engine: one GdB charge, clause by clause of docs/gdb.md §2.1–§2.4 (pure Python).

Readable and slow on purpose.  It powers ``--trace`` (every roll, modifier and decision with its
clause) and is the yardstick the Numba kernel is tested against.  Dice come from any object with a
``d6()`` method, so tests can also enumerate every dice sequence exactly.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from .model import Model
from .tables import CHARGER_RESULTS, DEFENDER_RESULTS, band_lookup

CHARGER_KEYS = CHARGER_RESULTS + ("ELIMINATED",)
DEFENDER_KEYS = DEFENDER_RESULTS + ("NOT_TESTED",)
OUTCOMES = ("stopped_by_HALT", "stopped_by_WAVER", "stopped_by_RETREAT", "stopped_by_ROUT",
            "charger_eliminated_by_fire", "contact_steady", "contact_wavering",
            "gives_way_caught", "gives_way_escaped", "countercharge_meets_charge")
END_STATES = ("formed", "disordered", "retreating", "routing", "eliminated")


class RandomDice:
    """D6s from Python's ``random.Random`` (statistically independent of the kernel's streams)."""

    def __init__(self, key0: int, key1: int, block: int):
        self.rng = random.Random(f"gdb:{key0}:{key1}:{block}")
        self.rolled = 0

    def d6(self) -> int:
        self.rolled += 1
        return self.rng.randint(1, 6)


@dataclass(frozen=True)
class Firer:
    name: str
    role: str                 # "target" (closing fire, step 2) or "support" (step 3)
    arm: str
    quality: str
    formation: str
    strength: int
    formed: bool
    fired_last_turn: bool
    range: float


@dataclass
class Trial:
    """What one charge produced."""

    charger: str = "NOT_TESTED"
    defender: str = "NOT_TESTED"
    outcome: str = ""
    casualties: int = 0
    casualties_by_target: int = 0
    friends_disordered: int = 0
    charger_end: str = "formed"
    defender_end: str = "formed"
    charger_double_six: bool = False
    defender_double_six: bool = False
    log: list = field(default_factory=list)


def _note(trial: Trial, clause: str, text: str, verbose: bool):
    if verbose:
        trial.log.append((clause, text))


# -- step 1: half move ------------------------------------------------------------------------------
def half_move(model: Model) -> tuple[float, float, bool]:
    """§2.1 step 1 and Q-A3: (distance left to the target, distance moved, started close)."""
    c, rules, geo = model.scenario.charger, model.scenario.rules, model.tables.geometry
    step = c.charge_move / 2 if rules.half_move == "half_charge_move" else c.distance / 2
    if c.distance - step >= geo.base_depth:
        return c.distance - step, step, False
    stop = min(geo.base_depth, c.distance)          # Q-A3: stop one base depth short of contact
    return stop, c.distance - stop, True


# -- step 2: the target's reaction ------------------------------------------------------------------
def square_time_needed(model: Model) -> float:
    t = model.scenario.target
    if t.form_square_time is not None:
        return t.form_square_time
    return model.tables.formation_change_time.square[t.formation]


def reaction(model: Model, d_half: float) -> tuple[str, str]:
    """§2.1 step 2 and Q-A5: the reaction actually made, and why."""
    t, c = model.scenario.target, model.scenario.charger
    if t.reaction != "form_square":
        return t.reaction, f"declared {t.reaction}"
    time_left = d_half / c.charge_move                   # turns the chargers need to close
    need = square_time_needed(model)
    if need <= time_left:
        return "form_square", f"forming square takes {need:g} turn, {time_left:.3g} left: allowed"
    return t.fallback_reaction, (f"forming square takes {need:g} turn, only {time_left:.3g} left: "
                                 f"not allowed, falls back to {t.fallback_reaction}")


def position_at_test(model: Model, react: str) -> str:
    """Q-A7: the charger's zone at the moment of the tests (a turn to face may cancel it)."""
    c, t, rules = model.scenario.charger, model.scenario.target, model.scenario.rules
    if t.formation == "square":
        return "front"                                   # a square has no flank or rear
    if (rules.flank_bonus_timing == "after_reaction" and t.turn_clears_position
            and react in ("turn_to_face", "countercharge")):
        return "front"
    return c.position


# -- fire, steps 2 and 3 ----------------------------------------------------------------------------
def range_band(model: Model, arm: str, distance: float):
    """§2.2: the band the range falls in, or None when out of range (or the arm never fires)."""
    for band in getattr(model.tables.range_bands[model.scale], arm):
        if distance <= band.max:
            return band
    return None


def firers(model: Model, d_half: float, react: str, close: bool = False):
    """Steps 2–3, Q-A4 and Q-A6: (firer, band or None, reason) for every unit that might fire.

    After a close start (Q-A3) the target fires at its shortest band."""
    t = model.scenario.target
    out = []
    me = Firer(t.name, "target", t.arm, t.quality, t.formation, t.strength, t.formed, t.fired_last_turn, d_half)
    if react != "fire":
        out.append((me, None, f"reaction is {react}: no closing fire, fire lost for the turn (Q-A4)"))
    elif model.scenario.charger.position != "front" and t.formation not in ("square", "skirmish"):
        out.append((me, None, f"charger is in its {model.scenario.charger.position} zone, outside its arc: "
                              "cannot fire, fire lost for the turn (Q-A4)"))
    else:
        out.append(_can_fire(model, me, shortest=close))
    for s in model.scenario.supports:
        f = Firer(s.name, "support", s.arm, s.quality, s.formation, s.strength, s.formed, s.fired_last_turn, s.range)
        if s.countercharge:
            out.append((f, None, "declared a countercharge: does not fire (Q-A6)"))
        elif not s.priority_target:
            out.append((f, None, "has a higher-priority target: does not fire (Q-A6)"))
        else:
            out.append(_can_fire(model, f))
    return out


def _can_fire(model: Model, f: Firer, shortest: bool = False):
    bands = getattr(model.tables.range_bands[model.scale], f.arm)
    band = bands[0] if shortest and bands else range_band(model, f.arm, f.range)
    if getattr(model.tables.fire.firing_percent, f.formation) == 0:
        return f, None, f"cannot fire in {f.formation}: fire lost for the turn (Q-A4)"
    if band is None:
        return f, None, f"cannot fire at range {f.range:g}: fire lost for the turn (Q-A4)"
    return f, band, f"fires at range {f.range:g} ({band.name} band, x{band.scale}%)"


def fire_modifier(model: Model, f: Firer) -> list[tuple[str, int]]:
    """§2.2: the fire roll's modifiers against the charger."""
    fire, c = model.tables.fire, model.scenario.charger
    mods = [(f"quality {f.quality}", getattr(fire.quality, f.quality))]
    if f.fired_last_turn:
        mods.append(("fired last turn", fire.mods.fired_last_turn))
    if c.formation == "skirmish":
        mods.append(("at skirmishers", fire.mods.at_skirmishers))
    if c.formation == "column":
        mods.append(("at column", fire.mods.at_column))
    if not f.formed:
        mods.append(("firer disordered", fire.mods.firer_disordered))
    return [(k, v) for k, v in mods if v]


def fire_casualties(model: Model, f: Firer, band, total: int) -> int:
    """§2.2: round half up of strength x firing% x casualty% x band% (PLACEHOLDER fire table)."""
    fire = model.tables.fire
    pct = band_lookup(fire.bands, total).casualty_percent
    num = f.strength * getattr(fire.firing_percent, f.formation) * pct * band.scale
    return (num + 500_000) // 1_000_000


# -- steps 4 and 5: the tests -----------------------------------------------------------------------
def loss_steps(model: Model, casualties: int, strength: int) -> int:
    """Q-A10: modifier steps for the loss this phase (per figure, or per percent of strength)."""
    rule = model.tables.morale.casualties
    amount = casualties if rule.unit == "figures" else casualties * 100 // strength
    return amount // rule.step


def charger_modifiers(model: Model, casualties: int, position: str) -> list[tuple[str, int]]:
    """Step 4 with §2.3 charger_mods; the flank/rear bonus per Q-A7."""
    c, t, m = model.scenario.charger, model.scenario.target, model.tables.morale
    mods = [(f"quality {c.quality}", getattr(m.quality, c.quality))]
    if position == "flank":
        mods.append(("in the target's flank zone", m.charger_mods.flank_position))
    if position == "rear":
        mods.append(("in the target's rear zone", m.charger_mods.rear_position))
    steps = loss_steps(model, casualties, c.strength)
    if steps:
        mods.append((f"{casualties} casualties this phase", steps * m.charger_mods.per_casualty_this_phase))
    if not c.formed:
        mods.append(("disordered", m.charger_mods.disordered))
    if c.general_attached:
        mods.append(("general attached", m.charger_mods.general_attached))
    if c.formed_support_behind:
        mods.append(("formed support behind", m.charger_mods.formed_support_behind))
    if t.in_cover:
        mods.append(("target in cover", m.charger_mods.target_in_cover))
    return [(k, v) for k, v in mods if v]


def defender_modifiers(model: Model, position: str, react: str) -> list[tuple[str, int]]:
    """Step 5 with §2.3 defender_mods."""
    c, t, m = model.scenario.charger, model.scenario.target, model.tables.morale
    d = m.defender_mods
    mods = [(f"quality {t.quality}", getattr(m.quality, t.quality))]
    if position == "flank":
        mods.append(("charged in flank", d.charged_in_flank))
    if position == "rear":
        mods.append(("charged in rear", d.charged_in_rear))
    steps = loss_steps(model, t.casualties_this_phase, t.strength)
    if steps:
        mods.append((f"{t.casualties_this_phase} casualties this phase", steps * d.per_casualty_this_phase))
    if not t.formed:
        mods.append(("disordered", d.disordered))
    if t.general_attached:
        mods.append(("general attached", d.general_attached))
    if t.formed_support_behind:
        mods.append(("formed support behind", d.formed_support_behind))
    if t.in_cover:
        mods.append(("in cover", d.in_cover))
    in_square = t.formation == "square" or (react == "form_square" and model.scenario.rules.square_bonus_while_forming)
    if in_square and c.arm == "cavalry":
        mods.append(("square against cavalry", d.square_vs_cavalry))
    return [(k, v) for k, v in mods if v]


def roll(dice, n: int) -> list[int]:
    return [dice.d6() for _ in range(n)]


def morale_test(dice, tables, mods, bands):
    """A morale test (§2.3): the table's dice plus the modifiers, looked up in ``bands``.

    Returns the dice, the total, the result and whether two or more sixes came up (Q-A9)."""
    rolled = roll(dice, tables.morale.dice)
    total = sum(rolled) + sum(v for _, v in mods)
    return rolled, total, band_lookup(bands, total).result, rolled.count(6) >= 2


def _fmt(mods) -> str:
    return ", ".join(f"{k} {v:+d}" for k, v in mods) or "none"


# -- the whole sequence -----------------------------------------------------------------------------
def resolve(model: Model, dice, verbose: bool = False) -> Trial:
    """One charge: §2.1 steps 1–5 with the §2.4 effects."""
    s, tables = model.scenario, model.tables
    c, t, rules = s.charger, s.target, s.rules
    trial = Trial(charger_end="formed" if c.formed else "disordered",
                  defender_end="formed" if t.formed else "disordered")
    tables_kind = "PLACEHOLDER tables (§2.3)" if tables.placeholder else f"tables {tables.source}"
    _note(trial, "setup", f"{c.name} ({c.quality} {c.arm}, {c.formation}, {c.strength} figures) charges "
          f"{t.name} ({t.quality} {t.arm}, {t.formation}) from {c.distance:g}, {c.position}; {tables_kind}", verbose)

    d_half, moved, close = half_move(model)
    _note(trial, "§2.1 step 1" + (", Q-A3: started close, stops one base depth short" if close else ""),
          f"half move {moved:g} ({rules.half_move}); {d_half:g} left to the target", verbose)

    react, why = reaction(model, d_half)
    _note(trial, "§2.1 step 2" + (", Q-A5" if t.reaction == "form_square" else ""), f"{t.name}: {why}", verbose)
    position = position_at_test(model, react)
    if position != c.position:
        _note(trial, "Q-A7", f"charger's {c.position} position no longer counts: it is now {position}", verbose)

    casualties = 0
    for f, band, why in firers(model, d_half, react, close):
        clause = "§2.1 step 2, §2.2" if f.role == "target" else "§2.1 step 3, Q-A6"
        if band is None:
            _note(trial, clause, f"{f.name}: {why}", verbose)
            continue
        dice_ = roll(dice, tables.fire.dice)
        mods = fire_modifier(model, f)
        total = sum(dice_) + sum(v for _, v in mods)
        cas = fire_casualties(model, f, band, total)
        casualties += cas
        if f.role == "target":
            trial.casualties_by_target += cas
        _note(trial, clause, f"{f.name} {why}: rolls {dice_} {_fmt(mods)} = {total} -> {cas} casualties", verbose)
    casualties = min(casualties, c.strength)
    trial.casualties = casualties
    trial.casualties_by_target = min(trial.casualties_by_target, casualties)
    _note(trial, "§2.2", f"{c.name} loses {casualties} figures before the tests ({c.strength - casualties} left)",
          verbose)
    if casualties >= c.strength:
        trial.charger, trial.outcome, trial.charger_end = "ELIMINATED", "charger_eliminated_by_fire", "eliminated"
        _note(trial, "§2.2", f"{c.name} is destroyed by the fire: no test", verbose)
        return trial

    # step 4: the charger's test, always taken
    mods = charger_modifiers(model, casualties, position)
    dice_, total, trial.charger, trial.charger_double_six = morale_test(dice, tables, mods, tables.morale.charger_bands)
    _note(trial, "§2.1 step 4, §2.3", f"{c.name} tests: rolls {dice_} {_fmt(mods)} = {total} -> {trial.charger}"
          + (" (double six, Q-A9)" if trial.charger_double_six else ""), verbose)
    if trial.charger != "PASS":
        trial.outcome = f"stopped_by_{trial.charger}"
        if trial.charger == "HALT":
            _note(trial, "§2.4", f"{c.name} halts where it is, stays {trial.charger_end}; may fire, may turn to face",
                  verbose)
        elif trial.charger == "WAVER":
            trial.charger_end = "disordered"
            _note(trial, "§2.4", f"{c.name} wavers: stops, becomes disordered; may fire, may not move", verbose)
        else:
            moves = getattr(tables.moves, c.arm)
            move = moves.retreat if trial.charger == "RETREAT" else moves.rout
            now = rules.retreat_now_fraction * move
            trial.charger_end = "retreating" if trial.charger == "RETREAT" else "routing"
            trial.friends_disordered = sum(1 for d in c.friends_behind if d <= now)
            _note(trial, "§2.4", f"{c.name} makes {now:g} of its {move:g} {trial.charger.lower()} move now; "
                  f"{trial.friends_disordered} friendly unit(s) passed through become disordered", verbose)
        return trial

    # step 5: the defender's test, only after the charger passed
    mods = defender_modifiers(model, position, react)
    dice_, total, trial.defender, trial.defender_double_six = morale_test(dice, tables, mods,
                                                                          tables.morale.defender_bands)
    _note(trial, "§2.1 step 5, §2.3", f"{t.name} tests: rolls {dice_} {_fmt(mods)} = {total} -> {trial.defender}"
          + (" (double six, Q-A9)" if trial.defender_double_six else ""), verbose)
    if trial.defender == "PASS":
        if react == "countercharge":
            trial.outcome = "countercharge_meets_charge"
            _note(trial, "§2.4", f"{t.name} countercharges straight into contact", verbose)
        else:
            trial.outcome = "contact_steady"
            what = "completes its square and " if react == "form_square" else ""
            _note(trial, "§2.4", f"{t.name} {what}stands; {c.name} moves into contact (melee in the Melee Phase)",
                  verbose)
    elif trial.defender == "WAVER":
        trial.outcome, trial.defender_end = "contact_wavering", "disordered"
        _note(trial, "§2.4", f"{t.name} wavers: stands, disordered, no charge or formation bonus; contact", verbose)
    else:
        moves = getattr(tables.moves, t.arm)
        move = moves.retreat if trial.defender == "RETREAT" else moves.rout
        now = rules.retreat_now_fraction * move
        trial.defender_end = "retreating" if trial.defender == "RETREAT" else "routing"
        reach = c.charge_move - moved
        if rules.catch_retreating == "if_reached":
            caught = reach >= d_half + now
        else:
            caught = rules.catch_retreating == "always"
        trial.outcome = "gives_way_caught" if caught else "gives_way_escaped"
        _note(trial, "§2.4, Q-A8", f"{t.name} makes {now:g} of its {move:g} {trial.defender.lower()} move now; "
              f"{c.name} has {reach:g} of move for {d_half + now:g} ({rules.catch_retreating}) -> "
              + ("caught: contact, defender disordered without bonuses" if caught else "escapes"), verbose)
    return trial
