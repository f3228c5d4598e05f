"""The close combat's count slots (``"melee:<slot>"``, see ``wargame_odds.kernels.t9a_combat.MELEE_SLOTS``) and the
kernel's arrays: units, rules, attack events by Initiative Step, and the per-scenario tables of the
Binomial draws of unsaved wounds (docs/t9a.md, "Close combat" §C9).

Histograms: HP lost (0..starting HP), the round-one score margin A − B (shifted by ``margin_offset``),
the round the fight ends in (1..rounds, then one slot for "unresolved").
"""
from __future__ import annotations


import numpy as np

from ...run.counts import CountLayout
from ....kernels import t9a_combat as K

from .exact import attack_probability, automatic_hit_probability
from .model import CombatSpec, DiceExpr, PartSpec, UnitSpec, max_attacks
from .reference import Fight

#: Rows of a group's Binomial table: draws of more attacks take several rows.
TABLE_ROWS = 256
RALLY = {"halve": K.RALLY_HALVE, "none": K.RALLY_NONE, "double_one_only": K.RALLY_DOUBLE_ONE}


def margin_offset(combat: CombatSpec) -> int:
    """Shift that makes every round-one margin A − B a non-negative slot."""
    return combat.a.start_hp + combat.rank_bonus_cap + 3


def add_slots(layout: CountLayout, combat: CombatSpec) -> None:
    sizes = {"hp_lost_a_r1": combat.a.start_hp + 1, "hp_lost_a": combat.a.start_hp + 1,
             "hp_lost_b_r1": combat.b.start_hp + 1, "hp_lost_b": combat.b.start_hp + 1,
             "r1_margin": margin_offset(combat) + combat.b.start_hp + combat.rank_bonus_cap + 4,
             "ends_in_round": combat.rounds + 1}
    for slot in K.MELEE_SLOTS:
        layout.add(f"melee:{slot}", sizes.get(slot, 1))


def record(layout: CountLayout, counts: np.ndarray, combat: CombatSpec, f: Fight) -> None:
    """Add one fight of the reference engine to the count vector (the kernel's ``_record``)."""
    def bump(slot, index=0):
        counts[layout.offset(f"melee:{slot}") + index] += 1

    bump("contact")
    if f.r1_result is not None:
        bump("r1_draw" if f.r1_result == "draw" else f"r1_{f.r1_result}_wins")
    if f.ends_in_round == 1:
        if f.broke:
            bump(f"r1_{f.broke}_breaks")
            if f.caught:
                bump(f"r1_{f.broke}_caught")
        for side in sorted(f.wiped):
            bump(f"r1_{side}_wiped")
    else:
        bump("continues_to_round_2")
    if f.winner:
        bump(f"{f.winner}_wins")
    if f.ends_in_round is None:
        bump("unresolved")
    if f.broke:
        bump(f"{f.broke}_breaks")
        if f.caught:
            bump(f"{f.broke}_caught")
        if f.caught or f.removed:
            bump(f"{f.broke}_destroyed")
        else:
            bump(f"{f.broke}_fled_rallied" if f.rallied else f"{f.broke}_fled_not_rallied")
    for side in sorted(f.wiped):
        bump(f"{side}_destroyed")
    bump("hp_lost_a_r1", f.r1_lost[0])
    bump("hp_lost_b_r1", f.r1_lost[1])
    bump("hp_lost_a", f.lost(0))
    bump("hp_lost_b", f.lost(1))
    if f.r1_margin is not None:
        bump("r1_margin", f.r1_margin + margin_offset(combat))
    bump("ends_in_round", combat.rounds if f.ends_in_round is None else f.ends_in_round - 1)


