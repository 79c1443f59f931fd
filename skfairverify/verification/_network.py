"""Learn the Bayesian network of the verifier's variables.

Structure: the K2 score, no edge into a sensitive variable, an edge from every
sensitive variable into every other variable (the exact engine keeps the sensitive
variables in its table anyway, so they cost no width) and at most ``max_indegree``
further parents. The search (``structure_search``, see :func:`resolve_structure_search`
and :mod:`._structure`): with ``max_indegree=1`` the optimum is found exactly, a
maximum-weight branching (tree-augmented network) of the pairwise K2 gains counted once
with numpy (``"tan"``); with more parents, hill climbing on cached numpy counts started
from that optimum (``"hill_climb"``); ``"pgmpy"`` keeps pgmpy's hill climbing
(``HillClimbSearch`` with ``ExpertKnowledge(forbidden_edges=..., required_edges=...)``),
the former default, for comparison. Many-state variables make the K2 search slow
and its counts sparse, so the structure is searched on a coarser copy of the
data (adjacent quantile bins merged into at most ``structure_bins`` states); the
parameters are then estimated on the full resolution with pgmpy's Bayesian
estimator and a BDeu prior of a small equivalent sample size, i.e. maximum
likelihood with light smoothing: no parent combination gives probability 0 to a
state, and a combination that never occurs gets a uniform distribution.

With ``sample_weight`` every count is a weighted count: the K2 score of the search
(``np.bincount`` weights; on the pgmpy path :class:`_WeightedK2` passes them to pgmpy's
``get_state_counts``, as pgmpy's ``K2`` has no weights), the parameter estimation
(pgmpy's estimator takes ``sample_weight``) and the marginals of the independent
network. Integer weights give the same counts as repeating the rows.

Every function works on *state codes*: an integer matrix whose column ``j`` holds
the state index (``0 .. cardinalities[j] - 1``) of variable ``j``.
"""

from __future__ import annotations

import math
import warnings
from math import lgamma

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ..s3p import BayesNet, TableTooLargeError
from ._parameters import family_counts
from ._structure import CHUNK_ROWS, StructureData, hill_climb, maximum_branching, pairwise_gains

__all__ = ["learn_network", "independent_network", "coarsen_codes", "check_learning_size",
           "resolve_structure_search", "STRUCTURE_SEARCHES"]

#: Values of ``learn_network(structure_search=...)``.
STRUCTURE_SEARCHES = ("auto", "tan", "hill_climb", "pgmpy")

#: Bytes pgmpy allocates per entry of a count table (structure search and parameter
#: estimation: pandas group-by, reindexing to all parent states, the prior and the
#: CPT). Measured with pgmpy 1.x: ~240 bytes per entry (peak RSS 2.6 GiB for 1e7
#: entries, 6.7 GiB for 2.7e7); rounded up.
PGMPY_BYTES_PER_ENTRY = 256
#: Bytes per entry of the exact engine's tables (int64/float64), the unit of
#: ``max_table_size``.
ENGINE_BYTES_PER_ENTRY = 8


def _worst_family(cards, sensitive_idx, max_indegree):
    """Largest ``card(v) * prod(card(parents))`` over the non-sensitive variables.

    The parents are the sensitive variables (required) and the ``max_indegree``
    largest other variables (all of them when ``max_indegree`` is None).
    Returns ``(entries, variable, parents)``.
    """
    sens = list(sensitive_idx)
    sens_size = math.prod(int(cards[a]) for a in sens)
    best = (0, None, [])
    for v in range(len(cards)):
        if v in sens:
            if int(cards[v]) > best[0]:
                best = (int(cards[v]), v, [])
            continue
        others = sorted((j for j in range(len(cards)) if j != v and j not in sens),
                        key=lambda j: -int(cards[j]))
        extra = others if max_indegree is None else others[:max_indegree]
        size = int(cards[v]) * sens_size * math.prod(int(cards[j]) for j in extra)
        if size > best[0]:
            best = (size, v, sens + extra)
    return best


