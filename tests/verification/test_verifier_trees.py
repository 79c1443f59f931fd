"""Exact path for decision trees: reading, refined states, exact rates vs enumeration."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier

from skfairverify.preprocessing import BinningDiscretizer
from skfairverify.rules import (
    CategorySet,
    Intervals,
    is_tree_model,
    positive_leaves,
)
from skfairverify.s3p import BayesNet, TableTooLargeError
from skfairverify.verification._influence import uniform_network
from skfairverify.verification._trees_exact import region_probabilities, tree_group_rates
from skfairverify.verification._trees_states import (
    StateIndicators,
    refined_cuts,
    state_indicators,
    tree_encoding,
)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r"], n)
    x = rng.integers(0, 8, n).astype(float) + (a == "q")
    z = rng.normal(size=n) + 0.5 * (a == "r")
    c = rng.choice(["u", "v", "w", "t"], n)
    X = pd.DataFrame({"a": a, "x": x, "z": z, "c": c})
    score = 0.3 * x + z + (c == "v") - (a == "p") + rng.normal(size=n)
    return X, np.where(score > 1.5, "yes", "no")


def _tree(depth, seed=0):
    return DecisionTreeClassifier(max_depth=depth, random_state=seed)


def _pipelines(depth=6, seed=0):
    """Trees inside pipelines of every supported kind of step (name -> (model, columns))."""
    ohe = OneHotEncoder(handle_unknown="ignore")
    return {
        "scaler_onehot": make_pipeline(
            make_column_transformer((StandardScaler(), ["x", "z"]), (ohe, ["a", "c"])),
            _tree(depth, seed)),
        "minmax_robust_maxabs": make_pipeline(
            make_column_transformer((MinMaxScaler(), ["x"]), (RobustScaler(), ["z"]),
                                    (OneHotEncoder(drop="first"), ["a", "c"])),
            MaxAbsScaler(), _tree(depth, seed)),
        "kbins_ordinal": make_pipeline(
            make_column_transformer(
                (make_pipeline(StandardScaler(), KBinsDiscretizer(
                    6, encode="ordinal", quantile_method="averaged_inverted_cdf")), ["x", "z"]),
                (OneHotEncoder(), ["a", "c"])),
            _tree(depth, seed)),
        "kbins_onehot": make_pipeline(
            make_column_transformer(
                (KBinsDiscretizer(5, quantile_method="averaged_inverted_cdf"), ["x", "z"]),
                (OneHotEncoder(), ["a", "c"])),
            _tree(depth, seed)),
        "ordinal_encoder": make_pipeline(
            make_column_transformer((StandardScaler(), ["x", "z"]),
                                    (OrdinalEncoder(), ["a", "c"])),
            _tree(depth, seed)),
        "ordinal_unknown_value": make_pipeline(
            make_column_transformer(("passthrough", ["x", "z"]), (OrdinalEncoder(
                handle_unknown="use_encoded_value", unknown_value=-1), ["a", "c"])),
            _tree(depth, seed)),
        "binning_discretizer": make_pipeline(
            make_column_transformer((make_pipeline(MinMaxScaler(), BinningDiscretizer(5)),
                                     ["x", "z"]), (OneHotEncoder(), ["a", "c"])),
            _tree(depth, seed)),
    }


# ------------------------------------------------------------------------ reading
@pytest.mark.parametrize("name", list(_pipelines()))
def test_regions_reproduce_predict_through_pipelines(name):
    """Positive regions on the raw columns == the pipeline's predict == classes_[1]."""
    X, y = _data()
    model = _pipelines()[name].fit(X, y)
    leaves = positive_leaves(model)
    X_new, _ = _data(n=2000, seed=1)
    rng = np.random.default_rng(0)
    probes = []  # every boundary and its float64 neighbours (bin edges included)
    for c, t in leaves.thresholds.items():
        for v in t:
            rows = X.iloc[rng.integers(len(X), size=3)].copy()
            rows[c] = [v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf)]
            probes.append(rows)
    for frame in (X, X_new, pd.concat(probes, ignore_index=True)):
        expected = model.predict(frame) == "yes"
        np.testing.assert_array_equal(leaves.predict_positive(frame), expected)
    assert list(leaves.classes) == ["no", "yes"]
    assert set(leaves.read) <= {"a", "x", "z", "c"}


