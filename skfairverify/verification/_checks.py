"""Input checks of the verifier: X as a table, the labels, rows of weight 0."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from scipy.sparse import issparse
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import column_or_1d

from ..s3p import BayesNet
from ..utils._validation import check_unambiguous, check_unique_columns
from ._sensitive import distinct_values

__all__ = [
    "check_binary", "check_fit_labels", "check_frame", "check_verify_frame", "check_y_shape",
    "estimator_has", "missing_values_error", "positive_labels", "positive_rows", "same_label",
    "take_rows", "takes_sensitive_features",
]


def estimator_has(attr):
    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


def takes_sensitive_features(estimator, method: str) -> bool:
    """Whether ``estimator.<method>`` takes ``sensitive_features`` (fairlearn mitigators).

    True when the signature names it, or for a fairlearn estimator whose method takes
    ``**kwargs`` (``ExponentiatedGradient.fit``).
    """
    func = getattr(estimator, method, None)
    if func is None:
        return False
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    if "sensitive_features" in params:
        return True
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return var_kw and type(estimator).__module__.split(".")[0] == "fairlearn"


def check_y_shape(y, n_rows: int) -> np.ndarray:
    y = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if y.ndim == 2 and y.shape[1] == 1:  # a column vector, as scikit-learn: warn, ravel
        y = column_or_1d(y, warn=True)
    if y.ndim != 1 or len(y) != n_rows:
        raise ValueError(
            f"y must be 1-dimensional with {n_rows} entries (one per row of X); got shape "
            f"{y.shape}."
        )
    return y


def check_binary(y) -> None:
    """Refuse more than two distinct labels before fitting (NaN labels are not counted)."""
    values = [v for v in pd.unique(y.astype(object)) if not pd.isna(v)]
    if len(values) > 2 and y.dtype.kind == "f" and np.any(np.asarray(values) % 1 != 0):
        raise ValueError(
            f"Unknown label type: continuous (y has {len(values)} distinct non-integer "
            "values). FairnessVerifier verifies binary classifiers: y must hold two classes."
        )
    if len(values) > 2:
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"multiclass: y has {len(values)} classes "
            f"{sorted(values, key=str)[:10]}; equalized odds and the integer rule need two."
        )


def same_label(value, cls) -> bool:
    """Whether a label equals a class, refusing ``"1"`` for ``1`` (str vs number)."""
    if isinstance(value, str) != isinstance(cls, str):
        return False
    return bool(value == cls)


def missing_values_error(exc: Exception, frame: pd.DataFrame, estimator) -> Exception:
    """The error of a model that cannot fit ``X`` with missing values, naming the columns.

    ``exc`` itself when ``X`` has no missing value, or the error is not about them.
    """
    counts = {c: int(n) for c, n in frame.isna().sum().items() if n}
    if not counts or not any(w in str(exc).lower() for w in ("nan", "missing")):
        return exc
    shown = ", ".join(f"{c!r} ({n:,})" for c, n in list(counts.items())[:10])
    return ValueError(
        f"{type(estimator).__name__} could not be fitted on X, which has missing values "
        f"(NaN) in the column(s) {shown}: {' '.join(str(exc).split())[:300]}. The verifier "
        "takes missing values as data, but the model must read them: put an imputer "
        "(sklearn.impute.SimpleImputer) in the pipeline before the steps that read those "
        "columns, use a model that handles NaN (HistGradientBoostingClassifier), or drop "
        "or fill the rows first."
    )


def take_rows(X, rows):
    """Take the rows ``rows`` of ``X`` (DataFrame, sparse matrix or array-like)."""
    if isinstance(X, (pd.DataFrame, pd.Series)):
        return X.iloc[rows]
    if isinstance(X, np.ndarray) or hasattr(X, "toarray"):
        return X[rows]
    return [X[int(i)] for i in rows]


def positive_rows(frame: pd.DataFrame, y, weight):
    """``frame``, ``y`` and ``weight`` without the rows of weight 0 (same as no row)."""
    if weight is None or weight.all():
        return frame, y, weight
    keep = weight > 0
    return (frame[keep].reset_index(drop=True), None if y is None else y[keep],
            weight[keep])


def check_frame(X, *, fitting: bool) -> tuple[pd.DataFrame, list | None]:
    """``X`` as the verifier's frame, and its column labels when they are not strings.

    Refuses sparse data, non-2-d arrays, no rows or no columns, and a single row in
    ``fit``. With column labels that are not all strings, the columns are renamed
    ``x0, x1, ...`` (scikit-learn then reads them by position) and the labels are
    returned, else None.
    """
    if issparse(X):
        raise TypeError(
            "Sparse data was passed for X, but dense data is required: "
            "FairnessVerifier reads X as a table. Convert it with X.toarray()."
        )
    positional = None
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X)
        # A shallow copy: the verifier adds and renames columns of its own frame and
        # never writes into the rows, so X's data is shared, not duplicated.
        frame = X.copy(deep=False)
        # Not-string column names are not feature names for scikit-learn: the
        # estimator then reads the columns by position, as x0, x1, ...; an integer
        # sensitive_features is then one of these labels (SensitiveColumns).
        named = all(isinstance(c, str) for c in frame.columns)
        if not named:
            positional = list(frame.columns)
        frame.columns = [c if named else f"x{i}" for i, c in enumerate(frame.columns)]
    else:
        arr = np.asarray(X, dtype=object)
        if arr.ndim != 2:
            raise ValueError(
                f"X must be 2-dimensional (n_samples, n_features); got shape {arr.shape}."
            )
        frame = pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])
        frame = frame.infer_objects()
    if len(frame) == 0:
        raise ValueError("X has no rows; FairnessVerifier needs data.")
    if frame.shape[1] == 0:
        raise ValueError(
            f"0 feature(s) (shape={frame.shape}) while a minimum of 1 is required by "
            "FairnessVerifier."
        )
    if fitting and len(frame) == 1:
        raise ValueError(
            "FairnessVerifier needs at least 2 samples (two groups); got n_samples = 1."
        )
    # Missing values are data: a state of their own in the network, read by the
    # model as it reads them (an imputer of the pipeline, or NaN given to it).
    return frame, positional


def positive_labels(y, n_rows: int, classes) -> np.ndarray:
    """Whether each label is the positive class ``classes[1]``; refuses unreadable labels."""
    y = check_y_shape(y, n_rows)
    positive = classes[1]
    classes = list(classes.tolist() if hasattr(classes, "tolist") else classes)
    values = pd.unique(y.astype(object))
    missing = [v for v in values if pd.isna(v)]
    if missing:
        raise ValueError(
            f"y contains missing labels ({int(pd.isna(y).sum())} NaN/None); a label "
            "must be one of the estimator's classes "
            f"{classes}. Drop or impute those rows."
        )
    if len(values) > 2:
        raise ValueError(
            f"y has {len(values)} distinct labels {sorted(values, key=str)[:10]}; "
            "equalized odds needs binary labels, the estimator's classes "
            f"{classes}."
        )
    unknown = [v for v in values if not any(same_label(v, c) for c in classes)]
    if unknown:
        raise ValueError(
            f"y has label(s) {sorted(unknown, key=str)} (type "
            f"{sorted({type(v).__name__ for v in unknown})}) that are not in the "
            f"estimator's classes {classes} (type "
            f"{sorted({type(c).__name__ for c in classes})}); encode y as in fit."
        )
    return np.asarray(y.astype(object) == positive, dtype=bool)


def check_fit_labels(y, n_rows: int, estimator):
    """``y`` checked for ``fit``: needed unless the model is frozen, binary, one per row."""
    if y is None and not isinstance(estimator, FrozenEstimator):
        raise ValueError(
            "FairnessVerifier requires y to be passed, but the target y is None: y "
            "is required to fit the estimator; pass y, or wrap a fitted model in "
            "sklearn.frozen.FrozenEstimator."
        )
    if y is None:
        return None
    y = check_y_shape(y, n_rows)
    check_binary(y)
    return y


def check_verify_frame(frame: pd.DataFrame, network, variables, sensitive) -> None:
    """Refuse to verify with a user network, missing columns or a single group."""
    if isinstance(network, BayesNet):
        raise ValueError(
            "verify re-estimates the network from data; this verifier was given a "
            "fixed BayesNet. Use network='learn' or 'independent'."
        )
    missing = [c for c in variables if c not in frame.columns]
    if missing:
        raise ValueError(f"X lacks the column(s) {missing} used by the verifier.")
    for s in sensitive:
        distinct = distinct_values(frame[s])
        check_unambiguous(distinct, s)
        if distinct.nunique() < 2:
            raise ValueError(
                f"Sensitive feature {s!r} has a single group in X; fairness needs two."
            )
