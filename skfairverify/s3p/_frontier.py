"""The frontier dynamic programme: a table over (frontier states, partial score).

Variables are processed parents-first (:func:`._steps.steps`); a variable is
summed out as soon as its last child has been processed, so the cost is
exponential in the frontier width only. Mass whose outcome is already decided
(the partial score reaches the threshold even if every remaining variable takes
its smallest weight, or cannot reach it even with the largest ones) is moved to
two accumulators, as FVGM's terminating conditions do, which keeps the score
axis short. Scores at either end of the axis holding a negligible share of the
mass (:func:`._convolve.tail_tolerance`, at most ``1e-11`` of it over a whole run)
are moved to the accumulators too: the axis then follows the spread of the
distribution (growing like the square root of the number of variables) instead
of the full range of the weights. Variables independent of all others may be
summed apart (:mod:`._convolve`) and enter at the end through their survival
function.
"""

from __future__ import annotations

import numpy as np

from ._convolve import block_distribution, negligible_columns, survival, tail_tolerance
from ._problem import Problem
from ._steps import prunes_at_start, steps, undecided

# Tails are trimmed only from score axes longer than this (shorter ones gain nothing),
# and once the axis has grown by this factor since the last trim (each trim reads the
# whole table; trimming at every step would cost a third of the run).
_TRIM_MIN, _TRIM_GROWTH = 8192, 1.05
# Contractions of tables larger than this go through BLAS (einsum's optimised path).
_BLAS_MIN = 1 << 16
# Largest error bound (total variation) accepted from the independent block's FFT
# convolutions; beyond it the block's variables are added by the frontier instead.
MAX_BLOCK_ERROR = 1e-10
# Column block of the shifted products (fits in a core's L2 cache with 10 states).
_BLOCK = 4096


def _collapse(part: np.ndarray, axes: list[int], keep: list[int]) -> np.ndarray:
    """Sum ``part`` (axes named by ``axes``) over non-kept axes, in ``keep`` order."""
    drop = tuple(k for k, a in enumerate(axes) if a not in keep)
    if drop:
        part = part.sum(axis=drop)
    remaining = [a for a in axes if a in keep]
    if remaining:
        part = np.transpose(part, [remaining.index(k) for k in keep])
    return np.asarray(part, dtype=np.float64)


