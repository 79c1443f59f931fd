"""Group positive rates over a network, mediator interventions and FIF.

* :func:`group_rates`: exact ``Pr[Yhat = 1 | A = a]`` for a list of compound groups
  in one pass of the engine (the sensitive variables stay in its table);
* :func:`fvgm_mediated_network`: the network in which the mediators follow their
  distribution given the most favored group, ``Z | A = a_max`` (FVGM's path-specific
  causal fairness); :func:`edge_specific_network`: the variant in which only the edges
  from the sensitive variables into the mediators carry ``a_max``;
* :func:`conditional_joint`: exact ``Pr[targets | evidence]`` by variable elimination;
* :func:`uniform_network`: the network in which some variables are replaced by
  independent reference distributions (fairness influence function, FVGM Section 5 and
  Appendix E).
"""

from __future__ import annotations

import numpy as np

from ..s3p import (
    BayesNet,
    TableTooLargeError,
    plan,
    positive_probability,
    positive_probability_table,
)

__all__ = [
    "conditional_joint",
    "edge_specific_network",
    "fvgm_mediated_network",
    "group_rates",
    "uniform_network",
    "engine_seconds",
    "check_draws_work",
    "planned_seconds",
]

#: Measured cost of the frontier engine: ~0.6 ns per work unit of :func:`~skfairverify.s3p.plan`
#: and state of the widest variable (shift-and-add per state; 20-600 ns per unit from
#: 30 to 1,000 states). Variable elimination: ~2 ns per unit (the planner's figure).
FRONTIER_NS_PER_UNIT_STATE, ELIMINATION_NS_PER_UNIT = 0.6, 2.0
#: Largest engine work accepted, in seconds per 1e6 entries of ``max_table_size``:
#: 2.4 s, i.e. 120 s with the default ``max_table_size=50_000_000``.
SECONDS_PER_MILLION_ENTRIES = 2.4

_HINT = (
    " FairnessVerifier: lower max_bins (fewer states per feature), max_indegree (a "
    "narrower network) or max_multiplier (a shorter score range), or raise max_table_size."
)


def engine_seconds(p, network) -> float:
    """Estimated running time of the exact engine's plan ``p`` (seconds).

    Parameters
    ----------
    p : Plan
        Plan of :func:`~skfairverify.s3p.plan`.
    network : BayesNet
        The network planned on.

    Returns
    -------
    float
        ``work * 0.6 ns * largest cardinality`` for the frontier engine, ``work * 2 ns``
        for variable elimination; summed over the runs of a per-group plan.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet, plan
    >>> from skfairverify.verification._influence import engine_seconds
    >>> net = BayesNet.independent([[0.5, 0.5]] * 3)
    >>> engine_seconds(plan([np.array([0, 1])] * 3, 2, net), net) < 1e-3
    True
    """
    if p.groups:
        return sum(engine_seconds(g, network) for g in p.groups.values())
    if p.engine == "elimination":
        return p.work * ELIMINATION_NS_PER_UNIT * 1e-9
    return p.work * FRONTIER_NS_PER_UNIT_STATE * max(network.cardinalities) * 1e-9


def _check_engine_work(seconds: float, max_table_size: int) -> None:
    """Refuse an exact computation estimated beyond the work bound of ``max_table_size``."""
    limit = SECONDS_PER_MILLION_ENTRIES * max_table_size / 1e6
    if seconds > limit:
        raise TableTooLargeError(
            f"Exact computation refused: the engine's plan is estimated at {seconds:,.0f} s "
            f"of work, above the bound of {limit:,.0f} s that max_table_size="
            f"{max_table_size:,} allows ({SECONDS_PER_MILLION_ENTRIES} s per million "
            "entries)." + _HINT
        )


