"""The audit report as one self-contained HTML page.

The page needs nothing but itself: styles inline, figures as ``data:`` URIs (PNG) or
inline SVG, no script, no external address. Its order is the order a reader asks in:
a summary with the verdict on every metric, one section per analysis (its tables, the
figure beside the table it illustrates, and how to read them), then the methods that
make the numbers reproducible. Every string that comes from the user (dataset, column
and group names, model description, warnings) is escaped. The tables are built by
``skfairverify.utils._html`` and judged by ``skfairverify.utils._verdict``, the same code
as the results' notebook displays (the verifier's: ``skfairverify.verification._display``).
"""

from __future__ import annotations

import base64
import binascii
import inspect
from collections.abc import Mapping

import pandas as pd

from ..counterfactual import CounterfactualFairness
from ..utils._html import (
    CSS,
    contributions_table,
    count,
    counterfactual_tables,
    direction_text,
    escape,
    esl_groups_table,
    esl_test_table,
    facts,
    frame_table,
    interval_cell,
    number,
    p_value,
    signed,
    with_interval,
)
from ..utils._verdict import check_thresholds, verdict_table
from ..verification._display import as_sentence, interval_label, network_frame
from ._common import ReportData, small_sample_line
from ._render import group_sample_lines, legend, provenance_lines, verified_rates
from ._tables import (
    fif_label,
    fif_with_intervals,
    group_comparison,
    interval_columns,
    interval_note,
    metric_comparison,
    population_note,
    with_intervals,
)

# Figure title (as run_audit names them) -> the section it illustrates.
FIGURE_SECTIONS = {
    "Group positive rates (population and network)": "groups",
    "Fairness influence of the features": "influence",
    "CFlips@k per group": "counterfactual",
    "First-stage ESL shares": "esl-first",
    "ESL values and differences with their intervals": "esl-first",
    "Second-stage contributions": "esl-second",
}

# Rows of the fairness-influence table shown before the rest is folded away.
FIF_TOP = 10
SPREAD = "spread"

PAGE_CSS = """
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#fff}
.skfv.page{max-width:76rem;margin:0 auto;padding:1.2rem 1.6rem 3rem}
.skfv h1{font-size:1.6rem;margin:.2em 0 .1em}
.skfv h2{font-size:1.25rem;margin:2em 0 .4em;padding-bottom:.2em;border-bottom:2px solid #dde1e6}
.skfv h3{font-size:1.05rem;margin:1.4em 0 .3em}
.skfv .subtitle{color:var(--skfv-muted);margin:0 0 1em}
.skfv nav{font-size:.9em;margin:.6em 0 1.2em;padding:.5em .8em;background:var(--skfv-note);
border-radius:4px}
.skfv nav ol{margin:.2em 0;padding-left:1.4em;columns:2 18em}
.skfv a{color:#1a55a0}
.skfv .how{background:var(--skfv-note);border-left:4px solid #8aa4c8;padding:.5em .9em;
margin:.6em 0 1em;font-size:.92em;max-width:60em}
.skfv .how p{margin:.2em 0}
.skfv .pair{display:flex;flex-wrap:wrap;gap:1rem 1.6rem;align-items:flex-start}
.skfv .pair>.tables{flex:0 1 auto;min-width:0;max-width:100%}
.skfv .pair>figure{flex:1 1 24rem;min-width:0}
.skfv figure{margin:.4em 0 1em;max-width:100%}
.skfv figure img,.skfv figure svg{display:block;max-width:100%;height:auto}
.skfv figcaption{font-size:.85em;color:var(--skfv-muted);margin-top:.3em}
.skfv details{margin:.3em 0 1em}
.skfv summary{cursor:pointer;color:#1a55a0}
.skfv .warning{color:#7a4b00;background:#fff5e0;padding:.3em .6em;border-radius:3px}
.skfv footer{margin-top:3em;border-top:2px solid #dde1e6;font-size:.92em}
@media print{
@page{size:A4;margin:14mm 12mm}
body{font-size:9.5pt}
.skfv.page{max-width:none;padding:0}
.skfv nav{display:none}
.skfv .skfv-scroll{overflow:visible}
.skfv table{font-size:7pt}
.skfv th,.skfv td{padding:.1em .25em}
.skfv thead th,.skfv td{overflow-wrap:anywhere}
.skfv tbody th,.skfv td.num{white-space:normal}
.skfv h2,.skfv h3{break-after:avoid;page-break-after:avoid}
.skfv figure,.skfv tr,.skfv .how{break-inside:avoid;page-break-inside:avoid}
.skfv .pair>figure{flex-basis:100%}
.skfv figure img,.skfv figure svg{max-height:240mm;width:auto}
.skfv details>*{display:block}
.skfv a{color:inherit;text-decoration:none}
}
"""


