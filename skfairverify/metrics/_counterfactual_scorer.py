"""Scorers from the counterfactual audit (CFlips / nDCCF gaps), greater is better."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold

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

    Inside a fold the scorer only has the fitted model and the fold's rows, so it
    *cross-fits*: the fold is split in ``n_splits`` parts stratified by the
    sensitive attribute; for each part, the sensitive-feature classifier and the
    generator's reference rows (the counterfactual candidates of ``"kdtree"``, the
    ranges of ``"linear"``, dice-ml's data) come from the other parts, and the part's
    refused rows are audited. Per-row CFlips/nDCCF of all parts are pooled before the
    group means and the gap. With a prefit ``sensitive_classifier`` (a
    :class:`~sklearn.frozen.FrozenEstimator` predicting the raw sensitive values from
    the non-sensitive columns) there is no split: the generator uses the whole fold.
    The privileged group is fixed once per fold (``privileged``, or the group with the
    higher rate of favourable decisions on the fold).

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
    n_splits : int, default=2
        Number of cross-fitting parts of a fold.
    random_state : int, default=None
    n_jobs : int, default=None
    """

    def __init__(self, sensitive_features=None, *, metric="cflips", k=10, generator="kdtree",
                 sensitive_classifier=None, privileged=None, n_splits=2, random_state=None,
                 n_jobs=None):
        super().__init__(sensitive_features)
        self.metric = metric
        self.k = k
        self.generator = generator
        self.sensitive_classifier = sensitive_classifier
        self.privileged = privileged
        self.n_splits = n_splits
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _audit(self, model, column, X, y, fit_idx, eval_idx, privileged):
        audit = CounterfactualFairness(
            model, column, generator=self.generator, k=self.k,
            sensitive_classifier=self.sensitive_classifier, privileged=privileged,
            random_state=self.random_state, n_jobs=self.n_jobs,
        )
        audit.fit(X.iloc[fit_idx], None if y is None else np.asarray(y)[fit_idx])
        return audit, audit._audit(X.iloc[eval_idx])

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
        s_values = Xa[column].to_numpy(dtype=object)
        privileged = self.privileged
        if privileged is None:
            favourable = estimator.classes_[-1]
            accepted = pd.Series(np.asarray(model.predict(Xa)) == favourable)
            privileged = accepted.groupby(s_values).mean().idxmax()

        prefit = isinstance(self.sensitive_classifier, FrozenEstimator)
        if prefit:
            parts = [(np.arange(len(Xa)), np.arange(len(Xa)))]
        else:
            if not isinstance(self.n_splits, Integral) or self.n_splits < 2:
                raise ValueError(f"n_splits must be an integer >= 2; got {self.n_splits!r}.")
            cv = StratifiedKFold(self.n_splits, shuffle=True, random_state=self.random_state)
            parts = list(cv.split(Xa, s_values.astype(str)))
        groups, s_cf, n_all, audit = [], [], {0: 0, 1: 0}, None
        for fit_idx, eval_idx in parts:
            audit, res = self._audit(model, column, Xa, y, fit_idx, eval_idx, privileged)
            groups.append(res["group"])
            s_cf.append(res["s_cf"])
            for g in (0, 1):
                n_all[g] += res["n_refused_all"][g]
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            summary = audit._summarise(np.concatenate(groups), np.vstack(s_cf), n_all)
        delta = summary[self.metric]["delta"]
        if not np.isfinite(delta):
            raise ValueError(
                f"{self.metric} gap undefined on this fold: no refused row with a "
                f"counterfactual in the {' and '.join(summary['empty_groups'])} group(s) "
                f"(n_refused={summary['n_refused']})."
            )
        return -abs(delta)


def _make(metric, sensitive_feature, k, generator, sensitive_classifier, privileged,
          n_splits, random_state, n_jobs):
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")

    if isinstance(generator, str) and generator not in GENERATORS:
        raise ValueError(
            f"Unknown generator {generator!r}; valid names are {list(GENERATORS)}."
        )
    return CounterfactualScorer(
        sensitive_feature, metric=metric, k=k, generator=generator,
        sensitive_classifier=sensitive_classifier, privileged=privileged,
        n_splits=n_splits, random_state=random_state, n_jobs=n_jobs,
    )


def make_cflips_scorer(sensitive_feature: str | None = None, *, k: int = 10,
                       generator="kdtree", sensitive_classifier=None, privileged=None,
                       n_splits: int = 2, random_state=None,
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
        ``None`` or an unfitted classifier: cross-fitted inside each fold (each half
        of the fold is audited with a classifier and reference rows from the other
        half). A :class:`~sklearn.frozen.FrozenEstimator` (predicting the raw
        sensitive values from the non-sensitive columns) is used as is, the whole
        fold serving as reference rows.
    privileged : label, default=None
        Privileged value; ``None``: the group with the higher favourable rate on the
        fold.
    n_splits : int, default=2
        Parts of the cross-fitting.
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
                 privileged, n_splits, random_state, n_jobs)


def make_ndccf_scorer(sensitive_feature: str | None = None, *, k: int = 10,
                      generator="kdtree", sensitive_classifier=None, privileged=None,
                      n_splits: int = 2, random_state=None,
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
    n_splits : int, default=2
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
                 privileged, n_splits, random_state, n_jobs)
