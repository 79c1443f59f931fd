"""Population rates of a fixed classifier: empirical, bootstrap, an oracle, the verifier.

Semi-synthetic design of issue 16: two binary sensitive attributes ``a1`` (50% of
rows) and ``a2`` (8%), so four intersectional groups down to ~20 rows at n = 500;
five Gaussian features whose means depend on the group (identity covariance; the
``chain`` variant has an AR(1) correlation 0.6 between consecutive features, ``wide``
ten features, ``rare`` a2 in 2% of rows); a logistic regression fitted once on 20,000
rows of the population and then fixed (it does not read ``a1``, ``a2``). The truth is
in closed form: given the group ``g`` the decision ``w.x + b`` is normal, so the
group's positive rate is ``Phi((w.mu_g + b) / sqrt(w' Sigma w))``.

Per repetition and sample size, on one sample drawn from the population:

* empirical: the share of positive decisions in each group (fairlearn's
  ``MetricFrame`` point estimate); fairlearn's bootstrap (``n_boot``) gives the
  intervals;
* oracle: the efficient estimator of the true model family, a reference no method
  without that knowledge can beat (asymptotically): the score ``s = w.x + b`` given
  the group is normal with a mean additive in ``a1``, ``a2`` and a common variance, so
  OLS of ``s`` on ``(1, a1, a2)`` and the residual variance ``sigma^2`` give ``rate_g
  = Phi(m_g / sigma)`` (the maximum-likelihood estimate under the multivariate model
  with unknown covariance); intervals from the exact posterior of the normal linear
  model under a flat prior (``sigma^2 ~ dof s^2 / chi2_dof``, ``beta | sigma ~ N``);
* verifier: ``FairnessVerifier(FrozenEstimator(lr))`` with its defaults (hierarchical
  prior, ``n_bins="auto"``: bins up to ``min(max_bins=60, smallest group's rows)``),
  intervals from its ``n_draws`` posterior draws; ``-bdeu``: ``prior="bdeu"`` (the
  default of the releases before the hierarchical prior became the default);
  ``-nocap``: without the cap of the bins by the smallest group (the search up to 60
  bins of the releases before it: ``distribution_cap`` is replaced inside this
  script only).

Printed, in the header of every sample size, two closed forms: the expected
absolute error of the empirical rate of each group (exact binomial sums, given the
group is not empty) and the asymptotic (Cramer-Rao) expected absolute error of the
oracle, ``sqrt(2/pi) phi(eta_g) sqrt(x_g' M^-1 x_g / n + eta_g^2 / (2 n))`` with
``eta_g = m_g / sigma``, ``x_g = (1, a1, a2)`` and ``M = E[x x']``: their ratio is
the best "MAE / empirical" any regular estimator reaches on the design. Then per
method: mean absolute error of the group rates, of SP and of DI against the truth,
the ratio of the rate MAE to the empirical one measured on the same samples and to
the closed-form expected empirical MAE (``MAE / E[emp]``, less noisy), the coverage
of the 95% intervals of the group rates and of SP, the CPU time
(``time.process_time``: other processes do not count) of a plain fit (``n_draws=0``)
and of the intervals (a fit with ``n_draws`` minus the plain one; for "empirical":
fairlearn's bootstrap in "fit s"), the number of bins and the agreement of the
integer rule.

Run: ``python benchmarks/bench_population.py`` (12 repetitions, n = 500 and 2,000);
``--design chain|wide|rare`` for the variants, ``--reps``, ``--sizes``, ``--draws``,
``--boot``, ``--methods`` to change the size; ``--sweep-bins 5 10 20 30 60`` prints
instead the rate MAE and agreement of plain BDeu fits without the cap for each
``max_bins`` (same samples).

``--protocol`` (issue 23) runs instead the population estimate of the default verifier
on the designs and real datasets of ``population_designs.py`` (``--designs``, ``--real``,
``--datasets`` for the folder of the raw CSVs, ``--reps``; sizes per population in
``PROTOCOL_SIZES`` unless ``--sizes`` is given): per population and sample size, the
group-rate MAE of the population estimate (``population_rate``) and of the network's
rate (``positive_rate``) over the empirical one (``direct_rate``), the coverage of the
95% intervals of the groups' rates (the population estimate's, and the network's own
credible intervals with ``--network-draws``), of SP and DI (and EO with ``--labels``),
the MAE over the empirical one on the groups of fewer than 50 rows whose model check
passes, the share of model checks rejected at 5% and of samples with a
:class:`ModelCheckWarning` (Holm), and the CPU seconds of a fit. ``--cost`` times
plain fits (``n_draws=0``) and default fits (50 posterior draws) on Adult (or the
datasets and synthetic designs of ``--cost-data``) with the population estimate
against the same fits with ``n_bootstrap=0`` (the fit of the
releases before it). ``--cost-parts`` times the estimate's two parts on Adult's
replicates against their former implementation, on the same inputs: the replicates'
tables (one sparse product per chunk of replicates) against one ``np.bincount`` per table
and replicate, and their engine solves (the batched frontier engine) against one run per
replicate, with the largest difference of the results. ``--cost-levers`` times the
labelled plain fit of the ``--cost-data`` datasets with its replicates' solves free
(the point rates in their place: the bound of any cheaper solve) and with the draws'
rule choosing its coarser rule by the probability check alone; ``--cost-batch`` the
labelled fits with the batched engine's batches of today's entries against twice them.
``--sp-methods`` compares the coverage of the package's SP and DI intervals with
candidates on the same fits (``--sp-cache FILE`` keeps the fits' estimates; the default
verifier, no labels): the near-extreme pairs at their joint level (``--kappas``, the
near-tie rule) and, with ``--sp-alternatives``, max-T, percentile, bias-corrected,
basic, prepivoted, split-tail and Bonferroni-over-near-ties intervals; ``--sp-designs``
adds designs built to break an interval of a maximum (:data:`SP_DESIGNS`,
``--sp-design-reps`` samples each; with ``--designs --real`` empty, only those).
``--compare-pr`` checks the package's estimate against Prasad and Rao's EBLUP (moment
estimate of the bias spread, normal interval from their MSE) on the same samples and
replicates.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from contextlib import contextmanager
from functools import partial

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, selection_rate
from scipy.stats import binom, norm
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # population_designs

from skfairverify.verification import (  # noqa: E402
    FairnessVerifier,
    LowAgreementWarning,
    ModelCheckWarning,
    _parameters,
    _quantization,
)

GROUPS = [(0, 0), (0, 1), (1, 0), (1, 1)]


# ---------------------------------------------------------------- population
def population(design: str) -> dict:
    d = 10 if design == "wide" else 5
    shift1 = np.resize([0.5, -0.4, 0.3, 0.0, 0.4], d)
    shift2 = np.resize([0.8, 0.4, -0.6, 0.5, 0.3], d)
    idx = np.arange(d)
    rho = 0.6 if design == "chain" else 0.0
    cov = rho ** np.abs(idx[:, None] - idx[None, :])
    return {"d": d, "p1": 0.5, "p2": 0.02 if design == "rare" else 0.08,
            "mu": {g: g[0] * shift1 + g[1] * shift2 for g in GROUPS}, "cov": cov}


def sample(pop: dict, n: int, rng):
    a1 = (rng.random(n) < pop["p1"]).astype(int)
    a2 = (rng.random(n) < pop["p2"]).astype(int)
    chol = np.linalg.cholesky(pop["cov"])
    mu = np.array([pop["mu"][g] for g in GROUPS])[2 * a1 + a2]
    x = mu + rng.standard_normal((n, pop["d"])) @ chol.T
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(pop["d"])])
    return X, pd.DataFrame({"a1": a1, "a2": a2})


def fixed_classifier(pop: dict) -> LogisticRegression:
    rng = np.random.default_rng(12345)
    X, _ = sample(pop, 20_000, rng)
    beta = np.resize([1.0, 0.8, -0.6, 0.5, 0.3], pop["d"])
    y = rng.random(len(X)) < 1 / (1 + np.exp(-(X.to_numpy() @ beta - 0.2)))
    return LogisticRegression().fit(X, y)


def true_rates(pop: dict, lr) -> np.ndarray:
    w, b = lr.coef_.ravel(), float(lr.intercept_[0])
    sd = np.sqrt(w @ pop["cov"] @ w)
    return np.array([norm.cdf((w @ pop["mu"][g] + b) / sd) for g in GROUPS])


# ---------------------------------------------------------------- estimators
def di_sp(rates: np.ndarray) -> tuple[float, float]:
    return float(rates.min() / rates.max()), float(rates.max() - rates.min())


def empirical(X, S, lr, n_boot, seed):
    pred = lr.predict(X)
    t0 = time.process_time()
    mf = MetricFrame(metrics=selection_rate, y_true=pred, y_pred=pred,
                     sensitive_features=S, n_boot=n_boot, ci_quantiles=[0.025, 0.975],
                     random_state=seed)
    seconds = time.process_time() - t0
    rates = np.array([mf.by_group.get(g, np.nan) for g in GROUPS])
    low = np.array([mf.by_group_ci[0].get(g, np.nan) for g in GROUPS])
    high = np.array([mf.by_group_ci[1].get(g, np.nan) for g in GROUPS])
    sp_ci = [float(v) for v in mf.difference_ci()]
    return rates, (low, high, sp_ci), seconds


def _design_matrix(a) -> np.ndarray:
    return np.column_stack([np.ones(len(a)), a])


def oracle(X, S, lr, seed, n_draws):
    """OLS of the score on (1, a1, a2), pooled variance; exact posterior intervals."""
    t0 = time.process_time()
    score = lr.decision_function(X)
    D = _design_matrix(S[["a1", "a2"]].to_numpy(float))
    beta, *_ = np.linalg.lstsq(D, score, rcond=None)
    dof = len(score) - D.shape[1]
    s2 = float(np.sum((score - D @ beta) ** 2) / dof)
    G = _design_matrix(np.array(GROUPS, float))
    rates = norm.cdf(G @ beta / np.sqrt(s2))
    seconds = time.process_time() - t0
    t0 = time.process_time()
    rng = np.random.default_rng(seed)
    s2_draws = dof * s2 / rng.chisquare(dof, n_draws)
    chol = np.linalg.cholesky(np.linalg.inv(D.T @ D))
    beta_draws = beta + np.sqrt(s2_draws)[:, None] * (rng.standard_normal((n_draws, 3))
                                                      @ chol.T)
    rate_draws = norm.cdf(beta_draws @ G.T / np.sqrt(s2_draws)[:, None])
    low, high = np.quantile(rate_draws, [0.025, 0.975], axis=0)
    sp = rate_draws.max(axis=1) - rate_draws.min(axis=1)
    sp_ci = [float(v) for v in np.quantile(sp, [0.025, 0.975])]
    return rates, (low, high, sp_ci), seconds, time.process_time() - t0, None


@contextmanager
def bins_cap(cap: bool):
    """With ``cap=False`` the bins are searched up to max_bins whatever the groups."""
    original = _quantization.distribution_cap
    if not cap:
        _quantization.distribution_cap = lambda frame, sensitive, weight: (10**9, np.nan)
    try:
        yield
    finally:
        _quantization.distribution_cap = original


def verifier(X, S, lr, seed, prior, cap, n_draws):
    """The verifier's rates and intervals; CPU seconds of a plain fit and of the draws."""
    params = {"prior": prior, "random_state": seed}
    with bins_cap(cap), warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=LowAgreementWarning)
        _parameters._SEARCHED.clear()  # each fit cold (the prior remembers its search)
        t0 = time.process_time()
        FairnessVerifier(FrozenEstimator(lr), n_draws=0, **params).fit(
            X, sensitive_features=S)
        fit_seconds = time.process_time() - t0
        _parameters._SEARCHED.clear()
        t0 = time.process_time()
        ver = FairnessVerifier(FrozenEstimator(lr), n_draws=n_draws, **params).fit(
            X, sensitive_features=S)
        all_seconds = time.process_time() - t0
    table = ver.groups_.set_index(["a1", "a2"])
    rates, low, high = (np.array([table[col].get(g, np.nan) for g in GROUPS])
                        for col in ("positive_rate", "ci_low", "ci_high"))
    sp_ci = list(ver.metric_intervals_["statistical_parity"])
    return (rates, (low, high, sp_ci), fit_seconds, all_seconds - fit_seconds,
            (ver.n_bins_, ver.agreement_))


