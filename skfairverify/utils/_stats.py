"""Statistics every subpackage uses: the Clopper-Pearson interval of a proportion."""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

__all__ = ["clopper_pearson_limits"]


def clopper_pearson_limits(k, n, alpha: float):
    """Two-sided Clopper-Pearson limits of ``k`` successes of ``n`` at error ``alpha``.

    ``Beta(alpha/2; k, n-k+1)`` and ``Beta(1-alpha/2; k+1, n-k)`` quantiles, 0 and 1 at
    the edges (``[0, 1]`` where ``n`` is 0). The callers check their arguments.

    Examples
    --------
    >>> from skfairverify.utils._stats import clopper_pearson_limits
    >>> low, high = clopper_pearson_limits(0, 10, 0.05)
    >>> float(low), round(float(high), 4)
    (0.0, 0.3085)
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        high = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return np.nan_to_num(low, nan=0.0), np.nan_to_num(high, nan=1.0)
