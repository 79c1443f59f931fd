"""Read a fitted linear classifier as a rule on its raw input columns.

:func:`linear_rule` composes the pipeline's steps (``_linear_steps``) into a
:class:`~skfairverify.rules._rule.LinearRule`; :func:`sensitive_columns` lists the
inputs it never reads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.utils.validation import check_is_fitted

from ..utils._compat import HasMethods, validate_params
from ..utils._validation import check_unique_columns
from ._linear_steps import Affine, transform
from ._rule import LinearRule, Term, term_names
from ._steps import split_final, step_key, unwrap_frozen

__all__ = ["linear_rule", "sensitive_columns"]


def _input_names(estimator, final, n_features: int | None = None) -> list[str]:
    for obj in (unwrap_frozen(estimator), final):
        names = getattr(obj, "feature_names_in_", None)
        if names is not None:
            names = [str(c) for c in names]
            check_unique_columns(names, "The estimator's input")
            return names
    n = getattr(unwrap_frozen(estimator), "n_features_in_", None)
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


@validate_params(
    {"estimator": [HasMethods(["fit"])], "read_bins": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def linear_rule(estimator, *, read_bins=False) -> LinearRule:
    """Express a fitted binary linear classifier as a rule on its raw input columns.

    Reads through :class:`~sklearn.pipeline.Pipeline`,
    :class:`~sklearn.compose.ColumnTransformer` (transformer lists, ``"passthrough"``,
    ``"drop"``, ``remainder``), :class:`~sklearn.preprocessing.StandardScaler`,
    :class:`~sklearn.preprocessing.MinMaxScaler`, :class:`~sklearn.preprocessing.MaxAbsScaler`,
    :class:`~sklearn.preprocessing.OneHotEncoder` (one coefficient per category, named
    ``"column=category"``; structured in ``LinearRule.terms``),
    :class:`~sklearn.preprocessing.OrdinalEncoder`, the identity
    :class:`~sklearn.preprocessing.FunctionTransformer` (``func=None``; any other
    function is refused), :class:`~sklearn.frozen.FrozenEstimator`,
    :class:`~skfairverify.preprocessing.IntegerWeightScaler` (as a step: its integer
    contributions; as the final step: their sum plus its intercept), with
    ``read_bins=True`` :class:`~sklearn.preprocessing.KBinsDiscretizer` (any ``encode``)
    and :class:`~skfairverify.preprocessing.BinningDiscretizer` on raw columns (one
    coefficient per bin, with the bin edges in ``LinearRule.binned_features``), and any
    final step with ``coef_`` and ``intercept_`` for a binary problem
    (``LogisticRegression``, ``LinearSVC``, ``SGDClassifier``, ``RidgeClassifier``,
    ``Perceptron``, ...).

    Parameters
    ----------
    estimator : estimator
        A fitted classifier or pipeline.
    read_bins : bool, default=False
        Whether to read binning steps. A binned column makes the decision piecewise
        constant in it (one coefficient per bin), which a consumer that reads only
        ``numeric_features`` and ``categorical_features`` would miss; by default such a
        model is refused with a TypeError.

    Returns
    -------
    LinearRule
        ``rule.decision_function(X)`` equals ``estimator.decision_function(X)``.

    Raises
    ------
    TypeError
        If a step is not an affine map of the raw inputs (a tree, a polynomial
        expansion, a ``FunctionTransformer`` with a function, ...), the final step is
        not a classifier (a regressor such as ``LinearRegression`` or ``Ridge``), the
        problem is not binary, or a step bins a column and ``read_bins=False``; the
        message names the step.
    ValueError
        If the estimator's input columns have duplicated names.

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

    A binned column is a piecewise-constant term, one coefficient per bin:

    >>> from sklearn.preprocessing import KBinsDiscretizer
    >>> binned = make_pipeline(KBinsDiscretizer(n_bins=2, quantile_method="linear"),
    ...                        LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> rule = linear_rule(binned, read_bins=True)
    >>> rule.binned_features["a"].tolist()
    [0.0, 1.5, 3.0]
    >>> bool(np.allclose(rule.decision_function(X), binned.decision_function(X)))
    True
    """
    pre, final = split_final(estimator)
    if step_key(final) == "IntegerWeightScaler":
        # Its decision is the sum of its integer contributions plus its intercept.
        pre = [*pre, (type(final).__name__, final)]
        check_is_fitted(final)
        w = np.ones(final.n_features_in_)
        intercept, classes = float(final.intercept_[0]), final.classes_
    else:
        w, intercept, classes = _read_final(final)
    names = _input_names(estimator, final, None if pre else w.size)
    aff = Affine.identity(names)
    for name, step in pre:
        aff = transform(step, aff, name)
    if aff.n_features != w.size:
        raise TypeError(
            f"The steps before {type(final).__name__!r} produce {aff.n_features} features "
            f"but it has {w.size} coefficients; a step could not be read as an affine map."
        )
    if aff.bins and not read_bins:
        raise TypeError(
            f"The model bins the column(s) {sorted(aff.bins)} (KBinsDiscretizer, "
            "BinningDiscretizer): its decision is piecewise constant in them, not linear. "
            "linear_rule(..., read_bins=True) returns the rule with one coefficient per bin "
            "(LinearRule.binned_features); this consumer reads numeric and categorical "
            "terms only."
        )
    return _assemble(aff, w, intercept, classes, names, read_all=not pre)


def _assemble(aff: Affine, w, intercept: float, classes, names, read_all: bool):
    """The rule ``w @ (A t + b) + intercept`` with its terms grouped per kind and column."""
    terms: dict[tuple, float] = {}
    for j in range(aff.n_features):
        for t, a in aff.rows[j].items():
            terms[t] = terms.get(t, 0.0) + w[j] * a
    numeric = [c for c in names if ("num", c) in terms]
    categorical: dict[str, list] = {}
    binned: dict[str, np.ndarray] = {}
    for t in terms:
        if t[0] == "cat":
            categorical.setdefault(t[1], []).append(t[2])
        elif t[0] == "bin":
            binned[t[1]] = aff.bins[t[1]]
    categorical = {c: categorical[c] for c in names if c in categorical}
    binned = {c: binned[c] for c in names if c in binned}
    indicated = [c for c in names if ("miss", c) in terms]
    values = [terms[("num", c)] for c in numeric]
    for c, cats in categorical.items():
        values += [terms[("cat", c, v)] for v in cats]
    for c, edges in binned.items():
        values += [terms.get(("bin", c, k), 0.0) for k in range(len(edges) - 1)]
    values += [terms[("miss", c)] for c in indicated]
    structured = [Term("numeric", c) for c in numeric]
    structured += [Term("category", c, v) for c, cats in categorical.items() for v in cats]
    structured += [Term("bin", c, k) for c, e in binned.items() for k in range(len(e) - 1)]
    structured += [Term("missing", c) for c in indicated]
    index = term_names(structured)
    if len(set(index)) != len(index):  # only a numeric column named like a quoted term
        dup = sorted({n for n in index if index.count(n) > 1})
        raise ValueError(
            f"Term names of the rule collide: {dup}; rename the columns so that a numeric "
            "column is not named like another column's category term."
        )
    read = set(names) if read_all else aff.read
    valued = set(numeric) | set(categorical) | set(binned)
    return LinearRule(
        coef=pd.Series(values, index=pd.Index(index, dtype=object), dtype=float, name="coef"),
        intercept=intercept + float(w @ aff.b),
        feature_names_in=names,
        numeric_features=numeric,
        categorical_features=categorical,
        dropped=[c for c in names if c not in read],
        classes=np.asarray(classes),
        binned_features=binned,
        imputed={c: aff.fills[c] for c in names if c in aff.fills and c in valued},
        missing_features=indicated,
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
    rule = linear_rule(estimator, read_bins=True)  # a binned column is read too
    read = set(rule.numeric_features) | set(rule.categorical_features)
    read |= set(rule.binned_features)
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
    _, final = split_final(estimator)
    return any(
        getattr(obj, "feature_names_in_", None) is not None
        for obj in (unwrap_frozen(estimator), final)
    )
