"""Resolving the sensitive features: column names, positions or values (as fairlearn)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd

from ..utils._validation import check_sensitive, check_unambiguous
from ._variables import MAX_SENSITIVE_VALUES

__all__ = [
    "SensitiveColumns",
    "check_sensitive_column", "check_value_columns", "distinct_values", "is_column_reference",
    "names_columns", "sensitive_column_name", "short_description"
]


def is_column_reference(item, frame: pd.DataFrame) -> bool:
    """Whether ``item`` is the name or the position of a column of ``frame``."""
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, str):
        return item in frame.columns
    if isinstance(item, Integral):
        return 0 <= int(item) < frame.shape[1]
    return False


def names_columns(raw, frame: pd.DataFrame) -> bool:
    """Whether the constructor's ``sensitive_features`` names columns (else: values).

    A scalar is a name or a position; a Series, DataFrame or ndarray holds values; a
    list holds values when it has one entry per row of ``X`` and they are not all
    columns of ``X`` (or there are more rows than columns, so they cannot all be).
    """
    if isinstance(raw, (str, Integral)):
        return True
    if isinstance(raw, (pd.Series, pd.DataFrame, np.ndarray)):
        return False
    items = list(raw)
    if len(items) != len(frame):
        return True
    return len(frame) <= frame.shape[1] and all(is_column_reference(i, frame) for i in items)


def check_value_columns(sens: pd.DataFrame, frame: pd.DataFrame) -> None:
    """Refuse sensitive values whose names repeat or clash with a column of ``X``."""
    if pd.Index([str(c) for c in sens.columns]).duplicated().any():
        raise ValueError(
            f"sensitive_features has duplicate column names {list(sens.columns)}; give "
            "each attribute its own name."
        )
    clash = [c for c in sens.columns if c in frame.columns]
    if clash:
        raise ValueError(
            f"The sensitive_features values are named {clash}, as column(s) of X: the "
            "network reads X and the sensitive values side by side, so their names must "
            f"differ. Rename the values (e.g. a Series named otherwise), or name the column "
            f"of X instead: FairnessVerifier(estimator, sensitive_features={clash[0]!r})."
        )


def short_description(raw) -> str:
    """A short description of the constructor's ``sensitive_features`` for messages."""
    if isinstance(raw, (str, Integral)):
        return repr(raw)
    if isinstance(raw, (list, tuple)) and len(raw) <= 5:
        return repr(raw)
    return f"<{type(raw).__name__} of {len(raw)} values>"


def sensitive_column_name(item, frame: pd.DataFrame) -> str:
    """Return the column of ``frame`` named (or, for an integer, positioned) by ``item``."""
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, (str, Integral)):
        raise TypeError(
            f"sensitive_features must hold column names or positions; got {item!r}."
        )
    if isinstance(item, Integral):
        if not 0 <= int(item) < frame.shape[1]:
            raise ValueError(
                f"Sensitive feature position {item} is out of range for X with "
                f"{frame.shape[1]} columns."
            )
        return str(frame.columns[int(item)])
    if item not in frame.columns:
        raise ValueError(
            f"Sensitive feature {item!r} is not a column of X; columns: "
            f"{list(frame.columns)}."
        )
    return item


