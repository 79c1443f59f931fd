"""Fitted attributes report what was used (issue 28): the bins formed, what every state of
the network stands for, the sensitive values in their own dtype, on every path."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from skfairverify import FairnessVerifier

MODELS = {
    "linear": LogisticRegression(),
    "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
    "sampling": HistGradientBoostingClassifier(max_iter=10, random_state=0),
}


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n).astype(np.int32)  # an integer sensitive column, 3 groups
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0, n), "k": rng.integers(0, 4, n)})
    return X, (X["x"] + X["k"] > 2).astype(int)


@pytest.mark.parametrize("kind", list(MODELS))
def test_n_bins_reports_the_bins_formed(kind):
    """n_bins=10**6 on 10,000 distinct values: 10,000 states, and n_bins_ says so."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 10_000)
    X = pd.DataFrame({"a": a, "x": np.round(rng.normal(a, 1.0, 10_000), 12)})
    assert X["x"].nunique() == 10_000
    y = (X["x"] > 0.5).astype(int)
    ver = FairnessVerifier(MODELS[kind], "a", n_bins=10**6, network="independent",
                           n_draws=0, tolerance=0.05, random_state=0)
    ver.fit(X, y)
    assert ver.n_bins_ == 10_000
    assert ver.network_.cardinalities[ver.variables_.index("x")] == 10_000
    assert "10000 formed" in ver.n_bins_reason_


@pytest.mark.parametrize("kind", list(MODELS))
def test_state_names_and_group_dtypes(kind, rebuilt):
    X, y = _data()
    ver = FairnessVerifier(MODELS[kind], "a", n_bins=20, n_draws=0, tolerance=0.05,
                           method="sampling" if kind == "sampling" else "auto",
                           random_state=0).fit(X, y)
    net = ver.network_
    names = dict(zip(net.names, net.state_names))
    assert names["a"] == [0, 1, 2] and names["k"] == [0, 1, 2, 3]
    bins = names["x"]
    assert all(isinstance(b, pd.Interval) for b in bins)
    assert bins[0].left == -np.inf and bins[-1].right == np.inf
    # the intervals partition the line, and every value of x lies in its state's interval
    assert all(b.right == c.left for b, c in zip(bins, bins[1:]))
    encoding = rebuilt(ver, X, y, evaluate=False).encoding
    codes = encoding.codes(X)[:, ver.variables_.index("x")]
    inside = [x in bins[c] for x, c in zip(X["x"].to_numpy()[:200], codes[:200])]
    assert all(inside)
    assert ver.groups_["a"].dtype == np.int32
    assert ver.groups_["a"].tolist() == [0, 1, 2]
