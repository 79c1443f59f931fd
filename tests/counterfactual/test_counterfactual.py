"""Tests of skfairverify.counterfactual (CFlips, nDCCF, generators, audit, scorers).

Expected values come from hand computation of the paper's Eqs. 3 and 7-9, from an
independent loop re-implementation of those definitions, from brute-force
nearest-neighbour search, and from a planted-proxy dataset whose bias is known by
construction; never from the code under test.
"""

from __future__ import annotations

import math
import sys
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skfairverify import CounterfactualFairness, counterfactual_flips, ndccf
from skfairverify.counterfactual import (
    GENERATORS,
    KDTreeCounterfactuals,
    LinearCounterfactuals,
    make_generator,
    privileged_group,
)
from skfairverify.metrics import make_cflips_scorer, make_ndccf_scorer


# --------------------------------------------------------------------------- data
def planted(n=1200, seed=0):
    """Sex, a proxy of sex, a skill, a categorical and an integer column.

    ``y_biased`` favors men (through sex itself, which the model cannot see but the
    proxy reveals); ``y_fair`` depends on skill only.
    """
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    m = sex == "M"
    X = pd.DataFrame({
        "sex": sex,
        "proxy": m + rng.normal(0, 0.25, n),
        "skill": rng.normal(size=n),
        "city": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        "years": rng.integers(0, 20, n),
    })
    y_biased = (X.skill + 3 * m + rng.normal(0, 0.3, n) > 1.5).astype(int)
    y_fair = (X.skill + rng.normal(0, 0.3, n) > 0.3).astype(int)
    return X, y_biased, y_fair


def unaware_model(columns):
    """Logistic regression on ``columns`` only (the sensitive column is dropped)."""
    num = [c for c in columns if c != "city"]
    parts = [("num", StandardScaler(), num)]
    if "city" in columns:
        parts.append(("cat", OneHotEncoder(), ["city"]))
    return make_pipeline(ColumnTransformer(parts), LogisticRegression())


PROXY_COLS = ["proxy", "skill", "city", "years"]
# a cheap sensitive classifier for the scorer tests (the default one is tested elsewhere)
FAST_CLF = make_pipeline(
    ColumnTransformer([("n", StandardScaler(), ["proxy", "skill", "years"])]),
    LogisticRegression())
FAIR_COLS = ["skill", "city", "years"]


@pytest.fixture(scope="module")
def data():
    X, yb, yf = planted(1000, seed=0)
    Xt, _, _ = planted(500, seed=1)
    return X, yb, yf, Xt


# --------------------------------------------------------------------------- metrics
def reference_metrics(s_orig, s_cf, k):
    """Loop re-implementation of Eqs. 3, 7, 8, 9 (positions over available CFs)."""
    cfl, nd = [], []
    for s, row in zip(s_orig, s_cf):
        avail = [v for v in row if v is not None and not (isinstance(v, float) and np.isnan(v))]
        top = avail[:k]
        if not top:
            cfl.append(np.nan)
            nd.append(np.nan)
            continue
        flips = [1 if v != s else 0 for v in top]
        cfl.append(sum(flips) / len(top))
        dccf = sum((2 ** (1 - f) - 1) / math.log2(p + 1) for p, f in enumerate(flips, start=1))
        idccf = sum((2 ** 1 - 1) / math.log2(p + 1) for p in range(1, len(top) + 1))
        nd.append(dccf / idccf)
    return np.array(cfl), np.array(nd)


def test_hand_computed_values():
    s_cf = np.array([[1, 0, 1, 0]])
    # CFlips@k: flips 1,0,1,0 -> 1, 1/2, 2/3, 2/4
    for k, expected in [(1, 1.0), (2, 0.5), (3, 2 / 3), (4, 0.5)]:
        assert counterfactual_flips([0], s_cf, k=k)[0] == pytest.approx(expected)
    # nDCCF@2 = (0 + 1/log2(3)) / (1 + 1/log2(3))
    l3 = math.log2(3)
    assert ndccf([0], s_cf, k=2)[0] == pytest.approx((1 / l3) / (1 + 1 / l3))
    # nDCCF@4 = (1/log2 3 + 1/log2 5) / (1 + 1/log2 3 + 1/2 + 1/log2 5)
    num = 1 / l3 + 1 / math.log2(5)
    den = 1 + 1 / l3 + 0.5 + 1 / math.log2(5)
    assert ndccf([0], s_cf)[0] == pytest.approx(num / den)


