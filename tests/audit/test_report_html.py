"""The HTML audit report as a page: self-contained, escaped, ordered, numbers as reported.

The report is a real audit (every step, figures) of small data whose dataset name,
column and group names are HTML markup (tests/audit/_report_html_parsing.py). The page is read
back with html.parser; verdicts are recomputed here from the shown values and the
documented rules (four-fifths rule for DI, absolute gaps for the others).
"""

import base64
import re

import pandas as pd
import pytest
from _report_html_parsing import (
    hostile_report,
    judge_interval,
    parse_tables,
    same_number,
    shown,
    split_interval,
    table_with,
    visible_text,
)

from skfairverify.audit import AuditReport, group_comparison
from skfairverify.utils._verdict import DEFAULT_THRESHOLDS

pytest.importorskip("matplotlib")

SECTIONS = ["summary", "groups", "influence", "network", "counterfactual", "esl-first",
            "esl-second"]


@pytest.fixture(scope="module")
def report():
    return hostile_report()


@pytest.fixture(scope="module")
def page(report):
    return report.to_html()


def _section(page: str, anchor: str) -> str:
    start = page.index(f'<section id="{anchor}">')
    return page[start:page.index("</section>", start)]


def test_page_is_self_contained(page):
    assert page.startswith("<!DOCTYPE html>")
    lowered = page.lower()
    for needle in ("http://", "https://", "<script", "<link", "@import", "url(", "<iframe",
                   "<pre"):
        assert needle not in lowered, needle
    for src in re.findall(r'src="([^"]*)"', page):
        assert src.startswith("data:image/png;base64,")
    for href in re.findall(r'href="([^"]*)"', page):
        assert href.startswith("#")
        assert f'id="{href[1:]}"' in page  # every link of the contents reaches its place


def test_every_user_string_is_escaped(page):
    # dataset name, column name and group labels are markup in the data
    for raw in ("<script>", "<b>F</b>", "<u>proxy</u>", "M & 'co'"):
        assert raw not in page
    text = visible_text(page)
    for literal in ("<script>alert('name')</script>", "<b>F</b>", "M & 'co'",
                    "<u>proxy</u>"):
        assert literal in text


def test_summary_comes_first_then_one_section_per_analysis(page):
    positions = [page.index(f'<section id="{a}">') for a in SECTIONS]
    assert positions == sorted(positions)
    assert page.index('<footer id="methods">') > positions[-1]
    for anchor in SECTIONS:
        assert "How to read this." in _section(page, anchor)


def test_verdict_table_shows_the_report_numbers_and_the_rule(report, page):
    rows = table_with(parse_tables(page), "Verdict on every metric").records()
    by_metric = {r["metric"].split(":")[0]: r for r in rows}
    verified = report.sections["verification"]["metrics"]
    empirical = report.sections["empirical"]["metrics"]
    cf = report.sections["counterfactual"]
    test = report.sections["esl_first_stage"]["test"]
    expected = {"DI": (verified["disparate_impact"], empirical["disparate_impact"]),
                "SP": (verified["statistical_parity"], empirical["statistical_parity"]),
                "EO": (verified["equalized_odds"], empirical["equalized_odds"]),
                "CFlips@k delta": (None, cf["cflips"]["delta"]),
                "nDCCF@k delta": (None, cf["ndccf"]["delta"]),
                "TPR difference of the two groups (ESL first stage; 0 = fair)":
                    (None, test["metric_difference"])}
    assert set(by_metric) == set(expected)
    for name, (_, emp) in expected.items():  # records keep the last (empirical) columns
        row = by_metric[name]
        assert same_number(row["value"], emp)
        v = shown(row["value"])
        rule = v >= 0.8 if name == "DI" else abs(v) <= 0.1
        assert row["verdict"] == ("pass" if rule else "fail"), name
    assert by_metric["DI"]["threshold"] == ">= 0.80 (four-fifths rule)"
    # the population estimate [interval] and its verdict (columns 3 and 4 of the row),
    # then the verified value [interval] and verdict (columns 5 and 6)
    table = table_with(parse_tables(page), "Verdict on every metric")
    assert [c.text for c in table.head[1]][:4] == ["value [95% interval]", "verdict",
                                                   "value [95% credible interval]", "verdict"]
    assert "95% credible interval (posterior of the network, 50 draws)" in table.caption
    v = report.sections["verification"]
    keys = {"DI": "disparate_impact", "SP": "statistical_parity", "EO": "equalized_odds"}
    for row in table.body:
        name = row[0].text.split(":")[0]
        if expected[name][0] is None:
            assert row[2].text == "n/a" and row[4].text == "n/a"
            continue
        for at, values, intervals in ((2, v["population_metrics"],
                                       v["population_metric_intervals"]),
                                      (4, v["metrics"], v["metric_intervals"])):
            value, low, high = split_interval(row[at].text)
            got, (lo, hi) = values[keys[name]], intervals[keys[name]]
            assert (same_number(value, got, 3) and same_number(low, lo, 3)
                    and same_number(high, hi, 3))
            assert row[at + 1].text == judge_interval(name == "DI", got, (lo, hi),
                                                      0.8 if name == "DI" else 0.1)
            assert row[at + 1].cls == row[at + 1].text  # coloured by its class


