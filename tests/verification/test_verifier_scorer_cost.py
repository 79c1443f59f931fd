"""The verifier scorer skips what its value does not read (issue 26)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.metrics import make_verifier_scorer


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0, n), "z": rng.normal(size=n)})
    y = (X["x"] + 0.5 * X["z"] + rng.normal(0, 1.0, n) > 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("metric", ["statistical_parity", "disparate_impact",
                                    "equalized_odds"])
def test_network_pessimistic_score_is_that_of_the_default_verifier(metric):
    """rate="network": no population estimate, the same score as a verifier with its
    default n_bootstrap=30 (the worst end of metric_intervals_)."""
    X, y = _data()
    model = LogisticRegression().fit(X, y)
    scorer = make_verifier_scorer(sensitive_features="a", metric=metric, rate="network",
                                  bound="pessimistic", n_draws=40)
    assert scorer.verifier_params["n_bootstrap"] == 0
    ver = FairnessVerifier(FrozenEstimator(model), "a", n_draws=40, random_state=0)
    ver.fit(X, y if metric == "equalized_odds" else None)
    assert ver.n_bootstrap == 30 and ver.population_metrics_
    low, high = ver.metric_intervals_[metric]
    expected = low if metric == "disparate_impact" else -high
    assert scorer(model, X, y) == pytest.approx(expected, abs=1e-12)


def test_population_rate_keeps_its_replicates():
    """The population estimate reads its replicates: n_bootstrap stays the verifier's."""
    for bound in ("estimate", "pessimistic"):
        scorer = make_verifier_scorer(sensitive_features="a", bound=bound)
        assert "n_bootstrap" not in scorer.verifier_params
    given = make_verifier_scorer(sensitive_features="a", rate="network", n_bootstrap=5)
    assert given.verifier_params["n_bootstrap"] == 5
