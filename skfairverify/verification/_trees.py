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

:func:`positive_leaves` composes the steps and walks the tree; the exact probability
of the leaves under a Bayesian network is in :mod:`._trees_exact`, the variables whose
states have every threshold as a boundary in :mod:`._trees_states`.

All intervals are left-open and right-closed, ``(lo, hi]``, as scikit-learn's
``x <= t`` goes left. A condition ``x < e`` (a bin edge of ``KBinsDiscretizer``, whose
value ``e`` belongs to the upper bin) is ``x <= e'`` with ``e'`` the float64 just
below ``e``, which is the same set of float64 values.

The tree compares its input in float32 (scikit-learn casts ``X``); the regions are
stated in float64 on the raw values, so a value within float32 round-off of a
threshold may be placed on the other side. The thresholds of a fitted tree lie
midway between training values, far from them in that sense.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from .._linear import check_missing_marker
from ..preprocessing import BinningDiscretizer
from ..utils._categories import match_categories

__all__ = [
    "CategorySet",
    "Intervals",
    "LeafRegion",
    "TreeLeaves",
    "positive_leaves",
    "is_tree_model",
]

_INF = float("inf")
_SUPPORTED = (
    "Pipeline, ColumnTransformer, StandardScaler, MinMaxScaler (clip=False), MaxAbsScaler, "
    "RobustScaler, KBinsDiscretizer, BinningDiscretizer, OneHotEncoder (on raw columns), "
    "SimpleImputer, MissingIndicator, FunctionTransformer() (identity), 'passthrough', "
    "'drop' and "
    "FrozenEstimator"
)


# ------------------------------------------------------------------------ constraints
@dataclass(frozen=True)
class Intervals:
    """A union of disjoint intervals ``(lo, hi]`` of a numeric column, sorted.

    ``missing`` says whether a missing value is in the set: the side of a split that a
    missing value takes (the imputed value's side behind an imputer, else the tree's
    own ``missing_go_to_left``).

    Examples
    --------
    >>> from skfairverify.verification._trees import Intervals
    >>> a = Intervals(((-float("inf"), 2.0),))
    >>> (~a).bounds
    ((2.0, inf),)
    >>> (a & Intervals(((1.0, 5.0),))).bounds
    ((1.0, 2.0),)
    >>> a.contains([1.0, 2.0, 2.5]).tolist()
    [True, True, False]
    """

    bounds: tuple[tuple[float, float], ...]
    missing: bool = False  # whether a missing value (NaN) is in the set

    @classmethod
    def everything(cls) -> Intervals:
        return cls(((-_INF, _INF),), True)

    @property
    def is_empty(self) -> bool:
        return not self.bounds and not self.missing

    def __and__(self, other: Intervals) -> Intervals:
        out = []
        for lo, hi in self.bounds:
            for lo2, hi2 in other.bounds:
                a, b = max(lo, lo2), min(hi, hi2)
                if a < b:
                    out.append((a, b))
        return Intervals(tuple(sorted(out)), self.missing and other.missing)

    def __or__(self, other: Intervals) -> Intervals:
        return ~((~self) & (~other))

    def __invert__(self) -> Intervals:
        out, start = [], -_INF
        for lo, hi in self.bounds:
            if lo > start:
                out.append((start, lo))
            start = hi
        if start < _INF:
            out.append((start, _INF))
        return Intervals(tuple(out), not self.missing)

    def contains(self, x) -> np.ndarray:
        """Whether each value of ``x`` lies in the union (a missing one: ``missing``)."""
        x = np.asarray(x, dtype=float)
        out = np.zeros(x.shape, dtype=bool)
        for lo, hi in self.bounds:
            out |= (x > lo) & (x <= hi)
        return np.where(np.isnan(x), self.missing, out)

    def covers(self, lo: float, hi: float) -> bool | None:
        """Whether the cell ``(lo, hi]`` is inside (True), outside (False) or neither (None)."""
        inside = any(a <= lo and hi <= b for a, b in self.bounds)
        if inside:
            return True
        overlaps = any(max(a, lo) < min(b, hi) for a, b in self.bounds)
        return None if overlaps else False

    def finite_bounds(self) -> set[float]:
        return {v for pair in self.bounds for v in pair if np.isfinite(v)}


