"""Result objects of the decision tools: one shape (``table / plot / to_json / _repr_html_``).

Every table is tidy pandas, one row per cell and quantity, with ``estimate`` (or ``p``) and its
95 % interval in ``ci95_lo`` / ``ci95_hi``.
"""
from __future__ import annotations

import html
import json
import math

import numpy as np
import pandas as pd

from ..labels import estimate_text, number, percent, quantity_label
from ..result import package_version


def _clean(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


def records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


class DecisionResult:
    """A table of estimates with 95 % intervals plus the facts of the runs behind it."""

    kind = "decision"

    def __init__(self, *, system: str, trials: int, seed: int, frame: pd.DataFrame, title: str = "",
                 meta: dict | None = None, notes: list[str] | None = None):
        self.system = system
        self.trials = trials
        self.seed = seed
        self.frame = frame
        self.title = title or self.kind
        self.meta = dict(meta or {})
        self.notes = list(dict.fromkeys(notes or []))

    def table(self) -> pd.DataFrame:
        return self.frame.copy()

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "system": self.system, "title": self.title, "trials": self.trials,
               "seed": self.seed}
        out.update({k: _clean(v) for k, v in self.meta.items()})
        out["rows"] = records(self.table())
        out["run"] = {"version": package_version()}
        out["notes"] = self.notes
        return out

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_csv(self) -> str:
        return self.table().to_csv(index=False)

    def _header(self) -> str:
        return f"{self.title}  [{self.system}, {self.kind}]  trials={self.trials:,} per cell  seed={self.seed}"

    def _shown(self) -> pd.DataFrame:
        return self.table()

    def _sections(self) -> list[str]:
        """Text after the main table (before the notes)."""
        return []

    def __str__(self) -> str:
        with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 40):
            lines = [self._header(), self._shown().to_string(index=False, float_format=lambda v: f"{v:.4f}")]
            lines += self._sections()
        return "\n".join(lines + [f"note: {n}" for n in self.notes])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from ..headline import decision_sentences

        notes = "".join(f"<p><em>note:</em> {html.escape(n)}</p>" for n in self.notes)
        lines = "".join(f"<li>{html.escape(line)}</li>" for line in decision_sentences(self))
        return (f"<h4>{html.escape(self._header())}</h4>" + (f"<ul>{lines}</ul>" if lines else "")
                + self._shown().to_html(index=False, float_format=lambda v: f"{v:.4f}") + notes)


def _select(frame: pd.DataFrame, quantity: str, entity: str | None) -> pd.DataFrame:
    rows = frame[frame.quantity == quantity]
    if rows.empty:
        raise ValueError(f"no quantity {quantity!r}; allowed: {', '.join(sorted(frame.quantity.unique()))}")
    if entity is None:
        entities = rows.entity.unique()
        if len(entities) > 1 and "side" in rows:
            raise ValueError(f"{quantity!r} exists for several entities; pass entity= "
                             "(a formation name, or 'attacker' / 'defender' for that side's first formation)")
        return rows
    if "side" in rows and entity in ("attacker", "defender"):
        return rows[rows.side == entity].groupby(["attacker", "defender"], sort=False).head(1)
    return rows[rows.entity == entity]


