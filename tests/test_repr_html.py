"""Notebook displays (``_repr_html_``): the numbers shown are the result's, escaped.

Every test reads the HTML back with html.parser (tests/_report_html_parsing.py) and
compares the cells with the result's values, or with an independent computation (group
means by numpy) where the result is computed from data.
"""

import math

import numpy as np
import pandas as pd
import pytest
from _report_html_parsing import parse_tables, same_number, table_with, visible_text
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from skfairverify import FairnessVerifier, esl_decomposition, group_esl
from skfairverify.counterfactual import CounterfactualResult
from skfairverify.utils._html import (
    DEFAULT_THRESHOLDS,
    check_thresholds,
    frame_table,
    verdict_frame,
    verifier_html,
)
from skfairverify.utils._results import Result

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
    ver = FairnessVerifier(LogisticRegression(), network="independent", n_bins=8)
    return ver.fit(X, y, sensitive_features=a), X, y, a


def test_verification_result_gets_the_generic_display(verifier):
    ver, X, y, a = verifier
    res = ver.verify(X, y, sensitive_features=a)
    page = res._repr_html_()
    _no_raw_markup(page)
    tables = parse_tables(page)
    groups = table_with(tables, "to_frame()").records()
    for row in groups:
        expected = res.groups.set_index("a").loc[row["a"]]
        assert same_number(row["positive_rate"], expected["positive_rate"])
        assert row["support"] == str(int(expected["support"]))
    metrics = {r["key"]: r["metrics"] for r in table_with(tables, "metrics").records()}
    assert metrics.keys() == res.metrics.keys()
    for key, text in metrics.items():
        assert same_number(text, res.metrics[key])
    other = {r["field"]: r["value"] for r in table_with(tables, "other fields").records()}
    assert same_number(other["agreement"], res.agreement)


def test_verifier_html_shows_groups_verdict_and_network(verifier):
    ver, *_ = verifier
    page = verifier_html(ver)
    _no_raw_markup(page)
    tables = parse_tables(page)
    rates = {r["a"]: r["positive_rate"]
             for r in table_with(tables, "Verified rates of every group").records()}
    expected = ver.groups_.set_index("a")["positive_rate"]
    assert rates.keys() == set(expected.index)
    for g, text in rates.items():
        assert same_number(text, expected[g])
    verdict = table_with(tables, "verdict").records()
    di = next(r for r in verdict if r["metric"].startswith("DI"))
    ratio = expected.min() / expected.max()  # independent: DI from the group rates
    assert same_number(di["value"], ratio)
    assert di["verdict"] == ("pass" if ratio >= 0.8 else "fail")
    network = table_with(tables, "Bayesian network").records()
    assert {r["variable"] for r in network} == set(ver.network_.names)


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
    assert "Verified rates of every group" in bundle["text/html"]
    assert "Verified rates of every group" in fitted._repr_html_()
    unfitted = Displayed(**params)._repr_mimebundle_()["text/html"]
    assert "Verified rates" not in unfitted and "Displayed" in unfitted
