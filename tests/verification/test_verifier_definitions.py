"""FairnessVerifier: the FVGM paper's definitions, and no silent wrong result.

* path-specific causal fairness (FVGM Section 2, item 4; Appendix B.1.2) with
  ``pcf_definition="fvgm"`` (mediators drawn from ``Z | A = a_max``) and
  ``"edge_specific"``, each against a brute-force enumeration of the joint
  distribution of small networks written here independently of the package;
* the fairness influence function of a binned feature (FVGM Appendix E): uniform within
  the observed support, i.e. bin probabilities proportional to the bin widths;
* labels, sensitive values and network states that the verifier cannot read are
  refused with an error naming the problem; a low agreement between the integer rule and
  the model gives a LowAgreementWarning naming the cause and the parameter to change.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.s3p import BayesNet
from skfairverify.utils._validation import check_sensitive
from skfairverify.verification import MIN_AGREEMENT, LowAgreementWarning

# --------------------------------------------------------------------------- helpers


def frozen_rule(coef, intercept, names):
    lr = LogisticRegression()
    lr.coef_ = np.atleast_2d(np.asarray(coef, dtype=float))
    lr.intercept_ = np.array([float(intercept)])
    lr.classes_ = np.array([0, 1])
    lr.n_features_in_ = len(names)
    lr.feature_names_in_ = np.asarray(names, dtype=object)
    return FrozenEstimator(lr)


def enumerate_joint(cards, parents, cpts):
    """Every joint state (rows) and its probability: the product of the CPT entries."""
    states = np.array(list(itertools.product(*[range(c) for c in cards])))
    prob = np.ones(len(states))
    for i in range(len(cards)):
        for row, x in enumerate(states):
            prob[row] *= cpts[i][tuple(x[p] for p in parents[i]) + (x[i],)]
    return states, prob


def rate(states, prob, score, threshold, a_col, a):
    """Pr[score >= threshold | X_a_col = a] over an enumerated joint distribution."""
    in_group = states[:, a_col] == a
    return prob[in_group & (score >= threshold)].sum() / prob[in_group].sum()


def integer_scores(ver, states):
    return sum(ver.weights_[name].to_numpy()[states[:, k]]
               for k, name in enumerate(ver.variables_))


def random_cpt(rng, shape):
    table = rng.uniform(0.05, 1.0, size=shape)
    return table / table.sum(axis=-1, keepdims=True)


# --------------------------------------------------------------------------- PCF


def mediator_case(kind, seed):
    """(names, cards, parents, cpts, mediators, coef): small networks where A -> Z.

    ``descendant``: A -> U -> Z and A -> Z (the mediator's other parent descends from A);
    ``root``: U -> Z, A -> Z (the other parent does not descend from A);
    ``two``: A -> U -> Z1 -> Z2, A -> Z1, A -> Z2, U -> X (two dependent mediators and a
    non-mediator).
    """
    rng = np.random.default_rng(seed)
    if kind == "descendant":
        names, cards = ["A", "U", "Z"], [2, 3, 3]
        parents = [(), (0,), (0, 1)]
        mediators, coef = ["Z"], [0.0, 1.3, 1.0]
    elif kind == "root":
        names, cards = ["A", "U", "Z"], [2, 3, 3]
        parents = [(), (), (0, 1)]
        mediators, coef = ["Z"], [0.0, 1.3, 1.0]
    else:
        names, cards = ["A", "U", "Z1", "Z2", "X"], [2, 2, 3, 2, 2]
        parents = [(), (0,), (0, 1), (0, 2), (1,)]
        mediators, coef = ["Z1", "Z2"], [0.4, 0.9, 1.0, 1.2, 0.7]
    cpts = [random_cpt(rng, tuple(cards[p] for p in parents[i]) + (cards[i],))
            for i in range(len(cards))]
    return names, cards, parents, cpts, mediators, coef


def fvgm_tables(cards, parents, cpts, mediators, a_max):
    """Joint distribution with the mediators drawn from Pr[Z | A = a_max] (enumerated)."""
    states, prob = enumerate_joint(cards, parents, cpts)
    given = states[:, 0] == a_max
    med_joint = {}
    for x, p in zip(states[given], prob[given]):
        key = tuple(x[m] for m in mediators)
        med_joint[key] = med_joint.get(key, 0.0) + p
    total = sum(med_joint.values())
    new = np.ones(len(states))
    for row, x in enumerate(states):
        for i in range(len(cards)):
            if i not in mediators:
                new[row] *= cpts[i][tuple(x[p] for p in parents[i]) + (x[i],)]
        new[row] *= med_joint[tuple(x[m] for m in mediators)] / total
    return states, new


def edge_specific_tables(cards, parents, cpts, mediators, a_max):
    """Joint distribution where only the edges A -> mediator carry a_max (enumerated)."""
    states = np.array(list(itertools.product(*[range(c) for c in cards])))
    new = np.ones(len(states))
    for row, x in enumerate(states):
        for i in range(len(cards)):
            pa = [a_max if (p == 0 and i in mediators) else x[p] for p in parents[i]]
            new[row] *= cpts[i][tuple(pa) + (x[i],)]
    return states, new


def fit_case(kind, seed, definition):
    names, cards, parents, cpts, mediators, coef = mediator_case(kind, seed)
    net = BayesNet(cards, parents, cpts, names=names,
                   state_names=[list(range(c)) for c in cards])
    X = pd.DataFrame(list(itertools.product(*[range(c) for c in cards])), columns=names)
    # off the lattice of scores: no row sits on the decision boundary
    intercept = -0.5 * sum(c * (k - 1) for c, k in zip(coef, cards)) + 0.05
    ver = FairnessVerifier(frozen_rule(coef, intercept, names), "A", network=net,
                           mediators=mediators, multiplier=100, pcf_definition=definition)
    ver.fit(X)
    return ver, (cards, parents, cpts, [names.index(m) for m in mediators])


@pytest.mark.parametrize("kind", ["descendant", "root", "two"])
@pytest.mark.parametrize("seed", [0, 1])
def test_pcf_definitions_equal_enumeration(kind, seed):
    values = {}
    for definition, tables in (("fvgm", fvgm_tables), ("edge_specific", edge_specific_tables)):
        ver, (cards, parents, cpts, med) = fit_case(kind, seed, definition)
        assert ver.variables_[0] == "A"
        states, prob = enumerate_joint(cards, parents, cpts)
        score = integer_scores(ver, states)
        rates = [rate(states, prob, score, ver.threshold_, 0, a) for a in (0, 1)]
        np.testing.assert_allclose(ver.groups_["positive_rate"], rates, atol=1e-12)
        a_max = int(np.argmax(rates))
        assert ver.most_favored_group_["A"] == a_max
        states, new = tables(cards, parents, cpts, med, a_max)
        expected = [rate(states, new, score, ver.threshold_, 0, a) for a in (0, 1)]
        np.testing.assert_allclose(ver.groups_["path_specific_rate"], expected, atol=1e-12)
        assert ver.metrics_["path_specific_causal"] == pytest.approx(
            abs(expected[1] - expected[0]), abs=1e-12)
        values[definition] = ver.metrics_["path_specific_causal"]
    if kind != "root":
        # a mediator with a non-sensitive parent: the two definitions differ
        assert abs(values["fvgm"] - values["edge_specific"]) > 1e-3


def test_pcf_default_is_fvgm():
    assert FairnessVerifier(None, "a").get_params()["pcf_definition"] == "fvgm"
    with pytest.raises(ValueError, match="pcf_definition"):
        fit_case("root", 0, "nope")


def test_conditional_joint_equals_enumeration():
    from skfairverify.verification._influence import conditional_joint

    rng = np.random.default_rng(3)
    cards = [2, 3, 2, 3, 2]
    parents = [(), (0,), (0, 1), (1, 2), (3,)]
    cpts = [random_cpt(rng, tuple(cards[p] for p in parents[i]) + (cards[i],))
            for i in range(5)]
    net = BayesNet(cards, parents, cpts)
    states, prob = enumerate_joint(cards, parents, cpts)
    for targets, evidence in (([3], {0: 1}), ([2, 4], {0: 0}), ([4, 1], {2: 1, 0: 1})):
        got = conditional_joint(net, targets, evidence, 10_000)
        mask = np.all([states[:, k] == v for k, v in evidence.items()], axis=0)
        expected = np.zeros([cards[t] for t in targets])
        for x, p in zip(states[mask], prob[mask]):
            expected[tuple(x[t] for t in targets)] += p
        np.testing.assert_allclose(got, expected / expected.sum(), atol=1e-12)


# --------------------------------------------------------------------------- FIF


@pytest.fixture(scope="module")
def skewed_fit():
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 2, n)
    x = rng.exponential(1.0 + a, n)  # skewed: quantile bins are far from equal width
    X = pd.DataFrame({"a": a, "x": x})
    model = frozen_rule([0.0, 1.0], -1.5, ["a", "x"])
    ver = FairnessVerifier(model, "a", network="learn", n_bins=10, multiplier=200,
                           random_state=0).fit(X)
    return X, ver


def test_fif_of_binned_feature_is_uniform_within_support(skewed_fit):
    X, ver = skewed_fit
    net = ver.network_
    i = ver.variables_.index("x")
    assert net.parents[i] == (ver.variables_.index("a"),)
    # independent computation: widths of the bins clipped to [min, max] of x
    edges = np.asarray(ver.discretizer_.bin_edges_[0], dtype=float)
    lo, hi = X["x"].min(), X["x"].max()
    width = np.array([min(edges[j + 1], hi) - max(edges[j], lo) for j in range(len(edges) - 1)])
    width[0] = min(edges[1], hi) - lo
    width[-1] = hi - max(edges[-2], lo)
    uniform_support = width / (hi - lo)
    # enumeration over (a, x): Pr[score >= t | a] with x ~ its CPT or the reference
    w_x = ver.weights_["x"].to_numpy()
    w_a = ver.weights_["a"].to_numpy()
    cpt_x = net.cpts[i]
    fif = ver.fairness_influence().table
    old = ver.fairness_influence(reference="states").table
    for a in (0, 1):
        positive = (w_a[a] + w_x) >= ver.threshold_
        base = cpt_x[a][positive].sum()
        assert ver.groups_["positive_rate"].iloc[a] == pytest.approx(base, abs=1e-12)
        assert fif.loc["x", a] == pytest.approx(base - uniform_support[positive].sum(),
                                                abs=1e-12)
        n_states = len(w_x)
        assert old.loc["x", a] == pytest.approx(base - positive.sum() / n_states, abs=1e-12)
    # the definitions differ markedly for a skewed feature
    assert np.abs(fif.loc["x"] - old.loc["x"]).max() > 0.1
    with pytest.raises(ValueError, match="reference"):
        ver.fairness_influence(reference="uniform")


def test_fif_of_categorical_feature_is_uniform_over_categories():
    rng = np.random.default_rng(1)
    n = 2000
    a = rng.integers(0, 2, n)
    c = np.where(rng.random(n) < 0.3 + 0.4 * a, "hi", rng.choice(["lo", "mid"], n))
    X = pd.DataFrame({"a": a, "c": c})
    y = (c == "hi").astype(int) ^ (rng.random(n) < 0.1)
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["c"])),
                          LogisticRegression())
    ver = FairnessVerifier(model, "a", network="independent", multiplier=100).fit(X, y)
    fif = ver.fairness_influence().table
    # the same under both references: uniform over the three categories
    pd.testing.assert_frame_equal(fif, ver.fairness_influence(reference="states").table)
    w = ver.weights_["c"].to_numpy() + ver.weights_["a"].to_numpy()[0]
    marg = ver.network_.cpts[ver.variables_.index("c")]
    positive = w >= ver.threshold_
    assert fif.loc["c", 0] == pytest.approx(marg[positive].sum() - positive.mean(), abs=1e-12)


# --------------------------------------------------------------------------- labels


@pytest.fixture(scope="module")
def small_fit():
    rng = np.random.default_rng(2)
    n = 1200
    a = rng.integers(0, 2, n)
    x = rng.normal(a, 1.0, n)
    X = pd.DataFrame({"a": a, "x": x})
    y = (x + rng.normal(0, 1, n) > 0.5).astype(int)
    ver = FairnessVerifier(LogisticRegression(), "a", network="independent", n_bins=20,
                           random_state=0).fit(X, y)
    return X, y, ver


def test_verify_with_valid_labels_matches_fit(small_fit):
    X, y, ver = small_fit
    assert ver.verify(X, y).metrics["equalized_odds"] == pytest.approx(
        ver.metrics_["equalized_odds"], abs=1e-12)
    # a pandas Series, a list and bools are read as the same labels
    assert ver.verify(X, pd.Series(y)).metrics["equalized_odds"] == pytest.approx(
        ver.metrics_["equalized_odds"], abs=1e-12)
    assert ver.verify(X, list(y)).metrics == ver.verify(X, y).metrics


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda y: np.where(y == 1, "yes", "no"), r"not in the estimator's classes"),
        (lambda y: y.astype(str), r"\['0', '1'\].*not in the estimator's classes"),
        (lambda y: np.where(np.arange(len(y)) == 7, np.nan, y.astype(float)), "missing"),
        (lambda y: pd.Series(y, dtype=object).where(np.arange(len(y)) != 3, None), "missing"),
        (lambda y: y + (np.arange(len(y)) % 3 == 0), r"3 distinct labels"),
        (lambda y: y[:-1], "1-dimensional with 1200 entries"),
    ],
)
def test_verify_refuses_labels_it_cannot_read(small_fit, bad, message):
    X, y, ver = small_fit
    with pytest.raises(ValueError, match=message):
        ver.verify(X, bad(np.asarray(y)))


def test_fit_refuses_labels_of_another_encoding(small_fit):
    X, y, ver = small_fit
    frozen = FrozenEstimator(ver.estimator_)
    with pytest.raises(ValueError, match="not in the estimator's classes"):
        FairnessVerifier(frozen, "a", network="independent", n_bins=20).fit(
            X, np.where(y == 1, "1", "0"))
    with pytest.raises(ValueError, match="missing"):
        FairnessVerifier(frozen, "a", network="independent", n_bins=20).fit(
            X, np.where(np.arange(len(y)) == 0, np.nan, y))


# --------------------------------------------------------------------------- sensitive values


def test_sensitive_column_mixing_1_and_str_1_is_refused(small_fit):
    X, y, ver = small_fit
    mixed = X.copy()
    mixed["a"] = mixed["a"].astype(object)
    mixed.loc[mixed.index[::2], "a"] = mixed.loc[mixed.index[::2], "a"].astype(str)
    assert set(map(type, mixed["a"])) == {int, str}
    with pytest.raises(ValueError, match=r"Column 'a' mixes values that print alike"):
        FairnessVerifier(LogisticRegression(), "a", network="independent", n_bins=20).fit(
            mixed, y)
    with pytest.raises(ValueError, match=r"Column 'a' mixes values that print alike"):
        ver.verify(mixed, y)
    # the same values as one type are accepted
    as_str = mixed.assign(a=mixed["a"].astype(str))
    model = FrozenEstimator(LogisticRegression().fit(X[["x"]], y))
    FairnessVerifier(model, "a", network="independent", n_bins=20).fit(as_str, y)


def test_check_sensitive_refuses_mixed_types():
    with pytest.raises(ValueError, match=r"Column 'sex' mixes .*1 \(int\) and '1' \(str\)"):
        check_sensitive(pd.Series([1, "1", 0, 1], name="sex"))
    with pytest.raises(ValueError, match=r"Column 'g' mixes"):
        check_sensitive(pd.DataFrame({"g": ["1", 1, 0]}))
    with pytest.raises(ValueError, match=r"mixes .*True \(bool\) and 'True' \(str\)"):
        check_sensitive([True, "True", False])
    # one type, or numbers equal as numbers (1 and 1.0), stay accepted
    assert check_sensitive(pd.Series(["1", "0", "1"])).shape == (3, 1)
    assert check_sensitive(pd.Series([1, 1.0, 0], dtype=object)).iloc[:, 0].nunique() == 2


def test_scorers_refuse_mixed_sensitive_values():
    from skfairverify.metrics import make_esl_scorer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200),
                      "s": np.array([1, "1", 0, 0] * 50, dtype=object)})
    y = (X["x"] > 0).astype(int)
    model = LogisticRegression().fit(X[["x"]], y)
    scorer = make_esl_scorer(sensitive_features="s")
    with pytest.raises(ValueError, match=r"Column 's' mixes"):
        scorer(FrozenEstimator(model), X, y)


# --------------------------------------------------------------------------- network states


def test_user_network_must_cover_the_data_values():
    net = BayesNet([2, 3], [(), (0,)], [np.array([0.5, 0.5]), np.full((2, 3), 1 / 3)],
                   names=["a", "x"], state_names=[[0, 1], [0.0, 1.0, 2.0]])
    model = frozen_rule([0.0, 1.0], -1.0, ["a", "x"])
    ok = pd.DataFrame({"a": [0, 1, 0, 1], "x": [0.0, 1.0, 2.0, 1.0]})
    FairnessVerifier(model, "a", network=net, multiplier=10).fit(ok)
    bad = ok.assign(x=[0.0, 1.0, 2.0, 3.5])
    with pytest.raises(ValueError, match=r"Variable 'x': the value\(s\) \[3.5\].*not states"):
        FairnessVerifier(model, "a", network=net, multiplier=10).fit(bad)
    between = ok.assign(x=[0.0, 1.4, 2.0, 1.0])
    with pytest.raises(ValueError, match=r"\[1.4\]"):
        FairnessVerifier(model, "a", network=net, multiplier=10).fit(between)



def test_user_network_must_cover_the_categories_and_sensitive_values():
    net = BayesNet([2, 2], [(), (0,)], [np.array([0.5, 0.5]), np.full((2, 2), 0.5)],
                   names=["a", "c"], state_names=[[0, 1], ["u", "v"]])
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X = pd.DataFrame({"a": [0, 1, 0, 1], "c": ["u", "v", "v", "u"]})
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["c"])),
                          LogisticRegression()).fit(X, [0, 1, 1, 0])
    FairnessVerifier(FrozenEstimator(model), "a", network=net, multiplier=10).fit(X)
    with pytest.raises(ValueError, match=r"Column 'c' has values \['w'\] that are not states"):
        FairnessVerifier(FrozenEstimator(model), "a", network=net, multiplier=10).fit(
            X.assign(c=["u", "v", "w", "u"]))
    with pytest.raises(ValueError, match=r"Column 'a' has values \['2'\] that are not states"):
        FairnessVerifier(FrozenEstimator(model), "a", network=net, multiplier=10).fit(
            X.assign(a=[0, 1, 2, 1]))


def test_verify_gives_unseen_discrete_values_their_own_state():
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"a": rng.integers(0, 2, n), "k": rng.integers(0, 4, n)})
    # a + k > 7.5: positive only for a = 1 and k = 7, a value absent from the rows of fit
    model = frozen_rule([1.0, 1.0], -7.5, ["a", "k"])
    ver = FairnessVerifier(model, "a", network="independent", n_bins=10,
                           multiplier=10).fit(X)
    assert ver.weights_["k"].index.tolist() == [0, 1, 2, 3]
    assert ver.metrics_["statistical_parity"] == 0.0
    k2 = np.where(np.arange(n) % 50 == 5, 7, X["k"])  # 12 rows with k = 7
    metrics = ver.verify(X.assign(k=k2)).metrics
    # independent computation: the network's smoothed marginal of k (pseudo-count 1
    # spread over its 5 states 0, 1, 2, 3, 7); snapping 7 to 3 would give 0
    expected = (12 + 1 / 5) / (n + 1)
    assert metrics["statistical_parity"] == pytest.approx(expected, abs=1e-12)
    assert metrics["disparate_impact"] == 0.0


# --------------------------------------------------------------------------- agreement


def boundary_data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    x = rng.normal(0, 1, n)
    X = pd.DataFrame({"a": a, "x": x})
    return X


def test_low_agreement_from_coarse_bins_warns_with_n_bins():
    X = boundary_data()
    # decision boundary at x = 0.5: two quantile bins (split at the median) cannot
    # reproduce it, so about Pr[0 < x < 0.5] ~ 19% of the rows disagree
    model = frozen_rule([0.0, 3.0], -1.5, ["a", "x"])
    with pytest.warns(LowAgreementWarning) as record:
        ver = FairnessVerifier(model, "a", network="independent", n_bins=2,
                               multiplier=100).fit(X)
    assert ver.agreement_ < MIN_AGREEMENT
    expected = np.mean((3 * X["x"] - 1.5 > 0) == (X["x"] > X["x"].median()))
    assert ver.agreement_ == pytest.approx(expected, abs=2 / len(X))
    message = next(str(w.message) for w in record if w.category is LowAgreementWarning)
    assert f"{ver.agreement_:.3f}" in message
    assert "discretization" in message and "raise n_bins (now 2)" in message


def test_low_agreement_from_small_multiplier_warns_with_multiplier():
    X = boundary_data()
    # decision 0.3 x, scale 0.3 (root mean square, x ~ N(0, 1)): the normalised
    # contribution of a bin is its mean, rounded to an integer with multiplier 1, so the
    # rows with 0 < x < 0.5 (about 19%) are negative for the integer rule
    model = frozen_rule([0.0, 0.3], 0.0, ["a", "x"])
    with pytest.warns(LowAgreementWarning, match=r"multiplier_=1.*raise multiplier \(now 1\)"):
        ver = FairnessVerifier(model, "a", network="independent", n_bins=60,
                               multiplier=1).fit(X)
    s = np.sqrt(np.mean((0.3 * X["x"]) ** 2))
    assert ver.decision_scale_ == pytest.approx(s, rel=1e-12)
    assert 0.7 < ver.agreement_ < 0.9
    with pytest.warns(LowAgreementWarning, match=r"raise max_multiplier \(now 1\)"):
        FairnessVerifier(model, "a", network="independent", n_bins=60,
                         max_multiplier=1).fit(X)


def test_high_agreement_does_not_warn(small_fit):
    import warnings

    X, y, _ = small_fit
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowAgreementWarning)
        ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
                               random_state=0).fit(X, y)
    assert ver.agreement_ >= MIN_AGREEMENT


def test_fif_plot_says_which_reference(skewed_fit):
    import matplotlib

    matplotlib.use("Agg")
    from skfairverify.plotting import plot_fairness_influence

    _, ver = skewed_fit
    ax = plot_fairness_influence(ver)
    assert "uniform within its observed range" in ax.get_xlabel()
    ax = plot_fairness_influence(ver, fif=ver.fairness_influence(reference="states"))
    assert "uniform over its states" in ax.get_xlabel()


@pytest.mark.parametrize("factor", [1e-12, 1e-3, 1e6])
def test_verifier_invariant_to_rescaling_the_decision_function(factor):
    rng = np.random.default_rng(5)
    n = 1500
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0, n), "z": rng.normal(0, 1, n)})
    y = (X["x"] + 0.5 * X["z"] + a + rng.normal(0, 1, n) > 1.0).astype(int)
    lr = LogisticRegression().fit(X, y)
    scaled = LogisticRegression().fit(X, y)
    scaled.coef_, scaled.intercept_ = lr.coef_ * factor, lr.intercept_ * factor
    params = dict(network="independent", max_bins=20, random_state=0)
    ref = FairnessVerifier(FrozenEstimator(lr), "a", **params).fit(X, y)
    ver = FairnessVerifier(FrozenEstimator(scaled), "a", **params).fit(X, y)
    assert ver.decision_scale_ == pytest.approx(factor * ref.decision_scale_, rel=1e-9)
    assert ver.multiplier_ == ref.multiplier_ and ver.threshold_ == ref.threshold_
    for name in ref.variables_:
        np.testing.assert_array_equal(ver.weights_[name], ref.weights_[name])
    assert ver.agreement_ == ref.agreement_ >= MIN_AGREEMENT
    for key, value in ref.metrics_.items():
        assert ver.metrics_[key] == pytest.approx(value, abs=1e-12)
    assert ref.metrics_["statistical_parity"] > 0.1
