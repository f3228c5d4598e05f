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

from ..output.labels import estimate_text, number, percent, quantity_label
from ..output.plots import literal_text
from ..output.result import package_version
from ..intake.user_text import csv_text, printable


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

    def headline(self) -> list[str]:
        """The plain sentences the command line prints first (who wins each matchup, how the options compare …)."""
        from ..output.headline import decision_sentences

        return decision_sentences(self)

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
        return csv_text(self.table())

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
        return printable("\n".join(lines + [f"note: {n}" for n in self.notes]))

    __repr__ = __str__

    def html_parts(self) -> tuple[str, str]:
        """The answer as HTML in two parts, as :meth:`wargame_odds.analysis.output.result.Result.html_parts`: the lead
        (title, its sentences, the notes) and the fold (the full table, collapsed).  Control and bidi characters as
        escapes."""
        from ..output.headline import decision_sentences
        from ..output.result import fold

        notes = "".join(f"<p><em>note:</em> {html.escape(n)}</p>" for n in self.notes)
        details = self.meta.get("method_reason")  # statistics for those who ask: behind the fold
        lines = "".join(f"<li>{html.escape(line)}</li>" for line in decision_sentences(self) if line != details)
        return (printable(f"<h4>{html.escape(self._header())}</h4>" + (f"<ul>{lines}</ul>" if lines else "") + notes),
                printable(fold(f"<p>{html.escape(details)}</p>" if details else "",
                               self._shown().to_html(index=False, float_format=lambda v: f"{v:.4f}"))))

    def _repr_html_(self) -> str:
        """Notebooks: the sentences first, then the full table behind a fold (:meth:`html_parts`)."""
        return "".join(self.html_parts())


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

    def __init__(self, *, cells: dict, attackers: list[str], defenders: list[str], trades: pd.DataFrame | None = None,
                 **kw):
        super().__init__(**kw)
        self.cells = cells  # (attacker index, defender index) -> Result
        self.attackers = attackers
        self.defenders = defenders
        self.trades = trades if trades is not None else pd.DataFrame()  # per cell: units left, kills, damage

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["trades"] = records(self.trades)
        return out

    def _sections(self) -> list[str]:
        """What is left on both sides of every matchup, and the attacker's kills per 100 points."""
        if self.trades.empty:
            return []
        return ["", "What is left and what it cost (means after the end phase, 95 % interval; the attacker's view)",
                _trade_table(self.trades, ["attacker", "defender"]).to_string(index=False)]

    def _win(self) -> tuple[str, str | None]:
        """(quantity, entity) of P(attacker wins) in this system's results (Epic: sides.attacker_wins; 9th Age:
        melee.unconditional.a_wins)."""
        from .systems import SYSTEMS

        if self.meta.get("quantity"):  # a plan without an assault: the plans' common score
            return self.meta["quantity"].split("/")[-1], None
        path = SYSTEMS[self.system].win_path("attacker")
        return path[-1], "/".join(path[1:-1]) or None

    def pivot(self, quantity: str | None = None, entity: str | None = None,
              column: str = "estimate") -> pd.DataFrame:
        """A wide attacker × defender table of one quantity (default P(attacker wins); ``column``: estimate,
        ci95_lo, ci95_hi)."""
        if quantity is None:
            quantity, entity = self._win()
        rows = _select(self.frame, quantity, entity)
        wide = rows.pivot(index="attacker", columns="defender", values=column)
        return wide.reindex(index=self.attackers, columns=self.defenders)

    def _shown(self):
        """The attacker × defender grid of P(attacker wins) in percent with its 95 % interval."""
        rows = _select(self.frame, *self._win())
        text = rows.assign(shown=[percent(p, lo, hi) for p, lo, hi in zip(rows.estimate, rows.ci95_lo, rows.ci95_hi)])
        grid = text.pivot(index="attacker", columns="defender", values="shown")
        grid = grid.reindex(index=self.attackers, columns=self.defenders).reset_index()
        grid.columns.name = None
        what = "P(attacker wins)" if not self.meta.get("quantity") else "P(enemy broken or destroyed)"
        plans = self.meta.get("plans") or {}
        if any(plans.values()):
            grid.insert(1, "plan", [plans.get(a) or "" for a in grid.attacker])
        return grid.rename(columns={"attacker": f"{what}: attacker \\ defender"})

    @literal_text
    def plot(self, quantity: str | None = None, entity: str | None = None):
        """Heatmap of one quantity (default P(attacker wins)), each cell annotated with its estimate and 95 %
        interval."""
        from ..output.plots import detached_figure

        if quantity is None:
            quantity, entity = self._win()
        est = self.pivot(quantity, entity)
        lo = self.pivot(quantity, entity, "ci95_lo")
        hi = self.pivot(quantity, entity, "ci95_hi")
        from ..output.plots import wrap_for

        fig = detached_figure(figsize=(3.2 + 1.6 * len(self.defenders), 1.8 + 0.9 * len(self.attackers)))
        ax = fig.subplots()
        is_prob = self.frame[self.frame.quantity == quantity].kind.iloc[0] == "probability"
        image = ax.imshow(est.to_numpy(float) * (100 if is_prob else 1), cmap="RdYlGn" if is_prob else "viridis",
                          vmin=0 if is_prob else None, vmax=100 if is_prob else None, aspect="auto")
        for i in range(len(self.attackers)):
            for j in range(len(self.defenders)):
                text = estimate_text("probability" if is_prob else "mean", est.iat[i, j], lo.iat[i, j], hi.iat[i, j])
                ax.text(j, i, text.replace(" [", "\n["), ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(self.defenders)), self.defenders, rotation=30, ha="right")
        ax.set_yticks(range(len(self.attackers)), self.attackers)
        ax.set_xlabel("defender")
        ax.set_ylabel("attacker")
        label = quantity_label(self.system, quantity) + (f" ({entity})" if entity else "")
        fig.colorbar(image, ax=ax, label=label + (" (%)" if is_prob else ""))
        ax.set_title(wrap_for(fig, f"{self.title}: {label}, estimate [95 % interval], {self.trials:,} trials per "
                                   f"cell", 9, share=0.8), fontsize=9)
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

    @literal_text
    def plot(self, quantities=None, entity: str | None = None):
        """Each quantity against the swept value, with its 95 % interval as a band: by default every outcome of the
        headline (who wins, no winner, unresolved, no assault …), named in the player's words, the swept field too."""
        from ..output.plots import detached_figure
        from matplotlib.ticker import PercentFormatter

        from ..output.labels import field_words, result_words, sides_of
        from ..output.plots import legend_below, value_ticks, wrap_for

        if quantities is None:
            quantities = list(self._headline().quantity.unique())
        elif isinstance(quantities, str):
            quantities = [quantities]
        selected = [_select(self.frame, q, entity).groupby("cell", sort=True).head(1) for q in quantities]
        as_percent = all((rows.kind == "probability").all() for rows in selected)
        scale = 100 if as_percent else 1
        sides = sides_of(self.cells[0].to_dict(), engaged_only=True) if self.cells else {}
        fig = detached_figure(figsize=(8, 4.8))
        ax = fig.subplots()
        x = value_ticks(ax, self.values)
        for q, rows in zip(quantities, selected):
            section = rows.section.iloc[0]
            label = result_words(self.system, f"{section}.{q}", sides) if not entity else \
                f"{entity}: {quantity_label(self.system, q)}"
            ax.plot(x, rows.estimate * scale, marker="o", label=label)
            ax.fill_between(x, rows.ci95_lo * scale, rows.ci95_hi * scale, alpha=0.25)
        words = field_words(self.field)
        ax.set_xlabel(words)
        if as_percent:
            ax.yaxis.set_major_formatter(PercentFormatter())
            ax.set_ylim(-2, 102)
        ax.set_ylabel(f"{'chance' if as_percent else 'estimate'} (band: 95 % interval)")
        ax.grid(alpha=0.3)
        ax.set_title(wrap_for(fig, f"{self.title}: by {words}", 10), fontsize=10)
        legend_below(ax)
        fig.tight_layout()
        return fig


