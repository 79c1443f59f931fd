"""Rows at scale (issue 13): compact state codes, chunked encoding, scores and supports.

Every chunked result is compared with the unchunked computation (a chunk forced small),
the compact codes with an independent mapping of every value to its state, the group
supports with ``np.unique`` over the rows, and the consumers of the codes (structure
search, parameters, posterior draws) on compact codes with the same on int64 codes.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.s3p import TableTooLargeError
from skfairverify.verification import _learning, _network, _structure, _variables
from skfairverify.verification._checks import check_frame
from skfairverify.verification._learning import group_support, groups_present
from skfairverify.verification._network import learn_network
from skfairverify.verification._parameters import estimate_cpts, family_counts
from skfairverify.verification._posterior import posterior_cpts
from skfairverify.verification._variables import (
    Encoding,
    Variable,
    check_codes_size,
    code_dtype,
    row_chunks,
)


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["a", "b", "c"], n, p=[0.7, 0.2, 0.1])
    X = pd.DataFrame({
        "sex": pd.Categorical(sex),
        "race": race,  # object column
        "age": rng.normal(40 + 3 * (sex == "M"), 10, n),
        "hours": rng.integers(0, 4, n),  # few values: one state per value
        "job": pd.Categorical(rng.choice(["x", "y", "z", "w"], n),
                              categories=["w", "x", "y", "z", "unused"]),
        "gain": rng.exponential(1.0, n),
    })
    X.loc[X.index[::7], "job"] = "x"
    score = 0.05 * (X["age"] - 40) + 0.3 * X["hours"] + (X["job"] == "y") - 0.5
    y = (score + rng.normal(0, 1, n) > 0).astype(int)
    return X, y


def _model(X, y):
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    pipe = make_pipeline(
        make_column_transformer(
            (StandardScaler(), make_column_selector(dtype_include="number")),
            (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")),
        ),
        LogisticRegression(max_iter=1000),
    )
    return FrozenEstimator(pipe.fit(X, y))


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    ver = FairnessVerifier(_model(X, y), ["sex", "race"], n_bins=10, multiplier=100,
                           n_draws=0, random_state=0).fit(X, y)
    return ver, X, y


@pytest.fixture(scope="module")
def encoding(fitted, rebuilt):
    """The fitted verifier's encoding of the rows, rebuilt (conftest's ``rebuild``)."""
    ver, X, y = fitted
    return rebuilt(ver, X, y).encoding


def _reference_codes(encoding, X):
    """The state of every value, row by row, by an independent rule per kind."""
    out = np.empty((len(X), len(encoding.variables)), dtype=np.int64)
    for k, v in enumerate(encoding.variables):
        col = X[v.name].to_numpy(dtype=object)
        if v.kind == "binned":
            edges = v.edges
            # bin j holds edges[j] <= x < edges[j + 1]; the outer bins are open
            out[:, k] = np.clip(np.searchsorted(edges, col.astype(float), side="right") - 1,
                                0, len(edges) - 2)
        elif v.kind == "values" and not v.sensitive:
            out[:, k] = [list(v.values).index(float(x)) for x in col]
        else:
            out[:, k] = [[str(s) for s in v.states].index(str(x)) for x in col]
    return out


def test_codes_are_compact_and_equal_to_an_independent_mapping(fitted, encoding):
    ver, X, _ = fitted
    enc = encoding
    codes = enc.codes(X)
    assert codes.dtype == np.uint8
    assert {v.kind for v in enc.variables} >= {"binned", "values", "categories"}
    np.testing.assert_array_equal(codes.astype(np.int64), _reference_codes(enc, X))


def test_codes_in_small_chunks_equal_one_chunk(fitted, encoding, monkeypatch):
    ver, X, _ = fitted
    whole = encoding.codes(X)
    monkeypatch.setattr(_variables, "CHUNK_ROWS", 97)
    assert len(row_chunks(len(X))) == -(-len(X) // 97)
    chunked = encoding.codes(X)
    np.testing.assert_array_equal(chunked, whole)
    # a chunk of rows gets the codes of those rows (a pure function of the chunk)
    np.testing.assert_array_equal(encoding.codes(X.iloc[100:250]), whole[100:250])
    np.testing.assert_array_equal(encoding.codes(X, only=[2, 0]), whole[:, [2, 0]])


def test_scores_equal_the_sums_of_the_contribution_matrix(fitted, encoding, monkeypatch):
    ver, X, _ = fitted
    enc = encoding
    codes = enc.codes(X)
    matrix = enc.contributions(codes)
    monkeypatch.setattr(_variables, "CHUNK_ROWS", 11)
    np.testing.assert_allclose(enc.scores(codes), matrix.sum(axis=1), rtol=0, atol=1e-12)
    for mult in (1, 7, 1000):
        integer = [np.rint(mult * v.contribution).astype(np.int64) for v in enc.variables]
        got = enc.scores(codes, integer)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(
            got, np.rint(mult * matrix).astype(np.int64).sum(axis=1))


def test_scores_refuses_a_wrong_number_of_tables(fitted, encoding):
    ver, X, _ = fitted
    with pytest.raises(ValueError, match="one weight table per column"):
        encoding.scores(encoding.codes(X), [np.zeros(2)])


def test_code_dtype_follows_the_largest_cardinality():
    assert code_dtype([2, 256]) == np.uint8
    assert code_dtype([2, 257]) == np.uint16
    assert code_dtype([70_000]) == np.uint32
    states = list(range(300))
    enc = Encoding([Variable("x", "categories", states, np.zeros(300))])
    codes = enc.codes(pd.DataFrame({"x": [0, 299, 256, 5]}))
    assert codes.dtype == np.uint16
    assert codes[:, 0].tolist() == [0, 299, 256, 5]


def test_codes_size_is_checked_before_allocation(fitted, encoding):
    ver, X, _ = fitted
    enc = encoding
    n_vars = len(enc.variables)
    assert check_codes_size(len(X), enc.cardinalities) == len(X) * n_vars
    with pytest.raises(TableTooLargeError, match=rf"{len(X):,} rows x {n_vars} variables"):
        enc.codes(X, max_bytes=len(X) * n_vars - 1)
    with pytest.raises(TableTooLargeError, match="Verify a random sample of the rows"):
        check_codes_size(10**12, [2, 3])


def test_categorical_columns_match_as_their_values():
    """The categories fast path equals matching the values as objects."""
    from skfairverify.utils._categories import match_categories

    values = [1, 2, np.nan, 2, 1, 5]
    col = pd.Series(pd.Categorical(values, categories=[1, 2, 5, 7]))
    states = [2.0, 1, np.nan, 5]
    got = _variables._match_categorical(col, states, "c")
    expected = match_categories(np.array(values, dtype=object), states, name="c")
    np.testing.assert_array_equal(got, expected)
    assert got.tolist() == [1, 0, 2, 0, 1, 3]
    # an unused declared category that prints like a state of another type is not read
    col = pd.Series(pd.Categorical(["a", "b"], categories=["a", "b", "1"]))
    assert _variables._match_categorical(col, ["a", "b", 1], "c").tolist() == [0, 1]


def test_unseen_category_is_refused_in_any_chunk(fitted, encoding, monkeypatch):
    ver, X, _ = fitted
    bad = X.copy()
    bad["race"] = bad["race"].astype(object)
    bad.loc[bad.index[-1], "race"] = "new"
    monkeypatch.setattr(_variables, "CHUNK_ROWS", 100)
    with pytest.raises(ValueError, match=r"'race' has values \['new'\]"):
        encoding.codes(bad)


@pytest.mark.parametrize("weighted", [False, True])
def test_group_support_equals_unique_over_the_rows(weighted, monkeypatch):
    rng = np.random.default_rng(1)
    sens = np.column_stack([rng.integers(0, 3, 500), rng.choice([0, 4], 500)]).astype(np.uint8)
    weight = rng.uniform(0.1, 2.0, 500) if weighted else None
    groups, inverse, counts = np.unique(sens.astype(np.int64), axis=0, return_inverse=True,
                                        return_counts=True)
    expected = counts if weight is None else np.bincount(inverse.ravel(), weights=weight)
    monkeypatch.setattr(_variables, "CHUNK_ROWS", 37)
    got_groups, got_support = group_support(sens, weight)
    assert got_groups.dtype == np.int64
    np.testing.assert_array_equal(got_groups, groups)
    np.testing.assert_allclose(got_support, expected, rtol=1e-12)
    # a sparse table of groups (beyond MAX_GROUP_TABLE and the rows): sorted instead
    monkeypatch.setattr(_learning, "MAX_GROUP_TABLE", 1)
    wide = sens.astype(np.int64) * 1000
    got_groups, got_support = group_support(wide, weight)
    np.testing.assert_array_equal(got_groups, groups * 1000)
    np.testing.assert_allclose(got_support, expected, rtol=1e-12)


def test_groups_present_equals_membership_of_the_rows():
    group_codes = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    sens = np.array([[1, 1], [0, 0], [1, 1]], dtype=np.uint8)
    assert groups_present(group_codes, sens).tolist() == [True, False, False, True]


def test_compact_codes_give_the_same_networks_and_counts():
    """Structure search, BDeu tables, other priors and posterior draws on uint8 codes."""
    rng = np.random.default_rng(2)
    n = 4000
    a = rng.integers(0, 2, n)
    x = (a + rng.integers(0, 40, n)) % 40
    z = (x // 4 + rng.integers(0, 3, n)) % 12
    wide = np.column_stack([a, x, z]).astype(np.int64)
    compact = wide.astype(np.uint8)
    names, cards = ["a", "x", "z"], [2, 40, 12]
    w = rng.uniform(0.5, 1.5, n)
    nets = [learn_network(c, names, cards, ["a"], coarsenable=[False, True, True],
                          max_indegree=1, equivalent_sample_size=1.0, sample_weight=w)
            for c in (wide, compact)]
    assert nets[0].parents == nets[1].parents
    for t0, t1 in zip(nets[0].cpts, nets[1].cpts):
        np.testing.assert_array_equal(t0, t1)
    for v, pa in enumerate(nets[0].parents):
        np.testing.assert_array_equal(family_counts(compact, cards, v, pa, w),
                                      family_counts(wide, cards, v, pa, w))
    for prior in ("pooled", "bdeu"):
        got = estimate_cpts(compact, cards, nets[0].parents, [0], sample_weight=w,
                            prior=prior)
        ref = estimate_cpts(wide, cards, nets[0].parents, [0], sample_weight=w,
                            prior=prior)
        for t0, t1 in zip(got, ref):
            np.testing.assert_array_equal(t0, t1)
    draws = [posterior_cpts(nets[0], c, sample_weight=w, equivalent_sample_size=1.0,
                            n_draws=5, random_state=3) for c in (wide, compact)]
    for d0, d1 in zip(*draws):
        np.testing.assert_array_equal(d0, d1)


def test_fit_metrics_identical_with_small_chunks(monkeypatch):
    """The whole fit (bins, codes, agreement, supports, networks) in chunks of 50 rows."""
    X, y = _data(n=2000, seed=3)
    model = _model(X, y)
    params = dict(n_bins="auto", max_bins=20, multiplier="auto", max_multiplier=100,
                  random_state=0)

    def fit():
        return FairnessVerifier(model, ["sex", "race"], n_draws=40, **params).fit(X, y)

    whole = fit()
    for module in (_variables, _structure, _network):
        monkeypatch.setattr(module, "CHUNK_ROWS", 50)
    chunked = fit()
    assert chunked.n_bins_ == whole.n_bins_ and chunked.multiplier_ == whole.multiplier_
    assert chunked.agreement_ == whole.agreement_
    assert chunked.metrics_ == whole.metrics_
    pd.testing.assert_frame_equal(chunked.groups_, whole.groups_)


def test_fit_shares_the_data_of_X_and_leaves_it_unchanged():
    """The verifier's frame is a shallow copy: no second copy of the rows."""
    X, y = _data(n=500, seed=4)
    before = X.copy()
    ver = FairnessVerifier(_model(X, y), ["sex", "race"], n_bins=5, multiplier=1000,
                           n_draws=0)
    frame, _ = check_frame(X, fitting=True)
    assert np.shares_memory(frame["age"].to_numpy(), X["age"].to_numpy())
    model = _model(X.drop(columns="sex"), y)
    FairnessVerifier(model, n_bins=5, multiplier=1000, n_draws=0).fit(
        X.drop(columns="sex"), y, sensitive_features=X["sex"].rename("gender"))
    ver.fit(X, y)
    pd.testing.assert_frame_equal(X, before)


