"""The result objects of the ESL box: first stage and two-stage decomposition."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..utils._html import (
    contributions_table,
    direction_text,
    esl_groups_table,
    esl_test_table,
    first_stage_members_table,
    frame_table,
)
from ..utils._results import Result
from ._inference import _contrast, _std_errors

__all__ = ["ESLDecompositionResult", "GroupESLResult"]

# the per-pair keys of a comparison (ESL units, then metric units, then the test)
_PAIR_KEYS = ("esl_difference", "esl_std_error", "esl_ci_low", "esl_ci_high",
              "metric_difference", "metric_std_error", "metric_ci_low", "metric_ci_high",
              "z", "p_value")


@dataclass(eq=False, repr=False)
class GroupESLResult(Result):
    """First-stage ESL decomposition of a classification metric among groups.

    Returned by :func:`group_esl`; not meant to be built by hand. Three names never mix:
    ``metric`` is the classification metric (a rate such as the TPR), ``value`` is the
    ESL member that splits it (Shapley, Equal Surplus...), and the numbers are the
    ``esl_*`` fields (ESL units) and the ``metric_*`` fields (metric units):

    - **ESL units** (``esl_values``, ``esl_*``, ``total``): the metric divided by
      ``baseline`` and split by the ESL member, ``phi_g`` of the paper (Section 3,
      Theorem 4.1). For two groups ``esl_difference = b_1 * metric_difference / baseline``
      (``b_1 = 1`` for Shapley, Equal Surplus, Consensus and LSP, ``1/2`` for Solidarity):
      with the default baseline 0.5 it is twice the raw gap.
    - **Metric units** (``metric_by_group``, ``metric_*``): the metric itself (a rate in
      ``[0, 1]``), as fairlearn's ``MetricFrame`` computes it.

    Attributes
    ----------
    esl_values : pandas.Series
        ESL value of every group, in ESL units (index: group labels, sorted; a MultiIndex
        for intersections of several sensitive attributes). They sum to ``total``.
    total : float
        ``v`` of all groups: the metric on all rows divided by the baseline (ESL units).
    shares : pandas.Series
        ``esl_values / total`` (unitless).
    metric_by_group : pandas.Series
        The metric computed on each group's rows alone, in metric units (not divided by
        the baseline): fairlearn's ``MetricFrame(...).by_group``.
    esl_std_errors, metric_std_errors : pandas.Series
        Plug-in standard error of every group's ESL value (ESL units) and of every
        group's metric (metric units).
    esl_covariance, metric_covariance : pandas.DataFrame
        Plug-in covariance matrices of ``esl_values`` and of ``metric_by_group``.
    metric : str
        The classification metric, as passed to :func:`group_esl`.
    value : str or ndarray
        The ESL member, as passed to :func:`group_esl`.
    baseline, confidence : float
        As passed to :func:`group_esl`.
    coefficients : ndarray
        The constants ``b_1..b_n`` of the member (for the first attribute).
    compared : tuple or None
        For two groups, the two group labels ``(first, second)`` in sorted order; every
        difference below is first minus second. ``None`` with more than two groups.
    esl_difference, esl_std_error : float or None
        ``esl_values[first] - esl_values[second]`` and its standard error (ESL units).
    esl_ci : tuple of float or None
        Confidence interval of ``esl_difference`` at level ``confidence`` (ESL units).
    metric_difference, metric_std_error : float or None
        ``metric_by_group[first] - metric_by_group[second]`` and its standard error, in
        metric units; ``abs(metric_difference)`` is fairlearn's
        ``MetricFrame(...).difference()``.
    metric_ci : tuple of float or None
        Confidence interval of ``metric_difference`` (metric units).
    z, p_value : float or None
        Wald statistic and two-sided p-value of the test of equal ESL values
        (Theorem 4.2). For two groups equal ESL values is equal metrics (Theorem 4.1) and
        ``esl_difference / esl_std_error == metric_difference / metric_std_error``, so
        this is one test. A difference and standard error both at floating-point round-off
        level give ``z = 0``, ``p_value = 1`` (see Notes of :func:`group_esl`).
        All comparison fields are ``None`` with more than two groups (see
        :meth:`pairwise`).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify import group_esl
    >>> y_true = np.array([1, 1, 1, 1, 0, 1, 1, 1, 1, 0])
    >>> y_pred = np.array([1, 1, 1, 0, 0, 1, 0, 0, 1, 1])
    >>> groups = np.array(["a"] * 5 + ["b"] * 5)
    >>> res = group_esl(y_true, y_pred, sensitive_features=groups, metric="tpr")
    >>> res.esl_values.round(3).tolist(), round(res.total, 3)
    ([0.875, 0.375], 1.25)
    >>> res.compared, res.metric_by_group.round(3).tolist()
    (('a', 'b'), [0.75, 0.5])
    >>> round(res.metric_difference, 3), round(res.esl_difference, 3)
    (0.25, 0.5)
    """

    esl_values: pd.Series
    total: float
    shares: pd.Series
    metric_by_group: pd.Series
    esl_std_errors: pd.Series
    metric_std_errors: pd.Series
    esl_covariance: pd.DataFrame
    metric_covariance: pd.DataFrame
    metric: str
    value: object
    baseline: float
    confidence: float
    coefficients: np.ndarray
    compared: tuple | None = None
    esl_difference: float | None = None
    esl_std_error: float | None = None
    esl_ci: tuple | None = None
    metric_difference: float | None = None
    metric_std_error: float | None = None
    metric_ci: tuple | None = None
    z: float | None = None
    p_value: float | None = None

    @classmethod
    def _from_estimates(cls, *, esl_values, total, metric_by_group, esl_covariance,
                        metric_covariance, **params) -> GroupESLResult:
        """Derive the shares, standard errors and the two-group test from the estimates."""
        total = float(total)
        result = cls(
            esl_values=esl_values, total=total,
            shares=esl_values / total if total != 0 else esl_values * np.nan,
            metric_by_group=metric_by_group,
            esl_std_errors=_std_errors(esl_covariance, "esl_std_error"),
            metric_std_errors=_std_errors(metric_covariance, "metric_std_error"),
            esl_covariance=esl_covariance, metric_covariance=metric_covariance, **params,
        )
        if len(esl_values) == 2:
            d = result._compare(0, 1)
            result.compared = (esl_values.index[0], esl_values.index[1])
            result.esl_difference, result.esl_std_error = (d["esl_difference"],
                                                           d["esl_std_error"])
            result.esl_ci = (d["esl_ci_low"], d["esl_ci_high"])
            result.metric_difference = d["metric_difference"]
            result.metric_std_error = d["metric_std_error"]
            result.metric_ci = (d["metric_ci_low"], d["metric_ci_high"])
            result.z, result.p_value = d["z"], d["p_value"]
        return result

    def _compare(self, i, j):
        """ESL test of equal values of groups i and j, with the metric gap beside it."""
        esl = _contrast(self.esl_values, self.esl_covariance, i, j, self.confidence)
        raw = _contrast(self.metric_by_group, self.metric_covariance, i, j, self.confidence)
        parts = [esl["difference"], esl["std_error"], esl["ci_low"], esl["ci_high"],
                 raw["difference"], raw["std_error"], raw["ci_low"], raw["ci_high"],
                 esl["z"], esl["p_value"]]
        return dict(zip(_PAIR_KEYS, parts))

    def pairwise(self) -> pd.DataFrame:
        """Wald tests of equal ESL values for every pair of groups.

        Returns
        -------
        frame : pandas.DataFrame
            One row per pair ``(group_1, group_2)`` (group 1 minus group 2) with
            ``esl_difference``, ``esl_std_error``, ``esl_ci_low``, ``esl_ci_high`` (ESL
            units = metric / baseline, split by the ESL member), ``metric_difference``,
            ``metric_std_error``, ``metric_ci_low``, ``metric_ci_high`` (metric units:
            the raw gap of the two groups' metrics) and ``z``, ``p_value`` of the test of
            equal ESL values (Theorem 4.2). With more than two groups equal ESL values of
            a pair is not the same hypothesis as equal metrics of that pair (the values
            involve the other groups), which is why both gaps are given.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify import group_esl
        >>> rng = np.random.default_rng(0)
        >>> g = rng.choice(["a", "b", "c"], size=300)
        >>> y = rng.integers(0, 2, size=300)
        >>> res = group_esl(y, rng.integers(0, 2, size=300), sensitive_features=g,
        ...                 metric="selection_rate")
        >>> res.pairwise().shape
        (3, 10)
        """
        rows, keys = [], []
        labels = self.esl_values.index
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                rows.append(self._compare(i, j))
                keys.append((labels[i], labels[j]))
        index = pd.MultiIndex.from_tuples(keys, names=["group_1", "group_2"])
        return pd.DataFrame(rows, index=index)

    def to_frame(self) -> pd.DataFrame:
        """One row per group: its metric, its ESL value, share, standard errors, interval.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``metric_by_group`` and ``metric_std_error`` (metric units: the
            group's own rate), ``esl_value``, ``esl_std_error``, ``esl_ci_low``,
            ``esl_ci_high`` (ESL units = metric / baseline, split by the ESL member) and
            ``share`` of the total. The total, the units and the two-group test are
            attributes of the result (``total``, ``compared``, ``p_value``...).

        Examples
        --------
        >>> from skfairverify import group_esl
        >>> res = group_esl([1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 1, 1],
        ...                 sensitive_features=["a"] * 3 + ["b"] * 3)
        >>> list(res.to_frame().columns)  # doctest: +NORMALIZE_WHITESPACE
        ['metric_by_group', 'metric_std_error', 'esl_value', 'esl_std_error',
         'esl_ci_low', 'esl_ci_high', 'share']
        """
        q = stats.norm.ppf(0.5 + self.confidence / 2)
        return pd.DataFrame({
            "metric_by_group": self.metric_by_group,
            "metric_std_error": self.metric_std_errors,
            "esl_value": self.esl_values,
            "esl_std_error": self.esl_std_errors,
            "esl_ci_low": self.esl_values - q * self.esl_std_errors,
            "esl_ci_high": self.esl_values + q * self.esl_std_errors,
            "share": self.shares,
        })

    @property
    def units(self) -> str:
        """A sentence stating the units of every field."""
        return (f"metric_by_group, metric_*: {self.metric} (metric units); esl_*: ESL "
                f"units = {self.metric} / baseline ({self.baseline:g}), split by the "
                f"{self.value} value")

    def _test(self) -> dict | None:
        """The two-group test as the audit report stores it (None beyond two groups)."""
        if self.compared is None:
            return None
        return {"compared": [str(g) for g in self.compared],
                "metric_difference": self.metric_difference,
                "metric_std_error": self.metric_std_error, "metric_ci": self.metric_ci,
                "esl_difference": self.esl_difference, "esl_std_error": self.esl_std_error,
                "esl_ci": self.esl_ci, "z": self.z, "p_value": self.p_value}

    def _html_parts(self) -> list[str]:
        """The tables of the audit report's first ESL stage (pairwise tests beyond two)."""
        parts = [esl_groups_table(self.to_frame(), self.units, self.total)]
        test = self._test()
        if test is not None:
            parts.append(esl_test_table(test, self.metric, self.baseline, self.confidence))
        elif len(self.esl_values) <= 12:
            parts.append(frame_table(self.pairwise(), "Tests of equal ESL values for every "
                                     "pair (group_1 - group_2; esl_* in ESL units, metric_* "
                                     "in metric units)"))
        return parts

    def _summary(self) -> str:
        head = (f"metric={self.metric!r}, value={self.value!r}, "
                f"baseline={self.baseline:g}, total={self.total:.4g} [ESL units]")
        if self.compared is not None:
            a, b = self.compared
            head += (f", {a} - {b}: metric_difference={self.metric_difference:.4g} "
                     f"[{self.metric} units], esl_difference={self.esl_difference:.4g} "
                     f"[ESL units = {self.metric} / baseline], p_value={self.p_value:.3g}")
        return head


@dataclass(eq=False, repr=False)
class ESLDecompositionResult(Result):
    """Two-stage ESL decomposition: every feature's contribution to every group's value.

    Returned by :func:`esl_decomposition`; not meant to be built by hand. ``metric`` is
    the classification metric, ``members`` the ESL members computed (the ``values``
    parameter), and every number is in ESL units (the metric divided by ``baseline``,
    split among the groups, then among the features) except the ``metric_*`` columns of
    ``first_stage`` (metric units).

    Attributes
    ----------
    contributions : pandas.DataFrame
        Indexed by ``(value, feature)``: one column per group (the contribution
        ``C_g^k`` of the feature to the group's first-stage ESL value, Proposition 3.1;
        intersections are labelled ``"a, b"``), then ``esl_difference``,
        ``esl_std_error``, ``z``, ``p_value``, ``esl_ci_low``, ``esl_ci_high`` of the
        difference of the contributions of the two compared groups (Theorem 4.3) and
        ``majority`` (the feature is flagged unfair: a strict majority of the members
        reject equality, Section 4).
    first_stage : pandas.DataFrame
        One row per member: the groups' first-stage ESL values of the full model,
        ``total``, the same ``esl_*``/``z``/``p_value`` test columns and
        ``metric_difference``, ``metric_std_error``, ``metric_ci_low``,
        ``metric_ci_high`` (the full model's raw metric gap of the compared groups, in
        metric units).
    group_std_error : pandas.DataFrame
        Standard error of every contribution (ESL units), indexed like
        ``contributions``.
    compared : dict
        ``{member: (first, second)}``: the groups whose difference is tested.
    coalitions : list of tuple
        The feature coalitions whose models were fit.
    n_fits : int
        Number of models fit (``len(coalitions)``).
    fit_time, fit_wall_time, wall_time : float
        Sum of the fit + predict times, the wall time up to the last fit and the total
        wall time, in seconds.
    ci : str
        ``"asymptotic"`` or ``"bootstrap"``.
    metric : str
        The classification metric.
    members : tuple of str
        The ESL members computed.
    features : list
        The players (feature names).
    units : str
        A sentence stating the units.
    baseline, confidence : float
        As passed to :func:`esl_decomposition`.
    n_test : int
        Number of evaluation rows.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.esl import esl_decomposition
    >>> rng = np.random.default_rng(0)
    >>> sex = rng.integers(0, 2, 600)
    >>> X = pd.DataFrame(rng.normal(size=(600, 2)) + sex[:, None], columns=["x1", "x2"])
    >>> y = (X.x1 + rng.normal(size=600) > 0.5).astype(int)
    >>> res = esl_decomposition(DecisionTreeClassifier(max_depth=2), X, y,
    ...                         sensitive_features=sex, values="equal_surplus",
    ...                         random_state=0)
    >>> res.n_fits, res.members, res.features
    (3, ('equal_surplus',), ['x1', 'x2'])
    >>> res.to_frame() is res.contributions
    True
    """

    contributions: pd.DataFrame
    first_stage: pd.DataFrame
    group_std_error: pd.DataFrame
    compared: dict
    coalitions: list
    n_fits: int
    fit_time: float
    fit_wall_time: float
    wall_time: float
    ci: str
    metric: str
    members: tuple
    features: list
    units: str
    baseline: float
    confidence: float
    n_test: int

    def to_frame(self) -> pd.DataFrame:
        """Return the contributions table (see ``contributions``).

        Returns
        -------
        pandas.DataFrame
            ``contributions``, indexed by ``(value, feature)``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skfairverify import esl_decomposition
        >>> rng = np.random.default_rng(1)
        >>> X, group = rng.normal(size=(400, 3)), rng.choice(["a", "b"], 400)
        >>> y = (X[:, 0] > 0).astype(int)
        >>> res = esl_decomposition(GaussianNB(), X, y, sensitive_features=group,
        ...                         values="shapley", random_state=0)
        >>> res.to_frame().index.tolist()
        [('shapley', 0), ('shapley', 1), ('shapley', 2)]
        """
        return self.contributions

    @property
    def flagged(self) -> list:
        """The features flagged unfair by the majority rule (``majority`` column)."""
        majority = self.contributions["majority"]
        return [f for f in self.features if bool(majority.xs(f, level="feature").any())]

    def _html_parts(self) -> list[str]:
        """The tables of the audit report's second ESL stage, then the first stage."""
        direction = direction_text(self.compared or {})
        return [contributions_table(self.contributions, self.units, direction),
                first_stage_members_table(self.first_stage, direction)]

    def _summary(self) -> str:
        groups = [c for c in self.group_std_error.columns]
        return (f"metric={self.metric!r}, members={self.members!r}, "
                f"features={len(self.features)}, groups={groups}, ci={self.ci!r}, "
                f"n_fits={self.n_fits}, n_test={self.n_test}, "
                f"flagged by majority={self.flagged} [ESL units = {self.metric} / "
                f"baseline ({self.baseline:g})]")
