"""Sampling path with posterior draws: intervals of both the network's uncertainty and
the Monte Carlo error (issue 16 x issue 12).

The truth is independent of the code under test: a known network (brute-force
enumeration of its rates, the model deciding every joint state), or a Beta-binomial
model in closed form. Data are drawn from the truth, the verifier learns its network
from them and samples; over repetitions its 95% intervals must cover the population
rate about 95% of the time.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, norm
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.metrics import make_verifier_scorer
from skfairverify.s3p import TableTooLargeError
from skfairverify.verification import SamplingToleranceWarning
from skfairverify.verification._intervals import (
    combined_metric_intervals,
    hull_bounds,
    metric_intervals,
)
from skfairverify.verification._posterior import credible_intervals
from skfairverify.verification._sampling import (
    MC_VARIANCE_FRACTION,
    SamplingCost,
    draw_grid,
    draw_rows_needed,
    look_grid,
    posterior_draw_rates,
    rows_per_draw,
)

# a -> x, (a, x) -> z: the network of tests/verification/test_verifier_intervals.py.
P_A = np.array([0.7, 0.3])
P_X = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
P_Z = np.array([[[0.6, 0.4], [0.4, 0.6], [0.3, 0.7]],
                [[0.5, 0.5], [0.3, 0.7], [0.1, 0.9]]])


def _sample(n, rng) -> pd.DataFrame:
    a = (rng.random(n) < P_A[1]).astype(int)
    x = (rng.random(n)[:, None] > P_X[a].cumsum(1)).sum(1)
    z = (rng.random(n) < P_Z[a, x, 1]).astype(int)
    return pd.DataFrame({"a": a, "x": x, "z": z})


def _truth(decide) -> np.ndarray:
    """``Pr[decide = 1 | A = a]`` by enumeration of the known network.

    ``decide(rows)`` is the model's decision on a frame of joint states.
    """
    states = pd.DataFrame(list(itertools.product(range(2), range(3), range(2))),
                          columns=["a", "x", "z"])
    prob = P_X[states.a, states.x] * P_Z[states.a, states.x, states.z]
    positive = np.asarray(decide(states), dtype=float)
    return np.array([np.sum((prob * positive)[states.a == a]) for a in range(2)])


class TableRule(ClassifierMixin, BaseEstimator):
    """A non-linear decision table: positive when exactly one of x == 1, z == 1."""

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return ((X["x"].to_numpy() == 1) ^ (X["z"].to_numpy() == 1)).astype(int)


def _table_rule():
    return FrozenEstimator(TableRule().fit(None))


# --------------------------------------------------------------------------- primitives


@pytest.mark.parametrize("vp", [0.0, 1e-6, 1e-4, 1e-3, 1e-2])
@pytest.mark.parametrize("tolerance", [0.005, 0.05])
def test_rows_per_draw_bounds_the_widening(vp, tolerance):
    """At the rows returned, the normal widths ``2 z sqrt(V_post + v / m)`` exceed the
    posterior's by at most ``max(tolerance, (sqrt(1.1) - 1) * width)``, with equality."""
    v, level = 0.21, 0.95
    z = norm.ppf(0.975)
    m = rows_per_draw(v, vp, tolerance, level)
    post = 2 * z * np.sqrt(vp)
    widening = 2 * z * np.sqrt(vp + v / m) - post
    allowed = max(tolerance, (np.sqrt(1 + MC_VARIANCE_FRACTION) - 1) * post)
    assert widening == pytest.approx(allowed, rel=1e-9)


def test_draw_grid_respects_max_samples():
    for n_draws, max_samples in [(50, 2_000_000), (40, 123_457), (200, 10_000)]:
        grid = draw_grid(n_draws, max_samples)
        assert grid == sorted(set(grid))
        assert n_draws * grid[-1] <= max(max_samples, 100 * n_draws)
        assert all(b == 2 * a for a, b in zip(grid[:-2], grid[1:-1]))


