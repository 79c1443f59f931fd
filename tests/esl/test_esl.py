"""Tests of the ESL box against independent computations."""

from itertools import combinations, permutations
from math import comb, factorial

import numpy as np
import pandas as pd
import pytest
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import ThreadpoolController, threadpool_limits

from skfairverify import esl_coefficients, esl_decomposition, esl_value, group_esl
from skfairverify.metrics import make_esl_scorer
from skfairverify.metrics._base import _FairnessScorer

MEMBERS = ("shapley", "solidarity", "equal_surplus", "consensus", "lsp")


# --------------------------------------------------------------------------- helpers
def subsets(players):
    for s in range(len(players) + 1):
        yield from (frozenset(c) for c in combinations(players, s))


def random_game(n, rng):
    game = {S: (rng.normal() if S else 0.0) for S in subsets(range(n))}
    return game


def constants_by_hand(value, n):
    """DESIGN.md's formulas, written out one by one."""
    b = []
    for s in range(1, n + 1):
        if s == n:
            b.append(1.0)
        elif value == "shapley":
            b.append(1.0)
        elif value == "solidarity":
            b.append(1.0 / (s + 1))
        elif value == "equal_surplus":
            b.append(float(n - 1) if s == 1 else 0.0)
        elif value == "consensus":
            b.append(n / 2 if s == 1 else 0.5)
        else:
            b.append(comb(n - 1, s) * s / 2 ** (n - 2))
    return np.array(b)


def brute_force_esl(game, n, b):
    """phi_i = sum_{S ∋ i} (s-1)!(n-s)!/n! (b_s v(S) - b_{s-1} v(S \\ i)), b_0 = 0."""
    bb = np.concatenate([[0.0], b])
    phi = np.zeros(n)
    for i in range(n):
        for S in subsets(range(n)):
            if i not in S:
                continue
            s = len(S)
            w = factorial(s - 1) * factorial(n - s) / factorial(n)
            phi[i] += w * (bb[s] * game[S] - bb[s - 1] * game[S - {i}])
    return phi


def permutation_shapley(game, n):
    phi = np.zeros(n)
    perms = list(permutations(range(n)))
    for order in perms:
        before = frozenset()
        for i in order:
            phi[i] += game[before | {i}] - game[before]
            before = before | {i}
    return phi / len(perms)


def least_square_prenucleolus(game, n):
    """argmin sum_{S proper, non-empty} (v(S) - x(S))^2 s.t. x(N) = v(N) (KKT system)."""
    rows, targets = [], []
    for S in subsets(range(n)):
        if 0 < len(S) < n:
            rows.append([1.0 if i in S else 0.0 for i in range(n)])
            targets.append(game[S])
    A, t = np.array(rows), np.array(targets)
    kkt = np.zeros((n + 1, n + 1))
    kkt[:n, :n] = 2 * A.T @ A
    kkt[:n, n] = 1.0
    kkt[n, :n] = 1.0
    rhs = np.concatenate([2 * A.T @ t, [game[frozenset(range(n))]]])
    return np.linalg.solve(kkt, rhs)[:n]


def solidarity_by_definition(game, n):
    """Nowak-Radzik: Shapley weights applied to the average marginal contribution of S."""
    phi = np.zeros(n)
    for i in range(n):
        for S in subsets(range(n)):
            if i in S:
                s = len(S)
                avg = np.mean([game[S] - game[S - {k}] for k in S])
                phi[i] += factorial(s - 1) * factorial(n - s) / factorial(n) * avg
    return phi


def equal_surplus_by_definition(game, n):
    single = np.array([game[frozenset({i})] for i in range(n)])
    return single + (game[frozenset(range(n))] - single.sum()) / n


