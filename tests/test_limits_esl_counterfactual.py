"""Work and memory guards of the ESL box and of the counterfactual metrics.

Every probe of issue 11 runs in a subprocess under a 3 GiB address-space cap
(``resource.setrlimit(RLIMIT_AS)``) and must get its named error (or a bounded answer)
within seconds: the guards count before they allocate.
"""

import subprocess
import sys
import textwrap
from itertools import combinations
from math import factorial

import numpy as np
import pytest

from skfairverify import esl_coefficients, esl_value
from skfairverify.s3p import TableTooLargeError

resource = pytest.importorskip("resource")

_CAP = 3 * 2**30
_PRELUDE = f"""
import resource, time
resource.setrlimit(resource.RLIMIT_AS, ({_CAP}, {_CAP}))
import numpy as np, pandas as pd
from skfairverify.s3p import TableTooLargeError
rng = np.random.default_rng(0)
def expect(fn, *words):
    start = time.perf_counter()
    try:
        fn()
    except TableTooLargeError as exc:
        msg = str(exc)
        missing = [w for w in words if w not in msg]
        assert not missing, (missing, msg)
        print("REFUSED", round(time.perf_counter() - start, 3))
    else:
        raise AssertionError("no TableTooLargeError")
"""


def _run_capped(body: str, timeout: float = 60) -> str:
    code = _PRELUDE + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _refusal_times(out: str) -> list[float]:
    return [float(line.split()[1]) for line in out.splitlines() if line.startswith("REFUSED")]


def test_esl_probes_refused_under_memory_cap():
    out = _run_capped("""
        from skfairverify import esl_value, group_esl, esl_coefficients
        from skfairverify.metrics import make_esl_scorer
        n = 3000
        y, yp = rng.integers(0, 2, n), rng.integers(0, 2, n)
        age = rng.integers(18, 81, n)  # 63 groups
        expect(lambda: group_esl(y, yp, sensitive_features=age), "2^63 - 1",
               "max_coalitions", "value='equal_surplus'", "bin a numeric")
        g22 = rng.integers(0, 22, n)
        expect(lambda: group_esl(y, yp, sensitive_features=g22), "2^22 - 1",
               "max_coalitions")
        expect(lambda: group_esl(y, yp, sensitive_features=g22, value="solidarity"),
               "value='solidarity'", "2^22 - 1", "closed form in O(n)")
        expect(lambda: esl_value(lambda S: len(S), 40), "2^40 - 1", "TiB",
               "max_coalitions")
        g30 = pd.DataFrame({"g": rng.integers(0, 30, n)})
        scorer = make_esl_scorer(sensitive_features="g", units="esl", value="shapley")
        class Model:
            def predict(self, X):
                return yp
        expect(lambda: scorer(Model(), g30, y), "2^30 - 1", "max_coalitions")
        g1500 = rng.integers(0, 1500, 20000)
        y2, yp2 = rng.integers(0, 2, 20000), rng.integers(0, 2, 20000)
        expect(lambda: group_esl(y2, yp2, sensitive_features=g1500), "2^1500 - 1")
        b = esl_coefficients("lsp", 2000)
        assert b.shape == (2000,) and np.isfinite(b).all() and b[-1] == 1.0
        # the O(n) member is computed, not refused
        phi = esl_value(lambda S: len(S) ** 2, 40, value="equal_surplus")
        assert np.isclose(phi.sum(), 1600)
        # units="metric" needs the group metrics only: 30 groups are fine
        make_esl_scorer(sensitive_features="g", value="shapley")(Model(), g30, y)
        print("DONE")
    """)
    assert "DONE" in out
    times = _refusal_times(out)
    assert len(times) == 6 and max(times) < 5, out