def test_thresholds_change_the_verdict(report):
    v = report.sections["verification"]
    for at, values, intervals in ((3, v["population_metrics"], v["population_metric_intervals"]),
                                  (5, v["metrics"], v["metric_intervals"])):
        di = values["disparate_impact"]
        lo, hi = intervals["disparate_impact"]
        # below the whole interval: pass; above it: fail; inside it: uncertain
        for threshold, word in ((max(min(di, lo) - 0.01, 0), "pass"),
                                (min(max(di, hi) + 0.01, 1), "fail"),
                                ((min(di, lo) + max(di, hi)) / 2, "uncertain")):
            if (word == "pass" and threshold <= 0) or (word == "fail" and threshold >= 1):
                continue  # an interval reaching 0 or 1: no threshold beyond it
            page = report.to_html(thresholds={"disparate_impact": threshold})
            row = table_with(parse_tables(page), "Verdict on every metric").body[0]
            assert row[0].text.startswith("DI") and row[at].text == word
    with pytest.raises(ValueError, match="Unknown threshold"):
        report.to_html(thresholds={"DI": 0.8})
    assert DEFAULT_THRESHOLDS["disparate_impact"] == 0.8


def test_group_table_equals_the_comparison_frame(report, page):
    table = table_with(parse_tables(page), "Rates per group")
    frame = group_comparison(report)
    assert len(table.body) == len(frame)
    selection = "selection rate P(Yhat=1)"
    assert [c.text for c in table.head[1]][:3] == ["population [95% interval]",
                                                    "verified [95% credible interval]",
                                                    "empirical"]
    with_ci = [(selection, f"{s}{b}") for s in ("population", "verified")
               for b in ("", " ci_low", " ci_high")]
    for row, (label, expected) in zip(table.body, frame.iterrows()):
        assert row[0].text == label
        for cell, source in zip(row[1:3], ("population", "verified")):
            value, low, high = split_interval(cell.text)  # the rate with its interval
            assert same_number(value, expected[selection, source], 3)
            assert same_number(low, expected[selection, f"{source} ci_low"], 3)
            assert same_number(high, expected[selection, f"{source} ci_high"], 3)
        for cell, value in zip(row[3:], expected.drop(with_ci).to_numpy()):
            assert same_number(cell.text, value)


