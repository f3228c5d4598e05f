"""Pure-Python reference engine of T9A close combat, written clause by clause from docs/t9a.md ("Close
combat", §C2–§C9); it powers ``--trace``.

It rolls every die the rules call for (to hit, to wound, armour, special save, Multiple Wounds, Break Test,
flee, pursuit, rally) from a ``random.Random`` and shares nothing with the kernel but the resolved
:class:`~wargame_odds.analysis.t9a.combat.model.CombatSpec` and the rule tables.  The deterministic steps (ranks, who
attacks, Combat Score, the Break Test's Discipline) are small functions the exact calculator reuses.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .model import (
    CombatSpec, DiceExpr, PartSpec, UnitSpec, armour_need, decimated, halved_up, to_hit_need, to_wound_need)

SIDES = ("a", "b")


# -- ranks and attackers (§C3.2, §C4) ----------------------------------------------------------------
def models_in_rank(unit: UnitSpec, models: int, rank: int) -> int:
    """§C3.2: models in rank ``rank`` (1 = front); casualties come off the back."""
    return min(unit.width, max(0, models - (rank - 1) * unit.width))


def full_ranks(unit: UnitSpec, models: int) -> int:
    """§C3.2: ranks of at least ``full_rank`` models (none if the unit is narrower, none for Light Troops):
    ⌊models / width⌋, plus the incomplete rear rank when it still has enough models."""
    if unit.light_troops or unit.width < unit.full_rank:
        return 0
    return models // unit.width + (1 if models % unit.width >= unit.full_rank else 0)


def rank_bonus(unit: UnitSpec, models: int, cap: int) -> int:
    """§C6.1: +1 per Full Rank after the first, at most ``cap`` (2.x: 3)."""
    return min(cap, max(0, full_ranks(unit, models) - 1))


def in_contact(unit: UnitSpec, models: int) -> int:
    """Q-C2: front models touching the enemy: the scenario's ``in_contact``, fewer once the unit is smaller."""
    return min(unit.in_contact, models)


def attacks_made(unit: UnitSpec, part: PartSpec, models: int) -> tuple[int, int]:
    """§C4.1–§C4.2, Q-C4: (front-rank attacks, supporting attacks) of ``part`` with ``models`` standing.
    Supporters in rank k (2, and one more per ``extra_ranks``) = min(models in that rank, models in
    contact), each with its Attack Value capped by Height (or Extra Support)."""
    contact = in_contact(unit, models)
    front = contact * part.attacks
    supporting = 0
    if part.supports:
        for rank in range(2, 3 + part.extra_ranks):
            supporting += min(models_in_rank(unit, models, rank), contact) * min(part.attacks, part.support_cap)
    return front, supporting


# -- the Combat Score and the Break Test (§C6, §C7) ---------------------------------------------------------
def combat_score(unit: UnitSpec, enemy_lost: int, charging: bool, ranks_bonus: int) -> dict[str, int]:
    """§C6.1: the parts of a side's Combat Score (a unit with any model keeps its Standard, Q-C8)."""
    return {"HP caused": enemy_lost, "charge": int(charging), "Rank Bonus": ranks_bonus,
            "standard": int(unit.standard), "Battle Standard": int(unit.battle_standard)}


def break_discipline(loser: UnitSpec, loser_models: int, winner: UnitSpec, winner_models: int,
                     margin: int) -> tuple[int, str]:
    """§C7.2–§C7.5, Q-C10: the Discipline the loser's Break Test needs to roll under or equal, and why:
    its own or the General's (Commanding Presence), minus the margin unless Stubborn or Steadfast (more
    Full Ranks than the winner, counted after the round's casualties, Q-C7), never below 0."""
    base = max(loser.discipline, loser.general_discipline)
    why = ("General's Discipline (Commanding Presence)" if loser.general_discipline > loser.discipline
           else "Discipline")
    if loser.stubborn:
        return base, f"{why} {base}, Stubborn: the margin is ignored (§C7.4)"
    mine, theirs = full_ranks(loser, loser_models), full_ranks(winner, winner_models)
    if mine > theirs:
        return base, f"{why} {base}, Steadfast ({mine} Full Ranks against {theirs}): the margin is ignored (§C7.3)"
    return max(0, base - margin), f"{why} {base} − margin {margin} (§C7.2)"


