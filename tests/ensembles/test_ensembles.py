"""Tree ensembles: the readers against each model's predict, the bounds against enumeration."""

import itertools

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from skfairverify.ensembles import (
    FeatureStates,
    encode_states,
    ensemble_bounds,
    read_ensemble,
    refine_states,
)
from skfairverify.ensembles._booster_readers import (
    _lightgbm_positive,
    _xgboost_positive,
    least_positive,
)
from skfairverify.ensembles._bounds import frontier_score_bounds
from skfairverify.ensembles._masks import LeafMasks, high_bit, low_bit, n_blocks_of, n_levels
from skfairverify.ensembles._unsettled import (
    _Sampler,
    allocate,
    design_for_width,
    sample_unsettled,
)
from skfairverify.s3p import BayesNet, TableTooLargeError


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


xgb = _optional("xgboost")
lgb = _optional("lightgbm")


def _models(rng, small=False):
    """(name, unfitted model, whether it takes NaN) of every supported kind."""
    n = rng.randint(2, 12) if small else 30
    depth = 2 if small else 4
    models = [
        ("hgb", HistGradientBoostingClassifier(max_iter=n, max_depth=depth + 1,
                                               early_stopping=False), True),
        ("gb", GradientBoostingClassifier(n_estimators=n, max_depth=depth), False),
        ("rf", RandomForestClassifier(n, max_depth=depth + 1, random_state=0), True),
        ("et", ExtraTreesClassifier(n, max_depth=depth + 1, random_state=0), True),
        ("rf-pure", RandomForestClassifier(max(2, n // 3) * 2, random_state=0), False),
    ]
    if xgb is not None:
        models.append(("xgb", xgb.XGBClassifier(n_estimators=n, max_depth=depth, n_jobs=1),
                       True))
    if lgb is not None:
        models.append(("lgb", lgb.LGBMClassifier(n_estimators=n, num_leaves=2 ** depth,
                                                 verbose=-1, n_jobs=1), True))
    return models


KINDS = [name for name, _, _ in _models(np.random.RandomState(0))]


def _data(rng, n, n_features, nan):
    X = rng.randint(0, 6, (n, n_features)).astype(float)
    X += rng.rand(n, n_features) * (rng.rand(n, n_features) < 0.5)
    if nan:
        X[rng.rand(n) < 0.15, 0] = np.nan
    y = (np.nan_to_num(X).sum(axis=1) + rng.randn(n) > 2.5 * n_features).astype(int)
    return X, y


def _fit(kind, rng, small=False, n_features=4, n=2000):
    name, model, takes_nan = dict((k, (k, m, t)) for k, m, t in _models(rng, small))[kind]
    X, y = _data(rng, n, n_features, takes_nan)
    with threadpool_limits(1):
        model.fit(X, y)
    return model, X


def _rows_at_thresholds(ensemble, X, rng):
    """Rows of X with values set to split thresholds and just above them."""
    rows = [X]
    for above in (False, True):
        T = X.copy()
        for f in range(X.shape[1]):
            th = ensemble.thresholds(f)
            th = th[np.isfinite(th)]
            if th.size:
                pick = rng.choice(th, X.shape[0])
                T[:, f] = np.nextafter(pick, np.inf) if above else pick
        rows.append(T)
    return np.vstack(rows)


# ------------------------------------------------------------------------ readers
@pytest.mark.parametrize("kind", KINDS)
def test_reader_recomputes_the_models_predict(kind):
    rng = np.random.RandomState(0)
    model, X = _fit(kind, rng)
    ensemble = read_ensemble(model)
    rows = _rows_at_thresholds(ensemble, X, rng)
    with threadpool_limits(1):
        expected = model.predict(rows)
    assert rows.shape[0] >= 6000
    np.testing.assert_array_equal(ensemble.predict(rows), expected)
    assert ensemble.n_trees == 30 or kind == "rf-pure"


@pytest.mark.parametrize("kind", ["hgb", "gb"])
def test_raw_score_is_the_decision_function(kind):
    rng = np.random.RandomState(1)
    model, X = _fit(kind, rng)
    np.testing.assert_allclose(read_ensemble(model).raw_score(X), model.decision_function(X),
                               rtol=1e-12, atol=1e-12)


def test_reader_unwraps_a_frozen_estimator():
    model, X = _fit("gb", np.random.RandomState(2))
    np.testing.assert_array_equal(read_ensemble(FrozenEstimator(model)).predict(X),
                                  model.predict(X))


def test_reader_refuses_by_name():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 3)
    y3 = rng.randint(0, 3, 300)
    with pytest.raises(ValueError, match="binary"):
        read_ensemble(RandomForestClassifier(3).fit(X, y3))
    with pytest.raises(ValueError, match="binary"):
        read_ensemble(HistGradientBoostingClassifier(max_iter=3).fit(X, y3))
    with pytest.raises(TypeError, match="regressor"):
        read_ensemble(GradientBoostingRegressor(n_estimators=3).fit(X, X[:, 0]))
    with pytest.raises(TypeError, match="supported"):
        read_ensemble(LogisticRegression().fit(X, y3 > 0))
    Xc = np.column_stack([rng.randint(0, 4, 300), X[:, 1]])
    hgb = HistGradientBoostingClassifier(max_iter=3, categorical_features=[0])
    with pytest.raises(ValueError, match="categorical"):
        read_ensemble(hgb.fit(Xc, Xc[:, 0] > 1))


@pytest.mark.skipif(lgb is None, reason="lightgbm is not installed")
def test_lightgbm_zero_as_missing_is_refused():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 2)
    X[::5, 0] = 0.0
    model = lgb.LGBMClassifier(n_estimators=3, zero_as_missing=True, verbose=-1, n_jobs=1)
    with pytest.raises(ValueError, match="Zero"):
        read_ensemble(model.fit(X, X[:, 0] > 0.5))


def test_bit_scans_agree_with_python_ints():
    rng = np.random.RandomState(0)
    words = rng.randint(0, 2**63, size=(500, 3), dtype=np.int64).astype(np.uint64)
    words[::7] >>= rng.randint(0, 63, size=(words[::7].shape)).astype(np.uint64)
    words[::11, 0] = 0
    words[::13] |= np.uint64(2**63)
    for row, lo, hi in zip(words, low_bit(words), high_bit(words)):
        value = sum(int(w) << (64 * i) for i, w in enumerate(row))
        assert lo == (value & -value).bit_length() - 1
        assert hi == value.bit_length() - 1


def test_block_tables_are_the_or_of_their_states():
    """Every dyadic block's leaf set is the OR of its states' sets, at every level."""
    ensemble, network, states = _bigger_problem()
    masks = LeafMasks(ensemble, states, 10**8)
    for v in masks.read:
        n = states[v].n_states
        assert n_levels(n) == (n - 1).bit_length() and 2 ** n_levels(n) >= n
        count = 0
        for level in range(n_levels(n) + 1):
            for j in range(-(-n // 2**level)):
                expected = np.bitwise_or.reduce(
                    masks.masks[v][:, j * 2**level: (j + 1) * 2**level], axis=1)
                column = masks.block_index(v, level, j)
                np.testing.assert_array_equal(masks.table[:, column], expected)
                count += 1
        assert count == n_blocks_of(n)
    assert masks.block_index(0, 0, 0) > 0 and masks.top.shape == (4,)


def test_one_word_score_bounds_equal_the_bit_scans():
    """The float64 fast path (one word, <= 53 leaves) reads the same ranks as low/high_bit."""
    ensemble, network, states = _bigger_problem()
    masks = LeafMasks(ensemble, states, 10**8)
    assert masks.n_words == 1 and masks.max_leaves <= 53
    rng = np.random.RandomState(1)
    codes = np.column_stack([rng.randint(0, s.n_states, 400) for s in states])
    for assigned in ([], [0], [0, 2], [0, 1, 2, 3]):
        mask = masks.mask(codes, assigned)
        fast = masks.score_bounds(mask)
        offset = np.arange(masks.n_trees)[:, None] * masks.sorted_values.shape[1]
        flat = masks.sorted_values.ravel()
        slow = [ensemble.sum_scores(flat[scan(mask) + offset], trees_first=True)
                for scan in (low_bit, high_bit)]
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])
        assert np.all(fast[0] <= fast[1])
    full = masks.score_bounds(masks.mask(codes, range(4)))
    np.testing.assert_array_equal(full[0], full[1])
    np.testing.assert_array_equal(masks.score(masks.mask(codes, range(4))), full[0])


# ------------------------------------------------------------------------ bounds
def _representatives(states):
    """A value inside each state of each variable (NaN for the missing state)."""
    out = []
    for st in states:
        e = st.edges
        values = list(e) + [e[-1] + 1.0 if e.size else 0.0]
        out.append(np.array(values + ([np.nan] if st.missing else [])))
    return out


def _random_network(rng, cards):
    parents = []
    for i in range(len(cards)):
        k = rng.randint(0, min(2, i) + 1)
        parents.append(tuple(sorted(rng.choice(i, k, replace=False).tolist())) if k else ())
    cpts = [rng.dirichlet(np.full(cards[i], 0.7), size=tuple(cards[p] for p in parents[i]))
            for i in range(len(cards))]
    return BayesNet(cards, parents, cpts)


def _brute_force(ensemble, network, states, sensitive):
    """Exact group rates by enumerating the joint of the network."""
    joint = np.array(list(itertools.product(*(range(c) for c in network.cardinalities))))
    prob = np.ones(len(joint))
    for v in range(network.n_variables):
        index = tuple(joint[:, p] for p in network.parents[v]) + (joint[:, v],)
        prob *= network.cpts[v][index]
    X = np.zeros((len(joint), ensemble.n_features))
    for v, (st, rep) in enumerate(zip(states, _representatives(states))):
        if st.feature is not None:
            X[:, st.feature] = rep[joint[:, v]]
    positive = ensemble.positive(ensemble.raw_score(X))
    cards = [network.cardinalities[v] for v in sensitive]
    group = np.ravel_multi_index(tuple(joint[:, v] for v in sensitive), cards)
    size = int(np.prod(cards))
    return np.bincount(group, prob * positive, size) / np.bincount(group, prob, size)


def _problem(kind, seed, n_features=None, with_outside=True):
    """A small random ensemble of ``kind`` and a random network over its states."""
    rng = np.random.RandomState(seed)
    n_features = n_features or rng.randint(2, 5)
    model, X = _fit(kind, rng, small=True, n_features=n_features, n=300)
    ensemble = read_ensemble(model)
    states = [refine_states(ensemble, f, missing=bool(np.isnan(X[:, f]).any()))
              for f in range(n_features)]
    if with_outside:
        states = [FeatureStates(None, [], n_states=2), *states]
    network = _random_network(rng, [s.n_states for s in states])
    return ensemble, network, states


def _inside(result, truth):
    return np.all(result.lower <= truth + 1e-12) and np.all(truth <= result.upper + 1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_bounds_hold_and_are_exact_when_finished(kind, seed):
    ensemble, network, states = _problem(kind, seed)
    if np.prod(network.cardinalities) > 200_000:  # too many joint states to enumerate
        ensemble, network, states = _problem(kind, seed, n_features=2)
    truth = _brute_force(ensemble, network, states, [0])
    exact = ensemble_bounds(ensemble, network, states, sensitive_features=0)
    assert exact.stopped == "finished"
    np.testing.assert_allclose(exact.lower, truth, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(exact.lower, exact.upper)
    assert exact.exact and np.all(exact.settled == 1)
    for kwargs in ({"tolerance": 0.05}, {"max_nodes": 1}, {"max_nodes": 3}):
        result = ensemble_bounds(ensemble, network, states, sensitive_features=0, **kwargs)
        assert _inside(result, truth), kwargs
        if result.stopped == "tolerance":
            assert np.all(result.width <= 0.05)


def test_bounds_of_trees_wider_than_one_word():
    """Fully grown trees (hundreds of leaves, several 64-bit words): exact by enumeration."""
    rng = np.random.RandomState(3)
    X = np.round(rng.rand(600, 2) * 40) / 4
    y = (X.sum(axis=1) + rng.randn(600) * 2 > 10).astype(int)
    ensemble = read_ensemble(RandomForestClassifier(3, random_state=0).fit(X, y))
    states = [FeatureStates(None, [], n_states=2)] + [refine_states(ensemble, f)
                                                      for f in range(2)]
    network = _random_network(rng, [s.n_states for s in states])
    masks = LeafMasks(ensemble, states, 10**8)
    assert masks.n_words >= 2
    codes = np.column_stack([rng.randint(0, s.n_states, 300) for s in states])
    reps = _representatives(states)
    X = np.column_stack([reps[v][codes[:, v]] for v in (1, 2)])
    np.testing.assert_array_equal(masks.score(masks.mask(codes, range(3))),
                                  ensemble.raw_score(X))
    truth = _brute_force(ensemble, network, states, [0])
    exact = ensemble_bounds(ensemble, network, states, sensitive_features=0)
    np.testing.assert_allclose(exact.lower, truth, rtol=0, atol=1e-12)
    assert exact.exact
    partial = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=5)
    assert _inside(partial, truth) and not partial.exact


@pytest.mark.parametrize("seed", range(4))
def test_bounds_with_sensitive_model_inputs(seed):
    """Two sensitive variables, one of them read by the model, without outside variables."""
    ensemble, network, states = _problem("gb", 100 + seed, n_features=3, with_outside=False)
    sensitive = [0, 2]
    truth = _brute_force(ensemble, network, states, sensitive)
    result = ensemble_bounds(ensemble, network, states, sensitive_features=sensitive)
    np.testing.assert_allclose(result.lower, truth, rtol=0, atol=1e-12)
    assert len(result.groups) == network.cardinalities[0] * network.cardinalities[2]
    overall = ensemble_bounds(ensemble, network, states)
    assert overall.groups == [()] and overall.exact


def _bigger_problem():
    rng = np.random.RandomState(7)
    X, y = _data(rng, 3000, 4, nan=False)
    model = GradientBoostingClassifier(n_estimators=40, max_depth=3, random_state=0).fit(X, y)
    ensemble = read_ensemble(model)
    states = [refine_states(ensemble, f) for f in range(4)]
    codes = encode_states(states, X)
    cards = [s.n_states for s in states]
    cpts = [np.bincount(codes[:, 0], minlength=cards[0]) + 1.0]
    cpts = [cpts[0] / cpts[0].sum()]
    for v in range(1, 4):
        table = np.ones((cards[v - 1], cards[v]))
        np.add.at(table, (codes[:, v - 1], codes[:, v]), 1.0)
        cpts.append(table / table.sum(axis=1, keepdims=True))
    network = BayesNet(cards, [(), (0,), (1,), (2,)], cpts)
    return ensemble, network, states


def test_bounds_tighten_monotonically_with_the_budget():
    ensemble, network, states = _bigger_problem()
    exact = ensemble_bounds(ensemble, network, states, sensitive_features=0)
    previous = None
    for budget in (1, 10, 100, 300, 1000, 3000):
        result = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=budget)
        assert _inside(result, exact.lower)
        if previous is not None:
            assert np.all(previous.lower <= result.lower)
            assert np.all(result.upper <= previous.upper + 1e-12)
            assert np.all(previous.settled <= result.settled + 1e-12)
        previous = result
    assert previous.width.max() < ensemble_bounds(
        ensemble, network, states, sensitive_features=0, max_nodes=1).width.max()
    assert exact.exact and exact.nodes_expanded.sum() > 100


def test_bounds_refuse_by_name():
    ensemble, network, states = _bigger_problem()
    with pytest.raises(TableTooLargeError, match="max_table_size"):
        ensemble_bounds(ensemble, network, states, max_table_size=100)
    with pytest.raises(TableTooLargeError, match="max_nodes"):
        ensemble_bounds(ensemble, network, states, max_nodes=10**9)
    with pytest.raises(TableTooLargeError, match="sensitive"):
        ensemble_bounds(ensemble, network, states, sensitive_features=[0, 1, 2, 3],
                        max_table_size=200_000)


def test_bounds_check_their_inputs():
    ensemble, network, states = _bigger_problem()
    coarse = list(states)
    coarse[1] = FeatureStates(states[1].feature, states[1].edges[::2])
    with pytest.raises(ValueError, match="states"):
        ensemble_bounds(ensemble, network, coarse)
    cards = list(network.cardinalities)
    cards[1] = coarse[1].n_states
    net = BayesNet.independent([np.full(c, 1 / c) for c in cards])
    with pytest.raises(ValueError, match="not a boundary"):
        ensemble_bounds(ensemble, net, coarse)
    with pytest.raises(ValueError, match="no variable describes"):
        ensemble_bounds(ensemble, BayesNet.independent([[1.0]] * 4),
                        [FeatureStates(None, [], n_states=1)] * 4)
    empty = network.replace_cpt(0, np.eye(network.cardinalities[0])[0])
    with pytest.raises(ValueError, match="probability 0"):
        ensemble_bounds(ensemble, empty, states, sensitive_features=0)
    with pytest.raises(TypeError, match="TreeEnsemble"):
        ensemble_bounds("model", network, states)
    with pytest.raises(ValueError, match="out of range"):
        ensemble_bounds(ensemble, network, states, sensitive_features=network.n_variables)
    with pytest.raises(ValueError, match="twice"):
        ensemble_bounds(ensemble, network, states, sensitive_features=[0, 0])
    one = [FeatureStates(None, [], n_states=1)] + list(states[1:])
    single = BayesNet.independent([[1.0]] + [np.full(c, 1 / c)
                                             for c in network.cardinalities[1:]])
    with pytest.raises(ValueError, match="single state"):
        ensemble_bounds(ensemble, single, one, sensitive_features=0)


def test_reader_and_states_name_bad_input():
    rng = np.random.RandomState(0)
    X = rng.rand(200, 2)
    ensemble = read_ensemble(RandomForestClassifier(3, max_depth=2, random_state=0)
                             .fit(X, X[:, 0] > 0.5))
    with pytest.raises(TypeError, match="not a fitted classifier"):
        read_ensemble("model.joblib")
    for feature in (2, -1, True, 0.0, X):
        with pytest.raises(ValueError, match="index of an input column, 0 to 1"):
            refine_states(ensemble, feature)
    with pytest.raises(ValueError, match="finite"):
        refine_states(ensemble, 0, edges=[0.2, np.nan])


def test_time_budget_stops_soundly():
    ensemble, network, states = _bigger_problem()
    exact = ensemble_bounds(ensemble, network, states, sensitive_features=0)
    result = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_time=0.0)
    assert result.stopped == "max_time"
    assert _inside(result, exact.lower)
    frame = result.to_frame()
    assert list(frame["group"]) == result.groups and len(frame) == len(result.groups)


