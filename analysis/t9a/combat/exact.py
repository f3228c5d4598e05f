"""Exact T9A close combat (docs/t9a.md, "Close combat" §C9, §C12): per-attack probabilities, the dice of the
Break Test, flee, pursuit and rally, and the whole fight as a Markov chain over the HP left of both units.

Each attack is an independent trial with p = P(hit)·P(wound)·P(armour fails)·P(special save fails), so a
part's unsaved wounds at one Initiative Step are Binomial(n, p) (§C9).  The fight is exact: every step's HP
losses are convolved into the joint distribution of (HP left of the charger, HP left of the target), round
after round.  Values are :class:`fractions.Fraction` with ``exact=True`` (slow beyond small units), floats
otherwise.  The deterministic steps (ranks, attackers, Combat Score) are the reference engine's.
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from functools import lru_cache
from itertools import product

from ...intake.errors import ArgumentError

from .model import (
    CombatSpec, DiceExpr, PartSpec, UnitSpec, armour_need, decimated, halved_up, to_hit_need, to_wound_need)
from .reference import attacks_made, break_discipline, full_ranks, in_contact, rank_bonus

ONE = Fraction(1)


def d6_at_least(need: int) -> Fraction:
    """P(D6 ≥ need) with a natural 1 failing and a natural 6 succeeding (need clamped to 2..6)."""
    return Fraction(7 - min(6, max(2, need)), 6)


def save_fails(need: int) -> Fraction:
    """P(a save needing ``need``+ fails); 7 (or 0, no special save) means there is no save."""
    return ONE if need >= 7 or need == 0 else 1 - d6_at_least(need)


def attack_probability(combat: CombatSpec, part: PartSpec, target: UnitSpec, charging: bool,
                       first_round: bool) -> Fraction:
    """§C5.1–§C5.4, §C9: P(one close-combat attack of ``part`` costs ``target`` an unsaved wound)."""
    hit = d6_at_least(to_hit_need(part.offensive_skill, target.defensive_skill, combat.to_hit_table,
                                  part.to_hit_mod))
    if part.hatred and first_round:
        hit = hit + (1 - hit) * hit
    strength = part.strength + (part.charge_strength if charging else 0)
    penetration = part.armour_penetration + (part.charge_ap if charging else 0)
    return hit * automatic_hit_probability(strength, penetration, target)


def automatic_hit_probability(strength: int, penetration: int, target: UnitSpec) -> Fraction:
    """§C5.2–§C5.4: P(a hit wounds and is not saved)."""
    return (d6_at_least(to_wound_need(strength, target.resilience))
            * save_fails(armour_need(target.armour, penetration)) * save_fails(target.special_save))


def binomial(n: int, p, upto: int | None = None) -> list:
    """P(k successes of n), k = 0..``upto`` (default n): exact for a :class:`~fractions.Fraction` ``p``; for a
    float through logarithms, so that a thousand attacks or more neither overflow nor underflow to nan."""
    from math import comb, exp, lgamma, log, log1p

    upto = n if upto is None else min(n, upto)
    if isinstance(p, Fraction):
        q = 1 - p
        return [comb(n, k) * p ** k * q ** (n - k) for k in range(upto + 1)]
    if p <= 0 or p >= 1:
        certain = n if p >= 1 else 0
        return [1.0 if k == certain else 0.0 for k in range(upto + 1)]
    log_p, log_q, log_n = log(p), log1p(-p), lgamma(n + 1)
    return [exp(log_n - lgamma(k + 1) - lgamma(n - k + 1) + k * log_p + (n - k) * log_q) for k in range(upto + 1)]


def _add(a: dict, b: dict, cap: int | None = None) -> dict:
    """The distribution of the sum of two independent whole numbers; with ``cap``, of min(sum, cap) (HP lost
    beyond the HP a unit has change nothing, so the fight folds them into its HP)."""
    out = defaultdict(int)
    for x, p in a.items():
        for y, q in b.items():
            out[x + y if cap is None else min(x + y, cap)] += p * q
    return dict(out)


def _sum_of(dist: dict, times: int, cap: int | None = None) -> dict:
    out = {0: ONE}
    for _ in range(times):
        out = _add(out, dist, cap)
    return out


@lru_cache(maxsize=None)
def expr_distribution(expr: DiceExpr) -> dict[int, Fraction]:
    """A number of the profile: fixed, or its dice (D3 = a D6 halved, rounding up)."""
    face = {x: Fraction(1, 6) for x in range(1, 7)} if expr.sides == 6 else {x: Fraction(1, 3) for x in (1, 2, 3)}
    return {v + expr.add: p for v, p in _sum_of(face, expr.dice).items()}


def _mixture(counts: dict, per_count) -> dict:
    out = defaultdict(int)
    for n, p in counts.items():
        for v, q in per_count(n).items():
            out[v] += p * q
    return dict(out)


def _number(p: Fraction, exact: bool):
    return p if exact else float(p)


def _numbers(dist: dict, exact: bool) -> dict:
    return dist if exact else {v: float(p) for v, p in dist.items()}


def _damage(unsaved: dict, part: PartSpec, target: UnitSpec, exact: bool) -> dict:
    """§C5.5: HP lost from a distribution of unsaved wounds (Multiple Wounds, at most the HP each), at most the
    target's HP."""
    if part.multiple_wounds == DiceExpr(0, 0, 1):
        return unsaved
    per_wound = defaultdict(int)
    for v, p in _numbers(expr_distribution(part.multiple_wounds), exact).items():
        per_wound[min(v, target.hp)] += p
    out = defaultdict(int)
    lost = {0: ONE}  # the HP lost to k unsaved wounds, k = 0, 1, … (one more wound added each time)
    for k in range(max(unsaved) + 1):
        if k:
            lost = _add(lost, per_wound, target.start_hp)
        for v, q in lost.items():
            out[v] += unsaved.get(k, 0) * q
    return dict(out)


