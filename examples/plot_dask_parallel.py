"""
Parallel runs on a dask.distributed cluster
===========================================

Every parallel loop of skfairverify goes through `joblib`: the verifier's
networks (all rows, ``Y = 1``, ``Y = 0``) and fairness influence features, the
coalition models of the ESL decomposition, the counterfactual chunks, and
scikit-learn's own loops such as the candidates and folds of a grid search. So
``joblib.parallel_config(backend="dask")`` sends them to a dask.distributed cluster
with no change to the code, and the results are the same numbers as a sequential
run (``n_jobs=1``): this script computes both and checks it.

Runs under the cluster:

* `skfairverify.FairnessVerifier` with ``n_jobs=2`` (German credit, sensitive
  feature ``sex``), and its `fairness_influence`;
* `skfairverify.esl_decomposition` with ``n_jobs=2`` (Adult subsample, TPR gap
  between women and men split over four features);
* a `GridSearchCV` with ``n_jobs=2`` scored by
  accuracy and the verified statistical parity, refitted with
  `skfairverify.fairness_constrained_refit`.

The cluster is a `LocalCluster` with two single-threaded
workers in the same process (``processes=False``): it starts in about a second and
needs no pickling of the data between processes, which keeps this example fast and
reliable on a small machine. ``processes=True`` (or ``Client("tcp://scheduler:8786")``
for a real cluster) works the same way, at the cost of starting the workers. Needs
the ``dask`` extra: ``pip install 'skfairverify[dask]'``.

On a busy machine the cluster run can be slower than the sequential one (the tasks
are small and the GIL is shared by the threads); the point is the identical results.
Set ``SKFAIRVERIFY_EXAMPLE_QUICK=1`` for a faster run (fewer rows and columns, one
ESL member, independent networks in the grid search's scorer).
"""

import os
import time

import joblib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import FairnessVerifier, esl_decomposition, fairness_constrained_refit
from skfairverify.datasets import load_adult, load_german
from skfairverify.metrics import make_verifier_scorer

QUICK = os.environ.get("SKFAIRVERIFY_EXAMPLE_QUICK") == "1"
N_ADULT = 2000 if QUICK else 5000


def german_data():
    german = load_german()
    columns = ["checking_status", "duration", "credit_amount", "age", "sex"]
    if not QUICK:
        columns += ["savings_status", "housing"]
    return german.data[columns], np.asarray(german.target)


def adult_data():
    adult = load_adult(dropna=True)
    X = adult.data.drop(columns="split")
    marital = X["marital-status"].astype(str)
    X["marital-status"] = np.where(marital.str.startswith("Married"), "married",
                                   np.where(marital == "Never-married", "never-married",
                                            "other"))
    rows = np.random.default_rng(0).choice(len(X), N_ADULT, replace=False)
    X = X[["age", "education-num", "hours-per-week", "marital-status", "sex"]]
    X = X.iloc[rows].reset_index(drop=True)
    X["sex"] = X["sex"].astype(str)
    return X, np.asarray(adult.target)[rows]


def linear_model(X):
    """Scaling + one-hot encoding + logistic regression on every column of ``X``."""
    numeric = X.select_dtypes("number").columns.tolist()
    categorical = [c for c in X.columns if c not in numeric]
    return make_pipeline(
        ColumnTransformer([("num", StandardScaler(), numeric),
                           ("cat", OneHotEncoder(handle_unknown="ignore"), categorical)]),
        LogisticRegression(max_iter=1000),
    )


TIMINGS = {}  # n_jobs -> seconds of each computation


