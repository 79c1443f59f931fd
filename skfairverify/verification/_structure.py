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

#: Target size in bytes of the combined codes (and weights) of one block of pairs in
#: :func:`pairwise_gains`.
STRUCTURE_BLOCK_BYTES = 32 * 2**20
#: Rows per chunk of the counting: the working arrays stay in cache and their memory
#: does not grow with the number of rows.
CHUNK_ROWS = 2**18


class StructureData:
    """Compact state codes of the features and of the sensitive combination.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_variables)
        Non-negative integer state codes.
    sensitive_idx : list of int
        Columns of the sensitive variables.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weight of every row (1 when None); rows of weight 0 are dropped.

    Attributes
    ----------
    features : list of int
        Columns of the features taking part in the search: not sensitive, at least
        two states of positive weight.
    r : ndarray of shape (n_features,)
        Their numbers of states (of positive weight).
    offsets : ndarray of shape (n_features + 1,)
        ``offsets[k]``: number of states of the features before ``k``.
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
        codes = np.asarray(codes)
        w = None
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=float)
            keep = w > 0
            codes, w = codes[keep], w[keep]
        lookups = []  # renumbering of the states of positive weight, per column
        for j in range(codes.shape[1]):
            present = np.bincount(codes[:, j], minlength=1) > 0
            lookups.append(np.cumsum(present) - 1)
        cards = [int(lk[-1]) + 1 for lk in lookups]
        self.sensitive = [j for j in sensitive_idx if cards[j] > 1]
        self.features = [j for j in range(codes.shape[1])
                         if j not in sensitive_idx and cards[j] > 1]
        self.r = np.array([cards[j] for j in self.features], dtype=np.intp)
        self.offsets = np.concatenate([[0], np.cumsum(self.r)]).astype(np.intp)
        self._codes, self._lookups = codes, lookups
        self.s, self.q = np.zeros(len(codes), dtype=np.intp), 1
        if self.sensitive:  # in chunks: one array of the rows, no temporaries of their size
            for rows in self.row_chunks(CHUNK_ROWS):
                part = self.s[rows]
                for j in self.sensitive:
                    part *= cards[j]
                    part += lookups[j][codes[rows, j]]
            present = np.bincount(self.s, minlength=1) > 0
            renumber = (np.cumsum(present) - 1).astype(np.intp)
            for rows in self.row_chunks(CHUNK_ROWS):
                self.s[rows] = renumber[self.s[rows]]
            self.q = int(present.sum())
        self.w = w

    @property
    def n_rows(self) -> int:
        return len(self.s)

    def columns(self, rows: slice, ks=None) -> np.ndarray:
        """Global state index ``offsets[k] + x_k`` of the features ``ks`` over ``rows``.

        ``x_k`` is in ``0 .. r[k] - 1`` (the states of positive weight, in order);
        Fortran order, one column per feature (all features when ``ks`` is None).
        """
        ks = range(len(self.features)) if ks is None else ks
        block = self._codes[rows]
        out = np.empty((len(block), len(ks)), dtype=np.intp, order="F")
        for col, k in enumerate(ks):
            lookup = self._lookups[self.features[k]] + self.offsets[k]
            np.take(lookup, block[:, self.features[k]], out=out[:, col])
        return out

    def row_chunks(self, chunk: int):
        """Slices of at most ``chunk`` rows covering the rows."""
        return [slice(a, a + chunk) for a in range(0, max(self.n_rows, 1), chunk)]

    def counts(self, child: int, parents=()) -> np.ndarray:
        """Counts of ``child`` by (sensitive combination, parents): shape ``(q, *r_p, r_c)``."""
        family = list(parents) + [child]
        dims = [self.q] + [int(self.r[p]) for p in family]
        flat = np.zeros(math.prod(dims))
        for rows in self.row_chunks(CHUNK_ROWS):
            g = self.columns(rows, family)
            code = self.s[rows].copy()
            for col, p in enumerate(family):
                code *= int(self.r[p])
                code += g[:, col] - self.offsets[p]
            w = None if self.w is None else self.w[rows]
            flat += np.bincount(code, weights=w, minlength=flat.size)
        return flat.reshape(dims)


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
def _chunk_rows(data: StructureData) -> int:
    """Rows per chunk of the pairwise counting.

    Chunks of :data:`CHUNK_ROWS` rows when the counts of all pairs (accumulated over
    the chunks, ``8 * q * sum_{i<j} r_i r_j`` bytes) fit in :data:`STRUCTURE_BLOCK_BYTES`;
    otherwise one chunk (the gains of a block are then computed as soon as it is
    counted).
    """
    r = data.r.astype(float)
    pairs = (r.sum() ** 2 - (r**2).sum()) / 2
    if data.n_rows > CHUNK_ROWS and 8 * data.q * pairs <= STRUCTURE_BLOCK_BYTES:
        return CHUNK_ROWS
    return max(data.n_rows, 1)


def _pair_bytes(data: StructureData) -> int:
    """Bytes per pair of the counting: one code and (with weights) one weight per row."""
    return _chunk_rows(data) * 8 * (1 if data.w is None else 2)


def _table_bytes(data: StructureData) -> int:
    """Bytes of the largest count table of one feature against the others.

    With the arrays derived from it (log-gamma, sums): ``4 * 8 * q * max(r) * sum(r)``;
    with several chunks, the counts of all pairs held across the chunks.
    """
    if not len(data.r):
        return 0
    held = STRUCTURE_BLOCK_BYTES if _chunk_rows(data) < data.n_rows else 0
    return 4 * 8 * data.q * int(data.r.max()) * int(data.r.sum()) + held


def check_structure_size(data: StructureData, max_table_size: int) -> int:
    """Refuse the pairwise counting when its memory exceeds ``max_table_size`` entries.

    The search holds two ``n_features x n_features`` float64 matrices (the gains and
    a copy in the branching) and, while counting, the combined codes of at least one
    pair (one integer, and with weights one float, per row) and the counts of one
    feature against a block of others jointly with the sensitive combination (at most
    ``q * max(r) * sum(r)`` entries, ``q`` the sensitive combinations, ``r`` the
    states), for a chunk of rows whose state codes are held too (8 bytes per row and
    feature; see :func:`_chunk_rows`). All must fit in ``8 * max_table_size`` bytes.

    Parameters
    ----------
    data : StructureData
        The compact codes.
    max_table_size : int
        Budget in 8-byte entries.

    Returns
    -------
    int
        Bytes of the working arrays of the smallest block (one pair).

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
    work = _chunk_rows(data) * 8 * n + _pair_bytes(data) + _table_bytes(data)
    budget = 8 * max_table_size
    if fixed + work > budget:
        raise TableTooLargeError(
            f"Learning the network's structure refused: counting the {n:,} features in "
            f"pairs over {data.n_rows:,} rows (with {data.q} sensitive combinations and up "
            f"to {r_max} states per feature) needs about {fixed + work:,} bytes "
            f"({(fixed + work) / 2**30:.2f} GiB: {fixed:,} for the pairwise gains, "
            f"{work:,} for the state codes of a chunk of rows, the codes of one pair and "
            f"the counts of one feature with the others), above the budget of "
            f"max_table_size={max_table_size:,} ({budget:,} bytes). Use fewer features or "
            "fewer bins, network='independent', or raise max_table_size."
        )
    return work