def _unsaved(n: int, p, cap: int | None = None) -> dict:
    """Binomial(n, p) unsaved wounds; with ``cap``, min(wounds, cap) (the tail folded into ``cap``)."""
    if cap is None or n <= cap:
        return dict(enumerate(binomial(n, p)))
    out = dict(enumerate(binomial(n, p, cap - 1)))
    out[cap] = max(0, 1 - sum(out.values()))  # (a float sum may pass 1 by a rounding)
    return out


def step_damage(combat: CombatSpec, side: int, models: int, step: int, round_no: int, exact: bool) -> dict:
    """The distribution of the HP side ``side``'s attacks at Initiative ``step`` cost the enemy (§C4.4, §C5)."""
    return _step_damage(combat, side, models, step, round_no == 1, exact)


@lru_cache(maxsize=None)
def _step_damage(combat: CombatSpec, side: int, models: int, step: int, first_round: bool, exact: bool) -> dict:
    attacker, target = combat.units()[side], combat.units()[1 - side]
    charging = side == 0 and first_round
    round_no = 1 if first_round else 2
    cap = target.start_hp  # (HP lost beyond it change nothing: folded into it)
    total = {0: ONE}
    for part in attacker.parts:
        if charging and step == 10 and part.impact_hits is not None:
            total = _add(total, _special(part, part.impact_hits, attacker, target, models, exact), cap)
        if part.step(charging) == step:
            front, supporting = attacks_made(attacker, part, models)
            p = attack_probability(combat, part, target, charging, round_no == 1)
            unsaved = _unsaved(front + supporting, p if exact else float(p), cap)
            total = _add(total, _damage(unsaved, part, target, exact), cap)
        if step == 0 and part.stomp_attacks is not None and target.height == "standard":
            total = _add(total, _special(part, part.stomp_attacks, attacker, target, models, exact), cap)
    return _numbers(total, exact)  # (floats throughout: a Fraction 1 times a float is slow)


