"""Second stage: split every group's ESL value among the features (two-stage ESL).

:func:`esl_decomposition` runs named steps: validate the inputs (and split the rows),
resolve the players (features) and the groups, fit one model per needed coalition of
features, estimate every member's contributions with their tests, assemble the result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from ..utils._compat import (
    N_JOBS,
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from ..utils._fitting import check_weights_accepted, fit_with_weights
from ..utils._threads import limited_threads
from ..utils._validation import check_sample_weight, check_sensitive, check_sensitive_features
from ._checks import (
    _as_frame,
    _binary_targets,
    _binary_vector,
    _check_baseline,
    _check_confidence,
    _check_same_length,
    _check_values_names,
    _resolve_features,
)
from ._group import (
    _cells,
    _check_cells,
    _check_first_stage_size,
    _denominator_rows,
    _first_stage_map,
    check_group_arrays,
)
from ._inference import _wald
from ._limits import MAX_COALITIONS, MAX_FITS, MAX_TABLE_SIZE, check_limit, check_n_fits
from ._results import ESLDecompositionResult
from ._values import _coefficient_matrix, _esl_coefficients, _needed_coalitions, _needed_sizes
from ._variance import _DENOMINATOR_ROWS, METRICS, _bootstrap_design, _check_metric, _Problem

__all__ = ["esl_decomposition"]

# the columns of the contribution tests, in ESL units (= metric / baseline, split twice)
_RESULT_COLUMNS = ("esl_difference", "esl_std_error", "z", "p_value", "esl_ci_low",
                   "esl_ci_high", "majority")
_TEST_KEYS = ("difference", "std_error", "z", "p_value", "ci_low", "ci_high")
# the raw gap of the full model's metric, in metric units (first_stage only)
_METRIC_COLUMNS = ("metric_difference", "metric_std_error", "metric_ci_low", "metric_ci_high")
_RAW_KEYS = ("difference", "std_error", "ci_low", "ci_high")


@dataclass
class _Rows:
    """The validated rows: the fits use the train part, the estimates the test part."""

    X_train: pd.DataFrame
    y_train: np.ndarray
    w_train: np.ndarray | None
    X_test: pd.DataFrame
    y_test: np.ndarray
    w_test: np.ndarray | None
    sensitive: pd.DataFrame  # the sensitive values of the test rows
    sensitive_names: list  # columns of X holding them ([] when given as values)


@dataclass
class _Groups:
    cells: np.ndarray
    levels: list
    index: pd.Index
    labels: list


@dataclass
class _Fits:
    names: list  # the players
    coalitions: list
    yhat: np.ndarray  # (n_test, n_coalitions) predictions
    fit_time: float
    fit_wall_time: float

    @property
    def full(self) -> int:
        return self.coalitions.index(frozenset(range(len(self.names))))


@dataclass
class _Settings:
    metric: str
    baseline: float
    ci: str
    n_bootstrap: int
    random_state: object
    n_jobs: int | None
    verbose: int
    confidence: float


def _group_label(label):
    if isinstance(label, tuple):
        return ", ".join(map(str, label))
    return label


# ------------------------------------------------------------------ step 1: the rows


def _validate_rows(X, y, X_test, y_test, sensitive_features, sample_weight,
                   sample_weight_test, test_size, random_state, pos_label) -> _Rows:
    """Validate the inputs; split ``X`` into train and test rows when ``X_test`` is None."""
    X = _as_frame(X, "X")
    both = X_test is not None and y_test is not None
    targets = _binary_targets({"y": y, "y_test": y_test} if both else {"y": y}, pos_label)
    y = targets[0]
    _check_same_length(y, "y", X.shape[0], "X")
    if X.shape[0] == 0:
        raise ValueError("esl_decomposition needs rows: X and y are empty.")
    weights = check_sample_weight(sample_weight, X.shape[0])
    if X_test is None:
        if y_test is not None or sample_weight_test is not None:
            given = "y_test" if y_test is not None else "sample_weight_test"
            raise ValueError(f"{given} was given without X_test.")
        return _split_rows(X, y, weights, sensitive_features, test_size, random_state)
    X_test = _as_frame(X_test, "X_test")
    if y_test is None:
        raise ValueError("y_test is required with X_test.")
    y_test = targets[1]
    _check_same_length(y_test, "y_test", X_test.shape[0], "X_test")
    if X_test.shape[0] == 0:
        raise ValueError("esl_decomposition needs evaluation rows: X_test is empty.")
    w_test = check_sample_weight(sample_weight_test, X_test.shape[0],
                                 name="sample_weight_test")
    _check_not_aligned_with_train(sensitive_features, X, X_test)
    sens = check_sensitive_features(sensitive_features, X_test)
    return _Rows(X, y, weights, X_test, y_test, w_test, sens.frame, sens.names or [])


def _check_not_aligned_with_train(sensitive_features, X, X_test) -> None:
    """Values of the sensitive features are those of the evaluation rows (``X_test``)."""
    if isinstance(sensitive_features, str) or not hasattr(sensitive_features, "__len__"):
        return
    n = len(sensitive_features)
    if n == X.shape[0] != X_test.shape[0]:
        raise ValueError(
            f"sensitive_features has {n} values, one per row of X, but with X_test the "
            f"values are those of the evaluation rows: one per row of X_test "
            f"({X_test.shape[0]}). Pass the X_test values (or column names)."
        )


def _split_rows(X, y, weights, sensitive_features, test_size, random_state) -> _Rows:
    """Split stratified by label and group (by label alone when a stratum is too small)."""
    sens = check_sensitive_features(sensitive_features, X)
    strata = pd.Series(y.astype(str), index=X.index)
    for c in sens.frame.columns:
        strata = strata + "|" + sens.frame[c].astype(str)
    stratify = strata if strata.value_counts().min() >= 2 else y
    arrays = [X, y, sens.frame] + ([] if weights is None else [weights])
    parts = train_test_split(*arrays, test_size=test_size, random_state=random_state,
                             stratify=stratify)
    X_train, X_test, y_train, y_test, _, s_test = parts[:6]
    w_train, w_test = parts[6:] if weights is not None else (None, None)
    s_test = check_sensitive(s_test, index=X_test.index, name="sensitive_features")
    return _Rows(X_train, y_train, w_train, X_test, y_test, w_test, s_test, sens.names or [])


def _check_players_in_test(players: dict, X_test: pd.DataFrame) -> None:
    for cols in players.values():
        for c in cols:
            if c not in X_test.columns:
                raise ValueError(f"feature column {c!r} is not a column of X_test.")


# ---------------------------------------------------------------- step 2: the groups


def _resolve_groups(rows: _Rows, metric: str) -> _Groups:
    """Cells of the evaluation rows, their labels; groups without denominator rows fail."""
    cells, levels, index = _cells(rows.sensitive)
    if metric in ("selection_rate", "tpr", "fpr"):  # denominators free of the model
        denominators = _denominator_rows(metric, rows.y_test, rows.y_test, rows.w_test)
        _check_cells(cells, index, denominators, metric,
                     "group" if len(levels) == 1 else "intersection")
    labels = [_group_label(g) for g in index]
    if set(labels) & set(_RESULT_COLUMNS):
        raise ValueError(f"group labels {labels} clash with the result columns.")
    return _Groups(cells, levels, index, labels)


# ------------------------------------------------------------ step 3: coalition fits


def _fit_predict(estimator, X_train, y_train, X_test, weights):
    start = time.perf_counter()
    fit_with_weights(estimator, X_train, y_train, weights, what="the coalition models")
    pred = estimator.predict(X_test)
    return pred, time.perf_counter() - start


def _fit_coalitions(estimator, rows: _Rows, players: dict, values, settings: _Settings,
                    t_start: float) -> _Fits:
    """One clone of ``estimator`` per needed coalition of players, predicting the test rows."""
    names = list(players)
    coalitions = _needed_coalitions(values, len(names))
    column_order = {c: j for j, c in enumerate(rows.X_train.columns)}

    def columns_of(coalition):
        cols = [c for k in sorted(coalition) for c in players[names[k]]]
        return sorted(cols, key=column_order.get)

    if rows.w_train is not None:
        check_weights_accepted(estimator, "the coalition models")
    jobs = (delayed(_fit_predict)(clone(estimator), rows.X_train[columns_of(T)],
                                  rows.y_train, rows.X_test[columns_of(T)], rows.w_train)
            for T in coalitions)
    outputs = Parallel(n_jobs=settings.n_jobs, return_as="generator")(jobs)
    if settings.verbose:
        from tqdm.auto import tqdm

        outputs = tqdm(outputs, total=len(coalitions),
                       desc=f"{len(coalitions)} coalition fits ({len(names)} features)")
    yhat = np.empty((rows.X_test.shape[0], len(coalitions)), dtype=np.int8)
    fit_time = 0.0
    # the fits run as the loop asks for them: one BLAS/OpenMP thread each (small
    # fits in a row gain nothing from threads, and wait for them when the cores are busy)
    with limited_threads():
        for j, (pred, elapsed) in enumerate(outputs):
            yhat[:, j] = _binary_vector(
                pred,
                f"predictions of the model on features {[names[k] for k in coalitions[j]]}")
            fit_time += elapsed
    return _Fits(names, coalitions, yhat, fit_time, time.perf_counter() - t_start)


# ---------------------------------------------------------------- step 4: estimation


def _model_map(value, fits: _Fits) -> np.ndarray:
    """Coalition worths -> the features' second-stage values, plus the full model."""
    n = len(fits.names)
    position = {T: j for j, T in enumerate(fits.coalitions)}
    member_coalitions, mat = _coefficient_matrix(_esl_coefficients(value, n))
    model_map = np.zeros((len(fits.coalitions), n + 1))
    for T, coefs in zip(member_coalitions, mat):
        model_map[position[T], :n] = coefs
    model_map[fits.full, n] = 1.0  # last output: the first stage of the full model
    return model_map


