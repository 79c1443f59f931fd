"""The report as plain text (the HTML page is in ``_html``)."""

from __future__ import annotations

import textwrap

import pandas as pd

from ..utils._html import interval_cell
from ..verification._display import as_sentence, interval_label
from ._common import SOURCES, ReportData, small_sample_line
from ._tables import (
    fif_label,
    fif_with_intervals,
    group_comparison,
    interval_columns,
    interval_note,
    metric_comparison,
    with_intervals,
)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _table_text(rows: list[dict]) -> str:
    if not rows:
        return "  (none)"
    return pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4f}")


def _frame_text(frame: pd.DataFrame, fmt: str = "{:.4f}") -> str:
    frame = frame.copy()
    for col in interval_columns(frame):  # (value, low, high) cells of with_intervals
        frame[col] = frame[col].map(interval_cell)
    return frame.to_string(float_format=lambda x: fmt.format(x), na_rep="n/a")


def _wrap(text: str) -> str:
    """A prose line of the text report, wrapped at 100 characters."""
    return textwrap.fill(text, 100, subsequent_indent="    ", break_on_hyphens=False)


def _parents_text(edges: list) -> str:
    parents: dict[str, list[str]] = {}
    for parent, child in edges:
        parents.setdefault(child, []).append(parent)
    if not parents:
        return "(none: independent variables)"
    return "; ".join(f"{child} <- {', '.join(ps)}" for child, ps in parents.items())


def verified_rates(v: dict) -> str:
    """How the verification section's rates were computed, by its path (``method``)."""
    method = v.get("method", "exact")
    if method == "sampling":
        why = f"; why sampled: {v['method_reason']}" if v.get("method_reason") else ""
        return ("Monte Carlo rates of the model's own decisions on "
                f"{int(v.get('n_samples') or 0):,} rows sampled from the network "
                f"({v['n_bins']} bins per numeric feature{why})")
    if method == "bounds":
        return ("sound bounds of the tree ensemble's rates (every split threshold a state "
                f"boundary; {v['n_bins']} bins)")
    if v.get("multiplier") is None:
        return ("exact rates of the decision tree's leaves (every split threshold a state "
                f"boundary; {v['n_bins']} bins)")
    return (f"exact rates of the model's integer rule (agreement with the model "
            f"{v['agreement']:.4f}; {v['n_bins']} bins, multiplier {v['multiplier']})")


def legend(report: ReportData) -> list[tuple[str, str]]:
    """(column name, what its numbers are) for the verified-vs-empirical tables.

    Shared by the text and the HTML report.
    """
    d, v = report.dataset, report.sections.get("verification")
    out = []
    if v and v.get("population_metrics"):
        out.append(("population", SOURCES["population"] + "; value [low, high], its "
                    f"{float(v.get('population_level', 0.95)):.0%} interval; model check: "
                    "p-values of each group's network rate against its training rows "
                    "(bootstrap) and against its test rows (held out)"
                    + (f". {as_sentence(v['model_check'])}" if v.get("model_check")
                       else "")))
    if v:
        out += [("verified", SOURCES["verified"] + f": {verified_rates(v)} when the "
                 "features follow the network learned on the "
                 f"{d.get('train_rows', '?')} training rows"),
                ("verified, test-row network", SOURCES["verified, test-row network"]
                 + "; on the same rows as the empirical column, so their gap is the "
                 "modelling error of the network and the integer rule"
                 + (f" (not available here: {v['network_relearned_on_test_rows_error']})"
                    if v.get("network_relearned_on_test_rows_error") else "")),
                ("intervals", _intervals_text(report))]
        if v.get("method") == "bounds":
            out.append(("rate_lower, rate_upper, settled", "the tree-ensemble path's "
                        "sound bounds of the verified selection rate under the network "
                        "(certain, no sampling error; the verified value is their midpoint, "
                        "or the sampled estimate of the mass they left unsettled) and the "
                        "share of the network's mass whose decision they settled (1: exact)"))
    out.append(("empirical", SOURCES["empirical"] + ": the model's own "
                f"decisions on the {d.get('test_rows', '?')} test rows"))
    return out


