"""Result objects of :class:`~skfairverify.FairnessVerifier`."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..utils._html import facts, frame_table
from ..utils._results import Result
from ..utils._verdict import verdict_table
from ._display import (
    groups_caption,
    groups_formats,
    groups_frame,
    has_intervals,
    influence_frame,
    interval_label,
    model_check_fact,
    population_sources,
)

__all__ = ["FairnessInfluenceResult", "VerificationResult"]

# Columns of ``groups`` that are not sensitive features.
_RATE_COLUMNS = ("positive_rate", "support", "ci_low", "ci_high", "true_positive_rate",
                 "false_positive_rate", "path_specific_rate", "direct_rate",
                 "population_rate", "population_ci_low", "population_ci_high",
                 "model_check_pvalue", "population_true_positive_rate",
                 "population_false_positive_rate")


@dataclass(repr=False, eq=False)
class VerificationResult(Result):
    """Group fairness of the verified model, as returned by ``verify``.

    Attributes
    ----------
    groups : pandas.DataFrame
        One row per compound sensitive group: a column per sensitive feature,
        ``positive_rate`` (exact ``Pr[Yhat = 1 | A = a]`` under the network),
        ``support`` (rows of the group, or the sum of their weights with
        ``sample_weight``), ``ci_low`` / ``ci_high`` (the interval of the positive rate
        under the network), and with labels ``true_positive_rate`` and
        ``false_positive_rate``; with mediators ``path_specific_rate``; the population
        estimate's columns (``direct_rate``, ``population_rate``,
        ``population_ci_low`` / ``population_ci_high``, ``model_check_pvalue``, as
        ``FairnessVerifier.groups_``).
    metrics : dict
        ``disparate_impact`` (min / max positive rate, 1 is fair),
        ``statistical_parity`` (max - min), ``equalized_odds`` (with labels),
        ``path_specific_causal`` (with mediators).
    most_favored_group : dict
        Sensitive feature -> value of the group with the largest positive rate.
    least_favored_group : dict
        Same for the smallest positive rate.
    agreement : float
        Share of the rows (of their weight with ``sample_weight``) on which the
        verified integer rule decides as the estimator (1.0 on the sampling path,
        which evaluates the estimator itself).
    metric_intervals : dict
        Metric -> ``(low, high)``, valid jointly at the verifier's ``confidence`` on
        the sampling path; ``(value, value)`` on the exact path.
    method : {"exact", "bounds", "sampling"}
        The path that computed the rates.
    intervals : dict
        What ``ci_low`` / ``ci_high`` and ``metric_intervals`` are (``kind``,
        ``level``, ``n_draws``, ``tolerance``, ``label``; see
        ``skfairverify.verification._display.interval_note``). Empty when not given: the
        notebook display then names them from ``method`` and the intervals themselves.
    population_metrics : dict
        The metrics of the population estimates of the groups' rates (empty with
        ``n_bootstrap=0``), as ``FairnessVerifier.population_metrics_``.
    population_metric_intervals : dict
        Metric -> ``(low, high)``, their intervals.
    population : pandas.DataFrame or None
        One row per group and rate: the network's and the direct rates, the estimate,
        its interval and the model check (``FairnessVerifier.population_``).

    See Also
    --------
    FairnessVerifier.verify : Returns this object.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 1000)
    >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0)})
    >>> y = (X["x"] > 0.5).astype(int)
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=10).fit(X[:500], y[:500])
    >>> result = ver.verify(X[500:], y[500:])
    >>> sorted(result.metrics)
    ['disparate_impact', 'equalized_odds', 'statistical_parity']
    >>> result.to_frame().columns.tolist()[:3]
    ['a', 'positive_rate', 'support']
    """

    groups: pd.DataFrame
    metrics: dict
    most_favored_group: dict
    least_favored_group: dict
    agreement: float
    metric_intervals: dict = field(default_factory=dict)
    method: str = "exact"
    intervals: dict = field(default_factory=dict)
    population_metrics: dict = field(default_factory=dict)
    population_metric_intervals: dict = field(default_factory=dict)
    population: pd.DataFrame | None = None

    def to_frame(self) -> pd.DataFrame:
        """Return the groups table (one row per compound sensitive group).

        Returns
        -------
        pandas.DataFrame
            ``groups``, one row per group.
        """
        return self.groups

    def _summary(self) -> str:
        def listed(values, ci):
            return ", ".join(
                f"{k}={v:.4g}" + (f" [{ci[k][0]:.3f}, {ci[k][1]:.3f}]"
                                  if k in ci and ci[k][0] != ci[k][1] else "")
                for k, v in values.items())

        metrics = listed(self.metrics, self.metric_intervals or {})
        if self.population_metrics:
            population = listed(self.population_metrics, self.population_metric_intervals)
            metrics = f"population: {population}; under the network: {metrics}"
        return (f"{len(self.groups)} groups; {metrics}; agreement={self.agreement:.4g}; "
                f"method={self.method!r}")

    def _interval_note(self) -> dict:
        """``intervals``, or what the method and the intervals themselves tell."""
        if self.intervals:
            return self.intervals
        points = all(lo == hi for lo, hi in self.metric_intervals.values())
        if {"ci_low", "ci_high"} <= set(self.groups.columns):
            rate = self.groups["positive_rate"]
            points = points and bool(((self.groups["ci_low"] == rate)
                                      & (self.groups["ci_high"] == rate)).all())
        if points:
            return {"kind": "none (point estimates)", "level": None}
        if self.method == "sampling":
            return {"kind": "confidence (Monte Carlo)", "level": None}
        if self.method == "bounds":
            return {"kind": "sound bounds (under the network)", "level": None}
        return {"kind": "credible (posterior of the network's parameters)", "level": None}

    def _html_parts(self) -> list[str]:
        note = self._interval_note()
        label = interval_label(note)
        values, ci, labels, key = population_sources(
            self.metrics, self.metric_intervals if has_intervals(note) else None,
            self.population_metrics, self.population_metric_intervals)
        labels[key] = interval_label(note, True)
        sensitive = [c for c in self.groups.columns if c not in _RATE_COLUMNS]
        groups = groups_frame(self.groups, sensitive, note)
        items = [("method", self.method), ("agreement of the integer rule with the model",
                                           f"{self.agreement:.4f}"), ("intervals", label)]
        check = model_check_fact(self.population)
        if check:
            items.append(("model check", check))
        return [facts(items),
                frame_table(groups, groups_caption(groups, label, "probability under the "
                                                                  "network"),
                            formats=groups_formats(groups)),
                verdict_table(values, None,
                              "Metrics over the groups and their verdict" + (
                                  f"; value [low, high], the {label}" if ci
                                  else f" ({label})"),
                              intervals=ci, labels=labels)]


@dataclass(repr=False, eq=False)
class FairnessInfluenceResult(Result):
    """Fairness influence of features per group, as returned by ``fairness_influence``.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per feature (subsets joined with ``" + "``), one column per group
        (a MultiIndex with several sensitive features): ``FIF_a(S)``, the group's
        positive rate minus the same with ``S`` replaced by a reference distribution.
    reference : {"support", "states"}
        The reference distribution: uniform within each feature's observed range
        (``"support"``, FVGM Appendix E) or uniform over its states (``"states"``).
    ci_low, ci_high : pandas.DataFrame or None
        Shaped as ``table``: the equal-tailed credible interval at the verifier's
        ``credible_level`` of every influence, from the verifier's posterior draws of
        the network (``n_draws``), each draw's influence ``P_{D_d}(a) - P_{D'_d}(a)``
        solved exactly, ``D'_d`` the draw with the features replaced by the same
        reference distributions; widened to hold the value (with an
        :class:`~skfairverify.verification.EstimateOutsideIntervalWarning`). None without
        draws (``n_draws=0``, a user network, the sampling path).
    intervals : dict
        What ``ci_low`` / ``ci_high`` are (``kind``, ``level``, ``n_draws``, ``label``),
        or, without them, why there is none (``label``, e.g. ``"point estimate only
        (n_draws=0)"``).

    See Also
    --------
    FairnessVerifier.fairness_influence : Returns this object.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 1000)
    >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0), "z": rng.normal(0, 1, 1000)})
    >>> y = (X["x"] + X["z"] > 0.5).astype(int)
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=10).fit(X, y)
    >>> fif = ver.fairness_influence()
    >>> fif.reference, fif.to_frame().index.tolist()
    ('support', ['x', 'z'])
    >>> fif.intervals["label"]
    '95% credible interval (posterior of the network, 50 draws)'
    >>> bool((fif.ci_low <= fif.table).all().all() and (fif.table <= fif.ci_high).all().all())
    True
    """

    table: pd.DataFrame
    reference: str
    ci_low: pd.DataFrame | None = None
    ci_high: pd.DataFrame | None = None
    intervals: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """Return the influence table (one row per feature, one column per group).

        Returns
        -------
        pandas.DataFrame
            ``table``, one row per feature.
        """
        return self.table

    def _summary(self) -> str:
        return (f"{self.table.shape[0]} features x {self.table.shape[1]} groups; "
                f"reference={self.reference!r}; {interval_label(self.intervals or None)}")

    def _html_parts(self) -> list[str]:
        label = interval_label(self.intervals or None)
        frame, formats = influence_frame(self.table, self.ci_low, self.ci_high)
        what = {"support": "uniform within its observed range",
                "states": "uniform over its states"}.get(self.reference, str(self.reference))
        shown = "value [low, high], the " + label if self.ci_low is not None else label
        return [frame_table(frame, "Fairness influence FIF_a(S) of every feature (row) on "
                                   "every group (column): the group's positive rate minus "
                                   f"the same with the feature {what}; {shown}",
                            formats=formats)]
