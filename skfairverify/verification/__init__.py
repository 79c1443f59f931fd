"""Exact fairness verification of linear classifiers over Bayesian networks (FVGM)."""

from ._results import FairnessInfluenceResult, VerificationResult
from ._verifier import FairnessVerifier
from ._warnings import MIN_AGREEMENT, LowAgreementWarning

__all__ = [
    "FairnessInfluenceResult",
    "FairnessVerifier",
    "LowAgreementWarning",
    "MIN_AGREEMENT",
    "VerificationResult",
]
