"""sample_weight in FairnessVerifier.fit / verify and the verifier scorer.

The reference is the same data with every row repeated ``w`` times: integer weights
must give the same groups, metrics, bins, weights and network as the repeated rows
(the counts are the same), and a weight of 0 the same as dropping the row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfairverify import FairnessVerifier
from skfairverify.metrics import make_verifier_scorer
from skfairverify.verification import FairnessInfluenceResult, VerificationResult, _draw_rule


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    s = rng.choice(["f", "m"], n)
    x0 = rng.normal(a, 1.0)
    x1 = x0 + rng.normal(0, 0.5, n)  # depends on x0: the search adds an edge
    k = rng.integers(0, 4, n)
    X = pd.DataFrame({"a": a, "s": s, "x0": x0, "x1": x1, "k": k})
    y = (x0 + 0.5 * x1 + 0.3 * k + rng.normal(0, 1, n) > 1.0).astype(int)
    return X, y


def _frozen(X, y):
    from sklearn.compose import make_column_transformer

    pipe = make_pipeline(
        make_column_transformer(("passthrough", ["a", "x0", "x1", "k"])), LogisticRegression()
    ).fit(X, y)
    return FrozenEstimator(pipe)


def _repeat(X, y, w):
    rows = np.repeat(np.arange(len(X)), w)
    return X.iloc[rows].reset_index(drop=True), y[rows]


#: Columns of the population estimate, which reads the weights as sampling weights (its
#: precision is Kish's effective rows): weights that count repeated rows give other
#: (wider) intervals than the repeated rows, while the direct rates are equal.
SAMPLING_WEIGHT_COLUMNS = {"population_rate", "population_ci_low", "population_ci_high",
                           "model_check_pvalue", "population_true_positive_rate",
                           "population_false_positive_rate"}


def _assert_same(a: FairnessVerifier, b: FairnessVerifier, repeated: bool = False):
    skip = {"support"} | (SAMPLING_WEIGHT_COLUMNS if repeated else set())
    cols = [c for c in a.groups_.columns if c not in skip]
    pd.testing.assert_frame_equal(a.groups_[cols], b.groups_[cols], rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.groups_["support"].to_numpy(dtype=float),
                               b.groups_["support"].to_numpy(dtype=float), rtol=0, atol=1e-9)
    assert a.metrics_.keys() == b.metrics_.keys()
    for key, value in a.metrics_.items():
        assert value == pytest.approx(b.metrics_[key], abs=1e-9), key
    assert a.most_favored_group_ == b.most_favored_group_
    assert a.least_favored_group_ == b.least_favored_group_
    assert a.multiplier_ == b.multiplier_ and a.threshold_ == b.threshold_
    assert a.agreement_ == pytest.approx(b.agreement_, abs=1e-12)
    assert a.decision_scale_ == pytest.approx(b.decision_scale_, rel=1e-12)
    for name in a.variables_:
        pd.testing.assert_series_equal(a.weights_[name], b.weights_[name])
    assert a.network_.parents == b.network_.parents
    for p, q in zip(a.network_.cpts, b.network_.cpts):
        np.testing.assert_allclose(p, q, rtol=0, atol=1e-12)


@pytest.mark.parametrize("network", ["learn", "independent"])
def test_integer_weights_equal_repeated_rows(network, monkeypatch):
    """The draws on the verified rule: the same draws (see below for the coarser rule)."""
    X, y = _data()
    w = np.random.default_rng(1).integers(1, 4, len(X))
    # the same random_state: the posterior draws see the same (weighted) counts
    params = dict(network=network, n_bins=8, multiplier=100, mediators=["x1"],
                  random_state=0)
    model = _frozen(X, y)
    Xr, yr = _repeat(X, y, w)
    monkeypatch.setattr(_draw_rule, "DRAW_RULE_TOLERANCE", 0.0)
    weighted = FairnessVerifier(model, ["a", "s"], **params).fit(X, y, sample_weight=w)
    repeated = FairnessVerifier(model, ["a", "s"], **params).fit(Xr, yr)
    _assert_same(weighted, repeated, repeated=True)
    assert {"equalized_odds", "path_specific_causal"} <= set(weighted.metrics_)
    # the support is the sum of the weights of the group's rows
    sums = pd.Series(w).groupby([X["a"], X["s"]]).sum()
    for _, row in weighted.groups_.iterrows():
        assert row["support"] == sums.loc[(row["a"], row["s"])]
    if network == "learn":  # the weighted K2 search found the dependence x0 - x1
        names = weighted.network_.names
        pa = {names[i]: {names[p] for p in weighted.network_.parents[i]}
              for i in range(len(names))}
        assert "x0" in pa["x1"] or "x1" in pa["x0"]


def test_integer_weights_draw_rule_reads_sampling_weights():
    """At the default tolerance the draws' rule allows one row of slack, a row being one
    of the group's effective rows (Kish's ``(sum w)**2 / sum w**2``, as the population
    estimate reads the weights): weights of 1-3 make fewer effective rows than the
    repeated rows, so the weighted fit may take a coarser rule for its draws. Its
    intervals then differ from the repeated rows' by the rule's error, within tolerance,
    and every other number is the same."""
    X, y = _data()
    w = np.random.default_rng(1).integers(1, 4, len(X))
    params = dict(n_bins=8, multiplier=100, mediators=["x1"], random_state=0)
    model = _frozen(X, y)
    weighted = FairnessVerifier(model, ["a", "s"], **params).fit(X, y, sample_weight=w)
    repeated = FairnessVerifier(model, ["a", "s"], **params).fit(*_repeat(X, y, w))
    skip = {"support", "ci_low", "ci_high"} | SAMPLING_WEIGHT_COLUMNS
    cols = [c for c in weighted.groups_.columns if c not in skip]
    pd.testing.assert_frame_equal(weighted.groups_[cols], repeated.groups_[cols], rtol=0,
                                  atol=1e-9)
    width = (repeated.groups_["ci_high"] - repeated.groups_["ci_low"]).to_numpy()
    for c in ("ci_low", "ci_high"):
        moved = np.abs(weighted.groups_[c] - repeated.groups_[c]).to_numpy()
        assert np.all(moved <= 0.1 * width), c


def test_zero_weights_equal_dropping_rows():
    X, y = _data(seed=3)
    rng = np.random.default_rng(4)
    w = rng.integers(0, 3, len(X)).astype(float)
    keep = w > 0
    params = dict(n_bins=10, multiplier=50, random_state=0)
    est = make_pipeline(StandardScaler(), LogisticRegression())
    cols = ["a", "x0", "x1", "k"]
    weighted = FairnessVerifier(est, "a", **params).fit(X[cols], y, sample_weight=w)
    dropped = FairnessVerifier(est, "a", **params).fit(
        X[cols][keep], y[keep], sample_weight=w[keep]
    )
    _assert_same(weighted, dropped)
    # verify: zero weights are dropped rows too
    v0 = weighted.verify(X[cols], y, sample_weight=w)
    v1 = weighted.verify(X[cols][keep], y[keep], sample_weight=w[keep])
    pd.testing.assert_frame_equal(v0.groups, v1.groups)
    assert v0.metrics == v1.metrics and v0.agreement == v1.agreement


def test_verify_integer_weights_equal_repeated_rows(monkeypatch):
    """On the verified rule for the draws (the coarser rule's slack reads the weights as
    sampling weights: ``test_integer_weights_draw_rule_reads_sampling_weights``)."""
    monkeypatch.setattr(_draw_rule, "DRAW_RULE_TOLERANCE", 0.0)
    X, y = _data(seed=5)
    test, y_test = _data(n=300, seed=6)
    w = np.random.default_rng(7).integers(1, 5, len(test))
    ver = FairnessVerifier(_frozen(X, y), ["a", "s"], n_bins=8, multiplier=100,
                           random_state=0).fit(X, y)
    weighted = ver.verify(test, y_test, sample_weight=w)
    Xr, yr = _repeat(test, y_test, w)
    repeated = ver.verify(Xr, yr)
    assert isinstance(weighted, VerificationResult)
    cols = [c for c in weighted.groups.columns
            if c not in {"support"} | SAMPLING_WEIGHT_COLUMNS]
    assert "direct_rate" in cols
    pd.testing.assert_frame_equal(weighted.groups[cols], repeated.groups[cols], rtol=0,
                                  atol=1e-9)
    np.testing.assert_allclose(weighted.groups["support"], repeated.groups["support"])
    for key, value in weighted.metrics.items():
        assert value == pytest.approx(repeated.metrics[key], abs=1e-9)
    assert weighted.agreement == pytest.approx(repeated.agreement, abs=1e-12)
    assert weighted.most_favored_group == repeated.most_favored_group
    # weights change the numbers (they are used)
    unweighted = ver.verify(test, y_test)
    assert unweighted.groups["support"].sum() == len(test)
    assert weighted.groups["support"].sum() == w.sum()
    assert weighted.metrics["statistical_parity"] != unweighted.metrics["statistical_parity"]


def test_estimator_is_fitted_with_the_weights():
    X, y = _data(seed=8)
    w = np.random.default_rng(9).uniform(0.2, 3.0, len(X))
    cols = ["a", "x0", "x1", "k"]
    ver = FairnessVerifier(LogisticRegression(), "a", n_bins=5, multiplier=20).fit(
        X[cols], y, sample_weight=w)
    ref = LogisticRegression().fit(X[cols], y, sample_weight=w)
    np.testing.assert_allclose(ver.estimator_.coef_, ref.coef_)
    # a pipeline: the weights go to its last step
    pipe = FairnessVerifier(make_pipeline(StandardScaler(), LogisticRegression()), "a",
                            n_bins=5, multiplier=20).fit(X[cols], y, sample_weight=w)
    ref = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        X[cols], y, logisticregression__sample_weight=w)
    np.testing.assert_allclose(pipe.estimator_[-1].coef_, ref[-1].coef_)
    # the weighted decision scale: sqrt(sum w d^2 / sum w)
    d = ver.rule_.decision_function(X[cols])
    assert ver.decision_scale_ == pytest.approx(np.sqrt(np.sum(w * d**2) / w.sum()))


def test_estimator_without_sample_weight_is_refused():
    from sklearn.neighbors import KNeighborsClassifier

    X, y = _data(n=100)
    with pytest.raises(TypeError, match="cannot be used to fit.*FrozenEstimator"):
        FairnessVerifier(KNeighborsClassifier(), "a").fit(X[["a", "x0"]], y,
                                                          sample_weight=np.ones(100))


@pytest.mark.parametrize("bad, match", [
    (-np.ones(200), "(?i)negative"),
    (np.ones(199), "one weight per row"),
    (np.zeros(200), "non-zero|sums to 0"),
    (np.r_[np.nan, np.ones(199)], "NaN|infinite"),
])
def test_bad_weights_are_refused(bad, match):
    X, y = _data(n=200)
    with pytest.raises(ValueError, match=match):
        FairnessVerifier(LogisticRegression(), "a", n_bins=5).fit(X[["a", "x0"]], y,
                                                                  sample_weight=bad)


def test_auto_quantization_with_weights():
    """The automatic choice runs on weighted rows (Kish size for its noise level)."""
    X, y = _data(seed=10)
    w = np.random.default_rng(11).uniform(0.5, 2.0, len(X))
    ver = FairnessVerifier(_frozen(X, y), "a", network="independent", max_bins=20,
                           max_multiplier=100, random_state=0).fit(X, y, sample_weight=w)
    assert ver.n_bins_ in (5, 10, 20) and ver.multiplier_ in (1, 2, 5, 10, 20, 50, 100)
    assert 0.9 <= ver.agreement_ <= 1.0


def test_scorer_with_integer_weights_equals_repeated_rows():
    X, y = _data(seed=12)
    w = np.random.default_rng(13).integers(1, 4, len(X))
    model = _frozen(X, y)
    Xr, yr = _repeat(X, y, w)
    for metric in ("statistical_parity", "disparate_impact", "equalized_odds"):
        # the network's metrics: the population estimate reads the weights as sampling
        # weights (SAMPLING_WEIGHT_COLUMNS)
        scorer = make_verifier_scorer(sensitive_features=["a", "s"], metric=metric,
                                      n_bins=8, multiplier=100, rate="network")
        assert scorer(model, X, y, sample_weight=w) == pytest.approx(
            scorer(model, Xr, yr), abs=1e-9)
    # and the weights matter
    scorer = make_verifier_scorer(sensitive_features="a", n_bins=8, multiplier=100)
    assert scorer(model, X, y, sample_weight=w) != scorer(model, X, y)


def test_scorer_metadata_route_with_weights():
    import sklearn

    X, y = _data(seed=14)
    w = np.random.default_rng(15).integers(1, 4, len(X))
    model = _frozen(X, y)
    Xr, yr = _repeat(X, y, w)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_verifier_scorer(metric="statistical_parity", n_bins=8,
                                      multiplier=100, rate="network").set_score_request(
            sensitive_features=True, sample_weight=True)
        got = scorer(model, X, y, sensitive_features=X["a"].to_numpy(), sample_weight=w)
        ref = scorer(model, Xr, yr, sensitive_features=Xr["a"].to_numpy())
    assert got == pytest.approx(ref, abs=1e-9)


def test_results_and_sensitive_features_():
    X, y = _data(n=400, seed=16)
    ver = FairnessVerifier(_frozen(X, y), ["a", "s"], network="independent", n_bins=5,
                           multiplier=20, random_state=0).fit(X, y)
    assert ver.sensitive_features_ == ["a", "s"]
    res = ver.verify(X, y)
    pd.testing.assert_frame_equal(res.to_frame(), ver.groups_)
    assert res.metrics == ver.metrics_
    assert res.most_favored_group == ver.most_favored_group_
    assert res.least_favored_group == ver.least_favored_group_
    assert res.agreement == pytest.approx(ver.agreement_)
    assert repr(res).startswith("VerificationResult(4 groups; population: disparate_impact=")
    assert "; under the network: disparate_impact=" in repr(res)
    assert "<table" in res._repr_html_()
    fif = ver.fairness_influence(reference="states")
    assert isinstance(fif, FairnessInfluenceResult) and fif.reference == "states"
    assert fif.to_frame() is fif.table
    assert fif.table.index.tolist() == ["x0", "x1", "k"]
    assert repr(fif) == ("FairnessInfluenceResult(3 features x 4 groups; reference='states'; "
                         "95% credible interval (posterior of the network, 50 draws))")


def test_unit_weights_equal_no_weights():
    X, y = _data(seed=17)
    params = dict(n_bins=8, multiplier=100, random_state=0)
    model = _frozen(X, y)
    plain = FairnessVerifier(model, ["a", "s"], **params).fit(X, y)
    unit = FairnessVerifier(model, ["a", "s"], **params).fit(X, y, sample_weight=np.ones(len(X)))
    _assert_same(unit, plain)
    assert plain.groups_["support"].dtype == np.int64  # rows without weights


def test_scorer_receives_fold_weights_in_cross_validate():
    import sklearn
    from sklearn.model_selection import KFold, cross_validate

    X, y = _data(n=400, seed=18)
    w = np.random.default_rng(19).integers(1, 4, len(X)).astype(float)
    cols = ["a", "x0", "x1", "k"]
    cv = KFold(2)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_verifier_scorer(sensitive_features="a", n_bins=5, multiplier=50)
        scorer.set_score_request(sample_weight=True)
        model = LogisticRegression().set_fit_request(sample_weight=False)
        got = cross_validate(model, X[cols], y, cv=cv, scoring=scorer,
                             params={"sample_weight": w})["test_score"]
        expected = []
        for train, test in cv.split(X):
            fitted = LogisticRegression().fit(X[cols].iloc[train], y[train])
            expected.append(scorer(fitted, X[cols].iloc[test], y[test],
                                   sample_weight=w[test]))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    unweighted = make_verifier_scorer(sensitive_features="a", n_bins=5, multiplier=50)
    assert not np.allclose(got, cross_validate(LogisticRegression(), X[cols], y, cv=cv,
                                               scoring=unweighted)["test_score"])