def test_esl_decomposition_refuses_fits_before_fitting():
    out = _run_capped("""
        from sklearn.linear_model import LogisticRegression
        from skfairverify import esl_decomposition
        X = pd.DataFrame(rng.normal(size=(300, 25)), columns=[f"f{i}" for i in range(25)])
        X["s"] = rng.integers(0, 2, 300)
        y = (X.f0 > 0).astype(int)
        class Spy(LogisticRegression):
            def fit(self, *a, **k):
                raise AssertionError("fit called before the guard")
        expect(lambda: esl_decomposition(Spy(), X, y, sensitive_features="s"),
               "2^25 - 1 = 33,554,431 coalition models", "max_fits=4,096",
               "values=('equal_surplus',) it needs 26 fits")
        small = X[["f0", "f1", "f2", "s"]]
        expect(lambda: esl_decomposition(Spy(), small, y, sensitive_features="s",
                                         max_fits=5), "2^3 - 1 = 7", "max_fits=5")
        print("DONE")
    """)
    assert "DONE" in out and max(_refusal_times(out)) < 5


def test_decomposition_equal_surplus_alone_fits_linearly():
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    from skfairverify import esl_decomposition

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(400, 25)), columns=[f"f{i}" for i in range(25)])
    X["s"] = rng.integers(0, 2, 400)
    y = (X.f0 + X.s > 0.5).astype(int)
    res = esl_decomposition(LogisticRegression(), X, y, sensitive_features="s",
                            values=("equal_surplus",), random_state=0, max_fits=26)
    assert res.n_fits == 26


def test_counterfactual_k_probes_bounded_under_memory_cap():
    out = _run_capped("""
        from sklearn.linear_model import LogisticRegression
        from skfairverify.counterfactual import (CounterfactualFairness,
                                                 counterfactual_flips, ndccf)
        s = rng.integers(0, 2, 2000)
        s_cf = rng.integers(0, 2, (2000, 8)).astype(object)
        s_cf[rng.random((2000, 8)) < 0.3] = None
        for f in (counterfactual_flips, ndccf):
            big = f(s, s_cf, k=10**9)
            assert np.allclose(big, f(s, s_cf, k=8), equal_nan=True)
        X = pd.DataFrame({"x": rng.normal(size=200), "z": rng.normal(size=200),
                          "sex": rng.integers(0, 2, 200)})
        y = (X.x + X.sex > 0).astype(int)
        big = CounterfactualFairness(LogisticRegression(), "sex", k=10**7,
                                     random_state=0).fit(X, y).evaluate(X)
        n_cand = 200  # at most every training row is a counterfactual
        assert big.k == 10**7 and len(big.per_k) <= n_cand
        K = len(big.per_k)
        same = CounterfactualFairness(LogisticRegression(), "sex", k=K,
                                      random_state=0).fit(X, y).evaluate(X)
        assert np.isclose(big.cflips["delta"], same.cflips["delta"])
        assert np.isclose(big.ndccf["delta"], same.ndccf["delta"])
        print("DONE")
    """, timeout=120)
    assert "DONE" in out


@pytest.mark.parametrize("f_name", ["counterfactual_flips", "ndccf"])
def test_k_beyond_columns_is_the_value_at_the_last_column(f_name):
    from skfairverify import counterfactual

    f = getattr(counterfactual, f_name)
    s = np.array([0, 1, 1])
    s_cf = np.array([[1, 0, None], [1, 1, 0], [None, None, None]], dtype=object)
    # by hand: row 0 has 2 counterfactuals (flip, no flip), row 1 three (no, no, flip)
    if f_name == "counterfactual_flips":
        expected = [1 / 2, 1 / 3, np.nan]
    else:
        d = 1 / np.log2(np.arange(2, 5))
        expected = [d[1] / d[:2].sum(), d[:2].sum() / d.sum(), np.nan]
    np.testing.assert_allclose(f(s, s_cf, k=10**12), expected)


# ------------------------------------------------- closed forms against enumeration


def _shapley_by_permutation_formula(v, n):
    """Shapley value from its textbook definition, by brute force over coalitions."""
    phi = np.zeros(n)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        for r in range(n):
            for S in combinations(others, r):
                w = factorial(r) * factorial(n - r - 1) / factorial(n)
                phi[i] += w * (v(frozenset(S) | {i}) - v(frozenset(S)))
    return phi


