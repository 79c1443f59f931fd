"""Pareto view of a fairness-constrained search."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..model_selection import FairnessConstrainedRefit
from ._layout import legend_outside, new_axes

__all__ = ["plot_constrained_search", "pareto_front"]


def pareto_front(score, fairness) -> np.ndarray:
    """Indices of the candidates no other candidate beats on both score and fairness.

    A candidate is on the front when no other one has a score and a fairness at least
    as high with one of them strictly higher (both are greater-is-better). Candidates
    with a NaN are never on it.

    Parameters
    ----------
    score, fairness : array-like of shape (n_candidates,)
        Mean cross-validated score and fairness score of every candidate.

    Returns
    -------
    ndarray of int
        Indices of the front, in increasing order of fairness.

    Examples
    --------
    >>> from skfairverify.plotting import pareto_front
    >>> pareto_front([0.90, 0.85, 0.80, 0.70], [-0.20, -0.04, -0.10, -0.01]).tolist()
    [0, 1, 3]
    """
    score = np.asarray(score, dtype=float)
    fairness = np.asarray(fairness, dtype=float)
    if score.shape != fairness.shape or score.ndim != 1:
        raise ValueError("score and fairness must be 1-d arrays of the same length; got "
                         f"shapes {score.shape} and {fairness.shape}.")
    valid = ~(np.isnan(score) | np.isnan(fairness))
    at_least = (score[None, :] >= score[:, None]) & (fairness[None, :] >= fairness[:, None])
    strictly = (score[None, :] > score[:, None]) | (fairness[None, :] > fairness[:, None])
    dominated = (at_least & strictly & valid[None, :]).any(axis=1)
    front = np.flatnonzero(valid & ~dominated)
    return front[np.argsort(fairness[front], kind="stable")]


def _search_parts(search, refit):
    """``(cv_results, refit, chosen index or None)`` of a fitted search or a dict."""
    if isinstance(search, Mapping):
        return search, refit, None
    cv_results = getattr(search, "cv_results_", None)
    if cv_results is None:
        raise TypeError("search must be a fitted search (with cv_results_) or its "
                        f"cv_results_ dict; got {type(search).__name__}.")
    refit = refit if refit is not None else getattr(search, "refit", None)
    return cv_results, refit, getattr(search, "best_index_", None)


def _refit_and_constraint(refit, constraint):
    if not isinstance(refit, FairnessConstrainedRefit):
        raise TypeError("refit must be the FairnessConstrainedRefit (from "
                        "fairness_constrained_refit) of the search; got "
                        f"{type(refit).__name__}.")
    bounds = refit.constraints
    if constraint is None:
        if len(bounds) > 1:
            raise ValueError(f"The search has {len(bounds)} constraints {sorted(bounds)}; "
                             "pass constraint=<name> to choose the one on the x axis.")
        constraint = next(iter(bounds))
    if constraint not in bounds:
        raise ValueError(f"constraint {constraint!r} is not one of the search's "
                         f"constraints {sorted(bounds)}.")
    return refit.score, constraint, bounds[constraint]


def _mean_std(cv_results, name):
    key = f"mean_test_{name}"
    if key not in cv_results:
        raise KeyError(f"cv_results has no {key!r}: the search has no scorer {name!r}.")
    mean = np.asarray(cv_results[key], dtype=float)
    std = cv_results.get(f"std_test_{name}")
    return mean, (None if std is None else np.asarray(std, dtype=float))


def plot_constrained_search(search, refit=None, *, constraint=None, ax=None):
    """Pareto view of a fairness-constrained search: score against fairness.

    Every candidate of the search is a point at (mean fairness score, mean score), with
    its cross-validation standard deviations as error bars; the vertical line is the
    constraint (the candidates right of it are fair enough, in the shaded area), the
    step line joins the Pareto front (no other candidate is both fairer and better) and
    the chosen candidate is circled. The legend sits outside the data area.

    Parameters
    ----------
    search : fitted GridSearchCV / RandomizedSearchCV, or dict
        A search fitted with ``refit=fairness_constrained_refit(...)``, or its
        ``cv_results_``.
    refit : FairnessConstrainedRefit, default=None
        The refit callable; None takes the search's ``refit`` (needed with a dict).
    constraint : str, default=None
        Name of the constraint on the x axis; needed only when ``refit`` has several.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure (no wider than a page) when None.

    Returns
    -------
    matplotlib.axes.Axes

    See Also
    --------
    skfairverify.fairness_constrained_refit : The refit callable of the search.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skfairverify import fairness_constrained_refit
    >>> from skfairverify.plotting import plot_constrained_search
    >>> cv_results = {"mean_test_acc": [0.90, 0.85, 0.80, 0.70],
    ...               "mean_test_sp": [-0.20, -0.04, -0.10, -0.01]}
    >>> ax = plot_constrained_search(cv_results, fairness_constrained_refit("acc", "sp", -0.05))
    >>> ax.get_legend().get_texts()[-1].get_text()
    'chosen: candidate 1'
    """
    cv_results, refit, chosen = _search_parts(search, refit)
    score, constraint, bound = _refit_and_constraint(refit, constraint)
    y, y_std = _mean_std(cv_results, score)
    x, x_std = _mean_std(cv_results, constraint)
    if chosen is None:
        chosen = refit(cv_results)
    if ax is None:
        _, (ax,) = new_axes(7.0, 4.2)
    feasible = x >= bound
    ax.errorbar(x, y, xerr=x_std, yerr=y_std, fmt="none", ecolor="0.75", elinewidth=0.8,
                zorder=1)
    ax.scatter(x[feasible], y[feasible], color="tab:blue", s=22, zorder=2,
               label="fair enough")
    ax.scatter(x[~feasible], y[~feasible], color="tab:red", marker="x", s=22, zorder=2,
               label="over the bound")
    front = pareto_front(y, x)
    ax.step(x[front], y[front], where="pre", color="tab:green", lw=1, zorder=1,
            label="Pareto front")
    ax.axvspan(bound, max(np.nanmax(x), bound) + 0.05 * (np.nanmax(x) - np.nanmin(x) + 1e-9),
               color="tab:blue", alpha=0.06, lw=0)
    ax.axvline(bound, color="k", ls="--", lw=1, label=f"constraint\n{constraint} >= {bound:g}")
    ax.scatter([x[chosen]], [y[chosen]], s=160, facecolors="none", edgecolors="k",
               linewidths=1.5, zorder=3, label=f"chosen: candidate {int(chosen)}")
    ax.set_xlabel(f"mean_test_{constraint} (fairness score, greater is fairer)")
    ax.set_ylabel(f"mean_test_{score}")
    ax.set_title(f"{len(x)} candidates: {score} against {constraint}", fontsize="medium")
    legend_outside(ax)
    return ax
