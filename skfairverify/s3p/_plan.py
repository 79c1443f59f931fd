"""The planner: choose the engine and the order on sizes only, before any allocation.

Both engines are simulated (:func:`._steps.simulate` for the frontier engine,
:func:`._elimination.elimination_order` for variable elimination) and the cheaper
plan that fits in ``max_table_size`` is kept; a group table is computed jointly or
one run per group, whichever plans cheaper.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..utils._results import Result
from ..utils._threads import limited_threads
from ._elimination import elimination_order, run_elimination
from ._errors import TableTooLargeError
from ._frontier import run
from ._ordering import candidate_orders, random_order
from ._problem import Problem
from ._steps import simulate
from ._validation import (
    check_evidence,
    check_network,
    check_order,
    check_threshold,
    check_vars,
    check_weights,
)

ENGINES = ("auto", "frontier", "elimination")
# Largest number of assignments of evidence_vars planned as one run per assignment.
_MAX_SPLIT_GROUPS = 64
# Plans cheaper than this (in frontier work units) are run without comparison.
_ELIMINATION_THRESHOLD = 1e6
# Large frontier runs limit BLAS to one thread (see single_threaded_blas).
_SINGLE_THREAD_WORK = 1e6
# Measured cost of one work unit: ~6 ns for the frontier engine (shift-and-add,
# Python per-variable overhead), 0.07 to 0.4 ns for elimination since its matrix-product
# contraction (measured on the verifier's tree-augmented networks, 10 and 100 features).
_FRONTIER_UNIT, _ELIMINATION_UNIT = 6.0, 0.5
# No random frontier orders are tried when the best candidate order costs more than
# this many times a variable elimination that fits.
_RIVAL_MARGIN = 100.0


@dataclass(repr=False, eq=False)
class Plan(Result):
    """How the exact engine will compute a probability, chosen before anything is allocated.

    Returned by :func:`plan`; the functions :func:`positive_probability`,
    :func:`positive_probability_table` and :func:`best_assignment` make the same
    plan and run it.

    Attributes
    ----------
    engine : {"frontier", "elimination", "per-group"}
        ``"frontier"``: parents-first table over (frontier states, partial
        score) with pruning; ``"elimination"``: variable elimination convolving
        score axes; ``"per-group"``: one run per assignment of ``evidence_vars``
        (see ``groups``).
    order : list of int or None
        Processing order of the frontier engine, or elimination order of the
        elimination engine; None for ``"per-group"``. When the frontier plan
        sums the variables independent of all others apart (a tree of FFT
        convolutions, when cheaper), they stay listed here and their cost is
        included in ``peak_entries`` and ``work``.
    peak_entries : int
        Largest array the run allocates, in float64 entries (the quantity
        compared with ``max_table_size``).
    work : float
        Simulated cost, in the engine's work units (entries written).
    n_orders : int
        Number of distinct frontier orders simulated to choose ``order``.
    groups : dict of {tuple of int: Plan}
        For ``"per-group"``, the plan of each assignment of ``evidence_vars``
        (states in the order of ``evidence_vars``); empty otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, plan
    >>> net = BayesNet([2, 2], [(), (0,)], [np.array([0.5, 0.5]), np.full((2, 2), 0.5)])
    >>> p = plan([np.array([0, 1]), np.array([0, 2])], 2, net)
    >>> p.engine, p.order, p.peak_bytes == 8 * p.peak_entries
    ('frontier', [0, 1], True)
    """

    engine: str
    order: list[int] | None
    peak_entries: int
    work: float
    n_orders: int = 0
    groups: dict = field(default_factory=dict)
    # How to run it (not fields: set by _new_plan): the problem, or the groups' shape,
    # and the variables summed apart as an independent block (frontier engine).
    _problem = None
    _shape = ()
    _block = ()

    @property
    def peak_bytes(self) -> int:
        """Memory of the largest array, in bytes (8 per float64 entry)."""
        return 8 * self.peak_entries

    def to_frame(self) -> pd.DataFrame:
        """One row per run: engine, number of variables ordered, peak entries and bytes, work.

        Returns
        -------
        frame : DataFrame
            Indexed by the assignment of ``evidence_vars`` for a per-group plan,
            by ``"all"`` otherwise.

        Examples
        --------
        >>> import numpy as np
        >>> from skfairverify.s3p import BayesNet, plan
        >>> net = BayesNet.independent([[0.5, 0.5]] * 2)
        >>> plan([np.array([0, 1])] * 2, 1, net).to_frame().columns.tolist()
        ['engine', 'n_ordered', 'peak_entries', 'peak_bytes', 'work']
        """
        plans = self.groups if self.groups else {"all": self}
        rows = [
            {
                "engine": p.engine,
                "n_ordered": len(p.order),
                "peak_entries": p.peak_entries,
                "peak_bytes": p.peak_bytes,
                "work": p.work,
            }
            for p in plans.values()
        ]
        return pd.DataFrame(rows, index=pd.Index(list(plans), name="group", tupleize_cols=False))

    def _summary(self) -> str:
        if self.groups:
            head = f"engine='per-group', groups={len(self.groups)}"
        else:
            shown = self.order if len(self.order) <= 12 else self.order[:12] + ["..."]
            head = f"engine={self.engine!r}, order=[{', '.join(map(str, shown))}]"
        return f"{head}, peak={self.peak_entries:,} entries ({self.peak_bytes:,} bytes)"

    def _execute(self, legacy: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Run the plan: (Pr[score >= t, keep = a, evidence], Pr[keep = a, evidence]).

        ``legacy=True`` runs the frontier engine as it was before the independent
        block, the tail trimming and the BLAS contractions (benchmarks, tests).
        """
        if self.groups:
            pos, total = np.zeros(self._shape), np.zeros(self._shape)
            for states, group in self.groups.items():
                pos[states], total[states] = group._execute(legacy)
            return pos, total
        if self.engine == "elimination":
            if self.work < _SINGLE_THREAD_WORK:
                return run_elimination(self._problem, self.order)
            with single_threaded_blas():  # its products are thin too (CPT x score axis)
                return run_elimination(self._problem, self.order)
        if legacy:
            return run(self._problem, self.order, legacy=True)
        members = set(self._block)
        order = [v for v in self.order if v not in members]
        if self.work < _SINGLE_THREAD_WORK:
            return run(self._problem, order, block=self._block)
        with single_threaded_blas():
            return run(self._problem, order, block=self._block)