def _estimate_member(value, fits: _Fits, groups: _Groups, rows: _Rows, settings: _Settings):
    """One member: contributions and tests (rows of the result), first stage, pair."""
    n = len(fits.names)
    model_map = _model_map(value, fits)
    unions, union_map = _first_stage_map(groups.levels, value)
    problem = _Problem(fits.yhat, rows.y_test, groups.cells, len(groups.index), unions,
                       settings.metric, settings.baseline, rows.w_test)
    used = np.flatnonzero(np.abs(model_map).sum(axis=1) > 0)
    _check_denominators(problem, used, fits, unions, groups.index, settings.metric)
    est = problem.outputs(model_map, union_map)  # (n + 1, groups)
    first = est[n]
    pair = ((0, 1) if len(groups.labels) == 2
            else (int(np.argmax(first)), int(np.argmin(first))))
    tests, group_se = _member_tests(problem, model_map, union_map, est, pair, settings)
    rows_out = [[*est[k], *(tests[k][c] for c in _TEST_KEYS)] for k in range(n)]
    raw = _raw_gap(fits.yhat[:, fits.full], rows, groups, settings, pair)
    first_row = [*first, first.sum(), *(tests[n][c] for c in _TEST_KEYS),
                 *(raw[c] for c in _RAW_KEYS)]
    return rows_out, list(group_se[:n]), first_row, pair


