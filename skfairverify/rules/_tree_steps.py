"""The tree reader of each pipeline step: features as per-column maps of the raw inputs.

Every feature a tree sees is kept as a map of one raw column: ``NumericFeature`` (increasing
affine operations on the value, in float64 as scikit-learn computes them) or ``CodedFeature``
(a value per part of the column: a bin, a category, missing or not), so that a split
``feature <= t`` is a set of the raw column's values (``_regions``). :func:`push`
pushes the features through one fitted step, dispatching on the step's row of
:data:`~skfairverify.rules._steps.PIPELINE_STEPS`.

A condition ``x < e`` (a bin edge of ``KBinsDiscretizer``, whose value ``e`` belongs to
the upper bin) is ``x <= e'`` with ``e'`` the float64 just below ``e``, which is the
same set of float64 values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.impute import MissingIndicator
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler
from sklearn.utils.validation import check_is_fitted

from ..utils._categories import match_categories
from ._regions import _INF, CategorySet, Intervals
from ._steps import (
    check_missing_marker,
    column_parts,
    is_identity,
    py_scalar,
    step_key,
    supported_steps,
    unwrap_frozen,
)

__all__ = ["CodedFeature", "NumericFeature", "push"]


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
class NumericFeature:
    """A feature computed from the raw numeric column by increasing affine ``ops``.

    ``fill``: the feature's value when the raw value is missing (an imputer put it
    there); None while a missing value is still NaN.
    """

    column: str
    ops: tuple = ()
    fill: object = None

    def affine(self, ops) -> NumericFeature:
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
class CodedFeature:
    """A feature taking the value ``ops(codes[k])`` when ``x`` is in ``parts[k]``.

    An ordinal bin code (``parts`` the bins), a bin or category indicator (``parts``
    = outside, inside), an ordinal encoder's category code, possibly scaled afterwards
    by affine ``ops``. ``codes`` are ``0, 1, ...`` when None; a NaN code is a missing
    value, which goes where the node sends missing values.
    """

    column: str
    parts: tuple
    ops: tuple = ()
    codes: tuple | None = None

    def affine(self, ops) -> CodedFeature:
        return replace(self, ops=self.ops + tuple(ops))

    is_raw = False

    def left(self, t: float, missing_left: bool = False):
        """Values of ``x`` that the tree sends left (``float32(feature) <= t``).

        The parts say where a missing raw value falls; one coded NaN (an ordinal
        encoder's ``encoded_missing_value``) goes left when ``missing_left``.
        """
        out = self.parts[0] & ~self.parts[0]  # the empty set of the column's kind
        codes = range(len(self.parts)) if self.codes is None else self.codes
        for code, part in zip(codes, self.parts):
            value = _as_float32(_apply(self.ops, float(code)))
            if (missing_left if np.isnan(value) else value <= t):
                out = out | part
        return out


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
    check_is_fitted(step)
    ops = _scaler_ops(step, len(feats), label)
    return [f.affine(ops[j]) for j, f in enumerate(feats)]


def _binning(step, feats, label, edges, onehot):
    cast = _as_float32 if getattr(step, "dtype", None) == np.float32 else float
    out = []
    for j, f in enumerate(feats):
        if not isinstance(f, NumericFeature):
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
            out += [CodedFeature(f.column, (~b, b)) for b in bins]
        else:
            out.append(CodedFeature(f.column, tuple(bins)))
    return out


def _indicators(feats, features, label) -> list:
    """Missing-value indicators of the features ``features``: 1 where the raw value is missing.

    An indicator of a feature whose missing values were already imputed is always 0.
    """
    out = []
    for j in features:
        f = feats[int(j)]
        if not isinstance(f, NumericFeature):
            raise TypeError(
                f"Cannot read step {label!r}: it indicates the missing values of a feature "
                "that is not an affine map of a raw column."
            )
        observed = Intervals(((-_INF, _INF),), f.fill is not None)
        out.append(CodedFeature(f.column, (observed, ~observed)))
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
        if isinstance(f, NumericFeature) and f.fill is None:
            f = replace(f, fill=py_scalar(stats[j]))
        out.append(f)
    if step.add_indicator:
        out += _indicators(feats, step.indicator_.features_, label)
    return out


def _one_hot(enc, feats, label):
    check_is_fitted(enc)
    if getattr(enc, "infrequent_categories_", None) is not None and any(
        c is not None for c in enc.infrequent_categories_
    ):
        raise TypeError(f"Cannot read step {label!r}: OneHotEncoder with infrequent categories.")
    out = []
    drop_idx = getattr(enc, "drop_idx_", None)
    for j, cats in enumerate(enc.categories_):
        f = feats[j]
        if not (isinstance(f, NumericFeature) and f.is_raw):
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
            out.append(CodedFeature(f.column, (~inside, inside)))
    return out


def _ordinal_encoder(enc, feats, label):
    """OrdinalEncoder on raw columns: category ``k`` of ``categories_`` is the code ``k``.

    A missing value seen in ``fit`` is ``encoded_missing_value`` (NaN: routed as the
    node routes missing values); a category the encoder does not know is
    ``unknown_value`` with ``handle_unknown="use_encoded_value"`` (with ``"error"`` the
    model refuses it).
    """
    check_is_fitted(enc)
    if getattr(enc, "infrequent_categories_", None) is not None and any(
        c is not None for c in enc.infrequent_categories_
    ):
        raise TypeError(f"Cannot read step {label!r}: OrdinalEncoder with infrequent "
                        "categories.")
    unknown = (float(enc.unknown_value) if enc.handle_unknown == "use_encoded_value"
               else None)
    return [_ordinal_feature(feats[j], [_category(v) for v in cats],
                             float(enc.encoded_missing_value), unknown, label)
            for j, cats in enumerate(enc.categories_)]


def _ordinal_feature(f, values, missing_code, unknown_code, label) -> CodedFeature:
    """One ordinal-encoded raw column: a part per category, its code, the unknown ones."""
    if not (isinstance(f, NumericFeature) and f.is_raw):
        raise TypeError(f"Cannot read step {label!r}: an ordinal encoder is read only when "
                        "it is applied to a raw input column.")
    filled = None
    if f.fill is not None:  # an imputed missing value is the fill's category
        filled = next((v for v in values if _is_category(f.fill, v)), None)
    universe = frozenset(values) | ({np.nan} if filled is not None else set())
    parts, codes = [], []
    for k, v in enumerate(values):
        members = {v} | ({np.nan} if filled is not None and filled is v else set())
        parts.append(CategorySet(frozenset(members), False, universe))
        codes.append(missing_code if v is np.nan else float(k))
    if unknown_code is not None:
        parts.append(CategorySet(frozenset(), True, universe))
        codes.append(unknown_code)
    return CodedFeature(f.column, tuple(parts), codes=tuple(codes))


def _category(v):
    """An encoder's category as a Python value; every missing category the one ``np.nan``.

    The sets of categories compare their members by identity first, so that the NaN
    of one encoder and of another are the same member.
    """
    return np.nan if _is_missing(v) else py_scalar(v)


def _is_missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _is_category(value, category) -> bool:
    """Whether ``value`` is ``category`` under the package's one matching rule."""
    return bool(match_categories(np.array([value], dtype=object), [category],
                                 name="category")[0] == 0)


def _column_transformer(ct, feats, label):
    out = []
    for trans, idx, part_label in column_parts(ct, label):
        out += push(trans, [feats[i] for i in idx], part_label)
    return out


def _pipeline(step, feats, label):
    for name, sub in step.steps:
        feats = push(sub, feats, f"{label}/{name}")
    return feats


def _function_transformer(step, feats, label):
    if step.func is None:
        return feats  # identity
    raise _unsupported(step, label)


def _kbins(step, feats, label):
    check_is_fitted(step)
    return _binning(step, feats, label, step.bin_edges_, step.encode != "ordinal")


def _binning_discretizer(step, feats, label):
    check_is_fitted(step)
    return _binning(step, feats, label, step.bin_edges_, True)


def _unsupported(step, label) -> TypeError:
    return TypeError(
        f"Cannot read step {label!r} ({type(step).__name__}) as a per-column map of the raw "
        f"inputs for the exact tree path; supported: {supported_steps('tree')}."
    )


def push(step, feats, label):
    """The features after the fitted transformer ``step``."""
    step = unwrap_frozen(step)
    if is_identity(step):
        return feats
    read = _READERS.get(step_key(step))
    if read is None:
        raise _unsupported(step, label)
    return read(step, feats, label)


#: How this reader reads each row of PIPELINE_STEPS that it reads (see ``_steps``).
_READERS = {
    "Pipeline": _pipeline,
    "ColumnTransformer": _column_transformer,
    "StandardScaler": _affine_scaler,
    "MinMaxScaler": _affine_scaler,
    "MaxAbsScaler": _affine_scaler,
    "RobustScaler": _affine_scaler,
    "OneHotEncoder": _one_hot,
    "OrdinalEncoder": _ordinal_encoder,
    "SimpleImputer": _imputer,
    "MissingIndicator": _imputer,
    "KBinsDiscretizer": _kbins,
    "BinningDiscretizer": _binning_discretizer,
    "FunctionTransformer": _function_transformer,
}
