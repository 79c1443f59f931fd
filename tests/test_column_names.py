"""Issue 11, section 3: column names as users have them, through every public entry point.

Three frames: integer column names (0, 1, 2, 3), duplicated names, and names (and
categories) containing ``=``. Integer names are supported (read by position, like
scikit-learn), duplicated names are refused by name with a ValueError listing them, and
``=`` in names gives unique, structured terms. Each result is compared with the same
computation on the frame renamed to plain string names (the independent computation).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfairverify import (
    BinningDiscretizer,
    CounterfactualFairness,
    FairnessVerifier,
    IntegerWeightScaler,
    counterfactual_flips,
    esl_decomposition,
    group_esl,
    linear_rule,
    ndccf,
)
from skfairverify.metrics import (
    make_cflips_scorer,
    make_esl_scorer,
    make_ndccf_scorer,
    make_verifier_scorer,
)

PLAIN = ["a", "b", "c", "s"]


def _plain(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.normal(size=n),
        "c": rng.choice(["u", "v"], n),
        "s": rng.integers(0, 2, n),
    })
    y = (X.a + 0.8 * X.s + (X.c == "u") + rng.normal(size=n) > 0.8).astype(int)
    return X, y


def _int_named():
    X, y = _plain()
    return X.set_axis([0, 1, 2, 3], axis=1), y


def _duplicated():
    X, y = _plain()
    return X.set_axis(["a", "b", "a", "s"], axis=1), y


def _numeric_model(X, y, cols):
    return LogisticRegression().fit(X[cols], y)


# ------------------------------------------------------------ integer column names


def test_linear_rule_and_its_decision_with_integer_names():
    X, y = _int_named()
    num = X[[0, 1, 3]]
    model = LogisticRegression().fit(num, y)
    rule = linear_rule(model)
    assert rule.feature_names_in == ["x0", "x1", "x2"]
    np.testing.assert_allclose(rule.decision_function(num), model.decision_function(num),
                               atol=1e-12)
    pipe = make_pipeline(
        make_column_transformer((OneHotEncoder(), [2]), ("passthrough", [0, 1])),
        LogisticRegression()).fit(X, y)
    prule = linear_rule(pipe)
    assert list(prule.categorical_features) == ["x2"]
    np.testing.assert_allclose(prule.decision_function(X), pipe.decision_function(X),
                               atol=1e-12)


def test_binning_discretizer_with_integer_names_equals_plain_names():
    X, _ = _int_named()
    Xp, _ = _plain()
    a = BinningDiscretizer(n_bins=4).fit(X[[0, 1]])
    b = BinningDiscretizer(n_bins=4).fit(Xp[["a", "b"]])
    np.testing.assert_array_equal(a.transform(X[[0, 1]]), b.transform(Xp[["a", "b"]]))
    assert a.get_feature_names_out().tolist()[:1] == ["x0_bin0"]


def test_integer_weight_scaler_with_integer_names_equals_plain_names():
    X, y = _int_named()
    Xp, _ = _plain()
    a = IntegerWeightScaler(LogisticRegression(), max_multiplier=20).fit(X[[0, 1, 3]], y)
    b = IntegerWeightScaler(LogisticRegression(), max_multiplier=20).fit(
        Xp[["a", "b", "s"]], y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict(X[[0, 1, 3]]), b.predict(Xp[["a", "b", "s"]]))


def test_verifier_with_integer_names_equals_plain_names():
    X, y = _int_named()
    Xp, _ = _plain()
    num = X[[0, 1, 3]]
    a = FairnessVerifier(LogisticRegression(), sensitive_features="x2",
                         network="independent", random_state=0).fit(num, y)
    b = FairnessVerifier(LogisticRegression(), sensitive_features="s",
                         network="independent", random_state=0).fit(Xp[["a", "b", "s"]], y)
    np.testing.assert_allclose(a.groups_["positive_rate"], b.groups_["positive_rate"])


def test_counterfactual_fairness_with_integer_names():
    X, y = _int_named()
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), [2]), ("passthrough", [0, 1])),
        LogisticRegression()).fit(X, y)
    cf = CounterfactualFairness(model, sensitive_features=3, generator="linear", k=3,
                                cv=2, random_state=0).fit(X, y)
    assert set(cf.evaluate(X).cflips) >= {"privileged", "unprivileged"}


def test_counterfactual_metrics_take_series_with_any_name():
    s_orig = pd.Series([0, 1, 0, 1], name=0)
    s_cf = pd.DataFrame([[1, 0], [1, 1], [0, 0], [0, 1]], columns=[0, 1])
    np.testing.assert_allclose(counterfactual_flips(s_orig, s_cf),
                               counterfactual_flips(s_orig.to_numpy(), s_cf.to_numpy()))
    np.testing.assert_allclose(ndccf(s_orig, s_cf), ndccf(s_orig.to_numpy(), s_cf.to_numpy()))


def test_group_esl_with_an_integer_named_sensitive_column():
    X, y = _int_named()
    pred = (X[0] > 0).astype(int)
    a = group_esl(y, pred, sensitive_features=X[3], metric="tpr").to_frame()
    b = group_esl(y, pred, sensitive_features=X[3].rename("s"), metric="tpr").to_frame()
    np.testing.assert_allclose(a["esl_value"], b["esl_value"])


def test_esl_decomposition_with_integer_names():
    X, y = _int_named()
    Xp, _ = _plain()
    kw = dict(metric="tpr", values=("equal_surplus",), random_state=0)
    a = esl_decomposition(LogisticRegression(), X[[0, 1]], y, sensitive_features=X[3],
                          **kw)
    b = esl_decomposition(LogisticRegression(), Xp[["a", "b"]], y,
                          sensitive_features=Xp["s"], **kw)
    np.testing.assert_allclose(np.asarray(a.to_frame().select_dtypes("number"), float),
                               np.asarray(b.to_frame().select_dtypes("number"), float))


def test_verifier_scorer_with_integer_names():
    """The integer label 3 names the sensitive column, as "s" does on named columns."""
    X, y = _int_named()
    Xp, _ = _plain()
    num, named = X[[0, 1, 3]], Xp[["a", "b", "s"]]
    a = make_verifier_scorer(sensitive_features=3, network="independent", random_state=0)(
        LogisticRegression().fit(num, y), num, y)
    b = make_verifier_scorer(sensitive_features="s", network="independent", random_state=0)(
        LogisticRegression().fit(named, y), named, y)
    assert np.isfinite(a)
    np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("make", [make_esl_scorer, make_cflips_scorer, make_ndccf_scorer])
def test_scorers_take_an_integer_column_label(make):
    """An integer column label (3) gives what the same column named "s" gives."""
    X, y = _int_named()
    Xp, _ = _plain()
    kw = {} if make is make_esl_scorer else dict(generator="linear", k=3, cv=2,
                                                 random_state=0)

    def score(frame, label):
        model = LogisticRegression().fit(frame, y)
        try:
            return make(sensitive_features=label, **kw)(model, frame, y)
        except ValueError as exc:  # e.g. no counterfactual on a fold: same for both
            return str(exc)

    a = score(X[[0, 1, 3]], 3)
    b = score(Xp[["a", "b", "s"]], "s")
    if isinstance(b, str):
        assert a == b
    else:
        assert np.isfinite(a)
        np.testing.assert_allclose(a, b)


def test_verifier_takes_an_integer_column_label():
    X, y = _int_named()
    Xp, _ = _plain()
    a = FairnessVerifier(LogisticRegression(), sensitive_features=3,
                         network="independent", random_state=0).fit(X[[0, 1, 3]], y)
    b = FairnessVerifier(LogisticRegression(), sensitive_features="s",
                         network="independent", random_state=0).fit(Xp[["a", "b", "s"]], y)
    np.testing.assert_allclose(a.groups_["positive_rate"], b.groups_["positive_rate"])


# ------------------------------------------------------------ duplicated column names


def test_duplicated_names_are_refused_by_my_entry_points():
    X, y = _duplicated()
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\]"):
        BinningDiscretizer().fit(X.iloc[:, [0, 1]].set_axis(["a", "a"], axis=1))
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\]"):
        IntegerWeightScaler(LogisticRegression()).fit(
            X.iloc[:, [0, 1]].set_axis(["a", "a"], axis=1), y)
    Xp, _ = _plain()
    model = LogisticRegression().fit(Xp[["a", "b"]], y)
    rule = linear_rule(model)
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\]"):
        rule.decision_function(Xp[["a", "b", "a"]])


def test_verifier_refuses_duplicated_names():
    X, y = _duplicated()
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\]"):
        FairnessVerifier(LogisticRegression(), sensitive_features="s",
                         network="independent").fit(X, y)


def test_counterfactual_and_esl_refuse_duplicated_names():
    X, y = _duplicated()
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\]"):
        CounterfactualFairness(LogisticRegression(), sensitive_features="s").fit(X, y)
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\]"):
        esl_decomposition(LogisticRegression(), X.drop(columns="s"), y,
                          sensitive_features=X["s"], values=("equal_surplus",))


# ------------------------------------------------------------ '=' in names and values


def _eq_frame():
    X, y = _plain()
    X = X.assign(c=X.c.map({"u": "k=1", "v": "k=2"}))
    return X.set_axis(["a=1", "b", "c=", "s=x"], axis=1), y


def test_equals_signs_give_unique_structured_terms_and_exact_decisions():
    X, y = _eq_frame()
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["c="]), ("passthrough", ["a=1", "b"])),
        LogisticRegression()).fit(X, y)
    rule = linear_rule(model)
    assert rule.coef.index.is_unique
    assert [(t.kind, t.column, t.category) for t in rule.terms] == [
        ("numeric", "a=1", None), ("numeric", "b", None),
        ("category", "c=", "k=1"), ("category", "c=", "k=2")]
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X),
                               atol=1e-12)
    scaler = IntegerWeightScaler(model, max_multiplier=30).fit(X, y)
    assert scaler.terms_.tolist() == rule.coef.index.tolist()
    assert scaler.agreement_ > 0.95


def test_verifier_with_equals_in_names_equals_plain_names():
    X, y = _eq_frame()
    Xp, _ = _plain()
    ct = make_column_transformer((OneHotEncoder(), ["c="]), ("passthrough", ["a=1", "b"]))
    a = FairnessVerifier(make_pipeline(ct, LogisticRegression()), sensitive_features="s=x",
                         network="independent", random_state=0).fit(X, y)
    ctp = make_column_transformer((OneHotEncoder(), ["c"]), ("passthrough", ["a", "b"]))
    b = FairnessVerifier(make_pipeline(ctp, LogisticRegression()), sensitive_features="s",
                         network="independent", random_state=0).fit(Xp, y)
    # the same seed: n_bins="auto" is chosen on the same held-out rows (with None
    # each fit draws its own split and may settle on other bins)
    assert a.n_bins_ == b.n_bins_
    np.testing.assert_allclose(a.groups_["positive_rate"], b.groups_["positive_rate"])


def test_audit_on_a_csv_with_equals_and_integer_like_names(tmp_path, capsys):
    from skfairverify.audit import main

    X, y = _eq_frame()
    frame = X.set_axis(["a=1", "0", "c=", "s=x"], axis=1).assign(label=y)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    status = main(["audit", "--csv", str(path), "--target", "label", "--positive", "1",
                   "--sensitive-features", "s=x", "--steps", "verify", "--quiet"])
    out = capsys.readouterr()
    assert status == 0, out.err
