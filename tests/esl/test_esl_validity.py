"""Statistical validity of the ESL tests (issue 10, sections 1 and 2).

Monte Carlo experiments with rows drawn i.i.d. from a population where the null holds:
the rejection rate of the nominal 5% test must be within Monte Carlo error of 5% (exact
binomial 99.9% band for the number of replicates), and the reported standard error must
match the standard deviation of the estimate over fresh samples (its sampling error:
the SD estimated from R replicates has relative standard error ~ 1/sqrt(2(R-1))).
Plus the units of the results against fairlearn and the round-off rule.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin

from skfairverify import esl_decomposition, group_esl
from skfairverify.metrics import make_esl_scorer

METRICS = ("selection_rate", "tpr", "fpr", "ppv", "npv")
ALPHA = 0.05


def binomial_band(n_replicates, level=0.999, p=ALPHA):
    """Exact two-sided band of the rejection count under the nominal level."""
    lo, hi = stats.binom.interval(level, n_replicates, p)
    return lo / n_replicates, hi / n_replicates


def sd_band(n_replicates, level=0.999, slack=0.05):
    """Band of se / (Monte Carlo SD): the SD's sampling error (normal approximation),
    plus ``slack`` for the O(1/n) bias of the delta method at the sample sizes used."""
    half = stats.norm.ppf(0.5 + level / 2) / np.sqrt(2 * (n_replicates - 1))
    return 1 - half - slack, 1 + half + slack


# ------------------------------------------------------------------ populations
def draw_first_stage(metric, n, rng):
    """Rows where the metric is equal across groups but everything else differs.

    Groups are unbalanced (35% / 65%); for the label-conditional metrics the base rate
    differs by group, for PPV / NPV the prediction rate differs by group, so the
    denominators' counts differ by group and are random.
    """
    g = (rng.random(n) < 0.35).astype(int)
    if metric in ("ppv", "npv"):
        yhat = (rng.random(n) < np.where(g == 1, 0.5, 0.3)).astype(int)
        y = (rng.random(n) < np.where(yhat == 1, 0.7, 0.2)).astype(int)
    elif metric == "selection_rate":
        y = (rng.random(n) < np.where(g == 1, 0.6, 0.3)).astype(int)
        yhat = (rng.random(n) < 0.4).astype(int)
    else:
        y = (rng.random(n) < np.where(g == 1, 0.5, 0.3)).astype(int)
        yhat = (rng.random(n) < np.where(y == 1, 0.7, 0.25)).astype(int)
    return y, yhat, np.where(g == 1, "b", "a")


# ------------------------------------------------------------------ first stage
@pytest.mark.slow
@pytest.mark.parametrize("metric", METRICS)
def test_first_stage_size_and_std_error_under_null(metric):
    rng = np.random.default_rng(METRICS.index(metric))
    n_rep, n = 800, 800
    p_values, esl_diff, esl_se, raw_diff, raw_se = [], [], [], [], []
    for _ in range(n_rep):
        y, yhat, g = draw_first_stage(metric, n, rng)
        res = group_esl(y, yhat, sensitive_features=g, metric=metric, value="shapley")
        p_values.append(res.p_value)
        esl_diff.append(res.esl_difference)
        esl_se.append(res.esl_std_error)
        raw_diff.append(res.metric_difference)
        raw_se.append(res.metric_std_error)
    rate = np.mean(np.array(p_values) < ALPHA)
    lo, hi = binomial_band(n_rep)
    assert lo <= rate <= hi, (metric, rate, (lo, hi))
    lo, hi = sd_band(n_rep)
    for diff, se in ((esl_diff, esl_se), (raw_diff, raw_se)):
        ratio = np.mean(se) / np.std(diff, ddof=1)
        assert lo <= ratio <= hi, (metric, ratio, (lo, hi))


def test_first_stage_three_groups_std_errors_match_monte_carlo():
    """Shapley with three groups uses unions of groups (random group mix)."""
    rng = np.random.default_rng(5)
    n_rep, n = 300, 900
    values, ses, raw = [], [], []
    for _ in range(n_rep):
        g = rng.choice(np.array(["a", "b", "c"]), size=n, p=[0.5, 0.3, 0.2])
        yhat = (rng.random(n) < np.where(g == "a", 0.5, 0.3)).astype(int)
        y = (rng.random(n) < np.where(yhat == 1, 0.7, 0.2)).astype(int)
        res = group_esl(y, yhat, sensitive_features=g, metric="ppv", value="shapley")
        values.append(res.esl_values.to_numpy())
        ses.append(res.esl_std_errors.to_numpy())
        raw.append(res.pairwise()["esl_std_error"].to_numpy())
    values = np.array(values)
    lo, hi = sd_band(n_rep)
    ratio = np.mean(ses, axis=0) / values.std(axis=0, ddof=1)
    assert np.all((ratio >= lo) & (ratio <= hi)), ratio
    pairs = [(0, 1), (0, 2), (1, 2)]
    sd_pairs = np.array([(values[:, i] - values[:, j]).std(ddof=1) for i, j in pairs])
    ratio = np.mean(raw, axis=0) / sd_pairs
    assert np.all((ratio >= lo) & (ratio <= hi)), ratio


# ----------------------------------------------------------------- second stage
class SumRule(ClassifierMixin, BaseEstimator):
    """Predicts ``sum(features) > threshold`` whatever the training data (fit is free),
    so the coalition models are fixed and the randomness is that of the test rows only."""

    def __init__(self, threshold=0.3):
        self.threshold = threshold

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return (np.asarray(X, dtype=float).sum(axis=1) > self.threshold).astype(int)


# Thresholds where the predicted-positive (PPV) / predicted-negative (NPV) counts vary
# most relative to the label counts: treating the denominators as fixed given the labels
# underestimates the standard error by ~30% there.
THRESHOLD = {"ppv": -1.0, "npv": 1.0}


def draw_second_stage(n, rng):
    """Features and label independent of the (unbalanced) group: every contribution is
    equal across groups for every metric."""
    g = (rng.random(n) < 0.35).astype(int)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    y = (X.a + 0.5 * X.b + rng.normal(size=n) > 0).astype(int).to_numpy()
    return X, y, g


@pytest.mark.slow
def test_second_stage_size_and_std_error_under_null():
    rng = np.random.default_rng(2024)
    n_rep, n = 200, 800
    X_tr, y_tr = pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0]}), np.array([0, 1])
    rejected, diffs, ses = {}, {}, {}
    for metric in METRICS:
        p, d, s = [], [], []
        for _ in range(n_rep):
            X, y, g = draw_second_stage(n, rng)
            rule = SumRule(THRESHOLD.get(metric, 0.3))
            res = esl_decomposition(rule, X_tr, y_tr, X_test=X, y_test=y,
                                    sensitive_features=g, metric=metric,
                                    values=("shapley",)).contributions
            p.append(res["p_value"].to_numpy())
            d.append(res["esl_difference"].to_numpy())
            s.append(res["esl_std_error"].to_numpy())
        rejected[metric] = np.array(p) < ALPHA  # (replicates, features)
        diffs[metric], ses[metric] = np.array(d), np.array(s)
    # size: per metric (wide band), and pooled over the independent replicates of the
    # five metrics (narrow band); feature "a" only, one independent test per replicate
    lo, hi = binomial_band(n_rep)
    for metric in METRICS:
        assert lo <= rejected[metric][:, 0].mean() <= hi, (metric, rejected[metric].mean(0))
    pooled = np.mean([rejected[m][:, 0] for m in METRICS])
    lo, hi = binomial_band(n_rep * len(METRICS))
    assert lo <= pooled <= hi, pooled
    lo, hi = sd_band(n_rep)
    for metric in METRICS:
        ratio = ses[metric].mean(axis=0) / diffs[metric].std(axis=0, ddof=1)
        assert np.all((ratio >= lo) & (ratio <= hi)), (metric, ratio, (lo, hi))


def test_bootstrap_resamples_rows_like_the_design():
    """The row bootstrap and the delta method estimate the same (i.i.d.) variance, for a
    ratio metric whose denominator is random."""
    rng = np.random.default_rng(3)
    X, y, g = draw_second_stage(3000, rng)
    X_tr, y_tr = pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0]}), np.array([0, 1])
    kw = dict(X_test=X, y_test=y, sensitive_features=g, metric="npv", values=("shapley",),
              random_state=0)
    asym = esl_decomposition(SumRule(), X_tr, y_tr, **kw).contributions
    boot = esl_decomposition(SumRule(), X_tr, y_tr, ci="bootstrap", n_bootstrap=400,
                             **kw).contributions
    ratio = asym["esl_std_error"] / boot["esl_std_error"]
    # the bootstrap SD of 400 replicates has relative error ~ 1/sqrt(798) = 3.5%
    assert ratio.between(0.85, 1.15).all(), ratio


# ------------------------------------------------------------------- round-off
class OnlyA(ClassifierMixin, BaseEstimator):
    """Uses feature ``a`` only; without it predicts 0 for every row, so the other
    features change no prediction and their contributions are exactly zero."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        if "a" in X.columns:
            return (X["a"].to_numpy() > 0.2).astype(int)
        return np.zeros(len(X), dtype=int)