def test_extremes_and_k_none():
    s_cf = np.array([["F"] * 5, ["M"] * 5], dtype=object)
    assert counterfactual_flips(["F", "F"], s_cf).tolist() == [0.0, 1.0]
    assert ndccf(["F", "F"], s_cf).tolist() == [1.0, 0.0]
    assert np.array_equal(ndccf(["F", "M"], s_cf), ndccf(["F", "M"], s_cf, k=5))
    # k beyond K uses the K available
    assert np.array_equal(counterfactual_flips(["F", "M"], s_cf, k=50),
                          counterfactual_flips(["F", "M"], s_cf))


def test_missing_counterfactuals_nan_and_none():
    s_cf = np.array([[1.0, np.nan, np.nan], [np.nan] * 3, [0.0, 1.0, 1.0]])
    cf = counterfactual_flips([0, 0, 1], s_cf, k=3)
    assert cf[0] == 1.0 and np.isnan(cf[1]) and cf[2] == pytest.approx(1 / 3)
    assert np.isnan(ndccf([0, 0, 1], s_cf)[1])
    # object array with None, and a gap in the middle: positions count available CFs only
    obj = np.array([["M", None, "F"]], dtype=object)
    assert counterfactual_flips(["F"], obj, k=2)[0] == pytest.approx(0.5)
    l3 = math.log2(3)
    assert ndccf(["F"], obj, k=2)[0] == pytest.approx((1 / l3) / (1 + 1 / l3))
    df = pd.DataFrame(obj)
    assert counterfactual_flips(pd.Series(["F"]), df, k=2)[0] == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(5))
def test_against_loop_reimplementation(seed):
    rng = np.random.default_rng(seed)
    n, K = 40, 12
    s = rng.choice(["a", "b"], n)
    s_cf = rng.choice(["a", "b"], (n, K)).astype(object)
    s_cf[rng.random((n, K)) < 0.25] = None
    s_cf[0, :] = None  # a row without counterfactuals
    for k in (1, 3, 7, K):
        ref_c, ref_n = reference_metrics(s, s_cf, k)
        np.testing.assert_allclose(counterfactual_flips(s, s_cf, k=k), ref_c, equal_nan=True)
        np.testing.assert_allclose(ndccf(s, s_cf, k=k), ref_n, equal_nan=True)


def test_metric_bad_input():
    with pytest.raises(ValueError, match="'k' parameter of counterfactual_flips"):
        counterfactual_flips([0], [[1]], k=0)
    with pytest.raises(ValueError, match="'k' parameter of ndccf"):
        ndccf([0], [[1]], k=-2)
    with pytest.raises(TypeError, match="'k' parameter of ndccf"):
        ndccf([0], [[1]], k=1.5)
    with pytest.raises(ValueError, match="rows"):
        counterfactual_flips([0, 1], [[1]])
    with pytest.raises(ValueError, match="missing"):
        counterfactual_flips([None], [[1]])


# --------------------------------------------------------------------------- generators
def documented_distance(x: pd.Series, c: pd.Series, X: pd.DataFrame, num, cat):
    d = 0.0
    for col in num:
        rng = X[col].max() - X[col].min()
        d += abs(float(c[col]) - float(x[col])) / (rng if rng > 0 else 1.0)
    for col in cat:
        d += float(c[col] != x[col])
    return d


def test_kdtree_matches_brute_force(data):
    X, yb, _, Xt = data
    X = X.iloc[:300].assign(city=X["city"].iloc[:300].astype(str))  # object dtype
    tree = DecisionTreeClassifier(max_depth=4, random_state=0)
    model = make_pipeline(
        ColumnTransformer([("n", "passthrough", ["proxy", "skill", "years"]),
                           ("c", OneHotEncoder(), ["city"])]), tree).fit(X, yb.iloc[:300])
    gen = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, model)
    queries = X[model.predict(X) == 0].iloc[:8]
    cs = gen.generate(queries, k=4)
    accepted = X[model.predict(X) == 1].drop_duplicates(["proxy", "skill", "years", "city"])
    for label, q in queries.iterrows():
        brute = sorted(documented_distance(q, c, X, ["proxy", "skill", "years"], ["city"])
                       for _, c in accepted.iterrows())[:4]
        got = cs.distances.loc[label].to_numpy()
        np.testing.assert_allclose(got, brute, rtol=1e-9, atol=1e-12)
        rows = cs.counterfactuals.loc[label]
        assert list(rows.index) == [1, 2, 3, 4]
        assert (rows["sex"] == q["sex"]).all()  # immutable column kept
        for rank, c in rows.iterrows():
            assert documented_distance(q, c, X, ["proxy", "skill", "years"], ["city"]) == \
                pytest.approx(cs.distances.loc[(label, rank)])
    assert (model.predict(cs.counterfactuals) == 1).all()


