"""Figures of the ESL box: group values, their intervals, second-stage contributions."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..esl import ESLDecompositionResult, GroupESLResult
from ._layout import (
    check_top,
    group_label,
    legend_height,
    legend_outside,
    new_axes,
    panels,
    rows_height,
    wrap,
)

__all__ = ["plot_esl_contributions", "plot_esl_intervals", "plot_group_shares"]


def _check_group_result(result) -> None:
    if not isinstance(result, GroupESLResult):
        raise TypeError("result must be the GroupESLResult returned by group_esl, got "
                        f"{type(result).__name__}.")


def _labels(index: pd.Index) -> list[str]:
    names = list(index.names) if isinstance(index, pd.MultiIndex) else None
    return [group_label(g, names) for g in index]


def _quantile(confidence: float) -> float:
    return float(stats.norm.ppf(0.5 + confidence / 2))


def plot_group_shares(result, *, ax=None, kind: str = "value"):
    """Horizontal bars of the first-stage ESL value (or share) of every group.

    One row per group (an intersection of several sensitive features is labelled with
    one line per feature), the confidence interval of each value as an error bar, and
    the equal split of the total as a dashed line; the legend sits outside the data
    area, to the right of the axes.

    Parameters
    ----------
    result : GroupESLResult
        Output of :func:`skfairverify.group_esl`.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure (no wider than a page) when None.
    kind : {"value", "share"}, default="value"
        Plot the values with their confidence intervals, or the shares of the total
        (in percent, no intervals).

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    See Also
    --------
    plot_esl_intervals : The values and their pairwise differences with intervals.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skfairverify import group_esl
    >>> from skfairverify.plotting import plot_group_shares
    >>> res = group_esl([1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 0, 0],
    ...                 sensitive_features=list("aaabbb"))
    >>> ax = plot_group_shares(res)
    >>> len(ax.patches), [t.get_text() for t in ax.get_yticklabels()]
    (2, ['a', 'b'])
    """
    _check_group_result(result)
    if kind not in ("value", "share"):
        raise ValueError(f"kind must be 'value' or 'share', got {kind!r}.")
    labels = _labels(result.esl_values.index)
    if ax is None:
        _, (ax,) = new_axes(7.0, rows_height(len(labels), labels, extra=1.6))
    pos = np.arange(len(labels))
    if kind == "value":
        ax.barh(pos, result.esl_values.to_numpy(), color="C0",
                xerr=_quantile(result.confidence) * result.esl_std_errors.to_numpy(),
                capsize=3, label=f"ESL value, {result.confidence:.0%} interval")
        ax.axvline(result.total / len(labels), color="grey", ls="--", lw=1,
                   label="equal split\nof the total")
        ax.set_xlabel(wrap(f"ESL value (ESL units = {result.metric} / "
                           f"{result.baseline:g}, split by the {result.value} value)", 60))
    else:
        ax.barh(pos, 100 * result.shares.to_numpy(), color="C0", label="share")
        ax.axvline(100 / len(labels), color="grey", ls="--", lw=1,
                   label="equal split")
        ax.set_xlabel("share of the total (%)")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(pos, labels)
    ax.invert_yaxis()
    ax.set_title(_shares_title(result), fontsize="medium")
    legend_outside(ax)
    return ax


def _shares_title(result) -> str:
    title = f"{result.value} value of each group, total {result.total:.3g}"
    if result.compared is not None:
        a, b = result.compared
        title += (f"\n{result.metric} {a} - {b}: {result.metric_difference:+.3g} "
                  f"(ESL units {result.esl_difference:+.3g}, p={result.p_value:.2g})")
    return title


def plot_esl_intervals(result, *, units: str = "esl", top: int | None = 10, value=None):
    """Confidence intervals of ESL values and of their differences (forest plot).

    For a :class:`~skfairverify.esl.GroupESLResult`: a first panel with every group's
    value and its interval, a second with the difference of every pair of groups
    (:meth:`~skfairverify.esl.GroupESLResult.pairwise`; the ``top`` pairs of smallest
    p-value when there are more). For an
    :class:`~skfairverify.esl.ESLDecompositionResult`: one panel per ESL member with the
    difference of the two compared groups' contributions of every feature (Theorem
    4.3). The intervals are ``estimate +/- z * standard error`` at the result's
    ``confidence``; an interval that excludes 0 (a significant difference) is drawn in
    red.

    Parameters
    ----------
    result : GroupESLResult or ESLDecompositionResult
        Output of :func:`skfairverify.group_esl` or
        :func:`skfairverify.esl_decomposition`.
    units : {"esl", "metric"}, default="esl"
        For a GroupESLResult, draw the ESL values (ESL units) or the metric of every
        group and its gaps (metric units). A decomposition is in ESL units only.
    top : int or None, default=10
        Largest number of pairs drawn (smallest p-values first); None draws all.
    value : str, default=None
        For a decomposition, the ESL member to draw; None draws every member, one
        panel each (two panels per row).

    Returns
    -------
    axes : ndarray of matplotlib Axes
        The panels, top to bottom.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skfairverify import group_esl
    >>> from skfairverify.plotting import plot_esl_intervals
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b", "c"], size=600)
    >>> y_pred = (rng.random(600) < np.where(g == "a", 0.7, 0.4)).astype(int)
    >>> res = group_esl(np.ones(600), y_pred, sensitive_features=g, metric="tpr")
    >>> axes = plot_esl_intervals(res)
    >>> [t.get_text() for t in axes[1].get_yticklabels()]
    ['a - b', 'a - c', 'b - c']
    """
    check_top(top)
    if units not in ("esl", "metric"):
        raise ValueError(f"units must be 'esl' or 'metric', got {units!r}.")
    if isinstance(result, ESLDecompositionResult):
        if units != "esl":
            raise ValueError("An ESLDecompositionResult is in ESL units only (units='esl').")
        return _decomposition_intervals(result, value)
    _check_group_result(result)
    values = _value_rows(result, units)
    pairs = _pair_rows(result, units, top)
    heights = [rows_height(len(rows), rows.index, extra=0.0) for rows in (values, pairs)]
    _, axes = new_axes(6.5, sum(heights) + 2.2, nrows=2,
                       gridspec_kw={"height_ratios": heights})
    unit = (f"ESL units = {result.metric} / {result.baseline:g}" if units == "esl"
            else f"{result.metric}, metric units")
    _forest(axes[0], values, reference=None)
    axes[0].set_title(f"{_what(result, units)} of each group ({result.confidence:.0%} "
                      "intervals)", fontsize="medium")
    axes[0].set_xlabel(unit)
    _forest(axes[1], pairs, reference=0.0)
    n_pairs = len(result.esl_values) * (len(result.esl_values) - 1) // 2
    shown = "" if len(pairs) == n_pairs else f" ({len(pairs)} of {n_pairs}, smallest p first)"
    axes[1].set_title(f"Differences between groups{shown}", fontsize="medium")
    axes[1].set_xlabel(f"difference ({unit})")
    legend_outside(axes[1], handles=_significance_handles())
    return axes


def _what(result, units: str) -> str:
    return f"{result.value} ESL value" if units == "esl" else result.metric


def _value_rows(result, units: str) -> pd.DataFrame:
    """One row per group: estimate, interval (columns ``estimate``, ``low``, ``high``)."""
    q = _quantile(result.confidence)
    est, se = ((result.esl_values, result.esl_std_errors) if units == "esl"
               else (result.metric_by_group, result.metric_std_errors))
    frame = pd.DataFrame({"estimate": est.to_numpy(), "low": (est - q * se).to_numpy(),
                          "high": (est + q * se).to_numpy()})
    frame.index = [_one_line(g) for g in result.esl_values.index]
    return frame


def _pair_rows(result, units: str, top) -> pd.DataFrame:
    """One row per pair of groups (``first - second``), smallest p-value first."""
    pairs = result.pairwise()
    prefix = "esl" if units == "esl" else "metric"
    if top is not None and len(pairs) > top:
        pairs = pairs.iloc[np.argsort(pairs["p_value"].to_numpy(), kind="stable")[:top]]
    frame = pd.DataFrame({"estimate": pairs[f"{prefix}_difference"].to_numpy(),
                          "low": pairs[f"{prefix}_ci_low"].to_numpy(),
                          "high": pairs[f"{prefix}_ci_high"].to_numpy()})
    frame.index = [_pair_label(a, b) for a, b in pairs.index]
    return frame


def _one_line(group) -> str:
    """``"a, b"`` for the intersection ``(a, b)``, wrapped when long."""
    return wrap(", ".join(map(str, group)) if isinstance(group, tuple) else str(group), 30)


def _pair_label(first, second) -> str:
    """``"a - b"`` on one line, or ``"a\\n- b"`` when long."""
    a, b = _one_line(first), _one_line(second)
    return f"{a} - {b}" if len(a) + len(b) <= 28 else f"{a}\n- {b}"


def _forest(ax, rows: pd.DataFrame, reference) -> None:
    """Points with horizontal interval bars, one row each; red when 0 is outside."""
    pos = np.arange(len(rows))
    est, low, high = (rows[c].to_numpy(dtype=float) for c in ("estimate", "low", "high"))
    significant = (low > 0) | (high < 0)
    colors = np.where(significant, "tab:red", "tab:blue") if reference is not None else "C0"
    ax.hlines(pos, low, high, colors=colors, linewidth=2)
    ax.scatter(est, pos, color=colors, zorder=3, s=20)
    if reference is not None:
        ax.axvline(reference, color="black", lw=0.8)
    ax.set_yticks(pos, list(rows.index))
    ax.set_ylim(len(rows) - 0.5, -0.5)
    # A few round ticks: the default locator crowds a narrow interval's axis with
    # long labels such as -0.125 that run into each other.
    from matplotlib.ticker import MaxNLocator  # lazily: matplotlib is an extra

    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))


def _significance_handles():
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="tab:red", marker="o", lw=2,
                   label="interval excludes 0\n(significant)"),
            Line2D([], [], color="tab:blue", marker="o", lw=2, label="interval covers 0")]


def _decomposition_intervals(decomposition, value):
    members = _members_to_draw(decomposition, value, None)
    frame = decomposition.contributions
    labels = [wrap(f) for f in decomposition.features]
    fig, axes = panels(len(members), rows_height(len(labels), labels, extra=1.2))
    for axis, member in zip(axes, members):
        rows = frame.loc[member]
        first, second = decomposition.compared[member]
        table = pd.DataFrame({"estimate": rows["esl_difference"].to_numpy(),
                              "low": rows["esl_ci_low"].to_numpy(),
                              "high": rows["esl_ci_high"].to_numpy()},
                             index=[wrap(f) for f in rows.index])
        _forest(axis, table, reference=0.0)
        axis.set_title(f"{member}\n{first} - {second}", fontsize="medium")
        axis.set_xlabel("difference of the\ncontributions (ESL units)")
    legend_outside(axes[min(len(axes), 2) - 1], handles=_significance_handles())
    fig.suptitle(f"Contributions of the features to the {decomposition.metric} gap "
                 f"({decomposition.confidence:.0%} intervals)", fontsize="medium")
    return axes


def plot_esl_contributions(decomposition, *, value=None, ax=None):
    """Second-stage contributions per feature and group, with confidence intervals.

    One row per feature, one horizontal bar per group with its interval; an asterisk
    marks a feature whose contributions differ significantly between the compared
    groups. The legend (the groups) sits outside the data area, to the right.

    Parameters
    ----------
    decomposition : ESLDecompositionResult
        Output of :func:`skfairverify.esl_decomposition`.
    value : str, default=None
        ESL member to draw; None draws every member of the result, one panel each.
    ax : matplotlib Axes, default=None
        Axes to draw on (only with a single member); new axes when None.

    Returns
    -------
    axes : matplotlib Axes or ndarray of Axes
        One Axes when ``value`` is given (or the result has one member).

    See Also
    --------
    plot_esl_intervals : The differences of the contributions with their intervals.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import esl_decomposition
    >>> from skfairverify.plotting import plot_esl_contributions
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=600), "b": rng.normal(size=600),
    ...                   "s": rng.integers(0, 2, 600)})
    >>> y = (X.a + X.s + rng.normal(size=600) > 0.5).astype(int)
    >>> res = esl_decomposition(LogisticRegression(), X, y, sensitive_features="s",
    ...                         values=("shapley",), random_state=0)
    >>> ax = plot_esl_contributions(res)
    >>> len(ax.patches)
    4
    """
    members = _members_to_draw(decomposition, value, ax)
    if ax is None:
        labels = [wrap(f) for f in decomposition.features]
        n_groups = decomposition.group_std_error.shape[1]
        height = max(rows_height(len(labels), labels, 0.16 * n_groups + 0.1, extra=1.1),
                     legend_height([wrap(g) for g in decomposition.group_std_error.columns]
                                   + ["star\nline"]))
        _, axes = panels(len(members), height)
    else:
        axes = np.array([ax])
    for axis, member in zip(axes, members):
        _draw_member(axis, decomposition, member)
        axis.set_xlabel(wrap("contribution to the group's ESL value (ESL units)", 28))
    _contributions_legend(axes[min(len(axes), 2) - 1], 1 - decomposition.confidence)
    return axes[0] if len(axes) == 1 else axes


def _contributions_legend(ax, alpha: float) -> None:
    from matplotlib.lines import Line2D

    handles, _ = ax.get_legend_handles_labels()
    star = Line2D([], [], linestyle="none", marker="$*$", color="black", markersize=8,
                  label=f"compared groups\ndiffer (p < {alpha:.2g})")
    legend_outside(ax, handles=[*handles, star], title="group")


def _members_to_draw(decomposition, value, ax) -> list:
    if not isinstance(decomposition, ESLDecompositionResult):
        raise TypeError("decomposition must be the ESLDecompositionResult returned by "
                        f"esl_decomposition, got {type(decomposition).__name__}.")
    members = list(decomposition.members)
    if value is not None:
        if value not in members:
            raise ValueError(f"value {value!r} is not in the decomposition; it has {members}.")
        members = [value]
    if ax is not None and len(members) > 1:
        raise ValueError("ax can only be given with a single member (pass value=...).")
    return members


def _draw_member(axis, decomposition, member) -> None:
    """Bars of every group's contributions (one member), intervals, significance stars."""
    q = _quantile(decomposition.confidence)
    se = decomposition.group_std_error.loc[member]
    frame = decomposition.contributions.loc[member]
    groups = list(se.columns)
    height = 0.8 / len(groups)
    pos = np.arange(len(frame))
    for j, g in enumerate(groups):
        axis.barh(pos - 0.4 + (j + 0.5) * height, frame[g].to_numpy(), height,
                  xerr=q * se[g].to_numpy(), capsize=2, label=wrap(g), color=f"C{j}",
                  error_kw={"elinewidth": 0.8})
    significant = frame["p_value"].to_numpy() < 1 - decomposition.confidence
    labels = [wrap(f) + (" *" if s else "") for f, s in zip(frame.index, significant)]
    axis.axvline(0, color="black", lw=0.8)
    axis.set_yticks(pos, labels)
    axis.set_ylim(len(frame) - 0.5, -0.5)
    axis.set_title(member, fontsize="medium")
