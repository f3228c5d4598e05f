"""Compile a GdB model into the kernel's arrays, and the count layout both engines fill.

Deterministic clauses (half move, reaction, eligibility, modifiers) are evaluated once with the
reference engine's clause functions; only the dice are left to the kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..run.counts import CountLayout
from ...kernels.rng import BLOCK_TRIALS, Run
from ...kernels import gdb as kernel

from . import reference as ref
from .model import Model
from .tables import band_lookup

DEFENDER_END = ref.END_STATES[:4]


def layout(model: Model) -> CountLayout:
    """Named slots of the count vector (same order as the kernel's offsets)."""
    lay = CountLayout()
    n = model.scenario.charger.strength
    lay.add("charger", len(ref.CHARGER_KEYS))
    lay.add("defender", len(ref.DEFENDER_KEYS))
    lay.add("outcome", len(ref.OUTCOMES))
    lay.add("charger_end", len(ref.END_STATES))
    lay.add("defender_end", len(DEFENDER_END))
    lay.add("casualties", n + 1)
    lay.add("casualties_by_target", n + 1)
    lay.add("friends_disordered", len(model.scenario.charger.friends_behind) + 1)
    lay.add("charger_double_six")
    lay.add("defender_double_six")
    return lay


def _lut(bands, lo: int, hi: int, value) -> np.ndarray:
    return np.array([value(band_lookup(bands, t)) for t in range(lo, hi + 1)], dtype=np.int64)


@dataclass
class Compiled:
    """Everything the kernel needs, plus the deterministic facts of the scenario."""

    args: tuple
    n_firers: int
    notes: list


def compile_model(model: Model) -> Compiled:
    s, tables = model.scenario, model.tables
    c, t = s.charger, s.target
    lay = layout(model)
    notes = []
    d_half, moved, close = ref.half_move(model)
    react, why = ref.reaction(model, d_half)
    if react != t.reaction:
        notes.append(f"{t.name}: {why} (Q-A5)")
    position = ref.position_at_test(model, react)

    mods, nums, is_target = [], [], []
    for f, band, why in ref.firers(model, d_half, react, close):
        if band is None:
            notes.append(f"{f.name}: {why}")
            continue
        mods.append(sum(v for _, v in ref.fire_modifier(model, f)))
        nums.append(f.strength * getattr(tables.fire.firing_percent, f.formation) * band.scale)
        is_target.append(f.role == "target")
    fd, md = tables.fire.dice, tables.morale.dice
    f_lo = fd + min(mods, default=0)
    f_hi = 6 * fd + max(mods, default=0)
    fire_lut = _lut(tables.fire.bands, f_lo, f_hi, lambda b: b.casualty_percent)

    cmods = np.array([sum(v for _, v in ref.charger_modifiers(model, k, position)) for k in range(c.strength + 1)],
                     dtype=np.int64)
    c_lo, c_hi = md + int(cmods.min()), 6 * md + int(cmods.max())
    charger_lut = _lut(tables.morale.charger_bands, c_lo, c_hi, lambda b: ref.CHARGER_KEYS.index(b.result))
    dmod = sum(v for _, v in ref.defender_modifiers(model, position, react))
    d_lo, d_hi = md + dmod, 6 * md + dmod
    defender_lut = _lut(tables.morale.defender_bands, d_lo, d_hi, lambda b: ref.DEFENDER_KEYS.index(b.result))

    # §2.4 effects, per result (the reference applies them clause by clause per trial)
    start = "formed" if c.formed else "disordered"
    cend = {"PASS": start, "HALT": start, "WAVER": "disordered", "RETREAT": "retreating",
            "ROUT": "routing", "ELIMINATED": "eliminated"}
    moves = getattr(tables.moves, c.arm)
    frac = s.rules.retreat_now_fraction
    friends = {"RETREAT": frac * moves.retreat, "ROUT": frac * moves.rout}
    friends_by = [sum(1 for d in c.friends_behind if d <= friends[r]) if r in friends else 0
                  for r in ref.CHARGER_KEYS]
    out_c = [ref.OUTCOMES.index(f"stopped_by_{r}") if r in ("HALT", "WAVER", "RETREAT", "ROUT") else
             ref.OUTCOMES.index("charger_eliminated_by_fire") if r == "ELIMINATED" else 0
             for r in ref.CHARGER_KEYS]
    reach = c.charge_move - moved
    tmoves = getattr(tables.moves, t.arm)
    out_d = []
    for r in ref.DEFENDER_KEYS:
        if r == "PASS":
            passed = "countercharge_meets_charge" if react == "countercharge" else "contact_steady"
            out_d.append(ref.OUTCOMES.index(passed))
        elif r == "WAVER":
            out_d.append(ref.OUTCOMES.index("contact_wavering"))
        elif r in ("RETREAT", "ROUT"):
            now = frac * (tmoves.retreat if r == "RETREAT" else tmoves.rout)
            rule = s.rules.catch_retreating
            caught = reach >= d_half + now if rule == "if_reached" else rule == "always"
            out_d.append(ref.OUTCOMES.index("gives_way_caught" if caught else "gives_way_escaped"))
        else:
            out_d.append(0)                                 # NOT_TESTED: never indexed (charger did not pass)
    dstart = "formed" if t.formed else "disordered"
    dend = {"PASS": dstart, "NOT_TESTED": dstart, "WAVER": "disordered", "RETREAT": "retreating", "ROUT": "routing"}

    i64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
    offsets = i64([lay.offset(n) for n in lay.names()])
    fire = kernel.Fire(dice=fd, mod=i64(mods), num=i64(nums), is_target=np.asarray(is_target, dtype=np.bool_),
                       lut=fire_lut, lo=f_lo)
    tests = kernel.Tests(strength=c.strength, dice=md, charger_mod_by_cas=cmods, charger_lut=charger_lut,
                         charger_lo=c_lo, defender_mod=dmod, defender_lut=defender_lut, defender_lo=d_lo)
    effects = kernel.Effects(
        outcome_by_charger=i64(out_c), outcome_by_defender=i64(out_d),
        charger_end_by_result=i64([ref.END_STATES.index(cend[r]) for r in ref.CHARGER_KEYS]),
        defender_end_by_result=i64([DEFENDER_END.index(dend[r]) for r in ref.DEFENDER_KEYS]),
        friends_by_result=i64(friends_by))
    args = (lay.size, offsets, fire, tests, effects)
    return Compiled(args=args, n_firers=len(mods), notes=notes)


class KernelJob:
    """The runner's job for the Numba kernel."""

    def __init__(self, model: Model):
        self.model = model
        self.layout = layout(model)
        self.compiled = compile_model(model)

    def run_chunk(self, key0, key1, first_block, n_trials):
        return kernel.run_chunk(Run(key0=np.uint64(key0), key1=np.uint64(key1), first_block=np.int64(first_block),
                                    n_trials=np.int64(n_trials)), *self.compiled.args)

    def precision_successes(self, counts):
        return precision_successes(self.layout, counts)


class ReferenceJob:
    """The runner's job for the pure-Python reference engine (``random.Random`` per block)."""

    def __init__(self, model: Model):
        self.model = model
        self.layout = layout(model)
        self.compiled = compile_model(model)

    def run_chunk(self, key0, key1, first_block, n_trials):
        counts = self.layout.zeros()
        done, block = 0, first_block
        while done < n_trials:
            dice = ref.RandomDice(key0, key1, block)
            for _ in range(min(BLOCK_TRIALS, n_trials - done)):
                record(self.layout, counts, ref.resolve(self.model, dice))
                done += 1
            block += 1
        return counts

    def precision_successes(self, counts):
        return precision_successes(self.layout, counts)


def record(lay: CountLayout, counts, tr: ref.Trial, weight=1) -> None:
    """Add one reference trial (with ``weight``) to ``counts`` in the kernel's layout."""
    at = lay.offset
    counts[at("charger") + ref.CHARGER_KEYS.index(tr.charger)] += weight
    counts[at("defender") + ref.DEFENDER_KEYS.index(tr.defender)] += weight
    counts[at("outcome") + ref.OUTCOMES.index(tr.outcome)] += weight
    counts[at("charger_end") + ref.END_STATES.index(tr.charger_end)] += weight
    counts[at("defender_end") + DEFENDER_END.index(tr.defender_end)] += weight
    counts[at("casualties") + tr.casualties] += weight
    counts[at("casualties_by_target") + tr.casualties_by_target] += weight
    counts[at("friends_disordered") + tr.friends_disordered] += weight
    if tr.charger_double_six:
        counts[at("charger_double_six")] += weight
    if tr.defender_double_six:
        counts[at("defender_double_six")] += weight


def precision_successes(lay: CountLayout, counts) -> np.ndarray:
    """The headline probabilities: every charger result, defender result and outcome class."""
    return np.concatenate([lay.get(counts, "charger"), lay.get(counts, "defender"), lay.get(counts, "outcome")])
