"""Tests of BinningDiscretizer, IntegerWeightScaler and the multiplier search.

The estimator contract (check_estimator) runs in tests/test_sklearn_compat.py.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skfairverify import BinningDiscretizer, IntegerWeightScaler
from skfairverify.preprocessing import (
    _discretizer,
    _quantize,
    integer_threshold,
    quantize,
    select_multiplier,
)

# --------------------------------------------------------------------------- data


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "age": rng.normal(40, 10, size=300),
            "income": rng.exponential(3.0, size=300),
            "hours": rng.integers(10, 60, size=300).astype(float),
        }
    )


def _binary_problem(n=400, seed=0, separation=3.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 3)) + separation * np.outer(y - 0.5, [1.0, -0.7, 0.4])
    return X, y


# ----------------------------------------------------------------- BinningDiscretizer


@pytest.mark.parametrize("strategy", ["quantile", "uniform", "kmeans"])
def test_bin_means_match_groupby(frame, strategy):
    disc = BinningDiscretizer(n_bins=4, strategy=strategy, random_state=0).fit(frame)
    for j, col in enumerate(frame.columns):
        edges = disc.bin_edges_[j]
        # independent assignment: right-closed search on the interior edges
        bins = np.searchsorted(edges[1:-1], frame[col].to_numpy(), side="right")
        expected = frame[col].groupby(bins).mean()
        got = disc.bin_means_[j]
        assert len(got) == disc.n_bins_[j] == len(edges) - 1
        np.testing.assert_allclose(got[expected.index.to_numpy()], expected.to_numpy())
        np.testing.assert_array_equal(disc.bin_index(frame)[:, j], bins)


def test_bin_means_in_chunks_equal_one_pass(frame, monkeypatch):
    """The bin means summed chunk by chunk (odd chunk sizes, weighted) equal one pass."""
    w = np.random.default_rng(1).uniform(0.2, 3.0, len(frame))
    disc = BinningDiscretizer(n_bins=5, random_state=0).fit(frame, sample_weight=w)
    X = frame.to_numpy(dtype=float)
    idx = disc.bin_index(frame)
    for j in range(X.shape[1]):
        k = int(disc.n_bins_[j])
        mass = np.bincount(idx[:, j], weights=w, minlength=k)
        expected = np.bincount(idx[:, j], weights=w * X[:, j], minlength=k) / mass
        np.testing.assert_allclose(disc.bin_means_[j], expected, rtol=1e-13)
    for chunk in (1, 7, len(X) - 1):
        monkeypatch.setattr(_discretizer, "MEAN_CHUNK_ROWS", chunk)
        chunked = BinningDiscretizer(n_bins=5, random_state=0).fit(frame, sample_weight=w)
        for j in range(X.shape[1]):
            np.testing.assert_allclose(chunked.bin_means_[j], disc.bin_means_[j],
                                       rtol=1e-13)


def test_empty_bin_gets_midpoint():
    X = np.array([[0.0], [0.0], [0.0], [1.0], [9.0], [10.0], [10.0]])
    disc = BinningDiscretizer(n_bins=3, strategy="uniform").fit(X)
    edges = disc.bin_edges_[0]
    np.testing.assert_allclose(edges, [0.0, 10 / 3, 20 / 3, 10.0])
    np.testing.assert_allclose(disc.bin_means_[0], [0.25, 5.0, np.mean([9.0, 10.0, 10.0])])
    assert np.all(disc.transform(X)[:, 1] == 0)


def test_transform_is_one_hot_feature_major(frame):
    disc = BinningDiscretizer(n_bins=[3, 4, 5]).fit(frame)
    Xt = disc.transform(frame)
    assert Xt.dtype == np.float64
    assert Xt.shape == (len(frame), int(disc.n_bins_.sum()))
    idx = disc.bin_index(frame)
    start = 0
    for j, k in enumerate(disc.n_bins_):
        block = Xt[:, start : start + k]
        assert set(np.unique(block)) <= {0.0, 1.0}
        np.testing.assert_array_equal(block.sum(axis=1), 1.0)
        np.testing.assert_array_equal(block.argmax(axis=1), idx[:, j])
        start += k
    names = disc.get_feature_names_out()
    assert names[:3].tolist() == ["age_bin0", "age_bin1", "age_bin2"]
    assert names[3:7].tolist() == [f"income_bin{k}" for k in range(4)]
    assert len(names) == Xt.shape[1]


def test_inverse_transform_returns_bin_means(frame):
    disc = BinningDiscretizer(n_bins=6).fit(frame)
    back = disc.inverse_transform(disc.transform(frame))
    idx = disc.bin_index(frame)
    for j in range(frame.shape[1]):
        np.testing.assert_allclose(back[:, j], disc.bin_means_[j][idx[:, j]])
    # Bin means are an approximation of the values that shrinks with more bins.
    err6 = np.abs(back - frame.to_numpy()).mean()
    disc30 = BinningDiscretizer(n_bins=30).fit(frame)
    err30 = np.abs(disc30.inverse_transform(disc30.transform(frame)) - frame.to_numpy()).mean()
    assert err30 < err6
    # The bin means preserve the feature means exactly (law of total expectation).
    np.testing.assert_allclose(back.mean(axis=0), frame.mean().to_numpy())


def test_inverse_transform_bad_input(frame):
    disc = BinningDiscretizer(n_bins=3).fit(frame)
    with pytest.raises(ValueError, match="one-hot columns"):
        disc.inverse_transform(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="'age'"):
        disc.inverse_transform(np.zeros((2, int(disc.n_bins_.sum()))))


def test_pandas_output_and_names(frame):
    disc = BinningDiscretizer(n_bins=3).set_output(transform="pandas")
    out = disc.fit_transform(frame.set_axis(range(100, 400)))
    assert isinstance(out, pd.DataFrame)
    assert out.columns.tolist() == disc.get_feature_names_out().tolist()
    assert out.index.tolist() == list(range(100, 400))
    disc_arr = BinningDiscretizer(n_bins=2).fit(frame.to_numpy())
    assert disc_arr.get_feature_names_out().tolist() == [
        "x0_bin0", "x0_bin1", "x1_bin0", "x1_bin1", "x2_bin0", "x2_bin1",
    ]


def test_bin_index_clips_out_of_range(frame):
    disc = BinningDiscretizer(n_bins=4).fit(frame)
    far = pd.DataFrame({"age": [-1e6, 1e6], "income": [-5.0, 1e9], "hours": [0.0, 1e3]})
    idx = disc.bin_index(far)
    np.testing.assert_array_equal(idx[0], 0)
    np.testing.assert_array_equal(idx[1], disc.n_bins_ - 1)


def test_duplicate_edges_are_removed():
    X = np.r_[np.zeros(80), np.arange(1.0, 21.0)].reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        disc = BinningDiscretizer(n_bins=5).fit(X)
    assert disc.n_bins_[0] < 5
    assert len(disc.bin_means_[0]) == disc.n_bins_[0] == len(disc.bin_edges_[0]) - 1
    assert disc.transform(X).shape[1] == disc.n_bins_[0]
    assert np.all(np.diff(disc.bin_edges_[0]) > 0)


def test_discretizer_nan_names_column(frame):
    bad = frame.copy()
    bad.loc[5, "income"] = np.nan
    with pytest.raises(ValueError, match="NaN.*'income'"):
        BinningDiscretizer().fit(bad)
    disc = BinningDiscretizer().fit(frame)
    with pytest.raises(ValueError, match="NaN.*'income'"):
        disc.transform(bad)
    arr = frame.to_numpy().copy()
    arr[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity.*'x2'"):
        BinningDiscretizer().fit(arr)


def test_discretizer_non_numeric_column(frame):
    bad = frame.assign(sex=["F", "M"] * 150)
    with pytest.raises(ValueError, match="'sex' is not numeric"):
        BinningDiscretizer().fit(bad)
    arr = bad.to_numpy(dtype=object)
    with pytest.raises(ValueError, match="'x3' is not numeric"):
        BinningDiscretizer().fit(arr)
    with pytest.raises(ValueError, match="'sex' is not numeric"):
        BinningDiscretizer().fit(frame).transform(bad.drop(columns="hours"))


@pytest.mark.parametrize(
    "params", [{"n_bins": 1}, {"strategy": "median"}, {"subsample": 0}]
)
def test_discretizer_bad_params(frame, params):
    with pytest.raises(ValueError):
        BinningDiscretizer(**params).fit(frame)


# ------------------------------------------------------------------ quantization


def _brute_force(C, b, ref, candidates):
    best_l, best = None, -1
    for l in candidates:
        agree = 0
        for i in range(C.shape[0]):
            s = sum(int(np.rint(l * float(c))) for c in C[i]) + int(np.rint(l * b))
            agree += (s > 0) == bool(ref[i])
        if agree > best:
            best_l, best = l, agree
    return best_l, best / C.shape[0]


def _brute_force_coef(w, V, b, ref, candidates):
    best_l, best = None, -1
    for l in candidates:
        W = [int(np.rint(l * float(c))) for c in w]
        agree = 0
        for i in range(V.shape[0]):
            s = sum(Wj * float(v) for Wj, v in zip(W, V[i])) + int(np.rint(l * b))
            agree += (s > 0) == bool(ref[i])
        if agree > best:
            best_l, best = l, agree
    return best_l, best / V.shape[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_select_multiplier_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m = 60, 4
    V = rng.normal(size=(n, m))
    w = rng.normal(scale=0.3, size=m)
    b = float(rng.normal(scale=0.2))
    ref = V @ w + b > 0
    C = V * w
    assert select_multiplier(C, b, ref, 25) == _brute_force(C, b, ref, range(1, 26))
    assert select_multiplier(w, b, ref, 25, values=V) == _brute_force_coef(
        w, V, b, ref, range(1, 26)
    )
    # with noisy references agreement is below one and still matches
    noisy = ref ^ (rng.random(n) < 0.2)
    assert select_multiplier(C, b, noisy, 25) == _brute_force(C, b, noisy, range(1, 26))


def test_select_multiplier_binned_contributions_match_brute_force():
    # Few distinct contributions per term (the verifier's state weights w * bin_mean).
    rng = np.random.default_rng(7)
    n, m, k = 80, 3, 4
    weights = rng.normal(scale=0.4, size=(m, k))
    states = rng.integers(0, k, size=(n, m))
    C = weights[np.arange(m)[None, :], states]
    ref = C.sum(axis=1) - 0.1 > 0
    noisy = ref ^ (rng.random(n) < 0.15)
    for r in (ref, noisy):
        assert select_multiplier(C, -0.1, r, 30) == _brute_force(C, -0.1, r, range(1, 31))


def test_select_multiplier_chunking_is_exact(monkeypatch):
    rng = np.random.default_rng(3)
    C = rng.normal(size=(50, 3))
    ref = rng.random(50) < 0.5
    binned = np.round(C)  # few distinct values: the gather path
    full = select_multiplier(C, 0.1, ref, 40)
    full_binned = select_multiplier(binned, 0.1, ref, 40)
    full_coef = select_multiplier(C[0], 0.1, ref, 40, values=C)
    monkeypatch.setattr(_quantize, "_MAX_CELLS", 7)
    assert select_multiplier(C, 0.1, ref, 40) == full
    assert select_multiplier(binned, 0.1, ref, 40) == full_binned
    assert select_multiplier(C[0], 0.1, ref, 40, values=C) == full_coef


def test_select_multiplier_ties_go_to_smallest_and_explicit_order():
    C = np.array([[2.0], [-2.0]])
    ref = np.array([True, False])
    assert select_multiplier(C, 0.0, ref, 50) == (1, 1.0)
    assert select_multiplier(C, 0.0, ref, 50, multipliers=[9, 3, 9]) == (9, 1.0)


def test_select_multiplier_bad_input():
    C = np.ones((3, 2))
    ref = np.ones(3, dtype=bool)
    with pytest.raises(ValueError, match="max_multiplier"):
        select_multiplier(C, 0.0, ref, 0)
    with pytest.raises(TypeError, match="max_multiplier"):
        select_multiplier(C, 0.0, ref, 2.5)
    with pytest.raises(ValueError, match="multipliers"):
        select_multiplier(C, 0.0, ref, 5, multipliers=[0])
    with pytest.raises(ValueError, match="empty"):
        select_multiplier(C, 0.0, ref, 5, multipliers=[])
    with pytest.raises(ValueError, match="n_samples"):
        select_multiplier(np.ones((4, 2)), 0.0, ref, 5)
    with pytest.raises(ValueError, match="1-D"):
        select_multiplier(C, 0.0, ref[:, None], 5)
    with pytest.raises(ValueError, match="NaN"):
        select_multiplier(np.full((3, 2), np.nan), 0.0, ref, 5)
    with pytest.raises(ValueError, match="columns"):
        select_multiplier(np.ones(3), 0.0, ref, 5, values=C)


def test_integer_threshold_tie_convention():
    rng = np.random.default_rng(0)
    scores = rng.integers(-20, 20, size=500)
    for b in range(-10, 11):
        t = integer_threshold(b)
        np.testing.assert_array_equal(scores + b > 0, scores >= t)
    # a decision exactly at zero is negative (sklearn: positive iff decision > 0)
    assert not (4 + (-4) > 0) and not (4 >= integer_threshold(-4))
    assert integer_threshold(np.int64(3)) == -2
    assert integer_threshold(2.0) == -1
    with pytest.raises(TypeError, match="integer"):
        integer_threshold(0.5)


def test_quantize_rounds_half_to_even():
    np.testing.assert_array_equal(quantize([0.05, 0.15, -0.25, 0.26], 10), [0, 2, -2, 3])
    assert quantize([1.0], 3).dtype == np.int64
    assert quantize(0.25, 10) == 2  # a scalar (an intercept) is accepted
    with pytest.raises(ValueError, match="'multiplier' parameter of quantize"):
        quantize([1.0], 0)
    with pytest.raises(TypeError, match="'multiplier' parameter of quantize"):
        quantize([1.0], 2.5)
    with pytest.raises(TypeError, match="'values' parameter of quantize"):
        quantize("1.0", 2)


def test_quantize_functions_refuse_bad_types_by_name():
    ref = np.ones(3, dtype=bool)
    with pytest.raises(TypeError, match="'intercept' parameter of select_multiplier"):
        select_multiplier(np.ones((3, 1)), "0", ref, 5)
    with pytest.raises(TypeError, match="'multipliers' parameter of select_multiplier"):
        select_multiplier(np.ones((3, 1)), 0.0, ref, 5, multipliers=3)
    with pytest.raises(TypeError, match="'intercept_int' parameter of integer_threshold"):
        integer_threshold("3")


# ----------------------------------------------------------------- IntegerWeightScaler


def test_scaler_agreement_and_rounding():
    X, y = _binary_problem()
    ref_model = LogisticRegression().fit(X, y)  # independent fit of the same model
    scaler = IntegerWeightScaler(LogisticRegression(), max_multiplier=30).fit(X, y)
    l = scaler.multiplier_
    assert 1 <= l <= 30
    assert scaler.coef_.shape == (1, 3) and scaler.coef_.dtype == np.int64
    assert scaler.intercept_.shape == (1,) and scaler.intercept_.dtype == np.int64
    # the weights are divided by the root mean square of the decision on X
    s = np.sqrt(np.mean(ref_model.decision_function(X) ** 2))
    assert scaler.scale_ == pytest.approx(s, rel=1e-12)
    w, b = ref_model.coef_ / s, ref_model.intercept_ / s
    np.testing.assert_array_equal(scaler.coef_, np.rint(l * w))
    np.testing.assert_array_equal(scaler.intercept_, np.rint(l * b))
    assert scaler.agreement_ == pytest.approx(np.mean(scaler.predict(X) == ref_model.predict(X)))
    # best over all l, by a direct loop
    direct = [
        np.mean(
            (X @ np.rint(k * w[0]) + np.rint(k * b[0]) > 0)
            == (ref_model.predict(X) == 1)
        )
        for k in range(1, 31)
    ]
    assert scaler.agreement_ == pytest.approx(max(direct))
    assert l == 1 + int(np.argmax(direct))
    np.testing.assert_array_equal(scaler.classes_, [0, 1])


def test_scaler_l100_agrees_with_original():
    X, y = _binary_problem(n=600, seed=1)
    original = LinearSVC().fit(X, y)
    scaler = IntegerWeightScaler(LinearSVC(), multiplier=100).fit(X, y)
    assert scaler.multiplier_ == 100
    assert np.mean(scaler.predict(X) == original.predict(X)) >= 0.99
    Xtest, _ = _binary_problem(n=600, seed=2)
    assert np.mean(scaler.predict(Xtest) == original.predict(Xtest)) >= 0.99
    np.testing.assert_allclose(
        scaler.decision_function(Xtest) / 100 * scaler.scale_,
        original.decision_function(Xtest),
        atol=0.05 * scaler.scale_,
    )


def test_scaler_fixed_multiplier():
    X, y = _binary_problem()
    lr = LogisticRegression().fit(X, y)
    scaler = IntegerWeightScaler(LogisticRegression(), multiplier=7, max_multiplier=3).fit(X, y)
    assert scaler.multiplier_ == 7
    s = np.sqrt(np.mean(lr.decision_function(X) ** 2))
    np.testing.assert_array_equal(scaler.coef_[0], np.rint(7 * lr.coef_[0] / s))
    dec = X @ np.rint(7 * lr.coef_[0] / s) + np.rint(7 * lr.intercept_[0] / s)
    np.testing.assert_allclose(scaler.decision_function(X), dec)
    assert scaler.agreement_ == pytest.approx(np.mean((dec > 0) == (lr.predict(X) == 1)))


def test_scaler_transform_contributions():
    X, y = _binary_problem()
    scaler = IntegerWeightScaler(LogisticRegression()).fit(X, y)
    contrib = scaler.transform(X)
    np.testing.assert_allclose(contrib, X * scaler.coef_[0])
    np.testing.assert_allclose(
        contrib.sum(axis=1) + scaler.intercept_[0], scaler.decision_function(X)
    )
    assert scaler.get_feature_names_out().tolist() == ["x0", "x1", "x2"]
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    out = clone(scaler).set_output(transform="pandas").fit(frame, y).transform(frame)
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == ["a", "b", "c"]


def test_scaler_frozen_estimator_not_refit():
    X, y = _binary_problem(seed=0)
    lr = LogisticRegression(C=0.01).fit(X, y)
    coef = lr.coef_.copy()
    X2, y2 = _binary_problem(seed=5)
    frozen = FrozenEstimator(lr)
    scaler = IntegerWeightScaler(frozen, multiplier=50).fit(X2, 1 - y2)
    assert scaler.estimator_ is frozen
    np.testing.assert_array_equal(lr.coef_, coef)
    s = np.sqrt(np.mean(lr.decision_function(X2) ** 2))  # scale on the data given to fit
    np.testing.assert_array_equal(scaler.coef_[0], np.rint(50 * coef[0] / s))


def test_scaler_pipeline_with_categories():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "color": rng.choice(["red", "green", "blue"], size=n),
            "sex": rng.choice(["F", "M"], size=n),
        }
    )
    y = ((frame["x"] + (frame["color"] == "red") * 1.5 + rng.normal(scale=0.3, size=n)) > 0.5)
    y = np.where(y, "yes", "no")
    pipe = make_pipeline(
        make_column_transformer(
            (StandardScaler(), ["x"]), (OneHotEncoder(), ["color"]), remainder="drop"
        ),
        LogisticRegression(),
    )
    original = clone(pipe).fit(frame, y)
    scaler = IntegerWeightScaler(pipe, multiplier=100).fit(frame, y)
    assert scaler.terms_.tolist() == ["x", "color=blue", "color=green", "color=red"]
    assert scaler.coef_.shape == (1, 4)
    np.testing.assert_array_equal(scaler.classes_, ["no", "yes"])
    assert np.mean(scaler.predict(frame) == original.predict(frame)) >= 0.98
    contrib = scaler.transform(frame)
    assert contrib.shape == (n, 3)
    np.testing.assert_array_equal(contrib[:, 2], 0.0)  # "sex" is never read
    red = (frame["color"] == "red").to_numpy()
    np.testing.assert_allclose(contrib[red, 1], scaler.coef_[0, 3])
    np.testing.assert_allclose(
        contrib.sum(axis=1) + scaler.intercept_[0], scaler.decision_function(frame)
    )
    bad = frame.copy()
    bad.loc[3, "color"] = None
    with pytest.raises(ValueError, match="NaN.*'color'"):
        scaler.predict(bad)


def test_scaler_rejects_non_linear_and_multiclass():
    X, y = _binary_problem()
    with pytest.raises(TypeError, match="DecisionTreeClassifier"):
        IntegerWeightScaler(DecisionTreeClassifier()).fit(X, y)
    y3 = np.arange(len(y)) % 3
    lr3 = LogisticRegression().fit(X, y3)
    with pytest.raises(TypeError, match="multiclass"):
        IntegerWeightScaler(FrozenEstimator(lr3)).fit(X, y)
    with pytest.raises(ValueError, match="Only binary classification"):
        IntegerWeightScaler(LogisticRegression()).fit(X, y3)


def test_scaler_nan_and_bad_params():
    X, y = _binary_problem()
    scaler = IntegerWeightScaler(LogisticRegression()).fit(X, y)
    bad = X.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN.*'x1'"):
        scaler.predict(bad)
    with pytest.raises(ValueError, match="NaN"):
        IntegerWeightScaler(LogisticRegression()).fit(bad, y)
    for params in ({"max_multiplier": 0}, {"multiplier": 0}, {"multiplier": "best"}):
        with pytest.raises(ValueError):
            IntegerWeightScaler(LogisticRegression(), **params).fit(X, y)


def test_quantile_bins_use_averaged_inverted_cdf():
    """Pin quantile edges to ``averaged_inverted_cdf`` (the verifier's bins).

    Whatever the scikit-learn version's default.
    """
    from sklearn.preprocessing import KBinsDiscretizer

    X = np.random.default_rng(4).integers(0, 7, size=(101, 2)).astype(float)
    disc = BinningDiscretizer(n_bins=4).fit(X)
    ref = KBinsDiscretizer(
        n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf"
    ).fit(X)
    for ours, theirs in zip(disc.bin_edges_, ref.bin_edges_):
        np.testing.assert_array_equal(ours, theirs)


def test_binning_discretizer_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=200), rng.exponential(size=200)])
    w = rng.integers(0, 4, size=200)
    weighted = BinningDiscretizer(n_bins=6).fit(X, sample_weight=w)
    repeated = BinningDiscretizer(n_bins=6).fit(np.repeat(X, w, axis=0))
    for j in range(2):
        np.testing.assert_allclose(weighted.bin_edges_[j], repeated.bin_edges_[j], rtol=1e-12)
        np.testing.assert_allclose(weighted.bin_means_[j], repeated.bin_means_[j], rtol=1e-12)
    np.testing.assert_array_equal(weighted.transform(X), repeated.transform(X))


def test_binning_discretizer_refuses_negative_weights():
    with pytest.raises(ValueError, match="(?i)negative"):
        BinningDiscretizer(n_bins=2).fit(np.arange(6.0).reshape(-1, 1),
                                         sample_weight=[1, 1, -1, 1, 1, 1])


# ------------------------------------------------------------ transform output guard


def test_sparse_encode_equals_dense_and_inverts():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    dense = BinningDiscretizer(n_bins=6).fit(X)
    sp = BinningDiscretizer(n_bins=6, encode="onehot").fit(X)
    S = sp.transform(X)
    assert S.format == "csr" and S.nnz == X.size
    np.testing.assert_array_equal(S.toarray(), dense.transform(X))
    np.testing.assert_array_equal(sp.inverse_transform(S), dense.inverse_transform(
        dense.transform(X)))


@pytest.mark.parametrize("encode, entries", [("onehot-dense", 1000 * 40),
                                             ("onehot", 1000 * 4)])
def test_transform_output_is_estimated_and_refused_before_allocation(encode, entries):
    from skfairverify.s3p import TableTooLargeError

    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 4))
    disc = BinningDiscretizer(n_bins=10, encode=encode, max_output_size=entries - 1).fit(X)
    # closed form of the size: rows x total bins (dense), rows x features (sparse)
    with pytest.raises(TableTooLargeError, match=rf"{entries:,} entries.*max_output_size="):
        disc.transform(X)
    disc.set_params(max_output_size=entries)
    assert disc.transform(X).shape == (1000, 40)


def test_transform_guard_runs_before_the_input_is_copied(monkeypatch):
    from skfairverify.s3p import TableTooLargeError

    disc = BinningDiscretizer(n_bins=50).fit(np.random.default_rng(0).normal(size=(500, 2)))

    class Huge:  # looks like 10**9 rows; any conversion would fail the test
        shape = (10**9, 2)

        def __array__(self, *a, **k):
            raise AssertionError("converted before the size check")

    with pytest.raises(TableTooLargeError, match=r"1,000,000,000 rows x 100 one-hot bin"):
        disc.transform(Huge())
