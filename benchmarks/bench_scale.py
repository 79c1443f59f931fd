"""Scale benchmark of the verifier's network learning (issue 13).

Two parts, each printing a table; every measurement runs in its own child process
(peak RSS from ``resource.getrusage`` of that child, a time limit per run).

1. Features: 10 / 30 / 100 / 300 / 1000 numeric features at 20,000 rows (synthetic:
   ``A ~ Bernoulli(0.4)``, ``X_k = mu_k A + 0.6 X_parent(k) + N(0, 1)`` along a random
   tree, ``Y`` from a noisy linear score), a fixed ``LogisticRegression`` (frozen),
   ``FairnessVerifier`` defaults. The old path (pgmpy's hill climbing,
   ``learn_network(structure_search="pgmpy")``) up to 100 features next to the new
   default (the exact tree-augmented search on numpy counts): fit time, the time of
   the structure search alone (the three networks: all rows, ``Y = 1``, ``Y = 0``),
   their ratios and the growth from 10 to 100 features. 300 and 1,000 features: the
   new path's whole fit (the old path does not fit the time budget of this script);
   ``FIT_MAX_FEATURES`` lower makes them time the structure search of one network
   alone (all rows, the numeric columns in 5 quantile bins, as the search sees them).
2. Rows: Adult (sex x race, 13 variables, numeric columns in 20 quantile bins)
   repeated to 45k / 450k / 4.5M / 10M rows: ``learn_network`` with the verifier's defaults
   (``max_indegree=1``: the exact search; then pgmpy's parameter estimation), time of
   each and peak RSS.
3. Whole fit (``--part fit`` only): ``FairnessVerifier`` with its defaults (and
   ``n_draws=0``) on Adult repeated to 45k / 450k / 4.5M / 10M rows, the audit's
   pipeline fitted once on Adult and frozen, sex x race: fit time, its structure,
   parameter and engine parts, the RSS of the data and the peak RSS beyond it (the
   kernel's high-water mark reset once the data is built), growth ratios.

Usage::

    python benchmarks/bench_scale.py                 # both parts (< 10 min on 2 cores)
    python benchmarks/bench_scale.py --part features
    python benchmarks/bench_scale.py --part rows
    python benchmarks/bench_scale.py --part fit      # part 3 (not in "all": minutes)
    python benchmarks/bench_scale.py --profile 4522200 --draws 0   # cProfile of one fit
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time
import warnings

import numpy as np
import pandas as pd

N_ROWS = 20_000
FEATURES = (10, 30, 100, 300, 1000)
OLD_MAX_FEATURES = 100
#: Full verifier fit up to this many features; beyond it the structure search alone.
FIT_MAX_FEATURES = 1000
ROWS = (45_222, 452_220, 4_522_200, 10_000_000)
TIME_LIMIT = 300
#: The old path at 100 features takes ~52 s on an idle machine (issue 13); room for load.
OLD_TIME_LIMIT = 900


# ----------------------------------------------------------------------------- child runs
def _peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def _timers():
    """Wrap the network module's search and estimation to time them."""
    from skfairverify.verification import _linear_path, _network

    spent = {"structure": 0.0, "parameters": 0.0, "engine": 0.0}

    def timed(func, key):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - t0
        return wrapper

    _network._search_edges = timed(_network._search_edges, "structure")
    _network._learn_edges = timed(_network._learn_edges, "structure")
    _network._estimate = timed(_network._estimate, "parameters")
    _network._estimate_pgmpy = timed(_network._estimate_pgmpy, "parameters")
    _linear_path.group_rates = timed(_linear_path.group_rates, "engine")
    return spent


def _use_search(search: str):
    from skfairverify.verification import _network

    _network.learn_network.__kwdefaults__["structure_search"] = search


def _run(target, args, queue):
    try:
        queue.put(target(*args))
    except Exception as exc:  # reported in the table
        queue.put({"error": f"{type(exc).__name__}: {str(exc)[:120]}"})


