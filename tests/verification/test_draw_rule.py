"""The posterior draws solved on a coarser integer rule (``_draw_rule``) against the
verified rule's draws solved one by one, on known networks and through the verifier."""

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.s3p import BayesNet
from skfairverify.verification import _draw_rule
from skfairverify.verification._draw_rule import (
    DrawRule,
    coarser_multipliers,
    effective_rows,
    one_row_share,
)
from skfairverify.verification._influence import group_rates
from skfairverify.verification._posterior import posterior_networks, shared_plan_rates

GROUPS = np.array([[0], [1], [2]])


def _known(seed=0, n_features=6, states=30):
    """A (3 groups) -> every feature, features chained; real weights; its rule at ``l``."""
    rng = np.random.default_rng(seed)
    cards = [3] + [states] * n_features
    parents = [()] + [(0,)] + [(0, i) for i in range(1, n_features)]
    cpts = [np.array([0.6, 0.3, 0.1])]
    for p in parents[1:]:
        shape = tuple(cards[q] for q in p) + (states,)
        cpts.append(rng.dirichlet(np.full(states, 0.7), size=shape[:-1]))
    net = BayesNet(cards, parents, cpts)
    contributions = [np.array([0.0, 0.3, -0.2])] + [
        rng.normal(0, 1, states) for _ in range(n_features)]
    cut = 0.37

    def rule_at(m):
        return [np.rint(m * c).astype(np.int64) for c in contributions], int(np.ceil(m * cut))

    return net, rule_at


def _solver(net):
    def solve(n, rule):
        return group_rates(n, *rule, [0], GROUPS, 10**8)

    def plan(n, rule):
        return shared_plan_rates(n, *rule, [0], GROUPS)

    return solve, plan


def _draws(net, n_rows, seed):
    codes = net.sample(n_rows, random_state=seed)
    return codes, posterior_networks(net, codes, equivalent_sample_size=1.0, n_draws=60,
                                     random_state=seed)


@pytest.mark.parametrize("seed", [0, 1])
def test_shifted_draws_match_the_verified_rule_draw_by_draw(seed):
    net, rule_at = _known(seed)
    codes, draws = _draws(net, 3000, seed)
    solve, plan = _solver(net)
    fine = rule_at(1000)
    exact = np.array([solve(d, fine) for d in draws])  # one engine run per draw
    point = solve(net, fine)
    rule = DrawRule(1000, rule_at, solve, plan)
    rates_of = rule.rates_function(net, point)
    shifted = np.array([rates_of(d) for d in draws])
    assert rule.chosen[-1] < 1000  # a coarser rule was used: the test is not vacuous
    sd = exact.std(axis=0)
    err = shifted - exact
    # the documented bound: the error's spread is at most sqrt(tolerance) of the draws'
    assert np.all(np.sqrt((err ** 2).mean(axis=0)) <= np.sqrt(0.1) * sd)
    q_exact = np.quantile(exact, [0.025, 0.975], axis=0)
    q_shift = np.quantile(shifted, [0.025, 0.975], axis=0)
    width = q_exact[1] - q_exact[0]
    assert np.all(np.abs(q_shift - q_exact) <= 0.05 * width)


def test_unshifted_coarse_draws_would_be_wrong():
    """The shift matters: the coarse rule's own draws are off by its bias."""
    net, rule_at = _known(0)
    solve, _ = _solver(net)
    bias = solve(net, rule_at(15)) - solve(net, rule_at(1000))
    assert np.max(np.abs(bias)) > 1e-3


def test_tolerance_zero_is_the_verified_rule():
    net, rule_at = _known(0)
    _, draws = _draws(net, 3000, 0)
    solve, plan = _solver(net)
    point = solve(net, rule_at(1000))
    rule = DrawRule(1000, rule_at, solve, plan, tolerance=0.0)
    rates_of = rule.rates_function(net, point)
    assert rule.chosen == [1000]
    np.testing.assert_allclose([rates_of(d) for d in draws[:5]],
                               [solve(d, rule_at(1000)) for d in draws[:5]], atol=1e-9)