def test_fairness_influence_is_sorted_and_complete(report, page):
    v = report.sections["verification"]
    table = table_with(parse_tables(page), "Fairness influence (FIF)")
    fif = pd.DataFrame(v["fairness_influence"]).set_index("feature")
    low, high = (pd.DataFrame(v[f"fairness_influence_ci_{b}"]).set_index("feature")
                 for b in ("low", "high"))
    assert v["fairness_influence_intervals"]["label"] in table.caption
    assert len(table.body) == len(fif)  # few features: nothing folded
    assert [c.text for c in table.head[0]][-1] == "spread"
    spreads = []
    for row in table.body:
        for cell, group in zip(row[1:-1], fif.columns):
            # "value [low, high]", three decimals: the influence and its credible interval
            value, lo, hi = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", cell.text).groups()
            feature = row[0].text
            assert same_number(value, fif.loc[feature, group], decimals=3)
            assert same_number(lo, low.loc[feature, group], decimals=3)
            assert same_number(hi, high.loc[feature, group], decimals=3)
        values = fif.loc[row[0].text]
        assert same_number(row[-1].text, values.max() - values.min())
        spreads.append(values.max() - values.min())
    assert spreads == sorted(spreads, reverse=True)  # largest spread first


def test_network_lists_every_edge(report, page):
    rows = table_with(parse_tables(page), "Bayesian network learned").records()
    parents = {r["variable"]: r["parents"].split(", ") for r in rows}
    edges = report.sections["verification"]["network_edges"]
    assert edges
    for parent, child in edges:
        assert parent in parents[child]
    assert sum(int(r["number of parents"]) for r in rows) == len(edges)


def test_figures_sit_in_the_sections_they_illustrate(report, page):
    where = {"Group positive rates (population and network)": "groups",
             "Fairness influence of the features": "influence",
             "CFlips@k per group": "counterfactual",
             "First-stage ESL shares": "esl-first",
             "ESL values and differences with their intervals": "esl-first",
             "Second-stage contributions": "esl-second"}
    assert set(report.figures) == set(where)
    for title, anchor in where.items():
        assert f'alt="{title}"' in _section(page, anchor)
    for data in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page):
        assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")


def test_methods_footer_makes_the_run_reproducible(report, page):
    footer = page[page.index('<footer id="methods">'):]
    text = visible_text(footer)
    v = report.sections["verification"]
    assert f"in {v['n_bins']} bins" in text and f"times {v['multiplier']}" in text
    assert f"numpy {report.environment['numpy']}" in text
    assert f"scikit-learn {report.environment['scikit-learn']}" in text
    assert "sensitive classifier accuracy" in text
    assert "random state" in text


def _svg():
    return ('<?xml version="1.0"?><!DOCTYPE svg><svg xmlns="http://www.w3.org/2000/svg" '
            'width="40pt" height="20pt" viewBox="0 0 40 20"><rect width="40" height="20"/>'
            "</svg>")


def test_minimal_report_svg_figure_and_bad_figure():
    report = AuditReport(
        dataset={"name": "toy", "sensitive_features": ["s"]}, model={},
        sections={"empirical": {"groups": [{"s": "a", "selection_rate": 0.5, "rows": 3}],
                                "metrics": {"disparate_impact": float("nan")}}},
        figures={"A drawing": _svg()}, environment={})
    page = report.to_html()
    assert "<?xml" not in page and '<svg role="img" aria-label="A drawing"' in page
    assert '<section id="figures">' in page  # a figure of no known section
    rows = table_with(parse_tables(page), "Verdict").body
    assert [c.text for c in rows[0][2:]] == ["n/a", "n/a"]
    report.figures = {"broken": "not base64 !"}
    with pytest.raises(ValueError, match="neither SVG text nor base64 PNG"):
        report.to_html()


def test_the_model_check_is_a_sentence_of_its_own(report, page):
    """The model check's line follows a sentence: it starts one (upper case) and ends it,
    in the page's reading notes and in the text report's legend."""
    text = " ".join(visible_text(page).split())
    assert "The network fits all" in text and ". the network fits" not in text
    assert "5%).." not in text
    legend = " ".join(report.to_text().split())
    assert ". The network fits all" in legend and ". the network fits" not in legend
