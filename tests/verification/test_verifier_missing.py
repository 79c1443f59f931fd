"""Missing values as data: a state of their own, read by the model as it reads them.

Every test compares the verifier's rates with an independent computation: the joint
distribution of the fitted network enumerated state by state, each joint state turned
into a raw row (a value, a category, or NaN for a missing state) and decided by the
model's own ``predict`` (its pipeline's imputer, or its native handling of NaN).
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.impute import KNNImputer, MissingIndicator, SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skfairverify import FairnessVerifier, IntegerWeightScaler, linear_rule


def _data(n=1500, seed=0):
    """A 3-group sensitive column, a discrete x missing more often in group 'c', a
    category z with missing values, a continuous w; labels from all of them."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    x = rng.integers(0, 4, n).astype(float) + (a == "b")
    x[rng.random(n) < np.where(a == "c", 0.4, 0.1)] = np.nan
    z = rng.choice(["u", "v", "w"], n).astype(object)
    z[rng.random(n) < 0.15] = np.nan
    score = np.nan_to_num(x, nan=-1.0) * 0.8 + (z == "v") - (a == "a") + rng.normal(size=n)
    return pd.DataFrame({"a": a, "x": x, "z": z}), (score > 1.0).astype(int)


def _joint(net):
    """Every joint state of ``net`` (rows of codes) and its probability."""
    cards = net.cardinalities
    states = np.array(list(itertools.product(*(range(c) for c in cards))))
    prob = np.ones(len(states))
    for i in range(net.n_variables):
        parents = list(net.parents[i])
        idx = tuple(states[:, p] for p in parents) + (states[:, i],)
        prob *= np.asarray(net.cpts[i])[idx]
    return states, prob


def _state_rows(ver, states, fit_rows):
    """The raw rows of the joint states: every state's value (NaN for a missing one),
    each column in its dtype in ``fit_rows`` (the rows of ``fit``)."""
    net = ver.network_
    values = {}
    for i, name in enumerate(net.names):
        labels = np.array(net.state_names[i], dtype=object)
        values[name] = labels[states[:, i]]
    frame = pd.DataFrame(values)[list(ver.feature_names_in_)]
    for name in frame.columns:
        frame[name] = frame[name].astype(fit_rows[name].dtype)
    return frame


def _model_rates(ver, fit_rows, sensitive="a"):
    """Pr[model(row) = positive | a] under the fitted network, by enumeration."""
    net = ver.network_
    states, prob = _joint(net)
    rows = _state_rows(ver, states, fit_rows)
    decided = np.asarray(ver.estimator_.predict(rows)) == ver.classes_[1]
    i = net.names.index(sensitive)
    out = {}
    for code, group in enumerate(net.state_names[i]):
        mask = states[:, i] == code
        out[group] = float(prob[mask & decided].sum() / prob[mask].sum())
    return out


def _linear_pipeline(indicator=False):
    return make_pipeline(
        make_column_transformer(
            (make_pipeline(SimpleImputer(strategy="median", add_indicator=indicator),
                           StandardScaler()), ["x"]),
            (make_pipeline(SimpleImputer(strategy="most_frequent"),
                           OneHotEncoder(handle_unknown="ignore")), ["z"]),
        ),
        LogisticRegression(),
    )


@pytest.mark.parametrize("indicator", [False, True])
def test_linear_rule_reads_the_imputer(indicator):
    """The rule equals the model on rows with missing values (imputed, indicator)."""
    X, y = _data()
    model = _linear_pipeline(indicator).fit(X, y)
    rule = linear_rule(model)
    assert rule.imputed["x"] == float(np.nanmedian(X["x"]))
    assert rule.imputed["z"] == X["z"].mode()[0]
    assert rule.missing_features == (["x"] if indicator else [])
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X),
                               atol=1e-10)
    scaler = IntegerWeightScaler(model, multiplier=1000).fit(X, y)
    assert np.mean(scaler.predict(X) == model.predict(X)) > 0.99


def test_linear_rule_reads_an_imputer_after_a_scaler_and_missing_indicator():
    X, y = _data()
    model = make_pipeline(
        make_column_transformer(
            (make_pipeline(StandardScaler(), SimpleImputer(fill_value=1.5,
                                                           strategy="constant")), ["x"]),
            (MissingIndicator(), ["z"]),
        ),
        LogisticRegression(),
    ).fit(X, y)
    rule = linear_rule(model)
    scaler = model[0].named_transformers_["pipeline"][0]
    # the raw value that the scaler maps to the imputed 1.5
    assert rule.imputed["x"] == pytest.approx(1.5 * scaler.scale_[0] + scaler.mean_[0])
    assert rule.missing_features == ["z"] and rule.categorical_features == {}
    np.testing.assert_allclose(rule.decision_function(X), model.decision_function(X),
                               atol=1e-10)


