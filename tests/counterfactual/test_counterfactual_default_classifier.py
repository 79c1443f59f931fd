"""The default sensitive classifier of the counterfactual audit (issue 26).

* Its parameters: 50 trees of at most 15 leaves, scikit-learn's early stopping beyond
  10,000 rows, the audit's seed; the fold models of ``CounterfactualFairness`` are it.
* Early stopping is repeatable: the same ``random_state`` gives the same fold models,
  the same out-of-fold probabilities and the same CFlips, to the last bit.
* The held-out accuracy and ROC AUC reported are those of the out-of-fold predictions.
* On the bundled German credit data its held-out AUC is at least that of the former
  default (100 trees of 31 leaves) less 0.005, the rule of its choice.
* The fold models predict with one thread in ``evaluate`` as in ``fit``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import ColumnTransformer, make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline, make_pipeline
from threadpoolctl import ThreadpoolController, threadpool_limits

from skfairverify import CounterfactualFairness
from skfairverify.counterfactual import (
    CrossFittedSensitiveClassifier,
    default_sensitive_classifier,
)
from skfairverify.counterfactual._fairness import DEFAULT_SENSITIVE_PARAMS
from skfairverify.datasets import load_german


def proxy_data(n, seed=0, strength=1.0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = pd.DataFrame({"s": np.where(s == 1, "M", "F"),
                      "proxy": strength * s + rng.normal(0.0, 0.8, n),
                      "other": rng.normal(size=n),
                      "job": rng.choice(["a", "b", "c"], n)})
    X["job"] = X["job"].astype("category")
    y = (X.proxy + X.other + rng.normal(0.0, 0.5, n) > 0.8).astype(int)
    return X, y


def fitted_model(X, y):
    """A logistic regression on the numeric non-sensitive columns, frozen."""
    model = make_pipeline(make_column_transformer(("passthrough", ["proxy", "other"])),
                          LogisticRegression())
    return FrozenEstimator(model.fit(X, y))


def test_default_parameters():
    X, _ = proxy_data(50)
    clf = default_sensitive_classifier(X.drop(columns="s"), random_state=3)
    hgb = clf.named_steps["classify"]
    params = hgb.get_params()
    assert {k: params[k] for k in DEFAULT_SENSITIVE_PARAMS} == {
        "max_iter": 50, "max_leaf_nodes": 15, "early_stopping": "auto"}
    assert params["random_state"] == 3
    assert list(params["categorical_features"]) == [True, False, False]  # job first
    assert params["learning_rate"] == 0.1 and params["n_iter_no_change"] == 10


def _through_column_transformer(clf, X):
    """The default as it was for numeric columns: a ColumnTransformer passing them."""
    encoder = make_column_transformer(("passthrough", list(X.columns)),
                                      verbose_feature_names_out=False)
    return Pipeline([("encode", encoder), ("classify", clone(clf.named_steps["classify"]))])


@pytest.mark.parametrize("kind", ["float and int", "missing", "Float64"])
def test_numeric_columns_skip_the_encoder_with_the_same_fits(kind):
    rng = np.random.default_rng(4)
    n = 300
    s = rng.integers(0, 2, n)
    a = s + rng.normal(size=n)
    if kind == "missing":
        a[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({"a": pd.array(a, dtype="Float64") if kind == "Float64" else a,
                      "b": rng.integers(0, 5, n) if kind == "float and int"
                      else rng.normal(size=n)})
    clf = default_sensitive_classifier(X, random_state=0)
    assert clf.named_steps["encode"] == "passthrough"
    with threadpool_limits(1):
        new = CrossFittedSensitiveClassifier(clf, 5, 0).fit(X, s)
        old = CrossFittedSensitiveClassifier(_through_column_transformer(clf, X), 5, 0).fit(
            X, s)
    np.testing.assert_array_equal(new.oof_proba_, old.oof_proba_)
    moved = X.assign(a=X.a * 1.01)  # rows of no fold: the mean of the fold models
    np.testing.assert_array_equal(new.predict_proba(moved), old.predict_proba(moved))


def test_encoder_kept_for_categories_and_unnamed_columns():
    X, _ = proxy_data(50)
    numeric = X[["proxy", "other"]]
    assert isinstance(default_sensitive_classifier(X.drop(columns="s")).named_steps[
        "encode"], ColumnTransformer)  # a categorical column
    unnamed = numeric.set_axis([0, 1], axis=1)  # positions: the transformer selects them
    assert isinstance(default_sensitive_classifier(unnamed).named_steps["encode"],
                      ColumnTransformer)


@pytest.mark.parametrize("other", ["numeric", "category"])
def test_a_column_without_values_is_left_out(other):
    """The boosting cannot bin a column that is all missing (scikit-learn's error is a
    window shape): the default classifier leaves it out and gives the fits of the frame
    without it, bit for bit."""
    X, _ = proxy_data(300)
    X = X.drop(columns="s") if other == "category" else X[["proxy", "other"]]
    s = proxy_data(300)[0]["s"].eq("M").astype(int)
    empty = X.assign(blank=np.nan)
    clf = default_sensitive_classifier(empty, random_state=0)
    assert isinstance(clf.named_steps["encode"], ColumnTransformer)
    with threadpool_limits(1):
        with_blank = CrossFittedSensitiveClassifier(clf, 3, 0).fit(empty, s)
        without = CrossFittedSensitiveClassifier(
            default_sensitive_classifier(X, random_state=0), 3, 0).fit(X, s)
    np.testing.assert_array_equal(with_blank.oof_proba_, without.oof_proba_)


def test_fold_models_are_the_default():
    X, y = proxy_data(400)
    model = fitted_model(X, y)
    audit = CounterfactualFairness(model, "s", k=3, random_state=0,
                                   verbose=0).fit(X, y)
    folds = audit.sensitive_classifier_.estimators_
    assert len(folds) == 5
    for fold in folds:
        hgb = fold.named_steps["classify"]
        assert hgb.max_iter == 50 and hgb.max_leaf_nodes == 15
        assert hgb.random_state == 0
        assert not hgb.do_early_stopping_  # 320 rows: below scikit-learn's 10,000
        assert hgb.n_iter_ == 50


def test_early_stopping_is_repeatable_under_random_state():
    # 13,000 rows: each fold model is fitted on 10,400, beyond the "auto" threshold
    X, y = proxy_data(13_000, seed=1, strength=0.2)  # a weak proxy: stops early
    model = fitted_model(X, y)
    runs = []
    for _ in range(2):
        audit = CounterfactualFairness(model, "s", k=3, random_state=7,
                                       verbose=0).fit(X, y)
        res = audit.evaluate(X.iloc[:300])
        runs.append((audit, res))
    (a, ra), (b, rb) = runs
    stopped = []
    for fa, fb in zip(a.sensitive_classifier_.estimators_, b.sensitive_classifier_.estimators_):
        ha, hb = fa.named_steps["classify"], fb.named_steps["classify"]
        assert ha.do_early_stopping_ and hb.do_early_stopping_
        assert ha.n_iter_ == hb.n_iter_
        stopped.append(ha.n_iter_ < 50)
        np.testing.assert_array_equal(ha.validation_score_, hb.validation_score_)
    assert any(stopped)  # early stopping took place, alike in both fits
    np.testing.assert_array_equal(a.sensitive_classifier_.oof_proba_,
                                  b.sensitive_classifier_.oof_proba_)
    np.testing.assert_equal([ra.cflips, ra.ndccf], [rb.cflips, rb.ndccf])
    assert ra.sensitive_classifier["roc_auc"] == rb.sensitive_classifier["roc_auc"]


def test_reported_accuracy_and_auc_are_out_of_fold():
    X, y = proxy_data(600, seed=2)
    model = fitted_model(X, y)
    audit = CounterfactualFairness(model, "s", k=3, privileged="M",
                                   random_state=0, verbose=0).fit(X, y)
    summary = audit.evaluate(X.iloc[:100]).sensitive_classifier
    s_bin = (X.s == "M").to_numpy().astype(int)
    oof = audit.sensitive_classifier_.oof_proba_[:, 1]
    assert summary["held_out"] is True
    assert summary["roc_auc"] == pytest.approx(roc_auc_score(s_bin, oof), abs=1e-12)
    assert summary["accuracy"] == pytest.approx(np.mean((oof > 0.5) == s_bin), abs=1e-12)
    assert summary["roc_auc"] > 0.7  # the proxy gives the group away


def test_german_auc_as_good_as_the_former_default():
    data = load_german()
    X = data.data.drop(columns=["sex", "age_group"])
    s = ((data.data.sex == "Male") & (data.data.age_group == "old")).to_numpy().astype(int)
    new = default_sensitive_classifier(X, random_state=0)
    old = clone(new).set_params(classify__max_iter=100, classify__max_leaf_nodes=31)
    with threadpool_limits(1):
        auc = {name: roc_auc_score(s, CrossFittedSensitiveClassifier(clf, 5, 0).fit(
            X, s).oof_proba_[:, 1]) for name, clf in (("new", new), ("old", old))}
    assert auc["new"] >= auc["old"] - 0.005


class ThreadRecorder(ClassifierMixin, BaseEstimator):
    """A logistic regression on the numeric columns that records its thread counts."""

    seen: list = []

    def fit(self, X, y, sample_weight=None):
        self.model_ = LogisticRegression().fit(X.select_dtypes("number"), y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        ThreadRecorder.seen.append(max(
            (lib["num_threads"] for lib in ThreadpoolController().info()), default=1))
        return self.model_.predict_proba(X.select_dtypes("number"))

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def test_fold_models_predict_with_one_thread_in_evaluate():
    X, y = proxy_data(300, seed=3)
    model = fitted_model(X, y)
    audit = CounterfactualFairness(model, "s", k=3, random_state=0,
                                   sensitive_classifier=ThreadRecorder(), verbose=0)
    with threadpool_limits(limits=2):
        audit.fit(X, y)
        ThreadRecorder.seen = []
        audit.evaluate(proxy_data(100, seed=4)[0])  # new rows: the fold models judge them
    assert ThreadRecorder.seen and max(ThreadRecorder.seen) == 1

