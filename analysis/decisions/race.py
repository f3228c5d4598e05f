"""Racing candidates against a weighted meta on common dice: screen, Kim & Nelson's KN, confirmation.

Pure numpy/scipy; the dice come from an *evaluator*, so the statistics are tested on a stub system
(:class:`StubSystem`) and run unchanged on the Epic kernel.  An evaluator is a callable
``evaluate(candidates, key, trials) -> counts`` returning, for each candidate index in ``candidates``
and each opponent ``j``, the successes in ``trials`` trials drawn from the stream ``(key, j)``.  The
key never depends on the candidate (common random numbers): every candidate meets opponent ``j`` on
the same dice, so the variance of a difference between close candidates is small.

A candidate's score is ``100 · Σ_j w_j P_j`` (points, weights normalised to sum 1).  Procedure
(docs/list-search.md):

1. **Screen** — ``screen_trials`` per opponent; each score gets a Hoeffding interval at
   ``α_screen / (2k)`` per side; a candidate whose upper bound is below another's lower bound is
   dropped.  The union bound holds whatever the correlation between candidates.
2. **KN** (Kim & Nelson 2001, fully sequential, indifference zone δ) on the survivors at ``α_KN``:
   observations are batch scores on fresh keys ``("kn", b)``, first stage ``n0`` batches,
   ``η = ½[(2α/(k−1))^(−2/(n0−1)) − 1]``, ``h² = 2η(n0−1)``, candidate ``i`` eliminated at stage ``r``
   when ``X̄_i < X̄_l − max(0, δ/(2r)·(h²S²_il/δ² − r))`` for some ``l``.
3. **Confirmation** of the winner and the next (top 5, up to 10 while within δ) on fresh keys
   ``("confirm", b)``; its numbers are the ones printed (the race's estimate of its winner is biased up).

``α_screen = α_KN = α/2``: if one candidate is at least δ better than every other, it is named first
with probability at least ``confidence`` (batch means near normal).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .intervals import t_interval

PHASES = {"screen": 1, "kn": 2, "confirm": 3, "gain": 4}  # first element of every stream key
RANK_TRIALS = 100_000  # rank's default trials per cell, for the "what was spent" comparison
MAX_BATCH_TRIALS = 4096
MIN_EXPECTED = 10  # a batch holds at least this many expected successes and failures (near-normal means)


def statement(delta: float, confidence: float) -> str:
    """The guarantee sentence, exactly as strong as the procedure and no stronger."""
    pts = f"{delta:g} point{'' if delta == 1 else 's'}"
    return (f"If one choice is at least {pts} better than every other, this search names it first "
            f"at least {confidence:g} % of the time; choices within {pts} of it count as equally good.")


def kn_constants(k: int, n0: int, alpha: float) -> tuple[float, float]:
    """KN's ``η`` and ``h²`` for ``k`` systems, first stage ``n0`` and error ``α`` (Kim & Nelson 2001, c = 1)."""
    eta = 0.5 * ((2 * alpha / max(k - 1, 1)) ** (-2 / (n0 - 1)) - 1)
    return eta, 2 * eta * (n0 - 1)


def hoeffding_half_width(weights, trials: int, k: int, alpha: float) -> float:
    """Half-width (points) of a two-sided Hoeffding interval of one weighted score, at ``α/k`` per candidate."""
    w = np.asarray(weights, float)
    return 100 * math.sqrt(float(w @ w) / trials * math.log(2 * k / alpha) / 2)


def single_stage_trials(k: int, variance: float, delta: float, alpha: float) -> int:
    """Trials per candidate and opponent of the single-stage plan with the same guarantee, without racing.

    Independent dice, Bonferroni over the ``k − 1`` comparisons with the best: ``n`` with
    ``Φ(−δ/√(2σ²/n)) ≤ α/(k−1)``, ``σ²`` the per-trial variance of a score (points²).
    """
    if k < 2:
        return 0
    z = float(stats.norm.isf(alpha / (k - 1)))
    return max(1, math.ceil(2 * variance * (z / delta) ** 2))


