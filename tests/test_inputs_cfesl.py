"""Issue 28 (counterfactual, ESL, discretizer, BayesNet): every input a result or a named error."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skfairverify import CounterfactualFairness, esl_value, make_cflips_scorer
from skfairverify.counterfactual import KDTreeCounterfactuals


@pytest.mark.parametrize("make", [
    lambda: CounterfactualFairness(LogisticRegression(), "s", k=True)._validate_params(),
    lambda: CounterfactualFairness(LogisticRegression(), "s", cv=np.True_)._validate_params(),
    lambda: CounterfactualFairness(LogisticRegression(), "s", n_jobs=True)._validate_params(),
    lambda: KDTreeCounterfactuals(batch_size=True)._validate_params(),
    lambda: make_cflips_scorer(k=True),
    lambda: esl_value({}, True),
])
def test_a_bool_is_not_a_count(make):
    with pytest.raises(ValueError, match=r"not a bool\)( or None)?\. Got (True|np\.True_) instead"):
        make()


def test_bayesnet_sample_refuses_a_huge_draw_by_name():
    from skfairverify.s3p import BayesNet, TableTooLargeError

    net = BayesNet.independent([[0.5, 0.5], [0.2, 0.3, 0.5]])
    with pytest.raises(TableTooLargeError, match=r"n_samples=10,000,000,000.*"
                       r"30,000,000,000 entries.*max_table_size=50,000,000.*batches"):
        net.sample(10**10)
    # at the limit it draws, and the limit is a parameter
    assert net.sample(10, random_state=0, max_table_size=30).shape == (10, 2)
    with pytest.raises(TableTooLargeError, match="max_table_size=29"):
        net.sample(10, random_state=0, max_table_size=29)
    # the draw itself is unchanged: the same generator gives the same states
    rng = np.random.default_rng(0)
    expected = np.column_stack([
        np.minimum((rng.random(1000)[:, None] >= np.cumsum(p)).sum(axis=1), len(p) - 1)
        for p in ([0.5, 0.5], [0.2, 0.3, 0.5])])
    np.testing.assert_array_equal(net.sample(1000, random_state=0), expected)


def test_from_pgmpy_names_what_it_needs():
    from skfairverify.s3p import BayesNet

    with pytest.raises(TypeError, match=r"needs a pgmpy DiscreteBayesianNetwork.*got "
                       r"object, which has no nodes, get_cpds, get_parents"):
        BayesNet.from_pgmpy(object())


@pytest.mark.parametrize("strategy", ["quantile", "uniform", "kmeans"])
def test_binning_near_the_float_limit_gives_finite_exact_means(strategy):
    """Values near 1e308: the means are those of exact arithmetic (no inf, no warning)."""
    import warnings
    from fractions import Fraction

    from skfairverify import BinningDiscretizer

    X = np.array([[1e308, -3e307], [1.5e308, 2e300], [-1e308, 1e200], [1.7e308, 5.0],
                  [1.2e308, -1e-300]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        disc = BinningDiscretizer(n_bins=2, strategy=strategy).fit(X)
        idx = disc.bin_index(X)
    for j in range(X.shape[1]):
        edges = disc.bin_edges_[j]
        assert np.isfinite(edges).all() and np.all(edges[1:] > edges[:-1])
        assert edges[0] == X[:, j].min() and edges[-1] == X[:, j].max()
        for b, mean in enumerate(disc.bin_means_[j]):
            members = X[idx[:, j] == b, j]
            exact = float(sum(map(Fraction, members)) / len(members))
            assert mean == pytest.approx(exact, rel=1e-14)
            assert members.min() >= edges[b] and (members.max() < edges[b + 1] or b == len(
                disc.bin_means_[j]) - 1)


def test_binning_keeps_small_values_next_to_huge_ones():
    """A bin of 1e-300 values among 1e308 ones: its mean is 1e-300 (was 0 at one scale)."""
    import warnings
    from fractions import Fraction

    from skfairverify import BinningDiscretizer

    X = np.array([-1.7e308, 1e-300, 1e-300, 3.0, 1e308, 1.5e308, -1.7e308, 1e-300,
                  1.5e308, 3.0]).reshape(-1, 1)
    for strategy in ("quantile", "uniform", "kmeans"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            disc = BinningDiscretizer(n_bins=4, strategy=strategy).fit(X)
        idx = disc.bin_index(X)[:, 0]
        for b, mean in enumerate(disc.bin_means_[0]):
            members = X[idx == b, 0]
            if len(members):
                exact = float(sum(map(Fraction, members)) / len(members))
                assert mean == pytest.approx(exact, rel=1e-12, abs=0)