def _special(part: PartSpec, expr: DiceExpr, attacker: UnitSpec, target: UnitSpec, models: int, exact: bool):
    """§C5.6: X automatic hits per model in contact, at the part's own Strength and AP, 1 HP each."""
    p = automatic_hit_probability(part.strength, part.armour_penetration, target)
    hits = _sum_of(_numbers(expr_distribution(expr), exact), in_contact(attacker, models), target.start_hp)
    return _mixture(hits, lambda n: _unsaved(n, p if exact else float(p), target.start_hp))


# -- the dice of §C7–§C8 ----------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def two_dice(maximised: bool = False) -> dict[int, Fraction]:
    """§C8.2: the total of 2D6, or of a Maximised 2D6 (3D6, the lowest dropped)."""
    out = defaultdict(int)
    n = 3 if maximised else 2
    for dice in product(range(1, 7), repeat=n):
        out[sum(sorted(dice)[-2:])] += Fraction(1, 6 ** n)
    return dict(out)


@lru_cache(maxsize=None)
def p_discipline_test(discipline: int, reroll: bool = False, double_one_passes: bool = False,
                      only_double_one: bool = False) -> Fraction:
    """§C7.1, §C7.5, Q-C9: P(a Discipline Test passes), with the Battle Standard's re-roll."""
    if only_double_one:
        once = Fraction(1, 36)
    else:
        once = sum((p for t, p in two_dice().items() if t <= discipline or (double_one_passes and t == 2)),
                   Fraction(0))
    return 1 - (1 - once) ** 2 if reroll else once


@lru_cache(maxsize=None)
def p_caught(flee_maximised: bool = False, pursuit_maximised: bool = False) -> Fraction:
    """§C8.1: P(pursuit ≥ flee)."""
    return sum((p * q for f, p in two_dice(flee_maximised).items() for r, q in two_dice(pursuit_maximised).items()
                if r >= f), Fraction(0))


def p_break(loser: UnitSpec, loser_models: int, winner: UnitSpec, winner_models: int, margin: int,
            combat: CombatSpec) -> Fraction:
    """§C7: P(the loser of a round by ``margin`` fails its Break Test)."""
    if loser.unbreakable:
        return Fraction(0)
    discipline, _ = break_discipline(loser, loser_models, winner, winner_models, margin)
    return 1 - p_discipline_test(discipline, loser.rally_around_the_flag, combat.double_one_passes)


def p_rally(unit: UnitSpec, hp_left: int, combat: CombatSpec) -> Fraction:
    """§C8.4, Q-C11, Q-C16: P(a fled unit rallies)."""
    base = max(unit.discipline, unit.general_discipline)
    only_double_one = False
    if decimated(unit, hp_left) and combat.decimated_rally == "halve":
        base = halved_up(base)
    elif decimated(unit, hp_left) and combat.decimated_rally == "double_one_only":
        only_double_one = True
    return p_discipline_test(base, unit.rally_around_the_flag, combat.double_one_passes, only_double_one)


# -- the whole fight --------------------------------------------------------------------------------
OUTCOMES = ("r1_a_wins", "r1_b_wins", "r1_draw", "r1_a_breaks", "r1_b_breaks", "r1_a_caught", "r1_b_caught",
            "r1_a_wiped", "r1_b_wiped", "continues_to_round_2", "a_wins", "b_wins", "unresolved", "a_breaks",
            "b_breaks", "a_caught", "b_caught", "a_destroyed", "b_destroyed", "a_fled_rallied", "b_fled_rallied",
            "a_fled_not_rallied", "b_fled_not_rallied")


