"""FairnessVerifier on a dask DataFrame: the numbers of pandas, computed by partitions.

The cluster is a ``LocalCluster`` of two workers of one thread each (threads of this
process, for speed; ``test_worker_processes``, marked slow, runs two worker processes
with a memory limit, so every partition function is pickled). With every row in
the sample (``n_rows <= sample_rows``) the bins are those of pandas and the metrics must
be identical; the counts are checked against pandas group-bys of the data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skfairverify import FairnessVerifier
from skfairverify.s3p import BayesNet, TableTooLargeError
from skfairverify.verification import LowAgreementWarning
from skfairverify.verification._dask import (
    DaskRows,
    _partition_stats,
    key_bound,
    partition_statistics,
    smallest_keys,
)

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


def _data(n=2400, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    x1 = rng.normal(size=n) + (sex == "M")
    x2 = rng.exponential(size=n)
    job = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    k = rng.integers(0, 4, n)
    score = x1 + 0.5 * x2 + 0.5 * (job == "a") + 0.2 * k + rng.normal(0, 1, n)
    X = pd.DataFrame({"x1": x1, "x2": x2, "job": job, "k": k, "sex": sex})
    y = (score > 1.0).astype(int)
    w = rng.integers(0, 4, n).astype(float)  # some rows of weight 0
    return X, y, w


@pytest.fixture(scope="module")
def data():
    X, y, w = _data()
    # unequal partitions, one of them empty
    df = X.assign(label=y, w=w)
    parts = [df.iloc[:700], df.iloc[700:700], df.iloc[700:1900], df.iloc[1900:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0],
                          verify_meta=False)
    return X, y, w, ddf.drop(columns=["label", "w"]), ddf["label"], ddf["w"]


def _linear(X, y):
    pre = make_column_transformer((StandardScaler(), ["x1", "x2", "k"]),
                                  (OneHotEncoder(), ["job", "sex"]))
    return make_pipeline(pre, LogisticRegression()).fit(X, y)


def _kbins(X, y):
    pre = make_column_transformer(
        (KBinsDiscretizer(n_bins=6, quantile_method="averaged_inverted_cdf"), ["x1"]),
        (StandardScaler(), ["x2", "k"]), (OneHotEncoder(), ["job", "sex"]))
    return make_pipeline(pre, LogisticRegression()).fit(X, y)


def _tree(X, y):
    pre = make_column_transformer((OneHotEncoder(), ["job", "sex"]), remainder="passthrough",
                                  verbose_feature_names_out=False)
    return make_pipeline(pre, DecisionTreeClassifier(max_depth=4, random_state=0)).fit(X, y)


def _pair(model, data, client, weights=False, **params):
    """The verifier fitted on pandas and on dask (which must run on the cluster)."""
    X, y, w, DX, Dy, Dw = data
    params = {"sensitive_features": "sex", "random_state": 0, **params}
    p = FairnessVerifier(FrozenEstimator(model), **params).fit(
        X, y, sample_weight=w if weights else None)
    with distributed.get_task_stream(client) as stream:
        d = FairnessVerifier(FrozenEstimator(model), **params).fit(
            DX, Dy, sample_weight=Dw if weights else None)
    assert len(stream.data) > 0, "no task ran on the cluster"
    return p, d


def _assert_same(p, d, *, exact_support=True):
    assert d.metrics_ == p.metrics_
    pd.testing.assert_frame_equal(d.groups_, p.groups_, check_exact=exact_support,
                                  rtol=1e-12)
    assert d.variables_ == p.variables_ and d.n_bins_ == p.n_bins_
    assert d.multiplier_ == p.multiplier_ and d.threshold_ == p.threshold_
    assert d.agreement_ == pytest.approx(p.agreement_, abs=1e-12)
    assert getattr(d, "n_bins_reason_", None) == getattr(p, "n_bins_reason_", None)
    if p.weights_ is not None:
        for name in p.weights_:
            pd.testing.assert_series_equal(d.weights_[name], p.weights_[name])


# ------------------------------------------------------------------ same as pandas
@pytest.mark.slow
def test_worker_processes(data):
    """Two worker processes with a memory limit: the partition functions are pickled."""
    X, y = data[0], data[1]
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="1GiB", dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        for make in (_linear, _tree):
            p, d = _pair(make(X, y), data, c, n_bins=10, multiplier=50, n_draws=0)
            _assert_same(p, d)


@pytest.mark.parametrize("make", [_linear, _kbins, _tree], ids=["linear", "kbins", "tree"])
def test_same_as_pandas(make, data, client):
    X, y = data[0], data[1]
    p, d = _pair(make(X, y), data, client, n_bins=10, multiplier=50, n_draws=0)
    _assert_same(p, d)


@pytest.mark.parametrize("make", [_linear, _tree], ids=["linear", "tree"])
def test_same_as_pandas_with_weights(make, data, client):
    X, y = data[0], data[1]
    p, d = _pair(make(X, y), data, client, weights=True, n_bins=10, multiplier=50, n_draws=0)
    _assert_same(p, d, exact_support=False)  # sums of float weights, in another order


def test_same_posterior_draws_and_mediators(data, client):
    X, y = data[0], data[1]
    p, d = _pair(_linear(X, y), data, client, n_bins=8, multiplier=20, n_draws=40,
                 mediators="x1")
    _assert_same(p, d)
    assert d.metric_intervals_ == p.metric_intervals_
    assert "path_specific_causal" in d.metrics_


def _duplicated(seed, n=600):
    """Integer features, two sensitive columns: 600 rows, about 130 distinct rows."""
    rng = np.random.default_rng(seed)
    sex = rng.choice([0, 1], n, p=[0.7, 0.3])
    race = rng.choice([0, 1, 2], n, p=[0.6, 0.3, 0.1])
    a = rng.integers(0, 4, n) + sex
    b = rng.integers(0, 3, n) + (race == 2)
    c = rng.integers(0, 2, n)
    score = 0.6 * a - 0.5 * b + 0.8 * c - 1 + 0.5 * sex + rng.normal(0, 1, n)
    X = pd.DataFrame({"a": a, "b": b, "c": c, "sex": sex, "race": race})
    y = (score > 0).astype(int)
    w = np.random.default_rng(seed + 1).integers(1, 4, n).astype(float)
    ddf = dd.from_pandas(X.assign(label=y, w=w), npartitions=3)
    return X, y, w, ddf.drop(columns=["label", "w"]), ddf["label"], ddf["w"]


@pytest.mark.parametrize(("seed", "weights", "n_bootstrap"),
                         [(3, False, 30), (3, False, 0), (2, True, 30)])
def test_duplicated_rows_same_draw_rule(seed, weights, n_bootstrap, client):
    """Duplicated rows, gathered as distinct rows with their counts: the draws' rule's
    slack of one row (``_draw_rule.one_row_share``) counts the rows as pandas does (Kish's
    effective rows, from the sums of the weights and squared weights of the distinct
    rows), with or without the population estimate. Counting the distinct rows instead,
    the dask path took the multiplier 15 where pandas keeps 1000 (seed 3: the network of
    all rows; seed 2, weighted: 31 against 250, the network of ``Y = 1``), so the draws,
    the intervals and the population numbers differed."""
    data = _duplicated(seed)
    assert len(data[0].drop_duplicates()) < len(data[0]) / 4
    model = LogisticRegression().fit(data[0], data[1])
    p, d = _pair(model, data, client, weights=weights, sensitive_features=["sex", "race"],
                 n_draws=40, n_bootstrap=n_bootstrap)
    chosen = p._path.fitted.draw_multipliers
    assert d._path.fitted.draw_multipliers == chosen
    assert min(chosen) < p.multiplier_  # coarser rules were tried and taken
    _assert_same(p, d, exact_support=not weights)
    assert d.metric_intervals_ == pytest.approx(p.metric_intervals_, rel=1e-12)
    if n_bootstrap:
        assert d.population_metrics_ == pytest.approx(p.population_metrics_, rel=1e-12)
        assert d.population_metric_intervals_ == pytest.approx(
            p.population_metric_intervals_, rel=1e-12)


def test_auto_on_all_rows_is_pandas(data, client):
    X, y = data[0], data[1]
    p, d = _pair(_linear(X, y), data, client, n_draws=0, max_bins=20, max_multiplier=100)
    _assert_same(p, d)


def test_auto_on_a_sample_is_close(data, client):
    X, y = data[0], data[1]
    p, d = _pair(_linear(X, y), data, client, n_draws=0, max_bins=20, max_multiplier=100,
                 sample_rows=800)
    for name, value in p.metrics_.items():
        assert d.metrics_[name] == pytest.approx(value, abs=0.03), name
    assert d.agreement_ > 0.95
    # the supports are counted on all rows, not on the sample
    np.testing.assert_array_equal(d.groups_["support"], p.groups_["support"])


def test_verify_same_as_pandas(data, client):
    X, y, w, DX, Dy, Dw = data
    model = _linear(X, y)
    ver = FairnessVerifier(FrozenEstimator(model), "sex", n_bins=10, multiplier=50,
                           n_draws=0, random_state=0).fit(X.iloc[:1200], y[:1200])
    r_p = ver.verify(X, y, sample_weight=w)
    r_d = ver.verify(DX, Dy, sample_weight=Dw)
    assert r_d.metrics == r_p.metrics
    assert r_d.agreement == pytest.approx(r_p.agreement, abs=1e-12)
    pd.testing.assert_frame_equal(r_d.groups, r_p.groups, check_exact=False, rtol=1e-12)


def test_tree_verify_and_joblib_networks(data, client):
    """verify on the tree path, and the networks learned in joblib workers (n_jobs=2)."""
    X, y, w, DX, Dy, Dw = data
    model = _tree(X, y)
    kw = {"n_bins": 10, "n_draws": 0, "random_state": 0, "n_jobs": 2}
    p = FairnessVerifier(FrozenEstimator(model), "sex", **kw).fit(X, y)
    d = FairnessVerifier(FrozenEstimator(model), "sex", **kw).fit(DX, Dy)
    _assert_same(p, d)
    r_p, r_d = p.verify(X, y, sample_weight=w), d.verify(DX, Dy, sample_weight=Dw)
    assert r_d.metrics == r_p.metrics and r_d.agreement == 1.0
    assert set(d.verify(DX).metrics) == {"disparate_impact", "statistical_parity"}


# ------------------------------------------------------------------ against the data itself
def test_counts_and_bins_from_the_data(data, client):
    """Supports, bin means and the decision scale against direct pandas computations."""
    X, y, w, DX, Dy, Dw = data
    model = _linear(X, y)
    d = FairnessVerifier(FrozenEstimator(model), "sex", n_bins=10, multiplier=50, n_draws=0,
                         random_state=0).fit(DX, Dy, sample_weight=Dw)
    keep = w > 0
    support = pd.Series(w[keep]).groupby(X["sex"][keep].to_numpy()).sum()
    np.testing.assert_allclose(d.groups_.set_index("sex")["support"], support, rtol=1e-12)
    # a binned column: every state's value is the weighted mean of its rows over all rows
    j = d.discretizer_.feature_names_in_.tolist().index("x1") if hasattr(
        d.discretizer_, "feature_names_in_") else 0
    edges = d.discretizer_.bin_edges_[j]
    x = X["x1"].to_numpy()[keep]
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    means = np.bincount(idx, weights=w[keep] * x) / np.bincount(idx, weights=w[keep])
    np.testing.assert_allclose(d.discretizer_.bin_means_[j], means, rtol=1e-12)
    dec = model.decision_function(X)[keep]
    scale = np.sqrt(np.sum(w[keep] * dec**2) / np.sum(w[keep]))
    assert d.decision_scale_ == pytest.approx(scale, rel=1e-12)


def test_sample_is_uniform():
    """Every row enters the sample with probability sample_rows / n_rows (Monte Carlo).

    The partitions' samples (three partitions of unequal sizes) cut to the smallest keys
    as the client cuts them.
    """
    n, m, reps = 40, 10, 250
    df = pd.DataFrame({"x": np.arange(n, dtype=float), "s": ["a", "b"] * (n // 2)})
    parts = [df.iloc[:5], df.iloc[5:30], df.iloc[30:]]
    hits = np.zeros(n)
    for seed in range(reps):
        samples = [_partition_stats(p, ["x", "s"], i, ["x", "s"], 5, None, m, seed)[1]
                   for i, p in enumerate(parts)]
        sample = smallest_keys(samples, m)["x"].to_numpy().astype(int)
        assert len(sample) == m and len(set(sample)) == m
        hits[sample] += 1
    p = m / n
    assert np.all(np.abs(hits / reps - p) < 5 * np.sqrt(p * (1 - p) / reps))
    # the same through dask: the sample in the order of the data, exact statistics
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0],
                          verify_meta=False)
    with dask.config.set(scheduler="sync"):
        stats = partition_statistics(DaskRows.check(ddf, None, None), ["x", "s"], cap=5,
                                     rule=None, sample_rows=m, seed=0)
    assert np.all(np.diff(stats.sample["x"].to_numpy()) > 0)
    assert stats.n_rows == n and stats.lo["x"] == 0 and stats.hi["x"] == n - 1
    assert "x" in stats.many and len(stats.values["x"]) == 6
    assert sorted(stats.values["s"]) == ["a", "b"]


def test_key_bound_keeps_the_same_sample():
    """The partitions send only keys below the bound; the sample is the same rows."""
    n, m = 3000, 20
    df = pd.DataFrame({"x": np.arange(n, dtype=float), "s": ["a", "b"] * (n // 2)})
    parts = [df.iloc[:700], df.iloc[700:2500], df.iloc[2500:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0],
                          verify_meta=False)
    assert key_bound(n, m) < 0.05
    for seed in range(5):
        with dask.config.set(scheduler="sync"):
            bounded = partition_statistics(DaskRows.check(ddf, None, None), ["x", "s"], cap=5,
                                           rule=None, sample_rows=m, seed=seed)
        full = smallest_keys([_partition_stats(p, ["x", "s"], i, ["x", "s"], 5, None, m,
                                               seed)[1] for i, p in enumerate(parts)], m)
        np.testing.assert_array_equal(bounded.sample["x"], full["x"])


# ------------------------------------------------------------------ refusals
def test_unfitted_estimator_refused(data):
    DX, Dy = data[3], data[4]
    with pytest.raises(NotFittedError, match="FrozenEstimator"):
        FairnessVerifier(LogisticRegression(), "sex").fit(DX, Dy)


def test_unknown_sensitive_column(data):
    X, y, _, DX, Dy, _ = data
    with pytest.raises(ValueError, match="'gender'.*lacks|lacks.*'gender'"):
        FairnessVerifier(FrozenEstimator(_linear(X, y)), "gender").fit(DX, Dy)


def test_bad_inputs_refused(data):
    X, y, w, DX, Dy, Dw = data
    model = FrozenEstimator(_linear(X, y))
    with pytest.raises(TypeError, match="dask Series"):
        FairnessVerifier(model, "sex").fit(DX, y)
    with pytest.raises(ValueError, match="in the constructor"):
        FairnessVerifier(model).fit(DX, Dy, sensitive_features=X["sex"])
    with pytest.raises(ValueError, match="BayesNet"):
        net = BayesNet.independent([[0.5, 0.5]], names=["sex"], state_names=[["F", "M"]])
        FairnessVerifier(model, "sex", network=net).fit(DX, Dy)
    with pytest.raises(TypeError, match="sampling path does not take a dask X"):
        hgb = HistGradientBoostingClassifier(max_iter=5).fit(X[["x1", "x2", "k"]], y)
        FairnessVerifier(FrozenEstimator(hgb), "sex").fit(DX, Dy)
    with pytest.raises(ValueError, match="not in the estimator's classes"):
        FairnessVerifier(model, "sex").fit(DX, Dy.map(lambda v: f"c{v}", meta=("label", str)))
    with pytest.raises(ValueError, match="negative"):
        FairnessVerifier(model, "sex").fit(DX, Dy, sample_weight=Dw - 1.0)


def test_missing_values_refused(data):
    X, y, _, DX, Dy, _ = data
    holed = DX.assign(x2=DX["x2"].where(DX["x2"] < 3.0))
    with pytest.raises(ValueError, match=r"missing values \(NaN\).*'x2'"):
        FairnessVerifier(FrozenEstimator(_linear(X, y)), "sex").fit(holed, Dy)


def test_client_size_refused_before_the_codes(data):
    X, y, _, DX, Dy, _ = data
    ver = FairnessVerifier(FrozenEstimator(_linear(X, y)), "sex", n_bins=10, multiplier=50,
                           n_draws=0, max_table_size=100)
    with pytest.raises(TableTooLargeError, match="max_table_size"):
        ver.fit(DX, Dy)


@pytest.mark.filterwarnings("error::skfairverify.verification.LowAgreementWarning")
def test_low_agreement_warns_as_pandas(data):
    X, y, _, DX, Dy, _ = data
    ver = FairnessVerifier(FrozenEstimator(_linear(X, y)), "sex", n_bins=2, multiplier=1,
                           n_draws=0)
    with pytest.raises(LowAgreementWarning, match="agrees on only"):
        ver.fit(DX, Dy)


def test_the_client_receives_the_distinct_rows_and_their_counts(client, monkeypatch):
    """The data repeated 5 times: the workers reduce it to the distinct (codes, decision,
    label) rows of one copy, their counts multiples of 5, and the metrics are pandas's on
    the repeated rows (counts summed by dask, not rows gathered)."""
    from skfairverify.verification import _dask

    X, y, _ = _data(n=600, seed=3)
    model = _linear(X, y)
    Xr = pd.concat([X] * 5, ignore_index=True)
    yr = np.tile(y, 5)
    df = Xr.assign(label=yr)
    ddf = dd.from_pandas(df, npartitions=4)
    received = []
    original = _dask.gather_codes

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        received.append(out)
        return out

    monkeypatch.setattr(_dask, "gather_codes", spy)
    params = {"sensitive_features": "sex", "n_bins": 10, "multiplier": 100, "n_draws": 0,
              "random_state": 0}
    d = FairnessVerifier(FrozenEstimator(model), **params).fit(ddf.drop(columns="label"),
                                                              ddf["label"])
    p = FairnessVerifier(FrozenEstimator(model), **params).fit(Xr, yr)
    got = received[-1]
    table = np.column_stack([got.codes, got.reference, got.y_pos])
    assert len(np.unique(table, axis=0)) == len(table)  # distinct rows only
    assert len(table) <= len(X)  # at most one copy's rows
    assert np.all(got.weight % 5 == 0)  # every distinct row of a copy, counted 5 times
    assert got.weight.sum() == len(Xr)
    assert d.metrics_ == pytest.approx(p.metrics_, abs=1e-12)
    pd.testing.assert_frame_equal(d.groups_, p.groups_, check_exact=False, rtol=1e-12)
    assert d.agreement_ == pytest.approx(p.agreement_, abs=1e-12)
