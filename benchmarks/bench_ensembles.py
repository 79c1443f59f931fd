"""Benchmark of the sound bounds of tree ensembles (issue 25, first step) on Adult.

The workload of issue 25: Adult, the first 15,000 rows without missing values, inputs
sex, age, education-num, hours-per-week, marital-status and relationship (categories as
ordinal codes), sex sensitive. For every model (HistGradientBoosting, GradientBoosting,
RandomForest, and XGBoost / LightGBM when installed; 10 to 500 trees of depth 3 to 8):

1. read it (:func:`~skfairverify.ensembles.read_ensemble`) and refine each column's
   states at every split threshold (one state per category for the categorical columns:
   the edge between two codes is the threshold there, else their midpoint);
2. learn a network over those states: sex a parent of every variable, plus the
   Chow-Liu tree of the conditional mutual information given sex (tree-augmented),
   rooted at the column the branching prefers (most root-weighted splits per state;
   any root gives the same fitted distribution), parameters by counts with 0.5
   added to each state seen in the data;
3. bound ``Pr[positive | sex]`` with :func:`~skfairverify.ensembles.ensemble_bounds`
   to a width of 0.01, of 0.001 and exactly (each run from scratch; CPU time, nodes
   split and the least settled share), with a CPU budget per run;
4. next to it, the Monte Carlo sampling of the same network that a 0.01 width at 99%
   needs: per group ``n = (2 * 2.5758)**2 p (1 - p) / 0.01**2`` rows (p from the
   bounds), drawn by ancestral sampling (``BayesNet.sample``) of ``max n / Pr[group]``
   rows, each state mapped to a value inside it, then ``model.predict``; its CPU time
   and the ratio bounds / sampling. The sampled rates are checked against the bounds.

Last, issue 25's enumerable case: HGB on the four categorical inputs sex, race,
marital-status and relationship (420 combinations of states), the same steps.

Every time is CPU time (``time.process_time``), one thread (threadpoolctl).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py           # every model
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --quick   # three models
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from threadpoolctl import threadpool_limits

from skfairverify.datasets import load_adult
from skfairverify.ensembles import (
    FeatureStates,
    encode_states,
    ensemble_bounds,
    read_ensemble,
    refine_states,
)
from skfairverify.ensembles._masks import LeafMasks
from skfairverify.s3p import BayesNet

COLUMNS = ["sex", "age", "education-num", "hours-per-week", "marital-status", "relationship"]
#: Issue 25's enumerable case: four categorical inputs, 2 x 5 x 7 x 6 = 420 combinations.
CATEGORICAL = ["sex", "race", "marital-status", "relationship"]
N_ROWS = 15_000
Z99 = 2.5758
MAX_TIME = 20.0  # CPU seconds per bounds run


def _models():
    models = [
        ("HGB default (early stop)", HistGradientBoostingClassifier(random_state=0)),
        ("HGB 10 x depth 3", HistGradientBoostingClassifier(
            max_iter=10, max_depth=3, early_stopping=False, random_state=0)),
        ("HGB 100 x depth 3", HistGradientBoostingClassifier(
            max_iter=100, max_depth=3, early_stopping=False, random_state=0)),
        ("HGB 100 x depth 8", HistGradientBoostingClassifier(
            max_iter=100, max_depth=8, early_stopping=False, random_state=0)),
        ("HGB 500 x depth 3", HistGradientBoostingClassifier(
            max_iter=500, max_depth=3, early_stopping=False, random_state=0)),
        ("GB 10 x depth 3", GradientBoostingClassifier(n_estimators=10, random_state=0)),
        ("GB 100 x depth 3", GradientBoostingClassifier(n_estimators=100, random_state=0)),
        ("GB 500 x depth 3", GradientBoostingClassifier(n_estimators=500, random_state=0)),
        ("RF 10 x depth 3", RandomForestClassifier(10, max_depth=3, random_state=0)),
        ("RF 100 x depth 5", RandomForestClassifier(100, max_depth=5, random_state=0)),
        ("RF 500 x depth 8", RandomForestClassifier(500, max_depth=8, random_state=0)),
    ]
    try:
        import xgboost

        models.append(("XGB 100 x depth 6", xgboost.XGBClassifier(
            n_estimators=100, max_depth=6, n_jobs=1, random_state=0)))
    except ImportError:
        pass
    try:
        import lightgbm

        models.append(("LGBM 100 x 31 leaves", lightgbm.LGBMClassifier(
            n_estimators=100, n_jobs=1, verbose=-1, random_state=0)))
    except ImportError:
        pass
    return models


def _data(columns=COLUMNS):
    X, y = load_adult(return_X_y=True, dropna=True)
    X = X[columns].iloc[:N_ROWS]
    categorical = [c for c in columns if hasattr(X[c], "cat")]
    M = np.column_stack([X[c].cat.codes if c in categorical else X[c]
                         for c in columns]).astype(float)
    n_categories = {f: len(X[c].cat.categories) for f, c in enumerate(columns)
                    if c in categorical}
    return M, np.asarray(y)[:N_ROWS], n_categories


# ----------------------------------------------------------------- the network
def _conditional_mi(a, b, s, ca, cb, cs):
    table = np.zeros((cs, ca, cb))
    np.add.at(table, (s, a, b), 1.0)
    table /= table.sum()
    ps = table.sum((1, 2), keepdims=True)
    pas, pbs = table.sum(2, keepdims=True), table.sum(1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = table * np.log(table * ps / (pas * pbs))
    return float(np.nansum(terms))


def _tan(codes, cards, root, sensitive=0, alpha=0.5):
    """Sensitive -> every variable, plus the Chow-Liu tree given it, rooted at ``root``."""
    n = len(cards)
    weight = np.zeros((n, n))
    features = [v for v in range(n) if v != sensitive]
    for i in features:
        for j in features:
            if i < j:
                weight[i, j] = 1e-9 + _conditional_mi(
                    codes[:, i], codes[:, j], codes[:, sensitive], cards[i], cards[j],
                    cards[sensitive])
    tree = minimum_spanning_tree(-weight)
    _, predecessor = breadth_first_order(tree + tree.T, root, directed=False)
    parents = [()] * n
    for v in features:
        parents[v] = (sensitive,) if predecessor[v] < 0 else (sensitive, int(predecessor[v]))
    cpts = []
    for v in range(n):
        seen = np.bincount(codes[:, v], minlength=cards[v]) > 0
        table = np.zeros(tuple(cards[p] for p in parents[v]) + (cards[v],)) + alpha * seen
        np.add.at(table, tuple(codes[:, p] for p in parents[v]) + (codes[:, v],), 1.0)
        cpts.append(table / table.sum(axis=-1, keepdims=True))
    return BayesNet(cards, parents, cpts)


def _category_edges(thresholds, n):
    """One edge between each two adjacent codes: a threshold there, else the midpoint.

    A threshold between codes ``k`` and ``k + 1`` (HGB's ``k + 0.5``, XGBoost's float32
    just below ``k + 1``) separates them like any other, so each category is one state.
    """
    edges = [thresholds[(thresholds >= k) & (thresholds < k + 1)] for k in range(n - 1)]
    edges = [e if e.size else np.array([k + 0.5]) for k, e in enumerate(edges)]
    return np.unique(np.concatenate([*edges, thresholds]))


def _states(ensemble, n_categories):
    out = []
    for f in range(ensemble.n_features):
        if f in n_categories:
            thresholds = ensemble.thresholds(f)
            thresholds = thresholds[np.isfinite(thresholds)]
            out.append(FeatureStates(f, _category_edges(thresholds, n_categories[f])))
        else:
            out.append(refine_states(ensemble, f))
    return out


def _representatives(states):
    return [np.append(st.edges, st.edges[-1] + 1 if st.edges.size else 0.0) for st in states]


# ----------------------------------------------------------------- the baseline
def _monte_carlo(model, network, states, rates, rng):
    """CPU time of sampling the rows a 0.01 width at 99% needs, and the sampled rates."""
    sex = network.cpts[0]
    needed = np.ceil((2 * Z99) ** 2 * rates * (1 - rates) / 0.01 ** 2)
    n = int(np.max(needed / sex))
    reps = _representatives(states)
    start = time.process_time()
    draws = network.sample(n, random_state=rng)
    X = np.column_stack([reps[v][draws[:, v]] for v in range(len(states))])
    positive = model.predict(X) == model.classes_[1]
    seconds = time.process_time() - start
    sampled = np.array([positive[draws[:, 0] == g].mean() for g in range(len(sex))])
    return seconds, n, sampled


# ----------------------------------------------------------------- one model
def run(name, model, M, y, n_categories):
    with threadpool_limits(1):
        model.fit(M, y)
    ensemble = read_ensemble(model)
    states = _states(ensemble, n_categories)
    codes = encode_states(states, M, ensemble.input_dtype)
    cards = [s.n_states for s in states]
    importance = LeafMasks(ensemble, states, 10**9).importance / np.array(cards)
    root = 1 + int(np.argmax(importance[1:]))
    network = _tan(codes, cards, root)
    row = {"model": name, "trees": ensemble.n_trees, "leaves": ensemble.n_leaves,
           "states": "x".join(map(str, cards))}
    for tol in (0.01, 0.001, 0.0):
        with threadpool_limits(1):
            result = ensemble_bounds(ensemble, network, states, sensitive_features=0,
                                     tolerance=tol,
                                     max_time=MAX_TIME, max_table_size=500_000_000)
        row[tol] = result
    mid = (row[0.001].lower + row[0.001].upper) / 2
    with threadpool_limits(1):
        row["mc"] = _monte_carlo(model, network, states, mid, np.random.RandomState(0))
    return row


def _format(row) -> str:
    b1, b2, b0 = row[0.01], row[0.001], row[0.0]
    mc_seconds, mc_rows, sampled = row["mc"]
    inside = np.all((b2.lower - 0.01 <= sampled) & (sampled <= b2.upper + 0.01))
    def exact(b):
        if b.stopped == "finished":
            return f"{b.cpu_time:.2f} (exact)"
        return f"> {MAX_TIME:.0f}: width {b.width.max():.2g}"

    def cell(b):
        done = "" if b.stopped in ("tolerance", "finished") else f" ({b.stopped})"
        return (f"{b.cpu_time:.2f}{done} | {b.width.max():.4f} | {b.settled.min():.4f} | "
                f"{int(b.nodes_expanded.sum()):,}")
    return (f"| {row['model']} | {row['trees']} | {row['leaves']:,} | {row['states']} | "
            f"{cell(b1)} | {cell(b2)} | {exact(b0)} | {mc_seconds:.2f} | {mc_rows:,} | "
            f"{b1.cpu_time / mc_seconds:.2f} | "
            f"{' / '.join(f'{lo:.4f}-{hi:.4f}' for lo, hi in zip(b2.lower, b2.upper))} | "
            f"{'yes' if inside else 'NO'} |")


HEADER = (
    "| model | trees | leaves | states | 0.01: CPU s | width | settled | nodes | "
    "0.001: CPU s | width | settled | nodes | exact: CPU s | MC 0.01 at 99%: CPU s | rows | "
    "bounds / MC (0.01) | rate bounds (female / male) | MC inside |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three models only")
    args = parser.parse_args(argv)
    M, y, n_categories = _data()
    models = _models()
    if args.quick:
        models = [models[0], models[1], models[5]]
    print(HEADER, flush=True)
    for name, model in models:
        print(_format(run(name, model, M, y, n_categories)), flush=True)
    M, y, n_categories = _data(CATEGORICAL)
    model = HistGradientBoostingClassifier(random_state=0)
    print(_format(run("HGB default, 4 categorical inputs", model, M, y, n_categories)),
          flush=True)


if __name__ == "__main__":
    main()
