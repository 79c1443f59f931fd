"""Tests of FairnessVerifier, make_verifier_scorer and the verifier plots.

Expected values come from independent computations: FVGM's worked Examples 4 and 6,
closed forms (Gaussian features), brute-force enumeration of the joint distribution
of a (small) network, and data built so that a metric is known to be 0.
"""

from __future__ import annotations

import itertools

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
from scipy.stats import norm
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import InvalidParameterError

from skfairverify import FairnessVerifier
from skfairverify.metrics import make_verifier_scorer
from skfairverify.s3p import BayesNet, TableTooLargeError

# Most tests use few bins to stay fast, so the integer rule agrees with the model on
# fewer than 95% of the rows; the LowAgreementWarning this gives is tested in
# tests/verification/test_verifier_definitions.py.
pytestmark = pytest.mark.filterwarnings(
    "ignore::skfairverify.verification.LowAgreementWarning"
)

# --------------------------------------------------------------------------- helpers


def manual_linear(coef, intercept, names):
    """A fitted LogisticRegression with the given rule, frozen."""
    lr = LogisticRegression()
    lr.coef_ = np.atleast_2d(np.asarray(coef, dtype=float))
    lr.intercept_ = np.array([float(intercept)])
    lr.classes_ = np.array([0, 1])
    lr.n_features_in_ = len(names)
    lr.feature_names_in_ = np.asarray(names, dtype=object)
    return FrozenEstimator(lr)


def joint_table(net: BayesNet):
    """All joint states and their probabilities, by enumeration."""
    states = np.array(list(itertools.product(*[range(c) for c in net.cardinalities])))
    prob = np.ones(len(states))
    for i in range(net.n_variables):
        idx = tuple(states[:, p] for p in net.parents[i]) + (states[:, i],)
        prob *= net.cpts[i][idx]
    return states, prob


def brute_rate(net, weights, threshold, condition):
    """Pr[sum_i weights[i][X_i] >= threshold | X_j = s for (j, s) in condition]."""
    states, prob = joint_table(net)
    score = sum(np.asarray(weights[i])[states[:, i]] for i in range(net.n_variables))
    mask = np.ones(len(states), dtype=bool)
    for j, s in condition.items():
        mask &= states[:, j] == s
    return float(prob[mask & (score >= threshold)].sum() / prob[mask].sum())


def verifier_weights(ver):
    return [ver.weights_[name].to_numpy() for name in ver.variables_]


