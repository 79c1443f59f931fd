"""The tree-ensemble path (method="bounds"): sound bounds of the group rates under network_."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.compose import make_column_transformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import InvalidParameterError

from skfairverify import FairnessVerifier
from skfairverify.ensembles import ensemble_bounds, read_ensemble
from skfairverify.ensembles._states import index_ensemble
from skfairverify.ensembles._unsettled import sample_unsettled
from skfairverify.s3p import TableTooLargeError
from skfairverify.verification._ensemble_path import _group_index, sample_to_tolerance

MODELS = {
    "HGB": lambda seed: HistGradientBoostingClassifier(max_iter=15, max_depth=3,
                                                       random_state=seed),
    "RF": lambda seed: RandomForestClassifier(15, max_depth=4, random_state=seed),
    "GB": lambda seed: GradientBoostingClassifier(n_estimators=15, max_depth=3,
                                                  random_state=seed),
    "ET": lambda seed: ExtraTreesClassifier(10, max_depth=4, random_state=seed),
}


def _categorical(n=1500, seed=0, n_features=3):
    """All-categorical inputs (integer codes of 2-4 values), ``a`` sensitive and read."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    columns = {"a": a}
    for k in range(n_features):
        card = 2 + (k + seed) % 3
        columns[f"c{k}"] = np.clip(rng.integers(0, card, n) + (rng.random(n) < 0.3) * a,
                                   0, card - 1)
    X = pd.DataFrame(columns)
    score = X.drop(columns="a").sum(axis=1) + 0.7 * a + rng.normal(0, 0.7, n)
    return X, (score > score.median()).astype(int)


def _continuous(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0, n), "z": rng.normal(0, 1, n),
                      "w": rng.uniform(0, 5, n)})
    y = (X["x"] + X["z"] + 0.3 * X["w"] + rng.normal(0, 0.5, n) > 1.2).astype(int)
    return X, y


def _fit_bounds(model, X, y, **params):
    """The verifier on the bounds path, exact by default (no draws, no population)."""
    params = {"n_draws": 0, "n_bootstrap": 0, "tolerance": 1e-12, "random_state": 0,
              **params}
    return FairnessVerifier(model, "a", method="bounds", **params).fit(X, y)


def _enumerated_rates(ver):
    """``Pr[Yhat = 1 | A = a]`` of every group by enumerating the joint of ``network_``."""
    net = ver.network_
    cards = net.cardinalities
    states = np.array(list(itertools.product(*(range(c) for c in cards))))
    prob = np.ones(len(states))
    for v in range(net.n_variables):
        index = tuple(states[:, p] for p in net.parents[v]) + (states[:, v],)
        prob *= net.cpts[v][index]
    names = list(net.names)
    rows = pd.DataFrame({name: [net.state_names[v][s] for s in states[:, v]]
                         for v, name in enumerate(names)})
    columns = list(ver.feature_names_in_)
    X = pd.DataFrame({c: rows[c] if c in rows else 0 for c in columns})
    for c in X.columns:
        if all(isinstance(v, (int, float, np.number)) for v in X[c]):
            X[c] = X[c].astype(float)
    positive = ver.estimator_.predict(X) == ver.classes_[1]
    sens = ver.sensitive_features_[0]
    v = names.index(sens)
    out = []
    for value in ver.groups_[sens]:
        s = list(net.state_names[v]).index(value)
        inside = states[:, v] == s
        out.append(prob[inside & positive].sum() / prob[inside].sum())
    return np.array(out)


