"""CounterfactualFairness takes sensitive_features as names or values (issue 15).

* Values passed to ``fit`` / ``evaluate`` (or to the constructor, for ``fit``) give
  exactly the audit of ``X`` with the same values as a column the model does not
  read: identical CounterfactualResult numbers, with the kd-tree and the linear
  generator, and identical proxy correlations.
* Several attributes are audited by their intersection: the same numbers as a
  compound column built by hand, by name and by value; ``privileged`` is required
  with more than two groups and may be given as a tuple.
* One source per call: clear errors otherwise.
* The scorers route metadata values through the new method parameter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import CounterfactualFairness
from skfairverify.counterfactual import privileged_group
from skfairverify.metrics import make_cflips_scorer, make_ndccf_scorer

FEATURES = ["proxy", "skill", "job"]


def make_data(n=400, seed=0):
    """Features (one categorical), then ``sex`` and ``race`` as the last columns."""
    rng = np.random.default_rng(seed)
    male = rng.random(n) < 0.55
    race = rng.choice(["A", "B", "W"], n, p=[0.2, 0.3, 0.5])
    X = pd.DataFrame({
        "proxy": 1.0 * male + 0.5 * (race == "W") + rng.normal(0, 0.6, n),
        "skill": rng.normal(size=n),
        "job": rng.choice(["a", "b", "c"], n),
        "sex": np.where(male, "M", "F"),
        "race": race,
    })
    y = (X.skill + X.proxy + rng.normal(0, 0.3, n) > 0.9).astype(int)
    return X, y


def model():
    """Reads proxy and skill only (never sex or race)."""
    return make_pipeline(ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"])]),
                         LogisticRegression())


def classifier():
    """Sensitive classifier on the non-sensitive columns (any frame holding them)."""
    return make_pipeline(
        ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"]),
                           ("c", OneHotEncoder(handle_unknown="ignore"), ["job"])]),
        LogisticRegression())


def audit(sensitive=None, **params):
    params = {"k": 4, "sensitive_classifier": classifier(), "random_state": 0, **params}
    return CounterfactualFairness(model(), sensitive, **params)


def assert_same_result(a, b):
    pd.testing.assert_frame_equal(a.per_k, b.per_k)
    assert a.cflips == b.cflips and a.ndccf == b.ndccf
    assert a.n_refused == b.n_refused and a.n_refused_all == b.n_refused_all
    assert a.n_without_counterfactuals == b.n_without_counterfactuals
    assert a.privileged == b.privileged and a.k == b.k
    for key in ("accuracy", "roc_auc", "held_out"):
        assert a.sensitive_classifier[key] == b.sensitive_classifier[key]
    pd.testing.assert_frame_equal(a.sensitive_classifier["by_group"],
                                  b.sensitive_classifier["by_group"])
    np.testing.assert_array_equal(a.counterfactuals.distances.to_numpy(),
                                  b.counterfactuals.distances.to_numpy())
    assert len(a.counterfactuals.counterfactuals) > 0


@pytest.fixture(scope="module")
def data():
    X, y = make_data()
    return X.iloc[:300], y.iloc[:300], X.iloc[300:], y.iloc[300:]


# --------------------------------------------------------------------------- values
@pytest.mark.parametrize("generator", ["kdtree", "linear"])
def test_values_equal_a_column_the_model_does_not_read(data, generator):
    X, y, Xt, _ = data
    X1, Xt1 = X.drop(columns="race"), Xt.drop(columns="race")  # sex is the last column
    by_name = audit("sex", generator=generator).fit(X1, y)
    expected = by_name.evaluate(Xt1)
    assert expected.cflips["delta"] > 0.1  # the proxy: a real gap, not 0 = 0

    Xv, Xtv = X[FEATURES], Xt[FEATURES]
    by_fit = audit(generator=generator).fit(Xv, y, sensitive_features=X["sex"])
    assert_same_result(by_fit.evaluate(Xtv, sensitive_features=Xt["sex"]), expected)
    assert list(by_fit.estimator_.feature_names_in_) == FEATURES  # never saw the values
    assert by_fit.sensitive_features_ == ["sex"]
    assert by_fit.privileged_ == by_name.privileged_ == "M"
    pd.testing.assert_series_equal(by_fit.selection_rates_, by_name.selection_rates_)

    # values in the constructor (a plain array: unnamed) apply to fit
    by_init = audit(X["sex"].to_numpy(), generator=generator).fit(Xv, y)
    assert by_init.sensitive_features_ == ["sensitive_features"]
    assert_same_result(by_init.evaluate(Xtv, sensitive_features=list(Xt["sex"])), expected)


def test_values_keep_the_sensitive_value_and_proxies_agree(data):
    X, y, Xt, _ = data
    X1, Xt1 = X.drop(columns="race"), Xt.drop(columns="race")
    by_name = audit("sex").fit(X1, y)
    by_value = audit().fit(X[FEATURES], y, sensitive_features=X["sex"])
    res = by_value.evaluate(Xt[FEATURES], sensitive_features=Xt["sex"])
    cs = res.counterfactuals
    # each counterfactual carries its query's sensitive value (immutable)
    query_sex = Xt["sex"].to_numpy()[Xt.index.get_indexer(
        cs.counterfactuals.index.get_level_values("row"))]
    np.testing.assert_array_equal(cs.counterfactuals["sex"].to_numpy(), query_sex)
    pd.testing.assert_frame_equal(
        by_value.proxy_correlations(Xt[FEATURES], sensitive_features=Xt["sex"]),
        by_name.proxy_correlations(Xt1))


def test_values_with_a_clashing_name_are_appended_under_another(data):
    X, y, Xt, _ = data
    # a column "sex" the model reads, and separate values also called "sex"
    Xc = X[FEATURES].assign(sex=X["proxy"])
    fitted = audit().fit(Xc, y, sensitive_features=X["sex"])
    assert fitted.sensitive_features_ == ["__sensitive_0__"]
    res = fitted.evaluate(Xt[FEATURES].assign(sex=Xt["proxy"]),
                          sensitive_features=Xt["sex"])
    assert set(res.n_refused) == {"privileged", "unprivileged"}


# --------------------------------------------------------------------------- intersections
def _compound(frame):
    return frame["sex"] + "|" + frame["race"]


def test_intersection_equals_a_compound_column_built_by_hand(data):
    X, y, Xt, _ = data
    by_hand = audit("group", privileged="M|W").fit(X[FEATURES].assign(group=_compound(X)), y)
    expected = by_hand.evaluate(Xt[FEATURES].assign(group=_compound(Xt)))
    assert sorted(by_hand.groups_) == sorted(_compound(X).unique())  # 6 groups

    by_names = audit(["sex", "race"], privileged="M|W").fit(X, y)
    assert by_names.sensitive_features_ == ["sex", "race"]
    assert_same_result(by_names.evaluate(Xt), expected)

    by_values = audit(privileged=("M", "W")).fit(X[FEATURES], y,
                                                  sensitive_features=X[["sex", "race"]])
    assert by_values.privileged_ == "M|W"
    assert_same_result(by_values.evaluate(Xt[FEATURES], sensitive_features=Xt[["sex", "race"]]),
                       expected)
    # a 2-d array of values: the same groups
    by_array = audit(privileged="M|W").fit(X[FEATURES], y,
                                           sensitive_features=X[["sex", "race"]].to_numpy())
    assert_same_result(
        by_array.evaluate(Xt[FEATURES], sensitive_features=Xt[["sex", "race"]].to_numpy()),
        expected)


def test_intersection_with_more_than_two_groups_privileged_by_rule(data):
    X, y, _, _ = data
    fitted = audit(["sex", "race"]).fit(X, y)  # was refused; now the stated rule (issue 27)
    labels = X["sex"].astype(str) + "|" + X["race"].astype(str)
    chosen = privileged_group(fitted.estimator_.predict(X), labels)
    assert fitted.privileged_ == chosen.label
    assert fitted.privileged_rule_ == chosen.rule
    assert len(fitted.groups_) == 6
    with pytest.raises(ValueError, match=r"privileged='M' is not a value of 'sex' x 'race'"):
        audit(["sex", "race"], privileged="M").fit(X, y)


def test_intersection_of_two_groups_chooses_privileged(data):
    X, y, Xt, _ = data
    X2 = X.assign(race=np.where(X.sex == "M", "W", "B"))  # sex and race coincide
    fitted = audit(["sex", "race"]).fit(X2, y)
    assert sorted(fitted.groups_) == ["F|B", "M|W"]
    assert fitted.privileged_ == "M|W"
    assert fitted.selection_rates_.index.name == "sex|race"
    alone = audit("sex").fit(X2.drop(columns="race"), y)
    Xt2 = Xt.assign(race=np.where(Xt.sex == "M", "W", "B"))
    a, b = fitted.evaluate(Xt2), alone.evaluate(Xt2.drop(columns="race"))
    pd.testing.assert_frame_equal(a.per_k, b.per_k)


def test_compound_separator_in_values_is_refused(data):
    X, y, _, _ = data
    Xs = X.assign(race=X.race.str.replace("W", "W|x"))
    with pytest.raises(ValueError, match=r"'race' has values containing '\|'"):
        audit(["sex", "race"], privileged="M|W|x").fit(Xs, y)


# --------------------------------------------------------------------------- errors
def test_one_source_per_call(data):
    X, y, Xt, _ = data
    with pytest.raises(ValueError, match="sensitive features twice"):
        audit("sex").fit(X, y, sensitive_features=X["sex"])
    with pytest.raises(ValueError, match="no sensitive features"):
        audit().fit(X, y)
    with pytest.raises(TypeError, match=r"takes the values.*constructor"):
        audit().fit(X, y, sensitive_features="sex")
    with pytest.raises(TypeError, match=r"takes the values.*constructor"):
        audit().fit(X, y, sensitive_features=["sex", "race"])
    with pytest.raises(ValueError, match="3 rows but X has 300"):
        audit().fit(X[FEATURES], y, sensitive_features=["F", "M", "F"])

    by_name = audit("sex").fit(X.drop(columns="race"), y)
    with pytest.raises(ValueError, match="reads them from X"):
        by_name.evaluate(Xt.drop(columns="race"), sensitive_features=Xt["sex"])
    with pytest.raises(ValueError, match="'sex' not found"):
        by_name.evaluate(Xt[FEATURES])

    by_value = audit(X["sex"]).fit(X[FEATURES], y)  # constructor values: fit only
    with pytest.raises(ValueError, match=r"fitted with sensitive values; pass evaluate"):
        by_value.evaluate(Xt[FEATURES])
    with pytest.raises(ValueError, match=r"fitted with sensitive values; pass proxy_corr"):
        by_value.proxy_correlations(Xt[FEATURES])
    with pytest.raises(ValueError, match="2 attribute"):
        by_value.evaluate(Xt[FEATURES], sensitive_features=Xt[["sex", "race"]])
    with pytest.raises(ValueError, match="100 rows but X has 99"):
        by_value.evaluate(Xt[FEATURES].iloc[1:], sensitive_features=Xt["sex"])
    with pytest.raises(ValueError, match=r"\['N'\] not seen in fit"):
        by_value.evaluate(Xt[FEATURES], sensitive_features=Xt["sex"].replace("F", "N"))


def test_clone_keeps_constructor_values(data):
    X, y, Xt, _ = data
    original = audit(X["sex"].to_numpy())
    copy = sklearn.base.clone(original)
    np.testing.assert_array_equal(copy.sensitive_features, X["sex"].to_numpy())
    a = original.fit(X[FEATURES], y).evaluate(Xt[FEATURES], sensitive_features=Xt["sex"])
    b = copy.fit(X[FEATURES], y).evaluate(Xt[FEATURES], sensitive_features=Xt["sex"])
    assert_same_result(a, b)


# --------------------------------------------------------------------------- scorers
@pytest.mark.parametrize("make", [make_cflips_scorer, make_ndccf_scorer])
def test_scorer_metadata_values_equal_the_named_column(data, make):
    X, y, _, _ = data
    fitted = model().fit(X, y)
    params = {"k": 3, "sensitive_classifier": classifier(), "random_state": 0}
    by_name = make(sensitive_features="sex", **params)(fitted, X.drop(columns="race"), y)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make(**params).set_score_request(sensitive_features=True)
        by_value = scorer(fitted, X[FEATURES], y, sensitive_features=X["sex"])
    assert by_value == by_name < 0


def test_scorer_intersection_by_name_and_by_value(data):
    X, y, _, _ = data
    fitted = model().fit(X, y)
    params = {"k": 3, "sensitive_classifier": classifier(), "random_state": 0,
              "privileged": "M|W"}
    by_name = make_cflips_scorer(sensitive_features=["sex", "race"], **params)(fitted, X, y)
    by_hand = make_cflips_scorer(sensitive_features="group", **params)(
        fitted, X[FEATURES].assign(group=_compound(X)), y)
    assert by_name == by_hand < 0
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_cflips_scorer(**params).set_score_request(sensitive_features=True)
        assert scorer(fitted, X[FEATURES], y, sensitive_features=X[["sex", "race"]]) == by_name
        search = GridSearchCV(model(), {"logisticregression__C": [0.1, 1.0]}, scoring=scorer,
                              cv=KFold(2)).fit(X[FEATURES], y,
                                             sensitive_features=X[["sex", "race"]])
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_weighted_values_equal_the_weighted_column(data):
    X, y, Xt, _ = data
    rng = np.random.default_rng(1)
    w, wt = rng.integers(0, 4, len(X)).astype(float), rng.integers(0, 4, len(Xt)).astype(float)
    X1, Xt1 = X.drop(columns="race"), Xt.drop(columns="race")
    expected = audit("sex").fit(X1, y, sample_weight=w).evaluate(Xt1, sample_weight=wt)
    by_value = audit().fit(X[FEATURES], y, sensitive_features=X["sex"], sample_weight=w)
    got = by_value.evaluate(Xt[FEATURES], sensitive_features=Xt["sex"], sample_weight=wt)
    assert_same_result(got, expected)
    assert isinstance(got.n_refused["privileged"], float)
