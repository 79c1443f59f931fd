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
audit (``AUDIT_CACHE``). The "shared classifier" rows hand the counterfactual scorers one
sensitive classifier cross-fitted on the search's 4,000 rows
(``fit_sensitive_classifier``), fitted inside the timed span; the table gives its CPU
seconds apart and the search's ratio without them (its scores are compared with those of
the classifier of each fold: they differ, it is another classifier). The last row is no
search: the three cross-fits of the default sensitive classifier that a search with the
default counterfactual scorers runs (one per validation fold, five gradient boostings
each), timed alone in the same run: the floor of those searches while the default
classifier and the cross-fitting are what they are.

After a warm-up search on 1,000 rows (imports), every search runs ``--repeat`` times,
starting with an empty cache, the configurations interleaved (A B C ... A B C)
so that a drift of the machine's speed affects them alike; the table gives the median
wall seconds, the ratio to the accuracy-only search of the same run, the seconds
per fairness-scorer call ((search - accuracy only) / calls), and the median CPU seconds
of the process during the search with their ratio (steadier than wall seconds when
other processes share the cores). All the models run with one
thread (threadpoolctl), as the audit fits its sensitive classifiers.

The audit (``--part audit``): ``python -m skfairverify audit --dataset <name> --quiet
--json <file>`` on each bundled dataset (german, compas, adult), end to end in a fresh
process (imports included), with every step and with the counterfactual step left out
(``--steps verify esl``), interleaved; the table gives the median wall and CPU seconds
(``resource.getrusage`` of the child) of each and the audit's own step timings.

The single calls (``--part calls``): the CPU seconds of one CFlips scorer call on a
validation fold of the workload with the fold's sensitive classifier cached (a later
candidate) and with nothing cached (the first), and of the CFlips then the nDCCF call
(median of at least 9), and of the CFlips (then nDCCF) call with the shared classifier.
The script runs against an older package too (``PYTHONPATH``; the shared rows are left
out), for a side-by-side comparison.

The verifier scorer (``--part verifier``): every metric, rate and bound of
``make_verifier_scorer`` on the workload and on German credit (``sex``), 2,000 COMPAS rows
(``race``) and 3,000 Adult rows (``sex``), each scoring the audit's unaware model (the
workload's pipeline) at both values of C fitted on 3 folds in turn: the CPU seconds of the
calls per scorer, and the scores (``--out`` writes them, ``--against`` compares them with
those of another run, e.g. of another package by ``PYTHONPATH``).

Usage::

    python benchmarks/bench_model_selection.py             # 3 repeats, both parts
    python benchmarks/bench_model_selection.py --repeat 1  # one pass
    python benchmarks/bench_model_selection.py --part audit --datasets german
    python benchmarks/bench_model_selection.py --part calls
    python benchmarks/bench_model_selection.py --part verifier --out new.json \\
        --against old.json
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
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from skfairverify.counterfactual import (
    CrossFittedSensitiveClassifier,
    default_sensitive_classifier,
)
from skfairverify.counterfactual._crossfit import SENSITIVE_CLASSIFIER_CACHE
from skfairverify.metrics import (
    make_cflips_scorer,
    make_esl_scorer,
    make_ndccf_scorer,
    make_verifier_scorer,
)

try:  # a package older than the shared audits (to run this script against it)
    from skfairverify.metrics._counterfactual_scorer import AUDIT_CACHE
except ImportError:  # pragma: no cover
    AUDIT_CACHE = None
try:  # a package older than the shared sensitive classifier
    from skfairverify.counterfactual import fit_sensitive_classifier
except ImportError:  # pragma: no cover
    fit_sensitive_classifier = None

GRID = {"logisticregression__C": [0.01, 1.0]}
AUDIT_DATASETS = ("german", "compas", "adult")
AUDIT_STEPS = {"every step": [], "counterfactuals off": ["--steps", "verify", "esl"]}
CV = 3
SEED = 0
#: The row of the search's three cross-fits alone (no search; the default scorers' floor).
CROSSFITS = "the 3 cross-fits of the default sensitive classifier alone (no search)"


