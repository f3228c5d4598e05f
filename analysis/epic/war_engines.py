"""War-engine rule steps shared by every attack: shields and fields, damage to the hull, critical hits,
splash, titan-killer allocation and the end-phase effects (``docs/epic-engine.md`` §10).

The steps work on the reference engine's per-trial state (``Trial``, ``Unit``, ``Formation`` of
``wargame_odds.analysis.epic.reference.state``) and call three reference steps back through the trial, which holds them
bound to itself (this module may not import the reference package, which imports it):
``trial.count_damage(unit, points, by_side, kill, marker)`` (``reference.damage.count_damage``: kills,
losses or end-phase BMs), ``trial.splash_hit(victim, splash_kind)`` (``reference.damage.splash_hit``: one
hit resolved as the attack's own) and ``trial.break_in_end_phase(formation)``
(``reference.end_phase.break_in_end_phase``: the break test after end-phase damage).  Nothing here is
specific to assaults: a shooting attack calls the same steps (the void shields stop its hits, its damage
points roll for criticals, and so on).
Clause tags: TP = NetEA Tournament Pack, TP-SR = its army special rules, §10.n = the section of
``docs/epic-engine.md``.
"""
from __future__ import annotations

from dataclasses import replace

from .compile import NO_ROLL

DESTROYING = ("destroyed", "destroyed_plus_effect", "destroyed_with_passengers")


def d6(trial) -> int:
    return trial.rng.randint(1, 6)


# -- shields and fields (§10.2) ---------------------------------------------------------------------

def shields_stop(trial, unit, points: int, close_combat: bool) -> int:
    """Void shields, then power fields, stop one point each; then a shadowfield absorbs the whole hit.
    Close-combat hits go straight through.  Returns the points left for the saves
    (TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology; §10.2)."""
    if close_combat or not (unit.void_shields or unit.power_fields or unit.shadowfields):
        return points
    for _ in range(points):
        if unit.void_shields:
            unit.void_shields -= 1
            points -= 1
            trial.say("TP-SR Imperial Void Shields", f"    a void shield of {unit.label} stops 1 point and goes down "
                                                     f"({unit.void_shields} left)")
        elif unit.power_fields:
            unit.power_fields -= 1
            points -= 1
            trial.say("TP-SR Power Fields", f"    a power field of {unit.label} stops 1 point and goes down "
                                            f"({unit.power_fields} left)")
    if points and unit.shadowfields:
        unit.shadowfields -= 1
        trial.say("TP-SR Dark Eldar Technology", f"    a shadowfield of {unit.label} absorbs the hit "
                                                 f"({unit.shadowfields} left)")
        return 0
    return points


# -- titan-killer damage (§10.5) ---------------------------------------------------------------------

def titan_killer_damage(trial, hit, unit) -> int:
    """The damage of a titan-killer hit allocated to ``unit``: its dice on a war engine, rolled at once,
    else 1 (TP 3.2.5; §10.5).  Any other hit: 1."""
    dice = hit.titan_killer_damage
    if unit.slot.type != "WE" or dice.fixed:
        return dice.plus if unit.slot.type == "WE" else 1
    damage = dice.roll(trial.rng)
    trial.say("TP 3.2.5", f"  titan-killer hit on {unit.label}: {dice} damage → {damage}")
    return damage


# -- damage to the hull and critical hits (§10.4) ---------------------------------------------------

def damage_hull(trial, unit, points: int, clause: str, by_side: int | None, kill: bool = True,
                books: bool = True) -> None:
    """``points`` of damage that reached the hull, one at a time: −1 DC (destroyed at 0), booked as a
    kill for ``by_side`` and a loss (``trial.count_damage``; ``books=False`` for a point whose BM a
    disrupt hit already placed, §10.6), then a D6 for a critical hit when the unit has a critical
    effect (TP 3.2.2, 3.2.3, 3.3.3; §10.4).  Points beyond its remaining DC are lost."""
    for _ in range(points):
        if not unit.alive:
            return
        unit.damage_left -= 1
        if unit.damage_left == 0:
            unit.alive = False
        trial.count_damage(unit, 1, by_side, kill, books)
        trial.say(clause, f"    {unit.label}: 1 point of damage → "
                          f"{'destroyed' if not unit.alive else f'{unit.damage_left} DC left'}")
        if unit.slot.critical is not None:
            roll_critical(trial, unit, by_side, kill)


