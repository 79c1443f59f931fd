"""Credible intervals of the fairness influence function (FIF), issue 16.

Every posterior draw's influence is compared with a brute-force enumeration of the joint
distribution of the drawn network and of its reference network; the intervals' coverage
of the true influence is measured over repeated samples of a known distribution.
"""

import itertools
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from skfairverify import FairnessVerifier
from skfairverify.s3p import BayesNet, TableTooLargeError
from skfairverify.verification import _ensemble_path, _linear_path, _trees_path
from skfairverify.verification._ensemble_path import SEARCH_NS_PER_NODE_TREE, EnsemblePath
from skfairverify.verification._fif import Influence
from skfairverify.verification._influence import planned_seconds
from skfairverify.verification._linear_path import LinearPath, PlannedDraws
from skfairverify.verification._posterior import credible_intervals
from skfairverify.verification._settings import Settings
from skfairverify.verification._trees_path import TreePath

# The known distribution: a -> x (3 values) -> z (binary, given a and x).
P_A = np.array([0.6, 0.4])
P_X = np.array([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]])
P_Z = np.array([[[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]],
                [[0.8, 0.2], [0.4, 0.6], [0.05, 0.95]]])


def decide(x, z):
    return (np.asarray(x) + 1.5 * np.asarray(z) >= 2).astype(int)


#: The coverage design: z depends on a only, so that the structure (a parent of x and
#: of z, no edge between them) is unambiguous: the intervals are those of the parameters
#: given the structure, and an edge between two features could point either way, with a
#: different influence (the reference replaces a feature's table, not its children's).
P_Z_A = np.array([[0.7, 0.3], [0.35, 0.65]])


def sample(n, rng, p_z=P_Z):
    a = (rng.random(n) < P_A[1]).astype(int)
    x = (rng.random(n)[:, None] > P_X[a].cumsum(1)).sum(1)
    z = (rng.random(n) < (p_z[a, x, 1] if p_z.ndim == 3 else p_z[a, 1])).astype(int)
    return pd.DataFrame({"a": a, "x": x, "z": z})


def true_influence():
    """FIF_a of x and of z under the coverage design (each replaced by a uniform)."""
    d = decide(*np.meshgrid(np.arange(3), np.arange(2), indexing="ij"))  # (x, z)
    rate = np.einsum("ax,az,xz->a", P_X, P_Z_A, d)
    without_x = np.einsum("x,az,xz->a", np.full(3, 1 / 3), P_Z_A, d)
    without_z = np.einsum("ax,z,xz->a", P_X, np.full(2, 0.5), d)
    return np.vstack([rate - without_x, rate - without_z])


@pytest.fixture(scope="module")
def model():
    big = sample(5000, np.random.default_rng(0))
    return FrozenEstimator(LogisticRegression(C=100).fit(big[["x", "z"]],
                                                         decide(big.x, big.z)))


def _influence(rebuilt, ver, X, y=None) -> Influence:
    """The FIF object of the fitted ``ver``, from its rebuilt path (conftest)."""
    parts = rebuilt(ver, X, y)
    return Influence(parts.path, parts.variables, ver.network_, ver.groups_, Settings.of(ver))


def joint(net: BayesNet) -> np.ndarray:
    """Brute force: the probability of every joint state, a product of table entries."""
    out = np.zeros(net.cardinalities)
    for state in itertools.product(*(range(c) for c in net.cardinalities)):
        p = 1.0
        for i, (parents, cpt) in enumerate(zip(net.parents, net.cpts)):
            p *= np.asarray(cpt)[tuple(state[q] for q in parents) + (state[i],)]
        out[state] = p
    return out


def brute_rates(net: BayesNet, decision: np.ndarray) -> np.ndarray:
    """Pr[decision = 1 | a] for a = 0, 1 (variable 0), by enumeration."""
    p = joint(net)
    axes = tuple(range(1, p.ndim))
    return (p * decision).sum(axis=axes) / p.sum(axis=axes)


def replaced(net: BayesNet, i: int) -> BayesNet:
    """``net`` with variable ``i`` uniform over its states and without parents, by hand."""
    cpts = [np.asarray(c) for c in net.cpts]
    parents = list(net.parents)
    cpts[i] = np.full(net.cardinalities[i], 1.0 / net.cardinalities[i])
    parents[i] = ()
    return BayesNet(net.cardinalities, parents, cpts, names=net.names,
                    state_names=net.state_names)


