"""Decisions from simulations: matchup matrices, parameter sweeps, paired comparisons, rankings.

``matrix(attackers, defenders)``, ``sweep(scenario, field, values)``,
``threshold(scenario, field, values, at_least=p)``, ``compare(a, b, opponents)``,
``rank(options, meta)`` and ``cumulative(result)`` each return a result with ``.table()`` (tidy
pandas, 95 % intervals), ``.plot()``, ``.to_json()`` and ``_repr_html_``.  See docs/decisions.md.
``list_search(definition)`` races candidate detachments against a meta (docs/list-search.md);
``enumerate_detachments(army, max_points=...)`` lists the candidates without trials.
"""
from .api import compare, cumulative, matchup, matrix, rank, sweep, threshold
from .list_search_core import enumerate_detachments, list_search
from .systems import Force

__all__ = ["matrix", "sweep", "threshold", "compare", "rank", "cumulative", "matchup", "Force", "list_search",
           "enumerate_detachments"]