def _contract(table, axes, cpt, pa, dropped, blas=False):
    """Multiply the table by a CPT and sum out ``dropped``.

    ``table`` has axes ``axes + [score]`` and ``cpt`` has axes ``pa + [v]``.
    Returns ``(prod, out_axes)`` where ``prod`` has axes ``out_axes + [v, score]``.
    Small tables use ``np.einsum``'s C loop (no planning overhead); with
    ``blas=True`` large ones use its optimised path (BLAS where the contraction
    is a matrix product). Steps summing out the whole frontier (a chain) go
    through :func:`_shifted_product` instead.
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
        optimize=bool(blas and table.size >= _BLAS_MIN),
    )
    return prod, out_axes


def _shifted_product(matrix, table, w, span, stays):
    """``(matrix @ table)[k]`` shifted by ``w[k]``, in column blocks that stay in cache.

    ``matrix`` is ``(states of v, frontier states)`` and ``table`` is
    ``(frontier states, score)``; returns ``(states of v, score + span)`` when
    ``stays``, else the sum over the states of v. Writing each block's product
    straight to its shifted place reads and writes the long axis once (about
    1.5x faster than a whole product followed by the shifts).
    """
    n_states, length = matrix.shape[0], table.shape[-1]
    if stays:  # every entry outside the shifted rows is zeroed here, the rest written below
        new = np.empty((n_states, length + span))
        for k, off in enumerate(w):
            new[k, :off] = 0.0
            new[k, off + length :] = 0.0
    else:
        new = np.zeros(length + span)
    buffer = np.empty((n_states, min(_BLOCK, length)))
    for x0 in range(0, length, _BLOCK):
        x1 = min(x0 + _BLOCK, length)
        block = buffer[:, : x1 - x0]
        np.matmul(matrix, table[:, x0:x1], out=block)
        for k, off in enumerate(w):
            if stays:
                new[k, off + x0 : off + x1] = block[k]
            else:
                new[off + x0 : off + x1] += block[k]
    return new


def _add_leaf(table, axes, cpt, parents, w, span):
    """A variable summed out at once (no children, not kept), none of its parents with it.

    ``new[..., x + w_k] += table[..., x] * cpt[parents, k]`` state by state, the CPT's
    column broadcast over the table: the products and sums of the contraction followed
    by the shifts, in the same order (the same values to the last digit), without the
    table over (frontier, states, score) the contraction would write.
    """
    return add_leaf_batched(table[None], axes, cpt[None], parents, w, span)[0]


def add_leaf_batched(table, axes, cpt, parents, w, span):
    """:func:`_add_leaf` with a leading draws axis in ``table`` and ``cpt``."""
    length = table.shape[-1]
    shape = [len(table)] + [1] * (len(axes) + 1)
    for j, p in enumerate(parents):
        shape[1 + axes.index(p)] = cpt.shape[1 + j]
    perm = sorted(range(len(parents)), key=lambda j: axes.index(parents[j]))
    columns = np.transpose(cpt, [0] + [1 + j for j in perm] + [1 + len(parents)])
    new = np.zeros(table.shape[:-1] + (length + span,))
    product = np.empty(table.shape)
    for k, off in enumerate(w):
        np.multiply(table, columns[..., k].reshape(shape), out=product)
        new[..., off : off + length] += product
    return new


def _add_variable(table, axes, step, problem: Problem, blas=False):
    """Add ``step.var`` to the table (score shifted by its weight) and sum out its parents."""
    cpt = problem.cpts[step.var]
    w = problem.weights[step.var]
    length = table.shape[-1]
    if blas and step.parents and table.size >= _BLAS_MIN and set(axes) == set(step.dropped):
        # every frontier variable is a parent summed out here (a chain, for instance)
        matrix = np.transpose(cpt, [step.parents.index(a) for a in axes] + [len(axes)])
        matrix = matrix.reshape(-1, len(w)).T
        new = _shifted_product(matrix, table.reshape(-1, length), w, step.span, step.stays)
        return new, [step.var] if step.stays else []
    if step.parents and not step.stays and not step.dropped:
        return _add_leaf(table, axes, cpt, step.parents, w, step.span), list(axes)
    if step.parents:
        prod, axes = _contract(table, axes, cpt, step.parents, step.dropped, blas)
        lead = prod.shape[:-2]
    else:
        lead = table.shape[:-1]
    def product_of(k, out=None):  # the table times the probability of state k
        if step.parents:
            return prod[..., k, :] if out is None else np.copyto(out, prod[..., k, :])
        return np.multiply(table, cpt[k], out=out)

    new = shift_states(lead, w, length, step.span, step.stays, product_of)
    return new, list(axes) + ([step.var] if step.stays else [])


def shift_states(lead, weights, length: int, span: int, stays: bool, product_of):
    """The score table after a variable: each state's product shifted by its weight.

    ``product_of(k, out=None)`` is the table (shape ``lead + (length,)``) times the
    probability of state ``k`` (written into ``out`` when given: no temporary table);
    it is shifted by ``weights[k]`` along the score axis. A variable that ``stays``
    keeps an axis of its states (before the score axis); otherwise the states are
    summed. Shared by the single run and the batched run (a leading draws
    axis in ``lead``).
    """
    if stays:
        new = np.zeros(lead + (len(weights), length + span))
        for k, off in enumerate(weights):
            product_of(k, out=new[..., k, off : off + length])
        return new
    new = np.zeros(lead + (length + span,))
    for k, off in enumerate(weights):
        new[..., off : off + length] += product_of(k)
    return new


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

    def prune_and_trim(self, table, axes, lo, step, tol, trimmed):
        """After ``step``: the decided mass pruned, and the score axis trimmed to ``tol``.

        The axis is trimmed once it has grown beyond :data:`_TRIM_GROWTH` times its
        length after the last trim (``trimmed``). Returns the table, its lowest score
        and the new ``trimmed``.
        """
        if not step.prune:
            return table, lo, trimmed
        table, lo = self.prune(table, axes, lo, step.rest, step.linked)
        length = table.shape[-1]
        trimmed = min(trimmed, length)
        if tol and length > max(_TRIM_MIN, _TRIM_GROWTH * trimmed):
            table, lo = self.trim(table, axes, lo, step.linked, tol)
            trimmed = table.shape[-1]
        return table, lo, trimmed
    def _add(self, positive, part, axes, linked):
        if linked:
            target = self.pos if positive else self.neg
            target[...] += self._collapse(part, axes)
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

    def trim(self, table, axes, lo, linked, tol):
        """Move the ends of the score axis holding at most ``tol`` of the mass.

        The mass is measured per kept assignment (after the kept variables are
        processed) so that every conditional probability moves by at most ``tol``.
        The lower end goes to ``neg``, the upper to ``pos``.
        """
        length = table.shape[-1]
        grouped = [k for k, a in enumerate(axes) if linked and a in self.keep]
        drop = tuple(k for k in range(len(axes)) if k not in grouped)
        mass = (table.sum(axis=drop) if drop else table).reshape(-1, length)
        budget = tol * mass.sum(axis=1, keepdims=True)
        n_ends = [negligible_columns(mass, budget, 4096),
                  negligible_columns(mass[:, ::-1], budget, 4096)]
        n_lo = min(n_ends[0], length - 1)
        n_hi = min(n_ends[1], length - 1 - n_lo)
        if n_lo:
            self._add(False, table[..., :n_lo].sum(axis=-1), axes, linked)
        if n_hi:
            self._add(True, table[..., length - n_hi :].sum(axis=-1), axes, linked)
        return table[..., n_lo : length - n_hi], lo + n_lo

    #: Leading axes of every table before the frontier's (a batch's draws: ``[0]``).
    _lead: list = []

    def _collapse(self, part, axes):
        return _collapse(part, axes, self.keep)

    def split_last(self, table, axes, lo, step, cpt, w):
        """Add the last variable and split the mass by the threshold, in one pass.

        No table over (states, shifted scores) is made: the mass at or above the
        threshold given state ``k`` of the variable is the table's survival function at
        ``t - w_k``, so the step costs the length of the score axis plus the number of
        states, not their product (a variable of 10,000 states, every bin of a
        continuous feature, is its states times faster). Returns the empty table.
        """
        length = table.shape[-1]
        zero = np.zeros(table.shape[:-1] + (1,))
        below = np.concatenate([zero, np.cumsum(table, axis=-1)], axis=-1)
        above = np.concatenate([np.cumsum(table[..., ::-1], axis=-1)[..., ::-1], zero],
                               axis=-1)
        at = np.clip(self.threshold - lo - np.asarray(w, dtype=np.int64), 0, length)
        out_axes = [a for a in axes if a not in step.dropped]
        lead = list(range(len(self._lead)))
        label = {a: j + len(lead) for j, a in enumerate(axes)}
        v_label = len(lead) + len(axes)
        target = lead + [label[a] for a in out_axes] + ([v_label] if step.stays else [])
        for positive, part in ((True, above[..., at]), (False, below[..., at])):
            mass = np.einsum(part, lead + [label[a] for a in axes] + [v_label], cpt,
                             lead + [label[p] for p in step.parents] + [v_label], target)
            self._add(positive, mass, out_axes + [step.var] * step.stays, step.linked)
        return table[..., :0]

    def finish(self, table, axes, lo):
        """Split what is left of the table by the threshold."""
        length = table.shape[-1]
        if length:
            above = lo + np.arange(length) >= self.threshold
            self.pos += self._collapse(table[..., above].sum(axis=-1), axes)
            self.neg += self._collapse(table[..., ~above].sum(axis=-1), axes)

    def finish_with_block(self, table, axes, lo, distribution):
        """Split the table by the threshold against the independent block's score."""
        length = table.shape[-1]
        if not length:
            return
        dist, dist_lo = distribution
        tail = survival(dist, dist_lo, self.threshold, lo, length)
        pos = table @ tail
        neg = np.maximum(table.sum(axis=-1) - pos, 0.0)
        self.pos += _collapse(pos, axes, self.keep)
        self.neg += _collapse(neg, axes, self.keep)


