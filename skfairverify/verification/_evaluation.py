"""One evaluation of the group rates and metrics on coded rows, for every path.

:class:`Evaluator` turns a path's rates function into the groups table, the metrics,
the posterior draws and their intervals, and the population estimate; the exact paths
(linear rule, tree) give exact rates (:meth:`Evaluator.exact`), the sampling path gives
certified Monte Carlo rates and uses the same groups table, mediated network and
population estimate. :class:`Evaluation` is what one evaluation yields.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..s3p import BayesNet
from ..utils._warnings import warn_user
from ._influence import edge_specific_network, fvgm_mediated_network
from ._intervals import (
    credible_bounds,
    draw_metric_intervals,
    exact_interval,
    hold_estimates,
    metric_intervals,
)
from ._learning import EQUIVALENT_SAMPLE_SIZE, groups_present
from ._metrics import disparate_impact, favored_indices, rate_gap
from ._population import (
    RateRows,
    add_population_columns,
    estimate_population,
    metric_intervals_from_estimates,
    misfits,
    population_table,
)
from ._posterior import networks_from_concentrations, networks_from_tables
from ._warnings import EstimateOutsideIntervalWarning, ModelCheckWarning

__all__ = ["RATE_COLUMNS", "Evaluation", "Evaluator", "gap_of_present", "rates_in_subset",
           "rows_group"]


def rates_in_subset(rates_of, network, group_codes, subset_codes) -> np.ndarray:
    """Rates under ``network`` of the groups with rows in the subset (NaN for others)."""
    values = np.full(len(group_codes), np.nan)
    if network is not None:
        present = groups_present(group_codes, subset_codes)
        values[present] = rates_of(network)[present]
    return values


def rows_group(sens_codes: np.ndarray, group_codes: np.ndarray) -> np.ndarray:
    """Index in ``group_codes`` of every row's group (rows of ``sens_codes``; -1 if none)."""
    sens_codes, group_codes = np.asarray(sens_codes), np.asarray(group_codes)
    dims = tuple(int(max(sens_codes[:, k].max(initial=0), group_codes[:, k].max(initial=0)))
                 + 1 for k in range(group_codes.shape[1]))
    lookup = np.full(int(np.prod(dims)), -1, dtype=np.int64)
    lookup[np.ravel_multi_index(tuple(group_codes.T), dims)] = np.arange(len(group_codes))
    return lookup[np.ravel_multi_index(tuple(sens_codes.T.astype(np.int64)), dims)]


def gap_of_present(values: np.ndarray) -> float | None:
    """Statistical parity gap of the groups with a rate (None for fewer than two)."""
    present = values[~np.isnan(values)]
    return rate_gap(present) if present.size >= 2 else None


@dataclass
class Evaluation:
    """What one evaluation of a path on data yields (the groups, metrics, intervals)."""

    network: BayesNet
    group_codes: np.ndarray
    groups: pd.DataFrame
    metrics: dict
    most_favored: int
    least_favored: int
    multiplier: int | None = None  # the integer rule's (linear path; None on the others)
    weights: list | None = None  # the integer weights of every state (linear path)
    threshold: int | None = None  # the integer threshold (linear path)
    bounds: dict = field(default_factory=dict)  # rate name -> (low, high) over groups
    n_samples: int = 0  # rows sampled (sampling path)
    draws: dict | None = None  # rate name -> (n_draws, n_groups) posterior draws
    draw_multipliers: list = field(default_factory=list)  # the draws' rule per network
    draw_source: tuple | None = None  # (concentrations, rng state, n_draws) of all rows' draws
    level: float = 0.95  # credible level of the draws' intervals
    population: dict | None = None  # rate name -> PopulationEstimates
    population_metrics: dict = field(default_factory=dict)
    population_metric_intervals: dict = field(default_factory=dict)
    population_table: pd.DataFrame | None = None

    def draw_networks(self, max_table_size: int) -> list | None:
        """The posterior draws of the network of all rows, regenerated, or None.

        Regenerated from ``draw_source`` (the concentrations and the random state): a
        fitted verifier does not keep ``n_draws`` networks. The concentrations are the
        size of one network, but for the tables the hierarchical prior shrinks, which
        have one per draw (the target refitted per draw).
        """
        if self.draw_source is None:
            return None
        alphas, state, n_draws = self.draw_source
        rng = np.random.default_rng()
        rng.bit_generator.state = state
        return networks_from_concentrations(self.network, alphas, n_draws=n_draws,
                                            random_state=rng, max_table_size=max_table_size)

    @property
    def metric_intervals(self) -> dict:
        """Interval of every metric, from the posterior draws or the rates' bounds."""
        if self.draws:  # widened to hold the value (EstimateOutsideIntervalWarning)
            return hold_estimates(draw_metric_intervals(self.draws, self.metrics,
                                                        self.level), self.metrics)[0]
        return metric_intervals(self.bounds, self.metrics)


