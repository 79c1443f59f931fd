"""The exact path for linear rules: group rates of the integer rule by the S3P engine."""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..s3p import BayesNet, TableTooLargeError
from ..utils._warnings import warn_user
from ._draw_rule import DrawRule
from ._influence import edge_specific_network, fvgm_mediated_network, group_rates
from ._intervals import (
    credible_bounds,
    draw_metric_intervals,
    exact_interval,
    hold_estimates,
    metric_intervals,
)
from ._learning import EQUIVALENT_SAMPLE_SIZE, group_support, groups_present
from ._metrics import disparate_impact, favored_indices, rate_gap
from ._population import (
    RateRows,
    add_population_columns,
    estimate_population,
    metric_intervals_from_estimates,
    misfits,
    population_table,
)
from ._posterior import networks_from_concentrations, networks_from_tables, shared_plan_rates
from ._variables import Encoding
from ._warnings import EstimateOutsideIntervalWarning, ModelCheckWarning

# group_support and groups_present live in _learning; importable here for the other paths.
__all__ = ["Evaluation", "gap_of_present", "group_support", "groups_present",
           "rates_in_subset"]


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
    """What one verification of the integer rule on data yields (``_evaluate``)."""

    multiplier: int
    weights: list
    threshold: int
    network: BayesNet
    group_codes: np.ndarray
    groups: pd.DataFrame
    metrics: dict
    most_favored: int
    least_favored: int
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


