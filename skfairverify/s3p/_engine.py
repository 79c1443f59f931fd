"""Exact distribution of an integer score over a Bayesian network.

The engine computes ``Pr[sum_i w_i[X_i] >= t | evidence]`` by a sum-product
dynamic programme over a table indexed by the states of the *frontier*
(processed variables that still have an unprocessed child) and the partial
score. Variables are processed parents-first; a variable is summed out as soon
as its last child has been processed, so the cost is exponential in the
frontier width only. Mass whose outcome is already decided (the partial score
reaches the threshold even if every remaining variable takes its smallest
weight, or cannot reach it even with the largest ones) is moved to two
accumulators, as FVGM's terminating conditions do, which keeps the score axis
short. Variables not connected to any evidence variable are processed first
(their decided mass is independent of the evidence, so it is pruned at once and
weighted by the evidence probability at the end): with a group table they are
processed once for all groups.

When the frontier is wide (trees with many states, for instance), the
variable-elimination engine of :mod:`._elimination` (score axes convolved,
treewidth instead of frontier width) is used if its simulated plan is cheaper;
both plans are simulated on sizes only before anything is allocated.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ._elimination import elimination_order, run_elimination
from ._network import BayesNet, _as_int

DEFAULT_MAX_TABLE_SIZE = 50_000_000


class TableTooLargeError(MemoryError):
    """The exact computation would need a table larger than ``max_table_size``.

    The message names the frontier (the variables kept jointly in the table),
    the range of partial scores and the memory the table would need, and
    suggests what to reduce. It is raised before any large allocation.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, TableTooLargeError, positive_probability
    >>> net = BayesNet.independent([[0.5, 0.5]] * 3)
    >>> w = [np.array([0, 100]), np.array([0, 37]), np.array([0, 51])]
    >>> try:
    ...     positive_probability(w, 90, net, max_table_size=10)
    ... except TableTooLargeError as exc:
    ...     print(type(exc).__name__)
    TableTooLargeError
    """


# --------------------------------------------------------------------- checks
def _check_network(network) -> BayesNet:
    if not isinstance(network, BayesNet):
        raise TypeError(
            f"network must be a skfairverify.s3p.BayesNet, got {type(network).__name__}; "
            "use BayesNet.from_pgmpy(model) for a pgmpy network."
        )
    return network


def _check_weights(weights, network: BayesNet) -> list[np.ndarray]:
    if len(weights) != network.n_variables:
        raise ValueError(
            f"weights has {len(weights)} entries but the network has "
            f"{network.n_variables} variables; give one weight vector per variable."
        )
    out = []
    for i, w in enumerate(weights):
        name = network.names[i]
        arr = np.asarray(w)
        if arr.ndim != 1 or arr.shape[0] != network.cardinalities[i]:
            raise ValueError(
                f"weights of variable {name!r} must have one entry per state "
                f"({network.cardinalities[i]}), got shape {arr.shape}."
            )
        if arr.dtype.kind in "iu":
            if arr.size and int(arr.max()) > _INT64_MAX:
                raise _overflow_error(
                    f"weights of variable {name!r} reach {int(arr.max()):,}, beyond int64"
                )
            out.append(arr.astype(np.int64))
            continue
        if arr.dtype.kind == "O" and all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in arr
        ):
            big = max((abs(int(x)) for x in arr), default=0)
            if big > _INT64_MAX:
                raise _overflow_error(
                    f"weights of variable {name!r} reach {big:,} in magnitude, beyond int64"
                )
            out.append(arr.astype(np.int64))
            continue
        if arr.dtype.kind not in "fb":
            raise ValueError(f"weights of variable {name!r} must be integers, got {arr.dtype}.")
        arr = arr.astype(np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"weights of variable {name!r} contain NaN or infinite values.")
        if np.any(arr != np.round(arr)):
            raise ValueError(
                f"weights of variable {name!r} must be integer-valued, got {arr.tolist()}; "
                "scale and round them first (e.g. IntegerWeightScaler)."
            )
        if np.any(np.abs(arr) > 2.0**53):
            raise ValueError(f"weights of variable {name!r} are too large to be exact.")
        out.append(arr.astype(np.int64))
    return out


_INT64_MAX = int(np.iinfo(np.int64).max)
# Partial scores (after shifting each variable's weights to start at 0 and dividing
# by their common divisor) must stay below this bound so that every sum and
# difference of scores in the engines is exact in int64.
_MAX_SCORE_RANGE = 2**62


def _overflow_error(cause: str) -> OverflowError:
    return OverflowError(
        f"{cause}: the partial sums of the integer weights would overflow the exact "
        f"int64 arithmetic of the engine (score range limit 2**62 = {_MAX_SCORE_RANGE:,}). "
        "Use smaller integer weights: a smaller multiplier (IntegerWeightScaler, "
        "FairnessVerifier max_multiplier) or weights rescaled and rounded again."
    )


def _check_threshold(threshold) -> int:
    if isinstance(threshold, float) and not math.isfinite(threshold):
        raise ValueError(f"threshold must be an integer, got {threshold!r}.")
    return _as_int(threshold, "threshold")


def _check_evidence(evidence, network: BayesNet) -> dict[int, int]:
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise TypeError(
            f"evidence must be a dict {{variable index: state index}}, got "
            f"{type(evidence).__name__}."
        )
    out = {}
    for var, state in evidence.items():
        var = _check_var(var, network, "evidence")
        state = _as_int(state, f"Evidence state of variable {network.names[var]!r}")
        if not 0 <= state < network.cardinalities[var]:
            raise ValueError(
                f"Evidence state {state} of variable {network.names[var]!r} is out of range "
                f"[0, {network.cardinalities[var] - 1}]."
            )
        out[var] = state
    return out


def _check_var(var, network: BayesNet, what: str) -> int:
    var = _as_int(var, f"Variable index in {what}")
    if not 0 <= var < network.n_variables:
        raise ValueError(
            f"Variable index {var} in {what} is out of range [0, {network.n_variables - 1}]."
        )
    return var


def _check_vars(variables, network: BayesNet, what: str) -> list[int]:
    out = []
    for v in variables:
        v = _check_var(v, network, what)
        if v in out:
            raise ValueError(f"Variable {network.names[v]!r} appears twice in {what}.")
        out.append(v)
    return out


def _check_max_table_size(max_table_size) -> int:
    size = _as_int(max_table_size, "max_table_size")
    if size < 1:
        raise ValueError(f"max_table_size must be a positive integer, got {size}.")
    return size


def _check_order(order, network: BayesNet) -> list[int]:
    order = [_check_var(v, network, "order") for v in order]
    if sorted(order) != list(range(network.n_variables)):
        raise ValueError("order must be a permutation of all variable indices.")
    position = {v: k for k, v in enumerate(order)}
    for v in order:
        for p in network.parents[v]:
            if position[p] > position[v]:
                raise ValueError(
                    f"order is not topological: {network.names[v]!r} comes before its "
                    f"parent {network.names[p]!r}."
                )
    return order


# ------------------------------------------------------------------ problem
class _Problem:
    """Weights, tables and threshold after evidence slicing and normalisation.

    Each variable keeps only its allowed states (all, or the evidence state);
    its weights are shifted so that the smallest is 0 and all weights are
    divided by their greatest common divisor, with the threshold adjusted
    exactly (integer arithmetic), so the score axis is as short as possible.
    The range of the partial scores (the sum of the shifted spans) is checked
    against ``_MAX_SCORE_RANGE`` before anything else (OverflowError), and the
    threshold is clipped to ``[0, range + 1]``, which decides every score alike.
    """

    def __init__(self, weights, threshold, network, evidence, keep):
        self.network = network
        self.evidence = evidence
        self.keep = keep
        n = network.n_variables
        allowed = []
        for i in range(n):
            if i in evidence:
                allowed.append(np.array([evidence[i]]))
            else:
                allowed.append(np.arange(network.cardinalities[i]))
        self.allowed = allowed
        raw = [weights[i][allowed[i]] for i in range(n)]
        mins = [int(r.min()) for r in raw]
        shifted = _shift(raw, mins, network.names)
        t = threshold - sum(mins)
        g = int(np.gcd.reduce(np.concatenate(shifted))) if shifted else 0
        if g > 1:
            shifted = [s // g for s in shifted]
            t = -((-t) // g)
        self.weights = shifted
        self.spans = [int(s.max()) for s in shifted]
        total = sum(self.spans)
        if total > _MAX_SCORE_RANGE:
            raise _overflow_error(
                f"the partial scores span {total:,} values (about 2**{math.log2(total):.1f}"
                + (f", after dividing the weights by their common divisor {g}" if g > 1 else "")
                + ")"
            )
        self.threshold = min(max(t, 0), total + 1)
        self.sizes = [len(a) for a in allowed]
        cpts = []
        for i in range(n):
            table = network.cpts[i]
            for axis, p in enumerate(network.parents[i]):
                if p in evidence:
                    table = np.take(table, [evidence[p]], axis=axis)
            if i in evidence:
                table = np.take(table, [evidence[i]], axis=-1)
            cpts.append(table)
        self.cpts = cpts
        self.need = set(evidence) | set(keep)
        # Variables connected (ignoring edge directions) to an evidence / kept
        # variable. The others are independent of them: their mass can be
        # pruned before the evidence is processed (see _run).
        linked = set()
        stack = list(self.need)
        while stack:
            u = stack.pop()
            if u in linked:
                continue
            linked.add(u)
            stack.extend(network.parents[u])
            stack.extend(network._children[u])
        self.linked = linked

    def zero_weights(self) -> _Problem:
        """Copy with all weights and the threshold 0 (its run gives the marginals)."""
        clone = object.__new__(_Problem)
        clone.__dict__.update(self.__dict__)
        clone.weights = [np.zeros_like(w) for w in self.weights]
        clone.spans = [0] * len(self.spans)
        clone.threshold = 0
        return clone


def _shift(raw, mins, names) -> list[np.ndarray]:
    """``raw[i] - mins[i]`` exactly, refusing a variable whose own span exceeds int64."""
    out = []
    for r, m, name in zip(raw, mins, names):
        span = int(r.max()) - m
        if span > _INT64_MAX:
            raise _overflow_error(
                f"the weights of variable {name!r} span {span:,} values "
                f"(from {m:,} to {int(r.max()):,})"
            )
        out.append(r - np.int64(m))  # exact: the result fits in int64
    return out


def _forest_order(problem: _Problem) -> list[int] | None:
    """Parents-first order for networks where every variable has at most one parent.

    In a tree, a node stays in the frontier while its non-last child subtrees
    are processed; processing each node's children subtree by subtree, the
    most demanding last, keeps the widest frontier small (a Strahler-like
    recursion, logarithmic in the tree size). Trees holding evidence / kept
    variables come first so that pruning starts early. Returns None when the
    network is not a forest.
    """
    net = problem.network
    if any(len(pa) > 1 for pa in net.parents):
        return None
    children = net._children
    logsize = [math.log(s) for s in problem.sizes]
    cost = [0.0] * net.n_variables
    for u in reversed(net._order):
        if children[u]:
            sub = sorted(cost[c] for c in children[u])
            cost[u] = max(logsize[u] + (sub[-2] if len(sub) > 1 else 0.0), sub[-1])
    roots = [u for u in range(net.n_variables) if not net.parents[u] and children[u]]
    need = problem.need

    def contains_need(root):
        stack = [root]
        while stack:
            u = stack.pop()
            if u in need:
                return True
            stack.extend(children[u])
        return False

    roots.sort(key=lambda r: (not contains_need(r), cost[r], r))
    order = []
    for root in roots:
        stack = [root]
        while stack:
            u = stack.pop()
            order.append(u)
            # push the most demanding child first so that it is processed last
            stack.extend(sorted(children[u], key=lambda c: (-cost[c], c)))
    isolated = [u for u in range(net.n_variables) if not net.parents[u] and not children[u]]
    isolated.sort(key=lambda v: (v not in need, -problem.spans[v], v))
    return [v for v in isolated if v in need] + order + [v for v in isolated if v not in need]


def _greedy_order(problem: _Problem, recency: bool = False) -> list[int]:
    """Parents-first order that greedily keeps the frontier narrow.

    Connected variables are chosen one at a time among those whose parents are
    all processed, minimising the growth of the (log) number of frontier
    states; ties go to evidence / kept variables (so that pruning starts
    early), then to larger weight spans. Variables without parents nor
    children that are not evidence / kept come last, by decreasing span: they
    never enlarge the frontier.
    """
    net = problem.network
    n = net.n_variables
    children = net._children
    parents = net.parents
    keep = set(problem.keep)
    need = problem.need
    logsize = [math.log(s) for s in problem.sizes]
    remaining = [len(c) for c in children]
    n_unprocessed_parents = [len(p) for p in parents]
    processed = [False] * n
    isolated = [i for i in range(n) if not parents[i] and not children[i] and i not in need]
    isolated_set = set(isolated)

    def priority(v):
        stays = bool(children[v]) or v in keep
        delta = logsize[v] if stays else 0.0
        for p in parents[v]:
            if remaining[p] == 1 and p not in keep:
                delta -= logsize[p]
        tie = -stamp[v] if recency else -problem.spans[v]
        return (round(delta, 9), 0 if v in need else 1, tie, v)

    version = [0] * n
    stamp = [0] * n
    clock = 0
    heap = []
    for v in range(n):
        if n_unprocessed_parents[v] == 0 and v not in isolated_set:
            heapq.heappush(heap, (priority(v), version[v], v))
    order = []
    while heap:
        _, ver, v = heapq.heappop(heap)
        if processed[v] or ver != version[v]:
            continue
        processed[v] = True
        order.append(v)
        touched = set()
        for p in parents[v]:
            remaining[p] -= 1
            if remaining[p] == 1:
                for c in children[p]:
                    if not processed[c] and n_unprocessed_parents[c] == 0:
                        touched.add(c)
        for c in children[v]:
            n_unprocessed_parents[c] -= 1
            if n_unprocessed_parents[c] == 0:
                clock += 1
                stamp[c] = clock
                touched.add(c)
        for c in touched:
            version[c] += 1
            heapq.heappush(heap, (priority(c), version[c], c))
    isolated.sort(key=lambda v: (-problem.spans[v], v))
    order.extend(isolated)
    return order


def _natural_order(problem: _Problem) -> list[int]:
    """The index-based topological order, isolated variables last (need first)."""
    net = problem.network
    need = problem.need
    isolated = {v for v in range(net.n_variables) if not net.parents[v] and not net._children[v]}
    first = [v for v in net._order if v in isolated and v in need]
    last = sorted((v for v in isolated if v not in need), key=lambda v: (-problem.spans[v], v))
    return first + [v for v in net._order if v not in isolated] + last


def _simulate(problem: _Problem, order: list[int]):
    """Dry run of :func:`_run` on sizes only.

    Returns ``(peak, work, worst)``: the largest array the run allocates (in
    entries), the total number of entries it writes (a cost proxy) and a
    description of the step reaching the peak.
    """
    net = problem.network
    children = net._children
    keep = set(problem.keep)
    remaining = [len(c) for c in children]
    frontier: dict[int, int] = {}
    t = problem.threshold
    R = sum(problem.spans)
    lo, hi = 0, 0
    n_need = len(problem.need)
    done = 0
    linked_started = False
    lo, hi = max(lo, t - R), min(hi, t - 1)
    peak, work, worst = 0, 0, None
    for v in order:
        length = hi - lo + 1
        if length <= 0:
            break
        linked_started = linked_started or v in problem.linked
        size_f = math.prod(frontier.values())
        dropped = [p for p in net.parents[v] if remaining[p] == 1 and p not in keep]
        rest = size_f // math.prod(frontier[p] for p in dropped)
        stays = bool(children[v]) or v in keep
        span = problem.spans[v]
        size_v = problem.sizes[v]
        out_states = rest * (size_v if stays else 1)
        entries = max(size_f * length, rest * size_v * length, out_states * (length + span))
        work += rest * size_v * length + out_states * (length + span)
        if entries > peak:
            kept = [p for p in frontier if p not in dropped] + ([v] if stays else [])
            peak = entries
            worst = (v, kept, max(size_f, out_states), length + span)
        for p in dropped:
            del frontier[p]
        for p in net.parents[v]:
            remaining[p] -= 1
        if stays:
            frontier[v] = size_v
        hi += span
        R -= span
        if v in problem.need:
            done += 1
        if done == n_need or not linked_started:
            lo, hi = max(lo, t - R), min(hi, t - 1)
    return peak, work, worst


def _random_order(problem: _Problem, rng: np.random.Generator) -> list[int]:
    """A random parents-first order (isolated variables placed as in the others)."""
    net = problem.network
    need = problem.need
    children = net._children
    isolated = {v for v in range(net.n_variables) if not net.parents[v] and not children[v]}
    indeg = [len(pa) for pa in net.parents]
    ready = [v for v in range(net.n_variables) if indeg[v] == 0 and v not in isolated]
    order = []
    while ready:
        k = int(rng.integers(len(ready)))
        ready[k], ready[-1] = ready[-1], ready[k]
        v = ready.pop()
        order.append(v)
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if need and rng.random() < 0.5:
        order = [v for v in order if v not in problem.linked] + [
            v for v in order if v in problem.linked
        ]
    first = sorted(v for v in isolated if v in need)
    last = sorted((v for v in isolated if v not in need), key=lambda v: (-problem.spans[v], v))
    return first + order + last


def _best_frontier_plan(problem: _Problem, candidates, search: bool = False):
    """Cheapest candidate order by simulation: ``(order, peak, work, worst)``.

    With ``search=True`` and an expensive best candidate, random parents-first
    orders are also simulated (a seeded, deterministic number of them, so the
    search costs about a tenth of the estimated computation at most). The
    result of a run does not depend on the order, only its cost.
    """
    best = None
    seen = set()

    def consider(order):
        nonlocal best
        if order is None or tuple(order) in seen:
            return
        seen.add(tuple(order))
        peak, work, worst = _simulate(problem, order)
        key = (peak > problem.max_table_size, work if peak <= problem.max_table_size else peak)
        if best is None or key < best[0]:
            best = (key, order, peak, work, worst)

    for order in candidates:
        consider(order)
    if search and best is not None:
        net = problem.network
        n_linked = sum(1 for v in range(net.n_variables) if net.parents[v] or net._children[v])
        if n_linked > 2:
            too_large, work = best[0]
            # a simulation costs ~5 us per variable, the run ~1.5 ns per table entry
            n_tries = 200 if too_large else int(min(200, work * 3e-5 / n_linked))
            rng = np.random.default_rng(0)
            for _ in range(n_tries):
                consider(_random_order(problem, rng))
    return best[1:]


def _too_large(problem: _Problem, peak: int, worst, ve_peak=None) -> TableTooLargeError:
    net = problem.network
    v, kept, states, length = worst
    names = ", ".join(repr(net.names[p]) for p in kept[:8])
    if len(kept) > 8:
        names += ", ..."
    n_bytes = peak * 8
    extra = ""
    if ve_peak is not None:
        extra = f" (variable elimination would need {ve_peak:,} entries)"
    return TableTooLargeError(
        f"Exact computation refused at variable {net.names[v]!r}: the frontier holds "
        f"{len(kept)} variables ({names}) with {states:,} joint states, and the partial "
        f"score spans {length:,} values; the table would have {peak:,} entries "
        f"({n_bytes:,} bytes, {n_bytes / 2**30:.2f} GiB){extra}, above "
        f"max_table_size={problem.max_table_size:,}. Use fewer bins per feature, smaller "
        "integer weights (a smaller multiplier), or a network with lower indegree."
    )


def _collapse(part: np.ndarray, axes: list[int], keep: list[int]) -> np.ndarray:
    """Sum ``part`` (axes named by ``axes``) over non-kept axes, in ``keep`` order."""
    drop = tuple(k for k, a in enumerate(axes) if a not in keep)
    if drop:
        part = part.sum(axis=drop)
    remaining = [a for a in axes if a in keep]
    if remaining:
        part = np.transpose(part, [remaining.index(k) for k in keep])
    return np.asarray(part, dtype=np.float64)


def _contract(table, axes, cpt, pa, dropped):
    """Multiply the table by a CPT and sum out ``dropped``.

    ``table`` has axes ``axes + [score]`` and ``cpt`` has axes ``pa + [v]``.
    Returns ``(prod, out_axes)`` where ``prod`` has axes ``out_axes + [v, score]``.
    ``np.einsum`` without BLAS is used on purpose: multithreaded BLAS on these
    thin products is erratic on a loaded machine, the C loop is predictable.
    """
    out_axes = [a for a in axes if a not in dropped]
    label = {a: k for k, a in enumerate(axes)}
    v_label = len(axes)
    score = len(axes) + 1
    prod = np.einsum(
        table,
        [label[a] for a in axes] + [score],
        cpt,
        [label[p] for p in pa] + [v_label],
        [label[a] for a in out_axes] + [v_label, score],
    )
    return prod, out_axes


def _run(
    problem: _Problem, order: list[int], early_prune: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Run the DP; return (Pr[score >= t, keep = a, evidence], Pr[keep = a, evidence]).

    Mass is moved to the accumulators as soon as that is valid: once every
    evidence / kept variable is processed, or while no variable connected to
    them has been processed yet (then the decided mass is independent of the
    evidence and is multiplied by ``Pr[keep = a, evidence]`` at the end).
    """
    net = problem.network
    children = net._children
    keep = list(problem.keep)
    keep_set = set(keep)
    keep_shape = tuple(net.cardinalities[k] for k in keep)
    remaining = [len(c) for c in children]
    t = problem.threshold
    R = sum(problem.spans)
    n_need = len(problem.need)
    done = 0
    linked_started = False
    pos = np.zeros(keep_shape)
    neg = np.zeros(keep_shape)
    free = [0.0, 0.0]  # decided mass (pos, neg) before any linked variable
    axes: list[int] = []
    table = np.ones(1)
    lo = 0

    def add(target, index, part):
        if linked_started:
            target[...] += _collapse(part, axes, keep)
        else:
            free[index] += float(part.sum())

    def prune(table, lo):
        length = table.shape[-1]
        hi = lo + length - 1
        cut_lo = max(lo, t - R)
        cut_hi = min(hi, t - 1)
        if cut_lo > lo:
            k = min(cut_lo - lo, length)
            add(neg, 1, table[..., :k].sum(axis=-1))
        if cut_hi < hi:
            k = max(cut_hi - lo + 1, 0)
            add(pos, 0, table[..., k:].sum(axis=-1))
        if cut_hi < cut_lo:
            return table[..., :0], cut_lo
        return table[..., cut_lo - lo : cut_hi - lo + 1], cut_lo

    if n_need == 0 or early_prune:
        table, lo = prune(table, lo)
    for v in order:
        length = table.shape[-1]
        if length == 0:
            break
        if v in problem.linked:
            linked_started = True
        pa = net.parents[v]
        cpt = problem.cpts[v]
        w = problem.weights[v]
        span = problem.spans[v]
        stays = bool(children[v]) or v in keep_set
        dropped = [p for p in pa if remaining[p] == 1 and p not in keep_set]
        if not pa:
            lead = table.shape[:-1]
            if stays:
                new = np.zeros(lead + (len(w), length + span))
                for k, off in enumerate(w):
                    np.multiply(table, cpt[k], out=new[..., k, off : off + length])
                new_axes = axes + [v]
            else:
                new = np.zeros(lead + (length + span,))
                for k, off in enumerate(w):
                    new[..., off : off + length] += cpt[k] * table
                new_axes = list(axes)
        else:
            prod, out_axes = _contract(table, axes, cpt, pa, dropped)
            lead = prod.shape[:-2]
            if stays:
                new = np.zeros(lead + (len(w), length + span))
                for k, off in enumerate(w):
                    new[..., k, off : off + length] = prod[..., k, :]
                new_axes = out_axes + [v]
            else:
                new = np.zeros(lead + (length + span,))
                for k, off in enumerate(w):
                    new[..., off : off + length] += prod[..., k, :]
                new_axes = out_axes
        for p in pa:
            remaining[p] -= 1
        table, axes = new, new_axes
        R -= span
        if v in problem.need:
            done += 1
        if done == n_need or (early_prune and not linked_started):
            table, lo = prune(table, lo)
    length = table.shape[-1]
    if length:
        scores = lo + np.arange(length)
        above = scores >= t
        pos += _collapse(table[..., above].sum(axis=-1), axes, keep)
        neg += _collapse(table[..., ~above].sum(axis=-1), axes, keep)
    if free[0] or free[1]:
        if n_need:
            # Pr[keep = a, evidence]: the same run with all weights zero, no early pruning.
            marginal = _run(problem.zero_weights(), order, early_prune=False)[1]
        else:
            marginal = np.ones(keep_shape)
        pos = pos + free[0] * marginal
        neg = neg + free[1] * marginal
    return pos, pos + neg


