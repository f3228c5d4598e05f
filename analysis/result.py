"""The result shape shared by every rule system.

A result holds a tree of estimates (nested dicts whose leaves are :class:`Probability`,
:class:`Mean` or :class:`Distribution`) plus the run's facts.  Every system offers the same
``table() / distributions() / cumulative() / plot() / to_json() / _repr_html_``.
"""
from __future__ import annotations

import html
import json
import textwrap
from importlib.metadata import PackageNotFoundError, version

from typing import TYPE_CHECKING

import numpy as np

from .estimates import Distribution, Mean, Probability
from .runner import RunInfo

if TYPE_CHECKING:  # pandas is imported where a table is built: a plain CLI run need not load it
    import pandas as pd

Leaf = Probability | Mean | Distribution


def package_version() -> str:
    try:
        return version("wargame-odds")
    except PackageNotFoundError:  # running from a source tree
        return "unknown"


def _walk(tree: dict, path=()):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _walk(value, path + (key,))
        else:
            yield path + (key,), value


def _split(path):
    section = path[0]
    quantity = path[-1]
    entity = "/".join(path[1:-1])
    return section, entity, quantity


def _json_tree(tree: dict) -> dict:
    return {k: _json_tree(v) if isinstance(v, dict) else v.to_json() for k, v in tree.items()}