def group_sample_lines(report: ReportData) -> list[str]:
    """The small-sample flags of the group tables: few test rows, few training rows."""
    names = report.dataset.get("sensitive_features", [])

    def counts(records, key):
        return {" / ".join(str(r.get(c)) for c in names): r.get(key) for r in records}

    out = [small_sample_line(counts(report.sections["empirical"]["groups"], "rows"),
                             "test rows")]
    v = report.sections.get("verification")
    if v:
        out.append(small_sample_line(counts(v["groups"], "support"), "training rows"))
    return [line for line in out if line]


def _intervals_text(report: ReportData) -> str:
    """What the verified intervals are (the legend's line)."""
    note = interval_note(report)
    if note is None:
        recorded = report.sections["verification"].get("intervals")
        return f"verified values: {interval_label(recorded)}; no interval"
    return (f"verified selection rates and metrics are shown as value [low, high], the "
            f"{interval_label(note)}, in the value's units; the verified TPR and FPR are "
            "point estimates; an interval holding values on both sides of a threshold "
            "makes that verdict uncertain")


def _fairness_text(report: ReportData) -> list[str]:
    """Verified vs empirical group rates and metrics, with what each number is."""
    v = report.sections.get("verification")
    out = ["", "== Group fairness: verified (FVGM) vs empirical =="]
    out += [_wrap(f"{name}: {text}") for name, text in legend(report)]
    if v:
        out.append(_wrap("network (parents of each variable): "
                         + _parents_text(v["network_edges"])))
    out += [_wrap("Rates per group, probabilities in [0, 1] (n/a: no such group, or no row of "
                  "that label, and then left out of the gap):"),
            _frame_text(with_intervals(group_comparison(report), report)),
            *(_wrap(line) for line in group_sample_lines(report)),
            _wrap("Metrics over the groups (DI is a ratio, 1 = fair; SP and EO are "
                  "differences of probabilities, max - min over the groups, 0 = fair; "
                  "empirical DI, SP, EO are fairlearn's demographic_parity_ratio, "
                  "demographic_parity_difference, equalized_odds_difference):"),
            _frame_text(with_intervals(metric_comparison(report), report))]
    if v:
        out += _fif_text(v)
    return out


def _fif_text(v: dict) -> list[str]:
    fif = pd.DataFrame(v["fairness_influence"])
    limited = ([_wrap(v["fairness_influence_features"])]
               if v.get("fairness_influence_features") else [])
    groups = [" / ".join(str(x) for x in g.values())
              for g in (v["most_favored_group"], v["least_favored_group"])]
    if fif.shape[1] > 5 and all(g in fif.columns for g in groups):
        fif = fif[["feature", *groups]]  # many groups: the two extremes
    if fif.empty:
        return []
    num = fif.select_dtypes("number")
    order = num.abs().max(axis=1).sort_values(ascending=False).index[:5]
    top = fif.loc[order].set_index("feature")
    shown = fif_with_intervals(v, top)
    label = fif_label(v)
    if shown is not top:  # (value, low, high) cells: "value [low, high]"
        shown = shown.map(interval_cell)
    return [_wrap("top fairness influence (FIF, verified): change of each group's verified "
                  "selection rate (probability) due to the feature's real distribution rather "
                  "than one uniform within its observed range (FVGM Appendix E; categorical: "
                  "uniform over its categories; most and least favored groups when there are "
                  "many)" + (f"; value [low, high], the {label}" if shown is not top
                             else f" ({label})" if label else "") + ":"),
            shown.reset_index().to_string(index=False, float_format=lambda x: f"{x:+.4f}"),
            *limited]