def run_all(n_jobs):
    """The three computations; returns their numbers as pandas objects."""
    t0 = time.perf_counter()
    Xg, yg = german_data()
    verifier = FairnessVerifier(linear_model(Xg), sensitive_features="sex", max_bins=10,
                                max_multiplier=100, random_state=0, n_jobs=n_jobs).fit(Xg, yg)
    verified = verifier.groups_.set_index("sex")
    influence = verifier.fairness_influence().table

    t1 = time.perf_counter()
    Xa, ya = adult_data()
    esl_model = make_pipeline(
        make_column_transformer(
            (StandardScaler(), make_column_selector(dtype_include="number")),
            (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_include=object)),
        ),
        LogisticRegression(max_iter=1000),
    )
    members = ("equal_surplus",) if QUICK else ("shapley", "equal_surplus")
    esl = esl_decomposition(esl_model, Xa, ya, sensitive_features="sex", metric="tpr",
                            values=members, random_state=0, n_jobs=n_jobs)

    t2 = time.perf_counter()
    model = linear_model(Xg)
    grid = {"logisticregression__C": [0.01, 1.0]}
    scoring = {"acc": "accuracy",
               "sp": make_verifier_scorer(sensitive_features="sex", metric="statistical_parity",
                                          network="independent" if QUICK else "learn",
                                          max_bins=5, max_multiplier=20, random_state=0)}
    search = GridSearchCV(model, grid, scoring=scoring, cv=2, n_jobs=n_jobs,
                          refit=fairness_constrained_refit("acc", "sp", -0.08)).fit(Xg, yg)
    cv = pd.DataFrame(search.cv_results_)[["mean_test_acc", "mean_test_sp"]]
    cv["best"] = (np.arange(len(cv)) == search.best_index_).astype(int)
    t3 = time.perf_counter()
    TIMINGS[n_jobs] = {"verification": t1 - t0, "ESL decomposition": t2 - t1,
                       "grid search": t3 - t2}
    print(f"n_jobs={n_jobs}: verification {t1 - t0:.1f} s, ESL decomposition {t2 - t1:.1f} s, "
          f"grid search {t3 - t2:.1f} s")
    return {"verifier": verified, "influence": influence,
            "esl": esl.contributions.drop(columns="majority"), "search": cv}


def max_difference(a, b):
    """Largest absolute difference of the numeric entries of two frames."""
    a, b = a.select_dtypes("number"), b.select_dtypes("number")
    return float(np.nanmax(np.abs(a.to_numpy(float) - b.to_numpy(float))))


if __name__ == "__main__":
    from dask.distributed import Client, LocalCluster, get_task_stream

    sequential = run_all(n_jobs=1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with get_task_stream(client) as stream, joblib.parallel_config(backend="dask"):
            distributed = run_all(n_jobs=2)
    n_tasks = len(stream.data)
    print(f"{n_tasks} tasks ran on the dask workers")
    print(f"CHECK dask_tasks={n_tasks}")

    print("Verified group positive rates (German, sex), dask run:")
    print(distributed["verifier"].to_string(float_format="{:.4f}".format))
    print("\nGrid search (dask run):")
    print(distributed["search"].to_string(float_format="{:.4f}".format))
    print("\nn_jobs=1 vs dask, largest absolute difference:")
    rows = []
    for name in sequential:
        diff = max_difference(sequential[name], distributed[name])
        same_shape = sequential[name].shape == distributed[name].shape
        rows.append({"computation": name, "max |difference|": diff,
                     "equal": same_shape and diff == 0.0})
    table = pd.DataFrame(rows).set_index("computation")
    print(table.to_string())
    for name, row in table.iterrows():
        print(f"CHECK {name} equal={bool(row['equal'])} max_diff={row['max |difference|']:.3g}")

    # %%
    # Wall time of each computation, sequential and on the cluster: the same numbers
    # either way (checked above), the time depends on the machine's load.
    times = pd.DataFrame({"n_jobs=1": TIMINGS[1], "dask, n_jobs=2": TIMINGS[2]})
    fig, ax = plt.subplots(figsize=(6.5, 2.6), layout="constrained")
    times.plot.barh(ax=ax, color=["tab:gray", "tab:blue"])
    ax.invert_yaxis()
    ax.set_xlabel("wall time (s)")
    ax.set_title("Sequential and dask runs give the same results")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    plt.show()