@pytest.mark.parametrize("encoder", [
    {}, {"encoded_missing_value": -1},
    {"handle_unknown": "use_encoded_value", "unknown_value": 7},
    {"handle_unknown": "use_encoded_value", "unknown_value": np.nan},
])
def test_ordinal_encoder_missing_and_unknown_categories_go_where_predict_sends_them(encoder):
    """An OrdinalEncoder's codes before a tree: a missing category (its NaN code routed
    as the node routes missing values, or its own code), an unknown one (its
    unknown_value), each decided as the pipeline's predict decides it."""
    X, y = _data(n=600, seed=2)
    X.loc[X.index % 7 == 0, "c"] = np.nan
    model = make_pipeline(make_column_transformer(("passthrough", ["x", "z"]),
                                                  (OrdinalEncoder(**encoder), ["a", "c"])),
                          _tree(6, 0)).fit(X, y)
    leaves = positive_leaves(model)
    assert "c" in leaves.categories
    X_new, _ = _data(n=2000, seed=3)
    X_new.loc[X_new.index % 5 == 0, "c"] = np.nan
    if encoder.get("handle_unknown") == "use_encoded_value":
        X_new.loc[X_new.index % 11 == 0, "c"] = "unseen"
    expected = model.predict(X_new) == "yes"
    np.testing.assert_array_equal(leaves.predict_positive(X_new), expected)
    assert 0 < expected.mean() < 1


def test_ordinal_encoder_refusals_name_the_step():
    X, y = _data()
    rare = make_pipeline(make_column_transformer(
        ("passthrough", ["x", "z"]), (OrdinalEncoder(min_frequency=150), ["a", "c"])),
        _tree(3)).fit(X, y)
    with pytest.raises(TypeError, match="OrdinalEncoder with infrequent categories"):
        positive_leaves(rare)
    scaled = make_pipeline(make_column_transformer(
        (make_pipeline(StandardScaler(), OrdinalEncoder()), ["x"])), _tree(3)).fit(X, y)
    with pytest.raises(TypeError, match="ordinal encoder is read only when it is applied "
                                        "to a raw input column"):
        positive_leaves(scaled)


