"""Per tree and per variable state, the leaves a state is consistent with, as bits.

A leaf is consistent with a partial assignment of the network's variables when every
split on its path agrees with the assigned states; splits on one column depend on one
variable's state only, so the leaves consistent with an assignment are the AND over
the assigned variables of each state's leaf set. Each tree's leaves are numbered by
increasing value, so the least and greatest consistent leaf values are the lowest and
highest set bits of that AND: :class:`LeafMasks` holds the bit tables and reads the
per-tree bounds off them.
"""

from __future__ import annotations

import numpy as np

from ..s3p import TableTooLargeError

__all__ = ["LeafMasks", "high_bit", "low_bit", "n_blocks_of", "n_levels"]

_ONE = np.uint64(1)


def _exponent(values: np.ndarray) -> np.ndarray:
    """The binary exponent of positive float64 values (their bits, no frexp)."""
    return (values.view(np.int64) >> 52) - 1023


def low_bit(words: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of non-empty multi-word bit sets (last axis: words).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles._masks import low_bit
    >>> low_bit(np.array([[0, 12]], dtype=np.uint64)).tolist()
    [66]
    """
    isolated = words & (~words + _ONE)  # a power of two, exact in float64
    index = _exponent(isolated.astype(np.float64))
    if words.shape[-1] == 1:
        return index[..., 0]
    index += 64 * np.arange(words.shape[-1])
    return np.where(words != 0, index, np.iinfo(np.int64).max).min(axis=-1)


def high_bit(words: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of non-empty multi-word bit sets (last axis: words).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles._masks import high_bit
    >>> high_bit(np.array([[2**63 + 5, 1], [2**53 - 1, 0]], dtype=np.uint64)).tolist()
    [64, 52]
    """
    # rounding to float64 may carry one bit up: corrected by one comparison
    index = np.minimum(_exponent(words.astype(np.float64)), 63)
    index -= (_ONE << np.maximum(index, 0).astype(np.uint64)) > words
    if words.shape[-1] == 1:
        return index[..., 0]
    index += 64 * np.arange(words.shape[-1])
    return np.where(words != 0, index, -1).max(axis=-1)


def n_levels(n_states: int) -> int:
    """Levels of the dyadic blocks of ``n_states`` states: the least ``L``, ``2**L >= n``."""
    return int(max(int(n_states) - 1, 0)).bit_length()


def n_blocks_of(n_states: int) -> int:
    """Number of dyadic blocks of ``n_states`` states over every level (at most 2n)."""
    return sum(-(-int(n_states) // 2 ** level) for level in range(n_levels(n_states) + 1))


def _block_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tree, the leaves of every dyadic block of states: the OR of its states' sets.

    Returns the blocks of every level side by side (level 0 the states themselves) and
    each level's offset into them.
    """
    levels = [table]
    while levels[-1].shape[1] > 1:
        last = levels[-1]
        pairs = last[:, 0::2].copy()
        pairs[:, : last.shape[1] // 2] |= last[:, 1::2]
        levels.append(pairs)
    offset = np.cumsum([0] + [lv.shape[1] for lv in levels[:-1]]).astype(np.int64)
    return np.ascontiguousarray(np.concatenate(levels, axis=1)), offset


def _flatten(ensemble):
    """All trees' nodes in one set of arrays, children as global indices."""
    sizes = [tree.children_left.size for tree in ensemble.trees]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    def cat(name):
        return np.concatenate([getattr(tree, name) for tree in ensemble.trees])
    shift = np.repeat(offsets, sizes)
    left, right = cat("children_left"), cat("children_right")
    left = np.where(left >= 0, left + shift, -1)
    right = np.where(right >= 0, right + shift, -1)
    tree_of = np.repeat(np.arange(len(sizes)), sizes)
    return (left, right, cat("feature"), cat("threshold"), cat("missing_left"),
            cat("value"), tree_of, offsets)


def _split_index(edges: np.ndarray, thresholds: np.ndarray, feature: int) -> np.ndarray:
    """The last state (index) that goes left at each threshold, checked to be an edge."""
    k = np.searchsorted(edges, thresholds, side="left")
    hit = np.zeros(thresholds.size, dtype=bool)
    if edges.size:
        hit = (k < edges.size) & (edges[np.minimum(k, edges.size - 1)] == thresholds)
    ok = hit | np.isposinf(thresholds)
    if not ok.all():
        bad = float(thresholds[~ok][0])
        raise ValueError(
            f"The split threshold {bad!r} on input column {feature} is not a boundary of "
            "its variable's states, so that split's direction is unknown in a state; make "
            "the states with refine_states(ensemble, feature) (every threshold an edge)."
        )
    return k


class LeafMasks:
    """Bit tables of the leaves each variable state is consistent with, per tree.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    states : list of FeatureStates
        One per network variable.
    max_table_size : int
        Largest number of table entries (64-bit words) allowed; refused beyond.
    """

    def __init__(self, ensemble, states, max_table_size):
        self.ensemble = ensemble
        nodes = _flatten(ensemble)
        left, right, feature, threshold, missing_left, value, tree_of, _ = nodes
        self.n_trees = ensemble.n_trees
        self.variable_of = self._variable_of_feature(states, feature)
        leaf = left < 0
        counts = np.bincount(tree_of[leaf], minlength=self.n_trees)
        self.max_leaves = int(counts.max())
        self.n_words = int(max(1, -(-self.max_leaves // 64)))
        self.read = [v for v, st in enumerate(states) if st.feature is not None
                     and np.any(feature == st.feature)]
        self._check_size(states, leaf, max_table_size)
        rank = self._leaf_ranks(value, tree_of, leaf)
        smin, smax, nan_ok, depth = self._constraints(states, nodes)
        self.importance = self._importance(states, feature, depth)
        self._global_table(states, {
            v: self._table(v, states[v], smin, smax, nan_ok, leaf, tree_of, rank)
            for v in self.read})

    def _global_table(self, states, tables) -> None:
        """Every variable's dyadic blocks in one table, after one row of every leaf.

        ``table[:, block_index(v, level, j)]`` is, per tree, the leaves consistent with
        block ``j`` of level ``level`` of variable ``v``'s states (the every-leaf row for
        a variable the model does not read); ``masks[v]`` views its single states.
        """
        n_vars = len(states)
        self.is_read = np.zeros(n_vars, dtype=bool)
        self.is_read[self.read] = True
        self.n_level = np.array([n_levels(st.n_states) for st in states], dtype=np.int64)
        self.block_base = np.zeros(n_vars, dtype=np.int64)
        self.level_offset = np.zeros((n_vars, int(self.n_level.max(initial=0)) + 1),
                                     dtype=np.int64)
        parts, position = [self.every_leaf[:, None]], 1
        for v in self.read:
            blocks, offset = _block_table(tables[v])
            self.block_base[v] = position
            self.level_offset[v, : offset.size] = offset
            parts.append(blocks)
            position += blocks.shape[1]
        self.table = np.ascontiguousarray(np.concatenate(parts, axis=1))
        self.masks = {v: self.table[:, self.block_base[v]: self.block_base[v]
                                    + states[v].n_states] for v in self.read}
        self.top = self.block_index(np.arange(n_vars), self.n_level, 0)

    # ------------------------------------------------------------------ building
    @staticmethod
    def _variable_of_feature(states, feature) -> dict:
        variable_of = {}
        for v, st in enumerate(states):
            if st.feature is None:
                continue
            if st.feature in variable_of:
                raise ValueError(f"Input column {st.feature} is described by two variables "
                                 f"({variable_of[st.feature]} and {v}).")
            variable_of[st.feature] = v
        missing = sorted(set(feature[feature >= 0].tolist()) - set(variable_of))
        if missing:
            raise ValueError(f"The trees split on input column {missing[0]} but no variable "
                             "describes it; give a FeatureStates for every column read.")
        return variable_of

    def _check_size(self, states, leaf, max_table_size) -> None:
        n_blocks = sum(n_blocks_of(states[v].n_states) for v in self.read)
        largest = max((states[v].n_states for v in self.read), default=0)
        # the blocks of each variable, then all of them in one table: twice at the peak
        size = 2 * n_blocks * self.n_trees * self.n_words + int(leaf.sum()) * largest
        if size > max_table_size:
            raise TableTooLargeError(
                f"The leaf tables of the ensemble would hold {size:,} entries "
                f"({self.n_trees} trees of up to {64 * self.n_words} leaves, "
                f"{self.n_words} 64-bit words each, over {n_blocks} dyadic blocks of the "
                f"states of {len(self.read)} variables), above "
                f"max_table_size={max_table_size:,}; "
                "raise max_table_size, or use fewer trees, fewer leaves or fewer states."
            )

    def _leaf_ranks(self, value, tree_of, leaf) -> np.ndarray:
        """Each leaf's rank by value in its tree; fills ``sorted_values`` (tree, rank)."""
        leaves = np.flatnonzero(leaf)
        order = leaves[np.lexsort((value[leaves], tree_of[leaves]))]
        first = np.searchsorted(tree_of[order], np.arange(self.n_trees))
        rank = np.full(value.size, -1, dtype=np.int64)
        rank[order] = np.arange(order.size) - first[tree_of[order]]
        self.sorted_values = np.zeros((self.n_trees, 64 * self.n_words))
        self.sorted_values[tree_of[order], rank[order]] = value[order]
        self.every_leaf = np.zeros((self.n_trees, self.n_words), dtype=np.uint64)
        bits = _ONE << (rank[order] % 64).astype(np.uint64)
        np.bitwise_or.at(self.every_leaf, (tree_of[order], rank[order] // 64), bits)
        return rank

    def _constraints(self, states, nodes):
        """Per node and variable: the allowed range of states and whether NaN is."""
        left, right, feature, threshold, missing_left, _, tree_of, offsets = nodes
        n, n_vars = left.size, len(states)
        top = np.array([max(st.n_states - 1 - int(st.missing), 0) for st in states])
        smin = np.zeros((n, n_vars), dtype=np.int32)
        smax = np.tile(top.astype(np.int32), (n, 1))
        nan_ok = np.ones((n, n_vars), dtype=bool)
        depth = np.zeros(n, dtype=np.int64)
        split = np.zeros(n, dtype=np.int64)
        for f, v in self.variable_of.items():
            at = np.flatnonzero(feature == f)
            split[at] = _split_index(states[v].edges, threshold[at], f)
        level = offsets[left[offsets] >= 0]
        while level.size:
            var = np.array([self.variable_of[f] for f in feature[level]], dtype=np.int64)
            for child, side in ((left[level], True), (right[level], False)):
                smin[child], smax[child], nan_ok[child] = smin[level], smax[level], nan_ok[level]
                depth[child] = depth[level] + 1
                if side:
                    smax[child, var] = np.minimum(smax[level, var], split[level])
                    nan_ok[child, var] &= missing_left[level]
                else:
                    smin[child, var] = np.maximum(smin[level, var], split[level] + 1)
                    nan_ok[child, var] &= ~missing_left[level]
            children = np.concatenate([left[level], right[level]])
            level = children[left[children] >= 0]
        return smin, smax, nan_ok, depth

    def _importance(self, states, feature, depth) -> np.ndarray:
        """Per variable, the splits on it weighted by 2**-depth (root splits weigh 1)."""
        importance = np.zeros(len(states))
        for f, v in self.variable_of.items():
            importance[v] = np.sum(0.5 ** depth[feature == f])
        return importance

    def _table(self, v, st, smin, smax, nan_ok, leaf, tree_of, rank) -> np.ndarray:
        """Per tree and state of ``v``, the leaves whose path allows the state.

        A leaf allows a range of states (and the missing one where ``nan_ok``); within
        a tree every leaf is its own bit, so the OR over the leaves covering a state is
        their XOR: each leaf toggles its bit at the first state of its range and at the
        one after the last, and a cumulative XOR over the states fills the ranges.
        """
        leaves = np.flatnonzero(leaf)
        low, high = smin[leaves, v].astype(np.int64), smax[leaves, v].astype(np.int64)
        leaf_rank = rank[leaves]
        bits = _ONE << (leaf_rank % 64).astype(np.uint64)
        word, tree = leaf_rank // 64, tree_of[leaves]
        table = np.zeros((self.n_trees, st.n_states + 1, self.n_words), dtype=np.uint64)
        some = low <= high
        for edge in (low[some], high[some] + 1):
            np.bitwise_xor.at(table, (tree[some], edge, word[some]), bits[some])
        table = np.bitwise_xor.accumulate(table, axis=1)[:, : st.n_states]
        if st.missing:
            table[:, -1] = 0
            ok = nan_ok[leaves, v]
            np.bitwise_xor.at(table, (tree[ok], st.n_states - 1, word[ok]), bits[ok])
        return np.ascontiguousarray(table)

    # ------------------------------------------------------------------ reading
    def block_index(self, variables, levels, blocks) -> np.ndarray:
        """Column of :attr:`table` of each (variable, level, block); 0 if not read.

        Block ``j`` of level ``l`` holds the states ``j * 2**l`` to
        ``(j + 1) * 2**l - 1`` (level 0: one state).
        """
        variables = np.asarray(variables)
        index = self.block_base[variables] + self.level_offset[variables, levels] + blocks
        return np.where(self.is_read[variables], index, 0)

    def refine(self, mask: np.ndarray, index: np.ndarray) -> np.ndarray:
        """``mask`` (per row) further restricted to one block per row.

        Parameters
        ----------
        mask : ndarray of uint64 of shape (n_trees, n_rows, n_words)
            Consistent leaves so far.
        index : ndarray of int of shape (n_rows,)
            Each row's block, a column of :attr:`table` (:meth:`block_index`).

        Returns
        -------
        mask : ndarray of uint64 of shape (n_trees, n_rows, n_words)
        """
        return mask & self.table[:, index]

    def block_mask(self, index: np.ndarray) -> np.ndarray:
        """The leaves consistent with one block of every read variable, per row.

        Parameters
        ----------
        index : ndarray of int of shape (n_rows, n_variables)
            Per row and variable, a column of :attr:`table` (:meth:`block_index`).

        Returns
        -------
        mask : ndarray of uint64 of shape (n_trees, n_rows, n_words)
        """
        columns = [v for v in self.read]
        out = self.table[:, index[:, columns[0]]] if columns else np.repeat(
            self.every_leaf[:, None], index.shape[0], axis=1)
        for v in columns[1:]:
            out &= self.table[:, index[:, v]]
        return out

    def mask(self, states: np.ndarray, assigned) -> np.ndarray:
        """The consistent leaves of each row's assignment of the ``assigned`` variables.

        Parameters
        ----------
        states : ndarray of shape (n_rows, n_variables)
            States of the variables.
        assigned : iterable of int
            The variables assigned (the others are free).

        Returns
        -------
        mask : ndarray of uint64 of shape (n_trees, n_rows, n_words)
            Trees first, so that each tree's row is contiguous.
        """
        out = np.repeat(self.every_leaf[:, None], states.shape[0], axis=1)
        for v in assigned:
            if v in self.masks:
                out &= self.masks[v][:, states[:, v]]
        return out

    def score(self, mask: np.ndarray) -> np.ndarray:
        """The raw score of rows whose masks hold one leaf per tree (full assignments).

        Parameters
        ----------
        mask : ndarray of uint64 of shape (n_trees, n_rows, n_words)
            One consistent leaf per tree and row (:meth:`mask` of every variable).

        Returns
        -------
        score : ndarray of shape (n_rows,)
        """
        offset = np.arange(self.n_trees)[:, None] * self.sorted_values.shape[1]
        values = self.sorted_values.ravel()[low_bit(mask) + offset]
        return self.ensemble.sum_scores(values, trees_first=True)

    def score_bounds(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The least and greatest raw score of the ensemble over consistent leaves.

        Parameters
        ----------
        mask : ndarray of uint64 of shape (n_trees, n_rows, n_words)
            Consistent leaves (:meth:`mask`).

        Returns
        -------
        lower, upper : ndarray of shape (n_rows,)
        """
        flat = self.sorted_values.ravel()
        offset = np.arange(self.n_trees)[:, None] * self.sorted_values.shape[1]
        if self.n_words == 1 and self.max_leaves <= 53:
            # one word of at most 53 bits: exact in float64, read as int64; the binary
            # exponent of the lowest bit and of the whole word are the two ranks
            words = mask[..., 0].view(np.int64)
            shift = offset - 1023
            lowest = (words & -words).astype(np.float64).view(np.int64) >> 52
            highest = words.astype(np.float64).view(np.int64) >> 52
            lo = np.take(flat, lowest + shift)
            hi = np.take(flat, highest + shift)
        else:
            lo = flat[low_bit(mask) + offset]
            hi = flat[high_bit(mask) + offset]
        return self.ensemble.sum_scores(lo, trees_first=True), \
            self.ensemble.sum_scores(hi, trees_first=True)
