"""Scorers from the counterfactual audit (CFlips / nDCCF gaps), greater is better."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator

from ..counterfactual import GENERATORS, CounterfactualFairness
from ._base import FairnessScorer

__all__ = ["make_cflips_scorer", "make_ndccf_scorer"]

_SENSITIVE = "__skfairverify_sensitive__"



class _SelectColumns:
    """A fitted model seen through a column selection.

    Lets the audit add a sensitive column to ``X`` that the model never saw.
    """

    def __init__(self, estimator, columns, as_array: bool):
        self._skfv_inner_estimator = estimator
        self.columns = list(columns)
        self.as_array = as_array
        self.classes_ = estimator.classes_

    def _sel(self, X):
        X = X[self.columns]
        return X.to_numpy() if self.as_array else X

    def predict(self, X):
        return self._skfv_inner_estimator.predict(self._sel(X))

    def predict_proba(self, X):
        return self._skfv_inner_estimator.predict_proba(self._sel(X))

    def decision_function(self, X):
        return self._skfv_inner_estimator.decision_function(self._sel(X))

    def fit(self, X, y=None):  # frozen
        return self

    def __getattr__(self, name):
        inner = self.__dict__.get("_skfv_inner_estimator")
        if inner is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(inner, name)

class CounterfactualScorer(FairnessScorer):
    """``-|delta|`` of CFlips@k or nDCCF@k on a validation fold (greater is better).

    Inside a fold the scorer only has the fitted model and the fold's rows: it runs
    :class:`~skfairverify.CounterfactualFairness` with the fold as the generator's
    reference rows (the counterfactual candidates of ``"kdtree"``, the ranges of
    ``"linear"``, dice-ml's data) and audits the fold's refused rows. The
    sensitive-feature classifier is cross-fitted over ``cv`` parts of the fold, so it
    never judges a row (query or counterfactual) it was fitted on. With a prefit
    ``sensitive_classifier`` (a :class:`~sklearn.frozen.FrozenEstimator` predicting
    the raw sensitive values from the non-sensitive columns) it is used as is.

    The privileged group is ``privileged``, or, for a two-valued attribute, the group
    with the higher rate of favorable decisions on the fold. For an attribute with
    more than two values ``privileged`` is required (the gap is then that value
    against all the others together).

    A fold where one group has no refused row with a counterfactual has no gap: the
    scorer raises a ``ValueError`` saying so (``cross_val_score`` and ``GridSearchCV``
    then record NaN for that fold with a warning). On folds of realistic size (German
    credit with ``cv=5``: 200 rows) both groups have refused rows and the score is
    finite.

    Parameters
    ----------
    sensitive_features : str, default=None
        Column of ``X`` with the sensitive attribute (then hidden from the sensitive
        classifier, and handed to the model as part of ``X``); ``None`` to receive it
        as metadata.
    metric : {"cflips", "ndccf"}
    k : int, default=10
    generator : str or generator object, default="kdtree"
    sensitive_classifier : classifier, default=None
    privileged : label, default=None
    cv : int, default=5
        Number of cross-fitting parts of the sensitive-feature classifier in a fold.
    random_state : int, default=None
    n_jobs : int, default=None
    """

    def __init__(self, sensitive_features=None, *, metric="cflips", k=10, generator="kdtree",
                 sensitive_classifier=None, privileged=None, cv=5, random_state=None,
                 n_jobs=None):
        super().__init__(sensitive_features)
        self.metric = metric
        self.k = k
        self.generator = generator
        self.sensitive_classifier = sensitive_classifier
        self.privileged = privileged
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _privileged(self, model, Xa, column) -> object:
        s_values = Xa[column].to_numpy(dtype=object)
        groups = pd.unique(s_values)
        if self.privileged is not None:
            return self.privileged
        if len(groups) > 2:
            raise ValueError(
                f"The sensitive attribute has {len(groups)} values {list(groups)}; pass "
                "privileged=<value> to the scorer (that value is then compared with all "
                "the others together)."
            )
        favorable = model.classes_[-1]
        accepted = pd.Series(np.asarray(model.predict(Xa)) == favorable)
        return accepted.groupby(s_values).mean().idxmax()

    def _score(self, estimator, X, y, sensitive: pd.DataFrame) -> float:
        if sensitive.shape[1] != 1:
            raise ValueError(
                "The counterfactual scorers audit one binary sensitive attribute; got "
                f"{sensitive.shape[1]} columns {list(sensitive.columns)}."
            )
        s = sensitive.iloc[:, 0]
        names = self._sensitive_names
        if isinstance(X, pd.DataFrame) and names is not None and names[0] in X.columns:
            column, Xa = names[0], X
            model = FrozenEstimator(estimator)
        else:
            as_array = not isinstance(X, pd.DataFrame)
            frame = (pd.DataFrame(np.asarray(X), columns=[f"x{i}" for i in range(X.shape[1])])
                     if as_array else X)
            model = FrozenEstimator(_SelectColumns(estimator, frame.columns, as_array))
            column = _SENSITIVE
            Xa = frame.assign(**{_SENSITIVE: s.to_numpy()})
        Xa = Xa.reset_index(drop=True)
        audit = CounterfactualFairness(
            model, column, generator=self.generator, k=self.k,
            sensitive_classifier=self.sensitive_classifier,
            privileged=self._privileged(model, Xa, column), cv=self.cv,
            random_state=self.random_state, n_jobs=self.n_jobs,
        )
        audit.fit(Xa, y)
        res = audit._audit(Xa)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="No refused row with a counterfactual",
                                    category=UserWarning)
            summary = audit._summarise(res["group"], res["s_cf"], res["n_refused_all"])
        delta = summary[self.metric]["delta"]
        if not np.isfinite(delta):
            raise ValueError(
                f"{self.metric} gap undefined on this fold: no refused row with a "
                f"counterfactual in the {' and '.join(summary['empty_groups'])} group(s) "
                f"(n_refused={summary['n_refused']})."
            )
        return -abs(delta)


def _make(metric, sensitive_feature, k, generator, sensitive_classifier, privileged,
          cv, random_state, n_jobs):
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")

    if isinstance(generator, str) and generator not in GENERATORS:
        raise ValueError(
            f"Unknown generator {generator!r}; valid names are {list(GENERATORS)}."
        )
    return CounterfactualScorer(
        sensitive_feature, metric=metric, k=k, generator=generator,
        sensitive_classifier=sensitive_classifier, privileged=privileged,
        cv=cv, random_state=random_state, n_jobs=n_jobs,
    )


def make_cflips_scorer(sensitive_feature: str | None = None, *, k: int = 10,
                       generator="kdtree", sensitive_classifier=None, privileged=None,
                       cv: int = 5, random_state=None,
                       n_jobs: int | None = None) -> CounterfactualScorer:
    """Scorer ``-|delta CFlips@k|`` for ``GridSearchCV`` (greater is better).

    ``delta = CFlips(unprivileged) - CFlips(privileged)`` over the refused rows of the
    validation fold (see :class:`~skfairverify.CounterfactualFairness`).

    Parameters
    ----------
    sensitive_feature : str, default=None
        Column of ``X`` with the sensitive attribute (the model receives it with
        ``X``, the sensitive classifier does not). ``None``: pass it as metadata,
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
        from the non-sensitive columns) is used as is.
    privileged : label, default=None
        Privileged value; ``None``: the group with the higher favorable rate on the
        fold (two-valued attribute only; required with more values).
    cv : int, default=5
        Parts of the cross-fitting of the sensitive classifier within a fold.
    random_state : int, default=None
    n_jobs : int, default=None

    Returns
    -------
    CounterfactualScorer

    Examples
    --------
    >>> from skfairverify.metrics import make_cflips_scorer
    >>> scorer = make_cflips_scorer("sex", k=5, random_state=0)
    >>> scorer.metric, scorer.k
    ('cflips', 5)
    """
    return _make("cflips", sensitive_feature, k, generator, sensitive_classifier,
                 privileged, cv, random_state, n_jobs)


def make_ndccf_scorer(sensitive_feature: str | None = None, *, k: int = 10,
                      generator="kdtree", sensitive_classifier=None, privileged=None,
                      cv: int = 5, random_state=None,
                      n_jobs: int | None = None) -> CounterfactualScorer:
    """Scorer ``-|delta nDCCF@k|`` for ``GridSearchCV`` (greater is better).

    ``delta = nDCCF(privileged) - nDCCF(unprivileged)``; the parameters and the way
    the sensitive classifier and reference rows are obtained inside a fold are those
    of :func:`make_cflips_scorer`.

    Parameters
    ----------
    sensitive_feature : str, default=None
    k : int, default=10
    generator : str or generator object, default="kdtree"
    sensitive_classifier : classifier, default=None
    privileged : label, default=None
    cv : int, default=5
    random_state : int, default=None
    n_jobs : int, default=None

    Returns
    -------
    CounterfactualScorer

    Examples
    --------
    >>> from skfairverify.metrics import make_ndccf_scorer
    >>> make_ndccf_scorer("sex").metric
    'ndccf'
    """
    return _make("ndccf", sensitive_feature, k, generator, sensitive_classifier,
                 privileged, cv, random_state, n_jobs)
