"""Structure search of the verifier's network: exact branching, hill climbing, counts."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from skfairverify.s3p import TableTooLargeError
from skfairverify.verification import _structure
from skfairverify.verification._network import learn_network, resolve_structure_search
from skfairverify.verification._structure import (
    StructureData,
    check_structure_size,
    hill_climb,
    k2_local_score,
    maximum_branching,
    network_score,
    pairwise_gains,
)


# ----------------------------------------------------------------------------- helpers
def _acyclic(parent) -> bool:
    for v in range(len(parent)):
        seen, u = set(), v
        while u >= 0:
            if u in seen:
                return False
            seen.add(u)
            u = parent[u]
    return True


def _brute_branching(gain):
    """Best weight over every parent function without cycles (enumeration)."""
    n = len(gain)
    best = 0.0
    for parent in itertools.product(range(-1, n), repeat=n):
        if any(p == v for v, p in enumerate(parent)) or not _acyclic(parent):
            continue
        best = max(best, sum(gain[p, v] for v, p in enumerate(parent) if p >= 0))
    return best


def _weight(gain, parent):
    return sum(gain[p, v] for v, p in enumerate(parent) if p >= 0)


def _sample_tan(n_rows, n_features, rng, states=3, strength=0.85):
    """A -> every feature; a random tree among the features; strong dependencies.

    Returns the codes (column 0 is A) and the true feature parent of every feature.
    """
    tree = [-1] + [int(rng.integers(0, k)) for k in range(1, n_features)]
    perm = rng.permutation(n_features)  # hide the order of the tree in the columns
    a = rng.integers(0, 2, n_rows)
    x = np.zeros((n_rows, n_features), dtype=int)
    for k in range(n_features):
        if tree[k] < 0:
            x[:, k] = (a + rng.integers(0, states, n_rows)) % states
        else:
            copy = rng.random(n_rows) < strength
            shift = (x[:, tree[k]] + a) % states
            x[:, k] = np.where(copy, shift, rng.integers(0, states, n_rows))
    codes = np.column_stack([a, x[:, perm]])
    where = np.argsort(perm)  # column of tree node k is where[k]
    true = {frozenset((int(where[p]), int(where[k]))) for k, p in enumerate(tree) if p >= 0}
    return codes, true


def _skeleton(feature_parents):
    return {frozenset((p, c)) for c, ps in enumerate(feature_parents) for p in ps}


def _pgmpy_k2(frame, variable, parents):
    from pgmpy.structure_score import K2

    return K2(frame).local_score(variable, tuple(parents))


def _frame(codes):
    return pd.DataFrame({f"v{j}": pd.Categorical(codes[:, j]) for j in range(codes.shape[1])})


# ----------------------------------------------------------------------------- scores
def test_k2_local_score_equals_pgmpy():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, (3000, 4))  # every parent configuration occurs
    data = StructureData(codes, [0])
    frame = _frame(codes)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*is deprecated", category=FutureWarning)
        for child, parents in [(1, ()), (2, (0,)), (3, (0, 1)), (3, (0, 1, 2))]:
            ours = k2_local_score(data.counts(child - 1, tuple(p - 1 for p in parents[1:]))) \
                if parents else k2_local_score(np.bincount(codes[:, child], minlength=3))
            assert ours == pytest.approx(_pgmpy_k2(frame, f"v{child}",
                                                   [f"v{p}" for p in parents]), rel=1e-12)


@pytest.mark.parametrize("block_bytes", [1, 16_800, 10**9])  # 1, 3, all columns
def test_pairwise_gains_equal_family_scores(monkeypatch, block_bytes):
    """Blocked matrix-product counts give the gains of the per-family bincount counts."""
    monkeypatch.setattr(_structure, "STRUCTURE_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(2)
    codes = np.column_stack([rng.integers(0, 2, 700), rng.integers(0, 3, 700),
                             rng.integers(0, 2, (700, 3)), rng.integers(0, 6, (700, 2))])
    codes[:, 3] = (codes[:, 2] + codes[:, 0]) % 2
    data = StructureData(codes, [0, 1])
    gain = pairwise_gains(data)
    n = len(data.features)
    for p, c in itertools.permutations(range(n), 2):
        expect = k2_local_score(data.counts(c, (p,))) - k2_local_score(data.counts(c))
        assert gain[p, c] == pytest.approx(expect, rel=1e-10, abs=1e-8)
    assert np.all(np.isneginf(np.diag(gain)))


# ----------------------------------------------------------------------------- branching
@pytest.mark.parametrize("seed", range(30))
def test_maximum_branching_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = 5
    gain = rng.normal(size=(n, n))
    if seed % 3 == 0:  # nearly symmetric: many 2-cycles of best parents
        gain = gain + gain.T + 0.01 * rng.normal(size=(n, n))
    if seed % 3 == 1:  # all positive: a spanning arborescence
        gain = np.abs(gain)
    parent = maximum_branching(gain)
    assert _acyclic(list(parent))
    assert all(p < 0 or gain[p, v] > 0 for v, p in enumerate(parent))
    assert _weight(gain, parent) == pytest.approx(_brute_branching(gain), abs=1e-9)


def test_maximum_branching_large_is_a_branching_no_worse_than_greedy():
    rng = np.random.default_rng(0)
    gain = rng.normal(size=(300, 300))
    gain = gain + gain.T
    parent = maximum_branching(gain)
    assert _acyclic(list(parent))
    # Kruskal on the symmetric weights (an optimum of the undirected problem, which
    # equals the directed one when the weights are symmetric).
    from scipy.sparse.csgraph import minimum_spanning_tree

    positive = np.where(np.triu(gain, 1) > 0, np.triu(gain, 1), 0)
    tree = minimum_spanning_tree(-positive)
    assert _weight(gain, parent) == pytest.approx(-tree.sum(), rel=1e-12)


# ----------------------------------------------------------------------------- the search
def test_tan_is_the_k2_optimum_with_one_parent_by_enumeration():
    rng = np.random.default_rng(3)
    codes, _ = _sample_tan(1500, 4, rng, strength=0.3)
    data = StructureData(codes, [0])
    parent = maximum_branching(pairwise_gains(data))
    tan = network_score(data, [set() if p < 0 else {p} for p in parent])
    best = -np.inf
    for cand in itertools.product(range(-1, 4), repeat=4):
        if any(p == v for v, p in enumerate(cand)) or not _acyclic(cand):
            continue
        best = max(best, network_score(data, [set() if p < 0 else {p} for p in cand]))
    assert tan == pytest.approx(best, rel=1e-12)


def test_tan_recovers_the_true_tree():
    rng = np.random.default_rng(4)
    codes, true = _sample_tan(20_000, 12, rng)
    names = ["a"] + [f"x{j}" for j in range(12)]
    net = learn_network(codes, names, [2] + [3] * 12, ["a"])
    parents = [set(pa) for pa in net.parents]
    assert parents[0] == set()
    assert all(0 in pa and len(pa) <= 2 for pa in parents[1:])
    skeleton = {frozenset((p - 1, c - 1)) for c, pa in enumerate(parents) for p in pa if p}
    assert skeleton == true


def _pgmpy_feature_parents(codes, max_indegree):
    names = ["a"] + [f"x{j}" for j in range(codes.shape[1] - 1)]
    cards = [int(codes[:, j].max()) + 1 for j in range(codes.shape[1])]
    net = learn_network(codes, names, cards, ["a"], max_indegree=max_indegree,
                        structure_search="pgmpy")
    return [{p - 1 for p in net.parents[c] if p} for c in range(1, len(names))]


@pytest.mark.parametrize("seed", [0, 1])
def test_tan_score_at_least_pgmpy_hill_climbing(seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, (2000, 7))
    codes[:, 2] = (codes[:, 1] + (rng.random(2000) < 0.3)) % 3
    codes[:, 4] = (codes[:, 3] + codes[:, 0] * (rng.random(2000) < 0.5)) % 3
    data = StructureData(codes, [0])
    parent = maximum_branching(pairwise_gains(data))
    ours = network_score(data, [set() if p < 0 else {p} for p in parent])
    theirs = network_score(data, _pgmpy_feature_parents(codes, 1))
    assert ours >= theirs - 1e-9


def test_hill_climb_improves_on_the_tree_and_respects_the_bounds():
    rng = np.random.default_rng(5)
    n = 2000
    a = rng.integers(0, 2, n)
    x0, x1 = rng.integers(0, 3, n), rng.integers(0, 3, n)
    noise = rng.random(n) < 0.1
    x2 = np.where(noise, rng.integers(0, 3, n), (x0 + x1) // 2)  # two parents
    x3 = (x2 + a) % 3
    codes = np.column_stack([a, x0, x1, x2, x3, rng.integers(0, 3, n)])
    data = StructureData(codes, [0])
    start = [set() if p < 0 else {p} for p in maximum_branching(pairwise_gains(data))]
    climbed = hill_climb(data, start, 2)
    assert all(len(ps) <= 2 for ps in climbed)
    order = _structure._topological(climbed)
    assert len(order) == len(climbed)  # acyclic
    assert network_score(data, climbed) > network_score(data, start) + 10
    assert _skeleton(climbed) >= {frozenset((0, 2)), frozenset((1, 2))}
    # no single move improves the result (a local optimum of the same score)
    add_gain = np.array([[network_score(data, [ps | {p} if k == c else ps
                                               for k, ps in enumerate(climbed)])
                          - network_score(data, climbed) if p != c and p not in climbed[c]
                          else -np.inf for c in range(len(climbed))]
                         for p in range(len(climbed))])
    delta = _structure._best_move(climbed, _structure._FamilyScores(data), add_gain, 2)[0]
    assert delta <= 1e-8
    assert network_score(data, climbed) >= network_score(
        data, _pgmpy_feature_parents(codes, 2)) - 1e-9


# ----------------------------------------------------------------------------- weights
def test_weighted_counts_equal_repeated_rows():
    rng = np.random.default_rng(6)
    codes, _ = _sample_tan(600, 6, rng, strength=0.6)
    w = rng.integers(0, 4, len(codes))  # 0 drops a row
    repeated = np.repeat(codes, w, axis=0)
    weighted = StructureData(codes, [0], w.astype(float))
    plain = StructureData(repeated, [0])
    np.testing.assert_allclose(pairwise_gains(weighted), pairwise_gains(plain), rtol=1e-10)
    names = ["a"] + [f"x{j}" for j in range(6)]
    cards = [2] + [3] * 6
    for search, k in [("tan", 1), ("hill_climb", 2)]:
        net_w = learn_network(codes, names, cards, ["a"], sample_weight=w.astype(float),
                              structure_search=search, max_indegree=k)
        net_r = learn_network(repeated, names, cards, ["a"], structure_search=search,
                              max_indegree=k)
        assert net_w.parents == net_r.parents
        for t_w, t_r in zip(net_w.cpts, net_r.cpts):
            np.testing.assert_allclose(t_w, t_r, rtol=1e-9)


# ----------------------------------------------------------------------------- guards
def test_structure_size_guard_names_size_cause_and_fix():
    codes = np.random.default_rng(0).integers(0, 5, (5000, 300))
    data = StructureData(codes, [0])
    with pytest.raises(TableTooLargeError) as info:
        pairwise_gains(data, max_table_size=100_000)
    msg = str(info.value)
    assert "299 features" in msg and "5,000 rows" in msg and "max_table_size=100,000" in msg
    assert "network='independent'" in msg
    assert check_structure_size(data, 50_000_000) > 0
    with pytest.raises(TableTooLargeError):
        learn_network(codes, [f"v{j}" for j in range(300)], [5] * 300, ["v0"],
                      max_table_size=100_000)


def test_structure_search_names():
    assert resolve_structure_search("auto", 1) == "tan"
    assert resolve_structure_search("auto", None) == "hill_climb"
    assert resolve_structure_search("pgmpy", 2) == "pgmpy"
    with pytest.raises(ValueError, match="needs max_indegree=1"):
        resolve_structure_search("tan", 2)
    with pytest.raises(ValueError, match="structure_search must be one of"):
        resolve_structure_search("chow_liu", 1)


def test_constant_and_single_features():
    rng = np.random.default_rng(7)
    codes = np.column_stack([rng.integers(0, 2, 300), np.zeros(300, int),
                             rng.integers(0, 3, 300)])
    net = learn_network(codes, ["a", "c", "x"], [2, 1, 3], ["a"])
    assert net.parents == [(), (), (0,)]
    net = learn_network(codes[:, [0, 2]], ["a", "x"], [2, 3], ["a"], max_indegree=None)
    assert net.parents == [(), (0,)]


def test_pgmpy_path_still_lets_unrelated_warnings_through(monkeypatch):
    """structure_search='pgmpy' keeps pgmpy's search, and its specific warning filter."""
    from pgmpy.causal_discovery import HillClimbSearch

    original = HillClimbSearch.fit
    calls = []

    def noisy_fit(self, *args, **kwargs):
        calls.append(1)
        warnings.warn("a real problem in the search", UserWarning, stacklevel=2)
        warnings.warn("old_api is deprecated", FutureWarning, stacklevel=2)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HillClimbSearch, "fit", noisy_fit)
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(0, c, 300) for c in (2, 4, 3)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        learn_network(codes, list("axz"), [2, 4, 3], ["a"], structure_search="pgmpy")
        assert calls == [1]
        learn_network(codes, list("axz"), [2, 4, 3], ["a"])  # numpy search: no pgmpy
        assert calls == [1]
    assert [str(w.message) for w in caught] == ["a real problem in the search"]


@pytest.mark.parametrize("weighted", [False, True])
def test_chunked_counting_equals_one_pass(monkeypatch, weighted):
    """Counts accumulated over chunks of rows give the gains of one pass over all rows."""
    rng = np.random.default_rng(8)
    codes, _ = _sample_tan(1000, 5, rng, strength=0.6)
    w = rng.integers(0, 3, len(codes)).astype(float) if weighted else None
    one_pass = pairwise_gains(StructureData(codes, [0], w))
    family = StructureData(codes, [0], w).counts(2, (0, 1))
    monkeypatch.setattr(_structure, "CHUNK_ROWS", 97)
    data = StructureData(codes, [0], w)
    assert _structure._chunk_rows(data) == 97
    np.testing.assert_allclose(pairwise_gains(data), one_pass, rtol=1e-12)
    np.testing.assert_array_equal(data.counts(2, (0, 1)), family)
