"""Pick the most accurate candidate of a search that is fair enough."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from numbers import Real

import numpy as np

__all__ = ["FairnessConstraintWarning", "fairness_constrained_refit"]


class FairnessConstraintWarning(UserWarning):
    """No candidate of a search met the fairness constraints.

    Issued by the callable of :func:`fairness_constrained_refit`, which then picks the
    candidate closest to the bounds.

    Examples
    --------
    >>> import warnings
    >>> from skfairverify import FairnessConstraintWarning, fairness_constrained_refit
    >>> refit = fairness_constrained_refit("acc", "sp", -0.01)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     refit({"mean_test_acc": [0.9, 0.8], "mean_test_sp": [-0.2, -0.1]})
    1
    >>> caught[0].category is FairnessConstraintWarning
    True
    """


def _constraints(constraint, threshold) -> dict[str, float]:
    if isinstance(constraint, Mapping):
        if threshold is not None:
            raise ValueError(
                "Give either one constraint name with a threshold, or a dict "
                "{name: threshold} and threshold=None; not both."
            )
        items = dict(constraint)
    elif isinstance(constraint, str):
        if threshold is None:
            raise ValueError(f"The constraint {constraint!r} needs a threshold.")
        items = {constraint: threshold}
    else:
        raise TypeError(
            "constraint must be a scorer name or a dict {scorer name: threshold}; got "
            f"{type(constraint).__name__}."
        )
    if not items:
        raise ValueError("At least one constraint is needed.")
    for name, value in items.items():
        if not isinstance(name, str):
            raise TypeError(f"Constraint names must be strings; got {name!r}.")
        if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value):
            raise ValueError(f"The threshold of {name!r} must be a finite number; got {value!r}.")
    return {k: float(v) for k, v in items.items()}


def _column(cv_results, name: str) -> np.ndarray:
    key = f"mean_test_{name}"
    if key not in cv_results:
        available = sorted(k[len("mean_test_"):] for k in cv_results if k.startswith("mean_test_"))
        raise KeyError(
            f"The search has no scorer named {name!r} ({key!r} is not in cv_results_); "
            f"scorers available: {available}. Pass scoring as a dict that contains it."
        )
    return np.asarray(cv_results[key], dtype=float)


def _no_valid_candidate(score: str, scores: np.ndarray, columns: dict) -> str:
    """The error message when every candidate has a NaN score or constraint."""
    nan = {name: np.flatnonzero(np.isnan(values)).tolist()
           for name, values in {score: scores, **columns}.items()}
    where = "; ".join(
        f"mean_test_{name} is NaN for {'every candidate' if len(idx) == len(scores) else idx}"
        for name, idx in nan.items() if idx
    )
    return (
        f"No candidate can be chosen: every one of the {len(scores)} candidates has a NaN "
        f"score or constraint ({where}), and NaN never qualifies. The fits or the scorers "
        "failed; see the search's warnings, or pass error_score='raise' to the search."
    )


def fairness_constrained_refit(
    score: str, constraint: str | Mapping[str, float], threshold: float | None = None
) -> Callable[[Mapping], int]:
    """A ``refit`` callable choosing the best candidate among those fair enough.

    Among the candidates of a search whose ``mean_test_<constraint>`` is at least
    ``threshold`` for every constraint (skfairverify's fairness scorers are all
    greater-is-better: ``-gap`` or a ratio), the one with the highest
    ``mean_test_<score>`` is chosen. When no candidate qualifies, the one closest to
    the bounds (smallest total shortfall, then best score) is chosen and a
    :class:`FairnessConstraintWarning` is issued.

    Parameters
    ----------
    score : str
        Name of the scorer to maximise (a key of the search's ``scoring`` dict).
    constraint : str or dict
        Name of the constraining scorer, or a dict ``{name: threshold}`` for several
        constraints (e.g. ``{"sp": -0.05, "di": 0.8}``), in which case ``threshold``
        must be None.
    threshold : float, default=None
        Lower bound on ``mean_test_<constraint>`` when ``constraint`` is a name.

    Returns
    -------
    callable
        ``refit(cv_results) -> int`` for ``GridSearchCV(refit=...)`` or
        ``RandomizedSearchCV(refit=...)``. The search's ``best_index_`` is the chosen
        candidate; ``best_score_`` is not set by scikit-learn for callable refits.

    Raises
    ------
    ValueError
        From the callable, when every candidate has a NaN score or constraint value.
    KeyError
        From the callable, when the search has no scorer of one of the names.

    Notes
    -----
    A candidate whose ``mean_test_<score>`` or any ``mean_test_<constraint>`` is NaN (a
    failed fit, or a scorer that could not compute the metric) never qualifies and is
    never chosen, not even as the closest one; when every candidate has a NaN, the
    callable raises a ``ValueError`` naming the NaN columns. The successive-halving
    searches accept a single scorer and ignore callable refits; run the constrained
    choice on a ``GridSearchCV`` over their best candidates instead.

    Examples
    --------
    >>> from skfairverify import fairness_constrained_refit
    >>> refit = fairness_constrained_refit("accuracy", "sp", -0.05)
    >>> results = {"mean_test_accuracy": [0.90, 0.85, 0.80],
    ...            "mean_test_sp": [-0.20, -0.04, -0.01]}
    >>> refit(results)
    1
    """
    if not isinstance(score, str):
        raise TypeError(f"score must be the name of a scorer; got {type(score).__name__}.")
    bounds = _constraints(constraint, threshold)

    def refit(cv_results: Mapping) -> int:
        scores = _column(cv_results, score)
        columns = {name: _column(cv_results, name) for name in bounds}
        valid = ~np.isnan(scores)
        for values in columns.values():
            valid &= ~np.isnan(values)
        if not valid.any():
            raise ValueError(_no_valid_candidate(score, scores, columns))
        shortfall = sum(np.maximum(bound - columns[name], 0.0) for name, bound in bounds.items())
        shortfall = np.where(valid, shortfall, np.inf)
        feasible = shortfall == 0
        if feasible.any():
            return int(np.flatnonzero(feasible)[np.argmax(scores[feasible])])
        closest = np.flatnonzero(shortfall == shortfall.min())
        best = int(closest[np.argmax(scores[closest])])
        warnings.warn(
            f"No candidate meets the fairness constraints {bounds}; choosing candidate "
            f"{best}, the closest to them (total shortfall {shortfall[best]:.4g}).",
            FairnessConstraintWarning,
            stacklevel=2,
        )
        return best

    refit.score = score
    refit.constraints = bounds
    return refit
