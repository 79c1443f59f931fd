"""Population rates of a fixed classifier: empirical, fairlearn's bootstrap, the verifier.

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
* verifier: ``FairnessVerifier(FrozenEstimator(lr))`` as today (BDeu prior,
  ``max_bins=60``), with posterior intervals (``posterior_networks``, ``n_draws``
  draws solved by the exact engine);
* verifier + prior + bins: the same with the hierarchical prior (the CPTs re-estimated
  by ``estimate_cpts`` on the structure the verifier learned: ``_network._estimate``
  is replaced inside this script only) and ``max_bins = min(60,
  distribution_max_bins(groups))``; its intervals draw from the hierarchical posterior.

Printed: mean absolute error of the group rates, of SP and of DI against the truth,
the ratio to the empirical MAE, the coverage of the 95% intervals of the group rates
and of SP, the CPU time (``time.process_time``: other processes do not count) of a
plain fit and of the intervals (for "empirical": fairlearn's bootstrap), the number of
bins and the agreement of the integer rule.

Run: ``python benchmarks/bench_population.py`` (12 repetitions, n = 500 and 2,000,
~12 minutes on one core); ``--design chain|wide|rare`` for the variants,
``--reps``, ``--sizes``, ``--draws``, ``--boot`` to change the size.
"""

from __future__ import annotations

import argparse
import time
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, selection_rate
from scipy.stats import norm
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfairverify.verification import FairnessVerifier, LowAgreementWarning, _network
from skfairverify.verification._parameters import (
    distribution_max_bins,
    estimate_cpts,
    prior_pseudo_counts,
)
from skfairverify.verification._posterior import (
    credible_intervals,
    metric_draws,
    posterior_networks,
    shared_plan_rates,
)

GROUPS = [(0, 0), (0, 1), (1, 0), (1, 1)]
ESS = 1.0  # the verifier's EQUIVALENT_SAMPLE_SIZE


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


@contextmanager
def recording_estimate(prior: str):
    """Replace ``_network._estimate``: record its input, re-estimate with ``prior``."""
    original = _network._estimate
    calls = []

    def estimate(codes, names, cardinalities, edges, equivalent_sample_size,
                 sample_weight=None):
        net = original(codes, names, cardinalities, edges, equivalent_sample_size,
                       sample_weight)
        if prior == "hierarchical":
            sens = [k for k, name in enumerate(names) if name in ("a1", "a2")]
            cpts = estimate_cpts(codes, cardinalities, net.parents, sens,
                                 sample_weight=sample_weight,
                                 equivalent_sample_size=equivalent_sample_size)
            net = type(net)(net.cardinalities, net.parents, cpts, names=net.names,
                            state_names=net.state_names)
        calls.append((np.asarray(codes), net, sample_weight))
        return net

    _network._estimate = estimate
    try:
        yield calls
    finally:
        _network._estimate = original


def _rates_by_group(ver) -> np.ndarray:
    table = ver.groups_.set_index(["a1", "a2"])["positive_rate"]
    return np.array([table.get(g, np.nan) for g in GROUPS])


def _draw_rates(ver, net):
    """``rates_of`` for the posterior draws (engine planned once), in GROUPS order."""
    names = ver.variables_
    weights = [ver.weights_[name].to_numpy() for name in names]
    sens_idx = [names.index(s) for s in ("a1", "a2")]
    states = [list(ver.weights_[s].index) for s in ("a1", "a2")]
    groups = ver.groups_[["a1", "a2"]].to_numpy()
    group_codes = np.array([[states[k].index(v) for k, v in enumerate(row)]
                            for row in groups])
    order = [GROUPS.index(tuple(int(v) for v in row)) for row in groups]
    shared = shared_plan_rates(net, weights, ver.threshold_, sens_idx, group_codes,
                               max_table_size=ver.max_table_size)

    def rates_of(draw):
        out = np.full(len(GROUPS), np.nan)
        out[order] = shared(draw)
        return out

    return rates_of


