"""The verdict on a fairness metric: pass, fail or uncertain against its threshold.

Shared by the verifier's notebook display (``skfairverify.verification._display``) and
the audit report (``skfairverify.audit._html``): one table of the metrics the package
judges (the verifier's, the counterfactual deltas, the ESL first stage's TPR difference),
their default thresholds, and the rule that turns a value and its interval into a verdict.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import pandas as pd

from ._html import frame_table, interval_cell, is_missing, merge_interval

__all__ = ["DEFAULT_THRESHOLDS", "check_thresholds", "verdict_frame", "verdict_table"]

# Thresholds of the verdict table: DI passes at or above its threshold (the four-fifths
# rule of the US EEOC Uniform Guidelines), every gap passes at or below its threshold.
DEFAULT_THRESHOLDS = {
    "disparate_impact": 0.8,
    "statistical_parity": 0.1,
    "equalized_odds": 0.1,
    "path_specific_causal": 0.1,
    "cflips_delta": 0.1,
    "ndccf_delta": 0.1,
    "tpr_difference": 0.1,
}

# metric key -> (label, what the threshold means)
VERDICT_METRICS = {
    "disparate_impact": ("DI: min / max selection rate (ratio, 1 = fair)", "four-fifths rule"),
    "statistical_parity": ("SP: max - min selection rate (0 = fair)", "largest gap"),
    "equalized_odds": ("EO: larger of the TPR and FPR gaps (0 = fair)", "largest gap"),
    "path_specific_causal": ("path-specific causal fairness: max - min rate with the "
                             "mediators drawn as for the most favored group (0 = fair)",
                             "largest gap"),
    "cflips_delta": ("CFlips@k delta: unprivileged - privileged (0 = fair)",
                     "largest |delta|"),
    "ndccf_delta": ("nDCCF@k delta: privileged - unprivileged (0 = fair)",
                    "largest |delta|"),
    "tpr_difference": ("TPR difference of the two groups (ESL first stage; 0 = fair)",
                       "largest |gap|"),
}


def check_thresholds(thresholds: Mapping | None) -> dict:
    """The verdict thresholds: the defaults updated by ``thresholds``, checked.

    Parameters
    ----------
    thresholds : mapping or None
        Metric key -> threshold, overriding :data:`DEFAULT_THRESHOLDS`.

    Returns
    -------
    dict
        Every key of :data:`DEFAULT_THRESHOLDS`.

    Raises
    ------
    ValueError
        On an unknown key or a threshold that is not a finite number >= 0 (or, for
        ``disparate_impact``, not in [0, 1]).

    Examples
    --------
    >>> from skfairverify.utils._verdict import check_thresholds
    >>> check_thresholds({"statistical_parity": 0.05})["statistical_parity"]
    0.05
    >>> check_thresholds({"sp": 0.05})
    Traceback (most recent call last):
    ...
    ValueError: Unknown threshold 'sp'; choose among ['disparate_impact', ...
    """
    out = dict(DEFAULT_THRESHOLDS)
    for key, value in (thresholds or {}).items():
        if key not in DEFAULT_THRESHOLDS:
            raise ValueError(f"Unknown threshold {key!r}; choose among "
                             f"{list(DEFAULT_THRESHOLDS)}.")
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not math.isfinite(value) or value < 0):
            raise ValueError(f"Threshold {key!r} must be a finite number >= 0, got {value!r}.")
        if key == "disparate_impact" and value > 1:
            raise ValueError(f"Threshold 'disparate_impact' is a ratio in [0, 1], got {value!r}.")
        out[key] = float(value)
    return out


def _passes(key: str, value: float, thresholds: dict) -> bool:
    if key == "disparate_impact":
        return value >= thresholds[key]
    return abs(value) <= thresholds[key]


def _judge(key: str, value, thresholds: dict, interval=None) -> str:
    """pass / fail of ``value``; with an interval, "uncertain" when it straddles."""
    if is_missing(value):
        return "n/a"
    point = _passes(key, value, thresholds)
    if interval is None or any(is_missing(v) for v in interval):
        return "pass" if point else "fail"
    low, high = sorted(float(v) for v in interval)
    t = thresholds[key]
    if key == "disparate_impact":
        all_pass, all_fail = low >= t, high < t
    else:  # |x| <= t on all of [low, high], or |x| > t on all of it
        all_pass, all_fail = max(abs(low), abs(high)) <= t, low > t or high < -t
    if point and all_pass:
        return "pass"
    if not point and all_fail:
        return "fail"
    return "uncertain"


def threshold_text(key: str, thresholds: dict) -> str:
    """How ``key`` is judged, e.g. ``">= 0.80 (four-fifths rule)"``."""
    sign = ">=" if key == "disparate_impact" else "<="
    bar = "" if key in ("disparate_impact", "statistical_parity", "equalized_odds",
                        "path_specific_causal") else "|value| "
    return f"{bar}{sign} {thresholds[key]:.2f} ({VERDICT_METRICS[key][1]})"


def verdict_frame(values: Mapping[str, Mapping], thresholds: Mapping | None = None,
                  intervals: Mapping[str, Mapping] | None = None) -> pd.DataFrame:
    """Each metric's value per source, the threshold and the verdict, side by side.

    Parameters
    ----------
    values : mapping
        Source name (e.g. ``"verified"``, ``"empirical"``) -> {metric key: value}; a
        metric a source does not give is ``n/a`` there.
    thresholds : mapping, default=None
        Overrides of :data:`DEFAULT_THRESHOLDS` (see :func:`check_thresholds`).
    intervals : mapping, default=None
        Source name -> {metric key: ``(low, high)``}, the intervals of a source's
        values (e.g. the verifier's ``metric_intervals_``).

    Returns
    -------
    pandas.DataFrame
        Index: the metrics; columns ``("threshold", "")``, then per source
        ``(source, "value")``, with intervals ``(source, "low")`` and ``(source,
        "high")``, and ``(source, "verdict")``: ``"pass"``, ``"fail"``, ``"n/a"`` when
        undefined, and for a source with intervals ``"uncertain"`` when the interval
        holds values on both sides of the threshold (pass / fail need the value and
        its whole interval on that side).

    Examples
    --------
    >>> from skfairverify.utils._verdict import verdict_frame
    >>> frame = verdict_frame({"verified": {"disparate_impact": 0.75,
    ...                                     "statistical_parity": 0.05}})
    >>> frame["verified", "verdict"].tolist()
    ['fail', 'pass']
    >>> frame = verdict_frame({"verified": {"disparate_impact": 0.75,
    ...                                     "statistical_parity": 0.05}},
    ...                       intervals={"verified": {"disparate_impact": (0.7, 0.85),
    ...                                               "statistical_parity": (0.03, 0.07)}})
    >>> frame["verified", "verdict"].tolist()
    ['uncertain', 'pass']
    """
    thresholds = check_thresholds(thresholds)
    intervals = intervals or {}
    keys = [k for k in VERDICT_METRICS if any(k in v for v in values.values())]
    columns = {("threshold", ""): [threshold_text(k, thresholds) for k in keys]}
    for source, vals in values.items():
        ci = intervals.get(source)
        columns[source, "value"] = [vals.get(k) for k in keys]
        if ci is not None:
            bounds = [ci.get(k) or (None, None) for k in keys]
            columns[source, "low"] = [b[0] for b in bounds]
            columns[source, "high"] = [b[1] for b in bounds]
        columns[source, "verdict"] = [
            _judge(k, vals.get(k), thresholds, None if ci is None else ci.get(k))
            for k in keys]
    index = pd.Index([VERDICT_METRICS[k][0] for k in keys], name="metric")
    frame = pd.DataFrame(columns, index=index)
    frame.columns = pd.MultiIndex.from_tuples(columns)
    return frame


def verdict_table(values: Mapping[str, Mapping], thresholds: Mapping | None = None,
                  caption: str | None = None, *, intervals: Mapping | None = None,
                  labels: Mapping[str, str] | None = None) -> str:
    """:func:`verdict_frame` as HTML, verdict cells coloured.

    A source with intervals shows ``value [low, high]`` in one column headed
    ``value [<its label>]`` (``labels``: source -> short interval label).
    """
    frame = verdict_frame(values, thresholds, intervals)
    formats = {"verdict": _verdict_cell}
    for source in (intervals or {}):
        header = (source, f"value [{(labels or {}).get(source, 'interval')}]")
        frame = merge_interval(frame, (source, "value"), (source, "low"), (source, "high"),
                               header)
        formats[header] = interval_cell
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame_table(frame, caption, formats=formats)


def _verdict_cell(word: str) -> tuple[str, str]:
    return word, word if word in ("pass", "fail", "uncertain") else "na"
