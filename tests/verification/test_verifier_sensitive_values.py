"""FairnessVerifier with the sensitive values themselves (fairlearn's convention).

The reference is the same values as a column of ``X`` named in the constructor, with a
model that does not read that column: every verified number must be the same, and the
model must never see the values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import FairnessVerifier
from skfairverify.metrics import make_verifier_scorer

SENSITIVE = ["sex", "race"]


def _data(n=1200, seed=3):
    """sex, race -> proxy -> label; other and job are read by the model too."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    proxy = rng.normal(np.where(sex == "M", 1.0, 0.0) + 0.5 * (race == "A"), 1.0)
    other = rng.normal(0.0, 1.0, n)
    job = rng.choice(["x", "y"], n)
    X = pd.DataFrame({"sex": sex, "race": race, "proxy": proxy, "other": other, "job": job})
    y = pd.Series((proxy + other + (job == "x") + rng.normal(0, 1, n) > 1).astype(int))
    return X, y


def _unaware():
    """A pipeline that reads proxy, other and job, and drops everything else."""
    return make_pipeline(
        make_column_transformer(
            (StandardScaler(), ["proxy", "other"]),
            (OneHotEncoder(), ["job"]),
            remainder="drop",
        ),
        LogisticRegression(),
    )


def _split(X, y, n_fit=800):
    return X.iloc[:n_fit], y.iloc[:n_fit], X.iloc[n_fit:], y.iloc[n_fit:]


def _assert_same(by_values, by_name):
    assert_frame_equal(by_values.groups_, by_name.groups_)
    assert by_values.metrics_ == by_name.metrics_
    assert by_values.most_favored_group_ == by_name.most_favored_group_
    assert by_values.least_favored_group_ == by_name.least_favored_group_
    assert by_values.agreement_ == by_name.agreement_
    assert by_values.multiplier_ == by_name.multiplier_
    assert by_values.n_bins_ == by_name.n_bins_
    assert by_values.sensitive_features_ == by_name.sensitive_features_
    assert sorted(by_values.variables_) == sorted(by_name.variables_)


def _assert_same_result(res_values, res_name):
    assert_frame_equal(res_values.groups, res_name.groups)
    assert res_values.metrics == res_name.metrics
    assert res_values.most_favored_group == res_name.most_favored_group
    assert res_values.least_favored_group == res_name.least_favored_group
    assert res_values.agreement == res_name.agreement


# ------------------------------------------------------------------ same numbers


@pytest.mark.parametrize("sensitive", [["sex"], SENSITIVE])
def test_values_equal_named_columns_pipeline(sensitive):
    """Learned network, a pipeline dropping the column: fit and verify agree exactly."""
    X, y = _data()
    X_fit, y_fit, X_test, y_test = _split(X, y)
    by_name = FairnessVerifier(_unaware(), sensitive, random_state=0).fit(X_fit, y_fit)
    values = X_fit[sensitive[0]] if len(sensitive) == 1 else X_fit[sensitive]
    by_values = FairnessVerifier(_unaware(), random_state=0).fit(
        X_fit.drop(columns=SENSITIVE), y_fit, sensitive_features=values)
    _assert_same(by_values, by_name)
    assert by_values.sensitive_features_ == sensitive
    assert len(by_values.groups_) == (2 if len(sensitive) == 1 else 6)
    test_values = X_test[sensitive[0]] if len(sensitive) == 1 else X_test[sensitive]
    _assert_same_result(
        by_values.verify(X_test.drop(columns=SENSITIVE), y_test,
                         sensitive_features=test_values),
        by_name.verify(X_test, y_test),
    )


def test_the_model_never_sees_the_values():
    X, y = _data(n=400)
    X_model = X.drop(columns=SENSITIVE)
    ver = FairnessVerifier(_unaware(), network="independent", n_bins=10).fit(
        X_model, y, sensitive_features=X["sex"])
    assert list(ver.estimator_[0].feature_names_in_) == list(X_model.columns)
    assert list(ver.feature_names_in_) == list(X_model.columns)
    assert ver.n_features_in_ == X_model.shape[1]
    np.testing.assert_array_equal(ver.predict(X_model), ver.estimator_.predict(X_model))
    assert "sex" in ver.variables_ and ver.weights_["sex"].eq(0).all()