class MatrixResult(DecisionResult):
    """Every attacker × defender cell: all of its reported quantities, tidy."""

    kind = "matrix"

    def __init__(self, *, cells: dict, attackers: list[str], defenders: list[str], **kw):
        super().__init__(**kw)
        self.cells = cells  # (attacker index, defender index) -> Result
        self.attackers = attackers
        self.defenders = defenders

    def pivot(self, quantity: str = "attacker_wins", entity: str | None = None,
              column: str = "estimate") -> pd.DataFrame:
        """A wide attacker × defender table of one quantity (``column``: estimate, ci95_lo, ci95_hi)."""
        rows = _select(self.frame, quantity, entity)
        wide = rows.pivot(index="attacker", columns="defender", values=column)
        return wide.reindex(index=self.attackers, columns=self.defenders)

    def _shown(self):
        """The attacker × defender grid of P(attacker wins) in percent with its 95 % interval."""
        rows = self.frame[self.frame.quantity == "attacker_wins"]
        text = rows.assign(shown=[percent(p, lo, hi) for p, lo, hi in zip(rows.estimate, rows.ci95_lo, rows.ci95_hi)])
        grid = text.pivot(index="attacker", columns="defender", values="shown")
        grid = grid.reindex(index=self.attackers, columns=self.defenders).reset_index()
        grid.columns.name = None
        return grid.rename(columns={"attacker": "P(attacker wins): attacker \\ defender"})

    def plot(self, quantity: str = "attacker_wins", entity: str | None = None):
        """Heatmap of one quantity, each cell annotated with its estimate and 95 % interval."""
        import matplotlib.pyplot as plt

        est = self.pivot(quantity, entity)
        lo = self.pivot(quantity, entity, "ci95_lo")
        hi = self.pivot(quantity, entity, "ci95_hi")
        fig, ax = plt.subplots(figsize=(2.2 + 1.6 * len(self.defenders), 1.4 + 0.9 * len(self.attackers)))
        is_prob = self.frame[self.frame.quantity == quantity].kind.iloc[0] == "probability"
        image = ax.imshow(est.to_numpy(float), cmap="RdYlGn" if is_prob else "viridis",
                          vmin=0 if is_prob else None, vmax=1 if is_prob else None, aspect="auto")
        for i in range(len(self.attackers)):
            for j in range(len(self.defenders)):
                text = estimate_text("probability" if is_prob else "mean", est.iat[i, j], lo.iat[i, j], hi.iat[i, j])
                ax.text(j, i, text.replace(" [", "\n["), ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(self.defenders)), self.defenders, rotation=30, ha="right")
        ax.set_yticks(range(len(self.attackers)), self.attackers)
        ax.set_xlabel("defender")
        ax.set_ylabel("attacker")
        label = quantity_label(self.system, quantity) + (f" ({entity})" if entity else "")
        fig.colorbar(image, ax=ax, label=label + (" (probability)" if is_prob else ""))
        ax.set_title(f"{label}: estimate [95 % interval], {self.trials:,} trials per cell", fontsize=9)
        fig.tight_layout()
        return fig