# ------------------------------------------------------------------------- constants
@pytest.mark.parametrize("value", MEMBERS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_constants_match_design_formulas(value, n):
    np.testing.assert_allclose(esl_coefficients(value, n), constants_by_hand(value, n))


def test_constants_bad_input():
    with pytest.raises(ValueError, match="'value' parameter of esl_coefficients .*shapley"):
        esl_coefficients("banzhaf", 3)
    for n in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer|'n' parameter of esl_coeff"):
            esl_coefficients("shapley", n)


# --------------------------------------------------------------------------- values
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_values_match_brute_force_and_definitions(n):
    rng = np.random.default_rng(n)
    game = random_game(n, rng)
    for value in MEMBERS:
        b = constants_by_hand(value, n)
        expected = brute_force_esl(game, n, b)
        np.testing.assert_allclose(esl_value(game, n, value), expected, atol=1e-12)
        np.testing.assert_allclose(esl_value(game.__getitem__, n, b), expected, atol=1e-12)
    np.testing.assert_allclose(esl_value(game, n), permutation_shapley(game, n), atol=1e-12)
    np.testing.assert_allclose(esl_value(game, n, "equal_surplus"),
                               equal_surplus_by_definition(game, n), atol=1e-12)
    np.testing.assert_allclose(esl_value(game, n, "solidarity"),
                               solidarity_by_definition(game, n), atol=1e-12)
    np.testing.assert_allclose(
        esl_value(game, n, "consensus"),
        (permutation_shapley(game, n) + equal_surplus_by_definition(game, n)) / 2, atol=1e-12)
    if n >= 2:
        np.testing.assert_allclose(esl_value(game, n, "lsp"),
                                   least_square_prenucleolus(game, n), atol=1e-10)


@pytest.mark.parametrize("value", MEMBERS)
def test_efficiency_and_symmetry(value):
    rng = np.random.default_rng(7)
    n = 5
    base = {S: rng.normal() for S in subsets(range(2, n))}
    by_pair = rng.normal(size=3)
    # players 0 and 1 are interchangeable: v depends on |S ∩ {0, 1}| only
    game = {S: (base[S - {0, 1}] + by_pair[len(S & {0, 1})] if S else 0.0)
            for S in subsets(range(n))}
    game[frozenset()] = 0.0
    phi = esl_value(game, n, value)
    assert phi.sum() == pytest.approx(game[frozenset(range(n))])
    assert phi[0] == pytest.approx(phi[1])


def test_equal_surplus_evaluates_linear_number_of_coalitions():
    calls = []

    def game(S):
        calls.append(S)
        return float(len(S) ** 2)

    n = 10
    esl_value(game, n, "equal_surplus")
    assert len(calls) == n + 1 and frozenset() not in calls
    calls.clear()
    esl_value(game, 6, "shapley")
    assert len(calls) == 2**6 - 1


def test_esl_value_bad_input():
    game = {frozenset({0}): 1.0, frozenset({1}): 1.0, frozenset({0, 1}): 3.0}
    with pytest.raises(ValueError, match="'value' parameter of esl_value"):
        esl_value(game, 2, "owen")
    with pytest.raises(ValueError, match="shape"):
        esl_value(game, 2, [0.5, 0.5, 1.0])
    with pytest.raises(ValueError, match="b_n must be 1"):
        esl_value(game, 2, [0.5, 0.9])
    with pytest.raises(ValueError, match="NaN"):
        esl_value(game, 2, [np.nan, 1.0])
    with pytest.raises(ValueError, match="no worth"):
        esl_value({frozenset({0}): 1.0}, 2)
    with pytest.raises(ValueError, match="empty coalition"):
        esl_value({**game, frozenset(): 1.0}, 2)
    with pytest.raises(TypeError, match="'game' parameter of esl_value"):
        esl_value(3.0, 2)
    with pytest.raises(ValueError, match="'n_players' parameter of esl_value"):
        esl_value(game, 0)
    with pytest.raises(ValueError, match="NaN"):
        esl_value(lambda S: np.nan, 2)


# -------------------------------------------------------------------- first stage
@pytest.mark.parametrize("value", MEMBERS)
def test_theorem_41_two_group_closed_form(value):
    rng = np.random.default_rng(3)
    v1, v2, v12 = rng.normal(size=3)
    game = {frozenset({0}): v1, frozenset({1}): v2, frozenset({0, 1}): v12}
    b1, b2 = constants_by_hand(value, 2)
    expected = [0.5 * (b2 * v12 - b1 * v2) + 0.5 * b1 * v1,
                0.5 * (b2 * v12 - b1 * v1) + 0.5 * b1 * v2]
    np.testing.assert_allclose(esl_value(game, 2, value), expected)


def simulated(n=3000, seed=0, p=(0.8, 0.6)):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["men", "women"]), size=n, p=[0.6, 0.4])
    y = (rng.random(n) < 0.4).astype(int)
    rate = np.where(y == 1, np.where(g == "men", p[0], p[1]), 0.3)
    y_pred = (rng.random(n) < rate).astype(int)
    return y, y_pred, g


def test_table1_pattern_two_groups():
    y, y_pred, g = simulated()
    res = {v: group_esl(y, y_pred, sensitive_features=g, metric="tpr", value=v) for v in MEMBERS}
    tpr = [y_pred[(g == k) & (y == 1)].mean() for k in ("men", "women")]
    gap = (tpr[0] - tpr[1]) / 0.5
    for v in ("shapley", "equal_surplus", "consensus", "lsp"):
        pd.testing.assert_series_equal(res[v].esl_values, res["shapley"].esl_values)
        assert res[v].esl_difference == pytest.approx(gap)
        assert res[v].metric_difference == pytest.approx(gap * 0.5)
    assert res["solidarity"].esl_difference == pytest.approx(gap / 2)
    assert res["solidarity"].esl_std_error == pytest.approx(res["shapley"].esl_std_error / 2)
    assert res["solidarity"].metric_std_error == pytest.approx(res["shapley"].metric_std_error)
    assert res["solidarity"].z == pytest.approx(res["shapley"].z)
    for r in res.values():
        assert r.esl_values.sum() == pytest.approx(r.total)
        assert r.total == pytest.approx(y_pred[y == 1].mean() / 0.5)
        np.testing.assert_allclose(r.shares, r.esl_values / r.total)


