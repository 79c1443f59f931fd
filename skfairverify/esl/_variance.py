"""Estimates, plug-in (delta-method) covariances and a stratified bootstrap.

Every quantity of this box is a fixed linear combination of ratio estimates

    R[T, U] = sum_{i in U} num_i(T) / sum_{i in U} den_i(T)

where ``T`` indexes a set of predictions (one per coalition model; a single one for
:func:`group_esl`), ``U`` a union of sensitive cells, and ``num``/``den`` are per-row
indicators of the metric, affine in the prediction ``yhat_i(T)`` given the label ``y_i``:

=================  ======================  =========================
metric             numerator               denominator
=================  ======================  =========================
selection_rate     yhat                    1
tpr                y * yhat                y
fpr                (1 - y) * yhat          1 - y
ppv                y * yhat                yhat
npv                (1 - y) * (1 - yhat)    1 - yhat
=================  ======================  =========================

Rows are independent within *strata*: (cell, label) for every metric except the
selection rate, whose strata are the cells (the label plays no part in it). Linearising
``R[T, U]`` (delta method) gives the influence of row ``i`` in stratum ``h``::

    psi_i = sum_{T, U containing cell(h)} L[T, U] (n1_h - R[T, U] d1_h) / D[T, U] * yhat_i(T)
            + constant(h)

with ``n1``/``d1`` the slopes of numerator and denominator in ``yhat`` and ``D`` the
denominator count. The covariance of the estimates is ``sum_h sum_{i in h} (psi_i -
mean_h psi)(psi_i - mean_h psi)^T``: binomial variances of the group rates, plus the
covariances that arise when the same rows enter several rates (the same group in two
unions, the same row under two coalition models). For the TPR this is exactly the
plug-in variance of the paper's Appendix B. No resampling is involved.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

METRICS = ("selection_rate", "tpr", "fpr", "ppv", "npv")

# what each metric needs in a group: the rows of its denominator
_DENOMINATOR_ROWS = {
    "selection_rate": "rows",
    "tpr": "rows with y_true == 1 (positives)",
    "fpr": "rows with y_true == 0 (negatives)",
    "ppv": "rows with y_pred == 1 (predicted positives)",
    "npv": "rows with y_pred == 0 (predicted negatives)",
}


def _check_metric(metric) -> str:
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(
            f"Unknown metric {metric!r}; valid metrics are {', '.join(map(repr, METRICS))}."
        )
    return metric


def _metric_parts(metric: str, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-row ``(n0, n1, d0, d1)``: numerator = n0 + n1 yhat, denominator = d0 + d1 yhat."""
    y = y.astype(float)
    one, zero = np.ones_like(y), np.zeros_like(y)
    if metric == "selection_rate":
        return zero, one, one, zero
    if metric == "tpr":
        return zero, y, y, zero
    if metric == "fpr":
        return zero, 1.0 - y, 1.0 - y, zero
    if metric == "ppv":
        return zero, y, zero, one
    # npv = P(y = 0 | yhat = 0)
    return 1.0 - y, -(1.0 - y), one, -one


def _strata(metric: str, cells: np.ndarray, y: np.ndarray, n_cells: int) -> np.ndarray:
    """Stratum code of every row: the cell, times the label except for the selection rate."""
    if metric == "selection_rate":
        return cells.astype(np.intp)
    return cells.astype(np.intp) * 2 + y.astype(np.intp)


