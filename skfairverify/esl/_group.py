"""First stage: ESL values of the groups of a sensitive attribute (group-ESL)."""

from __future__ import annotations

import numbers
from itertools import product

import numpy as np
import pandas as pd
from scipy import stats

from .._validation import check_sensitive
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
            f"{name} must contain only 0 and 1 (1 = favourable), got values "
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
    codes = [pd.Categorical(frame[col], categories=lv).codes.astype(np.intp)
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

    Attributes
    ----------
    values : pandas.Series
        ESL value of every group (index: group labels; a MultiIndex for intersections of
        several sensitive attributes). They sum to ``total``.
    total : float
        ``v`` of all groups: the metric on all rows divided by the baseline.
    shares : pandas.Series
        ``values / total``.
    group_metric : pandas.Series
        The metric computed on each group's rows alone (not divided by the baseline).
    std_errors : pandas.Series
        Plug-in standard error of every group's value.
    covariance : pandas.DataFrame
        Plug-in covariance matrix of the values.
    difference, std_error, z, p_value : float or None
        For two groups: ``values.iloc[0] - values.iloc[1]`` (groups in sorted order), its
        standard error, the Wald statistic and the two-sided p-value of the test of equal
        values (Theorem 4.2). ``None`` with more than two groups (see :meth:`pairwise`).
    ci : tuple of float or None
        Confidence interval of ``difference`` at level ``confidence``.
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
    >>> round(res.difference, 3)
    0.5
    """

    def __init__(self, *, values, total, group_metric, covariance, metric, value, baseline,
                 confidence, coefficients):
        self.values = values
        self.total = float(total)
        self.shares = values / total if total != 0 else values * np.nan
        self.group_metric = group_metric
        self.covariance = covariance
        self.std_errors = pd.Series(np.sqrt(np.clip(np.diag(covariance.to_numpy()), 0, None)),
                                    index=values.index, name="std_error")
        self.metric = metric
        self.value = value
        self.baseline = baseline
        self.confidence = confidence
        self.coefficients = coefficients
        self.difference = self.std_error = self.z = self.p_value = self.ci = None
        if len(values) == 2:
            d = self._compare(0, 1)
            self.difference, self.std_error = d["difference"], d["std_error"]
            self.z, self.p_value = d["z"], d["p_value"]
            self.ci = (d["ci_low"], d["ci_high"])

    def _compare(self, i, j):
        cov = self.covariance.to_numpy()
        diff = float(self.values.iloc[i] - self.values.iloc[j])
        var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
        return _wald(diff, np.sqrt(max(var, 0.0)), self.confidence)

    def pairwise(self) -> pd.DataFrame:
        """Wald tests of equal values for every pair of groups.

        Returns
        -------
        frame : pandas.DataFrame
            One row per pair ``(group_1, group_2)`` with ``difference`` (value of group 1
            minus value of group 2), ``std_error``, ``z``, ``p_value``, ``ci_low``, ``ci_high``.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify import group_esl
        >>> rng = np.random.default_rng(0)
        >>> g = rng.choice(["a", "b", "c"], size=300)
        >>> y = rng.integers(0, 2, size=300)
        >>> res = group_esl(y, rng.integers(0, 2, size=300), g, metric="selection_rate")
        >>> res.pairwise().shape
        (3, 6)
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
        """One row per group: metric, value, share, standard error and interval.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``metric`` (the group's own metric), ``value``, ``share``,
            ``std_error``, ``ci_low``, ``ci_high``. The frame's ``attrs`` hold ``total``
            and, for two groups, the ``difference`` test.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify import group_esl
        >>> res = group_esl([1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 1, 1], ["a"] * 3 + ["b"] * 3)
        >>> list(res.to_frame().columns)
        ['metric', 'value', 'share', 'std_error', 'ci_low', 'ci_high']
        """
        q = stats.norm.ppf(0.5 + self.confidence / 2)
        frame = pd.DataFrame({
            "metric": self.group_metric,
            "value": self.values,
            "share": self.shares,
            "std_error": self.std_errors,
            "ci_low": self.values - q * self.std_errors,
            "ci_high": self.values + q * self.std_errors,
        })
        frame.attrs["total"] = self.total
        if self.difference is not None:
            frame.attrs.update(difference=self.difference, std_error=self.std_error,
                               z=self.z, p_value=self.p_value, ci=self.ci)
        return frame

    def __repr__(self) -> str:
        head = (f"GroupESLResult(metric={self.metric!r}, value={self.value!r}, "
                f"total={self.total:.4g}")
        if self.difference is not None:
            head += (f", difference={self.difference:.4g}, std_error={self.std_error:.4g}, "
                     f"p_value={self.p_value:.3g}")
        return head + ")"


def _wald(diff: float, se: float, confidence: float) -> dict:
    q = stats.norm.ppf(0.5 + confidence / 2)
    if se > 0:
        z = diff / se
        p = float(2 * stats.norm.sf(abs(z)))
    else:  # a degenerate (deterministic) difference
        z = 0.0 if diff == 0 else float(np.sign(diff) * np.inf)
        p = 1.0 if diff == 0 else 0.0
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
        True labels, 0/1 (1 = favourable).
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
        ``values``, ``total``, ``shares``; for two groups ``difference``, ``std_error``,
        ``z``, ``p_value``, ``ci``; ``to_frame()``.

    Raises
    ------
    ValueError
        Unknown metric or value, lengths that differ, NaN, labels other than 0/1, a
        sensitive attribute with one group, a group (or intersection) without the rows
        the metric needs (e.g. no positives for ``"tpr"``).

    Notes
    -----
    Standard errors are the plug-in (delta-method) ones of the paper's Appendix B: rows
    are independent within (group, label) strata (group strata for the selection rate),
    each group rate has its binomial variance, and the covariances of rates computed on
    overlapping rows are included. For two groups every member gives the difference
    ``b_1 (v({1}) - v({2}))`` (Theorem 4.1), so Shapley, Equal Surplus, Consensus and LSP
    agree and Solidarity (``b_1 = 1/2``) halves the gap; the z statistic is the same for
    all members. The test uses the unpooled variance (Wald), which also gives the interval.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify import group_esl
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["men", "women"], size=2000)
    >>> y = rng.integers(0, 2, size=2000)
    >>> y_pred = (rng.random(2000) < np.where(g == "men", 0.8, 0.6)) * y
    >>> res = group_esl(y, y_pred, g, metric="tpr", value="equal_surplus")
    >>> bool(res.p_value < 0.05), bool(res.difference > 0)
    (True, True)
    >>> res.values.index.tolist()
    ['men', 'women']
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
    group_metric = problem.num[:, 0] / problem.den[:, 0]
    b = _resolve_coefficients(value, len(levels[0]))
    return GroupESLResult(
        values=pd.Series(values, index=index, name="value"),
        total=total,
        group_metric=pd.Series(group_metric, index=index, name=metric),
        covariance=pd.DataFrame(cov, index=index, columns=index),
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
