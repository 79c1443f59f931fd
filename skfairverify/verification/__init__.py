"""Fairness verification over Bayesian networks (FVGM): exact, or certified sampling."""

from ._results import FairnessInfluenceResult, VerificationResult
from ._variables import MAX_SENSITIVE_VALUES
from ._verifier import FairnessVerifier
from ._warnings import (
    MIN_AGREEMENT,
    EstimateOutsideIntervalWarning,
    LowAgreementWarning,
    ModelCheckWarning,
    SamplingToleranceWarning,
)

__all__ = [
    "EstimateOutsideIntervalWarning",
    "FairnessInfluenceResult",
    "FairnessVerifier",
    "LowAgreementWarning",
    "MAX_SENSITIVE_VALUES",
    "MIN_AGREEMENT",
    "ModelCheckWarning",
    "SamplingToleranceWarning",
    "VerificationResult",
]
