"""Posterior draws of a network's parameters and credible intervals of verified rates.

Given its structure, the parameters of a discrete Bayesian network learned with a
Dirichlet prior have a posterior that is a product of independent Dirichlet
distributions, one per row of every conditional probability table (CPT)::

    theta_{i,j} | data ~ Dirichlet(N_{i,j,1} + alpha_{i,j,1}, ..., N_{i,j,r} + alpha_{i,j,r})

with ``N`` the (weighted) counts of variable ``i`` in state ``k`` with its parents in
state ``j`` and, for the BDeu prior of equivalent sample size ``ess`` that the verifier
uses, ``alpha = ess / (r q)`` (``r`` states, ``q`` parent states). Its mean is pgmpy's
BDeu estimate, i.e. the network the verifier solves. :func:`posterior_networks` draws
networks from this posterior (one gamma array per CPT, normalised: vectorised over the
draws); every draw is solved exactly by the engine, so the spread of the verified rates
over the draws is the uncertainty that comes from the finite sample
(:func:`rate_intervals`, :func:`credible_intervals`, :func:`metric_draws`).

The draws are on the full states of the network (the structure search may coarsen
states; the CPTs are not coarsened) and condition on the structure: the uncertainty
of the structure search and of the discretization is not included.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from ..s3p import BayesNet, TableTooLargeError, plan, positive_probability_table
from ..s3p._batched import batch_size, run_batched
from ..s3p._network import with_tables
from ._parameters import check_codes, check_ess, check_weights, family_counts

__all__ = [
    "RateIntervals",
    "credible_intervals",
    "dirichlet_draws",
    "networks_from_concentrations",
    "posterior_concentrations",
    "shared_plan_rates",
    "metric_draws",
    "networks_from_tables",
    "posterior_cpts",
    "posterior_networks",
    "rate_intervals",
]

#: Default budget of the draws, in float64 entries (the unit of ``max_table_size``).
DEFAULT_MAX_TABLE_SIZE = 50_000_000


def dirichlet_draws(alpha, n_draws: int, random_state=None) -> np.ndarray:
    """Independent Dirichlet draws of every row (last axis) of ``alpha``.

    Gamma draws normalised per row, computed in log space as
    ``Gamma(alpha + 1) * U ** (1 / alpha)`` so that tiny concentrations (BDeu
    pseudo-counts of 1e-5 in an empty row) do not underflow to a row of zeros.

    Parameters
    ----------
    alpha : array-like of shape (..., r)
        Positive concentrations.
    n_draws : int
        Number of draws.
    random_state : int, numpy Generator or None, default=None
        Seed or generator.

    Returns
    -------
    ndarray of shape (n_draws, ..., r)
        Every row sums to one.

    Examples
    --------
    >>> from skfairverify.verification._posterior import dirichlet_draws
    >>> draws = dirichlet_draws([[1.0, 3.0], [2e-5, 1e-5]], 20000, random_state=0)
    >>> draws.shape, round(float(draws[:, 0, 1].mean()), 2)
    ((20000, 2, 2), 0.75)
    """
    alpha = np.asarray(alpha, dtype=float)
    if alpha.ndim == 0 or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
        raise ValueError("alpha must be an array of positive, finite concentrations.")
    rng = np.random.default_rng(random_state)
    shape = (int(n_draws),) + alpha.shape
    return _normalised_gamma(alpha, shape, rng)


def _normalised_gamma(alpha, shape, rng) -> np.ndarray:
    """Dirichlet rows of concentrations ``alpha`` (broadcast to ``shape``).

    A row with a concentration of at least 1 (a row with data) is drawn as plain gamma
    variates: one of them is a Gamma(>= 1) variate, so the row's sum cannot underflow,
    and a tiny variate that underflows to 0 is its correctly rounded share. The other
    rows (tiny BDeu pseudo-counts only) are drawn in log space (:func:`_log_space_rows`),
    which costs about twice as much.
    """
    alpha = np.broadcast_to(alpha, shape)
    rows = alpha.reshape(-1, shape[-1])
    plain = rows.max(axis=1) >= 1.0
    if plain.all():
        out = rng.standard_gamma(rows)
    else:
        out = np.empty(rows.shape)
        out[plain] = rng.standard_gamma(rows[plain])
        out[~plain] = _log_space_rows(rows[~plain], rng)
    out /= out.sum(axis=-1, keepdims=True)
    return out.reshape(shape)


def _log_space_rows(alpha, rng) -> np.ndarray:
    """Gamma rows of tiny concentrations as ``Gamma(alpha + 1) * U ** (1 / alpha)``.

    Computed in log space and scaled by each row's largest value, so that pseudo-counts
    of 1e-5 do not underflow to a row of zeros; rows sum to a positive value.
    """
    log_g = np.log(rng.standard_gamma(alpha + 1.0))
    log_g += np.log1p(-rng.random(alpha.shape)) / alpha  # log U with U in (0, 1]
    log_g -= log_g.max(axis=-1, keepdims=True)
    return np.exp(log_g, out=log_g)


def _check_n_draws(n_draws) -> int:
    if isinstance(n_draws, (bool, np.bool_)) or not float(n_draws).is_integer():
        raise ValueError(f"n_draws must be an integer; got {n_draws!r}.")
    if int(n_draws) < 2:
        raise ValueError(f"n_draws must be at least 2; got {n_draws!r}.")
    return int(n_draws)


def check_draw_memory(n_draws: int, sizes, max_table_size: int) -> int:
    """Entries needed by ``n_draws`` draws of tables of ``sizes``; refuse beyond the budget.

    Counts the draws three times (per-draw priors, the stacked arrays and the networks'
    validated copies) and three temporaries of the largest table (gamma draws,
    uniforms, normalisation).

    Examples
    --------
    >>> from skfairverify.verification._posterior import check_draw_memory
    >>> check_draw_memory(100, [4, 6], 10_000)
    4800
    """
    total, largest = int(sum(sizes)), int(max(sizes, default=0))
    entries = n_draws * (3 * total + 3 * largest)
    if entries > max_table_size:
        raise TableTooLargeError(
            f"Posterior draws refused: {n_draws:,} draws of the network's tables "
            f"({total:,} entries, largest {largest:,}) need about {entries:,} float64 "
            f"entries ({entries * 8 / 2**30:.2f} GiB), above max_table_size="
            f"{max_table_size:,}. Lower n_draws, use fewer bins or a narrower network "
            "(max_bins, max_indegree), or raise max_table_size."
        )
    return entries


def posterior_cpts(network, codes, *, sample_weight=None, equivalent_sample_size,
                   n_draws, random_state=None, max_table_size=DEFAULT_MAX_TABLE_SIZE,
                   pseudo_counts=None):
    """Draws of every CPT of ``network`` from its Dirichlet posterior (stacked arrays).

    Same parameters as :func:`posterior_networks`.

    Returns
    -------
    list of ndarray
        ``cpts[i]`` has shape ``(n_draws, *network.cpts[i].shape)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._posterior import posterior_cpts
    >>> net = BayesNet([2, 3], [(), (0,)], [np.full(2, .5), np.full((2, 3), 1 / 3)])
    >>> codes = np.array([[0, 1], [1, 2], [1, 2]])
    >>> [c.shape for c in posterior_cpts(net, codes, equivalent_sample_size=1.0,
    ...                                  n_draws=10, random_state=0)]
    [(10, 2), (10, 2, 3)]
    """
    n_draws = _check_n_draws(n_draws)
    alphas = posterior_concentrations(network, codes, sample_weight=sample_weight,
                                      equivalent_sample_size=equivalent_sample_size,
                                      pseudo_counts=pseudo_counts, n_draws=n_draws)
    return _gamma_tables(network, alphas, n_draws, random_state, max_table_size)


def _gamma_tables(network, alphas, n_draws, random_state, max_table_size) -> list:
    """``n_draws`` Dirichlet draws of every table of concentrations ``alphas``."""
    check_draw_memory(n_draws, [c.size for c in network.cpts], max_table_size)
    rng = np.random.default_rng(random_state)
    return [_normalised_gamma(alpha, (n_draws,) + cpt.shape, rng)
            for alpha, cpt in zip(alphas, network.cpts)]


def posterior_concentrations(network, codes, *, sample_weight=None, equivalent_sample_size,
                             pseudo_counts=None, n_draws=None) -> list:
    """Dirichlet concentrations of the posterior of every CPT: counts plus the prior.

    Parameters
    ----------
    network : BayesNet
        The fitted network (its structure and cardinalities).
    codes : array-like of shape (n_samples, n_variables)
        State codes of the rows it was learned from.
    sample_weight : array-like of shape (n_samples,), default=None
    equivalent_sample_size : float
        Of the BDeu prior ``ess / (r q)`` (unused with ``pseudo_counts``).
    pseudo_counts : list of ndarray, default=None
        The prior of every table instead of BDeu (shapes of the tables, or with a
        leading axis of ``n_draws``).
    n_draws : int, default=None
        The draws a leading axis of ``pseudo_counts`` must have.

    Returns
    -------
    list of ndarray
        One array per table, of its shape (or with the leading draws axis of its
        pseudo-counts); every entry positive. The draws of :func:`posterior_networks`
        are Dirichlet draws of its rows (:func:`networks_from_concentrations`).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._posterior import posterior_concentrations
    >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.full((2, 2), .5)])
    >>> codes = np.array([[0, 0], [0, 1], [1, 1]])
    >>> [a.tolist() for a in posterior_concentrations(net, codes, equivalent_sample_size=2.0)]
    [[3.0, 2.0], [[1.5, 1.5], [0.5, 1.5]]]
    """
    if not isinstance(network, BayesNet):
        raise TypeError(f"network must be a BayesNet; got {type(network).__name__}.")
    cards = network.cardinalities
    codes = check_codes(codes, cards)
    weight = check_weights(sample_weight, len(codes))
    ess = check_ess(equivalent_sample_size)
    alphas = _check_pseudo_counts(pseudo_counts, network, n_draws)
    out = []
    for i, parents in enumerate(network.parents):
        counts = family_counts(codes, cards, i, parents, weight)
        out.append(counts + (ess / counts.size if alphas is None else alphas[i]))
    return out


def _check_pseudo_counts(pseudo_counts, network, n_draws):
    """Pseudo-count tables of the network's shapes (or with a leading draw axis)."""
    if pseudo_counts is None:
        return None
    if len(pseudo_counts) != network.n_variables:
        raise ValueError(
            f"pseudo_counts has {len(pseudo_counts)} tables but the network has "
            f"{network.n_variables} variables."
        )
    out = []
    for name, cpt, alpha in zip(network.names, network.cpts, pseudo_counts):
        alpha = np.asarray(alpha, dtype=float)
        if alpha.shape not in (cpt.shape, (n_draws,) + cpt.shape):
            raise ValueError(
                f"pseudo_counts of {name!r} has shape {alpha.shape}, expected {cpt.shape} "
                f"or {(n_draws,) + cpt.shape} (one table per draw)."
            )
        if not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
            raise ValueError(f"pseudo_counts of {name!r} must be positive and finite.")
        out.append(alpha)
    return out


