"""Cost and coverage of the verifier's credible intervals (``n_draws``, ``prior``).

The semi-synthetic population of ``bench_population.py`` (issue 16: two binary
sensitive attributes, four intersections down to ~20 rows at n = 500, five Gaussian
features, a fixed logistic regression; the group rates in closed form). Per
repetition one sample; ``FairnessVerifier(FrozenEstimator(lr), ["a1", "a2"])`` fitted
with ``n_draws=0`` (a plain fit) and with the draws, both priors. Printed per setting:
the CPU time of a fit (``time.process_time``), its ratio to the plain fit, the group-
rate MAE and SP error against the truth, the coverage of the 95% intervals of the
group rates and of SP, and the number of bins chosen.

Run: ``python benchmarks/bench_intervals.py`` (``--reps``, ``--sizes``, ``--draws``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator

sys.path.insert(0, os.path.dirname(__file__))
from bench_population import GROUPS, fixed_classifier, population, sample, true_rates  # noqa: E402

from skfairverify.verification import FairnessVerifier, LowAgreementWarning  # noqa: E402


def one_fit(X, S, lr, seed, prior, n_draws):
    data = pd.concat([X, S], axis=1)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=LowAgreementWarning)
        ver = FairnessVerifier(FrozenEstimator(lr), ["a1", "a2"], prior=prior,
                               n_draws=n_draws, random_state=seed).fit(data)
    seconds = time.process_time() - t0
    g = ver.groups_.set_index(["a1", "a2"])
    keys = [k for k in GROUPS if k in g.index]
    return g.loc[keys], ver.metric_intervals_["statistical_parity"], seconds, ver.n_bins_


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--draws", type=int, nargs="+", default=[50, 100])
    args = parser.parse_args()
    pop = population("base")
    lr = fixed_classifier(pop)
    truth = pd.Series(true_rates(pop, lr), index=pd.MultiIndex.from_tuples(GROUPS))
    sp_true = truth.max() - truth.min()
    print(f"reps={args.reps}; truth={truth.round(4).tolist()}, SP={sp_true:.4f}")
    settings = [(p, d) for p in ("bdeu", "hierarchical") for d in [0] + args.draws]
    for n in args.sizes:
        rows = {s: [] for s in settings}
        for r in range(args.reps):
            X, S = sample(pop, n, np.random.default_rng(1000 * n + r))
            for prior, draws in settings:
                g, (lo, hi), sec, bins = one_fit(X, S, lr, r, prior, draws)
                t = truth.loc[g.index].to_numpy()
                rate = g["positive_rate"].to_numpy()
                cover = ((g["ci_low"] <= t) & (t <= g["ci_high"])).mean()
                sp = rate.max() - rate.min()
                rows[(prior, draws)].append((sec, np.abs(rate - t).mean(), abs(sp - sp_true),
                                             cover, lo <= sp_true <= hi, bins))
        table = pd.DataFrame(
            {f"{p} draws={d}": np.mean(v, axis=0) for (p, d), v in rows.items()},
            index=["fit s", "rate MAE", "SP abs err", "cover rates", "cover SP", "bins"]).T
        for prior in ("bdeu", "hierarchical"):
            plain = table.loc[f"{prior} draws=0", "fit s"]
            for d in [0] + args.draws:
                table.loc[f"{prior} draws={d}", "fit / plain fit"] = (
                    table.loc[f"{prior} draws={d}", "fit s"] / plain)
        print(f"\nn = {n}")
        print(table.round(4).to_string())


if __name__ == "__main__":
    main()