def in_child(target, *args, time_limit=TIME_LIMIT):
    """Run ``target(*args)`` in a fresh process; its dict, or the reason it has none."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_run, args=(target, args, queue))
    t0 = time.perf_counter()
    proc.start()
    proc.join(time_limit)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"error": f"over {time_limit} s"}
    out = queue.get() if not queue.empty() else {"error": f"exit code {proc.exitcode}"}
    out.setdefault("wall_s", time.perf_counter() - t0)
    return out


# ----------------------------------------------------------------------------- part 1
def synthetic(n_features, n_rows=N_ROWS, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.random(n_rows) < 0.4).astype(int)
    x = np.empty((n_rows, n_features))
    mu = rng.uniform(0.2, 1.0, n_features)
    for k in range(n_features):
        x[:, k] = mu[k] * a + rng.normal(size=n_rows)
        if k:
            x[:, k] += 0.6 * x[:, rng.integers(0, k)]
    X = pd.DataFrame(x, columns=[f"x{k}" for k in range(n_features)])
    X["a"] = a
    beta = rng.normal(size=n_features) / np.sqrt(n_features)
    score = x @ beta + 0.5 * rng.normal(size=n_rows)
    y = (score > np.median(score)).astype(int)
    return X, y


def fit_child(n_features, search, full_fit):
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from skfairverify import FairnessVerifier
    from skfairverify.verification import _network

    spent = _timers()
    _use_search(search)
    X, y = synthetic(n_features)
    t0 = time.perf_counter()
    if full_fit:
        model = FrozenEstimator(LogisticRegression(max_iter=2000).fit(X, y))
        t0 = time.perf_counter()
        ver = FairnessVerifier(model, "a", random_state=0).fit(X, y)
        rates = pd.Series(model.predict(X)).groupby(X["a"].to_numpy()).mean()
        out = {"DI": ver.metrics_["disparate_impact"],
               "empirical_DI": rates.min() / rates.max()}
    else:  # the structure search of one network, as the verifier runs it
        codes = np.column_stack([pd.qcut(X[c], 5, labels=False) for c in X.columns[:-1]]
                                + [X["a"].to_numpy()]).astype(np.int64)
        edges = _network._search_edges(codes, list(X.columns), ["a"], 1, None, "tan", 50_000_000)
        out = {"DI": float("nan"), "edges": len(edges)}
    out.update(fit_s=time.perf_counter() - t0, structure_s=spent["structure"],
               parameters_s=spent["parameters"], engine_s=spent["engine"],
               rss_gib=_peak_rss_gib())
    return out


def part_features():
    print(f"\n== Part 1: features at {N_ROWS:,} rows (FairnessVerifier defaults) ==",
          flush=True)
    rows = []
    for n in FEATURES:
        full = n <= FIT_MAX_FEATURES
        new = in_child(fit_child, n, "auto", full, time_limit=TIME_LIMIT + 300 * (n > 300))
        old = (in_child(fit_child, n, "pgmpy", full, time_limit=OLD_TIME_LIMIT)
               if n <= OLD_MAX_FEATURES else {})
        row = {"features": n, "measured": "verifier fit" if full else "structure, 1 network"}
        for tag, res in (("old", old), ("new", new)):
            row[f"{tag} time (s)"] = res.get("fit_s", np.nan)
            row[f"{tag} structure (s)"] = res.get("structure_s", np.nan)
            if "error" in res:
                row[f"{tag} note"] = res["error"]
        row["new parameters (s)"] = new.get("parameters_s", np.nan)
        row["new engine (s)"] = new.get("engine_s", np.nan)
        row["ratio time old/new"] = row["old time (s)"] / row["new time (s)"]
        row["ratio structure old/new"] = row["old structure (s)"] / row["new structure (s)"]
        row["new peak RSS (GiB)"] = new.get("rss_gib", np.nan)
        row["DI old / new"] = f"{old.get('DI', np.nan):.4f} / {new.get('DI', np.nan):.4f}"
        row["empirical DI"] = new.get("empirical_DI", np.nan)
        rows.append(row)
        print(pd.DataFrame([row]).round(3).to_string(index=False), flush=True)
    table = pd.DataFrame(rows).set_index("features")
    for tag in ("old", "new"):
        for what in ("time", "structure"):
            col = f"{tag} {what} (s)"
            if {10, 100} <= set(table.index):
                print(f"growth 10 -> 100 features, {tag} {what}: "
                      f"{table.loc[100, col] / table.loc[10, col]:.1f}x")
    return table


# ----------------------------------------------------------------------------- part 2
def adult_codes():
    from skfairverify.datasets import load_adult

    X = load_adult(as_frame=True).data.drop(columns=["split", "fnlwgt"])
    X = X[X.notna().all(axis=1)].reset_index(drop=True)
    cols, cards, coarse = [], [], []
    for c in X.columns:
        if pd.api.types.is_numeric_dtype(X[c]):
            code = pd.qcut(X[c], 20, labels=False, duplicates="drop").to_numpy()
            coarse.append(True)
        else:
            code = pd.Categorical(X[c]).codes
            coarse.append(False)
        cols.append(code)
        cards.append(int(code.max()) + 1)
    return np.column_stack(cols).astype(np.int8), list(X.columns), cards, coarse


def rows_child(n_rows, search):
    from skfairverify.verification._network import learn_network

    spent = _timers()
    codes, names, cards, coarse = adult_codes()
    codes = np.resize(codes, (n_rows, codes.shape[1]))  # Adult repeated
    base_rss = _peak_rss_gib()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*is deprecated", category=FutureWarning)
        learn_network(codes, names, cards, ["sex", "race"], coarsenable=coarse,
                      structure_search=search, max_indegree=1)  # the verifier's default
    return {"fit_s": time.perf_counter() - t0, "structure_s": spent["structure"],
            "parameters_s": spent["parameters"], "rss_gib": _peak_rss_gib(),
            "data_rss_gib": base_rss}


def part_rows():
    print("\n== Part 2: rows, Adult repeated (sex x race), learn_network ==", flush=True)
    rows = []
    for n in ROWS:
        res = in_child(rows_child, n, "auto")
        row = {"rows": n, "time (s)": res.get("fit_s", np.nan),
               "structure (s)": res.get("structure_s", np.nan),
               "parameters (s)": res.get("parameters_s", np.nan),
               "peak RSS (GiB)": res.get("rss_gib", np.nan),
               "RSS before learning (GiB)": res.get("data_rss_gib", np.nan),
               "note": res.get("error", "")}
        rows.append(row)
        print(pd.DataFrame([row]).round(3).to_string(index=False), flush=True)
    table = pd.DataFrame(rows).set_index("rows")
    for last in range(2, len(table)):
        growth = table.drop(columns="note").iloc[last] / table.drop(columns="note").iloc[1]
        print(f"growth {table.index[1]:,} -> {table.index[last]:,} rows "
              f"({table.index[last] / table.index[1]:.1f}x): time {growth['time (s)']:.1f}x, "
              f"structure {growth['structure (s)']:.1f}x, "
              f"parameters {growth['parameters (s)']:.1f}x")
    return table


# ----------------------------------------------------------------------------- part 3
FIT_ROWS = (45_222, 452_220, 4_522_200, 10_000_000)


def _reset_peak_rss() -> None:
    """Reset the kernel's high-water mark of this process's RSS (Linux ``clear_refs``)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _rss_gib(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak since the last reset) of this process, in GiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def adult_frame(n_rows):
    """Adult (complete rows, no ``fnlwgt``) repeated to ``n_rows``, its labels, a model.

    The model is the audit's pipeline (scaled numbers, one-hot categories, logistic
    regression) fitted once on Adult itself and frozen.
    """
    from sklearn.frozen import FrozenEstimator

    from skfairverify.audit import default_model
    from skfairverify.datasets import load_adult

    b = load_adult(as_frame=True)
    X = b.data.drop(columns=["split", "fnlwgt"])
    keep = X.notna().all(axis=1).to_numpy()
    X, y = X[keep].reset_index(drop=True), b.target.to_numpy()[keep]
    model = FrozenEstimator(default_model().fit(X, y))
    idx = np.resize(np.arange(len(X)), n_rows)
    return X.iloc[idx].reset_index(drop=True), y[idx], model