@dataclass(frozen=True)
class CategorySet:
    """A set of categories of a one-hot encoded column.

    ``values`` are allowed categories among the encoder's ``universe``; ``others``
    says whether a category the encoder does not know (all indicators 0 with
    ``handle_unknown="ignore"``) is allowed.

    Examples
    --------
    >>> from skfairverify.verification._trees import CategorySet
    >>> s = CategorySet(frozenset({"a"}), False, frozenset({"a", "b", "c"}))
    >>> sorted((~s).values), (~s).others
    (['b', 'c'], True)
    >>> s.contains(["a", "b", "z"]).tolist()
    [True, False, False]
    """

    values: frozenset
    others: bool
    universe: frozenset = field(repr=False)

    @classmethod
    def everything(cls, universe) -> CategorySet:
        universe = frozenset(universe)
        return cls(universe, True, universe)

    @property
    def is_empty(self) -> bool:
        return not self.values and not self.others

    def __and__(self, other: CategorySet) -> CategorySet:
        return CategorySet(self.values & other.values, self.others and other.others,
                           self.universe)

    def __or__(self, other: CategorySet) -> CategorySet:
        return CategorySet(self.values | other.values, self.others or other.others,
                           self.universe)

    def __invert__(self) -> CategorySet:
        return CategorySet(self.universe - self.values, not self.others, self.universe)

    def contains(self, x, name="column") -> np.ndarray:
        """Whether each value of ``x`` is in the set.

        The package's one matching rule: numbers match numerically, strings only
        strings (see ``utils._categories``).
        """
        cats = list(self.universe)
        allowed = np.array([c in self.values for c in cats] + [self.others], dtype=bool)
        return allowed[match_categories(x, cats, name=name)]  # -1: not a known category

    def contains_one(self, value, name="column") -> bool:
        """Whether one category is in the set."""
        return bool(self.contains(np.array([value], dtype=object), name)[0])


# ------------------------------------------------------------------------ features
def _apply(ops, x: float) -> float:
    """Apply scikit-learn's float64 operations ``ops`` (in order) to ``x``."""
    x = np.float64(x)
    for op, v in ops:
        if op == "sub":
            x = x - v
        elif op == "div":
            x = x / v
        elif op == "mul":
            x = x * v
        else:
            x = x + v
    return float(x)


def _invert(ops, y: float) -> float:
    """Approximate inverse of :func:`_apply` (a starting point for :func:`_boundary`)."""
    inverse = {"sub": np.add, "div": np.multiply, "mul": np.divide, "add": np.subtract}
    y = np.float64(y)
    for op, v in reversed(ops):
        y = inverse[op](y, v)
    return float(y)


def _ordinal(x: float) -> int:
    """Integer rank of a float64 (monotone, consecutive floats have consecutive ranks)."""
    bits = int(np.float64(x).view(np.int64))
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def _from_ordinal(k: int) -> float:
    bits = k if k >= 0 else (-k) | -0x8000000000000000
    return float(np.int64(bits).view(np.float64))


_MAX_ORDINAL = _ordinal(_INF)


def _boundary(holds, guess: float) -> float:
    """Largest float64 ``x`` where the non-increasing predicate ``holds(x)`` is True.

    ``-inf`` when it holds nowhere below ``+inf``, ``+inf`` when it holds everywhere.
    Galloping from ``guess`` then bisection on the float64 ranks: exact.
    """
    if not np.isfinite(guess):
        guess = 0.0
    lo = hi = _ordinal(guess)
    step = 1
    if holds(guess):
        while hi < _MAX_ORDINAL and holds(_from_ordinal(hi)):
            lo, hi = hi, min(hi + step, _MAX_ORDINAL)
            step *= 2
        if hi == _MAX_ORDINAL and holds(_INF):
            return _INF
    else:
        while lo > -_MAX_ORDINAL and not holds(_from_ordinal(lo)):
            hi, lo = lo, max(lo - step, -_MAX_ORDINAL)
            step *= 2
        if lo == -_MAX_ORDINAL and not holds(-_INF):
            return -_INF
    while hi - lo > 1:  # holds(lo), not holds(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(_from_ordinal(mid)) else (lo, mid)
    return _from_ordinal(lo)


