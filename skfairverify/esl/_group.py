"""First stage: ESL values of the groups of a sensitive attribute (group-ESL)."""

from __future__ import annotations

import numbers
from itertools import product

import numpy as np
import pandas as pd
from scipy import special, stats

from ..utils._validation import check_sensitive
from ._values import _check_n_players, _coefficient_matrix, _resolve_coefficients
from ._variance import _DENOMINATOR_ROWS, _check_metric, _Problem

# ----------------------------------------------------------------- validation helpers


def _check_baseline(baseline) -> float:
    if (isinstance(baseline, bool) or not isinstance(baseline, numbers.Real)
            or not np.isfinite(baseline) or baseline <= 0):
        raise ValueError(f"baseline must be a positive finite number, got {baseline!r}.")
    return float(baseline)


def _check_confidence(confidence) -> float:
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0 < confidence < 1):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}.")
    return float(confidence)


def _check_value(value, name="value"):
    """A member name or an array of constants (length checked later)."""
    if isinstance(value, str):
        _resolve_coefficients(value, 2)  # raises on unknown names
    return value


def check_esl_params(metric="tpr", value="shapley", baseline=0.5) -> None:
    """Check the parameters that :func:`group_esl` and the ESL scorer share.

    Parameters
    ----------
    metric : str, default="tpr"
        One of ``"selection_rate"``, ``"tpr"``, ``"fpr"``, ``"ppv"``, ``"npv"``.
    value : str or array-like, default="shapley"
        An ESL member name or constants ``b_1..b_n``.
    baseline : float, default=0.5
        Positive, finite.

    Raises
    ------
    ValueError
        Naming the parameter that is wrong.

    Examples
    --------
    >>> from skfairverify.esl import check_esl_params
    >>> check_esl_params("tpr", "solidarity", 0.5)
    >>> check_esl_params("auc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Unknown metric 'auc'; valid metrics are 'selection_rate', 'tpr', ...
    """
    _check_metric(metric)
    _check_value(value)
    _check_baseline(baseline)


def _binary_vector(values, name: str) -> np.ndarray:
    """1-d array of 0/1 (bool or numeric) without NaN."""
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(f"{name} must be one-dimensional, got {values.shape[1]} columns.")
        values = values.iloc[:, 0]
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if pd.isna(arr).any():
        raise ValueError(f"{name} contains NaN.")
    try:
        num = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must contain only 0 and 1, got {np.unique(arr)[:5]}.") from None
    bad = ~np.isin(num, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"{name} must contain only 0 and 1 (1 = favorable), got values "
            f"{np.unique(arr[bad])[:5].tolist()}."
        )
    return num.astype(np.int8)


def _sensitive_frame(sensitive, n_rows: int, name: str = "sensitive") -> pd.DataFrame:
    """The sensitive attribute(s) as a DataFrame with a positional index, validated."""
    return check_sensitive(sensitive, n_rows=n_rows, name=name, against="y_true")


def _levels(column: pd.Series) -> list:
    uniques = pd.unique(column)
    try:
        return sorted(uniques.tolist())
    except TypeError:
        return list(uniques)


def _cells(frame: pd.DataFrame):
    """Cell (intersection) code of every row, the levels per attribute and the labels."""
    levels = [_levels(frame[col]) for col in frame.columns]
    codes = [pd.Index(lv).get_indexer(frame[col]).astype(np.intp)
             for col, lv in zip(frame.columns, levels)]
    shape = [len(lv) for lv in levels]
    cells = np.ravel_multi_index(codes, shape) if len(shape) > 1 else codes[0]
    if len(levels) == 1:
        index = pd.Index(levels[0], name=frame.columns[0])
    else:
        index = pd.MultiIndex.from_tuples(list(product(*levels)), names=list(frame.columns))
    return np.asarray(cells, dtype=np.intp), levels, index


def _check_cells(cells, index, problem_num_den_rows, metric, what="group"):
    """Every cell must have rows for the metric's denominator."""
    counts = np.bincount(cells, weights=problem_num_den_rows, minlength=len(index))
    empty = np.flatnonzero(counts <= 0)
    if empty.size:
        label = index[empty[0]]
        raise ValueError(
            f"{what} {label!r} has no {_DENOMINATOR_ROWS[metric]}; the metric {metric!r} "
            f"is undefined for it."
        )


