"""Issue 28 (counterfactual, ESL, discretizer, BayesNet): every input a result or a named error."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skfairverify import CounterfactualFairness, esl_value, make_cflips_scorer
from skfairverify.counterfactual import KDTreeCounterfactuals


@pytest.mark.parametrize("make", [
    lambda: CounterfactualFairness(LogisticRegression(), "s", k=True)._validate_params(),
    lambda: CounterfactualFairness(LogisticRegression(), "s", cv=np.True_)._validate_params(),
    lambda: CounterfactualFairness(LogisticRegression(), "s", n_jobs=True)._validate_params(),
    lambda: KDTreeCounterfactuals(batch_size=True)._validate_params(),
    lambda: make_cflips_scorer(k=True),
    lambda: esl_value({}, True),
])
def test_a_bool_is_not_a_count(make):
    with pytest.raises(ValueError, match=r"not a bool\)( or None)?\. Got (True|np\.True_) instead"):
        make()