# Plans cheaper than this (in frontier work units) are run without comparison.
_ELIMINATION_THRESHOLD = 1e6
# Measured cost of one work unit: ~6 ns for the frontier engine (shift-and-add,
# Python per-variable overhead), ~2 ns for elimination (FFT-dominated).
_FRONTIER_UNIT, _ELIMINATION_UNIT = 6.0, 2.0


def _plan(weights, threshold, network, evidence, keep, max_table_size, order, method="auto"):
    """Validate the arguments and choose the engine and order.

    Returns ``(problem, engine, order, peak, work)`` where ``engine`` is
    ``"frontier"`` or ``"elimination"``; raises TableTooLargeError when no
    allowed engine fits in ``max_table_size``.
    """
    network = _check_network(network)
    weights = _check_weights(weights, network)
    threshold = _check_threshold(threshold)
    evidence = _check_evidence(evidence, network)
    keep = _check_vars(keep, network, "evidence_vars")
    overlap = [network.names[v] for v in keep if v in evidence]
    if overlap:
        raise ValueError(
            f"Variable {overlap[0]!r} is both in evidence_vars and in evidence; "
            "fix it in one place only."
        )
    if method not in ("auto", "frontier", "elimination"):
        raise ValueError(f"method must be 'auto', 'frontier' or 'elimination', got {method!r}.")
    max_table_size = _check_max_table_size(max_table_size)
    problem = _Problem(weights, threshold, network, evidence, keep)
    problem.max_table_size = max_table_size
    if order is not None:
        order = _check_order(order, network)
        if method == "elimination":
            raise ValueError("order applies to method='frontier' only.")
        method = "frontier"
    if method == "elimination":
        ve_order, ve_peak, ve_work = elimination_order(problem)
        if ve_peak > max_table_size:
            raise TableTooLargeError(
                f"Variable elimination would need a factor of {ve_peak:,} entries "
                f"({ve_peak * 8:,} bytes), above max_table_size={max_table_size:,}. Use fewer "
                "bins per feature, smaller integer weights, or a network with lower indegree."
            )
        return problem, "elimination", ve_order, ve_peak, ve_work
    if order is not None:
        candidates = [order]
    else:
        candidates = [
            _forest_order(problem),
            _greedy_order(problem, recency=False),
            _greedy_order(problem, recency=True),
            _natural_order(problem),
        ]
        if problem.need:
            # Variables independent of the evidence first: processed (and pruned)
            # once instead of once per evidence assignment.
            candidates += [
                [v for v in c if v not in problem.linked] + [v for v in c if v in problem.linked]
                for c in candidates
                if c is not None
            ]
    order, peak, work, worst = _best_frontier_plan(problem, candidates, search=len(candidates) > 1)
    fits = peak <= max_table_size
    if method == "auto" and (not fits or work > _ELIMINATION_THRESHOLD):
        ve_order, ve_peak, ve_work = elimination_order(problem)
        cheaper = ve_work * _ELIMINATION_UNIT < work * _FRONTIER_UNIT
        if ve_peak <= max_table_size and (not fits or cheaper):
            return problem, "elimination", ve_order, ve_peak, ve_work
        if not fits:
            raise _too_large(problem, peak, worst, ve_peak)
    if not fits:
        raise _too_large(problem, peak, worst)
    return problem, "frontier", order, peak, work


