"""Figures of the counterfactual audit (proxy correlations, CFlips@k curves)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._layout import check_top, legend_outside, new_axes, rows_height, wrap

__all__ = ["plot_proxy_correlations", "plot_cflips_at_k"]


def plot_proxy_correlations(correlations: pd.DataFrame, *, top: int | None = 20, ax=None):
    """Horizontal bar plot of :meth:`CounterfactualFairness.proxy_correlations`.

    As Figure 2 of Cornacchia et al.: one bar per feature (or ``"col=category"``),
    its Pearson correlation between the counterfactual perturbation and the change
    of the sensitive classifier's probability of the privileged group.

    Parameters
    ----------
    correlations : DataFrame
        Output of ``proxy_correlations`` (columns ``feature`` and ``correlation``).
    top : int, default=20
        Keep the ``top`` features of largest absolute correlation (``None``: all).
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when ``None``.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skfairverify.plotting import plot_proxy_correlations
    >>> corr = pd.DataFrame({"feature": ["proxy", "skill"], "correlation": [0.8, -0.2]})
    >>> ax = plot_proxy_correlations(corr)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['skill', 'proxy']
    """
    missing = {"feature", "correlation"} - set(correlations.columns)
    if missing:
        raise ValueError(f"correlations lacks the columns {sorted(missing)}.")
    data = correlations
    check_top(top)
    if top is not None:
        data = data.loc[data["correlation"].abs().sort_values(ascending=False).index[:top]]
    data = data.sort_values("correlation")
    labels = [wrap(f) for f in data["feature"]]
    if ax is None:
        _, (ax,) = new_axes(6.5, rows_height(len(labels), labels))
    colors = np.where(data["correlation"].to_numpy() >= 0, "tab:red", "tab:blue")
    ax.barh(np.arange(len(labels)), data["correlation"], color=colors)
    ax.set_yticks(np.arange(len(labels)), labels)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("Pearson correlation with the change of P(privileged)")
    ax.set_title("Features that move counterfactuals across groups")
    return ax


def _side_names(result, shown: int = 3) -> dict:
    """Legend entries naming the groups of each side (``privileged: M``)."""
    groups = dict(getattr(result, "groups", None) or {})
    privileged = getattr(result, "privileged", None)
    if not groups.get("privileged") and privileged is not None:
        groups["privileged"] = [privileged]
    names = {}
    for side in ("privileged", "unprivileged"):
        members = [str(g) for g in groups.get(side, [])]
        if not members:
            names[side] = side
        elif len(members) <= shown:
            names[side] = wrap(f"{side}: {', '.join(members)}")
        else:
            names[side] = wrap(f"{side}: {', '.join(members[:shown])} and "
                               f"{len(members) - shown} more")
    return names


def plot_cflips_at_k(result, *, metric: str = "cflips", ax=None):
    """CFlips@k (or nDCCF@k) curves per group from :meth:`CounterfactualFairness.evaluate`.

    The legend names the groups of each side (``privileged: M``, ``unprivileged: F``;
    the first three and a count when one side has more).

    Parameters
    ----------
    result : CounterfactualResult
        Output of ``evaluate`` (uses ``result.per_k`` and ``result.groups``).
    metric : {"cflips", "ndccf"}, default="cflips"
        Which curves to draw.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when ``None``.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skfairverify.counterfactual import CounterfactualResult
    >>> from skfairverify.plotting import plot_cflips_at_k
    >>> per_k = pd.DataFrame({"cflips_privileged": [.1, .1], "cflips_unprivileged": [.6, .5],
    ...                       "ndccf_privileged": [1., .9], "ndccf_unprivileged": [.4, .5]},
    ...                      index=pd.Index([1, 2], name="k"))
    >>> result = CounterfactualResult.from_per_k(
    ...     per_k, n_refused={"privileged": 8, "unprivileged": 9}, privileged="M",
    ...     groups={"privileged": ["M"], "unprivileged": ["F"]})
    >>> ax = plot_cflips_at_k(result)
    >>> [line.get_label() for line in ax.get_lines()]
    ['privileged: M', 'unprivileged: F']
    """
    if metric not in ("cflips", "ndccf"):
        raise ValueError(f"metric must be 'cflips' or 'ndccf'; got {metric!r}.")
    per_k = getattr(result, "per_k", None)
    if not isinstance(per_k, pd.DataFrame):
        raise TypeError(
            "result must be the CounterfactualResult of CounterfactualFairness.evaluate "
            f"(with a per_k table); got {type(result).__name__}."
        )
    if ax is None:
        _, (ax,) = new_axes(6.5, 3.5)
    label = "CFlips@k" if metric == "cflips" else "nDCCF@k"
    names = _side_names(result)
    for group, style in (("privileged", "-o"), ("unprivileged", "-s")):
        ax.plot(per_k.index, per_k[f"{metric}_{group}"], style, label=names[group],
                markersize=3)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("k (number of counterfactuals)")
    ax.set_ylabel(label)
    ax.set_ylim(-0.02, 1.02)
    legend_outside(ax, title="group")
    ax.set_title(f"{label} per group")
    return ax
