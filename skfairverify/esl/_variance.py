"""Estimates, plug-in (delta-method) covariances and a row bootstrap.

Every quantity of this box is a fixed linear combination of ratio estimates

    R[T, U] = sum_{i in U} num_i(T) / sum_{i in U} den_i(T) = N[T, U] / D[T, U]

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

Sampling design: the (test) rows are independent draws from one population, i.e. the
vector of counts of the (group, label, prediction) cells is multinomial. Group sizes,
label counts and prediction counts are all random, and so is every denominator ``D``:
the number of predicted positives of PPV and of predicted negatives of NPV (the ESL
paper, text before Theorem 4.2), but also the number of positives of a group for TPR
and the mix of groups inside a union. The models (coalitions) are fixed; the same row
enters every coalition's ratio, which makes those ratios dependent.

Delta method: both sums of a ratio are random, so the influence of row ``i`` on
``R[T, U]`` is

    psi_i[T, U] = 1{cell_i in U} (num_i(T) - R[T, U] den_i(T)) / D[T, U],

which sums to zero over the rows. An output ``sum_{T, U} L[T, U] R[T, U]`` has influence
``sum_{T, U} L[T, U] psi_i[T, U]`` and the covariance of the outputs is
``sum_i psi_i psi_i^T`` (the plug-in sandwich, i.e. the empirical variance of the
influence over i.i.d. rows divided by ``n``). Covariances between coalitions (the same
row under several models) and between unions (the same row in several groups' games)
come out of the same sum, exactly. For the TPR of one group this is the binomial
variance ``p (1 - p) / n_positives`` of the paper's Proposition B.1; for PPV it is
``p (1 - p) / n_predicted_positives`` with the denominator random. No resampling is
involved.

Sample weights are frequency weights: a row of weight ``w_i`` counts as ``w_i`` rows.
The sums become ``N = sum_i w_i num_i``, ``D = sum_i w_i den_i`` (ratios of weighted
sums); the influence of one unit of weight of row ``i`` is
``phi_i = 1{cell_i in U} (num_i - R den_i) / D`` and the covariance
``sum_i w_i phi_i phi_i^T`` (= ``sum_i psi_i psi_i^T / w_i`` with the weighted influence
``psi_i = w_i phi_i``), which for integer weights is exactly the covariance of the data
with every row repeated ``w_i`` times. The bootstrap resamples that replicated data:
``round(sum_i w_i)`` draws with probabilities proportional to the weights.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse

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
    weights : ndarray of shape (n_rows,) or None
        Frequency weights of the rows (None: every row weighs 1).
    """

    def __init__(self, yhat, y, cells, n_cells, unions, metric, baseline, weights=None):
        self.yhat = np.asarray(yhat, dtype=float)
        self.y = np.asarray(y)
        self.cells = np.asarray(cells, dtype=np.intp)
        self.n_cells = n_cells
        self.unions = np.asarray(unions, dtype=bool)
        self.metric = metric
        self.baseline = float(baseline)
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        self.parts = _metric_parts(metric, self.y)
        self.num, self.den = self.cell_sums()

    # ---------------------------------------------------------------- estimates
    def cell_sums(self, weights=None):
        """Sum the weighted numerators and denominators per (cell, model).

        With replicate counts ``weights`` of shape (B, n_rows): per (replicate, cell,
        model).
        """
        n0, n1, d0, d1 = self.parts
        a = n0[:, None] + n1[:, None] * self.yhat
        d = d0[:, None] + d1[:, None] * self.yhat
        if weights is None:  # a sparse (cells x rows) indicator: never rows x cells dense
            n_rows = self.yhat.shape[0]
            row_weight = np.ones(n_rows) if self.weights is None else self.weights
            onehot = sparse.csr_matrix((row_weight, (self.cells, np.arange(n_rows))),
                                       shape=(self.n_cells, n_rows))
            return np.asarray(onehot @ a), np.asarray(onehot @ d)
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
        unused = ~(np.abs(model_map).sum(axis=1) > 0)  # their ratios may be undefined
        r = np.where(unused[:, None], 0.0, r)
        first = np.einsum("...tu,ul->...tl", r, union_map) / self.baseline
        return np.einsum("tk,...tl->...kl", model_map, first)

    # -------------------------------------------------------------- covariance
    def _row_terms(self, rows):
        """Numerator and denominator indicators of ``rows`` under every model: (rows, T)."""
        n0, n1, d0, d1 = self.parts
        yhat = self.yhat[rows]
        return (n0[rows, None] + n1[rows, None] * yhat,
                d0[rows, None] + d1[rows, None] * yhat)

    def influence_slopes(self, union_map):
        """Per cell, the slopes of the influence in ``num`` and ``den``.

        Returns ``P, Q`` of shape (n_cells, T, n_leaves): the influence of a row of cell
        ``c`` on output leaf ``l`` of model ``T`` is ``num(T) P[c, T, l] - den(T) Q[c, T,
        l]``, i.e. ``sum_U 1{c in U} union_map[U, l] (num - R den) / (D baseline)``.
        """
        r, dcount = self.ratios()
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.where(dcount > 0, 1.0 / dcount, 0.0)
            r_inv = np.where(dcount > 0, r * inv, 0.0)
        inside = self.unions.T.astype(float)  # (cells, U)
        scaled = union_map / self.baseline
        # optimize: contract through BLAS instead of the naive (c, t, u, l) loop
        p = np.einsum("cu,tu,ul->ctl", inside, inv, scaled, optimize=True)
        q = np.einsum("cu,tu,ul->ctl", inside, r_inv, scaled, optimize=True)
        return p, q

    def covariance(self, model_map, union_map, max_elements=2**22):
        """Plug-in covariance of ``outputs`` flattened to (n_out * n_leaves,).

        ``sum_i psi_i psi_i^T`` over all rows, with ``psi_i`` the influence of row ``i``
        on every output (see the module docstring); rows are processed in chunks of at
        most ``max_elements`` (row, model) pairs.
        """
        model_map = np.asarray(model_map, dtype=float)
        used = np.flatnonzero(np.abs(model_map).sum(axis=1) > 0)
        mm = model_map[used]
        p, q = self.influence_slopes(union_map)
        p, q = p[:, used], q[:, used]
        n_out, n_leaves = model_map.shape[1], union_map.shape[1]
        cov = np.zeros((n_out * n_leaves, n_out * n_leaves))
        chunk = max(1, max_elements // max(1, used.size))
        stacked: list = []  # Gram-route factors, multiplied in batches of max_elements
        n_stacked = 0
        for c in range(self.n_cells):
            cell_rows = np.flatnonzero(self.cells == c)
            if cell_rows.size == 0:
                continue
            if _gram_is_cheaper(cell_rows.size, used.size, n_out * n_leaves):
                stacked.append(self._cell_gram_factors(cell_rows, used, mm, p[c], q[c], chunk))
                n_stacked += stacked[-1][0].size
                if n_stacked >= max_elements:
                    cov += _stacked_product(stacked)
                    stacked, n_stacked = [], 0
            else:
                cov += self._cell_covariance_rows(cell_rows, used, mm, p[c], q[c], chunk)
        if stacked:
            cov += _stacked_product(stacked)
        return cov

    def _cell_covariance_rows(self, cell_rows, used, mm, p_c, q_c, chunk):
        """``sum_i psi_i psi_i^T`` over the rows of one cell, row by row (in chunks)."""
        n_leaves = p_c.shape[1]
        out = 0.0
        for start in range(0, cell_rows.size, chunk):
            rows = cell_rows[start:start + chunk]
            num, den = self._row_terms(rows)
            num, den = num[:, used], den[:, used]
            psi = np.stack([(num * p_c[:, l] - den * q_c[:, l]) @ mm
                            for l in range(n_leaves)], axis=2)  # (rows, out, leaves)
            psi = psi.reshape(rows.size, -1)
            if self.weights is not None:  # frequency weights: sum_i w_i phi_i phi_i^T
                psi = psi * np.sqrt(self.weights[rows])[:, None]
            out = out + psi.T @ psi
        return out

    def _cell_gram_factors(self, cell_rows, used, mm, p_c, q_c, chunk):
        """``(G, (Z^T W Z) G)`` of one cell: its covariance is ``G^T (Z^T W Z) G``.

        Within a cell ``psi_i = z_i @ G`` with ``z_i = (num_i(T), den_i(T))`` and
        ``G = [mm[T, o] p[T, l]; -mm[T, o] q[T, l]]``: cheaper than the rows' outer
        products when a cell has more rows than models.
        """
        g = np.concatenate([np.einsum("to,tl->tol", mm, p_c),
                            -np.einsum("to,tl->tol", mm, q_c)]).reshape(2 * used.size, -1)
        gram = np.zeros((2 * used.size, 2 * used.size))
        for start in range(0, cell_rows.size, chunk):
            rows = cell_rows[start:start + chunk]
            num, den = self._row_terms(rows)
            z = np.concatenate([num[:, used], den[:, used]], axis=1)
            wz = z if self.weights is None else z * self.weights[rows][:, None]
            gram += z.T @ wz
        return g, gram @ g

    def magnitude(self, model_map, union_map):
        """Return ``|model_map|^T (|R| |union_map|) / baseline``.

        That is the sum of the absolute terms whose signed sum is each output, the scale
        of its floating-point round-off.
        """
        model_map = np.asarray(model_map, dtype=float)
        r, _ = self.ratios()
        r = np.where(np.abs(model_map).sum(axis=1)[:, None] > 0, np.abs(r), 0.0)
        r = np.nan_to_num(r, nan=0.0, posinf=0.0)
        first = r @ np.abs(union_map) / self.baseline
        return np.abs(model_map).T @ first

    # --------------------------------------------------------------- bootstrap
    def bootstrap(self, model_map, union_map, n_bootstrap, random_state, n_jobs=None,
                  verbose=0, chunk=50):
        """Bootstrap replicates of ``outputs``, shape (B, n_out, n_leaves).

        Rows are resampled i.i.d. (with replacement) from all rows, as the asymptotic
        variance assumes.

        With frequency weights the replicated data is resampled: ``round(sum w)`` draws
        with probabilities ``w / sum w``.
        """
        draws, probabilities = _bootstrap_design(self.weights, self.yhat.shape[0])
        rng = np.random.default_rng(random_state)
        seeds = rng.integers(0, 2**32 - 1, size=(n_bootstrap + chunk - 1) // chunk)
        sizes = [min(chunk, n_bootstrap - i * chunk) for i in range(len(seeds))]
        jobs = (delayed(_bootstrap_chunk)(self, model_map, union_map, s, seed, draws,
                                          probabilities)
                for s, seed in zip(sizes, seeds))
        if verbose:
            from tqdm.auto import tqdm

            jobs = tqdm(jobs, total=len(seeds), desc="bootstrap")
        parts = Parallel(n_jobs=n_jobs)(jobs)
        return np.concatenate(parts, axis=0)


def _stacked_product(factors: list) -> np.ndarray:
    """``sum_c G_c^T H_c`` as one matrix product of the stacked factors."""
    return np.vstack([g for g, _ in factors]).T @ np.vstack([h for _, h in factors])


def _gram_is_cheaper(n_rows: int, n_models: int, n_outputs: int) -> bool:
    """Whether the Gram route of the covariance costs fewer operations for a cell."""
    t2 = 2 * n_models
    rows_route = n_rows * (n_models * n_outputs + n_outputs**2)
    gram_route = n_rows * t2**2 + t2**2 * n_outputs + t2 * n_outputs**2
    return gram_route < rows_route


def _bootstrap_design(weights, n_rows: int):
    """Return the number of draws of a bootstrap replicate and every row's probability.

    Unweighted: ``n_rows`` draws, uniform. Frequency weights: the replicated data is
    resampled, ``round(sum w)`` draws with probabilities ``w / sum w``.
    """
    if weights is None:
        return n_rows, np.full(n_rows, 1.0 / n_rows)
    total = float(np.sum(weights))
    draws = int(round(total))
    if draws < 2:
        raise ValueError(
            f"The bootstrap treats sample_weight as frequency weights and draws "
            f"round(sum of weights) = {draws} rows per replicate; at least 2 are needed "
            f"(the weights sum to {total:.4g}). Scale the weights or use ci='asymptotic'."
        )
    return draws, np.asarray(weights, dtype=float) / total


def _bootstrap_chunk(problem, model_map, union_map, size, seed, draws, probabilities):
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(draws, probabilities, size=size).astype(float)
    num, den = problem.cell_sums(weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        r, _ = problem.ratios(num, den)
        return problem.outputs(model_map, union_map, r)