def test_posterior_predictive_quantiles_cover_beta_binomial():
    """Closed form: a rate ``p``, ``n`` rows, the posterior Beta(k + 1/2, n - k + 1/2).

    The rate of each of 50 posterior draws is estimated from binomial rows
    (:func:`posterior_draw_rates`); the 95% equal-tailed interval of those estimates
    covers ``p`` in 93-97% of 2,000 repetitions (binomial sd 0.005), like the interval
    of the exact draws, and is at most ~10% wider than it on average.
    """
    rng = np.random.default_rng(0)
    p, n, reps, n_draws = 0.3, 200, 2000, 50
    grid = draw_grid(n_draws, 2_000_000)
    hits = exact_hits = 0
    ratio = []
    for _ in range(reps):
        k = rng.binomial(n, p)
        theta = rng.beta(k + 0.5, n - k + 0.5, n_draws)

        def draw(ids, m, theta=theta):
            return rng.binomial(m, theta[ids])

        est = posterior_draw_rates(draw, n_draws, tolerance=0.005, level=0.95, grid=grid,
                                   batch=100_000)
        assert est.converged
        low, high = credible_intervals(est.rates, 0.95)
        e_low, e_high = credible_intervals(theta, 0.95)
        hits += low <= p <= high
        exact_hits += e_low <= p <= e_high
        ratio.append((high - low) / (e_high - e_low))
    assert 0.93 <= hits / reps <= 0.97, hits / reps
    assert 0.93 <= exact_hits / reps <= 0.97, exact_hits / reps
    assert 1.0 <= np.mean(ratio) <= 1.1, np.mean(ratio)


