"""Figures of :class:`~skfairverify.FairnessVerifier` results."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..utils._html import with_interval
from ..verification._display import has_intervals, interval_label, interval_note
from ._layout import (
    check_top,
    group_label,
    legend_height,
    legend_outside,
    new_axes,
    rows_height,
    wrap,
)

__all__ = ["plot_group_rates", "plot_fairness_influence"]

# above this many groups, the influence plot draws one marker per group on each
# feature's row instead of one bar per group
_MAX_GROUPED_BARS = 4


def _sensitive_of(verifier) -> list[str]:
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(verifier, "groups_")
    return list(verifier.sensitive_features_)


def _group_labels(groups: pd.DataFrame, sensitive: list[str]) -> list[str]:
    return [group_label(tuple(row), sensitive)
            for row in groups[sensitive].itertuples(index=False, name=None)]


def _rate_errors(groups: pd.DataFrame, rates: np.ndarray, low="ci_low", high="ci_high"):
    """Error bar lengths ``[below, above]`` from the columns ``low`` / ``high``, or None.

    None as well when every interval is the rate itself (the exact path).
    """
    if not {low, high} <= set(groups.columns):
        return None
    low = groups[low].to_numpy(dtype=float)
    high = groups[high].to_numpy(dtype=float)
    errors = np.vstack([np.clip(rates - low, 0, None), np.clip(high - rates, 0, None)])
    return errors if np.nanmax(errors) > 0 else None


def plot_group_rates(verifier, *, ax=None, four_fifths: bool = True, rate=None):
    """Horizontal bars of every group's positive rate, with the four-fifths line.

    One row per group (an intersection of several sensitive features is labelled with
    one line per feature). With the population estimate (``rate="population"``, the
    default when the verifier has it), the bars are the groups' population estimates with
    their intervals, and a black diamond marks each group's rate under the network; with
    ``rate="network"`` the bars are the rates under the network, with their intervals
    (credible intervals, or Monte Carlo ones on the sampling path) when wider than the
    rates. The dashed line is drawn at 0.8 times the largest bar: a group below it (red
    bar) fails the four-fifths rule (disparate impact < 0.8). The title gives the
    disparate impact with its interval; the legend sits outside the data area, to the
    right of the axes.

    Parameters
    ----------
    verifier : FairnessVerifier
        A fitted verifier.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure (no wider than a page) when None.
    four_fifths : bool, default=True
        Draw the four-fifths line and color the groups below it.
    rate : {"population", "network"}, default=None
        The bars: the population estimates (None: when the verifier has them) or the
        rates under the network.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> from skfairverify.plotting import plot_group_rates
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 500)
    >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0)})
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=10).fit(X, (X["x"] > 0.5).astype(int))
    >>> ax = plot_group_rates(ver)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a=0', 'a=1']
    >>> ax.get_xlabel()
    'Pr[Yhat = 1 | group] (population estimate)'
    """
    sensitive = _sensitive_of(verifier)
    groups = verifier.groups_
    population = _check_rate(rate, groups)
    labels = _group_labels(groups, sensitive)
    column = "population_rate" if population else "positive_rate"
    rates = groups[column].to_numpy(dtype=float)
    if ax is None:
        _, (ax,) = new_axes(7.0, rows_height(len(labels), labels))
    threshold = 0.8 * float(rates.max())
    below = four_fifths & (rates < threshold)
    pos = np.arange(len(rates))
    errors = (_rate_errors(groups, rates, "population_ci_low", "population_ci_high")
              if population else _rate_errors(groups, rates))
    ax.barh(pos, rates, color=np.where(below, "tab:red", "tab:blue"), xerr=errors,
            capsize=3, error_kw={"elinewidth": 1})
    network = groups["positive_rate"].to_numpy(dtype=float)
    if population:
        ax.plot(network, pos, linestyle="none", marker="D", color="k", markersize=4)
    ax.set_yticks(pos, labels)
    ax.invert_yaxis()
    ax.set_xlabel("Pr[Yhat = 1 | group] ("
                  + ("population estimate" if population else "verified") + ")")
    upper = float(np.nanmax(np.concatenate([rates if errors is None else rates + errors[1],
                                            network])))
    ax.set_xlim(0, min(1.0, 1.1 * upper) if upper > 0 else 1.0)
    note = interval_note(verifier)
    if population:
        ci_label = f"{float(verifier.credible_level):.0%} interval"
    else:
        ci_label = interval_label(note, short=True) if has_intervals(note) else "interval"
    if four_fifths:
        _four_fifths_legend(ax, threshold, below.any(), errors is not None and ci_label,
                            network_marker=population)
    ax.set_title(_rates_title(verifier, population, note))
    return ax


def _check_rate(rate, groups) -> bool:
    """Whether the bars are the population estimates (``rate``, validated)."""
    if rate not in (None, "population", "network"):
        raise ValueError(f"rate must be 'population', 'network' or None; got {rate!r}.")
    has = {"population_rate", "population_ci_low", "population_ci_high"} <= set(groups)
    if rate == "population" and not has:
        raise ValueError("rate='population': the verifier has no population estimate "
                         "(n_bootstrap=0); refit with n_bootstrap > 0 or use rate='network'.")
    return has and rate != "network"


def _rates_title(verifier, population: bool, note) -> str:
    """``"Population estimates (disparate impact 0.8 [...])"``, or the verified one's."""
    if population:
        di = verifier.population_metrics_["disparate_impact"]
        ci = verifier.population_metric_intervals_.get("disparate_impact")
        return f"Population estimates (disparate impact {with_interval(di, ci)})"
    di = verifier.metrics_["disparate_impact"]
    di_ci = (getattr(verifier, "metric_intervals_", None) or {}).get("disparate_impact")
    shown = with_interval(di, di_ci) if has_intervals(note) and di_ci else f"{di:.3f}"
    return f"Verified positive rates (disparate impact {shown})"