def test_regions_exact_at_thresholds_and_in_float32():
    """Values at a threshold and a float64 hair either side go where the tree sends them."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x": rng.normal(size=300), "w": rng.normal(size=300) * 1e3})
    y = (X["x"] + X["w"] / 1e3 + rng.normal(size=300) * 0.3 > 0).astype(int)
    for model in (_tree(6), make_pipeline(StandardScaler(), _tree(6)),
                  make_pipeline(MinMaxScaler(), RobustScaler(), _tree(6))):
        model.fit(X, y)
        leaves = positive_leaves(model)
        probes = []
        for c, t in leaves.thresholds.items():
            for v in t:
                for p in (v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf)):
                    row = X.iloc[[rng.integers(len(X))]].copy()
                    row[c] = p
                    probes.append(row)
        probes = pd.concat(probes, ignore_index=True)
        np.testing.assert_array_equal(leaves.predict_positive(probes),
                                      model.predict(probes) == 1)


def test_tie_goes_to_the_first_class():
    """A leaf with equal class weights predicts classes_[0]: not a positive leaf."""
    X = pd.DataFrame({"x": [0.0, 0.0, 1.0, 1.0, 1.0]})
    model = DecisionTreeClassifier(random_state=0).fit(X, [0, 1, 1, 1, 1])
    assert model.predict(pd.DataFrame({"x": [0.0]}))[0] == 0
    leaves = positive_leaves(model)
    assert len(leaves.regions) == 1
    (lo, hi), = leaves.regions[0].conditions["x"].bounds
    # the largest float64 that float32 rounds to 0.5 or below still goes left
    assert lo == pytest.approx(0.5, abs=1e-7) and hi == np.inf
    assert model.predict(pd.DataFrame({"x": [lo, np.nextafter(lo, 1)]})).tolist() == [0, 1]


def test_frozen_and_unnamed_columns():
    X, y = _data()
    arr = X[["x", "z"]].to_numpy()
    model = _tree(4).fit(arr, y)
    leaves = positive_leaves(FrozenEstimator(model))
    assert leaves.feature_names_in == ["x0", "x1"]
    frame = pd.DataFrame(arr, columns=["x0", "x1"])
    np.testing.assert_array_equal(leaves.predict_positive(frame), model.predict(arr) == "yes")
    renamed = positive_leaves(model, columns=["x", "z"])
    np.testing.assert_array_equal(renamed.predict_positive(X), model.predict(arr) == "yes")
    assert is_tree_model(FrozenEstimator(model)) and not is_tree_model(LogisticRegression())


@pytest.mark.parametrize("make, match", [
    (lambda: make_pipeline(PolynomialFeatures(), _tree(3)), "polynomialfeatures"),
    (lambda: make_pipeline(MinMaxScaler(clip=True), _tree(3)), "minmaxscaler"),
    (lambda: LogisticRegression(), "not a DecisionTreeClassifier"),
    (lambda: make_pipeline(
        make_column_transformer((make_pipeline(StandardScaler(), OneHotEncoder()), ["x"])),
        _tree(3)), "onehotencoder"),
])
def test_unreadable_steps_are_refused_by_name(make, match):
    X, y = _data()
    model = make().fit(X[["x", "z"]], y)
    with pytest.raises(TypeError, match=match):
        positive_leaves(model)


def test_multiclass_refused():
    X, _ = _data()
    model = _tree(3).fit(X[["x", "z"]], np.arange(len(X)) % 3)
    with pytest.raises(TypeError, match="binary"):
        positive_leaves(model)


def test_interval_and_category_algebra():
    a = Intervals(((-np.inf, 1.0), (2.0, 3.0)))
    assert (~~a) == a
    assert (a & ~a).is_empty and (a | ~a) == Intervals.everything()
    assert a.covers(2.0, 3.0) is True and a.covers(3.0, 4.0) is False
    assert a.covers(0.5, 2.5) is None
    s = CategorySet(frozenset({"u"}), False, frozenset({"u", "v"}))
    assert (s | ~s).contains(["u", "v", "new"]).all()
    assert not (s & ~s).contains(["u", "v", "new"]).any()


# ------------------------------------------------------------------------ states
def test_refined_cuts_contain_thresholds_and_are_bounded():
    rng = np.random.default_rng(0)
    x = rng.normal(size=1000)
    thr = np.sort(rng.normal(size=15))
    cuts = refined_cuts(x, thr, n_bins=10, max_states=100)
    assert np.isin(thr, cuts).all() and len(cuts) + 1 <= 100
    assert len(cuts) > len(thr)  # quantiles merged in
    small = refined_cuts(x, thr, n_bins=10, max_states=18)
    assert np.isin(thr, small).all() and len(small) + 1 <= 18
    with pytest.raises(TableTooLargeError, match="15 distinct thresholds.*16 states"):
        refined_cuts(x, thr, max_states=10, column="x")


def test_codes_of_data_agree_with_regions():
    """The state codes of the data and the indicators give the tree's predictions."""
    X, y = _data()
    model = _pipelines()["scaler_onehot"].fit(X, y)
    leaves = positive_leaves(model)
    enc = tree_encoding(X, leaves, ["a"], n_bins=4)
    ind = state_indicators(enc, leaves)
    codes = enc.codes(X)
    inside = np.ones((len(X), ind.n_regions))
    for v, m in ind.by_variable.items():
        inside *= m[:, codes[:, v]].T
    assert inside.sum(axis=1).max() <= 1.0  # disjoint regions
    np.testing.assert_array_equal(inside.sum(axis=1) == 1, model.predict(X) == "yes")