class CompareResult(DecisionResult):
    """P(A) − P(B) per opponent and over the meta, paired by common random numbers; with points, the
    points destroyed, lost and their swing of each option (``_a`` / ``_b`` columns)."""

    kind = "compare"

    def _shown(self):
        """Per opponent and the meta: each option's chance to win and their difference, in percent
        with the 95 % interval (the points trade follows in its own table)."""
        t, a, b = self.frame, self.meta["option_a"], self.meta["option_b"]
        verb = self.outcome
        return pd.DataFrame({
            "opponent": t.opponent, "weight": t.weight.map(lambda w: f"{w:.2f}"),
            f"{a} {verb}": _texts(t, "p_a", "p_a_lo", "p_a_hi"), f"{b} {verb}": _texts(t, "p_b", "p_b_lo", "p_b_hi"),
            f"{a} − {b}": _texts(t, "difference", "ci95_lo", "ci95_hi", "percentage points")})

    def _sections(self) -> list[str]:
        out = []
        a, b = self.meta["option_a"], self.meta["option_b"]
        per_option = [*TRADES, "per_100_points"]
        options = [self.frame[["opponent"]].assign(option=name, **{
            f"{c}{end}": self.frame[f"{c}{suffix}{end}"] for c in per_option for end in ("", "_lo", "_hi")
            if f"{c}{suffix}{end}" in self.frame}) for name, suffix in ((a, "_a"), (b, "_b"))]
        if "points_swing_a" in self.frame:
            rows = [self.frame.assign(option=name, **{label: _points_texts(self.frame, column + suffix)
                                                      for column, label in POINTS_LABELS.items()})
                    for name, suffix in ((a, "_a"), (b, "_b"))]
            table = pd.concat(rows)[["opponent", "option", *POINTS_LABELS.values()]]
            out += ["", "Points trade (means, 95 % interval)", table.to_string(index=False)]
        trades = pd.concat(options)
        if any(c in trades for c in TRADES):
            chance = "win chance" if self.outcome == "wins" else f"chance it {self.outcome}"
            out += ["", "What is left and what it cost (means after the end phase, 95 % interval)",
                    _trade_table(trades, ["opponent", "option"], chance).to_string(index=False)]
        if self.frame.get("variance_ratio") is None or self.frame.variance_ratio.isna().all():
            return out
        t = self.frame
        gain = pd.DataFrame({"opponent": t.opponent,
                             f"{a} − {b} from independent runs of the same trials":
                                 _texts(t, "difference", "independent_ci95_lo", "independent_ci95_hi",
                                        "percentage points"),
                             "independent runs would need": t.variance_ratio.map(
                                 lambda r: "n/a" if r != r else f"{r:.2f} × the trials"),
                             "trials saved by pairing": t.trials_saved.map(_saving_words)})
        return out + ["", f"Details for those who ask: what pairing by common random numbers bought "
                          f"({self.meta.get('method', '')})", gain.to_string(index=False)]

    def __init__(self, *, option_results: dict, batches: pd.DataFrame | None = None, **kw):
        super().__init__(**kw)
        self.option_results = option_results  # (option label, opponent index) -> Result
        self.batches = batches  # batch means: P̂A − P̂B of every batch against every opponent

    @property
    def outcome(self) -> str:
        """What the options' chances are chances of, after an option's name: "wins", or, for turns without an
        assault, "breaks or destroys Warband"."""
        return self.meta.get("outcome", "wins")

    @literal_text
    def plot(self):
        """Top left: P(A wins) and P(B wins) against each opponent and the meta, in percent with their 95 % error
        bars.  Top right: the difference A − B in percentage points, with its paired interval (and, when paired,
        that of independent runs with the same trials).  Below, for the first three opponents: the "at least N"
        curves of the units each option kills (solid) and loses (dashed); where an option's turn has no assault, those
        of what both options have instead: the units of the enemy formation killed and its blast markers after the
        end phase (docs/decisions.md), in percent with 95 % error bars."""
        from ..output.plots import detached_figure
        from matplotlib.ticker import PercentFormatter

        from ..output.plots import legend_below, wrap_for

        t = self.frame
        a, b = self.meta["option_a"], self.meta["option_b"]
        y = np.arange(len(t))[::-1]
        opponents = [o for o in t.opponent if o != "meta (weighted)"][:3]
        enemies = self.meta.get("enemies")
        curves = (_turn_panels(self.option_results, [a, b], opponents, enemies) if enemies else
                  _loss_panels(_loss_curves(self.option_results, [a, b], opponents, self.meta.get("side", "attacker"))))
        top = 1.8 + 0.55 * len(t)
        fig = detached_figure(figsize=(12, top + (3.8 if curves else 0) + 0.4))
        grid = fig.add_gridspec(2 if curves else 1, 6, height_ratios=[top, 3.8] if curves else [1])
        left = fig.add_subplot(grid[0, :3])
        right = fig.add_subplot(grid[0, 3:], sharey=left)
        for shift, (name, col) in zip((0.12, -0.12), ((a, "p_a"), (b, "p_b"))):
            p, lo, hi = (t[c].to_numpy(float) * 100 for c in (col, f"{col}_lo", f"{col}_hi"))
            left.errorbar(p, y + shift, xerr=np.clip([p - lo, hi - p], 0, None), fmt="o", capsize=3,
                          label=f"{name} {self.outcome}")
        left.set_yticks(y, t.opponent)
        left.set_ylim(-0.6, len(t) - 0.4)  # every marker inside the frame, one opponent or many
        left.set_xlim(-2, 102)
        left.xaxis.set_major_formatter(PercentFormatter())
        side = self.meta.get("side", "attacker")
        left.set_xlabel(wrap_for(fig, (f"chance to win as the {side}" if self.outcome == "wins" else
                                       f"chance that the option {self.outcome}") + " (bar: 95 % interval)",
                                 10, share=0.45))
        legend_below(left, ncol=1)
        d, lo, hi = (t[c].to_numpy(float) * 100 for c in ("difference", "ci95_lo", "ci95_hi"))
        paired = self.meta.get("paired")
        right.errorbar(d, y + 0.12, xerr=np.clip([d - lo, hi - d], 0, None), fmt="o", capsize=3,
                       label="paired 95 % interval" if paired else "95 % interval")
        edges = [lo, hi]
        if paired:
            ilo, ihi = (t[c].to_numpy(float) * 100 for c in ("independent_ci95_lo", "independent_ci95_hi"))
            right.errorbar(d, y - 0.12, xerr=np.clip([d - ilo, ihi - d], 0, None), fmt="s", capsize=3, alpha=0.6,
                           label="independent runs, same trials")
            edges += [ilo, ihi]
        low, high = min(0, np.nanmin(edges)), max(0, np.nanmax(edges))
        margin = 0.08 * (high - low) or 1
        right.set_xlim(low - margin, high + margin)
        right.axvline(0, color="grey", lw=0.8)
        right.set_xlabel(wrap_for(fig, f"difference: {a} − {b}, percentage points", 10, share=0.45))
        right.tick_params(labelleft=False)
        legend_below(right, ncol=1)
        for ax in (left, right):
            ax.grid(axis="x", alpha=0.3)
        fig.suptitle(wrap_for(fig, f"{self.title}: {self.trials:,} trials per option and opponent", 10), fontsize=10)
        return _finish(fig, grid, curves)


