"""Figures of the ESL box: group shares and second-stage contributions."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._optional import import_optional
from ..esl import ESLDecompositionResult

__all__ = ["plot_esl_contributions", "plot_group_shares"]


def _pyplot():
    return import_optional("matplotlib.pyplot", "the ESL plots")


def plot_group_shares(result, *, ax=None, kind: str = "value"):
    """Bar plot of the first-stage ESL value (or share) of every group.

    Parameters
    ----------
    result : GroupESLResult
        Output of :func:`skfairverify.group_esl`.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when None.
    kind : {"value", "share"}, default="value"
        Plot the values with their confidence intervals, or the shares of the total
        (in percent, no intervals).

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skfairverify import group_esl
    >>> from skfairverify.plotting import plot_group_shares
    >>> res = group_esl([1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 0, 0],
    ...                 sensitive_features=list("aaabbb"))
    >>> ax = plot_group_shares(res)
    >>> len(ax.patches)
    2
    """
    plt = _pyplot()
    if kind not in ("value", "share"):
        raise ValueError(f"kind must be 'value' or 'share', got {kind!r}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.2 * len(result.esl_values) + 2.5, 3.5))
    labels = [_label(g) for g in result.esl_values.index]
    x = np.arange(len(labels))
    if kind == "value":
        q = stats.norm.ppf(0.5 + result.confidence / 2)
        ax.bar(x, result.esl_values.to_numpy(), yerr=q * result.esl_std_errors.to_numpy(),
               capsize=4, color="C0")
        ax.axhline(result.total / len(labels), color="grey", ls="--", lw=1,
                   label="equal split")
        ax.set_ylabel(f"ESL value (ESL units = {result.metric} / {result.baseline:g})")
        ax.legend(frameon=False)
    else:
        ax.bar(x, 100 * result.shares.to_numpy(), color="C0")
        ax.axhline(100 / len(labels), color="grey", ls="--", lw=1)
        ax.set_ylabel("share of the total (%)")
    ax.set_xticks(x, labels)
    ax.set_title(_shares_title(result))
    return ax


def _label(group) -> str:
    return ", ".join(map(str, group)) if isinstance(group, tuple) else str(group)


def _shares_title(result) -> str:
    title = f"{result.value} value, total {result.total:.3g}"
    if result.compared is not None:
        a, b = result.compared
        title += (f"\n{result.metric} {a} - {b}: {result.metric_difference:+.3g} "
                  f"(ESL units {result.esl_difference:+.3g}, p={result.p_value:.2g})")
    return title


def plot_esl_contributions(decomposition, *, value=None, ax=None):
    """Second-stage contributions per feature and group, with confidence intervals.

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
    plt = _pyplot()
    members = _members_to_draw(decomposition, value, ax)
    if ax is None:
        _, axes = plt.subplots(1, len(members), figsize=(4.5 * len(members), 3.8),
                               squeeze=False, sharey=True)
        axes = axes[0]
    else:
        axes = np.array([ax])
    for axis, member in zip(axes, members):
        _draw_member(axis, decomposition, member)
    axes[0].set_ylabel("contribution to the group's ESL value (ESL units)")
    axes[0].legend(frameon=False, title="group")
    return axes[0] if len(axes) == 1 else axes


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
    q = stats.norm.ppf(0.5 + decomposition.confidence / 2)
    se = decomposition.group_std_error.loc[member]
    frame = decomposition.contributions.loc[member]
    groups = list(se.columns)
    width = 0.8 / len(groups)
    x = np.arange(len(frame))
    for j, g in enumerate(groups):
        axis.bar(x + (j - (len(groups) - 1) / 2) * width, frame[g].to_numpy(), width,
                 yerr=q * se[g].to_numpy(), capsize=3, label=str(g), color=f"C{j}")
    significant = frame["p_value"].to_numpy() < 1 - decomposition.confidence
    for k in np.flatnonzero(significant):
        axis.annotate("*", (k, frame.iloc[k][groups].max()), ha="center", va="bottom")
    axis.axhline(0, color="black", lw=0.8)
    axis.set_xticks(x, [str(f) for f in frame.index], rotation=30, ha="right")
    axis.set_title(member)