def test_row_check_refuses_a_rule_that_disagrees_on_the_rows():
    net, rule_at = _known(0)
    codes, _ = _draws(net, 3000, 0)
    solve, plan = _solver(net)
    point = solve(net, rule_at(1000))

    def decisions_at(rule):
        weights, threshold = rule
        score = sum(w[codes[:, i]] for i, w in enumerate(weights))
        return score >= threshold

    rows = (np.ones(len(codes), dtype=bool), codes[:, 0], 3, None, None)
    with_rows = DrawRule(1000, rule_at, solve, plan, decisions_at=decisions_at)
    with_rows.rates_function(net, point, rows)
    shares = {m: with_rows._row_share(m, rows) for m in coarser_multipliers(1000)}
    chosen = with_rows.chosen[-1]
    v = point * (1 - point)
    one_row = 1 / np.bincount(codes[:, 0], minlength=3)
    assert np.all(shares[chosen] <= 0.1 * v + one_row)  # the rule used passes the row check
    coarser = [m for m in shares if m < chosen]
    # every coarser rule failed one of the two checks
    for m in coarser:
        bias = np.abs(solve(net, rule_at(m)) - point)
        assert (np.any(shares[m] > 0.1 * v + one_row)
                or np.any(bias > 0.1 * v + np.minimum(one_row, 0.1 * v)))


def _flipping_rule(n_flipped, sizes=(900, 50), rates=(0.5, 0.1)):
    """A DrawRule whose coarser rules change ``n_flipped[m]`` rows of the small group.

    The probability check passes at every multiplier (the coarse rules' rates are the
    verified ones), so only the row check decides.
    """
    group_of_row = np.repeat([0, 1], sizes)
    verified = np.concatenate([np.arange(s) < r * s for s, r in zip(sizes, rates)])
    small = np.flatnonzero(group_of_row == 1)

    def decisions_at(rule):
        out = verified.copy()
        flip = small[:n_flipped.get(rule[0], 0)]
        out[flip] = ~out[flip]
        return out

    point = np.asarray(rates, dtype=float)
    rule = DrawRule(1000, lambda m: (m,), solve=lambda net, r: point,
                    plan=lambda net, r: (lambda d: point), decisions_at=decisions_at)
    rows = (np.ones(len(group_of_row), dtype=bool), group_of_row, 2, None, None)
    rule.rates_function(None, point, rows)
    return rule.chosen[-1]


def test_row_check_allows_one_row_of_a_small_group():
    """One row of 50 decided differently (0.1 r (1 - r) allows 0.45) is within the check's
    resolution; three rows, a band, are not."""
    multipliers = coarser_multipliers(1000)
    assert _flipping_rule({m: 1 for m in multipliers}) == multipliers[0]
    # three rows at every rule coarser than 250: 250 is the coarsest that passes
    assert _flipping_rule({m: 3 for m in multipliers if m < 250}) == 250
    assert _flipping_rule({m: 3 for m in multipliers}) == 1000  # none passes


def _biased_rule(bias, sizes=(7, 1000), rates=(0.864, 0.5), rows=True):
    """The multiplier a DrawRule takes when every coarser rule moves the small group's rate
    at the point estimate by ``bias[m]`` (its rows decided alike by every rule)."""
    group_of_row = np.repeat([0, 1], sizes)
    point = np.asarray(rates, dtype=float)
    decided = np.concatenate([np.arange(s) < r * s for s, r in zip(sizes, rates)])
    rule = DrawRule(1000, lambda m: (m,),
                    solve=lambda net, r: point - [bias.get(r[0], 0.0), 0.0],
                    plan=lambda net, r: (lambda d: point), decisions_at=lambda r: decided)
    given = (np.ones(len(group_of_row), dtype=bool), group_of_row, 2, None, None) if rows else None
    rule.rates_function(None, point, given)
    return rule.chosen[-1]