def _loss_panels(curves: list) -> list:
    """:func:`_loss_curves` as the panels of :func:`_finish`: one per opponent."""
    return [(f'"At least N" units against {opponent}: killed (solid) and lost (dashed)', lines, "units lost")
            for opponent, lines in curves]


def _turn_panels(option_results: dict, options: list[str], opponents: list[str], enemies: list) -> list:
    """The panels of :func:`_finish` for a comparison without an assault: for each opponent, what both options have,
    as "at least N" curves, one colour per option: the enemy formation's units killed and its blast markers after
    the end phase (``enemies[j][k]``: the formation option ``k`` is scored on against opponent ``j``)."""
    panels = []
    for j, opponent in enumerate(opponents):
        for quantity, what, axis in (("casualties", "{enemy} units killed", "units killed"),
                                     ("blast_markers_after_end_phase", "blast markers on {enemy} after the end "
                                      "phase", "blast markers")):
            lines = []
            for k, option in enumerate(options):
                result = option_results.get((option, j))
                formation = result["formations"].get(enemies[j][k], {}) if result is not None else {}
                if quantity in formation:
                    lines.append((option, formation[quantity], f"C{k}", False))
            if lines:
                panels.append((f'"At least N": {what.format(enemy=enemies[j][0])}', lines, axis))
    return panels


