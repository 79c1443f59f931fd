"""The sensitive features of the counterfactual audit: columns of X or values, and groups.

The audit works on one frame, the *audit frame*: ``X`` itself when the sensitive
features are columns of ``X``, else ``X`` with the sensitive values appended as
columns. The generator keeps those columns fixed and the sensitive-feature classifier
never reads them; the decision model reads ``X`` as given. Several attributes form
one group per combination of their values (their intersection), labelled by the
values joined with ``"|"`` (e.g. ``"Female|Black"``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import is_scalar

from ..utils._validation import check_sensitive, check_sensitive_features

__all__ = ["SEPARATOR", "group_labels", "method_values", "resolve_fit_sensitive",
           "with_values"]

SEPARATOR = "|"


def group_labels(frame: pd.DataFrame) -> np.ndarray:
    """The group of each row: the value of one attribute, or ``"a|b"`` for several.

    Parameters
    ----------
    frame : DataFrame
        One column per sensitive attribute.

    Returns
    -------
    numpy.ndarray of object
        One label per row: the raw value for one attribute; for several, the ``str``
        of the values joined with ``"|"`` in the order of the columns.

    Raises
    ------
    ValueError
        If a value of a compound attribute contains ``"|"`` (two combinations could
        then get the same label).

    Examples
    --------
    >>> import pandas as pd
    >>> from skfairverify.counterfactual._sensitive import group_labels
    >>> group_labels(pd.DataFrame({"sex": ["F", "M"], "race": ["B", "W"]})).tolist()
    ['F|B', 'M|W']
    """
    if frame.shape[1] == 1:
        return frame.iloc[:, 0].to_numpy(dtype=object)
    text = frame.astype(object).map(str)
    for col in text.columns:
        clash = [v for v in pd.unique(text[col]) if SEPARATOR in v]
        if clash:
            raise ValueError(
                f"Sensitive attribute {col!r} has values containing {SEPARATOR!r} "
                f"({clash[:3]}), which separates the attributes of a compound group label; "
                "replace that character in the values."
            )
    columns = [text[col] for col in text.columns]  # vectorised: a row loop took seconds
    return columns[0].str.cat(columns[1:], sep=SEPARATOR).to_numpy(dtype=object)


def _value_names(frame: pd.DataFrame, X: pd.DataFrame) -> list:
    """Names of the appended value columns: their own, unless they clash with X's."""
    names = list(frame.columns)
    ok = all(isinstance(c, str) and c not in X.columns for c in names)
    if ok and len(set(names)) == len(names):
        return names
    return [f"__sensitive_{j}__" for j in range(len(names))]


def with_values(X: pd.DataFrame, frame: pd.DataFrame, names: list) -> pd.DataFrame:
    """The audit frame: ``X`` with the sensitive values appended as columns ``names``."""
    values = {name: frame.iloc[:, j].to_numpy() for j, name in enumerate(names)}
    return X.assign(**values)


def method_values(values, X: pd.DataFrame, method: str) -> pd.DataFrame:
    """Validate the ``sensitive_features`` values passed to ``fit`` / ``evaluate``.

    Parameters
    ----------
    values : array-like, Series or DataFrame
        One value (one row) per row of ``X``.
    X : DataFrame
        The rows.
    method : str
        The method, for the messages.

    Returns
    -------
    DataFrame
        One column per attribute, indexed like ``X``.
    """
    if is_scalar(values) or (
        isinstance(values, (list, tuple)) and len(values) != len(X)
        and all(is_scalar(v) and v in X.columns for v in values)
    ):
        raise TypeError(
            f"{method}(sensitive_features=...) takes the values, one per row of X; got "
            f"{values!r}. Name columns of X in the constructor instead: "
            f"CounterfactualFairness(estimator, sensitive_features={values!r})."
        )
    return check_sensitive(values, index=X.index, name="sensitive_features")


def resolve_fit_sensitive(own, values, X: pd.DataFrame):
    """The sensitive features of ``fit``: ``(audit frame, columns, from_values)``.

    Parameters
    ----------
    own : str, list, array-like or None
        The constructor's ``sensitive_features``: column names of ``X`` or values.
    values : array-like or None
        The ``sensitive_features`` values passed to ``fit``.
    X : DataFrame
        The training rows.

    Returns
    -------
    tuple
        The audit frame, the list of its sensitive columns, and whether they are
        values (appended to ``X``) rather than columns of ``X``.
    """
    if own is not None and values is not None:
        raise ValueError(
            "CounterfactualFairness got the sensitive features twice: "
            "sensitive_features in the constructor and in fit. Pass one: names of "
            "columns of X (or values) to the constructor, or values to fit with "
            "sensitive_features=None in the constructor."
        )
    if own is None and values is None:
        raise ValueError(
            "CounterfactualFairness has no sensitive features: name the columns of X "
            "with CounterfactualFairness(estimator, sensitive_features=...), or pass the "
            "values with fit(X, y, sensitive_features=...)."
        )
    if values is not None:
        frame = method_values(values, X, "fit")
    else:
        if is_scalar(own) and own not in X.columns:
            raise ValueError(
                f"Sensitive column {own!r} not found in X; available columns: "
                f"{list(X.columns)}."
            )
        resolved = check_sensitive_features(own, X)
        if resolved.names is not None:
            return X, list(resolved.names), False
        frame = resolved.frame
    names = _value_names(frame, X)
    return with_values(X, frame, names), names, True
