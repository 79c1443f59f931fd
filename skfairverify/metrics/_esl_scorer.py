"""Scorer: minus the first-stage ESL gap between sensitive groups."""

from __future__ import annotations

from ..esl import check_esl_params, group_esl
from ._base import FairnessScorer

__all__ = ["ESLScorer", "make_esl_scorer"]


class ESLScorer(FairnessScorer):
    """Greater-is-better scorer of the first-stage ESL gap between groups.

    The score is ``-|difference|`` of the two groups' ESL values (:func:`group_esl`) of
    ``metric`` for the estimator's predictions on ``X``; with more than two groups (or
    intersections of several attributes) it is ``-(max - min)`` of the group values.
    0 means parity. Build it with :func:`make_esl_scorer`.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` with the sensitive attribute(s), or None to receive them as
        metadata.
    metric : str, default="tpr"
    value : str, default="equal_surplus"
    baseline : float, default=0.5

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.metrics import make_esl_scorer
    >>> class Rule:
    ...     def predict(self, X):
    ...         return (X["score"] > 0).astype(int).to_numpy()
    >>> X = pd.DataFrame({"score": [1, 1, -1, 1, -1, -1], "g": list("aaabbb")})
    >>> y = [1, 1, 1, 1, 1, 1]
    >>> scorer = make_esl_scorer("g", metric="tpr")
    >>> round(scorer(Rule(), X, y), 4)
    -0.6667
    """

    def __init__(self, sensitive_features=None, *, metric="tpr", value="equal_surplus",
                 baseline=0.5):
        super().__init__(sensitive_features=sensitive_features)
        self.metric = metric
        self.value = value
        self.baseline = baseline

    def _score(self, estimator, X, y, sensitive):
        if y is None:
            raise ValueError("ESLScorer needs the true labels y.")
        result = group_esl(y, estimator.predict(X), sensitive, metric=self.metric,
                           value=self.value, baseline=self.baseline)
        if result.difference is not None:
            return -abs(result.difference)
        return -(result.values.max() - result.values.min())


def make_esl_scorer(
    sensitive_feature=None,
    *,
    metric: str = "tpr",
    value: str = "equal_surplus",
    baseline: float = 0.5,
) -> ESLScorer:
    """Make a scorer of the first-stage ESL gap for ``GridSearchCV(scoring=...)``.

    Parameters
    ----------
    sensitive_feature : str or list of str, default=None
        Column(s) of ``X`` holding the sensitive attribute (the estimator still receives
        ``X`` whole: drop the column inside the pipeline if the model must not use it).
        None: pass the groups as metadata under
        ``sklearn.set_config(enable_metadata_routing=True)`` after
        ``scorer.set_score_request(sensitive_features=True)``.
    metric : {"tpr", "fpr", "selection_rate", "ppv", "npv"}, default="tpr"
    value : str, default="equal_surplus"
        ESL member; for two groups all members but Solidarity give the same gap
        (Theorem 4.1), Solidarity half of it.
    baseline : float, default=0.5

    Returns
    -------
    scorer : ESLScorer
        ``scorer(estimator, X, y)`` is ``-|value(group 1) - value(group 2)|`` for two
        groups and ``-(max - min)`` of the group values for more; greater is better.

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
    >>> search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]},
    ...                       scoring=make_esl_scorer("g"), cv=3).fit(X, y)
    >>> bool(search.best_score_ <= 0)
    True
    """
    check_esl_params(metric, value, baseline)
    return ESLScorer(sensitive_features=sensitive_feature, metric=metric, value=value,
                     baseline=baseline)