def binomial_rows(p: float, rows: int) -> np.ndarray:
    """Binomial(n, p) for n = 0..rows, flattened (row n starts at n(n+1)/2, n + 1 entries), built by the
    recursion P_n(k) = (1 − p) P_{n−1}(k) + p P_{n−1}(k − 1)."""
    out = np.empty((rows + 1) * (rows + 2) // 2)
    pmf = np.ones(1)
    for n in range(rows + 1):
        if n:
            pmf = np.concatenate([pmf * (1 - p), [0.0]]) + np.concatenate([[0.0], pmf * p])
        out[n * (n + 1) // 2:(n + 1) * (n + 2) // 2] = pmf
    return out


def alias_tables(pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's alias tables (``wargame_odds.kernels.t9a_combat.fill_alias``) of every row of ``pmf``."""
    rows = int((np.sqrt(8 * len(pmf) + 1) - 1) / 2)
    prob, alias = np.empty(len(pmf)), np.empty(len(pmf), np.int64)
    K.fill_alias(pmf, prob, alias, np.empty(rows, np.int64), np.empty(rows, np.int64))
    return prob, alias


def _dice(expr: DiceExpr | None) -> tuple[int, int, int]:
    return (0, 0, 0) if expr is None else (expr.dice, expr.sides, expr.add)


def combat_arrays(combat: CombatSpec, layout: CountLayout) -> K.Combat:
    """The fight as the kernel's arrays."""
    units = combat.units()
    cu = np.zeros((2, K.N_UCOLS), np.int64)
    for i, u in enumerate(units):
        row = cu[i]
        row[K.U_START_HP], row[K.U_HP], row[K.U_WIDTH], row[K.U_CONTACT] = u.start_hp, u.hp, u.width, u.in_contact
        row[K.U_FULL_RANK] = u.full_rank
        row[K.U_RANKED] = int(not u.light_troops and u.width >= u.full_rank)
        row[K.U_STATIC_SCORE] = int(u.standard) + int(u.battle_standard)
        row[K.U_DISCIPLINE] = max(u.discipline, u.general_discipline)
        row[K.U_REROLL], row[K.U_STUBBORN] = int(u.rally_around_the_flag), int(u.stubborn)
        row[K.U_UNBREAKABLE], row[K.U_SWIFT] = int(u.unbreakable), int(u.swiftstride)
    cr = np.zeros(K.N_RCOLS, np.int64)
    cr[K.R_ROUNDS], cr[K.R_PURSUE] = combat.rounds, int(combat.pursue)
    cr[K.R_DOUBLE_ONE] = int(combat.double_one_passes)
    cr[K.R_DECIMATED_RALLY] = RALLY[combat.decimated_rally]
    cr[K.R_DECIMATED_REMOVED] = int(combat.decimated_flee == "removed")
    cr[K.R_RANK_CAP], cr[K.R_RANK_STATIC] = combat.rank_bonus_cap, int(combat.static_rank_bonus)
    groups: list[tuple[float, int]] = []                # (p, table rows)
    events = [[], []]
    for kind in (0, 1):                                 # round 1, later rounds
        for i, (unit, target) in enumerate(((units[0], units[1]), (units[1], units[0]))):
            charging = i == 0 and kind == 0
            for part in unit.parts:
                if charging and part.impact_hits is not None:
                    events[kind].append(_special(10, i, part, part.impact_hits, unit, target, groups))
                p = float(attack_probability(combat, part, target, charging, kind == 0))
                front, support = part.attacks, min(part.attacks, part.support_cap)
                groups.append((p, max(1, min(TABLE_ROWS, max_attacks(unit, part)))))
                events[kind].append([part.step(charging), i, 0, front, support,
                                     1 + part.extra_ranks if part.supports else 0, len(groups) - 1,
                                     *_dice(part.multiple_wounds), 0, 0, 0])
                if part.stomp_attacks is not None and target.height == "standard":
                    events[kind].append(_special(0, i, part, part.stomp_attacks, unit, target, groups))
    n_ev = np.array([len(e) for e in events], np.int64)
    ev = np.zeros((2, max(1, n_ev.max()), K.N_ECOLS), np.int64)
    for kind in (0, 1):
        for j, e in enumerate(sorted(events[kind], key=lambda e: -e[K.E_STEP])):
            ev[kind, j] = e
    g_nmax = np.array([rows for _, rows in groups] or [1], np.int64)
    tables = [alias_tables(binomial_rows(p, rows)) for p, rows in groups] or [alias_tables(binomial_rows(0.0, 1))]
    g_off = np.cumsum([0] + [len(prob) for prob, _ in tables[:-1]]).astype(np.int64)
    moff = np.array([layout.offset(f"melee:{s}") for s in K.MELEE_SLOTS], np.int64)
    return K.Combat(cu=cu, cr=cr, ev=ev, n_ev=n_ev, g_off=g_off, g_nmax=g_nmax,
                    prob=np.concatenate([t[0] for t in tables]), alias=np.concatenate([t[1] for t in tables]),
                    moff=moff, margin_offset=margin_offset(combat))


def _special(step: int, side: int, part: PartSpec, expr: DiceExpr, unit: UnitSpec, target: UnitSpec,
             groups: list) -> list[int]:
    """An Impact Hits or Stomp Attacks event (§C5.6): X automatic hits per model in contact."""
    p = float(automatic_hit_probability(part.strength, part.armour_penetration, target))
    groups.append((p, max(1, min(TABLE_ROWS, min(unit.in_contact, unit.models) * expr.highest))))
    return [step, side, 1, 0, 0, 0, len(groups) - 1, 0, 0, 1, *_dice(expr)]