@pytest.mark.parametrize("kind", ["HGB", "RF", "GB"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tolerance", [1e-12, 0.08])
def test_bounds_contain_the_enumerated_truth(kind, seed, tolerance):
    """The truth under network_ (its joint enumerated) lies in [rate_lower, rate_upper]."""
    X, y = _categorical(seed=seed, n_features=2 + seed % 3)
    ver = FairnessVerifier(MODELS[kind](seed), "a", method="bounds", n_draws=0,
                           n_bootstrap=0, tolerance=tolerance, random_state=seed).fit(X, y)
    truth = _enumerated_rates(ver)
    groups = ver.groups_
    assert np.all(groups["rate_lower"] - 1e-12 <= truth)
    assert np.all(truth <= groups["rate_upper"] + 1e-12)
    assert np.all(groups["ci_low"] <= groups["positive_rate"])
    assert np.all(groups["positive_rate"] <= groups["ci_high"])
    if tolerance < 1e-9:
        np.testing.assert_allclose(groups["positive_rate"], truth, atol=1e-9)


@pytest.mark.parametrize("kind", ["HGB", "GB", "RF"])
def test_ten_trees_of_depth_three_are_exact(kind):
    """10 trees of depth 3 on continuous inputs: lower == upper, everything settled."""
    X, y = _continuous()
    model = {"HGB": HistGradientBoostingClassifier(max_iter=10, max_depth=3,
                                                   early_stopping=False, random_state=0),
             "GB": GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0),
             "RF": RandomForestClassifier(10, max_depth=3, random_state=0)}[kind]
    ver = _fit_bounds(model, X, y)
    groups = ver.groups_
    np.testing.assert_allclose(groups["rate_lower"], groups["rate_upper"], atol=1e-9)
    np.testing.assert_allclose(groups["settled"], 1.0)
    np.testing.assert_array_equal(groups["positive_rate"], groups["rate_lower"])
    assert ver.agreement_ == 1.0
    assert ver.n_samples_ == 0


def test_fitted_attributes_and_groups_columns():
    """method_ is "bounds"; groups_ has the bounds, the settled share and the population."""
    X, y = _continuous()
    ver = _fit_bounds(HistGradientBoostingClassifier(max_iter=30, random_state=0), X, y,
                      n_bootstrap=5, tolerance=0.01)
    assert ver.method_ == "bounds"
    groups = ver.groups_
    for column in ("positive_rate", "rate_lower", "rate_upper", "settled", "support",
                   "ci_low", "ci_high", "true_positive_rate", "false_positive_rate",
                   "population_rate"):
        assert column in groups
    assert list(groups.columns[:5]) == ["a", "positive_rate", "rate_lower", "rate_upper",
                                        "settled"]
    assert np.all(groups["rate_upper"] - groups["rate_lower"] <= 0.01 + 1e-12)
    assert np.all((groups["settled"] > 0) & (groups["settled"] <= 1))
    mid = (groups["rate_lower"] + groups["rate_upper"]) / 2
    np.testing.assert_allclose(groups["positive_rate"], mid)
    np.testing.assert_allclose(groups["ci_low"], groups["rate_lower"])
    low, high = ver.metric_intervals_["statistical_parity"]
    assert low <= ver.metrics_["statistical_parity"] <= high
    assert ver.population_ is not None and ver.population_metrics_


def test_posterior_draws_are_the_reweighed_search(rebuilt):
    """n_draws > 0: each draw's rate from the point search's nodes, reweighed; intervals."""
    X, y = _continuous()
    ver = _fit_bounds(GradientBoostingClassifier(n_estimators=10, max_depth=3,
                                                 random_state=0), X, y, n_draws=40)
    groups = ver.groups_
    assert np.all(groups["ci_low"] <= groups["rate_lower"])
    assert np.all(groups["rate_upper"] <= groups["ci_high"])
    assert np.all(groups["ci_high"] - groups["ci_low"] > 1e-3)  # the posterior's spread
    # the draws' rates equal a search of their own (exact: same decisions, reweighed)
    parts = rebuilt(ver, X, y)
    path, ev = parts.path, parts.run.evaluation
    draws = ev.draw_networks(ver.max_table_size)
    for d in (0, 17):
        again = path.bounded_rates(path.model_of(parts.encoding), draws[d],
                                   parts.variables.sens_idx, ev.group_codes, 60.0).rate
        np.testing.assert_allclose(ev.draws["positive_rate"][d], again, atol=1e-9)


def test_unsettled_mass_is_sampled_when_the_budget_ends():
    """A tiny max_time: the bounds stop short, the unsettled share is sampled inside them."""
    X, y = _continuous(n=3000)
    ver = _fit_bounds(HistGradientBoostingClassifier(max_iter=60, max_depth=6,
                                                     random_state=0), X, y,
                      tolerance=0.002, max_time=1e-6)
    groups = ver.groups_
    assert ver.n_samples_ > 0
    assert np.all(groups["rate_upper"] - groups["rate_lower"] > 0.002)
    assert np.all(groups["rate_lower"] <= groups["ci_low"])
    assert np.all(groups["ci_high"] <= groups["rate_upper"])
    assert np.all(groups["ci_low"] <= groups["positive_rate"])
    assert np.all(groups["positive_rate"] <= groups["ci_high"])


def _partial_search(rebuilt, model, max_nodes=3, data=None):
    """A verifier's own model and network, and a search of theirs stopped at ``max_nodes``.

    Returns the path's model, the network, the bounds, the groups' index among the
    bounds' groups and the truth (the enumerated joint of ``network_``, in the order
    of ``groups_``; the finished search agrees with it); on ``data`` other than
    the all-categorical rows (not enumerable), the truth is None.
    """
    X, y = _categorical(seed=1, n_features=4) if data is None else data
    ver = FairnessVerifier(model, "a", method="bounds", n_draws=0, n_bootstrap=0,
                           tolerance=1e-12 if data is None else 0.5,
                           random_state=0).fit(X, y)
    parts = rebuilt(ver, X, y)
    model = parts.path.model_of(parts.encoding)
    network = model.network(ver.network_)
    sens = [ver.variables_.index("a")]
    at = _group_index(network, sens, model.codes(parts.run.evaluation.group_codes, sens))
    truth = None
    if data is None:
        truth = _enumerated_rates(ver)
        exact = ensemble_bounds(model.indexed, network, model.states,
                                sensitive_features=sens)
        np.testing.assert_allclose(exact.lower[at], truth, atol=1e-12)
    bounds = ensemble_bounds(model.indexed, network, model.states, sensitive_features=sens,
                             max_nodes=max_nodes)
    return model, network, bounds, at, truth


@pytest.mark.parametrize("kind,seed", [("HGB", 0), ("RF", 1), ("GB", 2)])
def test_the_paths_unsettled_interval_covers_the_enumerated_truth(rebuilt, kind, seed):
    """The path's sampling of the unsettled mass (Neyman where its draws are many):
    over 200 seeds at 90% (95% a group, Bonferroni), the interval holds the truth
    enumerated from network_ at about its level, and within the sound bounds."""
    model, network, bounds, at, truth = _partial_search(rebuilt, MODELS[kind](seed))
    assert np.all(bounds.width[at] > 0.3)
    covered = []
    for r in range(200):
        result = sample_to_tolerance(model.indexed, network, model.states, bounds, 0.02,
                                     0.9, 2_000_000, r, 10**8)
        assert result.allocation == "neyman" and result.interval == "asymptotic"
        low, high = result.interval_lower[at], result.interval_upper[at]
        covered.append((low <= truth + 1e-12) & (truth <= high + 1e-12))
        assert np.all((bounds.lower[at] <= low) & (high <= bounds.upper[at]))
    coverage = np.mean(covered, axis=0)
    assert coverage.mean() >= 0.92 and np.all(coverage >= 0.89), coverage


@pytest.mark.parametrize("model", [
    HistGradientBoostingClassifier(max_iter=60, max_depth=6, random_state=0),
    RandomForestClassifier(30, max_depth=6, random_state=0)])
def test_the_paths_neyman_draws_fewer_rows_for_the_width(rebuilt, model):
    """For the same width (``tolerance``), the Neyman design the path now takes decides
    fewer rows than its proportional design (the path before: as many draws as the
    worst case of the unsettled share's variance needs), and reaches the width: on a
    search stopped at 300 nodes (800-1,300 unsettled; measured 1.7x fewer)."""
    model, network, bounds, at, _ = _partial_search(rebuilt, model, 300,
                                                    _continuous(n=3000))
    tolerance, confidence = 0.02, 1 - 0.01 / 2
    n = np.ceil((norm.ppf(1 - (1 - confidence) / 2) * bounds.width / tolerance) ** 2)
    rows, widths = {"neyman": [], "proportional": []}, {"neyman": [], "proportional": []}
    for r in range(5):
        for result in (sample_to_tolerance(model.indexed, network, model.states, bounds,
                                           tolerance, 0.99, 2_000_000, r, 10**8),
                       sample_unsettled(model.indexed, network, model.states, bounds,
                                        n.astype(int), confidence=confidence,
                                        random_state=r)):
            rows[result.allocation].append(result.n_evaluations)
            widths[result.allocation].append(result.width[at].max())
    assert np.median(widths["neyman"]) <= 1.05 * tolerance, widths
    assert np.median(widths["proportional"]) <= 1.05 * tolerance, widths
    assert np.mean(rows["neyman"]) < 0.8 * np.mean(rows["proportional"]), rows


@pytest.mark.parametrize("tolerance, kind", [(0.02, "asymptotic"), (0.1, "conservative")])
def test_groups_say_what_the_unsettled_interval_is(tolerance, kind):
    """A search stopped at once (max_time): many draws, Neyman's asymptotic interval;
    few, the proportional one's conservative interval; said in groups_ and the label;
    the enumerated truth within the sound bounds either way."""
    X, y = _categorical(seed=1, n_features=4)
    ver = _fit_bounds(MODELS["RF"](1), X, y, tolerance=tolerance, max_time=1e-6)
    groups = ver.groups_
    assert ver.n_samples_ > 0
    assert groups["unsettled_interval"].tolist() == [kind, kind]
    truth = _enumerated_rates(ver)
    assert np.all((groups["rate_lower"] <= truth) & (truth <= groups["rate_upper"]))
    assert np.all((groups["ci_low"] <= groups["positive_rate"])
                  & (groups["positive_rate"] <= groups["ci_high"]))
    assert kind in ver.verify(X, y).intervals["label"]
    exact = _fit_bounds(MODELS["RF"](1), X, y)
    assert exact.groups_["unsettled_interval"].tolist() == ["none", "none"]


@pytest.mark.parametrize("params, label", [
    ({}, "sound bounds (under the network: the rate lies between them)"),
    ({"max_time": 1e-6, "tolerance": 0.02},
     "sound bounds (under the network: the rate lies between them; with a 99% "
     "Clopper-Pearson interval of the mass the branching left unsettled (Neyman draws, "
     "at their effective size: asymptotic))"),
    ({"max_time": 1e-6, "tolerance": 0.1},
     "sound bounds (under the network: the rate lies between them; with a 99% "
     "Clopper-Pearson interval of the mass the branching left unsettled (draws in "
     "proportion to its mass: conservative))"),
    ({"n_draws": 50, "tolerance": 0.01},
     "95% credible interval and sound bounds (posterior of the network, 50 draws, each "
     "bounded, joined with the bounds under the point network)"),
])
def test_the_intervals_are_labelled_as_bounds(params, label):
    """The display and the results say what the intervals of the bounds path are."""
    X, y = _continuous(n=1500)
    model = HistGradientBoostingClassifier(max_iter=40, max_depth=5, random_state=0)
    ver = _fit_bounds(model, X, y, **params)
    result = ver.verify(X, y)
    assert result.intervals["label"] == label
    assert label in " ".join(ver._repr_html_().split())


def test_pandas_in_and_out_with_sensitive_values_apart():
    """String sensitive values given to fit (not read by the model) come back in groups_."""
    X, y = _continuous()
    group = np.where(X["a"] == 1, "M", "F")
    Xm = X.drop(columns="a")
    model = RandomForestClassifier(10, max_depth=3, random_state=0).fit(Xm, y)
    ver = FairnessVerifier(FrozenEstimator(model), method="bounds", n_draws=0,
                           n_bootstrap=0, tolerance=1e-12, random_state=0)
    ver.fit(Xm, y, sensitive_features=pd.Series(group, name="sex"))
    assert isinstance(ver.groups_, pd.DataFrame)
    assert ver.groups_["sex"].tolist() == ["F", "M"]
    assert ver.sensitive_features_ == ["sex"]
    np.testing.assert_array_equal(ver.predict(Xm), model.predict(Xm))
    result = ver.verify(Xm, y, sensitive_features=pd.Series(group, name="sex"))
    assert result.method == "bounds"
    assert {"rate_lower", "rate_upper", "settled"} <= set(result.groups.columns)


def test_fairness_influence_runs_on_the_bounds_path():
    X, y = _continuous()
    ver = _fit_bounds(GradientBoostingClassifier(n_estimators=10, max_depth=2,
                                                 random_state=0), X, y)
    fif = ver.fairness_influence()
    assert fif.table.index.tolist() == [v for v in ver.variables_ if v != "a"]
    assert np.isfinite(fif.table.to_numpy()).all()


def test_the_single_tree_path_is_unchanged():
    """A decision tree still takes the exact tree path; method="sampling" samples an
    ensemble that method="auto" bounds."""
    X, y = _continuous()
    tree = FairnessVerifier(DecisionTreeClassifier(max_depth=3, random_state=0), "a",
                            n_draws=0, n_bootstrap=0).fit(X, y)
    assert tree.method_ == "exact"
    assert "rate_lower" not in tree.groups_
    forest = RandomForestClassifier(5, max_depth=2, random_state=0)
    params = {"n_draws": 0, "n_bootstrap": 0, "tolerance": 0.05, "random_state": 0}
    assert FairnessVerifier(forest, "a", **params).fit(X, y).method_ == "bounds"
    sampled = FairnessVerifier(forest, "a", method="sampling", **params).fit(X, y)
    assert sampled.method_ == "sampling" and "rate_lower" not in sampled.groups_


@pytest.mark.parametrize("model, match", [
    (LogisticRegression(), "method='bounds': LogisticRegression is not a tree ensemble"),
    (make_pipeline(PolynomialFeatures(2), RandomForestClassifier(3, random_state=0)),
     "method='bounds': Pipeline.*PolynomialFeatures"),
    (DecisionTreeClassifier(max_depth=2), "method='bounds': DecisionTreeClassifier"),
])
def test_method_bounds_refuses_other_models_by_name(model, match):
    X, y = _continuous(n=300)
    with pytest.raises(TypeError, match=match):
        FairnessVerifier(model, "a", method="bounds", n_draws=0).fit(X, y)


def test_method_bounds_refuses_categorical_splits():
    X, y = _continuous(n=400)
    X = X.assign(c=pd.Categorical(np.where(X["z"] > 0, "p", "q")))
    model = HistGradientBoostingClassifier(max_iter=5, categorical_features="from_dtype")
    with pytest.raises(TypeError, match="categorical"):
        FairnessVerifier(model, "a", method="bounds", n_draws=0).fit(X, y)


def test_an_unknown_method_is_refused():
    X, y = _continuous(n=300)
    with pytest.raises(InvalidParameterError, match="bounds"):
        FairnessVerifier(RandomForestClassifier(3), "a", method="bound").fit(X, y)


def test_tables_beyond_max_table_size_are_refused_by_name():
    X, y = _continuous(n=600)
    ver = FairnessVerifier(HistGradientBoostingClassifier(max_iter=50, random_state=0),
                           "a", method="bounds", n_draws=0, n_bootstrap=0,
                           max_table_size=2_000)
    with pytest.raises(TableTooLargeError, match="max_table_size"):
        ver.fit(X, y)


def test_index_ensemble_keeps_the_decision_on_every_state():
    """The ensemble restated on state ranks decides every state as the model does."""
    X, y = _categorical(seed=3)
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    ensemble = read_ensemble(model)
    values = {j: np.unique(X.iloc[:, j]).astype(float)[::-1] for j in range(X.shape[1])}
    indexed, orders, states = index_ensemble(ensemble, {j: (j, v) for j, v in values.items()},
                                             X.shape[1])
    grid = np.array(list(itertools.product(*(range(len(v)) for v in values.values()))))
    raw = np.column_stack([values[j][orders[j][grid[:, j]]] for j in range(X.shape[1])])
    np.testing.assert_array_equal(indexed.predict(grid.astype(float)),
                                  model.predict(pd.DataFrame(raw, columns=X.columns)))
    assert [states[j].n_states for j in range(X.shape[1])] == [len(v) for v in
                                                                values.values()]
    with pytest.raises(ValueError, match="no states"):
        index_ensemble(ensemble, {0: (0, values[0])}, 1)
    # two columns of one variable ranking its states in two orders
    s = np.repeat([0.0, 1.0, 2.0], 5)
    both = np.column_stack([s, np.array([1.0, 0.0, 2.0])[s.astype(int)]])
    model = GradientBoostingClassifier(n_estimators=2, max_depth=1).fit(both, both[:, 1] < 0.5)
    with pytest.raises(ValueError, match="not a range"):
        index_ensemble(read_ensemble(model), {0: (0, [0.0, 1.0, 2.0]),
                                              1: (0, [1.0, 0.0, 2.0])}, 1)


PIPELINES = {
    "scaler + RF": lambda: make_pipeline(StandardScaler(),
                                         RandomForestClassifier(10, max_depth=4,
                                                                random_state=0)),
    "imputer + scaler + GB": lambda: make_pipeline(SimpleImputer(), StandardScaler(),
                                                   GradientBoostingClassifier(
                                                       n_estimators=10, random_state=0)),
    "one-hot + HGB": lambda: make_pipeline(
        make_column_transformer((OneHotEncoder(sparse_output=False), ["g"]),
                                remainder="passthrough"),
        HistGradientBoostingClassifier(max_iter=10, random_state=0)),
    "ordinal + HGB": lambda: make_pipeline(
        make_column_transformer((OrdinalEncoder(), ["g"]), remainder="passthrough"),
        HistGradientBoostingClassifier(max_iter=10, random_state=0)),
    "ordinal + RF": lambda: make_pipeline(
        make_column_transformer((OrdinalEncoder(handle_unknown="use_encoded_value",
                                                unknown_value=-1), ["g"]),
                                remainder="passthrough"),
        RandomForestClassifier(10, max_depth=4, random_state=0)),
}


@pytest.mark.parametrize("name", list(PIPELINES))
def test_an_ensemble_behind_per_column_steps(name):
    """Pipelines of per-column steps: bounds of the enumerated truth, the model's decision."""
    X, y = _categorical(seed=5, n_features=2)
    if "one-hot" in name:
        X = X.assign(g=np.where(X["c0"] > 0, "p", "q"))
    if "ordinal" in name:  # three categories: a split sends a range of the codes left
        X = X.assign(g=np.array(["p", "q", "r"])[X["c0"].to_numpy() % 3])
    if "imputer" in name:
        X = X.astype({"c1": float})
        X.loc[X.index[::7], "c1"] = np.nan
    ver = _fit_bounds(PIPELINES[name](), X, y, tolerance=0.02)
    assert ver.method_ == "bounds"
    assert ver.agreement_ == 1.0
    truth = _enumerated_rates(ver)
    assert np.all(ver.groups_["rate_lower"] - 1e-12 <= truth)
    assert np.all(truth <= ver.groups_["rate_upper"] + 1e-12)


def test_verify_with_a_value_unseen_in_fit_between_two_others():
    """verify gives a value unseen in fit its own state, decided as the model does."""
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "c": rng.integers(0, 3, n), "x": rng.normal(a, 1.0, n)})
    y = (X["c"] + X["x"] + rng.normal(0, 0.5, n) > 1.5).astype(int)
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    model.fit(X, y)
    seen = X["c"] != 1
    ver = _fit_bounds(FrozenEstimator(model), X[seen], y[seen])
    assert ver.network_.state_names[ver.variables_.index("c")] == [0, 2]
    result = ver.verify(X, y)
    fresh = _fit_bounds(FrozenEstimator(model), X, y)
    np.testing.assert_allclose(result.groups["positive_rate"], fresh.groups_["positive_rate"],
                               atol=1e-9)
    assert result.agreement == 1.0