def check_draws_work(seconds: float, n_draws: int, what: str, max_table_size: int) -> None:
    """Refuse the posterior draws of a computation beyond the work bound of ``max_table_size``.

    The fairness influence of a feature subset under ``n_draws`` posterior draws costs
    ``n_draws`` solves of the subset's reference network; their time is estimated from
    sizes before any draw is solved (the path's ``draws_seconds``: the engine's plan, the
    tree's elimination or the size of the point search, never a timing), and the draws
    are refused when it exceeds the bound of one engine run
    (:data:`SECONDS_PER_MILLION_ENTRIES` per million entries of ``max_table_size``).

    Parameters
    ----------
    seconds : float
        Estimated time of the ``n_draws`` solves (seconds).
    n_draws : int
        Number of posterior draws.
    what : str
        What is computed (e.g. the feature subset), for the message.
    max_table_size : int
        The verifier's budget.

    Raises
    ------
    TableTooLargeError
        Naming the estimate, ``n_draws`` and ``max_table_size``.

    Examples
    --------
    >>> from skfairverify.verification._influence import check_draws_work
    >>> check_draws_work(0.5, 50, "x", 50_000_000)  # 0.5 s of 120 s: accepted
    >>> check_draws_work(0.5, 50, "x", 100_000)
    Traceback (most recent call last):
    ...
    skfairverify.s3p._errors.TableTooLargeError: The posterior draws of the fairness ...
    """
    limit = SECONDS_PER_MILLION_ENTRIES * max_table_size / 1e6
    if seconds > limit:
        raise TableTooLargeError(
            f"The posterior draws of the fairness influence of {what!r} are estimated at "
            f"{seconds:,.2f} s ({n_draws} draws x {seconds / max(n_draws, 1):,.3g} s per "
            "draw, estimated from the size of the engine's plan or of the point search), "
            f"above the bound of {limit:,.2f} s that max_table_size={max_table_size:,} "
            f"allows ({SECONDS_PER_MILLION_ENTRIES} s per million entries). Pass "
            "intervals=False (point influences only), fit the verifier with fewer "
            "n_draws, pass fewer or smaller feature subsets, or raise max_table_size."
        )


def planned_seconds(weights, threshold, network, max_table_size, **where) -> float:
    """Estimated time of one engine run of the rule on ``network`` (:func:`engine_seconds`).

    ``where``: the plan's ``evidence_vars`` or ``evidence``. The plan is computed (and
    left in the engine's plan cache), not run; it raises :class:`TableTooLargeError`
    when a table of the plan exceeds ``max_table_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.verification._influence import planned_seconds
    >>> net = BayesNet.independent([[0.5, 0.5]] * 3)
    >>> planned_seconds([np.array([0, 1])] * 3, 2, net, 10**6, evidence_vars=[0]) < 1e-3
    True
    """
    return engine_seconds(plan(weights, threshold, network, max_table_size=max_table_size,
                               **where), network)


def group_rates(network, weights, threshold, sensitive_idx, group_codes, max_table_size):
    """Exact positive rate of every group (rows of ``group_codes``).

    Parameters
    ----------
    network : BayesNet
    weights : list of ndarray of int
    threshold : int
    sensitive_idx : list of int
        Indices of the sensitive variables.
    group_codes : ndarray of shape (n_groups, n_sensitive)
        State of each sensitive variable for every group.
    max_table_size : int

    Returns
    -------
    ndarray of shape (n_groups,)
    """
    group_codes = np.asarray(group_codes)
    try:
        _check_engine_work(planned_seconds(weights, threshold, network, max_table_size,
                                            evidence_vars=list(sensitive_idx)),
                           max_table_size)
        table = positive_probability_table(
            weights, threshold, network, list(sensitive_idx), max_table_size=max_table_size
        )
        rates = np.asarray(table)[tuple(group_codes.T)]
    except TableTooLargeError:
        # Keeping every group in one table multiplies its size by the number of
        # sensitive states; one call per group (the group as evidence) needs less.
        rates = _rates_per_group(network, weights, threshold, sensitive_idx, group_codes,
                                 max_table_size)
    _check_defined(rates, network, sensitive_idx, group_codes)
    return rates


def _rates_per_group(network, weights, threshold, sensitive_idx, group_codes,
                     max_table_size):
    """One engine run per group (after checking their total work); NaN where impossible."""
    evidences = [{int(i): int(c) for i, c in zip(sensitive_idx, codes)}
                 for codes in group_codes]
    seconds = 0.0
    for evidence in evidences:
        try:
            seconds += planned_seconds(weights, threshold, network, max_table_size,
                                        evidence=evidence)
        except TableTooLargeError as exc:
            raise TableTooLargeError(str(exc) + _HINT) from exc
        except ValueError:
            pass  # probability-0 group: NaN below
    _check_engine_work(seconds, max_table_size)
    rates = np.empty(len(group_codes))
    for g, evidence in enumerate(evidences):
        try:
            rates[g] = positive_probability(
                weights, threshold, network, evidence, max_table_size=max_table_size
            )
        except ValueError:
            rates[g] = np.nan
    return rates


