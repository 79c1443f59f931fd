"""Validation shared by every box: sensitive features, sample weights, categories.

One place for each fault: every box resolves ``sensitive_features`` with
:func:`check_sensitive_features` and ``sample_weight`` with :func:`check_sample_weight`,
so the same mistake gets the same exception everywhere.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from pandas.api.types import is_scalar

from ._categories import category_codes
from ._compat import _check_sample_weight

__all__ = [
    "SensitiveFeatures",
    "check_sample_weight",
    "check_sensitive",
    "check_sensitive_features",
    "check_unambiguous",
    "check_unique_columns",
]


def check_unambiguous(values, name) -> None:
    """Refuse a column whose distinct values print alike (e.g. ``1`` and ``"1"``).

    In an object column, ``1`` and ``"1"`` are different values but look the same in
    every table and report; merging them or keeping them apart would both be a guess,
    so the column is refused. The rule is the package's one category-matching rule,
    :func:`skfairverify.utils._categories.category_codes` (a string next to a number it
    prints like or parses to: ``"1"`` and ``1``, ``"1.0"`` and ``1``, ``"True"`` and
    ``True``).

    Parameters
    ----------
    values : array-like or Series
        The values of one column.
    name : str
        Name of the column, for the message.

    Raises
    ------
    ValueError
        Naming the column and the values that clash, with their types.

    Examples
    --------
    >>> from skfairverify.utils._validation import check_unambiguous
    >>> check_unambiguous(["a", "b"], "sex")
    >>> check_unambiguous([1, "1", 0], "sex")
    Traceback (most recent call last):
    ...
    ValueError: Column 'sex' mixes values that print alike: 1 (int) and '1' (str); ...
    """
    col = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, dtype=object))
    if col.dtype != object and not isinstance(col.dtype, pd.CategoricalDtype):
        return
    # The package's one matching rule decides what is ambiguous (see _categories).
    category_codes(col, name=name)


def check_unique_columns(X, what: str = "X") -> None:
    """Refuse a DataFrame (or a list of column names) with duplicated column names.

    With duplicated names ``X[name]`` is a DataFrame, not a column, and every later
    step would fail with an unrelated message (or read the wrong column).

    Parameters
    ----------
    X : DataFrame or sequence
        The data, or its column names.
    what : str, default="X"
        How the data is called in the message.

    Raises
    ------
    ValueError
        Listing the duplicated names.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.utils._validation import check_unique_columns
    >>> check_unique_columns(pd.DataFrame([[1, 2, 3]], columns=["a", "b", "c"]))
    >>> check_unique_columns(pd.DataFrame([[1, 2, 3]], columns=["a", "b", "a"]))
    Traceback (most recent call last):
    ...
    ValueError: X has duplicated column names ['a']; give every column its own name.
    """
    names = list(X.columns) if isinstance(X, pd.DataFrame) else list(X)
    if len(set(names)) == len(names):
        return
    dup = list(dict.fromkeys(c for c in names if names.count(c) > 1))
    raise ValueError(
        f"{what} has duplicated column names {dup}; give every column its own name."
    )


def check_sensitive(
    values,
    *,
    n_rows: int | None = None,
    index: pd.Index | None = None,
    name: str = "sensitive",
    against: str = "X",
) -> pd.DataFrame:
    """Sensitive attribute values as a validated DataFrame, one column per attribute.

    Parameters
    ----------
    values : array-like of shape (n_samples,) or (n_samples, n_attributes), Series or DataFrame
        The sensitive values. A 1-d array becomes the column ``name``; a 2-d one the
        columns ``name_0, name_1, ...``.
    n_rows : int, default=None
        Expected number of rows; the result then has a positional index.
    index : pandas.Index, default=None
        Index to give the result (e.g. ``X.index``); its length is the expected number
        of rows. Takes precedence over ``n_rows``.
    name : str, default="sensitive"
        How the values are called in error messages and default column names.
    against : str, default="X"
        What the expected number of rows is called in error messages.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        On a length mismatch, no column, no row, a missing value, values of different types that
        print alike (``1`` and ``"1"``, see :func:`check_unambiguous`), or an attribute
        with a single group; the message names the column.

    Examples
    --------
    >>> from skfairverify.utils._validation import check_sensitive
    >>> check_sensitive(["F", "M", "F"]).columns.tolist()
    ['sensitive']
    >>> check_sensitive(["F", "F"])
    Traceback (most recent call last):
    ...
    ValueError: sensitive column 'sensitive' has a single group ('F'); at least two are needed.
    """
    if isinstance(values, pd.DataFrame):
        frame = values.copy()
        if frame.shape[1] == 0:
            raise ValueError(f"{name} has no columns.")
    elif isinstance(values, pd.Series):
        frame = values.to_frame(name=values.name if values.name is not None else name)
    else:
        arr = np.asarray(values, dtype=object)
        if arr.ndim == 1:
            frame = pd.DataFrame({name: arr})
        elif arr.ndim == 2:
            frame = pd.DataFrame(arr, columns=[f"{name}_{j}" for j in range(arr.shape[1])])
        else:
            raise ValueError(f"{name} must be 1- or 2-dimensional; got shape {arr.shape}.")
    expected = len(index) if index is not None else n_rows
    if expected is not None and len(frame) != expected:
        raise ValueError(
            f"{name} has {len(frame)} rows but {against} has {expected}; lengths must match."
        )
    if index is not None:
        frame.index = index
    elif n_rows is not None:
        frame = frame.reset_index(drop=True)
    _check_groups(frame, name)
    return frame


def _check_groups(frame: pd.DataFrame, name: str) -> None:
    """Every sensitive column: rows, no missing value, unambiguous, two groups at least."""
    if len(frame) == 0:
        raise ValueError(f"{name} has no rows: at least two groups are needed.")
    for col in frame.columns:
        if frame[col].isna().any():
            raise ValueError(f"{name} column {col!r} contains NaN (missing values).")
        check_unambiguous(frame[col], str(col))
        if frame[col].nunique() < 2:
            raise ValueError(
                f"{name} column {col!r} has a single group ({frame[col].iloc[0]!r}); "
                "at least two are needed."
            )


class SensitiveFeatures(NamedTuple):
    """Resolved sensitive features: their values and, when named, the columns of X."""

    frame: pd.DataFrame
    """One column per sensitive attribute, aligned with the rows (index of X if any)."""
    names: list | None
    """The columns of ``X`` they were read from, or ``None`` when given as values."""


def _as_names(sensitive_features, X) -> list | None:
    """The column names meant by ``sensitive_features``, or None when they are values."""
    if isinstance(sensitive_features, (pd.Series, pd.DataFrame, np.ndarray)):
        return None
    columns = X.columns if isinstance(X, pd.DataFrame) else pd.Index([])
    if is_scalar(sensitive_features):
        if sensitive_features not in columns:
            raise ValueError(
                f"sensitive_features {sensitive_features!r} is not a column of X; columns: "
                f"{list(columns)}. Pass a column name, a list of names, or the values."
            )
        return [sensitive_features]
    items = list(sensitive_features)
    if items and all(is_scalar(v) and v in columns for v in items):
        if len(set(items)) != len(items):
            raise ValueError(f"sensitive_features names a column twice: {items}.")
        return items
    return None


def check_sensitive_features(
    sensitive_features, X=None, *, n_rows: int | None = None, name: str = "sensitive_features"
) -> SensitiveFeatures:
    """Resolve ``sensitive_features`` as fairlearn does: names of columns of X, or values.

    Parameters
    ----------
    sensitive_features : str, list of str, array-like, Series or DataFrame
        A column name of ``X``, a list of column names, or the values themselves (one
        row per row of ``X``; a DataFrame or 2-d array gives several attributes, whose
        intersections are the groups).
    X : DataFrame or array-like, default=None
        The rows. Names are looked up among its columns; values must have its length.
    n_rows : int, default=None
        Number of rows when ``X`` is not given.
    name : str, default="sensitive_features"
        How the parameter is called in messages.

    Returns
    -------
    SensitiveFeatures
        ``frame`` (validated by :func:`check_sensitive`, indexed like ``X``) and ``names``
        (the columns of ``X``, or ``None`` for values).

    Raises
    ------
    ValueError
        A name that is not a column of ``X``, values of the wrong length, NaN, values
        that print alike, an attribute with one group.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.utils._validation import check_sensitive_features
    >>> X = pd.DataFrame({"x": [1.0, 2.0, 3.0], "sex": ["F", "M", "F"]})
    >>> check_sensitive_features("sex", X).names
    ['sex']
    >>> check_sensitive_features(["a", "b", "b"], X).frame.iloc[:, 0].tolist()
    ['a', 'b', 'b']
    >>> check_sensitive_features("race", X)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: sensitive_features 'race' is not a column of X; columns: ['x', 'sex']. ...
    """
    if sensitive_features is None:
        raise ValueError(f"{name} is required: a column name, a list of names or the values.")
    names = _as_names(sensitive_features, X)
    index = X.index if isinstance(X, pd.DataFrame) else None
    if names is not None:
        frame = check_sensitive(X[names], index=index, name=name)
        return SensitiveFeatures(frame, names)
    if X is not None:
        n_rows = len(X) if hasattr(X, "__len__") else X.shape[0]
    if not isinstance(sensitive_features, (pd.Series, pd.DataFrame, np.ndarray)):
        items = list(sensitive_features)
        if n_rows is not None and len(items) != n_rows and all(is_scalar(v) for v in items):
            missing = [v for v in items if not (isinstance(X, pd.DataFrame) and v in X.columns)]
            raise ValueError(
                f"{name} {items!r} is neither a list of columns of X (not found: {missing}) "
                f"nor one value per row ({len(items)} values for {n_rows} rows)."
            )
    frame = check_sensitive(sensitive_features, index=index,
                            n_rows=None if index is not None else n_rows, name=name)
    return SensitiveFeatures(frame, None)


def check_sample_weight(sample_weight, n_rows: int, *, name: str = "sample_weight"):
    """Validated non-negative finite weights, or ``None`` for unit weights.

    Parameters
    ----------
    sample_weight : array-like of shape (n_rows,) or None
    n_rows : int
    name : str, default="sample_weight"

    Returns
    -------
    ndarray of shape (n_rows,) of float64, or None

    Raises
    ------
    ValueError
        Wrong length, NaN or infinite weights, negative weights, or weights that sum to 0.

    Examples
    --------
    >>> from skfairverify.utils._validation import check_sample_weight
    >>> check_sample_weight([1, 2, 0], 3).tolist()
    [1.0, 2.0, 0.0]
    >>> check_sample_weight([1, -1, 0], 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...
    """
    if sample_weight is None:
        return None
    arr = np.asarray(sample_weight)
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise ValueError(
            f"{name} must have one weight per row ({n_rows}); got shape {arr.shape}."
        )
    weights = _check_sample_weight(arr, np.empty((n_rows, 0)), dtype=np.float64,
                                   ensure_non_negative=True)
    if not np.isfinite(weights).all():
        raise ValueError(f"{name} contains NaN or infinite weights.")
    if not weights.sum() > 0:
        raise ValueError(f"{name} sums to 0: no row carries weight.")
    return weights