def test_too_many_thresholds_refused():
    X, y = _data(n=2000)
    model = DecisionTreeClassifier(random_state=0).fit(X[["z"]], y)
    leaves = positive_leaves(model)
    with pytest.raises(TableTooLargeError, match="max_states=20"):
        tree_encoding(X, leaves, ["a"], max_states=20)


# ------------------------------------------------------------------------ exact rates
def _random_network(enc, sensitive, rng):
    """Random DAG over the variables (sensitive ones first, roots) and Dirichlet CPTs."""
    n = len(enc.names)
    cards = enc.cardinalities
    sens = [enc.index(s) for s in sensitive]
    parents = []
    for i in range(n):
        if i in sens:
            parents.append(())
            continue
        pool = [j for j in range(i)]
        k = min(len(pool), int(rng.integers(0, 3)))
        parents.append(tuple(sorted(rng.choice(pool, k, replace=False).tolist())) if k else ())
    cpts = [rng.dirichlet(np.ones(cards[i]) * 0.7, size=[cards[p] for p in parents[i]])
            for i in range(n)]
    return BayesNet(cards, parents, cpts, names=enc.names,
                    state_names=[v.states for v in enc.variables])


def _enumerated(network, enc, model, columns, sens_idx):
    """Brute force: Pr[predict == positive | A] by enumerating every joint state."""
    cards = network.cardinalities
    states = np.array(list(itertools.product(*[range(c) for c in cards])))
    prob = np.ones(len(states))
    for i in range(len(cards)):
        table = np.asarray(network.cpts[i])
        prob *= table[tuple(states[:, p] for p in network.parents[i]) + (states[:, i],)]
    frame = {}
    for k, v in enumerate(enc.variables):
        rep = np.asarray(v.values if v.kind != "categories" else v.states, dtype=object)
        frame[v.name] = rep[states[:, k]]
    frame = pd.DataFrame(frame)
    for c in columns:
        if c not in frame:
            frame[c] = 0.0  # a column the tree never reads
        elif enc.variables[enc.index(c)].kind != "categories":
            frame[c] = frame[c].astype(float)
    positive = model.predict(frame[columns]) == model.classes_[1]
    groups = states[:, sens_idx]
    rates = {}
    for g in np.unique(groups, axis=0):
        m = (groups == g).all(axis=1)
        rates[tuple(g)] = float((prob * positive)[m].sum() / prob[m].sum())
    return rates, frame, states, positive


def _check_against_enumeration(model, X, columns, sensitive, seed, n_bins=4):
    rng = np.random.default_rng(seed)
    leaves = positive_leaves(model)
    enc = tree_encoding(X, leaves, sensitive, n_bins=n_bins)
    net = _random_network(enc, sensitive, rng)
    sens_idx = [enc.index(s) for s in sensitive]
    expected, frame, states, positive = _enumerated(net, enc, model, columns, sens_idx)
    groups = np.array(list(expected))
    got = tree_group_rates(net, enc, leaves, sens_idx, groups, max_table_size=10**6)
    np.testing.assert_allclose(got, [expected[tuple(g)] for g in groups], rtol=0, atol=1e-9)
    assert ((got >= 0) & (got <= 1)).all()
    # every value of a cell is decided alike: check the cells' two ends
    for k, v in enumerate(enc.variables):
        if v.kind != "binned":
            continue
        cells = enc.discretizer.cells(enc.binned.index(v.name))
        for end in (cells[:, 1], np.nextafter(cells[:, 0], np.inf)):
            end = np.where(np.abs(end) < 1e300, end, v.values)  # infinite ends: the value
            probe = frame.copy()
            probe[v.name] = end[states[:, k]]
            pred = model.predict(probe[columns]) == model.classes_[1]
            np.testing.assert_array_equal(pred, positive)
    return net, enc, leaves, sens_idx, groups