def test_probability_check_allows_one_row_of_a_small_group():
    """COMPAS's case: a group of 7 rows with r = 0.864 allows 0.1 r (1 - r) = 0.0118 at
    the network; a shift of 0.02 (1.7 times that, a seventh of a row) is within one row of
    its rows (1 / 7) and within twice the allowance, a shift of 0.03 is not (the slack is
    at most the allowance), nor 0.2; without rows (nothing to resolve) no slack."""
    multipliers = coarser_multipliers(1000)
    allowance = 0.1 * 0.864 * (1 - 0.864)
    assert 0.02 > allowance  # refused before the slack
    assert _biased_rule({m: 0.02 for m in multipliers}) == multipliers[0]
    assert _biased_rule({m: -0.02 for m in multipliers}) == multipliers[0]
    assert _biased_rule({m: 0.2 for m in multipliers if m < 250}) == 250
    assert _biased_rule({m: 0.2 for m in multipliers}) == 1000
    assert _biased_rule({m: 0.03 for m in multipliers}) == 1000  # 0.03 < 1 / 7: not a row
    assert _biased_rule({m: 2 * allowance - 1e-9 for m in multipliers}) == multipliers[0]
    assert _biased_rule({m: 2 * allowance + 1e-9 for m in multipliers}) == 1000
    # a group where one row is less than the allowance: one row of slack
    big = dict(sizes=(300, 1000), rates=(0.5, 0.5))
    assert _biased_rule({m: 0.025 + 1 / 300 - 1e-9 for m in multipliers}, **big) == 15
    assert _biased_rule({m: 0.025 + 1 / 300 + 1e-9 for m in multipliers}, **big) == 1000
    assert _biased_rule({m: 0.02 for m in multipliers}, rows=False) == 1000
    # tolerance 0 is the verified rule itself, slack or not
    rule = DrawRule(1000, lambda m: (m,), solve=lambda net, r: np.array([0.5, 0.5]),
                    plan=lambda net, r: (lambda d: r[0]), decisions_at=lambda r: np.ones(2, bool),
                    tolerance=0.0)
    rule.rates_function(None, np.array([0.5, 0.5]),
                        (np.ones(2, bool), np.array([0, 1]), 2, None, None))
    assert rule.chosen == [1000]


def test_effective_rows_by_hand():
    """Kish's ``(sum w)**2 / sum w**2`` per group against a hand computation: counts
    without weights, invariant to a common factor of the weights, the same on distinct
    rows carrying the sums of their rows' weights and squared weights as on the rows."""
    group = np.array([0, 0, 1, 1, 1, 0])
    mask = np.array([True, True, True, True, True, True, False])  # the last row left out
    w = np.array([1.0, 3.0, 2.0, 2.0, 2.0, 4.0, 100.0])
    assert effective_rows((mask, group, 3, None, None)).tolist() == [3.0, 3.0, 0.0]
    # group 0: (1 + 3 + 4)**2 / (1 + 9 + 16) = 64 / 26; group 1: equal weights, 3 rows
    np.testing.assert_allclose(effective_rows((mask, group, 3, w, None)), [64 / 26, 3, 0])
    np.testing.assert_allclose(one_row_share((mask, group, 3, w, None)), [26 / 64, 1 / 3, 0])
    np.testing.assert_allclose(effective_rows((mask, group, 3, 7.5 * w, None)),
                               effective_rows((mask, group, 3, w, None)))
    # the same rows as distinct rows: (1, 3) and (4) in group 0, the three 2s as one
    distinct = (np.ones(3, dtype=bool), np.array([0, 0, 1]), 3,
                np.array([4.0, 4.0, 6.0]), np.array([10.0, 16.0, 12.0]))
    np.testing.assert_allclose(effective_rows(distinct), [64 / 26, 3, 0])
    # unweighted rows gathered as distinct rows: counts as weights and as squares
    counts = np.array([5.0, 2.0, 1.0])
    assert effective_rows((np.ones(3, dtype=bool), np.array([0, 0, 1]), 2, counts,
                           counts)).tolist() == [7.0, 1.0]


def _duplicated_rows(sizes, copies, rates, weight=None):
    """Rows of two groups as pandas gives them and as the dask path gathers them.

    Group ``g`` has ``sizes[g]`` rows, made of ``sizes[g] / copies`` distinct rows of
    ``copies`` rows each, the first ``rates[g]`` of them decided positively. Returns the
    decisions and the ``rows`` of every row, then of the distinct rows (their weights'
    sums and squared weights' sums).
    """
    group = np.repeat(np.arange(len(sizes)), sizes)
    decided = np.concatenate([np.arange(s) < r * s for s, r in zip(sizes, rates)])
    w = np.ones(group.size) if weight is None else np.asarray(weight, dtype=float)
    first = np.arange(0, group.size, copies)  # a distinct row = ``copies`` rows in a row
    sums = np.add.reduceat(w, first)
    squares = np.add.reduceat(w * w, first)
    every = (np.ones(group.size, dtype=bool), group, len(sizes), weight, None)
    gathered = (np.ones(first.size, dtype=bool), group[first], len(sizes), sums, squares)
    return decided, decided[first], every, gathered


