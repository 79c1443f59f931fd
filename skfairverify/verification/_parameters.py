"""Conditional probability tables from state codes, with small groups borrowing strength.

:func:`estimate_cpts` estimates the tables of a Bayesian network of given structure
from (weighted) state codes:

* ``prior="bdeu"``: the posterior mean under the BDeu prior of equivalent sample size
  ``ess``, i.e. ``(N_jk + ess / (r q)) / (N_j + ess / q)`` for a variable of ``r``
  states whose parents have ``q`` joint states: exactly what pgmpy's
  ``DiscreteBayesianEstimator(prior_type="BDeu")`` returns (the verifier's estimate);
* ``prior="hierarchical"``: the distribution of a feature given its sensitive parents
  ``S`` and other parents ``O`` has a Dirichlet prior centred on the pooled
  distribution given ``O`` only, which itself has a Dirichlet prior centred on the
  feature's (BDeu-smoothed) marginal::

      r_k       = (c_k + ess / K) / (C + ess)                     marginal
      p_{o,k}   = (m_{o,k} + t r_k) / (M_o + t)                   given O
      th_{s,o,k} = (n_{s,o,k} + u p_{o,k}) / (N_{s,o} + u)       given S, O

  where ``n``, ``m``, ``c`` are the (weighted) counts given ``(S, O)``, given ``O`` and
  overall. A small group (small ``N_{s,o}``) is pulled towards the pooled
  distribution, a large one keeps its own. The strengths ``t`` and ``u`` (in rows) are
  chosen on a grid by exact leave-one-out log-likelihood (closed form: removing a row
  removes its weight from the three count tables), ``t`` first, then ``u`` given ``t``.

:func:`distribution_max_bins` bounds the number of quantile bins by the size of the
smallest sensitive group, so that the group-conditional distributions the network
estimates have rows enough per bin.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "STRENGTH_GRID",
    "distribution_max_bins",
    "estimate_cpts",
    "family_counts",
    "prior_pseudo_counts",
]

#: Candidate prior strengths (pseudo-rows) of the hierarchical prior.
STRENGTH_GRID = tuple(float(s) for s in np.geomspace(0.05, 5000.0, 26))


def check_codes(codes, cardinalities) -> np.ndarray:
    """Return ``codes`` as an int64 matrix after checking its shape and state range."""
    codes = np.asarray(codes)
    cards = [int(c) for c in cardinalities]
    if codes.ndim != 2 or codes.shape[1] != len(cards):
        raise ValueError(
            f"codes must be a matrix with one column per variable ({len(cards)}); got "
            f"shape {codes.shape}."
        )
    if codes.size and not np.issubdtype(codes.dtype, np.integer):
        if not np.all(np.isfinite(codes)) or np.any(codes != np.round(codes)):
            raise ValueError("codes must hold integer state indices.")
    codes = codes.astype(np.int64)
    for j, card in enumerate(cards):
        col = codes[:, j]
        if col.size and (col.min() < 0 or col.max() >= card):
            raise ValueError(
                f"Column {j} of codes holds states outside 0..{card - 1} "
                f"(found {int(col.min())}..{int(col.max())}); the network has {card} states "
                "for this variable."
            )
    return codes


def check_weights(sample_weight, n_rows: int):
    """Return ``sample_weight`` as float64 (None stays None) or raise a ValueError."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=float)
    if w.shape != (n_rows,):
        raise ValueError(
            f"sample_weight must have one entry per row of codes ({n_rows}); got shape "
            f"{w.shape}."
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    return w


def check_ess(equivalent_sample_size) -> float:
    """Return the equivalent sample size as a positive float or raise a ValueError."""
    ess = float(equivalent_sample_size)
    if not np.isfinite(ess) or ess <= 0:
        raise ValueError(
            f"equivalent_sample_size must be positive and finite (the Dirichlet posterior "
            f"needs positive pseudo-counts); got {equivalent_sample_size!r}."
        )
    return ess


def family_counts(codes, cardinalities, variable, parents, sample_weight=None) -> np.ndarray:
    """(Weighted) counts of ``variable`` jointly with its ``parents``.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_variables)
        State codes (checked by the caller).
    cardinalities : list of int
        Number of states of each variable.
    variable : int
        Index of the child variable.
    parents : tuple of int
        Indices of its parents.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weight of every row (1 when None).

    Returns
    -------
    ndarray of shape ``(*[cardinalities[p] for p in parents], cardinalities[variable])``
        ``counts[pa..., k]`` = summed weight of the rows in that cell.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._parameters import family_counts
    >>> codes = np.array([[0, 1], [0, 1], [1, 0]])
    >>> family_counts(codes, [2, 2], 1, (0,)).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    """
    family = list(parents) + [variable]
    shape = tuple(int(cardinalities[v]) for v in family)
    flat = np.ravel_multi_index(tuple(codes[:, v] for v in family), shape)
    counts = np.bincount(flat, weights=sample_weight, minlength=math.prod(shape))
    return counts.astype(float).reshape(shape)


def _bdeu(counts: np.ndarray, ess: float) -> np.ndarray:
    """BDeu pseudo-counts ``ess / size`` in every cell of the table."""
    return np.full(counts.shape, ess / counts.size)


def _argmax_loo(pred_of, grid) -> float:
    """Grid value maximising ``sum mult * log pred`` (ties: the smallest strength)."""
    scores = [pred_of(s) for s in grid]
    return float(grid[int(np.argmax(scores))])


def _loo_score(mult, numerator, denominator):
    """``sum mult * log(numerator / denominator)``; -inf where a prediction is 0."""
    with np.errstate(divide="ignore"):
        return float(np.sum(mult * (np.log(numerator) - np.log(denominator))))


def _hierarchical(counts: np.ndarray, n_sens: int, ess: float, rows, grid):
    """Hierarchical estimate of one table with the ``n_sens`` leading sensitive axes.

    ``rows`` = (flat cell index, removed weight, multiplicity) of the distinct rows, for
    the exact leave-one-out predictions. Returns ``(pseudo_counts, t, u)``: the
    table's Dirichlet prior is ``pseudo_counts`` (``u p`` broadcast over the sensitive
    axes, or ``t r`` without sensitive axes).
    """
    K = counts.shape[-1]
    s_axes = tuple(range(n_sens))
    m = counts.sum(axis=s_axes)  # given O: shape (*O, K)
    c = counts.reshape(-1, K).sum(axis=0)
    r = (c + ess / K) / (c.sum() + ess)
    cell, w, mult = rows
    idx = np.unravel_index(cell, counts.shape)
    k = idx[-1]
    o_cell = idx[n_sens:]
    n_i, m_i, c_i = counts[idx], m[o_cell], c[k]
    N_i = counts.sum(axis=-1)[idx[:-1]]
    M_i = m.sum(axis=-1)[o_cell[:-1]]
    r_loo = (c_i - w + ess / K) / (c.sum() - w + ess)
    t = u = np.inf
    if m.ndim > 1:  # other parents: choose t on the predictions given O
        t = _argmax_loo(lambda s: _loo_score(mult, m_i - w + s * r_loo, M_i - w + s), grid)
        p = (m + t * r) / (m.sum(axis=-1, keepdims=True) + t)
        p_loo = (m_i - w + t * r_loo) / (M_i - w + t)
    else:
        p, p_loo = np.broadcast_to(r, m.shape), r_loo
    if n_sens == 0:
        return np.broadcast_to(t * r, counts.shape), t, u
    u = _argmax_loo(lambda s: _loo_score(mult, n_i - w + s * p_loo, N_i - w + s), grid)
    return np.broadcast_to(u * p, counts.shape), t, u


def _distinct_rows(codes, cardinalities, family, sample_weight):
    """Distinct (cell, weight) pairs of the rows and their multiplicities."""
    shape = tuple(int(cardinalities[v]) for v in family)
    flat = np.ravel_multi_index(tuple(codes[:, v] for v in family), shape)
    w = np.ones(len(flat)) if sample_weight is None else sample_weight
    keep = w > 0
    pairs, mult = np.unique(np.column_stack([flat[keep].astype(float), w[keep]]), axis=0,
                            return_counts=True)
    return pairs[:, 0].astype(np.int64), pairs[:, 1], mult


def _prior_one(codes, cards, v, parents, sensitive, ess, sample_weight, prior, grid):
    """Counts and Dirichlet pseudo-counts of variable ``v`` (axes: parents, then ``v``)."""
    parents = tuple(int(p) for p in parents)
    if prior == "bdeu" or not parents:  # no parent: the marginal, BDeu-smoothed
        counts = family_counts(codes, cards, v, parents, sample_weight)
        return counts, _bdeu(counts, ess), None
    sens = [p for p in parents if p in sensitive]
    order = sens + [p for p in parents if p not in sensitive]
    counts = family_counts(codes, cards, v, tuple(order), sample_weight)
    rows = _distinct_rows(codes, cards, order + [v], sample_weight)
    alpha, t, u = _hierarchical(counts, len(sens), ess, rows, grid)
    # Back to the order of ``parents`` (then v).
    perm = [order.index(p) for p in parents] + [len(parents)]
    return np.transpose(counts, perm), np.ascontiguousarray(np.transpose(alpha, perm)), (t, u)


def prior_pseudo_counts(codes, cardinalities, parents, sensitive_idx, *, sample_weight=None,
                        equivalent_sample_size=1.0, prior="hierarchical", strengths=None):
    """Dirichlet pseudo-counts of every table under the chosen prior (see estimate_cpts).

    The posterior of row ``j`` of table ``i`` is ``Dirichlet(counts + alpha[i][j])``:
    :func:`estimate_cpts` returns its mean, and
    :func:`~skfairverify.verification._posterior.posterior_networks` draws from it when
    given ``pseudo_counts=alpha`` (the hierarchical strengths are fixed at their
    leave-one-out values: empirical Bayes).

    Parameters
    ----------
    codes, cardinalities, parents, sensitive_idx, sample_weight, equivalent_sample_size, \
prior, strengths
        As in :func:`estimate_cpts`.

    Returns
    -------
    alpha : list of ndarray
        ``alpha[i]`` has the shape of table ``i``; every entry is positive.
    strengths : list of tuple or None
        The chosen ``(t, u)`` per variable (``inf`` where a level is absent, None for
        BDeu tables).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._parameters import prior_pseudo_counts
    >>> codes = np.array([[0, 1], [0, 1], [1, 0]])
    >>> alpha, _ = prior_pseudo_counts(codes, [2, 2], [(), (0,)], [0], prior="bdeu")
    >>> alpha[1].tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    out = _priors(codes, cardinalities, parents, sensitive_idx, sample_weight,
                  equivalent_sample_size, prior, strengths)
    return [alpha for _, alpha, _ in out], [s for _, _, s in out]


def _priors(codes, cardinalities, parents, sensitive_idx, sample_weight,
            equivalent_sample_size, prior, strengths):
    """Validate the input; ``(counts, alpha, strengths)`` of every table."""
    if prior not in ("hierarchical", "bdeu"):
        raise ValueError(f"prior must be 'hierarchical' or 'bdeu'; got {prior!r}.")
    cards = [int(c) for c in cardinalities]
    codes = check_codes(codes, cards)
    if len(parents) != len(cards):
        raise ValueError(
            f"parents has {len(parents)} entries but there are {len(cards)} variables."
        )
    weight = check_weights(sample_weight, len(codes))
    ess = check_ess(equivalent_sample_size)
    grid = np.asarray(STRENGTH_GRID if strengths is None else strengths, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError("strengths must be a non-empty list of positive, finite numbers.")
    sensitive = {int(a) for a in sensitive_idx}
    return [_prior_one(codes, cards, v, parents[v], sensitive, ess, weight, prior, grid)
            for v in range(len(cards))]


def estimate_cpts(codes, cardinalities, parents, sensitive_idx, *, sample_weight=None,
                  equivalent_sample_size=1.0, prior="hierarchical", strengths=None,
                  return_strengths=False):
    """Conditional probability tables of a network of known structure.

    Parameters
    ----------
    codes : array-like of shape (n_samples, n_variables)
        State codes: column ``j`` holds the state (``0 .. cardinalities[j] - 1``) of
        variable ``j``.
    cardinalities : list of int
        Number of states of each variable.
    parents : list of tuple of int
        Parents of each variable (the network's structure).
    sensitive_idx : list of int
        Indices of the sensitive variables: the parents whose groups borrow strength.
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of every row in the counts (1 when None).
    equivalent_sample_size : float, default=1.0
        Equivalent sample size of the BDeu prior (``prior="bdeu"``) or of the
        marginal at the top of the hierarchy (``prior="hierarchical"``).
    prior : {"hierarchical", "bdeu"}, default="hierarchical"
        ``"bdeu"``: pgmpy's BDeu posterior mean (the verifier's estimate today).
        ``"hierarchical"``: the distribution given ``(sensitive parents, other
        parents)`` shrunk towards the pooled one given the other parents, itself shrunk
        towards the marginal, with strengths chosen by leave-one-out likelihood (see
        the module docstring). Variables without sensitive parents are only shrunk
        towards their marginal.
    strengths : sequence of float, default=None
        Grid of prior strengths (pseudo-rows); ``STRENGTH_GRID`` (0.05 to 5,000,
        geometric) when None.
    return_strengths : bool, default=False
        Also return, per variable, the chosen ``(t, u)`` (``inf`` where a level is
        absent, None for BDeu tables).

    Returns
    -------
    cpts : list of ndarray
        ``cpts[i]`` has shape ``(*[cardinalities[p] for p in parents[i]],
        cardinalities[i])``, as :class:`~skfairverify.s3p.BayesNet` takes.
    strengths : list of tuple or None
        Only with ``return_strengths=True``.

    Examples
    --------
    A group of 3 rows borrows from the pooled distribution of the other 200:

    >>> import numpy as np
    >>> from skfairverify.verification._parameters import estimate_cpts
    >>> rng = np.random.default_rng(0)
    >>> a = np.r_[np.zeros(200, int), np.ones(3, int)]
    >>> x = rng.integers(0, 4, size=203)
    >>> codes = np.column_stack([a, x])
    >>> cpts = estimate_cpts(codes, [2, 4], [(), (0,)], [0])
    >>> bdeu = estimate_cpts(codes, [2, 4], [(), (0,)], [0], prior="bdeu")
    >>> bool(np.ptp(cpts[1][1]) < np.ptp(bdeu[1][1]))  # the small group is smoother
    True
    """
    out = _priors(codes, cardinalities, parents, sensitive_idx, sample_weight,
                  equivalent_sample_size, prior, strengths)
    cpts = [(n + a) / (n + a).sum(axis=-1, keepdims=True) for n, a, _ in out]
    return (cpts, [s for _, _, s in out]) if return_strengths else cpts


def distribution_max_bins(sens_codes, sample_weight=None, *, rows_per_bin=4.0, smallest=5):
    """Largest number of quantile bins the smallest sensitive group can estimate.

    The verifier chooses the number of bins by the agreement of the integer rule with
    the classifier; the finer, the better the agreement but the fewer rows of a small
    group per bin. This rule caps the bins at ``n_min / rows_per_bin`` where ``n_min``
    is the (Kish effective) size of the smallest compound sensitive group, and at
    least ``smallest``: with ``rows_per_bin=4`` a group of 20 rows supports 5 bins,
    one of 240 rows 60.

    Parameters
    ----------
    sens_codes : array-like of shape (n_samples, n_sensitive)
        State codes of the sensitive variables (one column per sensitive feature).
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of every row.
    rows_per_bin : float, default=4.0
        Rows of the smallest group per bin.
    smallest : int, default=5
        Floor of the result.

    Returns
    -------
    int
        The cap; pass ``min(max_bins, cap)`` as the largest candidate of the agreement
        search.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._parameters import distribution_max_bins
    >>> groups = np.r_[np.zeros(480, int), np.ones(20, int)][:, None]
    >>> distribution_max_bins(groups)
    5
    >>> distribution_max_bins(np.r_[np.zeros(260, int), np.ones(240, int)][:, None])
    60
    """
    sens = np.asarray(sens_codes)
    if sens.ndim == 1:
        sens = sens[:, None]
    if sens.ndim != 2 or len(sens) == 0:
        raise ValueError("sens_codes must be a non-empty matrix (rows x sensitive features).")
    if not rows_per_bin > 0:
        raise ValueError(f"rows_per_bin must be positive; got {rows_per_bin!r}.")
    weight = check_weights(sample_weight, len(sens))
    _, inverse = np.unique(sens, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    if weight is None:
        n_min = float(np.bincount(inverse).min())
    else:
        w1 = np.bincount(inverse, weights=weight)
        w2 = np.bincount(inverse, weights=weight**2)
        with np.errstate(invalid="ignore", divide="ignore"):
            kish = np.where(w2 > 0, w1**2 / np.where(w2 > 0, w2, 1.0), 0.0)
        n_min = float(kish.min())
    return max(int(smallest), int(n_min // rows_per_bin))