def distinct_values(col: pd.Series) -> pd.Series:
    """The distinct values of ``col`` (of a categorical column: its categories present).

    What :func:`check_unambiguous` reads: whether two values print alike depends on the
    distinct values only, so the rows are not converted one by one.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        present = np.bincount(codes[codes >= 0], minlength=len(col.cat.categories)) > 0
        return pd.Series(np.asarray(col.cat.categories, dtype=object)[present], dtype=object)
    if col.dtype == object:
        return pd.Series(pd.unique(col.to_numpy()), dtype=object)
    return col


def check_sensitive_column(col: pd.Series, name: str) -> None:
    """Refuse a sensitive column with missing values, one group, ambiguous or many values."""
    n_missing = int(col.isna().sum())
    if n_missing:
        raise ValueError(
            f"Sensitive feature {name!r} has {n_missing:,} missing value(s) (NaN): a row "
            "without a group cannot be counted in any group's rate. Drop those rows, or "
            f"give them a group of their own, e.g. X[{name!r}] = "
            f"X[{name!r}].astype(object).fillna('unknown')."
        )
    check_unambiguous(distinct_values(col), name)
    n_values = col.nunique()
    if n_values < 2:
        raise ValueError(
            f"Sensitive feature {name!r} has a single group ({col.iloc[0]!r}); "
            "fairness needs at least two."
        )
    if pd.api.types.is_float_dtype(col) and n_values > MAX_SENSITIVE_VALUES:
        raise ValueError(
            f"Sensitive feature {name!r} is continuous ({n_values} distinct values); "
            "bin it into groups first, e.g. X[col] = pd.cut(X[col], bins=[...]) or "
            "(X[col] >= 25).map({True: '>=25', False: '<25'})."
        )
    if pd.api.types.is_numeric_dtype(col) and n_values > MAX_SENSITIVE_VALUES:
        raise ValueError(
            f"Sensitive feature {name!r} has {n_values} distinct numeric values; a "
            f"sensitive feature must be categorical (at most {MAX_SENSITIVE_VALUES} "
            "values). Bin it into groups first."
        )


class SensitiveColumns:
    """The sensitive columns of the network: columns of ``X`` named, or values given.

    Parameters
    ----------
    raw : str, int, list or array-like or None
        The verifier's ``sensitive_features``: names (or positions) of columns of
        ``X``, the values of the rows of ``fit``, or None (values passed to the
        methods).

    Attributes
    ----------
    by_name : bool
        Whether ``fit`` read the sensitive columns from ``X`` by name (set by ``fit``).
    names : list of str
        The sensitive columns of ``fit`` (set by ``fit``).
    """

    def __init__(self, raw):
        self.raw = raw
        self.by_name = None
        self.names = None
        self._positional_labels = None

    def resolve(self, frame, sensitive_features, *, fitting: bool, positional_labels=None):
        """The frame the network reads (``X`` and the sensitive columns) and their names.

        One source per call: the columns named in the constructor, or the values passed
        to the method; values given to the constructor are those of the rows of ``fit``.
        ``positional_labels``: the column labels of ``X`` when they are not strings.
        """
        self._positional_labels = positional_labels
        frame, names = self._resolve(frame, sensitive_features, fitting=fitting)
        if fitting:
            self.names = list(names)
        return frame, names

    def _sensitive_names(self, frame: pd.DataFrame) -> list[str]:
        raw = self.raw
        items = [raw] if isinstance(raw, (str, Integral)) else list(raw)
        if not items:
            raise ValueError("sensitive_features is empty; name at least one column.")
        names = []
        for item in items:
            name = sensitive_column_name(self._as_position(item), frame)
            if name in names:
                raise ValueError(f"Sensitive feature {name!r} is listed twice.")
            names.append(name)
        for name in names:
            check_sensitive_column(frame[name], name)
        return names

    def _as_position(self, item):
        """An integer label of ``X``'s (non-string) columns as its position, else ``item``.

        ``X`` with integer column labels is read by position (``x0, x1, ...``, as
        scikit-learn does); ``sensitive_features=3`` then names the column labelled 3,
        wherever it stands. With string column names or an array, an integer is a
        position.
        """
        labels = self._positional_labels
        if labels is None or not isinstance(item, Integral) or isinstance(item, bool):
            return item
        matches = [i for i, c in enumerate(labels) if isinstance(c, Integral) and c == item]
        if not matches:
            raise ValueError(
                f"Sensitive feature {item!r} is not a column label of X; its labels: "
                f"{labels[:20]}."
            )
        return matches[0]

    def _with_sensitive_values(self, frame, values, *, fitting: bool):
        """``frame`` with the sensitive values as columns, and the names of those columns."""
        if isinstance(values, pd.DataFrame):
            check_value_columns(values, frame)
        sens = check_sensitive(values, n_rows=len(frame), name="sensitive_features")
        sens = sens.infer_objects()
        sens.columns = [str(c) for c in sens.columns]
        check_value_columns(sens, frame)
        if fitting:
            names = list(sens.columns)
            for name in names:
                check_sensitive_column(sens[name], name)
        else:
            names = list(self.names)
            if sorted(sens.columns) != sorted(names):
                raise ValueError(
                    f"verify got sensitive_features named {list(sens.columns)}, but fit used "
                    f"{names}; pass the values under those names (a Series or DataFrame "
                    "with those columns, or an array of as many columns as in fit)."
                )
        for name in names:  # by position, whatever the index of the values
            frame[name] = sens[name].array
        return frame, names

    def _resolve(self, frame, sensitive_features, *, fitting: bool):
        raw = self.raw
        method = "fit" if fitting else "verify"
        if fitting:
            self.by_name = raw is not None and names_columns(raw, frame)
        by_name = self.by_name
        if sensitive_features is not None:
            if by_name or (fitting and raw is not None):
                raise ValueError(
                    f"{method} got the sensitive features twice: in the constructor "
                    f"(sensitive_features={short_description(raw)}) and as {method}(..., "
                    "sensitive_features=...). Give one: FairnessVerifier(estimator, "
                    "sensitive_features=None) to pass the values to the methods."
                )
            return self._with_sensitive_values(frame, sensitive_features, fitting=fitting)
        if by_name:
            names = self._sensitive_names(frame) if fitting else list(self.names)
            return frame, names
        if raw is None:
            raise ValueError(
                f"{method} needs the sensitive features: name the columns of X in "
                "FairnessVerifier(estimator, sensitive_features=...), or pass their values "
                f"as {method}(X, y, sensitive_features=...)."
            )
        if fitting:
            return self._with_sensitive_values(frame, raw, fitting=True)
        raise ValueError(
            "The constructor's sensitive_features holds the values of the rows of fit; "
            "verify needs the values of its own rows: verify(X, y, sensitive_features=...)."
        )
