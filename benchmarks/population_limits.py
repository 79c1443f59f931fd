"""Pooling small groups towards a main-effects model: what it gains, where it must lose.

Issue 23 asks the population estimate for at most 0.7x the empirical error on groups of
fewer than 50 rows whose model check passes, and at most 1.0x on every design. The
BDeu network's rate of a small group is mostly its own rows, so the package's
combination (:func:`population_estimates`, "current" below) gains little there. A second,
pooled synthetic estimate is cheap: a main-effects (additive) regression of the groups'
rates over the sensitive attributes. This script measures estimators that shrink the
current estimate ``C_a`` (its mean squared error ``m_a``) towards that regression, each
then held within 0.75 standard errors of the group's direct rate (the package's limited
translation):

* ``pooled, cap 0.27``: the least-squares fit itself, held within 0.27 standard errors
  of the direct rate (the soft threshold that reaches 0.7x at no interaction, below);
* ``eb``: Fay-Herriot, ``C_a = z_a' beta + v_a + e_a``, ``v_a ~ N(0, A)``, ``sqrt(A)``
  integrated on the grid of the package's ``sigma`` (flat prior, REML likelihood,
  ``beta`` integrated): the Bayes answer when the interactions are a normal spread;
* ``eb0``: the same with half of the prior at ``A = 0`` (pools harder);
* ``js``: positive-part James-Stein towards the weighted least-squares fit, factor
  ``(p - k - 2) / Q`` (``Q`` the residuals' chi-square), nothing when ``p - k < 3``
  (minimax in the groups' standard errors only from three residual dimensions on);
* ``eb gated``: ``eb`` where the residual dimension ``p - k`` is at least 3, the current
  estimate otherwise;
* ``eb logit``, ``eb logit gated``: the same on the logit scale (main effects additive in
  the log-odds; the delta method's variances).

Parts:

* ``--limits``: the admissibility limit. In a 2x2 design with one small group (the others
  large) the main effects are known from the large groups; what the rows say of the small
  group's interaction ``delta`` is ``Y ~ N(delta, s^2)``, one dimension, where the direct
  estimate is admissible: an estimator better at ``delta = 0`` is worse at some
  ``delta``. The table gives, for limited translation towards the pooled value by ``c``
  standard errors (soft thresholding of ``Y``), the small group's MAE ratio at 0 and at
  its worst ``delta`` (exact, by quadrature), then the Monte Carlo of every estimator
  over ``delta``.
* ``--designs``: Monte Carlo designs with attributes (the inputs of
  :func:`population_estimates` drawn as ``population_combination.py`` does), one small
  group off by ``delta`` of its standard errors (towards the far end of the rate's
  range, as far as it allows).
* ``--capture FILE`` / ``--recombine FILE ...``: plain fits (``n_draws=0``, no labels) of
  the protocol's samples (``bench_population.py --protocol``'s seeds) record the inputs of
  the positive rate's :func:`population_estimates`, every group's attribute values and its
  true rate; every estimator is then applied to the same inputs.

Prints, per row and estimator, ``all / small / cover``: the MAE over the direct rate's
(all groups), the same over the groups of fewer than 50 rows whose model check passes,
and the coverage of the 95% intervals. Commands (``docs/benchmarks.md``)::

    OMP_NUM_THREADS=1 python benchmarks/population_limits.py --limits --reps 200
    OMP_NUM_THREADS=1 python benchmarks/population_limits.py --designs --reps 100
    OMP_NUM_THREADS=1 python benchmarks/population_limits.py --capture fits.pkl --reps 30
    OMP_NUM_THREADS=1 python benchmarks/population_limits.py --recombine fits.pkl
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit, logsumexp

from skfairverify.verification._population import (
    SHIFT_CAP,
    SIGMA_GRID,
    jeffreys_interval,
    limited_translation,
    population_estimates,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from population_combination import one_sample  # noqa: E402


# ---------------------------------------------------------------- the pooled estimators
def main_effects(levels) -> np.ndarray:
    """Intercept and every attribute's level dummies (first level dropped), full rank."""
    levels = np.asarray(levels, dtype=object)
    columns = [np.ones(len(levels))]
    for j in range(levels.shape[1]):
        for value in sorted(set(levels[:, j]))[1:]:
            columns.append((levels[:, j] == value).astype(float))
    Z = np.column_stack(columns)
    keep = np.abs(np.diag(np.linalg.qr(Z)[1])) > 1e-9
    return Z[:, keep]