def test_two_group_standard_error_matches_binomial_formula():
    y, y_pred, g = simulated(seed=1)
    res = group_esl(y, y_pred, sensitive_features=g, metric="tpr", value="equal_surplus")
    var = 0.0
    for k in ("men", "women"):
        rows = (g == k) & (y == 1)
        p = y_pred[rows].mean()
        var += p * (1 - p) / rows.sum()
    assert res.esl_std_error == pytest.approx(np.sqrt(var) / 0.5)
    assert res.metric_std_error == pytest.approx(np.sqrt(var))
    lo, hi = res.esl_ci
    assert lo == pytest.approx(res.esl_difference - 1.959964 * res.esl_std_error, rel=1e-5)
    assert hi == pytest.approx(res.esl_difference + 1.959964 * res.esl_std_error, rel=1e-5)
    lo, hi = res.metric_ci
    assert lo == pytest.approx(res.metric_difference - 1.959964 * res.metric_std_error,
                               rel=1e-5)
    assert hi == pytest.approx(res.metric_difference + 1.959964 * res.metric_std_error,
                               rel=1e-5)
    assert res.p_value < 1e-3


def metric_by_hand(metric, y, yhat):
    if metric == "selection_rate":
        return yhat.mean()
    if metric == "tpr":
        return yhat[y == 1].mean()
    if metric == "fpr":
        return yhat[y == 0].mean()
    if metric == "ppv":
        return y[yhat == 1].mean()
    return (1 - y[yhat == 0]).mean()


@pytest.mark.parametrize("metric", ["selection_rate", "tpr", "fpr", "ppv", "npv"])
@pytest.mark.parametrize("value", ["shapley", "solidarity", "equal_surplus"])
def test_group_esl_hand_made_three_groups(metric, value):
    y = np.array([1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0])
    yhat = np.array([1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1])
    g = np.array(list("aaaaaabbbbbbcccccc"))
    labels = ["a", "b", "c"]

    def game(S):
        rows = np.isin(g, [labels[k] for k in S])
        return metric_by_hand(metric, y[rows], yhat[rows]) / 0.4

    res = group_esl(y, yhat, sensitive_features=g, metric=metric, value=value, baseline=0.4)
    np.testing.assert_allclose(res.esl_values.to_numpy(), esl_value(game, 3, value), atol=1e-12)
    assert res.total == pytest.approx(game(frozenset({0, 1, 2})))
    for name in ("compared", "esl_difference", "esl_std_error", "esl_ci", "metric_difference",
                 "metric_std_error", "metric_ci", "z", "p_value"):
        assert getattr(res, name) is None, name
    assert list(res.esl_values.index) == labels
    frame = res.to_frame()
    assert list(frame.index) == labels and frame["esl_value"].sum() == pytest.approx(res.total)
    pair = res.pairwise()
    assert pair.loc[("a", "c"), "esl_difference"] == pytest.approx(
        res.esl_values["a"] - res.esl_values["c"])
    assert pair.loc[("a", "c"), "metric_difference"] == pytest.approx(
        metric_by_hand(metric, y[g == "a"], yhat[g == "a"])
        - metric_by_hand(metric, y[g == "c"], yhat[g == "c"]))


def test_group_metric_matches_fairlearn_metricframe():
    from fairlearn.metrics import MetricFrame, false_positive_rate, true_positive_rate

    y, y_pred, g = simulated(seed=2)
    for metric, fn in (("tpr", true_positive_rate), ("fpr", false_positive_rate)):
        mf = MetricFrame(metrics=fn, y_true=y, y_pred=y_pred, sensitive_features=g)
        res = group_esl(y, y_pred, sensitive_features=g, metric=metric)
        np.testing.assert_allclose(res.metric_by_group.to_numpy(), mf.by_group.to_numpy())
        assert res.total == pytest.approx(mf.overall / 0.5)


def test_multi_stage_intersections():
    rng = np.random.default_rng(5)
    n = 4000
    S = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "race": rng.choice(["x", "y", "z"], n)})
    y = rng.integers(0, 2, n)
    yhat = rng.integers(0, 2, n)
    value = "solidarity"
    res = group_esl(y, yhat, sensitive_features=S, metric="selection_rate", value=value)

    def v(sexes, races):
        rows = S.sex.isin(sexes) & S.race.isin(races)
        return yhat[rows.to_numpy()].mean() / 0.5 if rows.any() else 0.0

    sexes, races = ["F", "M"], ["x", "y", "z"]
    for r_idx, race in enumerate(races):
        # stage 2 game for race r: R -> first-stage value of sex g on rows with race in R
        for g_idx, sex in enumerate(sexes):
            def stage2(R, g_idx=g_idx):
                allowed = [races[k] for k in R]
                return esl_value(lambda G: v([sexes[k] for k in G], allowed), 2, value)[g_idx]

            expected = esl_value(stage2, 3, value)[r_idx]
            assert res.esl_values[(sex, race)] == pytest.approx(expected)
    assert res.esl_values.sum() == pytest.approx(res.total)
    assert res.esl_values.index.names == ["sex", "race"]


