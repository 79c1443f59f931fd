"""Tests of the exact S3P engine (skfairverify.s3p).

Every expected value comes from an independent computation: FVGM's worked
examples, brute-force enumeration of all assignments, a plain convolution,
pgmpy's variable elimination or a closed form.
"""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skfairverify.s3p import (
    BayesNet,
    Plan,
    TableTooLargeError,
    best_assignment,
    plan,
    positive_probability,
    positive_probability_table,
)

# ------------------------------------------------------------------ helpers


def joint_enumeration(net):
    """All assignments (rows) and their joint probabilities, by enumeration."""
    grids = np.indices(net.cardinalities).reshape(net.n_variables, -1).T
    prob = np.ones(len(grids))
    for i in range(net.n_variables):
        idx = tuple(grids[:, p] for p in net.parents[i]) + (grids[:, i],)
        prob *= net.cpts[i][idx]
    return grids, prob


def brute_force(weights, threshold, net, evidence=None):
    """Pr[score >= t | evidence] by enumerating every assignment; None if Pr[evidence] = 0."""
    grids, prob = joint_enumeration(net)
    score = sum(np.asarray(weights[i])[grids[:, i]] for i in range(net.n_variables))
    mask = np.ones(len(grids), dtype=bool)
    for v, s in (evidence or {}).items():
        mask &= grids[:, v] == s
    den = prob[mask].sum()
    if den == 0:
        return None
    return prob[mask & (score >= threshold)].sum() / den


def random_network(rng, n, max_card=4, max_parents=3, min_card=2, shuffle=True):
    """Random DAG (indegree <= max_parents), Dirichlet CPTs, some zero entries."""
    cards = rng.integers(min_card, max_card + 1, size=n).tolist()
    parents = []
    for i in range(n):
        k = int(rng.integers(0, min(i, max_parents) + 1))
        parents.append(tuple(sorted(rng.choice(i, size=k, replace=False).tolist())) if k else ())
    cpts = []
    for i in range(n):
        shape = tuple(cards[p] for p in parents[i])
        table = rng.dirichlet(np.full(cards[i], 0.8), size=shape)
        if rng.random() < 0.3:  # some exact zeros (deterministic-ish rows)
            table = np.where(table < 0.15, 0.0, table)
            table[table.sum(-1) == 0, 0] = 1.0
            table /= table.sum(-1, keepdims=True)
        cpts.append(table)
    if shuffle:  # relabel so that parents do not always have smaller indices
        perm = rng.permutation(n)  # new index of old variable
        inv = np.argsort(perm)
        cards = [cards[inv[j]] for j in range(n)]
        cpts_new, parents_new = [], []
        for j in range(n):
            old = inv[j]
            parents_new.append(tuple(int(perm[p]) for p in parents[old]))
            cpts_new.append(cpts[old])
        parents, cpts = parents_new, cpts_new
    return BayesNet(cards, parents, cpts)


def random_weights(rng, net, low=-6, high=6):
    return [rng.integers(low, high + 1, size=c) for c in net.cardinalities]


def example4():
    """FVGM Example 4: P + Q + R - S >= 2, Pr[Q]=.4, Pr[R]=.5, Pr[S]=.3 (P free)."""
    net = BayesNet.independent(
        [[0.5, 0.5], [0.6, 0.4], [0.5, 0.5], [0.7, 0.3]], names=["P", "Q", "R", "S"]
    )
    weights = [np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), np.array([0, -1])]
    return weights, 2, net


def example6():
    """FVGM Example 6: Example 4 with P -> Q, Pr[Q|P]=.6, Pr[Q|not P]=.3."""
    weights, threshold, _ = example4()
    net = BayesNet(
        [2, 2, 2, 2],
        [(), (0,), (), ()],
        [
            np.array([0.5, 0.5]),
            np.array([[0.7, 0.3], [0.4, 0.6]]),
            np.array([0.5, 0.5]),
            np.array([0.7, 0.3]),
        ],
        names=["P", "Q", "R", "S"],
    )
    return weights, threshold, net


# ------------------------------------------------------------ paper examples


def test_example4_paper_values():
    weights, threshold, net = example4()
    assert positive_probability(weights, threshold, net, {0: 1}) == pytest.approx(0.55, abs=1e-12)
    assert positive_probability(weights, threshold, net, {0: 0}) == pytest.approx(0.14, abs=1e-12)
    # The paper's reduced problem Pr[Q + R - S >= 1] without P at all.
    reduced = BayesNet.independent([[0.6, 0.4], [0.5, 0.5], [0.7, 0.3]])
    assert positive_probability(weights[1:], 1, reduced) == pytest.approx(0.55, abs=1e-12)
    p_max, a_max = best_assignment(weights, threshold, net, [0], mode="max")
    p_min, a_min = best_assignment(weights, threshold, net, [0], mode="min")
    assert p_max == pytest.approx(0.55, abs=1e-12) and a_max == {0: 1}
    assert p_min == pytest.approx(0.14, abs=1e-12) and a_min == {0: 0}


def test_example6_paper_values():
    weights, threshold, net = example6()
    table, support = positive_probability_table(weights, threshold, net, [0], return_marginal=True)
    np.testing.assert_allclose(table, [0.105, 0.65], atol=1e-12)
    np.testing.assert_allclose(support, [0.5, 0.5], atol=1e-12)
    assert best_assignment(weights, threshold, net, [0])[1] == {0: 1}
    p_min, a_min = best_assignment(weights, threshold, net, [0], mode="min")
    assert p_min == pytest.approx(0.105, abs=1e-12) and a_min == {0: 0}
    # The prior of the choice variable does not matter for the conditionals.
    skewed = net.replace_cpt(0, np.array([0.9, 0.1]))
    np.testing.assert_allclose(
        positive_probability_table(weights, threshold, skewed, [0]), [0.105, 0.65], atol=1e-12
    )


