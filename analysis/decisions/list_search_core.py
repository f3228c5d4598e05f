"""List search: which detachment should I take?  Every legal candidate raced against a weighted meta.

Candidates are enumerated from a NetEA army list with its upgrades (:mod:`wargame_odds.analysis.epic.library.upgrades`)
or written by hand (library names, force files or inline force tables).  They race on the Epic kernel
(:mod:`.race`): candidate ``i`` meets opponent ``j`` in batch ``b`` of phase ``p`` on the stream
``(seed, p, b, j)`` — never depending on ``i`` — so every candidate meets opponent ``j`` on the same
dice and reordering candidates changes nothing.  See docs/list-search.md.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..intake.bounds import FilePath, Title
from ..intake.errors import UserError
from ..intake.scenario import StrictModel, read_toml, validate
from . import api, intervals
from .race import PHASES, Race, guarantee, status

MAX_CANDIDATES = 5_000
MAX_MATCHUPS = 30_000
MAX_CAP = 20  # the largest cap of an "any number of" upgrade
ASSUMES = ("one assault per matchup, as the Epic engine resolves it (docs/epic-engine.md): no shooting or "
           "manoeuvre before it, transports not modelled, characters join the formation's first unit")
PLAN_ASSUMES = ("one turn per matchup, each candidate scored by its plan (the ranking's plan column; its own job by "
                "default: a shooting formation "
                "takes its shooting action at the opponent's first formation, every shooter in range and every "
                "target exposed, any other assaults it with every unit in base contact), then the end phase; "
                "transports not modelled, characters join the formation's first unit")


class OpponentEntry(StrictModel):
    force: FilePath | dict  # a library name or force file; in Python also a force's keys as a dict
    weight: float = 1.0
    as_: Literal["attacker", "defender"] | None = Field(None, alias="as")


class ListSearchDefinition(StrictModel):
    """A ``list-search`` definition file (docs/list-search.md)."""

    system: Literal["epic"] = "epic"
    title: Title | None = None
    army: str | None = None
    points: int | None = Field(None, ge=1, le=100_000)  # the army's points (the list's one-third and 0–1 limits)
    max_points: int | None = Field(None, ge=1, le=100_000)
    formations: list[str] | None = Field(None, max_length=100)
    upgrades: list[str] | None = Field(None, max_length=100)
    caps: dict[str, Annotated[int, Field(ge=0, le=MAX_CAP)]] = Field({}, max_length=100)  # "any number of"
    owned: dict[str, Annotated[int, Field(ge=0, le=10_000)]] | None = Field(None, max_length=1000)
    candidates: list[FilePath | dict] | None = Field(None, max_length=MAX_CANDIDATES)
    opponents: list[OpponentEntry] = Field(min_length=1, max_length=100)
    add_to: str | None = None  # a detachment of the army ("Tactical + Captain"): candidates join it
    points_left: int | None = Field(None, ge=1, le=100_000)  # with add_to: the candidates' points
    objective: Literal["win", "break"] = "win"
    plan: Literal["job", "assault", "shoot"] | None = None  # every candidate's turn plan (docs/decisions.md)
    action: Literal["sustained_fire", "advance", "double"] = "sustained_fire"  # a shooting plan's action
    side: Literal["attacker", "defender"] = "attacker"
    indifference: float = 1.0
    confidence: float = 95.0
    base: FilePath | None = None


@dataclass
class Candidate:
    name: str
    formation: str
    upgrades: str
    points: int | None
    force: object  # a spec the Epic system's ``force`` accepts


def _fail(source: str, field_: str, problem: str, allowed: str):
    raise UserError(source, field_, problem, allowed)


def candidates_of(defn: ListSearchDefinition, resolve, source: str, notes: list[str]) -> list[Candidate]:
    """The candidate set: the definition's own candidates, else the army list's enumeration; canonical order
    (points, then name) and de-duplicated."""
    from ..epic.library.upgrades import enumerate_detachments

    out: list[Candidate] = []
    if defn.candidates:
        for k, spec in enumerate(defn.candidates):
            if isinstance(spec, dict):
                force = dict(spec)
                name = str(force.get("name") or f"candidate {k + 1}")
            else:
                force = resolve(spec)
                name = spec
            out.append(Candidate(name, name, "", None, force))
    elif defn.army:
        try:
            found = enumerate_detachments(defn.army, max_points=defn.points_left if defn.add_to else defn.max_points,
                                          points=defn.points, formations_filter=defn.formations,
                                          upgrades_filter=defn.upgrades, caps=defn.caps, owned=defn.owned,
                                          notes=notes)
        except ValueError as exc:
            _fail(source, "army", str(exc), "a NetEA army list, its formations and modelled upgrades")
        if defn.add_to:
            return _added(defn, found, source, notes)
        out = [Candidate(d.name, d.formation.split("/")[-1], d.upgrades_label, d.points, d.force()) for d in found]
    else:
        _fail(source, "candidates", "neither army nor candidates", "army = \"netea:LIST\" or candidates = [...]")
    seen, unique = set(), []
    for c in sorted(out, key=lambda c: (c.points or 0, c.name)):
        if c.name not in seen:
            seen.add(c.name)
            unique.append(c)
    if not unique:
        _fail(source, "max_points", "no candidate left after the filters",
              "a larger max_points, fewer filters or more models owned")
    return unique


def _added(defn: ListSearchDefinition, found, source: str, notes: list[str]) -> list[Candidate]:
    """``add_to``: each candidate assaults beside the player's detachment (one force of two formations); the
    army's limits (once-per-army characters, 0–1 formations, a third of ``points``) hold over both."""
    from ..epic.library.upgrades import check_army, parse_detachment

    if defn.points_left is None:
        _fail(source, "points_left", "add_to without points_left", "the points left for the added detachment")
    try:
        base = parse_detachment(defn.army, defn.add_to)
    except ValueError as exc:
        _fail(source, "add_to", str(exc), "a detachment named as the candidates are (Tactical + Captain)")
    out = []
    for d in found:
        try:
            check_army([base, d], defn.points or 10 ** 6)
        except ValueError:
            continue
        second = d.formation_data()
        if second["name"] == base.formation_data()["name"]:
            second["name"] = (second["name"] + " (second)")[:80]
        force = {"name": f"{base.name} and {d.name}"[:80], "formations": [base.formation_data(), second]}
        out.append(Candidate(d.name, d.formation.split("/")[-1], d.upgrades_label, d.points, force))
    notes.append(f"each candidate assaults beside {base.name}; points are the candidate's ({defn.points_left} left)")
    if not out:
        _fail(source, "points_left", "no candidate left after the filters", "more points left or fewer filters")
    return sorted(out, key=lambda c: (c.points, c.name))


