"""Second stage: split every group's ESL value among the features (two-stage ESL)."""

from __future__ import annotations

import numbers
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from ._group import (
    _DENOMINATOR_ROWS,
    _binary_vector,
    _cells,
    _check_baseline,
    _check_cells,
    _check_confidence,
    _denominator_rows,
    _first_stage_map,
    _sensitive_frame,
    _wald,
)
from ._values import VALUE_NAMES, _coefficient_matrix, _needed_coalitions, esl_coefficients
from ._variance import _check_metric, _Problem

# the columns of the contribution tests, in ESL units (= metric / baseline, split twice)
_RESULT_COLUMNS = ("esl_difference", "esl_std_error", "z", "p_value", "esl_ci_low",
                   "esl_ci_high", "majority")
_TEST_KEYS = ("difference", "std_error", "z", "p_value", "ci_low", "ci_high")
# the raw gap of the full model's metric, in metric units (first_stage only)
_METRIC_COLUMNS = ("metric_difference", "metric_std_error", "metric_ci_low", "metric_ci_high")


def _fit_predict(estimator, X_train, y_train, X_test):
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    pred = estimator.predict(X_test)
    return pred, time.perf_counter() - start


def _check_values_names(values) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise ValueError(f"values must be a sequence of ESL value names, got {values!r}.") from None
    if not values:
        raise ValueError("values must name at least one ESL value.")
    for v in values:
        if not isinstance(v, str) or v not in VALUE_NAMES:
            raise ValueError(
                f"Unknown ESL value {v!r} in values; valid names are "
                f"{', '.join(map(repr, VALUE_NAMES))}."
            )
    if len(set(values)) != len(values):
        raise ValueError(f"values contains duplicates: {values!r}.")
    return values


def _as_frame(X, name):
    if isinstance(X, pd.DataFrame):
        return X
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got shape {arr.shape}.")
    return pd.DataFrame(arr)


def _resolve_features(features, X: pd.DataFrame, sensitive_cols: list) -> dict:
    """Players as ``{name: [columns]}``."""
    if features is None:
        players = {c: [c] for c in X.columns if c not in sensitive_cols}
    elif isinstance(features, dict):
        players = {k: list(v) if isinstance(v, (list, tuple)) else [v]
                   for k, v in features.items()}
    else:
        if isinstance(features, str):
            features = [features]
        players = {c: [c] for c in features}
    if not players:
        raise ValueError("features is empty: at least one feature (player) is needed.")
    seen = set()
    for name, cols in players.items():
        if not cols:
            raise ValueError(f"feature {name!r} has no columns.")
        for c in cols:
            if c not in X.columns:
                raise ValueError(f"feature column {c!r} is not a column of X.")
            if c in sensitive_cols:
                raise ValueError(
                    f"feature column {c!r} is the sensitive feature; it is never a model feature."
                )
            if c in seen:
                raise ValueError(f"column {c!r} appears in more than one feature.")
            seen.add(c)
    return players


def _group_label(label):
    if isinstance(label, tuple):
        return ", ".join(map(str, label))
    return label