# ---------------------------------------------------------------- closed forms
def group_shares(pop: dict) -> np.ndarray:
    return np.array([(pop["p1"] if g[0] else 1 - pop["p1"])
                     * (pop["p2"] if g[1] else 1 - pop["p2"]) for g in GROUPS])


def expected_empirical_error(pop: dict, truth: np.ndarray, n: int) -> np.ndarray:
    """``E|k / n_g - p_g|`` per group, ``n_g ~ Bin(n, share)`` given ``n_g > 0``."""
    out = []
    for share, p in zip(group_shares(pop), truth):
        sizes = np.arange(1, n + 1)
        weight = binom.pmf(sizes, n, share)
        keep = weight > 1e-12 * weight.max()
        total = 0.0
        for m, wm in zip(sizes[keep], weight[keep]):
            k = np.arange(m + 1)
            total += wm * np.sum(binom.pmf(k, m, p) * np.abs(k / m - p))
        out.append(total / weight[keep].sum())
    return np.array(out)


def oracle_asymptotic_error(pop: dict, lr, n: int) -> np.ndarray:
    """Cramer-Rao: ``sqrt(2/pi) phi(eta) sqrt(x' M^-1 x / n + eta^2 / (2 n))`` per group."""
    w, b = lr.coef_.ravel(), float(lr.intercept_[0])
    eta = np.array([(w @ pop["mu"][g] + b) for g in GROUPS]) / np.sqrt(w @ pop["cov"] @ w)
    G = _design_matrix(np.array(GROUPS, float))
    M = (G * group_shares(pop)[:, None]).T @ G
    leverage = np.einsum("gi,ij,gj->g", G, np.linalg.inv(M), G)
    return np.sqrt(2 / np.pi) * norm.pdf(eta) * np.sqrt(leverage / n + eta**2 / (2 * n))


def sweep_bins(pop, lr, truth, n, args):
    """Rate MAE and agreement of plain BDeu fits (no cap) for every max_bins."""
    expected = expected_empirical_error(pop, truth, n).mean()
    rows = {}
    for r in range(args.reps):
        X, S = sample(pop, n, np.random.default_rng(1000 * n + r))
        for max_bins in args.sweep_bins:
            with bins_cap(False), warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=LowAgreementWarning)
                ver = FairnessVerifier(FrozenEstimator(lr), n_draws=0, max_bins=max_bins,
                                       random_state=r).fit(X, sensitive_features=S)
            table = ver.groups_.set_index(["a1", "a2"])["positive_rate"]
            err = np.nanmean([abs(table.get(g, np.nan) - t) for g, t in zip(GROUPS, truth)])
            rows.setdefault(max_bins, []).append((err, ver.n_bins_, ver.agreement_))
    out = pd.DataFrame({k: {"rate MAE": np.mean([v[0] for v in vals]),
                            "MAE / E[emp]": np.mean([v[0] for v in vals]) / expected,
                            "bins": np.median([v[1] for v in vals]),
                            "agreement": np.mean([v[2] for v in vals])}
                        for k, vals in rows.items()}).T
    out.index.name = "max_bins"
    return out


# ---------------------------------------------------------------- experiment
METHODS = ("empirical", "oracle", "verifier", "verifier-bdeu", "verifier-nocap",
           "verifier-bdeu-nocap")
SETTINGS = {"verifier": ("hierarchical", True), "verifier-bdeu": ("bdeu", True),
            "verifier-nocap": ("hierarchical", False), "verifier-bdeu-nocap": ("bdeu", False)}


def one_run(pop, lr, truth, n, seed, args):
    rng = np.random.default_rng(seed)
    X, S = sample(pop, n, rng)
    out = {}
    rates, ci, sec = empirical(X, S, lr, args.boot, seed)
    out["empirical"] = (rates, ci, sec, np.nan, None)
    out["oracle"] = oracle(X, S, lr, seed, 2000)
    for name, (prior, cap) in SETTINGS.items():
        if name in args.methods:
            out[name] = verifier(X, S, lr, seed, prior, cap, args.draws)
    return out


