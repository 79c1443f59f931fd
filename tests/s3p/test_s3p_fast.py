"""Issue 13 (scale), exact engine: the independent block (divide-and-conquer FFT
convolution), the trimming of negligible tails and the BLAS chain steps.

Every result is compared with an independent computation: exact rational
arithmetic (fractions) for the convolutions and their error bound, brute-force
enumeration for small networks, and the previous engine (``Plan._execute(legacy=True)``:
no block, no trimming, no BLAS) to 1e-9 on larger random networks.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from test_s3p import brute_force

from skfairverify.s3p import (
    BayesNet,
    TableTooLargeError,
    _convolve,
    _frontier,
    plan,
    positive_probability,
    positive_probability_table,
)

# ------------------------------------------------------------------ helpers


def exact_distribution(weights, probs):
    """Distribution of the sum of independent variables, in exact fractions.

    ``probs`` are fractions; weights are non-negative integers. Returns a dict score -> Fraction.
    """
    dist = {0: Fraction(1)}
    for w, p in zip(weights, probs):
        new = {}
        for score, mass in dist.items():
            for off, q in zip(w, p):
                new[score + int(off)] = new.get(score + int(off), 0) + mass * q
        dist = new
    return dist


def rational_pmf(rng, k, denominator=97):
    """A random distribution over ``k`` states with rational entries."""
    counts = rng.integers(0, denominator, size=k) + 1
    total = int(counts.sum())
    return [Fraction(int(c), total) for c in counts]


def chain_net(rng, n, k, parents_of=None):
    """Chain X0 -> X1 -> ... (or the given parents) with Dirichlet CPTs."""
    parents = parents_of or [()] + [(i - 1,) for i in range(1, n)]
    cards = [k] * n
    cpts = [rng.dirichlet(np.ones(k), size=tuple(cards[q] for q in pa)) for pa in parents]
    return BayesNet(cards, parents, cpts)


def new_and_legacy(weights, threshold, net, *args, **kwargs):
    """(new, legacy) results of the same plan: (positive mass, total mass)."""
    chosen = plan(weights, threshold, net, *args, **kwargs)
    return chosen, chosen._execute(), chosen._execute(legacy=True)


# ------------------------------------------------------- convolution, exact


@pytest.mark.parametrize("seed", range(4))
def test_block_distribution_matches_exact_rationals_within_its_bound(seed, monkeypatch):
    """Small chunks force FFT convolutions; the l1 error is within the returned bound."""
    monkeypatch.setattr(_convolve, "_CHUNK", 150)
    rng = np.random.default_rng(seed)
    n = 12
    probs = [rational_pmf(rng, 4) for _ in range(n)]
    raw = [rng.integers(-60, 61, size=4) for _ in range(n)]
    net = BayesNet.independent([[float(q) for q in p] for p in probs])
    chosen = plan(raw, 0, net)
    problem = chosen._problem
    block = problem.block()
    assert len(block) == n
    table, lo, bound = _convolve.block_distribution(problem, block)
    exact = exact_distribution([problem.weights[v] for v in block], [probs[v] for v in block])
    full = np.zeros(max(max(exact) + 1, lo + len(table)))
    full[lo : lo + len(table)] = table
    reference = np.zeros_like(full)
    for score, mass in exact.items():
        reference[score] = float(mass)
    error = np.abs(full - reference).sum()
    assert error <= bound + 1e-15
    assert bound < 1e-11
    assert table.sum() == pytest.approx(1.0, abs=1e-13)


def test_fft_error_bound_holds_for_point_masses_on_a_long_axis():
    """Worst case of the bound: mass at both ends of long axes, compared with exact values."""
    a = np.zeros(5001)
    a[0], a[-1] = Fraction(1, 3), Fraction(2, 3)
    b = np.zeros(3001)
    b[0], b[1500], b[-1] = 0.25, 0.5, 0.25
    out, bound = _convolve.convolve(a, b)
    exact = np.zeros(len(a) + len(b) - 1)
    for i, x in ((0, 1 / 3), (5000, 2 / 3)):
        for j, y in ((0, 0.25), (1500, 0.5), (3000, 0.25)):
            exact[i + j] += x * y
    error = np.abs(out - exact).sum()
    assert error <= bound
    assert 0 < bound < 1e-9
    assert np.all(out >= 0)


def test_direct_convolution_for_short_axes():
    a = np.array([0.2, 0.3, 0.5])
    b = np.linspace(1, 2, 200)
    out, bound = _convolve.convolve(a, b / b.sum())
    np.testing.assert_allclose(out, np.convolve(a, b / b.sum()), atol=1e-16)
    assert bound <= 3 * np.finfo(float).eps


def test_fold_tails_moves_at_most_the_budget_and_keeps_the_mass():
    table = np.array([1e-20, 1e-18, 0.3, 0.4, 0.3, 1e-19])
    folded, start, moved = _convolve.fold_tails(table, 1e-12)
    assert start == 2 and len(folded) == 3
    assert folded.sum() == pytest.approx(table.sum(), abs=1e-30)
    assert moved == pytest.approx(1.01e-18 + 1e-19)
    same, start, moved = _convolve.fold_tails(table, 0.0)
    assert same is table and start == 0 and moved == 0.0


def test_survival_function():
    table = np.array([0.1, 0.2, 0.3, 0.4])  # scores 5..8
    tail = _convolve.survival(table, 5, threshold=10, start=0, length=8)
    # Pr[block >= 10 - x] for x = 0..7
    expected = [0.0, 0.0, 0.4, 0.7, 0.9, 1.0, 1.0, 1.0]
    np.testing.assert_allclose(tail, expected)


# ------------------------------------------------------ engine, brute force


@pytest.mark.parametrize("seed", range(6))
def test_block_with_connected_part_evidence_and_kept_variables(seed):
    """run(..., block=) against enumeration: evidence, kept variables and free mass."""
    rng = np.random.default_rng(seed)
    # X0 -> X1 -> X2, X3 -> X4, and X5..X8 isolated
    parents = [(), (0,), (1,), (), (3,), (), (), (), ()]
    cards = [2, 3, 2, 3, 2, 3, 2, 4, 3]
    cpts = [rng.dirichlet(np.ones(c), size=tuple(cards[q] for q in pa)) for c, pa in
            zip(cards, parents)]
    net = BayesNet(cards, parents, cpts)
    weights = [rng.integers(-40, 41, size=c) for c in cards]
    threshold = int(rng.integers(-30, 31))
    evidence = {4: int(rng.integers(0, 2))}
    keep = [0]
    chosen = plan(weights, threshold, net, evidence, evidence_vars=keep, method="frontier")
    problem = chosen._problem
    block = problem.block()
    assert set(block) == {5, 6, 7, 8}
    order = [v for v in chosen.order if v not in block]
    pos, total = _frontier.run(problem, order, block=block)
    for a in range(2):
        expected = brute_force(weights, threshold, net, {**evidence, 0: a})
        assert pos[a] / total[a] == pytest.approx(expected, abs=1e-12)
    # positive_probability with evidence only (decided mass before the evidence: free mass)
    chosen = plan(weights, threshold, net, evidence, method="frontier")
    problem = chosen._problem
    order = [v for v in chosen.order if v not in problem.block()]
    pos, total = _frontier.run(problem, order, block=problem.block())
    assert pos / total == pytest.approx(brute_force(weights, threshold, net, evidence), abs=1e-12)


def test_block_alone_matches_brute_force_at_every_threshold():
    rng = np.random.default_rng(3)
    net = BayesNet.independent([rng.dirichlet(np.ones(3)) for _ in range(7)])
    weights = [rng.integers(-500, 501, size=3) for _ in range(7)]
    for threshold in [-4000, -700, 0, 333, 900, 4000]:
        chosen = plan(weights, threshold, net)
        problem = chosen._problem
        pos, total = _frontier.run(problem, [], block=problem.block())
        assert pos / total == pytest.approx(brute_force(weights, threshold, net), abs=1e-12)


# ------------------------------------------------- engine, previous engine


def test_many_independent_variables_use_the_block_and_agree_with_previous_engine():
    rng = np.random.default_rng(0)
    n, k = 120, 10
    weights = [rng.integers(-1000, 1001, size=k) for _ in range(n)]
    net = BayesNet.independent([rng.dirichlet(np.ones(k)) for _ in range(n)])
    mean = int(round(sum(float(w.mean()) for w in weights)))
    wide = [rng.integers(-1000, 1001, size=k) for _ in range(400)]
    wide_net = BayesNet.independent([rng.dirichlet(np.ones(k)) for _ in range(400)])
    centre = int(round(sum(float(w.mean()) for w in wide)))
    assert len(plan(wide, centre, wide_net)._block) == 400  # the planner picks the block
    for threshold in [mean - 15_000, mean, mean + 4_000]:
        chosen = plan(weights, threshold, net)
        problem = chosen._problem
        pos, total = _frontier.run(problem, [], block=problem.block())
        old_pos, old_total = chosen._execute(legacy=True)
        assert pos / total == pytest.approx(old_pos / old_total, abs=1e-9)
        assert total == pytest.approx(1.0, abs=1e-12)


def test_chain_trims_tails_and_agrees_with_previous_engine(monkeypatch):
    rng = np.random.default_rng(1)
    n, k = 120, 6
    net = chain_net(rng, n, k)
    weights = [rng.integers(-300, 301, size=k) for _ in range(n)]
    threshold = int(round(sum(float(w.mean()) for w in weights)))
    moved = []
    original = _frontier._Accumulators.trim

    def spy(self, table, *args):
        out, lo = original(self, table, *args)
        moved.append(table.shape[-1] - out.shape[-1])
        return out, lo

    monkeypatch.setattr(_frontier._Accumulators, "trim", spy)
    _, (pos, total), (old_pos, old_total) = new_and_legacy(weights, threshold, net)
    assert sum(moved) > 10_000  # the tails were trimmed, by many scores
    assert pos / total == pytest.approx(old_pos / old_total, abs=1e-9)
    assert total == pytest.approx(old_total, abs=1e-12)
    for shift in [-9000, -3000, 2500, 8000]:  # tails and decided mass pruned together
        _, (pos, total), (old_pos, old_total) = new_and_legacy(weights, threshold + shift, net)
        assert pos / total == pytest.approx(old_pos / old_total, abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_random_networks_agree_with_previous_engine(seed):
    """Trees, local DAGs, isolated variables, evidence and a group table, wide weights."""
    rng = np.random.default_rng(seed)
    n = 40
    parents = []
    for i in range(n):
        if i < 2 or rng.random() < 0.3:
            parents.append(())  # roots, some isolated
        else:
            low = max(0, i - 4)
            m = int(rng.integers(1, min(2, i - low) + 1))
            parents.append(tuple(sorted(rng.choice(np.arange(low, i), m, replace=False))))
    cards = rng.integers(2, 6, size=n).tolist()
    cpts = [rng.dirichlet(np.ones(c), size=tuple(cards[q] for q in pa)) for c, pa in
            zip(cards, parents)]
    net = BayesNet(cards, parents, cpts)
    weights = [rng.integers(-400, 401, size=c) for c in cards]
    threshold = int(round(sum(float(w.mean()) for w in weights)))
    _, (pos, total), (old_pos, old_total) = new_and_legacy(weights, threshold, net)
    assert pos / total == pytest.approx(old_pos / old_total, abs=1e-9)
    evidence = {n - 1: 0}
    _, (pos, total), (old_pos, old_total) = new_and_legacy(weights, threshold, net, evidence)
    assert pos / total == pytest.approx(old_pos / old_total, abs=1e-9)
    _, (pos, total), (old_pos, old_total) = new_and_legacy(
        weights, threshold, net, evidence_vars=[0, 1]
    )
    np.testing.assert_allclose(pos / total, old_pos / old_total, atol=1e-9)
    np.testing.assert_allclose(total, old_total, atol=1e-12)


def test_trimming_is_relative_to_each_group_even_a_rare_one():
    """A group of probability 1e-10 keeps a conditional probability exact to 1e-9."""
    rng = np.random.default_rng(4)
    n, k = 60, 5
    parents = [()] + [(0,) if i == 1 else (i - 1,) for i in range(1, n)]
    net = chain_net(rng, n, k, parents)
    cpts = list(net.cpts)
    cpts[0] = np.array([1 - 1e-10] + [1e-10 / (k - 1)] * (k - 1))
    net = BayesNet([k] * n, parents, cpts)
    weights = [rng.integers(-500, 501, size=k) for _ in range(n)]
    threshold = int(round(sum(float(w.mean()) for w in weights)))
    new = positive_probability_table(weights, threshold, net, [0])
    chosen = plan(weights, threshold, net, evidence_vars=[0])
    old_pos, old_total = chosen._execute(legacy=True)
    np.testing.assert_allclose(new, old_pos / old_total, atol=1e-9)
    rare = positive_probability(weights, threshold, net, {0: 1})
    assert rare == pytest.approx(new[1], abs=1e-12)


# ------------------------------------------------------------------ guards


def test_block_counts_in_the_plan_and_is_dropped_when_too_large():
    """The block's planned peak is its largest array; beyond max_table_size the frontier runs."""
    rng = np.random.default_rng(5)
    n, k = 400, 10
    weights = [rng.integers(-1000, 1001, size=k) for _ in range(n)]
    net = BayesNet.independent([rng.dirichlet(np.ones(k)) for _ in range(n)])
    threshold = int(round(sum(float(w.mean()) for w in weights)))
    chosen = plan(weights, threshold, net)
    assert len(chosen._block) == n
    block_peak, _ = chosen._problem.block_cost()
    assert chosen.peak_entries >= block_peak
    smaller = plan(weights, threshold, net, max_table_size=block_peak - 1)
    assert smaller._block == () and smaller.peak_entries < block_peak
    with pytest.raises(TableTooLargeError, match="max_table_size=1,000"):
        positive_probability(weights, threshold, net, max_table_size=1000)