def _four_fifths_legend(ax, threshold: float, any_below: bool, with_ci,
                        network_marker: bool = False) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    line = ax.axvline(threshold, color="k", linestyle="--", linewidth=1,
                      label="four-fifths of\nthe largest rate")
    handles = [line, Patch(color="tab:blue", label="at or above")]
    if any_below:
        handles.append(Patch(color="tab:red", label="below (fails\nthe 4/5 rule)"))
    if with_ci:
        handles.append(Line2D([], [], color="k", marker="|", linestyle="-",
                              label=wrap(with_ci, 16)))
    if network_marker:
        handles.append(Line2D([], [], color="k", marker="D", linestyle="none", markersize=4,
                              label=wrap("rate under the network", 16)))
    legend_outside(ax, handles=handles)


def _fif_order(table: pd.DataFrame, sort_by: str) -> pd.Index:
    """Features in decreasing order of influence (spread over groups or magnitude)."""
    values = table.to_numpy(dtype=float)
    magnitude = np.nanmax(np.abs(values), axis=1)
    if sort_by == "magnitude" or values.shape[1] < 2:
        key = magnitude
    else:
        key = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
    order = np.lexsort((-magnitude, -key))  # last key is the primary one
    return table.index[order]


def _fold(table: pd.DataFrame, top, sort_by: str) -> pd.DataFrame:
    """The ``top`` most influential rows, sorted, then one row summing the others."""
    ordered = table.loc[_fif_order(table, sort_by)]
    if top is None or len(ordered) <= top:
        return ordered
    rest = ordered.iloc[top:]
    folded = rest.sum(axis=0).to_frame(f"sum of the {len(rest)} other features").T
    return pd.concat([ordered.iloc[:top], folded])


def _fif_errors(fif, table: pd.DataFrame):
    """Error bar lengths ``(2, rows, groups)`` of the rows of ``table``, or None.

    From ``fif.ci_low`` / ``fif.ci_high``; the folded row (a sum of influences, whose
    interval is not the sum of the intervals) gets none (NaN).
    """
    low, high = getattr(fif, "ci_low", None), getattr(fif, "ci_high", None)
    if low is None or high is None:
        return None
    shown = table.index.isin(low.index)
    errors = np.full((2,) + table.shape, np.nan)
    values = table.to_numpy(dtype=float)[shown]
    keys = table.index[shown]
    errors[0][shown] = np.clip(values - low.loc[keys].to_numpy(dtype=float), 0, None)
    errors[1][shown] = np.clip(high.loc[keys].to_numpy(dtype=float) - values, 0, None)
    return errors