def test_a_user_network_with_states_out_of_order():
    """A user network may list a read column's values in any order: the same rates."""
    from skfairverify.s3p import BayesNet

    X, y = _categorical(seed=4, n_features=1)
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    model.fit(X, y)
    card = X["c0"].nunique()
    probs = np.arange(1.0, card + 1) / np.arange(1.0, card + 1).sum()
    order = np.roll(np.arange(card), 1)
    rates = []
    for states in (np.arange(card), order):
        net = BayesNet.independent([[0.4, 0.6], probs[states]], names=["a", "c0"],
                                   state_names=[[0, 1], states.tolist()])
        ver = _fit_bounds(FrozenEstimator(model), X, y, network=net)
        rates.append(ver.groups_["positive_rate"].to_numpy())
    np.testing.assert_allclose(rates[0], rates[1], atol=1e-12)


@pytest.mark.parametrize("package", ["xgboost", "lightgbm"])
def test_boosters_bounds_contain_the_enumerated_truth(package):
    """XGBoost and LightGBM binary classifiers on the bounds path (when installed)."""
    module = pytest.importorskip(package)
    X, y = _categorical(seed=6, n_features=3)
    model = (module.XGBClassifier(n_estimators=15, max_depth=3, n_jobs=1, random_state=0)
             if package == "xgboost" else
             module.LGBMClassifier(n_estimators=15, num_leaves=8, n_jobs=1, verbose=-1,
                                   random_state=0))
    for tolerance in (1e-12, 0.05):
        ver = _fit_bounds(model, X, y, tolerance=tolerance)
        truth = _enumerated_rates(ver)
        assert ver.method_ == "bounds" and ver.agreement_ == 1.0
        assert np.all(ver.groups_["rate_lower"] - 1e-12 <= truth)
        assert np.all(truth <= ver.groups_["rate_upper"] + 1e-12)