def pqrs_frame(n=8):
    grid = np.array(list(itertools.product([0, 1], repeat=4)))
    rows = np.tile(grid, (max(1, n // 16) + 1, 1))[: max(n, 16)]
    return pd.DataFrame(rows, columns=["P", "Q", "R", "S"])


EXAMPLE4_RULE = manual_linear([1, 1, 1, -1], -1.5, ["P", "Q", "R", "S"])  # P+Q+R-S >= 2


def example_network(q_given_p=None):
    """FVGM Example 4 (independent) or Example 6 (P -> Q) as a BayesNet."""
    states = [[0, 1]] * 4
    names = ["P", "Q", "R", "S"]
    if q_given_p is None:
        return BayesNet.independent(
            [[0.5, 0.5], [0.6, 0.4], [0.5, 0.5], [0.7, 0.3]], names=names, state_names=states
        )
    q = np.array([[1 - q_given_p[0], q_given_p[0]], [1 - q_given_p[1], q_given_p[1]]])
    return BayesNet(
        [2, 2, 2, 2],
        [(), (0,), (), ()],
        [np.array([0.5, 0.5]), q, np.array([0.5, 0.5]), np.array([0.7, 0.3])],
        names=names,
        state_names=states,
    )


def gaussian_data(n, mu0, mu1, sigma=0.1, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    d = len(mu0)
    X = pd.DataFrame(
        {f"x{i}": rng.normal(np.where(a == 1, mu1[i], mu0[i]), sigma) for i in range(d)}
    )
    X["a"] = a
    y = (X[[f"x{i}" for i in range(d)]].sum(axis=1) >= 0.5 * np.sum(np.add(mu0, mu1)))
    return X, y.astype(int).to_numpy()


@pytest.fixture(scope="module")
def proxy_data():
    """sex -> proxy -> label; a pipeline that drops sex (fairness under unawareness)."""
    rng = np.random.default_rng(3)
    n = 1500
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    proxy = rng.normal(np.where(sex == "M", 1.0, 0.0), 1.0)
    other = rng.normal(0.0, 1.0, n)
    job = rng.choice(["x", "y"], n)
    X = pd.DataFrame({"sex": sex, "race": race, "proxy": proxy, "other": other, "job": job})
    y = (proxy + other + (job == "x") + rng.normal(0, 1, n) > 1).astype(int)
    return X, y


def unaware_pipeline():
    return make_pipeline(
        make_column_transformer(
            (StandardScaler(), ["proxy", "other"]),
            (OneHotEncoder(), ["job"]),
            remainder="drop",
        ),
        LogisticRegression(),
    )


# --------------------------------------------------------------------------- FVGM examples


def test_example4_user_network_matches_paper():
    ver = FairnessVerifier(EXAMPLE4_RULE, "P", network=example_network()).fit(pqrs_frame())
    rates = ver.groups_.set_index("P")["positive_rate"]
    # FVGM Example 4: max 0.55 (P = 1), min 0.14 (P = 0).
    assert rates[1] == pytest.approx(0.55, abs=1e-12)
    assert rates[0] == pytest.approx(0.14, abs=1e-12)
    assert ver.metrics_["statistical_parity"] == pytest.approx(0.41, abs=1e-12)
    assert ver.metrics_["disparate_impact"] == pytest.approx(0.14 / 0.55, abs=1e-12)
    assert ver.most_favored_group_ == {"P": 1}
    assert ver.least_favored_group_ == {"P": 0}
    assert ver.agreement_ == 1.0
    assert ver.discretizer_ is None and ver.n_bins_ is None


def test_example6_user_network_matches_paper():
    ver = FairnessVerifier(EXAMPLE4_RULE, ["P"], network=example_network((0.3, 0.6)))
    ver.fit(pqrs_frame())
    rates = ver.groups_.set_index("P")["positive_rate"]
    assert rates[1] == pytest.approx(0.65, abs=1e-12)  # FVGM Example 6
    assert rates[0] == pytest.approx(0.11, abs=0.0051)  # printed rounded in the paper
    assert rates[0] == pytest.approx(
        brute_rate(ver.network_, verifier_weights(ver), ver.threshold_, {0: 0}), abs=1e-12
    )


@pytest.mark.parametrize("network", ["independent", "learn"])
def test_example6_from_data(network):
    """Data drawn from Example 6's network; the estimated rates approach 0.65 / 0.105."""
    rng = np.random.default_rng(0)
    n = 6000
    p = rng.integers(0, 2, n)
    q = (rng.random(n) < np.where(p == 1, 0.6, 0.3)).astype(int)
    r = (rng.random(n) < 0.5).astype(int)
    s = (rng.random(n) < 0.3).astype(int)
    X = pd.DataFrame({"P": p, "Q": q, "R": r, "S": s})
    ver = FairnessVerifier(EXAMPLE4_RULE, "P", network=network, random_state=0).fit(X)
    rates = ver.groups_.set_index("P")["positive_rate"]
    se = np.sqrt(0.25 / (n / 2)) * 3
    if network == "learn":
        assert ver.network_.parents[ver.variables_.index("Q")] == (ver.variables_.index("P"),)
        assert rates[1] == pytest.approx(0.65, abs=se)
        assert rates[0] == pytest.approx(0.105, abs=se)
    else:  # ignoring P -> Q gives Example 4-like numbers with Pr[Q] = 0.45
        exact_indep = brute_rate(
            BayesNet.independent([[0.5, 0.5], [0.55, 0.45], [0.5, 0.5], [0.7, 0.3]]),
            [np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), np.array([0, -1])], 2,
            {0: 1},
        )
        assert rates[1] == pytest.approx(exact_indep, abs=se)


# --------------------------------------------------------------------------- closed form


def test_gaussian_closed_form():
    mu0, mu1 = [0.3, 0.6], [0.7, 0.4]
    X, y = gaussian_data(4000, mu0, mu1, seed=1)
    ver = FairnessVerifier(LogisticRegression(), "a", random_state=0).fit(X, y)
    lr = ver.estimator_
    w, b = lr.coef_[0], lr.intercept_[0]
    for a in (0, 1):
        mu = np.array(mu1 if a else mu0)
        exact = norm.cdf((w[:2] @ mu + w[2] * a + b) / (0.1 * np.linalg.norm(w[:2])))
        got = ver.groups_.set_index("a").loc[a, "positive_rate"]
        assert got == pytest.approx(exact, abs=0.03)
    assert ver.agreement_ > 0.97


# --------------------------------------------------------------------------- brute force


def test_learned_network_rates_equal_brute_force_enumeration():
    mu0, mu1 = [0.3, 0.6], [0.7, 0.4]
    X, y = gaussian_data(1500, mu0, mu1, seed=2)
    ver = FairnessVerifier(LogisticRegression(), "a", n_bins=4, multiplier=50,
                           random_state=0).fit(X, y)
    net, weights = ver.network_, verifier_weights(ver)
    a = ver.variables_.index("a")
    for code, value in enumerate(ver.weights_["a"].index):
        got = ver.groups_.set_index("a").loc[value, "positive_rate"]
        assert got == pytest.approx(brute_rate(net, weights, ver.threshold_, {a: code}),
                                    abs=1e-12)
    # The integer weights are rint(l * w * bin_mean / s), independently recomputed, with
    # s the root mean square of the decision function on X.
    disc, rule = ver.discretizer_, ver.rule_
    s = np.sqrt(np.mean(ver.decision_function(X) ** 2))
    assert ver.decision_scale_ == pytest.approx(s, rel=1e-12)
    for j, col in enumerate(["x0", "x1"]):
        expected = np.rint(50 * rule.coef[col] / s * disc.bin_means_[j]).astype(int)
        np.testing.assert_array_equal(ver.weights_[col].to_numpy(), expected)
    # agreement_ is the share of rows where the integer rule equals the estimator.
    bins = disc.bin_index(X[["x0", "x1"]].to_numpy())
    score = (ver.weights_["x0"].to_numpy()[bins[:, 0]] + ver.weights_["x1"].to_numpy()[bins[:, 1]]
             + ver.weights_["a"].to_numpy()[X["a"].to_numpy()])
    integer_pred = (score >= ver.threshold_).astype(int)
    assert ver.agreement_ == pytest.approx(np.mean(integer_pred == ver.predict(X)))


def test_compound_groups_race_by_sex_brute_force(proxy_data):
    X, y = proxy_data
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(), ["sex", "race"]), (StandardScaler(), ["proxy"]), remainder="drop"
        ),
        LogisticRegression(),
    )
    ver = FairnessVerifier(model, ["race", "sex"], n_bins=5, multiplier=100, random_state=0)
    ver.fit(X, y)
    groups = ver.groups_
    assert list(groups.columns[:2]) == ["race", "sex"]
    assert len(groups) == 6
    counts = X.groupby(["race", "sex"]).size()
    for _, row in groups.iterrows():
        assert row["support"] == counts[(row["race"], row["sex"])]
        cond = {
            ver.variables_.index("race"): list(ver.weights_["race"].index).index(row["race"]),
            ver.variables_.index("sex"): list(ver.weights_["sex"].index).index(row["sex"]),
        }
        assert row["positive_rate"] == pytest.approx(
            brute_rate(ver.network_, verifier_weights(ver), ver.threshold_, cond), abs=1e-12
        )
    rates = groups["positive_rate"]
    assert ver.metrics_["statistical_parity"] == pytest.approx(rates.max() - rates.min())
    assert ver.metrics_["disparate_impact"] == pytest.approx(rates.min() / rates.max())
    top = groups.loc[rates.idxmax()]
    assert ver.most_favored_group_ == {"race": top["race"], "sex": top["sex"]}


