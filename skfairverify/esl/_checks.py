"""Validation of the inputs of the ESL box (labels, parameters, players)."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from ..utils._categories import category_codes, match_categories, positive_label
from ..utils._validation import check_unique_columns
from ._values import VALUE_NAMES, _resolve_coefficients
from ._variance import _check_metric

__all__ = ["check_esl_params"]


def _check_baseline(baseline) -> float:
    if (isinstance(baseline, bool) or not isinstance(baseline, numbers.Real)
            or not np.isfinite(baseline) or baseline <= 0):
        raise ValueError(f"baseline must be a positive finite number, got {baseline!r}.")
    return float(baseline)


def _check_confidence(confidence) -> float:
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0 < confidence < 1):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}.")
    return float(confidence)


def _check_value(value):
    """Check an ESL member name or an array of constants (its length is checked later)."""
    if isinstance(value, str):
        _resolve_coefficients(value, 2)  # raises on unknown names
    return value


def check_esl_params(metric="tpr", value="shapley", baseline=0.5) -> None:
    """Check the parameters that :func:`group_esl` and the ESL scorer share.

    Parameters
    ----------
    metric : str, default="tpr"
        The classification metric: one of ``"selection_rate"``, ``"tpr"``, ``"fpr"``,
        ``"ppv"``, ``"npv"``.
    value : str or array-like, default="shapley"
        The ESL member: a name of :func:`esl_coefficients` or the constants ``b_1..b_n``.
    baseline : float, default=0.5
        Positive, finite.

    Raises
    ------
    ValueError
        Naming the parameter that is wrong.

    Examples
    --------
    >>> from skfairverify.esl import check_esl_params
    >>> check_esl_params("tpr", "solidarity", 0.5)
    >>> check_esl_params("auc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Unknown metric 'auc'; valid metrics are 'selection_rate', 'tpr', ...
    """
    _check_metric(metric)
    _check_value(value)
    _check_baseline(baseline)


def _label_vector(values, name: str) -> np.ndarray:
    """1-d array of labels without missing values."""
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(f"{name} must be one-dimensional, got {values.shape[1]} columns.")
        values = values.iloc[:, 0]
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}.")
    if pd.isna(arr).any():
        raise ValueError(f"{name} contains NaN.")
    return arr


def _binary_targets(arrays: dict, pos_label=None) -> list[np.ndarray]:
    """0/1 vectors (1 = ``pos_label``) of label arrays that share one pair of labels.

    ``arrays`` maps each array's name to its values (e.g. ``y_true`` and ``y_pred``).
    Labels are matched by the package's one rule (``1``, ``1.0`` and ``True`` are one
    label, ``"1"`` another, and the two together are refused); the favorable one is
    ``pos_label``, or ``1`` for labels in ``{0, 1}`` / ``{-1, 1}``
    (:func:`~skfairverify.utils._categories.positive_label`).
    """
    vectors = [_label_vector(v, name) for name, v in arrays.items()]
    if all(v.dtype.kind in "biuf" for v in vectors):
        joined = np.concatenate(vectors)  # numbers stay numbers (fast factorization)
    else:
        joined = np.concatenate([v.astype(object) for v in vectors])
    names = " and ".join(arrays)
    codes, labels = category_codes(joined, name=names)
    positive = positive_label(labels, pos_label, name=names)
    hit = match_categories([positive], labels, name=names)[0]
    out, start = [], 0
    for v in vectors:
        out.append((codes[start:start + v.shape[0]] == hit).astype(np.int8))
        start += v.shape[0]
    return out


def _binary_vector(values, name: str, pos_label=None) -> np.ndarray:
    """0/1 vector (1 = favorable, ``pos_label``) of one label array."""
    return _binary_targets({name: values}, pos_label)[0]


def _check_same_length(values: np.ndarray, name: str, n_rows: int, against: str) -> None:
    if values.shape[0] != n_rows:
        raise ValueError(
            f"{name} has {values.shape[0]} rows but {against} has {n_rows}; lengths must match."
        )


def _check_values_names(values) -> tuple[str, ...]:
    """Check the ESL members of ``esl_decomposition``: known names, one or more, unique."""
    values = (values,) if isinstance(values, str) else tuple(values)
    if not values:
        raise ValueError("values must name at least one ESL value.")
    for v in values:
        if not isinstance(v, str) or v not in VALUE_NAMES:
            raise ValueError(
                f"Unknown ESL value {v!r} in values; valid names are "
                f"{', '.join(map(repr, VALUE_NAMES))}."
            )
    if len(set(values)) != len(values):
        raise ValueError(f"values contains duplicates: {values!r}.")
    return values


def _as_frame(X, name):
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X, name)
        return X
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got shape {arr.shape}.")
    return pd.DataFrame(arr)


def _players_from(features, X: pd.DataFrame, sensitive_cols: list) -> dict:
    if features is None:
        return {c: [c] for c in X.columns if c not in sensitive_cols}
    if isinstance(features, dict):
        return {k: list(v) if isinstance(v, (list, tuple)) else [v]
                for k, v in features.items()}
    if isinstance(features, str):
        features = [features]
    return {c: [c] for c in features}


def _check_player_columns(players: dict, X: pd.DataFrame, sensitive_cols: list) -> None:
    seen = set()
    for name, cols in players.items():
        if not cols:
            raise ValueError(f"feature {name!r} has no columns.")
        for c in cols:
            if c not in X.columns:
                raise ValueError(f"feature column {c!r} is not a column of X.")
            if c in sensitive_cols:
                raise ValueError(
                    f"feature column {c!r} is a sensitive feature; it is never a model feature."
                )
            if c in seen:
                raise ValueError(f"column {c!r} appears in more than one feature.")
            seen.add(c)


def _resolve_features(features, X: pd.DataFrame, sensitive_cols: list) -> dict:
    """Players as ``{name: [columns]}``."""
    players = _players_from(features, X, sensitive_cols)
    if not players:
        raise ValueError("features is empty: at least one feature (player) is needed.")
    _check_player_columns(players, X, sensitive_cols)
    return players