def posterior_networks(network, codes, *, sample_weight=None, equivalent_sample_size,
                       n_draws, random_state=None, max_table_size=DEFAULT_MAX_TABLE_SIZE,
                       pseudo_counts=None):
    """Networks drawn from the posterior of ``network``'s parameters given its structure.

    Every row of every CPT is drawn from ``Dirichlet(counts + ess / (r q))``, the BDeu
    posterior of the rows ``codes`` (with ``sample_weight``) that the network was
    learned from. The mean of the draws is the BDeu estimate (the network the verifier
    learns with the same ``equivalent_sample_size``); ``network.cpts`` only provide
    the structure, states and names.

    Parameters
    ----------
    network : BayesNet
        The fitted network (its structure ``parents`` and cardinalities are used).
    codes : array-like of shape (n_samples, n_variables)
        State codes of the rows it was learned from (full states, not the coarse ones
        of the structure search).
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of every row in the counts.
    equivalent_sample_size : float
        Equivalent sample size of the BDeu prior (the verifier's
        ``EQUIVALENT_SAMPLE_SIZE``).
    n_draws : int
        Number of networks (at least 2; a few hundred for 95% intervals).
    random_state : int, numpy Generator or None, default=None
        Seed or generator.
    max_table_size : int, default=50_000_000
        Budget in float64 entries, checked before drawing: the networks hold
        ``n_draws * sum of CPT sizes``; the draws are made in chunks, each of ``c`` draws
        needing ``c * (3 * sum of CPT sizes + 3 * largest CPT size)`` more, with ``c`` as
        large as the rest of the budget allows (at least 2).
    pseudo_counts : list of ndarray, default=None
        The Dirichlet prior of every table (shapes of ``network.cpts``, or with a
        leading axis of ``n_draws``: one prior per draw) instead of BDeu, e.g. the
        hierarchical prior of
        :func:`~skfairverify.verification._parameters.prior_pseudo_counts` (with
        ``n_draws``); ``equivalent_sample_size`` is then unused (still validated).

    Returns
    -------
    list of BayesNet
        ``n_draws`` networks with the structure, names and states of ``network``.

    Raises
    ------
    TableTooLargeError
        The draws would exceed ``max_table_size``; the message names the size.
    ValueError
        Codes outside the network's states, bad weights, ``n_draws < 2`` or a
        non-positive ``equivalent_sample_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._posterior import posterior_networks
    >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.full((2, 2), .5)])
    >>> codes = np.array([[0, 0]] * 30 + [[1, 1]] * 10)
    >>> draws = posterior_networks(net, codes, equivalent_sample_size=1.0,
    ...                            n_draws=2000, random_state=0)
    >>> round(float(np.mean([d.cpts[0][0] for d in draws])), 2)  # (30 + .5) / 41
    0.74
    """
    n_draws = _check_n_draws(n_draws)
    alphas = posterior_concentrations(network, codes, sample_weight=sample_weight,
                                      equivalent_sample_size=equivalent_sample_size,
                                      pseudo_counts=pseudo_counts, n_draws=n_draws)
    return networks_from_concentrations(network, alphas, n_draws=n_draws,
                                        random_state=random_state,
                                        max_table_size=max_table_size)