def _solidarity_by_definition(v, n):
    """Nowak-Radzik Solidarity value: the average marginal contribution inside S."""
    phi = np.zeros(n)
    for i in range(n):
        for s in range(1, n + 1):
            for S in combinations(range(n), s):
                if i not in S:
                    continue
                S = frozenset(S)
                avg = sum(v(S) - v(S - {k}) for k in S) / s
                phi[i] += factorial(s - 1) * factorial(n - s) / factorial(n) * avg
    return phi


def _random_game(n, seed):
    rng = np.random.default_rng(seed)
    worth = {frozenset(S): float(rng.normal())
             for s in range(1, n + 1) for S in combinations(range(n), s)}
    return lambda S: worth.get(frozenset(S), 0.0)


@pytest.mark.parametrize("n", [2, 3, 5, 6])
def test_equal_surplus_closed_form_equals_enumeration(n):
    v = _random_game(n, n)
    grand = v(frozenset(range(n)))
    singles = np.array([v(frozenset({i})) for i in range(n)])
    closed = singles + (grand - singles.sum()) / n  # Driessen and Funaki (1991)
    calls = []
    phi = esl_value(lambda S: calls.append(S) or v(S), n, value="equal_surplus")
    np.testing.assert_allclose(phi, closed, atol=1e-12)
    assert len(calls) == n + (n > 1)  # O(n) coalitions: the singletons and N


@pytest.mark.parametrize("n", [3, 5])
def test_enumerating_members_equal_their_definitions(n):
    v = _random_game(n, 10 + n)
    np.testing.assert_allclose(esl_value(v, n, "shapley"),
                               _shapley_by_permutation_formula(v, n), atol=1e-12)
    np.testing.assert_allclose(esl_value(v, n, "solidarity"),
                               _solidarity_by_definition(v, n), atol=1e-12)


def test_max_coalitions_is_the_exact_boundary():
    v = _random_game(4, 0)
    esl_value(v, 4, max_coalitions=15)  # 2^4 - 1 coalitions
    with pytest.raises(TableTooLargeError, match=r"2\^4 - 1 = 15 coalitions"):
        esl_value(v, 4, max_coalitions=14)


def test_lsp_coefficients_log_space_match_exact_integers():
    from math import comb

    n = 1100  # above the exact-integer range of the implementation
    b = esl_coefficients("lsp", n)
    exact = np.array([comb(n - 1, s) * s / 2 ** (n - 2) for s in range(1, n)] + [1.0])
    np.testing.assert_allclose(b, exact, rtol=1e-9, atol=1e-300)
    assert np.isfinite(esl_coefficients("lsp", 5000)).all()


def test_equal_surplus_with_2000_players_is_exact():
    n = 2000
    singles = np.arange(1.0, n + 1)
    phi = esl_value(lambda S: singles[list(S)].sum() + (100.0 if len(S) == n else 0.0), n,
                    value="equal_surplus")
    np.testing.assert_allclose(phi, singles + 100.0 / n)


@pytest.mark.parametrize("metric", ["tpr", "ppv"])
@pytest.mark.parametrize("weighted", [False, True])
def test_covariance_gram_route_equals_row_route(monkeypatch, metric, weighted):
    # many groups use the Gram route (a cell's rows summed once), few rows per cell the
    # outer products: both are sum_i w_i psi_i psi_i^T
    import skfairverify.esl._variance as variance

    rng = np.random.default_rng(3)
    n, n_models = 3000, 7
    cells = rng.integers(0, 4, n)
    unions = rng.integers(0, 2, (9, 4)).astype(bool)
    unions[0] = True
    problem = variance._Problem(rng.integers(0, 2, (n, n_models)), rng.integers(0, 2, n),
                                cells, 4, unions, metric, 0.5,
                                rng.integers(1, 4, n).astype(float) if weighted else None)
    union_map, model_map = rng.normal(size=(9, 4)), rng.normal(size=(n_models, 3))
    model_map[2] = 0
    monkeypatch.setattr(variance, "_gram_is_cheaper", lambda *a: True)
    gram = problem.covariance(model_map, union_map)
    monkeypatch.setattr(variance, "_gram_is_cheaper", lambda *a: False)
    rows = problem.covariance(model_map, union_map, max_elements=500)
    np.testing.assert_allclose(gram, rows, atol=1e-14)
    assert np.abs(rows).max() > 1e-3
