"""Turning T9A counts into the shared result tree (every probability with its Wilson interval)."""
from __future__ import annotations

import math

import numpy as np

from ...run.counts import CountLayout
from ...output.estimates import Distribution, Mean, Probability
from ...output.result import Result
from ...run.runner import RunInfo

from .model import AFTER_FAIL, BIN_MILLI, DICE, MILLI, Model


class Binned(Distribution):
    """Histogram of a length in 0.5" bins (value = the bin's lower edge, inches) whose mean is
    the exact mean from the milli-inch sums, not from bin midpoints."""

    def __init__(self, counts, width: float, exact_mean: Mean):
        super().__init__(counts, 0)
        self.width = width
        self._mean = exact_mean

    @property
    def values(self) -> np.ndarray:
        return np.arange(len(self.counts)) * self.width

    def mean(self) -> Mean:
        return self._mean

    def to_json(self):
        out = super().to_json()
        out["values"] = [float(v) for v in self.values]
        out["bin_width"] = self.width
        return out


def exact_mean(total: int, total_sq: int, n: int) -> Mean:
    """Mean and SD in inches from milli-inch sums (integers, so the mean is exact)."""
    if n == 0:
        return Mean(math.nan, math.nan, 0)
    var = (total_sq * n - total * total) / (n * max(n - 1, 1))
    return Mean(total / n / MILLI, math.sqrt(max(var, 0.0)) / MILLI, n)


class T9AResult(Result):
    def plot(self, detail: bool = False):
        """The exact charge-range curves (:meth:`charge_range_panel`) above the shared figure:
        every probability in percent and the "at least N" curves (charge roll, units in the
        combat, models in contact …), all with 95 % intervals.  With close combat, the combat's own
        figure (:func:`~wargame_odds.analysis.t9a.combat.results.melee_figure`) beside the charge-range curves."""
        from ...intake.arguments import check_flag
        from ...output.labels import sides_of
        from ...output.plots import outcome_figure

        check_flag("detail", detail)
        if "melee" in self.tree:
            from ..combat.results import melee_figure

            return melee_figure(self)

        return outcome_figure(self.system, self.table(), self.at_least_frame(), self.title, notes=self.notes,
                              sides=sides_of(self.to_dict()), lead=self.charge_range_panel, detail=detail)

    def charge_range_panel(self, ax):
        """P(charge range reaches) against the distance to the target: the exact curve of each
        charger's Advance Rate and dice, with the simulated estimate (95 % interval) at its
        scenario distance.  The charge roll is whole inches, so the curve steps at Advance Rate +
        N and holds P(Advance Rate + roll ≥ d) on (Advance Rate + N − 1, Advance Rate + N]."""
        from matplotlib.axes import Axes
        from matplotlib.ticker import MultipleLocator, PercentFormatter

        from ...intake.arguments import check_instance

        from .exact import charge_table

        check_instance("ax", ax, (Axes,), "a matplotlib Axes to draw on")

        for name, spec in self.meta["charger_specs"].items():
            rate = spec["advance_rate"]
            steps = rate + np.arange(0, DICE[spec["dice"]].max_total + 2)
            p = charge_table(steps, [rate], spec["dice"]).p_success.to_numpy()
            x = np.concatenate([[0.0], steps, [steps[-1] + 1]])
            y = np.concatenate([[p[0]], p, [p[-1]]]) * 100
            line, = ax.plot(x, y, drawstyle="steps-pre",
                            label=f"{name}: Advance Rate {rate:g}\", {spec['dice']} (exact)")
            est = self.tree["chargers"][name]["reaches"]
            if spec["distance_to_cover"] is not None:
                lo, hi = est.ci95
                ax.errorbar([spec["distance_to_cover"]], [est.p * 100],
                            yerr=[[(est.p - lo) * 100], [(hi - est.p) * 100]], fmt="o", color=line.get_color(),
                            capsize=3, label=f"{name} at {spec['distance_to_cover']:g}\" (simulated, 95 % interval)")
        ax.set_xlabel("distance to the target (inches)")
        ax.set_ylabel("chance the charge range reaches")
        ax.yaxis.set_major_formatter(PercentFormatter())
        ax.xaxis.set_major_locator(MultipleLocator(2))
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title("Charge range against distance", fontsize=10)


