"""Scorer: minus the gap between sensitive groups of a metric or of its ESL values."""

from __future__ import annotations

from numbers import Integral, Real

from ..esl import group_esl
from ..esl._checks import check_esl_params
from ..esl._limits import MAX_COALITIONS, MAX_TABLE_SIZE
from ..esl._values import VALUE_NAMES
from ..esl._variance import METRICS
from ..utils._compat import Interval, StrOptions, validate_params
from ._base import _FairnessScorer

__all__ = ["make_esl_scorer"]

_UNITS = ("metric", "esl")


def _check_units(units) -> str:
    if not isinstance(units, str) or units not in _UNITS:
        raise ValueError(f"units must be 'metric' or 'esl', got {units!r}.")
    return units


class _ESLScorer(_FairnessScorer):
    """Greater-is-better scorer of the gap between sensitive groups.

    With ``units="metric"`` (default) the score is minus the raw gap of ``metric`` (the
    classification metric) between the groups, in metric units:
    ``-|metric(group 1) - metric(group 2)|`` for two groups and ``-(max - min)`` of the
    group metrics for more (or for intersections of several attributes), exactly
    fairlearn's ``-MetricFrame(...).difference()``. With ``units="esl"`` it is minus the
    same gap of the groups' first-stage ESL values (:func:`group_esl` with the ESL member
    ``value``), in ESL units = metric / baseline split by the member: for two groups
    ``b_1 / baseline`` times the raw gap (twice it with the default baseline 0.5 and
    ``b_1 = 1``). 0 means parity. Sample weights (routed or passed by scikit-learn) weight
    the rows. Build it with :func:`make_esl_scorer`.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` with the sensitive attribute(s), or None to receive them as
        metadata.
    metric : str, default="tpr"
        The classification metric.
    value : str, default="equal_surplus"
        The ESL member (``units="esl"``).
    baseline : float, default=0.5
        Divisor of the metric in ESL units.
    units : {"metric", "esl"}, default="metric"
        Units of the gap.
    max_coalitions : int, default=2**20
        Passed to :func:`group_esl` (``units="esl"``); ``units="metric"`` needs the
        group metrics only and evaluates the Equal Surplus map (``n + 1`` coalitions).
    pos_label : label, default=None
        The favorable label of ``y`` and of the model's predictions (see
        :func:`group_esl`).
    max_table_size : int, default=50_000_000
        Passed to :func:`group_esl`.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.metrics import make_esl_scorer
    >>> class Rule:
    ...     def predict(self, X):
    ...         return (X["score"] > 0).astype(int).to_numpy()
    >>> X = pd.DataFrame({"score": [1, 1, -1, 1, -1, -1], "g": list("aaabbb")})
    >>> y = [1, 1, 1, 1, 1, 1]
    >>> scorer = make_esl_scorer(sensitive_features="g", metric="tpr")
    >>> round(scorer(Rule(), X, y), 4)  # TPR 2/3 vs 1/3
    -0.3333
    >>> scorer = make_esl_scorer(sensitive_features="g", metric="tpr", units="esl")
    >>> round(scorer(Rule(), X, y), 4)
    -0.6667
    """

    def __init__(self, sensitive_features=None, *, metric="tpr", value="equal_surplus",
                 baseline=0.5, units="metric", max_coalitions=MAX_COALITIONS,
                 pos_label=None, max_table_size=MAX_TABLE_SIZE):
        super().__init__(sensitive_features=sensitive_features)
        self.metric = metric
        self.value = value
        self.baseline = baseline
        self.units = units
        self.max_coalitions = max_coalitions
        self.pos_label = pos_label
        self.max_table_size = max_table_size

    def _score(self, estimator, X, y, sensitive, sample_weight=None):
        if y is None:
            raise ValueError("The ESL scorer needs the true labels y.")
        units = _check_units(self.units)
        # the group metrics do not depend on the member: the O(n) one gives them
        value = self.value if units == "esl" else "equal_surplus"
        result = group_esl(y, estimator.predict(X), sensitive_features=sensitive,
                           metric=self.metric, value=value, baseline=self.baseline,
                           sample_weight=sample_weight, max_coalitions=self.max_coalitions,
                           pos_label=self.pos_label, max_table_size=self.max_table_size)
        by_group = result.metric_by_group if units == "metric" else result.esl_values
        return -float(by_group.max() - by_group.min())