class SweepResult(DecisionResult):
    """One row per swept value and quantity."""

    kind = "sweep"

    def __init__(self, *, cells: list, field: str, values: list, **kw):
        super().__init__(**kw)
        self.cells = cells  # Result per value, in order
        self.field = field
        self.values = values

    def _headline(self) -> pd.DataFrame:
        """The probabilities the headline states: Epic's side level, GdB's summary (contact, stopped, ...),
        else those of the first section."""
        probs = self.frame[self.frame.kind == "probability"]
        if probs.empty:
            return self.frame
        section = next((s for s in ("sides", "summary") if (probs.section == s).any()), probs.section.iloc[0])
        return probs[probs.section == section]

    def _shown(self):
        """Value → probability: one row per value, one column per :meth:`_headline` probability, in percent
        with the 95 % interval."""
        probs = self._headline()
        if probs is self.frame:  # no probability to show
            return probs
        label = [quantity_label(self.system, q) if not e else f"{e}: {quantity_label(self.system, q)}"
                 for e, q in zip(probs.entity, probs.quantity)]
        text = probs.assign(label=label, shown=[percent(p, lo, hi) for p, lo, hi in
                                                zip(probs.estimate, probs.ci95_lo, probs.ci95_hi)])
        wide = text.pivot(index="cell", columns="label", values="shown")[list(dict.fromkeys(label))]
        wide.insert(0, self.field, [self.values[k] for k in wide.index])
        wide.columns.name = None
        return wide.reset_index(drop=True)

    def plot(self, quantities=None, entity: str | None = None):
        """Each quantity against the swept value, with its 95 % interval as a band."""
        import matplotlib.pyplot as plt

        if quantities is None:
            quantities = list(self._headline().quantity.unique())[:4]
        elif isinstance(quantities, str):
            quantities = [quantities]
        from matplotlib.ticker import PercentFormatter

        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values)
        x = np.asarray(self.values, float) if numeric else np.arange(len(self.values))
        selected = [_select(self.frame, q, entity).groupby("cell", sort=True).head(1) for q in quantities]
        as_percent = all((rows.kind == "probability").all() for rows in selected)
        scale = 100 if as_percent else 1
        fig, ax = plt.subplots(figsize=(7, 4))
        for q, rows in zip(quantities, selected):
            label = quantity_label(self.system, q)
            ax.plot(x, rows.estimate * scale, marker="o", label=label if entity is None else f"{entity}: {label}")
            ax.fill_between(x, rows.ci95_lo * scale, rows.ci95_hi * scale, alpha=0.25)
        if not numeric:
            ax.set_xticks(x, [str(v) for v in self.values])
        ax.set_xlabel(self.field)
        if as_percent:
            ax.yaxis.set_major_formatter(PercentFormatter())
        ax.set_ylabel(f"{'probability' if as_percent else 'estimate'} (band: 95 % interval)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(f"{self.title}: sweep of {self.field}", fontsize=10)
        fig.tight_layout()
        return fig


class CompareResult(DecisionResult):
    """P(A) − P(B) per opponent and over the meta, paired by common random numbers; with points, the
    points destroyed, lost and their swing of each option (``_a`` / ``_b`` columns)."""

    kind = "compare"
    #: Columns about the estimator, not the answer: printed in their own section (all are in --json).
    ESTIMATOR_COLUMNS = ("independent_ci95_lo", "independent_ci95_hi", "variance_ratio", "trials_saved")

    def _shown(self):
        """Per opponent and the meta: each option's chance to win and their difference, in percent
        with the 95 % interval (the points trade follows in its own table)."""
        t, a, b = self.frame, self.meta["option_a"], self.meta["option_b"]
        return pd.DataFrame({
            "opponent": t.opponent, "weight": t.weight.map(lambda w: f"{w:.2f}"),
            f"{a} wins": _texts(t, "p_a", "p_a_lo", "p_a_hi"), f"{b} wins": _texts(t, "p_b", "p_b_lo", "p_b_hi"),
            f"{a} − {b}": _texts(t, "difference", "ci95_lo", "ci95_hi", "percentage points")})

    def _sections(self) -> list[str]:
        out = []
        if "points_swing_a" in self.frame:
            a, b = self.meta["option_a"], self.meta["option_b"]
            rows = [self.frame.assign(option=name, **{label: _points_texts(self.frame, column + suffix)
                                                      for column, label in POINTS_LABELS.items()})
                    for name, suffix in ((a, "_a"), (b, "_b"))]
            table = pd.concat(rows)[["opponent", "option", *POINTS_LABELS.values()]]
            out += ["", "Points trade (means, 95 % interval)", table.to_string(index=False)]
        columns = [c for c in self.ESTIMATOR_COLUMNS if c in self.frame]
        if not columns:
            return out
        method = self.meta.get("method", "")
        return out + ["", f"estimator ({method}): variance_ratio = how many times the trials independent runs would "
                          "need for the same precision; independent_ci95 = their interval with these trials",
                      self.frame[["opponent", *columns]].to_string(index=False, float_format=lambda v: f"{v:.4f}")]

    def __init__(self, *, option_results: dict, batches: pd.DataFrame | None = None, **kw):
        super().__init__(**kw)
        self.option_results = option_results  # (option label, opponent index) -> Result
        self.batches = batches  # batch means: P̂A − P̂B of every batch against every opponent

    def plot(self):
        """Left: P(A wins) and P(B wins) against each opponent and the meta, in percent with their 95 %
        error bars.  Right: the difference A − B in percentage points, with its paired interval (and,
        when paired, that of independent runs with the same trials)."""
        import matplotlib.pyplot as plt
        from matplotlib.ticker import PercentFormatter

        t = self.frame
        a, b = self.meta["option_a"], self.meta["option_b"]
        y = np.arange(len(t))[::-1]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 1.6 + 0.5 * len(t)), sharey=True)
        for shift, (name, col) in zip((0.12, -0.12), ((a, "p_a"), (b, "p_b"))):
            p, lo, hi = (t[c].to_numpy(float) * 100 for c in (col, f"{col}_lo", f"{col}_hi"))
            left.errorbar(p, y + shift, xerr=np.clip([p - lo, hi - p], 0, None), fmt="o", capsize=3,
                          label=f"{name} wins")
        left.set_yticks(y, t.opponent)
        left.set_xlim(-2, 102)
        left.xaxis.set_major_formatter(PercentFormatter())
        left.set_xlabel(f"chance to win as the {self.meta.get('side', 'attacker')} (bar: 95 % interval)")
        left.legend(fontsize=8)
        d, lo, hi = (t[c].to_numpy(float) * 100 for c in ("difference", "ci95_lo", "ci95_hi"))
        paired = self.meta.get("paired")
        right.errorbar(d, y + 0.12, xerr=np.clip([d - lo, hi - d], 0, None), fmt="o", capsize=3,
                       label="paired 95 % interval" if paired else "95 % interval")
        if paired:
            ilo, ihi = (t[c].to_numpy(float) * 100 for c in ("independent_ci95_lo", "independent_ci95_hi"))
            right.errorbar(d, y - 0.12, xerr=np.clip([d - ilo, ihi - d], 0, None), fmt="s", capsize=3, alpha=0.6,
                           label="independent runs, same trials")
        right.axvline(0, color="grey", lw=0.8)
        right.set_xlabel(f"difference: {a} − {b}, percentage points")
        right.legend(fontsize=8)
        for ax in (left, right):
            ax.grid(axis="x", alpha=0.3)
        fig.suptitle(f"{self.title}: {self.trials:,} trials per option and opponent", fontsize=10)
        fig.tight_layout()
        return fig


