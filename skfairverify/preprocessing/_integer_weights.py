"""Integer coefficients of a linear classifier (FVGM, Section 3, "multiplier l")."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    TransformerMixin,
    clone,
)
from sklearn.frozen import FrozenEstimator
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    validate_data,
)

from ..rules import bin_of, linear_rule
from ..utils._categories import match_categories
from ..utils._compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_feature_names_in,
    _fit_context,
)
from ..utils._validation import check_unique_columns
from ._checks import check_finite_columns, column_names
from ._quantize import decision_scale, quantize, select_multiplier

__all__ = ["IntegerWeightScaler"]


class IntegerWeightScaler(TransformerMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Linear classifier with integer coefficients ``round(l * w / s)`` and ``round(l * b / s)``.

    Fits a clone of a binary linear ``estimator`` (or uses a
    :class:`~sklearn.frozen.FrozenEstimator` as it is), reads its rule on the raw
    input columns with :func:`~skfairverify.linear_rule`, divides its weights
    ``w`` and intercept ``b`` by the scale ``s`` of its decision function on the
    training data (:func:`decision_scale`, so that the integer rule does not depend
    on the units of the coefficients) and picks the integer multiplier ``l`` in
    ``1 .. max_multiplier`` whose rounded rule agrees best with the estimator's
    decisions on the training data (FVGM, Section 3). ``predict`` and
    ``decision_function`` then use the integer rule.

    Parameters
    ----------
    estimator : estimator
        A binary linear classifier, or a pipeline of affine steps ending in one
        (anything :func:`~skfairverify.linear_rule` reads). A ``FrozenEstimator``
        is not refit.
    max_multiplier : int, default=100
        Largest multiplier tried when ``multiplier="auto"``.
    multiplier : "auto" or int, default="auto"
        ``"auto"`` picks ``l`` by agreement (ties go to the smallest ``l``); an
        integer fixes it.

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator (the given ``FrozenEstimator`` itself when frozen).
    rule_ : LinearRule
        The estimator's real-valued rule on the raw columns.
    scale_ : float
        The decision scale ``s``: root mean square of the estimator's decision
        function on the training data.
    multiplier_ : int
        The multiplier ``l``: integer units per decision scale.
    coef_ : ndarray of int64 of shape (1, n_terms)
        ``rint(l * w / s)`` (round half to even) for every term of the rule: one per
        numeric input column read by the estimator, plus one per category of a
        one-hot encoded column (see ``terms_``). For a plain linear model on
        numeric data, ``n_terms == n_features_in_``.
    intercept_ : ndarray of int64 of shape (1,)
        ``rint(l * b / s)``.
    terms_ : ndarray of str of shape (n_terms,)
        Names of the terms, ``"col"`` or ``"col=category"`` (``rule_.coef.index``).
    agreement_ : float
        Share of training rows where the integer rule decides like the estimator.
    classes_ : ndarray of shape (2,)
        The estimator's classes; a positive decision means ``classes_[1]``.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of str of shape (n_features_in_,)
        Names of features seen during :term:`fit` (only when ``X`` has string
        column names).

    See Also
    --------
    select_multiplier : The agreement search.
    decision_scale : The scale ``s``.
    BinningDiscretizer : Bins with training means, for per-bin weights.

    Notes
    -----
    The decision is ``sum_j coef_[0, j] * t_j(x) + intercept_[0]`` where ``t_j`` is
    the column value of a numeric term and the indicator ``[x[col] == category]``
    of a categorical term; the positive class is predicted where it is > 0,
    i.e. where the integer score reaches ``integer_threshold(intercept_[0])``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfairverify.preprocessing import IntegerWeightScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X @ [1.0, -2.0, 0.5] > 0).astype(int)
    >>> scaler = IntegerWeightScaler(LogisticRegression(), max_multiplier=20).fit(X, y)
    >>> scaler.coef_.dtype
    dtype('int64')
    >>> scaler.agreement_ > 0.95
    True
    >>> scaler.transform(X[:2]).shape
    (2, 3)
    """

    # how the rule readers read this step: its row of skfairverify.rules.PIPELINE_STEPS
    _pipeline_step = "IntegerWeightScaler"

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "max_multiplier": [Interval(Integral, 1, None, closed="left")],
        "multiplier": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, max_multiplier=100, multiplier="auto"):
        self.estimator = estimator
        self.max_multiplier = max_multiplier
        self.multiplier = multiplier

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the estimator and choose the integer multiplier.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Training data, as the estimator takes it.
        y : array-like of shape (n_samples,), default=None
            Binary target. May be None when ``estimator`` is a
            :class:`~sklearn.frozen.FrozenEstimator` (it is not refitted).

        Returns
        -------
        self : IntegerWeightScaler
            The fitted estimator.

        Raises
        ------
        TypeError
            If the estimator is not a binary linear classifier (the message names it).
        """
        frozen = isinstance(self.estimator, FrozenEstimator)
        if isinstance(X, pd.DataFrame):
            check_unique_columns(X)
        if y is None and frozen:
            validate_data(self, X, skip_check_array=True)
        else:  # refuses y=None for an estimator to fit, as scikit-learn does
            validate_data(self, X, y, skip_check_array=True)
        y_type = None if y is None else type_of_target(y, input_name="y")
        if y_type in ("multiclass", "multiclass-multioutput", "multilabel-indicator"):
            raise ValueError(
                "Only binary classification is supported. The type of the target "
                f"is {y_type}."
            )
        if frozen:
            self.estimator_ = self.estimator
        else:
            self.estimator_ = clone(self.estimator).fit(X, y)
        try:
            rule = linear_rule(self.estimator_, read_bins=True)
        except TypeError as exc:
            raise TypeError(
                f"IntegerWeightScaler needs a binary linear classifier; cannot use "
                f"{type(self.estimator).__name__}: {exc}"
            ) from exc
        self.rule_ = rule
        self.classes_ = np.asarray(rule.classes)
        self.terms_ = np.asarray(rule.coef.index, dtype=object)
        T = self._terms(X)
        w = rule.coef.to_numpy(dtype=float)
        # Normalise by the decision's scale: the integer rule must not depend on the
        # units of the coefficients (a rescaled model decides the same).
        self.scale_ = decision_scale(T @ w + rule.intercept)
        w, b = w / self.scale_, rule.intercept / self.scale_
        reference = np.asarray(self.estimator_.predict(X)) == self.classes_[1]
        candidates = None if self.multiplier == "auto" else [int(self.multiplier)]
        self.multiplier_, self.agreement_ = select_multiplier(
            w, b, reference, self.max_multiplier, candidates, values=T
        )
        self.coef_ = quantize(w, self.multiplier_).reshape(1, -1)
        self.intercept_ = quantize([b], self.multiplier_)
        return self

    def decision_function(self, X):
        """Integer-rule decision ``coef_ @ t(x) + intercept_``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        ndarray of float64 of shape (n_samples,)
            Positive values predict ``classes_[1]``.
        """
        T = self._validated_terms(X)
        return T @ self.coef_[0].astype(float) + float(self.intercept_[0])

    def predict(self, X):
        """Class predicted by the integer rule.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``classes_[1]`` where :meth:`decision_function` is > 0, else ``classes_[0]``.
        """
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]

    def transform(self, X):
        """Integer contribution of each input feature to the decision.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        ndarray of float64 of shape (n_samples, n_features_in_)
            ``rint(l * w_j) * x_j`` for a numeric column, the integer weight of the
            row's category for a one-hot encoded column, 0 for a column the
            estimator does not read. Each row sums to ``decision_function - intercept_``.
        """
        T = self._validated_terms(X) * self.coef_[0].astype(float)[None, :]
        names = column_names(self, self.n_features_in_)
        pos = {c: i for i, c in enumerate(names)}
        out = np.zeros((T.shape[0], len(names)), dtype=float)
        for k, col in enumerate(self._term_columns):
            out[:, pos[col]] += T[:, k]
        return out

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns of :meth:`transform` (the input features).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; defaults to ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        ndarray of str
            One name per input feature.
        """
        check_is_fitted(self)
        return _check_feature_names_in(self, input_features)

    # ------------------------------------------------------------------ helpers

    def _validated_terms(self, X):
        check_is_fitted(self)
        if isinstance(X, pd.DataFrame):
            check_unique_columns(X)
        else:
            dtype = None if self.rule_.categorical_features else np.float64
            X = check_array(X, dtype=dtype, ensure_all_finite=False, estimator=self)
        validate_data(self, X, reset=False, skip_check_array=True)
        return self._terms(X)

    @property
    def _term_columns(self):
        return [t.column for t in self.rule_.terms]

    def _terms(self, X) -> np.ndarray:
        """Matrix of term values (numeric columns, indicators), shape (n, n_terms).

        A missing value is read as the model reads it: as the pipeline's imputed value
        (``rule_.imputed``), with its missing-value indicator (``rule_.missing_features``).
        """
        rule = self.rule_
        if not isinstance(X, pd.DataFrame) and not (
            rule.categorical_features or rule.binned_features or rule.imputed
            or rule.missing_features
        ):
            return self._array_terms(X)
        frame = self._rule_frame(X)
        parts = []
        for c in rule.numeric_features:
            col = self._column(frame, c)
            if not (pd.api.types.is_numeric_dtype(col.dtype) or col.dtype == object):
                raise ValueError(f"Column {c!r} is not numeric (dtype {col.dtype}).")
            parts.append(self._filled_numbers(col, c))
        if parts:
            check_finite_columns(np.column_stack(parts), list(rule.numeric_features))
        for c, cats in rule.categorical_features.items():
            col = self._column(frame, c)
            if col.isna().any() and c not in rule.imputed:
                raise ValueError(f"Input X contains NaN in column {c!r}.")
            codes = match_categories(col, cats, name=c)  # the rule's own matching
            if c in rule.imputed:
                fill = np.array([rule.imputed[c]], dtype=object)
                codes[col.isna().to_numpy()] = match_categories(fill, cats, name=c)[0]
            parts.append((codes[:, None] == np.arange(len(cats))[None, :]).astype(float))
        for c, edges in rule.binned_features.items():
            values = self._filled_numbers(self._column(frame, c), c)
            check_finite_columns(values[:, None], [c])
            bins = bin_of(values, edges)
            parts.append((bins[:, None] == np.arange(len(edges) - 1)[None, :]).astype(float))
        for c in rule.missing_features:
            parts.append(self._column(frame, c).isna().to_numpy(dtype=float)[:, None])
        if not parts:
            return np.zeros((len(frame), 0))
        return np.column_stack(parts)

    def _filled_numbers(self, col: pd.Series, name: str) -> np.ndarray:
        """A column as numbers, a missing value as the imputed one (if the rule has it)."""
        values = np.asarray(col.to_numpy(dtype=float, na_value=np.nan))
        if name in self.rule_.imputed:
            values = np.where(np.isnan(values), float(self.rule_.imputed[name]), values)
        return values

    def _array_terms(self, X) -> np.ndarray:
        """Term values of a numeric array (a rule without categorical terms)."""
        rule = self.rule_
        rule_names = list(rule.feature_names_in)
        arr = check_array(X, dtype=np.float64, ensure_all_finite=False, estimator=self)
        if arr.shape[1] != len(rule_names):
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                f"{len(rule_names)} features as input."
            )
        pos = {c: i for i, c in enumerate(rule_names)}
        T = arr[:, [pos[c] for c in rule.numeric_features]]
        check_finite_columns(T, list(rule.numeric_features))
        return T

    def _rule_frame(self, X) -> pd.DataFrame:
        """``X`` as a DataFrame whose columns carry the rule's input names."""
        rule_names = list(self.rule_.feature_names_in)
        if not isinstance(X, pd.DataFrame):
            arr = check_array(X, dtype=None, ensure_all_finite=False, estimator=self)
            return pd.DataFrame(arr, columns=rule_names)
        frame_names = [str(c) for c in X.columns]
        if len(set(frame_names)) == len(frame_names) and set(rule_names) <= set(frame_names):
            return X.set_axis(frame_names, axis=1)
        return X.set_axis(rule_names, axis=1) if X.shape[1] == len(rule_names) else X

    @staticmethod
    def _column(frame, name) -> pd.Series:
        if name not in frame.columns:
            raise ValueError(f"X lacks the column {name!r} read by the estimator.")
        return frame[name]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = False
        return tags