def test_multi_stage_parity_gives_equal_values():
    # every intersection has the same selection rate -> values (b_2/2)^s-type equal split
    sex = np.repeat(["F", "M"], 60)
    race = np.tile(np.repeat(["x", "y", "z"], 20), 2)
    yhat = np.tile(np.r_[np.ones(5), np.zeros(15)], 6).astype(int)
    y = np.tile(np.r_[np.ones(10), np.zeros(10)], 6).astype(int)
    res = group_esl(y, yhat, sensitive_features=pd.DataFrame({"sex": sex, "race": race}),
                    metric="selection_rate", value="shapley")
    np.testing.assert_allclose(res.esl_values.to_numpy(), res.total / 6)


def test_asymptotic_standard_error_close_to_bootstrap():
    rng = np.random.default_rng(11)
    y, y_pred, g = simulated(n=1500, seed=4)
    for metric in ("tpr", "ppv"):
        res = group_esl(y, y_pred, sensitive_features=g, metric=metric, value="shapley")
        reps = []
        for _ in range(150):  # rows resampled i.i.d., the design the variance assumes
            idx = rng.integers(0, y.size, y.size)
            reps.append(group_esl(y[idx], y_pred[idx], sensitive_features=g[idx], metric=metric,
                                  value="shapley").esl_values.to_numpy())
        reps = np.array(reps)
        ratio_diff = res.esl_std_error / (reps[:, 0] - reps[:, 1]).std(ddof=1)
        ratio_groups = res.esl_std_errors.to_numpy() / reps.std(axis=0, ddof=1)
        assert 0.7 <= ratio_diff <= 1.4, (metric, ratio_diff)
        assert np.all((ratio_groups >= 0.7) & (ratio_groups <= 1.4)), (metric, ratio_groups)


def test_group_esl_bad_input():
    y, y_pred, g = simulated(n=200)
    with pytest.raises(ValueError, match="single group"):
        group_esl(y, y_pred, sensitive_features=np.zeros(200))
    y_no_pos = y.copy()
    y_no_pos[g == "women"] = 0
    with pytest.raises(ValueError, match="'women' has no rows with y_true == 1"):
        group_esl(y_no_pos, y_pred, sensitive_features=g, metric="tpr")
    no_pp = y_pred.copy()
    no_pp[g == "men"] = 0
    with pytest.raises(ValueError, match="'men' has no rows with y_pred == 1"):
        group_esl(y, no_pp, sensitive_features=g, metric="ppv")
    with pytest.raises(ValueError, match="y_true contains NaN"):
        group_esl(np.where(np.arange(200) == 3, np.nan, y), y_pred, sensitive_features=g)
    with pytest.raises(ValueError, match="'sensitive_features' contains NaN"):
        group_esl(y, y_pred, sensitive_features=np.where(np.arange(200) == 3, None, g))
    with pytest.raises(ValueError, match="'metric' parameter of group_esl must be a str among"):
        group_esl(y, y_pred, sensitive_features=g, metric="accuracy")
    with pytest.raises(ValueError, match="'value' parameter of group_esl"):
        group_esl(y, y_pred, sensitive_features=g, value="owen")
    with pytest.raises(ValueError, match="y_pred has 199 rows"):
        group_esl(y, y_pred[:-1], sensitive_features=g)
    with pytest.raises(ValueError, match="sensitive_features has 199 rows"):
        group_esl(y, y_pred, sensitive_features=g[:-1])
    with pytest.raises(ValueError, match="only 0 and 1"):
        group_esl(y * 2, y_pred, sensitive_features=g)
    for bad in (0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="baseline"):
            group_esl(y, y_pred, sensitive_features=g, baseline=bad)
    with pytest.raises(ValueError, match="confidence"):
        group_esl(y, y_pred, sensitive_features=g, confidence=1.5)
    with pytest.raises(ValueError, match="b_n must be 1"):
        group_esl(y, y_pred, sensitive_features=g, value=[0.5, 0.5])
    with pytest.raises(ValueError, match="sensitive_features"):  # a name: no X here
        group_esl(y, y_pred, sensitive_features="sex")
    with pytest.raises(TypeError):  # keyword-only
        group_esl(y, y_pred, g)
    with pytest.raises(ValueError, match="Negative"):
        group_esl(y, y_pred, sensitive_features=g, sample_weight=np.r_[-1.0, np.ones(199)])
    with pytest.raises(ValueError, match="one weight per row"):
        group_esl(y, y_pred, sensitive_features=g, sample_weight=np.ones(199))
    w = np.where(g == "women", 0.0, 1.0)  # a group of zero weight has no rows
    with pytest.raises(ValueError, match="'women' has no rows with y_true == 1 .* weight"):
        group_esl(y, y_pred, sensitive_features=g, sample_weight=w)
    S = pd.DataFrame({"a": np.repeat(["p", "q"], 100), "b": np.repeat(["u", "v"], 100)})
    with pytest.raises(ValueError, match="intersection"):
        group_esl(y, y_pred, sensitive_features=S, metric="selection_rate")


