"""The close combat's part of a T9A result (docs/t9a.md, "Close combat", Output): the ``melee`` tree and its
figure.

``melee.given_contact`` counts over the trials where the charge arrived, ``melee.unconditional`` over all
trials (a fight that never happened is no win, no break, no HP lost); ``melee.distributions`` are given contact.
"""
from __future__ import annotations

import math
import textwrap

import numpy as np

from ...run.counts import CountLayout
from ...output.estimates import Distribution, Mean, Probability
from ...output.plots import literal_text

from .exact import start_facts
from .layout import margin_offset
from .model import CombatSpec

#: The keys of ``melee.given_contact`` and ``melee.unconditional``, in order (``e_*``: means).
KEYS = ("r1_a_wins", "r1_b_wins", "r1_draw", "r1_a_breaks", "r1_b_breaks", "r1_a_caught", "r1_b_caught",
        "r1_a_wiped", "r1_b_wiped", "continues_to_round_2", "e_hp_lost_a_r1", "e_hp_lost_b_r1", "a_wins", "b_wins",
        "unresolved", "a_breaks", "b_breaks", "a_caught", "b_caught", "a_destroyed", "b_destroyed",
        "a_fled_rallied", "b_fled_rallied", "a_fled_not_rallied", "b_fled_not_rallied", "e_hp_lost_a", "e_hp_lost_b",
        "ends_in_round")
DISTRIBUTIONS = ("hp_lost_a_r1", "hp_lost_b_r1", "hp_lost_a", "hp_lost_b", "r1_margin")


class MeanEstimate:
    """A mean whose JSON is ``{"mean": …, "mean_ci95": [lo, hi]}`` (the melee object's shape); in tables a
    mean with its 95 % interval like any other."""

    def __init__(self, mean: Mean):
        self._mean = mean

    @property
    def value(self) -> float:
        return self._mean.value

    @property
    def ci95(self) -> tuple[float, float]:
        return self._mean.ci95

    def to_json(self):
        return {"mean": self._mean.to_json(), "mean_ci95": self._mean.ci95_json()}

    def __str__(self):
        return str(self._mean)


class EndsInRound(Distribution):
    """The round the fight ends in: rounds 1..R, then one value for "unresolved" (still fighting after R
    rounds), which the JSON names ``"unresolved"`` and tables and plots show as R + 1.  Every round is kept,
    however unlikely; a mean would mix rounds with "unresolved", so there is none."""

    def __init__(self, counts, n: int):
        super().__init__(counts, 1, n)
        self.counts = np.asarray(counts, dtype=np.int64)

    def mean(self) -> Mean:
        return Mean(math.nan, math.nan, 0)

    def to_json(self):
        out = super().to_json()
        out["values"] = out["values"][:-1] + ["unresolved"]
        return out


def _mean(hist: np.ndarray, n: int) -> MeanEstimate:
    """Mean of a histogram over ``n`` trials (trials beyond its counts add 0: no fight, no HP lost)."""
    if n == 0:
        return MeanEstimate(Mean(math.nan, math.nan, 0))
    v = np.arange(len(hist), dtype=float)
    total, total_sq = float((hist * v).sum()), float((hist * v * v).sum())
    mean = total / n
    var = max(0.0, (total_sq - n * mean * mean) / max(n - 1, 1))
    return MeanEstimate(Mean(mean, math.sqrt(var), n, low=0.0))


def _trimmed(counts: np.ndarray, offset: int, n: int) -> Distribution:
    """A distribution without the empty values below its first count."""
    nonzero = np.flatnonzero(counts)
    first = int(nonzero[0]) if nonzero.size else 0
    return Distribution(counts[first:], offset + first, n)


def melee_tree(combat: CombatSpec, layout: CountLayout, counts: np.ndarray, trials: int) -> dict:
    def get(slot):
        return layout.get(counts, f"melee:{slot}")

    contact = int(get("contact")[0])

    def node(n: int) -> dict:
        out = {}
        for key in KEYS:
            if key.startswith("e_"):
                out[key] = _mean(get(key[2:]), n)
            elif key == "ends_in_round":
                out[key] = EndsInRound(get(key), n)
            else:
                out[key] = Probability(int(get(key)[0]), n)
        return out

    dists = {key: _trimmed(get(key), 0, contact) for key in DISTRIBUTIONS[:-1]}
    dists["r1_margin"] = _trimmed(get("r1_margin"), -margin_offset(combat), contact)
    return {"given_contact": node(contact), "unconditional": node(trials), "distributions": dists}