def test_mediators_and_draws_on_the_bounds_path():
    """The path-specific rate and its draws (the mediated networks) on the bounds path."""
    X, y = _continuous(n=1000)
    ver = _fit_bounds(GradientBoostingClassifier(n_estimators=10, max_depth=2,
                                                 random_state=0), X, y, n_draws=40,
                      mediators="x", tolerance=0.01)
    assert "path_specific_rate" in ver.groups_
    assert "path_specific_causal" in ver.metrics_
    low, high = ver.metric_intervals_["path_specific_causal"]
    assert low <= ver.metrics_["path_specific_causal"] <= high


def test_pessimistic_scorer_reads_the_sound_bounds_without_draws():
    """make_verifier_scorer(method="bounds", rate="network", bound="pessimistic") needs no
    draws: the score is minus the upper sound bound of the gap (the bounds path's
    metric_intervals_), below minus the point value when the bounds stop short."""
    from skfairverify import make_verifier_scorer

    X, y = _continuous(n=1500)
    model = HistGradientBoostingClassifier(max_iter=60, max_depth=6, random_state=0).fit(X, y)
    params = {"method": "bounds", "tolerance": 0.05, "n_draws": 0}
    scorer = make_verifier_scorer(sensitive_features="a", rate="network",
                                  bound="pessimistic", **params)
    ver = FairnessVerifier(FrozenEstimator(model), "a", random_state=0, n_bootstrap=0,
                           **params).fit(X)
    low, high = ver.metric_intervals_["statistical_parity"]
    assert high - low > 1e-3  # the bounds stopped short of exact
    assert scorer(model, X, y) == pytest.approx(-high, abs=1e-12)
    assert scorer(model, X, y) < -ver.metrics_["statistical_parity"]


