"""Counterfactual fairness without a leak (issue 10, sections 4 and 5).

* The sensitive-feature classifier is cross-fitted: every counterfactual that is a
  training row is judged by the fold model that never saw it. Checked against an
  independent computation (fold models refitted by hand, counterfactuals matched to
  training rows by brute force, CFlips by a loop over Eq. 3) with a 1-NN classifier,
  which memorises its training rows and so exposes any leak.
* Under a sensitive attribute independent of every feature, the classifier's
  predictions are coin flips: CFlips of a group is the other group's share of
  predictions (Monte Carlo), never near 0, and the counterfactuals' predicted group
  agrees with their true group only by chance (memorised: always).
* Results do not depend on n_jobs; bad inputs raise errors naming the problem.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import CounterfactualFairness
from skfairverify.counterfactual import CounterfactualSet, DiceCounterfactuals, privileged_group
from skfairverify.metrics import make_cflips_scorer, make_ndccf_scorer


def numeric_data(n, seed, independent=False, p_priv=0.6):
    """Numeric features; ``proxy`` reveals sex unless ``independent``."""
    rng = np.random.default_rng(seed)
    m = rng.random(n) < p_priv
    X = pd.DataFrame({
        "sex": np.where(m, "M", "F"),
        "proxy": (0.0 if independent else 1.0) * m + rng.normal(0, 0.6, n),
        "skill": rng.normal(size=n),
        "years": rng.integers(0, 15, n).astype(float),
    })
    y = (X.skill + X.proxy + rng.normal(0, 0.3, n) > 0.8).astype(int)
    return X, y


def model_on(cols):
    return make_pipeline(ColumnTransformer([("n", StandardScaler(), cols)]),
                         LogisticRegression())


NN1 = make_pipeline(StandardScaler(), KNeighborsClassifier(1))  # memorises its rows


def flips_loop(s_query, s_cf_rows):
    """CFlips@k (Eq. 3) by a loop: share of a row's counterfactuals of another group."""
    return np.array([np.mean([c != s for c in row]) if row else np.nan
                     for s, row in zip(s_query, s_cf_rows)])


# --------------------------------------------------------------------------- leak
def test_cflips_equals_manual_out_of_fold_computation():
    X, y = numeric_data(600, 0)
    Xt, _ = numeric_data(300, 1)
    k = 5
    audit = CounterfactualFairness(model_on(["proxy", "skill", "years"]), "sex", k=k,
                                   sensitive_classifier=NN1, cv=4, privileged="M",
                                   random_state=0).fit(X, y)
    res = audit.evaluate(Xt)
    fold = audit.sensitive_classifier_.fold_
    feats = ["proxy", "skill", "years"]
    s_bin = (X.sex == "M").to_numpy().astype(int)
    models = [clone(NN1).fit(X.loc[fold != f, feats], s_bin[fold != f]) for f in range(4)]

    train_rows = [tuple(r) for r in X[feats].to_numpy()]
    proba = [m.predict_proba(X[feats])[:, 1] for m in models]

    def judge(rows: pd.DataFrame) -> np.ndarray:
        probas = [m.predict_proba(rows[feats])[:, 1] for m in models]
        out = []
        for i, r in enumerate(rows[feats].to_numpy()):
            same = [j for j, t in enumerate(train_rows) if t == tuple(r)]  # brute force
            if same:  # a training row: only the model that never saw it
                p = proba[fold[same[0]]][same[0]]
            else:  # a test row: the fold models' mean probability
                p = np.mean([pr[i] for pr in probas])
            out.append("M" if p > 0.5 else "F")
        return np.array(out)

    refused = audit.estimator_.predict(Xt) == 0
    s_hat = judge(Xt)
    q = Xt[refused & (s_hat == Xt.sex.to_numpy())]
    cs = audit.generator_.generate(q, k)
    assert len(cs.counterfactuals)
    pred = judge(cs.counterfactuals)
    rows = [[] for _ in range(len(q))]
    for p, v in zip(cs.query_positions, pred):
        rows[p].append(v)
    ref = flips_loop(q.sex.to_numpy(), rows)
    for name, g in (("privileged", "M"), ("unprivileged", "F")):
        assert res.cflips[name] == pytest.approx(np.nanmean(ref[q.sex.to_numpy() == g]),
                                                    abs=1e-12)
    # every counterfactual is a training row; a leaky 1-NN would call each one by its
    # own true group, the cross-fitted one only by its nearest row of another fold
    truth = np.array([X.sex.iloc[np.flatnonzero(
        (X[feats].to_numpy() == r).all(axis=1))[0]] for r in cs.counterfactuals[feats].to_numpy()])
    assert np.mean(pred == truth) < 0.95
    # the held-out report is the out-of-fold confusion of those fold models
    oof = np.empty(len(X), dtype=int)
    for f in range(4):
        oof[fold == f] = models[f].predict(X.loc[fold == f, feats])
    rep = res.sensitive_classifier
    assert rep["held_out"] is True
    assert rep["accuracy"] == pytest.approx(np.mean(oof == s_bin))
    oof_p = np.empty(len(X))
    for f in range(4):
        oof_p[fold == f] = models[f].predict_proba(X.loc[fold == f, feats])[:, 1]
    pos, neg = oof_p[s_bin == 1], oof_p[s_bin == 0]  # AUC by pair counting
    auc = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    assert rep["roc_auc"] == pytest.approx(auc)
    tab = rep["by_group"]
    tp = np.sum((oof == 1) & (s_bin == 1))
    assert tab.loc["privileged", "precision"] == pytest.approx(tp / np.sum(oof == 1))
    assert tab.loc["privileged", "recall"] == pytest.approx(tp / np.sum(s_bin == 1))
    tn = np.sum((oof == 0) & (s_bin == 0))
    assert tab.loc["unprivileged", "precision"] == pytest.approx(tn / np.sum(oof == 0))
    assert tab.loc["unprivileged", "recall"] == pytest.approx(tn / np.sum(s_bin == 0))
    pd.testing.assert_frame_equal(tab, audit.sensitive_classifier_report_)


