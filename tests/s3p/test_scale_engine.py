"""Scale (issue 13): variable elimination on tree-augmented networks, by enumeration.

The verifier's networks are trees of features below the sensitive variables; the
elimination engine sums a leaf out of its parent's table by one (batched) matrix
product with the shifted score axis and convolves siblings by FFT. Compared here with
the probability of every assignment enumerated.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skfairverify.s3p import BayesNet, positive_probability_table


def _tan_network(rng, n_features, n_states, n_sensitive_states=(2, 3)):
    """Sensitive roots parents of every feature; features on a random tree (or star)."""
    cards = list(n_sensitive_states) + [int(rng.integers(2, n_states + 1))
                                        for _ in range(n_features)]
    n_sens = len(n_sensitive_states)
    parents = [()] * n_sens
    for k in range(n_features):
        tree = (n_sens + int(rng.integers(0, k)),) if k else ()
        parents.append(tuple(range(n_sens)) + tree)
    cpts = []
    for v, pa in enumerate(parents):
        table = rng.dirichlet(np.full(cards[v], 0.7), size=[cards[p] for p in pa] or None)
        cpts.append(np.asarray(table))
    return BayesNet(cards, parents, cpts)


def _enumerate(weights, threshold, net, keep):
    shape = [net.cardinalities[v] for v in keep]
    pos, tot = np.zeros(shape), np.zeros(shape)
    for states in itertools.product(*(range(c) for c in net.cardinalities)):
        p = 1.0
        for v, pa in enumerate(net.parents):
            p *= net.cpts[v][tuple(states[u] for u in pa) + (states[v],)]
        idx = tuple(states[v] for v in keep)
        tot[idx] += p
        if sum(int(weights[v][s]) for v, s in enumerate(states)) >= threshold:
            pos[idx] += p
    return pos / tot


@pytest.mark.parametrize("seed", range(6))
def test_elimination_on_tan_networks_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    net = _tan_network(rng, n_features=5, n_states=4)
    weights = [rng.integers(-20, 21, c) for c in net.cardinalities]
    threshold = int(rng.integers(-10, 11))
    expected = _enumerate(weights, threshold, net, [0, 1])
    for method in ("elimination", "frontier", "auto"):
        got = positive_probability_table(weights, threshold, net, [0, 1], method=method)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_elimination_with_evidence_star_of_long_messages():
    # a star: many siblings' messages convolved by FFT at the hub, long score axes
    rng = np.random.default_rng(7)
    cards = [2, 3, 3, 3, 3, 3, 3]
    parents = [(), (0,)] + [(0, 1)] * 5
    cpts = [rng.dirichlet(np.ones(c), size=[cards[p] for p in pa] or None)
            for c, pa in zip(cards, parents)]
    net = BayesNet(cards, parents, cpts)
    weights = [rng.integers(-500, 501, c) for c in cards]
    expected = _enumerate(weights, 0, net, [0])
    got = positive_probability_table(weights, 0, net, [0], method="elimination")
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_planner_skips_random_orders_when_elimination_is_far_cheaper():
    """A wide tree: no frontier order fits; elimination is chosen without 200 random tries."""
    from skfairverify.s3p import plan

    rng = np.random.default_rng(3)
    net = _tan_network(rng, n_features=40, n_states=30, n_sensitive_states=(2,))
    weights = [rng.integers(-300, 301, c) for c in net.cardinalities]
    p = plan(weights, 0, net, evidence_vars=[0], max_table_size=5_000_000)
    runs = list(p.groups.values()) or [p]
    assert all(r.engine == "elimination" for r in runs)
    assert p.n_orders < 40  # the candidate orders only (200 random tries per run before)
    forced = positive_probability_table(weights, 0, net, [0], method="elimination",
                                        max_table_size=5_000_000)
    np.testing.assert_allclose(positive_probability_table(weights, 0, net, [0],
                                                          max_table_size=5_000_000),
                               forced, rtol=0, atol=1e-12)


@pytest.mark.parametrize("max_table_size", [50_000_000, 2_000])
def test_cached_plan_runs_on_each_networks_own_tables(max_table_size):
    """Same structure, other CPTs (as the posterior draws): planned once, each exact."""
    from skfairverify.s3p import _plan

    rng = np.random.default_rng(11)
    first = _tan_network(rng, n_features=5, n_states=4)
    weights = [rng.integers(-20, 21, c) for c in first.cardinalities]
    _plan._PLANS.clear()
    for k in range(3):
        net = first if k == 0 else BayesNet(
            first.cardinalities, first.parents,
            [rng.dirichlet(np.ones(t.shape[-1]), size=t.shape[:-1] or None)
             for t in first.cpts])
        got = positive_probability_table(weights, 3, net, [0, 1],
                                         max_table_size=max_table_size)
        np.testing.assert_allclose(got, _enumerate(weights, 3, net, [0, 1]), rtol=0,
                                   atol=1e-12)
    assert len(_plan._PLANS) == 1  # one structure, planned once
