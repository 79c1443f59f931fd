"""The frontier engine with a leading draws axis (``_frontier_batched``, issue 23's cost).

Every batched run is compared with the single runs of each draw's network on the same
plan (``Plan._execute``) and, on small networks, with brute-force enumeration: random
networks (several parents, zeros in the tables), kept variables (the group tables),
evidence, variables independent of the kept ones (the mass decided before them), and
the trim of long score axes, batched when every draw cuts the same columns and run draw
by draw otherwise.
"""

import numpy as np
import pytest
from test_s3p import joint_enumeration, random_network, random_weights

from skfairverify.s3p import BayesNet, _batched, _frontier, _frontier_batched, plan
from skfairverify.s3p._batched import run_batched
from skfairverify.s3p._network import with_tables


def _draws(net, n_draws, rng):
    """Tables of ``n_draws`` networks of ``net``'s structure (Dirichlet rows)."""
    stacked = []
    for cpt in net.cpts:
        rows = rng.dirichlet(np.full(cpt.shape[-1], 0.7), size=(n_draws,) + cpt.shape[:-1])
        if rng.random() < 0.3:  # exact zeros in some tables
            rows = np.where(rows < 0.1, 0.0, rows)
            rows[..., 0] += rows.sum(-1) == 0
            rows /= rows.sum(-1, keepdims=True)
        stacked.append(rows)
    return stacked


def _single(p, stacked, d):
    """The plan run on draw ``d`` alone (the engine as before the batching)."""
    return _batched._one_draw(p, [c[d] for c in stacked])._execute()


def _frontier_plan(weights, threshold, net, keep=(), evidence=None):
    p = plan(weights, threshold, net, evidence, evidence_vars=list(keep), method="frontier")
    if p.groups:
        pytest.skip("per-group plan")  # pragma: no cover - the cases below plan jointly
    return p


