"""Sound anytime bounds of a tree ensemble's group rates under a Bayesian network.

``Pr[positive | A = a]`` is bounded by branching over the network's variables in a
topological order that starts with the sensitive variables and their ancestors. A
node of the search is an assignment of a prefix of that order; its probability is
exact (the product of the CPT entries along the prefix), and the sums over trees of
each tree's least and greatest leaf consistent with it bound the ensemble's score
(:class:`~skfairverify.ensembles._masks.LeafMasks`). A node whose least score is
positive adds its mass to the lower bound; one whose greatest score is negative is
settled negative; the others are split on the next variable, heaviest first, until
every group's bounds are within ``tolerance``, the budget ends, or nothing is left
unsettled (then lower == upper: exact).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from ..s3p import BayesNet, TableTooLargeError
from ..s3p._errors import DEFAULT_MAX_TABLE_SIZE
from ._masks import LeafMasks
from ._structure import TreeEnsemble

__all__ = ["EnsembleBounds", "ensemble_bounds"]

#: Words of leaf masks computed at once (512 KB a mask array: in cache, fastest).
_CHUNK_WORDS = 65_536
#: Fewest frontier nodes expanded in one batch.
_MIN_BATCH = 512
#: Levels of dyadic blocks a split descends (2: each block into four).
_STEP = 3
#: A batch expands at least 1 / _BATCH_SHARE of the open nodes.
_BATCH_SHARE = 16


class GroupTable:
    """A result with one entry per group in ``groups`` and each of ``_columns``."""

    _columns: tuple = ()

    def to_frame(self):
        """One row per group: its states, then each of the result's per-group arrays.

        Returns
        -------
        frame : pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame({"group": [tuple(g) for g in self.groups],
                             **{c: getattr(self, c) for c in self._columns}})


@dataclass(frozen=True)
class EnsembleBounds(GroupTable):
    """Sound bounds of ``Pr[positive | A = a]`` per group, from :func:`ensemble_bounds`.

    Attributes
    ----------
    groups : list of tuple
        Each group's states of the sensitive variables (state indices), in the order
        of ``sensitive_features``.
    lower, upper : ndarray of shape (n_groups,)
        Certain bounds of each group's positive rate under the network.
    settled : ndarray of shape (n_groups,)
        Share of each group's probability whose decision is settled (1: exact).
    nodes_expanded : ndarray of shape (n_groups,)
        Search nodes split, per group.
    group_probability : ndarray of shape (n_groups,)
        ``Pr[A = a]`` under the network.
    stopped : str
        Why the search ended: ``"finished"`` (exact), ``"tolerance"``, ``"max_nodes"``
        or ``"max_time"``.
    cpu_time : float
        CPU seconds spent (``time.process_time``).
    order : list of int
        The variables' branching order.
    positive_mass : ndarray of shape (n_groups,)
        Probability settled positive per group (``Pr[positive, settled, A = a]``).
    unsettled : dict of ndarray
        The unsettled nodes, for :func:`sample_unsettled`: ``states`` (n_nodes,
        n_variables; -1 where unassigned), ``depth`` (variables of ``order`` assigned),
        ``level`` and ``block`` (the dyadic block of the states of ``order[depth]`` the
        node is restricted to: ``block * 2**level`` to ``(block + 1) * 2**level - 1``),
        ``prob`` (the node's probability) and ``group``.
    settled_nodes : dict of ndarray or None
        With ``keep_settled=True``, the settled nodes in the same fields, and
        ``positive`` (the decision they settle): with ``unsettled`` a partition of the
        mass, which :func:`reweighted_bounds` reweighs under another network of the
        same structure. None otherwise, or when they would exceed ``max_table_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import ensemble_bounds, read_ensemble, refine_states
    >>> from skfairverify.s3p import BayesNet
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 3, size=(300, 2)).astype(float)
    >>> model = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, X.sum(1) > 2)
    >>> ensemble = read_ensemble(model)
    >>> states = [refine_states(ensemble, 0), refine_states(ensemble, 1)]
    >>> net = BayesNet.independent([np.full(s.n_states, 1 / s.n_states) for s in states])
    >>> result = ensemble_bounds(ensemble, net, states, sensitive_features=[0])
    >>> result.to_frame().columns.tolist()[:3]
    ['group', 'lower', 'upper']
    """

    groups: list
    lower: np.ndarray
    upper: np.ndarray
    settled: np.ndarray
    nodes_expanded: np.ndarray
    group_probability: np.ndarray
    stopped: str
    cpu_time: float
    order: list = field(default_factory=list)
    positive_mass: np.ndarray = field(default=None, repr=False)
    unsettled: dict = field(default=None, repr=False)
    settled_nodes: dict = field(default=None, repr=False)

    @property
    def width(self) -> np.ndarray:
        """``upper - lower`` per group."""
        return self.upper - self.lower

    @property
    def exact(self) -> bool:
        """Whether every group's rate is exact (lower == upper)."""
        return bool(np.all(self.lower == self.upper))

    _columns = ("lower", "upper", "width", "settled", "nodes_expanded", "group_probability")


