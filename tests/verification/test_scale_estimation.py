"""Scale (issue 13): the numpy estimation of the CPTs equals pgmpy's, without copying codes."""

from __future__ import annotations

import numpy as np
import pytest

from skfairverify.verification import _network
from skfairverify.verification._network import coarsen_codes, learn_network


def _data(rng, n_rows=3000):
    a = rng.integers(0, 2, n_rows)
    b = rng.integers(0, 3, n_rows)
    x = (a + rng.integers(0, 4, n_rows)) % 7            # 7 states, depends on a
    z = (x // 2 + b + (rng.random(n_rows) < 0.3)) % 5   # depends on x and b
    u = rng.integers(0, 4, n_rows)
    u[u == 3] = 2                                        # a state never seen
    return np.column_stack([a, b, x, z, u]), ["a", "b", "x", "z", "u"], [2, 3, 7, 5, 4]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ess", [1.0, 7.5])
def test_numpy_estimate_equals_pgmpy(weighted, ess):
    rng = np.random.default_rng(1)
    codes, names, cards = _data(rng)
    weight = rng.uniform(0.1, 3.0, len(codes)) if weighted else None
    edges = [("a", "x"), ("b", "x"), ("a", "z"), ("x", "z"), ("b", "z"), ("a", "u")]
    ours = _network._estimate(codes.astype(np.int8), names, cards, edges, ess, weight)
    ref = _network._estimate_pgmpy(codes, names, cards, edges, ess, weight)
    for v in range(len(names)):
        order = [ref.parents[v].index(p) for p in ours.parents[v]]
        assert sorted(ours.parents[v]) == sorted(ref.parents[v])
        expected = np.transpose(ref.cpts[v], order + [len(order)])
        np.testing.assert_allclose(ours.cpts[v], expected, rtol=0, atol=1e-12)


def test_bdeu_by_hand_on_a_small_table():
    # x | a with counts [[3, 1], [0, 2]], ess 1: pseudo-count 1/4 per cell.
    codes = np.array([[0, 0]] * 3 + [[0, 1]] + [[1, 1]] * 2)
    net = _network._estimate(codes, ["a", "x"], [2, 2], [("a", "x")], 1.0)
    np.testing.assert_allclose(net.cpts[1], [[3.25 / 4.5, 1.25 / 4.5], [0.25 / 2.5, 2.25 / 2.5]],
                               atol=1e-15)
    np.testing.assert_allclose(net.cpts[0], [4.5 / 7, 2.5 / 7], atol=1e-15)


@pytest.mark.parametrize("search", ["tan", "pgmpy"])
def test_learn_network_same_network_for_any_integer_dtype(search):
    rng = np.random.default_rng(2)
    codes, names, cards = _data(rng, 2000)
    kwargs = dict(coarsenable=[False, False, True, True, False], structure_bins=3,
                  max_indegree=1, structure_search=search)
    ref = learn_network(codes.astype(np.int64), names, cards, ["a"], **kwargs)
    small = learn_network(codes.astype(np.int8), names, cards, ["a"], **kwargs)
    floats = learn_network(codes.astype(float), names, cards, ["a"], **kwargs)
    for net in (small, floats):
        assert net.parents == ref.parents
        for got, want in zip(net.cpts, ref.cpts):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_learn_network_refuses_fractional_codes():
    with pytest.raises(ValueError, match="integer state indices"):
        learn_network(np.array([[0, 0.5], [1, 1.0]]), ["a", "x"], [2, 2], ["a"])


def test_coarsen_codes_small_dtype_no_overflow():
    codes = np.column_stack([np.arange(200) % 2, np.arange(200)]).astype(np.int16)
    out = coarsen_codes(codes, [2, 200], [False, True], 5)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out[:, 1], (np.arange(200) * 5) // 200)  # int64 reference
    np.testing.assert_array_equal(out[:, 0], codes[:, 0])
    assert coarsen_codes(codes, [2, 200], [False, False], 5) is codes  # nothing merged


@pytest.mark.parametrize("weighted", [False, True])
def test_chunked_estimate_equals_one_pass(monkeypatch, weighted):
    rng = np.random.default_rng(3)
    codes, names, cards = _data(rng, 1000)
    weight = rng.uniform(0.1, 3.0, len(codes)) if weighted else None
    edges = [("a", "x"), ("a", "z"), ("x", "z"), ("b", "u")]
    whole = _network._estimate(codes, names, cards, edges, 1.0, weight)
    monkeypatch.setattr(_network, "CHUNK_ROWS", 97)  # 11 chunks, the last one short
    chunked = _network._estimate(codes, names, cards, edges, 1.0, weight)
    for got, want in zip(chunked.cpts, whole.cpts):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