def _finish(fig, grid, panels: list):
    """The "at least N" panels of a comparison under the chances, ``(title, curves, x label)`` each (curves as
    :func:`wargame_odds.analysis.output.plots.casualty_curves` takes them): up to three side by side as wide as a third
    of the figure, more in as many equal columns; their shared legend, and the layout."""
    from ..output.plots import casualty_curves, curves_legend, wrap_for

    ax = None
    row = grid[1, :].subgridspec(1, len(panels), wspace=0.35) if len(panels) > 3 else None
    for k, (title, lines, axis) in enumerate(panels):
        ax = fig.add_subplot(row[0, k] if row is not None else grid[1, 2 * k:2 * k + 2])
        casualty_curves(ax, lines, title)
        ax.set_xlabel(axis)
        if row is not None:  # narrower than casualty_curves assumes: shorter title lines, one y label for the row
            ax.set_title(wrap_for(fig, title, 9, share=0.6 / len(panels)), fontsize=9)
            ax.set_ylabel(ax.get_ylabel() if k == 0 else "")
    bottom = curves_legend(fig, ax) if ax is not None else 0
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


def _saving_words(saved) -> str:
    """Trials that pairing saved, in words: a count, or, where pairing cost trials (the options' results were not
    positively related), "pairing did not help here" rather than a negative count."""
    if saved != saved:
        return "n/a"
    if saved <= 0:
        return "none: pairing did not help here (the options' results are unrelated)"
    return f"{saved:,.0f}"