def build_result(model: Model, layout: CountLayout, counts: np.ndarray, info: RunInfo,
                 engine: str) -> T9AResult:
    n = info.trials

    def get(name):
        return layout.get(counts, name)

    def scal(name):
        return int(layout.scalar(counts, name))

    chargers = {}
    for i, c in enumerate(model.chargers):
        p = f"{i}:"
        failed = scal(p + "failed")
        fm_mean = exact_mean(scal(p + "fm_sum"), scal(p + "fm_sumsq"), failed)
        gap_mean = exact_mean(scal(p + "gap_sum"), scal(p + "gap_sumsq"), failed)
        node = {"arrives": Probability(scal(p + "arrives"), n),
                "reaches": Probability(scal(p + "reaches"), n),
                "fails": Probability(failed, n),
                "fails_for_room": Probability(scal(p + "failed_room"), n)}
        if model.reaction == "flee":
            node["catches"] = Probability(scal(p + "catches"), n)
            node["target_gone"] = Probability(scal(p + "target_gone"), n)
            if c.redirect_milli is not None:
                node["redirected"] = Probability(scal(p + "redirected"), n)
                node["redirect_arrives"] = Probability(scal(p + "redirect_arrives"), n)
        if i == model.shoot_at:
            if c.models is not None:
                node["shot_down"] = Probability(scal(p + "shot_down"), n)
            node["unsaved_wounds"] = Distribution(get(p + "unsaved"), 0, n)
        for flag in AFTER_FAIL[model.after_fail]:
            node[flag] = Probability(failed, n)
        node["failed_move_mean"] = fm_mean
        node["gap_after_fail_mean"] = gap_mean
        node["charge_roll"] = Distribution(get(p + "roll"), 0)
        node["failed_move"] = Binned(get(p + "fm_hist"), BIN_MILLI / MILLI, fm_mean)
        node["gap_after_fail"] = Binned(get(p + "gap_hist"), BIN_MILLI / MILLI, gap_mean)
        chargers[c.name] = node
    tree = {"chargers": chargers}
    target = {}
    if model.reaction == "flee":
        target["destroyed"] = Probability(scal("target_destroyed"), n)
        target["flee_distance"] = Distribution(get("flee_total"), 0, n)
    combat = {"units_in_combat": Distribution(get("units"), 0, n)}
    if model.placements:
        models = Distribution(get("models"), 0, n)
        combat["models_in_contact"] = models
        target["rotated"] = Probability(scal("rotated"), n)
        tree["placements"] = {p.name: Probability(int(k), n)
                              for p, k in zip(model.placements, get("placement"))}
        tree["placements"]["(none)"] = Probability(scal("no_placement"), n)
        tree["models_in_contact_mean"] = models.mean()
    tree["combat"] = combat
    if target:
        tree["target"] = target
    notes = list(model.notes)
    notes.append('failed-charge move and gap after a failed charge: given a failed charge, in 0.5" bins '
                 '(lower edges), exact means from sums in 1/1000"')
    if engine != "kernel":
        notes.append(f"engine: {engine}")
    specs = {}
    for c in model.chargers:
        cover = None if model.reaction == "flee" else c.distance_milli / MILLI
        specs[c.name] = {"advance_rate": c.advance_milli / MILLI, "dice": c.dice_name,
                         "distance_to_cover": cover}
    meta = {"rules": {"version": model.version, "placement_order": model.placement_order,
                      "after_fail": model.after_fail,
                      "failed_move_spacing": model.spacing_milli / MILLI,
                      "flee_redirect": model.flee_redirect}, "engine": engine,
            "target_name": model.target_name, "reaction": model.reaction,
            "charger_specs": specs}
    if model.combat is not None:
        from ..combat.results import melee_meta, melee_tree

        tree["melee"] = melee_tree(model.combat, layout, counts, n)
        meta["melee_setup"] = melee_meta(model.combat)
    return T9AResult(system="t9a", title=model.title, info=info, tree=tree, notes=notes, meta=meta)
