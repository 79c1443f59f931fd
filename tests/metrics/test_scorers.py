"""sample_weight and sensitive_features reach the scorers, by every route scikit-learn has.

A tiny test-only scorer on the private base (the weighted gap of selection rates, by
numpy) is scored inside ``cross_validate`` and ``GridSearchCV``; each fold's score is
compared with an independent weighted computation on the same folds.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from skfairverify.metrics._base import _FairnessScorer

CV = KFold(3, shuffle=True, random_state=0)
FEATURES = ["proxy", "other"]


class WeightedRateGap(_FairnessScorer):
    """Minus the gap of weighted selection rates between the groups of one attribute."""

    def _score(self, estimator, X, y, sensitive, sample_weight):
        X = X[FEATURES].to_numpy() if isinstance(X, pd.DataFrame) else X
        pred = estimator.predict(X)
        group = sensitive.iloc[:, 0].to_numpy()
        w = np.ones(len(pred)) if sample_weight is None else sample_weight
        rates = [np.sum(w[group == g] * pred[group == g]) / np.sum(w[group == g])
                 for g in np.unique(group)]
        return -(max(rates) - min(rates))


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    proxy = (sex == "M") + rng.normal(0, 0.7, n)
    other = rng.normal(size=n)
    y = (proxy + other + rng.normal(0, 0.5, n) > 0.7).astype(int)
    # weights that matter: heavy on the accepted women, light on the accepted men
    weights = rng.integers(1, 4, n).astype(float)
    weights[(sex == "F") & (proxy + other > 0.7)] *= 4
    X = pd.DataFrame({"proxy": proxy, "other": other, "sex": sex})
    return X, y, weights


def _gap(pred, group, w):
    """Independent brute-force weighted gap: expand each row w times (integer weights)."""
    rep = w.astype(int)
    pred, group = np.repeat(pred, rep), np.repeat(group, rep)
    rates = pd.Series(pred).groupby(group).mean()
    return -(rates.max() - rates.min())


def _expected_per_fold(estimator, X, y, w, *, fit_weighted=False, score_weighted=True):
    scores = []
    for train, test in CV.split(X, y):
        model = clone(estimator)
        fit_kw = {"sample_weight": w[train]} if fit_weighted else {}
        model.fit(X.iloc[train][FEATURES], y[train], **fit_kw)
        wt = w[test] if score_weighted else np.ones(len(test))
        scores.append(_gap(model.predict(X.iloc[test][FEATURES]),
                           X["sex"].to_numpy()[test], wt))
    return np.array(scores)


class OnFeatures(LogisticRegression):
    """A logistic regression on the non-sensitive columns (X keeps ``sex`` for the name
    route)."""

    def fit(self, X, y, sample_weight=None):
        return super().fit(X[FEATURES].to_numpy(), y, sample_weight=sample_weight)

    def predict(self, X):
        return super().predict(X[FEATURES].to_numpy() if isinstance(X, pd.DataFrame) else X)


def test_weights_change_the_score():
    """The weights used below really move the score (else the tests could not fail)."""
    X, y, w = _data()
    weighted = _expected_per_fold(LogisticRegression(), X, y, w)
    unweighted = _expected_per_fold(LogisticRegression(), X, y, w, score_weighted=False)
    assert np.min(np.abs(weighted - unweighted)) > 0.02


@pytest.mark.parametrize("route", ["metadata", "name"])
def test_cross_validate_with_routing(route):
    X, y, w = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        model = OnFeatures().set_fit_request(sample_weight=False)
        if route == "metadata":
            scorer = WeightedRateGap().set_score_request(
                sensitive_features=True, sample_weight=True)
            params = {"sensitive_features": X["sex"], "sample_weight": w}
        else:
            scorer = WeightedRateGap("sex").set_score_request(sample_weight=True)
            params = {"sample_weight": w}
        scores = cross_validate(model, X, y, cv=CV, scoring={"gap": scorer},
                                params=params)["test_gap"]
    expected = _expected_per_fold(LogisticRegression(), X, y, w)
    np.testing.assert_allclose(scores, expected)


@pytest.mark.parametrize("route", ["metadata", "name"])
def test_grid_search_with_routing(route):
    X, y, w = _data()
    grid = {"C": [0.01, 1.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        model = OnFeatures().set_fit_request(sample_weight=True)
        if route == "metadata":
            scorer = WeightedRateGap().set_score_request(
                sensitive_features=True, sample_weight=True)
            params = {"sensitive_features": X["sex"].to_numpy(), "sample_weight": w}
        else:
            scorer = WeightedRateGap("sex").set_score_request(sample_weight=True)
            params = {"sample_weight": w}
        search = GridSearchCV(model, grid, cv=CV, scoring={"gap": scorer}, refit=False)
        results = search.fit(X, y, **params).cv_results_
    for i, C in enumerate(grid["C"]):
        expected = _expected_per_fold(LogisticRegression(C=C), X, y, w, fit_weighted=True)
        got = [results[f"split{k}_test_gap"][i] for k in range(CV.get_n_splits())]
        np.testing.assert_allclose(got, expected)


def test_routing_under_an_alias():
    X, y, w = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = WeightedRateGap().set_score_request(sensitive_features="group",
                                                     sample_weight="weight")
        scores = cross_validate(OnFeatures(), X, y, cv=CV, scoring={"gap": scorer},
                                params={"group": X["sex"], "weight": w})["test_gap"]
    np.testing.assert_allclose(scores, _expected_per_fold(LogisticRegression(), X, y, w))


def test_routing_sample_weight_not_requested():
    X, y, w = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        model = OnFeatures().set_fit_request(sample_weight=False)
        # not requested (None): scikit-learn refuses the weights instead of dropping them
        scorer = WeightedRateGap().set_score_request(sensitive_features=True)
        with pytest.raises((UnsetMetadataPassedError, TypeError), match="sample_weight"):
            cross_validate(model, X, y, cv=CV, scoring={"gap": scorer},
                           params={"sensitive_features": X["sex"], "sample_weight": w})
        # explicitly declined (False) while the fit takes them: the scorer gets unit weights
        model = OnFeatures().set_fit_request(sample_weight=True)
        scorer = WeightedRateGap().set_score_request(sensitive_features=True,
                                                     sample_weight=False)
        scores = cross_validate(model, X, y, cv=CV, scoring={"gap": scorer},
                                params={"sensitive_features": X["sex"],
                                        "sample_weight": w})["test_gap"]
    expected = _expected_per_fold(LogisticRegression(), X, y, w, fit_weighted=True,
                                  score_weighted=False)
    np.testing.assert_allclose(scores, expected)


def test_grid_search_without_routing_passes_weights_to_the_scorer():
    """Without routing, GridSearchCV.fit(sample_weight=w) weights the fit and the scorers
    that accept weights, as for scikit-learn's own scorers."""
    X, y, w = _data()
    assert WeightedRateGap("sex")._accept_sample_weight()
    grid = {"C": [0.01, 1.0]}
    search = GridSearchCV(OnFeatures(), grid, cv=CV, refit=False,
                          scoring={"acc": "accuracy", "gap": WeightedRateGap("sex")})
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*does not support sample_weight")
        results = search.fit(X, y, sample_weight=w).cv_results_
    for i, C in enumerate(grid["C"]):
        expected = _expected_per_fold(LogisticRegression(C=C), X, y, w, fit_weighted=True)
        got = [results[f"split{k}_test_gap"][i] for k in range(CV.get_n_splits())]
        np.testing.assert_allclose(got, expected)


