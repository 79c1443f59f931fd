"""The groups of the counterfactual audit: the privileged group's rule, per-group values.

One rule chooses the privileged group when ``privileged=None``, for two groups and for
more (one sensitive column with 3+ values, or the compound groups of several columns):
:func:`privileged_group`, public so that the command line applies the same rule. The
audit compares the privileged group with all the others together (CFlips of a row: the
share of its counterfactuals that the sensitive classifier puts on the other side), and
:func:`group_table` breaks that comparison down into one row per group, with a
small-sample flag on every comparison that rests on fewer than ``min_group_size`` rows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..utils._categories import category_codes, equals

__all__ = ["MIN_GROUP_SIZE", "PRIVILEGED_RULE", "PrivilegedGroup", "group_table",
           "privileged_group"]

#: Default ``min_group_size``: refused rows below which a group of three or more is
#: never chosen as the privileged one, and audited rows below which a comparison is
#: flagged ``small_sample``.
MIN_GROUP_SIZE = 30

#: The rule of :func:`privileged_group`, as stated in results and reports.
PRIVILEGED_RULE = (
    "the group with the highest rate of favorable decisions of the model on the training "
    "rows (of three or more groups, among those with at least "
    "min_group_size={min_group_size} refused rows, which the audit compares)"
)


class PrivilegedGroup(NamedTuple):
    """The privileged group chosen by :func:`privileged_group`, and why."""

    label: object
    """The group (a value of the attribute, or a compound ``"a|b"`` label)."""
    rates: pd.DataFrame
    """Per group: ``selection_rate``, ``n_rows`` (sum of weights) and ``eligible``."""
    rule: str
    """The rule, as a sentence."""


def privileged_group(decisions, groups, *, favorable=1, sample_weight=None,
                     min_group_size: int = MIN_GROUP_SIZE) -> PrivilegedGroup:
    """The privileged group: the most favored among the groups the audit can compare.

    The rule :class:`~skfairverify.CounterfactualFairness` applies when
    ``privileged=None``: the group with the highest rate of favorable decisions. Of
    two groups, always that one. Of three or more (one attribute with 3+ values, or the
    compound groups of several), among the groups with at least ``min_group_size``
    refused rows (weights: their sum): the audit compares refused rows, and a group
    the model almost always accepts (titanic's first-class women: 3 refused of 94) or a
    tiny favored group (5 rows against 129) would make every comparison rest on a
    handful of rows. Ties go to the group that sorts first.

    Parameters
    ----------
    decisions : array-like of shape (n_samples,)
        The model's decisions on the rows (e.g. ``model.predict(X_train)``).
    groups : array-like of shape (n_samples,)
        The group of every row: the values of one sensitive attribute, or compound
        labels (:func:`~skfairverify.counterfactual._sensitive.group_labels`).
    favorable : label, default=1
        The favorable decision (matched by the package's category rule: ``1`` is
        ``1.0`` and ``True``, not ``"1"``).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows.
    min_group_size : int, default=30
        Refused rows a group needs to be eligible (three or more groups).

    Returns
    -------
    PrivilegedGroup
        ``label``, ``rates`` (one row per group, sorted by label when the labels sort:
        ``selection_rate``, ``n_rows``, ``n_refused``, ``eligible``) and ``rule``.

    Raises
    ------
    ValueError
        More than two groups and none with ``min_group_size`` refused rows (e.g. a
        numeric column taken as the sensitive attribute: one group per value).

    Examples
    --------
    >>> from skfairverify.counterfactual import privileged_group
    >>> groups = ["a"] * 40 + ["b"] * 60 + ["c"] * 5
    >>> decisions = [1] * 10 + [0] * 30 + [1] * 20 + [0] * 40 + [1] * 5
    >>> chosen = privileged_group(decisions, groups, min_group_size=30)
    >>> chosen.label, chosen.rates["selection_rate"].round(2).tolist()
    ('b', [0.25, 0.33, 1.0])
    >>> chosen.rates["n_refused"].tolist(), chosen.rates["eligible"].tolist()
    ([30.0, 40.0, 0.0], [True, True, False])
    """
    groups = np.asarray(groups, dtype=object)
    weights = np.ones(len(groups)) if sample_weight is None else np.asarray(sample_weight)
    accepted = equals(np.asarray(decisions, dtype=object), favorable, name="decisions")
    codes, labels = category_codes(groups, name="groups")
    n_rows = np.bincount(codes, weights=weights, minlength=len(labels))
    n_accepted = np.bincount(codes, weights=weights * accepted, minlength=len(labels))
    rates = pd.DataFrame({"selection_rate": n_accepted / n_rows, "n_rows": n_rows,
                          "n_refused": n_rows - n_accepted},
                         index=pd.Index(labels, dtype=object, name="group"))
    rates["eligible"] = (rates["n_refused"] >= min_group_size) | (len(labels) <= 2)
    if not rates["eligible"].any():
        shown = labels if len(labels) <= 10 else [*labels[:10], "..."]
        raise ValueError(
            f"No group of the {len(labels)} groups {shown} has min_group_size="
            f"{min_group_size} refused rows (the most has {rates['n_refused'].max():g} of "
            f"{n_rows.sum():g} rows): none can be the privileged group of the comparison. "
            "Pass privileged=<the group>, bin or merge the groups (a numeric column gives "
            "one group per value), or lower min_group_size."
        )
    try:
        rates = rates.sort_index()
    except TypeError:  # labels of several types: their order of appearance
        pass
    label = rates["selection_rate"].where(rates["eligible"]).idxmax()
    return PrivilegedGroup(label, rates, PRIVILEGED_RULE.format(min_group_size=min_group_size))


def group_table(group_codes, labels, privileged_code, per_row: dict, weights,
                min_group_size: int, count) -> pd.DataFrame:
    """One row per group: its values at ``k`` and its comparison with the privileged group.

    Parameters
    ----------
    group_codes : ndarray of int
        Group code of every audited row (refused and recognised).
    labels : list
        The group of each code.
    privileged_code : int
    per_row : dict
        ``{"cflips": (n,), "ndccf": (n,), "available": (n,)}``: each audited row's values
        at ``k`` (NaN without counterfactuals) and its number of counterfactuals.
    weights : ndarray of shape (n,)
    min_group_size : int
    count : callable
        Turns a sum of weights into the reported count (an int when unweighted).

    Returns
    -------
    DataFrame
        Index ``group``; ``side`` (``"privileged"`` / ``"unprivileged"``), ``cflips``,
        ``ndccf``, ``delta_cflips`` (the group minus the privileged group),
        ``delta_ndccf`` (the privileged group minus the group; NaN on the privileged
        row), ``n_refused`` (audited rows), ``n_without_counterfactuals`` and
        ``small_sample`` (fewer than ``min_group_size`` audited rows with
        counterfactuals in the group or, for a comparison, in the privileged group).
    """
    columns = {"side": [], "cflips": [], "ndccf": [], "n_refused": [],
               "n_without_counterfactuals": [], "n_compared": []}
    available = per_row["available"] > 0
    for code in range(len(labels)):  # a few groups: columns built directly (a frame of
        members = group_codes == code  # records and its set_index cost 5 ms a scorer call)
        have = members & available
        w = weights[have]
        for name in ("cflips", "ndccf"):
            columns[name].append(float(np.average(per_row[name][have], weights=w))
                                 if w.sum() > 0 else np.nan)
        columns["side"].append("privileged" if code == privileged_code else "unprivileged")
        columns["n_refused"].append(count(weights[members].sum()))
        columns["n_without_counterfactuals"].append(count(weights[members & ~have].sum()))
        columns["n_compared"].append(float(w.sum()))
    unprivileged = np.arange(len(labels)) != privileged_code
    cflips, ndccf = np.array(columns["cflips"]), np.array(columns["ndccf"])
    small = np.array(columns["n_compared"]) < min_group_size
    return pd.DataFrame({
        "side": columns["side"], "cflips": cflips, "ndccf": ndccf,
        "delta_cflips": np.where(unprivileged, cflips - cflips[privileged_code], np.nan),
        "delta_ndccf": np.where(unprivileged, ndccf[privileged_code] - ndccf, np.nan),
        "n_refused": columns["n_refused"],
        "n_without_counterfactuals": columns["n_without_counterfactuals"],
        "small_sample": small | (unprivileged & bool(small[privileged_code])),
    }, index=pd.Index(list(labels), dtype=object, name="group"))