# ---------------------------------------------------------------- building blocks
def _how(*paragraphs: str) -> str:
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    return f'<div class="how"><p><strong>How to read this.</strong></p>{body}</div>'


def _figure(title: str, data) -> str:
    """A figure: inline SVG text, or a PNG given as base64 text or bytes."""
    if isinstance(data, bytes) and data.lstrip().startswith((b"<svg", b"<?xml")):
        data = data.decode("utf-8")
    if isinstance(data, str) and data.lstrip().startswith(("<svg", "<?xml")):
        svg = data[data.index("<svg"):]  # drop the XML prolog and doctype
        image = svg.replace("<svg", f'<svg role="img" aria-label="{escape(title)}"', 1)
    else:
        image = f'<img alt="{escape(title)}" src="data:image/png;base64,{_base64(data)}">'
    return f"<figure>{image}<figcaption>{escape(title)}</figcaption></figure>"


def _base64(data) -> str:
    """PNG bytes or base64 text as clean base64 text (anything else is refused)."""
    if isinstance(data, bytes):
        return base64.b64encode(data).decode("ascii")
    text = "".join(str(data).split())
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("A figure of the report is neither SVG text nor base64 PNG "
                         f"data ({exc}).") from exc
    return text


def _pair(tables: list[str], figures: list[str]) -> str:
    """Tables with their figure beside them (below when the page is too narrow)."""
    if not figures:
        return "".join(tables)
    return (f'<div class="pair"><div class="tables">{"".join(tables)}</div>'
            + "".join(figures) + "</div>")


def _section(anchor: str, title: str, body: list[str]) -> str:
    return (f'<section id="{anchor}"><h2>{escape(title)}</h2>' + "".join(body)
            + "</section>")


# ---------------------------------------------------------------- summary
VERIFIED_SOURCE = "verified (population under the network)"
POPULATION_SOURCE = "population estimate (network and rows)"


def _verdict_values(report: ReportData) -> dict:
    """Source -> metric key -> value, for the verdict table."""
    s = report.sections
    values = {}
    if "verification" in s and s["verification"].get("population_metrics"):
        values[POPULATION_SOURCE] = dict(s["verification"]["population_metrics"])
    if "verification" in s:
        values[VERIFIED_SOURCE] = dict(s["verification"]["metrics"])
    empirical = dict(s.get("empirical", {}).get("metrics", {}))
    if "counterfactual" in s:
        empirical["cflips_delta"] = s["counterfactual"]["cflips"].get("delta")
        empirical["ndccf_delta"] = s["counterfactual"]["ndccf"].get("delta")
    test = s.get("esl_first_stage", {}).get("test")
    if test and s["esl_first_stage"].get("metric") == "tpr":
        empirical["tpr_difference"] = test.get("metric_difference")
    values["empirical (test rows)"] = empirical
    return values


def _extreme_groups(report: ReportData) -> list[tuple[str, str]]:
    """The most and least favored groups (by the verified rate), with their rates and rows."""
    v = report.sections.get("verification")
    if not v:
        return []
    out = []
    for label, key in (("most favored group", "most_favored_group"),
                       ("least favored group", "least_favored_group")):
        group = v.get(key) or {}
        match = [r for r in v.get("groups", [])
                 if all(str(r.get(k)) == str(val) for k, val in group.items())]
        name = ", ".join(f"{k}={val}" for k, val in group.items())
        if match:
            name += f": {_group_rates(report, match[0])}, {count(match[0].get('support'))} " \
                    "training rows"
        out.append((label, name))
    return out