def summarise(results, truth, methods, expected_empirical):
    true_di, true_sp = di_sp(truth)
    rows = {}
    for method in methods:
        signed = np.array([res[method][0] - truth for res in results])
        err, sp_err, di_err, cov, sp_cov, fit_s, ci_s, bins = [], [], [], [], [], [], [], []
        for res in results:
            rates, (low, high, sp_ci), t_fit, t_ci, k = res[method]
            ok = ~np.isnan(rates)
            err.append(np.abs(rates[ok] - truth[ok]))
            di, sp = di_sp(rates[ok])
            sp_err.append(abs(sp - true_sp))
            di_err.append(abs(di - true_di))
            cov.append((low[ok] <= truth[ok]) & (truth[ok] <= high[ok]))
            sp_cov.append(sp_ci[0] <= true_sp <= sp_ci[1])
            fit_s.append(t_fit)
            ci_s.append(t_ci)
            bins.append(k)
        err = np.concatenate(err)
        rows[method] = {
            "rate MAE": err.mean(), "SP abs err": np.mean(sp_err),
            "DI abs err": np.mean(di_err), "cover rates": np.concatenate(cov).mean(),
            "cover SP": np.mean(sp_cov), "fit s": np.mean(fit_s), "ci s": np.mean(ci_s),
            "|bias|": float(np.nanmean(np.abs(np.nanmean(signed, axis=0)))),
            "bins": (np.median([b[0] for b in bins if b is not None])
                     if any(b is not None for b in bins) else np.nan),
            "agreement": (np.mean([b[1] for b in bins if b is not None])
                          if any(b is not None for b in bins) else np.nan),
        }
    base = rows["empirical"]["rate MAE"]
    for method in methods:
        rows[method]["MAE / empirical"] = rows[method]["rate MAE"] / base
        rows[method]["MAE / E[emp]"] = rows[method]["rate MAE"] / expected_empirical
        rows[method]["ci / fit"] = rows[method]["ci s"] / rows[method]["fit s"]
    rows["empirical"]["ci / fit"] = np.nan
    return pd.DataFrame(rows).T


# ---------------------------------------------------------------- issue 23 protocol
#: Sample sizes of every population (the real datasets: below their rows).
PROTOCOL_SIZES = {"adult": [1500, 5000], "german": [300, 800], "compas": [800, 2500],
                  "titanic": [300, 700], "communities": [500, 1500], "ricci": [118],
                  "three-attributes": [800, 3000]}


def _wilson(p, n, z=1.959964):
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def protocol_fit(pop, n, seed, args):
    """One sample: the verifier's fit, its records per group and rate, and per metric."""
    X, y = pop.sample(n, np.random.default_rng(seed))
    labels = y if args.labels and y is not None else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelCheckWarning)
        warnings.filterwarnings("ignore", category=LowAgreementWarning)
        t0 = time.process_time()
        ver = FairnessVerifier(FrozenEstimator(pop.model), pop.sensitive,
                               n_draws=args.network_draws, prior=args.prior,
                               random_state=seed).fit(X, labels)
        seconds = time.process_time() - t0
    warned = any(issubclass(w.category, ModelCheckWarning) for w in caught)
    table = ver.population_
    groups = []
    for _, r in table.iterrows():
        key = tuple(str(r[s]) for s in pop.sensitive)
        truth = pop.truth.get(r["rate"], {}).get(key, np.nan)
        row = {"rate": r["rate"], "key": key, "n": r["rows"], "truth": truth,
               "direct": r["direct"], "network": r["network"], "estimate": r["estimate"],
               "low": r["ci_low"], "high": r["ci_high"], "pvalue": r["pvalue"]}
        if r["rate"] == "positive_rate":
            g = ver.groups_[(ver.groups_[pop.sensitive].astype(str).apply(tuple, axis=1)
                             == key)].iloc[0]
            row["net_low"], row["net_high"] = g["ci_low"], g["ci_high"]
        groups.append(row)
    metrics = {}
    for name in ("statistical_parity", "disparate_impact", "equalized_odds"):
        truth = _true_metric(pop, name, ver, args)
        if name in ver.population_metric_intervals_ and truth == truth:
            lo, hi = ver.population_metric_intervals_[name]
            nlo, nhi = ver.metric_intervals_.get(name, (np.nan, np.nan))
            metrics[name] = (lo <= truth <= hi, nlo <= truth <= nhi)
    return groups, metrics, seconds, warned


def _true_metric(pop, name, ver, args) -> float:
    """The metric of the true rates of the groups the sample has (those the fit reports)."""
    keys = [tuple(str(v) for v in row) for row in
            ver.groups_[pop.sensitive].itertuples(index=False)]
    rates = {"statistical_parity": "positive_rate", "disparate_impact": "positive_rate"}
    if name == "equalized_odds":
        if not args.labels or "true_positive_rate" not in pop.truth:
            return np.nan
        gaps = []
        for rate in ("true_positive_rate", "false_positive_rate"):
            shown = ver.population_[ver.population_["rate"] == rate]
            t = np.array([pop.truth[rate].get(tuple(str(r[s]) for s in pop.sensitive), np.nan)
                          for _, r in shown.iterrows()])
            t = t[~np.isnan(t)]
            if t.size >= 2:
                gaps.append(t.max() - t.min())
        return max(gaps) if gaps else np.nan
    t = np.array([pop.truth[rates[name]].get(k, np.nan) for k in keys])
    t = t[~np.isnan(t)]
    if name == "statistical_parity":
        return float(t.max() - t.min())
    return 1.0 if t.max() <= 0 else float(t.min() / t.max())


def protocol_summary(groups, metrics, seconds, warned) -> dict:
    g = pd.DataFrame(groups)
    g = g[~g["truth"].isna()]
    pos = g[g["rate"] == "positive_rate"]
    err = lambda col, frame=pos: (frame[col] - frame["truth"]).abs().mean()  # noqa: E731
    wilson = _wilson(pos["direct"].to_numpy(), pos["n"].to_numpy())
    small = pos[(pos["n"] < 50) & (pos["pvalue"] >= 0.05)]
    out = {
        "MAE pop/emp": err("estimate") / err("direct"),
        "MAE net/emp": err("network") / err("direct"),
        "cover pop": ((pos["low"] <= pos["truth"]) & (pos["truth"] <= pos["high"])).mean(),
        "cover net": ((pos["net_low"] <= pos["truth"]) & (pos["truth"] <= pos["net_high"])).mean(),
        "cover Wilson": ((wilson[0] <= pos["truth"]) & (pos["truth"] <= wilson[1])).mean(),
        "small pop/emp": (err("estimate", small) / err("direct", small)
                          if len(small) else np.nan),
        "small groups": len(small),
        "check rejects": (pos["pvalue"] < 0.05).mean(),
        "warned": np.mean(warned), "fit s": np.mean(seconds),
    }
    labels = g[g["rate"] != "positive_rate"]
    if len(labels):
        out["MAE pop/emp TPR,FPR"] = err("estimate", labels) / err("direct", labels)
        out["cover pop TPR,FPR"] = ((labels["low"] <= labels["truth"])
                                    & (labels["truth"] <= labels["high"])).mean()
    for name, short in (("statistical_parity", "SP"), ("disparate_impact", "DI"),
                        ("equalized_odds", "EO")):
        got = [m[name] for m in metrics if name in m]
        if got:
            out[f"cover {short}"] = np.mean([c[0] for c in got])
            out[f"cover {short} net"] = np.mean([c[1] for c in got])
    return out


def protocol_samples(args):
    """``(name, population, n)`` of every design and dataset asked, at each sample size."""
    import population_designs as designs

    for name in list(args.designs) + list(args.real):
        pop = (designs.synthetic(name) if name in designs.SYNTHETIC
               else designs.real(name, args.datasets))
        if pop is None:
            print(f"{name}: not found in {args.datasets}, skipped")
            continue
        for n in args.sizes or PROTOCOL_SIZES.get(name, [500, 2000]):
            yield name, pop, n