def _chosen(decided, rows, bias=0.0, flipped=0):
    """The multiplier a DrawRule takes when every coarser rule moves group 0's rate at the
    point estimate by ``bias`` and flips its first ``flipped`` rows."""
    point = np.array([0.5, 0.5])

    def decisions_at(rule):
        out = decided.copy()
        if rule[0] != 1000:
            out[:flipped] = ~out[:flipped]
        return out

    rule = DrawRule(1000, lambda m: (m,),
                    solve=lambda net, r: point - [0.0 if r[0] == 1000 else bias, 0.0],
                    plan=lambda net, r: (lambda d: point), decisions_at=decisions_at)
    rule.rates_function(None, point, rows)
    return rule.chosen[-1]


@pytest.mark.parametrize("weighted", [False, True])
def test_distinct_rows_choose_the_rule_of_their_rows(weighted):
    """The dask path's distinct rows (20 standing for the 100 rows of group 0, 5 each)
    choose the rule pandas's rows choose: the slack of both checks is one row of the
    group's effective rows (1 / 100), not one of its distinct rows (1 / 20). At r = 0.5
    the allowance is 0.025; counting the distinct rows, the probability check let a shift
    of 0.04 through (0.025 + min(1 / 20, 0.025) = 0.05), and the row check a distinct row
    of 5 rows decided differently (a share of 0.05 <= 0.025 + 1 / 20), which pandas's rows
    refuse (0.025 + 1 / 100 = 0.035)."""
    weight = None
    if weighted:  # unequal weights, the same for the 5 copies of a distinct row or not
        weight = np.random.default_rng(0).integers(1, 5, 1100).astype(float)
    decided, gathered_decided, every, gathered = _duplicated_rows((100, 1000), 5, (0.5, 0.5),
                                                                  weight)
    n = effective_rows(every)[0]
    np.testing.assert_allclose(effective_rows(gathered), effective_rows(every))
    assert (n == 100) != weighted and 1 / n < 0.025  # one row is less than the allowance
    for bias in (0.025 + 0.5 / n, 0.025 + 2 / n, 0.04):
        assert (_chosen(decided, every, bias)
                == _chosen(gathered_decided, gathered, bias))
    assert _chosen(decided, every, 0.025 + 0.5 / n) == 15  # the slack is used
    assert _chosen(decided, every, 0.04) == 1000  # 0.04 > 0.025 + 1 / n
    # the row check: 5 rows (a distinct row) of group 0 decided differently
    assert _chosen(decided, every, flipped=5) == _chosen(gathered_decided, gathered,
                                                         flipped=1) == 1000
    assert _chosen(decided, every, flipped=1) == 15  # one row is within the slack


