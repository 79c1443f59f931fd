"""The verified-vs-empirical comparison tables of a report (DataFrames and JSON rows)."""

from __future__ import annotations

import pandas as pd

from ..utils._html import merge_interval
from ..verification._display import has_intervals, interval_label
from ._common import METRICS, RATE_NAMES, SHORT_METRICS, ReportData


def _group_key(record: dict, sensitive_features: list[str]) -> tuple:
    return tuple(str(record[c]) for c in sensitive_features)


def _group_index(keys: list[tuple], sensitive_features: list[str]) -> pd.Index:
    if len(sensitive_features) > 1:
        return pd.MultiIndex.from_tuples(keys, names=sensitive_features)
    return pd.Index([k[0] for k in keys], name=sensitive_features[0])


def interval_note(report: ReportData) -> dict | None:
    """The recorded kind of the verifier's intervals, when they are real intervals."""
    note = report.sections.get("verification", {}).get("intervals")
    return note if has_intervals(note) else None


def fif_with_intervals(v: dict, fif: pd.DataFrame) -> pd.DataFrame:
    """``fif`` (features by groups) with ``(value, low, high)`` cells when recorded.

    The bounds are ``fairness_influence_ci_low`` / ``_ci_high`` of the verification
    section (records of the same features and groups); ``fif`` itself when there are
    none (no posterior draws, or a report written before they existed). Columns of
    ``fif`` that are not groups (e.g. the spread) are left as they are.
    """
    low, high = v.get("fairness_influence_ci_low"), v.get("fairness_influence_ci_high")
    if not low or not high or fif.empty:
        return fif
    low, high = (pd.DataFrame(r).set_index("feature").apply(pd.to_numeric, errors="coerce")
                 for r in (low, high))
    out = fif.astype(object)
    for c in fif.columns:
        if c in low.columns:
            out[c] = list(zip(fif[c], low.loc[fif.index, c], high.loc[fif.index, c]))
    return out


def fif_label(v: dict) -> str | None:
    """What the influences' intervals are (or why there is none); None if not recorded."""
    note = v.get("fairness_influence_intervals")
    return interval_label(note) if note else None


#: The groups' records of the population estimate of every rate of the comparison.
POPULATION_KEYS = {"selection_rate": "population_rate",
                   "true_positive_rate": "population_true_positive_rate",
                   "false_positive_rate": "population_false_positive_rate"}


def population_note(report: ReportData) -> dict | None:
    """What the population intervals are (level and label), when the audit has them."""
    v = report.sections.get("verification", {})
    if not v.get("population_metrics"):
        return None
    level = float(v.get("population_level", 0.95))
    return {"level": level, "label": f"{level:.0%} interval"}


#: The groups' records of the tree-ensemble path's sound bounds (``method == "bounds"``).
BOUNDS_KEYS = ("rate_lower", "rate_upper", "settled")


def _bounds_path(report: ReportData) -> bool:
    """Whether the verification's rates are the tree-ensemble path's sound bounds."""
    return report.sections.get("verification", {}).get("method") == "bounds"


def _held_out(report: ReportData, sensitive_features) -> dict:
    rows = report.sections.get("verification", {}).get("model_check_held_out") or []
    return {_group_key(r, sensitive_features): r.get("pvalue") for r in rows}


def _rate_columns(report, rate, name, verified, empirical, keys) -> tuple[list, list]:
    """The ``(rate, source)`` columns of one rate: population, verified, empirical."""
    columns, data = [], []
    v_rate = "positive_rate" if rate == "selection_rate" else rate
    if population_note(report):
        columns.append((name, "population"))
        data.append([verified.get(k, {}).get(POPULATION_KEYS[rate]) for k in keys])
        if rate == "selection_rate":
            for bound in ("ci_low", "ci_high"):
                columns.append((name, f"population {bound}"))
                data.append([verified.get(k, {}).get(f"population_{bound}") for k in keys])
    columns.append((name, "verified"))
    data.append([verified.get(k, {}).get(v_rate) for k in keys])
    if rate == "selection_rate" and interval_note(report):
        for bound in ("ci_low", "ci_high"):
            columns.append((name, f"verified {bound}"))
            data.append([verified.get(k, {}).get(bound) for k in keys])
    if rate == "selection_rate" and _bounds_path(report):
        for key in BOUNDS_KEYS:
            columns.append((name, key))
            data.append([verified.get(k, {}).get(key) for k in keys])
    columns.append((name, "empirical"))
    data.append([empirical.get(k, {}).get(rate) for k in keys])
    return columns, data


