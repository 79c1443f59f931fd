"""Many networks of one structure solved together: a leading draws axis in every table.

The verifier's posterior draws share the structure, the states and the rule of the
point network; only the CPTs' values differ. :func:`run_batched` runs a plan made on
the point network (:func:`._plan.make_plan`) for ``D`` sets of CPTs at once: the
variable elimination engine (:mod:`._elimination`) is run once with a leading axis of
``D`` in every factor, so its per-variable Python work (alignments, shifts by the
weights, contractions, FFT calls) is paid once per batch instead of once per draw.

Every factor also keeps the lowest score of its axis, and after each elimination the
ends of the axis holding a negligible share of every row's mass are folded into the
first / last kept score, as the frontier engine trims its tails
(:func:`._convolve.tail_tolerance`: at most ``1e-11`` of the mass of every kept
assignment over a whole run): the score axis then follows the spread of the
distribution, not the full range of the weights, which shortens the FFT convolutions
near the root of large trees. Folding keeps every row's mass, so the marginals are
unchanged; each conditional probability moves by at most the folded mass (see
:func:`_fold`).

Plans of the frontier engine run all draws of a batch in one pass too
(:mod:`._frontier_batched`), but those with an independent block and the batches whose
draws trim different tails, which run one draw at a time on the same plan (no new
search of orders).
"""

from __future__ import annotations

import math

import numpy as np

from ._convolve import fft_product, negligible_columns, tail_tolerance
from ._elimination import _apply_weight, einsum_letters
from ._frontier_batched import Unbatched, run_frontier_batched
from ._plan import _new_plan, single_threaded_blas

# Convolve two score axes directly (shifted products) when the shorter is at most this
# long, else by FFT. Measured on the draws' tables (rows x length: 600 x 500 to 60 x
# 20,000, one thread; ``python benchmarks/bench_intervals.py --convolution``): direct takes
# 0.40-0.65x the FFT's time at 4, 0.53-1.13x at 8, 2.0-3.6x at 32 and 3.3-6.9x at 48 (the
# single-draw engine's threshold).
_DIRECT_MAX = 8
# Axes shorter than this are not trimmed (the cumulated sums would cost more than
# the shorter convolutions save).
_TRIM_MIN = 256
# Entries of the engine's arrays alive at once per entry of the plan's peak table
# (factors, FFT spectra and the output), the unit of the batch's memory estimate.
ARRAYS_PER_PEAK = 3
# Private switch: False runs the frontier plans' draws one at a time (tests, benchmarks).
_FRONTIER_BATCHED = True
# Largest batch, in entries of the plan's peak table summed over the draws (8 MiB: with
# the batch's other arrays, within a core's share of the last-level cache).
BATCH_ENTRIES = 1 << 20


class _Factor:
    """A table over ``(draw, *variables, score)``; ``lo`` is the score of index 0."""

    __slots__ = ("vars", "table", "lo")

    def __init__(self, variables, table, lo=0):
        self.vars = list(variables)
        self.table = table
        self.lo = int(lo)


