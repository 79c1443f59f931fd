"""The intervals of the verified rates and metrics in the audit report (issue 16).

The HTML page and the text are read back (tests/audit/_report_html_parsing.py) and compared
with a FairnessVerifier fitted here on the audit's own split, apart from the audit; the
verdicts with an interval are compared with the documented rule applied to a fine grid
of the interval (enumeration), including a constructed interval that straddles the
threshold ("uncertain") and point estimates (``n_draws=0``).
"""

import copy
import re

import numpy as np
import pandas as pd
import pytest
from _report_html_parsing import (
    hostile_report,
    judge_interval,
    parse_tables,
    same_number,
    split_interval,
    table_with,
    visible_text,
    without_population,
)
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skfairverify import FairnessVerifier
from skfairverify.audit import run_audit
from skfairverify.audit._run import AUDIT_TOLERANCE
from skfairverify.utils._verdict import DEFAULT_THRESHOLDS, verdict_frame
from skfairverify.verification._display import interval_note, verifier_html

pytest.importorskip("matplotlib")

KEYS = {"DI": "disparate_impact", "SP": "statistical_parity", "EO": "equalized_odds"}


# ------------------------------------------------------------------ the verdict rule
def test_verdict_with_an_interval_equals_the_rule_on_every_point_of_it():
    rng = np.random.default_rng(0)
    for key, at_least in (("disparate_impact", True), ("statistical_parity", False),
                          ("cflips_delta", False)):
        signed = key == "cflips_delta"
        for _ in range(150):
            a, b, value = rng.uniform(-0.3 if signed else 0.0, 1.0 if at_least else 0.3, 3)
            threshold = rng.choice([0.8, 0.1, 0.05]) if not at_least else 0.8
            frame = verdict_frame({"v": {key: value}}, {key: threshold},
                                  intervals={"v": {key: (a, b)}})
            expected = judge_interval(at_least, value, (a, b), threshold)
            assert frame["v", "verdict"].iloc[0] == expected, (key, value, a, b)


@pytest.mark.parametrize(("key", "value", "interval", "verdict"), [
    ("disparate_impact", 0.85, (0.75, 0.90), "uncertain"),  # straddles 0.80
    ("disparate_impact", 0.85, (0.80, 0.90), "pass"),  # the bound passes (>=)
    ("disparate_impact", 0.70, (0.60, 0.79), "fail"),
    ("statistical_parity", 0.05, (0.02, 0.12), "uncertain"),
    ("statistical_parity", 0.20, (0.11, 0.30), "fail"),
    ("cflips_delta", -0.05, (-0.12, 0.00), "uncertain"),  # |x| <= 0.1 fails below -0.1
    ("statistical_parity", 0.05, (0.11, 0.20), "uncertain"),  # value and interval disagree
    ("equalized_odds", 0.05, (None, None), "pass"),  # no interval: the value decides
])
def test_uncertain_verdict_on_constructed_intervals(key, value, interval, verdict):
    frame = verdict_frame({"v": {key: value}}, intervals={"v": {key: interval}})
    assert frame["v", "verdict"].tolist() == [verdict]
    assert frame["v", "low"].iloc[0] == interval[0]


# ------------------------------------------------------------------ constructed reports
@pytest.fixture(scope="module")
def report():
    # the network's own intervals, as a verifier without the population estimate shows
    # them (tests/verification/test_population.py checks the population's)
    return without_population(hostile_report())


def _with_metrics(report, metrics: dict, intervals: dict, note: dict | None = None):
    out = copy.deepcopy(report)
    v = out.sections["verification"]
    v["metrics"].update(metrics)
    v["metric_intervals"].update(intervals)
    if note is not None:
        v["intervals"] = note
    return out


def test_report_says_uncertain_where_the_interval_straddles_the_threshold(report):
    constructed = _with_metrics(report, {"disparate_impact": 0.85, "statistical_parity": 0.05,
                                         "equalized_odds": 0.3},
                                {"disparate_impact": [0.75, 0.90],
                                 "statistical_parity": [0.02, 0.08],
                                 "equalized_odds": [0.2, 0.4]})
    page = constructed.to_html()
    table = table_with(parse_tables(page), "Verdict on every metric")
    verdicts = {row[0].text.split(":")[0]: (row[2].text, row[3]) for row in table.body}
    assert verdicts["DI"][0] == "0.850 [0.750, 0.900]"
    assert (verdicts["DI"][1].text, verdicts["DI"][1].cls) == ("uncertain", "uncertain")
    assert verdicts["SP"][1].text == "pass" and verdicts["EO"][1].text == "fail"
    how = visible_text(page.split('<section id="summary">')[1].split("</section>")[0])
    assert "uncertain when the interval holds values on both sides" in how
    assert "95% credible interval (posterior of the network, 50 draws)" in how
    # a threshold above the whole interval turns it into a fail, below it into a pass
    for threshold, word in ((0.95, "fail"), (0.7, "pass")):
        page = constructed.to_html(thresholds={"disparate_impact": threshold})
        row = table_with(parse_tables(page), "Verdict on every metric").body[0]
        assert row[3].text == word