def test_direct_call_with_weights():
    X, y, w = _data()
    model = LogisticRegression().fit(X[FEATURES].to_numpy(), y)
    pred, group = model.predict(X[FEATURES].to_numpy()), X["sex"].to_numpy()
    by_name = WeightedRateGap("sex")(model, X, y, sample_weight=w)
    by_values = WeightedRateGap()(model, X[FEATURES].to_numpy(), y,
                                  sensitive_features=group, sample_weight=list(w))
    assert by_name == pytest.approx(_gap(pred, group, w))
    assert by_values == pytest.approx(by_name)
    # integer weights give the same score as repeating the rows
    rep = w.astype(int)
    repeated = X.loc[X.index.repeat(rep)].reset_index(drop=True)
    assert WeightedRateGap("sex")(model, repeated, np.repeat(y, rep)) == pytest.approx(by_name)
    # unit weights are no weights
    assert WeightedRateGap("sex")(model, X, y, sample_weight=np.ones(len(X))) == (
        pytest.approx(WeightedRateGap("sex")(model, X, y)))


@pytest.mark.parametrize(
    "weights, match",
    [
        (lambda n: -np.ones(n), "(?i)negative"),
        (lambda n: np.ones(n - 1), "one weight per row"),
        (lambda n: np.r_[np.nan, np.ones(n - 1)], "NaN|infinit"),
        (lambda n: np.zeros(n), "non-zero|sums to 0"),
    ],
)
def test_bad_weights(weights, match):
    X, y, _ = _data(60)
    model = LogisticRegression().fit(X[FEATURES].to_numpy(), y)
    with pytest.raises(ValueError, match=match):
        WeightedRateGap("sex")(model, X, y, sample_weight=weights(len(X)))


def test_both_sensitive_routes_at_once_is_refused():
    X, y, _ = _data(60)
    model = LogisticRegression().fit(X[FEATURES].to_numpy(), y)
    with pytest.raises(ValueError, match="twice"):
        WeightedRateGap("sex")(model, X, y, sensitive_features=X["sex"])


@pytest.mark.parametrize("bad", [3.5, True, ["sex", None], [], ("sex", "sex")])
def test_bad_names_at_creation(bad):
    with pytest.raises((TypeError, ValueError), match="sensitive_features"):
        WeightedRateGap(bad)


def test_metadata_routing_declares_both_params():
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = WeightedRateGap().set_score_request(sensitive_features=True,
                                                     sample_weight="w")
        request = scorer.get_metadata_routing().score.requests
    assert request == {"sensitive_features": True, "sample_weight": "w"}
    assert WeightedRateGap().get_metadata_routing().score.requests == {
        "sensitive_features": None, "sample_weight": None}
