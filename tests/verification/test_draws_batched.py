"""Posterior draws solved in batched engine runs (s3p/_batched.py, _posterior.py).

Every draw's rates must be those of the single-network engine on that draw's network
(to 1e-9), on chains, trees with sensitive parents, random DAGs with isolated variables
(the frontier's FFT block), long score axes (FFT convolutions, folded tails), joint and
per-group plans; small networks against enumeration of every assignment.
"""

import itertools

import numpy as np
import pytest

import skfairverify.s3p._batched as batched
from skfairverify.s3p import BayesNet, plan, positive_probability_table
from skfairverify.verification import _posterior
from skfairverify.verification._posterior import posterior_networks, shared_plan_rates


def enumerate_table(weights, threshold, net, keep):
    """Pr[score >= t | keep = a] for every a, by enumerating every assignment."""
    grid = np.indices(net.cardinalities).reshape(net.n_variables, -1).T
    prob = np.ones(len(grid))
    for i in range(net.n_variables):
        prob *= net.cpts[i][tuple(grid[:, p] for p in net.parents[i]) + (grid[:, i],)]
    score = sum(np.asarray(weights[i])[grid[:, i]] for i in range(net.n_variables))
    out = np.zeros(tuple(net.cardinalities[k] for k in keep))
    for a in itertools.product(*(range(s) for s in out.shape)):
        mask = np.all(grid[:, keep] == a, axis=1)
        out[a] = prob[mask & (score >= threshold)].sum() / prob[mask].sum()
    return out


def structure(kind, rng, n, k):
    """Cardinalities and parents: "chain", "tree" (two sensitive parents of every
    feature, at most one more parent), "dag" (random, some isolated variables)."""
    if kind == "chain":
        return [k] * n, [()] + [(i - 1,) for i in range(1, n)], []
    if kind == "tree":
        cards, parents = [2, 3] + [k] * n, [(), (0,)]
        for i in range(2, n + 2):
            extra = () if i == 2 else (int(rng.integers(2, i)),)
            parents.append((0, 1) + extra)
        return cards, parents, [0, 1]
    parents = []
    for i in range(n):
        if i < 2 or rng.random() < 0.35:
            parents.append(())
        else:
            low = max(0, i - 4)
            m = int(rng.integers(1, min(2, i - low) + 1))
            parents.append(tuple(sorted(int(p) for p in rng.choice(np.arange(low, i), m,
                                                                 replace=False))))
    return [k] * n, parents, [0]


def draws_of(rng, cards, parents, n_draws, concentration=0.7):
    return [rng.dirichlet(np.full(c, concentration),
                          size=(n_draws,) + tuple(cards[q] for q in pa))
            for c, pa in zip(cards, parents)]


def check_against_single(weights, threshold, cards, parents, cpts, keep, **kwargs):
    """run_batched of the point network's plan equals the engine on every draw."""
    point = BayesNet(cards, parents, [c[0] for c in cpts])
    chosen = plan(weights, threshold, point, evidence_vars=keep, **kwargs)
    pos, total = batched.run_batched(chosen, cpts)
    for d in range(len(cpts[0])):
        net = BayesNet(cards, parents, [c[d] for c in cpts])
        probs, support = positive_probability_table(weights, threshold, net, keep,
                                                    return_marginal=True, **kwargs)
        np.testing.assert_allclose(pos[d] / total[d], probs, atol=1e-9, rtol=0)
        np.testing.assert_allclose(total[d] / total[d].sum(), support, atol=1e-12, rtol=0)
    return chosen


@pytest.mark.parametrize("method", ["elimination", "frontier", "auto"])
@pytest.mark.parametrize("kind", ["chain", "tree", "dag"])
def test_batched_draws_equal_the_engine_on_every_draw(kind, method):
    rng = np.random.default_rng(["chain", "tree", "dag"].index(kind))
    cards, parents, keep = structure(kind, rng, 14, 5)
    cpts = draws_of(rng, cards, parents, 6)
    weights = [rng.integers(-120, 121, size=c) for c in cards]
    threshold = int(round(sum(float(w.mean()) for w in weights)))
    check_against_single(weights, threshold, cards, parents, cpts, keep, method=method)


def test_long_axes_fold_their_tails_and_stay_exact():
    """Score axes of thousands of entries (FFT products, folded tails) in a tree of 80
    features: the folds happen and every draw still equals the single engine."""
    rng = np.random.default_rng(7)
    cards, parents, keep = structure("tree", rng, 80, 6)
    cpts = draws_of(rng, cards, parents, 2, concentration=2.0)
    weights = [np.sort(rng.integers(0, 400, size=c)) for c in cards]
    threshold = int(sum(float(w.mean()) for w in weights))
    shrunk = []
    fold = batched._fold

    def spy(factor, tol):
        out = fold(factor, tol)
        shrunk.append(factor.table.shape[-1] - out.table.shape[-1])
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(batched, "_fold", spy)
        chosen = check_against_single(weights, threshold, cards, parents, cpts, keep,
                                      method="elimination")
    assert chosen.engine == "elimination"
    assert max(shrunk) > 100  # tails were folded