@dataclass
class RaceResult:
    """What the race did and what it found; ``scores``/intervals in points."""

    winner: int | None  # None: budget stop before the race resolved
    resolved: bool
    confirmed: list[int]  # candidate indices confirmed, winner first
    score: dict[int, tuple[float, float, float]]  # confirmed: estimate, 95 % interval
    behind: dict[int, tuple[float, float, float]]  # confirmed: winner − candidate, paired 95 % interval
    race_mean: np.ndarray  # every candidate's last race estimate (screen or KN), points
    trials_per_opponent: np.ndarray  # every candidate's trials per opponent, all phases
    dropped_at: dict[int, str]  # "screen" or "kn look r"
    looks: int
    dropped_per_look: list[int]
    trials: int  # candidate × opponent trials, all phases
    selection_trials: int  # of which the screen and KN (what the guarantee costs; the rest confirms)
    naive_trials: int  # the single-stage plan with the same guarantee (independent dice, no racing)
    rank_trials: int  # rank's defaults
    batch_trials: int
    notes: list[str] = field(default_factory=list)
    survivors: list[int] = field(default_factory=list)  # still racing at a budget stop
    race_successes: np.ndarray | None = None  # (k, J) successes per opponent in the screen and KN
    confirm_successes: dict[int, np.ndarray] = field(default_factory=dict)  # confirmed: (J,) successes
    confirm_trials: int = 0  # per opponent, each confirmed candidate
    history: list[tuple[int, int]] = field(default_factory=list)  # (trials spent, candidates racing) per look
    spread: float = 0.0  # points between the survivors' race estimates at a budget stop