def test_imputers_that_cannot_be_read_are_named():
    X, y = _data()
    knn = make_pipeline(make_column_transformer((KNNImputer(), ["x"])),
                        LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match="KNNImputer.*from the other columns.*SimpleImputer"):
        linear_rule(knn)
    marker = make_pipeline(make_column_transformer(
        (SimpleImputer(missing_values=-1.0), ["x"])), LogisticRegression()).fit(
        X.fillna({"x": -1.0}), y)
    with pytest.raises(TypeError, match=r"missing_values=-1.0.*X.replace"):
        linear_rule(marker)
    # the verifier then verifies the KNN model by sampling (it gets the NaN as they are)
    ver = FairnessVerifier(knn, "a", tolerance=0.05, n_draws=0, random_state=0).fit(X, y)
    assert ver.method_ == "sampling"


def test_a_model_that_cannot_read_missing_values_is_named():
    X, y = _data()
    plain = make_pipeline(make_column_transformer((StandardScaler(), ["x"])),
                          LogisticRegression())
    with pytest.raises(ValueError, match=r"missing values \(NaN\) in the column\(s\) 'x' "
                                         r"\(\d+\), 'z' \(\d+\).*SimpleImputer"):
        FairnessVerifier(plain, "a").fit(X, y)
    with pytest.raises(ValueError, match="Sensitive feature 'a' has 1 missing value"):
        FairnessVerifier(_linear_pipeline(), "a").fit(X.assign(a=X["a"].where(
            X.index != 3)), y)


@pytest.mark.parametrize("indicator", [False, True])
def test_linear_path_rates_equal_the_model_on_every_state(indicator):
    """Exact rates with a missing state: the model decides every joint state of the
    network as the verified integer rule does, and the rates equal the enumeration."""
    X, y = _data()
    ver = FairnessVerifier(_linear_pipeline(indicator), "a", n_bins=10, multiplier=1000,
                           n_draws=0, random_state=0).fit(X, y)
    assert ver.method_ == "exact" and ver.variables_ == ["a", "x", "z"]
    i_x, i_z = ver.variables_.index("x"), ver.variables_.index("z")
    assert np.isnan(ver.network_.state_names[i_x][-1])  # the missing state
    assert any(pd.isna(s) for s in ver.network_.state_names[i_z])
    expected = _model_rates(ver, X)
    got = ver.groups_.set_index("a")["positive_rate"]
    for group, rate in expected.items():
        assert got[group] == pytest.approx(rate, abs=1e-9)
    # missingness depends on the group: the network learned it (x's parent is a)
    assert ver.variables_.index("a") in ver.network_.parents[i_x]


def test_tree_path_native_nan_and_imputed():
    """The tree's own routing of NaN (missing_go_to_left) and an imputer before it."""
    X, y = _data()
    X = X.assign(z=X["z"].map({"u": 0.0, "v": 1.0, "w": 2.0}))
    native = DecisionTreeClassifier(max_depth=4, random_state=0)
    imputed = make_pipeline(SimpleImputer(strategy="mean"),
                            DecisionTreeClassifier(max_depth=4, random_state=0))
    for model in (native, imputed):
        Xm = X[["x", "z"]].assign(a=(X["a"] == "b").astype(int) + 2 * (X["a"] == "c"))
        ver = FairnessVerifier(model, "a", n_draws=0, random_state=0).fit(Xm, y)
        assert ver.method_ == "exact" and ver.rule_ is None  # the tree path
        assert ver.groups_["a"].dtype == np.int64  # integer groups stay integers
        expected = _model_rates(ver, Xm)
        got = ver.groups_.set_index("a")["positive_rate"]
        for group, rate in expected.items():
            assert got[group] == pytest.approx(rate, abs=1e-9)


def test_sampling_path_gives_nan_to_a_model_that_handles_it():
    """HistGradientBoosting on raw NaN: the missing state is drawn as NaN; the sampled
    rates' Monte Carlo intervals hold the enumerated rates of the model."""
    X, y = _data()
    X = X.assign(z=X["z"].astype("category"), a=X["a"].astype("category"))
    hgb = HistGradientBoostingClassifier(max_iter=30, categorical_features="from_dtype",
                                         random_state=0)
    ver = FairnessVerifier(hgb, "a", tolerance=0.02, n_draws=0, random_state=0).fit(X, y)
    assert ver.method_ == "sampling"
    expected = _model_rates(ver, X)
    groups = ver.groups_.set_index("a")
    for group, rate in expected.items():
        assert groups.loc[group, "ci_low"] <= rate <= groups.loc[group, "ci_high"]