# ------------------------------------------------------------------ decomposition
def make_data(n=1500, seed=0, n_features=3):
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    X = pd.DataFrame({f"x{j}": rng.normal(size=n) + (sex if j == 0 else 0)
                      for j in range(n_features)})
    X["sex"] = sex
    y = (X.x0 + X.x1 + rng.normal(size=n) > 0.5).astype(int).to_numpy()
    return X, y


FITS = []


class CountingLR(ClassifierMixin, BaseEstimator):
    """LogisticRegression that records the columns of every fit."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        FITS.append(tuple(X.columns))
        self.model_ = LogisticRegression(C=self.C).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


def test_decomposition_matches_direct_computation_and_is_efficient():
    X, y = make_data()
    X_tr, X_te, y_tr, y_te = X.iloc[:1000], X.iloc[1000:], y[:1000], y[1000:]
    feats = ["x0", "x1", "x2"]
    dec = esl_decomposition(LogisticRegression(), X_tr, y_tr, X_test=X_te, y_test=y_te,
                            sensitive_features="sex", metric="tpr")
    res = dec.contributions
    g = X_te.sex.to_numpy()
    preds = {}
    for S in subsets(range(3)):
        if S:
            cols = [feats[k] for k in sorted(S)]
            preds[S] = LogisticRegression().fit(X_tr[cols], y_tr).predict(X_te[cols])
    for value in MEMBERS:
        def group_value(T, grp, value=value):
            if not T:
                return 0.0
            yhat = preds[T]

            def first(G):
                rows = np.isin(g, [[0, 1][k] for k in G]) & (y_te == 1)
                return yhat[rows].mean() / 0.5
            return esl_value(first, 2, value)[grp]

        for grp in (0, 1):
            expected = esl_value(lambda T, grp=grp: group_value(T, grp), 3, value)
            np.testing.assert_allclose(res.loc[value][grp].to_numpy(), expected, atol=1e-12)
            # efficiency across features
            assert res.loc[value][grp].sum() == pytest.approx(
                dec.first_stage.loc[value, grp])
        sub = res.loc[value]
        np.testing.assert_allclose(sub["esl_difference"], sub[0] - sub[1])
    # the first stage of the full model is group_esl of its predictions
    full = group_esl(y_te, preds[frozenset({0, 1, 2})], sensitive_features=g, value="solidarity")
    np.testing.assert_allclose(dec.first_stage.loc["solidarity", [0, 1]],
                               full.esl_values.to_numpy())
    assert dec.first_stage.loc["solidarity", "esl_std_error"] == pytest.approx(
        full.esl_std_error)
    assert dec.first_stage.loc["solidarity", "metric_difference"] == pytest.approx(
        full.metric_difference)
    assert dec.first_stage.loc["solidarity", "metric_std_error"] == pytest.approx(
        full.metric_std_error)
    # majority: a strict majority of the 5 members reject equality
    for f in feats:
        n_reject = (res.xs(f, level="feature")["p_value"] < 0.05).sum()
        assert (res.xs(f, level="feature")["majority"] == (n_reject >= 3)).all()
    assert dec.n_fits == 7 and dec.to_frame() is res and not res.attrs


def test_equal_surplus_fits_only_n_plus_one_models():
    X, y = make_data(n=600, n_features=4)
    FITS.clear()
    res = esl_decomposition(CountingLR(), X, y, sensitive_features="sex",
                            values=("equal_surplus",), random_state=0)
    # n + 2 coalitions: the empty one (worth 0, no model), the n singletons and the full set
    assert sorted(FITS) == sorted([("x0",), ("x1",), ("x2",), ("x3",), ("x0", "x1", "x2", "x3")])
    assert "sex" not in {c for f in FITS for c in f}
    FITS.clear()
    esl_decomposition(CountingLR(), X, y, sensitive_features="sex", random_state=0)
    assert len(FITS) == 2**4 - 1 and len(set(FITS)) == len(FITS)  # each coalition once
    assert res.n_fits == 5 and not res.contributions.attrs


class FixedRule(ClassifierMixin, BaseEstimator):
    """Predicts sum(features) > 0.5 whatever the data: the coalition models stay fixed."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return (np.asarray(X).sum(axis=1) > 0.5).astype(int)


def test_asymptotic_std_error_matches_monte_carlo_over_test_sets():
    rng = np.random.default_rng(21)

    def draw(n):
        sex = rng.integers(0, 2, n)
        X = pd.DataFrame({"a": rng.normal(size=n) + 0.8 * sex, "b": rng.normal(size=n),
                          "c": rng.normal(size=n)})
        y = (X.a + X.b + rng.normal(size=n) > 0.5).astype(int).to_numpy()
        return X, y, sex

    X_tr, y_tr, _ = draw(50)
    diffs, ses = [], []
    for _ in range(100):
        X_te, y_te, s_te = draw(600)
        res = esl_decomposition(FixedRule(), X_tr, y_tr, X_test=X_te, y_test=y_te,
                                sensitive_features=s_te,
                                values=("shapley", "equal_surplus")).contributions
        diffs.append(res["esl_difference"].to_numpy())
        ses.append(res["esl_std_error"].to_numpy())
    ratio = np.mean(ses, axis=0) / np.std(diffs, axis=0, ddof=1)
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio


