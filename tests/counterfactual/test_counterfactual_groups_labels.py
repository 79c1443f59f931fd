"""Counterfactual audit on data as users bring it (issues 27 and 28).

Labels other than 0/1 (``pos_label``), integer column labels, missing values, three or
more (compound) groups with a row each, the time budget of the generation, and the
guards on the sizes the generators allocate.
"""

import time

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import CounterfactualFairness, counterfactual_flips, ndccf
from skfairverify.counterfactual import (
    BaseGenerator,
    DiceCounterfactuals,
    KDTreeCounterfactuals,
    LinearCounterfactuals,
    _budget,
    _fairness,
    _kdtree,
    _linear,
    privileged_group,
)
from skfairverify.counterfactual._sensitive import group_labels
from skfairverify.s3p import TableTooLargeError


def people(n=900, seed=0, classes=3):
    """Sex, a class of 1..classes, a proxy of both, a skill; the labels favor men."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    cls = rng.integers(1, classes + 1, n)
    X = pd.DataFrame({
        "sex": sex, "cls": cls,
        "proxy": (sex == "M") + 0.3 * cls + rng.normal(0, 0.3, n),
        "skill": rng.normal(size=n),
        "city": rng.choice(["a", "b"], n),
    })
    y = (X.skill + 2 * (sex == "M") - 0.3 * cls + rng.normal(0, 0.3, n) > 0.8).astype(int)
    return X, y


def unaware(columns=("proxy", "skill")):
    return make_pipeline(ColumnTransformer([("n", StandardScaler(), list(columns))]),
                         LogisticRegression())


def _equal_results(a, b):
    pd.testing.assert_frame_equal(a.per_k, b.per_k)
    assert a.n_refused == b.n_refused


# ------------------------------------------------------------------- labels
def test_flips_compare_labels_by_the_category_rule():
    with pytest.raises(ValueError, match="print alike"):
        counterfactual_flips([1, 0], np.array([["1"], ["0"]], dtype=object))
    with pytest.raises(ValueError, match="print alike"):
        ndccf([1, 0], np.array([["1"], ["0"]], dtype=object))
    # 1, 1.0 and True are one group; only a real change is a flip
    s_cf = np.array([[1.0, True, 0], [np.False_, 0.0, None]], dtype=object)
    np.testing.assert_allclose(counterfactual_flips([1, 0], s_cf), [1 / 3, 0.0])


def test_pos_label_of_a_model_with_string_classes():
    X, y = people()
    words = np.array(["no", "yes"], dtype=object)
    ref = CounterfactualFairness(unaware(), "sex", k=4, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"\['no', 'yes'\] and pos_label is not given"):
        CounterfactualFairness(unaware(), "sex", k=4).fit(X, words[y])
    res = CounterfactualFairness(unaware(), "sex", k=4, random_state=0,
                                 pos_label="yes").fit(X, words[y])
    assert res.favorable_ == "yes" and res.privileged_ == ref.privileged_
    _equal_results(res.evaluate(X), ref.evaluate(X))
    # the other label as favorable: the audit of the model of the indicator of "no"
    flipped = CounterfactualFairness(unaware(), "sex", k=4, random_state=0,
                                     pos_label="no").fit(X, words[y])
    twin = CounterfactualFairness(unaware(), "sex", k=4, random_state=0).fit(X, 1 - y)
    assert flipped.generator_.desired_class_ == "no"
    _equal_results(flipped.evaluate(X), twin.evaluate(X))
    with pytest.raises(ValueError, match="pos_label='maybe' is not one of"):
        CounterfactualFairness(unaware(), "sex", pos_label="maybe").fit(X, words[y])


def test_integer_column_labels_are_not_positions():
    """Default sensitive classifier on {1: ..., 2: ...}: was 'features must be in [0, 2]'."""
    X, y = people()
    X = X[["sex", "proxy", "skill", "city"]]
    numbered = X.set_axis([1, 2, 3, 4], axis=1)
    model = make_pipeline(ColumnTransformer([("n", StandardScaler(), [1, 2])]),
                          LogisticRegression())
    res = CounterfactualFairness(model, 1, k=4, random_state=0).fit(numbered, y)
    by_name = CounterfactualFairness(unaware(), "sex", k=4, random_state=0).fit(X, y)
    _equal_results(res.evaluate(numbered), by_name.evaluate(X))


# ------------------------------------------------------------------- missing values
def _with_missing(X, seed=0):
    rng = np.random.default_rng(seed)
    X = X.copy()
    X.loc[rng.random(len(X)) < 0.2, "proxy"] = np.nan
    X.loc[rng.random(len(X)) < 0.1, "city"] = np.nan
    return X


@pytest.mark.parametrize("model", [
    make_pipeline(ColumnTransformer([
        ("n", make_pipeline(SimpleImputer(), StandardScaler()), ["proxy", "skill"]),
        ("c", make_pipeline(SimpleImputer(strategy="most_frequent"),
                            OneHotEncoder(handle_unknown="ignore")), ["city"])]),
        LogisticRegression()),
    make_pipeline(ColumnTransformer([("n", "passthrough", ["proxy", "skill"])]),
                  HistGradientBoostingClassifier(max_iter=30, random_state=0)),
], ids=["imputer", "hgb-native"])
def test_missing_values_when_the_model_reads_them(model):
    X, y = people()
    Xm = _with_missing(X)
    audit = CounterfactualFairness(model, "sex", k=4, random_state=0).fit(Xm, y)
    res = audit.evaluate(Xm)
    assert all(np.isfinite(v) for v in res.cflips.values())
    assert sum(res.n_refused.values()) > 50
    # the kd-tree counterfactuals are accepted training rows, NaN included
    cfs = res.counterfactuals.counterfactuals
    assert cfs["proxy"].isna().any()
    assert (audit.estimator_.predict(cfs) == 1).all()
    # the linear generator never changes a missing value
    if "imputer" in str(model):
        lin = CounterfactualFairness(model, "sex", k=3, generator="linear",
                                     random_state=0).fit(Xm, y).evaluate(Xm)
        moved = lin.counterfactuals.counterfactuals
        rows = Xm.loc[moved.index.get_level_values("row")]
        assert not (rows["proxy"].isna().to_numpy() & moved["proxy"].notna().to_numpy()).any()
        assert np.isfinite(lin.cflips["delta"])
    # proxy correlations skip the pairs without a numeric difference
    corr = audit.proxy_correlations(Xm)
    assert corr["correlation"].between(-1, 1).all()


def test_model_refusing_missing_values_is_named():
    X, y = people()
    with pytest.raises(ValueError, match=r"missing values \(NaN\) in the columns \['proxy'"):
        CounterfactualFairness(unaware(), "sex").fit(_with_missing(X), y)


def test_kdtree_distance_with_missing_values_is_the_median_imputed_one():
    X, y = people(300)
    Xm = _with_missing(X, seed=3)[["proxy", "skill", "city"]]
    model = make_pipeline(ColumnTransformer([
        ("n", make_pipeline(SimpleImputer(), StandardScaler()), ["proxy", "skill"])]),
        LogisticRegression()).fit(Xm, y)
    gen = KDTreeCounterfactuals().fit(Xm, model)
    query = Xm[Xm.proxy.isna() | Xm.city.isna()].iloc[:5]
    cs = gen.generate(query, 3)
    # brute force: median imputation of the numeric columns, a missing category its own
    cand = gen.candidates_
    med = Xm[["proxy", "skill"]].median()
    span = Xm[["proxy", "skill"]].max() - Xm[["proxy", "skill"]].min()
    for pos, (_, q) in enumerate(query.iterrows()):
        num = (cand[["proxy", "skill"]].fillna(med) - q[["proxy", "skill"]].fillna(med)).abs()
        d = (num / span).sum(axis=1) + (cand.city.fillna("?") != (
            "?" if pd.isna(q.city) else q.city)).astype(float)
        expected = np.sort(d.to_numpy(dtype=float))[:3]
        got = cs.distances.to_numpy()[cs.query_positions == pos]
        np.testing.assert_allclose(got, expected, atol=1e-8)


def test_dice_refuses_missing_values_by_name():
    pytest.importorskip("dice_ml")
    X, y = people(200)
    Xm = _with_missing(X)[["proxy", "skill"]]
    model = make_pipeline(SimpleImputer(), LogisticRegression()).fit(Xm, y)
    with pytest.raises(ValueError, match=r"missing values in the columns \['proxy'\].*kdtree"):
        DiceCounterfactuals("random").fit(Xm, model)


# ------------------------------------------------------------------- groups
def _by_hand(audit, X, res, k):
    """Per-group CFlips@k from the counterfactuals and the sensitive classifier."""
    cs = res.counterfactuals
    cfs = cs.counterfactuals
    sens = audit.sensitive_features_
    side = audit.sensitive_classifier_.predict(cfs.drop(columns=sens).reset_index(drop=True))
    rows = cfs.index.get_level_values("row")
    label = X.loc[rows, sens].astype(str).agg("|".join, axis=1).to_numpy()
    own = (label == audit.privileged_).astype(int)
    frame = pd.DataFrame({"row": rows, "rank": cfs.index.get_level_values("rank"),
                          "flip": (side != own).astype(float), "group": label})
    frame = frame[frame["rank"] <= k]
    per_row = frame.groupby("row").agg(flip=("flip", "mean"), group=("group", "first"))
    return per_row.groupby("group")["flip"].mean()


def test_compound_groups_get_a_row_each():
    X, y = people(1200)
    audit = CounterfactualFairness(unaware(), ["sex", "cls"], k=5, random_state=0).fit(X, y)
    labels = X.sex + "|" + X.cls.astype(str)
    assert audit.privileged_ == privileged_group(audit.estimator_.predict(X), labels).label
    res = audit.evaluate(X)
    table = res.by_group
    assert sorted(table.index) == sorted(labels.unique())
    assert (table["side"] == "privileged").sum() == 1
    assert table.loc[audit.privileged_, "side"] == "privileged"
    expected = _by_hand(audit, X, res, 5)
    np.testing.assert_allclose(table.loc[expected.index, "cflips"], expected, rtol=1e-12)
    # the pooled unprivileged value is the mean over the unprivileged rows together
    unpriv = table[table["side"] == "unprivileged"]
    n = unpriv["n_refused"] - unpriv["n_without_counterfactuals"]
    assert res.cflips["unprivileged"] == pytest.approx(np.average(unpriv["cflips"], weights=n))
    np.testing.assert_allclose(unpriv["delta_cflips"], unpriv["cflips"] - res.cflips[
        "privileged"])
    assert res.groups["privileged"] == [audit.privileged_]
    assert sorted(res.groups["unprivileged"]) == sorted(set(labels) - {audit.privileged_})


def test_two_groups_table_matches_the_pooled_values():
    X, y = people()
    res = CounterfactualFairness(unaware(), "sex", k=5, random_state=0).fit(X, y).evaluate(X)
    for side in ("privileged", "unprivileged"):
        row = res.by_group[res.by_group["side"] == side].iloc[0]
        assert row["cflips"] == pytest.approx(res.cflips[side])
        assert row["ndccf"] == pytest.approx(res.ndccf[side])
        assert row["n_refused"] == res.n_refused[side]


def test_small_groups_are_flagged_and_never_the_reference():
    X, y = people(900)
    accepted = unaware().fit(X, y).predict(X) == 1
    rare = np.flatnonzero((X.sex == "M").to_numpy() & accepted)[:6]
    X.loc[rare, "sex"] = "X"  # a tiny group that the model always accepts
    audit = CounterfactualFairness(unaware(), "sex", k=3, random_state=0,
                                   min_group_size=30).fit(X, y)
    rates = privileged_group(audit.estimator_.predict(X), X.sex).rates
    assert audit.privileged_ == "M" != rates["selection_rate"].idxmax()
    res = audit.evaluate(X)
    assert "X" in res.small_sample and res.by_group.loc["X", "small_sample"]
    assert not res.by_group.loc["F", "small_sample"]
    assert "small samples" in repr(res)
    with pytest.raises(ValueError, match=r"No group of the 3 groups .* min_group_size=1000"):
        CounterfactualFairness(unaware(), "sex", min_group_size=1000).fit(X, y)


def test_plot_legend_names_the_groups():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skfairverify.plotting import plot_cflips_at_k

    X, y = people(900)
    res = CounterfactualFairness(unaware(), ["sex", "cls"], k=3,
                                 random_state=0).fit(X, y).evaluate(X)
    labels = [t.get_text() for t in plot_cflips_at_k(res).get_legend().get_texts()]
    assert labels[0] == f"privileged: {res.privileged}"
    assert labels[1].replace("\n", " ").startswith("unprivileged: ")
    assert "and 2 more" in labels[1].replace("\n", " ")


# ------------------------------------------------------------------- time budget
class _SlowModel:
    """A fitted model whose every call burns CPU (a row of dice-ml can take minutes)."""

    def __init__(self, model, seconds):
        self.model, self.seconds = model, seconds
        self.classes_ = model.classes_

    def _burn(self):
        end = time.process_time() + self.seconds
        while time.process_time() < end:
            pass

    def predict(self, X):
        self._burn()
        return self.model.predict(X)

    def predict_proba(self, X):
        self._burn()
        return self.model.predict_proba(X)


def test_dice_stops_at_max_time_within_a_row():
    pytest.importorskip("dice_ml")
    from sklearn.frozen import FrozenEstimator

    X, y = people(200)
    X = X[["sex", "proxy", "skill"]]
    model = FrozenEstimator(_SlowModel(unaware().fit(X, y), 0.02))
    start = time.perf_counter()
    with pytest.raises(TableTooLargeError, match=r"stopped at max_time=1\.0 CPU s: \d+ of "
                       r"\d+ rows.*posthoc_sparsity_param"):
        CounterfactualFairness(model, "sex", k=10, generator="dice-random",
                               random_state=0, max_time=1.0).fit(X, y).evaluate(X)
    assert time.perf_counter() - start < 30


class _SlowGenerator:
    """A generator of one's own (no max_time): each chunk burns CPU."""

    query_chunk_size = 4

    def __init__(self, seconds):
        self.seconds = seconds

    def fit(self, X, estimator):
        self.inner_ = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, estimator)
        return self

    def generate(self, X, k):
        end = time.process_time() + self.seconds
        while time.process_time() < end:
            pass
        return self.inner_.generate(X, k)


