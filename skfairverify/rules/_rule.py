"""A binary linear decision rule on raw input columns: :class:`LinearRule` and its terms.

The decision function of a pipeline made of affine transformers (scalers, one-hot /
ordinal encoders, column selection) and a linear final step is an affine function of
the raw inputs, where a categorical input enters through the indicators
``[x[c] == v]``; :func:`~skfairverify.linear_rule` (``_linear_reader``) composes the
steps into a :class:`LinearRule`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..utils._categories import match_categories
from ..utils._validation import check_unique_columns

__all__ = ["LinearRule", "Term", "bin_of", "term_names"]


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