def _round(combat: CombatSpec, state: tuple[int, int], round_no: int, exact: bool,
           tables: dict | None = None) -> dict:
    """§C4.4: the joint distribution of the HP left after one round's Initiative Steps 10 → 0 (``tables``: the
    fight's own memo of :func:`step_damage`, looked up without hashing the whole combat)."""
    units = combat.units()
    tables = {} if tables is None else tables
    dist = {state: ONE if exact else 1.0}
    for step in range(10, -1, -1):
        nxt = defaultdict(int)
        for (ha, hb), p in dist.items():
            models = [u.models_left(h) for u, h in zip(units, (ha, hb))]
            if not all(models):                   # §C6.4: the round stops
                nxt[ha, hb] += p
                continue
            key = (models[0], models[1], step, round_no == 1)
            if key not in tables:
                tables[key] = (step_damage(combat, 0, models[0], step, round_no, exact),
                               step_damage(combat, 1, models[1], step, round_no, exact))
            to_b, to_a = tables[key]
            for da, q in to_a.items():
                for db, r in to_b.items():
                    nxt[max(0, ha - da), max(0, hb - db)] += p * q * r
        dist = dict(nxt)
    return dist


#: The most steps (:func:`fight_work`) a fight may take: a few seconds of one core (some 2·10⁷ steps a second
#: in floats, 4·10⁶ in fractions with ``exact=True``), half a minute at most on a busy machine.
MAX_FIGHT_WORK = 100_000_000
MAX_EXACT_FIGHT_WORK = 25_000_000
_STATE_STEPS = 4  # a state's own work at a step (its models, its damage tables), in steps
_END_STEPS = 40  # a state's work at the end of a round (Combat Score, Break Test, flee), in steps


def _losses(combat: CombatSpec, side: int, step: int, first_round: bool) -> tuple[int, int]:
    """(how many values the HP side ``side`` costs the enemy at Initiative ``step`` can take, at most; the steps
    of building that distribution for one number of models), at full strength (losses only shrink a unit's
    attacks)."""
    attacker, target = combat.units()[side], combat.units()[1 - side]
    charging = side == 0 and first_round
    cap = target.start_hp
    values, build = 1, 0
    for part in attacker.parts:
        hits = []
        if charging and step == 10 and part.impact_hits is not None:
            hits.append((in_contact(attacker, attacker.models) * part.impact_hits.highest, 1))
        if part.step(charging) == step:
            wounds = min(sum(attacks_made(attacker, part, attacker.models)), cap)
            hits.append((wounds * min(part.multiple_wounds.highest, target.hp), part.multiple_wounds.highest))
        if step == 0 and part.stomp_attacks is not None and target.height == "standard":
            hits.append((in_contact(attacker, attacker.models) * part.stomp_attacks.highest, 1))
        for most, spread in hits:
            most = min(most, cap)
            build += (most + 1) * (most + 1) * (spread + 1) + values * (most + 1)
            values = min(values + most, cap + 1)
    return values, build


def fight_work(combat: CombatSpec) -> int:
    """An upper bound on the steps :func:`fight` takes: per round, every state alive at its start (at most
    (HP + 1)² of them) spreads over the HP losses of each Initiative Step; plus the damage tables, one per number
    of models standing."""
    units = combat.units()
    grid = (units[0].start_hp + 1) * (units[1].start_hp + 1)
    work, alive = 0, 1
    for round_no in range(1, combat.rounds + 1):
        states, one_round = 1, 0
        for step in range(10, -1, -1):
            spread = 1
            for side in (0, 1):
                values, build = _losses(combat, side, step, round_no == 1)
                spread *= values
                if round_no <= 2:  # (the tables of later rounds are those of round 2)
                    work += build * units[side].models
            one_round += states * (spread + _STATE_STEPS)
            states = min(states * spread, grid)
        work += alive * (one_round + states * _END_STEPS)
        alive = min(alive * states, grid)
    return work