def test_the_estimate_after_the_first_chunk_refuses_a_long_run():
    X, y = people(400)
    audit = CounterfactualFairness(unaware(), "sex", k=3, generator=_SlowGenerator(0.2),
                                   random_state=0, max_time=2.0).fit(X, y)
    start = time.perf_counter()
    with pytest.raises(TableTooLargeError, match=r"refused: \d+ rows at the .* CPU s per row "
                       r"measured on the first 4 would take about \d+ CPU s, above "
                       r"max_time=2\.0"):
        audit.evaluate(X)
    assert time.perf_counter() - start < 5


def test_progress_bar_shown_when_the_run_is_expected_to_be_long(monkeypatch, capsys):
    X, y = people(300)
    audit = CounterfactualFairness(unaware(), "sex", k=3, random_state=0).fit(X, y)
    audit.evaluate(X)
    assert "counterfactuals" not in capsys.readouterr().err  # fast: no bar
    monkeypatch.setattr(_budget, "PROGRESS_AFTER", 0.0)
    audit.set_params(generator=_SlowGenerator(0.0)).fit(X, y).evaluate(X)
    assert "counterfactuals" in capsys.readouterr().err
    audit.set_params(verbose=0).fit(X, y).evaluate(X)
    assert "counterfactuals" not in capsys.readouterr().err