def test_sensitive_checks_read_the_distinct_values():
    from skfairverify.verification._sensitive import check_sensitive_column, distinct_values

    col = pd.Series(pd.Categorical(["b", "a", "b"], categories=["a", "b", "c"]))
    assert distinct_values(col).tolist() == ["a", "b"]  # present categories only
    obj = pd.Series(["x", "y", "x", "y"], dtype=object)
    assert sorted(distinct_values(obj)) == ["x", "y"]
    with pytest.raises(ValueError, match="print alike"):
        check_sensitive_column(pd.Series([1, "1", 1, 0], dtype=object), "s")
    with pytest.raises(ValueError, match="print alike"):
        check_sensitive_column(pd.Series(pd.Categorical([1, "1", 0])), "s")
    with pytest.raises(ValueError, match="single group"):
        check_sensitive_column(pd.Series(pd.Categorical(["a", "a"], categories=["a", "b"])),
                               "s")
    check_sensitive_column(col, "s")  # two groups, unambiguous


def test_bins_and_multiplier_search_runs_on_a_sample(monkeypatch, rebuilt):
    """Above sample_rows rows the candidates are scored on a sample; the bins of the
    chosen number are then fitted on all rows, and the agreement is of all rows."""
    X, y = _data(n=1500, seed=5)
    model = _model(X, y)
    seen = []
    original = Encoding.from_data.__func__

    def spy(cls, frame, *args, **kwargs):
        seen.append(len(frame))
        return original(cls, frame, *args, **kwargs)

    monkeypatch.setattr(Encoding, "from_data", classmethod(spy))
    ver = FairnessVerifier(model, ["sex", "race"], n_bins="auto", max_bins=20,
                           n_draws=0, sample_rows=400, random_state=0).fit(X, y)
    assert seen[:-1] and set(seen[:-1]) == {400} and seen[-1] == len(X)
    monkeypatch.undo()
    parts = rebuilt(ver, X, y, evaluate=False)
    reference = parts.path.unit_rule.decision_function(X) > 0
    enc = parts.encoding
    weights = [np.rint(ver.multiplier_ * v.contribution).astype(np.int64)
               for v in enc.variables]
    decided = enc.scores(enc.codes(X), weights) >= ver.threshold_
    assert ver.agreement_ == pytest.approx(np.mean(decided == reference), abs=1e-12)