def networks_from_concentrations(network, concentrations, *, n_draws, random_state=None,
                                 max_table_size=DEFAULT_MAX_TABLE_SIZE) -> list:
    """Networks of ``network``'s structure whose CPT rows are Dirichlet draws.

    The draws of :func:`posterior_networks` from the concentrations of
    :func:`posterior_concentrations` (the same draws for the same ``random_state``), so a
    fitted verifier keeps the concentrations (the size of one network, but for tables
    with a leading draws axis: the hierarchical prior's) and a random state instead of
    its draws.

    Parameters
    ----------
    network : BayesNet
        Structure, states and names of the draws.
    concentrations : list of ndarray
        Of :func:`posterior_concentrations`.
    n_draws : int
        Number of networks.
    random_state : int, numpy Generator or None, default=None
    max_table_size : int, default=50_000_000
        Budget of the draws (see :func:`posterior_networks`).

    Returns
    -------
    list of BayesNet

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._posterior import (
    ...     networks_from_concentrations, posterior_concentrations, posterior_networks)
    >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.full((2, 2), .5)])
    >>> codes = np.array([[0, 0], [0, 1], [1, 1]])
    >>> alphas = posterior_concentrations(net, codes, equivalent_sample_size=1.0)
    >>> a = networks_from_concentrations(net, alphas, n_draws=3, random_state=0)
    >>> b = posterior_networks(net, codes, equivalent_sample_size=1.0, n_draws=3,
    ...                        random_state=0)
    >>> all(np.array_equal(x.cpts[1], y.cpts[1]) for x, y in zip(a, b))
    True
    """
    n_draws = _check_n_draws(n_draws)
    sizes = [c.size for c in network.cpts]
    total = int(sum(sizes))
    # The networks themselves hold n_draws * total entries; the stacked draws (three
    # copies each) are made a chunk at a time, so the peak is the networks plus one
    # chunk, not three times all the draws.
    per_draw = 3 * total + 3 * max(sizes, default=0)
    chunk = min(n_draws, (max_table_size - n_draws * total) // max(1, per_draw))
    if chunk < 2:
        check_draw_memory(n_draws, sizes, max_table_size)  # raises, naming the sizes
    rng = np.random.default_rng(random_state)
    out = []
    starts = list(range(0, n_draws, chunk))
    if len(starts) > 1 and n_draws - starts[-1] < 2:  # no chunk of a single draw
        starts.pop()
    for start, stop in zip(starts, starts[1:] + [n_draws]):
        part = [a[start:stop] if a.ndim == c.ndim + 1 else a
                for a, c in zip(concentrations, network.cpts)]
        out += networks_from_tables(network, _gamma_tables(network, part, stop - start, rng,
                                                      max_table_size))
    return out


@dataclass(eq=False)
class _DrawChunk:
    """Stacked tables of a chunk of posterior draws and the rates solved on them."""

    cpts: list
    solved: dict = field(default_factory=dict)  # rates function's key -> (D, n_groups)


#: The chunk and position of every drawn network, so that the rates of a whole chunk
#: are solved in one batched engine run (:func:`shared_plan_rates`).
_CHUNK_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: Private switch: False solves every draw on its own (benchmarks, tests).
_BATCHED = True


def networks_from_tables(network, stacked) -> list:
    """One network per draw of ``stacked`` (views of its tables), registered with its chunk.

    ``stacked[i]`` has shape ``(n_draws, *network.cpts[i].shape)``. The tables must be
    valid by construction (non-negative, rows normalised: posterior or bootstrap draws
    of the network's shapes); they are not validated again. The rates of the networks
    are solved together, a chunk at a time (:func:`shared_plan_rates`).
    """
    chunk = _DrawChunk(stacked)
    nets = []
    for d in range(len(stacked[0])):
        net = with_tables(network, [c[d] for c in stacked])
        _CHUNK_OF[net] = (chunk, d)
        nets.append(net)
    return nets


def shared_plan_rates(network, weights, threshold, sensitive_idx, group_codes, *,
                      max_table_size=DEFAULT_MAX_TABLE_SIZE):
    """Exact group rates for networks of ``network``'s structure, planned once.

    The draws of :func:`posterior_networks` share the structure, the states and the
    rule, so the engine's plan (engine and processing order, which follow from those
    alone) is computed once on ``network`` and reused. The rates of a drawn network
    are solved for its whole chunk of draws at its first call, in batched engine runs
    (:mod:`skfairverify.s3p._batched`: a leading draws axis in every table, so the
    engine's per-variable work is paid once per batch; each batch holds as many draws
    as three times the plan's peak table per draw allows within ``max_table_size``);
    the other draws of the chunk are then looked up. Any other network is solved on
    its own. Each draw's rates are those of
    :func:`~skfairverify.s3p.positive_probability_table` on its network (to about
    ``1e-11``: the batched elimination folds the negligible tails of its score axes,
    as the frontier engine does).

    Parameters
    ----------
    network : BayesNet
        The point-estimate network (its structure and states).
    weights : list of ndarray of int
        Integer weight of every state of every variable.
    threshold : int
        The rule is ``sum_i weights[i][X_i] >= threshold``.
    sensitive_idx : list of int
        Indices of the sensitive variables (kept in the engine's table).
    group_codes : array-like of shape (n_groups, n_sensitive)
        State of each sensitive variable for every group.
    max_table_size : int, default=50_000_000
        The engine's table budget (checked by the plan).

    Returns
    -------
    callable
        ``rates_of(net) -> ndarray of shape (n_groups,)``, for :func:`rate_intervals`.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._posterior import shared_plan_rates
    >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.array([[.9, .1], [.3, .7]])])
    >>> rates_of = shared_plan_rates(net, [np.array([0, 0]), np.array([0, 1])], 1, [0],
    ...                              [[0], [1]])
    >>> rates_of(net).round(2).tolist()
    [0.1, 0.7]
    """
    keep = [int(i) for i in sensitive_idx]
    # Planning here refuses a problem beyond the budget before any draw is solved, and
    # leaves the plan in s3p's plan cache (keyed by the structure, never the CPTs), so
    # every draw below reuses it: one engine run per draw, no new search of orders.
    planned = plan(weights, threshold, network, evidence_vars=keep,
                   max_table_size=max_table_size)
    index = tuple(np.asarray(group_codes, dtype=int).T)
    key = object()  # this rule's results in the chunks' caches

    def rates_of(net):
        found = _CHUNK_OF.get(net) if _BATCHED else None
        if found is None:
            table = positive_probability_table(weights, threshold, net, keep,
                                               max_table_size=max_table_size)
            return np.asarray(table)[index]
        chunk, d = found
        if key not in chunk.solved:
            chunk.solved[key] = _chunk_rates(planned, chunk.cpts, index, max_table_size)
        return chunk.solved[key][d]

    return rates_of


def _chunk_rates(planned, cpts, index, max_table_size) -> np.ndarray:
    """Group rates of every draw of ``cpts``: batched engine runs of ``planned``.

    Each run holds ``batch_size`` draws (``ARRAYS_PER_PEAK`` times the plan's peak
    table per draw within ``max_table_size``); the probabilities are those of
    :func:`~skfairverify.s3p.positive_probability_table` on every draw's network.
    """
    n_draws = len(cpts[0])
    size = batch_size(planned, n_draws, max_table_size)
    out = []
    for start in range(0, n_draws, size):
        pos, total = run_batched(planned, [c[start:start + size] for c in cpts])
        with np.errstate(invalid="ignore", divide="ignore"):
            probs = np.where(total > 0, pos / np.where(total > 0, total, 1.0), np.nan)
        out.append(np.clip(probs, 0.0, 1.0)[(slice(None),) + index])
    return np.concatenate(out)


def _check_level(level) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95; got {level!r}.")
    return level


def credible_intervals(draws_of_values, level=0.95):
    """Equal-tailed percentile intervals of every column of the draws.

    Parameters
    ----------
    draws_of_values : array-like of shape (n_draws,) or (n_draws, n_columns)
        One row per posterior draw.
    level : float, default=0.95
        Posterior probability of the interval; the bounds are the
        ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the draws in
        Weibull's definition (the order statistics at ``q * (n_draws + 1)``,
        interpolated): the interval between them holds a fraction ``level`` of the
        posterior on average (with the default linear interpolation, 100 draws give
        93%).

    Returns
    -------
    low, high : ndarray of shape (n_columns,) or float
        Lower and upper bounds.

    Raises
    ------
    ValueError
        Non-finite values, fewer draws than the level needs (at least
        ``2 / (1 - level)``: one draw beyond each bound), or a level outside (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._posterior import credible_intervals
    >>> low, high = credible_intervals(np.arange(101.0), 0.9)
    >>> round(low, 6), round(high, 6)
    (4.1, 95.9)
    """
    level = _check_level(level)
    values = np.asarray(draws_of_values, dtype=float)
    if values.ndim not in (1, 2):
        raise ValueError(f"draws_of_values must be 1- or 2-dimensional; got {values.shape}.")
    if not np.all(np.isfinite(values)):
        raise ValueError("draws_of_values contain NaN or infinite values.")
    needed = int(np.ceil(2.0 / (1.0 - level)))
    if len(values) < needed:
        raise ValueError(
            f"{len(values)} draws are too few for {level:.0%} intervals; use at least "
            f"{needed} (n_draws)."
        )
    low, high = np.quantile(values, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0,
                            method="weibull")
    if values.ndim == 1:
        return float(low), float(high)
    return low, high


@dataclass(frozen=True)
class RateIntervals:
    """Credible intervals of group rates from posterior draws.

    Attributes
    ----------
    draws : ndarray of shape (n_draws, n_groups)
        Rate of every group under every drawn network.
    ci_low, ci_high : ndarray of shape (n_groups,)
        Equal-tailed bounds at ``level``.
    level : float
        Posterior probability of every interval.
    """

    draws: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    level: float


def rate_intervals(rates_of, draws, level=0.95) -> RateIntervals:
    """Credible intervals of the rates ``rates_of(network)`` over the drawn networks.

    Parameters
    ----------
    rates_of : callable
        ``rates_of(network) -> ndarray of shape (n_groups,)``, e.g. the verifier's
        exact group rates of its integer rule.
    draws : list of BayesNet
        Networks of :func:`posterior_networks`.
    level : float, default=0.95
        Posterior probability of the intervals.

    Returns
    -------
    RateIntervals
        Per-draw rates (for the metrics' intervals from the same draws, see
        :func:`metric_draws`) and per-group bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._posterior import posterior_networks, rate_intervals
    >>> net = BayesNet([2, 2], [(), (0,)], [np.full(2, .5), np.full((2, 2), .5)])
    >>> codes = np.array([[0, 0]] * 20 + [[0, 1]] * 20 + [[1, 1]] * 5)
    >>> draws = posterior_networks(net, codes, equivalent_sample_size=1.0, n_draws=400,
    ...                            random_state=0)
    >>> out = rate_intervals(lambda n: n.cpts[1][:, 1], draws)
    >>> out.draws.shape, bool(out.ci_low[0] < 0.5 < out.ci_high[0])
    ((400, 2), True)
    """
    level = _check_level(level)
    values = np.array([np.asarray(rates_of(net), dtype=float).ravel() for net in draws])
    if values.ndim != 2:
        raise ValueError("rates_of must return the same number of rates for every network.")
    low, high = credible_intervals(values, level)
    return RateIntervals(values, low, high, level)


def metric_draws(rate_draws) -> dict:
    """Disparate impact and statistical parity of every draw of the group rates.

    Parameters
    ----------
    rate_draws : array-like of shape (n_draws, n_groups)
        Group rates per draw (``RateIntervals.draws``); at least two groups.

    Returns
    -------
    dict of ndarray of shape (n_draws,)
        ``"disparate_impact"`` (min / max; 1 where every rate is 0) and
        ``"statistical_parity"`` (max - min). Equalized odds per draw is
        ``np.maximum`` of the statistical parity of the TPR and of the FPR draws.

    Examples
    --------
    >>> from skfairverify.verification._posterior import metric_draws
    >>> out = metric_draws([[0.2, 0.4], [0.0, 0.0]])
    >>> out["disparate_impact"].tolist(), out["statistical_parity"].tolist()
    ([0.5, 1.0], [0.2, 0.0])
    """
    rates = np.asarray(rate_draws, dtype=float)
    if rates.ndim != 2 or rates.shape[1] < 2:
        raise ValueError(
            f"rate_draws must have shape (n_draws, n_groups >= 2); got {rates.shape}."
        )
    if not np.all(np.isfinite(rates)):
        raise ValueError("rate_draws contain NaN or infinite values.")
    top, bottom = rates.max(axis=1), rates.min(axis=1)
    safe = np.where(top > 0, top, 1.0)
    return {
        "disparate_impact": np.where(top > 0, bottom / safe, 1.0),
        "statistical_parity": top - bottom,
    }
