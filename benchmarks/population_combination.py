"""Designs built to break the population estimate's combination (issue 23), by Monte Carlo.

The inputs of :func:`population_estimates` are drawn with known moments, so each design
isolates one way the network can be wrong, without fitting a verifier: per group, the
direct rate is a binomial share of ``n`` rows at the true rate ``theta``, the network's
rate ``theta + bias`` plus a noise of ``share`` times the direct rate's variance,
correlated ``rho`` with the direct rate's error, and 30 replicates of the two are drawn
with those moments at the sample's rates (as the verifier's Bayesian bootstrap gives).

Designs: ``fits`` (no bias; ten groups of 2,000 down to 30 rows), ``one-small`` (the
30-row group off by 0.15), ``grows`` (every group off by 1.5 standard errors of its rows,
so more as groups get smaller, of random sign), ``mixed`` (six groups like Titanic's, off
by -0.7 to 1.2 standard errors), ``tiny`` (30 groups of 5-24 rows, the network barely
less noisy than the rows), ``tiny-biased`` (the same, biases N(0, 0.08^2)),
``small-biased`` (four large groups fit, the four small ones off by 0.12 the same way) and
``no-info`` (twelve groups like COMPAS's, the network nearly the rows).

Prints, per design: the MAE of the estimate over that of the direct rate (all groups), the
same over the groups of fewer than 50 rows whose model check passes, and the coverage of
the 95% intervals. Run it with ``PYTHONPATH`` on two trees to compare estimators::

    OMP_NUM_THREADS=1 python benchmarks/population_combination.py --reps 300
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from skfairverify.verification._population import population_estimates

TEN = np.array([2000, 1500, 1200, 1000, 800, 600, 500, 400, 300, 30.0])


def _design_fits(rng):
    return TEN, rng.uniform(0.2, 0.6, TEN.size), np.zeros(TEN.size), 0.5, 0.7


def _design_one_small(rng):
    bias = np.zeros(TEN.size)
    bias[-1] = 0.15
    return TEN, rng.uniform(0.2, 0.6, TEN.size), bias, 0.5, 0.7


def _design_grows(rng):
    n = np.array([2000, 800, 400, 200, 100, 60, 40, 25, 15, 10.0])
    theta = rng.uniform(0.2, 0.6, n.size)
    bias = 1.5 * np.sqrt(theta * (1 - theta) / n) * rng.choice([-1, 1], n.size)
    return n, theta, bias, 0.5, 0.7


def _design_mixed(rng):
    n = np.array([80, 75, 100, 100, 95, 250.0])
    theta = np.array([0.76, 0.135, 0.167, 0.356, 0.081, 0.036])
    se = np.sqrt(theta * (1 - theta) / n)
    return n, theta, se * np.array([0.1, -0.5, -0.7, 0.8, 0.7, 1.2]), 0.6, 0.75


def _design_tiny(rng, biased=False):
    n = rng.integers(5, 25, 30).astype(float)
    bias = rng.normal(0, 0.08, n.size) if biased else np.zeros(n.size)
    return n, rng.uniform(0.2, 0.8, n.size), bias, 0.9, 0.95


def _design_small_biased(rng):
    n = np.array([3000, 2000, 1000, 500, 40, 30, 20, 15.0])
    return n, rng.uniform(0.2, 0.6, n.size), np.where(n < 50, 0.12, 0.0), 0.5, 0.7


def _design_no_info(rng):
    n = np.array([1000, 450, 300, 230, 120, 115, 110, 80, 80, 25, 8, 7.0])
    return n, rng.uniform(0.45, 0.88, n.size), np.zeros(n.size), 0.97, 0.985


DESIGNS = {"fits": _design_fits, "one-small": _design_one_small, "grows": _design_grows,
           "mixed": _design_mixed, "tiny": _design_tiny,
           "tiny-biased": lambda rng: _design_tiny(rng, biased=True),
           "small-biased": _design_small_biased, "no-info": _design_no_info}


def one_sample(rng, n, theta, bias, share, rho, n_boot=30):
    """The direct and network rates of one sample and their replicates."""
    sd = np.sqrt(theta * (1 - theta) / n)
    direct = rng.binomial(n.astype(int), theta) / n
    noise = rho * (direct - theta) / sd + np.sqrt(1 - rho ** 2) * rng.normal(size=n.size)
    network = np.clip(theta + bias + sd * np.sqrt(share) * noise, 0, 1)
    p = np.clip(direct, 0.5 / n, 1 - 0.5 / n)
    sd_hat = np.sqrt(p * (1 - p) / n)
    z_d = rng.normal(size=(n_boot, n.size))
    z_n = rho * z_d + np.sqrt(1 - rho ** 2) * rng.normal(size=z_d.shape)
    return (network, direct, network + sd_hat * np.sqrt(share) * z_n,
            direct + sd_hat * z_d)


def run(name: str, reps: int, seed: int = 0) -> dict:
    """MAE over the direct rate's (all groups, small groups passing), coverage."""
    n, theta, bias, share, rho = DESIGNS[name](np.random.default_rng(seed + 1))
    rng = np.random.default_rng(seed)
    sums = np.zeros(4)
    cover = []
    for _ in range(reps):
        network, direct, boot_n, boot_d = one_sample(rng, n, theta, bias, share, rho)
        est = population_estimates(network, direct, n, boot_n, boot_d)
        err, err_d = np.abs(est.rate - theta), np.abs(direct - theta)
        small = (n < 50) & (est.pvalue >= 0.05)
        sums += [err.sum(), err_d.sum(), err[small].sum(), err_d[small].sum()]
        cover.append(((est.low <= theta) & (theta <= est.high)).mean())
    return {"MAE / direct": sums[0] / sums[1],
            "< 50 rows, check passes": sums[2] / sums[3] if sums[3] else np.nan,
            "95% cover": float(np.mean(cover))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--designs", nargs="*", default=list(DESIGNS), choices=list(DESIGNS))
    args = parser.parse_args()
    table = pd.DataFrame({name: run(name, args.reps) for name in args.designs}).T
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
