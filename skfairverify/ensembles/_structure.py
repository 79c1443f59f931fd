"""One structure for the tree ensembles of every library: :class:`TreeEnsemble`.

Every tree is a set of flat node arrays in scikit-learn's layout (``children_left``,
``children_right``, ``feature``, ``threshold``; a leaf has ``-1`` children). A split
sends a row left when its value, cast to ``input_dtype``, is ``<= threshold`` (a
library whose split is ``x < c`` is read with the largest value below ``c`` of that
dtype) and a missing value (NaN) left when ``missing_left``. The raw score of a row is
``base_score`` plus the values of the leaves it reaches, added tree after tree in
``score_dtype`` (floating-point addition in a fixed order is monotone, so the sums of
each tree's least and greatest leaf bound the score soundly); the decision is
positive when the score is ``> decision_threshold`` (``strict``) or ``>=`` it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Tree", "TreeEnsemble", "largest_below"]


def largest_below(values, dtype) -> np.ndarray:
    """The largest value of ``dtype`` strictly below each of ``values``, as float64.

    ``x < c`` is ``x <= largest_below(c)`` for every ``x`` of that dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles._structure import largest_below
    >>> float(largest_below([1.0], np.float32)[0]) < 1.0
    True
    """
    values = np.asarray(values, dtype=dtype)
    return np.nextafter(values, np.array(-np.inf, dtype=dtype)).astype(np.float64)


@dataclass(frozen=True)
class Tree:
    """One tree of a :class:`TreeEnsemble` as flat node arrays.

    Attributes
    ----------
    children_left, children_right : ndarray of int64
        Children of each node, ``-1`` at a leaf.
    feature : ndarray of int64
        Input column each split reads, ``-1`` at a leaf.
    threshold : ndarray of float64
        A row goes left when its value (in the ensemble's ``input_dtype``) is
        ``<= threshold``; ``nan`` at a leaf.
    missing_left : ndarray of bool
        Whether a missing value goes left.
    value : ndarray of float64
        Each leaf's contribution to the raw score (0 at internal nodes).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from skfairverify.ensembles import read_ensemble
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> model = RandomForestClassifier(2, random_state=0).fit(X, X[:, 0] > 9)
    >>> tree = read_ensemble(model).trees[0]
    >>> int(tree.is_leaf.sum()), tree.value[tree.apply(X[:2])].tolist()
    (2, [0.0, 0.0])
    """

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray

    @property
    def is_leaf(self) -> np.ndarray:
        """Whether each node is a leaf."""
        return self.children_left < 0

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf each row of ``X`` (already cast to the input dtype) reaches.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Inputs cast to the ensemble's ``input_dtype`` (held in float64).

        Returns
        -------
        leaves : ndarray of int64 of shape (n_samples,)
            Node index of each row's leaf.
        """
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = ~self.is_leaf[node]
        while active.any():
            rows = np.flatnonzero(active)
            at = node[rows]
            x = X[rows, self.feature[at]]
            nan = np.isnan(x)
            left = np.where(nan, self.missing_left[at], x <= self.threshold[at])
            node[rows] = np.where(left, self.children_left[at], self.children_right[at])
            active[rows] = ~self.is_leaf[node[rows]]
        return node


def make_tree(children_left, children_right, feature, threshold, missing_left,
              value) -> Tree:
    """A :class:`Tree` from array-likes, typed and frozen."""
    arrays = [np.array(children_left, dtype=np.int64), np.array(children_right, dtype=np.int64),
              np.array(feature, dtype=np.int64), np.array(threshold, dtype=np.float64),
              np.array(missing_left, dtype=bool), np.array(value, dtype=np.float64)]
    leaf = arrays[0] < 0
    arrays[2][leaf] = -1
    arrays[3][leaf] = np.nan
    for array in arrays:
        array.setflags(write=False)
    return Tree(*arrays)


@dataclass(frozen=True)
class TreeEnsemble:
    """A fitted binary tree ensemble read into one structure, whatever its library.

    Made by :func:`read_ensemble`; the decision it recomputes is the model's own
    ``predict`` (checked on every reader by the tests).

    Attributes
    ----------
    trees : tuple of Tree
        The trees, in the order the model adds them.
    base_score : float
        The raw score before any tree (a boosting model's initial prediction; 0 for
        a forest).
    decision_threshold : float
        The raw score's threshold of the positive decision.
    strict : bool
        Positive when ``score > decision_threshold`` if True, ``>=`` if False.
    input_dtype : numpy dtype
        The dtype the model casts its input to before comparing it with thresholds.
    score_dtype : numpy dtype
        The dtype the model adds leaf values in.
    n_features : int
        Number of input columns.
    classes : ndarray
        The model's ``classes_``; the positive decision is ``classes[1]``.
    kind : str
        The model's class name.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble
    >>> X = np.arange(40.0).reshape(20, 2)
    >>> y = (X[:, 0] > 18).astype(int)
    >>> model = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, y)
    >>> ensemble = read_ensemble(model)
    >>> ensemble.n_trees, bool((ensemble.predict(X) == model.predict(X)).all())
    (5, True)
    """

    trees: tuple
    base_score: float
    decision_threshold: float
    strict: bool
    input_dtype: np.dtype
    score_dtype: np.dtype
    n_features: int
    classes: np.ndarray
    kind: str

    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return len(self.trees)

    @property
    def n_leaves(self) -> int:
        """Number of leaves over all trees."""
        return int(sum(int(tree.is_leaf.sum()) for tree in self.trees))

    def _cast(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features}), got {X.shape}."
            )
        return X.astype(self.input_dtype).astype(np.float64)

    def leaf_values(self, X) -> np.ndarray:
        """The value of the leaf each row reaches in each tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric inputs (NaN for a missing value).

        Returns
        -------
        values : ndarray of shape (n_samples, n_trees)
        """
        X = self._cast(X)
        return np.column_stack([tree.value[tree.apply(X)] for tree in self.trees])

    def raw_score(self, X) -> np.ndarray:
        """The raw score of each row, summed tree after tree as the model does.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric inputs (NaN for a missing value).

        Returns
        -------
        score : ndarray of shape (n_samples,)
        """
        return self.sum_scores(self.leaf_values(X))

    def sum_scores(self, leaf_values: np.ndarray, trees_first: bool = False) -> np.ndarray:
        """``base_score`` plus per-tree values, added in the model's order and dtype.

        Parameters
        ----------
        leaf_values : ndarray of shape (n_rows, n_trees)
            One value per tree (a leaf's, or a bound on it).
        trees_first : bool, default=False
            Whether ``leaf_values`` is given transposed, of shape (n_trees, n_rows).

        Returns
        -------
        score : ndarray of shape (n_rows,)
        """
        values = np.asarray(leaf_values, dtype=self.score_dtype)
        values = values if trees_first else np.ascontiguousarray(values.T)
        score = np.full(values.shape[1], self.base_score, dtype=self.score_dtype)
        for row in values:
            score += row
        return score.astype(np.float64)

    def positive(self, score) -> np.ndarray:
        """Whether raw scores give the positive decision.

        Parameters
        ----------
        score : ndarray
            Raw scores (:meth:`raw_score`).

        Returns
        -------
        positive : ndarray of bool
        """
        score = np.asarray(score)
        if self.strict:
            return score > self.decision_threshold
        return score >= self.decision_threshold

    def predict(self, X) -> np.ndarray:
        """The model's decision recomputed from the structure.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric inputs (NaN for a missing value).

        Returns
        -------
        y : ndarray of shape (n_samples,)
            ``classes[1]`` where positive, ``classes[0]`` elsewhere.
        """
        return self.classes[self.positive(self.raw_score(X)).astype(int)]

    def thresholds(self, feature: int) -> np.ndarray:
        """The sorted distinct split thresholds of one input column over all trees.

        Parameters
        ----------
        feature : int
            Input column.

        Returns
        -------
        thresholds : ndarray of float64
        """
        found = [tree.threshold[tree.feature == feature] for tree in self.trees]
        return np.unique(np.concatenate(found)) if found else np.empty(0)