@pytest.mark.parametrize("seed", range(12))
def test_batched_frontier_is_each_draws_run(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, int(rng.integers(4, 8)), max_parents=2)
    weights = random_weights(rng, net)
    threshold = int(rng.integers(-3, 4))
    keep = [] if seed % 3 == 0 else sorted(rng.choice(net.n_variables, size=1 + seed % 2,
                                                     replace=False).tolist())
    evidence = None
    free = [v for v in range(net.n_variables) if v not in keep]
    if seed % 4 == 1 and free:
        evidence = {int(free[0]): 0}
    p = _frontier_plan(weights, threshold, net, keep, evidence)
    stacked = _draws(net, 7, rng)
    if p._block:  # an independent block: run_batched runs each draw alone
        pos, total = run_batched(p, stacked)
    else:
        pos, total = _frontier_batched.run_frontier_batched(p._problem, p.order, stacked)
    for d in range(7):
        want_pos, want_total = _single(p, stacked, d)
        np.testing.assert_allclose(pos[d], want_pos, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(total[d], want_total, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_batched_frontier_matches_enumeration(seed):
    """Group tables Pr[score >= t, keep = a] of every draw against the joint's sum."""
    rng = np.random.default_rng(100 + seed)
    net = random_network(rng, 5, max_card=3, max_parents=2)
    weights = random_weights(rng, net)
    keep = [int(rng.integers(0, 5))]
    p = _frontier_plan(weights, 0, net, keep)
    stacked = _draws(net, 5, rng)
    pos, total = run_batched(p, stacked)
    for d in range(5):
        drawn = with_tables(net, [c[d] for c in stacked])
        grids, prob = joint_enumeration(drawn)
        score = sum(np.asarray(weights[i])[grids[:, i]] for i in range(net.n_variables))
        for a in range(net.cardinalities[keep[0]]):
            rows = grids[:, keep[0]] == a
            assert pos[d, a] == pytest.approx(prob[rows & (score >= 0)].sum(), abs=1e-14)
            assert total[d, a] == pytest.approx(prob[rows].sum(), abs=1e-14)


def test_mass_decided_before_the_kept_variables_is_weighted_by_their_marginal():
    """Independent variables first: their decided mass (``free``) per draw, then Pr[keep]."""
    net = BayesNet([3, 2, 2], [(), (), (1,)],
                   [np.array([.2, .3, .5]), np.array([.6, .4]),
                    np.array([[.7, .3], [.1, .9]])])
    weights = [np.array([0, 10, 20]), np.array([0, 1]), np.array([0, 1])]
    p = plan(weights, 15, net, evidence_vars=[2], method="frontier", order=[0, 1, 2])
    stacked = _draws(net, 6, np.random.default_rng(3))
    pos, total = _frontier_batched.run_frontier_batched(p._problem, p.order, stacked)
    for d in range(6):
        want = _single(p, stacked, d)
        np.testing.assert_allclose(pos[d], want[0], rtol=1e-13)
        np.testing.assert_allclose(total[d], want[1], rtol=1e-13)


def _chain(tails):
    """Chains of 8 variables of 6 states; in draw ``d`` the two top states have ``tails[d]``.

    Wide weights give long score axes; tiny top states make the upper end of the axis
    negligible (trimmed), in the draws that have them only.
    """
    stacked = []
    for i in range(8):
        row = np.stack([np.array([.3, .3, .2, .2, t, t]) for t in tails])
        row /= row.sum(-1, keepdims=True)
        stacked.append(row if i == 0 else np.repeat(row[:, None], 6, axis=1))
    net = BayesNet([6] * 8, [()] + [(i,) for i in range(7)],
                   [t[0] for t in stacked])
    return net, stacked


def test_trim_is_batched_when_every_draw_cuts_alike_and_run_alone_otherwise(monkeypatch):
    weights = [np.array([0, 4, 9, 16, 25, 40]) for _ in range(8)]
    # both runs trim in _frontier._Accumulators.prune_and_trim
    monkeypatch.setattr(_frontier, "_TRIM_MIN", 64)
    cuts = []
    trim = _frontier_batched._Accumulators.trim

    def recording_trim(self, table, *args):
        out = trim(self, table, *args)
        cuts.append(table.shape[-1] - out[0].shape[-1])
        return out

    monkeypatch.setattr(_frontier_batched._Accumulators, "trim", recording_trim)
    net, same = _chain([1e-18] * 4)
    p = plan(weights, 150, net, method="frontier", order=list(range(8)))
    pos, total = _frontier_batched.run_frontier_batched(p._problem, p.order, same)
    assert max(cuts) > 0  # the batched run trimmed
    for d in range(4):
        want = _single(p, same, d)
        np.testing.assert_allclose(pos[d], want[0], rtol=1e-13, atol=1e-16)
        np.testing.assert_allclose(total[d], want[1], rtol=1e-13)
    _, differ = _chain([1e-18, 0.1, 1e-18, 0.2])
    with pytest.raises(_frontier_batched.Unbatched):
        _frontier_batched.run_frontier_batched(p._problem, p.order, differ)
    pos, total = run_batched(p, differ)  # falls back to each draw's own run
    for d in range(4):
        want = _single(p, differ, d)
        assert np.array_equal(pos[d], want[0]) and np.array_equal(total[d], want[1])


def test_draw_by_draw_switch_gives_the_same_rates(monkeypatch):
    rng = np.random.default_rng(11)
    net = random_network(rng, 7, max_parents=2)
    weights = random_weights(rng, net)
    p = _frontier_plan(weights, 1, net, [0])
    stacked = _draws(net, 9, rng)
    batched = run_batched(p, stacked)
    monkeypatch.setattr(_batched, "_FRONTIER_BATCHED", False)
    alone = run_batched(p, stacked)
    for got, want in zip(batched, alone):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_a_leaf_of_two_parents_in_either_order_matches_enumeration(monkeypatch):
    """The leaf step (``_add_leaf``: summed out at once) broadcasts its CPT's axes right.

    Variable 2 has no children and its parents stay (variable 3 is their child too).
    """
    rng = np.random.default_rng(21)
    leaves = []
    for module, name in ((_frontier, "_add_leaf"), (_frontier_batched, "add_leaf_batched")):
        real = getattr(module, name)

        def recording(*args, real=real):
            leaves.append(1)
            return real(*args)

        monkeypatch.setattr(module, name, recording)
    for parents in ((0, 1), (1, 0)):
        cards = [3, 4, 5, 2]
        shape = tuple(cards[p] for p in parents)
        net = BayesNet(cards, [(), (0,), parents, (0, 1)],
                       [rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(4), size=3),
                        rng.dirichlet(np.ones(5), size=shape),
                        rng.dirichlet(np.ones(2), size=(3, 4))])
        weights = [np.array([0, 2, 5]), np.array([0, 1, 3, 4]), np.array([0, 3, 1, 7, 2]),
                   np.array([0, 3])]
        p = plan(weights, 9, net, evidence_vars=[0], method="frontier", order=[0, 1, 2, 3])
        stacked = _draws(net, 3, rng)
        pos, total = _frontier_batched.run_frontier_batched(p._problem, p.order, stacked)
        for d in range(3):
            drawn = with_tables(net, [c[d] for c in stacked])
            grids, prob = joint_enumeration(drawn)
            score = sum(np.asarray(weights[i])[grids[:, i]] for i in range(4))
            single = _single(p, stacked, d)
            for a in range(3):
                want = prob[(grids[:, 0] == a) & (score >= 9)].sum()
                assert pos[d, a] == pytest.approx(want, abs=1e-15)
                assert single[0][a] == pytest.approx(want, abs=1e-15)
    assert len(leaves) == 2 + 2 * 3  # the batched run and every single one took the step


def test_batches_hold_at_most_batch_entries_and_do_not_change_the_rates(monkeypatch):
    """A batch holds ``BATCH_ENTRIES // peak`` draws; any split of the draws, the same rates.

    The draws are cut into batches of that size (the chunk's rates are one run per
    batch): the runs with batches of 1, 3 and all draws (``BATCH_ENTRIES`` set so) give
    the single runs' probabilities.
    """
    from skfairverify.verification import _posterior

    rng = np.random.default_rng(5)
    net = random_network(rng, 6, max_parents=2)
    weights = random_weights(rng, net)
    p = _frontier_plan(weights, 1, net)
    stacked = _draws(net, 8, rng)
    peak = max(int(p.peak_entries), 1)
    single = np.stack([_single(p, stacked, d)[0] for d in range(8)])
    sizes = []
    original = _posterior.run_batched
    monkeypatch.setattr(_posterior, "run_batched",
                        lambda q, cpts: sizes.append(len(cpts[0])) or original(q, cpts))
    for per_batch in (1, 3, 8):
        monkeypatch.setattr(_batched, "BATCH_ENTRIES", per_batch * peak)
        assert _batched.batch_size(p, 8, 10**9) == per_batch
        sizes.clear()
        rates = _posterior._chunk_rates(p, stacked, (), 10**9)
        assert sizes == [per_batch] * (8 // per_batch) + [8 % per_batch] * (8 % per_batch > 0)
        totals = np.stack([_single(p, stacked, d)[1] for d in range(8)])
        np.testing.assert_allclose(rates, single / totals, rtol=0, atol=1e-12)