def check_fight_size(combat: CombatSpec, exact: bool) -> None:
    """Refuse, in one line naming the limit, a fight :func:`fight` cannot compute in bounded time."""
    limit = MAX_EXACT_FIGHT_WORK if exact else MAX_FIGHT_WORK
    work = fight_work(combat)
    if work > limit:
        kind = "exact fractions" if exact else "the exact fight"
        raise ArgumentError("scenario", f"{combat.a.name} ({combat.a.start_hp} HP) against {combat.b.name} "
                            f"({combat.b.start_hp} HP), {combat.rounds} rounds",
                            f"a [combat] small enough for {kind}: at most {limit:,} steps, this one needs about "
                            f"{work:.1e} (docs/t9a.md, \"Where the exact fight stops\"); simulate() estimates "
                            f"any size")


def fight(combat: CombatSpec, shot_hp: int = 0, exact: bool = False) -> dict:
    """The fight's outcome probabilities (:data:`OUTCOMES`, the keys of the result's ``melee`` object), the
    expected HP lost (``e_hp_lost_*``) and the distributions ``hp_lost_*``, ``r1_margin`` and
    ``ends_in_round`` (key ``None``: unresolved), all given contact.  A fight larger than
    :data:`MAX_FIGHT_WORK` (:data:`MAX_EXACT_FIGHT_WORK` with ``exact``) steps is refused (:func:`fight_work`)."""
    check_fight_size(combat, exact)
    units = combat.units()
    zero = Fraction(0) if exact else 0.0
    out = {k: zero for k in OUTCOMES}
    hists = {k: defaultdict(lambda: zero) for k in ("hp_lost_a_r1", "hp_lost_b_r1", "hp_lost_a", "hp_lost_b",
                                                    "r1_margin", "ends_in_round")}
    start = (combat.a.start_hp - shot_hp, combat.b.start_hp)
    alive = {start: ONE if exact else 1.0}
    tables, memo = {}, {}

    def end(ends, ha, hb, p):
        hists["hp_lost_a"][start[0] - ha] += p
        hists["hp_lost_b"][start[1] - hb] += p
        hists["ends_in_round"][ends] += p

    for round_no in range(1, combat.rounds + 1):
        carry = defaultdict(lambda: zero)
        for (ha0, hb0), p0 in alive.items():
            static = [_rank_bonus(combat, memo, i, u.models_left(h)) for i, (u, h) in enumerate(zip(units, (ha0, hb0)))]
            for (ha, hb), p in _round(combat, (ha0, hb0), round_no, exact, tables).items():
                p = p0 * p
                if round_no == 1:
                    hists["hp_lost_a_r1"][start[0] - ha] += p
                    hists["hp_lost_b_r1"][start[1] - hb] += p
                held = _end_of_round(combat, round_no, (ha0, hb0), (ha, hb), static, p, out, hists, memo)
                if held:
                    carry[ha, hb] += held
                if held != p:
                    end(round_no, ha, hb, p - held)
        if round_no == 1:
            out["continues_to_round_2"] = sum(carry.values(), zero)
        alive = carry
    for (ha, hb), p in alive.items():
        out["unresolved"] += p
        end(None, ha, hb, p)
    for side in "ab":
        for key in (f"hp_lost_{side}", f"hp_lost_{side}_r1"):
            out[f"e_{key}"] = sum((v * p for v, p in hists[key].items()), zero)
    out.update({k: dict(v) for k, v in hists.items()})
    return out


def _memo(memo: dict, key: tuple, compute):
    """``compute()``, once per fight and ``key`` (small whole numbers: hashing the whole combat each time is slow)."""
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _rank_bonus(combat: CombatSpec, memo: dict, side: int, models: int) -> int:
    unit = combat.units()[side]
    return _memo(memo, ("rank", side, models), lambda: rank_bonus(unit, models, combat.rank_bonus_cap))