def rally_discipline(unit: UnitSpec, hp_left: int, combat: CombatSpec) -> tuple[int, bool, str]:
    """§C8.4, Q-C11, Q-C16: (Discipline of the Rally Test, passes only on a double 1, why).  Commanding
    Presence applies; a Decimated unit halves it (rounding up) or, by switch, needs a double 1."""
    base = max(unit.discipline, unit.general_discipline)
    why = f"Discipline {base}" + (" (Commanding Presence)" if unit.general_discipline > unit.discipline else "")
    if not decimated(unit, hp_left) or combat.decimated_rally == "none":
        return base, False, why
    if combat.decimated_rally == "double_one_only":
        return base, True, why + ", Decimated: passes only on a double 1 (Q-C11 switch)"
    return halved_up(base), False, why + f", Decimated: halved, rounding up, to {halved_up(base)} (Q-C11)"


def roll_total(rng, maximised: bool) -> tuple[list[int], int]:
    """§C8.1–§C8.2: 2D6, or Maximised (Swiftstride): 3D6 with the lowest dropped."""
    dice = [rng.randint(1, 6) for _ in range(3 if maximised else 2)]
    return dice, sum(sorted(dice)[-2:])


def discipline_test(rng, discipline: int, combat: CombatSpec, reroll: bool, log, only_double_one=False) -> bool:
    """§C7.1, Q-C9: 2D6 ≤ Discipline passes (a double 1 always passes only with the switch, or when the
    test needs one); a failed test is re-rolled once with Rally Around the Flag (§C7.5)."""
    for attempt in range(2 if reroll else 1):
        dice, total = roll_total(rng, False)
        double_one = total == 2
        passed = double_one if only_double_one else (total <= discipline or (double_one and combat.double_one_passes))
        log(f"    {'re-roll (Rally Around the Flag, §C7.5): ' if attempt else ''}2D6 {dice} = {total} "
            f"against {'a double 1' if only_double_one else discipline}: {'passes' if passed else 'fails'}")
        if passed:
            return True
    return False


# -- attacks (§C5) -------------------------------------------------------------------------------------
def roll(rng, expr: DiceExpr) -> int:
    """A number of the profile: fixed, or its dice (D3 = a D6 halved, rounding up)."""
    total = expr.add
    for _ in range(expr.dice):
        d6 = rng.randint(1, 6)
        total += d6 if expr.sides == 6 else (d6 + 1) // 2
    return total


def roll_d6s(rng, n: int) -> list[int]:
    return [rng.randint(1, 6) for _ in range(n)]


def save_rolls(rng, wounds: int, target: UnitSpec, penetration: int, log) -> int:
    """§C5.3–§C5.4: armour save (natural 1 fails), then the one special save; returns the unsaved wounds."""
    need = armour_need(target.armour, penetration)
    if need <= 6 and wounds:
        dice = roll_d6s(rng, wounds)
        wounds = sum(1 for x in dice if x == 1 or x < need)
        log(f"      armour {need}+ (§C5.3 Armour {target.armour} − AP {penetration}) {dice} → {wounds} unsaved")
    elif wounds:
        log(f"      no armour save (§C5.3 Armour {target.armour} − AP {penetration} ≤ 0)")
    if target.special_save and wounds:
        dice = roll_d6s(rng, wounds)
        wounds = sum(1 for x in dice if x == 1 or x < target.special_save)
        log(f"      special save {target.special_save}+ (§C5.4) {dice} → {wounds} unsaved")
    return wounds


def health_points(rng, unsaved: int, part: PartSpec, target: UnitSpec, log) -> int:
    """§C5.5: each unsaved wound costs Multiple Wounds (X) HP, never more than the target's HP characteristic."""
    mw = part.multiple_wounds
    if mw.dice == 0 and mw.add == 1:
        return unsaved
    lost = [min(roll(rng, mw), target.hp) for _ in range(unsaved)]
    if unsaved:
        log(f"      Multiple Wounds ({mw}), at most {target.hp} each (§C5.5): {lost}")
    return sum(lost)