def state_decisions(ver) -> np.ndarray:
    """The verified decision of every joint state (variables a, x, z), by hand."""
    cards = ver.network_.cardinalities
    out = np.zeros(cards, dtype=int)
    for state in itertools.product(*(range(c) for c in cards)):
        if ver.rule_ is None:  # the tree path
            values = {n: ver.network_.state_names[i][s]
                      for i, (n, s) in enumerate(zip(ver.variables_, state))}
            row = pd.DataFrame([values])[list(ver.feature_names_in_)]
            out[state] = int(ver.estimator_.predict(row)[0])
        else:
            score = sum(ver.weights_[n].iloc[s] for n, s in zip(ver.variables_, state))
            out[state] = int(score >= ver.threshold_)
    return out


@pytest.mark.parametrize("kind", ["linear", "tree"])
def test_draws_equal_enumeration(kind, model, rebuilt):
    """Every draw's FIF equals the enumeration of the drawn network and its reference."""
    data = sample(400, np.random.default_rng(1))
    est = model if kind == "linear" else DecisionTreeClassifier(max_depth=3, random_state=0)
    y = decide(data.x, data.z)
    ver = FairnessVerifier(est, "a", n_draws=40, random_state=0).fit(data, y)
    assert (ver.rule_ is None) == (kind == "tree") and ver.variables_ == ["a", "x", "z"]
    assert ver.network_.cardinalities == [2, 3, 2]
    decision = state_decisions(ver)
    influence = _influence(rebuilt, ver, data, y)
    draws, base = influence.draws()
    assert len(draws) == 40
    fif = ver.fairness_influence()
    for k, feature in enumerate(["x", "z"]):
        i = ver.variables_.index(feature)
        point, values = influence.rates_without([feature], "support", draws)
        package = base - values
        brute = np.array([brute_rates(d, decision) - brute_rates(replaced(d, i), decision)
                          for d in draws])
        # the tree is solved exactly; the linear draws on the draw rule (here exact, as
        # every coarser rule decides these 12 states alike), within its tolerance
        tol = 1e-9 if kind == "tree" else 0.1 * 0.25
        np.testing.assert_allclose(package, brute, atol=tol, rtol=0)
        value = brute_rates(ver.network_, decision) - brute_rates(
            replaced(ver.network_, i), decision)
        np.testing.assert_allclose(fif.table.iloc[k], value, atol=1e-9)
        low, high = credible_intervals(brute, ver.credible_level)
        np.testing.assert_allclose(fif.ci_low.iloc[k], np.minimum(low, value), atol=tol)
        np.testing.assert_allclose(fif.ci_high.iloc[k], np.maximum(high, value), atol=tol)
    assert fif.ci_low.shape == fif.table.shape and not fif.ci_low.isna().any().any()
    assert fif.intervals["label"] == "95% credible interval (posterior of the network, 40 draws)"


def test_interval_coverage(model):
    """95% FIF intervals cover the true influence in 90-99% of samples (measured 0.94)."""
    truth = true_influence()
    rng = np.random.default_rng(2)
    hits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EstimateOutsideIntervalWarning on some samples
        for _ in range(120):
            data = sample(300, rng, P_Z_A)
            ver = FairnessVerifier(model, "a", n_bins=5, multiplier=10, n_draws=40,
                                   random_state=int(rng.integers(2**31))).fit(data)
            fif = ver.fairness_influence(["x", "z"])
            hits.append(((fif.ci_low.to_numpy() <= truth)
                         & (truth <= fif.ci_high.to_numpy())).ravel())
    coverage = np.mean(hits)
    assert 0.90 <= coverage <= 0.99, coverage