# ------------------------------------------------------------ property tests

network_params = st.tuples(
    st.integers(0, 2**32 - 1),  # seed
    st.integers(1, 9),  # number of variables
    st.integers(1, 3),  # max parents
)


def _bounded_network(seed, n, max_parents):
    rng = np.random.default_rng(seed)
    net = random_network(rng, n, max_card=4 if n <= 7 else 3, max_parents=max_parents)
    return rng, net


@pytest.mark.parametrize("method", ["frontier", "elimination"])
@settings(max_examples=60, deadline=None)
@given(params=network_params, use_evidence=st.booleans())
def test_matches_brute_force(method, params, use_evidence):
    rng, net = _bounded_network(*params)
    scale = int(rng.choice([1, 1, 3, 10]))
    weights = [w * scale for w in random_weights(rng, net)]
    threshold = int(rng.integers(-12, 13)) * scale + int(rng.integers(-1, 2))
    evidence = {}
    if use_evidence:
        for v in rng.choice(net.n_variables, size=min(2, net.n_variables), replace=False):
            evidence[int(v)] = int(rng.integers(net.cardinalities[v]))
    expected = brute_force(weights, threshold, net, evidence)
    if expected is None:
        with pytest.raises(ValueError, match="probability 0"):
            positive_probability(weights, threshold, net, evidence, method=method)
    else:
        got = positive_probability(weights, threshold, net, evidence, method=method)
        assert got == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("method", ["frontier", "elimination"])
@settings(max_examples=30, deadline=None)
@given(params=network_params, n_keep=st.integers(1, 3))
def test_table_matches_per_assignment_and_brute_force(method, params, n_keep):
    rng, net = _bounded_network(*params)
    weights = random_weights(rng, net, -5, 5)
    threshold = int(rng.integers(-8, 9))
    n_keep = min(n_keep, net.n_variables)
    keep = [int(v) for v in rng.choice(net.n_variables, size=n_keep, replace=False)]
    others = [v for v in range(net.n_variables) if v not in keep]
    evidence = {}
    if others and rng.random() < 0.5:
        v = int(rng.choice(others))
        evidence[v] = int(rng.integers(net.cardinalities[v]))
    grids, prob = joint_enumeration(net)
    mask_ev = np.ones(len(grids), dtype=bool)
    for v, s in evidence.items():
        mask_ev &= grids[:, v] == s
    if prob[mask_ev].sum() == 0:
        with pytest.raises(ValueError, match="probability 0"):
            positive_probability_table(weights, threshold, net, keep, evidence, method=method)
        return
    table, marginal = positive_probability_table(
        weights, threshold, net, keep, evidence, return_marginal=True, method=method
    )
    assert table.shape == tuple(net.cardinalities[v] for v in keep)
    assert marginal.sum() == pytest.approx(1.0)
    for a in itertools.product(*[range(net.cardinalities[v]) for v in keep]):
        full = {**evidence, **dict(zip(keep, a))}
        expected = brute_force(weights, threshold, net, full)
        mask = mask_ev.copy()
        for v, s in zip(keep, a):
            mask &= grids[:, v] == s
        assert marginal[a] == pytest.approx(prob[mask].sum() / prob[mask_ev].sum(), abs=1e-12)
        if expected is None:
            assert np.isnan(table[a])
        else:
            assert table[a] == pytest.approx(expected, abs=1e-10)
            single = positive_probability(weights, threshold, net, full, method="frontier")
            assert table[a] == pytest.approx(single, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    params=network_params,
    mode=st.sampled_from(["max", "min"]),
    method=st.sampled_from(["auto", "frontier", "elimination"]),
)
def test_best_assignment_matches_brute_force(params, mode, method):
    rng, net = _bounded_network(*params)
    weights = random_weights(rng, net)
    threshold = int(rng.integers(-6, 7))
    n_choice = int(rng.integers(1, min(2, net.n_variables) + 1))
    choice = [int(v) for v in rng.choice(net.n_variables, size=n_choice, replace=False)]
    values = {}
    for a in itertools.product(*[range(net.cardinalities[v]) for v in choice]):
        p = brute_force(weights, threshold, net, dict(zip(choice, a)))
        if p is not None:
            values[a] = p
    best = max(values.values()) if mode == "max" else min(values.values())
    p, assignment = best_assignment(weights, threshold, net, choice, mode=mode, method=method)
    assert p == pytest.approx(best, abs=1e-10)
    assert values[tuple(assignment[v] for v in choice)] == pytest.approx(best, abs=1e-10)


def _random_topological_order(rng, net):
    indeg = [len(p) for p in net.parents]
    ready = [i for i in range(net.n_variables) if indeg[i] == 0]
    order = []
    while ready:
        v = ready.pop(int(rng.integers(len(ready))))
        order.append(v)
        for c in net.children(v):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    return order