def _end_of_round(combat: CombatSpec, round_no: int, before, after, static, p, out: dict, hists, memo: dict):
    """§C6–§C8 for one end-of-round state of probability ``p``: adds the outcomes of the fights that end
    here to ``out`` and returns the probability that the fight goes on from it (a tie, or the loser holds);
    ``memo``: the fight's own memo (:func:`_memo`)."""
    units = combat.units()
    models = [u.models_left(h) for u, h in zip(units, after)]
    first = round_no == 1
    if not all(models):                                 # §C6.4, Q-C17
        for i, side in enumerate("ab"):
            if not models[i]:
                out[f"{side}_destroyed"] += p
                if first:
                    out[f"r1_{side}_wiped"] += p
        if any(models):
            winner = "a" if models[0] else "b"
            out[f"{winner}_wins"] += p
            if first:
                out[f"r1_{winner}_wins"] += p
        return 0
    lost = [b - a for b, a in zip(before, after)]
    bonus = static if combat.static_rank_bonus else [_rank_bonus(combat, memo, i, m) for i, m in enumerate(models)]
    scores = [lost[1] + int(first) + bonus[0] + combat.a.standard + combat.a.battle_standard,
              lost[0] + bonus[1] + combat.b.standard + combat.b.battle_standard]
    if first:
        hists["r1_margin"][scores[0] - scores[1]] += p
    if scores[0] == scores[1]:                          # §C6.3
        if first:
            out["r1_draw"] += p
        return p
    w = 0 if scores[0] > scores[1] else 1
    winner, loser = "ab"[w], "ab"[1 - w]
    if first:
        out[f"r1_{winner}_wins"] += p
    margin = abs(scores[0] - scores[1])
    exact = isinstance(p, Fraction)
    q = _memo(memo, ("break", w, models[1 - w], models[w], margin, exact),
              lambda: _number(p_break(units[1 - w], models[1 - w], units[w], models[w], margin, combat), exact))
    broke = p * q
    if broke:
        for key in (f"{winner}_wins", f"{loser}_breaks") + ((f"r1_{loser}_breaks",) if first else ()):
            out[key] += broke
        _flee(combat, 1 - w, after[1 - w], broke, first, out, memo)
    return p - broke


def _flee(combat: CombatSpec, side: int, hp_left: int, p, first: bool, out: dict, memo: dict) -> None:
    """§C8: how a broken unit of probability ``p`` ends: removed (beta switch), caught, or fled and rallied."""
    units = combat.units()
    loser, winner, name = units[side], units[1 - side], "ab"[side]
    cut_down = decimated(loser, hp_left)
    if combat.decimated_flee == "removed" and cut_down:
        out[f"{name}_destroyed"] += p
        return
    exact = isinstance(p, Fraction)
    caught = _memo(memo, ("caught", side, exact), lambda: _number(
        p_caught(loser.swiftstride, winner.swiftstride) if combat.pursue else Fraction(0), exact))
    rally = _memo(memo, ("rally", side, cut_down, exact), lambda: _number(p_rally(loser, hp_left, combat), exact))
    out[f"{name}_caught"] += p * caught
    out[f"{name}_destroyed"] += p * caught
    if first:
        out[f"r1_{name}_caught"] += p * caught
    out[f"{name}_fled_rallied"] += p * (1 - caught) * rally
    out[f"{name}_fled_not_rallied"] += p * (1 - caught) * (1 - rally)


def start_facts(combat: CombatSpec) -> dict:
    """Per role (charger, target): Full Ranks, Rank Bonus and Steadfast at the start, and P(caught if it
    breaks) (§C11)."""
    units = combat.units()
    ranks = [full_ranks(u, u.models) for u in units]
    out = {}
    for i, (role, u) in enumerate(zip(("charger", "target"), units)):
        other = units[1 - i]
        out[role] = {"name": u.name, "models": u.models, "hp": u.start_hp, "full_ranks": ranks[i],
                     "rank_bonus": rank_bonus(u, u.models, combat.rank_bonus_cap), "steadfast": ranks[i] > ranks[1 - i],
                     "p_caught_if_breaks": float(p_caught(u.swiftstride, other.swiftstride)) if combat.pursue else 0.0}
    return out