def test_round_off_contributions_give_no_evidence():
    rng = np.random.default_rng(0)
    n = 3000
    g = rng.integers(0, 2, n)
    X = pd.DataFrame({c: rng.normal(size=n) for c in "abcd"})
    X["a"] += 0.5 * g
    y = (X.a + rng.normal(size=n) > 0).astype(int).to_numpy()
    members = ("shapley", "equal_surplus", "consensus", "lsp")  # null-player members
    res = esl_decomposition(OnlyA(), X.iloc[:10], y[:10], X_test=X, y_test=y,
                            sensitive_features=g, metric="selection_rate",
                            values=members).contributions
    useless = res.drop(index="a", level="feature")
    # the differences are zero up to round-off (the case of the issue: 1e-17 / 1e-18)
    assert (useless["esl_difference"].abs() < 1e-15).all()
    assert (useless["esl_std_error"] < 1e-15).all()
    assert (useless["p_value"] == 1.0).all() and (useless["z"] == 0.0).all()
    assert not useless["majority"].any()
    # feature a carries the whole (real) gap and keeps its test
    a = res.xs("a", level="feature")
    assert (a["p_value"] < 1e-6).all() and a["majority"].all()
    # at least one useless contribution is a nonzero round-off: the rule is exercised
    assert (useless["esl_difference"] != 0).any() or (useless["esl_std_error"] != 0).any()


