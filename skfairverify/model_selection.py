"""Pick the most accurate candidate of a search that is fair enough."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Real

import numpy as np

from .utils._compat import Interval, validate_params

__all__ = [
    "FairnessConstrainedRefit",
    "FairnessConstraintWarning",
    "fairness_constrained_refit",
]


class FairnessConstraintWarning(UserWarning):
    """No candidate of a search met the fairness constraints.

    Issued by :class:`FairnessConstrainedRefit`, which then picks the candidate closest
    to the bounds.

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
    else:
        if threshold is None:
            raise ValueError(f"The constraint {constraint!r} needs a threshold.")
        items = {constraint: threshold}
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
    """Build the error message when every candidate has a NaN score or constraint."""
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


_PARAMETER_CONSTRAINTS = {
    "score": [str],
    "constraint": [str, Mapping],
    "threshold": [Interval(Real, None, None, closed="neither"), None],
}


class FairnessConstrainedRefit:
    """A ``refit`` callable choosing the best candidate among those fair enough.

    Among the candidates of a search whose ``mean_test_<constraint>`` is at least
    ``threshold`` for every constraint (skfairverify's fairness scorers are all
    greater-is-better: ``-gap`` or a ratio), the one with the highest
    ``mean_test_<score>`` is chosen. When no candidate qualifies, the one closest to
    the bounds (smallest total shortfall, then best score) is chosen and a
    :class:`FairnessConstraintWarning` is issued.

    A module-level class holding only its parameters, so that a fitted search using it
    can be pickled (``pickle``, ``joblib.dump``) and shows what it chose by in its repr.

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

    Attributes
    ----------
    constraints : dict of str to float
        The bounds, ``{scorer name: threshold}``, whichever way they were given.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        (a ``ValueError`` and ``TypeError``) on an argument of the wrong type or a
        non-finite threshold.
    ValueError
        A name without threshold, a dict with a threshold, an empty dict, a non-finite
        bound in the dict.
    TypeError
        A constraint name that is not a string.

    See Also
    --------
    fairness_constrained_refit : The same, as a function.

    Notes
    -----
    Called by the search as ``refit(cv_results) -> int``: the search's ``best_index_``
    is the chosen candidate; ``best_score_`` is not set by scikit-learn for callable
    refits. It raises a ``KeyError`` when the search has no scorer of one of the names.

    A candidate whose ``mean_test_<score>`` or any ``mean_test_<constraint>`` is NaN (a
    failed fit, or a scorer that could not compute the metric) never qualifies and is
    never chosen, not even as the closest one; when every candidate has a NaN, the call
    raises a ``ValueError`` naming the NaN columns. The successive-halving searches
    accept a single scorer and ignore callable refits; run the constrained choice on a
    ``GridSearchCV`` over their best candidates instead.

    Examples
    --------
    >>> from skfairverify import FairnessConstrainedRefit
    >>> refit = FairnessConstrainedRefit("accuracy", {"sp": -0.05})
    >>> refit
    FairnessConstrainedRefit(score='accuracy', constraint={'sp': -0.05})
    >>> results = {"mean_test_accuracy": [0.90, 0.85, 0.80],
    ...            "mean_test_sp": [-0.20, -0.04, -0.01]}
    >>> refit(results)
    1
    """

    _parameter_constraints: dict = _PARAMETER_CONSTRAINTS

    @validate_params(_PARAMETER_CONSTRAINTS, prefer_skip_nested_validation=True)
    def __init__(self, score, constraint, threshold=None):
        self.score = score
        self.constraint = constraint
        self.threshold = threshold
        _constraints(constraint, threshold)  # refuse inconsistent bounds at creation

    @property
    def constraints(self) -> dict[str, float]:
        """The bounds ``{scorer name: threshold}``."""
        return _constraints(self.constraint, self.threshold)

    def __call__(self, cv_results: Mapping) -> int:
        """Index of the chosen candidate.

        Parameters
        ----------
        cv_results : dict
            A search's ``cv_results_`` (at least ``mean_test_<score>`` and
            ``mean_test_<name>`` of every constraint).

        Returns
        -------
        int
            The candidate chosen: the best score among the fair-enough ones, else the
            closest to the bounds (with a :class:`FairnessConstraintWarning`).
        """
        bounds = self.constraints
        scores = _column(cv_results, self.score)
        columns = {name: _column(cv_results, name) for name in bounds}
        valid = ~np.isnan(scores)
        for values in columns.values():
            valid &= ~np.isnan(values)
        if not valid.any():
            raise ValueError(_no_valid_candidate(self.score, scores, columns))
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

    def __repr__(self) -> str:
        """Show the parameters, as given: ``FairnessConstrainedRefit(score=..., ...)``."""
        args = f"score={self.score!r}, constraint={self.constraint!r}"
        if self.threshold is not None:
            args += f", threshold={self.threshold!r}"
        return f"{type(self).__name__}({args})"


@validate_params(_PARAMETER_CONSTRAINTS, prefer_skip_nested_validation=True)
def fairness_constrained_refit(
    score: str, constraint: str | Mapping[str, float], threshold: float | None = None
) -> FairnessConstrainedRefit:
    """Build a ``refit`` callable choosing the best candidate among those fair enough.

    The functional spelling of :class:`FairnessConstrainedRefit` (same parameters, same
    choice): among the candidates whose ``mean_test_<constraint>`` is at least
    ``threshold`` for every constraint, the one with the highest ``mean_test_<score>``;
    when none qualifies, the closest to the bounds, with a
    :class:`FairnessConstraintWarning`. NaN never qualifies.

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
    FairnessConstrainedRefit
        ``refit(cv_results) -> int`` for ``GridSearchCV(refit=...)`` or
        ``RandomizedSearchCV(refit=...)``; picklable, so the fitted search is too.

    Raises
    ------
    ValueError
        On bad arguments (see :class:`FairnessConstrainedRefit`); from the callable,
        when every candidate has a NaN score or constraint value.
    KeyError
        From the callable, when the search has no scorer of one of the names.

    Examples
    --------
    >>> from skfairverify import fairness_constrained_refit
    >>> refit = fairness_constrained_refit("accuracy", "sp", -0.05)
    >>> refit
    FairnessConstrainedRefit(score='accuracy', constraint='sp', threshold=-0.05)
    >>> results = {"mean_test_accuracy": [0.90, 0.85, 0.80],
    ...            "mean_test_sp": [-0.20, -0.04, -0.01]}
    >>> refit(results)
    1
    """
    return FairnessConstrainedRefit(score, constraint, threshold)