def esl_decomposition(
    estimator,
    X,
    y,
    *,
    X_test=None,
    y_test=None,
    sensitive_test=None,
    sensitive_feature=None,
    features=None,
    metric: str = "tpr",
    values=("shapley", "equal_surplus", "solidarity", "consensus", "lsp"),
    baseline: float = 0.5,
    ci: str = "asymptotic",
    n_bootstrap: int = 1000,
    test_size: float = 0.3,
    random_state=None,
    n_jobs: int | None = None,
    verbose: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Two-stage ESL: contributions of every feature to every group's ESL value.

    First stage: the groups split the metric (see :func:`group_esl`). Second stage: for
    every group ``g``, the features are the players and the worth of a set ``T`` of
    features is ``g``'s first-stage value for a clone of ``estimator`` fit on ``X[T]``;
    the same ESL member is used in both stages (the paper's Tables 2 and 3). By
    efficiency a group's contributions add up to its first-stage value with all features.

    Parameters
    ----------
    estimator : estimator object
        Unfitted binary classifier (``fit``/``predict``, labels 0/1), cloned for every
        coalition. It must accept any subset of the feature columns (in a
        ``ColumnTransformer`` select columns with ``make_column_selector``).
    X : pandas.DataFrame of shape (n_samples, n_columns)
        Training data (or all data, split when ``X_test`` is None).
    y : array-like of shape (n_samples,)
        0/1 labels (1 = favorable).
    X_test, y_test : DataFrame and array-like, default=None
        Rows on which every coalition model is evaluated. When None, ``X``/``y`` are split
        with ``test_size``/``random_state``, stratified by label and group.
    sensitive_test : array-like, Series or DataFrame, default=None
        Groups of the test rows, when the sensitive attribute is not a column of
        ``X``/``X_test`` (needs ``X_test``).
    sensitive_feature : str or list of str, default=None
        Column(s) of ``X`` (and ``X_test``) holding the sensitive attribute; never used as
        a model feature. Several columns give intersections (multi-stage ESL).
    features : list or dict, default=None
        The players: column names, or ``{player_name: [columns]}`` to treat several
        columns (e.g. one-hot indicators) as one player. Default: every column of ``X``
        except the sensitive one(s).
    metric : {"tpr", "fpr", "selection_rate", "ppv", "npv"}, default="tpr"
    values : sequence of str, default=all five members
        ESL members to compute (names of :func:`esl_coefficients`).
    baseline : float, default=0.5
        Divisor of the metric in the first stage.
    ci : {"asymptotic", "bootstrap"}, default="asymptotic"
        ``"asymptotic"``: plug-in (delta-method) variances from the per-row predictions of
        the fixed coalition models, covariances included, no resampling. ``"bootstrap"``:
        resample the test rows i.i.d. with replacement ``n_bootstrap`` times (the models
        stay fixed; replicates leaving a group without the metric's denominator rows are
        dropped); percentile intervals and bootstrap standard errors. Both treat the test
        rows as independent draws from one population (random group sizes, label and
        prediction counts).
    n_bootstrap : int, default=1000
    test_size : float, default=0.3
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the bootstrap.
    n_jobs : int, default=None
        Coalition models (and bootstrap chunks) run through ``joblib.Parallel``.
    verbose : int, default=0
        Show a tqdm progress bar over the coalition fits (and bootstrap chunks).
    confidence : float, default=0.95
        Level of the intervals; a contribution difference is significant when
        ``p_value < 1 - confidence``.

    Returns
    -------
    result : pandas.DataFrame
        Indexed by ``(value, feature)``. One column per group (the contribution
        ``C_g^k`` of the feature to the group's first-stage value, Proposition 3.1;
        intersections are labelled ``"a, b"``), then ``esl_difference``,
        ``esl_std_error``, ``z``, ``p_value``, ``esl_ci_low``, ``esl_ci_high`` of the
        difference of the contributions of the two compared groups (Theorem 4.3) and
        ``majority`` (the feature is flagged unfair: a strict majority of the members in
        ``values`` reject equality, Section 4). All contributions and differences are in
        ESL units: the metric divided by ``baseline``, split among the groups and then
        among the features (for two groups and ``b_1 = 1`` the first-stage difference is
        twice the raw metric gap with the default baseline 0.5). With two groups the
        difference is first group minus second (sorted labels); with more, the most
        minus the least favored group at the first stage (of that member).
        ``result.attrs`` holds ``first_stage`` (per member: the groups' first-stage
        values of the full model, ``total``, the same ``esl_*``/``z``/``p_value`` test
        columns, and ``metric_difference``, ``metric_std_error``, ``metric_ci_low``,
        ``metric_ci_high``: the full model's raw metric gap of the compared groups, in
        metric units), ``units`` (a sentence stating them), ``group_std_error``
        (standard error of every contribution, ESL units), ``compared``, ``coalitions``,
        ``n_fits``, ``fit_time`` (sum of fit+predict times), ``wall_time``, ``ci`` and
        ``metric``.

    Notes
    -----
    Every needed coalition of features is fit once and shared by all members; the Equal
    Surplus value alone needs only the ``n`` singletons and the full set (``n + 2``
    coalitions with the empty one, so ``n + 1`` fits), the other members all ``2^n - 1``
    non-empty ones. The empty coalition is worth 0 (as in the paper, so that the
    contributions add up to the first-stage value); no model without features is fit.

    Each contribution is a fixed linear combination of ratios (group rates) of per-row
    indicators of the coalition models on the same test rows. Its variance given the
    models is the delta-method one over test rows drawn i.i.d. from one population: each
    ratio ``N / D`` has the influence ``(num_i - R den_i) / D`` of every row, with both
    sums random (the denominator of PPV / NPV, the number of positives of a group, the
    group sizes); the covariances between coalitions (the same row under several
    models) and between groups are exact sums over the rows. This is the paper's
    Proposition B.2 for every metric.

    Round-off rule: when the models make identical predictions (a feature no model
    uses), a contribution difference is an exact zero computed with floating-point
    round-off. A difference and a standard error both at most ``1e-12 * max(1, scale)``,
    where ``scale`` is the sum of the absolute values of the terms whose signed sum is
    the difference, give ``z = 0``, ``p_value = 1`` (no evidence) and never count
    towards ``majority``. A genuine difference of two ratios of counts is at least
    ``1 / n^2`` (n test rows), above the tolerance for fewer than a million rows.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import esl_decomposition
    >>> rng = np.random.default_rng(0)
    >>> n = 2000
    >>> sex = rng.integers(0, 2, n)
    >>> X = pd.DataFrame({"x1": rng.normal(size=n) + sex, "x2": rng.normal(size=n), "sex": sex})
    >>> y = (X.x1 + X.x2 + rng.normal(size=n) > 0.5).astype(int)
    >>> res = esl_decomposition(LogisticRegression(), X, y, sensitive_feature="sex",
    ...                         values=("equal_surplus",), random_state=0)
    >>> res.index.tolist()
    [('equal_surplus', 'x1'), ('equal_surplus', 'x2')]
    >>> bool(np.isclose(res[[0, 1]].sum().to_numpy(),
    ...      res.attrs["first_stage"][[0, 1]].to_numpy()).all())
    True
    """
    t_start = time.perf_counter()
    metric = _check_metric(metric)
    values = _check_values_names(values)
    baseline = _check_baseline(baseline)
    confidence = _check_confidence(confidence)
    if ci not in ("asymptotic", "bootstrap"):
        raise ValueError(f"ci must be 'asymptotic' or 'bootstrap', got {ci!r}.")
    if (isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, numbers.Integral)
            or n_bootstrap < 2):
        raise ValueError(f"n_bootstrap must be an integer >= 2, got {n_bootstrap!r}.")
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise TypeError(
            f"estimator must have fit and predict methods, got {type(estimator).__name__}."
        )

    X = _as_frame(X, "X")
    y = _binary_vector(y, "y")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} rows but X has {X.shape[0]}; lengths must match.")
    if sensitive_feature is not None and sensitive_test is not None:
        raise ValueError("Give the sensitive attribute either as sensitive_feature (a column "
                         "of X) or as sensitive_test, not both.")
    if sensitive_feature is None and sensitive_test is None:
        raise ValueError("The sensitive attribute is missing: pass sensitive_feature (a column "
                         "of X) or sensitive_test (groups of the test rows).")
    sens_cols = []
    if sensitive_feature is not None:
        sens_cols = (list(sensitive_feature) if isinstance(sensitive_feature, (list, tuple))
                     else [sensitive_feature])
        for c in sens_cols:
            if c not in X.columns:
                raise ValueError(f"sensitive_feature {c!r} is not a column of X.")
    players = _resolve_features(features, X, sens_cols)

    if X_test is None:
        if sensitive_test is not None:
            raise ValueError("sensitive_test gives the groups of X_test rows; it needs X_test "
                             "(or use sensitive_feature to split X).")
        if y_test is not None:
            raise ValueError("y_test was given without X_test.")
        strata = pd.Series(y.astype(str), index=X.index)
        for c in sens_cols:
            strata = strata + "|" + X[c].astype(str)
        stratify = strata if strata.value_counts().min() >= 2 else y
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=test_size, random_state=random_state, stratify=stratify
        )
    else:
        X_train, y_train = X, y
        X_test = _as_frame(X_test, "X_test")
        if y_test is None:
            raise ValueError("y_test is required with X_test.")
        y_test = _binary_vector(y_test, "y_test")
        if y_test.shape[0] != X_test.shape[0]:
            raise ValueError(f"y_test has {y_test.shape[0]} rows but X_test has "
                             f"{X_test.shape[0]}; lengths must match.")
        for cols in players.values():
            for c in cols:
                if c not in X_test.columns:
                    raise ValueError(f"feature column {c!r} is not a column of X_test.")
    if sensitive_test is None:
        for c in sens_cols:
            if c not in X_test.columns:
                raise ValueError(f"sensitive_feature {c!r} is not a column of X_test.")
        sens = _sensitive_frame(X_test[sens_cols], X_test.shape[0], "sensitive_feature")
    else:
        sens = _sensitive_frame(sensitive_test, X_test.shape[0], "sensitive_test")
    y_test = np.asarray(y_test)
    cells, levels, group_index = _cells(sens)
    if metric in ("selection_rate", "tpr", "fpr"):  # denominators free of the model
        _check_cells(cells, group_index, _denominator_rows(metric, y_test, y_test), metric,
                     "group" if len(levels) == 1 else "intersection")
    group_labels = [_group_label(g) for g in group_index]
    if len(set(group_labels) & set(_RESULT_COLUMNS)):
        raise ValueError(f"group labels {group_labels} clash with the result columns.")

    # ------------------------------------------------------------ coalition models
    names = list(players)
    n = len(names)
    coalitions = _needed_coalitions(values, n)
    column_order = {c: j for j, c in enumerate(X.columns)}

    def columns_of(coalition):
        cols = [c for k in sorted(coalition) for c in players[names[k]]]
        return sorted(cols, key=column_order.get)

    jobs = (delayed(_fit_predict)(clone(estimator), X_train[columns_of(T)], y_train,
                                  X_test[columns_of(T)]) for T in coalitions)
    outputs = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    if verbose:
        from tqdm.auto import tqdm

        outputs = tqdm(outputs, total=len(coalitions), desc="coalition fits")
    yhat = np.empty((X_test.shape[0], len(coalitions)), dtype=np.int8)
    fit_time = 0.0
    for j, (pred, elapsed) in enumerate(outputs):
        yhat[:, j] = _binary_vector(
            pred, f"predictions of the model on features {[names[k] for k in coalitions[j]]}"
        )
        fit_time += elapsed
    t_fitted = time.perf_counter()
    position = {T: j for j, T in enumerate(coalitions)}
    full = position[frozenset(range(n))]

    # ---------------------------------------------------------------- estimation
    rows, first_rows, se_rows, compared = [], [], [], {}
    for value in values:
        b = esl_coefficients(value, n)
        member_coalitions, mat = _coefficient_matrix(b)
        model_map = np.zeros((len(coalitions), n + 1))
        for T, coefs in zip(member_coalitions, mat):
            model_map[position[T], :n] = coefs
        model_map[full, n] = 1.0  # last output: the first stage of the full model
        unions, union_map = _first_stage_map(levels, value)
        problem = _Problem(yhat, y_test, cells, len(group_index), unions, metric, baseline)
        used = np.flatnonzero(np.abs(model_map).sum(axis=1) > 0)
        _check_denominators(problem, used, coalitions, names, unions, group_index, metric)
        est = problem.outputs(model_map, union_map)  # (n + 1, groups)
        first = est[n]
        i, j = ((0, 1) if len(group_labels) == 2
                else (int(np.argmax(first)), int(np.argmin(first))))
        compared[value] = (group_labels[i], group_labels[j])
        tests, group_se = _member_tests(problem, model_map, union_map, est, (i, j), ci,
                                        n_bootstrap, random_state, n_jobs, verbose,
                                        confidence)
        for k in range(n):
            rows.append([*est[k], *(tests[k][c] for c in _TEST_KEYS)])
            se_rows.append(group_se[k])
        raw = _raw_gap(yhat[:, full], y_test, cells, len(group_index), metric, (i, j),
                       confidence)
        first_rows.append([*first, first.sum(), *(tests[n][c] for c in _TEST_KEYS),
                           *(raw[c] for c in ("difference", "std_error", "ci_low", "ci_high"))])

    index = pd.MultiIndex.from_product([list(values), names], names=["value", "feature"])
    result = pd.DataFrame(rows, index=index, columns=[*group_labels, *_RESULT_COLUMNS[:-1]])
    alpha = 1 - confidence
    reject = (result["p_value"] < alpha).groupby(level="feature", sort=False).sum()
    result["majority"] = [bool(reject[f] > len(values) / 2) for f in names] * len(values)
    first_stage = pd.DataFrame(
        first_rows, index=pd.Index(list(values), name="value"),
        columns=[*group_labels, "total", *_RESULT_COLUMNS[:-1], *_METRIC_COLUMNS],
    )
    result.attrs.update(
        first_stage=first_stage,
        group_std_error=pd.DataFrame(se_rows, index=index, columns=group_labels),
        compared=compared,
        coalitions=[tuple(names[k] for k in sorted(T)) for T in coalitions],
        n_fits=len(coalitions),
        fit_time=fit_time,
        fit_wall_time=t_fitted - t_start,
        wall_time=time.perf_counter() - t_start,
        ci=ci,
        metric=metric,
        units=(f"group columns and esl_*: ESL units = {metric} / baseline ({baseline:g}), "
               f"split by the ESL value among groups then features; metric_* (first_stage "
               f"only): {metric} (metric units)"),
        baseline=baseline,
        confidence=confidence,
        n_test=int(X_test.shape[0]),
    )
    return result


def _check_denominators(problem, used, coalitions, names, unions, group_index, metric):
    """Every ratio that enters must have a positive denominator."""
    _, dcount = problem.ratios()
    needed = unions.any(axis=1)
    bad = np.argwhere(dcount[used][:, needed] <= 0)
    if bad.size:
        t, u = used[bad[0, 0]], np.flatnonzero(needed)[bad[0, 1]]
        groups = [_group_label(group_index[c]) for c in np.flatnonzero(unions[u])]
        feats = [names[k] for k in sorted(coalitions[t])]
        raise ValueError(
            f"The model fit on features {feats} leaves the group(s) {groups} without "
            f"{_DENOMINATOR_ROWS[metric]} in the test rows; the metric {metric!r} is undefined."
        )



def _member_tests(problem, model_map, union_map, est, pair, ci, n_bootstrap, random_state,
                  n_jobs, verbose, confidence):
    """Tests of the contribution differences of the groups ``pair`` for one member.

    Returns the test dicts of every output (features, then the full model's first stage)
    and the standard errors of every contribution, shape (n_outputs, n_groups).
    """
    i, j = pair
    n_out, n_leaves = est.shape
    scale = problem.magnitude(model_map, union_map)
    scale = scale[:, i] + scale[:, j]
    diff = est[:, i] - est[:, j]
    if ci == "asymptotic":
        # the contrast as one more output, so that its variance is a sum of squared
        # influences (no cancellation of var_i + var_j - 2 cov_ij)
        contrast = union_map[:, [i]] - union_map[:, [j]]
        cov = problem.covariance(model_map, np.hstack([union_map, contrast]))
        var = np.clip(np.diag(cov).reshape(n_out, n_leaves + 1), 0, None)
        tests = [_wald(diff[k], np.sqrt(var[k, -1]), confidence, scale[k])
                 for k in range(n_out)]
        return tests, np.sqrt(var[:, :-1])
    alpha = 1 - confidence
    reps = problem.bootstrap(model_map, union_map, n_bootstrap, random_state,
                             n_jobs=n_jobs, verbose=verbose)
    reps = reps[np.isfinite(reps).all(axis=(1, 2))]
    if reps.shape[0] < 2:
        raise ValueError(
            "Fewer than 2 bootstrap replicates have every group's metric defined "
            "(resampled rows leave a group without the metric's denominator rows); "
            "use ci='asymptotic' or more test rows."
        )
    diffs = reps[:, :, i] - reps[:, :, j]
    tests = []
    for k in range(n_out):
        d = _wald(diff[k], float(diffs[:, k].std(ddof=1)), confidence, scale[k])
        d["ci_low"], d["ci_high"] = np.quantile(diffs[:, k], [alpha / 2, 1 - alpha / 2])
        tests.append(d)
    return tests, reps.std(axis=0, ddof=1)


def _raw_gap(pred, y, cells, n_cells, metric, pair, confidence):
    """The full model's metric gap of the groups ``pair``, in metric units."""
    i, j = pair
    identity = np.eye(n_cells)
    raw = _Problem(pred[:, None], y, cells, n_cells, identity.astype(bool), metric, 1.0)
    rates = raw.outputs(np.ones((1, 1)), identity)[0]
    contrast = identity[:, [i]] - identity[:, [j]]
    var = raw.covariance(np.ones((1, 1)), contrast)[0, 0]
    return _wald(float(rates[i] - rates[j]), float(np.sqrt(max(var, 0.0))), confidence,
                 abs(rates[i]) + abs(rates[j]))
