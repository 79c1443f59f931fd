"""scikit-learn's estimator contract, for every estimator of skfairverify.

``parametrize_with_checks`` runs the generic checks of scikit-learn over each
estimator; ``expected_failed_checks`` lists, with the reason, every check that cannot
apply. The generic checks feed numeric arrays (mostly continuous floats):

- ``FairnessVerifier`` is checked with ``sensitive_features=0`` (the first column of X
  is the sensitive feature) and small settings (``network="independent"``,
  ``n_bins=3``, ``multiplier=10``). Most checks' data give that column a few values;
  where they give it many distinct floats, the verifier refuses it as continuous by
  design (a sensitive feature is categorical, at most 10 values).
- ``CounterfactualFairness`` is an auditor (no ``predict``) and the counterfactual
  generators take ``fit(X, estimator)`` (the model to explain, not ``y``), on a
  DataFrame with named columns: their generic checks that fit are listed as expected
  failures; the others (clone, parameters, repr, tags) must pass. Their fitted
  behaviour is tested in ``tests/test_counterfactual*.py``.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

import skfairverify
from skfairverify import (
    CounterfactualFairness,
    FairnessVerifier,
    IntegerWeightScaler,
)
from skfairverify.counterfactual import (
    DiceCounterfactuals,
    KDTreeCounterfactuals,
    LinearCounterfactuals,
)

_CONTINUOUS = (
    "the check's data give the sensitive column (X[:, 0]) many distinct floats: a "
    "sensitive feature must be categorical (at most 10 values), refused by design"
)
VERIFIER_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": _CONTINUOUS,
    "check_decision_proba_consistency": _CONTINUOUS,
}

_GENERATOR = (
    "fit(X, estimator): the second argument is the model to explain, not y, and X must "
    "be a DataFrame with named columns (the counterfactuals are rows of it)"
)
_GENERATOR_FIT_CHECKS = (
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_estimators_dtypes",
    "check_complex_data",
    "check_dtype_object",
    "check_estimators_empty_data_messages",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimator_sparse_tag",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1sample",
    "check_fit2d_1feature",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit1d",
    "check_fit2d_predict1d",
)
GENERATOR_FAILURES = dict.fromkeys(_GENERATOR_FIT_CHECKS, _GENERATOR)

_FRAME = (
    "CounterfactualFairness needs X as a pandas DataFrame (the counterfactuals and the "
    "sensitive columns are named columns): arrays are refused with a TypeError"
)
AUDIT_FAILURES = {
    **dict.fromkeys(
        [c for c in _GENERATOR_FIT_CHECKS if not c.startswith("check_estimator_sparse")],
        _FRAME,
    ),
    **dict.fromkeys(
        ["check_sample_weights_not_an_array", "check_sample_weights_list",
         "check_all_zero_sample_weights_error", "check_sample_weights_shape",
         "check_sample_weights_not_overwritten"],
        _FRAME,
    ),
    "check_sample_weights_pandas_series": (
        "the check's sensitive column has 3 groups: an audit of more than two needs "
        "privileged=<group>, which depends on the data"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "the check sets cv to a list of splits; cv is the number of cross-fitting folds"
    ),
}


def _verifier():
    return FairnessVerifier(
        LogisticRegression(), sensitive_features=0, network="independent", n_bins=3,
        multiplier=10,
    )


def all_estimators() -> dict[str, type]:
    """Every public estimator class: a ``BaseEstimator`` named in a public module's ``__all__``.

    Modules with a private part (``_verifier``, ``__main__``) are not walked, and classes
    named ``Base*`` are bases to subclass, not estimators (scikit-learn's convention).
    """
    found = {}
    for info in pkgutil.walk_packages(skfairverify.__path__, "skfairverify."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (inspect.isclass(obj) and issubclass(obj, BaseEstimator)
                    and not name.startswith("Base")):
                found[obj.__name__] = obj
    return dict(sorted(found.items()))


#: Estimators whose constructor needs arguments (the others are built with defaults).
CONSTRUCTED = {
    IntegerWeightScaler: lambda: IntegerWeightScaler(LogisticRegression()),
    FairnessVerifier: _verifier,
    CounterfactualFairness: lambda: CounterfactualFairness(LogisticRegression(),
                                                           sensitive_features=0),
}

ESTIMATORS = [CONSTRUCTED.get(cls, cls)() for cls in all_estimators().values()]


def test_the_checks_discover_every_public_estimator():
    """A new public estimator is checked without being listed here (and the walk finds
    the ones of every subpackage, the counterfactual generators included)."""
    names = set(all_estimators())
    assert {"BinningDiscretizer", "IntegerWeightScaler", "FairnessVerifier",
            "CounterfactualFairness", "KDTreeCounterfactuals", "LinearCounterfactuals",
            "DiceCounterfactuals"} <= names
    assert {type(e).__name__ for e in ESTIMATORS} == names


def _expected_failed_checks(estimator):
    if isinstance(estimator, FairnessVerifier):
        return VERIFIER_FAILURES
    if isinstance(estimator, CounterfactualFairness):
        return AUDIT_FAILURES
    if isinstance(estimator, (KDTreeCounterfactuals, LinearCounterfactuals,
                              DiceCounterfactuals)):
        return GENERATOR_FAILURES
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_integer_weight_scaler_frozen_without_y():
    """A frozen model needs no y, as in FairnessVerifier; an unfitted one does."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] - 0.5 * X[:, 1] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    scaler = IntegerWeightScaler(FrozenEstimator(model)).fit(X)
    assert scaler.estimator_ is not None
    with_y = IntegerWeightScaler(FrozenEstimator(model)).fit(X, y)
    np.testing.assert_array_equal(scaler.coef_, with_y.coef_)
    np.testing.assert_array_equal(scaler.predict(X), with_y.predict(X))
    assert scaler.agreement_ == with_y.agreement_
    with pytest.raises(ValueError, match="requires y to be passed"):
        IntegerWeightScaler(LogisticRegression()).fit(X)


def test_verifier_target_and_input_contract():
    """Multiclass or continuous y: ValueError; a column y: warned and raveled; sparse X."""
    from scipy.sparse import csr_matrix
    from sklearn.exceptions import DataConversionWarning

    rng = np.random.default_rng(0)
    group = rng.integers(0, 2, 300)
    X = np.column_stack([group, rng.normal(group, 1.0), rng.normal(size=300)])
    y = (X[:, 1] + X[:, 2] > 0.5).astype(int)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        _verifier().fit(X, np.arange(300) % 3)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        _verifier().fit(X, X[:, 2])
    with pytest.raises(ValueError, match="requires y to be passed"):
        _verifier().fit(X)
    with pytest.raises(TypeError, match="Sparse data"):
        _verifier().fit(csr_matrix(X), y)
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        _verifier().fit(np.empty((5, 0)), y[:5])
    flat = _verifier().set_params(n_bins=20).fit(X, y)
    with pytest.warns(DataConversionWarning):
        column = _verifier().set_params(n_bins=20).fit(X, y.reshape(-1, 1))
    assert column.metrics_ == flat.metrics_
    np.testing.assert_array_equal(column.predict(X), flat.predict(X))