def _check(defn: ListSearchDefinition, n_candidates: int, source: str) -> None:
    if not (math.isfinite(defn.indifference) and defn.indifference > 0):
        _fail(source, "indifference", f"{defn.indifference}", "a positive number of percentage points")
    if not (math.isfinite(defn.confidence) and 50 < defn.confidence < 100):
        _fail(source, "confidence", f"{defn.confidence}", "a percentage strictly between 50 and 100")
    for j, o in enumerate(defn.opponents):
        if not (math.isfinite(o.weight) and o.weight > 0):
            _fail(source, f"opponents[{j}].weight", f"{o.weight}", "a positive finite number")
    if n_candidates > MAX_CANDIDATES:
        _fail(source, "max_points", f"{n_candidates} candidates", f"at most {MAX_CANDIDATES}: lower max_points, "
              "or filter formations / upgrades")
    if n_candidates * len(defn.opponents) > MAX_MATCHUPS:
        _fail(source, "opponents", f"{n_candidates} candidates × {len(defn.opponents)} opponents",
              f"at most {MAX_MATCHUPS} matchups: fewer candidates or opponents")


def _resolved(force, notes: list[str]):
    """The force with its library units defined inline and its army rules filled in, once: each of its matchups
    then validates without reading the library again (the same scenario, half the cost of a matchup).  What the
    library inferred joins ``notes`` once per force."""
    from ..epic.library.resolve import resolve_epic
    from .systems import Force

    data, said = resolve_epic(force.data)
    notes += [f"{force.name}: {n}" for n in said if f"{force.name}: {n}" not in notes]
    return Force(force.name, data, force.source)


