"""Read a fitted linear classifier as a rule on its raw input columns.

The decision function of a pipeline made of affine transformers (scalers,
one-hot / ordinal encoders, column selection) and a linear final step is an
affine function of the raw inputs, where a categorical input enters through
the indicators ``[x[c] == v]``. :func:`linear_rule` composes the steps into that
function; :func:`sensitive_columns` lists the inputs it never reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import pandas as pd
from sklearn.base import is_classifier, is_regressor
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
    OrdinalEncoder,
    StandardScaler,
)
from sklearn.utils.validation import check_is_fitted

from .utils._categories import match_categories
from .utils._compat import HasMethods, validate_params
from .utils._validation import check_unique_columns

__all__ = ["LinearRule", "Term", "check_missing_marker", "linear_rule", "sensitive_columns"]


class Term(NamedTuple):
    """One term of a :class:`LinearRule`, structured (never parsed from its name).

    Attributes
    ----------
    kind : {"numeric", "category", "bin", "missing"}
        ``"numeric"``: the column's value; ``"category"``: the indicator
        ``[x[column] == category]``; ``"bin"``: the indicator that ``x[column]`` falls
        in bin ``category`` (an int) of ``binned_features[column]``; ``"missing"``: the
        indicator that ``x[column]`` is missing (``SimpleImputer(add_indicator=True)``,
        ``MissingIndicator``).
    column : str
        The raw input column.
    category : object
        The category or bin index; ``None`` for a numeric term.
    """

    kind: str
    column: str
    category: object = None


@dataclass(frozen=True)
class LinearRule:
    """A binary linear decision rule expressed on raw input columns.

    ``decision(x) = intercept + sum_c coef[c] * x[c] + sum_(c, v) coef["c=v"] * [x[c] == v]
    + sum_(c, k) coef["c_bin<k>"] * [x[c] in bin k] + sum_c coef["c_missing"] * [x[c]
    missing]``, a missing ``x[c]`` being read as ``imputed[c]`` in the other terms;
    ``decision > 0`` predicts ``classes[1]``. ``terms`` gives the structured ``(kind,
    column, category)`` of every coefficient, in the order of ``coef``: numeric terms,
    then category terms, bin terms and missing-value indicators.

    Attributes
    ----------
    coef : pandas.Series
        One coefficient per term: per numeric raw column (index ``"col"``), per
        category of a categorical raw column (index ``"col=category"``) and per bin of a
        binned column (index ``"col_bin<k>"``). A name whose parts contain ``=``, or that
        would equal another term's name, is quoted (``"'a=b'='c'"``), so the names are
        unique; read the structure from ``terms``, never by parsing a name.
    intercept : float
        The constant term.
    feature_names_in : list of str
        Every input column of the estimator, in order.
    numeric_features : list of str
        Raw columns that enter the rule linearly.
    categorical_features : dict
        Raw column -> list of its categories (in encoder order); each category has a
        coefficient (0 for a dropped reference category), see :meth:`category_coef`.
        Values are matched to categories by
        :func:`skfairverify.utils._categories.match_categories` (numbers numerically,
        strings never equal to numbers).
    dropped : list of str
        Input columns the estimator never reads.
    classes : numpy.ndarray
        The estimator's ``classes_``; a positive decision means ``classes[1]``.
    binned_features : dict
        Raw column -> bin edges (an array of ``n_bins + 1`` numbers, as a fitted
        ``KBinsDiscretizer``'s ``bin_edges_``); value ``x`` falls in bin
        ``searchsorted(edges[1:-1], x, side="right")`` (values beyond the outer edges
        fall in the first / last bin). Each bin has a coefficient, see
        :meth:`bin_coef`. Only ``linear_rule(..., read_bins=True)`` builds such terms.
    imputed : dict
        Raw column -> the value the pipeline's ``SimpleImputer`` puts in place of a
        missing value, in the raw column's units (an imputer after a scaler: the raw
        value that the scaler maps to the imputed one); every term of the column reads
        a missing value as this value.
    missing_features : list of str
        Raw columns with a missing-value indicator term (index ``"col_missing"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfairverify import linear_rule
    >>> X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "c": ["a", "b", "a", "b"]})
    >>> model = make_pipeline(
    ...     make_column_transformer(("passthrough", ["x"]), (OneHotEncoder(), ["c"])),
    ...     LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> rule = linear_rule(model)
    >>> list(rule.coef.index), rule.categorical_features
    (['x', 'c=a', 'c=b'], {'c': ['a', 'b']})
    >>> rule.category_coef("c").index.tolist()
    ['a', 'b']
    >>> rule.terms[1]
    Term(kind='category', column='c', category='a')
    """

    coef: pd.Series
    intercept: float
    feature_names_in: list[str]
    numeric_features: list[str]
    categorical_features: dict[str, list] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    classes: np.ndarray | None = None
    binned_features: dict[str, np.ndarray] = field(default_factory=dict)
    imputed: dict[str, object] = field(default_factory=dict)
    missing_features: list[str] = field(default_factory=list)

    def __post_init__(self):
        names = term_names(self.terms)
        index = list(self.coef.index)
        if index != names:
            if len(index) != len(names) or set(index) != set(names):
                raise ValueError(
                    f"coef has the terms {index[:10]} but the features give {names[:10]}: "
                    "one coefficient per numeric feature, category, bin and missing-value "
                    "indicator, named 'col', 'col=category', 'col_bin<k>' and 'col_missing'."
                )
            object.__setattr__(self, "coef", self.coef.reindex(names))

    @property
    def terms(self) -> list[Term]:
        """The structured term of every coefficient, in the order of ``coef``."""
        terms = [Term("numeric", c) for c in self.numeric_features]
        for c, cats in self.categorical_features.items():
            terms += [Term("category", c, v) for v in cats]
        for c, edges in self.binned_features.items():
            terms += [Term("bin", c, k) for k in range(len(edges) - 1)]
        terms += [Term("missing", c) for c in self.missing_features]
        return terms

    def _positions(self, kind: str, column: str) -> list[int]:
        return [i for i, t in enumerate(self.terms) if t.kind == kind and t.column == column]

    def category_coef(self, column: str) -> pd.Series:
        """Coefficients of the categories of a categorical column, indexed by category.

        Parameters
        ----------
        column : str
            A key of ``categorical_features``.

        Returns
        -------
        pandas.Series
            One coefficient per category, in encoder order.
        """
        if column not in self.categorical_features:
            raise KeyError(f"{column!r} is not a categorical input of this rule.")
        cats = self.categorical_features[column]
        return pd.Series(
            self.coef.iloc[self._positions("category", column)].to_numpy(dtype=float),
            index=pd.Index(cats, name=column, dtype=object),
            name=column,
        )

    def bin_coef(self, column: str) -> pd.Series:
        """Coefficients of the bins of a binned column, indexed by bin interval.

        Parameters
        ----------
        column : str
            A key of ``binned_features``.

        Returns
        -------
        pandas.Series
            One coefficient per bin, indexed by the bins as a left-closed
            ``pandas.IntervalIndex`` of the edges (the first and last bin also take the
            values beyond the outer edges).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from skfairverify import LinearRule
        >>> rule = LinearRule(pd.Series([1.0, 3.0], index=["x_bin0", "x_bin1"]), 0.0,
        ...                   ["x"], [], binned_features={"x": np.array([0.0, 2.0, 5.0])})
        >>> rule.bin_coef("x").tolist()
        [1.0, 3.0]
        >>> rule.decision_function(pd.DataFrame({"x": [-1.0, 1.9, 2.0, 9.0]})).tolist()
        [1.0, 1.0, 3.0, 3.0]
        """
        if column not in self.binned_features:
            raise KeyError(f"{column!r} is not a binned input of this rule.")
        edges = np.asarray(self.binned_features[column], dtype=float)
        return pd.Series(
            self.coef.iloc[self._positions("bin", column)].to_numpy(dtype=float),
            index=pd.IntervalIndex.from_breaks(edges, closed="left", name=column),
            name=column,
        )

    @property
    def read_columns(self) -> list[str]:
        """The raw columns the rule reads (numeric, categorical, binned, missing), in order."""
        return list(dict.fromkeys(
            self.numeric_features + list(self.categorical_features)
            + list(self.binned_features) + list(self.missing_features)
        ))

    def contribution(self, column: str, values) -> np.ndarray:
        """The rule's terms of one raw column, summed, for each of ``values``.

        A missing value (NaN, None) is read as the model reads it: as the value of the
        pipeline's imputer (``imputed``), plus the coefficient of its missing-value
        indicator (``missing_features``); a category the encoder does not know, or a
        missing value without an imputer, contributes 0 to the category terms (as a
        one-hot encoder with ``handle_unknown="ignore"``).

        Parameters
        ----------
        column : str
            A raw column the rule reads.
        values : array-like or Series of shape (n_samples,)
            Values of the column.

        Returns
        -------
        ndarray of float64 of shape (n_samples,)
            The column's share of the decision function.

        Raises
        ------
        ValueError
            If a value is missing where the rule reads the column as a number (or bins
            it) and no imputer gives it a value; the message names the column.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from skfairverify import LinearRule
        >>> rule = LinearRule(pd.Series([2.0, 0.5], index=["x", "x_missing"]), 0.0, ["x"],
        ...                   ["x"], imputed={"x": 10.0}, missing_features=["x"])
        >>> rule.contribution("x", [1.0, np.nan]).tolist()
        [2.0, 20.5]
        """
        x = values if isinstance(values, pd.Series) else pd.Series(
            np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values)
        missing = x.isna().to_numpy()
        fill = self.imputed.get(column)
        coef = self.coef.to_numpy(dtype=float)
        out = np.zeros(len(x))
        if column in self.numeric_features or column in self.binned_features:
            numbers = self._numbers(column, x, missing, fill)
            if column in self.numeric_features:
                out += coef[self._positions("numeric", column)[0]] * numbers
            if column in self.binned_features:
                out += coef[self._positions("bin", column)][
                    bin_of(numbers, self.binned_features[column])]
        if column in self.categorical_features:
            cats = self.categorical_features[column]
            codes = match_categories(x, cats, name=column)
            if fill is not None and missing.any():
                codes[missing] = match_categories(np.array([fill], dtype=object), cats,
                                                  name=column)[0]
            w = np.append(coef[self._positions("category", column)], 0.0)  # -1: weight 0
            out += w[codes]
        if column in self.missing_features:
            out += coef[self._positions("missing", column)[0]] * missing
        return out

    def _numbers(self, column, x: pd.Series, missing, fill) -> np.ndarray:
        """The values of a column read as numbers, a missing one as the imputed value."""
        numbers = x.to_numpy(dtype=float, na_value=np.nan)
        if not missing.any():
            return numbers
        if fill is None:
            raise ValueError(
                f"Column {column!r} has missing values (NaN) in {int(missing.sum()):,} "
                "row(s) and the model reads it as a number with no imputer before it, so "
                "those rows have no decision. Put a SimpleImputer in the pipeline before the "
                f"step that reads {column!r}, or drop or fill those rows before verifying."
            )
        numbers = numbers.copy()
        numbers[missing] = float(fill)
        return numbers

    def decision_function(self, X) -> np.ndarray:
        """Evaluate the rule on raw inputs.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw inputs with the estimator's input columns (by name for a DataFrame
            with string column names, by position otherwise). A missing value is read
            as the model reads it (see :meth:`contribution`).

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The decision value, equal to the estimator's ``decision_function``.

        Raises
        ------
        ValueError
            If ``X`` lacks a column the rule reads, has duplicated column names, a
            categorical column mixes strings and numbers that print alike, or a column
            read as a number has a missing value without an imputer.
        """
        X = _as_frame(X, self.feature_names_in)
        read = self.read_columns
        missing = [c for c in read if c not in X.columns]
        if missing:
            raise ValueError(f"X lacks the columns {missing} read by the rule.")
        out = np.full(len(X), float(self.intercept))
        for c in read:
            out += self.contribution(c, X[c])
        return out

    def scaled(self, factor: float) -> LinearRule:
        """Return the same rule with its decision function multiplied by ``factor > 0``.

        The decisions (the sign of the decision function) are unchanged; this is how
        a rule is normalised before its weights are quantized (see
        :func:`~skfairverify.preprocessing.decision_scale`).

        Parameters
        ----------
        factor : float
            A finite positive number.

        Returns
        -------
        LinearRule
            ``coef * factor`` and ``intercept * factor``, everything else equal.

        Raises
        ------
        ValueError
            If ``factor`` is not finite and positive, or the scaled weights overflow.

        Examples
        --------
        >>> import pandas as pd
        >>> from skfairverify import LinearRule
        >>> rule = LinearRule(pd.Series([2.0, -4.0], index=["a", "b"]), 1.0, ["a", "b"],
        ...                   ["a", "b"])
        >>> half = rule.scaled(0.5)
        >>> half.coef.tolist(), half.intercept
        ([1.0, -2.0], 0.5)
        """
        factor = float(factor)
        if not (np.isfinite(factor) and factor > 0):
            raise ValueError(f"factor must be a finite positive number, got {factor!r}.")
        coef = self.coef * factor
        intercept = float(self.intercept) * factor
        if not (np.all(np.isfinite(coef.to_numpy())) and np.isfinite(intercept)):
            raise ValueError(
                f"Scaling the rule by {factor:g} overflows its coefficients (largest "
                f"{float(np.max(np.abs(self.coef.to_numpy()), initial=0.0)):g})."
            )
        return replace(self, coef=coef, intercept=intercept)

    def predict(self, X) -> np.ndarray:
        """Predict class labels: ``classes[1]`` where the decision is > 0, else ``classes[0]``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw inputs, as for :meth:`decision_function`.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The predicted labels (0 / 1 when ``classes`` is None).
        """
        d = self.decision_function(X)
        classes = np.array([0, 1]) if self.classes is None else np.asarray(self.classes)
        return classes[(d > 0).astype(int)]


def bin_of(x: np.ndarray, edges) -> np.ndarray:
    """Bin of every value, as ``KBinsDiscretizer.transform`` computes it.

    ``searchsorted(edges[1:-1], x, side="right")``: bin ``k`` is ``[edges[k], edges[k+1])``,
    the first and last bins also take the values beyond the outer edges.
    """
    x = np.asarray(x, dtype=float)
    if np.isnan(x).any():
        raise ValueError("A binned column contains NaN; the rule has no bin for it.")
    return np.searchsorted(np.asarray(edges, dtype=float)[1:-1], x, side="right")


def _plain(part) -> bool:
    return "=" not in str(part) and "'" not in str(part)


def term_names(terms: list[Term]) -> list[str]:
    """Unique names of the terms: ``col``, ``col=cat``, ``col_bin<k>``, ``col_missing``.

    A category, bin or missing term whose column or category contains ``=`` (or a
    quote), or whose plain name is also another term's name, is written
    ``'col'='cat'`` / ``'col'_bin<k>`` / ``'col'_missing`` with :func:`repr` of the
    parts; a numeric term is always the column's name, so ``coef[column]`` reads it.
    """
    plain = []
    for t in terms:
        if t.kind == "numeric":
            plain.append(str(t.column))
        elif t.kind == "category":
            plain.append(f"{t.column}={t.category}")
        elif t.kind == "bin":
            plain.append(f"{t.column}_bin{t.category}")
        else:
            plain.append(f"{t.column}_missing")
    counts: dict[str, int] = {}
    for name in plain:
        counts[name] = counts.get(name, 0) + 1
    names = []
    for t, name in zip(terms, plain):
        if t.kind == "numeric" or (_plain(t.column) and _plain(t.category)
                                   and counts[name] == 1):
            names.append(name)
        elif t.kind == "category":
            names.append(f"{str(t.column)!r}={t.category!r}")
        elif t.kind == "bin":
            names.append(f"{str(t.column)!r}_bin{t.category}")
        else:
            names.append(f"{str(t.column)!r}_missing")
    return names


def _as_frame(X, names: list[str]) -> pd.DataFrame:
    """``X`` as a DataFrame with the rule's column names.

    A DataFrame with string column names is matched by name; one with other column
    names (integers, mixed) is read by position when the rule's names are the positional
    ``x0, x1, ...`` (the estimator was fitted without string names); an array is read
    by position. Duplicated column names are refused, naming them.
    """
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X)
        if all(isinstance(c, str) for c in X.columns):
            return X
        if X.shape[1] == len(names) and names == [f"x{i}" for i in range(len(names))]:
            return X.set_axis(names, axis=1)
        return X.set_axis([str(c) for c in X.columns], axis=1)
    arr = np.asarray(X, dtype=object) if not hasattr(X, "toarray") else X.toarray()
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise ValueError(
            f"X has shape {arr.shape}; expected {len(names)} columns {names}."
        )
    return pd.DataFrame(arr, columns=names)


# --------------------------------------------------------------------------------------
# Affine representation: features = A @ terms + b, terms are raw numeric columns
# ("num", col) or category indicators ("cat", col, value).
# --------------------------------------------------------------------------------------


class _Affine:
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
    def identity(cls, names: list[str]) -> _Affine:
        rows = {j: {("num", c): 1.0} for j, c in enumerate(names)}
        return cls(rows, np.zeros(len(names)), set(names))

    def select(self, idx) -> _Affine:
        idx = list(idx)
        rows = {k: dict(self.rows[j]) for k, j in enumerate(idx)}
        read: set[str] = set()
        for j in idx:
            read |= {t[1] for t in self.rows[j]}
        return _Affine(rows, self.b[idx], read, self.bins, self.fills)

    def scale_shift(self, scale, shift) -> _Affine:
        """Return ``self * scale + shift`` element-wise per feature."""
        scale = np.broadcast_to(np.asarray(scale, dtype=float), self.b.shape)
        shift = np.broadcast_to(np.asarray(shift, dtype=float), self.b.shape)
        rows = {j: {t: w * scale[j] for t, w in r.items()} for j, r in self.rows.items()}
        return _Affine(rows, self.b * scale + shift, set(self.read), self.bins, self.fills)

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
    def concat(parts: list[_Affine], label: str = "") -> _Affine:
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
        return _Affine(rows, b, read, bins, _merge_fills(parts, label))


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


def _merge_fills(parts: list[_Affine], label: str) -> dict:
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


def _step_label(step, name: str | None) -> str:
    return name if name is not None else type(step).__name__


def _unwrap_frozen(est):
    """Return the fitted model inside (possibly nested) FrozenEstimator wrappers."""
    while isinstance(est, FrozenEstimator):
        est = est.estimator
    return est


def _transform(step, aff: _Affine, name: str | None) -> _Affine:
    """Push the affine representation through one fitted transformer."""
    step = _unwrap_frozen(step)
    label = _step_label(step, name)
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return aff
    if isinstance(step, Pipeline):
        for sub_name, sub in step.steps:
            aff = _transform(sub, aff, f"{label}/{sub_name}")
        return aff
    if isinstance(step, ColumnTransformer):
        return _column_transformer(step, aff, label)
    if isinstance(step, (StandardScaler, MinMaxScaler, MaxAbsScaler)):
        return _scaler(step, aff, label)
    if isinstance(step, FunctionTransformer):
        return _function_transformer(step, aff, label)
    if isinstance(step, KBinsDiscretizer):
        return _kbins(step, aff, label)
    binned = _binning_or_integer(step, aff, label)
    if binned is not None:
        return binned
    if isinstance(step, (SimpleImputer, MissingIndicator)) or type(step).__name__ in (
            "KNNImputer", "IterativeImputer"):
        return _imputer(step, aff, label)
    if isinstance(step, OneHotEncoder):
        return _one_hot(step, aff, label)
    if isinstance(step, OrdinalEncoder):
        return _ordinal(step, aff, label)
    raise TypeError(
        f"Cannot read step {label!r} ({type(step).__name__}) as a linear map of the raw "
        "inputs; supported: Pipeline, ColumnTransformer, StandardScaler, MinMaxScaler, "
        "MaxAbsScaler, OneHotEncoder, OrdinalEncoder, SimpleImputer, MissingIndicator, "
        "KBinsDiscretizer, "
        "BinningDiscretizer, IntegerWeightScaler, FunctionTransformer() (identity), "
        "'passthrough', 'drop' and FrozenEstimator."
    )


def check_missing_marker(step, label: str) -> None:
    """Refuse an imputer whose ``missing_values`` is a value rather than NaN / None."""
    marker = step.missing_values
    if marker is None or marker is pd.NA or (isinstance(marker, float) and np.isnan(marker)):
        return
    raise TypeError(
        f"Step {label!r} is {type(step).__name__}(missing_values={marker!r}): it replaces "
        "an ordinary value, which the rule would have to read two ways; turn that value "
        f"into NaN before the model (X.replace({marker!r}, np.nan)) and use the default "
        "missing_values=np.nan."
    )


def _missing_column(aff: _Affine, j: int, label: str):
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


def _indicators(aff: _Affine, features, label: str) -> _Affine:
    """Missing-value indicators of the features ``features`` (MissingIndicator)."""
    rows: dict[int, dict[tuple, float]] = {}
    read: set[str] = set()
    for j in features:
        found = _missing_column(aff, int(j), label)
        rows[len(rows)] = {} if found is None else {("miss", found[0]): 1.0}
        if found is not None:
            read.add(found[0])
    return _Affine(rows, np.zeros(len(rows)), read, aff.bins, aff.fills)


def _imputer(step, aff: _Affine, label: str) -> _Affine:
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
        value = _py(stats[j])
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
        out = _Affine.concat([out, _indicators(aff, step.indicator_.features_, label)],
                             label)
    return out


def _function_transformer(step: FunctionTransformer, aff: _Affine, label: str) -> _Affine:
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


def _binned_rows(aff: _Affine, edges_list, onehot: bool, label: str) -> _Affine:
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
    return _Affine(rows, np.zeros(len(rows)), read, bins, aff.fills)


def _kbins(step: KBinsDiscretizer, aff: _Affine, label: str) -> _Affine:
    """KBinsDiscretizer: the bin indicators (one-hot) or the bin index (ordinal)."""
    check_is_fitted(step)
    if step.dtype not in (None, np.float64, "float64"):
        raise TypeError(
            f"Step {label!r}: KBinsDiscretizer(dtype={step.dtype!r}) bins values rounded to "
            "that type; use dtype=None or np.float64 so that the rule bins them alike."
        )
    return _binned_rows(aff, step.bin_edges_, step.encode != "ordinal", label)


def _binning_or_integer(step, aff: _Affine, label: str) -> _Affine | None:
    """BinningDiscretizer (one-hot bins) or IntegerWeightScaler (integer contributions)."""
    from .preprocessing import BinningDiscretizer, IntegerWeightScaler

    if isinstance(step, BinningDiscretizer):
        check_is_fitted(step)
        return _binned_rows(aff, step.bin_edges_, True, label)
    if isinstance(step, IntegerWeightScaler):
        return _integer_contributions(step, aff, label)
    return None


def _integer_contributions(step, aff: _Affine, label: str) -> _Affine:
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
    return _Affine(rows, b, read, bins, aff.fills)


def _scaler(step, aff: _Affine, label: str) -> _Affine:
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


def _column_transformer(ct: ColumnTransformer, aff: _Affine, label: str) -> _Affine:
    check_is_fitted(ct)
    indices = ct._transformer_to_input_indices  # resolved input columns of each transformer
    parts = []
    for name, trans, _cols in ct.transformers_:
        idx = list(indices.get(name, []))
        if isinstance(trans, str) and trans == "drop":
            continue
        if len(idx) == 0:
            continue
        parts.append(_transform(trans, aff.select(idx), f"{label}/{name}"))
    return _Affine.concat(parts, label)


def _one_hot(enc: OneHotEncoder, aff: _Affine, label: str) -> _Affine:
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
        terms = [("cat", col, _py(v)) for v in cats]
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
    return _Affine(rows, np.zeros(len(rows)), read, aff.bins, aff.fills)


def _ordinal(enc: OrdinalEncoder, aff: _Affine, label: str) -> _Affine:
    check_is_fitted(enc)
    rows = {}
    read: set[str] = set()
    for j, cats in enumerate(enc.categories_):
        col = aff.raw_column(j, label)
        read.add(col)
        rows[j] = {("cat", col, _py(v)): float(i) for i, v in enumerate(cats)}
    return _Affine(rows, np.zeros(len(rows)), read, aff.bins, aff.fills)


def _py(v):
    """Numpy scalar -> Python scalar, so that category labels print and compare plainly."""
    return v.item() if isinstance(v, np.generic) else v


def _split_final(estimator):
    """Return (preprocessing steps as (name, step) list, final estimator)."""
    est = _unwrap_frozen(estimator)
    steps: list[tuple[str | None, object]] = []
    while isinstance(est, Pipeline):
        *pre, (last_name, last) = est.steps
        steps.extend(pre)
        est = _unwrap_frozen(last)
    return steps, est


def _input_names(estimator, final, n_features: int | None = None) -> list[str]:
    for obj in (_unwrap_frozen(estimator), final):
        names = getattr(obj, "feature_names_in_", None)
        if names is not None:
            names = [str(c) for c in names]
            check_unique_columns(names, "The estimator's input")
            return names
    n = getattr(_unwrap_frozen(estimator), "n_features_in_", None)
    if n is None:
        n = n_features
    if n is None:
        raise TypeError("Cannot tell the input columns of the estimator; is it fitted?")
    return [f"x{i}" for i in range(n)]


def _check_classifier(final, label: str) -> None:
    """Refuse a final step that is not a classifier (a regressor has coef_ too)."""
    if is_classifier(final):
        return
    kind = "a regressor" if is_regressor(final) else "not a classifier"
    raise TypeError(
        f"The final step {label!r} is {kind}; linear_rule reads binary linear classifiers "
        "only (LogisticRegression, LinearSVC, SGDClassifier, RidgeClassifier, Perceptron, "
        "...). Its decision_function > 0 would not be a predicted class. A custom "
        "classifier must declare itself one (ClassifierMixin or estimator tags)."
    )


@validate_params(
    {"estimator": [HasMethods(["fit"])], "read_bins": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def linear_rule(estimator, *, read_bins=False) -> LinearRule:
    """Express a fitted binary linear classifier as a rule on its raw input columns.

    Reads through :class:`~sklearn.pipeline.Pipeline`,
    :class:`~sklearn.compose.ColumnTransformer` (transformer lists, ``"passthrough"``,
    ``"drop"``, ``remainder``), :class:`~sklearn.preprocessing.StandardScaler`,
    :class:`~sklearn.preprocessing.MinMaxScaler`, :class:`~sklearn.preprocessing.MaxAbsScaler`,
    :class:`~sklearn.preprocessing.OneHotEncoder` (one coefficient per category, named
    ``"column=category"``; structured in ``LinearRule.terms``),
    :class:`~sklearn.preprocessing.OrdinalEncoder`, the identity
    :class:`~sklearn.preprocessing.FunctionTransformer` (``func=None``; any other
    function is refused), :class:`~sklearn.frozen.FrozenEstimator`,
    :class:`~skfairverify.preprocessing.IntegerWeightScaler` (as a step: its integer
    contributions; as the final step: their sum plus its intercept), with
    ``read_bins=True`` :class:`~sklearn.preprocessing.KBinsDiscretizer` (any ``encode``)
    and :class:`~skfairverify.preprocessing.BinningDiscretizer` on raw columns (one
    coefficient per bin, with the bin edges in ``LinearRule.binned_features``), and any
    final step with ``coef_`` and ``intercept_`` for a binary problem
    (``LogisticRegression``, ``LinearSVC``, ``SGDClassifier``, ``RidgeClassifier``,
    ``Perceptron``, ...).

    Parameters
    ----------
    estimator : estimator
        A fitted classifier or pipeline.
    read_bins : bool, default=False
        Whether to read binning steps. A binned column makes the decision piecewise
        constant in it (one coefficient per bin), which a consumer that reads only
        ``numeric_features`` and ``categorical_features`` would miss; by default such a
        model is refused with a TypeError.

    Returns
    -------
    LinearRule
        ``rule.decision_function(X)`` equals ``estimator.decision_function(X)``.

    Raises
    ------
    TypeError
        If a step is not an affine map of the raw inputs (a tree, a polynomial
        expansion, a ``FunctionTransformer`` with a function, ...), the final step is
        not a classifier (a regressor such as ``LinearRegression`` or ``Ridge``), the
        problem is not binary, or a step bins a column and ``read_bins=False``; the
        message names the step.
    ValueError
        If the estimator's input columns have duplicated names.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skfairverify import linear_rule
    >>> X = pd.DataFrame({"a": [0., 1., 2., 3.], "b": [1., 0., 1., 0.]})
    >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> rule = linear_rule(model)
    >>> list(rule.coef.index)
    ['a', 'b']
    >>> bool(np.allclose(rule.decision_function(X), model.decision_function(X)))
    True

    A binned column is a piecewise-constant term, one coefficient per bin:

    >>> from sklearn.preprocessing import KBinsDiscretizer
    >>> binned = make_pipeline(KBinsDiscretizer(n_bins=2, quantile_method="linear"),
    ...                        LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> rule = linear_rule(binned, read_bins=True)
    >>> rule.binned_features["a"].tolist()
    [0.0, 1.5, 3.0]
    >>> bool(np.allclose(rule.decision_function(X), binned.decision_function(X)))
    True
    """
    pre, final = _split_final(estimator)
    if _is_integer_weight_scaler(final):
        # Its decision is the sum of its integer contributions plus its intercept.
        pre = [*pre, (type(final).__name__, final)]
        check_is_fitted(final)
        w = np.ones(final.n_features_in_)
        intercept, classes = float(final.intercept_[0]), final.classes_
    else:
        w, intercept, classes = _read_final(final)
    names = _input_names(estimator, final, None if pre else w.size)
    aff = _Affine.identity(names)
    for name, step in pre:
        aff = _transform(step, aff, name)
    if aff.n_features != w.size:
        raise TypeError(
            f"The steps before {type(final).__name__!r} produce {aff.n_features} features "
            f"but it has {w.size} coefficients; a step could not be read as an affine map."
        )
    if aff.bins and not read_bins:
        raise TypeError(
            f"The model bins the column(s) {sorted(aff.bins)} (KBinsDiscretizer, "
            "BinningDiscretizer): its decision is piecewise constant in them, not linear. "
            "linear_rule(..., read_bins=True) returns the rule with one coefficient per bin "
            "(LinearRule.binned_features); this consumer reads numeric and categorical "
            "terms only."
        )
    return _assemble(aff, w, intercept, classes, names, read_all=not pre)


def _is_integer_weight_scaler(est) -> bool:
    from .preprocessing import IntegerWeightScaler

    return isinstance(est, IntegerWeightScaler)


def _assemble(aff: _Affine, w, intercept: float, classes, names, read_all: bool):
    """The rule ``w @ (A t + b) + intercept`` with its terms grouped per kind and column."""
    terms: dict[tuple, float] = {}
    for j in range(aff.n_features):
        for t, a in aff.rows[j].items():
            terms[t] = terms.get(t, 0.0) + w[j] * a
    numeric = [c for c in names if ("num", c) in terms]
    categorical: dict[str, list] = {}
    binned: dict[str, np.ndarray] = {}
    for t in terms:
        if t[0] == "cat":
            categorical.setdefault(t[1], []).append(t[2])
        elif t[0] == "bin":
            binned[t[1]] = aff.bins[t[1]]
    categorical = {c: categorical[c] for c in names if c in categorical}
    binned = {c: binned[c] for c in names if c in binned}
    indicated = [c for c in names if ("miss", c) in terms]
    values = [terms[("num", c)] for c in numeric]
    for c, cats in categorical.items():
        values += [terms[("cat", c, v)] for v in cats]
    for c, edges in binned.items():
        values += [terms.get(("bin", c, k), 0.0) for k in range(len(edges) - 1)]
    values += [terms[("miss", c)] for c in indicated]
    structured = [Term("numeric", c) for c in numeric]
    structured += [Term("category", c, v) for c, cats in categorical.items() for v in cats]
    structured += [Term("bin", c, k) for c, e in binned.items() for k in range(len(e) - 1)]
    structured += [Term("missing", c) for c in indicated]
    index = term_names(structured)
    if len(set(index)) != len(index):  # only a numeric column named like a quoted term
        dup = sorted({n for n in index if index.count(n) > 1})
        raise ValueError(
            f"Term names of the rule collide: {dup}; rename the columns so that a numeric "
            "column is not named like another column's category term."
        )
    read = set(names) if read_all else aff.read
    valued = set(numeric) | set(categorical) | set(binned)
    return LinearRule(
        coef=pd.Series(values, index=pd.Index(index, dtype=object), dtype=float, name="coef"),
        intercept=intercept + float(w @ aff.b),
        feature_names_in=names,
        numeric_features=numeric,
        categorical_features=categorical,
        dropped=[c for c in names if c not in read],
        classes=np.asarray(classes),
        binned_features=binned,
        imputed={c: aff.fills[c] for c in names if c in aff.fills and c in valued},
        missing_features=indicated,
    )


def _read_final(final):
    """``(coef, intercept, classes)`` of a fitted binary linear classifier, or a TypeError."""
    label = type(final).__name__
    if isinstance(final, ColumnTransformer) or not hasattr(final, "fit"):
        raise TypeError(f"The final step {label!r} is not a classifier.")
    _check_classifier(final, label)
    coef = getattr(final, "coef_", None)
    intercept = getattr(final, "intercept_", None)
    if coef is None or intercept is None:
        try:
            check_is_fitted(final)
        except Exception as exc:
            raise TypeError(f"The final step {label!r} is not fitted.") from exc
        raise TypeError(
            f"The final step {label!r} is not a linear classifier (it has no coef_ and "
            "intercept_); skfairverify's exact verifier reads linear models only."
        )
    coef = np.asarray(coef, dtype=float)
    classes = getattr(final, "classes_", None)
    if classes is None:
        raise TypeError(
            f"The final step {label!r} has no classes_; linear_rule reads fitted binary "
            "classifiers only."
        )
    if len(classes) != 2 or (coef.ndim == 2 and coef.shape[0] != 1):
        raise TypeError(
            f"The final step {label!r} is a multiclass model ({len(classes)} classes); "
            "linear_rule reads binary classifiers only."
        )
    c0 = float(np.ravel(intercept)[0]) if np.ndim(intercept) else float(intercept)
    return coef.ravel(), c0, classes


@validate_params(
    {"estimator": [HasMethods(["fit"])], "X": [pd.DataFrame]},
    prefer_skip_nested_validation=True,
)
def sensitive_columns(estimator, X) -> list[str]:
    """Input columns of ``X`` that a fitted estimator never reads.

    These are the candidates for *fairness under unawareness*: a pipeline that drops
    the sensitive column does not see it, but may still use its proxies.

    Parameters
    ----------
    estimator : estimator
        A fitted linear classifier or pipeline (see :func:`linear_rule`).
    X : DataFrame
        Data with named columns.

    Returns
    -------
    list
        Labels of the columns of ``X`` the estimator does not read, in the order of
        ``X``. An estimator fitted with string column names is matched by name; one
        fitted without (on an array, or a DataFrame with integer or mixed column
        names) by position.

    Raises
    ------
    ValueError
        If ``X`` lacks an input column of the estimator (matched by name), or has
        another number of columns than it (matched by position).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from skfairverify import sensitive_columns
    >>> X = pd.DataFrame({"a": [0., 1., 2., 3.], "sex": ["F", "M", "F", "M"]})
    >>> model = make_pipeline(
    ...     make_column_transformer(("passthrough", ["a"]), remainder="drop"),
    ...     LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> sensitive_columns(model, X)
    ['sex']
    """
    rule = linear_rule(estimator, read_bins=True)  # a binned column is read too
    read = set(rule.numeric_features) | set(rule.categorical_features)
    read |= set(rule.binned_features)
    names = [str(c) for c in X.columns]
    if _has_feature_names(estimator):
        missing = [c for c in rule.feature_names_in if c not in names]
        if missing:
            raise ValueError(
                f"X lacks the input columns {missing} of the estimator; pass the data it "
                "was fitted on."
            )
        return [c for c, name in zip(X.columns, names) if name not in read]
    # Fitted without string column names (arrays, or integer / mixed column names):
    # the estimator's inputs are X's columns by position.
    if X.shape[1] != len(rule.feature_names_in):
        raise ValueError(
            f"X has {X.shape[1]} columns but the estimator was fitted on "
            f"{len(rule.feature_names_in)} unnamed features; its columns are matched by "
            "position."
        )
    return [c for c, name in zip(X.columns, rule.feature_names_in) if name not in read]


def _has_feature_names(estimator) -> bool:
    _, final = _split_final(estimator)
    return any(
        getattr(obj, "feature_names_in_", None) is not None
        for obj in (_unwrap_frozen(estimator), final)
    )
