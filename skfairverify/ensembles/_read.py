""":func:`read_ensemble`: any supported fitted tree ensemble into a TreeEnsemble."""

from __future__ import annotations

from sklearn.base import is_regressor
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

from ..rules._steps import unwrap_frozen
from ._booster_readers import read_lightgbm, read_xgboost
from ._sklearn_readers import read_forest, read_gradient_boosting, read_hist_gradient_boosting
from ._structure import TreeEnsemble

__all__ = ["SUPPORTED", "read_ensemble"]

_SKLEARN_READERS = (
    (HistGradientBoostingClassifier, read_hist_gradient_boosting),
    (GradientBoostingClassifier, read_gradient_boosting),
    (RandomForestClassifier, read_forest),
    (ExtraTreesClassifier, read_forest),
)
#: Booster classes read by module and class name, so that neither package is imported.
_BOOSTER_READERS = {
    ("xgboost", "XGBClassifier"): read_xgboost,
    ("lightgbm", "LGBMClassifier"): read_lightgbm,
}
SUPPORTED = ("HistGradientBoostingClassifier", "GradientBoostingClassifier",
             "RandomForestClassifier", "ExtraTreesClassifier", "xgboost.XGBClassifier",
             "lightgbm.LGBMClassifier")


def _booster_reader(model):
    for cls in type(model).__mro__:
        key = (cls.__module__.split(".")[0], cls.__name__)
        if key in _BOOSTER_READERS:
            return _BOOSTER_READERS[key]
    return None


def read_ensemble(model) -> TreeEnsemble:
    """Read a fitted binary tree-ensemble classifier into one common structure.

    Parameters
    ----------
    model : estimator
        A fitted binary ``HistGradientBoostingClassifier``,
        ``GradientBoostingClassifier``, ``RandomForestClassifier``,
        ``ExtraTreesClassifier``, ``xgboost.XGBClassifier`` or
        ``lightgbm.LGBMClassifier`` (possibly in a ``FrozenEstimator``), fitted on
        numeric columns.

    Returns
    -------
    ensemble : TreeEnsemble
        Its trees, base score and decision threshold; ``ensemble.predict(X)`` is
        ``model.predict(X)``.

    Raises
    ------
    TypeError
        For a regressor or a model of another kind.
    ValueError
        For a multiclass model, categorical splits, or an option the reader does not
        read (named in the message).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from skfairverify.ensembles import read_ensemble
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(200, 3)
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> model = HistGradientBoostingClassifier(max_iter=10).fit(X, y)
    >>> ensemble = read_ensemble(model)
    >>> ensemble.kind, ensemble.n_trees, bool((ensemble.predict(X) == model.predict(X)).all())
    ('HistGradientBoostingClassifier', 10, True)
    """
    model = unwrap_frozen(model)
    name = type(model).__name__
    if not hasattr(model, "predict"):
        raise TypeError(
            f"{name} is not a fitted classifier; the tree-ensemble reader reads "
            f"{', '.join(SUPPORTED)}."
        )
    if is_regressor(model):
        raise TypeError(
            f"{name} is a regressor; the tree-ensemble reader reads binary classifiers "
            f"({', '.join(SUPPORTED)})."
        )
    for cls, reader in _SKLEARN_READERS:
        if isinstance(model, cls):
            return reader(model)
    reader = _booster_reader(model)
    if reader is None:
        raise TypeError(
            f"{name} is not a tree ensemble the reader knows; supported: "
            f"{', '.join(SUPPORTED)}."
        )
    return reader(model)