def eb_pool(y, m, Z, log_prior=None):
    """Fay-Herriot of ``y`` (variances ``m``) towards ``Z beta``, ``sqrt(A)`` integrated.

    The estimate and its mean squared error; None when the main effects are saturated.
    """
    p, k = Z.shape
    if p - k < 1:
        return None
    means, seconds, loglik = [], [], []
    for s in SIGMA_GRID:
        w = 1.0 / (s * s + m)
        information = Z.T @ (Z * w[:, None])
        inverse = np.linalg.pinv(information)
        fit = Z @ (inverse @ (Z.T @ (w * y)))
        loglik.append(0.5 * np.log(w).sum() - 0.5 * np.linalg.slogdet(information)[1]
                      - 0.5 * (w * (y - fit) ** 2).sum())
        g = s * s * w
        mean = g * y + (1 - g) * fit
        leverage = np.einsum("ij,jk,ik->i", Z, inverse, Z)
        means.append(mean)
        seconds.append(g * m + (1 - g) ** 2 * leverage + mean ** 2)
    loglik = np.asarray(loglik) + (0.0 if log_prior is None else log_prior)
    post = np.exp(loglik - logsumexp(loglik))
    mean = post @ np.asarray(means)
    return mean, post @ np.asarray(seconds) - mean ** 2