def test_kdtree_rechecks_models_reading_immutable_column():
    # the model accepts only rows with g == "x" and a >= 5: counterfactuals of a "y"
    # row keep g == "y" and so can never be accepted -> none is returned
    X = pd.DataFrame({"a": np.arange(20.0), "g": ["x", "y"] * 10})
    y = ((X.a >= 5) & (X.g == "x")).astype(int)
    model = make_pipeline(ColumnTransformer([("n", "passthrough", ["a"]),
                                             ("c", OneHotEncoder(), ["g"])]),
                          DecisionTreeClassifier(random_state=0)).fit(X, y)
    gen = KDTreeCounterfactuals(immutable_features=["g"]).fit(X, model)
    cs = gen.generate(X.iloc[[0, 1]], k=3)
    assert cs.n_found().tolist() == [3, 0]
    assert (cs.counterfactuals["g"] == "x").all()
    assert (model.predict(cs.counterfactuals) == 1).all()


def test_linear_generator_closed_form(data):
    X, yb, _, _ = data
    model = unaware_model(PROXY_COLS).fit(X, yb)
    gen = LinearCounterfactuals(immutable_features=["sex"]).fit(X, model)
    refused = X[model.predict(X) == 0].iloc[:30]
    cs = gen.generate(refused, k=6)
    cfs = cs.counterfactuals
    assert len(cfs) > 0 and (model.predict(cfs) == 1).all()
    # fewer than k only when not enough plans can reach the boundary within the ranges
    assert (cs.n_found() >= 1).all() and (cs.n_found() == 6).mean() > 0.8
    assert cfs["years"].dtype == X["years"].dtype
    assert cfs["years"].between(X.years.min(), X.years.max()).all()
    assert cfs["skill"].between(X.skill.min() - 1e-9, X.skill.max() + 1e-9).all()
    assert cfs["city"].dtype == X["city"].dtype
    for label in refused.index[:10]:
        q = refused.loc[label]
        d = cs.distances.loc[label].to_numpy()
        assert np.all(np.diff(d) >= -1e-12)  # ranked by distance
        for rank, c in cfs.loc[label].iterrows():
            assert documented_distance(q, c, X, ["proxy", "skill", "years"], ["city"]) == \
                pytest.approx(cs.distances.loc[(label, rank)])
            assert c["sex"] == q["sex"]
    # a single-feature plan on a continuous column lands on the boundary (d = margin)
    dec = model.decision_function(cfs)
    changed = (cfs[["proxy", "skill"]].to_numpy() != refused.loc[
        cfs.index.get_level_values("row"), ["proxy", "skill"]].to_numpy())
    only_cont = (changed.sum(axis=1) == 1) & (
        cfs["years"].to_numpy() == refused.loc[cfs.index.get_level_values("row"),
                                               "years"].to_numpy()) & (
        cfs["city"].to_numpy() == refused.loc[cfs.index.get_level_values("row"),
                                              "city"].to_numpy())
    assert only_cont.any()
    np.testing.assert_allclose(dec[only_cont], gen.margin, atol=1e-8)


def test_linear_generator_rejects_nonlinear(data):
    X, yb, _, _ = data
    tree = make_pipeline(ColumnTransformer([("n", "passthrough", ["proxy", "skill"])]),
                         DecisionTreeClassifier(max_depth=2)).fit(X, yb)
    with pytest.raises(TypeError, match="DecisionTreeClassifier"):
        LinearCounterfactuals().fit(X, tree)


def test_prediction_reranking(data):
    X, yb, _, _ = data
    model = unaware_model(PROXY_COLS).fit(X, yb)
    q = X[model.predict(X) == 0].iloc[:10]
    by_dist = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, model).generate(q, 5)
    by_pred = KDTreeCounterfactuals(immutable_features=["sex"], ranking="prediction").fit(
        X, model).generate(q, 5)
    # same set, re-ordered by |E[f(x)] - E[f(c)]| ascending
    for label in q.index:
        a = by_dist.counterfactuals.loc[label].sort_values("skill").to_numpy()
        b = by_pred.counterfactuals.loc[label].sort_values("skill").to_numpy()
        assert (a == b).all()
        px = model.predict_proba(q.loc[[label]])[0, 1]
        pc = model.predict_proba(by_pred.counterfactuals.loc[label])[:, 1]
        assert np.all(np.diff(np.abs(px - pc)) >= -1e-12)


