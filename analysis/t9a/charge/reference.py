"""Pure-Python reference engine for T9A charges, written clause by clause from docs/t9a.md §3.

It shares nothing with the kernel but the scenario and the count layout: its own random source
(``random.Random`` seeded from ``(key0, key1, block)``), its own dice and its own placement
choice (a ``max`` over the legal candidates, §3.7).  ``trial(..., log=...)`` also writes the
step-by-step ``--trace``.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from ...run.counts import CountLayout
from ...run.runner import block_rng
from ....kernels.rng import BLOCK_TRIALS

from .layout import hit_need
from .model import AFTER_FAIL, BIN_MILLI, MILLI, Model, priority_key


def inch(milli: int) -> str:
    return f'{milli / MILLI:g}"'


@dataclass
class Roll:
    dice: list[int]
    kept_total: int      # best `keep` dice, counted as at least the floor, plus the addend
    highest: int


def roll_dice(rng: random.Random, rule) -> Roll:
    """§3.2 / §3.8: roll ``rule.n`` D6, keep the best ``rule.keep``, floor, add."""
    dice = [rng.randint(1, 6) for _ in range(rule.n)]
    kept = sum(sorted(dice, reverse=True)[:rule.keep])
    return Roll(dice, max(kept, rule.floor) + rule.add, max(dice))


@dataclass
class Outcome:
    """What happened to one charger in one trial."""

    roll: Roll | None = None
    needed_milli: int = 0
    reaches: bool = False
    shot_down: bool = False
    unsaved: int | None = None
    redirected: bool = False
    catches: bool = False
    redirect_arrives: bool = False
    target_gone: bool = False
    arrives: bool = False
    failed: bool = False
    failed_room: bool = False
    move_milli: int = 0
    gap_milli: int = 0
    flags: tuple = field(default_factory=tuple)


@dataclass
class TrialResult:
    chargers: list[Outcome]
    flee_total: int | None
    destroyed: bool
    placement: int | None        # index into model.placements, None when none chosen


def _stand_and_shoot(model: Model, rng: random.Random, log) -> int:
    """§3.3 / Q-B7: to hit (with penalties), to wound, armour save; returns unsaved wounds."""
    sh, c = model.shooting, model.chargers[model.shoot_at]
    need = hit_need(model)
    long = c.distance_milli * 2 > round(sh.weapon_range * MILLI)
    log(f"§3.3 Stand and Shoot at {c.name}: {sh.shots} shots, to hit {sh.to_hit}+ "
        f"-{model.sas_penalty} stand and shoot" + (f" -{model.long_range_penalty} long range "
        f"({inch(c.distance_milli)} > half of {sh.weapon_range:g}\")" if long else "")
        + f" -> needs {need}+ (Q-B7)")
    unsaved = 0
    for _ in range(sh.shots):
        x = rng.randint(1, 6)
        if x == 1:
            hit = False                                # a natural 1 always misses
        elif need <= 6:
            hit = x >= need
        elif model.to_hit_above_6 == "six_then" and need <= 9 and x == 6:
            hit = rng.randint(1, 6) >= need - 3        # 7+: a 6, then 4+/5+/6+
        else:
            hit = False
        if not hit:
            continue
        if rng.randint(1, 6) < sh.to_wound:
            continue
        if c.armour_save <= 6 and rng.randint(1, 6) >= c.armour_save:
            continue
        unsaved += 1
    log(f"  unsaved wounds: {unsaved}")
    return unsaved


def trial(model: Model, rng: random.Random, log=lambda line: None) -> TrialResult:
    """One charge phase against the target: reactions, rolls, placement, failed moves."""
    out = [Outcome() for _ in model.chargers]
    # §3.3 reactions, declared right after each charge declaration
    log(f"§3.3 {model.target_name} reacts: {model.reaction}")
    if model.reaction == "stand_and_shoot":
        s = model.shoot_at
        c = model.chargers[s]
        out[s].unsaved = _stand_and_shoot(model, rng, log)
        if c.models is not None and out[s].unsaved >= c.models * c.wounds_per_model:
            out[s].shot_down = True
            log(f"  {c.name} is wiped out before contact (casualties removed first)")
    flee_total = None
    if model.reaction == "flee":
        flee_total = 0
        for c in model.chargers:   # the first flee is chosen, later ones compulsory (§3.3)
            r = roll_dice(rng, model.flee_dice)
            flee_total += r.kept_total
            log(f"  flees from {c.name}'s charge: {model.flee_dice_name} {r.dice} -> "
                f"{r.kept_total}\"")
        log(f"  total flee distance {flee_total}\"")
    # §3.2 every charger rolls; success needs Charge Range >= the distance to cover
    for c, o in zip(model.chargers, out):
        if o.shot_down:
            continue
        if model.reaction == "flee" and c.redirect_milli is not None:
            o.redirected = True
            o.needed_milli = c.redirect_milli
            log(f"Q-B8 {c.name} redirects to another unit at {inch(c.redirect_milli)}")
        elif model.reaction == "flee":
            o.needed_milli = c.distance_milli + math.floor(c.flee_factor * flee_total * MILLI + 0.5)
        else:
            o.needed_milli = c.distance_milli
        o.roll = roll_dice(rng, c.dice)
        charge_range = o.roll.kept_total * MILLI + c.advance_milli
        o.reaches = charge_range >= o.needed_milli
        log(f"§3.2 {c.name}: {c.dice_name} {o.roll.dice} -> {o.roll.kept_total} + Advance Rate "
            f"{inch(c.advance_milli)} = {inch(charge_range)} vs {inch(o.needed_milli)}: "
            + ("reaches" if o.reaches else "short"))
    destroyed = False
    made = set()
    if model.reaction == "flee":
        # Q-B8: reaching the fled unit destroys it; successful chargers move first (§3.1)
        for c, o in zip(model.chargers, out):
            if not o.reaches:
                continue
            if o.redirected:
                o.redirect_arrives = True
                log(f"Q-B8 {c.name} reaches its redirected target")
            elif not destroyed:
                destroyed = o.catches = True
                log(f"Q-B8 {c.name} catches {model.target_name}: the fleeing unit is destroyed "
                    "(its centre is marked, §3.4.2)")
            else:
                o.target_gone = True
                log(f"§3.4 {c.name}: target already destroyed -> failed charge")
    else:
        for i, (c, o) in enumerate(zip(model.chargers, out)):
            if o.reaches and c.room:
                made.add(i)
            elif o.reaches:
                log(f"§3.2 {c.name}: no room to complete the charge")
    placement = None
    if model.placements:
        legal = [j for j, p in enumerate(model.placements)
                 if not p.impassable and all(i in made for i in range(model.n) if p.mask >> i & 1)]
        if legal:       # §3.7 / Q-B6: lexicographic priority; ties keep the scenario's order
            placement = max(legal, key=lambda j: priority_key(model.placements[j],
                                                               model.placement_order))
            p = model.placements[placement]
            arrived = {i for i in range(model.n) if p.mask >> i & 1}
            log(f"§3.7 legal placements {[model.placements[j].name for j in legal]}; chosen "
                f"{p.name!r} ({model.placement_order} order: rotates={p.rotates_target}, "
                f"units={p.units}, models={p.models_in_contact})")
        else:
            arrived = set()
            log("§3.7 no legal placement: every charger that made its roll lacks room")
    else:
        arrived = made
    for i, (c, o) in enumerate(zip(model.chargers, out)):
        if i in arrived:
            o.arrives = True
            log(f"{c.name} arrives: in combat with {model.target_name}")
        elif o.reaches and model.reaction != "flee":
            o.failed_room = True
            log(f"§3.2 {c.name}: made its roll but ends in no placement -> failed for lack of room")
    # §3.4 failed charge moves
    for c, o in zip(model.chargers, out):
        if o.shot_down or o.arrives or o.catches or o.redirect_arrives:
            continue
        o.failed = True
        fixed = c.dice.fixed_fail_move
        move = (fixed if fixed is not None else o.roll.highest) * MILLI
        why = f"fixed {fixed}\" (§3.8 beta)" if fixed is not None else \
            f"highest die {o.roll.highest}\" (§3.4.1)"
        if c.free_milli is not None and c.free_milli < move:
            move = c.free_milli
            why += f", unit spacing stops it at {inch(move)} (§3.4.3)"
        if destroyed and not o.redirected:
            room = o.needed_milli                  # towards the destroyed target's marked centre
        else:
            room = max(o.needed_milli - model.spacing_milli, 0)
        if room < move:
            move = room
            why += f", {inch(model.spacing_milli)} spacing from the target stops it (§3.5)"
        o.move_milli, o.gap_milli = move, o.needed_milli - move
        o.flags = AFTER_FAIL[model.after_fail]
        log(f"§3.4 {c.name} failed charge move {inch(move)} ({why}); gap left "
            f"{inch(o.gap_milli)}; flags: {', '.join(o.flags)}")
    return TrialResult(out, flee_total, destroyed, placement)


def record(layout: CountLayout, counts: np.ndarray, model: Model, res: TrialResult) -> None:
    """Add one trial to the count vector (same slots as the kernel)."""
    def bump(name, index=0, by=1):
        counts[layout.offset(name) + index] += by

    for i, o in enumerate(res.chargers):
        p = f"{i}:"
        if o.unsaved is not None:
            bump(p + "unsaved", o.unsaved)
        if o.roll is not None:
            bump(p + "roll", o.roll.kept_total)
        for flag in ("arrives", "reaches", "failed", "failed_room", "target_gone", "catches",
                     "shot_down", "redirected", "redirect_arrives"):
            if getattr(o, flag):
                bump(p + flag)
        if o.failed:
            bump(p + "fm_sum", by=o.move_milli)
            bump(p + "fm_sumsq", by=o.move_milli ** 2)
            bump(p + "gap_sum", by=o.gap_milli)
            bump(p + "gap_sumsq", by=o.gap_milli ** 2)
            bump(p + "fm_hist", o.move_milli // BIN_MILLI)
            bump(p + "gap_hist", o.gap_milli // BIN_MILLI)
    bump("units", sum(o.arrives for o in res.chargers))
    if res.flee_total is not None:
        bump("flee_total", res.flee_total)
    if res.destroyed:
        bump("target_destroyed")
    if model.placements:
        if res.placement is None:
            bump("no_placement")
            bump("models", 0)
        else:
            p = model.placements[res.placement]
            bump("placement", res.placement)
            bump("models", p.models_in_contact)
            if p.rotates_target:
                bump("rotated")


def charge_and_fight(model: Model, layout: CountLayout, counts: np.ndarray, rng: random.Random,
                     log=lambda line: None) -> None:
    """One trial: the charge and, with ``[combat]``, the fight where the charger arrives (after the HP Stand
    and Shoot cost it); its counts are added to ``counts``."""
    res = trial(model, rng, log)
    record(layout, counts, model, res)
    if model.combat is not None and res.chargers[0].arrives:
        from ..combat import layout as combat_layout, reference as combat_reference

        shot = min(res.chargers[0].unsaved or 0, model.combat.a.start_hp)
        combat_layout.record(layout, counts, model.combat, combat_reference.fight(model.combat, rng, shot, log))

def run_chunk(model: Model, layout: CountLayout, key0: int, key1: int, first_block: int,
              n_trials: int, trial_streams: bool = False) -> np.ndarray:
    """``trial_streams``: trial ``t`` (global index) draws from a generator of its own (the kernel's
    ``TRIAL_STREAM_KEY``), as the combat kernel's trial streams."""
    counts = layout.zeros()
    if trial_streams:
        from ....kernels.t9a_combat import TRIAL_STREAM_KEY

        first = first_block * BLOCK_TRIALS
        for t in range(first, first + n_trials):
            charge_and_fight(model, layout, counts, block_rng(key0, int(key1) ^ int(TRIAL_STREAM_KEY), t))
        return counts
    n_blocks = -(-n_trials // BLOCK_TRIALS)
    for b in range(n_blocks):
        rng = block_rng(key0, key1, first_block + b)
        for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            charge_and_fight(model, layout, counts, rng)
    return counts


def trace(model: Model, key0: int, key1: int) -> str:
    """One trial (the first of block 0) told step by step."""
    from .layout import build_layout

    lines = [f"{model.title}: one trial (reference engine, rules {model.version}, "
             f"placement order {model.placement_order}, after a failed charge: {model.after_fail})"]
    layout = build_layout(model)
    charge_and_fight(model, layout, layout.zeros(), block_rng(key0, key1, 0), lines.append)
    return "\n".join(lines)

