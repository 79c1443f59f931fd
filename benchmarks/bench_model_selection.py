"""Benchmark: the fairness scorers inside ``GridSearchCV`` (issue 26).

The workload of issue 26: 4,000 rows, 3 features (the sensitive column ``s``, a proxy
of it and an independent feature), ``GridSearchCV(pipeline, {"C": [0.01, 1.0]}, cv=3)``
with a logistic regression. Each search runs with accuracy only, then with accuracy
and each fairness scorer (``make_esl_scorer``, ``make_verifier_scorer``,
``make_cflips_scorer(k=5)``), then with all four fairness scorers together (the three
and ``make_ndccf_scorer(k=5)``). The counterfactual scorers run with their cache of the
cross-fitted sensitive classifier (``cache=True``, the default) and without it
(``cache=False``), and the scores of the two are compared (they must be equal). With
the cache, the CFlips and nDCCF scorers of one candidate on one fold also share one
audit (``AUDIT_CACHE``).

After a warm-up search on 1,000 rows (imports), every search runs ``--repeat`` times,
starting with an empty cache, the configurations interleaved (A B C ... A B C)
so that a drift of the machine's speed affects them alike; the table gives the median
wall seconds, the ratio to the accuracy-only search of the same run, and the seconds
per fairness-scorer call ((search - accuracy only) / calls). All the models run with one
thread (threadpoolctl), as the audit fits its sensitive classifiers.

The audit (``--part audit``): ``python -m skfairverify audit --dataset <name> --quiet
--json <file>`` on each bundled dataset (german, compas, adult), end to end in a fresh
process (imports included), with every step and with the counterfactual step left out
(``--steps verify esl``), interleaved; the table gives the median wall and CPU seconds
(``resource.getrusage`` of the child) of each and the audit's own step timings.

Usage::

    python benchmarks/bench_model_selection.py             # 3 repeats, both parts
    python benchmarks/bench_model_selection.py --repeat 1  # one pass
    python benchmarks/bench_model_selection.py --part audit --datasets german
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from skfairverify.counterfactual._crossfit import SENSITIVE_CLASSIFIER_CACHE
from skfairverify.metrics import (
    make_cflips_scorer,
    make_esl_scorer,
    make_ndccf_scorer,
    make_verifier_scorer,
)
from skfairverify.metrics._counterfactual_scorer import AUDIT_CACHE

GRID = {"logisticregression__C": [0.01, 1.0]}
AUDIT_DATASETS = ("german", "compas", "adult")
AUDIT_STEPS = {"every step": [], "counterfactuals off": ["--steps", "verify", "esl"]}
CV = 3
SEED = 0


def make_data(n_rows: int = 4000, seed: int = SEED):
    """Rows with a binary sensitive column, a proxy of it and an independent feature."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n_rows)
    proxy = s + rng.normal(0.0, 0.8, n_rows)
    other = rng.normal(size=n_rows)
    y = (proxy + other + rng.normal(0.0, 0.5, n_rows) > 0.8).astype(int)
    return pd.DataFrame({"s": s, "proxy": proxy, "other": other}), y


def scorers(cache: bool) -> dict:
    """The fairness scorers, by name."""
    counterfactual = {"sensitive_features": "s", "k": 5, "random_state": SEED,
                      "cache": cache}
    return {
        "esl": make_esl_scorer(sensitive_features="s"),
        "verifier": make_verifier_scorer(sensitive_features="s", random_state=SEED),
        "cflips": make_cflips_scorer(**counterfactual),
        "ndccf": make_ndccf_scorer(**counterfactual),
    }


def configurations() -> dict:
    """Name -> (fairness scorer names, cache)."""
    return {
        "accuracy only": ((), True),
        "+ make_esl_scorer": (("esl",), True),
        "+ make_verifier_scorer": (("verifier",), True),
        "+ make_cflips_scorer(k=5), cache=False": (("cflips",), False),
        "+ make_cflips_scorer(k=5)": (("cflips",), True),
        "all four, cache=False": (("esl", "verifier", "cflips", "ndccf"), False),
        "all four": (("esl", "verifier", "cflips", "ndccf"), True),
    }


def run_search(X, y, names, cache: bool):
    """One search: (wall seconds, cv_results_)."""
    SENSITIVE_CLASSIFIER_CACHE.clear()  # every search starts cold
    AUDIT_CACHE.clear()
    chosen = scorers(cache)
    scoring = {"accuracy": "accuracy", **{n: chosen[n] for n in names}}
    search = GridSearchCV(make_pipeline(StandardScaler(), LogisticRegression()), GRID,
                          cv=CV, scoring=scoring, refit="accuracy")
    start = time.perf_counter()
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        search.fit(X, y)
    return time.perf_counter() - start, search.cv_results_


