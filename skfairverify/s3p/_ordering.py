"""Parents-first processing orders for the frontier engine (heuristic and random).

The result of a run does not depend on the order (FVGM Remark 2), only its cost;
:mod:`._plan` simulates every candidate and keeps the cheapest.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ._problem import Problem


def candidate_orders(problem: Problem) -> list[list[int]]:
    """Return the heuristic orders worth simulating (a forest order only for forests)."""
    candidates = [
        forest_order(problem),
        greedy_order(problem, recency=False),
        greedy_order(problem, recency=True),
        natural_order(problem),
    ]
    candidates = [c for c in candidates if c is not None]
    if problem.need:
        # Variables independent of the evidence first: processed (and pruned)
        # once instead of once per evidence assignment.
        candidates += [
            [v for v in c if v not in problem.linked] + [v for v in c if v in problem.linked]
            for c in candidates
        ]
    return candidates


def _isolated_last(problem: Problem, isolated) -> list[int]:
    """Isolated variables that are not evidence / kept, by decreasing weight span."""
    return sorted(
        (v for v in isolated if v not in problem.need), key=lambda v: (-problem.spans[v], v)
    )


def _subtree_costs(problem: Problem) -> list[float]:
    """Log of the widest frontier each subtree of a forest needs (Strahler-like)."""
    children = problem.children
    logsize = [math.log(s) for s in problem.sizes]
    cost = [0.0] * len(children)
    for u in reversed(problem.network.topological_order()):
        if children[u]:
            sub = sorted(cost[c] for c in children[u])
            cost[u] = max(logsize[u] + (sub[-2] if len(sub) > 1 else 0.0), sub[-1])
    return cost


def _contains(children, root, targets) -> bool:
    """Whether the subtree of ``root`` holds a variable of ``targets``."""
    stack = [root]
    while stack:
        u = stack.pop()
        if u in targets:
            return True
        stack.extend(children[u])
    return False


def forest_order(problem: Problem) -> list[int] | None:
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
    children = problem.children
    cost = _subtree_costs(problem)
    need = problem.need
    roots = [u for u in range(net.n_variables) if not net.parents[u] and children[u]]
    roots.sort(key=lambda r: (not _contains(children, r, need), cost[r], r))
    order = []
    for root in roots:
        stack = [root]
        while stack:
            u = stack.pop()
            order.append(u)
            # push the most demanding child first so that it is processed last
            stack.extend(sorted(children[u], key=lambda c: (-cost[c], c)))
    isolated = problem.isolated()
    first = sorted((v for v in isolated if v in need), key=lambda v: (-problem.spans[v], v))
    return first + order + _isolated_last(problem, isolated)


class _GreedyState:
    """Bookkeeping of :func:`greedy_order`: what is processed, what each choice costs."""

    def __init__(self, problem: Problem, recency: bool):
        self.problem = problem
        self.recency = recency
        self.keep = set(problem.keep)
        self.logsize = [math.log(s) for s in problem.sizes]
        self.remaining = [len(c) for c in problem.children]
        self.n_unprocessed_parents = [len(p) for p in problem.network.parents]
        n = len(self.remaining)
        self.processed = [False] * n
        self.version = [0] * n
        self.stamp = [0] * n
        self.clock = 0
        self.heap = []

    def priority(self, v):
        """Growth of the log frontier size, then need, then recency or span."""
        problem = self.problem
        stays = bool(problem.children[v]) or v in self.keep
        delta = self.logsize[v] if stays else 0.0
        for p in problem.network.parents[v]:
            if self.remaining[p] == 1 and p not in self.keep:
                delta -= self.logsize[p]
        tie = -self.stamp[v] if self.recency else -problem.spans[v]
        return (round(delta, 9), 0 if v in problem.need else 1, tie, v)

    def push(self, v):
        """(Re)queue ``v`` with its current priority."""
        self.version[v] += 1
        heapq.heappush(self.heap, (self.priority(v), self.version[v], v))

    def pop(self):
        """Return the best ready variable, or None when none is left."""
        while self.heap:
            _, ver, v = heapq.heappop(self.heap)
            if not self.processed[v] and ver == self.version[v]:
                return v
        return None

    def process(self, v):
        """Mark ``v`` processed and requeue the variables whose priority changed."""
        parents, children = self.problem.network.parents, self.problem.children
        self.processed[v] = True
        touched = set()
        for p in parents[v]:
            self.remaining[p] -= 1
            if self.remaining[p] == 1:
                touched.update(
                    c for c in children[p]
                    if not self.processed[c] and self.n_unprocessed_parents[c] == 0
                )
        for c in children[v]:
            self.n_unprocessed_parents[c] -= 1
            if self.n_unprocessed_parents[c] == 0:
                self.clock += 1
                self.stamp[c] = self.clock
                touched.add(c)
        for c in touched:
            self.push(c)


def greedy_order(problem: Problem, recency: bool = False) -> list[int]:
    """Parents-first order that greedily keeps the frontier narrow.

    Connected variables are chosen one at a time among those whose parents are
    all processed, minimising the growth of the (log) number of frontier
    states; ties go to evidence / kept variables (so that pruning starts
    early), then to larger weight spans (or, with ``recency=True``, to the
    variable that became ready last). Variables without parents nor children
    that are not evidence / kept come last, by decreasing span: they never
    enlarge the frontier.
    """
    isolated = _isolated_last(problem, problem.isolated())
    skip = set(isolated)
    state = _GreedyState(problem, recency)
    for v in range(problem.network.n_variables):
        if not problem.network.parents[v] and v not in skip:
            heapq.heappush(state.heap, (state.priority(v), 0, v))
    order = []
    while (v := state.pop()) is not None:
        order.append(v)
        state.process(v)
    return order + isolated


def natural_order(problem: Problem) -> list[int]:
    """Return the index-based topological order, isolated variables last (need first)."""
    topological = problem.network.topological_order()
    isolated = problem.isolated()
    first = [v for v in topological if v in isolated and v in problem.need]
    middle = [v for v in topological if v not in isolated]
    return first + middle + _isolated_last(problem, isolated)


def random_order(problem: Problem, rng: np.random.Generator) -> list[int]:
    """Draw a random parents-first order (isolated variables placed as in the others)."""
    net = problem.network
    need = problem.need
    isolated = problem.isolated()
    indeg = [len(pa) for pa in net.parents]
    ready = [v for v in range(net.n_variables) if indeg[v] == 0 and v not in isolated]
    order = []
    while ready:
        k = int(rng.integers(len(ready)))
        ready[k], ready[-1] = ready[-1], ready[k]
        v = ready.pop()
        order.append(v)
        for c in problem.children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if need and rng.random() < 0.5:
        order = [v for v in order if v not in problem.linked] + [
            v for v in order if v in problem.linked
        ]
    first = sorted(v for v in isolated if v in need)
    return first + order + _isolated_last(problem, isolated)
