"""FairnessConstrainedRefit in real searches, and the scorer base class routes."""

import pickle
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
from fairlearn.metrics import demographic_parity_difference
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import (
    FairnessConstrainedRefit,
    FairnessConstraintWarning,
    fairness_constrained_refit,
)
from skfairverify.metrics._base import _FairnessScorer


class NegParityGap(_FairnessScorer):
    """-|selection rate gap| computed with fairlearn (an independent implementation)."""

    def _score(self, estimator, X, y, sensitive, sample_weight):
        y_pred = estimator.predict(X)
        return -demographic_parity_difference(y, y_pred, sensitive_features=sensitive.iloc[:, 0],
                                              sample_weight=sample_weight)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    proxy = (sex == "M") + rng.normal(0, 0.5, n)
    other = rng.normal(size=n)
    y = ((sex == "M") * 1.0 + other + rng.normal(0, 0.5, n) > 0.5).astype(int)
    return pd.DataFrame({"proxy": proxy, "other": other, "sex": sex}), y


def _search(cls=GridSearchCV, refit=None, **kw):
    model = make_pipeline(
        make_column_transformer(
            (StandardScaler(), ["proxy", "other"]), (OneHotEncoder(), ["sex"])
        ),
        LogisticRegression(),
    )
    # Strong regularisation flattens the coefficients: the gap shrinks with C.
    grid = {"logisticregression__C": [1e-4, 3e-4, 1e-3, 1e-2, 1.0]}
    scoring = {"acc": "accuracy", "sp": NegParityGap("sex")}
    if cls is GridSearchCV:
        return cls(model, grid, scoring=scoring, refit=refit, cv=3, **kw)
    return cls(model, grid, n_iter=5, scoring=scoring, refit=refit, cv=3, random_state=0, **kw)


def _brute_force(results, score, bounds):
    best, best_score = None, -np.inf
    for i in range(len(results[f"mean_test_{score}"])):
        if all(results[f"mean_test_{k}"][i] >= b for k, b in bounds.items()):
            if results[f"mean_test_{score}"][i] > best_score:
                best, best_score = i, results[f"mean_test_{score}"][i]
    return best


@pytest.mark.parametrize("cls", [GridSearchCV, RandomizedSearchCV])
def test_bound_binds_and_is_respected(cls):
    X, y = _data()
    free = _search(cls, refit="acc").fit(X, y)
    res = free.cv_results_
    sp = res["mean_test_sp"]
    # A bound strictly between the worst and best fairness, so that it binds.
    bound = float(np.sort(sp)[len(sp) // 2])
    # the unconstrained choice (most accurate) violates the bound: the constraint binds
    assert sp[free.best_index_] < bound
    search = _search(cls, refit=fairness_constrained_refit("acc", "sp", bound)).fit(X, y)
    expected = _brute_force(search.cv_results_, "acc", {"sp": bound})
    assert search.best_index_ == expected
    assert search.cv_results_["mean_test_sp"][search.best_index_] >= bound
    # the refitted model is the chosen candidate
    assert search.best_estimator_[-1].C == search.cv_results_["params"][expected][
        "logisticregression__C"]


def test_unreachable_bound_warns_and_picks_closest():
    X, y = _data()
    with pytest.warns(FairnessConstraintWarning, match="closest"):
        search = _search(refit=fairness_constrained_refit("acc", "sp", 0.5)).fit(X, y)
    sp = search.cv_results_["mean_test_sp"]
    assert search.best_index_ == int(np.argmax(sp))


def test_several_constraints():
    results = {
        "mean_test_acc": np.array([0.9, 0.88, 0.86, 0.7]),
        "mean_test_sp": np.array([-0.2, -0.04, -0.03, -0.01]),
        "mean_test_di": np.array([0.6, 0.75, 0.85, 0.95]),
    }
    refit = fairness_constrained_refit("acc", {"sp": -0.05, "di": 0.8})
    assert refit(results) == _brute_force(results, "acc", {"sp": -0.05, "di": 0.8}) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fairness_constrained_refit("acc", {"sp": -0.05})(results) == 1


def test_nan_candidates_never_qualify():
    results = {"mean_test_acc": np.array([0.99, 0.8]), "mean_test_sp": np.array([np.nan, -0.01])}
    assert fairness_constrained_refit("acc", "sp", -0.05)(results) == 1
    all_nan = {"mean_test_acc": np.array([0.9]), "mean_test_sp": np.array([np.nan])}
    with pytest.raises(ValueError, match="NaN"):
        fairness_constrained_refit("acc", "sp", -0.05)(all_nan)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (("acc", "sp"), ValueError, "needs a threshold"),
        (("acc", {"sp": -0.1}, -0.1), ValueError, "not both"),
        (("acc", ["sp"], 0.1), TypeError, "'constraint' parameter"),
        (("acc", "sp", float("nan")), ValueError, "'threshold' parameter"),
        (("acc", "sp", float("inf")), ValueError, "'threshold' parameter"),
        (("acc", "sp", True), ValueError, "not a bool"),  # the Interval constraint refuses bools
        (("acc", {"sp": float("nan")}), ValueError, "finite number"),
        (("acc", {"sp": "0.1"}), ValueError, "finite number"),
        (("acc", {1: 0.1}), TypeError, "names must be strings"),
        ((3, "sp", 0.1), TypeError, "'score' parameter"),
        (("acc", {}), ValueError, "At least one"),
    ],
)
@pytest.mark.parametrize("make", [fairness_constrained_refit, FairnessConstrainedRefit])
def test_bad_arguments(make, args, exc, match):
    with pytest.raises(exc, match=match):
        make(*args)