def check_learning_size(names, cardinalities, sensitive, *, coarsenable=None,
                        structure_bins=5, max_indegree=2, max_table_size=50_000_000):
    """Refuse a network whose learning would allocate more than ``max_table_size`` allows.

    pgmpy counts the states of a variable jointly with those of its (candidate)
    parents: the sensitive variables are parents of every feature, plus up to
    ``max_indegree`` other variables (any number when None). The largest such count
    table, on the coarse states of the structure search and on the full states of the
    parameter estimation, must fit in the memory budget of the exact engine,
    ``max_table_size * 8`` bytes, at ``PGMPY_BYTES_PER_ENTRY`` bytes per entry.

    Parameters
    ----------
    names : list of str
        Variable names.
    cardinalities : list of int
        Number of states of each variable.
    sensitive : list of str
        Sensitive variables (parents of every other variable).
    coarsenable : list of bool or int, default=None
        Variables merged into ``structure_bins`` states for the structure search.
    structure_bins : int, default=5
        Largest number of states of a merged variable during the structure search.
    max_indegree : int or None, default=2
        Largest number of parents besides the sensitive variables.
    max_table_size : int, default=50_000_000
        Budget in entries of the exact engine (8 bytes each).

    Returns
    -------
    int
        Entries of the largest count table.

    Raises
    ------
    TableTooLargeError
        Naming the size, the variables that cause it and the parameters to change.

    Examples
    --------
    >>> from skfairverify.verification._network import check_learning_size
    >>> check_learning_size(["a", "x", "z"], [2, 10, 10], ["a"], max_indegree=1)
    200
    >>> try:
    ...     check_learning_size(["a", "b", "x", "z"], [100, 100, 10, 10], ["a", "b"],
    ...                         max_indegree=1, max_table_size=1_000_000)
    ... except MemoryError as exc:
    ...     print(type(exc).__name__)
    TableTooLargeError
    """
    names, cards = list(names), [int(c) for c in cardinalities]
    coarsenable = [False] * len(cards) if coarsenable is None else list(coarsenable)
    sens_idx = [names.index(s) for s in sensitive]
    coarse = _coarse_cardinalities(cards, coarsenable, structure_bins)
    entries, v, parents = max(_worst_family(cards, sens_idx, max_indegree),
                              _worst_family(coarse, sens_idx, max_indegree),
                              key=lambda t: t[0])
    budget = max_table_size * ENGINE_BYTES_PER_ENTRY
    n_bytes = entries * PGMPY_BYTES_PER_ENTRY
    if n_bytes > budget:
        raise TableTooLargeError(_learning_message(names, cards, sens_idx, entries, v,
                                                   parents, max_indegree, max_table_size))
    return entries


def _learning_message(names, cards, sens_idx, entries, v, parents, max_indegree,
                      max_table_size) -> str:
    n_bytes = entries * PGMPY_BYTES_PER_ENTRY
    family = ", ".join(f"{names[p]!r} ({cards[p]} states)" for p in parents[:8])
    if len(parents) > 8:
        family += ", ..."
    levels = ", ".join(f"{names[a]!r}: {cards[a]}" for a in sens_idx)
    return (
        f"Learning the Bayesian network refused: pgmpy would count {names[v]!r} "
        f"({cards[v]} states) jointly with its possible parents {family}, a table of "
        f"{entries:,} entries (about {n_bytes:,} bytes, {n_bytes / 2**30:.2f} GiB at "
        f"~{PGMPY_BYTES_PER_ENTRY} bytes per entry in pgmpy), above the budget of "
        f"max_table_size={max_table_size:,} ({max_table_size * ENGINE_BYTES_PER_ENTRY:,} "
        f"bytes). Lower max_indegree (now {max_indegree}), use sensitive features with "
        f"fewer levels ({levels}), fewer bins (max_bins / n_bins), network='independent', "
        "or raise max_table_size."
    )