class KernelEvaluator:
    """Successes of candidates against every opponent, batch ``key`` of opponent ``j`` on stream
    ``(seed, *key, j)`` (never the candidate's index).  Each candidate and opponent is validated once;
    a matchup's job is built on first use."""

    def __init__(self, system, forces, opponents, roles, base_model, seed: int, threads, objective: str = "win",
                 engine: str = "kernel"):
        self.system, self.forces, self.opponents, self.roles = system, forces, opponents, roles
        self.objective = objective
        self.base, self.seed, self.threads, self.engine = base_model, seed, threads, engine
        self.jobs: dict = {}
        self.plans: dict = {}  # candidate index → the plan it played, in words (recorded as its matchups are built)
        self.executor = None  # a Dask executor: each look's candidates run as tasks of CHUNK candidates

    CHUNK = 32

    def _distributed(self, cands, key, n):
        """The same counts as a local call (the streams depend on the key and the opponent only), computed as
        tasks: each rebuilds its candidates' matchups on its worker."""
        cands = [int(i) for i in cands]
        chunks = [cands[s:s + self.CHUNK] for s in range(0, len(cands), self.CHUNK)]
        specs = [(self.system.name, [self.forces[i] for i in chunk], self.opponents, self.roles, self.base, self.seed,
                  self.threads, self.objective, self.engine, tuple(key), n) for chunk in chunks]
        out = np.zeros((len(cands), len(self.opponents)))
        for c, counts in self.executor.map(evaluate_chunk, specs):
            out[c * self.CHUNK:c * self.CHUNK + len(chunks[c])] = counts
        return out

    def _job(self, i: int, j: int, keep: bool = True):
        """The matchup's job and count slots; ``keep=False`` (the screen, which meets most candidates once)
        does not hold it, so memory stays that of the survivors."""
        if (i, j) in self.jobs:
            return self.jobs[(i, j)]
        model = api._pair(self.system, self.roles[j], self.forces[i], self.opponents[j], self.base)
        if self.objective == "win" and not api._fights_every_assault([model]):
            raise UserError("list-search", "objective", f"{self.forces[i].name!r} plays a plan without an assault "
                            f"({self.system.plan_words(model, self.roles[j])}): it has no assault to win",
                            'objective = "break" (the enemy broken or destroyed after the end phase)')
        self.plans.setdefault(i, api._plan_words(self.system, model, self.roles[j]))
        job = self.system.job(model, self.engine, trial_streams=True)
        prepared = (job, self._slots(model, job, self.roles[j]))
        if keep:
            self.jobs[(i, j)] = prepared
        return prepared

    def _slots(self, model, job, role: str) -> list[int]:
        """The count slots of the objective, by name in the kernel's count layout
        (:mod:`wargame_odds.analysis.run.counts`): the side's assault win, or (break) the opponent's formation broken or
        destroyed after the end phase (two disjoint states, summed)."""
        compiled = job.compiled
        if self.objective == "win":
            names = [f"{role}_wins"]
        else:
            mine = 0 if role == "attacker" else 1
            theirs = [f for f in compiled.formations if f.side != mine]
            if len(theirs) != 1:
                raise UserError("list-search", "objective", f"break against an opponent of {len(theirs)} "
                                "formations", "win, or opponents of one formation each")
            names = [f"f{theirs[0].index}.broken_after_end_phase", f"f{theirs[0].index}.destroyed"]
        return [compiled.layout.offset(n) for n in names]

    def release(self, cands) -> None:
        """Free the prepared matchups of candidates the race dropped (confirmation rebuilds any it needs)."""
        for i in cands:
            for j in range(len(self.opponents)):
                self.jobs.pop((int(i), j), None)

    def __call__(self, cands, key, n):
        if self.executor is not None:
            return self._distributed(cands, key, n)
        from ..run import runner

        sink = runner.PROGRESS_SINK.get()  # a program's progress (the app): told each matchup's trials, may stop
        out = np.zeros((len(cands), len(self.opponents)))
        for t, i in enumerate(cands):
            for j in range(len(self.opponents)):
                job, slots = self._job(int(i), j, keep=key[0] != PHASES["screen"])
                counts, _ = runner.run(job, trials=n, seed=self.seed, cell=(*key, j), threads=self.threads,
                                       progress=False)
                out[t, j] = sum(int(counts[s]) for s in slots)
                if sink is not None:
                    sink.update(n)
        return out


def _gains_over_base(defn, res, forces, opps, roles, system, base_model, seed, threads, weights, race):
    """``add_to``: each confirmed candidate's gain (points of meta score) over the player's detachment fighting
    alone, paired on fresh dice that both meet (stream ``(seed, PHASES["gain"], b, j)``), by batch means with a
    Student t 95 % interval: ({race index: (gain, lo, hi)}, the detachment alone's meta score)."""
    from ..epic.library.upgrades import parse_detachment

    base = parse_detachment(defn.army, defn.add_to)
    alone = _resolved(system.force({"name": base.name, "formations": [base.formation_data()]}, defn.side), [])
    chosen = list(res.confirmed)
    evaluate = KernelEvaluator(system, [forces[t] for t in chosen] + [alone], opps, roles, base_model, seed, threads,
                               defn.objective)
    w = np.asarray(weights, float) / float(np.sum(weights))
    n, batches = race.confirm_size, race.confirm_batches
    scores = np.array([100 * (evaluate(np.arange(len(chosen) + 1), (PHASES["gain"], b), n) / n) @ w
                       for b in range(batches)])  # (batches, candidates + the detachment alone)
    gains = {t: intervals.t_interval(scores[:, k] - scores[:, -1]) for k, t in enumerate(chosen)}
    return gains, float(scores[:, -1].mean())