def _check_defined(rates, network, sensitive_idx, group_codes) -> None:
    """Raise when a group has probability 0 (its rate is NaN)."""
    bad = ~np.isfinite(rates)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        names = [network.names[i] for i in sensitive_idx]
        group = {
            n: network.state_names[i][int(s)]
            for n, i, s in zip(names, sensitive_idx, group_codes[k])
        }
        raise ValueError(
            f"The group {group} has probability 0 under the network, so its positive "
            "rate is undefined."
        )


def _einsum(factors, out_scope):
    """Product of ``factors`` (scope, table), summed down to ``out_scope``."""
    labels: dict[int, int] = {}
    operands = []
    for scope, table in factors:
        operands += [table, [labels.setdefault(v, len(labels)) for v in scope]]
    for v in out_scope:
        labels.setdefault(v, len(labels))
    operands.append([labels[v] for v in out_scope])
    return np.einsum(*operands, optimize=True)


def _ancestral_set(network: BayesNet, variables) -> set[int]:
    seen, stack = set(), list(variables)
    while stack:
        v = stack.pop()
        if v not in seen:
            seen.add(v)
            stack.extend(network.parents[v])
    return seen


def conditional_joint(network: BayesNet, targets, evidence, max_table_size) -> np.ndarray:
    """Exact ``Pr[targets | evidence]`` by variable elimination.

    Only the ancestors of the targets and of the evidence matter (the other
    variables sum to one); they are eliminated greedily, smallest factor first.

    Parameters
    ----------
    network : BayesNet
    targets : list of int
        Variables of the joint distribution returned (in this order).
    evidence : dict of int to int
        Observed state of some variables (disjoint from ``targets``).
    max_table_size : int
        Largest factor allowed during the elimination.

    Returns
    -------
    ndarray of shape ``[cardinalities[t] for t in targets]``
        Sums to one.

    Raises
    ------
    TableTooLargeError
        When a factor would exceed ``max_table_size``.
    ValueError
        When the evidence has probability 0.
    """
    targets = [int(t) for t in targets]
    evidence = {int(k): int(v) for k, v in evidence.items()}
    cards = network.cardinalities
    factors = []
    for i in sorted(_ancestral_set(network, targets + list(evidence))):
        scope = list(network.parents[i]) + [i]
        table = np.asarray(network.cpts[i], dtype=float)
        for ax in reversed(range(len(scope))):
            if scope[ax] in evidence:
                table = np.take(table, evidence[scope[ax]], axis=ax)
                del scope[ax]
        factors.append((scope, table))
    hidden = {v for scope, _ in factors for v in scope} - set(targets)

    def merged_scope(v):
        return sorted({u for scope, _ in factors if v in scope for u in scope})

    def size(scope):
        return int(np.prod([cards[u] for u in scope], dtype=float))

    while hidden:
        v = min(hidden, key=lambda u: (size(merged_scope(u)), u))
        scope = merged_scope(v)
        if size(scope) > max_table_size:
            raise TableTooLargeError(
                f"Computing Pr[{[network.names[t] for t in targets]} | sensitive group] "
                f"needs a factor of {size(scope):,} entries over "
                f"{[network.names[u] for u in scope]} (max_table_size={max_table_size:,})."
                f"{_HINT}"
            )
        involved = [f for f in factors if v in f[0]]
        out = [u for u in scope if u != v]
        factors = [f for f in factors if v not in f[0]] + [(out, _einsum(involved, out))]
        hidden.discard(v)
    if size(targets) > max_table_size:
        raise TableTooLargeError(
            f"The joint distribution of the mediators {[network.names[t] for t in targets]} "
            f"has {size(targets):,} entries (max_table_size={max_table_size:,}).{_HINT}"
        )
    joint = _einsum(factors, targets) if factors else np.ones([cards[t] for t in targets])
    total = float(joint.sum())
    if not total > 0.0:
        raise ValueError(
            f"The evidence {{{', '.join(network.names[k] for k in evidence)}}} has probability "
            "0 under the network; the conditional distribution is undefined."
        )
    return joint / total