# ------------------------------------------------------------------ step 5: result


def _assemble(values, fits: _Fits, groups: _Groups, rows: _Rows, settings: _Settings,
              estimates: list, t_start: float) -> ESLDecompositionResult:
    index = pd.MultiIndex.from_product([list(values), fits.names],
                                       names=["value", "feature"])
    contributions = pd.DataFrame([r for e in estimates for r in e[0]], index=index,
                                 columns=[*groups.labels, *_RESULT_COLUMNS[:-1]])
    reject = ((contributions["p_value"] < 1 - settings.confidence)
              .groupby(level="feature", sort=False).sum())
    contributions["majority"] = ([bool(reject[f] > len(values) / 2) for f in fits.names]
                                 * len(values))
    first_stage = pd.DataFrame(
        [e[2] for e in estimates], index=pd.Index(list(values), name="value"),
        columns=[*groups.labels, "total", *_RESULT_COLUMNS[:-1], *_METRIC_COLUMNS],
    )
    metric, baseline = settings.metric, settings.baseline
    return ESLDecompositionResult(
        contributions=contributions,
        first_stage=first_stage,
        group_std_error=pd.DataFrame([r for e in estimates for r in e[1]], index=index,
                                     columns=groups.labels),
        compared={v: (groups.labels[e[3][0]], groups.labels[e[3][1]])
                  for v, e in zip(values, estimates)},
        coalitions=[tuple(fits.names[k] for k in sorted(T)) for T in fits.coalitions],
        n_fits=len(fits.coalitions),
        fit_time=fits.fit_time,
        fit_wall_time=fits.fit_wall_time,
        wall_time=time.perf_counter() - t_start,
        ci=settings.ci,
        metric=metric,
        members=tuple(values),
        features=list(fits.names),
        units=(f"group columns and esl_*: ESL units = {metric} / baseline ({baseline:g}), "
               f"split by the ESL value among groups then features; metric_* (first_stage "
               f"only): {metric} (metric units)"),
        baseline=baseline,
        confidence=settings.confidence,
        n_test=int(rows.X_test.shape[0]),
    )


