"""The counterfactual box's API (issue 15): sensitive_features, the result object,
sample weights, the generator registry and the shape of the modules.

Weighted results are checked against the rows repeated as many times as their
integer weight (an independent computation: no weight reaches the code), and the
weights passed to fits are recorded by the fitted estimators themselves.
"""

from __future__ import annotations

import ast
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import skfairverify.counterfactual as cf_box
from skfairverify import CounterfactualFairness
from skfairverify.counterfactual import (
    BaseGenerator,
    ColumnSubsetClassifier,
    CounterfactualResult,
    KDTreeCounterfactuals,
    make_generator,
)
from skfairverify.counterfactual._fairness import chunk_starts
from skfairverify.metrics import make_cflips_scorer, make_ndccf_scorer


def data(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.random(n) < 0.5
    X = pd.DataFrame({
        "sex": np.where(m, "M", "F"),
        "proxy": m + rng.normal(0, 0.5, n),
        "skill": rng.normal(size=n),
    })
    y = (X.skill + 1.5 * m + rng.normal(0, 0.3, n) > 1.0).astype(int)
    return X, y


def model():
    return make_pipeline(ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"])]),
                         LogisticRegression())


CLF = make_pipeline(ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"])]),
                    LogisticRegression())


@pytest.fixture(scope="module")
def fitted():
    X, y = data(800, 0)
    Xt, _ = data(400, 1)
    with threadpool_limits(1):
        audit = CounterfactualFairness(model(), "sex", k=4, sensitive_classifier=CLF,
                                       random_state=0).fit(X, y)
    return audit, X, y, Xt


# --------------------------------------------------------------------------- names
def test_sensitive_features_one_column(fitted):
    audit, X, y, Xt = fitted
    assert audit.sensitive_features_ == ["sex"]
    as_list = CounterfactualFairness(model(), ["sex"], k=4, sensitive_classifier=CLF,
                                     random_state=0).fit(X, y)
    assert as_list.sensitive_features_ == ["sex"]
    pd.testing.assert_frame_equal(as_list.evaluate(Xt).per_k, audit.evaluate(Xt).per_k)


@pytest.mark.parametrize("bad, exc, match", [
    # an intersection with more than two groups needs privileged (never guessed)
    # 800 compound groups of one row: none can be the privileged group (issue 27's rule)
    (["sex", "proxy"], ValueError, r"No group of the 800 groups.*privileged="),
    (np.array(["F", "M"] * 3), ValueError, "6 rows but X has 800"),
    ("gender", ValueError, "'gender' not found"),
])
def test_sensitive_features_refused(fitted, bad, exc, match):
    _, X, y, _ = fitted
    with pytest.raises(exc, match=match):
        CounterfactualFairness(model(), bad).fit(X, y)


def test_scorer_factories_are_keyword_only():
    with pytest.raises(TypeError):
        make_cflips_scorer("sex")
    with pytest.raises(TypeError):
        make_ndccf_scorer("sex")
    scorer = make_ndccf_scorer(sensitive_features="sex", k=3)
    assert type(scorer).__name__ == "_CounterfactualScorer"
    assert scorer.sensitive_features == "sex" and scorer.metric == "ndccf"
    assert "sex" in repr(scorer)


# --------------------------------------------------------------------------- result
def test_result_object(fitted):
    audit, _, _, Xt = fitted
    res = audit.evaluate(Xt)
    assert isinstance(res, CounterfactualResult)
    assert res.k == 4 and res.privileged == audit.privileged_
    assert set(res.cflips) == set(res.ndccf) == {"privileged", "unprivileged", "delta"}
    last = res.per_k.loc[4]
    assert res.cflips["unprivileged"] == last["cflips_unprivileged"]
    assert res.ndccf["delta"] == pytest.approx(
        last["ndccf_privileged"] - last["ndccf_unprivileged"])
    assert res.sensitive_classifier["held_out"] is True
    frame = res.to_frame()
    assert list(frame.index) == ["privileged", "unprivileged"]
    for g in frame.index:
        assert frame.loc[g, "cflips"] == res.cflips[g]
        assert frame.loc[g, "ndccf"] == res.ndccf[g]
        assert frame.loc[g, "n_refused"] == res.n_refused[g]
    text = repr(res)
    assert text.startswith("CounterfactualResult(k=4")
    assert f"{res.cflips['delta']:.4g}" in text and str(res.n_refused["unprivileged"]) in text
    assert "<table" in res._repr_html_()
    # the counterfactuals are those of the audited rows
    rows = res.counterfactuals.counterfactuals.index.get_level_values("row")
    assert set(rows) <= set(Xt.index)
    assert res.counterfactuals.n_queries == sum(res.n_refused.values())


# --------------------------------------------------------------------------- weights
def test_evaluate_integer_weights_equal_repeated_rows(fitted):
    audit, _, _, Xt = fitted
    w = np.random.default_rng(3).integers(0, 4, len(Xt))
    weighted = audit.evaluate(Xt, sample_weight=w)
    repeated = audit.evaluate(Xt.loc[Xt.index.repeat(w)].reset_index(drop=True))
    pd.testing.assert_frame_equal(weighted.per_k, repeated.per_k, rtol=1e-12)
    for name in ("cflips", "ndccf"):
        for key, value in getattr(repeated, name).items():
            assert getattr(weighted, name)[key] == pytest.approx(value, rel=1e-12)
    assert weighted.n_refused == pytest.approx(repeated.n_refused)
    assert weighted.n_refused_all == pytest.approx(repeated.n_refused_all)
    # and the weights matter here
    plain = audit.evaluate(Xt)
    assert plain.cflips["unprivileged"] != pytest.approx(weighted.cflips["unprivileged"])


def test_evaluate_weight_zero_group_is_empty(fitted):
    audit, _, _, Xt = fitted
    w = np.where(Xt.sex == audit.privileged_, 0.0, 1.0)
    with pytest.warns(UserWarning, match="privileged"):
        res = audit.evaluate(Xt, sample_weight=w)
    assert res.empty_groups == ["privileged"] and np.isnan(res.cflips["delta"])
    with pytest.raises(ValueError, match="sample_weight"):
        audit.evaluate(Xt, sample_weight=np.ones(3))
    with pytest.raises(ValueError):
        audit.evaluate(Xt, sample_weight=-np.ones(len(Xt)))


class WeightRecorder(ClassifierMixin, BaseEstimator):
    """Logistic regression that records the weights its fit receives."""

    def fit(self, X, y, sample_weight=None):
        self.sample_weight_ = None if sample_weight is None else np.asarray(sample_weight)
        self.lr_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.lr_.classes_
        return self

    def predict(self, X):
        return self.lr_.predict(X)

    def predict_proba(self, X):
        return self.lr_.predict_proba(X)


class NoWeights(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.lr_ = LogisticRegression().fit(X, y)
        self.classes_ = self.lr_.classes_
        return self

    def predict(self, X):
        return self.lr_.predict(X)


def test_fit_weights_reach_the_fits():
    X, y = data(300, 4)
    w = np.random.default_rng(4).integers(1, 4, len(X)).astype(float)
    clf = make_pipeline(ColumnTransformer([("n", "passthrough", ["proxy", "skill"])]),
                        WeightRecorder())
    audit = CounterfactualFairness(model(), "sex", k=2, sensitive_classifier=clf, cv=3,
                                   random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(audit.sample_weight_, w)
    fold = audit.sensitive_classifier_.fold_
    for f, fold_model in enumerate(audit.sensitive_classifier_.estimators_):
        np.testing.assert_array_equal(fold_model[-1].sample_weight_, w[fold != f])
    # the decision model got them too: same coefficients as a weighted fit by hand
    by_hand = model().fit(X, y, logisticregression__sample_weight=w)
    np.testing.assert_allclose(audit.estimator_[-1].coef_, by_hand[-1].coef_)
    # a classifier without sample_weight is refused: its result would not be weighted
    with pytest.raises(TypeError, match="cannot be used to fit the sensitive classifier"):
        CounterfactualFairness(model(), "sex", k=2, cv=2, random_state=0,
                               sensitive_classifier=make_pipeline(
                                   ColumnTransformer([("n", "passthrough", ["proxy"])]),
                                   NoWeights())).fit(X, y, sample_weight=w)


def test_fit_weights_choose_the_privileged_group():
    X, y = data(300, 5)
    frozen = FrozenEstimator(model().fit(X, y))
    accepted = frozen.predict(X) == 1
    plain = CounterfactualFairness(frozen, "sex", k=2, sensitive_classifier=CLF).fit(X, y)
    assert plain.privileged_ == "M"
    # weights that make the accepted women count 50 times: the favorable rate of F
    # (computed by hand) now exceeds that of M
    w = np.where((X.sex == "F") & accepted, 50.0, 1.0)
    rates = {g: w[(X.sex == g) & accepted].sum() / w[X.sex == g].sum() for g in ("F", "M")}
    assert rates["F"] > rates["M"]
    weighted = CounterfactualFairness(frozen, "sex", k=2, sensitive_classifier=CLF).fit(
        X, y, sample_weight=w)
    assert weighted.privileged_ == "F"
    assert weighted.selection_rates_.to_dict() == pytest.approx(rates)


def test_scorer_integer_weights_equal_repeated_rows():
    X, y = data(400, 6)
    Xt, yt = data(300, 7)
    fitted_model = model().fit(X, y)
    prefit = FrozenEstimator(make_pipeline(
        ColumnTransformer([("n", StandardScaler(), ["proxy", "skill"])]),
        LogisticRegression()).fit(X.drop(columns="sex"), X.sex))
    w = np.random.default_rng(8).integers(1, 4, len(Xt))
    rep = Xt.loc[Xt.index.repeat(w)].reset_index(drop=True)
    for make in (make_cflips_scorer, make_ndccf_scorer):
        scorer = make(sensitive_features="sex", k=3, sensitive_classifier=prefit)
        assert scorer(fitted_model, Xt, yt, sample_weight=w) == pytest.approx(
            scorer(fitted_model, rep, None), rel=1e-12)


def test_scorer_weights_by_metadata_routing():
    X, y = data(600, 9)
    w = np.random.default_rng(10).integers(1, 4, len(X)).astype(float)
    cv = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        lr = LogisticRegression().set_fit_request(sample_weight=False)
        est = make_pipeline(ColumnTransformer([("n", "passthrough", ["proxy", "skill"])]), lr)
        scorer = make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=CLF,
                                    random_state=0)
        scorer.set_score_request(sample_weight=True)
        out = cross_validate(est, X, y, cv=cv, scoring=scorer, error_score="raise",
                             return_estimator=True, params={"sample_weight": w})
    # by hand: the same scorer on each validation fold with that fold's weights
    for fitted_est, (_, test) in zip(out["estimator"], cv.split(X)):
        plain = make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=CLF,
                                   random_state=0)
        expected = plain(fitted_est, X.iloc[test], y.iloc[test], sample_weight=w[test])
        unweighted = plain(fitted_est, X.iloc[test], y.iloc[test])
        assert expected != unweighted
    np.testing.assert_allclose(
        out["test_score"],
        [make_cflips_scorer(sensitive_features="sex", k=3, sensitive_classifier=CLF,
                            random_state=0)(e, X.iloc[t], y.iloc[t], sample_weight=w[t])
         for e, (_, t) in zip(out["estimator"], cv.split(X))])


# --------------------------------------------------------------------------- generators
class Chunked(BaseGenerator):
    """Records the size of every generate call; counterfactual = the row, skill + 5."""

    query_chunk_size = 3

    def __init__(self, immutable_features=None, calls=None):
        self.immutable_features = immutable_features
        self.calls = calls

    def fit(self, X, estimator):
        self.desired_class = None
        self.ranking = "distance"
        self._fit_common(X, estimator)
        return self

    def _generate(self, Xq, k):
        self.calls.append(len(Xq))
        cf = Xq.assign(skill=Xq.skill + 5.0)
        pos = np.arange(len(Xq))
        ok = self._accepted(cf)
        dist = self.proximity_.distance(Xq, cf)
        return self._finalize(Xq, cf.loc[ok], pos[ok], dist[ok], k)


def test_generator_chooses_its_chunk_size(fitted):
    _, X, y, Xt = fitted
    calls = []
    audit = CounterfactualFairness(model(), "sex", k=1, sensitive_classifier=CLF,
                                   generator=Chunked(calls=calls), random_state=0).fit(X, y)
    audit.generator_.calls = calls  # clone() copied the list: share it again
    res = audit.evaluate(Xt)
    n = sum(res.n_refused.values())
    # chunks of 3 rows; a last chunk of 1 (less than half of 3) joins the one before it
    expected = [3] * (n // 3) + [n % 3] if n % 3 > 1 else [3] * (n // 3 - 1) + [3 + n % 3]
    assert n > 3 and calls == expected
    assert KDTreeCounterfactuals.query_chunk_size == 512
    assert cf_box.DiceCounterfactuals.query_chunk_size == 4


@pytest.mark.parametrize("size", [1, 2, 3, 4, 512])
def test_chunks_cover_the_rows_and_a_short_tail_joins_the_last_chunk(size):
    for n in range(1, 3 * size + 3):
        starts = chunk_starts(n, size)
        sizes = np.diff([*starts, n])
        assert starts[0] == 0 and sizes.sum() == n
        assert (sizes[:-1] == size).all()  # every chunk but the last has `size` rows
        if n >= size:  # the last: a whole one, or a tail of at least half, or joined
            tail = n % size
            assert sizes[-1] == (size if tail == 0 else tail if 2 * tail >= size
                                 else size + tail)
        else:
            assert list(sizes) == [n]


def test_column_subset_classifier_seen_by_linear_generator():
    X, y = data(300, 11)
    X = X.rename(columns={"proxy": "x0", "skill": "x1"})  # as the scorer names array columns
    lr = LogisticRegression().fit(X[["x0", "x1"]].to_numpy(), y)
    view = FrozenEstimator(ColumnSubsetClassifier(lr, ["x0", "x1"], as_array=True))
    np.testing.assert_array_equal(view.predict(X), lr.predict(X[["x0", "x1"]].to_numpy()))
    gen = make_generator("linear", immutable_features=["sex"]).fit(X, view)
    # the generator read the wrapped model's coefficients
    np.testing.assert_allclose(gen.rule_.decision_function(X),
                               lr.decision_function(X[["x0", "x1"]].to_numpy()))
    refused = X[view.predict(X) == 0].iloc[:10]
    cs = gen.generate(refused, 2)
    assert len(cs.counterfactuals) and (view.predict(cs.counterfactuals) == 1).all()
    assert (cs.counterfactuals["sex"].to_numpy()
            == refused["sex"].to_numpy()[cs.query_positions]).all()


def test_generators_validate_their_parameters():
    X, y = data(100, 12)
    m = model().fit(X, y)
    with pytest.raises(ValueError, match="'batch_size' parameter"):
        KDTreeCounterfactuals(batch_size=0).fit(X, m)
    with pytest.raises(ValueError, match="'margin' parameter"):
        make_generator("linear").set_params(margin=-1).fit(X, m)
    with pytest.raises(ValueError, match="'method' parameter"):
        cf_box.DiceCounterfactuals(method="grid").fit(X, m)


# --------------------------------------------------------------------------- layout
BOX = pathlib.Path(cf_box.__file__).parent


def _relative_imports(path):
    tree = ast.parse(path.read_text())
    return {node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}


def test_layers_without_cycles():
    """base <- generators <- registry <- audit: no module imports one above it."""
    layer = {"_base": 0, "_column_subset": 0, "_metrics": 1, "_crossfit": 0, "_kdtree": 1,
             "_linear": 1, "_dice": 1, "_registry": 2, "_results": 1, "_sensitive": 0,
             "_fairness": 3, "_budget": -1, "_groups": 0, "_shared": 4}
    assert {p.stem for p in BOX.glob("_*.py")} - {"__init__"} == set(layer)
    for name, level in layer.items():
        for imported in _relative_imports(BOX / f"{name}.py"):
            assert layer[imported] < level, f"{name} imports {imported}"
    # no private attribute of another module, no class recognised by its name
    for path in BOX.glob("_*.py"):
        text = path.read_text()
        assert "_skfv_inner" not in text and "__name__ ==" not in text


def test_no_generator_reads_k_or_nan_twice():
    sources = {p.stem: p.read_text() for p in BOX.glob("_*.py")}
    assert sum("K_CONSTRAINT = " in s for s in sources.values()) == 1
    assert sum(".isna().any()" in s for s in sources.values()) == 1
    assert sum("GENERATORS = " in s for s in sources.values()) == 1


def test_estimator_parameters_validated_together():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, y = data(100, 13)
    for params, name in [({"n_jobs": "two"}, "n_jobs"), ({"verbose": -1}, "verbose"),
                         ({"sensitive_classifier": "hgb"}, "sensitive_classifier"),
                         ({"random_state": "seed"}, "random_state")]:
        with pytest.raises(ValueError, match=f"'{name}' parameter"):
            CounterfactualFairness(model(), "sex", **params).fit(X, y)