def test_copies_of_a_row_share_a_fold():
    X, y = numeric_data(200, 3)
    X2 = pd.concat([X, X.iloc[:50]], ignore_index=True)  # 50 duplicated rows
    y2 = pd.concat([y, y.iloc[:50]], ignore_index=True)
    audit = CounterfactualFairness(model_on(["proxy", "skill"]), "sex", k=2,
                                   sensitive_classifier=NN1, random_state=0).fit(X2, y2)
    fold = audit.sensitive_classifier_.fold_
    np.testing.assert_array_equal(fold[:50], fold[200:])
    # so a 1-NN never finds the row itself: its out-of-fold accuracy is not 1
    assert audit.sensitive_classifier_report_.loc["privileged", "recall"] < 0.95


def test_independent_attribute_gives_chance_flips():
    """Monte Carlo: with sex independent of everything, P(flip) is the other share."""
    X, y = numeric_data(3000, 5, independent=True, p_priv=0.7)
    Xt, _ = numeric_data(1500, 6, independent=True, p_priv=0.7)
    audit = CounterfactualFairness(model_on(["proxy", "skill", "years"]), "sex", k=5,
                                   sensitive_classifier=NN1, privileged="M",
                                   random_state=0).fit(X, y)
    res = audit.evaluate(Xt)
    # the fold models' out-of-fold predictions are draws of the training groups
    q = float(np.mean(audit.sensitive_classifier_.oof_proba_[:, 1] > 0.5))
    assert q == pytest.approx(0.7, abs=0.03)
    # CFlips(M) = P(pred F) = 1 - q, CFlips(F) = P(pred M) = q; SE < 0.02 (>= 300 rows
    # of each group, 5 correlated counterfactuals each)
    assert res.cflips["privileged"] == pytest.approx(1 - q, abs=0.06)
    assert res.cflips["unprivileged"] == pytest.approx(q, abs=0.06)
    assert res.cflips["privileged"] > 0.15  # not near 0
    # the counterfactuals are training rows; their predicted group agrees with their
    # true group at chance, q^2 + (1 - q)^2 = 0.58 (memorised: 1)
    feats = ["proxy", "skill", "years"]
    cs = res.counterfactuals.counterfactuals
    truth = cs[feats].merge(X.drop_duplicates(feats), on=feats, how="left")["sex"]
    assert truth.notna().all()
    pred = np.where(audit.sensitive_classifier_.predict(cs[feats]) == 1, "M", "F")
    assert np.mean(pred == truth.to_numpy()) == pytest.approx(q**2 + (1 - q)**2, abs=0.05)


# --------------------------------------------------------------------------- n_jobs
class SeededJitter(BaseEstimator):
    """A randomised generator seeded on every call (like dice's random method)."""

    def __init__(self, random_state=None, immutable_features=None):
        self.random_state = random_state
        self.immutable_features = immutable_features

    def fit(self, X, estimator):
        self.estimator_ = estimator
        return self

    def generate(self, X, k):
        rng = np.random.default_rng(self.random_state)
        reps = X.loc[X.index.repeat(k)].copy()
        reps["skill"] = reps["skill"] + rng.normal(0, 2, len(reps))
        reps["proxy"] = reps["proxy"] + rng.normal(0, 2, len(reps))
        ok = np.asarray(self.estimator_.predict(reps)) == 1
        pos = np.repeat(np.arange(len(X)), k)[ok]
        reps = reps[ok]
        rank = pd.Series(pos).groupby(pos).cumcount().to_numpy() + 1
        idx = pd.MultiIndex.from_arrays([X.index.to_numpy()[pos], rank], names=["row", "rank"])
        reps.index = idx
        return CounterfactualSet(reps, pd.Series(np.zeros(len(reps)), index=idx), pos, len(X))