# --------------------------------------------------------------------------- unawareness


def test_pipeline_dropping_sensitive_column(proxy_data):
    X, y = proxy_data
    ver = FairnessVerifier(unaware_pipeline(), "sex", random_state=0).fit(X, y)
    assert "sex" in ver.rule_.dropped
    assert (ver.weights_["sex"] == 0).all()
    assert "race" not in ver.variables_  # neither read nor sensitive
    # the learned network links sex to its proxy: men are favored
    assert ver.most_favored_group_ == {"sex": "M"}
    assert ver.metrics_["statistical_parity"] > 0.1
    # With independent variables a dropped sensitive feature cannot matter at all.
    ind = FairnessVerifier(unaware_pipeline(), "sex", network="independent",
                           random_state=0).fit(X, y)
    assert ind.metrics_["statistical_parity"] == pytest.approx(0.0, abs=1e-12)
    assert ind.metrics_["disparate_impact"] == pytest.approx(1.0, abs=1e-12)


def test_frozen_estimator_used_as_is_and_delegation(proxy_data):
    X, y = proxy_data
    fitted = unaware_pipeline().fit(X.iloc[:700], y[:700])
    ver = FairnessVerifier(FrozenEstimator(fitted), "sex", n_bins=5, random_state=0).fit(X)
    np.testing.assert_array_equal(ver.predict(X), fitted.predict(X))
    np.testing.assert_allclose(ver.predict_proba(X), fitted.predict_proba(X))
    np.testing.assert_allclose(ver.decision_function(X), fitted.decision_function(X))
    assert ver.score(X, y) == pytest.approx(fitted.score(X, y))
    np.testing.assert_array_equal(ver.classes_, fitted.classes_)
    assert "equalized_odds" not in ver.metrics_  # no y