def test_verify_adds_a_missing_state_the_fit_rows_lacked():
    X, y = _data()
    complete = X["x"].notna().to_numpy()
    ver = FairnessVerifier(_linear_pipeline(), "a", n_bins=10, multiplier=1000, n_draws=0,
                           random_state=0).fit(X[complete], y[complete])
    i = ver.variables_.index("x")
    assert not any(pd.isna(s) for s in ver.network_.state_names[i])
    result = ver.verify(X, y)
    assert set(result.groups["a"]) == {"a", "b", "c"}
    assert result.agreement > 0.99


def test_support_reference_keeps_the_missing_share(rebuilt):
    """FIF's support reference spreads the observed share over the values and keeps the
    share of missing rows on the missing state."""
    X, y = _data()
    ver = FairnessVerifier(_linear_pipeline(), "a", n_bins=10, n_draws=0,
                           random_state=0).fit(X, y)
    var = rebuilt(ver, X, y).encoding.variables[ver.variables_.index("x")]
    dist = var.support_distribution()
    share = float(X["x"].isna().mean())
    assert dist[-1] == pytest.approx(share)
    np.testing.assert_allclose(dist[:-1], (1 - share) / (len(dist) - 1))


def test_titanic_with_its_missing_values(rebuilt):
    """The raw Titanic file (Age, Embarked, Cabin missing): an imputer pipeline verified
    exactly on every one of the 891 rows, HistGradientBoosting on the raw NaN sampled."""
    from skfairverify.datasets import load_titanic

    titanic = load_titanic()
    X = titanic.data[["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked",
                      "Cabin"]]
    y = titanic.target
    numeric = ["Age", "SibSp", "Parch", "Fare"]
    model = make_pipeline(
        make_column_transformer(
            (make_pipeline(SimpleImputer(strategy="median", add_indicator=True),
                           StandardScaler()), numeric),
            (make_pipeline(SimpleImputer(strategy="most_frequent"),
                           OneHotEncoder(handle_unknown="ignore")), ["Embarked"]),
            (MissingIndicator(), ["Cabin"]),  # whether a cabin is known
        ),
        LogisticRegression(max_iter=1000),
    )
    ver = FairnessVerifier(model, ["Sex", "Pclass"], n_draws=0, random_state=0).fit(X, y)
    assert ver.method_ == "exact" and ver.agreement_ > 0.99
    assert ver.groups_["support"].sum() == 891 and len(ver.groups_) == 6
    cabin = rebuilt(ver, X, y).encoding.variables[ver.variables_.index("Cabin")]
    assert cabin.kind == "presence" and cabin.cardinality == 2  # not 148 categories
    hgb = HistGradientBoostingClassifier(max_iter=30, categorical_features="from_dtype",
                                         random_state=0)
    Xc = X.drop(columns="Cabin").astype({"Sex": "category", "Embarked": "category"})
    sampled = FairnessVerifier(hgb, "Sex", tolerance=0.05, n_draws=0,
                               random_state=0).fit(Xc, y)
    assert sampled.method_ == "sampling"
    assert sampled.groups_["support"].sum() == 891


def test_tree_reads_a_missing_indicator_of_a_text_column(rebuilt):
    """A tree splitting on whether a text column is missing (MissingIndicator): a 2-state
    variable, and the rates equal the enumeration of the model on every joint state."""
    X, y = _data()
    X = X[["a", "x"]].assign(note=np.where(np.isnan(X["x"]), None, "seen"))
    model = make_pipeline(
        make_column_transformer((SimpleImputer(strategy="median"), ["x"]),
                                (MissingIndicator(), ["note"])),
        DecisionTreeClassifier(max_depth=3, random_state=0))
    ver = FairnessVerifier(model, "a", n_draws=0, random_state=0).fit(X, y)
    note = rebuilt(ver, X, y).encoding.variables[ver.variables_.index("note")]
    assert ver.method_ == "exact" and ver.rule_ is None and note.kind == "presence"
    expected = _model_rates(ver, X)
    got = ver.groups_.set_index("a")["positive_rate"]
    for group, rate in expected.items():
        assert got[group] == pytest.approx(rate, abs=1e-9)
