"""Figures of :class:`~skfairverify.FairnessVerifier` results."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["plot_group_rates", "plot_fairness_influence"]


def _group_labels(groups: pd.DataFrame, sensitive: list[str]) -> list[str]:
    return [", ".join(f"{s}={row[s]}" for s in sensitive) for _, row in groups.iterrows()]


def _sensitive_of(verifier) -> list[str]:
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(verifier, "groups_")
    return list(verifier.sensitive_features_)


def plot_group_rates(verifier, *, ax=None, four_fifths: bool = True):
    """Bar chart of the exact positive rate of every group, with the four-fifths line.

    The dashed line is drawn at 0.8 times the largest positive rate: a group below it
    fails the four-fifths rule (disparate impact < 0.8).

    Parameters
    ----------
    verifier : FairnessVerifier
        A fitted verifier.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when None.
    four_fifths : bool, default=True
        Draw the four-fifths line.

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
    """
    import matplotlib.pyplot as plt

    sensitive = _sensitive_of(verifier)
    groups = verifier.groups_
    labels = _group_labels(groups, sensitive)
    rates = groups["positive_rate"].to_numpy()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 0.8 * len(labels) + 2), 3.5))
    threshold = 0.8 * float(rates.max())
    colors = ["tab:red" if four_fifths and r < threshold else "tab:blue" for r in rates]
    ax.bar(np.arange(len(rates)), rates, color=colors)
    ax.set_xticks(np.arange(len(rates)))
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("Pr[Yhat = 1 | group]")
    if four_fifths:
        ax.axhline(threshold, color="k", linestyle="--", linewidth=1,
                   label="four-fifths of the largest rate")
        ax.legend(loc="best")
    di = verifier.metrics_["disparate_impact"]
    ax.set_title(f"Verified positive rates, population under the learned network\n"
                 f"(disparate impact {di:.3f})")
    return ax


def plot_fairness_influence(verifier, features=None, *, fif=None, reference="support",
                            ax=None):
    """Horizontal bars of the fairness influence of every feature, one color per group.

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
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when None.

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
    >>> ver = FairnessVerifier(LogisticRegression(), "a", network="independent",
    ...                        n_bins=10).fit(X, (X["x"] + X["z"] > 0.5).astype(int))
    >>> ax = plot_fairness_influence(ver)
    """
    import matplotlib.pyplot as plt

    sensitive = _sensitive_of(verifier)
    if fif is None:
        fif = verifier.fairness_influence(features, reference=reference)
    if not (hasattr(fif, "table") and hasattr(fif, "reference")):
        raise TypeError(
            "fif must be the FairnessInfluenceResult returned by "
            f"FairnessVerifier.fairness_influence; got {type(fif).__name__}."
        )
    reference, fif = fif.reference, fif.table
    within = {"support": "uniform within its observed range",
              "states": "uniform over its states"}.get(reference, str(reference))
    groups = verifier.groups_
    labels = _group_labels(groups, sensitive)
    n_feat, n_groups = fif.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(6, max(2.5, 0.5 * n_feat * max(1, n_groups / 2) + 1)))
    height = 0.8 / n_groups
    pos = np.arange(n_feat)
    for g in range(n_groups):
        ax.barh(pos + g * height - 0.4 + height / 2, fif.iloc[:, g].to_numpy(), height=height,
                label=labels[g] if g < len(labels) else str(fif.columns[g]))
    ax.set_yticks(pos)
    ax.set_yticklabels(fif.index.tolist())
    ax.axvline(0.0, color="k", linewidth=0.8)
    ax.set_xlabel(f"FIF: Pr[Yhat = 1 | group] minus the same with the feature {within}")
    ax.legend(loc="best", fontsize="small")
    ax.invert_yaxis()
    return ax