# ----------------------------------------------------------- first-stage linear map


def _first_stage_map(levels: list[list], value) -> tuple[np.ndarray, np.ndarray]:
    """The linear map from the metric on unions of cells to the cells' ESL values.

    With one attribute the players are its groups. With several attributes this is the
    multi-stage ESL of the paper's Appendix A.2: the first attribute's groups play the
    game ``v(G) = metric(rows with attribute 1 in G) / baseline``; the value of
    ``(g, r)`` is the ESL value of level ``r`` in the game ``R -> value of g computed on
    the rows whose attribute 2 is in R``, and so on, one attribute per stage.

    Returns
    -------
    unions : ndarray of shape (n_unions, n_cells), bool
    matrix : ndarray of shape (n_unions, n_cells)
        ``values = matrix.T @ (metric on unions) / baseline``; cells in C order of the
        level product.
    """
    shape = [len(lv) for lv in levels]
    n_attr = len(shape)
    coefs = []
    for k in shape:
        b = _resolve_coefficients(value, _check_n_players(k))
        coefs.append(_coefficient_matrix(b))

    def union(allowed):
        return frozenset(int(np.ravel_multi_index(c, shape)) for c in product(*allowed))

    def stage(allowed, k):
        """dict: tuple of levels of attributes 0..k-1 -> {union: coefficient}."""
        coalitions, mat = coefs[k - 1]
        out: dict = {}
        for row, coalition in enumerate(coalitions):
            sub_allowed = list(allowed)
            sub_allowed[k - 1] = tuple(sorted(coalition))
            if k == 1:
                sub = {(): {union(sub_allowed): 1.0}}
            else:
                sub = stage(sub_allowed, k - 1)
            for prefix, functional in sub.items():
                for level in range(shape[k - 1]):
                    c = mat[row, level]
                    if c == 0:
                        continue
                    target = out.setdefault(prefix + (level,), {})
                    for u, coef in functional.items():
                        target[u] = target.get(u, 0.0) + c * coef
        return out

    result = stage([tuple(range(k)) for k in shape], n_attr)
    all_unions = sorted({u for f in result.values() for u in f},
                        key=lambda u: (len(u), sorted(u)))
    position = {u: j for j, u in enumerate(all_unions)}
    n_cells = int(np.prod(shape))
    unions = np.zeros((len(all_unions), n_cells), dtype=bool)
    for u, j in position.items():
        unions[j, list(u)] = True
    matrix = np.zeros((len(all_unions), n_cells))
    for leaf, functional in result.items():
        cell = int(np.ravel_multi_index(leaf, shape))
        for u, coef in functional.items():
            matrix[position[u], cell] += coef
    return unions, matrix


# ---------------------------------------------------------------------- result class


