"""First stage: ESL values of the groups of a sensitive attribute (group-ESL)."""

from __future__ import annotations

from itertools import product
from numbers import Integral, Real

import numpy as np
import pandas as pd

from ..utils._compat import Interval, StrOptions, validate_params
from ..utils._validation import check_sample_weight, check_sensitive_features
from ._checks import _binary_targets, _check_same_length, check_esl_params
from ._limits import (
    MAX_COALITIONS,
    MAX_TABLE_SIZE,
    TableTooLargeError,
    check_limit,
    check_n_coalitions,
    count_coalitions,
    format_bytes,
)
from ._one_attribute import one_attribute_estimates
from ._results import GroupESLResult
from ._values import VALUE_NAMES, _check_n_players, _coefficient_matrix, _resolve_coefficients
from ._variance import _DENOMINATOR_ROWS, METRICS, _metric_parts, _Problem


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


def _check_cells(cells, index, denominator_rows, metric, what="group"):
    """Every cell must have (weighted) rows for the metric's denominator."""
    counts = np.bincount(cells, weights=denominator_rows, minlength=len(index))
    empty = np.flatnonzero(counts <= 0)
    if empty.size:
        label = index[empty[0]]
        raise ValueError(
            f"{what} {label!r} has no {_DENOMINATOR_ROWS[metric]} (of positive weight); "
            f"the metric {metric!r} is undefined for it."
        )


# ----------------------------------------------------------- first-stage linear map


def _union(allowed, shape) -> frozenset:
    """Return the cells (C-order codes) whose level of every attribute is allowed."""
    return frozenset(int(np.ravel_multi_index(c, shape)) for c in product(*allowed))


def _stage(allowed, k, shape, coefs) -> dict:
    """Build stage ``k`` of the multi-stage value.

    Returns ``{levels of attributes 0..k-1: {union: coefficient}}``, the linear functional
    of the metric on unions of every leaf.
    """
    coalitions, mat = coefs[k - 1]
    out: dict = {}
    for row, coalition in enumerate(coalitions):
        sub_allowed = list(allowed)
        sub_allowed[k - 1] = tuple(sorted(coalition))
        sub = ({(): {_union(sub_allowed, shape): 1.0}} if k == 1
               else _stage(sub_allowed, k - 1, shape, coefs))
        for prefix, functional in sub.items():
            _accumulate(out, prefix, functional, mat[row])
    return out


def _accumulate(out: dict, prefix: tuple, functional: dict, coefficients) -> None:
    """Add ``coefficients[level] * functional`` to the leaf ``prefix + (level,)``."""
    for level, c in enumerate(coefficients):
        if c == 0:
            continue
        target = out.setdefault(prefix + (level,), {})
        for u, coef in functional.items():
            target[u] = target.get(u, 0.0) + c * coef


