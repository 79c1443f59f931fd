"""Credible intervals of the verifier (issue 16): posterior draws of the network.

The truth is a small known network (brute-force enumeration of its rates); data are
sampled from it, the verifier learns its network and reports 95% credible intervals of
the group rates and of the metrics, whose frequentist coverage over repetitions must
be near 95%.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from skfairverify import FairnessVerifier
from skfairverify.s3p import BayesNet
from skfairverify.verification._intervals import credible_bounds, draw_metric_intervals
from skfairverify.verification._learning import EQUIVALENT_SAMPLE_SIZE
from skfairverify.verification._parameters import estimate_cpts

# a -> x, (a, x) -> z; the decision reads x and z.
P_A = np.array([0.7, 0.3])
P_X = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
P_Z = np.array([[[0.6, 0.4], [0.4, 0.6], [0.3, 0.7]],
                [[0.5, 0.5], [0.3, 0.7], [0.1, 0.9]]])


def _decide(x, z):
    return (np.asarray(x) + 1.5 * np.asarray(z) >= 2).astype(int)


def _truth() -> np.ndarray:
    """``Pr[Yhat = 1 | A = a]`` by enumeration of the known network."""
    return np.array([
        sum(P_X[a, x] * P_Z[a, x, z] * _decide(x, z) for x in range(3) for z in range(2))
        for a in range(2)
    ])


def _sample(n, rng) -> pd.DataFrame:
    a = (rng.random(n) < P_A[1]).astype(int)
    x = (rng.random(n)[:, None] > P_X[a].cumsum(1)).sum(1)
    z = (rng.random(n) < P_Z[a, x, 1]).astype(int)
    return pd.DataFrame({"a": a, "x": x, "z": z})


@pytest.fixture(scope="module")
def model():
    """A linear model that decides exactly as ``_decide`` on every state."""
    big = _sample(5000, np.random.default_rng(0))
    lr = LogisticRegression(C=100).fit(big[["x", "z"]], _decide(big.x, big.z))
    states = pd.DataFrame({"x": np.repeat(range(3), 2), "z": np.tile(range(2), 3)})
    assert (lr.predict(states) == _decide(states.x, states.z)).all()
    return lr


def test_truth_by_enumeration():
    np.testing.assert_allclose(_truth(), [0.38, 0.71])


@pytest.mark.slow
def test_credible_intervals_cover_the_truth(model):
    """95% intervals of both group rates and of SP cover the enumerated truth ~95%.

    200 repetitions of 300 rows: the binomial standard error of a 95% coverage is
    0.015, so the band [0.91, 0.99] is ~2.7 standard errors wide on each side.
    Measured (300 repetitions, 50 draws): 0.957 / 0.943 (rates), 0.960 (SP).
    """
    truth = _truth()
    rng = np.random.default_rng(1)
    reps = 200
    hits, sp_hits = np.zeros(2), 0
    for r in range(reps):
        ver = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, multiplier=100,
                               random_state=r).fit(_sample(300, rng))
        g = ver.groups_
        hits += (g["ci_low"] <= truth) & (truth <= g["ci_high"])
        low, high = ver.metric_intervals_["statistical_parity"]
        sp_hits += low <= truth[1] - truth[0] <= high
    assert ver.agreement_ == 1.0
    assert np.all((0.91 <= hits / reps) & (hits / reps <= 0.99)), hits / reps
    assert 0.91 <= sp_hits / reps <= 0.995, sp_hits / reps


def test_intervals_on_the_linear_path(model):
    X = _sample(400, np.random.default_rng(2))
    y = pd.Series(_decide(X.x, X.z) ^ (np.random.default_rng(3).random(400) < 0.2))
    ver = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, multiplier=100,
                           n_draws=60, random_state=0).fit(X, y)
    g = ver.groups_
    assert g.columns.tolist()[:5] == ["a", "positive_rate", "support", "ci_low", "ci_high"]
    assert (g["ci_low"] < g["positive_rate"]).all() and (g["positive_rate"] < g["ci_high"]).all()
    assert set(ver.metric_intervals_) == set(ver.metrics_)
    for name, (low, high) in ver.metric_intervals_.items():
        assert low < high, name
    # same random_state: the same intervals; another seed: others
    again = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, multiplier=100,
                             n_draws=60, random_state=0).fit(X, y)
    pd.testing.assert_frame_equal(again.groups_, g)
    other = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, multiplier=100,
                             n_draws=60, random_state=1).fit(X, y)
    assert not np.allclose(other.groups_["ci_low"], g["ci_low"])
    # verify on the same rows with the same seed: the same intervals
    res = ver.verify(X, y)
    pd.testing.assert_frame_equal(res.groups, g)
    assert res.metric_intervals == ver.metric_intervals_


def test_more_rows_narrower_intervals(model):
    widths = []
    for n in (200, 3200):
        ver = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, multiplier=100,
                               n_draws=60, random_state=0).fit(
            _sample(n, np.random.default_rng(n)))
        widths.append((ver.groups_["ci_high"] - ver.groups_["ci_low"]).to_numpy())
    # the posterior sd shrinks as 1 / sqrt(n): 16x the rows, about a quarter the width
    ratio = widths[1] / widths[0]
    assert np.all((0.15 < ratio) & (ratio < 0.4)), ratio


def test_tree_path_intervals_cover_the_truth():
    rng = np.random.default_rng(4)
    big = _sample(5000, rng)
    tree = DecisionTreeClassifier(max_depth=3).fit(big[["x", "z"]], _decide(big.x, big.z))
    truth, hits, reps = _truth(), np.zeros(2), 40
    for r in range(reps):
        ver = FairnessVerifier(FrozenEstimator(tree), "a", n_draws=50,
                               random_state=r).fit(_sample(300, rng))
        assert ver.method_ == "exact" and ver.rule_ is None
        g = ver.groups_
        hits += (g["ci_low"] <= truth) & (truth <= g["ci_high"])
    # 40 repetitions at 95%: at most 5 misses per group happen with probability 0.99
    assert np.all(hits >= reps - 5), hits


def test_n_draws_zero_gives_point_intervals(model):
    X = _sample(300, np.random.default_rng(5))
    ver = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, n_draws=0).fit(X)
    g = ver.groups_
    assert (g["ci_low"] == g["positive_rate"]).all() and (g["ci_high"] == g["positive_rate"]).all()
    for name, value in ver.metrics_.items():
        assert ver.metric_intervals_[name] == (value, value)


def test_user_network_has_point_intervals(model):
    net = BayesNet([2, 3, 2], [(), (0,), (0, 1)], [P_A, P_X, P_Z],
                   names=["a", "x", "z"], state_names=[[0, 1], [0, 1, 2], [0, 1]])
    X = _sample(300, np.random.default_rng(6))
    ver = FairnessVerifier(FrozenEstimator(model), "a", network=net, multiplier=100).fit(X)
    np.testing.assert_allclose(ver.groups_["positive_rate"], _truth(), atol=1e-12)
    assert (ver.groups_["ci_low"] == ver.groups_["positive_rate"]).all()


def test_too_few_draws_refused_before_fitting(model):
    X = _sample(100, np.random.default_rng(7))
    with pytest.raises(ValueError, match=r"n_draws=10 .* credible_level=0.95 .* at least 40"):
        FairnessVerifier(FrozenEstimator(model), "a", n_draws=10).fit(X)
    FairnessVerifier(FrozenEstimator(model), "a", n_draws=10, credible_level=0.5,
                     n_bins=10).fit(X)


@pytest.mark.parametrize("param, value", [("n_draws", -1), ("credible_level", 1.0),
                                          ("prior", "flat")])
def test_bad_parameters(model, param, value):
    X = _sample(100, np.random.default_rng(8))
    with pytest.raises(ValueError, match=param):
        FairnessVerifier(FrozenEstimator(model), "a", **{param: value}).fit(X)


# ----------------------------------------------------------------- the metrics' rule


def test_metric_intervals_are_quantiles_of_the_metric_per_draw():
    """Each metric is computed on each draw, then its equal-tailed quantiles taken."""
    rng = np.random.default_rng(9)
    pos = rng.uniform(0.1, 0.9, (400, 3))
    tpr = rng.uniform(0.1, 0.9, (400, 3))
    fpr = rng.uniform(0.1, 0.9, (400, 3))
    fpr[:, 1] = np.nan  # a group without negative rows
    out = draw_metric_intervals(
        {"positive_rate": pos, "true_positive_rate": tpr, "false_positive_rate": fpr,
         "path_specific_rate": pos[:, ::-1]},
        ["disparate_impact", "statistical_parity", "equalized_odds",
         "path_specific_causal"], 0.9)

    def q(values):
        return tuple(np.quantile(values, [0.05, 0.95], method="weibull"))

    sp = pos.max(1) - pos.min(1)
    eo = np.maximum(tpr.max(1) - tpr.min(1),
                    np.nanmax(fpr, 1) - np.nanmin(fpr, 1))
    np.testing.assert_allclose(out["statistical_parity"], q(sp))
    np.testing.assert_allclose(out["disparate_impact"], q(pos.min(1) / pos.max(1)))
    np.testing.assert_allclose(out["equalized_odds"], q(eo))
    np.testing.assert_allclose(out["path_specific_causal"], q(sp))


def test_credible_bounds_keep_groups_without_a_rate():
    draws = np.column_stack([np.linspace(0, 1, 101), np.full(101, np.nan)])
    low, high = credible_bounds(draws, 0.9)
    assert low[0] == pytest.approx(0.041) and high[0] == pytest.approx(0.959)
    assert np.isnan(low[1]) and np.isnan(high[1])


# ---------------------------------------------------------------------- the prior


def test_hierarchical_prior_reestimates_the_learned_structure(rebuilt):
    rng = np.random.default_rng(10)
    n = 600
    a1 = (rng.random(n) < 0.5).astype(int)
    a2 = (rng.random(n) < 0.08).astype(int)
    x = rng.normal(a1 + a2, 1.0)
    X = pd.DataFrame({"a1": a1, "a2": a2, "x": x})
    lr = LogisticRegression().fit(X[["x"]], (x > 1).astype(int))
    params = dict(n_bins=5, multiplier=100, random_state=0, n_draws=50)
    bdeu = FairnessVerifier(FrozenEstimator(lr), ["a1", "a2"], prior="bdeu",
                            **params).fit(X)
    hier = FairnessVerifier(FrozenEstimator(lr), ["a1", "a2"], prior="hierarchical",
                            **params).fit(X)
    net = hier.network_
    assert net.parents == bdeu.network_.parents
    codes = rebuilt(hier, X, evaluate=False).encoding.codes(X)
    sens_idx = [hier.variables_.index(s) for s in hier.sensitive_features_]
    expected = estimate_cpts(codes, net.cardinalities, net.parents, sens_idx,
                             equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
                             prior="hierarchical")
    for got, want in zip(net.cpts, expected):
        np.testing.assert_allclose(got, want, atol=1e-12)
    # the smallest intersection (a1=1, a2=1: ~24 rows) borrows strength: its rate moves
    assert not np.allclose(hier.groups_["positive_rate"], bdeu.groups_["positive_rate"])
    g = hier.groups_
    assert ((g["ci_low"] <= g["positive_rate"]) & (g["positive_rate"] <= g["ci_high"])).all()


# ---------------------------------------------------------------------- the scorer


@pytest.mark.parametrize("metric", ["statistical_parity", "disparate_impact"])
def test_pessimistic_scorer_returns_the_worst_end(model, metric):
    from skfairverify.metrics import make_verifier_scorer

    X = _sample(400, np.random.default_rng(11))
    params = dict(n_bins=10, multiplier=100, random_state=0)
    ver = FairnessVerifier(FrozenEstimator(model), "a", **params).fit(X)
    for rate, values, intervals in (
            ("network", ver.metrics_, ver.metric_intervals_),
            ("population", ver.population_metrics_, ver.population_metric_intervals_)):
        worst = make_verifier_scorer(sensitive_features="a", metric=metric, rate=rate,
                                     bound="pessimistic", **params)(model, X, None)
        point = make_verifier_scorer(sensitive_features="a", metric=metric, rate=rate,
                                     **params)(model, X, None)
        low, high = intervals[metric]
        value = values[metric]
        if metric == "disparate_impact":  # greater is better: the lower end
            assert worst == pytest.approx(low) and point == pytest.approx(value)
        else:  # minus the gap: minus the upper end
            assert worst == pytest.approx(-high) and point == pytest.approx(-value)
        assert worst < point


def test_pessimistic_scorer_needs_draws():
    from skfairverify.metrics import make_verifier_scorer

    with pytest.raises(ValueError, match="bound='pessimistic' with n_draws=0"):
        make_verifier_scorer(sensitive_features="a", bound="pessimistic", n_draws=0,
                             rate="network")
    with pytest.raises(ValueError, match="bound='pessimistic' with n_bootstrap=0"):
        make_verifier_scorer(sensitive_features="a", bound="pessimistic", n_bootstrap=0)
    with pytest.raises(ValueError, match="no population estimate"):
        make_verifier_scorer(sensitive_features="a", metric="path_specific_causal",
                             mediators=["x"], rate="population")
    with pytest.raises(ValueError, match="rate must be one of"):
        make_verifier_scorer(sensitive_features="a", rate="sample")
    with pytest.raises(ValueError, match="bound must be one of"):
        make_verifier_scorer(sensitive_features="a", bound="upper")


def test_hierarchical_prior_equals_bdeu_with_one_sensitive_feature(model):
    """Only tables with two or more sensitive parents are shrunk: FVGM's one-attribute
    setting (its Section 4.2 benchmark) is unchanged, intervals included."""
    X = _sample(400, np.random.default_rng(12))
    params = dict(n_bins=10, multiplier=100, random_state=0)
    bdeu = FairnessVerifier(FrozenEstimator(model), "a", prior="bdeu", **params).fit(X)
    hier = FairnessVerifier(FrozenEstimator(model), "a", prior="hierarchical",
                            **params).fit(X)
    pd.testing.assert_frame_equal(hier.groups_, bdeu.groups_)
    assert hier.metric_intervals_ == bdeu.metric_intervals_


def test_audit_records_what_the_intervals_are(model):
    from skfairverify.audit._run import AUDIT_TOLERANCE, _interval_note

    X = _sample(300, np.random.default_rng(13))
    exact = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, random_state=0).fit(X)
    note = _interval_note(exact)
    assert note["kind"].startswith("credible") and note["level"] == 0.95
    assert note["n_draws"] == 50
    point = FairnessVerifier(FrozenEstimator(model), "a", n_bins=10, n_draws=0).fit(X)
    assert _interval_note(point)["level"] is None
    sampled = FairnessVerifier(FrozenEstimator(model), method="sampling", tolerance=0.05,
                               random_state=0).fit(X[["x", "z"]], sensitive_features=X["a"])
    note = _interval_note(sampled)  # the default draws, each sampled: both sources
    assert note["kind"].startswith("credible + Monte Carlo") and note["tolerance"] == 0.05
    assert note["level"] == sampled.credible_level and note["confidence"] == 0.99
    mc_only = FairnessVerifier(FrozenEstimator(model), method="sampling", tolerance=0.05,
                               n_draws=0, random_state=0)
    note = _interval_note(mc_only.fit(X[["x", "z"]], sensitive_features=X["a"]))
    assert note["kind"].startswith("confidence") and note["level"] == 0.99
    assert AUDIT_TOLERANCE == 0.02
