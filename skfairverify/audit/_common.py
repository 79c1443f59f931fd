"""Labels, units and JSON helpers shared by the audit's steps and renderers."""

from __future__ import annotations

import json
import math
from typing import Protocol

import pandas as pd


class ReportData(Protocol):
    """What the renderers read of an :class:`~skfairverify.audit.AuditReport`.

    The renderers (``_tables``, ``_render``, ``_html``) sit below ``_report``, which
    calls them; they read the report's data through this interface, not its class.
    """

    dataset: dict
    model: dict
    sections: dict
    timings: dict
    figures: dict
    settings: dict
    environment: dict


# The kinds of group numbers the audit prints, each labelled for what it is.
SOURCES = {
    "population": "population estimate: the network's exact rate combined with the "
                  "group's training rows by their precision, the network's bias included "
                  "(small area estimation); it holds when the network does not fit",
    "verified": "population under the learned Bayesian network (FVGM)",
    "verified, test-row network": "the verifier's network re-learned on the test rows "
                                  "(still model-based, not an observed rate)",
    "empirical": "test rows, fairlearn MetricFrame",
}
POPULATION_LABEL, VERIFIED_LABEL, RELEARNED_LABEL, EMPIRICAL_LABEL = (
    f"{k}: {v}" for k, v in SOURCES.items())

# Metric key -> (description with its unit, fairlearn function giving the empirical value)
METRICS = {
    "disparate_impact": ("disparate impact DI (min / max selection rate; ratio, 1 = fair)",
                         "demographic_parity_ratio"),
    "statistical_parity": ("statistical parity SP (max - min selection rate; 0 = fair)",
                           "demographic_parity_difference"),
    "equalized_odds": ("equalized odds EO (larger of the TPR and FPR gaps, max - min; "
                       "0 = fair)", "equalized_odds_difference"),
    "path_specific_causal": ("path-specific causal fairness (max - min rate with the "
                             "mediators drawn from Z | A = most favored group, FVGM; "
                             "0 = fair)", None),
}

RATE_NAMES = {
    "selection_rate": "selection rate P(Yhat=1)",
    "true_positive_rate": "TPR P(Yhat=1 | Y=1)",
    "false_positive_rate": "FPR P(Yhat=1 | Y=0)",
}
SHORT_METRICS = {
    "disparate_impact": "DI (min / max selection rate)",
    "statistical_parity": "SP (max - min selection rate)",
    "equalized_odds": "EO (max of TPR gap, FPR gap)",
    "path_specific_causal": "path-specific causal (max - min)",
}


#: A group compared on fewer rows than this is flagged as a small sample in the reports:
#: a rate on 30 rows has a standard error up to 0.09, as large as the gaps compared.
SMALL_SAMPLE_ROWS = 30


def small_samples(counts: dict) -> dict:
    """The groups of ``counts`` (group -> rows) with fewer than SMALL_SAMPLE_ROWS rows."""
    return {str(g): int(n) for g, n in counts.items()
            if n is not None and n == n and int(n) < SMALL_SAMPLE_ROWS}


def small_sample_line(counts: dict, rows: str = "rows") -> str | None:
    """The report's flag of the small groups of ``counts``, or None when there is none.

    Examples
    --------
    >>> from skfairverify.audit._common import small_sample_line
    >>> small_sample_line({"F": 12, "M": 300}, "test rows")[:46]
    'small sample: F (12 test rows); below 30 rows,'
    """
    small = small_samples(counts)
    if not small:
        return None
    named = ", ".join(f"{g} ({n:,} {rows})" for g, n in small.items())
    which = "its rates and every comparison with it are" if len(small) == 1 else \
        "their rates and every comparison with them are"
    return f"small sample: {named}; below {SMALL_SAMPLE_ROWS} rows, {which} noisy"


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows of a DataFrame as JSON-ready dicts (a named index becomes columns)."""
    out = frame.copy()
    if isinstance(out.columns, pd.MultiIndex):
        out.columns = [" / ".join(str(p) for p in col if str(p)) for col in out.columns]
    if any(name is not None for name in out.index.names):
        out = out.reset_index()
    out = out.astype(object).where(out.notna(), None)
    return json.loads(out.to_json(orient="records", default_handler=str))


def jsonable(obj):
    """``obj`` with numpy scalars as Python numbers and anything else unknown as text."""
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item")
                                 else str(o)))


def finite_or_none(obj):
    """``obj`` with every NaN or infinite float (nested in dicts/lists) replaced by None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_or_none(v) for v in obj]
    return obj