def _group_rates(report: ReportData, row: dict) -> str:
    """A group's population estimate (when there is one) and its verified selection rate."""
    rate, note = row.get("positive_rate"), interval_note(report)
    shown = (f"{with_interval(rate, (row.get('ci_low'), row.get('ci_high')))}"
             f" ({interval_label(note, short=True)})" if note else number(rate))
    population = population_note(report)
    if not population or row.get("population_rate") is None:
        return f"verified selection rate {shown}"
    estimate = with_interval(row["population_rate"], (row.get("population_ci_low"),
                                                      row.get("population_ci_high")))
    return (f"population estimate {estimate} ({population['label']}); verified selection "
            f"rate {shown}")


def _summary(report: ReportData, thresholds: dict) -> str:
    d, m = report.dataset, report.model
    sens = ", ".join(map(str, d.get("sensitive_features", [])))
    items = [
        ("dataset", f"{d.get('name', 'data')}: {d.get('rows', '?')} rows, "
                    f"{d.get('features', '?')} columns, favorable rate "
                    f"{number(d.get('favorable_rate'), '.3f')}; "
                    f"{d.get('train_rows', '?')} training / {d.get('test_rows', '?')} test "
                    "rows"),
        ("model", f"{m.get('description', 'not described')}; accuracy train "
                  f"{number(m.get('train_accuracy'))}, test {number(m.get('test_accuracy'))}"),
        ("sensitive features", sens or "none"),
    ]
    provenance = [tuple(line.split(": ", 1)) for line in provenance_lines(d)]
    body = [facts(items[:1] + provenance + items[1:] + _extreme_groups(report))]
    values = _verdict_values(report)
    note, population = interval_note(report), population_note(report)
    if any(values.values()):
        v = report.sections.get("verification") or {}
        intervals = ({VERIFIED_SOURCE: v.get("metric_intervals") or {}}
                     if note and VERIFIED_SOURCE in values else {})
        labels = {VERIFIED_SOURCE: interval_label(note, short=True)}
        if population:
            intervals[POPULATION_SOURCE] = v.get("population_metric_intervals") or {}
            labels[POPULATION_SOURCE] = population["label"]
        body.append(verdict_table(
            values, thresholds,
            "Verdict on every metric: "
            + ("the population estimate (the network's exact rates combined with the "
               "groups' training rows, valid when the network does not fit), " if population
               else "")
            + "verified (exact, population under the learned network) beside empirical "
            "(the model's decisions on the test rows)"
            + (f"; verified values as value [low, high], the {interval_label(note)}"
               if note else ""),
            intervals=intervals or None, labels=labels))
    body.append(_how(
        "Each row is one fairness metric, judged against the threshold in its row: "
        "disparate impact passes at 0.80 or above (the four-fifths rule); every gap "
        "(statistical parity, equalized odds, path-specific, the counterfactual deltas, "
        "the TPR difference) passes when its absolute value is at most its threshold "
        f"(default {thresholds['statistical_parity']:.2f}; AuditReport.to_html("
        "thresholds=...) changes them). n/a: not defined on these data.",
        *_population_how(report),
        *_interval_how(report),
        "Verified numbers are exact for the model's integer rule when the features follow "
        "the Bayesian network learned on the training rows; empirical numbers are the "
        "model's own decisions on the held-out test rows, so they carry sampling noise "
        "(no interval is computed for them: their verdict is pass / fail on the value). "
        "DI, SP and EO compare the most and the least favored groups: when one of them has "
        "few rows, its rate (and the verdict) is uncertain; read the group tables below "
        "before trusting either."))
    return _section("summary", "Summary", body)


def _population_how(report: ReportData) -> list[str]:
    """The "how to read" paragraph on the population estimate and the model check."""
    v = report.sections.get("verification") or {}
    if not population_note(report):
        return []
    check = v.get("model_check")
    return ["The population estimate is what to read first: 'verified' is exact under the "
            "Bayesian network learned from the training rows, which is the population's "
            "rate only when the network fits; the population estimate weighs the network's "
            "rate and each group's own training rows by their precision, the network's "
            "bias included (small area estimation), so it falls back to the rows where "
            "the network does not fit and borrows the network's precision where it does. "
            "Its interval covers both errors. The model check tests each group's network "
            "rate against its rows (p-values in the group table; a small p-value: the "
            f"network does not fit that group). {as_sentence(check) if check else ''}"]


