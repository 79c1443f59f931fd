"""Sampling path of FairnessVerifier: sampler, intervals, coverage, any classifier, errors.

The truth the intervals must contain is computed independently: the network learned by
the verifier (``network_``) is enumerated state by state (every variable discrete, so a
state is a value), and the model decides every combination (or gives its probability,
for fairlearn's randomized classifiers).
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils._param_validation import InvalidParameterError

from skfairverify import FairnessVerifier
from skfairverify.metrics import make_verifier_scorer
from skfairverify.s3p import BayesNet, TableTooLargeError
from skfairverify.utils._threads import cpu_seconds
from skfairverify.verification import SamplingToleranceWarning
from skfairverify.verification._intervals import (
    clopper_pearson,
    gap_interval,
    metric_intervals,
    per_interval_alpha,
    ratio_interval,
)
from skfairverify.verification._sampling import (
    NetworkSampler,
    SamplingCost,
    adaptive_rate,
    look_grid,
    samples_needed,
)

# --------------------------------------------------------------------------- helpers


def _joint(net: BayesNet) -> tuple[list[tuple], np.ndarray]:
    """Every joint state of ``net`` and its probability (brute-force enumeration)."""
    states = list(itertools.product(*[range(c) for c in net.cardinalities]))
    probs = np.array([
        np.prod([net.cpts[i][tuple(s[p] for p in net.parents[i]) + (s[i],)]
                 for i in range(net.n_variables)])
        for s in states
    ])
    return states, probs


def _enumerated_rates(ver, X, decide) -> np.ndarray:
    """``Pr[Yhat = 1 | A = a]`` of every group of ``groups_`` by enumeration.

    Every column of ``X`` is discrete (a state per sorted value), so a joint state of
    ``network_`` is a row of values; ``decide(rows, sensitive)`` gives the probability
    of a positive decision on each row.
    """
    names = ver.variables_
    values = {c: sorted(pd.unique(X[c])) for c in names}
    states, probs = _joint(ver.network_)
    rows = pd.DataFrame([[values[c][s[i]] for i, c in enumerate(names)] for s in states],
                        columns=names)
    for c in X.columns:
        rows[c] = rows[c].astype(X[c].dtype)
    positive = decide(rows[list(X.columns)], rows[ver.sensitive_features_])
    out = []
    for _, group in ver.groups_.iterrows():
        mask = np.ones(len(rows), dtype=bool)
        for s in ver.sensitive_features_:
            mask &= (rows[s] == group[s]).to_numpy()
        out.append(float(np.sum(probs[mask] * positive[mask]) / np.sum(probs[mask])))
    return np.array(out)


def _discrete_data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    x = np.clip(rng.binomial(4, 0.3 + 0.3 * a), 0, 4)
    z = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": a, "x": x, "z": z})
    y = ((x + 0.5 * z + rng.normal(0, 1, n)) > 2).astype(int)
    return X, y


def _predict(model):
    return lambda rows, sens: (model.predict(rows) == model.classes_[1]).astype(float)


# --------------------------------------------------------------------------- sampler


def test_sampler_matches_enumeration():
    """Frequencies of the vectorised ancestral sampler equal the network's joint."""
    rng = np.random.default_rng(1)
    cards = [2, 3, 4]
    parents = [(), (0,), (0, 1)]
    cpts = [rng.dirichlet(np.ones(c), size=[cards[p] for p in pa]) if pa
            else rng.dirichlet(np.ones(c)) for c, pa in zip(cards, parents)]
    net = BayesNet(cards, parents, cpts)
    states, probs = _joint(net)
    n = 200_000
    codes = NetworkSampler(net).sample(n, np.random.default_rng(0))
    flat = np.ravel_multi_index(codes.T, cards)
    freq = np.bincount(flat, minlength=len(states)) / n
    expected = np.array([probs[states.index(tuple(np.unravel_index(i, cards)))]
                         for i in range(len(states))])
    assert np.all(np.abs(freq - expected) <= 5 * np.sqrt(expected * (1 - expected) / n) + 1e-4)
    # Setting the root: the conditional distribution of the others given A = 1.
    fixed = NetworkSampler(net).sample(n, np.random.default_rng(2), {0: 1})
    assert np.all(fixed[:, 0] == 1)
    cond = probs.reshape(cards)[1].sum(axis=1) / probs.reshape(cards)[1].sum()
    freq1 = np.bincount(fixed[:, 1], minlength=3) / n
    assert np.allclose(freq1, cond, atol=5 * np.sqrt(0.25 / n))