@settings(max_examples=25, deadline=None)
@given(network_params)
def test_order_invariance_remark2(params):
    rng, net = _bounded_network(*params)
    weights = random_weights(rng, net)
    threshold = int(rng.integers(-6, 7))
    keep = [int(rng.integers(net.n_variables))]
    reference = positive_probability_table(weights, threshold, net, keep)
    for _ in range(3):
        order = _random_topological_order(rng, net)
        np.testing.assert_allclose(
            positive_probability_table(weights, threshold, net, keep, order=order),
            reference,
            atol=1e-12,
        )
        assert positive_probability(weights, threshold, net, order=order) == pytest.approx(
            positive_probability(weights, threshold, net), abs=1e-12
        )


# ------------------------------------------------- larger, independent checks


def test_independent_booleans_match_full_convolution():
    """300 Booleans, weights in [-100, 100]: pruned DP vs an unpruned convolution."""
    rng = np.random.default_rng(1)
    n = 300
    w = rng.integers(-100, 101, size=n)
    p = rng.random(n)
    net = BayesNet.independent([[1 - q, q] for q in p])
    weights = [np.array([0, x]) for x in w]
    offset = int(w[w < 0].sum())
    dist = np.array([1.0])
    for x, q in zip(w, p):
        step = np.zeros(abs(int(x)) + 1)
        if x == 0:
            step[0] = 1.0
        elif x > 0:
            step[0], step[x] = 1 - q, q
        else:
            step[0], step[-x] = q, 1 - q
        dist = np.convolve(dist, step)
    scores = offset + np.arange(len(dist))
    for threshold in [offset - 1, int(w.sum() // 3), 0, 500, int(w[w > 0].sum()) + 1]:
        expected = dist[scores >= threshold].sum()
        got = positive_probability(weights, threshold, net)
        assert got == pytest.approx(expected, abs=1e-9)


def test_chain_matches_forward_recursion():
    """A 40-variable chain with 5 states: engine vs a forward (HMM-style) recursion."""
    rng = np.random.default_rng(2)
    n, k = 40, 5
    parents = [()] + [(i - 1,) for i in range(1, n)]
    cpts = [rng.dirichlet(np.ones(k))] + [rng.dirichlet(np.ones(k), size=k) for _ in range(n - 1)]
    net = BayesNet([k] * n, parents, cpts)
    weights = [rng.integers(-20, 21, size=k) for _ in range(n)]
    # forward[state] = dict score -> probability, computed with plain Python dicts.
    forward = [{int(weights[0][s]): cpts[0][s]} for s in range(k)]
    for i in range(1, n):
        new = [dict() for _ in range(k)]
        for prev in range(k):
            for score, prob in forward[prev].items():
                for s in range(k):
                    key = score + int(weights[i][s])
                    new[s][key] = new[s].get(key, 0.0) + prob * cpts[i][prev, s]
        forward = new
    for threshold in [-50, 0, 37]:
        expected = sum(p for d in forward for sc, p in d.items() if sc >= threshold)
        assert positive_probability(weights, threshold, net) == pytest.approx(expected, abs=1e-10)


def test_order_search_on_larger_network():
    """12 variables, large weights: the random order search runs; still exact."""
    rng = np.random.default_rng(13)  # a plan of ~1e6 entries: worth searching
    net = random_network(rng, 12, max_card=3, min_card=3)
    weights = random_weights(rng, net, -100, 100)
    for t in [-50, 0, 80]:
        expected = brute_force(weights, t, net, {0: 1})
        assert positive_probability(weights, t, net, {0: 1}) == pytest.approx(expected, abs=1e-10)
    # 3 distinct heuristic orders on this network (greedy, greedy by recency, natural;
    # their evidence-first variants coincide): the others come from the random search
    assert plan(weights, 0, net, {0: 1}).n_orders > 3, "the order search was not exercised"
    # a cheap plan is not searched: at most the 8 heuristic orders are simulated
    assert plan(weights[:3], 0, BayesNet.independent([[0.2, 0.3, 0.5]] * 3)).n_orders <= 8


def test_tree_with_wide_frontier_uses_elimination():
    """A 10-state tree the frontier engine refuses: variable elimination is exact."""
    rng = np.random.default_rng(11)
    n, k = 40, 10
    parents = [()] + [(int(rng.integers(0, i)),) for i in range(1, n)]
    cpts = [rng.dirichlet(np.ones(k), size=tuple([k] * len(pa))) for pa in parents]
    net = BayesNet([k] * n, parents, cpts)
    weights = [rng.integers(-100, 101, size=k) for _ in range(n)]
    limit = 2_000_000
    with pytest.raises(TableTooLargeError, match="frontier holds"):
        positive_probability(weights, 0, net, max_table_size=limit, method="frontier")
    auto = positive_probability(weights, 0, net, max_table_size=limit)
    # Independent check: upward messages (subtree score distributions) with np.convolve.
    children = [[c for c in range(n) if parents[c] == (u,)] for u in range(n)]

    def message(u):  # dist[state of u, score - offset] of the subtree of u
        dist, offset = np.ones((k, 1)), 0
        for c in children[u]:
            m, off = to_parent(c)  # m[state of u, score]
            dist = np.array([np.convolve(dist[s], m[s]) for s in range(k)])
            offset += off
        low = int(weights[u].min())
        out = np.zeros((k, dist.shape[1] + int(weights[u].max()) - low))
        for s in range(k):
            shift = int(weights[u][s]) - low
            out[s, shift : shift + dist.shape[1]] = dist[s]
        return out, offset + low

    def to_parent(c):
        m, off = message(c)
        return cpts[c] @ m, off  # [parent state, score]

    root, root_off = message(0)
    joint = cpts[0] @ root
    scores = root_off + np.arange(len(joint))
    expected = joint[scores >= 0].sum()
    assert auto == pytest.approx(expected, abs=1e-9)
    with pytest.raises(TableTooLargeError, match="Variable elimination would need"):
        positive_probability(weights, 0, net, max_table_size=1000, method="elimination")
    with pytest.raises(TableTooLargeError, match="variable elimination would need"):
        positive_probability(weights, 0, net, max_table_size=1000)


def test_sampling_agrees_with_exact():
    rng = np.random.default_rng(3)
    net = random_network(rng, 8, max_card=3)
    weights = random_weights(rng, net)
    exact = positive_probability(weights, 1, net)
    samples = net.sample(40_000, random_state=0)
    score = sum(weights[i][samples[:, i]] for i in range(net.n_variables))
    freq = (score >= 1).mean()
    assert abs(freq - exact) < 5 * np.sqrt(exact * (1 - exact) / 40_000) + 1e-3


def test_components_independent_of_evidence_are_shared():
    """Evidence on one component, decisive weights on another (early pruning path)."""
    rng = np.random.default_rng(9)
    a_part = [np.array([0.2, 0.8]), np.array([[0.9, 0.1, 0.0], [0.3, 0.3, 0.4]])]
    b_marg = [rng.dirichlet(np.ones(3)) for _ in range(5)]
    net = BayesNet([2, 3] + [3] * 5, [(), (0,)] + [()] * 5, a_part + b_marg)
    for b_weights in ([-50, 0, 50], [0, 1, 2], [0, 0, 0]):
        weights = [np.array([0, 1]), np.array([0, 2, -1])] + [np.array(b_weights)] * 5
        for t in [-300, -60, 0, 1, 2, 60, 300]:
            table, marginal = positive_probability_table(
                weights, t, net, [1], {0: 0}, return_marginal=True
            )
            np.testing.assert_allclose(marginal, [0.9, 0.1, 0.0], atol=1e-12)
            for state in range(2):
                expected = brute_force(weights, t, net, {0: 0, 1: state})
                assert table[state] == pytest.approx(expected, abs=1e-12)
            assert np.isnan(table[2])
            expected = brute_force(weights, t, net, {1: 2})
            assert positive_probability(weights, t, net, {1: 2}) == pytest.approx(expected)


def test_sample_shapes_and_bad_input():
    weights, threshold, net = example6()
    draws = net.sample(5, random_state=np.random.default_rng(0))
    assert draws.shape == (5, 4) and draws.dtype.kind == "i"
    assert net.sample(0).shape == (0, 4)
    with pytest.raises(ValueError, match="n_samples"):
        net.sample(-1)
    with pytest.raises(ValueError, match="n_samples"):
        net.sample(2.5)


@pytest.mark.parametrize("n_free, sensitive_scale, joint_expected", [(0, 40, False), (40, 1, True)])
def test_group_table_joint_or_split(n_free, sensitive_scale, joint_expected):
    """Compute the table jointly when work is shared, per group otherwise.

    Both agree with one call per group.
    """
    rng = np.random.default_rng(12)
    n_linked = 25
    cards = [2, 3] + [6] * (n_linked + n_free)
    parents = [(), ()]
    for j in range(n_linked):
        parents.append((0, 1) if j == 0 else (len(parents) - 1,))
    for j in range(n_free):
        parents.append(() if j == 0 else (len(parents) - 1,))
    cpts = [
        rng.dirichlet(np.ones(c), size=tuple(cards[q] for q in pa)) for c, pa in zip(cards, parents)
    ]
    net = BayesNet(cards, parents, cpts)
    weights = [rng.integers(-60, 61, size=c) for c in cards]
    # large sensitive weights widen the joint table's score axis, not a group's
    weights[0] = np.array([0, 25]) * sensitive_scale
    weights[1] = np.array([0, -20, 15]) * sensitive_scale
    table, marginal = positive_probability_table(weights, 0, net, [0, 1], return_marginal=True)
    chosen = plan(weights, 0, net, evidence_vars=[0, 1])
    assert (chosen.engine != "per-group") == joint_expected
    assert bool(chosen.groups) != joint_expected
    for a in range(2):
        for b in range(3):
            single = positive_probability(weights, 0, net, {0: a, 1: b}, method="frontier")
            assert table[a, b] == pytest.approx(single, abs=1e-12)
    np.testing.assert_allclose(marginal, np.outer(cpts[0], cpts[1]), atol=1e-12)


def test_group_table_falls_back_to_groups_when_joint_too_large():
    rng = np.random.default_rng(13)
    n = 20
    cards = [4, 4] + [8] * n
    parents = [(), ()] + [(0, 1) if j == 0 else (j + 1,) for j in range(n)]
    cpts = [
        rng.dirichlet(np.ones(c), size=tuple(cards[q] for q in pa)) for c, pa in zip(cards, parents)
    ]
    net = BayesNet(cards, parents, cpts)
    weights = [rng.integers(-100, 101, size=c) for c in cards]
    weights[0], weights[1] = weights[0] * 30, weights[1] * 30  # wide joint score axis
    limit = 300_000
    table = positive_probability_table(weights, 0, net, [0, 1], max_table_size=limit)
    for a in range(4):
        for b in range(4):
            single = positive_probability(weights, 0, net, {0: a, 1: b}, max_table_size=limit)
            assert table[a, b] == pytest.approx(single, abs=1e-12)
    order = net.topological_order()  # an explicit order disables the fallback
    with pytest.raises(TableTooLargeError):
        positive_probability_table(weights, 0, net, [0, 1], max_table_size=limit, order=order)


# -------------------------------------------------------------- degenerate


def test_all_weights_zero():
    rng = np.random.default_rng(4)
    net = random_network(rng, 5)
    zeros = [np.zeros(c, dtype=int) for c in net.cardinalities]
    assert positive_probability(zeros, 0, net) == 1.0
    assert positive_probability(zeros, -3, net) == 1.0
    assert positive_probability(zeros, 1, net) == 0.0
    np.testing.assert_array_equal(positive_probability_table(zeros, 1, net, [0]), 0.0)


def test_threshold_outside_reachable_scores():
    rng = np.random.default_rng(5)
    net = random_network(rng, 6)
    weights = random_weights(rng, net)
    low = sum(int(w.min()) for w in weights)
    high = sum(int(w.max()) for w in weights)
    assert positive_probability(weights, low, net) == pytest.approx(1.0)
    assert positive_probability(weights, low - 100, net) == pytest.approx(1.0)
    assert positive_probability(weights, high + 1, net) == 0.0
    assert positive_probability(weights, high, net) == pytest.approx(
        brute_force(weights, high, net)
    )


def test_single_variable():
    net = BayesNet([3], [()], [np.array([0.2, 0.3, 0.5])])
    weights = [np.array([-4, 7, 2])]
    assert positive_probability(weights, 2, net) == pytest.approx(0.8)
    assert positive_probability(weights, 3, net) == pytest.approx(0.3)
    assert positive_probability(weights, 2, net, {0: 0}) == 0.0
    np.testing.assert_allclose(positive_probability_table(weights, 2, net, [0]), [0, 1, 1])


def test_single_state_variables():
    net = BayesNet([1, 2], [(), (0,)], [np.array([1.0]), np.array([[0.25, 0.75]])])
    assert positive_probability([np.array([5]), np.array([0, 1])], 6, net) == pytest.approx(0.75)


def test_deterministic_cpt():
    # Q is a copy of P; score P + Q >= 2 iff P = 1.
    net = BayesNet([2, 2], [(), (0,)], [np.array([0.3, 0.7]), np.eye(2)])
    weights = [np.array([0, 1]), np.array([0, 1])]
    assert positive_probability(weights, 2, net) == pytest.approx(0.7)
    assert positive_probability(weights, 1, net) == pytest.approx(0.7)
    assert positive_probability(weights, 2, net, {1: 1}) == pytest.approx(1.0)


def test_zero_probability_evidence():
    net = BayesNet([2, 2], [(), (0,)], [np.array([0.3, 0.7]), np.eye(2)])
    weights = [np.array([0, 1]), np.array([0, 1])]
    with pytest.raises(ValueError, match="probability 0"):
        positive_probability(weights, 1, net, {0: 0, 1: 1})
    table, marginal = positive_probability_table(weights, 1, net, [1], {0: 1}, return_marginal=True)
    assert np.isnan(table[0]) and table[1] == 1.0
    np.testing.assert_allclose(marginal, [0.0, 1.0])
    # The fixed evidence itself impossible: an error, not a table of NaN.
    never_one = BayesNet([2, 2], [(), (0,)], [np.array([1.0, 0.0]), np.eye(2)])
    with pytest.raises(ValueError, match="probability 0"):
        positive_probability_table(weights, 1, never_one, [0], {1: 1})
    # best_assignment skips impossible groups and refuses when none is possible.
    p, assignment = best_assignment(weights, 1, net, [1], {0: 1}, mode="min")
    assert p == 1.0 and assignment == {1: 1}
    with pytest.raises(ValueError, match="probability 0"):
        best_assignment(weights, 1, never_one, [1], {0: 1})


def test_integer_valued_floats_and_gcd_scaling():
    weights, threshold, net = example6()
    as_float = [w.astype(float) * 7 for w in weights]
    for t in [13, 14, 15]:  # thresholds between multiples of 7 (ceil division)
        expected = brute_force(as_float, t, net, {0: 1})
        assert positive_probability(as_float, t, net, {0: 1}) == pytest.approx(expected)
    assert positive_probability(weights, 2.0, net, {0: 1}) == pytest.approx(0.65)


# -------------------------------------------------------------- size guard


def test_table_too_large_error():
    rng = np.random.default_rng(6)
    n, k = 12, 6
    parents = [()] + [(i - 1,) for i in range(1, n)]
    cpts = [rng.dirichlet(np.ones(k))] + [rng.dirichlet(np.ones(k), size=k) for _ in range(n - 1)]
    net = BayesNet([k] * n, parents, cpts)
    weights = [rng.integers(-100, 101, size=k) for _ in range(n)]
    with pytest.raises(TableTooLargeError, match=r"frontier.*score.*bytes.*fewer bins") as info:
        positive_probability(weights, 0, net, max_table_size=1000)
    assert isinstance(info.value, MemoryError)
    assert "max_table_size=1,000" in str(info.value)
    # The default limit is fine for the same problem.
    assert 0.0 <= positive_probability(weights, 0, net) <= 1.0


def test_wide_frontier_refused_before_allocation():
    # One child of 16 parents: all 16 stay in the frontier until it is processed.
    n = 16
    cards = [2] * (n + 1)
    parents = [()] * n + [tuple(range(n))]
    cpts = [np.array([0.5, 0.5])] * n + [np.full((2,) * n + (2,), 0.5)]
    net = BayesNet(cards, parents, cpts)
    weights = [np.array([0, 1])] * (n + 1)
    with pytest.raises(TableTooLargeError, match=r"frontier holds \d+ variables"):
        positive_probability(weights, 5, net, max_table_size=10_000)
    # Within the default limit the same network is exact: Binomial(17, 1/2) tail.
    from math import comb

    expected = sum(comb(n + 1, k) for k in range(5, n + 2)) / 2 ** (n + 1)
    assert positive_probability(weights, 5, net) == pytest.approx(expected, abs=1e-12)


# -------------------------------------------------------------- validation


def _valid():
    return [2, 3], [(), (0,)], [np.array([0.4, 0.6]), np.full((2, 3), 1 / 3)]


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda c, p, t: (c, [(), (1,)], t), "own parent"),
        (lambda c, p, t: (c, [(1,), (0,)], [np.full((3, 2), 0.5), t[1]]), "cycle"),
        (lambda c, p, t: (c, [(), (5,)], t), "out of range"),
        (lambda c, p, t: (c, [(), (0, 0)], t), "twice"),
        (lambda c, p, t: (c, p, [t[0], np.full((3, 3), 1 / 3)]), "shape"),
        (lambda c, p, t: (c, p, [np.array([0.5, 0.6]), t[1]]), "sum to 1"),
        (lambda c, p, t: (c, p, [np.array([1.5, -0.5]), t[1]]), "negative"),
        (lambda c, p, t: (c, p, [np.array([np.nan, 0.5]), t[1]]), "NaN"),
        (lambda c, p, t: (c, [()], t), "parents has 1"),
        (lambda c, p, t: (c, p, t[:1]), "cpts has 1"),
        (lambda c, p, t: ([2, 0], p, t), "at least one state"),
        (lambda c, p, t: ([2, 2.5], p, t), "integer"),
        (lambda c, p, t: (c, p, [np.array(["a", "b"]), t[1]]), "numeric"),
    ],
)
def test_bayesnet_validation(change, match):
    cards, parents, cpts = change(*_valid())
    with pytest.raises(ValueError, match=match):
        BayesNet(cards, parents, cpts)