def _numeric(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"x": rng.normal(a, 1.0), "z": rng.normal(0.0, 1.0, n)})
    y = (X["x"] + X["z"] + rng.normal(0, 1, n) > 0.5).astype(int)
    return X, y, a


@pytest.mark.parametrize("kind", ["series", "ndarray", "list", "constructor"])
def test_values_equal_named_column_plain_estimator(kind):
    """A LogisticRegression fitted on the other columns only, the values apart."""
    X, y, a = _numeric()
    name = "a" if kind == "series" else "sensitive_features"
    frozen = FrozenEstimator(LogisticRegression().fit(X, y))
    params = dict(n_bins=10, random_state=0)
    by_name = FairnessVerifier(frozen, name, **params).fit(X.assign(**{name: a}), y)
    values = {"series": pd.Series(a, name="a"), "ndarray": a, "list": a.tolist(),
              "constructor": a}[kind]
    if kind == "constructor":
        by_values = FairnessVerifier(LogisticRegression(), values, **params).fit(X, y)
    else:
        by_values = FairnessVerifier(LogisticRegression(), **params).fit(
            X, y, sensitive_features=values)
    _assert_same(by_values, by_name)
    assert by_values.sensitive_features_ == [name]
    assert by_values.groups_[name].tolist() == by_name.groups_[name].tolist() == [0, 1]
    assert_frame_equal(by_values.fairness_influence().table,
                       by_name.fairness_influence().table)
    _assert_same_result(by_values.verify(X, y, sensitive_features=values),
                        by_name.verify(X.assign(**{name: a}), y))


def test_array_input_and_two_dimensional_values():
    """X as an ndarray, two attributes as a 2-d array: intersections as groups."""
    X, y = _data(n=600)
    X_num = X[["proxy", "other"]].to_numpy()
    codes = np.column_stack([X["sex"].eq("M").astype(int), X["race"].map(
        {"A": 0, "B": 1, "C": 2})])
    frozen = FrozenEstimator(LogisticRegression().fit(X_num, y))
    params = dict(network="independent", n_bins=10, random_state=0)
    named = pd.DataFrame(X_num, columns=["x0", "x1"]).assign(
        sensitive_features_0=codes[:, 0], sensitive_features_1=codes[:, 1])
    by_name = FairnessVerifier(frozen, ["sensitive_features_0", "sensitive_features_1"],
                               **params).fit(named, y)
    by_values = FairnessVerifier(LogisticRegression(), **params).fit(
        X_num, y, sensitive_features=codes)
    _assert_same(by_values, by_name)
    assert len(by_values.groups_) == 6


def test_values_are_taken_by_position_not_by_index():
    """As fairlearn: the i-th value belongs to the i-th row, whatever the indexes."""
    X, y = _data(n=500)
    X = X.set_index(pd.Index(np.arange(len(X))[::-1] * 7))
    y = y.set_axis(X.index)
    params = dict(network="independent", n_bins=10, random_state=0)
    by_name = FairnessVerifier(_unaware(), "sex", **params).fit(X, y)
    by_values = FairnessVerifier(_unaware(), **params).fit(
        X.drop(columns=SENSITIVE), y, sensitive_features=X["sex"].reset_index(drop=True))
    _assert_same(by_values, by_name)


def test_sample_weight_with_values():
    X, y, a = _numeric(n=600, seed=4)
    w = np.random.default_rng(1).integers(0, 3, len(X))
    params = dict(network="independent", n_bins=8, multiplier=100, random_state=0)
    by_values = FairnessVerifier(LogisticRegression(), **params).fit(
        X, y, sensitive_features=a, sample_weight=w)
    frozen = FrozenEstimator(LogisticRegression().fit(X, y, sample_weight=w))
    by_name = FairnessVerifier(frozen, "sensitive_features", **params).fit(
        X.assign(sensitive_features=a), y, sample_weight=w)
    _assert_same(by_values, by_name)


# ------------------------------------------------------------------ errors


@pytest.fixture
def small():
    X, y = _data(n=300)
    return X.drop(columns=SENSITIVE), y, X["sex"]