class GroupESLResult:
    """First-stage ESL decomposition of a classification metric among groups.

    Returned by :func:`group_esl`; not meant to be built by hand.

    Two units appear, and every name says which:

    - **ESL units** (``esl_*``, ``values``, ``total``): the metric divided by ``baseline``
      and split by the ESL value, ``phi_g`` of the paper (Section 3, Theorem 4.1). For two
      groups ``esl_difference = b_1 * metric_difference / baseline`` (``b_1 = 1`` for
      Shapley, Equal Surplus, Consensus and LSP, ``1/2`` for Solidarity): with the default
      baseline 0.5 it is twice the raw gap.
    - **Metric units** (``metric_*``, ``group_metric``): the metric itself (a rate in
      ``[0, 1]``), as fairlearn's ``MetricFrame`` computes it.

    Attributes
    ----------
    values : pandas.Series
        ESL value of every group, in ESL units (index: group labels, sorted; a MultiIndex
        for intersections of several sensitive attributes). They sum to ``total``.
    total : float
        ``v`` of all groups: the metric on all rows divided by the baseline (ESL units).
    shares : pandas.Series
        ``values / total`` (unitless).
    group_metric : pandas.Series
        The metric computed on each group's rows alone, in metric units (not divided by
        the baseline): fairlearn's ``MetricFrame(...).by_group``.
    esl_std_errors, metric_std_errors : pandas.Series
        Plug-in standard error of every group's value (ESL units) and of every group's
        metric (metric units).
    esl_covariance, metric_covariance : pandas.DataFrame
        Plug-in covariance matrices of ``values`` and of ``group_metric``.
    compared : tuple or None
        For two groups, the two group labels ``(first, second)`` in sorted order; every
        difference below is first minus second. ``None`` with more than two groups.
    esl_difference, esl_std_error : float or None
        ``values[first] - values[second]`` and its standard error, in ESL units.
    esl_ci : tuple of float or None
        Confidence interval of ``esl_difference`` at level ``confidence`` (ESL units).
    metric_difference, metric_std_error : float or None
        ``group_metric[first] - group_metric[second]`` and its standard error, in metric
        units; ``abs(metric_difference)`` is fairlearn's ``MetricFrame(...).difference()``.
    metric_ci : tuple of float or None
        Confidence interval of ``metric_difference`` (metric units).
    z, p_value : float or None
        Wald statistic and two-sided p-value of the test of equal values (Theorem 4.2).
        For two groups equal values is equal metrics (Theorem 4.1) and
        ``esl_difference / esl_std_error == metric_difference / metric_std_error``, so this
        is one test. A difference and standard error both at floating-point round-off
        level give ``z = 0``, ``p_value = 1`` (see Notes of :func:`group_esl`).
        All of the above are ``None`` with more than two groups (see :meth:`pairwise`).
    metric, value, baseline, confidence : as passed to :func:`group_esl`.
    coefficients : ndarray
        The constants ``b_1..b_n`` used (for the first attribute).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify import group_esl
    >>> y_true = np.array([1, 1, 1, 1, 0, 1, 1, 1, 1, 0])
    >>> y_pred = np.array([1, 1, 1, 0, 0, 1, 0, 0, 1, 1])
    >>> groups = np.array(["a"] * 5 + ["b"] * 5)
    >>> res = group_esl(y_true, y_pred, groups, metric="tpr")
    >>> res.values.round(3).tolist(), round(res.total, 3)
    ([0.875, 0.375], 1.25)
    >>> res.compared, res.group_metric.round(3).tolist()
    (('a', 'b'), [0.75, 0.5])
    >>> round(res.metric_difference, 3), round(res.esl_difference, 3)
    (0.25, 0.5)
    """

    def __init__(self, *, values, total, group_metric, esl_covariance, metric_covariance,
                 metric, value, baseline, confidence, coefficients):
        self.values = values
        self.total = float(total)
        self.shares = values / total if total != 0 else values * np.nan
        self.group_metric = group_metric
        self.esl_covariance = esl_covariance
        self.metric_covariance = metric_covariance
        self.esl_std_errors = _std_errors(esl_covariance, "esl_std_error")
        self.metric_std_errors = _std_errors(metric_covariance, "metric_std_error")
        self.metric = metric
        self.value = value
        self.baseline = baseline
        self.confidence = confidence
        self.coefficients = coefficients
        self.compared = None
        self.esl_difference = self.esl_std_error = self.esl_ci = None
        self.metric_difference = self.metric_std_error = self.metric_ci = None
        self.z = self.p_value = None
        if len(values) == 2:
            d = self._compare(0, 1)
            self.compared = (values.index[0], values.index[1])
            self.esl_difference, self.esl_std_error = d["esl_difference"], d["esl_std_error"]
            self.esl_ci = (d["esl_ci_low"], d["esl_ci_high"])
            self.metric_difference = d["metric_difference"]
            self.metric_std_error = d["metric_std_error"]
            self.metric_ci = (d["metric_ci_low"], d["metric_ci_high"])
            self.z, self.p_value = d["z"], d["p_value"]

    def _compare(self, i, j):
        """ESL test of equal values of groups i and j, with the metric gap beside it."""
        esl = _contrast(self.values, self.esl_covariance, i, j, self.confidence)
        raw = _contrast(self.group_metric, self.metric_covariance, i, j, self.confidence)
        return {
            "esl_difference": esl["difference"], "esl_std_error": esl["std_error"],
            "esl_ci_low": esl["ci_low"], "esl_ci_high": esl["ci_high"],
            "metric_difference": raw["difference"], "metric_std_error": raw["std_error"],
            "metric_ci_low": raw["ci_low"], "metric_ci_high": raw["ci_high"],
            "z": esl["z"], "p_value": esl["p_value"],
        }

    def pairwise(self) -> pd.DataFrame:
        """Wald tests of equal values for every pair of groups.

        Returns
        -------
        frame : pandas.DataFrame
            One row per pair ``(group_1, group_2)`` (group 1 minus group 2) with
            ``esl_difference``, ``esl_std_error``, ``esl_ci_low``, ``esl_ci_high`` (ESL
            units = metric / baseline, split by the ESL value), ``metric_difference``,
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
        >>> res = group_esl(y, rng.integers(0, 2, size=300), g, metric="selection_rate")
        >>> res.pairwise().shape
        (3, 10)
        """
        rows, keys = [], []
        n = len(self.values)
        for i in range(n):
            for j in range(i + 1, n):
                rows.append(self._compare(i, j))
                keys.append((self.values.index[i], self.values.index[j]))
        index = pd.MultiIndex.from_tuples(keys, names=["group_1", "group_2"])
        return pd.DataFrame(rows, index=index)

    def to_frame(self) -> pd.DataFrame:
        """One row per group: its metric, its ESL value, share, standard errors, interval.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``group_metric`` and ``metric_std_error`` (metric units: the group's
            own rate), ``esl_value``, ``esl_std_error``, ``esl_ci_low``, ``esl_ci_high``
            (ESL units = metric / baseline, split by the ESL value) and ``share`` of the
            total. The frame's ``attrs`` hold ``units``, ``total`` (ESL units) and, for two
            groups, ``compared``, the ``esl_*`` and ``metric_*`` differences and the test.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify import group_esl
        >>> res = group_esl([1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 1, 1], ["a"] * 3 + ["b"] * 3)
        >>> list(res.to_frame().columns)  # doctest: +NORMALIZE_WHITESPACE
        ['group_metric', 'metric_std_error', 'esl_value', 'esl_std_error', 'esl_ci_low',
         'esl_ci_high', 'share']
        """
        q = stats.norm.ppf(0.5 + self.confidence / 2)
        frame = pd.DataFrame({
            "group_metric": self.group_metric,
            "metric_std_error": self.metric_std_errors,
            "esl_value": self.values,
            "esl_std_error": self.esl_std_errors,
            "esl_ci_low": self.values - q * self.esl_std_errors,
            "esl_ci_high": self.values + q * self.esl_std_errors,
            "share": self.shares,
        })
        frame.attrs["units"] = (f"group_metric, metric_*: {self.metric} (metric units); "
                                f"esl_*: ESL units = {self.metric} / baseline "
                                f"({self.baseline:g}), split by the {self.value} value")
        frame.attrs["total"] = self.total
        if self.compared is not None:
            frame.attrs.update(
                compared=self.compared, esl_difference=self.esl_difference,
                esl_std_error=self.esl_std_error, esl_ci=self.esl_ci,
                metric_difference=self.metric_difference,
                metric_std_error=self.metric_std_error, metric_ci=self.metric_ci,
                z=self.z, p_value=self.p_value)
        return frame

    def __repr__(self) -> str:
        head = (f"GroupESLResult(metric={self.metric!r}, value={self.value!r}, "
                f"baseline={self.baseline:g}, total={self.total:.4g} [ESL units]")
        if self.compared is not None:
            a, b = self.compared
            head += (f", {a} - {b}: metric_difference={self.metric_difference:.4g} "
                     f"[{self.metric} units], esl_difference={self.esl_difference:.4g} "
                     f"[ESL units = {self.metric} / baseline], p_value={self.p_value:.3g}")
        return head + ")"


