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


#: Entries (split nodes x states) of the left sets computed at once.
_LEFT_ENTRIES = 4_000_000


def _prefix_lengths(column: np.ndarray, thresholds, missing_left, dtype):
    """``(k, swap)`` of splits of one column: each sends the first ``k`` ranks left.

    ``column``: the values of the variable's states in the order of their ranks (NaN
    sent as the node sends a missing value). A split sending a suffix of the ranks left
    has its children swapped (``swap``); one sending no range is refused.
    """
    cast = column.astype(dtype).astype(np.float64)
    n = cast.size
    rank = np.arange(n)
    k = np.empty(thresholds.size, dtype=np.int64)
    swap = np.empty(thresholds.size, dtype=bool)
    step = max(1, _LEFT_ENTRIES // max(n, 1))
    for i in range(0, thresholds.size, step):
        t, ml = thresholds[i: i + step, None], missing_left[i: i + step, None]
        with np.errstate(invalid="ignore"):
            left = np.where(np.isnan(cast), ml, cast <= t)
        count = left.sum(axis=1)
        prefix = np.all(left == (rank < count[:, None]), axis=1)
        suffix = np.all(left == (rank >= n - count[:, None]), axis=1)
        if not np.all(prefix | suffix):
            _refuse_unordered(left[~(prefix | suffix)][0], np.isnan(cast).any())
        # all right: swapped, all left; a suffix: swapped, the rest a prefix
        k[i: i + step] = np.where(prefix, np.where(count == 0, n, count), n - count)
        swap[i: i + step] = ~prefix | (count == 0)
    return k, swap


class UnorderedSplitError(ValueError):
    """A split sends no range of a variable's state ranks left (``left``: its mask)."""

    def __init__(self, message: str, left: np.ndarray):
        super().__init__(message)
        self.left = left


def _refuse_unordered(left_row: np.ndarray, has_missing: bool) -> None:
    """Refuse a split that sends no range of a variable's state ranks left."""
    ranks = np.flatnonzero(left_row)
    shown = ranks[:10].tolist() + (["..."] if ranks.size > 10 else [])
    why = ("the column has more than one state of missing values, and the trees send "
           "them left at some nodes and right at others: impute them before the model, "
           "or use method='sampling'" if has_missing else
           "a one-hot encoded category among others, say")
    raise UnorderedSplitError(
        f"A split sends the states of ranks {shown} (of {left_row.size}) left, not a range "
        "of them: the variable's states cannot be ordered so that every split sends a "
        f"prefix left ({why}).", left_row)


def _a_range_but(left: np.ndarray, rank: int) -> bool:
    """Whether ``left`` is a range of ranks once the state of ``rank`` is set aside."""
    rest = np.flatnonzero(np.delete(left, rank))
    return rest.size == 0 or rest[-1] - rest[0] + 1 == rest.size


def _imputed_message(name: str, left: np.ndarray) -> str:
    ranks = np.flatnonzero(left)
    shown = ranks[:10].tolist() + (["..."] if ranks.size > 10 else [])
    return (f"On {name}: a split sends the states of ranks {shown} (of {left.size}) left, "
            "not a range of them. The column has missing values, and they reach the trees "
            "as an ordinary value inside its range (an imputer in front of the trees), "
            "while a split sends that value's state apart from its neighbours (a missing "
            "indicator, SimpleImputer(add_indicator=True), say): the states cannot be "
            "ordered so that every split sends a prefix left. Give the trees the missing "
            "values themselves (HistGradientBoosting, XGBoost and LightGBM route them), "
            "or use method='sampling'.")


def _missing_side(value, thresholds, missing_left, dtype) -> np.ndarray:
    """Whether each split sends the missing state left: its value (NaN as the node says)."""
    cast = float(np.asarray(value).astype(dtype))
    if np.isnan(cast):
        return np.asarray(missing_left, dtype=bool)
    return cast <= np.asarray(thresholds)


def _restated_tree(tree, dtype, values: dict, orders: dict, names=None,
                   missing=frozenset(), imputed=None) -> Tree:
    """``tree`` with every split on a variable's state rank (see :func:`index_ensemble`).

    For a variable of ``missing`` (its last rank the missing state), the ranks before
    it must be sent as a range; the missing state goes the way the split sends its
    value (a NaN as the node sends a missing value), kept as the node's missing side.
    ``imputed``: per variable whose missing state reaches the trees as a number, the
    rank of that state (for the refusal's reason).
    """
    left, right = tree.children_left.copy(), tree.children_right.copy()
    threshold, feature = tree.threshold.copy(), tree.feature.copy()
    missing_left = np.zeros(left.size, dtype=bool)
    split = left >= 0
    for f in np.unique(tree.feature[split]):
        if int(f) not in values:
            raise ValueError(f"The trees split on input column {int(f)} but it has no "
                             "states; give its values for every column the trees read.")
        v, column = values[int(f)]
        ranked = column[orders[v]]
        body = ranked[:-1] if v in missing else ranked
        at = np.flatnonzero(split & (tree.feature == f))
        try:
            k, swap = _prefix_lengths(body, threshold[at], tree.missing_left[at], dtype)
        except UnorderedSplitError as exc:
            name = f"variable {v}" if names is None else f"column {names[v]!r}"
            rank = (imputed or {}).get(v)
            if rank is not None and _a_range_but(exc.left, rank):
                raise ValueError(_imputed_message(name, exc.left)) from None
            raise ValueError(f"On {name}: {exc}") from None
        if v in missing:  # the missing state's side, on the swapped children
            missing_left[at] = _missing_side(ranked[-1], threshold[at],
                                             tree.missing_left[at], dtype) ^ swap
        threshold[at] = np.where(k == body.size, np.inf, k - 0.5)
        feature[at] = v
        flip = at[swap]
        left[flip], right[flip] = right[flip], left[flip]
    return make_tree(left, right, feature, threshold, missing_left, tree.value)


def _missing_state(column) -> bool:
    """Whether a variable's states (their first column's values) have one missing state."""
    return column.size >= 2 and int(np.isnan(column).sum()) == 1


def index_ensemble(ensemble: TreeEnsemble, values: dict, n_variables: int, names=None,
                   missing_states=None) -> tuple[TreeEnsemble, dict, dict]:
    """The ensemble restated on the ranks of its variables' states.

    Each input column the trees read is a function of one variable of a network, whose
    states are such that every split sends each state one way (their values on every
    column, a NaN sent as the node sends a missing value). The states of a variable are
    ranked by their values on its first column (NaN last); every split on any of its
    columns must send a range of ranks left (then a prefix, its children swapped for a
    suffix; the missing state, when there is one, aside), and is restated as a split of
    the rank, so that ``FeatureStates(v, [0.5,
    1.5, ...])`` has every threshold as an edge and the restated ensemble's decision on
    the ranks is the model's on the states' values.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model (:func:`read_ensemble`).
    values : dict of int to (int, array-like of float)
        Per input column the trees read, the variable it is a function of and its
        value on each of that variable's states (in the variable's state order).
    n_variables : int
        Number of variables (the restated ensemble's inputs: one rank per variable).
    names : list of str, default=None
        The variables' names, in the refusal of a split (their indices when None).
    missing_states : dict of int to int, default=None
        Per variable with a state that stands for a missing value, that state's index
        (for the refusal of a split: the missing value imputed before the trees).

    Returns
    -------
    indexed : TreeEnsemble
        Same trees and leaf values, every split on a variable's rank (``input_dtype``
        float64, ``n_features`` the number of variables).
    orders : dict of int to ndarray
        Per variable the trees read, its states in the order of their ranks.
    states : dict of int to FeatureStates
        Per variable the trees read, its ranks as states. A variable with one state
        whose value on its first column is missing (NaN) has it as its missing state
        (``missing=True``, the last rank, given to the restated trees as NaN): each
        split sends it as the node sends its value, so the trees may route missing
        values left at some nodes and right at others (a model fitted without them).

    Raises
    ------
    ValueError
        For a split that sends no range of ranks left, or a column the trees read
        without values.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble
    >>> from skfairverify.ensembles._states import index_ensemble
    >>> X = np.repeat(np.arange(4.0), 5)[:, None]
    >>> model = GradientBoostingClassifier(n_estimators=3, max_depth=1).fit(X, X[:, 0] > 1)
    >>> indexed, orders, states = index_ensemble(
    ...     read_ensemble(model), {0: (0, [3.0, 0.0, 1.0, 2.0])}, 1)
    >>> orders[0].tolist(), states[0].edges.tolist()
    ([1, 2, 3, 0], [0.5, 1.5, 2.5])
    >>> indexed.predict(np.arange(4.0)[:, None]).tolist()
    [False, False, True, True]
    """
    values = {int(f): (int(v), np.asarray(x, dtype=np.float64).ravel())
              for f, (v, x) in values.items()}
    orders, states, missing = {}, {}, set()
    for f in sorted(values):
        v, column = values[f]
        if v not in orders:
            orders[v] = np.argsort(column, kind="stable")  # NaN last
            if _missing_state(column):
                missing.add(v)
            n = column.size - (v in missing)
            states[v] = FeatureStates(v, np.arange(n - 1) + 0.5, missing=v in missing)
        elif column.size != orders[v].size:
            raise ValueError(f"Input column {f} has {column.size} values but variable {v} "
                             f"has {orders[v].size} states.")
    imputed = {v: int(np.argsort(orders[v])[state])
               for v, state in (missing_states or {}).items()
               if v in orders and v not in missing}
    trees = tuple(_restated_tree(t, ensemble.input_dtype, values, orders, names,
                                 frozenset(missing), imputed) for t in ensemble.trees)
    indexed = replace(ensemble, trees=trees, input_dtype=np.dtype(np.float64),
                      n_features=int(n_variables))
    return indexed, orders, states
