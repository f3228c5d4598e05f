"""list-search against exact chances: one-unit duel candidates (CC 2–5+, armour 3–5+) against duel defenders,
whose chances are exact by enumeration (the independent calculation of tests/epic/test_reference.py)."""
import importlib.util
import math
from fractions import Fraction as F
from pathlib import Path

import numpy as np

from wargame_odds.analysis.decisions.list_search_core import list_search

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("reference_oracle", ROOT / "tests" / "epic" / "test_reference.py")
_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_oracle)

DEFENDERS = [({"type": "INF", "armour": 4, "cc": 4}, 3), ({"type": "INF", "armour": 5, "cc": 3}, 1)]
DELTA = 1.0


def _force(name, unit):
    return {"name": name, "units": {name: unit},
            "formations": [{"name": name, "initiative": 2, "units": [{"unit": name, "count": 1, "engaged": "bc"}]}]}


def _exact(attacker, defender) -> float:
    hit = lambda u: F(7 - u["cc"], 6)  # noqa: E731
    fail = lambda u: F(u["armour"] - 1, 6)  # noqa: E731
    out = _oracle.exact_all_contact_assault(1, 1, hit(attacker), hit(defender), fail(attacker), fail(defender),
                                            0, 0, 10)
    return float(out["attacker"])


def test_the_race_picks_the_exact_best_and_confirms_within_5_sigma():
    units = {f"cc{cc}a{armour}": {"type": "INF", "armour": armour, "cc": cc}
             for cc in range(2, 6) for armour in range(3, 6)}
    w = np.array([weight for _, weight in DEFENDERS], float) / sum(weight for _, weight in DEFENDERS)
    exact = {name: 100 * sum(wj * _exact(u, d) for wj, (d, _) in zip(w, DEFENDERS)) for name, u in units.items()}
    ordered = sorted(exact, key=exact.get, reverse=True)
    assert exact[ordered[0]] - exact[ordered[1]] >= DELTA  # the exact best is δ ahead: the race must name it
    res = list_search({"candidates": [_force(n, u) for n, u in units.items()],
                       "opponents": [{"force": _force(f"def{j}", d), "weight": weight}
                                     for j, (d, weight) in enumerate(DEFENDERS)],
                       "indifference": DELTA}, seed=7)
    f = res.frame.set_index("candidate")
    assert f.status[ordered[0]] == "best"
    n = res.confirm_trials
    for name in f.index[f.ci95_lo.notna()]:
        p = [_exact(units[name], d) for d, _ in DEFENDERS]
        sigma = 100 * math.sqrt(sum(wj ** 2 * pj * (1 - pj) for wj, pj in zip(w, p)) / n)
        assert abs(f.score[name] - exact[name]) <= 5 * sigma, (name, f.score[name], exact[name], sigma)