# ------------------------------------------------------------------------ order
def ancestors(network: BayesNet, variables) -> set:
    """``variables`` and their ancestors (children come before parents in reverse order)."""
    found = set(variables)
    for v in reversed(network.topological_order()):
        if v in found:
            found.update(network.parents[v])
    return found


def branching_order(network: BayesNet, sensitive, importance) -> tuple[list, int]:
    """A topological order: the sensitive variables with their ancestors, then greedy.

    Among the variables whose parents are placed, the one the trees split on most
    near their roots (``importance``, splits weighted by ``2**-depth``) per state comes
    next: a variable of few states that settles much is split first.

    Returns
    -------
    order : list of int
    n_prefix : int
        Length of the prefix holding the sensitive variables and their ancestors.
    """
    prefix = ancestors(network, sensitive)
    head = [v for v in network.topological_order() if v in prefix]
    placed, order = set(head), list(head)
    while len(order) < network.n_variables:
        ready = [v for v in range(network.n_variables) if v not in placed
                 and all(p in placed for p in network.parents[v])]
        best = max(ready, key=lambda v: (importance[v] / network.cardinalities[v], -v))
        order.append(best)
        placed.add(best)
    return order, len(head)


# ------------------------------------------------------------------------ search
_FIELDS = ("states", "depth", "level", "block", "base", "prob", "group")


class _Frontier:
    """Search nodes (the unsettled ones, between steps).

    A node assigns the first ``depth`` variables of the order one state each
    (``states``, -1 where unassigned) and restricts the next one, ``order[depth]``, to
    the dyadic block ``block`` of level ``level`` of its states (the states
    ``block * 2**level`` to ``(block + 1) * 2**level - 1``); ``base`` is the probability
    of the assigned states, ``prob`` that of the node (``base`` times the block's
    conditional mass), ``group`` its group.
    """

    def __init__(self, *arrays):
        for name, array in zip(_FIELDS, arrays):
            setattr(self, name, array)

    def __len__(self):
        return self.prob.size

    def take(self, index):
        return _Frontier(*(getattr(self, f)[index] for f in _FIELDS))


