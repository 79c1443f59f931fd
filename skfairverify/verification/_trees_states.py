"""Variables of the exact tree path: states refined so that every threshold is a boundary.

A numeric column the tree reads becomes a variable whose states are the cells
``(c_{k-1}, c_k]`` between sorted cut points ``c``: the tree's thresholds on that
column (:attr:`TreeLeaves.thresholds`) merged with quantiles of the data, so that the
network keeps a sensible resolution where the tree has few thresholds. Every
positive region is then a union of whole cells, and its probability under a network
of these variables is exact. A numeric column with at most ``n_bins`` distinct values
keeps one state per value; a one-hot encoded column, one state per category.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from ..rules import CategorySet, Intervals, TreeLeaves
from ..s3p import TableTooLargeError
from ..utils._categories import match_categories
from ._variables import (
    Encoding,
    Variable,
    check_network_columns,
    distinct_numbers,
    missing_fields,
    presence_variable,
    sorted_values,
)

__all__ = [
    "CutBins",
    "StateIndicators",
    "refined_cuts",
    "state_indicators",
    "tree_encoding",
    "tree_encoding_from_network",
]

#: Default largest number of states of a numeric variable of the tree path.
MAX_STATES = 200


def _weighted_quantiles(x: np.ndarray, weight, probs) -> np.ndarray:
    """Inverted-CDF quantiles of ``x`` (weighted by ``weight`` when given)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    w = np.ones(len(x)) if weight is None else np.asarray(weight, dtype=float)[order]
    cdf = np.cumsum(w) / w.sum()
    idx = np.minimum(np.searchsorted(cdf, probs, side="left"), len(xs) - 1)
    return xs[idx]


