"""The sampling path of the verifier: certified Monte Carlo rates for any classifier.

The network is learned as on the exact path, over every input column of the model
(numeric columns binned into quantile bins, categories as states) and the sensitive
variables, which are roots. For every compound group, rows are sampled with the
sensitive variables set to the group (:class:`._sampling.NetworkSampler`), their states
mapped back to values (:class:`._sampling.RowBuilder`) and decided by the model's own
``predict`` (:class:`._sampling.ModelDecision`), in batches, until the group's
Clopper-Pearson interval is narrower than ``tolerance`` or ``max_samples`` rows were
drawn (:func:`._sampling.adaptive_rate`): the point estimate of the rate (under the
point-estimate network) and its Monte Carlo interval, whose level is set by a union
bound over every interval of the fit and every look of the sampler
(:mod:`._intervals`).

With ``n_draws > 0`` (the default) the reported intervals also hold the uncertainty of
the network learned from a finite sample: ``n_draws`` networks are drawn from the
posterior of its parameters (as on the exact paths, the same draws for the same
``random_state``), every rate is estimated under every draw from ``m`` sampled rows
(:func:`._sampling.posterior_draw_rates`, all draws' rows predicted together), and
``ci_low`` / ``ci_high`` and the metrics' intervals are the equal-tailed quantiles at
``credible_level`` of those estimates: samples of the posterior predictive
distribution of the Monte Carlo estimator, the draw's rate plus its Monte Carlo error,
so both sources are in the interval (:func:`._sampling.rows_per_draw` chooses ``m`` so
that the Monte Carlo error widens it by at most ~5% or by ``tolerance``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed

from ._evaluation import Evaluation, Evaluator
from ._intervals import (
    combined_metric_intervals,
    credible_bounds,
    hull_bounds,
    per_interval_alpha,
)
from ._learning import NetworkLearner, groups_present
from ._metrics import disparate_impact, favored_indices, rate_gap
from ._population import reweighted_rates
from ._quantization import Quantized
from ._sampling import (
    ModelDecision,
    NetworkSampler,
    RowBuilder,
    SamplingCost,
    adaptive_rate,
    batch_rows,
    draw_grid,
    draw_rows_needed,
    look_grid,
    posterior_draw_rates,
)
from ._variables import Encoding
from ._warnings import SamplingToleranceWarning

__all__ = ["SAMPLING_BINS", "SamplingPath"]

#: Sampled rows kept per group and rate for the population estimate's replicates
#: (reweighted, :func:`._population.reweighted_rates`).
KEPT_ROWS = 20_000

#: Quantile bins per numeric column on the sampling path with ``n_bins="auto"``
#: (at most ``max_bins``): the bins only shape the distribution, values are drawn
#: from the data within them.
SAMPLING_BINS = 20


@dataclass
class _SampledEvaluation(Evaluation):
    """An evaluation of the sampling path: its intervals combine both sources.

    ``bounds`` and ``groups``' ``ci_low`` / ``ci_high`` are already combined;
    ``mc_bounds`` keeps the Monte Carlo bounds of the point estimates, hulled with the
    draws' intervals of the metrics.
    """

    mc_bounds: dict = field(default_factory=dict)

    @property
    def metric_intervals(self) -> dict:
        return combined_metric_intervals(self.draws, self.mc_bounds, self.metrics,
                                         self.level)


class _SamplingContext:
    """What every sampled rate of one fit (or verify, or influence) shares."""

    def __init__(self, settings, n_intervals: int, rng, metered=False, draw_rows=None):
        self.grid = look_grid(settings.max_samples)
        self.alpha = per_interval_alpha(settings.confidence, n_intervals, len(self.grid))
        self.tolerance = settings.tolerance
        self.rng = rng
        self.evaluator = None  # the Evaluator of the rates (their variables, networks)
        self.kept = {}  # rate name -> (group -> (codes, decisions), rates, rows sampled)
        self.cost = None
        if metered:
            self.cost = SamplingCost(n_intervals=n_intervals, tolerance=self.tolerance,
                                     alpha=self.alpha, grid=self.grid,
                                     max_time=settings.max_time, verbose=settings.verbose,
                                     draw_rows=draw_rows)

    def timed(self, draw):
        """``draw``, timed by the cost meter when there is one."""
        return draw if self.cost is None else self.cost.wrap(draw)

    def seeds(self, n: int) -> list[int]:
        return [int(s) for s in self.rng.integers(2**63 - 1, size=n)]


class SamplingPath:
    """The sampling path: certified Monte Carlo rates of any classifier.

    One of the paths of :func:`._paths.select_path`.

    Parameters
    ----------
    settings : Settings
        The verifier's parameters.
    estimator : estimator
        The fitted model, decided by its own ``predict``.
    classes : ndarray of shape (2,)
        The model's classes (``classes[1]`` is the positive one).
    feature_names : list of str
        The columns the model reads (``feature_names_in_``).
    input_labels : list or None
        The column labels of ``X`` as given (None: an array).
    """

    name = "sampling"
    kind = None
    rule = None
    decision_scale = None

    def __init__(self, settings, estimator, classes, feature_names, input_labels):
        self.settings = settings
        self.estimator = estimator
        self.classes = classes
        self.feature_names = list(feature_names)
        self.input_labels = input_labels
        self.decision = ModelDecision(estimator, classes[1])
        self.batch = None
        self.fitted = None  # fit's evaluation (remember)
        self.variables = None
        self.fit_builder = None

    def _bins(self) -> int:
        s = self.settings
        return min(SAMPLING_BINS, s.max_bins) if s.n_bins == "auto" else int(s.n_bins)

    def sampling_rng(self):
        """The Monte Carlo generator, a stream apart from the posterior draws' one.

        The posterior draws use ``default_rng(seed)``, as on the exact paths.
        """
        seed = self.settings.seed()
        return np.random.default_rng([seed, 1])

    def posterior_rng(self):
        """The posterior draws' generator, that of the exact paths (same draws)."""
        seed = self.settings.seed()
        return np.random.default_rng(seed)

    def check_network(self) -> None:
        """Refuse a user BayesNet: its states have no values to give the model."""
        if self.settings.user_network:
            raise ValueError(
                f"The sampling path (method_='sampling', for {self.settings.estimator_name}) "
                "learns the network of the model's input columns from X; a user BayesNet "
                "has no values for its states. Use network='learn' or 'independent', or a "
                "linear model (exact path) with the BayesNet."
            )

    def decisions(self, X, sensitive_values, rng) -> np.ndarray:
        """The model's own positive decisions on the rows ``X``."""
        return ModelDecision(self.estimator, self.classes[1]).decisions(X, sensitive_values,
                                                                        rng)

    def encode(self, frame, sensitive, weight) -> Quantized:
        """The variables: every input column of the model, numeric ones binned."""
        self.check_network()
        s = self.settings
        n_bins = self._bins()
        encoding = Encoding.from_columns(frame, sensitive, n_bins, s.random_state,
                                         sample_weight=weight)
        reason = f"{n_bins} quantile bins: sampling path (" + (
            "fixed n_bins)" if s.n_bins != "auto" else f"{SAMPLING_BINS}, at most max_bins)")
        return Quantized(encoding, [None], n_bins, reason)

    def builder(self, encoding, frame, weight, mask=None) -> RowBuilder:
        rows = frame if mask is None else frame[mask]
        w = None if weight is None else (weight if mask is None else weight[mask])
        return RowBuilder(encoding, rows, w, self.feature_names, self.input_labels)

    def evaluate(self, variables, frame, y_pos, encoding, multipliers, weight,
                 observed=None) -> Evaluation:
        """Networks, sampled group rates with intervals, and metrics on ``frame``."""
        learner = NetworkLearner(self.settings, variables)
        data = learner.groups_and_networks(frame, y_pos, encoding, weight)
        sens_codes, group_codes = data.sens_codes, data.group_codes
        n_rates = 1 + (2 if y_pos is not None else 0) + (1 if variables.mediators else 0)
        draw_rows = (self._draw_cost(sens_codes, group_codes, weight, y_pos,
                                     variables.mediators)
                     if self.settings.draws_wanted else None)
        ctx = _SamplingContext(self.settings, n_rates * len(group_codes), self.sampling_rng(),
                               metered=True, draw_rows=draw_rows)
        ctx.evaluator = Evaluator(self.settings, variables, learner)
        self.batch = batch_rows(len(encoding.variables), len(self.feature_names),
                                self.settings.max_table_size)
        try:
            ev = self._sampled_evaluation(ctx, frame, y_pos, encoding, weight, data)
        finally:
            ctx.cost.close()
        if observed is not None and self.settings.n_bootstrap > 0:
            rows = ctx.evaluator.rate_rows(data, y_pos, weight, observed, ev.groups)
            ctx.evaluator.add_population(ev, rows, self._reweighting_solver(ctx))
        return ev

    def agreement(self, encoding, frame, multiplier, weight) -> float:
        """1: the model itself decides every sampled row."""
        return 1.0

    def check_agreement(self, encoding, frame, weight, agreement, multiplier,
                        reference=None) -> None:
        """Nothing to check: the agreement is 1."""

    def remember(self, variables, ev: Evaluation, frame, weight) -> None:
        """Keep fit's evaluation and the row builder of fit's rows (for FIF)."""
        self.variables, self.fitted = variables, ev
        self.fit_builder = self.builder(variables.encoding, frame, weight)

    def _reweighting_solver(self, ctx):
        """``solve(subset, tables)``: the replicates' rates from the point's sampled rows.

        The rows sampled for each group's point estimate (``ctx.kept``) are reweighted by
        every replicate's probability (:func:`._population.reweighted_rates`): no new
        row for the model to decide. The point estimate's own Monte Carlo variance is
        the variance the replicates do not see.
        """
        def solve(sub, tables):
            kept, rates, n = ctx.kept[sub.name]
            values = reweighted_rates(sub.network, tables, kept, len(rates))
            with np.errstate(invalid="ignore", divide="ignore"):
                extra = np.where(n > 0, rates * (1 - rates) / np.where(n > 0, n, 1), 0.0)
            return values, extra

        return solve

    def _draw_cost(self, sens_codes, group_codes, weight, y_pos, mediators):
        """``p -> rows`` of every rate's posterior draws (:func:`draw_rows_needed`).

        The posterior spread of a rate is taken as that of a proportion of its
        group's rows (those of the label for the true and false positive rates), at
        the rate 0.5 whatever the first batch's ``p``: the groups' rates differ, and a
        network's posterior of a rate can be narrower than a proportion's, which asks
        for more rows (on Adult, 0.5 estimates 6.0 million rows for 7.8 million drawn,
        the first batch's 0.05 would estimate 2.3 million).
        """
        masks = [np.ones(len(sens_codes), dtype=bool)]
        masks += [] if y_pos is None else [y_pos, ~y_pos]
        masks += [masks[0]] if mediators else []
        w = np.ones(len(sens_codes)) if weight is None else weight
        supports = [float(w[mask & np.all(sens_codes == g, axis=1)].sum())
                    for mask in masks for g in group_codes]
        grid = draw_grid(self.settings.n_draws, self.settings.max_samples)

        def rows(p):
            return sum(draw_rows_needed(0.5, s, self.settings.n_draws, self.settings.tolerance,
                                        self.settings.credible_level, grid)
                       for s in supports if s > 0)

        return rows

    def _sampled_evaluation(self, ctx, frame, y_pos, encoding, weight, data) -> Evaluation:
        """Sampled group rates with intervals, and metrics (see :meth:`evaluate`)."""
        sens_codes, group_codes, support, networks, codes = data
        groups = ctx.evaluator.group_table(encoding, group_codes)
        everyone = np.ones(len(group_codes), dtype=bool)
        builder = self.builder(encoding, frame, weight)
        est = self._sampled_rates(networks[0], builder, encoding, group_codes, everyone, ctx,
                                  keep="positive_rate")
        bounds = {"positive_rate": (est["low"], est["high"])}
        groups["positive_rate"] = est["rate"]
        groups["support"] = support
        groups["ci_low"], groups["ci_high"] = est["low"], est["high"]
        rates = est["rate"]
        metrics = {"disparate_impact": disparate_impact(rates),
                   "statistical_parity": rate_gap(rates)}
        n_samples, converged = int(est["n"].sum()), [est]
        if y_pos is not None:
            gaps = []
            for mask, net, column in ((y_pos, networks[1], "true_positive_rate"),
                                      (~y_pos, networks[2], "false_positive_rate")):
                sub = self._label_rates(net, encoding, frame, weight, mask, group_codes,
                                        sens_codes, ctx, keep=column)
                groups[column] = sub["rate"]
                bounds[column] = (sub["low"], sub["high"])
                n_samples += int(np.nansum(sub["n"]))
                converged.append(sub)
                present = sub["rate"][~np.isnan(sub["rate"])]
                gaps.append(rate_gap(present) if present.size >= 2 else None)
            if any(g is not None for g in gaps):
                metrics["equalized_odds"] = max(g for g in gaps if g is not None)
        i_max, i_min = favored_indices(rates)
        if ctx.evaluator.variables.mediators:
            net = ctx.evaluator.mediated_network(encoding, networks[0], group_codes[i_max])
            pcf = self._sampled_rates(net, builder, encoding, group_codes, everyone, ctx)
            groups["path_specific_rate"] = pcf["rate"]
            bounds["path_specific_rate"] = (pcf["low"], pcf["high"])
            metrics["path_specific_causal"] = rate_gap(pcf["rate"])
            n_samples += int(pcf["n"].sum())
            converged.append(pcf)
        self._warn_unconverged(converged, n_samples)
        draws = None
        if self.settings.draws_wanted:
            draws, rows = self._sampled_draws(ctx, frame, y_pos, encoding, weight,
                                              sens_codes, group_codes, networks, codes,
                                              group_codes[i_max])
            n_samples += rows
        combined = bounds if draws is None else {
            c: hull_bounds(credible_bounds(d, self.settings.credible_level), bounds[c])
            for c, d in draws.items()}
        groups["ci_low"], groups["ci_high"] = combined["positive_rate"]
        return _SampledEvaluation(networks[0], group_codes, groups,
                                  metrics, i_max, i_min, bounds=combined,
                                  n_samples=n_samples, draws=draws,
                                  level=self.settings.credible_level, mc_bounds=bounds)

    def _sampled_draws(self, ctx, frame, y_pos, encoding, weight, sens_codes, group_codes,
                       networks, codes, favored):
        """Every rate under ``n_draws`` posterior networks, sampled: (draws, rows).

        The same draws as the exact paths (same generator, same order: all rows, then
        ``Y = 1`` and ``Y = 0``); the path-specific rates under the mediated network of
        each draw (the favored group fixed at the point estimate's). A rate a group
        lacks (no row of the label) is a column of NaN.
        """
        rng = self.posterior_rng()
        everyone = np.ones(len(codes), dtype=bool)
        subsets = [("positive_rate", everyone, networks[0])]
        if y_pos is not None:
            subsets += [("true_positive_rate", y_pos, networks[1]),
                        ("false_positive_rate", ~y_pos, networks[2])]
        out, rows, capped = {}, 0, []
        for column, mask, net in subsets:
            present = np.zeros(len(group_codes), dtype=bool)
            if net is not None:
                present = groups_present(group_codes, sens_codes[mask])
            out[column] = np.full((self.settings.n_draws, len(group_codes)), np.nan)
            if not present.any():
                continue
            whole = mask is everyone  # all rows: the codes themselves, no copy
            nets = ctx.evaluator.learner.posterior_draws(net, codes if whole else codes[mask],
                                         weight if whole or weight is None else weight[mask],
                                         rng)
            builder = self.builder(encoding, frame, weight, None if whole else mask)
            todo = [(column, nets)]
            if column == "positive_rate" and ctx.evaluator.variables.mediators:
                todo.append(("path_specific_rate",
                             [ctx.evaluator.mediated_network(encoding, d, favored) for d in nets]))
            for name, draws in todo:
                out[name], n, ok = self._draw_rates(draws, builder, encoding, group_codes,
                                                    present, ctx)
                rows += n
                capped += [] if ok else [name]
        self._warn_draws_capped(capped)
        return out, rows

    def _draw_rates(self, networks, builder, encoding, group_codes, present, ctx):
        """Sampled rates of the groups ``present`` under every network of ``networks``.

        Returns the ``(n_draws, n_groups)`` rates (NaN for the other groups), the rows
        sampled and whether every group reached the rows it asked for.
        """
        values = np.full((len(networks), len(group_codes)), np.nan)
        grid = draw_grid(len(networks), self.settings.max_samples)
        seeds = ctx.seeds(len(group_codes))
        rows, ok = 0, True
        for g in np.flatnonzero(present):
            rng = np.random.default_rng(seeds[g])
            fixed = {i: int(s) for i, s in zip(ctx.evaluator.variables.sens_idx,
                                               group_codes[g])}

            def draw(ids, n, fixed=fixed, rng=rng):
                # A sampler per call (its cumulative tables: one network's size), so
                # the draws' memory stays that of their networks.
                codes = np.concatenate([NetworkSampler(networks[d]).sample(n, rng, fixed)
                                        for d in ids])
                decided = self._decide(builder, codes, encoding.names, rng, ctx)
                return decided.reshape(len(ids), n).sum(axis=1)

            est = posterior_draw_rates(ctx.timed(draw), len(networks),
                                       tolerance=ctx.tolerance, level=self.settings.credible_level,
                                       grid=grid, batch=self.batch)
            values[:, g] = est.rates
            rows += est.samples * len(networks)
            ok &= est.converged
        return values, rows, ok

    def _decide(self, builder, codes, names, rng, ctx) -> np.ndarray:
        """The model's positive decisions on the sampled states ``codes``."""
        X = builder.model_input(builder.frame(codes, names, rng))
        sens = (builder.frame(codes, names, rng, only=ctx.evaluator.variables.sensitive)
                if self.decision.takes_sensitive else None)
        return self.decision.decisions(X, sens, rng)

    def _warn_draws_capped(self, capped) -> None:
        """SamplingToleranceWarning when the draws' rows stopped at ``max_samples``."""
        if not capped:
            return
        s = self.settings
        warnings.warn(
            f"Sampling under the {s.n_draws} posterior draws of the network stopped at "
            f"max_samples={s.max_samples:,} rows per group and rate ({', '.join(capped)}) "
            "before the Monte Carlo error was small next to the posterior spread: the "
            "intervals hold both, but are wider than the posterior alone by more than "
            "tolerance. Raise max_samples, raise tolerance, or lower n_draws.",
            SamplingToleranceWarning,
            stacklevel=4,
        )

    def _label_rates(self, net, encoding, frame, weight, mask, group_codes, sens_codes, ctx,
                     keep=None):
        """Sampled rates on the network of the rows ``mask`` (NaN for absent groups)."""
        present = np.zeros(len(group_codes), dtype=bool)
        if net is not None:
            present = groups_present(group_codes, sens_codes[mask])
        builder = self.builder(encoding, frame, weight, mask) if present.any() else None
        return self._sampled_rates(net, builder, encoding, group_codes, present, ctx, keep)

    def _sampled_rates(self, network, builder, encoding, group_codes, present, ctx,
                       keep=None) -> dict:
        """Adaptive certified rate of every group in ``present`` (NaN for the others).

        With ``keep`` (a rate's name), up to :data:`KEPT_ROWS` sampled rows of every
        group and their decisions are kept in ``ctx.kept[keep]`` for the population
        estimate's replicates.
        """
        out = {k: np.full(len(group_codes), np.nan) for k in ("rate", "low", "high", "n")}
        out["converged"] = np.ones(len(group_codes), dtype=bool)
        kept = {}
        if keep is not None:
            ctx.kept[keep] = (kept, out["rate"], out["n"])
        if not present.any():
            return out
        sampler = NetworkSampler(network)
        names = encoding.names
        seeds = ctx.seeds(len(group_codes))
        for g in np.flatnonzero(present):
            rng = np.random.default_rng(seeds[g])
            fixed = {i: int(s) for i, s in zip(ctx.evaluator.variables.sens_idx,
                                               group_codes[g])}
            rows = [] if keep is not None else None

            def draw(n, fixed=fixed, rng=rng, rows=rows):
                codes = sampler.sample(n, rng, fixed)
                decided = self._decide(builder, codes, names, rng, ctx)
                if rows is not None and sum(len(c) for c, _ in rows) < KEPT_ROWS:
                    rows.append((codes, decided))
                return int(decided.sum())

            est = adaptive_rate(ctx.timed(draw), tolerance=ctx.tolerance, alpha=ctx.alpha,
                                grid=ctx.grid, batch=self.batch)
            out["rate"][g], out["low"][g], out["high"][g] = est.rate, est.low, est.high
            out["n"][g], out["converged"][g] = est.samples, est.converged
            if rows:
                kept[g] = (np.concatenate([c for c, _ in rows]),
                           np.concatenate([d for _, d in rows]))
        return out

    def _warn_unconverged(self, estimates, n_samples: int) -> None:
        """SamplingToleranceWarning when an interval is still wider than ``tolerance``."""
        widths = [np.nanmax(e["high"] - e["low"]) for e in estimates
                  if not e["converged"].all()]
        if not widths:
            return
        s = self.settings
        warnings.warn(
            f"Sampling stopped at max_samples={s.max_samples:,} rows per group and rate "
            f"({n_samples:,} rows in all) with a confidence interval of width "
            f"{max(widths):.4g}, wider than tolerance={s.tolerance}. The intervals are "
            "valid but wider than asked: raise max_samples, or raise tolerance.",
            SamplingToleranceWarning,
            stacklevel=4,
        )

    def influence(self, networks) -> list[np.ndarray]:
        """Sampled group rates under each network of ``networks`` (FIF references)."""
        group_codes = self.fitted.group_codes
        n_groups = len(group_codes)
        ctx = _SamplingContext(self.settings, n_groups * len(networks), self.sampling_rng())
        everyone = np.ones(n_groups, dtype=bool)
        seeds = ctx.seeds(len(networks))
        evaluator = Evaluator(self.settings, self.variables, None)

        def rates(net, seed):
            sub = _SamplingContext(self.settings, 1, np.random.default_rng(seed))
            sub.alpha, sub.evaluator = ctx.alpha, evaluator
            return self._sampled_rates(net, self.fit_builder, self.variables.encoding,
                                       group_codes, everyone, sub)["rate"]

        parallel = Parallel(n_jobs=self.settings.n_jobs, return_as="list")
        return parallel(delayed(rates)(n, s) for n, s in zip(networks, seeds))