def _check_first_stage_size(levels: list[list], value, max_coalitions: int,
                            caller: str = "group_esl") -> None:
    """Refuse, before building it, a first-stage map with too many unions of groups.

    The multi-stage value evaluates (at most) the product over the attributes of the
    coalitions each one needs; each union is a row of two (unions, cells) arrays.
    """
    max_coalitions = check_limit(max_coalitions, "max_coalitions")
    shape = [len(lv) for lv in levels]
    n_cells = int(np.prod(shape))
    remaining = max_coalitions
    for k, lv in enumerate(levels):
        b = _resolve_coefficients(value, _check_n_players(len(lv)))
        groups = "groups" if len(levels) == 1 else f"levels of sensitive attribute {k}"
        count = check_n_coalitions(
            b, remaining, what=f"{caller} with value={_value_name(value)} on {len(lv)} {groups}",
            bytes_per_coalition=9 * n_cells,
            extra=("Fewer groups also help: bin a numeric sensitive column (each distinct "
                   "value is a group) or merge rare groups. "),
        )
        remaining = max(remaining // max(count, 1), 1)


def check_group_arrays(levels: list[list], value, max_table_size: int,
                       caller: str = "group_esl", n_outputs: int = 1,
                       extra_leaves: int = 0) -> None:
    """Refuse, before building them, arrays of the groups beyond ``max_table_size``.

    The ``(n_outputs * (groups + extra_leaves))^2`` covariance (for one attribute in
    :func:`group_esl` the other arrays are sparse); with several attributes also the
    dense ``coalitions x cells`` map of the stages.
    """
    max_table_size = check_limit(max_table_size, "max_table_size")
    n_cells = int(np.prod([len(lv) for lv in levels]))
    side = n_outputs * (n_cells + extra_leaves)
    entries = side**2
    what = f"the ({side:,} x {side:,}) covariance"
    if len(levels) > 1:
        unions = int(np.prod([count_coalitions(
            _resolve_coefficients(value, len(lv)), max_table_size) for lv in levels]))
        if unions * n_cells > entries:
            entries = unions * n_cells
            what = f"the map of {unions:,} coalitions on {n_cells:,} cells"
    if entries <= max_table_size:
        return
    groups = "groups" if len(levels) == 1 else "cells (intersections)"
    raise TableTooLargeError(
        f"{caller} on {n_cells:,} {groups} would build {what}: {entries:,} entries "
        f"({format_bytes(8 * entries)}), beyond max_table_size={max_table_size:,}. Use "
        "fewer groups (bin a numeric sensitive column, merge rare groups), or raise "
        "max_table_size if the memory allows."
    )


def _value_name(value) -> str:
    return repr(value) if isinstance(value, str) else "given as constants"


def _first_stage_map(levels: list[list], value) -> tuple[np.ndarray, np.ndarray]:
    """Build the linear map from the metric on unions of cells to the cells' ESL values.

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
    coefs = [_coefficient_matrix(_resolve_coefficients(value, _check_n_players(k)))
             for k in shape]
    if len(shape) == 1:  # the players are the cells: the member's map itself, vectorised
        coalitions, matrix = coefs[0]
        unions = np.zeros((len(coalitions), shape[0]), dtype=bool)
        for j, coalition in enumerate(coalitions):
            unions[j, list(coalition)] = True
        return unions, matrix
    result = _stage([tuple(range(k)) for k in shape], len(shape), shape, coefs)
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


# ---------------------------------------------------------------------- public function


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "sensitive_features": ["array-like"],
        "metric": [StrOptions(set(METRICS))],
        "value": [StrOptions(set(VALUE_NAMES)), "array-like"],
        "baseline": [Interval(Real, 0, None, closed="neither")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "sample_weight": ["array-like", None],
        "max_coalitions": [Interval(Integral, 1, None, closed="left")],
        "pos_label": "no_validation",  # any label: checked against the labels
        "max_table_size": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def group_esl(
    y_true,
    y_pred,
    *,
    sensitive_features,
    metric: str = "tpr",
    value: str | np.ndarray = "shapley",
    baseline: float = 0.5,
    confidence: float = 0.95,
    sample_weight=None,
    max_coalitions: int = MAX_COALITIONS,
    pos_label=None,
    max_table_size: int = MAX_TABLE_SIZE,
) -> GroupESLResult:
    """Split a classification metric among sensitive groups with an ESL value.

    The groups are the players; the worth of a set ``S`` of groups is the metric computed
    on the rows of the groups in ``S`` divided by ``baseline`` (the metric of a random
    classifier), and the empty set is worth 0 (Section 3 of Amri-Jouidel et al.). Equal
    values across groups is equivalent to the metric's parity criterion (Theorems 3.1 and
    4.1): equal opportunity for ``"tpr"``, statistical parity for ``"selection_rate"``...

    Three words are kept apart: ``metric`` is the classification metric (a rate),
    ``value`` is the ESL member that splits it, and the result's ``esl_*`` fields are in
    ESL units while its ``metric_*`` fields are in metric units.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels: two labels at most (``1`` = favorable for labels in ``{0, 1}`` or
        ``{-1, 1}``; others need ``pos_label``).
    y_pred : array-like of shape (n_samples,)
        Predicted labels, among the labels of ``y_true``.
    sensitive_features : array-like, pandas.Series or pandas.DataFrame
        The sensitive values, one per row (as fairlearn's ``MetricFrame``). A DataFrame
        (or 2-d array) of several attributes gives the intersections, split attribute by
        attribute (multi-stage ESL, Appendix A.2): the first column's groups share the
        total, then each share is split among the second column's groups, and so on.
        Every intersection must have rows.
    metric : {"tpr", "fpr", "selection_rate", "ppv", "npv"}, default="tpr"
        The classification metric that is split. ``ppv = P(y=1 | yhat=1)``,
        ``npv = P(y=0 | yhat=0)``.
    value : str or array-like, default="shapley"
        The ESL member that splits the metric: a name of :func:`esl_coefficients`
        (``"shapley"``, ``"solidarity"``, ``"equal_surplus"``, ``"consensus"``,
        ``"lsp"``) or the constants ``b_1..b_n``.
    baseline : float, default=0.5
        Divisor of the metric (0.5: a random classifier's TPR under balanced classes).
    confidence : float, default=0.95
        Level of the confidence intervals.
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights of the rows: every rate is a ratio of weighted sums and the
        standard errors are those of the data with every row repeated ``w_i`` times
        (exactly, for integer weights). Zero weights drop rows.
    max_coalitions : int, default=2**20
        Largest number of coalitions (unions of groups) evaluated. Every member but
        Equal Surplus needs all ``2^n - 1`` coalitions of the ``n`` groups, so beyond
        20 groups (a numeric sensitive column gives one group per distinct value) it
        raises :class:`~skfairverify.s3p.TableTooLargeError` before any work, naming the
        count, the memory and the alternative (``value="equal_surplus"``, ``n + 1``
        coalitions, or fewer groups).
    pos_label : label, default=None
        The favorable label of ``y_true`` and ``y_pred``, as in scikit-learn's metrics
        (``pos_label="survived"``). ``None``: ``1`` for labels in ``{0, 1}`` or
        ``{-1, 1}`` (booleans included); any other pair of labels is refused with a
        ``ValueError`` asking for it, never guessed. Labels are matched by the package's
        one rule: ``1``, ``1.0`` and ``True`` are one label, ``"1"`` another, and ``1``
        next to ``"1"`` is refused.
    max_table_size : int, default=50_000_000
        Largest number of entries of an array of the groups: the ``n_groups x n_groups``
        covariances (with several attributes, also the ``coalitions x cells`` map). A
        larger one raises :class:`~skfairverify.s3p.TableTooLargeError` before any work,
        naming the groups, entries and memory.

    Returns
    -------
    result : GroupESLResult
        ``esl_values``, ``total``, ``shares`` (ESL units = metric / baseline);
        ``metric_by_group`` (metric units); for two groups ``compared``,
        ``esl_difference``, ``esl_std_error``, ``esl_ci`` (ESL units),
        ``metric_difference``, ``metric_std_error``, ``metric_ci`` (metric units), ``z``,
        ``p_value``; ``to_frame()``, ``pairwise()``.

    Raises
    ------
    ValueError
        Unknown metric or value, no rows, lengths that differ, NaN, more than two labels
        or two labels other than 0/1 without ``pos_label``, a sensitive attribute with
        one group, a group (or intersection) without the rows the metric needs (e.g. no
        positives for ``"tpr"``), negative weights.
    TableTooLargeError
        If the member needs more than ``max_coalitions`` coalitions of groups, or an
        array of the groups more than ``max_table_size`` entries.

    Notes
    -----
    Units: the values are in ESL units, the metric divided by ``baseline`` and split by
    the ESL member (the paper's ``phi_g``). For two groups every member gives
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
    the unpooled variance (Wald), which also gives the intervals. With ``sample_weight``
    the sums are weighted (``D = sum_i w_i den_i``) and the covariance is
    ``sum_i w_i phi_i phi_i^T`` with ``phi_i = (num_i - R den_i) / D``, i.e.
    ``sum_i psi_i psi_i^T / w_i`` for the weighted influence
    ``psi_i = w_i (num_i - R den_i) / D``: frequency weights.

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
    >>> res = group_esl(y, y_pred, sensitive_features=g, metric="tpr",
    ...                 value="equal_surplus")
    >>> res.compared, bool(res.p_value < 0.05)
    (('men', 'women'), True)
    >>> tpr = res.metric_by_group
    >>> bool(np.isclose(res.metric_difference, tpr["men"] - tpr["women"]))
    True
    >>> bool(np.isclose(res.esl_difference, res.metric_difference / 0.5))
    True
    """
    check_esl_params(metric, value, baseline)
    baseline = float(baseline)
    y, yhat = _binary_targets({"y_true": y_true, "y_pred": y_pred}, pos_label)
    _check_same_length(yhat, "y_pred", y.shape[0], "y_true")
    if y.shape[0] == 0:
        raise ValueError(
            "group_esl needs rows: y_true, y_pred and sensitive_features are empty."
        )
    weights = check_sample_weight(sample_weight, y.shape[0])
    frame = check_sensitive_features(sensitive_features, n_rows=y.shape[0]).frame
    cells, levels, index = _cells(frame.reset_index(drop=True))
    what = "group" if len(levels) == 1 else "intersection"
    _check_cells(cells, index, _denominator_rows(metric, y, yhat, weights), metric, what)
    _check_first_stage_size(levels, value, max_coalitions)
    check_group_arrays(levels, value, max_table_size)
    params = {"metric": metric, "value": value, "baseline": baseline,
              "confidence": float(confidence),
              "coefficients": _resolve_coefficients(value, len(levels[0]))}
    if len(levels) == 1:
        estimates = one_attribute_estimates(metric, y, yhat, cells, len(index),
                                            params["coefficients"], baseline, weights)
        return _result(estimates, index, params)
    unions, matrix = _first_stage_map(levels, value)
    problem = _Problem(yhat[:, None], y, cells, len(index), unions, metric, baseline, weights)
    identity = np.ones((1, 1))
    cells_only = np.eye(len(index))
    raw = _Problem(yhat[:, None], y, cells, len(index), cells_only.astype(bool), metric, 1.0,
                   weights)
    estimates = {
        "esl_values": problem.outputs(identity, matrix)[0],
        "total": problem.num.sum() / problem.den.sum() / baseline,
        "metric_by_group": raw.outputs(identity, cells_only)[0],
        "esl_covariance": problem.covariance(identity, matrix),
        "metric_covariance": raw.covariance(identity, cells_only),
    }
    return _result(estimates, index, params)


def _result(estimates: dict, index: pd.Index, params: dict) -> GroupESLResult:
    """The GroupESLResult of the estimates (arrays) of the groups ``index``."""
    def frame(matrix):
        return pd.DataFrame(matrix, index=index, columns=index)

    return GroupESLResult._from_estimates(
        esl_values=pd.Series(estimates["esl_values"], index=index, name="esl_value"),
        total=estimates["total"],
        metric_by_group=pd.Series(estimates["metric_by_group"], index=index,
                                  name=params["metric"]),
        esl_covariance=frame(estimates["esl_covariance"]),
        metric_covariance=frame(estimates["metric_covariance"]),
        **params,
    )


def _denominator_rows(metric, y, yhat, weights=None):
    """Per-row (weighted) denominator indicator of the metric for the given predictions."""
    _, _, d0, d1 = _metric_parts(metric, y)
    rows = d0 + d1 * np.asarray(yhat, dtype=float)
    return rows if weights is None else rows * weights