def test_encode_states_round_trip():
    ensemble, network, states = _bigger_problem()
    reps = _representatives(states)
    X = np.column_stack([reps[v][np.arange(s.n_states) % s.n_states][:3]
                         for v, s in enumerate(states)])
    codes = encode_states(states, X, ensemble.input_dtype)
    np.testing.assert_array_equal(codes, np.tile(np.arange(3), (4, 1)).T)


def test_sigmoid_decisions_are_thresholds_on_the_raw_score():
    """XGBoost (float32 sigmoid > 0.5) and LightGBM (p > 1 - p) read as least positive scores."""
    for positive, dtype in ((_xgboost_positive, np.float32),
                            (lambda r: _lightgbm_positive(r, 1.0), np.float64)):
        t = least_positive(positive, dtype)
        below = np.nextafter(np.array(t, dtype=dtype), np.array(0, dtype=dtype))
        assert positive(t) and not positive(below) and 0 < t < 1e-6


# ------------------------------------------------------------ unsettled sampling
def _joint(network):
    """Every joint state and its probability under the network."""
    joint = np.array(list(itertools.product(*(range(c) for c in network.cardinalities))))
    prob = np.ones(len(joint))
    for v in range(network.n_variables):
        prob *= network.cpts[v][tuple(joint[:, p] for p in network.parents[v]) + (joint[:, v],)]
    return joint, prob


