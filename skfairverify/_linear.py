"""Read a fitted linear classifier as a rule on its raw input columns.

The decision function of a pipeline made of affine transformers (scalers,
one-hot / ordinal encoders, column selection) and a linear final step is an
affine function of the raw inputs, where a categorical input enters through
the indicators ``[x[c] == v]``. :func:`linear_rule` composes the steps into that
function; :func:`sensitive_columns` lists the inputs it never reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from sklearn.base import is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)
from sklearn.utils.validation import check_is_fitted

from .utils._compat import HasMethods, validate_params

__all__ = ["LinearRule", "linear_rule", "sensitive_columns"]


@dataclass(frozen=True)
class LinearRule:
    """A binary linear decision rule expressed on raw input columns.

    ``decision(x) = intercept + sum_c coef[c] * x[c] + sum_(c, v) coef["c=v"] * [x[c] == v]``;
    ``decision > 0`` predicts ``classes[1]``.

    Attributes
    ----------
    coef : pandas.Series
        One coefficient per numeric raw column (index ``"col"``) and per category of a
        categorical raw column (index ``"col=category"``).
    intercept : float
        The constant term.
    feature_names_in : list of str
        Every input column of the estimator, in order.
    numeric_features : list of str
        Raw columns that enter the rule linearly.
    categorical_features : dict
        Raw column -> list of its categories (in encoder order); each category has a
        coefficient ``coef[f"{col}={category}"]`` (0 for a dropped reference category).
    dropped : list of str
        Input columns the estimator never reads.
    classes : numpy.ndarray
        The estimator's ``classes_``; a positive decision means ``classes[1]``.

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
    """

    coef: pd.Series
    intercept: float
    feature_names_in: list[str]
    numeric_features: list[str]
    categorical_features: dict[str, list] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    classes: np.ndarray | None = None

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
            [self.coef[_term_name(column, v)] for v in cats],
            index=pd.Index(cats, name=column),
            name=column,
        )

    def decision_function(self, X) -> np.ndarray:
        """Evaluate the rule on raw inputs.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw inputs with the estimator's input columns (by name for a DataFrame,
            by position otherwise).

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The decision value, equal to the estimator's ``decision_function``.
        """
        X = _as_frame(X, self.feature_names_in)
        missing = [c for c in self.numeric_features + list(self.categorical_features)
                   if c not in X.columns]
        if missing:
            raise ValueError(f"X lacks the columns {missing} read by the rule.")
        out = np.full(len(X), float(self.intercept))
        for c in self.numeric_features:
            out += float(self.coef[c]) * X[c].to_numpy(dtype=float)
        for c, cats in self.categorical_features.items():
            col = X[c].to_numpy(dtype=object)
            for v in cats:
                w = float(self.coef[_term_name(c, v)])
                if w != 0.0:
                    out += w * _equals(col, v)
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


def _equals(col: np.ndarray, value) -> np.ndarray:
    """``col == value`` as floats, robust to mixed dtypes (numbers vs their strings)."""
    res = np.fromiter((x == value for x in col), dtype=bool, count=len(col))
    return res.astype(float)


def _term_name(column: str, category) -> str:
    return f"{column}={category}"


def _as_frame(X, names: list[str]) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
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

    def __init__(self, A: dict[int, dict[tuple, float]], b: np.ndarray, read: set[str]):
        self.rows = A  # feature index -> {term: coefficient}
        self.b = np.asarray(b, dtype=float)
        self.read = read

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
        return _Affine(rows, self.b[idx], read)

    def scale_shift(self, scale, shift) -> _Affine:
        """Return ``self * scale + shift`` element-wise per feature."""
        scale = np.broadcast_to(np.asarray(scale, dtype=float), self.b.shape)
        shift = np.broadcast_to(np.asarray(shift, dtype=float), self.b.shape)
        rows = {j: {t: w * scale[j] for t, w in r.items()} for j, r in self.rows.items()}
        return _Affine(rows, self.b * scale + shift, set(self.read))

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
    def concat(parts: list[_Affine]) -> _Affine:
        rows: dict[int, dict[tuple, float]] = {}
        bs = []
        read: set[str] = set()
        k = 0
        for p in parts:
            for j in range(p.n_features):
                rows[k] = p.rows[j]
                k += 1
            bs.append(p.b)
            read |= p.read
        b = np.concatenate(bs) if bs else np.zeros(0)
        return _Affine(rows, b, read)


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
    if isinstance(step, FunctionTransformer) and step.func is None:
        return aff
    if isinstance(step, SimpleImputer) and not step.add_indicator:
        # Identity on complete rows (the rule is stated for rows without missing values).
        return aff
    if isinstance(step, OneHotEncoder):
        return _one_hot(step, aff, label)
    if isinstance(step, OrdinalEncoder):
        return _ordinal(step, aff, label)
    raise TypeError(
        f"Cannot read step {label!r} ({type(step).__name__}) as a linear map of the raw "
        "inputs; supported: Pipeline, ColumnTransformer, StandardScaler, MinMaxScaler, "
        "MaxAbsScaler, OneHotEncoder, OrdinalEncoder, SimpleImputer, 'passthrough', "
        "'drop' and FrozenEstimator."
    )


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
    return _Affine.concat(parts)


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
    return _Affine(rows, np.zeros(len(rows)), read)


def _ordinal(enc: OrdinalEncoder, aff: _Affine, label: str) -> _Affine:
    check_is_fitted(enc)
    rows = {}
    read: set[str] = set()
    for j, cats in enumerate(enc.categories_):
        col = aff.raw_column(j, label)
        read.add(col)
        rows[j] = {("cat", col, _py(v)): float(i) for i, v in enumerate(cats)}
    return _Affine(rows, np.zeros(len(rows)), read)


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
            return [str(c) for c in names]
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


def _check_unique_terms(index: list[str], numeric: list[str], categorical: dict) -> None:
    """Refuse term names that collide through ``=`` (e.g. ``a`` + ``b=c`` vs ``a=b`` + ``c``)."""
    if len(set(index)) == len(index):
        return
    sources: dict[str, list[str]] = {}
    for c in numeric:
        sources.setdefault(c, []).append(f"numeric column {c!r}")
    for c, cats in categorical.items():
        for v in cats:
            sources.setdefault(_term_name(c, v), []).append(f"column {c!r} category {v!r}")
    clashes = {t: src for t, src in sources.items() if len(src) > 1}
    desc = "; ".join(f"{t!r} <- {' and '.join(src)}" for t, src in clashes.items())
    raise ValueError(
        f"Term names of the rule collide through '=': {desc}. Each term is named "
        "'column' or 'column=category', so these would share one coefficient name; "
        "rename the columns or categories so that the names are unique."
    )


@validate_params({"estimator": [HasMethods(["fit"])]}, prefer_skip_nested_validation=True)
def linear_rule(estimator) -> LinearRule:
    """Express a fitted binary linear classifier as a rule on its raw input columns.

    Reads through :class:`~sklearn.pipeline.Pipeline`,
    :class:`~sklearn.compose.ColumnTransformer` (transformer lists, ``"passthrough"``,
    ``"drop"``, ``remainder``), :class:`~sklearn.preprocessing.StandardScaler`,
    :class:`~sklearn.preprocessing.MinMaxScaler`, :class:`~sklearn.preprocessing.MaxAbsScaler`,
    :class:`~sklearn.preprocessing.OneHotEncoder` (one coefficient per category, named
    ``"column=category"``), :class:`~sklearn.preprocessing.OrdinalEncoder`,
    :class:`~sklearn.frozen.FrozenEstimator`, and any final step with ``coef_`` and
    ``intercept_`` for a binary problem (``LogisticRegression``, ``LinearSVC``,
    ``SGDClassifier``, ``RidgeClassifier``, ``Perceptron``, ...).

    Parameters
    ----------
    estimator : estimator
        A fitted classifier or pipeline.

    Returns
    -------
    LinearRule
        ``rule.decision_function(X)`` equals ``estimator.decision_function(X)``.

    Raises
    ------
    TypeError
        If a step is not an affine map of the raw inputs (a tree, a polynomial
        expansion, ...), the final step is not a classifier (a regressor such as
        ``LinearRegression`` or ``Ridge``), or the problem is not binary; the message
        names the step.
    ValueError
        If two terms would get the same name (a column ``"a"`` with category ``"b=c"``
        and a column ``"a=b"`` with category ``"c"`` both give ``"a=b=c"``).

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
    """
    pre, final = _split_final(estimator)
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
    terms: dict[tuple, float] = {}
    for j in range(aff.n_features):
        for t, a in aff.rows[j].items():
            terms[t] = terms.get(t, 0.0) + w[j] * a
    numeric = [c for c in names if ("num", c) in terms]
    categorical: dict[str, list] = {}
    for t in terms:
        if t[0] == "cat":
            categorical.setdefault(t[1], []).append(t[2])
    categorical = {c: categorical[c] for c in names if c in categorical}
    index = list(numeric)
    values = [terms[("num", c)] for c in numeric]
    for c, cats in categorical.items():
        index += [_term_name(c, v) for v in cats]
        values += [terms[("cat", c, v)] for v in cats]
    _check_unique_terms(index, numeric, categorical)
    read = aff.read if pre else set(names)
    return LinearRule(
        coef=pd.Series(values, index=pd.Index(index, dtype=object), dtype=float, name="coef"),
        intercept=intercept + float(w @ aff.b),
        feature_names_in=names,
        numeric_features=numeric,
        categorical_features=categorical,
        dropped=[c for c in names if c not in read],
        classes=np.asarray(classes),
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
    rule = linear_rule(estimator)
    read = set(rule.numeric_features) | set(rule.categorical_features)
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
