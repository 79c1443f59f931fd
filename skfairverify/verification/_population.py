"""Population estimates of group rates: the network's rate and the rows' own, combined.

The verifier computes a group's rate exactly *under the learned network*. That is the
population's rate only when the network is right; on real data it can be biased (a
tree-augmented network of many features, bins, small groups). The group's rows give a
second estimate, the *direct* rate (the share, weighted, of the group's rows that the
model decides positively): unbiased, but noisy for a small group. As small area
estimation does (Fay and Herriot 1979; Rao and Molina, *Small Area Estimation*, 2015,
chapters 6 and 10), the population estimate weighs each by its precision *including
the network's bias*, the bias' variance learned from how far the network's rates are
from the direct ones beyond their sampling noise:

* ``D_a`` (direct) and ``N_a`` (network) of every group ``a`` have a joint sampling
  distribution, estimated by a Bayesian bootstrap of the rows (each replicate reweighs
  the rows by Exp(1) variates, relearns the network's tables on the same structure and
  solves it, and recomputes the direct rate with the same weights): variances ``psi_a``,
  ``tau_a`` and covariance ``c_a`` (:func:`replicate_moments`). The bootstrap needs no
  assumption that the network is right, so these hold under misspecification too.
* Model (Fay and Herriot's, the network's rate as the synthetic estimate): ``D_a =
  theta_a + e_a`` and ``N_a = theta_a + mu + b_a + u_a`` with ``(e_a, u_a)`` of those
  moments, ``mu`` the network's common bias and ``b_a ~ N(0, sigma^2)`` each group's
  own. Given ``mu`` and ``sigma``, the best linear unbiased combination of the two is
  the generalised least squares estimate ``g_a D_a + (1 - g_a) (N_a - mu)``, ``g_a =
  (sigma^2 + tau_a - c_a) / (sigma^2 + V_a)``, ``V_a = tau_a + psi_a - 2 c_a`` the
  variance of ``N_a - D_a`` (:func:`combine_given_sigma`).
* ``mu`` and ``sigma`` are integrated out (hierarchical Bayes, flat priors, ``sigma``
  on ``[0, 0.5]``): ``N_a - D_a ~ N(mu, sigma^2 + V_a)`` gives their posterior
  (:class:`BiasPosterior`), so their uncertainty, large with few groups, is in the
  estimate's mean squared error (with ``mu``'s: Prasad and Rao's ``g2`` term). Where the
  network fits, ``mu`` and ``sigma`` are small and small groups borrow the network's
  precision; a bias common to the groups is taken off the network's rate; where the
  groups' biases differ, ``g_a`` goes to 1 and the estimate falls back to the direct
  one.
* A group the network gets wrong alone is not what one Gaussian spread predicts: each
  group's own bias is drawn from ``N(0, sigma^2)`` or, with prior probability
  :data:`OUTLIER_PRIOR`, from ``N(0, OUTLIER_SD^2)`` (a scale mixture, as robust small
  area estimation does), so such a group falls back to its rows by its posterior
  probability of being one, and its mean squared error holds the spread between the two
  (without it, a small group whose network rate is three standard errors off was shrunk
  to the network, with 27% coverage). With a single group of enough rows there is
  nothing to learn the bias from beyond its own rows: the estimate is the direct one.
* A network's error can grow as groups get smaller (a prior smoothing a small group's
  tables): the spread of a group's own bias is ``sigma^2 + kappa^2 psi_a``, ``kappa`` in
  standard errors of the group's rows on :data:`KAPPA_GRID`, prior
  :data:`KAPPA_ZERO_PRIOR` at 0, integrated with the rest (:func:`combine_over_bias`).
* Limited translation (Efron and Morris 1972): the estimate is at most
  :data:`SHIFT_CAP` standard errors of the direct rate from it, the squared move added
  to its mean squared error (:func:`limited_translation`): a group the model gets wrong
  loses at most that much.
* The interval is the Jeffreys interval of a proportion with the estimate's effective
  number of rows ``n* = p (1 - p) / MSE`` (Korn and Graubard 1998, for survey
  proportions), ``n*`` at most twice the group's own rows: no group is credited with the
  precision of more than twice its rows, a bound the bootstrap of a small group cannot
  check. A group of fewer than :data:`MIN_NETWORK_ROWS` rows gets its direct rate and
  the Jeffreys interval of its rows; a group whose rows all decide alike keeps 0 (or 1)
  in its interval.
* The model check of a group is the (Wald) test of ``N_a - D_a = 0`` against its
  bootstrap variance ``V_a`` (the direct rate's variance at least the binomial one at
  the rows' own rate, not at the network's it tests): its p-value says whether the
  network's rate of the group is compatible with the group's rows.

The intervals of the metrics (statistical parity, disparate impact, equalized odds) come
from draws of every group's rate from its interval's Beta distribution
(:func:`metric_intervals_from_estimates`): a gap ``max - min`` is not a smooth function
of the rates (a percentile interval sits above the truth when groups are close), so the
bounds are those of the pairwise differences, the lower one adjusted for the pairs that
can be the extreme pair (:func:`gap_bounds`).

``benchmarks/bench_population.py`` measures the estimate and its intervals on designs
and real data (``docs/uncertainty.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from ..s3p import TableTooLargeError

__all__ = [
    "MIN_NETWORK_ROWS",
    "Observed",
    "RateRows",
    "add_population_columns",
    "distinct_rows",
    "misfits",
    "population_table",
    "estimate_population",
    "PopulationEstimates",
    "BiasPosterior",
    "combine_given_sigma",
    "combine_over_bias",
    "limited_translation",
    "direct_rates",
    "gap_bounds",
    "kish_rows",
    "metric_intervals_from_estimates",
    "population_estimates",
    "replicate_moments",
    "replicate_tables",
    "reweighted_rates",
]

#: Groups with fewer (effective) rows get their direct rate: their bootstrap cannot
#: estimate the joint variance of the two rates.
MIN_NETWORK_ROWS = 4
#: Largest precision credited to a group's estimate, in multiples of its own rows.
MAX_ROWS_FACTOR = 2.0
#: Grid of the between-group standard deviation of the network's bias (flat prior).
SIGMA_GRID = np.linspace(0.0, 0.5, 81)
#: Prior probability that a group's own bias is an outlier's (:class:`BiasPosterior`).
OUTLIER_PRIOR = 0.2
#: Standard deviation of an outlying group's bias: any rate, the network says nothing.
OUTLIER_SD = 0.5
#: Passes of the outlier responsibilities and the common bias (they depend on each other).
OUTLIER_ITERATIONS = 5
#: Grid of ``kappa``: a group's own bias has variance ``sigma^2 + kappa^2 psi_a``, the
#: second part in multiples of its direct rate's variance (a bias that grows as groups get
#: smaller, as a prior's smoothing of a small group's tables does).
KAPPA_GRID = np.linspace(0.0, 2.0, 9)
#: Prior probability of ``kappa = 0`` (the rest spread evenly over the grid's other values).
KAPPA_ZERO_PRIOR = 0.5
#: Limited translation (Efron and Morris 1972): the estimate moves from the direct rate by
#: at most this many standard errors of the direct rate.
SHIFT_CAP = 0.75
#: Draws of the groups' rates for the intervals of the metrics.
METRIC_DRAWS = 4000


def direct_rates(decisions, group_of_row, n_groups: int, weight=None, square=None):
    """Weighted share of positive decisions of every group's rows, and its effective rows.

    Parameters
    ----------
    decisions : array-like of bool of shape (n_rows,)
        The model's positive decisions on the rows.
    group_of_row : array-like of int of shape (n_rows,)
        Index of every row's group (``-1``: no group, left out).
    n_groups : int
        Number of groups.
    weight : array-like of shape (n_rows,), default=None
        The weight of every row (1 when None); of a row standing for several rows of
        data, the sum of theirs.
    square : array-like of shape (n_rows,), default=None
        The sum of the squared weights of the rows of data a row stands for (``weight **
        2`` when None: single rows).

    Returns
    -------
    rates : ndarray of shape (n_groups,)
        NaN for a group without rows.
    n_eff : ndarray of shape (n_groups,)
        Kish's effective number of rows ``(sum w)^2 / sum w^2`` (the rows without
        weights).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import direct_rates
    >>> rates, n = direct_rates([1, 0, 1, 1], [0, 0, 1, 1], 2)
    >>> rates.tolist(), n.tolist()
    ([0.5, 1.0], [2.0, 2.0])
    """
    decisions = np.asarray(decisions, dtype=float)
    group_of_row = np.asarray(group_of_row)
    keep = group_of_row >= 0
    g = group_of_row[keep]
    w = np.ones(int(keep.sum())) if weight is None else np.asarray(weight, float)[keep]
    q = None if square is None else np.asarray(square, float)[keep]
    mass, n_eff = kish_rows(g, n_groups, w, q)
    positive = np.bincount(g, weights=w * decisions[keep], minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(mass > 0, positive / np.where(mass > 0, mass, 1.0), np.nan)
    return rates, n_eff


def kish_rows(group_of_row, n_groups: int, weight=None, square=None):
    """Every group's weight and Kish effective number of rows ``(sum w)^2 / sum w^2``.

    ``weight``: of every row (1 when None); of a row standing for several rows of data,
    the sum of theirs, and ``square`` the sum of their squared weights (``weight ** 2``
    when None: single rows), so that such a row counts as the rows it stands for. A
    group without rows has 0 of both.

    Examples
    --------
    >>> from skfairverify.verification._population import kish_rows
    >>> kish_rows([0, 0, 0, 0, 2], 3, [1, 1, 2, 2, 5])[1].tolist()  # 6**2 / 10
    [3.6, 0.0, 1.0]
    """
    g = np.asarray(group_of_row)
    w = np.ones(g.size) if weight is None else np.asarray(weight, dtype=float)
    q = w * w if square is None else np.asarray(square, dtype=float)
    mass = np.bincount(g, weights=w, minlength=n_groups)
    squares = np.bincount(g, weights=q, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = np.where(squares > 0, mass ** 2 / np.where(squares > 0, squares, 1.0), 0.0)
    return mass, n_eff


# ---------------------------------------------------------------- bootstrap replicates
def _family_index(codes, cards, variable, parents) -> tuple[np.ndarray, tuple]:
    family = list(parents) + [variable]
    shape = tuple(int(cards[v]) for v in family)
    return np.ravel_multi_index(tuple(codes[:, v] for v in family), shape), shape


def check_replicate_memory(n_boot: int, n_rows: int, table_sizes, max_table_size: int
                           ) -> int:
    """Entries the bootstrap replicates need; a TableTooLargeError naming them beyond budget.

    The replicates' tables (``n_boot`` times the network's), a few arrays of row weights,
    the rows' count matrix (:func:`_count_matrix`: an index and a value per row and
    table, and two for its group), a copy of the rows' codes (an entry per variable) and
    the counts of one replicate (the tables and two per group; further replicates are
    counted together as the budget allows, :func:`_replicate_chunk`).

    Examples
    --------
    >>> from skfairverify.verification._population import check_replicate_memory
    >>> check_replicate_memory(50, 1000, [10, 40], 10**6)
    18550
    """
    sizes = [int(s) for s in table_sizes]
    codes = len(sizes)  # a copy of the rows' codes (at most 8 bytes per variable)
    per_row = 5 + 2 * (len(sizes) + 2) + 1 + codes  # weights, count matrix, a replicate's
    entries = n_boot * int(sum(sizes)) + per_row * int(n_rows) + int(sum(sizes))
    if entries > max_table_size:
        raise TableTooLargeError(
            f"Population estimate refused: {n_boot:,} bootstrap replicates of the network's "
            f"tables ({int(sum(sizes)):,} entries) and their row weights and counts "
            f"({n_rows:,} rows, {len(sizes)} tables) need about {entries:,} float64 "
            f"entries ({entries * 8 / 2**30:.2f} GiB), above "
            f"max_table_size={max_table_size:,}. Lower n_bootstrap (0 skips the "
            "population estimate), use fewer bins or a narrower network, or raise "
            "max_table_size."
        )
    return entries


#: Most replicates whose row weights are counted together (one sparse product).
REPLICATE_CHUNK = 64


def _replicate_chunk(n_boot: int, n_rows: int, n_columns: int, entries: int,
                     max_table_size: int) -> int:
    """Replicates counted together: their row weights and counts within the budget left.

    ``entries`` (:func:`check_replicate_memory`) holds one replicate's; each further one
    needs ``2 n_rows + n_columns`` (its weights, filled a replicate at a time, and their
    copy laid out for the product). At most :data:`REPLICATE_CHUNK`, at least one.

    Examples
    --------
    >>> from skfairverify.verification._population import _replicate_chunk
    >>> _replicate_chunk(30, 1000, 100, 10_000, 10**6), _replicate_chunk(30, 1000, 100,
    ...                                                                 10_000, 15_000)
    (30, 3)
    """
    room = (int(max_table_size) - int(entries)) // max(1, 2 * n_rows + n_columns)
    return int(max(1, min(n_boot, REPLICATE_CHUNK, 1 + room)))


def _count_matrix(families, n_rows: int, group_of_row, decisions, n_groups: int):
    """Sparse ``(n_columns, n_rows)`` matrix: every row's cell of every table, its group.

    Columns of the product with the rows' weights: the counts of every table's cells
    (the tables one after the other, flattened), then every group's mass and its
    positive mass (one column when there are no groups). Every row has one entry per
    table and two for its group (of value 0
    for a row without group, 0 in the positive column for a negative decision), in
    increasing column order, so the product (compressed columns, one data row at a
    time) adds the rows' weights in the order of the rows, as ``np.bincount`` does:
    the counts are ``np.bincount``'s to the last digit.
    """
    from scipy import sparse

    sizes = [math.prod(shape) for _, shape in families]
    offsets = np.cumsum([0] + sizes)
    n_cells = int(offsets[-1])
    slots = max(int(n_groups), 1)  # a row without group needs a column (of value 0)
    keep = group_of_row >= 0
    group = np.where(keep, group_of_row, 0).astype(np.int64)
    columns = np.column_stack([np.asarray(flat, dtype=np.int64).reshape(n_rows) + off
                               for (flat, _), off in zip(families, offsets[:-1])]
                              + [group + n_cells, group + n_cells + slots])
    values = np.ones(columns.shape)
    values[:, -2] = keep
    values[:, -1] = keep & np.asarray(decisions, dtype=bool)
    width = columns.shape[1]
    rows = sparse.csr_matrix((values.ravel(), columns.ravel(),
                              np.arange(0, width * n_rows + 1, width)),
                             shape=(n_rows, n_cells + 2 * slots))
    return rows.T, offsets, slots  # compressed columns: one data row per column


def replicate_tables(network, codes, decisions, group_of_row, n_groups: int, *,
                     n_boot: int, random_state, equivalent_sample_size: float,
                     weight=None, square=None, scale_tables=None,
                     max_table_size: int = 50_000_000):
    """Bayesian bootstrap replicates of the network's tables and of the direct rates.

    Replicate ``b`` weighs a row of data by ``w E_b`` with ``E_b ~ Exp(1)``; a row
    standing for rows of weights ``w_1, ...`` (sum ``W``, sum of squares ``Q``) by the
    Gamma variate of the same mean and variance, ``Gamma(W^2 / Q, Q / W)``: the sum
    ``sum_i w_i E_bi`` itself when the weights are equal (a row of data: ``W = w``, ``Q =
    w^2``, so ``w E_b``). Then every table is estimated as the network's point estimate
    is (BDeu of ``equivalent_sample_size`` on the reweighted counts, the structure
    fixed) and the direct rates with the same weights.

    The counts of all tables and groups of a chunk of replicates are one product of the
    rows' sparse count matrix with the replicates' weights (:func:`_count_matrix`):
    the counts of ``np.bincount`` per replicate and table, to the last digit, in
    about half its time (``benchmarks/bench_population.py --cost``).

    Parameters
    ----------
    network : BayesNet
        The learned network (structure and states).
    codes : ndarray of shape (n_rows, n_variables)
        State codes of the rows it was learned from.
    decisions : ndarray of bool of shape (n_rows,)
        The model's positive decisions on those rows.
    group_of_row : ndarray of int of shape (n_rows,)
        Every row's group.
    n_groups : int
    n_boot : int
        Number of replicates.
    random_state : numpy Generator
    equivalent_sample_size : float
        Of the BDeu estimate.
    weight, square : ndarray of shape (n_rows,), default=None
        The rows' weights (sums) and sums of squared weights (:func:`direct_rates`).
    scale_tables : list of ndarray, default=None
        Factors applied to every replicate's tables (renormalised): the point network's
        tables divided by their BDeu estimate, so that a network estimated with another
        prior keeps its shrinkage in every replicate.
    max_table_size : int, default=50_000_000
        Memory budget in float64 entries (:func:`check_replicate_memory`).

    Returns
    -------
    tables : list of ndarray
        ``tables[i]`` of shape ``(n_boot, *network.cpts[i].shape)``, rows normalised.
    direct : ndarray of shape (n_boot, n_groups)
        The direct rates of every replicate (NaN for a group without rows).
    """
    cards = network.cardinalities
    n_rows = len(codes)
    entries = check_replicate_memory(n_boot, n_rows, [c.size for c in network.cpts],
                                     max_table_size)
    total = np.ones(n_rows) if weight is None else np.asarray(weight, float)
    squares = total * total if square is None else np.asarray(square, float)
    positive = total > 0
    gamma_shape = np.where(positive, total ** 2 / np.where(squares > 0, squares, 1.0), 1.0)
    gamma_scale = np.where(positive, squares / np.where(positive, total, 1.0), 0.0)
    single = np.isclose(gamma_shape, 1.0)  # rows of data: Exp(1) variates, cheaper
    single_rows, many_rows = np.flatnonzero(single), np.flatnonzero(~single)
    many_shape = gamma_shape[many_rows]
    by_column = np.asfortranarray(codes)  # each variable's codes contiguous
    families = [_family_index(by_column, cards, i, p) for i, p in enumerate(network.parents)]
    del by_column
    counts_of, offsets, slots = _count_matrix(families, n_rows, np.asarray(group_of_row),
                                       decisions, n_groups)
    n_cells = int(offsets[-1])
    tables = [np.empty((n_boot,) + shape) for _, shape in families]
    direct = np.empty((n_boot, n_groups))
    chunk = _replicate_chunk(n_boot, n_rows, counts_of.shape[0], entries, max_table_size)
    for start in range(0, n_boot, chunk):
        stop = min(start + chunk, n_boot)
        w = np.empty((stop - start, n_rows))  # a row per replicate, filled in place
        for row in w:  # each replicate's variates in turn, as one by one
            row[single_rows] = random_state.standard_exponential(single_rows.size)
            row[many_rows] = random_state.standard_gamma(many_shape)
        w *= gamma_scale
        counts = np.ascontiguousarray((counts_of @ np.ascontiguousarray(w.T)).T)
        for i, (_, shape) in enumerate(families):
            size = math.prod(shape)
            table = counts[:, offsets[i]:offsets[i] + size].reshape((-1,) + shape)
            table = table + equivalent_sample_size / size
            if scale_tables is not None:
                table *= scale_tables[i]
            tables[i][start:stop] = table / table.sum(axis=-1, keepdims=True)
        mass = counts[:, n_cells:n_cells + n_groups]
        pos = counts[:, n_cells + slots:n_cells + slots + n_groups]
        with np.errstate(invalid="ignore", divide="ignore"):
            direct[start:stop] = np.where(mass > 0, pos / np.where(mass > 0, mass, 1.0),
                                          np.nan)
    return tables, direct


# ---------------------------------------------------------------- the combination
@dataclass(frozen=True)
class Moments:
    """Joint sampling moments of the network's and the direct rates of every group."""

    tau: np.ndarray  # variance of the network's rate
    psi: np.ndarray  # variance of the direct rate
    cov: np.ndarray  # their covariance
    floor: np.ndarray  # binomial variance of the direct rate (the floor of psi)

    @property
    def diff_variance(self) -> np.ndarray:
        """Variance of ``network - direct``."""
        return self.tau + self.psi - 2.0 * self.cov