class _Problem:
    """Rows, predictions and the linear maps of one estimation problem.

    Parameters
    ----------
    yhat : ndarray of shape (n_rows, n_models)
        0/1 predictions, one column per model (coalition).
    y : ndarray of shape (n_rows,)
        0/1 labels.
    cells : ndarray of shape (n_rows,)
        Sensitive cell code of every row in ``0..n_cells-1``.
    unions : ndarray of shape (n_unions, n_cells), bool
        The unions of cells whose metric enters the first stage.
    metric : str
    baseline : float
    """

    def __init__(self, yhat, y, cells, n_cells, unions, metric, baseline):
        self.yhat = np.asarray(yhat, dtype=float)
        self.y = np.asarray(y)
        self.cells = np.asarray(cells, dtype=np.intp)
        self.n_cells = n_cells
        self.unions = np.asarray(unions, dtype=bool)
        self.metric = metric
        self.baseline = float(baseline)
        self.parts = _metric_parts(metric, self.y)
        self.strata = _strata(metric, self.cells, self.y, n_cells)
        self.num, self.den = self.cell_sums()

    # ---------------------------------------------------------------- estimates
    def cell_sums(self, weights=None):
        """Numerator and denominator sums per (cell, model); with ``weights`` of shape
        (B, n_rows), per (replicate, cell, model)."""
        n0, n1, d0, d1 = self.parts
        a = n0[:, None] + n1[:, None] * self.yhat
        d = d0[:, None] + d1[:, None] * self.yhat
        onehot = np.zeros((self.n_cells, self.yhat.shape[0]))
        onehot[self.cells, np.arange(self.yhat.shape[0])] = 1.0
        if weights is None:
            return onehot @ a, onehot @ d
        num = np.empty((weights.shape[0], self.n_cells, a.shape[1]))
        den = np.empty_like(num)
        for c in range(self.n_cells):
            rows = self.cells == c
            num[:, c] = weights[:, rows] @ a[rows]
            den[:, c] = weights[:, rows] @ d[rows]
        return num, den

    def ratios(self, num=None, den=None):
        """``R[..., T, U]`` and the denominator counts ``D[..., T, U]``."""
        if num is None:
            num, den = self.num, self.den
        u = self.unions.astype(float)
        num_u = np.einsum("uc,...ct->...tu", u, num)
        den_u = np.einsum("uc,...ct->...tu", u, den)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num_u / den_u
        return r, den_u

    def outputs(self, model_map, union_map, r=None):
        """``model_map.T @ (R @ union_map) / baseline``: shape (..., n_out, n_leaves)."""
        if r is None:
            r, _ = self.ratios()
        first = np.einsum("...tu,ul->...tl", r, union_map) / self.baseline
        return np.einsum("tk,...tl->...kl", model_map, first)

    # -------------------------------------------------------------- covariance
    def covariance(self, model_map, union_map):
        """Plug-in covariance of ``outputs`` flattened to (n_out * n_leaves,)."""
        r, dcount = self.ratios()
        n_out, n_leaves = model_map.shape[1], union_map.shape[1]
        size = n_out * n_leaves
        cov = np.zeros((size, size))
        n0, n1, d0, d1 = self.parts
        for h in np.unique(self.strata):
            rows = np.flatnonzero(self.strata == h)
            if rows.size < 2:
                continue
            c = self.cells[rows[0]]
            slope_n, slope_d = n1[rows[0]], d1[rows[0]]
            if slope_n == 0 and slope_d == 0:
                continue
            inside = self.unions[:, c]
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.where(inside[None, :], (slope_n - r * slope_d) / dcount, 0.0)
            k = g @ union_map / self.baseline  # (T, leaves)
            w = (model_map[:, :, None] * k[:, None, :]).reshape(model_map.shape[0], size)
            psi = self.yhat[rows] @ w
            psi -= psi.mean(axis=0)
            cov += psi.T @ psi
        return cov

    # --------------------------------------------------------------- bootstrap
    def bootstrap(self, model_map, union_map, n_bootstrap, random_state, n_jobs=None,
                  verbose=0, chunk=50):
        """Replicates of ``outputs`` resampling rows within strata: (B, n_out, n_leaves)."""
        rng = np.random.default_rng(random_state)
        seeds = rng.integers(0, 2**32 - 1, size=(n_bootstrap + chunk - 1) // chunk)
        sizes = [min(chunk, n_bootstrap - i * chunk) for i in range(len(seeds))]
        jobs = (delayed(_bootstrap_chunk)(self, model_map, union_map, s, seed)
                for s, seed in zip(sizes, seeds))
        if verbose:
            from tqdm.auto import tqdm

            jobs = tqdm(jobs, total=len(seeds), desc="bootstrap")
        parts = Parallel(n_jobs=n_jobs)(jobs)
        return np.concatenate(parts, axis=0)


def _stratified_weights(strata, size, rng):
    """Multinomial resampling counts of every row within its stratum: (size, n_rows)."""
    weights = np.zeros((size, strata.shape[0]))
    for h in np.unique(strata):
        rows = np.flatnonzero(strata == h)
        weights[:, rows] = rng.multinomial(rows.size, np.full(rows.size, 1.0 / rows.size),
                                           size=size)
    return weights


def _bootstrap_chunk(problem, model_map, union_map, size, seed):
    rng = np.random.default_rng(seed)
    weights = _stratified_weights(problem.strata, size, rng)
    num, den = problem.cell_sums(weights)
    r, _ = problem.ratios(num, den)
    return problem.outputs(model_map, union_map, r)
