"""Scorers from the counterfactual audit (CFlips / nDCCF gaps), greater is better."""

from __future__ import annotations

import pickle
import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator

from ..counterfactual import (
    ColumnSubsetClassifier,
    CounterfactualFairness,
    CrossFittedSensitiveClassifier,
)
from ..counterfactual._crossfit import (
    SENSITIVE_CLASSIFIER_CACHE,
    KeyedCache,
    _is_deterministic,
    crossfit_cache,
    hash_key,
)
from ..counterfactual._groups import MIN_GROUP_SIZE
from ..utils._compat import validate_params
from ._base import _FairnessScorer

__all__ = ["make_cflips_scorer", "make_ndccf_scorer"]


def _frame_view(estimator, X):
    """The frozen model and ``X`` as a DataFrame (an array gets columns ``x0, x1, ...``)."""
    if isinstance(X, pd.DataFrame):
        return FrozenEstimator(estimator), X.reset_index(drop=True)
    frame = pd.DataFrame(np.asarray(X), columns=[f"x{i}" for i in range(X.shape[1])])
    return FrozenEstimator(ColumnSubsetClassifier(estimator, frame.columns, as_array=True)), frame

def _classifier_token(clf):
    """What the audit key holds of the sensitive classifier.

    A frozen :class:`~skfairverify.counterfactual.CrossFittedSensitiveClassifier`
    (fitted once on a search's data) by the identifier of its fit: hashing its fold
    models took most of a call.
    """
    inner = clf.estimator if isinstance(clf, FrozenEstimator) else None
    if isinstance(inner, CrossFittedSensitiveClassifier) and hasattr(inner, "fit_id_"):
        return ("frozen cross-fit", inner.fit_id_)
    return clf


#: The last audits of the scorers (``cache=True``), by model, rows and parameters: the
#: CFlips and the nDCCF scorer of one candidate on one fold run one audit. Each entry
#: holds the gaps only (a few numbers).
AUDIT_CACHE = KeyedCache(max_entries=16)


# the scorer's parameters are those of the audit: one set of constraints
_AUDIT = CounterfactualFairness._parameter_constraints
_CONSTRAINTS = {
    "sensitive_features": [str, Integral, list, tuple, None],
    **{name: _AUDIT[name] for name in ("k", "generator", "sensitive_classifier", "cv",
                                       "random_state", "n_jobs", "min_group_size",
                                       "max_time")},
    "privileged": "no_validation",
    "pos_label": "no_validation",
    "cache": ["boolean"],
}