class RankResult(DecisionResult):
    """One score per option against the meta, with points efficiency, best first."""

    kind = "rank"

    def __init__(self, *, cells: pd.DataFrame, **kw):
        super().__init__(**kw)
        self.cells = cells  # option × opponent estimates with their intervals and weights

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["cells"] = records(self.cells)
        return out

    def _shown(self):
        """Best first: the option's points, its meta score (weighted chance to win) and chance per 100
        points in percent, and its points trade, each with the 95 % interval."""
        t = self.frame
        shown = pd.DataFrame({"rank": t["rank"], "option": t.option,
                              "points": t.points.map(lambda v: "n/a" if v != v else f"{v:g}"),
                              "chance to win (meta)": _texts(t, "score", "ci95_lo", "ci95_hi"),
                              "chance per 100 points": _texts(t, "per_100_points", "per_100_points_lo",
                                                              "per_100_points_hi")})
        if "points_swing" in t:
            for column, label in POINTS_LABELS.items():
                shown[label] = _points_texts(t, column)
        return shown

    def plot(self):
        """The meta score (weighted chance to win) in percent and, where every option has points, the
        chance to win per 100 points, each with its 95 % error bar."""
        import matplotlib.pyplot as plt
        from matplotlib.ticker import PercentFormatter

        t = self.frame
        y = np.arange(len(t))[::-1]
        has_points = t.per_100_points.notna().any()
        fig, axes = plt.subplots(1, 2 if has_points else 1, figsize=(10 if has_points else 6, 1.4 + 0.45 * len(t)),
                                 squeeze=False, sharey=True)
        side = self.meta.get("side", "attacker")
        panels = [("score", "ci95_lo", "ci95_hi", f"meta score: weighted chance to win as the {side}")]
        if has_points:
            panels.append(("per_100_points", "per_100_points_lo", "per_100_points_hi",
                           "chance to win per 100 points"))
        for ax, (col, lo_col, hi_col, label) in zip(axes[0], panels):
            p, lo, hi = (t[c].to_numpy(float) * 100 for c in (col, lo_col, hi_col))
            ax.errorbar(p, y, xerr=np.clip([p - lo, hi - p], 0, None), fmt="o", capsize=3)
            ax.set_yticks(y, t.option)
            ax.xaxis.set_major_formatter(PercentFormatter())
            ax.set_xlabel(f"{label} (bar: 95 % interval)")
            ax.grid(axis="x", alpha=0.3)
        axes[0, 0].set_xlim(-2, 102)
        fig.suptitle(f"{self.title}: {self.trials:,} trials per matchup", fontsize=10)
        fig.tight_layout()
        return fig