def test_bayesnet_error_names_variable():
    cards, parents, cpts = _valid()
    with pytest.raises(ValueError, match="'income'"):
        BayesNet(cards, parents, [cpts[0], np.full((2, 3), 0.5)], names=["age", "income"])


def test_bayesnet_names_and_state_names_validation():
    cards, parents, cpts = _valid()
    with pytest.raises(ValueError, match="names has 1"):
        BayesNet(cards, parents, cpts, names=["a"])
    with pytest.raises(ValueError, match="Duplicate"):
        BayesNet(cards, parents, cpts, names=["a", "a"])
    with pytest.raises(ValueError, match="state_names has 1"):
        BayesNet(cards, parents, cpts, state_names=[[0, 1]])
    with pytest.raises(ValueError, match="3 states but 2 state names"):
        BayesNet(cards, parents, cpts, state_names=[[0, 1], ["a", "b"]])
    with pytest.raises(ValueError, match="one-dimensional"):
        BayesNet.independent([np.full((2, 2), 0.25)])


def test_bayesnet_attributes_and_renormalisation():
    net = BayesNet([2, 3], [(), (0,)], [np.array([0.4, 0.6 + 5e-7]), np.full((2, 3), 1 / 3)])
    assert net.names == ["X0", "X1"]
    assert net.state_names == [[0, 1], [0, 1, 2]]
    assert net.n_variables == 2 and net.cardinalities == [2, 3]
    assert net.children(0) == (1,) and net.children(1) == ()
    assert net.topological_order() == [0, 1]
    assert net.cpts[0].sum() == pytest.approx(1.0, abs=1e-15)
    assert "n_variables=2" in repr(net)
    rev = BayesNet([2, 2], [(1,), ()], [np.full((2, 2), 0.5), np.full(2, 0.5)])
    assert rev.topological_order() == [1, 0]


