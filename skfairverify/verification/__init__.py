"""Exact fairness verification of linear classifiers over Bayesian networks (FVGM)."""

from ._verifier import FairnessVerifier
from ._warnings import MIN_AGREEMENT, LowAgreementWarning

__all__ = ["FairnessVerifier", "LowAgreementWarning", "MIN_AGREEMENT"]
