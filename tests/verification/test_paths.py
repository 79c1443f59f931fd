"""The verifier's paths as objects: the explicit choice, the protocol, one sequence."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures
from sklearn.tree import DecisionTreeClassifier

from skfairverify import FairnessVerifier
from skfairverify.rules import read_model
from skfairverify.verification._ensemble_path import EnsemblePath
from skfairverify.verification._linear_path import LinearPath
from skfairverify.verification._paths import DrawsPath, Path, select_path
from skfairverify.verification._paths_sampling import SamplingPath
from skfairverify.verification._settings import Settings, Variables
from skfairverify.verification._trees_path import TreePath

MODELS = {
    "linear": (LogisticRegression(), LinearPath),
    "tree": (DecisionTreeClassifier(max_depth=3, random_state=0), TreePath),
    "sampling": (KNeighborsClassifier(5), SamplingPath),
    "unreadable step": (make_pipeline(PolynomialFeatures(2), LogisticRegression()),
                        SamplingPath),
}


def _select(model, data, method="auto"):
    X, y = data()
    fitted = model.fit(X, y)
    settings = Settings.of(FairnessVerifier(fitted, "a", method=method))
    return select_path(settings, fitted, X, None, y, feature_names=list(X.columns),
                       input_labels=list(X.columns))


@pytest.mark.parametrize("name", list(MODELS))
def test_select_path_reads_the_model(name, two_group_data):
    """Linear and tree models are read exactly, any other model is sampled."""
    model, kind = MODELS[name]
    path = _select(model, two_group_data)
    assert type(path) is kind
    assert path.name == ("sampling" if kind is SamplingPath else "exact")
    np.testing.assert_array_equal(path.classes, [0, 1])


@pytest.mark.parametrize("name", ["linear", "tree"])
def test_method_sampling_samples_a_readable_model(name, two_group_data):
    assert type(_select(MODELS[name][0], two_group_data, method="sampling")) is SamplingPath


@pytest.mark.parametrize("name, reason", [
    ("sampling", "cannot be read as one"),
    ("unreadable step", "PolynomialFeatures"),
])
def test_method_exact_refuses_an_unread_model_with_the_readers_reason(name, reason,
                                                                      two_group_data):
    with pytest.raises(TypeError, match=f"method='exact'.*{reason}"):
        _select(MODELS[name][0], two_group_data, method="exact")


def test_read_model_keeps_every_refusal_in_order(two_group_data):
    X, y = two_group_data()
    tree = DecisionTreeClassifier(max_depth=2).fit(X, y)
    reading = read_model(tree)
    assert reading.kind == "tree" and reading.rule is None
    assert len(reading.reasons) == 1 and "linear" in str(reading.reasons[0])
    knn = read_model(KNeighborsClassifier(3).fit(X, y))
    assert knn.kind is None and len(knn.reasons) == 1


def test_method_bounds_takes_the_ensemble_path_and_auto_samples_ensembles(two_group_data):
    forest = RandomForestClassifier(5, max_depth=3, random_state=0)
    path = _select(forest, two_group_data, method="bounds")
    assert type(path) is EnsemblePath and path.name == "bounds" and path.kind == "ensemble"
    assert type(_select(forest, two_group_data)) is SamplingPath
    with pytest.raises(TypeError, match="method='bounds'.*not a tree ensemble"):
        _select(LogisticRegression(), two_group_data, method="bounds")


@pytest.mark.parametrize("kind", [LinearPath, TreePath, EnsemblePath, SamplingPath])
def test_every_path_has_the_protocol(kind):
    methods = [m for m in vars(Path) if not m.startswith("_")]
    assert {"encode", "evaluate", "agreement", "check_agreement", "remember"} <= set(methods)
    for m in methods:
        assert hasattr(kind, m), (kind.__name__, m)


@pytest.mark.parametrize("kind", [LinearPath, TreePath, EnsemblePath])
def test_the_exact_and_bounds_paths_have_the_draws_protocol(kind):
    methods = [m for m in vars(DrawsPath) if not m.startswith("_")]
    assert {"point_rates", "draw_rates_of", "draws_seconds"} <= set(methods)
    for m in methods:
        assert callable(getattr(kind, m)), (kind.__name__, m)


def test_the_verifier_has_scikit_learns_bases_only():
    assert FairnessVerifier.__bases__ == (ClassifierMixin, MetaEstimatorMixin, BaseEstimator)
    own = [c for c in FairnessVerifier.__mro__ if c.__module__.startswith("skfairverify")]
    assert own == [FairnessVerifier]


def test_settings_are_the_parameters_frozen():
    ver = FairnessVerifier(LogisticRegression(), "a", n_bins=7, random_state=3)
    settings = Settings.of(ver)
    params = ver.get_params(deep=False)
    assert {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)} == params
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.n_bins = 8


@pytest.mark.parametrize("name", ["linear", "tree", "sampling"])
def test_the_path_alone_gives_the_verifiers_groups(name, two_group_data):
    """encode -> evaluate on the path object gives what FairnessVerifier.fit stores."""
    model, _ = MODELS[name]
    X, y = two_group_data(seed=1)
    fitted = model.fit(X, y)
    ver = FairnessVerifier(FrozenEstimator(fitted), "a", n_draws=0, n_bootstrap=0,
                           random_state=0, tolerance=0.05).fit(X, y)
    settings = Settings.of(ver)
    path = select_path(settings, ver.estimator_, X, None, y, feature_names=list(X.columns),
                       input_labels=list(X.columns))
    quantized = path.encode(X, ["a"], None)
    variables = Variables.of(quantized.encoding, ["a"], None)
    y_pos = y.to_numpy() == 1
    ev = path.evaluate(variables, X, y_pos, quantized.encoding, quantized.multipliers, None)
    pd.testing.assert_frame_equal(ev.groups, ver.groups_)
    assert ev.metrics == ver.metrics_
    assert path.agreement(quantized.encoding, X, ev.multiplier, None) == ver.agreement_


def test_method_reason_says_why_each_path_was_chosen(two_group_data, monkeypatch):
    """method_reason_ names the reader that read the model, or why the ensemble was
    sampled (refused by the check, or above its cost limit), or method='sampling'."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skfairverify.verification import _ensemble_path

    X, y = two_group_data(seed=2)
    fast = {"n_draws": 0, "n_bootstrap": 0, "tolerance": 0.05, "random_state": 0}

    def reason(model, **kw):
        ver = FairnessVerifier(model, "a", **fast, **kw).fit(X, y)
        return ver.method_, ver.method_reason_

    assert reason(LogisticRegression()) == ("exact", "a linear rule is read from the model")
    assert reason(DecisionTreeClassifier(max_depth=2)) == ("exact", "a decision tree is read")
    assert reason(LogisticRegression(), method="sampling") == ("sampling", "method='sampling'")
    method, why = reason(KNeighborsClassifier(5))
    assert method == "sampling" and "KNeighborsClassifier cannot be read" in why
    hgb = FrozenEstimator(HistGradientBoostingClassifier(max_iter=5, max_depth=2,
                                                         random_state=0).fit(X, y))
    method, why = reason(hgb)
    assert method == "bounds" and why.startswith("a tree ensemble: 2**") and "within" in why
    assert reason(hgb, method="bounds")[1] == "method='bounds': the tree ensemble is read"
    monkeypatch.setattr(_ensemble_path, "AUTO_MAX_COST", 1.0)
    method, why = reason(hgb)
    assert method == "sampling"
    assert why.startswith("a tree ensemble, not bounded: 2**") and why.endswith("above 2**1")
    # a one-hot encoder of three categories: no order of c's states makes a range
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    Xc = X.assign(c=np.random.default_rng(0).choice(["p", "q", "r"], len(X)))
    onehot = make_pipeline(
        make_column_transformer((OneHotEncoder(sparse_output=False), ["c"]),
                                remainder="passthrough"),
        GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0))
    yc = np.where(Xc["c"] == "q", 1, np.where(Xc["c"] == "r", 0, y))
    ver = FairnessVerifier(onehot, "a", **fast).fit(Xc, yc)
    assert ver.method_ == "sampling"
    assert "a tree ensemble, not bounded: refused: On column 'c'" in ver.method_reason_