def run(
    problem: Problem, order, early_prune: bool = True, block=(), legacy: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Run the DP; return (Pr[score >= t, keep = a, evidence], Pr[keep = a, evidence]).

    ``block`` lists variables (not in ``order``) summed apart by
    :func:`._convolve.block_distribution` (added to the order instead when its
    error bound exceeds ``MAX_BLOCK_ERROR``). ``legacy=True`` runs the engine as it
    was before the tail trimming and BLAS contractions (for benchmarks and tests).
    """
    distribution = None
    if block:
        dist, dist_lo, error = block_distribution(problem, block)
        if error <= MAX_BLOCK_ERROR:
            distribution = (dist, dist_lo)
        else:  # round-off bound too loose (point-like distributions): add them one by one
            order, block = list(order) + list(block), ()
    acc = _Accumulators(problem)
    tol = 0.0 if legacy else tail_tolerance(problem)
    axes: list[int] = []
    table, lo = np.ones(1), 0
    if prunes_at_start(problem, early_prune):
        table, lo = acc.prune(table, axes, lo, sum(problem.spans), linked=False)
    trimmed = 0  # length of the axis after the last trim
    planned = list(steps(problem, order, early_prune))
    for k, step in enumerate(planned):
        if table.shape[-1] == 0:
            break
        if k == len(planned) - 1 and distribution is None and not legacy:
            table = acc.split_last(table, axes, lo, step, problem.cpts[step.var],
                                   problem.weights[step.var])
            break
        table, axes = _add_variable(table, axes, step, problem, blas=not legacy)
        table, lo, trimmed = acc.prune_and_trim(table, axes, lo, step, tol, trimmed)
    if distribution is not None:
        acc.finish_with_block(table, axes, lo, distribution)
    else:
        acc.finish(table, axes, lo)
    pos, neg = acc.pos, acc.neg
    if acc.free[0] or acc.free[1]:
        if problem.need:
            # Pr[keep = a, evidence]: the same run with all weights zero, no early pruning.
            zero = problem.zero_weights()
            marginal = run(zero, order, early_prune=False, block=block, legacy=legacy)[1]
        else:
            marginal = np.ones(acc.shape)
        pos = pos + acc.free[0] * marginal
        neg = neg + acc.free[1] * marginal
    return pos, pos + neg
