"""Readers of scikit-learn's tree ensembles into a :class:`TreeEnsemble`.

* ``HistGradientBoostingClassifier``: the ``_predictors`` node records; a split is
  ``x <= num_threshold`` on the float64 input (the real threshold, not the bin), a NaN
  goes where ``missing_go_to_left`` says; the baseline is the initial raw score; the
  decision is ``raw > 0``.
* ``GradientBoostingClassifier``: ``estimators_`` regression trees scaled by the
  learning rate, after the constant ``init_`` raw prediction; the decision is
  ``raw >= 0``.
* ``RandomForestClassifier`` / ``ExtraTreesClassifier``: each leaf's probability of
  ``classes_[1]``; the decision, the larger mean probability (ties to ``classes_[0]``),
  is ``sum of p1 > n_trees / 2``.

scikit-learn's trees compare a float32 input with a float64 threshold:
``float32(x) <= t`` is ``float32(x) <= t32`` with ``t32`` the largest float32 not
above ``t``, which is the threshold stored.
"""

from __future__ import annotations

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.utils.validation import check_is_fitted

from ._structure import TreeEnsemble, make_tree

__all__ = ["read_forest", "read_gradient_boosting", "read_hist_gradient_boosting"]


def _check_binary(model) -> None:
    check_is_fitted(model)
    classes = getattr(model, "classes_", None)
    if classes is None or len(classes) != 2 or getattr(model, "n_outputs_", 1) != 1:
        shown = [] if classes is None else list(np.ravel(classes))[:10]
        raise ValueError(
            f"{type(model).__name__} is not a binary single-output classifier "
            f"(classes {shown}); the tree-ensemble reader reads binary classifiers only."
        )


def _float32_at_most(threshold: np.ndarray) -> np.ndarray:
    """The largest float32 not above each float64 threshold, as float64."""
    t32 = threshold.astype(np.float32)
    above = t32.astype(np.float64) > threshold
    t32[above] = np.nextafter(t32[above], np.float32(-np.inf))
    return t32.astype(np.float64)


def _sklearn_tree(tree_, value) -> object:
    """A Tree from a fitted ``tree_`` and one value per node."""
    missing = getattr(tree_, "missing_go_to_left", np.zeros(tree_.node_count, dtype=bool))
    leaf = tree_.children_left < 0
    return make_tree(tree_.children_left, tree_.children_right, tree_.feature,
                     _float32_at_most(tree_.threshold), missing, np.where(leaf, value, 0.0))


def _ensemble(model, trees, base, threshold, strict, input_dtype=np.float32,
              score_dtype=np.float64) -> TreeEnsemble:
    return TreeEnsemble(
        trees=tuple(trees), base_score=float(base), decision_threshold=float(threshold),
        strict=bool(strict), input_dtype=np.dtype(input_dtype),
        score_dtype=np.dtype(score_dtype), n_features=int(model.n_features_in_),
        classes=np.asarray(model.classes_), kind=type(model).__name__)


def read_gradient_boosting(model) -> TreeEnsemble:
    """Read a binary ``GradientBoostingClassifier``."""
    _check_binary(model)
    init = model.init_
    if not (init == "zero" or isinstance(init, DummyClassifier)):
        raise ValueError(
            f"GradientBoostingClassifier with init={type(init).__name__}: the reader "
            "needs a constant initial prediction (init=None, 'zero' or a DummyClassifier)."
        )
    base = model._raw_predict_init(np.zeros((1, model.n_features_in_)))[0, 0]
    rate = model.learning_rate
    trees = [_sklearn_tree(est.tree_, rate * est.tree_.value[:, 0, 0])
             for est in model.estimators_[:, 0]]
    return _ensemble(model, trees, base, 0.0, strict=False)


def read_forest(model) -> TreeEnsemble:
    """Read a binary ``RandomForestClassifier`` or ``ExtraTreesClassifier``."""
    _check_binary(model)
    trees = []
    for est in model.estimators_:
        value = est.tree_.value[:, 0, :2]
        total = value.sum(axis=1)
        total[total == 0] = 1.0
        trees.append(_sklearn_tree(est.tree_, value[:, 1] / total))
    return _ensemble(model, trees, 0.0, len(trees) / 2, strict=True)


def _hgb_tree(predictor) -> object:
    nodes = predictor.nodes
    if nodes["is_categorical"].any():
        raise ValueError(
            "HistGradientBoostingClassifier with categorical splits: the reader reads "
            "numeric splits only; one-hot or ordinal encode the column before the model "
            "(categorical_features=None)."
        )
    leaf = nodes["is_leaf"].astype(bool)
    left, right = nodes["left"].astype(np.int64), nodes["right"].astype(np.int64)
    return make_tree(np.where(leaf, -1, left), np.where(leaf, -1, right),
                     nodes["feature_idx"], nodes["num_threshold"],
                     nodes["missing_go_to_left"].astype(bool),
                     np.where(leaf, nodes["value"], 0.0))


def read_hist_gradient_boosting(model) -> TreeEnsemble:
    """Read a binary ``HistGradientBoostingClassifier`` (numeric splits)."""
    _check_binary(model)
    if getattr(model, "_preprocessor", None) is not None:
        raise ValueError(
            "HistGradientBoostingClassifier with categorical features: the reader reads "
            "numeric splits only; encode the categories before the model "
            "(categorical_features=None)."
        )
    trees = [_hgb_tree(predictors[0]) for predictors in model._predictors]
    base = model._baseline_prediction.ravel()[0]
    return _ensemble(model, trees, base, 0.0, strict=True, input_dtype=np.float64)