def test_point_estimates_are_labelled_as_such_in_the_report_and_the_text(report):
    point = copy.deepcopy(report)
    v = point.sections["verification"]
    v["intervals"] = {"kind": "none (point estimates)", "level": None, "n_draws": 0,
                      "label": "point estimate only (n_draws=0)"}
    for g in v["groups"]:
        g["ci_low"] = g["ci_high"] = g["positive_rate"]
    v["metric_intervals"] = {k: [x, x] for k, x in v["metrics"].items()}
    v["fairness_influence_ci_low"] = v["fairness_influence_ci_high"] = None
    v["fairness_influence_intervals"] = dict(v["intervals"])
    page = point.to_html()
    tables = parse_tables(page)
    verdict = table_with(tables, "Verdict on every metric")
    assert [c.text for c in verdict.head[1]][:2] == ["value", "verdict"]
    for row in verdict.body:
        assert "[" not in row[2].text and row[3].text in ("pass", "fail", "n/a")
    groups = table_with(tables, "Rates per group")
    assert [c.text for c in groups.head[1]][:2] == ["verified", "empirical"]
    assert "point estimates only" in visible_text(page)
    text = " ".join(point.to_text().split())
    assert "intervals: verified values: point estimate only (n_draws=0); no interval" in text
    assert "verified ci_low" not in text
    assert not re.search(r"\d \[\d", text.split("Rates per group")[1])  # no value [low, high]
    assert "many) (point estimate only (n_draws=0)):" in text  # the influences too


# ------------------------------------------------------------------ a real audit
@pytest.fixture(scope="module")
def audit():
    """An audit of small data and the verifier fitted apart on the audit's split."""
    rng = np.random.default_rng(3)
    n = 500
    s = rng.choice(["a", "b", "c"], n, p=[0.5, 0.35, 0.15])
    x = rng.normal(s == "a", 1.0)
    z = rng.normal(size=n)
    X = pd.DataFrame({"x": x.round(2), "z": z.round(2), "s": s})
    y = pd.Series((x + z + rng.normal(0, 0.7, n) > 0.6).astype(int))
    model = LogisticRegression().fit(X[["x", "z"]], y)
    report = without_population(run_audit(X, y, "s", model=model, steps=["verify"],
                                          verbose=0))
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=0)
    verifier = FairnessVerifier(FrozenEstimator(model), "s", tolerance=AUDIT_TOLERANCE,
                                random_state=0)
    return report, verifier.fit(X_train, pd.Series(y_train.to_numpy(), name="target"))


def test_report_shows_the_verifier_intervals(audit):
    report, verifier = audit
    assert verifier.method_ == "exact" and verifier.n_draws == 50
    page = report.to_html()
    tables = parse_tables(page)
    # groups: the selection rate [ci_low, ci_high] of every group, 3 decimals
    groups = verifier.groups_.set_index("s")
    table = table_with(tables, "Rates per group")
    assert ("verified selection rate as value [low, high], the 95% credible interval"
            in table.caption)
    for row in table.body:
        value, low, high = split_interval(row[1].text)
        expected = groups.loc[row[0].text]
        assert same_number(value, expected["positive_rate"], 3)
        assert same_number(low, expected["ci_low"], 3)
        assert same_number(high, expected["ci_high"], 3)
    # verdict: every metric [its interval], and the verdict of the rule on the interval
    verdict = table_with(tables, "Verdict on every metric")
    seen = 0
    for row in verdict.body:
        key = KEYS.get(row[0].text.split(":")[0])
        if key is None or row[2].text == "n/a":
            continue
        value, low, high = split_interval(row[2].text)
        lo, hi = verifier.metric_intervals_[key]
        assert same_number(value, verifier.metrics_[key], 3)
        assert same_number(low, lo, 3) and same_number(high, hi, 3)
        assert row[3].text == judge_interval(key == "disparate_impact", verifier.metrics_[key],
                                             (lo, hi), DEFAULT_THRESHOLDS[key])
        seen += 1
    assert seen == len(verifier.metrics_)
    # the metric comparison table and the text show the same intervals
    metrics = table_with(tables, "Metrics over the groups")
    text = report.to_text()
    for key, value in verifier.metrics_.items():
        lo, hi = verifier.metric_intervals_[key]
        shown = f"{value:.3f} [{lo:.3f}, {hi:.3f}]"
        assert shown in [c.text for row in metrics.body for c in row]
        assert shown in text
    for _, row in groups.iterrows():
        assert f"{row['positive_rate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]" in text
    # the most / least favored groups of the summary with their interval
    most = verifier.most_favored_group_["s"]
    r = groups.loc[most]
    assert (f"verified selection rate {r['positive_rate']:.3f} [{r['ci_low']:.3f}, "
            f"{r['ci_high']:.3f}] (95% credible interval)") in visible_text(page)


