"""Cost and coverage of the credible intervals of the fairness influence function (FIF).

``--fif``: the cost of ``FairnessVerifier.fairness_influence()`` with and without the
posterior draws, on Adult (sex x race, 10 groups; every non-sensitive column, 12
features; a logistic-regression pipeline on every column, frozen), in one run: the
verifier fitted with ``n_draws=0`` and with ``n_draws=50`` (``random_state=0``), then
``fairness_influence()`` timed on each (wall seconds, ``time.perf_counter``, and CPU
seconds, ``time.process_time``, best of ``--repeat``), the ratio to the point
influences, and the mean width of the intervals. With the draws, every subset costs one
exact solve of its reference network (as without), the draws' rates function built on it
(the draw rule's coarser solves) and one engine run per draw of its reference network.

``--coverage``: coverage of the 95% FIF intervals over ``--reps`` samples of 300 rows of
a known distribution (``tests/verification/test_fif_intervals.py``: a -> x (3 values), a -> z, the
linear rule ``x + 1.5 z >= 2`` reproduced by a frozen logistic regression; the true
influences of x and z by enumeration), the network learned on every sample, 40 draws.

Run: ``python benchmarks/bench_fif_intervals.py --fif`` (``--repeat``);
``python benchmarks/bench_fif_intervals.py --coverage --reps 300``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from skfairverify import FairnessVerifier  # noqa: E402


def fif_cost(repeat: int) -> None:
    from bench_intervals import _cost_data

    model, X, y, sensitive = _cost_data("adult")
    rows = {}
    for n_draws in (0, 50):
        ver = FairnessVerifier(model, sensitive, n_draws=n_draws, random_state=0).fit(X, y)
        wall, cpu = [], []
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():  # EstimateOutsideIntervalWarning: small groups
                warnings.simplefilter("ignore")
                fif = ver.fairness_influence()
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        width = (float((fif.ci_high - fif.ci_low).to_numpy().mean())
                 if fif.ci_low is not None else 0.0)
        rows[f"n_draws={n_draws}"] = {"features": fif.table.shape[0],
                                      "groups": fif.table.shape[1],
                                      "FIF wall s": min(wall), "FIF CPU s": min(cpu),
                                      "mean ci width": width,
                                      "intervals": fif.intervals["label"]}
    table = pd.DataFrame(rows).T
    for col in ("wall", "CPU"):
        table[f"{col} / point"] = (table[f"FIF {col} s"].astype(float)
                                   / float(table.loc["n_draws=0", f"FIF {col} s"]))
    print(f"Adult, {len(X):,} rows, sex x race, LR pipeline, fairness_influence() of every "
          f"feature, best of {repeat}")
    with pd.option_context("display.max_colwidth", 70, "display.width", 200):
        print(table.round(4).to_string())


def coverage(reps: int) -> None:
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression
    from test_fif_intervals import P_Z_A, decide, sample, true_influence

    big = sample(5000, np.random.default_rng(0))
    model = FrozenEstimator(LogisticRegression(C=100).fit(big[["x", "z"]],
                                                          decide(big.x, big.z)))
    truth = true_influence()
    rng = np.random.default_rng(2)
    hits, widths = [], []
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(reps):
            ver = FairnessVerifier(model, "a", n_bins=5, multiplier=10, n_draws=40,
                                   random_state=int(rng.integers(2**31))).fit(
                sample(300, rng, P_Z_A))
            fif = ver.fairness_influence(["x", "z"])
            low, high = fif.ci_low.to_numpy(), fif.ci_high.to_numpy()
            hits.append((low <= truth) & (truth <= high))
            widths.append(high - low)
    hits = np.array(hits)
    frame = pd.DataFrame({"true FIF": truth.ravel(),
                          "coverage": hits.mean(axis=0).ravel(),
                          "mean width": np.mean(widths, axis=0).ravel()},
                         index=pd.MultiIndex.from_product([["x", "z"], ["a=0", "a=1"]],
                                                          names=["feature", "group"]))
    se = np.sqrt(0.95 * 0.05 / hits.size)
    print(f"{reps} samples of 300 rows, 40 draws, 95% intervals "
          f"({time.perf_counter() - t0:.0f} s)")
    print(frame.round(4).to_string())
    print(f"all entries: coverage {hits.mean():.4f} (binomial s.e. at 0.95: {se:.4f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fif", action="store_true")
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    if not (args.fif or args.coverage):
        args.fif = True
    if args.fif:
        fif_cost(args.repeat)
    if args.coverage:
        coverage(args.reps)


if __name__ == "__main__":
    main()