def _binomial_floor(network, direct, n_eff, rows_only: bool = False) -> np.ndarray:
    """``p (1 - p) / n`` at the larger of the network's and the rows' (Jeffreys) rates.

    The bootstrap variance of a small group's direct rate vanishes when its rows all
    decide alike; the binomial variance at either rate does not. ``rows_only``: at the
    rows' rate alone (the model check's, which must not take the variance from the
    network it tests).
    """
    n = np.maximum(n_eff, 1.0)
    p_dir = (n * direct + 0.5) / (n + 1.0)
    if rows_only:
        return p_dir * (1 - p_dir) / n
    p_net = np.clip(network, 0.5 / n, 1.0 - 0.5 / n)
    return np.maximum(p_net * (1 - p_net), p_dir * (1 - p_dir)) / n


def replicate_moments(network, direct, n_eff, boot_network, boot_direct,
                      extra_variance=None, rows_only: bool = False) -> Moments:
    """The variances and covariance of the two rates from their bootstrap replicates.

    The Bayesian bootstrap's variance of a mean of ``n`` rows is ``(n - 1) / (n + 1)``
    times the sampling variance: the moments are scaled by ``(n + 1) / (n - 1)``. The
    direct rate's variance is at least the binomial one (:func:`_binomial_floor`), and
    the variance of the difference at least the floor minus the network's variance (its
    value when the network's estimate is efficient). ``extra_variance`` (of the network's
    rate, unseen by the replicates: the Monte Carlo error of the sampling path's point
    estimate) is added to the network's variance. ``rows_only``: the floor at the rows'
    rate alone (:func:`_binomial_floor`), for the model check.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import replicate_moments
    >>> rng = np.random.default_rng(0)
    >>> bn, bd = rng.normal(0.5, 0.02, (200, 1)), rng.normal(0.5, 0.03, (200, 1))
    >>> m = replicate_moments(np.array([0.5]), np.array([0.5]), np.array([300.0]), bn, bd)
    >>> bool(m.psi[0] >= 0.25 / 300), bool(abs(m.tau[0] - 0.02 ** 2) < 1e-4)
    (True, True)
    """
    n = np.asarray(n_eff, dtype=float)
    scale = np.where(n > 1.5, (n + 1.0) / np.maximum(n - 1.0, 1e-9), 1.0)
    bn = boot_network - boot_network.mean(axis=0)
    bd = boot_direct - boot_direct.mean(axis=0)
    dof = max(len(boot_network) - 1, 1)
    tau = (bn * bn).sum(axis=0) / dof * scale
    if extra_variance is not None:
        tau = tau + extra_variance
    cov = (bn * bd).sum(axis=0) / dof * scale
    floor = _binomial_floor(network, direct, n, rows_only)
    psi = np.maximum((bd * bd).sum(axis=0) / dof * scale, floor)
    diff = np.maximum(tau + psi - 2.0 * cov, np.maximum(floor - tau, 1e-12))
    cov = (tau + psi - diff) / 2.0  # moments consistent with the floored difference
    return Moments(tau=tau, psi=psi, cov=cov, floor=floor)