def test_labels_without_posterior(model):
    """n_draws=0, a user network and the sampling path say there is no interval."""
    data = sample(400, np.random.default_rng(3))
    y = decide(data.x, data.z)
    fif = FairnessVerifier(model, "a", n_draws=0).fit(data).fairness_influence()
    assert fif.ci_low is None and fif.ci_high is None
    assert fif.intervals["label"] == "point estimate only (n_draws=0)"
    assert "point estimate only (n_draws=0)" in repr(fif)
    ver = FairnessVerifier(model, "a").fit(data)
    user = FairnessVerifier(model, "a", network=ver.network_).fit(data)
    fif = user.fairness_influence()
    assert fif.ci_low is None
    assert fif.intervals["label"] == "point estimate only (a user network: no posterior draws)"
    hgb = HistGradientBoostingClassifier(max_iter=10)
    sampled = FairnessVerifier(hgb, "a", method="sampling", tolerance=0.05,
                               random_state=0).fit(data, y)
    assert sampled.method_ == "sampling"
    fif = sampled.fairness_influence()
    assert fif.ci_low is None and fif.ci_high is None
    label = fif.intervals["label"]
    assert label.startswith("point estimate only (sampling path: Monte Carlo estimates")
    assert "tolerance=0.05" in label and "no interval for the network's uncertainty" in label
    assert "Monte Carlo" in fif._repr_html_()


def test_intervals_false_gives_the_point_influences_only(model):
    """intervals=False: the same table, no draws solved, the label says why."""
    data = sample(400, np.random.default_rng(5))
    ver = FairnessVerifier(model, "a", random_state=0).fit(data)
    full = ver.fairness_influence()
    point = ver.fairness_influence(intervals=False)
    pd.testing.assert_frame_equal(point.table, full.table)
    assert point.ci_low is None and point.ci_high is None
    assert point.intervals["label"] == "point estimate only (intervals=False)"
    with pytest.raises(ValueError, match="intervals must be True or False"):
        ver.fairness_influence(intervals="yes")


def _counting_draws(monkeypatch, path_class, solved):
    """Count the draws of reference networks solved (through ``draw_rates_of``)."""
    draw_rates_of = path_class.draw_rates_of

    def counting(path, network, exact=None):
        rates_of = draw_rates_of(path, network, exact)
        counted = lambda net: solved.append(net) or rates_of(net)  # noqa: E731
        if isinstance(rates_of, PlannedDraws):  # the linear path's planned time
            return PlannedDraws(counted, rates_of.seconds_per_draw)
        return counted

    monkeypatch.setattr(path_class, "draw_rates_of", counting)


def test_draws_refused_from_the_plan_before_any_draw(model, monkeypatch):
    """The draws are refused from the plan's estimate before any is solved, naming the
    estimate, n_draws and max_table_size; the estimate is n_draws times the engine's
    plan of the draws' rule on the reference network."""
    data = sample(400, np.random.default_rng(4))
    ver = FairnessVerifier(model, "a", n_draws=40, random_state=0).fit(data)
    path = ver._path
    influence = Influence(path, ver._variables, ver.network_, ver.groups_, Settings.of(ver))
    net = influence.reference_network(["x"], "support")
    rates_of = path.draw_rates_of(net)
    per_draw = rates_of.seconds_per_draw
    # independently: the draws' rule is one of the multipliers of fit's rule, and one
    # draw is one engine run of its plan on the reference network
    candidates = [planned_seconds(*path.quantizer.integer_rule(ver._variables.encoding, m),
                                  net, 10**8, evidence_vars=ver._variables.sens_idx)
                  for m in range(2, ver.multiplier_ + 1)]
    assert per_draw > 0 and min(abs(c - per_draw) for c in candidates) < 1e-15
    assert path.draws_seconds(net, 40, rates_of) == pytest.approx(40 * per_draw)
    assert path.draws_seconds(net, 80, rates_of) == pytest.approx(2 * path.draws_seconds(
        net, 40, rates_of))
    # a plan estimated at 10 s per draw (the plan's size, no timing) refuses 400 s
    monkeypatch.setattr(_linear_path, "planned_seconds", lambda *a, **k: 10.0)
    solved = []
    _counting_draws(monkeypatch, LinearPath, solved)
    with pytest.raises(TableTooLargeError,
                       match=r"'x' are estimated at 400.00 s \(40 draws x 10 s per draw.*"
                             r"bound of 120.00 s that max_table_size=50,000,000.*"
                             r"intervals=False.*n_draws"):
        ver.fairness_influence()
    assert solved == []  # refused before any draw of a reference network was solved
    ver.set_params(max_table_size=10**9)  # a bound of 2,400 s: accepted
    assert ver.fairness_influence().ci_low is not None
    assert len(solved) == 2 * 40