def _solve(weights, threshold, network, evidence, keep, max_table_size, order, method="auto"):
    problem, engine, order, _, _ = _plan(
        weights, threshold, network, evidence, keep, max_table_size, order, method
    )
    if engine == "elimination":
        return run_elimination(problem, order)
    return _run(problem, order)


_MAX_SPLIT_GROUPS = 64


def _run_groups(plans, shape):
    pos, total = np.zeros(shape), np.zeros(shape)
    for states, (group_problem, group_engine, group_order, _, _) in plans:
        runner = run_elimination if group_engine == "elimination" else _run
        pos[states], total[states] = runner(group_problem, group_order)
    return pos, total


def _solve_table(weights, threshold, network, evidence, keep, max_table_size, order, method):
    """Joint table over ``keep``, or one run per assignment when that plans cheaper.

    Keeping the variables in the table shares the work on everything not
    connected to them; when they are connected to the whole network, one run
    per assignment (each with a narrower score axis and table) can be cheaper,
    or be the only plan that fits in ``max_table_size``. Both plans are
    simulated and the cheaper is run.
    """
    try:
        problem, engine, plan_order, _, work = _plan(
            weights, threshold, network, evidence, keep, max_table_size, order, method
        )
    except TableTooLargeError as exc:
        keep = _check_vars(keep, network, "evidence_vars")
        shape = tuple(network.cardinalities[v] for v in keep)
        if order is not None or not 1 < math.prod(shape) <= _MAX_SPLIT_GROUPS:
            raise
        plans = []
        for states in itertools.product(*(range(c) for c in shape)):
            group = {**evidence, **dict(zip(keep, states))}
            try:
                plan = _plan(weights, threshold, network, group, [], max_table_size, None, method)
            except TableTooLargeError:
                raise exc from None
            plans.append((states, plan))
        return _run_groups(plans, shape)
    shape = tuple(network.cardinalities[v] for v in problem.keep)
    if engine == "frontier" and order is None and 1 < math.prod(shape) <= _MAX_SPLIT_GROUPS:
        plans, split_work = [], 0.0
        for states in itertools.product(*(range(c) for c in shape)):
            group = {**problem.evidence, **dict(zip(problem.keep, states))}
            try:
                plan = _plan(weights, threshold, network, group, [], max_table_size, None, method)
            except TableTooLargeError:
                break
            split_work += plan[4]
            if split_work > 0.8 * work:
                break
            plans.append((states, plan))
        else:
            return _run_groups(plans, shape)
    if engine == "elimination":
        return run_elimination(problem, plan_order)
    return _run(problem, plan_order)