@pytest.mark.parametrize("seed", range(4))
def test_exact_rates_equal_enumeration_raw_tree(seed):
    """Numeric columns (a sensitive code read by the tree, few values, continuous)."""
    X, y = _data(seed=seed)
    X = X.assign(a=X["a"].map({"p": 0, "q": 1, "r": 2}))
    cols = ["a", "x", "z"]
    depth = int(np.random.default_rng(seed).integers(2, 7))
    model = _tree(depth, seed).fit(X[cols], y)
    # n_bins=10: x (9 values) has one state per value; n_bins=4: refined cells
    n_bins = 10 if seed % 2 else 4
    _, enc, *_ = _check_against_enumeration(model, X, cols, ["a"], seed, n_bins=n_bins)
    assert enc.variables[enc.index("x")].kind == ("values" if seed % 2 else "binned")


@pytest.mark.parametrize("name", list(_pipelines()))
def test_exact_rates_equal_enumeration_pipelines(name):
    """Categorical and numeric columns through scalers, binnings and one-hot encoders."""
    X, y = _data(seed=5)
    model = _pipelines(depth=5, seed=1)[name].fit(X, y)
    _check_against_enumeration(model, X, ["a", "x", "z", "c"], ["a"], seed=7)


def test_exact_rates_two_sensitive_and_modified_network():
    """Compound groups, and any network over the same variables (uniform_network)."""
    X, y = _data(seed=2)
    X = X.assign(g=np.random.default_rng(2).choice(["m", "f"], len(X)))
    model = make_pipeline(
        make_column_transformer((StandardScaler(), ["x", "z"]), (OneHotEncoder(), ["c"])),
        _tree(5)).fit(X, y)
    net, enc, leaves, sens_idx, groups = _check_against_enumeration(
        model, X, ["a", "x", "z", "c", "g"], ["a", "g"], seed=3)
    for feature in ("z", "c"):
        i = enc.index(feature)
        modified = uniform_network(net, [i], [enc.variables[i].support_distribution()])
        expected, *_ = _enumerated(modified, enc, model, ["x", "z", "c"], sens_idx)
        got = tree_group_rates(modified, enc, leaves, sens_idx, groups, 10**6)
        np.testing.assert_allclose(got, [expected[tuple(g)] for g in groups], atol=1e-9)


def test_chunked_regions_equal_one_pass_and_guard():
    X, y = _data(seed=4)
    model = _pipelines(depth=6)["scaler_onehot"].fit(X, y)
    leaves = positive_leaves(model)
    enc = tree_encoding(X, leaves, ["a"], n_bins=4)
    net = _random_network(enc, ["a"], np.random.default_rng(0))
    ind = state_indicators(enc, leaves)
    full = region_probabilities(net, ind, [0], 10**7)
    per_state = max(net.cardinalities) ** 3 * 3
    small = region_probabilities(net, ind, [0], per_state * 3)
    np.testing.assert_allclose(small, full, atol=1e-12)
    np.testing.assert_allclose(full[..., -1].sum(), 1.0)
    with pytest.raises(TableTooLargeError, match="max_table_size=5"):
        region_probabilities(net, ind, [0], 5)


def test_trivial_trees_and_zero_probability_group():
    X = pd.DataFrame({"a": [0, 1, 0, 1], "x": [1.0, 1.0, 1.0, 1.0]})
    net = BayesNet([2], [()], [np.array([0.4, 0.6])], names=["a"])
    for labels, rate in (([1, 1, 1, 0], 1.0), ([0, 0, 0, 1], 0.0)):
        leaves = positive_leaves(_tree(3).fit(X[["x"]], labels))
        enc = tree_encoding(X, leaves, ["a"])
        got = tree_group_rates(net, enc, leaves, [0], [[0], [1]], 100)
        np.testing.assert_array_equal(got, [rate, rate])
    zero = BayesNet([2], [()], [np.array([1.0, 0.0])], names=["a"],
                    state_names=[[0, 1]])
    with pytest.raises(ValueError, match="probability 0"):
        tree_group_rates(zero, StateIndicators(0, {}), None, [0], [[0], [1]], 100)


