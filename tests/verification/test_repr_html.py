"""Notebook displays (``_repr_html_``): the numbers shown are the result's, escaped.

Every test reads the HTML back with html.parser (tests/audit/_report_html_parsing.py) and
compares the cells with the result's values, or with an independent computation (group
means by numpy) where the result is computed from data.
"""

import inspect
import math

import numpy as np
import pandas as pd
import pytest
from _report_html_parsing import (
    judge_interval,
    parse_tables,
    same_number,
    split_interval,
    table_with,
    visible_text,
)
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from skfairverify import FairnessVerifier, esl_decomposition, group_esl
from skfairverify.counterfactual import CounterfactualResult
from skfairverify.utils import _html as utils_html
from skfairverify.utils import _verdict as utils_verdict
from skfairverify.utils._html import frame_table
from skfairverify.utils._results import Result
from skfairverify.utils._verdict import DEFAULT_THRESHOLDS, check_thresholds, verdict_frame
from skfairverify.verification._display import interval_note, verifier_html

HOSTILE = "<script>alert('x')</script> & co"


def _no_raw_markup(page: str) -> None:
    assert "<script" not in page
    assert "&lt;script&gt;" in page


# ------------------------------------------------------------------ counterfactual
def _counterfactual_result(privileged="M"):
    per_k = pd.DataFrame({"cflips_privileged": [0.05, 0.123456],
                          "cflips_unprivileged": [0.3, 0.4222222],
                          "ndccf_privileged": [0.95, 0.8856],
                          "ndccf_unprivileged": [0.7, 0.61083]},
                         index=pd.RangeIndex(1, 3, name="k"))
    by_group = pd.DataFrame({"precision": [0.7455, 0.5342], "recall": [0.8586, 0.3562],
                             "f1": [0.7981, 0.4274], "support": [481, 219]},
                            index=pd.Index(["privileged", "unprivileged"], name="group"))
    return CounterfactualResult.from_per_k(
        per_k, n_refused={"privileged": 30, "unprivileged": 9}, privileged=privileged,
        sensitive_classifier={"held_out": True, "accuracy": 0.70142857,
                              "roc_auc": 0.6588253, "by_group": by_group})


def test_counterfactual_result_shows_its_values():
    res = _counterfactual_result()
    page = res._repr_html_()
    tables = parse_tables(page)
    rows = {r["group"]: r for r in table_with(tables, "CFlips@k: share").records()}
    for group in ("privileged", "unprivileged", "delta"):
        assert same_number(rows[group]["CFlips@k"], res.cflips[group])
        assert same_number(rows[group]["nDCCF@k"], res.ndccf[group])
    assert rows["privileged"]["audited rows"] == "30"
    assert rows["delta"]["audited rows"] == "n/a"
    # the deltas are the documented differences, recomputed here
    assert same_number(rows["delta"]["CFlips@k"], 0.4222222 - 0.123456)
    assert same_number(rows["delta"]["nDCCF@k"], 0.8856 - 0.61083)
    clf = table_with(tables, "Sensitive classifier")
    assert "accuracy 0.7014, ROC AUC 0.6588" in clf.caption
    recall = {r["group"]: r["recall"] for r in clf.records()}
    assert recall == {"privileged": "0.8586", "unprivileged": "0.3562"}
    assert "k=2" in visible_text(page)


def test_counterfactual_result_escapes_the_privileged_label():
    page = _counterfactual_result(privileged=HOSTILE)._repr_html_()
    _no_raw_markup(page)
    assert HOSTILE.replace("'", "\\'") in visible_text(page) or "alert" in visible_text(page)


# ------------------------------------------------------------------ ESL, first stage
def _first_stage_data(labels, n=400, seed=0):
    rng = np.random.default_rng(seed)
    groups = rng.choice(labels, n)
    y_true = rng.integers(0, 2, n)
    y_pred = (rng.random(n) < np.where(groups == labels[0], 0.7, 0.5)).astype(int)
    return y_true, y_pred, groups