def test_draws_refusal_ignores_the_clock(model, monkeypatch):
    """A clock that jumps by a day at every reading changes neither the refusal nor a
    number: nothing is timed."""
    data = sample(400, np.random.default_rng(4))
    ver = FairnessVerifier(model, "a", n_draws=40, random_state=0).fit(data)
    before = ver.fairness_influence()
    clock = itertools.count(step=86_400.0)
    monkeypatch.setattr(time, "process_time", lambda: next(clock))
    monkeypatch.setattr(time, "thread_time", lambda: next(clock))
    after = ver.fairness_influence()
    for a, b in [(after.table, before.table), (after.ci_low, before.ci_low),
                 (after.ci_high, before.ci_high)]:
        pd.testing.assert_frame_equal(a, b)


def test_tree_draws_estimate_from_the_elimination(monkeypatch):
    """The tree path's estimate is n_draws times the planned elimination's work (its
    work units times TREE_NS_PER_UNIT, as the work bound of the tree's rates), larger
    for a deeper tree; FIF refuses from it before any draw is solved."""
    data = sample(400, np.random.default_rng(4))
    estimates = []
    for depth in (1, 3):  # more regions: more work
        tree = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(
            data[["x", "z"]], decide(data.x, data.z))
        ver = FairnessVerifier(FrozenEstimator(tree), "a", n_draws=40,
                               random_state=0).fit(data)
        path, net = ver._path, ver.network_
        estimates.append(path.draws_seconds(net, 1, None))
    one = estimates[-1]
    assert 0 < estimates[0] < one
    assert path.draws_seconds(net, 40, None) == pytest.approx(40 * one)
    # an elimination planned at 10 s (its size; on data this small the table bound of
    # the draws comes first) refuses the draws before any is solved
    monkeypatch.setattr(_trees_path, "tree_rates_seconds", lambda *a: 10.0)
    solved = []
    _counting_draws(monkeypatch, TreePath, solved)
    with pytest.raises(TableTooLargeError, match=r"estimated at 400.00 s \(40 draws x 10 s"):
        ver.fairness_influence()
    assert solved == []
    assert ver.fairness_influence(intervals=False).ci_low is None


def test_ensemble_draws_estimate_from_the_search(monkeypatch):
    """On the bounds path the estimate is the point search's nodes x trees x
    SEARCH_NS_PER_NODE_TREE per draw (its deadline when it stopped there, never more),
    without a timing; FIF refuses from it before any draw is solved."""
    data = sample(400, np.random.default_rng(4))
    hgb = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(
        data[["x", "z"]], decide(data.x, data.z))
    ver = FairnessVerifier(FrozenEstimator(hgb), "a", method="bounds", n_draws=40,
                           random_state=0).fit(data)
    path = ver._path
    influence = Influence(path, ver._variables, ver.network_, ver.groups_, Settings.of(ver))
    net = influence.reference_network(["x"], "support")
    path.point_rates(net)
    seconds = path.draws_seconds(net, 40, None)
    searched = path._searched
    assert searched[0] is net and seconds == pytest.approx(40 * searched[1])

    class Search:
        stopped, nodes_expanded = "tolerance", np.array([300, 700])

    n_trees = len(path.ensemble.trees)
    assert path.search_seconds(Search()) == pytest.approx(
        1000 * n_trees * SEARCH_NS_PER_NODE_TREE * 1e-9)
    Search.stopped = "max_time"  # the deadline, a parameter
    assert path.search_seconds(Search()) == path.budget[0]
    Search.stopped, Search.nodes_expanded = "tolerance", np.array([10**15])
    assert path.search_seconds(Search()) == path.budget[0]  # never beyond the deadline
    solved = []
    _counting_draws(monkeypatch, EnsemblePath, solved)
    # a second per node and tree (on data this small the table bound of the draws
    # comes first): refused before any draw is solved
    monkeypatch.setattr(_ensemble_path, "SEARCH_NS_PER_NODE_TREE", 1e9)
    units = searched[1] / (SEARCH_NS_PER_NODE_TREE * 1e-9)  # nodes x trees
    expected = 40 * min(units, path.budget[0])
    with pytest.raises(TableTooLargeError, match=rf"'x' are estimated at "
                                                 rf"{expected:,.2f} s \(40 draws x"):
        ver.fairness_influence(["x"])
    assert solved == []