def group_comparison(report: ReportData) -> pd.DataFrame:
    """Population, verified and empirical rates of every group side by side.

    Columns are ``(rate, source)`` pairs, source ``"population"`` (the population
    estimate: the network's rate combined with the group's training rows), ``"verified"``
    (exact under the learned network) or ``"empirical"`` (test rows), then the model
    check (``("model check", "p, train rows")``: the network's rate against the training
    rows by their bootstrap; ``("model check", "p, test rows")``: against the held-out
    rows) and the rows behind each: ``("rows", "train")`` (the network's support) and
    ``("rows", "test")``. With intervals, the selection rate has ``"population ci_low"``
    / ``"population ci_high"`` and ``"verified ci_low"`` / ``"verified ci_high"`` after
    the values (the other rates are point estimates). On the tree-ensemble path
    (``method == "bounds"``), the selection rate has ``"rate_lower"``, ``"rate_upper"``
    (its sound bounds) and ``"settled"`` (the share of the mass whose decision the
    bounds settled) after them.
    """
    sensitive_features = report.dataset["sensitive_features"]
    verified = {_group_key(r, sensitive_features): r
                for r in report.sections.get("verification", {}).get("groups", [])}
    empirical = {_group_key(r, sensitive_features): r
                 for r in report.sections["empirical"]["groups"]}
    keys = list(verified) + [k for k in empirical if k not in verified]
    columns, data = [], []
    for rate, name in RATE_NAMES.items():
        more_columns, more_data = _rate_columns(report, rate, name, verified, empirical, keys)
        columns += more_columns
        data += more_data
    if population_note(report):
        held_out = _held_out(report, sensitive_features)
        columns += [("model check", "p, train rows"), ("model check", "p, test rows")]
        data += [[verified.get(k, {}).get("model_check_pvalue") for k in keys],
                 [held_out.get(k) for k in keys]]
    columns += [("rows", "train"), ("rows", "test")]
    data += [[verified.get(k, {}).get("support") for k in keys],
             [empirical.get(k, {}).get("rows") for k in keys]]
    frame = pd.DataFrame(dict(enumerate(data)))
    frame.columns = pd.MultiIndex.from_tuples(columns)
    frame.index = _group_index(keys, sensitive_features)
    if "verification" not in report.sections:
        frame = frame.drop(columns=[c for c in columns if c[1] == "train"
                                    or c[1].startswith(("verified", "population"))])
    frame = frame.apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")
    counts = [c for c in frame.columns if c[0] == "rows"]
    frame[counts] = frame[counts].fillna(0).astype(int)  # a group absent there has 0 rows
    return frame


def metric_comparison(report: ReportData) -> pd.DataFrame:
    """DI, SP and EO: population, verified, verified on a test-row network, empirical.

    With the verifier's intervals, ``"<column> ci_low"`` and ``"<column> ci_high"``
    follow each verified column (the test-row network's when recorded); the population
    column has its own intervals.
    """
    v = report.sections.get("verification")
    emp = report.sections["empirical"]["metrics"]
    names = list(v["metrics"]) if v else list(emp)
    cols = {}
    if v and population_note(report):
        pop, ci = v["population_metrics"], v.get("population_metric_intervals") or {}
        cols["population"] = [pop.get(k) for k in names]
        cols["population ci_low"] = [(ci.get(k) or (None, None))[0] for k in names]
        cols["population ci_high"] = [(ci.get(k) or (None, None))[1] for k in names]
    if v:
        with_ci = interval_note(report) is not None
        for name, key in (("verified", "metrics"),
                          ("verified, test-row network",
                           "metrics_network_relearned_on_test_rows")):
            cols[name] = [(v.get(key) or {}).get(k) for k in names]
            ci = v.get(key.replace("metrics", "metric_intervals", 1)) or {}
            if with_ci and ci:
                cols[f"{name} ci_low"] = [(ci.get(k) or (None, None))[0] for k in names]
                cols[f"{name} ci_high"] = [(ci.get(k) or (None, None))[1] for k in names]
    cols["empirical"] = [emp.get(k) for k in names]
    index = pd.Index([SHORT_METRICS.get(k, k) for k in names])
    return pd.DataFrame(cols, index=index).apply(pd.to_numeric, errors="coerce")


def with_intervals(frame: pd.DataFrame, report: ReportData) -> pd.DataFrame:
    """A comparison table for display: each verified value and its interval in one column.

    Every column ``name`` followed by ``name ci_low`` and ``name ci_high`` (the
    ``verified`` columns of :func:`group_comparison` and :func:`metric_comparison`)
    becomes one column ``name [<interval label>]`` of ``(value, low, high)`` cells
    (``skfairverify.utils._html.interval_cell`` shows them).
    """
    note, population = interval_note(report), population_note(report)
    if note is None and population is None:
        return frame
    for col in list(frame.columns):
        top, last = (col[:-1], col[-1]) if isinstance(col, tuple) else ((), col)
        label = (population["label"] if str(last).startswith("population") and population
                 else interval_label(note, short=True) if note else None)
        low, high = (top + (f"{last} ci_low",), top + (f"{last} ci_high",))
        if not top:
            low, high = low[0], high[0]
        if label and low in frame.columns and high in frame.columns:
            header = top + (f"{last} [{label}]",) if top else f"{last} [{label}]"
            frame = merge_interval(frame, col, low, high, header)
    if isinstance(frame.columns[0], tuple):
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame


def interval_columns(frame: pd.DataFrame) -> list:
    """The columns of a :func:`with_intervals` table holding ``(value, low, high)`` cells."""
    return [c for c in frame.columns
            if frame[c].map(lambda v: isinstance(v, tuple)).any()]


def comparison_records(report: ReportData) -> list[dict]:
    """The metric comparison for JSON, with unambiguous keys."""
    v = report.sections["verification"]
    emp = report.sections["empirical"]["metrics"]
    note = interval_note(report)
    intervals = v.get("metric_intervals") or {}
    population = v.get("population_metrics") or {}
    pop_ci = v.get("population_metric_intervals") or {}
    return [
        {"metric": k, "definition": METRICS.get(k, (k, None))[0],
         "population": population.get(k),
         "population_interval": list(pop_ci[k]) if k in pop_ci else None,
         "verified": v["metrics"].get(k),
         "verified_interval": list(intervals[k]) if note and k in intervals else None,
         "verified_interval_kind": interval_label(note),
         "verified_network_relearned_on_test_rows":
             (v["metrics_network_relearned_on_test_rows"] or {}).get(k),
         "empirical_test_rows": emp.get(k),
         "empirical_fairlearn_function": METRICS.get(k, (k, None))[1]}
        for k in v["metrics"]
    ]