def _plan_played(evaluate: KernelEvaluator, i: int) -> str | None:
    """The plan candidate ``i`` (race index) played, in words: recorded when its matchups were built, else (they ran
    on other workers) from its matchup with the first opponent."""
    if i not in evaluate.plans:
        model = api._pair(evaluate.system, evaluate.roles[0], evaluate.forces[i], evaluate.opponents[0], evaluate.base)
        evaluate.plans[i] = api._plan_words(evaluate.system, model, evaluate.roles[0])
    return evaluate.plans[i]


def evaluate_chunk(spec: tuple) -> np.ndarray:
    """One task of a distributed look: successes of some candidates against every opponent."""
    from .api import SYSTEMS

    name, forces, opponents, roles, base, seed, threads, objective, engine, key, n = spec
    local = KernelEvaluator(SYSTEMS[name], forces, opponents, roles, base, seed, threads, objective, engine)
    return local(np.arange(len(forces)), key, n)


@dataclass
class ListSearchResult:
    title: str
    frame: object  # pandas DataFrame: the ranking
    guarantee: dict
    race: dict
    enumeration: dict
    run: dict
    notes: list[str] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    opponents: list[str] = field(default_factory=list)
    weights: np.ndarray | None = None  # normalised
    race_successes: np.ndarray | None = None  # (candidates, opponents), in the frame's row order
    race_trials: np.ndarray | None = None  # per candidate and opponent, screen and KN
    confirm_successes: dict = field(default_factory=dict)  # frame row → (opponents,) successes on fresh dice
    confirm_trials: int = 0
    history: list = field(default_factory=list)  # (trials spent, candidates racing) per look
    confidence: float = 95.0
    forces: dict = field(default_factory=dict)  # candidate name → its force (a dict or a library name / file)

    def table(self):
        return self.frame

    def force(self, candidate: str):
        """The force of a candidate, as ``matrix``, ``compare`` and ``rank`` take it."""
        return self.forces[candidate]

    def pareto(self):
        """The candidates no other beats on both points (fewer or equal) and score (higher): the front, by points."""
        f = self.frame.dropna(subset=["points"]).sort_values(["points", "score"], ascending=[True, False],
                                                             kind="stable")
        best, keep = -math.inf, []
        for idx, row in f.iterrows():
            if row.score > best:
                keep.append(idx)
                best = row.score
        return self.frame.loc[keep].reset_index(drop=True)

    def reweight(self, meta) -> ListSearchResult:
        """The candidates re-scored for new opponent weights (a list in the opponents' order, or a dict by
        opponent name) without new trials.  Confirmed candidates use their confirmation trials, the others
        their race trials; no guarantee holds for weights the race did not use, and a note names every dropped
        candidate whose Hoeffding upper bound (docs/list-search.md) reaches the new best's lower bound: it
        could now win, so race again."""
        import pandas as pd

        from . import intervals

        w = np.array([meta[o] for o in self.opponents] if isinstance(meta, dict) else list(meta), float)
        if len(w) != len(self.opponents) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise UserError("reweight", "meta", f"{list(meta)}", f"{len(self.opponents)} positive finite weights")
        w = w / w.sum()
        rows = []
        alpha = 1 - self.confidence / 100
        for i, row in self.frame.iterrows():
            r = row.to_dict()
            if i in self.confirm_successes:
                k = self.confirm_successes[i]
                est, lo, hi = intervals.linear(w, k, [self.confirm_trials] * len(w))
                r.update(score=100 * est, ci95_lo=100 * lo, ci95_hi=100 * hi)
            else:
                n = self.race_trials[i]
                r.update(score=100 * float(w @ (self.race_successes[i] / np.maximum(n, 1))),
                         ci95_lo=math.nan, ci95_hi=math.nan)
            r["per_100_points"] = 100 * r["score"] / r["points"] if r["points"] else math.nan
            rows.append(r)
        frame = pd.DataFrame(rows).sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
        frame["rank"] = np.arange(1, len(frame) + 1)
        frame["status"] = ["reweighted"] * len(frame)
        confirmed = [i for i in range(len(self.frame)) if i in self.confirm_successes]
        best_lo = max(100 * intervals.linear(w, self.confirm_successes[i], [self.confirm_trials] * len(w))[1]
                      for i in confirmed) if confirmed else -math.inf
        notes = ["re-scored for new weights without new trials: no guarantee (race again for one)"]
        k = len(self.frame)
        for i, row in self.frame.iterrows():
            if i in self.confirm_successes:
                continue
            n = float(self.race_trials[i].min())
            est = 100 * float(w @ (self.race_successes[i] / max(n, 1)))
            half = 100 * math.sqrt(float(w @ w) / max(n, 1) * math.log(2 * k / alpha) / 2)
            if est + half >= best_lo:
                notes.append(f"{row.candidate} could now win (upper bound {est + half:.1f} ≥ {best_lo:.1f})")
        out = ListSearchResult(title=self.title + " (reweighted)", frame=frame,
                               guarantee={"met": False, "statement": notes[0]}, race=self.race,
                               enumeration=self.enumeration, run=self.run, notes=notes, opponents=self.opponents,
                               weights=w)
        out.sentences = notes
        return out

    def plot(self):
        """Points against meta score with intervals (dropped grey, confirmed in colour, #1 marked, the Pareto
        front as a step line); beside it, the candidates still racing against trials spent."""
        from matplotlib.ticker import LogFormatter

        from ..output.plots import detached_figure

        fig = detached_figure(figsize=(12, 5))
        ax, side = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1.3]})
        f = self.frame.dropna(subset=["points"])
        dropped = f[f.status == "dropped"]
        ax.scatter(dropped.points, dropped.score, s=8, color="0.75", label="dropped by the race")
        shown = f[f.status != "dropped"]
        ok = shown.ci95_lo.notna()
        ax.errorbar(shown.points[ok], shown.score[ok],
                    yerr=[shown.score[ok] - shown.ci95_lo[ok], shown.ci95_hi[ok] - shown.score[ok]],
                    fmt="o", color="tab:blue", capsize=3, label="confirmed (95 % interval)")
        front = self.pareto()
        ax.step(front.points, front.score, where="post", color="tab:green", lw=1, label="Pareto front")
        best = f[f.status == "best"]
        if len(best):
            ax.scatter(best.points, best.score, marker="*", s=220, color="tab:red", zorder=5, label="#1")
        ax.set_xlabel("points")
        ax.set_ylabel("meta score (%)")
        ax.set_title(self.title[:90], fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
        if self.history:
            t, n = zip(*self.history)
            side.step(t, n, where="post", color="tab:blue", marker="o", markersize=3)
            side.set_yscale("log")
            # plain-text tick labels: the default ones are math markup, drawn as written where user text is literal
            side.yaxis.set_major_formatter(LogFormatter())
            side.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
        side.set_xlabel("trials spent")
        side.set_ylabel("candidates racing")
        fig.tight_layout()
        return fig

    def sensitivity(self) -> list[dict]:
        """Meta sensitivity: for each confirmed rival of #1, the smallest share of the meta's weight (percent) that,
        moved from the opponents where the rival does worst against #1 to the one where it does best, lets it draw
        level with #1 (``moved``; None where it trails #1 against every opponent, so no weights make it win), and
        from where to where.  From the confirmation runs' estimates: no guarantee holds for other weights."""
        rows = sorted(self.confirm_successes)
        if len(rows) < 2 or self.weights is None or not self.confirm_trials:
            return []
        best, w = rows[0], np.asarray(self.weights, float)
        chances = {i: np.asarray(self.confirm_successes[i], float) / self.confirm_trials for i in rows}
        out = []
        for i in rows[1:]:
            moved, sources, target = weight_to_overtake(chances[i] - chances[best], w)
            out.append({"rival": str(self.frame.iloc[i].candidate), "moved": moved,
                        "from": [self.opponents[j] for j in sources],
                        "to": None if target is None else self.opponents[target]})
        return out

    def to_dict(self) -> dict:
        rows = json.loads(self.frame.to_json(orient="records"))
        pareto = list(self.pareto().candidate) if "points" in self.frame else []
        return {"title": self.title, "ranking": rows, "guarantee": self.guarantee, "race": self.race,
                "pareto": pareto, "sensitivity": self.sensitivity(), "enumeration": self.enumeration,
                "notes": self.notes, "sentences": self.sentences, "run": self.run}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=_plain)


