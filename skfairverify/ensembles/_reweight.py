"""The bounds of one search reweighed under another network of the same structure.

The nodes :func:`~skfairverify.ensembles.ensemble_bounds` settles and leaves unsettled
are assignments of a prefix of the branching order (the next variable restricted to a
block of its states); the decision on a settled node does not depend on the network.
Under another network ``D'`` of the same variables and parents (a posterior draw, a
bootstrap replicate), each node's probability is the product of ``D'``'s entries along
its prefix times the block's conditional mass, so that ``Pr'[positive | A = a]`` is
at least the mass of the nodes settled positive and at most one minus the mass of those
settled negative, divided by ``Pr'[A = a]`` (computed exactly): sound bounds for ``D'``
without a new search, as wide as the unsettled mass under ``D'`` (and the mass of the
states of probability 0 under the first network, which it dropped).
"""

from __future__ import annotations

import numpy as np

from ..s3p import BayesNet, TableTooLargeError
from ._bounds import EnsembleBounds, ancestors

__all__ = ["group_probability", "node_probability", "reweighted_bounds"]


def node_probability(network: BayesNet, order, nodes: dict) -> np.ndarray:
    """Each node's probability under ``network``.

    Parameters
    ----------
    network : BayesNet
        A network over the variables of the search.
    order : list of int
        The branching order (``EnsembleBounds.order``).
    nodes : dict of ndarray
        ``states``, ``depth``, ``level`` and ``block`` of the nodes (as
        ``EnsembleBounds.unsettled``).

    Returns
    -------
    prob : ndarray of shape (n_nodes,)

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.ensembles._reweight import node_probability
    >>> net = BayesNet.independent([[0.5, 0.5], [0.25, 0.25, 0.5]])
    >>> nodes = {"states": np.array([[1, -1]]), "depth": np.array([1]),
    ...          "level": np.array([1]), "block": np.array([0])}
    >>> node_probability(net, [0, 1], nodes).tolist()
    [0.25]
    """
    states, depth = nodes["states"], nodes["depth"]
    level, block = nodes["level"], nodes["block"]
    prob = np.ones(depth.size)
    for k, v in enumerate(order):
        cpt, parents = network.cpts[v], network.parents[v]
        rows = np.flatnonzero(depth > k)
        if rows.size:
            prob[rows] *= cpt[tuple(states[rows, p] for p in parents) + (states[rows, v],)]
        here = np.flatnonzero(depth == k)
        if here.size:
            card = network.cardinalities[v]
            cumulative = np.concatenate([np.zeros(cpt.shape[:-1] + (1,)),
                                         np.cumsum(cpt, axis=-1)], axis=-1)
            config = tuple(states[here, p] for p in parents)
            first = np.minimum(block[here] << level[here], card)
            last = np.minimum((block[here] + 1) << level[here], card)
            prob[here] *= cumulative[config + (last,)] - cumulative[config + (first,)]
    return prob


def group_probability(network: BayesNet, sensitive, max_table_size: int) -> np.ndarray:
    """``Pr[A = a]`` of every joint state of the sensitive variables (C order), exactly.

    The assignments of the sensitive variables and their ancestors are enumerated;
    refused by name beyond ``max_table_size`` of them.

    Examples
    --------
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.ensembles._reweight import group_probability
    >>> group_probability(BayesNet.independent([[0.2, 0.8], [0.5, 0.5]]), [0], 100).tolist()
    [0.2, 0.8]
    """
    sensitive = list(sensitive)
    prefix = [v for v in network.topological_order() if v in ancestors(network, sensitive)]
    size = int(np.prod([network.cardinalities[v] for v in prefix]))
    if size > max_table_size:
        raise TableTooLargeError(
            f"The sensitive variables and their ancestors have {size:,} joint states, "
            f"above max_table_size={max_table_size:,}.")
    grids = np.indices([network.cardinalities[v] for v in prefix]).reshape(len(prefix), -1)
    states = np.full((size, network.n_variables), -1, dtype=np.int64)
    states[:, prefix] = grids.T
    nodes = {"states": states, "depth": np.full(size, len(prefix)),
             "level": np.zeros(size, dtype=np.int64), "block": np.zeros(size, dtype=np.int64)}
    prob = node_probability(network, prefix, nodes)
    cards = [network.cardinalities[v] for v in sensitive]
    if not sensitive:
        return np.array([prob.sum()])
    group = np.ravel_multi_index(tuple(states[:, v] for v in sensitive), cards)
    return np.bincount(group, prob, int(np.prod(cards)))


def same_structure(first: BayesNet, second: BayesNet) -> bool:
    """Whether two networks have the same variables' states and parents."""
    return (list(first.cardinalities) == list(second.cardinalities)
            and [tuple(p) for p in first.parents] == [tuple(p) for p in second.parents])


def reweighted_bounds(bounds: EnsembleBounds, network: BayesNet, sensitive,
                      max_table_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sound bounds per group under ``network`` from a search kept with its settled nodes.

    Parameters
    ----------
    bounds : EnsembleBounds
        The result of ``ensemble_bounds(..., keep_settled=True)`` under a network of
        the same structure as ``network``.
    network : BayesNet
        The other network (a posterior draw, a bootstrap replicate).
    sensitive : list of int
        The sensitive variables of the search.
    max_table_size : int
        Bound of the enumeration of the sensitive variables and their ancestors.

    Returns
    -------
    lower, upper, settled : ndarray of shape (n_groups,)

    Raises
    ------
    ValueError
        When the bounds kept no settled nodes, or a group has probability 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import ensemble_bounds, read_ensemble, refine_states
    >>> from skfairverify.ensembles._reweight import reweighted_bounds
    >>> from skfairverify.s3p import BayesNet
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 3, size=(300, 2)).astype(float)
    >>> model = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, X.sum(1) > 2)
    >>> ensemble = read_ensemble(model)
    >>> states = [refine_states(ensemble, 0), refine_states(ensemble, 1)]
    >>> uniform = BayesNet.independent([np.full(s.n_states, 1 / s.n_states) for s in states])
    >>> other = BayesNet.independent([np.arange(1.0, s.n_states + 1) / np.arange(
    ...     1.0, s.n_states + 1).sum() for s in states])
    >>> kept = ensemble_bounds(ensemble, uniform, states, [0], keep_settled=True)
    >>> lower, upper, _ = reweighted_bounds(kept, other, [0], 10_000)
    >>> direct = ensemble_bounds(ensemble, other, states, [0])
    >>> bool(np.allclose(lower, direct.lower) and np.allclose(upper, direct.upper))
    True
    """
    nodes = bounds.settled_nodes
    if nodes is None:
        raise ValueError("These bounds kept no settled nodes: run ensemble_bounds with "
                         "keep_settled=True (within max_table_size).")
    p_group = group_probability(network, sensitive, max_table_size)
    if np.any(p_group <= 0):
        raise ValueError("A group has probability 0 under the network.")
    prob = node_probability(network, bounds.order, nodes)
    n_groups = p_group.size
    positive = nodes["positive"]
    pos = np.bincount(nodes["group"][positive], prob[positive], n_groups)
    neg = np.bincount(nodes["group"][~positive], prob[~positive], n_groups)
    lower = np.clip(pos / p_group, 0.0, 1.0)
    upper = np.clip(1.0 - neg / p_group, lower, 1.0)
    settled = np.clip((pos + neg) / p_group, 0.0, 1.0)
    return lower, upper, settled