def strike(rng, combat: CombatSpec, attacker: UnitSpec, part: PartSpec, target: UnitSpec, models: int,
           round_no: int, charging: bool, log) -> int:
    """§C4–§C5: one part's close-combat attacks at its Initiative Step; returns the HP they cost the target."""
    front, supporting = attacks_made(attacker, part, models)
    n = front + supporting
    strength = part.strength + (part.charge_strength if charging else 0)
    penetration = part.armour_penetration + (part.charge_ap if charging else 0)
    hatred = part.hatred and round_no == 1
    need = to_hit_need(part.offensive_skill, target.defensive_skill, combat.to_hit_table, part.to_hit_mod)
    log(f"    {attacker.name} · {part.name}: {front} front-rank + {supporting} supporting = {n} attacks "
        f"(§C4.1, §C4.2)" + (f"; Charging: Strength {strength}, AP {penetration} (§C5.7)" if charging and
                          (part.charge_strength or part.charge_ap) else ""))
    if n == 0:
        return 0
    dice = roll_d6s(rng, n)
    hits = [x for x in dice if x != 1 and (x == 6 or x >= need)]
    text = f"      to hit {need}+ (§C5.1 Off {part.offensive_skill} vs Def {target.defensive_skill}" + \
        (f", modifier {part.to_hit_mod:+d}" if part.to_hit_mod else "") + f") {dice} → {len(hits)} hits"
    if hatred and len(hits) < n:
        again = roll_d6s(rng, n - len(hits))
        more = [x for x in again if x != 1 and (x == 6 or x >= need)]
        text += f"; Hatred re-rolls the misses (§C5.1) {again} → {len(hits) + len(more)} hits"
        hits += more
    log(text)
    unsaved = wound_rolls(rng, len(hits), strength, target, penetration, log)
    return health_points(rng, unsaved, part, target, log)


def wound_rolls(rng, hits: int, strength: int, target: UnitSpec, penetration: int, log) -> int:
    """§C5.2 then §C5.3–§C5.4: wounds from ``hits``, then the saves; returns the unsaved wounds."""
    need = to_wound_need(strength, target.resilience)
    dice = roll_d6s(rng, hits)
    wounds = sum(1 for x in dice if x != 1 and (x == 6 or x >= need))
    if hits:
        log(f"      to wound {need}+ (§C5.2 Str {strength} vs Res {target.resilience}) {dice} → {wounds} wounds")
    return save_rolls(rng, wounds, target, penetration, log)


def special_hits(rng, kind: str, attacker: UnitSpec, part: PartSpec, target: UnitSpec, models: int, log) -> int:
    """§C5.6: Impact Hits (X) (step 10, Charging) or Stomp Attacks (X) (step 0, only against Standard
    height): X automatic hits per model of the part in contact, at the part's own Strength and AP, one HP
    per unsaved wound (Q-C5)."""
    expr = part.impact_hits if kind == "Impact Hits" else part.stomp_attacks
    if kind == "Stomp Attacks" and target.height != "standard":
        log(f"    {attacker.name} · {part.name}: Stomp Attacks cannot hit {target.height} models (§C5.6)")
        return 0
    contact = in_contact(attacker, models)
    hits = sum(roll(rng, expr) for _ in range(contact))
    log(f"    {attacker.name} · {part.name}: {kind} ({expr}) from {contact} models in contact → {hits} hits (§C5.6)")
    return wound_rolls(rng, hits, part.strength, target, part.armour_penetration, log)


# -- one fight ----------------------------------------------------------------------------------------
@dataclass
class Fight:
    """What happened in one fight (side ``a`` the charger, ``b`` the target); the count flags of both
    engines are read from it (:func:`wargame_odds.analysis.t9a.combat.layout.record`)."""

    hp: list[int]
    start: list[int]
    r1_result: str | None = None            # "a", "b" (winner of round 1), "draw", or None (both wiped)
    r1_margin: int | None = None            # score A − B of round 1 (None when a unit was wiped out)
    r1_lost: list[int] = field(default_factory=lambda: [0, 0])
    winner: str | None = None               # "a", "b", or None (unresolved, or both wiped out)
    ends_in_round: int | None = None        # None: still fighting after the last round
    broke: str | None = None                # the side that failed its Break Test
    caught: bool = False                    # ... and was caught by the pursuit (§C8.1)
    removed: bool = False                   # ... and was removed as Decimated (beta switch)
    rallied: bool | None = None             # ... else its Rally Test (§C8.4)
    wiped: set = field(default_factory=set)

    def lost(self, side: int) -> int:
        return self.start[side] - self.hp[side]