def verifier(X, S, lr, seed, prior, cap_bins, n_draws):
    max_bins = 60
    if cap_bins:
        max_bins = min(60, distribution_max_bins(S.to_numpy()))
    with recording_estimate(prior) as calls:
        t0 = time.process_time()
        ver = FairnessVerifier(FrozenEstimator(lr), max_bins=max_bins, random_state=seed)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=LowAgreementWarning)
            ver.fit(X, sensitive_features=S)
        fit_seconds = time.process_time() - t0
    codes, net, weight = calls[0]
    t0 = time.process_time()
    alpha = None
    if prior == "hierarchical":
        sens = [ver.variables_.index(s) for s in ("a1", "a2")]
        alpha, _ = prior_pseudo_counts(codes, net.cardinalities, net.parents, sens,
                                       sample_weight=weight, equivalent_sample_size=ESS,
                                       n_draws=n_draws)
    draws = posterior_networks(net, codes, equivalent_sample_size=ESS, n_draws=n_draws,
                               random_state=seed, pseudo_counts=alpha)
    rate_draws = np.array([r for r in map(_draw_rates(ver, net), draws)])
    present = ~np.isnan(rate_draws[0])
    low, high = np.full(4, np.nan), np.full(4, np.nan)
    low[present], high[present] = credible_intervals(rate_draws[:, present])
    sp_ci = credible_intervals(metric_draws(rate_draws[:, present])["statistical_parity"])
    ci_seconds = time.process_time() - t0
    return (_rates_by_group(ver), (low, high, list(sp_ci)), fit_seconds, ci_seconds,
            (ver.n_bins_, ver.agreement_))


# ---------------------------------------------------------------- experiment
METHODS = ("empirical", "verifier", "verifier+bins", "verifier+prior", "verifier+prior+bins")


def one_run(pop, lr, truth, n, seed, args):
    rng = np.random.default_rng(seed)
    X, S = sample(pop, n, rng)
    out = {}
    rates, ci, sec = empirical(X, S, lr, args.boot, seed)
    out["empirical"] = (rates, ci, sec, np.nan, None)
    settings = {"verifier": ("bdeu", False), "verifier+bins": ("bdeu", True),
                "verifier+prior": ("hierarchical", False),
                "verifier+prior+bins": ("hierarchical", True)}
    for name, (prior, cap) in settings.items():
        if name in args.methods:
            out[name] = verifier(X, S, lr, seed, prior, cap, args.draws)
    return out


def summarise(results, truth, methods):
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
        rows[method]["ci / fit"] = rows[method]["ci s"] / rows[method]["fit s"]
    rows["empirical"]["ci / fit"] = np.nan
    return pd.DataFrame(rows).T


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", default="base", choices=["base", "chain", "wide", "rare"])
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--methods", nargs="+", default=list(METHODS[1:]),
                        choices=METHODS[1:], help="verifier variants (empirical always)")
    args = parser.parse_args()
    pop = population(args.design)
    lr = fixed_classifier(pop)
    truth = true_rates(pop, lr)
    print(f"design={args.design} truth (a1,a2)={dict(zip(GROUPS, truth.round(4)))}; "
          f"SP={di_sp(truth)[1]:.4f} DI={di_sp(truth)[0]:.4f}; reps={args.reps}, "
          f"draws={args.draws}, bootstrap={args.boot}")
    pd.set_option("display.width", 200)
    warm_X, warm_S = sample(pop, 200, np.random.default_rng(0))  # imports, caches
    verifier(warm_X, warm_S, lr, 0, "bdeu", False, 50)
    for n in args.sizes:
        results = [one_run(pop, lr, truth, n, 1000 * n + r, args) for r in range(args.reps)]
        table = summarise(results, truth, ["empirical", *args.methods])
        print(f"\nn = {n}")
        print(table.to_string(float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
