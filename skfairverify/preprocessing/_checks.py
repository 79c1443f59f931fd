"""Input checks shared by the preprocessing estimators: numeric columns, finite values."""

from __future__ import annotations

import numpy as np
import pandas as pd


def column_names(estimator, n_columns: int) -> list[str]:
    """Names of the input columns: ``feature_names_in_``, else ``x0, x1, ...``."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return [f"x{j}" for j in range(n_columns)]
    return [str(c) for c in names]


def check_finite_columns(values: np.ndarray, names) -> None:
    """Raise a ValueError naming the first column of ``values`` with NaN or infinity."""
    bad = ~np.isfinite(values)
    if bad.any():
        j = int(np.nonzero(bad.any(axis=0))[0][0])
        what = "NaN" if np.isnan(values[:, j]).any() else "infinity"
        raise ValueError(f"Input X contains {what} in column {names[j]!r}.")


def check_numeric_columns(X, owner: str) -> None:
    """Refuse a column of a DataFrame (or of an object / string array) that is not numeric.

    A DataFrame's columns are also checked for NaN and infinity, by name.
    """
    if isinstance(X, pd.DataFrame):
        for col in X.columns:
            dtype = X[col].dtype
            if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
                raise ValueError(
                    f"Column {col!r} is not numeric (dtype {dtype}); "
                    f"{owner} bins numeric features only."
                )
        values = X.to_numpy(dtype=float, na_value=np.nan)
        check_finite_columns(values, list(X.columns))
    elif isinstance(X, np.ndarray) and X.dtype.kind in "OUS" and X.ndim == 2:
        for j in range(X.shape[1]):
            try:
                np.asarray(X[:, j], dtype=np.float64)
            except ValueError as exc:
                raise ValueError(
                    f"Column 'x{j}' is not numeric ({exc}); {owner} bins numeric features only."
                ) from exc