def _ranks_text(combat: CombatSpec, unit: UnitSpec, models: int) -> str:
    ranks = full_ranks(unit, models)
    return f"{models} models, {ranks} Full Rank{'s' if ranks != 1 else ''}, Rank Bonus " \
           f"+{rank_bonus(unit, models, combat.rank_bonus_cap)}"


def fight(combat: CombatSpec, rng, shot_hp: int = 0, log=lambda line: None) -> Fight:
    """§C9: rounds of close combat until a unit breaks or is destroyed, or ``combat.rounds`` are fought.
    ``shot_hp``: HP the charger lost to Stand and Shoot before contact (§3.3)."""
    units = combat.units()
    f = Fight(hp=[combat.a.start_hp - shot_hp, combat.b.start_hp], start=[combat.a.start_hp - shot_hp,
                                                                          combat.b.start_hp])
    models = [u.models_left(h) for u, h in zip(units, f.hp)]
    log(f"Close combat: {combat.a.name} (charger) against {combat.b.name}: "
        f"{combat.a.name} {_ranks_text(combat, combat.a, models[0])}; "
        f"{combat.b.name} {_ranks_text(combat, combat.b, models[1])} (§C3.2)")
    for round_no in range(1, combat.rounds + 1):
        log(f"Round {round_no} (§C2.1)" + (f": {combat.a.name} are Charging" if round_no == 1 else
                                          ": no charge bonuses (Q-C15)"))
        start = list(f.hp)
        static = [rank_bonus(u, u.models_left(h), combat.rank_bonus_cap) for u, h in zip(units, f.hp)]
        _initiative_steps(combat, rng, f, round_no, log)
        lost = [s - h for s, h in zip(start, f.hp)]
        if round_no == 1:
            f.r1_lost = lost
        models = [u.models_left(h) for u, h in zip(units, f.hp)]
        if not all(models):
            f.wiped = {SIDES[i] for i in (0, 1) if not models[i]}
            f.ends_in_round = round_no
            if len(f.wiped) == 2:
                log("  both units are wiped out in the same step: mutual destruction, neither wins (Q-C17)")
            else:
                f.winner = "a" if models[0] else "b"
                log(f"  {units[1 - SIDES.index(f.winner)].name} is wiped out: {units[SIDES.index(f.winner)].name} "
                    "wins (§C6.4)")
            if round_no == 1:
                f.r1_result = f.winner
            return f
        # §C6.1 Combat Score, after the round's casualties (Q-C7), or with the ranks of the round's start (§C15)
        bonus = static if combat.static_rank_bonus else [
            rank_bonus(u, m, combat.rank_bonus_cap) for u, m in zip(units, models)]
        scores = [combat_score(units[i], lost[1 - i], i == 0 and round_no == 1, bonus[i]) for i in (0, 1)]
        totals = [sum(s.values()) for s in scores]
        for i in (0, 1):
            log(f"  §C6.1 Combat Score of {units[i].name}: " + " + ".join(f"{v} {k}" for k, v in scores[i].items())
                + f" = {totals[i]}")
        if round_no == 1:
            f.r1_margin = totals[0] - totals[1]
        if totals[0] == totals[1]:
            log("  equal scores: both count as winners, no Break Test; the fight goes on (§C6.3)")
            if round_no == 1:
                f.r1_result = "draw"
            continue
        w = 0 if totals[0] > totals[1] else 1
        loser, winner, margin = units[1 - w], units[w], abs(totals[0] - totals[1])
        if round_no == 1:
            f.r1_result = SIDES[w]
        log(f"  {winner.name} win the round by {margin} (§C6.3)")
        if not _break_test(combat, rng, loser, models[1 - w], winner, models[w], margin, log):
            continue
        f.winner, f.broke, f.ends_in_round = SIDES[w], SIDES[1 - w], round_no
        _flee(combat, rng, f, 1 - w, log)
        return f
    log(f"Still fighting after {combat.rounds} rounds: unresolved")
    return f