def score_columns(results, names) -> np.ndarray:
    """The per-fold test scores of the fairness scorers, one column per fold and scorer."""
    return np.array([results[f"split{i}_test_{n}"] for n in names for i in range(CV)])


def run_audit_process(dataset: str, steps: list) -> dict:
    """One audit in a fresh process: wall and CPU seconds, and its step timings."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        command = [sys.executable, "-m", "skfairverify", "audit", "--dataset", dataset,
                   *steps, "--quiet", "--json", out]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(out, encoding="utf-8") as fh:
            report = json.load(fh)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "steps": report.get("timings_seconds", {})}


def audit_part(datasets, repeat: int) -> None:
    """The audit of each bundled dataset with and without its counterfactual step."""
    runs = {(d, name): [] for d in datasets for name in AUDIT_STEPS}
    for _ in range(repeat):
        for dataset in datasets:
            for name, steps in AUDIT_STEPS.items():
                runs[dataset, name].append(run_audit_process(dataset, steps))
    print(f"python -m skfairverify audit --dataset <name>, {repeat} run(s) interleaved, "
          f"median seconds; load average now: {os.getloadavg()[0]:.2f} (2 cores); "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print()
    print("| dataset | steps | wall (s) | CPU (s) | x counterfactuals off (wall) "
          "| step timings (s) |")
    print("|---|---|---|---|---|---|")
    for dataset in datasets:
        off = statistics.median(r["wall"] for r in runs[dataset, "counterfactuals off"])
        for name in AUDIT_STEPS:
            done = runs[dataset, name]
            wall = statistics.median(r["wall"] for r in done)
            cpu = statistics.median(r["cpu"] for r in done)
            steps = done[0]["steps"]
            shown = ", ".join(f"{k} {statistics.median(r['steps'][k] for r in done):.2f}"
                              for k in steps)
            print(f"| {dataset} | {name} | {wall:.2f} | {cpu:.2f} | {wall / off:.2f}x "
                  f"| {shown} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--part", choices=["search", "audit", "both"], default="both")
    parser.add_argument("--datasets", nargs="*", default=list(AUDIT_DATASETS),
                        choices=AUDIT_DATASETS)
    args = parser.parse_args(argv)
    if args.part in ("search", "both"):
        search_part(args)
    if args.part in ("audit", "both"):
        if args.part == "both":
            print()
        audit_part(args.datasets, args.repeat)


def search_part(args) -> None:
    """The searches of the workload, each scorer and all four, as a ratio to accuracy."""
    X, y = make_data(args.rows)
    configs = configurations()
    run_search(*make_data(1000), configs["all four"][0], True)  # warm-up: imports, caches
    times = {name: [] for name in configs}
    results = {}
    for _ in range(args.repeat):
        for name, (names, cache) in configs.items():
            seconds, results[name] = run_search(X, y, names, cache)
            times[name].append(seconds)

    n_calls = len(GRID["logisticregression__C"]) * CV
    base = statistics.median(times["accuracy only"])
    print(f"{args.rows} rows, GridSearchCV(cv={CV}) over {GRID}, {args.repeat} run(s) "
          f"interleaved, median wall seconds; load average before: "
          f"{os.getloadavg()[0]:.2f} (2 cores)")
    print()
    print("| scoring | search time (s) | x accuracy only | per scorer call (s) |")
    print("|---|---|---|---|")
    for name, (names, _) in configs.items():
        median = statistics.median(times[name])
        per_call = ("-" if not names else
                    f"{(median - base) / (n_calls * len(names)):.3f}")
        print(f"| {name} | {median:.2f} | {median / base:.1f}x | {per_call} |")
    print()
    for off, on, names in (("+ make_cflips_scorer(k=5), cache=False",
                            "+ make_cflips_scorer(k=5)", ("cflips",)),
                           ("all four, cache=False", "all four",
                            ("esl", "verifier", "cflips", "ndccf"))):
        a, b = score_columns(results[off], names), score_columns(results[on], names)
        print(f"scores with the cache vs without ({on!r}, {a.size} fold scores): "
              f"max |difference| = {np.max(np.abs(a - b)):.3g}")
    print("(the last search's caches: sensitive classifiers", len(SENSITIVE_CLASSIFIER_CACHE),
          "entries,", SENSITIVE_CLASSIFIER_CACHE.hits, "hits,",
          SENSITIVE_CLASSIFIER_CACHE.misses, "fits; audits", len(AUDIT_CACHE), "entries,",
          AUDIT_CACHE.hits, "hits (the nDCCF scorer reading the CFlips scorer's audit) )")


if __name__ == "__main__":
    main()