def enumerate_detachments(army: str, *, max_points: int | None = None, points: int | None = None,
                          formations=None, upgrades=None, caps: dict | None = None, owned: dict | None = None):
    """The candidate table of ``army`` (no trials): candidate, formation, upgrades, points; a ``notes``
    attribute says what was left out and why."""
    import pandas as pd

    from ..intake.arguments import check_instance, check_name, check_whole
    from ..epic.library.upgrades import enumerate_detachments as enumerate_

    check_name("army", army)
    check_whole("max_points", max_points, 0, 100_000, none_ok=True)
    check_whole("points", points, 0, 100_000, none_ok=True)
    for name, value in (("formations", formations), ("upgrades", upgrades)):
        check_instance(name, value, (list, tuple, type(None)), "None or a list of names")
    for name, value in (("caps", caps), ("owned", owned)):
        check_instance(name, value, (dict, type(None)), "None or a table of name = count")
    notes: list[str] = []
    try:
        found = enumerate_(army, max_points=max_points, points=points, formations_filter=formations,
                           upgrades_filter=upgrades, caps=caps, owned=owned, notes=notes)
    except ValueError as exc:
        raise UserError("enumerate_detachments", "army", str(exc), None) from None
    frame = pd.DataFrame([{"candidate": d.name, "formation": d.formation, "upgrades": d.upgrades_label,
                           "points": d.points} for d in found], columns=["candidate", "formation", "upgrades",
                                                                         "points"])
    frame.attrs["notes"] = notes
    return frame