def _check_pvalue(diff, moments: Moments) -> np.ndarray:
    """The model check's p-value of ``network - direct``, at least the rows' own noise.

    The variance of the difference can be far below the direct rate's own when the
    network nearly reproduces the rows (one feature, a saturated network): a fixed
    discrepancy of the binning (0.001 on a rate whose rows' standard error is 0.03)
    would be "significant" and warn of a misfit no sample could see in the rate. The
    variance is floored at the direct rate's: still a valid test of no bias (a larger
    variance only raises the p-value), with power for the discrepancies that matter.
    """
    variance = np.maximum(moments.diff_variance, moments.psi)
    return 2.0 * stats.norm.sf(np.abs(diff) / np.sqrt(variance))


def combine_given_sigma(network, direct, moments: Moments, sigma2):
    """The GLS combination of the two rates given the bias variance ``sigma2``.

    Returns the estimate and its mean squared error; ``sigma2`` broadcasts against the
    groups (a column of grid values gives one row per value). The weight of the direct
    rate is clipped to ``[0, 1]``.

    Examples
    --------
    With no bias the efficient network (covariance = its variance) takes all the weight;
    with a large one the direct rate does:

    >>> import numpy as np
    >>> from skfairverify.verification._population import Moments, combine_given_sigma
    >>> m = Moments(tau=np.array([1e-4]), psi=np.array([4e-4]), cov=np.array([1e-4]),
    ...             floor=np.array([4e-4]))
    >>> est, mse = combine_given_sigma(np.array([0.3]), np.array([0.4]), m, 0.0)
    >>> round(float(est[0]), 6), round(float(mse[0]), 8)
    (0.3, 0.0001)
    >>> est, mse = combine_given_sigma(np.array([0.3]), np.array([0.4]), m, 1.0)
    >>> round(float(est[0]), 3)
    0.4
    """
    a = moments.tau + sigma2
    g = np.clip((a - moments.cov) / (a + moments.psi - 2.0 * moments.cov), 0.0, 1.0)
    estimate = g * direct + (1.0 - g) * network
    mse = g * g * moments.psi + (1 - g) ** 2 * a + 2.0 * g * (1 - g) * moments.cov
    return estimate, np.maximum(mse, 1e-15)


