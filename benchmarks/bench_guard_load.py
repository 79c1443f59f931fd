"""The sampling path's guard on an idle machine and with both cores busy (issue 27).

The same fit (titanic, 891 rows, HistGradientBoosting on the raw missing values, the
sampling path at the verifier's default tolerance 0.005 and 50 posterior draws) is run
on an idle machine, then with two busy processes (``python -c "while True: pass"``, one
per core), twice each:

* ``ours``: the guard as it is, the model's ``predict`` in a one-thread pool and the cost
  per row measured in CPU time; the refusal compares the rows needed with the rows
  ``max_time`` allows;
* ``wall clock``: the former meter, ``predict`` with its own threads and the cost per row
  measured in wall-clock time (as before issue 27).

The model is fitted once before (``FrozenEstimator``), so the times are the
verifier's. For each: the cost per row the guard measured (first and second batch), the
rows needed and allowed, refused or not, the rows sampled, the positive rates, the wall
and CPU seconds. ``ours`` gives the same rows, the same rates and no refusal in both conditions;
the ratio busy / idle of its cost per row is near 1 (that of the wall clock is not).

Usage::

    python benchmarks/bench_guard_load.py                 # tolerance 0.005, max_time 600
    python benchmarks/bench_guard_load.py --tolerance 0.02 --max-time 10   # quicker
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import subprocess
import sys
import time

import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator

from skfairverify import FairnessVerifier
from skfairverify.datasets import load_titanic
from skfairverify.s3p import TableTooLargeError
from skfairverify.verification import _paths_sampling, _sampling

COLUMNS = ["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]


def _data():
    titanic = load_titanic()
    X = titanic.data[COLUMNS].astype({"Sex": "category", "Embarked": "category"})
    return X, titanic.target


@contextlib.contextmanager
def _meter(kind: str, seen: list):
    """The guard of ``kind`` ('ours' or 'wall clock'), recording what it measured."""
    check = _sampling.SamplingCost._check
    cost, threads = _paths_sampling.SamplingCost, _sampling.limited_threads

    def spy(self, rows, per_row, n, slack):
        seen.append((rows, per_row, n))
        return check(self, rows, per_row, n, slack)

    _sampling.SamplingCost._check = spy
    if kind == "wall clock":
        _paths_sampling.SamplingCost = functools.partial(cost, clock=time.perf_counter)
        _sampling.limited_threads = contextlib.nullcontext
    try:
        yield
    finally:
        _sampling.SamplingCost._check = check
        _paths_sampling.SamplingCost, _sampling.limited_threads = cost, threads


def _fit(kind: str, tolerance: float, max_time: float) -> dict:
    X, y = _data()
    model = FrozenEstimator(HistGradientBoostingClassifier(
        categorical_features="from_dtype", random_state=0).fit(X, y))  # fitted before
    seen: list = []
    wall, cpu = time.perf_counter(), time.process_time()
    with _meter(kind, seen):
        ver = FairnessVerifier(model, "Sex", tolerance=tolerance, max_time=max_time,
                               random_state=0)
        try:
            ver.fit(X, y)
            refused, rows, rates = False, ver.n_samples_, ver.groups_["positive_rate"]
        except TableTooLargeError:
            refused, rows, rates = True, None, None
    per_row = [f"{p * 1e6:.1f}" for _, p, _ in seen]
    return {"guard": kind, "us per row (batch 1, 2)": ", ".join(per_row),
            "rows needed": seen[-1][0] if seen else None,
            "rows allowed": int(max_time / seen[-1][1]) if seen else None,
            "refused": refused, "rows sampled": rows,
            "rates (female, male)": None if rates is None else
            ", ".join(f"{r:.4f}" for r in rates),
            "wall s": round(time.perf_counter() - wall, 1),
            "CPU s": round(time.process_time() - cpu, 1),
            "_per_row": seen[-1][1] if seen else float("nan")}


@contextlib.contextmanager
def _busy_cores(n: int = 2):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tolerance", type=float, default=0.005)
    parser.add_argument("--max-time", type=float, default=600.0)
    args = parser.parse_args()
    rows = []
    for condition, context in (("idle", contextlib.nullcontext), ("busy", _busy_cores)):
        for kind in ("ours", "wall clock"):
            with context():
                rows.append({"machine": condition, **_fit(kind, args.tolerance,
                                                          args.max_time)})
    table = pd.DataFrame(rows)
    print(f"tolerance={args.tolerance}, max_time={args.max_time} s, titanic "
          "HistGradientBoosting on the raw missing values, sampling path, n_draws=50")
    print(table.drop(columns="_per_row").to_string(index=False))
    for kind in ("ours", "wall clock"):
        cost = table[table.guard == kind].set_index("machine")["_per_row"]
        print(f"{kind}: cost per row busy / idle = {cost['busy'] / cost['idle']:.2f}")


if __name__ == "__main__":
    main()