def test_sampler_refuses_to_set_a_variable_with_parents():
    net = BayesNet([2, 2], [(), (0,)], [np.array([0.5, 0.5]), np.full((2, 2), 0.5)])
    with pytest.raises(ValueError, match="has parents that are not set"):
        NetworkSampler(net).sample(10, np.random.default_rng(0), {1: 0})


def test_sampler_sets_a_variable_whose_parents_are_set():
    """A -> B -> C, A and B set: C follows its table's row of B (the enumerated
    conditional), as conditioning on B given A would give."""
    c = np.array([[0.9, 0.1], [0.3, 0.7]])
    net = BayesNet([2, 2, 2], [(), (0,), (1,)],
                   [np.array([0.5, 0.5]), np.array([[0.8, 0.2], [0.4, 0.6]]), c])
    n = 40_000
    codes = NetworkSampler(net).sample(n, np.random.default_rng(0), {0: 0, 1: 1})
    assert np.all(codes[:, :2] == [0, 1])
    assert abs(codes[:, 2].mean() - c[1, 1]) <= 5 * np.sqrt(0.21 / n)


def test_sampler_never_draws_impossible_states():
    net = BayesNet([3], [()], [np.array([0.0, 1.0, 0.0])])
    codes = NetworkSampler(net).sample(10_000, np.random.default_rng(0))
    assert np.all(codes == 1)


# --------------------------------------------------------------------------- intervals


def test_clopper_pearson_coverage_monte_carlo():
    """Coverage of the Clopper-Pearson interval >= 1 - alpha at every p (simulated)."""
    alpha, n, reps = 0.1, 60, 4000
    rng = np.random.default_rng(0)
    for p in (0.02, 0.1, 0.3, 0.5, 0.8, 0.97):
        k = rng.binomial(n, p, size=reps)
        low, high = clopper_pearson(k, n, alpha)
        coverage = np.mean((low <= p) & (p <= high))
        assert coverage >= 1 - alpha - 3 * np.sqrt(alpha * (1 - alpha) / reps)


def test_clopper_pearson_closed_form_edges():
    # k = 0: the upper bound solves (1 - p)^n = alpha / 2.
    low, high = clopper_pearson(0, 20, 0.05)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 20))
    low, high = clopper_pearson(20, 20, 0.05)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 20))
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(3, 2, 0.05)


def test_adaptive_rate_coverage_under_optional_stopping():
    """The adaptive sampler's interval keeps its level whatever size it stops at."""
    alpha_joint, reps = 0.2, 300
    grid = look_grid(64_000)
    alpha = per_interval_alpha(1 - alpha_joint, 1, len(grid))
    misses = 0
    for seed in range(reps):
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.05, 0.95)
        est = adaptive_rate(lambda n, rng=rng, p=p: int(rng.binomial(n, p)),
                            tolerance=0.05, alpha=alpha, grid=grid, batch=5000)
        misses += not (est.low <= p <= est.high)
        assert est.converged and est.high - est.low < 0.05
    assert misses <= binom.ppf(0.999, reps, alpha_joint)


def test_adaptive_rate_stops_at_the_budget():
    rng = np.random.default_rng(0)
    est = adaptive_rate(lambda n: int(rng.binomial(n, 0.5)), tolerance=1e-4, alpha=0.01,
                        grid=look_grid(3000), batch=1000)
    assert est.samples == 3000 and not est.converged