def test_unknown_generator_and_bad_generator_params(data):
    X, yb, _, _ = data
    with pytest.raises(ValueError, match="valid names are") as exc:
        make_generator("genetic")
    for name in GENERATORS:
        assert name in str(exc.value)
    with pytest.raises(ValueError, match="'generator' parameter") as exc:
        CounterfactualFairness(unaware_model(FAIR_COLS), "sex", generator="nope").fit(X, yb)
    for name in GENERATORS:
        assert name in str(exc.value)
    with pytest.raises(TypeError, match="generator must be"):
        make_generator(42)
    model = unaware_model(FAIR_COLS).fit(X, yb)
    with pytest.raises(ValueError, match="ranking"):
        KDTreeCounterfactuals(ranking="best").fit(X, model)
    with pytest.raises(ValueError, match="'k' parameter"):
        KDTreeCounterfactuals().fit(X, model).generate(X.iloc[:2], 0)
    # missing values are data (issue 27): a NaN query is compared as the training median
    gen = KDTreeCounterfactuals().fit(X, model)
    cs = gen.generate(X.iloc[:2].assign(skill=np.nan), 2)
    assert cs.n_found().tolist() == [2, 2]


def test_dice_missing_message(monkeypatch, data):
    X, yb, _, _ = data
    monkeypatch.setitem(sys.modules, "dice_ml", None)  # makes `import dice_ml` fail
    model = unaware_model(FAIR_COLS).fit(X, yb)
    for name in ("dice-genetic", "dice-random", "dice-kdtree"):
        with pytest.raises(ImportError, match=r"pip install 'skfairverify\[dice\]'"):
            make_generator(name).fit(X, model)


# --------------------------------------------------------------------------- audit
@pytest.mark.parametrize("generator", ["kdtree", "linear"])
def test_planted_proxy_gap(data, generator):
    X, yb, yf, Xt = data
    biased = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", generator=generator,
                                    k=10, random_state=0).fit(X, yb)
    fair = CounterfactualFairness(unaware_model(FAIR_COLS), "sex", generator=generator,
                                  k=10, random_state=0).fit(X, yf)
    rb, rf = biased.evaluate(Xt), fair.evaluate(Xt)
    assert biased.privileged_ == "M"
    assert rb.cflips["delta"] > 0.15 and rb.ndccf["delta"] > 0.15
    assert abs(rf.cflips["delta"]) < 0.06 and abs(rf.ndccf["delta"]) < 0.06
    assert rb.cflips["delta"] > 4 * abs(rf.cflips["delta"])


def test_evaluate_recomputed_from_parts(data):
    X, yb, _, Xt = data
    audit = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", k=6,
                                   random_state=0).fit(X, yb)
    res = audit.evaluate(Xt)
    # recompute X^-, the counterfactuals and the group means by hand
    s = Xt["sex"].to_numpy()
    ns = Xt.drop(columns="sex")
    refused = audit.estimator_.predict(Xt) == 0
    s_hat = np.where(audit.sensitive_classifier_.predict(ns) == 1, audit.privileged_, "F")
    keep = refused & (s_hat == s)
    q = Xt[keep]
    cs = audit.generator_.generate(q, 6)
    pred = audit.sensitive_classifier_.predict(cs.counterfactuals.drop(columns="sex"))
    pred = np.where(pred == 1, "M", "F")
    s_cf = np.full((len(q), 6), None, dtype=object)
    for (label, rank), v in zip(cs.counterfactuals.index, pred):
        s_cf[q.index.get_loc(label), rank - 1] = v
    ref_c, ref_n = reference_metrics(q["sex"].to_numpy(), s_cf, 6)
    for name, g in (("privileged", "M"), ("unprivileged", "F")):
        rows = q["sex"].to_numpy() == g
        assert res.n_refused[name] == rows.sum()
        assert res.cflips[name] == pytest.approx(np.nanmean(ref_c[rows]))
        assert res.ndccf[name] == pytest.approx(np.nanmean(ref_n[rows]))
    assert res.cflips["delta"] == pytest.approx(
        res.cflips["unprivileged"] - res.cflips["privileged"])
    assert res.ndccf["delta"] == pytest.approx(
        res.ndccf["privileged"] - res.ndccf["unprivileged"])
    per_k = res.per_k
    assert list(per_k.index) == list(range(1, 7))
    assert per_k.loc[6, "cflips_unprivileged"] == pytest.approx(res.cflips["unprivileged"])
    ref3, _ = reference_metrics(q["sex"].to_numpy(), s_cf, 3)
    assert per_k.loc[3, "cflips_privileged"] == pytest.approx(
        np.nanmean(ref3[q["sex"].to_numpy() == "M"]))
    assert res.n_refused_all["unprivileged"] == int((refused & (s == "F")).sum())


