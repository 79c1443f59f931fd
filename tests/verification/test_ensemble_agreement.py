"""The bounds path says when the ensemble it read is not the model (never silent)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator

from skfairverify import FairnessVerifier
from skfairverify.ensembles import read_ensemble
from skfairverify.verification import LowAgreementWarning, _ensemble_path


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "c0": rng.integers(0, 3, n),
                      "c1": rng.integers(0, 3, n)}).astype(float)
    y = ((X.c0 - X.c1 + a + rng.normal(0, 0.8, n)) > 0.5).astype(int)
    return X, y


def test_a_wrong_reading_of_the_ensemble_warns(monkeypatch):
    # The reader is made to return another model's trees: the bounds are then those of
    # that ensemble, and agreement_ (computed against the model's own predict) shows it.
    X, y = _data()
    model = HistGradientBoostingClassifier(max_iter=5, max_depth=2, random_state=0).fit(X, y)
    other = HistGradientBoostingClassifier(max_iter=5, max_depth=2,
                                           random_state=0).fit(X, 1 - y)
    monkeypatch.setattr(_ensemble_path, "read_ensemble", lambda final: read_ensemble(other))
    ver = FairnessVerifier(FrozenEstimator(model), "a", method="bounds", n_draws=0,
                           n_bootstrap=0, random_state=0)
    with pytest.warns(LowAgreementWarning, match="decides as the model on only"):
        ver.fit(X, y)
    assert ver.agreement_ < 0.5


def test_a_right_reading_does_not_warn():
    X, y = _data()
    model = HistGradientBoostingClassifier(max_iter=5, max_depth=2, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowAgreementWarning)
        ver = FairnessVerifier(FrozenEstimator(model), "a", method="bounds", n_draws=0,
                               n_bootstrap=0, random_state=0).fit(X, y)
    assert ver.agreement_ == 1.0


def test_xgboost_with_a_number_as_missing_is_refused_and_auto_samples():
    # XGBoost's missing=0.0 sends every 0 the node's missing way: read as a number, the
    # bounds were exact-looking and wrong (0.78 against an enumerated 0.34).
    xgboost = pytest.importorskip("xgboost")
    X, y = _data()
    model = xgboost.XGBClassifier(n_estimators=5, max_depth=2, missing=0.0, n_jobs=1,
                                  random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"missing=0\.0"):
        read_ensemble(model)
    with pytest.raises(TypeError, match=r"missing=0\.0"):
        FairnessVerifier(FrozenEstimator(model), "a", method="bounds", n_draws=0,
                         n_bootstrap=0, random_state=0).fit(X, y)
    ver = FairnessVerifier(FrozenEstimator(model), "a", n_draws=0, n_bootstrap=0,
                           tolerance=0.05, random_state=0).fit(X, y)
    assert ver.method_ == "sampling"
    assert "missing=0.0" in ver.method_reason_
    # the sampled rates are the model's: within the interval of its own decisions
    truth = pd.Series(model.predict(X) == 1).groupby(X["a"]).mean()
    assert np.all(np.abs(ver.groups_["positive_rate"].to_numpy() - truth.to_numpy()) < 0.1)


def test_lightgbm_with_linear_leaves_is_refused_and_auto_samples():
    # linear_tree=True: each leaf is a linear model; read as constants, the bounds were
    # exact-looking and wrong (the gap's direction reversed against enumeration).
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data()
    model = lightgbm.LGBMClassifier(linear_tree=True, n_estimators=5, num_leaves=4,
                                    min_child_samples=5, n_jobs=1, verbose=-1,
                                    random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="linear_tree=True"):
        read_ensemble(model)
    ver = FairnessVerifier(FrozenEstimator(model), "a", n_draws=0, n_bootstrap=0,
                           tolerance=0.05, random_state=0).fit(X, y)
    assert ver.method_ == "sampling" and "linear_tree=True" in ver.method_reason_