def protocol(args):
    rows = {}
    for name, pop, n in protocol_samples(args):
        groups, metrics, seconds, warned = [], [], [], []
        for r in range(args.reps):
            with _lever(args.lever):
                gr, me, se, wa = protocol_fit(pop, n, 1000 * n + args.first_seed + r, args)
            groups += gr
            metrics.append(me)
            seconds.append(se)
            warned.append(wa)
        rows[(name, n)] = protocol_summary(groups, metrics, seconds, warned)
        print(name, n, {k: round(float(v), 3) for k, v in rows[(name, n)].items()},
              flush=True)
    table = pd.DataFrame(rows).T
    table.index.names = ["population", "n"]
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))


def prasad_rao(network, direct, n_eff, boot_network, boot_direct, level=0.95):
    """EBLUP with Prasad and Rao's moment estimate of sigma^2 and their MSE (g1+g2+2 g3).

    The same model and bootstrap moments as the package's estimate, but the spread of the
    biases estimated by moments (not integrated) and a normal interval around the EBLUP
    (Rao and Molina 2015, sections 6.2.1 and 6.2.3): the check of the package's intervals
    against the classical ones that issue 23 asks for.
    """
    from skfairverify.verification import _population as P

    mom = P.replicate_moments(network, direct, n_eff, boot_network, boot_direct)
    fit = n_eff >= P.MIN_NETWORK_ROWS
    rate = direct.copy()
    low, high = P.jeffreys_interval(direct, n_eff, level)
    if fit.sum() < 3:
        return rate, low, high
    d, V = (network - direct)[fit], mom.diff_variance[fit]
    m = len(d)
    s2 = max(0.0, (np.sum((d - d.mean()) ** 2) - np.sum(V * (1 - 1 / m))) / (m - 1))
    sub = P.Moments(mom.tau[fit], mom.psi[fit], mom.cov[fit], mom.floor[fit])

    def estimate(s):
        w = 1 / (s + V)
        mu = (w * d).sum() / w.sum()
        e, err = P.combine_given_sigma(network[fit] - mu, direct[fit], sub, s)
        g = np.clip((sub.tau + s - sub.cov) / (s + sub.diff_variance), 0, 1)
        return e, err + (1 - g) ** 2 / w.sum()

    e, mse = estimate(s2)
    h = max(1e-6, 0.01 * s2)
    slope = (estimate(s2 + h)[0] - e) / h
    mse = mse + slope ** 2 * 2 * np.sum((s2 + V) ** 2) / m ** 2  # g3
    z = norm.ppf((1 + level) / 2)
    rate[fit] = np.clip(e, 0, 1)
    low[fit] = np.clip(e - z * np.sqrt(mse), 0, 1)
    high[fit] = np.clip(e + z * np.sqrt(mse), 0, 1)
    return rate, low, high


def plain_fit(pop, n, seed):
    """The default verifier (``n_draws=0``, no labels) on sample ``seed`` of ``n`` rows."""
    X, _ = pop.sample(n, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # model checks: not measured here
        return FairnessVerifier(FrozenEstimator(pop.model), pop.sensitive, n_draws=0,
                                random_state=seed).fit(X)


def true_positive_rates(pop, frame) -> np.ndarray:
    """The population's positive rate of the group of every row of ``frame`` (NaN: none)."""
    keys = [tuple(str(v) for v in row) for row in frame[pop.sensitive].itertuples(index=False)]
    return np.array([pop.truth["positive_rate"].get(k, np.nan) for k in keys])


def compare_prasad_rao(args):
    """The package's estimate against Prasad-Rao's on the same samples and replicates."""

    from skfairverify.verification import _population

    original = _population.population_estimates
    seen = []

    def both(network, direct, n_eff, boot_network, boot_direct, **kw):
        out = original(network, direct, n_eff, boot_network, boot_direct, **kw)
        seen.append((out, prasad_rao(network, direct, n_eff, boot_network, boot_direct)))
        return out

    _population.population_estimates = both  # benchmark-only: record both estimates
    rows = {}
    try:
        for name, pop, n in protocol_samples(args):
            acc = {k: [] for k in ("hb", "pr", "direct", "hb_cov", "pr_cov")}
            for r in range(args.reps):
                seed = 1000 * n + args.first_seed + r
                seen.clear()
                ver = plain_fit(pop, n, seed)
                truth = true_positive_rates(pop, ver.groups_)
                hb, (rate, low, high) = seen[0]
                ok = ~np.isnan(truth)
                acc["direct"] += list(np.abs(hb.direct - truth)[ok])
                acc["hb"] += list(np.abs(hb.rate - truth)[ok])
                acc["pr"] += list(np.abs(rate - truth)[ok])
                acc["hb_cov"] += list(((hb.low <= truth) & (truth <= hb.high))[ok])
                acc["pr_cov"] += list(((low <= truth) & (truth <= high))[ok])
            rows[(name, n)] = {
                "MAE/emp package": np.mean(acc["hb"]) / np.mean(acc["direct"]),
                "MAE/emp Prasad-Rao": np.mean(acc["pr"]) / np.mean(acc["direct"]),
                "cover package": np.mean(acc["hb_cov"]),
                "cover Prasad-Rao": np.mean(acc["pr_cov"])}
            print(name, n, {k: round(float(v), 3) for k, v in rows[(name, n)].items()},
                  flush=True)
    finally:
        _population.population_estimates = original
    print(pd.DataFrame(rows).T.to_string(float_format=lambda v: f"{v:.3f}"))


#: Rows of a synthetic design's sample in ``--cost`` (labels drawn from the model).
COST_SYNTHETIC_ROWS = 20_000


def cost_population(name: str, folder: str):
    """``(X, y, model, sensitive)`` of ``--cost``: a real dataset, or a synthetic sample.

    A synthetic design has no labels: ``y`` is drawn from the model's probability of
    the positive class (a label of the same rows for the equalized-odds fits).
    """
    import population_designs as designs

    if name in designs.REAL:
        pop = designs.real(name, folder)
        return pop.X, pop.y, pop.model, pop.sensitive
    pop = designs.synthetic(name)
    rng = np.random.default_rng(2026)
    X, _ = pop.sample(COST_SYNTHETIC_ROWS, rng)
    y = (rng.random(len(X)) < pop.model.predict_proba(X)[:, 1]).astype(int)
    return X, y, pop.model, pop.sensitive


def cost_rows(X, y, model, sensitive, reps: int) -> dict:
    """Median CPU seconds of ``reps`` fits with and without the estimate, per setting.

    The two fits of a repetition run one after the other (same seed, interleaved),
    after a first round that warms the caches.
    """
    rows = {}
    for draws in (0, 50):
        for labels in (False, True):
            times = {"with population estimate": [], "n_bootstrap=0": []}
            for rep in range(reps + 1):
                for label, boot in (("with population estimate", 30), ("n_bootstrap=0", 0)):
                    t0 = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ModelCheckWarning)
                        warnings.simplefilter("ignore", LowAgreementWarning)
                        FairnessVerifier(FrozenEstimator(model), sensitive,
                                         n_draws=draws, n_bootstrap=boot,
                                         random_state=rep).fit(X, y if labels else None)
                    if rep:  # the first round warms the caches
                        times[label].append(time.process_time() - t0)
            medians = {k: float(np.median(v)) for k, v in times.items()}
            rows[(f"n_draws={draws}", "with y (EO)" if labels else "no labels")] = {
                **medians, "ratio": medians["with population estimate"]
                / medians["n_bootstrap=0"]}
    return rows


def cost(args):
    """CPU seconds of fits with the population estimate and without it, per dataset.

    Plain fits (``n_draws=0``) and default fits (``n_draws=50`` posterior draws), each
    with and without labels; "without" is ``n_bootstrap=0`` (the fit of the releases
    before the estimate; ``prior="bdeu"`` in both). ``--cost-data`` names the
    datasets (Adult by default; a synthetic design is a sample of
    :data:`COST_SYNTHETIC_ROWS` rows).
    """
    for name in args.cost_data:
        X, y, model, sensitive = cost_population(name, args.datasets)
        rows = cost_rows(X, y, model, sensitive, args.reps)
        print(f"{name}, {len(X):,} rows, {' x '.join(sensitive)}, median CPU seconds of "
              f"{args.reps} fits")
        print(pd.DataFrame(rows).T.to_string(float_format=lambda v: f"{v:.3f}"), flush=True)