# -------------------------------------------------------------------- public function


@validate_params(
    {
        "estimator": [HasMethods(["fit", "predict"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "sensitive_features": "no_validation",  # names or values: check_sensitive_features
        "X_test": ["array-like", None],
        "y_test": ["array-like", None],
        "features": ["array-like", dict, str, None],
        "metric": [StrOptions(set(METRICS))],
        "values": [str, list, tuple],
        "baseline": [Interval(Real, 0, None, closed="neither")],
        "ci": [StrOptions({"asymptotic", "bootstrap"})],
        "n_bootstrap": [Interval(Integral, 2, None, closed="left")],
        "test_size": [Interval(RealNotInt, 0, 1, closed="neither"),
                      Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
        "verbose": ["verbose"],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "sample_weight": ["array-like", None],
        "sample_weight_test": ["array-like", None],
        "max_fits": [Interval(Integral, 1, None, closed="left")],
        "max_coalitions": [Interval(Integral, 1, None, closed="left")],
        "pos_label": "no_validation",  # any label: checked against the labels of y
        "max_table_size": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def esl_decomposition(
    estimator,
    X,
    y,
    *,
    sensitive_features,
    X_test=None,
    y_test=None,
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
    sample_weight=None,
    sample_weight_test=None,
    max_fits: int = MAX_FITS,
    max_coalitions: int = MAX_COALITIONS,
    pos_label=None,
    max_table_size: int = MAX_TABLE_SIZE,
) -> ESLDecompositionResult:
    """Two-stage ESL: contributions of every feature to every group's ESL value.

    First stage: the groups split the metric (see :func:`group_esl`). Second stage: for
    every group ``g``, the features are the players and the worth of a set ``T`` of
    features is ``g``'s first-stage value for a clone of ``estimator`` fit on ``X[T]``;
    the same ESL member is used in both stages (the paper's Tables 2 and 3). By
    efficiency a group's contributions add up to its first-stage value with all features.

    Parameters
    ----------
    estimator : estimator object
        Unfitted binary classifier (``fit``/``predict``), cloned for every coalition and
        fit on the 0/1 indicator of the favorable label (1 = ``pos_label``). It must
        accept any subset of the feature columns (in a ``ColumnTransformer`` select
        columns with ``make_column_selector``); missing values in ``X`` reach it as they
        are (a pipeline with an imputer, or a model that handles NaN, accepts them).
    X : pandas.DataFrame of shape (n_samples, n_columns)
        Training data (or all data, split when ``X_test`` is None).
    y : array-like of shape (n_samples,)
        Binary labels: 0/1 (1 = favorable), or two labels with ``pos_label``.
    sensitive_features : str, list of str, array-like, Series or DataFrame
        The sensitive attribute(s): the name(s) of columns of ``X`` (and of ``X_test``),
        never used as model features, or the values themselves, one per evaluation row
        (the rows of ``X_test`` when given, else of ``X``, split along with it). Several
        attributes give intersections (multi-stage ESL).
    X_test, y_test : DataFrame and array-like, default=None
        Rows on which every coalition model is evaluated. When None, ``X``/``y`` are split
        with ``test_size``/``random_state``, stratified by label and group.
    features : list or dict, default=None
        The players: column names, or ``{player_name: [columns]}`` to treat several
        columns (e.g. one-hot indicators) as one player. Default: every column of ``X``
        except the sensitive one(s).
    metric : {"tpr", "fpr", "selection_rate", "ppv", "npv"}, default="tpr"
        The classification metric that is split.
    values : str or sequence of str, default=all five members
        The ESL members to compute (names of :func:`esl_coefficients`); each splits the
        metric in both stages.
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
        Number of bootstrap replicates (``ci="bootstrap"``), at least 2.
    test_size : float or int, default=0.3
        Share (or number) of the rows of ``X`` evaluated when ``X_test`` is None.
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the bootstrap.
    n_jobs : int, default=None
        Coalition models (and bootstrap chunks) run through ``joblib.Parallel``.
    verbose : int, default=0
        Show a tqdm progress bar over the coalition fits (and bootstrap chunks).
    confidence : float, default=0.95
        Level of the intervals; a contribution difference is significant when
        ``p_value < 1 - confidence``.
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights of the rows of ``X``. The coalition models are fit with them
        (``estimator.fit`` or, for a ``Pipeline``, its last step must accept
        ``sample_weight``; otherwise a ``TypeError`` is raised before any fit); when ``X``
        is split, the test part also weights the evaluation rows. Integer weights give
        the numbers of the data with every row repeated ``w_i`` times; zero weights
        drop rows.
    sample_weight_test : array-like of shape (n_test,), default=None
        Frequency weights of the rows of ``X_test`` (needs ``X_test``).
    max_fits : int, default=2**12
        Largest number of coalition models fit. The count is computed before any fit
        (``2^n - 1`` for ``n`` features with any member but Equal Surplus, ``n + 1`` with
        Equal Surplus alone); above the cap a
        :class:`~skfairverify.s3p.TableTooLargeError` names the count and what to change.
        The default lets every member run on 12 features (4,095 fits).
    max_coalitions : int, default=2**20
        Largest number of coalitions of groups of the first stage, as in
        :func:`group_esl`.
    pos_label : label, default=None
        The favorable label of ``y`` and ``y_test``, as in :func:`group_esl` (``None``:
        ``1`` for labels in ``{0, 1}`` or ``{-1, 1}``; other labels need it).
    max_table_size : int, default=50_000_000
        Largest number of entries of an array of the groups: the covariance of every
        feature's contribution to every group (``((n_features + 1) (n_groups + 1))^2``
        entries) and, with several attributes, the ``coalitions x cells`` map; refused
        above with :class:`~skfairverify.s3p.TableTooLargeError` before any fit.

    Returns
    -------
    result : ESLDecompositionResult
        ``contributions``: indexed by ``(value, feature)``, one column per group (the
        contribution ``C_g^k`` of the feature to the group's first-stage value,
        Proposition 3.1; intersections are labelled ``"a, b"``), then
        ``esl_difference``, ``esl_std_error``, ``z``, ``p_value``, ``esl_ci_low``,
        ``esl_ci_high`` of the difference of the contributions of the two compared groups
        (Theorem 4.3) and ``majority`` (the feature is flagged unfair: a strict majority
        of the members in ``values`` reject equality, Section 4). All contributions and
        differences are in ESL units: the metric divided by ``baseline``, split among the
        groups and then among the features (for two groups and ``b_1 = 1`` the
        first-stage difference is twice the raw metric gap with the default baseline
        0.5). With two groups the difference is first group minus second (sorted
        labels); with more, the most minus the least favored group at the first stage (of
        that member). ``first_stage`` (per member: the groups' first-stage values of the
        full model, ``total``, the same ``esl_*``/``z``/``p_value`` test columns, and
        ``metric_difference``, ``metric_std_error``, ``metric_ci_low``,
        ``metric_ci_high``: the full model's raw metric gap of the compared groups, in
        metric units), ``units``, ``group_std_error`` (standard error of every
        contribution, ESL units), ``compared``, ``coalitions``, ``n_fits``, ``fit_time``
        (sum of fit+predict times), ``fit_wall_time``, ``wall_time``, ``ci``, ``metric``,
        ``members``, ``features``, ``baseline``, ``confidence``, ``n_test``;
        ``to_frame()`` is ``contributions``.

    Raises
    ------
    TableTooLargeError
        If the members need more than ``max_fits`` coalition models, more than
        ``max_coalitions`` coalitions of groups, or an array of the groups more than
        ``max_table_size`` entries; raised before any fit.

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
    Proposition B.2 for every metric. With sample weights the sums are weighted and the
    covariance is ``sum_i w_i phi_i phi_i^T`` (frequency weights, see :func:`group_esl`);
    the bootstrap draws ``round(sum w)`` rows per replicate with probabilities
    proportional to the weights (the replicated data resampled).

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
    >>> res = esl_decomposition(LogisticRegression(), X, y, sensitive_features="sex",
    ...                         values=("equal_surplus",), random_state=0)
    >>> res.contributions.index.tolist()
    [('equal_surplus', 'x1'), ('equal_surplus', 'x2')]
    >>> bool(np.isclose(res.contributions[[0, 1]].sum().to_numpy(),
    ...      res.first_stage[[0, 1]].to_numpy()).all())
    True
    """
    t_start = time.perf_counter()
    metric, values = _check_metric(metric), _check_values_names(values)
    settings = _Settings(metric, _check_baseline(baseline), ci, n_bootstrap, random_state,
                         n_jobs, verbose, _check_confidence(confidence))
    rows = _validate_rows(X, y, X_test, y_test, sensitive_features, sample_weight,
                          sample_weight_test, test_size, random_state, pos_label)
    if ci == "bootstrap":  # refuse weights the bootstrap cannot draw before any fit
        _bootstrap_design(rows.w_test, rows.y_test.shape[0])
    players = _resolve_features(features, rows.X_train, rows.sensitive_names)
    _check_players_in_test(players, rows.X_test)
    groups = _resolve_groups(rows, metric)
    _check_work(values, players, groups, rows, (max_fits, max_coalitions, max_table_size))
    fits = _fit_coalitions(estimator, rows, players, values, settings, t_start)
    estimates = [_estimate_member(v, fits, groups, rows, settings) for v in values]
    return _assemble(values, fits, groups, rows, settings, estimates, t_start)


def _check_work(values, players: dict, groups: _Groups, rows: _Rows, limits) -> None:
    """Count the fits, group coalitions and group arrays before any fit; refuse above."""
    max_fits, max_coalitions, max_table_size = limits
    max_fits = check_limit(max_fits, "max_fits")
    check_n_fits(_needed_sizes(values, len(players)), max_fits, n_test=rows.X_test.shape[0],
                 values=values)
    for value in values:
        _check_first_stage_size(groups.levels, value, max_coalitions,
                                caller="esl_decomposition")
        check_group_arrays(groups.levels, value, max_table_size, caller="esl_decomposition",
                           n_outputs=len(players) + 1, extra_leaves=1)


def _check_denominators(problem, used, fits: _Fits, unions, group_index, metric):
    """Every ratio that enters must have a positive denominator."""
    _, dcount = problem.ratios()
    needed = unions.any(axis=1)
    bad = np.argwhere(dcount[used][:, needed] <= 0)
    if bad.size:
        t, u = used[bad[0, 0]], np.flatnonzero(needed)[bad[0, 1]]
        groups = [_group_label(group_index[c]) for c in np.flatnonzero(unions[u])]
        feats = [fits.names[k] for k in sorted(fits.coalitions[t])]
        raise ValueError(
            f"The model fit on features {feats} leaves the group(s) {groups} without "
            f"{_DENOMINATOR_ROWS[metric]} in the test rows; the metric {metric!r} is undefined."
        )


def _member_tests(problem, model_map, union_map, est, pair, settings: _Settings):
    """Test the contribution differences of the groups ``pair`` for one member.

    Returns the test dicts of every output (features, then the full model's first stage)
    and the standard errors of every contribution, shape (n_outputs, n_groups).
    """
    i, j = pair
    n_out, n_leaves = est.shape
    scale = problem.magnitude(model_map, union_map)
    scale = scale[:, i] + scale[:, j]
    diff = est[:, i] - est[:, j]
    confidence = settings.confidence
    if settings.ci == "asymptotic":
        # the contrast as one more output, so that its variance is a sum of squared
        # influences (no cancellation of var_i + var_j - 2 cov_ij)
        contrast = union_map[:, [i]] - union_map[:, [j]]
        cov = problem.covariance(model_map, np.hstack([union_map, contrast]))
        var = np.clip(np.diag(cov).reshape(n_out, n_leaves + 1), 0, None)
        tests = [_wald(diff[k], np.sqrt(var[k, -1]), confidence, scale[k])
                 for k in range(n_out)]
        return tests, np.sqrt(var[:, :-1])
    alpha = 1 - confidence
    reps = problem.bootstrap(model_map, union_map, settings.n_bootstrap,
                             settings.random_state, n_jobs=settings.n_jobs,
                             verbose=settings.verbose)
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


def _raw_gap(pred, rows: _Rows, groups: _Groups, settings: _Settings, pair):
    """Test the full model's metric gap of the groups ``pair``, in metric units."""
    i, j = pair
    n_cells = len(groups.index)
    identity = np.eye(n_cells)
    raw = _Problem(pred[:, None], rows.y_test, groups.cells, n_cells, identity.astype(bool),
                   settings.metric, 1.0, rows.w_test)
    rates = raw.outputs(np.ones((1, 1)), identity)[0]
    contrast = identity[:, [i]] - identity[:, [j]]
    var = raw.covariance(np.ones((1, 1)), contrast)[0, 0]
    return _wald(float(rates[i] - rates[j]), float(np.sqrt(max(var, 0.0))),
                 settings.confidence, abs(rates[i]) + abs(rates[j]))
