"""Issue 10, section 5: the integer rule is invariant to a positive rescaling of the decision.

Multiplying a model's coefficients and intercept by ``c > 0`` changes no decision, so it
must change neither the integer rule nor its decisions nor its agreement. Before the fix,
coefficients x 1e-12 rounded to an all-zero integer rule (every row negative).
"""

import copy

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import linear_rule
from skfairverify.preprocessing import IntegerWeightScaler, decision_scale

FACTORS = [1e-12, 1e12, 3.7, 0.01]


def _rescaled(model, factor):
    """Copy a fitted model deeply, multiplying its final coef_ and intercept_."""
    m = copy.deepcopy(model)
    final = m[-1] if hasattr(m, "steps") else m
    final.coef_ = final.coef_ * factor
    final.intercept_ = final.intercept_ * factor
    return m


def _numeric_problem(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1]
    y = (X @ [1.0, -0.2, 5.0] + 0.3 + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y


def _mixed_problem(n=400, seed=1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(50, 10, n), "c": rng.choice(["u", "v", "w"], n)})
    y = ((X.x - 50) / 10 + (X.c == "u") + rng.normal(scale=0.5, size=n) > 0.3).astype(int)
    model = make_pipeline(
        make_column_transformer((StandardScaler(), ["x"]), (OneHotEncoder(), ["c"])),
        LogisticRegression(),
    ).fit(X, y)
    return X, y, model


def _assert_same_integer_rule(a, b, X):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.multiplier_ == b.multiplier_
    assert a.agreement_ == b.agreement_
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("multiplier", ["auto", 20])
def test_scaler_integer_rule_invariant_to_rescaling(factor, multiplier):
    X, y = _numeric_problem()
    model = LogisticRegression().fit(X, y)
    base = IntegerWeightScaler(FrozenEstimator(model), multiplier=multiplier).fit(X, y)
    scaled = IntegerWeightScaler(
        FrozenEstimator(_rescaled(model, factor)), multiplier=multiplier
    ).fit(X, y)
    _assert_same_integer_rule(base, scaled, X)
    assert scaled.scale_ == pytest.approx(factor * base.scale_, rel=1e-12)
    # The rescaled model decides as the original, and the integer rule follows both.
    np.testing.assert_array_equal(_rescaled(model, factor).predict(X), model.predict(X))
    assert scaled.agreement_ >= 0.97


@pytest.mark.parametrize("factor", FACTORS)
def test_scaler_pipeline_with_categories_invariant_to_rescaling(factor):
    X, y, model = _mixed_problem()
    base = IntegerWeightScaler(FrozenEstimator(model)).fit(X, y)
    scaled = IntegerWeightScaler(FrozenEstimator(_rescaled(model, factor))).fit(X, y)
    _assert_same_integer_rule(base, scaled, X)
    assert scaled.agreement_ >= 0.97


def test_tiny_decision_function_does_not_collapse():
    # Before the fix: coef x 1e-12 gave an all-zero integer rule, every row negative,
    # agreement = share of negative rows.
    X, y = _numeric_problem()
    model = _rescaled(LogisticRegression().fit(X, y), 1e-12)
    scaler = IntegerWeightScaler(FrozenEstimator(model)).fit(X, y)
    assert np.any(scaler.coef_ != 0)
    pred = scaler.predict(X)
    assert 0 < pred.mean() < 1
    assert np.mean(pred == model.predict(X)) >= 0.97


def test_decision_scale_is_the_root_mean_square_and_homogeneous():
    rng = np.random.default_rng(3)
    d = rng.normal(0.4, 2.0, size=1000)
    assert decision_scale(d) == pytest.approx(np.sqrt(np.mean(d**2)), rel=1e-14)
    for c in [1e-300, 1e-12, 0.37, 1e12, 1e300]:
        assert decision_scale(c * d) == pytest.approx(c * decision_scale(d), rel=1e-12)
    assert decision_scale(np.zeros(5)) == 1.0
    with pytest.raises(ValueError, match="NaN or infinite"):
        decision_scale([1.0, np.nan])
    with pytest.raises(ValueError, match="empty"):
        decision_scale([])


def test_rule_scaled_keeps_decisions():
    X, y, model = _mixed_problem()
    rule = linear_rule(model)
    half = rule.scaled(0.5)
    np.testing.assert_allclose(half.decision_function(X), 0.5 * model.decision_function(X))
    np.testing.assert_array_equal(half.predict(X), model.predict(X))
    assert half.categorical_features == rule.categorical_features
    for bad in [0.0, -1.0, np.inf, np.nan]:
        with pytest.raises(ValueError, match="positive"):
            rule.scaled(bad)
    with pytest.raises(ValueError, match="overflows"):
        rule.scaled(1e308)
