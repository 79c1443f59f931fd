"""Exact positive rates of a decision tree over a Bayesian network.

``Pr[Yhat = 1 | A = a] = sum_r Pr[X in region_r | A = a]`` over the disjoint positive
regions of the tree, each a product over variables of allowed states
(:class:`StateIndicators`). All regions are computed at once by variable elimination
with a *region axis*: the indicator of variable ``v`` in every region is a factor over
``(region, v)`` multiplied into the network's tables, and the region axis is kept to
the end like the sensitive variables. One more region, allowing every state, gives
``Pr[A = a]`` in the same pass. The region axis is split into chunks when the largest
factor would exceed ``max_table_size``; the planned work is bounded as the engine's.
"""

from __future__ import annotations

import math

import numpy as np

from ..s3p import TableTooLargeError
from ._influence import SECONDS_PER_MILLION_ENTRIES, _ancestral_set, _einsum
from ._trees_states import StateIndicators, state_indicators

__all__ = ["region_probabilities", "tree_group_rates", "tree_rates_seconds"]

#: Measured cost of the elimination with a region axis: 10-17 ns per work unit (one
#: entry of a merged factor, regions included) on Adult trees of depth 8-12; rounded up.
TREE_NS_PER_UNIT = 20.0

_HINT = (
    " Use a shallower tree (fewer leaves), fewer states per column (n_bins, max_states), "
    "a narrower network (max_indegree), or raise max_table_size."
)


def _factors(network, indicators: StateIndicators, keep, leaf: int):
    """Network tables of the relevant variables and the indicator factors (full region axis)."""
    n_axis = indicators.n_regions + 1
    factors = [([leaf], np.ones(n_axis))]
    for v, m in indicators.by_variable.items():
        m = np.asarray(m, dtype=float)
        if m.shape != (indicators.n_regions, network.cardinalities[v]):
            raise ValueError(
                f"The indicators of variable {network.names[v]!r} have shape {m.shape}; "
                f"expected ({indicators.n_regions}, {network.cardinalities[v]}) (regions, "
                "states of the network's variable)."
            )
        factors.append(([leaf, v], np.vstack([m, np.ones((1, m.shape[1]))])))
    for i in _relevant(network, indicators, keep):
        factors.append((list(network.parents[i]) + [i], np.asarray(network.cpts[i], float)))
    return factors


def _relevant(network, indicators: StateIndicators, keep) -> list:
    """The variables whose tables enter: ancestors of the kept and the regions' ones."""
    return sorted(_ancestral_set(network, list(keep) + list(indicators.by_variable)))


def _plan(scopes, cards: dict, keep: set):
    """Greedy elimination order (smallest merged factor first): ``[(v, merged scope)]``."""
    scopes = [set(s) for s in scopes]
    hidden = set().union(*scopes) - keep

    def size(scope):
        return math.prod(cards[u] for u in scope)

    def merged(v):
        return set().union(*(s for s in scopes if v in s))

    steps = []
    while hidden:
        v = min(hidden, key=lambda u: (size(merged(u)), u))
        scope = merged(v)
        steps.append((v, scope))
        scopes = [s for s in scopes if v not in s] + [scope - {v}]
        hidden.discard(v)
    steps.append((None, set().union(*scopes)))  # the final product
    return steps


