"""Helpers for the GdB tests: scenario builder, exact enumeration of the reference, 5σ checks."""
from __future__ import annotations

import copy
from fractions import Fraction as F

import numpy as np

from wargame_odds.analysis.gdb import reference as ref
from wargame_odds.analysis.gdb.compile import layout, record
from wargame_odds.analysis.gdb.model import Model, Scenario, check
from wargame_odds.analysis.gdb.tables import load_tables
from wargame_odds.analysis.intake.scenario import validate

SIGMA = 5.0

BASE = {
    "system": "gdb",
    "charger": {"name": "C", "arm": "infantry", "quality": "line", "formation": "column", "strength": 20,
                "charge_move": 12, "distance": 10},
    "target": {"name": "T", "arm": "infantry", "quality": "line", "formation": "line", "strength": 20,
               "reaction": "stand"},
}


def make(charger=None, target=None, supports=(), rules=None, tables=None, **top) -> Model:
    """A model from BASE with overrides; ``tables`` maps 'tables.<path>' to values."""
    data = copy.deepcopy(BASE)
    data["charger"].update(charger or {})
    data["target"].update(target or {})
    data["supports"] = [dict(s) for s in supports]
    if rules:
        data["rules"] = dict(rules)
    data.update(top)
    tabs = load_tables()
    scenario = validate(Scenario, data, "<test>")
    check(scenario, tabs, "<test>")
    model = Model(scenario, tabs, "<test>")
    for path, value in (tables or {}).items():
        model = model.replace(path, value)
    return model


class _Need(Exception):
    pass


class _Script:
    def __init__(self, seq):
        self.seq, self.i = seq, 0

    def d6(self):
        if self.i == len(self.seq):
            raise _Need
        self.i += 1
        return self.seq[self.i - 1]


def exact(model: Model) -> np.ndarray:
    """Exact probabilities of every count slot: the reference engine over every dice sequence."""
    lay = layout(model)
    out = np.array([F(0)] * lay.size, dtype=object)

    def walk(prefix, p):
        try:
            trial = ref.resolve(model, _Script(prefix))
        except _Need:
            for v in range(1, 7):
                walk(prefix + [v], p / 6)
            return
        record(lay, out, trial, p)

    walk([], F(1))
    return out


def slot(model, counts, name):
    return layout(model).get(counts, name)


def assert_binomial(k, n, p, label=""):
    """k successes in n trials agree with exact p within 5σ (exactly, when p is 0 or 1)."""
    p = float(p)
    if p in (0.0, 1.0):
        assert k == round(n * p), f"{label}: {k}/{n} but p = {p}"
        return
    sd = (n * p * (1 - p)) ** 0.5
    assert abs(k - n * p) <= SIGMA * sd, f"{label}: {k}/{n} = {k / n:.5f} vs exact {p:.5f} ({(k - n * p) / sd:+.1f}σ)"


def assert_two_sample(k1, n1, k2, n2, label=""):
    """Two binomial counts agree within 5σ (pooled standard error)."""
    if k1 == 0 and k2 == 0 or k1 == n1 and k2 == n2:
        return
    p = (k1 + k2) / (n1 + n2)
    se = (p * (1 - p) * (1 / n1 + 1 / n2)) ** 0.5
    diff = k1 / n1 - k2 / n2
    assert abs(diff) <= SIGMA * se, f"{label}: {k1}/{n1} vs {k2}/{n2} ({diff / se:+.1f}σ)"


def counts_of(result, model):
    """The raw count vector of a Result, rebuilt from its leaves (slot order of the layout)."""
    lay = layout(model)
    out = lay.zeros()
    t = result.tree
    for name, keys, node in (("charger", ref.CHARGER_KEYS, t["charger"]),
                             ("defender", ref.DEFENDER_KEYS, t["defender"]),
                             ("outcome", ref.OUTCOMES, t["outcomes"]),
                             ("charger_end", ref.END_STATES, t["end_state"]["charger"]),
                             ("defender_end", ref.END_STATES[:4], t["end_state"]["defender"])):
        lay.get(out, name)[:] = [node[k].k for k in keys]
    for name, dist in (("casualties", t["casualties"]["charger"]["distribution"]),
                       ("casualties_by_target", t["casualties"]["charger_from_target_fire"]["distribution"]),
                       ("friends_disordered", t["events"]["friends_disordered"]["distribution"])):
        lay.get(out, name)[:len(dist.counts)] = dist.counts
    lay.get(out, "charger_double_six")[0] = t["events"]["charger_double_six"].k
    lay.get(out, "defender_double_six")[0] = t["events"]["defender_double_six"].k
    return out


def assert_counts_match_exact(model, counts, n, probs):
    lay = layout(model)
    for name in lay.names():
        for i, (k, p) in enumerate(zip(lay.get(counts, name), lay.get(probs, name))):
            assert_binomial(int(k), n, p, f"{name}[{i}]")


def assert_counts_agree(model, c1, n1, c2, n2):
    lay = layout(model)
    for name in lay.names():
        for i, (a, b) in enumerate(zip(lay.get(c1, name), lay.get(c2, name))):
            assert_two_sample(int(a), n1, int(b), n2, f"{name}[{i}]")
