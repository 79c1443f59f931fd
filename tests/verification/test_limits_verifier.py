"""Memory and work guards of the verifier and the preprocessing (issue 11, section 1).

Every probe runs in a subprocess under a 3 GiB address-space cap and must answer with
the named error within seconds: the guards refuse before anything large is allocated.
"""

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from skfairverify.s3p import TableTooLargeError
from skfairverify.verification._network import (
    PGMPY_BYTES_PER_ENTRY,
    check_learning_size,
)

CAP = 3 * 2**30

PRELUDE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import numpy as np, pandas as pd
from sklearn.linear_model import LogisticRegression
from skfairverify import FairnessVerifier
rng = np.random.default_rng(0)
n = 3000

def frame(levels):
    cols = {{f"s{{i}}": rng.integers(0, k, n).astype(str) for i, k in enumerate(levels)}}
    for j in range(6):
        cols[f"x{{j}}"] = rng.normal(size=n)
    X = pd.DataFrame(cols)
    y = (X["x0"] + rng.normal(size=n) > 0).astype(int)
    X = X[[c for c in X if c.startswith("x")] + [c for c in X if c.startswith("s")]]
    return X, y, [f"s{{i}}" for i in range(len(levels))]
"""


def _run_capped(body: str, timeout: float = 60.0):
    code = textwrap.dedent(PRELUDE.format(cap=CAP)) + textwrap.dedent(body)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    return proc, time.perf_counter() - start


REFUSE = """
try:
    FairnessVerifier(LogisticRegression(), sens, {params}random_state=0).fit(X, y)
except MemoryError as exc:
    print(type(exc).__name__, "|", exc)
else:
    print("ACCEPTED")
"""


@pytest.mark.parametrize(
    "levels, params, culprit",
    [
        ((100, 100), "", "'s0': 100, 's1': 100"),
        ((30, 30, 30), "", "'s0': 30, 's1': 30, 's2': 30"),
        ((2,), "n_bins=60, max_indegree=3, ", "max_indegree (now 3)"),
        ((2,), "n_bins=60, max_indegree=4, ", "max_indegree (now 4)"),
        ((2,), "n_bins=60, max_indegree=None, ", "max_indegree (now None)"),
    ],
)
def test_network_learning_refused_under_memory_cap(levels, params, culprit):
    body = f"X, y, sens = frame({levels!r})\n" + REFUSE.format(params=params)
    proc, elapsed = _run_capped(body)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert out.startswith("TableTooLargeError |"), out
    assert "entries" in out and "bytes" in out and "max_table_size" in out
    assert culprit in out
    assert elapsed < 60


def test_learning_size_is_the_worst_family():
    # feature x (10 states), sensitive a (3) and b (4), max_indegree=1 -> the largest
    # other feature (7 states) joins: 10 * 3 * 4 * 7 entries.
    names = ["a", "b", "x", "z", "w"]
    cards = [3, 4, 10, 7, 5]
    assert check_learning_size(names, cards, ["a", "b"], max_indegree=1) == 10 * 12 * 7
    # all the other features are possible parents with max_indegree=None
    assert check_learning_size(names, cards, ["a", "b"], max_indegree=None) == 10 * 12 * 35
    # coarsening only lowers the search table; the estimation keeps full resolution
    assert check_learning_size(names, cards, ["a", "b"], coarsenable=[0, 0, 1, 1, 1],
                               max_indegree=1) == 10 * 12 * 7


def test_learning_size_budget_is_in_engine_bytes():
    names, cards = ["a", "x", "z"], [2, 100, 100]
    entries = 2 * 100 * 100
    limit = entries * PGMPY_BYTES_PER_ENTRY // 8
    assert check_learning_size(names, cards, ["a"], max_indegree=1,
                               max_table_size=limit) == entries
    with pytest.raises(TableTooLargeError, match=r"20,000 entries.*max_table_size=639,999"):
        check_learning_size(names, cards, ["a"], max_indegree=1, max_table_size=limit - 1)


def test_german_default_fit_accepted():
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from skfairverify import FairnessVerifier
    from skfairverify.datasets import load_german

    data = load_german()
    cols = ["duration", "credit_amount", "age", "installment_commitment", "housing",
            "savings_status", "sex"]
    X, y = data.data[cols], data.target
    model = make_pipeline(
        make_column_transformer((StandardScaler(), cols[:4]),
                                (OneHotEncoder(), ["housing", "savings_status"])),
        LogisticRegression(),
    )
    ver = FairnessVerifier(model, "sex", random_state=0).fit(X, y)
    assert 0 <= ver.metrics_["statistical_parity"] <= 1
    assert np.isfinite(ver.metrics_["disparate_impact"])


# ---------------------------------------------------------------- parameters sizing arrays


def test_huge_parameters_refused_under_memory_cap():
    body = """