@validate_params(
    {
        "sensitive_features": [str, Integral, list, tuple, None],
        "metric": [StrOptions(set(METRICS))],
        "value": [StrOptions(set(VALUE_NAMES)), "array-like"],
        "baseline": [Interval(Real, 0, None, closed="neither")],
        "units": [StrOptions(set(_UNITS))],
        "max_coalitions": [Interval(Integral, 1, None, closed="left")],
        "pos_label": "no_validation",  # any label: checked against the labels of y
        "max_table_size": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def make_esl_scorer(
    *,
    sensitive_features=None,
    metric: str = "tpr",
    value: str = "equal_surplus",
    baseline: float = 0.5,
    units: str = "metric",
    max_coalitions: int = MAX_COALITIONS,
    pos_label=None,
    max_table_size: int = MAX_TABLE_SIZE,
):
    """Make a scorer of the gap between groups for ``GridSearchCV(scoring=...)``.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Column(s) of ``X`` holding the sensitive attribute (the estimator still receives
        ``X`` whole: drop the column inside the pipeline if the model must not use it).
        None: pass the groups as metadata under
        ``sklearn.set_config(enable_metadata_routing=True)`` after
        ``scorer.set_score_request(sensitive_features=True)``. Several columns give their
        intersections as the groups.
    metric : {"tpr", "fpr", "selection_rate", "ppv", "npv"}, default="tpr"
        The classification metric whose gap is scored.
    value : str, default="equal_surplus"
        The ESL member, used with ``units="esl"``; for two groups all members but
        Solidarity give the same gap (Theorem 4.1), Solidarity half of it.
    baseline : float, default=0.5
        Divisor of the metric in ESL units (``units="esl"`` only).
    units : {"metric", "esl"}, default="metric"
        ``"metric"``: the raw gap of the groups' metrics (a difference of rates, what a
        fairlearn user computes). ``"esl"``: the gap of the groups' ESL values (metric /
        baseline, split by the member ``value``), the unit of the paper's test.
    max_coalitions : int, default=2**20
        Largest number of coalitions of groups evaluated per score with ``units="esl"``
        (see :func:`group_esl`): beyond 20 groups every member but Equal Surplus raises
        :class:`~skfairverify.s3p.TableTooLargeError`. ``units="metric"`` needs only the
        group metrics and evaluates ``n + 1`` coalitions whatever ``value``.
    pos_label : label, default=None
        The favorable label of ``y`` and of the model's predictions, as in
        scikit-learn's metrics: ``None`` means ``1`` for labels in ``{0, 1}`` or
        ``{-1, 1}``; a model of two other labels (``"died"`` / ``"survived"``) needs it
        (a ``ValueError`` says so, never a guess).
    max_table_size : int, default=50_000_000
        Largest number of entries of an array of the groups (the groups x groups
        covariance), as in :func:`group_esl`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, *, sensitive_features=None, sample_weight=None)``,
        greater is better. ``units="metric"``: ``-|metric(group 1) - metric(group 2)|``
        for two groups and ``-(max - min)`` of the group metrics for more groups (or
        intersections), which is ``-MetricFrame(metrics=..., ...).difference()`` of
        fairlearn (its default ``method="between_groups"``). ``units="esl"``: the same
        with the groups' ESL values; for more than two groups the ESL values of the
        groups depend on the other groups' rows too, so this is not a multiple of the
        metric gap. ``sample_weight`` (routed with
        ``set_score_request(sample_weight=True)``, or passed by scikit-learn without
        routing) weights the rows as in :func:`group_esl`.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skfairverify.metrics import make_esl_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"x": rng.normal(size=400), "g": rng.integers(0, 2, 400)})
    >>> y = (X.x + 0.5 * X.g + rng.normal(size=400) > 0).astype(int)
    >>> scorer = make_esl_scorer(sensitive_features="g")
    >>> search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]},
    ...                       scoring=scorer, cv=3).fit(X, y)
    >>> bool(search.best_score_ <= 0)
    True
    """
    check_esl_params(metric, value, baseline)
    return _ESLScorer(sensitive_features=sensitive_features, metric=metric, value=value,
                      baseline=baseline, units=units, max_coalitions=max_coalitions,
                      pos_label=pos_label, max_table_size=max_table_size)
