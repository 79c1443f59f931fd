"""Issue 10, section 5: linear_rule / sensitive_columns never return a silent wrong result."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import (
    Lasso,
    LinearRegression,
    LogisticRegression,
    Perceptron,
    Ridge,
    RidgeClassifier,
    SGDClassifier,
    SGDRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVR, LinearSVC, LinearSVR

from skfairverify import FairnessVerifier, linear_rule, sensitive_columns
from skfairverify.preprocessing import IntegerWeightScaler


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "s": rng.integers(0, 2, n)})
    y = (X.a + X.s + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return X, y


REGRESSORS = [LinearRegression(), Ridge(), Lasso(alpha=0.01), SGDRegressor(random_state=0),
              LinearSVR(random_state=0, max_iter=5000)]
CLASSIFIERS = [LogisticRegression(), RidgeClassifier(), LinearSVC(random_state=0),
               SGDClassifier(random_state=0), Perceptron(random_state=0)]


def _wrappings(est, X, y):
    """Return the fitted estimator bare, in a pipeline, frozen, and a frozen pipeline."""
    bare = clone(est).fit(X, y)
    pipe = make_pipeline(StandardScaler(), clone(est)).fit(X, y)
    return [bare, pipe, FrozenEstimator(bare), FrozenEstimator(pipe)]


@pytest.mark.parametrize("est", REGRESSORS, ids=lambda e: type(e).__name__)
def test_linear_rule_refuses_regressors_naming_them(est):
    # Before the fix, a regressor's coef_/intercept_ was read as a binary classifier
    # (Ridge gave intercept 0.296 and decisions "prediction > 0" for a 0/1 target).
    X, y = _data()
    name = type(est).__name__
    for model in _wrappings(est, X, y):
        with pytest.raises(TypeError, match=rf"{name}.*regressor"):
            linear_rule(model)


@pytest.mark.parametrize("est", REGRESSORS[:2], ids=lambda e: type(e).__name__)
def test_integer_weight_scaler_and_verifier_refuse_regressors(est):
    X, y = _data()
    name = type(est).__name__
    with pytest.raises(TypeError, match=rf"{name}.*regressor"):
        IntegerWeightScaler(est).fit(X, y)
    with pytest.raises(TypeError, match=rf"{name}.*regressor"):
        IntegerWeightScaler(FrozenEstimator(est.fit(X, y))).fit(X, y)
    with pytest.raises(TypeError, match=rf"{name}.*regressor"):
        FairnessVerifier(est, sensitive_features="s", network="independent").fit(X, y)


def test_non_linear_regressor_is_refused_as_not_a_classifier():
    X, y = _data()
    with pytest.raises(TypeError, match="SVR.*regressor"):
        linear_rule(SVR(kernel="linear").fit(X, y))


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_binary_linear_classifiers_stay_accepted(est):
    X, y = _data()
    for model in _wrappings(est, X, y):
        rule = linear_rule(model)
        np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X),
                                   atol=1e-8)
        assert list(rule.classes) == [0, 1]


def test_classifier_without_classes_is_refused():
    X, y = _data()
    model = LogisticRegression().fit(X, y)
    del model.classes_
    with pytest.raises(TypeError, match="classes_"):
        linear_rule(model)


# ------------------------------------------------------------ sensitive_columns


def test_sensitive_columns_with_integer_column_names():
    # Before the fix: [0, 1, 2] (every column) instead of [2].
    X = pd.DataFrame({0: [0.0, 1, 2, 3, 4, 5], 1: [1.0, 0, 1, 0, 1, 0], 2: [5.0, 6, 7, 8, 9, 1]})
    y = [0, 0, 1, 1, 1, 0]
    model = make_pipeline(
        make_column_transformer(("passthrough", [0, 1]), remainder="drop"),
        LogisticRegression(),
    ).fit(X, y)
    assert sensitive_columns(model, X) == [2]
    assert sensitive_columns(FrozenEstimator(model), X) == [2]
    # A plain model fitted on integer-named columns reads them all.
    assert sensitive_columns(LogisticRegression().fit(X, y), X) == []
    with pytest.raises(ValueError, match="by position"):
        sensitive_columns(model, X[[0, 1]])


def test_sensitive_columns_with_mixed_column_names():
    X = pd.DataFrame({"a": [0.0, 1, 2, 3, 4, 5], 7: [1.0, 0, 1, 0, 1, 0],
                      "c": [5.0, 6, 7, 8, 9, 1]})
    y = [0, 0, 1, 1, 1, 0]
    # scikit-learn refuses mixed names in fit; a model fitted on the array is matched
    # by position.
    model = make_pipeline(
        make_column_transformer(("passthrough", [0, 2]), remainder="drop"),
        LogisticRegression(),
    ).fit(X.to_numpy(), y)
    assert sensitive_columns(model, X) == [7]


def test_sensitive_columns_names_missing_columns():
    X = pd.DataFrame({"a": [0.0, 1, 2, 3], "b": [1.0, 0, 1, 0]})
    model = LogisticRegression().fit(X, [0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"lacks the input columns \['b'\]"):
        sensitive_columns(model, X[["a"]])
    # Matching by name: extra or reordered columns are fine.
    assert sensitive_columns(model, X.assign(s=1)[["s", "b", "a"]]) == ["s"]


# ------------------------------------------------------------ term-name collisions


def test_term_names_with_equals_are_quoted_and_unique():
    # Before issue 11: coef had the index 'a=b=c' twice (then: refused with a ValueError).
    # Now the parts containing '=' are quoted, and the structure is in rule.terms.
    X = pd.DataFrame({"a": ["b=c", "x", "b=c", "x"], "a=b": ["c", "y", "y", "c"]})
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X, [0, 1, 1, 0])
    rule = linear_rule(model)
    assert rule.coef.index.is_unique
    assert list(rule.coef.index) == ["'a'='b=c'", "a=x", "'a=b'='c'", "'a=b'='y'"]
    assert [(t.column, t.category) for t in rule.terms] == [
        ("a", "b=c"), ("a", "x"), ("a=b", "c"), ("a=b", "y")]
    assert rule.category_coef("a=b").index.tolist() == ["c", "y"]
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X))


def test_numeric_column_named_like_a_category_term_keeps_its_name():
    X = pd.DataFrame({"a": ["b", "c", "b", "c"], "a=b": [0.0, 1.0, 2.0, 3.0]})
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["a"]), ("passthrough", ["a=b"])),
        LogisticRegression(),
    ).fit(X, [0, 1, 1, 0])
    rule = linear_rule(model)
    # The numeric term is the column's name; the category terms are quoted.
    assert list(rule.coef.index) == ["a=b", "'a'='b'", "a=c"]
    assert rule.terms[0].kind == "numeric" and rule.terms[0].column == "a=b"
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X))


def test_equals_in_names_without_collision_is_read():
    X = pd.DataFrame({"a": ["b=c", "x", "b=c", "x"], "d=e": ["f", "g", "g", "f"]})
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X, [0, 1, 1, 0])
    rule = linear_rule(model)
    assert rule.coef.index.is_unique
    assert list(rule.coef.index) == ["'a'='b=c'", "a=x", "'d=e'='f'", "'d=e'='g'"]
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X))