def roll_critical(trial, unit, by_side: int | None, kill: bool) -> None:
    """One D6 for a point of damage: a 6 is a critical hit, applied at once; rolled on end-phase
    damage it is counted but resolves in the next end phase (TP 3.2.3; TP-FAQ Critical Hits; §10.4)."""
    roll = d6(trial)
    critical = roll == 6
    trial.say("TP 3.2.3",
              f"    critical roll for {unit.label}: {roll} → {'CRITICAL HIT' if critical else 'no critical'}")
    if not critical:
        return
    unit.criticals += 1
    if trial.in_end_phase:
        trial.say("TP-FAQ Critical Hits", f"    {unit.label}: a critical caused in the end phase resolves in the "
                                          "next end phase (not simulated)")
        return
    apply_critical(trial, unit, by_side, kill)


def apply_critical(trial, unit, by_side: int | None, kill: bool) -> None:
    """The unit's critical effect (TP 3.2.3; DATA critical_hit_effect; §10.4)."""
    effect = unit.slot.critical
    kind = effect.kind
    if kind == "degrade_then_escalate":
        if unit.degraded:
            kind = effect.then
        else:
            unit.degraded = True
            degrade(trial, unit)
            damage_hull(trial, unit, effect.extra_damage, "TP 3.2.3", by_side, kill)
            return
    trial.say("TP 3.2.3", f"    {unit.label}: critical effect {kind}")
    if kind in DESTROYING:
        destroy_by_critical(trial, unit, by_side, kill)
    elif kind == "extra_damage" and effect.kind == "extra_damage":
        damage_hull(trial, unit, effect.extra_damage, "TP 3.2.3", by_side, kill)
        if effect.further_damage_on and unit.alive:
            roll = d6(trial)
            further = roll >= effect.further_damage_on
            splashes = roll == 1 and bool(effect.splash_hit_on)
            trial.say("TP 3.2.3", f"    {unit.label}: further-damage roll {roll} → "
                                  f"{'1 more point' if further else 'a splash' if splashes else 'nothing more'}")
            if further:
                damage_hull(trial, unit, 1, "TP 3.2.3", by_side, kill)
            elif splashes:
                splash(trial, unit)
    elif kind == "extra_damage":  # a degrade's later criticals
        damage_hull(trial, unit, 1, "TP 3.2.3", by_side, kill)
    elif kind == "self_hit":
        self_hit(trial, unit)
    elif kind == "lose_character":
        lose_character(trial, unit, by_side, kill)
    elif kind == "random_move":
        damage_hull(trial, unit, effect.extra_damage, "TP 3.2.3", by_side, kill)
    elif kind == "end_phase_breach":
        unit.breaches += 1
    elif kind == "end_phase_fire":
        unit.fires += 1


def self_hit(trial, unit) -> None:
    """``self_hits`` D6, each on ``self_hit_on`` or more a hit of the splash type on the war engine itself,
    then its splash on the units within reach (DATA critical_hit_effect: abattoir, aeonic-orb; §10.4)."""
    effect = unit.slot.critical
    for _ in range(effect.self_hits):
        roll = d6(trial)
        hit = roll >= effect.self_hit_on and unit.alive
        trial.say("TP 3.2.3", f"    {unit.label}: self-hit roll {roll} → {'hit' if hit else 'no hit'}")
        if hit:
            trial.splash_hit(unit, effect.splash_kind)
    if effect.splash_hit_on:
        splash(trial, unit)