def test_constrained_refit_picks_by_the_pessimistic_sound_bound():
    """GridSearchCV over tree ensembles with the bounds path's pessimistic SP scorer and
    fairness_constrained_refit: the chosen candidate is the most accurate of those whose
    pessimistic score (minus the upper sound bound of SP, every fold) meets the bound."""
    from sklearn.model_selection import GridSearchCV

    from skfairverify import fairness_constrained_refit, make_verifier_scorer

    X, y = _continuous(n=1200)
    sp = make_verifier_scorer(sensitive_features="a", rate="network", bound="pessimistic",
                              method="bounds", tolerance=0.05, n_draws=0)
    grid = {"max_depth": [1, 2, 3], "max_iter": [5, 20]}
    search = GridSearchCV(HistGradientBoostingClassifier(random_state=0), grid, cv=2,
                          scoring={"acc": "accuracy", "sp": sp}, refit=False).fit(X, y)
    results = search.cv_results_
    threshold = float(np.median(results["mean_test_sp"]))
    refit = fairness_constrained_refit("acc", "sp", threshold)
    chosen = refit(results)
    fair = np.flatnonzero(results["mean_test_sp"] >= threshold)
    assert 0 < len(fair) < len(results["mean_test_sp"])  # the bound excludes some
    assert chosen in fair
    assert results["mean_test_acc"][chosen] == results["mean_test_acc"][fair].max()