def test_round_off_rule_threshold():
    from skfairverify.esl._inference import _wald

    assert _wald(5.6e-17, 2.6e-18, 0.95)["p_value"] == 1.0
    # the tolerance is relative to the scale of the terms: 1e-12 * max(1, scale)
    assert _wald(5.6e-11, 2.6e-18, 0.95, scale=100.0)["p_value"] == 1.0
    assert _wald(5.6e-11, 2.6e-18, 0.95, scale=1.0)["p_value"] == 0.0
    # above the tolerance the usual Wald test applies
    d = _wald(1e-6, 1e-7, 0.95)
    assert d["z"] == pytest.approx(10.0) and d["p_value"] < 1e-20
    d = _wald(2e-12, 1e-13, 0.95)  # a tiny difference above 1e-12, tiny error
    assert d["z"] == pytest.approx(20.0)
    # deterministic nonzero difference (se exactly 0) stays a rejection
    d = _wald(0.25, 0.0, 0.95)
    assert d["p_value"] == 0.0 and d["z"] == np.inf


# ----------------------------------------------------------------------- units
def test_group_esl_units_against_fairlearn():
    from fairlearn.metrics import (
        MetricFrame,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )
    from sklearn.metrics import precision_score

    def npv(y_true, y_pred):
        return np.mean(np.asarray(y_true)[np.asarray(y_pred) == 0] == 0)

    fns = {"selection_rate": selection_rate, "tpr": true_positive_rate,
           "fpr": false_positive_rate, "ppv": precision_score, "npv": npv}
    rng = np.random.default_rng(8)
    y, yhat, g = draw_first_stage("tpr", 1500, rng)
    yhat = np.where(g == "b", yhat, (rng.random(1500) < 0.6).astype(int))
    for metric, fn in fns.items():
        mf = MetricFrame(metrics=fn, y_true=y, y_pred=yhat, sensitive_features=g)
        for value, b1 in (("shapley", 1.0), ("solidarity", 0.5)):
            res = group_esl(y, yhat, sensitive_features=g, metric=metric, value=value,
                            baseline=0.4)
            assert res.compared == ("a", "b")
            np.testing.assert_allclose(res.metric_by_group.to_numpy(), mf.by_group.to_numpy())
            assert res.metric_difference == pytest.approx(
                mf.by_group["a"] - mf.by_group["b"], abs=1e-14)
            assert abs(res.metric_difference) == pytest.approx(mf.difference(), abs=1e-14)
            assert res.esl_difference == pytest.approx(b1 * res.metric_difference / 0.4)
            assert res.esl_std_error == pytest.approx(b1 * res.metric_std_error / 0.4)
            assert res.z == pytest.approx(res.metric_difference / res.metric_std_error)
        for old in ("difference", "std_error", "ci"):
            assert not hasattr(res, old)
    frame = res.to_frame()
    assert not frame.attrs  # the units and the test are attributes of the result
    assert "ESL units" in res.units and res.compared == ("a", "b")
    assert "ESL units" in repr(res) and "metric_difference" in repr(res)


