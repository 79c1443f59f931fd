"""Observed group rates and DI/SP/EO on the test rows (fairlearn's MetricFrame)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import EMPIRICAL_LABEL, jsonable, records


def _binary_predictions(y_pred) -> np.ndarray:
    """The model's decisions as 0/1 (1 = favorable), or an error naming the labels."""
    arr = np.asarray(y_pred)
    if arr.dtype == bool:
        return arr.astype(int)
    values = pd.unique(arr)
    try:
        ok = set(np.asarray(values, dtype=float).tolist()) <= {0.0, 1.0}
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"The model predicts the labels {sorted(map(str, values))[:5]}; the audit needs "
            "0/1 decisions (1 = favorable), like the labels it was given."
        )
    return arr.astype(float).astype(int)


def _rate_given(label: int, rate):
    """fairlearn's ``rate`` on a group, NaN when the group has no row with ``y == label``.

    fairlearn returns 0 for such a group (its confusion matrix row is empty), which would
    enter the equalized-odds gap as a plausible wrong rate; the verifier reports NaN there.
    """

    def metric(y_true, y_pred):
        if not np.any(np.asarray(y_true) == label):
            return np.nan
        return float(rate(y_true, y_pred, pos_label=1))

    return metric


def empirical_group_metrics(y_true, y_pred, sensitive_features: pd.DataFrame) -> dict:
    """Observed group rates and DI/SP/EO of the decisions ``y_pred`` (fairlearn MetricFrame).

    Groups are the intersections of the columns of ``sensitive_features`` (as the
    verifier's compound groups). ``selection_rate`` is the share of positive decisions,
    ``true_positive_rate`` / ``false_positive_rate`` those among the rows with label 1 / 0
    (NaN for a group without such rows, and left out of the gap). DI is fairlearn's
    ``demographic_parity_ratio``, SP its ``demographic_parity_difference`` and EO its
    ``equalized_odds_difference`` (worst case of the TPR and FPR differences between
    groups).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels, 0/1 (1 = favorable).
    y_pred : array-like of shape (n_samples,)
        Decisions, 0/1 (1 = favorable).
    sensitive_features : pandas.DataFrame
        Sensitive columns of the same rows.

    Returns
    -------
    dict
        ``label``, ``rows``, ``groups`` (records) and ``metrics``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.audit import empirical_group_metrics
    >>> out = empirical_group_metrics([1, 0, 1, 0], [1, 0, 0, 0],
    ...                               pd.DataFrame({"sex": ["F", "F", "M", "M"]}))
    >>> out["metrics"]["statistical_parity"], out["metrics"]["equalized_odds"]
    (0.5, 1.0)
    """
    from fairlearn.metrics import (
        MetricFrame,
        count,
        false_positive_rate,
        selection_rate,
        true_positive_rate,
    )

    y_true = np.asarray(y_true).astype(int)
    y_pred = _binary_predictions(y_pred)
    frame = MetricFrame(
        metrics={
            "selection_rate": selection_rate,
            "true_positive_rate": _rate_given(1, true_positive_rate),
            "false_positive_rate": _rate_given(0, false_positive_rate),
            "rows": count,
            "positives": lambda t, p: int(np.sum(np.asarray(t) == 1)),
        },
        y_true=y_true, y_pred=y_pred,
        sensitive_features=sensitive_features.reset_index(drop=True),
    )
    groups = frame.by_group.dropna(subset=["rows"])
    groups = groups[groups["rows"] > 0].astype({"rows": int, "positives": int})
    groups.insert(groups.columns.get_loc("positives") + 1, "negatives",
                  groups["rows"] - groups["positives"])
    rates = ["selection_rate", "true_positive_rate", "false_positive_rate"]
    gaps = frame.difference(method="between_groups")[rates].astype(float)  # max - min
    metrics = {
        "disparate_impact": float(frame.ratio(method="between_groups")["selection_rate"]),
        "statistical_parity": float(gaps["selection_rate"]),
        "equalized_odds": float(max(gaps["true_positive_rate"], gaps["false_positive_rate"])),
    }
    return {"label": EMPIRICAL_LABEL, "rows": int(len(y_true)),
            "groups": records(groups), "metrics": jsonable(metrics)}