def _holes(X, columns, share=0.1, seed=0):
    """``X`` with a share of each of ``columns`` missing (NaN)."""
    rng = np.random.default_rng(seed)
    X = X.astype(float)
    for c in columns:
        X.loc[rng.random(len(X)) < share, c] = np.nan
    return X


NAN_MODELS = {
    "HGB": lambda: HistGradientBoostingClassifier(max_iter=15, max_depth=3, random_state=0),
    "RF": lambda: RandomForestClassifier(15, max_depth=4, random_state=0),
}


@pytest.mark.parametrize("kind", ["HGB", "RF", "XGB"])
@pytest.mark.parametrize("seed", [0, 2])
def test_missing_values_the_trees_route_both_ways_are_a_state_of_their_own(kind, seed):
    """A model fitted without missing values sends a NaN to the larger child, left at
    some nodes and right at others: the missing value is its column's own state, each
    split sending it as the node does; the exact rates equal the enumerated joint of
    network_ (which has the missing states), the decisions on the states the model's."""
    if kind == "XGB":
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBClassifier(n_estimators=15, max_depth=3, n_jobs=1,
                                      random_state=0)
    else:
        model = NAN_MODELS[kind]()
    X, y = _categorical(seed=seed, n_features=3)
    model.fit(X.astype(float), y)
    holes = _holes(X, ["c0", "c1"], seed=seed)
    ver = _fit_bounds(FrozenEstimator(model), holes, y)
    assert ver.method_ == "bounds" and ver.agreement_ == 1.0
    assert any(np.isnan(s).any() for s in ver.network_.state_names[1:])
    np.testing.assert_allclose(ver.groups_["positive_rate"], _enumerated_rates(ver),
                               atol=1e-12)
    np.testing.assert_array_equal(ver.groups_["rate_lower"], ver.groups_["rate_upper"])