def single_threaded_blas():
    """Context limiting BLAS to one thread.

    The thin products of the frontier engine (a CPT times a long score axis) gain
    nothing from threads, and on a loaded machine a multithreaded BLAS call can
    wait tens of milliseconds for its second thread (measured: a 200k-entry dot
    product 23 ms with two threads, 0.04 ms with one). The controller is built
    once (about 10 ms); entering the context costs about 50 us
    (:func:`~skfairverify.utils._threads.limited_threads`).
    """
    return limited_threads("blas")


def _new_plan(
    engine, order, peak, work, n_orders=0, *, groups=None, problem=None, shape=(), block=()
):
    """Build a Plan and attach what running it needs."""
    plan = Plan(engine, order, peak, work, n_orders, groups or {})
    plan._problem, plan._shape, plan._block = problem, shape, tuple(block)
    return plan


@dataclass
class _Arguments:
    """Validated arguments of a plan."""

    weights: list
    threshold: int
    network: object
    evidence: dict
    keep: list
    max_table_size: int
    method: str

    def problem(self, evidence=None, keep=None) -> Problem:
        """Build the problem for these arguments (or other evidence / kept variables)."""
        return Problem(
            self.weights,
            self.threshold,
            self.network,
            self.evidence if evidence is None else evidence,
            self.keep if keep is None else keep,
            self.max_table_size,
        )


def _check_arguments(weights, threshold, network, evidence, keep, max_table_size, method):
    """Check the values (their types and options were checked by the public function)."""
    network = check_network(network)
    weights = check_weights(weights, network)
    threshold = check_threshold(threshold)
    evidence = check_evidence(evidence, network)
    keep = check_vars(keep, network, "evidence_vars")
    overlap = [network.names[v] for v in keep if v in evidence]
    if overlap:
        raise ValueError(
            f"Variable {overlap[0]!r} is both in evidence_vars and in evidence; "
            "fix it in one place only."
        )
    return _Arguments(weights, threshold, network, evidence, keep, int(max_table_size), method)


def make_plan(
    weights, threshold, network, evidence, keep, max_table_size, order, method="auto"
) -> Plan:
    """Validate the arguments and plan a run (joint over ``keep``, or one per assignment).

    Keeping the variables in the table shares the work on everything not
    connected to them; when they are connected to the whole network, one run
    per assignment (each with a narrower score axis and table) can be cheaper,
    or be the only plan that fits in ``max_table_size``. Both plans are
    simulated and the cheaper is kept.
    """
    args = _check_arguments(weights, threshold, network, evidence, keep, max_table_size, method)
    key = _plan_key(args, order)
    if key in _PLANS:
        _PLANS.move_to_end(key)
        return _rebind(_PLANS[key], args)
    planned = _make_plan(args, order)
    _PLANS[key] = _strip(planned)
    if len(_PLANS) > _MAX_CACHED_PLANS:
        _PLANS.popitem(last=False)
    return planned