def _loss_curves(option_results: dict, options: list[str], opponents: list[str], side: str) -> list:
    """For each opponent: (opponent, the curve tuples of :func:`wargame_odds.analysis.output.plots.casualty_curves`):
    per option the units of the enemy's first fighting formation killed (solid) and of its own lost (dashed), in one
    colour."""
    out = []
    for j, opponent in enumerate(opponents):
        lines = []
        for k, option in enumerate(options):
            result = option_results.get((option, j))
            formations = result["formations"] if result is not None else {}
            fighting = [(name, f) for name, f in formations.items() if str(f.get("role", "engaged")) == "engaged"]
            enemy = next(((n, f) for n, f in fighting if str(f["side"]) != side), None)
            own = next(((n, f) for n, f in fighting if str(f["side"]) == side), None)
            for who, dashed, verb in ((enemy, False, "killed"), (own, True, "lost")):
                if who is not None and "casualties" in who[1]:
                    lines.append((f"{option}: units {verb}", who[1]["casualties"], f"C{k}", dashed))
        if lines:
            out.append((opponent, lines))
    return out


class RankResult(DecisionResult):
    """One score per option against the meta, with points efficiency, best first."""

    kind = "rank"

    def __init__(self, *, cells: pd.DataFrame, option_results: dict | None = None, opponents: list[str] = (), **kw):
        super().__init__(**kw)
        self.cells = cells  # option × opponent estimates with their intervals and weights
        self.option_results = option_results or {}  # (option, opponent index) -> Result
        self.opponents = list(opponents)

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["cells"] = records(self.cells)
        return out

    @property
    def outcome(self) -> str:
        """What the score counts, "{option} {outcome}": "wins", or "breaks or destroys the enemy" where a plan
        has no assault (docs/decisions.md, "Turn plans")."""
        return self.meta.get("outcome", "wins")

    def _shown(self):
        """Best first: the option's points, its meta score (weighted chance to win) and chance per 100
        points in percent, and its points trade, each with the 95 % interval."""
        t = self.frame
        chance = "chance to win" if self.outcome == "wins" else "chance to break or destroy"
        shown = pd.DataFrame({"rank": t["rank"], "option": t.option,
                              "points": t.points.map(lambda v: "n/a" if v != v else f"{v:g}"),
                              f"{chance} (meta)": _texts(t, "score", "ci95_lo", "ci95_hi"),
                              ("chance" if self.outcome == "wins" else chance) + " per 100 points":
                                  _texts(t, "per_100_points", "per_100_points_lo", "per_100_points_hi")})
        if "plan" in t:
            shown.insert(2, "plan", t.plan)
        if "behind_best" in t:  # paired by batch means: every option met each opponent on the same dice
            delta = self.meta.get("indifference", 1.0)
            shown["behind the best (paired)"] = ["best" if r == 1 else percent(b, lo, hi, "points")
                                                 for r, b, lo, hi in zip(t["rank"], t.behind_best, t.behind_lo,
                                                                         t.behind_hi)]
            shown[f"within {delta:g} point{'s' if delta != 1 else ''} of the best"] = [
                "yes" if within else "no" for within in t.within_delta]
        if "points_swing" in t:
            for column, label in POINTS_LABELS.items():
                shown[label] = _points_texts(t, column)
        return shown

    def _sections(self) -> list[str]:
        """What is left on both sides against the meta (weighted), and kills per 100 points."""
        if not any(c in self.frame for c in TRADES):
            return []
        return ["", "What is left and what it cost against the meta (weighted means after the end phase, "
                    "95 % interval)", _trade_table(self.frame, ["option"]).to_string(index=False)]

    @literal_text
    def plot(self):
        """The meta score (weighted chance to win) in percent and, where every option has points, the chance to win
        per 100 points, each with its 95 % error bar; below, for the three heaviest opponents of the meta, the
        "at least N" curves of the units each option kills (solid) and loses (dashed)."""
        from ..output.plots import detached_figure
        from matplotlib.ticker import PercentFormatter

        from ..output.plots import wrap_for

        t = self.frame
        y = np.arange(len(t))[::-1]
        has_points = t.per_100_points.notna().any()
        weights = self.cells.groupby("opponent", sort=False).weight.first() if not self.cells.empty else pd.Series()
        heaviest = sorted(range(len(self.opponents)), key=lambda j: -weights.get(self.opponents[j], 0))[:3]
        curves = [(self.opponents[j], lines) for j in heaviest for _, lines in
                  _loss_curves({(o, 0): r for (o, jj), r in self.option_results.items() if jj == j}, list(t.option),
                               [self.opponents[j]], self.meta.get("side", "attacker"))]
        top = 1.8 + 0.45 * len(t)
        fig = detached_figure(figsize=(12, top + (3.8 if curves else 0) + 0.4))
        grid = fig.add_gridspec(2 if curves else 1, 6, height_ratios=[top, 3.8] if curves else [1])
        axes = [fig.add_subplot(grid[0, :3])]
        if has_points:
            axes.append(fig.add_subplot(grid[0, 3:], sharey=axes[0]))
        side = self.meta.get("side", "attacker")
        chance = "chance to win" if self.outcome == "wins" else "chance to break or destroy the enemy"
        panels = [("score", "ci95_lo", "ci95_hi", f"{chance} as the {side}, weighted over the meta")]
        if has_points:
            panels.append(("per_100_points", "per_100_points_lo", "per_100_points_hi",
                           f"{chance} per 100 points"))
        for ax, (col, lo_col, hi_col, label) in zip(axes, panels):
            p, lo, hi = (t[c].to_numpy(float) * 100 for c in (col, lo_col, hi_col))
            ax.errorbar(p, y, xerr=np.clip([p - lo, hi - p], 0, None), fmt="o", capsize=3)
            ax.set_yticks(y, [f"{o}\n({p})" for o, p in zip(t.option, t.plan)] if "plan" in t else t.option)
            ax.set_ylim(-0.6, len(t) - 0.4)
            ax.xaxis.set_major_formatter(PercentFormatter())
            ax.set_xlabel(wrap_for(fig, f"{label} (bar: 95 % interval)", 10, share=0.42))
            ax.grid(axis="x", alpha=0.3)
        axes[0].set_xlim(-2, 102)
        if has_points:
            axes[1].tick_params(labelleft=False)
        fig.suptitle(wrap_for(fig, f"{self.title}: {self.trials:,} trials per matchup", 10), fontsize=10)
        return _finish(fig, grid, _loss_panels(curves))