def lose_character(trial, unit, by_side: int | None, kill: bool) -> None:
    """A random attached character that added damage capacity is removed: the war engine's starting DC
    and void shields drop by the character's (its remaining DC too; the DC so lost counts as kills and
    losses), and with no such character left it is destroyed (DATA land-train; §10.4, §10.8)."""
    slot = unit.slot
    if not slot.characters_capacity:
        destroy_by_critical(trial, unit, by_side, kill)
        return
    pick = trial.rng.randint(1, len(slot.characters_capacity)) - 1
    capacity, shields = slot.characters_capacity[pick]
    unit.lost_characters.append((capacity, shields))
    new_capacity = slot.damage_capacity - capacity
    unit.slot = replace(slot, damage_capacity=new_capacity, void_shields=slot.void_shields - shields,
                        cc_dice=min(slot.cc_dice, new_capacity),
                        characters_capacity=slot.characters_capacity[:pick] + slot.characters_capacity[pick + 1:])
    unit.void_shields = min(unit.void_shields, unit.slot.void_shields)
    lost = min(capacity, unit.damage_left)
    unit.damage_left -= lost
    if unit.damage_left == 0:
        unit.alive = False
    if lost:
        trial.count_damage(unit, lost, by_side, kill, True)
    trial.say("TP 3.2.3", f"    {unit.label} loses a character (roll {pick + 1}): starting DC {slot.damage_capacity} → "
                          f"{new_capacity}, void shields {slot.void_shields} → {unit.slot.void_shields}"
                          f"{'; destroyed' if not unit.alive else ''}")


def degrade(trial, unit) -> None:
    """A first degrade critical takes away what ``loses`` lists, for the rest of the trial (§10.4)."""
    effect, slot = unit.slot.critical, unit.slot
    changes = {}
    if effect.loses_holofield:
        changes["holofield"] = False
    if effect.loses_deflector_shield:
        changes["invulnerable_on"] = 6 if slot.invulnerable else NO_ROLL
    if effect.loses_cc:
        changes["cc"] = NO_ROLL
    if effect.loses_ff:
        changes["ff"] = NO_ROLL
    if effect.ff_becomes != NO_ROLL:
        changes["ff"] = effect.ff_becomes
    if effect.loses_extra_attacks:
        changes["extra"] = ()
    unit.slot = replace(slot, **changes)
    trial.say("TP 3.2.3", f"    {unit.label}: degraded ({', '.join(sorted(changes)) or 'nothing that matters here'})"
                          f"; later criticals: {effect.then}")


def destroy_by_critical(trial, unit, by_side: int | None, kill: bool) -> None:
    """Destroyed: the DC it had left counts as kills and losses (BMs in the end phase), then its
    splash, if any (TP 3.2.3, 3.2.4; §10.4, §10.6)."""
    left = unit.damage_left if unit.alive else 0
    unit.damage_left = 0
    unit.alive = False
    if left:
        trial.count_damage(unit, left, by_side, kill, True)
    trial.say("TP 3.2.4", f"    {unit.label} is destroyed by the critical"
                          + (f": its {left} DC left count as {left} kill(s) and blast marker(s)" if left else ""))
    if unit.slot.critical.splash_hit_on:
        splash(trial, unit)


def splash(trial, source) -> None:
    """Every unit the scenario places within reach of ``source``'s splash (formation key
    ``within_splash_of``) is hit on D6 ≥ ``splash_hit_on`` (§10.6, §10.8.2)."""
    effect = source.slot.critical
    for formation in trial.formations:
        reach = formation.within_splash_of[source.slot.formation]
        victims = [u for u in formation.living if u is not source][:reach]
        if reach:
            trial.say("TP 3.2.3", f"    splash of {source.label}: {len(victims)} unit(s) of {formation.name} "
                                  f"within reach, hit on {effect.splash_hit_on}+")
        for victim in victims:
            roll = d6(trial)
            if roll < effect.splash_hit_on:
                trial.say("TP 3.2.3", f"    {victim.label}: splash roll {roll} → missed")
                continue
            trial.say("TP 3.2.3", f"    {victim.label}: splash roll {roll} → hit")
            trial.splash_hit(victim, effect.splash_kind)


