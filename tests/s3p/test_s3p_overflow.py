"""Issue 10, section 5: S3P weights whose partial sums overflow int64 never give a silent 0.0.

Expected values come from brute-force enumeration in exact Python integers.
"""

import itertools

import numpy as np
import pytest

from skfairverify.s3p import (
    BayesNet,
    TableTooLargeError,
    best_assignment,
    positive_probability,
    positive_probability_table,
)

METHODS = ["frontier", "elimination"]


def _exact_brute_force(weights, threshold, net, evidence=None):
    """Pr[score >= t | evidence], enumerating assignments with Python integers."""
    hit = den = 0.0
    for states in itertools.product(*(range(c) for c in net.cardinalities)):
        if any(states[v] != s for v, s in (evidence or {}).items()):
            continue
        p = 1.0
        for i, s in enumerate(states):
            p *= net.cpts[i][tuple(states[q] for q in net.parents[i]) + (s,)]
        den += p
        if sum(int(weights[i][s]) for i, s in enumerate(states)) >= threshold:
            hit += p
    return hit / den


def _chain(rng, cards):
    """Draw a random chain network X0 -> X1 -> ... with Dirichlet CPTs."""
    cpts = [rng.dirichlet(np.ones(cards[0]))]
    for i in range(1, len(cards)):
        cpts.append(rng.dirichlet(np.ones(cards[i]), size=cards[i - 1]))
    parents = [()] + [(i - 1,) for i in range(1, len(cards))]
    return BayesNet(cards, parents, cpts)


@pytest.mark.parametrize("method", METHODS)
def test_weights_spanning_beyond_int64_raise_instead_of_zero(method):
    # Before the fix: 0.0 (the shift by the smallest weight wrapped around int64);
    # the answer is 0.5 (X0 = 1 reaches the threshold whatever the others).
    net = BayesNet.independent([[0.5, 0.5]] * 3)
    w = [np.array([-(2**62), 2**62]), np.array([0, 1]), np.array([0, 1])]
    assert _exact_brute_force(w, 1, net) == 0.5
    with pytest.raises(OverflowError, match=r"'X0' span 9,223,372,036,854,775,808.*multiplier"):
        positive_probability(w, 1, net, method=method)
    with pytest.raises(OverflowError, match="int64"):
        positive_probability_table(w, 1, net, [1], method=method)
    with pytest.raises(OverflowError, match="int64"):
        best_assignment(w, 1, net, [1], method=method)


def test_unsigned_weights_beyond_int64_raise():
    # Before the fix: 0.0 instead of 0.875 (2**63 wrapped to -2**63).
    net = BayesNet.independent([[0.5, 0.5]] * 3)
    w = [np.array([0, 2**63], dtype=np.uint64), np.array([0, 1]), np.array([0, 1])]
    assert _exact_brute_force(w, 1, net) == 0.875
    with pytest.raises(OverflowError, match="'X0' reach 9,223,372,036,854,775,808"):
        positive_probability(w, 1, net)
    with pytest.raises(OverflowError, match="magnitude"):
        positive_probability([[0, -(2**70)], [0, 1], [0, 1]], 1, net)


def test_total_score_range_beyond_limit_raises_naming_it():
    net = BayesNet.independent([[0.5, 0.5]] * 3)
    w = [np.array([0, 2**62 - 1]), np.array([0, 2**62 - 1]), np.array([0, 1])]
    with pytest.raises(OverflowError, match=r"partial scores span 9,223,372,036,854,775,807"):
        positive_probability(w, 2**62, net)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(8))
def test_weights_near_the_int64_limit_match_exact_brute_force(method, seed):
    # Raw weights close to +-2**63 whose shifted range (after the common divisor
    # 2**58) is short: computed exactly, shift, divisor and threshold included.
    rng = np.random.default_rng(seed)
    cards = [int(c) for c in rng.integers(2, 4, size=4)]
    net = _chain(rng, cards)
    G = 2**58
    offsets = [int(o) for o in rng.choice([2**62, -(2**63) + 2**60, 0, -(2**61)], size=4)]
    weights = [np.array([o + G * int(k) for k in rng.integers(0, 4, size=c)], dtype=np.int64)
               for o, c in zip(offsets, cards)]
    base = sum(offsets)
    for t in [base + G * int(rng.integers(0, 13)) + r for r in (0, 1, G - 1)] + [
        base - 2**70, base + 2**70
    ]:
        expected = _exact_brute_force(weights, t, net)
        assert positive_probability(weights, t, net, method=method) == pytest.approx(
            expected, abs=1e-12
        )
    evidence = {1: 0}
    t = base + 5 * G + 1
    assert positive_probability(weights, t, net, evidence, method=method) == pytest.approx(
        _exact_brute_force(weights, t, net, evidence), abs=1e-12
    )


@pytest.mark.parametrize("threshold, expected", [(2**100, 0.0), (-(2**100), 1.0)])
def test_huge_thresholds_are_decided_exactly(threshold, expected):
    net = BayesNet.independent([[0.3, 0.7], [0.5, 0.5]])
    w = [np.array([0, 3]), np.array([-2, 5])]
    for method in METHODS:
        assert positive_probability(w, threshold, net, method=method) == expected
        table = positive_probability_table(w, threshold, net, [0], method=method)
        np.testing.assert_array_equal(table, [expected, expected])


def test_score_range_limit_is_2_to_the_62():
    net = BayesNet.independent([[0.5, 0.5]] * 2)
    at_limit = [np.array([0, 2**62 - 1]), np.array([0, 1])]  # range exactly 2**62
    with pytest.raises(TableTooLargeError):  # planned on sizes, refused as too large
        positive_probability(at_limit, 2**61, net)
    # Thresholds outside the range are decided without a table.
    assert positive_probability(at_limit, 2**62 + 1, net) == 0.0
    assert positive_probability(at_limit, 0, net) == 1.0
    beyond = [np.array([0, 2**62]), np.array([0, 1])]
    with pytest.raises(OverflowError, match=r"span 4,611,686,018,427,387,905"):
        positive_probability(beyond, 2**61, net)