@pytest.mark.parametrize("generator", ["kdtree", SeededJitter(random_state=1)])
def test_results_do_not_depend_on_n_jobs(generator):
    X, y = numeric_data(3000, 7)
    Xt, _ = numeric_data(1400, 8)  # more refused rows than one chunk (512)
    res = {}
    for n_jobs in (1, 2):
        audit = CounterfactualFairness(model_on(["proxy", "skill", "years"]), "sex", k=4,
                                       generator=generator, sensitive_classifier=NN1,
                                       random_state=0, n_jobs=n_jobs).fit(X, y)
        res[n_jobs] = audit.evaluate(Xt)
    assert sum(res[1].n_refused.values()) > 512
    pd.testing.assert_frame_equal(res[1].per_k, res[2].per_k, check_exact=True)


# --------------------------------------------------------------------------- errors
def test_dice_kdtree_is_refused_with_the_reason():
    X, y = numeric_data(100, 9)
    for gen in ("dice-kdtree", DiceCounterfactuals(method="kdtree")):
        with pytest.raises(ValueError, match=r"own group.*generator='kdtree'"):
            CounterfactualFairness(model_on(["proxy"]), "sex", generator=gen).fit(X, y)


def test_unseen_sensitive_values_are_an_error():
    X, y = numeric_data(300, 10)
    audit = CounterfactualFairness(model_on(["proxy", "skill"]), "sex", k=2,
                                   sensitive_classifier=NN1).fit(X, y)
    Xt = X.assign(sex=np.where(np.arange(len(X)) < 3, "X", X.sex))
    with pytest.raises(ValueError, match=r"\['X'\] not seen in fit"):
        audit.evaluate(Xt)
    with pytest.raises(ValueError, match=r"not seen in fit"):
        audit.proxy_correlations(Xt)


def test_frozen_classifier_must_predict_sensitive_values():
    X, y = numeric_data(300, 11)
    ns = X.drop(columns="sex")
    bad = FrozenEstimator(LogisticRegression().fit(ns, (X.sex == "M").astype(int)))
    with pytest.raises(ValueError, match=r"raw values of 'sex'.*\[0, 1\]"):
        CounterfactualFairness(model_on(["proxy"]), "sex", sensitive_classifier=bad).fit(X, y)
    good = FrozenEstimator(LogisticRegression().fit(ns, X.sex))
    audit = CounterfactualFairness(model_on(["proxy"]), "sex", k=2,
                                   sensitive_classifier=good).fit(X, y)
    rep = audit.evaluate(X).sensitive_classifier
    assert rep["held_out"] is False
    assert rep["accuracy"] == pytest.approx(np.mean(good.predict(ns) == X.sex))


def test_no_refused_row_gives_nan_and_warning():
    X, y = numeric_data(300, 12)
    audit = CounterfactualFairness(DummyClassifier(strategy="constant", constant=1), "sex",
                                   privileged="M", sensitive_classifier=NN1).fit(X, y)
    with pytest.warns(UserWarning, match="No refused row with a counterfactual"):
        res = audit.evaluate(X)
    assert res.empty_groups == ["privileged", "unprivileged"]
    assert np.isnan(res.cflips["delta"]) and np.isnan(res.ndccf["delta"])
    assert res.n_refused == {"privileged": 0, "unprivileged": 0}


def test_scorer_multigroup_privileged_by_rule_or_given():
    X, y = numeric_data(600, 13)
    rng = np.random.default_rng(0)
    X3 = X.assign(sex=np.where(X.sex == "F", rng.choice(["F", "N"], len(X)), "M"))
    model = model_on(["proxy", "skill"]).fit(X3, y)
    clf = make_pipeline(StandardScaler(), LogisticRegression())
    # without privileged=, the rule of privileged_group (issue 27) chooses it on the fold
    chosen = privileged_group(model.predict(X3), X3["sex"]).label
    auto = make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=clf,
                              random_state=0)(model, X3, y)
    assert auto == make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=clf,
                                      privileged=chosen, random_state=0)(model, X3, y)
    score = make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=clf,
                               privileged="M", random_state=0)(model, X3, y)
    assert np.isfinite(score) and score < 0
    # the gap with privileged="M" is M against F and N together
    X2 = X3.assign(sex=np.where(X3.sex == "M", "M", "other"))
    same = make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=clf,
                              privileged="M", random_state=0)(model, X2, y)
    assert same == score