def _interval_how(report: ReportData) -> list[str]:
    """The "how to read" paragraph on the verified intervals and the uncertain verdict."""
    if "verification" not in report.sections:
        return []
    note = interval_note(report)
    if note is None:
        return ["Verified values are point estimates only (the verifier computed no "
                "interval: n_draws=0 or a given network), so their verdict is pass / fail "
                "on the value alone."]
    return [f"Verified values are shown as value [low, high]: the {interval_label(note)}, "
            "in the value's own units (probabilities for rates and gaps, a ratio for DI); "
            "it covers the uncertainty of the finite sample the network was learned from "
            "(or of the sampled rows), not the modelling error of the network. The "
            "verified verdict is pass or fail only when the value and its whole interval "
            "are on that side of the threshold, and uncertain when the interval holds "
            "values on both sides (the data cannot tell pass from fail at that level)."]


# ---------------------------------------------------------------- sections
def _groups(report: ReportData, figures: dict) -> str:
    v = report.sections.get("verification")
    note = interval_note(report)
    what = (f"; verified selection rate as value [low, high], the {interval_label(note)}; "
            "verified TPR and FPR: point estimates" if note else "")
    groups = with_intervals(group_comparison(report), report)
    formats = {"train": count, "test": count, "p, train rows": p_value,
               "p, test rows": p_value}
    formats.update(dict.fromkeys(interval_columns(groups), interval_cell))
    tables = [frame_table(groups,
                          "Rates per group (probabilities in [0, 1]; n/a: no such group, or "
                          f"no row of that label there{what}); rows: training rows behind "
                          "the network, test rows behind the empirical rate",
                          formats=formats)]
    metrics = with_intervals(metric_comparison(report), report)
    tables += [f'<p class="warning">{escape(line)}</p>' for line in group_sample_lines(report)]
    body = [facts(legend(report)), _pair(tables, figures.pop("groups", [])),
            frame_table(metrics,
                        "Metrics over the groups (DI: ratio min / max, 1 = fair; SP, EO: "
                        "max - min differences of probabilities, 0 = fair"
                        + (f"; verified as value [low, high], the {interval_label(note)}"
                           if note else "")
                        + "; empirical = fairlearn's demographic_parity_ratio, "
                        "demographic_parity_difference, equalized_odds_difference)",
                        formats=dict.fromkeys(interval_columns(metrics), interval_cell))]
    read = ["Each row is a sensitive group (all combinations of the sensitive features). "
            "Selection rate is the probability of a favorable decision; TPR and FPR are the "
            "same among people whose true label is favorable / unfavorable."]
    if v:
        read.append("Compare the verified and empirical columns of a group: a gap larger "
                    "than a few points in a group with few test rows is sampling noise of "
                    "the empirical rate; a gap in a large group is the network's modelling "
                    "error. 'verified, test-row network' is the verifier re-run with the "
                    "network learned on the test rows.")
        if interval_note(report):
            read.append("A verified selection rate or metric is shown as value [low, high]: "
                        "its interval (see 'intervals' above) comes from the finite sample "
                        "the network was learned from; a small group has a wide interval. The "
                        "empirical rate carries its own sampling noise besides (no interval "
                        "here), so read a gap between the two against both.")
    body.append(_how(*read))
    return _section("groups", "Group fairness: verified vs empirical", body)


def _fif_frame(v: dict) -> pd.DataFrame:
    """The fairness influence per group, then its spread over the groups, sorted.

    Features come in decreasing order of spread (largest minus smallest influence over
    the groups: what the feature adds to the gaps), ties by the largest absolute
    influence; with one group, by that influence. The figure uses the same order.
    """
    fif = pd.DataFrame(v["fairness_influence"])
    if fif.empty:
        return fif
    fif = fif.set_index("feature").apply(pd.to_numeric, errors="coerce")
    magnitude = fif.abs().max(axis=1)
    if fif.shape[1] > 1:
        fif[SPREAD] = fif.max(axis=1) - fif.min(axis=1)
    key = fif.get(SPREAD, magnitude)
    order = pd.DataFrame({"key": key, "magnitude": magnitude}).sort_values(
        ["key", "magnitude"], ascending=False, kind="stable").index
    return fif.loc[order]