def test_clone_params_and_not_fitted(proxy_data):
    ver = FairnessVerifier(unaware_pipeline(), "sex", n_bins=7, network="independent")
    twin = clone(ver)
    assert twin.get_params()["n_bins"] == 7
    assert twin.get_params()["network"] == "independent"
    with pytest.raises(NotFittedError):
        twin.predict(proxy_data[0])
    with pytest.raises(NotFittedError):
        twin.fairness_influence()
    twin.set_params(n_bins=3)
    assert twin.n_bins == 3 and ver.n_bins == 7


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rare_category_outside_the_binning_split(proxy_data, seed):
    """A category seen once may fall in the held-out quarter of the bins search."""
    X, y = proxy_data
    X = X.copy()
    X.loc[X.index[seed * 7], "job"] = "rare"
    ver = FairnessVerifier(unaware_pipeline(), "sex", network="independent", max_bins=10,
                           max_multiplier=100, random_state=seed).fit(X, y)
    assert ver.weights_["job"]["rare"] == np.rint(
        ver.multiplier_ * ver.rule_.coef["job=rare"] / ver.decision_scale_
    )


def test_declared_category_absent_from_fit_rows_can_be_verified_later(proxy_data):
    """A category of the column's dtype missing from the fit rows (Adult's rare
    'Holand-Netherlands' in a training split) is a state, so test data can hold it."""
    X, y = proxy_data
    X = X.copy()
    X["job"] = X["job"].astype("category").cat.add_categories(["rare"])
    test = X.iloc[1000:].copy()
    test.loc[test.index[:5], "job"] = "rare"
    ver = FairnessVerifier(unaware_pipeline(), "sex", network="independent", max_bins=10,
                           max_multiplier=100, random_state=0).fit(X.iloc[:1000], y[:1000])
    assert "rare" in ver.weights_["job"].index
    assert ver.weights_["job"]["rare"] == 0  # the rule has no coefficient for it
    other = ver.verify(test).metrics
    assert 0 <= other["statistical_parity"] <= 1


