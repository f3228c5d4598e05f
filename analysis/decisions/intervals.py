"""95 % intervals for scores built from several probabilities.

All of them recover variance estimates from Wilson score intervals (MOVER, Zou & Donner 2008),
so a single probability keeps exactly its Wilson interval:

* :func:`linear` — a weighted sum of independent probabilities (meta scores, independent
  differences; for ``p1 - p2`` this is Newcombe's hybrid score interval, method 10 of 1998a);
* :func:`paired_difference` — ``P(A) - P(B)`` from the same trials (Newcombe 1998b, method 10:
  Wilson intervals of both margins with the phi correlation of the paired 2×2 table);
* :func:`combine` — a weighted sum of independent differences that each have an interval;
* :func:`batch_means` — the mean of independent batch estimates (a t-interval), for paired
  differences from chunked runs on common random numbers.
"""
from __future__ import annotations

import math

import numpy as np

from ..output.estimates import wilson_interval


def linear(coefs, successes, trials) -> tuple[float, float, float]:
    """Estimate and MOVER-Wilson 95 % interval of ``sum(c_j * k_j / n_j)`` (independent j)."""
    c = np.asarray(coefs, float)
    k = np.asarray(successes, float)
    n = np.asarray(trials, float)
    p = k / n
    lo, hi = wilson_interval(k, n)
    est = float(c @ p)
    below = np.where(c > 0, p - lo, hi - p) * c
    above = np.where(c > 0, hi - p, p - lo) * c
    return est, est - math.sqrt(float(below @ below)), est + math.sqrt(float(above @ above))


def paired_difference(n11: int, n10: int, n01: int, n00: int) -> tuple[float, float, float]:
    """``P(A) - P(B)`` and its 95 % interval from paired trials (Newcombe's method 10).

    ``n10`` counts trials where A succeeded and B did not, and so on.
    """
    n = n11 + n10 + n01 + n00
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    l1, u1 = (float(x) for x in wilson_interval(n11 + n10, n))
    l2, u2 = (float(x) for x in wilson_interval(n11 + n01, n))
    margins = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    phi = (n11 * n00 - n10 * n01) / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    return d, max(-1.0, d - math.sqrt(max(below, 0.0))), min(1.0, d + math.sqrt(max(above, 0.0)))


def combine(weights, estimates, los, his) -> tuple[float, float, float]:
    """Weighted sum (weights ≥ 0) of independent estimates with intervals (MOVER)."""
    w = np.asarray(weights, float)
    e = np.asarray(estimates, float)
    est = float(w @ e)
    below = w * (e - np.asarray(los, float))
    above = w * (np.asarray(his, float) - e)
    return est, est - math.sqrt(float(below @ below)), est + math.sqrt(float(above @ above))


def paired_variance(n11: int, n10: int, n01: int, n00: int) -> float:
    """Per-trial variance of ``A - B`` from paired trials."""
    n = n11 + n10 + n01 + n00
    d = (n10 - n01) / n
    return (n10 + n01) / n - d * d


def t_interval(estimates) -> tuple[float, float, float]:
    """Mean of B independent batch estimates (or paired batch differences) and its 95 % Student t interval with
    B − 1 degrees of freedom, unclipped."""
    from scipy import stats  # only batch means needs it: matrix, sweep and threshold do not

    x = np.asarray(estimates, float)
    est = float(x.mean())
    half = float(stats.t.ppf(0.975, len(x) - 1)) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return est, est - half, est + half


def batch_means(estimates) -> tuple[float, float, float]:
    """Mean of B independent batch estimates of a difference of chances and its 95 % t-interval, within [−1, 1]."""
    est, lo, hi = t_interval(estimates)
    return est, max(-1.0, lo), min(1.0, hi)