def _influence(report: ReportData, figures: dict) -> str:
    v = report.sections["verification"]
    fif = fif_with_intervals(v, _fif_frame(v))
    with_ci = any(isinstance(x, tuple) for x in fif.to_numpy().ravel())
    formats = dict.fromkeys(fif.columns, interval_cell if with_ci else signed)
    formats[SPREAD] = number
    label = fif_label(v)
    caption = ("Fairness influence (FIF) of the features on each group's verified "
               "selection rate, largest spread (max - min over the groups) first: "
               + v.get("fairness_influence_units", "")
               + (f"; value [low, high], the {label}" if with_ci
                  else f" ({label})" if label else "")
               + (f"; {v['fairness_influence_features']}"
                  if v.get("fairness_influence_features") else ""))
    shown = FIF_TOP if len(fif) > FIF_TOP + 3 else len(fif)  # fold 4 or more rows only
    tables = [frame_table(fif.head(shown), caption, formats=formats)]
    if len(fif) > shown:
        tables.append(f"<details><summary>the other {len(fif) - shown} features"
                      "</summary>" + frame_table(fif.iloc[shown:], None, formats=formats)
                      + "</details>")
    body = [_pair(tables, figures.pop("influence", [])), _how(
        "FIF of a feature for a group is the group's verified selection rate minus the "
        "rate it would have if that feature were uniform within its observed range (FVGM, "
        "Appendix E). A positive value: the feature's real distribution raises the group's "
        "rate; features whose influence differs most between groups are the ones that "
        "drive the gaps of the summary. With intervals (value [low, high]), each is the "
        "credible interval of that influence over the posterior draws of the network "
        "(the uncertainty of its parameters, learned from the training rows; not that of "
        "its structure); a difference between groups within their intervals may be noise.")]
    return _section("influence", "Fairness influence of the features (verified)", body)


def _network(report: ReportData, figures: dict) -> str:
    v = report.sections["verification"]
    frame = network_frame(v.get("network_edges", []))
    body = [frame_table(frame, f"Bayesian network learned on the "
                               f"{report.dataset.get('train_rows', '?')} training rows: the "
                               "parents of every variable (variables without parents are "
                               "left out)"),
            _how("The verified numbers assume the features follow this network: each "
                 "variable's distribution depends on its parents only. The sensitive "
                 "features are parents of the others, so group differences in the data "
                 "carry over to the verified rates.")]
    return _section("network", "Bayesian network", body)


def _counterfactual(report: ReportData, figures: dict) -> str:
    c = report.sections["counterfactual"]
    groups = ""
    if c.get("privileged") is not None:
        rule = f" ({c['privileged_rule']})" if c.get("privileged_rule") else ""
        groups = (f"privileged = {c['privileged']}{rule}; unprivileged = "
                  f"{', '.join(map(str, c.get('unprivileged', [])))}")
    tables = counterfactual_tables(c["cflips"], c["ndccf"], c["n_refused"],
                                   c.get("sensitive_classifier"))
    body = [facts([("sensitive features", ", ".join(c["sensitive_features"])),
                   ("counterfactuals per refused row", str(c["k"]))]
                  + ([("groups", groups)] if groups else [])),
            _pair(tables[:1], figures.pop("counterfactual", [])), *tables[1:]]
    if c.get("by_group"):
        body.append(frame_table(pd.DataFrame(c["by_group"]).set_index("group"),
                                "Per group (compound groups of every sensitive column): "
                                "CFlips@k and nDCCF@k, their deltas against the privileged "
                                "group, refused rows"))
    body += [f'<p class="warning">warning: {escape(w)}</p>' for w in c.get("warnings", [])]
    body += [f'<p class="warning">{escape(line)}</p>' for line in (
        small_sample_line(c.get("small_samples") or c["n_refused"], "refused test rows"),
        (c.get("dropped_rows") or {}).get("reason")) if line]
    body.append(_how(
        "For every test row the model refuses, the k nearest changes of its features that "
        "the model would accept (counterfactuals) are judged by a classifier of the "
        "sensitive group. CFlips@k is the share of them that look like another group; if "
        "the unprivileged must look privileged more often to be accepted, the CFlips delta "
        "is positive. The sensitive classifier's quality bounds what these numbers can "
        "show: with a recall near 0 for a group, its CFlips is not informative."))
    return _section("counterfactual", "Counterfactual fairness", body)