def _merge_cuts(thresholds: np.ndarray, quantiles: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Thresholds plus the quantile cuts that split the data somewhere new.

    A quantile cut is dropped when it leaves all data on one side, or splits the data
    (sorted ``xs``) as a threshold or another kept cut already does.
    """
    rank = np.searchsorted(xs, thresholds, side="right")
    taken = set(rank.tolist())
    extra = []
    for q in np.unique(quantiles):
        r = int(np.searchsorted(xs, q, side="right"))
        if 0 < r < len(xs) and r not in taken:
            taken.add(r)
            extra.append(q)
    return np.unique(np.concatenate([thresholds, np.asarray(extra, dtype=float)]))


def refined_cuts(x, thresholds, *, n_bins=10, max_states=MAX_STATES, sample_weight=None,
                 column="x") -> np.ndarray:
    """Cut points of a numeric column: every threshold plus up to ``n_bins`` quantile bins.

    The states of the column are the cells ``(-inf, c_0], (c_0, c_1], ..., (c_m, inf)``
    of the returned cuts ``c``. Every finite threshold is a cut; the ``n_bins - 1``
    inner quantiles of ``x`` are added where they split the data otherwise than the
    thresholds do; when that gives more than ``max_states`` states, fewer quantiles are
    used (the thresholds are always kept).

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        The column's values.
    thresholds : array-like
        Values that must be boundaries (``x <= t`` on one side).
    n_bins : int, default=10
        Number of quantile bins merged in.
    max_states : int, default=200
        Largest number of states (cells).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the quantiles.
    column : str, default="x"
        The column's name, for messages.

    Returns
    -------
    ndarray
        Sorted distinct cuts.

    Raises
    ------
    TableTooLargeError
        When the thresholds alone need more than ``max_states`` states.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._trees_states import refined_cuts
    >>> x = np.arange(100.0)
    >>> refined_cuts(x, [10.5], n_bins=4).tolist()
    [10.5, 24.0, 49.0, 74.0]
    >>> refined_cuts(x, [10.5], n_bins=4, max_states=3).tolist()
    [10.5, 49.0]
    """
    x = np.asarray(x, dtype=float)
    thr = np.unique(np.asarray(thresholds, dtype=float))
    thr = thr[np.isfinite(thr)]
    if len(thr) + 1 > max_states:
        raise TableTooLargeError(
            f"Column {column!r}: the tree has {len(thr):,} distinct thresholds on it, so its "
            f"variable needs {len(thr) + 1:,} states, above max_states={max_states:,}. Use a "
            "shallower tree (max_depth, max_leaf_nodes, min_samples_leaf), bin the column "
            "before the tree (KBinsDiscretizer), or raise max_states."
        )
    xs = np.sort(x)
    for k in range(int(n_bins), 0, -1):
        q = _weighted_quantiles(x, sample_weight, np.arange(1, k) / k) if k > 1 else []
        cuts = _merge_cuts(thr, np.asarray(q, dtype=float), xs)
        if len(cuts) + 1 <= max_states:
            return cuts
    return thr  # pragma: no cover (k = 1 adds no quantile)


class CutBins:
    """Cells ``(c_{k-1}, c_k]`` of sorted cuts per column; the encoding's discretizer.

    Parameters
    ----------
    cuts : list of ndarray
        Sorted cuts of each binned column (in the order of the encoding's ``binned``).

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.verification._trees_states import CutBins
    >>> CutBins([np.array([1.0, 2.0])]).bin_index(np.array([[1.0], [1.5], [3.0]])).ravel()
    array([0, 1, 2])
    """

    def __init__(self, cuts):
        self.cuts = [np.asarray(c, dtype=float) for c in cuts]

    def bin_index(self, X) -> np.ndarray:
        """Cell of every value: the number of cuts strictly below it."""
        X = np.asarray(X, dtype=float)
        out = np.empty(X.shape, dtype=np.int64)
        for j, c in enumerate(self.cuts):
            out[:, j] = np.searchsorted(c, X[:, j], side="left")
        return out

    def cells(self, j: int) -> np.ndarray:
        """Bounds ``(lo, hi]`` of every cell of column ``j``, shape (n_cells, 2)."""
        b = np.concatenate([[-np.inf], self.cuts[j], [np.inf]])
        return np.column_stack([b[:-1], b[1:]])


def _is_numeric(col: pd.Series) -> bool:
    return is_numeric_dtype(col) and not is_bool_dtype(col)


def _category_states(col: pd.Series, known, name) -> list:
    """The encoder's categories, then the other values of ``col`` (sorted, a missing last)."""
    seen = list(pd.unique(col.to_numpy(dtype=object)))
    if isinstance(col.dtype, pd.CategoricalDtype):
        seen += [v for v in col.cat.categories if v not in set(seen)]
    known = list(known)
    unknown = match_categories(np.array(seen, dtype=object), known, name=name) < 0
    return list(known) + sorted_values([v for v, new in zip(seen, unknown) if new])


def _representatives(x: np.ndarray, cells: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """A value inside every cell: the data's mean there, else a point of the cell."""
    k = len(cells)
    mass = np.bincount(codes, minlength=k).astype(float)
    sums = np.bincount(codes, weights=x, minlength=k)
    lo, hi = cells[:, 0], cells[:, 1]
    inside = np.where(np.isfinite(hi), hi, np.nextafter(lo, np.inf))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(mass > 0, sums / np.where(mass > 0, mass, 1.0), inside)
    # round-off may push a mean just outside its cell
    return np.clip(mean, np.nextafter(lo, np.inf), hi)


def _binned_variable(name, col, cuts, sample_weight=None):
    """The cells of a numeric column's cuts (right-closed), a missing state last."""
    x = col.to_numpy(dtype=float, na_value=np.nan)
    x = x[~np.isnan(x)]
    disc = CutBins([cuts])
    cells = disc.cells(0)
    codes = disc.bin_index(x[:, None])[:, 0]
    lo, hi = float(x.min()), float(x.max())
    widths = np.diff(np.concatenate([[lo], np.clip(cuts, lo, hi), [hi]]))
    values, states = _representatives(x, cells, codes), list(range(len(cells)))
    extra = missing_fields(col, sample_weight)
    if extra["missing"]:
        values, states = np.append(values, np.nan), states + [np.nan]
    return Variable(name, "binned", states, np.zeros(len(states)), values=values,
                    widths=widths, edges=np.concatenate([[-np.inf], cuts, [np.inf]]),
                    closed="right", **extra)


def tree_encoding(X: pd.DataFrame, leaves: TreeLeaves, sensitive, *, n_bins=10,
                  max_states=MAX_STATES, sample_weight=None) -> Encoding:
    """Variables of the sensitive columns and the columns a tree reads.

    Order: the sensitive columns, then the columns the tree reads in input order. A
    sensitive column is a ``"values"`` variable (numeric) or a ``"categories"`` one;
    a one-hot encoded column is ``"categories"`` (the encoder's categories first); a
    numeric column with at most ``n_bins`` distinct values is ``"values"`` (one state
    per value); any other numeric column is ``"binned"`` with the cells of
    :func:`refined_cuts`. Contributions are 0 (a tree has no linear weights).

    Parameters
    ----------
    X : DataFrame
        Raw data with the sensitive columns and the columns in ``leaves.read``.
    leaves : TreeLeaves
        Result of :func:`positive_leaves`.
    sensitive : list of str
        Sensitive columns.
    n_bins : int, default=10
        Quantile bins merged with the thresholds of a binned column.
    max_states : int, default=200
        Largest number of states of a binned column.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the quantiles and of the cells' representative values.

    Returns
    -------
    Encoding
        With a :class:`CutBins` discretizer for its binned columns.

    Raises
    ------
    ValueError
        When ``X`` lacks a column or a column read as a number is not numeric.
    TableTooLargeError
        When a column has more thresholds than ``max_states`` allows.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.rules import positive_leaves
    >>> from skfairverify.verification._trees_states import tree_encoding
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 2, 200), "x": rng.normal(size=200)})
    >>> tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, X["x"] > 0.3)
    >>> enc = tree_encoding(X, positive_leaves(tree), ["a"], n_bins=4)
    >>> enc.names, [v.kind for v in enc.variables]
    (['a', 'x'], ['values', 'binned'])
    >>> bool(np.isin(positive_leaves(tree).thresholds["x"], enc.discretizer.cuts[0]).all())
    True
    """
    sensitive = list(sensitive)
    names = sensitive + [c for c in leaves.read if c not in sensitive]
    missing = [c for c in names if c not in X.columns]
    if missing:
        raise ValueError(f"X lacks the column(s) {missing} used by the tree path.")
    variables, binned, cuts = [], [], []
    for c in names:
        col = X[c]
        sens = c in sensitive
        if c in leaves.categories or (sens and not _is_numeric(col)):
            states = _category_states(col, leaves.categories.get(c, []), c)
            variables.append(Variable(c, "categories", states, np.zeros(len(states)), sens,
                                      dtype=col.dtype))
            continue
        if not (_is_numeric(col) or is_bool_dtype(col)):
            if _reads_missingness_only(leaves, c):  # a missing-value indicator of a text
                variables.append(presence_variable(c, col, None, sample_weight))
                continue
            raise ValueError(
                f"Column {c!r} is read by the tree as a number but has dtype {col.dtype}."
            )
        if sens or is_bool_dtype(col) or col.nunique() <= n_bins:
            states = distinct_numbers(col)  # in the column's own type, NaN last
            variables.append(Variable(c, "values", states, np.zeros(len(states)), sens,
                                      values=np.asarray(states, dtype=float), coef=0.0,
                                      **missing_fields(col, sample_weight)))
            continue
        x = col.to_numpy(dtype=float, na_value=np.nan)
        observed = ~np.isnan(x)
        cut = refined_cuts(x[observed], leaves.thresholds.get(c, []), n_bins=n_bins,
                           max_states=max_states,
                           sample_weight=None if sample_weight is None
                           else np.asarray(sample_weight)[observed], column=c)
        variables.append(_binned_variable(c, col, cut, sample_weight))
        binned.append(c)
        cuts.append(cut)
    return Encoding(variables, CutBins(cuts) if binned else None, binned)


def _reads_missingness_only(leaves: TreeLeaves, column: str) -> bool:
    """Whether every region's condition on ``column`` is about its missingness only."""
    full = ((-np.inf, np.inf),)
    return all(isinstance(r.conditions[column], Intervals)
               and r.conditions[column].bounds in ((), full)
               for r in leaves.regions if column in r.conditions)


def _numeric_states(states):
    try:
        return np.array([float(s) for s in states])
    except (TypeError, ValueError):
        return None


def tree_encoding_from_network(network, leaves: TreeLeaves, sensitive) -> Encoding:
    """Variables of a user-given network for the tree path (state names carry values).

    A variable whose column the tree reads as a number must have numeric state names
    (the value each state stands for, one state per value: ``"values"``); a one-hot
    encoded column and any variable with non-numeric state names is ``"categories"``.

    Parameters
    ----------
    network : BayesNet
        Variables named after the columns.
    leaves : TreeLeaves
        Result of :func:`positive_leaves`.
    sensitive : list of str
        Sensitive columns.

    Returns
    -------
    Encoding
        One variable per variable of ``network``, in its order.

    Raises
    ------
    ValueError
        When the network lacks a sensitive column or a column the tree reads, or the
        states of a column read as a number are not numbers.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.s3p import BayesNet
    >>> from skfairverify.rules import positive_leaves
    >>> from skfairverify.verification._trees_states import tree_encoding_from_network
    >>> X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    >>> leaves = positive_leaves(DecisionTreeClassifier().fit(X, [0, 0, 1, 1]))
    >>> net = BayesNet.independent([[.5, .5], [.25] * 4], names=["a", "x"],
    ...                            state_names=[["F", "M"], [0, 1, 2, 3]])
    >>> [v.kind for v in tree_encoding_from_network(net, leaves, ["a"]).variables]
    ['categories', 'values']
    """
    check_network_columns(network, list(sensitive) + list(leaves.read))
    variables = []
    for i, name in enumerate(network.names):
        states = list(network.state_names[i])
        sens = name in sensitive
        vals = _numeric_states(states)
        numeric_read = name in leaves.read and name not in leaves.categories
        if numeric_read and vals is None:
            raise ValueError(
                f"Variable {name!r} of the given network is read by the tree as a number, so "
                f"its state names must be numbers (the value each state stands for); got "
                f"{states[:10]}."
            )
        if numeric_read or (vals is not None and name not in leaves.categories and not sens):
            variables.append(Variable(name, "values", states, np.zeros(len(states)), sens,
                                      values=vals, named_states=True))
        else:
            variables.append(Variable(name, "categories", states, np.zeros(len(states)),
                                      sens, named_states=True))
    return Encoding(variables)


# ------------------------------------------------------------------------ indicators
@dataclass(frozen=True)
class StateIndicators:
    """Which states of each variable every positive region allows.

    Attributes
    ----------
    n_regions : int
        Number of positive regions (leaves).
    by_variable : dict of int to ndarray of shape (n_regions, cardinality)
        For every variable some region constrains: 1.0 where the region allows the
        state, 0.0 elsewhere. A variable absent is unconstrained in every region.
    """

    n_regions: int
    by_variable: dict


def _allowed_categories(cond: CategorySet, states, name) -> np.ndarray:
    return cond.contains(np.array(list(states), dtype=object), name=name).astype(float)


def _allowed_values(cond: Intervals, var: Variable) -> np.ndarray:
    if var.values is not None:
        return cond.contains(var.values).astype(float)
    try:
        return cond.contains([float(s) for s in var.states]).astype(float)
    except (TypeError, ValueError):
        raise ValueError(
            f"Variable {var.name!r} is read by the tree as a number, but its states "
            f"{list(var.states)[:10]} are not numbers."
        ) from None


def _allowed_cells(cond: Intervals, cells: np.ndarray, name: str,
                   missing: bool = False) -> np.ndarray:
    """Whether every cell is allowed (and, after them, the missing state)."""
    out = np.empty(len(cells) + int(missing))
    if missing:
        out[-1] = float(cond.missing)
    for k, (lo, hi) in enumerate(cells):
        inside = cond.covers(lo, hi)
        if inside is None:
            raise ValueError(
                f"State {k} ({lo}, {hi}] of variable {name!r} straddles a threshold of the "
                "tree; the states of a column read by the tree must have every threshold "
                "as a boundary (build the variables with tree_encoding)."
            )
        out[k] = float(inside)
    return out


def _allowed(cond, var: Variable, encoding: Encoding) -> np.ndarray:
    if var.kind == "presence":  # states: observed, missing
        return np.array([float(bool(cond.bounds)), float(cond.missing)])
    if isinstance(cond, CategorySet):
        return _allowed_categories(cond, var.states, var.name)
    if var.kind == "binned":
        disc = encoding.discretizer
        if not isinstance(disc, CutBins):
            raise ValueError(
                f"Variable {var.name!r} is binned by {type(disc).__name__}, whose bins need "
                "not have the tree's thresholds as boundaries; build the variables with "
                "tree_encoding."
            )
        return _allowed_cells(cond, disc.cells(encoding.binned.index(var.name)), var.name,
                              var.missing)
    return _allowed_values(cond, var)


def state_indicators(encoding: Encoding, leaves: TreeLeaves) -> StateIndicators:
    """Indicator of the allowed states of every variable in every positive region.

    Parameters
    ----------
    encoding : Encoding
        Variables named after the raw columns (:func:`tree_encoding`, or any with
        ``"values"`` / ``"categories"`` variables for the columns the tree reads).
    leaves : TreeLeaves
        Result of :func:`positive_leaves`.

    Returns
    -------
    StateIndicators

    Raises
    ------
    ValueError
        When a column the tree reads has no variable, or a binned state straddles a
        threshold.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skfairverify.rules import positive_leaves
    >>> from skfairverify.verification._trees_states import state_indicators, tree_encoding
    >>> X = pd.DataFrame({"a": [0, 0, 1, 1], "x": [0.0, 1.0, 2.0, 3.0]})
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1])
    >>> leaves = positive_leaves(tree)
    >>> ind = state_indicators(tree_encoding(X, leaves, ["a"]), leaves)
    >>> ind.n_regions, {k: v.tolist() for k, v in ind.by_variable.items()}
    (1, {1: [[0.0, 0.0, 1.0, 1.0]]})
    """
    names = encoding.names
    by_variable: dict[int, np.ndarray] = {}
    for r, region in enumerate(leaves.regions):
        for col, cond in region.conditions.items():
            if col not in names:
                raise ValueError(
                    f"The tree reads column {col!r}, which is not a variable of the encoding "
                    f"(variables: {names})."
                )
            i = names.index(col)
            var = encoding.variables[i]
            if i not in by_variable:
                by_variable[i] = np.ones((len(leaves.regions), var.cardinality))
            by_variable[i][r] = _allowed(cond, var, encoding)
    return StateIndicators(len(leaves.regions), by_variable)
