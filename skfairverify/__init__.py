"""skfairverify: fairness verification for scikit-learn.

Three capabilities, each usable as an estimator, a transformer or a scorer:

* exact verification of a linear classifier over a Bayesian network of its
  inputs (FVGM): :class:`FairnessVerifier`;
* counterfactual fairness under unawareness (CFlips / nDCCF):
  :class:`CounterfactualFairness`;
* explained group fairness with ESL values: :func:`group_esl`,
  :func:`esl_decomposition`.
"""

from ._linear import linear_rule, sensitive_columns, LinearRule

from .preprocessing import BinningDiscretizer, IntegerWeightScaler
# [verification-exports]
from .counterfactual import CounterfactualFairness, counterfactual_flips, ndccf
# [counterfactual-exports]
from .esl import (
    GroupESLResult,
    esl_coefficients,
    esl_decomposition,
    esl_value,
    group_esl,
)
# [esl-exports]
# [metrics-exports]
from .model_selection import FairnessConstraintWarning, fairness_constrained_refit
# [model-selection-exports]

__version__ = "0.1.0.dev0"

__all__ = [
    "LinearRule",
    "linear_rule",
    "sensitive_columns",
    "BinningDiscretizer",
    "IntegerWeightScaler",
    # [verification-all]
    "CounterfactualFairness",
    "counterfactual_flips",
    "ndccf",
    # [counterfactual-all]
    "GroupESLResult",
    "esl_coefficients",
    "esl_decomposition",
    "esl_value",
    "group_esl",
    # [esl-all]
    # [metrics-all]
    "FairnessConstraintWarning",
    "fairness_constrained_refit",
    # [model-selection-all]
]