def batch_size(plan, n_draws: int, max_table_size: int) -> int:
    """Draws per batched run of ``plan``, from its peak table (estimated before any run).

    ``ARRAYS_PER_PEAK`` peak tables per draw must fit in ``max_table_size``, and a
    batch holds at most ``BATCH_ENTRIES`` entries of peak tables: batching pays for the
    engine's per-variable Python work, which matters for small tables; for large
    ones the time is in the arithmetic and larger batches only leave the cache
    (``docs/benchmarks.md``, issue 23's cost: on the bootstrap replicates of Adult,
    German and COMPAS, 0.88x the time of batches of twice as many entries). At least
    one draw (the plan itself fits in ``max_table_size``).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, plan
    >>> from skfairverify.s3p._batched import batch_size
    >>> net = BayesNet.independent([[0.5, 0.5]] * 2)
    >>> p = plan([np.array([0, 1])] * 2, 1, net)
    >>> batch_size(p, 50, 1000), batch_size(p, 50, 10)
    (50, 1)
    """
    peak = max(int(plan.peak_entries), 1)
    fits = min(max_table_size // (ARRAYS_PER_PEAK * peak), BATCH_ENTRIES // peak)
    return int(max(1, min(n_draws, fits)))


def run_batched(plan, cpts) -> tuple[np.ndarray, np.ndarray]:
    """Run ``plan`` for every draw of ``cpts``; ``(pos, total)`` with a leading draws axis.

    Parameters
    ----------
    plan : Plan
        A plan of :func:`._plan.make_plan` (bound to a problem of the same structure,
        weights, threshold and evidence as the draws).
    cpts : list of ndarray
        ``cpts[i]`` of shape ``(D, *shape of table i)``: the draws' tables (full
        states; the plan's evidence is applied here).

    Returns
    -------
    pos, total : ndarray of shape ``(D, *states of the kept variables)``
        ``Pr[score >= t, keep = a, evidence]`` and ``Pr[keep = a, evidence]`` of every
        draw, as :meth:`Plan._execute` of each draw's network.
    """
    n_draws = len(cpts[0])
    if plan.groups:
        pos, total = np.zeros((n_draws,) + plan._shape), np.zeros((n_draws,) + plan._shape)
        for states, group in plan.groups.items():
            index = (slice(None),) + tuple(states)
            pos[index], total[index] = run_batched(group, cpts)
        return pos, total
    if plan.engine == "elimination":
        with single_threaded_blas():  # thin products: see _plan.single_threaded_blas
            return run_elimination_batched(plan._problem, plan.order, cpts)
    if plan.engine == "frontier" and not plan._block and n_draws > 1 and _FRONTIER_BATCHED:
        try:
            with single_threaded_blas():  # thin products: see _plan.single_threaded_blas
                return run_frontier_batched(plan._problem, plan.order, cpts)
        except Unbatched:  # the draws' tails differ: each draw as its own run trims it
            pass
    runs = [_one_draw(plan, [c[d] for c in cpts])._execute() for d in range(n_draws)]
    return np.stack([r[0] for r in runs]), np.stack([r[1] for r in runs])


def _one_draw(plan, tables):
    """``plan`` rebound to the tables of one draw (no validation, no new search)."""
    problem = plan._problem
    clone = object.__new__(type(problem))
    clone.__dict__.update(problem.__dict__)
    clone.cpts = [_sliced(problem, t, i, 0) for i, t in enumerate(tables)]
    return _new_plan(plan.engine, plan.order, plan.peak_entries, plan.work, plan.n_orders,
                     problem=clone, block=plan._block)


def _sliced(problem, table, i, lead=1):
    """Table ``i`` (with ``lead`` leading draw axes) restricted to the evidence states."""
    evidence = problem.evidence
    for axis, p in enumerate(problem.network.parents[i]):
        if p in evidence:
            table = np.take(table, [evidence[p]], axis=axis + lead)
    if i in evidence:
        table = np.take(table, [evidence[i]], axis=-1)
    return table


def run_elimination_batched(problem, order, cpts) -> tuple[np.ndarray, np.ndarray]:
    """Variable elimination of :mod:`._elimination` with a leading draws axis.

    Returns ``(pos, total)`` of shape ``(D, *states of problem.keep)``.
    """
    net = problem.network
    keep = list(problem.keep)
    n_draws = len(cpts[0])
    tol = tail_tolerance(problem)
    # A variable with a single allowed state (evidence) and not kept is no axis at all:
    # its weight is 0 after normalisation and its tables are sliced to that state, so it
    # is dropped from every factor instead of eliminated (eliminating it would multiply
    # together every factor that mentions it, e.g. all of them for a sensitive parent).
    single = {v for v in range(net.n_variables) if problem.sizes[v] == 1 and v not in keep}
    factors = [_cpt_factor(problem, cpts[v], v, single) for v in range(net.n_variables)]
    order = [v for v in order if v not in single]
    for v in order[:-1]:
        involved = [f for f in factors if v in f.vars]
        factors = [f for f in factors if v not in f.vars]
        factors.append(_fold(_eliminate(involved, v, problem.weights[v]), tol))
    if order:
        last = _last_step(factors, order[-1], problem)
        if last is not None:
            return last
        involved = [f for f in factors if order[-1] in f.vars]
        factors = [f for f in factors if order[-1] not in f.vars]
        factors.append(_eliminate(involved, order[-1], problem.weights[order[-1]]))
    if factors:
        result = _multiply_all(factors)
    else:
        result = _Factor([], np.ones((n_draws, 1)))
    table = _align(result, keep)
    for axis, k in enumerate(keep):
        table = _apply_weight(table, axis + 1, problem.weights[k], keep_axis=True)
    table = np.broadcast_to(table, (n_draws,) + table.shape[1:])
    above = result.lo + np.arange(table.shape[-1]) >= problem.threshold
    pos = table[..., above].sum(axis=-1)
    total = table.sum(axis=-1)
    return np.asarray(pos, dtype=np.float64), np.asarray(total, dtype=np.float64)


def _threshold_dots(short, table, start):
    """``sum_x short[..., x] * Pr_table[y >= start - x]`` for every row.

    ``table`` has shape ``(..., n)`` (a distribution per row over ``y = 0 .. n - 1``);
    ``short`` and ``start`` (integers) broadcast against ``table.shape[:-1]``. The
    survival function is padded with its total on the left and zeros on the right, so
    that every row needs ``len(short)`` consecutive entries of it, reversed: one dot
    product per row on a slice (no index array, no copy of the windows).
    """
    n, length = table.shape[-1], short.shape[-1]
    survival = np.cumsum(table[..., ::-1], axis=-1)[..., ::-1]
    start = np.clip(start, -length, n + length - 1)  # beyond: all mass, or none
    lead = np.broadcast_shapes(table.shape[:-1], short.shape[:-1], np.shape(start))
    own = table.shape[:-1]  # padded at the table's own shape
    left = np.broadcast_to(survival[..., :1], own + (2 * length,))
    padded = np.concatenate([left, survival, np.zeros(own + (length,))], axis=-1)
    # padded[j] = Pr[y >= j - 2 * length]; row r needs padded[start_r + 2 length - x],
    # i.e. `length` consecutive entries of the reversed row from first_r
    reverse = np.ascontiguousarray(padded[..., ::-1]).ravel()
    width = padded.shape[-1]
    first = width - 1 - (np.broadcast_to(start, lead) + 2 * length)
    row = np.broadcast_to(np.arange(math.prod(own)).reshape(own), lead)
    begin = (row * width + first).ravel()
    rows = np.broadcast_to(short, lead + (length,)).reshape(-1, length)
    out = np.fromiter((rows[r] @ reverse[b : b + length] for r, b in enumerate(begin)),
                      dtype=np.float64, count=len(begin))
    return out.reshape(lead)


def _cpt_factor(problem, table, v, single):
    """The factor of ``v``'s table: evidence applied, the axes of ``single`` removed."""
    scope = list(problem.network.parents[v]) + [v]
    table = _sliced(problem, table, v)
    drop = tuple(1 + j for j, u in enumerate(scope) if u in single)
    return _Factor([u for u in scope if u not in single], table.sum(axis=drop)[..., None]
                   if drop else table[..., None])


def _last_step(factors, v, problem):
    """``(pos, total)`` with the last variable ``v`` summed against a survival function.

    Every factor left is over the kept variables and ``v``. The longest score axis
    ``F`` is not convolved with the product ``G`` of the others: the run only needs
    ``Pr[score >= t]``, i.e. ``sum_x F[x] * Pr_G[y >= t - shift - x]`` for every draw,
    kept assignment and state of ``v`` (``shift``: their weights), a dot product with
    ``G``'s survival function. None when no factor has a score axis.
    """
    keep = list(problem.keep)
    variables = keep + [v]
    lo = sum(f.lo for f in factors)
    aligned = [_align(f, variables) for f in factors]
    long = sorted((a for a in aligned if a.shape[-1] > 1), key=lambda a: a.shape[-1])
    if not long:
        return None
    big = long.pop()
    rest = _convolve_all(long)
    rest = rest if rest is not None else np.ones((1,) * (len(variables) + 2))
    coef = np.ones((1,) * (len(variables) + 2))
    for a in aligned:
        if a.shape[-1] == 1:
            coef = coef * a
    coef = coef[..., 0]
    shift = sum(np.asarray(problem.weights[u]).reshape(
        [-1 if j == k else 1 for j in range(len(variables))])
        for k, u in enumerate(variables))
    start = problem.threshold - lo - shift  # score of G needed by x = 0, per row
    # sum over x + y >= start of big[x] * rest[y]: symmetric, so the longer axis gives
    # the survival function and the shorter the window (one pass over the longer)
    short_axis, long_axis = sorted((big, rest), key=lambda a: a.shape[-1])
    pos = (coef * _threshold_dots(short_axis, long_axis, start)).sum(axis=-1)
    total = (coef * big.sum(axis=-1) * rest.sum(axis=-1)).sum(axis=-1)
    n_draws = max(len(big), len(coef))
    shape = (n_draws,) + tuple(problem.sizes[k] for k in keep)
    return (np.broadcast_to(pos, shape).astype(np.float64),
            np.broadcast_to(total, shape).astype(np.float64))


def _fold(factor, tol):
    """Fold the ends of the score axis holding at most ``tol`` of every row's mass.

    A row is one draw and one assignment of the factor's variables. The mass before
    the first kept score goes to it, the mass after the last kept score to that one:
    every row keeps its mass and moves at most ``2 * tol`` of it by less than the
    axis' length, so a probability of the run (a sum of products of non-negative
    factors, split at the threshold) moves by at most ``2 * tol`` of its
    conditioning event's mass per fold.
    """
    table = factor.table
    length = table.shape[-1]
    if length < _TRIM_MIN or tol <= 0.0:
        return factor
    mass = table.reshape(-1, length)
    # Every row's mass is a probability (at most 1): an end entry above tol in some row
    # leaves that end as it is, without the row sums (a pass over the whole table).
    ends = [not np.any(mass[:, 0] > tol), not np.any(mass[:, -1] > tol)]
    if not any(ends):
        return factor
    budget = tol * mass.sum(axis=1, keepdims=True)
    n_lo = min(negligible_columns(mass, budget, 64), length - 1) if ends[0] else 0
    n_hi = (min(negligible_columns(mass[:, ::-1], budget, 64), length - 1 - n_lo)
            if ends[1] else 0)
    if 8 * (n_lo + n_hi) < length:  # a small fold saves little, and would make the
        return factor  # FFT lengths differ from draw to draw (pocketfft replans each)
    kept = table[..., n_lo : length - n_hi].copy()
    if n_lo:
        kept[..., 0] += table[..., :n_lo].sum(axis=-1)
    if n_hi:
        kept[..., -1] += table[..., length - n_hi :].sum(axis=-1)
    return _Factor(factor.vars, kept, factor.lo + n_lo)


def _align(factor, variables):
    """View of the table with axes ``(draw, *variables, score)`` (size 1 where absent)."""
    table = factor.table
    src = [factor.vars.index(v) for v in variables if v in factor.vars]
    table = np.transpose(table, [0] + [s + 1 for s in src] + [len(factor.vars) + 1])
    sizes = iter(table.shape[1:-1])
    shape = [next(sizes) if v in factor.vars else 1 for v in variables]
    return table.reshape([table.shape[0]] + shape + [table.shape[-1]])


def _multiply_all(factors):
    """Product over the variables, convolution over the score axes, of several factors."""
    variables = []
    for f in factors:
        variables += [v for v in f.vars if v not in variables]
    lo = sum(f.lo for f in factors)
    aligned = [_align(f, variables) for f in factors]
    short = [a for a in aligned if a.shape[-1] == 1]
    long = _convolve_all([a for a in aligned if a.shape[-1] > 1])
    result = long if long is not None else np.ones((1,) * (len(variables) + 2))
    for a in short:
        result = result * a
    return _Factor(variables, result, lo)


def _convolve_all(tables):
    """Convolution of ``tables`` along their last axis (product over the others), or None.

    The shortest are combined first while that saves work: directly when the
    shorter is at most ``_DIRECT_MAX`` long, by a pairwise FFT when three transforms
    of their combined length cost less than the transform of the full length that
    they then no longer need; the rest in one FFT product (one transform each at the
    full length and one inverse).
    """
    if not tables:
        return None
    tables = sorted(tables, key=lambda a: a.shape[-1])
    full = sum(a.shape[-1] - 1 for a in tables) + 1
    while len(tables) > 1:
        a, b = tables[0], tables[1]
        pair = a.shape[-1] + b.shape[-1] - 1
        same = a.shape[:-1] == b.shape[:-1]
        if a.shape[-1] <= _DIRECT_MAX and (same or len(tables) == 2):
            merged = _direct(a, b)
        elif len(tables) > 2 and same and 3 * pair < full:
            merged = fft_product([a, b], pair)
        else:
            break
        tables = sorted([merged] + tables[2:], key=lambda t: t.shape[-1])
    if len(tables) == 1:
        return tables[0]
    return fft_product(tables, full)


def _direct(a, b):
    """``a * b`` along the last axis, ``a`` the shorter, by shifted products."""
    la, lb = a.shape[-1], b.shape[-1]
    out = np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + (la + lb - 1,))
    for j in range(la):
        out[..., j : j + lb] += a[..., j : j + 1] * b
    return out