def test_conditional_draws_follow_the_network_given_a_node():
    """Draws completing a node (a prefix assigned, the next variable in a block) have the
    enumerated conditional distribution (every cell within 4.5 standard errors)."""
    rng = np.random.RandomState(5)
    network = _random_network(rng, [2, 5, 3, 4])
    order = network.topological_order()
    assert network.cardinalities[order[1]] >= 4 and network.cardinalities[order[0]] >= 2
    sampler = _Sampler(network, order)
    n = 40_000
    states = np.full((n, 4), -1)
    states[:, order[0]] = 1
    depth, level, block = np.ones(n, int), np.ones(n, int), np.ones(n, int)  # states 2, 3
    draws = sampler.draw(states, depth, level, block, np.random.RandomState(0))
    joint, prob = _joint(network)
    inside = (joint[:, order[0]] == 1) & np.isin(joint[:, order[1]], [2, 3])
    expected = np.where(inside, prob, 0) / prob[inside].sum()
    cards = network.cardinalities
    observed = np.bincount(np.ravel_multi_index(draws.T, cards), minlength=len(joint)) / n
    flat = np.ravel_multi_index(joint.T, cards)
    se = np.sqrt(expected * (1 - expected) / n) + 1e-12
    assert np.all(np.abs(observed[flat] - expected) <= 4.5 * se + 1e-9)


