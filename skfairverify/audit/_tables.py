"""The verified-vs-empirical comparison tables of a report (DataFrames and JSON rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ._common import METRICS, RATE_NAMES, SHORT_METRICS

if TYPE_CHECKING:  # pragma: no cover
    from ._report import AuditReport


def _group_key(record: dict, sensitive_features: list[str]) -> tuple:
    return tuple(str(record[c]) for c in sensitive_features)


def _group_index(keys: list[tuple], sensitive_features: list[str]) -> pd.Index:
    if len(sensitive_features) > 1:
        return pd.MultiIndex.from_tuples(keys, names=sensitive_features)
    return pd.Index([k[0] for k in keys], name=sensitive_features[0])


def group_comparison(report: AuditReport) -> pd.DataFrame:
    """Verified and empirical rates of every group side by side (probabilities).

    Columns are ``(rate, source)`` pairs, source ``"verified"`` (population under the
    learned network) or ``"empirical"`` (test rows), then the rows behind each:
    ``("rows", "train")`` (the network's support) and ``("rows", "test")``.
    """
    sensitive_features = report.dataset["sensitive_features"]
    verified = {_group_key(r, sensitive_features): r
                for r in report.sections.get("verification", {}).get("groups", [])}
    empirical = {_group_key(r, sensitive_features): r
                 for r in report.sections["empirical"]["groups"]}
    keys = list(verified) + [k for k in empirical if k not in verified]
    columns, data = [], []
    for rate, name in RATE_NAMES.items():
        v_rate = "positive_rate" if rate == "selection_rate" else rate
        columns += [(name, "verified"), (name, "empirical")]
        data += [[verified.get(k, {}).get(v_rate) for k in keys],
                 [empirical.get(k, {}).get(rate) for k in keys]]
    columns += [("rows", "train"), ("rows", "test")]
    data += [[verified.get(k, {}).get("support") for k in keys],
             [empirical.get(k, {}).get("rows") for k in keys]]
    frame = pd.DataFrame(dict(enumerate(data)))
    frame.columns = pd.MultiIndex.from_tuples(columns)
    frame.index = _group_index(keys, sensitive_features)
    if "verification" not in report.sections:
        frame = frame.drop(columns=[c for c in columns if c[1] in ("verified", "train")])
    frame = frame.apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")
    counts = [c for c in frame.columns if c[0] == "rows"]
    frame[counts] = frame[counts].fillna(0).astype(int)  # a group absent there has 0 rows
    return frame


def metric_comparison(report: AuditReport) -> pd.DataFrame:
    """DI, SP and EO: verified, verified on a test-row network, empirical, side by side."""
    v = report.sections.get("verification")
    emp = report.sections["empirical"]["metrics"]
    names = list(v["metrics"]) if v else list(emp)
    cols = {}
    if v:
        cols["verified"] = [v["metrics"].get(k) for k in names]
        cols["verified, test-row network"] = [
            (v["metrics_network_relearned_on_test_rows"] or {}).get(k) for k in names]
    cols["empirical"] = [emp.get(k) for k in names]
    index = pd.Index([SHORT_METRICS.get(k, k) for k in names])
    return pd.DataFrame(cols, index=index).apply(pd.to_numeric, errors="coerce")


def comparison_records(report: AuditReport) -> list[dict]:
    """The metric comparison for JSON, with unambiguous keys."""
    v = report.sections["verification"]
    emp = report.sections["empirical"]["metrics"]
    return [
        {"metric": k, "definition": METRICS.get(k, (k, None))[0],
         "verified": v["metrics"].get(k),
         "verified_network_relearned_on_test_rows":
             (v["metrics_network_relearned_on_test_rows"] or {}).get(k),
         "empirical_test_rows": emp.get(k),
         "empirical_fairlearn_function": METRICS.get(k, (k, None))[1]}
        for k in v["metrics"]
    ]
