"""The audit's data and model: bundled or CSV data, the default model, column handling."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

DATASETS = ("adult", "german", "compas")

# The privileged value of each sensitive column of the bundled data, as their
# descriptions (``skfairverify/datasets/descr``) document it; compas: "Caucasian", the
# reference group of ProPublica's analysis (its sex column has no documented value).
PRIVILEGED = {
    "adult": {"sex": "Male", "race": "White"},
    "german": {"sex": "Male", "age_group": "old"},
    "compas": {"race": "Caucasian"},
}


def default_model() -> object:
    """The audit's linear model: scaled numbers and one-hot categories, then LR.

    Columns are selected by dtype, so the same pipeline fits any subset of columns
    (the second ESL stage refits it on feature coalitions).

    Returns
    -------
    sklearn.pipeline.Pipeline
        An unfitted pipeline.

    Examples
    --------
    >>> from skfairverify.audit import default_model
    >>> type(default_model()[-1]).__name__
    'LogisticRegression'
    """
    return make_pipeline(
        make_column_transformer(
            (StandardScaler(), make_column_selector(dtype_include="number")),
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_exclude="number"),
            ),
        ),
        LogisticRegression(max_iter=2000),
    )


def load_bundled(name: str) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    """Features, labels and usual sensitive columns of a bundled dataset."""
    from ..datasets import load_adult, load_compas, load_german

    if name == "adult":
        bunch = load_adult(dropna=True)
        X = bunch.data.drop(columns=["split", "fnlwgt"])
    elif name == "german":
        bunch = load_german()
        X = bunch.data
    elif name == "compas":
        bunch = load_compas(propublica_filter=True)
        X = bunch.data
    else:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {list(DATASETS)}.")
    y = pd.Series(np.asarray(bunch.target), index=X.index, name="target")
    return X, y, list(bunch.sensitive_features)


def _binary_target(labels: pd.Series, target: str, positive) -> pd.Series:
    """0/1 labels, 1 where the label is ``positive`` (guessed when there are two values)."""
    values = sorted(pd.unique(labels), key=str)
    shown = [str(v) for v in values[:10]] + (["..."] if len(values) > 10 else [])
    if len(values) < 2:
        raise ValueError(f"Target {target!r} has the single value {shown}; the audit needs "
                         "favorable and unfavorable outcomes.")
    if positive is None:
        if len(values) != 2:
            raise ValueError(
                f"Target {target!r} has {len(values)} values {shown}; pass --positive VALUE "
                "to say which one is the favorable outcome."
            )
        positive = 1 if set(map(str, values)) == {"0", "1"} else values[-1]
    elif str(positive) not in set(map(str, values)):
        raise ValueError(f"--positive {positive!r} is not a value of the target {target!r}: "
                         f"{shown}.")
    return (labels.astype(str) == str(positive)).astype(int).rename("target")


def read_csv(path: str) -> pd.DataFrame:
    """The CSV file's rows, or a ValueError / OSError naming what is wrong with the file."""
    if Path(path).is_dir():
        raise ValueError(f"{path} is a directory, not a CSV file.")
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError as exc:
        raise ValueError(f"{path} is empty: no header row, no data.") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        detail = " ".join(str(exc).split())
        raise ValueError(f"{path} is not a readable CSV file ({detail}).") from exc
    if frame.empty:
        raise ValueError(f"{path} has a header row but no data rows.")
    return frame


def check_columns(frame: pd.DataFrame, target, sensitive_features: Sequence[str],
                  source: str) -> None:
    """Refuse sensitive (or target) columns ``frame`` lacks, and a sensitive target."""
    missing = [c for c in [target, *sensitive_features] if c is not None
               and c not in frame.columns]
    if missing:
        raise ValueError(f"Column(s) {missing} not found in {source}; columns: {list(frame)}.")
    if target is not None and target in sensitive_features:
        raise ValueError(f"The sensitive column {target!r} is the target (--target): a "
                         "sensitive column must be a feature, not the label.")


