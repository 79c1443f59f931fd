"""Group fairness metrics from the positive rates of the sensitive groups.

FVGM (definitions: Section 2, items 1-4, and Appendix B.1; computation: Section 3.4)
reduces every metric to the largest and smallest probability of a positive decision
over the compound sensitive groups:

* disparate impact ``DI = min_a Pr[Yhat = 1 | a] / max_a Pr[Yhat = 1 | a]`` (1 is fair);
* statistical parity ``SP = max_a Pr[Yhat = 1 | a] - min_a Pr[Yhat = 1 | a]`` (0 is fair);
* equalized odds: the larger of the SP gaps computed on ``Y = 1`` and on ``Y = 0``;
* path-specific causal fairness: the SP gap when the mediators ``Z`` are drawn from
  ``Z | A = a_max``, the most favored group (see ``_influence.fvgm_mediated_network``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["disparate_impact", "rate_gap", "favored_indices"]


def _check_rates(rates, what: str = "positive rates") -> np.ndarray:
    rates = np.asarray(rates, dtype=float).ravel()
    if rates.size < 2:
        raise ValueError(f"Fairness metrics need the {what} of at least two groups.")
    if not np.all(np.isfinite(rates)):
        raise ValueError(f"The {what} contain NaN or infinite values: {rates.tolist()}.")
    return rates


def disparate_impact(rates) -> float:
    """Ratio of the smallest to the largest group positive rate.

    When every group has a positive rate of 0 the groups are treated alike and the
    ratio is defined as 1.

    Parameters
    ----------
    rates : array-like of float
        Positive rate of every group.

    Returns
    -------
    float
        ``min(rates) / max(rates)`` in ``[0, 1]``.
    """
    rates = _check_rates(rates)
    top = float(rates.max())
    if top <= 0.0:
        return 1.0
    return float(rates.min()) / top


def rate_gap(rates) -> float:
    """Largest minus smallest group positive rate (statistical parity gap).

    Parameters
    ----------
    rates : array-like of float
        Positive rate of every group.

    Returns
    -------
    float
        ``max(rates) - min(rates)`` in ``[0, 1]``.
    """
    rates = _check_rates(rates)
    return float(rates.max() - rates.min())


def favored_indices(rates) -> tuple[int, int]:
    """Return the indices of the most and the least favored groups (first on ties).

    Parameters
    ----------
    rates : array-like of float
        Positive rate of every group.

    Returns
    -------
    tuple of int
        ``(argmax, argmin)``.
    """
    rates = _check_rates(rates)
    return int(np.argmax(rates)), int(np.argmin(rates))
