"""Confidence intervals of the verifier: group rates and the metrics built from them.

This module is the one place where the intervals of :class:`FairnessVerifier` are
computed, so that other sources of uncertainty (e.g. the posterior of the network) can
be combined with the Monte Carlo error here.

* Exact paths: the rates are exact under the network, so every interval is the point
  ``[rate, rate]``.
* Sampling path: the positive rate of a group is the mean of independent Bernoulli
  draws (the model's decision on rows sampled from the network), so its interval is the
  Clopper-Pearson interval at the level ``alpha / (n_intervals * n_looks)``
  (:func:`per_interval_alpha`): a union bound over every interval the fit reports (groups
  times rates) and over every sample size at which the adaptive sampler may look at
  them (a fixed grid), so that with probability at least ``confidence`` every interval
  contains its rate simultaneously, wherever the sampler stops.
* Metrics (:func:`metric_intervals`): bounds derived from the group bounds by interval
  arithmetic, valid (conservative) on the same event.
* Uncertainty of the network (``n_draws > 0``, exact paths): the network's parameters
  given its structure have a Dirichlet posterior; every rate is solved exactly under each
  of ``n_draws`` drawn networks, and every interval (rates and metrics, the metric of
  each draw from the rates of the same draw: :func:`draw_metric_intervals`) is the
  equal-tailed credible interval of the draws at ``credible_level``
  (:func:`credible_bounds`).
* Both (``n_draws > 0``, sampling path): every rate is sampled under every posterior
  draw; the draws' estimates are samples of the posterior predictive distribution of
  the Monte Carlo estimator, so their equal-tailed quantiles hold both the posterior
  spread and the Monte Carlo error. The reported interval is the hull of those
  quantiles and the Monte Carlo interval of the point estimate
  (:func:`hull_bounds`, :func:`combined_metric_intervals`): never narrower than the
  intervals of ``n_draws=0``, and it always contains the point estimate.
"""

from __future__ import annotations

import numpy as np

from ..utils._stats import clopper_pearson_limits
from ._posterior import credible_intervals, metric_draws

__all__ = [
    "clopper_pearson",
    "combined_metric_intervals",
    "credible_bounds",
    "draw_metric_intervals",
    "exact_interval",
    "gap_interval",
    "hold_estimates",
    "hull_bounds",
    "metric_intervals",
    "per_interval_alpha",
    "ratio_interval",
]


def per_interval_alpha(confidence: float, n_intervals: int, n_looks: int) -> float:
    """Error level of one interval at one look (Bonferroni over intervals and looks).

    Parameters
    ----------
    confidence : float
        Joint confidence level of every interval at every look, in (0, 1).
    n_intervals : int
        Number of intervals reported together (groups times rates).
    n_looks : int
        Number of sample sizes at which the adaptive sampler may stop.

    Returns
    -------
    float
        ``(1 - confidence) / (n_intervals * n_looks)``.

    Examples
    --------
    >>> from skfairverify.verification._intervals import per_interval_alpha
    >>> round(per_interval_alpha(0.99, 4, 5), 10)
    0.0005
    """
    return (1.0 - confidence) / (max(n_intervals, 1) * max(n_looks, 1))