def test_linear_svc_numpy_input_and_positions():
    X, y = gaussian_data(800, [0.3, 0.6], [0.7, 0.4], seed=4)
    arr = X.to_numpy()
    ver = FairnessVerifier(LinearSVC(), 2, network="independent", n_bins=10,
                           random_state=0).fit(arr, y)
    assert ver.groups_.columns[0] == "x2"
    assert not hasattr(ver, "predict_proba")
    assert ver.n_features_in_ == 3


# --------------------------------------------------------------------------- EO, PCF, FIF


def test_equalized_odds_zero_when_features_depend_on_label_only():
    rng = np.random.default_rng(5)
    n = 6000
    a = rng.integers(0, 2, n)
    y = (rng.random(n) < np.where(a == 1, 0.7, 0.3)).astype(int)
    X = pd.DataFrame({"a": a, "x": rng.normal(y, 0.8), "z": rng.normal(y, 0.8)})
    model = make_pipeline(
        make_column_transformer(("passthrough", ["x", "z"]), remainder="drop"),
        LogisticRegression(),
    )
    ver = FairnessVerifier(model, "a", random_state=0).fit(X, y)
    # Pr[Yhat | A, Y] = Pr[Yhat | Y]: equalized odds holds, statistical parity does not.
    assert ver.metrics_["equalized_odds"] < 0.04
    assert ver.metrics_["statistical_parity"] > 0.1
    tpr = ver.groups_["true_positive_rate"]
    assert tpr.max() - tpr.min() <= ver.metrics_["equalized_odds"] + 1e-12


def _mediator_network(x_depends_on_a: bool):
    # A -> Z, (A -> X); the model reads Z and X, not A.
    px = np.array([[0.6, 0.4], [0.3, 0.7]]) if x_depends_on_a else np.array([0.5, 0.5])
    return BayesNet(
        [2, 2, 2],
        [(), (0,), (0,) if x_depends_on_a else ()],
        [np.array([0.4, 0.6]), np.array([[0.8, 0.2], [0.25, 0.75]]), px],
        names=["A", "Z", "X"],
        state_names=[[0, 1], [0, 1], [0, 1]],
    )


def _mediator_frame():
    return pd.DataFrame(list(itertools.product([0, 1], repeat=3)), columns=["A", "Z", "X"])


@pytest.mark.parametrize("x_depends_on_a", [False, True])
def test_path_specific_causal_fairness(x_depends_on_a):
    net = _mediator_network(x_depends_on_a)
    model = manual_linear([0.0, 2.0, 1.0], -1.5, ["A", "Z", "X"])  # Z + X >= 2 (2Z+X>1.5)
    ver = FairnessVerifier(model, "A", network=net, mediators="Z").fit(_mediator_frame())
    assert ver.metrics_["statistical_parity"] > 0.3
    a_max = ver.most_favored_group_["A"]
    fixed = net.replace_cpt(1, net.cpts[1][a_max], parents=())
    weights = verifier_weights(ver)
    expected = [brute_rate(fixed, weights, ver.threshold_, {0: a}) for a in (0, 1)]
    np.testing.assert_allclose(ver.groups_["path_specific_rate"], expected, atol=1e-12)
    if not x_depends_on_a:
        # the only path from A to the decision goes through the mediator
        assert ver.metrics_["path_specific_causal"] == pytest.approx(0.0, abs=1e-12)
    else:
        assert ver.metrics_["path_specific_causal"] == pytest.approx(
            abs(expected[1] - expected[0]), abs=1e-12
        )