def test_allocation_is_proportional_and_exact_in_total():
    rng = np.random.RandomState(0)
    prob = rng.rand(50)
    group = rng.randint(0, 3, 50)
    n = np.array([1000, 7, 333])
    total = np.zeros(50)
    for r in range(200):
        counts = allocate(prob, group, n, np.random.RandomState(r))
        np.testing.assert_array_equal(np.bincount(group, counts, 3), n)
        share = n[group] * prob / np.bincount(group, prob, 3)[group]
        assert np.all((counts >= np.floor(share)) & (counts <= np.floor(share) + 7))
        total += counts
    np.testing.assert_allclose(total / 200, share, atol=0.5)  # expected draws: the share


@pytest.mark.parametrize("kind,seed", [("gb", 1), ("hgb", 2), ("rf", 3)])
def test_unsettled_intervals_cover_the_enumerated_truth(kind, seed):
    """200 repetitions at 90%: coverage near nominal (at least 0.85), estimate unbiased."""
    ensemble, network, states = _problem(kind, seed)
    truth = _brute_force(ensemble, network, states, [0])
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=3)
    assert np.all(bounds.width > 0.5)
    covered, estimates = [], []
    for r in range(200):
        result = sample_unsettled(ensemble, network, states, bounds, 100, confidence=0.9,
                                  random_state=r)
        covered.append((result.interval_lower <= truth + 1e-12)
                       & (truth <= result.interval_upper + 1e-12))
        estimates.append(result.estimate)
        assert _inside(result, truth)  # the sound bounds still hold
        assert np.all(result.lower <= result.interval_lower)
        assert np.all(result.interval_upper <= result.upper)
    coverage = np.mean(covered, axis=0)
    assert np.all(coverage >= 0.85), coverage
    estimates = np.array(estimates)
    error = np.abs(estimates.mean(axis=0) - truth)
    assert np.all(error <= 4 * estimates.std(axis=0) / np.sqrt(200) + 1e-12)