def test_bootstrap_intervals_agree_with_asymptotic():
    X, y = make_data(n=2000)
    kw = dict(sensitive_features="sex", values=("equal_surplus", "solidarity"), random_state=0)
    asym_result = esl_decomposition(LogisticRegression(), X, y, **kw)
    boot_result = esl_decomposition(LogisticRegression(), X, y, ci="bootstrap",
                                    n_bootstrap=300, **kw)
    asym, boot = asym_result.contributions, boot_result.contributions
    pd.testing.assert_frame_equal(asym[[0, 1, "esl_difference"]],
                                  boot[[0, 1, "esl_difference"]])
    ratio = asym["esl_std_error"] / boot["esl_std_error"]
    assert ratio.between(0.7, 1.4).all(), ratio
    width = (asym.esl_ci_high - asym.esl_ci_low) / (boot.esl_ci_high - boot.esl_ci_low)
    assert width.between(0.7, 1.4).all(), width
    assert boot_result.ci == "bootstrap" and asym_result.ci == "asymptotic"


def test_sensitive_values_route_and_feature_groups_in_pipeline():
    X, y = make_data(n=900)
    rng = np.random.default_rng(1)
    X["cat"] = pd.Categorical(rng.choice(["u", "v", "w"], len(X)))
    X_tr, X_te, y_tr, y_te = X.iloc[:600], X.iloc[600:], y[:600], y[600:]
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"),
             make_column_selector(dtype_include="category")),
            (StandardScaler(), make_column_selector(dtype_include="number")),
        ),
        LogisticRegression(),
    )
    by_col = esl_decomposition(model, X_tr, y_tr, X_test=X_te, y_test=y_te,
                               sensitive_features="sex",
                               values=("equal_surplus",)).contributions
    by_test = esl_decomposition(model, X_tr.drop(columns="sex"), y_tr,
                                X_test=X_te.drop(columns="sex"), y_test=y_te,
                                sensitive_features=X_te.sex.map({0: "F", 1: "M"}),
                                values=("equal_surplus",)).contributions
    np.testing.assert_allclose(by_col[[0, 1]].to_numpy(), by_test[["F", "M"]].to_numpy())
    grouped = esl_decomposition(model, X_tr, y_tr, X_test=X_te, y_test=y_te,
                                sensitive_features="sex", values=("equal_surplus",),
                                features={"first": ["x0", "x1"],
                                          "rest": ["x2", "cat"]}).contributions
    assert grouped.index.get_level_values("feature").tolist() == ["first", "rest"]
    assert grouped[0].sum() == pytest.approx(by_col[0].sum())


def test_decomposition_three_groups_compares_extremes():
    X, y = make_data(n=1500)
    rng = np.random.default_rng(2)
    grp = np.where(X.sex == 1, "a", rng.choice(["b", "c"], len(X)))
    X = X.assign(sex=grp)
    dec = esl_decomposition(LogisticRegression(), X, y, sensitive_features="sex",
                            values=("equal_surplus",), random_state=0, metric="selection_rate")
    first = dec.first_stage.loc["equal_surplus", ["a", "b", "c"]]
    hi, lo = first.idxmax(), first.idxmin()
    assert dec.compared["equal_surplus"] == (hi, lo)
    res = dec.contributions
    np.testing.assert_allclose(res["esl_difference"], res[hi] - res[lo])