def test_notebook_shows_intervals(model):
    """The notebook display shows value [low, high] of every entry with the label."""
    data = sample(400, np.random.default_rng(5))
    fif = FairnessVerifier(model, "a", n_draws=40, random_state=0).fit(
        data).fairness_influence()
    page = fif._repr_html_()
    assert "95% credible interval (posterior of the network, 40 draws)" in page
    for k in range(2):
        for j in range(2):
            cell = (f"{fif.table.iat[k, j]:.3f} [{fif.ci_low.iat[k, j]:.3f}, "
                    f"{fif.ci_high.iat[k, j]:.3f}]")
            assert re.search(re.escape(cell), page), cell


def _error_segments(ax) -> set:
    """``(low, high, y)`` of every horizontal error bar drawn on ``ax`` (rounded)."""
    from matplotlib.collections import LineCollection

    out = set()
    for collection in ax.collections:
        if isinstance(collection, LineCollection) and collection.get_gid() != "fif-range":
            for seg in collection.get_segments():
                if len(seg) < 2 or not np.isfinite(seg).all():
                    continue
                (x0, y0), (x1, y1) = seg[0], seg[-1]
                if y0 == y1 and x0 != x1:
                    out.add((round(min(x0, x1), 9), round(max(x0, x1), 9)))
    return out


@pytest.mark.parametrize("n_groups", [2, 6])
def test_plot_draws_the_intervals(model, n_groups):
    """Every influence's error bar spans its credible interval; the folded row has none."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skfairverify.plotting import plot_fairness_influence

    rng = np.random.default_rng(6)
    data = sample(600, rng)
    data["w"] = rng.normal(size=600).round(2)
    sens = "a" if n_groups == 2 else ["a", "b"]
    if n_groups == 6:
        data["b"] = rng.integers(0, 3, 600)
    ver = FairnessVerifier(model, sens, n_bins=5, n_draws=40, random_state=0).fit(
        data.drop(columns="w") if n_groups == 2 else data)
    fif = ver.fairness_influence()
    ax = plot_fairness_influence(ver, fif=fif, top=1)
    top = ax.get_yticklabels()[0].get_text()
    expected = {(round(lo, 9), round(hi, 9))
                for lo, hi in zip(fif.ci_low.loc[top], fif.ci_high.loc[top])}
    assert len(expected) == n_groups
    assert _error_segments(ax) == expected  # the top feature's; none on the folded row
    assert "error bars: 95% credible interval" in " ".join(ax.get_xlabel().split())
    plt.close("all")
    point = FairnessVerifier(model, sens, n_bins=5, n_draws=0).fit(
        data.drop(columns="w") if n_groups == 2 else data)
    ax = plot_fairness_influence(point)
    assert not _error_segments(ax)
    assert "(point estimate only (n_draws=0))" in " ".join(ax.get_xlabel().split())
    plt.close("all")


def test_value_outside_its_draws_widens_the_interval_and_warns(model, rebuilt):
    """An influence outside its draws' interval: the interval holds it, a warning names it."""
    from skfairverify.verification import EstimateOutsideIntervalWarning

    data = sample(400, np.random.default_rng(7))
    ver = FairnessVerifier(model, "a", n_draws=40, random_state=0).fit(data)
    table = pd.DataFrame([[0.3, 0.0]], index=pd.Index(["x"], name="feature"),
                         columns=pd.Index([0, 1], name="a"))
    draws = np.random.default_rng(0).normal(0.0, 0.01, (40, 1, 2))
    with pytest.warns(EstimateOutsideIntervalWarning,
                      match=r"1 fairness influence .*x / 0 0\.3000"):
        low, high = _influence(rebuilt, ver, data).intervals(table, draws)
    expected_low, expected_high = credible_intervals(draws[:, 0], 0.95)
    assert low.iat[0, 0] == expected_low[0] and high.iat[0, 0] == 0.3  # widened to the value
    assert low.iat[0, 1] == expected_low[1] and high.iat[0, 1] == expected_high[1]


def test_parallel_subsets_give_the_same_intervals(model):
    """n_jobs=2 (the subsets in worker processes, the draws sent to them) changes nothing."""
    data = sample(400, np.random.default_rng(8))
    ver = FairnessVerifier(model, "a", n_draws=40, random_state=0).fit(data)
    one = ver.fairness_influence()
    two = ver.set_params(n_jobs=2).fairness_influence()
    for a, b in ((one.table, two.table), (one.ci_low, two.ci_low), (one.ci_high, two.ci_high)):
        pd.testing.assert_frame_equal(a, b)