def test_unsettled_sampling_narrows_with_the_settled_share():
    """Against enumeration: exact bounds need no draws; a partly settled search's interval
    is the settled part plus the unsettled share's (narrower than sampling everything)."""
    ensemble, network, states = _bigger_problem()
    exact = ensemble_bounds(ensemble, network, states, sensitive_features=0)
    nothing = sample_unsettled(ensemble, network, states, exact, 50, random_state=0)
    assert nothing.n_evaluations == 0
    np.testing.assert_array_equal(nothing.interval_lower, exact.lower)
    np.testing.assert_array_equal(nothing.interval_upper, exact.lower)
    truth = exact.lower
    partial = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=300)
    result = sample_unsettled(ensemble, network, states, partial, 2000, random_state=1)
    assert result.n_evaluations == int(result.n_samples.sum())
    open_ = partial.width > 0
    assert open_.any()
    np.testing.assert_allclose(result.unsettled, partial.width, atol=1e-12)
    # the interval's width is the unsettled share times the Clopper-Pearson width
    assert np.all(result.width[open_] <= partial.width[open_] * 0.2)
    assert _inside(result, truth)


@pytest.mark.parametrize("kind,seed,max_nodes", [("gb", 1, 3), ("hgb", 2, 3), ("rf", 3, 3),
                                                ("bigger", 0, 300)])
