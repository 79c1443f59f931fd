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

__all__ = ["GroupWeights", "NodeWeights", "Reweighing", "group_probability", "node_probability",
           "reweighted_bounds", "same_structure"]


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
    return NodeWeights(network, order, nodes, np.inf).probability(network)


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
    return GroupWeights(network, sensitive, max_table_size).probability(network)


def _sensitive_prefix(network: BayesNet, sensitive, max_table_size: int) -> tuple:
    """``(prefix, nodes)``: the sensitive variables and ancestors, every joint state a node.

    Refused by name beyond ``max_table_size`` joint states.
    """
    prefix = [v for v in network.topological_order() if v in ancestors(network, sensitive)]
    size = int(np.prod([network.cardinalities[v] for v in prefix]))
    if size > max_table_size:
        raise TableTooLargeError(
            f"The sensitive variables and their ancestors have {size:,} joint states, "
            f"above max_table_size={max_table_size:,}.")
    grids = np.indices([network.cardinalities[v] for v in prefix]).reshape(len(prefix), -1)
    states = np.full((size, network.n_variables), -1, dtype=np.int64)
    states[:, prefix] = grids.T
    return prefix, {"states": states, "depth": np.full(size, len(prefix)),
                    "level": np.zeros(size, dtype=np.int64),
                    "block": np.zeros(size, dtype=np.int64)}


def same_structure(first: BayesNet, second: BayesNet) -> bool:
    """Whether two networks have the same variables' states and parents."""
    return (list(first.cardinalities) == list(second.cardinalities)
            and [tuple(p) for p in first.parents] == [tuple(p) for p in second.parents])


class NodeWeights:
    """The probability of fixed nodes under any network of one structure.

    The index arithmetic is done once: per variable of the order, the flat index of
    each node's CPT entry (an appended 1 for the nodes that do not assign it) and, for
    the nodes whose block is of that variable, the flat indices of the block's ends in
    the cumulative CPT. A network of the same structure (a posterior draw, a bootstrap
    replicate) then costs one gather and one product per variable and node, taken in
    the order of ``order`` (each assigned state's entry, then the block's mass).

    Parameters
    ----------
    network : BayesNet
        A network of the structure (its CPTs' shapes and parents are read).
    order : list of int
        The branching order.
    nodes : dict of ndarray
        ``states``, ``depth``, ``level`` and ``block`` of the nodes.
    max_table_size : int
        Bound of the index tables (``len(order) + 3`` entries a node).

    Raises
    ------
    TableTooLargeError
        When the index tables would exceed ``max_table_size`` entries.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.ensembles._reweight import NodeWeights
    >>> net = BayesNet.independent([[0.5, 0.5], [0.25, 0.25, 0.5]])
    >>> nodes = {"states": np.array([[1, -1]]), "depth": np.array([1]),
    ...          "level": np.array([1]), "block": np.array([0])}
    >>> NodeWeights(net, [0, 1], nodes, 100).probability(net).tolist()
    [0.25]
    """

    def __init__(self, network: BayesNet, order, nodes: dict, max_table_size: int):
        states, depth = nodes["states"], nodes["depth"]
        level, block = nodes["level"], nodes["block"]
        n_nodes, order = depth.size, [int(v) for v in order]
        if n_nodes * (len(order) + 3) > max_table_size:
            raise TableTooLargeError(
                f"Reweighing {n_nodes:,} search nodes takes {n_nodes * (len(order) + 3):,} "
                f"index entries, above max_table_size={max_table_size:,}.")
        self.order, self.n_nodes = order, n_nodes
        self.cardinalities = list(network.cardinalities)
        self.parents = [tuple(p) for p in network.parents]
        self.entries, self.ends = [], []
        for k, v in enumerate(order):
            shape, parents = network.cpts[v].shape, network.parents[v]
            size = int(np.prod(shape))
            rows = np.flatnonzero(depth > k)
            entry = np.full(n_nodes, size, dtype=np.int64)  # the appended 1
            entry[rows] = np.ravel_multi_index(
                tuple(states[rows, p] for p in parents) + (states[rows, v],), shape)
            self.entries.append(entry)
            here = np.flatnonzero(depth == k)
            config = tuple(states[here, p] for p in parents)
            card = shape[-1]
            ends = [np.ravel_multi_index(
                config + (np.minimum(edge << level[here], card),), shape[:-1] + (card + 1,))
                for edge in (block[here], block[here] + 1)]
            self.ends.append((here, ends[0], ends[1]))

    def probability(self, network: BayesNet) -> np.ndarray:
        """Each node's probability under ``network`` (of the structure), shape (n_nodes,)."""
        if (list(network.cardinalities) != self.cardinalities
                or [tuple(p) for p in network.parents] != self.parents):
            raise ValueError("The network's states or parents are not those the node "
                             "weights were planned for.")
        prob = np.ones(self.n_nodes)
        for v, entry, (here, first, last) in zip(self.order, self.entries, self.ends):
            cpt = network.cpts[v]
            prob *= np.append(cpt.ravel(), 1.0)[entry]
            if here.size:
                cumulative = np.concatenate([np.zeros(cpt.shape[:-1] + (1,)),
                                             np.cumsum(cpt, axis=-1)], axis=-1).ravel()
                prob[here] *= cumulative[last] - cumulative[first]
        return prob