def test_scorer_on_empty_fold_raises_clearly():
    X, y = numeric_data(300, 14)
    accept_all = DummyClassifier(strategy="constant", constant=1).fit(X, y)
    with pytest.raises(ValueError, match="gap undefined on this fold"):
        scorer = make_cflips_scorer(sensitive_features="sex", k=2, sensitive_classifier=NN1)
        scorer(accept_all, X, y)


def german():
    from skfairverify.datasets import load_german

    b = load_german()
    X = b.data.drop(columns=["age_group"])
    cat = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c]) and c != "sex"]
    num = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])]
    model = make_pipeline(ColumnTransformer([("n", StandardScaler(), num),
                                             ("c", OneHotEncoder(handle_unknown="ignore"),
                                              cat)]),
                          LogisticRegression(max_iter=2000))
    return X, b.target, model, num


def test_scorers_finite_on_german_cv5():
    X, y, model, num = german()
    clf = make_pipeline(ColumnTransformer([("n", StandardScaler(), num)]),
                        LogisticRegression(class_weight="balanced"))
    for make in (make_cflips_scorer, make_ndccf_scorer):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "scoring failed" warning either
            scores = cross_val_score(model, X, y, cv=5, error_score="raise",
                                     scoring=make(sensitive_features="sex", k=5,
                                                  sensitive_classifier=clf, random_state=0))
        assert np.isfinite(scores).all() and (scores <= 0).all()


def test_scorer_finite_on_german_cv5_default_classifier():
    X, y, model, _ = german()
    scores = cross_val_score(model, X, y, cv=5, error_score="raise",
                             scoring=make_cflips_scorer(sensitive_features="sex", k=5,
                                                        random_state=0))
    assert np.isfinite(scores).all()


def test_german_leak_free_gap_matches_disjoint_rows_fit():
    """The default classifier, cross-fitted, is close to one fitted on disjoint rows."""
    X, y, model, _ = german()
    X_a, X_b, y_a, y_b = train_test_split(X, y, test_size=0.5, random_state=0,
                                          stratify=y.astype(str) + X.sex.astype(str))
    X_fit, X_test, y_fit, y_test = train_test_split(X_a, y_a, test_size=0.4, random_state=0,
                                                    stratify=y_a)
    clf = make_pipeline(ColumnTransformer([("n", StandardScaler(), ["duration", "age",
                                                                    "credit_amount"])]),
                        LogisticRegression(class_weight="balanced"))
    disjoint = FrozenEstimator(clone(clf).fit(X_b.drop(columns="sex"), X_b.sex))
    cross = CounterfactualFairness(model, "sex", k=5, sensitive_classifier=clf,
                                   privileged="Male", random_state=0).fit(X_fit, y_fit)
    held = CounterfactualFairness(model, "sex", k=5, sensitive_classifier=disjoint,
                                  privileged="Male", random_state=0).fit(X_fit, y_fit)
    a, b = cross.evaluate(X_test), held.evaluate(X_test)
    # two honest classifiers of similar skill: same sign and size of the gap
    assert a.cflips["delta"] == pytest.approx(b.cflips["delta"], abs=0.2)


def test_kdtree_ties_ranked_by_candidate_whatever_the_batch():
    """Integer data: many candidates at equal distance; any batching gives one answer."""
    from skfairverify.counterfactual import KDTreeCounterfactuals

    rng = np.random.default_rng(15)
    X = pd.DataFrame({"sex": rng.choice(["F", "M"], 400), "a": rng.integers(0, 4, 400),
                      "b": rng.integers(0, 4, 400)})
    model = model_on(["a", "b"]).fit(X, (X.a + X.b > 3).astype(int))
    gen = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, model)
    q = X[model.predict(X) == 0]
    whole = gen.generate(q, 7)
    parts = [gen.generate(q.iloc[[i]], 7) for i in range(len(q))]
    one_by_one = pd.concat([p.counterfactuals for p in parts])
    pd.testing.assert_frame_equal(whole.counterfactuals, one_by_one)
    # ties really occur, and are ranked by position among the candidates
    d = whole.distances.to_numpy()
    assert np.any(np.diff(d)[np.diff(whole.query_positions) == 0] == 0)
    cand = gen.candidates_[["a", "b"]].astype(float).to_numpy()
    for p in range(len(q)):
        x = q[["a", "b"]].iloc[p].to_numpy(dtype=float)
        dist = np.abs(cand - x).dot(1.0 / np.array([3.0, 3.0]))
        order = np.lexsort((np.arange(len(cand)), dist))[:7]  # brute force, ties by index
        got = whole.counterfactuals.loc[q.index[p], ["a", "b"]].to_numpy(dtype=float)
        np.testing.assert_array_equal(got, cand[order])
        np.testing.assert_allclose(whole.distances.loc[q.index[p]], dist[order], atol=1e-12)