def load_csv(path: str, target: str, sensitive_features: Sequence[str], positive=None):
    """Features, 0/1 labels and sensitive columns of a CSV file (rows with NaN dropped)."""
    frame = read_csv(path)
    check_columns(frame, target, sensitive_features, path)
    kept = frame.dropna()
    if kept.empty:
        gaps = [str(c) for c in frame.columns if frame[c].isna().any()]
        raise ValueError(f"Every one of the {len(frame)} rows of {path} has a missing value "
                         f"(NaN; columns with missing values: {gaps}); the audit drops such "
                         "rows and none is left.")
    frame = kept.copy()
    y = _binary_target(frame.pop(target), target, positive)
    for col in frame.columns:
        if frame[col].dtype == object or col in sensitive_features:
            frame[col] = frame[col].astype("category")
    return frame, y, list(sensitive_features)


def resolve_privileged(X: pd.DataFrame, attribute: str, given, dataset: str | None):
    """The privileged value of ``attribute`` and why it is that one, or ``(None, None)``.

    ``given`` (``--privileged``, text) is matched to the column's values by its text;
    otherwise a bundled dataset's documented value is taken (``PRIVILEGED``). ``None``
    leaves the choice to the counterfactual step (highest favorable decision rate).
    """
    values = list(pd.unique(X[attribute].dropna()))
    if given is not None:
        match = [v for v in values if str(v) == str(given)]
        if not match:
            raise ValueError(f"--privileged {given!r} is not a value of {attribute!r}: "
                             f"{sorted(map(str, values))}.")
        return match[0], "given with --privileged"
    default = PRIVILEGED.get(dataset or "", {}).get(attribute)
    if default is not None and default in values:
        return default, (f"the documented privileged value of the {dataset} data "
                         "(change it with --privileged)")
    return None, None


def top_features(model, X: pd.DataFrame, candidates: list[str], n: int, y=None,
                 random_state=0) -> list[str]:
    """The ``n`` raw columns that move the model's decisions most on ``X``.

    A linear model (anything :func:`~skfairverify.linear_rule` reads): the spread of each
    column's contribution to the decision function. Any other model: scikit-learn's
    permutation importance (accuracy on ``X, y``, 5 repeats), which needs ``y``.
    """
    from .._linear import linear_rule

    try:
        rule = linear_rule(model)
    except TypeError:
        return _permutation_ranking(model, X, candidates, n, y, random_state)
    spread = {}
    for col in candidates:
        if col in rule.numeric_features:
            spread[col] = abs(rule.coef[col]) * float(X[col].astype(float).std())
        elif col in rule.categorical_features:
            coefs = rule.category_coef(col)
            contrib = X[col].astype(object).map(dict(zip(coefs.index, coefs.to_numpy())))
            spread[col] = float(pd.to_numeric(contrib, errors="coerce").fillna(0.0).std())
    ranked = sorted(spread, key=lambda c: -spread[c])
    return ranked[:n]


def _permutation_ranking(model, X, candidates, n, y, random_state) -> list[str]:
    """Candidates ranked by permutation importance (the decrease of accuracy)."""
    from sklearn.inspection import permutation_importance

    if y is None:
        raise ValueError("Ranking the features of a non-linear model needs the labels y.")
    result = permutation_importance(model, X, y, n_repeats=5, random_state=random_state)
    importance = dict(zip(X.columns, result.importances_mean))
    ranked = sorted(candidates, key=lambda c: -importance[c])
    return ranked[:n]


def taking_all_columns(model, X: pd.DataFrame):
    """Let a fitted model that reads a subset of the columns take the whole of ``X``."""
    names = getattr(model, "feature_names_in_", None)
    if names is None or list(names) == list(X.columns):
        return model
    missing = [c for c in names if c not in X.columns]
    if missing:
        raise ValueError(f"The model was fitted on column(s) {missing} that the data lacks.")
    select = make_column_transformer(
        ("passthrough", list(names)), remainder="drop", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(select.fit(X), FrozenEstimator(model))


def unaware_model(X_train: pd.DataFrame, y_train, sensitive_features: list[str]):
    """The default model fitted on the non-sensitive columns (fairness under unawareness)."""
    features = [c for c in X_train.columns if c not in sensitive_features]
    select = make_column_transformer(
        ("passthrough", features), remainder="drop", verbose_feature_names_out=False
    ).set_output(transform="pandas")
    return make_pipeline(select, default_model()).fit(X_train, y_train)
