"""Validation shared by every box: the sensitive attributes of a set of rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["check_sensitive", "check_unambiguous"]


def check_unambiguous(values, name) -> None:
    """Refuse a column whose distinct values print alike (e.g. ``1`` and ``"1"``).

    In an object column, ``1`` and ``"1"`` are different values but look the same in
    every table and report; merging them or keeping them apart would both be a guess,
    so the column is refused.

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
    >>> from skfairverify._validation import check_unambiguous
    >>> check_unambiguous(["a", "b"], "sex")
    >>> check_unambiguous([1, "1", 0], "sex")
    Traceback (most recent call last):
    ...
    ValueError: Column 'sex' mixes values that print alike: 1 (int) and '1' (str); ...
    """
    col = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, dtype=object))
    if col.dtype != object and not isinstance(col.dtype, pd.CategoricalDtype):
        return
    seen: dict[str, object] = {}
    for v in pd.unique(col.to_numpy(dtype=object)):
        key = str(v)
        if key in seen:  # pd.unique kept both, so they differ (e.g. by type)
            first = seen[key]
            raise ValueError(
                f"Column {name!r} mixes values that print alike: {first!r} "
                f"({type(first).__name__}) and {v!r} ({type(v).__name__}); they would be "
                "taken for one group or for two indistinguishable ones. Convert the column "
                "to one type first, e.g. X[col] = X[col].astype(str)."
            )
        seen.setdefault(key, v)



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
        On a length mismatch, no column, a missing value, values of different types that
        print alike (``1`` and ``"1"``, see :func:`check_unambiguous`), or an attribute
        with a single group; the message names the column.

    Examples
    --------
    >>> from skfairverify._validation import check_sensitive
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
    for col in frame.columns:
        if frame[col].isna().any():
            raise ValueError(f"{name} column {col!r} contains NaN (missing values).")
        check_unambiguous(frame[col], str(col))
        if frame[col].nunique() < 2:
            raise ValueError(
                f"{name} column {col!r} has a single group ({frame[col].iloc[0]!r}); "
                "at least two are needed."
            )
    return frame
