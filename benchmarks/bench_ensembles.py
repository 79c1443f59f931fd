"""Benchmark of the sound bounds of tree ensembles (issue 25) on Adult, COMPAS, German.

The workload of issue 25: Adult, the first 15,000 rows without missing values, inputs
sex, age, education-num, hours-per-week, marital-status and relationship (categories as
ordinal codes), sex sensitive. COMPAS (all 7,214 rows): race (African-American / other,
the ProPublica comparison) sensitive, sex, age, priors_count, juv_fel_count and
c_charge_degree. German credit (1,000 rows): sex sensitive, age, duration,
credit_amount, checking_status and credit_history. For every model on Adult
(HistGradientBoosting, GradientBoosting, RandomForest, and XGBoost / LightGBM when
installed; 10 to 500 trees of depth 3 to 8), and HGB / GB / RF of 10-500 trees on
COMPAS and German:

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

With ``--verifier``: ``method="auto"``'s check (``plan_bounds``: read, states taken, the
cost estimate, ``log2`` of the joint states of the variables the trees read) of every
model, HGB / GB / RF / ExtraTrees / XGBoost / LightGBM of 10-500 trees and depth 3-8 on
Adult, COMPAS and German (categories as ordinal codes, ``y`` given), then
``FairnessVerifier(method="bounds")`` and ``method="sampling"`` one after the other on
the same rows (``n_draws=0, tolerance=0.01``, or the defaults with ``--defaults``;
``max_time`` six times ``--max-time`` for the bounds, where it stops the branching, and
the default 600 CPU s for the sampling, where it only refuses): the CPU time of each
whole ``fit``, the widest interval, the ratio, and what ``method="auto"`` takes.
``--variants``: ensembles built to break the rule (1,000 trees, unlimited depth,
learning rate 0.3).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py           # every model
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --quick   # three models
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --datasets German --max-time 10
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --datasets German --models "RF 500"
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --verifier --max-time 10
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --verifier --variants --max-time 10
    OMP_NUM_THREADS=1 python benchmarks/bench_ensembles.py --verifier --defaults --models "10 x"
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

from skfairverify.datasets import load_adult, load_compas, load_german
from skfairverify.ensembles import (
    FeatureStates,
    encode_states,
    ensemble_bounds,
    read_ensemble,
    refine_states,
)
from skfairverify.ensembles._masks import LeafMasks
from skfairverify.ensembles._unsettled import design_for_width, sample_unsettled
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


def _adult():
    return load_adult(return_X_y=True, dropna=True)


def _compas():
    """COMPAS with race as African-American / other (the ProPublica comparison)."""
    X, y = load_compas(return_X_y=True)
    X = X.copy()
    X["race"] = (X["race"] == "African-American").map(
        {False: "other", True: "African-American"}).astype("category")
    return X, y


def _german():
    return load_german(return_X_y=True)


#: name -> (loader, columns with the sensitive one first); the usual sensitive features
DATASETS = {
    "Adult": (_adult, COLUMNS),
    "COMPAS": (_compas, ["race", "sex", "age", "priors_count", "juv_fel_count",
                         "c_charge_degree"]),
    "German": (_german, ["sex", "age", "duration", "credit_amount", "checking_status",
                         "credit_history"]),
}


def _data(columns=COLUMNS, loader=_adult):
    X, y = loader()
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
    # in batches: the sampler allocates rows x the largest variable's states
    batch = max(1, 200_000_000 // max(network.cardinalities))
    draws = np.concatenate([
        network.sample(min(batch, n - i), random_state=rng.randint(2**31),
                       max_table_size=500_000_000) for i in range(0, n, batch)])
    X = np.column_stack([reps[v][draws[:, v]] for v in range(len(states))])
    positive = model.predict(X) == model.classes_[1]
    seconds = time.process_time() - start
    sampled = np.array([positive[draws[:, 0] == g].mean() for g in range(len(sex))])
    return seconds, n, sampled


def _stratified(ensemble, network, states, rates, width=0.01, tolerance=0.05):
    """Bounds to ``tolerance``, then only the unsettled mass sampled to ``width`` at 99%.

    Two designs on the same bounds: proportional draws, ``(2 z)**2 / 4 * (unsettled
    share)**2 / width**2`` per group (the worst case q = 1/2 of the unsettled share's
    variance) with the Clopper-Pearson interval; and, where the package's rule takes it
    (``design_for_width``: those draws at least eight times its pilot over the groups
    with unsettled mass), the Neyman design: a proportional pilot of a fortieth of them
    (at least 200), then fresh draws per stratum of the unsettled nodes (by score), as
    many as the pilot forecasts for ``width``, at most the proportional draws (else the
    proportional design is repeated). Against the
    rows plain sampling of the whole network needs for the same width
    (``_monte_carlo``'s ``n``).
    """
    start = time.process_time()
    bounds = ensemble_bounds(ensemble, network, states, sensitive_features=0,
                             tolerance=tolerance, max_time=MAX_TIME,
                             max_table_size=500_000_000)
    seconds = time.process_time() - start
    share = bounds.upper - bounds.lower
    # 1.25: Clopper-Pearson at a few hundred draws is wider than the normal formula
    n = np.maximum(np.ceil(1.25 * (2 * Z99) ** 2 / 4 * share ** 2 / width ** 2),
                   1).astype(int)
    out = {"settled": float(bounds.settled.min()),
           "nodes": int(bounds.nodes_expanded.sum())}
    designs = [("prop", {"n_samples": n})]
    design = design_for_width(n, width, share)  # the package's rule, as the verifier's
    if design["allocation"] == "neyman":
        designs.append(("neyman", design))
    for key, kwargs in designs:
        start = time.process_time()
        result = sample_unsettled(ensemble, network, states, bounds, confidence=0.99,
                                  random_state=0, max_table_size=500_000_000, **kwargs)
        out[key] = {"seconds": seconds + time.process_time() - start,
                    "evaluations": result.n_evaluations,
                    "width": float(result.width.max()), "estimate": result.estimate,
                    "low": result.interval_lower, "high": result.interval_upper}
    out.setdefault("neyman", out["prop"])
    return out


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
        row["strat"] = _stratified(ensemble, network, states, mid)
        # the rows plain sampling needs at the rate: the bounds' midpoint where they are
        # within 0.01, else the stratified estimate (not 1/2, the worst case)
        wide = row[0.001].upper - row[0.001].lower > 0.01
        rate = np.where(wide, row["strat"]["neyman"]["estimate"], mid)  # unbiased
        row["mc"] = _monte_carlo(model, network, states, rate, np.random.RandomState(0))
    return row


def _format(row) -> str:
    b1, b2, b0 = row[0.01], row[0.001], row[0.0]
    mc_seconds, mc_rows, sampled = row["mc"]
    st = row["strat"]
    inside = np.all((b2.lower - 0.01 <= sampled) & (sampled <= b2.upper + 0.01))
    for key in ("prop", "neyman"):
        inside &= np.all((st[key]["low"] - 0.01 <= sampled)
                         & (sampled <= st[key]["high"] + 0.01))

    def exact(b):
        if b.stopped == "finished":
            return f"{b.cpu_time:.2f} (exact)"
        return f"> {MAX_TIME:.0f}: width {b.width.max():.2g}"

    def design(d):
        saved = (f"{mc_rows / d['evaluations']:.0f}x" if d["evaluations"]
                 else "exact (no draws)")
        return f"{d['seconds']:.2f} | {d['evaluations']:,} | {d['width']:.4f} | {saved}"

    def cell(b):
        done = "" if b.stopped in ("tolerance", "finished") else f" ({b.stopped})"
        return (f"{b.cpu_time:.2f}{done} | {b.width.max():.4f} | {b.settled.min():.4f} | "
                f"{int(b.nodes_expanded.sum()):,}")
    return (f"| {row['model']} | {row['trees']} | {row['leaves']:,} | {row['states']} | "
            f"{cell(b1)} | {cell(b2)} | {exact(b0)} | {mc_seconds:.2f} | {mc_rows:,} | "
            f"{b1.cpu_time / mc_seconds:.2f} | {b2.cpu_time / (100 * mc_seconds):.3f} | "
            f"{st['nodes']:,} | {design(st['prop'])} | {design(st['neyman'])} | "
            f"{' / '.join(f'{lo:.4f}-{hi:.4f}' for lo, hi in zip(b2.lower, b2.upper))} | "
            f"{'yes' if inside else 'NO'} |")


HEADER = (
    "| model | trees | leaves | states | 0.01: CPU s | width | settled | nodes | "
    "0.001: CPU s | width | settled | nodes | exact: CPU s | MC 0.01 at 99%: CPU s | rows | "
    "bounds / MC (0.01) | bounds / MC (0.001, MC x100) | 0.05: nodes | "
    "bounds 0.05 + sampling: CPU s | "
    "evaluations | width | rows saved | Neyman: CPU s | evaluations | width | rows saved | "
    "rate bounds (per group) | MC inside |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    "---|---|---|---|---|---|---|")


def _subset(models, quick):
    """Every model on Adult; sizes 10-500 trees, depth 3-8, one of each kind elsewhere."""
    if quick:
        return [models[0], models[1], models[5]]
    return models


OTHER_MODELS = ("HGB 10 x depth 3", "HGB 100 x depth 3", "HGB 100 x depth 8",
                "HGB 500 x depth 3", "GB 100 x depth 3", "RF 10 x depth 3",
                "RF 100 x depth 5", "RF 500 x depth 8")


# ----------------------------------------------------------------- the verifier's paths
def _frame(columns, loader):
    """The rows of a data set as the verifier takes them: categories as ordinal codes."""
    X, y = loader()
    X = X[columns].iloc[:N_ROWS].copy()
    for c in X.columns:
        if hasattr(X[c], "cat"):
            X[c] = X[c].cat.codes
    return X, np.asarray(y)[:N_ROWS]


def _fit_verifier(model, X, y, sensitive, **params):
    from skfairverify import FairnessVerifier

    start = time.process_time()
    ver = FairnessVerifier(model, sensitive, random_state=0, **params).fit(X, y)
    g = ver.groups_
    return {"seconds": time.process_time() - start, "method": ver.method_,
            "width": float((g.ci_high - g.ci_low).max()), "rows": int(ver.n_samples_),
            "settled": float(g["settled"].min()) if "settled" in g else None}


def verifier_row(name, model, X, y, params):
    """``method="auto"``'s check, then the bounds and the sampling paths, one after the other."""
    from sklearn.frozen import FrozenEstimator

    from skfairverify import FairnessVerifier
    from skfairverify.verification._ensemble_path import plan_bounds
    from skfairverify.verification._settings import Settings

    sensitive = X.columns[0]
    with threadpool_limits(1):
        model = FrozenEstimator(model.fit(X, y))
        settings = Settings.of(FairnessVerifier(model, sensitive, method="auto", **params))
        start = time.process_time()
        plan = plan_bounds(settings, model, X, None, [sensitive], list(X.columns))
        check = time.process_time() - start
        bounds = (_fit_verifier(model, X, y, sensitive, method="bounds", **params)
                  if plan.path is not None else None)
        # the sampling path's max_time is a refusal, not a stop: the default 600 CPU s
        sampling = _fit_verifier(model, X, y, sensitive, method="sampling",
                                 **{**params, "max_time": 600.0})
    cost = plan.cost
    head = (f"| {name} | {cost.n_trees if cost else '-'} | "
            f"{f'{cost.n_leaves:,}' if cost else '-'} | "
            f"{'x'.join(map(str, cost.states)) if cost else '-'} | "
            f"{f'{cost.cost:.1f}' if cost else '-'} | {check:.2f} | ")
    if bounds is None:
        return head + (f"refused | - | - | - | {sampling['seconds']:.2f} | "
                       f"{sampling['width']:.4f} | - | samples: {plan.reason[:70]} |")
    return head + (f"{bounds['seconds']:.2f} | {bounds['width']:.4f} | "
                   f"{bounds['settled']:.4f} | {bounds['rows']:,} | "
                   f"{sampling['seconds']:.2f} | {sampling['width']:.4f} | "
                   f"{bounds['seconds'] / sampling['seconds']:.2f} | "
                   f"{'bounds' if plan.takes else 'samples: ' + plan.reason[:70]} |")


VERIFIER_HEADER = (
    "| model | trees | leaves | states read | cost (log2 joint states) | check: CPU s | "
    "bounds: CPU s | width | settled | rows sampled | sampling: CPU s | width | "
    "bounds / sampling | auto |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def _extra_trees():
    from sklearn.ensemble import ExtraTreesClassifier

    return [("ET 100 x depth 5", ExtraTreesClassifier(100, max_depth=5, random_state=0)),
            ("ET 500 x depth 8", ExtraTreesClassifier(500, max_depth=8, random_state=0))]


def _variants():
    """Ensembles built to break method="auto"'s rule: many deep trees, large leaf values."""
    import lightgbm
    import xgboost

    return [
        ("RF default (100 x unlimited depth)", RandomForestClassifier(100, random_state=0)),
        ("GB 1000 x depth 5", GradientBoostingClassifier(n_estimators=1000, max_depth=5,
                                                         random_state=0)),
        ("HGB 500 x depth 8, learning rate 0.3", HistGradientBoostingClassifier(
            max_iter=500, max_depth=8, learning_rate=0.3, early_stopping=False,
            random_state=0)),
        ("XGB 500 x depth 8", xgboost.XGBClassifier(n_estimators=500, max_depth=8, n_jobs=1,
                                                    random_state=0)),
        ("LGBM 500 x 63 leaves", lightgbm.LGBMClassifier(
            n_estimators=500, num_leaves=63, n_jobs=1, verbose=-1, random_state=0)),
    ]


def verifier_main(args, params):
    """Every model of every data set through the verifier's bounds and sampling paths."""
    import warnings

    from skfairverify.verification import ModelCheckWarning

    warnings.simplefilter("ignore", ModelCheckWarning)
    print(f"FairnessVerifier params: {params}", flush=True)
    print(VERIFIER_HEADER, flush=True)
    for dataset in args.datasets:
        loader, columns = DATASETS[dataset]
        X, y = _frame(columns, loader)
        models = _variants() if args.variants else _models() + _extra_trees()
        if args.models:
            models = [m for m in models if any(w in m[0] for w in args.models)]
        for name, model in models:
            print(verifier_row(f"{dataset}: {name}", model, X, y, params), flush=True)


def main(argv=None):
    global MAX_TIME
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three models only")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS),
                        choices=list(DATASETS))
    parser.add_argument("--max-time", type=float, default=MAX_TIME,
                        help="CPU seconds per bounds run")
    parser.add_argument("--models", nargs="+", default=None,
                        help="only the models whose name contains one of these")
    parser.add_argument("--verifier", action="store_true",
                        help="FairnessVerifier's bounds and sampling paths side by side, "
                             "with method='auto''s check and cost estimate")
    parser.add_argument("--defaults", action="store_true",
                        help="with --verifier: the verifier's defaults (n_draws=50, "
                             "tolerance=0.005), else n_draws=0, tolerance=0.01")
    parser.add_argument("--variants", action="store_true",
                        help="with --verifier: the ensembles built to break the rule")
    args = parser.parse_args(argv)
    MAX_TIME = args.max_time
    if args.verifier:
        params = {"max_time": 6 * MAX_TIME}
        if not args.defaults:
            params.update(n_draws=0, tolerance=0.01)
        verifier_main(args, params)
        return
    print(HEADER, flush=True)
    for dataset in args.datasets:
        loader, columns = DATASETS[dataset]
        M, y, n_categories = _data(columns, loader)
        models = _subset(_models(), args.quick)
        if dataset != "Adult":
            models = [m for m in models if m[0] in OTHER_MODELS or args.quick]
        if args.models:
            models = [m for m in models if any(w in m[0] for w in args.models)]
        for name, model in models:
            print(_format(run(f"{dataset}: {name}", model, M, y, n_categories)), flush=True)
        if dataset == "Adult" and not args.models:
            M, y, n_categories = _data(CATEGORICAL)
            model = HistGradientBoostingClassifier(random_state=0)
            print(_format(run("Adult: HGB default, 4 categorical inputs", model, M, y,
                              n_categories)), flush=True)


if __name__ == "__main__":
    main()