class CumulativeResult(DecisionResult):
    """"At least N" and "at most N" probabilities of distributions, with intervals."""

    kind = "cumulative"

    def _shown(self):
        """The table with each probability in percent and its 95 % interval ("at least", "casualties": words, not
        codes), as the command line prints it."""
        t = self.frame
        return t.drop(columns=["p", "ci95_lo", "ci95_hi"]).assign(
            quantity=t.quantity.map(lambda q: str(q).replace("_", " ")),
            direction=t.direction.map(lambda d: str(d).replace("_", " ")), value=t.value.map(lambda v: f"{v:g}"),
            chance=_texts(t, "p", "ci95_lo", "ci95_hi"))

    @literal_text
    def plot(self, quantity: str | None = None, entity: str | None = None, direction: str = "at_least"):
        """Step plot of P(X ≥ N) (or ≤) in percent with its interval band; one line per cell when
        there are several.  X is a whole number, so P(X ≥ x) holds P(X ≥ N) on (N − 1, N] and
        P(X ≤ x) holds P(X ≤ N) on [N, N + 1): the steps sit at the whole numbers."""
        from ..output.plots import detached_figure, legend_below, wrap_for
        from matplotlib.ticker import MaxNLocator, PercentFormatter

        t = self.frame[self.frame.direction == direction]
        quantity = quantity or t.quantity.iloc[0]
        t = t[t.quantity == quantity]
        if entity is not None:
            t = t[t.entity == entity]
        where = "pre" if direction == "at_least" else "post"
        fig = detached_figure(figsize=(7, 4))
        ax = fig.subplots()
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
        ax.set_title(wrap_for(fig, self.title, 10), fontsize=10)
        legend_below(ax)  # under the axes: a step curve crosses every corner
        fig.tight_layout()
        return fig


#: The points-trade columns and how the text tables name them.
POINTS_LABELS = {"points_destroyed": "points destroyed", "points_lost": "points lost",
                 "points_swing": "points swing (destroyed − lost)"}
#: What is left and what it cost (:func:`wargame_odds.analysis.decisions.api.battle_trade`), as the text tables name
#: them.
TRADES = {"units_left": "units left", "enemy_units_left": "enemy units left", "kills": "enemy units killed",
          "kills_per_100_points": "kills per 100 points", "damage_dealt": "war-engine damage dealt (DP)",
          "damage_taken": "war-engine damage taken (DP)", "damage_per_100_points": "damage dealt per 100 points (DP)",
          "blast_markers": "own blast markers", "enemy_blast_markers": "enemy blast markers"}


def _trade_table(frame: pd.DataFrame, keys: list[str], chance: str = "win chance") -> pd.DataFrame:
    """The :data:`TRADES` columns of ``frame`` (with ``_lo`` / ``_hi``) as "3.10 [3.02, 3.18]" texts, after ``keys``;
    the ``chance`` (the win chance, or what the options are compared on) per 100 points too, where the frame has
    it."""
    table = frame[keys].copy()
    for column, label in TRADES.items():
        if column in frame and frame[column].notna().any():
            table[label] = _points_texts(frame, column)
    if "per_100_points" in frame and keys != ["option"]:  # rank shows it in its main table
        table[f"{chance} per 100 points"] = _texts(frame, "per_100_points", "per_100_points_lo", "per_100_points_hi")
    return table