def _as_float32(x: float) -> float:
    """The tree's view of a value: scikit-learn casts its input to float32."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


@dataclass(frozen=True)
class _Numeric:
    """A feature computed from the raw numeric column by increasing affine ``ops``.

    ``fill``: the feature's value when the raw value is missing (an imputer put it
    there); None while a missing value is still NaN.
    """

    column: str
    ops: tuple = ()
    fill: object = None

    def affine(self, ops) -> _Numeric:
        fill = None if self.fill is None else _apply(tuple(ops), float(self.fill))
        return replace(self, ops=self.ops + tuple(ops), fill=fill)

    @property
    def is_raw(self) -> bool:
        return not self.ops

    def below(self, edge: float, cast=float) -> float:
        """Raw cut ``c``: ``cast(feature) < edge  <=>  x <= c`` (a bin edge)."""
        return _boundary(lambda x: cast(_apply(self.ops, x)) < edge, _invert(self.ops, edge))

    def left(self, t: float, missing_left: bool = False) -> Intervals:
        """Values of ``x`` that the tree sends left (``float32(feature) <= t``).

        A missing value goes left when its imputed value does, or (still NaN) when
        the node sends missing values left (``missing_left``).
        """
        c = _boundary(lambda x: _as_float32(_apply(self.ops, x)) <= t, _invert(self.ops, t))
        missing = missing_left if self.fill is None else _as_float32(float(self.fill)) <= t
        return Intervals(((-_INF, c),) if c > -_INF else (), bool(missing))


@dataclass(frozen=True)
class _Coded:
    """A feature taking the value ``ops(k)`` when ``x`` is in ``parts[k]``.

    An ordinal bin code (``parts`` the bins), a bin or category indicator (``parts``
    = outside, inside), possibly scaled afterwards by affine ``ops``.
    """

    column: str
    parts: tuple
    ops: tuple = ()

    def affine(self, ops) -> _Coded:
        return replace(self, ops=self.ops + tuple(ops))

    is_raw = False

    def left(self, t: float, missing_left: bool = False):
        """Values of ``x`` that the tree sends left (``float32(feature) <= t``).

        A coded feature is never missing (its parts say where a missing raw value
        falls), so ``missing_left`` does not apply.
        """
        out = self.parts[0] & ~self.parts[0]  # the empty set of the column's kind
        for k, part in enumerate(self.parts):
            if _as_float32(_apply(self.ops, float(k))) <= t:
                out = out | part
        return out


# ------------------------------------------------------------------------ steps
def _unwrap(est):
    while isinstance(est, FrozenEstimator):
        est = est.estimator
    return est


def _split_final(estimator):
    """Return (preprocessing steps as (name, step) list, final estimator)."""
    est = _unwrap(estimator)
    steps = []
    while isinstance(est, Pipeline):
        *pre, (_, last) = est.steps
        steps.extend(pre)
        est = _unwrap(last)
    return steps, est


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
    >>> from skfairverify.verification._trees import is_tree_model
    >>> is_tree_model(make_pipeline(StandardScaler(), DecisionTreeClassifier()))
    True
    """
    return isinstance(_split_final(estimator)[1], DecisionTreeClassifier)