class GroupWeights:
    """``Pr[A = a]`` of every group under any network of one structure, planned once.

    The joint states of the sensitive variables and their ancestors as nodes of
    :class:`NodeWeights`, summed per group; refused by name beyond ``max_table_size``
    of them.
    """

    def __init__(self, network: BayesNet, sensitive, max_table_size: int):
        self.sensitive = list(sensitive)
        prefix, nodes = _sensitive_prefix(network, self.sensitive, max_table_size)
        self.weights = NodeWeights(network, prefix, nodes, max_table_size)
        cards = [network.cardinalities[v] for v in self.sensitive]
        self.n_groups = int(np.prod(cards))
        self.group = (np.ravel_multi_index(tuple(nodes["states"][:, v] for v in self.sensitive),
                                           cards)
                      if self.sensitive else np.zeros(nodes["depth"].size, dtype=np.int64))

    def probability(self, network: BayesNet) -> np.ndarray:
        """``Pr[A = a]`` per group (C order of the sensitive variables' states)."""
        prob = self.weights.probability(network)
        if not self.sensitive:
            return np.array([prob.sum()])
        return np.bincount(self.group, prob, self.n_groups)


class Reweighing:
    """The bounds of one search under any network of its structure, planned once.

    Parameters
    ----------
    bounds : EnsembleBounds
        The result of ``ensemble_bounds(..., keep_settled=True)``.
    network : BayesNet
        The network of that search (its structure is read).
    sensitive : list of int
        The sensitive variables of the search.
    max_table_size : int
        Bound of the enumeration of the sensitive variables and their ancestors, and
        of the index tables (:class:`NodeWeights`).

    Raises
    ------
    ValueError
        When the bounds kept no settled nodes.
    TableTooLargeError
        Beyond ``max_table_size``.
    """

    def __init__(self, bounds: EnsembleBounds, network: BayesNet, sensitive,
                 max_table_size: int):
        nodes = bounds.settled_nodes
        if nodes is None:
            raise ValueError("These bounds kept no settled nodes: run ensemble_bounds "
                             "with keep_settled=True (within max_table_size).")
        self.groups = GroupWeights(network, sensitive, max_table_size)
        self.n_groups = self.groups.n_groups
        self.nodes = NodeWeights(network, bounds.order, nodes, max_table_size)
        # group and decision of every node, for one sum of each group's settled mass
        self.key = 2 * nodes["group"] + nodes["positive"]

    def bounds(self, network: BayesNet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``lower, upper, settled`` per group under ``network``, as :func:`reweighted_bounds`.

        Raises
        ------
        ValueError
            When a group has probability 0 under ``network``, or its structure is
            another.
        """
        p_group = self.groups.probability(network)
        if np.any(p_group <= 0):
            raise ValueError("A group has probability 0 under the network.")
        prob = self.nodes.probability(network)
        neg, pos = np.bincount(self.key, prob, 2 * self.n_groups).reshape(self.n_groups, 2).T
        lower = np.clip(pos / p_group, 0.0, 1.0)
        upper = np.clip(1.0 - neg / p_group, lower, 1.0)
        settled = np.clip((pos + neg) / p_group, 0.0, 1.0)
        return lower, upper, settled


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
    return Reweighing(bounds, network, sensitive, max_table_size).bounds(network)