# -- end phase (§10.7) ------------------------------------------------------------------------------

def end_phase_effects(trial) -> None:
    """End-phase step 2, before the rally: fires and reactor breaches roll, regeneration, void shields
    come back; damage done here places BMs, then the break test (TP-FAQ End Phase, Critical Hits;
    TP-SR Imperial Void Shields, Regeneration; §10.7)."""
    for formation in trial.formations:
        markers_before = formation.blast_markers
        for unit in formation.units:
            if unit.alive and (unit.fires or unit.breaches):
                burn_and_breach(trial, unit)
            if unit.alive and unit.slot.regeneration and unit.damage_left < unit.slot.damage_capacity:
                unit.damage_left += 1
                trial.say("TP-SR Regeneration", f"{unit.label} regenerates 1 DC → {unit.damage_left}")
            if unit.alive and unit.void_shields < unit.slot.void_shields:
                unit.void_shields += 1
                trial.say("TP-SR Imperial Void Shields",
                          f"{unit.label}: 1 void shield comes back → {unit.void_shields}")
        returning = [u for u in formation.units if u.slot.necron and not u.alive]
        if returning and formation.living:
            unit = returning[-1]  # the farthest: allocation order runs from the nearest (§10.7)
            unit.alive, unit.damage_left = True, unit.slot.damage_capacity
            trial.say("TP-SR Necron Technology", f"{unit.label} returns")
        if formation.blast_markers > markers_before and formation.living:
            trial.break_in_end_phase(formation)


def burn_and_breach(trial, unit) -> None:
    """Each fire: 1 = 1 damage and a new fire (which first rolls next end phase), 2–4 = 1 damage,
    5–6 = put out.  Each breach: 1 = destroyed (and its splash), 2–3 = 1 damage, 4–6 = repaired
    (DATA critical_hit_effect; §10.4, §10.8)."""
    new_fires = 0
    for _ in range(unit.fires):
        roll = d6(trial)
        if roll >= 5:
            unit.fires -= 1
            trial.say("TP 3.2.3", f"{unit.label}: fire roll {roll} → put out")
            continue
        if roll == 1:
            new_fires += 1
        trial.say("TP 3.2.3", f"{unit.label}: fire roll {roll} → 1 damage{' and a new fire' if roll == 1 else ''}")
        damage_hull(trial, unit, 1, "TP 3.2.3", None)
    unit.fires += new_fires
    for _ in range(unit.breaches):
        if not unit.alive:
            return
        roll = d6(trial)
        if roll >= 4:
            unit.breaches -= 1
            trial.say("TP 3.2.3", f"{unit.label}: reactor breach roll {roll} → repaired")
        elif roll >= 2:
            trial.say("TP 3.2.3", f"{unit.label}: reactor breach roll {roll} → 1 damage")
            damage_hull(trial, unit, 1, "TP 3.2.3", None)
        else:
            trial.say("TP 3.2.3", f"{unit.label}: reactor breach roll {roll} → the reactor explodes")
            destroy_by_critical(trial, unit, None, False)


def shadowfields_return(trial) -> None:
    """At the end of the rally step each unit with at least one shadowfield up regains one, up to its
    starting number (TP-SR Dark Eldar Technology; §10.2)."""
    for unit in trial.units:
        if unit.alive and 0 < unit.shadowfields < unit.slot.shadowfields:
            unit.shadowfields += 1
            trial.say("TP-SR Dark Eldar Technology", f"{unit.label}: 1 shadowfield comes back → {unit.shadowfields}")