def _scaler_ops(step, n: int, label: str) -> list:
    """Per feature, the float64 operations of the fitted scaler's ``transform``, in order."""
    if isinstance(step, StandardScaler):
        pairs = [("sub", step.mean_ if step.with_mean else None),
                 ("div", step.scale_ if step.with_std else None)]
    elif isinstance(step, MinMaxScaler):
        if step.clip:
            raise TypeError(f"Cannot read step {label!r}: MinMaxScaler(clip=True) is not affine.")
        pairs = [("mul", step.scale_), ("add", step.min_)]
    elif isinstance(step, MaxAbsScaler):
        pairs = [("div", step.scale_)]
    else:  # RobustScaler
        pairs = [("sub", step.center_ if step.with_centering else None),
                 ("div", step.scale_ if step.with_scaling else None)]
    pairs = [(op, np.broadcast_to(np.asarray(v, dtype=float), (n,))) for op, v in pairs
             if v is not None]
    for op, v in pairs:
        if op in ("div", "mul") and not np.all(np.isfinite(v) & (v > 0)):
            raise TypeError(f"Cannot read step {label!r}: a feature is not increasing.")
    return [[(op, float(v[j])) for op, v in pairs] for j in range(n)]


def _affine_scaler(step, feats, label):
    ops = _scaler_ops(step, len(feats), label)
    return [f.affine(ops[j]) for j, f in enumerate(feats)]


def _binning(step, feats, label, edges, onehot):
    cast = _as_float32 if getattr(step, "dtype", None) == np.float32 else float
    out = []
    for j, f in enumerate(feats):
        if not isinstance(f, _Numeric):
            raise TypeError(
                f"Cannot read step {label!r}: it bins a feature that is not an affine map of "
                "a raw numeric column (an indicator or an already binned feature)."
            )
        e = np.asarray(edges[j], dtype=float)
        inner = [f.below(v, cast) for v in e[1:-1]]
        bounds = [-_INF, *inner, _INF]
        # the bin of an imputed value, as the binning computes it
        filled = (-1 if f.fill is None else
                  int(np.searchsorted(e[1:-1], cast(float(f.fill)), side="right")))
        bins = [Intervals(((bounds[k], bounds[k + 1]),), k == filled)
                for k in range(len(bounds) - 1)]
        if onehot:
            out += [_Coded(f.column, (~b, b)) for b in bins]
        else:
            out.append(_Coded(f.column, tuple(bins)))
    return out


def _indicators(feats, features, label) -> list:
    """Missing-value indicators of the features ``features``: 1 where the raw value is missing.

    An indicator of a feature whose missing values were already imputed is always 0.
    """
    out = []
    for j in features:
        f = feats[int(j)]
        if not isinstance(f, _Numeric):
            raise TypeError(
                f"Cannot read step {label!r}: it indicates the missing values of a feature "
                "that is not an affine map of a raw column."
            )
        observed = Intervals(((-_INF, _INF),), f.fill is not None)
        out.append(_Coded(f.column, (observed, ~observed)))
    return out


def _imputer(step, feats, label) -> list:
    """SimpleImputer: a missing value takes the imputed value; MissingIndicator.

    The imputed value of a feature is its value for every later step (scalers map it,
    a binning puts it in its bin, a one-hot encoder in its category); features without
    any observed value in fit are dropped, as scikit-learn does.
    """
    check_is_fitted(step)
    check_missing_marker(step, label)
    if isinstance(step, MissingIndicator):
        return _indicators(feats, step.features_, label)
    stats = np.asarray(step.statistics_, dtype=object)
    keep_all = step.strategy == "constant" or getattr(step, "keep_empty_features", False)
    out = []
    for j, f in enumerate(feats):
        if not (keep_all or not _is_missing(stats[j])):
            continue
        if isinstance(f, _Numeric) and f.fill is None:
            f = replace(f, fill=_py(stats[j]))
        out.append(f)
    if step.add_indicator:
        out += _indicators(feats, step.indicator_.features_, label)
    return out