def test_block_cost_simulates_the_tree_without_folding():
    """block_cost's peak is the largest convolution length of the unfolded tree."""
    rng = np.random.default_rng(6)
    net = BayesNet.independent([rng.dirichlet(np.ones(3)) for _ in range(5)])
    weights = [np.array([0, 7, 20]) for _ in range(5)]
    problem = plan(weights, 50, net)._problem
    peak, work = _convolve.block_cost(problem, problem.block())
    # one chunk (5 * 20 + 1 = 101 entries, shift-and-add): no convolution
    assert peak == 101
    assert work == sum(3 * (1 + 20 * j) + 20 for j in range(5))


@pytest.mark.parametrize("threshold_shift", [-10**6, 10**6])
def test_decided_thresholds(threshold_shift):
    """Thresholds beyond the reachable scores give exactly 0 or 1 through the block."""
    rng = np.random.default_rng(7)
    weights = [rng.integers(-1000, 1001, size=10) for _ in range(300)]
    net = BayesNet.independent([rng.dirichlet(np.ones(10)) for _ in range(300)])
    value = positive_probability(weights, threshold_shift, net)
    assert value == (1.0 if threshold_shift < 0 else 0.0)


def test_itertools_enumeration_of_a_tiny_block_is_exact():
    """Three Booleans with the block forced: every threshold, against itertools."""
    net = BayesNet.independent([[0.6, 0.4], [0.5, 0.5], [0.7, 0.3]])
    weights = [np.array([0, 3]), np.array([0, 5]), np.array([0, -2])]
    problem = plan(weights, 0, net)._problem
    for threshold in range(-3, 10):
        problem.threshold = threshold + 2  # normalised: the third weight shifted by 2
        pos, total = _frontier.run(problem, [], block=problem.block())
        expected = sum(
            np.prod([net.cpts[i][s] for i, s in enumerate(states)])
            for states in itertools.product(range(2), repeat=3)
            if sum(int(weights[i][s]) for i, s in enumerate(states)) >= threshold
        )
        assert pos == pytest.approx(expected, abs=1e-15) and total == pytest.approx(1.0)


def test_block_with_a_loose_error_bound_falls_back_to_the_frontier(monkeypatch):
    """Beyond MAX_BLOCK_ERROR the block's variables are added by the frontier: same result."""
    rng = np.random.default_rng(8)
    net = BayesNet.independent([rng.dirichlet(np.ones(4)) for _ in range(9)])
    weights = [rng.integers(-300, 301, size=4) for _ in range(9)]
    problem = plan(weights, 100, net)._problem
    expected = brute_force(weights, 100, net)
    calls = []
    original = _frontier._Accumulators.finish_with_block
    monkeypatch.setattr(
        _frontier._Accumulators,
        "finish_with_block",
        lambda self, *args: calls.append(1) or original(self, *args),
    )
    pos, total = _frontier.run(problem, [], block=problem.block())
    assert calls and pos / total == pytest.approx(expected, abs=1e-12)
    calls.clear()
    monkeypatch.setattr(_frontier, "MAX_BLOCK_ERROR", -1.0)  # any bound is too loose
    pos, total = _frontier.run(problem, [], block=problem.block())
    assert not calls and pos / total == pytest.approx(expected, abs=1e-12)
