"""The parallel loops under a dask.distributed cluster give the n_jobs=1 numbers.

Every parallel loop goes through joblib, so ``joblib.parallel_config(backend="dask")``
runs it on a dask cluster. Each test computes the same result sequentially
(``n_jobs=1``, joblib's default backend) and on a ``LocalCluster`` (``n_jobs=2``),
checks that the tasks really went through the cluster (its task stream is not
empty) and that the numbers are identical.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfairverify import (
    CounterfactualFairness,
    FairnessVerifier,
    esl_decomposition,
    fairness_constrained_refit,
)
from skfairverify.metrics import make_verifier_scorer

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow
joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 600
    sex = rng.choice(["F", "M"], n)
    x1 = rng.normal(size=n) + (sex == "M")
    x2 = rng.normal(size=n)
    job = rng.choice(["a", "b", "c"], n)
    score = x1 + 0.5 * x2 + 0.5 * (job == "a") + rng.normal(0, 1, n)
    X = pd.DataFrame({"x1": x1, "x2": x2, "job": job, "sex": sex})
    return X, (score > 0.8).astype(int)


def _model(read_sex=True):
    categorical = ["job", "sex"] if read_sex else ["job"]
    return make_pipeline(
        make_column_transformer((StandardScaler(), ["x1", "x2"]),
                                (OneHotEncoder(handle_unknown="ignore"), categorical)),
        LogisticRegression(),
    )


def _on_cluster(client, func):
    """``func(2)`` under the dask backend, with the cluster's task stream."""
    with distributed.get_task_stream(client) as stream:
        with joblib.parallel_config(backend="dask"):
            result = func(2)
    assert len(stream.data) > 0, "no task ran on the dask cluster"
    return result


# 5 bins keep the test fast; the rule's agreement is then below MIN_AGREEMENT, which is not
# what this test is about (identical numbers on the cluster)
@pytest.mark.filterwarnings("ignore::skfairverify.verification.LowAgreementWarning")
def test_verifier_same_numbers(client, data):
    X, y = data

    def run(n_jobs):
        ver = FairnessVerifier(_model(), sensitive_features="sex", network="learn", n_bins=5,
                               multiplier=10, random_state=0, n_jobs=n_jobs).fit(X, y)
        return ver.groups_, ver.metrics_, ver.fairness_influence().table

    groups_1, metrics_1, fif_1 = run(1)
    groups_d, metrics_d, fif_d = _on_cluster(client, run)
    pd.testing.assert_frame_equal(groups_1, groups_d, check_exact=True)
    assert metrics_1 == metrics_d
    assert set(metrics_1) == {"disparate_impact", "statistical_parity", "equalized_odds"}
    pd.testing.assert_frame_equal(fif_1, fif_d, check_exact=True)


def test_esl_decomposition_same_numbers(client, data):
    X, y = data

    def run(n_jobs):
        return esl_decomposition(
            LogisticRegression(), X[["x1", "x2", "sex"]], y, sensitive_features="sex",
            metric="selection_rate", values=("shapley", "equal_surplus"), random_state=0,
            n_jobs=n_jobs,
        )

    res_1 = run(1)
    res_d = _on_cluster(client, run)
    assert res_1.n_fits == 3  # coalitions {x1}, {x2}, {x1, x2}
    pd.testing.assert_frame_equal(res_1.contributions, res_d.contributions, check_exact=True)
    pd.testing.assert_frame_equal(res_1.first_stage, res_d.first_stage, check_exact=True)


# 5 bins: low agreement again (see above); no other warning is expected
@pytest.mark.filterwarnings("ignore::skfairverify.verification.LowAgreementWarning")
def test_constrained_search_same_numbers(client, data):
    X, y = data
    bound = 0.42  # between the verified gaps of the two candidates (about 0.46 and 0.39)

    def run(n_jobs):
        scoring = {"acc": "accuracy",
                   "sp": make_verifier_scorer(sensitive_features="sex",
                                              metric="statistical_parity", network="learn",
                                              n_bins=5, multiplier=10, random_state=0)}
        grid = {"columntransformer__onehotencoder": [
            OneHotEncoder(handle_unknown="ignore"), "drop"]}
        search = GridSearchCV(_model(), grid, scoring=scoring, cv=2, n_jobs=n_jobs,
                              refit=fairness_constrained_refit("acc", "sp", -bound))
        search.fit(X, y)
        return search

    s_1 = run(1)
    s_d = _on_cluster(client, run)
    for key in ("mean_test_acc", "mean_test_sp", "split0_test_sp", "split1_test_sp"):
        np.testing.assert_array_equal(s_1.cv_results_[key], s_d.cv_results_[key])
    assert s_1.best_index_ == s_d.best_index_
    # the bound binds: the most accurate candidate is not fair enough, and the refit
    # took the most accurate of those that are
    sp = np.asarray(s_1.cv_results_["mean_test_sp"])
    acc = np.asarray(s_1.cv_results_["mean_test_acc"])
    feasible = sp >= -bound
    assert feasible.any() and not feasible[np.argmax(acc)]
    assert s_1.best_index_ == np.flatnonzero(feasible)[np.argmax(acc[feasible])]
    np.testing.assert_array_equal(s_1.predict(X), s_d.predict(X))


def test_counterfactual_chunks_same_numbers(client, data):
    X, y = data
    X = pd.concat([X[["x1", "x2", "sex"]]] * 5, ignore_index=True)  # several chunks
    y = np.concatenate([y] * 5)
    model = make_pipeline(make_column_transformer((StandardScaler(), ["x1", "x2"])),
                          LogisticRegression())

    def run(n_jobs):
        audit = CounterfactualFairness(model, sensitive_features="sex", k=3,
                                       sensitive_classifier=LogisticRegression(),
                                       random_state=0, n_jobs=n_jobs)
        return audit.fit(X, y).evaluate(X)

    res_1 = run(1)
    res_d = _on_cluster(client, run)
    assert sum(res_1.n_refused.values()) > 1024  # more than two chunks of 512 rows
    pd.testing.assert_frame_equal(res_1.per_k, res_d.per_k, check_exact=True)
    assert res_1.n_refused == res_d.n_refused