def test_fairness_influence_brute_force():
    ver = FairnessVerifier(EXAMPLE4_RULE, "P", network=example_network((0.3, 0.6)))
    ver.fit(pqrs_frame())
    fif = ver.fairness_influence().table
    assert fif.index.tolist() == ["Q", "R", "S"]
    assert fif.columns.tolist() == [0, 1]
    weights = verifier_weights(ver)
    for name in ["Q", "S"]:
        i = ver.variables_.index(name)
        uniform = ver.network_.replace_cpt(i, np.full(2, 0.5), parents=())
        for p in (0, 1):
            expected = brute_rate(ver.network_, weights, ver.threshold_, {0: p}) - brute_rate(
                uniform, weights, ver.threshold_, {0: p}
            )
            assert fif.loc[name, p] == pytest.approx(expected, abs=1e-12)
    # R is already uniform: no influence
    assert np.allclose(fif.loc["R"], 0.0, atol=1e-12)
    both = ver.fairness_influence([["Q", "S"], "R"]).table
    assert both.index.tolist() == ["Q + S", "R"]
    with pytest.raises(ValueError, match="sensitive"):
        ver.fairness_influence(["P"])
    with pytest.raises(ValueError, match="not a variable"):
        ver.fairness_influence(["nope"])
    with pytest.raises(ValueError, match="empty"):
        ver.fairness_influence([[]])


# --------------------------------------------------------------------------- verify, jobs


def test_verify_on_other_data_and_n_jobs(proxy_data):
    X, y = proxy_data
    ver = FairnessVerifier(unaware_pipeline(), "sex", n_bins=5, random_state=0, n_jobs=2,
                           network="independent")
    with joblib.parallel_config(backend="threading"):  # processes would re-import pgmpy
        ver.fit(X.iloc[:1000], y[:1000])
        same = ver.verify(X.iloc[:1000], y[:1000]).metrics
        other = ver.verify(X.iloc[1000:]).metrics
    seq = clone(ver).set_params(n_jobs=None).fit(X.iloc[:1000], y[:1000])
    assert ver.metrics_ == pytest.approx(seq.metrics_)
    assert same == pytest.approx(ver.metrics_)
    assert set(other) == {"disparate_impact", "statistical_parity"}
    assert abs(other["statistical_parity"] - ver.metrics_["statistical_parity"]) < 0.05
    learned = FairnessVerifier(unaware_pipeline(), "sex", n_bins=5, multiplier=100,
                               random_state=0).fit(X.iloc[:1000], y[:1000])
    again = learned.verify(X.iloc[1000:], y[1000:]).metrics
    assert set(again) == {"disparate_impact", "statistical_parity", "equalized_odds"}
    assert abs(again["statistical_parity"] - learned.metrics_["statistical_parity"]) < 0.15
    bad = X.iloc[1000:].copy()
    bad.loc[bad.index[0], "job"] = "unseen"
    with pytest.raises(ValueError, match="not seen"):
        ver.verify(bad)
    with pytest.raises(ValueError, match="single group"):
        ver.verify(X[X["sex"] == "F"])
    user = FairnessVerifier(EXAMPLE4_RULE, "P", network=example_network()).fit(pqrs_frame())
    with pytest.raises(ValueError, match="fixed BayesNet"):
        user.verify(pqrs_frame())


# --------------------------------------------------------------------------- bad input


def test_no_exact_path_and_multiclass_estimators_rejected(proxy_data):
    """method='exact' on a model without an exact path names it and the alternative."""
    from sklearn.neighbors import KNeighborsClassifier

    X, y = proxy_data
    num = X[["sex", "proxy", "other"]].assign(sex=(X["sex"] == "M").astype(int))
    with pytest.raises(TypeError, match="KNeighborsClassifier.*method='sampling'"):
        FairnessVerifier(KNeighborsClassifier(), "sex", method="exact").fit(num, y)
    y3 = np.arange(len(y)) % 3
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        FairnessVerifier(LogisticRegression(), "sex").fit(num, y3)