def test_default_privileged_is_higher_positive_rate(data):
    X, yb, yf, _ = data
    for y in (yb, yf):
        audit = CounterfactualFairness(unaware_model(FAIR_COLS), "sex", k=2).fit(X, y)
        pred = audit.estimator_.predict(X)
        rates = pd.Series(pred).groupby(X["sex"].to_numpy()).mean()
        assert audit.privileged_ == rates.idxmax()


def test_determinism_and_clone(data):
    X, yb, _, Xt = data
    params = dict(k=5, random_state=3, generator="kdtree")
    a = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", **params).fit(X, yb)
    b = clone(a).fit(X, yb)
    ra, rb = a.evaluate(Xt), b.evaluate(Xt)
    assert ra.cflips == rb.cflips and ra.ndccf == rb.ndccf
    pd.testing.assert_frame_equal(ra.per_k, rb.per_k)
    assert clone(a).get_params()["k"] == 5 and not hasattr(clone(a), "estimator_")
    # joblib over chunks gives the same numbers as the sequential run
    a.set_params(n_jobs=2)  # read at evaluate time; the fitted parts are kept
    with joblib.parallel_config(backend="threading"):
        rc = a.evaluate(Xt)
    assert rc.cflips == ra.cflips


def test_frozen_estimator_used_as_is(data):
    X, yb, _, Xt = data
    fitted = unaware_model(PROXY_COLS).fit(X, yb)
    frozen = FrozenEstimator(fitted)
    audit = CounterfactualFairness(frozen, "sex", k=3).fit(X, 1 - yb)  # y ignored
    assert audit.estimator_ is frozen
    np.testing.assert_array_equal(audit.estimator_.predict(Xt), fitted.predict(Xt))


def test_user_sensitive_classifier_and_multivalued(data):
    X, yb, _, Xt = data
    clf = make_pipeline(ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"])]),
                        LogisticRegression())
    audit = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", k=3,
                                   sensitive_classifier=clf).fit(X, yb)
    assert audit.sensitive_classifier_ is not clf
    assert list(audit.sensitive_classifier_.classes_) == [0, 1]
    assert audit.evaluate(Xt).cflips["delta"] > 0.15
    # three values: "M" against the rest
    rng = np.random.default_rng(12345)
    X3 = X.assign(sex=np.where(X.sex == "F", rng.choice(["F", "N"], len(X)), "M"))
    # without privileged=: the stated rule of privileged_group (was refused; issue 27)
    auto = CounterfactualFairness(unaware_model(PROXY_COLS), "sex").fit(X3, yb)
    assert auto.privileged_ == privileged_group(auto.estimator_.predict(X3), X3.sex).label
    assert "min_group_size=30" in auto.privileged_rule_
    a3 = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", k=3,
                                privileged="M").fit(X3, yb)
    Xt3 = Xt.assign(sex=np.where(Xt.sex == "F", "N", "M"))
    assert a3.evaluate(Xt3).cflips["delta"] > 0.15
    with pytest.raises(ValueError, match="not a value"):
        CounterfactualFairness(unaware_model(PROXY_COLS), "sex", privileged="X").fit(X, yb)


def test_group_without_refused_rows_is_reported(data):
    X, yb, _, _ = data
    audit = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", k=3).fit(X, yb)
    pred = audit.estimator_.predict(X)
    only_accepted_men = X[(X.sex == "F") | (pred == 1)]
    with pytest.warns(UserWarning, match="privileged"):
        res = audit.evaluate(only_accepted_men)
    assert res.n_refused["privileged"] == 0
    assert res.empty_groups == ["privileged"]
    assert np.isnan(res.cflips["privileged"]) and np.isnan(res.cflips["delta"])
    assert np.isnan(res.ndccf["delta"])
    assert res.cflips["unprivileged"] > 0  # the other group is still measured


