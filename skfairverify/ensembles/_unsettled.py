"""Sampling only the mass the bounds leave unsettled, stratified by the unsettled nodes.

When :func:`~skfairverify.ensembles.ensemble_bounds` stops short, each group's rate is
``(positive + M q) / Pr[A = a]``: ``positive`` the mass settled positive, ``M`` the
unsettled mass and ``q`` the unknown positive share of it. :func:`sample_unsettled`
estimates ``q`` alone: each unsettled node (an assignment of a prefix of the branching
order, its next variable restricted to a block of states) receives draws in proportion
to its mass (the floor of its share, the remainder by one multinomial draw over the
fractional parts), each draw the node's states completed by the network conditioned on
them; the decisions are read off the ensemble. Every draw's success probability is
fixed by the allocation and the draws are independent, so the count of positives is a
Poisson-binomial of mean ``n q``; Hoeffding (1956) bounds its tails by the binomial
ones, so the Clopper-Pearson interval of ``k / n`` covers ``q`` at least at the
confidence (proportional stratification only lowers the variance). The reported
interval is the sound part plus ``M`` times that interval, inside the sound bounds.

With ``allocation="neyman"`` the nodes are cut into strata by their score bounds, and
after a proportional pilot each stratum gets fresh draws in proportion to its mass
times its standard deviation (Neyman allocation): fewer draws for a width where the
strata's rates differ (the interval then asymptotic, see :func:`sample_unsettled`).
:func:`design_for_width` chooses between the two for a width: Neyman where its pilot
costs at most an eighth of the proportional draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from sklearn.utils import check_random_state

from ..s3p import BayesNet, TableTooLargeError
from ..s3p._errors import DEFAULT_MAX_TABLE_SIZE
from ..utils._stats import clopper_pearson_limits
from ._bounds import (
    _CHUNK_WORDS,
    EnsembleBounds,
    GroupTable,
    check_model,
    frontier_score_bounds,
)
from ._masks import LeafMasks

__all__ = ["UnsettledSample", "design_for_width", "sample_unsettled"]


@dataclass(frozen=True)
class UnsettledSample(GroupTable):
    """Sound bounds plus a Monte Carlo interval of the unsettled share, per group.

    Attributes
    ----------
    groups : list of tuple
        Each group's states of the sensitive variables.
    lower, upper : ndarray of shape (n_groups,)
        The sound bounds (from :func:`ensemble_bounds`).
    estimate : ndarray of shape (n_groups,)
        The rate with the unsettled share estimated by its draws (unbiased).
    interval_lower, interval_upper : ndarray of shape (n_groups,)
        The interval at ``confidence`` (per group): the settled positive mass plus the
        unsettled mass times the Clopper-Pearson interval of its positive share.
    unsettled : ndarray of shape (n_groups,)
        Unsettled share of each group's probability (``upper - lower``).
    n_samples : ndarray of shape (n_groups,)
        Draws per group in the estimate (0 where nothing is unsettled).
    positives : ndarray of shape (n_groups,)
        Positive decisions among them.
    confidence : float
        Coverage of each group's interval.
    n_evaluations : int
        Rows the ensemble decided: the sum of ``n_samples``, plus the pilot's draws
        with ``allocation="neyman"``.
    allocation : {"proportional", "neyman"}
        The design of the draws: the interval is conservative (Hoeffding) with
        ``"proportional"``, asymptotic with ``"neyman"`` (:attr:`interval`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import ensemble_bounds, read_ensemble, refine_states
    >>> from skfairverify.ensembles._unsettled import sample_unsettled
    >>> from skfairverify.s3p import BayesNet
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(400, 2)
    >>> model = GradientBoostingClassifier(n_estimators=20).fit(X, X.sum(1) > 1)
    >>> ensemble = read_ensemble(model)
    >>> states = [refine_states(ensemble, 0), refine_states(ensemble, 1)]
    >>> net = BayesNet.independent([np.full(s.n_states, 1 / s.n_states) for s in states])
    >>> bounds = ensemble_bounds(ensemble, net, states, max_nodes=3)
    >>> result = sample_unsettled(ensemble, net, states, bounds, 2000, random_state=0)
    >>> bool(bounds.lower[0] <= result.interval_lower[0] <= result.interval_upper[0]
    ...      <= bounds.upper[0])
    True
    """

    groups: list
    lower: np.ndarray
    upper: np.ndarray
    estimate: np.ndarray
    interval_lower: np.ndarray
    interval_upper: np.ndarray
    unsettled: np.ndarray
    n_samples: np.ndarray
    positives: np.ndarray
    confidence: float
    n_evaluations: int
    allocation: str = "proportional"

    @property
    def interval(self) -> str:
        """What the interval is: ``"conservative"`` (proportional) or ``"asymptotic"``."""
        return INTERVAL_KINDS[self.allocation]

    @property
    def width(self) -> np.ndarray:
        """``interval_upper - interval_lower`` per group."""
        return self.interval_upper - self.interval_lower

    _columns = ("lower", "upper", "estimate", "interval_lower", "interval_upper",
                "unsettled", "n_samples")


def clopper_pearson(k, n, confidence):
    """Two-sided Clopper-Pearson interval of a binomial proportion ([0, 1] where n is 0).

    Parameters
    ----------
    k, n : array-like of int
        Successes and trials (``n == 0`` gives ``[0, 1]``).
    confidence : float
        Coverage, in (0, 1).

    Returns
    -------
    low, high : ndarray

    Examples
    --------
    >>> from skfairverify.ensembles._unsettled import clopper_pearson
    >>> low, high = clopper_pearson(0, 10, 0.95)
    >>> float(low), round(float(high), 4)
    (0.0, 0.3085)
    """
    return clopper_pearson_limits(k, n, 1.0 - confidence)


# ------------------------------------------------------------------ allocation
def allocate(prob, group, n_per_group, rng) -> np.ndarray:
    """Draws per node, proportional to its mass within its group.

    Each node gets the floor of its share ``n_g * prob / M_g``; the remaining draws of
    the group go to nodes by one multinomial draw over the fractional parts, so the
    expected draws of each node are exactly its share.

    Parameters
    ----------
    prob : ndarray of shape (n_nodes,)
        The nodes' probabilities.
    group : ndarray of int of shape (n_nodes,)
        Each node's group.
    n_per_group : ndarray of int of shape (n_groups,)
        Draws of each group.
    rng : numpy.random.RandomState

    Returns
    -------
    counts : ndarray of int64 of shape (n_nodes,)

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles._unsettled import allocate
    >>> allocate(np.array([.5, .25, .25]), np.zeros(3, int), np.array([4]),
    ...          np.random.RandomState(0)).tolist()
    [2, 1, 1]
    """
    counts = np.zeros(prob.size, dtype=np.int64)
    for g, n in enumerate(np.asarray(n_per_group, dtype=np.int64)):
        at = np.flatnonzero(group == g)
        if not at.size or n <= 0:
            continue
        share = n * prob[at] / prob[at].sum()
        whole = np.floor(share).astype(np.int64)
        fraction = np.clip(share - whole, 0.0, None)
        rest = int(n - whole.sum())
        if rest > 0:
            whole += rng.multinomial(rest, fraction / fraction.sum())
        counts[at] = whole
    return counts


# ------------------------------------------------------------------ conditional draws
class _Sampler:
    """Draws of a network's variables given an assignment of a prefix of an order."""

    def __init__(self, network: BayesNet, order):
        self.network, self.order = network, list(order)
        self.keys, self.cumulative = [], []
        for v, cpt in enumerate(network.cpts):
            card = network.cardinalities[v]
            flat = cpt.reshape(-1, card)
            cum = np.concatenate([np.zeros((flat.shape[0], 1)), np.cumsum(flat, axis=1)], 1)
            self.cumulative.append(cum.ravel())
            # row r's cumulative sums shifted by r: one increasing array for every row
            self.keys.append((np.arange(flat.shape[0])[:, None] + cum[:, 1:]).ravel())

    def _config(self, states, v) -> np.ndarray:
        parents = self.network.parents[v]
        if not parents:
            return np.zeros(states.shape[0], dtype=np.int64)
        cards = [self.network.cardinalities[p] for p in parents]
        return np.ravel_multi_index(tuple(states[:, p] for p in parents), cards)

    def draw(self, states, depth, level, block, rng) -> np.ndarray:
        """Complete each row: ``order[depth]`` within its block, the later ones freely.

        Parameters
        ----------
        states : ndarray of shape (n_rows, n_variables)
            Assigned states of ``order[:depth]`` (others ignored).
        depth, level, block : ndarray of int of shape (n_rows,)
            Each row's node (see :class:`EnsembleBounds`'s ``unsettled``).
        rng : numpy.random.RandomState

        Returns
        -------
        states : ndarray of int64 of shape (n_rows, n_variables)
        """
        states = states.copy()
        for k, v in enumerate(self.order):
            rows = np.flatnonzero(depth <= k)
            if not rows.size:
                continue
            card = self.network.cardinalities[v]
            here = depth[rows] == k
            first = np.where(here, np.minimum(block[rows] << level[rows], card), 0)
            last = np.where(here, np.minimum((block[rows] + 1) << level[rows], card), card)
            config = self._config(states[rows], v)
            start = self.cumulative[v][config * (card + 1) + first]
            stop = self.cumulative[v][config * (card + 1) + last]
            target = start + rng.random_sample(rows.size) * (stop - start)
            found = np.searchsorted(self.keys[v], config + target, side="left") - config * card
            states[rows, v] = np.clip(found, first, last - 1)
        return states


def _decisions(ensemble, masks, states) -> np.ndarray:
    """The ensemble's decision on fully assigned states, in chunks of the working memory."""
    step = max(256, _CHUNK_WORDS // (masks.n_trees * masks.n_words))
    out = np.empty(states.shape[0], dtype=bool)
    every = range(states.shape[1])
    for i in range(0, states.shape[0], step):
        out[i: i + step] = ensemble.positive(masks.score(masks.mask(states[i: i + step],
                                                                    every)))
    return out


# ------------------------------------------------------------------ checking
_ALLOCATIONS = ("proportional", "neyman")
#: What each design's interval is: Clopper-Pearson of the pooled draws, conservative by
#: Hoeffding's bound (proportional); Clopper-Pearson at the stratified estimate's
#: effective size, asymptotic (Neyman).
INTERVAL_KINDS = {"proportional": "conservative", "neyman": "asymptotic"}
#: The Neyman draws for a width: this many times the pilot's forecast.
_MARGIN = 1.1


def _check(ensemble, network, states, bounds, n_samples, confidence) -> np.ndarray:
    check_model(ensemble, network)
    if not isinstance(bounds, EnsembleBounds) or bounds.unsettled is None:
        raise TypeError("bounds must be the EnsembleBounds that ensemble_bounds returned "
                        f"for this ensemble and network, got {type(bounds).__name__}.")
    if len(bounds.order) != network.n_variables or len(states) != network.n_variables:
        raise ValueError(f"bounds were computed over {len(bounds.order)} variables and "
                         f"states has {len(states)}, but the network has "
                         f"{network.n_variables}: pass the same network and states.")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    n = np.broadcast_to(np.asarray(n_samples), (len(bounds.groups),))
    if not np.issubdtype(n.dtype, np.integer) or np.any(n < 1):
        raise ValueError(f"n_samples must be a positive integer (or one per group), got "
                         f"{n_samples!r}.")
    return n.astype(np.int64)


def _check_design(allocation, width, n_strata, max_samples=None) -> None:
    if allocation not in _ALLOCATIONS:
        raise ValueError(f"allocation must be one of {_ALLOCATIONS}, got {allocation!r}.")
    if width is not None and not 0.0 < float(width) <= 1.0:
        raise ValueError(f"width must be in (0, 1] or None, got {width!r}.")
    if width is not None and allocation != "neyman":
        raise ValueError("width needs allocation='neyman' (the proportional design draws "
                         "n_samples per group).")
    if max_samples is not None and np.any(np.asarray(max_samples) < 1):
        raise ValueError(f"max_samples must be None or positive, got {max_samples!r}.")
    if isinstance(n_strata, bool) or not isinstance(n_strata, (int, np.integer)) \
            or n_strata < 1:
        raise ValueError(f"n_strata must be a positive integer, got {n_strata!r}.")


def _check_entries(total, network, max_table_size) -> None:
    entries = int(total) * (network.n_variables + 4)
    if entries > max_table_size:
        raise TableTooLargeError(
            f"{int(total):,} draws of {network.n_variables} variables would hold "
            f"{entries:,} entries, above max_table_size={max_table_size:,}; lower "
            "n_samples (or raise width) or raise max_table_size.")


# ------------------------------------------------------------------ the designs
class _Draws:
    """Draws of the unsettled nodes, decided by the ensemble; positives per node."""

    def __init__(self, ensemble, network, states, bounds, rng, max_table_size):
        self.ensemble, self.network, self.nodes = ensemble, network, bounds.unsettled
        self.masks = LeafMasks(ensemble, states, max_table_size)
        self.sampler = _Sampler(network, bounds.order)
        self.rng, self.max_table_size = rng, max_table_size
        size = self.nodes["prob"].size
        self.n, self.k = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.drawn = 0

    def add(self, counts) -> None:
        """Draw ``counts[i]`` rows of node ``i``, and decide them."""
        _check_entries(counts.sum(), self.network, self.max_table_size)
        nodes = self.nodes
        node = np.repeat(np.arange(counts.size), counts)
        draws = self.sampler.draw(nodes["states"][node], nodes["depth"][node],
                                  nodes["level"][node], nodes["block"][node], self.rng)
        positive = _decisions(self.ensemble, self.masks, draws)
        self.n += counts
        self.k += np.bincount(node, positive, counts.size).astype(np.int64)
        self.drawn += int(counts.sum())

    def reset(self) -> None:
        """Forget the draws' counts (a pilot's); ``drawn`` keeps the rows decided."""
        self.n[:], self.k[:] = 0, 0


def _strata(nodes, score, n_groups, n_strata) -> np.ndarray:
    """Each node's stratum: its group's nodes cut into ``n_strata`` of equal mass by score.

    Nodes are ranked by the midpoint of their score bounds (a node far above the
    threshold is mostly positive); stratum ``g * n_strata + j`` holds the nodes of group
    ``g`` whose mass midpoint falls in the ``j``-th ``1 / n_strata`` of the group's mass.
    """
    prob, group = nodes["prob"], nodes["group"]
    stratum = np.zeros(prob.size, dtype=np.int64)
    for g in range(n_groups):
        at = np.flatnonzero(group == g)
        if not at.size:
            continue
        at = at[np.argsort(score[at], kind="stable")]
        cum = np.cumsum(prob[at])
        middle = (cum - prob[at] / 2) / cum[-1]
        stratum[at] = g * n_strata + np.minimum((middle * n_strata).astype(np.int64),
                                                n_strata - 1)
    return stratum


def _shrunk(k, n) -> np.ndarray:
    """``(k + 1/2) / (n + 1)``: a rate estimate kept off 0 and 1 for the variances."""
    return (k + 0.5) / (n + 1.0)


class _Stratified:
    """Stratified estimate of each group's unsettled positive share (Neyman allocation)."""

    def __init__(self, nodes, stratum, n_groups, n_strata):
        self.nodes, self.stratum = nodes, stratum
        self.n_groups, self.size = n_groups, n_groups * n_strata
        mass = np.bincount(stratum, nodes["prob"], self.size)
        group_mass = np.bincount(nodes["group"], nodes["prob"], n_groups)
        self.group_of = np.arange(self.size) // n_strata
        with np.errstate(invalid="ignore", divide="ignore"):
            self.weight = np.where(mass > 0, mass / group_mass[self.group_of], 0.0)

    def counts(self, draws: _Draws) -> tuple[np.ndarray, np.ndarray]:
        return (np.bincount(self.stratum, draws.n, self.size),
                np.bincount(self.stratum, draws.k, self.size))

    def spread(self, n, k) -> np.ndarray:
        """Per group, ``sum_h W_h sigma_h`` (the Neyman standard deviation of one draw)."""
        sigma = np.sqrt(_shrunk(k, n) * (1 - _shrunk(k, n)))
        return np.bincount(self.group_of, self.weight * sigma, self.n_groups)

    def extra(self, n, k, total) -> np.ndarray:
        """``total`` draws per group in Neyman proportions (the pilot's ``n``, ``k``)."""
        sigma = np.sqrt(_shrunk(k, n) * (1 - _shrunk(k, n)))
        spread = self.spread(n, k)[self.group_of]
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(spread > 0, self.weight * sigma / spread, 0.0)
        want = np.ceil(total[self.group_of] * share)
        floor = np.where(self.weight > 0, 2, 0)  # at least two draws a stratum
        return np.maximum(want, floor).astype(np.int64)

    def estimate(self, n, k, confidence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group: the stratified share and its interval at ``confidence``.

        The interval is Clopper-Pearson's at the effective sample size
        ``q (1 - q) / Var`` (Korn and Graubard, 1998), the variance of each stratum's
        share estimated with half a success and half a failure added: narrower than
        the pooled interval by the stratification's gain, and not below the normal one
        for shares near 0 or 1.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(n > 0, k / np.maximum(n, 1), 0.5)
            var = np.where(n > 0, _shrunk(k, n) * (1 - _shrunk(k, n)) / np.maximum(n, 1),
                           0.25)
            share = np.bincount(self.group_of, self.weight * rate, self.n_groups)
            var = np.bincount(self.group_of, self.weight ** 2 * var, self.n_groups)
            drawn = np.bincount(self.group_of, n, self.n_groups)
            spread = _shrunk(share * drawn, drawn)
            effective = np.where(var > 0, spread * (1 - spread) / var, drawn)
        low, high = clopper_pearson(share * effective, effective, confidence)
        return share, low, high


def _design(ensemble, network, masks, bounds, pilots, n_strata) -> _Stratified:
    """The strata of ``bounds.unsettled``: about ten pilot draws a stratum at least."""
    n_strata = int(max(1, min(n_strata, pilots.min(initial=10 * n_strata) // 10)))
    nodes = bounds.unsettled
    low, high = frontier_score_bounds(ensemble, network, masks, bounds.order, nodes)
    n_groups = len(bounds.groups)
    return _Stratified(nodes, _strata(nodes, (low + high) / 2, n_groups, n_strata),
                       n_groups, n_strata)


def _wanted(design, n, k, pending_share, width, confidence) -> np.ndarray:
    """Neyman draws per group whose interval of the rate is forecast ``width`` wide.

    From the pilot's strata: the normal forecast, then three corrections of it by the
    square of the forecast Clopper-Pearson width (at the effective sample size) over
    the one wanted.
    """
    z = norm.ppf(0.5 + confidence / 2)
    drawn = np.bincount(design.group_of, n, design.n_groups)
    share = np.bincount(design.group_of, design.weight * np.where(
        n > 0, k / np.maximum(n, 1), 0.5), design.n_groups)
    spread = design.spread(n, k)
    target = float(width) / np.maximum(pending_share, 1e-300)  # width of the share
    need = np.maximum((2 * z * spread / target) ** 2, 1.0)
    q = _shrunk(share * drawn, drawn)
    for _ in range(3):
        effective = need * q * (1 - q) / np.maximum(spread, 1e-12) ** 2
        low, high = clopper_pearson(q * effective, effective, confidence)
        need = need * ((high - low) / target) ** 2
    return np.where(pending_share > 0, np.ceil(_MARGIN * need), 0).astype(np.int64)


def _proportional(draws, nodes, n_per_group, confidence):
    """Proportional draws, the Clopper-Pearson interval of the pooled share."""
    n_groups = n_per_group.size
    draws.add(allocate(nodes["prob"], nodes["group"], n_per_group, draws.rng))
    n = np.bincount(nodes["group"], draws.n, n_groups)
    k = np.bincount(nodes["group"], draws.k, n_groups)
    low, high = clopper_pearson(k, n, confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, k / np.maximum(n, 1), 0.0)
    return share, low, high, n, k


def _neyman(draws, nodes, n_per_group, pending_share, width, confidence, design,
            max_samples=None):
    """A proportional pilot, then Neyman draws per stratum; the stratified interval.

    The pilot only sizes the strata's draws (``_MARGIN`` times the Neyman forecast
    for ``width``, else ``n_per_group``; at most ``max_samples`` a group): the
    estimate is the fresh draws', so that each stratum's share is unbiased given its
    number of draws.
    """
    draws.add(allocate(nodes["prob"], nodes["group"], n_per_group, draws.rng))
    n, k = design.counts(draws)
    draws.reset()
    total = (n_per_group if width is None
             else _wanted(design, n, k, pending_share, width, confidence))
    if max_samples is not None:
        total = np.minimum(total, max_samples)
    draws.add(allocate(nodes["prob"], design.stratum, design.extra(n, k, total),
                       draws.rng))
    n, k = design.counts(draws)
    share, low, high = design.estimate(n, k, confidence)
    return (share, low, high, np.bincount(design.group_of, n, design.n_groups),
            np.bincount(design.group_of, k, design.n_groups))


#: The Neyman design's pilot for a width: the proportional draws over this ...
PILOT_DIVISOR = 40
#: ... and at least this many draws a group.
MIN_PILOT = 200
#: The Neyman design is chosen where the proportional draws are at least this many
#: times its pilot (else the pilot alone costs most of what Neyman could save).
MIN_PILOTS = 8


def design_for_width(n_samples, width, unsettled) -> dict:
    """The design of :func:`sample_unsettled` for an interval ``width``: where Neyman pays.

    ``n_samples`` are the proportional draws per group that ``width`` needs (sized for
    the worst case of the share's variance). Over the groups with unsettled mass, when
    their draws are at least :data:`MIN_PILOTS` times the pilot (a fortieth of them, at
    least :data:`MIN_PILOT` a group), the Neyman design: that pilot, then the draws it
    forecasts for ``width``, at most ``n_samples`` a group (its interval asymptotic).
    Otherwise the proportional design of ``n_samples`` (its interval conservative):
    there the pilot would cost most of the proportional draws.

    Parameters
    ----------
    n_samples : array-like of int of shape (n_groups,)
        Proportional draws per group for ``width``.
    width : float
        The width wanted of each group's interval of the rate.
    unsettled : array-like of shape (n_groups,)
        Each group's unsettled share (``upper - lower``); groups without any are left
        out of the rule (they get no draws).

    Returns
    -------
    design : dict
        Keyword arguments of :func:`sample_unsettled`: ``n_samples``, ``allocation``,
        and with ``"neyman"`` also ``width`` and ``max_samples``.

    Examples
    --------
    >>> from skfairverify.ensembles._unsettled import design_for_width
    >>> design_for_width([1000, 1000], 0.01, [0.2, 0.2])["allocation"]
    'proportional'
    >>> design = design_for_width([40000, 30000], 0.01, [0.9, 0.7])
    >>> design["allocation"], design["n_samples"].tolist()
    ('neyman', [1000, 750])
    """
    n = np.atleast_1d(np.asarray(n_samples, dtype=np.int64))
    open_ = np.broadcast_to(np.asarray(unsettled, dtype=float) > 0, n.shape)
    pilot = np.maximum(n // PILOT_DIVISOR, MIN_PILOT)
    if not open_.any() or MIN_PILOTS * pilot[open_].sum() > n[open_].sum():
        return {"n_samples": n, "allocation": "proportional"}
    return {"n_samples": np.where(open_, pilot, 1), "allocation": "neyman",
            "width": float(width), "max_samples": np.maximum(n, 1)}


def sample_unsettled(ensemble, network, states, bounds, n_samples, *, confidence=0.99,
                     allocation="proportional", width=None, n_strata=20,
                     max_samples=None, random_state=None,
                     max_table_size=DEFAULT_MAX_TABLE_SIZE) -> UnsettledSample:
    """Monte Carlo of the mass the bounds left unsettled only, stratified by its nodes.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model (:func:`read_ensemble`).
    network : BayesNet
        The network the bounds were computed under.
    states : list of FeatureStates
        The variables' states, as given to :func:`ensemble_bounds`.
    bounds : EnsembleBounds
        The result of :func:`ensemble_bounds` (stopped by ``tolerance``, ``max_nodes``
        or ``max_time``).
    n_samples : int or array-like of int
        Draws per group with unsettled mass (one number, or one per group); with
        ``allocation="neyman"``, the pilot's draws, then as many again (or as many as
        ``width`` needs) in the estimate.
    confidence : float, default=0.99
        Coverage of each group's interval.
    allocation : {"proportional", "neyman"}, default="proportional"
        ``"proportional"``: draws in proportion to the nodes' mass, the Clopper-Pearson
        interval of the pooled share (conservative). ``"neyman"``: the group's nodes
        cut into ``n_strata`` strata of equal mass by the midpoint of their score
        bounds; the pilot drawn in proportion, then fresh draws, each stratum's in
        proportion to its mass times its pilot standard deviation (Neyman, 1934), as
        many as the pilot (or as ``width`` needs), the estimate theirs (the pilot only
        sizes them: unbiased); the interval is Clopper-Pearson's at
        the stratified estimate's effective sample size (Korn and Graubard, 1998;
        asymptotic, where the proportional one is exact).
    width : float, default=None
        With ``allocation="neyman"``: the draws after the pilot are 1.1 times those the
        pilot forecasts for a width of each group's interval of the rate of ``width``.
    n_strata : int, default=20
        Strata per group (``allocation="neyman"``).
    max_samples : int or array-like of int, default=None
        With ``allocation="neyman"``: the most draws after the pilot per group (None:
        as many as ``width`` needs).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.
    max_table_size : int, default=50_000_000
        Largest number of entries of one batch of draws' states (draws x variables);
        refused beyond.

    Returns
    -------
    result : UnsettledSample
        Sound bounds, the estimate and its interval per group.

    Raises
    ------
    TableTooLargeError
        When the draws' states would exceed ``max_table_size``.
    TypeError, ValueError
        For bounds that are not this ensemble's and network's, ``n_samples`` below 1,
        ``confidence`` outside (0, 1), or an unknown ``allocation``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from skfairverify.ensembles import (
    ...     FeatureStates, ensemble_bounds, read_ensemble, refine_states)
    >>> from skfairverify.ensembles._unsettled import sample_unsettled
    >>> from skfairverify.s3p import BayesNet
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(500, 2)
    >>> model = RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, X.sum(1) > 1)
    >>> ensemble = read_ensemble(model)
    >>> states = [FeatureStates(None, [], n_states=2)] + [
    ...     refine_states(ensemble, f) for f in range(2)]
    >>> net = BayesNet.independent([np.full(s.n_states, 1 / s.n_states) for s in states])
    >>> bounds = ensemble_bounds(ensemble, net, states, sensitive_features=0, max_nodes=4)
    >>> result = sample_unsettled(ensemble, net, states, bounds, 1000, random_state=0)
    >>> result.n_evaluations
    2000
    """
    n_per_group = _check(ensemble, network, states, bounds, n_samples, confidence)
    _check_design(allocation, width, n_strata, max_samples)
    confidence = float(confidence)
    nodes, n_groups = bounds.unsettled, len(bounds.groups)
    pending = np.bincount(nodes["group"], nodes["prob"], n_groups)
    n_per_group = np.where(pending > 0, n_per_group, 0)
    _check_entries(n_per_group.sum(), network, max_table_size)
    draws = _Draws(ensemble, network, states, bounds, check_random_state(random_state),
                   max_table_size)
    p = bounds.group_probability
    if allocation == "neyman":
        design = _design(ensemble, network, draws.masks, bounds, n_per_group[pending > 0],
                         int(n_strata))
        share, share_low, share_high, n, k = _neyman(
            draws, nodes, n_per_group, pending / p, width, confidence, design,
            max_samples)
    else:
        share, share_low, share_high, n, k = _proportional(draws, nodes, n_per_group,
                                                           confidence)
    settled = bounds.positive_mass

    def rate(q):
        return np.clip((settled + pending * q) / p, bounds.lower, bounds.upper)

    return UnsettledSample(
        groups=list(bounds.groups), lower=bounds.lower, upper=bounds.upper,
        estimate=rate(share), interval_lower=rate(share_low),
        interval_upper=rate(share_high), unsettled=pending / p,
        n_samples=n, positives=k.astype(np.int64),
        confidence=confidence, n_evaluations=draws.drawn, allocation=allocation)
