"""One sensitive classifier cross-fitted on a search's data, shared by every fold (issue 26).

``fit_sensitive_classifier(X, sensitive_features)`` cross-fits the sensitive classifier
once on the whole data of a search, frozen, for the scorers' ``sensitive_classifier``.
Checked here:

* no row is judged by a model that saw it: with a classifier that memorises its
  training rows (probability 1 of a row's own group), every row any fold model is
  asked to judge during a whole ``GridSearchCV`` is outside its training rows, and
  every validation row and counterfactual gets the out-of-fold probability of the one
  fold model that did not see it (a plain frozen fit of the same classifier, the leak,
  fails both checks);
* the search's scores are those of the audit run by hand on each fold with the same
  classifier, with the scorers' caches on or off, and with ``n_jobs=2`` (to 1e-12);
* the classifier predicts the raw sensitive values (the intersections of several
  attributes), reads its columns by name, and refuses what it cannot judge.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skfairverify.counterfactual._crossfit as crossfit
from skfairverify import CounterfactualFairness
from skfairverify.counterfactual import CrossFittedSensitiveClassifier, fit_sensitive_classifier
from skfairverify.counterfactual._crossfit import SENSITIVE_CLASSIFIER_CACHE, row_keys
from skfairverify.metrics import make_cflips_scorer, make_ndccf_scorer
from skfairverify.metrics._counterfactual_scorer import AUDIT_CACHE
from skfairverify.s3p import TableTooLargeError

GRID = {"columntransformer__num__with_mean": [True, False],
        "logisticregression__C": [0.01, 1.0]}


@pytest.fixture(autouse=True)
def _cold_caches():
    SENSITIVE_CLASSIFIER_CACHE.clear()
    AUDIT_CACHE.clear()
    yield
    SENSITIVE_CLASSIFIER_CACHE.clear()
    AUDIT_CACHE.clear()


class Memorise(ClassifierMixin, BaseEstimator):
    """Probability 1 of a training row's own group; a logistic regression's for others.

    Every instance records the rows (their keys) it is asked to judge, with the keys of
    the rows it was fitted on, in the class-level ``calls``.
    """

    calls: list = []

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        keys = row_keys(X)
        self.train_keys_ = set(keys.tolist())
        codes = np.searchsorted(self.classes_, y)
        self.known_ = pd.Series(codes, index=keys).groupby(level=0).first()
        self.unseen_ = LogisticRegression().fit(X, codes)
        return self

    def predict_proba(self, X):
        keys = row_keys(X)
        type(self).calls.append((self.train_keys_, set(keys.tolist())))
        out = self.unseen_.predict_proba(X)
        codes = self.known_.reindex(keys).to_numpy()
        seen = ~np.isnan(codes)
        out[seen] = 0.0
        out[np.flatnonzero(seen), codes[seen].astype(int)] = 1.0
        return out

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _data(n=900, seed=0):
    """Groups 0 / 1; ``proxy`` reveals the group, the label follows both features."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = pd.DataFrame({"s": s, "proxy": s + rng.normal(0, 0.8, n),
                      "other": rng.normal(size=n)})
    return X, (X.proxy + X.other + rng.normal(0, 0.5, n) > 0.8).astype(int).to_numpy()


def _pipeline():
    return make_pipeline(ColumnTransformer([("num", StandardScaler(), ["proxy", "other"])]),
                         LogisticRegression())


def _search(X, y, scorers, n_jobs=None):
    search = GridSearchCV(_pipeline(), GRID, cv=KFold(3), scoring=scorers, refit=False,
                          n_jobs=n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(X, y)
    return search.cv_results_


def _fold_scores(results, name):
    return np.array([results[f"split{i}_test_{name}"] for i in range(3)])


def test_no_row_is_judged_by_a_model_that_saw_it_in_a_search():
    X, y = _data()
    Memorise.calls = []
    shared = fit_sensitive_classifier(X, "s", sensitive_classifier=Memorise(),
                                      random_state=0)
    scorer = make_cflips_scorer(sensitive_features="s", k=5, random_state=0,
                                sensitive_classifier=shared, min_group_size=1)
    results = _search(X, y, {"cflips": scorer})
    assert np.isfinite(_fold_scores(results, "cflips")).all()
    assert len(Memorise.calls) >= 5  # the out-of-fold probabilities of the fit at least
    assert sum(map(len, (judged for _, judged in Memorise.calls))) == len(X)  # (no other)
    for train, judged in Memorise.calls:
        assert not train & judged  # a fold model only judges rows it was not fitted on
    # the leak that check exposes: one frozen fit on every row judges them in-sample
    Memorise.calls = []
    X_ns = X.drop(columns="s")
    FrozenEstimator(Memorise().fit(X_ns, X["s"])).predict_proba(X_ns)
    assert all(train & judged for train, judged in Memorise.calls)


def test_validation_rows_and_counterfactuals_get_their_out_of_fold_probability():
    X, y = _data()
    shared = fit_sensitive_classifier(X, "s", sensitive_classifier=Memorise(), cv=4,
                                      random_state=0)
    inner = shared.estimator
    X_ns = X.drop(columns="s")
    # by hand: the one fold model that excludes each row, by the row's values
    fold_of = dict(zip(row_keys(X_ns).tolist(), inner.fold_.tolist()))
    train, test = next(iter(KFold(3).split(X)))
    audit = CounterfactualFairness(FrozenEstimator(_pipeline().fit(X.iloc[train], y[train])),
                                   "s", k=5, sensitive_classifier=shared, random_state=0,
                                   min_group_size=1, verbose=0)
    Xv = X.iloc[test].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = audit.fit(Xv, y[test]).evaluate(Xv)
    cfs = result.counterfactuals.counterfactuals.drop(columns="s").reset_index(drop=True)
    assert len(cfs) > 100
    for rows in (Xv.drop(columns="s"), cfs):
        folds = np.array([fold_of[key] for key in row_keys(rows).tolist()])  # all known
        expected = np.array([inner.estimators_[f].predict_proba(rows.iloc[[i]])[0]
                             for i, f in enumerate(folds)])
        got = shared.predict_proba(rows)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)  # one row or many
        # memorised in-sample, a row would get probability 1 of its own group: never here
        assert not np.isin(got, [0.0, 1.0]).any()
    assert result.sensitive_classifier["held_out"] is True


