"""The fairness influence function (FIF) of a fitted verifier's path.

:class:`Influence` holds what :meth:`FairnessVerifier.fairness_influence` needs from
``fit`` (the path, the variables, the fitted network and groups, the parameters): the
feature subsets, each subset's reference network (FVGM Section 5 and Appendix E, the
features replaced by independent references), the group rates under it (exact on the
exact paths, sampled on the sampling path), and the credible intervals from the
posterior draws of the network.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..utils._progress import progress
from ._influence import check_draws_work, uniform_network
from ._intervals import HOLD_TOLERANCE, credible_bounds, hold_estimates
from ._warnings import EstimateOutsideIntervalWarning

__all__ = ["Influence"]


class Influence:
    """The FIF of a fitted path (see the module docstring).

    Parameters
    ----------
    path : Path
        The fitted verifier's path (it remembered fit's evaluation): a
        :class:`~._paths.DrawsPath` unless it samples.
    variables : Variables
        The variables of the network.
    network : BayesNet
        The fitted network (``network_``).
    groups : DataFrame
        The fitted groups (``groups_``).
    settings : Settings
        The verifier's parameters (``max_table_size``, ``n_jobs``, ``verbose``,
        ``credible_level``).
    """

    def __init__(self, path, variables, network, groups, settings):
        self.path = path
        self.variables = variables
        self.network = network
        self.groups = groups
        self.settings = settings

    @property
    def names(self) -> list[str]:
        """The network's variables (``variables_``)."""
        return self.variables.encoding.names

    def subsets(self, features) -> list[list[str]]:
        """The feature subsets of ``features`` (None: each non-sensitive one), validated."""
        sensitive = self.variables.sensitive
        non_sensitive = [n for n in self.names if n not in sensitive]
        if features is None:
            return [[n] for n in non_sensitive]
        if isinstance(features, str):
            features = [features]
        subsets = [[f] if isinstance(f, str) else list(f) for f in features]
        for subset in subsets:
            if not subset:
                raise ValueError("An empty feature subset has no influence to measure.")
            for f in subset:
                if f in sensitive:
                    raise ValueError(
                        f"{f!r} is a sensitive feature; FIF is defined for non-sensitive "
                        "features."
                    )
                if f not in self.names:
                    raise ValueError(
                        f"{f!r} is not a variable of the verifier; variables: "
                        f"{non_sensitive}."
                    )
        return subsets

    def _distributions(self, idx, reference):
        """The reference distribution of every variable of ``idx`` (None: over its states)."""
        if reference != "support":
            return None
        return [self.variables.encoding.variables[i].support_distribution() for i in idx]

    def reference_network(self, subset, reference, network=None):
        """``network`` (the fitted one by default) with ``subset`` replaced by references.

        The references are fixed (from the data's support, or uniform over the states),
        the same for the fitted network and for every posterior draw.
        """
        idx = [self.names.index(f) for f in subset]
        return uniform_network(self.network if network is None else network, idx,
                               self._distributions(idx, reference))

    def rates_without(self, subset, reference, draws=None):
        """Exact group rates with the features ``subset`` replaced by references.

        Returns the rates under the fitted network's reference network and, with
        ``draws`` (posterior draws of the fitted network), the ``(n_draws, n_groups)``
        rates under every draw's reference network, solved with the draws' rates
        function built once on the point reference network (the path's
        ``draw_rates_of``); None without draws. Before any draw is solved, their time
        is estimated from sizes (the path's ``draws_seconds``: the plan of the engine
        or of the tree's elimination, the size of the point search; never a timing)
        and checked against the work bound of ``max_table_size``
        (:func:`check_draws_work`).
        """
        net = self.reference_network(subset, reference)
        point = self.path.point_rates(net)
        if draws is None:
            return point, None
        rates_of = self.path.draw_rates_of(net, exact=point)
        check_draws_work(self.path.draws_seconds(net, len(draws), rates_of), len(draws),
                         " + ".join(subset), self.settings.max_table_size)
        values = np.array([rates_of(self.reference_network(subset, reference, d))
                           for d in draws], dtype=float)
        return point, values

    def rates(self, subsets, reference, draws=None) -> list[tuple]:
        """``(point rates, draws' rates or None)`` under the reference network of every subset."""
        if self.path.name == "sampling":
            nets = [self.reference_network(s, reference) for s in subsets]
            return [(r, None) for r in self.path.influence(nets)]
        tasks = [delayed(self.rates_without)(s, reference, draws) for s in subsets]
        parallel = Parallel(n_jobs=self.settings.n_jobs, return_as="generator")
        return list(progress(parallel(tasks), verbose=self.settings.verbose,
                             total=len(tasks), desc="FIF"))

    def draws(self):
        """The posterior draws of the fitted network and their group rates, or Nones.

        Exact paths with ``n_draws > 0`` and a learned network: the draws that ``fit``
        made (regenerated) and the rates of every draw under the verified rule: those
        ``fit`` computed (the path's ``draw_rates_of``, the same function as the
        references' draws).
        """
        if self.path.name == "sampling":
            return None, None
        fitted = self.path.fitted
        draws = fitted.draw_networks(self.settings.max_table_size)
        if not draws:
            return None, None
        return draws, fitted.draws["positive_rate"].copy()

    def _group_name(self, i: int) -> str:
        return "/".join(str(self.groups[s].iloc[i]) for s in self.variables.sensitive)

    def columns(self) -> pd.Index:
        """The columns of the FIF table: one per group of ``groups_``."""
        sensitive = self.variables.sensitive
        if len(sensitive) == 1:
            return pd.Index(self.groups[sensitive[0]].tolist(), name=sensitive[0])
        return pd.MultiIndex.from_frame(self.groups[sensitive])

    def intervals(self, table, fif_draws):
        """Credible bounds of every entry of ``table`` from its posterior draws, held.

        An :class:`EstimateOutsideIntervalWarning` names the entries whose point value lies
        outside the equal-tailed interval of their draws (the interval is then widened to
        hold it), as for the group rates.
        """
        level = self.settings.credible_level
        n_draws, n_rows, n_groups = fif_draws.shape
        low, high = credible_bounds(fif_draws.reshape(n_draws, -1), level)
        value = table.to_numpy(dtype=float).ravel()
        outside = np.flatnonzero((value < low - HOLD_TOLERANCE)
                                 | (value > high + HOLD_TOLERANCE))
        if outside.size:
            named = [f"{table.index[k // n_groups]} / "
                     f"{self._group_name(k % n_groups)} {value[k]:.4f} "
                     f"[{low[k]:.4f}, {high[k]:.4f}]" for k in outside[:5]]
            warnings.warn(
                f"{outside.size} fairness influence value(s) lie outside the "
                f"{level:.0%} credible interval of their {n_draws} posterior "
                f"draws: {'; '.join(named)}{' ...' if outside.size > 5 else ''}. These "
                "influences are poorly determined by the data (small groups); the "
                "intervals are widened to hold the values.",
                EstimateOutsideIntervalWarning, stacklevel=3)
        held = hold_estimates({"fif": (low, high)}, {"fif": value})[0]["fif"]
        return [pd.DataFrame(b.reshape(n_rows, n_groups), index=table.index,
                             columns=table.columns) for b in held]
