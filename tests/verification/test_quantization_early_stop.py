"""The bin search stops once no coarser bins can change its choice (issue 26)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.verification import _quantization
from skfairverify.verification._quantization import choice_is_final, finest_within_noise


def _random_scores(rng, n, perfect):
    agreements = np.minimum(rng.uniform(0.97, 1.0, n), 1.0)
    agreements[rng.random(n) < perfect] = 1.0
    return [(float(a), 100 - i, 1) for i, a in enumerate(agreements)]


def test_final_choice_is_that_of_every_longer_list():
    """Whenever choice_is_final says so, no suffix of agreements <= 1 moves the choice."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(2000):
        n_eff = float(rng.choice([20, 100, 334, 1000]))
        scores = _random_scores(rng, int(rng.integers(1, 8)), perfect=0.2)
        if not choice_is_final(scores, n_eff):
            continue
        checked += 1
        for _ in range(5):
            suffix = _random_scores(rng, int(rng.integers(1, 8)), perfect=0.3)
            assert finest_within_noise(scores + suffix, n_eff) == \
                finest_within_noise(scores, n_eff)
    assert checked > 100


def test_not_final_without_a_perfect_agreement():
    # below 1, a later perfect agreement can still move the choice
    scores = [(0.99, 60, 10), (0.995, 40, 10)]
    assert not choice_is_final(scores, 334.0)
    assert finest_within_noise(scores + [(1.0, 30, 10)], 334.0) == (30, 10)
    # a perfect agreement, the earlier ones too far below it: the first within noise
    # is the perfect one, already seen
    assert choice_is_final([(0.9, 60, 10), (1.0, 40, 10)], 334.0)


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0, n), "z": rng.normal(size=n)})
    y = (X["x"] + 0.3 * X["z"] + rng.normal(0, 0.5, n) > 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("weighted", [False, True])
def test_early_stop_keeps_every_fitted_value(monkeypatch, weighted):
    """The verifier with the early stop and with the whole search: the same fit."""
    X, y = _data(n=600, seed=1)  # the finest bins agree on every held-out row
    weight = np.random.default_rng(0).uniform(0.5, 2.0, len(X)) if weighted else None
    model = FrozenEstimator(LogisticRegression().fit(X, y))
    calls = []
    from_data = _quantization.Encoding.from_data

    def counted(*args, **kwargs):
        calls.append(args[3])
        return from_data(*args, **kwargs)

    monkeypatch.setattr(_quantization.Encoding, "from_data", staticmethod(counted))

    def fit():
        calls.clear()
        ver = FairnessVerifier(model, "a", n_draws=0, random_state=0)
        return ver.fit(X, sample_weight=weight), list(calls)

    early, early_calls = fit()
    monkeypatch.setattr(_quantization, "choice_is_final", lambda scores, n: False)
    full, full_calls = fit()
    assert len(early_calls) < len(full_calls)  # the early stop was taken
    # the searched bins, then the chosen ones fitted on all rows
    assert early_calls[:-1] == full_calls[:len(early_calls) - 1]
    assert early_calls[-1] == full_calls[-1]
    assert (early.n_bins_, early.multiplier_, early.n_bins_reason_, early.agreement_) == \
        (full.n_bins_, full.multiplier_, full.n_bins_reason_, full.agreement_)
    assert early.metrics_ == full.metrics_
    assert early.population_metrics_ == full.population_metrics_