def melee_meta(combat: CombatSpec) -> dict:
    """The fight's static facts for the JSON and the headline: names, rounds, and per unit its models, HP,
    Full Ranks, Rank Bonus, Steadfast at the start and P(caught if it breaks) (exact)."""
    return {"charger": combat.a.name, "target": combat.b.name, "rounds": combat.rounds, "units": start_facts(combat),
            "readings": {"pursue": combat.pursue, "double_one_passes": combat.double_one_passes,
                         "decimated_rally": combat.decimated_rally, "decimated_flee": combat.decimated_flee,
                         "to_hit_table": combat.to_hit_table, "rank_bonus": combat.rank_bonus}}


@literal_text
def melee_figure(result):
    """Outcome bars with 95 % intervals (given contact and over all trials), "at least N HP lost" for both
    units, and the round the fight ends in."""
    from ...output.plots import detached_figure
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    from ...output.plots import at_least_curve

    names = {"a": result.meta["melee_setup"]["charger"], "b": result.meta["melee_setup"]["target"]}
    melee = result.tree["melee"]
    fig = detached_figure(figsize=(13, 11), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.1, 1])
    result.charge_range_panel(top.add_subplot(1, 2, 1))
    ax = top.add_subplot(1, 2, 2)
    keys = [("a_wins", "{a} win the combat"), ("b_wins", "{b} win the combat"),
            ("unresolved", f"still fighting after {result.meta['melee_setup']['rounds']} rounds"),
            ("b_breaks", "{b} break"), ("b_caught", "{b} caught"), ("b_destroyed", "{b} destroyed"),
            ("a_breaks", "{a} break"), ("a_caught", "{a} caught"), ("a_destroyed", "{a} destroyed")]
    y = np.arange(len(keys))[::-1]
    for shift, (node, label) in zip((0.17, -0.17), (("given_contact", "given the charge arrives"),
                                                     ("unconditional", "all trials (the charge may fail)"))):
        est = np.array([melee[node][k].p for k, _ in keys]) * 100
        lo, hi = (np.array([melee[node][k].ci95[j] for k, _ in keys]) * 100 for j in (0, 1))
        ax.errorbar(est, y + shift, xerr=np.clip([est - lo, hi - est], 0, None), fmt="o", capsize=3, label=label)
    ax.set_yticks(y, [text.format(**names) for _, text in keys], fontsize=8)
    ax.set_xlim(-2, 102)
    ax.xaxis.set_major_formatter(PercentFormatter())
    ax.set_xlabel("probability (dot: estimate; bar: 95 % interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("How the combat ends", fontsize=10)
    ax = bottom.add_subplot(1, 2, 1)
    for i, side in enumerate("ab"):
        for key, style in ((f"hp_lost_{side}", "-"), (f"hp_lost_{side}_r1", ":")):
            values, p, lo, hi = melee["distributions"][key].at_least()
            x, curve = at_least_curve(values, p)
            ax.plot(x, curve * 100, drawstyle="steps-pre", linestyle=style, color=f"C{i}",
                    label=f"{names[side]}, {'whole fight' if style == '-' else 'round 1'}")
            ax.errorbar(values, p * 100, yerr=np.clip([p - lo, hi - p], 0, None) * 100, fmt="none", capsize=2,
                        color=f"C{i}", alpha=0.6)
    ax.set_xlabel("HP lost in the combat (given the charge arrives)")
    ax.set_ylabel("chance of losing at least this many")
    ax.yaxis.set_major_formatter(PercentFormatter())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title('"At least N HP lost", both units', fontsize=10)
    ax = bottom.add_subplot(1, 2, 2)
    ends = melee["given_contact"]["ends_in_round"]
    lo, hi = ends.ci95
    ax.bar(np.arange(len(ends.p)), ends.p * 100, yerr=np.clip([ends.p - lo, hi - ends.p], 0, None) * 100,
           capsize=3, color="C2")
    ax.set_xticks(np.arange(len(ends.p)), [str(v) for v in ends.values[:-1]] + ["unresolved"])
    ax.set_xlabel("round the fight ends in (given the charge arrives)")
    ax.set_ylabel("probability (bar: 95 % interval)")
    ax.yaxis.set_major_formatter(PercentFormatter())
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("When the fight ends", fontsize=10)
    width = int(fig.get_figwidth() * 12)
    fig.suptitle("\n".join([textwrap.fill(result.title, width)]
                           + [textwrap.fill(f"note: {n}", width) for n in result.notes]), fontsize=9)
    return fig