def verifier_fit_child(n_rows, n_draws, profile=False):
    import gc

    from skfairverify import FairnessVerifier

    spent = _timers()
    X, y, model = adult_frame(n_rows)
    gc.collect()
    data_gib = _rss_gib("VmRSS")
    _reset_peak_rss()
    params = {} if n_draws is None else {"n_draws": n_draws}  # None: the default
    ver = FairnessVerifier(model, ["sex", "race"], random_state=0, **params)
    t0 = time.perf_counter()
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(ver.fit, X, y)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    else:
        ver.fit(X, y)
    fit_s = time.perf_counter() - t0
    return {"fit_s": fit_s, "peak_beyond_gib": _rss_gib("VmHWM") - data_gib,
            "data_gib": data_gib, "structure_s": spent["structure"],
            "parameters_s": spent["parameters"], "engine_s": spent["engine"],
            "DI": ver.metrics_["disparate_impact"], "agreement": ver.agreement_,
            "n_bins": ver.n_bins_, "multiplier": ver.multiplier_}


def part_fit(rows=FIT_ROWS, draws=(None, 0)):
    print("\n== Part 3: FairnessVerifier.fit, Adult repeated (sex x race), audit's "
          "pipeline frozen ==", flush=True)
    out = []
    for n_draws in draws:
        for n in rows:
            res = in_child(verifier_fit_child, n, n_draws, time_limit=1800)
            row = {"rows": n, "n_draws": "default" if n_draws is None else n_draws,
                   "time (s)": res.get("fit_s", np.nan),
                   "structure (s)": res.get("structure_s", np.nan),
                   "parameters (s)": res.get("parameters_s", np.nan),
                   "engine (s)": res.get("engine_s", np.nan),
                   "data RSS (GiB)": res.get("data_gib", np.nan),
                   "peak beyond data (GiB)": res.get("peak_beyond_gib", np.nan),
                   "DI": res.get("DI", np.nan), "agreement": res.get("agreement", np.nan),
                   "bins x l": f"{res.get('n_bins')} x {res.get('multiplier')}",
                   "note": res.get("error", "")}
            out.append(row)
            print(pd.DataFrame([row]).round(4).to_string(index=False), flush=True)
    table = pd.DataFrame(out)
    for n_draws, part in table.groupby("n_draws", sort=False):
        part = part.set_index("rows")
        base = part.index[1] if len(part) > 1 else part.index[0]
        for n in part.index[2:]:
            print(f"n_draws={n_draws}: growth {base:,} -> {n:,} rows ({n / base:.1f}x): time "
                  f"{part.loc[n, 'time (s)'] / part.loc[base, 'time (s)']:.1f}x")
    return table.set_index("rows")


