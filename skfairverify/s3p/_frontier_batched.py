"""The frontier dynamic programme for many networks of one structure: a leading draws axis.

:func:`run_frontier_batched` runs :func:`._frontier.run` for ``D`` sets of CPTs of the
same problem (structure, weights, threshold, evidence) at once. Every table has a
leading axis of ``D``; what decides the steps (the order, the pruning of decided scores,
the lengths of the score axes) depends on the sizes and the weights only, so it is the
same for every draw and is paid once per batch. The contractions of a table with a CPT
are batched matrix products (``np.matmul`` over the draws and the frontier states that
stay), where the single run uses ``np.einsum``'s C loop for small tables: the products
agree with the single runs' up to the order of summation (``1e-15``).

Two steps of the single run depend on the CPTs' values, not only on the sizes: the
trimming of negligible tails (beyond ``_frontier._TRIM_MIN`` scores) and the independent
block's convolution (its FFT error bound). A batch whose run reaches a trim that does not
cut the same columns in every draw raises :class:`Unbatched`, and :func:`run_batched`
(:mod:`._batched`) then runs each draw alone; plans with an independent block are run
draw by draw there. ``tests/s3p/test_frontier_batched.py`` compares the batched runs with
the single ones and with brute-force enumeration.
"""

from __future__ import annotations

import math

import numpy as np

from ._convolve import negligible_columns, tail_tolerance
from ._frontier import _Accumulators as _SingleAccumulators
from ._frontier import add_leaf_batched, shift_states
from ._steps import prunes_at_start, steps

__all__ = ["Unbatched", "run_frontier_batched"]


class Unbatched(Exception):
    """The draws of a batch need different steps (a trim of different columns)."""


def _collapse(part, axes, keep):
    """Sum ``part`` (``(draw, *axes)``) over the axes not kept, the rest in ``keep`` order."""
    drop = tuple(1 + k for k, a in enumerate(axes) if a not in keep)
    if drop:
        part = part.sum(axis=drop)
    remaining = [a for a in axes if a in keep]
    if remaining:
        part = np.transpose(part, [0] + [1 + remaining.index(k) for k in keep])
    return np.asarray(part, dtype=np.float64)


def _contract(table, axes, cpt, parents, dropped):
    """``sum_dropped table * cpt`` as one batched matrix product.

    ``table`` has axes ``(draw, *axes, score)``, ``cpt`` ``(draw, *parents, v)``.
    Returns ``(prod, out_axes)``, ``prod`` of axes ``(draw, *out_axes, v, score)``:
    ``out_axes`` are the parents that stay, then the other frontier variables.
    """
    n_draws, length = table.shape[0], table.shape[-1]
    stay = [p for p in parents if p not in dropped]
    summed = [p for p in parents if p in dropped]
    other = [a for a in axes if a not in parents]
    size = dict(zip(axes, table.shape[1:-1]))
    n_stay = math.prod(size[a] for a in stay)
    n_other = math.prod(size[a] for a in other)
    n_summed = math.prod(size[a] for a in summed)
    n_states = cpt.shape[-1]
    perm = [0] + [1 + axes.index(a) for a in stay + other + summed] + [len(axes) + 1]
    right = np.transpose(table, perm).reshape(n_draws, n_stay, n_other, n_summed, length)
    cperm = ([0] + [1 + parents.index(p) for p in stay] + [1 + len(parents)]
             + [1 + parents.index(p) for p in summed])
    left = np.transpose(cpt, cperm).reshape(-1, n_stay, 1, n_states, n_summed)
    prod = np.matmul(left, right)
    out_axes = stay + other
    return (prod.reshape((n_draws,) + tuple(size[a] for a in out_axes)
                         + (n_states, length)), out_axes)


def _add_variable(table, axes, step, cpt, weights):
    """Add ``step.var`` (score shifted by its weights) and sum out its dropped parents."""
    length = table.shape[-1]
    if step.parents and not step.stays and not step.dropped:
        return add_leaf_batched(table, axes, cpt, step.parents, weights, step.span), list(axes)
    if step.parents:
        prod, axes = _contract(table, axes, cpt, list(step.parents), step.dropped)
        lead = prod.shape[:-2]
    else:
        lead = table.shape[:-1]
        scale = cpt.reshape((cpt.shape[0],) + (1,) * (table.ndim - 2) + cpt.shape[-1:])

    def product_of(k, out=None):  # the tables times the probability of state k
        if step.parents:
            return prod[..., k, :] if out is None else np.copyto(out, prod[..., k, :])
        return np.multiply(table, scale[..., k : k + 1], out=out)

    new = shift_states(lead, weights, length, step.span, step.stays, product_of)
    return new, list(axes) + ([step.var] if step.stays else [])