@pytest.mark.parametrize(
    "mutate, params, exc, match",
    [
        (lambda X: X.drop(columns="sex"), {}, ValueError, "'sex' not found"),
        (lambda X: X.assign(sex="F"), {}, ValueError, "single group"),
        (lambda X: X.assign(skill=np.where(np.arange(len(X)) == 3, np.nan, X.skill)), {},
         ValueError, r"NaN.*skill"),
        (lambda X: X, {"k": 0}, ValueError, "'k' parameter"),
        (lambda X: X, {"k": 2.5}, TypeError, "'k' parameter"),
        (lambda X: X, {"generator": "dice"}, ValueError, "'generator' parameter"),
        (lambda X: X, {"cv": 1}, ValueError, "'cv' parameter"),
        (lambda X: X.to_numpy(), {}, TypeError, "DataFrame"),
    ],
)
def test_fit_bad_input(data, mutate, params, exc, match):
    X, yb, _, _ = data
    with pytest.raises(exc, match=match):
        CounterfactualFairness(unaware_model(FAIR_COLS), "sex", **params).fit(mutate(X), yb)


def test_evaluate_bad_input(data):
    X, yb, _, Xt = data
    audit = CounterfactualFairness(unaware_model(FAIR_COLS), "sex", k=2).fit(X, yb)
    with pytest.raises(ValueError, match="'sex' not found"):
        audit.evaluate(Xt.drop(columns="sex"))
    # missing values are data (issue 27); a missing sensitive value has no group
    with pytest.raises(ValueError, match=r"holds values \[nan\] not seen in fit"):
        audit.evaluate(Xt.assign(sex=np.nan))
    with pytest.raises(sklearn.exceptions.NotFittedError):
        CounterfactualFairness(unaware_model(FAIR_COLS), "sex").evaluate(Xt)


def test_proxy_correlations(data):
    X, yb, _, Xt = data
    audit = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", k=5,
                                   random_state=0).fit(X, yb)
    corr = audit.proxy_correlations(Xt)
    assert list(corr.columns) == ["feature", "correlation", "p_value", "n_changed"]
    assert corr["correlation"].is_monotonic_decreasing
    assert corr.iloc[0]["feature"] == "proxy" and corr.iloc[0]["correlation"] > 0.5
    assert "sex" not in set(corr["feature"])
    # categorical perturbations appear as "col=value" (+1 new, -1 old category)
    lin = clone(audit).set_params(generator="linear", k=12).fit(X, yb)
    lin_corr = lin.proxy_correlations(Xt).set_index("feature")
    assert any(f.startswith("city=") for f in lin_corr.index)
    # independent Pearson computation for the proxy
    cs = audit.evaluate(Xt).counterfactuals
    base = Xt.loc[cs.counterfactuals.index.get_level_values("row")].reset_index(drop=True)
    cf = cs.counterfactuals.reset_index(drop=True)
    p = audit.sensitive_classifier_.predict_proba
    delta = p(cf.drop(columns="sex"))[:, 1] - p(base.drop(columns="sex"))[:, 1]
    eps = cf["proxy"].to_numpy() - base["proxy"].to_numpy()
    r = np.corrcoef(eps, delta)[0, 1]
    assert corr.set_index("feature").loc["proxy", "correlation"] == pytest.approx(r)


def test_progress_bar(data, capsys):
    X, yb, _, Xt = data
    CounterfactualFairness(unaware_model(FAIR_COLS), "sex", k=2, verbose=1).fit(
        X, yb).evaluate(Xt)
    assert "counterfactuals" in capsys.readouterr().err


# --------------------------------------------------------------------------- scorers
def test_scorer_ranks_biased_below_fair(data):
    X, yb, yf, Xt = data
    biased = unaware_model(PROXY_COLS).fit(X, yb)
    fair = unaware_model(FAIR_COLS).fit(X, yf)
    for make in (make_cflips_scorer, make_ndccf_scorer):
        scorer = make(sensitive_features="sex", k=5, random_state=0, sensitive_classifier=FAST_CLF)
        sb, sf = scorer(biased, Xt, None), scorer(fair, Xt, None)
        assert sb < -0.15 and sf > -0.08 and sb < sf <= 0


def test_scorer_with_prefit_sensitive_classifier(data):
    X, yb, _, Xt = data
    clf = make_pipeline(ColumnTransformer([("n", "passthrough", ["proxy"])]),
                        LogisticRegression()).fit(X.drop(columns="sex"), X["sex"])
    scorer = make_cflips_scorer(sensitive_features="sex", k=5,
                                sensitive_classifier=FrozenEstimator(clf))
    biased = unaware_model(PROXY_COLS).fit(X, yb)
    assert scorer(biased, Xt, None) < -0.15