class Result:
    """Estimates of one simulated scenario, with 95 % intervals throughout."""

    def __init__(self, *, system: str, title: str, info: RunInfo, tree: dict,
                 notes: list[str] | None = None, meta: dict | None = None):
        self.system = system
        self.title = title
        self.info = info
        self.tree = tree
        self.notes = list(notes or [])
        self.meta = dict(meta or {})

    # -- access -------------------------------------------------------------------------------
    @property
    def trials(self) -> int:
        return self.info.trials

    @property
    def seed(self) -> int:
        return self.info.seed

    def __getitem__(self, path):
        """``result["sides", "attacker_wins"]`` returns that estimate (or sub-tree)."""
        node = self.tree
        for key in (path if isinstance(path, tuple) else (path,)):
            node = node[key]
        return node

    def leaves(self):
        """(path, estimate) pairs in tree order."""
        return list(_walk(self.tree))

    # -- tables ---------------------------------------------------------------------------------
    def table(self) -> pd.DataFrame:
        """Probabilities and means with their 95 % intervals, one row each."""
        import pandas as pd

        rows = []
        for path, leaf in self.leaves():
            if isinstance(leaf, Distribution):
                continue
            section, entity, quantity = _split(path)
            lo, hi = leaf.ci95
            kind = "probability" if isinstance(leaf, Probability) else "mean"
            value = leaf.p if isinstance(leaf, Probability) else leaf.value
            rows.append({"section": section, "entity": entity, "quantity": quantity, "kind": kind,
                         "estimate": value, "ci95_lo": lo, "ci95_hi": hi})
        return pd.DataFrame(rows, columns=["section", "entity", "quantity", "kind", "estimate",
                                           "ci95_lo", "ci95_hi"])

    def distributions(self) -> pd.DataFrame:
        """Every distribution in long form: one row per value with P and its interval."""
        import pandas as pd

        frames = []
        for path, leaf in self.leaves():
            if not isinstance(leaf, Distribution):
                continue
            section, entity, quantity = _split(path)
            lo, hi = leaf.ci95
            frames.append(pd.DataFrame({"section": section, "entity": entity, "quantity": quantity,
                                        "value": leaf.values, "p": leaf.p, "ci95_lo": lo,
                                        "ci95_hi": hi}))
        if not frames:
            return pd.DataFrame(columns=["section", "entity", "quantity", "value", "p", "ci95_lo",
                                         "ci95_hi"])
        return pd.concat(frames, ignore_index=True)

    def cumulative(self, *path, kind: str = "at_least") -> pd.DataFrame:
        """"At least N" (or ``kind="at_most"``) table of one distribution, with intervals."""
        import pandas as pd

        leaf = self[tuple(path)]
        if not isinstance(leaf, Distribution):
            raise TypeError(f"{'/'.join(path)} is not a distribution")
        if kind not in ("at_least", "at_most"):
            raise ValueError("kind must be 'at_least' or 'at_most'")
        values, p, lo, hi = leaf.at_least() if kind == "at_least" else leaf.at_most()
        return pd.DataFrame({"value": values, "p": p, "ci95_lo": lo, "ci95_hi": hi})

    # -- output ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {"system": self.system, "title": self.title, "trials": self.info.trials,
               "seed": self.info.seed}
        out.update(self.meta)
        out.update(_json_tree(self.tree))
        run = {"version": package_version()}  # no chunk count: the JSON must not depend on the chunk size (issue §6)
        if self.info.precision is not None:
            run.update(precision=self.info.precision, precision_reached=self.info.precision_reached,
                       achieved_half_width=self.info.achieved_half_width)
        out["run"] = run
        out["notes"] = self.notes
        return out

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON: a quantity with no data (NaN, e.g. a mean over no trials) becomes null."""
        return json.dumps(finite_json(self.to_dict()), indent=indent, allow_nan=False, default=_json_default)

    def _header(self) -> str:
        line = f"{self.title}  [{self.system}]  trials={self.info.trials:,}  seed={self.info.seed}"
        if self.info.precision is not None:
            state = "reached" if self.info.precision_reached else "NOT reached (trial cap)"
            line += f"  precision ±{self.info.precision} {state}"
        return line

    def __str__(self) -> str:
        table = self.table()
        shown = table.assign(
            estimate=table.estimate.map(lambda v: f"{v:.4f}"),
            ci95=[f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(table.ci95_lo, table.ci95_hi)],
        )[["section", "entity", "quantity", "estimate", "ci95"]]
        lines = [self._header(), shown.to_string(index=False)]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        table = self.table()
        notes = "".join(f"<p><em>note:</em> {html.escape(n)}</p>" for n in self.notes)
        return (f"<h4>{html.escape(self._header())}</h4>"
                + table.to_html(index=False, float_format=lambda v: f"{v:.4f}") + notes)

    def plot(self, max_distributions: int = 4):
        """Probabilities with 95 % error bars, and the first distributions as bar charts."""
        import matplotlib.pyplot as plt

        table = self.table()
        probs = table[table.kind == "probability"].reset_index(drop=True)
        dists = [(p, leaf) for p, leaf in self.leaves()
                 if isinstance(leaf, Distribution) and np.count_nonzero(leaf.counts) > 1]
        dists = dists[:max_distributions]
        ncols = 1 + len(dists)
        fig, axes = plt.subplots(1, ncols, figsize=(6 + 3.2 * len(dists), max(3.0, 0.28 * len(probs) + 1.2)),
                                 squeeze=False)
        ax = axes[0, 0]
        labels = [" · ".join(part for part in (r.section, r.entity, r.quantity) if part)
                  for r in probs.itertuples()]
        y = np.arange(len(probs))[::-1]
        xerr = np.clip([probs.estimate - probs.ci95_lo, probs.ci95_hi - probs.estimate], 0, None)
        colours = {section: f"C{i % 10}" for i, section in enumerate(dict.fromkeys(probs.section))}
        for section, colour in colours.items():
            rows = (probs.section == section).to_numpy()
            ax.errorbar(probs.estimate[rows], y[rows], xerr=xerr[:, rows], fmt="o", capsize=3, color=colour)
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("probability (95 % interval)")
        ax.grid(axis="x", alpha=0.3)
        for ax, (path, leaf) in zip(axes[0, 1:], dists):
            lo, hi = leaf.ci95
            ax.bar(leaf.values, leaf.p, yerr=np.clip([leaf.p - lo, hi - leaf.p], 0, None), capsize=2, alpha=0.8)
            ax.set_title(" · ".join(part for part in _split(path) if part), fontsize=9)
            ax.set_ylabel("probability")
        width = int(fig.get_figwidth() * 14)
        heading = "\n".join([self.title] + [textwrap.fill(f"note: {n}", width) for n in self.notes])
        fig.suptitle(heading, fontsize=9)
        fig.tight_layout()
        return fig


def finite_json(value):
    """The same data with NaN and infinities (an estimate with nothing behind it) as None: strict JSON."""
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return None
    return value


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")