class _CounterfactualScorer(_FairnessScorer):
    """``-|delta|`` of CFlips@k or nDCCF@k on a validation fold (greater is better).

    Inside a fold the scorer only has the fitted model and the fold's rows: it runs
    :class:`~skfairverify.CounterfactualFairness` with the fold as the generator's
    reference rows (the counterfactual candidates of ``"kdtree"``, the ranges of
    ``"linear"``, dice-ml's data) and audits the fold's refused rows. The
    sensitive-feature classifier is cross-fitted over ``cv`` parts of the fold, so it
    never judges a row (query or counterfactual) it was fitted on. That fit depends on
    the fold's rows only, not on the model scored: with ``cache=True`` and an integer
    ``random_state`` it is fitted once per set of rows and reused by every candidate
    scored on them (see :func:`make_cflips_scorer`). With a prefit
    ``sensitive_classifier`` (a :class:`~sklearn.frozen.FrozenEstimator` predicting
    the raw sensitive values from the non-sensitive columns) it is used as is; one
    cross-fitted on the search's whole data
    (:func:`~skfairverify.counterfactual.fit_sensitive_classifier`) is fitted once
    for every fold and still judges each row out of fold.

    The privileged group is ``privileged``, or the group with the highest rate of
    favorable decisions on the fold (of three or more groups, among those with at least
    ``min_group_size`` refused rows: :func:`~skfairverify.counterfactual.
    privileged_group`); with more than two groups the gap is that group against all the
    others together.

    Sample weights (``sample_weight``, routed or passed by the search) weight the
    fold's rows: they are passed to the audit's ``fit`` (the sensitive classifier's
    fit and the favorable rates that choose the privileged group) and ``evaluate``
    (weighted group means of CFlips / nDCCF).

    A fold where one group has no refused row with a counterfactual has no gap: the
    scorer raises a ``ValueError`` saying so (``cross_val_score`` and ``GridSearchCV``
    then record NaN for that fold with a warning). On folds of realistic size (German
    credit with ``cv=5``: 200 rows) both groups have refused rows and the score is
    finite.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` with the sensitive attributes (then hidden from the sensitive
        classifier, and handed to the model as part of ``X``); ``None`` to receive
        the values as metadata (never handed to the model). Several attributes: their
        intersections are the groups (labels ``"a|b"``), ``privileged`` is required
        when there are more than two.
    metric : {"cflips", "ndccf"}
    k : int, default=10
    generator : str or generator object, default="kdtree"
    sensitive_classifier : classifier, default=None
    privileged : label, default=None
    cv : int, default=5
        Number of cross-fitting parts of the sensitive-feature classifier in a fold.
    random_state : int, default=None
    n_jobs : int, default=None
    pos_label : label, default=None
        The model's favorable decision (see :class:`~skfairverify.CounterfactualFairness`).
    min_group_size : int, default=30
    max_time : float, default=600.0
        CPU seconds of the counterfactual generation per fold.
    cache : bool, default=True
        Reuse the cross-fitted sensitive classifier of the same rows, and share the
        audit of one model on the same rows with the scorer of the other metric.
    """

    def __init__(self, sensitive_features=None, *, metric="cflips", k=10, generator="kdtree",
                 sensitive_classifier=None, privileged=None, cv=5, random_state=None,
                 n_jobs=None, pos_label=None, min_group_size=MIN_GROUP_SIZE, max_time=600.0,
                 cache=True):
        super().__init__(sensitive_features)
        self.metric = metric
        self.k = k
        self.generator = generator
        self.sensitive_classifier = sensitive_classifier
        self.privileged = privileged
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.pos_label = pos_label
        self.min_group_size = min_group_size
        self.max_time = max_time
        self.cache = cache

    def _score(self, estimator, X, y, sensitive: pd.DataFrame, sample_weight=None) -> float:
        key = self._audit_key(estimator, X, y, sensitive, sample_weight)
        gaps = AUDIT_CACHE.get(key)
        if gaps is None:
            gaps = self._audit(estimator, X, y, sensitive, sample_weight)
            AUDIT_CACHE.put(key, gaps, size=len(pickle.dumps(gaps)))
        delta = gaps[self.metric]
        if not np.isfinite(delta):
            raise ValueError(
                f"{self.metric} gap undefined on this fold: no refused row with a "
                f"counterfactual in the {' and '.join(gaps['empty_groups'])} group(s) "
                f"(n_refused={gaps['n_refused']})."
            )
        return -abs(delta)

    def _audit_key(self, estimator, X, y, sensitive, sample_weight) -> str | None:
        """The key of this audit in :data:`AUDIT_CACHE`, or ``None`` (not to be shared).

        The audit is a function of the fitted model, the rows (with their labels,
        sensitive values and weights) and every parameter of the scorer but ``metric``
        (the CFlips and nDCCF scorers of one model and fold share it), when its draws
        are fixed: an integer ``random_state`` and integer seeds in the sensitive
        classifier and a generator object (see :func:`make_cflips_scorer`'s ``cache``).
        """
        generator = self.generator
        fixed = _is_deterministic(self.sensitive_classifier, self.random_state) and (
            isinstance(generator, str) or _is_deterministic(generator, self.random_state))
        if not (self.cache and fixed):
            return None
        model = hash_key(estimator)
        params = {k: v for k, v in vars(self).items()
                  if not k.startswith("_") and k not in ("metric", "cache")}
        params["sensitive_classifier"] = _classifier_token(self.sensitive_classifier)
        return None if model is None else hash_key(
            "counterfactual audit", model, params, X, y, sensitive, sample_weight)

    def _audit(self, estimator, X, y, sensitive: pd.DataFrame, sample_weight) -> dict:
        """The audit of the fold: both gaps and what the message of an empty group says."""
        names = self._sensitive_names
        if names is not None:  # columns of X (a DataFrame): the audit reads them
            model, route = FrozenEstimator(estimator), {}
            X = X.reset_index(drop=True)
        else:  # metadata values: the audit appends them, the model never sees them
            model, X = _frame_view(estimator, X)
            route = {"sensitive_features": sensitive.reset_index(drop=True)}
        audit = CounterfactualFairness(
            model, names, generator=self.generator, k=self.k,
            sensitive_classifier=self.sensitive_classifier, privileged=self.privileged,
            pos_label=self.pos_label, min_group_size=self.min_group_size, cv=self.cv,
            random_state=self.random_state, max_time=self.max_time, n_jobs=self.n_jobs,
            verbose=0,  # a search shows its own progress
        )
        with crossfit_cache(SENSITIVE_CLASSIFIER_CACHE if self.cache else None):
            audit.fit(X, y, sample_weight=sample_weight, **route)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="No refused row with a counterfactual",
                                    category=UserWarning)
            result = audit.evaluate(X, sample_weight=sample_weight, **route)
        return {"cflips": float(result.cflips["delta"]), "ndccf": float(result.ndccf["delta"]),
                "empty_groups": list(result.empty_groups), "n_refused": result.n_refused}