def _direct_scores(X, y, shared, metric):
    """The gap of each validation fold and candidate, by the audit run by hand."""
    scores = []
    for params in ({"columntransformer__num__with_mean": w, "logisticregression__C": c}
                   for w in (True, False) for c in (0.01, 1.0)):
        row = []
        for train, test in KFold(3).split(X):
            model = _pipeline().set_params(**params).fit(X.iloc[train], y[train])
            Xv = X.iloc[test].reset_index(drop=True)
            audit = CounterfactualFairness(FrozenEstimator(model), "s", k=5,
                                           sensitive_classifier=shared, random_state=0,
                                           verbose=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                result = audit.fit(Xv, y[test]).evaluate(Xv)
            row.append(-abs(getattr(result, metric)["delta"]))
        scores.append(row)
    return np.array(scores).T  # folds x candidates, as cv_results_


@pytest.mark.parametrize("cache", [True, False])
def test_search_scores_are_those_of_the_audit_by_hand(cache):
    X, y = _data()
    shared = fit_sensitive_classifier(X, "s", random_state=0)
    common = {"sensitive_features": "s", "k": 5, "random_state": 0,
              "sensitive_classifier": shared, "cache": cache}
    results = _search(X, y, {"cflips": make_cflips_scorer(**common),
                             "ndccf": make_ndccf_scorer(**common)})
    for metric in ("cflips", "ndccf"):
        np.testing.assert_allclose(_fold_scores(results, metric),
                                   _direct_scores(X, y, shared, metric), rtol=0, atol=1e-12)
    # the nDCCF scorer read the CFlips scorer's audit (keyed by the shared fit's id)
    assert AUDIT_CACHE.hits == (12 if cache else 0)


def test_shared_classifier_scores_do_not_depend_on_n_jobs():
    X, y = _data(600, seed=1)
    shared = fit_sensitive_classifier(X, "s", random_state=0)
    scorer = make_cflips_scorer(sensitive_features="s", k=5, random_state=0,
                                sensitive_classifier=shared)
    one = _fold_scores(_search(X, y, {"cflips": scorer}), "cflips")
    two = _fold_scores(_search(X, y, {"cflips": scorer}, n_jobs=2), "cflips")
    np.testing.assert_allclose(one, two, rtol=0, atol=1e-12)


def test_a_refitted_shared_classifier_is_not_read_from_the_shared_audits():
    X, y = _data(600)
    model = _pipeline().fit(X, y)
    a = fit_sensitive_classifier(X, "s", random_state=0)
    b = fit_sensitive_classifier(X, "s", random_state=1)
    score = {name: make_cflips_scorer(sensitive_features="s", k=5, random_state=0,
                                      sensitive_classifier=clf)(model, X, y)
             for name, clf in (("a", a), ("b", b))}
    assert AUDIT_CACHE.hits == 0 and len(AUDIT_CACHE) == 2
    assert score["a"] != score["b"]


def test_metadata_route_and_intersections():
    X, y = _data(900)
    rng = np.random.default_rng(3)
    sensitive = pd.DataFrame({"sex": np.where(X.s == 1, "M", "F"),
                              "age": rng.choice(["young", "old"], len(X))})
    X_ns = X.drop(columns="s")
    shared = fit_sensitive_classifier(X_ns, sensitive, random_state=0)
    assert shared.classes_.tolist() == ["F|old", "F|young", "M|old", "M|young"]
    assert shared.oof_proba_.shape == (len(X), 4)
    np.testing.assert_allclose(shared.oof_proba_.sum(axis=1), 1.0)
    audit = CounterfactualFairness(LogisticRegression(), k=3, privileged=("M", "old"),
                                   sensitive_classifier=shared, random_state=0, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = audit.fit(X_ns, y, sensitive_features=sensitive).evaluate(
            X_ns, sensitive_features=sensitive)
    assert result.sensitive_classifier["held_out"] is True
    assert np.isfinite(result.cflips["delta"])


def test_columns_are_read_by_name():
    X, _ = _data(300)
    clf = fit_sensitive_classifier(X, "s", sensitive_classifier=LogisticRegression(),
                                   random_state=0)
    X_ns = X.drop(columns="s")
    np.testing.assert_array_equal(clf.predict_proba(X_ns[["other", "proxy"]]),
                                  clf.predict_proba(X_ns))
    with pytest.raises(ValueError, match=r"lacks \['other'\]"):
        clf.predict(X_ns[["proxy"]])
    with pytest.raises(ValueError, match=r"lacks \['proxy', 'other'\]"):
        clf.predict(X[["s"]])  # fitted without the sensitive column


def test_two_classes_predict_by_the_half_and_many_by_the_largest():
    X, _ = _data(300)
    X_ns = X.drop(columns="s")
    clf = CrossFittedSensitiveClassifier(LogisticRegression(), 3, 0).fit(X_ns, X.s)
    p = clf.predict_proba(X_ns)
    np.testing.assert_array_equal(clf.predict(X_ns), (p[:, 1] > 0.5).astype(int))
    np.testing.assert_array_equal(p[:, 0], 1.0 - p[:, 1])
    three = np.array(["a", "b", "c"])[np.arange(300) % 3]
    clf3 = CrossFittedSensitiveClassifier(LogisticRegression(), 3, 0).fit(X_ns, three)
    p3 = clf3.predict_proba(X_ns)
    assert clf3.classes_.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(p3.sum(axis=1), 1.0)
    best = np.array([["a", "b", "c"][int(np.argmax(row))] for row in p3])
    np.testing.assert_array_equal(clf3.predict(X_ns), best)


@pytest.mark.parametrize("bad, exc, match", [
    ({"y": np.zeros(300)}, ValueError, "at least two groups"),
    ({"y": np.zeros((300, 2))}, ValueError, "one value per row"),
    ({"X": np.zeros((300, 2))}, TypeError, "takes a DataFrame"),
])
def test_bad_inputs_are_refused_by_name(bad, exc, match):
    X, _ = _data(300)
    args = {"X": X.drop(columns="s"), "y": X.s.to_numpy(), **bad}
    with pytest.raises(exc, match=match):
        CrossFittedSensitiveClassifier(LogisticRegression(), 3, 0).fit(args["X"], args["y"])


def test_a_probability_table_too_large_is_refused_before_fitting(monkeypatch):
    X, _ = _data(300)
    monkeypatch.setattr(crossfit, "_MAX_PROBA_ENTRIES", 599)
    with pytest.raises(TableTooLargeError, match="300 rows x 2 groups"):
        fit_sensitive_classifier(X, "s")


def test_fit_sensitive_classifier_refuses_bad_arguments():
    X, _ = _data(100)
    with pytest.raises(ValueError, match="not found in X"):
        fit_sensitive_classifier(X, "sex")
    with pytest.raises(ValueError, match="nothing to read"):
        fit_sensitive_classifier(X[["s"]], "s")
    with pytest.raises(ValueError, match="'cv' parameter"):
        fit_sensitive_classifier(X, "s", cv=1)


def test_the_classifier_report_kept_for_later_audits_is_theirs_to_change():
    """Audits of the same rows share the sensitive classifier's scores (issue 26)."""
    X, y = _data(600)
    shared = fit_sensitive_classifier(X, "s", random_state=0)
    results = []
    for C in (0.01, 1.0):  # two candidates on the same rows: the second reads the first's
        model = FrozenEstimator(_pipeline().set_params(logisticregression__C=C).fit(X, y))
        audit = CounterfactualFairness(model, "s", k=3, sensitive_classifier=shared,
                                       privileged=1, random_state=0, verbose=0).fit(X, y)
        results.append(audit.evaluate(X).sensitive_classifier)
        results[-1]["by_group"].loc["privileged", "recall"] = -1.0  # the caller's copy
    s = X.s.to_numpy()
    p = shared.predict_proba(X.drop(columns="s"))[:, 1]
    for summary in results:
        assert summary["roc_auc"] == roc_auc_score(s, p)
        assert summary["accuracy"] == np.mean((p > 0.5) == s)
    fresh = CounterfactualFairness(model, "s", k=3, sensitive_classifier=shared,
                                   privileged=1, random_state=0, verbose=0).fit(X, y)
    recall = np.mean(p[s == 1] > 0.5)
    assert fresh.sensitive_classifier_report_.loc["privileged", "recall"] == recall