def _classifier_text(clf: dict | None) -> list[str]:
    if not (clf and clf.get("by_group")):
        return []
    how = ("out-of-fold on the training rows (cross-fitted)" if clf["held_out"]
           else "on the rows passed to fit (a frozen classifier; not held out)")
    return [_wrap(f"sensitive classifier (judges every counterfactual), scored {how}: "
                  f"accuracy {_fmt(clf['accuracy'])}, ROC AUC {_fmt(clf.get('roc_auc'))}; "
                  "per group (shares in [0, 1]):"),
            _table_text(clf["by_group"])]


def _counterfactual_text(c: dict) -> list[str]:
    groups = ""
    if c.get("privileged") is not None:
        rule = f": {c['privileged_rule']}" if c.get("privileged_rule") else ""
        groups = (f" (privileged = {c['privileged']}{rule}; unprivileged = "
                  f"{', '.join(c['unprivileged'])})")
    out = ["", f"== Counterfactual fairness ({', '.join(c['sensitive_features'])}, "
               f"k={c['k']}) ==",
           _wrap(f"Means over the refused test rows{groups} of CFlips@k (share of a row's k "
                 "counterfactuals that the sensitive classifier puts in another group; 0 = "
                 "fair) and nDCCF@k (rank-discounted share of those it keeps in the row's "
                 "group; 1 = fair); both in [0, 1]:")]
    for name, delta in (("cflips", "unprivileged - privileged"),
                        ("ndccf", "privileged - unprivileged")):
        vals = c[name]
        out.append(f"{name}: privileged {_fmt(vals['privileged'])}, unprivileged "
                   f"{_fmt(vals['unprivileged'])}, delta ({delta}) {_fmt(vals['delta'])}")
    out.append("refused rows used: " + ", ".join(f"{k} {v}" for k, v in
                                                 c["n_refused"].items()))
    if c.get("by_group"):
        out += [_wrap("per group (compound groups of every sensitive column; a group's "
                      "deltas against the privileged group):"), _table_text(c["by_group"])]
    flag = small_sample_line(c.get("small_samples") or c["n_refused"], "refused test rows")
    out += [_wrap(line) for line in (flag, (c.get("dropped_rows") or {}).get("reason"))
            if line]
    out += _classifier_text(c.get("sensitive_classifier"))
    return out + [_wrap(f"warning: {w}") for w in c["warnings"]]


def _esl_test_text(e: dict) -> str:
    t = e.get("test")
    if not t:
        return _wrap(f"{len(e['table'])} groups: no single difference; the test of every "
                     "pair, in both units, is group_esl(...).pairwise()")
    a, b = t["compared"]
    m = e["metric"].upper()
    return _wrap(
        f"{m} difference {a} - {b}: {t['metric_difference']:+.4f} (raw {m} gap; ESL units: "
        f"{t['esl_difference']:+.4f} = metric / baseline {e.get('baseline', 0.5):g}), "
        f"std. error {t['metric_std_error']:.4f} raw ({t['esl_std_error']:.4f} ESL), "
        f"z {t['z']:+.3f}, p-value {t['p_value']:.4f}, {e['confidence']:.0%} CI raw "
        f"[{t['metric_ci'][0]:+.4f}, {t['metric_ci'][1]:+.4f}]"
    )


def _esl_first_text(e: dict) -> list[str]:
    return ["", f"== ESL values, first stage ({', '.join(e['sensitive_features'])}, "
                f"metric {e['metric']}) ==",
            _wrap(f"units: {e['units']}; share = esl_value / total (total "
                  f"{_fmt(e['total_esl_units'])} ESL units)"),
            _table_text(e["table"]),
            _esl_test_text(e),
            *[_wrap(line) for line in [small_sample_line(e.get("rows") or {},
                                                         "test rows with label 1"),
                                       e.get("groups_left_out")] if line]]