def test_index_ensemble_gives_the_missing_state_its_own_side():
    """Restated on ranks with the missing state last (given as NaN), the trees decide
    every state as the model decides its value, NaN included, whatever side each node
    sends a NaN (a model fitted without them)."""
    X, y = _continuous(n=600)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X[["x"]], y)
    ensemble = read_ensemble(model)
    sides = np.concatenate([t.missing_left[t.children_left >= 0] for t in ensemble.trees])
    assert sides.any() and not sides.all()  # a NaN of x goes both ways
    x = np.concatenate([[np.nan], np.linspace(-2, 3, 40)])
    indexed, orders, states = index_ensemble(ensemble, {0: (0, x)}, 1)
    assert states[0].missing and states[0].n_states == x.size
    assert np.isnan(x[orders[0][-1]])  # the missing state ranks last
    ranks = np.arange(x.size, dtype=float)
    ranks[-1] = np.nan
    np.testing.assert_array_equal(indexed.raw_score(ranks[:, None]),
                                  ensemble.raw_score(x[orders[0]][:, None]))


# ---------------------------------------------------------------- method="auto"
@pytest.mark.parametrize("kind", ["HGB", "RF", "GB", "ET"])
def test_auto_bounds_an_ensemble_the_check_passes(kind):
    """method="auto" takes the bounds path when the check passes: method_ "bounds", the
    groups and rates of method="bounds" (the same path, the same fit)."""
    X, y = _continuous(n=800)
    auto = FairnessVerifier(MODELS[kind](0), "a", n_draws=0, n_bootstrap=0,
                            random_state=0).fit(X, y)
    bounds = _fit_bounds(MODELS[kind](0), X, y, tolerance=0.005)
    assert auto.method_ == "bounds"
    pd.testing.assert_frame_equal(auto.groups_, bounds.groups_)


def test_auto_samples_what_the_check_refuses():
    """What the bounds path refuses or would not pay off is sampled by method="auto",
    with no error: a one-hot encoder of three categories, more joint states than the
    limit; method="bounds" refuses the first by name. Missing values routed both ways
    are a state of their own: bounded."""
    from skfairverify.verification import _ensemble_path

    rng = np.random.default_rng(0)
    X, y = _continuous(n=800)
    X["c"] = rng.choice(["p", "q", "r"], len(X))
    y = (y + (X["c"] == "q")).clip(0, 1)
    onehot = make_pipeline(
        make_column_transformer((OneHotEncoder(sparse_output=False), ["c"]),
                                remainder="passthrough"),
        GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0))
    fast = {"n_draws": 0, "n_bootstrap": 0, "tolerance": 0.05, "random_state": 0}
    assert FairnessVerifier(onehot, "a", **fast).fit(X, y).method_ == "sampling"
    with pytest.raises(ValueError, match="On column 'c': .*not a range"):
        FairnessVerifier(onehot, "a", method="bounds", **fast).fit(X, y)
    X, y = _continuous(n=600)
    model = FrozenEstimator(HistGradientBoostingClassifier(max_iter=10,
                                                           random_state=0).fit(X, y))
    holes = X.assign(x=X["x"].where(X.index > 5))  # routed both ways: its own state
    assert FairnessVerifier(model, "a", **fast).fit(holes, y).method_ == "bounds"
    assert FairnessVerifier(model, "a", **fast).fit(X, y).method_ == "bounds"
    limit = _ensemble_path.AUTO_MAX_COST
    try:
        _ensemble_path.AUTO_MAX_COST = 1.0
        assert FairnessVerifier(model, "a", **fast).fit(X, y).method_ == "sampling"
    finally:
        _ensemble_path.AUTO_MAX_COST = limit