def test_replace_cpt():
    weights, threshold, net = example6()
    uniform_q = net.replace_cpt(1, np.array([0.5, 0.5]), parents=())
    assert net.parents[1] == (0,)  # original untouched
    assert uniform_q.parents[1] == ()
    expected = brute_force(weights, threshold, uniform_q, {0: 1})
    assert positive_probability(weights, threshold, uniform_q, {0: 1}) == pytest.approx(expected)
    assert expected == pytest.approx(0.5 * 0.5 + 0.5 * 0.5 * 0.7 * 2)
    with pytest.raises(ValueError, match="shape"):
        net.replace_cpt(1, np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="out of range"):
        net.replace_cpt(7, np.array([0.5, 0.5]))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"weights": [np.array([0, 1])]}, ValueError, "one weight vector per variable"),
        ({"weights": [np.array([0, 1, 2])] + [np.array([0, 1])] * 3}, ValueError, "one entry"),
        ({"weights": [np.array([0, 0.5])] + [np.array([0, 1])] * 3}, ValueError, "integer"),
        ({"weights": [np.array([0, np.nan])] + [np.array([0, 1])] * 3}, ValueError, "NaN"),
        ({"weights": [np.array(["a", "b"])] + [np.array([0, 1])] * 3}, ValueError, "integers"),
        ({"weights": [np.array([0, 1e300])] + [np.array([0, 1])] * 3}, ValueError, "too large"),
        ({"threshold": 1.5}, ValueError, "threshold"),
        ({"threshold": float("nan")}, ValueError, "threshold"),
        ({"evidence": {9: 0}}, ValueError, "out of range"),
        ({"evidence": {0: 2}}, ValueError, "out of range"),
        ({"evidence": [(0, 1)]}, TypeError, "evidence"),
        ({"network": "net"}, TypeError, "BayesNet"),
        ({"max_table_size": 0}, ValueError, "max_table_size"),
        ({"order": [0, 1, 2]}, ValueError, "permutation"),
        ({"order": [1, 0, 2, 3]}, ValueError, "topological"),
        ({"method": "magic"}, ValueError, "method"),
        ({"order": [0, 1, 2, 3], "method": "elimination"}, ValueError, "frontier"),
    ],
)
def test_positive_probability_bad_input(kwargs, error, match):
    weights, threshold, net = example6()
    args = {"weights": weights, "threshold": threshold, "network": net, "evidence": None}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        positive_probability(**args)