def _ver(sensitive_features=None):
    return FairnessVerifier(_unaware(), sensitive_features, network="independent", n_bins=20,
                            random_state=0)


def test_wrong_length(small):
    X, y, sex = small
    with pytest.raises(ValueError, match="sensitive_features has 299 rows but X has 300"):
        _ver().fit(X, y, sensitive_features=sex.iloc[:-1])
    ver = _ver().fit(X, y, sensitive_features=sex)
    with pytest.raises(ValueError, match="sensitive_features has 300 rows but X has 100"):
        ver.verify(X.iloc[:100], y.iloc[:100], sensitive_features=sex)


def test_nan_values(small):
    X, y, sex = small
    nan = sex.copy()
    nan.iloc[5] = np.nan
    with pytest.raises(ValueError, match="sensitive_features column 'sex' contains NaN"):
        _ver().fit(X, y, sensitive_features=nan)


def test_single_group_and_continuous_values(small):
    X, y, sex = small
    with pytest.raises(ValueError, match="single group"):
        _ver().fit(X, y, sensitive_features=np.full(len(X), "F"))
    with pytest.raises(ValueError, match="'age' is continuous"):
        _ver().fit(X, y, sensitive_features=pd.Series(np.linspace(18, 80, len(X)),
                                                      name="age"))


def test_both_sources_refused(small):
    X, y, sex = small
    with pytest.raises(ValueError, match="fit got the sensitive features twice"):
        _ver("proxy").fit(X, y, sensitive_features=sex)
    with pytest.raises(ValueError, match="fit got the sensitive features twice"):
        _ver(sex).fit(X, y, sensitive_features=sex)
    ver = _ver("job").fit(X, y)
    with pytest.raises(ValueError, match="verify got the sensitive features twice"):
        ver.verify(X, y, sensitive_features=sex)


def test_no_source_refused(small):
    X, y, sex = small
    with pytest.raises(ValueError, match=r"fit needs the sensitive features.*"
                                         r"fit\(X, y, sensitive_features=\.\.\.\)"):
        _ver().fit(X, y)
    ver = _ver().fit(X, y, sensitive_features=sex)
    with pytest.raises(ValueError, match=r"verify needs the sensitive features"):
        ver.verify(X, y)


def test_verify_needs_values_after_constructor_values(small):
    X, y, sex = small
    ver = _ver(sex).fit(X, y)
    assert ver.sensitive_features_ == ["sex"]
    with pytest.raises(ValueError, match=r"values of the rows of fit.*"
                                         r"verify\(X, y, sensitive_features=\.\.\.\)"):
        ver.verify(X, y)
    _assert_same_result(ver.verify(X, y, sensitive_features=sex),
                        _ver().fit(X, y, sensitive_features=sex).verify(
                            X, y, sensitive_features=sex))


def test_name_clash_refused(small):
    X, y, sex = small
    with pytest.raises(ValueError, match=r"named \['proxy'\], as column\(s\) of X"):
        _ver().fit(X, y, sensitive_features=sex.rename("proxy"))
    with pytest.raises(ValueError, match="duplicate column names"):
        _ver().fit(X, y, sensitive_features=pd.concat([sex, sex], axis=1))


def test_verify_values_named_as_in_fit(small):
    X, y, sex = small
    ver = _ver().fit(X, y, sensitive_features=sex)
    with pytest.raises(ValueError, match=r"named \['gender'\], but fit used \['sex'\]"):
        ver.verify(X, y, sensitive_features=sex.rename("gender"))


# ------------------------------------------------------------------ scorer


def test_scorer_metadata_values_with_a_clashing_column():
    """Metadata values named as a column of X the model drops: same score as by name."""
    X, y = _data(n=500)
    model = _unaware().fit(X, y)
    params = dict(network="independent", n_bins=10, random_state=0)
    by_name = make_verifier_scorer(sensitive_features="sex", **params)(model, X, y)
    by_values = make_verifier_scorer(**params)(model, X, y, sensitive_features=X["sex"])
    apart = make_verifier_scorer(**params)(model, X.drop(columns=SENSITIVE), y,
                                           sensitive_features=X["sex"])
    assert by_values == by_name == apart
