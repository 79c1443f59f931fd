"""A verified value outside the credible interval of its draws: warned, and held.

With many small groups whose rows are alike, the point-estimate network gives equal
rates (statistical parity 0), while every posterior draw adds noise to each group, so
the largest gap over the draws is never 0: the draws' equal-tailed interval excludes
the estimate (and the population value, when the groups are truly alike). The verifier
warns, naming the quantity, and widens the reported interval to hold the value.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skfairverify import FairnessVerifier
from skfairverify.verification import EstimateOutsideIntervalWarning
from skfairverify.verification._intervals import hold_estimates


def _data(n_groups, per, alike, seed=0):
    rng = np.random.default_rng(seed)
    x = np.tile(rng.normal(size=per), n_groups) if alike else rng.normal(size=n_groups * per)
    X = pd.DataFrame({"a": np.repeat(np.arange(n_groups), per).astype(str), "x": x})
    model = make_pipeline(make_column_transformer(("passthrough", ["x"])),
                          LogisticRegression()).fit(X, (X["x"] > 0).astype(int))
    return X, FrozenEstimator(model)


def _assert_held(ver):
    for name, value in ver.metrics_.items():
        low, high = ver.metric_intervals_[name]
        assert low <= value <= high, name
    g = ver.groups_
    assert (g["ci_low"] <= g["positive_rate"]).all()
    assert (g["positive_rate"] <= g["ci_high"]).all()


def test_alike_small_groups_warn_and_hold_the_estimate():
    X, model = _data(6, 15, alike=True)
    with pytest.warns(EstimateOutsideIntervalWarning) as record:
        ver = FairnessVerifier(model, "a", n_bins=5, random_state=0).fit(X)
    message = str(next(r.message for r in record
                        if r.category is EstimateOutsideIntervalWarning))
    assert "statistical_parity 0.0000 [" in message
    assert "the smallest has 15 rows" in message
    # the estimate: equal rates, SP 0 and DI 1 exactly (alike rows in every group)
    assert ver.metrics_["statistical_parity"] == pytest.approx(0.0, abs=1e-12)
    assert ver.metrics_["disparate_impact"] == pytest.approx(1.0, abs=1e-12)
    _assert_held(ver)
    # widened on the side of the estimate only: the draws' upper end is kept, the
    # lower end is the estimate (the draws' own lower end, in the message, is above it)
    low, high = ver.metric_intervals_["statistical_parity"]
    printed_low = float(message.split("statistical_parity 0.0000 [")[1].split(",")[0])
    assert printed_low > 0.05 and low == pytest.approx(0.0, abs=1e-12)
    assert high > printed_low


def test_verify_warns_and_holds_too():
    X, model = _data(6, 15, alike=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ver = FairnessVerifier(model, "a", n_bins=5, random_state=0).fit(X)
    with pytest.warns(EstimateOutsideIntervalWarning):
        res = ver.verify(X)
    for name, value in res.metrics.items():
        low, high = res.metric_intervals[name]
        assert low <= value <= high


@pytest.mark.parametrize("seed", range(4))
def test_small_noisy_groups_always_hold_their_estimates(seed):
    X, model = _data(5, 20, alike=False, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ver = FairnessVerifier(model, "a", n_bins=5, random_state=seed).fit(X)
    _assert_held(ver)


def test_large_groups_do_not_warn():
    X, model = _data(2, 3000, alike=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimateOutsideIntervalWarning)
        ver = FairnessVerifier(model, "a", n_bins=10, random_state=0).fit(X)
    _assert_held(ver)


def test_hold_estimates_widens_exactly_the_intervals_that_miss_their_value():
    """Against the definition, element by element: the held interval is the smallest one
    holding both the interval and the value; the reported ones are those that missed."""
    rng = np.random.default_rng(0)
    lows = rng.uniform(0, 1, 200)
    highs = lows + rng.uniform(0, 0.3, 200)
    values = rng.uniform(-0.2, 1.4, 200)
    values[:5] = np.nan  # a quantity without a value keeps its interval, never reported
    intervals = {i: (lows[i], highs[i]) for i in range(200)}
    held, outside = hold_estimates(intervals, dict(enumerate(values)))
    for i in range(200):
        v = values[i]
        expected = ((lows[i], highs[i]) if np.isnan(v)
                    else (min(lows[i], v), max(highs[i], v)))
        assert held[i] == pytest.approx(expected)
    missed = [i for i in range(200) if not np.isnan(values[i])
              and not lows[i] - 5e-5 <= values[i] <= highs[i] + 5e-5]
    assert [name for name, _ in outside] == missed
    assert all(bounds == intervals[name] for name, bounds in outside)


@pytest.mark.parametrize(("miss", "named"), [(1e-5, False), (4.9e-5, False),
                                             (5.1e-5, True), (1e-3, True)])
def test_a_miss_below_the_shown_digits_is_held_but_not_named(miss, named):
    """A value outside by less than half the 4th decimal the warnings print (the COMPAS
    audit named "age -0.0000 [-0.0000, -0.0000]") is held in silence; a larger miss is
    named. Both widen the interval to the value."""
    for low, high, value in [(-2e-5, -1e-5, -2e-5 - miss), (0.3, 0.4, 0.4 + miss)]:
        held, outside = hold_estimates({"r": (low, high)}, {"r": value})
        assert held["r"] == pytest.approx((min(low, value), max(high, value)), abs=0)
        assert (outside == [("r", (low, high))]) is named