class _Accumulators(_SingleAccumulators):
    """Decided mass of every draw (``_frontier._Accumulators`` with a draws axis).

    ``prune``, ``split_last`` and ``finish`` are the single run's, with a leading label
    (``_lead``) and the batched ``_collapse``: they cut by the scores only.
    """

    def __init__(self, problem, n_draws):
        net = problem.network
        self.keep = list(problem.keep)
        self.shape = (n_draws,) + tuple(net.cardinalities[k] for k in self.keep)
        self.threshold = problem.threshold
        self.pos = np.zeros(self.shape)
        self.neg = np.zeros(self.shape)
        self.free = [np.zeros(n_draws), np.zeros(n_draws)]

    _lead = [0]

    def _collapse(self, part, axes):
        return _collapse(part, axes, self.keep)

    def _add(self, positive, part, axes, linked):
        if linked:
            super()._add(positive, part, axes, linked)
        else:
            self.free[0 if positive else 1] += part.reshape(len(part), -1).sum(axis=1)

    def trim(self, table, axes, lo, linked, tol):
        """The single run's trim, done once when it cuts the same columns of every draw."""
        length = table.shape[-1]
        grouped = [k for k, a in enumerate(axes) if linked and a in self.keep]
        drop = tuple(1 + k for k in range(len(axes)) if k not in grouped)
        mass = table.sum(axis=drop) if drop else table
        mass = mass.reshape(len(table), -1, length)
        ends = set()
        for m in mass:  # each draw's cut, as its own run would make it
            budget = tol * m.sum(axis=1, keepdims=True)
            n_lo = min(negligible_columns(m, budget, 4096), length - 1)
            n_hi = min(negligible_columns(m[:, ::-1], budget, 4096), length - 1 - n_lo)
            ends.add((n_lo, n_hi))
        if len(ends) > 1:
            raise Unbatched("the draws' tails differ")
        n_lo, n_hi = ends.pop()
        if n_lo:
            self._add(False, table[..., :n_lo].sum(axis=-1), axes, linked)
        if n_hi:
            self._add(True, table[..., length - n_hi :].sum(axis=-1), axes, linked)
        return table[..., n_lo : length - n_hi], lo + n_lo


def _sliced(problem, table, i):
    """Table ``i`` (a leading draws axis) restricted to the evidence states."""
    evidence = problem.evidence
    for axis, p in enumerate(problem.network.parents[i]):
        if p in evidence:
            table = np.take(table, [evidence[p]], axis=axis + 1)
    if i in evidence:
        table = np.take(table, [evidence[i]], axis=-1)
    return table


def run_frontier_batched(problem, order, cpts, early_prune: bool = True):
    """:func:`._frontier.run` of every draw of ``cpts`` (no independent block).

    Parameters
    ----------
    problem : Problem
        The problem of the point network (weights, threshold, evidence, kept variables).
    order : list of int
        The plan's processing order.
    cpts : list of ndarray
        ``cpts[i]`` of shape ``(D, *shape of table i)``, full states (the evidence is
        applied here).
    early_prune : bool, default=True

    Returns
    -------
    pos, total : ndarray of shape ``(D, *states of the kept variables)``

    Raises
    ------
    Unbatched
        A trim of the score axis cuts different columns in different draws.
    """
    n_draws = len(cpts[0])
    tables = [_sliced(problem, c, i) for i, c in enumerate(cpts)]
    acc = _Accumulators(problem, n_draws)
    tol = tail_tolerance(problem)
    axes: list[int] = []
    table, lo = np.ones((n_draws, 1)), 0
    if prunes_at_start(problem, early_prune):
        table, lo = acc.prune(table, axes, lo, sum(problem.spans), linked=False)
    trimmed = 0
    planned = list(steps(problem, order, early_prune))
    for k, step in enumerate(planned):
        if table.shape[-1] == 0:
            break
        weights = problem.weights[step.var]
        if k == len(planned) - 1:
            table = acc.split_last(table, axes, lo, step, tables[step.var], weights)
            break
        table, axes = _add_variable(table, axes, step, tables[step.var], weights)
        table, lo, trimmed = acc.prune_and_trim(table, axes, lo, step, tol, trimmed)
    acc.finish(table, axes, lo)
    pos, neg = acc.pos, acc.neg
    if acc.free[0].any() or acc.free[1].any():
        lead = (n_draws,) + (1,) * (pos.ndim - 1)
        if problem.need:
            zero = problem.zero_weights()
            marginal = run_frontier_batched(zero, order, cpts, early_prune=False)[1]
        else:
            marginal = np.ones(acc.shape)
        pos = pos + acc.free[0].reshape(lead) * marginal
        neg = neg + acc.free[1].reshape(lead) * marginal
    return pos, pos + neg