def test_indicator_shape_mismatch_refused():
    net = BayesNet([2, 3], [(), ()], [np.full(2, .5), np.full(3, 1 / 3)])
    with pytest.raises(ValueError, match="expected \\(1, 3\\)"):
        tree_group_rates(net, StateIndicators(1, {1: np.ones((1, 4))}), None, [0],
                         [[0], [1]], 100)


def test_work_guard_before_computing():
    """A chain of 20 variables and 400 regions: every factor fits by chunks, the work
    does not (120 units per entry of max_table_size at the measured 20 ns per unit)."""
    rng = np.random.default_rng(0)
    cards = [2] + [8] * 19
    parents = [()] + [(i - 1,) for i in range(1, 20)]
    cpts = [rng.dirichlet(np.ones(cards[i]), size=[cards[p] for p in parents[i]])
            for i in range(20)]
    net = BayesNet(cards, parents, cpts)
    ind = StateIndicators(400, {i: (rng.random((400, 8)) < 0.9).astype(float)
                                for i in range(1, 20)})
    full = region_probabilities(net, ind, [0], 10**6)
    np.testing.assert_allclose(full[:, -1], cpts[0])
    with pytest.raises(TableTooLargeError, match="work units"):
        region_probabilities(net, ind, [0], 1_000)


@pytest.mark.slow
def test_adult_depth8_exact_against_monte_carlo_and_data():
    """Adult (test file, 15,060 rows), sex x race, a depth-8 tree: exact rates within
    Monte Carlo error of the same network (100,000 samples + predict), and close to
    (not equal to) the tree's positive rates on the data."""
    from skfairverify.datasets import load_adult
    from skfairverify.verification._network import learn_network

    data = load_adult(split="test", dropna=True)
    X, y = data.data.drop(columns="split"), data.target.to_numpy()
    cat = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    num = [c for c in X.columns if c not in cat]
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(handle_unknown="ignore"), cat),
                                ("passthrough", num)),
        _tree(8)).fit(X, y)
    leaves = positive_leaves(model)
    np.testing.assert_array_equal(leaves.predict_positive(X), model.predict(X) == 1)
    sens = ["sex", "race"]
    enc = tree_encoding(X, leaves, sens, n_bins=10)
    codes = enc.codes(X)
    net = learn_network(codes, enc.names, enc.cardinalities, sens,
                        coarsenable=[v.kind == "binned" for v in enc.variables])
    groups = np.unique(codes[:, [0, 1]], axis=0)
    exact = tree_group_rates(net, enc, leaves, [0, 1], groups, 50_000_000)
    samples = net.sample(100_000, random_state=0)
    frame = pd.DataFrame({
        v.name: np.asarray(v.values if v.kind != "categories" else v.states,
                           dtype=object)[samples[:, j]]
        for j, v in enumerate(enc.variables)})
    for c in X.columns:
        frame[c] = X[c].iloc[0] if c not in frame else frame[c]
        if c in num:
            frame[c] = frame[c].astype(float)
    positive = model.predict(frame[X.columns]) == 1
    pred = model.predict(X) == 1
    for g, rate in zip(groups, exact):
        m = (samples[:, [0, 1]] == g).all(axis=1)
        se = np.sqrt(rate * (1 - rate) / m.sum())
        assert abs(positive[m].mean() - rate) < 4.5 * se
        empirical = pred[(codes[:, [0, 1]] == g).all(axis=1)].mean()
        assert abs(empirical - rate) < 0.06
    empirical = [pred[(codes[:, [0, 1]] == g).all(axis=1)].mean() for g in groups]
    assert np.max(np.abs(np.array(empirical) - exact)) > 1e-3  # a model, not the data


# ------------------------------------------------------------------------ verifier path
def _tree_verifier_class():
    """FairnessVerifier, which dispatches decision trees to the exact tree path."""
    from skfairverify import FairnessVerifier

    return FairnessVerifier


