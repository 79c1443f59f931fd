"""The joblib loops of the counterfactual audit and of ESL on a dask LocalCluster.

``tests/test_distributed.py`` runs the coalition fits of ``esl_decomposition`` and the
counterfactual audit's refused-row chunks under ``joblib.parallel_config(backend="dask")``;
this file adds what ``docs/scale.md`` shows besides: the bootstrap of ESL's intervals
(chunks of resamples through joblib), the counterfactual audit with its cross-fitted
sensitive classifier, and a worker pool of processes with a memory limit. Each result on
the cluster (``n_jobs=2``, the cluster's task stream not empty) must equal the sequential
one (``n_jobs=1``) exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfairverify import CounterfactualFairness, esl_decomposition

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    n = 500
    sex = rng.choice(["F", "M"], n)
    x1 = rng.normal(size=n) + (sex == "M")
    x2 = rng.normal(size=n)
    y = (x1 + 0.5 * x2 + rng.normal(0, 1, n) > 0.6).astype(int)
    return pd.DataFrame({"x1": x1, "x2": x2, "sex": sex}), y


def _on_cluster(client, func):
    with distributed.get_task_stream(client) as stream:
        with joblib.parallel_config(backend="dask"):
            result = func(2)
    assert len(stream.data) > 0, "no task ran on the dask cluster"
    return result


def test_esl_bootstrap_same_numbers(client, data):
    X, y = data

    def run(n_jobs):
        return esl_decomposition(LogisticRegression(), X, y, sensitive_features="sex",
                                 metric="selection_rate", values=("shapley",),
                                 ci="bootstrap", n_bootstrap=40, random_state=0,
                                 n_jobs=n_jobs)

    res_1 = run(1)
    res_d = _on_cluster(client, run)
    pd.testing.assert_frame_equal(res_1.contributions, res_d.contributions, check_exact=True)
    # the bootstrap ran: intervals of positive width around the differences
    t = res_1.contributions
    assert (t["esl_ci_high"] > t["esl_ci_low"]).all()
    assert ((t["esl_ci_low"] <= t["esl_difference"])
            & (t["esl_difference"] <= t["esl_ci_high"])).all()


def test_counterfactual_crossfit_same_numbers(client, data):
    X, y = data
    model = make_pipeline(make_column_transformer((StandardScaler(), ["x1", "x2"])),
                          LogisticRegression()).fit(X, y)

    def run(n_jobs):
        audit = CounterfactualFairness(model, sensitive_features="sex", k=3,
                                       sensitive_classifier=LogisticRegression(),
                                       random_state=0, n_jobs=n_jobs)
        return audit.fit(X, y).evaluate(X)

    res_1 = run(1)
    res_d = _on_cluster(client, run)
    pd.testing.assert_frame_equal(res_1.per_k, res_d.per_k, check_exact=True)
    assert res_1.n_refused == res_d.n_refused