def _esl_second_text(e: dict) -> list[str]:
    pairs = {tuple(p) for p in e.get("compared", {}).values()}
    if len(pairs) == 1:
        a, b = pairs.pop()
        direction = f"{a} - {b}"
    else:
        direction = ", ".join(f"{k}: {p[0]} - {p[1]}" for k, p in e.get("compared", {}).items())
    return ["", f"== ESL values, second stage (features {', '.join(e['features'])}) ==",
            _wrap(f"units: {e['units']}; esl_difference, esl_std_error, esl_ci_* are the "
                  f"difference of the contributions, {direction}, in the same ESL units"),
            _table_text(e["table"])]


_SECTION_TEXT = {
    "counterfactual": _counterfactual_text,
    "esl_first_stage": _esl_first_text,
    "esl_second_stage": _esl_second_text,
}


def provenance_lines(d: dict) -> list[str]:
    """What the audit used, one line per fact recorded in the report's ``dataset``.

    The favorable label and how it was chosen, the rows read, used and dropped (with
    the reason), the columns left out and the missing values kept.

    Examples
    --------
    >>> from skfairverify.audit._render import provenance_lines
    >>> lines = provenance_lines({"rows_read": 10, "dropped_rows": [
    ...     {"rows": 2, "reason": "no label"}], "missing_values": {"age": 3}})
    >>> lines[0]
    'rows: 10 read, 8 used; 2 dropped: no label'
    >>> lines[1].startswith("missing values: age 3 (kept as data")
    True
    """
    out = []
    label = d.get("favorable_label")
    if label:
        out.append(f"favorable outcome: {label['column']} = {label['value']} "
                   f"({label['rule']})")
    if "rows_read" in d:
        dropped = d.get("dropped_rows") or []
        used = d["rows_read"] - sum(x["rows"] for x in dropped)
        line = f"rows: {d['rows_read']:,} read, {used:,} used"
        line += ("; " + "; ".join(f"{x['rows']:,} dropped: {x['reason']}" for x in dropped)
                 if dropped else " (none dropped)")
        out.append(line)
    for left in d.get("columns_left_out") or []:
        out.append(f"columns left out: {', '.join(map(str, left['columns']))} "
                   f"({left['reason']})")
    leaks = d.get("label_leaks")
    if leaks:
        out.append("possible label leaks: " + ", ".join(f"{c} ({v:.0%} of the rows)"
                                                        for c, v in leaks.items())
                   + " alone give(s) the label on most rows, perhaps the label under "
                   "another name; leave them out with --drop")
    missing = d.get("missing_values")
    if missing:
        shown = list(missing.items())[:8]
        more = (f", and {len(missing) - 8} more columns (the JSON dataset lists them)"
                if len(missing) > 8 else "")
        out.append("missing values: " + ", ".join(f"{c} {n:,}" for c, n in shown) + more
                   + " (kept as data: imputed by the model, a state of their own in the "
                   "network)")
    return out


def render_text(report: ReportData) -> str:
    """The report as readable plain text.

    Its first lines say what the audit used: the data, the favorable outcome and how
    it was chosen, the rows dropped (with their reasons), the columns left out and the
    missing values kept.
    """
    d, m, s = report.dataset, report.model, report.sections
    out = [
        f"skfairverify audit: {d['name']} ({d['rows']} rows, {d['features']} columns, "
        f"favorable rate {d['favorable_rate']:.3f}); sensitive features: "
        f"{', '.join(d['sensitive_features'])}",
        *(_wrap(line) for line in provenance_lines(d)),
        f"model: {m['description']}; accuracy train {m['train_accuracy']:.4f}, "
        f"test {m['test_accuracy']:.4f} ({d['train_rows']} training / {d['test_rows']} test "
        "rows)",
    ]
    out += _fairness_text(report)
    for key, render in _SECTION_TEXT.items():
        if key in s:
            out += render(s[key])
    out += ["", "timings (s): " + ", ".join(f"{k} {v}" for k, v in report.timings.items())]
    return "\n".join(out)
