"""Scale (issue 13): the vectorised agreement search decides as the per-state loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from skfairverify import FairnessVerifier
from skfairverify.preprocessing import integer_threshold, quantize


def _fitted(weighted):
    rng = np.random.default_rng(0)
    n = 1500
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"x0": rng.normal(size=n) + a, "x1": rng.exponential(size=n),
                      "x2": rng.integers(0, 4, n).astype(float), "a": a})
    y = (X["x0"] - X["x1"] + 0.3 * rng.normal(size=n) > 0).astype(int)
    weight = rng.uniform(0.2, 2.0, n) if weighted else None
    model = LogisticRegression().fit(X, y)
    ver = FairnessVerifier(model, "a", random_state=0).fit(X, y, sample_weight=weight)
    return ver, X, weight


def _loop_agreements(rule, encoding, frame, reference, multipliers, weight):
    """The former loop: integer weights of every state, summed per row."""
    codes = encoding.codes(frame)
    out = []
    for l in multipliers:
        weights = [quantize(v.contribution, l) for v in encoding.variables]
        threshold = integer_threshold(int(quantize(rule.intercept, l)))
        score = sum(w[codes[:, j]] for j, w in enumerate(weights))
        out.append(np.average((score >= threshold) == reference, weights=weight))
    return np.array(out)


@pytest.mark.parametrize("weighted", [False, True])
def test_agreements_equal_the_per_state_loop(weighted, rebuilt):
    ver, X, weight = _fitted(weighted)
    parts = rebuilt(ver, X, sample_weight=weight, evaluate=False)
    encoding, rule = parts.encoding, parts.path.unit_rule
    assert encoding.names == ver.variables_
    reference = rule.decision_function(X) > 0
    multipliers = [1, 2, 5, 10, 20, 50, 100, 1000, 10000]
    got = parts.path.quantizer.agreements(encoding, X, reference, multipliers, weight)
    np.testing.assert_array_equal(got, _loop_agreements(rule, encoding, X, reference,
                                                        multipliers, weight))
    weights, threshold = parts.path.quantizer.integer_rule(encoding, 37)
    for w, v in zip(weights, encoding.variables):
        np.testing.assert_array_equal(w, quantize(v.contribution, 37))
    assert threshold == integer_threshold(int(quantize(rule.intercept, 37)))
