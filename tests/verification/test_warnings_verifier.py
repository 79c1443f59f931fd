"""Warnings of the discretizer and of the network learning are specific (issue 11, section 5)."""

import warnings

import numpy as np
import pytest
from sklearn.preprocessing import KBinsDiscretizer

from skfairverify.preprocessing import BinningDiscretizer
from skfairverify.verification._network import learn_network


def _no_warnings(func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func()
    return out, [str(w.message) for w in caught]


def test_constant_feature_keeps_its_mean_without_warning():
    X = np.c_[np.full(40, 3.5), np.arange(40.0)]
    disc, caught = _no_warnings(lambda: BinningDiscretizer(n_bins=4).fit(X))
    assert caught == []
    assert disc.n_bins_[0] == 1
    assert disc.bin_means_[0].tolist() == [3.5]  # not "replaced with 0"
    assert disc.inverse_transform(disc.transform(X))[:, 0].tolist() == [3.5] * 40


def test_kmeans_duplicate_clusters_without_warning():
    X = np.r_[np.zeros(30), np.ones(10)][:, None]
    disc, caught = _no_warnings(lambda: BinningDiscretizer(n_bins=6, strategy="kmeans").fit(X))
    assert caught == []
    assert disc.n_bins_[0] == 2
    assert sorted(disc.bin_means_[0].tolist()) == [0.0, 1.0]


def test_unrelated_discretizer_warning_reaches_user(monkeypatch):
    original = KBinsDiscretizer.fit

    def noisy_fit(self, *args, **kwargs):
        warnings.warn("something else went wrong", UserWarning, stacklevel=2)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(KBinsDiscretizer, "fit", noisy_fit)
    with pytest.warns(UserWarning, match="something else went wrong"):
        BinningDiscretizer(n_bins=3).fit(np.arange(20.0)[:, None])


def _codes(n=300, seed=0):
    rng = np.random.default_rng(seed)
    cards = [2, 4, 3]
    return np.column_stack([rng.integers(0, c, n) for c in cards]), list("axz"), cards


def test_network_learning_emits_no_warning():
    codes, names, cards = _codes()
    net, caught = _no_warnings(lambda: learn_network(codes, names, cards, ["a"]))
    assert caught == []
    assert net.names == names


def test_unrelated_pgmpy_warning_reaches_user(monkeypatch):
    from pgmpy.causal_discovery import HillClimbSearch

    original = HillClimbSearch.fit

    def noisy_fit(self, *args, **kwargs):
        warnings.warn("a real problem in the search", UserWarning, stacklevel=2)
        warnings.warn("old_api is deprecated", FutureWarning, stacklevel=2)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HillClimbSearch, "fit", noisy_fit)
    codes, names, cards = _codes()
    _, caught = _no_warnings(lambda: learn_network(codes, names, cards, ["a"],
                                                   structure_search="pgmpy"))
    assert caught == ["a real problem in the search"]