from skfairverify.preprocessing import BinningDiscretizer, IntegerWeightScaler
X, y, sens = frame((2,))
num = X[["x0", "x1", "x2"]]
for make in (lambda: BinningDiscretizer(n_bins=10**9).fit(num),
             lambda: IntegerWeightScaler(LogisticRegression(), max_multiplier=10**9).fit(num, y),
             lambda: IntegerWeightScaler(LogisticRegression(), multiplier=10**17).fit(num, y)):
    try:
        make()
    except (ValueError, OverflowError) as exc:
        print(type(exc).__name__, "|", exc)
"""
    proc, elapsed = _run_capped(body)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3, proc.stdout
    assert lines[0].startswith("ValueError | n_bins=1,000,000,000 exceeds")
    assert "Use n_bins <= 10,000" in lines[0]
    assert lines[1].startswith("ValueError | The multiplier search would evaluate")
    assert "max_multiplier <=" in lines[1]
    assert lines[2].startswith("OverflowError | multiplier 100,000,000,000,000,000")
    assert elapsed < 60


def test_n_bins_allowed_up_to_rows_or_free_limit():
    from skfairverify.preprocessing import BinningDiscretizer

    X = np.arange(30.0)[:, None]
    # below the free limit, more bins than rows is accepted
    assert BinningDiscretizer(n_bins=100).fit(X).n_bins_[0] >= 30
    with pytest.raises(ValueError, match="n_samples = 30"):
        BinningDiscretizer(n_bins=10_001).fit(X)


def test_multiplier_range_clamped_to_exact_scores():
    from skfairverify.preprocessing import select_multiplier
    from skfairverify.preprocessing._quantize import MAX_EXACT_SCORE

    rng = np.random.default_rng(0)
    C = rng.normal(size=(50, 2)) * 2.0**40
    ref = C.sum(axis=1) > 0
    limit = MAX_EXACT_SCORE // np.abs(C).max(axis=0).sum()
    # 10**12 candidates would be refused as work; the clamp keeps ~1e3 exact ones
    l, agreement = select_multiplier(C, 0.0, ref, max_multiplier=10**12)
    assert 1 <= l <= limit and agreement == 1.0
    with pytest.raises(OverflowError, match="multiplier"):
        select_multiplier(C, 0.0, ref, max_multiplier=1, multipliers=[int(limit) + 1])


# ---------------------------------------------------------------- engine work


def _chain_network(k, n, w, seed=0):
    from skfairverify.s3p import BayesNet

    rng = np.random.default_rng(seed)
    cards = [2] + [k] * n
    parents = [()] + [(0,)] + [(0, i) for i in range(1, n)]
    cpts = []
    for v, pa in enumerate(parents):
        t = rng.random(tuple(cards[p] for p in pa) + (cards[v],))
        cpts.append(t / t.sum(-1, keepdims=True))
    weights = [np.zeros(2, dtype=np.int64)] + [rng.integers(-w, w, k) for _ in range(n)]
    return BayesNet(cards, parents, cpts), weights


def test_engine_work_refused_before_running():
    from skfairverify.verification._influence import group_rates

    # ~270 s of frontier work (1,000 states per variable): refused in well under a minute
    net, weights = _chain_network(1000, 8, 3000)
    start = time.perf_counter()
    with pytest.raises(TableTooLargeError, match=r"estimated at [\d,]+ s of work.*max_bins"):
        group_rates(net, weights, 0, [0], np.array([[0], [1]]), 50_000_000)
    assert time.perf_counter() - start < 20


def test_engine_work_estimate_is_an_upper_bound_of_small_runs():
    from skfairverify.s3p import plan
    from skfairverify.verification._influence import engine_seconds, group_rates

    net, weights = _chain_network(100, 4, 500)
    estimate = engine_seconds(plan(weights, 0, net, evidence_vars=[0]), net)
    start = time.perf_counter()
    rates = group_rates(net, weights, 0, [0], np.array([[0], [1]]), 50_000_000)
    elapsed = time.perf_counter() - start
    assert np.all((rates >= 0) & (rates <= 1))
    # loose: the estimate is within a factor 50 of the measured time (or both tiny)
    assert elapsed < 50 * estimate + 0.5
    assert estimate < 50 * elapsed + 0.5


def test_verifier_many_bins_refused_quickly():
    body = """
X, y, sens = frame((2,))
X = pd.concat([X] * 4, ignore_index=True); y = pd.concat([y] * 4, ignore_index=True)
try:
    FairnessVerifier(LogisticRegression(), sens, n_bins=5000, random_state=0).fit(X, y)
except MemoryError as exc:
    print(type(exc).__name__, "|", exc)
"""
    proc, elapsed = _run_capped(body)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("TableTooLargeError |"), proc.stdout
    assert "max_bins / n_bins" in proc.stdout
    assert elapsed < 60