def js_pool(y, m, Z):
    """Positive-part James-Stein towards the weighted LS fit (None if ``p - k < 3``)."""
    p, k = Z.shape
    if p - k < 3:
        return None
    w = 1.0 / m
    beta = np.linalg.lstsq(Z * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    fit = Z @ beta
    shrink = min(1.0, (p - k - 2) / (w * (y - fit) ** 2).sum())
    return y - shrink * (y - fit), (1 - shrink) * m + shrink * m * k / p


def _gated(y, m, Z):
    p, k = Z.shape
    return eb_pool(y, m, Z) if p - k >= 3 else None


def on_logit(pool):
    """``pool`` on the logit scale (the delta method's variances), mapped back."""

    def pooled(y, m, Z):
        p = np.clip(y, 0.005, 0.995)
        d = p * (1 - p)
        out = pool(np.log(p / (1 - p)), m / d ** 2, Z)
        if out is None:
            return None
        q = expit(out[0])
        return q, out[1] * (q * (1 - q)) ** 2

    return pooled


_ZERO = np.log(np.where(SIGMA_GRID == 0, 0.5, 0.5 / (SIGMA_GRID.size - 1)))
def _full(y, m, Z):
    """All the way to the weighted least-squares fit (``A = 0``)."""
    p, k = Z.shape
    if p - k < 1:
        return None
    w = 1.0 / m
    inverse = np.linalg.pinv(Z.T @ (Z * w[:, None]))
    fit = Z @ (inverse @ (Z.T @ (w * y)))
    return fit, np.einsum("ij,jk,ik->i", Z, inverse, Z)


#: Limited translation of a pool other than :data:`SHIFT_CAP`, in standard errors.
CAPS = {"pooled, cap 0.27": 0.27}
POOLS = {"pooled, cap 0.27": _full, "eb": eb_pool,
         "eb0": lambda y, m, Z: eb_pool(y, m, Z, _ZERO), "js": js_pool, "eb gated": _gated,
         "eb logit": on_logit(eb_pool), "eb logit gated": on_logit(_gated)}


def estimators(network, direct, n_eff, boot_network, boot_direct, levels) -> tuple:
    """``({name: (rate, low, high)}, model check p-values)`` of every estimator."""
    current = population_estimates(network, direct, n_eff, boot_network, boot_direct)
    out = {"current": (current.rate, current.low, current.high)}
    ok = ~np.isnan(current.rate)
    Z = main_effects(np.asarray(levels, dtype=object)[ok])
    n = np.maximum(n_eff[ok], 1.0)
    p = np.clip(current.rate[ok], 0.5 / n, 1 - 0.5 / n)
    m = p * (1 - p) / current.effective_rows[ok]
    q = np.clip(direct[ok], 0.5 / n, 1 - 0.5 / n)
    for name, pool in POOLS.items():
        pooled = pool(current.rate[ok], m, Z)
        if pooled is None:  # nothing to pool towards: the current estimate
            out[name] = out["current"]
            continue
        est, mse = pooled
        est, mse = limited_translation(est, mse, direct[ok], q * (1 - q) / n,
                                       CAPS.get(name, SHIFT_CAP))
        rate = np.full(len(direct), np.nan)
        low, high = rate.copy(), rate.copy()
        rate[ok] = np.clip(est, 0, 1)
        p = np.clip(rate[ok], 0.5 / n, 1 - 0.5 / n)
        low[ok], high[ok] = jeffreys_interval(
            rate[ok], np.minimum(p * (1 - p) / np.maximum(mse, 1e-15), 2.0 * n), 0.95)
        out[name] = (rate, low, high)
    return out, current.pvalue


class Tally:
    """Sums of absolute errors (all groups; small ones passing the check) and coverage."""

    def __init__(self):
        self.sums = {}

    def add(self, outs, pvalue, direct, truth, n_eff):
        ok = ~np.isnan(truth)
        small = ok & (n_eff < 50) & (pvalue >= 0.05)
        err_d = np.abs(direct - truth)
        for name, (rate, low, high) in outs.items():
            err = np.abs(rate - truth)
            self.sums.setdefault(name, np.zeros(6))
            self.sums[name] += [err[ok].sum(), err_d[ok].sum(), err[small].sum(),
                                err_d[small].sum(), ((low <= truth) & (truth <= high))[ok].sum(),
                                ok.sum()]

    def row(self) -> dict:
        return {name: f"{s[0] / s[1]:.3f} / " + (f"{s[2] / s[3]:.3f}" if s[3] else "-")
                + f" / {s[4] / s[5]:.3f}" for name, s in self.sums.items()}


# ---------------------------------------------------------------- Monte Carlo designs
def _grid(rows, columns):
    return [(i, j) for i in range(rows) for j in range(columns)]


def _additive(intercept, first, second, rows, columns):
    a, b = np.repeat(np.arange(rows), columns), np.tile(np.arange(columns), rows)
    return expit(intercept + np.asarray(first)[a] + np.asarray(second)[b])


#: name -> (rows of every group, attribute levels, additive rates, the group off by delta)
DESIGNS = {
    "2x2 one small": (np.array([400, 300, 250, 30.0]), _grid(2, 2),
                      _additive(-0.3, [0, -0.3], [0, 0.5], 2, 2), 3),
    "2x2 one small, no-info": (np.array([400, 300, 250, 30.0]), _grid(2, 2),
                               _additive(-0.3, [0, -0.3], [0, 0.5], 2, 2), 3),
    "2x2 interaction design": (np.array([230, 20, 230, 20.0]), _grid(2, 2),
                               _additive(-0.2, [0, 0.4], [0, 0.6], 2, 2), 3),
    "2x2 all small": (np.array([40, 40, 40, 40.0]), _grid(2, 2),
                      _additive(-0.2, [0, 0.4], [0, 0.6], 2, 2), 3),
    "2x2 skewed": (np.array([400, 300, 250, 30.0]), _grid(2, 2),
                   _additive(-2.8, [0, 0.5], [0, 0.6], 2, 2), 3),
    "2x3 Titanic-like": (np.array([90, 60, 150, 40, 60, 230.0]), _grid(2, 3),
                         _additive(0.5, [0, -2.0], [0, -0.8, -1.5], 2, 3), 3),
    "2x5 Adult-like": (np.array([900, 100, 30, 15, 8, 450, 40, 20, 10, 6.0]), _grid(2, 5),
                       _additive(-1.0, [0, 0.8], [0, -0.5, 0.3, -0.2, 0.1], 2, 5), 7),
    "6x2 COMPAS-like": (np.array([240, 1060, 2, 13, 184, 638, 42, 194, 2, 5, 23, 99.0]),
                        _grid(6, 2), _additive(0.6, [-0.3, 0.5, 0.6, 0.7, 0, 0.6],
                                               [0, -0.4], 6, 2), 10),
    "3x4 many": (np.array([300, 200, 120, 60, 250, 150, 45, 25, 200, 80, 30, 12.0]),
                 _grid(3, 4), _additive(-0.5, [0, 0.4, -0.3], [0, 0.3, -0.4, 0.5], 3, 4),
                 11),
}


def off_by(rate: float, rows: float, delta: float) -> float:
    """``rate`` moved by ``delta`` standard errors towards the far end of [0.01, 0.99]."""
    step = delta * np.sqrt(rate * (1 - rate) / rows)
    return float(np.clip(rate + (step if rate < 0.5 else -step), 0.01, 0.99))


def design_run(name: str, delta: float, reps: int, seed: int = 0) -> dict:
    """One design with its small group off by ``delta`` standard errors (see the docstring).

    The network's rate: noise of 0.5 the direct rate's variance, correlated 0.7, for a
    group of 100 rows or more, 0.9 and 0.95 below (the BDeu network of a small group is
    mostly its rows); 0.97 and 0.985 for every group in ``no-info``.
    """
    n, levels, theta, off = DESIGNS[name]
    theta = theta.copy()
    theta[off] = off_by(theta[off], n[off], delta)
    share, rho = np.where(n >= 100, 0.5, 0.9), np.where(n >= 100, 0.7, 0.95)
    if "no-info" in name:
        share, rho = np.full(n.size, 0.97), np.full(n.size, 0.985)
    rng, tally = np.random.default_rng(seed), Tally()
    for _ in range(reps):
        network, direct, boot_n, boot_d = one_sample(rng, n, theta, np.zeros(n.size),
                                                     share, rho)
        outs, pvalue = estimators(network, direct, n, boot_n, boot_d, levels)
        tally.add(outs, pvalue, direct, theta, n)
    return tally.row()


def _table(rows: dict, index_names) -> None:
    table = pd.DataFrame(rows).T
    table.index.names = index_names
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(table.to_string())


def designs(args, names) -> None:
    rows = {}
    for name in names:
        n, _, theta, off = DESIGNS[name]
        for delta in args.deltas:
            moved = off_by(theta[off], n[off], delta) - theta[off]  # the range may stop it
            key = (name, round(abs(moved) / np.sqrt(theta[off] * (1 - theta[off]) / n[off]), 1))
            rows[key] = design_run(name, delta, args.reps)
            print(*key, rows[key], flush=True)
    _table(rows, ["design", "delta (SE, as far as the range allows)"])


# ---------------------------------------------------------------- the 1-D limit
def soft_threshold_risk(cap: float, deltas) -> np.ndarray:
    """MAE of ``soft(Y, cap)`` over ``E|Z|``, ``Y ~ N(delta, 1)``, by quadrature."""
    z = np.linspace(-10, 10, 20001)
    w = np.exp(-z * z / 2)
    w /= w.sum()
    out = []
    for d in deltas:
        y = d + z
        est = np.sign(y) * np.maximum(np.abs(y) - cap, 0.0)
        out.append((np.abs(est - d) * w).sum())
    return np.asarray(out) / np.sqrt(2 / np.pi)


def limits(args) -> None:
    deltas = np.linspace(0, 10, 201)
    rows = {}
    for cap in (0.1, 0.2, 0.27, 0.3, 0.5, 0.75, 1.0):
        risk = soft_threshold_risk(cap, deltas)
        rows[cap] = {"at delta 0": f"{risk[0]:.3f}", "worst": f"{risk.max():.3f}",
                     "worst delta": f"{deltas[risk.argmax()]:.1f}"}
    print("Limited translation towards the pooled value by c SE (soft threshold), "
          "the small group's MAE over its rows':")
    _table(rows, ["c (SE)"])
    designs(args, ["2x2 one small", "2x2 one small, no-info"])


# ---------------------------------------------------------------- captured real fits
def _populations(names, datasets):
    import population_designs as designs_module
    import population_networks as networks

    for name in names:
        if name in designs_module.SYNTHETIC:
            yield name, designs_module.synthetic(name)
        elif name in designs_module.REAL:
            pop = designs_module.real(name, datasets)
            if pop is not None:
                yield name, pop
        else:
            yield name, networks.POPULATIONS[name]()


def capture(args) -> None:
    """Record the positive rate's inputs of the estimate on every protocol sample."""
    import bench_population as B

    from skfairverify.verification import _population

    original, seen, records = _population.population_estimates, [], []

    def record(network, direct, n_eff, boot_network, boot_direct, **kw):
        seen.append(dict(network=np.array(network, float), direct=np.array(direct, float),
                         n_eff=np.array(n_eff, float), boot_network=np.array(boot_network),
                         boot_direct=np.array(boot_direct)))
        return original(network, direct, n_eff, boot_network, boot_direct, **kw)

    sizes = dict(B.PROTOCOL_SIZES, insurance=[1000, 3000], child=[800, 3000])
    _population.population_estimates = record  # benchmark-only: record the inputs
    try:
        for name, pop in _populations(args.capture_data, args.datasets):
            for n in sizes.get(name, [500, 2000]):
                for r in range(args.reps):
                    seen.clear()
                    ver = B.plain_fit(pop, n, 1000 * n + r)
                    keys = [tuple(str(v) for v in row) for row in
                            ver.groups_[pop.sensitive].itertuples(index=False)]
                    truth = [pop.truth["positive_rate"].get(k, np.nan) for k in keys]
                    records.append(dict(seen[0], name=name, n=n, keys=keys,
                                        truth=np.array(truth)))
                print(name, n, "captured", flush=True)
                with open(args.capture, "wb") as f:
                    pickle.dump(records, f)
    finally:
        _population.population_estimates = original


def recombine(args) -> None:
    tallies = {}
    for path in args.recombine:
        with open(path, "rb") as f:
            for r in pickle.load(f):
                outs, pvalue = estimators(r["network"], r["direct"], r["n_eff"],
                                          r["boot_network"], r["boot_direct"], r["keys"])
                tallies.setdefault((r["name"], r["n"]), Tally()).add(
                    outs, pvalue, r["direct"], r["truth"], r["n_eff"])
    _table({key: t.row() for key, t in tallies.items()}, ["population", "n"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", action="store_true")
    parser.add_argument("--designs", dest="design_names", nargs="*", choices=list(DESIGNS))
    parser.add_argument("--deltas", nargs="*", type=float, default=[0, 1, 2, 3, 5, 8])
    parser.add_argument("--capture", help="file to record the protocol fits' inputs to")
    parser.add_argument("--capture-data", nargs="*", default=[
        "interaction", "additive", "three-attributes", "reads-sensitive", "network-true",
        "chain", "xor", "adult", "german", "compas", "titanic", "insurance", "child"])
    parser.add_argument("--recombine", nargs="*", help="captured files to recombine")
    parser.add_argument("--datasets", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "datasets"))
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if args.limits:
            limits(args)
        if args.design_names is not None:
            designs(args, args.design_names or list(DESIGNS))
        if args.capture:
            capture(args)
        if args.recombine:
            recombine(args)


if __name__ == "__main__":
    main()