def _esl_first(report: ReportData, figures: dict) -> str:
    e = report.sections["esl_first_stage"]
    frame = pd.DataFrame(e["table"])
    name = e["sensitive_features"][0]
    if name in frame.columns:
        frame = frame.set_index(name)
    tables = [esl_groups_table(frame, e["units"], e.get("total_esl_units"))]
    if e.get("test"):
        tables.append(esl_test_table(e["test"], e["metric"], e.get("baseline", 0.5),
                                     e.get("confidence", 0.95)))
    else:
        tables.append(f"<p>{len(frame)} groups: no single difference; the test of every "
                      "pair is group_esl(...).pairwise().</p>")
    flags = [small_sample_line(e.get("rows") or {}, "test rows with label 1"),
             e.get("groups_left_out")]
    tables += [f'<p class="warning">{escape(flag)}</p>' for flag in flags if flag]
    body = [_pair(tables, figures.pop("esl-first", [])), _how(
        f"The {e['metric'].upper()} of the model on all test rows, divided by the baseline "
        "of a random classifier, is split among the groups (Shapley value of the groups). "
        "A group whose share is below its share of the rows pulls the metric down. The "
        "test asks whether the groups' values differ more than sampling noise allows: a "
        "p-value below 0.05 and an interval that excludes 0 say they do.")]
    return _section("esl-first", f"ESL values of the groups ({e['metric']})", body)


def _esl_second(report: ReportData, figures: dict) -> str:
    e = report.sections["esl_second_stage"]
    frame = pd.DataFrame(e["table"])
    keys = [k for k in ("value", "feature") if k in frame.columns]
    if keys:
        frame = frame.set_index(keys)
    tables = [contributions_table(frame, e["units"], direction_text(e.get("compared", {})))]
    body = [_pair(tables, figures.pop("esl-second", [])), _how(
        "Each group's ESL value is split among the features (a model re-fit on every "
        "coalition of them), once per ESL member (Shapley, Equal Surplus, ...). A feature "
        "whose contributions differ between the groups, with a small p-value, explains "
        "part of the gap; majority = yes when most members find that difference "
        "significant.")]
    return _section("esl-second", "ESL contributions of the features", body)


def _others(figures: dict) -> str:
    rest = [f for figs in figures.values() for f in figs]
    return _section("figures", "Other figures", rest) if rest else ""


# ---------------------------------------------------------------- methods
GENERATORS = {
    "kdtree": "nearest training rows the model accepts (k-d tree), with the refused row's "
              "sensitive value",
    "linear": "closed-form nearest changes for a linear model",
    "dice-genetic": "dice-ml, genetic method", "dice-random": "dice-ml, random method",
}


def _generator(section: dict) -> str:
    """The counterfactual generator: as recorded, else CounterfactualFairness' default."""
    name = section.get("generator")
    note = ""
    if name is None:
        name = inspect.signature(CounterfactualFairness).parameters["generator"].default
        note = " (the default of CounterfactualFairness, which the audit uses)"
    return f"{name}: {GENERATORS.get(str(name), 'a user generator')}{note}"


