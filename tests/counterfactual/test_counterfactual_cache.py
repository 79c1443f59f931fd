"""The counterfactual scorers fit their sensitive classifier once per set of rows (issue 26).

The cross-fitted sensitive classifier depends on the rows, their groups and weights, its
own parameters, ``cv`` and ``random_state``, not on the model scored; the scorers keep it
in a per-process LRU cache. Checked here: a second model scored on the same rows reuses
the fitted classifier (fits counted with a wrapped estimator), other rows, groups,
weights or parameters miss, non-reproducible fits are never cached, the scores are those
of ``cache=False`` (to 1e-12, default classifier), the cache is bounded and pickles
empty, and ``GridSearchCV(n_jobs=2)`` gives the scores of ``n_jobs=1``. The CFlips and
nDCCF scorers of one model on one fold share one audit (the model is not called again,
the score is that of ``cache=False``), and a model refitted in place is audited anew.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

from skfairverify.counterfactual._crossfit import (
    SENSITIVE_CLASSIFIER_CACHE,
    CrossFitCache,
    CrossFittedSensitiveClassifier,
)
from skfairverify.metrics import make_cflips_scorer, make_ndccf_scorer
from skfairverify.metrics._counterfactual_scorer import AUDIT_CACHE

FOLDS = 5  # the scorers' default cv: fold models per cross-fitting


@pytest.fixture(autouse=True)
def _cold_cache():
    """Every test starts with empty process caches (and one thread per model)."""
    SENSITIVE_CLASSIFIER_CACHE.clear()
    AUDIT_CACHE.clear()
    with threadpool_limits(1):
        yield
    SENSITIVE_CLASSIFIER_CACHE.clear()
    AUDIT_CACHE.clear()


class CountingClassifier(LogisticRegression):
    """A logistic regression that counts its fits (over all its clones)."""

    n_fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).n_fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.fixture
def counting():
    CountingClassifier.n_fits = 0
    return CountingClassifier


def _data(n=600, seed=0):
    """Groups "F" / "M"; ``proxy`` reveals the group, the label follows both features."""
    rng = np.random.default_rng(seed)
    male = rng.random(n) < 0.5
    X = pd.DataFrame({"s": np.where(male, "M", "F"), "proxy": male + rng.normal(0, 0.8, n),
                      "other": rng.normal(size=n)})
    return X, (X.proxy + X.other + rng.normal(0, 0.5, n) > 0.8).astype(int).to_numpy()


def _model(C=1.0):
    """A logistic regression on the non-sensitive columns (X keeps ``s``)."""
    return make_pipeline(ColumnTransformer([("num", StandardScaler(), ["proxy", "other"])]),
                         LogisticRegression(C=C))


def _models(X, y):
    return [_model(c).fit(X, y) for c in (0.01, 100.0)]


def test_second_model_on_the_same_rows_reuses_the_fitted_classifier(counting):
    X, y = _data()
    scorer = make_cflips_scorer(sensitive_features="s", k=5, random_state=0,
                                sensitive_classifier=counting(random_state=0))
    first, *others = _models(X, y)
    scorer(first, X, y)
    assert counting.n_fits == FOLDS
    for model in others:
        scorer(model, X, y)
    assert counting.n_fits == FOLDS  # no refit: every candidate shares the classifier
    assert SENSITIVE_CLASSIFIER_CACHE.hits == len(others)
    assert len(SENSITIVE_CLASSIFIER_CACHE) == 1
    # the nDCCF scorer of the same rows and classifier shares the entry too
    make_ndccf_scorer(sensitive_features="s", k=5, random_state=0,
                      sensitive_classifier=counting(random_state=0))(first, X, y)
    assert counting.n_fits == FOLDS


@pytest.mark.parametrize("change", ["rows", "one value", "params", "cv", "random_state",
                                    "weights"])
def test_other_rows_or_parameters_miss(counting, change):
    X, y = _data()
    model = _model().fit(X, y)
    kwargs = {"sensitive_features": "s", "k": 5, "random_state": 0}
    make_cflips_scorer(**kwargs, sensitive_classifier=counting(random_state=0))(model, X, y)
    assert counting.n_fits == FOLDS
    clf, call = counting(random_state=0), {}
    if change == "rows":
        X, y = X.iloc[:500], y[:500]
    elif change == "one value":
        X = X.copy()
        X.loc[7, "other"] += 1e-9
    elif change == "params":
        clf = counting(C=0.5, random_state=0)
    elif change == "cv":
        kwargs["cv"] = 4
    elif change == "random_state":
        kwargs["random_state"] = 1
    else:
        call["sample_weight"] = np.full(len(X), 2.0)
    make_cflips_scorer(**kwargs, sensitive_classifier=clf)(model, X, y, **call)
    assert counting.n_fits == FOLDS + kwargs.get("cv", FOLDS)
    assert SENSITIVE_CLASSIFIER_CACHE.hits == 0
    assert len(SENSITIVE_CLASSIFIER_CACHE) == 2


@pytest.mark.parametrize("random_state, clf_seed", [
    (None, 0), (np.random.RandomState(0), 0), (0, None)])
def test_a_fit_that_is_a_new_draw_is_never_cached(counting, random_state, clf_seed):
    X, y = _data()
    model = _model().fit(X, y)
    scorer = make_cflips_scorer(sensitive_features="s", k=5, random_state=random_state,
                                sensitive_classifier=counting(random_state=clf_seed))
    scorer(model, X, y)
    scorer(model, X, y)
    assert counting.n_fits == 2 * FOLDS
    assert len(SENSITIVE_CLASSIFIER_CACHE) == 0


def test_cache_false_fits_every_call(counting):
    X, y = _data()
    model = _model().fit(X, y)
    scorer = make_cflips_scorer(sensitive_features="s", k=5, random_state=0, cache=False,
                                sensitive_classifier=counting(random_state=0))
    scorer(model, X, y)
    scorer(model, X, y)
    assert counting.n_fits == 2 * FOLDS
    assert len(SENSITIVE_CLASSIFIER_CACHE) == 0


@pytest.mark.parametrize("make", [make_cflips_scorer, make_ndccf_scorer])
@pytest.mark.parametrize("route", ["column", "metadata"])
def test_scores_with_the_cache_are_those_without(make, route):
    """Default classifier (the gradient boosting), several candidates, both routes."""
    X, y = _data(n=400, seed=3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(X))
    models = _models(X, y)
    kwargs = {"k": 5, "random_state": 0}
    if route == "column":
        call = {"sample_weight": w}
        kwargs["sensitive_features"] = "s"
    else:  # the values as metadata; the models read the array of the other columns
        Xv = X[["proxy", "other"]].to_numpy()
        models = [LogisticRegression(C=c).fit(Xv, y) for c in (0.01, 100.0)]
        call = {"sensitive_features": X["s"].to_numpy()}
        X = Xv
    off = [make(**kwargs, cache=False)(m, X, y, **call) for m in models]
    on = make(**kwargs)
    first = [on(m, X, y, **call) for m in models]
    again = [on(m, X, y, **call) for m in models]
    assert SENSITIVE_CLASSIFIER_CACHE.hits == len(models) - 1  # one fit for the rows
    assert AUDIT_CACHE.hits == len(models)  # the second round: the audits themselves
    np.testing.assert_allclose(first, off, rtol=0, atol=1e-12)
    np.testing.assert_allclose(again, off, rtol=0, atol=1e-12)


def test_pickled_scorer_and_cache_carry_no_fitted_classifier():
    X, y = _data()
    model = _model().fit(X, y)
    scorer = make_cflips_scorer(sensitive_features="s", k=5, random_state=0)
    before = pickle.dumps(scorer)
    score = scorer(model, X, y)
    assert len(SENSITIVE_CLASSIFIER_CACHE) == 1
    after = pickle.dumps(scorer)
    assert len(after) == len(before)  # nothing of the fit went into the scorer
    assert b"CrossFittedSensitiveClassifier" not in after
    copy = pickle.loads(pickle.dumps(SENSITIVE_CLASSIFIER_CACHE))
    assert len(copy) == 0 and copy.hits == 0
    assert copy.max_entries == SENSITIVE_CLASSIFIER_CACHE.max_entries
    assert len(pickle.loads(pickle.dumps(AUDIT_CACHE))) == 0
    SENSITIVE_CLASSIFIER_CACHE.clear()
    AUDIT_CACHE.clear()
    assert pickle.loads(after)(model, X, y) == score  # refits, same score


def test_the_cache_is_bounded(counting):
    X, y = _data(n=200)
    cache = CrossFitCache(max_entries=2)
    s = (X["s"] == "M").to_numpy().astype(int)
    rows = [X.drop(columns="s").iloc[: 150 + 10 * i] for i in range(3)]
    fitted = [cache.fit(counting(random_state=0), 3, 0, r, s[: len(r)]) for r in rows]
    assert len(cache) == 2 and cache.misses == 3
    assert cache.fit(counting(random_state=0), 3, 0, rows[2], s[:170]) is fitted[2]
    n_fits = counting.n_fits
    cache.fit(counting(random_state=0), 3, 0, rows[0], s[:150])  # evicted: refitted
    assert counting.n_fits == n_fits + 3
    assert 0 < cache.nbytes
    tiny = CrossFitCache(max_bytes=100)  # one fit alone is larger: nothing kept
    out = tiny.fit(counting(random_state=0), 3, 0, rows[0], s[:150])
    assert isinstance(out, CrossFittedSensitiveClassifier) and len(tiny) == 0


def test_unhashable_classifier_is_fitted_without_the_cache():
    X, y = _data(n=200)

    class Local(LogisticRegression):  # a local class: pickle (and joblib.hash) refuse it
        pass

    cache = CrossFitCache()
    out = cache.fit(Local(random_state=0), 3, 0, X[["proxy", "other"]],
                    (X["s"] == "M").to_numpy().astype(int))
    assert len(out.estimators_) == 3 and len(cache) == 0


def test_grid_search_n_jobs_2_gives_the_scores_of_n_jobs_1():
    """Loky workers each hold their own cache (the scorers pickle without it)."""
    X, y = _data(n=450, seed=1)
    results = []
    for n_jobs in (1, 2):
        kwargs = {"sensitive_features": "s", "k": 5, "random_state": 0}
        scoring = {"cflips": make_cflips_scorer(**kwargs),
                   "ndccf": make_ndccf_scorer(**kwargs)}
        search = GridSearchCV(_model(), {"logisticregression__C": [0.01, 1.0]}, cv=3,
                              scoring=scoring, refit=False, n_jobs=n_jobs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            search.fit(X, y)
        results.append(search.cv_results_)
    assert SENSITIVE_CLASSIFIER_CACHE.hits == 3 * 2 - 3  # n_jobs=1: one fit a fold
    assert AUDIT_CACHE.hits == 3 * 2  # the nDCCF scorer reads the CFlips scorer's audit
    for name in ("cflips", "ndccf"):
        for i in range(3):
            key = f"split{i}_test_{name}"
            assert np.isfinite(results[0][key]).all()
            np.testing.assert_allclose(results[1][key], results[0][key], rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [make_cflips_scorer, make_ndccf_scorer])
def test_cache_parameter_is_validated(make):
    with pytest.raises(InvalidParameterError, match="cache"):
        make(sensitive_features="s", cache="yes")


class CountingModel(LogisticRegression):
    """A logistic regression on ``proxy`` and ``other`` that counts its predictions."""

    n_predicts = 0

    def fit(self, X, y):
        return super().fit(X[["proxy", "other"]], y)

    def predict(self, X):
        type(self).n_predicts += 1
        return super().predict(X[["proxy", "other"]])


def test_cflips_and_ndccf_of_one_model_on_one_fold_share_one_audit():
    X, y = _data()
    model = CountingModel().fit(X, y)
    kwargs = {"sensitive_features": "s", "k": 5, "random_state": 0}
    expected = make_ndccf_scorer(**kwargs, cache=False)(model, X, y)
    make_cflips_scorer(**kwargs)(model, X, y)
    CountingModel.n_predicts = 0
    shared = make_ndccf_scorer(**kwargs)(model, X, y)
    assert CountingModel.n_predicts == 0  # no audit ran: the model was never called
    assert AUDIT_CACHE.hits == 1
    np.testing.assert_allclose(shared, expected, rtol=0, atol=1e-12)
    make_ndccf_scorer(**{**kwargs, "k": 4})(model, X, y)  # another parameter: audited
    assert CountingModel.n_predicts > 0 and AUDIT_CACHE.hits == 1


def test_a_model_refitted_in_place_is_audited_anew():
    X, y = _data()
    kwargs = {"sensitive_features": "s", "k": 5, "random_state": 0}
    model = CountingModel(C=0.01).fit(X, y)
    make_cflips_scorer(**kwargs)(model, X, y)
    model.set_params(C=100.0).fit(X.iloc[:300], y[:300])  # the same object, other weights
    expected = make_ndccf_scorer(**kwargs, cache=False)(model, X, y)
    np.testing.assert_allclose(make_ndccf_scorer(**kwargs)(model, X, y), expected,
                               rtol=0, atol=1e-12)
    assert AUDIT_CACHE.hits == 0


@pytest.mark.parametrize("random_state", [None, np.random.RandomState(0)])
def test_an_audit_that_is_a_new_draw_is_never_shared(random_state):
    X, y = _data(n=300)
    model = _model().fit(X, y)
    kwargs = {"sensitive_features": "s", "k": 5, "random_state": random_state}
    make_cflips_scorer(**kwargs)(model, X, y)
    make_ndccf_scorer(**kwargs)(model, X, y)
    assert len(AUDIT_CACHE) == 0 and AUDIT_CACHE.hits == 0
