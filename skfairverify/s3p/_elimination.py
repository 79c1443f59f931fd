"""Variable elimination with a score axis (for networks with a wide frontier).

Each factor is a table over some variables and a partial-score axis. The
initial factor of variable ``v`` holds ``Pr[v | parents]`` at score offset
``w_v[state]``. Multiplying two factors multiplies over their variables and
*convolves* their score axes (FFT for long axes); a variable is summed out once
every factor mentioning it has been multiplied. The elimination order follows
the moral graph (min-weight heuristic), so trees and polytrees cost like their
treewidth instead of the (logarithmic, but exponential in the states) width of
a parents-first frontier. There is no threshold pruning: the score axes cover
the full reachable range, which makes this engine slower than the frontier
engine on chains and independent variables; :mod:`._plan` picks the cheaper
plan.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ._convolve import fft_product

_DIRECT_MAX = 48  # convolve directly when the shorter score axis is at most this long


class _Factor:
    __slots__ = ("vars", "table")

    def __init__(self, variables, table):
        self.vars = list(variables)
        self.table = table  # shape (*sizes of vars, score length)


def _align(factor, variables):
    """View of ``factor.table`` with axes ordered as ``variables`` (size-1 if absent)."""
    table = factor.table
    src = [factor.vars.index(v) for v in variables if v in factor.vars]
    table = np.transpose(table, src + [len(factor.vars)])
    shape = []
    k = 0
    for v in variables:
        if v in factor.vars:
            shape.append(table.shape[k])
            k += 1
        else:
            shape.append(1)
    return table.reshape(shape + [table.shape[-1]])


def _multiply_all(factors):
    """Product over variables, convolution over the score axes, of several factors."""
    variables = []
    for f in factors:
        variables += [v for v in f.vars if v not in variables]
    aligned = [_align(f, variables) for f in factors]
    short = [a for a in aligned if a.shape[-1] == 1]
    long = sorted((a for a in aligned if a.shape[-1] > 1), key=lambda a: a.shape[-1])
    if len(long) > 1 and long[0].shape[-1] <= _DIRECT_MAX and len(long) == 2:
        a, b = long
        la, lb = a.shape[-1], b.shape[-1]
        shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + (la + lb - 1,)
        out = np.zeros(shape)
        for j in range(la):
            out[..., j : j + lb] += a[..., j : j + 1] * b
        long = [out]
    elif len(long) > 1:
        long = [fft_product(long, sum(a.shape[-1] - 1 for a in long) + 1)]
    result = long[0] if long else np.ones((1,) * len(variables) + (1,))
    for a in short:
        result = result * a
    return _Factor(variables, result)


def _apply_weight(table, axis, weights, keep_axis):
    """Shift the score axis by ``weights[k]`` along state ``k`` of ``axis``."""
    moved = np.moveaxis(table, axis, -2)
    length = moved.shape[-1]
    span = int(max(weights))
    if keep_axis:
        out = np.zeros(moved.shape[:-1] + (length + span,))
        for k, off in enumerate(weights):
            out[..., k, off : off + length] = moved[..., k, :]
        return np.moveaxis(out, -2, axis)
    out = np.zeros(moved.shape[:-2] + (length + span,))
    for k, off in enumerate(weights):
        out[..., off : off + length] += moved[..., k, :]
    return out


def _eliminate(factors, v, weights):
    """Sum ``v`` out of the product of ``factors``, its score shifted by ``weights``.

    ``sum_k short(k, ...) * long(k, ..., s - w_k)``: the factors with a score axis
    (``long``) are convolved and shifted along ``v`` first, then contracted with the
    product of the others (``short``, the CPTs) over ``v`` by ``np.einsum`` (a matrix
    product for a tree edge), instead of broadcasting the product of all of them over
    ``v``, its parents and the score axis.
    """
    long = [f for f in factors if f.table.shape[-1] > 1]
    short = [f for f in factors if f.table.shape[-1] == 1]
    if not long or not short or v not in set().union(*(f.vars for f in long)):
        product = _multiply_all(factors)
        table = _apply_weight(product.table, product.vars.index(v), weights, keep_axis=False)
        return _Factor([u for u in product.vars if u != v], table)
    lg = _multiply_all(long)
    shifted = _apply_weight(lg.table, lg.vars.index(v), weights, keep_axis=True)
    sh = _multiply_all(short)
    if set(lg.vars) <= set(sh.vars):  # a tree edge: batched (parents x v) @ (v x score)
        return _contract(sh, lg.vars, shifted, v)
    variables, out_vars, letter = einsum_letters(sh.vars, lg.vars, v)
    if len(variables) > 51:  # pragma: no cover - einsum letters; factors this wide never fit
        product = _multiply_all(factors)
        table = _apply_weight(product.table, product.vars.index(v), weights, keep_axis=False)
        return _Factor([u for u in product.vars if u != v], table)
    spec = (f"{''.join(letter[u] for u in sh.vars)},{''.join(letter[u] for u in lg.vars)}z"
            f"->{''.join(letter[u] for u in out_vars)}z")
    table = np.einsum(spec, sh.table[..., 0], shifted, optimize=True)
    return _Factor(out_vars, table)


def einsum_letters(short_vars, long_vars, v):
    """The variables of a two-factor product, those left without ``v``, and their letters.

    The einsum letters are ``a``-``z``, then ``A``-``Z``.
    """
    variables = list(dict.fromkeys(list(short_vars) + list(long_vars)))
    out_vars = [u for u in variables if u != v]
    letter = {u: chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26)
              for k, u in enumerate(variables)}
    return variables, out_vars, letter


def _contract(short, long_vars, shifted, v):
    """``sum_v short[..., v] * shifted[..., v, s]`` as one batched matrix product.

    The variables of ``shifted`` (``long_vars``, among those of ``short``) other than
    ``v`` are the batch; the other variables of ``short`` the rows.
    """
    batch = [u for u in long_vars if u != v]
    rest = [u for u in short.vars if u not in long_vars]
    table = np.transpose(short.table[..., 0], [short.vars.index(u) for u in batch + rest + [v]])
    sizes = table.shape
    n_batch, n_rest = math.prod(sizes[:len(batch)]), math.prod(sizes[len(batch):-1])
    right = np.moveaxis(shifted, long_vars.index(v), -2)  # (batch..., v, score)
    right = right.reshape(n_batch, sizes[-1], shifted.shape[-1])
    out = table.reshape(n_batch, n_rest, sizes[-1]) @ right
    return _Factor(batch + rest, out.reshape(sizes[:-1] + (shifted.shape[-1],)))


def elimination_order(problem):
    """Greedy min-weight order over the moral graph; returns (order, peak, work).

    ``peak`` is the largest factor (entries) and ``work`` a cost estimate
    (entries x log2 of the score length, summed over the products).
    """
    net = problem.network
    keep = set(problem.keep)
    sizes = problem.sizes
    spans = problem.spans
    # symbolic factors: index -> (set of variables, score length)
    factors = {v: (frozenset(net.parents[v]) | {v}, 1) for v in range(net.n_variables)}
    next_idx = net.n_variables
    by_var = {v: set() for v in range(net.n_variables)}
    for idx, (scope, _) in factors.items():
        for v in scope:
            by_var[v].add(idx)

    def evaluate(v):
        scope = frozenset().union(*(factors[i][0] for i in by_var[v]))
        length = sum(factors[i][1] - 1 for i in by_var[v]) + 1
        n_long = sum(1 for i in by_var[v] if factors[i][1] > 1)
        joint = math.prod(sizes[u] for u in scope)
        return joint * (length + spans[v]), scope, length, n_long

    cache = {v: evaluate(v) for v in range(net.n_variables) if v not in keep}
    heap = [(entry[0], v) for v, entry in cache.items()]
    heapq.heapify(heap)
    order, peak, work = [], 0, 0.0
    while heap:
        cost, v = heapq.heappop(heap)
        if v not in cache or cache[v][0] != cost:
            continue  # stale entry
        cost, scope, length, n_long = cache.pop(v)
        involved = list(by_var[v])
        peak = max(peak, cost)
        fft = max(1.0, math.log2(length)) * n_long if n_long > 1 else 1.0
        work += cost * (1.0 + fft)
        new_scope = scope - {v}
        for i in involved:
            for u in factors[i][0]:
                by_var[u].discard(i)
            del factors[i]
        factors[next_idx] = (new_scope, length + spans[v])
        for u in new_scope:
            by_var[u].add(next_idx)
        next_idx += 1
        order.append(v)
        for u in new_scope:
            if u in cache:
                cache[u] = evaluate(u)
                heapq.heappush(heap, (cache[u][0], u))
    # final product of what is left (scopes within the kept variables)
    final_scope = frozenset().union(*(f[0] for f in factors.values()))
    final_length = sum(f[1] - 1 for f in factors.values()) + 1 + sum(spans[k] for k in keep)
    final = math.prod(sizes[u] for u in final_scope) * final_length
    peak = max(peak, final)
    work += final * (1.0 + max(1.0, math.log2(final_length)) * len(factors))
    return order, peak, work


def run_elimination(problem, order):
    """Return (Pr[score >= t, keep = a, evidence], Pr[keep = a, evidence])."""
    net = problem.network
    keep = list(problem.keep)
    factors = [
        _Factor(list(net.parents[v]) + [v], problem.cpts[v][..., None])
        for v in range(net.n_variables)
    ]
    for v in order:
        involved = [f for f in factors if v in f.vars]
        factors = [f for f in factors if v not in f.vars]
        factors.append(_eliminate(involved, v, problem.weights[v]))
    result = _multiply_all(factors) if factors else _Factor([], np.ones(1))
    table = _align(result, keep)
    for axis, k in enumerate(keep):
        table = _apply_weight(table, axis, problem.weights[k], keep_axis=True)
    scores = np.arange(table.shape[-1])  # weights are normalised: scores start at 0
    above = scores >= problem.threshold
    pos = table[..., above].sum(axis=-1)
    total = table.sum(axis=-1)
    return np.asarray(pos, dtype=np.float64), np.asarray(total, dtype=np.float64)