def _linear_data(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r"], size=n, p=[0.6, 0.3, 0.1])
    shift = pd.Series(a).map({"p": 0.0, "q": 0.4, "r": -0.3}).to_numpy()
    X = pd.DataFrame({f"x{i}": rng.normal(shift * (i % 3), 1.0) for i in range(6)})
    y = (X.sum(axis=1) + rng.normal(0, 1, n) > 0.2).astype(int)
    model = LogisticRegression().fit(X, y)
    X["a"] = a
    return FrozenEstimator(model), X, y


def test_verifier_intervals_equal_those_of_the_verified_rule(monkeypatch):
    """Through fit: same draws, the draw rule on against off (tolerance 0)."""
    model, X, y = _linear_data()
    fitted = FairnessVerifier(model, "a", random_state=0).fit(X, y)
    monkeypatch.setattr(_draw_rule, "DRAW_RULE_TOLERANCE", 0.0)
    exact = FairnessVerifier(model, "a", random_state=0).fit(X, y)
    assert fitted.multiplier_ == exact.multiplier_ >= 100
    for col in ("ci_low", "ci_high"):
        width = (exact.groups_["ci_high"] - exact.groups_["ci_low"]).to_numpy()
        diff = np.abs(fitted.groups_[col].to_numpy() - exact.groups_[col].to_numpy())
        assert np.all(diff <= 0.05 * width)
    for name, (lo, hi) in exact.metric_intervals_.items():
        got = fitted.metric_intervals_[name]
        assert abs(got[0] - lo) <= 0.05 * (hi - lo) and abs(got[1] - hi) <= 0.05 * (hi - lo)
    # the population estimate's replicates are solved on the same rule as the draws: its
    # columns move by a small share of their interval's width
    population = ["population_rate", "population_ci_low", "population_ci_high",
                  "model_check_pvalue", "population_true_positive_rate",
                  "population_false_positive_rate"]
    width = (exact.groups_["population_ci_high"] - exact.groups_["population_ci_low"])
    for col in population[:3]:
        assert np.all(np.abs(fitted.groups_[col] - exact.groups_[col]) <= 0.05 * width)
    pd.testing.assert_frame_equal(
        fitted.groups_.drop(columns=["ci_low", "ci_high", *population]),
        exact.groups_.drop(columns=["ci_low", "ci_high", *population]))


def test_draws_and_replicates_share_one_rule_search_per_network(monkeypatch):
    """With labels, draws and replicates: one search of the draws' rule per network.

    The three networks (all rows, ``Y = 1``, ``Y = 0``) are searched once each, not
    once for the draws and again for the bootstrap replicates, and the fit is the one
    of a search per ask (the cache defeated).
    """
    from skfairverify.verification import _linear_path

    model, X, y = _linear_data()
    searched = []
    search = DrawRule.rates_function

    def counted(self, network, *args, **kwargs):
        searched.append(network)
        return search(self, network, *args, **kwargs)

    monkeypatch.setattr(DrawRule, "rates_function", counted)
    fitted = FairnessVerifier(model, "a", random_state=0, n_draws=40).fit(X, y)
    assert len(searched) == 3 == len({id(n) for n in searched})
    monkeypatch.setattr(_linear_path, "planned_once", lambda plan_of: plan_of)
    searched.clear()
    again = FairnessVerifier(model, "a", random_state=0, n_draws=40).fit(X, y)
    assert len(searched) == 6  # without the cache: the replicates search again
    pd.testing.assert_frame_equal(fitted.groups_, again.groups_, check_exact=True)
    assert fitted.metric_intervals_ == again.metric_intervals_
    assert fitted.population_metric_intervals_ == again.population_metric_intervals_


def test_fitted_verifier_regenerates_its_draws_and_stays_small(rebuilt):
    """The regenerated draws (``Evaluation.draw_networks``) are fit's draws (their rates
    give ``ci_low`` / ``ci_high``), and the pickled verifier keeps their concentrations,
    not ``n_draws`` networks: unpickled, its influence intervals (from the regenerated
    draws) are the same."""
    import pickle

    from skfairverify.verification._intervals import credible_bounds, hold_estimates

    model, X, y = _linear_data()
    ver = FairnessVerifier(model, "a", random_state=0).fit(X, y)
    path = rebuilt(ver, X, y).path
    nets = path.fitted.draw_networks(ver.max_table_size)
    assert len(nets) == ver.n_draws
    rates_of = path.draw_rates_of(ver.network_)
    rates = np.array([rates_of(d) for d in nets])
    low, high = credible_bounds(rates, ver.credible_level)
    point = ver.groups_["positive_rate"].to_numpy()
    (low, high), = hold_estimates({"r": (low, high)}, {"r": point})[0].values()
    np.testing.assert_allclose(ver.groups_["ci_low"], low, atol=1e-12)
    np.testing.assert_allclose(ver.groups_["ci_high"], high, atol=1e-12)
    plain = FairnessVerifier(model, "a", n_draws=0, random_state=0).fit(X, y)
    assert rebuilt(plain, X, y).path.fitted.draw_networks(plain.max_table_size) is None
    assert len(pickle.dumps(ver)) < 1.5 * len(pickle.dumps(plain))
    again = pickle.loads(pickle.dumps(ver))
    before, after = ver.fairness_influence(), again.fairness_influence()
    assert before.ci_low is not None
    pd.testing.assert_frame_equal(after.ci_low, before.ci_low, check_exact=True)
    pd.testing.assert_frame_equal(after.ci_high, before.ci_high, check_exact=True)
