"""The count vector of a T9A scenario and the kernel's parameter arrays.

Count slots (per charger ``"<i>:<slot>"``, see ``wargame_odds.kernels.t9a.CHARGER_SLOTS``; global ones by
name).  Failed-move and gap sums are in milli-inches (their squares in milli-inch²), so means
are exact; their histograms use 0.5" bins (``BIN_MILLI``): bin ``k`` holds values in
``[k/2, (k+1)/2)`` inches, so an unobstructed failed move of ``h`` inches lands exactly in bin ``2h``.
"""
from __future__ import annotations


import numpy as np

from ...run.counts import CountLayout
from ....kernels import t9a as K

from .model import BIN_MILLI, MILLI, Model, priority_key


def hit_need(model: Model) -> int:
    """Modified to-hit need of the stand-and-shoot volley (Q-B7): base + stand-and-shoot
    penalty + long-range penalty beyond half range (out of range it still shoots, §3.3)."""
    sh = model.shooting
    c = model.chargers[model.shoot_at]
    need = sh.to_hit + model.sas_penalty
    if c.distance_milli * 2 > round(sh.weapon_range * MILLI):
        need += model.long_range_penalty
    return need


def max_flee_total(model: Model) -> int:
    """Largest total of all flee moves (one per charge declared, §3.3)."""
    return model.flee_dice.max_total * model.n if model.reaction == "flee" else 0


def placement_order(model: Model) -> list[int]:
    """Indices of the terrain-clear placements, best first (§3.7, Q-B6); ties keep file order."""
    legal = [j for j, p in enumerate(model.placements) if not p.impassable]
    return sorted(legal, key=lambda j: priority_key(model.placements[j], model.placement_order),
                  reverse=True)


def build_layout(model: Model) -> CountLayout:
    layout = CountLayout()
    flee_max = max_flee_total(model)
    for i, c in enumerate(model.chargers):
        far = max(c.distance_milli + int(np.floor(c.flee_factor * flee_max * MILLI + 0.5)),
                  c.redirect_milli or 0)
        sizes = {"roll": c.dice.max_total + 1, "fm_hist": 6 * MILLI // BIN_MILLI + 1,
                 "gap_hist": far // BIN_MILLI + 1,
                 "unsaved": model.shooting.shots + 1 if i == model.shoot_at else 1}
        for slot in K.CHARGER_SLOTS:
            layout.add(f"{i}:{slot}", sizes.get(slot, 1))
    max_models = max([p.models_in_contact for p in model.placements], default=0)
    sizes = {"units": model.n + 1, "models": max_models + 1, "placement": len(model.placements),
             "flee_total": flee_max + 1}
    for slot in K.GLOBAL_SLOTS:
        layout.add(slot, sizes.get(slot, 1))
    if model.combat is not None:
        from ..combat.layout import add_slots

        add_slots(layout, model.combat)
    return layout


def kernel_arrays(model: Model, layout: CountLayout) -> K.Charge:
    """The scenario as the kernel's integer arrays (milli-inches, -1 = not set)."""
    ch = np.zeros((model.n, K.N_CCOLS), np.int64)
    for i, c in enumerate(model.chargers):
        row = ch[i]
        row[K.C_DIST] = c.distance_milli
        row[K.C_ADV] = c.advance_milli
        row[K.C_FREE] = -1 if c.free_milli is None else c.free_milli
        row[K.C_ROOM] = int(c.room)
        row[K.C_NDICE], row[K.C_KEEP] = c.dice.n, c.dice.keep
        row[K.C_FLOOR], row[K.C_ADD] = c.dice.floor, c.dice.add
        row[K.C_FIXED] = -1 if c.dice.fixed_fail_move is None else c.dice.fixed_fail_move
        row[K.C_REDIRECT] = -1 if c.redirect_milli is None else c.redirect_milli
        row[K.C_MODELS] = c.models or 0
        row[K.C_WPM], row[K.C_SAVE] = c.wounds_per_model, c.armour_save
    tg = np.zeros(K.N_TCOLS, np.int64)
    tg[K.T_REACTION] = {"hold": K.REACTION_HOLD, "stand_and_shoot": K.REACTION_SAS,
                        "flee": K.REACTION_FLEE}[model.reaction]
    tg[K.T_SHOOT_AT] = model.shoot_at
    if model.shoot_at >= 0:
        tg[K.T_SHOTS] = model.shooting.shots
        tg[K.T_HIT_NEED] = hit_need(model)
        tg[K.T_WOUND] = model.shooting.to_wound
    tg[K.T_HIT_MODE] = K.HIT_SIX_THEN if model.to_hit_above_6 == "six_then" else K.HIT_IMPOSSIBLE
    tg[K.T_FLEE_N], tg[K.T_FLEE_KEEP] = model.flee_dice.n, model.flee_dice.keep
    tg[K.T_SPACING] = model.spacing_milli
    pl = model.placements
    coff = np.array([[layout.offset(f"{i}:{s}") for s in K.CHARGER_SLOTS] for i in range(model.n)],
                    np.int64)
    goff = np.array([layout.offset(s) for s in K.GLOBAL_SLOTS], np.int64)
    return K.Charge(
        ch=ch, ff=np.array([c.flee_factor for c in model.chargers], np.float64), tg=tg,
        plc_order=np.array(placement_order(model), np.int64),
        plc_mask=np.array([p.mask for p in pl], np.int64),
        plc_models=np.array([p.models_in_contact for p in pl], np.int64),
        plc_rot=np.array([int(p.rotates_target) for p in pl], np.int64), coff=coff, goff=goff)
