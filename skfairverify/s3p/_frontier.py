"""The frontier dynamic programme: a table over (frontier states, partial score).

Variables are processed parents-first (:func:`._steps.steps`); a variable is
summed out as soon as its last child has been processed, so the cost is
exponential in the frontier width only. Mass whose outcome is already decided
(the partial score reaches the threshold even if every remaining variable takes
its smallest weight, or cannot reach it even with the largest ones) is moved to
two accumulators, as FVGM's terminating conditions do, which keeps the score
axis short.
"""

from __future__ import annotations

import numpy as np

from ._problem import Problem
from ._steps import prunes_at_start, steps, undecided


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


def _add_variable(table, axes, step, problem: Problem):
    """Add ``step.var`` to the table (score shifted by its weight) and sum out its parents."""
    cpt = problem.cpts[step.var]
    w = problem.weights[step.var]
    length = table.shape[-1]
    if step.parents:
        prod, axes = _contract(table, axes, cpt, step.parents, step.dropped)
        lead = prod.shape[:-2]
    else:
        lead = table.shape[:-1]
    if step.stays:
        new = np.zeros(lead + (len(w), length + step.span))
        for k, off in enumerate(w):
            out = new[..., k, off : off + length]
            if step.parents:
                out[...] = prod[..., k, :]
            else:
                np.multiply(table, cpt[k], out=out)
        return new, list(axes) + [step.var]
    new = np.zeros(lead + (length + step.span,))
    for k, off in enumerate(w):
        new[..., off : off + length] += prod[..., k, :] if step.parents else cpt[k] * table
    return new, list(axes)


class _Accumulators:
    """Decided mass: ``pos`` / ``neg`` per kept assignment, ``free`` before any linked step."""

    def __init__(self, problem: Problem):
        net = problem.network
        self.keep = list(problem.keep)
        self.shape = tuple(net.cardinalities[k] for k in self.keep)
        self.threshold = problem.threshold
        self.pos = np.zeros(self.shape)
        self.neg = np.zeros(self.shape)
        self.free = [0.0, 0.0]  # decided mass (pos, neg) before any linked variable

    def _add(self, positive, part, axes, linked):
        if linked:
            target = self.pos if positive else self.neg
            target[...] += _collapse(part, axes, self.keep)
        else:
            self.free[0 if positive else 1] += float(part.sum())

    def prune(self, table, axes, lo, rest, linked):
        """Move the decided scores out of ``table``; return the rest and its lowest score."""
        length = table.shape[-1]
        hi = lo + length - 1
        cut_lo, cut_hi = undecided(lo, hi, self.threshold, rest)
        if cut_lo > lo:
            k = min(cut_lo - lo, length)
            self._add(False, table[..., :k].sum(axis=-1), axes, linked)
        if cut_hi < hi:
            k = max(cut_hi - lo + 1, 0)
            self._add(True, table[..., k:].sum(axis=-1), axes, linked)
        if cut_hi < cut_lo:
            return table[..., :0], cut_lo
        return table[..., cut_lo - lo : cut_hi - lo + 1], cut_lo

    def finish(self, table, axes, lo):
        """Split what is left of the table by the threshold."""
        length = table.shape[-1]
        if length:
            above = lo + np.arange(length) >= self.threshold
            self.pos += _collapse(table[..., above].sum(axis=-1), axes, self.keep)
            self.neg += _collapse(table[..., ~above].sum(axis=-1), axes, self.keep)


def run(problem: Problem, order, early_prune: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Run the DP; return (Pr[score >= t, keep = a, evidence], Pr[keep = a, evidence])."""
    acc = _Accumulators(problem)
    axes: list[int] = []
    table, lo = np.ones(1), 0
    if prunes_at_start(problem, early_prune):
        table, lo = acc.prune(table, axes, lo, sum(problem.spans), linked=False)
    for step in steps(problem, order, early_prune):
        if table.shape[-1] == 0:
            break
        table, axes = _add_variable(table, axes, step, problem)
        if step.prune:
            table, lo = acc.prune(table, axes, lo, step.rest, step.linked)
    acc.finish(table, axes, lo)
    pos, neg = acc.pos, acc.neg
    if acc.free[0] or acc.free[1]:
        if problem.need:
            # Pr[keep = a, evidence]: the same run with all weights zero, no early pruning.
            marginal = run(problem.zero_weights(), order, early_prune=False)[1]
        else:
            marginal = np.ones(acc.shape)
        pos = pos + acc.free[0] * marginal
        neg = neg + acc.free[1] * marginal
    return pos, pos + neg