def test_table_and_best_assignment_bad_input():
    weights, threshold, net = example6()
    with pytest.raises(ValueError, match="twice"):
        positive_probability_table(weights, threshold, net, [0, 0])
    with pytest.raises(ValueError, match="both in evidence_vars and in evidence"):
        positive_probability_table(weights, threshold, net, [0], {0: 1})
    with pytest.raises(ValueError, match="out of range"):
        positive_probability_table(weights, threshold, net, [4])
    with pytest.raises(ValueError, match="mode"):
        best_assignment(weights, threshold, net, [0], mode="median")
    with pytest.raises(ValueError, match="out of range"):
        best_assignment(weights, threshold, net, [-1])


def test_table_without_evidence_vars_is_scalar():
    weights, threshold, net = example6()
    out = positive_probability_table(weights, threshold, net, [])
    assert out.shape == ()
    assert float(out) == pytest.approx(brute_force(weights, threshold, net))


# -------------------------------------------------------------- pgmpy


def _hand_model():
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork([("A", "B"), ("B", "C"), ("A", "C")])
    model.add_node("D")
    model.add_cpds(
        TabularCPD("A", 2, [[0.3], [0.7]], state_names={"A": ["no", "yes"]}),
        TabularCPD(
            "B",
            3,
            [[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]],
            evidence=["A"],
            evidence_card=[2],
            state_names={"B": ["lo", "mid", "hi"], "A": ["no", "yes"]},
        ),
        TabularCPD(
            "C",
            2,
            [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]],
            evidence=["A", "B"],
            evidence_card=[2, 3],
            state_names={"C": ["x", "y"], "A": ["no", "yes"], "B": ["lo", "mid", "hi"]},
        ),
        TabularCPD("D", 2, [[0.25], [0.75]], state_names={"D": [0, 1]}),
    )
    assert model.check_model()
    return model