def _std_errors(covariance: pd.DataFrame, name: str) -> pd.Series:
    return pd.Series(np.sqrt(np.clip(np.diag(covariance.to_numpy()), 0, None)),
                     index=covariance.index, name=name)


def _contrast(estimates: pd.Series, covariance: pd.DataFrame, i: int, j: int,
              confidence: float) -> dict:
    cov = covariance.to_numpy()
    diff = float(estimates.iloc[i] - estimates.iloc[j])
    var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
    scale = abs(float(estimates.iloc[i])) + abs(float(estimates.iloc[j]))
    return _wald(diff, np.sqrt(max(var, 0.0)), confidence, scale)


#: Relative tolerance of the round-off rule (see :func:`_wald`).
ROUNDOFF_RTOL = 1e-12


def _wald(diff: float, se: float, confidence: float, scale: float = 1.0) -> dict:
    """Wald test of ``diff == 0`` with the round-off rule.

    ``diff`` is a signed sum of terms whose absolute values add up to ``scale``. When
    ``|diff|`` and ``se`` are both at most ``ROUNDOFF_RTOL * max(1, scale)`` they are
    floating-point round-off of an exact zero (two coalition models with identical
    predictions, a member whose coefficient is 0): there is no evidence, ``z = 0`` and
    ``p_value = 1``. A difference above that level with a zero standard error (e.g. rates
    of exactly 0 and 1) is deterministic given the rows: ``z = +-inf``, ``p_value = 0``.
    """
    q = special.ndtri(0.5 + confidence / 2)
    tol = ROUNDOFF_RTOL * max(1.0, float(scale))
    if abs(diff) <= tol and se <= tol:  # round-off of an exact zero
        z, p = 0.0, 1.0
    elif se > 0:
        z = diff / se
        p = float(2 * special.ndtr(-abs(z)))
    else:  # a degenerate (deterministic) difference
        z = float(np.sign(diff) * np.inf)
        p = 0.0
    return {"difference": diff, "std_error": se, "z": z, "p_value": p,
            "ci_low": diff - q * se, "ci_high": diff + q * se}


