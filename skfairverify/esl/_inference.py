"""Wald tests and confidence intervals of the ESL box, with the round-off rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

#: Relative tolerance of the round-off rule (see :func:`_wald`).
ROUNDOFF_RTOL = 1e-12


def _std_errors(covariance: pd.DataFrame, name: str) -> pd.Series:
    return pd.Series(np.sqrt(np.clip(np.diag(covariance.to_numpy()), 0, None)),
                     index=covariance.index, name=name)


def _contrast(estimates: pd.Series, covariance: pd.DataFrame, i: int, j: int,
              confidence: float) -> dict:
    cov = covariance.to_numpy()
    diff = float(estimates.iloc[i] - estimates.iloc[j])
    var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
    scale = abs(float(estimates.iloc[i])) + abs(float(estimates.iloc[j]))
    return _wald(diff, np.sqrt(max(var, 0.0)), confidence, scale)


def _wald(diff: float, se: float, confidence: float, scale: float = 1.0) -> dict:
    """Wald test of ``diff == 0`` with the round-off rule.

    ``diff`` is a signed sum of terms whose absolute values add up to ``scale``. When
    ``|diff|`` and ``se`` are both at most ``ROUNDOFF_RTOL * max(1, scale)`` they are
    floating-point round-off of an exact zero (two coalition models with identical
    predictions, a member whose coefficient is 0): there is no evidence, ``z = 0`` and
    ``p_value = 1``. A difference above that level with a zero standard error (e.g. rates
    of exactly 0 and 1) is deterministic given the rows: ``z = +-inf``, ``p_value = 0``.
    """
    q = special.ndtri(0.5 + confidence / 2)
    tol = ROUNDOFF_RTOL * max(1.0, float(scale))
    if abs(diff) <= tol and se <= tol:  # round-off of an exact zero
        z, p = 0.0, 1.0
    elif se > 0:
        z = diff / se
        p = float(2 * special.ndtr(-abs(z)))
    else:  # a degenerate (deterministic) difference
        z = float(np.sign(diff) * np.inf)
        p = 0.0
    return {"difference": diff, "std_error": se, "z": z, "p_value": p,
            "ci_low": diff - q * se, "ci_high": diff + q * se}