def test_from_pgmpy_matches_variable_elimination():
    from pgmpy.inference import VariableElimination

    model = _hand_model()
    net = BayesNet.from_pgmpy(model)
    assert net.names == [str(n) for n in model.nodes()]
    idx = {name: k for k, name in enumerate(net.names)}
    assert net.state_names[idx["B"]] == ["lo", "mid", "hi"]
    assert net.parents[idx["C"]] == (idx["A"], idx["B"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = VariableElimination(model).query(net.names, joint=True, show_progress=False)
    # reorder pgmpy's joint to our variable order and compare with our enumeration
    values = np.transpose(joint.values, [joint.variables.index(n) for n in net.names])
    grids, prob = joint_enumeration(net)
    np.testing.assert_allclose(values[tuple(grids.T)], prob, atol=1e-12)
    # positive probability vs pgmpy's joint directly
    weights = [np.arange(c) * (k + 1) - k for k, c in enumerate(net.cardinalities)]
    score = sum(weights[i][grids[:, i]] for i in range(net.n_variables))
    for t in [-1, 2, 4]:
        expected = values[tuple(grids.T)][score >= t].sum()
        assert positive_probability(weights, t, net) == pytest.approx(expected, abs=1e-12)


def test_pgmpy_round_trip():
    model = _hand_model()
    net = BayesNet.from_pgmpy(model)
    back = BayesNet.from_pgmpy(net.to_pgmpy())
    assert back.names == net.names
    assert back.state_names == net.state_names
    assert back.parents == net.parents
    for a, b in zip(back.cpts, net.cpts):
        np.testing.assert_allclose(a, b)
    rng = np.random.default_rng(7)
    rand = random_network(rng, 6, shuffle=False)
    again = BayesNet.from_pgmpy(rand.to_pgmpy())
    weights = random_weights(rng, rand)
    # node order may differ: map by name
    perm = [again.names.index(n) for n in rand.names]
    w_again = [None] * rand.n_variables
    for i, j in enumerate(perm):
        w_again[j] = weights[i]
    assert positive_probability(w_again, 1, again) == pytest.approx(
        positive_probability(weights, 1, rand), abs=1e-12
    )


def test_from_fitted_pgmpy_model():
    import pandas as pd
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteMLE

    rng = np.random.default_rng(8)
    a = rng.choice(["f", "m"], size=300)
    b = np.where(rng.random(300) < np.where(a == "f", 0.8, 0.3), "high", "low")
    df = pd.DataFrame({"sex": a, "income": b}).astype("category")
    model = DiscreteBayesianNetwork([("sex", "income")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(df, estimator=DiscreteMLE())
    net = BayesNet.from_pgmpy(model)
    i_sex, i_inc = net.names.index("sex"), net.names.index("income")
    hi = net.state_names[i_inc].index("high")
    for s, sex in enumerate(net.state_names[i_sex]):
        empirical = (df.loc[df.sex == sex, "income"] == "high").mean()
        w = [np.zeros(2, int), np.zeros(2, int)]
        w[i_inc][hi] = 1
        got = positive_probability(w, 1, net, {i_sex: s})
        assert got == pytest.approx(empirical)


def test_from_pgmpy_missing_cpd():
    from pgmpy.models import DiscreteBayesianNetwork

    with pytest.raises(ValueError, match="no CPD"):
        BayesNet.from_pgmpy(DiscreteBayesianNetwork([("A", "B")]))


# ------------------------------------------------------------------ the public plan


def test_plan_is_what_runs_and_peak_is_the_largest_allocation():
    """Check that the plan's peak is the memory the run needs.

    The frontier run allocates an array of peak_entries float64 (tracemalloc peak >=
    peak_bytes), and at most about three such arrays at once; a max_table_size one
    entry smaller is refused.
    """
    import tracemalloc

    rng = np.random.default_rng(21)
    net = random_network(rng, 9, max_card=4, max_parents=2)
    weights = random_weights(rng, net, -5000, 5000)
    chosen = plan(weights, 0, net, method="frontier")
    assert chosen.engine == "frontier" and sorted(chosen.order) == list(range(9))
    assert chosen.peak_bytes == 8 * chosen.peak_entries > 1_000_000
    tracemalloc.start()
    try:
        value = positive_probability(
            weights, 0, net, order=chosen.order, max_table_size=chosen.peak_entries
        )
        _, traced_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert chosen.peak_bytes <= traced_peak <= 3 * chosen.peak_bytes + 2_000_000
    assert value == pytest.approx(brute_force(weights, 0, net), abs=1e-10)
    with pytest.raises(TableTooLargeError, match=f"{chosen.peak_entries:,} entries"):
        plan(weights, 0, net, order=chosen.order, max_table_size=chosen.peak_entries - 1)


def test_plan_repr_and_frame():
    weights, threshold, net = example6()
    chosen = plan(weights, threshold, net)
    assert isinstance(chosen, Plan)
    assert repr(chosen).startswith(f"Plan(engine={chosen.engine!r}, order=")
    assert f"peak={chosen.peak_entries:,} entries ({chosen.peak_bytes:,} bytes)" in repr(chosen)
    frame = chosen.to_frame()
    assert frame.index.tolist() == ["all"]
    assert frame.loc["all", "peak_bytes"] == chosen.peak_bytes
    ve = plan(weights, threshold, net, method="elimination")
    assert ve.engine == "elimination" and ve.n_orders == 0
    with pytest.raises(ValueError, match="order applies to method='frontier'"):
        plan(weights, threshold, net, order=[0, 1, 2, 3], method="elimination")


def test_plan_per_group_frame_and_groups_agree_with_single_plans():
    """A per-group plan holds, for each assignment, the plan of that evidence alone."""
    rng = np.random.default_rng(13)
    n = 20
    cards = [4, 4] + [8] * n
    parents = [(), ()] + [(0, 1) if j == 0 else (j + 1,) for j in range(n)]
    cpts = [
        rng.dirichlet(np.ones(c), size=tuple(cards[q] for q in pa)) for c, pa in zip(cards, parents)
    ]
    net = BayesNet(cards, parents, cpts)
    weights = [rng.integers(-100, 101, size=c) for c in cards]
    weights[0], weights[1] = weights[0] * 30, weights[1] * 30
    chosen = plan(weights, 0, net, evidence_vars=[0, 1], max_table_size=300_000)
    assert chosen.engine == "per-group" and chosen.order is None
    assert sorted(chosen.groups) == [(a, b) for a in range(4) for b in range(4)]
    assert chosen.peak_entries == max(g.peak_entries for g in chosen.groups.values())
    for (a, b), group in chosen.groups.items():
        single = plan(weights, 0, net, {0: a, 1: b}, max_table_size=300_000)
        assert (group.engine, group.order, group.peak_entries) == (
            single.engine,
            single.order,
            single.peak_entries,
        )
    frame = chosen.to_frame()
    assert len(frame) == 16 and frame.index[0] == (0, 0)
    assert "per-group" in repr(chosen) and "groups=16" in repr(chosen)


@pytest.mark.parametrize(
    "func, kwargs, match",
    [
        (plan, {"method": "magic"}, "'method' parameter of plan"),
        (plan, {"max_table_size": 2.5}, "'max_table_size' parameter of plan"),
        (plan, {"evidence": [(0, 1)]}, "'evidence' parameter of plan"),
        (plan, {"evidence_vars": 0}, "'evidence_vars' parameter of plan"),
        (positive_probability, {"threshold": "2"}, "'threshold' parameter"),
        (positive_probability, {"order": 3}, "'order' parameter"),
        (positive_probability_table, {"return_marginal": "yes"}, "'return_marginal' parameter"),
        (best_assignment, {"mode": "median"}, "'mode' parameter of best_assignment"),
    ],
)
def test_parameter_constraints_of_public_functions(func, kwargs, match):
    """Types and options are refused by the parameter constraints, naming the parameter."""
    weights, threshold, net = example6()
    args = {"weights": weights, "threshold": threshold, "network": net}
    if func is positive_probability_table:
        args["evidence_vars"] = [0]
    if func is best_assignment:
        args["choice_vars"] = [0]
    args.update(kwargs)
    with pytest.raises((TypeError, ValueError), match=match):
        func(**args)