def coarsen_codes(codes: np.ndarray, cardinalities, coarsenable, max_states: int):
    """Merge adjacent states of the coarsenable variables into at most ``max_states``.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_variables)
        State codes.
    cardinalities : list of int
        Number of states of each variable.
    coarsenable : list of bool or int
        Whether a variable has ordered states (quantile bins) that may be merged; an
        integer ``k``: its first ``k`` states are ordered, the others (a missing state)
        are kept as they are.
    max_states : int
        Largest number of states of a merged variable.

    Returns
    -------
    codes : ndarray
        Coarse codes (same shape), in the smallest integer type that holds them;
        ``codes`` itself when no variable is merged.
    """
    ordered = _ordered_counts(cardinalities, coarsenable)
    merged = [j for j, k in enumerate(ordered) if k > max_states]
    if not merged:
        return codes
    coarse = _coarse_cardinalities(cardinalities, coarsenable, max_states)
    out = np.array(codes, dtype=_smallest_code_dtype(max(coarse)), copy=True)
    for j in merged:  # in int64 one column at a time: code * max_states may overflow
        col = codes[:, j].astype(np.int64)
        k = ordered[j]
        # the ordered states merged; the states after them (a missing state) kept apart
        out[:, j] = np.where(col < k, (col * max_states) // k, max_states + col - k)
    return out


def _ordered_counts(cardinalities, coarsenable) -> list[int]:
    """Ordered (mergeable) states of every variable: all, none, or the first ``k``."""
    out = []
    for card, ok in zip(cardinalities, coarsenable):
        if isinstance(ok, (bool, np.bool_)):
            out.append(int(card) if ok else 0)
        else:
            out.append(min(int(ok), int(card)))
    return out


def _coarse_cardinalities(cardinalities, coarsenable, max_states: int) -> list[int]:
    """States of every variable once its ordered states are merged into ``max_states``."""
    return [int(c) if k <= max_states else max_states + int(c) - k
            for c, k in zip(cardinalities, _ordered_counts(cardinalities, coarsenable))]


def _smallest_code_dtype(n_states: int):
    """Smallest signed integer type holding the codes ``0 .. n_states - 1``."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_states - 1 <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _as_codes(codes, cardinalities) -> np.ndarray:
    """``codes`` as an integer matrix, without a copy when already of an integer type."""
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        if codes.size and np.any(codes != np.round(codes)):
            raise ValueError("codes must hold integer state indices.")
        codes = codes.astype(_smallest_code_dtype(max(cardinalities, default=1)))
    return codes


class _PgmpyWarnings(warnings.catch_warnings):
    """Silence pgmpy's known-harmless warnings only (by category and message).

    pgmpy 1.x emits no warning on the calls made here (``causal_discovery``,
    ``parameter_estimator``, ``structure_score``); its deprecation notices
    (``FutureWarning`` "... is deprecated ...") are the one known-harmless kind and are
    silenced. Anything else reaches the user.
    """

    def __enter__(self):
        out = super().__enter__()
        warnings.filterwarnings("ignore", message=r".*is deprecated", category=FutureWarning)
        return out


def _frame(codes: np.ndarray, names, cardinalities) -> pd.DataFrame:
    # pgmpy 1.x takes integer columns for continuous ones: use categoricals.
    return pd.DataFrame(
        {
            name: pd.Categorical(codes[:, j], categories=range(int(card)))
            for j, (name, card) in enumerate(zip(names, cardinalities))
        }
    )


def _weighted_k2(data: pd.DataFrame, sample_weight):
    """Return pgmpy's K2 score on weighted counts (plain ``"k2"`` without weights)."""
    from pgmpy.structure_score import K2
    from pgmpy.utils import get_state_counts

    if sample_weight is None:
        return "k2"

    class _WeightedK2(K2):
        # Same formula as pgmpy's K2._local_score, with N_ijk the weighted counts.
        def _local_score(self, variable, parents):
            counts = np.asarray(get_state_counts(
                self.data, self.state_names, variable, parents,
                sample_weight=sample_weight, reindex=False,
            ), dtype=float)
            cardinality = len(self.state_names[variable])
            n_parent_states = np.prod([len(self.state_names[p]) for p in parents])
            return float(np.sum(gammaln(counts + 1))
                         - np.sum(gammaln(counts.sum(axis=0) + cardinality))
                         + n_parent_states * lgamma(cardinality))

    return _WeightedK2(data)


def _learn_edges(codes, names, sensitive, max_indegree, sample_weight=None):
    from pgmpy.causal_discovery import ExpertKnowledge, HillClimbSearch

    # Constant variables carry no dependence; leave them out of the search.
    present = [np.unique(codes[:, j]).size > 1 for j in range(len(names))]
    keep = [j for j in range(len(names)) if present[j]]
    if len(keep) < 2:
        return []
    sub_names = [names[j] for j in keep]
    data = pd.DataFrame(
        {
            names[j]: pd.Categorical(codes[:, j], categories=np.unique(codes[:, j]))
            for j in keep
        }
    )
    sens = [s for s in sensitive if s in sub_names]
    forbidden = {(v, a) for a in sens for v in sub_names if v != a}
    # Every feature gets the sensitive variables as parents: the engine keeps them in
    # its table anyway (they index the groups), so these edges cost no table width,
    # and they carry Pr[X | A] directly. max_indegree bounds the other parents.
    required = {(a, v) for a in sens for v in sub_names if v not in sens}
    indegree = None if max_indegree is None else max_indegree + len(sens)
    with _PgmpyWarnings():
        search = HillClimbSearch(
            scoring_method=_weighted_k2(data, sample_weight),
            max_indegree=indegree,
            expert_knowledge=ExpertKnowledge(
                forbidden_edges=forbidden, required_edges=required
            ),
            return_type="dag",
            show_progress=False,
        )
        search.fit(data)
    return [(str(u), str(v)) for u, v in search.causal_graph_.edges()]


def _estimate(codes, names, cardinalities, edges, equivalent_sample_size,
              sample_weight=None) -> BayesNet:
    """BDeu posterior means of the CPTs of the network ``edges``, counted with numpy.

    The same estimate as pgmpy's ``DiscreteBayesianEstimator(prior_type="BDeu")``
    (:func:`_estimate_pgmpy`; equal to 1e-12 in the tests): every cell of a table gets
    the pseudo-count ``equivalent_sample_size / (card(v) * prod(card(parents)))``.
    One ``bincount`` per family on the codes as they are (no copy of the data); the
    parents of every variable in the order of ``names``.
    """
    index = {name: k for k, name in enumerate(names)}
    parents = [[] for _ in names]
    for u, v in edges:
        parents[index[v]].append(index[u])
    parents = [tuple(sorted(p)) for p in parents]
    cards = [int(c) for c in cardinalities]
    cpts = []
    for v, pa in enumerate(parents):
        counts = _chunked_family_counts(codes, cards, v, pa, sample_weight)
        counts += equivalent_sample_size / counts.size
        cpts.append(counts / counts.sum(axis=-1, keepdims=True))
    return BayesNet(cards, parents, cpts, names=list(names),
                    state_names=[list(range(c)) for c in cards])


def _chunked_family_counts(codes, cards, v, parents, sample_weight):
    """:func:`~._parameters.family_counts` summed over chunks of ``CHUNK_ROWS`` rows.

    The combined codes of a chunk (8 bytes per row) stay in cache, and their memory
    does not grow with the rows.
    """
    counts = None
    for start in range(0, max(len(codes), 1), CHUNK_ROWS):
        rows = slice(start, start + CHUNK_ROWS)
        weight = None if sample_weight is None else sample_weight[rows]
        part = family_counts(codes[rows], cards, v, parents, weight)
        counts = part if counts is None else counts + part
    return counts


def _estimate_pgmpy(codes, names, cardinalities, edges, equivalent_sample_size,
                    sample_weight=None) -> BayesNet:
    """pgmpy's BDeu estimate (the former path, kept with ``structure_search="pgmpy"``)."""
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    data = _frame(codes, names, cardinalities)
    state_names = {name: list(range(int(card))) for name, card in zip(names, cardinalities)}
    with _PgmpyWarnings():
        model = DiscreteBayesianNetwork(edges)
        model.add_nodes_from(names)
        model.fit(
            data,
            estimator=DiscreteBayesianEstimator(
                prior_type="BDeu",
                equivalent_sample_size=equivalent_sample_size,
                state_names=state_names,
            ),
            sample_weight=sample_weight,
        )
    return _reorder(BayesNet.from_pgmpy(model), names, cardinalities)


def _reorder(net: BayesNet, names, cardinalities) -> BayesNet:
    """Put the variables of ``net`` in the order ``names`` with states ``0..card-1``."""
    position = {name: k for k, name in enumerate(net.names)}
    new_index = {name: k for k, name in enumerate(names)}
    parents, cpts = [], []
    for name, card in zip(names, cardinalities):
        k = position[name]
        table = net.cpts[k]
        pa = [net.names[p] for p in net.parents[k]]
        # Reindex every axis so that state index == code.
        for axis, var in enumerate(pa + [name]):
            states = [int(s) for s in net.state_names[position[var]]]
            if states != list(range(len(states))):
                table = np.take(table, np.argsort(states), axis=axis)
        if table.shape[-1] != card:  # pragma: no cover - guarded by state_names
            raise RuntimeError(f"pgmpy returned {table.shape[-1]} states for {name!r}.")
        parents.append(tuple(new_index[p] for p in pa))
        cpts.append(table)
    return BayesNet(
        list(cardinalities),
        parents,
        cpts,
        names=list(names),
        state_names=[list(range(int(c))) for c in cardinalities],
    )


def resolve_structure_search(structure_search, max_indegree) -> str:
    """Name of the structure search that ``learn_network`` runs.

    Parameters
    ----------
    structure_search : {"auto", "tan", "hill_climb", "pgmpy"}
        ``"auto"``: ``"tan"`` when ``max_indegree == 1``, else ``"hill_climb"``.
        ``"tan"``: the exact optimum for ``max_indegree=1`` (maximum-weight branching of
        the pairwise K2 gains given the sensitive parents). ``"hill_climb"``: greedy
        hill climbing on cached numpy counts, started from that optimum.
        ``"pgmpy"``: pgmpy's ``HillClimbSearch`` with the K2 score (the former path).
    max_indegree : int or None
        Largest number of parents besides the sensitive variables.

    Returns
    -------
    str
        ``"tan"``, ``"hill_climb"`` or ``"pgmpy"``.

    Raises
    ------
    ValueError
        For an unknown name, or ``"tan"`` with ``max_indegree`` other than 1.

    Examples
    --------
    >>> from skfairverify.verification._network import resolve_structure_search
    >>> resolve_structure_search("auto", 1), resolve_structure_search("auto", 2)
    ('tan', 'hill_climb')
    """
    if structure_search not in STRUCTURE_SEARCHES:
        raise ValueError(f"structure_search must be one of {STRUCTURE_SEARCHES}, got "
                         f"{structure_search!r}.")
    if structure_search == "auto":
        return "tan" if max_indegree == 1 else "hill_climb"
    if structure_search == "tan" and max_indegree != 1:
        raise ValueError("structure_search='tan' finds the best network with one parent "
                         f"besides the sensitive ones; it needs max_indegree=1, got "
                         f"{max_indegree}. Use 'hill_climb' or 'auto'.")
    return structure_search


def _search_edges(codes, names, sensitive, max_indegree, sample_weight, search,
                  max_table_size):
    """Edges of the network found by the numpy search ``"tan"`` or ``"hill_climb"``."""
    data = StructureData(codes, [names.index(a) for a in sensitive], sample_weight)
    n = len(data.features)
    if max_indegree == 0 or n < 2:
        feature_parents = [set() for _ in range(n)]
    else:
        branching = maximum_branching(pairwise_gains(data, max_table_size))
        feature_parents = [set() if p < 0 else {int(p)} for p in branching]
        if search == "hill_climb":
            feature_parents = hill_climb(data, feature_parents, max_indegree)
    feat = [names[j] for j in data.features]
    edges = [(names[a], v) for a in data.sensitive for v in feat]
    edges += [(feat[p], feat[c]) for c, ps in enumerate(feature_parents) for p in sorted(ps)]
    return edges


def independent_network(codes, names, cardinalities, equivalent_sample_size=1.0,
                        sample_weight=None) -> BayesNet:
    """Independent variables with smoothed empirical marginals.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_variables)
        State codes.
    names : list of str
        Variable names.
    cardinalities : list of int
        Number of states of each variable.
    equivalent_sample_size : float, default=1.0
        Total pseudo-count spread uniformly over the states of each variable.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weight of every row in the counts (1 when None).

    Returns
    -------
    BayesNet
        A network without edges.
    """
    marginals = []
    for j, card in enumerate(cardinalities):
        counts = np.bincount(codes[:, j], weights=sample_weight, minlength=card).astype(float)
        counts += equivalent_sample_size / card
        marginals.append(counts / counts.sum())
    return BayesNet.independent(
        marginals, names=list(names), state_names=[list(range(int(c))) for c in cardinalities]
    )


def learn_network(
    codes,
    names,
    cardinalities,
    sensitive,
    *,
    coarsenable=None,
    structure_bins: int = 5,
    max_indegree: int | None = 2,
    equivalent_sample_size: float = 1.0,
    sample_weight=None,
    max_table_size: int = 50_000_000,
    structure_search: str = "auto",
) -> BayesNet:
    """Learn structure (K2 score) and smoothed parameters from state codes.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_variables)
        State codes.
    names : list of str
        Variable names.
    cardinalities : list of int
        Number of states of each variable.
    sensitive : list of str
        Variables that get no incoming edge and are parents of every other variable.
    coarsenable : list of bool or int, default=None
        Variables whose adjacent states may be merged for the structure search.
    structure_bins : int, default=5
        Largest number of states of a merged variable during the structure search.
    max_indegree : int or None, default=2
        Largest number of parents besides the sensitive variables.
    equivalent_sample_size : float, default=1.0
        BDeu equivalent sample size of the parameter prior.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weight of every row in the counts of the search and of the parameters.
    max_table_size : int, default=50_000_000
        Memory budget (in 8-byte entries) of the count tables, checked by
        :func:`check_learning_size` before pgmpy allocates anything, and of the
        pairwise counts of the structure search
        (:func:`~._structure.check_structure_size`).
    structure_search : {"auto", "tan", "hill_climb", "pgmpy"}, default="auto"
        The search (see :func:`resolve_structure_search`): ``"auto"`` finds the exact
        optimum when ``max_indegree=1`` and hill-climbs on cached counts otherwise;
        ``"pgmpy"`` runs pgmpy's hill climbing (the former path, much slower).

    Returns
    -------
    BayesNet
        Variables in the order of ``names``; state ``k`` is code ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._network import learn_network
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 3000)
    >>> x = (a + (rng.random(3000) < 0.2)) % 2          # depends on a
    >>> z = (x + (rng.random(3000) < 0.1)) % 2          # depends on x
    >>> net = learn_network(np.column_stack([a, x, z]), ["a", "x", "z"], [2, 2, 2], ["a"])
    >>> sorted(len(p) for p in net.parents)      # a: none; x and z: a and one feature
    [0, 1, 2]
    """
    codes = _as_codes(codes, cardinalities)
    if coarsenable is None:
        coarsenable = [False] * len(names)
    check_learning_size(names, cardinalities, sensitive, coarsenable=coarsenable,
                        structure_bins=structure_bins, max_indegree=max_indegree,
                        max_table_size=max_table_size)
    search = resolve_structure_search(structure_search, max_indegree)
    coarse = coarsen_codes(codes, cardinalities, coarsenable, structure_bins)
    if search == "pgmpy":
        edges = _learn_edges(coarse, list(names), list(sensitive), max_indegree, sample_weight)
    else:
        edges = _search_edges(coarse, list(names), list(sensitive), max_indegree,
                              sample_weight, search, max_table_size)
    estimate = _estimate_pgmpy if search == "pgmpy" else _estimate
    return estimate(codes, list(names), list(cardinalities), edges, equivalent_sample_size,
                    sample_weight)