def _free_replicate_solver(evaluator, plan_of, n_rows):
    """A replicate solver that costs nothing: every replicate gets the point rates."""
    def solve(sub, tables):
        return np.tile(sub.rates, (len(tables[0]), 1)), None

    return solve


def _no_row_check(rule, multiplier, rows):
    """The draws' rule's row check passed by every rule (the probability check only)."""
    return np.zeros(rows[2])


@contextmanager
def _lever(name):
    """Patch the fit for one of :func:`cost_levers`' variants (``"today"``: none)."""
    from skfairverify.verification import _draw_rule, _evaluation

    patches = {"replicate solves free": (_evaluation.Evaluator, "replicate_solver",
                                         _free_replicate_solver),
               "draws' rule without its row check": (_draw_rule.DrawRule, "_row_share",
                                                      _no_row_check)}
    if name not in patches:
        yield
        return
    owner, attr, value = patches[name]
    original = getattr(owner, attr)
    setattr(owner, attr, value)
    try:
        yield
    finally:
        setattr(owner, attr, original)


def cost_levers(args):
    """What the labelled plain fit would cost without its replicate solves' parts.

    Median CPU seconds of ``--reps`` plain fits (``n_draws=0``, with labels) per
    dataset of ``--cost-data``: today's, the same fits with the replicates' engine
    solves replaced by the point rates (the bound of any cheaper solve, e.g. a
    linearisation: the estimate's numbers are then wrong), and with the draws'
    rule choosing its coarser rule by the probability check alone (the rule the
    replicates are solved on; the numbers move), against ``n_bootstrap=0``; with the
    largest difference of ``population_`` from today's. Interleaved, one seed per
    repetition.
    """
    variants = ("today", "replicate solves free", "draws' rule without its row check")
    for name in args.cost_data:
        X, y, model, sensitive = cost_population(name, args.datasets)
        times = {v: [] for v in (*variants, "n_bootstrap=0")}
        moved = {v: 0.0 for v in variants}
        for rep in range(args.reps + 1):
            tables = {}
            for variant in (*variants, "n_bootstrap=0"):
                boot = 0 if variant == "n_bootstrap=0" else 30
                with _lever(variant), warnings.catch_warnings():
                    warnings.simplefilter("ignore", ModelCheckWarning)
                    warnings.simplefilter("ignore", LowAgreementWarning)
                    t0 = time.process_time()
                    ver = FairnessVerifier(FrozenEstimator(model), sensitive, n_draws=0,
                                           n_bootstrap=boot, random_state=rep).fit(X, y)
                    seconds = time.process_time() - t0
                if rep:  # the first round warms the caches
                    times[variant].append(seconds)
                if boot:
                    tables[variant] = ver.population_[["estimate", "ci_low", "ci_high",
                                                       "pvalue"]].to_numpy(float)
            for variant in variants:
                moved[variant] = max(moved[variant], float(np.nanmax(np.abs(
                    tables[variant] - tables["today"]))))
        base = float(np.median(times["n_bootstrap=0"]))
        frame = pd.DataFrame({v: {"median CPU s": float(np.median(t)),
                                  "ratio": float(np.median(t)) / base,
                                  "largest change of population_": moved.get(v, np.nan)}
                              for v, t in times.items()}).T
        print(f"{name}, {len(X):,} rows, plain fits with labels, {args.reps} seeds")
        print(frame.to_string(float_format=lambda v: f"{v:.3g}"), flush=True)


def cost_batch(args):
    """Labelled fits with the batched engine's batches of today's and of twice the entries.

    Median CPU seconds of ``--reps`` fits (``n_draws=0`` and ``50``, with labels) per
    dataset of ``--cost-data`` with ``BATCH_ENTRIES`` at today's value and at twice it
    (the former), interleaved, with the largest difference of ``population_`` and of
    ``groups_``'s rates.
    """
    from skfairverify.s3p import _batched

    today = _batched.BATCH_ENTRIES
    for name in args.cost_data:
        X, y, model, sensitive = cost_population(name, args.datasets)
        rows = {}
        for draws in (0, 50):
            times = {today: [], 2 * today: []}
            moved = 0.0
            for rep in range(args.reps + 1):
                out = {}
                for entries in times:
                    _batched.BATCH_ENTRIES = entries
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            t0 = time.process_time()
                            ver = FairnessVerifier(FrozenEstimator(model), sensitive,
                                                   n_draws=draws,
                                                   random_state=rep).fit(X, y)
                            seconds = time.process_time() - t0
                    finally:
                        _batched.BATCH_ENTRIES = today
                    if rep:
                        times[entries].append(seconds)
                    out[entries] = np.concatenate([
                        ver.population_[["estimate", "ci_low", "ci_high"]].to_numpy(
                            float).ravel(),
                        ver.groups_.select_dtypes("number").to_numpy(float).ravel()])
                moved = max(moved, float(np.nanmax(np.abs(out[today] - out[2 * today]))))
            ours, former = (float(np.median(times[e])) for e in (today, 2 * today))
            rows[f"n_draws={draws}, with y"] = {
                f"BATCH_ENTRIES={today:,}": ours, f"former {2 * today:,}": former,
                "ratio": ours / former, "largest difference": moved}
        print(f"{name}, {len(X):,} rows, median CPU seconds of {args.reps} fits")
        print(pd.DataFrame(rows).T.to_string(float_format=lambda v: f"{v:.3g}"), flush=True)


def bincount_replicate_tables(network, codes, decisions, group_of_row, n_groups, *,
                              n_boot, random_state, equivalent_sample_size, weight=None,
                              square=None, scale_tables=None, max_table_size=None):
    """The replicates' tables as before the sparse product: one bincount per table, replicate."""
    import math

    from skfairverify.verification._population import _family_index

    n_rows = len(codes)
    total = np.ones(n_rows) if weight is None else np.asarray(weight, float)
    squares = total * total if square is None else np.asarray(square, float)
    positive = total > 0
    gamma_shape = np.where(positive, total ** 2 / np.where(squares > 0, squares, 1.0), 1.0)
    gamma_scale = np.where(positive, squares / np.where(positive, total, 1.0), 0.0)
    single = np.isclose(gamma_shape, 1.0)
    families = [_family_index(codes, network.cardinalities, i, p)
                for i, p in enumerate(network.parents)]
    tables = [np.empty((n_boot,) + shape) for _, shape in families]
    direct = np.empty((n_boot, n_groups))
    dec = np.asarray(decisions, dtype=float)
    keep = group_of_row >= 0
    for b in range(n_boot):
        w = np.empty(n_rows)
        w[single] = random_state.standard_exponential(int(single.sum()))
        w[~single] = random_state.standard_gamma(gamma_shape[~single])
        w *= gamma_scale
        for i, (flat, shape) in enumerate(families):
            size = math.prod(shape)
            table = np.bincount(flat, weights=w, minlength=size).reshape(shape)
            table += equivalent_sample_size / size
            if scale_tables is not None:
                table *= scale_tables[i]
            tables[i][b] = table / table.sum(axis=-1, keepdims=True)
        mass = np.bincount(group_of_row[keep], weights=w[keep], minlength=n_groups)
        pos = np.bincount(group_of_row[keep], weights=(w * dec)[keep], minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            direct[b] = np.where(mass > 0, pos / np.where(mass > 0, mass, 1.0), np.nan)
    return tables, direct


def _cpu(fn, reps):
    """``(result, min, median)`` CPU seconds of ``reps`` calls of ``fn``."""
    times = []
    for _ in range(reps):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return out, min(times), float(np.median(times))


def _capture_replicates(pop, seeds):
    """The inputs of the replicates' tables and engine solves of fits with labels."""
    from skfairverify.verification import _population, _posterior

    tables_in, solves_in = [], []
    original_tables, original_chunks = _population.replicate_tables, _posterior._chunk_rates

    def record_tables(*a, **kw):
        tables_in.append((a, dict(kw, random_state=kw["random_state"].bit_generator.state)))
        return original_tables(*a, **kw)

    def record_chunks(planned, cpts, index, budget):
        solves_in.append((planned, [c.copy() for c in cpts], index, budget))
        return original_chunks(planned, cpts, index, budget)

    _population.replicate_tables, _posterior._chunk_rates = record_tables, record_chunks
    try:
        for seed in seeds:  # n_draws=0: every engine solve is a replicate's
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ModelCheckWarning)
                FairnessVerifier(FrozenEstimator(pop.model), pop.sensitive, n_draws=0,
                                 random_state=seed).fit(pop.X, pop.y)
    finally:
        _population.replicate_tables = original_tables
        _posterior._chunk_rates = original_chunks
    return tables_in, solves_in


