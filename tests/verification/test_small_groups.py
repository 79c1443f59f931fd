"""Small groups: the number of bins of n_bins="auto" follows the smallest sensitive group."""

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.verification._parameters import smallest_group_size
from skfairverify.verification._quantization import BIN_GRID, distribution_cap


def _data(n, p2, seed=0):
    """Two binary attributes (a2 rare) and three features shifted by them."""
    rng = np.random.default_rng(seed)
    a1 = rng.choice(["F", "M"], n)
    a2 = np.where(rng.random(n) < p2, "rare", "common")
    shift = 0.5 * (a1 == "M") + 0.8 * (a2 == "rare")
    X = pd.DataFrame(rng.normal(shift[:, None], 1.0, (n, 3)), columns=["x0", "x1", "x2"])
    S = pd.DataFrame({"a1": a1, "a2": a2})
    lr = LogisticRegression().fit(X, X["x0"] + 0.5 * X["x1"] - X["x2"] > 0.3)
    return X, S, FrozenEstimator(lr)


def _fit(X, S, model, **params):
    ver = FairnessVerifier(model, n_draws=0, random_state=0, **params)
    return ver.fit(X, sensitive_features=S)


def test_smallest_group_size_counts_intersections_and_kish_weights():
    rng = np.random.default_rng(1)
    sens = rng.integers(0, 3, (300, 2))
    counts = pd.DataFrame(sens).value_counts()
    assert smallest_group_size(sens) == counts.min()
    w = rng.uniform(0.2, 3.0, 300)
    frame = pd.DataFrame({"g": [f"{a}-{b}" for a, b in sens], "w": w, "w2": w**2})
    sums = frame.groupby("g")[["w", "w2"]].sum()
    kish = (sums["w"] ** 2 / sums["w2"]).min()
    assert smallest_group_size(sens, w) == pytest.approx(kish, rel=1e-12)


def test_smallest_group_size_with_sparse_codes_sorts_the_rows():
    """Codes far apart (10^6 joint states for 60 rows) take the sorting path."""
    rng = np.random.default_rng(3)
    sens = rng.choice([-5, 0, 10**6], (60, 2))
    assert smallest_group_size(sens) == pd.DataFrame(sens).value_counts().min()
    assert smallest_group_size(sens[:, 0]) == pd.Series(sens[:, 0]).value_counts().min()


def test_distribution_cap_on_string_groups():
    frame = pd.DataFrame({"a": ["x"] * 40 + ["y"] * 460, "b": ["u", "v"] * 250})
    smallest = int(frame.value_counts().min())  # 20 rows of ("x", "u")
    assert distribution_cap(frame, ["a", "b"], None) == (max(20, smallest), float(smallest))


def test_auto_bins_capped_by_the_smallest_group():
    X, S, model = _data(500, 0.15)
    smallest = int(S.value_counts().min())
    assert 20 < smallest < 40  # the cap binds below max_bins=60
    ver = _fit(X, S, model)
    assert ver.n_bins_ <= smallest
    assert ver.n_bins_ in [g for g in BIN_GRID if g <= smallest] + [smallest]
    assert f"smallest sensitive group has {smallest} rows" in ver.n_bins_reason_
    assert ver.n_bins_reason_.startswith(f"{ver.n_bins_} bins")


def test_auto_bins_weighted_cap_uses_the_effective_size():
    X, S, model = _data(500, 0.15)
    rng = np.random.default_rng(2)
    w = rng.choice([1.0, 4.0], len(X))
    groups = S.astype(str).agg("-".join, axis=1)
    frame = pd.DataFrame({"g": groups, "w": w, "w2": w**2}).groupby("g").sum()
    kish = float((frame["w"] ** 2 / frame["w2"]).min())
    ver = FairnessVerifier(model, n_draws=0, random_state=0)
    ver.fit(X, sensitive_features=S, sample_weight=w)
    assert ver.n_bins_ <= max(20, int(kish))
    assert f"has {kish:.0f} rows" in ver.n_bins_reason_


def test_large_groups_keep_max_bins_and_fixed_bins_are_kept():
    X, S, model = _data(3000, 0.5)
    assert S.value_counts().min() > 60
    auto = _fit(X, S, model, max_bins=30)
    assert "at most max_bins=30" in auto.n_bins_reason_ and auto.n_bins_ <= 30
    small_X, small_S, small_model = _data(500, 0.06)
    fixed = _fit(small_X, small_S, small_model, n_bins=60)
    assert fixed.n_bins_ == 60 and "n_bins=60 (fixed)" in fixed.n_bins_reason_


def test_bins_reason_names_the_path_and_is_reset_by_a_refit():
    """Every path sets n_bins_reason_: a refit on another path never keeps the old one."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 2, 600), "x": rng.normal(size=600)})
    y = (X["x"] + X["a"] > 0.5).astype(int)
    ver = FairnessVerifier(LogisticRegression(), "a", n_draws=0, tolerance=0.05,
                           random_state=0)
    expected = {LogisticRegression(): "held-out agreement",
                DecisionTreeClassifier(max_depth=3): "tree path (10, at most max_bins)",
                HistGradientBoostingClassifier(max_iter=5): "tree-ensemble path (10, at most",
                KNeighborsClassifier(5): "sampling path (20, at most "}
    for est, says in expected.items():
        ver.set_params(estimator=est).fit(X, y)
        assert ver.n_bins_reason_.startswith(f"{ver.n_bins_} ")
        assert says in ver.n_bins_reason_
    ver.set_params(estimator=DecisionTreeClassifier(max_depth=3), n_bins=7).fit(X, y)
    assert "tree path (fixed n_bins)" in ver.n_bins_reason_