# ------------------------------------------------------------------- size guards
def test_counterfactual_frames_beyond_the_limit_are_refused_by_name(monkeypatch):
    X, y = people(300)
    audit = CounterfactualFairness(unaware(), "sex", k=10**7, random_state=0).fit(X, y)
    monkeypatch.setattr(_fairness, "MAX_ENTRIES", 10_000)
    with pytest.raises(TableTooLargeError, match=r"up to \d+ per row \(k=10,000,000\).*"
                       r"Lower k"):
        audit.evaluate(X)


def test_kdtree_and_linear_blocks_give_the_same_counterfactuals(monkeypatch):
    X, y = people(400)
    X = X[["sex", "proxy", "skill", "city"]]
    model = unaware().fit(X, y)
    query = X[model.predict(X) == 0]
    whole = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, model).generate(query, 8)
    lin = LinearCounterfactuals(immutable_features=["sex"]).fit(X, model).generate(query, 3)
    monkeypatch.setattr(_kdtree, "_PAIRS", 16)
    monkeypatch.setattr(_linear, "_PAIRS_PER_BLOCK", 5)
    cut = KDTreeCounterfactuals(immutable_features=["sex"]).fit(X, model).generate(query, 8)
    lin_cut = LinearCounterfactuals(immutable_features=["sex"]).fit(X, model).generate(query, 3)
    pd.testing.assert_frame_equal(whole.counterfactuals, cut.counterfactuals)
    pd.testing.assert_series_equal(whole.distances, cut.distances)
    pd.testing.assert_frame_equal(lin.counterfactuals, lin_cut.counterfactuals)
    monkeypatch.setattr(_linear, "MAX_PLANS", 2)
    with pytest.raises(TableTooLargeError, match=r"would evaluate \d+ plans per row.*kdtree"):
        LinearCounterfactuals().fit(X.drop(columns="sex"), make_pipeline(
            ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"])]),
            LogisticRegression()).fit(X, y))


def test_generators_share_the_base_contract():
    assert issubclass(DiceCounterfactuals, BaseGenerator)
    X, y = people(200)
    gen = KDTreeCounterfactuals().fit(X[["proxy", "skill"]], unaware().fit(X, y))
    assert gen.max_counterfactuals(10**9) == len(gen.candidates_)


def test_compound_labels_are_the_row_wise_join():
    # the vectorised labels (issue 26: a row loop took 3 s on Adult) equal the row loop's
    rng = np.random.default_rng(0)
    n = 500
    frame = pd.DataFrame({
        "sex": pd.Categorical(rng.choice(["F", "M"], n)),
        "age": rng.integers(18, 70, n),
        "score": rng.choice([0.5, 1.0, 2.25], n),
        "flag": rng.choice([True, False], n),
        "race": pd.array(rng.choice(["B", "W"], n), dtype="string"),
    })
    expected = ["|".join(str(v) for v in row) for row in frame.astype(object).itertuples(
        index=False, name=None)]
    labels = group_labels(frame)
    assert labels.dtype == object and labels.tolist() == expected
    assert group_labels(frame.iloc[:0]).tolist() == []