def test_group_esl_display_shows_metric_values_and_the_test():
    labels = np.array([HOSTILE, "b"])
    y_true, y_pred, groups = _first_stage_data(labels)
    res = group_esl(y_true, y_pred, sensitive_features=groups, metric="tpr")
    page = res._repr_html_()
    _no_raw_markup(page)
    tables = parse_tables(page)
    rows = table_with(tables, "ESL values of the groups").records()
    assert [r["sensitive_features"] for r in rows] == sorted(labels.tolist())
    for row in rows:
        g = row["sensitive_features"]
        tpr = y_pred[(groups == g) & (y_true == 1)].mean()  # independent: numpy
        assert same_number(row["metric_by_group"], tpr)
        assert same_number(row["esl_value"], res.esl_values[g])
        assert same_number(row["share"], res.esl_values[g] / res.total)
    test = {r["units"]: r for r in table_with(tables, "Test of equal ESL values").records()}
    a, b = res.compared
    gap = (y_pred[(groups == a) & (y_true == 1)].mean()
           - y_pred[(groups == b) & (y_true == 1)].mean())
    assert same_number(test["metric units"]["difference"], gap)
    assert same_number(test["ESL units"]["difference"], gap / 0.5)  # Shapley, baseline 0.5
    assert same_number(test["metric units"]["p-value"], res.p_value)
    assert same_number(test["metric units"]["95% CI low"], res.metric_ci[0])


def test_group_esl_display_with_three_groups_tests_every_pair():
    y_true, y_pred, groups = _first_stage_data(np.array(["a", "b", "c"]))
    res = group_esl(y_true, y_pred, sensitive_features=groups, metric="selection_rate")
    pairs = table_with(parse_tables(res._repr_html_()), "every pair")
    assert len(pairs.body) == 3
    rows = pairs.records()
    frame = res.pairwise()
    for row, (key, expected) in zip(rows, frame.iterrows()):
        assert (row["group_1"], row["group_2"]) == key
        assert same_number(row["esl_difference"], expected["esl_difference"])


# ------------------------------------------------------------------ ESL, decomposition
def test_decomposition_display_shows_every_contribution():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["x<1>", "x2", "x3"])
    group = rng.choice(["a", "b"], 400)
    y = (X["x2"] > 0).astype(int)
    res = esl_decomposition(GaussianNB(), X, y, sensitive_features=group,
                            values=["shapley", "equal_surplus"], random_state=0)
    page = res._repr_html_()
    assert "x&lt;1&gt;" in page and "<1>" not in page
    tables = parse_tables(page)
    rows = table_with(tables, "Contributions of the features").records()
    assert len(rows) == len(res.contributions)
    for row, ((value, feature), expected) in zip(rows, res.contributions.iterrows()):
        assert (row["value"], row["feature"]) == (value, feature)
        for column in ("a", "b", "esl_difference", "esl_std_error", "esl_ci_low"):
            assert same_number(row[column], expected[column]), column
        assert row["majority"] == ("yes" if expected["majority"] else "no")
    first = table_with(tables, "First stage of the full model").records()
    for row, (_, expected) in zip(first, res.first_stage.iterrows()):
        assert same_number(row["total"], expected["total"])
    # Shapley efficiency, checked on the numbers shown: the contributions add up to the
    # group's first-stage value (rounding of 3 shown numbers: within 2e-4)
    shapley_total = sum(float(r["a"]) for r in rows if r["value"] == "shapley")
    assert math.isclose(shapley_total, res.first_stage.loc["shapley", "a"], abs_tol=2e-4)


# ------------------------------------------------------------------ verifier
@pytest.fixture(scope="module")
def verifier():
    rng = np.random.default_rng(0)
    a = pd.Series(rng.choice(["F", HOSTILE], 1000), name="a")
    X = pd.DataFrame({"x": rng.normal(a == "F", 1.0), "z": rng.normal(size=1000)})
    y = (X["x"] + X["z"] > 0.5).astype(int)
    ver = FairnessVerifier(LogisticRegression(), network="independent", n_bins=8,
                           n_bootstrap=0)  # the network's own display (population: below)
    return ver.fit(X, y, sensitive_features=a), X, y, a


def _check_groups_with_intervals(table, groups: pd.DataFrame, label: str) -> None:
    """Each group's rate [ci_low, ci_high] as shown equals the verifier's, 3 decimals."""
    header = f"positive_rate [{label}]"
    rows = table.records()
    assert len(rows) == len(groups)
    for row in rows:
        expected = groups.set_index("a").loc[row["a"]]
        value, low, high = split_interval(row[header])
        assert same_number(value, expected["positive_rate"], 3)
        assert same_number(low, expected["ci_low"], 3)
        assert same_number(high, expected["ci_high"], 3)
        assert row["support"] == str(int(expected["support"]))
        assert same_number(row["true_positive_rate"], expected["true_positive_rate"])
        assert "ci_low" not in row and "ci_high" not in row


