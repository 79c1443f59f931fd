"""The sampling path of the verifier: certified Monte Carlo rates for any classifier.

The network is learned as on the exact path, over every input column of the model
(numeric columns binned into quantile bins, categories as states) and the sensitive
variables, which are roots. For every compound group, rows are sampled with the
sensitive variables set to the group (:class:`._sampling.NetworkSampler`), their states
mapped back to values (:class:`._sampling.RowBuilder`) and decided by the model's own
``predict`` (:class:`._sampling.ModelDecision`), in batches, until the group's
Clopper-Pearson interval is narrower than ``tolerance`` or ``max_samples`` rows were
drawn (:func:`._sampling.adaptive_rate`). The level of each interval is set by a union
bound over every interval of the fit and every look of the sampler
(:mod:`._intervals`).
"""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_random_state

from ..s3p import BayesNet
from ._intervals import per_interval_alpha
from ._linear_path import Evaluation, groups_present
from ._metrics import disparate_impact, favored_indices, rate_gap
from ._sampling import (
    ModelDecision,
    NetworkSampler,
    RowBuilder,
    SamplingCost,
    adaptive_rate,
    batch_rows,
    look_grid,
)
from ._variables import Encoding
from ._warnings import SamplingToleranceWarning

__all__ = ["SAMPLING_BINS"]

#: Quantile bins per numeric column on the sampling path with ``n_bins="auto"``
#: (at most ``max_bins``): the bins only shape the distribution, values are drawn
#: from the data within them.
SAMPLING_BINS = 20


class _SamplingContext:
    """What every sampled rate of one fit (or verify, or influence) shares."""

    def __init__(self, verifier, n_intervals: int, rng, metered=False):
        self.grid = look_grid(verifier.max_samples)
        self.alpha = per_interval_alpha(verifier.confidence, n_intervals, len(self.grid))
        self.tolerance = verifier.tolerance
        self.rng = rng
        self.cost = None
        if metered:
            self.cost = SamplingCost(n_intervals=n_intervals, tolerance=self.tolerance,
                                     alpha=self.alpha, grid=self.grid,
                                     max_time=verifier.max_time, verbose=verifier.verbose)

    def timed(self, draw):
        """``draw``, timed by the cost meter when there is one."""
        return draw if self.cost is None else self.cost.wrap(draw)

    def seeds(self, n: int) -> list[int]:
        return [int(s) for s in self.rng.integers(2**63 - 1, size=n)]


