"""The frontier engine's last step: the last variable added and split by the threshold at
once (``_Accumulators.split_last``), without a table over its states and shifted scores.

Checked against brute-force enumeration (every variable last in turn, kept or not, with
evidence, at every threshold), against the previous engine (``legacy=True``) on larger
networks, and the plan's peak against the memory the run allocates when the last variable
has many states (a continuous feature with a bin per distinct value).
"""

import itertools
import tracemalloc

import numpy as np
import pytest

from skfairverify.s3p import BayesNet, plan, positive_probability, positive_probability_table


def random_dag(rng, n, max_card=4):
    """A random network over ``n`` variables, parents among the earlier ones (<= 2)."""
    cards = [int(c) for c in rng.integers(2, max_card + 1, size=n)]
    parents, cpts = [], []
    for i in range(n):
        k = int(rng.integers(0, min(i, 2) + 1))
        pa = tuple(sorted(rng.choice(i, size=k, replace=False).tolist())) if k else ()
        parents.append(pa)
        cpts.append(rng.dirichlet(np.ones(cards[i]), size=tuple(cards[q] for q in pa)))
    return BayesNet(cards, parents, cpts)


def enumerate_table(weights, threshold, net, keep, evidence=None):
    """Pr[score >= t, keep = a, evidence] and Pr[keep = a, evidence] by enumeration."""
    shape = tuple(net.cardinalities[k] for k in keep)
    pos, total = np.zeros(shape), np.zeros(shape)
    for states in itertools.product(*(range(c) for c in net.cardinalities)):
        if evidence and any(states[v] != s for v, s in evidence.items()):
            continue
        p = np.prod([net.cpts[i][tuple(states[q] for q in net.parents[i]) + (states[i],)]
                     for i in range(net.n_variables)])
        at = tuple(states[k] for k in keep)
        total[at] += p
        if sum(int(weights[i][s]) for i, s in enumerate(states)) >= threshold:
            pos[at] += p
    return pos, total


def topological_orders_ending_in(net, last):
    """A parents-first order of the network's variables with ``last`` as late as it can be.

    ``last`` is placed after every variable that is not one of its descendants.
    """
    n = net.n_variables
    order, placed = [], set()
    while len(order) < n:
        ready = [v for v in range(n) if v not in placed
                 and all(p in placed for p in net.parents[v])]
        pick = next((v for v in ready if v != last), ready[0])
        order.append(pick)
        placed.add(pick)
    return order


@pytest.mark.parametrize("seed", range(12))
def test_every_variable_last_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    net = random_dag(rng, 5)
    weights = [rng.integers(-6, 7, size=c) for c in net.cardinalities]
    scores = [int(sum(w.min() for w in weights)), int(sum(w.max() for w in weights))]
    for last in range(net.n_variables):
        order = topological_orders_ending_in(net, last)
        for keep in ([], [last], [order[0]], [last, order[0]] if order[0] != last else [last]):
            threshold = int(rng.integers(scores[0] - 1, scores[1] + 2))
            table, marginal = positive_probability_table(
                weights, threshold, net, keep, order=order, method="frontier",
                return_marginal=True)
            pos, total = enumerate_table(weights, threshold, net, keep)
            with np.errstate(invalid="ignore", divide="ignore"):
                expected = np.where(total > 0, pos / np.where(total > 0, total, 1), np.nan)
            np.testing.assert_allclose(marginal, total, atol=1e-12)
            np.testing.assert_allclose(table, expected, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_last_variable_with_evidence_matches_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    net = random_dag(rng, 5)
    weights = [rng.integers(-9, 10, size=c) for c in net.cardinalities]
    last = net.n_variables - 1
    order = topological_orders_ending_in(net, last)
    for v in (last, order[0]):
        evidence = {v: int(rng.integers(0, net.cardinalities[v]))}
        threshold = int(rng.integers(-5, 6))
        got = positive_probability(weights, threshold, net, evidence, order=order,
                                   method="frontier")
        pos, total = enumerate_table(weights, threshold, net, [], evidence)
        assert got == pytest.approx(float(pos / total), abs=1e-12)


def many_states_net(rng, n_states, n_parents_states=3):
    """A sensitive root, a feature below it, and a leaf of ``n_states`` states below both."""
    cards = [2, n_parents_states, n_states]
    parents = [(), (0,), (0, 1)]
    cpts = [rng.dirichlet(np.ones(c), size=tuple(cards[q] for q in pa))
            for c, pa in zip(cards, parents)]
    weights = [np.array([0, 40]), rng.integers(-50, 50, size=n_parents_states),
               np.sort(rng.integers(-3000, 3000, size=n_states))]
    return BayesNet(cards, parents, cpts), weights


def test_a_leaf_of_many_states_agrees_with_the_previous_engine_in_every_group():
    rng = np.random.default_rng(7)
    net, weights = many_states_net(rng, 5000)
    for threshold in (-2500, 0, 1700):
        chosen = plan(weights, threshold, net, evidence_vars=[0], method="frontier")
        assert chosen.order[-1] == 2
        (pos, total), (old_pos, old_total) = chosen._execute(), chosen._execute(legacy=True)
        np.testing.assert_allclose(total, old_total, rtol=0, atol=1e-13)
        np.testing.assert_allclose(pos, old_pos, rtol=0, atol=1e-13)


def test_the_plan_of_a_many_state_leaf_is_the_memory_its_run_allocates():
    """The peak no longer holds (states x scores) at the last step, and the run keeps to it."""
    rng = np.random.default_rng(3)
    n_states = 20_000
    net, weights = many_states_net(rng, n_states)
    chosen = plan(weights, 0, net, evidence_vars=[0], method="frontier")
    span = int(weights[2].max() - weights[2].min())
    assert chosen.order[-1] == 2
    assert chosen.peak_entries < n_states * span / 100  # the old last step's table
    tracemalloc.start()
    try:
        chosen._execute()
        _, traced = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert traced <= 3 * chosen.peak_bytes + 2_000_000
