"""linear_rule and sensitive_columns: the rule must reproduce decision_function."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (
    LogisticRegression,
    Perceptron,
    RidgeClassifier,
    SGDClassifier,
)
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skfairverify import linear_rule, sensitive_columns


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "age": rng.normal(40, 10, n),
            "hours": rng.uniform(10, 60, n),
            "gain": rng.exponential(1000, n),
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(["a", "b", "c"], n),
            "edu": rng.choice([1, 2, 3, 4], n),
        }
    )
    y = (
        0.05 * (X.age - 40) + 0.03 * (X.hours - 35) + (X.sex == "M") + rng.normal(0, 1, n) > 0.5
    ).astype(int)
    return X, y


def _manual_decision(rule, X):
    """Compute the invariant of the issue independently of LinearRule."""
    out = np.full(len(X), rule.intercept)
    for name, w in rule.coef.items():
        if name in X.columns:
            out += w * X[name].to_numpy(dtype=float)
        else:
            col, _, cat = name.partition("=")
            out += w * np.array([str(v) == cat for v in X[col]], dtype=float)
    return out


NUM = ["age", "hours", "gain"]
SCALERS = [StandardScaler(), MinMaxScaler(), MaxAbsScaler(), StandardScaler(with_mean=False),
           "passthrough"]
FINALS = [LogisticRegression(max_iter=2000), LinearSVC(), SGDClassifier(random_state=0),
          RidgeClassifier(), Perceptron(random_state=0)]


@pytest.mark.parametrize("seed", range(12))
def test_random_pipelines_reproduce_decision_function(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(seed=seed)
    scaler = SCALERS[rng.integers(len(SCALERS))]
    final = FINALS[rng.integers(len(FINALS))]
    nums = [c for c in NUM if rng.random() < 0.8] or ["age"]
    cats = [c for c in ["sex", "race", "edu"] if rng.random() < 0.7]
    drop = [None, "first", "if_binary"][rng.integers(3)]
    transformers = [(scaler, nums)]
    if cats:
        transformers.append((OneHotEncoder(drop=drop, handle_unknown="error"), cats))
    remainder = "drop" if rng.random() < 0.5 else "passthrough"
    if remainder == "passthrough":
        # only numeric leftovers may pass through to a linear model
        X = X.drop(columns=[c for c in ["sex", "race", "edu"] if c not in cats])
        X = X.drop(columns=[c for c in NUM if c not in nums][:1])
    ct = make_column_transformer(*transformers, remainder=remainder)
    steps = [ct]
    if rng.random() < 0.5:
        steps.append(StandardScaler())  # a second affine step on the encoded features
    model = make_pipeline(*steps, final).fit(X, y)
    rule = linear_rule(model)
    expected = model.decision_function(X)
    np.testing.assert_allclose(rule.decision_function(X), expected, rtol=0, atol=1e-8)
    np.testing.assert_allclose(_manual_decision(rule, X), expected, rtol=0, atol=1e-8)
    read = set(rule.numeric_features) | set(rule.categorical_features)
    assert set(rule.dropped) == set(X.columns) - read


def test_plain_estimator_on_arrays():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    rule = linear_rule(model)
    assert list(rule.coef.index) == ["x0", "x1", "x2", "x3"]
    np.testing.assert_allclose(rule.coef.to_numpy(), model.coef_.ravel())
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X), atol=1e-10)
    np.testing.assert_array_equal(rule.predict(X), model.predict(X))


def test_one_hot_coefficients_named_and_reference_zero():
    X, y = _data()
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(drop="first"), ["race"]), (StandardScaler(), ["age"])
        ),
        LogisticRegression(),
    ).fit(X, y)
    rule = linear_rule(model)
    assert rule.categorical_features == {"race": ["a", "b", "c"]}
    assert rule.coef["race=a"] == 0.0
    lr = model[-1]
    enc_coef = lr.coef_.ravel()[:2]
    np.testing.assert_allclose([rule.coef["race=b"], rule.coef["race=c"]], enc_coef)
    cc = rule.category_coef("race")
    assert list(cc.index) == ["a", "b", "c"]


def test_ordinal_encoder_and_imputer():
    X, y = _data()
    model = make_pipeline(
        ColumnTransformer(
            [
                ("ord", OrdinalEncoder(), ["race"]),
                ("num", make_pipeline(SimpleImputer(), MinMaxScaler()), ["age", "hours"]),
            ]
        ),
        LogisticRegression(),
    ).fit(X, y)
    rule = linear_rule(model)
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X), atol=1e-8)
    w_ord = model[-1].coef_.ravel()[0]
    np.testing.assert_allclose(rule.category_coef("race").to_numpy(), [0, w_ord, 2 * w_ord])


def test_frozen_estimator_is_read():
    X, y = _data()
    model = make_pipeline(
        make_column_transformer((StandardScaler(), NUM), (OneHotEncoder(), ["sex"])),
        LogisticRegression(),
    ).fit(X, y)
    frozen = FrozenEstimator(model)
    np.testing.assert_allclose(
        linear_rule(frozen).decision_function(X), model.decision_function(X), atol=1e-8
    )
    inner = make_pipeline(
        make_column_transformer((StandardScaler(), NUM)),
        FrozenEstimator(LogisticRegression().fit(X[NUM].to_numpy(), y)),
    )
    # A frozen final step inside a pipeline: unfitted scaler is fitted, the model is not.
    inner.fit(X, y)
    np.testing.assert_allclose(
        linear_rule(inner).decision_function(X), inner.decision_function(X), atol=1e-8
    )


def test_sensitive_columns_lists_dropped_inputs():
    X, y = _data()
    model = make_pipeline(
        make_column_transformer((StandardScaler(), ["age", "hours"]), (OneHotEncoder(), ["edu"]),
                                remainder="drop"),
        LogisticRegression(),
    ).fit(X, y)
    assert sensitive_columns(model, X) == ["gain", "sex", "race"]
    assert linear_rule(model).dropped == ["gain", "sex", "race"]
    with pytest.raises(TypeError, match="DataFrame"):
        sensitive_columns(model, X.to_numpy())


@pytest.mark.parametrize(
    "model, match",
    [
        (DecisionTreeClassifier(), "DecisionTreeClassifier"),
        (make_pipeline(PolynomialFeatures(), LogisticRegression()), "polynomialfeatures"),
        (make_pipeline(MinMaxScaler(clip=True), LogisticRegression()), "clip"),
        (Pipeline([("scale", StandardScaler()),
                   ("enc", OneHotEncoder(handle_unknown="ignore")),
                   ("lr", LogisticRegression())]), "enc"),
    ],
)
def test_unreadable_steps_raise_type_error_naming_them(model, match):
    X, y = _data()
    X = X[NUM]
    model.fit(X, y)
    with pytest.raises(TypeError, match=match):
        linear_rule(model)


def test_multiclass_is_rejected():
    X, _ = _data()
    y = np.arange(len(X)) % 3
    with pytest.raises(TypeError, match="multiclass"):
        linear_rule(LogisticRegression(max_iter=500).fit(X[NUM], y))


def test_unfitted_is_rejected():
    with pytest.raises(TypeError, match="not fitted|no coef_"):
        linear_rule(LogisticRegression())


def test_rule_rejects_missing_columns():
    X, y = _data()
    rule = linear_rule(LogisticRegression(max_iter=1000).fit(X[NUM], y))
    with pytest.raises(ValueError, match="lacks the columns"):
        rule.decision_function(X[["age"]])


def test_linear_rule_refuses_a_non_estimator_by_name():
    with pytest.raises(TypeError, match="'estimator' parameter of linear_rule"):
        linear_rule("LogisticRegression")
    X, y = _data()
    with pytest.raises(TypeError, match="'estimator' parameter of sensitive_columns"):
        sensitive_columns(None, X)


def test_nested_frozen_estimators_are_read_through():
    X, y = _data()
    model = LogisticRegression().fit(X[NUM], y)
    rule = linear_rule(FrozenEstimator(FrozenEstimator(model)))
    np.testing.assert_allclose(rule.decision_function(X[NUM]), model.decision_function(X[NUM]))