def _initiative_steps(combat: CombatSpec, rng, f: Fight, round_no: int, log) -> None:
    """§C2.2.5, §C4.4: Initiative Steps 10 → 0; the attacks of one step are simultaneous, their casualties are
    removed at its end; the round stops when a unit has no models left (§C6.4)."""
    units = combat.units()
    for step in range(10, -1, -1):
        models = [u.models_left(h) for u, h in zip(units, f.hp)]
        if not all(models):
            return
        damage = [0, 0]                         # HP lost by a, b at this step
        struck = False
        for i in (0, 1):
            attacker, target = units[i], units[1 - i]
            charging = i == 0 and round_no == 1
            for part in attacker.parts:
                if charging and step == 10 and part.impact_hits is not None:
                    if not struck:
                        log(f"  §C4.4 Initiative Step {step}")
                        struck = True
                    unsaved = special_hits(rng, "Impact Hits", attacker, part, target, models[i], log)
                    damage[1 - i] += unsaved
                if part.step(charging) == step:
                    if not struck:
                        log(f"  §C4.4 Initiative Step {step}")
                        struck = True
                    damage[1 - i] += strike(rng, combat, attacker, part, target, models[i], round_no, charging, log)
                if step == 0 and part.stomp_attacks is not None:
                    if not struck:
                        log(f"  §C4.4 Initiative Step {step}")
                        struck = True
                    damage[1 - i] += special_hits(rng, "Stomp Attacks", attacker, part, target, models[i], log)
        if struck:
            before = list(f.hp)
            f.hp = [max(0, h - d) for h, d in zip(f.hp, damage)]
            log("    casualties removed from the rear (§C4.4, Q-C5): " + "; ".join(
                f"{u.name} {b} → {h} HP ({u.models_left(h)} models)" for u, b, h in zip(units, before, f.hp)))


def _break_test(combat: CombatSpec, rng, loser: UnitSpec, loser_models: int, winner: UnitSpec,
                winner_models: int, margin: int, log) -> bool:
    """§C7: the loser's Break Test; True when it breaks."""
    if loser.unbreakable:
        log(f"  §C7.4 {loser.name} is Unbreakable: it passes its Break Test")
        return False
    discipline, why = break_discipline(loser, loser_models, winner, winner_models, margin)
    log(f"  §C7 Break Test of {loser.name}: {why} → needs {discipline} or less")
    passed = discipline_test(rng, discipline, combat, loser.rally_around_the_flag, log)
    log(f"  {loser.name} {'holds' if passed else 'breaks and flees (§C7.2)'}")
    return not passed


def _flee(combat: CombatSpec, rng, f: Fight, side: int, log) -> None:
    """§C8: the broken unit flees and the winner pursues (caught when pursuit ≥ flee); a unit that escapes
    takes its Rally Test at the start of its next turn (§C8.4)."""
    units = combat.units()
    loser, winner = units[side], units[1 - side]
    if combat.decimated_flee == "removed" and decimated(loser, f.hp[side]):
        f.removed = True
        log(f"  §C15 (beta switch) {loser.name} is Decimated: removed before it flees, destroyed")
        return
    dice, flee = roll_total(rng, loser.swiftstride)
    log(f"  §C8.1 {loser.name} flees: {'Swiftstride 3D6, lowest dropped' if loser.swiftstride else '2D6'} "
        f"{dice} → {flee}\"")
    if combat.pursue:
        dice, pursuit = roll_total(rng, winner.swiftstride)
        f.caught = pursuit >= flee
        log(f"  §C8.1 {winner.name} pursues: {'Swiftstride 3D6, lowest dropped' if winner.swiftstride else '2D6'} "
            f"{dice} → {pursuit}\": " + (f"≥ {flee}, {loser.name} is caught and destroyed" if f.caught
                                         else f"< {flee}, {loser.name} escapes"))
        if f.caught:
            return
    else:
        log(f"  {winner.name} restrain their pursuit (Q-C12 switch)")
    discipline, double_one, why = rally_discipline(loser, f.hp[side], combat)
    log(f"  §C8.4 Rally Test of {loser.name} at the start of its next turn: {why}")
    f.rallied = discipline_test(rng, discipline, combat, loser.rally_around_the_flag, log, only_double_one=double_one)
    log(f"  {loser.name} {'rallies' if f.rallied else 'keeps fleeing'}")
