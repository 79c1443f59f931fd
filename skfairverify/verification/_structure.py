"""Structure search of the verifier's network on vectorised counts.

The network learned by :func:`~._network.learn_network` has the sensitive variables
as parents of every feature and at most ``max_indegree`` further parents. Its score
is the K2 score (Cooper and Herskovits 1992), decomposable: a sum over the variables
of a local score of the variable and its parents.

* ``max_indegree=1`` (the verifier's default): every feature has the sensitive
  variables ``S`` and at most one other feature as parents. The score of such a
  network is ``sum_c K2(c | S) + sum_{edges p -> c} gain(p, c)`` with
  ``gain(p, c) = K2(c | S, p) - K2(c | S)``, so the best network is a maximum-weight
  *branching* (a forest of rooted trees: a tree-augmented network) of the directed
  graph of positive gains. K2 is not score-equivalent (``gain(p, c) != gain(c, p)``),
  so the optimum is found by Chu-Liu/Edmonds' algorithm on the directed gains rather
  than by an undirected spanning tree; it is exact for the score. All the gains come
  from the counts of every pair of features jointly with ``S``, computed once with one
  ``np.bincount`` per block of pairs (:func:`pairwise_gains`).
* ``max_indegree > 1`` or None: greedy hill climbing (add, remove, reverse an edge;
  the best strict improvement each step) started from that optimum, on local scores
  counted with ``np.bincount`` and cached per family (:func:`hill_climb`).

Every count is a weighted count when ``sample_weight`` is given (integer weights give
the counts of the repeated rows). Rows of weight 0 are left out, and the states of a
variable are its states of positive weight (as pgmpy's state names are the observed
states).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from ..s3p import TableTooLargeError

__all__ = [
    "STRUCTURE_BLOCK_BYTES",
    "StructureData",
    "check_structure_size",
    "k2_local_score",
    "maximum_branching",
    "pairwise_gains",
    "hill_climb",
    "network_score",
]

#: Target size in bytes of the working arrays of one block of pairs in
#: :func:`pairwise_gains` (combined codes, weights, count tables).
STRUCTURE_BLOCK_BYTES = 64 * 2**20


class StructureData:
    """Compact state codes of the features and of the sensitive combination.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_variables)
        State codes.
    sensitive_idx : list of int
        Columns of the sensitive variables.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weight of every row (1 when None); rows of weight 0 are dropped.

    Attributes
    ----------
    features : list of int
        Columns of the features taking part in the search: not sensitive, at least
        two states of positive weight.
    x : ndarray of shape (n_rows, n_features)
        Their codes renumbered ``0 .. r - 1`` over the states of positive weight.
    r : ndarray of shape (n_features,)
        Their numbers of states.
    s : ndarray of shape (n_rows,)
        Code of the combination of the sensitive variables (``0 .. q - 1``).
    q : int
        Number of sensitive combinations of positive weight.
    w : ndarray of shape (n_rows,) or None
        Weights of the kept rows.
    sensitive : list of int
        Columns of the sensitive variables with two states or more.
    """

    def __init__(self, codes, sensitive_idx, sample_weight=None):
        codes = np.asarray(codes, dtype=np.intp)
        w = None
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=float)
            keep = w > 0
            codes, w = codes[keep], w[keep]
        compact = [np.unique(codes[:, j], return_inverse=True) for j in range(codes.shape[1])]
        cards = [len(states) for states, _ in compact]
        sens = [j for j in sensitive_idx if cards[j] > 1]
        self.sensitive = sens
        self.features = [j for j in range(codes.shape[1])
                         if j not in sensitive_idx and cards[j] > 1]
        self.x = np.column_stack([compact[j][1] for j in self.features]).astype(np.intp) \
            if self.features else np.zeros((len(codes), 0), dtype=np.intp)
        self.r = np.array([cards[j] for j in self.features], dtype=np.intp)
        if sens:
            combo = np.ravel_multi_index([compact[j][1] for j in sens], [cards[j] for j in sens])
            _, self.s = np.unique(combo, return_inverse=True)
            self.q = int(self.s.max()) + 1
        else:
            self.s, self.q = np.zeros(len(codes), dtype=np.intp), 1
        self.s = self.s.astype(np.intp)
        self.w = w

    @property
    def n_rows(self) -> int:
        return len(self.s)

    def counts(self, child: int, parents=()) -> np.ndarray:
        """Counts of ``child`` by (sensitive combination, parents): shape ``(q, *r_p, r_c)``."""
        dims = [self.q] + [int(self.r[p]) for p in parents] + [int(self.r[child])]
        code = self.s.copy()
        for p in list(parents) + [child]:
            code *= int(self.r[p])
            code += self.x[:, p]
        flat = np.bincount(code, weights=self.w, minlength=math.prod(dims))
        return flat.astype(float).reshape(dims)


def k2_local_score(counts, r=None) -> float:
    """K2 local score of a variable from its counts by parent configuration.

    ``sum_j [lgamma(r) - lgamma(N_j + r) + sum_k lgamma(N_jk + 1)]`` over the parent
    configurations ``j`` (Cooper and Herskovits 1992), the states ``k`` on the last
    axis. A configuration never observed contributes 0.

    Parameters
    ----------
    counts : ndarray of shape (..., r)
        Counts ``N_jk``; the leading axes index the parent configurations.
    r : int, default=None
        Number of states of the variable (``counts.shape[-1]`` when None).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from math import lgamma
    >>> from skfairverify.verification._structure import k2_local_score
    >>> got = k2_local_score(np.array([[2.0, 1.0], [0.0, 0.0]]))
    >>> bool(np.isclose(got, lgamma(2) - lgamma(5) + lgamma(3) + lgamma(2)))
    True
    """
    counts = np.asarray(counts, dtype=float)
    r = counts.shape[-1] if r is None else r
    n_j = counts.sum(axis=-1)
    return float(gammaln(counts + 1).sum() + (math.lgamma(r) - gammaln(n_j + r)).sum())


# ----------------------------------------------------------------------------- memory
def _plan(data: StructureData, block_bytes: int):
    """Rows per chunk and features per block of the pairwise counting, and its bytes.

    One block of features ``I`` counts every pair ``(i, j)``, ``i`` in ``I``, ``j >= min(I)``,
    as one matrix product ``M^T H`` summed over chunks of rows: ``H`` is the one-hot
    matrix of the states of the features ``j`` (``chunk x sum r_j``), ``M`` that of the
    sensitive combination and the state of ``i`` (``chunk x q sum r_i``), and the
    product holds the counts of all those pairs. Returns ``(chunk, per_block, bytes)``
    where ``bytes`` counts ``H``, ``M`` and about four float64 arrays of the counts'
    size (the counts, their log-gamma and the reductions).
    """
    itemsize = 4 if data.w is None else 8
    total = int(data.r.sum()) if len(data.r) else 0
    r_max = int(data.r.max()) if len(data.r) else 1

    def size(chunk, per_block):
        height = data.q * r_max * per_block
        return chunk * (total + height) * itemsize + 4 * 8 * height * total

    chunk = max(1, min(data.n_rows, 256, 2**24))
    if size(chunk, 1) < block_bytes:
        chunk = max(chunk, min(data.n_rows, 2**24, (block_bytes // 2) // max(itemsize * total, 1)))
    per_block = 1
    while per_block < len(data.r) and size(chunk, per_block + 1) <= block_bytes:
        per_block += 1
    return chunk, per_block, size(chunk, per_block)


def check_structure_size(data: StructureData, max_table_size: int) -> int:
    """Refuse the pairwise counting when its memory exceeds ``max_table_size`` entries.

    The search holds two ``n_features x n_features`` float64 matrices (the gains and
    a copy in the branching) and, while counting, the one-hot states of a chunk of
    rows and the counts of at least one feature with every other feature jointly
    with the sensitive combination (``q * r_i * sum_j r_j`` entries, ``q`` the
    sensitive combinations, ``r`` the states). Both must fit in ``8 * max_table_size``
    bytes.

    Parameters
    ----------
    data : StructureData
        The compact codes.
    max_table_size : int
        Budget in 8-byte entries.

    Returns
    -------
    int
        Bytes of the working arrays of the smallest block (one feature, 256 rows).

    Raises
    ------
    TableTooLargeError
        Naming the size, its cause and the parameters to change.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import TableTooLargeError
    >>> from skfairverify.verification._structure import StructureData, check_structure_size
    >>> codes = np.random.default_rng(0).integers(0, 5, (1000, 200))
    >>> try:
    ...     check_structure_size(StructureData(codes, [0]), max_table_size=10_000)
    ... except TableTooLargeError as exc:
    ...     print(str(exc)[:53])
    Learning the network's structure refused: counting th
    """
    n = len(data.features)
    r_max = int(data.r.max()) if n else 1
    fixed = 2 * 8 * n * n
    need = fixed + _plan(data, 0)[2]
    budget = 8 * max_table_size
    if need > budget:
        raise TableTooLargeError(
            f"Learning the network's structure refused: counting the {n:,} features in "
            f"pairs over {data.n_rows:,} rows (with {data.q} sensitive combinations and up "
            f"to {r_max} states per feature) needs about {need:,} bytes "
            f"({need / 2**30:.2f} GiB: {fixed:,} for the pairwise gains, the rest for the "
            f"counts of one feature with all others), above the budget of max_table_size="
            f"{max_table_size:,} ({budget:,} bytes). Use fewer features or fewer bins, "
            "network='independent', or raise max_table_size."
        )
    return need - fixed


# ----------------------------------------------------------------------------- gains
def _onehot(data: StructureData, rows: slice, first: int, last: int, with_sensitive: bool):
    """One-hot states of the features ``first .. last - 1`` over ``rows``.

    With ``with_sensitive``, the columns are (sensitive combination, feature, state)
    and the entries are the row weights.
    """
    dtype = np.float32 if data.w is None else np.float64
    offsets = np.concatenate([[0], np.cumsum(data.r[first:last])])
    x = data.x[rows, first:last] + offsets[:-1]
    width = int(offsets[-1])
    n_rows = x.shape[0]
    if with_sensitive:
        x += (data.s[rows] * width)[:, None]
        width *= data.q
    out = np.zeros((n_rows, width), dtype=dtype)
    flat = (np.arange(n_rows) * width)[:, None] + x
    if with_sensitive and data.w is not None:
        np.put(out, flat, np.broadcast_to(data.w[rows, None], flat.shape))
    else:
        np.put(out, flat, 1)
    return out, offsets


def _block_counts(data: StructureData, first: int, last: int, chunk: int):
    """Counts ``C[(s, i, a), (j, b)]`` for ``i`` in ``first .. last - 1``, ``j >= first``."""
    counts = None
    for start in range(0, data.n_rows, chunk):
        rows = slice(start, start + chunk)
        onehot_j, off_j = _onehot(data, rows, first, len(data.r), False)
        onehot_i, off_i = _onehot(data, rows, first, last, True)
        part = (onehot_i.T @ onehot_j).astype(np.float64)
        counts = part if counts is None else counts + part
    return counts, off_i, off_j


def _block_gains(data: StructureData, first: int, last: int, chunk: int, base, gain):
    """Write ``gain[i, j]`` and ``gain[j, i]`` for ``i`` in the block, ``j >= first``."""
    counts, off_i, off_j = _block_counts(data, first, last, chunk)
    q, height = data.q, int(off_i[-1])
    r_i = data.r[first:last].astype(float)
    r_j = data.r[first:].astype(float)

    def by_i(a):  # (q * height, k) -> (n_i, k): sum over s and the states of i
        return np.add.reduceat(a.reshape(q, height, -1).sum(axis=0), off_i[:-1], axis=0)

    def by_j(a):  # (k, width) -> (k, n_j): sum over the states of j
        return np.add.reduceat(a, off_j[:-1], axis=1)

    shared = by_j(by_i(gammaln(counts + 1)))
    # child j, parents (S, i): configurations (s, i-state), states of j
    n_si = by_j(counts)
    to_j = shared + by_i(gammaln(r_j) - gammaln(n_si + r_j))
    # child i, parents (S, j): configurations (s, j-state), states of i
    n_sj = np.add.reduceat(counts.reshape(q, height, -1), off_i[:-1], axis=1)
    term = (gammaln(r_i)[:, None] - gammaln(n_sj + r_i[:, None])).sum(axis=0)
    to_i = shared + by_j(term)
    gain[first:last, first:] = to_j - base[first:]
    gain[first:, first:last] = (to_i - base[first:last, None]).T


def pairwise_gains(data: StructureData, max_table_size: int = 50_000_000) -> np.ndarray:
    """K2 gains of every edge between two features, given the sensitive parents.

    ``gain[p, c] = K2(c | S, p) - K2(c | S)``: the change of the network's score
    when ``p`` becomes a parent of ``c``. The counts of every pair jointly with the
    sensitive combination are computed once, as products of one-hot matrices summed
    over chunks of rows (float32 products of at most ``2**24`` rows are exact counts;
    float64 with weights), in blocks of about :data:`STRUCTURE_BLOCK_BYTES`.

    Parameters
    ----------
    data : StructureData
        The compact codes.
    max_table_size : int, default=50_000_000
        Memory budget in 8-byte entries, checked by :func:`check_structure_size`.

    Returns
    -------
    ndarray of shape (n_features, n_features)
        Gains; the diagonal is ``-inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._structure import StructureData, pairwise_gains
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 2000)
    >>> x0 = rng.integers(0, 3, 2000)
    >>> x1 = (x0 + (rng.random(2000) < 0.1)) % 3   # copies x0 90% of the time
    >>> x2 = rng.integers(0, 3, 2000)              # independent
    >>> gain = pairwise_gains(StructureData(np.column_stack([a, x0, x1, x2]), [0]))
    >>> bool(gain[0, 1] > 1000 and gain[0, 2] < 0)
    True
    """
    check_structure_size(data, max_table_size)
    n = len(data.features)
    gain = np.full((n, n), -np.inf)
    if n < 2:
        return gain
    base = np.array([k2_local_score(data.counts(c)) for c in range(n)])
    chunk, per_block, _ = _plan(data, STRUCTURE_BLOCK_BYTES)
    for first in range(0, n, per_block):
        _block_gains(data, first, min(first + per_block, n), chunk, base, gain)
    np.fill_diagonal(gain, -np.inf)
    return gain


# ----------------------------------------------------------------------------- branching
def _cycles(parent) -> list[np.ndarray]:
    """Cycles of the functional graph ``v -> parent[v]`` (``-1``: no parent)."""
    state = np.zeros(len(parent), dtype=np.int8)  # 0 new, 1 on the current path, 2 done
    cycles = []
    for v in range(len(parent)):
        path, u = [], v
        while u >= 0 and state[u] == 0:
            state[u] = 1
            path.append(u)
            u = int(parent[u])
        if u >= 0 and state[u] == 1:
            cycles.append(np.array(path[path.index(u):]))
        state[path] = 2
    return cycles


def _contract(W, best, cycles):
    """One Chu-Liu/Edmonds contraction of every cycle of ``best`` at once."""
    n = len(W)
    comp = np.full(n, -1)
    for k, cyc in enumerate(cycles):
        comp[cyc] = n + k  # provisional labels, renumbered below in node order
    comp[comp < 0] = np.flatnonzero(comp < 0)
    _, comp = np.unique(comp, return_inverse=True)
    in_cycle = np.zeros(n, dtype=bool)
    for cyc in cycles:
        in_cycle[cyc] = True
    penalty = np.where(in_cycle, W[best.clip(0), np.arange(n)], 0.0)
    adjusted = W - penalty[None, :]
    order = np.argsort(comp, kind="stable")
    starts = np.searchsorted(comp[order], np.arange(comp.max() + 1))
    small = np.maximum.reduceat(adjusted[order][:, order], starts, axis=0)
    small = np.maximum.reduceat(small, starts, axis=1)
    np.fill_diagonal(small, -np.inf)
    return small, comp, adjusted


def _arborescence(W) -> np.ndarray:
    """Maximum spanning arborescence rooted at node 0 (Chu-Liu/Edmonds, dense)."""
    levels = []
    while True:
        best = np.argmax(W, axis=0)
        best[0] = -1
        cycles = _cycles(best)
        if not cycles:
            break
        small, comp, adjusted = _contract(W, best, cycles)
        levels.append((best, comp, adjusted))
        W = small
    parent = best
    for best, comp, adjusted in reversed(levels):
        members = [np.flatnonzero(comp == k) for k in range(comp.max() + 1)]
        full = best.copy()
        for k in range(1, len(members)):
            into, src = members[k], members[parent[k]]
            block = adjusted[np.ix_(src, into)]
            a, b = np.unravel_index(np.argmax(block), block.shape)
            full[into[b]] = src[a]
        parent = full
    return parent


def maximum_branching(gain) -> np.ndarray:
    """Parents of the maximum-weight branching of the positive gains (Chu-Liu/Edmonds).

    A branching gives every node at most one parent and has no cycle; its weight is
    the sum of ``gain[parent, child]`` over its edges. Edges of gain ``<= 0`` are never
    used, so a node without a positive gain into it is a root (a forest).

    Parameters
    ----------
    gain : ndarray of shape (n, n)
        ``gain[p, c]``: weight of the edge ``p -> c`` (the diagonal is ignored).

    Returns
    -------
    ndarray of shape (n,)
        Parent of every node, ``-1`` for a root.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._structure import maximum_branching
    >>> gain = np.array([[0.0, 5.0, 1.0], [4.0, 0.0, 3.0], [-1.0, 2.0, 0.0]])
    >>> maximum_branching(gain).tolist()
    [-1, 0, 1]
    """
    gain = np.asarray(gain, dtype=float)
    n = len(gain)
    W = np.full((n + 1, n + 1), -np.inf)
    W[1:, 1:] = np.where(gain > 0, gain, -np.inf)
    W[0, 1:] = 0.0  # node 0: a virtual root; its edges stand for "no parent"
    np.fill_diagonal(W, -np.inf)
    return _arborescence(W)[1:] - 1


# ----------------------------------------------------------------------------- hill climbing
class _FamilyScores:
    """K2 local scores of the features given ``S`` and other features, cached."""

    def __init__(self, data: StructureData):
        self.data = data
        self.cache: dict = {}

    def __call__(self, child: int, parents) -> float:
        key = (child, tuple(sorted(parents)))
        if key not in self.cache:
            counts = self.data.counts(child, key[1])
            self.cache[key] = k2_local_score(counts)
        return self.cache[key]


def _descendants(parents: list[set]) -> np.ndarray:
    """``desc[u, v]``: a directed path ``u -> ... -> v`` exists."""
    n = len(parents)
    children = [[] for _ in range(n)]
    for c, ps in enumerate(parents):
        for p in ps:
            children[p].append(c)
    desc = np.zeros((n, n), dtype=bool)
    for v in _topological(parents)[::-1]:
        for ch in children[v]:
            desc[v] |= desc[ch]
            desc[v, ch] = True
    return desc


def _topological(parents: list[set]) -> list[int]:
    indeg = [len(ps) for ps in parents]
    children = [[] for _ in parents]
    for c, ps in enumerate(parents):
        for p in ps:
            children[p].append(c)
    order, stack = [], [v for v in range(len(parents)) if indeg[v] == 0]
    while stack:
        v = stack.pop()
        order.append(v)
        for ch in children[v]:
            indeg[ch] -= 1
            if indeg[ch] == 0:
                stack.append(ch)
    return order


def _best_move(parents, score, add_gain, max_indegree):
    """Best legal (delta, kind, p, c) among add, remove and reverse moves."""
    n = len(parents)
    desc = _descendants(parents)
    full = np.array([max_indegree is not None and len(ps) >= max_indegree for ps in parents])
    legal = ~desc.T & ~np.eye(n, dtype=bool)  # p -> c needs no path c -> ... -> p
    legal[:, full] = False
    for c, ps in enumerate(parents):
        legal[list(ps), c] = False
    masked = np.where(legal, add_gain, -np.inf)
    flat = int(np.argmax(masked))
    best = (masked.flat[flat], "add", *divmod(flat, n))
    for c, ps in enumerate(parents):
        for p in ps:
            rest = ps - {p}
            drop = score(c, rest) - score(c, ps)
            if drop > best[0]:
                best = (drop, "remove", p, c)
            if full[p] or _path_without(parents, p, c):
                continue
            flip = drop + score(p, parents[p] | {c}) - score(p, parents[p])
            if flip > best[0]:
                best = (flip, "reverse", p, c)
    return best


def _path_without(parents, p, c) -> bool:
    """A path ``p -> ... -> c`` other than the edge ``p -> c``."""
    stack, seen = [q for q in parents[c] if q != p], set()
    while stack:
        v = stack.pop()
        if v == p:
            return True
        if v not in seen:
            seen.add(v)
            stack.extend(parents[v])
    return False


def hill_climb(data: StructureData, start, max_indegree, *, tol=1e-8,
               max_iter=100_000) -> list[set]:
    """Greedy hill climbing on the K2 score with cached, vectorised local scores.

    Starting from ``start`` (feature parents of every feature), apply the add, remove
    or reverse move of an edge between features that raises the score most, while one
    raises it by more than ``tol``; no feature gets more than ``max_indegree`` feature
    parents (None: no bound) and the graph stays acyclic. The sensitive variables are
    parents of every feature throughout.

    Parameters
    ----------
    data : StructureData
        The compact codes.
    start : list of set of int
        Initial feature parents of every feature (acyclic).
    max_indegree : int or None
        Largest number of feature parents.
    tol : float, default=1e-8
        Smallest improvement of a move.
    max_iter : int, default=100_000
        Largest number of moves.

    Returns
    -------
    list of set of int
        Feature parents of every feature.
    """
    n = len(data.features)
    score = _FamilyScores(data)
    parents = [set(ps) for ps in start]
    if n < 2:
        return parents
    add_gain = np.full((n, n), -np.inf)

    def refresh(c):
        now = score(c, parents[c])
        for p in range(n):
            if p != c and p not in parents[c]:
                add_gain[p, c] = score(c, parents[c] | {p}) - now

    for c in range(n):
        refresh(c)
    for _ in range(max_iter):
        delta, kind, p, c = _best_move(parents, score, add_gain, max_indegree)
        if not delta > tol:
            break
        if kind == "add":
            parents[c].add(p)
        else:
            parents[c].discard(p)
            if kind == "reverse":
                parents[p].add(c)
                refresh(p)
        refresh(c)
    return parents


def network_score(data: StructureData, feature_parents) -> float:
    """K2 score of the features given ``S`` and their feature parents.

    The terms of the sensitive variables (no parents) are left out: they are the
    same for every structure searched.

    Parameters
    ----------
    data : StructureData
        The compact codes.
    feature_parents : list of iterable of int
        Feature parents of every feature.

    Returns
    -------
    float
    """
    return float(sum(k2_local_score(data.counts(c, tuple(sorted(ps))))
                     for c, ps in enumerate(feature_parents)))
