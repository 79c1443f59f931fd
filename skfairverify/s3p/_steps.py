"""The steps of the frontier engine, and their cost simulated on sizes only.

:func:`steps` is the one description of a run: for each variable in the
processing order, which parents are summed out, whether the variable stays in
the frontier, and whether decided mass may be pruned afterwards. The dynamic
programme (:func:`._frontier.run`) and the cost simulation (:func:`simulate`)
both consume it, so the plan always describes the run.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ._problem import Problem


class Step(NamedTuple):
    """Add one variable to the table, then sum out the parents it was the last child of."""

    var: int  # the variable added
    parents: tuple  # its parents (axes of its CPT, in order)
    dropped: list  # parents summed out by this step
    stays: bool  # the variable stays in the frontier (it has children or is kept)
    span: int  # the largest (normalised) weight of the variable
    rest: int  # sum of the spans of the variables still to come
    linked: bool  # a variable linked to the evidence / kept ones has been processed
    prune: bool  # decided mass may be moved to the accumulators after this step


def prunes_at_start(problem: Problem, early_prune: bool = True) -> bool:
    """Whether decided mass may be pruned before the first step."""
    return early_prune or not problem.need


def steps(problem: Problem, order, early_prune: bool = True):
    """Yield the :class:`Step` of each variable of ``order``.

    Mass may be moved to the accumulators as soon as that is valid: once every
    evidence / kept variable is processed, or (with ``early_prune``) while no
    variable connected to them has been processed yet (then the decided mass is
    independent of the evidence and is weighted by ``Pr[keep = a, evidence]``
    at the end).
    """
    keep = set(problem.keep)
    remaining = [len(c) for c in problem.children]
    rest = sum(problem.spans)
    n_need = len(problem.need)
    done = 0
    linked = False
    for v in order:
        parents = problem.network.parents[v]
        linked = linked or v in problem.linked
        dropped = [p for p in parents if remaining[p] == 1 and p not in keep]
        for p in parents:
            remaining[p] -= 1
        rest -= problem.spans[v]
        done += v in problem.need
        yield Step(
            var=v,
            parents=parents,
            dropped=dropped,
            stays=bool(problem.children[v]) or v in keep,
            span=problem.spans[v],
            rest=rest,
            linked=linked,
            prune=done == n_need or (early_prune and not linked),
        )


def undecided(lo: int, hi: int, threshold: int, rest: int) -> tuple[int, int]:
    """Scores in ``[lo, hi]`` whose outcome the remaining ``rest`` can still change."""
    return max(lo, threshold - rest), min(hi, threshold - 1)


class Cost(NamedTuple):
    """Simulated cost of a frontier run."""

    peak: int  # largest array the run allocates (entries)
    work: float  # entries written in all (a proxy of the time)
    worst: tuple | None  # (variable, frontier variables, joint states, score length) at the peak
    block: tuple = ()  # variables summed as an independent block (see ._convolve)


def simulate(problem: Problem, order) -> Cost:
    """Dry run of :func:`._frontier.run` on sizes only, with or without the independent block.

    When two or more variables are independent of everything else, summing them
    apart (:mod:`._convolve`) and the others by the frontier is also simulated;
    the cheaper plan that fits in ``max_table_size`` is returned (its ``block``
    names the variables summed apart).
    """
    plain = _simulate(problem, order)
    block = problem.block()
    if len(block) < 2:
        return plain
    block_peak, block_work = problem.block_cost()
    members = set(block)
    rest = _simulate(problem, [v for v in order if v not in members], final_dot=True)
    combined = Cost(max(rest.peak, block_peak), rest.work + block_work, rest.worst, block)
    limit = problem.max_table_size
    if combined.peak > limit or (plain.peak <= limit and plain.work <= combined.work):
        return plain
    return combined


def _simulate(problem: Problem, order, final_dot: bool = False) -> Cost:
    """Cost of the frontier steps over ``order`` (plus the dot with a block's survival)."""
    frontier: dict[int, int] = {}
    t = problem.threshold
    lo, hi = undecided(0, 0, t, sum(problem.spans))
    peak, work, worst = 0, 0, None
    planned = list(steps(problem, order))
    for k, step in enumerate(planned):
        length = hi - lo + 1
        if length <= 0:
            break
        size_f = math.prod(frontier.values())
        rest = size_f // math.prod(frontier[p] for p in step.dropped)
        size_v = problem.sizes[step.var]
        out_states = rest * (size_v if step.stays else 1)
        if k == len(planned) - 1 and not final_dot:
            # split by the threshold at once (_Accumulators.split_last): the table's
            # two cumulated sums and their values at every state of the variable
            entries = max(size_f * (length + 1), size_f * size_v)
            work += 2 * size_f * (length + size_v)
        else:
            entries = max(size_f * length, rest * size_v * length,
                          out_states * (length + step.span))
            work += rest * size_v * length + out_states * (length + step.span)
        if entries > peak:
            kept = [p for p in frontier if p not in step.dropped]
            peak = entries
            worst = (step.var, kept + [step.var] * step.stays, max(size_f, out_states),
                     length + step.span)
        for p in step.dropped:
            del frontier[p]
        if step.stays:
            frontier[step.var] = size_v
        hi += step.span
        if step.prune:
            lo, hi = undecided(lo, hi, t, step.rest)
    if final_dot:
        work += math.prod(frontier.values()) * max(hi - lo + 1, 0)
    return Cost(peak, work, worst)
