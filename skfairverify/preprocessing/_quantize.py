"""Integer quantization of a linear rule (FVGM, Section 3, "multiplier l").

FVGM turns real coefficients into integers by multiplying them by an integer
``l`` and rounding; ``l`` is chosen by agreement between the rounded rule and the
original classifier on reference data. This module holds the conventions that
:class:`~skfairverify.preprocessing.IntegerWeightScaler` and the verifier share
(:func:`quantize`, :func:`integer_threshold`, :func:`decision_scale`) and the
agreement search of ``IntegerWeightScaler`` (:func:`select_multiplier`).

Conventions
-----------
* Rounding is :func:`numpy.rint` (round half to even), see :func:`quantize`.
* A rule predicts the positive class where its decision is **strictly** greater
  than 0, like scikit-learn's linear models. With integer weights the decision
  ``score + intercept_int > 0`` is the same as ``score >= 1 - intercept_int``,
  see :func:`integer_threshold`.
* Scale invariance: multiplying a decision function by ``c > 0`` does not change
  a single decision, so it must not change the integer rule. The weights are
  divided by :func:`decision_scale` (the root mean square of the decision on the
  reference rows) before the multiplier is chosen; the multiplier ``l`` is then
  the number of integer units per decision scale, whatever the units of the
  model's coefficients (a model whose coefficients are multiplied by ``1e-12``
  gives the same integer rule).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..utils._compat import Interval, validate_params

__all__ = ["decision_scale", "integer_threshold", "integer_weights", "quantize",
           "select_multiplier"]

# Upper bound on the number of float64 cells materialised at once (~32 MB).
_MAX_CELLS = 4_000_000
#: Largest integer score magnitude of the agreement search: below 2**53 float64 sums of
#: integers are exact; 2**50 leaves room for the rounding of every term.
MAX_EXACT_SCORE = 2**50
#: Largest work of the multiplier search (candidates x rows x terms, a few ns each):
#: ~6 ns each measured, 5e9 cells is about half a minute.
MAX_SEARCH_CELLS = 5 * 10**9


@validate_params({"decision": ["array-like"]}, prefer_skip_nested_validation=True)
def decision_scale(decision) -> float:
    """Scale of a decision function: the root mean square of its values.

    Dividing the weights and intercept of a linear rule by this scale before
    choosing the integer multiplier makes the quantization invariant to a positive
    rescaling of the decision function: ``decision_scale(c * d) == c *
    decision_scale(d)`` for ``c > 0`` (up to rounding), so the normalised rule,
    hence the integer rule, is the same for ``c * d`` as for ``d``.

    Parameters
    ----------
    decision : array-like of float of shape (n_samples,)
        The real decision values of the rule on the reference rows.

    Returns
    -------
    float
        ``sqrt(mean(decision ** 2))`` (computed without underflow or overflow),
        or 1.0 when every decision is exactly 0 (a constant rule, which any scale
        leaves unchanged).

    Raises
    ------
    ValueError
        If ``decision`` is empty or holds NaN or infinite values.

    Examples
    --------
    >>> from skfairverify.preprocessing import decision_scale
    >>> decision_scale([3.0, -4.0])
    3.5355339059327378
    >>> round(decision_scale([3e-12, -4e-12]) / 1e-12, 12)
    3.535533905933
    """
    d = np.asarray(decision, dtype=float).ravel()
    if d.size == 0:
        raise ValueError("decision is empty; the scale needs at least one reference row.")
    if not np.all(np.isfinite(d)):
        raise ValueError(
            "The decision function holds NaN or infinite values on the reference rows; "
            "its scale is undefined."
        )
    top = float(np.max(np.abs(d)))
    if top == 0.0:
        return 1.0
    return top * float(np.sqrt(np.mean((d / top) ** 2)))


@validate_params(
    {"values": ["array-like", Real], "multiplier": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def quantize(values, multiplier: int) -> np.ndarray:
    """Integer weights ``rint(multiplier * values)`` (round half to even).

    Parameters
    ----------
    values : array-like of float
        Real weights (coefficients, or per-state contributions ``w * bin_mean``).
    multiplier : int
        The integer multiplier ``l >= 1``.

    Returns
    -------
    numpy.ndarray of int64
        Same shape as ``values``.

    Examples
    --------
    >>> from skfairverify.preprocessing import quantize
    >>> quantize([0.123, -0.5, 1.5, 2.26], 10).tolist()
    [1, -5, 15, 23]
    """
    return integer_weights(values, multiplier)


def integer_weights(values, multiplier: int) -> np.ndarray:
    """:func:`quantize` without the validation of its arguments.

    For the package's own loops (the quantization search computes thousands of integer
    rules): the parameter validation of the public function costs about 0.4 ms a call,
    more than the rounding itself.
    """
    return np.rint(float(multiplier) * np.asarray(values, dtype=float)).astype(np.int64)


@validate_params({"intercept_int": [Real]}, prefer_skip_nested_validation=True)
def integer_threshold(intercept_int: int) -> int:
    """Threshold ``t`` of the integer rule without intercept.

    With integer weights ``W_j`` and an integer intercept ``b``, the positive
    decision of scikit-learn's convention ``sum_j W_j + b > 0`` (strict) holds
    exactly when ``sum_j W_j >= t`` with ``t = 1 - b``. This is the threshold
    to pass to :func:`skfairverify.s3p.positive_probability`. A row whose
    integer decision is exactly 0 is therefore negative.

    Parameters
    ----------
    intercept_int : int
        The integer intercept ``round(l * intercept)``.

    Returns
    -------
    int
        ``1 - intercept_int``.

    Examples
    --------
    >>> from skfairverify.preprocessing import integer_threshold
    >>> integer_threshold(-3)  # sum + (-3) > 0  <=>  sum >= 4
    4
    """
    if isinstance(intercept_int, (bool, np.bool_)) or not isinstance(
        intercept_int, (Integral, np.integer)
    ):
        if isinstance(intercept_int, (float, np.floating)) and float(intercept_int).is_integer():
            intercept_int = int(intercept_int)
        else:
            raise TypeError(
                f"intercept_int must be an integer, got {intercept_int!r}; quantize it first."
            )
    return 1 - int(intercept_int)


@validate_params(
    {
        "contributions": ["array-like"],
        "intercept": [Real],
        "reference": ["array-like"],
        "max_multiplier": [Interval(Integral, 1, None, closed="left")],
        "multipliers": ["array-like", None],
        "values": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def select_multiplier(
    contributions: np.ndarray,
    intercept: float,
    reference: np.ndarray,
    max_multiplier: int,
    multipliers=None,
    *,
    values: np.ndarray | None = None,
) -> tuple[int, float]:
    """Pick the integer multiplier ``l`` whose rounded rule best agrees with reference decisions.

    For each candidate ``l`` the integer decision of row ``i`` is

    * ``sum_j rint(l * contributions[i, j]) + rint(l * intercept) > 0`` (default:
      each per-term contribution is rounded, as the verifier does for the
      state weights ``w * bin_mean``), or
    * ``sum_j values[i, j] * rint(l * contributions[j]) + rint(l * intercept) > 0``
      when ``values`` is given (the coefficients are rounded, then multiplied
      by the feature values, as :class:`IntegerWeightScaler` does).

    The agreement is the share of rows where that decision equals ``reference``.
    The computation is vectorised over rows and terms and chunked over ``l``
    (and rows) so that at most a few million cells are in memory at once.

    Parameters
    ----------
    contributions : ndarray of shape (n_samples, n_terms), or (n_terms,) with ``values``
        Real-valued per-term contributions ``w_j * x_ij``; with ``values``, the real
        coefficients ``w_j``.
    intercept : float
        Real intercept of the rule.
    reference : ndarray of bool of shape (n_samples,)
        The decisions to agree with (True = positive class).
    max_multiplier : int
        Candidates are ``1, ..., max_multiplier`` unless ``multipliers`` is given.
    multipliers : array-like of int, default=None
        Explicit candidate multipliers (each >= 1), tried in the given order.
    values : ndarray of shape (n_samples, n_terms), default=None
        Feature values; see above.

    Returns
    -------
    multiplier : int
        The best ``l``; ties go to the earliest candidate (the smallest ``l`` for
        the default range).

    Raises
    ------
    OverflowError
        If an explicit multiplier makes the integer scores exceed ``MAX_EXACT_SCORE``
        (2**50), where float64 sums of integers stop being exact.
    ValueError
        If the search would exceed ``MAX_SEARCH_CELLS`` (5e9 candidate x row x term
        cells), checked before anything is allocated; the message names
        ``max_multiplier``.

    Notes
    -----
    The default range ``1 .. max_multiplier`` is clamped to the largest multiplier
    whose integer scores stay below ``MAX_EXACT_SCORE``:
    ``floor(2**50 / (sum_j max_i |term_ij| + |intercept|))`` (each term's largest
    magnitude over the rows); larger multipliers would not be exact in float64 or
    int64.
    agreement : float
        Its share of agreeing rows, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.preprocessing import select_multiplier
    >>> x = np.array([[0.3], [0.4], [0.5], [0.6]])
    >>> w, b = 1.0, -0.45
    >>> reference = (x[:, 0] * w + b) > 0
    >>> select_multiplier(x * w, b, reference, max_multiplier=10)
    (3, 1.0)
    """
    reference = np.asarray(reference)
    if reference.ndim != 1:
        raise ValueError(f"reference must be 1-D, got shape {reference.shape}.")
    reference = reference.astype(bool)
    n = reference.shape[0]
    if n == 0:
        raise ValueError("reference is empty; at least one row is needed to pick a multiplier.")
    intercept = float(intercept)
    if not np.isfinite(intercept):
        raise ValueError(f"intercept must be finite, got {intercept}.")
    if values is None:
        C = _check_contributions(contributions, n)
        magnitude = float(np.abs(C).max(axis=0, initial=0.0).sum())
    else:
        C, V = _check_coefficients(contributions, values, n)
        magnitude = float((np.abs(C) * np.abs(V).max(axis=0, initial=0.0)).sum())
    limit = _exact_limit(magnitude + abs(intercept))
    if multipliers is None:
        max_multiplier = min(int(max_multiplier), limit)
        _check_search_work(max_multiplier, n, C.shape[-1] if C.ndim > 1 else C.size)
    cand = _candidates(max_multiplier, multipliers)
    if multipliers is not None and int(cand.max()) > limit:
        raise _overflow(int(cand.max()), magnitude + abs(intercept), limit)
    if values is None:
        counts = _agreement_counts_rows(C, intercept, reference, cand)
    else:
        counts = _agreement_counts_coef(C, V, intercept, reference, cand)
    best = int(np.argmax(counts))  # first maximum: ties -> earliest candidate
    return int(cand[best]), float(counts[best] / n)


def _exact_limit(magnitude: float) -> int:
    """Largest multiplier keeping ``multiplier * magnitude`` within MAX_EXACT_SCORE."""
    if magnitude <= 0.0:
        return MAX_EXACT_SCORE
    return max(1, min(MAX_EXACT_SCORE, int(MAX_EXACT_SCORE // magnitude)))


def _overflow(multiplier: int, magnitude: float, limit: int) -> OverflowError:
    return OverflowError(
        f"multiplier {multiplier:,} makes the integer scores exceed 2**50 (the largest "
        f"|score| of the rule at multiplier 1 is {magnitude:.4g}): they would not be "
        f"exact in float64/int64. Use a multiplier <= {limit:,}."
    )


def _check_search_work(max_multiplier: int, n_rows: int, n_terms: int) -> None:
    """Refuse a multiplier search beyond MAX_SEARCH_CELLS before allocating."""
    cells = int(max_multiplier) * int(n_rows) * max(int(n_terms), 1)
    if cells > MAX_SEARCH_CELLS:
        largest = max(1, MAX_SEARCH_CELLS // (int(n_rows) * max(int(n_terms), 1)))
        raise ValueError(
            f"The multiplier search would evaluate {cells:,} cells ({max_multiplier:,} "
            f"candidate multipliers x {n_rows:,} rows x {n_terms:,} terms), above the "
            f"limit of {MAX_SEARCH_CELLS:,} (about half a minute). Use max_multiplier <= "
            f"{largest:,}, or a fixed multiplier."
        )


def _candidates(max_multiplier, multipliers) -> np.ndarray:
    """Return the candidates: ``1 .. max_multiplier``, or the explicit ones in order."""
    if multipliers is None:
        return np.arange(1, int(max_multiplier) + 1, dtype=np.int64)
    cand = np.asarray(list(multipliers))
    if cand.size == 0:
        raise ValueError("multipliers is empty.")
    for l in cand:
        _check_multiplier(l, "multipliers")
    return cand.astype(np.int64)


def _check_contributions(contributions, n):
    """Per-row contributions as a finite (n, n_terms) float array."""
    C = np.asarray(contributions, dtype=float)
    if C.ndim == 1:
        C = C[:, None]
    if C.ndim != 2 or C.shape[0] != n:
        raise ValueError(
            f"contributions must have shape (n_samples={n}, n_terms), got {C.shape}."
        )
    if not np.all(np.isfinite(C)):
        raise ValueError("contributions contain NaN or infinity.")
    return C


def _check_coefficients(contributions, values, n):
    """Coefficients (n_terms,) and values (n, n_terms) as finite float arrays."""
    V = np.asarray(values, dtype=float)
    if V.ndim != 2 or V.shape[0] != n:
        raise ValueError(f"values must have shape (n_samples={n}, n_terms), got {V.shape}.")
    C = np.asarray(contributions, dtype=float).ravel()
    if C.shape[0] != V.shape[1]:
        raise ValueError(
            f"contributions has {C.shape[0]} coefficients but values has {V.shape[1]} "
            "columns."
        )
    if not (np.all(np.isfinite(C)) and np.all(np.isfinite(V))):
        raise ValueError("contributions or values contain NaN or infinity.")
    return C, V


def _agreement_counts_rows(C, intercept, reference, cand):
    n, m = C.shape
    counts = np.zeros(cand.size, dtype=np.int64)
    uniques = [np.unique(C[:, j], return_inverse=True) for j in range(m)]
    if 4 * sum(u.size for u, _ in uniques) <= n * m:
        # Few distinct contributions per term (binned / categorical variables): round
        # each distinct value once per l, then gather (exact: sums of integers).
        l_chunk = max(1, _MAX_CELLS // max(n, 1))
        for k0 in range(0, cand.size, l_chunk):
            ls = cand[k0 : k0 + l_chunk].astype(float)
            scores = np.repeat(np.rint(ls * intercept)[:, None], n, axis=1)
            for u, inv in uniques:
                scores += np.take(np.rint(ls[:, None] * u[None, :]), inv.ravel(), axis=1)
            counts[k0 : k0 + l_chunk] += ((scores > 0) == reference[None, :]).sum(axis=1)
        return counts
    rows_per_block = max(1, min(n, _MAX_CELLS // max(m, 1)))
    for r0 in range(0, n, rows_per_block):
        Cb = C[r0 : r0 + rows_per_block]
        ref = reference[r0 : r0 + rows_per_block]
        cells = Cb.size
        l_chunk = max(1, _MAX_CELLS // max(cells, 1))
        for k0 in range(0, cand.size, l_chunk):
            ls = cand[k0 : k0 + l_chunk].astype(float)
            # (L, rows, terms) -> integer scores (L, rows)
            scores = np.rint(ls[:, None, None] * Cb[None, :, :]).sum(axis=2)
            scores += np.rint(ls * intercept)[:, None]
            counts[k0 : k0 + l_chunk] += ((scores > 0) == ref[None, :]).sum(axis=1)
    return counts


def _agreement_counts_coef(w, V, intercept, reference, cand):
    n, m = V.shape
    counts = np.zeros(cand.size, dtype=np.int64)
    l_chunk = max(1, _MAX_CELLS // max(n, 1))
    for k0 in range(0, cand.size, l_chunk):
        ls = cand[k0 : k0 + l_chunk].astype(float)
        W = np.rint(ls[:, None] * w[None, :])  # (L, terms)
        scores = V @ W.T + np.rint(ls * intercept)[None, :]  # (n, L)
        counts[k0 : k0 + l_chunk] += ((scores > 0) == reference[:, None]).sum(axis=0)
    return counts


def _check_multiplier(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise TypeError(f"{name} must be a positive integer, got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