def make_data(n_rows: int = 4000, seed: int = SEED):
    """Rows with a binary sensitive column, a proxy of it and an independent feature."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n_rows)
    proxy = s + rng.normal(0.0, 0.8, n_rows)
    other = rng.normal(size=n_rows)
    y = (proxy + other + rng.normal(0.0, 0.5, n_rows) > 0.8).astype(int)
    return pd.DataFrame({"s": s, "proxy": proxy, "other": other}), y


def scorers(cache: bool, shared=None) -> dict:
    """The fairness scorers, by name (``shared``: their sensitive classifier)."""
    counterfactual = {"sensitive_features": "s", "k": 5, "random_state": SEED,
                      "cache": cache, "sensitive_classifier": shared}
    return {
        "esl": make_esl_scorer(sensitive_features="s"),
        "verifier": make_verifier_scorer(sensitive_features="s", random_state=SEED),
        "cflips": make_cflips_scorer(**counterfactual),
        "ndccf": make_ndccf_scorer(**counterfactual),
    }


FOUR = ("esl", "verifier", "cflips", "ndccf")


def configurations() -> dict:
    """Name -> (fairness scorer names, cache, one sensitive classifier for the search)."""
    every = {
        "accuracy only": ((), True, False),
        "+ make_esl_scorer": (("esl",), True, False),
        "+ make_verifier_scorer": (("verifier",), True, False),
        "+ make_cflips_scorer(k=5), cache=False": (("cflips",), False, False),
        "+ make_cflips_scorer(k=5)": (("cflips",), True, False),
        "+ make_cflips_scorer(k=5), shared classifier": (("cflips",), True, True),
        "+ make_cflips_scorer(k=5), shared classifier, cache=False": (("cflips",), False,
                                                                     True),
        "all four, cache=False": (FOUR, False, False),
        "all four": (FOUR, True, False),
        "all four, shared classifier": (FOUR, True, True),
        CROSSFITS: ((), True, False),
    }
    return {name: config for name, config in every.items()  # an older package: no shared
            if fit_sensitive_classifier is not None or not config[2]}


def clear_caches(audits_only: bool) -> None:
    """Empty the shared audits (and, unless ``audits_only``, the sensitive classifiers)."""
    if AUDIT_CACHE is not None:
        AUDIT_CACHE.clear()
    if not audits_only:
        SENSITIVE_CLASSIFIER_CACHE.clear()


def calls_part(repeat: int) -> None:
    """CPU seconds of single scorer calls on one validation fold of the workload."""
    X, y = make_data()
    train, test = next(iter(KFold(CV).split(X)))
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X.iloc[train],
                                                                      y[train])
    chosen, Xv, yv = scorers(True), X.iloc[test], y[test]
    if fit_sensitive_classifier is not None:
        with threadpool_limits(limits=1):
            shared = scorers(True, fit_sensitive_classifier(X, "s", random_state=SEED))
        chosen.update({f"shared {name}": shared[name] for name in ("cflips", "ndccf")})

    def call(names, audits_only):
        clear_caches(audits_only)
        for name in names:
            chosen[name](model, Xv, yv)

    cases = {"CFlips, sensitive classifier cached (a later candidate)": (("cflips",), True),
             "CFlips, nothing cached (the first candidate of a fold)": (("cflips",), False),
             "CFlips then nDCCF, sensitive classifier cached": (("cflips", "ndccf"), True)}
    if fit_sensitive_classifier is not None:
        cases.update({
            "CFlips, one classifier for the search (any candidate)": (("shared cflips",),
                                                                      False),
            "CFlips then nDCCF, one classifier for the search": (("shared cflips",
                                                                 "shared ndccf"), False)})
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        call(("cflips",), False)  # warm-up; fills the classifier cache
        print(f"one scorer call on a validation fold ({len(test)} rows), CPU seconds, "
              f"median of {repeat}; load average: {os.getloadavg()[0]:.2f} (2 cores)")
        print()
        print("| call | CPU seconds |")
        print("|---|---|")
        for label, (names, audits_only) in cases.items():
            seconds = []
            for _ in range(repeat):
                start = time.process_time()
                call(names, audits_only)
                seconds.append(time.process_time() - start)
            print(f"| {label} | {statistics.median(seconds):.3f} |")


def run_search(X, y, names, cache: bool, shared: bool = False):
    """One search: (wall s, CPU s of this process, cv_results_, CPU s of the shared fit).

    ``shared``: the sensitive classifier is cross-fitted once on the search's data
    (``fit_sensitive_classifier``), inside the timed span, and handed to the scorers.
    """
    clear_caches(audits_only=False)  # every search starts cold
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        classifier = fit_sensitive_classifier(X, "s", random_state=SEED) if shared else None
        fit_cpu = time.process_time() - cpu
        chosen = scorers(cache, classifier)
        scoring = {"accuracy": "accuracy", **{n: chosen[n] for n in names}}
        search = GridSearchCV(make_pipeline(StandardScaler(), LogisticRegression()), GRID,
                              cv=CV, scoring=scoring, refit="accuracy")
        search.fit(X, y)
    return (time.perf_counter() - start, time.process_time() - cpu, search.cv_results_,
            fit_cpu if shared else 0.0)


def run_crossfits(X, y):
    """The floor of the default scorers: the search's cross-fits of the sensitive classifier.

    The default classifier (:func:`default_sensitive_classifier`) cross-fitted over the
    scorers' ``cv=5`` parts of each validation fold of the search (``GridSearchCV``'s
    folds: ``StratifiedKFold(3)``), against the sensitive column, as the first candidate
    of each fold fits it (the later ones read the cache): (wall s, CPU s, None, 0.0).
    """
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        for _, test in StratifiedKFold(CV).split(X, y):
            rows = X.iloc[test].reset_index(drop=True)
            X_ns, s = rows.drop(columns="s"), rows["s"].to_numpy()
            CrossFittedSensitiveClassifier(default_sensitive_classifier(X_ns, SEED), 5,
                                           SEED).fit(X_ns, s)
    return time.perf_counter() - start, time.process_time() - cpu, None, 0.0


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
    parser.add_argument("--part", choices=["search", "audit", "calls", "verifier", "both"],
                        default="both")
    parser.add_argument("--out", help="--part verifier: write its scores to this JSON file")
    parser.add_argument("--against", help="--part verifier: compare with this JSON file")
    parser.add_argument("--datasets", nargs="*", default=list(AUDIT_DATASETS),
                        choices=AUDIT_DATASETS)
    args = parser.parse_args(argv)
    if args.part == "calls":
        calls_part(max(args.repeat, 9))
    if args.part == "verifier":
        verifier_part(args.out, args.against)
    if args.part in ("search", "both"):
        search_part(args)
    if args.part in ("audit", "both"):
        if args.part == "both":
            print()
        audit_part(args.datasets, args.repeat)


def _verifier_sets():
    """(name, X, y, sensitive columns, unfitted model): the workload and 3 datasets."""
    from skfairverify.audit import default_model
    from skfairverify.datasets import load_adult, load_compas, load_german

    X, y = make_data()
    yield "workload", X, y, "s", make_pipeline(StandardScaler(), LogisticRegression())
    for loader, sensitive, n in ((load_german, ["sex"], None), (load_compas, ["race"], 2000),
                                 (load_adult, ["sex"], 3000)):
        data = loader()
        X, y = data.data, np.asarray(data.target)
        if n:
            rows = np.random.default_rng(SEED).choice(len(X), n, replace=False)
            X, y = X.iloc[rows].reset_index(drop=True), y[rows]
        yield loader.__name__, X, y, sensitive, default_model()


VERIFIER_SCORERS = {  # name -> parameters of make_verifier_scorer
    f"{metric} {rate} {bound}": {"metric": metric, "rate": rate, "bound": bound,
                                 **({"n_draws": 40} if rate == "network" else {})}
    for metric in ("statistical_parity", "disparate_impact", "equalized_odds")
    for rate in ("population", "network") for bound in ("estimate", "pessimistic")}


def verifier_part(out=None, against=None) -> None:
    """The verifier scorer's scores and CPU seconds: 3 folds x 2 values of C per set."""
    scores, cpu = {}, {}
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        for name, X, y, sensitive, model in _verifier_sets():
            folds = KFold(CV, shuffle=True, random_state=SEED).split(X)
            for f, (train, test) in enumerate(folds):
                for C in GRID["logisticregression__C"]:
                    fitted = model.set_params(**{f"{model.steps[-1][0]}__C": C})
                    fitted = fitted.fit(X.iloc[train], y[train])
                    for label, params in VERIFIER_SCORERS.items():
                        scorer = make_verifier_scorer(sensitive_features=sensitive,
                                                      **params)
                        start = time.process_time()
                        scores[f"{name} fold {f} C={C} {label}"] = scorer(
                            fitted, X.iloc[test], y[test])
                        cpu[label] = cpu.get(label, 0.0) + time.process_time() - start
    print(f"{len(scores)} verifier scorer calls; load average {os.getloadavg()[0]:.2f}")
    print("\n| scorer (metric, rate, bound) | CPU s of its calls |\n|---|---|")
    for label, seconds in cpu.items():
        print(f"| {label} | {seconds:.2f} |")
    if out:
        with open(out, "w") as f:
            json.dump(scores, f)
    if against:
        with open(against) as f:
            other = json.load(f)
        common = sorted(set(scores) & set(other))
        diff = max(abs(scores[k] - other[k]) for k in common)
        print(f"\nagainst {against}: {len(common)} common scores, max |difference| = "
              f"{diff:.3g}")


