"""Group positive rates over a network, mediator interventions and FIF.

* :func:`group_rates`: exact ``Pr[Yhat = 1 | A = a]`` for a list of compound groups
  in one pass of the engine (the sensitive variables stay in its table);
* :func:`mediated_network`: the network in which every mediator follows its
  conditional distribution under a fixed group (path-specific fairness);
* :func:`uniform_network`: the network in which some variables are replaced by
  independent uniform ones (fairness influence function, FVGM Section 5).
"""

from __future__ import annotations

import numpy as np

from ..s3p import (
    BayesNet,
    TableTooLargeError,
    positive_probability,
    positive_probability_table,
)

__all__ = ["group_rates", "mediated_network", "uniform_network"]

_HINT = (
    " FairnessVerifier: lower max_bins (fewer states per feature), max_indegree (a "
    "narrower network) or max_multiplier (a shorter score range), or raise max_table_size."
)


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
        table = positive_probability_table(
            weights, threshold, network, list(sensitive_idx), max_table_size=max_table_size
        )
        rates = np.asarray(table)[tuple(group_codes.T)]
    except TableTooLargeError:
        # Keeping every group in one table multiplies its size by the number of
        # sensitive states; one call per group (the group as evidence) needs less.
        rates = np.empty(len(group_codes))
        for g, codes in enumerate(group_codes):
            evidence = {int(i): int(c) for i, c in zip(sensitive_idx, codes)}
            try:
                rates[g] = positive_probability(
                    weights, threshold, network, evidence, max_table_size=max_table_size
                )
            except TableTooLargeError as exc:
                raise TableTooLargeError(str(exc) + _HINT) from exc
            except ValueError:
                rates[g] = np.nan
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
    return rates


def mediated_network(network: BayesNet, mediator_idx, sensitive_idx, group_state) -> BayesNet:
    """Fix the sensitive parents of every mediator to the states ``group_state``.

    Each mediator ``Z`` gets the table ``Pr[Z | Pa(Z) \\ A, A = a*]``: the edges from the
    sensitive variables into the mediators carry the reference group ``a*`` while every
    other path carries the group being evaluated (an edge-specific intervention).

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


def uniform_network(network: BayesNet, variables) -> BayesNet:
    """Replace the distribution of ``variables`` by independent uniform ones.

    Parameters
    ----------
    network : BayesNet
    variables : list of int

    Returns
    -------
    BayesNet
    """
    for i in variables:
        card = network.cardinalities[i]
        network = network.replace_cpt(i, np.full(card, 1.0 / card), parents=())
    return network