def edge_specific_network(network: BayesNet, mediator_idx, sensitive_idx,
                          group_state) -> BayesNet:
    """Fix the sensitive parents of every mediator to the states ``group_state``.

    Each mediator ``Z`` gets the table ``Pr[Z | Pa(Z) without A, A = a*]``: the edges from the
    sensitive variables into the mediators carry the reference group ``a*`` while every
    other path (including those through the mediator's other parents) carries the group
    being evaluated (an edge-specific intervention, ``pcf_definition="edge_specific"``).

    Parameters
    ----------
    network : BayesNet
    mediator_idx : list of int
    sensitive_idx : list of int
    group_state : list of int
        State of each sensitive variable in the reference group.

    Returns
    -------
    BayesNet
    """
    fixed = dict(zip(sensitive_idx, group_state))
    for z in mediator_idx:
        parents = network.parents[z]
        axes = [ax for ax, p in enumerate(parents) if p in fixed]
        if not axes:
            continue
        table = np.asarray(network.cpts[z])
        for ax in sorted(axes, reverse=True):
            table = np.take(table, int(fixed[parents[ax]]), axis=ax)
        new_parents = tuple(p for p in parents if p not in fixed)
        network = network.replace_cpt(z, table, parents=new_parents)
    return network


def fvgm_mediated_network(network: BayesNet, mediator_idx, sensitive_idx, group_state,
                          max_table_size) -> BayesNet:
    """Draw the mediators from ``Pr[Z | A = a*]`` whatever the group (FVGM's PCF).

    FVGM (Section 2, item 4, and Appendix B.1.2) samples the mediators ``Z`` from the
    conditional distribution ``Z | A = a_max``. That distribution is computed exactly on
    the original network, marginal over everything else given ``A = a_max``:
    ``Pr[z | a_max] = sum_u Pr[z | u, a_max] Pr[u | a_max]``, so a parent ``U`` of a
    mediator that descends from ``A`` follows its distribution under ``a_max`` and one
    that does not follows its marginal. The mediators then lose their parents: the
    first one (in topological order) gets ``Pr[Z_1 | a_max]``, the next
    ``Pr[Z_2 | Z_1, a_max]`` and so on (the chain rule of their joint distribution, so
    that several mediators keep their dependence). With one mediator this is the
    authors' replacement of its table by ``Pr[Z | A = a_max]``. Every other variable
    keeps its table, so it follows the group being evaluated.

    Parameters
    ----------
    network : BayesNet
    mediator_idx : list of int
    sensitive_idx : list of int
    group_state : list of int
        State of each sensitive variable in the reference group ``a_max``.
    max_table_size : int

    Returns
    -------
    BayesNet
    """
    order = [v for v in network.topological_order() if v in set(mediator_idx)]
    evidence = dict(zip(sensitive_idx, group_state))
    joint = conditional_joint(network, order, evidence, max_table_size)
    for k, z in enumerate(order):
        prefix = joint.sum(axis=tuple(range(k + 1, len(order))))
        below = prefix.sum(axis=-1, keepdims=True)
        card = network.cardinalities[z]
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(below > 0, prefix / np.where(below > 0, below, 1.0), 1.0 / card)
        network = network.replace_cpt(z, table, parents=tuple(order[:k]))
    return network


def uniform_network(network: BayesNet, variables, distributions=None) -> BayesNet:
    """Replace the distribution of ``variables`` by independent reference ones.

    Parameters
    ----------
    network : BayesNet
    variables : list of int
    distributions : list of ndarray or None, default=None
        Distribution of each variable over its states (e.g. proportional to the width
        of its bins: uniform over the support); uniform over the states when None.

    Returns
    -------
    BayesNet
    """
    for k, i in enumerate(variables):
        card = network.cardinalities[i]
        dist = np.full(card, 1.0 / card) if distributions is None else distributions[k]
        network = network.replace_cpt(i, np.asarray(dist, dtype=float), parents=())
    return network