def test_metric_intervals_contain_every_metric_of_the_boxes():
    """Interval arithmetic: the metric of any rates within the bounds lies inside."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        low = rng.uniform(0, 0.8, 3)
        high = low + rng.uniform(0, 0.2, 3)
        lo_gap, hi_gap = gap_interval(low, high)
        lo_di, hi_di = ratio_interval(low, high)
        points = rng.uniform(low, high, size=(500, 3))
        corners = np.array(list(itertools.product(*zip(low, high))))
        for p in np.vstack([points, corners]):
            gap = p.max() - p.min()
            di = p.min() / p.max() if p.max() > 0 else 1.0
            assert lo_gap - 1e-12 <= gap <= hi_gap + 1e-12
            assert lo_di - 1e-12 <= di <= hi_di + 1e-12
        # The outer bounds are attained at a corner of the box (tight).
        assert hi_gap == pytest.approx(np.ptp(corners, axis=1).max())
        assert lo_di == pytest.approx((corners.min(axis=1) / corners.max(axis=1)).min())
    bounds = {"positive_rate": ([0.1, 0.5], [0.2, 0.6]),
              "true_positive_rate": ([0.1, np.nan], [0.3, np.nan]),
              "false_positive_rate": ([0.1, 0.2], [0.2, 0.3])}
    out = metric_intervals(bounds, ["equalized_odds", "statistical_parity"])
    assert out["equalized_odds"] == pytest.approx((0.0, 0.2))
    assert out["statistical_parity"] == pytest.approx((0.3, 0.5))


# --------------------------------------------------------------------------- coverage


def test_sampling_equals_exact_on_a_linear_model_and_covers_it():
    """Linear model on discrete columns: exact path == enumeration; sampling covers it.

    Every column has few values (one state per value), so the exact path's integer
    rule and the sampled model decide alike on every state; the exact rate is the
    truth. Over many seeds the joint 90% intervals of both groups contain it at least
    at the nominal rate.
    """
    X, y = _discrete_data()
    model = LogisticRegression().fit(X, y)
    common = dict(network="independent", n_bins=10, multiplier=1000)
    exact = FairnessVerifier(FrozenEstimator(model), "a", n_draws=0, **common).fit(X, y)
    assert exact.method_ == "exact" and exact.agreement_ == 1.0
    truth = _enumerated_rates(exact, X, _predict(model))
    np.testing.assert_allclose(exact.groups_["positive_rate"], truth, atol=1e-9)
    np.testing.assert_array_equal(exact.groups_["ci_low"], exact.groups_["positive_rate"])
    reps, misses = 100, 0
    for seed in range(reps):
        ver = FairnessVerifier(FrozenEstimator(model), "a", method="sampling",
                               tolerance=0.08, confidence=0.9, random_state=seed,
                               n_draws=0, **common).fit(X)
        g = ver.groups_
        misses += not np.all((g["ci_low"] <= truth) & (truth <= g["ci_high"]))
    assert ver.method_ == "sampling"
    np.testing.assert_allclose(_enumerated_rates(ver, X, _predict(model)), truth)
    assert misses <= binom.ppf(0.999, reps, 0.1)


def test_hist_gradient_boosting_interval_contains_enumerated_rate():
    X, y = _discrete_data(seed=1)
    X = X.assign(c=pd.Categorical(np.where(X["z"] == 1, "u", "v")))
    model = HistGradientBoostingClassifier(max_iter=15, categorical_features="from_dtype",
                                           random_state=0).fit(X, y)
    # n_draws=0: the Monte Carlo intervals of the rates under the learned network
    ver = FairnessVerifier(FrozenEstimator(model), "a", network="learn", tolerance=0.03,
                           n_draws=0, random_state=0).fit(X)
    assert ver.method_ == "sampling" and ver.agreement_ == 1.0
    truth = _enumerated_rates(ver, X, _predict(model))
    g = ver.groups_
    assert np.all((g["ci_low"] <= truth) & (truth <= g["ci_high"]))
    assert np.all(g["ci_high"] - g["ci_low"] < 0.03)
    lo, hi = ver.metric_intervals_["statistical_parity"]
    assert lo <= np.ptp(truth) <= hi
    assert lo <= ver.metrics_["statistical_parity"] <= hi
    assert set(ver.metric_intervals_) == set(ver.metrics_)
    assert ver.n_samples_ > 0 and ver.rule_ is None and ver.weights_ is None


def test_integer_weights_equal_repeated_rows_on_the_sampling_path():
    """Bins, network, within-bin draws and supports: weights w == rows repeated w times."""
    rng = np.random.default_rng(5)
    n = 600
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0), "z": rng.integers(0, 3, n)})
    y = ((X["x"] + rng.normal(0, 1, n)) > 0.5).astype(int)
    model = FrozenEstimator(HistGradientBoostingClassifier(max_iter=10,
                                                           random_state=0).fit(X, y))
    w = rng.integers(1, 4, n)
    kw = dict(network="independent", n_bins=8, tolerance=0.05, random_state=0)
    weighted = FairnessVerifier(model, "a", **kw).fit(X, y, sample_weight=w)
    repeated = FairnessVerifier(model, "a", **kw).fit(X.loc[X.index.repeat(w)],
                                                      np.repeat(y, w))
    # the population estimate reads weights as sampling weights (Kish's effective rows)
    population = [c for c in weighted.groups_ if c.startswith(("population_", "model_check"))]
    assert population
    pd.testing.assert_frame_equal(weighted.groups_.drop(columns=population),
                                  repeated.groups_.drop(columns=population), check_dtype=False)


def test_sampling_is_reproducible_with_random_state():
    X, y = _discrete_data()
    model = FrozenEstimator(LogisticRegression().fit(X, y))
    kw = dict(network="independent", method="sampling", tolerance=0.05)
    a = FairnessVerifier(model, "a", random_state=3, **kw).fit(X)
    b = FairnessVerifier(model, "a", random_state=3, **kw).fit(X)
    c = FairnessVerifier(model, "a", random_state=4, **kw).fit(X)
    pd.testing.assert_frame_equal(a.groups_, b.groups_)
    assert not a.groups_["positive_rate"].equals(c.groups_["positive_rate"])


# --------------------------------------------------------------------------- fairlearn


def _fairlearn_data():
    X, y = _discrete_data(n=1200, seed=2)
    return X, y


def test_threshold_optimizer_verified_against_its_probabilities():
    """ThresholdOptimizer (needs sensitive_features in predict, randomized)."""
    from fairlearn.postprocessing import ThresholdOptimizer

    X, y = _fairlearn_data()
    opt = ThresholdOptimizer(estimator=LogisticRegression(), constraints="demographic_parity",
                             predict_method="predict_proba")
    ver = FairnessVerifier(opt, "a", network="learn", tolerance=0.03,
                           random_state=0).fit(X, y)
    assert ver.method_ == "sampling"
    fitted = ver.estimator_

    def decide(rows, sens):
        return fitted._pmf_predict(rows, sensitive_features=sens["a"])[:, 1]

    truth = _enumerated_rates(ver, X, decide)
    g = ver.groups_
    assert np.all((g["ci_low"] <= truth) & (truth <= g["ci_high"]))
    # Demographic parity post-processing on data that the network follows: the
    # verified gap is small.
    assert ver.metric_intervals_["statistical_parity"][1] < 0.1


def test_exponentiated_gradient_verified_frozen_and_refitted():
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient

    X, y = _fairlearn_data()
    eg = ExponentiatedGradient(LogisticRegression(), DemographicParity(), max_iter=20)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module="fairlearn")
        eg.fit(X, y, sensitive_features=X["a"])
        frozen = FairnessVerifier(FrozenEstimator(eg), "a", network="independent",
                                  tolerance=0.03, n_draws=0, random_state=0).fit(X, y)
        refit = FairnessVerifier(
            ExponentiatedGradient(LogisticRegression(), DemographicParity(), max_iter=20),
            "a", network="independent", tolerance=0.03, n_draws=0,
            random_state=0).fit(X, y)
    truth = _enumerated_rates(frozen, X, lambda rows, sens: eg._pmf_predict(rows)[:, 1])
    g = frozen.groups_
    assert np.all((g["ci_low"] <= truth) & (truth <= g["ci_high"]))
    assert refit.method_ == "sampling" and len(refit.groups_) == 2


# --------------------------------------------------------------------------- methods


def test_verify_and_influence_on_the_sampling_path_match_the_exact_path():
    """Linear model on discrete columns: the sampled FIF is within 2 * tolerance of the
    exact FIF (each rate within its tolerance), and verify reports intervals."""
    X, y = _discrete_data()
    model = FrozenEstimator(LogisticRegression().fit(X, y))
    common = dict(network="independent", n_bins=10, multiplier=1000)
    exact = FairnessVerifier(model, "a", **common).fit(X, y)
    ver = FairnessVerifier(model, "a", method="sampling", tolerance=0.02, random_state=0,
                           **common).fit(X, y)
    for reference in ("support", "states"):
        sampled = ver.fairness_influence(reference=reference).table
        truth = exact.fairness_influence(reference=reference).table
        assert sampled.index.tolist() == ["x", "z"]
        assert np.abs(sampled.to_numpy() - truth.to_numpy()).max() <= 2 * 0.02
    result = ver.verify(X, y)
    assert result.method == "sampling"
    assert set(result.metric_intervals) == set(result.metrics)
    truth_sp = exact.verify(X, y).metrics["statistical_parity"]
    lo, hi = result.metric_intervals["statistical_parity"]
    assert lo <= truth_sp <= hi


def test_influence_of_an_ignored_feature_is_within_tolerance_of_zero():
    X, y = _discrete_data()
    hgb = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X[["a", "x"]], y)

    class OnlyAX(ClassifierMixin, BaseEstimator):  # reads a and x of a frame with z
        def __init__(self):
            self.classes_ = hgb.classes_

        def fit(self, X, y):
            return self

        def predict(self, X):
            return hgb.predict(X[["a", "x"]])

    ver = FairnessVerifier(FrozenEstimator(OnlyAX()), "a", network="independent",
                           tolerance=0.02, n_draws=0, random_state=0).fit(X, y)
    fif = ver.fairness_influence(["z"]).table
    assert np.abs(fif.to_numpy()).max() <= 2 * 0.02


def test_verifier_scorer_on_any_classifier():
    X, y = _discrete_data()
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    scorer = make_verifier_scorer(sensitive_features="a", metric="disparate_impact",
                                  network="independent", tolerance=0.05, random_state=0)
    value = scorer(model, X, y)
    assert 0.0 <= value <= 1.0


def test_exact_path_reports_point_intervals_without_draws():
    X, y = _discrete_data()
    ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
                           n_bins=10, n_draws=0).fit(X, y)
    assert ver.method_ == "exact" and ver.n_samples_ == 0
    for name, value in ver.metrics_.items():
        assert ver.metric_intervals_[name] == (value, value)
    g = ver.groups_
    assert (g["ci_low"] == g["positive_rate"]).all() and (g["ci_high"] == g["positive_rate"]).all()


# --------------------------------------------------------------------------- errors


def test_exact_on_a_model_without_exact_path_names_it_and_the_alternative():
    X, y = _discrete_data()
    with pytest.raises(TypeError, match=r"KNeighborsClassifier.*method='sampling'"):
        FairnessVerifier(KNeighborsClassifier(), "a", method="exact").fit(X, y)


@pytest.mark.parametrize("param, value", [("method", "mc"), ("tolerance", 0.0),
                                          ("tolerance", 1.5), ("confidence", 1.0),
                                          ("max_samples", 0)])
def test_invalid_sampling_parameters(param, value):
    X, y = _discrete_data()
    with pytest.raises(InvalidParameterError, match=param):
        FairnessVerifier(LogisticRegression(), "a", **{param: value}).fit(X, y)


def test_budget_reached_warns_with_the_fix():
    X, y = _discrete_data()
    with pytest.warns(SamplingToleranceWarning, match="raise max_samples"):
        ver = FairnessVerifier(KNeighborsClassifier(), "a", network="independent",
                               tolerance=0.001, max_samples=2000, n_draws=0,
                               random_state=0).fit(X, y)
    assert (ver.groups_["ci_high"] - ver.groups_["ci_low"] >= 0.001).any()


def test_batch_memory_guard():
    X, y = _discrete_data()
    with pytest.raises(TableTooLargeError, match="max_table_size.*fewer columns"):
        FairnessVerifier(KNeighborsClassifier(), "a", network="independent",
                         max_table_size=100).fit(X, y)


def test_user_network_refused_on_the_sampling_path():
    X, y = _discrete_data()
    net = BayesNet([2, 5, 3], [(), (), ()],
                   [np.full(2, 0.5), np.full(5, 0.2), np.full(3, 1 / 3)],
                   names=["a", "x", "z"])
    with pytest.raises(ValueError, match="user BayesNet"):
        FairnessVerifier(KNeighborsClassifier(), "a", network=net).fit(X, y)


def test_classes_unknown_without_y():
    X, _ = _discrete_data()

    class NoClasses(ClassifierMixin, BaseEstimator):
        def __init__(self):
            self.fitted_ = True

        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.zeros(len(X), dtype=int)

    with pytest.raises(ValueError, match="pass y"):
        FairnessVerifier(FrozenEstimator(NoClasses()), "a", network="independent").fit(X)


# --------------------------------------------------------------------------- trees


def test_decision_tree_takes_the_exact_path_and_sampling_agrees():
    """method='auto' verifies a tree exactly; the sampling interval contains that rate."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 2000)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0), "z": rng.integers(0, 3, 2000)})
    y = ((X["x"] + 0.3 * X["z"] + rng.normal(0, 1, 2000)) > 1).astype(int)
    tree = FrozenEstimator(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y))
    exact = FairnessVerifier(tree, "a", network="independent").fit(X)
    assert exact.method_ == "exact" and exact.agreement_ == 1.0
    sampled = FairnessVerifier(tree, "a", network="independent", method="sampling",
                               tolerance=0.02, random_state=0).fit(X)
    truth = exact.groups_["positive_rate"].to_numpy()
    g = sampled.groups_
    assert np.all((g["ci_low"] <= truth) & (truth <= g["ci_high"]))
    fif_exact = exact.fairness_influence().table.to_numpy()
    fif_sampled = sampled.fairness_influence().table.to_numpy()
    assert np.abs(fif_exact - fif_sampled).max() <= 2 * 0.02