@pytest.mark.parametrize("n_groups", [2, 3])
@pytest.mark.parametrize("metric", ["tpr", "ppv", "selection_rate"])
def test_scorer_is_minus_fairlearn_difference(metric, n_groups):
    from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate
    from sklearn.metrics import precision_score

    fn = {"tpr": true_positive_rate, "ppv": precision_score,
          "selection_rate": selection_rate}[metric]
    rng = np.random.default_rng(n_groups)
    n = 900
    X = pd.DataFrame({"x": rng.normal(size=n),
                      "g": rng.choice(list("abc")[:n_groups], size=n)})
    y = (X.x + rng.normal(size=n) > 0).astype(int).to_numpy()

    class Rule:
        def predict(self, X):
            shift = X["g"].map({"a": 0.0, "b": 0.4, "c": -0.3}).to_numpy()
            return (X["x"].to_numpy() + shift > 0).astype(int)

    pred = Rule().predict(X)
    mf = MetricFrame(metrics=fn, y_true=y, y_pred=pred, sensitive_features=X["g"])
    score = make_esl_scorer(sensitive_features="g", metric=metric)(Rule(), X, y)
    assert score == pytest.approx(-mf.difference(), abs=1e-14)
    res = group_esl(y, pred, sensitive_features=X["g"], metric=metric, value="equal_surplus")
    esl = make_esl_scorer(sensitive_features="g", metric=metric, units="esl")(Rule(), X, y)
    assert esl == pytest.approx(-(res.esl_values.max() - res.esl_values.min()))
    if n_groups == 2:
        assert esl == pytest.approx(2 * score)  # b_1 = 1, baseline 0.5


def test_scorer_intersections_are_fairlearn_groups():
    from fairlearn.metrics import MetricFrame, true_positive_rate

    rng = np.random.default_rng(4)
    n = 1200
    X = pd.DataFrame({"x": rng.normal(size=n), "s": rng.choice(["F", "M"], n),
                      "r": rng.choice(["u", "v"], n)})
    y = (X.x + rng.normal(size=n) > 0).astype(int).to_numpy()

    class Rule:
        def predict(self, X):
            return (X["x"].to_numpy() + 0.3 * (X["s"] == "M").to_numpy() > 0).astype(int)

    mf = MetricFrame(metrics=true_positive_rate, y_true=y, y_pred=Rule().predict(X),
                     sensitive_features=X[["s", "r"]])
    score = make_esl_scorer(sensitive_features=["s", "r"], metric="tpr")(Rule(), X, y)
    assert score == pytest.approx(-mf.difference(), abs=1e-14)


def test_scorer_units_bad_input():
    with pytest.raises(ValueError, match="'units' parameter of make_esl_scorer must be"):
        make_esl_scorer(sensitive_features="g", units="raw")


# ----------------------------------------- delta method against the multinomial model
def multinomial_delta_cov(keys, n_keys, func, h=1e-3):
    """``J Sigma J^T`` for ``func(counts)`` with the counts of ``keys`` multinomial:
    Sigma = n (diag(p) - p p^T), J by central differences. Independent of the package:
    it knows nothing of influences, strata or unions."""
    counts = np.bincount(keys, minlength=n_keys).astype(float)
    n = counts.sum()
    p = counts / n
    sigma = n * (np.diag(p) - np.outer(p, p))
    f0 = np.asarray(func(counts), dtype=float)
    jac = np.zeros((f0.size, n_keys))
    for k in np.flatnonzero(counts):
        up, down = counts.copy(), counts.copy()
        up[k] += h
        down[k] -= h
        jac[:, k] = (np.asarray(func(up)) - np.asarray(func(down))) / (2 * h)
    return f0, jac @ sigma @ jac.T