#: The rate columns of ``groups_`` that carry bounds.
RATE_COLUMNS = ("positive_rate", "true_positive_rate", "false_positive_rate",
                "path_specific_rate")


class Evaluator:
    """Groups table, metrics, draws and population estimate of a path's rates.

    Parameters
    ----------
    settings : Settings
        The verifier's parameters.
    variables : Variables
        The network's variables (sensitive ones, mediators).
    learner : NetworkLearner
        The networks' learner (the posterior of their tables).
    """

    def __init__(self, settings, variables, learner):
        self.settings = settings
        self.variables = variables
        self.learner = learner

    def exact(self, rates_of, plan_of, encoding, data, y_pos, weight,
              observed=None) -> Evaluation:
        """Groups table and metrics from ``rates_of(network)``, the exact group rates.

        ``plan_of(network)`` returns the rates function for the posterior draws of
        ``network`` (``n_draws > 0``), whose credible intervals are then the intervals,
        and for its bootstrap replicates (the population estimate, with the model's
        decisions ``observed`` on the rows).
        """
        sens_codes, group_codes, support, networks, codes = data
        rates = rates_of(networks[0])
        groups = self.group_table(encoding, group_codes)
        groups["positive_rate"] = rates
        groups["support"] = support
        metrics = {
            "disparate_impact": disparate_impact(rates),
            "statistical_parity": rate_gap(rates),
        }
        if y_pos is not None:
            for mask, net, column in ((y_pos, networks[1], "true_positive_rate"),
                                      (~y_pos, networks[2], "false_positive_rate")):
                groups[column] = rates_in_subset(rates_of, net, group_codes,
                                                 sens_codes[mask])
            gaps = [gap_of_present(groups[c].to_numpy())
                    for c in ("true_positive_rate", "false_positive_rate")]
            if any(g is not None for g in gaps):
                metrics["equalized_odds"] = max(g for g in gaps if g is not None)
        i_max, i_min = favored_indices(rates)
        mediated = None
        if self.variables.mediators:
            mediated = self.mediated_network(encoding, networks[0], group_codes[i_max])
            pcf_rates = rates_of(mediated)
            groups["path_specific_rate"] = pcf_rates
            metrics["path_specific_causal"] = rate_gap(pcf_rates)
        draws, draw_source = self.rate_draws(plan_of, encoding, data, y_pos, weight,
                                             groups, group_codes[i_max], mediated)
        bounds, level = {}, self.settings.credible_level
        for c in RATE_COLUMNS:
            if c in groups:
                bounds[c] = (credible_bounds(draws[c], level) if draws
                             else exact_interval(groups[c]))
        if draws:
            bounds = self.held_bounds(bounds, groups, metrics, draws)
        at = groups.columns.get_loc("support") + 1
        groups.insert(at, "ci_low", bounds["positive_rate"][0])
        groups.insert(at + 1, "ci_high", bounds["positive_rate"][1])
        ev = Evaluation(networks[0], group_codes, groups, metrics,
                        i_max, i_min, bounds=bounds, draws=draws,
                        level=level, draw_source=draw_source)
        if observed is not None and self.settings.n_bootstrap > 0:
            solve = self.replicate_solver(plan_of, len(codes))
            self.add_population(ev, self.rate_rows(data, y_pos, weight, observed, groups),
                                solve)
        return ev

    def add_population(self, ev: Evaluation, subsets, solve) -> None:
        """The population estimate of every rate of ``subsets`` (:mod:`._population`).

        Adds its columns to ``ev.groups``, the population metrics and their intervals,
        and warns (:class:`ModelCheckWarning`) of the groups whose network rate the
        model check rejects.
        """
        s = self.settings
        estimates = estimate_population(
            subsets, solve, n_boot=s.n_bootstrap, random_state=s.population_rng(2),
            relearn=not s.user_network, equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
            keep_prior=s.learned and s.prior != "bdeu", level=s.credible_level,
            max_table_size=s.max_table_size)
        if "positive_rate" not in estimates:
            return
        add_population_columns(ev.groups, estimates)
        ev.population = estimates
        ev.population_metrics, ev.population_metric_intervals = \
            metric_intervals_from_estimates(estimates, self.settings.credible_level,
                                            self.settings.population_rng(3))
        ev.population_table = population_table(ev.groups, self.variables.sensitive, estimates)
        self.warn_misfits(ev.groups, estimates)

    def warn_misfits(self, groups, estimates) -> None:
        """ModelCheckWarning naming the groups whose check is rejected (Holm, 5%)."""
        found = misfits(estimates)
        if not found:
            return
        named = []
        for name, i, p in found[:5]:
            est = estimates[name]
            named.append(f"{self.group_name(groups, i)} ({name}: network "
                         f"{groups[name].iloc[i]:.4f}, rows {est.direct[i]:.4f} on "
                         f"{est.n_eff[i]:.4g} rows, p = {p:.2g})")
        warn_user(
            f"The network does not fit {len(found)} group rate(s): {'; '.join(named)}"
            f"{' ...' if len(found) > 5 else ''}. The verified rates of these groups are "
            "exact under the network, not the population's: read population_rate (it "
            "falls back to the rows' own rate there) and the model_check_pvalue column of "
            "groups_; a richer network (max_indegree, n_bins) may fit better.",
            ModelCheckWarning)

    def replicate_solver(self, plan_of, n_rows: int):
        """``solve(subset, tables)``: the exact rates of the bootstrap replicates' networks.

        The replicates share the network's structure, so they are solved as the
        posterior draws are (``plan_of``: planned once, batched; on the linear path the
        draws' coarser rule shifted to the verified one).
        """
        def solve(sub, tables):
            mask = np.ones(n_rows, dtype=bool) if sub.mask is None else sub.mask
            rates_of = plan_of(sub.network, mask)
            nets = networks_from_tables(sub.network, tables)
            return np.array([rates_of(net) for net in nets], dtype=float), None

        return solve

    def rate_rows(self, data, y_pos, weight, observed, groups) -> list[RateRows]:
        """The rows behind every rate of ``groups`` (all rows; ``Y = 1``; ``Y = 0``)."""
        sens_codes, group_codes, _, networks, codes = data
        of_row = rows_group(sens_codes, group_codes)
        square = observed.square
        subsets = [RateRows("positive_rate", networks[0], groups["positive_rate"].to_numpy(),
                            None, codes, observed.decisions, of_row, weight, square)]
        if y_pos is not None:
            for mask, net, name in ((y_pos, networks[1], "true_positive_rate"),
                                    (~y_pos, networks[2], "false_positive_rate")):
                subsets.append(RateRows(
                    name, net, groups[name].to_numpy(), mask, codes[mask],
                    observed.decisions[mask], of_row[mask],
                    None if weight is None else weight[mask],
                    None if square is None else square[mask]))
        return subsets

    def held_bounds(self, bounds, groups, metrics, draws) -> dict:
        """The draws' bounds of every rate widened to hold the point estimates.

        An :class:`EstimateOutsideIntervalWarning` names every rate and metric whose
        value is outside the credible interval of its draws.
        """
        rates = {(c, i): v for c in bounds for i, v in enumerate(groups[c])}
        rate_bounds = {(c, i): (bounds[c][0][i], bounds[c][1][i]) for c, i in rates}
        _, outside = hold_estimates(rate_bounds, rates)
        metric_bounds = draw_metric_intervals(draws, metrics, self.settings.credible_level)
        _, outside_metrics = hold_estimates(metric_bounds, metrics)
        named = [f"{c} of group {self.group_name(groups, i)} {rates[c, i]:.4f} "
                 f"[{lo:.4f}, {hi:.4f}]" for (c, i), (lo, hi) in outside]
        named += [f"{k} {metrics[k]:.4f} [{lo:.4f}, {hi:.4f}]" for k, (lo, hi)
                  in outside_metrics]
        if named:
            warnings.warn(
                f"{len(named)} verified value(s) lie outside the "
                f"{self.settings.credible_level:.0%} "
                f"credible interval of their {self.settings.n_draws} posterior draws: "
                f"{'; '.join(named[:5])}{' ...' if len(named) > 5 else ''}. With groups "
                f"this small (the smallest has {groups['support'].min():.4g} rows) every "
                "draw adds noise to each group, and the largest gap of noisy rates exceeds "
                "the gap of the estimates: these quantities are poorly determined by the "
                "data. The reported intervals are widened to hold the values; merge small "
                "groups or gather more rows of them.",
                EstimateOutsideIntervalWarning, stacklevel=4)
        return {c: hold_estimates({c: (lo, hi)}, {c: groups[c].to_numpy()})[0][c]
                for c, (lo, hi) in bounds.items()}

    def group_name(self, groups, i: int) -> str:
        return "/".join(str(groups[s].iloc[i]) for s in self.variables.sensitive)

    def rate_draws(self, plan_of, encoding, data, y_pos, weight, groups, favored,
                    mediated) -> tuple[dict | None, list | None]:
        """Every rate column of ``groups`` under ``n_draws`` posterior networks.

        Returns the draws of every column and what regenerates the draws of the network
        of all rows (``Evaluation.draw_networks``): their concentrations, the random
        state before them and their number.

        The draws of all rows serve the positive and the path-specific rates (the
        mediated network of each draw, the favored group fixed at the point estimate's);
        those of the networks of ``Y = 1`` / ``Y = 0`` the true / false positive rates
        (NaN columns for the groups without a rate).
        """
        if not self.settings.draws_wanted:
            return None, None
        _, _, _, networks, codes = data
        rng = np.random.default_rng(
            check_random_state(self.settings.random_state).randint(np.iinfo(np.int32).max))
        subsets = [("positive_rate", np.ones(len(codes), dtype=bool), networks[0])]
        if y_pos is not None:
            subsets += [("true_positive_rate", y_pos, networks[1]),
                        ("false_positive_rate", ~y_pos, networks[2])]
        out, drawn = {}, None
        for column, mask, net in subsets:
            absent = np.isnan(groups[column].to_numpy())
            values = np.full((self.settings.n_draws, len(groups)), np.nan)
            if net is not None and not absent.all():
                alphas = self.learner.posterior_concentrations(
                    net, codes[mask], None if weight is None else weight[mask], rng)
                if column == "positive_rate":
                    drawn = (alphas, copy.deepcopy(rng.bit_generator.state), self.settings.n_draws)
                nets = networks_from_concentrations(net, alphas, n_draws=self.settings.n_draws,
                                                    random_state=rng,
                                                    max_table_size=self.settings.max_table_size)
                rates_of = plan_of(net, mask)
                values = np.array([rates_of(d) for d in nets], dtype=float)
                values[:, absent] = np.nan
                if column == "positive_rate" and mediated is not None:
                    pcf_of = plan_of(mediated, mask)
                    out["path_specific_rate"] = np.array([
                        pcf_of(self.mediated_network(encoding, d, favored)) for d in nets
                    ], dtype=float)
            out[column] = values
        return out, drawn

    def group_table(self, encoding, group_codes) -> pd.DataFrame:
        """One column per sensitive feature: the value of each group."""
        return pd.DataFrame(
            {
                name: encoding.group_values(i, group_codes[:, k])
                for k, (name, i) in enumerate(zip(self.variables.sensitive,
                                                  self.variables.sens_idx))
            }
        )

    def mediated_network(self, encoding, network, favored_codes) -> BayesNet:
        """Return the network in which the mediators follow the most favored group."""
        med_idx = [encoding.index(m) for m in self.variables.mediators]
        if self.settings.pcf_definition == "fvgm":
            return fvgm_mediated_network(network, med_idx, self.variables.sens_idx,
                                         list(favored_codes), self.settings.max_table_size)
        return edge_specific_network(network, med_idx, self.variables.sens_idx, list(favored_codes))

    def favored(self, groups: pd.DataFrame, i: int) -> dict:
        return {s: groups[s].iloc[i] for s in self.variables.sensitive}