def test_scorer_bad_input():
    with pytest.raises(ValueError, match="'k' parameter of make_cflips_scorer"):
        make_cflips_scorer(sensitive_features="sex", k=0)
    with pytest.raises(ValueError, match="'generator' parameter of make_ndccf_scorer"):
        make_ndccf_scorer(sensitive_features="sex", generator="foo")


def test_scorers_in_gridsearch_by_name(data):
    X, yb, _, _ = data
    search = GridSearchCV(
        unaware_model(PROXY_COLS), {"logisticregression__C": [1.0]}, cv=2,
        scoring={"cflips": make_cflips_scorer(sensitive_features="sex", k=4, random_state=0,
                                              sensitive_classifier=FAST_CLF),
                 "ndccf": make_ndccf_scorer(sensitive_features="sex", k=4, random_state=0,
                                            sensitive_classifier=FAST_CLF),
                 "acc": "accuracy"},
        refit="cflips", error_score="raise",
    ).fit(X.iloc[:500], yb.iloc[:500])
    scores = search.cv_results_["mean_test_cflips"]
    assert np.all(np.isfinite(scores)) and np.all(scores <= 0)
    assert np.all(search.cv_results_["mean_test_ndccf"] <= 0)


def test_scorers_in_gridsearch_metadata_routing(data):
    X, yb, _, _ = data
    Xn = X.drop(columns="sex").iloc[:600]
    s = X["sex"].iloc[:600]
    model = unaware_model([c for c in PROXY_COLS])
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_cflips_scorer(k=4, random_state=0, sensitive_classifier=FAST_CLF)
        scorer = scorer.set_score_request(
            sensitive_features=True)
        search = GridSearchCV(model, {"logisticregression__C": [0.01, 1.0]}, cv=2,
                              scoring=scorer, error_score="raise")
        search.fit(Xn, yb.iloc[:600], sensitive_features=s)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores < -0.1)
    # numpy X through the metadata route
    with sklearn.config_context(enable_metadata_routing=True):
        num = Xn[["proxy", "skill", "years"]].to_numpy()
        lr = make_pipeline(StandardScaler(), LogisticRegression())
        scorer = make_ndccf_scorer(k=3, generator="linear", random_state=0,
                                   sensitive_classifier=LogisticRegression())
        scorer.set_score_request(sensitive_features=True)
        search = GridSearchCV(lr, {"logisticregression__C": [1.0]}, cv=2, scoring=scorer,
                              error_score="raise").fit(num, yb.iloc[:600], sensitive_features=s)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


# --------------------------------------------------------------------------- plots
def test_plots(data):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skfairverify.plotting import plot_cflips_at_k, plot_proxy_correlations

    X, yb, _, Xt = data
    audit = CounterfactualFairness(unaware_model(PROXY_COLS), "sex", k=4,
                                   sensitive_classifier=FAST_CLF).fit(X, yb)
    corr = audit.proxy_correlations(Xt)
    ax = plot_proxy_correlations(corr)
    assert len(ax.patches) == len(corr)
    res = audit.evaluate(Xt)
    ax = plot_cflips_at_k(res)
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[0].get_ydata(), res.per_k["cflips_privileged"])
    import matplotlib.pyplot as plt

    plt.close("all")