def test_json_records_the_intervals_with_their_kind(audit):
    report, verifier = audit
    data = report.to_dict()
    v = data["verification"]
    assert v["intervals"]["label"] == "95% credible interval (posterior of the network, 50 draws)"
    for row in data["comparison"]:
        assert row["verified_interval"] == pytest.approx(
            list(verifier.metric_intervals_[row["metric"]]))
        assert row["verified_interval_kind"] == v["intervals"]["label"]
    relearned = v["metric_intervals_network_relearned_on_test_rows"]
    assert set(relearned) == set(v["metrics_network_relearned_on_test_rows"])


def test_sampling_path_intervals_are_labelled_monte_carlo():
    rng = np.random.default_rng(5)
    n = 400
    a = rng.choice(["p", "q"], n)
    X = pd.DataFrame({"x": rng.normal(a == "p", 1.0), "z": rng.normal(size=n)})
    y = (X["x"] + X["z"] > 0.5).astype(int)
    model = LogisticRegression().fit(X, y)
    ver = FairnessVerifier(FrozenEstimator(model), method="sampling", tolerance=0.05,
                           n_draws=0, n_bootstrap=0, random_state=0).fit(
        X, sensitive_features=a)
    note = interval_note(ver)
    assert note["label"] == ("99% Monte Carlo interval (Clopper-Pearson on the sampled rows, "
                             "joint over all intervals; each at most 0.05 wide)")
    page = verifier_html(ver)
    rows = table_with(parse_tables(page), "Rates of every group").records()
    groups = ver.groups_.set_index("sensitive_features")
    for row in rows:
        value, low, high = split_interval(row["positive_rate [99% Monte Carlo interval]"])
        expected = groups.loc[row["sensitive_features"]]
        assert same_number(value, expected["positive_rate"], 3)
        assert same_number(low, expected["ci_low"], 3)
        assert same_number(high, expected["ci_high"], 3)
        assert float(low) <= float(value) <= float(high)


def test_report_shows_the_influence_intervals(audit):
    """The report's FIF table and its text show every influence with its credible interval."""
    report, verifier = audit
    fif = verifier.fairness_influence()
    label = "95% credible interval (posterior of the network, 50 draws)"
    assert fif.intervals["label"] == label
    assert report.sections["verification"]["fairness_influence_intervals"]["label"] == label
    table = table_with(parse_tables(report.to_html()), "Fairness influence (FIF)")
    assert f"value [low, high], the {label}" in table.caption
    groups = [c.text for c in table.head[0]][1:-1]
    text = " ".join(report.to_text().split())
    assert f"value [low, high], the {label}" in text
    for row in table.body:
        feature = row[0].text
        for cell, group in zip(row[1:-1], groups):
            value, low, high = split_interval(cell.text)
            assert same_number(value, fif.table.loc[feature, group], 3)
            assert same_number(low, fif.ci_low.loc[feature, group], 3)
            assert same_number(high, fif.ci_high.loc[feature, group], 3)
            assert cell.text in text


def test_summary_leads_with_the_population_estimate_of_the_favored_groups():
    """The summary's most / least favored groups show their population estimate first."""
    rng = np.random.default_rng(5)
    n = 400
    s = rng.choice(["a", "b"], n, p=[0.6, 0.4])
    x = rng.normal(s == "a", 1.0)
    X = pd.DataFrame({"x": x.round(2), "s": s})
    y = pd.Series((x + rng.normal(0, 0.7, n) > 0.5).astype(int))
    model = LogisticRegression().fit(X[["x"]], y)
    report = run_audit(X, y, "s", model=model, steps=["verify"], verbose=0)
    v = report.to_dict()["verification"]
    text = visible_text(report.to_html())
    for key in ("most_favored_group", "least_favored_group"):
        row = next(g for g in v["groups"] if g["s"] == v[key]["s"])
        assert (f"population estimate {row['population_rate']:.3f} "
                f"[{row['population_ci_low']:.3f}, {row['population_ci_high']:.3f}] "
                "(95% interval); verified selection rate "
                f"{row['positive_rate']:.3f}") in text
    # without the estimate the line shows the verified rate alone
    plain = visible_text(without_population(report).to_html())
    assert "population estimate 0." not in plain and "verified selection rate" in plain