def complement(ensemble: TreeEnsemble, classes) -> TreeEnsemble:
    """The ensemble whose positive decision is ``ensemble``'s negative one.

    ``score > t`` fails exactly when ``-score >= -t``: every leaf value, the base score
    and the threshold are negated (exact in floating point, the sums in the same order)
    and the comparison's strictness flipped. ``classes`` are the new ``classes`` (the
    positive decision ``classes[1]``), e.g. ``[0, 1]`` of a wrapper deciding 1 where the
    model decides its ``classes[0]``.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model.
    classes : array-like of shape (2,)
        The classes of the complement.

    Returns
    -------
    TreeEnsemble

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble
    >>> from skfairverify.ensembles._structure import complement
    >>> X = np.arange(40.0).reshape(20, 2)
    >>> model = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, X[:, 0] > 18)
    >>> flipped = complement(read_ensemble(model), [0, 1])
    >>> bool((flipped.predict(X) == (model.predict(X) == model.classes_[0])).all())
    True
    """
    trees = tuple(make_tree(t.children_left, t.children_right, t.feature, t.threshold,
                            t.missing_left, -t.value) for t in ensemble.trees)
    return replace(ensemble, trees=trees, base_score=-float(ensemble.base_score),
                   decision_threshold=-float(ensemble.decision_threshold),
                   strict=not ensemble.strict, classes=np.asarray(classes))
