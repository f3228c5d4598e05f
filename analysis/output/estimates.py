"""Estimates with their 95 % intervals: the leaves of every result.

``Probability`` uses the Wilson score interval; ``Distribution`` gives each value's probability
with its Wilson interval plus the mean with a normal-theory interval; ``Mean`` is a plain mean
with its interval.  ``ExactProbability`` and ``ExactDistribution`` hold values computed exactly
(fractions), whose interval is the point itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

Z95 = 1.959963984540054


def wilson_interval(k, n, z: float = Z95):
    """Wilson score interval for k successes out of n (arrays broadcast)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    safe_n = np.where(n > 0, n, 1.0)
    p = k / safe_n
    denom = 1.0 + z * z / safe_n
    centre = (p + z * z / (2 * safe_n)) / denom
    half = z * np.sqrt(p * (1 - p) / safe_n + z * z / (4 * safe_n * safe_n)) / denom
    lo = np.where((n > 0) & (k > 0), np.clip(centre - half, 0.0, 1.0), 0.0)
    hi = np.where((n > 0) & (k < n), np.clip(centre + half, 0.0, 1.0), 1.0)
    return lo, hi


def wilson_half_width(k, n) -> float:
    lo, hi = wilson_interval(k, n)
    return float(np.max((hi - lo) / 2))


@dataclass(frozen=True)
class Probability:
    """k successes in n trials."""

    k: int
    n: int

    @property
    def p(self) -> float:
        return self.k / self.n if self.n else float("nan")

    @property
    def ci95(self) -> tuple[float, float]:
        lo, hi = wilson_interval(self.k, self.n)
        return float(lo), float(hi)

    def to_json(self):
        return {"p": self.p, "ci95": list(self.ci95), "count": int(self.k)}

    def __str__(self):
        """In percent with the 95 % interval, as the command line prints it ("82.77 % [82.61, 82.94]"); the
        fraction is ``.p``."""
        from .labels import percent

        return percent(self.p, *self.ci95)

    __repr__ = __str__


@dataclass(frozen=True)
class Mean:
    """A sample mean with its normal-theory 95 % interval, cut at ``low``, the least value the quantity
    can take (so the interval of a count never reaches below 0)."""

    value: float
    sd: float
    n: int
    low: float = -math.inf

    @property
    def ci95(self) -> tuple[float, float]:
        if self.n <= 1 or math.isnan(self.value):
            return (self.value, self.value)
        half = Z95 * self.sd / math.sqrt(self.n)
        return (max(self.value - half, self.low), self.value + half)

    def to_json(self):
        return None if math.isnan(self.value) else self.value

    def ci95_json(self):
        """The interval as JSON: [low, high], or null with no data."""
        return None if math.isnan(self.value) else [float(x) for x in self.ci95]

    def __str__(self):
        lo, hi = self.ci95
        return f"{self.value:.4f} [{lo:.4f}, {hi:.4f}]"


class Distribution:
    """Histogram of an integer quantity: ``counts[i]`` trials had value ``offset + i``."""

    def __init__(self, counts, offset: int = 0, n: int | None = None):
        counts = np.asarray(counts, dtype=np.int64)
        self.n = int(counts.sum()) if n is None else int(n)
        last = np.flatnonzero(counts)
        keep = int(last[-1]) + 1 if last.size else 1
        self.counts = counts[:keep]
        self.offset = int(offset)

    @property
    def values(self) -> np.ndarray:
        return np.arange(self.offset, self.offset + len(self.counts))

    @property
    def p(self) -> np.ndarray:
        return self.counts / self.n if self.n else np.full(len(self.counts), np.nan)

    @property
    def ci95(self) -> tuple[np.ndarray, np.ndarray]:
        return wilson_interval(self.counts, self.n)

    @property
    def total(self) -> int:
        """Trials that contributed a value (may be fewer than the trials run)."""
        return int(self.counts.sum())

    def mean(self) -> Mean:
        total = self.total
        if total == 0:
            return Mean(float("nan"), float("nan"), 0)
        v = self.values.astype(float)
        m = float((self.counts * v).sum() / total)
        var = float((self.counts * (v - m) ** 2).sum() / max(total - 1, 1))
        return Mean(m, math.sqrt(var), total, low=self.offset)

    def at_least(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """values, P(X >= value), and its Wilson interval."""
        k = np.cumsum(self.counts[::-1])[::-1]
        lo, hi = wilson_interval(k, self.n)
        return self.values, k / max(self.n, 1), lo, hi

    def at_most(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """values, P(X <= value), and its Wilson interval."""
        k = np.cumsum(self.counts)
        lo, hi = wilson_interval(k, self.n)
        return self.values, k / max(self.n, 1), lo, hi

    def to_json(self):
        lo, hi = self.ci95
        return {
            "values": [int(v) for v in self.values],
            "p": [float(x) for x in self.p],
            "ci95": [[float(a), float(b)] for a, b in zip(lo, hi)],
            "mean": self.mean().to_json(),
            "mean_ci95": self.mean().ci95_json(),
        }

    def __str__(self):
        return ", ".join(f"{v}: {p:.3f}" for v, p in zip(self.values, self.p) if p > 0)


class ExactProbability(Probability):
    """A probability computed exactly (``k / n`` is the fraction itself): its interval is the point."""

    @classmethod
    def of(cls, value: Fraction) -> "ExactProbability":
        return cls(value.numerator, value.denominator)

    @property
    def ci95(self) -> tuple[float, float]:
        return self.p, self.p


class ExactDistribution(Distribution):
    """A distribution computed exactly from ``{value: Fraction}`` (values ``offset`` upwards): every
    probability, cumulative probability and the mean have the point itself as interval."""

    def __init__(self, probabilities: dict[int, Fraction]):
        denominator = math.lcm(*(p.denominator for p in probabilities.values()))
        offset = min(probabilities)
        counts = np.zeros(max(probabilities) - offset + 1, np.int64)
        for value, p in probabilities.items():
            counts[value - offset] = p * denominator
        super().__init__(counts, offset, n=denominator)

    @property
    def ci95(self) -> tuple[np.ndarray, np.ndarray]:
        return self.p, self.p

    def mean(self) -> Mean:
        return Mean(float(Fraction(int((self.counts * self.values).sum()), self.n)), 0.0, 0)

    def at_least(self):
        values, p, _, _ = super().at_least()
        return values, p, p, p

    def at_most(self):
        values, p, _, _ = super().at_most()
        return values, p, p, p