def test_bad_arguments_name_the_caller():
    with pytest.raises(TypeError, match="'score' parameter of fairness_constrained_refit"):
        fairness_constrained_refit(3, "sp", 0.1)
    with pytest.raises(TypeError, match="'score' parameter of FairnessConstrainedRefit"):
        FairnessConstrainedRefit(3, "sp", 0.1)


def test_repr_and_attributes():
    refit = fairness_constrained_refit("accuracy", "sp", -0.1)
    assert isinstance(refit, FairnessConstrainedRefit)
    assert repr(refit) == (
        "FairnessConstrainedRefit(score='accuracy', constraint='sp', threshold=-0.1)")
    several = FairnessConstrainedRefit("accuracy", {"sp": -0.1, "di": 0.8})
    assert repr(several) == (
        "FairnessConstrainedRefit(score='accuracy', constraint={'sp': -0.1, 'di': 0.8})")
    assert several.constraints == {"sp": -0.1, "di": 0.8}
    assert refit.constraints == {"sp": -0.1}
    # the repr rebuilds an equivalent object
    rebuilt = eval(repr(several), {"FairnessConstrainedRefit": FairnessConstrainedRefit})
    assert rebuilt.constraints == several.constraints and rebuilt.score == several.score


@pytest.mark.parametrize("dump", ["pickle", "joblib"])
def test_fitted_search_round_trips(dump, tmp_path):
    X, y = _data()
    free = _search(refit="acc").fit(X, y).cv_results_["mean_test_sp"]
    bound = float(np.sort(free)[len(free) // 2])
    search = _search(refit=FairnessConstrainedRefit("acc", {"sp": bound})).fit(X, y)
    if dump == "pickle":
        loaded = pickle.loads(pickle.dumps(search))
    else:
        joblib.dump(search, tmp_path / "search.joblib")
        loaded = joblib.load(tmp_path / "search.joblib")
    assert loaded.best_index_ == search.best_index_
    assert loaded.cv_results_["mean_test_sp"][loaded.best_index_] >= bound
    assert repr(loaded.refit) == repr(search.refit)
    # the loaded callable chooses the same candidate again, and the model predicts the same
    assert loaded.refit(loaded.cv_results_) == search.best_index_
    np.testing.assert_array_equal(loaded.predict(X), search.predict(X))


def test_unknown_scorer_name():
    refit = fairness_constrained_refit("acc", "eo", -0.1)
    with pytest.raises(KeyError, match="'eo'"):
        refit({"mean_test_acc": np.array([0.5]), "mean_test_sp": np.array([0.0])})


# ---------------------------------------------------------------- scorer base routes


def test_scorer_routes_agree_in_grid_search():
    X, y = _data()
    by_name = _search(refit="acc").fit(X, y).cv_results_["mean_test_sp"]
    with sklearn.config_context(enable_metadata_routing=True):
        model = _search(refit="acc")
        model.scoring = {"acc": "accuracy",
                         "sp": NegParityGap().set_score_request(sensitive_features=True)}
        routed = model.fit(X, y, sensitive_features=X["sex"]).cv_results_["mean_test_sp"]
    np.testing.assert_allclose(by_name, routed)
    assert np.ptp(by_name) > 0.01  # the grid spans really different fairness levels


def test_scorer_bad_inputs():
    X, y = _data(60)
    model = LogisticRegression().fit(X[["proxy", "other"]], y)

    class Drop(NegParityGap):
        def _score(self, estimator, X, y, sensitive, sample_weight):
            X = X.drop(columns=[c for c in ("sex", "race") if c in X.columns])
            return super()._score(estimator, X, y, sensitive, sample_weight)

    with pytest.raises(ValueError, match="not found in X"):
        Drop("race")(model, X, y)
    with pytest.raises(ValueError, match="single group"):
        Drop("sex")(model, X.assign(sex="F"), y)
    with pytest.raises(ValueError, match="NaN"):
        Drop("sex")(model, X.assign(sex=X["sex"].where(X.index > 0)), y)
    with pytest.raises(ValueError, match="no sensitive features"):
        Drop()(model, X, y)
    with pytest.raises(TypeError, match="DataFrame"):
        Drop("sex")(model, X[["proxy", "other"]].to_numpy(), y)
    with pytest.raises(ValueError, match="rows"):
        Drop()(model, X, y, sensitive_features=X["sex"].iloc[:10])
    with pytest.raises(RuntimeError, match="enable_metadata_routing"):
        Drop().set_score_request(sensitive_features=True)
    # the name route and the metadata route give the same number, equal to fairlearn's
    expected = -demographic_parity_difference(
        y, model.predict(X[["proxy", "other"]]), sensitive_features=X["sex"])
    assert Drop("sex")(model, X, y) == pytest.approx(expected)
    routed = Drop()(model, X[["proxy", "other"]], y, sensitive_features=X["sex"].to_numpy())
    assert routed == pytest.approx(expected)


# ---------------------------------------------------------------- NaN never qualifies


class NanWhenC(NegParityGap):
    """The parity scorer, but NaN for the candidates whose C is in ``nan_for``.

    The base class refuses a non-finite score with an error, which the search records as
    NaN (``error_score=np.nan``), as it does for any failing fairness scorer.
    """

    def __init__(self, sensitive_features=None, nan_for=()):
        super().__init__(sensitive_features)
        self.nan_for = nan_for

    def _score(self, estimator, X, y, sensitive, sample_weight):
        if estimator[-1].C in self.nan_for:
            return np.nan
        return super()._score(estimator, X, y, sensitive, sample_weight)


def _nan_search(nan_for, bound):
    search = _search(refit=fairness_constrained_refit("acc", "sp", bound))
    search.scoring = {"acc": "accuracy", "sp": NanWhenC("sex", nan_for=nan_for)}
    return search


def test_every_constraint_nan_in_a_search_raises():
    X, y = _data()
    grid = [1e-4, 3e-4, 1e-3, 1e-2, 1.0]
    search = _nan_search(grid, bound=-1.0)  # the bound would accept any finite score
    with warnings.catch_warnings():
        # scikit-learn's own warnings about the failed scorer are expected here
        warnings.filterwarnings("ignore", message="Scoring failed", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*non-finite", category=UserWarning)
        with pytest.raises(ValueError, match="mean_test_sp is NaN for every candidate"):
            search.fit(X, y)


def test_nan_candidates_are_never_chosen_in_a_search():
    X, y = _data()
    free = _search(refit="acc").fit(X, y).cv_results_
    # make the candidates that would win (most accurate, feasible or not) NaN
    order = np.argsort(-free["mean_test_acc"])
    nan_for = tuple(free["params"][i]["logisticregression__C"] for i in order[:2])
    for bound in (-1.0, 0.5):  # a bound every finite candidate meets, and one none meets
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Scoring failed", category=UserWarning)
            warnings.filterwarnings("ignore", message=".*non-finite", category=UserWarning)
            warnings.simplefilter("ignore", FairnessConstraintWarning)
            search = _nan_search(nan_for, bound).fit(X, y)
        res = search.cv_results_
        assert np.isnan(res["mean_test_sp"][order[:2]]).all()
        finite = np.flatnonzero(~np.isnan(res["mean_test_sp"]))
        if bound < 0:  # all finite ones qualify: the most accurate of them
            expected = finite[np.argmax(res["mean_test_acc"][finite])]
        else:  # none qualifies: the closest (largest sp) of the finite ones
            expected = finite[np.argmax(res["mean_test_sp"][finite])]
        assert search.best_index_ == expected
        assert search.best_estimator_[-1].C not in nan_for


@pytest.mark.parametrize(
    "acc, sp, expected",
    [
        ([np.nan, 0.8], [-0.01, -0.01], 1),  # NaN score, feasible: not chosen
        ([np.nan, 0.8], [-0.01, -0.5], 1),  # the only feasible one has a NaN score
        ([0.9, 0.8, 0.7], [np.nan, -0.5, -0.3], 2),  # closest among the finite ones
    ],
)
def test_nan_score_never_qualifies(acc, sp, expected):
    results = {"mean_test_acc": np.array(acc), "mean_test_sp": np.array(sp)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FairnessConstraintWarning)
        assert fairness_constrained_refit("acc", "sp", -0.05)(results) == expected


def test_every_score_nan_raises_naming_the_column():
    results = {"mean_test_acc": np.array([np.nan, np.nan]),
               "mean_test_sp": np.array([-0.01, -0.02])}
    with pytest.raises(ValueError, match="mean_test_acc is NaN for every candidate"):
        fairness_constrained_refit("acc", "sp", -0.05)(results)
    mixed = {"mean_test_acc": np.array([np.nan, 0.9]), "mean_test_sp": np.array([-0.01, np.nan]),
             "mean_test_di": np.array([0.9, 0.9])}
    with pytest.raises(ValueError, match=r"mean_test_acc is NaN for \[0\].*mean_test_sp"):
        fairness_constrained_refit("acc", {"sp": -0.05, "di": 0.8})(mixed)