#: Recent plans by what they depend on: sizes and structure, never the CPTs' values
#: (the posterior draws of the verifier plan the same problem for every drawn network).
_PLANS: OrderedDict = OrderedDict()
_MAX_CACHED_PLANS = 16


def _plan_key(args: _Arguments, order) -> tuple:
    """Everything a plan depends on: weights, threshold, structure, evidence, budget."""
    net = args.network
    return (
        tuple((w.dtype.str, w.tobytes()) for w in map(np.asarray, args.weights)),
        args.threshold,
        tuple(int(c) for c in net.cardinalities),
        tuple(tuple(int(p) for p in pa) for pa in net.parents),
        tuple(sorted(args.evidence.items())),
        tuple(args.keep),
        args.max_table_size,
        None if order is None else tuple(int(v) for v in order),
        args.method,
    )


def _strip(plan: Plan) -> Plan:
    """A copy of ``plan`` without its problems (the cache keeps no network's tables)."""
    groups = {states: _strip(g) for states, g in plan.groups.items()}
    return _new_plan(plan.engine, plan.order, plan.peak_entries, plan.work, plan.n_orders,
                     groups=groups, shape=plan._shape, block=plan._block)


def _rebind(cached: Plan, args: _Arguments, evidence=None) -> Plan:
    """A copy of ``cached`` that runs on the network (CPTs) of ``args``."""
    if cached.groups:
        groups = {
            states: _rebind(g, args, {**args.evidence, **dict(zip(args.keep, states))})
            for states, g in cached.groups.items()
        }
        return _new_plan("per-group", None, cached.peak_entries, cached.work,
                         cached.n_orders, groups=groups, shape=cached._shape)
    problem = args.problem() if evidence is None else args.problem(evidence, [])
    return _new_plan(cached.engine, cached.order, cached.peak_entries, cached.work,
                     cached.n_orders, problem=problem, block=cached._block)


def _make_plan(args: _Arguments, order) -> Plan:
    shape = tuple(args.network.cardinalities[v] for v in args.keep)
    splittable = order is None and 1 < math.prod(shape) <= _MAX_SPLIT_GROUPS
    try:
        joint = _plan_problem(args.problem(), order, args.method)
    except TableTooLargeError as exc:
        if not splittable:
            raise
        try:
            return _per_group_plan(args, shape)
        except TableTooLargeError:
            raise exc from None
    if splittable:
        split = _per_group_plan(args, shape, budget=0.8 * _time_units(joint))
        if split is not None:
            return split
    return joint


def _time_units(p: Plan) -> float:
    """Work of a run in comparable units of time (each engine's work times its unit cost)."""
    return p.work * (_ELIMINATION_UNIT if p.engine == "elimination" else _FRONTIER_UNIT)


def _per_group_plan(args: _Arguments, shape, budget=None) -> Plan | None:
    """One plan per assignment of ``args.keep``; None when their time units exceed ``budget``.

    With a budget, a group too large also gives None; without one it raises.
    """
    groups, work, spent = {}, 0.0, 0.0
    for states in itertools.product(*(range(c) for c in shape)):
        evidence = {**args.evidence, **dict(zip(args.keep, states))}
        try:
            group = _plan_problem(args.problem(evidence, []), None, args.method)
        except TableTooLargeError:
            if budget is None:
                raise
            return None
        work += group.work
        spent += _time_units(group)
        if budget is not None and spent > budget:
            return None
        groups[states] = group
    peak = max(g.peak_entries for g in groups.values())
    n_orders = sum(g.n_orders for g in groups.values())
    return _new_plan("per-group", None, peak, work, n_orders, groups=groups, shape=shape)


def _plan_problem(problem: Problem, order, method) -> Plan:
    """Choose the engine and the order; raise TableTooLargeError when none fits."""
    if order is not None:
        order = check_order(order, problem.network)
        if method == "elimination":
            raise ValueError("order applies to method='frontier' only.")
        method = "frontier"
    if method == "elimination":
        return _elimination_plan(problem)
    candidates = [order] if order is not None else candidate_orders(problem)
    rival = _elimination_rival(problem, candidates, method)
    order, cost, n_orders = _best_frontier_order(problem, candidates, search=order is None,
                                                 rival=rival[2] if rival else None)
    fits = cost.peak <= problem.max_table_size
    ve_peak = None
    if method == "auto" and (not fits or cost.work > _ELIMINATION_THRESHOLD):
        ve_order, ve_peak, ve_work = rival or elimination_order(problem)
        cheaper = ve_work * _ELIMINATION_UNIT < cost.work * _FRONTIER_UNIT
        if ve_peak <= problem.max_table_size and (not fits or cheaper):
            return _new_plan(
                "elimination", ve_order, ve_peak, ve_work, n_orders, problem=problem
            )
    if not fits:
        raise _too_large(problem, cost, ve_peak)
    return _new_plan(
        "frontier", order, cost.peak, cost.work, n_orders, problem=problem, block=cost.block
    )


