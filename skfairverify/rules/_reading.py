"""A fitted model as the readers see it: a linear rule, a tree's leaves, or neither."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._linear_reader import linear_rule
from ._rule import LinearRule
from ._tree_reader import TreeLeaves, is_tree_model, positive_leaves

__all__ = ["Reading", "read_model"]


@dataclass
class Reading:
    """What :func:`read_model` found: the rule or the leaves, and why not the others."""

    rule: LinearRule | None = None
    leaves: TreeLeaves | None = None
    reasons: list = field(default_factory=list)  # the readers' refusals, in order

    @property
    def kind(self) -> str | None:
        """``"linear"``, ``"tree"`` or None (no reader understands the model)."""
        if self.rule is not None:
            return "linear"
        return "tree" if self.leaves is not None else None


def read_model(estimator, model_name: str | None = None) -> Reading:
    """Read a fitted model as a linear rule, else as a decision tree's positive leaves.

    Each reader refuses a model (or a step before it) it does not understand with a
    TypeError naming it; the refusals are kept, in order, as ``reasons``.

    Parameters
    ----------
    estimator : estimator
        A fitted classifier or pipeline.
    model_name : str, default=None
        The model's name in the linear reader's refusal (its class name by default).

    Returns
    -------
    Reading
        The linear rule, or the tree's leaves, or neither with the reasons.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skfairverify.rules import read_model
    >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    >>> read_model(LogisticRegression().fit(X, y)).kind
    'linear'
    >>> read_model(KNeighborsClassifier(n_neighbors=1).fit(X, y)).kind is None
    True
    """
    name = model_name or type(estimator).__name__
    reading = Reading()
    try:
        reading.rule = linear_rule(estimator, read_bins=True)
        return reading
    except TypeError as exc:
        reading.reasons.append(TypeError(
            f"FairnessVerifier verifies binary linear classifiers; {name} cannot be read "
            f"as one: {exc}"))
    if is_tree_model(estimator):
        try:
            reading.leaves = positive_leaves(estimator)
        except TypeError as exc:
            reading.reasons.append(exc)
    return reading