def test_per_group_plan_is_batched_per_group():
    """One binary sensitive parent of every feature of many states: the plan runs one
    elimination per group; every group of every draw equals the engine."""
    rng = np.random.default_rng(3)
    n, k = 25, 12
    cards = [2] + [k] * n
    parents = [()] + [(0,) + (() if i == 1 else (int(rng.integers(1, i)),))
                      for i in range(1, n + 1)]
    cpts = draws_of(rng, cards, parents, 3, concentration=1.5)
    weights = [np.zeros(2, int)] + [np.sort(rng.integers(0, 300, size=k)) for _ in range(n)]
    threshold = int(sum(float(w.mean()) for w in weights))
    chosen = check_against_single(weights, threshold, cards, parents, cpts, [0])
    assert chosen.engine in ("per-group", "elimination")


@pytest.mark.parametrize("kind", ["chain", "tree", "dag"])
def test_small_networks_match_enumeration(kind):
    rng = np.random.default_rng(11)
    cards, parents, keep = structure(kind, rng, 5, 3)
    keep = keep or [0]
    cpts = draws_of(rng, cards, parents, 5)
    weights = [rng.integers(-60, 61, size=c) for c in cards]
    threshold = int(round(sum(float(w.mean()) for w in weights)))
    for method in ("elimination", "frontier"):
        point = BayesNet(cards, parents, [c[0] for c in cpts])
        pos, total = batched.run_batched(
            plan(weights, threshold, point, evidence_vars=keep, method=method), cpts)
        for d in range(5):
            net = BayesNet(cards, parents, [c[d] for c in cpts])
            np.testing.assert_allclose(pos[d] / total[d],
                                       enumerate_table(weights, threshold, net, keep),
                                       atol=1e-12)


def test_shared_plan_rates_solve_a_chunk_once_and_equal_the_unbatched_path(monkeypatch):
    rng = np.random.default_rng(5)
    cards, parents, keep = structure("tree", rng, 8, 4)
    point = BayesNet(cards, parents, [c[0] for c in draws_of(rng, cards, parents, 1)])
    codes = np.column_stack([rng.integers(0, c, size=300) for c in cards])
    weights = [rng.integers(-50, 51, size=c) for c in cards]
    group_codes = np.array(list(itertools.product(range(2), range(3))))
    nets = posterior_networks(point, codes, equivalent_sample_size=5.0, n_draws=40,
                              random_state=0)
    runs = []
    original = batched.run_batched

    def counting(p, cpts):
        runs.append(len(cpts[0]))
        return original(p, cpts)

    monkeypatch.setattr(_posterior, "run_batched", counting)
    rates_of = shared_plan_rates(point, weights, 10, keep, group_codes)
    fast = np.array([rates_of(d) for d in nets])
    assert runs == [40]  # one batched run for the whole chunk, then looked up
    monkeypatch.setattr(_posterior, "_BATCHED", False)
    slow = np.array([rates_of(d) for d in nets])
    np.testing.assert_allclose(fast, slow, atol=1e-9, rtol=0)
    for d in (0, 17, 39):  # the drawn networks are valid networks of the point's structure
        again = BayesNet(cards, parents, nets[d].cpts)
        probs = positive_probability_table(weights, 10, again, keep)
        np.testing.assert_allclose(fast[d], probs[tuple(group_codes.T)], atol=1e-9)


def test_batch_size_follows_the_memory_estimate():
    net = BayesNet.independent([[0.5, 0.5]] * 3)
    p = plan([np.array([0, 1])] * 3, 2, net)
    per_draw = batched.ARRAYS_PER_PEAK * p.peak_entries
    assert batched.batch_size(p, 100, 10 * per_draw) == 10
    assert batched.batch_size(p, 100, per_draw - 1) == 1  # the plan itself fits
    assert batched.batch_size(p, 7, 10**9) == 7


def test_threshold_dots_equal_the_sums_they_stand_for():
    """Every row's ``sum_x short[x] Pr[y >= start - x]``, starts beyond both ends."""
    rng = np.random.default_rng(0)
    start = np.array([-15, -1, 5, 30])
    short = rng.random((3, 4, 6))
    for table in (rng.random((3, 4, 7)), rng.random((3, 1, 7))):  # one row for all starts
        got = batched._threshold_dots(short, table, start)
        want = np.array([[sum(short[a, b, x] * table[a, min(b, table.shape[1] - 1),
                                                      max(start[b] - x, 0):].sum()
                              for x in range(6)) for b in range(4)] for a in range(3)])
        np.testing.assert_allclose(got, want, atol=1e-12)