def test_decomposition_bad_input():
    X, y = make_data(n=300)
    lr = LogisticRegression()
    with pytest.raises(TypeError, match="sensitive_features"):
        esl_decomposition(lr, X, y)
    with pytest.raises(ValueError, match="sensitive_features is required"):
        esl_decomposition(lr, X, y, sensitive_features=None)
    with pytest.raises(ValueError, match="'gender' is not a column of X"):
        esl_decomposition(lr, X, y, sensitive_features="gender")
    with pytest.raises(ValueError, match="'zz' is not a column of X"):
        esl_decomposition(lr, X, y, sensitive_features="sex", features=["x0", "zz"])
    with pytest.raises(ValueError, match="is a sensitive feature"):
        esl_decomposition(lr, X, y, sensitive_features="sex", features=["x0", "sex"])
    with pytest.raises(ValueError, match="Unknown ESL value 'owen'"):
        esl_decomposition(lr, X, y, sensitive_features="sex", values=("owen",))
    with pytest.raises(ValueError, match="at least one ESL value"):
        esl_decomposition(lr, X, y, sensitive_features="sex", values=())
    with pytest.raises(ValueError, match="'metric' parameter of esl_decomposition"):
        esl_decomposition(lr, X, y, sensitive_features="sex", metric="auc")
    with pytest.raises(ValueError, match="'ci' parameter of esl_decomposition"):
        esl_decomposition(lr, X, y, sensitive_features="sex", ci="jackknife")
    with pytest.raises(ValueError, match="'n_bootstrap' parameter"):
        esl_decomposition(lr, X, y, sensitive_features="sex", n_bootstrap=0)
    with pytest.raises(ValueError, match="y has 299 rows"):
        esl_decomposition(lr, X, y[:-1], sensitive_features="sex")
    with pytest.raises(ValueError, match="y contains NaN"):
        esl_decomposition(lr, X, np.where(np.arange(300) == 0, np.nan, y),
                          sensitive_features="sex")
    with pytest.raises(ValueError, match="single group"):
        esl_decomposition(lr, X.assign(sex=1), y, sensitive_features="sex")
    with pytest.raises(ValueError, match="sensitive_features has 299 rows"):
        esl_decomposition(lr, X, y, sensitive_features=X.sex.iloc[:-1])
    with pytest.raises(ValueError, match="one per row of X_test"):
        esl_decomposition(lr, X, y, X_test=X.iloc[:100], y_test=y[:100],
                          sensitive_features=X.sex.to_numpy())
    with pytest.raises(ValueError, match="y_test is required"):
        esl_decomposition(lr, X, y, X_test=X, sensitive_features="sex")
    with pytest.raises(ValueError, match="sample_weight_test was given without X_test"):
        esl_decomposition(lr, X, y, sensitive_features="sex", sample_weight_test=np.ones(300))
    with pytest.raises(ValueError, match="round.sum of weights. = 0"):
        esl_decomposition(lr, X, y, sensitive_features="sex", ci="bootstrap",
                          sample_weight=np.full(300, 1e-3))
    with pytest.raises(ValueError, match="implementing 'fit' and 'predict'"):
        esl_decomposition(object(), X, y, sensitive_features="sex")
    y_te = y.copy()
    y_te[X.sex.to_numpy() == 1] = 0
    with pytest.raises(ValueError, match="no rows with y_true == 1"):
        esl_decomposition(lr, X, y, X_test=X, y_test=y_te, sensitive_features="sex")


# ------------------------------------------------------------------------- scorer
def test_scorer_value_and_gridsearch_by_column():
    X, y = make_data(n=900)
    model = LogisticRegression().fit(X, y)
    scorer = make_esl_scorer(sensitive_features="sex", metric="tpr")
    assert isinstance(scorer, _FairnessScorer)
    res = group_esl(y, model.predict(X), sensitive_features=X.sex, metric="tpr",
                    value="equal_surplus")
    assert scorer(model, X, y) == pytest.approx(-abs(res.metric_difference))
    search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=3,
                          scoring={"esl": scorer, "acc": "accuracy"}, refit="acc").fit(X, y)
    assert np.all(search.cv_results_["mean_test_esl"] <= 0)
    # same folds by hand
    from sklearn.model_selection import StratifiedKFold

    manual = []
    for tr, te in StratifiedKFold(3).split(X, y):
        m = LogisticRegression(C=0.01).fit(X.iloc[tr], y[tr])
        manual.append(scorer(m, X.iloc[te], y[te]))
    assert search.cv_results_["mean_test_esl"][0] == pytest.approx(np.mean(manual))


def test_scorer_gridsearch_metadata_routing():
    X, y = make_data(n=900)
    sex = X.pop("sex")
    with config_context(enable_metadata_routing=True):
        scorer = make_esl_scorer(metric="tpr").set_score_request(sensitive_features=True)
        search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=3, scoring=scorer)
        search.fit(X, y, sensitive_features=sex)
        by_name = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=3,
                               scoring=make_esl_scorer(sensitive_features="sex"))
        by_name.fit(X.assign(sex=sex), y)
    assert np.all(search.cv_results_["mean_test_score"] <= 0)
    # the routed groups score the same folds as the column route would (without the column)
    best = clone(search.best_estimator_)
    assert best.get_params()["C"] in (0.01, 1.0)
    assert np.isfinite(by_name.best_score_)


def test_scorer_more_groups_and_bad_input():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=600), "g": rng.choice(["a", "b", "c"], 600)})
    y = (X.x + rng.normal(size=600) > 0).astype(int)
    model = LogisticRegression().fit(X[["x"]], y)

    class OnX:
        def predict(self, X):
            return model.predict(X[["x"]])

    res = group_esl(y, OnX().predict(X), sensitive_features=X.g, metric="fpr", value="shapley")
    scorer = make_esl_scorer(sensitive_features="g", metric="fpr", value="shapley")
    assert scorer(OnX(), X, y) == pytest.approx(
        -(res.metric_by_group.max() - res.metric_by_group.min()))
    esl = make_esl_scorer(sensitive_features="g", metric="fpr", value="shapley", units="esl")
    assert esl(OnX(), X, y) == pytest.approx(-(res.esl_values.max() - res.esl_values.min()))
    with pytest.raises(ValueError, match="'metric' parameter of make_esl_scorer"):
        make_esl_scorer(sensitive_features="g", metric="auc")
    with pytest.raises(ValueError, match="'value' parameter of make_esl_scorer"):
        make_esl_scorer(sensitive_features="g", value="owen")
    with pytest.raises(ValueError, match="baseline"):
        make_esl_scorer(sensitive_features="g", baseline=-1)
    with pytest.raises(TypeError):  # keyword-only
        make_esl_scorer("g")
    with pytest.raises(ValueError, match="not found"):
        make_esl_scorer(sensitive_features="h")(OnX(), X, y)
    with pytest.raises(ValueError, match="single group"):
        make_esl_scorer(sensitive_features="g")(OnX(), X.assign(g="a"), y)