class CumulativeResult(DecisionResult):
    """"At least N" and "at most N" probabilities of distributions, with intervals."""

    kind = "cumulative"

    def plot(self, quantity: str | None = None, entity: str | None = None, direction: str = "at_least"):
        """Step plot of P(X ≥ N) (or ≤) in percent with its interval band; one line per cell when
        there are several.  X is a whole number, so P(X ≥ x) holds P(X ≥ N) on (N − 1, N] and
        P(X ≤ x) holds P(X ≤ N) on [N, N + 1): the steps sit at the whole numbers."""
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator, PercentFormatter

        t = self.frame[self.frame.direction == direction]
        quantity = quantity or t.quantity.iloc[0]
        t = t[t.quantity == quantity]
        if entity is not None:
            t = t[t.entity == entity]
        where = "pre" if direction == "at_least" else "post"
        fig, ax = plt.subplots(figsize=(7, 4))
        keys = [c for c in ("cell", "entity") if c in t]
        for key, rows in t.groupby(keys, sort=False):
            label = " / ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)) if k != "")
            ax.step(rows.value, rows.p * 100, where=where, label=label or quantity)
            ax.fill_between(rows.value, rows.ci95_lo * 100, rows.ci95_hi * 100, step=where, alpha=0.2)
        ax.set_xlabel(quantity.replace("_", " "))
        ax.set_ylabel(f"chance of {'at least' if direction == 'at_least' else 'at most'} this value (95 % band)")
        ax.yaxis.set_major_formatter(PercentFormatter())
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(self.title, fontsize=10)
        fig.tight_layout()
        return fig


#: The points-trade columns and how the text tables name them.
POINTS_LABELS = {"points_destroyed": "points destroyed", "points_lost": "points lost",
                 "points_swing": "points swing (destroyed − lost)"}


def _texts(frame: pd.DataFrame, column: str, lo: str, hi: str, unit: str = "%") -> list[str]:
    """A probability column as "58.1 % [57.9, 58.3]" texts."""
    return [percent(p, a, b, unit) for p, a, b in zip(frame[column], frame[lo], frame[hi])]


def _points_texts(frame: pd.DataFrame, column: str) -> list[str]:
    """A points column (mean with ``_lo`` / ``_hi``) as "64.22 [50.65, 75.51]" texts."""
    return [number(m, a, b) for m, a, b in zip(frame[column], frame[f"{column}_lo"], frame[f"{column}_hi"])]