def _evidence_error(evidence, network) -> ValueError:
    desc = ", ".join(
        f"{network.names[v]}={network.state_names[v][s]!r}" for v, s in evidence.items()
    )
    return ValueError(f"The evidence ({desc}) has probability 0 under the network.")


# -------------------------------------------------------------------- public
def positive_probability(
    weights: Sequence[np.ndarray],
    threshold: int,
    network: BayesNet,
    evidence: Mapping[int, int] | None = None,
    *,
    max_table_size: int = DEFAULT_MAX_TABLE_SIZE,
    order: Sequence[int] | None = None,
    method: str = "auto",
) -> float:
    """Exact ``Pr[sum_i weights[i][X_i] >= threshold | evidence]``.

    Solves FVGM's stochastic subset sum problem (S3P) for chance variables
    distributed by a Bayesian network, over multi-state variables.

    Parameters
    ----------
    weights : list of ndarray of int
        ``weights[i][s]`` is the integer contribution of variable ``i`` in
        state ``s`` (one entry per state). Integer-valued floats are accepted.
    threshold : int
        The score must reach at least this value.
    network : BayesNet
        Joint distribution of the variables.
    evidence : dict of {int: int}, default=None
        Variables fixed to a state (conditioning).
    max_table_size : int, default=50_000_000
        Largest number of float64 entries (8 bytes each) of the working
        table; up to about three such arrays are alive at once. The size is
        computed from the processing plan before any allocation and
        :class:`TableTooLargeError` is raised beyond it.
    order : list of int, default=None
        Processing order of the frontier engine (must list every variable
        after its parents). When None, the cheapest of several heuristic
        orders is used. The result does not depend on the order (FVGM
        Remark 2); only the cost does.
    method : {"auto", "frontier", "elimination"}, default="auto"
        ``"frontier"``: parents-first table over (frontier states, partial
        score) with pruning of decided mass. ``"elimination"``: variable
        elimination on the moral graph, convolving score axes (no pruning;
        for trees and other networks whose frontier is wide). ``"auto"``
        simulates both plans and runs the cheaper one that fits.

    Returns
    -------
    probability : float
        The exact probability (up to floating-point rounding).

    Raises
    ------
    ValueError
        Non-integer weights or threshold, wrong shapes, bad evidence, or
        evidence of probability 0.
    TableTooLargeError
        The working table would exceed ``max_table_size`` entries.
    OverflowError
        The integer weights are too large for exact int64 arithmetic: a weight
        beyond int64, or partial scores spanning more than ``2**62`` values (after
        shifting each variable's weights to start at 0 and dividing all by their
        common divisor). The message names the range and the variable.

    See Also
    --------
    positive_probability_table : The same for every assignment of some
        variables at once.
    best_assignment : Existential / universal quantifiers of S3P.

    Notes
    -----
    Variables are processed parents first while a table indexed by the states
    of the frontier (processed variables with an unprocessed child) and the
    partial score is updated by shift-and-add; a variable is summed out after
    its last child. Partial scores whose outcome is already decided are moved
    to accumulators. Time and memory are linear in the number of variables
    and the score range, exponential only in the frontier width.

    The elimination engine multiplies factors over (variables, score) along
    the moral graph, convolving score axes (FFT for long axes); its cost is
    exponential in the induced width instead. Results of both engines agree
    to floating-point rounding (about 1e-15).

    Examples
    --------
    FVGM Example 4 with ``P = 1``: ``Pr[Q + R - S >= 1]``.

    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, positive_probability
    >>> net = BayesNet.independent([[0.6, 0.4], [0.5, 0.5], [0.7, 0.3]])
    >>> w = [np.array([0, 1]), np.array([0, 1]), np.array([0, -1])]
    >>> round(positive_probability(w, 1, net), 10)
    0.55
    """
    evidence_checked = _check_evidence(evidence, _check_network(network))
    pos, total = _solve(
        weights, threshold, network, evidence_checked, [], max_table_size, order, method
    )
    total = float(total)
    if total <= 0.0:
        raise _evidence_error(evidence_checked, network)
    return float(min(max(float(pos) / total, 0.0), 1.0))