# ---------------------------------------------------------------------- public function


def group_esl(
    y_true,
    y_pred,
    sensitive,
    *,
    metric: str = "tpr",
    value: str | np.ndarray = "shapley",
    baseline: float = 0.5,
    confidence: float = 0.95,
) -> GroupESLResult:
    """Split a classification metric among sensitive groups with an ESL value.

    The groups are the players; the worth of a set ``S`` of groups is the metric computed
    on the rows of the groups in ``S`` divided by ``baseline`` (the metric of a random
    classifier), and the empty set is worth 0 (Section 3 of Amri-Jouidel et al.). Equal
    values across groups is equivalent to the metric's parity criterion (Theorems 3.1 and
    4.1): equal opportunity for ``"tpr"``, statistical parity for ``"selection_rate"``...

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels, 0/1 (1 = favorable).
    y_pred : array-like of shape (n_samples,)
        Predicted labels, 0/1.
    sensitive : array-like, pandas.Series or pandas.DataFrame
        Group of every row. A DataFrame of several attributes gives the intersections,
        split attribute by attribute (multi-stage ESL, Appendix A.2): the first column's
        groups share the total, then each share is split among the second column's groups,
        and so on. Every intersection must have rows.
    metric : {"tpr", "fpr", "selection_rate", "ppv", "npv"}, default="tpr"
        ``ppv = P(y=1 | yhat=1)``, ``npv = P(y=0 | yhat=0)``.
    value : str or array-like, default="shapley"
        ESL member (see :func:`esl_coefficients`) or constants ``b_1..b_n``.
    baseline : float, default=0.5
        Divisor of the metric (0.5: a random classifier's TPR under balanced classes).
    confidence : float, default=0.95
        Level of the confidence intervals.

    Returns
    -------
    result : GroupESLResult
        ``values``, ``total``, ``shares`` (ESL units = metric / baseline); ``group_metric``
        (metric units); for two groups ``compared``, ``esl_difference``,
        ``esl_std_error``, ``esl_ci`` (ESL units), ``metric_difference``,
        ``metric_std_error``, ``metric_ci`` (metric units), ``z``, ``p_value``;
        ``to_frame()``, ``pairwise()``.

    Raises
    ------
    ValueError
        Unknown metric or value, lengths that differ, NaN, labels other than 0/1, a
        sensitive attribute with one group, a group (or intersection) without the rows
        the metric needs (e.g. no positives for ``"tpr"``).

    Notes
    -----
    Units: the values are in ESL units, the metric divided by ``baseline`` and split by
    the ESL value (the paper's ``phi_g``). For two groups every member gives
    ``esl_difference = b_1 (v({1}) - v({2})) = b_1 * metric_difference / baseline``
    (Theorem 4.1): Shapley, Equal Surplus, Consensus and LSP (``b_1 = 1``) give twice the
    raw gap with the default baseline 0.5, Solidarity (``b_1 = 1/2``) the raw gap. The z
    statistic is the same for all members and for the raw gap.

    Standard errors (Theorem 4.2, Appendix B): the rows are taken as independent draws
    from one population, so group sizes, label counts and prediction counts are random,
    and every rate is a ratio of two random sums. The delta method linearises each ratio
    ``R = N / D`` with the influence ``(num_i - R den_i) / D`` of every row (both sums
    random); the covariance of all values is the sum of the outer products of the
    influences. For one group's rate this is the binomial variance ``R (1 - R) / D`` of
    Proposition B.1 with ``D`` its denominator count, which for PPV and NPV (predicted
    positives / negatives) is random, as the paper notes before Theorem 4.2; the
    covariances of rates on unions of groups follow from the same rows. The test uses
    the unpooled variance (Wald), which also gives the intervals.

    Round-off rule: a difference and a standard error both below
    ``1e-12 * max(1, |value_1| + |value_2|)`` are floating-point noise around an exact
    zero and give ``z = 0``, ``p_value = 1`` (no evidence). A genuine difference of two
    ratios of counts is at least ``1 / (D_1 D_2) >= 1 / n^2``, above this tolerance for
    fewer than a million rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify import group_esl
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["men", "women"], size=2000)
    >>> y = rng.integers(0, 2, size=2000)
    >>> y_pred = (rng.random(2000) < np.where(g == "men", 0.8, 0.6)) * y
    >>> res = group_esl(y, y_pred, g, metric="tpr", value="equal_surplus")
    >>> res.compared, bool(res.p_value < 0.05)
    (('men', 'women'), True)
    >>> tpr = res.group_metric
    >>> bool(np.isclose(res.metric_difference, tpr["men"] - tpr["women"]))
    True
    >>> bool(np.isclose(res.esl_difference, res.metric_difference / 0.5))
    True
    """
    check_esl_params(metric, value, baseline)
    baseline = float(baseline)
    confidence = _check_confidence(confidence)
    y = _binary_vector(y_true, "y_true")
    yhat = _binary_vector(y_pred, "y_pred")
    if yhat.shape[0] != y.shape[0]:
        raise ValueError(
            f"y_pred has {yhat.shape[0]} rows but y_true has {y.shape[0]}; lengths must match."
        )
    frame = _sensitive_frame(sensitive, y.shape[0])
    cells, levels, index = _cells(frame)
    unions, matrix = _first_stage_map(levels, value)
    problem = _Problem(yhat[:, None], y, cells, len(index), unions, metric, baseline)
    what = "group" if len(levels) == 1 else "intersection"
    _check_cells(cells, index, _denominator_rows(metric, y, yhat), metric, what)

    identity = np.ones((1, 1))
    values = problem.outputs(identity, matrix)[0]
    cov = problem.covariance(identity, matrix)
    total = problem.num.sum() / problem.den.sum() / baseline
    cells_only = np.eye(len(index), dtype=bool)
    raw = _Problem(yhat[:, None], y, cells, len(index), cells_only, metric, 1.0)
    group_metric = raw.outputs(identity, np.eye(len(index)))[0]
    metric_cov = raw.covariance(identity, np.eye(len(index)))
    b = _resolve_coefficients(value, len(levels[0]))
    return GroupESLResult(
        values=pd.Series(values, index=index, name="esl_value"),
        total=total,
        group_metric=pd.Series(group_metric, index=index, name=metric),
        esl_covariance=pd.DataFrame(cov, index=index, columns=index),
        metric_covariance=pd.DataFrame(metric_cov, index=index, columns=index),
        metric=metric,
        value=value,
        baseline=baseline,
        confidence=confidence,
        coefficients=b,
    )


def _denominator_rows(metric, y, yhat):
    """Per-row denominator indicator of the metric for the given predictions."""
    if metric == "selection_rate":
        return np.ones(y.shape[0])
    if metric == "tpr":
        return (y == 1).astype(float)
    if metric == "fpr":
        return (y == 0).astype(float)
    if metric == "ppv":
        return (yhat == 1).astype(float)
    return (yhat == 0).astype(float)