def plot_fairness_influence(verifier, features=None, *, fif=None, reference="support",
                            top=10, sort_by="spread", ax=None):
    """Fairness influence of the features, most influential first, one color per group.

    One row per feature, sorted by decreasing influence; the features beyond the
    ``top`` first are folded into one last row holding the sum of their influences.
    With up to four groups each row has one bar per group; with more groups, one
    marker per group on a line spanning the smallest to the largest influence. The
    legend (the groups) sits outside the data area, to the right of the axes. When
    the result has intervals (``ci_low`` / ``ci_high``: the verifier's posterior
    draws), every bar or marker carries its error bar (none on the folded row: the
    interval of a sum is not the sum of the intervals) and the axis label names them.

    Parameters
    ----------
    verifier : FairnessVerifier
        A fitted verifier.
    features : list, default=None
        Passed to :meth:`FairnessVerifier.fairness_influence` when ``fif`` is None.
    fif : FairnessInfluenceResult, default=None
        A precomputed result of :meth:`FairnessVerifier.fairness_influence` (its
        ``reference`` labels the axis).
    reference : {"support", "states"}, default="support"
        Passed to :meth:`FairnessVerifier.fairness_influence` when ``fif`` is None:
        the uniform distribution that replaces a feature (within its observed range,
        FVGM Appendix E, or over its states).
    top : int or None, default=10
        Number of features drawn one by one; None draws every feature.
    sort_by : {"spread", "magnitude"}, default="spread"
        Order of the features: ``"spread"`` is the largest minus the smallest influence
        over the groups (the feature's share in the gap between groups, what matters
        for fairness), ``"magnitude"`` the largest absolute influence on any group.
        Ties are broken by the magnitude.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure (no wider than a page) when None.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify import FairnessVerifier
    >>> from skfairverify.plotting import plot_fairness_influence
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 500)
    >>> X = pd.DataFrame({"a": a, "x": rng.normal(a, 1.0), "z": rng.normal(0, 1, 500)})
    >>> ver = FairnessVerifier(LogisticRegression(), "a", n_bins=10, n_draws=0,
    ...                        random_state=0).fit(X, (X["x"] + X["z"] > 0.5).astype(int))
    >>> ax = plot_fairness_influence(ver, top=1)
    >>> [t.get_text() for t in ax.get_yticklabels()]  # x, which follows a, leads
    ['x', 'sum of the 1 other\\nfeatures']

    With the posterior draws of the network, each influence has its credible interval:

    >>> ver = ver.set_params(n_draws=50).fit(X, (X["x"] + X["z"] > 0.5).astype(int))
    >>> ax = plot_fairness_influence(ver)
    >>> "95% credible interval" in " ".join(ax.get_xlabel().split())
    True
    """
    check_top(top)
    if sort_by not in ("spread", "magnitude"):
        raise ValueError(f"sort_by must be 'spread' or 'magnitude'; got {sort_by!r}.")
    sensitive = _sensitive_of(verifier)
    if fif is None:
        fif = verifier.fairness_influence(features, reference=reference)
    if not (hasattr(fif, "table") and hasattr(fif, "reference")):
        raise TypeError(
            "fif must be the FairnessInfluenceResult returned by "
            f"FairnessVerifier.fairness_influence; got {type(fif).__name__}."
        )
    within = {"support": "uniform within its observed range",
              "states": "uniform over its states"}.get(fif.reference, str(fif.reference))
    table = _fold(fif.table, top, sort_by)
    rows = [wrap(f) for f in table.index]
    groups = [group_label(c, sensitive) for c in table.columns]
    grouped = len(groups) <= _MAX_GROUPED_BARS
    if ax is None:
        per_row = 0.18 * len(groups) + 0.1 if grouped else 0.3
        height = max(rows_height(len(rows), rows, per_row, extra=1.5), legend_height(groups))
        _, (ax,) = new_axes(7.0, height)
    errors = _fif_errors(fif, table)
    (_fif_bars if grouped else _fif_dots)(ax, table.to_numpy(dtype=float), groups, errors)
    ax.set_yticks(np.arange(len(rows)), rows)
    ax.invert_yaxis()
    ax.axvline(0.0, color="k", linewidth=0.8)
    note = getattr(fif, "intervals", None) or None
    shown = (f"; error bars: {interval_label(note)}" if errors is not None
             else f" ({interval_label(note)})" if note else "")
    ax.set_xlabel(wrap("FIF: Pr[Yhat = 1 | group] minus the same with the feature "
                       f"{within}{shown}", 60))
    ax.set_title("Fairness influence of the features (largest first)")
    legend_outside(ax, title="group")
    return ax


def _fif_bars(ax, values: np.ndarray, groups: list[str], errors=None) -> None:
    n_rows, n_groups = values.shape
    height = 0.8 / n_groups
    pos = np.arange(n_rows)
    for g in range(n_groups):
        ax.barh(pos - 0.4 + (g + 0.5) * height, values[:, g], height=height,
                label=groups[g], color=f"C{g}",
                xerr=None if errors is None else errors[:, :, g], capsize=2,
                error_kw={"elinewidth": 1, "ecolor": "0.15"})


def _fif_dots(ax, values: np.ndarray, groups: list[str], errors=None) -> None:
    pos = np.arange(values.shape[0])
    ax.hlines(pos, np.nanmin(values, axis=1), np.nanmax(values, axis=1), color="0.75",
              linewidth=2, zorder=1, gid="fif-range")
    for g in range(values.shape[1]):
        color = f"C{g % 10}"
        if errors is not None:
            ax.errorbar(values[:, g], pos, xerr=errors[:, :, g], fmt="none",
                        ecolor=color, elinewidth=1, capsize=2, zorder=2)
        ax.scatter(values[:, g], pos, s=22, color=color,
                   marker="os^Dv"[g // 10 % 5], label=groups[g], zorder=3)
