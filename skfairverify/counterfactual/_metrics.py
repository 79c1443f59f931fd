"""CFlips and nDCCF (Cornacchia et al., Sections 4.1-4.5), per row.

For a row ``x`` of sensitive group ``s`` and its ranked counterfactuals
``c^1, c^2, ...`` (rank 1 = the most similar), let ``flip_j = 1`` when the
sensitive-feature classifier puts ``c^j`` in another group than ``s`` and 0
otherwise. With ``m`` the number of counterfactuals actually available for the
row and ``k' = min(k, m)``:

* ``CFlips@k = (1 / k') * sum_{j <= k'} flip_j``  (Eq. 3);
* ``DCCF@k = sum_{j <= k'} (2^(1 - flip_j) - 1) / log2(j + 1)``  (Eq. 7);
* ``IDCCF@k = sum_{j <= k'} 1 / log2(j + 1)``  (Eq. 8, every counterfactual unflipped);
* ``nDCCF@k = DCCF@k / IDCCF@k``  (Eq. 9).

Positions start at 1 and count the available counterfactuals only: a missing
entry (NaN / None) in the middle of a row is skipped, the next available one
takes its position.

Memory: ``k`` is clamped to the number of columns of ``s_cf`` (the most
counterfactuals a row can have) before any array is built; the values are the
same (``k' = min(k, m)``), so ``k=10**9`` costs what ``k=s_cf.shape[1]`` does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..utils._categories import category_codes
from ..utils._compat import validate_params
from ._base import K_CONSTRAINT

__all__ = ["counterfactual_flips", "ndccf"]

_CONSTRAINTS = {"s_orig": ["array-like"], "s_cf": ["array-like"], "k": [K_CONSTRAINT, None]}


def _resolve_k(k, n_columns: int) -> int:
    """``k`` clamped to the number of columns of ``s_cf`` (every column when None).

    A row has at most ``n_columns`` counterfactuals and its values at every ``k`` beyond
    its count ``m`` equal those at ``m`` (``k' = min(k, m)``), so the clamp changes no
    value and bounds the (n, k) arrays by the data (``k`` is checked by the constraints).
    """
    width = max(int(n_columns), 1)
    return width if k is None else min(int(k), width)


def _flip_matrix(s_orig, s_cf) -> tuple[np.ndarray, np.ndarray]:
    """Flip indicators compacted to the left, and the number available per row.

    Returns
    -------
    flips : ndarray of shape (n, K), float
        ``flips[i, j]`` is the flip indicator of the (j+1)-th *available*
        counterfactual of row i, NaN beyond the row's last one.
    n_available : ndarray of shape (n,), int
    """
    orig = np.asarray(s_orig, dtype=object)
    if isinstance(s_orig, (pd.Series, pd.Index)):
        orig = s_orig.to_numpy(dtype=object)
    if orig.ndim != 1:
        raise ValueError(f"s_orig must be 1-d; got shape {orig.shape}.")
    if isinstance(s_cf, pd.DataFrame):
        cf = s_cf.to_numpy(dtype=object)
    else:
        cf = np.asarray(s_cf, dtype=object)
    if cf.ndim == 1 and orig.shape[0] == 1:
        cf = cf.reshape(1, -1)
    if cf.ndim != 2:
        raise ValueError(f"s_cf must be 2-d (n_rows, n_counterfactuals); got shape {cf.shape}.")
    if cf.shape[0] != orig.shape[0]:
        raise ValueError(
            f"s_orig has {orig.shape[0]} rows but s_cf has {cf.shape[0]}; they must match."
        )
    if pd.isna(orig).any():
        raise ValueError("s_orig contains missing values; every row needs a sensitive value.")
    available = ~pd.isna(cf) if cf.size else np.zeros(cf.shape, dtype=bool)
    # the flip indicator, computed only where a counterfactual exists, by the package's
    # one category rule: 1, 1.0 and True are one group, "1" another, and 1 next to "1"
    # is refused (a type mismatch is never counted as a flip)
    raw = np.zeros(cf.shape, dtype=float)
    codes, _ = category_codes(np.concatenate([orig, cf[available]]), name="s_orig and s_cf")
    if available.any():
        rows = np.nonzero(available)[0]
        raw[available] = (codes[orig.shape[0]:] != codes[rows]).astype(float)
    # move the available entries to the left, keeping their order (stable sort)
    order = np.argsort(~available, axis=1, kind="stable")
    flips = np.take_along_axis(raw, order, axis=1)
    n_available = available.sum(axis=1).astype(int)
    cols = np.arange(cf.shape[1])
    flips[cols[None, :] >= n_available[:, None]] = np.nan
    return flips, n_available


def _curves(flips: np.ndarray, n_available: np.ndarray, k_max: int):
    """CFlips@k and nDCCF@k of every row for k = 1..k_max, as two (n, k_max) arrays."""
    n, K = flips.shape
    width = max(min(k_max, K), 1)  # beyond K columns every curve is constant
    f = np.zeros((n, width))
    used = min(K, width)
    f[:, :used] = np.nan_to_num(flips[:, :used], nan=0.0)
    pos = np.arange(1, width + 1)
    discount = 1.0 / np.log2(pos + 1.0)
    cum_flips = np.cumsum(f, axis=1)
    gain = (2.0 ** (1.0 - f) - 1.0) * discount
    # positions beyond the available count contribute nothing
    valid = pos[None, :] <= n_available[:, None]
    cum_gain = np.cumsum(np.where(valid, gain, 0.0), axis=1)
    cum_ideal = np.cumsum(np.where(valid, discount[None, :], 0.0), axis=1)
    k_eff = np.minimum(pos[None, :], n_available[:, None]).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cflips = np.where(k_eff > 0, cum_flips / k_eff, np.nan)
        nd = np.where(k_eff > 0, cum_gain / cum_ideal, np.nan)
    return cflips, nd


@validate_params(_CONSTRAINTS, prefer_skip_nested_validation=True)
def counterfactual_flips(s_orig, s_cf, k: int | None = None) -> np.ndarray:
    """Counterfactual Flips (CFlips@k) of every row.

    The share of a row's first ``k`` counterfactuals that the sensitive-feature
    classifier assigns to another group than the row's own (Eq. 3 of Cornacchia
    et al.). Greater means the model asks the row to look like the other group
    to be accepted.

    Parameters
    ----------
    s_orig : array-like of shape (n_rows,)
        Sensitive value of each row (its true group, which the paper requires the
        sensitive-feature classifier to predict correctly).
    s_cf : array-like of shape (n_rows, K)
        Predicted sensitive value of each row's counterfactuals, in rank order
        (column 0 = rank 1, the closest). NaN or None where a row has fewer than
        ``K`` counterfactuals; an object array may mix labels and None.
    k : int, default=None
        Number of top-ranked counterfactuals to use; ``None`` uses all ``K``. When
        a row has only ``m < k`` counterfactuals, its value is the share among
        those ``m``.

    Returns
    -------
    ndarray of shape (n_rows,)
        CFlips@k in [0, 1] per row; NaN (and only then) for a row with no
        counterfactual at all, which is undefined rather than 0.

    Raises
    ------
    ValueError
        If ``k < 1``, the shapes disagree, ``s_orig`` has missing values, or the labels
        mix strings and numbers that print alike (``1`` and ``"1"``: a type mismatch
        is refused, never counted as a flip; ``1``, ``1.0`` and ``True`` are one group).

    See Also
    --------
    ndccf : The rank-discounted version.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify import counterfactual_flips
    >>> s = ["F", "M"]
    >>> s_cf = np.array([["M", "F", "M", "F"], ["M", "M", None, None]], dtype=object)
    >>> counterfactual_flips(s, s_cf)
    array([0.5, 0. ])
    >>> counterfactual_flips(s, s_cf, k=1)
    array([1., 0.])
    """
    flips, n_av = _flip_matrix(s_orig, s_cf)
    k = _resolve_k(k, flips.shape[1])
    cflips, _ = _curves(flips, n_av, k)
    return cflips[:, k - 1]


@validate_params(_CONSTRAINTS, prefer_skip_nested_validation=True)
def ndccf(s_orig, s_cf, k: int | None = None) -> np.ndarray:
    """Normalized Discounted Cumulative Counterfactual Fairness (nDCCF@k) of every row.

    ``DCCF@k = sum_j (2^(1 - flip_j) - 1) / log2(j + 1)`` over the row's first
    ``k`` counterfactuals (positions ``j`` start at 1), divided by the ideal
    ``IDCCF@k`` where no counterfactual flips (Eqs. 7-9 of Cornacchia et al.).
    1 means no counterfactual changes group; top-ranked flips weigh most.

    Parameters
    ----------
    s_orig : array-like of shape (n_rows,)
        Sensitive value of each row.
    s_cf : array-like of shape (n_rows, K)
        Predicted sensitive value of the ranked counterfactuals (column 0 = rank 1),
        NaN/None where a row has fewer than ``K``.
    k : int, default=None
        Number of top-ranked counterfactuals to use (``None``: all). A row with
        ``m < k`` counterfactuals is scored over its ``m`` (both DCCF and IDCCF).

    Returns
    -------
    ndarray of shape (n_rows,)
        nDCCF@k in [0, 1]; NaN (and only then) for a row with no counterfactual.

    Raises
    ------
    ValueError
        If ``k < 1``, the shapes disagree, ``s_orig`` has missing values, or the labels
        mix strings and numbers that print alike (see :func:`counterfactual_flips`).

    See Also
    --------
    counterfactual_flips : The undiscounted share of flips.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify import ndccf
    >>> s_cf = np.array([["M", "F"], ["F", "M"]], dtype=object)
    >>> np.round(ndccf(["F", "F"], s_cf), 4)  # the flip at rank 1 costs more
    array([0.3869, 0.6131])
    """
    flips, n_av = _flip_matrix(s_orig, s_cf)
    k = _resolve_k(k, flips.shape[1])
    _, nd = _curves(flips, n_av, k)
    return nd[:, k - 1]