def _methods_items(report: ReportData) -> list[tuple[str, str]]:
    s, d = report.sections, report.dataset
    items = []
    v = s.get("verification")
    if v:
        linear = v.get("method", "exact") == "exact" and v.get("multiplier") is not None
        items += [("quantization", f"each numeric feature in {v['n_bins']} bins, weights "
                                   f"times {v['multiplier']} rounded to integers; the integer "
                                   f"rule agrees with the model on {number(v['agreement'])} "
                                   "of the training rows") if linear
                  else ("rates", verified_rates(v)),
                  ("network", f"learned on the {d.get('train_rows', '?')} training rows; "
                              f"{len(v.get('network_edges', []))} edges (listed above)")]
    c = s.get("counterfactual")
    if c:
        clf = c.get("sensitive_classifier") or {}
        items += [("counterfactual generator", _generator(c)),
                  ("sensitive classifier", f"accuracy {number(clf.get('accuracy'))}, ROC AUC "
                                           f"{number(clf.get('roc_auc'))} "
                                           + ("(out-of-fold)" if clf.get("held_out")
                                              else "(not held out)"))]
    m = report.model
    items.append(("audited model", f"{m.get('description', 'not described')}; accuracy "
                                   f"train {number(m.get('train_accuracy'))}, test "
                                   f"{number(m.get('test_accuracy'))}"))
    settings = getattr(report, "settings", None) or {}
    items.append(("random state", str(settings["random_state"]) if "random_state" in settings
                  else "not recorded in this report"))
    items += [(k.replace("_", " "), str(val)) for k, val in settings.items()
              if k != "random_state"]
    versions = getattr(report, "environment", None) or {}
    if versions:
        items.append(("package versions", ", ".join(f"{k} {val}"
                                                     for k, val in versions.items())))
    if report.timings:
        items.append(("time (s)", ", ".join(f"{k} {val}" for k, val in report.timings.items())))
    return items


def _methods(report: ReportData) -> str:
    return ('<footer id="methods"><h2>Methods</h2>' + facts(_methods_items(report))
            + "<p>References: verified numbers (population under the learned Bayesian "
              "network): FVGM, Ghosh et al.; counterfactual fairness: CFlips and nDCCF, "
              "Cornacchia et al.; ESL values: Shapley meets Rawls. Generated by "
              "skfairverify.</p></footer>")


# ---------------------------------------------------------------- page
def _figures_by_section(report: ReportData) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for title, data in report.figures.items():
        out.setdefault(FIGURE_SECTIONS.get(title, "other"), []).append(_figure(title, data))
    return out


_SECTIONS = (
    ("verification", "influence", "Fairness influence", _influence),
    ("verification", "network", "Bayesian network", _network),
    ("counterfactual", "counterfactual", "Counterfactual fairness", _counterfactual),
    ("esl_first_stage", "esl-first", "ESL values of the groups", _esl_first),
    ("esl_second_stage", "esl-second", "ESL contributions", _esl_second),
)


def _body(report: ReportData, thresholds: dict) -> tuple[list[str], list[tuple[str, str]]]:
    figures = _figures_by_section(report)
    parts, toc = [_summary(report, thresholds)], [("summary", "Summary")]
    if "empirical" in report.sections:
        parts.append(_groups(report, figures))
        toc.append(("groups", "Group fairness"))
    for key, anchor, title, render in _SECTIONS:
        if key in report.sections:
            parts.append(render(report, figures))
            toc.append((anchor, title))
    other = _others(figures)
    if other:
        parts.append(other)
        toc.append(("figures", "Other figures"))
    toc.append(("methods", "Methods"))
    return parts, toc


def render_html(report: ReportData, thresholds: Mapping | None = None) -> str:
    """The report as one self-contained HTML page (see the module docstring).

    Parameters
    ----------
    report : AuditReport
        The audit.
    thresholds : mapping, default=None
        Overrides of the verdict thresholds
        (:data:`skfairverify.utils._verdict.DEFAULT_THRESHOLDS`).

    Returns
    -------
    str
        The page.
    """
    thresholds = check_thresholds(thresholds)
    parts, toc = _body(report, thresholds)
    name = escape(report.dataset.get("name", "data"))
    nav = "".join(f'<li><a href="#{a}">{escape(t)}</a></li>' for a, t in toc)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Fairness audit: {name}</title><style>{CSS}{PAGE_CSS}</style></head>"
        f'<body><main class="skfv page"><header><h1>Fairness audit: {name}</h1>'
        '<p class="subtitle">skfairverify audit report: verified (FVGM), counterfactual '
        "and ESL analyses of one model</p></header>"
        f'<nav aria-label="contents"><strong>Contents</strong><ol>{nav}</ol></nav>'
        + "\n".join(parts) + _methods(report) + "</main></body></html>\n"
    )
