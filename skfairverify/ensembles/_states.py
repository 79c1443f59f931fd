"""The states of a network variable as intervals of one input column of the model.

A :class:`FeatureStates` with sorted ``edges`` ``e_0 < ... < e_{m-1}`` has the states
``(-inf, e_0], (e_0, e_1], ..., (e_{m-1}, inf)`` of the column's value cast to the
ensemble's input dtype, and one more last state for a missing value when ``missing``.
When every split threshold of every tree on that column is an edge, each state sends
every split one known way: :func:`refine_states` makes such edges from the ensemble.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ._structure import Tree, TreeEnsemble, make_tree

__all__ = ["FeatureStates", "encode_states", "index_ensemble", "refine_states"]


@dataclass(frozen=True)
class FeatureStates:
    """States of one network variable as intervals of one input column.

    Parameters
    ----------
    feature : int or None
        The model's input column the variable describes; None for a variable the
        model does not read (a sensitive feature left out of the model, say).
    edges : ndarray of float64
        Sorted distinct finite state boundaries; state ``j`` holds the values ``x``
        with ``edges[j - 1] < x <= edges[j]`` (``-inf`` and ``inf`` at the ends).
        Ignored (empty) when ``feature`` is None.
    missing : bool, default=False
        Whether the last state is a missing value (NaN).
    n_states : int, default=None
        Number of states of a variable the model does not read (``feature=None``);
        otherwise ``len(edges) + 1 + missing``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles import FeatureStates
    >>> states = FeatureStates(0, np.array([1.0, 2.5]), missing=True)
    >>> states.n_states
    4
    """

    feature: int | None
    edges: np.ndarray
    missing: bool = False
    n_states: int | None = None

    def __post_init__(self):
        edges = np.asarray(self.edges, dtype=np.float64).ravel()
        if edges.size and (not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0)):
            raise ValueError("edges must be finite and strictly increasing.")
        object.__setattr__(self, "edges", edges)
        if self.feature is None:
            if self.n_states is None or int(self.n_states) < 1:
                raise ValueError("A variable the model does not read (feature=None) needs "
                                 "n_states >= 1.")
            return
        object.__setattr__(self, "n_states", edges.size + 1 + int(bool(self.missing)))

    def encode(self, values, dtype=np.float64) -> np.ndarray:
        """The state of each value of the column.

        Parameters
        ----------
        values : array-like of shape (n_samples,)
            The column's values (NaN for a missing value).
        dtype : numpy dtype, default=np.float64
            The ensemble's ``input_dtype``, which the values are cast to first.

        Returns
        -------
        states : ndarray of int64 of shape (n_samples,)
        """
        x = np.asarray(values, dtype=np.float64).astype(dtype).astype(np.float64)
        states = np.searchsorted(self.edges, x, side="left")
        nan = np.isnan(x)
        if nan.any():
            if not self.missing:
                raise ValueError(f"Column {self.feature} has missing values but its "
                                 "states have no missing state (missing=False).")
            states[nan] = self.n_states - 1
        return states.astype(np.int64)


def refine_states(ensemble: TreeEnsemble, feature: int, edges=(), missing=False
                  ) -> FeatureStates:
    """States of one input column with every split threshold of the ensemble as an edge.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model read by :func:`read_ensemble`.
    feature : int
        The input column.
    edges : array-like, default=()
        More boundaries to keep (a binning's edges, say), cast to the input dtype.
    missing : bool, default=False
        Whether to add a state for a missing value.

    Returns
    -------
    states : FeatureStates
        Edges: the union of ``edges`` and the finite split thresholds on the column.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble, refine_states
    >>> X = np.column_stack([np.arange(10.0), np.zeros(10)])
    >>> model = GradientBoostingClassifier(n_estimators=2, max_depth=1).fit(X, X[:, 0] > 4)
    >>> refine_states(read_ensemble(model), 0, edges=[2.0]).edges.tolist()
    [2.0, 4.5]
    """
    if (isinstance(feature, bool) or not isinstance(feature, (int, np.integer))
            or not 0 <= feature < ensemble.n_features):
        raise ValueError(f"feature must be the index of an input column, 0 to "
                         f"{ensemble.n_features - 1}; got {feature!r}.")
    extra = np.asarray(edges, dtype=np.float64)
    if not np.isfinite(extra).all():
        raise ValueError(f"edges must be finite numbers; got {extra[~np.isfinite(extra)]} "
                         f"for feature {feature} (a missing value is its own state: "
                         "missing=True).")
    extra = extra.astype(ensemble.input_dtype)
    thresholds = ensemble.thresholds(feature)
    merged = np.unique(np.concatenate([extra.astype(np.float64), thresholds]))
    return FeatureStates(int(feature), merged[np.isfinite(merged)], missing=missing)


def encode_states(states, X, dtype=np.float64) -> np.ndarray:
    """The state of every variable for each row of the model's inputs.

    Parameters
    ----------
    states : list of FeatureStates
        One per network variable; a variable the model does not read must be given
        its states in ``X`` by the caller, and is encoded as 0 here.
    X : array-like of shape (n_samples, n_features)
        The model's numeric inputs.
    dtype : numpy dtype, default=np.float64
        The ensemble's ``input_dtype``.

    Returns
    -------
    codes : ndarray of int64 of shape (n_samples, n_variables)

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles import FeatureStates, encode_states
    >>> states = [FeatureStates(0, np.array([0.5]))]
    >>> encode_states(states, np.array([[0.0], [0.5], [1.0]]))[:, 0].tolist()
    [0, 0, 1]
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.zeros((X.shape[0], len(states)), dtype=np.int64)
    for v, st in enumerate(states):
        if st.feature is not None:
            codes[:, v] = st.encode(X[:, st.feature], dtype)
    return codes


def _prefix_length(reps: np.ndarray, threshold: float, dtype) -> int:
    """States of sorted representatives ``reps`` (cast to ``dtype``) sent left: a prefix."""
    return int(np.searchsorted(reps.astype(dtype).astype(np.float64), threshold, side="right"))


def _check_representatives(feature: int, values) -> tuple[np.ndarray, bool]:
    """The observed representatives of a column's states (sorted) and whether one is NaN."""
    values = np.asarray(values, dtype=np.float64).ravel()
    nan = np.isnan(values)
    if nan.any() and not (nan.sum() == 1 and nan[-1]):
        raise ValueError(f"Column {feature}: a missing state must be the last one (one NaN "
                         "representative, last).")
    observed = values[~nan]
    if observed.size == 0 or np.any(np.diff(observed) <= 0):
        raise ValueError(
            f"Column {feature}: the states' representative values must be strictly "
            f"increasing (a split sends a prefix of them left); got {observed[:10].tolist()}.")
    return observed, bool(nan.any())


def _restated_tree(tree, dtype, observed: dict) -> Tree:
    """``tree`` with every split on a column's state index (see :func:`index_ensemble`)."""
    left, right = tree.children_left.copy(), tree.children_right.copy()
    threshold, missing_left = tree.threshold.copy(), tree.missing_left.copy()
    for node in np.flatnonzero(left >= 0):
        f = int(tree.feature[node])
        if f not in observed:
            raise ValueError(f"The trees split on input column {f} but it has no states; "
                             "give representatives for every column the trees read.")
        k = _prefix_length(observed[f], float(threshold[node]), dtype)
        threshold[node] = np.inf if k in (0, observed[f].size) else k - 0.5
        if k == 0:  # every observed state goes right: the children swapped, all left
            left[node], right[node] = right[node], left[node]
            missing_left[node] = not missing_left[node]
    return make_tree(left, right, tree.feature, threshold, missing_left, tree.value)


def index_ensemble(ensemble: TreeEnsemble, representatives: dict
                   ) -> tuple[TreeEnsemble, dict]:
    """The ensemble restated on state indices, and each column's states of them.

    Each input column the trees read is described by states with one representative
    value each, sorted (a value per distinct value, or a value inside each bin whose
    edges the split thresholds are), a missing state last (NaN). A split of a tree
    then sends a prefix of the states left: it is restated as a split of the state
    index at the prefix's end (an index of ``j`` meaning state ``j``), so that
    ``FeatureStates(feature, [0.5, 1.5, ...])`` has every threshold as an edge and the
    restated ensemble's decision on a state is the model's on its representative.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model (:func:`read_ensemble`).
    representatives : dict of int to array-like of float
        Per input column the trees read, one value per state in the state order
        (strictly increasing, NaN last for a missing state).

    Returns
    -------
    indexed : TreeEnsemble
        Same trees and leaf values, splits on state indices (``input_dtype`` float64).
    states : dict of int to FeatureStates
        Per column of ``representatives``, its states as intervals of the index.

    Raises
    ------
    ValueError
        For representatives not increasing, a NaN that is not last, or a column the
        trees read without representatives.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble
    >>> from skfairverify.ensembles._states import index_ensemble
    >>> X = np.repeat(np.arange(4.0), 5)[:, None]
    >>> model = GradientBoostingClassifier(n_estimators=3, max_depth=1).fit(X, X[:, 0] > 1)
    >>> indexed, states = index_ensemble(read_ensemble(model), {0: [0.0, 1.0, 2.0, 3.0]})
    >>> states[0].edges.tolist(), indexed.predict(np.arange(4.0)[:, None]).tolist()
    ([0.5, 1.5, 2.5], [False, False, True, True])
    """
    observed, states = {}, {}
    for f, values in representatives.items():
        obs, missing = _check_representatives(int(f), values)
        observed[int(f)] = obs
        states[int(f)] = FeatureStates(int(f), np.arange(obs.size - 1) + 0.5, missing=missing)
    trees = tuple(_restated_tree(t, ensemble.input_dtype, observed) for t in ensemble.trees)
    indexed = replace(ensemble, trees=trees, input_dtype=np.dtype(np.float64))
    return indexed, states