def _check_verdict_with_intervals(table, metrics: dict, intervals: dict) -> None:
    """Each metric [interval] and its verdict, against the documented rule (enumerated)."""
    keys = {"DI": "disparate_impact", "SP": "statistical_parity", "EO": "equalized_odds"}
    rows = table.body
    assert len(rows) == len(metrics)
    for row in rows:
        key = keys[row[0].text.split(":")[0]]
        value, low, high = split_interval(row[2].text)
        lo, hi = intervals[key]
        assert same_number(value, metrics[key], 3)
        assert same_number(low, lo, 3) and same_number(high, hi, 3)
        threshold = DEFAULT_THRESHOLDS[key]
        assert row[3].text == judge_interval(key == "disparate_impact", metrics[key],
                                             (lo, hi), threshold)


def test_verification_result_shows_rates_and_metrics_with_intervals(verifier):
    ver, X, y, a = verifier
    res = ver.verify(X, y, sensitive_features=a)
    page = res._repr_html_()
    _no_raw_markup(page)
    tables = parse_tables(page)
    # verify records what the intervals are: their level and draws are named
    assert res.intervals["n_draws"] == ver.n_draws
    groups = table_with(tables, "Rates of every group")
    label = (f"positive_rate: probability under the network, {ver.credible_level:.0%} "
             f"credible interval (posterior of the network, {ver.n_draws} draws)")
    assert label in groups.caption
    assert "true_positive_rate, false_positive_rate: point estimates" in groups.caption
    _check_groups_with_intervals(groups, res.groups, f"{ver.credible_level:.0%} credible "
                                 "interval")
    verdict = table_with(tables, "verdict")
    _check_verdict_with_intervals(verdict, res.metrics, res.metric_intervals)
    text = visible_text(page)
    assert f"agreement of the integer rule with the model {res.agreement:.4f}" in text
    # with the note of the verifier (what verify could pass): the level and the draws
    res.intervals = interval_note(ver)
    page = res._repr_html_()
    assert "95% credible interval (posterior of the network, 50 draws)" in visible_text(page)
    groups = table_with(parse_tables(page), "Rates of every group")
    _check_groups_with_intervals(groups, res.groups, "95% credible interval")


def test_verifier_html_shows_groups_verdict_and_network(verifier):
    ver, *_ = verifier
    page = verifier_html(ver)
    _no_raw_markup(page)
    tables = parse_tables(page)
    groups = table_with(tables, "Rates of every group")
    assert "95% credible interval (posterior of the network, 50 draws)" in groups.caption
    _check_groups_with_intervals(groups, ver.groups_, "95% credible interval")
    verdict = table_with(tables, "verdict")
    assert [c.text for c in verdict.head[1]] == ["value [95% credible interval]", "verdict"]
    _check_verdict_with_intervals(verdict, ver.metrics_, ver.metric_intervals_)
    expected = ver.groups_.set_index("a")["positive_rate"]
    di = next(r for r in verdict.body if r[0].text.startswith("DI"))
    ratio = expected.min() / expected.max()  # independent: DI from the group rates
    assert same_number(split_interval(di[2].text)[0], ratio, 3)
    network = table_with(tables, "Bayesian network").records()
    assert {r["variable"] for r in network} == set(ver.network_.names)
    # the one-line summary: every metric with its interval
    for key, value in ver.metrics_.items():
        lo, hi = ver.metric_intervals_[key]
        assert f"{key} {value:.3f} [{lo:.3f}, {hi:.3f}]" in visible_text(page)



def test_verifier_display_is_appended_once_in_its_order(verifier):
    """The fitted verifier shows scikit-learn's diagram, then verification/_display's
    block: the facts, the groups, the verdict, the network, in that order."""
    ver, *_ = verifier
    page, block = ver._repr_html_(), verifier_html(ver)
    assert page.endswith(block) and page.count('<div class="skfv">') == 1
    order = ['<dl class="skfv-facts">', "Rates of every group", "Metrics over the groups",
             "Bayesian network: the parents of every variable"]
    assert [block.index(part) for part in order] == sorted(block.index(p) for p in order)


def test_utils_html_decides_no_verifier_semantics():
    """utils/_html.py and utils/_verdict.py take tables and values, never a verifier."""
    for module in (utils_html, utils_verdict):
        for name, func in inspect.getmembers(module, inspect.isfunction):
            if func.__module__ == module.__name__:
                assert "verifier" not in inspect.signature(func).parameters, name