class Race:
    """Race ``k`` candidates on ``evaluate`` against opponents weighted ``weights``.

    ``tiebreak``: a rank per candidate that settles exact ties (default: the index), so that a caller who passes
    each candidate's canonical position gets the same answer in any order.
    ``common_dice=False`` (only to measure what pairing buys) draws each candidate on its own stream
    ``(*key, 1 + i)``.  ``max_trials`` stops the race once the next look would exceed it.
    """

    def __init__(self, evaluate, k: int, weights, *, delta: float = 1.0, confidence: float = 95.0,
                 screen_trials: int = 1024, batch_trials: int = 128, n0: int = 10, top: int = 5,
                 confirm_batches: int = 16, confirm_trials: int = 2048, max_trials: int | None = None,
                 common_dice: bool = True, screen: bool = True, tiebreak=None):
        w = np.asarray(weights, float)
        self.evaluate, self.k, self.w = evaluate, int(k), w / w.sum()
        self.J = len(w)
        self.delta, self.confidence = float(delta), float(confidence)
        self.alpha = 1 - confidence / 100
        self.screen_trials, self.batch_trials, self.n0 = screen_trials, batch_trials, n0
        self.top, self.confirm_batches = top, confirm_batches
        self.confirm_size = max(1, confirm_trials // confirm_batches)
        self.max_trials, self.common_dice, self.use_screen = max_trials, common_dice, screen
        # exact ties (two candidates with the same outcomes on the same dice) go to the lowest tiebreak, so that
        # the answer does not depend on the order the candidates are given in
        self.tiebreak = np.arange(self.k) if tiebreak is None else np.asarray(tiebreak)
        self.trials = 0
        self.per_candidate = np.zeros(self.k, np.int64)
        self.successes = np.zeros((self.k, self.J))
        self.history: list[tuple[int, int]] = [(0, self.k)]
        self.notes: list[str] = []

    # -- dice ---------------------------------------------------------------------------------------------
    def _draw(self, cands: np.ndarray, key: tuple, n: int) -> np.ndarray:
        """Success fractions, shape (len(cands), J)."""
        if self.common_dice:
            counts = np.asarray(self.evaluate(cands, key, n), float)
        else:
            counts = np.vstack([np.asarray(self.evaluate(cands[t:t + 1], (*key, 1 + int(c)), n), float)
                                for t, c in enumerate(cands)])
        self.trials += len(cands) * self.J * n
        self.per_candidate[cands] += n
        self.successes[cands] += counts
        return counts / n

    def _release(self, cands) -> None:
        """Tell an evaluator that can free a candidate's prepared matchups that it races no more."""
        release = getattr(self.evaluate, "release", None)
        if release is not None and len(cands):
            release(cands)

    def _scores(self, fractions: np.ndarray) -> np.ndarray:
        return 100 * fractions @ self.w

    # -- phases -------------------------------------------------------------------------------------------
    def _screen(self, alive: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        frac = self._draw(alive, (PHASES["screen"], 0), self.screen_trials)
        score = self._scores(frac)
        half = hoeffding_half_width(self.w, self.screen_trials, len(alive), alpha)
        keep = score + half >= (score - half).max()
        return alive[keep], score, frac

    def _batch_size(self, frac: np.ndarray) -> int:
        """Batch trials per opponent: enlarged until every opponent whose chance pooled over the survivors is
        neither 0 nor 1 expects ``MIN_EXPECTED`` successes and failures per batch (batch means near normal)."""
        p = frac.mean(axis=0)
        m = np.minimum(p, 1 - p)
        m = m[m > 0]
        size = self.batch_trials
        if len(m):
            need = math.ceil(MIN_EXPECTED / float(m.min()))
            if need > size:
                size = min(MAX_BATCH_TRIALS, need)
                self.notes.append(f"batches enlarged to {size} trials per opponent: a pooled chance is "
                                  f"{100 * float(m.min()):.2g} % from 0 or 1 (batch means near normal)")
        return size

    def run(self) -> RaceResult:
        k, alpha = self.k, self.alpha
        race_mean = np.full(k, np.nan)
        dropped_at: dict[int, str] = {}
        dropped_per_look: list[int] = []
        alive = np.arange(k)
        screen_on = self.use_screen and k > 2
        alpha_kn = alpha / 2 if screen_on else alpha
        frac = None
        if screen_on:
            alive, score, frac = self._screen(alive, alpha / 2)
            race_mean[:] = score
            for i in np.setdiff1d(np.arange(k), alive):
                dropped_at[int(i)] = "screen"
            self._release(np.setdiff1d(np.arange(k), alive))
            dropped_per_look.append(k - len(alive))
        self.history.append((self.trials, len(alive)))
        size = self._batch_size(frac[alive] if frac is not None else np.full((1, self.J), 0.5))
        variance = self._naive_variance(frac)
        naive = k * self.J * single_stage_trials(k, variance, self.delta, alpha)
        looks = 1 if screen_on else 0
        resolved, winner = True, None
        if len(alive) == 1:
            winner = int(alive[0])
        else:
            winner, resolved, looks, race_mean = self._kn(alive, alpha_kn, size, race_mean, dropped_at,
                                                          dropped_per_look, looks)
        result = RaceResult(winner=winner, resolved=resolved, confirmed=[], score={}, behind={},
                            race_mean=race_mean, trials_per_opponent=self.per_candidate, dropped_at=dropped_at,
                            looks=looks, dropped_per_look=dropped_per_look, trials=0,
                            selection_trials=self.trials, naive_trials=naive,
                            rank_trials=k * self.J * RANK_TRIALS, batch_trials=size, notes=self.notes,
                            race_successes=self.successes.copy(), history=self.history)
        if resolved:
            self._confirm(result, race_mean)
        else:
            result.survivors = [int(i) for i in self._survivors]
            s = race_mean[self._survivors]
            result.spread = float(s.max() - s.min())
        result.trials = self.trials
        result.trials_per_opponent = self.per_candidate.copy()
        return result

    def _naive_variance(self, frac) -> float:
        """Per-trial variance (points²) of a score for the single-stage plan: the largest among candidates
        from the screen's estimates, else the worst case ``p = ½``."""
        p = frac if frac is not None else np.full((1, self.J), 0.5)
        return float((10_000 * (p * (1 - p)) @ (self.w ** 2)).max())

    def _kn(self, alive, alpha, size, race_mean, dropped_at, dropped_per_look, looks):
        k_kn = len(alive)
        eta, h2 = kn_constants(k_kn, self.n0, alpha)
        idx = np.arange(k_kn)
        obs = [self._scores(self._draw(alive, (PHASES["kn"], b), size)) for b in range(self.n0)]
        X = np.array(obs)  # (n0, k_kn), rows = batches
        D = X[:, :, None] - X[:, None, :]
        S2 = D.var(axis=0, ddof=1)  # pairwise variances of differences, first stage
        sums = X.sum(axis=0)
        r = self.n0
        alive_mask = np.ones(k_kn, bool)
        looks += 1
        limit = math.floor(h2 * float(S2.max()) / self.delta ** 2) + 1  # KN's maximal stage
        while True:
            mean = sums / r
            W = np.maximum(0.0, self.delta / (2 * r) * (h2 * S2 / self.delta ** 2 - r))
            others = np.where(alive_mask[None, :] & ~np.eye(k_kn, dtype=bool), mean[None, :] - W, -np.inf)
            out = alive_mask & (mean < others.max(axis=1))
            if r >= limit and not out.any() and alive_mask.sum() > 1:
                out = alive_mask & (mean < mean[alive_mask].max())  # W = 0: exact ties keep the lowest tiebreak
                tied = idx[alive_mask & ~out]
                if len(tied) > 1:
                    first = tied[np.argmin(self.tiebreak[alive[tied]])]
                    out = alive_mask & (idx != first)
            for t in idx[out]:
                dropped_at[int(alive[t])] = f"kn look {looks}"
                race_mean[alive[t]] = mean[t]
            self._release(alive[out])
            dropped_per_look.append(int(out.sum()))
            alive_mask &= ~out
            self.history.append((self.trials, int(alive_mask.sum())))
            if alive_mask.sum() == 1:
                t = int(idx[alive_mask][0])
                race_mean[alive[t]] = mean[t]
                return int(alive[t]), True, looks, race_mean
            cands = alive[alive_mask]
            if self.max_trials is not None and self.trials + len(cands) * self.J * size > self.max_trials:
                race_mean[cands] = mean[alive_mask]
                self._survivors = cands
                return None, False, looks, race_mean
            sums[alive_mask] += self._scores(self._draw(cands, (PHASES["kn"], r), size))
            r += 1
            looks += 1

    def _confirm(self, result: RaceResult, race_mean: np.ndarray) -> None:
        """The winner and the best of the rest (top N, up to 10 within δ) on fresh dice."""
        w = result.winner
        order = [i for i in np.lexsort((self.tiebreak, -race_mean)) if i != w]
        near = [i for i in order if race_mean[i] >= race_mean[w] - self.delta]
        rest = order[:max(self.top - 1, min(len(near), 9))]
        chosen = np.array([w, *rest], dtype=np.int64)
        before = self.successes[chosen].copy()
        batches = np.array([self._scores(self._draw(chosen, (PHASES["confirm"], b), self.confirm_size))
                            for b in range(self.confirm_batches)])  # (B, len(chosen))
        result.confirm_successes = {int(c): self.successes[c] - before[t] for t, c in enumerate(chosen)}
        result.confirm_trials = self.confirm_batches * self.confirm_size
        for t, c in enumerate(chosen):
            est, lo, hi = t_interval(batches[:, t])
            result.score[int(c)] = (est, max(0.0, lo), min(100.0, hi))
            result.behind[int(c)] = t_interval(batches[:, 0] - batches[:, t])
        result.confirmed = [int(c) for c in chosen]


def guarantee(result: RaceResult, delta: float, confidence: float) -> dict:
    """The guarantee block: met only when the race resolved; a budget stop says what is unresolved instead."""
    if result.resolved:
        return {"indifference": delta, "confidence": confidence, "met": True,
                "statement": statement(delta, confidence)}
    return {"indifference": delta, "confidence": confidence, "met": False,
            "statement": f"not resolved: {len(result.survivors)} candidates within {result.spread:.2f} points"}


def status(result: RaceResult, i: int, delta: float) -> str:
    """``best``, ``within`` (δ of the best, by the paired interval), ``behind`` or ``dropped``."""
    if i == result.winner:
        return "best"
    if i in result.behind:
        return "within" if result.behind[i][1] <= delta else "behind"
    if not result.resolved and i in result.survivors:
        return "racing"
    return "dropped"


class StubSystem:
    """Known Bernoulli chances ``p[i, j]`` on common stream keys, for tests without the kernel.

    Trial ``t`` of ``(seed, key, j)`` succeeds for candidate ``i`` when a uniform is below ``p[i, j]``.
    The uniform is the key's shared one in a fraction ``shared`` of the trials (the same for every
    candidate, as when two forces roll the same dice) and candidate ``ids[i]``'s own one otherwise (the
    dice fall out of step, as when forces consume them differently).
    """

    def __init__(self, p, seed: int = 0, shared: float = 1.0, ids=None):
        self.p = np.asarray(p, float)
        self.seed, self.shared = seed, shared
        self.ids = np.arange(len(self.p)) if ids is None else np.asarray(ids)

    def __call__(self, cands, key, n):
        cands = np.asarray(cands)
        out = np.empty((len(cands), self.p.shape[1]))
        for j in range(self.p.shape[1]):
            rng = np.random.default_rng([self.seed, *key, j])
            u = np.broadcast_to(rng.random(n), (len(cands), n))
            if self.shared < 1:  # row ids[i] of one draw: each candidate's own dice, whatever the order
                own = rng.random((int(self.ids.max()) + 1, n))[self.ids[cands]]
                u = np.where(rng.random(n) < self.shared, u, own)
            out[:, j] = np.count_nonzero(u < self.p[cands, j][:, None], axis=1)
        return out