@dataclass(frozen=True)
class BiasPosterior:
    """The posterior of the network's bias on :data:`SIGMA_GRID` given the differences.

    ``N_a - D_a = mu + b_a + noise`` with ``noise ~ N(0, V_a)``: ``mu`` the network's
    common bias (flat prior; its mean ``mu[k]`` and variance ``mu_variance[k]`` given
    each grid row ``k``) and each group's own bias ``b_a`` drawn from the others' spread
    ``N(0, sigma^2 + extra_a)`` (``extra``: one row per value of a part of the spread of
    each group alone, :data:`KAPPA_GRID`; the grid rows are every ``sigma`` of
    :data:`SIGMA_GRID` for each row of ``extra``), or, with prior probability
    ``prior_outlier``, from ``N(0, OUTLIER_SD^2)``: a group the network gets wrong alone
    (a scale mixture, as robust small area estimation does; a single Gaussian spread
    lets one such group be shrunk, confidently, towards the network). ``outlier[k, a]``
    is the posterior probability that group ``a`` is one, given grid row ``k``;
    ``weights[k]`` the posterior probability of row ``k`` (flat prior on ``sigma``, times
    ``exp(log_prior)`` of its row of ``extra``; the likelihood with ``mu`` integrated out,
    REML's, at the groups' responsibilities); ``log_evidence`` the log of the prior
    times the likelihood summed over the rows (to weigh posteriors computed apart);
    ``spread[k, a]`` the variance of group ``a``'s own bias and ``sigma[k]`` the
    ``sigma`` of row ``k``.
    """

    weights: np.ndarray
    mu: np.ndarray
    mu_variance: np.ndarray
    outlier: np.ndarray
    log_evidence: float = 0.0
    spread: np.ndarray | None = None
    sigma: np.ndarray | None = None

    @classmethod
    def of(cls, diff, variance, prior_outlier: float = 0.0, extra=None,
           log_prior=None) -> BiasPosterior:
        extra = np.zeros((1, np.size(diff))) if extra is None else np.atleast_2d(extra)
        spread = (SIGMA_GRID[None, :, None] ** 2 + extra[:, None, :]).reshape(
            -1, np.size(diff))
        inlier = spread + variance[None, :]
        outlying = OUTLIER_SD ** 2 + variance[None, :]
        r = np.zeros_like(inlier)
        for _ in range(OUTLIER_ITERATIONS if prior_outlier > 0 else 1):
            precision = (1.0 - r) / inlier + r / outlying
            mass = precision.sum(axis=1)
            mu = (precision * diff[None, :]).sum(axis=1) / mass
            resid2 = (diff[None, :] - mu[:, None]) ** 2
            log_in = np.log1p(-prior_outlier) - 0.5 * (np.log(inlier) + resid2 / inlier)
            if prior_outlier > 0:
                log_out = np.log(prior_outlier) - 0.5 * (np.log(outlying)
                                                         + resid2 / outlying)
                total = np.logaddexp(log_in, log_out)
                r = np.exp(log_out - total)
            else:
                total = log_in
        loglik = total.sum(axis=1) - 0.5 * np.log(mass)
        if log_prior is not None:
            loglik = loglik + np.repeat(log_prior, SIGMA_GRID.size)
        evidence = float(logsumexp(loglik) - np.log(SIGMA_GRID.size))
        return cls(np.exp(loglik - logsumexp(loglik)), mu, 1.0 / mass, r, evidence,
                   spread, np.tile(SIGMA_GRID, len(extra)))


def _kappa_log_prior() -> np.ndarray:
    """Log prior of :data:`KAPPA_GRID`: :data:`KAPPA_ZERO_PRIOR` at 0, the rest even."""
    rest = (1.0 - KAPPA_ZERO_PRIOR) / max(KAPPA_GRID.size - 1, 1)
    return np.log(np.where(KAPPA_GRID == 0.0, KAPPA_ZERO_PRIOR, rest))


#: Entries of one array of the bias posterior (grid rows times groups) at most: the values
#: of ``kappa`` are taken in chunks that fit.
MAX_GRID_ENTRIES = 2 ** 16


def _posterior_moments(post: BiasPosterior, network, direct, sub: Moments):
    """Posterior mean of the estimate, of its square plus MSE, and of the direct weight.

    Given each grid value, the GLS combination (:func:`combine_given_sigma`) of the rows
    with the network corrected by the common bias, for an inlying and for an outlying
    group, weighed by the group's posterior probability of being one, the MSE with
    ``mu``'s uncertainty (Prasad and Rao's ``g2`` term).
    """
    corrected = network[None, :] - post.mu[:, None]
    est, second, weight = 0.0, 0.0, 0.0
    for spread, share in ((post.spread, 1.0 - post.outlier),
                          (OUTLIER_SD ** 2, post.outlier)):
        part, err = combine_given_sigma(corrected, direct, sub, spread)
        w = np.clip((sub.tau + spread - sub.cov) / (spread + sub.diff_variance), 0.0, 1.0)
        err = err + (1 - w) ** 2 * post.mu_variance[:, None]  # Prasad-Rao's g2
        est, second = est + share * part, second + share * (err + part ** 2)
        weight = weight + share * w
    return post.weights @ est, post.weights @ second, post.weights @ weight


def limited_translation(estimate, mse, direct, psi, cap: float = SHIFT_CAP):
    """The estimate moved back to within ``cap`` standard errors of the direct rate.

    Efron and Morris' limited translation: whatever the model says, a group's estimate
    is at most ``cap sqrt(psi)`` from its rows' own rate, so a group the model gets wrong
    loses at most that much; the squared move is added to the mean squared error (the
    estimate is biased by at most that much relative to the model's).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import limited_translation
    >>> est, mse = limited_translation(np.array([0.5, 0.41]), np.array([1e-4, 1e-4]),
    ...                                np.array([0.4, 0.4]), np.array([0.0016, 0.0016]))
    >>> np.round(est, 3).tolist(), np.round(mse, 5).tolist()
    ([0.43, 0.41], [0.005, 0.0001])
    """
    bound = cap * np.sqrt(psi)
    moved = direct + np.clip(estimate - direct, -bound, bound)
    return moved, mse + (estimate - moved) ** 2