def test_bad_sensitive_features(proxy_data):
    X, y = proxy_data
    model = unaware_pipeline()
    with pytest.raises(ValueError, match="'gender' is not a column"):
        FairnessVerifier(model, "gender").fit(X, y)
    with pytest.raises(ValueError, match="'other' is continuous"):
        FairnessVerifier(model, "other").fit(X, y)
    one = X.assign(sex="F")
    with pytest.raises(ValueError, match="single group"):
        FairnessVerifier(model, "sex").fit(one, y)
    with pytest.raises(ValueError, match="listed twice"):
        FairnessVerifier(model, ["sex", "sex"]).fit(X, y)
    with pytest.raises(TypeError, match="names or positions"):
        FairnessVerifier(model, [1.5]).fit(X, y)


def test_nan_y_and_params(proxy_data):
    X, y = proxy_data
    model = unaware_pipeline()
    nan = X.copy()
    nan.loc[nan.index[3], "proxy"] = np.nan
    with pytest.raises(ValueError, match="'proxy'"):
        FairnessVerifier(model, "sex").fit(nan, y)
    with pytest.raises(ValueError, match="y is required"):
        FairnessVerifier(model, "sex").fit(X)
    with pytest.raises(ValueError, match="not in the estimator's classes"):
        FairnessVerifier(FrozenEstimator(model.fit(X, y)), "sex").fit(X, y + 5)
    with pytest.raises(InvalidParameterError):
        FairnessVerifier(model, "sex", n_bins=1).fit(X, y)
    with pytest.raises(InvalidParameterError):
        FairnessVerifier(model, "sex", network="bayes").fit(X, y)
    with pytest.raises(ValueError, match="not a variable"):
        FairnessVerifier(model, "sex", mediators=["race"], n_bins=5).fit(X, y)
    with pytest.raises(ValueError, match="sensitive feature; it cannot"):
        FairnessVerifier(model, "sex", mediators="sex", n_bins=5).fit(X, y)


def test_network_too_wide_gives_readable_error(proxy_data):
    X, y = proxy_data
    ver = FairnessVerifier(unaware_pipeline(), "sex", n_bins=20, multiplier=1000,
                           network="independent", max_table_size=100)
    with pytest.raises(TableTooLargeError, match="max_bins"):
        ver.fit(X, y)


def test_user_network_missing_variable():
    net = BayesNet.independent([[0.5, 0.5]] * 3, names=["P", "Q", "R"],
                               state_names=[[0, 1]] * 3)
    with pytest.raises(ValueError, match=r"no variable for the column\(s\) \['S'\]"):
        FairnessVerifier(EXAMPLE4_RULE, "P", network=net).fit(pqrs_frame())


# --------------------------------------------------------------------------- scorer


def _scorer_data():
    rng = np.random.default_rng(7)
    n = 600
    sex = rng.choice(["F", "M"], n)
    proxy = rng.normal(np.where(sex == "M", 1.0, 0.0), 1.0)
    X = pd.DataFrame({"sex": sex, "proxy": proxy, "other": rng.normal(0, 1, n)})
    y = (proxy + X["other"] + rng.normal(0, 1, n) > 0.8).astype(int).to_numpy()
    model = make_pipeline(
        make_column_transformer(("passthrough", ["proxy", "other"]), remainder="drop"),
        LogisticRegression(),
    )
    return X, y, model


def test_scorer_values_and_sign():
    X, y, model = _scorer_data()
    fitted = model.fit(X, y)
    # the same seed: the multiplier is chosen on the same held-out rows
    params = dict(n_bins=5, network="independent", random_state=0)
    ver = FairnessVerifier(FrozenEstimator(fitted), "sex", **params).fit(X, y)
    sp, di, eo = (
        make_verifier_scorer(metric=m, sensitive_features="sex", **params)(fitted, X, y)
        for m in ("statistical_parity", "disparate_impact", "equalized_odds")
    )
    # the population estimate by default: the independent network misses that the
    # proxy differs between the groups (its gap is 0), the rows do not
    assert ver.metrics_["statistical_parity"] == pytest.approx(0.0, abs=1e-9)
    assert sp == pytest.approx(-ver.population_metrics_["statistical_parity"])
    assert sp < -0.2
    assert di == pytest.approx(ver.population_metrics_["disparate_impact"])
    assert eo == pytest.approx(-ver.population_metrics_["equalized_odds"])
    sp, di, eo = (
        make_verifier_scorer(metric=m, sensitive_features="sex", rate="network",
                             **params)(fitted, X, y)
        for m in ("statistical_parity", "disparate_impact", "equalized_odds")
    )
    assert sp == pytest.approx(-ver.metrics_["statistical_parity"])
    assert di == pytest.approx(ver.metrics_["disparate_impact"])
    assert eo == pytest.approx(-ver.metrics_["equalized_odds"])
    with pytest.raises(ValueError, match="metric must be"):
        make_verifier_scorer(metric="accuracy", sensitive_features="sex")
    with pytest.raises(ValueError, match="mediators"):
        make_verifier_scorer(metric="path_specific_causal", sensitive_features="sex")
    with pytest.raises(TypeError, match="Unknown FairnessVerifier parameter"):
        make_verifier_scorer(metric="statistical_parity", sensitive_features="sex", bins=3)


