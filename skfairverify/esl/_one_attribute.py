"""The first stage of one sensitive attribute from per-group sums, in O(groups^2).

:func:`group_esl` on one attribute needs, for ``G`` groups, the ``G`` ESL values and
their ``G x G`` covariance. The general estimation problem (:class:`._variance._Problem`)
builds the dense coalition map and the influence slopes (``coalitions x groups`` and
``groups x groups`` arrays, a ``groups^3`` product for the covariance); this module
computes the same numbers from five sums per group and a sparse membership matrix of the
coalitions, using the form of every ESL member's map: the row of coalition ``S`` is
``c_out(S) + (c_in(S) - c_out(S)) 1{l in S}`` (:func:`._values._coalitions_by_size`).

With ``N_c, D_c`` the (weighted) numerator and denominator sums of group ``c`` and
``A_c, B_c, C_c`` the sums of ``w num^2``, ``w num den`` and ``w den^2``, the ratio of a
coalition is ``R_S = N_S / D_S`` (sums over its groups) and the influence of a row of
group ``c`` on the value of group ``l`` is ``num P[c, l] - den Q[c, l]`` with
``P = Memb^T diag(1 / (D b)) M`` and ``Q = Memb^T diag(R / (D b)) M`` (``M`` the map,
``b`` the baseline). The covariance ``sum_i w_i psi_i psi_i^T`` is then
``P^T A P - P^T B Q - Q^T B P + Q^T C Q`` (``A, B, C`` diagonal), and ``P`` and ``Q`` are
a sparse ``groups x groups`` matrix plus a rank-one term ``u 1^T``: nothing is of size
rows x groups or coalitions x groups, and the work is the sparse products plus
``groups^2``. The numbers are those of the general problem (the same sums, in another
order: equal to floating-point round-off; tested).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ._values import _coalitions_by_size
from ._variance import _metric_parts

__all__ = ["one_attribute_estimates"]


def _group_sums(metric, y, yhat, cells, n_cells, weights):
    """Per group: ``N, D`` and the second moments ``A, B, C`` of the influences."""
    n0, n1, d0, d1 = _metric_parts(metric, y)
    yhat = np.asarray(yhat, dtype=float)
    num, den = n0 + n1 * yhat, d0 + d1 * yhat
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)

    def per_group(values):
        return np.bincount(cells, weights=w * values, minlength=n_cells)

    return (per_group(num), per_group(den), per_group(num * num), per_group(num * den),
            per_group(den * den))


def _membership(b: np.ndarray):
    """Sparse coalition x group membership and each coalition's ``c_in``, ``c_out``."""
    n = b.shape[0]
    rows, cols, c_in, c_out, start = [], [], [], [], 0
    for s, inside, outside, members in _coalitions_by_size(b):
        count = members.shape[0]
        rows.append(np.repeat(np.arange(start, start + count), s))
        cols.append(members.ravel())
        c_in.append(np.full(count, inside))
        c_out.append(np.full(count, outside))
        start += count
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    memb = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(start, n))
    return memb, np.concatenate(c_in), np.concatenate(c_out)


def _low_rank(memb, grand, coef):
    """``Memb^T diag(coef) Memb`` as ``(sparse K, vector v)`` with the grand part ``v 1^T``."""
    small = ~grand
    k = (memb[small].T @ sparse.diags(coef[small]) @ memb[small]).tocsr()
    return k, np.full(memb.shape[1], coef[grand].sum())


def _weighted_product(kx, ux, weight, ky, uy) -> np.ndarray:
    """``X^T diag(weight) Y`` for ``X = Kx + ux 1^T``, ``Y = Ky + uy 1^T`` (dense)."""
    w = sparse.diags(weight)
    out = (kx.T @ w @ ky).toarray()
    out += np.asarray(kx.T @ (weight * uy)).ravel()[:, None]
    out += np.asarray(ky.T @ (weight * ux)).ravel()[None, :]
    out += float(ux @ (weight * uy))
    return out


def one_attribute_estimates(metric, y, yhat, cells, n_cells, b, baseline, weights=None):
    """ESL values, metric by group and both covariances of one sensitive attribute.

    Parameters
    ----------
    metric : str
    y, yhat : ndarray of shape (n_rows,)
        0/1 labels and predictions.
    cells : ndarray of int of shape (n_rows,)
        Group code of every row, ``0..n_cells - 1``; every group has denominator rows.
    n_cells : int
    b : ndarray of shape (n_cells,)
        The member's constants ``b_1..b_n``.
    baseline : float
    weights : ndarray of shape (n_rows,) or None
        Frequency weights.

    Returns
    -------
    dict
        ``esl_values`` (G,), ``total`` (float), ``metric_by_group`` (G,),
        ``esl_covariance`` (G, G), ``metric_covariance`` (G, G).
    """
    num_c, den_c, a_c, b_c, c_c = _group_sums(metric, y, yhat, cells, n_cells, weights)
    memb, c_in, c_out = _membership(b)
    num_s, den_s = memb @ num_c, memb @ den_c
    ratio = num_s / den_s
    delta = c_in - c_out
    values = (float(c_out @ ratio) + memb.T @ (delta * ratio)) / baseline
    inv = 1.0 / (den_s * baseline)
    grand = np.asarray(memb.sum(axis=1)).ravel() == n_cells
    kp, vp = _low_rank(memb, grand, delta * inv)
    kq, vq = _low_rank(memb, grand, delta * ratio * inv)
    up = memb.T @ (c_out * inv) + vp
    uq = memb.T @ (c_out * ratio * inv) + vq
    cross = _weighted_product(kp, up, b_c, kq, uq)
    esl_cov = (_weighted_product(kp, up, a_c, kp, up) - cross - cross.T
               + _weighted_product(kq, uq, c_c, kq, uq))
    rate = num_c / den_c
    metric_var = (a_c - 2 * rate * b_c + rate**2 * c_c) / den_c**2
    return {
        "esl_values": values,
        "total": num_c.sum() / den_c.sum() / baseline,
        "metric_by_group": rate,
        "esl_covariance": esl_cov,
        "metric_covariance": np.diag(metric_var),
    }