@pytest.mark.parametrize("width", [None, 0.1])
def test_neyman_intervals_cover_the_enumerated_truth(kind, seed, max_nodes, width):
    """200 repetitions at 90% of the Neyman design (a pilot, draws per stratum, the normal
    interval of the stratified estimate): coverage near nominal, estimate unbiased."""
    ensemble, network, states = (_bigger_problem() if kind == "bigger"
                                 else _problem(kind, seed))
    if kind == "bigger":  # its enumeration takes 36 s and 4.5 GB: the finished search's
        exact = ensemble_bounds(ensemble, network, states, sensitive_features=0)
        np.testing.assert_array_equal(exact.lower, exact.upper)  # (exact against
        truth = exact.lower  # enumeration in the tests above)
    else:
        truth = _brute_force(ensemble, network, states, [0])
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0,
                             max_nodes=max_nodes)
    assert np.all(bounds.width > 0.05)
    covered, estimates, widths = [], [], []
    for r in range(200):
        result = sample_unsettled(ensemble, network, states, bounds, 100, confidence=0.9,
                                  allocation="neyman", width=width, random_state=r)
        covered.append((result.interval_lower <= truth + 1e-12)
                       & (truth <= result.interval_upper + 1e-12))
        estimates.append(result.estimate)
        widths.append(result.width)
        assert _inside(result, truth)
        assert np.all(result.lower <= result.interval_lower)
        assert np.all(result.interval_upper <= result.upper)
        pilot = 100 * int(np.sum(result.unsettled > 0))
        assert result.n_evaluations == int(result.n_samples.sum()) + pilot
    coverage = np.mean(covered, axis=0)
    # 39 groups of the bigger problem: their least coverage is lower by chance alone
    assert coverage.mean() >= 0.87 and np.all(coverage >= 0.8), coverage
    estimates = np.array(estimates)
    error = np.abs(estimates.mean(axis=0) - truth)
    assert np.all(error <= 4 * estimates.std(axis=0) / np.sqrt(200) + 1e-12)
    if width is not None:  # the pilot's forecast of the draws the width needs
        widths = np.array(widths)
        assert np.median(widths) <= width and np.mean(widths <= 1.1 * width) >= 0.85