def ratio_from_counts(metric, c):
    """Metric from counts ``c[y, yhat]`` (summed over the rows considered)."""
    num_den = {"selection_rate": (c[:, 1].sum(), c.sum()), "tpr": (c[1, 1], c[1].sum()),
               "fpr": (c[0, 1], c[0].sum()), "ppv": (c[1, 1], c[:, 1].sum()),
               "npv": (c[0, 0], c[:, 0].sum())}
    num, den = num_den[metric]
    return num / den


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("value", ["shapley", "solidarity", "lsp"])
def test_first_stage_covariance_is_the_multinomial_delta_method(metric, value):
    from skfairverify import esl_value

    rng = np.random.default_rng(11)
    n = 2000
    g = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    yhat = (rng.random(n) < np.array([0.5, 0.3, 0.4])[g]).astype(int)
    y = (rng.random(n) < np.where(yhat == 1, 0.7, 0.2)).astype(int)
    keys = g * 4 + y * 2 + yhat

    def values(counts):
        c = counts.reshape(3, 2, 2)

        def game(S):
            return ratio_from_counts(metric, c[sorted(S)].sum(axis=0)) / 0.5

        return esl_value(game, 3, value)

    expected, cov = multinomial_delta_cov(keys, 12, values)
    res = group_esl(y, yhat, sensitive_features=np.array(["a", "b", "c"])[g], metric=metric,
                    value=value)
    np.testing.assert_allclose(res.esl_values.to_numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(res.esl_covariance.to_numpy(), cov, rtol=1e-6, atol=1e-12)
    # metric units: each group's rate, binomial with its (random) denominator
    raw = np.array([ratio_from_counts(metric, np.bincount(keys[g == k] % 4, minlength=4)
                                      .reshape(2, 2)) for k in range(3)])
    d = np.array([np.bincount(keys[g == k] % 4, minlength=4).reshape(2, 2) for k in range(3)])
    den = {"selection_rate": d.sum(axis=(1, 2)), "tpr": d[:, 1].sum(axis=1),
           "fpr": d[:, 0].sum(axis=1), "ppv": d[:, :, 1].sum(axis=1),
           "npv": d[:, :, 0].sum(axis=1)}[metric]
    np.testing.assert_allclose(res.metric_std_errors.to_numpy(),
                               np.sqrt(raw * (1 - raw) / den), rtol=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_second_stage_covariance_is_the_multinomial_delta_method(metric):
    """Cells (group, label, predictions of the three coalition models): the coalition
    covariances of the package must be those of the multinomial model exactly."""
    from skfairverify import esl_value

    rng = np.random.default_rng(12)
    X, y, g = draw_second_stage(1500, rng)
    g = np.where(rng.random(1500) < 0.5, g, 1 - g)  # still independent of (X, y)
    rule = SumRule(THRESHOLD.get(metric, 0.3))
    coalitions = [("a",), ("b",), ("a", "b")]
    pred = np.column_stack([rule.predict(X[list(T)]) for T in coalitions])
    keys = ((g * 2 + y) * 8) + pred @ np.array([1, 2, 4])
    value = "solidarity"  # every coalition enters with a nonzero coefficient

    def outputs(counts):
        c = counts.reshape(2, 2, 8)  # group, y, pattern

        def phi(T, grp):
            if not T:
                return 0.0
            bit = [("a",), ("b",), ("a", "b")].index(tuple(sorted(T)))
            on = (np.arange(8) >> bit) & 1

            def game(S):
                cells = c[sorted(S)].sum(axis=0)  # (y, pattern)
                by_pred = np.stack([cells[:, on == 0].sum(axis=1),
                                    cells[:, on == 1].sum(axis=1)], axis=1)
                return ratio_from_counts(metric, by_pred) / 0.5

            return esl_value(game, 2, value)[grp]

        names = ["a", "b"]
        contrib = [esl_value(lambda S, k=k: phi(tuple(names[i] for i in S), k), 2, value)
                   for k in (0, 1)]
        return np.concatenate([contrib[0], contrib[1], contrib[0] - contrib[1]])

    expected, cov = multinomial_delta_cov(keys, 32, outputs)
    X_tr, y_tr = pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0]}), np.array([0, 1])
    dec = esl_decomposition(rule, X_tr, y_tr, X_test=X, y_test=y, sensitive_features=g,
                            metric=metric, values=(value,))
    res = dec.contributions
    np.testing.assert_allclose(res[0].to_numpy(), expected[:2], atol=1e-12)
    np.testing.assert_allclose(res[1].to_numpy(), expected[2:4], atol=1e-12)
    np.testing.assert_allclose(res["esl_std_error"].to_numpy(), np.sqrt(np.diag(cov)[4:]),
                               rtol=1e-6)
    se = dec.group_std_error
    np.testing.assert_allclose(se[0].to_numpy(), np.sqrt(np.diag(cov)[:2]), rtol=1e-6)
    np.testing.assert_allclose(se[1].to_numpy(), np.sqrt(np.diag(cov)[2:4]), rtol=1e-6)
