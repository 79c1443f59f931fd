"""A tree ensemble behind an ``OrdinalEncoder``: the bounds path against sampling.

The scikit-learn pattern for categorical columns before gradient boosting
(``OrdinalEncoder`` in a ``ColumnTransformer``) is read by the tree-ensemble path since
issue 25's last step (before, ``method="auto"`` sampled it and ``method="bounds"``
refused it). Issue 25's workload (Adult, 15,000 rows; age, education-num,
hours-per-week numeric, marital-status and relationship ordinal-encoded; sex sensitive;
``HistGradientBoostingClassifier(random_state=0)``), ``n_draws=0, tolerance=0.01``:
CPU seconds of the whole ``fit``, ``method="auto"`` (bounds) against
``method="sampling"``, in turn.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_ensembles_ordinal.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

from skfairverify import FairnessVerifier
from skfairverify.datasets import load_adult
from skfairverify.verification import ModelCheckWarning

COLUMNS = ["age", "education-num", "hours-per-week", "marital-status", "relationship", "sex"]
CATEGORICAL = ["marital-status", "relationship"]


def workload(n_rows: int = 15_000):
    """The rows, the labels and the fitted pipeline (frozen)."""
    data = load_adult()
    X = data.data[COLUMNS].iloc[:n_rows].reset_index(drop=True)
    y = pd.Series(np.asarray(data.target)[:n_rows])
    model = make_pipeline(
        make_column_transformer((OrdinalEncoder(), CATEGORICAL), remainder="passthrough"),
        HistGradientBoostingClassifier(random_state=0)).fit(X.drop(columns="sex"), y)
    return X, y, FrozenEstimator(model)


def fit_time(model, X, y, method: str):
    """CPU seconds of one fit and the fitted verifier."""
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", ModelCheckWarning)  # the timing, not the fit
        ver = FairnessVerifier(model, "sex", n_draws=0, tolerance=0.01, random_state=0,
                               method=method, verbose=0).fit(X, y)
    return time.process_time() - start, ver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    X, y, model = workload()
    rows = []
    for _ in range(args.repeat):
        (tb, bounds), (ts, sampled) = (fit_time(model, X, y, "auto"),
                                       fit_time(model, X, y, "sampling"))
        rows.append((bounds.method_, tb, ts, tb / ts,
                     float((bounds.groups_["rate_upper"] - bounds.groups_["rate_lower"]).max())))
    print("| run | auto's path | bounds CPU s | sampling CPU s | ratio | widest bound |")
    print("|---|---|---:|---:|---:|---:|")
    for i, (path, tb, ts, ratio, width) in enumerate(rows, 1):
        print(f"| {i} | {path} | {tb:.2f} | {ts:.2f} | {ratio:.2f}x | {width:.4f} |")
    print(f"\nwhy: {bounds.method_reason_}")
    print("bounds:",
          bounds.groups_[["sex", "rate_lower", "rate_upper"]].round(4).to_dict("records"))
    print("sampled:", sampled.groups_[["sex", "positive_rate"]].round(4).to_dict("records"))


if __name__ == "__main__":
    main()
