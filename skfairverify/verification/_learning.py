"""Learning the Bayesian networks of the variables (all rows, ``Y = 1``, ``Y = 0``)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from tqdm.auto import tqdm

from ..s3p import BayesNet
from ._network import check_learning_size, independent_network, learn_network
from ._parameters import estimate_cpts, prior_pseudo_counts
from ._posterior import networks_from_concentrations, posterior_concentrations
from ._variables import ordered_states, row_chunks

__all__ = ["EQUIVALENT_SAMPLE_SIZE", "STRUCTURE_BINS", "group_support", "groups_present",
           "sensitive_groups"]


#: Largest table of compound groups counted with ``bincount`` (beyond: ``np.unique``).
MAX_GROUP_TABLE = 2**22


def _group_counts(sens_codes: np.ndarray, weight):
    """Rows (and summed weights) of every cell of the table of compound groups.

    Returns ``(shape, rows, weights)`` (``weights`` None without weights), or None when
    the table (the product of the largest code + 1 of every column) is beyond
    ``MAX_GROUP_TABLE`` cells and the rows are not more numerous. One ``bincount`` of
    the cells' indices (first column most significant) per chunk of ``CHUNK_ROWS``
    rows: no sort, and memory that does not grow with the rows.
    """
    n = len(sens_codes)
    shape = tuple(int(sens_codes[:, j].max()) + 1 if n else 1
                  for j in range(sens_codes.shape[1]))
    size = math.prod(shape)
    if size > max(MAX_GROUP_TABLE, n):
        return None
    rows = np.zeros(size, dtype=np.int64)
    mass = None if weight is None else np.zeros(size)
    for chunk in row_chunks(n):
        flat = np.ravel_multi_index(tuple(sens_codes[chunk, j].astype(np.intp)
                                          for j in range(len(shape))), shape)
        rows += np.bincount(flat, minlength=size)
        if weight is not None:
            mass += np.bincount(flat, weights=weight[chunk], minlength=size)
    return shape, rows, mass


def group_support(sens_codes: np.ndarray, weight):
    """Distinct compound groups (rows of codes) and their rows, or summed weights.

    The groups in lexicographic order (as ``np.unique(sens_codes, axis=0)``), as an
    int64 matrix, counted by ``bincount`` (:func:`_group_counts`).
    """
    sens_codes = np.asarray(sens_codes)
    counted = _group_counts(sens_codes, weight)
    if counted is None:  # a sparse table of groups: sort the rows instead
        group_codes, inverse, counts = np.unique(
            sens_codes, axis=0, return_inverse=True, return_counts=True
        )
        group_codes = group_codes.astype(np.int64)
        if weight is None:
            return group_codes, counts.astype(np.int64)
        return group_codes, np.bincount(inverse.ravel(), weights=weight,
                                        minlength=len(group_codes))
    shape, rows, mass = counted
    cells = np.flatnonzero(rows)
    group_codes = np.column_stack(np.unravel_index(cells, shape)).astype(np.int64)
    group_codes = group_codes.reshape(len(cells), len(shape))
    return group_codes, rows[cells] if weight is None else mass[cells]


def groups_present(group_codes: np.ndarray, sens_codes: np.ndarray) -> np.ndarray:
    """Whether each group (row of ``group_codes``) has a row in ``sens_codes``."""
    present = {tuple(g) for g in group_support(sens_codes, None)[0].tolist()}
    return np.array([tuple(g) in present for g in np.asarray(group_codes).tolist()],
                    dtype=bool)


def sensitive_groups(codes: np.ndarray, sens_idx, weight):
    """Codes of the sensitive variables, the compound groups and their supports.

    A ValueError when the rows hold a single compound group.
    """
    sens_codes = codes[:, sens_idx]
    group_codes, support = group_support(sens_codes, weight)
    if len(group_codes) < 2:
        raise ValueError("X holds a single compound sensitive group; fairness needs two.")
    return sens_codes, group_codes, support


#: Largest number of states of a binned variable during the structure search.
STRUCTURE_BINS = 5
#: BDeu equivalent sample size of the parameter prior (light smoothing).
EQUIVALENT_SAMPLE_SIZE = 1.0


class CodedRows(NamedTuple):
    """The rows as the network sees them (:meth:`NetworkLearner.groups_and_networks`)."""

    sens_codes: np.ndarray  # the sensitive variables' codes of every row
    group_codes: np.ndarray  # the codes of every group present, one row per group
    support: np.ndarray  # the (weighted) rows of every group
    networks: list  # the networks of all rows, of Y = 1 and of Y = 0 (None: no labels)
    codes: np.ndarray  # the state codes of every row


class NetworkLearner:
    """The networks of a verification: learned on the rows, or the user's.

    Parameters
    ----------
    settings : Settings
        The verifier's parameters (``network``, ``prior``, ``max_indegree``,
        ``n_draws``, ``max_table_size``, ``n_jobs``, ``verbose``).
    variables : Variables
        The network's variables (the sensitive ones are roots).
    """

    def __init__(self, settings, variables):
        self.settings = settings
        self.variables = variables

    def groups_and_networks(self, frame, y_pos, encoding, weight) -> CodedRows:
        """Codes of the sensitive variables, the groups, their supports and the networks.

        The networks are learned on all rows, and with labels on ``Y = 1`` and ``Y = 0``.
        Also returns the state codes of the rows (for the posterior draws).
        """
        codes = encoding.codes(frame)
        sens_codes, group_codes, support = sensitive_groups(codes, self.variables.sens_idx,
                                                            weight)
        networks = self.learn_networks(encoding, codes, y_pos, weight)
        return CodedRows(sens_codes, group_codes, support, networks, codes)

    def network_for(self, encoding, codes, weight):
        if self.settings.user_network:
            return self.settings.network
        net = self._learned_network(encoding, codes, weight)
        # the states named after what they stand for: categories, values, bins, NaN
        return BayesNet(net.cardinalities, net.parents, net.cpts, names=net.names,
                        state_names=encoding.state_labels())

    def _learned_network(self, encoding, codes, weight):
        s = self.settings
        names, cards = encoding.names, encoding.cardinalities
        if s.network == "independent":
            return independent_network(codes, names, cards, EQUIVALENT_SAMPLE_SIZE,
                                       sample_weight=weight)
        net = learn_network(
            codes,
            names,
            cards,
            self.variables.sensitive,
            coarsenable=ordered_states(encoding),
            structure_bins=STRUCTURE_BINS,
            max_indegree=s.max_indegree,
            equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
            sample_weight=weight,
            max_table_size=s.max_table_size,
        )
        if s.prior == "bdeu":
            return net
        cpts = estimate_cpts(codes, cards, net.parents, self.variables.sens_idx,
                             sample_weight=weight,
                             equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE, prior=s.prior)
        return BayesNet(cards, net.parents, cpts, names=net.names,
                        state_names=net.state_names)

    def posterior_draws(self, network, codes, weight, rng) -> list:
        """``n_draws`` networks from the posterior of ``network``'s parameters.

        The posterior of the prior of the point estimate (``prior``: BDeu, or the
        hierarchical prior's pseudo-counts with its target refitted per draw), given
        the rows ``codes`` the network was learned from.
        """
        return networks_from_concentrations(
            network, self.posterior_concentrations(network, codes, weight, rng),
            n_draws=self.settings.n_draws, random_state=rng,
            max_table_size=self.settings.max_table_size)

    def posterior_concentrations(self, network, codes, weight, rng) -> list:
        """Dirichlet concentrations of the posterior of ``network``'s tables."""
        s = self.settings
        pseudo = None
        if s.learned and s.prior != "bdeu":
            pseudo, _ = prior_pseudo_counts(
                codes, network.cardinalities, network.parents, self.variables.sens_idx,
                sample_weight=weight, equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
                prior=s.prior, random_state=rng, n_draws=s.n_draws,
                max_table_size=s.max_table_size)
        return posterior_concentrations(network, codes, sample_weight=weight,
                                        equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
                                        pseudo_counts=pseudo, n_draws=s.n_draws)

    def learn_networks(self, encoding, codes, y_pos, weight):
        """Networks on all rows, and on the rows with ``Y = 1`` and ``Y = 0``."""
        s = self.settings
        if s.learned:
            check_learning_size(encoding.names, encoding.cardinalities,
                                self.variables.sensitive,
                                coarsenable=ordered_states(encoding),
                                structure_bins=STRUCTURE_BINS, max_indegree=s.max_indegree,
                                max_table_size=s.max_table_size)
        subsets = [None]  # all rows: the codes themselves, no copy
        if y_pos is not None:
            subsets += [y_pos, ~y_pos]
        present = [m is None or bool(m.any()) for m in subsets]
        # A generator: the rows of a subset are copied when its network is learned, not
        # all subsets at once.
        tasks = (delayed(self.network_for)(encoding, codes if m is None else codes[m],
                                           weight if m is None or weight is None
                                           else weight[m])
                 for m, ok in zip(subsets, present) if ok)
        n_tasks = sum(present)
        parallel = Parallel(n_jobs=s.n_jobs if n_tasks > 1 else None,
                            return_as="generator")
        learned = iter(
            tqdm(parallel(tasks), total=n_tasks, desc="networks", disable=not s.verbose)
        )
        return [next(learned) if ok else None for ok in present]