class ThresholdResult(DecisionResult):
    """The smallest (or largest) value of a field whose probability reaches a target, every value's
    estimate with its interval, and how sure the answer is."""

    kind = "threshold"

    def __init__(self, *, field: str, quantity: str, target: float, direction: str, largest: bool,
                 points: list[dict], **kw):
        self.field, self.quantity, self.target = field, quantity, target
        self.direction, self.largest = direction, largest
        self.points = sorted(points, key=lambda point: point["value"])
        frame = pd.DataFrame({"value": [pt["value"] for pt in self.points], "p": [pt["p"] for pt in self.points],
                              "ci95_lo": [pt["ci95"][0] for pt in self.points],
                              "ci95_hi": [pt["ci95"][1] for pt in self.points],
                              "reaches": [self._reaches(pt["p"]) for pt in self.points]})
        super().__init__(frame=frame, **kw)
        order = self.points[::-1] if largest else self.points
        hit = next((i for i, pt in enumerate(order) if self._reaches(pt["p"])), None)
        self.answer = order[hit] if hit is not None else None
        self.neighbour = order[hit - 1] if hit else None  # the value tried just before, which does not reach
        self.value = self.answer["value"] if self.answer else None
        self.reached = self.answer is not None

    def _reaches(self, p: float) -> bool:
        return p >= self.target if self.direction == "at_least" else p <= self.target

    def _clears(self, point: dict, reaching: bool) -> bool:
        """Whether ``point``'s whole interval lies on the reaching (or the other) side of the target."""
        lo, hi = point["ci95"]
        above, below = lo >= self.target, hi < self.target
        if self.direction == "at_most":
            above, below = hi <= self.target, lo > self.target
        return above if reaching else below

    @property
    def confident(self) -> bool:
        """The answer's interval clears the target and so does the neighbour's (on the other side)."""
        return self.reached and self._clears(self.answer, True) and (
            self.neighbour is None or self._clears(self.neighbour, False))

    def statement(self) -> str:
        """The answer in words, with both intervals and how sure it is."""
        goal = f"{'at least' if self.direction == 'at_least' else 'at most'} {100 * self.target:g} %"
        what = f"{self.quantity} {goal}"
        shown = lambda pt: f"{self.field} = {pt['value']}: {percent(pt['p'], *pt['ci95'])}"  # noqa: E731
        if not self.reached:
            best = max(self.points, key=lambda pt: pt["p"] if self.direction == "at_least" else -pt["p"])
            return (f"No value of {self.field} from {self.points[0]['value']} to {self.points[-1]['value']} gives "
                    f"{what}; the closest is {shown(best)}.")
        which = "largest" if self.largest else "smallest"
        text = f"{which.capitalize()} value that gives {what}: {shown(self.answer)}"
        if self.neighbour is not None:
            text += f"; {shown(self.neighbour)} does not"
        else:
            text += f" (the {'largest' if self.largest else 'smallest'} value tried)"
        if self.confident:
            return text + ". Every interval shown clears the target (95 % confidence each)."
        return text + (". An interval shown includes the target, so the answer is not sure at 95 %: "
                       "run more trials.")

    def to_dict(self) -> dict:
        out = {"value": _clean(self.value), "reached": self.reached, "confident": self.confident,
               "points": [{"value": _clean(pt["value"]), "p": _clean(pt["p"]),
                           "ci95": [_clean(x) for x in pt["ci95"]]} for pt in self.points],
               "statement": self.statement(), "field": self.field, "quantity": self.quantity,
               "target": self.target, "direction": self.direction, "search": "largest" if self.largest else "smallest"}
        base = super().to_dict()
        base.pop("rows")
        out.update({k: v for k, v in base.items() if k not in out})
        return out

    def __str__(self) -> str:
        rows = [f"{self.field} = {pt['value']}: {percent(pt['p'], *pt['ci95'])}"
                + ("  reaches" if self._reaches(pt["p"]) else "") for pt in self.points]
        return "\n".join([self.statement(), "", self._header(), *rows] + [f"note: {n}" for n in self.notes])

    def plot(self):
        """The probability against the value, 95 % error bars, the target as a line."""
        import matplotlib.pyplot as plt

        t = self.frame
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in t.value)
        x = t.value.to_numpy(float) if numeric else np.arange(len(t))
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.errorbar(x, 100 * t.p, yerr=[100 * (t.p - t.ci95_lo), 100 * (t.ci95_hi - t.p)], fmt="o-", capsize=3)
        ax.axhline(100 * self.target, color="grey", ls="--", lw=1, label=f"target {100 * self.target:g} %")
        if not numeric:
            ax.set_xticks(x, [str(v) for v in t.value])
        ax.set_xlabel(self.field)
        ax.set_ylabel(f"{self.quantity} (%, 95 % interval)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(self.title, fontsize=10)
        fig.tight_layout()
        return fig