class _LinearPathMixin:
    """Exact group rates and metrics of the integer rule."""

    def _evaluate(self, frame, y_pos, encoding, multipliers, weight,
                  observed=None) -> Evaluation:
        """Networks, group rates and metrics on ``frame`` (labels ``y_pos`` or None).

        ``multipliers`` lists the multipliers to try in order: when the engine's table
        for one is too large, the next (smaller) one is used. ``observed``: the model's
        decisions on the rows, for the population estimate (None: none).
        """
        data = self._groups_and_networks(frame, y_pos, encoding, weight)
        for k, l in enumerate(multipliers):
            try:
                return self._evaluate_at(l, encoding, data, y_pos, weight, observed)
            except TableTooLargeError:
                if k + 1 == len(multipliers):
                    raise
        raise RuntimeError("no multiplier to try")  # pragma: no cover

    def _evaluate_at(self, multiplier, encoding, data, y_pos, weight,
                     observed=None) -> Evaluation:
        """Group rates and metrics of the integer rule with the multiplier ``l``.

        ``data`` is what ``_groups_and_networks`` returns. The posterior draws are solved
        on the coarsest rule of the same model within tolerance (:mod:`._draw_rule`).
        """
        weights, threshold = self._integer_rule(encoding, multiplier)
        sens_codes, group_codes, _, _, codes = data
        solved = []  # (network, rates): every network's verified rates, solved once

        def rates_of(net):
            for known, rates in solved:
                if known is net:
                    return rates
            rates = group_rates(net, weights, threshold, self._sens_idx, group_codes,
                                self.max_table_size)
            solved.append((net, rates))
            return rates

        draw_rule = self._draw_rule(encoding, multiplier, group_codes,
                                    decisions_at=lambda r: encoding.scores(codes, r[0]) >= r[1])
        group_of_row = rows_group(sens_codes, group_codes)

        def plan_of(net, mask):  # the draws share the network's structure: plan once
            rows = (mask, group_of_row[mask], len(group_codes), weight)
            return draw_rule.rates_function(net, rates_of(net), rows)

        ev = self._exact_evaluation(rates_of, plan_of, encoding, data, y_pos, weight,
                                    observed)
        ev.multiplier, ev.weights, ev.threshold = multiplier, weights, threshold
        ev.draw_multipliers = draw_rule.chosen
        return ev

    def _draw_rule(self, encoding, multiplier, group_codes, decisions_at=None,
                   coarsest=None) -> DrawRule:
        """The rule of the posterior draws (:class:`DrawRule`) of the integer rule ``l``."""
        keep, budget = self._sens_idx, self.max_table_size
        return DrawRule(
            multiplier, lambda m: self._integer_rule(encoding, m),
            solve=lambda net, rule: group_rates(net, *rule, keep, group_codes, budget),
            plan=lambda net, rule: shared_plan_rates(net, *rule, keep, group_codes,
                                                     max_table_size=budget),
            decisions_at=decisions_at, coarsest=coarsest)

    @property
    def _draw_networks(self) -> list | None:
        """The posterior draws of the network of all rows made by ``fit``, or None.

        Regenerated from ``_draw_source`` (the concentrations and the random state): the
        fitted verifier does not keep ``n_draws`` networks. The concentrations are the
        size of one network, but for the tables the hierarchical prior shrinks, which
        have one per draw (the target refitted per draw).
        """
        source = getattr(self, "_draw_source", None)
        if source is None:
            return None
        alphas, state, n_draws = source
        rng = np.random.default_rng()
        rng.bit_generator.state = state
        return networks_from_concentrations(self.network_, alphas, n_draws=n_draws,
                                            random_state=rng,
                                            max_table_size=self.max_table_size)

    def _draw_rates_of(self, network, exact=None):
        """Rates function for posterior draws of ``network``'s structure (after ``fit``).

        The exact paths only: the verified rule's rates of a drawn network (the tree's
        on the tree path), the linear rule's solved on the coarsest rule within tolerance
        at ``network`` (:class:`~._draw_rule.DrawRule`: no coarser than the rule ``fit``
        chose for the network of all rows with the row check, so the draws of
        ``network_`` get the rates of ``fit``). ``exact``: the verified rule's group
        rates at ``network`` when already solved (solved here when None).
        """
        if self._exact_kind == "tree":
            return self._tree_draw_rates_of(network)
        rule = self._draw_rule(self._encoding, self.multiplier_, self._group_codes,
                               coarsest=self._draw_multiplier)
        if exact is None:
            exact = group_rates(network, self._weights, self.threshold_, self._sens_idx,
                                self._group_codes, self.max_table_size)
        return rule.rates_function(network, exact)

    def _exact_evaluation(self, rates_of, plan_of, encoding, data, y_pos,
                          weight, observed=None) -> Evaluation:
        """Groups table and metrics from ``rates_of(network)``, the exact group rates.

        ``plan_of(network)`` returns the rates function for the posterior draws of
        ``network`` (``n_draws > 0``), whose credible intervals are then the intervals,
        and for its bootstrap replicates (the population estimate, with the model's
        decisions ``observed`` on the rows).
        """
        sens_codes, group_codes, support, networks, codes = data
        rates = rates_of(networks[0])
        groups = self._group_table(encoding, group_codes)
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
        if self._mediators:
            mediated = self._mediated_network(encoding, networks[0], group_codes[i_max])
            pcf_rates = rates_of(mediated)
            groups["path_specific_rate"] = pcf_rates
            metrics["path_specific_causal"] = rate_gap(pcf_rates)
        draws, draw_source = self._rate_draws(plan_of, encoding, data, y_pos, weight,
                                              groups, group_codes[i_max], mediated)
        bounds = {}
        for c in RATE_COLUMNS:
            if c in groups:
                bounds[c] = (credible_bounds(draws[c], self.credible_level) if draws
                             else exact_interval(groups[c]))
        if draws:
            bounds = self._held_bounds(bounds, groups, metrics, draws)
        at = groups.columns.get_loc("support") + 1
        groups.insert(at, "ci_low", bounds["positive_rate"][0])
        groups.insert(at + 1, "ci_high", bounds["positive_rate"][1])
        ev = Evaluation(None, None, None, networks[0], group_codes, groups, metrics,
                        i_max, i_min, bounds=bounds, draws=draws,
                        level=self.credible_level, draw_source=draw_source)
        if observed is not None and self.n_bootstrap > 0:
            solve = self._replicate_solver(plan_of, len(codes))
            self._add_population(ev, self._rate_rows(data, y_pos, weight, observed, groups),
                                 solve)
        return ev

    def _population_rng(self, stream: int):
        """A generator of the population estimate (stream 2: replicates, 3: metrics)."""
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        return np.random.default_rng([seed, stream])

    def _add_population(self, ev: Evaluation, subsets, solve) -> None:
        """The population estimate of every rate of ``subsets`` (:mod:`._population`).

        Adds its columns to ``ev.groups``, the population metrics and their intervals,
        and warns (:class:`ModelCheckWarning`) of the groups whose network rate the
        model check rejects.
        """
        learned = isinstance(self.network, str) and self.network == "learn"
        estimates = estimate_population(
            subsets, solve, n_boot=self.n_bootstrap, random_state=self._population_rng(2),
            relearn=not isinstance(self.network, BayesNet),
            equivalent_sample_size=EQUIVALENT_SAMPLE_SIZE,
            keep_prior=learned and self.prior != "bdeu", level=self.credible_level,
            max_table_size=self.max_table_size)
        if "positive_rate" not in estimates:
            return
        add_population_columns(ev.groups, estimates)
        ev.population = estimates
        ev.population_metrics, ev.population_metric_intervals = \
            metric_intervals_from_estimates(estimates, self.credible_level,
                                            self._population_rng(3))
        ev.population_table = population_table(ev.groups, self._sensitive, estimates)
        self._warn_misfits(ev.groups, estimates)

    def _warn_misfits(self, groups, estimates) -> None:
        """ModelCheckWarning naming the groups whose check is rejected (Holm, 5%)."""
        found = misfits(estimates)
        if not found:
            return
        named = []
        for name, i, p in found[:5]:
            est = estimates[name]
            named.append(f"{self._group_name(groups, i)} ({name}: network "
                         f"{groups[name].iloc[i]:.4f}, rows {est.direct[i]:.4f} on "
                         f"{est.n_eff[i]:.4g} rows, p = {p:.2g})")
        warn_user(
            f"The network does not fit {len(found)} group rate(s): {'; '.join(named)}"
            f"{' ...' if len(found) > 5 else ''}. The verified rates of these groups are "
            "exact under the network, not the population's: read population_rate (it "
            "falls back to the rows' own rate there) and the model_check_pvalue column of "
            "groups_; a richer network (max_indegree, n_bins) may fit better.",
            ModelCheckWarning)

    def _replicate_solver(self, plan_of, n_rows: int):
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

    def _rate_rows(self, data, y_pos, weight, observed, groups) -> list[RateRows]:
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

    def _held_bounds(self, bounds, groups, metrics, draws) -> dict:
        """The draws' bounds of every rate widened to hold the point estimates.

        An :class:`EstimateOutsideIntervalWarning` names every rate and metric whose
        value is outside the credible interval of its draws.
        """
        rates = {(c, i): v for c in bounds for i, v in enumerate(groups[c])}
        rate_bounds = {(c, i): (bounds[c][0][i], bounds[c][1][i]) for c, i in rates}
        _, outside = hold_estimates(rate_bounds, rates)
        metric_bounds = draw_metric_intervals(draws, metrics, self.credible_level)
        _, outside_metrics = hold_estimates(metric_bounds, metrics)
        named = [f"{c} of group {self._group_name(groups, i)} {rates[c, i]:.4f} "
                 f"[{lo:.4f}, {hi:.4f}]" for (c, i), (lo, hi) in outside]
        named += [f"{k} {metrics[k]:.4f} [{lo:.4f}, {hi:.4f}]" for k, (lo, hi)
                  in outside_metrics]
        if named:
            warnings.warn(
                f"{len(named)} verified value(s) lie outside the {self.credible_level:.0%} "
                f"credible interval of their {self.n_draws} posterior draws: "
                f"{'; '.join(named[:5])}{' ...' if len(named) > 5 else ''}. With groups "
                f"this small (the smallest has {groups['support'].min():.4g} rows) every "
                "draw adds noise to each group, and the largest gap of noisy rates exceeds "
                "the gap of the estimates: these quantities are poorly determined by the "
                "data. The reported intervals are widened to hold the values; merge small "
                "groups or gather more rows of them.",
                EstimateOutsideIntervalWarning, stacklevel=4)
        return {c: hold_estimates({c: (lo, hi)}, {c: groups[c].to_numpy()})[0][c]
                for c, (lo, hi) in bounds.items()}

    def _group_name(self, groups, i: int) -> str:
        return "/".join(str(groups[s].iloc[i]) for s in self._sensitive)

    def _draws_wanted(self) -> bool:
        """Posterior draws: ``n_draws > 0`` and a network learned from the data."""
        return self.n_draws > 0 and not isinstance(self.network, BayesNet)

    def _rate_draws(self, plan_of, encoding, data, y_pos, weight, groups, favored,
                    mediated) -> tuple[dict | None, list | None]:
        """Every rate column of ``groups`` under ``n_draws`` posterior networks.

        Returns the draws of every column and what regenerates the draws of the network
        of all rows (``_draw_networks``): their concentrations, the random state before
        them and their number.

        The draws of all rows serve the positive and the path-specific rates (the
        mediated network of each draw, the favored group fixed at the point estimate's);
        those of the networks of ``Y = 1`` / ``Y = 0`` the true / false positive rates
        (NaN columns for the groups without a rate).
        """
        if not self._draws_wanted():
            return None, None
        _, _, _, networks, codes = data
        rng = np.random.default_rng(
            check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        subsets = [("positive_rate", np.ones(len(codes), dtype=bool), networks[0])]
        if y_pos is not None:
            subsets += [("true_positive_rate", y_pos, networks[1]),
                        ("false_positive_rate", ~y_pos, networks[2])]
        out, drawn = {}, None
        for column, mask, net in subsets:
            absent = np.isnan(groups[column].to_numpy())
            values = np.full((self.n_draws, len(groups)), np.nan)
            if net is not None and not absent.all():
                alphas = self._posterior_concentrations(
                    net, codes[mask], None if weight is None else weight[mask], rng)
                if column == "positive_rate":
                    drawn = (alphas, copy.deepcopy(rng.bit_generator.state), self.n_draws)
                nets = networks_from_concentrations(net, alphas, n_draws=self.n_draws,
                                                    random_state=rng,
                                                    max_table_size=self.max_table_size)
                rates_of = plan_of(net, mask)
                values = np.array([rates_of(d) for d in nets], dtype=float)
                values[:, absent] = np.nan
                if column == "positive_rate" and mediated is not None:
                    pcf_of = plan_of(mediated, mask)
                    out["path_specific_rate"] = np.array([
                        pcf_of(self._mediated_network(encoding, d, favored)) for d in nets
                    ], dtype=float)
            out[column] = values
        return out, drawn

    def _group_table(self, encoding, group_codes) -> pd.DataFrame:
        """One column per sensitive feature: the value of each group."""
        return pd.DataFrame(
            {
                name: encoding.group_values(i, group_codes[:, k])
                for k, (name, i) in enumerate(zip(self._sensitive, self._sens_idx))
            }
        )

    def _mediated_network(self, encoding, network, favored_codes) -> BayesNet:
        """Return the network in which the mediators follow the most favored group."""
        med_idx = [encoding.index(m) for m in self._mediators]
        if self.pcf_definition == "fvgm":
            return fvgm_mediated_network(network, med_idx, self._sens_idx,
                                         list(favored_codes), self.max_table_size)
        return edge_specific_network(network, med_idx, self._sens_idx, list(favored_codes))

    def _favored(self, groups: pd.DataFrame, i: int) -> dict:
        return {s: groups[s].iloc[i] for s in self._sensitive}

    def _set_evaluation(self, ev: Evaluation, encoding: Encoding) -> None:
        self._weights = ev.weights
        self.threshold_ = ev.threshold
        self.weights_ = None if ev.weights is None else {
            v.name: pd.Series(w, index=pd.Index(v.states, dtype=object), name=v.name)
            for v, w in zip(encoding.variables, ev.weights)
        }
        self.metric_intervals_ = ev.metric_intervals
        self.n_samples_ = ev.n_samples
        self.network_ = ev.network
        self._draw_source = ev.draw_source
        # fit's positive rates under its draws (the rates of _draw_networks), for FIF
        self._draw_positive_rates = (None if ev.draw_source is None
                                     else ev.draws["positive_rate"].copy())
        self._draw_multiplier = ev.draw_multipliers[0] if ev.draw_multipliers else None
        self.groups_ = ev.groups
        self.metrics_ = ev.metrics
        self.population_ = ev.population_table
        self.population_metrics_ = dict(ev.population_metrics)
        self.population_metric_intervals_ = dict(ev.population_metric_intervals)
        self._group_codes = ev.group_codes
        self.most_favored_group_ = self._favored(ev.groups, ev.most_favored)
        self.least_favored_group_ = self._favored(ev.groups, ev.least_favored)