def test_forest_has_no_exact_path():
    from sklearn.ensemble import RandomForestClassifier

    X, y = _discrete_data()
    with pytest.raises(TypeError, match="RandomForestClassifier.*method='sampling'"):
        FairnessVerifier(RandomForestClassifier(n_estimators=3), "a",
                         method="exact").fit(X, y)


# --------------------------------------------------------------------------- cost


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5])
def test_samples_needed_reach_the_tolerance(p):
    """The estimate is the first look at which the Clopper-Pearson width is below it."""
    grid, alpha, tol = look_grid(10**8), 1e-3, 0.01
    n = samples_needed(p, tol, alpha, grid)
    k = round(p * n)
    low, high = clopper_pearson(k, n, alpha)
    assert high - low < tol * 1.01
    previous = grid[grid.index(n) - 1]
    low, high = clopper_pearson(round(p * previous), previous, alpha)
    assert high - low > tol


def test_cost_is_estimated_after_the_first_batch_and_refused_beyond_the_budget():
    grid = look_grid(10**7)
    cost = SamplingCost(n_intervals=4, tolerance=0.01, alpha=1e-3, grid=grid,
                        max_time=1e9, verbose=0)
    calls = []

    def draw(n):
        calls.append(n)
        return n // 2

    timed = cost.wrap(draw)
    assert timed(1000) == 500 and cost.estimate[0] == 4 * samples_needed(
        0.5, 0.01, 1e-3, grid)
    timed(2000)
    assert cost.rows == 3000 and calls == [1000, 2000]
    slow = SamplingCost(n_intervals=4, tolerance=0.01, alpha=1e-3, grid=grid,
                        max_time=1e-9, verbose=0)
    with pytest.raises(TableTooLargeError, match=r"tolerance=0.01 needs about .* "
                                                 r"max_samples=10,000,000 .*max_time"):
        slow.wrap(draw)(1000)