def combine_over_bias(network, direct, variance, sub: Moments):
    """The estimate, its mean squared error and direct weight, and the mean ``sigma``.

    The bias posterior (:class:`BiasPosterior`) over ``sigma`` and ``kappa``
    (:data:`KAPPA_GRID`: a group's own bias variance ``sigma^2 + kappa^2 psi_a``, the
    prior :func:`_kappa_log_prior`), the posterior means of the combination
    (:func:`_posterior_moments`), then :func:`limited_translation`. The values of
    ``kappa`` are taken in chunks of at most :data:`MAX_GRID_ENTRIES` entries per array,
    the chunks' posteriors mixed by their evidence.
    """
    diff, m = network - direct, network.size
    step = max(1, MAX_GRID_ENTRIES // (SIGMA_GRID.size * m))
    log_prior = _kappa_log_prior()
    parts, log_post = [], []
    for start in range(0, KAPPA_GRID.size, step):
        kappa = KAPPA_GRID[start:start + step]
        post = BiasPosterior.of(diff, variance, OUTLIER_PRIOR,
                                kappa[:, None] ** 2 * sub.psi[None, :],
                                log_prior[start:start + step])
        parts.append((*_posterior_moments(post, network, direct, sub),
                      post.weights @ post.sigma))
        log_post.append(post.log_evidence)
    share = np.exp(np.asarray(log_post) - logsumexp(log_post))
    mean, second, weight, sigma = (sum(p * part[i] for p, part in zip(share, parts))
                                   for i in range(4))
    rate, mse = limited_translation(mean, second - mean ** 2, direct, sub.psi)
    return np.clip(rate, 0.0, 1.0), mse, weight, float(sigma)


def jeffreys_interval(p, n, level: float):
    """Jeffreys interval of a proportion ``p`` of ``n`` (effective) rows.

    ``Beta(n p + 1/2, n (1 - p) + 1/2)`` quantiles; 0 below when ``p = 0``, 1 above
    when ``p = 1`` (Brown, Cai and DasGupta 2001).

    Examples
    --------
    >>> from skfairverify.verification._population import jeffreys_interval
    >>> low, high = jeffreys_interval(0.5, 100.0, 0.95)
    >>> round(float(low), 3), round(float(high), 3)
    (0.403, 0.597)
    """
    p, n = np.asarray(p, dtype=float), np.asarray(n, dtype=float)
    a, b = n * p + 0.5, n * (1 - p) + 0.5
    low = np.where(p <= 0, 0.0, stats.beta.ppf((1 - level) / 2, a, b))
    high = np.where(p >= 1, 1.0, stats.beta.ppf((1 + level) / 2, a, b))
    return np.minimum(low, p), np.maximum(high, p)


@dataclass
class PopulationEstimates:
    """Population estimates of one rate (positive, true or false positive) of every group.

    Attributes
    ----------
    rate : ndarray
        The population estimate (NaN for a group without that rate).
    low, high : ndarray
        Its interval at ``level``.
    effective_rows : ndarray
        ``n*`` of the interval (the estimate is as precise as a proportion of ``n*``
        rows).
    direct : ndarray
        The share of the group's rows decided positively (weighted).
    n_eff : ndarray
        The group's effective rows (Kish).
    discrepancy : ndarray
        The network's rate minus the direct one.
    pvalue : ndarray
        The model check: p-value of ``discrepancy = 0`` (two-sided, normal, the
        bootstrap variance of the difference).
    direct_weight : ndarray
        Weight of the direct rate in the estimate (posterior mean over ``sigma``).
    sigma : float
        Posterior mean of the between-group standard deviation of the network's bias.
    level : float
    network_variance : ndarray or None
        Sampling variance of the network's rate (from the replicates).
    """

    rate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    effective_rows: np.ndarray
    direct: np.ndarray
    n_eff: np.ndarray
    discrepancy: np.ndarray
    pvalue: np.ndarray
    direct_weight: np.ndarray
    sigma: float
    level: float = 0.95
    network_variance: np.ndarray | None = None

    def draws(self, n_draws: int, rng) -> np.ndarray:
        """Independent draws of every group's rate from its interval's Beta distribution."""
        p = np.where(np.isnan(self.rate), 0.5, self.rate)
        n = np.where(np.isnan(self.rate), 1.0, self.effective_rows)
        out = rng.beta(n * p + 0.5, n * (1 - p) + 0.5, size=(n_draws, len(p)))
        out[:, np.isnan(self.rate)] = np.nan
        return out


def population_estimates(network, direct, n_eff, boot_network, boot_direct, *,
                         level: float = 0.95, extra_variance=None) -> PopulationEstimates:
    """Combine the network's and the direct rates of every group (see the module docstring).

    Parameters
    ----------
    network, direct, n_eff : ndarray of shape (n_groups,)
        The network's rates, the direct rates and the groups' effective rows (NaN
        rates: groups without that rate, left out).
    boot_network, boot_direct : ndarray of shape (n_boot, n_groups)
        Their bootstrap replicates.
    level : float, default=0.95
        Level of the intervals.
    extra_variance : ndarray of shape (n_groups,), default=None
        Variance of the network's rates that the replicates do not see (the Monte Carlo
        error of the sampling path's point estimates).

    Returns
    -------
    PopulationEstimates

    Examples
    --------
    A network that agrees with the rows: the estimate is close to the network's rate,
    with an interval narrower than the rows' own:

    >>> import numpy as np
    >>> from skfairverify.verification._population import population_estimates
    >>> rng = np.random.default_rng(0)
    >>> n = np.array([400.0, 30.0])
    >>> bd = rng.normal([0.5, 0.4], np.sqrt([0.25 / 400, 0.24 / 30]), (50, 2))
    >>> bn = 0.4 + 0.6 * (bd - 0.4) + rng.normal(0, 0.003, (50, 2))
    >>> est = population_estimates(np.array([0.5, 0.4]), np.array([0.5, 0.42]), n, bn, bd)
    >>> bool(abs(est.rate[1] - 0.4) < 0.02), bool(est.high[1] - est.low[1] < 0.33)
    (True, True)
    """
    network = np.asarray(network, dtype=float)
    direct = np.asarray(direct, dtype=float)
    n_eff = np.asarray(n_eff, dtype=float)
    m = len(network)
    out = {k: np.full(m, np.nan) for k in ("rate", "low", "high", "rows", "pvalue", "g")}
    present = ~(np.isnan(network) | np.isnan(direct))
    extra = None if extra_variance is None else np.asarray(extra_variance)[present]
    mom = replicate_moments(network[present], direct[present], n_eff[present],
                            boot_network[:, present], boot_direct[:, present], extra)
    diff = network[present] - direct[present]
    variance = mom.diff_variance
    out["pvalue"][present] = _check_pvalue(
        diff, replicate_moments(network[present], direct[present], n_eff[present],
                                boot_network[:, present], boot_direct[:, present], extra,
                                rows_only=True))
    sigma = np.nan
    small = n_eff[present] < MIN_NETWORK_ROWS
    rate, mse, g = direct[present].copy(), mom.floor.copy(), np.ones(int(present.sum()))
    fit = ~small
    if fit.sum() >= 2:  # a common bias and a spread need two groups
        sub = Moments(mom.tau[fit], mom.psi[fit], mom.cov[fit], mom.floor[fit])
        rate[fit], mse[fit], g[fit], sigma = combine_over_bias(
            network[present][fit], direct[present][fit], variance[fit], sub)
    n = np.maximum(n_eff[present], 1.0)
    p = np.clip(rate, 0.5 / n, 1 - 0.5 / n)
    rows = np.minimum(p * (1 - p) / np.maximum(mse, 1e-15), MAX_ROWS_FACTOR * n)
    rows = np.where(small, n_eff[present], rows)
    low, high = jeffreys_interval(rate, rows, level)
    # a group whose rows all decide alike cannot exclude that rate (a deterministic one)
    low = np.where(direct[present] <= 0, 0.0, low)
    high = np.where(direct[present] >= 1, 1.0, high)
    out["rate"][present], out["low"][present], out["high"][present] = rate, low, high
    out["rows"][present], out["g"][present] = rows, g
    disc, tau = np.full(m, np.nan), np.full(m, np.nan)
    disc[present], tau[present] = diff, mom.tau
    return PopulationEstimates(rate=out["rate"], low=out["low"], high=out["high"],
                               effective_rows=out["rows"], direct=direct, n_eff=n_eff,
                               discrepancy=disc, pvalue=out["pvalue"],
                               direct_weight=out["g"], sigma=sigma, level=level,
                               network_variance=tau)


# ---------------------------------------------------------------- metrics
def _pairs_of(draws, level: float):
    """The groups' draws without NaN, the tail of ``level``, the ordered pairs' mask.

    The mask is None with fewer than two groups.
    """
    draws = np.asarray(draws, dtype=float)
    draws = draws[:, ~np.isnan(draws).any(axis=0)]
    m = draws.shape[1]
    pairs = ~np.eye(m, dtype=bool) if m >= 2 else None
    return draws, (1 - level) / 2, pairs


def _lerp(a, b, t):
    """numpy's interpolation of its quantiles (``numpy.quantile``'s ``_lerp``)."""
    diff = b - a
    out = a + diff * t
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    return out


def _positions(n: int, qs, mirrored=False):
    """Order statistics and weights of :func:`numpy.quantile`'s linear method.

    ``(prev, nxt, gamma)``: the ``q``-quantile of ``n`` values is ``_lerp(x[prev],
    x[nxt], gamma)`` of their sorted values ``x``; ``mirrored``: the positions in ``x``
    of the order statistics of ``-x`` (the ``k``-th smallest of ``-x`` is minus the
    ``(n - 1 - k)``-th smallest of ``x``).
    """
    virtual = (n - 1) * np.asarray(qs, dtype=float)
    prev = np.floor(virtual)
    nxt = prev + 1
    prev[virtual >= n - 1], nxt[virtual >= n - 1] = n - 1, n - 1
    prev[virtual < 0], nxt[virtual < 0] = 0, 0
    prev, nxt = prev.astype(np.intp), nxt.astype(np.intp)
    gamma = (virtual - np.where(virtual >= n - 1, -1, prev))[:, None]
    if mirrored:
        prev, nxt = n - 1 - prev, n - 1 - nxt
    return prev, nxt, gamma


def _read(rows, position, mirrored=False, offset: int = 0) -> np.ndarray:
    """The quantiles at ``position`` (:func:`_positions`) of rows partitioned there.

    ``offset``: ``rows`` are the columns from ``offset`` on of the partitioned rows.
    """
    prev, nxt, gamma = position
    a, b = rows[:, prev - offset].T, rows[:, nxt - offset].T
    if mirrored:
        a, b = -a, -b
    return _lerp(a, b, gamma)


def _kth(*positions) -> np.ndarray:
    """The order statistics to partition at to read every position of ``positions``."""
    return np.unique(np.concatenate([p[i] for p in positions for i in (0, 1)]))


def row_quantiles(rows, qs, mirrored=False) -> np.ndarray:
    """``np.quantile(rows, qs, axis=1)`` (or of ``-rows``), with one partition of the rows.

    The rows (no NaN) are partitioned in place at the order statistics of every ``q``
    of ``qs`` (of its mirror for ``-rows``) and interpolated as :func:`numpy.quantile`'s
    linear method does: the same values to the last digit, with one partition for every
    level (numpy partitions a copy for each call, and at the first and last order
    statistics too).

    Parameters
    ----------
    rows : ndarray of shape (n_rows, n)
        C-contiguous; partitioned in place along its rows.
    qs : array-like of float
        Levels in [0, 1].
    mirrored : bool, default=False
        The quantiles of ``-rows`` instead.

    Returns
    -------
    ndarray of shape (len(qs), n_rows)

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import row_quantiles
    >>> x = np.random.default_rng(0).normal(size=(3, 101))
    >>> bool(np.array_equal(row_quantiles(x.copy(), [0.1, 0.975]),
    ...                     np.quantile(x, [0.1, 0.975], axis=1)))
    True
    >>> bool(np.array_equal(row_quantiles(x.copy(), [0.1], mirrored=True),
    ...                     np.quantile(-x, [0.1], axis=1)))
    True
    """
    position = _positions(rows.shape[1], qs, mirrored)
    rows.partition(_kth(position), axis=1)
    return _read(rows, position, mirrored)


def _tail_quantile(rows, chosen, q: float, near, mirrored=False) -> np.ndarray:
    """The ``q``-quantile (of ``-rows`` when ``mirrored``) of the ``chosen`` rows.

    ``rows`` are partitioned at the order statistics of ``near`` (:func:`_positions`).
    When ``q``'s order statistics are all before ``near``'s last (or all after its
    first), they are among the values there, which hold the smallest (largest) values
    of each row: only those are partitioned again, for the values of
    :func:`row_quantiles` on the full rows (the adjusted tails of :func:`gap_bounds`).
    """
    n = rows.shape[1]
    position = _positions(n, [q], mirrored)
    ends, known = np.concatenate(position[:2]), np.concatenate(near[:2])
    start, stop = 0, n
    if ends.max() <= known.max():  # among the known.max() + 1 smallest
        stop = int(known.max()) + 1
    if ends.min() >= known.min() and n - int(known.min()) < stop:  # the largest
        start, stop = int(known.min()), n
    window = rows[np.flatnonzero(chosen), start:stop]
    window.partition(_kth(position) - start, axis=1)
    return _read(window, position, mirrored, start)


def gap_bounds(draws, level: float) -> tuple[float, float]:
    """Interval of ``max_a theta_a - min_a theta_a`` from draws of the groups' rates.

    ``SP >= theta_i - theta_j`` for every pair, so a lower bound of any pair's
    difference bounds SP from below; taking the largest over a set of pairs needs the
    bounds to hold together over that set: the pairs that can be the extreme one (whose
    upper bound reaches the largest unadjusted lower bound), with Bonferroni's level
    over their number. ``SP <= U`` needs every pair's difference below ``U``: the
    largest of the pairs' upper bounds. Groups with NaN draws are left out. The
    difference of a pair is minus its reverse's, so each unordered pair's differences
    are partitioned once, at the order statistics of both (:func:`row_quantiles`), and
    the adjusted lower bounds within the tails of that partition (:func:`_tail_quantile`).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import gap_bounds
    >>> rng = np.random.default_rng(0)
    >>> low, high = gap_bounds(rng.normal([0.2, 0.5], 0.02, (4000, 2)), 0.95)
    >>> bool(0.22 < low < 0.3 < high < 0.36)
    True
    """
    draws, tail, pairs = _pairs_of(draws, level)
    if pairs is None:
        return np.nan, np.nan
    first, second = np.triu_indices(draws.shape[1], 1)
    by_group = np.ascontiguousarray(draws.T)
    diffs = by_group[first] - by_group[second]  # a row per pair (i, j), i < j
    n = diffs.shape[1]
    lower, upper = _positions(n, [tail]), _positions(n, [1 - tail])
    lower_m, upper_m = _positions(n, [tail], True), _positions(n, [1 - tail], True)
    diffs.partition(_kth(lower, upper, lower_m, upper_m), axis=1)
    low0 = np.concatenate([_read(diffs, lower), _read(diffs, lower_m, True)], axis=1)[0]
    high0 = np.concatenate([_read(diffs, upper), _read(diffs, upper_m, True)], axis=1)[0]
    candidates = high0 >= low0.max()  # (i, j), then (j, i), i < j
    n_pairs = max(1.0, candidates.sum() / 2.0)  # each unordered pair counted once
    n_up = len(first)
    lows = [_tail_quantile(diffs, candidates[:n_up], tail / n_pairs, lower),
            _tail_quantile(diffs, candidates[n_up:], tail / n_pairs, lower_m, True)]
    low = np.concatenate(lows, axis=1).max()
    return max(0.0, float(low)), max(0.0, float(high0.max()))


def ratio_bounds(draws, level: float) -> tuple[float, float]:
    """Interval of ``min_a theta_a / max_a theta_a`` (1 where every rate is 0).

    The mirror of :func:`gap_bounds`: ``DI <= theta_i / theta_j`` for every pair, so the
    upper bound is the smallest upper bound over the pairs that can be the extreme one
    (adjusted for their number), the lower bound the smallest lower bound of all pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import ratio_bounds
    >>> rng = np.random.default_rng(0)
    >>> low, high = ratio_bounds(rng.normal([0.2, 0.5], 0.02, (4000, 2)), 0.95)
    >>> bool(0.3 < low < 0.4 < high < 0.5)
    True
    """
    draws, tail, pairs = _pairs_of(draws, level)
    if pairs is None:
        return np.nan, np.nan
    by_group = np.ascontiguousarray(draws.T)
    num, den = by_group[:, None, :], by_group[None, :, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        # theta_j = 0 < theta_i: the pair cannot be (min, max), its ratio the largest
        # float (an infinite one interpolates to NaN in a quantile); both 0: a ratio of 1
        ratios = np.where(den > 0, num / np.where(den > 0, den, 1.0),
                          np.where(num > 0, np.finfo(float).max, 1.0))[pairs]
    lower, upper = _positions(ratios.shape[1], [tail]), _positions(ratios.shape[1],
                                                                   [1 - tail])
    ratios.partition(_kth(lower, upper), axis=1)
    low0, high0 = _read(ratios, lower)[0], _read(ratios, upper)[0]
    candidates = low0 <= high0.min()
    n_pairs = max(1.0, candidates.sum() / 2.0)
    high = _tail_quantile(ratios, candidates, 1 - tail / n_pairs, upper).min()
    return float(np.clip(low0.min(), 0.0, 1.0)), float(np.clip(high, 0.0, 1.0))


def _gap_or_ratio(rates, metric: str) -> float:
    rates = rates[~np.isnan(rates)]
    if rates.size < 2:
        return np.nan
    if metric == "statistical_parity":
        return float(rates.max() - rates.min())
    return 1.0 if rates.max() <= 0 else float(rates.min() / rates.max())


def _alike(estimate: PopulationEstimates, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the groups whose rows all decide negatively, and positively (present)."""
    if estimate.direct is None:
        none = np.zeros(n_groups, dtype=bool)
        return none, none
    direct = np.asarray(estimate.direct, dtype=float)
    present = ~np.isnan(estimate.rate)
    return present & (direct <= 0), present & (direct >= 1)


def _held_bounds(metric: str, estimate: PopulationEstimates, draws, level: float) -> tuple:
    """:func:`gap_bounds` (``"gap"``) or :func:`ratio_bounds` holding alike groups.

    A group is alike when its rows all decide alike. The interval of such a group keeps
    0 (or 1), a deterministic rate its rows cannot exclude, but its Beta draws are never
    0 (1): a metric's interval from them alone excluded a disparate impact of 0, or a
    gap of 1, that the groups' intervals allow (the Titanic's men embarked at
    Queenstown, all decided negatively: the interval of DI missed its truth, 0, in every
    sample). The interval is that of the draws and of the same draws with those groups
    at 0 (1), their union. Pinning a group at its boundary can only widen a gap and
    narrow a ratio, draw by draw, so the union moves the gap's upper bound and the
    ratio's lower bound only, through the pairs with a pinned group: their differences
    (ratios) are a group's own draws against a constant, whose quantiles are the group's
    (no second pass over every pair).
    """
    low, high = (gap_bounds if metric == "gap" else ratio_bounds)(draws, level)
    draws = np.asarray(draws, dtype=float)
    zero, one = _alike(estimate, draws.shape[1])
    if not (zero.any() or one.any()) or np.isnan(low):
        return low, high
    free = ~(zero | one | np.isnan(draws).any(axis=0))
    tail = (1 - level) / 2
    if metric == "gap":  # pairs (i, pinned at 0): theta_i; (pinned at 1, j): 1 - theta_j
        ends = [1.0] if zero.any() and one.any() else []
        if zero.any() and free.any():
            ends.append(np.quantile(draws[:, free], 1 - tail, axis=0).max())
        if one.any() and free.any():
            ends.append(1.0 - np.quantile(draws[:, free], tail, axis=0).min())
        return low, float(max([high, *ends]))
    # ratios (pinned at 0 / j): 0; (i / pinned at 1): theta_i
    ends = [0.0] if zero.any() and (free.any() or one.any()) else []
    if one.any() and free.any():
        ends.append(np.quantile(draws[:, free], tail, axis=0).min())
    return float(np.clip(min([low, *ends]), 0.0, 1.0)), high


def metric_intervals_from_estimates(estimates: dict, level: float, random_state
                                    ) -> tuple[dict, dict]:
    """Population values and intervals of the metrics from the groups' estimates.

    Parameters
    ----------
    estimates : dict
        Rate name (``"positive_rate"``, and with labels ``"true_positive_rate"``,
        ``"false_positive_rate"``) -> :class:`PopulationEstimates`.
    level : float
        Level of the intervals.
    random_state : numpy Generator
        Of the draws of the groups' rates (:meth:`PopulationEstimates.draws`).

    Returns
    -------
    values : dict
        ``disparate_impact``, ``statistical_parity`` and, with the label rates,
        ``equalized_odds`` (the larger gap of the two) of the population estimates.
    intervals : dict
        Metric -> ``(low, high)``: :func:`ratio_bounds` and :func:`gap_bounds` of the
        draws; equalized odds from the two gaps' bounds (the larger of each).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import (
    ...     PopulationEstimates, metric_intervals_from_estimates)
    >>> est = PopulationEstimates(rate=np.array([0.2, 0.5]), low=None, high=None,
    ...     effective_rows=np.array([2000.0, 2000.0]), direct=None, n_eff=None,
    ...     discrepancy=None, pvalue=None, direct_weight=None, sigma=0.0)
    >>> values, ci = metric_intervals_from_estimates({"positive_rate": est}, 0.95,
    ...                                              np.random.default_rng(0))
    >>> round(values["statistical_parity"], 3), [round(b, 2) for b in ci["statistical_parity"]]
    (0.3, [0.27, 0.33])
    """
    values, intervals = {}, {}
    draws = {k: e.draws(METRIC_DRAWS, random_state) for k, e in estimates.items()}
    positive = estimates["positive_rate"].rate
    values["disparate_impact"] = _gap_or_ratio(positive, "disparate_impact")
    values["statistical_parity"] = _gap_or_ratio(positive, "statistical_parity")
    intervals["disparate_impact"] = _held_bounds("ratio", estimates["positive_rate"],
                                                 draws["positive_rate"], level)
    intervals["statistical_parity"] = _held_bounds("gap", estimates["positive_rate"],
                                                   draws["positive_rate"], level)
    labels = [k for k in ("true_positive_rate", "false_positive_rate") if k in estimates]
    gaps = [(_gap_or_ratio(estimates[k].rate, "statistical_parity"),
             _held_bounds("gap", estimates[k], draws[k], level)) for k in labels]
    gaps = [(v, b) for v, b in gaps if not np.isnan(v)]
    if gaps:
        values["equalized_odds"] = max(v for v, _ in gaps)
        intervals["equalized_odds"] = (max(b[0] for _, b in gaps),
                                       max(b[1] for _, b in gaps))
    return values, intervals


# ---------------------------------------------------------------- the verifier's use
@dataclass
class RateRows:
    """The rows behind one rate of the groups: those its network was learned from.

    Attributes
    ----------
    name : str
        ``"positive_rate"``, ``"true_positive_rate"`` or ``"false_positive_rate"``.
    network : BayesNet or None
        The network of these rows (None: no group has the rate).
    rates : ndarray of shape (n_groups,)
        The network's rate of every group (NaN for a group without these rows).
    mask : ndarray of bool or None
        These rows among all rows (None: all rows).
    codes, decisions, group_of_row : ndarray
        Their state codes, the model's positive decisions and their groups.
    weight, square : ndarray or None
        Their weights and sums of squared weights (:func:`direct_rates`).
    """

    name: str
    network: object
    rates: np.ndarray
    mask: np.ndarray | None
    codes: np.ndarray
    decisions: np.ndarray
    group_of_row: np.ndarray
    weight: np.ndarray | None = None
    square: np.ndarray | None = None


def bdeu_scale(network, codes, weight, equivalent_sample_size) -> list:
    """The network's tables divided by their BDeu estimate on the rows (another prior's).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._population import bdeu_scale
    >>> net = BayesNet([2], [()], [np.array([0.5, 0.5])])
    >>> [s.round(3).tolist() for s in bdeu_scale(net, np.array([[0], [0], [1]]), None,
    ...                                           1.0)]
    [[0.8, 1.333]]
    """
    w = weight
    out = []
    for i, parents in enumerate(network.parents):
        flat, shape = _family_index(codes, network.cardinalities, i, parents)
        counts = np.bincount(flat, weights=w, minlength=math.prod(shape)).reshape(shape)
        table = counts + equivalent_sample_size / counts.size
        out.append(network.cpts[i] / (table / table.sum(axis=-1, keepdims=True)))
    return out


def _unique_rows(table, cards):
    """``np.unique(table, axis=0, return_index=True, return_inverse=True)``, faster.

    Each row's codes are one integer (``ravel_multi_index`` over the cardinalities) when
    their product fits in 63 bits, so that the rows are sorted as integers (the same
    lexicographic order); otherwise numpy's row-wise unique.
    """
    if math.prod(int(c) for c in cards) < 2**62:
        keys = np.ravel_multi_index(tuple(table.T.astype(np.int64)), tuple(cards))
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return table[first], first, inverse
    rows, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    return rows, first, inverse


def distinct_rows(sub: RateRows) -> RateRows:
    """``sub`` as its distinct (codes, decision) rows, their weights and squares summed.

    The distinct rows come sorted, so that rows given one by one (pandas) and rows
    gathered with their sums (dask) get the same replicates, and unit weights those of
    no weights.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._population import RateRows, distinct_rows
    >>> codes = np.array([[1, 0], [0, 1], [1, 0]])
    >>> net = BayesNet([2, 2], [(), ()], [np.full(2, 0.5), np.full(2, 0.5)])
    >>> sub = RateRows("positive_rate", net, np.zeros(2), None, codes,
    ...                np.array([True, False, True]), np.array([1, 0, 1]))
    >>> out = distinct_rows(sub)
    >>> out.codes.tolist(), out.weight.tolist(), out.group_of_row.tolist()
    ([[0, 1], [1, 0]], [1.0, 2.0], [0, 1])
    """
    if len(sub.codes) == 0:
        return sub
    table = np.column_stack([sub.codes, sub.decisions.astype(sub.codes.dtype)])
    rows, first, inverse = _unique_rows(table, list(sub.network.cardinalities) + [2])
    w = np.ones(len(table)) if sub.weight is None else np.asarray(sub.weight, float)
    q = w * w if sub.square is None else np.asarray(sub.square, float)
    inverse = inverse.ravel()
    return RateRows(sub.name, sub.network, sub.rates, sub.mask, rows[:, :-1],
                    rows[:, -1].astype(bool), sub.group_of_row[first],
                    np.bincount(inverse, weights=w, minlength=len(rows)),
                    np.bincount(inverse, weights=q, minlength=len(rows)))


def estimate_population(subsets, solve, *, n_boot: int, random_state, relearn: bool,
                        equivalent_sample_size: float, keep_prior: bool, level: float,
                        max_table_size: int) -> dict:
    """:class:`PopulationEstimates` of every rate of ``subsets`` (:class:`RateRows`).

    Parameters
    ----------
    subsets : list of RateRows
    solve : callable
        ``solve(subset, tables) -> (rates, extra_variance)``: the ``(n_boot, n_groups)``
        rates of the groups under the replicates' tables, and the variance of the
        network's rates the replicates do not see (None when they are exact).
    n_boot : int
        Bootstrap replicates.
    random_state : numpy Generator
    relearn : bool
        Whether the network is learned from the rows (False for a user network: its
        rates do not vary with the rows, and the estimate is Fay and Herriot's with a
        fixed synthetic estimate).
    equivalent_sample_size : float
        Of the BDeu estimate of the replicates' tables.
    keep_prior : bool
        The network was estimated with another prior than BDeu: every replicate keeps
        the ratio of the point network's tables to their BDeu estimate.
    level : float
        Of the intervals.
    max_table_size : int
        Memory budget of the replicates.

    Returns
    -------
    dict
        Rate name -> PopulationEstimates (rates no group has are left out).
    """
    out = {}
    for sub in subsets:
        if sub.network is None or np.isnan(sub.rates).all():
            continue
        sub = distinct_rows(sub)
        m = len(sub.rates)
        direct, n_eff = direct_rates(sub.decisions, sub.group_of_row, m, sub.weight,
                                     sub.square)
        direct = np.where(np.isnan(sub.rates), np.nan, direct)
        scale = (bdeu_scale(sub.network, sub.codes, sub.weight, equivalent_sample_size)
                 if relearn and keep_prior else None)
        tables, boot_direct = replicate_tables(
            sub.network, sub.codes, sub.decisions, sub.group_of_row, m, n_boot=n_boot,
            random_state=random_state, equivalent_sample_size=equivalent_sample_size,
            weight=sub.weight, square=sub.square, scale_tables=scale,
            max_table_size=max_table_size)
        extra = None
        if relearn:
            boot_network, extra = solve(sub, tables)
        else:
            boot_network = np.tile(sub.rates, (n_boot, 1))
        out[sub.name] = population_estimates(sub.rates, direct, n_eff, boot_network,
                                             boot_direct, level=level, extra_variance=extra)
    return out


@dataclass
class Observed:
    """The model's decisions on the rows of an evaluation.

    ``square``: the rows are distinct rows of data (the dask path), the evaluation's
    weights the sums of their weights, and these the sums of their squared weights.
    """

    decisions: np.ndarray
    square: np.ndarray | None = None


#: Columns of ``groups_`` from the population estimate of each rate.
POPULATION_COLUMNS = {"positive_rate": "population_rate",
                      "true_positive_rate": "population_true_positive_rate",
                      "false_positive_rate": "population_false_positive_rate"}


def add_population_columns(groups, estimates: dict) -> None:
    """Add the population estimates to the groups table (in place).

    ``direct_rate``, ``population_rate`` with ``population_ci_low`` /
    ``population_ci_high``, ``model_check_pvalue`` of the positive rate, and with labels
    ``population_true_positive_rate`` and ``population_false_positive_rate``.
    """
    pos = estimates["positive_rate"]
    groups["direct_rate"] = pos.direct
    groups["population_rate"] = pos.rate
    groups["population_ci_low"] = pos.low
    groups["population_ci_high"] = pos.high
    groups["model_check_pvalue"] = pos.pvalue
    for name in ("true_positive_rate", "false_positive_rate"):
        if name in estimates:
            groups[POPULATION_COLUMNS[name]] = estimates[name].rate


def population_table(groups, sensitive, estimates: dict):
    """One row per group and rate: the network's and direct rates, the estimate, the check.

    Columns: the sensitive features, ``rate`` (its name), ``network`` (the verified rate
    under the network) and ``network_se`` (its sampling standard error, from the
    replicates), ``direct`` (the share of the group's rows), ``rows`` (effective rows),
    ``estimate`` with ``ci_low`` / ``ci_high``, ``effective_rows`` (of the interval),
    ``direct_weight``, ``discrepancy`` (network - direct) and ``pvalue`` (the model
    check).
    """
    import pandas as pd

    kept = {name: np.flatnonzero(~np.isnan(est.rate)) for name, est in estimates.items()}
    rows = np.concatenate(list(kept.values()))  # the groups of every rate, in turn
    columns = {s: groups[s].take(rows).reset_index(drop=True) for s in sensitive}
    columns["rate"] = np.repeat(np.array(list(kept), dtype=object),
                                [len(k) for k in kept.values()])
    values = {name: {"network": groups[name].to_numpy(),
                     "network_se": np.sqrt(est.network_variance), "direct": est.direct,
                     "rows": est.n_eff, "estimate": est.rate, "ci_low": est.low,
                     "ci_high": est.high, "effective_rows": est.effective_rows,
                     "direct_weight": est.direct_weight, "discrepancy": est.discrepancy,
                     "pvalue": est.pvalue} for name, est in estimates.items()}
    for column in next(iter(values.values())):
        columns[column] = np.concatenate([np.asarray(values[name][column])[k]
                                          for name, k in kept.items()])
    return pd.DataFrame(columns)  # one frame, built at once


def misfits(estimates: dict, alpha: float = 0.05) -> list[tuple[str, int, float]]:
    """``(rate, group index, p-value)`` of the checks rejected at family-wise ``alpha``.

    Holm's step-down over every group and rate, so that a network that fits gets a
    warning with probability at most ``alpha`` however many groups there are.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._population import PopulationEstimates, misfits
    >>> est = PopulationEstimates(*[None] * 7, pvalue=np.array([0.001, 0.04, 0.5]),
    ...                           direct_weight=None, sigma=0.0)
    >>> misfits({"positive_rate": est})
    [('positive_rate', 0, 0.001)]
    """
    found = [(name, i, float(p)) for name, est in estimates.items()
             for i, p in enumerate(est.pvalue) if not np.isnan(p)]
    found.sort(key=lambda t: t[2])
    out = []
    for k, item in enumerate(found):
        if item[2] > alpha / (len(found) - k):
            break
        out.append(item)
    return out


def reweighted_rates(network, tables, kept: dict, n_groups: int,
                     chunk_entries: int = 4_000_000) -> np.ndarray:
    """Rates under replicate tables by reweighting rows sampled from ``network``.

    The rows a group's rate was sampled from (``kept[g] = (codes, decisions)``) are
    weighted by ``p_b(x) / p(x)``, the ratio of the replicate's probability of the row to
    the network's (same structure, so a product over the families), and the replicate's
    rate is the weighted share of positive decisions (self-normalised importance
    sampling). The replicates share the rows, so the model decides no new row and the
    Monte Carlo error mostly cancels between replicates.

    Parameters
    ----------
    network : BayesNet
        The network the rows were sampled from.
    tables : list of ndarray
        The replicates' tables, ``tables[i]`` of shape ``(n_boot, *network.cpts[i].shape)``.
    kept : dict
        Group index -> ``(codes, decisions)`` of its sampled rows.
    n_groups : int
    chunk_entries : int, default=4_000_000
        Replicates x rows handled at once (memory).

    Returns
    -------
    ndarray of shape (n_boot, n_groups)
        NaN for the groups without kept rows.

    Examples
    --------
    One binary variable with ``p(x = 1) = 0.3``, rows decided positive when ``x = 1``; a
    replicate with ``p(x = 1) = 0.6`` gets a rate near 0.6:

    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._population import reweighted_rates
    >>> net = BayesNet([2], [()], [np.array([0.7, 0.3])])
    >>> codes = (np.random.default_rng(0).random((20000, 1)) < 0.3).astype(int)
    >>> tables = [np.array([[0.4, 0.6]])]
    >>> rates = reweighted_rates(net, tables, {0: (codes, codes[:, 0] == 1)}, 1)
    >>> round(float(rates[0, 0]), 1)
    0.6
    """
    n_boot = len(tables[0])
    out = np.full((n_boot, n_groups), np.nan)
    flat_tables = [t.reshape(n_boot, -1) for t in tables]
    for g, (codes, decisions) in kept.items():
        if len(codes) == 0:
            continue
        index = [_family_index(codes, network.cardinalities, i, p)[0]
                 for i, p in enumerate(network.parents)]
        base = sum(np.log(network.cpts[i].ravel()[idx]) for i, idx in enumerate(index))
        step = max(1, chunk_entries // len(codes))
        dec = np.asarray(decisions, dtype=float)
        for start in range(0, n_boot, step):
            sl = slice(start, min(start + step, n_boot))
            log_w = -base[None, :].repeat(sl.stop - sl.start, axis=0)
            for table, idx in zip(flat_tables, index):
                log_w += np.log(table[sl][:, idx])
            log_w -= log_w.max(axis=1, keepdims=True)
            w = np.exp(log_w)
            out[sl, g] = (w @ dec) / w.sum(axis=1)
    return out