def clopper_pearson(k, n, alpha: float):
    """Two-sided Clopper-Pearson interval of a binomial proportion, ``k`` of ``n``.

    Coverage is at least ``1 - alpha`` for every true proportion and every ``n``.

    Parameters
    ----------
    k, n : int or array-like of int
        Successes and trials (``n >= 1``).
    alpha : float
        Error level of the interval.

    Returns
    -------
    low, high : ndarray of float
        ``Beta(alpha/2; k, n-k+1)`` and ``Beta(1-alpha/2; k+1, n-k)`` quantiles, 0 and 1
        at the edges.

    Examples
    --------
    >>> from skfairverify.verification._intervals import clopper_pearson
    >>> low, high = clopper_pearson(0, 10, 0.05)
    >>> float(low), round(float(high), 4)
    (0.0, 0.3085)
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n < 1) or np.any((k < 0) | (k > n)):
        raise ValueError("Clopper-Pearson needs 0 <= k <= n and n >= 1.")
    return clopper_pearson_limits(k, n, alpha)


def exact_interval(rates):
    """``(rates, rates)``: the interval of a rate computed exactly under the network.

    Examples
    --------
    >>> from skfairverify.verification._intervals import exact_interval
    >>> exact_interval([0.2, 0.5])
    (array([0.2, 0.5]), array([0.2, 0.5]))
    """
    rates = np.asarray(rates, dtype=float)
    return rates.copy(), rates.copy()


def _pairs(numerator, denominator, op) -> np.ndarray:
    """``op(numerator_i, denominator_j)`` for every pair of distinct groups ``i != j``."""
    table = op(numerator[:, None], denominator[None, :])
    return table[~np.eye(len(numerator), dtype=bool)]


def gap_interval(low, high) -> tuple[float, float]:
    """Bounds of ``max_a p_a - min_a p_a`` given ``low_a <= p_a <= high_a``.

    Both are attained within the box: the largest gap is ``high_i - low_j`` for two
    distinct groups, the smallest ``max(low) - min(high)`` (0 when the boxes share a
    value). Groups with a NaN bound (no rate) are left out.

    Examples
    --------
    >>> from skfairverify.verification._intervals import gap_interval
    >>> [round(b, 4) for b in gap_interval([0.1, 0.5], [0.2, 0.6])]
    [0.3, 0.5]
    """
    low, high = _present(low, high)
    lower = max(0.0, float(low.max() - high.min()))
    return lower, max(0.0, float(_pairs(high, low, np.subtract).max()))


def ratio_interval(low, high) -> tuple[float, float]:
    """Bounds of ``min_a p_a / max_a p_a`` (1 when every rate is 0) given the bounds.

    The lower bound is ``low_i / high_j`` for the worst two distinct groups, the upper
    ``min(high) / max(low)`` (at most 1).

    Examples
    --------
    >>> from skfairverify.verification._intervals import ratio_interval
    >>> [round(b, 4) for b in ratio_interval([0.1, 0.5], [0.2, 0.6])]
    [0.1667, 0.4]
    """
    low, high = _present(low, high)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = _pairs(low, high, np.divide)
    ratios = np.where(np.isfinite(ratios), ratios, 1.0)  # a 0 maximum: every rate is 0
    top_low = float(low.max())
    upper = 1.0 if top_low <= 0.0 else min(1.0, float(high.min()) / top_low)
    return min(1.0, float(ratios.min())), upper


def _present(low, high):
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    keep = ~(np.isnan(low) | np.isnan(high))
    return low[keep], high[keep]


def metric_intervals(bounds: dict, metrics) -> dict:
    """Interval ``(low, high)`` of every metric in ``metrics`` from the rates' bounds.

    Parameters
    ----------
    bounds : dict
        Rate name -> ``(low, high)`` arrays over the groups (NaN for a group without
        that rate): ``"positive_rate"``, and as the metrics need them
        ``"true_positive_rate"``, ``"false_positive_rate"``, ``"path_specific_rate"``.
    metrics : iterable of str
        The metrics whose intervals to compute.

    Returns
    -------
    dict
        Metric name -> ``(low, high)``: disparate impact and statistical parity from
        the positive rates, equalized odds the larger of the two gaps' bounds,
        path-specific causal fairness the gap of the path-specific rates.

    Examples
    --------
    >>> from skfairverify.verification._intervals import metric_intervals
    >>> bounds = {"positive_rate": ([0.1, 0.5], [0.2, 0.6])}
    >>> metric_intervals(bounds, ["statistical_parity"])
    {'statistical_parity': (0.3, 0.5)}
    """
    out = {}
    for name in metrics:
        if name == "disparate_impact":
            out[name] = ratio_interval(*bounds["positive_rate"])
        elif name == "statistical_parity":
            out[name] = gap_interval(*bounds["positive_rate"])
        elif name == "equalized_odds":
            gaps = [gap_interval(*bounds[c]) for c in ("true_positive_rate",
                                                       "false_positive_rate")
                    if np.sum(~np.isnan(np.asarray(bounds[c][0], dtype=float))) >= 2]
            out[name] = (max(g[0] for g in gaps), max(g[1] for g in gaps))
        elif name == "path_specific_causal":
            out[name] = gap_interval(*bounds["path_specific_rate"])
    return {k: (float(lo), float(hi)) for k, (lo, hi) in out.items()}


def credible_bounds(draws: np.ndarray, level: float):
    """Equal-tailed credible bounds of every column of ``draws`` (NaN columns kept NaN).

    Parameters
    ----------
    draws : ndarray of shape (n_draws, n_groups)
        A rate of every group under every posterior draw of the network; a group
        without that rate (no row of the label) is a column of NaN.
    level : float
        Posterior probability of every interval.

    Returns
    -------
    low, high : ndarray of shape (n_groups,)

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._intervals import credible_bounds
    >>> draws = np.column_stack([np.arange(101.0), np.full(101, np.nan)])
    >>> low, high = credible_bounds(draws, 0.9)
    >>> low.round(6).tolist(), np.isnan(high[1])
    ([4.1, nan], np.True_)
    """
    draws = np.asarray(draws, dtype=float)
    low = np.full(draws.shape[1], np.nan)
    high = low.copy()
    keep = ~np.isnan(draws).any(axis=0)
    if keep.any():
        low[keep], high[keep] = credible_intervals(draws[:, keep], level)
    return low, high


def _gap_draws(draws: np.ndarray):
    """Statistical parity gap of every draw over the groups with a rate (None if < 2)."""
    present = draws[:, ~np.isnan(draws).any(axis=0)]
    if present.shape[1] < 2:
        return None
    return metric_draws(present)["statistical_parity"]


def draw_metric_intervals(draws: dict, metrics, level: float) -> dict:
    """Credible interval of every metric from the rates of the same posterior draws.

    Parameters
    ----------
    draws : dict
        Rate name -> ndarray of shape (n_draws, n_groups) (see :func:`credible_bounds`):
        ``"positive_rate"`` and, as the metrics need them, ``"true_positive_rate"``,
        ``"false_positive_rate"``, ``"path_specific_rate"``.
    metrics : iterable of str
        The metrics whose intervals to compute.
    level : float
        Posterior probability of every interval.

    Returns
    -------
    dict
        Metric name -> ``(low, high)``: the metric is computed on every draw (equalized
        odds: the larger of the TPR and FPR gaps of the draw) and its equal-tailed
        credible interval taken, so the interval is that of the metric itself, not a
        box around the groups' intervals.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._intervals import draw_metric_intervals
    >>> rng = np.random.default_rng(0)
    >>> rates = np.column_stack([rng.beta(20, 80, 400), rng.beta(50, 50, 400)])
    >>> low, high = draw_metric_intervals({"positive_rate": rates},
    ...                                   ["statistical_parity"], 0.95)["statistical_parity"]
    >>> bool(0.15 < low < 0.3 < high < 0.45)
    True
    """
    out = {}
    for name in metrics:
        if name in ("disparate_impact", "statistical_parity"):
            values = metric_draws(draws["positive_rate"])[name]
        elif name == "equalized_odds":
            gaps = [_gap_draws(draws[c]) for c in ("true_positive_rate",
                                                   "false_positive_rate")]
            values = np.max([g for g in gaps if g is not None], axis=0)
        elif name == "path_specific_causal":
            values = _gap_draws(draws["path_specific_rate"])
        else:
            continue
        low, high = credible_intervals(values, level)
        out[name] = (float(low), float(high))
    return out


def hull_bounds(first, second):
    """Group-wise hull ``(min of lows, max of highs)`` of two ``(low, high)`` pairs.

    NaN (a group without that rate) stays NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._intervals import hull_bounds
    >>> low, high = hull_bounds(([0.1, np.nan], [0.3, np.nan]), ([0.2, np.nan], [0.4, np.nan]))
    >>> low.tolist(), high.tolist()
    ([0.1, nan], [0.4, nan])
    """
    low = np.minimum(np.asarray(first[0], dtype=float), np.asarray(second[0], dtype=float))
    high = np.maximum(np.asarray(first[1], dtype=float), np.asarray(second[1], dtype=float))
    return low, high


#: How far outside its interval a value may lie before a warning names it (it is held
#: anyway): half the last digit the reports and warnings show (4 decimals), so that the
#: influence of a feature that hardly moves the rule (-0.00003 beside draws in
#: [-0.00002, -0.00001]) is not named as "-0.0000 [-0.0000, -0.0000]".
HOLD_TOLERANCE = 5e-5


def hold_estimates(intervals: dict, estimates: dict) -> tuple[dict, list]:
    """Every interval widened to hold its estimate, and the ones that did not hold it.

    Parameters
    ----------
    intervals : dict
        Name -> ``(low, high)`` (floats, or arrays of one value per group; NaN for a
        quantity without an interval).
    estimates : dict
        Name -> the value(s) of the same quantity (at least the keys of ``intervals``).

    Returns
    -------
    held : dict
        Name -> ``(min(low, value), max(high, value))``, floats for floats; a NaN
        value keeps its interval (a group without that rate: NaN and NaN stay NaN).
    outside : list of (name, (low, high))
        The original interval of every scalar quantity whose value is outside it
        (the arrays of rates are reported element by element by the caller).

    Examples
    --------
    >>> from skfairverify.verification._intervals import hold_estimates
    >>> held, outside = hold_estimates({"sp": (0.23, 0.81), "di": (0.5, 0.7)},
    ...                                {"sp": 0.21, "di": 0.6})
    >>> held["sp"], outside
    ((0.21, 0.81), [('sp', (0.23, 0.81))])
    """
    held, outside = {}, []
    for name, (low, high) in intervals.items():
        value = estimates[name]
        # fmin / fmax: a missing value (NaN) keeps the interval, a missing interval
        # with a missing value stays missing
        lo = np.fmin(np.asarray(low, dtype=float), value)
        hi = np.fmax(np.asarray(high, dtype=float), value)
        if np.ndim(lo) == 0:
            lo, hi = float(lo), float(hi)
            if value < low - HOLD_TOLERANCE or value > high + HOLD_TOLERANCE:  # NaN: never
                outside.append((name, (float(low), float(high))))
        held[name] = (lo, hi)
    return held, outside


def combined_metric_intervals(draws: dict | None, bounds: dict, metrics,
                              level: float) -> dict:
    """Metric intervals of the sampling path: posterior draws and Monte Carlo, hulled.

    Parameters
    ----------
    draws : dict or None
        Rate name -> ``(n_draws, n_groups)`` Monte Carlo estimates under the posterior
        draws (see :func:`draw_metric_intervals`); None for Monte Carlo only.
    bounds : dict
        Rate name -> ``(low, high)``: the Monte Carlo (Clopper-Pearson) bounds of the
        point estimates (see :func:`metric_intervals`).
    metrics : iterable of str
        The metrics whose intervals to compute.
    level : float
        Credible level of the draws' intervals.

    Returns
    -------
    dict
        Metric name -> ``(low, high)``: the hull of the draws' equal-tailed interval of
        the metric and the interval-arithmetic bounds of the point estimates, or the
        latter alone without draws.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._intervals import combined_metric_intervals
    >>> rng = np.random.default_rng(0)
    >>> draws = {"positive_rate": np.column_stack([rng.normal(0.2, 0.02, 400),
    ...                                            rng.normal(0.5, 0.02, 400)])}
    >>> bounds = {"positive_rate": ([0.19, 0.49], [0.21, 0.51])}
    >>> low, high = combined_metric_intervals(draws, bounds, ["statistical_parity"],
    ...                                       0.95)["statistical_parity"]
    >>> bool(low < 0.28 and 0.32 < high)  # the posterior's spread, wider than the box
    True
    """
    box = metric_intervals(bounds, metrics)
    if not draws:
        return box
    post = draw_metric_intervals(draws, metrics, level)
    return {name: (min(lo, post[name][0]), max(hi, post[name][1])) if name in post
            else (lo, hi) for name, (lo, hi) in box.items()}