# --------------------------------------------------------------------------- dice
@pytest.mark.slow
def test_dice_planted_proxy():
    pytest.importorskip("dice_ml")
    from skfairverify.counterfactual import DiceCounterfactuals

    X, yb, _ = planted(400, seed=0)
    Xt, _, _ = planted(400, seed=1)
    model = FrozenEstimator(unaware_model(PROXY_COLS).fit(X, yb))
    refused = Xt[model.predict(Xt) == 0]
    # 3 refused rows per group: dice-ml costs seconds per query on a busy machine.
    # Only the biased model is checked: dice's random method perturbs the proxy at
    # random even when the model ignores it, so a fair model's gap is noisy on so few rows.
    queries = pd.concat([refused[refused.sex == g].iloc[:3] for g in ("F", "M")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = CounterfactualFairness(model, "sex", generator="dice-random", k=3,
                                       sensitive_classifier=FAST_CLF, random_state=0)
        res = audit.fit(X, yb).evaluate(queries)
    assert res.cflips["delta"] > 0.15
    # the genetic method (no seed in dice-ml) returns accepted, ranked counterfactuals
    gen = DiceCounterfactuals("genetic", immutable_features=["sex"]).fit(X, model)
    cs = gen.generate(queries.iloc[:1], 3)
    assert len(cs.counterfactuals) and (model.predict(cs.counterfactuals) == 1).all()
    assert (cs.counterfactuals["sex"].to_numpy() ==
            queries["sex"].iloc[cs.query_positions].to_numpy()).all()
    assert np.all(np.diff(cs.distances.to_numpy()) >= 0)


@pytest.mark.parametrize("table", [True, False])
def test_kdtree_with_a_model_reading_the_immutable_column_matches_brute_force(
        data, table, monkeypatch):
    """The k nearest candidates accepted with the query's immutable value (issue 26).

    With few combinations of immutable values the model judges every candidate once
    per combination (``table``); else rows short of k are searched again with more
    neighbours (rounds). Both against a brute force, and equal to each other.
    """
    import skfairverify.counterfactual._kdtree as kdtree
    if not table:
        monkeypatch.setattr(kdtree, "_TABLE_RATIO", 0)  # every call goes by rounds
    X, yb, _, _ = data
    X = X.iloc[:300]
    num = ["proxy", "skill", "years"]
    # the model reads sex: a candidate accepted as a man may be refused as a woman
    model = make_pipeline(
        ColumnTransformer([("n", "passthrough", num), ("c", OneHotEncoder(), ["sex"])]),
        DecisionTreeClassifier(max_depth=5, random_state=0)).fit(X, yb.iloc[:300])
    gen = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, model)
    queries = X[model.predict(X) == 0].iloc[:40]
    cs = gen.generate(queries, k=6)
    assert (gen._acceptance(queries, 6) is not None) is table  # the path under test
    accepted = X[model.predict(X) == 1].drop_duplicates(num + ["city"])
    short = 0
    for label, q in queries.iterrows():
        composed = accepted.assign(sex=q["sex"])
        ok = composed[model.predict(composed) == 1]
        brute = sorted(documented_distance(q, c, X, num, ["city"])
                       for _, c in ok.iterrows())[:6]
        got = cs.distances.loc[label].to_numpy() if label in cs.distances.index else []
        np.testing.assert_allclose(got, brute, rtol=1e-9, atol=1e-12)
        nearest = sorted(documented_distance(q, c, X, num, ["city"])
                         for _, c in composed.iterrows())[:6]
        short += not np.allclose(nearest, brute)  # a refused one among the 6 nearest
    assert short >= 5  # the check of the composed rows matters here
    assert (model.predict(cs.counterfactuals) == 1).all()
    if table:  # the same set as by rounds, bit for bit
        monkeypatch.setattr(kdtree, "_TABLE_RATIO", 0)
        rounds = gen.generate(queries, k=6)
        pd.testing.assert_frame_equal(cs.counterfactuals, rounds.counterfactuals,
                                      check_exact=True)
        pd.testing.assert_series_equal(cs.distances, rounds.distances, check_exact=True)


def test_kdtree_acceptance_table_with_unused_categories_and_missing_values(monkeypatch):
    """Combinations of immutable values: a categorical with an unused category and NaN."""
    import skfairverify.counterfactual._kdtree as kdtree
    rng = np.random.default_rng(4)
    n = 200
    X = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.normal(size=n),
        "g": pd.Categorical(rng.choice(["x", "y"], n), categories=["x", "y", "z"]),
        "h": np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 2, n).astype(float)),
    })
    y = ((X.a + X.b + (X.g == "x") > 0.5) & (X.h.fillna(1) > 0)).astype(int)
    model = make_pipeline(
        ColumnTransformer([("n", "passthrough", ["a", "b"]),
                           ("g", OneHotEncoder(), ["g"]),
                           ("h", "passthrough", ["h"])]),
        HistGradientBoostingClassifier(max_iter=20, random_state=0)).fit(X, y)
    gen = KDTreeCounterfactuals(immutable_features=["g", "h"]).fit(X, model)
    queries = X[model.predict(X) == 0]
    assert gen._acceptance(queries, 5) is not None  # 6 combinations (NaN one of h's)
    table = gen.generate(queries, k=5)
    monkeypatch.setattr(kdtree, "_TABLE_RATIO", 0)
    rounds = gen.generate(queries, k=5)
    pd.testing.assert_frame_equal(table.counterfactuals, rounds.counterfactuals,
                                  check_exact=True)
    pd.testing.assert_series_equal(table.distances, rounds.distances, check_exact=True)
    assert table.counterfactuals["h"].isna().any()
