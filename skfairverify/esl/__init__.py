"""Explained group fairness with ESL (Efficient-Symmetric-Linear) values.

The framework of Amri-Jouidel, Kemel et al., "Shapley meets Rawls": a classification
metric (TPR, FPR, selection rate, PPV, NPV) divided by a baseline is split among the
sensitive groups with an ESL value (first stage, :func:`group_esl`), and each group's
share is split among the features by re-fitting the model on every needed coalition of
features (second stage, :func:`esl_decomposition`), with plug-in (asymptotic) tests.
"""

from ._checks import check_esl_params
from ._decomposition import esl_decomposition
from ._group import group_esl
from ._results import ESLDecompositionResult, GroupESLResult
from ._values import VALUE_NAMES, esl_coefficients, esl_value

__all__ = [
    "check_esl_params",
    "VALUE_NAMES",
    "ESLDecompositionResult",
    "GroupESLResult",
    "esl_coefficients",
    "esl_decomposition",
    "esl_value",
    "group_esl",
]
