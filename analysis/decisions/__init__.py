"""Decisions from simulations: matchup matrices, parameter sweeps, paired comparisons, rankings.

``matrix(attackers, defenders)``, ``sweep(scenario, field, values)``,
``threshold(scenario, field, values, at_least=p)``, ``compare(a, b, opponents)``,
``rank(options, meta)`` and ``cumulative(result)`` each return a result with ``.table()`` (tidy
pandas, 95 % intervals), ``.plot()``, ``.to_json()`` and ``_repr_html_``.  See docs/decisions.md.
"""
from .api import compare, cumulative, matchup, matrix, rank, sweep, threshold
from .systems import Force

__all__ = ["matrix", "sweep", "threshold", "compare", "rank", "cumulative", "matchup", "Force"]