def _seeded(fn, a, kw):
    rng = np.random.default_rng()
    rng.bit_generator.state = kw["random_state"]
    return fn(*a, **dict(kw, random_state=rng))


def _time_tables(tables_in, reps) -> dict:
    from skfairverify.verification import _population

    rows = {}
    for k, (a, kw) in enumerate(tables_in):
        ours, o_min, o_med = _cpu(partial(_seeded, _population.replicate_tables, a, kw), reps)
        former, f_min, f_med = _cpu(partial(_seeded, bincount_replicate_tables, a, kw), reps)
        same = (all(np.array_equal(x, y) for x, y in zip(ours[0], former[0]))
                and np.array_equal(ours[1], former[1], equal_nan=True))
        rows[("tables", k, f"{len(a[1]):,} rows")] = {
            "ours min": o_min, "ours median": o_med, "former min": f_min,
            "former median": f_med, "ratio (medians)": o_med / f_med,
            "max difference": 0.0 if same else np.nan}
    return rows


def _time_solves(solves_in, reps) -> dict:
    from skfairverify.s3p import _batched
    from skfairverify.verification import _posterior

    rows = {}
    for k, (planned, cpts, index, budget) in enumerate(solves_in):
        out = {}
        for flag in (True, False):
            _batched._FRONTIER_BATCHED = flag
            try:
                out[flag] = _cpu(partial(_posterior._chunk_rates, planned, cpts, index,
                                         budget), reps)
            finally:
                _batched._FRONTIER_BATCHED = True
        rows[("solves", k, f"{len(cpts[0])} x peak {planned.peak_entries:,}")] = {
            "ours min": out[True][1], "ours median": out[True][2],
            "former min": out[False][1], "former median": out[False][2],
            "ratio (medians)": out[True][2] / out[False][2],
            "max difference": float(np.nanmax(np.abs(out[True][0] - out[False][0])))}
    return rows


def cost_parts(args):
    """The estimate's tables and solves on Adult's replicates, ours against the former."""
    import population_designs as designs

    pop = designs.real("adult", args.datasets)
    seeds = list(range(1, min(args.reps, 4) + 1))
    tables_in, solves_in = _capture_replicates(pop, seeds)
    reps = max(3, args.reps)
    frame = pd.DataFrame({**_time_tables(tables_in, reps),
                          **_time_solves(solves_in, reps)}).T
    print(f"Adult, {len(pop.X):,} rows, sex x race, with labels (seeds {seeds}): CPU "
          f"seconds of the population estimate's parts, {reps} repetitions; former = one "
          "np.bincount per table and replicate / one engine run per replicate (the "
          "plans of one draw per batch are the same runs in both)")
    print(frame.to_string(float_format=lambda v: f"{v:.4g}"))
    parts = frame.groupby(level=0)[["ours median", "former median"]].sum()
    parts["ratio"] = parts["ours median"] / parts["former median"]
    print(parts.to_string(float_format=lambda v: f"{v:.4g}"))


# ------------------------------------------------ intervals of SP: alternatives (issue 23)
def _pair_differences(draws):
    m = draws.shape[1]
    pairs = ~np.eye(m, dtype=bool)
    return (draws[:, :, None] - draws[:, None, :])[:, pairs]


def sp_max_t(draws, level=0.95):
    """Lower bound simultaneous over the candidate pairs (max-T, not Bonferroni)."""
    tail = (1 - level) / 2
    diffs = _pair_differences(draws)
    low0, high0 = np.quantile(diffs, [tail, 1 - tail], axis=0)
    cand = diffs[:, high0 >= low0.max()]
    centre, sd = cand.mean(axis=0), np.maximum(cand.std(axis=0), 1e-12)
    c = np.quantile(((cand - centre) / sd).max(axis=1), 1 - tail)
    return max(0.0, float((centre - c * sd).max())), max(0.0, float(high0.max()))


def sp_percentile(draws, level=0.95, point=None):
    """Percentile interval of the draws' ``max - min``."""
    tail = (1 - level) / 2
    gaps = draws.max(axis=1) - draws.min(axis=1)
    return tuple(float(q) for q in np.quantile(gaps, [tail, 1 - tail]))


def sp_bias_corrected(draws, level=0.95, point=None):
    """Efron's bias-corrected percentile interval of ``max - min`` (median bias at ``point``)."""
    from scipy import stats

    tail = (1 - level) / 2
    gaps = draws.max(axis=1) - draws.min(axis=1)
    z0 = stats.norm.ppf(np.clip((gaps < point).mean(), 1e-3, 1 - 1e-3))
    return tuple(float(q) for q in np.quantile(
        gaps, stats.norm.cdf(2 * z0 + stats.norm.ppf([tail, 1 - tail]))))


def sp_basic(draws, level=0.95, point=None):
    """Basic (pivotal) interval of ``max - min``: the percentile one reflected at ``point``."""
    lo, hi = sp_percentile(draws, level)
    return max(0.0, 2 * point - hi), max(0.0, 2 * point - lo)


def sp_records(args) -> list:
    """Per fit of ``protocol_samples``: the groups' estimates, effective rows and truth.

    With ``--sp-cache FILE``, read from ``FILE`` when it exists (the same designs and
    repetitions), written to it otherwise: the intervals compared are functions of
    these alone.
    """
    import pickle

    if args.sp_cache and os.path.exists(args.sp_cache):
        with open(args.sp_cache, "rb") as f:
            return pickle.load(f)
    records = []
    for name, pop, n in protocol_samples(args):
        for r in range(args.reps):
            seed = 1000 * n + args.first_seed + r
            tab = plain_fit(pop, n, seed).population_
            tab = tab[tab["rate"] == "positive_rate"]
            truth = true_positive_rates(pop, tab)
            ok = ~np.isnan(truth) & ~tab["estimate"].isna().to_numpy()
            records.append({"population": name, "n": n, "rep": r,
                            "estimate": tab["estimate"].to_numpy()[ok],
                            "effective_rows": tab["effective_rows"].to_numpy()[ok],
                            "rows": tab["rows"].to_numpy()[ok], "truth": truth[ok]})
        print(name, n, "fitted", flush=True)
    if args.sp_cache:
        with open(args.sp_cache, "wb") as f:
            pickle.dump(records, f)
    return records


#: Designs built to break an SP interval (``--sp-designs``): group rows and true rates;
#: a sample's estimate of a group is its share of positive rows (binomial), with the
#: Jeffreys interval of its rows (the package's small-group interval).
SP_DESIGNS = {
    "tie, 4 x 200": ([200] * 4, [0.3] * 4),
    "tie, 12 x 30": ([30] * 12, [0.4] * 12),
    "near-ties, 10 x 150": ([150] * 10, 0.30 + 0.01 * np.arange(10)),
    "tiny top (8 rows)": ([400] * 5 + [8], [0.30, 0.32, 0.35, 0.37, 0.40, 0.70]),
    "tiny middle (8 rows)": ([400] * 5 + [8], [0.30, 0.32, 0.35, 0.37, 0.40, 0.36]),
    "tiny hidden top (8 rows)": ([400] * 5 + [8], [0.30, 0.32, 0.35, 0.37, 0.40, 0.48]),
    "16 groups, 10-600 rows": (np.geomspace(10, 600, 16).round().astype(int),
                               np.resize([0.2, 0.45, 0.3, 0.5, 0.25, 0.4, 0.35, 0.28], 16)),
    "skewed rates": ([300, 150, 60, 25], [0.01, 0.03, 0.9, 0.97]),
    "all zero": ([100, 50, 20], [0.0, 0.0, 0.0]),
    "two, separated": ([300, 300], [0.3, 0.5]),
    "two, tied": ([300, 300], [0.4, 0.4]),
    "two, small gap": ([300, 60], [0.4, 0.45]),
}