@validate_params(_CONSTRAINTS, prefer_skip_nested_validation=True)
def make_cflips_scorer(*, sensitive_features=None, k: int = 10, generator="kdtree",
                       sensitive_classifier=None, privileged=None, cv: int = 5,
                       random_state=None, n_jobs: int | None = None, pos_label=None,
                       min_group_size: int = MIN_GROUP_SIZE, max_time: float = 600.0,
                       cache: bool = True):
    """Scorer ``-|delta CFlips@k|`` for ``GridSearchCV`` (greater is better).

    ``delta = CFlips(unprivileged) - CFlips(privileged)`` over the refused rows of the
    validation fold (see :class:`~skfairverify.CounterfactualFairness`).

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` with the sensitive attributes (the model receives them with
        ``X``, the sensitive classifier does not); several columns audit their
        intersection (groups ``"a|b"``).
        ``None``: pass the values as metadata (the model never sees them),
        ``scorer.set_score_request(sensitive_features=True)`` under
        ``sklearn.config_context(enable_metadata_routing=True)``, and
        ``GridSearchCV.fit(X, y, sensitive_features=s)``.
    k : int, default=10
        Number of counterfactuals per refused row.
    generator : str or generator object, default="kdtree"
        See :class:`~skfairverify.CounterfactualFairness`.
    sensitive_classifier : classifier, default=None
        ``None`` or an unfitted classifier: cross-fitted over ``cv`` parts of each
        fold, so that no row is judged by a model fitted on it. A
        :class:`~sklearn.frozen.FrozenEstimator` (predicting the raw sensitive values
        from the non-sensitive columns) is used as is. To fit it once for a whole
        search, pass
        ``fit_sensitive_classifier(X, sensitive_features, random_state=...)``
        (:func:`~skfairverify.counterfactual.fit_sensitive_classifier`) of the data
        the search splits: cross-fitted over ``X``, it judges every validation row
        and every kd-tree counterfactual (a row of the fold) by the part model that
        did not see it, recognising the row by its values. Its scores are those of a
        classifier fitted on more rows than a fold's, so they differ from the
        default's (see ``docs/counterfactual.md``).
    privileged : label, default=None
        Privileged value; ``None``: the group with the highest (weighted) favorable
        rate on the fold (of three or more groups, among those with at least
        ``min_group_size`` refused rows).
    cv : int, default=5
        Parts of the cross-fitting of the sensitive classifier within a fold.
    random_state : int, RandomState instance or None, default=None
        Seed of the sensitive classifier, its folds and randomised generators.
    n_jobs : int, default=None
        Number of joblib workers of the audit.
    pos_label : label, default=None
        The model's favorable decision; ``None``: ``1`` for classes in ``{0, 1}`` or
        ``{-1, 1}`` (other classes need it).
    min_group_size : int, default=30
        See :class:`~skfairverify.CounterfactualFairness`.
    max_time : float, default=600.0
        CPU seconds of the counterfactual generation of one fold (see
        :class:`~skfairverify.CounterfactualFairness`).
    cache : bool, default=True
        Fit the cross-fitted sensitive classifier once per set of rows and reuse it
        for every model scored on them (every candidate of a search on one fold; a
        classifier shared by the whole search is
        :func:`~skfairverify.counterfactual.fit_sensitive_classifier`): the
        classifier depends on the rows (their values, sensitive groups and weights),
        its parameters, ``cv`` and ``random_state``, not on the model. The scores are
        those of ``cache=False``. Only fits that repeat exactly are reused:
        ``random_state`` must be an integer (and any ``random_state`` of the
        ``sensitive_classifier`` too); with ``None`` or a ``RandomState`` every call
        fits anew. Kept in memory per process (the 8 most recent fits, at most 256 MiB;
        each joblib worker holds its own); a pickled scorer carries none of it. The
        audit itself (a function of the fitted model, the rows, their labels,
        sensitive values and weights, and the scorer's parameters) is shared in the
        same way by the CFlips and the nDCCF scorers of equal parameters: scoring one
        candidate on one fold with both runs one audit (the 16 most recent audits'
        gaps are kept, keyed by a hash of the fitted model; a model that cannot be
        pickled is audited anew).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None, *, sensitive_features=None, sample_weight=None)``
        returning ``-|delta|``; it accepts ``sensitive_features`` and
        ``sample_weight`` by metadata routing
        (``set_score_request(sensitive_features=True, sample_weight=True)``), and
        ``sample_weight`` from ``GridSearchCV.fit`` without routing. Weights weight
        the fold's rows in the audit (see
        :meth:`~skfairverify.CounterfactualFairness.evaluate`).

    Examples
    --------
    >>> from skfairverify.metrics import make_cflips_scorer
    >>> scorer = make_cflips_scorer(sensitive_features="sex", k=5, random_state=0)
    >>> scorer.metric, scorer.k
    ('cflips', 5)
    """
    return _CounterfactualScorer(
        sensitive_features, metric="cflips", k=k, generator=generator,
        sensitive_classifier=sensitive_classifier, privileged=privileged, cv=cv,
        random_state=random_state, n_jobs=n_jobs, pos_label=pos_label,
        min_group_size=min_group_size, max_time=max_time, cache=cache,
    )