def test_neyman_needs_fewer_draws_than_proportional_for_a_width():
    """Against the proportional design sized for the same width (the worst case of the
    share's variance, as the benchmark sizes it), on a partial search of many nodes:
    both reach the width, the Neyman design with fewer draws."""
    ensemble, network, states = _bigger_problem()
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=300)
    z, width = 2.5758, 0.05
    n = np.ceil(1.25 * (2 * z) ** 2 / 4 * bounds.width ** 2 / width ** 2).astype(int)
    draws = {}
    for allocation, kwargs in (("proportional", {"n_samples": np.maximum(n, 1)}),
                               ("neyman", {"n_samples": 200, "width": width})):
        runs = [sample_unsettled(ensemble, network, states, bounds, allocation=allocation,
                                 random_state=r, **kwargs) for r in range(3)]
        assert np.median([r.width for r in runs]) <= width
        draws[allocation] = np.mean([r.n_evaluations for r in runs])
    assert draws["neyman"] < 0.8 * draws["proportional"], draws


def test_design_for_width_takes_neyman_where_its_pilot_is_small():
    """The rule: Neyman where the proportional draws are at least eight pilots (a
    fortieth, at least 200 a group) over the groups with unsettled mass, capped at them."""
    small = design_for_width([1000, 1000], 0.01, [0.3, 0.3])
    assert small["allocation"] == "proportional" and small["n_samples"].tolist() == [1000, 1000]
    big = design_for_width([40_000, 1], 0.01, [0.9, 0.0])  # the settled group left out
    assert big["allocation"] == "neyman" and big["n_samples"].tolist() == [1000, 1]
    assert big["max_samples"].tolist() == [40_000, 1] and big["width"] == 0.01
    # at the edge: 1,600 draws are eight pilots of 200, 1,599 are not
    assert design_for_width([1600], 0.01, [0.5])["allocation"] == "neyman"
    assert design_for_width([1599], 0.01, [0.5])["allocation"] == "proportional"
    assert design_for_width([5], 0.01, [0.0])["allocation"] == "proportional"


def test_neyman_draws_are_capped_by_max_samples():
    """``max_samples`` caps the draws after the pilot (two a stratum at least); the
    interval says what it is."""
    ensemble, network, states = _bigger_problem()
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=300)
    free = sample_unsettled(ensemble, network, states, bounds, 200, allocation="neyman",
                            width=0.02, random_state=0)
    capped = sample_unsettled(ensemble, network, states, bounds, 200, allocation="neyman",
                              width=0.02, max_samples=500, random_state=0)
    assert free.n_samples.max() > 1000
    assert np.all(capped.n_samples <= 500 + 2 * 20)
    assert capped.interval == "asymptotic" and capped.allocation == "neyman"
    plain = sample_unsettled(ensemble, network, states, bounds, 100, random_state=0)
    assert plain.interval == "conservative"
    with pytest.raises(ValueError, match="max_samples"):
        sample_unsettled(ensemble, network, states, bounds, 10, allocation="neyman",
                         width=0.1, max_samples=0)


def test_frontier_score_bounds_hold_for_draws_of_each_node():
    """Every fully assigned draw of an unsettled node scores within the node's bounds."""
    ensemble, network, states = _bigger_problem()
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=100)
    nodes = bounds.unsettled
    masks = LeafMasks(ensemble, states, 10**8)
    low, high = frontier_score_bounds(ensemble, network, masks, bounds.order, nodes)
    assert low.shape == high.shape == nodes["prob"].shape and np.all(low <= high)
    node = np.repeat(np.arange(nodes["prob"].size), 20)
    rng = np.random.RandomState(0)
    draws = _Sampler(network, bounds.order).draw(
        nodes["states"][node], nodes["depth"][node], nodes["level"][node],
        nodes["block"][node], rng)
    X = np.column_stack([rep[draws[:, v]] for v, rep in enumerate(_representatives(states))])
    score = ensemble.raw_score(X)
    assert np.all((low[node] - 1e-9 <= score) & (score <= high[node] + 1e-9))
    # and not trivially: the bounds of some node are narrower than the ensemble's range
    assert np.any(high - low < score.max() - score.min())


