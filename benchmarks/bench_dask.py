"""FairnessVerifier.fit through dask on a LocalCluster whose workers hold less than the data.

Adult (complete rows, no ``fnlwgt``, categories as strings) is repeated to ``--rows``
rows and written to ``/tmp`` as parquet files of ``--partition-rows`` rows, one file at a
time; ``dd.read_parquet`` reads them back. The model is the audit's pipeline (scaled
numbers, one-hot categories, logistic regression) fitted once on Adult and frozen;
sensitive features sex x race, ``n_bins=20``, ``multiplier=100``, ``n_draws=0`` (fixed, so
the metrics do not depend on the automatic search).

Each measurement runs in its own child process (peak RSS of that process from the
kernel's high-water mark):

* ``dask``: a ``LocalCluster`` of two worker processes (one thread each) with
  ``--worker-memory`` each, below the data's in-memory size (printed); the client fits
  from ``dd.read_parquet``. Time, the client's peak RSS, each worker's peak RSS.
* ``dask, all rows sampled``: the same with ``sample_rows`` >= the rows (the bins then
  come from every row, as in pandas; the client holds the sample in pandas), only up to
  ``--exact-rows`` rows.
* ``pandas``: ``pd.read_parquet`` then ``fit`` in one process (data and fit in memory).

The table prints the metrics of each run next to pandas's: identical when every row is
in the sample; with a 200,000-row sample the quantile edges come from the sample (as
pandas's own ``KBinsDiscretizer`` subsample of 200,000 rows does), so close.

Usage::

    python benchmarks/bench_dask.py                      # 4,522,200 rows (a few minutes)
    python benchmarks/bench_dask.py --rows 452220 --exact-rows 452220
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import shutil
import time
import warnings

import numpy as np
import pandas as pd

DIR = "/tmp/skfairverify_bench_dask"
PARAMS = {"n_bins": 20, "multiplier": 100, "n_draws": 0, "random_state": 0}
SENSITIVE = ["sex", "race"]


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _adult():
    from skfairverify.audit import default_model
    from skfairverify.datasets import load_adult

    b = load_adult(as_frame=True)
    X = b.data.drop(columns=["split", "fnlwgt"])
    keep = X.notna().all(axis=1).to_numpy()
    X, y = X[keep].reset_index(drop=True), b.target.to_numpy()[keep]
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].astype(str)
    return X, y, default_model().fit(X, y)


def write_parquet(n_rows: int, partition_rows: int) -> None:
    """Adult repeated to ``n_rows``, one parquet file per partition."""
    X, y, _ = _adult()
    data = X.assign(label=y)
    shutil.rmtree(DIR, ignore_errors=True)
    os.makedirs(DIR)
    for i, start in enumerate(range(0, n_rows, partition_rows)):
        idx = np.arange(start, min(start + partition_rows, n_rows)) % len(data)
        data.iloc[idx].reset_index(drop=True).to_parquet(f"{DIR}/part-{i:04d}.parquet")


def _model():
    from sklearn.frozen import FrozenEstimator

    return FrozenEstimator(_adult()[2])


def _result(ver, seconds):
    return {"time_s": seconds, "metrics": dict(ver.metrics_), "agreement": ver.agreement_,
            "support": ver.groups_["support"].to_numpy(), "peak_gib": _peak_gib()}


def pandas_child(n_rows):
    from skfairverify import FairnessVerifier

    model = _model()
    t0 = time.perf_counter()
    data = pd.read_parquet(DIR)
    X, y = data.drop(columns="label"), data["label"].to_numpy()
    ver = FairnessVerifier(model, SENSITIVE, **PARAMS).fit(X, y)
    return _result(ver, time.perf_counter() - t0)


def dask_child(n_rows, worker_memory, sample_rows):
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from skfairverify import FairnessVerifier

    model = _model()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      memory_limit=worker_memory, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        ddf = dd.read_parquet(DIR)
        pids = set(client.run(os.getpid).values())
        t0 = time.perf_counter()
        ver = FairnessVerifier(model, SENSITIVE, sample_rows=sample_rows, **PARAMS).fit(
            ddf.drop(columns="label"), ddf["label"])
        out = _result(ver, time.perf_counter() - t0)
        out["workers_peak_gib"] = sorted(client.run(_peak_gib).values())
        # a worker killed by its memory limit comes back as a new process
        out["restarts"] = len(set(client.run(os.getpid).values()) - pids)
        out["data_gib"] = ddf.memory_usage(deep=True).sum().compute() / 2**30  # after
        out["npartitions"] = ddf.npartitions
    return out


def _child(queue, target, args):
    queue.put(target(*args))


def _run(target, *args):
    """``target(*args)`` in a fresh (non-daemon: it starts the cluster's) process."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, target, args))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_522_200)
    parser.add_argument("--partition-rows", type=int, default=50_000)
    parser.add_argument("--worker-memory", default="512MiB")
    parser.add_argument("--exact-rows", type=int, default=1_000_000,
                        help="run 'dask, all rows sampled' only up to this many rows")
    parser.add_argument("--no-pandas", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", FutureWarning)
    write_parquet(args.rows, args.partition_rows)
    runs = {"dask": _run(dask_child, args.rows, args.worker_memory, 200_000)}
    if args.rows <= args.exact_rows:
        runs["dask, all rows sampled"] = _run(dask_child, args.rows, args.worker_memory,
                                             args.rows)
    if not args.no_pandas:
        runs["pandas"] = _run(pandas_child, args.rows)
    d = runs["dask"]
    print(f"\nAdult repeated to {args.rows:,} rows, {d['npartitions']} parquet partitions; "
          f"data in memory (dask, deep) {d['data_gib']:.2f} GiB; two workers limited to "
          f"{args.worker_memory} each; sex x race, {PARAMS}")
    ref = runs.get("pandas")
    print("| run | time (s) | client peak RSS (GiB) | workers' peak RSS (GiB) | worker "
          "restarts | DI | SP | EO | max abs diff vs pandas | supports = pandas |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in runs.items():
        m = r["metrics"]
        diff = same = "-"
        if ref is not None and name != "pandas":
            diff = f"{max(abs(m[k] - ref['metrics'][k]) for k in m):.2e}"
            same = str(bool(np.array_equal(r["support"], ref["support"])))
        workers = ", ".join(f"{g:.2f}" for g in r.get("workers_peak_gib", [])) or "-"
        print(f"| {name} | {r['time_s']:.1f} | {r['peak_gib']:.2f} | {workers} | "
              f"{r.get('restarts', '-')} | "
              f"{m['disparate_impact']:.6f} | {m['statistical_parity']:.6f} | "
              f"{m['equalized_odds']:.6f} | {diff} | {same} |")
    if ref is not None:
        print(f"time ratio dask / pandas: {d['time_s'] / ref['time_s']:.2f}")
    shutil.rmtree(DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
