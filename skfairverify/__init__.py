"""skfairverify: fairness verification for scikit-learn.

Three capabilities, each usable as an estimator, a transformer or a scorer:

* exact verification of a linear classifier over a Bayesian network of its
  inputs (FVGM): :class:`FairnessVerifier`;
* counterfactual fairness under unawareness (CFlips / nDCCF):
  :class:`CounterfactualFairness`;
* explained group fairness with ESL values: :func:`group_esl`,
  :func:`esl_decomposition`.
"""

from .counterfactual import (
    CounterfactualFairness,
    CounterfactualResult,
    counterfactual_flips,
    ndccf,
)
from .esl import (
    ESLDecompositionResult,
    GroupESLResult,
    esl_coefficients,
    esl_decomposition,
    esl_value,
    group_esl,
)
from .metrics import (
    make_cflips_scorer,
    make_esl_scorer,
    make_ndccf_scorer,
    make_verifier_scorer,
)
from .model_selection import (
    FairnessConstrainedRefit,
    FairnessConstraintWarning,
    fairness_constrained_refit,
)
from .preprocessing import BinningDiscretizer, IntegerWeightScaler
from .rules import LinearRule, linear_rule, sensitive_columns
from .verification import FairnessInfluenceResult, FairnessVerifier, VerificationResult

__version__ = "0.1.0.dev0"

__all__ = [
    "BinningDiscretizer",
    "CounterfactualFairness",
    "CounterfactualResult",
    "ESLDecompositionResult",
    "FairnessConstrainedRefit",
    "FairnessConstraintWarning",
    "FairnessInfluenceResult",
    "FairnessVerifier",
    "GroupESLResult",
    "IntegerWeightScaler",
    "LinearRule",
    "VerificationResult",
    "counterfactual_flips",
    "esl_coefficients",
    "esl_decomposition",
    "esl_value",
    "fairness_constrained_refit",
    "group_esl",
    "linear_rule",
    "make_cflips_scorer",
    "make_esl_scorer",
    "make_ndccf_scorer",
    "make_verifier_scorer",
    "ndccf",
    "sensitive_columns",
]
