"""The problem both engines solve: weights, tables and threshold after evidence and scaling."""

from __future__ import annotations

import math

import numpy as np

from ._convolve import block_cost, block_variables
from ._errors import INT64_MAX, MAX_SCORE_RANGE, overflow_error


class Problem:
    """Weights, tables and threshold after evidence slicing and normalisation.

    Each variable keeps only its allowed states (all, or the evidence state);
    its weights are shifted so that the smallest is 0 and all weights are
    divided by their greatest common divisor, with the threshold adjusted
    exactly (integer arithmetic), so the score axis is as short as possible.
    The range of the partial scores (the sum of the shifted spans) is checked
    against ``MAX_SCORE_RANGE`` before anything else (OverflowError), and the
    threshold is clipped to ``[0, range + 1]``, which decides every score alike.

    ``weights``, ``threshold``, ``evidence`` and ``keep`` must be validated.
    """

    def __init__(self, weights, threshold, network, evidence, keep, max_table_size):
        self.network = network
        self.evidence = evidence
        self.keep = keep
        self.max_table_size = max_table_size
        n = network.n_variables
        self.children = [network.children(i) for i in range(n)]
        self.allowed = [
            np.array([evidence[i]]) if i in evidence else np.arange(network.cardinalities[i])
            for i in range(n)
        ]
        self.sizes = [len(a) for a in self.allowed]
        self._scale_weights(weights, threshold)
        self.cpts = [self._sliced_cpt(i) for i in range(n)]
        self.need = set(evidence) | set(keep)
        self.linked = self._linked()

    def _scale_weights(self, weights, threshold):
        """Shift the weights to start at 0, divide them by their gcd, adjust the threshold."""
        raw = [w[a] for w, a in zip(weights, self.allowed)]
        mins = [int(r.min()) for r in raw]
        shifted = _shift(raw, mins, self.network.names)
        t = threshold - sum(mins)
        g = int(np.gcd.reduce(np.concatenate(shifted))) if shifted else 0
        if g > 1:
            shifted = [s // g for s in shifted]
            t = -((-t) // g)
        self.weights = shifted
        self.spans = [int(s.max()) for s in shifted]
        total = sum(self.spans)
        if total > MAX_SCORE_RANGE:
            raise overflow_error(
                f"the partial scores span {total:,} values (about 2**{math.log2(total):.1f}"
                + (f", after dividing the weights by their common divisor {g}" if g > 1 else "")
                + ")"
            )
        self.threshold = min(max(t, 0), total + 1)

    def _sliced_cpt(self, i):
        """Restrict the CPT of variable ``i`` to the evidence states."""
        evidence = self.evidence
        table = self.network.cpts[i]
        for axis, p in enumerate(self.network.parents[i]):
            if p in evidence:
                table = np.take(table, [evidence[p]], axis=axis)
        if i in evidence:
            table = np.take(table, [evidence[i]], axis=-1)
        return table

    def _linked(self) -> set[int]:
        """Variables connected (ignoring edge directions) to an evidence / kept variable.

        The others are independent of them: their mass can be pruned before the
        evidence is processed (see :func:`._steps.steps`).
        """
        linked = set()
        stack = list(self.need)
        while stack:
            u = stack.pop()
            if u in linked:
                continue
            linked.add(u)
            stack.extend(self.network.parents[u])
            stack.extend(self.children[u])
        return linked

    def isolated(self) -> set[int]:
        """Variables with neither parents nor children."""
        parents = self.network.parents
        return {v for v in range(len(parents)) if not parents[v] and not self.children[v]}

    def block(self) -> tuple[int, ...]:
        """Variables independent of all others, summed apart (see :mod:`._convolve`)."""
        if "_block" not in self.__dict__:
            self._block = tuple(block_variables(self))
        return self._block

    def block_cost(self) -> tuple[int, float]:
        """``(peak entries, work units)`` of summing :meth:`block` apart."""
        if "_block_cost" not in self.__dict__:
            self._block_cost = block_cost(self, self.block())
        return self._block_cost

    def zero_weights(self) -> Problem:
        """Copy with all weights and the threshold 0 (its run gives the marginals)."""
        clone = object.__new__(Problem)
        clone.__dict__.update(self.__dict__)
        clone.weights = [np.zeros_like(w) for w in self.weights]
        clone.spans = [0] * len(self.spans)
        clone.threshold = 0
        clone.__dict__.pop("_block_cost", None)
        return clone


def _shift(raw, mins, names) -> list[np.ndarray]:
    """``raw[i] - mins[i]`` exactly, refusing a variable whose own span exceeds int64."""
    out = []
    for r, m, name in zip(raw, mins, names):
        span = int(r.max()) - m
        if span > INT64_MAX:
            raise overflow_error(
                f"the weights of variable {name!r} span {span:,} values "
                f"(from {m:,} to {int(r.max()):,})"
            )
        out.append(r - np.int64(m))  # exact: the result fits in int64
    return out