def _elimination_plan(problem: Problem) -> Plan:
    ve_order, ve_peak, ve_work = elimination_order(problem)
    if ve_peak > problem.max_table_size:
        raise TableTooLargeError(
            f"Variable elimination would need a factor of {ve_peak:,} entries "
            f"({ve_peak * 8:,} bytes), above max_table_size={problem.max_table_size:,}. Use "
            "fewer bins per feature, smaller integer weights, or a network with lower indegree."
        )
    return _new_plan("elimination", ve_order, ve_peak, ve_work, problem=problem)


def _elimination_rival(problem: Problem, candidates, method):
    """``elimination_order(problem)`` when it fits and the frontier candidates are costly.

    None with ``method`` other than ``"auto"``, or when the cheapest candidate order
    fits and costs less than ``_ELIMINATION_THRESHOLD`` (no comparison then).
    """
    if method != "auto" or len(candidates) == 1:
        return None
    limit = problem.max_table_size
    costs = [simulate(problem, order) for order in candidates]
    if min((c.work for c in costs if c.peak <= limit), default=math.inf) <= _ELIMINATION_THRESHOLD:
        return None
    rival = elimination_order(problem)
    return rival if rival[1] <= limit else None


def _best_frontier_order(problem: Problem, candidates, search: bool = False, rival=None):
    """Cheapest candidate order by simulation: ``(order, cost, n_orders)``.

    With ``search=True`` and an expensive best candidate, random parents-first
    orders are also simulated (a seeded, deterministic number of them, so the
    search costs about a tenth of the estimated computation at most). The
    result of a run does not depend on the order, only its cost. ``rival`` is the
    work of a variable elimination that fits: when the best candidate is too large
    or costs more than ``_RIVAL_MARGIN`` times it (in time), no random order is
    tried (random parents-first orders do not gain orders of magnitude over the
    candidates: measured on the verifier's 100-feature networks, 200 tries left the
    best frontier 2,000 times the elimination's cost, and took 60% of the time of the
    run).
    """
    best = None
    seen = set()
    limit = problem.max_table_size

    def consider(order):
        nonlocal best
        if tuple(order) in seen:
            return
        seen.add(tuple(order))
        cost = simulate(problem, order)
        key = (cost.peak > limit, cost.work if cost.peak <= limit else cost.peak)
        if best is None or key < best[0]:
            best = (key, order, cost)

    for order in candidates:
        consider(order)
    net = problem.network
    n_linked = sum(1 for v in range(net.n_variables) if net.parents[v] or problem.children[v])
    if search and rival is not None:
        cost = best[2]
        search = (cost.peak <= limit
                  and cost.work * _FRONTIER_UNIT <= _RIVAL_MARGIN * rival * _ELIMINATION_UNIT)
    if search and n_linked > 2:
        too_large, work = best[0]
        # a simulation costs ~5 us per variable, the run ~1.5 ns per table entry
        # too large by more than _RIVAL_MARGIN: random orders will not make it fit
        hopeless = too_large and work > _RIVAL_MARGIN * limit
        n_tries = (0 if hopeless else 200) if too_large else int(min(200, work * 3e-5 / n_linked))
        rng = np.random.default_rng(0)
        for _ in range(n_tries):
            consider(random_order(problem, rng))
    return best[1], best[2], len(seen)


def _too_large(problem: Problem, cost, ve_peak=None) -> TableTooLargeError:
    net = problem.network
    v, kept, states, length = cost.worst
    names = ", ".join(repr(net.names[p]) for p in kept[:8])
    if len(kept) > 8:
        names += ", ..."
    n_bytes = cost.peak * 8
    extra = ""
    if ve_peak is not None:
        extra = f" (variable elimination would need {ve_peak:,} entries)"
    return TableTooLargeError(
        f"Exact computation refused at variable {net.names[v]!r}: the frontier holds "
        f"{len(kept)} variables ({names}) with {states:,} joint states, and the partial "
        f"score spans {length:,} values; the table would have {cost.peak:,} entries "
        f"({n_bytes:,} bytes, {n_bytes / 2**30:.2f} GiB){extra}, above "
        f"max_table_size={problem.max_table_size:,}. Use fewer bins per feature, smaller "
        "integer weights (a smaller multiplier), or a network with lower indegree."
    )