def _chunk_size(steps, cards: dict, leaf: int, names, max_table_size: int) -> int:
    """Regions per chunk so that every factor fits in ``max_table_size``; refuse otherwise."""
    worst_leafy, worst_plain, where = 1, 1, None
    for _, scope in steps:
        base = math.prod(cards[u] for u in scope if u != leaf)
        if leaf in scope:
            worst_leafy = max(worst_leafy, base)
        elif base > worst_plain:
            worst_plain, where = base, scope
    if worst_plain > max_table_size or worst_leafy > max_table_size:
        scope = where if worst_plain > max_table_size else max(
            (s for _, s in steps if leaf in s),
            key=lambda s: math.prod(cards[u] for u in s if u != leaf))
        size = max(worst_plain, worst_leafy)
        raise TableTooLargeError(
            f"Exact tree rates need a factor of {size:,} entries over "
            f"{[names[u] for u in sorted(scope - {leaf})]} (max_table_size="
            f"{max_table_size:,})." + _HINT
        )
    return max(1, min(cards[leaf], max_table_size // worst_leafy))


def _work(steps, cards: dict) -> int:
    """Work units of the elimination ``steps``: the entries of every merged factor."""
    return sum(math.prod(cards[u] for u in scope) for _, scope in steps)


def _seconds(work: int) -> float:
    """Estimated time of ``work`` units of the elimination (:data:`TREE_NS_PER_UNIT`)."""
    return work * TREE_NS_PER_UNIT * 1e-9


def _check_work(steps, cards: dict, max_table_size: int) -> None:
    work = _work(steps, cards)
    seconds = _seconds(work)
    limit = SECONDS_PER_MILLION_ENTRIES * max_table_size / 1e6
    if seconds > limit:
        raise TableTooLargeError(
            f"Exact tree rates refused: variable elimination over {cards[max(cards)]:,} "
            f"regions is estimated at {work:,} work units ({seconds:,.0f} s), above the bound "
            f"of {limit:,.0f} s that max_table_size={max_table_size:,} allows." + _HINT
        )


def _run(factors, steps, out_scope):
    for v, scope in steps[:-1]:
        involved = [f for f in factors if v in f[0]]
        out = sorted(scope - {v})
        factors = [f for f in factors if v not in f[0]] + [(out, _einsum(involved, out))]
    return _einsum(factors, out_scope)


def region_probabilities(network, indicators: StateIndicators, keep, max_table_size):
    """``Pr[keep, X in region_r]`` for every region, and ``Pr[keep]``, exactly.

    Parameters
    ----------
    network : BayesNet
    indicators : StateIndicators
        Allowed states per region (:func:`state_indicators`).
    keep : list of int
        Variables kept in the result (e.g. the sensitive ones).
    max_table_size : int
        Largest factor (entries) allocated; also bounds the planned work as the exact
        engine's (``SECONDS_PER_MILLION_ENTRIES``).

    Returns
    -------
    ndarray of shape ``(*[cardinalities[k] for k in keep], n_regions + 1)``
        The last entry of the region axis is ``Pr[keep]`` (every state allowed).

    Raises
    ------
    TableTooLargeError
        Before any allocation, when a factor or the work exceeds the bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._trees_states import StateIndicators
    >>> from skfairverify.verification._trees_exact import region_probabilities
    >>> net = BayesNet([2, 3], [(), (0,)], [np.array([.5, .5]),
    ...                                    np.array([[.2, .3, .5], [.6, .2, .2]])])
    >>> ind = StateIndicators(1, {1: np.array([[0.0, 1.0, 1.0]])})
    >>> region_probabilities(net, ind, [0], 10_000).tolist()
    [[0.4, 0.5], [0.2, 0.5]]
    """
    keep = [int(k) for k in keep]
    leaf = network.n_variables
    factors = _factors(network, indicators, keep, leaf)
    cards = _cards(network, indicators)
    out_size = math.prod(cards[k] for k in keep) * cards[leaf]
    if out_size > max_table_size:
        raise TableTooLargeError(
            f"The table of {cards[leaf]:,} regions by the kept variables has {out_size:,} "
            f"entries (max_table_size={max_table_size:,})." + _HINT
        )
    steps = _planned(network, indicators, keep)
    chunk = _chunk_size(steps, cards, leaf, network.names + ["<region>"], max_table_size)
    _check_work(steps, cards, max_table_size)
    parts = []
    for start in range(0, cards[leaf], chunk):
        rows = slice(start, start + chunk)
        sliced = [(s, t[rows] if s[0] == leaf else t) for s, t in factors]
        parts.append(_run(sliced, steps, keep + [leaf]))
    return np.concatenate(parts, axis=-1)


def _cards(network, indicators: StateIndicators) -> dict:
    """Every variable's states, and the region axis's (the last variable + 1)."""
    cards = dict(enumerate(network.cardinalities))
    cards[network.n_variables] = indicators.n_regions + 1
    return cards


def tree_rates_seconds(network, indicators: StateIndicators, keep) -> float:
    """Estimated time of :func:`region_probabilities` on ``network`` (seconds), from sizes.

    The elimination is planned (not run): its work units (the entries of every merged
    factor, regions included) times :data:`TREE_NS_PER_UNIT`, the figure that bounds
    the work of :func:`region_probabilities`, whose parameters these are (without
    ``max_table_size``).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._trees_states import StateIndicators
    >>> from skfairverify.verification._trees_exact import tree_rates_seconds
    >>> net = BayesNet.independent([[0.5, 0.5], [0.2, 0.3, 0.5]])
    >>> regions = StateIndicators(2, {1: np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])})
    >>> tree_rates_seconds(net, regions, [0]) < 1e-6
    True
    """
    return _seconds(_work(_planned(network, indicators, keep), _cards(network, indicators)))


def _planned(network, indicators: StateIndicators, keep):
    """The elimination steps of :func:`region_probabilities`, planned (nothing allocated).

    From the scopes of its factors (:func:`_factors`), by :func:`_plan`.
    """
    keep = [int(k) for k in keep]
    leaf = network.n_variables
    scopes = [[leaf]] + [[leaf, v] for v in indicators.by_variable] + [
        list(network.parents[i]) + [i] for i in _relevant(network, indicators, keep)]
    return _plan(scopes, _cards(network, indicators), set(keep) | {leaf})


def _undefined_group_error(network, sensitive_idx, codes) -> ValueError:
    group = {network.names[i]: network.state_names[i][int(s)]
             for i, s in zip(sensitive_idx, codes)}
    return ValueError(
        f"The group {group} has probability 0 under the network, so its positive rate is "
        "undefined."
    )


def tree_group_rates(network, encoding, leaves, sensitive_idx, group_codes, max_table_size):
    """Exact ``Pr[Yhat = 1 | A = a]`` of a decision tree for every group.

    The sum over the positive regions of ``Pr[region | A = a]`` under ``network``,
    computed by :func:`region_probabilities`. Any network over the same variables
    (e.g. :func:`~skfairverify.verification._influence.uniform_network`) can be given.

    Parameters
    ----------
    network : BayesNet
        Distribution of the variables of ``encoding`` (same order and states).
    encoding : Encoding or StateIndicators
        The variables (:func:`tree_encoding`), or indicators already computed with
        :func:`state_indicators` (then ``leaves`` is not used).
    leaves : TreeLeaves or None
        Result of :func:`positive_leaves`.
    sensitive_idx : list of int
        Indices of the sensitive variables.
    group_codes : ndarray of shape (n_groups, n_sensitive)
        State of each sensitive variable for every group.
    max_table_size : int
        Largest factor allowed (entries); bounds the work too.

    Returns
    -------
    ndarray of shape (n_groups,)
        In [0, 1] (round-off clipped).

    Raises
    ------
    ValueError
        When a group has probability 0, or the indicators do not match the network.
    TableTooLargeError
        When the computation exceeds ``max_table_size`` (refused before it starts).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._trees_states import StateIndicators
    >>> from skfairverify.verification._trees_exact import tree_group_rates
    >>> net = BayesNet([2, 3], [(), (0,)], [np.array([.5, .5]),
    ...                                    np.array([[.2, .3, .5], [.6, .2, .2]])])
    >>> ind = StateIndicators(2, {1: np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])})
    >>> tree_group_rates(net, ind, None, [0], np.array([[0], [1]]), 10_000).tolist()
    [0.8, 0.4]
    """
    if isinstance(encoding, StateIndicators):
        indicators = encoding
    else:
        indicators = state_indicators(encoding, leaves)
    sensitive_idx = [int(i) for i in sensitive_idx]
    group_codes = np.asarray(group_codes, dtype=np.int64).reshape(-1, len(sensitive_idx))
    table = region_probabilities(network, indicators, sensitive_idx, max_table_size)
    per_group = table[tuple(group_codes.T)]  # (n_groups, n_regions + 1)
    mass = per_group[:, -1]
    bad = np.flatnonzero(~(mass > 0))
    if bad.size:
        raise _undefined_group_error(network, sensitive_idx, group_codes[bad[0]])
    return np.clip(per_group[:, :-1].sum(axis=1) / mass, 0.0, 1.0)