def _texts(frame: pd.DataFrame, column: str, lo: str, hi: str, unit: str = "%") -> list[str]:
    """A probability column as "58.1 % [57.9, 58.3]" texts."""
    return [percent(p, a, b, unit) for p, a, b in zip(frame[column], frame[lo], frame[hi])]


def _points_texts(frame: pd.DataFrame, column: str) -> list[str]:
    """A points column (mean with ``_lo`` / ``_hi``) as "64.22 [50.65, 75.51]" texts."""
    return [number(m, a, b) for m, a, b in zip(frame[column], frame[f"{column}_lo"], frame[f"{column}_hi"])]


class ThresholdResult(DecisionResult):
    """The value of a field at the edge of those whose probability reaches a target (the largest when the chance
    falls as the value grows, the smallest when it rises, unless ``largest`` forces one), every value's estimate
    with its interval, how sure the answer is, why that side, and why neighbouring values give the same chance."""

    kind = "threshold"

    def __init__(self, *, field: str, quantity: str, target: float, direction: str, largest: bool | None,
                 points: list[dict], plateaus: list[dict] = (), field_words: str = "", quantity_words: str = "", **kw):
        self.field, self.quantity, self.target = field, quantity, target
        self.direction = direction
        self.field_words, self.quantity_words = field_words or field, quantity_words or quantity
        self.points = sorted(points, key=lambda point: point["value"])
        self.plateaus = list(plateaus)
        frame = pd.DataFrame({"value": [pt["value"] for pt in self.points], "p": [pt["p"] for pt in self.points],
                              "ci95_lo": [pt["ci95"][0] for pt in self.points],
                              "ci95_hi": [pt["ci95"][1] for pt in self.points],
                              "reaches": [self._reaches(pt["p"]) for pt in self.points]})
        super().__init__(frame=frame, **kw)
        self.trend = self._trend()
        self.chosen = "given" if largest is not None else "auto"
        if largest is None:  # the side where the reaching values lie: their edge is the answer
            reaching_low = (self.trend < 0) if direction == "at_least" else (self.trend > 0)
            largest = bool(reaching_low)
        self.largest = largest
        self.reversals = self._reversals()
        order = self.points[::-1] if largest else self.points
        hit = next((i for i, pt in enumerate(order) if self._reaches(pt["p"])), None)
        self.answer = order[hit] if hit is not None else None
        self.neighbour = order[hit - 1] if hit else None  # the value tried just before, which does not reach
        self.value = self.answer["value"] if self.answer else None
        self.reached = self.answer is not None

    def _trend(self) -> int:
        """+1 when the chance rises with the value, −1 when it falls, 0 when it is the same at every value."""
        p = [pt["p"] for pt in self.points]
        if not p or p[-1] == p[0]:
            steps = np.sign(np.diff(p)).sum() if len(p) > 1 else 0
            return int(np.sign(steps))
        return 1 if p[-1] > p[0] else -1

    def _reversals(self) -> list[tuple[dict, dict]]:
        """Neighbouring values whose chance moves against the trend by more than either one's interval half-width
        (clearly, not noise)."""
        out = []
        for a, b in zip(self.points, self.points[1:]):
            half = max((a["ci95"][1] - a["ci95"][0]) / 2, (b["ci95"][1] - b["ci95"][0]) / 2)
            if self.trend and (b["p"] - a["p"]) * self.trend < 0 and abs(b["p"] - a["p"]) > half:
                out.append((a, b))
        return out

    @property
    def monotone(self) -> bool:
        return not self.reversals

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

    def _goal(self) -> str:
        return f"{'at least' if self.direction == 'at_least' else 'at most'} {100 * self.target:g} %"

    def statement(self) -> str:
        """The answer in one line, with the intervals of the answer and of its neighbour."""
        field, what = f'"{self.field_words}"', f'"{self.quantity_words}" {self._goal()}'
        if not self.reached:
            best = max(self.points, key=lambda pt: pt["p"] if self.direction == "at_least" else -pt["p"])
            return (f"No value of {field} from {self.points[0]['value']} to {self.points[-1]['value']} gives "
                    f"{what}; the closest is {best['value']}: {percent(best['p'], *best['ci95'])}.")
        which = "largest" if self.largest else "smallest"
        text = f"{which.capitalize()} {field} that gives {what}: {self.answer['value']} " \
               f"({percent(self.answer['p'], *self.answer['ci95'])})"
        if self.neighbour is not None:
            return text + f"; {self.neighbour['value']} gives {percent(self.neighbour['p'], *self.neighbour['ci95'])}."
        return text + f" (the {which} value tried)."

    def why(self) -> str:
        """Why the answer is the largest or the smallest value."""
        first, last = self.points[0], self.points[-1]
        if self.chosen == "given":
            return f"The {'largest' if self.largest else 'smallest'} value, as asked."
        if not self.trend:
            return "The chance is the same at every value tried, so the smallest value answers."
        moves = "falls" if self.trend < 0 else "rises"
        span = (f"{percent(first['p'], *first['ci95'])} at {first['value']}, "
                f"{percent(last['p'], *last['ci95'])} at {last['value']}")
        if self.largest:
            return (f"The chance {moves} as the value grows ({span}), so this answers how far it can go: the largest "
                    f"value that still gives {self._goal()} (use --smallest / largest=False for the other end).")
        return (f"The chance {moves} as the value grows ({span}), so this answers what it takes: the smallest value "
                f"that gives {self._goal()} (use --largest / largest=True for the other end).")

    def warning(self) -> str | None:
        """A warning when the chance is clearly not monotone in the value."""
        if self.monotone:
            return None
        a, b = self.reversals[0]
        against = "fall" if self.trend < 0 else "rise"
        return (f"Warning: the chance is not monotone in the value: it goes from {percent(a['p'], *a['ci95'])} at "
                f"{a['value']} to {percent(b['p'], *b['ci95'])} at {b['value']}, against the overall {against}; values "
                f"on both sides of the answer may reach the target, so read every value below.")

    def certainty(self) -> str:
        if not self.reached:
            return ""
        if self.confident:
            return "Every interval shown clears the target (95 % confidence each)."
        return "An interval shown includes the target, so the answer is not sure at 95 %: run more trials."

    def lines(self) -> list[str]:
        """The answer, its certainty, why this side, a warning, and why neighbouring values tie."""
        return [x for x in (self.statement(), self.certainty(), self.why(), self.warning()) if x] + \
            [p["why"] for p in self.plateaus]

    def to_dict(self) -> dict:
        out = {"value": _clean(self.value), "reached": self.reached, "confident": self.confident,
               "points": [{"value": _clean(pt["value"]), "p": _clean(pt["p"]),
                           "ci95": [_clean(x) for x in pt["ci95"]]} for pt in self.points],
               "statement": self.statement(), "why": self.why(), "warning": self.warning(),
               "field": self.field, "quantity": self.quantity, "target": self.target, "direction": self.direction,
               "search": "largest" if self.largest else "smallest", "search_chosen": self.chosen,
               "trend": {1: "rises", -1: "falls", 0: "flat"}[self.trend], "monotone": self.monotone,
               "plateaus": [{"from": _clean(p["from"]), "to": _clean(p["to"]), "why": p["why"]} for p in self.plateaus]}
        base = super().to_dict()
        base.pop("rows")
        out.update({k: v for k, v in base.items() if k not in out})
        return out

    def __str__(self) -> str:
        rows = [f"{self.field_words} = {pt['value']}: {percent(pt['p'], *pt['ci95'])}"
                + ("  reaches" if self._reaches(pt["p"]) else "") for pt in self.points]
        return "\n".join([*self.lines(), "", self._header(), *rows] + [f"note: {n}" for n in self.notes])

    @literal_text
    def plot(self):
        """The chance against the value, in percent with 95 % error bars, the target as a line and the answer
        ringed; axes in the player's words."""
        from ..output.plots import detached_figure
        from matplotlib.ticker import PercentFormatter

        from ..output.plots import legend_below, value_ticks, wrap_for

        t = self.frame
        fig = detached_figure(figsize=(8, 4.6))
        ax = fig.subplots()
        x = value_ticks(ax, list(t.value))
        ax.errorbar(x, 100 * t.p, yerr=[100 * (t.p - t.ci95_lo), 100 * (t.ci95_hi - t.p)], fmt="o-", capsize=3,
                    label="chance (bar: 95 % interval)")
        ax.axhline(100 * self.target, color="grey", ls="--", lw=1, label=f"target: {self._goal()}")
        if self.reached:
            k = list(t.value).index(self.value)
            ax.plot([x[k]], [100 * t.p.iloc[k]], "o", ms=14, mfc="none", mec="C3", mew=2,
                    label=f"answer: {self.value} ({'largest' if self.largest else 'smallest'} that reaches it)")
        ax.set_xlabel(self.field_words)
        ax.set_ylabel(wrap_for(fig, f"chance: {self.quantity_words}", 10, share=0.55))
        ax.yaxis.set_major_formatter(PercentFormatter())
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.set_title(wrap_for(fig, f"{self.title}: {self.quantity_words} by {self.field_words}", 10), fontsize=10)
        legend_below(ax, ncol=3)  # under the axes: a rising curve runs through the upper corners
        fig.tight_layout()
        return fig
