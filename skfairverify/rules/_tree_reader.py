"""Read a fitted decision tree as a set of positive leaves on its raw input columns.

A :class:`~sklearn.tree.DecisionTreeClassifier` predicts ``classes_[1]`` on the union
of its positive leaves. Each leaf is the conjunction of the splits on its path,
``feature <= threshold`` (left) or ``feature > threshold`` (right). When the tree sits
at the end of a pipeline whose steps transform each raw column on its own (an affine
scaler, a binning, a one-hot encoder), every split is a condition on one raw column:

* an affine feature ``a * x + b`` (``StandardScaler``, ``MinMaxScaler``,
  ``MaxAbsScaler``, ``RobustScaler``, ``'passthrough'``): ``x <= (t - b) / a`` (for
  ``a > 0``), so a leaf is an interval ``(lo, hi]`` of ``x``;
* an ordinal bin code (``KBinsDiscretizer(encode="ordinal")``): ``x`` below a bin edge;
* a bin indicator (``KBinsDiscretizer(encode="onehot")``,
  :class:`~skfairverify.preprocessing.BinningDiscretizer`): ``x`` in or out of a bin,
  so a leaf may be a union of disjoint intervals;
* a category indicator (``OneHotEncoder``): a set of categories.

:func:`positive_leaves` composes the steps (``_tree_steps``) and walks the tree; the
exact probability of the leaves under a Bayesian network is in
:mod:`skfairverify.verification._trees_exact`, the variables whose states have every
threshold as a boundary in :mod:`skfairverify.verification._trees_states`.

The tree compares its input in float32 (scikit-learn casts ``X``); the regions are
stated in float64 on the raw values, so a value within float32 round-off of a
threshold may be placed on the other side. The thresholds of a fitted tree lie
midway between training values, far from them in that sense.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from ._regions import CategorySet, Intervals
from ._steps import split_final, unwrap_frozen
from ._tree_steps import CodedFeature, NumericFeature, push

__all__ = ["LeafRegion", "TreeLeaves", "is_tree_model", "positive_leaves"]


def is_tree_model(estimator) -> bool:
    """Whether the final step of ``estimator`` (through pipelines) is a decision tree.

    Parameters
    ----------
    estimator : estimator
        A classifier or a pipeline, fitted or not.

    Returns
    -------
    bool

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.rules import is_tree_model
    >>> is_tree_model(make_pipeline(StandardScaler(), DecisionTreeClassifier()))
    True
    """
    return isinstance(split_final(estimator)[1], DecisionTreeClassifier)


# ------------------------------------------------------------------------ leaves
@dataclass(frozen=True)
class LeafRegion:
    """A positive leaf of a tree as a product of conditions on raw columns.

    Attributes
    ----------
    node : int
        The leaf's node id in ``tree_``.
    conditions : dict
        Raw column -> :class:`Intervals` (a numeric column) or :class:`CategorySet`
        (a one-hot encoded column); a column absent is unconstrained.
    """

    node: int
    conditions: dict

    def contains(self, X: pd.DataFrame) -> np.ndarray:
        """Whether each row of ``X`` lies in the region."""
        out = np.ones(len(X), dtype=bool)
        for col, cond in self.conditions.items():
            if isinstance(cond, Intervals):
                out &= cond.contains(X[col].to_numpy(dtype=float))
            else:
                out &= cond.contains(X[col].to_numpy(dtype=object), name=col)
        return out


@dataclass(frozen=True)
class TreeLeaves:
    """The positive leaves of a fitted binary decision tree on its raw input columns.

    Attributes
    ----------
    regions : list of LeafRegion
        One region per positive leaf (a leaf predicting ``classes[1]``); disjoint.
    thresholds : dict of str to ndarray
        Per numeric raw column, the sorted finite boundaries of the positive regions
        (the split thresholds that matter for the positive class, mapped to the
        raw column).
    categories : dict of str to list
        Per one-hot encoded raw column, the encoder's categories.
    read : list of str
        Raw columns the tree splits on, in input order.
    feature_names_in : list of str
        Every input column of the estimator.
    classes : ndarray
        The tree's ``classes_``.
    n_leaves : int
        Number of leaves of the tree (positive or not).
    """

    regions: list
    thresholds: dict
    categories: dict
    read: list
    feature_names_in: list
    classes: np.ndarray
    n_leaves: int

    def predict_positive(self, X: pd.DataFrame) -> np.ndarray:
        """Whether each row of ``X`` falls in a positive leaf (the tree predicts ``classes[1]``).

        Parameters
        ----------
        X : DataFrame
            Raw inputs with the columns in ``read``.

        Returns
        -------
        ndarray of bool of shape (n_samples,)
        """
        out = np.zeros(len(X), dtype=bool)
        for region in self.regions:
            out |= region.contains(X)
        return out


def _input_names(estimator, final, columns) -> list[str]:
    names = None
    for obj in (unwrap_frozen(estimator), final):
        if getattr(obj, "feature_names_in_", None) is not None:
            names = [str(c) for c in obj.feature_names_in_]
            break
    if columns is not None:
        columns = [str(c) for c in columns]
        if names is not None and names != columns:
            raise ValueError(
                f"columns {columns} differ from the estimator's input columns {names}."
            )
        names = columns
    if names is None:
        n = getattr(unwrap_frozen(estimator), "n_features_in_", None)
        if n is None:
            raise TypeError("Cannot tell the input columns of the estimator; is it fitted?")
        names = [f"x{i}" for i in range(n)]
    return names


def _check_tree(final) -> None:
    label = type(final).__name__
    if not isinstance(final, DecisionTreeClassifier):
        raise TypeError(
            f"The final step {label!r} is not a DecisionTreeClassifier; the exact tree path "
            "reads single decision trees only (use method='sampling' for other models)."
        )
    check_is_fitted(final)
    if final.n_outputs_ != 1 or len(final.classes_) != 2:
        raise TypeError(
            f"The final step {label!r} is not a binary single-output classifier "
            f"({final.n_outputs_} output(s), classes {list(np.ravel(final.classes_))[:10]})."
        )


def _walk(tree, feats) -> list[LeafRegion]:
    """Positive leaves of ``tree`` (value of class 1 above class 0: predict's argmax)."""
    regions = []
    stack = [(0, {})]
    # where a missing value goes at every split (scikit-learn >= 1.3 trees)
    missing_left = getattr(tree, "missing_go_to_left", np.zeros(tree.node_count, dtype=bool))
    while stack:
        node, cond = stack.pop()
        left, right = tree.children_left[node], tree.children_right[node]
        if left == right:  # a leaf (both -1)
            value = tree.value[node][0]
            if value[1] > value[0]:
                regions.append(LeafRegion(int(node), cond))
            continue
        f = feats[tree.feature[node]]
        go_left = f.left(float(tree.threshold[node]), bool(missing_left[node]))
        for child, part in ((right, ~go_left), (left, go_left)):
            new = dict(cond)
            new[f.column] = new[f.column] & part if f.column in new else part
            if not new[f.column].is_empty:  # an impossible branch has no region
                stack.append((child, new))
    return sorted(regions, key=lambda r: r.node)


def _column_kinds(feats) -> dict:
    """Raw column -> encoder categories (one-hot) or None (numeric); refuse mixed uses."""
    kinds: dict = {}
    for f in feats:
        cats = (sorted(f.parts[0].universe, key=str) if isinstance(f, CodedFeature)
                and isinstance(f.parts[0], CategorySet) else None)
        if f.column in kinds and (kinds[f.column] is None) != (cats is None):
            raise TypeError(
                f"Column {f.column!r} enters the tree both as a number and through a one-hot "
                "encoder; the exact tree path reads each column one way."
            )
        kinds[f.column] = cats
    return kinds


def positive_leaves(estimator, columns=None) -> TreeLeaves:
    """Read a fitted binary decision tree (or a pipeline ending in one) as positive regions.

    Every split is mapped back to a condition on one raw column through the pipeline's
    per-column steps (see the module docstring); the leaves whose predicted class is
    ``classes_[1]`` (``predict``'s argmax rule: a tie goes to ``classes_[0]``) are
    returned as products of intervals ``(lo, hi]`` and category sets.

    Parameters
    ----------
    estimator : estimator
        A fitted :class:`~sklearn.tree.DecisionTreeClassifier` or a pipeline of
        supported steps ending in one (also inside
        :class:`~sklearn.frozen.FrozenEstimator`).
    columns : list of str, default=None
        The raw input columns; the estimator's ``feature_names_in_`` (or ``x0, x1,
        ...``) when None.

    Returns
    -------
    TreeLeaves

    Raises
    ------
    TypeError
        If a step cannot be read as a per-column map (the message names the step),
        the final step is not a binary decision tree, or a column enters the tree both
        as a number and through a one-hot encoder.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.rules import positive_leaves
    >>> X = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    >>> model = make_pipeline(StandardScaler(), DecisionTreeClassifier()).fit(X, [0, 0, 1, 1])
    >>> leaves = positive_leaves(model)
    >>> leaves.regions[0].conditions["x"].bounds
    ((2.5, inf),)
    >>> leaves.thresholds["x"].tolist()
    [2.5]
    """
    pre, final = split_final(estimator)
    _check_tree(final)
    names = _input_names(estimator, final, columns)
    feats = [NumericFeature(c) for c in names]
    for name, step in pre:
        feats = push(step, feats, name if name is not None else type(step).__name__)
    if len(feats) != final.n_features_in_:
        raise TypeError(
            f"The steps before the tree produce {len(feats)} features but it was fitted on "
            f"{final.n_features_in_}; a step could not be read."
        )
    kinds = _column_kinds(feats)
    tree = final.tree_
    used = {feats[j].column for j in np.unique(tree.feature[tree.feature >= 0])}
    regions = _walk(tree, feats)
    thresholds = {}
    for c in names:
        if c in used and kinds[c] is None:
            bounds = set().union(*(r.conditions[c].finite_bounds() for r in regions
                                   if c in r.conditions))
            thresholds[c] = np.array(sorted(bounds), dtype=float)
    return TreeLeaves(
        regions=regions,
        thresholds=thresholds,
        categories={c: kinds[c] for c in names if c in used and kinds[c] is not None},
        read=[c for c in names if c in used],
        feature_names_in=names,
        classes=np.asarray(final.classes_),
        n_leaves=int(tree.n_leaves),
    )