def positive_probability_table(
    weights: Sequence[np.ndarray],
    threshold: int,
    network: BayesNet,
    evidence_vars: Sequence[int],
    evidence: Mapping[int, int] | None = None,
    *,
    max_table_size: int = DEFAULT_MAX_TABLE_SIZE,
    return_marginal: bool = False,
    order: Sequence[int] | None = None,
    method: str = "auto",
):
    """``Pr[score >= threshold | X_ev = a, evidence]`` for every assignment ``a``.

    One pass of the engine: the variables ``evidence_vars`` stay in the table
    instead of being summed out, so the work is shared by all assignments
    (for instance every compound sensitive group).

    Parameters
    ----------
    weights : list of ndarray of int
        Integer weight of every state of every variable.
    threshold : int
        The score must reach at least this value.
    network : BayesNet
        Joint distribution of the variables.
    evidence_vars : list of int
        Variables whose assignments index the result (distinct, not in
        ``evidence``).
    evidence : dict of {int: int}, default=None
        Further variables fixed to a state.
    max_table_size : int, default=50_000_000
        Largest number of entries of the working table.
    return_marginal : bool, default=False
        Also return ``Pr[X_ev = a | evidence]`` (the support of each group).
    order : list of int, default=None
        Processing order of the frontier engine (parents first).
    method : {"auto", "frontier", "elimination"}, default="auto"
        Engine, see :func:`positive_probability`.

    Returns
    -------
    probabilities : ndarray of shape ``tuple(cardinalities[v] for v in evidence_vars)``
        Conditional probabilities of a positive score. An entry whose
        conditioning event ``X_ev = a, evidence`` has probability 0 is NaN.
    marginal : ndarray of the same shape
        Only when ``return_marginal=True``: ``Pr[X_ev = a | evidence]``.

    Raises
    ------
    ValueError
        Bad arguments, or ``evidence`` (the fixed variables) has probability 0.
    TableTooLargeError
        The working table would exceed ``max_table_size`` entries.
    OverflowError
        The integer weights are too large for exact int64 arithmetic: a weight
        beyond int64, or partial scores spanning more than ``2**62`` values (after
        shifting each variable's weights to start at 0 and dividing all by their
        common divisor). The message names the range and the variable.

    See Also
    --------
    positive_probability : A single conditioning event.

    Examples
    --------
    FVGM Example 6: ``P -> Q`` with ``Pr[Q | P] = 0.6``, ``Pr[Q | not P] = 0.3``,
    score ``P + Q + R - S >= 2``.

    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, positive_probability_table
    >>> net = BayesNet(
    ...     [2, 2, 2, 2], [(), (0,), (), ()],
    ...     [np.array([0.5, 0.5]), np.array([[0.7, 0.3], [0.4, 0.6]]),
    ...      np.array([0.5, 0.5]), np.array([0.7, 0.3])],
    ... )
    >>> w = [np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), np.array([0, -1])]
    >>> probs, support = positive_probability_table(w, 2, net, [0], return_marginal=True)
    >>> np.round(probs, 10).tolist(), np.round(support, 10).tolist()
    ([0.105, 0.65], [0.5, 0.5])
    """
    network = _check_network(network)
    evidence_checked = _check_evidence(evidence, network)
    pos, total = _solve_table(
        weights, threshold, network, evidence_checked, evidence_vars, max_table_size, order, method
    )
    grand = float(total.sum())
    if grand <= 0.0:
        raise _evidence_error(evidence_checked, network)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = np.where(total > 0, pos / np.where(total > 0, total, 1.0), np.nan)
    probs = np.clip(probs, 0.0, 1.0)
    if return_marginal:
        return probs, total / grand
    return probs