def _eliminate(factors, v, weights):
    """Sum ``v`` out of the product of ``factors``, its score shifted by ``weights``.

    As :func:`._elimination._eliminate`, with the draws axis leading every table.
    """
    long = [f for f in factors if f.table.shape[-1] > 1]
    short = [f for f in factors if f.table.shape[-1] == 1]
    if not long or not short or v not in set().union(*(f.vars for f in long)):
        product = _multiply_all(factors)
        axis = product.vars.index(v) + 1
        table = _apply_weight(product.table, axis, weights, keep_axis=False)
        return _Factor([u for u in product.vars if u != v], table, product.lo)
    lg = _multiply_all(long)
    shifted = _apply_weight(lg.table, lg.vars.index(v) + 1, weights, keep_axis=True)
    sh = _multiply_all(short)
    lo = lg.lo + sh.lo
    if set(lg.vars) <= set(sh.vars):  # a tree edge: batched (parents x v) @ (v x score)
        return _contract(sh, lg.vars, shifted, v, lo)
    variables, out_vars, letter = einsum_letters(sh.vars, lg.vars, v)
    if len(variables) > 50:  # pragma: no cover - einsum letters; factors this wide never fit
        product = _multiply_all(factors)
        table = _apply_weight(product.table, product.vars.index(v) + 1, weights,
                              keep_axis=False)
        return _Factor([u for u in product.vars if u != v], table, product.lo)
    spec = (f"Z{''.join(letter[u] for u in sh.vars)},Z{''.join(letter[u] for u in lg.vars)}z"
            f"->Z{''.join(letter[u] for u in out_vars)}z")
    table = np.einsum(spec, sh.table[..., 0], shifted, optimize=True)
    return _Factor(out_vars, table, lo)


def _contract(short, long_vars, shifted, v, lo):
    """``sum_v short[d, ..., v] * shifted[d, ..., v, s]`` as one batched matrix product."""
    batch = [u for u in long_vars if u != v]
    rest = [u for u in short.vars if u not in long_vars]
    perm = [0] + [short.vars.index(u) + 1 for u in batch + rest + [v]]
    table = np.transpose(short.table[..., 0], perm)
    n_draws = max(table.shape[0], shifted.shape[0])
    sizes = table.shape[1:]
    n_batch, n_rest = math.prod(sizes[:len(batch)]), math.prod(sizes[len(batch):-1])
    right = np.moveaxis(shifted, long_vars.index(v) + 1, -2)  # (draw, batch..., v, score)
    right = np.broadcast_to(right, (n_draws,) + right.shape[1:])
    right = right.reshape(n_draws, n_batch, sizes[-1], shifted.shape[-1])
    left = np.broadcast_to(table, (n_draws,) + sizes).reshape(n_draws, n_batch, n_rest,
                                                             sizes[-1])
    out = left @ right
    return _Factor(batch + rest, out.reshape((n_draws,) + sizes[:-1] + (shifted.shape[-1],)),
                   lo)
