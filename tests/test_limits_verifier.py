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