@validate_params(_CONSTRAINTS, prefer_skip_nested_validation=True)
def make_ndccf_scorer(*, sensitive_features=None, k: int = 10, generator="kdtree",
                      sensitive_classifier=None, privileged=None, cv: int = 5,
                      random_state=None, n_jobs: int | None = None, pos_label=None,
                      min_group_size: int = MIN_GROUP_SIZE, max_time: float = 600.0,
                      cache: bool = True):
    """Scorer ``-|delta nDCCF@k|`` for ``GridSearchCV`` (greater is better).

    ``delta = nDCCF(privileged) - nDCCF(unprivileged)``; the parameters, the weights
    and the way the sensitive classifier and reference rows are obtained inside a
    fold are those of :func:`make_cflips_scorer`.

    Parameters
    ----------
    sensitive_features : str or list of str, default=None
        Columns of ``X`` with the sensitive attributes, or ``None`` for the metadata
        route (see :func:`make_cflips_scorer`).
    k : int, default=10
        Number of counterfactuals per refused row.
    generator : str or generator object, default="kdtree"
        See :class:`~skfairverify.CounterfactualFairness`.
    sensitive_classifier : classifier, default=None
        See :func:`make_cflips_scorer`.
    privileged : label, default=None
        Privileged value; ``None``: as in :func:`make_cflips_scorer`.
    cv : int, default=5
        Parts of the cross-fitting of the sensitive classifier within a fold.
    random_state : int, RandomState instance or None, default=None
        Seed of the sensitive classifier, its folds and randomised generators.
    n_jobs : int, default=None
        Number of joblib workers of the audit.
    pos_label : label, default=None
        See :func:`make_cflips_scorer`.
    min_group_size : int, default=30
        See :func:`make_cflips_scorer`.
    max_time : float, default=600.0
        See :func:`make_cflips_scorer`.
    cache : bool, default=True
        Reuse the cross-fitted sensitive classifier of the same rows, and the audit of
        the CFlips scorer of the same model, rows and parameters (see
        :func:`make_cflips_scorer`).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None, *, sensitive_features=None, sample_weight=None)``
        returning ``-|delta|``, with metadata routing as in
        :func:`make_cflips_scorer`.

    Examples
    --------
    >>> from skfairverify.metrics import make_ndccf_scorer
    >>> make_ndccf_scorer(sensitive_features="sex").metric
    'ndccf'
    """
    return _CounterfactualScorer(
        sensitive_features, metric="ndccf", k=k, generator=generator,
        sensitive_classifier=sensitive_classifier, privileged=privileged, cv=cv,
        random_state=random_state, n_jobs=n_jobs, pos_label=pos_label,
        min_group_size=min_group_size, max_time=max_time, cache=cache,
    )