# -------------------------------------------------------------------------- plots
def test_plots_smoke():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    from skfairverify.plotting import plot_esl_contributions, plot_group_shares

    y, y_pred, g = simulated(n=500)
    res = group_esl(y, y_pred, sensitive_features=g)
    ax = plot_group_shares(res)
    assert len(ax.patches) == 2
    ax = plot_group_shares(res, kind="share")
    assert ax.patches[0].get_width() == pytest.approx(100 * res.shares.iloc[0])
    with pytest.raises(ValueError, match="kind"):
        plot_group_shares(res, kind="pie")
    X, yy = make_data(n=600)
    dec = esl_decomposition(LogisticRegression(), X, yy, sensitive_features="sex",
                            values=("shapley", "solidarity"), random_state=0)
    axes = plot_esl_contributions(dec)
    assert len(axes) == 2 and len(axes[0].patches) == 6
    ax = plot_esl_contributions(dec, value="solidarity")
    assert ax.patches[0].get_width() == pytest.approx(
        dec.contributions.loc[("solidarity", "x0"), 0])
    with pytest.raises(TypeError, match="ESLDecompositionResult"):
        plot_esl_contributions(dec.contributions)
    with pytest.raises(ValueError, match="not in the decomposition"):
        plot_esl_contributions(dec, value="lsp")
    plt.close("all")


# ------------------------------------------------------------------ result objects
def test_result_objects_share_the_result_base():
    from skfairverify.esl import ESLDecompositionResult, GroupESLResult
    from skfairverify.utils._results import Result

    y, y_pred, g = simulated(n=400)
    first = group_esl(y, y_pred, sensitive_features=g, metric="fpr", value="solidarity")
    assert isinstance(first, GroupESLResult) and isinstance(first, Result)
    text = repr(first)
    assert text.startswith("GroupESLResult(metric='fpr', value='solidarity'")
    assert "metric_difference" in text and "[ESL units = fpr / baseline]" in text
    assert "<table" in first._repr_html_()
    assert not first.to_frame().attrs and "fpr (metric units)" in first.units
    assert not hasattr(first, "values") and not hasattr(first, "group_metric")
    X, yy = make_data(n=600)
    dec = esl_decomposition(LogisticRegression(), X, yy, sensitive_features="sex",
                            values=("shapley", "equal_surplus"), random_state=0)
    assert isinstance(dec, ESLDecompositionResult) and isinstance(dec, Result)
    assert dec.to_frame() is dec.contributions and not dec.contributions.attrs
    assert dec.members == ("shapley", "equal_surplus") and dec.features == ["x0", "x1", "x2"]
    assert dec.n_fits == len(dec.coalitions) == 7 and dec.n_test == 180
    assert dec.flagged == sorted(
        {f for (_, f), m in dec.contributions["majority"].items() if m},
        key=dec.features.index)
    assert repr(dec).startswith("ESLDecompositionResult(metric='tpr', members=")
    assert "ESL units" in dec.units and dec.wall_time >= dec.fit_wall_time > 0


class FitThreadRecorder(ClassifierMixin, BaseEstimator):
    """A logistic regression that records the thread counts of its fits."""

    seen: list = []

    def fit(self, X, y, sample_weight=None):
        FitThreadRecorder.seen.append(max(
            (lib["num_threads"] for lib in ThreadpoolController().info()), default=1))
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


def test_esl_coalition_fits_run_with_one_thread():
    # issue 26: the second ESL stage of the German audit took 2.1-2.5 s instead of 0.3 s
    # when the BLAS threads of its 15 small fits waited for busy cores
    rng = np.random.default_rng(0)
    n = 400
    sex = rng.integers(0, 2, n)
    X = pd.DataFrame({"x1": rng.normal(size=n) + sex, "x2": rng.normal(size=n), "sex": sex})
    y = (X.x1 + X.x2 + rng.normal(size=n) > 0.5).astype(int)
    FitThreadRecorder.seen = []
    with threadpool_limits(limits=2):
        esl_decomposition(FitThreadRecorder(), X, y, sensitive_features="sex",
                          values=("shapley",), random_state=0)
    assert len(FitThreadRecorder.seen) == 3 and max(FitThreadRecorder.seen) == 1