def test_point_estimates_are_labelled_and_judged_on_the_value(verifier):
    ver, X, y, a = verifier
    point = FairnessVerifier(LogisticRegression(), network="independent", n_bins=8,
                             n_draws=0, n_bootstrap=0).fit(X, y, sensitive_features=a)
    page = verifier_html(point)
    text = visible_text(page)
    assert "point estimate only (n_draws=0)" in text
    assert "[" not in text.split("FairnessVerifier (fitted)")[1].split("Bayesian")[0]
    tables = parse_tables(page)
    rows = table_with(tables, "Rates of every group").records()
    assert {"ci_low", "ci_high"}.isdisjoint(rows[0])  # they repeat the rate
    for row in rows:
        assert same_number(row["positive_rate"],
                           point.groups_.set_index("a").loc[row["a"], "positive_rate"])
    verdict = table_with(tables, "verdict")
    assert [c.text for c in verdict.head[1]] == ["value", "verdict"]
    for row in verdict.body:
        assert row[3].text in ("pass", "fail")
    res = point.verify(X, y, sensitive_features=a)  # the result tells from its intervals
    assert "point estimate only" in visible_text(res._repr_html_())


# ------------------------------------------------------------------ building blocks
def test_generic_result_shows_nan_as_na_and_integers_as_integers():
    class Rates(Result):
        def to_frame(self):
            return pd.DataFrame({"rate": [0.5, np.nan], "rows": [3, 4]},
                                index=pd.Index(["a", "b"], name="group"))

    rows = parse_tables(Rates()._repr_html_())[0].records()
    assert rows == [{"group": "a", "rate": "0.5000", "rows": "3"},
                    {"group": "b", "rate": "n/a", "rows": "4"}]


def test_frame_table_escapes_every_label_and_spans_upper_levels():
    columns = pd.MultiIndex.from_tuples([(HOSTILE, "v"), (HOSTILE, "e"), ("rows", "")])
    frame = pd.DataFrame([[0.1, 0.2, 3]], columns=columns,
                         index=pd.Index([HOSTILE], name=HOSTILE))
    page = frame_table(frame, caption=HOSTILE)
    _no_raw_markup(page)
    table = parse_tables(page)[0]
    assert table.caption == HOSTILE
    assert [c.text for c in table.head[0]] == [HOSTILE, HOSTILE, HOSTILE, "rows"]
    assert [c.text for c in table.head[1]] == ["v", "e"]
    assert 'colspan="2"' in page and 'rowspan="2"' in page
    assert [c.text for c in table.body[0]] == [HOSTILE, "0.1000", "0.2000", "3"]


@pytest.mark.parametrize(("key", "value", "verdict"), [
    ("disparate_impact", 0.8, "pass"), ("disparate_impact", 0.7999, "fail"),
    ("statistical_parity", 0.1, "pass"), ("statistical_parity", 0.1001, "fail"),
    ("cflips_delta", -0.05, "pass"), ("cflips_delta", -0.2, "fail"),
    ("equalized_odds", float("nan"), "n/a"), ("equalized_odds", None, "n/a"),
])
def test_verdict_boundaries(key, value, verdict):
    frame = verdict_frame({"verified": {key: value}})
    assert frame["verified", "verdict"].tolist() == [verdict]


def test_verdict_thresholds_are_configurable_and_checked():
    frame = verdict_frame({"x": {"statistical_parity": 0.07}}, {"statistical_parity": 0.05})
    assert frame["x", "verdict"].tolist() == ["fail"]
    assert frame["threshold"].iloc[0] == "<= 0.05 (largest gap)"
    assert check_thresholds(None) == DEFAULT_THRESHOLDS
    with pytest.raises(ValueError, match="Unknown threshold 'di'"):
        check_thresholds({"di": 0.8})
    for bad in (-0.1, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="finite number >= 0"):
            check_thresholds({"equalized_odds": bad})
    with pytest.raises(ValueError, match=r"ratio in \[0, 1\]"):
        check_thresholds({"disparate_impact": 1.5})


def test_verifier_display_hook_for_notebooks(verifier):
    """The change proposed for FairnessVerifier: scikit-learn's ``_repr_html_`` and
    ``_repr_mimebundle_`` (what Jupyter calls) both go through ``_html_repr``; overriding
    it appends :func:`verifier_html` to the parameter diagram once fitted."""
    ver, X, y, a = verifier

    class Displayed(FairnessVerifier):
        def _html_repr(self):
            extra = verifier_html(self) if hasattr(self, "groups_") else ""
            return super()._html_repr() + extra

    params = ver.get_params(deep=False)
    fitted = Displayed(**params).fit(X, y, sensitive_features=a)
    bundle = fitted._repr_mimebundle_()
    assert "Rates of every group" in bundle["text/html"]
    assert "Rates of every group" in fitted._repr_html_()
    unfitted = Displayed(**params)._repr_mimebundle_()["text/html"]
    assert "Verified rates" not in unfitted and "Displayed" in unfitted
