"""Does stratifying the sampling path's draws save model evaluations? (issue 25, item 3)

Issue 25's item 3 ends "the same stratification helps the sampling path of any other
model". The sampling path (``method="sampling"``: KNN, MLP, SVC, ...) draws each
group's rows from the network by forward sampling and stops when the group's
Clopper-Pearson interval is narrower than ``tolerance`` (``adaptive_rate``). This
bench measures, side by side on the same network and model, for every group:

1. **plain**: the path's design, forward sampling with the sensitive variables set;
   the rows ``adaptive_rate`` decides before the interval is ``--tolerance`` wide;
2. **stratified, Clopper-Pearson**: the same sampler, but every batch's rows spread
   over the strata (the joint states of the first ``--depth`` variables of the network's
   topological order after the sensitive ones; their parents are all set, so a stratum
   is set as the sensitive values are) in proportion to their probability (the floor of
   each share, the remainder by one multinomial draw over the fractional parts, as
   ``sample_unsettled``). Every draw is then independent with a fixed success
   probability and the positives' mean is ``n p``: Clopper-Pearson stays conservative
   (Hoeffding 1956), so the interval is as certified as the plain one. Its width is a
   function of ``k`` and ``n`` only, so the rows it needs are those of plain sampling;
3. **stratified, variance-based** (not certified: asymptotic): the rows a width needs
   when the interval is built from the stratified estimate's variance
   ``sum_h w_h p_h (1 - p_h) / n`` (normal or Clopper-Pearson at the effective size):
   the normal formula's rows of plain sampling, ``(2 z)**2 p (1 - p) / tolerance**2``
   (off the look grid), times the design effect ``sum_h w_h p_h (1 - p_h) / (p (1 -
   p))``, estimated from ``--deff-rows`` stratified rows a group (50,000). This is the most
   proportional stratification could save, at the price of the certificate.

Models: ``KNeighborsClassifier`` (15 neighbours), ``MLPClassifier`` (one hidden layer
of 32), ``SVC`` (RBF), each behind one-hot encoding of the categories and scaling,
fitted on 5,000 rows (the SVC on 1,000: its ``predict`` costs with its support
vectors); data: Adult (sex), COMPAS (race: African-American / other) and German
(sex), the columns of ``bench_ensembles.py``. Every count is the same seed for both
designs; one thread; ``--tolerance`` 0.02 by default.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_sampling_strata.py
    OMP_NUM_THREADS=1 python benchmarks/bench_sampling_strata.py --datasets German --depth 2
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from bench_ensembles import DATASETS  # the same data and columns
from scipy.stats import norm
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from skfairverify import FairnessVerifier
from skfairverify.verification._ensemble_path import estimator_columns
from skfairverify.verification._paths import select_path
from skfairverify.verification._sampling import (
    ModelDecision,
    NetworkSampler,
    adaptive_rate,
    look_grid,
)
from skfairverify.verification._settings import Settings

N_FIT = 5000
MAX_SAMPLES = 2_000_000


def _models():
    def pipe(model):
        pre = make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"),
             make_column_selector(dtype_include="category")),
            remainder=StandardScaler())
        return make_pipeline(pre, model)

    # (name, model, rows it is fitted on): the SVC on fewer, its predict's cost follows
    # its support vectors
    return [("KNN 15", pipe(KNeighborsClassifier(15)), N_FIT),
            ("MLP 32", pipe(MLPClassifier((32,), max_iter=300, random_state=0)), N_FIT),
            ("SVC rbf", pipe(SVC()), 1000)]


def strata(network, order, sens, group, depth):
    """The first ``depth`` variables after the sensitive ones, their joint states' weights.

    Returns ``(variables, states, weights)``: every stratum's states of those variables
    and its probability given the group (their parents are set: the sensitive ones or
    earlier strata variables).
    """
    variables = [v for v in order if v not in sens][:depth]
    fixed = dict(zip(sens, group))
    rows = [({}, 1.0)]
    for v in variables:
        if not set(network.parents[v]) <= set(fixed) | set(variables[:variables.index(v)]):
            raise ValueError(f"variable {v} has a parent outside the strata")
        grown = []
        for states, w in rows:
            known = {**fixed, **states}
            cpt = network.cpts[v][tuple(known[p] for p in network.parents[v])]
            grown += [({**states, v: s}, w * float(cpt[s])) for s in range(cpt.size)
                      if cpt[s] > 0]
        rows = grown
    return variables, [s for s, _ in rows], np.array([w for _, w in rows])


def allocate(n, weights, rng):
    """Proportional counts: the floor of each share, the rest by one multinomial draw."""
    share = n * weights
    whole = np.floor(share).astype(np.int64)
    rest = int(n - whole.sum())
    if rest > 0:
        frac = share - whole
        whole += rng.multinomial(rest, frac / frac.sum())
    return whole


def measure(dataset, name, model, n_fit, args):
    loader, columns = DATASETS[dataset]
    X, y = loader()
    X, y = X[columns].iloc[:15_000], np.asarray(y)[:15_000]
    sensitive = columns[0]
    with threadpool_limits(1):
        model.fit(X.iloc[:n_fit], y[:n_fit])
        ver = FairnessVerifier(model, sensitive, method="sampling", n_draws=0,
                               n_bootstrap=0, tolerance=0.2, random_state=0)
        ver.fit(X, y)
    settings = Settings.of(ver)
    frame = X.copy()
    path = select_path(settings, ver.estimator_, frame, None, y,
                       feature_names=estimator_columns(ver.estimator_, list(X.columns)),
                       input_labels=list(X.columns))
    encoding = path.encode(frame, [sensitive], None).encoding
    assert encoding.names == ver.variables_
    network = ver.network_
    builder = path.builder(encoding, frame, None)
    decide = ModelDecision(ver.estimator_, ver.classes_[1])
    names = encoding.names
    sens = [names.index(sensitive)]
    sampler = NetworkSampler(network)  # sets a stratum: its parents are set
    n_groups = network.cardinalities[sens[0]]
    alpha = (1 - 0.99) / (n_groups * len(look_grid(MAX_SAMPLES)))
    out = []
    for g in range(n_groups):
        group = (g,)
        variables, states, weights = strata(network, sampler.order, sens, group, args.depth)

        def rows(codes, rng):
            frame_ = builder.model_input(builder.frame(codes, names, rng))
            with threadpool_limits(1):
                return decide.decisions(frame_, None, rng)

        def plain(n, rng, g=g):
            return int(rows(sampler.sample(n, rng, {sens[0]: g}), rng).sum())

        def stratified(n, rng, keep=None, g=g, weights=weights, states=states):
            counts = allocate(n, weights, rng)
            k = 0
            for h in np.flatnonzero(counts):
                d = rows(sampler.sample(int(counts[h]), rng, {sens[0]: g, **states[h]}), rng)
                k += int(d.sum())
                if keep is not None:
                    keep[h] = keep.get(h, (0, 0))
                    keep[h] = (keep[h][0] + d.size, keep[h][1] + int(d.sum()))
            return k

        result = {}
        for design, draw in (("plain", plain), ("strat", stratified)):
            rng = np.random.default_rng(args.seed)
            start = time.process_time()
            est = adaptive_rate(lambda n, draw=draw, rng=rng: draw(n, rng),
                                tolerance=args.tolerance, alpha=alpha,
                                grid=look_grid(MAX_SAMPLES), batch=100_000)
            result[design] = (est, time.process_time() - start)
        keep = {}
        stratified(args.deff_rows, np.random.default_rng(args.seed + 1), keep)
        n_h = np.array([keep.get(h, (0, 0))[0] for h in range(len(states))], float)
        k_h = np.array([keep.get(h, (0, 0))[1] for h in range(len(states))], float)
        p_h = np.where(n_h > 0, k_h / np.maximum(n_h, 1), 0.0)
        p = float(weights @ p_h)
        deff = float(weights @ (p_h * (1 - p_h))) / max(p * (1 - p), 1e-12)
        plain_est, strat_est = result["plain"][0], result["strat"][0]
        z = norm.ppf(1 - alpha / 2)
        need = (2 * z) ** 2 * p * (1 - p) / args.tolerance ** 2  # plain, off the grid
        out.append(
            f"| {dataset}: {name} | {network.state_names[sens[0]][g]} | "
            f"{'x'.join(str(network.cardinalities[v]) for v in variables)} ({len(states)}) | "
            f"{p:.4f} | {plain_est.samples:,} | {plain_est.high - plain_est.low:.4f} | "
            f"{result['plain'][1]:.2f} | {strat_est.samples:,} | "
            f"{strat_est.high - strat_est.low:.4f} | {result['strat'][1]:.2f} | "
            f"{plain_est.samples / strat_est.samples:.2f}x | {deff:.3f} | {need:,.0f} | "
            f"{need * deff:,.0f} | {1 / deff:.2f}x |")
    return out


HEADER = (
    "| model | group | strata (states) | rate | plain: rows | width | CPU s | "
    "stratified CP: rows | width | CPU s | plain / stratified rows | design effect | "
    "normal formula, plain: rows | variance-based (asymptotic): rows | its saving |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--models", nargs="+", default=None)
    parser.add_argument("--depth", type=int, default=1,
                        help="variables after the sensitive ones whose joint states are the strata")
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--deff-rows", type=int, default=50_000,
                        help="stratified rows a group that estimate the design effect")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"tolerance {args.tolerance}, depth {args.depth}, seed {args.seed}")
    print(HEADER, flush=True)
    for dataset in args.datasets:
        for name, model, n_fit in _models():
            if args.models and not any(m in name for m in args.models):
                continue
            for line in measure(dataset, name, model, n_fit, args):
                print(line, flush=True)


if __name__ == "__main__":
    main()