def _split_step(n_level: int, step) -> int:
    """Levels one split of a variable of ``n_level`` levels descends."""
    if step == "half":
        return n_level if n_level <= 3 else -(-n_level // 2)
    return max(int(step), 1)


class _Search:
    """Best-first branching over one network, one ensemble, every group at once.

    A node's variable is split into ``2**step`` dyadic sub-blocks of its block (all its
    states at once for a variable the model does not read), so that a range of states
    that settles the decision is settled as one node. Nodes of every depth and level
    are split in one pass: each node's consistent leaves are the AND of one block's
    leaf set per variable (its state, its current block, or every state).
    """

    def __init__(self, ensemble, network, masks, order, sensitive, step, keep_limit=0):
        self.ensemble, self.network, self.masks = ensemble, network, masks
        # the settled nodes, kept while their entries stay within keep_limit
        self.kept = [] if keep_limit > 0 else None
        self.keep_limit, self.kept_entries = keep_limit, 0
        self.order, self.sensitive = order, list(sensitive)
        self.order_array = np.asarray(order, dtype=np.int64)
        self.n_groups = int(np.prod([network.cardinalities[v] for v in sensitive]))
        self.positive = np.zeros(self.n_groups)
        self.negative = np.zeros(self.n_groups)
        self.expanded = np.zeros(self.n_groups, dtype=np.int64)
        levels = masks.n_level
        self.first_level = np.append(levels[self.order_array], 0)
        self.step = np.array([_split_step(int(levels[v]), step) if masks.is_read[v]
                              else max(int(levels[v]), 1)
                              for v in range(network.n_variables)], dtype=np.int64)
        self.widest_split = max(min(1 << int(self.step[v]), c)
                                for v, c in enumerate(network.cardinalities))
        # CPTs with a zero column appended, and their cumulative sums from 0
        self.padded = [np.concatenate([c, np.zeros(c.shape[:-1] + (1,))], axis=-1)
                       for c in network.cpts]
        self.cumulative = [np.concatenate([np.zeros(c.shape[:-1] + (1,)),
                                           np.cumsum(c, axis=-1)], axis=-1)
                           for c in network.cpts]

    def enumerate_prefix(self, nodes: _Frontier, k: int) -> _Frontier:
        """Every child of nodes at depth ``k`` on each state of ``order[k]`` with mass > 0."""
        v = self.order[k]
        rows = self.network.cpts[v][tuple(nodes.states[:, p] for p in self.network.parents[v])]
        card = self.network.cardinalities[v]
        prob = (nodes.prob[:, None] * rows).ravel()
        keep = np.flatnonzero(prob > 0)
        parent = keep // card
        states = nodes.states[parent]
        states[:, v] = keep % card
        size = keep.size
        zeros = np.zeros(size, dtype=np.int64)
        return _Frontier(states, np.full(size, k + 1), np.full(size, self.first_level[k + 1]),
                         zeros, prob[keep], prob[keep], nodes.group[parent])

    def block_mass(self, states, v: int, level: np.ndarray, blocks: np.ndarray):
        """Conditional mass (n_rows, n_blocks) of blocks of ``v`` at each row's level."""
        card = self.network.cardinalities[v]
        rows = tuple(states[:, p] for p in self.network.parents[v])
        shape = (states.shape[0], card + 1)
        shift = level[:, None]
        first = np.minimum(blocks << shift, card)
        last = np.minimum((blocks + 1) << shift, card)
        cumulative = np.broadcast_to(self.cumulative[v][rows], shape)
        mass = (np.take_along_axis(cumulative, last, axis=1)
                - np.take_along_axis(cumulative, first, axis=1))
        single = level == 0  # one state: the CPT entry itself
        if single.any():
            padded = np.broadcast_to(self.padded[v][rows], shape)
            mass[single] = np.take_along_axis(padded[single], first[single], axis=1)
        return mass

    def node_index(self, nodes: _Frontier) -> np.ndarray:
        """Per node and variable, the table column of the node's block of its states."""
        n_vars = self.network.n_variables
        states = nodes.states
        index = np.where(states >= 0,
                         self.masks.block_index(np.arange(n_vars), 0, np.maximum(states, 0)),
                         self.masks.top)
        open_ = nodes.depth < n_vars
        rows = np.flatnonzero(open_)
        current = self.order_array[nodes.depth[rows]]
        index[rows, current] = self.masks.block_index(current, nodes.level[rows],
                                                      nodes.block[rows])
        return index

    def split(self, nodes: _Frontier):
        """The sub-blocks with mass > 0 of every node; their parents and table columns."""
        current = self.order_array[nodes.depth]
        below = np.maximum(nodes.level - self.step[current], 0)
        fan = 1 << (nodes.level - below)
        j = np.arange(int(fan.max()))
        blocks = nodes.block[:, None] * fan[:, None] + j
        mass = np.zeros(blocks.shape)
        for v in np.unique(current):
            rows = np.flatnonzero(current == v)
            mass[rows] = self.block_mass(nodes.states[rows], int(v), below[rows], blocks[rows])
        mass[j >= fan[:, None]] = 0.0  # beyond the node's own block
        prob = (nodes.base[:, None] * mass).ravel()
        keep = np.flatnonzero(prob > 0)
        parent = keep // j.size
        kids = _Frontier(nodes.states[parent], nodes.depth[parent], below[parent],
                         blocks.ravel()[keep], nodes.base[parent], prob[keep],
                         nodes.group[parent])
        return kids, parent, self.masks.block_index(current[parent], kids.level, kids.block)

    def advance(self, nodes: _Frontier) -> None:
        """Assign each node's variable whose block is one state; open the next variable."""
        n = len(self.order)
        while True:
            at = np.flatnonzero((nodes.level == 0) & (nodes.depth < n))
            if not at.size:
                return
            nodes.states[at, self.order_array[nodes.depth[at]]] = nodes.block[at]
            nodes.depth[at] += 1
            nodes.base[at] = nodes.prob[at]
            nodes.level[at] = self.first_level[nodes.depth[at]]
            nodes.block[at] = 0

    def settle(self, nodes: _Frontier, lower, upper) -> _Frontier:
        """Add the settled nodes to the bounds; return the others."""
        up = self.ensemble.positive(lower)
        down = ~self.ensemble.positive(upper)
        self.positive += np.bincount(nodes.group[up], nodes.prob[up], self.n_groups)
        self.negative += np.bincount(nodes.group[down], nodes.prob[down], self.n_groups)
        if self.kept is not None:
            self.keep(nodes, up, down)
        return nodes.take(~(up | down))

    def keep(self, nodes: _Frontier, up, down) -> None:
        """Keep the settled nodes, or stop keeping any once beyond ``keep_limit``."""
        done = up | down
        self.kept_entries += int(done.sum()) * (self.network.n_variables + 6)
        if self.kept_entries > self.keep_limit:
            self.kept = None
            return
        self.kept.append((nodes.take(done), up[done]))

    def settled_nodes(self) -> dict | None:
        """The settled nodes kept, with ``positive`` (None when not kept)."""
        if self.kept is None:
            return None
        whole, real = np.zeros(0, dtype=np.int64), np.zeros(0)
        empty = _Frontier(np.zeros((0, self.network.n_variables), dtype=np.int64), whole,
                          whole, whole, real, real, whole)
        nodes = _concat([k for k, _ in self.kept], empty)
        out = {f: getattr(nodes, f) for f in _FIELDS if f != "base"}
        out["positive"] = np.concatenate([p for _, p in self.kept] or [np.zeros(0, bool)])
        return out

    def _step(self) -> int:
        """Rows of masks (trees x words each) that fit in the working memory."""
        return max(1, _CHUNK_WORDS // (self.masks.n_trees * self.masks.n_words))

    def settle_fresh(self, nodes: _Frontier) -> _Frontier:
        """Settle nodes, their masks computed from their blocks."""
        masks, step, out = self.masks, self._step(), []
        for i in range(0, len(nodes), step):
            part = nodes.take(slice(i, i + step))
            out.append(self.settle(part, *masks.score_bounds(
                masks.block_mask(self.node_index(part)))))
        return _concat(out, nodes)

    def expand(self, nodes: _Frontier) -> _Frontier:
        """Split every node once; return the unsettled children."""
        np.add.at(self.expanded, nodes.group, 1)
        masks, out = self.masks, []
        step = max(1, self._step() // self.widest_split)
        for i in range(0, len(nodes), step):
            part = nodes.take(slice(i, i + step))
            base = masks.block_mask(self.node_index(part))
            kids, parent, index = self.split(part)
            mask = masks.refine(base[:, parent], index)
            self.advance(kids)
            out.append(self.settle(kids, *masks.score_bounds(mask)))
        return _concat(out, nodes)


def _concat(parts, like: _Frontier) -> _Frontier:
    """The frontier of all ``parts`` (an empty one shaped like ``like`` if none)."""
    if not parts:
        return like.take(slice(0, 0))
    return _Frontier(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))


def frontier_score_bounds(ensemble, network, masks, order, nodes: dict):
    """The least and greatest raw score of each node of a search's ``unsettled``.

    Parameters
    ----------
    ensemble : TreeEnsemble
    network : BayesNet
    masks : LeafMasks
        The ensemble's leaf tables over the search's states.
    order : list of int
        The search's branching order (``EnsembleBounds.order``).
    nodes : dict of ndarray
        The nodes (``EnsembleBounds.unsettled``).

    Returns
    -------
    lower, upper : ndarray of shape (n_nodes,)
    """
    search = _Search(ensemble, network, masks, order, [], _STEP)
    frontier = _Frontier(nodes["states"], nodes["depth"], nodes["level"], nodes["block"],
                         nodes["prob"], nodes["prob"], nodes["group"])
    step, lower, upper = search._step(), [np.zeros(0)], [np.zeros(0)]
    for i in range(0, len(frontier), step):
        low, high = masks.score_bounds(masks.block_mask(search.node_index(
            frontier.take(slice(i, i + step)))))
        lower.append(low)
        upper.append(high)
    return np.concatenate(lower), np.concatenate(upper)


def _groups_of(network, sensitive, states) -> np.ndarray:
    if not sensitive:
        return np.zeros(states.shape[0], dtype=np.int64)
    cards = [network.cardinalities[v] for v in sensitive]
    return np.ravel_multi_index(tuple(states[:, v] for v in sensitive), cards)


def _initial(search: _Search, n_prefix: int) -> tuple[_Frontier, np.ndarray]:
    """All assignments of the prefix, settled where they can be; ``Pr[A = a]``."""
    n = search.network.n_variables
    one = np.ones(1)
    zero = np.zeros(1, dtype=np.int64)
    nodes = _Frontier(np.full((1, n), -1, dtype=np.int64), zero, search.first_level[:1],
                      zero, one, one, zero)
    for k in range(n_prefix):
        nodes = search.enumerate_prefix(nodes, k)
    nodes.group = _groups_of(search.network, search.sensitive, nodes.states)
    group_probability = np.bincount(nodes.group, nodes.prob, search.n_groups)
    search.advance(nodes)
    return search.settle_fresh(nodes), group_probability


# ------------------------------------------------------------------- checking
def check_model(ensemble, network) -> None:
    """A TypeError unless ``ensemble`` is a TreeEnsemble and ``network`` a BayesNet."""
    if not isinstance(ensemble, TreeEnsemble):
        raise TypeError(f"ensemble must be a TreeEnsemble (read_ensemble(model)), got "
                        f"{type(ensemble).__name__}.")
    if not isinstance(network, BayesNet):
        raise TypeError(f"network must be a BayesNet, got {type(network).__name__}.")


def _check_inputs(ensemble, network, states, sensitive) -> list:
    check_model(ensemble, network)
    if len(states) != network.n_variables:
        raise ValueError(f"states has {len(states)} entries but the network has "
                         f"{network.n_variables} variables; give one FeatureStates each.")
    for v, st in enumerate(states):
        if st.n_states != network.cardinalities[v]:
            raise ValueError(
                f"Variable {network.names[v]!r} has {network.cardinalities[v]} states in "
                f"the network but {st.n_states} in its FeatureStates.")
    return _check_sensitive(network, sensitive)


def _check_sensitive(network, sensitive) -> list:
    """The sensitive variables' indices: in range, distinct, each of two states or more."""
    sensitive = [] if sensitive is None else [int(v) for v in np.atleast_1d(sensitive)]
    for v in sensitive:
        if not 0 <= v < network.n_variables:
            raise ValueError(f"Sensitive variable index {v} out of range: the network has "
                             f"{network.n_variables} variables.")
        if network.cardinalities[v] < 2:
            raise ValueError(f"Sensitive variable {network.names[v]!r} has a single state: "
                             "one group, nothing to compare.")
    if len(set(sensitive)) != len(sensitive):
        raise ValueError(f"sensitive_features names a variable twice: {sensitive}.")
    return sensitive


def _check_budget(network, order, n_prefix, max_nodes, max_table_size, widest) -> int:
    """The node budget, refused by name when its worst-case frontier is too large."""
    n = network.n_variables
    prefix_size = int(np.prod([network.cardinalities[v] for v in order[:n_prefix]]))
    per_node = n + 6  # int64 states, depth, level, block, base, probability, group
    if prefix_size * per_node > max_table_size:
        raise TableTooLargeError(
            f"The sensitive variables and their ancestors have {prefix_size:,} joint "
            f"states, each a search node of {per_node} entries: above "
            f"max_table_size={max_table_size:,}; raise max_table_size or use fewer "
            "sensitive variables (or fewer states of their ancestors).")
    affordable = max(1, (max_table_size // per_node - prefix_size) // max(widest - 1, 1))
    if max_nodes is None:
        return affordable
    if int(max_nodes) > affordable:
        raise TableTooLargeError(
            f"max_nodes={int(max_nodes):,} expansions could leave up to "
            f"{int(max_nodes) * (widest - 1) + prefix_size:,} unsettled nodes (a split "
            f"makes up to {widest} nodes), {per_node} entries each: above "
            f"max_table_size={max_table_size:,}; lower max_nodes (at most {affordable:,}) "
            "or raise max_table_size.")
    return int(max_nodes)


# ---------------------------------------------------------------------- driver
def _pick(frontier: _Frontier, weight: np.ndarray, open_groups: np.ndarray, budget: int):
    """The heaviest open nodes (relative to their group's probability), stable."""
    priority = np.where(open_groups[frontier.group], frontier.prob * weight[frontier.group],
                        -1.0)
    n_open = int((priority >= 0).sum())
    size = min(budget, n_open, max(_MIN_BATCH, n_open // _BATCH_SHARE))
    return np.argsort(-priority, kind="stable")[:size]


def _run(search, frontier, group_probability, tolerance, budget, deadline):
    """Expand batches until a stopping rule holds; return the reason and the frontier."""
    weight = 1.0 / group_probability
    stopped = "finished"
    while len(frontier):
        pending = np.bincount(frontier.group, frontier.prob, search.n_groups) * weight
        open_groups = pending > tolerance
        left = budget - int(search.expanded.sum())
        stopped = _stop_reason(open_groups, left, deadline)
        if stopped != "finished":
            break
        picked = _pick(frontier, weight, open_groups, left)
        rest = np.ones(len(frontier), dtype=bool)
        rest[picked] = False
        frontier = _concat([frontier.take(rest), search.expand(frontier.take(picked))],
                           frontier)
    return stopped, frontier


def _stop_reason(open_groups, left, deadline) -> str:
    if not open_groups.any():
        return "tolerance"
    if left <= 0:
        return "max_nodes"
    if deadline is not None and time.process_time() >= deadline:
        return "max_time"
    return "finished"


def _check_groups(network, sensitive, group_probability) -> None:
    empty = np.flatnonzero(group_probability <= 0)
    if empty.size:
        cards = [network.cardinalities[v] for v in sensitive]
        states = np.unravel_index(int(empty[0]), cards)
        desc = ", ".join(f"{network.names[v]}={network.state_names[v][int(s)]!r}"
                         for v, s in zip(sensitive, states))
        raise ValueError(f"The group ({desc}) has probability 0 under the network.")


def _result(search, frontier, group_probability, stopped, start, order) -> EnsembleBounds:
    pending = np.bincount(frontier.group, frontier.prob, search.n_groups)
    lower = search.positive / group_probability
    upper = np.minimum((search.positive + pending) / group_probability, 1.0)
    lower = np.minimum(lower, upper)
    settled = np.clip((search.positive + search.negative) / group_probability, 0.0, 1.0)
    settled[pending == 0] = 1.0
    cards = [search.network.cardinalities[v] for v in search.sensitive]
    groups = list(itertools.product(*(range(c) for c in cards)))
    return EnsembleBounds(groups=groups, lower=lower, upper=upper, settled=settled,
                          nodes_expanded=search.expanded.copy(),
                          group_probability=group_probability, stopped=stopped,
                          cpu_time=time.process_time() - start, order=list(order),
                          positive_mass=search.positive.copy(),
                          unsettled={f: getattr(frontier, f) for f in _FIELDS if f != "base"},
                          settled_nodes=search.settled_nodes())


def ensemble_bounds(ensemble, network, states, sensitive_features=None, *, tolerance=0.0,
                    max_nodes=None, max_time=None,
                    max_table_size=DEFAULT_MAX_TABLE_SIZE,
                    keep_settled=False) -> EnsembleBounds:
    """Sound anytime bounds of a tree ensemble's positive rate per group under a network.

    Branches over the network's variables in a topological order (the sensitive
    variables and their ancestors first): each partial assignment's probability is
    exact, and the sums of each tree's least and greatest leaf value consistent with
    it bound the raw score. Mass whose decision is settled goes to the bounds; the
    rest is split further, heaviest first, until every group's ``upper - lower`` is
    at most ``tolerance``, the budget ends, or everything is settled (exact).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model, from :func:`read_ensemble`.
    network : BayesNet
        Discrete network over the variables.
    states : list of FeatureStates
        Per network variable, its states as intervals of one input column of the
        model (:func:`refine_states`), so that each state sends every split one way;
        ``FeatureStates(None, [], n_states=k)`` for a variable the model does not read.
    sensitive_features : int or list of int, default=None
        The sensitive variables (indices in the network); one group per joint state.
        None: one group, the overall rate.
    tolerance : float, default=0.0
        Stop once every group's width is at most this; 0 runs to the exact rates.
    max_nodes : int, default=None
        Most search nodes to split; None: as many as ``max_table_size`` allows for the
        unsettled nodes. Refused by name beyond that.
    max_time : float, default=None
        CPU seconds after which the search stops (the bounds stay sound).
    max_table_size : int, default=50_000_000
        Largest number of entries of the leaf tables and of the unsettled nodes.
    keep_settled : bool, default=False
        Keep the settled nodes too (``settled_nodes``, while their entries stay within
        ``max_table_size``), so that :func:`reweighted_bounds` bounds the rates under
        other networks of the same structure without a new search.

    Returns
    -------
    bounds : EnsembleBounds
        ``lower``, ``upper``, ``settled`` share and ``nodes_expanded`` per group.

    Raises
    ------
    TableTooLargeError
        When the leaf tables, the enumeration of the sensitive variables or the node
        budget would exceed ``max_table_size`` (the message names the size, the cause
        and the parameter to change).
    ValueError
        For states that do not match the network, a split threshold that is not a
        state boundary, or a group of probability 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from skfairverify.ensembles import (
    ...     FeatureStates, ensemble_bounds, read_ensemble, refine_states)
    >>> from skfairverify.s3p import BayesNet
    >>> rng = np.random.RandomState(0)
    >>> A = rng.randint(0, 2, 500)
    >>> X = np.column_stack([rng.randint(0, 4, 500) + A, rng.randint(0, 3, 500)]).astype(float)
    >>> model = RandomForestClassifier(10, max_depth=3, random_state=0).fit(X, X.sum(1) > 3)
    >>> ensemble = read_ensemble(model)
    >>> states = [FeatureStates(None, [], n_states=2),
    ...           refine_states(ensemble, 0, edges=np.arange(5)),
    ...           refine_states(ensemble, 1, edges=np.arange(3))]
    >>> cards = [s.n_states for s in states]
    >>> net = BayesNet(cards, [(), (0,), ()],
    ...                [np.full(2, .5), np.full((2, cards[1]), 1 / cards[1]),
    ...                 np.full(cards[2], 1 / cards[2])])
    >>> result = ensemble_bounds(ensemble, net, states, sensitive_features=0)
    >>> result.stopped, result.exact
    ('finished', True)
    """
    start = time.process_time()
    sensitive = _check_inputs(ensemble, network, states, sensitive_features)
    masks = LeafMasks(ensemble, states, max_table_size)
    order, n_prefix = branching_order(network, sensitive, masks.importance)
    search = _Search(ensemble, network, masks, order, sensitive, _STEP,
                     keep_limit=max_table_size if keep_settled else 0)
    budget = _check_budget(network, order, n_prefix, max_nodes, max_table_size,
                           search.widest_split)
    frontier, group_probability = _initial(search, n_prefix)
    _check_groups(network, sensitive, group_probability)
    deadline = None if max_time is None else start + float(max_time)
    stopped, frontier = _run(search, frontier, group_probability, float(tolerance),
                             budget, deadline)
    return _result(search, frontier, group_probability, stopped, start, order)
