"""Sample weights in the ESL box: frequency weights, i.e. integer weights are repeated rows."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfairverify import esl_decomposition, group_esl
from skfairverify.metrics import make_esl_scorer

METRICS = ("selection_rate", "tpr", "fpr", "ppv", "npv")
TOL = dict(rtol=1e-10, atol=1e-12)


def labels(n, rng, groups=("a", "b")):
    g = rng.choice(np.array(groups), size=n)
    y = rng.integers(0, 2, n)
    yhat = (rng.random(n) < np.where(y == 1, 0.7, 0.3)).astype(int)
    return y, yhat, g


def assert_same_group_result(a, b):
    np.testing.assert_allclose(a.esl_values.to_numpy(), b.esl_values.to_numpy(), **TOL)
    np.testing.assert_allclose(a.metric_by_group.to_numpy(), b.metric_by_group.to_numpy(),
                               **TOL)
    np.testing.assert_allclose(a.esl_covariance.to_numpy(), b.esl_covariance.to_numpy(),
                               **TOL)
    np.testing.assert_allclose(a.metric_covariance.to_numpy(),
                               b.metric_covariance.to_numpy(), **TOL)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame(), rtol=1e-10, atol=1e-12)
    pd.testing.assert_frame_equal(a.pairwise(), b.pairwise(), rtol=1e-10, atol=1e-12)
    assert a.total == pytest.approx(b.total, rel=1e-10)


# --------------------------------------------------------------------- group_esl
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("groups", [("a", "b"), ("a", "b", "c")])
def test_group_esl_integer_weights_are_repeated_rows(metric, groups):
    rng = np.random.default_rng(len(groups))
    y, yhat, g = labels(400, rng, groups)
    w = rng.integers(1, 5, size=400)
    weighted = group_esl(y, yhat, sensitive_features=g, metric=metric, value="solidarity",
                         sample_weight=w)
    rep = np.repeat(np.arange(400), w)
    repeated = group_esl(y[rep], yhat[rep], sensitive_features=g[rep], metric=metric,
                         value="solidarity")
    assert_same_group_result(weighted, repeated)
    if len(groups) == 2:
        for name in ("esl_difference", "esl_std_error", "metric_difference",
                     "metric_std_error", "z", "p_value"):
            assert getattr(weighted, name) == pytest.approx(getattr(repeated, name),
                                                            rel=1e-10, abs=1e-12), name
        # the weights matter: the unweighted result differs
        plain = group_esl(y, yhat, sensitive_features=g, metric=metric, value="solidarity")
        assert plain.esl_std_error != pytest.approx(weighted.esl_std_error, rel=1e-6)


def test_group_esl_weighted_intersections_are_repeated_rows():
    rng = np.random.default_rng(9)
    n = 600
    S = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "race": rng.choice(["x", "y", "z"], n)})
    y, yhat, _ = labels(n, rng)
    w = rng.integers(1, 4, size=n)
    rep = np.repeat(np.arange(n), w)
    weighted = group_esl(y, yhat, sensitive_features=S, metric="tpr", value="shapley",
                         sample_weight=w)
    repeated = group_esl(y[rep], yhat[rep], sensitive_features=S.iloc[rep], metric="tpr",
                         value="shapley")
    assert_same_group_result(weighted, repeated)


@pytest.mark.parametrize("metric", METRICS)
def test_group_esl_zero_weights_drop_rows(metric):
    rng = np.random.default_rng(4)
    y, yhat, g = labels(500, rng, ("a", "b", "c"))
    w = (rng.random(500) < 0.7).astype(float)
    kept = w > 0
    weighted = group_esl(y, yhat, sensitive_features=g, metric=metric, sample_weight=w)
    dropped = group_esl(y[kept], yhat[kept], sensitive_features=g[kept], metric=metric)
    assert_same_group_result(weighted, dropped)


def test_group_esl_weights_scale_free_and_closed_form():
    """Multiplying the weights by a constant changes the rates not at all and the
    variances by its inverse (frequency weights); one group's TPR variance is
    p (1 - p) / D with D the weighted number of positives."""
    rng = np.random.default_rng(5)
    y, yhat, g = labels(800, rng)
    w = rng.uniform(0.5, 2.0, size=800)
    res = group_esl(y, yhat, sensitive_features=g, metric="tpr", sample_weight=w)
    twice = group_esl(y, yhat, sensitive_features=g, metric="tpr", sample_weight=2 * w)
    np.testing.assert_allclose(twice.esl_values, res.esl_values, **TOL)
    np.testing.assert_allclose(twice.metric_std_errors ** 2 * 2, res.metric_std_errors ** 2,
                               **TOL)
    for k in ("a", "b"):
        rows = (g == k) & (y == 1)
        d = w[rows].sum()
        p = (w[rows] * yhat[rows]).sum() / d
        assert res.metric_by_group[k] == pytest.approx(p, rel=1e-12)
        assert res.metric_std_errors[k] == pytest.approx(np.sqrt(p * (1 - p) / d), rel=1e-10)


# ------------------------------------------------------------- esl_decomposition
class WeightedMidpoint(ClassifierMixin, BaseEstimator):
    """Predicts 1 when the sum of the features exceeds the midpoint of the two classes'
    weighted means of that sum: its fit depends on the weights, and repeated rows give
    the same fit (up to round-off far below the distance of any row to the threshold)."""

    def fit(self, X, y, sample_weight=None):
        s = np.asarray(X, dtype=float).sum(axis=1)
        w = np.ones(len(s)) if sample_weight is None else np.asarray(sample_weight, float)
        y = np.asarray(y)
        means = [np.sum(w[y == c] * s[y == c]) / np.sum(w[y == c]) for c in (0, 1)]
        self.threshold_ = (means[0] + means[1]) / 2
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return (np.asarray(X, dtype=float).sum(axis=1) > self.threshold_).astype(int)


def draw(n, rng):
    sex = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": rng.normal(size=n) + 0.8 * sex, "b": rng.normal(size=n),
                      "c": rng.normal(size=n), "sex": sex})
    y = (X.a + X.b + rng.normal(size=n) > 0.5).astype(int).to_numpy()
    return X, y


def assert_same_decomposition(a, b):
    pd.testing.assert_frame_equal(a.contributions, b.contributions, rtol=1e-10, atol=1e-12)
    pd.testing.assert_frame_equal(a.first_stage, b.first_stage, rtol=1e-10, atol=1e-12)
    pd.testing.assert_frame_equal(a.group_std_error, b.group_std_error, rtol=1e-10,
                                  atol=1e-12)
    assert a.compared == b.compared and a.coalitions == b.coalitions


def repeat(X, y, w):
    rep = np.repeat(np.arange(len(y)), w)
    return X.iloc[rep].reset_index(drop=True), y[rep]


@pytest.mark.parametrize("metric", ["tpr", "ppv", "selection_rate"])
def test_decomposition_integer_weights_are_repeated_rows(metric):
    rng = np.random.default_rng(11)
    X_tr, y_tr = draw(300, rng)
    X_te, y_te = draw(500, rng)
    w_tr, w_te = rng.integers(1, 4, 300), rng.integers(1, 4, 500)
    kw = dict(sensitive_features="sex", metric=metric, values=("shapley", "solidarity"))
    weighted = esl_decomposition(WeightedMidpoint(), X_tr, y_tr, X_test=X_te, y_test=y_te,
                                 sample_weight=w_tr, sample_weight_test=w_te, **kw)
    Xr_tr, yr_tr = repeat(X_tr, y_tr, w_tr)
    Xr_te, yr_te = repeat(X_te, y_te, w_te)
    repeated = esl_decomposition(WeightedMidpoint(), Xr_tr, yr_tr, X_test=Xr_te,
                                 y_test=yr_te, **kw)
    assert_same_decomposition(weighted, repeated)
    plain = esl_decomposition(WeightedMidpoint(), X_tr, y_tr, X_test=X_te, y_test=y_te, **kw)
    assert not np.allclose(plain.contributions["esl_std_error"],
                           weighted.contributions["esl_std_error"])


def test_decomposition_zero_weights_drop_rows():
    rng = np.random.default_rng(12)
    X_tr, y_tr = draw(300, rng)
    X_te, y_te = draw(500, rng)
    w_tr = (rng.random(300) < 0.6).astype(float)
    w_te = (rng.random(500) < 0.6).astype(float)
    sens = X_te["sex"].map({0: "F", 1: "M"}).to_numpy()
    kw = dict(features=["a", "b", "c"], metric="fpr", values=("equal_surplus",))
    weighted = esl_decomposition(WeightedMidpoint(), X_tr, y_tr, X_test=X_te, y_test=y_te,
                                 sensitive_features=sens, sample_weight=w_tr,
                                 sample_weight_test=w_te, **kw)
    kt, ke = w_tr > 0, w_te > 0
    dropped = esl_decomposition(WeightedMidpoint(), X_tr[kt], y_tr[kt], X_test=X_te[ke],
                                y_test=y_te[ke], sensitive_features=sens[ke], **kw)
    assert_same_decomposition(weighted, dropped)


class RecordsWeights(WeightedMidpoint):
    seen = []

    def fit(self, X, y, sample_weight=None):
        RecordsWeights.seen.append(None if sample_weight is None else np.sum(sample_weight))
        return super().fit(X, y, sample_weight=sample_weight)


class NoWeights(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return (np.asarray(X, dtype=float).sum(axis=1) > 0.5).astype(int)


def test_decomposition_split_weights_reach_fits_and_evaluation():
    rng = np.random.default_rng(13)
    X, y = draw(600, rng)
    w = rng.integers(1, 4, 600).astype(float)
    RecordsWeights.seen = []
    kw = dict(sensitive_features="sex", values=("equal_surplus",), random_state=0)
    res = esl_decomposition(RecordsWeights(), X, y, sample_weight=w, **kw)
    assert len(RecordsWeights.seen) == res.n_fits
    # every fit got the weights of the training part (the split keeps 70% of the rows)
    assert all(s is not None and 0.5 * w.sum() < s < 0.9 * w.sum() for s in RecordsWeights.seen)
    unit = esl_decomposition(WeightedMidpoint(), X, y, sample_weight=np.ones(600), **kw)
    plain = esl_decomposition(WeightedMidpoint(), X, y, **kw)
    assert_same_decomposition(unit, plain)  # the split does not depend on the weights
    assert not np.allclose(res.group_std_error, plain.group_std_error)


def test_decomposition_weights_pipeline_and_estimators_without_weights():
    rng = np.random.default_rng(14)
    X, y = draw(400, rng)
    w = rng.integers(1, 3, 400)
    RecordsWeights.seen = []
    pipe = make_pipeline(StandardScaler(), RecordsWeights())
    esl_decomposition(pipe, X, y, sensitive_features="sex", values="equal_surplus",
                      sample_weight=w, random_state=0)
    assert RecordsWeights.seen and all(s is not None for s in RecordsWeights.seen)
    with pytest.raises(TypeError, match="coalition models: NoWeights.fit takes no sample_weight"):
        esl_decomposition(NoWeights(), X, y, sensitive_features="sex",
                          values="equal_surplus", sample_weight=w, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no warning without weights
        esl_decomposition(NoWeights(), X, y, sensitive_features="sex",
                          values="equal_surplus", random_state=0)


def test_weighted_bootstrap_resamples_the_replicated_rows():
    """The bootstrap draws round(sum w) rows with probabilities proportional to w: its
    standard errors agree with the weighted delta method."""
    rng = np.random.default_rng(15)
    X_te, y_te = draw(1500, rng)
    w = rng.integers(1, 4, 1500)
    X_tr, y_tr = X_te.iloc[:50], y_te[:50]
    kw = dict(X_test=X_te, y_test=y_te, sensitive_features="sex", values=("shapley",),
              sample_weight_test=w, random_state=0)
    asym = esl_decomposition(NoWeights(), X_tr, y_tr, **kw)
    boot = esl_decomposition(NoWeights(), X_tr, y_tr, ci="bootstrap", n_bootstrap=400, **kw)
    ratio = asym.contributions["esl_std_error"] / boot.contributions["esl_std_error"]
    # the bootstrap SD of 400 replicates has a relative error of about 3.5%
    assert ratio.between(0.85, 1.15).all(), ratio


# ------------------------------------------------------------------------ scorer
class OnX:
    def predict(self, X):
        return (X["x"].to_numpy() > 0).astype(int)


def test_scorer_weights_equal_repeated_rows_and_routing():
    rng = np.random.default_rng(16)
    n = 600
    X = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n)})
    y = (X.x + rng.normal(size=n) > 0).astype(int).to_numpy()
    w = rng.integers(1, 4, n)
    rep = np.repeat(np.arange(n), w)
    for units in ("metric", "esl"):
        scorer = make_esl_scorer(sensitive_features="g", metric="tpr", units=units)
        weighted = scorer(OnX(), X, y, sample_weight=w)
        repeated = scorer(OnX(), X.iloc[rep], y[rep])
        assert weighted == pytest.approx(repeated, rel=1e-10)
        res = group_esl(y, OnX().predict(X), sensitive_features=X.g, metric="tpr",
                        value="equal_surplus", sample_weight=w)
        by_group = res.metric_by_group if units == "metric" else res.esl_values
        assert weighted == pytest.approx(-(by_group.max() - by_group.min()), rel=1e-12)
        assert weighted != pytest.approx(scorer(OnX(), X, y), rel=1e-6)


class WeightedLR(WeightedMidpoint):
    def __init__(self, shift=0.0):
        self.shift = shift

    def predict(self, X):
        return (np.asarray(X, float).sum(axis=1) > self.threshold_ + self.shift).astype(int)


def test_scorer_receives_routed_sample_weight_in_gridsearch():
    rng = np.random.default_rng(17)
    n = 600
    X = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    sex = rng.choice(["F", "M"], n)
    y = (X.x + rng.normal(size=n) > 0).astype(int).to_numpy()
    w = rng.integers(1, 4, n).astype(float)
    with config_context(enable_metadata_routing=True):
        scorer = make_esl_scorer(metric="tpr").set_score_request(
            sensitive_features=True, sample_weight=True)
        search = GridSearchCV(WeightedLR().set_fit_request(sample_weight=False),
                              {"shift": [0.0, 0.5]}, cv=3, scoring=scorer)
        search.fit(X, y, sensitive_features=sex, sample_weight=w)
    from sklearn.model_selection import StratifiedKFold

    manual = []
    for tr, te in StratifiedKFold(3).split(X, y):
        model = WeightedLR(shift=0.0).fit(X.iloc[tr], y[tr])
        res = group_esl(y[te], model.predict(X.iloc[te]), sensitive_features=sex[te],
                        metric="tpr", sample_weight=w[te])
        manual.append(-abs(res.metric_difference))
    assert search.cv_results_["mean_test_score"][0] == pytest.approx(np.mean(manual))
