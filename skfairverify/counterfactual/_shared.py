"""One cross-fitted sensitive classifier for every audit of a data set's rows.

The sensitive classifier of the counterfactual audit depends on the rows only, not on
the model audited. A model search scores every candidate on every validation fold;
by default each fold cross-fits its own classifier (once per fold with the scorers'
cache). :func:`fit_sensitive_classifier` cross-fits it once on the whole data of the
search, frozen, for the scorers' ``sensitive_classifier``: each validation row, and
each counterfactual that is one of the rows (the kd-tree generator's are), is
recognised by its values and judged by the fold model that did not see it.
"""

from __future__ import annotations

from numbers import Integral

import pandas as pd
from sklearn.frozen import FrozenEstimator

from ..utils._compat import HasMethods, Interval, validate_params
from ..utils._validation import check_sample_weight
from ._budget import single_threaded
from ._crossfit import CrossFittedSensitiveClassifier
from ._fairness import default_sensitive_classifier
from ._sensitive import group_labels, resolve_fit_sensitive

__all__ = ["fit_sensitive_classifier"]


@validate_params(
    {
        "X": [pd.DataFrame],
        "sensitive_features": "no_validation",  # names or values: _sensitive
        "sensitive_classifier": [HasMethods(["fit", "predict"]), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "sample_weight": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def fit_sensitive_classifier(X, sensitive_features, *, sensitive_classifier=None, cv=5,
                             random_state=None, sample_weight=None):
    """Cross-fit the sensitive classifier once on ``X``, frozen, for every audit of its rows.

    Fits :class:`~skfairverify.counterfactual.CrossFittedSensitiveClassifier` on the
    non-sensitive columns of ``X`` against the sensitive values (their intersections
    for several attributes, labels ``"a|b"``). Pass the result as the
    ``sensitive_classifier`` of :func:`~skfairverify.metrics.make_cflips_scorer`,
    :func:`~skfairverify.metrics.make_ndccf_scorer` or
    :class:`~skfairverify.CounterfactualFairness`, with the same ``sensitive_features``
    and ``X`` (the rows a search splits into folds): the classifier is then fitted once
    for the whole search instead of once per validation fold. Every row of ``X``, and
    every counterfactual equal to one of them in its non-sensitive columns (a kd-tree
    counterfactual is a row of the fold, with the query's sensitive values), is judged
    by the fold model that was not fitted on it; any other row by the mean of the
    ``cv`` fold models. The scores differ from those of the default (a classifier
    cross-fitted within each validation fold, on fewer rows).

    Parameters
    ----------
    X : DataFrame of shape (n_samples, n_features)
        The data, with the sensitive columns when ``sensitive_features`` names them.
    sensitive_features : str, list of str, array-like, Series or DataFrame
        Column name(s) of ``X`` (left out of the classifier's input), or the values,
        one per row (then every column of ``X`` is an input), as the audit takes them.
    sensitive_classifier : classifier, default=None
        Unfitted; ``None``:
        :func:`~skfairverify.counterfactual.default_sensitive_classifier` of the
        non-sensitive columns with ``random_state``.
    cv : int, default=5
        Number of cross-fitting folds (>= 2).
    random_state : int, RandomState instance or None, default=None
        Seed of the folds and of the default classifier.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows, passed to each fold model's fit.

    Returns
    -------
    sklearn.frozen.FrozenEstimator
        Around the fitted
        :class:`~skfairverify.counterfactual.CrossFittedSensitiveClassifier`, whose
        classes are the sensitive values.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skfairverify.counterfactual import fit_sensitive_classifier
    >>> from skfairverify.metrics import make_cflips_scorer
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 600)
    >>> X = pd.DataFrame({"s": s, "proxy": s + rng.normal(0, 1, 600),
    ...                   "other": rng.normal(size=600)})
    >>> y = (X.proxy + X.other > 0.5).astype(int)
    >>> shared = fit_sensitive_classifier(X, "s", random_state=0)
    >>> shared.classes_.tolist()
    [0, 1]
    >>> scorer = make_cflips_scorer(sensitive_features="s", k=3, random_state=0,
    ...                             sensitive_classifier=shared)
    >>> search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=3,
    ...                       scoring=scorer).fit(X, y)
    >>> bool(np.isfinite(search.cv_results_["mean_test_score"]).all())
    True
    """
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X has shape {X.shape}: the sensitive classifier needs rows and "
                         "columns.")
    frame, columns, _ = resolve_fit_sensitive(sensitive_features, None, X)
    X_ns = frame.drop(columns=columns)
    if X_ns.shape[1] == 0:
        raise ValueError(
            f"X has no column but the sensitive ones {columns}: the sensitive classifier "
            "has nothing to read."
        )
    labels = group_labels(frame[columns])
    weights = check_sample_weight(sample_weight, len(X))
    base = (default_sensitive_classifier(X_ns, random_state) if sensitive_classifier is None
            else sensitive_classifier)
    with single_threaded():  # the fold models in a loop (OpenMP slows 10x when busy)
        fitted = CrossFittedSensitiveClassifier(base, cv, random_state).fit(
            X_ns, labels, sample_weight=weights)
    return FrozenEstimator(fitted)