class _SamplingPathMixin:
    """Fit, verify and influence of :class:`FairnessVerifier` by certified sampling."""

    def _sampling_bins(self) -> int:
        return min(SAMPLING_BINS, self.max_bins) if self.n_bins == "auto" else int(self.n_bins)

    def _sampling_rng(self):
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        return np.random.default_rng(seed)

    def _check_sampling_network(self) -> None:
        if isinstance(self.network, BayesNet):
            raise ValueError(
                f"The sampling path (method_='sampling', for {type(self.estimator).__name__}) "
                "learns the network of the model's input columns from X; a user BayesNet "
                "has no values for its states. Use network='learn' or 'independent', or a "
                "linear model (exact path) with the BayesNet."
            )

    def _fit_sampling(self, frame, sensitive, y_pos, weight) -> None:
        """Variables, networks and certified group rates of the model on ``frame``."""
        self._check_sampling_network()
        n_bins = self._sampling_bins()
        encoding = Encoding.from_columns(frame, sensitive, n_bins, self.random_state,
                                         sample_weight=weight)
        self.n_bins_ = n_bins
        self._set_variables(encoding, sensitive)
        self._decision = ModelDecision(self.estimator_, self.classes_[1])
        ev = self._evaluate_sampling(frame, y_pos, encoding, weight)
        self._fit_builder = self._builder(encoding, frame, weight)
        self.multiplier_ = None
        self.agreement_ = 1.0
        self._set_evaluation(ev, encoding)

    def _builder(self, encoding, frame, weight, mask=None) -> RowBuilder:
        rows = frame if mask is None else frame[mask]
        w = None if weight is None else (weight if mask is None else weight[mask])
        return RowBuilder(encoding, rows, w, list(self.feature_names_in_), self._input_labels)

    def _evaluate_sampling(self, frame, y_pos, encoding, weight) -> Evaluation:
        """Networks, sampled group rates with intervals, and metrics on ``frame``."""
        sens_codes, group_codes, support, networks, _ = self._groups_and_networks(
            frame, y_pos, encoding, weight)
        n_rates = 1 + (2 if y_pos is not None else 0) + (1 if self._mediators else 0)
        ctx = _SamplingContext(self, n_rates * len(group_codes), self._sampling_rng(),
                               metered=True)
        self._batch = batch_rows(len(encoding.variables), len(self.feature_names_in_),
                                 self.max_table_size)
        try:
            return self._sampled_evaluation(ctx, frame, y_pos, encoding, weight, sens_codes,
                                            group_codes, support, networks)
        finally:
            ctx.cost.close()

    def _sampled_evaluation(self, ctx, frame, y_pos, encoding, weight, sens_codes,
                            group_codes, support, networks) -> Evaluation:
        """Sampled group rates with intervals, and metrics (see ``_evaluate_sampling``)."""
        groups = self._group_table(encoding, group_codes)
        everyone = np.ones(len(group_codes), dtype=bool)
        builder = self._builder(encoding, frame, weight)
        est = self._sampled_rates(networks[0], builder, encoding, group_codes, everyone, ctx)
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
                                        sens_codes, ctx)
                groups[column] = sub["rate"]
                bounds[column] = (sub["low"], sub["high"])
                n_samples += int(np.nansum(sub["n"]))
                converged.append(sub)
                present = sub["rate"][~np.isnan(sub["rate"])]
                gaps.append(rate_gap(present) if present.size >= 2 else None)
            if any(g is not None for g in gaps):
                metrics["equalized_odds"] = max(g for g in gaps if g is not None)
        i_max, i_min = favored_indices(rates)
        if self._mediators:
            net = self._mediated_network(encoding, networks[0], group_codes[i_max])
            pcf = self._sampled_rates(net, builder, encoding, group_codes, everyone, ctx)
            groups["path_specific_rate"] = pcf["rate"]
            bounds["path_specific_rate"] = (pcf["low"], pcf["high"])
            metrics["path_specific_causal"] = rate_gap(pcf["rate"])
            n_samples += int(pcf["n"].sum())
            converged.append(pcf)
        self._warn_unconverged(converged, n_samples)
        return Evaluation(None, None, None, networks[0], group_codes, groups, metrics,
                          i_max, i_min, bounds=bounds, n_samples=n_samples)

    def _label_rates(self, net, encoding, frame, weight, mask, group_codes, sens_codes, ctx):
        """Sampled rates on the network of the rows ``mask`` (NaN for absent groups)."""
        present = np.zeros(len(group_codes), dtype=bool)
        if net is not None:
            present = groups_present(group_codes, sens_codes[mask])
        builder = self._builder(encoding, frame, weight, mask) if present.any() else None
        return self._sampled_rates(net, builder, encoding, group_codes, present, ctx)

    def _sampled_rates(self, network, builder, encoding, group_codes, present, ctx) -> dict:
        """Adaptive certified rate of every group in ``present`` (NaN for the others)."""
        out = {k: np.full(len(group_codes), np.nan) for k in ("rate", "low", "high", "n")}
        out["converged"] = np.ones(len(group_codes), dtype=bool)
        if not present.any():
            return out
        sampler = NetworkSampler(network)
        names = encoding.names
        seeds = ctx.seeds(len(group_codes))
        for g in np.flatnonzero(present):
            rng = np.random.default_rng(seeds[g])
            fixed = {i: int(s) for i, s in zip(self._sens_idx, group_codes[g])}

            def draw(n, fixed=fixed, rng=rng):
                codes = sampler.sample(n, rng, fixed)
                X = builder.model_input(builder.frame(codes, names, rng))
                sens = (builder.frame(codes, names, rng, only=self._sensitive)
                        if self._decision.takes_sensitive else None)
                return self._decision.positives(X, sens, rng)

            est = adaptive_rate(ctx.timed(draw), tolerance=ctx.tolerance, alpha=ctx.alpha,
                                grid=ctx.grid, batch=self._batch)
            out["rate"][g], out["low"][g], out["high"][g] = est.rate, est.low, est.high
            out["n"][g], out["converged"][g] = est.samples, est.converged
        return out

    def _warn_unconverged(self, estimates, n_samples: int) -> None:
        """SamplingToleranceWarning when an interval is still wider than ``tolerance``."""
        widths = [np.nanmax(e["high"] - e["low"]) for e in estimates
                  if not e["converged"].all()]
        if not widths:
            return
        warnings.warn(
            f"Sampling stopped at max_samples={self.max_samples:,} rows per group and rate "
            f"({n_samples:,} rows in all) with a confidence interval of width "
            f"{max(widths):.4g}, wider than tolerance={self.tolerance}. The intervals are "
            "valid but wider than asked: raise max_samples, or raise tolerance.",
            SamplingToleranceWarning,
            stacklevel=4,
        )

    def _sampled_influence(self, networks) -> list[np.ndarray]:
        """Sampled group rates under each network of ``networks`` (FIF references)."""
        n_groups = len(self._group_codes)
        ctx = _SamplingContext(self, n_groups * len(networks), self._sampling_rng())
        everyone = np.ones(n_groups, dtype=bool)
        seeds = ctx.seeds(len(networks))

        def rates(net, seed):
            sub = _SamplingContext(self, 1, np.random.default_rng(seed))
            sub.alpha = ctx.alpha
            return self._sampled_rates(net, self._fit_builder, self._encoding,
                                       self._group_codes, everyone, sub)["rate"]

        parallel = Parallel(n_jobs=self.n_jobs, return_as="list")
        return parallel(delayed(rates)(n, s) for n, s in zip(networks, seeds))
