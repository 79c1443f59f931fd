"""Public functions of the exact engine: plan, positive_probability(_table), best_assignment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real

import numpy as np

from ..utils._compat import Interval, StrOptions, validate_params
from ._errors import DEFAULT_MAX_TABLE_SIZE, evidence_error
from ._network import BayesNet
from ._plan import ENGINES, Plan, make_plan
from ._validation import check_evidence, check_network, check_vars

# Types and options are checked here; the meaning of the values (integer-valued
# weights, variable indices in range, a topological order, ...) by ._validation.
# network: check_network's message says how to convert a pgmpy model.
_COMMON_CONSTRAINTS = {
    "weights": ["array-like"],
    "threshold": [Real],
    "network": "no_validation",
    "evidence": [Mapping, None],
    "max_table_size": [Interval(Integral, 1, None, closed="left")],
    "method": [StrOptions(set(ENGINES))],
}


@validate_params(
    {**_COMMON_CONSTRAINTS, "evidence_vars": ["array-like"], "order": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def plan(
    weights: Sequence[np.ndarray],
    threshold: int,
    network: BayesNet,
    evidence: Mapping[int, int] | None = None,
    *,
    evidence_vars: Sequence[int] = (),
    max_table_size: int = DEFAULT_MAX_TABLE_SIZE,
    order: Sequence[int] | None = None,
    method: str = "auto",
) -> Plan:
    """Plan a computation on sizes only: engine, order and peak table (nothing is allocated).

    :func:`positive_probability` (``evidence_vars`` empty) and
    :func:`positive_probability_table` make exactly this plan and run it, so its
    engine, order and peak table size are theirs.

    Parameters
    ----------
    weights : list of ndarray of int
        Integer weight of every state of every variable.
    threshold : int
        The score must reach at least this value.
    network : BayesNet
        Joint distribution of the variables.
    evidence : dict of {int: int}, default=None
        Variables fixed to a state (conditioning).
    evidence_vars : list of int, default=()
        Variables whose assignments index the result, as in
        :func:`positive_probability_table`.
    max_table_size : int, default=50_000_000
        Largest number of float64 entries of the working table.
    order : list of int, default=None
        Processing order of the frontier engine (parents first); None to
        choose it.
    method : {"auto", "frontier", "elimination"}, default="auto"
        Engine, see :func:`positive_probability`.

    Returns
    -------
    plan : Plan
        The chosen engine (``"frontier"``, ``"elimination"``, or
        ``"per-group"`` for one run per assignment of ``evidence_vars``), the
        order, the peak table size in entries and bytes, and the simulated work.

    Raises
    ------
    ValueError
        Bad arguments (as :func:`positive_probability`).
    TableTooLargeError
        No allowed engine fits in ``max_table_size`` entries.
    OverflowError
        The integer weights are too large for exact int64 arithmetic.

    See Also
    --------
    positive_probability : Run the plan.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, plan
    >>> net = BayesNet.independent([[0.6, 0.4], [0.5, 0.5], [0.7, 0.3]])
    >>> w = [np.array([0, 1]), np.array([0, 1]), np.array([0, -1])]
    >>> p = plan(w, 1, net)
    >>> p.engine, p.peak_entries, p.peak_bytes
    ('frontier', 4, 32)
    >>> p
    Plan(engine='frontier', order=[0, 1, 2], peak=4 entries (32 bytes))
    """
    evidence = check_evidence(evidence, check_network(network))
    return make_plan(
        weights, threshold, network, evidence, evidence_vars, max_table_size, order, method
    )


@validate_params(
    {**_COMMON_CONSTRAINTS, "order": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
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
        The exact probability, up to floating-point rounding and at most
        ``1e-11`` of negligible tail mass (see Notes).

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
    plan : The engine, order and peak table size this call uses, without running it.

    Notes
    -----
    Variables are processed parents first while a table indexed by the states
    of the frontier (processed variables with an unprocessed child) and the
    partial score is updated by shift-and-add; a variable is summed out after
    its last child. Partial scores whose outcome is already decided are moved
    to accumulators. Time and memory are linear in the number of variables
    and the score range, exponential only in the frontier width.

    Scores at the ends of the table's score axis that hold a negligible share
    of the mass are moved to the accumulators as well, so the axis follows the
    spread of the partial score (growing like the square root of the number of
    variables) rather than the full range of the weights. The mass moved is at
    most ``1e-11`` of ``Pr[evidence]`` (of each group's probability for
    :func:`positive_probability_table`) over a whole run, so each probability
    moves by at most ``1e-11``. Variables with neither parents, children nor
    evidence are summed apart when the plan finds it cheaper: the distribution
    of their score is the convolution of theirs, computed by a tree of FFT
    convolutions (the shortest two first) whose round-off is bounded (a
    total-variation bound of ``2e-11`` for a thousand ten-state variables with
    weights in ``[-1000, 1000]``; observed error ``1e-14``); it enters through
    its survival function. On 1,000 ten-state
    variables with weights in ``[-1000, 1000]`` this is about 5x (independent)
    and 9x (a chain) faster than the plain frontier (``benchmarks/bench_s3p.py
    --scale``).

    The elimination engine multiplies factors over (variables, score) along
    the moral graph, convolving score axes (FFT for long axes); its cost is
    exponential in the induced width instead. Results of both engines agree
    to about 1e-11 (floating-point rounding, about 1e-15, plus the tail mass).

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
    evidence = check_evidence(evidence, check_network(network))
    run = make_plan(weights, threshold, network, evidence, [], max_table_size, order, method)
    pos, total = run._execute()
    total = float(total)
    if total <= 0.0:
        raise evidence_error(evidence, network)
    return float(min(max(float(pos) / total, 0.0), 1.0))


@validate_params(
    {
        **_COMMON_CONSTRAINTS,
        "evidence_vars": ["array-like"],
        "return_marginal": ["boolean"],
        "order": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
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
    evidence = check_evidence(evidence, check_network(network))
    run = make_plan(
        weights, threshold, network, evidence, evidence_vars, max_table_size, order, method
    )
    pos, total = run._execute()
    grand = float(total.sum())
    if grand <= 0.0:
        raise evidence_error(evidence, network)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = np.where(total > 0, pos / np.where(total > 0, total, 1.0), np.nan)
    probs = np.clip(probs, 0.0, 1.0)
    if return_marginal:
        return probs, total / grand
    return probs


@validate_params(
    {**_COMMON_CONSTRAINTS, "choice_vars": ["array-like"], "mode": [StrOptions({"max", "min"})]},
    prefer_skip_nested_validation=True,
)
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
    choice_vars = check_vars(choice_vars, check_network(network), "choice_vars")
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