def test_draw_rates_share_calls_within_the_batch():
    """Several draws are sampled and predicted in one call, never above ``batch``."""
    calls = []

    def draw(ids, m):
        calls.append(len(ids) * m)
        return np.full(len(ids), m // 2)

    out = posterior_draw_rates(draw, 50, tolerance=0.5, level=0.95, grid=[500, 1000],
                               batch=10_000)
    assert out.samples == 500 and np.all(out.rates == 0.5)
    assert max(calls) <= 10_000 and sum(calls) == 50 * 500 and len(calls) == 3


def test_hull_and_combined_metric_intervals():
    low, high = hull_bounds(([0.1, 0.5], [0.2, 0.7]), ([0.15, 0.4], [0.25, 0.6]))
    assert low.tolist() == [0.1, 0.4] and high.tolist() == [0.25, 0.7]
    bounds = {"positive_rate": ([0.1, 0.5], [0.2, 0.6])}
    box = metric_intervals(bounds, ["statistical_parity", "disparate_impact"])
    assert combined_metric_intervals(None, bounds, box, 0.95) == box
    draws = {"positive_rate": np.column_stack([np.linspace(0.14, 0.16, 100),
                                               np.linspace(0.54, 0.56, 100)])}
    out = combined_metric_intervals(draws, bounds, box, 0.95)
    assert out == box  # the draws' intervals lie within the box: the hull is the box
    wide = {"positive_rate": np.column_stack([np.linspace(0.0, 0.3, 100),
                                              np.linspace(0.5, 0.9, 100)])}
    sp = combined_metric_intervals(wide, bounds, ["statistical_parity"], 0.95)
    assert sp["statistical_parity"][1] > box["statistical_parity"][1]


# --------------------------------------------------------------------------- coverage


def _coverage(model, decide, reps, n, seed, tolerance=0.01, confidence=0.5, **kw):
    """Hits of the groups' and SP's intervals over ``reps`` fits on fresh samples.

    ``confidence`` only sets the Monte Carlo intervals of the point estimates (hulled
    with the draws' interval, and narrower than ``tolerance``): lowered, it keeps the
    point estimates cheap; ``tolerance`` bounds what the Monte Carlo error adds to
    the width (here less than 10%).
    """
    truth = _truth(decide)
    rng = np.random.default_rng(seed)
    hits, sp_hits = np.zeros(2), 0
    for r in range(reps):
        ver = FairnessVerifier(model, "a", method="sampling", tolerance=tolerance,
                               confidence=confidence, random_state=r,
                               **kw).fit(_sample(n, rng))
        g = ver.groups_
        hits += (g["ci_low"] <= truth) & (truth <= g["ci_high"])
        low, high = ver.metric_intervals_["statistical_parity"]
        sp_hits += low <= abs(truth[1] - truth[0]) <= high
    assert ver.method_ == "sampling"
    return hits, sp_hits


@pytest.mark.slow
def test_sampling_intervals_cover_the_population_rate():
    """A non-linear decision table, 300 rows from the known network, 200 repetitions:
    the 95% intervals of both group rates and of SP cover the enumerated population
    truth within the binomial band (sd 0.015: [0.91, 0.99]). Measured here: 0.915 /
    0.965, SP 0.950. Elsewhere (300 repetitions, other seeds): 0.940 / 0.973, SP 0.960,
    and the exact tree path on the same rows and posterior draws 0.930 / 0.970, SP
    0.953; with 600 rows 0.963 / 0.947, SP 0.967 (exact 0.940 / 0.947, SP 0.953) and
    with this test's seeds 0.970 / 0.970, SP 0.985: at ``tolerance=0.01`` the Monte
    Carlo error widens these ~0.1 wide intervals by 5-10%, a little conservative.

    The Monte Carlo intervals alone (``n_draws=0``) do not: they hold the rate of the
    learned network, which is off the population's by the sampling error of the rows.
    """
    model = _table_rule()
    reps = 200
    hits, sp_hits = _coverage(model, lambda s: TableRule().predict(s), reps, 300, 1)
    assert np.all((0.91 <= hits / reps) & (hits / reps <= 0.99)), hits / reps
    assert 0.91 <= sp_hits / reps <= 0.99, sp_hits / reps
    mc_hits, _ = _coverage(model, lambda s: TableRule().predict(s), 40, 300, 2, n_draws=0)
    assert np.all(mc_hits <= 0.5 * 40), mc_hits


def test_hist_gradient_boosting_intervals_cover_the_population_rate():
    """A small HistGradientBoosting on the discrete states (it reads a, x, z; truth
    0.58 and 0.50), 20 repetitions of 300 rows: at most 4 misses per interval
    (probability 0.984 at 95%). Its predict is the cost (~10 us per row), hence few
    repetitions (slow: ~45 s on the shared machine); the decision table above is the
    sharp coverage check."""
    rng = np.random.default_rng(3)
    big = _sample(5000, rng)
    y = ((big.x == 2) | ((big.z == 1) & (big.a == 0))) ^ (rng.random(5000) < 0.1)
    hgb = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(big, y)
    reps = 20
    hits, sp_hits = _coverage(FrozenEstimator(hgb), lambda s: hgb.predict(s), reps, 300, 4,
                              tolerance=0.03, confidence=0.99)
    assert np.all(hits >= reps - 4), hits
    assert sp_hits >= reps - 4, sp_hits


def _discrete_linear():
    rng = np.random.default_rng(0)
    n = 1500
    a = rng.integers(0, 2, n)
    x = rng.binomial(4, 0.3 + 0.3 * a)
    z = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": a, "x": x, "z": z})
    y = ((x + 0.5 * z + rng.normal(0, 1, n)) > 2).astype(int)
    return X, y, LogisticRegression().fit(X, y)


def test_linear_model_sampling_intervals_match_the_exact_posterior_intervals():
    """Same rows, same random_state, hence the same posterior draws: the sampling
    path's intervals (each draw's rate sampled) are those of the exact path (each
    draw solved exactly) widened by the Monte Carlo error only: they contain them up
    to the Monte Carlo noise of the draws' quantiles and are at most ~25% wider."""
    X, y, model = _discrete_linear()
    common = dict(network="learn", n_bins=10, multiplier=1000, n_draws=100,
                  random_state=0)
    exact = FairnessVerifier(FrozenEstimator(model), "a", **common).fit(X, y)
    sampled = FairnessVerifier(FrozenEstimator(model), "a", method="sampling",
                               tolerance=0.005, **common).fit(X, y)
    assert exact.method_ == "exact" and exact.agreement_ == 1.0
    e, s = exact.groups_, sampled.groups_
    width = (e["ci_high"] - e["ci_low"]).to_numpy()
    slack = 0.1 * width
    assert np.all(s["ci_low"] <= e["ci_low"] + slack), (s["ci_low"], e["ci_low"])
    assert np.all(s["ci_high"] >= e["ci_high"] - slack), (s["ci_high"], e["ci_high"])
    ratio = (s["ci_high"] - s["ci_low"]).to_numpy() / width
    assert np.all((0.95 <= ratio) & (ratio <= 1.25)), ratio
    for name in ("true_positive_rate", "false_positive_rate"):
        assert s[name].notna().all()
    for name, (low, high) in exact.metric_intervals_.items():
        s_low, s_high = sampled.metric_intervals_[name]
        w = high - low
        assert s_low <= low + 0.15 * w and s_high >= high - 0.15 * w, name
        assert s_high - s_low <= 1.3 * w, name


# --------------------------------------------------------------------------- verifier


def test_draws_widen_the_monte_carlo_intervals_and_keep_the_estimate():
    """Same random_state: the point estimates are those of ``n_draws=0`` (the Monte
    Carlo stream does not depend on the draws) and the intervals contain its
    Monte Carlo intervals; they are much wider at 300 rows."""
    X = _sample(300, np.random.default_rng(7))
    kw = dict(method="sampling", tolerance=0.02, random_state=0)
    mc = FairnessVerifier(_table_rule(), "a", n_draws=0, **kw).fit(X)
    both = FairnessVerifier(_table_rule(), "a", **kw).fit(X)
    pd.testing.assert_series_equal(mc.groups_["positive_rate"], both.groups_["positive_rate"])
    assert np.all(both.groups_["ci_low"] <= mc.groups_["ci_low"])
    assert np.all(both.groups_["ci_high"] >= mc.groups_["ci_high"])
    assert np.all(mc.groups_["ci_high"] - mc.groups_["ci_low"] < 0.02)
    assert np.all(both.groups_["ci_high"] - both.groups_["ci_low"] > 0.1)
    assert both.n_samples_ > mc.n_samples_
    for name, value in both.metrics_.items():
        low, high = both.metric_intervals_[name]
        m_low, m_high = mc.metric_intervals_[name]
        assert low <= m_low <= value <= m_high <= high, name


def test_labels_and_mediators_get_draws_too():
    """With y: true and false positive rates and equalized odds; with a mediator: the
    path-specific rates. Every metric's interval contains its estimate; verify on the
    same rows with the same seed gives the same intervals."""
    X = _sample(400, np.random.default_rng(8))
    y = TableRule().predict(X) ^ (np.random.default_rng(9).random(400) < 0.2)
    kw = dict(method="sampling", tolerance=0.03, random_state=0)
    ver = FairnessVerifier(_table_rule(), "a", mediators="x", **kw).fit(X, y)
    mc = FairnessVerifier(_table_rule(), "a", mediators="x", n_draws=0, **kw).fit(X, y)
    assert set(ver.metric_intervals_) == set(ver.metrics_) == {
        "disparate_impact", "statistical_parity", "equalized_odds", "path_specific_causal"}
    for name, value in ver.metrics_.items():
        low, high = ver.metric_intervals_[name]
        m_low, m_high = mc.metric_intervals_[name]
        assert low <= m_low <= value <= m_high <= high, name
        if name != "disparate_impact":
            assert high - low > m_high - m_low, name
    result = ver.verify(X, y)
    pd.testing.assert_frame_equal(result.groups, ver.groups_)
    assert result.metric_intervals == ver.metric_intervals_


def test_scorer_pessimistic_bound_on_the_sampling_path():
    X = _sample(400, np.random.default_rng(10))
    kw = dict(sensitive_features="a", method="sampling", tolerance=0.03, random_state=0)
    estimate = make_verifier_scorer(**kw)(TableRule().fit(None), X)
    pessimistic = make_verifier_scorer(bound="pessimistic", **kw)(TableRule().fit(None), X)
    assert pessimistic < estimate - 0.05  # the upper end of the gap, posterior included


def test_fairness_influence_on_the_sampling_path_with_draws():
    X = _sample(400, np.random.default_rng(11))
    ver = FairnessVerifier(_table_rule(), "a", method="sampling", tolerance=0.03,
                           random_state=0).fit(X)
    fif = ver.fairness_influence().table
    assert fif.index.tolist() == ["x", "z"] and np.isfinite(fif.to_numpy()).all()


def test_cost_estimate_counts_the_draws_and_names_n_draws():
    grid = look_grid(10**7)
    cost = SamplingCost(n_intervals=2, tolerance=0.01, alpha=1e-3, grid=grid,
                        max_time=1e9, verbose=0,
                        draw_rows=lambda p: 2 * draw_rows_needed(
                            p, 100, 50, 0.01, 0.95, draw_grid(50, 10**7)))
    cost.wrap(lambda n: n // 2)(1000)
    point = 2 * 128_000  # samples_needed(0.5, 0.01, 1e-3, grid), tested elsewhere
    assert cost.estimate[0] == point + 2 * draw_rows_needed(0.5, 100, 50, 0.01, 0.95,
                                                            draw_grid(50, 10**7))
    timed = cost.wrap(lambda ids, n: np.full(len(ids), n // 2))
    timed(np.arange(10), 500)
    assert cost.rows == 1000 + 10 * 500
    # the progress bar counts the draws' rows against the estimate that includes them
    shown = SamplingCost(n_intervals=2, tolerance=0.01, alpha=1e-3, grid=grid,
                         max_time=1e9, verbose=1, draw_rows=lambda p: 10**6)
    shown.wrap(lambda n: n // 2)(1000)
    shown.wrap(lambda ids, n: np.full(len(ids), n // 2))(np.arange(4), 500)
    assert shown._bar.total == point + 10**6 and shown._bar.n == 3000
    shown.close()
    X = _sample(300, np.random.default_rng(12))
    ver = FairnessVerifier(_table_rule(), "a", method="sampling", tolerance=0.001,
                           max_samples=10**9, max_time=1e-3, random_state=0)
    # the draws' rows: every group's rows as a proportion's posterior, at the rate 0.5
    expected = sum(draw_rows_needed(0.5, n, 50, 0.001, 0.95, draw_grid(50, 10**9))
                   for n in X["a"].value_counts())
    with pytest.raises(TableTooLargeError,
                       match=f"of which {expected:,} under the posterior draws.*n_draws=0"):
        ver.fit(X)


def test_draws_capped_by_max_samples_warn():
    X = _sample(3000, np.random.default_rng(13))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ver = FairnessVerifier(_table_rule(), "a", method="sampling", tolerance=0.001,
                               max_samples=5000, random_state=0).fit(X)
    messages = [str(w.message) for w in caught
                if issubclass(w.category, SamplingToleranceWarning)]
    assert any("posterior draws" in m and "n_draws" in m for m in messages), messages
    g = ver.groups_
    assert np.all((g["ci_low"] <= g["positive_rate"]) & (g["positive_rate"] <= g["ci_high"]))


def test_too_few_draws_refused_on_the_sampling_path():
    X = _sample(300, np.random.default_rng(14))
    with pytest.raises(ValueError, match="n_draws=10.*credible_level"):
        FairnessVerifier(_table_rule(), "a", method="sampling", n_draws=10).fit(X)


def test_coverage_band_is_binomial():
    """The band used above: 200 repetitions at 95% fall in [0.91, 0.99] with
    probability > 0.99 (a check of the test's own tolerance)."""
    assert binom.cdf(0.99 * 200, 200, 0.95) - binom.cdf(0.91 * 200 - 1, 200, 0.95) > 0.99


def test_the_bar_says_when_the_rows_pass_the_estimate(capsys):
    """The estimate is made on the first batch; a run that needs more rows (the draws'
    rates near 0.5) goes on counting and says it is past the estimate, instead of a bar
    full at 100% or a total that the count silently exceeds."""
    shown = SamplingCost(n_intervals=1, tolerance=0.01, alpha=1e-3, grid=look_grid(10**7),
                         max_time=1e9, verbose=1)
    shown.wrap(lambda n: n // 2)(1000)
    total = shown._bar.total
    shown.wrap(lambda n: n // 2)(total - 1000)
    assert shown._bar.total == total and "past the estimate" not in shown._bar.desc
    shown.wrap(lambda n: n // 2)(10)
    assert shown._bar.total is None and shown._bar.n == total + 10
    assert f"past the estimate of {total:,} rows" in shown._bar.desc
    shown.close()
    assert "past the estimate" in capsys.readouterr().err
