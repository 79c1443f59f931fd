"""The linear reader of each pipeline step: its output features as affine maps of raw terms.

``features = A @ terms + b``, the terms being raw numeric columns ``("num", col)``,
category indicators ``("cat", col, value)``, bin indicators ``("bin", col, k)`` and
missing-value indicators ``("miss", col)``. :func:`transform` pushes the representation
through one fitted step, dispatching on the step's row of
:data:`~skfairverify.rules._steps.PIPELINE_STEPS`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)
from sklearn.utils.validation import check_is_fitted

from ._steps import (
    check_missing_marker,
    column_parts,
    is_identity,
    py_scalar,
    step_key,
    supported_steps,
    unwrap_frozen,
)

__all__ = ["Affine", "transform"]


class Affine:
    """Output features of a step as affine maps of raw terms."""

    def __init__(self, A: dict[int, dict[tuple, float]], b: np.ndarray, read: set[str],
                 bins: dict | None = None, fills: dict | None = None):
        self.rows = A  # feature index -> {term: coefficient}
        self.b = np.asarray(b, dtype=float)
        self.read = read
        self.bins = {} if bins is None else dict(bins)  # raw column -> bin edges
        # raw column -> the raw value an imputer put in place of its missing values
        self.fills = {} if fills is None else dict(fills)

    @property
    def n_features(self) -> int:
        return len(self.b)

    @classmethod
    def identity(cls, names: list[str]) -> Affine:
        rows = {j: {("num", c): 1.0} for j, c in enumerate(names)}
        return cls(rows, np.zeros(len(names)), set(names))

    def select(self, idx) -> Affine:
        idx = list(idx)
        rows = {k: dict(self.rows[j]) for k, j in enumerate(idx)}
        read: set[str] = set()
        for j in idx:
            read |= {t[1] for t in self.rows[j]}
        return Affine(rows, self.b[idx], read, self.bins, self.fills)

    def scale_shift(self, scale, shift) -> Affine:
        """Return ``self * scale + shift`` element-wise per feature."""
        scale = np.broadcast_to(np.asarray(scale, dtype=float), self.b.shape)
        shift = np.broadcast_to(np.asarray(shift, dtype=float), self.b.shape)
        rows = {j: {t: w * scale[j] for t, w in r.items()} for j, r in self.rows.items()}
        return Affine(rows, self.b * scale + shift, set(self.read), self.bins, self.fills)

    def raw_column(self, j: int, step_name: str) -> str:
        r = self.rows[j]
        if self.b[j] != 0 or len(r) != 1:
            raise TypeError(
                f"Step {step_name!r} encodes a transformed feature; an encoder can only be "
                "read when it is applied to a raw input column."
            )
        (term, w), = r.items()
        if term[0] != "num" or w != 1.0:
            raise TypeError(
                f"Step {step_name!r} encodes a transformed feature; an encoder can only be "
                "read when it is applied to a raw input column."
            )
        return term[1]

    @staticmethod
    def concat(parts: list[Affine], label: str = "") -> Affine:
        rows: dict[int, dict[tuple, float]] = {}
        bs = []
        read: set[str] = set()
        bins: dict = {}
        k = 0
        for p in parts:
            for j in range(p.n_features):
                rows[k] = p.rows[j]
                k += 1
            bs.append(p.b)
            read |= p.read
            for col, edges in p.bins.items():
                _add_bins(bins, col, edges, label)
        b = np.concatenate(bs) if bs else np.zeros(0)
        return Affine(rows, b, read, bins, _merge_fills(parts, label))


def _add_bins(bins: dict, col: str, edges, label: str) -> None:
    """Record the bin edges of a raw column; two different binnings of it are refused."""
    edges = np.asarray(edges, dtype=float)
    old = bins.get(col)
    if old is not None and not (old.shape == edges.shape and np.array_equal(old, edges)):
        raise TypeError(
            f"Step {label!r} bins the column {col!r} with other edges than an earlier step "
            f"({old.tolist()} and {edges.tolist()}); a column can be read with one binning "
            "only."
        )
    bins[col] = edges


def _merge_fills(parts: list[Affine], label: str) -> dict:
    """The imputed values of the parts of a ColumnTransformer (one per raw column).

    A raw column imputed in one part and read without an imputer in another would be
    read two ways when missing (the imputed value here, a missing value there); it is
    refused, as are two different imputed values.
    """
    fills: dict = {}
    for p in parts:
        for col, value in p.fills.items():
            if col in fills and not _same_value(fills[col], value):
                raise TypeError(
                    f"Step {label!r} imputes the column {col!r} with two values "
                    f"({fills[col]!r} and {value!r}); a missing value must be read one way."
                )
            fills[col] = value
    for p in parts:
        raw = {t[1] for row in p.rows.values() for t in row if t[0] != "miss"}
        both = sorted(c for c in raw & set(fills) if c not in p.fills)
        if both:
            raise TypeError(
                f"Step {label!r} reads the column(s) {both} both through an imputer and "
                "without one, so a missing value would be read two ways; impute the column "
                "once, before the steps that read it."
            )
    return fills


def _same_value(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return bool(np.isclose(float(a), float(b), rtol=1e-12, atol=0.0))


def transform(step, aff: Affine, name: str | None) -> Affine:
    """Push the affine representation through one fitted transformer."""
    step = unwrap_frozen(step)
    label = name if name is not None else type(step).__name__
    if is_identity(step):
        return aff
    read = _READERS.get(step_key(step))
    if read is None:
        raise TypeError(
            f"Cannot read step {label!r} ({type(step).__name__}) as a linear map of the raw "
            f"inputs; supported: {supported_steps('linear')}."
        )
    return read(step, aff, label)


def _pipeline(step, aff: Affine, label: str) -> Affine:
    for sub_name, sub in step.steps:
        aff = transform(sub, aff, f"{label}/{sub_name}")
    return aff


def _missing_column(aff: Affine, j: int, label: str):
    """``(raw column, a, b)`` of a feature ``a * x + b`` that missing values reach, or None.

    None when no raw column of the feature can be missing any more (already imputed,
    or an indicator of an encoder, which has no missing value).
    """
    row = aff.rows[j]
    open_terms = [(t, w) for t, w in row.items() if t[0] == "num" and t[1] not in aff.fills]
    if not open_terms:
        return None
    if len(row) != 1 or open_terms[0][1] == 0:
        raise TypeError(
            f"Step {label!r} imputes a feature that combines several inputs; an imputer is "
            "read when it is applied to a raw column or to an affine map of one (e.g. after "
            "a scaler)."
        )
    (term, a), = open_terms
    return term[1], float(a), float(aff.b[j])


def _indicators(aff: Affine, features, label: str) -> Affine:
    """Missing-value indicators of the features ``features`` (MissingIndicator)."""
    rows: dict[int, dict[tuple, float]] = {}
    read: set[str] = set()
    for j in features:
        found = _missing_column(aff, int(j), label)
        rows[len(rows)] = {} if found is None else {("miss", found[0]): 1.0}
        if found is not None:
            read.add(found[0])
    return Affine(rows, np.zeros(len(rows)), read, aff.bins, aff.fills)


def _imputer(step, aff: Affine, label: str) -> Affine:
    """SimpleImputer: a missing raw value read as the imputed one; MissingIndicator.

    The imputed value of a feature ``a * x + b`` of raw column ``x`` is stated on the raw
    column, ``(statistic - b) / a`` (the statistic itself for the raw column), so every
    later step reads a missing value as that raw value. Features without any observed
    value in fit are dropped, as scikit-learn does (unless ``keep_empty_features`` or
    ``strategy="constant"``); ``add_indicator=True`` appends the indicators.
    """
    if not isinstance(step, (SimpleImputer, MissingIndicator)):
        raise TypeError(
            f"Step {label!r} ({type(step).__name__}) imputes a column from the other "
            "columns of the row, so a missing value has no contribution of its own to a "
            "linear rule; use SimpleImputer (per column), or verify the model by sampling "
            "(method='sampling'), which gives it the missing values as they are."
        )
    check_is_fitted(step)
    check_missing_marker(step, label)
    if isinstance(step, MissingIndicator):
        return _indicators(aff, step.features_, label)
    stats = np.asarray(step.statistics_, dtype=object)
    if len(stats) != aff.n_features:
        raise TypeError(
            f"Step {label!r} was fitted on {len(stats)} features but receives "
            f"{aff.n_features}."
        )
    keep_all = step.strategy == "constant" or getattr(step, "keep_empty_features", False)
    valid = [j for j in range(aff.n_features) if keep_all or not pd.isna(stats[j])]
    fills = dict(aff.fills)
    for j in valid:
        found = _missing_column(aff, j, label)
        if found is None:
            continue
        col, a, b = found
        value = py_scalar(stats[j])
        fill = value if (a == 1.0 and b == 0.0) else (float(value) - b) / a
        if col in fills and not _same_value(fills[col], fill):
            raise TypeError(
                f"Step {label!r} imputes the column {col!r} with two values "
                f"({fills[col]!r} and {fill!r}); a missing value must be read one way."
            )
        fills[col] = fill
    out = aff.select(valid)
    out.fills = fills
    if step.add_indicator:
        out = Affine.concat([out, _indicators(aff, step.indicator_.features_, label)],
                             label)
    return out


def _function_transformer(step: FunctionTransformer, aff: Affine, label: str) -> Affine:
    """The identity ``FunctionTransformer()``; any other function is refused."""
    if step.func is None:
        return aff
    func = getattr(step.func, "__name__", repr(step.func))
    raise TypeError(
        f"Step {label!r} is FunctionTransformer(func={func}); linear_rule cannot tell "
        "whether a user function is affine, so only the identity FunctionTransformer() "
        "(func=None) is read. Replace the function by a scaler or encoder, or apply it "
        "to the data before the model."
    )


def _binned_rows(aff: Affine, edges_list, onehot: bool, label: str) -> Affine:
    """Output features of a binning of raw columns: one-hot bins, or the bin index."""
    rows: dict[int, dict[tuple, float]] = {}
    read: set[str] = set()
    bins = dict(aff.bins)
    for j, edges in enumerate(edges_list):
        col = aff.raw_column(j, label)
        read.add(col)
        _add_bins(bins, col, edges, label)
        n = len(edges) - 1
        if onehot:
            for k in range(n):
                rows[len(rows)] = {("bin", col, k): 1.0}
        else:
            rows[len(rows)] = {("bin", col, k): float(k) for k in range(n)}
    return Affine(rows, np.zeros(len(rows)), read, bins, aff.fills)


def _kbins(step: KBinsDiscretizer, aff: Affine, label: str) -> Affine:
    """KBinsDiscretizer: the bin indicators (one-hot) or the bin index (ordinal)."""
    check_is_fitted(step)
    if step.dtype not in (None, np.float64, "float64"):
        raise TypeError(
            f"Step {label!r}: KBinsDiscretizer(dtype={step.dtype!r}) bins values rounded to "
            "that type; use dtype=None or np.float64 so that the rule bins them alike."
        )
    return _binned_rows(aff, step.bin_edges_, step.encode != "ordinal", label)


def _binning(step, aff: Affine, label: str) -> Affine:
    """BinningDiscretizer: one-hot bins."""
    check_is_fitted(step)
    return _binned_rows(aff, step.bin_edges_, True, label)


def _integer_contributions(step, aff: Affine, label: str) -> Affine:
    """IntegerWeightScaler.transform: per input column, its integer-weighted terms."""
    check_is_fitted(step)
    rule = step.rule_
    if len(rule.feature_names_in) != aff.n_features:
        raise TypeError(
            f"Step {label!r} reads {len(rule.feature_names_in)} features but receives "
            f"{aff.n_features}."
        )
    pos = {c: j for j, c in enumerate(rule.feature_names_in)}
    rows: dict[int, dict[tuple, float]] = {j: {} for j in range(aff.n_features)}
    b = np.zeros(aff.n_features)
    read: set[str] = set()
    bins = dict(aff.bins)
    for t, w in zip(rule.terms, step.coef_[0].astype(float)):
        j = pos[t.column]
        if t.kind == "numeric":
            for term, a in aff.rows[j].items():
                rows[j][term] = rows[j].get(term, 0.0) + w * a
            b[j] += w * aff.b[j]
            read |= {term[1] for term in aff.rows[j]}
            continue
        col = aff.raw_column(j, label)
        read.add(col)
        if t.kind == "category":
            term = ("cat", col, t.category)
        else:
            _add_bins(bins, col, rule.binned_features[t.column], label)
            term = ("bin", col, t.category)
        rows[j][term] = rows[j].get(term, 0.0) + w
    return Affine(rows, b, read, bins, aff.fills)


def _scaler(step, aff: Affine, label: str) -> Affine:
    """Push the affine representation through a fitted scaler."""
    if isinstance(step, StandardScaler):
        mean = step.mean_ if step.with_mean else 0.0
        scale = step.scale_ if step.with_std and step.scale_ is not None else 1.0
        return aff.scale_shift(1.0 / np.asarray(scale), -np.asarray(mean) / np.asarray(scale))
    if isinstance(step, MinMaxScaler):
        if step.clip:
            raise TypeError(f"Step {label!r}: MinMaxScaler(clip=True) is not linear.")
        return aff.scale_shift(step.scale_, step.min_)
    return aff.scale_shift(1.0 / step.scale_, 0.0)  # MaxAbsScaler


def _column_transformer(ct, aff: Affine, label: str) -> Affine:
    parts = [transform(trans, aff.select(idx), part_label)
             for trans, idx, part_label in column_parts(ct, label)]
    return Affine.concat(parts, label)


def _one_hot(enc: OneHotEncoder, aff: Affine, label: str) -> Affine:
    check_is_fitted(enc)
    if getattr(enc, "infrequent_categories_", None) is not None and any(
        c is not None for c in enc.infrequent_categories_
    ):
        raise TypeError(f"Step {label!r}: OneHotEncoder with infrequent categories is not read.")
    drop_idx = getattr(enc, "drop_idx_", None)
    rows: dict[int, dict[tuple, float]] = {}
    read: set[str] = set()
    for j, cats in enumerate(enc.categories_):
        col = aff.raw_column(j, label)
        read.add(col)
        dropped = None if drop_idx is None else drop_idx[j]
        terms = [("cat", col, py_scalar(v)) for v in cats]
        kept = [t for i, t in enumerate(terms) if dropped is None or i != dropped]
        first = len(rows)
        for t in kept:
            rows[len(rows)] = {t: 1.0}
        if dropped is not None and kept:
            # A dropped reference category has no output feature; keep it in the rule
            # (coefficient 0) with weight 0 inside a neighbouring feature of the same
            # column, placed so that the categories keep the encoder's order.
            ref = terms[dropped]
            if dropped == 0:
                rows[first] = {ref: 0.0, **rows[first]}
            else:
                rows[first + dropped - 1][ref] = 0.0
    return Affine(rows, np.zeros(len(rows)), read, aff.bins, aff.fills)


def _ordinal(enc: OrdinalEncoder, aff: Affine, label: str) -> Affine:
    """OrdinalEncoder: category ``i`` of ``categories_`` is the code ``i``.

    A missing value seen in ``fit`` is ``encoded_missing_value``.
    """
    check_is_fitted(enc)
    _refuse_unread_ordinal(enc, label)
    rows = {}
    read: set[str] = set()
    for j, cats in enumerate(enc.categories_):
        col = aff.raw_column(j, label)
        read.add(col)
        rows[j] = {("cat", col, py_scalar(v)):
                   float(enc.encoded_missing_value) if _is_nan(v) else float(i)
                   for i, v in enumerate(cats)}
    return Affine(rows, np.zeros(len(rows)), read, aff.bins, aff.fills)


def _is_nan(v) -> bool:
    return isinstance(v, float) and np.isnan(v)


def _refuse_unread_ordinal(enc: OrdinalEncoder, label: str) -> None:
    """Refuse what a category's own term cannot hold.

    Infrequent categories, and the code ``unknown_value`` of a category the encoder does
    not know.
    """
    if getattr(enc, "infrequent_categories_", None) is not None and any(
        c is not None for c in enc.infrequent_categories_
    ):
        raise TypeError(f"Step {label!r}: OrdinalEncoder with infrequent categories is not "
                        "read.")
    if enc.handle_unknown == "use_encoded_value":
        raise TypeError(
            f"Step {label!r}: OrdinalEncoder(handle_unknown='use_encoded_value', "
            f"unknown_value={enc.unknown_value}) is not read: a linear rule has no term "
            "for a category the encoder does not know; use handle_unknown='error' or "
            "a OneHotEncoder(handle_unknown='ignore').")


#: How this reader reads each row of PIPELINE_STEPS that it reads (see ``_steps``).
_READERS = {
    "Pipeline": _pipeline,
    "ColumnTransformer": _column_transformer,
    "StandardScaler": _scaler,
    "MinMaxScaler": _scaler,
    "MaxAbsScaler": _scaler,
    "OneHotEncoder": _one_hot,
    "OrdinalEncoder": _ordinal,
    "SimpleImputer": _imputer,
    "MissingIndicator": _imputer,
    "KNNImputer": _imputer,  # refused by name, with the reason
    "KBinsDiscretizer": _kbins,
    "BinningDiscretizer": _binning,
    "IntegerWeightScaler": _integer_contributions,
    "FunctionTransformer": _function_transformer,
}
