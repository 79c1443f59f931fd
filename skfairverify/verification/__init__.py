"""Exact fairness verification of linear classifiers over Bayesian networks (FVGM)."""

from ._verifier import FairnessVerifier

__all__ = ["FairnessVerifier"]