def test_second_batch_refines_the_cost_per_row():
    """A slow first batch (per-call overhead) is not refused within 10x the rows allowed;
    the second batch's CPU time per row replaces it. The cost is read from the meter's
    clock (CPU time by default), here a fake one."""
    grid = look_grid(10**7)
    now = [0.0]
    cost = SamplingCost(n_intervals=4, tolerance=0.01, alpha=1e-3, grid=grid,
                        max_time=10.0, verbose=0, clock=lambda: now[0])

    def draw(n):
        now[0] += 0.05 if n == 1000 else 1e-6 * n  # 50 us per row, then 1 us
        return n // 2

    timed = cost.wrap(draw)
    timed(1000)
    # 512,000 rows needed; 10 s at 50 us per row allow 200,000 (within 10x)
    assert cost.estimate == (4 * 128_000, 200_000)
    assert cost.per_row == pytest.approx(50e-6)
    timed(100_000)
    assert cost.estimate == (4 * 128_000, 10_000_000) and cost.per_row == pytest.approx(1e-6)


def test_cost_is_cpu_time_not_wall_time():
    """Waiting for a core (a busy machine) costs no CPU time, so the same sampling is not
    refused; a wall-clock meter would refuse it.

    The machine is simulated (its two clocks advance by the draw's own work and by its
    waiting), so the test does not depend on what other threads of the test process do:
    on CI, a sleeping draw measured 34 us of process CPU time per row from them.
    """
    class Machine:
        wall = cpu = 0.0

        def draw(self, n):
            self.cpu += 1e-7 * n  # 0.1 us per row of work: 0.05 s for the rows needed
            self.wall += 5e-5 * n  # 50 us per row of waiting: 26 s for the rows needed
            return n // 2

    grid = look_grid(10**7)

    def cost(clock):
        return SamplingCost(n_intervals=4, tolerance=0.01, alpha=1e-3, grid=grid,
                            max_time=1.0, verbose=0, clock=clock)

    machine = Machine()
    cpu = cost(lambda: machine.cpu)
    cpu.wrap(machine.draw)(1000)
    cpu.wrap(machine.draw)(2000)
    assert cpu.estimate[0] <= cpu.estimate[1]
    assert cpu.per_row == pytest.approx(1e-7)
    wall = cost(lambda: machine.wall)
    with pytest.raises(TableTooLargeError, match="Sampling refused.*50.0 us of CPU"):
        wall.wrap(machine.draw)(1000)
        wall.wrap(machine.draw)(2000)


def test_the_default_meter_is_the_process_cpu_time():
    assert SamplingCost(n_intervals=1, tolerance=0.01, alpha=1e-3, grid=look_grid(10**4),
                        max_time=1.0, verbose=0).clock is cpu_seconds


def test_fit_refuses_a_sampling_beyond_max_time():
    X, y = _discrete_data()
    ver = FairnessVerifier(HistGradientBoostingClassifier(max_iter=5), "a", method="sampling",
                           network="independent", tolerance=0.0005, max_samples=10**9,
                           max_time=1.0, random_state=0)
    with pytest.raises(TableTooLargeError, match="Sampling refused.*max_time=1.0 s"):
        ver.fit(X, y)