def test_the_check_estimates_the_cost_from_the_restated_ensemble():
    """plan_bounds: the cost's trees, leaves and states are the model's and the
    encoding's; a model no reader reads is not planned."""
    from skfairverify.verification._ensemble_path import plan_bounds
    from skfairverify.verification._settings import Settings

    X, y = _continuous(n=800)
    model = GradientBoostingClassifier(n_estimators=12, max_depth=2, random_state=0).fit(X, y)
    ver = FairnessVerifier(FrozenEstimator(model), "a")
    plan = plan_bounds(Settings.of(ver), FrozenEstimator(model), X, None, ["a"],
                       list(X.columns))
    assert plan.takes and plan.path is not None
    ensemble = read_ensemble(model)
    assert plan.cost.n_trees == 12 and plan.cost.n_leaves == ensemble.n_leaves
    fitted = _fit_bounds(FrozenEstimator(model), X, y)
    read = [v.cardinality for v in fitted._variables.encoding.variables
            if v.name in {"x", "z", "w"} & set(fitted.variables_)]
    assert sorted(plan.cost.states) == sorted(read)
    assert plan.cost.cost == pytest.approx(np.log2(np.prod(read)))
    logistic = plan_bounds(Settings.of(ver), LogisticRegression().fit(X, y), X, None,
                           ["a"], list(X.columns))
    assert not logistic.takes and logistic.path is None


# ---------------------------------------------------------------- the favorable label
@pytest.mark.parametrize("kind", ["HGB", "GB", "RF"])
def test_the_favorable_label_wrapper_is_read_through(kind):
    """The audit's FavorableDecisions of the model's classes_[0]: the bounds of the
    complement decision, 1 - upper and 1 - lower of the model's own, and the truth of
    the wrapper's rates (enumerated) inside them; of classes_[1], the model's bounds."""
    from skfairverify.audit._data import FavorableDecisions

    X, y = _categorical(seed=1, n_features=3)
    model = MODELS[kind](1).fit(X, y)
    own = _fit_bounds(FrozenEstimator(model), X, y, tolerance=0.02)
    for favorable, flipped in ((0, True), (1, False)):
        wrapped = FrozenEstimator(FavorableDecisions(model, favorable))
        labels = (y == favorable).astype(int)
        ver = _fit_bounds(wrapped, X, labels, tolerance=0.02)
        assert ver.method_ == "bounds"
        g, o = ver.groups_, own.groups_
        if flipped:
            np.testing.assert_allclose(g["rate_lower"], 1 - o["rate_upper"], atol=1e-12)
            np.testing.assert_allclose(g["rate_upper"], 1 - o["rate_lower"], atol=1e-12)
        else:
            np.testing.assert_allclose(g["rate_lower"], o["rate_lower"], atol=1e-12)
            np.testing.assert_allclose(g["rate_upper"], o["rate_upper"], atol=1e-12)
        truth = _enumerated_rates(ver)
        assert np.all(g["rate_lower"] - 1e-12 <= truth)
        assert np.all(truth <= g["rate_upper"] + 1e-12)
        assert ver.agreement_ == 1.0


def test_imputed_missing_values_refused_with_their_cause():
    """A missing value that an imputer turns into a number inside the column's range,
    with a missing indicator the trees split on, cannot be a state at one end of the
    ranks: method="bounds" names that cause (not a one-hot encoder), method="auto"
    samples it. The same split in the middle of a column without missing values keeps
    the general reason; the rank check is the one-off-the-range test it claims."""
    from skfairverify.ensembles._states import _a_range_but

    rng = np.random.default_rng(1)
    X, y = _continuous(n=800)
    X["x"] = X["x"].where(rng.random(len(X)) > 0.2)
    model = make_pipeline(SimpleImputer(add_indicator=True),
                          HistGradientBoostingClassifier(max_iter=15, random_state=0))
    model.fit(X, (y + X["x"].isna()).clip(0, 1))
    fast = {"n_draws": 0, "n_bootstrap": 0, "tolerance": 0.05, "random_state": 0}
    with pytest.raises(ValueError, match=r"On column 'x': .*missing values, and they reach "
                                         r"the trees as an ordinary value.*imputer"):
        FairnessVerifier(model, "a", method="bounds", **fast).fit(X, y)
    assert FairnessVerifier(model, "a", **fast).fit(X, y).method_ == "sampling"
    # a split that sends a middle state alone, on a variable without missing values
    s = np.repeat([0.0, 1.0, 2.0], 5)
    both = np.column_stack([s, (s == 1.0).astype(float)])
    middle = GradientBoostingClassifier(n_estimators=2, max_depth=1).fit(both, s == 1.0)
    values = {0: (0, [0.0, 1.0, 2.0]), 1: (0, [0.0, 1.0, 0.0])}
    with pytest.raises(ValueError, match="one-hot encoded category among others"):
        index_ensemble(read_ensemble(middle), values, 1)
    # the same values, the middle state a missing one imputed: the imputer's reason
    with pytest.raises(ValueError, match="imputer"):
        index_ensemble(read_ensemble(middle), values, 1, missing_states={0: 1})
    left = np.array([True, False, True, True])
    assert _a_range_but(left, 0) and _a_range_but(left, 1)
    assert not _a_range_but(left, 3) and not _a_range_but(np.array([1, 0, 1, 0, 1], bool), 4)