def _one_hot(enc, feats, label):
    if getattr(enc, "infrequent_categories_", None) is not None and any(
        c is not None for c in enc.infrequent_categories_
    ):
        raise TypeError(f"Cannot read step {label!r}: OneHotEncoder with infrequent categories.")
    out = []
    drop_idx = getattr(enc, "drop_idx_", None)
    for j, cats in enumerate(enc.categories_):
        f = feats[j]
        if not (isinstance(f, _Numeric) and f.is_raw):
            raise TypeError(
                f"Cannot read step {label!r}: a one-hot encoder is read only when it is "
                "applied to a raw input column."
            )
        values = [_category(v) for v in cats]
        filled = None
        if f.fill is not None:  # an imputed missing value is the fill's category
            filled = next((v for v in values if _is_category(f.fill, v)), None)
        universe = frozenset(values) | ({np.nan} if filled is not None else set())
        for k, v in enumerate(values):
            if drop_idx is not None and drop_idx[j] is not None and k == drop_idx[j]:
                continue
            members = {v} | ({np.nan} if filled is not None and filled is v else set())
            inside = CategorySet(frozenset(members), False, universe)
            out.append(_Coded(f.column, (~inside, inside)))
    return out


def _category(v):
    """An encoder's category as a Python value; every missing category the one ``np.nan``.

    The sets of categories compare their members by identity first, so that the NaN
    of one encoder and of another are the same member.
    """
    return np.nan if _is_missing(v) else _py(v)


def _is_missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _is_category(value, category) -> bool:
    """Whether ``value`` is ``category`` under the package's one matching rule."""
    return bool(match_categories(np.array([value], dtype=object), [category],
                                 name="category")[0] == 0)


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _column_transformer(ct, feats, label):
    check_is_fitted(ct)
    indices = ct._transformer_to_input_indices  # resolved input columns of each transformer
    out = []
    for name, trans, _ in ct.transformers_:
        idx = list(indices.get(name, []))
        if (isinstance(trans, str) and trans == "drop") or not idx:
            continue
        out += _push(trans, [feats[i] for i in idx], f"{label}/{name}")
    return out


def _push(step, feats, label):
    """The features after the fitted transformer ``step``."""
    step = _unwrap(step)
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return feats
    if isinstance(step, Pipeline):
        for name, sub in step.steps:
            feats = _push(sub, feats, f"{label}/{name}")
        return feats
    if isinstance(step, ColumnTransformer):
        return _column_transformer(step, feats, label)
    if isinstance(step, (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler)):
        check_is_fitted(step)
        return _affine_scaler(step, feats, label)
    if isinstance(step, FunctionTransformer) and step.func is None:
        return feats  # identity
    if isinstance(step, (SimpleImputer, MissingIndicator)):
        return _imputer(step, feats, label)
    if isinstance(step, KBinsDiscretizer):
        check_is_fitted(step)
        return _binning(step, feats, label, step.bin_edges_, step.encode != "ordinal")
    if isinstance(step, BinningDiscretizer):
        check_is_fitted(step)
        return _binning(step, feats, label, step.bin_edges_, True)
    if isinstance(step, OneHotEncoder):
        check_is_fitted(step)
        return _one_hot(step, feats, label)
    raise TypeError(
        f"Cannot read step {label!r} ({type(step).__name__}) as a per-column map of the raw "
        f"inputs for the exact tree path; supported: {_SUPPORTED}."
    )


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
    for obj in (_unwrap(estimator), final):
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
        n = getattr(_unwrap(estimator), "n_features_in_", None)
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
        cats = (sorted(f.parts[0].universe, key=str) if isinstance(f, _Coded)
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
    >>> from skfairverify.verification._trees import positive_leaves
    >>> X = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    >>> model = make_pipeline(StandardScaler(), DecisionTreeClassifier()).fit(X, [0, 0, 1, 1])
    >>> leaves = positive_leaves(model)
    >>> leaves.regions[0].conditions["x"].bounds
    ((2.5, inf),)
    >>> leaves.thresholds["x"].tolist()
    [2.5]
    """
    pre, final = _split_final(estimator)
    _check_tree(final)
    names = _input_names(estimator, final, columns)
    feats = [_Numeric(c) for c in names]
    for name, step in pre:
        feats = _push(step, feats, name if name is not None else type(step).__name__)
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
