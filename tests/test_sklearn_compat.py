"""scikit-learn estimator contract for the public estimators of skfairverify.

``FairnessVerifier`` and ``CounterfactualFairness`` are not listed: both need a named,
categorical sensitive column (the generic checks feed continuous floats only), and
``CounterfactualFairness`` is an auditor without ``predict``. Their contract (clone,
get_params, NotFittedError, pandas in and out, delegation) is tested in
``tests/test_verifier.py`` and ``tests/test_counterfactual.py``.
"""

from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from skfairverify import BinningDiscretizer, IntegerWeightScaler

ESTIMATORS = [BinningDiscretizer(), IntegerWeightScaler(LogisticRegression())]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