def sp_design_records(reps: int) -> list:
    """Samples of :data:`SP_DESIGNS` as :func:`sp_records`' records (direct rates)."""
    rng = np.random.default_rng(23)
    records = []
    for name, (rows, rates) in SP_DESIGNS.items():
        rows, rates = np.asarray(rows, float), np.asarray(rates, float)
        for r in range(reps):
            p = rng.binomial(rows.astype(int), rates) / rows
            records.append({"population": name, "n": int(rows.sum()), "rep": r,
                            "estimate": p, "effective_rows": rows, "rows": rows,
                            "truth": rates})
    return records


SP_LEVEL_GRID = np.array([0.001, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025,
                          0.03, 0.035, 0.04, 0.05, 0.06, 0.07, 0.08, 0.1, 0.125, 0.15])


def sp_prepivot(draws, p, level=0.95, n_worlds=400, shrink=True):
    """Pairs' bounds at tail levels calibrated at a shrunk truth (Beran's prepivoting).

    ``low(l) = max_ij (p_i - p_j + q_ij(l))`` and ``high(l) = max_ij (p_i - p_j +
    q_ij(1 - l))`` with ``q_ij`` the quantiles of the draws' deviations' differences;
    each end's ``l`` is the largest of :data:`SP_LEVEL_GRID` whose miss rate is at most
    ``(1 - level) / 2`` over ``n_worlds`` samples drawn (the draws' deviations) around
    the estimates shrunk towards their mean (James-Stein, moment estimate of their
    spread; ``shrink=False``: around the estimates themselves): no Bonferroni, no moment
    selection; valid only as far as that configuration is the truth's.
    """
    tail = (1 - level) / 2
    dev = draws - p
    s2 = dev.var(axis=0)
    tau2 = max(0.0, p.var(ddof=1) - s2.mean()) if p.size > 1 else 0.0
    w = tau2 / (tau2 + s2) if tau2 > 0 else np.zeros_like(p)
    w = w if shrink else np.ones_like(p)
    centre = np.average(p, weights=1 / np.maximum(s2, 1e-12))
    truth = centre + w * (p - centre)
    m = p.size
    i, j = np.nonzero(~np.eye(m, dtype=bool))
    q = np.quantile(dev[:, i] - dev[:, j], np.concatenate([SP_LEVEL_GRID, 1 - SP_LEVEL_GRID]),
                    axis=0)
    g = len(SP_LEVEL_GRID)
    worlds = truth + dev[:n_worlds]
    diffs = (worlds[:, i] - worlds[:, j])[:, None, :]
    true_sp = truth.max() - truth.min()
    low_miss = ((diffs + q[None, :g]).max(axis=2) > true_sp).mean(axis=0)
    high_miss = ((diffs + q[None, g:]).max(axis=2) < true_sp).mean(axis=0)
    gl = max(0, np.nonzero(low_miss <= tail)[0].max(initial=0))
    gh = max(0, np.nonzero(high_miss <= tail)[0].max(initial=0))
    point = p[i] - p[j]
    return (max(0.0, float((point + q[gl]).max())),
            max(0.0, float((point + q[g + gh]).max())))


def near_extremes(rates, se, kappa: float):
    """The groups within ``kappa`` standard errors (of the difference) of the largest
    rate, and of the smallest (moment selection, Andrews and Soares 2010)."""
    top, bottom = rates.max(), rates.min()
    near_top = top - rates <= kappa * np.hypot(se, se[rates.argmax()])
    near_bottom = rates - bottom <= kappa * np.hypot(se, se[rates.argmin()])
    return near_top, near_bottom


def simultaneous_lower(values, tail: float) -> float:
    """The largest of the columns' lower quantiles at the level that holds them together.

    The level ``t`` is such that over the draws some column falls below its own
    ``t``-quantile with probability ``tail`` (the ranks of the draws in their columns:
    a max-T over quantiles, keeping each column's skewness); one column: ``tail``.
    """
    n = values.shape[0]
    if values.shape[1] == 1:
        return float(np.quantile(values[:, 0], tail))
    ranks = values.argsort(axis=0).argsort(axis=0)
    level = np.quantile((ranks.min(axis=1) + 0.5) / n, tail)
    return float(np.quantile(values, level, axis=0).max())


def _candidate_pairs(draws, rates, kappa):
    top, bottom = near_extremes(rates, draws.std(axis=0), kappa)
    return np.nonzero(top[:, None] & bottom[None, :] & ~np.eye(rates.size, dtype=bool))


def _pair_values(draws, ratio=False, i=None, j=None):
    if i is None:
        i, j = np.nonzero(~np.eye(draws.shape[1], dtype=bool))
    num, den = draws[:, i], draws[:, j]
    if not ratio:
        return num - den
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0),
                        np.where(num > 0, np.inf, 1.0))


def joint_ties_gap(draws, p, level=0.95, kappa=2.0):
    """SP: the near-extreme pairs' lower quantiles at their joint level; the upper bound
    the largest pair's upper quantile (as the package's)."""
    tail = (1 - level) / 2
    low = simultaneous_lower(_pair_values(draws, False, *_candidate_pairs(draws, p, kappa)),
                             tail)
    high = np.quantile(_pair_values(draws), 1 - tail, axis=0).max()
    return max(0.0, low), max(0.0, float(high))


def joint_ties_ratio(draws, p, level=0.95, kappa=2.0):
    """DI: the mirror of :func:`joint_ties_gap` (the upper bound from the near-extreme
    pairs' ratios at their joint level, the lower the smallest pair's lower quantile)."""
    tail = (1 - level) / 2
    top, bottom = _candidate_pairs(draws, p, kappa)
    high = -simultaneous_lower(-_pair_values(draws, True, bottom, top), tail)
    low = np.quantile(_pair_values(draws, True), tail, axis=0).min()
    return float(np.clip(low, 0.0, 1.0)), float(np.clip(high, 0.0, 1.0))


def sp_split(draws, p, level=0.95, kappa=2.0, n_worlds=400):
    """:func:`joint_ties_gap` with the lower tail ``1 - level`` minus the upper end's miss rate.

    The upper end (largest pair's upper quantile) misses less than ``(1 - level) / 2``
    with many groups; its miss rate is estimated over ``n_worlds`` samples drawn (the
    draws' deviations) around the estimates, and the lower bound gets the rest.
    """
    tail = (1 - level) / 2
    dev = draws - p
    pairs = _pair_values(draws, False)
    upper_q = np.quantile(pairs, 1 - tail, axis=0) - _pair_values(p[None, :], False)[0]
    worlds = _pair_values(p + dev[:n_worlds], False)
    missed = ((worlds + upper_q).max(axis=1) < p.max() - p.min()).mean()
    lower_tail = float(np.clip(2 * tail - missed, tail, 2 * tail))
    low = simultaneous_lower(_pair_values(draws, False, *_candidate_pairs(draws, p, kappa)),
                             lower_tail)
    return max(0.0, low), max(0.0, float((upper_q + _pair_values(p[None, :], False)[0]).max()))


def sp_bonferroni_ties(draws, p, level=0.95, kappa=2.0):
    """:func:`joint_ties_gap`'s near-extreme pairs, Bonferroni over them (not their joint level)."""
    tail = (1 - level) / 2
    near = _pair_values(draws, False, *_candidate_pairs(draws, p, kappa))
    low = np.quantile(near, tail / near.shape[1], axis=0).max()
    high = np.quantile(_pair_values(draws, False), 1 - tail, axis=0).max()
    return max(0.0, float(low)), max(0.0, float(high))