def _plain(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return None if not math.isfinite(x) else float(x)
    raise TypeError(type(x))


def plan(defn: ListSearchDefinition, source: str = "list-search", resolve=lambda p: p) -> dict:
    """The candidates and the planned trials, without running anything (``--dry-run``)."""
    notes: list[str] = []
    cands = candidates_of(defn, resolve, source, notes)
    _check(defn, len(cands), source)
    per_formation: dict[str, int] = {}
    per_upgrade: dict[str, int] = {}
    for c in cands:
        per_formation[c.formation] = per_formation.get(c.formation, 0) + 1
        for u in filter(None, c.upgrades.split(" + ")):
            per_upgrade[u] = per_upgrade.get(u, 0) + 1
    J = len(defn.opponents)
    race = Race(None, len(cands), [o.weight for o in defn.opponents], delta=defn.indifference,
                confidence=defn.confidence)
    screen = len(cands) * J * race.screen_trials
    return {"candidates": len(cands), "opponents": J, "matchups": len(cands) * J,
            "per_formation": per_formation, "per_upgrade": per_upgrade,
            "planned_screen_trials": screen,
            "planned_first_stage_trials": len(cands) * J * race.n0 * race.batch_trials,
            "rank_default_trials": len(cands) * J * 100_000, "notes": notes,
            "names": [c.name for c in cands]}


def list_search(definition, *, seed: int = 0, top: int = 5, indifference: float | None = None,
                confidence: float | None = None, max_trials: int | None = None, threads: int | None = None,
                reverse: bool = False, source: str | None = None, executor=None,
                **keys) -> ListSearchResult:
    """Race the candidates of ``definition`` (a file path or a dict of the definition keys; keyword keys
    override) against its weighted meta; see docs/list-search.md."""
    import pandas as pd

    from ..intake.arguments import check_flag, check_instance, check_whole
    from ..intake.run_limits import MAX_SEED, MAX_THREADS, MAX_TRIALS

    check_instance("definition", definition, (str, Path, dict), "a definition file (str or pathlib.Path) or a dict")
    check_whole("seed", seed, 0, MAX_SEED)
    check_whole("top", top, 1, 10)
    check_whole("max_trials", max_trials, 1, MAX_TRIALS, none_ok=True)
    check_whole("threads", threads, 1, MAX_THREADS, none_ok=True)
    check_flag("reverse", reverse)
    for name, value in (("indifference", indifference), ("confidence", confidence)):
        check_instance(name, value, (int, float, type(None)), "a number, or None for the definition's")
    started = time.perf_counter()
    base_dir = Path(".")
    if isinstance(definition, (str, Path)):
        data, source = read_toml(definition)
        base_dir = Path(str(source)).parent
    else:
        data, source = dict(definition or {}), source or "list-search"
    data.update(keys)
    if indifference is not None:
        data["indifference"] = indifference
    if confidence is not None:
        data["confidence"] = confidence
    defn = validate(ListSearchDefinition, data, str(source))

    def resolve(p):
        return p if str(p).startswith("netea:") else str(base_dir / p)

    notes: list[str] = []
    cands = candidates_of(defn, resolve, str(source), notes)
    _check(defn, len(cands), str(source))
    order = list(range(len(cands)))[::-1] if reverse else list(range(len(cands)))
    system, base_model = api._matchup_system(resolve(defn.base) if defn.base else None, str(source))
    roles = [o.as_ or defn.side for o in defn.opponents]
    forces = [system.force(cands[i].force, defn.side) for i in order]
    for i, fo in zip(order, forces):  # a hand-written candidate: its force's name and points
        if cands[i].points is None:
            pts = [fm.get("points") for fm in fo.data["formations"]]
            cands[i].points = None if None in pts else sum(pts)
            cands[i].name = cands[i].formation = fo.name
    opps = [system.force(resolve(o.force) if isinstance(o.force, str) else o.force,
                         "defender" if r == "attacker" else "attacker")
            for o, r in zip(defn.opponents, roles)]
    forces, opps = [_resolved(f, notes) for f in forces], [_resolved(o, notes) for o in opps]
    if defn.plan is not None:
        forces = api._with_plans(system, forces, {"plan": defn.plan, "action": defn.action}, defn.side, str(source),
                                 "candidates")
    weights = np.array([o.weight for o in defn.opponents], float)
    evaluate = KernelEvaluator(system, forces, opps, roles, base_model, seed, threads, defn.objective)
    if executor is not None and type(executor).__name__ != "LocalExecutor":
        evaluate.executor = executor
    prepared = time.perf_counter()
    race = Race(evaluate, len(cands), weights, delta=defn.indifference, confidence=defn.confidence, top=top,
                max_trials=max_trials, tiebreak=order)
    res = race.run()
    gains, base_alone = _gains_over_base(defn, res, forces, opps, roles, system, base_model, seed, threads, weights,
                                         race) if defn.add_to and res.resolved else ({}, None)
    ran = time.perf_counter()
    # back to canonical order (a reversed run must give the same answer)
    canon = np.array(order)
    delta = defn.indifference
    rows = []
    for t, i in enumerate(canon):
        c = cands[i]
        st = status(res, t, delta)
        est, lo, hi = res.score.get(t, (float(res.race_mean[t]), math.nan, math.nan))
        b, blo, bhi = res.behind.get(t, (math.nan, math.nan, math.nan))
        plan = {} if defn.plan is None else {"plan": _plan_played(evaluate, int(t))}
        rows.append({"candidate": c.name, "formation": c.formation, "upgrades": c.upgrades, **plan, "points": c.points,
                     "score": est, "ci95_lo": lo, "ci95_hi": hi,
                     "per_100_points": 100 * est / c.points if c.points else math.nan,
                     "behind_best": b, "behind_lo": blo, "behind_hi": bhi, "status": st,
                     "trials_per_opponent": int(res.trials_per_opponent[t]), "_t": t,
                     **({} if not defn.add_to else dict(zip(("gain_over_base", "gain_lo", "gain_hi"),
                                                             gains.get(t, (math.nan,) * 3)))),
                     "_order": ({"best": 0, "within": 1, "behind": 1, "racing": 2}.get(st, 3), -est, c.name)})
    rows.sort(key=lambda r: r.pop("_order"))
    position = [r.pop("_t") for r in rows]  # race index of each frame row
    frame = pd.DataFrame(rows)
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    block = guarantee(res, delta, defn.confidence)
    race_block = {"trials": res.trials, "selection_trials": res.selection_trials, "naive_trials": res.naive_trials,
                  "rank_trials": res.rank_trials, "looks": res.looks, "dropped_per_look": res.dropped_per_look,
                  "batch_trials": res.batch_trials, "seed": seed}
    per_formation: dict[str, int] = {}
    for c in cands:
        per_formation[c.formation] = per_formation.get(c.formation, 0) + 1
    enumeration = {"candidates": len(cands), "opponents": len(opps), "army": defn.army, "max_points": defn.max_points,
                   "per_formation": per_formation}
    if defn.add_to:
        enumeration.update(add_to=defn.add_to, points_left=defn.points_left, base_alone_score=base_alone)
    notes += res.notes
    result = ListSearchResult(title=defn.title or f"{len(cands)} candidates against a meta of {len(opps)}",
                              frame=frame, guarantee=block, race=race_block, enumeration=enumeration,
                              notes=notes,
                              run={"prepare_s": prepared - started, "race_s": ran - prepared,
                                   "total_s": time.perf_counter() - started},
                              opponents=[o.name for o in opps], weights=weights / weights.sum(),
                              race_successes=res.race_successes[position],
                              race_trials=np.repeat((res.trials_per_opponent[position]
                                                     - np.array([res.confirm_trials if t in res.confirm_successes
                                                                 else 0 for t in position]))[:, None],
                                                    len(opps), axis=1),
                              confirm_successes={row: res.confirm_successes[t] for row, t in enumerate(position)
                                                 if t in res.confirm_successes},
                              confirm_trials=res.confirm_trials, history=res.history, confidence=defn.confidence,
                              forces={c.name: c.force for c in cands})
    result.sentences = sentences(result, delta, PLAN_ASSUMES if defn.plan is not None else ASSUMES)
    return result


def _sensitivity_sentence(result: ListSearchResult) -> list[str]:
    """The rival nearest to overtaking #1 when the meta changes, in one sentence (none with one opponent)."""
    found = [s for s in result.sensitivity() if s["moved"] is not None and s["to"] is not None]
    if len(result.opponents) < 2 or not result.sensitivity():
        return []
    if not found:
        return ["Meta sensitivity: no confirmed rival beats #1 against any one of these opponents, so no weights "
                "of this meta put it ahead (confirmation estimates)."]
    s = min(found, key=lambda s: s["moved"])
    return [f"Meta sensitivity: {s['rival']} draws level with #1 if {s['moved']:.0f} % of the meta's weight moves "
            f"from {' and '.join(s['from'])} to {s['to']} (confirmation estimates, no guarantee for other weights)."]


def weight_to_overtake(lead, weights) -> tuple[float | None, list[int], int | None]:
    """The smallest share of the meta's weight (percent of the total) whose move lets a rival draw level, given
    ``lead[j]`` = the rival's chance minus #1's against opponent j and the normalised ``weights``: all of it goes to
    the opponent where the rival leads most, taken first from where it trails most (each unit of weight moved
    from j to b raises the rival's lead by ``lead[b] − lead[j]``, so this order moves the least).  (percent, the
    opponents weight is taken from, the one it goes to); (None, [], None) when the rival leads nowhere."""
    lead, weights = np.asarray(lead, float), np.asarray(weights, float)
    gap = float(weights @ lead)
    if gap >= 0:
        return 0.0, [], None
    target = int(np.argmax(lead))
    if lead[target] <= 0:
        return None, [], None
    moved, sources = 0.0, []
    for j in np.argsort(lead, kind="stable"):
        if j == target or gap >= 0:
            continue
        gain = lead[target] - lead[j]
        take = min(float(weights[j]), -gap / gain)
        moved, gap = moved + take, gap + take * gain
        sources.append(int(j))
    return 100 * moved, sources, target


def sentences(result: ListSearchResult, delta: float, assumes: str = ASSUMES) -> list[str]:
    """What a player reads first: the best, by how much, how sure, what it cost, what the model assumes."""
    f, g, r = result.frame, result.guarantee, result.race
    out = []
    if g["met"]:
        best = f.iloc[0]
        out.append(f"Best: {best.candidate}, meta score {best.score:.1f} % [{best.ci95_lo:.1f}, {best.ci95_hi:.1f}].")
        if len(f) > 1 and f.iloc[1].status in ("within", "behind"):
            second = f.iloc[1]
            out.append(f"#1 − #2 ({second.candidate}): {second.behind_best:.2f} points "
                       f"[{second.behind_lo:.2f}, {second.behind_hi:.2f}] (paired 95 % interval).")
        within = int((f.status == "within").sum())
        if within:
            out.append(f"{within} other choice{'s are' if within > 1 else ' is'} within {delta:g} "
                       f"point{'' if delta == 1 else 's'} of the best: count {'them' if within > 1 else 'it'} as "
                       "equally good.")
        out.append(g["statement"])
        out += _sensitivity_sentence(result)
        if "gain_over_base" in f and f.iloc[0].gain_over_base == f.iloc[0].gain_over_base:
            e, best = result.enumeration, f.iloc[0]
            out.append(f"Added to {e['add_to']}: {best.candidate} gains {best.gain_over_base:.1f} points "
                       f"[{best.gain_lo:.1f}, {best.gain_hi:.1f}] (paired 95 % interval) over {e['add_to']} "
                       f"alone, whose meta score is {e['base_alone_score']:.1f} %.")
    else:
        out.append(g["statement"] + "; no guarantee: raise --max-trials or --indifference.")
    out.append(f"Spent {r['trials']:,} trials: {r['selection_trials']:,} to decide, the rest to confirm the top "
               f"on fresh dice; deciding with the same guarantee without racing takes {r['naive_trials']:,}, "
               f"rank's defaults {r['rank_trials']:,}.")
    out.append("The model assumes " + assumes + ".")
    return out