def test_sample_unsettled_checks_its_inputs():
    ensemble, network, states = _bigger_problem()
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0, max_nodes=10)
    with pytest.raises(TypeError, match="EnsembleBounds"):
        sample_unsettled(ensemble, network, states, "bounds", 10)
    with pytest.raises(TypeError, match="TreeEnsemble"):
        sample_unsettled("model", network, states, bounds, 10)
    with pytest.raises(ValueError, match="n_samples"):
        sample_unsettled(ensemble, network, states, bounds, 0)
    with pytest.raises(ValueError, match="n_samples"):
        sample_unsettled(ensemble, network, states, bounds, 2.5)
    with pytest.raises(ValueError, match="confidence"):
        sample_unsettled(ensemble, network, states, bounds, 10, confidence=1.0)
    with pytest.raises(ValueError, match="same network"):
        sample_unsettled(ensemble, network, states[:3], bounds, 10)
    with pytest.raises(TableTooLargeError, match="n_samples"):
        sample_unsettled(ensemble, network, states, bounds, 10**6, max_table_size=10**5)
    with pytest.raises(ValueError, match="allocation"):
        sample_unsettled(ensemble, network, states, bounds, 10, allocation="optimal")
    with pytest.raises(ValueError, match="width"):
        sample_unsettled(ensemble, network, states, bounds, 10, width=0.0)
    with pytest.raises(ValueError, match="width needs"):
        sample_unsettled(ensemble, network, states, bounds, 10, width=0.1)
    with pytest.raises(ValueError, match="n_strata"):
        sample_unsettled(ensemble, network, states, bounds, 10, allocation="neyman",
                         n_strata=0)
    with pytest.raises(TableTooLargeError, match="width"):  # the draws the width needs
        sample_unsettled(ensemble, network, states, bounds, 10, width=1e-4,
                         allocation="neyman", max_table_size=10**5)


def _node_probability_loop(network, order, nodes):
    """Each node's probability, one node and one variable at a time."""
    out = []
    for s, d, lv, b in zip(nodes["states"], nodes["depth"], nodes["level"], nodes["block"]):
        p = 1.0
        for k, v in enumerate(order):
            config = tuple(int(s[q]) for q in network.parents[v])
            row = network.cpts[v][config]
            if k < d:
                p *= row[s[v]]
            elif k == d:
                p *= row[min(b << lv, row.size): min((b + 1) << lv, row.size)].sum()
        out.append(p)
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_nodes", [20, None])
def test_reweighing_plan_holds_the_truth_of_other_networks(seed, max_nodes):
    """The settled nodes of a search stopped early, reweighed under networks of the same
    structure, bound each network's enumerated rates; node weights match a plain loop."""
    from skfairverify.ensembles._reweight import NodeWeights, Reweighing

    ensemble, network, states = _problem("hgb", seed, n_features=3)
    kept = ensemble_bounds(ensemble, network, states, sensitive_features=0,
                           max_nodes=max_nodes, keep_settled=True)
    assert kept.settled_nodes["depth"].size > 0
    plan = Reweighing(kept, network, [0], 10**7)
    weights = NodeWeights(network, kept.order, kept.settled_nodes, 10**7)
    rng = np.random.RandomState(100 + seed)
    for _ in range(3):
        other = BayesNet(network.cardinalities, network.parents,
                         [rng.dirichlet(np.full(c.shape[-1], 0.7), size=c.shape[:-1])
                          for c in network.cpts])
        truth = _brute_force(ensemble, other, states, [0])
        lower, upper, settled = plan.bounds(other)
        assert np.all(lower <= truth + 1e-12) and np.all(truth <= upper + 1e-12)
        assert np.all((settled >= 0) & (settled <= 1))
        np.testing.assert_allclose(
            weights.probability(other),
            _node_probability_loop(other, kept.order, kept.settled_nodes), rtol=1e-12)
    moved = BayesNet(network.cardinalities, [()] * network.n_variables,
                     [np.full(c, 1.0 / c) for c in network.cardinalities])
    if [tuple(p) for p in network.parents] != [()] * network.n_variables:
        with pytest.raises(ValueError, match="parents"):
            plan.bounds(moved)
    with pytest.raises(TableTooLargeError, match="index entries"):
        NodeWeights(network, kept.order, kept.settled_nodes, 1)