def test_scorer_in_grid_search_by_name():
    X, y, model = _scorer_data()
    scorer = make_verifier_scorer(metric="statistical_parity", sensitive_features="sex",
                                  n_bins=5, random_state=0)
    search = GridSearchCV(model, {"logisticregression__C": [0.01, 1.0]},
                          scoring={"sp": scorer, "acc": "accuracy"}, refit="acc", cv=2)
    search.fit(X, y)
    scores = search.cv_results_["mean_test_sp"]
    assert np.all(np.isfinite(scores)) and np.all(scores <= 0)


def test_scorer_in_grid_search_with_metadata_routing():
    X, y, model = _scorer_data()
    sex = X["sex"].to_numpy()
    Xn = X.drop(columns="sex")
    model = make_pipeline(StandardScaler(), LogisticRegression())
    scores = {}
    for rate in ("network", "population"):
        with sklearn.config_context(enable_metadata_routing=True):
            scorer = make_verifier_scorer(metric="disparate_impact", n_bins=5,
                                          network="independent", rate=rate, random_state=0)
            scorer.set_score_request(sensitive_features=True)
            search = GridSearchCV(model, {"logisticregression__C": [0.01, 1.0]},
                                  scoring=scorer, cv=2)
            search.fit(Xn, y, sensitive_features=sex)
        scores[rate] = search.cv_results_["mean_test_score"]
    # model ignores sex and the network's variables are independent: DI is exactly 1
    # under the network, while the rows show the proxy's unfairness
    np.testing.assert_allclose(scores["network"], 1.0, atol=1e-12)
    assert np.all(scores["population"] < 0.8)


# --------------------------------------------------------------------------- plots


def test_plots():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skfairverify.plotting import plot_fairness_influence, plot_group_rates

    ver = FairnessVerifier(EXAMPLE4_RULE, "P", network=example_network()).fit(pqrs_frame())
    ax = plot_group_rates(ver, rate="network")  # horizontal bars, the 4/5 line vertical
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, ver.groups_["positive_rate"])
    assert ax.get_lines()[0].get_xdata()[0] == pytest.approx(0.8 * 0.55)
    ax = plot_group_rates(ver)  # the population estimates, the network's rates marked
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, ver.groups_["population_rate"])
    diamonds = [line for line in ax.get_lines() if line.get_marker() == "D"]
    np.testing.assert_allclose(diamonds[0].get_xdata(), ver.groups_["positive_rate"])
    ax2 = plot_fairness_influence(ver)
    assert len(ax2.patches) == 3 * 2
    fif = ver.fairness_influence(reference="states")
    ax3 = plot_fairness_influence(ver, fif=fif)  # features sorted by spread
    np.testing.assert_allclose(sorted(p.get_width() for p in ax3.patches[:3]),
                               np.sort(fif.table.iloc[:, 0].to_numpy()))
    assert "uniform over its states" in ax3.get_xlabel()
    with pytest.raises(TypeError, match="FairnessInfluenceResult"):
        plot_fairness_influence(ver, fif=fif.table)
    plt.close("all")
