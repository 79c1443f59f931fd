"""The pipeline steps the two readers understand, in one table, and what both share.

:func:`~skfairverify.linear_rule` reads the steps before a linear classifier as an
affine map of the raw inputs (``_linear_steps``); the tree reader reads the steps
before a decision tree as per-column maps, so that every split is a condition on one
raw column (``_tree_steps``). :data:`PIPELINE_STEPS` names every step either reader
knows and how each reads it (``None``: that reader refuses the step). Besides these,
both read ``None`` / ``"passthrough"`` (the identity), ``"drop"`` inside a
``ColumnTransformer`` and :class:`~sklearn.frozen.FrozenEstimator` (the model inside).

skfairverify's own transformers live in ``preprocessing``, above this package: they
are recognised by the class attribute ``_pipeline_step`` naming their row, not by
importing them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "PIPELINE_STEPS",
    "StepReading",
    "check_missing_marker",
    "column_parts",
    "is_identity",
    "py_scalar",
    "split_final",
    "step_key",
    "steps_table",
    "supported_steps",
    "unwrap_frozen",
]

#: The class attribute by which a transformer of skfairverify's own names its row.
STEP_TAG = "_pipeline_step"


class StepReading(NamedTuple):
    """One kind of pipeline step and how each reader reads it.

    Attributes
    ----------
    label : str
        The step as messages name it.
    types : tuple of type
        The scikit-learn classes of the step (empty: matched by ``names`` or by the
        ``_pipeline_step`` class attribute).
    linear : str or None
        How :func:`~skfairverify.linear_rule` reads it; None: refused.
    tree : str or None
        How the tree reader reads it; None: refused.
    names : tuple of str
        Class names matched as they are (classes not imported here).
    """

    label: str
    types: tuple
    linear: str | None
    tree: str | None
    names: tuple = ()


_SAME = "its steps, in order"
_COLUMNS = "its transformers on their columns, side by side ('drop' and empty ones left out)"
_AFFINE = "affine: folded into the coefficients"
_INCREASING = "increasing affine: a split is a cut of the raw value"
_IDENTITY = "the identity (func=None; a function is refused)"

#: Every step that a reader knows, by key, in the order the messages list them.
PIPELINE_STEPS: dict[str, StepReading] = {
    "Pipeline": StepReading("Pipeline", (Pipeline,), _SAME, _SAME),
    "ColumnTransformer": StepReading("ColumnTransformer", (ColumnTransformer,), _COLUMNS,
                                     _COLUMNS),
    "StandardScaler": StepReading("StandardScaler", (StandardScaler,), _AFFINE, _INCREASING),
    "MinMaxScaler": StepReading("MinMaxScaler (clip=False)", (MinMaxScaler,), _AFFINE,
                                _INCREASING),
    "MaxAbsScaler": StepReading("MaxAbsScaler", (MaxAbsScaler,), _AFFINE, _INCREASING),
    "RobustScaler": StepReading("RobustScaler", (RobustScaler,), None, _INCREASING),
    "OneHotEncoder": StepReading(
        "OneHotEncoder (on raw columns)", (OneHotEncoder,),
        "one term per category (a dropped one: coefficient 0)",
        "a set of categories per split"),
    "OrdinalEncoder": StepReading(
        "OrdinalEncoder (on raw columns)", (OrdinalEncoder,),
        "one term per category, the coefficient times its code",
        "a set of categories per split (those of the codes it sends left)"),
    "SimpleImputer": StepReading(
        "SimpleImputer", (SimpleImputer,),
        "a missing value read as the imputed raw value; add_indicator: a missing term",
        "a missing value goes where the imputed value goes; add_indicator: an indicator"),
    "MissingIndicator": StepReading(
        "MissingIndicator", (MissingIndicator,),
        "one missing term per feature (none where no value can be missing any more)",
        "one indicator per feature that is an affine map of a raw column"),
    "KNNImputer": StepReading("KNNImputer / IterativeImputer", (), None, None,
                              names=("KNNImputer", "IterativeImputer")),
    "KBinsDiscretizer": StepReading(
        "KBinsDiscretizer", (KBinsDiscretizer,),
        "one term per bin (read_bins=True, as the verifier reads); dtype float64 only",
        "bins as intervals of the raw value; any encode, float32 dtype too"),
    "BinningDiscretizer": StepReading("BinningDiscretizer", (),
                                      "one term per bin (read_bins=True)",
                                      "bins as intervals of the raw value"),
    "IntegerWeightScaler": StepReading(
        "IntegerWeightScaler", (),
        "its integer contributions (as the final step: their sum plus its intercept)", None),
    "FunctionTransformer": StepReading("FunctionTransformer() (identity)",
                                       (FunctionTransformer,), _IDENTITY, _IDENTITY),
}


def step_key(step) -> str | None:
    """The key of ``step``'s row in :data:`PIPELINE_STEPS`, or None for an unknown step.

    Parameters
    ----------
    step : object
        A fitted transformer (already unwrapped from ``FrozenEstimator``).

    Returns
    -------
    str or None

    Examples
    --------
    >>> from sklearn.preprocessing import RobustScaler
    >>> from skfairverify.rules._steps import step_key, PIPELINE_STEPS
    >>> key = step_key(RobustScaler())
    >>> key, PIPELINE_STEPS[key].linear
    ('RobustScaler', None)
    """
    tag = getattr(type(step), STEP_TAG, None)
    for key, row in PIPELINE_STEPS.items():
        if (row.types and isinstance(step, row.types)) or type(step).__name__ in row.names:
            return key
        if tag == key:
            return key
    return None


def supported_steps(reader: str) -> str:
    """The steps ``reader`` (``"linear"`` or ``"tree"``) reads, for an error message."""
    labels = [r.label for r in PIPELINE_STEPS.values() if getattr(r, reader) is not None]
    return ", ".join(labels + ["'passthrough'", "'drop'"]) + " and FrozenEstimator"


def steps_table() -> str:
    """:data:`PIPELINE_STEPS` as a Markdown table (``docs/any-classifier.md`` shows it).

    Returns
    -------
    str
        One row per step: how the linear reader and the tree reader read it.
    """
    rows = ["| step | linear classifier (`linear_rule`) | decision tree |", "|---|---|---|"]
    for r in PIPELINE_STEPS.values():
        rows.append(f"| `{r.label}` | {r.linear or 'refused'} | {r.tree or 'refused'} |")
    return "\n".join(rows)


def unwrap_frozen(est):
    """Return the fitted model inside (possibly nested) FrozenEstimator wrappers."""
    while isinstance(est, FrozenEstimator):
        est = est.estimator
    return est


def is_identity(step) -> bool:
    """Whether a pipeline step is ``None`` or ``"passthrough"``."""
    return step is None or (isinstance(step, str) and step == "passthrough")


def split_final(estimator):
    """Return (preprocessing steps as (name, step) list, final estimator)."""
    est = unwrap_frozen(estimator)
    steps: list[tuple[str | None, object]] = []
    while isinstance(est, Pipeline):
        *pre, (_, last) = est.steps
        steps.extend(pre)
        est = unwrap_frozen(last)
    return steps, est


def column_parts(ct: ColumnTransformer, label: str):
    """``(transformer, input column indices, label)`` of each part a ColumnTransformer keeps.

    ``"drop"`` and parts without columns are left out.
    """
    check_is_fitted(ct)
    indices = ct._transformer_to_input_indices  # resolved input columns of each transformer
    for name, trans, _cols in ct.transformers_:
        idx = list(indices.get(name, []))
        if (isinstance(trans, str) and trans == "drop") or not idx:
            continue
        yield trans, idx, f"{label}/{name}"


def py_scalar(v):
    """Numpy scalar -> Python scalar, so that category labels print and compare plainly."""
    return v.item() if isinstance(v, np.generic) else v


def check_missing_marker(step, label: str) -> None:
    """Refuse an imputer whose ``missing_values`` is a value rather than NaN / None."""
    marker = step.missing_values
    if marker is None or marker is pd.NA or (isinstance(marker, float) and np.isnan(marker)):
        return
    raise TypeError(
        f"Step {label!r} is {type(step).__name__}(missing_values={marker!r}): it replaces "
        "an ordinary value, which the rule would have to read two ways; turn that value "
        f"into NaN before the model (X.replace({marker!r}, np.nan)) and use the default "
        "missing_values=np.nan."
    )