def test_verifier_tree_path_equals_enumeration(rebuilt):
    """fit (rates, EO), fairness_influence and verify of the tree path against
    enumeration of the learned networks with the model's predict."""
    X, y = _data(n=600, seed=8)
    model = make_pipeline(
        make_column_transformer((StandardScaler(), ["x", "z"]), (OneHotEncoder(), ["c"])),
        _tree(4))
    ver = _tree_verifier_class()(model, "a", network="learn", n_bins=4, max_indegree=1)
    ver.fit(X, y)
    parts = rebuilt(ver, X, y)
    enc, net = parts.encoding, ver.network_
    sens_idx = [enc.index("a")]
    cols = ["a", "x", "z", "c"]
    expected, *_ = _enumerated(net, enc, ver.estimator_, cols, sens_idx)
    codes = parts.run.evaluation.group_codes
    np.testing.assert_allclose(ver.groups_["positive_rate"],
                               [expected[tuple(g)] for g in codes], atol=1e-9)
    assert ver.agreement_ == 1.0 and ver.multiplier_ is None
    assert {"true_positive_rate", "false_positive_rate"} <= set(ver.groups_.columns)
    assert "equalized_odds" in ver.metrics_
    fif = ver.fairness_influence(["z"]).table
    i = enc.index("z")
    ref = uniform_network(net, [i], [enc.variables[i].support_distribution()])
    under, *_ = _enumerated(ref, enc, ver.estimator_, cols, sens_idx)
    np.testing.assert_allclose(
        fif.loc["z"].to_numpy(),
        [expected[tuple(g)] - under[tuple(g)] for g in codes], atol=1e-9)
    X_new, y_new = _data(n=600, seed=9)
    result = ver.verify(X_new, y_new)
    assert result.groups["positive_rate"].between(0, 1).all()


def test_verifier_tree_path_with_a_given_network(rebuilt):
    """A user BayesNet (numeric state names = values) on the tree path: enumeration."""
    X, y = _data(n=600, seed=10)
    model = make_pipeline(
        make_column_transformer(("passthrough", ["x"]), (OneHotEncoder(), ["c"])), _tree(4))
    states = [["p", "q", "r"], sorted(X["x"].unique().tolist()), ["t", "u", "v", "w"]]
    rng = np.random.default_rng(1)
    cpts = [rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(len(states[1])), size=3),
            rng.dirichlet(np.ones(4), size=(3, len(states[1])))]
    net = BayesNet([len(s) for s in states], [(), (0,), (0, 1)], cpts,
                   names=["a", "x", "c"], state_names=states)
    ver = _tree_verifier_class()(model, "a", network=net).fit(X[["a", "x", "c"]], y)
    parts = rebuilt(ver, X[["a", "x", "c"]], y)
    enc = parts.encoding
    assert [v.kind for v in enc.variables] == ["categories", "values", "categories"]
    expected, *_ = _enumerated(net, enc, ver.estimator_, ["a", "x", "c"], [0])
    codes = parts.run.evaluation.group_codes
    np.testing.assert_allclose(ver.groups_["positive_rate"],
                               [expected[tuple(g)] for g in codes], atol=1e-9)


def test_bool_column_and_non_numeric_column_read_as_number():
    X, y = _data(seed=11)
    X = X.assign(b=X["z"] > 0)
    model = _tree(4, 0).fit(X[["b", "x"]], y)
    leaves = positive_leaves(model)
    enc = tree_encoding(X, leaves, ["a"])
    assert leaves.read == ["b", "x"]
    var = enc.variables[enc.index("b")]
    assert var.kind == "values" and var.values.tolist() == [0.0, 1.0]
    _check_against_enumeration(model, X, ["b", "x"], ["a"], seed=11)
    with pytest.raises(ValueError, match="read by the tree as a number"):
        tree_encoding(X.assign(x=X["x"].astype(str)), leaves, ["a"])