# ----------------------------------------------------------------------------- gains
def _block_table(g, key_i, m: int, start: int, stop: int, offsets, buf, tiled_w):
    """Counts ``C[(s, a), (j, b)]`` of a feature ``i`` against the features ``start:stop``.

    ``g`` holds the global state indices of a chunk of rows, ``key_i = s * r_i + a``,
    ``m = q * r_i``. One ``np.bincount`` of the combined codes
    ``(g_j - offsets[start]) * m + key_i`` over the rows of every feature ``j`` of the
    block.
    """
    width = int(offsets[stop] - offsets[start])
    out = buf[:, : stop - start]
    np.multiply(g[:, start:stop], m, out=out)
    out += (key_i - m * offsets[start])[:, None]
    flat = out.ravel(order="F")
    weights = None if tiled_w is None else tiled_w[: flat.size]
    table = np.bincount(flat, weights=weights, minlength=m * width)
    return table.astype(float, copy=False).reshape(width, m).T


def _block_gains(data: StructureData, i: int, start: int, stop: int, table):
    """K2 scores of ``j | S, i`` and ``i | S, j`` for the features ``j`` in ``start:stop``."""
    cuts = data.offsets[start:stop] - data.offsets[start]
    r_i, r_j = int(data.r[i]), data.r[start:stop].astype(float)

    def by_j(a):  # (..., width) -> (..., n_j): sum over the states of each j
        return np.add.reduceat(a, cuts, axis=-1)

    shared = by_j(gammaln(table + 1).sum(axis=0))
    # child j, parents (S, i): configurations (s, a), states of j
    n_sa = by_j(table)
    to_j = shared + (gammaln(r_j) - gammaln(n_sa + r_j)).sum(axis=0)
    # child i, parents (S, j): configurations (s, b), states of i
    n_sb = table.reshape(data.q, r_i, -1).sum(axis=1)
    to_i = shared + by_j((math.lgamma(r_i) - gammaln(n_sb + r_i)).sum(axis=0))
    return to_j, to_i


def pairwise_gains(data: StructureData, max_table_size: int = 50_000_000) -> np.ndarray:
    """K2 gains of every edge between two features, given the sensitive parents.

    ``gain[p, c] = K2(c | S, p) - K2(c | S)``: the change of the network's score
    when ``p`` becomes a parent of ``c``. The counts of every pair jointly with the
    sensitive combination are computed once: one ``np.bincount`` per feature ``i`` and
    block of features ``j > i`` (combined codes of about :data:`STRUCTURE_BLOCK_BYTES`),
    from which both orientations ``i -> j`` and ``j -> i`` are scored.

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
    chunks = data.row_chunks(_chunk_rows(data))
    held = {}

    def emit(i, start, stop, table):
        to_j, to_i = _block_gains(data, i, start, stop, table)
        gain[i, start:stop] = to_j - base[start:stop]
        gain[start:stop, i] = to_i - base[i]

    for rows in chunks:
        for i, start, stop, table in _chunk_tables(data, rows):
            if len(chunks) == 1:
                emit(i, start, stop, table)
            else:
                held[i, start, stop] = held.get((i, start, stop), 0) + table
    for (i, start, stop), table in held.items():
        emit(i, start, stop, table)
    return gain


def _chunk_tables(data: StructureData, rows: slice):
    """Yield ``(i, start, stop, counts)`` for every feature ``i`` and block ``start:stop``."""
    g = data.columns(rows)
    s, w = data.s[rows], None if data.w is None else data.w[rows]
    n = len(data.features)
    block = int(max(1, min(n - 1, STRUCTURE_BLOCK_BYTES // (len(g) * 8 * (1 + (w is not None))))))
    buf = np.empty((len(g), block), dtype=np.intp, order="F")
    tiled_w = None if w is None else np.tile(w, block)
    for i in range(n - 1):
        r_i = int(data.r[i])
        key_i = s * r_i + (g[:, i] - data.offsets[i])
        for start in range(i + 1, n, block):
            stop = min(start + block, n)
            yield i, start, stop, _block_table(g, key_i, data.q * r_i, start, stop,
                                               data.offsets, buf, tiled_w)


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