def search_part(args) -> None:
    """The searches of the workload, each scorer and all four, as a ratio to accuracy."""
    X, y = make_data(args.rows)
    configs = configurations()
    run_search(*make_data(1000), FOUR, True, fit_sensitive_classifier is not None)  # warm-up
    times = {name: [] for name in configs}
    cpu = {name: [] for name in configs}
    fit_cpu = {name: [] for name in configs}
    results = {}
    for _ in range(args.repeat):
        for name, (names, cache, shared) in configs.items():
            run = (run_crossfits(X, y) if name == CROSSFITS
                   else run_search(X, y, names, cache, shared))
            seconds, cpu_seconds, results[name], fitted = run
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            fit_cpu[name].append(fitted)

    n_calls = len(GRID["logisticregression__C"]) * CV
    base = statistics.median(times["accuracy only"])
    print(f"{args.rows} rows, GridSearchCV(cv={CV}) over {GRID}, {args.repeat} run(s) "
          f"interleaved, median wall seconds; load average before: "
          f"{os.getloadavg()[0]:.2f} (2 cores)")
    print()
    base_cpu = statistics.median(cpu["accuracy only"])
    print("| scoring | search time (s) | x accuracy only | per scorer call (s) "
          "| CPU (s) | CPU x accuracy only | of which the shared fit, CPU (s) "
          "| CPU x accuracy only without it |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (names, _, shared) in configs.items():
        median = statistics.median(times[name])
        per_call = ("-" if not names else
                    f"{(median - base) / (n_calls * len(names)):.3f}")
        used = statistics.median(cpu[name])
        fitted = statistics.median(fit_cpu[name])
        search_only = statistics.median(c - f for c, f in zip(cpu[name], fit_cpu[name]))
        apart = f"{fitted:.2f} | {search_only / base_cpu:.1f}x" if shared else "- | -"
        print(f"| {name} | {median:.2f} | {median / base:.1f}x | {per_call} | {used:.2f} "
              f"| {used / base_cpu:.1f}x | {apart} |")
    print()
    for off, on, names in (("+ make_cflips_scorer(k=5), cache=False",
                            "+ make_cflips_scorer(k=5)", ("cflips",)),
                           ("+ make_cflips_scorer(k=5), shared classifier, cache=False",
                            "+ make_cflips_scorer(k=5), shared classifier", ("cflips",)),
                           ("all four, cache=False", "all four", FOUR)):
        if on not in results:
            continue
        a, b = score_columns(results[off], names), score_columns(results[on], names)
        print(f"scores with the cache vs without ({on!r}, {a.size} fold scores): "
              f"max |difference| = {np.max(np.abs(a - b)):.3g}")
    for name in ("+ make_cflips_scorer(k=5)", "all four"):
        if f"{name}, shared classifier" not in results:
            continue
        names = configs[name][0][2:] if name == "all four" else ("cflips",)
        a = score_columns(results[name], names)
        b = score_columns(results[f"{name}, shared classifier"], names)
        print(f"scores of the classifier of each fold vs the shared classifier ({name!r}, "
              f"{a.size} fold scores): max |difference| = {np.max(np.abs(a - b)):.3g}, "
              f"mean {np.mean(a):.4f} (each fold) vs {np.mean(b):.4f} (shared)")
    audits = ("-" if AUDIT_CACHE is None else
              f"{len(AUDIT_CACHE)} entries, {AUDIT_CACHE.hits} hits (the nDCCF scorer "
              "reading the CFlips scorer's audit)")
    print("(the last search's caches: sensitive classifiers", len(SENSITIVE_CLASSIFIER_CACHE),
          "entries,", SENSITIVE_CLASSIFIER_CACHE.hits, "hits,",
          SENSITIVE_CLASSIFIER_CACHE.misses, f"fits; audits {audits})")


if __name__ == "__main__":
    main()
