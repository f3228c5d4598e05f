"""Allocation (mirrors ``kernels/epic/allocation.py``; TP 1.9.6, 1.12.5, 2.1.14, 3.1.2, 3.2.1, 3.2.5; spec §2,
§9.14): which units fight in base contact, and one round-robin allocation of one kind's hits.
"""
from __future__ import annotations

from ..compile import BC, UnitSlot
from .state import ANY_TARGET, CONTACT_ONLY, NON_CONTACT_ONLY, Hit, Unit


def fights_in_contact(slot: UnitSlot) -> bool:
    """A ``bc`` unit fights in base contact unless it is a Support Craft or a Skimmer choosing FF
    (TP 2.1.13, 2.1.20; spec §1)."""
    return slot.engaged == BC and not slot.firefights


def allocate(hits: list[Hit], eligible: list[Unit], damage_of=None) -> list[tuple[Hit, Unit, int]]:
    """One allocation of one kind's hits to the enemy's living directly engaged units, decided before its
    saves: ``(hit, unit, damage)`` in allocation order (TP 1.9.6, 1.12.5, 2.1.14, 3.1.2, 3.2.1, 3.2.5; spec §2).

    Sniper hits go to the first Inspiring/Leader/Supreme Commander unit, else the first unit.  The others
    go round-robin in allocation order from the nearest unit, with one count per unit shared by every hit of
    the kind: pass after pass, the first unit with the fewest passes that can take a hit left takes 1 hit, a
    war engine a block of its starting DC (epic-shooting §3.7, epic-armageddon §2.3, 2.10).  A war engine's
    hits that may reach only units in base contact, or only the others (TP 3.1.2), follow the same counts
    over the units they may reach; a unit takes those it alone of the two may take before the hits any
    unit may take, so that no hit is lost while it could land.  ``damage_of(hit, unit)``: the damage a hit
    does (a titan-killer hit on a war engine, rolled when allocated: it counts as that many hits of the
    block, TP 3.2.5); 1 by default.  Hits no unit may take are lost."""
    damage_of = damage_of or (lambda hit, unit: 1)
    if not eligible:
        return []
    sniper_target = next((u for u in eligible if u.slot.inspiring or u.slot.leader), eligible[0])
    triples = [(hit, sniper_target, damage_of(hit, sniper_target)) for hit in hits if hit.sniper]
    pools = {reach: [h for h in hits if not h.sniper and h.reach == reach]
             for reach in (ANY_TARGET, CONTACT_ONLY, NON_CONTACT_ONLY)}
    passes = {id(u): 0 for u in eligible}
    own_pools = {id(u): pools[CONTACT_ONLY if fights_in_contact(u.slot) else NON_CONTACT_ONLY] for u in eligible}

    def pool_of(unit: Unit) -> list[Hit]:
        """The first non-empty pool ``unit`` may take from, or an empty one."""
        return own_pools[id(unit)] or pools[ANY_TARGET]

    while True:
        takers = [u for u in eligible if pool_of(u)]
        if not takers:
            return triples
        least = min(passes[id(u)] for u in takers)
        unit = next(u for u in takers if passes[id(u)] == least)
        taken = 0
        while taken < unit.slot.damage_capacity and pool_of(unit):
            hit = pool_of(unit).pop(0)
            damage = damage_of(hit, unit)
            triples.append((hit, unit, damage))
            taken += damage
        passes[id(unit)] += 1
