"""The plain sentences that lead every answer: who fights whom, who wins, who breaks or routs.

The shared part: each rule system writes its own sentences (``System.headline`` and ``System.summary``, in its
folder's ``headline.py``) with the helpers here, and :func:`sentences` and :func:`summary` find the system through
the registry (:mod:`wargame_odds.analysis.intake.systems`).  Each reads a result's ``to_dict()`` (the data ``--json``
prints, also what a report stores for every point), so the CLI, notebooks and reports say the same thing with the same
numbers: every probability in percent with its 95 % interval, "Warband (defender) is destroyed: 12.3 % [12.1, 12.5]".
"""
from __future__ import annotations

from ..intake import systems
from .labels import number, percent
from ..intake.user_text import printable


def _system(data: dict):
    """The registered system of a result's data, or None (an unknown system has no sentences)."""
    name = data.get("system")
    return systems.get(name) if name in systems.names() else None


def sentences(data: dict, table=None) -> list[str]:
    """The headline of one simulated scenario (``Result.to_dict()``; none for an unknown system);
    ``table`` (its ``rows()`` or ``table()``) adds the intervals of an Epic turn's means.  User text (names, titles)
    comes with its control and bidi characters escaped (:func:`~wargame_odds.analysis.intake.user_text.printable`): a
    sentence goes to a terminal, a page or a notebook as it is."""
    system = _system(data)
    return [printable(line) for line in system.headline(data, table)] if system else []


def summary(data: dict) -> list[str]:
    """The one or two sentences that answer "who wins" (for one point of a sweep or a matrix)."""
    system = _system(data)
    return [printable(line) for line in system.summary(data)] if system else []


def _decision_notes(result) -> list[str]:
    """What the system of a matrix or a ranking says a player must know before acting on it."""
    system = _system({"system": result.system})
    return system.decision_notes(result) if system else []


def chance(node: dict) -> str:
    return percent(node["p"], *node["ci95"])


def mean_text(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.2f}"


def who(names: list[str], role: str) -> str:
    if len(names) == 1:
        return f"{names[0]} ({role})"
    return f"the {role} ({joined(names)})"


def joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def decision_sentences(result) -> list[str]:
    """The headline of a decision result (matrix, sweep, compare, rank): who wins each matchup or
    each swept value, or how the options compare against the meta (user text escaped, as in :func:`sentences`)."""
    return [printable(line) for line in _decision_sentences(result)]


def _decision_sentences(result) -> list[str]:
    kind = result.kind
    if kind == "threshold":
        return result.lines()
    plans = [result.meta["plan_sentence"]] if result.meta.get("plan_sentence") else []
    if kind == "matrix":
        return plans + [f"{a} against {d}: " + "; ".join(summary(result.cells[(i, j)].to_dict()))
                        for i, a in enumerate(result.attackers) for j, d in enumerate(result.defenders)] \
            + _decision_notes(result)
    if kind == "sweep":
        return [f"{result.field} = {value}: " + "; ".join(summary(cell.to_dict()))
                for value, cell in zip(result.values, result.cells)]
    frame = result.table()
    if kind == "compare":
        a, b = result.meta["option_a"], result.meta["option_b"]
        lines = []
        for r in frame.itertuples(index=False):
            verb = result.outcome
            line = (f"Against {r.opponent}: {a} {verb} {percent(r.p_a, r.p_a_lo, r.p_a_hi)}, "
                    f"{b} {verb} {percent(r.p_b, r.p_b_lo, r.p_b_hi)}; "
                    f"{a} − {b}: {percent(r.difference, r.ci95_lo, r.ci95_hi, 'percentage points')}")
            if "points_swing_a" in frame:
                line += (f"; points swing (destroyed − lost): {a} {_points_swing(r, '_a')}, "
                         f"{b} {_points_swing(r, '_b')}")
            lines.append(line)
        return plans + lines + ([result.meta["method_reason"]] if result.meta.get("method_reason") else [])
    if kind == "rank":
        side = result.meta.get("side", "attacker")
        per_points = result.meta.get("by") == "per_100_points"
        verb = result.meta.get("outcome", "wins")
        return plans + [
            f"{r.rank}. {r.option}" + (f" ({r.plan})" if "plan" in frame else "")
            + f" {verb} {percent(r.score, r.ci95_lo, r.ci95_hi)} against the meta (weighted, as the {side})"
            + (f"; per 100 points: {percent(r.per_100_points, r.per_100_points_lo, r.per_100_points_hi)}"
               if per_points else "")
            + (f"; points swing (destroyed − lost): {_points_swing(r)}" if "points_swing" in frame else "")
            + (_behind_the_best(r, result.meta.get("indifference", 1.0)) if "behind_best" in frame else "")
            for r in frame.itertuples(index=False)] + _decision_notes(result)
    return []


def _behind_the_best(row, delta: float) -> str:
    """A ranked option against the best one, paired on the same dice: "within 1 point of the best", or "behind the
    best by 12.4 points [12.1, 12.6]" (never "better by"), from the paired interval of the difference."""
    if row.rank == 1 or row.behind_best == 0 and row.behind_lo == row.behind_hi == 0:
        return "; the best by its score"
    pts = f"{delta:g} point{'s' if delta != 1 else ''}"
    behind = percent(row.behind_best, row.behind_lo, row.behind_hi, "points")
    if row.within_delta:
        return f"; within {pts} of the best (paired: {behind} behind)"
    return f"; behind the best by {behind} (paired)"


def _points_swing(row, suffix: str = "") -> str:
    """Mean points destroyed − points lost with its interval (a list-building trade value)."""
    return number(*(getattr(row, f"points_swing{suffix}{end}") for end in ("", "_lo", "_hi")))
