"""Benchmark: the default sensitive classifier of the counterfactual audit (issue 26).

For every bundled dataset (the loaders of :mod:`skfairverify.datasets` and the CSV files
of Communities and Crime and Ricci that ``/work/shared/datasets`` or ``--data`` holds)
and subsamples of them, the audit of the command line's unaware logistic regression
(``skfairverify.audit.default_model`` on the non-sensitive columns, 70/30 split
stratified by label, ``k=10``) runs with each candidate sensitive classifier,
cross-fitted over 5 folds as :class:`~skfairverify.CounterfactualFairness` does:

* ``hgb-100`` the HistGradientBoostingClassifier of 100 iterations of 31 leaves
  (scikit-learn's defaults, the default before issue 26; ``early_stopping="auto"`` stops
  early beyond 10,000 rows only);
* ``hgb-es`` the same with early stopping always (``validation_fraction=0.1``,
  ``n_iter_no_change=10``, at most 100 iterations);
* ``hgb-es5`` early stopping after 5 iterations without progress;
* ``hgb-50``, ``hgb-30`` 50, 30 iterations; ``hgb-leaf15`` 15 leaves; ``hgb-leaf15-es``
  15 leaves and early stopping; ``hgb-50-leaf15 (default)`` 50 iterations of 15 leaves,
  the default since issue 26;
* ``logistic`` a logistic regression on one-hot categories and scaled numbers;
* ``hgb-50-leaf15 cv3`` the default cross-fitted over 3 folds instead of 5
  (``CANDIDATE_CV``).

``--baseline`` names the candidate the AUC changes and CPU ratios compare with
(``hgb-100`` unless given).

Per dataset and candidate: the held-out (out-of-fold) accuracy and ROC AUC of the
sensitive classifier as ``evaluate`` reports them, the CFlips and nDCCF deltas, the
iterations the boosting ran (mean over the folds) and the CPU seconds of ``fit`` (the
cross-fitting; the decision model is frozen; the least of 2 fits) and of ``evaluate``,
with every thread pool at one thread.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_sensitive_classifier.py
    OMP_NUM_THREADS=1 python benchmarks/bench_sensitive_classifier.py --only german ricci
    OMP_NUM_THREADS=1 python benchmarks/bench_sensitive_classifier.py \\
        --candidates 'hgb-50-leaf15 (default)' 'hgb-50-leaf15 cv3' \\
        --baseline 'hgb-50-leaf15 (default)'
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from skfairverify import CounterfactualFairness
from skfairverify.audit import default_model
from skfairverify.counterfactual import default_sensitive_classifier
from skfairverify.datasets import load_adult, load_compas, load_german, load_titanic

SEED = 0
K = 10
MAX_TEST_ROWS = 3000
FIT_REPEAT = 2
DATA = os.environ.get("SKFAIRVERIFY_DATA", "/work/shared/datasets")

#: Candidate -> parameters of the default pipeline's ``classify`` step (None: logistic),
#: every one given (the default pipeline's own change with issue 26).
_ES = {"early_stopping": True}
CANDIDATES = {
    "hgb-100": {"max_iter": 100, "max_leaf_nodes": 31, "early_stopping": "auto"},
    "hgb-es": {"max_iter": 100, "max_leaf_nodes": 31, **_ES},
    "hgb-es5": {"max_iter": 100, "max_leaf_nodes": 31, **_ES, "n_iter_no_change": 5},
    "hgb-50": {"max_iter": 50, "max_leaf_nodes": 31, "early_stopping": "auto"},
    "hgb-30": {"max_iter": 30, "max_leaf_nodes": 31, "early_stopping": "auto"},
    "hgb-leaf15": {"max_iter": 100, "max_leaf_nodes": 15, "early_stopping": "auto"},
    "hgb-leaf15-es": {"max_iter": 100, "max_leaf_nodes": 15, **_ES},
    "hgb-50-leaf15 (default)": {"max_iter": 50, "max_leaf_nodes": 15,
                                "early_stopping": "auto"},
    "logistic": None,
    "hgb-50-leaf15 cv3": {"max_iter": 50, "max_leaf_nodes": 15, "early_stopping": "auto"},
}
#: Candidate -> folds of its cross-fit, when not the audit's default of 5.
CANDIDATE_CV = {"hgb-50-leaf15 cv3": 3}


def _bunch(loader, **kwargs):
    bunch = loader(**kwargs)
    y = pd.Series(np.asarray(bunch.target), index=bunch.data.index)
    return bunch.data, y, list(bunch.sensitive_features)


def german():
    X, y, s = _bunch(load_german)
    return X, y, s, ("Male", "old")


def adult():
    X, y, s = _bunch(load_adult, dropna=True)
    return X.drop(columns=["split", "fnlwgt"]), y, s, ("Male", "White")


def compas():
    X, y, _ = _bunch(load_compas, propublica_filter=True)
    return X, y, ["race"], "Caucasian"


def titanic():
    X, y, _ = _bunch(load_titanic)
    X = X.drop(columns=["PassengerId", "Name", "Ticket", "Cabin"]).dropna()
    for col in ("Sex", "Embarked"):
        X[col] = X[col].astype(object).astype("category")
    return X, y.loc[X.index], ["Sex"], "female"


def communities():
    path = os.path.join(DATA, "communities")
    names = [line.split()[1] for line in open(os.path.join(path, "communities.names"))
             if line.startswith("@attribute")]
    frame = pd.read_csv(os.path.join(path, "communities.data"), header=None, names=names,
                        na_values="?")
    frame = frame.drop(columns=names[:5]).dropna(axis=1, thresh=len(frame) // 2).dropna()
    y = (frame.pop("ViolentCrimesPerPop") < 0.25).astype(int)  # favourable: low crime
    share = frame.pop("racepctblack")
    frame["black_share"] = pd.Categorical(np.where(share > 0.06, "high", "low"))
    return frame, y, ["black_share"], "low"


def ricci():
    frame = pd.read_csv(os.path.join(DATA, "ricci", "ricci.csv"))
    y = (frame.pop("Combine") >= 70).astype(int)
    for col in ("Position", "Race"):
        frame[col] = frame[col].astype("category")
    return frame, y, ["Race"], "W"


def synthetic():
    """The scorer workload of issue 26 on one validation fold (1,333 rows)."""
    rng = np.random.default_rng(SEED)
    n = 1333
    s = rng.integers(0, 2, n)
    proxy = s + rng.normal(0.0, 0.8, n)
    other = rng.normal(size=n)
    y = pd.Series((proxy + other + rng.normal(0.0, 0.5, n) > 0.8).astype(int))
    return pd.DataFrame({"s": s, "proxy": proxy, "other": other}), y, ["s"], 1


def subsample(make, n):
    def sub():
        X, y, s, p = make()
        rows = X.sample(n=n, random_state=SEED).index
        return X.loc[rows], y.loc[rows], s, p
    sub.__name__ = f"{make.__name__} ({n:,} rows)"
    return sub


DATASETS = [german, titanic, ricci, communities, compas, subsample(compas, 1000),
            adult, subsample(adult, 4000), subsample(adult, 1000), synthetic]


def logistic(X: pd.DataFrame):
    """Logistic regression on one-hot categories and imputed, scaled numbers."""
    return make_pipeline(
        make_column_transformer(
            (make_pipeline(SimpleImputer(strategy="median"), StandardScaler()),
             make_column_selector(dtype_include="number")),
            (OneHotEncoder(handle_unknown="ignore"),
             make_column_selector(dtype_exclude="number"))),
        LogisticRegression(max_iter=2000))


def candidate(name: str, X_ns: pd.DataFrame):
    params = CANDIDATES[name]
    if params is None:
        return logistic(X_ns)
    return default_sensitive_classifier(X_ns, SEED).set_params(
        **{f"classify__{k}": v for k, v in params.items()})


def iterations(cf) -> float:
    fold_models = getattr(cf.sensitive_classifier_, "estimators_", [])
    counts = [getattr(m[-1], "n_iter_", np.nan) for m in fold_models]
    return float(np.mean(counts)) if counts else np.nan


def audit(make, name: str) -> dict:
    X, y, sensitive, privileged = make()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=SEED)
    features = [c for c in X.columns if c not in sensitive]
    model = make_pipeline(
        make_column_transformer(("passthrough", features), remainder="drop",
                                verbose_feature_names_out=False).set_output(
            transform="pandas"),
        default_model()).fit(X_train, y_train)
    X_test = X_test.iloc[:MAX_TEST_ROWS]
    cf = CounterfactualFairness(FrozenEstimator(model), sensitive, k=K,
                                privileged=privileged, cv=CANDIDATE_CV.get(name, 5),
                                random_state=SEED, verbose=0,
                                sensitive_classifier=candidate(name, X_train[features]))
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        fit = np.inf
        for _ in range(FIT_REPEAT):  # the least CPU time of the repeats
            t0 = time.process_time()
            cf.fit(X_train, y_train)
            fit = min(fit, time.process_time() - t0)
        t0 = time.process_time()
        res = cf.evaluate(X_test)
        evaluate = time.process_time() - t0
    summary = res.sensitive_classifier
    return {"dataset": make.__name__, "train rows": len(X_train), "candidate": name,
            "accuracy": summary["accuracy"], "auc": summary["roc_auc"],
            "cflips delta": res.cflips["delta"], "ndccf delta": res.ndccf["delta"],
            "cflips unpriv": res.cflips["unprivileged"],
            "iterations": iterations(cf), "fit cpu s": fit, "evaluate cpu s": evaluate}


def markdown(table: pd.DataFrame) -> str:
    """A markdown table (4 decimals; no tabulate needed)."""
    def cell(v):
        return f"{v:.4f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(map(str, table.columns)) + " |",
             "|" + "---|" * table.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="dataset names (prefixes) to run")
    parser.add_argument("--candidates", nargs="*", default=list(CANDIDATES))
    parser.add_argument("--baseline", default="hgb-100",
                        help="the candidate the AUC and CPU ratios compare with")
    args = parser.parse_args(argv)
    base_name = args.baseline
    rows = []
    for make in DATASETS:
        if args.only and not any(make.__name__.startswith(o) for o in args.only):
            continue
        for name in args.candidates:
            rows.append(audit(make, name))
            print(markdown(pd.DataFrame(rows[-1:])).splitlines()[-1], flush=True)
    table = pd.DataFrame(rows)
    base = table[table.candidate == base_name].set_index("dataset")
    table["auc change"] = table.auc - table.dataset.map(base.auc)
    table["fit ratio"] = table["fit cpu s"] / table.dataset.map(base["fit cpu s"])
    print(f"\nload average: {os.getloadavg()[0]:.2f} (2 cores)\n")
    print(markdown(table))
    print(f"\nper candidate: worst AUC change, median CPU-time ratio to {base_name}")
    print(markdown(table.groupby("candidate", sort=False).agg(
        worst_auc_change=("auc change", "min"),
        median_fit_ratio=("fit ratio", "median")).reset_index()))


if __name__ == "__main__":
    main()