def best_assignment(
    weights: Sequence[np.ndarray],
    threshold: int,
    network: BayesNet,
    choice_vars: Sequence[int],
    evidence: Mapping[int, int] | None = None,
    *,
    mode: str = "max",
    max_table_size: int = DEFAULT_MAX_TABLE_SIZE,
    method: str = "auto",
) -> tuple[float, dict[int, int]]:
    """Existential (``"max"``) or universal (``"min"``) quantifiers of S3P.

    Returns ``max_a`` (or ``min_a``) of ``Pr[score >= threshold | X_choice = a,
    evidence]`` over the assignments ``a`` of ``choice_vars`` with positive
    probability, and the optimising assignment. With the sensitive features as
    choice variables this is FVGM's most (least) favored group.

    Parameters
    ----------
    weights : list of ndarray of int
        Integer weight of every state of every variable.
    threshold : int
        The score must reach at least this value.
    network : BayesNet
        Joint distribution of the variables.
    choice_vars : list of int
        The quantified variables.
    evidence : dict of {int: int}, default=None
        Further variables fixed to a state.
    mode : {"max", "min"}, default="max"
        ``"max"`` for the existential, ``"min"`` for the universal quantifier.
    max_table_size : int, default=50_000_000
        Largest number of entries of the working table.
    method : {"auto", "frontier", "elimination"}, default="auto"
        Engine, see :func:`positive_probability`.

    Returns
    -------
    probability : float
        The optimal conditional probability.
    assignment : dict of {int: int}
        State of each choice variable reaching it (the first in C order on
        ties).

    Raises
    ------
    ValueError
        Bad ``mode`` or arguments, or no assignment has positive probability.
    OverflowError
        The integer weights are too large for exact int64 arithmetic (see
        :func:`positive_probability`).

    Examples
    --------
    FVGM Example 4: ``P + Q + R - S >= 2`` with ``P`` existential / universal.

    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, best_assignment
    >>> net = BayesNet.independent([[0.5, 0.5], [0.6, 0.4], [0.5, 0.5], [0.7, 0.3]])
    >>> w = [np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), np.array([0, -1])]
    >>> p, a = best_assignment(w, 2, net, [0], mode="max")
    >>> round(p, 10), a
    (0.55, {0: 1})
    >>> p, a = best_assignment(w, 2, net, [0], mode="min")
    >>> round(p, 10), a
    (0.14, {0: 0})
    """
    if mode not in ("max", "min"):
        raise ValueError(f"mode must be 'max' or 'min', got {mode!r}.")
    network = _check_network(network)
    choice_vars = _check_vars(choice_vars, network, "choice_vars")
    probs = positive_probability_table(
        weights,
        threshold,
        network,
        choice_vars,
        evidence,
        max_table_size=max_table_size,
        method=method,
    )
    flat = probs.ravel()
    if not np.any(np.isfinite(flat)):
        raise ValueError("No assignment of choice_vars has positive probability.")
    idx = int(np.nanargmax(flat) if mode == "max" else np.nanargmin(flat))
    states = np.unravel_index(idx, probs.shape) if probs.ndim else ()
    return float(flat[idx]), {v: int(s) for v, s in zip(choice_vars, states)}