def sp_candidates(kappas, alternatives: bool) -> dict:
    """Method name -> ``(draws, estimates) -> {"SP": (low, high), "DI": (low, high)}``."""
    from skfairverify.verification._population import gap_bounds, ratio_bounds

    out = {"package": lambda d, p: {"SP": gap_bounds(d, 0.95), "DI": ratio_bounds(d, 0.95)}}
    if alternatives:
        out.update({"max-T": lambda d, p: {"SP": sp_max_t(d)},
                    "percentile": lambda d, p: {"SP": sp_percentile(d)},
                    "bias-corrected": lambda d, p: {
                        "SP": sp_bias_corrected(d, point=p.max() - p.min())},
                    "basic": lambda d, p: {"SP": sp_basic(d, point=p.max() - p.min())}})
        out.update({"prepivot": lambda d, p: {"SP": sp_prepivot(d, p)},
                    "split k=2": lambda d, p: {"SP": sp_split(d, p)},
                    "Bonferroni k=2": lambda d, p: {"SP": sp_bonferroni_ties(d, p)}})
    for k in kappas:
        out[f"joint ties k={k:g}"] = partial(
            lambda d, p, k: {"SP": joint_ties_gap(d, p, kappa=k),
                             "DI": joint_ties_ratio(d, p, kappa=k)}, k=k)
    return out


def sp_methods(args):
    """Coverage of the package's SP and DI intervals and of alternatives, on the same fits.

    Every method works on draws of the groups' rates from the public ``population_``
    table (``estimate`` and ``effective_rows``: the Beta distribution of each group's
    interval, as the package's own draws); ``--sp-designs`` adds (or, with
    ``--designs`` and ``--real`` empty, runs only) the designs of :data:`SP_DESIGNS`.
    """
    records = sp_records(args) if (args.designs or args.real) else []
    if args.sp_designs:
        records += sp_design_records(args.sp_design_reps)
    methods = sp_candidates(args.kappas, args.sp_alternatives)
    rng = np.random.default_rng(0)
    hits = {}
    for rec in records:
        p, e, truth = rec["estimate"], rec["effective_rows"], rec["truth"]
        if p.size < 2:
            continue
        draws = rng.beta(e * p + 0.5, e * (1 - p) + 0.5, size=(4000, p.size))
        true = {"SP": truth.max() - truth.min(),
                "DI": 1.0 if truth.max() <= 0 else truth.min() / truth.max()}
        for k, f in methods.items():
            for metric, (lo, hi) in f(draws, p).items():
                key = (rec["population"], rec["n"], metric, k)
                hits.setdefault(key, []).append(
                    (true[metric] < lo - 1e-12, true[metric] > hi + 1e-12, hi - lo))
    rows = {}
    for (pop, n, metric, k), v in hits.items():
        v = np.array(v, dtype=float)
        row = rows.setdefault((metric, pop, n), {})
        row[k] = 1 - (v[:, 0] + v[:, 1] > 0).mean()
        row[f"{k} misses"] = f"{int(v[:, 0].sum())}/{int(v[:, 1].sum())}"
        row[f"{k} width"] = v[:, 2].mean()
        row["samples"] = len(v)
    table = pd.DataFrame(rows).T
    table.index.names = ["metric", "population", "n"]
    pd.set_option("display.width", 400)
    pd.set_option("display.max_columns", 100)
    for metric in ("SP", "DI"):
        sub = table.loc[metric].dropna(axis=1, how="all")
        print(f"\n{metric}: coverage of the 95% intervals, misses below/above, mean width")
        print(sub.to_string(float_format=lambda v: f"{v:.3f}"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", default="base", choices=["base", "chain", "wide", "rare"])
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="sample r of size n is drawn with seed 1000 n + first-seed + r")
    parser.add_argument("--methods", nargs="+", default=list(SETTINGS),
                        choices=list(SETTINGS),
                        help="verifier variants (empirical and oracle always)")
    parser.add_argument("--sweep-bins", type=int, nargs="+", default=None,
                        help="instead: plain BDeu fits without the cap for these max_bins")
    parser.add_argument("--protocol", action="store_true",
                        help="instead: the population estimate on designs and real data")
    parser.add_argument("--cost", action="store_true",
                        help="instead: plain fits on Adult with and without the estimate")
    parser.add_argument("--cost-data", nargs="+", default=["adult"],
                        help="--cost: the datasets / synthetic designs timed")
    parser.add_argument("--cost-levers", action="store_true",
                        help="instead: the labelled plain fit without parts of its solves")
    parser.add_argument("--cost-batch", action="store_true",
                        help="instead: labelled fits, today's batches against the former")
    parser.add_argument("--lever", default="today",
                        choices=["today", "draws' rule without its row check"],
                        help="--protocol: the fits as today or with a --cost-levers variant")
    parser.add_argument("--cost-parts", action="store_true",
                        help="instead: the estimate's tables and solves, ours vs former")
    parser.add_argument("--sp-methods", action="store_true",
                        help="instead: coverage of SP intervals, the package's and others")
    parser.add_argument("--sp-cache", default=None,
                        help="--sp-methods: file of the fits' estimates (read or written)")
    parser.add_argument("--sp-designs", action="store_true",
                        help="--sp-methods: also the designs built to break an SP interval")
    parser.add_argument("--sp-design-reps", type=int, default=500)
    parser.add_argument("--sp-alternatives", action="store_true",
                        help="--sp-methods: also max-T, percentile, bias-corrected, basic, "
                        "prepivoted, split-tail and Bonferroni-over-near-ties intervals")
    parser.add_argument("--kappas", type=float, nargs="+", default=[2.0],
                        help="--sp-methods: near-tie rules of the calibrated interval")
    parser.add_argument("--compare-pr", action="store_true",
                        help="instead: the package's estimate against Prasad-Rao's EBLUP")
    parser.add_argument("--designs", nargs="*", default=None)
    parser.add_argument("--real", nargs="*", default=None)
    parser.add_argument("--datasets", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "shared", "datasets"))
    parser.add_argument("--labels", action="store_true",
                        help="--protocol: fit with y (equalized odds, TPR and FPR)")
    parser.add_argument("--prior", default="bdeu", choices=["bdeu", "hierarchical"],
                        help="--protocol: the prior of the fits' network")
    parser.add_argument("--network-draws", type=int, default=0,
                        help="--protocol: n_draws of the fits (the network's intervals)")
    args = parser.parse_args()
    if args.cost_parts:
        return cost_parts(args)
    if args.cost_levers:
        return cost_levers(args)
    if args.cost_batch:
        return cost_batch(args)
    if args.protocol or args.cost or args.compare_pr or args.sp_methods:
        import population_designs as designs

        args.designs = designs.SYNTHETIC if args.designs is None else args.designs
        args.real = designs.REAL if args.real is None else args.real
        if args.sizes == [500, 2000] and "--sizes" not in " ".join(sys.argv):
            args.sizes = None
        if args.compare_pr:
            return compare_prasad_rao(args)
        if args.sp_methods:
            return sp_methods(args)
        return cost(args) if args.cost else protocol(args)
    pop = population(args.design)
    lr = fixed_classifier(pop)
    truth = true_rates(pop, lr)
    print(f"design={args.design} truth (a1,a2)={dict(zip(GROUPS, truth.round(4)))}; "
          f"SP={di_sp(truth)[1]:.4f} DI={di_sp(truth)[0]:.4f}; reps={args.reps}, "
          f"draws={args.draws}, bootstrap={args.boot}")
    pd.set_option("display.width", 250)
    warm_X, warm_S = sample(pop, 200, np.random.default_rng(0))  # imports, caches
    verifier(warm_X, warm_S, lr, 0, "bdeu", True, 50)
    for n in args.sizes:
        emp = expected_empirical_error(pop, truth, n)
        orc = oracle_asymptotic_error(pop, lr, n)
        print(f"\nn = {n}: closed form, per group {GROUPS}: E|empirical error| "
              f"{emp.round(4).tolist()} (mean {emp.mean():.4f}); oracle Cramer-Rao "
              f"{orc.round(4).tolist()} (mean {orc.mean():.4f}); best MAE / empirical "
              f"{orc.mean() / emp.mean():.3f}")
        if args.sweep_bins:
            print(sweep_bins(pop, lr, truth, n, args).to_string(
                float_format=lambda v: f"{v:.4f}"))
            continue
        results = [one_run(pop, lr, truth, n, 1000 * n + args.first_seed + r, args)
                   for r in range(args.reps)]
        table = summarise(results, truth, ["empirical", "oracle", *args.methods], emp.mean())
        print(table.to_string(float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