def markdown(table: pd.DataFrame) -> str:
    """A markdown table (no tabulate needed)."""
    def cell(v):
        return "" if isinstance(v, float) and np.isnan(v) else str(v)

    lines = ["| " + " | ".join(map(str, table.columns)) + " |",
             "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["features", "rows", "fit", "all"], default="all")
    parser.add_argument("--rows", type=int, nargs="+", default=None,
                        help="row counts of part 3 (default: 45222 452220 4522200 10000000)")
    parser.add_argument("--draws", type=int, nargs="+", default=None,
                        help="n_draws of part 3 (default: the verifier's default, then 0)")
    parser.add_argument("--profile", type=int, default=None, metavar="ROWS",
                        help="profile one verifier fit (cProfile) at ROWS rows and exit")
    parser.add_argument("--features", type=int, nargs="+", default=None,
                        help="feature counts of part 1 (default: 10 30 100 300 1000)")
    args = parser.parse_args()
    if args.features:
        global FEATURES
        FEATURES = tuple(args.features)
    if args.profile:
        print(verifier_fit_child(args.profile, (args.draws or [None])[0], profile=True))
        return
    t0 = time.perf_counter()
    tables = {}
    if args.part == "fit":
        tables["fit"] = part_fit(tuple(args.rows or FIT_ROWS),
                                 tuple(args.draws) if args.draws else (None, 0))
    if args.part in ("features", "all"):
        tables["features"] = part_features()
    if args.part in ("rows", "all"):
        tables["rows"] = part_rows()
    for name, table in tables.items():
        print(f"\n## {name}\n")
        print(markdown(table.round(3).reset_index()))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
