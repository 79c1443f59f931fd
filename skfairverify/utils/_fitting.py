"""Fitting a user's estimator with sample weights: one behaviour for every box."""

from __future__ import annotations

import sklearn
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import has_fit_parameter

__all__ = ["check_weights_accepted", "fit_with_weights"]


def _weight_key(estimator) -> str | None:
    """The fit parameter that carries sample weights to ``estimator``, or None."""
    if has_fit_parameter(estimator, "sample_weight"):
        return "sample_weight"
    if isinstance(estimator, Pipeline):
        name, last = estimator.steps[-1]
        if hasattr(last, "fit") and has_fit_parameter(last, "sample_weight"):
            return f"{name}__sample_weight"
    return None


def check_weights_accepted(estimator, what: str = "the estimator") -> None:
    """Refuse, before any work, an estimator whose fit cannot take ``sample_weight``.

    Weights the model ignores would give a weighted analysis of an unweighted model, a
    plausible wrong number; as scikit-learn's meta-estimators do, this is an error.
    A :class:`~sklearn.frozen.FrozenEstimator` is never refitted, so it is accepted.

    Parameters
    ----------
    estimator : estimator
    what : str, default="the estimator"
        How the estimator is called in the message.

    Raises
    ------
    TypeError
        Naming the estimator and what to do instead.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skfairverify.utils._fitting import check_weights_accepted
    >>> check_weights_accepted(LogisticRegression())
    >>> check_weights_accepted(KNeighborsClassifier())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: sample_weight cannot be used to fit the estimator: KNeighborsClassifier.fit ...
    """
    if isinstance(estimator, FrozenEstimator) or _weight_key(estimator) is not None:
        return
    raise TypeError(
        f"sample_weight cannot be used to fit {what}: {type(estimator).__name__}.fit takes "
        "no sample_weight (for a Pipeline: its final step). Fit the model with the weights "
        "yourself and pass FrozenEstimator(model), or leave sample_weight out."
    )


def fit_with_weights(estimator, X, y, sample_weight=None, *, what: str = "the estimator"):
    """``estimator.fit(X, y)``, with ``sample_weight`` when given.

    A :class:`~sklearn.pipeline.Pipeline` receives the weights in its final step (by
    name, with metadata routing off for this call); a
    :class:`~sklearn.frozen.FrozenEstimator` is not refitted.

    Parameters
    ----------
    estimator : estimator
    X, y : training data
    sample_weight : ndarray of shape (n_samples,) or None, default=None
    what : str, default="the estimator"
        How the estimator is called in the message of the error.

    Returns
    -------
    estimator
        The fitted estimator (what its ``fit`` returns).

    Raises
    ------
    TypeError
        When weights are given and the estimator cannot take them
        (:func:`check_weights_accepted`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify.utils._fitting import fit_with_weights
    >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    >>> fit_with_weights(LogisticRegression(), X, y, np.array([1.0, 2.0, 1.0, 1.0]))
    LogisticRegression()
    """
    if sample_weight is None or isinstance(estimator, FrozenEstimator):
        return estimator.fit(X, y)
    check_weights_accepted(estimator, what)
    with sklearn.config_context(enable_metadata_routing=False):
        return estimator.fit(X, y, **{_weight_key(estimator): sample_weight})
